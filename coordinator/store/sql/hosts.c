/* Hosts: registration, reads and lists, statuses, progress, binding,
 * tokens, step results, stop and action flags, counts (liveness and logs
 * are host_liveness.c and host_logs.c); their argument checks (store.h)
 * and their SQL. */
#include "store/sql/sqlstore.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "json-cleanup.h"

/* A host row of HOST_COLS (or HOST_COLS_NO_INV); brief leaves its
 * validations unread. */
static int read_host_(struct dbstmt *st, struct host *h, bool brief) {
        char **a[] = { &h->infra_env_id, &h->id, &h->owner, &h->cluster_id };
        char **b[] = { &h->requested_hostname, &h->installation_disk_id, &h->inventory_json,
                       &h->facts.hostname };
        char **d[] = { &h->progress.stage };
        char **e[] = { &h->progress.info, &h->checked_in_at, &h->registered_at,
                       &h->discovery_agent_version };
        char **f[] = { &h->created_at, &h->updated_at, &h->step_results_json };
        int r;

        if ((r = sql_col_strs(st, 1, a, 4)) < 0 || (r = sql_col_strs(st, 6, b, 4)) < 0)
                return r;
        h->role = host_role_from_string((const char *) db_col_text(st, 5));
        h->facts.cpu_count = col_i64(st, 10);
        h->facts.memory_bytes = col_i64(st, 11);
        h->facts.max_disk_bytes = col_i64(st, 12);
        h->status = host_status_from_string((const char *) db_col_text(st, 13));
        if ((r = sql_col_str(st, 14, &h->status_info)) < 0 ||
            (!brief && (r = sql_col_validations(st, 15, &h->validations, &h->n_validations)) < 0) ||
            (r = sql_col_strs(st, 16, d, 1)) < 0)
                return r;
        h->progress.percent = col_i64(st, 17);
        if ((r = sql_col_strs(st, 18, e, 4)) < 0)
                return r;
        h->reregister_pending = db_col_int64(st, 22) != 0;
        if ((r = sql_col_strs(st, 23, f, 3)) < 0)
                return r;
        h->applied_revision = db_col_int64(st, 26);
        h->has_inventory = db_col_int64(st, 27) != 0;
        h->pending_actions = (unsigned) db_col_int64(st, 28);
        h->brief = brief;
        if (h->role < 0 || h->status < 0)
                return -EIO; /* a name this build does not know */
        return 0;
}

static int read_host(struct dbstmt *st, struct host *h) {
        return read_host_(st, h, false);
}

static void host_row_init(void *row) { host_init(row); }
static int host_row_read(struct dbstmt *st, void *row) { return read_host(st, row); }
const struct row_type host_rows = { sizeof(struct host), host_row_init, host_row_read };

static int host_get_conn_(struct dbconn *c, const char *ie, const char *id, bool brief, struct host *out) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, brief ? "SELECT " HOST_COLS_NO_INV " FROM hosts h WHERE h.infra_env_id = ?1 AND h.id = ?2"
                              : "SELECT " HOST_COLS " FROM hosts h WHERE h.infra_env_id = ?1 AND h.id = ?2", &st);
        if (r < 0 || (r = BIND(st, ie, id)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        return r ? read_host_(st, out, brief) : -ENOENT;
}

static int host_get_conn(struct dbconn *c, const char *ie, const char *id, struct host *out) {
        return host_get_conn_(c, ie, id, false, out);
}

static int host_register_conn(struct dbconn *c, const char *ie, const char *id, const char *version,
                              const char *now, int64_t max_hosts) {
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                /* A discovery agent registering ends any reclaim asked
                 * of the installed system (HOST_ACTION_RECLAIM*): only a
                 * logs request (1) outlives it. */
                if ((r = stmt(c, "UPDATE hosts SET discovery_agent_version = ?3, registered_at = ?4, "
                                 "checked_in_at = ?4, reregister_pending = 0, updated_at = ?4, "
                                 "pending_actions = pending_actions & 1 "
                                 "WHERE infra_env_id = ?1 AND id = ?2", &st)) < 0 ||
                    (r = BIND(st, ie, id, version, now)) < 0 || (r = step_done(c, st)) < 0)
                        return r;
                if (db_changes(c))
                        return 0;
        }
        if (max_hosts > 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT host_count FROM infra_envs WHERE id = ?1", &st)) < 0 ||
                    (r = BIND(st, ie)) < 0 || (r = step_row(c, st)) < 0)
                        return r;
                if (r > 0 && db_col_int64(st, 0) >= max_hosts)
                        return -EDQUOT;
        }
        _cleanup_reset_ struct dbstmt *st = NULL;
        if ((r = stmt(c, "INSERT INTO hosts (infra_env_id, id, owner, cluster_id, role, status, "
                         "checked_in_at, registered_at, discovery_agent_version, created_at, updated_at) "
                         "SELECT ie.id, ?2, ie.owner, ie.cluster_id, 'auto', "
                         "CASE WHEN ie.cluster_id IS NULL THEN 'discovering-unbound' ELSE 'discovering' END, "
                         "?4, ?4, ?3, ?4, ?4 FROM infra_envs ie WHERE ie.id = ?1", &st)) < 0 ||
            (r = BIND(st, ie, id, version, now)) < 0 || (r = step_done(c, st)) < 0)
                return r;
        return db_changes(c) ? 1 : -ENOENT;
}

/* on_new (may be NULL, checked by store_host_register_event) is appended in
 * the same write when the host is new. */
static int sql_host_register(struct store *s, const char *ie, const char *id, const char *agent_version,
                                int64_t max_hosts, struct event *on_new, struct host *out) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        int isnew = r = host_register_conn(c, ie, id, agent_version, now, max_hosts);
        if (r == 1 && on_new)
                r = sql_event_insert_conn(c, on_new);
        if (r >= 0 && out)
                r = host_get_conn(c, ie, id, out);
        r = write_end(s, c, r);
        return r < 0 ? r : isnew;
}

int store_host_register_event(struct store *s, const char *infra_env_id, const char *host_id,
                              const char *agent_version, int64_t max_hosts, struct event *on_new,
                              struct host *out) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        int r;
        if (out)
                host_init(out);
        if (host_key(infra_env_id, host_id, ie, id) < 0 || too_long(agent_version, MODEL_MAX_STRING))
                return -EINVAL;
        if (on_new && (r = sql_event_prepare(on_new)) < 0)
                return r;
        r = CALL(s, host_register, ie, id, agent_version, max_hosts, on_new, out);
        if (r < 0 && out)
                host_free(out);
        return r;
}

int sql_host_get(struct store *s, const char *ie, const char *id, bool brief, struct host *out) {
        struct dbconn *c = conn_get(s);
        int r = host_get_conn_(c, ie, id, brief, out);
        conn_put(s, c);
        return r;
}

static int host_get(struct store *s, const char *infra_env_id, const char *host_id, bool brief, struct host *out) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        host_init(out);
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        int r = CALL(s, host_get, ie, id, brief, out);
        if (r < 0)
                host_free(out);
        return r;
}

int store_host_get(struct store *s, const char *infra_env_id, const char *host_id, struct host *out) {
        return host_get(s, infra_env_id, host_id, false, out);
}

int store_host_get_brief(struct store *s, const char *infra_env_id, const char *host_id, struct host *out) {
        return host_get(s, infra_env_id, host_id, true, out);
}

static int sql_host_list(struct store *s, const struct host_filter *f, const struct list_page *pg,
                            struct host_list *out) {
        char statuses[1024];
        struct query q = { .len = 0 };
        int r;

        if ((r = sql_status_set(f->status_mask, statuses, sizeof statuses)) < 0)
                return r;
        sql_q_int(&q, f->no_inventory ? "SELECT " HOST_COLS_NO_INV " FROM hosts h WHERE h.seq > ?"
                                  : "SELECT " HOST_COLS " FROM hosts h WHERE h.seq > ?",
              pg->after);
        if (f->infra_env_id)
                sql_q_text(&q, " AND h.infra_env_id = ?", f->infra_env_id);
        if (f->cluster_id)
                sql_q_text(&q, " AND h.cluster_id = ?", f->cluster_id);
        if (f->host_id)
                sql_q_text(&q, " AND h.id = ?", f->host_id);
        if (f->unbound_only)
                sql_q_add(&q, " AND h.cluster_id IS NULL");
        if (f->status_mask)
                sql_q_text(&q, " AND instr(?, ',' || h.status || ',') > 0", statuses);
        if (f->min_cpu_cores > 0)
                sql_q_int(&q, " AND h.inv_cpu_count >= ?", f->min_cpu_cores);
        if (f->min_memory_bytes > 0)
                sql_q_int(&q, " AND h.inv_memory_bytes >= ?", f->min_memory_bytes);
        if (f->min_disk_bytes > 0)
                sql_q_int(&q, " AND h.inv_max_disk_bytes >= ?", f->min_disk_bytes);
        if (f->hostname_contains)
                sql_q_text(&q, " AND h.seq IN (SELECT n.seq FROM host_names n WHERE instr(n.name, lower(?)) > 0)",
                       f->hostname_contains);
        if (f->owner)
                sql_q_text(&q, " AND h.owner = ?", f->owner);
        if (f->cluster_owner)
                sql_q_text(&q, " AND (h.cluster_id IS NULL OR h.cluster_id IN "
                           "(SELECT id FROM clusters WHERE owner = ?))", f->cluster_owner);
        if (f->checked_in_before)
                sql_q_text(&q, " AND h.checked_in_at < ?", f->checked_in_before);
        sql_q_int(&q, " ORDER BY h.seq LIMIT ?", (int64_t) pg->limit + 1);
        sql_q_int(&q, " OFFSET ?", pg->offset);
        return sql_read_page(s, &q, pg->limit, &host_rows, (void **) &out->v, &out->n, &out->next_after);
}

int store_host_list(struct store *s, const struct host_filter *f, const struct list_page *pg,
                    struct host_list *out) {
        static const struct host_filter none = { 0 };
        char ie[UUID_STR_LEN], cid[UUID_STR_LEN], hid[UUID_STR_LEN], before[MODEL_TIME_LEN];
        struct host_filter n;
        struct list_page p;
        int r;

        *out = (struct host_list) { 0 };
        if (!f)
                f = &none;
        n = *f;
        if ((r = sql_page_check(pg, &p)) < 0 || (r = sql_norm_opt_id(f->infra_env_id, ie, &n.infra_env_id)) < 0 ||
            (r = sql_norm_opt_id(f->cluster_id, cid, &n.cluster_id)) < 0 ||
            (r = sql_norm_opt_id(f->host_id, hid, &n.host_id)) < 0)
                return r;
        if (!mask_ok(f->status_mask))
                return -EINVAL;
        if (f->checked_in_before) {
                if (model_time_normalize(f->checked_in_before, before) < 0)
                        return -EINVAL;
                n.checked_in_before = before;
        }
        if (too_long(f->hostname_contains, MODEL_MAX_STRING))
                return -EINVAL;
        r = CALL(s, host_list, &n, &p, out);
        if (r < 0)
                host_list_free(out);
        return r;
}

static int sql_host_update(struct store *s, const struct host *h, uint32_t fields) {
        const char *ie = h->infra_env_id, *id = h->id;
        char now[MODEL_TIME_LEN];
        struct query q = { .len = 0 };
        int r;

        if ((r = model_now_rfc3339(now)) < 0)
                return r;
        sql_q_text(&q, "UPDATE hosts SET updated_at = ?", now);
        if (fields & HOST_F_ROLE)
                sql_q_text(&q, ", role = ?", host_role_to_string(h->role));
        if (fields & HOST_F_REQUESTED_HOSTNAME)
                sql_q_text(&q, ", requested_hostname = ?", h->requested_hostname);
        if (fields & HOST_F_INSTALLATION_DISK_ID)
                sql_q_text(&q, ", installation_disk_id = ?", h->installation_disk_id);
        sql_q_text(&q, " WHERE infra_env_id = ?", ie);
        sql_q_text(&q, " AND id = ?", id);

        return sql_write_query(s, &q);
}

int store_host_update(struct store *s, const struct host *h, uint32_t fields) {
        const uint32_t allowed = HOST_F_ROLE | HOST_F_REQUESTED_HOSTNAME | HOST_F_INSTALLATION_DISK_ID;
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];

        if ((fields & ~allowed) || host_key(h->infra_env_id, h->id, ie, id) < 0 ||
            ((fields & HOST_F_ROLE) && !host_role_to_string(h->role)) ||
            too_long(h->requested_hostname, MODEL_MAX_STRING) ||
            too_long(h->installation_disk_id, MODEL_MAX_STRING))
                return -EINVAL;
        struct host n = *h;
        n.infra_env_id = ie;
        n.id = id;
        return CALL(s, host_update, &n, fields);
}

/* The host's current status, checked against expect_mask (0 = any). */
int sql_host_expect(struct dbconn *c, const char *ie, const char *id, uint32_t expect_mask) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT status FROM hosts WHERE infra_env_id = ?1 AND id = ?2", &st);
        if (r < 0 || (r = BIND(st, ie, id)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        if (r == 0)
                return -ENOENT;
        return store_status_expected(host_status_from_string((const char *) db_col_text(st, 0)), expect_mask);
}

/* The status, its info and (vt: validations text, NULL keeps them) the
 * validations of a host, in the open write. */
static int host_status_conn(struct dbconn *c, const char *ie, const char *id, enum host_status status,
                            const char *status_info, const char *vt, const char *now) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "UPDATE hosts SET status = ?3, status_info = ?4, updated_at = ?5, "
                        "validations = coalesce(?6, validations) "
                        "WHERE infra_env_id = ?1 AND id = ?2", &st);
        if (r >= 0 && (r = BIND(st, ie, id, host_status_to_string(status), status_info, now, vt)) >= 0)
                r = step_done(c, st);
        return r;
}

/* facts: what store_host_set_inventory_status derived from the inventory
 * (filtered on); hs (may be NULL): a status set in the same transaction if
 * expected (1 both, 0 the inventory alone). */
static int sql_host_set_inventory(struct store *s, const char *ie, const char *id, const char *inventory_json,
                                     const struct inventory_facts *facts, const struct store_host_status *hs) {
        char now[MODEL_TIME_LEN];
        _cleanup_free_ char *vt = NULL;
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (hs && hs->v && (r = validations_text(hs->v, hs->n_v, &vt)) < 0) ||
            (r = write_begin(s, &c)) < 0)
                return r;
        /* The status goes with the facts while it is the one expected. */
        bool status = false;
        if (hs) {
                r = sql_host_expect(c, ie, id, hs->expect_mask);
                status = r >= 0;
                r = r == -ESTALE ? 0 : r;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, status ? "UPDATE hosts SET inv_hostname = ?3, updated_at = ?4, "
                                          "inv_cpu_count = ?5, inv_memory_bytes = ?6, inv_max_disk_bytes = ?7, "
                                          "status = ?8, status_info = ?9, validations = coalesce(?10, validations) "
                                          "WHERE infra_env_id = ?1 AND id = ?2"
                                        : "UPDATE hosts SET inv_hostname = ?3, updated_at = ?4, "
                                          "inv_cpu_count = ?5, inv_memory_bytes = ?6, inv_max_disk_bytes = ?7 "
                                          "WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id, facts->hostname, now)) >= 0 &&
                    (r = bind_i64(st, 5, facts->cpu_count)) >= 0 &&
                    (r = bind_i64(st, 6, facts->memory_bytes)) >= 0 &&
                    (r = bind_i64(st, 7, facts->max_disk_bytes)) >= 0 &&
                    (!status || ((r = bind_text(st, 8, host_status_to_string(hs->status))) >= 0 &&
                                 (r = bind_text(st, 9, hs->status_info)) >= 0 && (r = bind_text(st, 10, vt)) >= 0)))
                        r = step_changed(c, st);
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO host_inventories (host_seq, inventory) "
                                 "SELECT seq, ?3 FROM hosts WHERE infra_env_id = ?1 AND id = ?2 "
                                 "ON CONFLICT (host_seq) DO UPDATE SET inventory = excluded.inventory", &st)) >= 0 &&
                    (r = BIND(st, ie, id, inventory_json)) >= 0)
                        r = step_changed(c, st);
        }
        for (size_t i = 0; r >= 0 && status && i < hs->n_events; i++)
                r = sql_event_insert_conn(c, &hs->events[i]);
        if (r >= 0 && hs)
                r = status ? 1 : 0; /* 0: the inventory alone */
        return write_end(s, c, r);
}

static bool status_valid(const struct store_host_status *st) {
        return host_status_to_string(st->status) && !too_long(st->status_info, MODEL_MAX_MESSAGE) &&
               st->n_v <= MODEL_MAX_VALIDATIONS;
}

int store_host_set_inventory_status(struct store *s, const char *infra_env_id, const char *host_id,
                                    const char *inventory_json, const struct inventory *parsed,
                                    const struct store_host_status *st) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        struct inventory own;
        struct inventory_facts facts;
        int r;

        if (host_key(infra_env_id, host_id, ie, id) < 0 || !inventory_json || (st && !status_valid(st)))
                return -EINVAL;
        for (size_t i = 0; st && i < st->n_events; i++)
                if ((r = sql_event_prepare(&st->events[i])) < 0)
                        return r;
        if (too_long(inventory_json, MODEL_MAX_INVENTORY))
                return -E2BIG;
        if (!parsed) {
                if ((r = inventory_from_string(inventory_json, &own, NULL, 0)) < 0) {
                        inventory_free(&own);
                        return r;
                }
                parsed = &own;
        }
        inventory_facts_init(&facts);
        r = inventory_facts_from(parsed, &facts);
        if (parsed == &own)
                inventory_free(&own);
        if (r >= 0)
                r = CALL(s, host_set_inventory, ie, id, inventory_json, &facts, st);
        inventory_facts_free(&facts);
        return r;
}

static int sql_host_set_status(struct store *s, const char *ie, const char *id, enum host_status status,
                                  const char *status_info, const struct validation *v, size_t n_v,
                                  uint32_t expect_mask) {
        char now[MODEL_TIME_LEN];
        _cleanup_free_ char *vt = NULL;
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (v && (r = validations_text(v, n_v, &vt)) < 0))
                return r;
        if ((r = write_begin(s, &c)) < 0)
                return r;
        if ((r = sql_host_expect(c, ie, id, expect_mask)) >= 0)
                r = host_status_conn(c, ie, id, status, status_info, vt, now);
        return write_end(s, c, r);
}

int store_host_set_status(struct store *s, const char *infra_env_id, const char *host_id,
                          enum host_status status, const char *status_info,
                          const struct validation *v, size_t n_v, uint32_t expect_mask) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        struct store_host_status st = { .status = status, .status_info = status_info, .n_v = n_v };
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !status_valid(&st))
                return -EINVAL;
        return CALL(s, host_set_status, ie, id, status, status_info, v, n_v, expect_mask);
}

static int sql_host_set_install_state(struct store *s, const char *ie, const char *id,
                                         enum host_status status, const char *status_info,
                                         const struct host_progress *p, int64_t applied_revision,
                                         uint32_t expect_mask) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        if ((r = sql_host_expect(c, ie, id, expect_mask)) >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET status = ?3, status_info = ?4, updated_at = ?5, "
                                 "progress_stage = CASE WHEN ?9 = 1 THEN ?6 ELSE progress_stage END, "
                                 "progress_info = CASE WHEN ?9 = 1 THEN ?7 ELSE progress_info END, "
                                 "progress_percent = CASE WHEN ?9 = 1 THEN ?8 ELSE progress_percent END, "
                                 "applied_revision = CASE WHEN ?10 >= 0 THEN ?10 ELSE applied_revision END "
                                 "WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id, host_status_to_string(status), status_info, now, p ? p->stage : NULL,
                              p ? p->info : NULL)) >= 0 &&
                    (r = bind_i64(st, 8, p ? p->percent : MODEL_UNSET)) >= 0 &&
                    (r = db_bind_int64(st, 9, p != NULL) == 0 ? 0 : -EIO) >= 0 &&
                    (r = db_bind_int64(st, 10, applied_revision) == 0 ? 0 : -EIO) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

int store_host_set_install_state(struct store *s, const char *infra_env_id, const char *host_id,
                                 enum host_status status, const char *status_info, const struct host_progress *p,
                                 int64_t applied_revision, uint32_t expect_mask) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !host_status_to_string(status) ||
            too_long(status_info, MODEL_MAX_MESSAGE) || (p && !progress_ok(p)))
                return -EINVAL;
        return CALL(s, host_set_install_state, ie, id, status, status_info, p, applied_revision, expect_mask);
}

/* 1 if the host's current cluster or the cluster `target` (may be NULL) is
 * installing (protocol.h cluster_status_is_installing), else 0. */
static int cluster_installing(struct dbconn *c, const char *ie, const char *id, const char *target) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT status FROM clusters WHERE id = ?3 OR id = "
                        "(SELECT cluster_id FROM hosts WHERE infra_env_id = ?1 AND id = ?2)", &st);
        if (r < 0 || (r = BIND(st, ie, id, target)) < 0)
                return r;
        while ((r = step_row(c, st)) > 0)
                if (cluster_status_is_installing(cluster_status_from_string((const char *) db_col_text(st, 0))))
                        return 1;
        return r;
}

static int sql_host_bind(struct store *s, const char *ie, const char *id, const char *cp,
                            enum host_status status, const char *status_info, uint32_t expect_mask) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        r = sql_host_expect(c, ie, id, expect_mask);
        if (r >= 0 && cp && (r = sql_cluster_exists(c, cp)) >= 0)
                r = r ? 0 : -ENOENT;
        if (r >= 0 && (r = cluster_installing(c, ie, id, cp)) > 0)
                r = -EBUSY;
        if (r >= 0) {
                /* A new binding starts a new install story: progress goes;
                 * unbinding also hands the role back to auto. */
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET cluster_id = ?3, status = ?4, status_info = ?5, "
                                 "updated_at = ?6, reregister_pending = 1, "
                                 "role = CASE WHEN ?3 IS NULL THEN 'auto' ELSE role END, "
                                 "progress_stage = NULL, progress_percent = NULL, progress_info = NULL, "
                                 "step_results = '{}', applied_revision = 0 "
                                 "WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id, cp, host_status_to_string(status), status_info, now)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

int store_host_bind(struct store *s, const char *infra_env_id, const char *host_id,
                    const char *cluster_id, enum host_status status, const char *status_info,
                    uint32_t expect_mask) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN], cid[UUID_STR_LEN];
        const char *cp;
        if (host_key(infra_env_id, host_id, ie, id) < 0 || sql_norm_opt_id(cluster_id, cid, &cp) < 0 ||
            !host_status_to_string(status) || too_long(status_info, MODEL_MAX_MESSAGE))
                return -EINVAL;
        return CALL(s, host_bind, ie, id, cp, status, status_info, expect_mask);
}

static int host_read_int(struct store *s, const char *ie, const char *id, const char *sql, int64_t *out);

static int sql_host_token_generation(struct store *s, const char *ie, const char *id, int64_t *gen) {
        return host_read_int(s, ie, id, "SELECT token_generation FROM hosts WHERE infra_env_id = ?1 AND id = ?2", gen);
}

int store_host_token_generation(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_token_generation, ie, id, gen);
}

static int sql_host_rotate_token(struct store *s, const char *ie, const char *id, int64_t *gen) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;
        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET token_generation = token_generation + 1, updated_at = ?3 "
                                 "WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id, now)) >= 0 && (r = step_done(c, st)) >= 0 && db_changes(c) == 0)
                        r = -ENOENT;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT token_generation FROM hosts WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id)) >= 0 && (r = step_row(c, st)) > 0) {
                        *gen = db_col_int64(st, 0);
                        r = 0;
                } else if (r == 0)
                        r = -ENOENT;
        }
        return write_end(s, c, r);
}

int store_host_rotate_token(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_rotate_token, ie, id, gen);
}

/* One UPDATE of a host's flag (sql binds ?1 infra-env, ?2 host): 1 when a
 * row changed, 0 when none did, -errno. */
static int host_clear_flag(struct store *s, const char *ie, const char *id, const char *sql, bool must_exist) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, sql, &st)) >= 0 && (r = BIND(st, ie, id)) >= 0 && (r = step_done(c, st)) >= 0)
                        r = db_changes(c) ? 1 : 0;
        }
        if (r == 0 && must_exist)
                r = sql_host_expect(c, ie, id, 0);
        return write_end(s, c, r);
}

/* One integer column of a host (sql binds ?1 infra-env, ?2 host): 0 and
 * *out, -ENOENT without the host, -errno. */
static int host_read_int(struct store *s, const char *ie, const char *id, const char *sql, int64_t *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, sql, &st);
                if (r >= 0 && (r = BIND(st, ie, id)) >= 0 && (r = step_row(c, st)) >= 0) {
                        if (r == 0)
                                r = -ENOENT;
                        else {
                                *out = db_col_int64(st, 0);
                                r = 0;
                        }
                }
        }
        conn_put(s, c);
        return r;
}

static int sql_host_take_reregister(struct store *s, const char *ie, const char *id) {
        return host_clear_flag(s, ie, id,
                               "UPDATE hosts SET reregister_pending = 0 "
                               "WHERE infra_env_id = ?1 AND id = ?2 AND reregister_pending != 0", true);
}

int store_host_take_reregister(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_take_reregister, ie, id);
}

/* Text that is not JSON is refused here (-EINVAL). */
static int sql_host_set_step_result(struct store *s, const char *ie, const char *id, enum step_type type,
                                       const char *output_json) {
        char path[64];
        struct dbconn *c;
        int r;

        snprintf(path, sizeof path, "$.\"%s\"", step_type_to_string(type));
        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET step_results = json_set(step_results, ?3, json(?4)) "
                                 "WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id, path, output_json)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r == -EIO ? -EINVAL : r);
}

int store_host_set_step_result(struct store *s, const char *infra_env_id, const char *host_id,
                               enum step_type type, const char *output_json) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !step_type_to_string(type) || !output_json)
                return -EINVAL;
        if (strlen(output_json) > STORE_MAX_STEP_RESULT)
                return -E2BIG;
        return CALL(s, host_set_step_result, ie, id, type, output_json);
}

static int sql_host_forget_step_result(struct store *s, const char *ie, const char *id,
                                          enum step_type type) {
        char path[64];
        struct dbconn *c;
        int r;

        snprintf(path, sizeof path, "$.\"%s\"", step_type_to_string(type));
        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET step_results = json_remove(step_results, ?3) "
                                 "WHERE infra_env_id = ?1 AND id = ?2 AND json_type(step_results, ?3) IS NOT NULL",
                              &st)) >= 0 &&
                    (r = BIND(st, ie, id, path)) >= 0 && (r = step_done(c, st)) >= 0)
                        r = db_changes(c) > 0;
        }
        if (r == 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT 1 FROM hosts WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id)) >= 0 && (r = step_row(c, st)) >= 0)
                        r = r > 0 ? 0 : -ENOENT;
        }
        return write_end(s, c, r);
}

int store_host_forget_step_result(struct store *s, const char *infra_env_id, const char *host_id,
                                  enum step_type type) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !step_type_to_string(type))
                return -EINVAL;
        return CALL(s, host_forget_step_result, ie, id, type);
}

static int sql_host_delete(struct store *s, const char *ie, const char *id) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM hosts WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int store_host_delete(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_delete, ie, id);
}

static int sql_host_stop_pending(struct store *s, const char *ie, const char *id) {
        int64_t v = 0;
        int r = host_read_int(s, ie, id, "SELECT stop_pending FROM hosts WHERE infra_env_id = ?1 AND id = ?2", &v);
        return r < 0 ? r : v != 0;
}

int store_host_stop_pending(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_stop_pending, ie, id);
}

static int sql_host_clear_stop(struct store *s, const char *ie, const char *id) {
        return host_clear_flag(s, ie, id,
                               "UPDATE hosts SET stop_pending = 0 WHERE infra_env_id = ?1 AND id = ?2 "
                               "AND stop_pending = 1", false);
}

int store_host_clear_stop(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_clear_stop, ie, id);
}

static int sql_host_actions(struct store *s, const char *ie, const char *id, unsigned set, unsigned clear,
                            unsigned mask, unsigned want) {
        struct dbconn *c;
        int r;
        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET pending_actions = (pending_actions | CAST(?3 AS BIGINT)) "
                                 "& ~CAST(?4 AS BIGINT) WHERE infra_env_id = ?1 AND id = ?2 "
                                 "AND (pending_actions & CAST(?5 AS BIGINT)) = CAST(?6 AS BIGINT)", &st)) >= 0 &&
                    (r = BIND(st, ie, id)) >= 0 && (r = bind_i64(st, 3, set)) >= 0 && (r = bind_i64(st, 4, clear)) >= 0 &&
                    (r = bind_i64(st, 5, mask)) >= 0 && (r = bind_i64(st, 6, want)) >= 0 && (r = step_done(c, st)) >= 0 &&
                    db_changes(c) == 0)
                        r = sql_host_expect(c, ie, id, 0) < 0 ? -ENOENT : -EBUSY;
        }
        return write_end(s, c, r);
}

int store_host_actions(struct store *s, const char *infra_env_id, const char *host_id, unsigned set,
                       unsigned clear, unsigned mask, unsigned want) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_actions, ie, id, set, clear, mask, want);
}

/* counts[] is zeroed. */
static int sql_host_count_by_status(struct store *s, int64_t counts[_HOST_STATUS_MAX]) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT status, count(*) FROM hosts GROUP BY status", &st);
                while (r >= 0 && (r = step_row(c, st)) > 0) {
                        enum host_status hs = host_status_from_string((const char *) db_col_text(st, 0));
                        if (hs != _HOST_STATUS_INVALID)
                                counts[hs] = db_col_int64(st, 1);
                }
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_host_count_by_status(struct store *s, int64_t counts[_HOST_STATUS_MAX]) {
        for (int i = 0; i < _HOST_STATUS_MAX; i++)
                counts[i] = 0;
        return CALL(s, host_count_by_status, counts);
}
