/* The catalog services without a socket (issue 15): a struct svc over a real
 * SQLite file. An add parses before it stores, and refuses in words; the
 * resolver's snapshot is sorted by priority then name, shared while nothing
 * changes and kept whole by its holder through a delete; after a restart
 * the catalogs are parsed again from the store; adds, deletes and snapshots
 * from several threads at once. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/catalogload.h"
#include "svc/catalogs.h"
#include "crypto.h"
#include "store/store.h"
#include "storeutil.h"
#include "svc/svc.h"
#include "testutil.h"

static char *dir;
static struct store *st;
static struct crypto_key *key;
static struct svc sv;
static struct muster_config cfg;

static void setup(void) {
        config_defaults(&cfg);
        tu_svc_open(&sv, &st, &key, &cfg, &dir);
}

static void teardown(void) {
        tu_svc_close(&sv, st, key, dir);
}

TestSuite(svc_catalogs, .init = setup, .fini = teardown);

/* The text of a catalog of package `pkg` with bundles pkg.v1.0.0 .. v1.(n-1).0
 * in one channel (malloc'd). */
static char *catalog_text(const char *pkg, int n) {
        size_t cap = 512 + (size_t) n * 512;
        char *t = malloc(cap), *p = t;
        p += sprintf(p, "{\"schema\":\"olm.package\",\"name\":\"%s\",\"defaultChannel\":\"stable\"}\n"
                        "{\"schema\":\"olm.channel\",\"package\":\"%s\",\"name\":\"stable\",\"entries\":[", pkg, pkg);
        for (int i = 0; i < n; i++)
                p += sprintf(p, "%s{\"name\":\"%s.v1.%d.0\"}", i ? "," : "", pkg, i);
        p += sprintf(p, "]}\n");
        for (int i = 0; i < n; i++)
                p += sprintf(p, "{\"schema\":\"olm.bundle\",\"package\":\"%s\",\"name\":\"%s.v1.%d.0\",\"properties\":"
                                "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"%s\",\"version\":\"1.%d.0\"}}]}\n",
                             pkg, pkg, i, pkg, i);
        return t;
}

/* Add catalog `name` holding package `pkg` (n bundles): svc_catalog_add's result. */
static int add(const char *name, int64_t priority, const char *pkg, int n, char *err) {
        char *t = catalog_text(pkg, n);
        struct catalog_file f = { "catalog.json", t, strlen(t) };
        struct catalog_record rec;
        int r = svc_catalog_add(&sv, name, priority, &f, 1, "admin", &rec, err, 512);
        if (r == 0) {
                cr_assert_str_eq(rec.name, name);
                cr_assert_eq(rec.n_bundles, n);
                cr_assert_null(rec.files, "the record comes back without its files");
                cr_assert(!strncmp(rec.digest, "sha256:", 7) && strlen(rec.digest) == 71);
        }
        svc_catalog_record_free(&rec);
        free(t);
        return r;
}

static void add_ok(const char *name, int64_t priority, const char *pkg, int n) {
        char err[512] = "";
        cr_assert_eq(add(name, priority, pkg, n, err), 0, "%s: %s", name, err);
}

/* The snapshot's catalogs as "name:priority:bundles,...". */
static void expect_set(struct svc_catalog_set *s, const char *want) {
        size_t n;
        const struct resolve_catalog *v = svc_catalog_set_items(s, &n);
        char got[1024] = "";
        for (size_t i = 0; i < n; i++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s:%d:%zu", i ? "," : "", v[i].name,
                         v[i].priority, v[i].catalog->n_bundles);
        cr_assert_str_eq(got, want);
}

Test(svc_catalogs, add_refuses_in_words_and_stores_nothing_then) {
        char err[512];
        static const char bad[] = "{\"schema\":\"olm.package\",\"name\":\"p\",\n\"defaultChannel\": }";
        struct catalog_file f = { "dir/p.json", bad, sizeof bad - 1 };
        struct catalog_record rec;
        cr_assert_eq(svc_catalog_add(&sv, "c", 0, &f, 1, "admin", &rec, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "dir/p.json:2: JSON: "), "%s", err);
        cr_assert_eq(add("Bad_Name", 0, "p", 1, err), -EINVAL);
        cr_assert(strstr(err, "a catalog name is a DNS label"), "%s", err);
        cr_assert_eq(add("0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a", 0, "p", 1, err), -EINVAL, "a UUID is no name");
        cr_assert_eq(add("-x", 0, "p", 1, err), -EINVAL);
        cr_assert_eq(add("c", 1001, "p", 1, err), -EINVAL);
        cr_assert(strstr(err, "from -1000 to 1000"), "%s", err);
        cr_assert_eq(add("c", -1001, "p", 1, err), -EINVAL);
        struct catalog_file none = { "README.md", "hello", 5 };
        cr_assert_eq(svc_catalog_add(&sv, "c", 0, &none, 1, "admin", &rec, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "no olm.package"), "%s", err);
        struct catalog_record_list l;
        cr_assert_eq(svc_catalog_list(&sv, &l), 0);
        cr_assert_eq(l.n, 0, "nothing stored");
        svc_catalog_list_free(&l);
        add_ok("c", 1000, "p", 1);
        cr_assert_eq(add("c", 5, "q", 1, err), -EEXIST);
        cr_assert(strstr(err, "catalog c exists"), "%s", err);
        /* Events went to the store: one add. */
        struct event_filter ef = { 0 };
        struct event_list ev;
        cr_assert_eq(store_event_list(st, &ef, &ev), 0);
        cr_assert_eq(ev.n, 1);
        cr_assert(strstr(ev.v[0].message, "catalog c (priority 1000) added by admin: 1 packages, 1 bundles"), "%s",
                  ev.v[0].message);
        event_list_free(&ev);
}

Test(svc_catalogs, snapshots_are_sorted_shared_and_survive_deletes) {
        add_ok("community", 10, "etcd", 3);
        add_ok("redhat", 0, "etcd", 1);
        add_ok("certified", 0, "prom", 2);
        struct svc_catalog_set *a, *b, *c;
        cr_assert_eq(svc_catalogs_acquire(&sv, &a), 0);
        expect_set(a, "certified:0:2,redhat:0:1,community:10:3");
        cr_assert_eq(svc_catalogs_acquire(&sv, &b), 0);
        cr_assert_eq(a, b, "nothing changed: the same snapshot");
        svc_catalog_set_release(b);

        struct svc_catalog_view v;
        char err[512];
        cr_assert_eq(svc_catalog_get(&sv, "community", &v, err, sizeof err), 0, "%s", err);
        char *id = strdup(v.info.id);
        cr_assert_eq(v.catalog->n_bundles, 3);
        svc_catalog_view_free(&v);
        cr_assert_eq(svc_catalog_delete(&sv, id, "admin", err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_catalog_delete(&sv, id, "admin", err, sizeof err), -ENOENT);
        cr_assert_eq(svc_catalog_get(&sv, id, &v, err, sizeof err), -ENOENT);
        cr_assert(strstr(err, "not found"), "%s", err);
        /* The holder of the old snapshot still reads the deleted catalog whole
         * (under ASan a freed one would be a report). */
        expect_set(a, "certified:0:2,redhat:0:1,community:10:3");
        size_t n;
        const struct resolve_catalog *items = svc_catalog_set_items(a, &n);
        cr_assert_str_eq(items[2].catalog->bundles[2].name, "etcd.v1.2.0");
        cr_assert_eq(svc_catalogs_acquire(&sv, &c), 0);
        cr_assert_neq(a, c);
        expect_set(c, "certified:0:2,redhat:0:1");
        svc_catalog_set_release(a);
        svc_catalog_set_release(c);
        svc_catalog_set_release(NULL);
        cr_assert_eq(svc_catalog_delete(&sv, "community", "admin", err, sizeof err), -EINVAL, "delete takes ids");
        free(id);
}

Test(svc_catalogs, a_restart_parses_the_stored_files_again) {
        add_ok("community", 10, "etcd", 5);
        add_ok("redhat", 0, "etcd", 2);
        svc_fini(&sv);
        cr_assert_eq(svc_init(&sv, st, key, &cfg), 0);
        struct svc_catalog_view v;
        char err[512];
        cr_assert_eq(svc_catalog_get(&sv, "redhat", &v, err, sizeof err), 0, "%s", err);
        cr_assert_eq(v.catalog->n_bundles, 2);
        cr_assert_str_eq(v.catalog->bundles[1].version.text, "1.1.0");
        svc_catalog_view_free(&v);
        struct svc_catalog_set *s;
        cr_assert_eq(svc_catalogs_acquire(&sv, &s), 0);
        expect_set(s, "redhat:0:2,community:10:5");
        svc_catalog_set_release(s);
}

Test(svc_catalogs, stored_files_that_no_longer_parse_are_an_error) {
        add_ok("good", 0, "p", 1);
        char *id = tu_store_catalog(st, "broken", 1, "[{\"content\":\"{\",\"path\":\"a.json\"}]");
        struct svc_catalog_set *s = (struct svc_catalog_set *) 1;
        cr_assert_eq(svc_catalogs_acquire(&sv, &s), -EIO);
        cr_assert_null(s);
        struct svc_catalog_view v;
        char err[512];
        cr_assert_eq(svc_catalog_get(&sv, "broken", &v, err, sizeof err), -EIO);
        cr_assert_eq(svc_catalog_get(&sv, "good", &v, err, sizeof err), 0, "the others are fine");
        svc_catalog_view_free(&v);
        cr_assert_eq(svc_catalog_delete(&sv, id, "admin", err, sizeof err), 0, "and it can be deleted");
        cr_assert_eq(svc_catalogs_acquire(&sv, &s), 0);
        expect_set(s, "good:0:1");
        svc_catalog_set_release(s);
        free(id);
}

Test(svc_catalogs, at_most_a_hundred_and_in_use_is_a_hook) {
        char name[32], err[512];
        for (int i = 0; i < SVC_MAX_CATALOGS; i++) {
                snprintf(name, sizeof name, "c%03d", i);
                free(tu_store_catalog(st, name, i % 7, "[{\"content\":\"" "{\\\"schema\\\":\\\"olm.package\\\","
                                                       "\\\"name\\\":\\\"p\\\",\\\"defaultChannel\\\":\\\"s\\\"}"
                                                       "\",\"path\":\"a.json\"}]"));
        }
        cr_assert_eq(add("one-more", 0, "p", 1, err), -EDQUOT);
        cr_assert(strstr(err, "musterd holds 100 catalogs"), "%s", err);
        struct catalog_record c = { .name = "x" };
        cr_assert_eq(svc_catalog_in_use(&sv, &c), 0, "nothing uses a catalog until subscriptions exist");
}

/* ---- several threads ------------------------------------------------------- */

static void *reader(void *arg) {
        (void) arg;
        for (int i = 0; i < 150; i++) {
                struct svc_catalog_set *s;
                if (svc_catalogs_acquire(&sv, &s) != 0)
                        return (void *) 1;
                size_t n, total = 0;
                const struct resolve_catalog *v = svc_catalog_set_items(s, &n);
                for (size_t k = 0; k < n; k++)
                        for (size_t b = 0; b < v[k].catalog->n_bundles; b++)
                                total += strlen(v[k].catalog->bundles[b].name);
                svc_catalog_set_release(s);
                if (n < 1 || total == 0)
                        return (void *) 2;
        }
        return NULL;
}

static void *writer(void *arg) {
        (void) arg;
        char err[512];
        for (int i = 0; i < 15; i++) {
                if (add("churn", i % 3, "q", 20, err) != 0)
                        return (void *) 1;
                struct svc_catalog_view v;
                if (svc_catalog_get(&sv, "churn", &v, err, sizeof err) != 0)
                        return (void *) 2;
                char *id = strdup(v.info.id);
                svc_catalog_view_free(&v);
                int r = svc_catalog_delete(&sv, id, "admin", err, sizeof err);
                free(id);
                if (r != 0)
                        return (void *) 3;
        }
        return NULL;
}

Test(svc_catalogs, threads_add_delete_and_read_at_once) {
        add_ok("stable", 0, "p", 30);
        pthread_t t[5];
        for (int i = 0; i < 4; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, reader, NULL), 0);
        cr_assert_eq(pthread_create(&t[4], NULL, writer, NULL), 0);
        for (int i = 0; i < 5; i++) {
                void *ret;
                pthread_join(t[i], &ret);
                cr_assert_null(ret, "thread %d failed at step %ld", i, (long) (intptr_t) ret);
        }
        struct svc_catalog_set *s;
        cr_assert_eq(svc_catalogs_acquire(&sv, &s), 0);
        expect_set(s, "stable:0:30");
        svc_catalog_set_release(s);
}
