/* The parsed catalogs musterd keeps in memory (svc/catalogs.h uses it; svc.c
 * makes and frees it): one refcounted entry per catalog, parsed once, and
 * the snapshot of all of them the resolver reads, rebuilt only when the set
 * changed. A snapshot holds a reference on each entry it lists, so an entry
 * removed from the cache (a delete) lives on until the last snapshot that
 * lists it is released. Thread-safe; no store, no parsing here. */
#pragma once
#include <stddef.h>

#include "catalog.h"
#include "uuid.h"

struct svc_catalogs;
struct svc_catalog_entry;
struct svc_catalog_set;

/* An empty cache. 0 or -ENOMEM. */
int catcache_new(struct svc_catalogs **out);
/* Drops the cache's references (snapshots still held keep theirs). NULL is fine. */
void catcache_free(struct svc_catalogs *c);

/* One add, delete or load at a time (parsing happens outside the cache's
 * own lock, so readers are not held up by it). */
void catcache_writer_lock(struct svc_catalogs *c);
void catcache_writer_unlock(struct svc_catalogs *c);

/* A new entry taking over *parsed (left empty); NULL on ENOMEM (then
 * *parsed is freed). */
struct svc_catalog_entry *catcache_entry_new(const char *id, const char *name, int priority, const char *digest,
                                             struct catalog *parsed);
/* The parsed catalog of an entry. */
const struct catalog *catcache_entry_catalog(const struct svc_catalog_entry *e);
void catcache_entry_unref(struct svc_catalog_entry *e);

/* Put e in the cache (it takes the caller's reference), replacing an entry
 * of the same id. 0 or -ENOMEM (then e is unreferenced). */
int catcache_insert(struct svc_catalogs *c, struct svc_catalog_entry *e);
/* Take the entry of `id` out of the cache; nothing when there is none. */
void catcache_remove(struct svc_catalogs *c, const char *id);
/* A new reference to the entry of `id` when it is cached with `digest`
 * (NULL: any), else NULL. */
struct svc_catalog_entry *catcache_find(struct svc_catalogs *c, const char *id, const char *digest);

/* A snapshot of the entries of ids[0..n) (each cached with digests[i]),
 * sorted by priority then name: the current one when it lists exactly
 * those, else a new one that becomes current. 0 with *out (the caller's
 * reference); -ENOENT when one of them is not cached (so loading comes
 * first); -ENOMEM. */
int catcache_snapshot(struct svc_catalogs *c, const char *const *ids, const char *const *digests, size_t n,
                      struct svc_catalog_set **out);
