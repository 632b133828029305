/* Hosts' logs: an upload kept (the newest few per host) and the newest
 * read back; their argument checks (store.h) and their SQL. */
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
/* keep >= 1; out is zeroed. */
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
                        r = sql_host_expect(c, ie, id, 0) < 0 ? -ENOENT : -EBUSY;
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

int store_host_logs_put(struct store *s, const char *infra_env_id, const char *host_id, const char *now,
                        const void *data, size_t len, unsigned keep) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !now || (!data && len) || keep == 0 || len > INT32_MAX)
                return -EINVAL;
        return CALL(s, host_logs_put, ie, id, now, data ? data : "", len, keep);
}

static int sql_host_logs_get(struct store *s, const char *ie, const char *id, struct host_logs_record *out) {
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
                        else if ((r = sql_col_str(st, 0, &out->created_at)) >= 0) {
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

int store_host_logs_get(struct store *s, const char *infra_env_id, const char *host_id, struct host_logs_record *out) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        *out = (struct host_logs_record) { 0 };
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        int r = CALL(s, host_logs_get, ie, id, out);
        if (r < 0)
                host_logs_record_free(out);
        return r;
}
