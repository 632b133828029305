/* musterctl's operand commands and the cleanup setting of operator
 * subscriptions (issue 17) against the real musterd on loopback with a
 * SQLite store and the fixture catalogs (tests/fixtures/catalogs): a
 * cluster subscribed to myapp (myapp -> dbop -> etcd, and prometheus) owns
 * EtcdCluster, Database and Prometheus, so operands of those kinds apply
 * and list as managed with their packages, one of a kind nobody owns is
 * refused with nothing stored, and delete takes them by KIND/NAME,
 * KIND/NAMESPACE/NAME or id. `operator subscribe --cleanup` and `operator
 * set --cleanup=` are read back from `operator list`; `operator
 * uninstall` with cleanup deletes the managed operands of the kinds the
 * package owns (at once: the cluster is not installed), without it keeps
 * them, and `operator show` prints one subscription. Usage errors never
 * reach the server. The clusters are not installed: nothing here needs
 * agents. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define CATALOGS MUSTER_FIXTURES_DIR "/catalogs"

static struct tu_musterd md;
static char *dir;

/* musterctl --server BASE --token-file ADMIN ARGS... (tu_ctl): its exit status. */
#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })
/* The same with -o json: what it printed, parsed; the test fails unless it exits 0. */
#define CTL_JSON(...) tu_ctl_json(&md, (const char *const[]) { __VA_ARGS__, NULL })

static const char etcd_yaml[] = "apiVersion: etcd.database.coreos.com/v1beta2\n"
                                "kind: EtcdCluster\n"
                                "metadata:\n"
                                "  name: example\n"
                                "  namespace: default\n"
                                "spec:\n"
                                "  size: 3\n";

/* Two documents: a Database and a Prometheus. */
static const char two_yaml[] = "apiVersion: db.example.com/v1\n"
                               "kind: Database\n"
                               "metadata:\n"
                               "  name: orders\n"
                               "  namespace: shop\n"
                               "spec:\n"
                               "  engine: postgres\n"
                               "---\n"
                               "apiVersion: monitoring.coreos.com/v1\n"
                               "kind: Prometheus\n"
                               "metadata:\n"
                               "  name: k8s\n"
                               "  namespace: monitoring\n"
                               "spec:\n"
                               "  replicas: 2\n";

/* A Prometheus of the same name in another namespace, as JSON. */
static const char prom_json[] = "{\"apiVersion\": \"monitoring.coreos.com/v1\", \"kind\": \"Prometheus\",\n"
                                " \"metadata\": {\"name\": \"k8s\", \"namespace\": \"team-a\"}}\n";

/* An EtcdCluster and a kind no operator owns, in one file. */
static const char widget_yaml[] = "apiVersion: etcd.database.coreos.com/v1beta2\n"
                                  "kind: EtcdCluster\n"
                                  "metadata:\n"
                                  "  name: second\n"
                                  "  namespace: default\n"
                                  "---\n"
                                  "apiVersion: example.com/v1\n"
                                  "kind: Widget\n"
                                  "metadata:\n"
                                  "  name: w1\n"
                                  "  namespace: default\n";

static void add_catalog(const char *name, const char *prio) {
        char path[4200], *out = NULL, *err = NULL;
        snprintf(path, sizeof path, CATALOGS "/%s", name);
        cr_assert_eq(CTL(&out, &err, "catalog", "add", name, path, "--priority", prio), 0, "catalog add %s: %s", name,
                     err);
        free(out);
        free(err);
}

/* The path of dir/name after writing text there (into a static buffer of
 * four, reused in turn). */
static const char *manifest(const char *name, const char *text) {
        static char bufs[4][4200];
        static int next;
        char *p = bufs[next++ % 4];
        cr_assert_eq(tu_write_file(dir, name, text), 0, "%s written", name);
        snprintf(p, 4200, "%s/%s", dir, name);
        return p;
}

static void up(void) {
        tu_ctl_clean_env();
        /* musterctl as on an 80-column terminal: the layout these tests
         * check fits (piped, whole cells, is test_musterctl's). */
        setenv("COLUMNS", "80", 1);
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        cr_assert_eq(tu_musterd_start_in(&md, dir, NULL), 0, "musterd started");
        add_catalog("redhat", "0");
        add_catalog("community", "10");
        add_catalog("partner", "20");
        json_object *o = CTL_JSON("cluster", "create", "c1");
        json_object_put(o);
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(operands_ctl, .init = up, .fini = down, .timeout = 300);

/* `operand list CLUSTER -o json`'s items as "source:package:Kind:ns/name"
 * joined by ',' (malloc'd), sorted by the server's order. */
static char *operand_keys(const char *cluster) {
        json_object *o = CTL_JSON("operand", "list", cluster);
        json_object *items = tu_json_get(o, "items");
        cr_assert(items && json_object_is_type(items, json_type_array), "%s", json_object_to_json_string(o));
        size_t n = json_object_array_length(items);
        char *s = calloc(1, n * 300 + 1);
        cr_assert_not_null(s);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(items, i);
                char one[300];
                snprintf(one, sizeof one, "%s%.20s:%.40s:%.40s:%.60s/%.60s", i ? "," : "", tu_jstr(e, "source") ?: "?",
                         tu_jstr(e, "package") ?: "?", tu_jstr(e, "kind") ?: "?", tu_jstr(e, "namespace") ?: "",
                         tu_jstr(e, "name") ?: "?");
                strcat(s, one);
        }
        json_object_put(o);
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

/* How many members the comma-joined list has. */
static int count_items(const char *list) {
        int n = *list ? 1 : 0;
        for (const char *p = list; *p; p++)
                n += *p == ',';
        return n;
}

/* The subscription to pkg in `operator list CLUSTER -o json`: its
 * cleanup.enabled as "true"/"false" (malloc'd), NULL if absent. */
static char *cleanup_of(const char *cluster, const char *pkg) {
        json_object *o = CTL_JSON("operator", "list", cluster);
        json_object *s = tu_find_by(tu_json_get(o, "items"), "package", pkg);
        cr_assert_not_null(s, "%s is listed: %s", pkg, json_object_to_json_string(o));
        const char *v = tu_jstr(s, "cleanup.enabled");
        char *r = v ? strdup(v) : NULL;
        json_object_put(o);
        return r;
}

static void subscribe(const char *cluster, const char *pkg, const char *more) {
        char *out, *err;
        int st = more ? CTL(&out, &err, "operator", "subscribe", cluster, pkg, more)
                      : CTL(&out, &err, "operator", "subscribe", cluster, pkg);
        cr_assert_eq(st, 0, "subscribe %s to %s: %s", cluster, pkg, err);
        free(out);
        free(err);
}

/* ---- help and usage errors --------------------------------------------------------- */

Test(operands_ctl, help_fits_and_usage_errors_stay_local) {
        static const char *const cmds[][2] = {
                { "operand", "apply" }, { "operand", "list" }, { "operand", "delete" },
                { "operator", "set" }, { "operator", "subscribe" }, { "operator", "uninstall" },
                { "operator", "unsubscribe" }, { "operator", "show" },
        };
        char *out, *err;
        tu_ctl_assert_help(&md, cmds, sizeof cmds / sizeof *cmds);
        cr_assert_eq(CTL(&out, NULL, "operator", "subscribe", "--help"), 0);
        cr_assert(strstr(out, "--cleanup"), "%s", out);
        free(out);
        cr_assert_eq(CTL(&out, NULL, "operator", "uninstall", "--help"), 0);
        cr_assert(strstr(out, "--prune") && strstr(out, "--cleanup") && strstr(out, "[cleanup] timeout"), "%s", out);
        free(out);
        cr_assert_eq(CTL(&out, NULL, "operand", "--help"), 0);
        cr_assert(strstr(out, "apply") && strstr(out, "list") && strstr(out, "delete"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);

        /* Each is refused before any request: exit 2 and the hint. */
        const char *etcd = manifest("etcd.yaml", etcd_yaml);
        static const struct {
                const char *args[6];
                const char *says;
        } bad[] = {
                { { "operand", "apply", "c1" }, "FILE is missing" },
                { { "operand", "apply" }, "CLUSTER is missing" },
                { { "operand", "apply", "c1", NULL /* the temp dir */ }, "is a directory" },
                { { "operand", "apply", "c1", "--bogus", NULL /* etcd.yaml */ }, "unknown option" },
                { { "operand", "list" }, "CLUSTER is missing" },
                { { "operand", "list", "c1", "extra" }, "unexpected argument" },
                { { "operand", "delete", "c1" }, "is missing" },
                { { "operand", "delete", "c1", "" }, "OPERAND is empty" },
                { { "operator", "set", "c1", "myapp" }, "--cleanup=true" },
                { { "operator", "set", "c1", "myapp", "--cleanup=maybe" }, "--cleanup takes true or false" },
                { { "operator", "set", "c1", "myapp", "--cleanup" }, "needs a value" },
                { { "operator", "set", "c1", "--cleanup=true" }, "is missing" },
                { { "operator", "subscribe", "c1", "myapp", "--cleanup=yes" }, "--cleanup takes true or false" },
                { { "operator", "uninstall", "c1" }, "CLUSTER and PKG is missing" },
                { { "operator", "uninstall", "c1", "" }, "PKG is empty" },
                { { "operator", "uninstall", "c1", "etcd", "--cleanup=maybe" }, "--cleanup takes true or false" },
                { { "operator", "uninstall", "c1", "etcd", "extra" }, "unexpected argument" },
                { { "operator", "unsubscribe", "c1", "etcd", "--bogus" }, "unknown option" },
                { { "operator", "show", "c1" }, "CLUSTER and PKG is missing" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                const char *a[6];
                memcpy(a, bad[i].args, sizeof a);
                if (i == 2)
                        a[3] = dir;
                if (i == 3)
                        a[4] = etcd;
                int st = CTL(&out, &err, a[0], a[1], a[2], a[3], a[4], a[5]);
                cr_assert_eq(st, 2, "case %zu (%s %s): exit %d: %s", i, a[0], a[1], st, err);
                cr_assert(strstr(err, bad[i].says) && strstr(err, "--help"), "case %zu: %s", i, err);
                cr_assert_str_eq(out, "", "case %zu", i);
                free(out);
                free(err);
        }
        /* Two files of the same base name, from two folders. */
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/again", dir);
        cr_assert_eq(tu_write_file(sub, "etcd.yaml", etcd_yaml), 0);
        snprintf(sub, sizeof sub, "%s/again/etcd.yaml", dir);
        cr_assert_eq(CTL(&out, &err, "operand", "apply", "c1", etcd, sub), 2);
        cr_assert(strstr(err, "same base name"), "%s", err);
        free(out);
        free(err);
        /* A file that is not there: a failure, not a usage error. */
        cr_assert_eq(CTL(&out, &err, "operand", "apply", "c1", "/nonexistent/etcd.yaml"), 1);
        cr_assert(strstr(err, "/nonexistent/etcd.yaml"), "%s", err);
        free(out);
        free(err);
        /* None of it reached musterd. */
        char *keys = operand_keys("c1");
        cr_assert_str_eq(keys, "");
        free(keys);
}

/* ---- apply, list, delete ------------------------------------------------------------- */

Test(operands_ctl, apply_list_refuse_and_delete) {
        char *out, *err, *keys;
        subscribe("c1", "myapp", NULL);

        /* Before anything is applied: no operands, the kinds it owns. */
        cr_assert_eq(CTL(&out, &err, "operand", "list", "c1"), 0, "%s", err);
        cr_assert(strstr(out, "cluster c1 has no operands"), "%s", out);
        cr_assert(strstr(out, "Owned kinds: ") && strstr(out, "EtcdCluster.etcd.database.coreos.com (etcd)") &&
                          strstr(out, "Database.db.example.com (dbop)") &&
                          strstr(out, "Prometheus.monitoring.coreos.com (prometheus)"),
                  "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);

        /* One document, as a table. */
        const char *etcd = manifest("etcd.yaml", etcd_yaml);
        cr_assert_eq(CTL(&out, &err, "operand", "apply", "c1", etcd), 0, "%s", err);
        cr_assert(strstr(out, "1 operand applied to cluster c1"), "%s", out);
        cr_assert(strstr(out, "KIND") && strstr(out, "NAMESPACE/NAME") && strstr(out, "PACKAGE"), "%s", out);
        cr_assert(strstr(out, "EtcdCluster") && strstr(out, "default/example") && strstr(out, "etcd"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);

        /* Two documents of one file and JSON of another, as -o json. */
        const char *two = manifest("db-and-prom.yaml", two_yaml);
        const char *prom = manifest("prom-team-a.json", prom_json);
        json_object *o = CTL_JSON("operand", "apply", "c1", two, prom);
        json_object *items = tu_json_get(o, "items");
        cr_assert_eq(json_object_array_length(items), 3, "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(tu_find_by(items, "kind", "Database"), "package"), "dbop");
        cr_assert_str_eq(tu_jstr(tu_find_by(items, "kind", "Database"), "file"), "db-and-prom.yaml");
        cr_assert_str_eq(tu_jstr(tu_find_by(items, "kind", "Prometheus"), "package"), "prometheus");
        json_object_put(o);

        keys = operand_keys("c1");
        cr_assert_eq(count_items(keys), 4, "%s", keys);
        cr_assert(has_item(keys, "managed:etcd:EtcdCluster:default/example"), "%s", keys);
        cr_assert(has_item(keys, "managed:dbop:Database:shop/orders"), "%s", keys);
        cr_assert(has_item(keys, "managed:prometheus:Prometheus:monitoring/k8s"), "%s", keys);
        cr_assert(has_item(keys, "managed:prometheus:Prometheus:team-a/k8s"), "%s", keys);
        free(keys);

        /* The table: the columns, fitting 80; wide adds id and group/version. */
        cr_assert_eq(CTL(&out, &err, "operand", "list", "c1"), 0, "%s", err);
        cr_assert(strstr(out, "SOURCE") && strstr(out, "KIND") && strstr(out, "managed") && strstr(out, "shop/orders"),
                  "%s", out);
        cr_assert(strstr(out, "\nOwned kinds: "), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "operand", "list", "c1", "-o", "wide"), 0, "%s", err);
        cr_assert(strstr(out, "GROUP/VERSION") && strstr(out, "db.example.com/v1") && strstr(out, "ID"), "%s", out);
        free(out);
        free(err);

        /* A kind no installed operator owns: 400, its reason, nothing stored
         * (not even the EtcdCluster of the same file). */
        const char *widget = manifest("widget.yaml", widget_yaml);
        cr_assert_eq(CTL(&out, &err, "operand", "apply", "c1", widget), 1);
        cr_assert(strstr(err, "Widget") && strstr(err, "(HTTP 400)"), "%s", err);
        cr_assert_str_eq(out, "");
        free(out);
        free(err);
        keys = operand_keys("c1");
        cr_assert_eq(count_items(keys), 4, "nothing stored: %s", keys);
        cr_assert_not(strstr(keys, "second"), "%s", keys);
        free(keys);

        /* Delete by KIND/NAME. */
        cr_assert_eq(CTL(&out, &err, "operand", "delete", "c1", "EtcdCluster/example"), 0, "%s", err);
        cr_assert(strstr(out, "operand EtcdCluster default/example deleted from cluster c1"), "%s", out);
        free(out);
        free(err);
        keys = operand_keys("c1");
        cr_assert_eq(count_items(keys), 3, "%s", keys);
        cr_assert_not(strstr(keys, "EtcdCluster"), "%s", keys);
        free(keys);

        /* KIND/NAME matching two: refused, both named; KIND/NAMESPACE/NAME
         * (the kind in any case) picks one. */
        cr_assert_eq(CTL(&out, &err, "operand", "delete", "c1", "Prometheus/k8s"), 1);
        cr_assert(strstr(err, "matches 2 operands") && strstr(err, "monitoring/k8s") && strstr(err, "team-a/k8s"),
                  "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "operand", "delete", "c1", "prometheus/team-a/k8s"), 0, "%s", err);
        cr_assert(strstr(out, "operand Prometheus team-a/k8s deleted"), "%s", out);
        free(out);
        free(err);

        /* By id, from the list. */
        o = CTL_JSON("operand", "list", "c1");
        const char *id = tu_jstr(tu_find_by(tu_json_get(o, "items"), "kind", "Database"), "id");
        cr_assert_not_null(id, "%s", json_object_to_json_string(o));
        cr_assert_eq(CTL(&out, &err, "operand", "delete", "c1", id), 0, "%s", err);
        cr_assert(strstr(out, "operand Database shop/orders deleted from cluster c1"), "%s", out);
        free(out);
        free(err);
        json_object_put(o);
        keys = operand_keys("c1");
        cr_assert_str_eq(keys, "managed:prometheus:Prometheus:monitoring/k8s");
        free(keys);

        /* What is not there: exit 3 (not found), said so. */
        static const char *const unknown[] = { "Database/orders", "EtcdCluster/default/example", "Widget/w1",
                                               "7c0ffee0-0000-4000-8000-00000000dead" };
        for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
                cr_assert_eq(CTL(&out, &err, "operand", "delete", "c1", unknown[i]), 3, "%s", unknown[i]);
                cr_assert(strstr(err, "no operand of cluster c1 matches"), "%s: %s", unknown[i], err);
                cr_assert_str_eq(out, "");
                free(out);
                free(err);
        }
        /* An unknown cluster. */
        cr_assert_eq(CTL(&out, &err, "operand", "list", "nosuch"), 3);
        cr_assert(strstr(err, "nosuch"), "%s", err);
        free(out);
        free(err);
        /* By the start of an id, as tables cut them. */
        o = CTL_JSON("operand", "list", "c1");
        char prefix[9];
        snprintf(prefix, sizeof prefix, "%s", tu_jstr(o, "items.0.id") ?: "");
        json_object_put(o);
        cr_assert_eq(strlen(prefix), 8);
        cr_assert_eq(CTL(&out, &err, "operand", "delete", "c1", prefix), 0, "%s", err);
        cr_assert(strstr(out, "operand Prometheus monitoring/k8s deleted"), "%s", out);
        free(out);
        free(err);
        keys = operand_keys("c1");
        cr_assert_str_eq(keys, "");
        free(keys);
}

Test(operands_ctl, nothing_owned_before_a_subscription) {
        char *out, *err;
        const char *etcd = manifest("etcd.yaml", etcd_yaml);
        cr_assert_eq(CTL(&out, &err, "operand", "apply", "c1", etcd), 1);
        cr_assert(strstr(err, "EtcdCluster") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "operand", "list", "c1"), 0, "%s", err);
        cr_assert(strstr(out, "cluster c1 has no operands") && strstr(out, "Owned kinds: none"), "%s", out);
        free(out);
        free(err);
}

/* ---- the cleanup setting ---------------------------------------------------------------- */

Test(operands_ctl, cleanup_set_at_subscribe_and_after) {
        char *out, *err, *v;
        subscribe("c1", "prometheus", "--cleanup");
        subscribe("c1", "etcd", "--cleanup=false");
        json_object *o = CTL_JSON("cluster", "create", "c2");
        json_object_put(o);
        subscribe("c2", "etcd", "--cleanup=true");
        subscribe("c2", "prometheus", NULL);

        cr_assert_str_eq((v = cleanup_of("c1", "prometheus")), "true");
        free(v);
        cr_assert_str_eq((v = cleanup_of("c1", "etcd")), "false");
        free(v);
        cr_assert_str_eq((v = cleanup_of("c2", "etcd")), "true");
        free(v);
        cr_assert_str_eq((v = cleanup_of("c2", "prometheus")), "false", "off by default");
        free(v);

        /* The table shows it, within 80 columns. */
        cr_assert_eq(CTL(&out, &err, "operator", "list", "c1"), 0, "%s", err);
        cr_assert(strstr(out, "CLEANUP"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);

        /* set, both ways, and read back. */
        cr_assert_eq(CTL(&out, &err, "operator", "set", "c1", "prometheus", "--cleanup=false"), 0, "%s", err);
        cr_assert(strstr(out, "cleanup disabled"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);
        cr_assert_str_eq((v = cleanup_of("c1", "prometheus")), "false");
        free(v);
        cr_assert_eq(CTL(&out, &err, "operator", "set", "c1", "etcd", "--cleanup", "true"), 0, "%s", err);
        cr_assert(strstr(out, "cleanup enabled"), "%s", out);
        free(out);
        free(err);
        cr_assert_str_eq((v = cleanup_of("c1", "etcd")), "true");
        free(v);
        o = CTL_JSON("operator", "set", "c2", "prometheus", "--cleanup=true");
        cr_assert_str_eq(tu_jstr(o, "package"), "prometheus", "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "cleanup.enabled"), "true");
        json_object_put(o);
        cr_assert_str_eq((v = cleanup_of("c2", "prometheus")), "true");
        free(v);
        /* The other cluster's subscriptions are untouched. */
        cr_assert_str_eq((v = cleanup_of("c2", "etcd")), "true");
        free(v);

        /* A package the cluster is not subscribed to: 404. */
        cr_assert_eq(CTL(&out, &err, "operator", "set", "c1", "dbop", "--cleanup=true"), 3);
        cr_assert(strstr(err, "(HTTP 404)"), "%s", err);
        free(out);
        free(err);
}

/* ---- uninstall and show ---------------------------------------------------------------------- */

/* cmd's exit status is `want`; what it printed on stdout has every one of
 * the `says` (NULL-terminated), and stderr too when it fails. stdout is
 * returned (malloc'd). */
static char *ctl_says(int st, int want, char *out, char *err, const char *const *says) {
        cr_assert_eq(st, want, "exit %d: %s%s", st, out, err);
        for (const char *const *s = says; *s; s++)
                cr_assert(strstr(want ? err : out, *s), "wants \"%s\": %s%s", *s, out, err);
        free(err);
        return out;
}
#define CTL_SAYS(want, says, ...)                                                                                     \
        ({                                                                                                            \
                char *o_, *e_;                                                                                        \
                int st_ = CTL(&o_, &e_, __VA_ARGS__);                                                                 \
                ctl_says(st_, want, o_, e_, (const char *const[]) { says, NULL });                                   \
        })

/* On a cluster not installed, cleanup deletes the managed operands of the
 * kinds the package owns at once, and the operator goes with them. */
Test(operands_ctl, uninstall_with_cleanup_deletes_operands) {
        subscribe("c1", "etcd", "--cleanup");
        subscribe("c1", "prometheus", "--cleanup");
        json_object *o = CTL_JSON("operand", "apply", "c1", manifest("etcd.yaml", etcd_yaml),
                                  manifest("prom-team-a.json", prom_json));
        json_object_put(o);

        char *out = CTL_SAYS(0, "cluster c1 unsubscribed from etcd\n", "operator", "uninstall", "c1", "etcd");
        cr_assert(strstr(out, "\n1 operand(s) of etcd deleted\n"), "%s", out);
        cr_assert(strstr(out, "No new payload revision"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        char *keys = operand_keys("c1");
        cr_assert_str_eq(keys, "managed:prometheus:Prometheus:team-a/k8s");
        free(keys);

        /* -o json: the server's answer, through the alias. */
        o = CTL_JSON("operator", "unsubscribe", "c1", "prometheus");
        cr_assert_str_eq(tu_jstr(o, "operands_deleted"), "1", "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "plan.ok"), "true", "%s", json_object_to_json_string(o));
        json_object_put(o);
        keys = operand_keys("c1");
        cr_assert_str_eq(keys, "");
        free(keys);
        out = CTL_SAYS(0, "cluster c1 is subscribed to no operators", "operator", "list", "c1");
        free(out);
}

/* --cleanup=false on the uninstall itself turns it off first: the
 * operands stay; without operands to delete nothing is said of them. */
Test(operands_ctl, uninstall_without_cleanup_keeps_operands) {
        subscribe("c1", "etcd", "--cleanup");
        subscribe("c1", "prometheus", "--cleanup");
        json_object *o = CTL_JSON("operand", "apply", "c1", manifest("etcd.yaml", etcd_yaml));
        json_object_put(o);

        char *out = CTL_SAYS(0, "cluster c1 unsubscribed from etcd\n", "operator", "uninstall", "c1", "etcd",
                             "--cleanup=false");
        cr_assert_not(strstr(out, "operand(s)"), "%s", out);
        free(out);
        char *keys = operand_keys("c1");
        cr_assert(has_item(keys, "managed:etcd:EtcdCluster:default/example"), "%s", keys);
        free(keys);
        out = CTL_SAYS(0, "cluster c1 unsubscribed from prometheus\n", "operator", "uninstall", "c1", "prometheus");
        cr_assert_not(strstr(out, "operand(s)"), "nothing of prometheus to delete: %s", out);
        free(out);
}

Test(operands_ctl, uninstall_unknown_package_fails) {
        subscribe("c1", "etcd", NULL);
        char *out = CTL_SAYS(3, "cluster c1 is not subscribed to dbop", "operator", "uninstall", "c1", "dbop");
        cr_assert_str_eq(out, "");
        free(out);
        /* With --cleanup the PATCH before it fails the same way (404). */
        out = CTL_SAYS(3, "(HTTP 404)", "operator", "uninstall", "c1", "dbop", "--cleanup");
        free(out);
        out = CTL_SAYS(3, "nosuch", "operator", "uninstall", "nosuch", "etcd");
        free(out);
        char *v = cleanup_of("c1", "etcd");
        cr_assert_str_eq(v, "false", "untouched");
        free(v);
}

Test(operands_ctl, show_one_subscription) {
        subscribe("c1", "etcd", "--cleanup");
        subscribe("c1", "myapp", NULL);

        char *out = CTL_SAYS(0, "package: etcd\n", "operator", "show", "c1", "etcd");
        cr_assert(strstr(out, "\nchannel: ") && strstr(out, "\nphase: ") && strstr(out, "\ncleanup: enabled\n"), "%s",
                  out);
        cr_assert(strstr(out, "PACKAGE") && strstr(out, "VERSION"), "the bundles: %s", out);
        cr_assert_not(strstr(out, "pending deletion"), "no uninstall under way: %s", out);
        tu_assert_fits(out, NULL);
        free(out);
        out = CTL_SAYS(0, "package: myapp\n", "operator", "show", "c1", "myapp");
        cr_assert(strstr(out, "\ncleanup: disabled\n") && strstr(out, "dbop"), "%s", out);
        free(out);

        json_object *o = CTL_JSON("operator", "show", "c1", "etcd");
        cr_assert_str_eq(tu_jstr(o, "package"), "etcd", "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "cleanup.enabled"), "true", "%s", json_object_to_json_string(o));
        cr_assert_not_null(tu_jstr(o, "phase"), "%s", json_object_to_json_string(o));
        cr_assert_null(tu_json_get(o, "items"), "the subscription alone: %s", json_object_to_json_string(o));
        json_object_put(o);

        out = CTL_SAYS(3, "musterctl: cluster c1 has no subscription to dbop", "operator", "show", "c1", "dbop");
        cr_assert_str_eq(out, "");
        free(out);
        out = CTL_SAYS(3, "nosuch", "operator", "show", "nosuch", "etcd");
        free(out);
}

/* subscribe and set say what cleanup does now. */
Test(operands_ctl, cleanup_texts_say_what_uninstall_does) {
        char *out = CTL_SAYS(0, "Cleanup is enabled: operator uninstall deletes etcd's operands", "operator",
                             "subscribe", "c1", "etcd", "--cleanup");
        cr_assert_not(strstr(out, "not built"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        out = CTL_SAYS(0, "cleanup disabled", "operator", "set", "c1", "etcd", "--cleanup=false");
        cr_assert(strstr(out, "operator uninstall keeps etcd's operands"), "%s", out);
        free(out);
        out = CTL_SAYS(0, "cleanup enabled", "operator", "set", "c1", "etcd", "--cleanup=true");
        cr_assert(strstr(out, "once every host has reported them gone"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
}
