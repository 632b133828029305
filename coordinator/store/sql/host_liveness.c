/* Hosts' liveness: agents' check-ins (one, or a batch from the check-in
 * buffer), and the monitor's reads and marks of hosts whose check-ins
 * stopped (stale, disconnected); their argument checks (store.h) and
 * their SQL. */
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
/* t: never NULL (store_host_checkin puts in now). */
static int sql_host_checkin(struct store *s, const char *ie, const char *id, const char *t) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                /* Not updated_at: a check-in is not a change of the resource. */
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET checked_in_at = ?3 WHERE infra_env_id = ?1 AND id = ?2",
                              &st)) >= 0 &&
                    (r = BIND(st, ie, id, t)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int store_host_checkin(struct store *s, const char *infra_env_id, const char *host_id, const char *at) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN], t[MODEL_TIME_LEN];
        int r;
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        if ((r = at ? model_time_normalize(at, t) : model_now_rfc3339(t)) < 0)
                return at ? -EINVAL : r;
        return CALL(s, host_checkin, ie, id, t);
}

/* n > 0; the check-ins as the caller gave them (not checked). */
static int sql_host_checkin_many(struct store *s, const struct store_checkin *v, size_t n) {
        struct dbconn *c;
        int r;
        if ((r = write_begin(s, &c)) < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET checked_in_at = ?3 WHERE infra_env_id = ?1 AND id = ?2 "
                                 "AND (checked_in_at IS NULL OR checked_in_at < ?3)", &st)) >= 0 &&
                    (r = BIND(st, v[i].infra_env_id, v[i].host_id, v[i].at)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

int store_host_checkin_many(struct store *s, const struct store_checkin *v, size_t n) {
        return n == 0 ? 0 : CALL(s, host_checkin_many, v, n);
}

/* limit resolved (1..STORE_MAX_LIMIT). */
static int sql_host_list_stale(struct store *s, const char *t, uint32_t status_mask, const char *stage,
                                  bool stage_match, unsigned limit, struct host_list *out) {
        char statuses[1024];
        int r;

        if ((r = sql_status_set(status_mask, statuses, sizeof statuses)) < 0)
                return r;

        struct dbconn *c = conn_get(s);
        _cleanup_reset_ struct dbstmt *st = NULL;
        r = stmt(c, "SELECT " HOST_COLS_NO_INV " FROM hosts h WHERE h.checked_in_at < ?1 "
                    "AND (?2 = ',' OR instr(?2, ',' || h.status || ',') > 0) "
                    "AND (?4 IS NULL OR (?5 = 1 AND h.progress_stage = ?4) OR (?5 = 0 AND h.progress_stage IS DISTINCT FROM ?4)) "
                    "ORDER BY h.checked_in_at, h.seq LIMIT ?3", &st);
        if (r >= 0 && (r = BIND(st, t, statuses)) >= 0 && (r = bind_i64(st, 3, (int64_t) limit)) >= 0 &&
            (r = bind_text(st, 4, stage)) >= 0 && (r = bind_i64(st, 5, stage_match ? 1 : 0)) >= 0)
                r = sql_read_rows(c, st, SIZE_MAX, &host_rows, (void **) &out->v, &out->n, NULL);
        stmt_resetp(&st);
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_host_list_stale(struct store *s, const char *before, uint32_t status_mask, const char *stage,
                          bool stage_match, unsigned limit, struct host_list *out) {
        char t[MODEL_TIME_LEN];
        *out = (struct host_list) { 0 };
        if (!before || model_time_normalize(before, t) < 0 || limit > STORE_MAX_LIMIT || !mask_ok(status_mask))
                return -EINVAL;
        int r = CALL(s, host_list_stale, t, status_mask, stage, stage_match, limit ? limit : STORE_DEFAULT_LIMIT,
                                        out);
        if (r < 0)
                host_list_free(out);
        return r < 0 ? r : 0;
}

/* Run `sql` for each of hosts in one write transaction: ?1 ?2 the host's key,
 * ?3 before, ?4 status_info, ?5 now, ?6 the statuses of status_mask and ?7 `to`
 * (unbound when NULL). Returns how many hosts changed; changed[i] (may be NULL)
 * says which. */
static int mark_hosts(struct store *s, const struct host *hosts, size_t n, const char *t, uint32_t status_mask,
                      const char *to, const char *status_info, const char *sql, bool *changed) {
        char now[MODEL_TIME_LEN], statuses[1024];
        struct dbconn *c;
        int r, count = 0;

        if ((r = sql_status_set(status_mask, statuses, sizeof statuses)) < 0 || (r = model_now_rfc3339(now)) < 0 ||
            (r = write_begin(s, &c)) < 0)
                return r;
        for (size_t i = 0; changed && i < n; i++)
                changed[i] = false; /* a try before this one may have set some */
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, sql, &st)) >= 0 &&
                    (r = BIND(st, hosts[i].infra_env_id, hosts[i].id, t, status_info, now, statuses)) >= 0 &&
                    (!to || (r = bind_text(st, 7, to)) >= 0) && (r = step_done(c, st)) >= 0 &&
                    db_changes(c)) {
                        count++;
                        if (changed)
                                changed[i] = true;
                }
        }
        r = write_end(s, c, r);
        return r < 0 ? r : count;
}

/* n > 0. */
static int sql_host_mark_disconnected(struct store *s, const struct host *hosts, size_t n, const char *before,
                                      uint32_t status_mask, const char *status_info, bool *changed) {
        return mark_hosts(s, hosts, n, before, status_mask, NULL, status_info,
                          "UPDATE hosts SET status = CASE WHEN cluster_id IS NULL "
                          "THEN 'disconnected-unbound' ELSE 'disconnected' END, "
                          "status_info = ?4, updated_at = ?5 "
                          "WHERE infra_env_id = ?1 AND id = ?2 AND checked_in_at < ?3 "
                          "AND status NOT IN ('disconnected', 'disconnected-unbound') "
                          "AND (?6 = ',' OR instr(?6, ',' || status || ',') > 0)", changed);
}

/* The checks of store_host_mark_* that need no copy: `before` canonical in t. */
static int mark_check(const struct host *hosts, size_t n, const char *before, uint32_t status_mask,
                      const char *status_info, char t[MODEL_TIME_LEN]) {
        if (!before || model_time_normalize(before, t) < 0 || too_long(status_info, MODEL_MAX_MESSAGE) ||
            (n && !hosts) || !mask_ok(status_mask))
                return -EINVAL;
        return 0;
}

/* A copy of hosts (n > 0) with canonical keys for the SQL; the caller
 * frees *copy and *keys. */
static int mark_copy(const struct host *hosts, size_t n, struct host **copy, struct key_pair **keys) {
        if (!(*copy = calloc(n, sizeof **copy)) || !(*keys = calloc(n, sizeof **keys)))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct key_pair *k = &(*keys)[i];
                if (host_key(hosts[i].infra_env_id, hosts[i].id, k->infra_env_id, k->host_id) < 0)
                        return -EINVAL;
                (*copy)[i] = hosts[i];
                (*copy)[i].infra_env_id = k->infra_env_id;
                (*copy)[i].id = k->host_id;
        }
        return 0;
}

int store_host_mark_disconnected(struct store *s, const struct host *hosts, size_t n, const char *before,
                                 uint32_t status_mask, const char *status_info, bool *changed) {
        char t[MODEL_TIME_LEN];
        _cleanup_free_ struct host *copy = NULL;
        _cleanup_free_ struct key_pair *keys = NULL;
        int r;

        if ((r = mark_check(hosts, n, before, status_mask, status_info, t)) < 0)
                return r;
        for (size_t i = 0; changed && i < n; i++)
                changed[i] = false;
        if (n == 0)
                return 0;
        if ((r = mark_copy(hosts, n, &copy, &keys)) >= 0)
                r = CALL(s, host_mark_disconnected, copy, n, t, status_mask, status_info, changed);
        if (r < 0 && changed)
                for (size_t i = 0; i < n; i++)
                        changed[i] = false;
        return r;
}

/* n > 0; changed[] (may be NULL) is all false on entry;
 * store_host_mark_stale clears it again when the operation fails. */
static int sql_host_mark_stale(struct store *s, const struct host *hosts, size_t n, const char *before,
                                  uint32_t status_mask, enum host_status to, const char *status_info, bool *changed) {
        return mark_hosts(s, hosts, n, before, status_mask, host_status_to_string(to), status_info,
                          "UPDATE hosts SET status = ?7, status_info = ?4, updated_at = ?5 "
                          "WHERE infra_env_id = ?1 AND id = ?2 AND checked_in_at < ?3 AND status != ?7 "
                          "AND (?6 = ',' OR instr(?6, ',' || status || ',') > 0)", changed);
}

int store_host_mark_stale(struct store *s, const struct host *hosts, size_t n, const char *before,
                          uint32_t status_mask, enum host_status to, const char *status_info, bool *changed) {
        char t[MODEL_TIME_LEN];
        _cleanup_free_ struct host *copy = NULL;
        _cleanup_free_ struct key_pair *keys = NULL;
        int r;

        if (!host_status_to_string(to))
                return -EINVAL;
        if ((r = mark_check(hosts, n, before, status_mask, status_info, t)) < 0)
                return r;
        for (size_t i = 0; changed && i < n; i++)
                changed[i] = false;
        if (n == 0)
                return 0;
        if ((r = mark_copy(hosts, n, &copy, &keys)) >= 0)
                r = CALL(s, host_mark_stale, copy, n, t, status_mask, to, status_info, changed);
        if (r < 0 && changed)
                for (size_t i = 0; i < n; i++)
                        changed[i] = false;
        return r;
}
