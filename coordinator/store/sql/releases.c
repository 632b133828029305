/* Releases and their manifests: import, reads, lists, deletion; their
 * argument checks (store.h) and their SQL. */
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

#define REL_COLS "r.rowid, r.version, r.info_json, r.created_at, " \
        "(SELECT count(*) FROM release_manifests m WHERE m.release_version = r.version)"

static int read_release(struct dbstmt *st, struct release_record *out) {
        const unsigned char *info = db_col_text(st, 2);
        _cleanup_json_ json_object *o = info ? json_tokener_parse((const char *) info) : NULL;
        char **t[] = { &out->created_at };
        int r;

        out->seq = db_col_int64(st, 0);
        if (!o || release_info_from_json(o, &out->info, NULL, 0) < 0)
                return -EIO;
        if ((r = sql_col_strs(st, 3, t, 1)) < 0)
                return r;
        out->manifest_count = db_col_int64(st, 4);
        return 0;
}

static int release_get_conn(struct dbconn *c, const char *version, struct release_record *out) {
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
        return sql_json_text(a, out);
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
                                 struct release_record *out) {
        _cleanup_free_ char *text = NULL;
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = sql_json_text(release_info_to_json(info), &text)) < 0 || (r = model_now_rfc3339(now)) < 0)
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

static bool release_version_ok(const char *v) {
        return v && *v && !too_long(v, RELEASE_MAX_VERSION);
}

static bool manifest_ok(const struct manifest *m) {
        return m->file && m->path && m->api_version && m->group && m->version && m->kind && m->name && m->content &&
               m->content_len <= INT32_MAX;
}

int store_release_import(struct store *s, const struct release_info *info, const struct manifest_list *ms,
                         struct release_record *out) {
        if (out)
                release_record_init(out);
        if (!info || !release_version_ok(info->version) || !ms || ms->n > RELEASE_MAX_MANIFESTS)
                return -EINVAL;
        for (size_t i = 0; i < ms->n; i++)
                if (!manifest_ok(&ms->v[i]))
                        return -EINVAL;
        int r = CALL(s, release_import, info, ms, out);
        if (r < 0 && out)
                release_record_free(out);
        return r;
}

static int sql_release_get(struct store *s, const char *version, struct release_record *out) {
        struct dbconn *c = conn_get(s);
        int r = release_get_conn(c, version, out);
        conn_put(s, c);
        return r;
}

int store_release_get(struct store *s, const char *version, struct release_record *out) {
        release_record_init(out);
        if (!release_version_ok(version))
                return -EINVAL;
        int r = CALL(s, release_get, version, out);
        if (r < 0)
                release_record_free(out);
        return r;
}

static void release_row_init(void *row) { release_record_init(row); }
static int release_row_read(struct dbstmt *st, void *row) { return read_release(st, row); }
static const struct row_type release_rows = { sizeof(struct release_record), release_row_init, release_row_read };

static int sql_release_list(struct store *s, const struct list_page *pg, struct release_record_list *out) {
        struct query q = { .len = 0 };
        sql_q_int(&q, "SELECT " REL_COLS " FROM releases r WHERE r.rowid > ?", pg->after);
        sql_q_int(&q, " ORDER BY r.rowid LIMIT ?", (int64_t) pg->limit + 1);
        sql_q_int(&q, " OFFSET ?", pg->offset);
        return sql_read_page(s, &q, pg->limit, &release_rows, (void **) &out->v, &out->n, &out->next_after);
}

int store_release_list(struct store *s, const struct list_page *pg, struct release_record_list *out) {
        struct list_page p;
        *out = (struct release_record_list) { 0 };
        int r = sql_page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, release_list, &p, out);
        if (r < 0)
                release_record_list_free(out);
        return r;
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

/* Appends to *out; not freed on failure (as store.h has it). */
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

int store_release_manifests(struct store *s, const char *version, struct manifest_list *out) {
        if (!release_version_ok(version) || !out)
                return -EINVAL;
        return CALL(s, release_manifests, version, out);
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

int store_release_delete(struct store *s, const char *version) {
        if (!release_version_ok(version))
                return -EINVAL;
        return CALL(s, release_delete, version);
}
