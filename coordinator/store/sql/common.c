/* What every resource file of the store shares (sqlstore.h): the argument
 * checks that need no database, the retry of an aborted transaction, the
 * driver's calls, binding and reading columns, statements with a variable
 * WHERE and paged lists. */
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

int sql_bind_texts(struct dbstmt *st, int n, const char *const *v) {
        for (int i = 0; i < n; i++) {
                int r = bind_text(st, i + 1, v[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int sql_col_str(struct dbstmt *st, int i, char **out) {
        free(*out);
        *out = NULL;
        if (db_col_null(st, i))
                return 0;
        const unsigned char *t = db_col_text(st, i);
        if (!t || !(*out = strdup((const char *) t)))
                return -ENOMEM;
        return 0;
}

int sql_col_strs(struct dbstmt *st, int first, char **const *out, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = sql_col_str(st, first + (int) i, out[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int sql_col_validations(struct dbstmt *st, int i, struct validation **v, size_t *n) {
        const unsigned char *t = db_col_text(st, i);
        _cleanup_json_ json_object *a = t ? json_tokener_parse((const char *) t) : NULL;
        if (!t)
                return 0;
        if (!a)
                return -EIO; /* not what we wrote */
        return validation_list_from_json(a, v, n, NULL, 0) < 0 ? -EIO : 0;
}

int sql_json_text(json_object *o, char **out) {
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

int sql_strv_text(const struct strv *sv, char **out) {
        if (!sv->n) {
                *out = NULL;
                return 0;
        }
        json_object *a = json_object_new_array_ext((int) sv->n);
        for (size_t i = 0; a && i < sv->n; i++)
                json_object_array_add(a, json_object_new_string(sv->v[i]));
        return sql_json_text(a, out);
}

int sql_status_set(uint32_t mask, char *buf, size_t n) {
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

void sql_q_add(struct query *q, const char *frag) {
        size_t l = strlen(frag);
        if (q->len + l >= sizeof q->sql) {
                q->overflow = true;
                return;
        }
        memcpy(q->sql + q->len, frag, l + 1);
        q->len += l;
}

void sql_q_text(struct query *q, const char *frag, const char *v) {
        sql_q_add(q, frag);
        if (q->nb >= (int) (sizeof q->b / sizeof *q->b)) {
                q->overflow = true;
                return;
        }
        q->b[q->nb].is_int = false;
        q->b[q->nb++].s = v;
}

void sql_q_int(struct query *q, const char *frag, int64_t v) {
        sql_q_add(q, frag);
        if (q->nb >= (int) (sizeof q->b / sizeof *q->b)) {
                q->overflow = true;
                return;
        }
        q->b[q->nb].is_int = true;
        q->b[q->nb++].i = v;
}

int sql_q_prepare(struct dbconn *c, struct query *q, struct dbstmt **out) {
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

int sql_write_query(struct store *s, struct query *q) {
        struct dbconn *c;
        int r = write_begin(s, &c);
        if (r < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = sql_q_prepare(c, q, &st)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int sql_read_rows(struct dbconn *c, struct dbstmt *st, size_t max, const struct row_type *t, void **v, size_t *n,
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

int sql_read_page(struct store *s, struct query *q, unsigned limit, const struct row_type *t, void **v,
              size_t *n, int64_t *next_after) {
        struct dbconn *c = conn_get(s);
        _cleanup_reset_ struct dbstmt *st = NULL;
        int64_t last = 0;
        int r = sql_q_prepare(c, q, &st);
        if (r >= 0)
                r = sql_read_rows(c, st, limit, t, v, n, &last);
        stmt_resetp(&st);
        conn_put(s, c);
        if (r < 0)
                return r;
        *next_after = r > 0 ? last : 0;
        return 0;
}

int sql_owner_page(struct store *s, const char *select, const char *owner, const struct list_page *pg,
               const struct row_type *t, void **v, size_t *n, int64_t *next_after) {
        struct query q = { .len = 0 };
        sql_q_add(&q, select);
        sql_q_int(&q, " WHERE seq > ?", pg->after);
        if (owner)
                sql_q_text(&q, " AND owner = ?", owner);
        sql_q_int(&q, " ORDER BY seq LIMIT ?", (int64_t) pg->limit + 1);
        sql_q_int(&q, " OFFSET ?", pg->offset);
        return sql_read_page(s, &q, pg->limit, t, v, n, next_after);
}

int sql_norm_opt_id(const char *in, char out[UUID_STR_LEN], const char **p) {
        *p = NULL;
        if (!in)
                return 0;
        if (norm_id(in, out) < 0)
                return -EINVAL;
        *p = out;
        return 0;
}

int sql_page_check(const struct list_page *pg, struct list_page *out) {
        *out = pg ? *pg : (struct list_page) { 0 };
        if (out->limit > STORE_MAX_LIMIT)
                return -EINVAL;
        if (!out->limit)
                out->limit = STORE_DEFAULT_LIMIT;
        return 0;
}

int sql_set_owned(char **dst, const char *v) {
        char *n = strdup(v);
        if (!n)
                return -ENOMEM;
        free(*dst);
        *dst = n;
        return 0;
}

void sql_retry_pause(unsigned n) {
        static _Thread_local unsigned seed;
        if (!seed)
                seed = (unsigned) time(NULL) ^ (unsigned) (uintptr_t) &seed;
        long us = (long) (rand_r(&seed) % (200u << (n < 6 ? n : 6)));
        struct timespec t = { .tv_sec = 0, .tv_nsec = us * 1000 };
        nanosleep(&t, NULL);
}
