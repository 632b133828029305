/* The SQLite back-end on its file, what store.h does not show: the file's
 * mode, WAL and the schema_version table, migrations from the schemas older
 * musters left, a newer schema refused, and store_open's choice of back-end
 * by the URL. The back-end independent suite is test_store.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "storeutil.h"
#include "testutil.h"

static char *dir;
static char path[4096];
static struct store *st;

static void setup(void) {
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        snprintf(path, sizeof path, "%s/muster.db", dir);
        cr_assert_eq(store_open(path, &st), 0);
}

static void teardown(void) {
        store_close(st);
        st = NULL;
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(store_sqlite, .init = setup, .fini = teardown);

/* ---- helpers ----------------------------------------------------------- */

static char *mk_infra_env(const char *owner, const char *name) {
        return tu_store_infra_env(st, owner, name);
}

static char *mk_cluster(const char *owner, const char *name) {
        return tu_store_cluster(st, owner, name);
}

static void mk_release(const char *version, struct release_info *info, struct manifest_list *ms) {
        tu_store_release(version, info, ms);
}

static void mk_token(const char *id, const char *role, const char *owner) {
        tu_store_token(st, id, role, owner);
}

/* ---- open, migrations --------------------------------------------------- */

#define SCHEMA 15

/* Undo migration 14 (what a version-13 muster left): no static network
 * configs. */
/* Undo migration 15 (what a version-14 muster left): no pending actions, no logs. */
static void downgrade_to_14(sqlite3 *db) {
        cr_assert_eq(sqlite3_exec(db, "DROP TABLE host_logs; ALTER TABLE hosts DROP COLUMN pending_actions;"
                                      "UPDATE schema_version SET version = 14", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

static void downgrade_to_13(sqlite3 *db) {
        downgrade_to_14(db);
        cr_assert_eq(sqlite3_exec(db, "ALTER TABLE infra_envs DROP COLUMN static_network;"
                                      "UPDATE schema_version SET version = 13", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 14 and 13 (what a version-12 muster left): the inventory
 * back in the host's row, no host counts. */
static void downgrade_to_12(sqlite3 *db) {
        downgrade_to_13(db);
        cr_assert_eq(sqlite3_exec(db, "ALTER TABLE hosts ADD COLUMN inventory TEXT;"
                                      "UPDATE hosts SET inventory = "
                                      "  (SELECT inventory FROM host_inventories WHERE host_seq = hosts.seq);"
                                      "DROP TABLE host_inventories; DROP TABLE host_names;"
                                      "DROP TRIGGER hosts_name_insert; DROP TRIGGER hosts_name_update;"
                                      "DROP TRIGGER hosts_count_insert; DROP TRIGGER hosts_count_delete;"
                                      "ALTER TABLE infra_envs DROP COLUMN host_count;"
                                      "UPDATE schema_version SET version = 12", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 13 and 12 (what a version-11 muster left). */
static void downgrade_to_11(sqlite3 *db) {
        downgrade_to_12(db);
        cr_assert_eq(sqlite3_exec(db, "ALTER TABLE subscriptions DROP COLUMN uninstall;"
                                      "UPDATE schema_version SET version = 11", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 12 and 11 (what a version-10 muster left). */
static void downgrade_to_10(sqlite3 *db) {
        downgrade_to_11(db);
        cr_assert_eq(sqlite3_exec(db, "DROP TABLE operands; ALTER TABLE subscriptions DROP COLUMN cleanup;"
                                      "UPDATE schema_version SET version = 10", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 11 and 10 (what a version-9 muster left). */
static void downgrade_to_9(sqlite3 *db) {
        downgrade_to_10(db);
        cr_assert_eq(sqlite3_exec(db, "DROP TABLE host_found; DROP TABLE addon_releases; DROP TABLE addon_proxies;"
                                      "UPDATE schema_version SET version = 9", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 10 and 9 (what a version-8 muster left). */
static void downgrade_to_8(sqlite3 *db) {
        downgrade_to_9(db);
        cr_assert_eq(sqlite3_exec(db, "DROP TABLE subscriptions; UPDATE schema_version SET version = 8", NULL, NULL,
                                  NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 9 and 8 (what a version-7 muster left). */
static void downgrade_to_7(sqlite3 *db) {
        downgrade_to_8(db);
        cr_assert_eq(sqlite3_exec(db, "DROP TABLE catalogs; UPDATE schema_version SET version = 7", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 8 and 7 (what a version-6 muster left). */
static void downgrade_to_6(sqlite3 *db) {
        downgrade_to_7(db);
        cr_assert_eq(sqlite3_exec(db, "ALTER TABLE hosts DROP COLUMN stop_pending;"
                                      "UPDATE schema_version SET version = 6", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 7 and 6 (what a version-5 muster left). */
static void downgrade_to_5(sqlite3 *db) {
        downgrade_to_6(db);
        cr_assert_eq(sqlite3_exec(db, "ALTER TABLE hosts DROP COLUMN token_generation;"
                                      "UPDATE schema_version SET version = 5", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 6 and 5 (what a version-4 muster left). */
static void downgrade_to_4(sqlite3 *db) {
        downgrade_to_5(db);
        cr_assert_eq(sqlite3_exec(db, "ALTER TABLE clusters DROP COLUMN cpu_architecture;"
                                      "UPDATE schema_version SET version = 4", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 5 and 4 (what a version-3 muster left). */
static void downgrade_to_3(sqlite3 *db) {
        downgrade_to_4(db);
        cr_assert_eq(sqlite3_exec(db, "DROP TABLE tokens; UPDATE schema_version SET version = 3", NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Undo migrations 4 and 3 on an open database file (what a version-2 muster left). */
static void downgrade_to_2(sqlite3 *db) {
        downgrade_to_3(db);
        cr_assert_eq(sqlite3_exec(db,
                                  "DROP TABLE payload_revisions; DROP TABLE release_manifests; DROP TABLE releases;"
                                  "DROP INDEX clusters_release;"
                                  "ALTER TABLE clusters DROP COLUMN capabilities_spec_json;"
                                  "ALTER TABLE clusters DROP COLUMN capabilities_status_json;"
                                  "ALTER TABLE clusters DROP COLUMN conditions_json;"
                                  "ALTER TABLE clusters DROP COLUMN payload_revision;"
                                  "ALTER TABLE clusters DROP COLUMN feature_set;"
                                  "ALTER TABLE hosts DROP COLUMN applied_revision;"
                                  "UPDATE schema_version SET version = 2",
                                  NULL, NULL, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(db));
}

/* Close the store, undo migrations with `down` on the file as an older
 * muster would have left it, and open it again: migrated to SCHEMA. */
static void reopen_after(void (*down)(sqlite3 *db)) {
        store_close(st);
        st = NULL;
        sqlite3 *db;
        cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
        down(db);
        sqlite3_close(db);
        cr_assert_eq(store_open(path, &st), 0);
        cr_assert_eq(store_schema_version(st), SCHEMA);
}

Test(store_sqlite, fresh_database_gets_current_schema) {
        cr_assert_eq(store_schema_version(st), SCHEMA);
        struct stat sb;
        cr_assert_eq(stat(path, &sb), 0);
        cr_assert_eq(sb.st_mode & 0777, 0600, "pull secrets live there");

        sqlite3 *db;
        sqlite3_stmt *q;
        cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
        cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
        cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
        cr_assert_str_eq((const char *) sqlite3_column_text(q, 0), "wal");
        sqlite3_finalize(q);
        cr_assert_eq(sqlite3_prepare_v2(db, "SELECT count(*), max(version) FROM schema_version", -1, &q, NULL),
                     SQLITE_OK);
        cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
        cr_assert_eq(sqlite3_column_int(q, 0), 1);
        cr_assert_eq(sqlite3_column_int(q, 1), SCHEMA);
        sqlite3_finalize(q);
        sqlite3_close(db);

        /* Reopening migrates nothing and keeps data. */
        char *ie = mk_infra_env("admin", "keep");
        store_close(st);
        cr_assert_eq(store_open(path, &st), 0);
        cr_assert_eq(store_schema_version(st), SCHEMA);
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, ie, &got), 0);
        infra_env_free(&got);
        free(ie);
}

static int64_t count_rows(const char *sql) {
        sqlite3 *db;
        sqlite3_stmt *q;
        cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
        cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
        int64_t n = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
        sqlite3_close(db);
        return n;
}

#define H(n) "5d1e0c2a-0000-4000-8000-00000000000" #n

/* A version-12 database (inventories in the host rows, no host counts) is
 * migrated: the inventories move to their own table unchanged, and each
 * infra-env's count of hosts starts from the hosts it holds, so that
 * [infraenv] max_hosts holds across the upgrade; deletes (of a host, of an
 * infra-env) keep counts and inventories right. */
/* A version-13 database (no static network configs) is migrated: its
 * infra-envs are there, with none, and take one after. */
/* Schema 15: a host's pending actions and its logs, the newest kept. */
Test(store_sqlite, version_14_database_is_migrated) {
        char *a = mk_infra_env("admin", "a");
        cr_assert_eq(tu_store_host_register(st, a, H(1), "1", NULL), 1);
        reopen_after(downgrade_to_14);
        struct host h;
        cr_assert_eq(store_host_get(st, a, H(1), &h), 0);
        cr_assert_eq(h.pending_actions, 0u);
        host_free(&h);
        cr_assert_eq(store_host_actions(st, a, H(1), HOST_ACTION_GATHER_LOGS | HOST_ACTION_RECLAIM, 0, 0, 0), 0);
        cr_assert_eq(store_host_actions(st, a, H(1), HOST_ACTION_RECLAIM_WIPE, HOST_ACTION_RECLAIM, 0, 0), 0);
        cr_assert_eq(store_host_get_brief(st, a, H(1), &h), 0);
        cr_assert_eq(h.pending_actions, HOST_ACTION_GATHER_LOGS | HOST_ACTION_RECLAIM_WIPE, "set, then cleared: %u",
                     h.pending_actions);
        host_free(&h);
        cr_assert_eq(store_host_actions(st, a, H(2), HOST_ACTION_GATHER_LOGS, 0, 0, 0), -ENOENT);
        /* Only while the bits under the mask are as wanted: else nothing changes. */
        cr_assert_eq(store_host_actions(st, a, H(1), HOST_ACTION_RECLAIM_STARTED, 0, 0, 0), 0);
        cr_assert_eq(store_host_actions(st, a, H(1), 0, HOST_ACTION_RECLAIM_WIPE, HOST_ACTION_RECLAIM_STARTED, 0),
                     -EBUSY);
        cr_assert_eq(store_host_get_brief(st, a, H(1), &h), 0);
        cr_assert_eq(h.pending_actions,
                     HOST_ACTION_GATHER_LOGS | HOST_ACTION_RECLAIM_WIPE | HOST_ACTION_RECLAIM_STARTED, "%u",
                     h.pending_actions);
        host_free(&h);
        cr_assert_eq(store_host_actions(st, a, H(1), 0, HOST_ACTION_RECLAIM_STARTED,
                                        HOST_ACTION_RECLAIM | HOST_ACTION_RECLAIM_STARTED, HOST_ACTION_RECLAIM_STARTED),
                     0);
        cr_assert_eq(store_host_get_brief(st, a, H(1), &h), 0);
        cr_assert_eq(h.pending_actions, HOST_ACTION_GATHER_LOGS | HOST_ACTION_RECLAIM_WIPE, "%u", h.pending_actions);
        host_free(&h);

        struct host_logs_record l;
        cr_assert_eq(store_host_logs_get(st, a, H(1), &l), -ENOENT);
        /* Four asked-for uploads with a NUL inside, three kept: the newest
         * comes back byte for byte; each ends its request, and one not
         * asked for is refused. */
        for (int i = 0; i < 4; i++) {
                char data[6] = { '\x1f', '\x8b', 0, (char) ('0' + i), 0, 'x' };
                char when[32];
                snprintf(when, sizeof when, "2026-11-27T09:00:0%dZ", i);
                if (i)
                        cr_assert_eq(store_host_logs_put(st, a, H(1), when, data, sizeof data, 3), -EBUSY);
                cr_assert_eq(store_host_actions(st, a, H(1), HOST_ACTION_GATHER_LOGS, 0, 0, 0), 0);
                cr_assert_eq(store_host_logs_put(st, a, H(1), when, data, sizeof data, 3), 0);
        }
        cr_assert_eq(store_host_logs_get(st, a, H(1), &l), 0);
        cr_assert_eq(l.len, 6);
        cr_assert_eq(((char *) l.data)[3], '3');
        cr_assert_str_eq(l.created_at, "2026-11-27T09:00:03Z");
        cr_assert_eq(l.count, 3, "three kept, not %lld", (long long) l.count);
        host_logs_record_free(&l);
        cr_assert_eq(store_host_get_brief(st, a, H(1), &h), 0);
        cr_assert_eq(h.pending_actions, HOST_ACTION_RECLAIM_WIPE, "the upload ended the request");
        host_free(&h);
        cr_assert_eq(store_host_logs_put(st, a, H(2), "2026-11-27T09:00:00Z", "\x1f\x8b", 2, 3), -ENOENT);
        /* The logs go with their host. */
        cr_assert_eq(store_host_delete(st, a, H(1)), 0);
        cr_assert_eq(store_host_logs_get(st, a, H(1), &l), -ENOENT);
        free(a);
}

Test(store_sqlite, version_13_database_is_migrated) {
        char *a = mk_infra_env("admin", "a");
        reopen_after(downgrade_to_13);
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, a, &got), 0);
        cr_assert_null(got.static_network);
        got.static_network = strdup("[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{}}]");
        cr_assert_eq(store_infra_env_update(st, &got, IE_F_STATIC_NETWORK), 0);
        infra_env_free(&got);
        cr_assert_eq(store_infra_env_get(st, a, &got), 0);
        cr_assert_str_eq(got.static_network, "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{}}]");
        infra_env_free(&got);
        free(a);
}

Test(store_sqlite, version_12_database_is_migrated) {
        char *a = mk_infra_env("admin", "a"), *b = mk_infra_env("admin", "b");
        for (int i = 1; i <= 3; i++) {
                char id[40];
                snprintf(id, sizeof id, "5d1e0c2a-0000-4000-8000-00000000000%d", i);
                cr_assert_eq(tu_store_host_register(st, a, id, "1", NULL), 1);
        }
        cr_assert_eq(tu_store_host_register(st, b, H(9), "1", NULL), 1);
        const char *inv = "{\"inventory_version\":1,\"hostname\":\"kept\",\"cpu\":{\"count\":4}}";
        cr_assert_eq(tu_store_host_set_inventory(st, a, H(2), inv, NULL), 0);

        reopen_after(downgrade_to_12);
        struct host h;
        cr_assert_eq(store_host_get(st, a, H(2), &h), 0);
        cr_assert_not_null(h.inventory_json);
        struct host fresh;
        host_init(&fresh);
        cr_assert_str_eq(h.inventory_json, inv, "the inventory moved unchanged");
        cr_assert_eq(store_host_get(st, a, H(1), &fresh), 0);
        cr_assert_null(fresh.inventory_json);
        host_free(&fresh);
        host_free(&h);
        /* The names came along: the hostname filter finds the host whose
         * inventory names it (any case), then the name an admin gives it. */
        struct host_list l;
        struct host_filter hf = { .hostname_contains = "KEP" };
        cr_assert_eq(store_host_list(st, &hf, &(struct list_page) { .limit = 10 }, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].id, H(2));
        host_list_free(&l);
        struct host up;
        host_init(&up);
        up.infra_env_id = strdup(a);
        up.id = strdup(H(2));
        up.requested_hostname = strdup("Renamed-7");
        cr_assert_eq(store_host_update(st, &up, HOST_F_REQUESTED_HOSTNAME), 0);
        host_free(&up);
        cr_assert_eq(store_host_list(st, &hf, &(struct list_page) { .limit = 10 }, &l), 0);
        cr_assert_eq(l.n, 0, "the requested name comes first");
        host_list_free(&l);
        hf.hostname_contains = "named-7";
        cr_assert_eq(store_host_list(st, &hf, &(struct list_page) { .limit = 10 }, &l), 0);
        cr_assert_eq(l.n, 1);
        host_list_free(&l);

        /* a holds 3: a cap of 3 refuses a fourth, a cap of 4 takes it; b's
         * count is its own. */
        cr_assert_eq(tu_store_host_register_capped(st, a, H(4), "1", 3, NULL), -EDQUOT);
        cr_assert_eq(tu_store_host_register_capped(st, b, H(4), "1", 2, NULL), 1);
        cr_assert_eq(tu_store_host_register_capped(st, a, H(5), "1", 4, NULL), 1);
        cr_assert_eq(tu_store_host_register_capped(st, a, H(6), "1", 4, NULL), -EDQUOT);
        /* A known host registering again is not a new one. */
        cr_assert_eq(tu_store_host_register_capped(st, a, H(5), "1", 4, NULL), 0);
        cr_assert_eq(store_host_delete(st, a, H(2)), 0);
        cr_assert_eq(count_rows("SELECT count(*) FROM host_inventories"), 0, "the inventory went with its host");
        cr_assert_eq(tu_store_host_register_capped(st, a, H(6), "1", 4, NULL), 1);
        cr_assert_eq(count_rows("SELECT count(*) FROM hosts WHERE infra_env_id = (SELECT id FROM infra_envs "
                                "WHERE name = 'a')"), 4);
        cr_assert_eq(tu_store_host_set_inventory(st, a, H(6), inv, NULL), 0);
        cr_assert_eq(tu_store_host_set_inventory(st, a, H(6), inv, NULL), 0, "a second inventory replaces the first");
        cr_assert_eq(count_rows("SELECT count(*) FROM host_inventories"), 1);

        /* Deleting the infra-env takes its hosts and their inventories. */
        cr_assert_eq(store_infra_env_delete(st, a, 0, NULL, NULL), 0);
        cr_assert_eq(count_rows("SELECT count(*) FROM host_inventories"), 0);
        cr_assert_eq(count_rows("SELECT host_count FROM infra_envs WHERE name = 'b'"), 2);
        cr_assert_eq(count_rows("SELECT count(*) FROM host_names"), 2, "names go with their hosts");
        free(a);
        free(b);
}

/* A version-10 database (before operands) is migrated: its subscriptions
 * have cleanup off and can turn it on; operands can be applied. */
Test(store_sqlite, version_10_database_is_migrated) {
        char *cl = tu_store_cluster(st, "admin", "old");
        struct subscription_record sub = { .cluster_id = strdup(cl), .package = strdup("etcd"), .owner = strdup("a") };
        cr_assert_eq(store_subscription_create(st, &sub), 0);
        subscription_record_free(&sub);
        reopen_after(downgrade_to_10);
        struct subscription_record_list l;
        cr_assert_eq(store_subscription_list(st, cl, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_not(l.v[0].cleanup);
        subscription_record_list_free(&l);
        cr_assert_eq(store_subscription_set_cleanup(st, cl, "etcd", true), 0);
        cr_assert_eq(store_subscription_list(st, cl, &l), 0);
        cr_assert(l.v[0].cleanup);
        subscription_record_list_free(&l);
        struct operand_record o = { .cluster_id = strdup(cl), .package = strdup("etcd"), .group = strdup("g"),
                                   .version = strdup("v1"), .kind = strdup("K"), .name = strdup("n"),
                                   .file = strdup("f.yaml"), .content = strdup("x"), .owner = strdup("a") };
        cr_assert_eq(store_operand_put(st, &o, 1), 0);
        operand_record_free(&o);
        free(cl);
}

/* A version-9 database (before add-ons) is migrated: its clusters and
 * hosts stay, and take proxies, releases and what node agents found. */
Test(store_sqlite, version_9_database_is_migrated) {
        char *cl = tu_store_cluster(st, "admin", "old");
        reopen_after(downgrade_to_9);
        struct addon_proxy_record p = { .name = strdup("mon"), .owner = strdup("admin"), .spec = strdup("{}") };
        cr_assert_eq(store_addon_proxy_create(st, &p), 0);
        struct addon_release_record r = { .proxy_id = strdup(p.id), .cluster_id = strdup(cl), .content = strdup("{}"),
                                         .status = strdup("Pending"), .revision = 1 };
        cr_assert_eq(store_addon_release_put(st, &r), 0);
        struct addon_release_record_list l;
        cr_assert_eq(store_addon_release_list(st, NULL, cl, NULL, &l), 0);
        cr_assert_eq(l.n, 1);
        addon_release_record_list_free(&l);
        addon_release_record_free(&r);
        addon_proxy_record_free(&p);
        free(cl);
}

/* A version-8 database (before subscriptions) is migrated: its clusters
 * have none, and take them. */
Test(store_sqlite, version_8_database_is_migrated) {
        char *cl = tu_store_cluster(st, "admin", "old");
        reopen_after(downgrade_to_8);
        struct subscription_record_list l;
        cr_assert_eq(store_subscription_list(st, cl, &l), 0);
        cr_assert_eq(l.n, 0);
        subscription_record_list_free(&l);
        struct subscription_record sub = { .cluster_id = strdup(cl), .package = strdup("etcd"), .owner = strdup("a") };
        cr_assert_eq(store_subscription_create(st, &sub), 0);
        subscription_record_free(&sub);
        cr_assert_eq(store_subscription_list(st, cl, &l), 0);
        cr_assert_eq(l.n, 1);
        subscription_record_list_free(&l);
        free(cl);
}

/* A version-7 database (before catalogs) is migrated: its hosts stay and
 * catalogs can be added, listed and read at once. */
Test(store_sqlite, version_7_database_is_migrated) {
        char *ie = mk_infra_env("admin", "old");
        const char *hid = "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a";
        cr_assert_eq(tu_store_host_register(st, ie, hid, "0.1", NULL), 1);
        reopen_after(downgrade_to_7);
        struct host h;
        cr_assert_eq(store_host_get(st, ie, hid, &h), 0);
        host_free(&h);
        struct catalog_record_list l;
        cr_assert_eq(store_catalog_list(st, &l), 0);
        cr_assert_eq(l.n, 0);
        catalog_record_list_free(&l);
        char *id = tu_store_catalog(st, "community", 10, NULL);
        struct catalog_record c;
        cr_assert_eq(store_catalog_get(st, id, &c), 0);
        cr_assert_str_eq(c.name, "community");
        catalog_record_free(&c);
        free(id);
        free(ie);
}

/* A version-6 database (before cancel) is migrated: no host has a stop
 * pending; the mark is set and cleared once. */
Test(store_sqlite, version_6_database_is_migrated) {
        char *ie = mk_infra_env("admin", "old");
        const char *hid = "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a";
        cr_assert_eq(tu_store_host_register(st, ie, hid, "0.1", NULL), 1);
        reopen_after(downgrade_to_6);
        cr_assert_eq(store_host_stop_pending(st, ie, hid), 0);
        cr_assert_eq(store_host_clear_stop(st, ie, hid), 0, "nothing to clear");
        cr_assert_eq(store_host_stop_pending(st, ie, "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5b"), -ENOENT);
        free(ie);
}

/* A version-5 database (before hosts had their own tokens) is migrated:
 * every host's token generation starts at 1; rotation bumps it. */
Test(store_sqlite, version_5_database_is_migrated) {
        char *ie = mk_infra_env("admin", "old");
        const char *hid = "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a";
        cr_assert_eq(tu_store_host_register(st, ie, hid, "0.1", NULL), 1);
        reopen_after(downgrade_to_5);
        int64_t gen = 0;
        cr_assert_eq(store_host_token_generation(st, ie, hid, &gen), 0);
        cr_assert_eq(gen, 1);
        cr_assert_eq(store_host_rotate_token(st, ie, hid, &gen), 0);
        cr_assert_eq(gen, 2);
        cr_assert_eq(store_host_token_generation(st, ie, hid, &gen), 0);
        cr_assert_eq(gen, 2);
        cr_assert_eq(store_host_rotate_token(st, ie, "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5b", &gen), -ENOENT);
        cr_assert_eq(store_host_token_generation(st, ie, "not-a-uuid", &gen), -EINVAL);
        free(ie);
}

/* A version-4 database (before clusters had an architecture) is migrated:
 * its clusters are x86_64, as every infra-env of that time defaulted to. */
Test(store_sqlite, version_4_database_is_migrated) {
        char *cl = mk_cluster("carol", "old");
        reopen_after(downgrade_to_4);
        struct cluster c;
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        cr_assert_str_eq(c.cpu_architecture, "x86_64");
        cluster_free(&c);
        free(cl);
}

/* A version-1 database (before step results) is migrated in place and keeps
 * its hosts. */
Test(store_sqlite, version_1_database_is_migrated) {
        char *ie = mk_infra_env("admin", "old");
        cr_assert_eq(tu_store_host_register(st, ie, "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a", "0.1", NULL), 1);
        store_close(st);
        st = NULL;
        sqlite3 *db;
        cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
        downgrade_to_2(db);
        cr_assert_eq(sqlite3_exec(db, "ALTER TABLE hosts DROP COLUMN step_results;"
                                      "UPDATE schema_version SET version = 1", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        cr_assert_eq(store_open(path, &st), 0);
        cr_assert_eq(store_schema_version(st), SCHEMA);
        struct host h;
        cr_assert_eq(store_host_get(st, ie, "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a", &h), 0);
        cr_assert_str_eq(h.step_results_json, "{}");
        host_free(&h);
        free(ie);
}

/* A version-2 database (before releases) is migrated in place: its clusters
 * and hosts stay, with no capabilities status, no payload, feature set
 * Default and applied_revision 0; releases can be imported at once. */
Test(store_sqlite, version_2_database_is_migrated) {
        char *ie = mk_infra_env("admin", "old");
        char *cl = mk_cluster("carol", "old");
        const char *hid = "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a";
        cr_assert_eq(tu_store_host_register(st, ie, hid, "0.1", NULL), 1);
        cr_assert_eq(store_host_bind(st, ie, hid, cl, HOST_BINDING, NULL, 0), 0);
        reopen_after(downgrade_to_2);
        struct cluster c;
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        cr_assert_str_eq(c.name, "old");
        cr_assert_eq(c.payload_revision, 0);
        cr_assert_str_eq(c.feature_set, "Default");
        cr_assert_not(c.has_cap_status);
        cr_assert_eq(c.n_conditions, 0);
        cr_assert_null(c.cap_spec.baseline_capability_set);
        cluster_free(&c);
        struct host h;
        cr_assert_eq(store_host_get(st, ie, hid, &h), 0);
        cr_assert_str_eq(h.cluster_id, cl);
        cr_assert_eq(h.applied_revision, 0);
        host_free(&h);
        struct release_info info;
        struct manifest_list ms = { 0 };
        mk_release("1.0.0", &info, &ms);
        cr_assert_eq(store_release_import(st, &info, &ms, NULL), 0);
        release_info_free(&info);
        manifest_list_free(&ms);
        free(ie);
        free(cl);
}

Test(store_sqlite, newer_schema_refuses_to_open) {
        store_close(st);
        st = NULL;
        sqlite3 *db;
        cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
        cr_assert_eq(sqlite3_exec(db, "UPDATE schema_version SET version = 99", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        struct store *s2 = (struct store *) 1;
        cr_assert_eq(store_open(path, &s2), -EPROTO);
        cr_assert_null(s2);
}

/* A version-3 database (before tokens) gets the tokens table. */
Test(store_sqlite, version_3_database_is_migrated) {
        char *ie = mk_infra_env("admin", "old");
        reopen_after(downgrade_to_3);
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, ie, &got), 0);
        infra_env_free(&got);
        mk_token("71111111-2222-4333-8444-555555555555", "infra-admin", "admin");
        free(ie);
}

/* ---- the back-end by the URL -------------------------------------------- */

Test(store_sqlite, urls) {
        struct store *s2;
        char url[4200];
        snprintf(url, sizeof url, "sqlite:%s", path);
        cr_assert_eq(store_open(url, &s2), 0, "a second store on the same file");
        store_close(s2);
        snprintf(url, sizeof url, "sqlite://%s", path);
        cr_assert_eq(store_open(url, &s2), 0);
        store_close(s2);
#ifndef MUSTER_WITH_POSTGRES
        cr_assert_eq(store_open("postgres://db/muster", &s2), -EPROTONOSUPPORT);
#endif
        cr_assert_eq(store_open("sqlite:", &s2), -EINVAL);
        cr_assert_eq(store_open(":memory:", &s2), -EINVAL);
        cr_assert_eq(store_open("/nonexistent-dir/x/muster.db", &s2), -ENOENT);
}

/* sqlite: and a plain path open SQLite (the file is made); postgres:// and
 * postgresql:// open PostgreSQL (here: a server that is not there, on a
 * socket in a folder that does not exist; the URL's pool= is checked), or,
 * in a build without it, name a back-end this build does not have, as does
 * any other scheme://; no URL or an empty path is no store. */
Test(store_sqlite, open_picks_the_backend_by_url) {
        struct store *s2 = (struct store *) 1;
        char url[4300], file[4200];
        struct stat sb;

        snprintf(file, sizeof file, "%s/plain.db", dir);
        cr_assert_eq(store_open(file, &s2), 0, "a plain path is SQLite");
        cr_assert_eq(store_schema_version(s2), SCHEMA);
        store_close(s2);
        cr_assert_eq(stat(file, &sb), 0);

        snprintf(file, sizeof file, "%s/prefixed.db", dir);
        snprintf(url, sizeof url, "sqlite:%s", file);
        cr_assert_eq(store_open(url, &s2), 0);
        cr_assert_eq(store_schema_version(s2), SCHEMA);
        store_close(s2);
        cr_assert_eq(stat(file, &sb), 0, "sqlite:PATH is the file PATH");

#ifdef MUSTER_WITH_POSTGRES
        s2 = (struct store *) 1;
        cr_assert_eq(store_open("postgres://muster@/muster?host=/nonexistent-dir/pg", &s2), -ECONNREFUSED);
        cr_assert_null(s2);
        s2 = (struct store *) 1;
        cr_assert_eq(store_open("postgresql://muster@/muster?host=/nonexistent-dir/pg&pool=2", &s2), -ECONNREFUSED);
        cr_assert_null(s2);
        cr_assert_eq(store_open("postgres://muster@/muster?host=/nonexistent-dir/pg&pool=0", &s2), -EINVAL);
        cr_assert_eq(store_open("postgres://muster@/muster?pool=x&host=/nonexistent-dir/pg", &s2), -EINVAL);
        cr_assert_eq(store_open("postgres://muster@/muster?host=/nonexistent-dir/pg&no_such_parameter=1", &s2),
                     -EINVAL);
#else
        s2 = (struct store *) 1;
        cr_assert_eq(store_open("postgres://muster@db.example/muster", &s2), -EPROTONOSUPPORT);
        cr_assert_null(s2);
        s2 = (struct store *) 1;
        cr_assert_eq(store_open("postgresql://muster@db.example:5432/muster?sslmode=require", &s2),
                     -EPROTONOSUPPORT);
        cr_assert_null(s2);
#endif
        cr_assert_eq(store_open("mysql://db.example/muster", &s2), -EPROTONOSUPPORT);
        s2 = (struct store *) 1;
        cr_assert_eq(store_open(NULL, &s2), -EINVAL);
        cr_assert_null(s2);
        cr_assert_eq(store_open("", &s2), -EINVAL);
        cr_assert_eq(store_open("sqlite://", &s2), -EINVAL);
        cr_assert_null(s2);
        store_close(NULL);
}

/* ---- group commit ------------------------------------------------------- */

#define GC_THREADS 16
#define GC_WRITES 120

struct gc_arg {
        int t;
        const char *ie, *capped;
        int ok, refused, wrong;
};

static void gc_host_id(int t, int i, char out[37]) {
        snprintf(out, 37, "00000000-0000-4000-8000-%04x%08x", (unsigned) t, (unsigned) i);
}

/* One writer: new hosts (each must be visible to a connection of its own
 * the moment it is acknowledged: acknowledged means committed), mixed with
 * writes that fail inside the same groups (an unknown infra-env, a full
 * one), each of which must get its own refusal. */
static void *gc_writer(void *p) {
        struct gc_arg *a = p;
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
                a->wrong++;
                return NULL;
        }
        sqlite3_stmt *q = NULL;
        sqlite3_prepare_v2(db, "SELECT count(*) FROM hosts WHERE id = ?1", -1, &q, NULL);
        for (int i = 0; i < GC_WRITES; i++) {
                char id[37];
                gc_host_id(a->t, i, id);
                int r;
                switch (i % 4) {
                case 3:
                        r = tu_store_host_register_capped(st, "99999999-0000-4000-8000-000000000000", id, "1", 0, NULL);
                        if (r == -ENOENT)
                                a->refused++;
                        else
                                a->wrong++;
                        break;
                case 2:
                        r = tu_store_host_register_capped(st, a->capped, id, "1", 1, NULL);
                        if (r == -EDQUOT)
                                a->refused++;
                        else
                                a->wrong++;
                        break;
                default:
                        r = tu_store_host_register(st, a->ie, id, "1", NULL);
                        if (r != 1) {
                                a->wrong++;
                                break;
                        }
                        sqlite3_bind_text(q, 1, id, -1, SQLITE_TRANSIENT);
                        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 1)
                                a->ok++;
                        else
                                a->wrong++; /* answered before its commit */
                        sqlite3_reset(q);
                }
        }
        sqlite3_finalize(q);
        sqlite3_close(db);
        return NULL;
}

Test(store_sqlite, group_commit_answers_each_write_after_its_commit) {
        char *ie = mk_infra_env("alice", "pool"), *capped = mk_infra_env("alice", "capped");
        cr_assert_eq(tu_store_host_register(st, capped, "00000000-0000-4000-8000-ffffffffffff", "1", NULL), 1);
        struct store_latency before;
        store_write_latency(st, &before);

        pthread_t th[GC_THREADS];
        struct gc_arg args[GC_THREADS];
        for (int t = 0; t < GC_THREADS; t++) {
                args[t] = (struct gc_arg) { .t = t, .ie = ie, .capped = capped };
                cr_assert_eq(pthread_create(&th[t], NULL, gc_writer, &args[t]), 0);
        }
        int ok = 0, refused = 0, wrong = 0;
        for (int t = 0; t < GC_THREADS; t++) {
                pthread_join(th[t], NULL);
                ok += args[t].ok;
                refused += args[t].refused;
                wrong += args[t].wrong;
        }
        cr_assert_eq(wrong, 0, "%d writes got another's answer, or were answered before their commit", wrong);
        cr_assert_eq(ok, GC_THREADS * GC_WRITES / 2);
        cr_assert_eq(refused, GC_THREADS * GC_WRITES / 2);

        /* Every acknowledged host is there, no refused one is. */
        for (int t = 0; t < GC_THREADS; t++)
                for (int i = 0; i < GC_WRITES; i++) {
                        char id[37];
                        gc_host_id(t, i, id);
                        struct host h;
                        int r = store_host_get(st, i % 4 == 2 ? capped : ie, id, &h);
                        cr_assert_eq(r, i % 4 < 2 ? 0 : -ENOENT, "host %d/%d: %d", t, i, r);
                        host_free(&h);
                }
        struct host_list l;
        struct host_filter f = { .infra_env_id = capped };
        cr_assert_eq(store_host_list(st, &f, &(struct list_page) { .limit = 10 }, &l), 0);
        cr_assert_eq(l.n, 1, "the full infra-env still holds its one host");
        host_list_free(&l);

        /* The writes shared commits. */
        struct store_latency after;
        store_write_latency(st, &after);
        uint64_t writes = after.count - before.count, commits = after.commits - before.commits;
        cr_log_info("group commit: %llu writes in %llu commits", (unsigned long long) writes,
                    (unsigned long long) commits);
        cr_assert_eq(writes, (uint64_t) GC_THREADS * GC_WRITES);
        cr_assert_gt(commits, 0);
        cr_assert_lt(commits, writes / 2, "%llu commits for %llu writes: no groups formed",
                     (unsigned long long) commits, (unsigned long long) writes);
        free(ie);
        free(capped);
}

/* Unwaited events: one alone is committed before it is answered (nobody
 * is queued behind it), and among waited writes every one is committed by
 * the writes around it: none is left in a group that nobody commits. */
struct ue_arg {
        const char *ie;
        int t, failed;
};

#define UE_THREADS 8
#define UE_ROUNDS 60

static void *ue_writer(void *p) {
        struct ue_arg *a = p;
        for (int i = 0; i < UE_ROUNDS; i++) {
                char id[37];
                snprintf(id, sizeof id, "00000000-0000-4000-9%03d-%012d", a->t, i);
                if (tu_store_host_register(st, a->ie, id, "1", NULL) != 1)
                        a->failed++;
                struct event e;
                event_init(&e);
                e.severity = EVENT_INFO;
                e.category = EVENT_CAT_AGENT;
                e.message = strdup("unwaited");
                if (store_event_append_unwaited(st, &e) != 0 || e.id <= 0)
                        a->failed++;
                event_free(&e);
        }
        return NULL;
}

Test(store_sqlite, unwaited_events_are_committed_by_the_writes_around_them) {
        struct event e;
        event_init(&e);
        e.severity = EVENT_INFO;
        e.category = EVENT_CAT_SYSTEM;
        e.message = strdup("alone");
        cr_assert_eq(store_event_append_unwaited(st, &e), 0);
        char q[128];
        snprintf(q, sizeof q, "SELECT count(*) FROM events WHERE id = %lld AND message = 'alone'", (long long) e.id);
        cr_assert_eq(count_rows(q), 1, "an unwaited event with nobody behind it is committed at once");
        event_free(&e);

        char *ie = mk_infra_env("alice", "ue");
        pthread_t th[UE_THREADS];
        struct ue_arg args[UE_THREADS];
        for (int t = 0; t < UE_THREADS; t++) {
                args[t] = (struct ue_arg) { .ie = ie, .t = t };
                cr_assert_eq(pthread_create(&th[t], NULL, ue_writer, &args[t]), 0);
        }
        for (int t = 0; t < UE_THREADS; t++) {
                pthread_join(th[t], NULL);
                cr_assert_eq(args[t].failed, 0);
        }
        /* Read from a connection of its own: only committed rows count. */
        cr_assert_eq(count_rows("SELECT count(*) FROM events WHERE message = 'unwaited'"), UE_THREADS * UE_ROUNDS);
        cr_assert_eq(count_rows("SELECT count(*) FROM hosts"), UE_THREADS * UE_ROUNDS);
        free(ie);
}

/* A new host and its event are one write; a known host registering again
 * writes no event. */
Test(store_sqlite, a_new_host_and_its_event_are_one_write) {
        char *ie = mk_infra_env("alice", "ev");
        struct store_latency before, after;
        store_write_latency(st, &before);
        struct event e;
        event_init(&e);
        e.severity = EVENT_INFO;
        e.category = EVENT_CAT_AGENT;
        e.host_id = strdup("5D1E0C2A-0000-4000-8000-0000000000E1");
        e.message = strdup("registered");
        cr_assert_eq(store_host_register_event(st, ie, "5d1e0c2a-0000-4000-8000-0000000000e1", "1", 0, &e, NULL), 1);
        store_write_latency(st, &after);
        cr_assert_eq(after.count - before.count, 1, "one write");
        cr_assert_gt(e.id, 0);
        cr_assert_str_eq(e.host_id, "5d1e0c2a-0000-4000-8000-0000000000e1", "normalised as any event");
        char q[160];
        snprintf(q, sizeof q, "SELECT count(*) FROM events WHERE id = %lld AND message = 'registered'", (long long) e.id);
        cr_assert_eq(count_rows(q), 1);
        event_free(&e);

        event_init(&e);
        e.severity = EVENT_INFO;
        e.category = EVENT_CAT_AGENT;
        e.message = strdup("registered");
        cr_assert_eq(store_host_register_event(st, ie, "5d1e0c2a-0000-4000-8000-0000000000e1", "1", 0, &e, NULL), 0);
        cr_assert_eq(count_rows("SELECT count(*) FROM events WHERE message = 'registered'"), 1, "known: no event");
        event_free(&e);

        event_init(&e);
        e.category = EVENT_CAT_AGENT;
        e.severity = EVENT_INFO; /* no message */
        cr_assert_eq(store_host_register_event(st, ie, "5d1e0c2a-0000-4000-8000-0000000000e2", "1", 0, &e, NULL), -EINVAL);
        cr_assert_eq(count_rows("SELECT count(*) FROM hosts WHERE id = '5d1e0c2a-0000-4000-8000-0000000000e2'"), 0);
        event_free(&e);
        free(ie);
}

/* kill -9 in the middle of groups: every write the store acknowledged is
 * there when the file is opened again. The writers run in a child process,
 * which writes each acknowledged host id down a pipe (one write() each, so
 * none is torn) and is killed while its writers are still writing. */
struct gc_kill_arg {
        const char *ie;
        int t, fd;
};

static void *gc_kill_writer(void *p) {
        struct gc_kill_arg *a = p;
        for (int i = 0;; i++) {
                char id[37], line[40];
                gc_host_id(a->t, i, id);
                if (tu_store_host_register(st, a->ie, id, "1", NULL) == 1) {
                        int n = snprintf(line, sizeof line, "%s\n", id);
                        if (write(a->fd, line, (size_t) n) != n)
                                _exit(3);
                }
        }
        return NULL;
}

Test(store_sqlite, group_commit_kill_9_loses_nothing_acknowledged) {
        char *ie = mk_infra_env("alice", "pool");
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(fds[0]);
                struct gc_kill_arg args[8];
                pthread_t th;
                for (int t = 0; t < 8; t++) {
                        args[t] = (struct gc_kill_arg) { .ie = ie, .t = t, .fd = fds[1] };
                        if (pthread_create(&th, NULL, gc_kill_writer, &args[t]) != 0)
                                _exit(4);
                }
                for (;;)
                        pause();
        }
        close(fds[1]);
        FILE *f = fdopen(fds[0], "r");
        cr_assert_not_null(f);
        char **acked = NULL;
        size_t n = 0;
        char line[64];
        while (fgets(line, sizeof line, f)) {
                line[strcspn(line, "\n")] = 0;
                acked = realloc(acked, (n + 1) * sizeof *acked);
                acked[n++] = strdup(line);
                if (n == 1500)
                        kill(pid, SIGKILL); /* the child's writers are mid-group */
        }
        fclose(f);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the writers ended by themselves: %d", status);
        cr_assert_geq(n, 1500);

        /* This process's handle was opened before the child wrote: open the
         * file again, as a restarted musterd would. */
        store_close(st);
        cr_assert_eq(store_open(path, &st), 0);
        for (size_t i = 0; i < n; i++) {
                struct host h;
                int r = store_host_get(st, ie, acked[i], &h);
                cr_assert_eq(r, 0, "host %s was acknowledged before the kill but is gone", acked[i]);
                host_free(&h);
                free(acked[i]);
        }
        cr_log_info("kill -9: %zu acknowledged writes, all there", n);
        free(acked);
        free(ie);
}
