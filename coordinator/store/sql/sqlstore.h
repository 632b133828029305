/* What the store's resource files (hosts.c, clusters.c, ...) share, and
 * only they include: the argument checks that need no database, the retry
 * of an aborted transaction (CALL), the driver's calls, binding and reading
 * columns, statements with a variable WHERE, paged lists (common.c), and
 * the few operations' helpers one resource file lends another. Each
 * resource file holds its operations whole: store.h's function, which
 * checks and normalises the arguments, and the SQL it runs (sql_*).
 * Every function here that one file defines and others call is sql_* too,
 * so that the library's symbols say where they come from; the static
 * inline ones are each including file's own.
 *
 * What store.h's function has done before its sql_* runs, so that the SQL
 * does not do it again:
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
 *     where the sql_* function says otherwise).
 * A sql_* function returns store.h's codes; CALL runs it again while it
 * answers -EAGAIN on a driver that asks for that. */
#pragma once
#include "store/store.h"
#include "store/sql/sqldb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

/* A call of the SQL operation sql_OP, made again while it answers -EAGAIN, if
 * the driver asks for that (PostgreSQL: a serialization failure or a
 * deadlock aborted the transaction, which did nothing; running it again
 * sees what the other one wrote). Up to STORE_RETRIES times, after a short
 * pause that grows and is spread at random so that the two do not meet
 * again. */
#define STORE_RETRIES 10
#define CALL(s, op, ...)                                                                                  \
        ({                                                                                               \
                int r_;                                                                                  \
                unsigned n_ = 0;                                                                         \
                while ((r_ = sql_##op((s), __VA_ARGS__)) == -EAGAIN && (s)->drv->retry_eagain &&          \
                       ++n_ < STORE_RETRIES)                                                             \
                        sql_retry_pause(n_);                                                                 \
                r_;                                                                                      \
        })

/* The pause before the nth retry (common.c). */
void sql_retry_pause(unsigned n);

/* ---- argument checks (no database) ---------------------------------------- */

static inline int norm_id(const char *in, char out[UUID_STR_LEN]) {
        return uuid_normalize(in, out) < 0 ? -EINVAL : 0;
}

/* An optional id: NULL stays NULL (*p = NULL). */
int sql_norm_opt_id(const char *in, char out[UUID_STR_LEN], const char **p);

/* Normalise an (infra_env_id, host_id) key. */
static inline int host_key(const char *ie, const char *id, char nie[UUID_STR_LEN], char nid[UUID_STR_LEN]) {
        return norm_id(ie, nie) < 0 || norm_id(id, nid) < 0 ? -EINVAL : 0;
}

/* The canonical key of one host in an array the caller handed in. */
struct key_pair {
        char infra_env_id[UUID_STR_LEN];
        char host_id[UUID_STR_LEN];
};

static inline bool too_long(const char *s, size_t max) {
        return s && strnlen(s, max + 1) > max;
}

/* A status set may name only statuses this build knows. */
static inline bool mask_ok(uint32_t mask) {
        return !(mask >> _HOST_STATUS_MAX);
}

/* pg (may be NULL) with its limit resolved: 0 is STORE_DEFAULT_LIMIT. */
int sql_page_check(const struct list_page *pg, struct list_page *out);

int sql_set_owned(char **dst, const char *v);

static inline bool progress_ok(const struct host_progress *p) {
        return !too_long(p->stage, MODEL_MAX_STRING) && !too_long(p->info, MODEL_MAX_MESSAGE) &&
               (p->percent == MODEL_UNSET || (p->percent >= 0 && p->percent <= 100));
}

static inline bool text_ok(const char *v, size_t max) {
        return v && *v && !too_long(v, max);
}

/* ---- the driver's calls ----------------------------------------------------- */

static inline int stmt(struct dbconn *c, const char *sql, struct dbstmt **out) {
        return c->drv->prepare(c, sql, out);
}

/* Statements are cached, so a scope ends by resetting, not finalizing. */
static inline void stmt_resetp(struct dbstmt **st) {
        if (*st)
                (*st)->drv->reset(*st);
}
#define _cleanup_reset_ _cleanup_(stmt_resetp)

static inline int step_done(struct dbconn *c, struct dbstmt *st) {
        (void) c;
        int r = st->drv->step(st);
        return r < 0 ? r : 0;
}

/* A write that must change a row: 0, -ENOENT when it changed none, or an
 * error. */
static inline int step_changed(struct dbconn *c, struct dbstmt *st) {
        int r = step_done(c, st);
        return r < 0 ? r : c->drv->changes(c) ? 0 : -ENOENT;
}

/* One row expected: 1 for a row, 0 for none, or an error. */
static inline int step_row(struct dbconn *c, struct dbstmt *st) {
        (void) c;
        return st->drv->step(st);
}

static inline int64_t db_changes(struct dbconn *c) {
        return c->drv->changes(c);
}

static inline bool db_in_transaction(struct dbconn *c) {
        return c->drv->in_transaction(c);
}

static inline int db_bind_int64(struct dbstmt *st, int i, int64_t v) {
        return st->drv->bind_int64(st, i, v);
}

static inline int db_bind_text(struct dbstmt *st, int i, const char *v, size_t len) {
        return st->drv->bind_text(st, i, v, len);
}

static inline int db_bind_blob(struct dbstmt *st, int i, const void *v, size_t len) {
        return st->drv->bind_blob(st, i, v, len);
}

static inline bool db_col_null(struct dbstmt *st, int i) {
        return st->drv->col_null(st, i);
}

static inline const unsigned char *db_col_text(struct dbstmt *st, int i) {
        return st->drv->col_text(st, i);
}

static inline int64_t db_col_int64(struct dbstmt *st, int i) {
        return st->drv->col_int64(st, i);
}

static inline size_t db_col_bytes(struct dbstmt *st, int i) {
        return st->drv->col_bytes(st, i);
}

static inline const void *db_col_blob(struct dbstmt *st, int i) {
        return st->drv->col_blob(st, i);
}

static inline struct dbconn *conn_get(struct store *s) {
        return sql_drv(s)->conn_get(s);
}

static inline void conn_put(struct store *s, struct dbconn *c) {
        sql_drv(s)->conn_put(s, c);
}

static inline int write_begin(struct store *s, struct dbconn **out) {
        return db_write_begin(s, out);
}

static inline int write_end(struct store *s, struct dbconn *c, int r) {
        return db_write_end(s, c, r, true);
}

/* For a write nobody is answered about: it returns once the write is in
 * its group, which the writers queued behind it commit. */
static inline int write_end_unwaited(struct store *s, struct dbconn *c, int r) {
        return db_write_end(s, c, r, false);
}

/* ---- binding and reading columns ------------------------------------------- */

static inline int bind_text(struct dbstmt *st, int i, const char *v) {
        return v ? st->drv->bind_text(st, i, v, strlen(v)) : st->drv->bind_null(st, i);
}

/* MODEL_UNSET binds NULL. */
static inline int bind_i64(struct dbstmt *st, int i, int64_t v) {
        return v == MODEL_UNSET ? st->drv->bind_null(st, i) : db_bind_int64(st, i, v);
}

/* Bind a run of texts to ?1..?n. */
int sql_bind_texts(struct dbstmt *st, int n, const char *const *v);
#define BIND(st, ...) sql_bind_texts(st, (int) (sizeof (const char *[]) { __VA_ARGS__ } / sizeof (const char *)), \
                                 (const char *[]) { __VA_ARGS__ })

int sql_col_str(struct dbstmt *st, int i, char **out);

static inline int64_t col_i64(struct dbstmt *st, int i) {
        return db_col_null(st, i) ? MODEL_UNSET : db_col_int64(st, i);
}

/* Read a run of text columns starting at `first`. */
int sql_col_strs(struct dbstmt *st, int first, char **const *out, size_t n);

int sql_col_validations(struct dbstmt *st, int i, struct validation **v, size_t *n);

/* Validations or labels or a string list as JSON text; *out NULL for none. */
int sql_json_text(json_object *o, char **out);

static inline int validations_text(const struct validation *v, size_t n, char **out) {
        return sql_json_text(validation_list_to_json(v, n), out);
}

int sql_strv_text(const struct strv *sv, char **out);

/* ",name,name," for instr() tests: one statement for every status set. */
int sql_status_set(uint32_t mask, char *buf, size_t n);

/* A statement with a variable WHERE: fragments and their bindings in order. */
struct query {
        char sql[3072];
        size_t len;
        struct { bool is_int; const char *s; int64_t i; } b[32];
        int nb;
        bool overflow;
};

void sql_q_add(struct query *q, const char *frag);

void sql_q_text(struct query *q, const char *frag, const char *v);

void sql_q_int(struct query *q, const char *frag, int64_t v);

int sql_q_prepare(struct dbconn *c, struct query *q, struct dbstmt **out);

/* The write built in q, alone in a write transaction, that must change a
 * row: 0, -ENOENT when it changed none, or an error. */
int sql_write_query(struct store *s, struct query *q);

/* ---- paged lists ------------------------------------------------------------ */

/* How one row type is read: the list calls differ only in this. */
struct row_type {
        size_t size;
        void (*init)(void *row);
        int (*read)(struct dbstmt *st, void *row);
};

/* Read the rows of st into the growing array *v while it has fewer than
 * `max`: 1 when a row was left over, else 0. *last (may be NULL) gets
 * column 0 of each row read. The caller frees the array on error. */
int sql_read_rows(struct dbconn *c, struct dbstmt *st, size_t max, const struct row_type *t, void **v, size_t *n,
              int64_t *last);

/* Run a list query that asked for limit+1 rows (seq in column 0): read up
 * to `limit` into the growing array *v, and set *next_after to the last
 * row's seq when there were more. The caller frees the array on error. */
int sql_read_page(struct store *s, struct query *q, unsigned limit, const struct row_type *t, void **v,
              size_t *n, int64_t *next_after);

/* A page of `select` ("SELECT cols FROM table", whose first column is seq)
 * in creation order, of one owner's rows (owner NULL: all). */
int sql_owner_page(struct store *s, const char *select, const char *owner, const struct list_page *pg,
               const struct row_type *t, void **v, size_t *n, int64_t *next_after);

/* ---- what one resource file lends another ------------------------------------ */

/* A host row's columns (hosts.c's read_host reads them). */
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

/* hosts.c */
int sql_host_get(struct store *s, const char *ie, const char *id, bool brief, struct host *out);
/* The host's current status in the open connection, checked against
 * expect_mask (0 = any): 0, -ESTALE when it is not expected, -ENOENT. */
int sql_host_expect(struct dbconn *c, const char *ie, const char *id, uint32_t expect_mask);
extern const struct row_type host_rows;

/* clusters.c */
int sql_payload_insert(struct dbconn *c, const char *cid, const struct payload_record *p, const char *created_at);
int sql_cluster_exists(struct dbconn *c, const char *id);
bool sql_payload_ok(const struct payload_record *p);

/* events.c */
int sql_event_insert_conn(struct dbconn *c, struct event *e);
int sql_event_prepare(struct event *e);
