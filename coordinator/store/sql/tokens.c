/* People's tokens: add, read, list, revoke, check; their argument checks
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

#define TOKEN_COLS "seq, id, role, owner, created_at, expires_at, revoked_at"

static int read_token(struct dbstmt *st, struct token_record *t) {
        char **f[] = { &t->id, &t->role, &t->owner, &t->created_at, &t->expires_at, &t->revoked_at };
        return sql_col_strs(st, 1, f, sizeof f / sizeof *f);
}

static void token_row_init(void *row) { token_record_init(row); }
static int token_row_read(struct dbstmt *st, void *row) { return read_token(st, row); }
static const struct row_type token_rows = { sizeof(struct token_record), token_row_init, token_row_read };

static int sql_token_add(struct store *s, const struct token_record *t) {
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

static bool token_role_ok(const char *role) {
        return role && (strcmp(role, "infra-admin") == 0 || strcmp(role, "cluster-creator") == 0);
}

int store_token_add(struct store *s, const struct token_record *t) {
        char id[UUID_STR_LEN], created[MODEL_TIME_LEN], expires[MODEL_TIME_LEN];

        if (!t || norm_id(t->id, id) < 0 || !token_role_ok(t->role) || !t->owner || !*t->owner ||
            too_long(t->owner, MODEL_MAX_STRING) || !t->created_at || !t->expires_at ||
            model_time_normalize(t->created_at, created) < 0 || model_time_normalize(t->expires_at, expires) < 0)
                return -EINVAL;
        struct token_record n = *t;
        n.id = id;
        n.created_at = created;
        n.expires_at = expires;
        return CALL(s, token_add, &n);
}

static int sql_token_get(struct store *s, const char *nid, struct token_record *out) {
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

int store_token_get(struct store *s, const char *id, struct token_record *out) {
        char nid[UUID_STR_LEN];
        token_record_init(out);
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, token_get, nid, out);
        if (r < 0)
                token_record_free(out);
        return r;
}

static int sql_token_list(struct store *s, const char *owner, const struct list_page *pg,
                             struct token_record_list *out) {
        return sql_owner_page(s, "SELECT " TOKEN_COLS " FROM tokens", owner, pg, &token_rows, (void **) &out->v,
                          &out->n, &out->next_after);
}

int store_token_list(struct store *s, const char *owner, const struct list_page *pg,
                     struct token_record_list *out) {
        struct list_page p;
        *out = (struct token_record_list) { 0 };
        int r = sql_page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, token_list, owner, &p, out);
        if (r < 0)
                token_record_list_free(out);
        return r;
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

int store_token_revoke(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, token_revoke, nid);
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

int store_token_check(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, token_check, nid);
}
