/* Operator catalogs: create, read by id or name, list, delete; their argument
 * checks (store.h) and their SQL. */
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

#define CAT_COLS "seq, id, name, priority, owner, digest, length(files), n_files, n_packages, n_channels, " \
        "n_bundles, n_manifests, n_ignored, created_at"

static int read_catalog(struct dbstmt *st, struct catalog_record *c) {
        char **a[] = { &c->id, &c->name };
        char **b[] = { &c->owner, &c->digest };
        char **d[] = { &c->created_at };
        int64_t *n[] = { &c->n_files, &c->n_packages, &c->n_channels, &c->n_bundles, &c->n_manifests, &c->n_ignored };
        int r;

        if ((r = sql_col_strs(st, 1, a, 2)) < 0 || (r = sql_col_strs(st, 4, b, 2)) < 0 || (r = sql_col_strs(st, 13, d, 1)) < 0)
                return r;
        c->priority = db_col_int64(st, 3);
        c->files_len = (size_t) db_col_int64(st, 6);
        for (size_t i = 0; i < sizeof n / sizeof *n; i++)
                *n[i] = db_col_int64(st, 7 + (int) i);
        return 0;
}

static void catalog_row_init(void *row) { catalog_record_init(row); }
static int catalog_row_read(struct dbstmt *st, void *row) { return read_catalog(st, row); }
static const struct row_type catalog_rows = { sizeof(struct catalog_record), catalog_row_init, catalog_row_read };

/* c->id and c->created_at are filled in. */
static int sql_catalog_create(struct store *s, const struct catalog_record *c) {
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

static bool catalog_name_ok(const char *name) {
        return name && *name && !too_long(name, STORE_MAX_CATALOG_NAME);
}

int store_catalog_create(struct store *s, struct catalog_record *c) {
        char id[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!c || !catalog_name_ok(c->name) || !c->owner || !*c->owner || too_long(c->owner, MODEL_MAX_STRING) ||
            !c->digest || !*c->digest || too_long(c->digest, 128) || !c->files ||
            c->priority < INT32_MIN || c->priority > INT32_MAX || c->n_files < 0 || c->n_packages < 0 ||
            c->n_channels < 0 || c->n_bundles < 0 || c->n_manifests < 0 || c->n_ignored < 0)
                return -EINVAL;
        if (c->files_len > STORE_MAX_CATALOG_BYTES)
                return -E2BIG;
        if ((r = c->id ? norm_id(c->id, id) : model_new_id(id)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = sql_set_owned(&c->id, id)) < 0 || (r = sql_set_owned(&c->created_at, now)) < 0)
                return r;
        return CALL(s, catalog_create, c);
}

/* By id (name NULL) or by name (id NULL). */
static int sql_catalog_get(struct store *s, const char *id, const char *name, struct catalog_record *out) {
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

int store_catalog_get(struct store *s, const char *id, struct catalog_record *out) {
        char nid[UUID_STR_LEN];
        catalog_record_init(out);
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, catalog_get, nid, NULL, out);
        if (r < 0)
                catalog_record_free(out);
        return r;
}

int store_catalog_get_by_name(struct store *s, const char *name, struct catalog_record *out) {
        catalog_record_init(out);
        if (!catalog_name_ok(name))
                return -EINVAL;
        int r = CALL(s, catalog_get, NULL, name, out);
        if (r < 0)
                catalog_record_free(out);
        return r;
}

static int sql_catalog_list(struct store *s, struct catalog_record_list *out) {
        int r;
        struct dbconn *c = conn_get(s);
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT " CAT_COLS " FROM catalogs ORDER BY priority, name", &st);
                if (r >= 0)
                        r = sql_read_rows(c, st, STORE_MAX_LIMIT, &catalog_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_catalog_list(struct store *s, struct catalog_record_list *out) {
        *out = (struct catalog_record_list) { 0 };
        int r = CALL(s, catalog_list, out);
        if (r < 0)
                catalog_record_list_free(out);
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

int store_catalog_delete(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, catalog_delete, nid);
}
