/* YAML aliases against the real musterd on loopback (issue 32, item 8): a
 * catalog of about 1 MiB whose one 1 MiB string is aliased 600 or 60,000
 * times is refused with 413 "aliases expand past ..." while musterd's peak
 * memory (VmHWM) stays near what it was; a catalog with a few small
 * aliases is added as before. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;

static void up(void) {
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        cr_assert_eq(tu_musterd_start_in(&md, dir, NULL), 0, "musterd started");
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(yaml_aliases, .init = up, .fini = down, .timeout = 300);

#define url(...) tu_url(md.base, __VA_ARGS__)

/* musterd's peak resident memory so far, in KiB (VmHWM). */
static long peak_kib(void) {
        return (long) (tu_proc_status_bytes(md.pid, "VmHWM") / 1024);
}

/* POST a catalog `name` of one file `path` holding `text`: the status; the
 * answer's text in *answer (malloc'd). */
static long post_one(const char *name, const char *path, const char *text, char **answer) {
        json_object *body = json_object_new_object(), *files = json_object_new_array(), *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string(path));
        json_object_object_add(f, "content", json_object_new_string(text));
        json_object_array_add(files, f);
        json_object_object_add(body, "name", json_object_new_string(name));
        json_object_object_add(body, "priority", json_object_new_int(5));
        json_object_object_add(body, "files", files);
        const char *t = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        struct tu_http_reply r = { 0 };
        long code = tu_http_raw("POST", url("/api/v2/catalogs"), md.admin_token, "application/json", t, strlen(t), &r);
        *answer = r.body;
        json_object_put(body);
        return code;
}

/* A package blob whose description is a 1 MiB string, aliased n times in
 * one sequence. */
static char *bomb(size_t n) {
        size_t big = 1024 * 1024, cap = big + 4 * n + 256;
        char *t = malloc(cap), *p = t;
        cr_assert_not_null(t);
        p += sprintf(p, "schema: olm.package\nname: bomb\ndefaultChannel: stable\ndescription: &a \"");
        memset(p, 'x', big);
        p += big;
        p += sprintf(p, "\"\nicon: [");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%s*a", i ? "," : "");
        p += sprintf(p, "]\n");
        cr_assert_lt((size_t) (p - t), cap);
        return t;
}

static void refused(size_t n) {
        long before = peak_kib();
        char *t = bomb(n), *answer = NULL;
        int64_t t0 = tu_mono_ms();
        long code = post_one("bomb", "bomb.yaml", t, &answer);
        int64_t ms = tu_mono_ms() - t0;
        long after = peak_kib();
        cr_log_info("%zu aliases of 1 MiB: %ld in %lld ms, VmHWM %ld KiB -> %ld KiB", n, code, (long long) ms, before,
                    after);
        cr_assert_eq(code, 413, "%ld %s", code, answer ? answer : "");
        cr_assert(answer && strstr(answer, "aliases expand past "), "%s", answer ? answer : "");
        cr_assert(strstr(answer, "bomb.yaml"), "names the file: %s", answer);
        cr_assert_lt(after, before + 96 * 1024, "peak %ld KiB, from %ld KiB", after, before);
        free(answer);
        free(t);
        /* Nothing was added; musterd still answers. */
        json_object *l = tu_admin_get(&md, "/api/v2/catalogs");
        cr_assert_eq(json_object_array_length(l), 0);
        json_object_put(l);
}

Test(yaml_aliases, six_hundred_aliases_of_a_mebibyte_are_refused_with_small_memory) {
        refused(600);
}

Test(yaml_aliases, sixty_thousand_aliases_of_a_mebibyte_are_refused_with_small_memory) {
        refused(60000);
}

Test(yaml_aliases, a_catalog_with_a_few_small_aliases_is_added) {
        static const char text[] =
                "schema: olm.package\n"
                "name: small\n"
                "defaultChannel: stable\n"
                "---\n"
                "schema: olm.channel\n"
                "package: small\n"
                "name: stable\n"
                "entries:\n"
                "  - name: small.v1.0.0\n"
                "  - name: small.v1.1.0\n"
                "    replaces: small.v1.0.0\n"
                "---\n"
                "schema: olm.bundle\n"
                "package: small\n"
                "name: small.v1.0.0\n"
                "image: &img quay.io/example/small-bundle:v1\n"
                "properties:\n"
                "  - &pkg {type: olm.package, value: {packageName: small, version: 1.0.0}}\n"
                "relatedImages:\n"
                "  - {name: bundle, image: *img}\n"
                "  - {name: again, image: *img}\n"
                "---\n"
                "schema: olm.bundle\n"
                "package: small\n"
                "name: small.v1.1.0\n"
                "properties:\n"
                "  - type: olm.package\n"
                "    value: &v {packageName: small, version: 1.1.0}\n"
                "  - {type: olm.gvk, value: &gvk {group: example.com, kind: Small, version: v1}}\n"
                "  - {type: olm.gvk.required, value: *gvk}\n";
        char *answer = NULL;
        long code = post_one("small", "small.yaml", text, &answer);
        cr_assert_eq(code, 201, "%ld %s", code, answer ? answer : "");
        json_object *o = json_tokener_parse(answer);
        cr_assert_str_eq(tu_jstr(o, "package_count"), "1");
        cr_assert_str_eq(tu_jstr(o, "bundle_count"), "2");
        json_object_put(o);
        free(answer);
}
