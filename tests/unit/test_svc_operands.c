/* Operands through the services (issue 17), without a socket: a struct svc
 * over a real SQLite file and the fixture catalogs. A cluster subscribed to
 * myapp owns EtcdCluster (etcd), Database (dbop) and Prometheus
 * (prometheus); applying those is kept, a kind nobody owns is refused with
 * nothing stored; what the node agents found is listed once per object with
 * every host that reported it, only for owned kinds; the payload's part
 * names each operand after its operator; delete; the cleanup setting. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "svc/catalogs.h"
#include "crypto.h"
#include "json-cleanup.h"
#include "svc/payload_operands.h"
#include "svc/operands.h"
#include "svc/operators.h"
#include "svc/uninstall.h"
#include "svc/payload_uninstalls.h"
#include "store/store.h"
#include "storeutil.h"
#include "svc/svc.h"
#include "testutil.h"

static char *dir, *cl;
static struct store *st;
static struct crypto_key *key;
static struct svc sv;
static struct muster_config cfg;

static void setup(void) {
        config_defaults(&cfg);
        tu_svc_open(&sv, &st, &key, &cfg, &dir);
        tu_svc_add_fixture_catalog(&sv, "community", 10);
        tu_svc_add_fixture_catalog(&sv, "redhat", 0);
        cl = tu_store_cluster(st, "alice", "c1");
        struct op_subscribe in = { .package = "myapp", .cleanup = true };
        json_object *o = NULL;
        char err[1024];
        cr_assert_eq(svc_operators_subscribe(&sv, cl, &in, "alice", &o, err, sizeof err), 0, "%s", err);
        cr_assert(json_object_get_boolean(tu_json_get(o, "cleanup.enabled")), "%s", json_object_to_json_string(o));
        json_object_put(o);
}

static void teardown(void) {
        free(cl);
        tu_svc_close(&sv, st, key, dir);
}

TestSuite(svc_operands, .init = setup, .fini = teardown);

static const char etcd_yaml[] = "apiVersion: etcd.database.coreos.com/v1beta2\nkind: EtcdCluster\nmetadata:\n"
                                "  name: main\n  namespace: db\nspec:\n  size: 3\n";
static const char two_yaml[] = "apiVersion: db.example.com/v1\nkind: Database\nmetadata:\n  name: orders\n"
                               "  namespace: db\n---\napiVersion: monitoring.coreos.com/v1\nkind: Prometheus\n"
                               "metadata:\n  name: k8s\n  namespace: mon\n";

static int apply(const char *path, const char *text, json_object **out, char *err) {
        struct catalog_file f = { path, text, strlen(text) };
        return svc_operands_apply(&sv, cl, &f, 1, "alice", out, err, 1024);
}

static json_object *list(void) {
        json_object *o = NULL;
        char err[1024];
        cr_assert_eq(svc_operands_list(&sv, cl, &o, err, sizeof err), 0, "%s", err);
        return o;
}

Test(svc_operands, owned_kinds_apply_and_the_rest_is_refused) {
        char err[1024];
        json_object *o = NULL;
        cr_assert_eq(apply("etcd.yaml", etcd_yaml, &o, err), 0, "%s", err);
        tu_assert_join(tu_json_get(o, "items"), "package", "etcd");
        json_object_put(o);
        cr_assert_eq(apply("two.yaml", two_yaml, &o, err), 0, "%s", err);
        tu_assert_join(tu_json_get(o, "items"), "kind", "Database,Prometheus");
        tu_assert_join(tu_json_get(o, "items"), "package", "dbop,prometheus");
        json_object_put(o);
        /* One unowned document refuses the whole file. */
        char mixed[1024];
        snprintf(mixed, sizeof mixed, "%s---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
                 etcd_yaml);
        cr_assert_eq(apply("mixed.yaml", mixed, &o, err), -EINVAL);
        cr_expect_str_eq(err, "mixed.yaml: kind Widget (example.com) is owned by no operator installed on cluster c1");
        cr_assert_eq(apply("bad.yaml", "kind: [", &o, err), -EINVAL);
        cr_expect(strstr(err, "bad.yaml"), "%s", err);
        struct catalog_file sneaky = { "../x.yaml", etcd_yaml, strlen(etcd_yaml) };
        cr_expect_eq(svc_operands_apply(&sv, cl, &sneaky, 1, "alice", &o, err, sizeof err), -EINVAL);
        cr_expect(strstr(err, "not a plain file name"), "%s", err);
        json_object *l = list();
        tu_assert_join(tu_json_get(l, "items"), "kind", "EtcdCluster,Database,Prometheus");
        tu_assert_join(tu_json_get(l, "items"), "source", "managed,managed,managed");
        char *owned = tu_join(tu_json_get(l, "owned_kinds"), "kind");
        cr_expect(strstr(owned, "EtcdCluster") && strstr(owned, "Database") && strstr(owned, "Prometheus"), "%s", owned);
        free(owned);
        json_object_put(l);
        /* Applied again: the same operand, not a second one. */
        cr_assert_eq(apply("etcd.yaml", etcd_yaml, &o, err), 0, "%s", err);
        json_object_put(o);
        l = list();
        cr_expect_eq(json_object_array_length(tu_json_get(l, "items")), 3);
        /* Delete by id. */
        const char *id = tu_jstr(l, "items.0.id");
        cr_assert_eq(svc_operand_delete(&sv, cl, id, "alice", err, sizeof err), 0, "%s", err);
        cr_expect_eq(svc_operand_delete(&sv, cl, id, "alice", err, sizeof err), -ENOENT);
        json_object_put(l);
        l = list();
        tu_assert_join(tu_json_get(l, "items"), "kind", "Database,Prometheus");
        json_object_put(l);
}

Test(svc_operands, found_on_hosts_once_per_object_owned_kinds_only) {
        char *ie = tu_store_infra_env(st, "alice", "rack");
        const char *h1 = "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a", *h2 = "1b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a";
        const char *hs[] = { h1, h2 };
        for (int i = 0; i < 2; i++) {
                cr_assert_eq(tu_store_host_register(st, ie, hs[i], "0.1", NULL), 1);
                cr_assert_eq(store_host_bind(st, ie, hs[i], cl, HOST_DISCOVERING, "bound", 0), 0);
        }
        const char *db = "{\"file\":\"legacy.yaml\",\"group\":\"db.example.com\",\"version\":\"v1\",\"kind\":\"Database\","
                         "\"namespace\":\"db\",\"name\":\"legacy\"}";
        char f1[1024], f2[1024];
        snprintf(f1, sizeof f1, "[%s,{\"file\":\"cm.yaml\",\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\","
                                "\"name\":\"x\"},{\"file\":\"junk.yaml\",\"kind\":null,\"error\":\"not YAML\"}]", db);
        snprintf(f2, sizeof f2, "[%s]", db);
        cr_assert_eq(store_host_found_set(st, ie, h1, f1), 0);
        cr_assert_eq(store_host_found_set(st, ie, h2, f2), 0);
        json_object *l = list();
        json_object *items = tu_json_get(l, "items");
        cr_assert_eq(json_object_array_length(items), 1, "%s", json_object_to_json_string(l));
        cr_expect_str_eq(tu_jstr(items, "0.source"), "found");
        cr_expect_str_eq(tu_jstr(items, "0.package"), "dbop");
        cr_expect_str_eq(tu_jstr(items, "0.name"), "legacy");
        cr_expect_str_eq(tu_jstr(items, "0.file"), "legacy.yaml");
        char *hosts = tu_join(tu_json_get(items, "0.hosts"), NULL), want[128];
        snprintf(want, sizeof want, "%s,%s", h1, h2);
        cr_expect_str_eq(hosts, want);
        free(hosts);
        json_object_put(l);
        free(ie);
}

Test(svc_operands, the_payload_part_names_each_after_its_operator) {
        char err[1024];
        json_object *o = NULL;
        cr_assert_eq(apply("etcd.yaml", etcd_yaml, &o, err), 0, "%s", err);
        json_object_put(o);
        cr_assert_eq(apply("two.yaml", two_yaml, &o, err), 0, "%s", err);
        json_object_put(o);
        struct cluster c;
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        struct manifest_list ms = { 0 };
        cr_assert_eq(operands_manifests(&sv, &c, NULL, &ms, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ms.n, 3);
        cr_expect_str_eq(ms.v[0].path, "9001_operands_999_etcd_EtcdCluster_db_main.yaml");
        cr_expect_str_eq(ms.v[1].path, "9001_operands_999_dbop_Database_db_orders.yaml");
        cr_expect_str_eq(ms.v[2].path, "9001_operands_999_prometheus_Prometheus_mon_k8s.yaml");
        cr_expect_str_eq(ms.v[0].content, etcd_yaml, "the bytes as applied");
        manifest_list_free(&ms);
        cluster_free(&c);
}

Test(svc_operands, cleanup_setting) {
        char err[1024];
        json_object *o = NULL;
        cr_assert_eq(svc_operators_set_cleanup(&sv, cl, "myapp", false, "alice", &o, err, sizeof err), 0, "%s", err);
        cr_expect_not(json_object_get_boolean(tu_json_get(o, "cleanup.enabled")));
        json_object_put(o);
        cr_assert_eq(svc_operators_set_cleanup(&sv, cl, "myapp", true, "alice", &o, err, sizeof err), 0, "%s", err);
        cr_expect(json_object_get_boolean(tu_json_get(o, "cleanup.enabled")));
        json_object_put(o);
        cr_expect_eq(svc_operators_set_cleanup(&sv, cl, "etcd", true, "alice", &o, err, sizeof err), -ENOENT);
        cr_expect_str_eq(err, "cluster c1 has no subscription to etcd");
}

/* Uninstall (issue 17) on a cluster not installed: no host holds anything,
 * so with cleanup the managed operands of the package's kinds just leave
 * the store and the operator goes at once; without cleanup they stay; a
 * package another one still needs stays as a dependency, with its
 * operands. */
Test(svc_operands, uninstall_on_a_cluster_not_installed) {
        char err[1024];
        json_object *o = NULL;
        struct operand_record_list l;
        char *c2 = tu_store_cluster(st, "alice", "c2");
        struct op_subscribe in = { .package = "etcd", .cleanup = true };
        cr_assert_eq(svc_operators_subscribe(&sv, c2, &in, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);
        struct catalog_file f = { "etcd.yaml", etcd_yaml, strlen(etcd_yaml) };
        cr_assert_eq(svc_operands_apply(&sv, c2, &f, 1, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);

        cr_assert_eq(svc_operators_unsubscribe(&sv, c2, "etcd", false, "alice", &o, err, sizeof err), 0, "%s", err);
        cr_expect_eq(json_object_get_int64(tu_json_get(o, "operands_deleted")), 1, "%s", json_object_to_json_string(o));
        json_object_put(o);
        cr_assert_eq(store_operand_list(st, c2, &l), 0);
        cr_expect_eq(l.n, 0, "the managed operand went with it");
        operand_record_list_free(&l);
        cr_expect_eq(svc_operators_unsubscribe(&sv, c2, "etcd", false, "alice", &o, err, sizeof err), -ENOENT);

        /* Without cleanup: the operand stays. */
        in.cleanup = false;
        cr_assert_eq(svc_operators_subscribe(&sv, c2, &in, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);
        cr_assert_eq(svc_operands_apply(&sv, c2, &f, 1, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);
        cr_assert_eq(svc_operators_unsubscribe(&sv, c2, "etcd", false, "alice", &o, err, sizeof err), 0, "%s", err);
        cr_expect_null(tu_json_get(o, "operands_deleted"));
        json_object_put(o);
        cr_assert_eq(store_operand_list(st, c2, &l), 0);
        cr_expect_eq(l.n, 1, "kept");
        operand_record_list_free(&l);

        /* c1 is subscribed to myapp, which needs etcd through dbop: etcd's
         * own subscription goes, its bundle and operands stay. */
        in.cleanup = true;
        cr_assert_eq(svc_operators_subscribe(&sv, cl, &in, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);
        cr_assert_eq(apply("etcd.yaml", etcd_yaml, &o, err), 0, "%s", err);
        json_object_put(o);
        cr_assert_eq(svc_operators_unsubscribe(&sv, cl, "etcd", false, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);
        cr_assert_eq(store_operand_list(st, cl, &l), 0);
        cr_expect_eq(l.n, 1, "a dependency still: its operand stays");
        operand_record_list_free(&l);
        free(c2);
}

/* The payload's deletions: every operand still pending in an uninstall
 * that waits, none for one aborted or done, nothing for a text that is not
 * an uninstall. */
Test(svc_operands, deletions_of_the_uninstalls_under_way) {
        static const struct cleanup_operand ops[] = {
                { "vault.example.com", "Vault", "sec", "a", true },
                { "vault.example.com", "VaultSnapshot", NULL, "daily", false },
        };
        struct uninstall u = { .prune = false };
        cr_assert_eq(cleanup_start(&u.st, true, ops, 2, 100), 0);
        u.by = strdup("alice");
        char *waiting = uninstall_format(&u);
        cr_assert_not_null(waiting);
        struct uninstall back;
        cr_assert_eq(uninstall_parse(waiting, &back), 0);
        cr_expect_str_eq(back.by, "alice");
        cr_expect_eq(back.st.n, 2);
        uninstall_free(&back);
        cr_assert_eq(cleanup_abort(&u.st), 1);
        char *aborted = uninstall_format(&u);
        uninstall_free(&u);
        struct subscription_record subs[] = { { .package = "a", .uninstall = aborted }, { .package = "b" },
                                             { .package = "c", .uninstall = (char *) "[]" },
                                             { .package = "d", .uninstall = waiting } };
        struct subscription_record_list l = { subs, 4 };
        json_object *d = NULL;
        cr_assert_eq(uninstall_deletions(&l, &d), 0);
        cr_assert_not_null(d);
        cr_expect_str_eq(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN),
                         "[{\"group\":\"vault.example.com\",\"kind\":\"Vault\",\"namespace\":\"sec\",\"name\":\"a\"},"
                         "{\"group\":\"vault.example.com\",\"kind\":\"VaultSnapshot\",\"name\":\"daily\"}]");
        json_object_put(d);
        l.n = 3;
        cr_assert_eq(uninstall_deletions(&l, &d), 0);
        cr_expect_null(d, "nothing waits");
        free(waiting);
        free(aborted);
}
