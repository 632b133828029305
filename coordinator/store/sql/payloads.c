/* Payload revisions: a cluster's rendered payloads by revision; their
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

/* p->created_at is filled in. */
static int sql_cluster_add_payload(struct store *s, const struct payload_record *p) {
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        r = sql_payload_insert(c, p->cluster_id, p, p->created_at);
        return write_end(s, c, r);
}

int store_cluster_add_payload(struct store *s, struct payload_record *p) {
        char nid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!p || norm_id(p->cluster_id, nid) < 0 || !sql_payload_ok(p))
                return -EINVAL;
        if (p->created_at ? model_time_normalize(p->created_at, now) < 0 : model_now_rfc3339(now) < 0)
                return -EINVAL;
        if ((r = sql_set_owned(&p->created_at, now)) < 0)
                return r;
        struct payload_record n = *p;
        n.cluster_id = nid;
        return CALL(s, cluster_add_payload, &n);
}

#define PAYLOAD_COLS "cluster_id, revision, digest, signature, release_version, manifest_count, created_at"

static int read_payload(struct dbstmt *st, struct payload_record *p, bool with_canonical) {
        char **a[] = { &p->cluster_id };
        char **b[] = { &p->digest, &p->signature, &p->release_version };
        char **d[] = { &p->created_at };
        int r;

        if ((r = sql_col_strs(st, 0, a, 1)) < 0 || (r = sql_col_strs(st, 2, b, 3)) < 0 || (r = sql_col_strs(st, 6, d, 1)) < 0)
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

static int sql_payload_get(struct store *s, const char *nid, int64_t revision, struct payload_record *out) {
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

int store_payload_get(struct store *s, const char *cluster_id, int64_t revision, struct payload_record *out) {
        char nid[UUID_STR_LEN];
        payload_record_init(out);
        if (norm_id(cluster_id, nid) < 0 || revision < 1)
                return -EINVAL;
        int r = CALL(s, payload_get, nid, revision, out);
        if (r < 0)
                payload_record_free(out);
        return r;
}

static void payload_row_init(void *row) { payload_record_init(row); }
static int payload_row_read(struct dbstmt *st, void *row) { return read_payload(st, row, false); }
static const struct row_type payload_rows = { sizeof(struct payload_record), payload_row_init, payload_row_read };

static int sql_payload_list(struct store *s, const char *nid, struct payload_record_list *out) {
        int r;
        struct dbconn *c = conn_get(s);
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                r = stmt(c, "SELECT " PAYLOAD_COLS " FROM payload_revisions WHERE cluster_id = ?1 ORDER BY revision",
                         &st);
                if (r >= 0 && (r = BIND(st, nid)) >= 0)
                        r = sql_read_rows(c, st, SIZE_MAX, &payload_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

int store_payload_list(struct store *s, const char *cluster_id, struct payload_record_list *out) {
        char nid[UUID_STR_LEN];
        *out = (struct payload_record_list) { 0 };
        if (norm_id(cluster_id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, payload_list, nid, out);
        if (r < 0)
                payload_record_list_free(out);
        return r < 0 ? r : 0;
}
