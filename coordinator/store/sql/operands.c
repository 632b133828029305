/* Operands of a cluster's operators: put, list, delete; their argument checks
 * (store.h) and their SQL. */
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

#define OPD_COLS "id, cluster_id, package, grp, version, kind, namespace, name, file, content, owner, created_at"

static int read_operand(struct dbstmt *st, struct operand_record *o) {
        char **a[] = { &o->id, &o->cluster_id, &o->package, &o->group, &o->version, &o->kind, &o->namespace,
                       &o->name, &o->file, &o->content, &o->owner, &o->created_at };
        int r = sql_col_strs(st, 0, a, sizeof a / sizeof *a);
        if (r == 0 && o->namespace && !*o->namespace) {
                free(o->namespace); /* '' keeps the identity unique: cluster-scoped */
                o->namespace = NULL;
        }
        return r;
}

static void operand_row_init(void *row) { operand_record_init(row); }
static int operand_row_read(struct dbstmt *st, void *row) { return read_operand(st, row); }
static const struct row_type operand_rows = { sizeof(struct operand_record), operand_row_init, operand_row_read };

/* ids and created_at filled in (kept here for an existing identity). */
static int sql_operand_put(struct store *s, struct operand_record *v, size_t n) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if ((r = sql_cluster_exists(c, v[0].cluster_id)) == 0)
                r = -ENOENT;
        for (size_t i = 0; i < n && r >= 0; i++) {
                struct operand_record *o = &v[i];
                const char *ns = o->namespace ? o->namespace : "";
                {
                        /* The same identity keeps its id and created_at. */
                        _cleanup_reset_ struct dbstmt *st = NULL;
                        if ((r = stmt(c, "SELECT id, created_at FROM operands WHERE cluster_id = ?1 AND grp = ?2 AND "
                                         "kind = ?3 AND namespace = ?4 AND name = ?5", &st)) >= 0 &&
                            (r = BIND(st, o->cluster_id, o->group, o->kind, ns, o->name)) >= 0 &&
                            (r = step_row(c, st)) > 0) {
                                char **a[] = { &o->id, &o->created_at };
                                r = sql_col_strs(st, 0, a, 2);
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

int store_operand_put(struct store *s, struct operand_record *v, size_t n) {
        char cid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;
        if (n == 0)
                return 0;
        if ((r = model_now_rfc3339(now)) < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                struct operand_record *o = &v[i];
                char id[UUID_STR_LEN];
                if (norm_id(o->cluster_id, cid) < 0 || !text_ok(o->package, STORE_MAX_CATALOG_NAME) || !o->group ||
                    too_long(o->group, MODEL_MAX_STRING) || !text_ok(o->version, MODEL_MAX_STRING) ||
                    !text_ok(o->kind, MODEL_MAX_STRING) || (o->namespace && too_long(o->namespace, MODEL_MAX_STRING)) ||
                    !text_ok(o->name, MODEL_MAX_STRING) || !text_ok(o->file, MODEL_MAX_STRING) ||
                    !text_ok(o->content, STORE_MAX_OPERAND_BYTES) || !text_ok(o->owner, MODEL_MAX_STRING))
                        return -EINVAL;
                if ((r = model_new_id(id)) < 0 || (r = sql_set_owned(&o->id, id)) < 0 ||
                    (r = sql_set_owned(&o->created_at, now)) < 0 || (r = sql_set_owned(&o->cluster_id, cid)) < 0)
                        return r;
        }
        return CALL(s, operand_put, v, n);
}

static int sql_operand_list(struct store *s, const char *cluster_id, struct operand_record_list *out) {
        struct dbconn *c = conn_get(s);
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "SELECT " OPD_COLS " FROM operands WHERE cluster_id = ?1 ORDER BY seq", &st)) >= 0 &&
                    (r = BIND(st, cluster_id)) >= 0)
                        r = sql_read_rows(c, st, STORE_MAX_OPERANDS, &operand_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_operand_list(struct store *s, const char *cluster_id, struct operand_record_list *out) {
        char cid[UUID_STR_LEN];
        *out = (struct operand_record_list) { 0 };
        if (norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        int r = CALL(s, operand_list, cid, out);
        if (r < 0)
                operand_record_list_free(out);
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

int store_operand_delete(struct store *s, const char *cluster_id, const char *id) {
        char cid[UUID_STR_LEN], oid[UUID_STR_LEN];
        if (norm_id(cluster_id, cid) < 0 || norm_id(id, oid) < 0)
                return -EINVAL;
        return CALL(s, operand_delete, cid, oid);
}
