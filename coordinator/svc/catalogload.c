/* Operator catalogs into memory (catalogload.h): a stored catalog parsed
 * into the cache, and the snapshot of all of them the resolver reads. */
#include "svc/catalogload.h"
#include "svc/catalogcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/store.h"

#define ACQUIRE_TRIES 4 /* a snapshot raced by deletes is tried again this often */

/* ---- loading into memory -------------------------------------------------- */

/* Parse the stored catalog `id` into the cache; a new reference to its entry.
 * Under the writer lock. */
static int catalogload_locked(struct svc *sv, const char *id, const char *digest, struct svc_catalog_entry **out) {
        struct catalog_record full;
        struct catalog_file *files = NULL;
        struct catalog parsed = { 0 };
        size_t n = 0;
        char why[512] = "";
        if ((*out = catcache_find(sv->catalogs, id, digest)))
                return 0; /* another thread loaded it meanwhile */
        int r = store_catalog_get(sv->store, id, &full);
        if (r < 0)
                return r;
        if ((r = catalog_files_from_canonical(full.files, full.files_len, &files, &n)) >= 0)
                r = catalog_load_files(files, n, &parsed, why, sizeof why);
        catalog_files_free(files, n);
        if (r < 0 && r != -ENOMEM) {
                log_error("catalogs", "the stored files of catalog %s (%s) no longer parse: %s", full.name, full.id,
                          why[0] ? why : strerror(-r));
                r = -EIO;
        }
        struct svc_catalog_entry *e = NULL;
        if (r >= 0 && !(e = catcache_entry_new(full.id, full.name, (int) full.priority, full.digest, &parsed)))
                r = -ENOMEM;
        if (r >= 0 && (r = catcache_insert(sv->catalogs, e)) >= 0 &&
            !(*out = catcache_find(sv->catalogs, full.id, full.digest)))
                r = -ENOENT;
        catalog_record_free(&full);
        return r;
}

/* The cached entry of record c, loaded first when it is not in memory: a
 * new reference, or -ENOENT when the catalog is gone. */
int catalogload_entry(struct svc *sv, const struct catalog_record *c, struct svc_catalog_entry **out) {
        if ((*out = catcache_find(sv->catalogs, c->id, c->digest)))
                return 0;
        catcache_writer_lock(sv->catalogs);
        int r = catalogload_locked(sv, c->id, c->digest, out);
        catcache_writer_unlock(sv->catalogs);
        return r;
}

/* One try at a snapshot of the catalogs l lists: those gone meanwhile are
 * left out; -ENOENT when one went between its load and the snapshot. */
static int snapshot_of(struct svc *s, const struct catalog_record_list *l, struct svc_catalog_set **out) {
        const char **ids = calloc(l->n + 1, sizeof *ids), **digests = calloc(l->n + 1, sizeof *digests);
        size_t k = 0;
        int r = ids && digests ? 0 : -ENOMEM;
        for (size_t i = 0; i < l->n && r >= 0; i++) {
                struct svc_catalog_entry *e;
                int q = catalogload_entry(s, &l->v[i], &e);
                if (q == -ENOENT)
                        continue; /* deleted since the list */
                if (q < 0) {
                        r = q;
                        break;
                }
                catcache_entry_unref(e);
                ids[k] = l->v[i].id;
                digests[k++] = l->v[i].digest;
        }
        if (r >= 0)
                r = catcache_snapshot(s->catalogs, ids, digests, k, out);
        free(ids);
        free(digests);
        return r;
}

int svc_catalogs_acquire(struct svc *s, struct svc_catalog_set **out) {
        int r = -EAGAIN;
        *out = NULL;
        for (int i = 0; i < ACQUIRE_TRIES && (r == -EAGAIN || r == -ENOENT); i++) {
                struct catalog_record_list l;
                if ((r = store_catalog_list(s->store, &l)) >= 0)
                        r = snapshot_of(s, &l, out);
                catalog_record_list_free(&l);
        }
        return r == -ENOENT ? -EAGAIN : r;
}

