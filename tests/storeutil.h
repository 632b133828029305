/* Store fixtures for the suites that go through store.h (test_store,
 * test_store_sqlite, test_svc): resources made directly in a store. */
#pragma once
#include "store.h"

/* A new infra-env of `owner` named `name` (x86_64, an empty pull secret)
 * in st; its id (malloc'd). Asserts it was created. */
char *tu_store_infra_env(struct store *st, const char *owner, const char *name);
/* A new cluster of `owner` named `name` with nothing else set; its id. */
char *tu_store_cluster(struct store *st, const char *owner, const char *name);
/* A small release `version` to import: two files, three documents, one
 * with capability and profile annotations (known capabilities Console and
 * Insights; sets None and v4.11). The caller frees info and ms. */
void tu_store_release(const char *version, struct release_info *info, struct manifest_list *ms);
/* Record token `id` (role, owner) valid through 2026. */
void tu_store_token(struct store *st, const char *id, const char *role, const char *owner);
/* A new catalog record `name` of `priority` added by "admin" whose files
 * are `files` (NULL: a small text), with made-up counts; its id (malloc'd). */
char *tu_store_catalog(struct store *st, const char *name, int64_t priority, const char *files);
