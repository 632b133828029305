/* Operator catalogs (DESIGN §3, §8): add a catalog from the files
 * of a catalog directory (parsed before anything is stored), read one with
 * its packages, list, delete; and the catalogs as the resolver reads them:
 * parsed once, kept in memory (parsed again from the stored files after a
 * restart, when first needed), handed out as a reference-counted snapshot
 * that a delete does not pull from under its holder. Thread-safe. The
 * handlers have parsed the request and authorized the caller. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "resolve.h"
#include "records.h"
#include "svc/svc.h"

#define SVC_CATALOG_MAX_NAME 63
#define SVC_CATALOG_MIN_PRIORITY (-1000)
#define SVC_CATALOG_MAX_PRIORITY 1000
#define SVC_MAX_CATALOGS RESOLVE_MAX_CATALOGS /* what one resolution takes */

/* Add catalog `name` of `priority` (SVC_CATALOG_MIN_PRIORITY..MAX; lower is
 * preferred; it never changes) from files[0..n) (catalog_load_files: any
 * order), added by `by`. The files are kept in their canonical form with
 * its sha256 digest. out (always freeable) gets the record without its
 * files. 0, or -errno with err: -EINVAL a bad name or priority, a catalog
 * that does not parse (err: "file:line: blob: what") or holds no package;
 * -E2BIG past a limit of the parser or the store; -EEXIST the name is
 * taken; -EDQUOT SVC_MAX_CATALOGS are there; -ENOMEM; store errors (err
 * empty). */
int svc_catalog_add(struct svc *sv, const char *name, int64_t priority, const struct catalog_file *files, size_t n,
                    const char *by, struct catalog_record *out, char *err, size_t errlen);

/* A catalog as read: its record (without files) and its parsed model,
 * valid until svc_catalog_view_free(). */
struct svc_catalog_entry;
struct svc_catalog_view {
        struct catalog_record info;
        const struct catalog *catalog;
        struct svc_catalog_entry *entry; /* what keeps `catalog` alive */
};
/* The catalog of that id (a UUID) or else name. 0, or -errno with err:
 * -ENOENT none; -EIO its stored files no longer parse (logged); store
 * errors (err empty). */
int svc_catalog_get(struct svc *sv, const char *id_or_name, struct svc_catalog_view *out, char *err, size_t errlen);
void svc_catalog_view_free(struct svc_catalog_view *v);

/* Every catalog (records without files) by priority, then name. Store errors. */
int svc_catalog_list(struct svc *sv, struct catalog_record_list *out);
void svc_catalog_list_free(struct catalog_record_list *l);
/* What svc_catalog_add hands back. */
void svc_catalog_record_free(struct catalog_record *c);

/* Delete catalog `id` (by `by`). Snapshots already handed out keep it.
 * 0, or -errno with err: -ENOENT none; -EBUSY svc_catalog_in_use(); store
 * errors (err empty). */
int svc_catalog_delete(struct svc *sv, const char *id, const char *by, char *err, size_t errlen);

/* Whether something depends on catalog c, so that it may not be deleted
 * (409): a subscription that names it, or a subscribed cluster whose
 * current payload revision installed a bundle from it or whose
 * subscriptions resolve to one of its bundles now. 1, 0, or -errno. */
int svc_catalog_in_use(struct svc *sv, const struct catalog_record *c);
