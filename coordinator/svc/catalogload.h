/* Operator catalogs into memory (DESIGN §8): a stored catalog parsed into
 * the cache (catalogcache.h) the first time something needs it, and the
 * snapshot of all of them the resolver reads. catalogs.c (add, read,
 * delete) and opresolve.c (the resolver) both load through here. */
#pragma once
#include "svc/catalogcache.h"
#include "resolve.h"
#include "records.h"
#include "svc/svc.h"

/* The cached entry of record c, loaded first when it is not in memory: a
 * new reference, or -ENOENT when the catalog is gone. */
int catalogload_entry(struct svc *sv, const struct catalog_record *c, struct svc_catalog_entry **out);

/* ---- what the resolver reads ------------------------------------------------ */

struct svc_catalog_set;
/* Every catalog, parsed, as of now: *out (release it with
 * svc_catalog_set_release; the caller's until then, whatever is added or
 * deleted meanwhile). Catalogs not in memory yet (after a restart) are
 * parsed from their stored files first. 0; -EIO a stored catalog no longer
 * parses (logged); -ENOMEM; store errors. */
int svc_catalogs_acquire(struct svc *s, struct svc_catalog_set **out);
/* The catalogs of a snapshot, sorted by priority then name (n of them);
 * each `catalog` passed catalog_check(). */
const struct resolve_catalog *svc_catalog_set_items(const struct svc_catalog_set *set, size_t *n);
/* NULL is fine. */
void svc_catalog_set_release(struct svc_catalog_set *set);
