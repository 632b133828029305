/* Add-ons: proxies and their releases, what hosts found, and the hosts per
 * cluster; their argument checks (store.h) and their SQL. */
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

#define AP_COLS "seq, id, name, owner, spec, prev_spec, conditions, created_at, updated_at, generation, " \
                "rollback_generation, paused, failure_base, deleting"

static int read_addon_proxy(struct dbstmt *st, struct addon_proxy_record *p) {
        char **a[] = { &p->id, &p->name, &p->owner, &p->spec, &p->prev_spec, &p->conditions, &p->created_at,
                       &p->updated_at };
        p->seq = db_col_int64(st, 0);
        p->generation = db_col_int64(st, 9);
        p->rollback_generation = db_col_int64(st, 10);
        p->paused = db_col_int64(st, 11) != 0;
        p->failure_base = db_col_int64(st, 12);
        p->deleting = db_col_int64(st, 13) != 0;
        return sql_col_strs(st, 1, a, sizeof a / sizeof *a);
}

static void addon_proxy_row_init(void *row) { addon_proxy_record_init(row); }
static int addon_proxy_row_read(struct dbstmt *st, void *row) { return read_addon_proxy(st, row); }
static const struct row_type addon_proxy_rows = { sizeof(struct addon_proxy_record), addon_proxy_row_init,
                                                  addon_proxy_row_read };

/* p->id, created_at, updated_at, generation filled in. */
static int sql_addon_proxy_create(struct store *s, const struct addon_proxy_record *p) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT count(*) FROM addon_proxies", &st)) >= 0 && (r = step_row(c, st)) > 0 &&
                    db_col_int64(st, 0) >= STORE_MAX_ADDON_PROXIES)
                        r = -EDQUOT;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO addon_proxies (id, name, owner, spec, prev_spec, conditions, "
                                 "created_at, updated_at, generation, paused, failure_base, deleting) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", &st)) >= 0 &&
                    (r = BIND(st, p->id, p->name, p->owner, p->spec, p->prev_spec, p->conditions, p->created_at,
                              p->updated_at)) >= 0 &&
                    (r = bind_i64(st, 9, p->generation)) >= 0 && (r = bind_i64(st, 10, p->paused)) >= 0 &&
                    (r = bind_i64(st, 11, p->failure_base)) >= 0 && (r = bind_i64(st, 12, p->deleting)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

int store_addon_proxy_create(struct store *s, struct addon_proxy_record *p) {
        char id[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!p || !text_ok(p->name, STORE_MAX_CATALOG_NAME) || !text_ok(p->owner, MODEL_MAX_STRING) ||
            !text_ok(p->spec, STORE_MAX_ADDON_SPEC))
                return -EINVAL;
        if ((r = model_new_id(id)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = sql_set_owned(&p->id, id)) < 0 || (r = sql_set_owned(&p->created_at, now)) < 0 ||
            (r = sql_set_owned(&p->updated_at, now)) < 0)
                return r;
        p->generation = 1;
        return CALL(s, addon_proxy_create, p);
}

/* By id (name NULL) or by name (id NULL). */
static int sql_addon_proxy_get(struct store *s, const char *id, const char *name, struct addon_proxy_record *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, id ? "SELECT " AP_COLS " FROM addon_proxies WHERE id = ?1"
                               : "SELECT " AP_COLS " FROM addon_proxies WHERE name = ?1", &st);
                if (r >= 0 && (r = BIND(st, id ? id : name)) >= 0 && (r = step_row(c, st)) >= 0)
                        r = r ? read_addon_proxy(st, out) : -ENOENT;
        }
        conn_put(s, c);
        return r;
}

int store_addon_proxy_get(struct store *s, const char *key, struct addon_proxy_record *out) {
        char nid[UUID_STR_LEN];
        int r;
        addon_proxy_record_init(out);
        if (!key || !*key)
                return -EINVAL;
        if (norm_id(key, nid) == 0)
                r = CALL(s, addon_proxy_get, nid, NULL, out);
        else if (too_long(key, STORE_MAX_CATALOG_NAME))
                return -ENOENT;
        else
                r = CALL(s, addon_proxy_get, NULL, key, out);
        if (r < 0)
                addon_proxy_record_free(out);
        return r;
}

static int sql_addon_proxy_list(struct store *s, struct addon_proxy_record_list *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT " AP_COLS " FROM addon_proxies ORDER BY seq", &st)) >= 0)
                        r = sql_read_rows(c, st, STORE_MAX_ADDON_PROXIES, &addon_proxy_rows, (void **) &out->v, &out->n,
                                      NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_addon_proxy_list(struct store *s, struct addon_proxy_record_list *out) {
        *out = (struct addon_proxy_record_list) { 0 };
        int r = CALL(s, addon_proxy_list, out);
        if (r < 0)
                addon_proxy_record_list_free(out);
        return r < 0 ? r : 0;
}

static int sql_addon_proxy_update(struct store *s, const struct addon_proxy_record *p, int64_t expect_generation) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT generation FROM addon_proxies WHERE id = ?1", &st)) >= 0 &&
                    (r = BIND(st, p->id)) >= 0 && (r = step_row(c, st)) >= 0)
                        r = r == 0 ? -ENOENT : db_col_int64(st, 0) != expect_generation ? -ESTALE : 0;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE addon_proxies SET spec = ?2, prev_spec = ?3, conditions = ?4, "
                                 "updated_at = ?5, generation = ?6, rollback_generation = ?7, paused = ?8, "
                                 "failure_base = ?9, deleting = ?10 WHERE id = ?1", &st)) >= 0 &&
                    (r = BIND(st, p->id, p->spec, p->prev_spec, p->conditions, p->updated_at)) >= 0 &&
                    (r = bind_i64(st, 6, p->generation)) >= 0 && (r = bind_i64(st, 7, p->rollback_generation)) >= 0 &&
                    (r = bind_i64(st, 8, p->paused)) >= 0 && (r = bind_i64(st, 9, p->failure_base)) >= 0 &&
                    (r = bind_i64(st, 10, p->deleting)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int store_addon_proxy_update(struct store *s, struct addon_proxy_record *p, int64_t expect_generation) {
        char nid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;
        if (!p || norm_id(p->id, nid) < 0 || !text_ok(p->spec, STORE_MAX_ADDON_SPEC) ||
            (p->prev_spec && too_long(p->prev_spec, STORE_MAX_ADDON_SPEC)) ||
            (p->conditions && too_long(p->conditions, STORE_MAX_ADDON_SPEC)) || p->generation < 1)
                return -EINVAL;
        if ((r = model_now_rfc3339(now)) < 0 || (r = sql_set_owned(&p->updated_at, now)) < 0 ||
            (r = sql_set_owned(&p->id, nid)) < 0)
                return r;
        return CALL(s, addon_proxy_update, p, expect_generation);
}

static int sql_addon_proxy_delete(struct store *s, const char *id) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT 1 FROM addon_releases WHERE proxy_id = ?1 LIMIT 1", &st)) >= 0 &&
                    (r = BIND(st, id)) >= 0 && (r = step_row(c, st)) > 0)
                        r = -EBUSY;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM addon_proxies WHERE id = ?1", &st)) >= 0 && (r = BIND(st, id)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int store_addon_proxy_delete(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, addon_proxy_delete, nid);
}

#define AR_COLS "seq, proxy_id, cluster_id, content, prev_content, status, message, created_at, updated_at, " \
                "revision, applied_revision, payload_revision, generation, conflict, started_at, applied_at"

static int read_addon_release(struct dbstmt *st, struct addon_release_record *a) {
        char **v[] = { &a->proxy_id, &a->cluster_id, &a->content, &a->prev_content, &a->status, &a->message,
                       &a->created_at, &a->updated_at };
        a->seq = db_col_int64(st, 0);
        a->revision = db_col_int64(st, 9);
        a->applied_revision = db_col_int64(st, 10);
        a->payload_revision = db_col_int64(st, 11);
        a->generation = db_col_int64(st, 12);
        a->conflict = db_col_int64(st, 13) != 0;
        a->started_at = db_col_int64(st, 14);
        a->applied_at = db_col_int64(st, 15);
        return sql_col_strs(st, 1, v, sizeof v / sizeof *v);
}

static void addon_release_row_init(void *row) { addon_release_record_init(row); }
static int addon_release_row_read(struct dbstmt *st, void *row) { return read_addon_release(st, row); }
static const struct row_type addon_release_rows = { sizeof(struct addon_release_record), addon_release_row_init,
                                                    addon_release_row_read };

static int sql_addon_release_list(struct store *s, const char *proxy_id, const char *cluster_id,
                                     const struct list_page *pg, struct addon_release_record_list *out) {
        struct query q = { .len = 0 };
        sql_q_add(&q, "SELECT " AR_COLS " FROM addon_releases");
        sql_q_int(&q, " WHERE seq > ?", pg ? pg->after : 0);
        if (proxy_id)
                sql_q_text(&q, " AND proxy_id = ?", proxy_id);
        if (cluster_id)
                sql_q_text(&q, " AND cluster_id = ?", cluster_id);
        unsigned limit = pg ? (pg->limit ? pg->limit : STORE_DEFAULT_LIMIT) : STORE_MAX_ADDON_RELEASES;
        sql_q_int(&q, " ORDER BY seq LIMIT ?", (int64_t) limit + 1);
        sql_q_int(&q, " OFFSET ?", pg ? pg->offset : 0);
        return sql_read_page(s, &q, limit, &addon_release_rows, (void **) &out->v, &out->n, &out->next_after);
}

int store_addon_release_list(struct store *s, const char *proxy_id, const char *cluster_id,
                             const struct list_page *pg, struct addon_release_record_list *out) {
        char pid[UUID_STR_LEN], cid[UUID_STR_LEN];
        *out = (struct addon_release_record_list) { 0 };
        if ((proxy_id && norm_id(proxy_id, pid) < 0) || (cluster_id && norm_id(cluster_id, cid) < 0) ||
            (pg && pg->limit > STORE_MAX_LIMIT))
                return -EINVAL;
        int r = CALL(s, addon_release_list, proxy_id ? pid : NULL, cluster_id ? cid : NULL, pg, out);
        if (r < 0)
                addon_release_record_list_free(out);
        return r < 0 ? r : 0;
}

/* r->created_at/updated_at: now (created_at kept for an existing row). */
static int sql_addon_release_put(struct store *s, const struct addon_release_record *a) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO addon_releases (proxy_id, cluster_id, content, prev_content, status, "
                                 "message, created_at, updated_at, revision, applied_revision, payload_revision, "
                                 "generation, conflict, started_at, applied_at) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
                                 "ON CONFLICT (proxy_id, cluster_id) DO UPDATE SET content = excluded.content, "
                                 "prev_content = excluded.prev_content, status = excluded.status, "
                                 "message = excluded.message, updated_at = excluded.updated_at, "
                                 "revision = excluded.revision, applied_revision = excluded.applied_revision, "
                                 "payload_revision = excluded.payload_revision, generation = excluded.generation, "
                                 "conflict = excluded.conflict, started_at = excluded.started_at, "
                                 "applied_at = excluded.applied_at", &st)) >= 0 &&
                    (r = BIND(st, a->proxy_id, a->cluster_id, a->content, a->prev_content, a->status, a->message,
                              a->created_at, a->updated_at)) >= 0 &&
                    (r = bind_i64(st, 9, a->revision)) >= 0 && (r = bind_i64(st, 10, a->applied_revision)) >= 0 &&
                    (r = bind_i64(st, 11, a->payload_revision)) >= 0 && (r = bind_i64(st, 12, a->generation)) >= 0 &&
                    (r = bind_i64(st, 13, a->conflict)) >= 0 && (r = bind_i64(st, 14, a->started_at)) >= 0 &&
                    (r = bind_i64(st, 15, a->applied_at)) >= 0)
                        r = step_done(c, st);
                if (r == -EBUSY)
                        r = -ENOENT; /* a foreign key: no such proxy or cluster */
        }
        return write_end(s, c, r);
}

int store_addon_release_put(struct store *s, struct addon_release_record *r) {
        char pid[UUID_STR_LEN], cid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int e;
        if (!r || norm_id(r->proxy_id, pid) < 0 || norm_id(r->cluster_id, cid) < 0 ||
            !text_ok(r->content, STORE_MAX_ADDON_CONTENT) ||
            (r->prev_content && too_long(r->prev_content, STORE_MAX_ADDON_CONTENT)) || !text_ok(r->status, 32) ||
            (r->message && too_long(r->message, MODEL_MAX_STRING)) || r->revision < 1)
                return -EINVAL;
        if ((e = model_now_rfc3339(now)) < 0 || (e = sql_set_owned(&r->updated_at, now)) < 0 ||
            (!r->created_at && (e = sql_set_owned(&r->created_at, now)) < 0) || (e = sql_set_owned(&r->proxy_id, pid)) < 0 ||
            (e = sql_set_owned(&r->cluster_id, cid)) < 0)
                return e;
        return CALL(s, addon_release_put, r);
}

static int sql_addon_release_delete(struct store *s, const char *proxy_id, const char *cluster_id) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM addon_releases WHERE proxy_id = ?1 AND cluster_id = ?2", &st)) >= 0 &&
                    (r = BIND(st, proxy_id, cluster_id)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int store_addon_release_delete(struct store *s, const char *proxy_id, const char *cluster_id) {
        char pid[UUID_STR_LEN], cid[UUID_STR_LEN];
        if (norm_id(proxy_id, pid) < 0 || norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        return CALL(s, addon_release_delete, pid, cid);
}

static int sql_host_found_set(struct store *s, const char *infra_env_id, const char *host_id, const char *found,
                                 const char *now) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO host_found (infra_env_id, host_id, found, updated_at) "
                                 "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (infra_env_id, host_id) DO UPDATE SET "
                                 "found = excluded.found, updated_at = excluded.updated_at", &st)) >= 0 &&
                    (r = BIND(st, infra_env_id, host_id, found, now)) >= 0)
                        r = step_done(c, st);
                if (r == -EBUSY)
                        r = -ENOENT; /* no such host */
        }
        return write_end(s, c, r);
}

int store_host_found_set(struct store *s, const char *infra_env_id, const char *host_id, const char *found_json) {
        char ie[UUID_STR_LEN], h[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;
        if (norm_id(infra_env_id, ie) < 0 || norm_id(host_id, h) < 0 || !text_ok(found_json, STORE_MAX_FOUND))
                return -EINVAL;
        if ((r = model_now_rfc3339(now)) < 0)
                return r;
        return CALL(s, host_found_set, ie, h, found_json, now);
}

static int sql_host_found_list(struct store *s, const char *cluster_id, struct store_host_found_list *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, cluster_id ? "SELECT f.infra_env_id, f.host_id, h.cluster_id, f.found FROM host_found f "
                                         "JOIN hosts h ON h.infra_env_id = f.infra_env_id AND h.id = f.host_id "
                                         "WHERE h.cluster_id = ?1 ORDER BY f.infra_env_id, f.host_id"
                                       : "SELECT f.infra_env_id, f.host_id, h.cluster_id, f.found FROM host_found f "
                                         "JOIN hosts h ON h.infra_env_id = f.infra_env_id AND h.id = f.host_id "
                                         "WHERE h.cluster_id IS NOT NULL ORDER BY f.infra_env_id, f.host_id", &st);
                if (r >= 0 && cluster_id)
                        r = BIND(st, cluster_id);
                while (r >= 0 && (r = step_row(c, st)) > 0) {
                        struct store_host_found *f = inv_array_append((void **) &out->v, &out->n, sizeof *f);
                        if (!f) {
                                r = -ENOMEM;
                                break;
                        }
                        *f = (struct store_host_found) { 0 };
                        char **a[] = { &f->infra_env_id, &f->host_id, &f->cluster_id, &f->found };
                        r = sql_col_strs(st, 0, a, 4);
                }
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_host_found_list(struct store *s, const char *cluster_id, struct store_host_found_list *out) {
        char cid[UUID_STR_LEN];
        *out = (struct store_host_found_list) { 0 };
        if (cluster_id && norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        int r = CALL(s, host_found_list, cluster_id ? cid : NULL, out);
        if (r < 0)
                store_host_found_list_free(out);
        return r < 0 ? r : 0;
}

static int sql_cluster_host_counts(struct store *s, struct store_cluster_count **out, size_t *n) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT cluster_id, count(*) FROM hosts WHERE cluster_id IS NOT NULL GROUP BY cluster_id "
                         "ORDER BY cluster_id",
                         &st);
                while (r >= 0 && (r = step_row(c, st)) > 0) {
                        struct store_cluster_count *e = inv_array_append((void **) out, n, sizeof *e);
                        if (!e) {
                                r = -ENOMEM;
                                break;
                        }
                        snprintf(e->cluster_id, sizeof e->cluster_id, "%s", (const char *) db_col_text(st, 0));
                        e->hosts = db_col_int64(st, 1);
                }
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_cluster_host_counts(struct store *s, struct store_cluster_count **out, size_t *n) {
        *out = NULL;
        *n = 0;
        int r = CALL(s, cluster_host_counts, out, n);
        if (r < 0) {
                free(*out);
                *out = NULL;
                *n = 0;
        }
        return r < 0 ? r : 0;
}
