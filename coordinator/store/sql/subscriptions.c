/* Operator subscriptions: create, list, delete, cleanup and uninstall; their
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

#define SUB_COLS "id, cluster_id, package, channel, catalog, version_range, owner, created_at, uninstall, " \
                 "skip_dependencies, cleanup"

static int read_subscription(struct dbstmt *st, struct subscription_record *sub) {
        char **a[] = { &sub->id, &sub->cluster_id, &sub->package, &sub->channel, &sub->catalog, &sub->version_range,
                       &sub->owner, &sub->created_at, &sub->uninstall };
        int r = sql_col_strs(st, 0, a, sizeof a / sizeof *a);
        sub->skip_dependencies = db_col_int64(st, 9) != 0;
        sub->cleanup = db_col_int64(st, 10) != 0;
        return r;
}

static void subscription_row_init(void *row) { subscription_record_init(row); }
static int subscription_row_read(struct dbstmt *st, void *row) { return read_subscription(st, row); }
static const struct row_type subscription_rows = { sizeof(struct subscription_record), subscription_row_init,
                                                   subscription_row_read };

static int count_subscriptions(struct dbconn *c, const char *cluster_id, int64_t *n) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT count(*) FROM subscriptions WHERE cluster_id = ?1", &st);
        if (r >= 0 && (r = BIND(st, cluster_id)) >= 0 && (r = step_row(c, st)) > 0)
                *n = db_col_int64(st, 0);
        return r < 0 ? r : 0;
}

/* sub->id and sub->created_at are filled in. */
static int sql_subscription_create(struct store *s, const struct subscription_record *sub) {
        struct dbconn *c;
        int64_t n = 0;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if ((r = sql_cluster_exists(c, sub->cluster_id)) == 0)
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

static bool opt_ok(const char *v) {
        return !v || (*v && !too_long(v, MODEL_MAX_STRING));
}

int store_subscription_create(struct store *s, struct subscription_record *sub) {
        char id[UUID_STR_LEN], cid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!sub || !sub->package || !*sub->package || too_long(sub->package, STORE_MAX_CATALOG_NAME) ||
            !sub->owner || !*sub->owner || too_long(sub->owner, MODEL_MAX_STRING) || !opt_ok(sub->channel) ||
            !opt_ok(sub->catalog) || !opt_ok(sub->version_range) || norm_id(sub->cluster_id, cid) < 0)
                return -EINVAL;
        if ((r = model_new_id(id)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = sql_set_owned(&sub->id, id)) < 0 || (r = sql_set_owned(&sub->created_at, now)) < 0 ||
            (r = sql_set_owned(&sub->cluster_id, cid)) < 0)
                return r;
        return CALL(s, subscription_create, sub);
}

static int subscription_select(struct store *s, const char *cluster_id, bool uninstalling,
                               struct subscription_record_list *out) {
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
                        r = sql_read_rows(c, st, STORE_MAX_LIMIT, &subscription_rows, (void **) &out->v, &out->n, NULL);
        }
        conn_put(s, c);
        return r < 0 ? r : 0;
}

/* cluster_id NULL: all. */
static int sql_subscription_list(struct store *s, const char *cluster_id, struct subscription_record_list *out) {
        return subscription_select(s, cluster_id, false, out);
}

int store_subscription_list(struct store *s, const char *cluster_id, struct subscription_record_list *out) {
        char cid[UUID_STR_LEN];
        *out = (struct subscription_record_list) { 0 };
        if (cluster_id && norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        int r = CALL(s, subscription_list, cluster_id ? cid : NULL, out);
        if (r < 0)
                subscription_record_list_free(out);
        return r < 0 ? r : 0;
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

int store_subscription_delete(struct store *s, const char *cluster_id, const char *package) {
        char cid[UUID_STR_LEN];
        if (norm_id(cluster_id, cid) < 0 || !package || !*package || too_long(package, STORE_MAX_CATALOG_NAME))
                return -EINVAL;
        return CALL(s, subscription_delete, cid, package);
}

static int sql_subscription_list_uninstalling(struct store *s, struct subscription_record_list *out) {
        return subscription_select(s, NULL, true, out);
}

int store_subscription_list_uninstalling(struct store *s, struct subscription_record_list *out) {
        *out = (struct subscription_record_list) { 0 };
        int r = CALL(s, subscription_list_uninstalling, out);
        if (r < 0)
                subscription_record_list_free(out);
        return r < 0 ? r : 0;
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

int store_subscription_set_uninstall(struct store *s, const char *cluster_id, const char *package, const char *expect,
                                     const char *next, const char *const *drop, size_t n_drop) {
        char cid[UUID_STR_LEN];
        if (norm_id(cluster_id, cid) < 0 || !package || !*package || too_long(package, STORE_MAX_CATALOG_NAME) ||
            (n_drop && !drop) || n_drop > STORE_MAX_OPERANDS)
                return -EINVAL;
        if (next && strlen(next) > STORE_MAX_UNINSTALL)
                return -E2BIG;
        for (size_t i = 0; i < n_drop; i++)
                if (!drop[i])
                        return -EINVAL;
        return CALL(s, subscription_set_uninstall, cid, package, expect, next, drop, n_drop);
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

int store_subscription_set_cleanup(struct store *s, const char *cluster_id, const char *package, bool enabled) {
        char cid[UUID_STR_LEN];
        if (norm_id(cluster_id, cid) < 0 || !package || !*package || too_long(package, STORE_MAX_CATALOG_NAME))
                return -EINVAL;
        return CALL(s, subscription_set_cleanup, cid, package, enabled);
}
