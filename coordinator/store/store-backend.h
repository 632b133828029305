/* What a store back-end provides: one table of operations, as chrony drives
 * every reference clock through one RefclockDriver table. store.c picks the
 * back-end by the URL and forwards store.h's calls through it; only store.c
 * and the back-ends (store/sqlite/, store/pg/) include this header.
 *
 * What store.c has done before an operation is called, so that no back-end
 * does it again:
 *   - every check store.h names that needs no database: NULL or malformed
 *     ids, lengths over the model's limits, unknown enums and statuses,
 *     status masks with unknown bits, limits over STORE_MAX_LIMIT, and the
 *     like (-EINVAL, -E2BIG);
 *   - every id it hands over is a canonical UUID, in arguments, in structs
 *     (shallow copies) and in arrays; every time is canonical RFC 3339;
 *   - pages and filters are never NULL, and their limit is resolved
 *     (1..STORE_MAX_LIMIT);
 *   - what creation fills in (ids, created_at, updated_at, default status,
 *     high-availability mode, token generation, feature set, architecture,
 *     an event's or a payload's time) is in the struct;
 *   - outputs are initialised, and freed when the operation fails (except
 *     where the operation says otherwise below).
 * A back-end returns store.h's codes. */
#pragma once
#include "store.h"

struct store_backend;

/* The head of every back-end's handle: struct sqlite_store { struct store
 * base; ... }, so that a struct store * is the back-end's handle too. */
struct store {
        const struct store_backend *ops;
};

struct store_backend {
        const char *name; /* its URL scheme: "sqlite" */
        /* store.c calls an operation again that answered -EAGAIN (a
         * transaction the database aborted and that did nothing). */
        bool retry_eagain;
        /* url as given to store_open: "NAME:..." or, for SQLite, a plain
         * path. Fills in everything of the handle but base.ops (store.c's). */
        int (*open)(const char *url, struct store **out);
        void (*close)(struct store *s);

        int (*schema_version)(struct store *s);
        int (*free_space)(struct store *s, int64_t *bytes);
        void (*write_latency)(struct store *s, struct store_latency *out);
        int (*leader)(struct store *s);
        /* store_copy; both stores of back-ends with the same copy. */
        int (*copy)(struct store *from, struct store *to, struct store_copy_report *rep, char *err, size_t errlen);

        int (*infra_env_create)(struct store *s, struct infra_env *ie);
        int (*infra_env_get)(struct store *s, const char *id, struct infra_env *out);
        int (*infra_env_list)(struct store *s, const char *owner, const struct store_page *pg,
                              struct infra_env_list *out);
        int (*infra_env_update)(struct store *s, const struct infra_env *ie, uint32_t fields);
        /* Fills *blocked only on -EBUSY and *unbound only on success (both
         * may be NULL); the back-end frees what it does not hand out. */
        int (*infra_env_delete)(struct store *s, const char *id, uint32_t block_mask, struct host_list *blocked,
                                struct host_list *unbound);
        int (*infra_env_bump_token)(struct store *s, const char *id, int64_t *gen);

        /* store_host_register is this with max_hosts 0; on_new (may be
         * NULL, checked by store.c) is appended in the same write when the
         * host is new. */
        int (*host_register)(struct store *s, const char *infra_env_id, const char *host_id,
                             const char *agent_version, int64_t max_hosts, struct event *on_new, struct host *out);
        int (*host_get)(struct store *s, const char *infra_env_id, const char *host_id, bool brief,
                        struct host *out);
        int (*host_list)(struct store *s, const struct store_host_filter *f, const struct store_page *pg,
                         struct host_list *out);
        int (*host_update)(struct store *s, const struct host *h, uint32_t fields);
        /* facts: what store.c derived from the inventory (filtered on); st
         * (may be NULL): a status set in the same transaction if expected
         * (store_host_set_inventory_status: 1 both, 0 the inventory alone). */
        int (*host_set_inventory)(struct store *s, const char *infra_env_id, const char *host_id,
                                  const char *inventory_json, const struct inventory_facts *facts,
                                  const struct store_host_status *st);
        int (*host_set_status)(struct store *s, const char *infra_env_id, const char *host_id,
                               enum host_status status, const char *status_info, const struct validation *v,
                               size_t n_v, uint32_t expect_mask);
        int (*host_set_progress)(struct store *s, const char *infra_env_id, const char *host_id,
                                 const struct host_progress *p);
        int (*host_set_install_state)(struct store *s, const char *infra_env_id, const char *host_id,
                                      enum host_status status, const char *status_info,
                                      const struct host_progress *p, int64_t applied_revision,
                                      uint32_t expect_mask);
        int (*host_set_applied_revision)(struct store *s, const char *infra_env_id, const char *host_id,
                                         int64_t applied_revision);
        /* n > 0; the check-ins as the caller gave them (not checked). */
        int (*host_checkin_many)(struct store *s, const struct store_checkin *v, size_t n);
        /* at: never NULL (store.c puts in now). */
        int (*host_checkin)(struct store *s, const char *infra_env_id, const char *host_id, const char *at);
        int (*host_token_generation)(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen);
        int (*host_rotate_token)(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen);
        int (*host_bind)(struct store *s, const char *infra_env_id, const char *host_id, const char *cluster_id,
                         enum host_status status, const char *status_info, uint32_t expect_mask);
        /* Text that is not JSON is the back-end's to refuse (-EINVAL). */
        int (*host_set_step_result)(struct store *s, const char *infra_env_id, const char *host_id,
                                    enum step_type type, const char *output_json);
        int (*host_forget_step_result)(struct store *s, const char *infra_env_id, const char *host_id,
                                       enum step_type type);
        int (*host_take_reregister)(struct store *s, const char *infra_env_id, const char *host_id);
        int (*host_delete)(struct store *s, const char *infra_env_id, const char *host_id);
        /* limit resolved (1..STORE_MAX_LIMIT). */
        int (*host_list_stale)(struct store *s, const char *before, uint32_t status_mask, const char *stage,
                               bool stage_match, unsigned limit, struct host_list *out);
        /* n > 0. */
        int (*host_mark_disconnected)(struct store *s, const struct host *hosts, size_t n, const char *before,
                                      uint32_t status_mask, const char *status_info, bool *changed);
        /* n > 0; changed[] (may be NULL) is all false on entry; store.c
         * clears it again when the operation fails. */
        int (*host_mark_stale)(struct store *s, const struct host *hosts, size_t n, const char *before,
                               uint32_t status_mask, enum host_status to, const char *status_info, bool *changed);
        /* counts[] is zeroed. */
        int (*host_count_by_status)(struct store *s, int64_t counts[_HOST_STATUS_MAX]);
        int (*host_stop_pending)(struct store *s, const char *infra_env_id, const char *host_id);
        int (*host_clear_stop)(struct store *s, const char *infra_env_id, const char *host_id);
        int (*host_actions)(struct store *s, const char *infra_env_id, const char *host_id, unsigned set,
                            unsigned clear, unsigned mask, unsigned want);
        /* keep >= 1; out is zeroed. */
        int (*host_logs_put)(struct store *s, const char *infra_env_id, const char *host_id, const char *now,
                             const void *data, size_t len, unsigned keep);
        int (*host_logs_get)(struct store *s, const char *infra_env_id, const char *host_id,
                             struct store_host_logs *out);

        int (*cluster_create)(struct store *s, const struct cluster *c);
        int (*cluster_get)(struct store *s, const char *id, struct cluster *out);
        int (*cluster_list)(struct store *s, const char *owner, const struct store_page *pg,
                            struct cluster_list *out);
        int (*cluster_update)(struct store *s, const struct cluster *c, uint32_t fields);
        /* store_cluster_set_status is this with expect NULL. */
        int (*cluster_set_status)(struct store *s, const char *id, const char *expect, const char *status,
                                  const char *status_info, const struct validation *v, size_t n_v);
        int (*cluster_reset)(struct store *s, const char *id, const char *expect, const char *status,
                             const char *status_info, const struct store_host_reset *hosts, size_t n);
        int (*cluster_cancel)(struct store *s, const char *id, const char *expect, const char *status,
                              const char *status_info, const struct store_host_reset *hosts, size_t n);
        int (*cluster_start_install)(struct store *s, const char *id, const char *status_info,
                                     enum host_status host_to, const char *host_info,
                                     const struct store_host_role *roles, size_t n_roles,
                                     const struct store_payload *payload);
        int (*cluster_delete)(struct store *s, const char *id);
        int (*cluster_count_hosts)(struct store *s, const char *id, uint32_t status_mask, int64_t *count);

        int (*release_import)(struct store *s, const struct release_info *info, const struct manifest_list *ms,
                              struct store_release *out);
        int (*release_get)(struct store *s, const char *version, struct store_release *out);
        int (*release_list)(struct store *s, const struct store_page *pg, struct store_release_list *out);
        /* Appends to *out; not freed on failure (as store.h has it). */
        int (*release_manifests)(struct store *s, const char *version, struct manifest_list *out);
        int (*release_delete)(struct store *s, const char *version);

        /* p->created_at is filled in. */
        int (*cluster_add_payload)(struct store *s, const struct store_payload *p);
        int (*payload_get)(struct store *s, const char *cluster_id, int64_t revision, struct store_payload *out);
        int (*payload_list)(struct store *s, const char *cluster_id, struct store_payload_list *out);

        int (*token_add)(struct store *s, const struct store_token *t);
        int (*token_get)(struct store *s, const char *id, struct store_token *out);
        int (*token_list)(struct store *s, const char *owner, const struct store_page *pg,
                          struct store_token_list *out);
        int (*token_revoke)(struct store *s, const char *id);
        int (*token_check)(struct store *s, const char *id);

        /* c->id and c->created_at are filled in. */
        int (*catalog_create)(struct store *s, const struct store_catalog *c);
        /* By id (name NULL) or by name (id NULL). */
        int (*catalog_get)(struct store *s, const char *id, const char *name, struct store_catalog *out);
        int (*catalog_list)(struct store *s, struct store_catalog_list *out);
        int (*catalog_delete)(struct store *s, const char *id);

        /* sub->id and sub->created_at are filled in. */
        int (*subscription_create)(struct store *s, const struct store_subscription *sub);
        /* cluster_id NULL: all. */
        int (*subscription_list)(struct store *s, const char *cluster_id, struct store_subscription_list *out);
        int (*subscription_delete)(struct store *s, const char *cluster_id, const char *package);
        int (*subscription_set_cleanup)(struct store *s, const char *cluster_id, const char *package, bool enabled);
        int (*subscription_set_uninstall)(struct store *s, const char *cluster_id, const char *package,
                                          const char *expect, const char *next, const char *const *drop, size_t n_drop);
        /* cluster_id NULL and only those with an uninstall */
        int (*subscription_list_uninstalling)(struct store *s, struct store_subscription_list *out);
        /* ids and created_at filled in (kept for an existing identity by the back-end). */
        int (*operand_put)(struct store *s, struct store_operand *v, size_t n);
        int (*operand_list)(struct store *s, const char *cluster_id, struct store_operand_list *out);
        int (*operand_delete)(struct store *s, const char *cluster_id, const char *id);

        /* p->id, created_at, updated_at, generation filled in. */
        int (*addon_proxy_create)(struct store *s, const struct store_addon_proxy *p);
        /* By id (name NULL) or by name (id NULL). */
        int (*addon_proxy_get)(struct store *s, const char *id, const char *name, struct store_addon_proxy *out);
        int (*addon_proxy_list)(struct store *s, struct store_addon_proxy_list *out);
        int (*addon_proxy_update)(struct store *s, const struct store_addon_proxy *p, int64_t expect_generation);
        int (*addon_proxy_delete)(struct store *s, const char *id);
        int (*addon_release_list)(struct store *s, const char *proxy_id, const char *cluster_id,
                                  const struct store_page *pg, struct store_addon_release_list *out);
        /* r->created_at/updated_at: now (created_at kept for an existing row). */
        int (*addon_release_put)(struct store *s, const struct store_addon_release *r);
        int (*addon_release_delete)(struct store *s, const char *proxy_id, const char *cluster_id);
        int (*host_found_set)(struct store *s, const char *infra_env_id, const char *host_id, const char *found,
                              const char *now);
        int (*host_found_list)(struct store *s, const char *cluster_id, struct store_host_found_list *out);
        int (*cluster_host_counts)(struct store *s, struct store_cluster_count **out, size_t *n);

        /* e->time is filled in; the back-end fills in e->id. */
        int (*event_append)(struct store *s, struct event *e, bool wait);
        int (*event_list)(struct store *s, const struct store_event_filter *f, struct event_list *out);
        int (*event_prune)(struct store *s, const char *before, const char *audit_before, int64_t max_per_host,
                           int64_t *mark);
};

/* The back-ends of this build. */
extern const struct store_backend store_sqlite_backend;
#ifdef MUSTER_WITH_POSTGRES
extern const struct store_backend store_pg_backend;
#endif

/* Count one write transaction of `seconds` into l (store_latency_bounds). */
void store_latency_add(struct store_latency *l, double seconds);
/* A host's current status against an operation's expect_mask (0: any): 0,
 * or -ESTALE, also for a status this build does not know under a mask. */
int store_status_expected(enum host_status cur, uint32_t expect_mask);
