/* The store's operations in SQL (store-backend.h), written once over a
 * driver (sqldb.h): SQLite (store/sqlite/) and PostgreSQL (store/pg/) each
 * give their connections, statements and transactions, and their table is
 * these operations with their own name, open and close. store.c has checked
 * and normalised the arguments before any of these runs. */
#include "store.h"
#include "store-backend.h"
#include "sqldb.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "json-cleanup.h"

/* ---- the driver --------------------------------------------------------- */

static int stmt(struct dbconn *c, const char *sql, struct dbstmt **out) {
        return c->drv->prepare(c, sql, out);
}

/* Statements are cached, so a scope ends by resetting, not finalizing. */
static inline void stmt_resetp(struct dbstmt **st) {
        if (*st)
                (*st)->drv->reset(*st);
}
#define _cleanup_reset_ _cleanup_(stmt_resetp)

static int step_done(struct dbconn *c, struct dbstmt *st) {
        (void) c;
        int r = st->drv->step(st);
        return r < 0 ? r : 0;
}

/* A write that must change a row: 0, -ENOENT when it changed none, or an
 * error. */
static int step_changed(struct dbconn *c, struct dbstmt *st) {
        int r = step_done(c, st);
        return r < 0 ? r : c->drv->changes(c) ? 0 : -ENOENT;
}

/* One row expected: 1 for a row, 0 for none, or an error. */
static int step_row(struct dbconn *c, struct dbstmt *st) {
        (void) c;
        return st->drv->step(st);
}

static int64_t db_changes(struct dbconn *c) {
        return c->drv->changes(c);
}

static bool db_in_transaction(struct dbconn *c) {
        return c->drv->in_transaction(c);
}

static int db_bind_int64(struct dbstmt *st, int i, int64_t v) {
        return st->drv->bind_int64(st, i, v);
}

static int db_bind_text(struct dbstmt *st, int i, const char *v, size_t len) {
        return st->drv->bind_text(st, i, v, len);
}

static int db_bind_blob(struct dbstmt *st, int i, const void *v, size_t len) {
        return st->drv->bind_blob(st, i, v, len);
}

static bool db_col_null(struct dbstmt *st, int i) {
        return st->drv->col_null(st, i);
}

static const unsigned char *db_col_text(struct dbstmt *st, int i) {
        return st->drv->col_text(st, i);
}

static int64_t db_col_int64(struct dbstmt *st, int i) {
        return st->drv->col_int64(st, i);
}

static size_t db_col_bytes(struct dbstmt *st, int i) {
        return st->drv->col_bytes(st, i);
}

static const void *db_col_blob(struct dbstmt *st, int i) {
        return st->drv->col_blob(st, i);
}

static struct dbconn *conn_get(struct store *s) {
        return sql_drv(s)->conn_get(s);
}

static void conn_put(struct store *s, struct dbconn *c) {
        sql_drv(s)->conn_put(s, c);
}

static int write_begin(struct store *s, struct dbconn **out) {
        return db_write_begin(s, out);
}

static int write_end(struct store *s, struct dbconn *c, int r) {
        return db_write_end(s, c, r, true);
}

/* For a write nobody is answered about: it returns once the write is in
 * its group, which the writers queued behind it commit. */
static int write_end_unwaited(struct store *s, struct dbconn *c, int r) {
        return db_write_end(s, c, r, false);
}

static int sql_free_space(struct store *s, int64_t *bytes) {
        return sql_drv(s)->free_space(s, bytes);
}

static void sql_write_latency(struct store *s, struct store_latency *out) {
        db_write_latency(s, out);
}

static int sql_leader(struct store *s) {
        return sql_drv(s)->leader(s);
}

static int sql_schema_version(struct store *s) {
        return sql_drv(s)->schema_version(s);
}

/* ---- binding and reading columns ---------------------------------------- */

static int bind_text(struct dbstmt *st, int i, const char *v) {
        return v ? st->drv->bind_text(st, i, v, strlen(v)) : st->drv->bind_null(st, i);
}

/* MODEL_UNSET binds NULL. */
static int bind_i64(struct dbstmt *st, int i, int64_t v) {
        return v == MODEL_UNSET ? st->drv->bind_null(st, i) : db_bind_int64(st, i, v);
}

/* Bind a run of texts to ?1..?n. */
static int bind_texts(struct dbstmt *st, int n, const char *const *v) {
        for (int i = 0; i < n; i++) {
                int r = bind_text(st, i + 1, v[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}
#define BIND(st, ...) bind_texts(st, (int) (sizeof (const char *[]) { __VA_ARGS__ } / sizeof (const char *)), \
                                 (const char *[]) { __VA_ARGS__ })

static int col_str(struct dbstmt *st, int i, char **out) {
        free(*out);
        *out = NULL;
        if (db_col_null(st, i))
                return 0;
        const unsigned char *t = db_col_text(st, i);
        if (!t || !(*out = strdup((const char *) t)))
                return -ENOMEM;
        return 0;
}

static int64_t col_i64(struct dbstmt *st, int i) {
        return db_col_null(st, i) ? MODEL_UNSET : db_col_int64(st, i);
}

/* Read a run of text columns starting at `first`. */
static int col_strs(struct dbstmt *st, int first, char **const *out, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = col_str(st, first + (int) i, out[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int col_validations(struct dbstmt *st, int i, struct validation **v, size_t *n) {
        const unsigned char *t = db_col_text(st, i);
        _cleanup_json_ json_object *a = t ? json_tokener_parse((const char *) t) : NULL;
        if (!t)
                return 0;
        if (!a)
                return -EIO; /* not what we wrote */
        return validation_list_from_json(a, v, n, NULL, 0) < 0 ? -EIO : 0;
}

/* Validations or labels or a string list as JSON text; *out NULL for none. */
static int json_text(json_object *o, char **out) {
        *out = NULL;
        if (!o)
                return -ENOMEM;
        const char *t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        if (!t || !(*out = strdup(t))) {
                json_object_put(o);
                return -ENOMEM;
        }
        json_object_put(o);
        return 0;
}

static int validations_text(const struct validation *v, size_t n, char **out) {
        return json_text(validation_list_to_json(v, n), out);
}

static int strv_text(const struct strv *sv, char **out) {
        if (!sv->n) {
                *out = NULL;
                return 0;
        }
        json_object *a = json_object_new_array_ext((int) sv->n);
        for (size_t i = 0; a && i < sv->n; i++)
                json_object_array_add(a, json_object_new_string(sv->v[i]));
        return json_text(a, out);
}

/* ",name,name," for instr() tests: one statement for every status set. */
static int status_set(uint32_t mask, char *buf, size_t n) {
        size_t len = 0;
        buf[0] = '\0';
        if (mask >> _HOST_STATUS_MAX)
                return -EINVAL;
        for (int i = 0; i < _HOST_STATUS_MAX; i++)
                if (mask & STORE_STATUS(i)) {
                        int k = snprintf(buf + len, n - len, ",%s", host_status_to_string((enum host_status) i));
                        if (k < 0 || (size_t) k >= n - len)
                                return -ENOBUFS;
                        len += (size_t) k;
                }
        if (len + 2 > n)
                return -ENOBUFS;
        buf[len] = ',';
        buf[len + 1] = '\0';
        return 0;
}

/* A statement with a variable WHERE: fragments and their bindings in order. */
struct query {
        char sql[3072];
        size_t len;
        struct { bool is_int; const char *s; int64_t i; } b[32];
        int nb;
        bool overflow;
};

static void q_add(struct query *q, const char *frag) {
        size_t l = strlen(frag);
        if (q->len + l >= sizeof q->sql) {
                q->overflow = true;
                return;
        }
        memcpy(q->sql + q->len, frag, l + 1);
        q->len += l;
}

static void q_text(struct query *q, const char *frag, const char *v) {
        q_add(q, frag);
        if (q->nb >= (int) (sizeof q->b / sizeof *q->b)) {
                q->overflow = true;
                return;
        }
        q->b[q->nb].is_int = false;
        q->b[q->nb++].s = v;
}

static void q_int(struct query *q, const char *frag, int64_t v) {
        q_add(q, frag);
        if (q->nb >= (int) (sizeof q->b / sizeof *q->b)) {
                q->overflow = true;
                return;
        }
        q->b[q->nb].is_int = true;
        q->b[q->nb++].i = v;
}

static int q_prepare(struct dbconn *c, struct query *q, struct dbstmt **out) {
        struct dbstmt *st;
        if (q->overflow)
                return -ENOBUFS;
        int r = stmt(c, q->sql, &st);
        if (r < 0)
                return r;
        for (int i = 0; i < q->nb; i++) {
                int rc = q->b[i].is_int ? db_bind_int64(st, i + 1, q->b[i].i) : bind_text(st, i + 1, q->b[i].s);
                if (rc < 0) {
                        st->drv->reset(st);
                        return rc;
                }
        }
        *out = st;
        return 0;
}

/* The write built in q, alone in a write transaction, that must change a
 * row: 0, -ENOENT when it changed none, or an error. */
static int write_query(struct store *s, struct query *q) {
        struct dbconn *c;
        int r = write_begin(s, &c);
        if (r < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = q_prepare(c, q, &st)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

/* ---- infra-envs -------------------------------------------------------- */

#define IE_COLS "seq, id, name, owner, cluster_id, cpu_architecture, pull_secret, " \
        "ssh_authorized_key, http_proxy, https_proxy, no_proxy, ntp_sources, "     \
        "token_generation, created_at, updated_at, static_network"

static int read_infra_env(struct dbstmt *st, struct infra_env *ie) {
        char **strs[] = { &ie->id, &ie->name, &ie->owner, &ie->cluster_id, &ie->cpu_architecture,
                          &ie->pull_secret, &ie->ssh_authorized_key, &ie->proxy.http_proxy,
                          &ie->proxy.https_proxy, &ie->proxy.no_proxy };
        int r = col_strs(st, 1, strs, sizeof strs / sizeof *strs);
        if (r < 0)
                return r;
        strv_free(&ie->ntp_sources);
        const unsigned char *ntp = db_col_text(st, 11);
        if (ntp) {
                _cleanup_json_ json_object *a = json_tokener_parse((const char *) ntp);
                if (!json_object_is_type(a, json_type_array))
                        return -EIO;
                for (size_t i = 0; i < json_object_array_length(a); i++)
                        if (strv_push(&ie->ntp_sources,
                                      json_object_get_string(json_object_array_get_idx(a, i))) < 0)
                                return -ENOMEM;
        }
        ie->token_generation = col_i64(st, 12);
        char **times[] = { &ie->created_at, &ie->updated_at, &ie->static_network };
        return col_strs(st, 13, times, 3);
}

static int cluster_exists(struct dbconn *c, const char *id) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT 1 FROM clusters WHERE id = ?1", &st);
        if (r < 0 || (r = BIND(st, id)) < 0)
                return r;
        return step_row(c, st);
}

/* Why a conditional UPDATE of cluster `id` changed no row: -ESTALE if the
 * cluster is there (its status did not match), -ENOENT if it is not. */
static int cluster_not_updated(struct dbconn *c, const char *id) {
        int r = cluster_exists(c, id);
        return r < 0 ? r : r ? -ESTALE : -ENOENT;
}

static int infra_env_get_conn(struct dbconn *c, const char *id, struct infra_env *out) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT " IE_COLS " FROM infra_envs WHERE id = ?1", &st);
        if (r < 0 || (r = BIND(st, id)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        return r ? read_infra_env(st, out) : -ENOENT;
}

static int infra_env_insert(struct dbconn *c, const struct infra_env *ie, const char *ntp) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r;

        if (ie->cluster_id && (r = cluster_exists(c, ie->cluster_id)) <= 0)
                return r < 0 ? r : -ENOENT;
        r = stmt(c, "INSERT INTO infra_envs (id, name, owner, cluster_id, cpu_architecture, "
                    "pull_secret, ssh_authorized_key, http_proxy, https_proxy, no_proxy, ntp_sources, "
                    "created_at, updated_at, token_generation, static_network) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)", &st);
        if (r < 0)
                return r;
        r = BIND(st, ie->id, ie->name, ie->owner, ie->cluster_id, ie->cpu_architecture,
                 ie->pull_secret, ie->ssh_authorized_key, ie->proxy.http_proxy,
                 ie->proxy.https_proxy, ie->proxy.no_proxy, ntp, ie->created_at, ie->updated_at);
        if (r >= 0)
                r = bind_text(st, 15, ie->static_network);
        if (r < 0 || (r = bind_i64(st, 14, ie->token_generation)) < 0)
                return r;
        return step_done(c, st);
}

static int sql_infra_env_create(struct store *s, struct infra_env *ie) {
        _cleanup_free_ char *ntp = NULL;
        struct dbconn *c;
        int r;

        if ((r = strv_text(&ie->ntp_sources, &ntp)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        r = infra_env_insert(c, ie, ntp);
        return write_end(s, c, r);
}

static int sql_infra_env_get(struct store *s, const char *id, struct infra_env *out) {
        struct dbconn *c = conn_get(s);
        int r = infra_env_get_conn(c, id, out);
        conn_put(s, c);
        return r;
}

#define HOST_COLS_A "h.seq, h.infra_env_id, h.id, h.owner, h.cluster_id, h.role, " \
        "h.requested_hostname, h.installation_disk_id, "
#define HOST_COLS_B ", h.inv_hostname, h.inv_cpu_count, h.inv_memory_bytes, "      \
        "h.inv_max_disk_bytes, h.status, h.status_info, h.validations, "             \
        "h.progress_stage, h.progress_percent, h.progress_info, h.checked_in_at, "   \
        "h.registered_at, h.discovery_agent_version, h.reregister_pending, "         \
        "h.created_at, h.updated_at, h.step_results, h.applied_revision, "            \
        "EXISTS (SELECT 1 FROM host_inventories hi WHERE hi.host_seq = h.seq), h.pending_actions"
#define HOST_COLS HOST_COLS_A "(SELECT hi.inventory FROM host_inventories hi WHERE hi.host_seq = h.seq)" HOST_COLS_B
#define HOST_COLS_NO_INV HOST_COLS_A "NULL" HOST_COLS_B
static int read_host(struct dbstmt *st, struct host *h);
static int read_cluster(struct dbstmt *st, struct cluster *cl);

/* ---- paged lists ------------------------------------------------------- */

/* How one row type is read: the list calls differ only in this. */
struct row_type {
        size_t size;
        void (*init)(void *row);
        int (*read)(struct dbstmt *st, void *row);
};

static void ie_row_init(void *row) { infra_env_init(row); }
static int ie_row_read(struct dbstmt *st, void *row) { return read_infra_env(st, row); }
static void host_row_init(void *row) { host_init(row); }
static int host_row_read(struct dbstmt *st, void *row) { return read_host(st, row); }
static void cluster_row_init(void *row) { cluster_init(row); }
static int cluster_row_read(struct dbstmt *st, void *row) { return read_cluster(st, row); }

static const struct row_type infra_env_rows = { sizeof(struct infra_env), ie_row_init, ie_row_read };
static const struct row_type host_rows = { sizeof(struct host), host_row_init, host_row_read };
static const struct row_type cluster_rows = { sizeof(struct cluster), cluster_row_init, cluster_row_read };

/* Read the rows of st into the growing array *v while it has fewer than
 * `max`: 1 when a row was left over, else 0. *last (may be NULL) gets
 * column 0 of each row read. The caller frees the array on error. */
static int read_rows(struct dbconn *c, struct dbstmt *st, size_t max, const struct row_type *t, void **v, size_t *n,
                     int64_t *last) {
        int r;
        while ((r = step_row(c, st)) > 0) {
                if (*n == max)
                        return 1;
                void *row = inv_array_append(v, n, t->size);
                if (!row)
                        return -ENOMEM;
                t->init(row);
                if ((r = t->read(st, row)) < 0)
                        return r;
                if (last)
                        *last = db_col_int64(st, 0);
        }
        return r;
}

/* Run a list query that asked for limit+1 rows (seq in column 0): read up
 * to `limit` into the growing array *v, and set *next_after to the last
 * row's seq when there were more. The caller frees the array on error. */
static int read_page(struct store *s, struct query *q, unsigned limit, const struct row_type *t, void **v,
                     size_t *n, int64_t *next_after) {
        struct dbconn *c = conn_get(s);
        _cleanup_reset_ struct dbstmt *st = NULL;
        int64_t last = 0;
        int r = q_prepare(c, q, &st);
        if (r >= 0)
                r = read_rows(c, st, limit, t, v, n, &last);
        stmt_resetp(&st);
        conn_put(s, c);
        if (r < 0)
                return r;
        *next_after = r > 0 ? last : 0;
        return 0;
}

/* A page of `select` ("SELECT cols FROM table", whose first column is seq)
 * in creation order, of one owner's rows (owner NULL: all). */
static int owner_page(struct store *s, const char *select, const char *owner, const struct store_page *pg,
                      const struct row_type *t, void **v, size_t *n, int64_t *next_after) {
        struct query q = { .len = 0 };
        q_add(&q, select);
        q_int(&q, " WHERE seq > ?", pg->after);
        if (owner)
                q_text(&q, " AND owner = ?", owner);
        q_int(&q, " ORDER BY seq LIMIT ?", (int64_t) pg->limit + 1);
        q_int(&q, " OFFSET ?", pg->offset);
        return read_page(s, &q, pg->limit, t, v, n, next_after);
}

static int sql_infra_env_list(struct store *s, const char *owner, const struct store_page *pg,
                                 struct infra_env_list *out) {
        return owner_page(s, "SELECT " IE_COLS " FROM infra_envs", owner, pg, &infra_env_rows, (void **) &out->v,
                          &out->n, &out->next_after);
}

static int sql_infra_env_update(struct store *s, const struct infra_env *ie, uint32_t fields) {
        char now[MODEL_TIME_LEN];
        const char *cp = (fields & IE_F_CLUSTER_ID) ? ie->cluster_id : NULL;
        const char *id = ie->id;
        _cleanup_free_ char *ntp = NULL;
        struct query q = { .len = 0 };
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = strv_text(&ie->ntp_sources, &ntp)) < 0)
                return r;

        q_text(&q, "UPDATE infra_envs SET updated_at = ?", now);
        if (fields & IE_F_NAME)
                q_text(&q, ", name = ?", ie->name);
        if (fields & IE_F_CLUSTER_ID)
                q_text(&q, ", cluster_id = ?", cp);
        if (fields & IE_F_PULL_SECRET)
                q_text(&q, ", pull_secret = ?", ie->pull_secret);
        if (fields & IE_F_SSH_AUTHORIZED_KEY)
                q_text(&q, ", ssh_authorized_key = ?", ie->ssh_authorized_key);
        if (fields & IE_F_PROXY) {
                q_text(&q, ", http_proxy = ?", ie->proxy.http_proxy);
                q_text(&q, ", https_proxy = ?", ie->proxy.https_proxy);
                q_text(&q, ", no_proxy = ?", ie->proxy.no_proxy);
        }
        if (fields & IE_F_NTP_SOURCES)
                q_text(&q, ", ntp_sources = ?", ntp);
        if (fields & IE_F_STATIC_NETWORK)
                q_text(&q, ", static_network = ?", ie->static_network);
        q_text(&q, " WHERE id = ?", id);

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if (cp && (r = cluster_exists(c, cp)) <= 0)
                r = r < 0 ? r : -ENOENT;
        else {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = q_prepare(c, &q, &st)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

/* ",status,status," of the cluster statuses that are installing. */
static void installing_cluster_set(char *buf, size_t n) {
        size_t len = 0;
        buf[0] = '\0';
        for (int i = 0; i < _CLUSTER_STATUS_MAX; i++)
                if (cluster_status_is_installing((enum cluster_status) i)) {
                        int k = snprintf(buf + len, n - len, ",%s", cluster_status_to_string((enum cluster_status) i));
                        if (k > 0 && (size_t) k < n - len)
                                len += (size_t) k;
                }
        if (len + 1 < n) {
                buf[len++] = ',';
                buf[len] = '\0';
        }
}

/* The infra-env's hosts, without inventories, in creation order: those that
 * block its deletion (block = true) or those bound to a cluster. */
static int ie_hosts(struct dbconn *c, const char *id, bool block, const char *block_statuses,
                    const char *installing, struct host_list *out) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, block ? "SELECT " HOST_COLS_NO_INV " FROM hosts h JOIN infra_envs ie ON ie.id = h.infra_env_id "
                                "LEFT JOIN clusters cl ON cl.id = h.cluster_id WHERE h.infra_env_id = ?1 "
                                "AND (instr(?2, ',' || h.status || ',') > 0 OR (h.cluster_id IS NOT NULL AND "
                                "(cl.owner IS DISTINCT FROM ie.owner OR instr(?3, ',' || cl.status || ',') > 0))) "
                                "ORDER BY h.seq"
                              : "SELECT " HOST_COLS_NO_INV " FROM hosts h WHERE h.infra_env_id = ?1 "
                                "AND h.cluster_id IS NOT NULL ORDER BY h.seq",
                     &st);
        if (r < 0 || (r = block ? BIND(st, id, block_statuses, installing) : BIND(st, id)) < 0)
                return r;
        r = read_rows(c, st, STORE_MAX_LIMIT, &host_rows, (void **) &out->v, &out->n, NULL);
        return r < 0 ? r : 0;
}

static int sql_infra_env_delete(struct store *s, const char *nid, uint32_t block_mask,
                                   struct host_list *blocked, struct host_list *unbound) {
        char statuses[1024], installing[256];
        struct host_list b = { 0 }, u = { 0 };
        struct dbconn *c;
        int r;

        if (status_set(block_mask, statuses, sizeof statuses) < 0)
                return -EINVAL;
        if (!block_mask)
                statuses[0] = '\0';
        installing_cluster_set(installing, sizeof installing);
        if ((r = write_begin(s, &c)) < 0)
                return r;
        /* Checked in the transaction that deletes: a host cannot start
         * installing between the check and the cascade. */
        r = ie_hosts(c, nid, true, statuses, installing, &b);
        if (r >= 0 && b.n > 0)
                r = -EBUSY;
        if (r >= 0)
                r = ie_hosts(c, nid, false, statuses, installing, &u);
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM infra_envs WHERE id = ?1", &st)) >= 0 &&
                    (r = BIND(st, nid)) >= 0)
                        r = step_changed(c, st);
        }
        r = write_end(s, c, r);
        if (r == -EBUSY && blocked)
                *blocked = b;
        else
                host_list_free(&b);
        if (r >= 0 && unbound)
                *unbound = u;
        else
                host_list_free(&u);
        return r;
}

static int sql_infra_env_bump_token(struct store *s, const char *nid, int64_t *gen) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE infra_envs SET token_generation = token_generation + 1, "
                                 "updated_at = ?2 WHERE id = ?1 RETURNING token_generation", &st)) >= 0 &&
                    (r = BIND(st, nid, now)) >= 0 && (r = step_row(c, st)) >= 0) {
                        if (r == 0)
                                r = -ENOENT;
                        else {
                                if (gen)
                                        *gen = db_col_int64(st, 0);
                                r = step_done(c, st); /* finish the statement before COMMIT */
                        }
                }
        }
        return write_end(s, c, r);
}

/* ---- hosts ------------------------------------------------------------- */

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

        if ((r = col_strs(st, 1, a, 4)) < 0 || (r = col_strs(st, 6, b, 4)) < 0)
                return r;
        h->role = host_role_from_string((const char *) db_col_text(st, 5));
        h->facts.cpu_count = col_i64(st, 10);
        h->facts.memory_bytes = col_i64(st, 11);
        h->facts.max_disk_bytes = col_i64(st, 12);
        h->status = host_status_from_string((const char *) db_col_text(st, 13));
        if ((r = col_str(st, 14, &h->status_info)) < 0 ||
            (!brief && (r = col_validations(st, 15, &h->validations, &h->n_validations)) < 0) ||
            (r = col_strs(st, 16, d, 1)) < 0)
                return r;
        h->progress.percent = col_i64(st, 17);
        if ((r = col_strs(st, 18, e, 4)) < 0)
                return r;
        h->reregister_pending = db_col_int64(st, 22) != 0;
        if ((r = col_strs(st, 23, f, 3)) < 0)
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

static int event_insert_conn(struct dbconn *c, struct event *e);

static int sql_host_register(struct store *s, const char *ie, const char *id, const char *agent_version,
                                int64_t max_hosts, struct event *on_new, struct host *out) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        int isnew = r = host_register_conn(c, ie, id, agent_version, now, max_hosts);
        if (r == 1 && on_new)
                r = event_insert_conn(c, on_new);
        if (r >= 0 && out)
                r = host_get_conn(c, ie, id, out);
        r = write_end(s, c, r);
        return r < 0 ? r : isnew;
}

static int sql_host_get(struct store *s, const char *ie, const char *id, bool brief, struct host *out) {
        struct dbconn *c = conn_get(s);
        int r = host_get_conn_(c, ie, id, brief, out);
        conn_put(s, c);
        return r;
}

static int sql_host_list(struct store *s, const struct store_host_filter *f, const struct store_page *pg,
                            struct host_list *out) {
        char statuses[1024];
        struct query q = { .len = 0 };
        int r;

        if ((r = status_set(f->status_mask, statuses, sizeof statuses)) < 0)
                return r;
        q_int(&q, f->no_inventory ? "SELECT " HOST_COLS_NO_INV " FROM hosts h WHERE h.seq > ?"
                                  : "SELECT " HOST_COLS " FROM hosts h WHERE h.seq > ?",
              pg->after);
        if (f->infra_env_id)
                q_text(&q, " AND h.infra_env_id = ?", f->infra_env_id);
        if (f->cluster_id)
                q_text(&q, " AND h.cluster_id = ?", f->cluster_id);
        if (f->host_id)
                q_text(&q, " AND h.id = ?", f->host_id);
        if (f->unbound_only)
                q_add(&q, " AND h.cluster_id IS NULL");
        if (f->status_mask)
                q_text(&q, " AND instr(?, ',' || h.status || ',') > 0", statuses);
        if (f->min_cpu_cores > 0)
                q_int(&q, " AND h.inv_cpu_count >= ?", f->min_cpu_cores);
        if (f->min_memory_bytes > 0)
                q_int(&q, " AND h.inv_memory_bytes >= ?", f->min_memory_bytes);
        if (f->min_disk_bytes > 0)
                q_int(&q, " AND h.inv_max_disk_bytes >= ?", f->min_disk_bytes);
        if (f->hostname_contains)
                q_text(&q, " AND h.seq IN (SELECT n.seq FROM host_names n WHERE instr(n.name, lower(?)) > 0)",
                       f->hostname_contains);
        if (f->owner)
                q_text(&q, " AND h.owner = ?", f->owner);
        if (f->cluster_owner)
                q_text(&q, " AND (h.cluster_id IS NULL OR h.cluster_id IN "
                           "(SELECT id FROM clusters WHERE owner = ?))", f->cluster_owner);
        if (f->checked_in_before)
                q_text(&q, " AND h.checked_in_at < ?", f->checked_in_before);
        q_int(&q, " ORDER BY h.seq LIMIT ?", (int64_t) pg->limit + 1);
        q_int(&q, " OFFSET ?", pg->offset);
        return read_page(s, &q, pg->limit, &host_rows, (void **) &out->v, &out->n, &out->next_after);
}

static int sql_host_update(struct store *s, const struct host *h, uint32_t fields) {
        const char *ie = h->infra_env_id, *id = h->id;
        char now[MODEL_TIME_LEN];
        struct query q = { .len = 0 };
        int r;

        if ((r = model_now_rfc3339(now)) < 0)
                return r;
        q_text(&q, "UPDATE hosts SET updated_at = ?", now);
        if (fields & HOST_F_ROLE)
                q_text(&q, ", role = ?", host_role_to_string(h->role));
        if (fields & HOST_F_REQUESTED_HOSTNAME)
                q_text(&q, ", requested_hostname = ?", h->requested_hostname);
        if (fields & HOST_F_INSTALLATION_DISK_ID)
                q_text(&q, ", installation_disk_id = ?", h->installation_disk_id);
        q_text(&q, " WHERE infra_env_id = ?", ie);
        q_text(&q, " AND id = ?", id);

        return write_query(s, &q);
}

/* The host's current status, checked against expect_mask (0 = any). */
static int host_expect(struct dbconn *c, const char *ie, const char *id, uint32_t expect_mask) {
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
                r = host_expect(c, ie, id, hs->expect_mask);
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
                r = event_insert_conn(c, &hs->events[i]);
        if (r >= 0 && hs)
                r = status ? 1 : 0; /* 0: the inventory alone */
        return write_end(s, c, r);
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
        if ((r = host_expect(c, ie, id, expect_mask)) >= 0)
                r = host_status_conn(c, ie, id, status, status_info, vt, now);
        return write_end(s, c, r);
}

static int sql_host_set_progress(struct store *s, const char *ie, const char *id,
                                    const struct host_progress *p) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET progress_stage = ?3, progress_info = ?4, "
                                 "updated_at = ?5, progress_percent = ?6 "
                                 "WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id, p->stage, p->info, now)) >= 0 &&
                    (r = bind_i64(st, 6, p->percent)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
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
        if ((r = host_expect(c, ie, id, expect_mask)) >= 0) {
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

static int sql_host_set_applied_revision(struct store *s, const char *ie, const char *id,
                                            int64_t applied_revision) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET applied_revision = ?4, updated_at = ?3 "
                                 "WHERE infra_env_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, ie, id, now)) >= 0 &&
                    (r = db_bind_int64(st, 4, applied_revision) == 0 ? 0 : -EIO) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

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

static int sql_host_bind(struct store *s, const char *ie, const char *id, const char *cp,
                            enum host_status status, const char *status_info, uint32_t expect_mask) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        r = host_expect(c, ie, id, expect_mask);
        if (r >= 0 && cp && (r = cluster_exists(c, cp)) >= 0)
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

static int host_read_int(struct store *s, const char *ie, const char *id, const char *sql, int64_t *out);

static int sql_host_token_generation(struct store *s, const char *ie, const char *id, int64_t *gen) {
        return host_read_int(s, ie, id, "SELECT token_generation FROM hosts WHERE infra_env_id = ?1 AND id = ?2", gen);
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
                r = host_expect(c, ie, id, 0);
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

static int sql_host_list_stale(struct store *s, const char *t, uint32_t status_mask, const char *stage,
                                  bool stage_match, unsigned limit, struct host_list *out) {
        char statuses[1024];
        int r;

        if ((r = status_set(status_mask, statuses, sizeof statuses)) < 0)
                return r;

        struct dbconn *c = conn_get(s);
        _cleanup_reset_ struct dbstmt *st = NULL;
        r = stmt(c, "SELECT " HOST_COLS_NO_INV " FROM hosts h WHERE h.checked_in_at < ?1 "
                    "AND (?2 = ',' OR instr(?2, ',' || h.status || ',') > 0) "
                    "AND (?4 IS NULL OR (?5 = 1 AND h.progress_stage = ?4) OR (?5 = 0 AND h.progress_stage IS DISTINCT FROM ?4)) "
                    "ORDER BY h.checked_in_at, h.seq LIMIT ?3", &st);
        if (r >= 0 && (r = BIND(st, t, statuses)) >= 0 && (r = bind_i64(st, 3, (int64_t) limit)) >= 0 &&
            (r = bind_text(st, 4, stage)) >= 0 && (r = bind_i64(st, 5, stage_match ? 1 : 0)) >= 0)
                r = read_rows(c, st, SIZE_MAX, &host_rows, (void **) &out->v, &out->n, NULL);
        stmt_resetp(&st);
        conn_put(s, c);
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

        if ((r = status_set(status_mask, statuses, sizeof statuses)) < 0 || (r = model_now_rfc3339(now)) < 0 ||
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

static int sql_host_mark_stale(struct store *s, const struct host *hosts, size_t n, const char *before,
                                  uint32_t status_mask, enum host_status to, const char *status_info, bool *changed) {
        return mark_hosts(s, hosts, n, before, status_mask, host_status_to_string(to), status_info,
                          "UPDATE hosts SET status = ?7, status_info = ?4, updated_at = ?5 "
                          "WHERE infra_env_id = ?1 AND id = ?2 AND checked_in_at < ?3 AND status != ?7 "
                          "AND (?6 = ',' OR instr(?6, ',' || status || ',') > 0)", changed);
}

/* ---- clusters ---------------------------------------------------------- */

#define CL_COLS "seq, id, name, owner, release_version, base_dns_domain, machine_network_cidr, " \
        "api_vip, ingress_vip, high_availability_mode, pull_secret, labels, status, status_info, " \
        "validations, created_at, updated_at, capabilities_spec_json, capabilities_status_json, " \
        "conditions_json, payload_revision, feature_set, cpu_architecture"

/* A JSON text column: 1 and *out, 0 for NULL, -EIO for text that is not JSON. */
static int col_json(struct dbstmt *st, int i, json_object **out) {
        const unsigned char *t = db_col_text(st, i);
        *out = NULL;
        if (!t)
                return 0;
        *out = json_tokener_parse((const char *) t);
        return *out ? 1 : -EIO;
}

static int read_cluster(struct dbstmt *st, struct cluster *cl) {
        char **a[] = { &cl->id, &cl->name, &cl->owner, &cl->release_version, &cl->base_dns_domain,
                       &cl->machine_network_cidr, &cl->api_vip, &cl->ingress_vip };
        char **b[] = { &cl->pull_secret };
        char **d[] = { &cl->status, &cl->status_info };
        char **e[] = { &cl->created_at, &cl->updated_at };
        int r;

        if ((r = col_strs(st, 1, a, 8)) < 0 || (r = col_strs(st, 10, b, 1)) < 0 ||
            (r = col_strs(st, 12, d, 2)) < 0 ||
            (r = col_validations(st, 14, &cl->validations, &cl->n_validations)) < 0 ||
            (r = col_strs(st, 15, e, 2)) < 0)
                return r;
        cl->high_availability_mode = ha_mode_from_string((const char *) db_col_text(st, 9));
        const unsigned char *lt = db_col_text(st, 11);
        if (lt) {
                _cleanup_json_ json_object *o = json_tokener_parse((const char *) lt);
                if (!o || labels_from_json(o, &cl->labels, &cl->n_labels, NULL, 0) < 0)
                        return -EIO;
        }
        {
                _cleanup_json_ json_object *o = NULL;
                if ((r = col_json(st, 17, &o)) < 0 ||
                    (r > 0 && cluster_cap_spec_from_json(o, &cl->cap_spec, NULL, 0) < 0))
                        return -EIO;
        }
        {
                _cleanup_json_ json_object *o = NULL;
                if ((r = col_json(st, 18, &o)) < 0 ||
                    (r > 0 && cluster_cap_status_from_json(o, &cl->cap_status, NULL, 0) < 0))
                        return -EIO;
                cl->has_cap_status = r > 0;
        }
        {
                _cleanup_json_ json_object *o = NULL;
                if ((r = col_json(st, 19, &o)) < 0 ||
                    (r > 0 && model_condition_list_from_json(o, &cl->conditions, &cl->n_conditions, NULL, 0) < 0))
                        return -EIO;
        }
        cl->payload_revision = db_col_int64(st, 20);
        char **fs[] = { &cl->feature_set, &cl->cpu_architecture };
        if ((r = col_strs(st, 21, fs, 2)) < 0)
                return r;
        return cl->high_availability_mode < 0 ? -EIO : 0;
}

/* The JSON texts of a cluster's capability members (NULL when absent). */
struct cluster_texts {
        char *spec, *status, *conditions;
};

static void cluster_texts_free(struct cluster_texts *t) {
        free(t->spec);
        free(t->status);
        free(t->conditions);
}

static int cluster_texts_make(const struct cluster *cl, struct cluster_texts *t) {
        int r;
        *t = (struct cluster_texts) { 0 };
        if ((r = json_text(cluster_cap_spec_to_json(&cl->cap_spec), &t->spec)) < 0 ||
            (cl->has_cap_status && (r = json_text(cluster_cap_status_to_json(&cl->cap_status), &t->status)) < 0) ||
            (r = json_text(model_condition_list_to_json(cl->conditions, cl->n_conditions), &t->conditions)) < 0) {
                cluster_texts_free(t);
                return r;
        }
        return 0;
}

static int cluster_get_conn(struct dbconn *c, const char *id, struct cluster *out) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT " CL_COLS " FROM clusters WHERE id = ?1", &st);
        if (r < 0 || (r = BIND(st, id)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        return r ? read_cluster(st, out) : -ENOENT;
}

static int sql_cluster_create(struct store *s, const struct cluster *cl) {
        _cleanup_free_ char *labels = NULL, *vals = NULL;
        _cleanup_(cluster_texts_free) struct cluster_texts tx = { 0 };
        struct dbconn *c;
        int r;

        if ((r = json_text(labels_to_json(cl->labels, cl->n_labels), &labels)) < 0 ||
            (r = validations_text(cl->validations, cl->n_validations, &vals)) < 0 ||
            (r = cluster_texts_make(cl, &tx)) < 0)
                return r;
        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO clusters (id, name, owner, release_version, base_dns_domain, "
                                 "machine_network_cidr, api_vip, ingress_vip, high_availability_mode, "
                                 "pull_secret, labels, status, status_info, validations, created_at, updated_at, "
                                 "capabilities_spec_json, capabilities_status_json, conditions_json, feature_set, "
                                 "cpu_architecture) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                                 "?17, ?18, ?19, ?20, ?21)",
                              &st)) >= 0 &&
                    (r = BIND(st, cl->id, cl->name, cl->owner, cl->release_version, cl->base_dns_domain,
                              cl->machine_network_cidr, cl->api_vip, cl->ingress_vip,
                              ha_mode_to_string(cl->high_availability_mode), cl->pull_secret, labels,
                              cl->status, cl->status_info, vals, cl->created_at, cl->updated_at, tx.spec, tx.status,
                              tx.conditions, cl->feature_set, cl->cpu_architecture)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

static int sql_cluster_get(struct store *s, const char *id, struct cluster *out) {
        struct dbconn *c = conn_get(s);
        int r = cluster_get_conn(c, id, out);
        conn_put(s, c);
        return r;
}

static int sql_cluster_list(struct store *s, const char *owner, const struct store_page *pg,
                               struct cluster_list *out) {
        return owner_page(s, "SELECT " CL_COLS " FROM clusters", owner, pg, &cluster_rows, (void **) &out->v,
                          &out->n, &out->next_after);
}

static int sql_cluster_update(struct store *s, const struct cluster *cl, uint32_t fields) {
        const char *id = cl->id;
        char now[MODEL_TIME_LEN];
        _cleanup_free_ char *labels = NULL;
        _cleanup_(cluster_texts_free) struct cluster_texts tx = { 0 };
        struct query q = { .len = 0 };
        int r;

        if ((r = model_now_rfc3339(now)) < 0 ||
            ((fields & CL_F_LABELS) && (r = json_text(labels_to_json(cl->labels, cl->n_labels), &labels)) < 0) ||
            (r = cluster_texts_make(cl, &tx)) < 0)
                return r;
        q_text(&q, "UPDATE clusters SET updated_at = ?", now);
        if (fields & CL_F_NAME)
                q_text(&q, ", name = ?", cl->name);
        if (fields & CL_F_RELEASE_VERSION)
                q_text(&q, ", release_version = ?", cl->release_version);
        if (fields & CL_F_BASE_DNS_DOMAIN)
                q_text(&q, ", base_dns_domain = ?", cl->base_dns_domain);
        if (fields & CL_F_MACHINE_NETWORK_CIDR)
                q_text(&q, ", machine_network_cidr = ?", cl->machine_network_cidr);
        if (fields & CL_F_API_VIP)
                q_text(&q, ", api_vip = ?", cl->api_vip);
        if (fields & CL_F_INGRESS_VIP)
                q_text(&q, ", ingress_vip = ?", cl->ingress_vip);
        if (fields & CL_F_HA_MODE)
                q_text(&q, ", high_availability_mode = ?", ha_mode_to_string(cl->high_availability_mode));
        if (fields & CL_F_PULL_SECRET)
                q_text(&q, ", pull_secret = ?", cl->pull_secret);
        if (fields & CL_F_LABELS)
                q_text(&q, ", labels = ?", labels);
        if (fields & CL_F_CAPABILITIES)
                q_text(&q, ", capabilities_spec_json = ?", tx.spec);
        if (fields & CL_F_CAP_STATUS)
                q_text(&q, ", capabilities_status_json = ?", tx.status);
        if (fields & CL_F_CONDITIONS)
                q_text(&q, ", conditions_json = ?", tx.conditions);
        if (fields & CL_F_FEATURE_SET)
                q_text(&q, ", feature_set = ?", cl->feature_set);
        q_text(&q, " WHERE id = ?", id);

        return write_query(s, &q);
}

static int sql_cluster_set_status(struct store *s, const char *nid, const char *expect, const char *status,
                                    const char *status_info, const struct validation *v, size_t n_v) {
        char now[MODEL_TIME_LEN];
        _cleanup_free_ char *vt = NULL;
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (v && (r = validations_text(v, n_v, &vt)) < 0) ||
            (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET status = ?2, status_info = ?3, updated_at = ?4, "
                                 "validations = coalesce(?5, validations) "
                                 "WHERE id = ?1 AND (?6 IS NULL OR status = ?6)", &st)) >= 0 &&
                    (r = BIND(st, nid, status, status_info, now, vt, expect)) >= 0 && (r = step_done(c, st)) >= 0 &&
                    db_changes(c) == 0)
                        r = cluster_not_updated(c, nid);
        }
        return write_end(s, c, r);
}

/* Insert revision p->revision and move the cluster's payload_revision to it,
 * only from p->revision - 1 (-ESTALE otherwise; -ENOENT: no cluster). */
static int payload_insert(struct dbconn *c, const char *cid, const struct store_payload *p, const char *created_at) {
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET payload_revision = ?2 WHERE id = ?1 AND payload_revision = ?3",
                              &st)) < 0 || (r = BIND(st, cid)) < 0 ||
                    db_bind_int64(st, 2, p->revision) != 0 ||
                    db_bind_int64(st, 3, p->revision - 1) != 0)
                        return r < 0 ? r : -EIO;
                if ((r = step_done(c, st)) < 0)
                        return r;
                if (db_changes(c) == 0)
                        return cluster_not_updated(c, cid);
        }
        _cleanup_reset_ struct dbstmt *st = NULL;
        if ((r = stmt(c, "INSERT INTO payload_revisions (cluster_id, revision, digest, signature, canonical, "
                         "release_version, manifest_count, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                      &st)) < 0 ||
            (r = BIND(st, cid, NULL, p->digest, p->signature, NULL, p->release_version, NULL, created_at)) < 0)
                return r;
        if (db_bind_int64(st, 2, p->revision) != 0 ||
            db_bind_text(st, 5, p->canonical, p->canonical_len) != 0 ||
            db_bind_int64(st, 7, p->manifest_count) != 0)
                return -EIO;
        return step_done(c, st);
}

static int sql_cluster_start_install(struct store *s, const char *nid, const char *status_info,
                                        enum host_status host_to, const char *host_info,
                                        const struct store_host_role *roles, size_t n_roles,
                                        const struct store_payload *payload) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET status = ?2, status_info = ?3, updated_at = ?4 "
                                 "WHERE id = ?1 AND status = ?5", &st)) >= 0 &&
                    (r = BIND(st, nid, cluster_status_to_string(CLUSTER_PREPARING_FOR_INSTALLATION), status_info,
                              now, cluster_status_to_string(CLUSTER_READY))) >= 0 &&
                    (r = step_done(c, st)) >= 0 && db_changes(c) == 0)
                        r = cluster_not_updated(c, nid);
        }
        for (size_t i = 0; r >= 0 && i < n_roles; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET role = ?4, updated_at = ?5 "
                                 "WHERE infra_env_id = ?1 AND id = ?2 AND cluster_id = ?3", &st)) >= 0 &&
                    (r = BIND(st, roles[i].infra_env_id, roles[i].host_id, nid, host_role_to_string(roles[i].role),
                              now)) >= 0)
                        r = step_done(c, st);
        }
        if (r >= 0 && payload)
                r = payload_insert(c, nid, payload, now);
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                /* The disk speed is measured again for each installation. */
                if ((r = stmt(c, "UPDATE hosts SET status = ?2, status_info = ?3, updated_at = ?4, "
                                 "step_results = json_remove(step_results, '$.\"installation-disk-speed-check\"') "
                                 "WHERE cluster_id = ?1 AND status = ?5", &st)) >= 0 &&
                    (r = BIND(st, nid, host_status_to_string(host_to), host_info, now,
                              host_status_to_string(HOST_KNOWN))) >= 0 && (r = step_done(c, st)) >= 0)
                        r = db_changes(c);
        }
        return write_end(s, c, r);
}

static int cluster_move(struct store *s, const char *id, const char *expect, const char *status,
                        const char *status_info, const struct store_host_reset *hosts, size_t n, bool stop);

static int sql_cluster_reset(struct store *s, const char *id, const char *expect, const char *status,
                                const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move(s, id, expect, status, status_info, hosts, n, false);
}

static int sql_cluster_cancel(struct store *s, const char *id, const char *expect, const char *status,
                                 const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move(s, id, expect, status, status_info, hosts, n, true);
}

static int sql_host_stop_pending(struct store *s, const char *ie, const char *id) {
        int64_t v = 0;
        int r = host_read_int(s, ie, id, "SELECT stop_pending FROM hosts WHERE infra_env_id = ?1 AND id = ?2", &v);
        return r < 0 ? r : v != 0;
}

static int sql_host_clear_stop(struct store *s, const char *ie, const char *id) {
        return host_clear_flag(s, ie, id,
                               "UPDATE hosts SET stop_pending = 0 WHERE infra_env_id = ?1 AND id = ?2 "
                               "AND stop_pending = 1", false);
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
                        r = host_expect(c, ie, id, 0) < 0 ? -ENOENT : -EBUSY;
        }
        return write_end(s, c, r);
}

static int sql_host_logs_put(struct store *s, const char *ie, const char *id, const char *now, const void *data,
                             size_t len, unsigned keep) {
        struct dbconn *c;
        int r;
        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                /* Only an asked-for upload is taken, once: the ask ends here. */
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET pending_actions = pending_actions - 1 "
                                 "WHERE infra_env_id = ?1 AND id = ?2 AND (pending_actions & 1) != 0", &st)) >= 0 &&
                    (r = BIND(st, ie, id)) >= 0 && (r = step_done(c, st)) >= 0 && db_changes(c) == 0)
                        r = host_expect(c, ie, id, 0) < 0 ? -ENOENT : -EBUSY;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO host_logs (infra_env_id, host_id, created_at, size, data) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5)", &st)) >= 0 &&
                    (r = BIND(st, ie, id, now)) >= 0 && (r = bind_i64(st, 4, (int64_t) len)) >= 0) {
                        if (db_bind_blob(st, 5, data, len) != 0)
                                r = -EIO;
                        if (r >= 0)
                                r = step_done(c, st);
                }
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM host_logs WHERE infra_env_id = ?1 AND host_id = ?2 AND seq NOT IN "
                                 "(SELECT seq FROM host_logs WHERE infra_env_id = ?1 AND host_id = ?2 "
                                 "ORDER BY seq DESC LIMIT ?3)", &st)) >= 0 &&
                    (r = BIND(st, ie, id)) >= 0 && (r = bind_i64(st, 3, keep)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r < 0 ? r : 0);
}

static int sql_host_logs_get(struct store *s, const char *ie, const char *id, struct store_host_logs *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT created_at, data, (SELECT count(*) FROM host_logs WHERE infra_env_id = ?1 AND "
                            "host_id = ?2) FROM host_logs WHERE infra_env_id = ?1 AND host_id = ?2 "
                            "ORDER BY seq DESC LIMIT 1", &st);
                if (r >= 0 && (r = BIND(st, ie, id)) >= 0 && (r = step_row(c, st)) >= 0) {
                        if (r == 0)
                                r = -ENOENT;
                        else if ((r = col_str(st, 0, &out->created_at)) >= 0) {
                                const void *b = db_col_blob(st, 1);
                                size_t len = (size_t) db_col_bytes(st, 1);
                                out->count = db_col_int64(st, 2);
                                if (!(out->data = malloc(len ? len : 1)))
                                        r = -ENOMEM;
                                else {
                                        if (len)
                                                memcpy(out->data, b, len);
                                        out->len = len;
                                        r = 0;
                                }
                        }
                }
        }
        conn_put(s, c);
        return r;
}

/* store_cluster_reset (stop false) and store_cluster_cancel (stop true). */
static int cluster_move(struct store *s, const char *nid, const char *expect, const char *status,
                        const char *status_info, const struct store_host_reset *hosts, size_t n, bool stop) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r, moved = 0;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET status = ?2, status_info = ?3, updated_at = ?4 "
                                 "WHERE id = ?1 AND status = ?5", &st)) >= 0 &&
                    (r = BIND(st, nid, status, status_info, now, expect)) >= 0 &&
                    (r = step_done(c, st)) >= 0 && db_changes(c) == 0)
                        r = cluster_not_updated(c, nid);
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                /* A cancel keeps the progress (what was written); a reset
                 * starts the host's install story again. */
                if ((r = stmt(c, stop ? "UPDATE hosts SET status = ?4, status_info = ?5, updated_at = ?6, "
                                        "stop_pending = 1 "
                                        "WHERE infra_env_id = ?1 AND id = ?2 AND cluster_id = ?3 AND status = ?7"
                                      : "UPDATE hosts SET status = ?4, status_info = ?5, updated_at = ?6, "
                                        "reregister_pending = 1, stop_pending = 0, progress_stage = NULL, "
                                        "progress_percent = NULL, progress_info = NULL, step_results = '{}', "
                                        "applied_revision = 0 "
                                        "WHERE infra_env_id = ?1 AND id = ?2 AND cluster_id = ?3 AND status = ?7",
                              &st)) >= 0 &&
                    (r = BIND(st, hosts[i].infra_env_id, hosts[i].host_id, nid, host_status_to_string(hosts[i].to),
                              hosts[i].status_info, now, host_status_to_string(hosts[i].from))) >= 0 &&
                    (r = step_done(c, st)) >= 0)
                        moved += db_changes(c) > 0;
        }
        return write_end(s, c, r < 0 ? r : moved);
}

static int count_bound(struct dbconn *c, const char *id, const char *statuses, int64_t *count) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT count(*) FROM hosts WHERE cluster_id = ?1 "
                        "AND (?2 = ',' OR instr(?2, ',' || status || ',') > 0)", &st);
        if (r < 0 || (r = BIND(st, id, statuses)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        *count = r ? db_col_int64(st, 0) : 0;
        return 0;
}

static int sql_cluster_delete(struct store *s, const char *nid) {
        int64_t bound = 0;
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if ((r = count_bound(c, nid, ",", &bound)) >= 0 && bound > 0)
                r = -EBUSY;
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM clusters WHERE id = ?1", &st)) >= 0 &&
                    (r = BIND(st, nid)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

static int sql_cluster_count_hosts(struct store *s, const char *nid, uint32_t status_mask, int64_t *count) {
        char statuses[1024];
        int r;

        if ((r = status_set(status_mask, statuses, sizeof statuses)) < 0)
                return r;
        struct dbconn *c = conn_get(s);
        if ((r = db_exec(c, "BEGIN")) >= 0) {
                if ((r = cluster_exists(c, nid)) >= 0)
                        r = r ? count_bound(c, nid, statuses, count) : -ENOENT;
                int k = db_exec(c, "COMMIT");
                if (r >= 0)
                        r = k;
                if (!!db_in_transaction(c))
                        (void) db_exec(c, "ROLLBACK");
        }
        conn_put(s, c);
        return r;
}

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

/* ---- releases ---------------------------------------------------------- */

#define REL_COLS "r.rowid, r.version, r.info_json, r.created_at, " \
        "(SELECT count(*) FROM release_manifests m WHERE m.release_version = r.version)"

static int read_release(struct dbstmt *st, struct store_release *out) {
        const unsigned char *info = db_col_text(st, 2);
        _cleanup_json_ json_object *o = info ? json_tokener_parse((const char *) info) : NULL;
        char **t[] = { &out->created_at };
        int r;

        out->seq = db_col_int64(st, 0);
        if (!o || release_info_from_json(o, &out->info, NULL, 0) < 0)
                return -EIO;
        if ((r = col_strs(st, 3, t, 1)) < 0)
                return r;
        out->manifest_count = db_col_int64(st, 4);
        return 0;
}

static int release_get_conn(struct dbconn *c, const char *version, struct store_release *out) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT " REL_COLS " FROM releases r WHERE r.version = ?1", &st);
        if (r < 0 || (r = BIND(st, version)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        return r ? read_release(st, out) : -ENOENT;
}

/* The annotations of m as [[key, value], ...]: order and repeats kept. */
static int annotations_text(const struct manifest *m, char **out) {
        json_object *a = json_object_new_array_ext((int) m->n_annotations);
        for (size_t i = 0; a && i < m->n_annotations; i++) {
                json_object *pair = json_object_new_array_ext(2);
                if (!pair) {
                        json_object_put(a);
                        a = NULL;
                        break;
                }
                json_object_array_add(pair, json_object_new_string(m->annotations[i].key ? m->annotations[i].key : ""));
                json_object_array_add(pair, json_object_new_string(m->annotations[i].value ? m->annotations[i].value : ""));
                json_object_array_add(a, pair);
        }
        return json_text(a, out);
}

static int manifest_insert(struct dbconn *c, const char *version, int64_t seq, const struct manifest *m) {
        _cleanup_free_ char *ann = NULL;
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r;

        if ((r = annotations_text(m, &ann)) < 0)
                return r;
        if ((r = stmt(c, "INSERT INTO release_manifests (release_version, seq, file, doc_index, path, api_version, "
                         "\"group\", version, kind, namespace, name, annotations_json, content) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", &st)) < 0 ||
            (r = BIND(st, version, NULL, m->file, NULL, m->path, m->api_version, m->group, m->version, m->kind,
                      m->namespace, m->name, ann)) < 0)
                return r;
        if (db_bind_int64(st, 2, seq) != 0 || db_bind_int64(st, 4, m->doc_index) != 0 ||
            db_bind_text(st, 13, m->content, m->content_len) != 0)
                return -EIO;
        return step_done(c, st);
}

static int sql_release_import(struct store *s, const struct release_info *info, const struct manifest_list *ms,
                                 struct store_release *out) {
        _cleanup_free_ char *text = NULL;
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = json_text(release_info_to_json(info), &text)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO releases (version, info_json, created_at) VALUES (?1, ?2, ?3)",
                              &st)) >= 0 &&
                    (r = BIND(st, info->version, text, now)) >= 0)
                        r = step_done(c, st);
        }
        for (size_t i = 0; r >= 0 && i < ms->n; i++)
                r = manifest_insert(c, info->version, (int64_t) i, &ms->v[i]);
        if (r >= 0 && out)
                r = release_get_conn(c, info->version, out);
        return write_end(s, c, r);
}

static int sql_release_get(struct store *s, const char *version, struct store_release *out) {
        struct dbconn *c = conn_get(s);
        int r = release_get_conn(c, version, out);
        conn_put(s, c);
        return r;
}

static void release_row_init(void *row) { store_release_init(row); }
static int release_row_read(struct dbstmt *st, void *row) { return read_release(st, row); }
static const struct row_type release_rows = { sizeof(struct store_release), release_row_init, release_row_read };

static int sql_release_list(struct store *s, const struct store_page *pg, struct store_release_list *out) {
        struct query q = { .len = 0 };
        q_int(&q, "SELECT " REL_COLS " FROM releases r WHERE r.rowid > ?", pg->after);
        q_int(&q, " ORDER BY r.rowid LIMIT ?", (int64_t) pg->limit + 1);
        q_int(&q, " OFFSET ?", pg->offset);
        return read_page(s, &q, pg->limit, &release_rows, (void **) &out->v, &out->n, &out->next_after);
}

/* One row of release_manifests into a manifest appended to out. */
static int read_manifest(struct dbstmt *st, struct manifest_list *out) {
        const unsigned char *ann = db_col_text(st, 10);
        _cleanup_json_ json_object *a = ann ? json_tokener_parse((const char *) ann) : NULL;
        _cleanup_free_ struct manifest_annotation *anns = NULL;
        struct manifest m = { 0 };

        if (!json_object_is_type(a, json_type_array))
                return -EIO;
        size_t n = json_object_array_length(a);
        if (n && !(anns = calloc(n, sizeof *anns)))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *pair = json_object_array_get_idx(a, i);
                if (!json_object_is_type(pair, json_type_array) || json_object_array_length(pair) != 2)
                        return -EIO;
                anns[i].key = (char *) json_object_get_string(json_object_array_get_idx(pair, 0));
                anns[i].value = (char *) json_object_get_string(json_object_array_get_idx(pair, 1));
        }
        /* The row's texts are borrowed; manifest_list_append_copy copies. */
        m.file = (char *) db_col_text(st, 0);
        m.doc_index = (unsigned) db_col_int64(st, 1);
        m.path = (char *) db_col_text(st, 2);
        m.api_version = (char *) db_col_text(st, 3);
        m.group = (char *) db_col_text(st, 4);
        m.version = (char *) db_col_text(st, 5);
        m.kind = (char *) db_col_text(st, 6);
        m.namespace = (char *) db_col_text(st, 7);
        m.name = (char *) db_col_text(st, 8);
        m.content = (char *) db_col_text(st, 9);
        m.content_len = (size_t) db_col_bytes(st, 9);
        m.annotations = anns;
        m.n_annotations = n;
        if (!m.file || !m.path || !m.api_version || !m.group || !m.version || !m.kind || !m.name || !m.content)
                return -EIO;
        return manifest_list_append_copy(out, &m);
}

static int sql_release_manifests(struct store *s, const char *version, struct manifest_list *out) {
        int r;
        struct dbconn *c = conn_get(s);
        if ((r = db_exec(c, "BEGIN")) >= 0) {
                _cleanup_reset_ struct dbstmt *q = NULL;
                if ((r = stmt(c, "SELECT 1 FROM releases WHERE version = ?1", &q)) >= 0 && (r = BIND(q, version)) >= 0 &&
                    (r = step_row(c, q)) == 0)
                        r = -ENOENT;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT file, doc_index, path, api_version, \"group\", version, kind, namespace, name, "
                            "content, annotations_json FROM release_manifests WHERE release_version = ?1 ORDER BY seq",
                         &st);
                if (r >= 0)
                        r = BIND(st, version);
                while (r >= 0 && (r = step_row(c, st)) > 0)
                        if ((r = read_manifest(st, out)) < 0)
                                break;
        }
        if (!!db_in_transaction(c))
                (void) db_exec(c, r >= 0 ? "COMMIT" : "ROLLBACK");
        conn_put(s, c);
        return r < 0 ? r : 0;
}

static int sql_release_delete(struct store *s, const char *version) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT 1 FROM clusters WHERE release_version = ?1 LIMIT 1", &st)) >= 0 &&
                    (r = BIND(st, version)) >= 0 && (r = step_row(c, st)) > 0)
                        r = -EBUSY;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM releases WHERE version = ?1", &st)) >= 0 && (r = BIND(st, version)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

/* ---- payload revisions -------------------------------------------------- */

static int sql_cluster_add_payload(struct store *s, const struct store_payload *p) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        r = payload_insert(c, p->cluster_id, p, p->created_at);
        return write_end(s, c, r);
}

#define PAYLOAD_COLS "cluster_id, revision, digest, signature, release_version, manifest_count, created_at"

static int read_payload(struct dbstmt *st, struct store_payload *p, bool with_canonical) {
        char **a[] = { &p->cluster_id };
        char **b[] = { &p->digest, &p->signature, &p->release_version };
        char **d[] = { &p->created_at };
        int r;

        if ((r = col_strs(st, 0, a, 1)) < 0 || (r = col_strs(st, 2, b, 3)) < 0 || (r = col_strs(st, 6, d, 1)) < 0)
                return r;
        p->revision = db_col_int64(st, 1);
        p->manifest_count = db_col_int64(st, 5);
        if (with_canonical) {
                const void *t = db_col_text(st, 7);
                size_t n = (size_t) db_col_bytes(st, 7);
                if (!t || !(p->canonical = malloc(n + 1)))
                        return -ENOMEM;
                memcpy(p->canonical, t, n);
                p->canonical[n] = '\0';
                p->canonical_len = n;
        }
        return 0;
}

static int sql_payload_get(struct store *s, const char *nid, int64_t revision, struct store_payload *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT " PAYLOAD_COLS ", canonical FROM payload_revisions "
                                 "WHERE cluster_id = ?1 AND revision = ?2", &st)) >= 0 && (r = BIND(st, nid)) >= 0 &&
                    (r = db_bind_int64(st, 2, revision) == 0 ? 0 : -EIO) >= 0 &&
                    (r = step_row(c, st)) >= 0)
                        r = r ? read_payload(st, out, true) : -ENOENT;
        }
        conn_put(s, c);
        return r;
}

static void payload_row_init(void *row) { store_payload_init(row); }
static int payload_row_read(struct dbstmt *st, void *row) { return read_payload(st, row, false); }
static const struct row_type payload_rows = { sizeof(struct store_payload), payload_row_init, payload_row_read };

static int sql_payload_list(struct store *s, const char *nid, struct store_payload_list *out) {
        int r;
        struct dbconn *c = conn_get(s);
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT " PAYLOAD_COLS " FROM payload_revisions WHERE cluster_id = ?1 ORDER BY revision",
                         &st);
                if (r >= 0 && (r = BIND(st, nid)) >= 0)
                        r = read_rows(c, st, SIZE_MAX, &payload_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

/* ---- people's tokens ----------------------------------------------------- */

#define TOKEN_COLS "seq, id, role, owner, created_at, expires_at, revoked_at"

static int read_token(struct dbstmt *st, struct store_token *t) {
        char **f[] = { &t->id, &t->role, &t->owner, &t->created_at, &t->expires_at, &t->revoked_at };
        return col_strs(st, 1, f, sizeof f / sizeof *f);
}

static void token_row_init(void *row) { store_token_init(row); }
static int token_row_read(struct dbstmt *st, void *row) { return read_token(st, row); }
static const struct row_type token_rows = { sizeof(struct store_token), token_row_init, token_row_read };

static int sql_token_add(struct store *s, const struct store_token *t) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT 1 FROM tokens WHERE owner = ?1 AND role <> ?2 LIMIT 1", &st)) >= 0 &&
                    (r = BIND(st, t->owner, t->role)) >= 0 && (r = step_row(c, st)) > 0)
                        r = -EPERM;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO tokens (id, role, owner, created_at, expires_at) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5)", &st)) >= 0 &&
                    (r = BIND(st, t->id, t->role, t->owner, t->created_at, t->expires_at)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

static int sql_token_get(struct store *s, const char *nid, struct store_token *out) {
        int r;
        struct dbconn *c = conn_get(s);
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT " TOKEN_COLS " FROM tokens WHERE id = ?1", &st)) >= 0 &&
                    (r = BIND(st, nid)) >= 0 && (r = step_row(c, st)) >= 0)
                        r = r ? read_token(st, out) : -ENOENT;
        }
        conn_put(s, c);
        return r;
}

static int sql_token_list(struct store *s, const char *owner, const struct store_page *pg,
                             struct store_token_list *out) {
        return owner_page(s, "SELECT " TOKEN_COLS " FROM tokens", owner, pg, &token_rows, (void **) &out->v,
                          &out->n, &out->next_after);
}

static int sql_token_revoke(struct store *s, const char *nid) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL", &st)) >= 0 &&
                    (r = BIND(st, nid, now)) >= 0 && (r = step_done(c, st)) >= 0)
                        r = db_changes(c) ? 0 : 1;
        }
        if (r == 1) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                int k;
                if ((k = stmt(c, "SELECT 1 FROM tokens WHERE id = ?1", &st)) < 0 || (k = BIND(st, nid)) < 0 ||
                    (k = step_row(c, st)) < 0)
                        r = k;
                else if (k == 0)
                        r = -ENOENT;
        }
        return write_end(s, c, r);
}

static int sql_token_check(struct store *s, const char *nid) {
        int r;
        struct dbconn *c = conn_get(s);
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT revoked_at IS NOT NULL FROM tokens WHERE id = ?1", &st)) >= 0 &&
                    (r = BIND(st, nid)) >= 0 && (r = step_row(c, st)) >= 0)
                        r = r == 0 ? -ENOENT : db_col_int64(st, 0) ? -EKEYREVOKED : 0;
        }
        conn_put(s, c);
        return r;
}

/* ---- operator catalogs --------------------------------------------------- */

#define CAT_COLS "seq, id, name, priority, owner, digest, length(files), n_files, n_packages, n_channels, " \
        "n_bundles, n_manifests, n_ignored, created_at"

static int read_catalog(struct dbstmt *st, struct store_catalog *c) {
        char **a[] = { &c->id, &c->name };
        char **b[] = { &c->owner, &c->digest };
        char **d[] = { &c->created_at };
        int64_t *n[] = { &c->n_files, &c->n_packages, &c->n_channels, &c->n_bundles, &c->n_manifests, &c->n_ignored };
        int r;

        if ((r = col_strs(st, 1, a, 2)) < 0 || (r = col_strs(st, 4, b, 2)) < 0 || (r = col_strs(st, 13, d, 1)) < 0)
                return r;
        c->priority = db_col_int64(st, 3);
        c->files_len = (size_t) db_col_int64(st, 6);
        for (size_t i = 0; i < sizeof n / sizeof *n; i++)
                *n[i] = db_col_int64(st, 7 + (int) i);
        return 0;
}

static void catalog_row_init(void *row) { store_catalog_init(row); }
static int catalog_row_read(struct dbstmt *st, void *row) { return read_catalog(st, row); }
static const struct row_type catalog_rows = { sizeof(struct store_catalog), catalog_row_init, catalog_row_read };

static int sql_catalog_create(struct store *s, const struct store_catalog *c) {
        const int64_t n[] = { c->priority, c->n_files, c->n_packages, c->n_channels, c->n_bundles, c->n_manifests,
                              c->n_ignored };
        struct dbconn *c2;
        int r;

        if ((r = write_begin(s, &c2)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c2, "INSERT INTO catalogs (id, name, created_at, owner, digest, files, priority, "
                                  "n_files, n_packages, n_channels, n_bundles, n_manifests, n_ignored) "
                                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", &st)) >= 0 &&
                    (r = BIND(st, c->id, c->name, c->created_at, c->owner, c->digest)) >= 0) {
                        if (db_bind_blob(st, 6, c->files, c->files_len) != 0)
                                r = -EIO;
                        for (size_t i = 0; r >= 0 && i < sizeof n / sizeof *n; i++)
                                r = bind_i64(st, 7 + (int) i, n[i]);
                        if (r >= 0)
                                r = step_done(c2, st);
                }
        }
        return write_end(s, c2, r);
}

static int sql_catalog_get(struct store *s, const char *id, const char *name, struct store_catalog *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, id ? "SELECT " CAT_COLS ", files FROM catalogs WHERE id = ?1"
                               : "SELECT " CAT_COLS ", files FROM catalogs WHERE name = ?1", &st);
                if (r >= 0 && (r = BIND(st, id ? id : name)) >= 0 && (r = step_row(c, st)) >= 0)
                        r = r ? read_catalog(st, out) : -ENOENT;
                if (r >= 0) {
                        const void *b = db_col_blob(st, 14);
                        size_t len = (size_t) db_col_bytes(st, 14);
                        if (!(out->files = malloc(len + 1)))
                                r = -ENOMEM;
                        else {
                                if (len)
                                        memcpy(out->files, b, len);
                                out->files[len] = '\0';
                                out->files_len = len;
                        }
                }
        }
        conn_put(s, c);
        return r;
}

static int sql_catalog_list(struct store *s, struct store_catalog_list *out) {
        int r;
        struct dbconn *c = conn_get(s);
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT " CAT_COLS " FROM catalogs ORDER BY priority, name", &st);
                if (r >= 0)
                        r = read_rows(c, st, STORE_MAX_LIMIT, &catalog_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

static int sql_catalog_delete(struct store *s, const char *id) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM catalogs WHERE id = ?1", &st)) >= 0 && (r = BIND(st, id)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

/* ---- operator subscriptions ---------------------------------------------- */

#define SUB_COLS "id, cluster_id, package, channel, catalog, version_range, owner, created_at, uninstall, " \
                 "skip_dependencies, cleanup"

static int read_subscription(struct dbstmt *st, struct store_subscription *sub) {
        char **a[] = { &sub->id, &sub->cluster_id, &sub->package, &sub->channel, &sub->catalog, &sub->version_range,
                       &sub->owner, &sub->created_at, &sub->uninstall };
        int r = col_strs(st, 0, a, sizeof a / sizeof *a);
        sub->skip_dependencies = db_col_int64(st, 9) != 0;
        sub->cleanup = db_col_int64(st, 10) != 0;
        return r;
}

static void subscription_row_init(void *row) { store_subscription_init(row); }
static int subscription_row_read(struct dbstmt *st, void *row) { return read_subscription(st, row); }
static const struct row_type subscription_rows = { sizeof(struct store_subscription), subscription_row_init,
                                                   subscription_row_read };

static int count_subscriptions(struct dbconn *c, const char *cluster_id, int64_t *n) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT count(*) FROM subscriptions WHERE cluster_id = ?1", &st);
        if (r >= 0 && (r = BIND(st, cluster_id)) >= 0 && (r = step_row(c, st)) > 0)
                *n = db_col_int64(st, 0);
        return r < 0 ? r : 0;
}

static int sql_subscription_create(struct store *s, const struct store_subscription *sub) {
        struct dbconn *c;
        int64_t n = 0;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if ((r = cluster_exists(c, sub->cluster_id)) == 0)
                r = -ENOENT;
        if (r >= 0 && (r = count_subscriptions(c, sub->cluster_id, &n)) >= 0 && n >= STORE_MAX_SUBSCRIPTIONS)
                r = -EDQUOT;
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO subscriptions (id, cluster_id, package, channel, catalog, "
                                 "version_range, owner, created_at, skip_dependencies, cleanup) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", &st)) >= 0 &&
                    (r = BIND(st, sub->id, sub->cluster_id, sub->package, sub->channel, sub->catalog,
                              sub->version_range, sub->owner, sub->created_at)) >= 0 &&
                    (r = bind_i64(st, 9, sub->skip_dependencies ? 1 : 0)) >= 0 &&
                    (r = bind_i64(st, 10, sub->cleanup ? 1 : 0)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

static int subscription_select(struct store *s, const char *cluster_id, bool uninstalling,
                               struct store_subscription_list *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, cluster_id     ? "SELECT " SUB_COLS " FROM subscriptions WHERE cluster_id = ?1 ORDER BY seq"
                            : uninstalling ? "SELECT " SUB_COLS " FROM subscriptions WHERE uninstall IS NOT NULL "
                                             "ORDER BY seq"
                                           : "SELECT " SUB_COLS " FROM subscriptions ORDER BY seq", &st);
                if (r >= 0 && cluster_id)
                        r = BIND(st, cluster_id);
                if (r >= 0)
                        r = read_rows(c, st, STORE_MAX_LIMIT, &subscription_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

static int sql_subscription_list(struct store *s, const char *cluster_id, struct store_subscription_list *out) {
        return subscription_select(s, cluster_id, false, out);
}

static int sql_subscription_list_uninstalling(struct store *s, struct store_subscription_list *out) {
        return subscription_select(s, NULL, true, out);
}

static int sql_subscription_set_uninstall(struct store *s, const char *cluster_id, const char *package,
                                             const char *expect, const char *next, const char *const *drop,
                                             size_t n_drop) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT uninstall IS NOT DISTINCT FROM ?3 FROM subscriptions "
                                 "WHERE cluster_id = ?1 AND package = ?2",
                              &st)) >= 0 &&
                    (r = BIND(st, cluster_id, package, expect)) >= 0 && (r = step_row(c, st)) >= 0)
                        r = r == 0 ? -ENOENT : db_col_int64(st, 0) ? 0 : -ESTALE;
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE subscriptions SET uninstall = ?3 WHERE cluster_id = ?1 AND package = ?2",
                              &st)) >= 0 &&
                    (r = BIND(st, cluster_id, package, next)) >= 0)
                        r = step_done(c, st);
        }
        for (size_t i = 0; i < n_drop && r >= 0; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM operands WHERE cluster_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, cluster_id, drop[i])) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

static int sql_subscription_delete(struct store *s, const char *cluster_id, const char *package) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM subscriptions WHERE cluster_id = ?1 AND package = ?2", &st)) >= 0 &&
                    (r = BIND(st, cluster_id, package)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

static int sql_subscription_set_cleanup(struct store *s, const char *cluster_id, const char *package,
                                           bool enabled) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE subscriptions SET cleanup = ?3 WHERE cluster_id = ?1 AND package = ?2", &st)) >=
                            0 &&
                    (r = BIND(st, cluster_id, package)) >= 0 && (r = bind_i64(st, 3, enabled ? 1 : 0)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

/* ---- operands ----------------------------------------------------------------- */

#define OPD_COLS "id, cluster_id, package, grp, version, kind, namespace, name, file, content, owner, created_at"

static int read_operand(struct dbstmt *st, struct store_operand *o) {
        char **a[] = { &o->id, &o->cluster_id, &o->package, &o->group, &o->version, &o->kind, &o->namespace,
                       &o->name, &o->file, &o->content, &o->owner, &o->created_at };
        int r = col_strs(st, 0, a, sizeof a / sizeof *a);
        if (r == 0 && o->namespace && !*o->namespace) {
                free(o->namespace); /* '' keeps the identity unique: cluster-scoped */
                o->namespace = NULL;
        }
        return r;
}

static void operand_row_init(void *row) { store_operand_init(row); }
static int operand_row_read(struct dbstmt *st, void *row) { return read_operand(st, row); }
static const struct row_type operand_rows = { sizeof(struct store_operand), operand_row_init, operand_row_read };

static int sql_operand_put(struct store *s, struct store_operand *v, size_t n) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if ((r = cluster_exists(c, v[0].cluster_id)) == 0)
                r = -ENOENT;
        for (size_t i = 0; i < n && r >= 0; i++) {
                struct store_operand *o = &v[i];
                const char *ns = o->namespace ? o->namespace : "";
                {
                        /* The same identity keeps its id and created_at. */
                        _cleanup_reset_ struct dbstmt *st = NULL;
                        if ((r = stmt(c, "SELECT id, created_at FROM operands WHERE cluster_id = ?1 AND grp = ?2 AND "
                                         "kind = ?3 AND namespace = ?4 AND name = ?5", &st)) >= 0 &&
                            (r = BIND(st, o->cluster_id, o->group, o->kind, ns, o->name)) >= 0 &&
                            (r = step_row(c, st)) > 0) {
                                char **a[] = { &o->id, &o->created_at };
                                r = col_strs(st, 0, a, 2);
                        }
                }
                if (r < 0)
                        break;
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO operands (" OPD_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                                 "?11, ?12) ON CONFLICT (cluster_id, grp, kind, namespace, name) DO UPDATE SET "
                                 "package = excluded.package, version = excluded.version, file = excluded.file, "
                                 "content = excluded.content, owner = excluded.owner", &st)) >= 0 &&
                    (r = BIND(st, o->id, o->cluster_id, o->package, o->group, o->version, o->kind, ns, o->name,
                              o->file, o->content, o->owner, o->created_at)) >= 0)
                        r = step_done(c, st);
        }
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT count(*) FROM operands WHERE cluster_id = ?1", &st)) >= 0 &&
                    (r = BIND(st, v[0].cluster_id)) >= 0 && (r = step_row(c, st)) > 0)
                        r = db_col_int64(st, 0) > STORE_MAX_OPERANDS ? -EDQUOT : 0;
        }
        return write_end(s, c, r);
}

static int sql_operand_list(struct store *s, const char *cluster_id, struct store_operand_list *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT " OPD_COLS " FROM operands WHERE cluster_id = ?1 ORDER BY seq", &st)) >= 0 &&
                    (r = BIND(st, cluster_id)) >= 0)
                        r = read_rows(c, st, STORE_MAX_OPERANDS, &operand_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

static int sql_operand_delete(struct store *s, const char *cluster_id, const char *id) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM operands WHERE cluster_id = ?1 AND id = ?2", &st)) >= 0 &&
                    (r = BIND(st, cluster_id, id)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

/* ---- add-ons --------------------------------------------------------------- */

#define AP_COLS "seq, id, name, owner, spec, prev_spec, conditions, created_at, updated_at, generation, " \
                "rollback_generation, paused, failure_base, deleting"

static int read_addon_proxy(struct dbstmt *st, struct store_addon_proxy *p) {
        char **a[] = { &p->id, &p->name, &p->owner, &p->spec, &p->prev_spec, &p->conditions, &p->created_at,
                       &p->updated_at };
        p->seq = db_col_int64(st, 0);
        p->generation = db_col_int64(st, 9);
        p->rollback_generation = db_col_int64(st, 10);
        p->paused = db_col_int64(st, 11) != 0;
        p->failure_base = db_col_int64(st, 12);
        p->deleting = db_col_int64(st, 13) != 0;
        return col_strs(st, 1, a, sizeof a / sizeof *a);
}

static void addon_proxy_row_init(void *row) { store_addon_proxy_init(row); }
static int addon_proxy_row_read(struct dbstmt *st, void *row) { return read_addon_proxy(st, row); }
static const struct row_type addon_proxy_rows = { sizeof(struct store_addon_proxy), addon_proxy_row_init,
                                                  addon_proxy_row_read };

static int sql_addon_proxy_create(struct store *s, const struct store_addon_proxy *p) {
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

static int sql_addon_proxy_get(struct store *s, const char *id, const char *name, struct store_addon_proxy *out) {
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

static int sql_addon_proxy_list(struct store *s, struct store_addon_proxy_list *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT " AP_COLS " FROM addon_proxies ORDER BY seq", &st)) >= 0)
                        r = read_rows(c, st, STORE_MAX_ADDON_PROXIES, &addon_proxy_rows, (void **) &out->v, &out->n,
                                      NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

static int sql_addon_proxy_update(struct store *s, const struct store_addon_proxy *p, int64_t expect_generation) {
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

#define AR_COLS "seq, proxy_id, cluster_id, content, prev_content, status, message, created_at, updated_at, " \
                "revision, applied_revision, payload_revision, generation, conflict, started_at, applied_at"

static int read_addon_release(struct dbstmt *st, struct store_addon_release *a) {
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
        return col_strs(st, 1, v, sizeof v / sizeof *v);
}

static void addon_release_row_init(void *row) { store_addon_release_init(row); }
static int addon_release_row_read(struct dbstmt *st, void *row) { return read_addon_release(st, row); }
static const struct row_type addon_release_rows = { sizeof(struct store_addon_release), addon_release_row_init,
                                                    addon_release_row_read };

static int sql_addon_release_list(struct store *s, const char *proxy_id, const char *cluster_id,
                                     const struct store_page *pg, struct store_addon_release_list *out) {
        struct query q = { .len = 0 };
        q_add(&q, "SELECT " AR_COLS " FROM addon_releases");
        q_int(&q, " WHERE seq > ?", pg ? pg->after : 0);
        if (proxy_id)
                q_text(&q, " AND proxy_id = ?", proxy_id);
        if (cluster_id)
                q_text(&q, " AND cluster_id = ?", cluster_id);
        unsigned limit = pg ? (pg->limit ? pg->limit : STORE_DEFAULT_LIMIT) : STORE_MAX_ADDON_RELEASES;
        q_int(&q, " ORDER BY seq LIMIT ?", (int64_t) limit + 1);
        q_int(&q, " OFFSET ?", pg ? pg->offset : 0);
        return read_page(s, &q, limit, &addon_release_rows, (void **) &out->v, &out->n, &out->next_after);
}

static int sql_addon_release_put(struct store *s, const struct store_addon_release *a) {
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
                        r = col_strs(st, 0, a, 4);
                }
        }
        conn_put(s, c);
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

/* ---- events ------------------------------------------------------------ */

#define EV_COLS "id, time, severity, category, infra_env_id, cluster_id, host_id, message"

/* e as a row of events, in the open write; its id filled in. */
static int event_insert_conn(struct dbconn *c, struct event *e) {
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

static int sql_event_append(struct store *s, struct event *e, bool wait) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        r = event_insert_conn(c, e);
        return wait ? write_end(s, c, r) : write_end_unwaited(s, c, r);
}

static int read_event(struct dbstmt *st, struct event *e) {
        char **a[] = { &e->time };
        char **b[] = { &e->infra_env_id, &e->cluster_id, &e->host_id, &e->message };
        int r;

        e->id = db_col_int64(st, 0);
        if ((r = col_strs(st, 1, a, 1)) < 0 || (r = col_strs(st, 4, b, 4)) < 0)
                return r;
        e->severity = event_severity_from_string((const char *) db_col_text(st, 2));
        e->category = event_category_from_string((const char *) db_col_text(st, 3));
        return e->severity < 0 || e->category < 0 ? -EIO : 0;
}

static void event_row_init(void *row) { event_init(row); }
static int event_row_read(struct dbstmt *st, void *row) { return read_event(st, row); }
static const struct row_type event_rows = { sizeof(struct event), event_row_init, event_row_read };

static int sql_event_list(struct store *s, const struct store_event_filter *f, struct event_list *out) {
        char sev[64] = ",";
        struct query q = { .len = 0 };
        int r;

        for (int i = f->min_severity; i < _EVENT_SEVERITY_MAX; i++) {
                size_t l = strlen(sev);
                snprintf(sev + l, sizeof sev - l, "%s,", event_severity_to_string((enum event_severity) i));
        }

        q_int(&q, "SELECT " EV_COLS " FROM events WHERE id > ?", f->since_id);
        if (f->infra_env_id)
                q_text(&q, " AND infra_env_id = ?", f->infra_env_id);
        if (f->cluster_id)
                q_text(&q, " AND cluster_id = ?", f->cluster_id);
        if (f->host_id)
                q_text(&q, " AND host_id = ?", f->host_id);
        q_text(&q, f->category ? " AND category = ?" : " AND category != ?", f->category ? f->category : "audit");
        if (f->min_severity > EVENT_INFO)
                q_text(&q, " AND instr(?, ',' || severity || ',') > 0", sev);
        q_int(&q, " ORDER BY id LIMIT ?", f->limit);

        struct dbconn *c = conn_get(s);
        _cleanup_reset_ struct dbstmt *st = NULL;
        r = q_prepare(c, &q, &st);
        if (r >= 0)
                r = read_rows(c, st, SIZE_MAX, &event_rows, (void **) &out->v, &out->n, &out->next_after);
        stmt_resetp(&st);
        conn_put(s, c);
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

/* ---- copying a store (store_copy) ----------------------------------------- */

/* Every table with its columns and their kinds (i integer, t text, b bytes),
 * parents first. What triggers derive is left out: host_names, and
 * infra_envs.host_count, which the destination counts as hosts go in. */
static const struct copy_table {
        const char *name;
        const char *cols;
        const char *kinds;
        const char *id; /* a column the database makes, else NULL */
} copy_tables[] = {
        { "clusters",
          "seq, id, name, owner, release_version, base_dns_domain, machine_network_cidr, api_vip, ingress_vip, "
          "high_availability_mode, pull_secret, labels, status, status_info, validations, created_at, updated_at, "
          "capabilities_spec_json, capabilities_status_json, conditions_json, payload_revision, feature_set, "
          "cpu_architecture",
          "i" "ttttttttttttttttttt" "itt", "seq" },
        { "infra_envs",
          "seq, id, name, owner, cluster_id, cpu_architecture, pull_secret, ssh_authorized_key, http_proxy, "
          "https_proxy, no_proxy, ntp_sources, token_generation, created_at, updated_at, static_network",
          "itttttttttttittt", "seq" },
        { "hosts",
          "seq, infra_env_id, id, owner, cluster_id, role, requested_hostname, installation_disk_id, inv_hostname, "
          "inv_cpu_count, inv_memory_bytes, inv_max_disk_bytes, status, status_info, validations, progress_stage, "
          "progress_percent, progress_info, checked_in_at, registered_at, discovery_agent_version, "
          "reregister_pending, created_at, updated_at, step_results, applied_revision, token_generation, stop_pending, "
          "pending_actions",
          "itttttttti" "iitttt" "itttt" "itttiii" "i", "seq" },
        { "host_inventories", "host_seq, inventory", "it", NULL },
        { "host_found", "infra_env_id, host_id, found, updated_at", "tttt", NULL },
        { "host_logs", "seq, infra_env_id, host_id, created_at, size, data", "itttib", "seq" },
        { "events", "id, time, severity, category, infra_env_id, cluster_id, host_id, message", "ittttttt", "id" },
        { "releases", "rowid, version, info_json, created_at", "ittt", "rowid" },
        { "release_manifests",
          "release_version, seq, file, doc_index, path, api_version, \"group\", version, kind, namespace, name, "
          "annotations_json, content",
          "titittttttttt", NULL },
        { "payload_revisions",
          "cluster_id, revision, digest, signature, canonical, release_version, manifest_count, created_at",
          "titttt" "it", NULL },
        { "tokens", "seq, id, role, owner, created_at, expires_at, revoked_at", "itttttt", "seq" },
        { "catalogs",
          "seq, id, name, priority, owner, digest, files, n_files, n_packages, n_channels, n_bundles, n_manifests, "
          "n_ignored, created_at",
          "ittittbiiiiiit", "seq" },
        { "subscriptions",
          "seq, id, cluster_id, package, channel, catalog, version_range, skip_dependencies, owner, created_at, "
          "cleanup, uninstall",
          "itttttti" "ttit", "seq" },
        { "addon_proxies",
          "seq, id, name, owner, spec, prev_spec, generation, rollback_generation, paused, failure_base, deleting, "
          "conditions, created_at, updated_at",
          "itttttiiiiittt", "seq" },
        { "addon_releases",
          "seq, proxy_id, cluster_id, content, prev_content, revision, applied_revision, payload_revision, "
          "generation, status, message, conflict, started_at, applied_at, created_at, updated_at",
          "ittttiiiittiiitt", "seq" },
        { "operands",
          "seq, id, cluster_id, package, grp, version, kind, namespace, name, file, content, owner, created_at",
          "itttttttttttt", "seq" },
};

static int count_rows(struct dbconn *c, const char *table, int64_t *n) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, sql, &st);
        if (r >= 0 && (r = step_row(c, st)) >= 0)
                *n = r ? db_col_int64(st, 0) : 0;
        return r < 0 ? r : 0;
}

/* One column of the source's row, bound as the destination's parameter i. */
static int copy_value(struct dbstmt *from, struct dbstmt *to, int i, char kind) {
        if (db_col_null(from, i))
                return to->drv->bind_null(to, i + 1);
        switch (kind) {
        case 'i': return db_bind_int64(to, i + 1, db_col_int64(from, i));
        case 'b': {
                const void *v = db_col_blob(from, i);
                return db_bind_blob(to, i + 1, v ? v : "", db_col_bytes(from, i));
        }
        default: {
                const unsigned char *t = db_col_text(from, i);
                return db_bind_text(to, i + 1, (const char *) t, db_col_bytes(from, i));
        }
        }
}

/* Every row of t from src (a read connection) into dst (the write's). */
static int copy_rows(struct dbconn *src, struct dbconn *dst, const struct copy_table *t, int64_t *rows) {
        char select[1024], insert[1400];
        size_t n = strlen(t->kinds);
        snprintf(select, sizeof select, "SELECT %s FROM %s", t->cols, t->name);
        int k = snprintf(insert, sizeof insert, "INSERT INTO %s (%s) VALUES (", t->name, t->cols);
        for (size_t i = 0; i < n && k > 0 && (size_t) k < sizeof insert; i++)
                k += snprintf(insert + k, sizeof insert - (size_t) k, "%s?%zu", i ? ", " : "", i + 1);
        if (k < 0 || (size_t) k + 2 >= sizeof insert)
                return -ENOBUFS;
        strcat(insert, ")");
        _cleanup_reset_ struct dbstmt *rd = NULL;
        int r = stmt(src, select, &rd);
        *rows = 0;
        while (r >= 0 && (r = step_row(src, rd)) > 0) {
                _cleanup_reset_ struct dbstmt *wr = NULL;
                if ((r = stmt(dst, insert, &wr)) < 0)
                        break;
                for (size_t i = 0; i < n && r >= 0; i++)
                        r = copy_value(rd, wr, (int) i, t->kinds[i]);
                if (r >= 0 && (r = step_done(dst, wr)) >= 0)
                        (*rows)++;
        }
        return r < 0 ? r : 0;
}

static bool same_str(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int sql_host_get(struct store *s, const char *ie, const char *id, bool brief, struct host *out);

/* Every host of from read from both, the same: 0, or -EIO naming it. */
static int check_hosts(struct store *from, struct store *to, int64_t *checked, char *err, size_t errlen) {
        struct strv ies = { 0 }, ids = { 0 };
        int r;
        {
                struct dbconn *c = conn_get(from);
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT infra_env_id, id FROM hosts ORDER BY seq", &st);
                while (r >= 0 && (r = step_row(c, st)) > 0)
                        if ((r = strv_push(&ies, (const char *) db_col_text(st, 0))) >= 0)
                                r = strv_push(&ids, (const char *) db_col_text(st, 1));
                stmt_resetp(&st);
                st = NULL;
                conn_put(from, c);
        }
        for (size_t i = 0; r >= 0 && i < ids.n; i++) {
                struct host a, b;
                host_init(&a);
                host_init(&b);
                if ((r = sql_host_get(from, ies.v[i], ids.v[i], false, &a)) >= 0 &&
                    (r = sql_host_get(to, ies.v[i], ids.v[i], false, &b)) >= 0) {
                        bool same = a.status == b.status && a.role == b.role && same_str(a.cluster_id, b.cluster_id) &&
                                    same_str(a.requested_hostname, b.requested_hostname) &&
                                    same_str(a.inventory_json, b.inventory_json) &&
                                    same_str(a.checked_in_at, b.checked_in_at) &&
                                    same_str(a.status_info, b.status_info) &&
                                    a.n_validations == b.n_validations && a.applied_revision == b.applied_revision &&
                                    a.facts.memory_bytes == b.facts.memory_bytes;
                        if (!same) {
                                snprintf(err, errlen, "host %s of infra-env %s reads differently after the copy",
                                         ids.v[i], ies.v[i]);
                                r = -EIO;
                        } else
                                (*checked)++;
                } else if (r == -ENOENT)
                        snprintf(err, errlen, "host %s of infra-env %s is missing after the copy", ids.v[i], ies.v[i]);
                host_free(&a);
                host_free(&b);
        }
        strv_free(&ies);
        strv_free(&ids);
        return r < 0 ? r : 0;
}

static int sql_copy(struct store *from, struct store *to, struct store_copy_report *rep, char *err, size_t errlen) {
        const size_t n_tables = sizeof copy_tables / sizeof *copy_tables;
        _Static_assert(sizeof copy_tables / sizeof *copy_tables <= STORE_COPY_MAX_TABLES, "report room");
        int r;

        if (sql_drv(from)->schema_version(from) != sql_drv(to)->schema_version(to)) {
                snprintf(err, errlen, "the stores are at schema versions %d and %d", sql_drv(from)->schema_version(from),
                         sql_drv(to)->schema_version(to));
                return -EPROTO;
        }
        for (size_t i = 0; i < n_tables; i++) {
                size_t cols = 1;
                for (const char *p = copy_tables[i].cols; *p; p++)
                        cols += *p == ',';
                if (cols != strlen(copy_tables[i].kinds))
                        return -EINVAL; /* this table's entry is wrong */
        }
        struct dbconn *src = conn_get(from), *dst;
        if ((r = write_begin(to, &dst)) < 0) {
                conn_put(from, src);
                snprintf(err, errlen, "the destination could not be written");
                return r;
        }
        for (size_t i = 0; i < n_tables && r >= 0; i++) {
                int64_t there = 0;
                if ((r = count_rows(dst, copy_tables[i].name, &there)) >= 0 && there > 0) {
                        snprintf(err, errlen, "the destination is not empty: %s has %lld row(s)", copy_tables[i].name,
                                 (long long) there);
                        r = -ENOTEMPTY;
                }
        }
        for (size_t i = 0; i < n_tables && r >= 0; i++) {
                const struct copy_table *t = &copy_tables[i];
                rep->tables[i].table = t->name;
                if ((r = copy_rows(src, dst, t, &rep->tables[i].rows)) < 0)
                        snprintf(err, errlen, "copying %s failed", t->name);
                else if (t->id && (r = dst->drv->ids_copied(dst, t->name, t->id)) < 0)
                        snprintf(err, errlen, "setting the next id of %s failed", t->name);
                rep->n_tables = i + 1;
        }
        conn_put(from, src);
        r = write_end(to, dst, r);
        if (r < 0) {
                if (!err[0])
                        snprintf(err, errlen, "the copy could not be committed");
                return r;
        }
        /* Both hold as many rows of each table, and the hosts read the same. */
        struct dbconn *a = conn_get(from), *b = conn_get(to);
        for (size_t i = 0; i < n_tables && r >= 0; i++) {
                int64_t na = 0, nb = 0;
                if ((r = count_rows(a, copy_tables[i].name, &na)) >= 0 &&
                    (r = count_rows(b, copy_tables[i].name, &nb)) >= 0 &&
                    (na != nb || nb != rep->tables[i].rows)) {
                        snprintf(err, errlen, "%s: %lld row(s) in the source, %lld copied, %lld in the destination",
                                 copy_tables[i].name, (long long) na, (long long) rep->tables[i].rows, (long long) nb);
                        r = -EIO;
                }
        }
        int64_t names = 0, hosts = 0;
        if (r >= 0 && (r = count_rows(b, "host_names", &names)) >= 0 && (r = count_rows(b, "hosts", &hosts)) >= 0 &&
            names != hosts) {
                snprintf(err, errlen, "host_names: %lld row(s) for %lld host(s)", (long long) names, (long long) hosts);
                r = -EIO;
        }
        conn_put(from, a);
        conn_put(to, b);
        if (r >= 0)
                r = check_hosts(from, to, &rep->hosts_checked, err, errlen);
        return r;
}

/* Every operation; a back-end's table adds its name, open and close. */
#define SQL_STORE_OPS \
        .schema_version = sql_schema_version, \
        .free_space = sql_free_space, \
        .write_latency = sql_write_latency, \
        .leader = sql_leader, \
        .copy = sql_copy, \
        .infra_env_create = sql_infra_env_create, \
        .infra_env_get = sql_infra_env_get, \
        .infra_env_list = sql_infra_env_list, \
        .infra_env_update = sql_infra_env_update, \
        .infra_env_delete = sql_infra_env_delete, \
        .infra_env_bump_token = sql_infra_env_bump_token, \
        .host_register = sql_host_register, \
        .host_get = sql_host_get, \
        .host_list = sql_host_list, \
        .host_update = sql_host_update, \
        .host_set_inventory = sql_host_set_inventory, \
        .host_set_status = sql_host_set_status, \
        .host_set_progress = sql_host_set_progress, \
        .host_set_install_state = sql_host_set_install_state, \
        .host_set_applied_revision = sql_host_set_applied_revision, \
        .host_checkin_many = sql_host_checkin_many, \
        .host_checkin = sql_host_checkin, \
        .host_token_generation = sql_host_token_generation, \
        .host_rotate_token = sql_host_rotate_token, \
        .host_bind = sql_host_bind, \
        .host_set_step_result = sql_host_set_step_result, \
        .host_forget_step_result = sql_host_forget_step_result, \
        .host_take_reregister = sql_host_take_reregister, \
        .host_delete = sql_host_delete, \
        .host_list_stale = sql_host_list_stale, \
        .host_mark_disconnected = sql_host_mark_disconnected, \
        .host_mark_stale = sql_host_mark_stale, \
        .host_count_by_status = sql_host_count_by_status, \
        .host_stop_pending = sql_host_stop_pending, \
        .host_clear_stop = sql_host_clear_stop, \
        .host_actions = sql_host_actions, \
        .host_logs_put = sql_host_logs_put, \
        .host_logs_get = sql_host_logs_get, \
        .cluster_create = sql_cluster_create, \
        .cluster_get = sql_cluster_get, \
        .cluster_list = sql_cluster_list, \
        .cluster_update = sql_cluster_update, \
        .cluster_set_status = sql_cluster_set_status, \
        .cluster_reset = sql_cluster_reset, \
        .cluster_cancel = sql_cluster_cancel, \
        .cluster_start_install = sql_cluster_start_install, \
        .cluster_delete = sql_cluster_delete, \
        .cluster_count_hosts = sql_cluster_count_hosts, \
        .release_import = sql_release_import, \
        .release_get = sql_release_get, \
        .release_list = sql_release_list, \
        .release_manifests = sql_release_manifests, \
        .release_delete = sql_release_delete, \
        .cluster_add_payload = sql_cluster_add_payload, \
        .payload_get = sql_payload_get, \
        .payload_list = sql_payload_list, \
        .token_add = sql_token_add, \
        .token_get = sql_token_get, \
        .token_list = sql_token_list, \
        .token_revoke = sql_token_revoke, \
        .token_check = sql_token_check, \
        .catalog_create = sql_catalog_create, \
        .catalog_get = sql_catalog_get, \
        .catalog_list = sql_catalog_list, \
        .catalog_delete = sql_catalog_delete, \
        .subscription_create = sql_subscription_create, \
        .subscription_list = sql_subscription_list, \
        .subscription_delete = sql_subscription_delete, \
        .subscription_set_cleanup = sql_subscription_set_cleanup, \
        .subscription_set_uninstall = sql_subscription_set_uninstall, \
        .subscription_list_uninstalling = sql_subscription_list_uninstalling, \
        .operand_put = sql_operand_put, \
        .operand_list = sql_operand_list, \
        .operand_delete = sql_operand_delete, \
        .addon_proxy_create = sql_addon_proxy_create, \
        .addon_proxy_get = sql_addon_proxy_get, \
        .addon_proxy_list = sql_addon_proxy_list, \
        .addon_proxy_update = sql_addon_proxy_update, \
        .addon_proxy_delete = sql_addon_proxy_delete, \
        .addon_release_list = sql_addon_release_list, \
        .addon_release_put = sql_addon_release_put, \
        .addon_release_delete = sql_addon_release_delete, \
        .host_found_set = sql_host_found_set, \
        .host_found_list = sql_host_found_list, \
        .cluster_host_counts = sql_cluster_host_counts, \
        .event_append = sql_event_append, \
        .event_list = sql_event_list, \
        .event_prune = sql_event_prune,

const struct store_backend store_sqlite_backend = {
        .name = "sqlite",
        .open = sqlite_store_open,
        .close = sqlite_store_close,
        SQL_STORE_OPS
};

#ifdef MUSTER_WITH_POSTGRES
const struct store_backend store_pg_backend = {
        .name = "postgres",
        .retry_eagain = true,
        .open = pg_store_open,
        .close = pg_store_close,
        SQL_STORE_OPS
};
#endif
