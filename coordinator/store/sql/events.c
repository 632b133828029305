/* Events: append, list and prune; their argument checks (store.h) and their
 * SQL. */
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

#define EV_COLS "id, time, severity, category, infra_env_id, cluster_id, host_id, message"

/* e as a row of events, in the open write; its id filled in. */
int sql_event_insert_conn(struct dbconn *c, struct event *e) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r;
        if ((r = stmt(c, "INSERT INTO events (time, severity, category, infra_env_id, cluster_id, "
                         "host_id, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id", &st)) >= 0 &&
            (r = BIND(st, e->time, event_severity_to_string(e->severity), event_category_to_string(e->category),
                      e->infra_env_id, e->cluster_id, e->host_id, e->message)) >= 0 &&
            (r = step_row(c, st)) >= 0)
                r = r ? (e->id = db_col_int64(st, 0), 0) : -EIO;
        return r;
}

/* e->time is filled in; e->id is filled in here. */
static int sql_event_append(struct store *s, struct event *e, bool wait) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        r = sql_event_insert_conn(c, e);
        return wait ? write_end(s, c, r) : write_end_unwaited(s, c, r);
}

/* Checks e and normalises its ids and time (now when it has none). */
int sql_event_prepare(struct event *e) {
        char now[MODEL_TIME_LEN], ie[UUID_STR_LEN], cid[UUID_STR_LEN], hid[UUID_STR_LEN];
        const char *iep, *cidp, *hidp;
        int r;

        if (!event_severity_to_string(e->severity) || !event_category_to_string(e->category) ||
            !e->message || too_long(e->message, MODEL_MAX_MESSAGE) ||
            sql_norm_opt_id(e->infra_env_id, ie, &iep) < 0 || sql_norm_opt_id(e->cluster_id, cid, &cidp) < 0 ||
            sql_norm_opt_id(e->host_id, hid, &hidp) < 0)
                return -EINVAL;
        if ((r = e->time ? model_time_normalize(e->time, now) : model_now_rfc3339(now)) < 0)
                return e->time ? -EINVAL : r;
        if ((r = sql_set_owned(&e->time, now)) < 0 || (iep && (r = sql_set_owned(&e->infra_env_id, iep)) < 0) ||
            (cidp && (r = sql_set_owned(&e->cluster_id, cidp)) < 0) ||
            (hidp && (r = sql_set_owned(&e->host_id, hidp)) < 0))
                return r;
        return 0;
}

static int event_append(struct store *s, struct event *e, bool wait) {
        int r = sql_event_prepare(e);
        return r < 0 ? r : CALL(s, event_append, e, wait);
}

int store_event_append(struct store *s, struct event *e) {
        return event_append(s, e, true);
}

int store_event_append_unwaited(struct store *s, struct event *e) {
        return event_append(s, e, false);
}

static int read_event(struct dbstmt *st, struct event *e) {
        char **a[] = { &e->time };
        char **b[] = { &e->infra_env_id, &e->cluster_id, &e->host_id, &e->message };
        int r;

        e->id = db_col_int64(st, 0);
        if ((r = sql_col_strs(st, 1, a, 1)) < 0 || (r = sql_col_strs(st, 4, b, 4)) < 0)
                return r;
        e->severity = event_severity_from_string((const char *) db_col_text(st, 2));
        e->category = event_category_from_string((const char *) db_col_text(st, 3));
        return e->severity < 0 || e->category < 0 ? -EIO : 0;
}

static void event_row_init(void *row) { event_init(row); }
static int event_row_read(struct dbstmt *st, void *row) { return read_event(st, row); }
static const struct row_type event_rows = { sizeof(struct event), event_row_init, event_row_read };

static int sql_event_list(struct store *s, const struct event_filter *f, struct event_list *out) {
        char sev[64] = ",";
        struct query q = { .len = 0 };
        int r;

        for (int i = f->min_severity; i < _EVENT_SEVERITY_MAX; i++) {
                size_t l = strlen(sev);
                snprintf(sev + l, sizeof sev - l, "%s,", event_severity_to_string((enum event_severity) i));
        }

        sql_q_int(&q, "SELECT " EV_COLS " FROM events WHERE id > ?", f->since_id);
        if (f->infra_env_id)
                sql_q_text(&q, " AND infra_env_id = ?", f->infra_env_id);
        if (f->cluster_id)
                sql_q_text(&q, " AND cluster_id = ?", f->cluster_id);
        if (f->host_id)
                sql_q_text(&q, " AND host_id = ?", f->host_id);
        sql_q_text(&q, f->category ? " AND category = ?" : " AND category != ?", f->category ? f->category : "audit");
        if (f->min_severity > EVENT_INFO)
                sql_q_text(&q, " AND instr(?, ',' || severity || ',') > 0", sev);
        sql_q_int(&q, " ORDER BY id LIMIT ?", f->limit);

        struct dbconn *c = conn_get(s);
        _cleanup_reset_ struct dbstmt *st = NULL;
        r = sql_q_prepare(c, &q, &st);
        if (r >= 0)
                r = sql_read_rows(c, st, SIZE_MAX, &event_rows, (void **) &out->v, &out->n, &out->next_after);
        stmt_resetp(&st);
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_event_list(struct store *s, const struct event_filter *f, struct event_list *out) {
        static const struct event_filter none = { 0 };
        char ie[UUID_STR_LEN], cid[UUID_STR_LEN], hid[UUID_STR_LEN];
        struct event_filter n;

        *out = (struct event_list) { 0 };
        if (!f)
                f = &none;
        n = *f;
        if (f->limit > STORE_MAX_LIMIT || f->min_severity < 0 || f->min_severity >= _EVENT_SEVERITY_MAX ||
            f->since_id < 0 || sql_norm_opt_id(f->infra_env_id, ie, &n.infra_env_id) < 0 ||
            sql_norm_opt_id(f->cluster_id, cid, &n.cluster_id) < 0 || sql_norm_opt_id(f->host_id, hid, &n.host_id) < 0)
                return -EINVAL;
        if (!n.limit)
                n.limit = STORE_DEFAULT_LIMIT;
        int r = CALL(s, event_list, &n, out);
        if (r < 0)
                event_list_free(out);
        return r < 0 ? r : 0;
}

/* Rows a pruning transaction deletes at most: the writer lock is never held
 * long, whatever the backlog. */
#define PRUNE_BATCH 5000

/* The first event id that is not older than `before`, or one past the last
 * (ids rise with time: the scan reads only the rows about to go). */
static int prune_cut(struct store *s, const char *before, int64_t *cut) {
        struct dbconn *c = conn_get(s);
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT coalesce((SELECT id FROM events WHERE time >= ?1 ORDER BY id LIMIT 1), "
                        "(SELECT coalesce(max(id), 0) + 1 FROM events))", &st);
        if (r >= 0 && (r = BIND(st, before)) >= 0 && (r = step_row(c, st)) > 0)
                *cut = db_col_int64(st, 0);
        stmt_resetp(&st);
        conn_put(s, c);
        return r < 0 ? r : 0;
}

/* The hosts with an event after id `since` that have more than `max`
 * events, and in *top the largest id looked at. Counting stops at max + 1,
 * so a call costs what was added since the last one, not the whole table. */
static int prune_hosts(struct store *s, int64_t since, int64_t max, struct strv *out, int64_t *top) {
        struct strv fresh = { 0 };
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT coalesce(max(id), 0) FROM events", &st);
                if (r >= 0 && (r = step_row(c, st)) > 0)
                        *top = db_col_int64(st, 0);
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT DISTINCT host_id FROM events WHERE id > ?1 AND id <= ?2 AND host_id IS NOT NULL",
                         &st);
                if (r >= 0 && (r = bind_i64(st, 1, since)) >= 0 && (r = bind_i64(st, 2, *top)) >= 0)
                        while ((r = step_row(c, st)) > 0)
                                if ((r = strv_push(&fresh, (const char *) db_col_text(st, 0))) < 0)
                                        break;
        }
        for (size_t i = 0; r >= 0 && i < fresh.n; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT count(*) FROM (SELECT 1 FROM events WHERE host_id = ?1 LIMIT ?2) AS e", &st);
                if (r >= 0 && (r = bind_text(st, 1, fresh.v[i])) >= 0 && (r = bind_i64(st, 2, max + 1)) >= 0 &&
                    (r = step_row(c, st)) > 0 && db_col_int64(st, 0) > max)
                        r = strv_push(out, fresh.v[i]);
        }
        conn_put(s, c);
        strv_free(&fresh);
        return r < 0 ? r : 0;
}

/* By age: the events (audit ones, or the others) stamped before `before`,
 * a batch per transaction; adds how many went to *total. */
static int prune_by_age(struct store *s, const char *before, bool audit, int64_t *total) {
        int64_t cut = 0;
        struct dbconn *c;
        int r;
        if (!before)
                return 0;
        if ((r = prune_cut(s, before, &cut)) < 0)
                return r;
        for (int changed = PRUNE_BATCH; changed == PRUNE_BATCH;) {
                if ((r = write_begin(s, &c)) < 0)
                        return r;
                {
                        _cleanup_reset_ struct dbstmt *st = NULL;
                        if ((r = stmt(c, audit ? "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id < ?1 "
                                                 "AND category = 'audit' ORDER BY id LIMIT ?2)"
                                               : "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id < ?1 "
                                                 "AND category != 'audit' ORDER BY id LIMIT ?2)", &st)) >= 0 &&
                            (r = bind_i64(st, 1, cut)) >= 0 && (r = bind_i64(st, 2, PRUNE_BATCH)) >= 0 &&
                            (r = step_done(c, st)) >= 0)
                                r = changed = db_changes(c);
                }
                if ((r = write_end(s, c, r)) < 0)
                        return r;
                *total += changed;
        }
        return 0;
}

static int sql_event_prune(struct store *s, const char *before, const char *audit_before, int64_t max_per_host,
                              int64_t *mark) {
        int64_t total = 0, top = 0;
        struct dbconn *c;
        int r;

        if ((r = prune_by_age(s, before, false, &total)) < 0 || (r = prune_by_age(s, audit_before, true, &total)) < 0)
                return r;
        if (max_per_host == 0)
                return total > INT_MAX ? INT_MAX : (int) total;
        /* By count: of each host over the limit, all but its newest. */
        struct strv hosts = { 0 };
        if ((r = prune_hosts(s, mark ? *mark : 0, max_per_host, &hosts, &top)) < 0) {
                strv_free(&hosts);
                return r;
        }
        for (size_t i = 0; i < hosts.n && r >= 0; i++) {
                int changed = PRUNE_BATCH;
                while (r >= 0 && changed == PRUNE_BATCH) {
                        if ((r = write_begin(s, &c)) < 0)
                                break;
                        {
                                _cleanup_reset_ struct dbstmt *st = NULL;
                                if ((r = stmt(c, "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE "
                                                 "host_id = ?1 AND id < (SELECT id FROM events WHERE host_id = ?1 "
                                                 "ORDER BY id DESC LIMIT 1 OFFSET ?2) ORDER BY id LIMIT ?3)",
                                              &st)) >= 0 &&
                                    (r = bind_text(st, 1, hosts.v[i])) >= 0 &&
                                    (r = bind_i64(st, 2, max_per_host - 1)) >= 0 &&
                                    (r = bind_i64(st, 3, PRUNE_BATCH)) >= 0 && (r = step_done(c, st)) >= 0)
                                        total += changed = db_changes(c);
                        }
                        r = write_end(s, c, r);
                }
        }
        strv_free(&hosts);
        if (r < 0)
                return r;
        if (mark)
                *mark = top;
        return total > INT_MAX ? INT_MAX : (int) total;
}

int store_event_prune(struct store *s, const char *before, const char *audit_before, int64_t max_per_host,
                      int64_t *mark) {
        char t[MODEL_TIME_LEN], a[MODEL_TIME_LEN];
        if ((before && model_time_normalize(before, t) < 0) ||
            (audit_before && model_time_normalize(audit_before, a) < 0) || max_per_host < 0)
                return -EINVAL;
        return CALL(s, event_prune, before ? t : NULL, audit_before ? a : NULL, max_per_host, mark);
}
