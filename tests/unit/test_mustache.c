/* mustache: every case of the official specification's files (read as they
 * are from shared/testdata/mustache-spec; lambdas are not implemented), parse
 * errors with their line and column, the size and nesting limits, and
 * missing names. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mustache.h"

#define SPEC_DIR MUSTER_SHARED_TESTDATA_DIR "/mustache-spec"

/* Run every case of one spec file; a mismatch fails naming the case. */
static void run_spec(const char *file, size_t want_cases) {
        char path[512], err[256];
        size_t n_cases, passed = 0;

        snprintf(path, sizeof path, "%s/%s", SPEC_DIR, file);
        json_object *doc = json_object_from_file(path), *tests;
        cr_assert_not_null(doc, "read %s", path);
        cr_assert(json_object_object_get_ex(doc, "tests", &tests) && json_object_is_type(tests, json_type_array));
        n_cases = json_object_array_length(tests);
        cr_assert_eq(n_cases, want_cases, "%s holds %zu cases", file, n_cases);
        for (size_t i = 0; i < n_cases; i++) {
                json_object *c = json_object_array_get_idx(tests, i), *name, *tmpl, *data, *expected, *partials = NULL;
                struct mustache *t = NULL;
                char *out = NULL;
                size_t len = 0;

                cr_assert(json_object_object_get_ex(c, "name", &name) && json_object_object_get_ex(c, "template", &tmpl) &&
                          json_object_object_get_ex(c, "data", &data) &&
                          json_object_object_get_ex(c, "expected", &expected));
                json_object_object_get_ex(c, "partials", &partials);
                const char *cn = json_object_get_string(name);
                int r = mustache_parse(json_object_get_string(tmpl), (size_t) json_object_get_string_len(tmpl), &t, err,
                                       sizeof err);
                cr_assert_eq(r, 0, "%s: case '%s' does not parse: %s", file, cn, err);
                r = mustache_render_partials(t, data, partials, &out, &len, err, sizeof err);
                cr_assert_eq(r, 0, "%s: case '%s' does not render: %s", file, cn, err);
                cr_expect_str_eq(out, json_object_get_string(expected), "%s: case '%s': got \"%s\", want \"%s\"", file,
                                 cn, out, json_object_get_string(expected));
                cr_expect_eq(len, strlen(out), "%s: case '%s': length", file, cn);
                if (strcmp(out, json_object_get_string(expected)) == 0)
                        passed++;
                free(out);
                mustache_free(t);
        }
        cr_log_info("%s: %zu of %zu cases pass", file, passed, n_cases);
        json_object_put(doc);
}

Test(mustache, spec_interpolation) { run_spec("interpolation.json", 42); }
Test(mustache, spec_sections) { run_spec("sections.json", 34); }
Test(mustache, spec_inverted) { run_spec("inverted.json", 22); }
Test(mustache, spec_comments) { run_spec("comments.json", 12); }
Test(mustache, spec_delimiters) { run_spec("delimiters.json", 14); }
Test(mustache, spec_partials) { run_spec("partials.json", 12); }

/* Render text over the JSON context ctx; the output, to free(). */
static char *render(const char *text, const char *ctx) {
        struct mustache *t;
        char err[256], *out;
        size_t len;
        json_object *c = ctx ? json_tokener_parse(ctx) : NULL;

        cr_assert_eq(mustache_parse(text, strlen(text), &t, err, sizeof err), 0, "parse '%s': %s", text, err);
        cr_assert_eq(mustache_render(t, c, &out, &len, err, sizeof err), 0, "render '%s': %s", text, err);
        mustache_free(t);
        json_object_put(c);
        return out;
}

static void expect_error(const char *text, int want, const char *words) {
        struct mustache *t = (struct mustache *) 1;
        char err[256] = "";

        cr_assert_eq(mustache_parse(text, strlen(text), &t, err, sizeof err), want, "'%s': %s", text, err);
        cr_assert_null(t);
        cr_assert(strstr(err, words), "'%s': error \"%s\" lacks \"%s\"", text, err, words);
}

Test(mustache, parse_errors_name_line_and_column) {
        expect_error("hello {{name", -EINVAL, "line 1, column 7: unclosed tag");
        expect_error("a\nb\n  {{{raw}}", -EINVAL, "line 3, column 3: unclosed tag");
        expect_error("{{#a}}\n{{/b}}", -EINVAL, "line 2, column 1: unbalanced section");
        expect_error("{{#a}}\n{{/b}}", -EINVAL, "'a'");
        expect_error("x\n {{#outer}}{{#inner}}{{/inner}}", -EINVAL, "line 2, column 5: unclosed section 'outer'");
        expect_error("{{/a}}", -EINVAL, "line 1, column 1: closing a section that is not open");
        expect_error("ok\n{{=<% =}}", -EINVAL, "line 2, column 1: bad delimiters");
        expect_error("{{=a b c=}}", -EINVAL, "bad delimiters");
        expect_error("{{= =}}", -EINVAL, "line 1, column 1: empty tag name");
        expect_error("{{  }}", -EINVAL, "empty tag name");
        expect_error("{{=<% %>=}}<%x", -EINVAL, "line 1, column 12: unclosed tag");
}

Test(mustache, missing_names_render_empty) {
        char *s = render("[{{a}}|{{{b.c}}}|{{&d}}|{{#e}}x{{/e}}|{{^f}}y{{/f}}|{{g.h.i}}]", "{\"g\":{\"h\":1}}");
        cr_assert_str_eq(s, "[||||y|]");
        free(s);
        s = render("[{{a}}]", NULL);
        cr_assert_str_eq(s, "[]");
        free(s);
        s = render("", "{}");
        cr_assert_str_eq(s, "");
        free(s);
}

Test(mustache, partial_tags_render_empty_without_partials) {
        char *s = render("a{{>p}}b", "{\"p\":\"x\"}");
        cr_assert_str_eq(s, "ab");
        free(s);
}

Test(mustache, template_size_limit) {
        size_t n = MUSTACHE_MAX_TEMPLATE;
        char *big = malloc(n + 2), err[256], *out;
        struct mustache *t;
        size_t len;

        cr_assert_not_null(big);
        memset(big, 'a', n + 1);
        memcpy(big, "{{x}}", 5);
        big[n + 1] = '\0';
        cr_assert_eq(mustache_parse(big, n, &t, err, sizeof err), 0, "1 MiB template: %s", err);
        json_object *c = json_tokener_parse("{\"x\":\"yz\"}");
        cr_assert_eq(mustache_render(t, c, &out, &len, err, sizeof err), 0);
        cr_assert_eq(len, n - 5 + 2);
        free(out);
        mustache_free(t);
        json_object_put(c);
        cr_assert_eq(mustache_parse(big, n + 1, &t, err, sizeof err), -E2BIG);
        cr_assert_null(t);
        cr_assert(strstr(err, "larger than"), "%s", err);
        free(big);
}

static char *nested(size_t depth) {
        char *s = malloc(depth * 12 + 1), *p = s;
        cr_assert_not_null(s);
        for (size_t i = 0; i < depth; i++)
                p += sprintf(p, "{{#a}}");
        for (size_t i = 0; i < depth; i++)
                p += sprintf(p, "{{/a}}");
        return s;
}

Test(mustache, section_nesting_limit) {
        struct mustache *t;
        char err[256], *ok = nested(MUSTACHE_MAX_DEPTH), *deep = nested(MUSTACHE_MAX_DEPTH + 1);

        cr_assert_eq(mustache_parse(ok, strlen(ok), &t, err, sizeof err), 0, "%s", err);
        mustache_free(t);
        cr_assert_eq(mustache_parse(deep, strlen(deep), &t, err, sizeof err), -E2BIG);
        cr_assert_null(t);
        cr_assert(strstr(err, "line 1, column 601: sections nested too deep"), "%s", err);
        free(ok);
        free(deep);
}

Test(mustache, output_size_limit) {
        /* 4097 items of a 4 KiB string: past the 16 MiB limit */
        char tmpl[] = "{{#l}}{{s}}{{/l}}", err[256], *out = (char *) 1;
        struct mustache *t;
        size_t len;
        json_object *c = json_object_new_object(), *l = json_object_new_array();
        char *s = malloc(4097);

        memset(s, 'x', 4096);
        s[4096] = '\0';
        json_object_object_add(c, "s", json_object_new_string(s));
        for (int i = 0; i < 4097; i++)
                json_object_array_add(l, json_object_new_int(i));
        json_object_object_add(c, "l", l);
        cr_assert_eq(mustache_parse(tmpl, strlen(tmpl), &t, err, sizeof err), 0);
        cr_assert_eq(mustache_render(t, c, &out, &len, err, sizeof err), -E2BIG);
        cr_assert_null(out);
        cr_assert(strstr(err, "output larger than"), "%s", err);
        mustache_free(t);
        json_object_put(c);
        free(s);
}

Test(mustache, render_steps_limit) {
        /* four nested sections over 100 items: 10^8 visits and no output */
        char tmpl[] = "{{#l}}{{#l}}{{#l}}{{#l}}{{/l}}{{/l}}{{/l}}{{/l}}", err[256], *out = (char *) 1;
        struct mustache *t;
        size_t len;
        json_object *c = json_object_new_object(), *l = json_object_new_array();

        for (int i = 0; i < 100; i++)
                json_object_array_add(l, json_object_new_int(i));
        json_object_object_add(c, "l", l);
        cr_assert_eq(mustache_parse(tmpl, strlen(tmpl), &t, err, sizeof err), 0);
        cr_assert_eq(mustache_render(t, c, &out, &len, err, sizeof err), -E2BIG);
        cr_assert_null(out);
        cr_assert(strstr(err, "more than"), "%s", err);
        mustache_free(t);
        json_object_put(c);
}

Test(mustache, recursive_partials_are_refused) {
        struct mustache *t;
        char err[256], *out;
        size_t len;
        json_object *p = json_tokener_parse("{\"loop\":\"x{{>loop}}\"}");

        cr_assert_eq(mustache_parse("{{>loop}}", 9, &t, err, sizeof err), 0);
        cr_assert_eq(mustache_render_partials(t, NULL, p, &out, &len, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "partials nested deeper"), "%s", err);
        mustache_free(t);
        json_object_put(p);
}

Test(mustache, values_of_every_type) {
        char *s = render("{{i}} {{d}} {{t}} {{f}} {{n}} {{o.k}} {{s}} {{{s}}}",
                         "{\"i\":-42,\"d\":0.5,\"t\":true,\"f\":false,\"n\":null,\"o\":{\"k\":\"v\"},\"s\":\"<&>\"}");
        cr_assert_str_eq(s, "-42 0.5 true false  v &lt;&amp;&gt; <&>");
        free(s);
}
