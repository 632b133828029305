/* kubectl's jsonpath subset (common/jsonpath.h): members, indexes, [*],
 * quoted names, strings, ranges nested, what is missing printing nothing,
 * and the refusals that name what is not supported and where. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"

static const char *doc_text =
        "[{\"id\":\"a1\",\"name\":\"rack-7\",\"hosts\":[{\"id\":\"h1\",\"ok\":true},{\"id\":\"h2\",\"ok\":false}],"
        "\"labels\":{\"env\":\"prod\",\"x-y\":\"z\"},\"n\":3,\"none\":null},"
        "{\"id\":\"b2\",\"name\":\"rack-8\",\"hosts\":[],\"labels\":{}}]";

static char *render(const char *tpl, int *r) {
        json_object *doc = json_tokener_parse(doc_text);
        cr_assert_not_null(doc);
        struct growbuf out = { 0 };
        char err[256] = "";
        *r = jsonpath_render(tpl, doc, &out, err, sizeof err);
        json_object_put(doc);
        if (*r < 0) {
                free(out.data);
                return strdup(err);
        }
        return out.data ? out.data : strdup("");
}

static void says(const char *tpl, const char *want) {
        int r;
        char *got = render(tpl, &r);
        cr_assert_eq(r, 0, "%s: %s", tpl, got);
        cr_assert_str_eq(got, want, "%s", tpl);
        free(got);
}

static void refused(const char *tpl, const char *why) {
        int r;
        char *got = render(tpl, &r);
        cr_assert_eq(r, -EINVAL, "%s: %d %s", tpl, r, got);
        cr_assert(strstr(got, why) && strstr(got, "(at byte "), "%s: %s", tpl, got);
        free(got);
        char err[256];
        cr_assert_eq(jsonpath_check(tpl, err, sizeof err), -EINVAL, "the check refuses %s too", tpl);
}

Test(jsonpath, members_indexes_and_all) {
        says("{[0].id}", "a1");
        says("{.[0].id}", "a1");
        says("{$[1].name}", "rack-8");
        says("{[-1].name}", "rack-8");
        says("{[*].id}", "a1 b2");
        says("{[0].hosts[*].id}", "h1 h2");
        says("{[0].labels['x-y']}", "z");
        says("{[0].labels[\"env\"]}", "prod");
        says("{[0].labels.env}", "prod");
        says("{[0].n}", "3");
        says("{[0].hosts[0].ok}", "true");
        says("{[0].none}", "null");
        says("{[0].hosts[1]}", "{\"id\":\"h2\",\"ok\":false}");
        says("{[0].labels[*]}", "prod z");
        says("id={[0].id}, name={[0].name}\n", "id=a1, name=rack-7\n");
}

Test(jsonpath, missing_prints_nothing) {
        says("{[5].id}", "");
        says("{[0].nope}", "");
        says("{[0].id.deeper}", "");
        says("{[0].hosts.id}", "");
        says("<{[1].hosts[*].id}>", "<>");
}

Test(jsonpath, strings_and_ranges) {
        says("{\"a\\tb\\n\"}", "a\tb\n");
        says("{\"say \\\"hi\\\"\"}", "say \"hi\"");
        says("{range [*]}{.id}{\"\\n\"}{end}", "a1\nb2\n");
        says("{range .[*]}{.name}:{range .hosts[*]} {.id}{end};{end}", "rack-7: h1 h2;rack-8:;");
        says("{ range [*] }{ .id }{ end }", "a1b2");
        says("{range [*]}{@.id},{end}", "a1,b2,");
        says("{range [*]}{$[0].id}{end}", "a1a1");
        says("plain text", "plain text");
        says("", "");
}

Test(jsonpath, refusals_say_what_and_where) {
        refused("{[0].id", "a '{' without its '}'");
        refused("a}b", "a '}' without its '{'");
        refused("{range [*]}{.id}", "a {range} without its {end}");
        refused("{end}", "an {end} without its {range}");
        refused("{}", "an empty {}");
        refused("{..id}", "recursive descent");
        refused("{[0:2]}", "slices");
        refused("{[?(@.ok)]}", "filters");
        refused("{.}{.a b}", "'.' or '[' is wanted");
        refused("{[x]}", "'*', an index or a quoted name");
        refused("{[0}", "an index is wanted");
        refused("{['x}", "'{' without its '}'");
        refused("{\"open}", "'{' without its '}'");
        char deep[512] = "", tail[128] = "";
        for (int i = 0; i <= JSONPATH_MAX_DEPTH; i++) {
                strcat(deep, "{range [*]}");
                strcat(tail, "{end}");
        }
        strcat(deep, tail);
        refused(deep, "ranges nest at most");
}

Test(jsonpath, bounds) {
        char *big = malloc(JSONPATH_MAX_TEMPLATE + 2);
        memset(big, 'a', JSONPATH_MAX_TEMPLATE + 1);
        big[JSONPATH_MAX_TEMPLATE + 1] = '\0';
        char err[128];
        cr_assert_eq(jsonpath_check(big, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "at most"), "%s", err);
        big[JSONPATH_MAX_TEMPLATE] = '\0';
        cr_assert_eq(jsonpath_check(big, err, sizeof err), 0, "exactly the limit is a template");
        free(big);
        /* A range over many results stops at the output bound. */
        json_object *arr = json_object_new_array();
        for (int i = 0; i < 1000; i++)
                json_object_array_add(arr, json_object_new_string("0123456789"));
        struct growbuf out = { 0 };
        char tpl[JSONPATH_MAX_TEMPLATE + 1];
        strcpy(tpl, "{range [*]}{range $[*]}{range $[*]}{.}{end}{end}{end}");
        cr_assert_eq(jsonpath_render(tpl, arr, &out, err, sizeof err), -E2BIG, "10^9 strings do not fit");
        cr_assert(out.len <= JSONPATH_MAX_OUTPUT);
        free(out.data);
        json_object_put(arr);
}
