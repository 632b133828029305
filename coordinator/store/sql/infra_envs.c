/* Infra-envs: their argument checks (store.h) and their SQL. */
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

#define IE_COLS "seq, id, name, owner, cluster_id, cpu_architecture, pull_secret, " \
        "ssh_authorized_key, http_proxy, https_proxy, no_proxy, ntp_sources, "     \
        "token_generation, created_at, updated_at, static_network"

static int read_infra_env(struct dbstmt *st, struct infra_env *ie) {
        char **strs[] = { &ie->id, &ie->name, &ie->owner, &ie->cluster_id, &ie->cpu_architecture,
                          &ie->pull_secret, &ie->ssh_authorized_key, &ie->proxy.http_proxy,
                          &ie->proxy.https_proxy, &ie->proxy.no_proxy };
        int r = sql_col_strs(st, 1, strs, sizeof strs / sizeof *strs);
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
        return sql_col_strs(st, 13, times, 3);
}

static void ie_row_init(void *row) { infra_env_init(row); }
static int ie_row_read(struct dbstmt *st, void *row) { return read_infra_env(st, row); }
static const struct row_type infra_env_rows = { sizeof(struct infra_env), ie_row_init, ie_row_read };

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

        if (ie->cluster_id && (r = sql_cluster_exists(c, ie->cluster_id)) <= 0)
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

        if ((r = sql_strv_text(&ie->ntp_sources, &ntp)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        r = infra_env_insert(c, ie, ntp);
        return write_end(s, c, r);
}

static bool proxy_too_long(const struct model_proxy *p) {
        return too_long(p->http_proxy, MODEL_MAX_STRING) || too_long(p->https_proxy, MODEL_MAX_STRING) ||
               too_long(p->no_proxy, MODEL_MAX_STRING);
}

int store_infra_env_create(struct store *s, struct infra_env *ie) {
        char id[UUID_STR_LEN], cid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        const char *cp;
        int r;

        if (!ie->name || !ie->owner || !ie->cpu_architecture || too_long(ie->name, MODEL_MAX_STRING) ||
            too_long(ie->owner, MODEL_MAX_STRING) || too_long(ie->cpu_architecture, MODEL_MAX_STRING) ||
            too_long(ie->pull_secret, MODEL_MAX_SECRET) ||
            too_long(ie->ssh_authorized_key, MODEL_MAX_SSH_KEY) || proxy_too_long(&ie->proxy) ||
            too_long(ie->static_network, MODEL_MAX_STATIC_NETWORK) ||
            ie->ntp_sources.n > MODEL_MAX_NTP_SOURCES)
                return -EINVAL;
        if ((r = ie->id ? norm_id(ie->id, id) : model_new_id(id)) < 0 ||
            (r = sql_norm_opt_id(ie->cluster_id, cid, &cp)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = sql_set_owned(&ie->id, id)) < 0 || (cp && (r = sql_set_owned(&ie->cluster_id, cp)) < 0) ||
            (r = sql_set_owned(&ie->created_at, now)) < 0 || (r = sql_set_owned(&ie->updated_at, now)) < 0)
                return r;
        if (ie->token_generation == MODEL_UNSET || ie->token_generation < 1)
                ie->token_generation = 1;
        return CALL(s, infra_env_create, ie);
}

static int sql_infra_env_get(struct store *s, const char *id, struct infra_env *out) {
        struct dbconn *c = conn_get(s);
        int r = infra_env_get_conn(c, id, out);
        conn_put(s, c);
        return r;
}

int store_infra_env_get(struct store *s, const char *id, struct infra_env *out) {
        char nid[UUID_STR_LEN];
        infra_env_init(out);
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, infra_env_get, nid, out);
        if (r < 0)
                infra_env_free(out);
        return r;
}

static int sql_infra_env_list(struct store *s, const char *owner, const struct list_page *pg,
                                 struct infra_env_list *out) {
        return sql_owner_page(s, "SELECT " IE_COLS " FROM infra_envs", owner, pg, &infra_env_rows, (void **) &out->v,
                          &out->n, &out->next_after);
}

int store_infra_env_list(struct store *s, const char *owner, const struct list_page *pg,
                         struct infra_env_list *out) {
        struct list_page p;
        *out = (struct infra_env_list) { 0 };
        int r = sql_page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, infra_env_list, owner, &p, out);
        if (r < 0)
                infra_env_list_free(out);
        return r;
}

static int sql_infra_env_update(struct store *s, const struct infra_env *ie, uint32_t fields) {
        char now[MODEL_TIME_LEN];
        const char *cp = (fields & IE_F_CLUSTER_ID) ? ie->cluster_id : NULL;
        const char *id = ie->id;
        _cleanup_free_ char *ntp = NULL;
        struct query q = { .len = 0 };
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = sql_strv_text(&ie->ntp_sources, &ntp)) < 0)
                return r;

        sql_q_text(&q, "UPDATE infra_envs SET updated_at = ?", now);
        if (fields & IE_F_NAME)
                sql_q_text(&q, ", name = ?", ie->name);
        if (fields & IE_F_CLUSTER_ID)
                sql_q_text(&q, ", cluster_id = ?", cp);
        if (fields & IE_F_PULL_SECRET)
                sql_q_text(&q, ", pull_secret = ?", ie->pull_secret);
        if (fields & IE_F_SSH_AUTHORIZED_KEY)
                sql_q_text(&q, ", ssh_authorized_key = ?", ie->ssh_authorized_key);
        if (fields & IE_F_PROXY) {
                sql_q_text(&q, ", http_proxy = ?", ie->proxy.http_proxy);
                sql_q_text(&q, ", https_proxy = ?", ie->proxy.https_proxy);
                sql_q_text(&q, ", no_proxy = ?", ie->proxy.no_proxy);
        }
        if (fields & IE_F_NTP_SOURCES)
                sql_q_text(&q, ", ntp_sources = ?", ntp);
        if (fields & IE_F_STATIC_NETWORK)
                sql_q_text(&q, ", static_network = ?", ie->static_network);
        sql_q_text(&q, " WHERE id = ?", id);

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if (cp && (r = sql_cluster_exists(c, cp)) <= 0)
                r = r < 0 ? r : -ENOENT;
        else {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = sql_q_prepare(c, &q, &st)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int store_infra_env_update(struct store *s, const struct infra_env *ie, uint32_t fields) {
        const uint32_t allowed = IE_F_NAME | IE_F_CLUSTER_ID | IE_F_PULL_SECRET |
                                 IE_F_SSH_AUTHORIZED_KEY | IE_F_PROXY | IE_F_NTP_SOURCES | IE_F_STATIC_NETWORK;
        char id[UUID_STR_LEN], cid[UUID_STR_LEN];
        const char *cp = NULL;
        int r;

        if (fields & ~allowed)
                return -EINVAL;
        if (norm_id(ie->id, id) < 0 || ((fields & IE_F_NAME) && !ie->name) ||
            too_long(ie->name, MODEL_MAX_STRING) || too_long(ie->pull_secret, MODEL_MAX_SECRET) ||
            too_long(ie->ssh_authorized_key, MODEL_MAX_SSH_KEY) || proxy_too_long(&ie->proxy) ||
            too_long(ie->static_network, MODEL_MAX_STATIC_NETWORK) || ie->ntp_sources.n > MODEL_MAX_NTP_SOURCES)
                return -EINVAL;
        if ((fields & IE_F_CLUSTER_ID) && (r = sql_norm_opt_id(ie->cluster_id, cid, &cp)) < 0)
                return r;
        struct infra_env n = *ie;
        n.id = id;
        if (fields & IE_F_CLUSTER_ID)
                n.cluster_id = cp ? cid : NULL;
        return CALL(s, infra_env_update, &n, fields);
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
        r = sql_read_rows(c, st, STORE_MAX_LIMIT, &host_rows, (void **) &out->v, &out->n, NULL);
        return r < 0 ? r : 0;
}

/* Fills *blocked only on -EBUSY and *unbound only on success (both may be
 * NULL); frees what it does not hand out. */
static int sql_infra_env_delete(struct store *s, const char *nid, uint32_t block_mask,
                                   struct host_list *blocked, struct host_list *unbound) {
        char statuses[1024], installing[256];
        struct host_list b = { 0 }, u = { 0 };
        struct dbconn *c;
        int r;

        if (sql_status_set(block_mask, statuses, sizeof statuses) < 0)
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

int store_infra_env_delete(struct store *s, const char *id, uint32_t block_mask, struct host_list *blocked,
                           struct host_list *unbound) {
        char nid[UUID_STR_LEN];
        if (blocked)
                *blocked = (struct host_list) { 0 };
        if (unbound)
                *unbound = (struct host_list) { 0 };
        if (norm_id(id, nid) < 0 || !mask_ok(block_mask))
                return -EINVAL;
        return CALL(s, infra_env_delete, nid, block_mask, blocked, unbound);
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

int store_infra_env_bump_token(struct store *s, const char *id, int64_t *gen) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, infra_env_bump_token, nid, gen);
}
