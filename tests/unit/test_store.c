/* The store through store.h alone, on the back-end MUSTER_TEST_STORE names
 * (sqlite, the default), so that every back-end passes the same suite: CRUD
 * of every resource, idempotent registration, filters and pages, the
 * monitor's calls, releases and payload revisions, catalogs, durability
 * across kill -9 and concurrent writers. What only SQLite's file shows is test_store_sqlite.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "storeutil.h"
#include "testutil.h"

static char *dir;
static char url[4200];
static struct store *st;

/* A store URL of one back-end for a test's temporary folder. */
typedef void backend_url_fn(const char *folder, char *out, size_t n);

static void sqlite_url(const char *folder, char *out, size_t n) {
        snprintf(out, n, "sqlite:%s/muster.db", folder);
}

/* The PostgreSQL database this test made (dropped by teardown). */
static char pg_db[128];

#ifdef MUSTER_WITH_POSTGRES
static void pg_url(const char *folder, char *out, size_t n) {
        (void) folder;
        tu_pg_database(out, n, pg_db, sizeof pg_db);
}
#endif

/* The back-ends this suite runs on, by MUSTER_TEST_STORE. */
static const struct {
        const char *name;
        backend_url_fn *url;
} backends[] = {
        { "sqlite", sqlite_url },
#ifdef MUSTER_WITH_POSTGRES
        { "postgres", pg_url },
#endif
};

/* The URL maker of back-end `name` (NULL, unset: sqlite); NULL for a name
 * this suite does not know. */
static backend_url_fn *backend_url(const char *name) {
        if (!name)
                name = "sqlite";
        for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
                if (strcmp(name, backends[i].name) == 0)
                        return backends[i].url;
        return NULL;
}

/* An unknown MUSTER_TEST_STORE fails every test, with the reason: a suite
 * that skipped or fell back to SQLite would pass without testing anything. */
static void setup(void) {
        const char *name = getenv("MUSTER_TEST_STORE");
        backend_url_fn *make_url = backend_url(name);
        cr_assert_not_null(make_url,
                           "MUSTER_TEST_STORE=\"%s\": this suite knows no such store back-end "
                           "(known: sqlite, postgres)", name);
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        make_url(dir, url, sizeof url);
        cr_assert_eq(store_open(url, &st), 0, "store_open(%s)", url);
}

static void teardown(void) {
        store_close(st);
        st = NULL;
#ifdef MUSTER_WITH_POSTGRES
        if (pg_db[0])
                tu_pg_drop(pg_db);
#endif
        pg_db[0] = '\0';
        if (dir)
                tu_rm_rf(dir);
        free(dir);
        dir = NULL;
}

TestSuite(store, .init = setup, .fini = teardown);

/* ---- helpers ----------------------------------------------------------- */

static void host_uuid(int i, char out[UUID_STR_LEN]) {
        snprintf(out, UUID_STR_LEN, "00000000-0000-4000-8000-%012d", i);
}

static char *mk_infra_env(const char *owner, const char *name) {
        return tu_store_infra_env(st, owner, name);
}

static char *mk_cluster(const char *owner, const char *name) {
        return tu_store_cluster(st, owner, name);
}

#define GB INT64_C(1000000000)
#define GiB (INT64_C(1) << 30)

/* A small inventory: hostname, cpus, memory, one eligible disk of disk_gb
 * (none if 0) and a large ineligible one. */
static char *mk_inventory(const char *hostname, int cpus, int64_t mem, int64_t disk) {
        char *t;
        char eligible[256] = "";
        if (disk)
                snprintf(eligible, sizeof eligible,
                         "{\"name\":\"sda\",\"size_bytes\":%lld,\"installation_eligibility\":{\"eligible\":true}},",
                         (long long) disk);
        cr_assert_geq(asprintf(&t,
                               "{\"inventory_version\":1,\"hostname\":\"%s\",\"cpu\":{\"count\":%d},"
                               "\"memory\":{\"physical_bytes\":%lld},\"disks\":[%s"
                               "{\"name\":\"sdz\",\"size_bytes\":%lld,\"installation_eligibility\":"
                               "{\"eligible\":false,\"not_eligible_reasons\":[\"Disk is removable\"]}}]}",
                               hostname, cpus, (long long) mem, eligible, (long long) (10000 * GB)), 0);
        return t;
}

static size_t count_hosts(const struct host_filter *f) {
        struct list_page pg = { .limit = STORE_MAX_LIMIT };
        struct host_list l;
        cr_assert_eq(store_host_list(st, f, &pg, &l), 0);
        size_t n = l.n;
        host_list_free(&l);
        return n;
}

static void mk_release(const char *version, struct release_info *info, struct manifest_list *ms) {
        tu_store_release(version, info, ms);
}

/* ---- the back-end under test ------------------------------------------- */

#ifdef MUSTER_WITH_POSTGRES
/* On PostgreSQL, the URL's settings reach libpq beside our pool=N, which
 * sizes the pool (one connection still serves reads and writes in turn); a
 * parameter nobody knows is a bad URL. TLS: over TCP on loopback the test
 * server takes TLS alone (MUSTER_TEST_PG_TLS): sslmode=verify-full with its
 * certificate opens, and every connection of the store is encrypted, as the
 * server's pg_stat_ssl shows; sslmode=disable is refused, and so is the
 * certificate for a name it was not made for. The leader's lock: the first
 * store to ask holds it until it closes. */
Test(store, postgres_url_settings) {
        if (!pg_db[0])
                return; /* SQLite: nothing of this applies */
        struct store *s2 = (struct store *) 1;
        char u[sizeof url + 4400];
        snprintf(u, sizeof u, "%s&sslmode=disable&pool=1", url);
        cr_assert_eq(store_open(u, &s2), 0, "%s", u);
        char *ie = tu_store_infra_env(s2, "admin", "one-connection");
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, ie, &got), 0, "written through the one connection, read through another");
        infra_env_free(&got);
        cr_assert_eq(store_leader(s2), 1, "the first to ask leads");
        cr_assert_eq(store_leader(st), 0, "another store on the database does not");
        cr_assert_eq(store_leader(s2), 1, "and keeps leading");
        store_close(s2);
        for (int i = 0; i < 100 && store_leader(st) != 1; i++)
                usleep(20000);
        cr_assert_eq(store_leader(st), 1, "the lock went with the closed store's connection");
        snprintf(u, sizeof u, "%s&pool=0", url);
        cr_assert_eq(store_open(u, &s2), -EINVAL);

        const char *tls = getenv("MUSTER_TEST_PG_TLS");
        cr_assert(tls && *tls, "MUSTER_TEST_PG_TLS is not set (scripts/with-pg-test-server sets it)");
        unsigned port = 0;
        char root[4200] = "";
        cr_assert_eq(sscanf(strstr(tls, "port="), "port=%u", &port), 1, "%s", tls);
        cr_assert_eq(sscanf(strstr(tls, "sslrootcert="), "sslrootcert=%4199s", root), 1, "%s", tls);
        snprintf(u, sizeof u, "postgres://muster@127.0.0.1:%u/%s?sslmode=verify-full&sslrootcert=%s&pool=3", port,
                 pg_db, root);
        cr_assert_eq(store_open(u, &s2), 0, "%s", u);
        char sql[512];
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid "
                 "WHERE a.datname = '%s' AND a.client_addr IS NOT NULL AND s.ssl",
                 pg_db);
        cr_assert_eq(tu_pg_count(sql), 3, "the pool's three connections over TLS");
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid "
                 "WHERE a.datname = '%s' AND a.client_addr IS NOT NULL AND NOT s.ssl",
                 pg_db);
        cr_assert_eq(tu_pg_count(sql), 0, "none in the clear");
        cr_assert_eq(store_infra_env_get(s2, ie, &got), 0, "read over TLS");
        infra_env_free(&got);
        store_close(s2);
        snprintf(u, sizeof u, "postgres://muster@127.0.0.1:%u/%s?sslmode=disable", port, pg_db);
        cr_assert_eq(store_open(u, &s2), -ECONNREFUSED, "plain TCP is refused");
        snprintf(u, sizeof u, "postgres://muster@localhost:%u/%s?sslmode=verify-full&sslrootcert=%s&hostaddr=127.0.0.1",
                 port, pg_db, root);
        cr_assert_eq(store_open(u, &s2), -ECONNREFUSED, "a certificate for 127.0.0.1 is not localhost's");
        free(ie);
        snprintf(u, sizeof u, "%s&no_such_setting=1", url);
        cr_assert_eq(store_open(u, &s2), -EINVAL);
}
#endif

/* SQLite leads always: one process per file. */
Test(store, sqlite_always_leads) {
        if (pg_db[0])
                return;
        cr_assert_eq(store_leader(st), 1);
        cr_assert_eq(store_leader(st), 1);
}

/* A store closed and opened again keeps its data and its schema. */
Test(store, reopening_keeps_data) {
        char *ie = mk_infra_env("admin", "keep");
        int version = store_schema_version(st);
        cr_assert_gt(version, 0);
        store_close(st);
        st = NULL;
        cr_assert_eq(store_open(url, &st), 0);
        cr_assert_eq(store_schema_version(st), version);
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, ie, &got), 0);
        cr_assert_str_eq(got.name, "keep");
        infra_env_free(&got);
        free(ie);
}

/* A database a newer musterd has taken to a later schema is refused
 * (-EPROTO) and left as it is; back at this version it opens again. */
Test(store, a_newer_schema_is_refused) {
        char *ie = mk_infra_env("admin", "kept");
        int version = store_schema_version(st);
        store_close(st);
        st = NULL;
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE schema_version SET version = %d", version + 1);
        tu_store_exec(url, sql);
        cr_assert_eq(store_open(url, &st), -EPROTO, "a schema newer than this build's");
        cr_assert_null(st);
        snprintf(sql, sizeof sql, "UPDATE schema_version SET version = %d", version);
        tu_store_exec(url, sql);
        cr_assert_eq(store_open(url, &st), 0);
        cr_assert_eq(store_schema_version(st), version);
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, ie, &got), 0, "nothing was lost or changed by the refusal");
        infra_env_free(&got);
        free(ie);
}

/* This suite's test `filter` in a child with MUSTER_TEST_STORE=value (and
 * not as a worker of this run: BXFI_MAP goes); its output in out. */
static int run_suite(const char *value, const char *filter, char *out, size_t n) {
        char self[PATH_MAX], cmd[PATH_MAX + 512];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        cr_assert_gt(len, 0);
        self[len] = '\0';
        snprintf(cmd, sizeof cmd, "env -u BXFI_MAP MUSTER_TEST_STORE='%s' '%s' --filter='%s' --jobs=1 2>&1", value,
                 self, filter);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        size_t got = fread(out, 1, n - 1, p);
        out[got] = '\0';
        return pclose(p);
}

/* MUSTER_TEST_STORE=sqlite, said outright, runs the suite on SQLite. */
Test(store, explicit_sqlite_backend) {
        char out[16384];
        cr_assert_eq(setenv("MUSTER_TEST_STORE", "sqlite", 1), 0);
        teardown();
        setup();
        cr_assert(strncmp(url, "sqlite:", 7) == 0, "%s", url);
        char *ie = mk_infra_env("admin", "explicit");
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, ie, &got), 0);
        cr_assert_str_eq(got.name, "explicit");
        infra_env_free(&got);
        free(ie);

        int status = run_suite("sqlite", "store/reopening_keeps_data", out, sizeof out);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d:\n%s", status, out);
        cr_assert(strstr(out, "Passing: 1"), "%s", out);
}

/* Any other value fails every test and says why; it never passes or skips. */
Test(store, unknown_backend_fails_loudly) {
        char out[16384];
        const char *unknown[] = { "nosuch", "", "SQLite", "sqlite3" };
        for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
                cr_assert_null(backend_url(unknown[i]), "%s", unknown[i]);
        cr_assert_eq(backend_url(NULL), sqlite_url, "unset is sqlite");

        int status = run_suite("nosuch", "store/reopening_keeps_data", out, sizeof out);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0, "the suite passed on an unknown back-end:\n%s", out);
        cr_assert(strstr(out, "MUSTER_TEST_STORE=\"nosuch\": this suite knows no such store back-end"), "%s", out);
        cr_assert(strstr(out, "Failing: 1"), "%s", out);
}

/* ---- infra-envs -------------------------------------------------------- */

Test(store, infra_env_crud) {
        struct infra_env ie, got;
        infra_env_init(&ie);
        ie.name = strdup("rack-1");
        ie.owner = strdup("admin");
        ie.cpu_architecture = strdup("x86_64");
        ie.pull_secret = strdup("{\"auths\":{\"r\":{}}}");
        ie.ssh_authorized_key = strdup("ssh-ed25519 AAAA k");
        ie.proxy.https_proxy = strdup("http://proxy:3128");
        strv_push(&ie.ntp_sources, "ntp.lab");
        cr_assert_eq(store_infra_env_create(st, &ie), 0);
        cr_assert(uuid_is_valid(ie.id));
        cr_assert_eq(ie.token_generation, 1);
        cr_assert_not_null(ie.created_at);

        cr_assert_eq(store_infra_env_get(st, ie.id, &got), 0);
        cr_assert_str_eq(got.name, "rack-1");
        cr_assert_str_eq(got.owner, "admin");
        cr_assert_str_eq(got.pull_secret, ie.pull_secret);
        cr_assert_str_eq(got.ssh_authorized_key, ie.ssh_authorized_key);
        cr_assert_null(got.proxy.http_proxy);
        cr_assert_str_eq(got.proxy.https_proxy, "http://proxy:3128");
        cr_assert_eq(got.ntp_sources.n, 1);
        cr_assert_str_eq(got.ntp_sources.v[0], "ntp.lab");
        cr_assert_eq(got.token_generation, 1);
        cr_assert_str_eq(got.created_at, ie.created_at);
        infra_env_free(&got);

        /* Upper-case ids find the same row. */
        char upper[UUID_STR_LEN];
        for (int i = 0; i < UUID_STR_LEN; i++)
                upper[i] = (char) (ie.id[i] >= 'a' && ie.id[i] <= 'f' ? ie.id[i] - 32 : ie.id[i]);
        cr_assert_eq(store_infra_env_get(st, upper, &got), 0);
        infra_env_free(&got);

        /* Update: name, clear the key, new proxy and NTP list. */
        struct infra_env up;
        infra_env_init(&up);
        up.id = strdup(ie.id);
        up.name = strdup("rack-1b");
        up.proxy.http_proxy = strdup("http://p2:8080");
        strv_push(&up.ntp_sources, "a");
        strv_push(&up.ntp_sources, "b");
        cr_assert_eq(store_infra_env_update(st, &up, IE_F_NAME | IE_F_SSH_AUTHORIZED_KEY | IE_F_PROXY |
                                                     IE_F_NTP_SOURCES), 0);
        cr_assert_eq(store_infra_env_get(st, ie.id, &got), 0);
        cr_assert_str_eq(got.name, "rack-1b");
        cr_assert_null(got.ssh_authorized_key);
        cr_assert_str_eq(got.proxy.http_proxy, "http://p2:8080");
        cr_assert_null(got.proxy.https_proxy);
        cr_assert_eq(got.ntp_sources.n, 2);
        cr_assert_str_eq(got.pull_secret, ie.pull_secret, "not in the mask: kept");
        cr_assert_geq(strcmp(got.updated_at, got.created_at), 0);
        infra_env_free(&got);
        cr_assert_eq(store_infra_env_update(st, &up, IE_F_OWNER), -EINVAL, "owner is not updatable");
        cr_assert_eq(store_infra_env_update(st, &up, IE_F_PULL_SECRET), 0, "NULL clears");
        cr_assert_eq(store_infra_env_get(st, ie.id, &got), 0);
        cr_assert_null(got.pull_secret);
        infra_env_free(&got);

        /* Tokens. */
        int64_t gen = 0;
        cr_assert_eq(store_infra_env_bump_token(st, ie.id, &gen), 0);
        cr_assert_eq(gen, 2);
        cr_assert_eq(store_infra_env_bump_token(st, ie.id, &gen), 0);
        cr_assert_eq(gen, 3);

        /* Duplicates and missing rows. */
        struct infra_env dup;
        infra_env_init(&dup);
        dup.id = strdup(ie.id);
        dup.name = strdup("x");
        dup.owner = strdup("admin");
        dup.cpu_architecture = strdup("x86_64");
        cr_assert_eq(store_infra_env_create(st, &dup), -EEXIST);
        free(dup.id);
        dup.id = NULL;
        dup.cluster_id = strdup("11111111-2222-4333-8444-555555555555");
        cr_assert_eq(store_infra_env_create(st, &dup), -ENOENT, "no such cluster");
        infra_env_free(&dup);

        const char *missing = "11111111-2222-4333-8444-555555555555";
        cr_assert_eq(store_infra_env_get(st, missing, &got), -ENOENT);
        infra_env_free(&got);
        cr_assert_eq(store_infra_env_get(st, "nope", &got), -EINVAL);
        cr_assert_eq(store_infra_env_bump_token(st, missing, &gen), -ENOENT);
        free(up.id);
        up.id = strdup(missing);
        cr_assert_eq(store_infra_env_update(st, &up, IE_F_NAME), -ENOENT);
        cr_assert_eq(store_infra_env_delete(st, missing, 0, NULL, NULL), -ENOENT);

        /* Delete cascades to the hosts. */
        char h[UUID_STR_LEN];
        host_uuid(1, h);
        cr_assert_eq(tu_store_host_register(st, ie.id, h, "0.1.0", NULL), 1);
        cr_assert_eq(store_infra_env_delete(st, ie.id, 0, NULL, NULL), 0);
        struct host hh;
        cr_assert_eq(store_host_get(st, ie.id, h, &hh), -ENOENT);
        cr_assert_eq(store_infra_env_get(st, ie.id, &got), -ENOENT);
        infra_env_free(&up);
        infra_env_free(&ie);
}

Test(store, infra_env_list_owner_and_pages) {
        char name[32];
        for (int i = 0; i < 25; i++) {
                snprintf(name, sizeof name, "ie-%02d", i);
                free(mk_infra_env(i % 5 == 0 ? "bob" : "alice", name));
        }
        struct infra_env_list l;
        struct list_page pg = { .limit = 10 };
        size_t seen = 0;
        int pages = 0;
        do {
                cr_assert_eq(store_infra_env_list(st, "alice", &pg, &l), 0);
                for (size_t i = 0; i < l.n; i++)
                        cr_assert_str_eq(l.v[i].owner, "alice");
                seen += l.n;
                pages++;
                pg.after = l.next_after;
                infra_env_list_free(&l);
        } while (pg.after);
        cr_assert_eq(seen, 20);
        cr_assert_eq(pages, 2);

        cr_assert_eq(store_infra_env_list(st, NULL, NULL, &l), 0);
        cr_assert_eq(l.n, 25);
        cr_assert_str_eq(l.v[0].name, "ie-00", "creation order");
        cr_assert_eq(l.next_after, 0);
        infra_env_list_free(&l);

        pg = (struct list_page) { .limit = 3, .offset = 4 };
        cr_assert_eq(store_infra_env_list(st, "bob", &pg, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].name, "ie-20");
        infra_env_list_free(&l);

        pg = (struct list_page) { .limit = STORE_MAX_LIMIT + 1 };
        cr_assert_eq(store_infra_env_list(st, NULL, &pg, &l), -EINVAL);
}

/* ---- hosts ------------------------------------------------------------- */

Test(store, registration_is_idempotent) {
        char *ie = mk_infra_env("admin", "pool");
        char *cl = mk_cluster("creator", "c1");
        char id[UUID_STR_LEN];
        struct host h;
        host_uuid(7, id);

        cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.0", &h), 1);
        cr_assert_eq(h.status, HOST_DISCOVERING_UNBOUND);
        cr_assert_eq(h.role, ROLE_AUTO);
        cr_assert_str_eq(h.owner, "admin", "the infra-env's owner");
        cr_assert_null(h.cluster_id);
        cr_assert_not_null(h.checked_in_at);
        char *created = strdup(h.created_at);
        host_free(&h);

        /* Bind, set a role, then the agent registers again (as told). */
        cr_assert_eq(store_host_bind(st, ie, id, cl, HOST_BINDING, "Binding", 0), 0);
        struct host up;
        host_init(&up);
        up.infra_env_id = strdup(ie);
        up.id = strdup(id);
        up.role = ROLE_MASTER;
        cr_assert_eq(store_host_update(st, &up, HOST_F_ROLE), 0);
        host_free(&up);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert(h.reregister_pending);
        host_free(&h);

        cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.1", &h), 0, "known host: not new");
        cr_assert_str_eq(h.cluster_id, cl, "keeps its binding");
        cr_assert_eq(h.role, ROLE_MASTER, "keeps its role");
        cr_assert_eq(h.status, HOST_BINDING, "status is the state machine's");
        cr_assert_str_eq(h.discovery_agent_version, "0.1.1");
        cr_assert_str_eq(h.created_at, created);
        cr_assert_not(h.reregister_pending, "registering again is what exit asked for");
        host_free(&h);
        cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.1", NULL), 0);

        struct host_filter f = { .infra_env_id = ie };
        cr_assert_eq(count_hosts(&f), 1, "one row");

        /* The same machine booted from another infra-env is another host. */
        char *ie2 = mk_infra_env("admin", "pool2");
        cr_assert_eq(tu_store_host_register(st, ie2, id, "0.1.0", NULL), 1);
        cr_assert_eq(count_hosts(NULL), 2);

        cr_assert_eq(tu_store_host_register(st, "11111111-2222-4333-8444-555555555555", id, "0.1.0", NULL), -ENOENT);
        cr_assert_eq(tu_store_host_register(st, ie, "junk", "0.1.0", NULL), -EINVAL);
        free(created);
        free(ie);
        free(ie2);
        free(cl);
}

Test(store, host_registers_bound_when_infra_env_is) {
        char *cl = mk_cluster("creator", "early");
        struct infra_env ie;
        infra_env_init(&ie);
        ie.name = strdup("bound");
        ie.owner = strdup("admin");
        ie.cpu_architecture = strdup("x86_64");
        ie.cluster_id = strdup(cl);
        cr_assert_eq(store_infra_env_create(st, &ie), 0);
        char id[UUID_STR_LEN];
        host_uuid(1, id);
        struct host h;
        cr_assert_eq(tu_store_host_register(st, ie.id, id, "0.1.0", &h), 1);
        cr_assert_str_eq(h.cluster_id, cl);
        cr_assert_eq(h.status, HOST_DISCOVERING);
        host_free(&h);

        /* Deleting the cluster is refused while the host is bound; the
         * infra-env loses its binding once it goes. */
        cr_assert_eq(store_cluster_delete(st, cl), -EBUSY);
        cr_assert_eq(store_host_bind(st, ie.id, id, NULL, HOST_DISCOVERING_UNBOUND, NULL, 0), 0);
        cr_assert_eq(store_cluster_delete(st, cl), 0);
        struct infra_env got;
        cr_assert_eq(store_infra_env_get(st, ie.id, &got), 0);
        cr_assert_null(got.cluster_id);
        infra_env_free(&got);
        infra_env_free(&ie);
        free(cl);
}

Test(store, host_updates) {
        char *ie = mk_infra_env("admin", "pool");
        char id[UUID_STR_LEN];
        struct host h;
        host_uuid(3, id);
        cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.0", NULL), 1);
        struct host fresh;
        cr_assert_eq(store_host_get_brief(st, ie, id, &fresh), 0);
        cr_assert_not(fresh.has_inventory, "no inventory yet");
        host_free(&fresh);

        struct host up;
        host_init(&up);
        up.infra_env_id = strdup(ie);
        up.id = strdup(id);
        up.role = ROLE_WORKER;
        up.requested_hostname = strdup("worker-3");
        up.installation_disk_id = strdup("/dev/sda");
        cr_assert_eq(store_host_update(st, &up, HOST_F_ROLE | HOST_F_REQUESTED_HOSTNAME |
                                                HOST_F_INSTALLATION_DISK_ID), 0);
        cr_assert_eq(store_host_update(st, &up, HOST_F_STATUS), -EINVAL);
        up.role = _ROLE_INVALID;
        cr_assert_eq(store_host_update(st, &up, HOST_F_ROLE), -EINVAL);

        char *inv = mk_inventory("node-3", 6, 32 * GiB, 500 * GB);
        cr_assert_eq(tu_store_host_set_inventory(st, ie, id, inv, NULL), 0);
        cr_assert_eq(tu_store_host_set_inventory(st, ie, id, "{\"inventory_version\":2}", NULL), -EINVAL);
        cr_assert_eq(tu_store_host_set_inventory(st, ie, id, "][", NULL), -EINVAL);

        struct validation *v = NULL;
        size_t nv = 0;
        validation_list_set(&v, &nv, VAL_CONNECTED, VSTATUS_SUCCESS, "Host is connected");
        validation_list_set(&v, &nv, VAL_HAS_INVENTORY, VSTATUS_SUCCESS, NULL);
        cr_assert_eq(store_host_set_status(st, ie, id, HOST_KNOWN_UNBOUND, "ready", v, nv,
                                           STORE_STATUS(HOST_DISCOVERING_UNBOUND)), 0);
        cr_assert_eq(store_host_set_status(st, ie, id, HOST_KNOWN_UNBOUND, "again", NULL, 0,
                                           STORE_STATUS(HOST_DISCOVERING_UNBOUND)), -ESTALE,
                     "no longer discovering");
        cr_assert_eq(store_host_set_status(st, ie, id, HOST_INSUFFICIENT_UNBOUND, "low", NULL, 0, 0), 0,
                     "NULL validations are kept");
        validation_list_free(&v, &nv);

        struct host_progress p = { .stage = "Writing image to disk", .percent = 40, .info = "1 of 3 GB" };
        cr_assert_eq(tu_store_host_set_progress(st, ie, id, &p), 0);
        p.percent = 101;
        cr_assert_eq(tu_store_host_set_progress(st, ie, id, &p), -EINVAL);
        cr_assert_eq(store_host_checkin(st, ie, id, "2026-11-21T23:00:00+01:00"), 0);
        cr_assert_eq(store_host_checkin(st, ie, id, "soon"), -EINVAL);

        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert_eq(h.role, ROLE_WORKER);
        cr_assert_str_eq(h.requested_hostname, "worker-3");
        cr_assert_str_eq(h.installation_disk_id, "/dev/sda");
        cr_assert_str_eq(h.inventory_json, inv);
        cr_assert_str_eq(h.facts.hostname, "node-3");
        cr_assert_eq(h.facts.cpu_count, 6);
        cr_assert_eq(h.facts.memory_bytes, 32 * GiB);
        cr_assert_eq(h.facts.max_disk_bytes, 500 * GB);
        cr_assert_eq(h.status, HOST_INSUFFICIENT_UNBOUND);
        cr_assert_str_eq(h.status_info, "low");
        cr_assert_eq(h.n_validations, 2);
        cr_assert_eq(h.validations[0].id, VAL_CONNECTED);
        cr_assert_str_eq(h.validations[0].message, "Host is connected");
        cr_assert_str_eq(h.progress.stage, "Writing image to disk");
        cr_assert_eq(h.progress.percent, 40);
        cr_assert_str_eq(h.checked_in_at, "2026-11-21T22:00:00Z");
        cr_assert_eq(host_parse_inventory(&h, NULL, 0), 0);
        cr_assert_str_eq(host_hostname(&h), "worker-3");
        /* The JSON a client sees. */
        json_object *o = host_to_json(&h, 0), *x;
        cr_assert(json_object_object_get_ex(o, "inventory", &x));
        cr_assert(json_object_is_type(x, json_type_object));
        json_object_put(o);
        cr_assert(h.has_inventory);
        cr_assert_not(h.brief);
        host_free(&h);

        /* An inventory with a status in the same write: both while the
         * status is the one expected, else the inventory alone. */
        {
                char *inv2 = mk_inventory("node-4", 8, 64 * GiB, 500 * GB);
                struct validation *v2 = NULL;
                size_t nv2 = 0;
                validation_list_set(&v2, &nv2, VAL_HAS_INVENTORY, VSTATUS_SUCCESS, "yes");
                struct store_host_status hs = { .status = HOST_KNOWN_UNBOUND, .status_info = "fine", .v = v2,
                                                .n_v = nv2, .expect_mask = STORE_STATUS(HOST_DISCOVERING_UNBOUND) };
                cr_assert_eq(store_host_set_inventory_status(st, ie, id, inv2, NULL, &hs), 0,
                             "insufficient-unbound, not discovering: the inventory alone");
                struct host got;
                cr_assert_eq(store_host_get(st, ie, id, &got), 0);
                cr_assert_str_eq(got.inventory_json, inv2);
                cr_assert_eq(got.status, HOST_INSUFFICIENT_UNBOUND);
                cr_assert_eq(got.n_validations, 2, "validations untouched");
                host_free(&got);
                hs.expect_mask = STORE_STATUS(HOST_INSUFFICIENT_UNBOUND);
                struct event ev[2];
                for (int i = 0; i < 2; i++) {
                        event_init(&ev[i]);
                        ev[i].severity = EVENT_INFO;
                        ev[i].category = EVENT_CAT_SYSTEM;
                        ev[i].host_id = strdup(id);
                        ev[i].message = strdup(i ? "with the status 2" : "with the status 1");
                }
                hs.events = ev;
                hs.n_events = 2;
                cr_assert_eq(store_host_set_inventory_status(st, ie, id, inv, NULL, &hs), 1);
                cr_assert(ev[0].id > 0 && ev[1].id > ev[0].id, "appended in order");
                struct event_filter ef = { .host_id = id };
                struct event_list el = { 0 };
                cr_assert_eq(store_event_list(st, &ef, &el), 0);
                cr_assert_eq(el.n, 2);
                event_list_free(&el);
                for (int i = 0; i < 2; i++)
                        event_free(&ev[i]);
                hs.events = NULL;
                hs.n_events = 0;
                cr_assert_eq(store_host_get(st, ie, id, &got), 0);
                cr_assert_str_eq(got.inventory_json, inv);
                cr_assert_eq(got.status, HOST_KNOWN_UNBOUND);
                cr_assert_str_eq(got.status_info, "fine");
                cr_assert_eq(got.n_validations, 1);
                host_free(&got);
                hs.status = _HOST_STATUS_INVALID;
                cr_assert_eq(store_host_set_inventory_status(st, ie, id, inv, NULL, &hs), -EINVAL);
                /* Back as the rest of this test expects it. */
                cr_assert_eq(store_host_set_status(st, ie, id, HOST_INSUFFICIENT_UNBOUND, "low", NULL, 0, 0), 0);
                validation_list_free(&v2, &nv2);
                free(inv2);
        }

        /* Brief: the same host without its inventory text and validations,
         * but saying that it has an inventory. */
        cr_assert_eq(store_host_get_brief(st, ie, id, &h), 0);
        cr_assert(h.brief);
        cr_assert(h.has_inventory);
        cr_assert_null(h.inventory_json);
        cr_assert_eq(h.n_validations, 0);
        cr_assert_eq(h.status, HOST_INSUFFICIENT_UNBOUND);
        cr_assert_str_eq(h.status_info, "low");
        cr_assert_eq(h.role, ROLE_WORKER);
        cr_assert_str_eq(h.facts.hostname, "node-3");
        cr_assert_eq(h.facts.memory_bytes, 32 * GiB);
        cr_assert_str_eq(h.checked_in_at, "2026-11-21T22:00:00Z");
        host_free(&h);

        /* Missing hosts. */
        char other[UUID_STR_LEN];
        host_uuid(99, other);
        cr_assert_eq(store_host_checkin(st, ie, other, NULL), -ENOENT);
        cr_assert_eq(tu_store_host_set_inventory(st, ie, other, inv, NULL), -ENOENT);
        cr_assert_eq(store_host_set_status(st, ie, other, HOST_KNOWN, NULL, NULL, 0, 0), -ENOENT);
        cr_assert_eq(store_host_get_brief(st, ie, other, &h), -ENOENT);
        struct store_host_status hs = { .status = HOST_KNOWN_UNBOUND, .status_info = "ok" };
        cr_assert_eq(store_host_set_inventory_status(st, ie, other, inv, NULL, &hs), -ENOENT);
        cr_assert_eq(store_host_take_reregister(st, ie, other), -ENOENT);
        free(up.id);
        up.id = strdup(other);
        cr_assert_eq(store_host_update(st, &up, HOST_F_REQUESTED_HOSTNAME), -ENOENT);
        cr_assert_eq(store_host_delete(st, ie, other), -ENOENT);

        cr_assert_eq(store_host_delete(st, ie, id), 0);
        cr_assert_eq(store_host_get(st, ie, id, &h), -ENOENT);
        host_free(&up);
        free(inv);
        free(ie);
}

Test(store, bind_unbind_and_reregister) {
        char *ie = mk_infra_env("admin", "pool");
        char *cl = mk_cluster("creator", "c");
        char id[UUID_STR_LEN];
        struct host h;
        host_uuid(5, id);
        cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.0", NULL), 1);
        cr_assert_eq(store_host_take_reregister(st, ie, id), 0, "nothing pending yet");

        const uint32_t from_known = STORE_STATUS(HOST_KNOWN_UNBOUND);
        cr_assert_eq(store_host_bind(st, ie, id, cl, HOST_BINDING, "Binding", from_known), -ESTALE,
                     "only known-unbound hosts bind");
        cr_assert_eq(store_host_set_status(st, ie, id, HOST_KNOWN_UNBOUND, NULL, NULL, 0, 0), 0);
        cr_assert_eq(store_host_bind(st, ie, id, "11111111-2222-4333-8444-555555555555", HOST_BINDING,
                                     NULL, from_known), -ENOENT, "no such cluster");
        cr_assert_eq(store_host_bind(st, ie, id, cl, HOST_BINDING, "Binding", from_known), 0);

        int64_t n = -1;
        cr_assert_eq(store_cluster_count_hosts(st, cl, 0, &n), 0);
        cr_assert_eq(n, 1);
        cr_assert_eq(store_cluster_count_hosts(st, cl, STORE_STATUS(HOST_KNOWN), &n), 0);
        cr_assert_eq(n, 0);
        cr_assert_eq(store_cluster_count_hosts(st, "11111111-2222-4333-8444-555555555555", 0, &n), -ENOENT);

        cr_assert_eq(store_host_take_reregister(st, ie, id), 1, "exit, once");
        cr_assert_eq(store_host_take_reregister(st, ie, id), 0);

        struct host up;
        host_init(&up);
        up.infra_env_id = strdup(ie);
        up.id = strdup(id);
        up.role = ROLE_MASTER;
        cr_assert_eq(store_host_update(st, &up, HOST_F_ROLE), 0);
        host_free(&up);
        struct host_progress p = { .stage = "Installing", .percent = 10 };
        cr_assert_eq(tu_store_host_set_progress(st, ie, id, &p), 0);

        cr_assert_eq(store_host_bind(st, ie, id, NULL, HOST_DISCOVERING_UNBOUND, "Unbound", 0), 0);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert_null(h.cluster_id);
        cr_assert_eq(h.status, HOST_DISCOVERING_UNBOUND);
        cr_assert_eq(h.role, ROLE_AUTO, "unbinding hands the role back");
        cr_assert_null(h.progress.stage);
        cr_assert_eq(h.progress.percent, MODEL_UNSET);
        cr_assert(h.reregister_pending);
        host_free(&h);
        cr_assert_eq(store_cluster_count_hosts(st, cl, 0, &n), 0);
        cr_assert_eq(n, 0);
        free(ie);
        free(cl);
}

/* Step results are kept per type, replaced by newer ones, refused when not
 * JSON, and cleared by a bind; an installing cluster refuses binds and
 * unbinds inside the store's transaction. */
Test(store, step_results_and_install_guard) {
        char *ie = mk_infra_env("admin", "pool");
        char *cl = mk_cluster("creator", "c");
        char *other = mk_cluster("creator", "d");
        char id[UUID_STR_LEN], id2[UUID_STR_LEN];
        struct host h;
        host_uuid(7, id);
        host_uuid(8, id2);
        cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.0", NULL), 1);
        cr_assert_eq(tu_store_host_register(st, ie, id2, "0.1.0", NULL), 1);

        cr_assert_eq(store_host_set_step_result(st, ie, id, STEP_NTP_SYNCHRONIZER, "{\"offset_ms\":1}"), 0);
        cr_assert_eq(store_host_set_step_result(st, ie, id, STEP_NTP_SYNCHRONIZER, "{\"offset_ms\":2}"), 0);
        cr_assert_eq(store_host_set_step_result(st, ie, id, STEP_DOMAIN_RESOLUTION, "{\"resolutions\":[]}"), 0);
        cr_assert_eq(store_host_set_step_result(st, ie, id, STEP_DOMAIN_RESOLUTION, "{not json"), -EINVAL);
        cr_assert_eq(store_host_set_step_result(st, ie, "11111111-2222-4333-8444-555555555555", STEP_INVENTORY,
                                                "{}"), -ENOENT);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        json_object *o = json_tokener_parse(h.step_results_json);
        cr_assert_not_null(o);
        json_object *ntp, *off;
        cr_assert(json_object_object_get_ex(o, "ntp-synchronizer", &ntp));
        cr_assert(json_object_object_get_ex(ntp, "offset_ms", &off));
        cr_assert_eq(json_object_get_int(off), 2, "the newer result replaces the older");
        cr_assert(json_object_object_get_ex(o, "domain-resolution", NULL));
        json_object_put(o);
        host_free(&h);

        /* One result forgotten, the others kept (the disk speed check is
         * measured again for each installation). */
        cr_assert_eq(store_host_set_step_result(st, ie, id, STEP_INSTALLATION_DISK_SPEED_CHECK,
                                                "{\"disk\":null,\"p99_ms\":3}"), 0);
        cr_assert_eq(store_host_forget_step_result(st, ie, id, STEP_INSTALLATION_DISK_SPEED_CHECK), 1);
        cr_assert_eq(store_host_forget_step_result(st, ie, id, STEP_INSTALLATION_DISK_SPEED_CHECK), 0, "none left");
        cr_assert_eq(store_host_forget_step_result(st, ie, "11111111-2222-4333-8444-555555555555",
                                                   STEP_INSTALLATION_DISK_SPEED_CHECK), -ENOENT);
        cr_assert_eq(store_host_forget_step_result(st, ie, id, _STEP_TYPE_MAX), -EINVAL);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        o = json_tokener_parse(h.step_results_json);
        cr_assert_not(json_object_object_get_ex(o, "installation-disk-speed-check", NULL));
        cr_assert(json_object_object_get_ex(o, "ntp-synchronizer", NULL));
        cr_assert(json_object_object_get_ex(o, "domain-resolution", NULL));
        json_object_put(o);
        host_free(&h);

        cr_assert_eq(store_host_bind(st, ie, id, cl, HOST_BINDING, NULL, 0), 0);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert_str_eq(h.step_results_json, "{}", "a new binding starts with no results");
        host_free(&h);

        /* The host filter by id finds it whatever its infra-env. */
        struct host_filter f = { .host_id = id };
        cr_assert_eq(count_hosts(&f), 1);
        f.host_id = "not-a-uuid";
        struct host_list l;
        struct list_page pg = { 0 };
        cr_assert_eq(store_host_list(st, &f, &pg, &l), -EINVAL);

        /* Only a ready cluster starts installing; its known hosts move. */
        cr_assert_eq(store_host_set_status(st, ie, id, HOST_KNOWN, NULL, NULL, 0, 0), 0);
        cr_assert_eq(store_cluster_start_install(st, cl, "go", HOST_PREPARING_FOR_INSTALLATION, "prep", NULL, 0,
                                                 NULL), -ESTALE);
        cr_assert_eq(store_cluster_set_status_from(st, cl, "ready", "installed", NULL, NULL, 0), -ESTALE,
                     "the status is pending-for-input, not ready");
        cr_assert_eq(store_cluster_set_status_from(st, cl, "pending-for-input", "ready", NULL, NULL, 0), 0);
        cr_assert_eq(store_cluster_start_install(st, cl, "go", HOST_PREPARING_FOR_INSTALLATION, "prep", NULL, 0,
                                                 NULL), 1);
        cr_assert_eq(store_cluster_start_install(st, "11111111-2222-4333-8444-555555555555", "go",
                                                 HOST_PREPARING_FOR_INSTALLATION, "prep", NULL, 0, NULL), -ENOENT);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert_eq(h.status, HOST_PREPARING_FOR_INSTALLATION);
        host_free(&h);

        /* Neither out of nor into an installing cluster. */
        cr_assert_eq(store_host_bind(st, ie, id, NULL, HOST_DISCOVERING_UNBOUND, NULL, 0), -EBUSY);
        cr_assert_eq(store_host_bind(st, ie, id, other, HOST_BINDING, NULL, 0), -EBUSY);
        cr_assert_eq(store_host_bind(st, ie, id2, cl, HOST_BINDING, NULL, 0), -EBUSY);
        cr_assert_eq(store_host_bind(st, ie, id2, other, HOST_BINDING, NULL, 0), 0, "another cluster is fine");
        free(ie);
        free(cl);
        free(other);
}

/* 50 hosts whose facts follow i, so each filter's answer is computable. */
#define N_HOSTS 50
/* Every combination of the host filters, each its own statement text
 * (2,048), twice: past the statement cache's bound of a connection
 * (STMT_CACHE_MAX in each driver), so statements are dropped and prepared
 * again meanwhile, and each answer stays right. On PostgreSQL through one
 * connection (pool=1), so that one connection's cache overflows. Host 0
 * passes every filter, host 1 none. */
Test(store, every_host_filter_combination_twice) {
        if (pg_db[0]) {
                store_close(st);
                st = NULL;
                char one[4300];
                snprintf(one, sizeof one, "%s&pool=1", url);
                cr_assert_eq(store_open(one, &st), 0, "%s", one);
        }
        char *ie0 = mk_infra_env("alice", "a"), *ie1 = mk_infra_env("bob", "b");
        char *cl = mk_cluster("carol", "c");
        char id0[UUID_STR_LEN], id1[UUID_STR_LEN];
        host_uuid(0, id0);
        host_uuid(1, id1);
        cr_assert_eq(tu_store_host_register(st, ie0, id0, "0.1.0", NULL), 1);
        cr_assert_eq(tu_store_host_register(st, ie1, id1, "0.1.0", NULL), 1);
        char *inv = mk_inventory("match-0", 8, 64 * GiB, 500 * GB);
        cr_assert_eq(tu_store_host_set_inventory(st, ie0, id0, inv, NULL), 0);
        free(inv);
        inv = mk_inventory("other-1", 1, 8 * GiB, 0);
        cr_assert_eq(tu_store_host_set_inventory(st, ie1, id1, inv, NULL), 0);
        free(inv);
        cr_assert_eq(store_host_set_status(st, ie0, id0, HOST_KNOWN_UNBOUND, NULL, NULL, 0, 0), 0);
        cr_assert_eq(store_host_bind(st, ie1, id1, cl, HOST_BINDING, NULL, 0), 0);
        for (int pass = 0; pass < 2; pass++)
                for (unsigned m = 0; m < 1u << 11; m++) {
                        struct host_filter f = {
                                .infra_env_id = m & 1 ? ie0 : NULL,
                                .host_id = m & 2 ? id0 : NULL,
                                .unbound_only = m & 4,
                                .status_mask = m & 8 ? STORE_STATUS(HOST_KNOWN_UNBOUND) : 0,
                                .min_cpu_cores = m & 16 ? 4 : 0,
                                .min_memory_bytes = m & 32 ? 16 * GiB : 0,
                                .min_disk_bytes = m & 64 ? 100 * GB : 0,
                                .hostname_contains = m & 128 ? "MATCH" : NULL,
                                .owner = m & 256 ? "alice" : NULL,
                                .cluster_owner = m & 512 ? "alice" : NULL,
                                .no_inventory = m & 1024,
                        };
                        struct list_page pg = { .limit = STORE_MAX_LIMIT };
                        struct host_list l;
                        cr_assert_eq(store_host_list(st, &f, &pg, &l), 0, "pass %d, filters %#x", pass, m);
                        size_t want = (m & 1023) ? 1 : 2;
                        cr_assert_eq(l.n, want, "pass %d, filters %#x: %zu hosts", pass, m, l.n);
                        cr_assert_str_eq(l.v[0].id, id0, "pass %d, filters %#x", pass, m);
                        cr_assert_eq(l.v[0].inventory_json == NULL, (m & 1024) != 0, "pass %d, filters %#x", pass, m);
                        host_list_free(&l);
                }
        free(ie0);
        free(ie1);
        free(cl);
}

static int h_cpus(int i) { return 1 + i % 8; }
static int64_t h_mem(int i) { return (i % 4 + 1) * 8 * GiB; }
static int64_t h_disk(int i) { return (i % 5) * 100 * GB; } /* 0: no eligible disk */

Test(store, host_filters_and_pages) {
        char *ie1 = mk_infra_env("alice", "a"), *ie2 = mk_infra_env("bob", "b");
        char *cl = mk_cluster("carol", "c"), *cl2 = mk_cluster("dave", "d");
        char id[UUID_STR_LEN], name[32];

        for (int i = 0; i < N_HOSTS; i++) {
                const char *ie = i < 30 ? ie1 : ie2;
                host_uuid(i, id);
                cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.0", NULL), 1);
                if (i % 10 == 9)
                        continue; /* no inventory yet */
                snprintf(name, sizeof name, i % 3 ? "Node-%02d.lab" : "worker-%02d.lab", i);
                char *inv = mk_inventory(name, h_cpus(i), h_mem(i), h_disk(i));
                cr_assert_eq(tu_store_host_set_inventory(st, ie, id, inv, NULL), 0);
                free(inv);
                if (i % 7 == 0)
                        cr_assert_eq(store_host_set_status(st, ie, id, HOST_KNOWN_UNBOUND, NULL, NULL, 0, 0), 0);
                if (i % 11 == 1)
                        cr_assert_eq(store_host_bind(st, ie, id, i % 2 ? cl : cl2, HOST_BINDING, NULL, 0), 0);
        }

        /* Expected counts by brute force. */
        size_t e_ie1 = 0, e_unbound = 0, e_cl = 0, e_known = 0, e_cpu = 0, e_mem = 0, e_disk = 0,
               e_worker = 0, e_combo = 0, e_carol = 0;
        for (int i = 0; i < N_HOSTS; i++) {
                bool inv = i % 10 != 9, bound = i % 11 == 1, known = inv && i % 7 == 0 && !bound;
                e_ie1 += i < 30;
                e_unbound += !bound;
                e_cl += bound && i % 2;
                e_known += known;
                e_cpu += inv && h_cpus(i) >= 4;
                e_mem += inv && h_mem(i) >= 24 * GiB;
                e_disk += inv && h_disk(i) >= 250 * GB;
                e_worker += inv && i % 3 == 0;
                e_combo += inv && !bound && h_cpus(i) >= 4 && h_mem(i) >= 16 * GiB && h_disk(i) >= 100 * GB;
                e_carol += !bound || i % 2;
        }

        struct host_filter f = { 0 };
        cr_assert_eq(count_hosts(&f), N_HOSTS);
        f = (struct host_filter) { .infra_env_id = ie1 };
        cr_assert_eq(count_hosts(&f), e_ie1);
        f = (struct host_filter) { .owner = "bob" };
        cr_assert_eq(count_hosts(&f), N_HOSTS - e_ie1);
        f = (struct host_filter) { .unbound_only = true };
        cr_assert_eq(count_hosts(&f), e_unbound);
        f = (struct host_filter) { .cluster_id = cl };
        cr_assert_eq(count_hosts(&f), e_cl);
        f = (struct host_filter) { .status_mask = STORE_STATUS(HOST_KNOWN_UNBOUND) };
        cr_assert_eq(count_hosts(&f), e_known);
        f = (struct host_filter) { .status_mask = STORE_STATUS(HOST_KNOWN_UNBOUND) |
                                                        STORE_STATUS(HOST_DISCOVERING_UNBOUND) };
        cr_assert_eq(count_hosts(&f), e_unbound);
        f = (struct host_filter) { .min_cpu_cores = 4 };
        cr_assert_eq(count_hosts(&f), e_cpu);
        f = (struct host_filter) { .min_memory_bytes = 24 * GiB };
        cr_assert_eq(count_hosts(&f), e_mem);
        f = (struct host_filter) { .min_disk_bytes = 250 * GB };
        cr_assert_eq(count_hosts(&f), e_disk);
        f = (struct host_filter) { .hostname_contains = "WORKER" };
        cr_assert_eq(count_hosts(&f), e_worker, "case-insensitive");
        f = (struct host_filter) { .hostname_contains = ".lab" };
        cr_assert_eq(count_hosts(&f), N_HOSTS - 5);
        f = (struct host_filter) { .hostname_contains = "%" };
        cr_assert_eq(count_hosts(&f), 0, "no LIKE wildcards");
        f = (struct host_filter) { .unbound_only = true, .min_cpu_cores = 4,
                                         .min_memory_bytes = 16 * GiB, .min_disk_bytes = 100 * GB };
        cr_assert_eq(count_hosts(&f), e_combo);
        f = (struct host_filter) { .cluster_owner = "carol" };
        cr_assert_eq(count_hosts(&f), e_carol, "the pool and carol's cluster, not dave's");
        f = (struct host_filter) { .status_mask = 1u << 31 };
        cr_assert_eq(store_host_list(st, &f, NULL, &(struct host_list) { 0 }), -EINVAL);

        /* A requested hostname overrides the inventory's for the search. */
        struct host up;
        host_init(&up);
        up.infra_env_id = strdup(ie1);
        host_uuid(0, id);
        up.id = strdup(id);
        up.requested_hostname = strdup("special-name");
        cr_assert_eq(store_host_update(st, &up, HOST_F_REQUESTED_HOSTNAME), 0);
        host_free(&up);
        f = (struct host_filter) { .hostname_contains = "special" };
        cr_assert_eq(count_hosts(&f), 1);

        /* Keyset pages: every host once, in registration order. */
        struct list_page pg = { .limit = 7 };
        struct host_list l;
        int next = 0, pages = 0;
        f = (struct host_filter) { .no_inventory = true };
        do {
                cr_assert_eq(store_host_list(st, &f, &pg, &l), 0);
                cr_assert_leq(l.n, 7);
                for (size_t i = 0; i < l.n; i++) {
                        host_uuid(next++, id);
                        cr_assert_str_eq(l.v[i].id, id);
                        cr_assert_null(l.v[i].inventory_json);
                }
                pages++;
                pg.after = l.next_after;
                host_list_free(&l);
        } while (pg.after);
        cr_assert_eq(next, N_HOSTS);
        cr_assert_eq(pages, (N_HOSTS + 6) / 7);

        /* Offset pages. */
        pg = (struct list_page) { .limit = 10, .offset = 45 };
        cr_assert_eq(store_host_list(st, NULL, &pg, &l), 0);
        cr_assert_eq(l.n, 5);
        cr_assert_eq(l.next_after, 0);
        host_uuid(45, id);
        cr_assert_str_eq(l.v[0].id, id);
        cr_assert_not_null(l.v[0].inventory_json);
        host_list_free(&l);
        pg = (struct list_page) { .limit = 1001 };
        cr_assert_eq(store_host_list(st, NULL, &pg, &l), -EINVAL);
        pg = (struct list_page) { .limit = 0 };
        cr_assert_eq(store_host_list(st, NULL, &pg, &l), 0);
        cr_assert_eq(l.n, N_HOSTS, "default limit is %d", STORE_DEFAULT_LIMIT);
        host_list_free(&l);

        free(ie1);
        free(ie2);
        free(cl);
        free(cl2);
}

Test(store, monitor_stale_and_disconnect) {
        char *ie = mk_infra_env("admin", "pool");
        char *cl = mk_cluster("creator", "c");
        char id[UUID_STR_LEN];
        for (int i = 0; i < 6; i++) {
                host_uuid(i, id);
                cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.0", NULL), 1);
        }
        /* 0, 1: stale unbound; 2: stale bound; 3: fresh; 4: stale but
         * installed (not watched); 5: stale, already disconnected. */
        const char *old = "2026-01-01T00:00:00Z", *fresh = "2026-01-01T00:10:00Z";
        for (int i = 0; i < 6; i++) {
                host_uuid(i, id);
                cr_assert_eq(store_host_checkin(st, ie, id, i == 3 ? fresh : old), 0);
        }
        host_uuid(2, id);
        cr_assert_eq(store_host_bind(st, ie, id, cl, HOST_KNOWN, NULL, 0), 0);
        host_uuid(4, id);
        cr_assert_eq(store_host_set_status(st, ie, id, HOST_INSTALLED, NULL, NULL, 0, 0), 0);
        host_uuid(5, id);
        cr_assert_eq(store_host_set_status(st, ie, id, HOST_DISCONNECTED_UNBOUND, NULL, NULL, 0, 0), 0);

        uint32_t watched = 0;
        for (int s = 0; s < _HOST_STATUS_MAX; s++)
                if (s != HOST_INSTALLED && s != HOST_DISCONNECTED && s != HOST_DISCONNECTED_UNBOUND)
                        watched |= STORE_STATUS(s);
        const char *cutoff = "2026-01-01T00:05:00Z";
        struct host_list l;
        cr_assert_eq(store_host_list_stale(st, cutoff, watched, NULL, false, 100, &l), 0);
        cr_assert_eq(l.n, 3);
        cr_assert_null(l.v[0].inventory_json);

        /* Host 1 checks in between the list and the mark: it is spared. */
        host_uuid(1, id);
        cr_assert_eq(store_host_checkin(st, ie, id, fresh), 0);
        bool changed[8] = { true, true, true, true, true, true, true, true };
        cr_assert_leq(l.n, 8);
        int n = store_host_mark_disconnected(st, l.v, l.n, cutoff, watched, "Host stopped checking in", changed);
        cr_assert_eq(n, 2);
        for (size_t i = 0; i < l.n; i++)
                cr_assert_eq(changed[i], strcmp(l.v[i].id, id) != 0, "host %zu (%s): only the silent ones", i,
                             l.v[i].id);
        cr_assert_eq(store_host_mark_disconnected(st, l.v, l.n, cutoff, watched, "again", changed), 0, "idempotent");
        for (size_t i = 0; i < l.n; i++)
                cr_assert(!changed[i], "host %zu was already disconnected", i);
        host_list_free(&l);

        struct host h;
        host_uuid(0, id);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert_eq(h.status, HOST_DISCONNECTED_UNBOUND);
        cr_assert_str_eq(h.status_info, "Host stopped checking in");
        host_free(&h);
        host_uuid(1, id);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert_eq(h.status, HOST_DISCOVERING_UNBOUND);
        host_free(&h);
        host_uuid(2, id);
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        cr_assert_eq(h.status, HOST_DISCONNECTED, "bound hosts get the bound state");
        host_free(&h);

        cr_assert_eq(store_host_list_stale(st, cutoff, 0, NULL, false, 2, &l), 0);
        cr_assert_eq(l.n, 2, "limit");
        host_list_free(&l);
        cr_assert_eq(store_host_list_stale(st, "later", 0, NULL, false, 2, &l), -EINVAL);
        free(ie);
        free(cl);
}

/* ---- clusters ---------------------------------------------------------- */

Test(store, cluster_crud) {
        struct cluster c, got;
        cluster_init(&c);
        c.name = strdup("edge");
        c.owner = strdup("carol");
        c.release_version = strdup("4.16.3");
        c.pull_secret = strdup("{\"auths\":{}}");
        cluster_label_set(&c, "env", "prod");
        cr_assert_eq(store_cluster_create(st, &c), 0);
        cr_assert(uuid_is_valid(c.id));
        cr_assert_str_eq(c.status, "pending-for-input");
        cr_assert_eq(c.high_availability_mode, HA_MODE_FULL);

        cr_assert_eq(store_cluster_get(st, c.id, &got), 0);
        cr_assert_str_eq(got.name, "edge");
        cr_assert_str_eq(got.owner, "carol");
        cr_assert_str_eq(got.release_version, "4.16.3");
        cr_assert_null(got.api_vip);
        cr_assert_eq(got.high_availability_mode, HA_MODE_FULL);
        cr_assert_str_eq(cluster_label_get(&got, "env"), "prod");
        cr_assert_str_eq(got.pull_secret, c.pull_secret);
        cr_assert_eq(got.n_validations, 0);
        cluster_free(&got);

        struct cluster up;
        cluster_init(&up);
        up.id = strdup(c.id);
        up.api_vip = strdup("192.0.2.10");
        up.high_availability_mode = HA_MODE_NONE;
        cluster_label_set(&up, "site", "ber");
        cr_assert_eq(store_cluster_update(st, &up, CL_F_API_VIP | CL_F_HA_MODE | CL_F_LABELS), 0);
        cr_assert_eq(store_cluster_update(st, &up, CL_F_OWNER), -EINVAL);
        up.high_availability_mode = _HA_MODE_INVALID;
        cr_assert_eq(store_cluster_update(st, &up, CL_F_HA_MODE), -EINVAL);

        struct validation *v = NULL;
        size_t nv = 0;
        validation_list_set(&v, &nv, VAL_API_VIPS_DEFINED, VSTATUS_SUCCESS, "defined");
        cr_assert_eq(tu_store_cluster_set_status(st, c.id, "insufficient", "needs masters", v, nv), 0);
        validation_list_free(&v, &nv);
        cr_assert_eq(tu_store_cluster_set_status(st, c.id, "ready", NULL, NULL, 0), 0);

        cr_assert_eq(store_cluster_get(st, c.id, &got), 0);
        cr_assert_str_eq(got.api_vip, "192.0.2.10");
        cr_assert_eq(got.high_availability_mode, HA_MODE_NONE);
        cr_assert_eq(got.n_labels, 1, "labels are replaced as a whole");
        cr_assert_str_eq(cluster_label_get(&got, "site"), "ber");
        cr_assert_str_eq(got.status, "ready");
        cr_assert_null(got.status_info);
        cr_assert_eq(got.n_validations, 1, "kept");
        cr_assert_str_eq(got.release_version, "4.16.3");
        cluster_free(&got);

        char *other = mk_cluster("dave", "d1");
        struct cluster_list l;
        cr_assert_eq(store_cluster_list(st, "carol", NULL, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].id, c.id);
        cluster_list_free(&l);
        cr_assert_eq(store_cluster_list(st, NULL, NULL, &l), 0);
        cr_assert_eq(l.n, 2);
        cluster_list_free(&l);
        struct list_page pg = { .limit = 1 };
        cr_assert_eq(store_cluster_list(st, NULL, &pg, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_neq(l.next_after, 0);
        pg.after = l.next_after;
        cluster_list_free(&l);
        cr_assert_eq(store_cluster_list(st, NULL, &pg, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].id, other);
        cr_assert_eq(l.next_after, 0);
        cluster_list_free(&l);

        struct cluster dup;
        cluster_init(&dup);
        dup.id = strdup(c.id);
        dup.name = strdup("x");
        dup.owner = strdup("x");
        cr_assert_eq(store_cluster_create(st, &dup), -EEXIST);
        cluster_free(&dup);

        /* Bound hosts block deletion. */
        char *ie = mk_infra_env("admin", "pool");
        char id[UUID_STR_LEN];
        host_uuid(1, id);
        cr_assert_eq(tu_store_host_register(st, ie, id, "0.1.0", NULL), 1);
        cr_assert_eq(store_host_bind(st, ie, id, c.id, HOST_BINDING, NULL, 0), 0);
        cr_assert_eq(store_cluster_delete(st, c.id), -EBUSY);
        cr_assert_eq(store_host_delete(st, ie, id), 0);
        cr_assert_eq(store_cluster_delete(st, c.id), 0);
        cr_assert_eq(store_cluster_get(st, c.id, &got), -ENOENT);
        cr_assert_eq(store_cluster_delete(st, c.id), -ENOENT);
        cr_assert_eq(tu_store_cluster_set_status(st, c.id, "ready", NULL, NULL, 0), -ENOENT);
        cr_assert_eq(store_cluster_update(st, &up, CL_F_API_VIP), -ENOENT);
        cluster_free(&up);
        cluster_free(&c);
        free(other);
        free(ie);
}

/* ---- events ------------------------------------------------------------ */

Test(store, events) {
        const char *ie = "6f1c2b9e-0d2a-4c43-9a57-3a7e2d8f9b10";
        const char *cl = "0b6f3f0e-4a3c-4b9e-8d2f-5c1a2b3c4d5e";
        char hid[UUID_STR_LEN];
        int64_t last = 0;
        for (int i = 0; i < 30; i++) {
                struct event e;
                event_init(&e);
                e.severity = (enum event_severity) (i % 4);
                e.category = i % 2 ? EVENT_CAT_AGENT : EVENT_CAT_SYSTEM;
                e.infra_env_id = strdup(ie);
                if (i >= 20)
                        e.cluster_id = strdup(cl);
                host_uuid(i % 3, hid);
                e.host_id = strdup(hid);
                if (asprintf(&e.message, "event %d", i) < 0)
                        cr_assert_fail();
                cr_assert_eq(store_event_append(st, &e), 0);
                cr_assert_gt(e.id, last);
                cr_assert_not_null(e.time);
                last = e.id;
                event_free(&e);
        }
        struct event_list l;
        struct event_filter f = { .infra_env_id = ie };
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_eq(l.n, 30);
        cr_assert_str_eq(l.v[0].message, "event 0");
        cr_assert_eq(l.next_after, last);
        event_list_free(&l);

        f = (struct event_filter) { .cluster_id = cl };
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_eq(l.n, 10);
        event_list_free(&l);

        host_uuid(1, hid);
        f = (struct event_filter) { .host_id = hid, .min_severity = EVENT_ERROR };
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        for (size_t i = 0; i < l.n; i++)
                cr_assert_geq(l.v[i].severity, EVENT_ERROR);
        size_t want = 0;
        for (int i = 0; i < 30; i++)
                want += i % 3 == 1 && i % 4 >= EVENT_ERROR;
        cr_assert_eq(l.n, want);
        event_list_free(&l);

        f = (struct event_filter) { .limit = 4 };
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_eq(l.n, 4);
        f.since_id = l.next_after;
        event_list_free(&l);
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_str_eq(l.v[0].message, "event 4");
        event_list_free(&l);

        f = (struct event_filter) { .limit = 1001 };
        cr_assert_eq(store_event_list(st, &f, &l), -EINVAL);
        struct event bad;
        event_init(&bad);
        bad.severity = EVENT_INFO;
        bad.category = EVENT_CAT_USER;
        cr_assert_eq(store_event_append(st, &bad), -EINVAL, "no message");
        bad.message = strdup("m");
        bad.host_id = strdup("not-a-uuid");
        cr_assert_eq(store_event_append(st, &bad), -EINVAL);
        event_free(&bad);
}

/* ---- durability and concurrency ---------------------------------------- */

/* A child registers hosts as fast as it can and reports each acknowledged
 * one; it is killed mid-way. Everything acknowledged must be there. */
Test(store, acknowledged_writes_survive_kill9) {
        char *ie = mk_infra_env("admin", "durable");
        store_close(st);
        st = NULL;

        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                struct store *cs;
                close(fds[0]);
                if (store_open(url, &cs) < 0)
                        _exit(2);
                for (int i = 0; i < 1000000; i++) {
                        char id[UUID_STR_LEN];
                        host_uuid(i, id);
                        if (tu_store_host_register(cs, ie, id, "0.1.0", NULL) != 1)
                                _exit(3);
                        if (write(fds[1], &i, sizeof i) != sizeof i)
                                _exit(4);
                }
                _exit(0);
        }
        close(fds[1]);
        int acked = -1, i, got = 0;
        while (read(fds[0], &i, sizeof i) == sizeof i) {
                cr_assert_eq(i, acked + 1);
                acked = i;
                if (++got == 150)
                        kill(pid, SIGKILL);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %d", status);
        close(fds[0]);
        cr_assert_geq(acked, 149);

        cr_assert_eq(store_open(url, &st), 0);
        for (int k = 0; k <= acked; k++) {
                char id[UUID_STR_LEN];
                struct host h;
                host_uuid(k, id);
                cr_assert_eq(store_host_get(st, ie, id, &h), 0, "acknowledged host %d lost", k);
                host_free(&h);
        }
        /* At most the one in flight beyond the last acknowledged. */
        struct host_filter f = { .infra_env_id = ie, .no_inventory = true };
        size_t n = count_hosts(&f);
        cr_assert(n == (size_t) acked + 1 || n == (size_t) acked + 2, "%zu rows, %d acked", n, acked + 1);
        free(ie);
}

struct writer {
        const char *ie;
        int base;
        int n;
        int failures;
};

static void *writer_main(void *arg) {
        struct writer *w = arg;
        for (int i = 0; i < w->n; i++) {
                char id[UUID_STR_LEN];
                host_uuid(w->base + i, id);
                if (tu_store_host_register(st, w->ie, id, "0.1.0", NULL) != 1)
                        w->failures++;
                if (store_host_checkin(st, w->ie, id, NULL) != 0)
                        w->failures++;
                struct event e;
                event_init(&e);
                e.severity = EVENT_INFO;
                e.category = EVENT_CAT_AGENT;
                e.message = strdup("registered");
                if (store_event_append(st, &e) != 0)
                        w->failures++;
                event_free(&e);
                if (i % 10 == 0) {
                        struct host_list l;
                        struct host_filter f = { .infra_env_id = w->ie, .no_inventory = true };
                        struct list_page pg = { .limit = 5 };
                        if (store_host_list(st, &f, &pg, &l) != 0)
                                w->failures++;
                        host_list_free(&l);
                }
        }
        return NULL;
}

Test(store, concurrent_writers_lose_nothing) {
        char *ie = mk_infra_env("admin", "busy");
        struct writer w[4];
        pthread_t t[4];
        for (int i = 0; i < 4; i++) {
                w[i] = (struct writer) { .ie = ie, .base = i * 1000, .n = 100 };
                cr_assert_eq(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
                pthread_join(t[i], NULL);
                cr_assert_eq(w[i].failures, 0, "writer %d", i);
        }
        struct host_filter f = { .infra_env_id = ie, .no_inventory = true };
        cr_assert_eq(count_hosts(&f), 400);
        struct event_list l;
        struct event_filter ef = { .limit = STORE_MAX_LIMIT };
        cr_assert_eq(store_event_list(st, &ef, &l), 0);
        cr_assert_eq(l.n, 400);
        event_list_free(&l);
        free(ie);
}

/* ---- releases and payload revisions ------------------------------------- */

Test(store, release_import_read_list_delete) {
        struct release_info info;
        struct manifest_list ms;
        struct release_record r;
        mk_release("4.15.0", &info, &ms);
        cr_assert_eq(store_release_import(st, &info, &ms, &r), 0);
        cr_assert_str_eq(r.info.version, "4.15.0");
        cr_assert_eq(r.manifest_count, 3);
        cr_assert_not_null(r.created_at);
        release_record_free(&r);
        cr_assert_eq(store_release_import(st, &info, &ms, NULL), -EEXIST, "a version is imported once");

        /* Manifests come back in release order with exact bytes and
         * annotations in document order. */
        struct manifest_list got = { 0 };
        cr_assert_eq(store_release_manifests(st, "4.15.0", &got), 0);
        cr_assert_eq(got.n, 3);
        for (size_t i = 0; i < 3; i++) {
                cr_assert_str_eq(got.v[i].path, ms.v[i].path);
                cr_assert_str_eq(got.v[i].file, ms.v[i].file);
                cr_assert_eq(got.v[i].doc_index, ms.v[i].doc_index);
                cr_assert_str_eq(got.v[i].api_version, ms.v[i].api_version);
                cr_assert_str_eq(got.v[i].group, ms.v[i].group);
                cr_assert_str_eq(got.v[i].kind, ms.v[i].kind);
                cr_assert_str_eq(got.v[i].name, ms.v[i].name);
                cr_assert_eq(got.v[i].content_len, ms.v[i].content_len);
                cr_assert_eq(memcmp(got.v[i].content, ms.v[i].content, ms.v[i].content_len), 0);
                cr_assert_eq(got.v[i].n_annotations, ms.v[i].n_annotations);
                for (size_t k = 0; k < ms.v[i].n_annotations; k++) {
                        cr_assert_str_eq(got.v[i].annotations[k].key, ms.v[i].annotations[k].key);
                        cr_assert_str_eq(got.v[i].annotations[k].value, ms.v[i].annotations[k].value);
                }
        }
        cr_assert_str_eq(got.v[0].namespace, "ns");
        cr_assert_null(got.v[1].namespace);
        cr_assert_str_eq(manifest_annotation(&got.v[0], "capability.openshift.io/name"), "Console");
        manifest_list_free(&got);

        cr_assert_eq(store_release_get(st, "4.15.0", &r), 0);
        cr_assert_str_eq(r.info.os_image.url, "https://images.example.test/os.img");
        cr_assert_eq(r.info.known_capabilities.n, 2);
        release_record_free(&r);
        cr_assert_eq(store_release_get(st, "9.9.9", &r), -ENOENT);
        cr_assert_eq(store_release_manifests(st, "9.9.9", &got), -ENOENT);
        manifest_list_free(&got);

        struct release_info info2;
        struct manifest_list ms2;
        mk_release("4.16.0", &info2, &ms2);
        cr_assert_eq(store_release_import(st, &info2, &ms2, NULL), 0);
        struct release_record_list l;
        struct list_page pg = { .limit = 1 };
        cr_assert_eq(store_release_list(st, &pg, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].info.version, "4.15.0", "import order");
        cr_assert_neq(l.next_after, 0);
        pg.after = l.next_after;
        release_record_list_free(&l);
        cr_assert_eq(store_release_list(st, &pg, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].info.version, "4.16.0");
        cr_assert_eq(l.v[0].manifest_count, 3);
        cr_assert_eq(l.next_after, 0);
        release_record_list_free(&l);

        /* A release a cluster names stays; the others go with their manifests. */
        struct cluster c;
        cluster_init(&c);
        c.name = strdup("c");
        c.owner = strdup("o");
        c.release_version = strdup("4.16.0");
        cr_assert_eq(store_cluster_create(st, &c), 0);
        cr_assert_eq(store_release_delete(st, "4.16.0"), -EBUSY);
        cr_assert_eq(store_release_delete(st, "4.15.0"), 0);
        cr_assert_eq(store_release_delete(st, "4.15.0"), -ENOENT);
        cr_assert_eq(store_release_manifests(st, "4.15.0", &got), -ENOENT);
        manifest_list_free(&got);
        cr_assert_eq(store_release_import(st, &info, &ms, NULL), 0, "importable again");
        cluster_free(&c);

        /* No half-imported release: a bad manifest rolls the whole import back. */
        struct release_info info3;
        struct manifest_list ms3;
        mk_release("5.0.0", &info3, &ms3);
        free(ms3.v[2].kind);
        ms3.v[2].kind = NULL;
        cr_assert_eq(store_release_import(st, &info3, &ms3, NULL), -EINVAL);
        cr_assert_eq(store_release_get(st, "5.0.0", &r), -ENOENT);
        release_info_free(&info3);
        manifest_list_free(&ms3);
        release_info_free(&info);
        manifest_list_free(&ms);
        release_info_free(&info2);
        manifest_list_free(&ms2);
}

static void mk_payload(struct payload_record *p, const char *cluster, int64_t rev, const char *canonical) {
        payload_record_init(p);
        p->cluster_id = strdup(cluster);
        p->revision = rev;
        p->digest = strdup("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
        p->signature = strdup("c2lnbmF0dXJl");
        p->canonical = strdup(canonical);
        p->canonical_len = strlen(canonical);
        p->release_version = strdup("4.15.0");
        p->manifest_count = 8;
}

Test(store, payload_revisions_follow_each_other) {
        char *cl = mk_cluster("carol", "c");
        struct payload_record p, got;
        mk_payload(&p, cl, 2, "{\"revision\":2}");
        cr_assert_eq(store_cluster_add_payload(st, &p), -ESTALE, "revision 1 comes first");
        payload_record_free(&p);
        mk_payload(&p, cl, 1, "{\"revision\":1}");
        cr_assert_eq(store_cluster_add_payload(st, &p), 0);
        cr_assert_not_null(p.created_at);
        cr_assert_eq(store_cluster_add_payload(st, &p), -ESTALE, "a revision is built once");
        payload_record_free(&p);
        mk_payload(&p, cl, 2, "{\"revision\":2,\"x\":\"\\u00e9\"}");
        cr_assert_eq(store_cluster_add_payload(st, &p), 0);
        payload_record_free(&p);
        mk_payload(&p, "11111111-2222-4333-8444-555555555555", 1, "{}");
        cr_assert_eq(store_cluster_add_payload(st, &p), -ENOENT);
        payload_record_free(&p);

        struct cluster c;
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        cr_assert_eq(c.payload_revision, 2);
        cluster_free(&c);
        cr_assert_eq(store_payload_get(st, cl, 2, &got), 0);
        cr_assert_str_eq(got.canonical, "{\"revision\":2,\"x\":\"\\u00e9\"}", "bytes as stored");
        cr_assert_eq(got.canonical_len, strlen(got.canonical));
        cr_assert_eq(got.manifest_count, 8);
        cr_assert_str_eq(got.release_version, "4.15.0");
        payload_record_free(&got);
        cr_assert_eq(store_payload_get(st, cl, 3, &got), -ENOENT);
        struct payload_record_list l;
        cr_assert_eq(store_payload_list(st, cl, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_assert_eq(l.v[0].revision, 1);
        cr_assert_eq(l.v[1].revision, 2);
        cr_assert_null(l.v[0].canonical, "lists carry no payloads");
        payload_record_list_free(&l);

        /* The revisions go with their cluster. */
        cr_assert_eq(store_cluster_delete(st, cl), 0);
        cr_assert_eq(store_payload_get(st, cl, 1, &got), -ENOENT);
        cr_assert_eq(store_payload_list(st, cl, &l), 0);
        cr_assert_eq(l.n, 0);
        payload_record_list_free(&l);
        free(cl);
}

Test(store, cluster_capabilities_round_trip) {
        struct cluster c, got;
        cluster_init(&c);
        c.name = strdup("caps");
        c.owner = strdup("carol");
        c.cap_spec.baseline_capability_set = strdup("None");
        strv_push(&c.cap_spec.additional_enabled_capabilities, "baremetal");
        strv_push(&c.cap_spec.additional_enabled_capabilities, "Console");
        c.has_cap_status = true;
        strv_push(&c.cap_status.enabled_capabilities, "Console");
        strv_push(&c.cap_status.enabled_capabilities, "baremetal");
        strv_push(&c.cap_status.known_capabilities, "Console");
        strv_push(&c.cap_status.implicit_capabilities, "Insights");
        cr_assert_eq(store_cluster_create(st, &c), 0);
        cr_assert_eq(store_cluster_get(st, c.id, &got), 0);
        cr_assert_str_eq(got.cap_spec.baseline_capability_set, "None");
        cr_assert_eq(got.cap_spec.additional_enabled_capabilities.n, 2);
        cr_assert_str_eq(got.cap_spec.additional_enabled_capabilities.v[1], "Console");
        cr_assert(got.has_cap_status);
        cr_assert_eq(got.cap_status.enabled_capabilities.n, 2);
        cr_assert_str_eq(got.cap_status.implicit_capabilities.v[0], "Insights");
        cr_assert_str_eq(got.feature_set, "Default");
        cr_assert_eq(got.payload_revision, 0);
        cluster_free(&got);

        /* Status and conditions replaced; the status can go again. */
        struct cluster up;
        cluster_init(&up);
        up.id = strdup(c.id);
        up.feature_set = strdup("TechPreviewNoUpgrade");
        up.conditions = calloc(1, sizeof *up.conditions);
        up.n_conditions = 1;
        up.conditions[0] = (struct model_condition) { strdup("ImplicitlyEnabledCapabilities"), strdup("True"),
                                                      strdup("CapabilitiesImplicitlyEnabled"), strdup("m"),
                                                      strdup("2026-01-01T00:00:00Z") };
        cr_assert_eq(store_cluster_update(st, &up, CL_F_CAP_STATUS | CL_F_CONDITIONS | CL_F_FEATURE_SET), 0);
        cr_assert_eq(store_cluster_get(st, c.id, &got), 0);
        cr_assert_not(got.has_cap_status);
        cr_assert_str_eq(got.feature_set, "TechPreviewNoUpgrade");
        cr_assert_eq(got.n_conditions, 1);
        cr_assert_str_eq(got.conditions[0].status, "True");
        cr_assert_str_eq(got.conditions[0].last_transition_time, "2026-01-01T00:00:00Z");
        cr_assert_str_eq(got.cap_spec.baseline_capability_set, "None", "the spec is its own member");
        cluster_free(&got);
        cluster_free(&up);
        cluster_free(&c);
}

Test(store, install_start_roles_payload_and_host_states) {
        char *ie = mk_infra_env("admin", "pool");
        char *cl = mk_cluster("carol", "c");
        char id[3][UUID_STR_LEN];
        for (int i = 0; i < 3; i++) {
                host_uuid(i, id[i]);
                cr_assert_eq(tu_store_host_register(st, ie, id[i], "0.1", NULL), 1);
                cr_assert_eq(store_host_bind(st, ie, id[i], cl, HOST_KNOWN, NULL, 0), 0);
        }
        cr_assert_eq(store_host_set_status(st, ie, id[2], HOST_INSUFFICIENT, NULL, NULL, 0, 0), 0);
        cr_assert_eq(tu_store_cluster_set_status(st, cl, "ready", NULL, NULL, 0), 0);
        struct store_host_role roles[] = { { ie, id[0], ROLE_MASTER }, { ie, id[1], ROLE_WORKER } };
        struct payload_record p;
        mk_payload(&p, cl, 2, "{}");
        cr_assert_eq(store_cluster_start_install(st, cl, "go", HOST_PREPARING_FOR_INSTALLATION, "prep", roles, 2, &p),
                     -ESTALE, "revision 2 without 1: nothing moves");
        struct cluster c;
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        cr_assert_str_eq(c.status, "ready");
        cluster_free(&c);
        p.revision = 1;
        cr_assert_eq(store_cluster_start_install(st, cl, "go", HOST_PREPARING_FOR_INSTALLATION, "prep", roles, 2, &p), 2);
        payload_record_free(&p);
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        cr_assert_str_eq(c.status, "preparing-for-installation");
        cr_assert_eq(c.payload_revision, 1);
        cluster_free(&c);
        struct host h;
        cr_assert_eq(store_host_get(st, ie, id[0], &h), 0);
        cr_assert_eq(h.role, ROLE_MASTER);
        cr_assert_eq(h.status, HOST_PREPARING_FOR_INSTALLATION);
        host_free(&h);
        cr_assert_eq(store_host_get(st, ie, id[1], &h), 0);
        cr_assert_eq(h.role, ROLE_WORKER);
        host_free(&h);
        cr_assert_eq(store_host_get(st, ie, id[2], &h), 0);
        cr_assert_eq(h.status, HOST_INSUFFICIENT, "only known hosts move");
        host_free(&h);

        /* The install story of a host: progress, then installed with its revision. */
        struct host_progress pr = { .stage = "writing-image", .percent = 40, .info = "copying" };
        cr_assert_eq(store_host_set_install_state(st, ie, id[0], HOST_INSTALLING_IN_PROGRESS, "in progress", &pr, -1,
                                                  STORE_STATUS(HOST_INSTALLED)), -ESTALE);
        cr_assert_eq(store_host_set_install_state(st, ie, id[0], HOST_INSTALLING_IN_PROGRESS, "in progress", &pr, -1,
                                                  STORE_STATUS(HOST_PREPARING_FOR_INSTALLATION)), 0);
        cr_assert_eq(store_host_get(st, ie, id[0], &h), 0);
        cr_assert_eq(h.status, HOST_INSTALLING_IN_PROGRESS);
        cr_assert_str_eq(h.progress.stage, "writing-image");
        cr_assert_eq(h.progress.percent, 40);
        cr_assert_eq(h.applied_revision, 0);
        host_free(&h);
        cr_assert_eq(store_host_set_install_state(st, ie, id[0], HOST_INSTALLED, "done", NULL, 1, 0), 0);
        cr_assert_eq(store_host_get(st, ie, id[0], &h), 0);
        cr_assert_eq(h.status, HOST_INSTALLED);
        cr_assert_str_eq(h.progress.stage, "writing-image", "progress kept when none is given");
        cr_assert_eq(h.applied_revision, 1);
        host_free(&h);
        cr_assert_eq(tu_store_host_set_applied_revision(st, ie, id[0], 3), 0);
        cr_assert_eq(store_host_get(st, ie, id[0], &h), 0);
        cr_assert_eq(h.applied_revision, 3);
        json_object *o = host_to_json(&h, 0);
        cr_assert_str_eq(tu_jstr(o, "applied_revision"), "3");
        json_object_put(o);
        host_free(&h);
        cr_assert_eq(tu_store_host_set_applied_revision(st, ie, "00000000-0000-4000-8000-999999999999", 3), -ENOENT);

        /* Stale installs: error, only for hosts still silent and installing. */
        cr_assert_eq(store_host_set_status(st, ie, id[1], HOST_INSTALLING, NULL, NULL, 0, 0), 0);
        cr_assert_eq(store_host_checkin(st, ie, id[1], "2026-01-01T00:00:00Z"), 0);
        cr_assert_eq(store_host_checkin(st, ie, id[0], "2026-01-01T00:00:00Z"), 0);
        const uint32_t mask = STORE_STATUS(HOST_INSTALLING) | STORE_STATUS(HOST_INSTALLING_IN_PROGRESS);
        struct host_list l;
        cr_assert_eq(store_host_list_stale(st, "2026-01-01T00:05:00Z", mask, NULL, false, 10, &l), 0);
        cr_assert_eq(l.n, 1);
        bool changed[1];
        cr_assert_eq(store_host_mark_stale(st, l.v, l.n, "2026-01-01T00:05:00Z", mask, HOST_ERROR, "silent", changed), 1);
        cr_assert(changed[0]);
        cr_assert_eq(store_host_mark_stale(st, l.v, l.n, "2026-01-01T00:05:00Z", mask, HOST_ERROR, "silent", changed), 0);
        cr_assert_not(changed[0]);
        host_list_free(&l);
        cr_assert_eq(store_host_get(st, ie, id[1], &h), 0);
        cr_assert_eq(h.status, HOST_ERROR);
        cr_assert_str_eq(h.status_info, "silent");
        host_free(&h);

        /* Hosts waiting for their installed system's first check-in are
         * listed apart (by progress stage), with their own cutoff. */
        struct host_progress rb = { .stage = "rebooting", .percent = 100 };
        cr_assert_eq(store_host_set_install_state(st, ie, id[1], HOST_INSTALLING_IN_PROGRESS, "waiting", &rb, 1, 0), 0);
        cr_assert_eq(store_host_checkin(st, ie, id[1], "2026-01-01T00:00:00Z"), 0);
        cr_assert_eq(store_host_list_stale(st, "2026-01-01T00:05:00Z", mask, "rebooting", true, 10, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].id, id[1]);
        host_list_free(&l);
        cr_assert_eq(store_host_list_stale(st, "2026-01-01T00:05:00Z", mask, "rebooting", false, 10, &l), 0);
        cr_assert_eq(l.n, 0, "a rebooting host is not a silent install");
        host_list_free(&l);
        cr_assert_eq(store_host_set_install_state(st, ie, id[1], HOST_ERROR, "silent", NULL, -1, 0), 0);

        /* A new binding starts a new story: applied_revision back to 0. */
        cr_assert_eq(tu_store_cluster_set_status(st, cl, "installed", NULL, NULL, 0), 0);
        cr_assert_eq(store_host_bind(st, ie, id[0], NULL, HOST_UNBINDING_PENDING_USER_ACTION, NULL, 0), 0);
        cr_assert_eq(store_host_get(st, ie, id[0], &h), 0);
        cr_assert_eq(h.applied_revision, 0);
        host_free(&h);
        free(ie);
        free(cl);
}

/* ---- people's tokens (issue 12, items 8 and 13) ---------------------------- */

static void mk_token(const char *id, const char *role, const char *owner) {
        tu_store_token(st, id, role, owner);
}

Test(store, tokens_record_list_and_revoke) {
        const char *a = "11111111-2222-4333-8444-555555555555", *b = "21111111-2222-4333-8444-555555555555";
        const char *unknown = "31111111-2222-4333-8444-555555555555";
        mk_token(a, "infra-admin", "admin");
        mk_token(b, "cluster-creator", "alice");
        struct token_record dup = { .id = (char *) a, .role = "infra-admin", .owner = "admin",
                                   .created_at = "2026-01-01T00:00:00Z", .expires_at = "2027-01-01T00:00:00Z" };
        cr_assert_eq(store_token_add(st, &dup), -EEXIST);
        dup.role = "root";
        cr_assert_eq(store_token_add(st, &dup), -EINVAL);

        cr_assert_eq(store_token_check(st, a), 0);
        cr_assert_eq(store_token_check(st, unknown), -ENOENT, "a token the store never issued");
        cr_assert_eq(store_token_revoke(st, b), 0);
        cr_assert_eq(store_token_revoke(st, b), 1, "already revoked");
        cr_assert_eq(store_token_revoke(st, unknown), -ENOENT);
        cr_assert_eq(store_token_check(st, b), -EKEYREVOKED);
        cr_assert_eq(store_token_check(st, a), 0, "the other one is untouched");

        struct token_record_list l;
        struct list_page pg = { .limit = 1 };
        cr_assert_eq(store_token_list(st, NULL, &pg, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].id, a);
        cr_assert_null(l.v[0].revoked_at);
        cr_assert_gt(l.next_after, 0);
        pg.after = l.next_after;
        token_record_list_free(&l);
        cr_assert_eq(store_token_list(st, NULL, &pg, &l), 0);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].id, b);
        cr_assert_str_eq(l.v[0].role, "cluster-creator");
        cr_assert_str_eq(l.v[0].owner, "alice");
        cr_assert_str_eq(l.v[0].expires_at, "2027-01-01T00:00:00Z");
        cr_assert_not_null(l.v[0].revoked_at);
        cr_assert_eq(l.next_after, 0);
        token_record_list_free(&l);
        cr_assert_eq(store_token_list(st, "admin", NULL, &l), 0);
        cr_assert_eq(l.n, 1);
        token_record_list_free(&l);
}

/* An owner name belongs to one role: an infra-admin "bob" and a creator
 * "bob" would otherwise share every resource owned by "bob". */
Test(store, an_owner_name_has_one_role) {
        mk_token("41111111-2222-4333-8444-555555555555", "infra-admin", "bob");
        mk_token("51111111-2222-4333-8444-555555555555", "infra-admin", "bob");
        struct token_record t = { .id = "61111111-2222-4333-8444-555555555555", .role = "cluster-creator",
                                 .owner = "bob", .created_at = "2026-01-01T00:00:00Z",
                                 .expires_at = "2027-01-01T00:00:00Z" };
        cr_assert_eq(store_token_add(st, &t), -EPERM);
        t.owner = "carol";
        cr_assert_eq(store_token_add(st, &t), 0);
}

/* An infra-env's delete is refused while a host installs or serves another
 * owner's cluster (both listed), else it unbinds its bound hosts (listed). */
Test(store, infra_env_delete_blocks_and_lists) {
        char *ie = mk_infra_env("ann", "rack"), *mine = mk_cluster("ann", "mine"), *theirs = mk_cluster("bob", "theirs");
        char h[3][UUID_STR_LEN];
        for (int i = 0; i < 3; i++) {
                host_uuid(40 + i, h[i]);
                cr_assert_eq(tu_store_host_register(st, ie, h[i], "0.1", NULL), 1);
        }
        cr_assert_eq(store_host_bind(st, ie, h[0], mine, HOST_BINDING, "b", 0), 0);
        cr_assert_eq(store_host_bind(st, ie, h[1], theirs, HOST_BINDING, "b", 0), 0);
        const uint32_t inst = STORE_STATUS(HOST_INSTALLING);
        struct host_list blocked, unbound;
        cr_assert_eq(store_infra_env_delete(st, ie, inst, &blocked, &unbound), -EBUSY);
        cr_assert_eq(blocked.n, 1, "the host of bob's cluster");
        cr_assert_str_eq(blocked.v[0].id, h[1]);
        cr_assert_eq(unbound.n, 0);
        host_list_free(&blocked);
        cr_assert_eq(store_host_bind(st, ie, h[1], NULL, HOST_DISCOVERING_UNBOUND, "u", 0), 0);
        cr_assert_eq(store_host_set_status(st, ie, h[2], HOST_INSTALLING, "i", NULL, 0, 0), 0);
        cr_assert_eq(store_infra_env_delete(st, ie, inst, &blocked, NULL), -EBUSY);
        cr_assert_eq(blocked.n, 1, "the installing host");
        cr_assert_str_eq(blocked.v[0].id, h[2]);
        host_list_free(&blocked);
        cr_assert_eq(store_host_set_status(st, ie, h[2], HOST_ERROR, "e", NULL, 0, 0), 0);
        cr_assert_eq(store_infra_env_delete(st, ie, inst, &blocked, &unbound), 0);
        cr_assert_eq(blocked.n, 0);
        cr_assert_eq(unbound.n, 1, "the host of ann's own cluster");
        cr_assert_str_eq(unbound.v[0].id, h[0]);
        cr_assert_str_eq(unbound.v[0].cluster_id, mine);
        host_list_free(&unbound);
        int64_t n = -1;
        cr_assert_eq(store_cluster_count_hosts(st, mine, 0, &n), 0);
        cr_assert_eq(n, 0);
        free(ie);
        free(mine);
        free(theirs);
}

Test(store, host_register_capped) {
        char *ie = mk_infra_env("ann", "rack");
        char h[3][UUID_STR_LEN];
        for (int i = 0; i < 3; i++)
                host_uuid(50 + i, h[i]);
        cr_assert_eq(tu_store_host_register_capped(st, ie, h[0], "0.1", 2, NULL), 1);
        cr_assert_eq(tu_store_host_register_capped(st, ie, h[1], "0.1", 2, NULL), 1);
        cr_assert_eq(tu_store_host_register_capped(st, ie, h[2], "0.1", 2, NULL), -EDQUOT);
        cr_assert_eq(tu_store_host_register_capped(st, ie, h[0], "0.2", 2, NULL), 0, "a known host, whatever the cap");
        cr_assert_eq(tu_store_host_register_capped(st, ie, h[2], "0.1", 0, NULL), 1, "0: no cap");
        free(ie);
}

Test(store, event_prune_by_age_and_count) {
        char a[UUID_STR_LEN], b[UUID_STR_LEN];
        host_uuid(60, a);
        host_uuid(61, b);
        for (int i = 0; i < 30; i++) {
                struct event e;
                event_init(&e);
                e.severity = EVENT_INFO;
                e.category = EVENT_CAT_AGENT;
                e.host_id = strdup(i < 5 ? a : b);
                e.message = strdup("m");
                e.time = strdup(i < 5 ? "2020-01-01T00:00:00Z" : "2030-01-01T00:00:00Z");
                cr_assert_eq(store_event_append(st, &e), 0);
                event_free(&e);
        }
        int64_t mark = 0;
        cr_assert_eq(store_event_prune(st, "2025-01-01T00:00:00Z", NULL, 10, &mark), 5 + 15);
        cr_assert_gt(mark, 0);
        struct event_list l;
        struct event_filter f = { .host_id = b, .limit = 100 };
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_eq(l.n, 10, "b keeps its newest 10");
        int64_t first = l.v[0].id;
        event_list_free(&l);
        f.host_id = a;
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_eq(l.n, 0, "a's are too old");
        event_list_free(&l);
        /* Nothing new since the mark: nothing to count, nothing goes. */
        cr_assert_eq(store_event_prune(st, "2025-01-01T00:00:00Z", NULL, 5, &mark), 0);
        cr_assert_eq(store_event_prune(st, NULL, NULL, 5, NULL), 5, "without a mark every host is counted");
        f.host_id = b;
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_eq(l.n, 5);
        cr_assert_eq(l.v[0].id, first + 5);
        event_list_free(&l);
        cr_assert_eq(store_event_prune(st, "junk", NULL, 5, NULL), -EINVAL);
}

/* ---- operator catalogs (issue 15) ------------------------------------------ */

static void catalog_names(const char *want) {
        struct catalog_record_list l;
        char got[512] = "";
        cr_assert_eq(store_catalog_list(st, &l), 0);
        for (size_t i = 0; i < l.n; i++) {
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "", l.v[i].name);
                cr_assert_null(l.v[i].files, "lists carry no files");
                cr_assert_gt(l.v[i].files_len, 0, "but their size");
        }
        cr_assert_str_eq(got, want);
        catalog_record_list_free(&l);
}

Test(store, catalogs_create_read_list_delete) {
        /* The files are kept byte for byte, a NUL in them too. */
        static const char files[] = "[{\"content\":\"x\",\"path\":\"a.json\"}]\0tail";
        struct catalog_record c, got;
        catalog_record_init(&c);
        c.name = strdup("community");
        c.owner = strdup("admin");
        c.priority = 10;
        c.digest = strdup("sha256:abcd");
        c.files = malloc(sizeof files);
        memcpy(c.files, files, sizeof files);
        c.files_len = sizeof files - 1;
        c.n_files = 1, c.n_packages = 4, c.n_channels = 4, c.n_bundles = 10, c.n_manifests = 12, c.n_ignored = 1;
        cr_assert_eq(store_catalog_create(st, &c), 0);
        cr_assert(uuid_is_valid(c.id));
        cr_assert_not_null(c.created_at);
        char *red = tu_store_catalog(st, "redhat", 0, NULL);
        char *alpha = tu_store_catalog(st, "alpha", 0, NULL);
        char *neg = tu_store_catalog(st, "first", -1000, NULL);
        catalog_names("first,alpha,redhat,community");

        cr_assert_eq(store_catalog_get(st, c.id, &got), 0);
        cr_assert_str_eq(got.name, "community");
        cr_assert_eq(got.priority, 10);
        cr_assert_str_eq(got.owner, "admin");
        cr_assert_str_eq(got.digest, "sha256:abcd");
        cr_assert_eq(got.files_len, sizeof files - 1);
        cr_assert(!memcmp(got.files, files, sizeof files), "the same bytes, NUL-terminated");
        cr_assert_eq(got.n_bundles, 10);
        cr_assert_eq(got.n_manifests, 12);
        cr_assert_eq(got.n_ignored, 1);
        cr_assert_str_eq(got.created_at, c.created_at);
        catalog_record_free(&got);
        cr_assert_eq(store_catalog_get_by_name(st, "redhat", &got), 0);
        cr_assert_str_eq(got.id, red);
        cr_assert_eq(got.n_packages, 2);
        catalog_record_free(&got);
        cr_assert_eq(store_catalog_get_by_name(st, "nope", &got), -ENOENT);
        cr_assert_null(got.name);

        /* A name or id is taken once. */
        struct catalog_record dup;
        catalog_record_init(&dup);
        dup.name = strdup("redhat");
        dup.owner = strdup("admin");
        dup.digest = strdup("sha256:1");
        dup.files = strdup("[]");
        dup.files_len = 2;
        cr_assert_eq(store_catalog_create(st, &dup), -EEXIST);
        free(dup.name);
        dup.name = strdup("other");
        free(dup.id);
        dup.id = strdup(alpha);
        cr_assert_eq(store_catalog_create(st, &dup), -EEXIST);
        catalog_record_free(&dup);

        cr_assert_eq(store_catalog_delete(st, red), 0);
        cr_assert_eq(store_catalog_delete(st, red), -ENOENT);
        cr_assert_eq(store_catalog_get(st, red, &got), -ENOENT);
        catalog_names("first,alpha,community");
        catalog_record_free(&c);
        free(red);
        free(alpha);
        free(neg);
}

Test(store, catalog_argument_checks) {
        struct catalog_record c, got;
        catalog_record_init(&c);
        cr_assert_eq(store_catalog_create(st, &c), -EINVAL, "no name");
        c.name = strdup("x");
        c.owner = strdup("admin");
        c.digest = strdup("sha256:1");
        cr_assert_eq(store_catalog_create(st, &c), -EINVAL, "no files");
        c.files = strdup("[]");
        c.files_len = 2;
        c.priority = (int64_t) INT32_MAX + 1;
        cr_assert_eq(store_catalog_create(st, &c), -EINVAL, "priority out of range");
        c.priority = 0;
        c.n_bundles = -1;
        cr_assert_eq(store_catalog_create(st, &c), -EINVAL, "a negative count");
        c.n_bundles = 0;
        c.files_len = (size_t) STORE_MAX_CATALOG_BYTES + 1;
        cr_assert_eq(store_catalog_create(st, &c), -E2BIG);
        c.files_len = 2;
        free(c.name);
        c.name = malloc(STORE_MAX_CATALOG_NAME + 2);
        memset(c.name, 'n', STORE_MAX_CATALOG_NAME + 1);
        c.name[STORE_MAX_CATALOG_NAME + 1] = 0;
        cr_assert_eq(store_catalog_create(st, &c), -EINVAL, "a name too long");
        c.name[STORE_MAX_CATALOG_NAME] = 0;
        cr_assert_eq(store_catalog_create(st, &c), 0, "at the limit");
        cr_assert_eq(store_catalog_get(st, "not-a-uuid", &got), -EINVAL);
        cr_assert_eq(store_catalog_get_by_name(st, "", &got), -EINVAL);
        cr_assert_eq(store_catalog_delete(st, "not-a-uuid"), -EINVAL);
        cr_assert_eq(store_catalog_delete(st, "71111111-2222-4333-8444-555555555555"), -ENOENT);
        catalog_record_free(&c);
}

Test(store, catalogs_survive_a_reopen) {
        char *id = tu_store_catalog(st, "kept", 5, NULL);
        store_close(st);
        cr_assert_eq(store_open(url, &st), 0);
        struct catalog_record got;
        cr_assert_eq(store_catalog_get(st, id, &got), 0);
        cr_assert_str_eq(got.name, "kept");
        cr_assert_eq(got.priority, 5);
        catalog_record_free(&got);
        free(id);
}

/* Subscriptions: one per package of a cluster, in the order made, gone with
 * their cluster; the refusals. */
Test(store, subscriptions_create_list_delete) {
        char *a = tu_store_cluster(st, "alice", "a"), *b = tu_store_cluster(st, "bob", "b");
        struct subscription_record s1 = { .cluster_id = strdup(a), .package = strdup("myapp"), .owner = strdup("alice"),
                                         .channel = strdup("stable"), .version_range = strdup(">=1.0.0"),
                                         .skip_dependencies = true };
        struct subscription_record s2 = { .cluster_id = strdup(a), .package = strdup("etcd"), .owner = strdup("alice"),
                                         .catalog = strdup("redhat") };
        struct subscription_record s3 = { .cluster_id = strdup(b), .package = strdup("etcd"), .owner = strdup("bob") };
        cr_assert_eq(store_subscription_create(st, &s1), 0);
        cr_assert_eq(store_subscription_create(st, &s2), 0);
        cr_assert_eq(store_subscription_create(st, &s3), 0);
        cr_assert_not_null(s1.id);
        cr_assert_not_null(s1.created_at);
        struct subscription_record dup = { .cluster_id = strdup(a), .package = strdup("etcd"), .owner = strdup("x") };
        cr_expect_eq(store_subscription_create(st, &dup), -EEXIST);
        subscription_record_free(&dup);
        struct subscription_record_list l;
        cr_assert_eq(store_subscription_list(st, a, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_expect_str_eq(l.v[0].package, "myapp");
        cr_expect_str_eq(l.v[0].channel, "stable");
        cr_expect_str_eq(l.v[0].version_range, ">=1.0.0");
        cr_expect(l.v[0].skip_dependencies);
        cr_expect_null(l.v[0].catalog);
        cr_expect_str_eq(l.v[1].catalog, "redhat");
        cr_expect_not(l.v[1].skip_dependencies);
        subscription_record_list_free(&l);
        cr_assert_eq(store_subscription_list(st, NULL, &l), 0);
        cr_expect_eq(l.n, 3);
        subscription_record_list_free(&l);
        cr_expect_eq(store_subscription_delete(st, a, "etcd"), 0);
        cr_expect_eq(store_subscription_delete(st, a, "etcd"), -ENOENT);
        cr_assert_eq(store_cluster_delete(st, b), 0);
        cr_assert_eq(store_subscription_list(st, NULL, &l), 0);
        cr_expect_eq(l.n, 1, "the deleted cluster's subscription went with it");
        subscription_record_list_free(&l);
        subscription_record_free(&s1);
        subscription_record_free(&s2);
        subscription_record_free(&s3);
        free(a);
        free(b);
}

Test(store, subscription_argument_checks) {
        char *a = tu_store_cluster(st, "alice", "a");
        struct subscription_record none = { .cluster_id = strdup("8a6e0804-2bd0-4672-b79d-d97027f9071a"),
                                           .package = strdup("etcd"), .owner = strdup("x") };
        cr_expect_eq(store_subscription_create(st, &none), -ENOENT);
        subscription_record_free(&none);
        struct subscription_record nopkg = { .cluster_id = strdup(a), .owner = strdup("x") };
        cr_expect_eq(store_subscription_create(st, &nopkg), -EINVAL);
        subscription_record_free(&nopkg);
        struct subscription_record empty = { .cluster_id = strdup(a), .package = strdup("etcd"), .owner = strdup("x"),
                                            .channel = strdup("") };
        cr_expect_eq(store_subscription_create(st, &empty), -EINVAL);
        subscription_record_free(&empty);
        struct subscription_record_list l;
        cr_expect_eq(store_subscription_list(st, "not-an-id", &l), -EINVAL);
        cr_expect_eq(store_subscription_delete(st, a, ""), -EINVAL);
        free(a);
}

/* Add-on proxies (issue 16): by id or name, updates only from the
 * generation read, no delete while releases remain; releases upserted,
 * filtered, paged, gone with their cluster; what node agents found, per
 * cluster; host counts. */
Test(store, addon_proxies_releases_and_found) {
        char *a = tu_store_cluster(st, "alice", "a"), *b = tu_store_cluster(st, "bob", "b");
        struct addon_proxy_record p = { .name = strdup("mon"), .owner = strdup("admin"), .spec = strdup("{\"v\":1}") };
        cr_assert_eq(store_addon_proxy_create(st, &p), 0);
        cr_assert_eq(p.generation, 1);
        struct addon_proxy_record dup = { .name = strdup("mon"), .owner = strdup("admin"), .spec = strdup("{}") };
        cr_expect_eq(store_addon_proxy_create(st, &dup), -EEXIST);
        addon_proxy_record_free(&dup);
        struct addon_proxy_record got;
        cr_assert_eq(store_addon_proxy_get(st, "mon", &got), 0);
        cr_expect_str_eq(got.id, p.id);
        addon_proxy_record_free(&got);
        cr_assert_eq(store_addon_proxy_get(st, p.id, &got), 0);
        cr_expect_str_eq(got.spec, "{\"v\":1}");
        cr_expect_not(got.paused);
        /* An update from generation 1 wins once; a second from 1 is stale. */
        free(got.spec);
        got.spec = strdup("{\"v\":2}");
        got.prev_spec = strdup("{\"v\":1}");
        got.generation = 2;
        got.paused = true;
        got.failure_base = 3;
        got.conditions = strdup("[]");
        cr_assert_eq(store_addon_proxy_update(st, &got, 1), 0);
        cr_expect_eq(store_addon_proxy_update(st, &got, 1), -ESTALE);
        addon_proxy_record_free(&got);
        cr_assert_eq(store_addon_proxy_get(st, "mon", &got), 0);
        cr_expect_eq(got.generation, 2);
        cr_expect(got.paused);
        cr_expect_eq(got.failure_base, 3);
        cr_expect_str_eq(got.prev_spec, "{\"v\":1}");
        cr_expect_str_eq(got.conditions, "[]");
        addon_proxy_record_free(&got);
        cr_expect_eq(store_addon_proxy_get(st, "nope", &got), -ENOENT);

        /* Releases: put twice is one row; filters; pages. */
        const char *cl[] = { a, b };
        for (int i = 0; i < 2; i++) {
                struct addon_release_record r = { .proxy_id = strdup(p.id), .cluster_id = strdup(cl[i]),
                                                 .content = strdup("{\"values\":\"a: 1\"}"), .status = strdup("Pending"),
                                                 .revision = 1, .generation = 1 };
                cr_assert_eq(store_addon_release_put(st, &r), 0);
                free(r.status);
                r.status = strdup("Rolling");
                r.revision = 2;
                r.payload_revision = 7;
                r.started_at = 1000;
                r.conflict = i == 1;
                r.message = strdup("waiting");
                cr_assert_eq(store_addon_release_put(st, &r), 0);
                addon_release_record_free(&r);
        }
        struct addon_release_record_list l;
        cr_assert_eq(store_addon_release_list(st, p.id, NULL, NULL, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_expect_str_eq(l.v[0].cluster_id, a);
        cr_expect_str_eq(l.v[0].status, "Rolling");
        cr_expect_eq(l.v[0].revision, 2);
        cr_expect_eq(l.v[0].payload_revision, 7);
        cr_expect_eq(l.v[0].started_at, 1000);
        cr_expect_str_eq(l.v[0].message, "waiting");
        cr_expect_not(l.v[0].conflict);
        cr_expect(l.v[1].conflict);
        addon_release_record_list_free(&l);
        struct list_page pg = { .limit = 1 };
        cr_assert_eq(store_addon_release_list(st, NULL, NULL, &pg, &l), 0);
        cr_expect_eq(l.n, 1);
        cr_expect_gt(l.next_after, 0, "one more page");
        pg.after = l.next_after;
        addon_release_record_list_free(&l);
        cr_assert_eq(store_addon_release_list(st, NULL, NULL, &pg, &l), 0);
        cr_expect_eq(l.n, 1);
        cr_expect_str_eq(l.v[0].cluster_id, b);
        cr_expect_eq(l.next_after, 0);
        addon_release_record_list_free(&l);
        cr_expect_eq(store_addon_proxy_delete(st, p.id), -EBUSY, "releases remain");
        struct addon_release_record bad = { .proxy_id = strdup(p.id),
                                           .cluster_id = strdup("8a6e0804-2bd0-4672-b79d-d97027f9071a"),
                                           .content = strdup("{}"), .status = strdup("Pending"), .revision = 1 };
        cr_expect_eq(store_addon_release_put(st, &bad), -ENOENT, "no such cluster");
        bad.revision = 0;
        cr_expect_eq(store_addon_release_put(st, &bad), -EINVAL);
        addon_release_record_free(&bad);
        cr_expect_eq(store_addon_release_list(st, "not-an-id", NULL, NULL, &l), -EINVAL);

        /* Found objects and host counts, by cluster. */
        char *ie = tu_store_infra_env(st, "admin", "rack");
        const char *hid = "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a";
        cr_assert_eq(tu_store_host_register(st, ie, hid, "0.1", NULL), 1);
        cr_assert_eq(store_host_bind(st, ie, hid, a, HOST_DISCOVERING, "bound", 0), 0);
        cr_assert_eq(store_host_found_set(st, ie, hid, "[{\"kind\":\"HelmChart\"}]"), 0);
        cr_assert_eq(store_host_found_set(st, ie, hid, "[]"), 0);
        cr_expect_eq(store_host_found_set(st, ie, "8a6e0804-2bd0-4672-b79d-d97027f9071a", "[]"), -ENOENT);
        struct store_host_found_list fl;
        cr_assert_eq(store_host_found_list(st, a, &fl), 0);
        cr_assert_eq(fl.n, 1);
        cr_expect_str_eq(fl.v[0].found, "[]", "the latest report");
        cr_expect_str_eq(fl.v[0].cluster_id, a);
        store_host_found_list_free(&fl);
        cr_assert_eq(store_host_found_list(st, b, &fl), 0);
        cr_expect_eq(fl.n, 0);
        store_host_found_list_free(&fl);
        struct store_cluster_count *counts;
        size_t n;
        cr_assert_eq(store_cluster_host_counts(st, &counts, &n), 0);
        cr_assert_eq(n, 1);
        cr_expect_str_eq(counts[0].cluster_id, a);
        cr_expect_eq(counts[0].hosts, 1);
        free(counts);

        /* A cluster's releases go with it; then the proxy may go. */
        cr_assert_eq(store_host_bind(st, ie, hid, NULL, HOST_DISCOVERING_UNBOUND, "unbound", 0), 0);
        cr_assert_eq(store_cluster_delete(st, a), 0);
        cr_assert_eq(store_cluster_delete(st, b), 0);
        cr_assert_eq(store_addon_release_list(st, NULL, NULL, NULL, &l), 0);
        cr_expect_eq(l.n, 0);
        addon_release_record_list_free(&l);
        cr_expect_eq(store_addon_proxy_delete(st, p.id), 0);
        cr_expect_eq(store_addon_proxy_delete(st, p.id), -ENOENT);
        addon_proxy_record_free(&p);
        free(ie);
        free(a);
        free(b);
}

/* Operands (issue 17): one per identity, applied again keeps its id;
 * listed in the order first applied; deleted by id; gone with the
 * cluster. A subscription's cleanup setting. */
Test(store, operands_and_cleanup) {
        char *a = tu_store_cluster(st, "alice", "a");
        struct operand_record v[2] = {
                { .cluster_id = strdup(a), .package = strdup("etcd"), .group = strdup("etcd.database.coreos.com"),
                  .version = strdup("v1beta2"), .kind = strdup("EtcdCluster"), .namespace = strdup("db"),
                  .name = strdup("main"), .file = strdup("e.yaml"), .content = strdup("one"), .owner = strdup("alice") },
                { .cluster_id = strdup(a), .package = strdup("prometheus"), .group = strdup("monitoring.coreos.com"),
                  .version = strdup("v1"), .kind = strdup("Prometheus"), .name = strdup("k8s"),
                  .file = strdup("p.yaml"), .content = strdup("two"), .owner = strdup("alice") },
        };
        cr_assert_eq(store_operand_put(st, v, 2), 0);
        char *first = strdup(v[0].id);
        /* The same EtcdCluster again, new bytes: the same id. */
        free(v[0].content);
        v[0].content = strdup("three");
        cr_assert_eq(store_operand_put(st, v, 1), 0);
        cr_expect_str_eq(v[0].id, first);
        struct operand_record_list l;
        cr_assert_eq(store_operand_list(st, a, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_expect_str_eq(l.v[0].content, "three");
        cr_expect_str_eq(l.v[0].namespace, "db");
        cr_expect_null(l.v[1].namespace, "cluster-scoped");
        cr_expect_str_eq(l.v[1].package, "prometheus");
        operand_record_list_free(&l);
        cr_expect_eq(store_operand_delete(st, a, first), 0);
        cr_expect_eq(store_operand_delete(st, a, first), -ENOENT);
        cr_expect_eq(store_operand_delete(st, a, "nope"), -EINVAL);
        struct operand_record bad = { .cluster_id = strdup("8a6e0804-2bd0-4672-b79d-d97027f9071a"),
                                     .package = strdup("p"), .group = strdup(""), .version = strdup("v1"),
                                     .kind = strdup("K"), .name = strdup("n"), .file = strdup("f"),
                                     .content = strdup("c"), .owner = strdup("o") };
        cr_expect_eq(store_operand_put(st, &bad, 1), -ENOENT, "no such cluster");
        free(bad.kind);
        bad.kind = NULL;
        cr_expect_eq(store_operand_put(st, &bad, 1), -EINVAL);
        operand_record_free(&bad);

        struct subscription_record sub = { .cluster_id = strdup(a), .package = strdup("etcd"), .owner = strdup("a"),
                                          .cleanup = true };
        cr_assert_eq(store_subscription_create(st, &sub), 0);
        subscription_record_free(&sub);
        struct subscription_record_list sl;
        cr_assert_eq(store_subscription_list(st, a, &sl), 0);
        cr_expect(sl.v[0].cleanup);
        subscription_record_list_free(&sl);
        cr_expect_eq(store_subscription_set_cleanup(st, a, "etcd", false), 0);
        cr_expect_eq(store_subscription_set_cleanup(st, a, "nope", false), -ENOENT);
        cr_assert_eq(store_subscription_list(st, a, &sl), 0);
        cr_expect_not(sl.v[0].cleanup);
        cr_expect_null(sl.v[0].uninstall);
        subscription_record_list_free(&sl);

        /* An uninstall: set only over what it was, with operands dropped in
         * the same transaction. */
        cr_assert_eq(store_operand_list(st, a, &l), 0);
        cr_assert_eq(l.n, 1);
        const char *drop[] = { l.v[0].id, "8a6e0804-2bd0-4672-b79d-d97027f9071a" };
        cr_expect_eq(store_subscription_set_uninstall(st, a, "etcd", "{}", "{\"a\":1}", drop, 2), -ESTALE,
                     "not the expected one: nothing changes");
        cr_assert_eq(store_subscription_list_uninstalling(st, &sl), 0);
        cr_expect_eq(sl.n, 0);
        subscription_record_list_free(&sl);
        cr_assert_eq(store_subscription_set_uninstall(st, a, "etcd", NULL, "{\"a\":1}", drop, 2), 0);
        operand_record_list_free(&l);
        cr_assert_eq(store_operand_list(st, a, &l), 0);
        cr_expect_eq(l.n, 0, "dropped with it");
        operand_record_list_free(&l);
        cr_assert_eq(store_subscription_list_uninstalling(st, &sl), 0);
        cr_assert_eq(sl.n, 1);
        cr_expect_str_eq(sl.v[0].uninstall, "{\"a\":1}");
        cr_expect_str_eq(sl.v[0].package, "etcd");
        subscription_record_list_free(&sl);
        cr_expect_eq(store_subscription_set_uninstall(st, a, "etcd", NULL, "{}", NULL, 0), -ESTALE);
        cr_expect_eq(store_subscription_set_uninstall(st, a, "nope", NULL, "{}", NULL, 0), -ENOENT);
        cr_assert_eq(store_subscription_set_uninstall(st, a, "etcd", "{\"a\":1}", NULL, NULL, 0), 0);
        cr_assert_eq(store_subscription_list_uninstalling(st, &sl), 0);
        cr_expect_eq(sl.n, 0, "none any more");
        subscription_record_list_free(&sl);

        cr_assert_eq(store_cluster_delete(st, a), 0);
        cr_assert_eq(store_operand_list(st, a, &l), 0);
        cr_expect_eq(l.n, 0, "the operands went with their cluster");
        operand_record_list_free(&l);
        for (int i = 0; i < 2; i++)
                operand_record_free(&v[i]);
        free(first);
        free(a);
}
