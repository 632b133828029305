/* Store fixtures for the suites that go through store.h (test_store,
 * test_store_sqlite, test_svc*): resources made directly in a store, and a
 * struct svc over a store of its own. */
#pragma once
#include "store.h"

struct crypto_key;
struct muster_config;
struct svc;

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
/* A struct svc over a new SQLite file DIR/muster.db, DIR a new temp dir
 * (*dir, malloc'd), with a new key (*key) and cfg, whose state_dir becomes
 * DIR (the rest is the caller's: config_defaults and what a suite changes).
 * Asserts each step. */
void tu_svc_open(struct svc *sv, struct store **st, struct crypto_key **key, struct muster_config *cfg, char **dir);
/* Add the fixture catalog tests/fixtures/catalogs/NAME through sv, by
 * "admin", with priority. Asserts it was added. */
void tu_svc_add_fixture_catalog(struct svc *sv, const char *name, int priority);
/* What tu_svc_open made: the svc finished, the store closed, the key freed,
 * the temp dir removed and dir freed. */
void tu_svc_close(struct svc *sv, struct store *st, struct crypto_key *key, char *dir);

