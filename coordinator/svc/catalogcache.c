/* The parsed catalogs in memory (catalogcache.h): entries and snapshots are
 * reference-counted with atomics, so a snapshot is released from any thread
 * without the cache's lock; the lock guards the entry table and the current
 * snapshot. */
#include "svc/catalogcache.h"
#include "svc/catalogload.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct svc_catalog_entry {
        atomic_size_t refs;
        char id[UUID_STR_LEN];
        char *name;
        int priority;
        char *digest;
        struct catalog catalog;
};

struct svc_catalog_set {
        atomic_size_t refs;
        struct svc_catalog_entry **v;
        struct resolve_catalog *items;
        size_t n;
};

struct svc_catalogs {
        pthread_mutex_t lock;   /* v, n, cap, current */
        pthread_mutex_t writer; /* catcache_writer_lock() */
        struct svc_catalog_entry **v;
        size_t n, cap;
        struct svc_catalog_set *current; /* the last snapshot made; NULL after a change */
};

/* ---- entries ------------------------------------------------------------ */

struct svc_catalog_entry *catcache_entry_new(const char *id, const char *name, int priority, const char *digest,
                                             struct catalog *parsed) {
        struct svc_catalog_entry *e = calloc(1, sizeof *e);
        if (!e || strlen(id) >= sizeof e->id || !(e->name = strdup(name)) || !(e->digest = strdup(digest))) {
                if (e) {
                        free(e->name);
                        free(e);
                }
                catalog_free(parsed);
                return NULL;
        }
        atomic_init(&e->refs, 1);
        memcpy(e->id, id, strlen(id) + 1);
        e->priority = priority;
        e->catalog = *parsed;
        *parsed = (struct catalog){ 0 };
        return e;
}

const struct catalog *catcache_entry_catalog(const struct svc_catalog_entry *e) {
        return &e->catalog;
}

static struct svc_catalog_entry *entry_ref(struct svc_catalog_entry *e) {
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
        return e;
}

void catcache_entry_unref(struct svc_catalog_entry *e) {
        if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
                return;
        catalog_free(&e->catalog);
        free(e->name);
        free(e->digest);
        free(e);
}

/* ---- snapshots ------------------------------------------------------------- */

const struct resolve_catalog *svc_catalog_set_items(const struct svc_catalog_set *s, size_t *n) {
        *n = s ? s->n : 0;
        return s ? s->items : NULL;
}

void svc_catalog_set_release(struct svc_catalog_set *s) {
        if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
                return;
        for (size_t i = 0; i < s->n; i++)
                catcache_entry_unref(s->v[i]);
        free(s->v);
        free(s->items);
        free(s);
}

/* A snapshot of v[0..n) (sorted), with a reference on each entry and `refs`
 * on itself; NULL on ENOMEM. */
static struct svc_catalog_set *set_new(struct svc_catalog_entry *const *v, size_t n, size_t refs) {
        struct svc_catalog_set *s = calloc(1, sizeof *s);
        if (!s || !(s->v = calloc(n ? n : 1, sizeof *s->v)) || !(s->items = calloc(n ? n : 1, sizeof *s->items))) {
                if (s)
                        free(s->v);
                free(s);
                return NULL;
        }
        atomic_init(&s->refs, refs);
        for (size_t i = 0; i < n; i++) {
                s->v[i] = entry_ref(v[i]);
                s->items[i] = (struct resolve_catalog){ v[i]->name, v[i]->priority, &v[i]->catalog };
        }
        s->n = n;
        return s;
}

/* ---- the cache ----------------------------------------------------------- */

int catcache_new(struct svc_catalogs **out) {
        struct svc_catalogs *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        pthread_mutex_init(&c->writer, NULL);
        *out = c;
        return 0;
}

void catcache_free(struct svc_catalogs *c) {
        if (!c)
                return;
        svc_catalog_set_release(c->current);
        for (size_t i = 0; i < c->n; i++)
                catcache_entry_unref(c->v[i]);
        free(c->v);
        pthread_mutex_destroy(&c->lock);
        pthread_mutex_destroy(&c->writer);
        free(c);
}

void catcache_writer_lock(struct svc_catalogs *c) {
        pthread_mutex_lock(&c->writer);
}

void catcache_writer_unlock(struct svc_catalogs *c) {
        pthread_mutex_unlock(&c->writer);
}

/* The index of `id` in c->v, or c->n. Under c->lock. */
static size_t index_of(const struct svc_catalogs *c, const char *id) {
        size_t i = 0;
        while (i < c->n && strcmp(c->v[i]->id, id) != 0)
                i++;
        return i;
}

/* Forget the current snapshot (its holders keep it). Under c->lock. */
static void invalidate(struct svc_catalogs *c) {
        svc_catalog_set_release(c->current);
        c->current = NULL;
}

int catcache_insert(struct svc_catalogs *c, struct svc_catalog_entry *e) {
        struct svc_catalog_entry *old = NULL;
        int r = 0;
        pthread_mutex_lock(&c->lock);
        size_t i = index_of(c, e->id);
        if (i == c->n && c->n == c->cap) {
                size_t ncap = c->cap ? c->cap * 2 : 8;
                struct svc_catalog_entry **nv = realloc(c->v, ncap * sizeof *nv);
                if (nv) {
                        c->v = nv;
                        c->cap = ncap;
                } else
                        r = -ENOMEM;
        }
        if (r == 0) {
                old = i < c->n ? c->v[i] : NULL;
                c->v[i] = e;
                if (i == c->n)
                        c->n++;
                invalidate(c);
        }
        pthread_mutex_unlock(&c->lock);
        catcache_entry_unref(r < 0 ? e : old);
        return r;
}

void catcache_remove(struct svc_catalogs *c, const char *id) {
        struct svc_catalog_entry *gone = NULL;
        pthread_mutex_lock(&c->lock);
        size_t i = index_of(c, id);
        if (i < c->n) {
                gone = c->v[i];
                c->v[i] = c->v[--c->n];
                invalidate(c);
        }
        pthread_mutex_unlock(&c->lock);
        catcache_entry_unref(gone);
}

struct svc_catalog_entry *catcache_find(struct svc_catalogs *c, const char *id, const char *digest) {
        struct svc_catalog_entry *e = NULL;
        pthread_mutex_lock(&c->lock);
        size_t i = index_of(c, id);
        if (i < c->n && (!digest || !strcmp(c->v[i]->digest, digest)))
                e = entry_ref(c->v[i]);
        pthread_mutex_unlock(&c->lock);
        return e;
}

static int cmp_entry(const void *a, const void *b) {
        const struct svc_catalog_entry *x = *(struct svc_catalog_entry *const *) a;
        const struct svc_catalog_entry *y = *(struct svc_catalog_entry *const *) b;
        if (x->priority != y->priority)
                return x->priority < y->priority ? -1 : 1;
        return strcmp(x->name, y->name);
}

static bool same_set(const struct svc_catalog_set *s, struct svc_catalog_entry *const *v, size_t n) {
        if (!s || s->n != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s->v[i] != v[i])
                        return false;
        return true;
}

int catcache_snapshot(struct svc_catalogs *c, const char *const *ids, const char *const *digests, size_t n,
                      struct svc_catalog_set **out) {
        *out = NULL;
        struct svc_catalog_entry **v = calloc(n ? n : 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        int r = 0;
        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; i < n && r == 0; i++) {
                size_t k = index_of(c, ids[i]);
                if (k == c->n || strcmp(c->v[k]->digest, digests[i]) != 0)
                        r = -ENOENT;
                else
                        v[i] = c->v[k];
        }
        if (r == 0) {
                qsort(v, n, sizeof *v, cmp_entry);
                if (same_set(c->current, v, n)) {
                        atomic_fetch_add_explicit(&c->current->refs, 1, memory_order_relaxed);
                        *out = c->current;
                } else if ((*out = set_new(v, n, 2))) {
                        invalidate(c);
                        c->current = *out; /* one reference the cache's, one the caller's */
                } else
                        r = -ENOMEM;
        }
        pthread_mutex_unlock(&c->lock);
        free(v);
        return r;
}
