/* Clusters: creation, reads, updates, status changes, reset and cancel, the
 * start of an installation, deletion and host counts; their argument checks
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

static int cluster_not_updated(struct dbconn *c, const char *id);

#define CL_COLS "seq, id, name, owner, release_version, base_dns_domain, machine_network_cidr, " \
        "api_vip, ingress_vip, high_availability_mode, pull_secret, labels, status, status_info, " \
        "validations, created_at, updated_at, capabilities_spec_json, capabilities_status_json, " \
        "conditions_json, payload_revision, feature_set, cpu_architecture"

/* A JSON text column: 1 and *out, 0 for NULL, -EIO for text that is not JSON. */
static int col_json(struct dbstmt *st, int i, json_object **out) {
        const unsigned char *t = db_col_text(st, i);
        *out = NULL;
        if (!t)
                return 0;
        *out = json_tokener_parse((const char *) t);
        return *out ? 1 : -EIO;
}

static int read_cluster(struct dbstmt *st, struct cluster *cl) {
        char **a[] = { &cl->id, &cl->name, &cl->owner, &cl->release_version, &cl->base_dns_domain,
                       &cl->machine_network_cidr, &cl->api_vip, &cl->ingress_vip };
        char **b[] = { &cl->pull_secret };
        char **d[] = { &cl->status, &cl->status_info };
        char **e[] = { &cl->created_at, &cl->updated_at };
        int r;

        if ((r = sql_col_strs(st, 1, a, 8)) < 0 || (r = sql_col_strs(st, 10, b, 1)) < 0 ||
            (r = sql_col_strs(st, 12, d, 2)) < 0 ||
            (r = sql_col_validations(st, 14, &cl->validations, &cl->n_validations)) < 0 ||
            (r = sql_col_strs(st, 15, e, 2)) < 0)
                return r;
        cl->high_availability_mode = ha_mode_from_string((const char *) db_col_text(st, 9));
        const unsigned char *lt = db_col_text(st, 11);
        if (lt) {
                _cleanup_json_ json_object *o = json_tokener_parse((const char *) lt);
                if (!o || labels_from_json(o, &cl->labels, &cl->n_labels, NULL, 0) < 0)
                        return -EIO;
        }
        {
                _cleanup_json_ json_object *o = NULL;
                if ((r = col_json(st, 17, &o)) < 0 ||
                    (r > 0 && cluster_cap_spec_from_json(o, &cl->cap_spec, NULL, 0) < 0))
                        return -EIO;
        }
        {
                _cleanup_json_ json_object *o = NULL;
                if ((r = col_json(st, 18, &o)) < 0 ||
                    (r > 0 && cluster_cap_status_from_json(o, &cl->cap_status, NULL, 0) < 0))
                        return -EIO;
                cl->has_cap_status = r > 0;
        }
        {
                _cleanup_json_ json_object *o = NULL;
                if ((r = col_json(st, 19, &o)) < 0 ||
                    (r > 0 && model_condition_list_from_json(o, &cl->conditions, &cl->n_conditions, NULL, 0) < 0))
                        return -EIO;
        }
        cl->payload_revision = db_col_int64(st, 20);
        char **fs[] = { &cl->feature_set, &cl->cpu_architecture };
        if ((r = sql_col_strs(st, 21, fs, 2)) < 0)
                return r;
        return cl->high_availability_mode < 0 ? -EIO : 0;
}

static void cluster_row_init(void *row) { cluster_init(row); }
static int cluster_row_read(struct dbstmt *st, void *row) { return read_cluster(st, row); }
static const struct row_type cluster_rows = { sizeof(struct cluster), cluster_row_init, cluster_row_read };

/* The JSON texts of a cluster's capability members (NULL when absent). */
struct cluster_texts {
        char *spec, *status, *conditions;
};

static void cluster_texts_free(struct cluster_texts *t) {
        free(t->spec);
        free(t->status);
        free(t->conditions);
}

static int cluster_texts_make(const struct cluster *cl, struct cluster_texts *t) {
        int r;
        *t = (struct cluster_texts) { 0 };
        if ((r = sql_json_text(cluster_cap_spec_to_json(&cl->cap_spec), &t->spec)) < 0 ||
            (cl->has_cap_status && (r = sql_json_text(cluster_cap_status_to_json(&cl->cap_status), &t->status)) < 0) ||
            (r = sql_json_text(model_condition_list_to_json(cl->conditions, cl->n_conditions), &t->conditions)) < 0) {
                cluster_texts_free(t);
                return r;
        }
        return 0;
}

static int cluster_get_conn(struct dbconn *c, const char *id, struct cluster *out) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT " CL_COLS " FROM clusters WHERE id = ?1", &st);
        if (r < 0 || (r = BIND(st, id)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        return r ? read_cluster(st, out) : -ENOENT;
}

static int sql_cluster_create(struct store *s, const struct cluster *cl) {
        _cleanup_free_ char *labels = NULL, *vals = NULL;
        _cleanup_(cluster_texts_free) struct cluster_texts tx = { 0 };
        struct dbconn *c;
        int r;

        if ((r = sql_json_text(labels_to_json(cl->labels, cl->n_labels), &labels)) < 0 ||
            (r = validations_text(cl->validations, cl->n_validations, &vals)) < 0 ||
            (r = cluster_texts_make(cl, &tx)) < 0)
                return r;
        if ((r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "INSERT INTO clusters (id, name, owner, release_version, base_dns_domain, "
                                 "machine_network_cidr, api_vip, ingress_vip, high_availability_mode, "
                                 "pull_secret, labels, status, status_info, validations, created_at, updated_at, "
                                 "capabilities_spec_json, capabilities_status_json, conditions_json, feature_set, "
                                 "cpu_architecture) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                                 "?17, ?18, ?19, ?20, ?21)",
                              &st)) >= 0 &&
                    (r = BIND(st, cl->id, cl->name, cl->owner, cl->release_version, cl->base_dns_domain,
                              cl->machine_network_cidr, cl->api_vip, cl->ingress_vip,
                              ha_mode_to_string(cl->high_availability_mode), cl->pull_secret, labels,
                              cl->status, cl->status_info, vals, cl->created_at, cl->updated_at, tx.spec, tx.status,
                              tx.conditions, cl->feature_set, cl->cpu_architecture)) >= 0)
                        r = step_done(c, st);
        }
        return write_end(s, c, r);
}

/* What a cluster without them has (model.h); the SQL is handed these
 * rather than NULL. Never written through. */
static char default_feature_set[] = "Default";
static char default_cpu_architecture[] = "x86_64";

static bool cluster_too_long(const struct cluster *cl) {
        const char *s[] = { cl->name, cl->owner, cl->release_version, cl->base_dns_domain,
                            cl->machine_network_cidr, cl->api_vip, cl->ingress_vip, cl->status };
        for (size_t i = 0; i < sizeof s / sizeof *s; i++)
                if (too_long(s[i], MODEL_MAX_STRING))
                        return true;
        return too_long(cl->pull_secret, MODEL_MAX_SECRET) || too_long(cl->status_info, MODEL_MAX_MESSAGE) ||
               cl->n_labels > MODEL_MAX_LABELS || cl->n_validations > MODEL_MAX_VALIDATIONS ||
               too_long(cl->feature_set, MODEL_MAX_CAPABILITY_NAME) ||
               too_long(cl->cap_spec.baseline_capability_set, MODEL_MAX_CAPABILITY_NAME) ||
               cl->cap_spec.additional_enabled_capabilities.n > MODEL_MAX_CAPABILITIES ||
               cl->cap_status.enabled_capabilities.n > MODEL_MAX_CAPABILITIES ||
               cl->cap_status.known_capabilities.n > MODEL_MAX_CAPABILITIES ||
               cl->n_conditions > MODEL_MAX_CONDITIONS;
}

int store_cluster_create(struct store *s, struct cluster *cl) {
        char id[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!cl->name || !cl->owner || cluster_too_long(cl))
                return -EINVAL;
        if (cl->high_availability_mode == _HA_MODE_INVALID)
                cl->high_availability_mode = HA_MODE_FULL;
        if (!ha_mode_to_string(cl->high_availability_mode))
                return -EINVAL;
        if ((r = cl->id ? norm_id(cl->id, id) : model_new_id(id)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = sql_set_owned(&cl->id, id)) < 0 || (r = sql_set_owned(&cl->created_at, now)) < 0 ||
            (r = sql_set_owned(&cl->updated_at, now)) < 0 ||
            (!cl->status && (r = sql_set_owned(&cl->status, "pending-for-input")) < 0))
                return r;
        /* The caller's struct keeps NULL for these, as it always has. */
        struct cluster n = *cl;
        if (!n.feature_set)
                n.feature_set = default_feature_set;
        if (!n.cpu_architecture)
                n.cpu_architecture = default_cpu_architecture;
        return CALL(s, cluster_create, &n);
}

static int sql_cluster_get(struct store *s, const char *id, struct cluster *out) {
        struct dbconn *c = conn_get(s);
        int r = cluster_get_conn(c, id, out);
        conn_put(s, c);
        return r;
}

int store_cluster_get(struct store *s, const char *id, struct cluster *out) {
        char nid[UUID_STR_LEN];
        cluster_init(out);
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, cluster_get, nid, out);
        if (r < 0)
                cluster_free(out);
        return r;
}

static int sql_cluster_list(struct store *s, const char *owner, const struct list_page *pg,
                               struct cluster_list *out) {
        return sql_owner_page(s, "SELECT " CL_COLS " FROM clusters", owner, pg, &cluster_rows, (void **) &out->v,
                          &out->n, &out->next_after);
}

int store_cluster_list(struct store *s, const char *owner, const struct list_page *pg,
                       struct cluster_list *out) {
        struct list_page p;
        *out = (struct cluster_list) { 0 };
        int r = sql_page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, cluster_list, owner, &p, out);
        if (r < 0)
                cluster_list_free(out);
        return r;
}

static int sql_cluster_update(struct store *s, const struct cluster *cl, uint32_t fields) {
        const char *id = cl->id;
        char now[MODEL_TIME_LEN];
        _cleanup_free_ char *labels = NULL;
        _cleanup_(cluster_texts_free) struct cluster_texts tx = { 0 };
        struct query q = { .len = 0 };
        int r;

        if ((r = model_now_rfc3339(now)) < 0 ||
            ((fields & CL_F_LABELS) && (r = sql_json_text(labels_to_json(cl->labels, cl->n_labels), &labels)) < 0) ||
            (r = cluster_texts_make(cl, &tx)) < 0)
                return r;
        sql_q_text(&q, "UPDATE clusters SET updated_at = ?", now);
        if (fields & CL_F_NAME)
                sql_q_text(&q, ", name = ?", cl->name);
        if (fields & CL_F_RELEASE_VERSION)
                sql_q_text(&q, ", release_version = ?", cl->release_version);
        if (fields & CL_F_BASE_DNS_DOMAIN)
                sql_q_text(&q, ", base_dns_domain = ?", cl->base_dns_domain);
        if (fields & CL_F_MACHINE_NETWORK_CIDR)
                sql_q_text(&q, ", machine_network_cidr = ?", cl->machine_network_cidr);
        if (fields & CL_F_API_VIP)
                sql_q_text(&q, ", api_vip = ?", cl->api_vip);
        if (fields & CL_F_INGRESS_VIP)
                sql_q_text(&q, ", ingress_vip = ?", cl->ingress_vip);
        if (fields & CL_F_HA_MODE)
                sql_q_text(&q, ", high_availability_mode = ?", ha_mode_to_string(cl->high_availability_mode));
        if (fields & CL_F_PULL_SECRET)
                sql_q_text(&q, ", pull_secret = ?", cl->pull_secret);
        if (fields & CL_F_LABELS)
                sql_q_text(&q, ", labels = ?", labels);
        if (fields & CL_F_CAPABILITIES)
                sql_q_text(&q, ", capabilities_spec_json = ?", tx.spec);
        if (fields & CL_F_CAP_STATUS)
                sql_q_text(&q, ", capabilities_status_json = ?", tx.status);
        if (fields & CL_F_CONDITIONS)
                sql_q_text(&q, ", conditions_json = ?", tx.conditions);
        if (fields & CL_F_FEATURE_SET)
                sql_q_text(&q, ", feature_set = ?", cl->feature_set);
        sql_q_text(&q, " WHERE id = ?", id);

        return sql_write_query(s, &q);
}

int store_cluster_update(struct store *s, const struct cluster *cl, uint32_t fields) {
        const uint32_t allowed = CL_F_NAME | CL_F_RELEASE_VERSION | CL_F_BASE_DNS_DOMAIN |
                                 CL_F_MACHINE_NETWORK_CIDR | CL_F_API_VIP | CL_F_INGRESS_VIP |
                                 CL_F_HA_MODE | CL_F_PULL_SECRET | CL_F_LABELS | CL_F_CAPABILITIES |
                                 CL_F_CAP_STATUS | CL_F_CONDITIONS | CL_F_FEATURE_SET;
        char id[UUID_STR_LEN];

        if ((fields & ~allowed) || norm_id(cl->id, id) < 0 || cluster_too_long(cl) ||
            ((fields & CL_F_NAME) && !cl->name) ||
            ((fields & CL_F_HA_MODE) && !ha_mode_to_string(cl->high_availability_mode)))
                return -EINVAL;
        struct cluster n = *cl;
        n.id = id;
        if (!n.feature_set)
                n.feature_set = default_feature_set;
        return CALL(s, cluster_update, &n, fields);
}

static int sql_cluster_set_status(struct store *s, const char *nid, const char *expect, const char *status,
                                    const char *status_info, const struct validation *v, size_t n_v) {
        char now[MODEL_TIME_LEN];
        _cleanup_free_ char *vt = NULL;
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (v && (r = validations_text(v, n_v, &vt)) < 0) ||
            (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET status = ?2, status_info = ?3, updated_at = ?4, "
                                 "validations = coalesce(?5, validations) "
                                 "WHERE id = ?1 AND (?6 IS NULL OR status = ?6)", &st)) >= 0 &&
                    (r = BIND(st, nid, status, status_info, now, vt, expect)) >= 0 && (r = step_done(c, st)) >= 0 &&
                    db_changes(c) == 0)
                        r = cluster_not_updated(c, nid);
        }
        return write_end(s, c, r);
}

int store_cluster_set_status_from(struct store *s, const char *id, const char *expect, const char *status,
                                  const char *status_info, const struct validation *v, size_t n_v) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0 || !status || too_long(status, MODEL_MAX_STRING) ||
            too_long(status_info, MODEL_MAX_MESSAGE) || n_v > MODEL_MAX_VALIDATIONS)
                return -EINVAL;
        return CALL(s, cluster_set_status, nid, expect, status, status_info, v, n_v);
}

/* Insert revision p->revision and move the cluster's payload_revision to it,
 * only from p->revision - 1 (-ESTALE otherwise; -ENOENT: no cluster). */
int sql_payload_insert(struct dbconn *c, const char *cid, const struct payload_record *p, const char *created_at) {
        int r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET payload_revision = ?2 WHERE id = ?1 AND payload_revision = ?3",
                              &st)) < 0 || (r = BIND(st, cid)) < 0 ||
                    db_bind_int64(st, 2, p->revision) != 0 ||
                    db_bind_int64(st, 3, p->revision - 1) != 0)
                        return r < 0 ? r : -EIO;
                if ((r = step_done(c, st)) < 0)
                        return r;
                if (db_changes(c) == 0)
                        return cluster_not_updated(c, cid);
        }
        _cleanup_reset_ struct dbstmt *st = NULL;
        if ((r = stmt(c, "INSERT INTO payload_revisions (cluster_id, revision, digest, signature, canonical, "
                         "release_version, manifest_count, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                      &st)) < 0 ||
            (r = BIND(st, cid, NULL, p->digest, p->signature, NULL, p->release_version, NULL, created_at)) < 0)
                return r;
        if (db_bind_int64(st, 2, p->revision) != 0 ||
            db_bind_text(st, 5, p->canonical, p->canonical_len) != 0 ||
            db_bind_int64(st, 7, p->manifest_count) != 0)
                return -EIO;
        return step_done(c, st);
}

static int sql_cluster_start_install(struct store *s, const char *nid, const char *status_info,
                                        enum host_status host_to, const char *host_info,
                                        const struct store_host_role *roles, size_t n_roles,
                                        const struct payload_record *payload) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET status = ?2, status_info = ?3, updated_at = ?4 "
                                 "WHERE id = ?1 AND status = ?5", &st)) >= 0 &&
                    (r = BIND(st, nid, cluster_status_to_string(CLUSTER_PREPARING_FOR_INSTALLATION), status_info,
                              now, cluster_status_to_string(CLUSTER_READY))) >= 0 &&
                    (r = step_done(c, st)) >= 0 && db_changes(c) == 0)
                        r = cluster_not_updated(c, nid);
        }
        for (size_t i = 0; r >= 0 && i < n_roles; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE hosts SET role = ?4, updated_at = ?5 "
                                 "WHERE infra_env_id = ?1 AND id = ?2 AND cluster_id = ?3", &st)) >= 0 &&
                    (r = BIND(st, roles[i].infra_env_id, roles[i].host_id, nid, host_role_to_string(roles[i].role),
                              now)) >= 0)
                        r = step_done(c, st);
        }
        if (r >= 0 && payload)
                r = sql_payload_insert(c, nid, payload, now);
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                /* The disk speed is measured again for each installation. */
                if ((r = stmt(c, "UPDATE hosts SET status = ?2, status_info = ?3, updated_at = ?4, "
                                 "step_results = json_remove(step_results, '$.\"installation-disk-speed-check\"') "
                                 "WHERE cluster_id = ?1 AND status = ?5", &st)) >= 0 &&
                    (r = BIND(st, nid, host_status_to_string(host_to), host_info, now,
                              host_status_to_string(HOST_KNOWN))) >= 0 && (r = step_done(c, st)) >= 0)
                        r = db_changes(c);
        }
        return write_end(s, c, r);
}

bool sql_payload_ok(const struct payload_record *p) {
        return p->revision >= 1 && p->digest && p->signature && p->canonical && p->release_version &&
               p->canonical_len <= INT32_MAX && p->manifest_count >= 0 && !too_long(p->digest, 128) &&
               !too_long(p->signature, 256) && !too_long(p->release_version, MODEL_MAX_STRING);
}

int store_cluster_start_install(struct store *s, const char *id, const char *status_info,
                                enum host_status host_to, const char *host_info,
                                const struct store_host_role *roles, size_t n_roles,
                                const struct payload_record *payload) {
        char nid[UUID_STR_LEN];
        _cleanup_free_ struct store_host_role *copy = NULL;
        _cleanup_free_ struct key_pair *keys = NULL;

        if (norm_id(id, nid) < 0 || !host_status_to_string(host_to) || too_long(status_info, MODEL_MAX_MESSAGE) ||
            too_long(host_info, MODEL_MAX_MESSAGE) || (n_roles && !roles) || (payload && !sql_payload_ok(payload)))
                return -EINVAL;
        if (n_roles && (!(copy = calloc(n_roles, sizeof *copy)) || !(keys = calloc(n_roles, sizeof *keys))))
                return -ENOMEM;
        for (size_t i = 0; i < n_roles; i++) {
                if (host_key(roles[i].infra_env_id, roles[i].host_id, keys[i].infra_env_id, keys[i].host_id) < 0 ||
                    !host_role_to_string(roles[i].role))
                        return -EINVAL;
                copy[i] = roles[i];
                copy[i].infra_env_id = keys[i].infra_env_id;
                copy[i].host_id = keys[i].host_id;
        }
        return CALL(s, cluster_start_install, nid, status_info, host_to, host_info, copy, n_roles, payload);
}

static int cluster_move(struct store *s, const char *id, const char *expect, const char *status,
                        const char *status_info, const struct store_host_reset *hosts, size_t n, bool stop);

static int sql_cluster_reset(struct store *s, const char *id, const char *expect, const char *status,
                                const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move(s, id, expect, status, status_info, hosts, n, false);
}

static int sql_cluster_cancel(struct store *s, const char *id, const char *expect, const char *status,
                                 const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move(s, id, expect, status, status_info, hosts, n, true);
}

/* store_cluster_reset (stop false) and store_cluster_cancel (stop true):
 * the hosts' moves go to the SQL (cluster_move) with canonical keys. */
static int cluster_move_checked(struct store *s, const char *id, const char *expect, const char *status,
                                const char *status_info, const struct store_host_reset *hosts, size_t n, bool stop) {
        char nid[UUID_STR_LEN];
        _cleanup_free_ struct store_host_reset *copy = NULL;
        _cleanup_free_ struct key_pair *keys = NULL;

        if (norm_id(id, nid) < 0 || !expect || !status || too_long(status_info, MODEL_MAX_MESSAGE) || (n && !hosts))
                return -EINVAL;
        if (n && (!(copy = calloc(n, sizeof *copy)) || !(keys = calloc(n, sizeof *keys))))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (host_key(hosts[i].infra_env_id, hosts[i].host_id, keys[i].infra_env_id, keys[i].host_id) < 0 ||
                    !host_status_to_string(hosts[i].from) || !host_status_to_string(hosts[i].to) ||
                    too_long(hosts[i].status_info, MODEL_MAX_MESSAGE))
                        return -EINVAL;
                copy[i] = hosts[i];
                copy[i].infra_env_id = keys[i].infra_env_id;
                copy[i].host_id = keys[i].host_id;
        }
        return stop ? CALL(s, cluster_cancel, nid, expect, status, status_info, copy, n)
                    : CALL(s, cluster_reset, nid, expect, status, status_info, copy, n);
}

/* store_cluster_reset (stop false) and store_cluster_cancel (stop true). */
static int cluster_move(struct store *s, const char *nid, const char *expect, const char *status,
                        const char *status_info, const struct store_host_reset *hosts, size_t n, bool stop) {
        char now[MODEL_TIME_LEN];
        struct dbconn *c;
        int r, moved = 0;

        if ((r = model_now_rfc3339(now)) < 0 || (r = write_begin(s, &c)) < 0)
                return r;
        {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "UPDATE clusters SET status = ?2, status_info = ?3, updated_at = ?4 "
                                 "WHERE id = ?1 AND status = ?5", &st)) >= 0 &&
                    (r = BIND(st, nid, status, status_info, now, expect)) >= 0 &&
                    (r = step_done(c, st)) >= 0 && db_changes(c) == 0)
                        r = cluster_not_updated(c, nid);
        }
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                /* A cancel keeps the progress (what was written); a reset
                 * starts the host's install story again. */
                if ((r = stmt(c, stop ? "UPDATE hosts SET status = ?4, status_info = ?5, updated_at = ?6, "
                                        "stop_pending = 1 "
                                        "WHERE infra_env_id = ?1 AND id = ?2 AND cluster_id = ?3 AND status = ?7"
                                      : "UPDATE hosts SET status = ?4, status_info = ?5, updated_at = ?6, "
                                        "reregister_pending = 1, stop_pending = 0, progress_stage = NULL, "
                                        "progress_percent = NULL, progress_info = NULL, step_results = '{}', "
                                        "applied_revision = 0 "
                                        "WHERE infra_env_id = ?1 AND id = ?2 AND cluster_id = ?3 AND status = ?7",
                              &st)) >= 0 &&
                    (r = BIND(st, hosts[i].infra_env_id, hosts[i].host_id, nid, host_status_to_string(hosts[i].to),
                              hosts[i].status_info, now, host_status_to_string(hosts[i].from))) >= 0 &&
                    (r = step_done(c, st)) >= 0)
                        moved += db_changes(c) > 0;
        }
        return write_end(s, c, r < 0 ? r : moved);
}

static int count_bound(struct dbconn *c, const char *id, const char *statuses, int64_t *count) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT count(*) FROM hosts WHERE cluster_id = ?1 "
                        "AND (?2 = ',' OR instr(?2, ',' || status || ',') > 0)", &st);
        if (r < 0 || (r = BIND(st, id, statuses)) < 0 || (r = step_row(c, st)) < 0)
                return r;
        *count = r ? db_col_int64(st, 0) : 0;
        return 0;
}

static int sql_cluster_delete(struct store *s, const char *nid) {
        int64_t bound = 0;
        struct dbconn *c;
        int r;

        if ((r = write_begin(s, &c)) < 0)
                return r;
        if ((r = count_bound(c, nid, ",", &bound)) >= 0 && bound > 0)
                r = -EBUSY;
        if (r >= 0) {
                _cleanup_reset_ struct dbstmt *st = NULL;
                if ((r = stmt(c, "DELETE FROM clusters WHERE id = ?1", &st)) >= 0 &&
                    (r = BIND(st, nid)) >= 0)
                        r = step_changed(c, st);
        }
        return write_end(s, c, r);
}

int store_cluster_delete(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, cluster_delete, nid);
}

static int sql_cluster_count_hosts(struct store *s, const char *nid, uint32_t status_mask, int64_t *count) {
        char statuses[1024];
        int r;

        if ((r = sql_status_set(status_mask, statuses, sizeof statuses)) < 0)
                return r;
        struct dbconn *c = conn_get(s);
        if ((r = db_exec(c, "BEGIN")) >= 0) {
                if ((r = sql_cluster_exists(c, nid)) >= 0)
                        r = r ? count_bound(c, nid, statuses, count) : -ENOENT;
                int k = db_exec(c, "COMMIT");
                if (r >= 0)
                        r = k;
                if (!!db_in_transaction(c))
                        (void) db_exec(c, "ROLLBACK");
        }
        conn_put(s, c);
        return r;
}

int store_cluster_count_hosts(struct store *s, const char *id, uint32_t status_mask, int64_t *count) {
        char nid[UUID_STR_LEN];
        *count = 0;
        if (norm_id(id, nid) < 0 || !mask_ok(status_mask))
                return -EINVAL;
        return CALL(s, cluster_count_hosts, nid, status_mask, count);
}

int sql_cluster_exists(struct dbconn *c, const char *id) {
        _cleanup_reset_ struct dbstmt *st = NULL;
        int r = stmt(c, "SELECT 1 FROM clusters WHERE id = ?1", &st);
        if (r < 0 || (r = BIND(st, id)) < 0)
                return r;
        return step_row(c, st);
}

/* Why a conditional UPDATE of cluster `id` changed no row: -ESTALE if the
 * cluster is there (its status did not match), -ENOENT if it is not. */
static int cluster_not_updated(struct dbconn *c, const char *id) {
        int r = sql_cluster_exists(c, id);
        return r < 0 ? r : r ? -ESTALE : -ENOENT;
}

int store_cluster_reset(struct store *s, const char *id, const char *expect, const char *status,
                        const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move_checked(s, id, expect, status, status_info, hosts, n, false);
}

int store_cluster_cancel(struct store *s, const char *id, const char *expect, const char *status,
                         const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move_checked(s, id, expect, status, status_info, hosts, n, true);
}
