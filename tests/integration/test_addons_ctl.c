/* musterctl's add-on commands against the real musterd on loopback with a
 * SQLite store (issue 16): cluster labels, add-on proxies made, changed,
 * listed, shown and deleted, the releases they keep per selected cluster,
 * rollout pause/resume/rollback, and the usage errors that never reach the
 * server. The clusters are not installed, so their releases stay Pending:
 * musterd reconciles on every change, before it answers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

TestSuite(addons_ctl, .init = up, .fini = down, .timeout = 180);

/* musterctl --server BASE --token-file ADMIN ARGS... (tu_ctl): its exit status. */
#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })
/* The same with -o json: what it printed, parsed; the test fails unless it exits 0. */
#define FITS(...) tu_ctl_assert_fits(md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })
#define CTL_JSON(...) tu_ctl_json(&md, (const char *const[]) { __VA_ARGS__, NULL })

/* Lines after the header of a table. */
static int rows(const char *s) {
        int n = 0;
        for (const char *p = s; *p; p++)
                n += *p == '\n';
        return n - 1;
}

/* A cluster with one label, made with musterctl; its id (malloc'd). */
static char *make_cluster(const char *name, const char *label) {
        json_object *o = CTL_JSON("cluster", "create", name, "--label", label);
        char *id = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        return id;
}

/* addon create NAME with the chart flags, selecting by `sel` ("-l" and a
 * label, or "--selector" and JSON): the proxy as -o json prints it. */
static json_object *make_proxy(const char *name, const char *sel_opt, const char *sel) {
        return CTL_JSON("addon", "create", name, "--chart-repo", "https://charts.example.test/stable", "--chart",
                        "nginx", "--version", "1.2.3", "--namespace", "web", sel_opt, sel, "--values-template",
                        "replicas: 1\ncluster: {{cluster.name}}\n");
}

/* The releases `addon releases ARGS` lists as JSON: "PROXY@CLUSTER_NAME:STATUS"
 * joined with ',' in the order given. malloc'd. */
static char *release_keys(json_object *a) {
        size_t n = json_object_array_length(a), len = 1;
        for (size_t i = 0; i < n; i++)
                len += 160;
        char *s = calloc(1, len);
        cr_assert_not_null(s);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                char one[160];
                snprintf(one, sizeof one, "%s%.50s@%.50s:%.20s", i ? "," : "", tu_jstr(e, "proxy") ?: "?",
                         tu_jstr(e, "cluster_name") ?: "?", tu_jstr(e, "status") ?: "?");
                strcat(s, one);
        }
        return s;
}

/* Whether the comma-joined list has `item` as one of its members. */
static bool has_item(const char *list, const char *item) {
        size_t n = strlen(item);
        for (const char *p = list; (p = strstr(p, item)); p++)
                if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return false;
}

/* ---- help ------------------------------------------------------------------- */

Test(addons_ctl, help_on_every_command) {
        static const char *const cmds[][2] = {
                { "cluster", "label" }, { "addon", "create" }, { "addon", "set" }, { "addon", "list" },
                { "addon", "show" }, { "addon", "delete" }, { "addon", "releases" }, { "addon", "rollout" },
        };
        char *out;
        tu_ctl_assert_help(&md, cmds, sizeof cmds / sizeof *cmds);
        cr_assert_eq(CTL(&out, NULL, "addon", "--help"), 0);
        cr_assert(strstr(out, "releases") && strstr(out, "rollout"), "%s", out);
        free(out);
}

/* ---- cluster label ------------------------------------------------------------ */

Test(addons_ctl, cluster_label_sets_removes_and_refuses) {
        char *out, *err;
        free(make_cluster("c1", "keep=yes"));
        cr_assert_eq(CTL(&out, &err, "cluster", "label", "c1", "env=prod", "tier=web"), 0, "%s", err);
        cr_assert(strstr(out, "env=prod\n") && strstr(out, "tier=web\n") && strstr(out, "keep=yes\n"), "%s", out);
        free(out);
        free(err);
        json_object *o = CTL_JSON("cluster", "show", "c1");
        cr_assert_str_eq(tu_jstr(o, "labels.env"), "prod");
        cr_assert_str_eq(tu_jstr(o, "labels.tier"), "web");
        cr_assert_str_eq(tu_jstr(o, "labels.keep"), "yes");
        json_object_put(o);

        /* KEY- removes, KEY=VALUE changes; in one call, -o json prints the cluster. */
        o = CTL_JSON("cluster", "label", "c1", "tier-", "env=staging");
        cr_assert_null(tu_json_get(o, "labels.tier"), "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "labels.env"), "staging");
        cr_assert_str_eq(tu_jstr(o, "name"), "c1");
        json_object_put(o);

        /* A key Kubernetes refuses: musterd's 400 and its reason. */
        cr_assert_eq(CTL(&out, &err, "cluster", "label", "c1", "bad key!=x"), 1);
        cr_assert(strstr(err, "musterctl: ") && strstr(err, "(HTTP 400)") && strstr(err, "bad key!"), "%s", err);
        cr_assert_str_eq(out, "");
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "label", "c1", "env=" "a-value-that-is-much-longer-than-sixty-three-"
                                                                      "characters-which-kubernetes-refuses"),
                     1);
        cr_assert(strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);

        /* Usage errors never reach the server. */
        static const char *const bad[] = { "novalue", "=x", "-", "" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(CTL(&out, &err, "cluster", "label", "c1", "env=x", bad[i]), 2, "\"%s\"", bad[i]);
                cr_assert(strstr(err, "KEY=VALUE") && strstr(err, "--help"), "%s", err);
                free(out);
                free(err);
        }
        cr_assert_eq(CTL(&out, &err, "cluster", "label", "c1"), 2);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "label", "nosuch", "a=b"), 3);
        cr_assert(strstr(err, "nosuch"), "%s", err);
        free(out);
        free(err);
        o = CTL_JSON("cluster", "show", "c1");
        cr_assert_str_eq(tu_jstr(o, "labels.env"), "staging", "nothing changed: %s", json_object_to_json_string(o));
        cr_assert_eq(json_object_object_length(tu_json_get(o, "labels")), 2);
        json_object_put(o);

        /* The last label removed: none left. */
        cr_assert_eq(CTL(&out, NULL, "cluster", "label", "c1", "env-", "keep-"), 0);
        cr_assert(strstr(out, "no labels"), "%s", out);
        free(out);
}

/* ---- create, show, list -------------------------------------------------------- */

Test(addons_ctl, create_show_list) {
        char *out, *err, path[4096];
        free(make_cluster("p1", "env=prod"));
        snprintf(path, sizeof path, "%s/values.yaml", dir);
        cr_assert_eq(tu_write_file(dir, "values.yaml", "image: nginx\nname: \"{{cluster.name}}\"\n"), 0);
        json_object *o = CTL_JSON("addon", "create", "web", "--chart-repo", "https://charts.example.test/stable",
                                  "--chart", "nginx", "--version", "1.2.3", "--namespace", "web-ns", "--release-name",
                                  "web-rel", "--values-file", path, "-l", "env=prod", "-ltier=front", "--strategy",
                                  "InstallOnce", "--max-concurrent", "2", "--max-failures", "0", "--soak", "30",
                                  "--timeout", "900");
        cr_assert_str_eq(tu_jstr(o, "name"), "web");
        cr_assert_str_eq(tu_jstr(o, "chart.repository"), "https://charts.example.test/stable");
        cr_assert_str_eq(tu_jstr(o, "chart.name"), "nginx");
        cr_assert_str_eq(tu_jstr(o, "chart.version"), "1.2.3");
        cr_assert_str_eq(tu_jstr(o, "namespace"), "web-ns");
        cr_assert_str_eq(tu_jstr(o, "release_name"), "web-rel");
        cr_assert_str_eq(tu_jstr(o, "values_template"), "image: nginx\nname: \"{{cluster.name}}\"\n",
                         "the file as it is, its last newline too");
        cr_assert_str_eq(tu_jstr(o, "reconcile_strategy"), "InstallOnce");
        cr_assert_str_eq(tu_jstr(o, "rollout.max_concurrent"), "2");
        cr_assert_str_eq(tu_jstr(o, "rollout.max_failures"), "0");
        cr_assert_str_eq(tu_jstr(o, "rollout.soak_seconds"), "30");
        cr_assert_str_eq(tu_jstr(o, "rollout.timeout_seconds"), "900");
        cr_assert_str_eq(tu_jstr(o, "cluster_selector.match_labels.env"), "prod");
        cr_assert_str_eq(tu_jstr(o, "cluster_selector.match_labels.tier"), "front");
        cr_assert_str_eq(tu_jstr(o, "paused"), "false");
        json_object_put(o);

        /* A whole selector, and the defaults musterd fills in. */
        o = CTL_JSON("addon", "create", "mon", "--chart-repo", "oci://registry.example.test/charts", "--chart",
                     "node-exporter", "--version", "4.0.0", "--namespace", "monitoring", "--selector",
                     "{\"match_expressions\":[{\"key\":\"env\",\"operator\":\"In\",\"values\":[\"prod\",\"dev\"]}]}");
        cr_assert_str_eq(tu_jstr(o, "release_name"), "mon");
        cr_assert_str_eq(tu_jstr(o, "reconcile_strategy"), "Continuous");
        cr_assert_str_eq(tu_jstr(o, "rollout.max_failures"), "1");
        cr_assert_str_eq(tu_jstr(o, "cluster_selector.match_expressions.0.operator"), "In");
        cr_assert_str_eq(tu_jstr(o, "status.selected"), "1", "p1 is selected: %s", json_object_to_json_string(o));
        json_object_put(o);

        /* Without -o json: the key/value view. */
        cr_assert_eq(CTL(&out, &err, "addon", "create", "sel-all", "--chart-repo", "https://c.example.test",
                         "--chart", "x", "--version", "0.1.0", "--namespace", "x", "--selector", "{}"),
                     0, "%s", err);
        cr_assert(strstr(out, "sel-all") && strstr(out, "x@0.1.0") && strstr(out, "every cluster"), "%s", out);
        FITS("addon", "show", "sel-all"); /* what create printed, fitted with COLUMNS */
        free(out);
        free(err);

        cr_assert_eq(CTL(&out, &err, "addon", "list"), 0, "%s", err);
        FITS("addon", "list"); /* piped: whole cells; fitted with COLUMNS */
        cr_assert_eq(rows(out), 3, "%s", out);
        cr_assert(strstr(out, "NAME") && strstr(out, "CHART") && strstr(out, "SELECTED") && strstr(out, "APPLIED") &&
                          strstr(out, "FAILED") && strstr(out, "STRATEGY") && strstr(out, "READY") &&
                          strstr(out, "PAUSED"),
                  "%s", out);
        cr_assert(strstr(out, "nginx@1.2.3") && strstr(out, "InstallOnce") && strstr(out, "node-exporter@"), "%s",
                  out);
        free(out);
        free(err);
        o = CTL_JSON("addon", "list");
        cr_assert_eq(json_object_array_length(o), 3);
        char *names = tu_join(o, "name");
        cr_assert(has_item(names, "web") && has_item(names, "mon") && has_item(names, "sel-all"), "%s", names);
        free(names);
        json_object_put(o);
        cr_assert_eq(CTL(&out, &err, "-o", "wide", "addon", "list"), 0, "%s", err);
        cr_assert(strstr(out, "web-ns/web-rel") && strstr(out, "env=prod, tier=front") &&
                          strstr(out, "node-exporter@4.0.0"),
                  "%s", out);
        free(out);
        free(err);

        cr_assert_eq(CTL(&out, &err, "addon", "show", "web"), 0, "%s", err);
        FITS("addon", "show", "web"); /* piped: whole cells; fitted with COLUMNS */
        cr_assert(strstr(out, "nginx@1.2.3") && strstr(out, "https://charts.example.test/stable") &&
                          strstr(out, "web-ns/web-rel") && strstr(out, "env=prod, tier=front") &&
                          strstr(out, "InstallOnce") && strstr(out, "never pause") && strstr(out, "30s") &&
                          strstr(out, "900s"),
                  "%s", out);
        cr_assert(strstr(out, "ReleasesReady"), "the conditions are shown:\n%s", out);
        cr_assert(strstr(out, "Values template:\n  image: nginx\n  name: \"{{cluster.name}}\"\n"), "%s", out);
        free(out);
        free(err);
        o = CTL_JSON("addon", "show", "mon");
        cr_assert_str_eq(tu_jstr(o, "chart.name"), "node-exporter");
        char *id = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        o = CTL_JSON("addon", "show", id);
        cr_assert_str_eq(tu_jstr(o, "name"), "mon", "by id too");
        json_object_put(o);
        free(id);

        /* Names are unique: musterd refuses a second "web". */
        cr_assert_eq(CTL(&out, &err, "addon", "create", "web", "--chart-repo", "https://c.example.test", "--chart",
                         "x", "--version", "1", "--namespace", "x", "--selector", "{}"),
                     1);
        cr_assert(strstr(err, "(HTTP 409)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "show", "nosuch"), 3);
        cr_assert(strstr(err, "(HTTP 404)"), "%s", err);
        free(out);
        free(err);
}

/* ---- set ---------------------------------------------------------------------------- */

Test(addons_ctl, set_sends_only_what_is_given) {
        char *out, *err;
        free(make_cluster("p1", "env=prod"));
        json_object *o = make_proxy("web", "-l", "env=prod");
        int64_t gen = json_object_get_int64(tu_json_get(o, "generation"));
        json_object_put(o);

        o = CTL_JSON("addon", "set", "web", "--version", "2.0.0");
        cr_assert_str_eq(tu_jstr(o, "chart.version"), "2.0.0");
        cr_assert_str_eq(tu_jstr(o, "chart.name"), "nginx", "the rest of the chart stays");
        cr_assert_str_eq(tu_jstr(o, "chart.repository"), "https://charts.example.test/stable");
        cr_assert_gt(json_object_get_int64(tu_json_get(o, "generation")), gen, "a new chart is a new generation");
        json_object_put(o);

        o = CTL_JSON("addon", "set", "web", "--max-concurrent", "3", "--soak", "5");
        cr_assert_str_eq(tu_jstr(o, "rollout.max_concurrent"), "3");
        cr_assert_str_eq(tu_jstr(o, "rollout.soak_seconds"), "5");
        cr_assert_str_eq(tu_jstr(o, "rollout.max_failures"), "1", "the rest of the rollout stays");
        cr_assert_str_eq(tu_jstr(o, "rollout.timeout_seconds"), "600");
        cr_assert_str_eq(tu_jstr(o, "chart.version"), "2.0.0");
        json_object_put(o);

        o = CTL_JSON("addon", "set", "web", "--chart-repo", "https://mirror.example.test/stable", "--strategy",
                     "InstallOnce", "--values-template", "replicas: 3\n", "-l", "env=dev");
        cr_assert_str_eq(tu_jstr(o, "chart.repository"), "https://mirror.example.test/stable");
        cr_assert_str_eq(tu_jstr(o, "chart.version"), "2.0.0");
        cr_assert_str_eq(tu_jstr(o, "reconcile_strategy"), "InstallOnce");
        cr_assert_str_eq(tu_jstr(o, "values_template"), "replicas: 3\n");
        cr_assert_str_eq(tu_jstr(o, "cluster_selector.match_labels.env"), "dev");
        cr_assert_str_eq(tu_jstr(o, "status.selected"), "0", "p1 is env=prod: %s", json_object_to_json_string(o));
        json_object_put(o);

        /* The table view of a change. */
        cr_assert_eq(CTL(&out, &err, "addon", "set", "web", "--selector", "null"), 0, "%s", err);
        cr_assert(strstr(out, "no cluster"), "%s", out);
        free(out);
        free(err);
        o = CTL_JSON("addon", "show", "web");
        cr_assert(tu_json_get(o, "cluster_selector") == NULL, "null selector: %s", json_object_to_json_string(o));
        json_object_put(o);

        /* What set cannot do, and musterd's refusals. */
        cr_assert_eq(CTL(&out, &err, "addon", "set", "web"), 2);
        cr_assert(strstr(err, "nothing to set"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "set", "web", "--namespace", "other"), 2);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "set", "nosuch", "--version", "1"), 3);
        cr_assert(strstr(err, "(HTTP 404)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "set", "web", "--values-template", "{{#unclosed}}"), 1);
        cr_assert(strstr(err, "(HTTP 400)") && strstr(err, "values_template"), "%s", err);
        free(out);
        free(err);
}

/* ---- releases ---------------------------------------------------------------------- */

Test(addons_ctl, releases_per_proxy_and_cluster) {
        char *out, *err;
        char *p1 = make_cluster("p1", "env=prod");
        free(make_cluster("d1", "env=dev"));
        json_object_put(make_proxy("prod-web", "-l", "env=prod"));
        json_object_put(make_proxy("all-mon", "--selector", "{}"));

        json_object *o = CTL_JSON("addon", "releases");
        char *keys = release_keys(o);
        cr_assert_eq(json_object_array_length(o), 3, "%s", keys);
        cr_assert(has_item(keys, "prod-web@p1:Pending") && has_item(keys, "all-mon@p1:Pending") &&
                          has_item(keys, "all-mon@d1:Pending"),
                  "%s", keys);
        free(keys);
        json_object_put(o);

        o = CTL_JSON("addon", "releases", "--proxy", "prod-web");
        keys = release_keys(o);
        cr_assert_str_eq(keys, "prod-web@p1:Pending");
        json_object *r = json_object_array_get_idx(o, 0);
        cr_assert_str_eq(tu_jstr(r, "cluster_id"), p1);
        cr_assert_str_eq(tu_jstr(r, "namespace"), "web");
        cr_assert_str_eq(tu_jstr(r, "release_name"), "prod-web");
        cr_assert_str_eq(tu_jstr(r, "chart.version"), "1.2.3");
        cr_assert(strstr(tu_jstr(r, "values"), "cluster: p1"), "rendered for p1: %s", tu_jstr(r, "values"));
        free(keys);
        json_object_put(o);

        o = CTL_JSON("addon", "releases", "--cluster", "d1");
        keys = release_keys(o);
        cr_assert_str_eq(keys, "all-mon@d1:Pending");
        free(keys);
        json_object_put(o);
        /* The cluster by id prefix, the proxy by name: one release. */
        char prefix[9];
        snprintf(prefix, sizeof prefix, "%.8s", p1);
        o = CTL_JSON("addon", "releases", "--cluster", prefix, "--proxy", "all-mon");
        keys = release_keys(o);
        cr_assert_str_eq(keys, "all-mon@p1:Pending");
        free(keys);
        json_object_put(o);

        /* The table. */
        cr_assert_eq(CTL(&out, &err, "addon", "releases", "--proxy", "all-mon"), 0, "%s", err);
        FITS("addon", "releases", "--proxy", "all-mon"); /* piped: whole cells; fitted with COLUMNS */
        cr_assert_eq(rows(out), 2, "%s", out);
        cr_assert(strstr(out, "PROXY") && strstr(out, "CLUSTER") && strstr(out, "RELEASE") && strstr(out, "STATUS") &&
                          strstr(out, "web/all-mon") && strstr(out, "Pending") && strstr(out, "d1") &&
                          strstr(out, "p1"),
                  "%s", out);
        free(out);
        free(err);

        /* A cluster that comes to match gets its release. */
        cr_assert_eq(CTL(&out, &err, "cluster", "label", "d1", "env=prod"), 0, "%s", err);
        free(out);
        free(err);
        keys = NULL;
        for (int64_t end = tu_mono_ms() + 20000; tu_mono_ms() < end;) {
                o = CTL_JSON("addon", "releases", "--proxy", "prod-web");
                free(keys);
                keys = release_keys(o);
                json_object_put(o);
                if (has_item(keys, "prod-web@d1:Pending"))
                        break;
                usleep(200 * 1000);
        }
        cr_assert(has_item(keys, "prod-web@d1:Pending") && has_item(keys, "prod-web@p1:Pending"), "%s", keys);
        free(keys);

        cr_assert_eq(CTL(&out, &err, "addon", "releases", "--cluster", "nosuch"), 3);
        cr_assert(strstr(err, "nosuch"), "%s", err);
        free(out);
        free(err);
        free(p1);
}

/* ---- rollout ------------------------------------------------------------------------- */

Test(addons_ctl, rollout_pause_resume_rollback) {
        char *out, *err;
        free(make_cluster("p1", "env=prod"));
        json_object_put(make_proxy("web", "-l", "env=prod"));

        json_object *o = CTL_JSON("addon", "rollout", "pause", "web");
        cr_assert_str_eq(tu_jstr(o, "paused"), "true", "%s", json_object_to_json_string(o));
        json_object_put(o);
        o = CTL_JSON("addon", "show", "web");
        cr_assert_str_eq(tu_jstr(o, "paused"), "true");
        json_object_put(o);
        cr_assert_eq(CTL(&out, &err, "addon", "list"), 0, "%s", err);
        cr_assert(strstr(out, "yes"), "PAUSED: %s", out);
        free(out);
        free(err);

        cr_assert_eq(CTL(&out, &err, "addon", "rollout", "resume", "web"), 0, "%s", err);
        cr_assert(strstr(out, "running") && strstr(out, "web"), "%s", out);
        FITS("addon", "show", "web"); /* what rollout printed, fitted with COLUMNS */
        free(out);
        free(err);
        o = CTL_JSON("addon", "show", "web");
        cr_assert_str_eq(tu_jstr(o, "paused"), "false");
        json_object_put(o);
        cr_assert_eq(CTL(&out, &err, "addon", "rollout", "pause", "web"), 0, "%s", err);
        cr_assert(strstr(out, "paused"), "%s", out);
        free(out);
        free(err);

        /* Nothing to roll back to: one generation only. */
        cr_assert_eq(CTL(&out, &err, "addon", "rollout", "rollback", "web"), 1);
        cr_assert(strstr(err, "musterctl: ") && strstr(err, "(HTTP 409)"), "%s", err);
        cr_assert_str_eq(out, "");
        free(out);
        free(err);

        /* After a change, rollback returns to the previous chart. */
        json_object_put(CTL_JSON("addon", "set", "web", "--version", "2.0.0"));
        o = CTL_JSON("addon", "rollout", "rollback", "web");
        cr_assert_str_eq(tu_jstr(o, "chart.version"), "1.2.3", "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "generation"), "3", "a rollback is a new generation");
        cr_assert_str_eq(tu_jstr(o, "paused"), "false", "and the rollout runs again");
        json_object_put(o);
        o = CTL_JSON("addon", "releases", "--proxy", "web");
        cr_assert_str_eq(tu_jstr(json_object_array_get_idx(o, 0), "chart.version"), "1.2.3");
        json_object_put(o);

        cr_assert_eq(CTL(&out, &err, "addon", "rollout", "restart", "web"), 2);
        cr_assert(strstr(err, "pause, resume or rollback"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "rollout", "pause"), 2);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "rollout", "pause", "nosuch"), 3);
        cr_assert(strstr(err, "(HTTP 404)"), "%s", err);
        free(out);
        free(err);
}

/* ---- delete ---------------------------------------------------------------------------- */

Test(addons_ctl, delete_removes_the_proxy_and_its_releases) {
        char *out, *err;
        free(make_cluster("p1", "env=prod"));
        json_object_put(make_proxy("web", "-l", "env=prod"));
        json_object_put(make_proxy("keep", "-l", "env=prod"));
        cr_assert_eq(CTL(&out, &err, "addon", "delete", "web"), 0, "%s", err);
        cr_assert(strstr(out, "addon proxy web deleted\n") || strstr(out, "being deleted"), "%s", out);
        free(out);
        free(err);
        /* Pending releases were never installed: nothing to wait for, but a
         * 202 is allowed to take a moment. */
        int st = 0;
        for (int64_t end = tu_mono_ms() + 20000; tu_mono_ms() < end;) {
                st = CTL(&out, &err, "addon", "show", "web");
                free(out);
                if (st == 3 && strstr(err, "(HTTP 404)")) {
                        free(err);
                        break;
                }
                free(err);
                usleep(200 * 1000);
        }
        cr_assert_eq(st, 3, "the proxy is gone");
        json_object *o = CTL_JSON("addon", "releases");
        char *keys = release_keys(o);
        cr_assert_str_eq(keys, "keep@p1:Pending");
        free(keys);
        json_object_put(o);
        o = CTL_JSON("addon", "list");
        tu_assert_join(o, "name", "keep");
        json_object_put(o);
        cr_assert_eq(CTL(&out, &err, "addon", "delete", "web"), 3);
        cr_assert(strstr(err, "(HTTP 404)"), "%s", err);
        free(out);
        free(err);
}

/* ---- usage errors ---------------------------------------------------------------------- */

Test(addons_ctl, usage_errors_never_reach_the_server) {
        static const char *const chart[] = { "--chart-repo", "https://c.example.test", "--chart", "x",
                                             "--version", "1.0.0", "--namespace", "x" };
#define CREATE(out, err, ...)                                                                                  \
        CTL(out, err, "addon", "create", "p", chart[0], chart[1], chart[2], chart[3], chart[4], chart[5], chart[6], \
            chart[7], __VA_ARGS__)
        char *out, *err;
        struct {
                const char *a, *b, *c, *d, *want;
        } cases[] = {
                { "--strategy", "Continuous", NULL, NULL, "-l KEY=VALUE or --selector" },
                { "-l", "novalue", NULL, NULL, "-l takes KEY=VALUE" },
                { "-l", "=x", NULL, NULL, "-l takes KEY=VALUE" },
                { "--selector", "{nope", NULL, NULL, "--selector takes a JSON object" },
                { "--selector", "[]", NULL, NULL, "--selector takes a JSON object" },
                { "--selector", "{} x", NULL, NULL, "--selector takes a JSON object" },
                { "-l", "a=b", "--selector", "{}", "not both" },
                { "-l", "a=b", "--strategy", "Sometimes", "--strategy takes Continuous or InstallOnce" },
                { "-l", "a=b", "--max-concurrent", "-1", "--max-concurrent takes a whole number" },
                { "-l", "a=b", "--timeout", "0", "--timeout takes a whole number" },
                { "-l", "a=b", "--soak", "ten", "--soak takes a whole number" },
                { "-l", "a=b", "--bogus", "x", "unknown option --bogus" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                int st = cases[i].c ? CREATE(&out, &err, cases[i].a, cases[i].b, cases[i].c, cases[i].d)
                                    : CREATE(&out, &err, cases[i].a, cases[i].b);
                cr_assert_eq(st, 2, "case %zu: exit %d: %s", i, st, err);
                cr_assert(strstr(err, cases[i].want) && strstr(err, "Try 'musterctl addon create --help'"),
                          "case %zu: %s", i, err);
                cr_assert_str_eq(out, "");
                free(out);
                free(err);
        }
        /* A required chart member missing. */
        cr_assert_eq(CTL(&out, &err, "addon", "create", "p", "--chart", "x", "--version", "1", "--namespace", "x",
                         "-l", "a=b"),
                     2);
        cr_assert(strstr(err, "--chart-repo is required"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "create", "--chart", "x", "-l", "a=b"), 2);
        cr_assert(strstr(err, "NAME is missing"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "releases", "extra"), 2);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "addon", "show"), 2);
        free(out);
        free(err);
        /* A values file that cannot be read is named. */
        char path[4096];
        snprintf(path, sizeof path, "%s/nope.yaml", dir);
        cr_assert_eq(CREATE(&out, &err, "-l", "a=b", "--values-file", path), 1);
        cr_assert(strstr(err, path), "%s", err);
        free(out);
        free(err);
        /* A label key the server refuses: its 400 and reason. */
        cr_assert_eq(CREATE(&out, &err, "-l", "bad key=x"), 1);
        cr_assert(strstr(err, "(HTTP 400)") && strstr(err, "bad key"), "%s", err);
        free(out);
        free(err);
#undef CREATE
        json_object *o = CTL_JSON("addon", "list");
        cr_assert_eq(json_object_array_length(o), 0, "nothing was created: %s", json_object_to_json_string(o));
        json_object_put(o);
}
