/* The add-ons' pure rules (coordinator/domain/addon.h, issue 16): a proxy's
 * spec read, refused with the member named, patched and written back; the
 * clusters it selects; the values it renders for each, checked to be a
 * YAML mapping; the HelmChart that carries a release, read back as a
 * manifest; and the staged rollout's slots and the tracking of one release
 * from the agents' reports. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/addon.h"
#include "json-cleanup.h"
#include "manifest.h"

static const char base[] =
        "{\"name\":\"mon\",\"cluster_selector\":{\"match_labels\":{\"env\":\"prod\"}},"
        "\"chart\":{\"repository\":\"https://charts.example.test\",\"name\":\"kube-prom\",\"version\":\"1.2.3\"},"
        "\"namespace\":\"monitoring\",\"values_template\":\"cluster: {{cluster.name}}\\nenv: {{cluster.labels.env}}\\n"
        "hosts: {{cluster.host_count}}\\n{{#cluster.api_vip}}vip: {{cluster.api_vip}}\\n{{/cluster.api_vip}}\"}";

static void parse_ok(const char *text, struct addon_spec *s) {
        char err[512] = "";
        _cleanup_json_ json_object *o = json_tokener_parse(text);
        cr_assert_not_null(o, "%s", text);
        cr_assert_eq(addon_spec_parse(o, s, err, sizeof err), 0, "%s: %s", text, err);
}

/* A copy of base with member k replaced by the JSON text v (v NULL: removed). */
static char *with(const char *k, const char *v) {
        json_object *o = json_tokener_parse(base);
        if (v)
                json_object_object_add(o, k, json_tokener_parse(v));
        else
                json_object_object_del(o, k);
        char *t = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        return t;
}

Test(addon_spec, defaults_and_round_trip) {
        struct addon_spec s, t;
        parse_ok(base, &s);
        cr_assert_str_eq(s.release_name, "mon", "release_name defaults to the proxy's name");
        cr_assert_eq(s.strategy, ADDON_CONTINUOUS);
        cr_assert_eq(s.rollout.max_concurrent, 0);
        cr_assert_eq(s.rollout.max_failures, ADDON_DEFAULT_MAX_FAILURES);
        cr_assert_eq(s.rollout.soak_seconds, 0);
        cr_assert_eq(s.rollout.timeout_seconds, ADDON_DEFAULT_TIMEOUT_S);
        _cleanup_json_ json_object *back = addon_spec_to_json(&s);
        const char *text = json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN);
        parse_ok(text, &t);
        cr_assert(addon_spec_same_output(&s, &t));
        _cleanup_json_ json_object *again = addon_spec_to_json(&t);
        cr_assert(json_object_equal(back, again), "the written spec reads back as itself");
        addon_spec_free(&s);
        addon_spec_free(&t);
}

Test(addon_spec, refusals_name_the_member) {
        static const struct {
                const char *k, *v, *says;
        } cases[] = {
                { "name", NULL, "\"name\" is required" },
                { "name", "\"Mon\"", "DNS-1123" },
                { "name", "\"-mon\"", "DNS-1123" },
                { "name", "\"a234567890123456789012345678901234567890123456789012345678901234\"", "DNS-1123" },
                { "cluster_selector", NULL, "cluster_selector\" is required" },
                { "cluster_selector", "{\"match_labels\":{\"-bad\":\"x\"}}", "cluster_selector: match_labels" },
                { "cluster_selector", "{\"match_expressions\":[{\"key\":\"a\",\"operator\":\"Near\"}]}",
                  "cluster_selector:" },
                { "cluster_selector", "{\"colour\":{}}", "cluster_selector:" },
                { "chart", NULL, "\"chart\" must be an object" },
                { "chart", "{\"name\":\"x\",\"version\":\"1\"}", "chart.field \"repository\" is required" },
                { "chart", "{\"repository\":\"r\",\"name\":\"\",\"version\":\"1\"}", "chart.name" },
                { "chart", "{\"repository\":\"r\",\"name\":\"n\",\"version\":\"1 2\"}", "chart.version" },
                { "chart", "{\"repository\":\"r\",\"name\":\"n\",\"version\":\"1\",\"digest\":\"x\"}", "chart.\"digest\"" },
                { "namespace", NULL, "\"namespace\" is required" },
                { "namespace", "\"kube_system\"", "DNS-1123" },
                { "release_name", "\"A\"", "DNS-1123" },
                { "values_template", "\"a: {{#x}}\"", "values_template: line 1, column 7: unclosed section" },
                { "values_template", "\"a: {{/x}}\"", "values_template: line 1" },
                { "values_template", "7", "must be a string" },
                { "reconcile_strategy", "\"Sometimes\"", "Continuous or InstallOnce" },
                { "rollout", "{\"max_concurrent\":-1}", "rollout.max_concurrent\" must be in 0..100000" },
                { "rollout", "{\"timeout_seconds\":0}", "rollout.timeout_seconds\" must be in 1.." },
                { "rollout", "{\"soak_seconds\":\"1\"}", "must be an integer" },
                { "rollout", "{\"pace\":1}", "rollout.\"pace\"" },
                { "rollout", "[]", "\"rollout\" must be an object" },
                { "colour", "\"blue\"", "\"colour\" is not a field" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                char *text = with(cases[i].k, cases[i].v), err[512] = "";
                json_object *o = json_tokener_parse(text);
                struct addon_spec s;
                cr_assert_eq(addon_spec_parse(o, &s, err, sizeof err), -EINVAL, "accepted: %s", text);
                cr_assert(strstr(err, cases[i].says), "%s -> \"%s\", expected \"%s\"", text, err, cases[i].says);
                json_object_put(o);
                free(text);
        }
}

Test(addon_spec, limits) {
        char err[512];
        struct addon_spec s;
        /* A template past 256 KiB, and 100 sections deeper than allowed. */
        size_t big = ADDON_MAX_TEMPLATE + 1;
        char *t = malloc(big + 1);
        memset(t, 'x', big);
        t[big] = '\0';
        json_object *o = json_tokener_parse(base);
        json_object_object_add(o, "values_template", json_object_new_string(t));
        cr_assert_eq(addon_spec_parse(o, &s, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "values_template") && strstr(err, "at most 262144"), "%s", err);
        free(t);
        char deep[4096] = "";
        for (int i = 0; i < MUSTACHE_MAX_DEPTH + 1; i++)
                strcat(deep, "{{#a}}");
        json_object_object_add(o, "values_template", json_object_new_string(deep));
        cr_assert_eq(addon_spec_parse(o, &s, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "values_template: "), "%s", err);
        json_object_object_add(o, "values_template", json_object_new_string(""));
        /* 10,000 expressions. */
        json_object *exprs = json_object_new_array(), *sel = json_object_new_object();
        for (int i = 0; i < 10000; i++) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "key", json_object_new_string("k"));
                json_object_object_add(e, "operator", json_object_new_string("Exists"));
                json_object_array_add(exprs, e);
        }
        json_object_object_add(sel, "match_expressions", exprs);
        json_object_object_add(o, "cluster_selector", sel);
        cr_assert_eq(addon_spec_parse(o, &s, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "cluster_selector:") && strstr(err, "1000"), "%s", err);
        json_object_put(o);
}

Test(addon_spec, patch_merges_chart_and_rollout_keeps_names) {
        struct addon_spec s, p;
        char err[512];
        parse_ok(base, &s);
        json_object *patch = json_tokener_parse("{\"chart\":{\"version\":\"2.0.0\"},\"rollout\":{\"max_concurrent\":1}}");
        cr_assert_eq(addon_spec_patch(&s, patch, &p, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(p.chart.version, "2.0.0");
        cr_assert_str_eq(p.chart.name, "kube-prom", "the other chart members stay");
        cr_assert_eq(p.rollout.max_concurrent, 1);
        cr_assert_eq(p.rollout.max_failures, ADDON_DEFAULT_MAX_FAILURES);
        cr_assert_not(addon_spec_same_output(&s, &p), "a new chart version is a new output");
        addon_spec_free(&p);
        json_object_put(patch);

        patch = json_tokener_parse("{\"rollout\":{\"soak_seconds\":30}}");
        cr_assert_eq(addon_spec_patch(&s, patch, &p, err, sizeof err), 0, "%s", err);
        cr_assert(addon_spec_same_output(&s, &p), "the rollout settings are not output");
        addon_spec_free(&p);
        json_object_put(patch);

        static const char *const refused[][2] = {
                { "{}", "nothing to change" },
                { "{\"namespace\":\"other\"}", "\"namespace\" is set when the proxy is created" },
                { "{\"name\":\"other\"}", "\"name\" is set when" },
                { "{\"chart\":\"x\"}", "\"chart\" must be an object" },
                { "{\"values_template\":\"{{#a}}\"}", "values_template: line 1" },
        };
        for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
                patch = json_tokener_parse(refused[i][0]);
                cr_assert_eq(addon_spec_patch(&s, patch, &p, err, sizeof err), -EINVAL, "%s", refused[i][0]);
                cr_assert(strstr(err, refused[i][1]), "%s -> %s", refused[i][0], err);
                json_object_put(patch);
        }
        patch = json_tokener_parse("{\"namespace\":\"monitoring\",\"values_template\":\"\"}");
        cr_assert_eq(addon_spec_patch(&s, patch, &p, err, sizeof err), 0, "the same namespace is no change: %s", err);
        addon_spec_free(&p);
        json_object_put(patch);
        addon_spec_free(&s);
}

static struct model_label prod[] = { { "env", "prod" }, { "tier", "gold" } };
static struct model_label dev[] = { { "env", "dev" } };

Test(addon_render, values_from_the_cluster_facts) {
        struct addon_spec s;
        struct addon_content c;
        char err[512];
        parse_ok(base, &s);
        struct addon_cluster a = { .id = "11111111-1111-4111-8111-111111111111", .name = "east", .labels = prod,
                                   .n_labels = 2, .api_vip = "192.0.2.100", .host_count = 3 };
        struct addon_cluster b = { .id = "22222222-2222-4222-8222-222222222222", .name = "lab", .labels = dev,
                                   .n_labels = 1 };
        cr_assert(addon_selects(&s, &a));
        cr_assert_not(addon_selects(&s, &b));
        json_object *ctx = addon_cluster_context(&a);
        cr_assert_eq(addon_render(&s, &a, ctx, &c, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.values, "cluster: east\nenv: prod\nhosts: 3\nvip: 192.0.2.100\n");
        cr_assert_str_eq(c.release_name, "mon");
        cr_assert_str_eq(c.chart.version, "1.2.3");
        json_object_put(ctx);
        /* A missing variable renders empty (the spec's rule). */
        ctx = addon_cluster_context(&b);
        struct addon_content d;
        cr_assert_eq(addon_render(&s, &b, ctx, &d, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(d.values, "cluster: lab\nenv: dev\nhosts: 0\n");
        cr_assert_not(addon_content_equal(&c, &d));
        /* Content round-trips through JSON. */
        json_object *j = addon_content_to_json(&c);
        struct addon_content e;
        cr_assert_eq(addon_content_from_json(j, &e), 0);
        cr_assert(addon_content_equal(&c, &e));
        json_object_put(j);
        addon_content_free(&c);
        addon_content_free(&d);
        addon_content_free(&e);
        json_object_put(ctx);
        addon_spec_free(&s);
}

Test(addon_render, values_must_be_a_yaml_mapping_naming_the_cluster) {
        static const char *const bad[][2] = {
                { "- {{cluster.name}}", "are not a YAML mapping" },
                { "just text", "are not a YAML mapping" },
                { "a: [1, 2", "are not YAML" },
                { "a: 1\n---\nb: 2\n", "more than one YAML document" },
                { "a: {{cluster.name}}\n b: x\n  c", "are not YAML" },
        };
        static const char *const good[] = { "", "# nothing\n", "a: 1\n", "a:\n  b: [1, 2]\n", "{}" };
        struct addon_cluster a = { .id = "11111111-1111-4111-8111-111111111111", .name = "east" };
        json_object *ctx = addon_cluster_context(&a);
        for (size_t i = 0; i < sizeof bad / sizeof *bad + sizeof good / sizeof *good; i++) {
                bool is_bad = i < sizeof bad / sizeof *bad;
                const char *tmpl = is_bad ? bad[i][0] : good[i - sizeof bad / sizeof *bad];
                char *text = with("values_template", NULL), err[512] = "";
                json_object *o = json_tokener_parse(text);
                json_object_object_add(o, "values_template", json_object_new_string(tmpl));
                struct addon_spec s;
                struct addon_content c;
                cr_assert_eq(addon_spec_parse(o, &s, err, sizeof err), 0, "%s", err);
                int r = addon_render(&s, &a, ctx, &c, err, sizeof err);
                if (is_bad) {
                        cr_assert_eq(r, -EINVAL, "accepted: %s", tmpl);
                        cr_assert(strstr(err, "cluster east") && strstr(err, bad[i][1]), "%s -> %s", tmpl, err);
                } else
                        cr_assert_eq(r, 0, "%s -> %s", tmpl, err);
                addon_content_free(&c);
                addon_spec_free(&s);
                json_object_put(o);
                free(text);
        }
        json_object_put(ctx);
}

Test(addon_helmchart, reads_back_as_a_manifest_with_the_values_verbatim) {
        struct addon_content c = {
                .chart = { "https://charts.example.test/stable", "kube-prom", "01.2" },
                .release_name = "mon",
                .namespace = "monitoring",
                .values = "a: \"quoted: yes\"\nlist:\n  - 1\n  - 'two'\nunicode: \xc3\xa9t\xc3\xa9\n",
        };
        char *y = addon_helmchart_yaml(&c, "mon-proxy", 7);
        cr_assert_not_null(y);
        char file[300], err[256];
        cr_assert_eq(addon_helmchart_file("mon-proxy", file, sizeof file), 0);
        cr_assert_str_eq(file, "9500_addon_mon-proxy.yaml");
        struct manifest_list l = { 0 };
        cr_assert_eq(manifest_parse_file(file, y, strlen(y), &l, err, sizeof err), 0, "%s\n%s", err, y);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].api_version, HELMCHART_API_VERSION);
        cr_assert_str_eq(l.v[0].kind, HELMCHART_KIND);
        cr_assert_str_eq(l.v[0].group, HELMCHART_GROUP);
        cr_assert_str_eq(l.v[0].name, "mon");
        cr_assert_str_eq(l.v[0].namespace, "monitoring");
        /* The values go in verbatim as a literal block; the version stays a string. */
        cr_assert(strstr(y, "valuesContent: |"), "%s", y);
        cr_assert(strstr(y, "    a: \"quoted: yes\"\n    list:\n      - 1\n"), "%s", y);
        cr_assert(strstr(y, "version: \"01.2\""), "%s", y);
        cr_assert(strstr(y, "targetNamespace: \"monitoring\""), "%s", y);
        cr_assert(strstr(y, "muster.io/addon-revision: \"7\""), "%s", y);
        manifest_list_free(&l);
        free(y);
}

Test(addon_rollout, slots) {
        struct addon_rollout ro = { .max_concurrent = 2, .max_failures = 1 };
        bool pause;
        cr_assert_eq(addon_rollout_slots(&ro, 0, 0, &pause), 2);
        cr_assert_not(pause);
        cr_assert_eq(addon_rollout_slots(&ro, 1, 0, &pause), 1);
        cr_assert_eq(addon_rollout_slots(&ro, 2, 0, &pause), 0);
        cr_assert_eq(addon_rollout_slots(&ro, 5, 0, &pause), 0);
        cr_assert_eq(addon_rollout_slots(&ro, 0, 1, &pause), 0);
        cr_assert(pause, "max_failures reached pauses");
        ro.max_failures = 0;
        cr_assert_eq(addon_rollout_slots(&ro, 0, 50, &pause), 2);
        cr_assert_not(pause, "max_failures 0 never pauses");
        ro.max_concurrent = 0;
        cr_assert_eq(addon_rollout_slots(&ro, 1000, 0, &pause), SIZE_MAX, "max_concurrent 0: no limit");
}

Test(addon_rollout, track_one_release) {
        struct addon_rollout ro = { .soak_seconds = 30, .timeout_seconds = 60 };
        struct addon_track_out o;
        char msg[256];
        struct addon_track_in in = { .status = ADDON_ROLLING, .payload_revision = 4, .min_applied = 3, .hosts = 2,
                                     .lagging_host = "h2", .started_s = 1000, .now_s = 1010, .ro = &ro };
        addon_track(&in, &o, msg, sizeof msg);
        cr_assert_eq(o.status, ADDON_ROLLING);
        cr_assert(o.in_flight);
        cr_assert(strstr(msg, "revision 4"), "%s", msg);
        /* Every host applied it: applied, soaking. */
        in.min_applied = 4;
        addon_track(&in, &o, msg, sizeof msg);
        cr_assert_eq(o.status, ADDON_APPLIED);
        cr_assert(o.in_flight, "soaking still takes a slot");
        /* Past the soak it frees its slot; a disconnect during it fails it. */
        struct addon_track_in ap = { .status = ADDON_APPLIED, .applied_s = 1000, .now_s = 1031, .ro = &ro };
        addon_track(&ap, &o, msg, sizeof msg);
        cr_assert_eq(o.status, ADDON_APPLIED);
        cr_assert_not(o.in_flight);
        ap.now_s = 1010;
        ap.disconnected_host = "h1";
        addon_track(&ap, &o, msg, sizeof msg);
        cr_assert_eq(o.status, ADDON_FAILED);
        cr_assert(strstr(msg, "host h1 disconnected"), "%s", msg);
        /* No report within the timeout. */
        in.min_applied = 3;
        in.now_s = 1060;
        addon_track(&in, &o, msg, sizeof msg);
        cr_assert_eq(o.status, ADDON_FAILED);
        cr_assert_not(o.in_flight);
        cr_assert(strstr(msg, "host h2 has not applied payload revision 4 within 60 s"), "%s", msg);
        /* A reported failure of that revision. */
        in.now_s = 1010;
        in.failed_revision = 4;
        in.failed_host = "h1";
        in.failed_why = "disk full";
        addon_track(&in, &o, msg, sizeof msg);
        cr_assert_eq(o.status, ADDON_FAILED);
        cr_assert(strstr(msg, "disk full"), "%s", msg);
        /* A removal every host applied: gone. */
        struct addon_track_in rm = { .status = ADDON_REMOVING, .payload_revision = 5, .min_applied = 5, .hosts = 1,
                                     .started_s = 1000, .now_s = 1001, .ro = &ro };
        addon_track(&rm, &o, msg, sizeof msg);
        cr_assert(o.removed);
        rm.min_applied = 4;
        addon_track(&rm, &o, msg, sizeof msg);
        cr_assert_not(o.removed);
        cr_assert_eq(o.status, ADDON_REMOVING);
}

/* Names YAML 1.1 would read as booleans or null stay strings. */
Test(addon_helmchart, names_that_look_like_booleans_stay_strings) {
        static const char *const names[] = { "n", "y", "no", "on", "off", "true", "null", "0", "1e3" };
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
                struct addon_content c = { .chart = { (char *) names[i], (char *) names[i], (char *) names[i] },
                                           .release_name = (char *) names[i], .namespace = (char *) names[i],
                                           .values = "" };
                char *y = addon_helmchart_yaml(&c, names[i], 1), err[256];
                struct manifest_list l = { 0 };
                cr_assert_eq(manifest_parse_file("x.yaml", y, strlen(y), &l, err, sizeof err), 0, "%s: %s\n%s",
                             names[i], err, y);
                cr_assert_str_eq(l.v[0].name, names[i]);
                cr_assert_str_eq(l.v[0].namespace, names[i]);
                manifest_list_free(&l);
                free(y);
        }
}
