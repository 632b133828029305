/* openapi/muster.yaml against musterd's route table (issue 35, check 1):
 * the document and api_routes[] name the same (method, path) pairs, any
 * {placeholder} taken for any other; each operation's operationId is its
 * route's name; each {placeholder} is a declared path parameter. The
 * comparison is shown to fail on copies of the document with an operation
 * taken out or one added. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "json-cleanup.h"
#include "testutil.h"
#include "yamljson.h"

#define DOC MUSTER_SOURCE_DIR "/openapi/muster.yaml"
#define REPORT_MAX 16384

static const char *const methods[] = { "get", "put", "post", "delete", "patch", "head", "options", "trace" };

/* path with each {..} as {} into out. */
static void normalise(const char *path, char *out, size_t n) {
        size_t o = 0;
        for (const char *p = path; *p && o + 3 < n; p++) {
                out[o++] = *p;
                if (*p == '{') {
                        const char *close = strchr(p, '}');
                        cr_assert(close, "unclosed placeholder in %s", path);
                        out[o++] = '}';
                        p = close;
                }
        }
        out[o] = '\0';
}

static void upper(const char *s, char *out, size_t n) {
        size_t i = 0;
        for (; s[i] && i + 1 < n; i++)
                out[i] = (char) toupper((unsigned char) s[i]);
        out[i] = '\0';
}

static json_object *load_doc(void) {
        size_t len = 0;
        char *text = tu_read_file(DOC, &len);
        cr_assert(text, "cannot read %s", DOC);
        char err[256];
        json_object *doc = NULL;
        int r = yamljson_parse(text, len, &doc, err, sizeof err);
        free(text);
        cr_assert_eq(r, 0, "%s: %s", DOC, err);
        return doc;
}

/* The operation of the document for the route's method and path, or NULL. */
static json_object *doc_op(json_object *paths, const char *method, const char *pattern) {
        char want[512], have[512], m[16];
        normalise(pattern, want, sizeof want);
        json_object_object_foreach(paths, path, item) {
                normalise(path, have, sizeof have);
                if (strcmp(have, want) != 0)
                        continue;
                for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
                        upper(methods[i], m, sizeof m);
                        json_object *op;
                        if (!strcmp(m, method) && json_object_object_get_ex(item, methods[i], &op))
                                return op;
                }
        }
        return NULL;
}

static bool table_has(const char *method, const char *path) {
        char want[512], have[512];
        normalise(path, want, sizeof want);
        for (size_t i = 0; i < api_n_routes; i++) {
                normalise(api_routes[i].pattern, have, sizeof have);
                if (!strcmp(api_routes[i].method, method) && !strcmp(have, want))
                        return true;
        }
        return false;
}

/* How many (method, path) pairs only one side names, each on a line of
 * report: "missing in the document: GET /x" or "missing in the route
 * table: GET /y". */
static int compare(json_object *doc, char *report, size_t n) {
        int diff = 0;
        size_t o = 0;
        json_object *paths = NULL;
        report[0] = '\0';
        cr_assert(json_object_object_get_ex(doc, "paths", &paths) && json_object_is_type(paths, json_type_object),
                  "the document has no paths object");
        for (size_t i = 0; i < api_n_routes; i++)
                if (!doc_op(paths, api_routes[i].method, api_routes[i].pattern)) {
                        o += (size_t) snprintf(report + o, o < n ? n - o : 0, "missing in the document: %s %s\n",
                                               api_routes[i].method, api_routes[i].pattern);
                        diff++;
                }
        json_object_object_foreach(paths, path, item) {
                for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
                        char m[16];
                        upper(methods[i], m, sizeof m);
                        if (json_object_object_get_ex(item, methods[i], NULL) && !table_has(m, path)) {
                                o += (size_t) snprintf(report + o, o < n ? n - o : 0,
                                                       "missing in the route table: %s %s\n", m, path);
                                diff++;
                        }
                }
        }
        return diff;
}

Test(openapi_routes, same_pairs) {
        _cleanup_json_ json_object *doc = load_doc();
        char report[REPORT_MAX];
        int diff = compare(doc, report, sizeof report);
        if (diff)
                fprintf(stderr, "%s", report);
        cr_assert_eq(diff, 0, "%s and api_routes[] differ in %d pair(s):\n%s", DOC, diff, report);
}

Test(openapi_routes, version_is_the_api) {
        _cleanup_json_ json_object *doc = load_doc();
        json_object *info = NULL, *v = NULL, *oa = NULL;
        cr_assert(json_object_object_get_ex(doc, "openapi", &oa));
        cr_assert_str_eq(json_object_get_string(oa), "3.1.0");
        cr_assert(json_object_object_get_ex(doc, "info", &info) && json_object_object_get_ex(info, "version", &v));
        cr_assert_str_eq(json_object_get_string(v), MUSTER_API_VERSION);
}

/* Each operation is named as its route (the metrics label), and the public
 * routes, and only they, need no token. */
Test(openapi_routes, operation_ids_and_public_routes) {
        _cleanup_json_ json_object *doc = load_doc();
        json_object *paths = json_object_object_get(doc, "paths");
        for (size_t i = 0; i < api_n_routes; i++) {
                const struct http_route *rt = &api_routes[i];
                json_object *op = doc_op(paths, rt->method, rt->pattern), *id = NULL, *sec = NULL;
                cr_assert(op, "no operation for %s %s", rt->method, rt->pattern);
                cr_assert(json_object_object_get_ex(op, "operationId", &id), "%s %s has no operationId", rt->method,
                          rt->pattern);
                cr_expect_str_eq(json_object_get_string(id), rt->name, "%s %s", rt->method, rt->pattern);
                bool open = json_object_object_get_ex(op, "security", &sec) && json_object_is_type(sec, json_type_array) &&
                            json_object_array_length(sec) == 0;
                cr_expect_eq(open, (rt->flags & ROUTE_PUBLIC) != 0, "%s %s: security: [] %s ROUTE_PUBLIC",
                             rt->method, rt->pattern, open ? "without" : "is missing with");
        }
}

/* The parameter `name` in path among params (an array, $refs into
 * components.parameters resolved). */
static bool has_path_param(json_object *doc, json_object *params, const char *name) {
        json_object *comps = NULL;
        json_object_object_get_ex(json_object_object_get(doc, "components"), "parameters", &comps);
        for (size_t i = 0; params && i < json_object_array_length(params); i++) {
                json_object *p = json_object_array_get_idx(params, i), *ref = NULL;
                if (json_object_object_get_ex(p, "$ref", &ref)) {
                        const char *s = json_object_get_string(ref), *pre = "#/components/parameters/";
                        cr_assert(!strncmp(s, pre, strlen(pre)), "parameter $ref %s", s);
                        cr_assert(json_object_object_get_ex(comps, s + strlen(pre), &p), "no parameter %s", s);
                }
                const char *in = json_object_get_string(json_object_object_get(p, "in"));
                const char *n = json_object_get_string(json_object_object_get(p, "name"));
                if (in && n && !strcmp(in, "path") && !strcmp(n, name))
                        return true;
        }
        return false;
}

Test(openapi_routes, placeholders_are_path_parameters) {
        _cleanup_json_ json_object *doc = load_doc();
        json_object_object_foreach(json_object_object_get(doc, "paths"), path, item) {
                json_object *common = json_object_object_get(item, "parameters");
                for (const char *p = strchr(path, '{'); p; p = strchr(p + 1, '{')) {
                        char name[128];
                        size_t n = strcspn(p + 1, "}");
                        cr_assert(n > 0 && n < sizeof name);
                        memcpy(name, p + 1, n);
                        name[n] = '\0';
                        for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
                                json_object *op;
                                if (!json_object_object_get_ex(item, methods[i], &op))
                                        continue;
                                cr_expect(has_path_param(doc, common, name) ||
                                                  has_path_param(doc, json_object_object_get(op, "parameters"), name),
                                          "%s %s: {%s} is no path parameter", methods[i], path, name);
                        }
                }
        }
}

/* The check fails when the two differ: a copy of the document without
 * GET /api/v2/tokens, and one with an operation no route serves. */
Test(openapi_routes, reports_a_difference) {
        _cleanup_json_ json_object *doc = load_doc();
        char report[REPORT_MAX];
        json_object *paths = json_object_object_get(doc, "paths"), *tokens = NULL;
        cr_assert(json_object_object_get_ex(paths, "/api/v2/tokens", &tokens));
        json_object_object_del(tokens, "get");
        cr_assert_eq(compare(doc, report, sizeof report), 1, "%s", report);
        cr_assert_str_eq(report, "missing in the document: GET /api/v2/tokens\n");

        json_object *extra = json_object_new_object();
        json_object_object_add(extra, "post", json_object_new_object());
        json_object_object_add(paths, "/api/v2/infra-envs/{infra_env_id}/nothing", extra);
        cr_assert_eq(compare(doc, report, sizeof report), 2, "%s", report);
        cr_assert(strstr(report, "missing in the route table: POST /api/v2/infra-envs/{infra_env_id}/nothing\n"),
                  "%s", report);
}

/* yamljson's types, which the comparison (and the served JSON) rely on. */
Test(openapi_routes, yaml_as_json) {
        char err[256];
        _cleanup_json_ json_object *o = NULL;
        const char *text = "a: 1\nb: '200'\nc: [true, ~, 1.5, x]\nd: {e: \"f\"}\n";
        cr_assert_eq(yamljson_parse(text, strlen(text), &o, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                         "{\"a\":1,\"b\":\"200\",\"c\":[true,null,1.5,\"x\"],\"d\":{\"e\":\"f\"}}");
        json_object *bad = NULL;
        cr_assert_eq(yamljson_parse("a: &x 1\nb: *x\n", 14, &bad, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "aliases"), "%s", err);
        cr_assert_null(bad);
        cr_assert_eq(yamljson_parse("a: 1\na: 2\n", 10, &bad, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "line 2"), "%s", err);
        cr_assert_eq(yamljson_parse("a: 1\n---\nb: 2\n", 14, &bad, err, sizeof err), -EINVAL);
}
