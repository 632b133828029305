/* Store fixtures (storeutil.h). */
#include "storeutil.h"

#include <criterion/criterion.h>
#ifdef MUSTER_WITH_POSTGRES
#include <libpq-fe.h>
#endif
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "catalogs.h"
#include "crypto.h"
#include "svc.h"
#include "testutil.h"

char *tu_store_infra_env(struct store *st, const char *owner, const char *name) {
        struct infra_env ie;
        infra_env_init(&ie);
        ie.name = strdup(name);
        ie.owner = strdup(owner);
        ie.cpu_architecture = strdup("x86_64");
        ie.pull_secret = strdup("{\"auths\":{}}");
        cr_assert_eq(store_infra_env_create(st, &ie), 0);
        char *id = strdup(ie.id);
        infra_env_free(&ie);
        return id;
}

char *tu_store_cluster(struct store *st, const char *owner, const char *name) {
        struct cluster c;
        cluster_init(&c);
        c.name = strdup(name);
        c.owner = strdup(owner);
        cr_assert_eq(store_cluster_create(st, &c), 0);
        char *id = strdup(c.id);
        cluster_free(&c);
        return id;
}

/* The release of tu_store_release: two files, three documents. */
static const char release_yaml[] = "version: \"%s\"\n"
                                   "os_image:\n  url: https://images.example.test/os.img\n"
                                   "  sha256: \"0000000000000000000000000000000000000000000000000000000000000000\"\n"
                                   "  size: 1024\n"
                                   "known_capabilities: [Console, Insights]\n"
                                   "capability_sets:\n  None: []\n  v4.11: [Console]\n";
static const char file_a[] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"
                             "  annotations:\n    capability.openshift.io/name: Console\n"
                             "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
                             "data:\n  k: v\n";
static const char file_b[] = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b0\n"
                             "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b1\n";

void tu_store_release(const char *version, struct release_info *info, struct manifest_list *ms) {
        char y[1024], err[256] = "";
        snprintf(y, sizeof y, release_yaml, version);
        release_info_init(info);
        cr_assert_eq(release_info_parse_yaml(y, strlen(y), info, err, sizeof err), 0, "%s", err);
        *ms = (struct manifest_list) { 0 };
        cr_assert_eq(manifest_parse_file("a.yaml", file_a, strlen(file_a), ms, err, sizeof err), 0, "%s", err);
        cr_assert_eq(manifest_parse_file("b.yaml", file_b, strlen(file_b), ms, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ms->n, 3);
}

void tu_store_token(struct store *st, const char *id, const char *role, const char *owner) {
        struct store_token t = { .id = (char *) id, .role = (char *) role, .owner = (char *) owner,
                                 .created_at = "2026-01-01T00:00:00Z", .expires_at = "2027-01-01T00:00:00Z" };
        cr_assert_eq(store_token_add(st, &t), 0, "%s", id);
}

char *tu_store_catalog(struct store *st, const char *name, int64_t priority, const char *files) {
        struct store_catalog c;
        store_catalog_init(&c);
        c.name = strdup(name);
        c.owner = strdup("admin");
        c.priority = priority;
        c.files = strdup(files ? files : "[{\"content\":\"schema: olm.package\",\"path\":\"a.yaml\"}]");
        c.files_len = strlen(c.files);
        c.digest = strdup("sha256:0000");
        c.n_files = 1;
        c.n_packages = 2;
        c.n_channels = 3;
        c.n_bundles = 4;
        c.n_manifests = 5;
        c.n_ignored = 6;
        cr_assert_eq(store_catalog_create(st, &c), 0, "%s", name);
        char *id = strdup(c.id);
        store_catalog_free(&c);
        return id;
}

void tu_svc_open(struct svc *sv, struct store **st, struct crypto_key **key, struct muster_config *cfg, char **dir) {
        char path[4200];
        *dir = tu_mkdtemp();
        cr_assert_not_null(*dir);
        snprintf(path, sizeof path, "%s/muster.db", *dir);
        cr_assert_eq(store_open(path, st), 0);
        cr_assert_eq(crypto_key_generate(key), 0);
        snprintf(cfg->state_dir, sizeof cfg->state_dir, "%s", *dir);
        cr_assert_eq(svc_init(sv, *st, *key, cfg), 0);
}

void tu_svc_close(struct svc *sv, struct store *st, struct crypto_key *key, char *dir) {
        svc_fini(sv);
        store_close(st);
        crypto_key_free(key);
        tu_rm_rf(dir);
        free(dir);
}

void tu_svc_add_fixture_catalog(struct svc *sv, const char *name, int priority) {
        char path[4096], err[1024];
        struct catalog_file *files = NULL;
        size_t n = 0;
        struct store_catalog rec;
        snprintf(path, sizeof path, "%s/catalogs/%s", MUSTER_FIXTURES_DIR, name);
        cr_assert_eq(catalog_read_dir(path, &files, &n, err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_catalog_add(sv, name, priority, files, n, "admin", &rec, err, sizeof err), 0, "%s", err);
        svc_catalog_record_free(&rec);
        catalog_files_free(files, n);
}

#ifdef MUSTER_WITH_POSTGRES
/* A statement on MUSTER_TEST_PG's maintenance database. */
static void pg_admin(const char *sql) {
        const char *info = getenv("MUSTER_TEST_PG");
        cr_assert(info && *info, "MUSTER_TEST_PG is not set: run the suite through scripts/with-pg-test-server");
        PGconn *c = PQconnectdb(info);
        cr_assert_eq(PQstatus(c), CONNECTION_OK, "MUSTER_TEST_PG=%s: %s", info, PQerrorMessage(c));
        PGresult *r = PQexec(c, sql);
        cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
}

void tu_pg_database(char *out, size_t n, char *db, size_t db_n) {
        static unsigned made;
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        snprintf(db, db_n, "t_%d_%ld_%ld_%u", (int) getpid(), (long) t.tv_sec, t.tv_nsec, made++);
        char sql[256];
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
        pg_admin(sql);
        /* The server's socket folder and port, from the connection string. */
        char *err = NULL;
        PQconninfoOption *opts = PQconninfoParse(getenv("MUSTER_TEST_PG"), &err);
        cr_assert_not_null(opts, "MUSTER_TEST_PG: %s", err ? err : "?");
        const char *host = NULL, *port = NULL, *user = NULL;
        for (PQconninfoOption *o = opts; o->keyword; o++) {
                if (strcmp(o->keyword, "host") == 0)
                        host = o->val;
                else if (strcmp(o->keyword, "port") == 0)
                        port = o->val;
                else if (strcmp(o->keyword, "user") == 0)
                        user = o->val;
        }
        cr_assert(host && port && user, "MUSTER_TEST_PG needs host, port and user");
        snprintf(out, n, "postgres://%s@/%s?host=%s&port=%s", user, db, host, port);
        PQconninfoFree(opts);
}

void tu_pg_drop(const char *db) {
        char sql[256];
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
        pg_admin(sql);
}
#endif
