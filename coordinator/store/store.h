/* The coordinator's persistent state (DESIGN §3, §12): infra-envs, hosts,
 * clusters, events, releases, payload revisions, people's tokens and
 * operator catalogs. Every SQL statement lives behind this header; it
 * names no back-end type, so a PostgreSQL back-end can implement it as is.
 *
 * Conventions: 0 (or a count/flag >= 0) on success, else -errno:
 *   -ENOENT  no such row          -EEXIST  duplicate id
 *   -EBUSY   rows still refer to it (e.g. a cluster with bound hosts)
 *   -ESTALE  the row is not in a status the caller required (a state race)
 *   -EINVAL  bad argument (bad id, limit over STORE_MAX_LIMIT, ...)
 *   -EAGAIN  the database stayed locked past the busy timeout
 *   -EPROTO  the database was written by a newer muster
 *   -EIO     any other database error
 * Outputs are initialised by the callee and always freeable; the caller
 * frees them with their record's *_free (model.h, records.h). All calls are
 * thread-safe. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manifest.h"
#include "model.h"
#include "records.h"
#include "release.h"

struct store;

#define STORE_DEFAULT_LIMIT 100
#define STORE_MAX_LIMIT 1000

/* A status set for filters: STORE_STATUS(HOST_KNOWN) | ...; 0 = any. */
#define STORE_STATUS(s) (UINT32_C(1) << (s))

/* "sqlite:PATH", "sqlite://PATH" or a plain PATH (created, mode 0600).
 * Applies pending schema migrations. */
int store_open(const char *url, struct store **out);
void store_close(struct store *s);
/* The schema version of the open database. */
int store_schema_version(struct store *s);
/* The schema version this build makes and reads (an older database is
 * migrated to it at open; a newer one is refused). */
int store_schema_version_built(void);
/* Whether this build has the back-end of URL prefix `prefix` ("sqlite:",
 * "postgres://"). */
bool store_backend_built(const char *prefix);
/* Write transactions are refused with -ENOSPC while the file system of the
 * store has less than this available (reads go on). */
#define STORE_MIN_FREE_BYTES (INT64_C(1) << 20)
/* Bytes available for the store's files where it keeps them; 0 or -errno. */
int store_free_space(struct store *s, int64_t *bytes);

/* Whether this process leads the work that one process of those sharing
 * the store does (the monitor, event retention, add-ons, cleanup): 1 it
 * does, 0 another does, or -errno (not leading, then). SQLite: always 1 (one
 * process per file). PostgreSQL: a session advisory lock that one replica
 * holds on a connection of its own; when that replica dies its connection
 * goes and the lock with it, and the next replica to ask takes it. */
int store_leader(struct store *s);

/* ---- copying a store (musterd migrate) ---------------------------------- */

#define STORE_COPY_MAX_TABLES 24
struct store_copy_report {
        struct {
                const char *table; /* static */
                int64_t rows;      /* copied, and found in both after */
        } tables[STORE_COPY_MAX_TABLES];
        size_t n_tables;
        int64_t hosts_checked; /* read back from both, the same */
};
/* Copies every row of `from` into `to` in one write of `to`, then checks
 * that each table has as many rows in both and that every host reads the
 * same from both (status, cluster, role, names, inventory, check-in, token
 * generation, validations). `to` must be empty (-ENOTEMPTY) and at the same
 * schema version (-EPROTO); -EIO when the check finds a difference. Derived
 * rows (host names, host counts) are made by `to` itself. Nothing may write
 * `from` meanwhile (its musterd stopped). err says what failed. */
int store_copy(struct store *from, struct store *to, struct store_copy_report *rep, char *err, size_t errlen);

/* ---- infra-envs -------------------------------------------------------- */

/* Needs name, owner, cpu_architecture. id NULL: one is made. Fills in id,
 * token_generation (1 unless set), created_at, updated_at. -EEXIST,
 * -ENOENT when cluster_id names no cluster. */
int store_infra_env_create(struct store *s, struct infra_env *ie);
int store_infra_env_get(struct store *s, const char *id, struct infra_env *out);
/* owner NULL: all owners. */
int store_infra_env_list(struct store *s, const char *owner, const struct list_page *pg,
                         struct infra_env_list *out);
/* Writes the members named in `fields`: IE_F_NAME, IE_F_CLUSTER_ID,
 * IE_F_PULL_SECRET, IE_F_SSH_AUTHORIZED_KEY, IE_F_PROXY (all three),
 * IE_F_NTP_SOURCES (others: -EINVAL). NULL clears. Refreshes updated_at. */
int store_infra_env_update(struct store *s, const struct infra_env *ie, uint32_t fields);
/* Deletes the infra-env and, in the same transaction, its hosts (cascade),
 * unless one of them must stay: a host whose status is in block_mask, or one
 * bound to a cluster that is installing or whose owner is not the
 * infra-env's. Then nothing is deleted, -EBUSY, and those hosts (at most
 * STORE_MAX_LIMIT, without inventories) go to *blocked. Otherwise the hosts
 * that were bound to a cluster, as they were, go to *unbound (at most
 * STORE_MAX_LIMIT listed). Either list may be NULL. */
int store_infra_env_delete(struct store *s, const char *id, uint32_t block_mask, struct host_list *blocked,
                           struct host_list *unbound);
/* Revokes every token of the infra-env; the new generation goes to *gen. */
int store_infra_env_bump_token(struct store *s, const char *id, int64_t *gen);

/* ---- hosts ------------------------------------------------------------- */

/* Idempotent registration. A new host gets the infra-env's owner and
 * cluster_id, role auto and status discovering-unbound (discovering if the
 * infra-env is bound). A known host keeps everything (binding, role,
 * status, inventory) but gets the agent version, registered_at and
 * checked_in_at refreshed and reregister_pending cleared. Returns 1 if the
 * host is new, 0 if it was known; fills *out if non-NULL. -ENOENT: no such
 * infra-env. A new host is refused with -EDQUOT while the infra-env already
 * holds max_hosts hosts (counted in the same transaction; 0: no cap); a
 * known host registers again whatever the count. When the host is new,
 * `on_new` (may be NULL; as store_event_append takes it, its id filled in)
 * is appended in the same write: one commit for the host and its
 * "registered" event. */
int store_host_register_event(struct store *s, const char *infra_env_id, const char *host_id,
                              const char *agent_version, int64_t max_hosts, struct event *on_new,
                              struct host *out);
int store_host_get(struct store *s, const char *infra_env_id, const char *host_id, struct host *out);
/* The host without its inventory's text and its validations (out->brief;
 * out->has_inventory says whether it has an inventory): what a poll needs,
 * without reading and parsing the largest parts of the row. */
int store_host_get_brief(struct store *s, const char *infra_env_id, const char *host_id, struct host *out);

int store_host_list(struct store *s, const struct host_filter *f, const struct list_page *pg,
                    struct host_list *out);

/* Writes role, requested_hostname and/or installation_disk_id as named in
 * `fields` (HOST_F_ROLE, HOST_F_REQUESTED_HOSTNAME, HOST_F_INSTALLATION_DISK_ID;
 * others: -EINVAL). */
int store_host_update(struct store *s, const struct host *h, uint32_t fields);
/* A status to set with an inventory (store_host_set_inventory_status), as
 * store_host_set_status would: v NULL keeps the validations. */
struct store_host_status {
        enum host_status status;
        const char *status_info;
        const struct validation *v;
        size_t n_v;
        uint32_t expect_mask; /* != 0: only if the current status is in it */
        /* Appended with the status, when it is written (as
         * store_event_append takes them; ids filled in). */
        struct event *events;
        size_t n_events;
};
/* Stores the inventory's raw text and what is filtered on (cpu count,
 * memory, largest eligible disk, hostname); `parsed` may be NULL: then the
 * text is parsed here (-EINVAL if it is no inventory); -E2BIG over
 * MODEL_MAX_INVENTORY. In the same transaction (one write, one commit),
 * `st` (may be NULL: the inventory alone) if the host's status is still in
 * st->expect_mask: 1 when both were written, 0 when the inventory alone was
 * (the status had changed, or st is NULL), or -errno (nothing written). */
int store_host_set_inventory_status(struct store *s, const char *infra_env_id, const char *host_id,
                                    const char *inventory_json, const struct inventory *parsed,
                                    const struct store_host_status *st);
/* Sets status and status_info, and the validations unless `v` is NULL.
 * expect_mask != 0: only if the current status is in it, else -ESTALE. */
int store_host_set_status(struct store *s, const char *infra_env_id, const char *host_id,
                          enum host_status status, const char *status_info,
                          const struct validation *v, size_t n_v, uint32_t expect_mask);
/* The install story of one host in one transaction: status and status_info,
 * and, when given, progress (p non-NULL) and applied_revision (>= 0; < 0
 * keeps it). expect_mask as in set_status. */
int store_host_set_install_state(struct store *s, const char *infra_env_id, const char *host_id,
                                 enum host_status status, const char *status_info, const struct host_progress *p,
                                 int64_t applied_revision, uint32_t expect_mask);
/* One host's check-in time, for the batched form below. */
struct store_checkin {
        char infra_env_id[UUID_STR_LEN];
        char host_id[UUID_STR_LEN];
        char at[MODEL_TIME_LEN];  /* canonical RFC 3339 */
};
/* Many check-ins in one transaction; a time older than the stored one is
 * ignored, hosts that no longer exist are skipped. 0 or -errno. */
int store_host_checkin_many(struct store *s, const struct store_checkin *v, size_t n);
/* checked_in_at = at (RFC 3339), or now when at is NULL. */
int store_host_checkin(struct store *s, const char *infra_env_id, const char *host_id, const char *at);
/* Binds to cluster_id (NULL: unbinds) and sets status/status_info, in one
 * transaction; marks the host reregister_pending so its agent is told to exit
 * and register again, and clears its install progress. Unbinding also puts
 * the role back to auto. expect_mask as in set_status. -ENOENT: no such host
 * or cluster; -EBUSY: the host's cluster or the target cluster is installing
 * (checked in the same transaction). */
/* The host's own token generation (host tokens, auth_issue_host). */
int store_host_token_generation(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen);
/* Bumps it (every earlier host token of the host is revoked); *gen the new one. */
int store_host_rotate_token(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen);
int store_host_bind(struct store *s, const char *infra_env_id, const char *host_id,
                    const char *cluster_id, enum host_status status, const char *status_info,
                    uint32_t expect_mask);
/* Keep the output of a network step (connectivity-check, ntp-synchronizer,
 * domain-resolution: a JSON text) as the host's latest of that type, in
 * step_results_json. Binding and unbinding clear them all. -E2BIG past
 * STORE_MAX_STEP_RESULT, -EINVAL for text that is not JSON. */
#define STORE_MAX_STEP_RESULT (256 * 1024)
int store_host_set_step_result(struct store *s, const char *infra_env_id, const char *host_id,
                               enum step_type type, const char *output_json);
/* Forget the host's latest result of that type: 1 if there was one, 0 if
 * not, -ENOENT for no such host. */
int store_host_forget_step_result(struct store *s, const char *infra_env_id, const char *host_id,
                                  enum step_type type);
/* Test-and-clear reregister_pending: 1 if it was set (answer "exit"), 0 if not. */
int store_host_take_reregister(struct store *s, const char *infra_env_id, const char *host_id);
int store_host_delete(struct store *s, const char *infra_env_id, const char *host_id);

/* For the monitor: hosts in status_mask (0 = any) whose last check-in is
 * before `before` (RFC 3339), oldest first, at most `limit` of them, without
 * inventories. With a stage: only hosts whose progress stage is it
 * (stage_match) or is not it (!stage_match). */
int store_host_list_stale(struct store *s, const char *before, uint32_t status_mask, const char *stage,
                          bool stage_match, unsigned limit, struct host_list *out);
/* In one transaction, each of the hosts that still has not checked in since
 * `before`, is still in status_mask (0 = any) and is not disconnected
 * becomes disconnected (bound) or disconnected-unbound, with status_info.
 * Hosts that checked in or changed meanwhile (another replica's monitor
 * marked them) are skipped. Returns how many changed; *changed (n entries,
 * may be NULL) says which. */
int store_host_mark_disconnected(struct store *s, const struct host *hosts, size_t n, const char *before,
                                 uint32_t status_mask, const char *status_info, bool *changed);
/* The same for hosts being installed: each that still has not checked in
 * since `before` and is still in status_mask becomes `to` (error) with
 * status_info. Returns how many changed; *changed (n entries, may be NULL)
 * says which. */
int store_host_mark_stale(struct store *s, const struct host *hosts, size_t n, const char *before,
                          uint32_t status_mask, enum host_status to, const char *status_info, bool *changed);

/* Latency of writes, from asking for the writer lock to their answer,
 * durable (for /metrics): bucket[i] counts those <= store_latency_bounds[i]
 * seconds and above the previous bound; bucket[STORE_LATENCY_BUCKETS] the
 * rest. Writes share commits (group commit): `commits` counts the commits
 * that made `count` writes durable. */
#define STORE_LATENCY_BUCKETS 11
extern const double store_latency_bounds[STORE_LATENCY_BUCKETS];
struct store_latency {
        uint64_t bucket[STORE_LATENCY_BUCKETS + 1];
        uint64_t count;
        double sum_s;
        uint64_t commits;
};
void store_write_latency(struct store *s, struct store_latency *out);

/* How many hosts are in each status (for /metrics). */
int store_host_count_by_status(struct store *s, int64_t counts[_HOST_STATUS_MAX]);

/* ---- clusters ---------------------------------------------------------- */

/* Needs name and owner. id NULL: one is made. Status defaults to
 * "pending-for-input", high_availability_mode to Full. */
int store_cluster_create(struct store *s, struct cluster *c);
int store_cluster_get(struct store *s, const char *id, struct cluster *out);
int store_cluster_list(struct store *s, const char *owner, const struct list_page *pg,
                       struct cluster_list *out);
/* Writes the members named in `fields`: CL_F_NAME, CL_F_RELEASE_VERSION,
 * CL_F_BASE_DNS_DOMAIN, CL_F_MACHINE_NETWORK_CIDR, CL_F_API_VIP,
 * CL_F_INGRESS_VIP, CL_F_HA_MODE, CL_F_PULL_SECRET, CL_F_LABELS,
 * CL_F_CAPABILITIES (the spec), CL_F_CAP_STATUS (the status, or none when
 * !has_cap_status), CL_F_CONDITIONS, CL_F_FEATURE_SET (others: -EINVAL).
 * payload_revision only moves with store_cluster_add_payload(). */
int store_cluster_update(struct store *s, const struct cluster *c, uint32_t fields);
/* Sets status and status_info, and the validations unless v is NULL; only
 * if the status is still `expect` (NULL: any), else -ESTALE. */
int store_cluster_set_status_from(struct store *s, const char *id, const char *expect, const char *status,
                                  const char *status_info, const struct validation *v, size_t n_v);
/* A role given to a host when its cluster's installation starts. */
struct store_host_role {
        const char *infra_env_id;
        const char *host_id;
        enum host_role role;
};
/* One host's move in a cluster reset: from status `from` to `to`. */
struct store_host_reset {
        const char *infra_env_id;
        const char *host_id;
        enum host_status from, to;
        const char *status_info;
};
/* In one transaction: cluster `id`, in status `expect`, becomes `status`
 * with status_info, and each host of `hosts` still bound to it and still in
 * its `from` status moves to its `to`, told to register again
 * (reregister_pending), its progress, step results and applied revision
 * cleared. Returns how many hosts moved; -ESTALE if the cluster is no longer
 * in `expect`, -ENOENT if there is none. */
int store_cluster_reset(struct store *s, const char *id, const char *expect, const char *status,
                        const char *status_info, const struct store_host_reset *hosts, size_t n);
/* The same for a cancel: the hosts keep their progress and are marked
 * stop_pending (their agents are sent stop-installation) instead of being
 * told to register again. */
int store_cluster_cancel(struct store *s, const char *id, const char *expect, const char *status,
                         const char *status_info, const struct store_host_reset *hosts, size_t n);
/* Whether the host's agent is still to be sent stop-installation: 1, 0, -errno. */
int store_host_stop_pending(struct store *s, const char *infra_env_id, const char *host_id);
/* Its agent answered: 1 when the mark was cleared, 0 when there was none. */
int store_host_clear_stop(struct store *s, const char *infra_env_id, const char *host_id);
/* Set the bits `set`, then clear the bits `clear`, of the host's
 * pending_actions (HOST_ACTION_*), if its bits under `mask` are `want`
 * (mask 0: always; one statement, so no other write comes between). 0,
 * -EBUSY when they are not (nothing changed), -ENOENT without the host. */
int store_host_actions(struct store *s, const char *infra_env_id, const char *host_id, unsigned set,
                       unsigned clear, unsigned mask, unsigned want);
/* One upload of a host's logs, at `now`, taken only while
 * HOST_ACTION_GATHER_LOGS is set, which it clears: the host keeps its newest
 * `keep` (>= 1) uploads; one transaction. 0, -EBUSY when no logs were asked
 * for, -ENOENT without the host. */
int store_host_logs_put(struct store *s, const char *infra_env_id, const char *host_id, const char *now,
                        const void *data, size_t len, unsigned keep);
/* The host's newest upload. 0, -ENOENT when it has none (or no host). */
int store_host_logs_get(struct store *s, const char *infra_env_id, const char *host_id, struct host_logs_record *out);
struct payload_record;
/* In one transaction: a cluster in status "ready" becomes
 * preparing-for-installation with status_info; the hosts in `roles` get
 * their role; each of its hosts that is "known" becomes host_to with
 * host_info and forgets its installation-disk-speed-check result (measured
 * again for this installation); and payload (may be NULL) is stored as the cluster's revision
 * payload->revision (store_cluster_add_payload's rules). Returns how many
 * hosts moved; -ESTALE if the cluster is not ready, -ENOENT if there is none. */
int store_cluster_start_install(struct store *s, const char *id, const char *status_info,
                                enum host_status host_to, const char *host_info,
                                const struct store_host_role *roles, size_t n_roles,
                                const struct payload_record *payload);
/* -EBUSY while hosts are bound to it; infra-envs bound to it become unbound;
 * its payload revisions go with it. */
int store_cluster_delete(struct store *s, const char *id);
/* Hosts bound to the cluster whose status is in status_mask (0 = any). */
int store_cluster_count_hosts(struct store *s, const char *id, uint32_t status_mask, int64_t *count);

/* ---- releases (DESIGN §3, §6) ------------------------------------------- */

/* The release and its manifests in one transaction (in the order given:
 * the release order, file name then document index). -EEXIST if the
 * version exists; -EINVAL for a release without version or over
 * RELEASE_MAX_MANIFESTS manifests. Fills in created_at. */
int store_release_import(struct store *s, const struct release_info *info, const struct manifest_list *ms,
                         struct release_record *out);
int store_release_get(struct store *s, const char *version, struct release_record *out);
/* In import order; paged like the other lists. */
int store_release_list(struct store *s, const struct list_page *pg, struct release_record_list *out);
/* The release's manifests in release order (appended to *out). */
int store_release_manifests(struct store *s, const char *version, struct manifest_list *out);
/* -EBUSY while a cluster's release_version names it (checked in the same
 * transaction); -ENOENT. */
int store_release_delete(struct store *s, const char *version);

/* ---- payload revisions (DESIGN §6) -------------------------------------- */


/* Store revision p->revision of p->cluster_id and make it the cluster's
 * payload_revision, in one transaction, only if the cluster's current
 * payload_revision is p->revision - 1 (else -ESTALE: another revision won).
 * -ENOENT: no such cluster. Fills in created_at when NULL. */
int store_cluster_add_payload(struct store *s, struct payload_record *p);
/* With canonical. -ENOENT. */
int store_payload_get(struct store *s, const char *cluster_id, int64_t revision, struct payload_record *out);
/* Every revision of the cluster, oldest first, without canonical. */
int store_payload_list(struct store *s, const char *cluster_id, struct payload_record_list *out);

/* ---- people's tokens ---------------------------------------------------- */


/* Record a token about to be handed out. Needs every field but revoked_at.
 * An owner name belongs to one role: -EPERM when `owner` already has a
 * token of the other role; -EEXIST for a known id. */
int store_token_add(struct store *s, const struct token_record *t);
int store_token_get(struct store *s, const char *id, struct token_record *out);
/* In creation order; owner NULL: everyone's. */
int store_token_list(struct store *s, const char *owner, const struct list_page *pg,
                     struct token_record_list *out);
/* 0 when revoked now, 1 when it already was; -ENOENT. */
int store_token_revoke(struct store *s, const char *id);
/* Whether a token may still be used: 0, -EKEYREVOKED, or -ENOENT for an id
 * the store never recorded (its tokens are not accepted either). */
int store_token_check(struct store *s, const char *id);

/* ---- operator catalogs (DESIGN §3, §8) ------------------------------------ */

#define STORE_MAX_CATALOG_NAME 253
#define STORE_MAX_CATALOG_BYTES (512 * 1024 * 1024) /* its files, as stored */


/* Needs name, owner, digest and files; priority in INT32_MIN..INT32_MAX,
 * counts >= 0. id NULL: one is made. Fills in id and created_at. -EEXIST
 * when the name (or id) is taken; -E2BIG over STORE_MAX_CATALOG_BYTES. */
int store_catalog_create(struct store *s, struct catalog_record *c);
/* With its files. -ENOENT. */
int store_catalog_get(struct store *s, const char *id, struct catalog_record *out);
int store_catalog_get_by_name(struct store *s, const char *name, struct catalog_record *out);
/* Every catalog (at most STORE_MAX_LIMIT), without files, by priority then
 * name (byte order). */
int store_catalog_list(struct store *s, struct catalog_record_list *out);
/* -ENOENT. */
int store_catalog_delete(struct store *s, const char *id);

/* ---- operator subscriptions (DESIGN §8) ----------------------------------- */

#define STORE_MAX_SUBSCRIPTIONS 1000 /* of one cluster */


/* Needs cluster_id, package and owner. Fills in id and created_at.
 * -ENOENT: no such cluster; -EEXIST: the cluster has a subscription to the
 * package; -EDQUOT: the cluster has STORE_MAX_SUBSCRIPTIONS. */
int store_subscription_create(struct store *s, struct subscription_record *sub);
/* The cluster's subscriptions in the order they were made; cluster_id NULL:
 * every cluster's (at most STORE_MAX_LIMIT). */
int store_subscription_list(struct store *s, const char *cluster_id, struct subscription_record_list *out);
/* -ENOENT. */
int store_subscription_delete(struct store *s, const char *cluster_id, const char *package);
/* cleanup.enabled of the cluster's subscription to package. -ENOENT. */
int store_subscription_set_cleanup(struct store *s, const char *cluster_id, const char *package, bool enabled);
#define STORE_MAX_UNINSTALL (8 * 1024 * 1024)
/* Set the uninstall of the cluster's subscription to package to `next`
 * (JSON text; NULL: none) only if it is still `expect` (NULL: none), else
 * -ESTALE; and, in the same transaction, delete the cluster's operands
 * whose ids are drop[0..n_drop) (those gone already are no error).
 * -ENOENT: no such subscription; -E2BIG: next past STORE_MAX_UNINSTALL. */
int store_subscription_set_uninstall(struct store *s, const char *cluster_id, const char *package, const char *expect,
                                     const char *next, const char *const *drop, size_t n_drop);
/* Every subscription with an uninstall under way, of every cluster (at
 * most STORE_MAX_LIMIT), in the order they were made. */
int store_subscription_list_uninstalling(struct store *s, struct subscription_record_list *out);

/* ---- operands (DESIGN §3, §9) ---------------------------------------------- */

#define STORE_MAX_OPERANDS 10000            /* of one cluster */
#define STORE_MAX_OPERAND_BYTES (1024 * 1024) /* one operand's document */


/* Insert, or replace the one of the same identity (keeping its id and
 * created_at), for each of v[0..n) in one transaction; fills in id and
 * created_at. -ENOENT: no such cluster; -EDQUOT past STORE_MAX_OPERANDS;
 * -EINVAL for a missing member. */
int store_operand_put(struct store *s, struct operand_record *v, size_t n);
/* The cluster's operands in the order they were first applied. */
int store_operand_list(struct store *s, const char *cluster_id, struct operand_record_list *out);
/* -ENOENT. */
int store_operand_delete(struct store *s, const char *cluster_id, const char *id);

/* ---- add-ons (DESIGN §10) ------------------------------------------------- */

#define STORE_MAX_ADDON_PROXIES 1000
#define STORE_MAX_ADDON_RELEASES 1000000  /* read at once by the reconciler */
#define STORE_MAX_ADDON_SPEC (2 * 1024 * 1024)
#define STORE_MAX_ADDON_CONTENT (4 * 1024 * 1024)
#define STORE_MAX_FOUND (4 * 1024 * 1024)


/* Needs name, owner and spec. Fills in id, generation 1, created_at and
 * updated_at. -EEXIST: the name is taken; -EDQUOT past STORE_MAX_ADDON_PROXIES. */
int store_addon_proxy_create(struct store *s, struct addon_proxy_record *p);
/* By id or, when `key` is not a UUID, by name. -ENOENT. */
int store_addon_proxy_get(struct store *s, const char *key, struct addon_proxy_record *out);
/* Every proxy, in creation order. */
int store_addon_proxy_list(struct store *s, struct addon_proxy_record_list *out);
/* Writes spec, prev_spec, generation, rollback_generation, paused,
 * failure_base, deleting and conditions of p->id, only if the stored
 * generation is still expect_generation (else -ESTALE). Refreshes
 * updated_at. */
int store_addon_proxy_update(struct store *s, struct addon_proxy_record *p, int64_t expect_generation);
/* -EBUSY while releases of it remain. */
int store_addon_proxy_delete(struct store *s, const char *id);


/* Filters ANDed (NULL: any). pg NULL: every row (at most
 * STORE_MAX_ADDON_RELEASES), else a page. In creation order. */
int store_addon_release_list(struct store *s, const char *proxy_id, const char *cluster_id,
                             const struct list_page *pg, struct addon_release_record_list *out);
/* Insert or replace the release of (proxy_id, cluster_id); created_at kept
 * when it exists, updated_at now. -ENOENT: no such proxy or cluster. */
int store_addon_release_put(struct store *s, struct addon_release_record *r);
/* -ENOENT. */
int store_addon_release_delete(struct store *s, const char *proxy_id, const char *cluster_id);

/* What a host's node agent found in its manifest directory that muster did
 * not write (JSON array text, as the agent reported it), kept per host. */
int store_host_found_set(struct store *s, const char *infra_env_id, const char *host_id, const char *found_json);
struct store_host_found {
        char *infra_env_id;
        char *host_id;
        char *cluster_id;
        char *found;            /* JSON text */
};
struct store_host_found_list { struct store_host_found *v; size_t n; };
void store_host_found_list_free(struct store_host_found_list *l);
/* Of the hosts bound to cluster_id (NULL: to any cluster). */
int store_host_found_list(struct store *s, const char *cluster_id, struct store_host_found_list *out);

/* How many hosts each cluster has: every cluster with at least one host,
 * sorted by cluster id (byte order). */
struct store_cluster_count { char cluster_id[UUID_STR_LEN]; int64_t hosts; };
int store_cluster_host_counts(struct store *s, struct store_cluster_count **out, size_t *n);

/* ---- events ------------------------------------------------------------ */

/* Needs severity, category and message; fills in id and, if NULL, time.
 * Answers once the event is durable. */
int store_event_append(struct store *s, struct event *e);
/* The same, but answers once the event is written, not waiting for its
 * commit: the commit of the writes in flight around it makes it durable
 * (the writer that finds nobody behind it commits at once). For what
 * nobody is answered about (a host's "registered", a validation that
 * changed): the request that caused it does not wait for a second commit.
 * A crash in the few ms before that commit can lose the event, never a
 * write that was answered. */
int store_event_append_unwaited(struct store *s, struct event *e);

/* Oldest first; next_after is the last id returned (0 if none). */
int store_event_list(struct store *s, const struct event_filter *f, struct event_list *out);
/* Retention: deletes the events older than `before` (RFC 3339; NULL: none
 * by age) but the audit ones (category audit), those older than
 * `audit_before` (NULL: none by age), and, of each host with more than max_per_host events (0: no cap),
 * all but its newest max_per_host. Only hosts with an event after *mark are
 * counted (mark NULL: all); *mark then moves to the last event looked at, so
 * a periodic caller pays for what was added meanwhile. Ids rise with time:
 * an event stamped out of order may outlive `before` until the events
 * before it go. In short transactions; returns how many went. */
int store_event_prune(struct store *s, const char *before, const char *audit_before, int64_t max_per_host,
                      int64_t *mark);
