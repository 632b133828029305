/* Kubernetes label selectors (common/labelsel.c): key and value validation
 * as k8s.io/apimachinery does it, every operator against present and absent
 * keys, empty and null selectors, refusals naming the bad member, limits,
 * and the canonical JSON form round-tripping. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labelsel.h"

static char *repeat(char c, size_t n) {
        char *s = malloc(n + 1);
        cr_assert_not_null(s);
        memset(s, c, n);
        s[n] = '\0';
        return s;
}

static struct labelsel *parse_ok(const char *text) {
        json_object *o = json_tokener_parse(text);
        cr_assert(o || strcmp(text, "null") == 0, "test JSON: %s", text);
        struct labelsel *s = NULL;
        char err[256] = "";
        int r = labelsel_parse(o, &s, err, sizeof err);
        json_object_put(o);
        cr_assert_eq(r, 0, "%s: %s", text, err);
        cr_assert_not_null(s);
        return s;
}

/* Parse text and expect r with a message that contains want. */
static void parse_fails(const char *text, int want_r, const char *want) {
        json_object *o = json_tokener_parse(text);
        cr_assert_not_null(o, "test JSON: %.200s", text);
        struct labelsel *s = NULL;
        char err[256] = "";
        int r = labelsel_parse(o, &s, err, sizeof err);
        json_object_put(o);
        cr_expect_eq(r, want_r, "%.200s: got %d (%s)", text, r, err);
        cr_expect_null(s);
        cr_expect(strstr(err, want) != NULL, "%.200s: message \"%s\" lacks \"%s\"", text, err, want);
}

Test(labelsel, valid_keys) {
        char *name63 = repeat('a', 63);
        char *prefix253 = repeat('a', 253);
        char k1[128], k2[400];
        snprintf(k1, sizeof k1, "example.com/%s", name63);
        snprintf(k2, sizeof k2, "%s/n", prefix253);
        const char *ok[] = {"a", "A", "9", "app", "App.Name_x-1", "a.b", "a-b_c.D",
                            "example.com/app", "kubernetes.io/hostname", "a-b.c-d/X", "0/0",
                            "node-role.kubernetes.io/control-plane", name63, k1, k2};
        char why[200];
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
                cr_expect(labelsel_key_valid(ok[i], why, sizeof why), "%.80s: %s", ok[i], why);
        free(name63);
        free(prefix253);
}

Test(labelsel, bad_keys) {
        char *name64 = repeat('a', 64);
        char *prefix254 = repeat('a', 254);
        char k1[128], k2[400];
        snprintf(k1, sizeof k1, "example.com/%s", name64);
        snprintf(k2, sizeof k2, "%s/n", prefix254);
        struct { const char *k, *why; } bad[] = {
                {"", "name part must be non-empty"},
                {"example.com/", "name part must be non-empty"},
                {"/app", "prefix part must be non-empty"},
                {"a/b/c", "at most one '/'"},
                {"a//b", "at most one '/'"},
                {name64, "no more than 63"},
                {k1, "no more than 63"},
                {k2, "no more than 253"},
                {"Example.com/app", "lower-case RFC 1123"},
                {"example..com/app", "lower-case RFC 1123"},
                {"-example.com/app", "lower-case RFC 1123"},
                {"example.com-/app", "lower-case RFC 1123"},
                {"exa_mple.com/app", "lower-case RFC 1123"},
                {".example.com/app", "lower-case RFC 1123"},
                {"-app", "start and end with an alphanumeric"},
                {"app-", "start and end with an alphanumeric"},
                {"_app", "start and end with an alphanumeric"},
                {"app.", "start and end with an alphanumeric"},
                {"a b", "alphanumeric characters"},
                {"app!", "alphanumeric characters"},
                {"caf\xc3\xa9", "alphanumeric characters"},
        };
        char why[200];
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                why[0] = '\0';
                cr_expect_not(labelsel_key_valid(bad[i].k, why, sizeof why), "%.80s", bad[i].k);
                cr_expect(strstr(why, bad[i].why), "%.80s: \"%s\" lacks \"%s\"", bad[i].k, why, bad[i].why);
        }
        cr_expect_not(labelsel_key_valid(NULL, NULL, 0));
        free(name64);
        free(prefix254);
}

Test(labelsel, values) {
        char *v63 = repeat('z', 63);
        char *v64 = repeat('z', 64);
        const char *ok[] = {"", "a", "Z", "1.2.3", "v1_beta-2", v63};
        const char *bad[] = {v64, "-a", "a-", ".a", "a.", "_a", "a b", "a/b", "a:b", "\xc3\xa9"};
        char why[200];
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
                cr_expect(labelsel_value_valid(ok[i], why, sizeof why), "\"%s\": %s", ok[i], why);
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                cr_expect_not(labelsel_value_valid(bad[i], why, sizeof why), "\"%.80s\"", bad[i]);
        cr_expect_not(labelsel_value_valid(NULL, why, sizeof why));
        free(v63);
        free(v64);
}

/* The label sets the matching table runs against. */
static const char *const k_env_prod[] = {"env", "tier"};
static const char *const v_env_prod[] = {"prod", "web"};
static const char *const k_env_dev[] = {"env"};
static const char *const v_env_dev[] = {"dev"};
static const char *const k_empty_env[] = {"env", "example.com/zone"};
static const char *const v_empty_env[] = {"", "a"};

struct set {
        const char *const *k, *const *v;
        size_t n;
};
static const struct set sets[] = {
        {k_env_prod, v_env_prod, 2}, /* 0: env=prod, tier=web */
        {k_env_dev, v_env_dev, 1},   /* 1: env=dev */
        {NULL, NULL, 0},             /* 2: no labels */
        {k_empty_env, v_empty_env, 2}, /* 3: env="", example.com/zone=a */
};
#define NSETS (sizeof sets / sizeof *sets)

static const struct {
        const char *sel;
        bool want[NSETS];
} match_cases[] = {
        {"{}", {1, 1, 1, 1}},
        {"{\"match_labels\":{},\"match_expressions\":[]}", {1, 1, 1, 1}},
        {"{\"match_labels\":null,\"match_expressions\":null}", {1, 1, 1, 1}},
        {"null", {0, 0, 0, 0}},
        {"{\"match_labels\":{\"env\":\"prod\"}}", {1, 0, 0, 0}},
        {"{\"match_labels\":{\"env\":\"\"}}", {0, 0, 0, 1}},
        {"{\"match_labels\":{\"env\":\"prod\",\"tier\":\"web\"}}", {1, 0, 0, 0}},
        {"{\"match_labels\":{\"env\":\"prod\",\"tier\":\"db\"}}", {0, 0, 0, 0}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"In\",\"values\":[\"prod\",\"dev\"]}]}", {1, 1, 0, 0}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"In\",\"values\":[\"\"]}]}", {0, 0, 0, 1}},
        {"{\"match_expressions\":[{\"key\":\"nope\",\"operator\":\"In\",\"values\":[\"x\"]}]}", {0, 0, 0, 0}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"NotIn\",\"values\":[\"prod\"]}]}", {0, 1, 1, 1}},
        {"{\"match_expressions\":[{\"key\":\"nope\",\"operator\":\"NotIn\",\"values\":[\"x\"]}]}", {1, 1, 1, 1}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"Exists\"}]}", {1, 1, 0, 1}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"Exists\",\"values\":[]}]}", {1, 1, 0, 1}},
        {"{\"match_expressions\":[{\"key\":\"tier\",\"operator\":\"Exists\",\"values\":null}]}", {1, 0, 0, 0}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"DoesNotExist\"}]}", {0, 0, 1, 0}},
        {"{\"match_expressions\":[{\"key\":\"tier\",\"operator\":\"DoesNotExist\"}]}", {0, 1, 1, 1}},
        {"{\"match_expressions\":[{\"key\":\"example.com/zone\",\"operator\":\"Exists\"}]}", {0, 0, 0, 1}},
        /* requirements are ANDed, match_labels with them */
        {"{\"match_labels\":{\"env\":\"prod\"},\"match_expressions\":[{\"key\":\"tier\",\"operator\":\"In\","
         "\"values\":[\"web\"]}]}", {1, 0, 0, 0}},
        {"{\"match_labels\":{\"env\":\"prod\"},\"match_expressions\":[{\"key\":\"tier\",\"operator\":\"DoesNotExist\"}]}",
         {0, 0, 0, 0}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"Exists\"},{\"key\":\"env\",\"operator\":\"NotIn\","
         "\"values\":[\"dev\"]}]}", {1, 0, 0, 1}},
        {"{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"In\",\"values\":[\"prod\"]},{\"key\":\"env\","
         "\"operator\":\"In\",\"values\":[\"dev\"]}]}", {0, 0, 0, 0}},
};

Test(labelsel, matching_table) {
        for (size_t i = 0; i < sizeof match_cases / sizeof *match_cases; i++) {
                struct labelsel *s = parse_ok(match_cases[i].sel);
                for (size_t j = 0; j < NSETS; j++) {
                        bool got = labelsel_matches(s, sets[j].k, sets[j].v, sets[j].n);
                        cr_expect_eq(got, match_cases[i].want[j], "%s against set %zu: got %d", match_cases[i].sel, j,
                                     got);
                        /* the same labels as a JSON object decide the same */
                        json_object *labels = json_object_new_object();
                        for (size_t l = 0; l < sets[j].n; l++)
                                json_object_object_add(labels, sets[j].k[l], json_object_new_string(sets[j].v[l]));
                        cr_expect_eq(labelsel_matches_json(s, labels), got, "%s against JSON set %zu",
                                     match_cases[i].sel, j);
                        json_object_put(labels);
                }
                labelsel_free(s);
        }
        cr_expect_not(labelsel_matches(NULL, NULL, NULL, 0), "no selector selects nothing");
}

Test(labelsel, matches_json_ignores_non_strings) {
        struct labelsel *s = parse_ok("{\"match_expressions\":[{\"key\":\"n\",\"operator\":\"Exists\"}]}");
        json_object *labels = json_tokener_parse("{\"n\":5}");
        cr_expect_not(labelsel_matches_json(s, labels));
        cr_expect_not(labelsel_matches_json(s, NULL));
        json_object_put(labels);
        labelsel_free(s);
}

Test(labelsel, refusals_name_the_member) {
        struct { const char *sel, *want; } bad[] = {
                {"[]", "selector: must be an object or null"},
                {"\"env=prod\"", "selector: must be an object or null"},
                {"{\"matchLabels\":{\"a\":\"b\"}}", "unknown member \"matchLabels\""},
                {"{\"match_labels\":[]}", "match_labels: must be an object"},
                {"{\"match_labels\":{\"Bad.Prefix/a\":\"b\"}}", "match_labels: key \"Bad.Prefix/a\": prefix part"},
                {"{\"match_labels\":{\"a/b/c\":\"b\"}}", "match_labels: key \"a/b/c\": a key has at most one '/'"},
                {"{\"match_labels\":{\"\":\"b\"}}", "match_labels: key \"\": name part must be non-empty"},
                {"{\"match_labels\":{\"a\":\"-b\"}}", "match_labels.a: value \"-b\": a value must"},
                {"{\"match_labels\":{\"a\":1}}", "match_labels.a: the value must be a string"},
                {"{\"match_labels\":{\"a\":\"x\\u0000y\"}}", "match_labels.a: the value must be a string"},
                {"{\"match_expressions\":{}}", "match_expressions: must be an array"},
                {"{\"match_expressions\":[1]}", "match_expressions[0]: must be an object"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"value\":[]}]}",
                 "match_expressions[0]: unknown member \"value\""},
                {"{\"match_expressions\":[{\"operator\":\"Exists\"}]}", "match_expressions[0].key: must be a string"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"Exists\"},{\"key\":\"a_\",\"operator\":\"Exists\"}]}",
                 "match_expressions[1].key: \"a_\": name part must"},
                {"{\"match_expressions\":[{\"key\":\"a\"}]}", "match_expressions[0].operator: must be one of"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"in\",\"values\":[\"x\"]}]}",
                 "match_expressions[0].operator: \"in\" is not one of In, NotIn"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
                 "match_expressions[0].operator: \"Gt\" is not one of"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}",
                 "match_expressions[0].values: In needs at least one value"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[]}]}",
                 "match_expressions[0].values: In needs at least one value"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"NotIn\",\"values\":null}]}",
                 "match_expressions[0].values: NotIn needs at least one value"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
                 "match_expressions[0].values: Exists takes no values"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"DoesNotExist\",\"values\":[\"\"]}]}",
                 "match_expressions[0].values: DoesNotExist takes no values"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":\"x\"}]}",
                 "match_expressions[0].values: must be an array"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"Exists\"},{\"key\":\"a\",\"operator\":\"Exists\"},"
                 "{\"key\":\"a\",\"operator\":\"Exists\"},{\"key\":\"b\",\"operator\":\"In\",\"values\":[\"ok\",\"bad value\"]}]}",
                 "match_expressions[3].values[1]: \"bad value\": a value must"},
                {"{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"ok\",7]}]}",
                 "match_expressions[0].values[1]: must be a string"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                parse_fails(bad[i].sel, -EINVAL, bad[i].want);
}

/* {"match_expressions": [ n of item ]} */
static char *many(const char *item, size_t n) {
        size_t len = strlen(item);
        char *s = malloc(64 + n * (len + 1));
        cr_assert_not_null(s);
        char *p = s + sprintf(s, "{\"match_expressions\":[");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%s%s", i ? "," : "", item);
        strcpy(p, "]}");
        return s;
}

Test(labelsel, limits) {
        const char *ex = "{\"key\":\"a\",\"operator\":\"Exists\"}";
        char *at = many(ex, LABELSEL_MAX_EXPRESSIONS);
        struct labelsel *s = parse_ok(at);
        cr_expect_eq(s->nexprs, LABELSEL_MAX_EXPRESSIONS);
        labelsel_free(s);
        free(at);

        char *over = many(ex, LABELSEL_MAX_EXPRESSIONS + 1);
        parse_fails(over, -E2BIG, "match_expressions: 1001 expressions, at most 1000");
        free(over);

        /* 10,000 expressions, the last one bad: refused by its count (speed is
         * not asserted here: tests never time themselves) */
        char *huge = many(ex, 10000);
        json_object *o = json_tokener_parse(huge);
        cr_assert_not_null(o);
        struct labelsel *hs = NULL;
        char err[256] = "";
        cr_expect_eq(labelsel_parse(o, &hs, err, sizeof err), -E2BIG);
        cr_expect(strstr(err, "10000 expressions, at most 1000"), "%s", err);
        cr_expect_null(hs, "nothing is made of a refused selector");
        json_object_put(o);
        free(huge);
}

Test(labelsel, value_and_label_limits) {
        json_object *values = json_object_new_array();
        for (int i = 0; i <= LABELSEL_MAX_VALUES; i++) {
                char v[16];
                snprintf(v, sizeof v, "v%d", i);
                json_object_array_add(values, json_object_new_string(v));
        }
        json_object *e = json_object_new_object();
        json_object_object_add(e, "key", json_object_new_string("k"));
        json_object_object_add(e, "operator", json_object_new_string("In"));
        json_object_object_add(e, "values", values);
        json_object *sel = json_object_new_object();
        json_object *arr = json_object_new_array();
        json_object_array_add(arr, e);
        json_object_object_add(sel, "match_expressions", arr);
        parse_fails(json_object_to_json_string(sel), -E2BIG, "match_expressions[0].values: 1001 values, at most 1000");
        json_object_array_del_idx(values, 0, 1); /* exactly 1000 */
        struct labelsel *s = parse_ok(json_object_to_json_string(sel));
        cr_expect_eq(s->exprs[0].nvalues, LABELSEL_MAX_VALUES);
        labelsel_free(s);
        json_object_put(sel);

        json_object *labels = json_object_new_object();
        for (int i = 0; i <= LABELSEL_MAX_LABELS; i++) {
                char k[16];
                snprintf(k, sizeof k, "k%d", i);
                json_object_object_add(labels, k, json_object_new_string("v"));
        }
        sel = json_object_new_object();
        json_object_object_add(sel, "match_labels", labels);
        parse_fails(json_object_to_json_string(sel), -E2BIG, "match_labels: 1001 labels, at most 1000");
        json_object_put(sel);
}

static const char *round_trip_cases[] = {
        "{}",
        "{\"match_labels\":{\"z\":\"1\",\"a\":\"\",\"example.com/m\":\"x\"}}",
        ("{\"match_expressions\":[{\"key\":\"b\",\"operator\":\"NotIn\",\"values\":[\"y\",\"x\",\"y\"]},"
         "{\"key\":\"a\",\"operator\":\"Exists\"},{\"key\":\"c\",\"operator\":\"DoesNotExist\",\"values\":[]},"
         "{\"key\":\"d/e\",\"operator\":\"In\",\"values\":[\"\"]}]}"),
        ("{\"match_labels\":{\"env\":\"prod\"},\"match_expressions\":[{\"key\":\"env\",\"operator\":\"In\","
         "\"values\":[\"prod\"]}]}"),
};

Test(labelsel, round_trips_through_json) {
        for (size_t i = 0; i < sizeof round_trip_cases / sizeof *round_trip_cases; i++) {
                struct labelsel *s = parse_ok(round_trip_cases[i]);
                json_object *j = labelsel_to_json(s);
                cr_assert_not_null(j);
                char *text = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
                struct labelsel *s2 = parse_ok(text);
                cr_expect(labelsel_equal(s, s2), "%s -> %s", round_trip_cases[i], text);
                json_object *j2 = labelsel_to_json(s2);
                cr_expect_str_eq(json_object_to_json_string_ext(j2, JSON_C_TO_STRING_PLAIN), text, "canonical form is stable");
                json_object_put(j);
                json_object_put(j2);
                free(text);
                labelsel_free(s);
                labelsel_free(s2);
        }
}

Test(labelsel, canonical_form) {
        struct labelsel *s = parse_ok("{\"match_expressions\":[{\"key\":\"b\",\"operator\":\"In\",\"values\":[\"y\",\"x\",\"y\"]},"
                                      "{\"key\":\"a\",\"operator\":\"Exists\"}],\"match_labels\":{\"z\":\"1\",\"a\":\"2\"}}");
        json_object *j = labelsel_to_json(s);
        cr_expect_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
                         "{\"match_labels\":{\"a\":\"2\",\"z\":\"1\"},\"match_expressions\":["
                         "{\"key\":\"b\",\"operator\":\"In\",\"values\":[\"x\",\"y\"]},"
                         "{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[]}]}");
        json_object_put(j);
        labelsel_free(s);
}

Test(labelsel, null_selector_round_trips) {
        struct labelsel *s = parse_ok("null");
        cr_expect(s->nothing);
        json_object *j = labelsel_to_json(s);
        cr_expect_null(j, "the null selector is JSON null");
        struct labelsel *s2 = NULL;
        cr_assert_eq(labelsel_parse(j, &s2, NULL, 0), 0);
        cr_expect(labelsel_equal(s, s2));
        struct labelsel *all = parse_ok("{}");
        cr_expect_not(labelsel_equal(s, all), "null and {} differ");
        labelsel_free(all);
        labelsel_free(s);
        labelsel_free(s2);
        labelsel_free(NULL);
}

Test(labelsel, op_names) {
        cr_expect_str_eq(labelsel_op_to_string(LABELSEL_IN), "In");
        cr_expect_str_eq(labelsel_op_to_string(LABELSEL_NOT_IN), "NotIn");
        cr_expect_str_eq(labelsel_op_to_string(LABELSEL_EXISTS), "Exists");
        cr_expect_str_eq(labelsel_op_to_string(LABELSEL_DOES_NOT_EXIST), "DoesNotExist");
}

/* ---- kubectl's text form (-l, ?selector=) ---------------------------------------- */

static bool text_selects(const char *text, const char *const *k, const char *const *v, size_t n) {
        struct labelsel *s = NULL;
        char err[256] = "";
        cr_assert_eq(labelsel_parse_text(text, &s, err, sizeof err), 0, "%s: %s", text, err);
        bool m = labelsel_matches(s, k, v, n);
        labelsel_free(s);
        return m;
}

Test(labelsel, text_form_selects_as_kubectl) {
        /* {env=prod, tier=web} */
        static const char *const k[] = {"env", "tier"}, *const v[] = {"prod", "web"};
        static const struct { const char *text; bool want; } cases[] = {
                {"", true},
                {"env=prod", true},
                {"env==prod", true},
                {"env = prod , tier=web", true},
                {"env=dev", false},
                {"env!=dev", true},
                {"gpu!=yes", true}, /* absent: != holds, as in Kubernetes */
                {"env in (dev, prod)", true},
                {"env in (dev)", false},
                {"env notin (dev,qa)", true},
                {"env notin (prod)", false},
                {"tier", true},
                {"gpu", false},
                {"!gpu", true},
                {"! tier", false},
                {"env=prod,env=dev", false}, /* every requirement holds */
                {"env=prod,gpu", false},
                {"env=prod,!gpu,tier in (web)", true},
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
                cr_assert_eq(text_selects(cases[i].text, k, v, 2), cases[i].want, "%s", cases[i].text);
        static const char *const ek[] = {"env"}, *const ev[] = {""};
        cr_assert(text_selects("env=", ek, ev, 1), "an empty value");
        cr_assert_not(text_selects("env=", k, v, 2));
}

Test(labelsel, text_form_refusals_say_where) {
        static const struct { const char *text, *why; } bad[] = {
                {"env=prod,", "a requirement is wanted after ','"},
                {",env", "a label key is wanted"},
                {"env prod", "=, ==, !=, in or notin is wanted"},
                {"env=prod tier", "',' is wanted between requirements"},
                {"env in prod", "'(' is wanted"},
                {"env in (a b)", "',' or ')'"},
                {"env in (a", "',' or ')'"},
                {"env>3", "< and > are not supported"},
                {"-bad=x", "label key"},
                {"env=bad value", "',' is wanted"},
                {"env=-x", "label value"},
                {"env=(x)", "',' is wanted"},
                {"env in ()", "at least one value"},
                {"!", "a label key is wanted"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct labelsel *s = NULL;
                char err[512] = "";
                int r = labelsel_parse_text(bad[i].text, &s, err, sizeof err);
                cr_assert_eq(r, -EINVAL, "%s: %d", bad[i].text, r);
                cr_assert_null(s);
                cr_assert(strstr(err, bad[i].why), "%s: %s", bad[i].text, err);
        }
        char *big = repeat('a', LABELSEL_MAX_TEXT + 1);
        struct labelsel *s = NULL;
        cr_assert_eq(labelsel_parse_text(big, &s, NULL, 0), -E2BIG);
        free(big);
}
