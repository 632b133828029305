/* Store fixtures for the suites that go through store.h (test_store,
 * test_store_sqlite, test_svc*): resources made directly in a store, and a
 * struct svc over a store of its own. */
#pragma once
#include "store/store.h"

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
/* The forms of store.h's operations the services never call, over the
 * ones they do: a host registered as its agent registers
 * (store_host_register_event) with no cap and no event, or with a cap
 * (-EDQUOT for a new host past max_hosts); an inventory set with no status
 * (store_host_set_inventory_status with st NULL: 0 or -errno); a cluster's
 * status set whatever it was (store_cluster_set_status_from with expect
 * NULL). */
static inline int tu_store_host_register(struct store *st, const char *infra_env_id, const char *host_id,
                                         const char *agent_version, struct host *out) {
        return store_host_register_event(st, infra_env_id, host_id, agent_version, 0, NULL, out);
}
static inline int tu_store_host_register_capped(struct store *st, const char *infra_env_id, const char *host_id,
                                                const char *agent_version, int64_t max_hosts, struct host *out) {
        return store_host_register_event(st, infra_env_id, host_id, agent_version, max_hosts, NULL, out);
}
static inline int tu_store_host_set_inventory(struct store *st, const char *infra_env_id, const char *host_id,
                                              const char *inventory_json, const struct inventory *parsed) {
        int r = store_host_set_inventory_status(st, infra_env_id, host_id, inventory_json, parsed, NULL);
        return r < 0 ? r : 0;
}
static inline int tu_store_cluster_set_status(struct store *st, const char *id, const char *status,
                                              const char *status_info, const struct validation *v, size_t n_v) {
        return store_cluster_set_status_from(st, id, NULL, status, status_info, v, n_v);
}
/* A host's progress alone, or its applied revision alone, set through
 * store_host_set_install_state with the status (and status_info) it has:
 * what that returns, or store_host_get's error. */
int tu_store_host_set_progress(struct store *st, const char *infra_env_id, const char *host_id,
                               const struct host_progress *p);
int tu_store_host_set_applied_revision(struct store *st, const char *infra_env_id, const char *host_id,
                                       int64_t applied_revision);
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

