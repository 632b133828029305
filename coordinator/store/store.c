/* The back-end independent half of the store: store_open picks a back-end
 * by the URL; every other call of store.h checks what it can without a
 * database, makes ids and times canonical, fills in what creation fills in
 * and forwards through the back-end's table (store-backend.h). What the
 * back-ends share with it is in records.c. */
#include "store.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "store-backend.h"

/* ---- back-ends ---------------------------------------------------------- */

/* A call of the back-end's table, made again while it answers -EAGAIN, if
 * the back-end asks for that (PostgreSQL: a serialization failure or a
 * deadlock aborted the transaction, which did nothing; running it again
 * sees what the other one wrote). Up to STORE_RETRIES times, after a short
 * pause that grows and is spread at random so that the two do not meet
 * again. */
#define STORE_RETRIES 10
#define CALL(s, op, ...)                                                                                  \
        ({                                                                                               \
                int r_;                                                                                  \
                unsigned n_ = 0;                                                                         \
                while ((r_ = (s)->ops->op((s), __VA_ARGS__)) == -EAGAIN && (s)->ops->retry_eagain &&      \
                       ++n_ < STORE_RETRIES)                                                             \
                        retry_pause(n_);                                                                 \
                r_;                                                                                      \
        })

static void retry_pause(unsigned n) {
        static _Thread_local unsigned seed;
        if (!seed)
                seed = (unsigned) time(NULL) ^ (unsigned) (uintptr_t) &seed;
        long us = (long) (rand_r(&seed) % (200u << (n < 6 ? n : 6)));
        struct timespec t = { .tv_sec = 0, .tv_nsec = us * 1000 };
        nanosleep(&t, NULL);
}

/* URL prefixes and their back-ends. A back-end this build does not have
 * (NULL) answers -EPROTONOSUPPORT, as does any other "scheme://"; anything
 * else is a path, for SQLite, the embedded default. */
static const struct {
        const char *prefix;
        const struct store_backend *backend;
} url_backends[] = {
        { "sqlite:", &store_sqlite_backend },
#ifdef MUSTER_WITH_POSTGRES
        { "postgres://", &store_pg_backend },
        { "postgresql://", &store_pg_backend },
#else
        { "postgres://", NULL },
        { "postgresql://", NULL },
#endif
};

int store_open(const char *url, struct store **out) {
        const struct store_backend *be = &store_sqlite_backend;
        size_t i, n = sizeof url_backends / sizeof *url_backends;

        *out = NULL;
        if (!url)
                return -EINVAL;
        for (i = 0; i < n; i++)
                if (strncmp(url, url_backends[i].prefix, strlen(url_backends[i].prefix)) == 0)
                        break;
        if (i < n)
                be = url_backends[i].backend;
        else if (strstr(url, "://"))
                be = NULL;
        if (!be)
                return -EPROTONOSUPPORT;
        int r = be->open(url, out);
        if (r < 0) {
                *out = NULL;
                return r;
        }
        (*out)->ops = be;
        return 0;
}

void store_close(struct store *s) {
        if (s)
                s->ops->close(s);
}

int store_schema_version(struct store *s) {
        return s->ops->schema_version(s);
}

int store_free_space(struct store *s, int64_t *bytes) {
        return CALL(s, free_space, bytes);
}

/* ---- write latency ------------------------------------------------------ */

int store_leader(struct store *s) {
        return s->ops->leader(s);
}

int store_copy(struct store *from, struct store *to, struct store_copy_report *rep, char *err, size_t errlen) {
        memset(rep, 0, sizeof *rep);
        if (err && errlen)
                err[0] = '\0';
        if (!from || !to || from == to)
                return -EINVAL;
        if (!from->ops->copy || from->ops->copy != to->ops->copy)
                return -EOPNOTSUPP;
        return from->ops->copy(from, to, rep, err, errlen);
}

void store_write_latency(struct store *s, struct store_latency *out) {
        s->ops->write_latency(s, out);
}

/* ---- argument checks ---------------------------------------------------- */

static int norm_id(const char *in, char out[UUID_STR_LEN]) {
        return uuid_normalize(in, out) < 0 ? -EINVAL : 0;
}

/* An optional id: NULL stays NULL (*p = NULL). */
static int norm_opt_id(const char *in, char out[UUID_STR_LEN], const char **p) {
        *p = NULL;
        if (!in)
                return 0;
        if (norm_id(in, out) < 0)
                return -EINVAL;
        *p = out;
        return 0;
}

/* Normalise an (infra_env_id, host_id) key. */
static int host_key(const char *ie, const char *id, char nie[UUID_STR_LEN], char nid[UUID_STR_LEN]) {
        return norm_id(ie, nie) < 0 || norm_id(id, nid) < 0 ? -EINVAL : 0;
}

/* The canonical key of one host in an array the caller handed in. */
struct key_pair {
        char infra_env_id[UUID_STR_LEN];
        char host_id[UUID_STR_LEN];
};

static bool too_long(const char *s, size_t max) {
        return s && strnlen(s, max + 1) > max;
}

/* A status set may name only statuses this build knows. */
static bool mask_ok(uint32_t mask) {
        return !(mask >> _HOST_STATUS_MAX);
}

/* pg (may be NULL) with its limit resolved: 0 is STORE_DEFAULT_LIMIT. */
static int page_check(const struct store_page *pg, struct store_page *out) {
        *out = pg ? *pg : (struct store_page) { 0 };
        if (out->limit > STORE_MAX_LIMIT)
                return -EINVAL;
        if (!out->limit)
                out->limit = STORE_DEFAULT_LIMIT;
        return 0;
}

static int set_owned(char **dst, const char *v) {
        char *n = strdup(v);
        if (!n)
                return -ENOMEM;
        free(*dst);
        *dst = n;
        return 0;
}

static bool progress_ok(const struct host_progress *p) {
        return !too_long(p->stage, MODEL_MAX_STRING) && !too_long(p->info, MODEL_MAX_MESSAGE) &&
               (p->percent == MODEL_UNSET || (p->percent >= 0 && p->percent <= 100));
}

/* ---- infra-envs -------------------------------------------------------- */

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
            (r = norm_opt_id(ie->cluster_id, cid, &cp)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = set_owned(&ie->id, id)) < 0 || (cp && (r = set_owned(&ie->cluster_id, cp)) < 0) ||
            (r = set_owned(&ie->created_at, now)) < 0 || (r = set_owned(&ie->updated_at, now)) < 0)
                return r;
        if (ie->token_generation == MODEL_UNSET || ie->token_generation < 1)
                ie->token_generation = 1;
        return CALL(s, infra_env_create, ie);
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

int store_infra_env_list(struct store *s, const char *owner, const struct store_page *pg,
                         struct infra_env_list *out) {
        struct store_page p;
        *out = (struct infra_env_list) { 0 };
        int r = page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, infra_env_list, owner, &p, out);
        if (r < 0)
                infra_env_list_free(out);
        return r;
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
        if ((fields & IE_F_CLUSTER_ID) && (r = norm_opt_id(ie->cluster_id, cid, &cp)) < 0)
                return r;
        struct infra_env n = *ie;
        n.id = id;
        if (fields & IE_F_CLUSTER_ID)
                n.cluster_id = cp ? cid : NULL;
        return CALL(s, infra_env_update, &n, fields);
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

int store_infra_env_bump_token(struct store *s, const char *id, int64_t *gen) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, infra_env_bump_token, nid, gen);
}

/* ---- hosts ------------------------------------------------------------- */

int store_host_register(struct store *s, const char *infra_env_id, const char *host_id,
                        const char *agent_version, struct host *out) {
        return store_host_register_capped(s, infra_env_id, host_id, agent_version, 0, out);
}

static int event_prepare(struct event *e);

int store_host_register_capped(struct store *s, const char *infra_env_id, const char *host_id,
                               const char *agent_version, int64_t max_hosts, struct host *out) {
        return store_host_register_event(s, infra_env_id, host_id, agent_version, max_hosts, NULL, out);
}

int store_host_register_event(struct store *s, const char *infra_env_id, const char *host_id,
                              const char *agent_version, int64_t max_hosts, struct event *on_new,
                              struct host *out) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        int r;
        if (out)
                host_init(out);
        if (host_key(infra_env_id, host_id, ie, id) < 0 || too_long(agent_version, MODEL_MAX_STRING))
                return -EINVAL;
        if (on_new && (r = event_prepare(on_new)) < 0)
                return r;
        r = CALL(s, host_register, ie, id, agent_version, max_hosts, on_new, out);
        if (r < 0 && out)
                host_free(out);
        return r;
}

static int host_get(struct store *s, const char *infra_env_id, const char *host_id, bool brief, struct host *out) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        host_init(out);
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        int r = CALL(s, host_get, ie, id, brief, out);
        if (r < 0)
                host_free(out);
        return r;
}

int store_host_get(struct store *s, const char *infra_env_id, const char *host_id, struct host *out) {
        return host_get(s, infra_env_id, host_id, false, out);
}

int store_host_get_brief(struct store *s, const char *infra_env_id, const char *host_id, struct host *out) {
        return host_get(s, infra_env_id, host_id, true, out);
}

int store_host_list(struct store *s, const struct store_host_filter *f, const struct store_page *pg,
                    struct host_list *out) {
        static const struct store_host_filter none = { 0 };
        char ie[UUID_STR_LEN], cid[UUID_STR_LEN], hid[UUID_STR_LEN], before[MODEL_TIME_LEN];
        struct store_host_filter n;
        struct store_page p;
        int r;

        *out = (struct host_list) { 0 };
        if (!f)
                f = &none;
        n = *f;
        if ((r = page_check(pg, &p)) < 0 || (r = norm_opt_id(f->infra_env_id, ie, &n.infra_env_id)) < 0 ||
            (r = norm_opt_id(f->cluster_id, cid, &n.cluster_id)) < 0 ||
            (r = norm_opt_id(f->host_id, hid, &n.host_id)) < 0)
                return r;
        if (!mask_ok(f->status_mask))
                return -EINVAL;
        if (f->checked_in_before) {
                if (model_time_normalize(f->checked_in_before, before) < 0)
                        return -EINVAL;
                n.checked_in_before = before;
        }
        if (too_long(f->hostname_contains, MODEL_MAX_STRING))
                return -EINVAL;
        r = CALL(s, host_list, &n, &p, out);
        if (r < 0)
                host_list_free(out);
        return r;
}

int store_host_update(struct store *s, const struct host *h, uint32_t fields) {
        const uint32_t allowed = HOST_F_ROLE | HOST_F_REQUESTED_HOSTNAME | HOST_F_INSTALLATION_DISK_ID;
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];

        if ((fields & ~allowed) || host_key(h->infra_env_id, h->id, ie, id) < 0 ||
            ((fields & HOST_F_ROLE) && !host_role_to_string(h->role)) ||
            too_long(h->requested_hostname, MODEL_MAX_STRING) ||
            too_long(h->installation_disk_id, MODEL_MAX_STRING))
                return -EINVAL;
        struct host n = *h;
        n.infra_env_id = ie;
        n.id = id;
        return CALL(s, host_update, &n, fields);
}

static bool status_valid(const struct store_host_status *st) {
        return host_status_to_string(st->status) && !too_long(st->status_info, MODEL_MAX_MESSAGE) &&
               st->n_v <= MODEL_MAX_VALIDATIONS;
}

int store_host_set_inventory_status(struct store *s, const char *infra_env_id, const char *host_id,
                                    const char *inventory_json, const struct inventory *parsed,
                                    const struct store_host_status *st) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        struct inventory own;
        struct inventory_facts facts;
        int r;

        if (host_key(infra_env_id, host_id, ie, id) < 0 || !inventory_json || (st && !status_valid(st)))
                return -EINVAL;
        for (size_t i = 0; st && i < st->n_events; i++)
                if ((r = event_prepare(&st->events[i])) < 0)
                        return r;
        if (too_long(inventory_json, MODEL_MAX_INVENTORY))
                return -E2BIG;
        if (!parsed) {
                if ((r = inventory_from_string(inventory_json, &own, NULL, 0)) < 0) {
                        inventory_free(&own);
                        return r;
                }
                parsed = &own;
        }
        inventory_facts_init(&facts);
        r = inventory_facts_from(parsed, &facts);
        if (parsed == &own)
                inventory_free(&own);
        if (r >= 0)
                r = CALL(s, host_set_inventory, ie, id, inventory_json, &facts, st);
        inventory_facts_free(&facts);
        return r;
}

int store_host_set_inventory(struct store *s, const char *infra_env_id, const char *host_id,
                             const char *inventory_json, const struct inventory *parsed) {
        int r = store_host_set_inventory_status(s, infra_env_id, host_id, inventory_json, parsed, NULL);
        return r < 0 ? r : 0;
}

int store_host_set_status(struct store *s, const char *infra_env_id, const char *host_id,
                          enum host_status status, const char *status_info,
                          const struct validation *v, size_t n_v, uint32_t expect_mask) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        struct store_host_status st = { .status = status, .status_info = status_info, .n_v = n_v };
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !status_valid(&st))
                return -EINVAL;
        return CALL(s, host_set_status, ie, id, status, status_info, v, n_v, expect_mask);
}

int store_host_set_progress(struct store *s, const char *infra_env_id, const char *host_id,
                            const struct host_progress *p) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !p || !progress_ok(p))
                return -EINVAL;
        return CALL(s, host_set_progress, ie, id, p);
}

int store_host_set_install_state(struct store *s, const char *infra_env_id, const char *host_id,
                                 enum host_status status, const char *status_info, const struct host_progress *p,
                                 int64_t applied_revision, uint32_t expect_mask) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !host_status_to_string(status) ||
            too_long(status_info, MODEL_MAX_MESSAGE) || (p && !progress_ok(p)))
                return -EINVAL;
        return CALL(s, host_set_install_state, ie, id, status, status_info, p, applied_revision, expect_mask);
}

int store_host_set_applied_revision(struct store *s, const char *infra_env_id, const char *host_id,
                                    int64_t applied_revision) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || applied_revision < 0)
                return -EINVAL;
        return CALL(s, host_set_applied_revision, ie, id, applied_revision);
}

int store_host_checkin_many(struct store *s, const struct store_checkin *v, size_t n) {
        return n == 0 ? 0 : CALL(s, host_checkin_many, v, n);
}

int store_host_checkin(struct store *s, const char *infra_env_id, const char *host_id, const char *at) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN], t[MODEL_TIME_LEN];
        int r;
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        if ((r = at ? model_time_normalize(at, t) : model_now_rfc3339(t)) < 0)
                return at ? -EINVAL : r;
        return CALL(s, host_checkin, ie, id, t);
}

int store_host_token_generation(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_token_generation, ie, id, gen);
}

int store_host_rotate_token(struct store *s, const char *infra_env_id, const char *host_id, int64_t *gen) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_rotate_token, ie, id, gen);
}

int store_host_bind(struct store *s, const char *infra_env_id, const char *host_id,
                    const char *cluster_id, enum host_status status, const char *status_info,
                    uint32_t expect_mask) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN], cid[UUID_STR_LEN];
        const char *cp;
        if (host_key(infra_env_id, host_id, ie, id) < 0 || norm_opt_id(cluster_id, cid, &cp) < 0 ||
            !host_status_to_string(status) || too_long(status_info, MODEL_MAX_MESSAGE))
                return -EINVAL;
        return CALL(s, host_bind, ie, id, cp, status, status_info, expect_mask);
}

int store_host_set_step_result(struct store *s, const char *infra_env_id, const char *host_id,
                               enum step_type type, const char *output_json) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !step_type_to_string(type) || !output_json)
                return -EINVAL;
        if (strlen(output_json) > STORE_MAX_STEP_RESULT)
                return -E2BIG;
        return CALL(s, host_set_step_result, ie, id, type, output_json);
}

int store_host_forget_step_result(struct store *s, const char *infra_env_id, const char *host_id,
                                  enum step_type type) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !step_type_to_string(type))
                return -EINVAL;
        return CALL(s, host_forget_step_result, ie, id, type);
}

int store_host_take_reregister(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_take_reregister, ie, id);
}

int store_host_delete(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_delete, ie, id);
}

int store_host_stop_pending(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_stop_pending, ie, id);
}

int store_host_clear_stop(struct store *s, const char *infra_env_id, const char *host_id) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_clear_stop, ie, id);
}

int store_host_actions(struct store *s, const char *infra_env_id, const char *host_id, unsigned set,
                       unsigned clear, unsigned mask, unsigned want) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        return CALL(s, host_actions, ie, id, set, clear, mask, want);
}

int store_host_logs_put(struct store *s, const char *infra_env_id, const char *host_id, const char *now,
                        const void *data, size_t len, unsigned keep) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        if (host_key(infra_env_id, host_id, ie, id) < 0 || !now || (!data && len) || keep == 0 || len > INT32_MAX)
                return -EINVAL;
        return CALL(s, host_logs_put, ie, id, now, data ? data : "", len, keep);
}

void store_host_logs_free(struct store_host_logs *l) {
        if (!l)
                return;
        free(l->created_at);
        free(l->data);
        *l = (struct store_host_logs) { 0 };
}

int store_host_logs_get(struct store *s, const char *infra_env_id, const char *host_id, struct store_host_logs *out) {
        char ie[UUID_STR_LEN], id[UUID_STR_LEN];
        *out = (struct store_host_logs) { 0 };
        if (host_key(infra_env_id, host_id, ie, id) < 0)
                return -EINVAL;
        int r = CALL(s, host_logs_get, ie, id, out);
        if (r < 0)
                store_host_logs_free(out);
        return r;
}

int store_host_list_stale(struct store *s, const char *before, uint32_t status_mask, const char *stage,
                          bool stage_match, unsigned limit, struct host_list *out) {
        char t[MODEL_TIME_LEN];
        *out = (struct host_list) { 0 };
        if (!before || model_time_normalize(before, t) < 0 || limit > STORE_MAX_LIMIT || !mask_ok(status_mask))
                return -EINVAL;
        int r = CALL(s, host_list_stale, t, status_mask, stage, stage_match, limit ? limit : STORE_DEFAULT_LIMIT,
                                        out);
        if (r < 0)
                host_list_free(out);
        return r < 0 ? r : 0;
}

/* The checks of store_host_mark_* that need no copy: `before` canonical in t. */
static int mark_check(const struct host *hosts, size_t n, const char *before, uint32_t status_mask,
                      const char *status_info, char t[MODEL_TIME_LEN]) {
        if (!before || model_time_normalize(before, t) < 0 || too_long(status_info, MODEL_MAX_MESSAGE) ||
            (n && !hosts) || !mask_ok(status_mask))
                return -EINVAL;
        return 0;
}

/* A copy of hosts (n > 0) with canonical keys for the back-end; the caller
 * frees *copy and *keys. */
static int mark_copy(const struct host *hosts, size_t n, struct host **copy, struct key_pair **keys) {
        if (!(*copy = calloc(n, sizeof **copy)) || !(*keys = calloc(n, sizeof **keys)))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct key_pair *k = &(*keys)[i];
                if (host_key(hosts[i].infra_env_id, hosts[i].id, k->infra_env_id, k->host_id) < 0)
                        return -EINVAL;
                (*copy)[i] = hosts[i];
                (*copy)[i].infra_env_id = k->infra_env_id;
                (*copy)[i].id = k->host_id;
        }
        return 0;
}

int store_host_mark_disconnected(struct store *s, const struct host *hosts, size_t n, const char *before,
                                 uint32_t status_mask, const char *status_info, bool *changed) {
        char t[MODEL_TIME_LEN];
        _cleanup_free_ struct host *copy = NULL;
        _cleanup_free_ struct key_pair *keys = NULL;
        int r;

        if ((r = mark_check(hosts, n, before, status_mask, status_info, t)) < 0)
                return r;
        for (size_t i = 0; changed && i < n; i++)
                changed[i] = false;
        if (n == 0)
                return 0;
        if ((r = mark_copy(hosts, n, &copy, &keys)) >= 0)
                r = CALL(s, host_mark_disconnected, copy, n, t, status_mask, status_info, changed);
        if (r < 0 && changed)
                for (size_t i = 0; i < n; i++)
                        changed[i] = false;
        return r;
}

int store_host_mark_stale(struct store *s, const struct host *hosts, size_t n, const char *before,
                          uint32_t status_mask, enum host_status to, const char *status_info, bool *changed) {
        char t[MODEL_TIME_LEN];
        _cleanup_free_ struct host *copy = NULL;
        _cleanup_free_ struct key_pair *keys = NULL;
        int r;

        if (!host_status_to_string(to))
                return -EINVAL;
        if ((r = mark_check(hosts, n, before, status_mask, status_info, t)) < 0)
                return r;
        for (size_t i = 0; changed && i < n; i++)
                changed[i] = false;
        if (n == 0)
                return 0;
        if ((r = mark_copy(hosts, n, &copy, &keys)) >= 0)
                r = CALL(s, host_mark_stale, copy, n, t, status_mask, to, status_info, changed);
        if (r < 0 && changed)
                for (size_t i = 0; i < n; i++)
                        changed[i] = false;
        return r;
}

int store_host_count_by_status(struct store *s, int64_t counts[_HOST_STATUS_MAX]) {
        for (int i = 0; i < _HOST_STATUS_MAX; i++)
                counts[i] = 0;
        return CALL(s, host_count_by_status, counts);
}

/* ---- clusters ---------------------------------------------------------- */

/* What a cluster without them has (model.h); the back-end is handed these
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
        if ((r = set_owned(&cl->id, id)) < 0 || (r = set_owned(&cl->created_at, now)) < 0 ||
            (r = set_owned(&cl->updated_at, now)) < 0 ||
            (!cl->status && (r = set_owned(&cl->status, "pending-for-input")) < 0))
                return r;
        /* The caller's struct keeps NULL for these, as it always has. */
        struct cluster n = *cl;
        if (!n.feature_set)
                n.feature_set = default_feature_set;
        if (!n.cpu_architecture)
                n.cpu_architecture = default_cpu_architecture;
        return CALL(s, cluster_create, &n);
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

int store_cluster_list(struct store *s, const char *owner, const struct store_page *pg,
                       struct cluster_list *out) {
        struct store_page p;
        *out = (struct cluster_list) { 0 };
        int r = page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, cluster_list, owner, &p, out);
        if (r < 0)
                cluster_list_free(out);
        return r;
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

int store_cluster_set_status(struct store *s, const char *id, const char *status,
                             const char *status_info, const struct validation *v, size_t n_v) {
        return store_cluster_set_status_from(s, id, NULL, status, status_info, v, n_v);
}

int store_cluster_set_status_from(struct store *s, const char *id, const char *expect, const char *status,
                                  const char *status_info, const struct validation *v, size_t n_v) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0 || !status || too_long(status, MODEL_MAX_STRING) ||
            too_long(status_info, MODEL_MAX_MESSAGE) || n_v > MODEL_MAX_VALIDATIONS)
                return -EINVAL;
        return CALL(s, cluster_set_status, nid, expect, status, status_info, v, n_v);
}

/* store_cluster_reset (stop false) and store_cluster_cancel (stop true):
 * the hosts' moves go to the back-end with canonical keys. */
static int cluster_move(struct store *s, const char *id, const char *expect, const char *status,
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

int store_cluster_reset(struct store *s, const char *id, const char *expect, const char *status,
                        const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move(s, id, expect, status, status_info, hosts, n, false);
}

int store_cluster_cancel(struct store *s, const char *id, const char *expect, const char *status,
                         const char *status_info, const struct store_host_reset *hosts, size_t n) {
        return cluster_move(s, id, expect, status, status_info, hosts, n, true);
}

static bool payload_ok(const struct store_payload *p) {
        return p->revision >= 1 && p->digest && p->signature && p->canonical && p->release_version &&
               p->canonical_len <= INT32_MAX && p->manifest_count >= 0 && !too_long(p->digest, 128) &&
               !too_long(p->signature, 256) && !too_long(p->release_version, MODEL_MAX_STRING);
}

int store_cluster_start_install(struct store *s, const char *id, const char *status_info,
                                enum host_status host_to, const char *host_info,
                                const struct store_host_role *roles, size_t n_roles,
                                const struct store_payload *payload) {
        char nid[UUID_STR_LEN];
        _cleanup_free_ struct store_host_role *copy = NULL;
        _cleanup_free_ struct key_pair *keys = NULL;

        if (norm_id(id, nid) < 0 || !host_status_to_string(host_to) || too_long(status_info, MODEL_MAX_MESSAGE) ||
            too_long(host_info, MODEL_MAX_MESSAGE) || (n_roles && !roles) || (payload && !payload_ok(payload)))
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

int store_cluster_delete(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, cluster_delete, nid);
}

int store_cluster_count_hosts(struct store *s, const char *id, uint32_t status_mask, int64_t *count) {
        char nid[UUID_STR_LEN];
        *count = 0;
        if (norm_id(id, nid) < 0 || !mask_ok(status_mask))
                return -EINVAL;
        return CALL(s, cluster_count_hosts, nid, status_mask, count);
}

/* ---- releases ---------------------------------------------------------- */

static bool release_version_ok(const char *v) {
        return v && *v && !too_long(v, RELEASE_MAX_VERSION);
}

static bool manifest_ok(const struct manifest *m) {
        return m->file && m->path && m->api_version && m->group && m->version && m->kind && m->name && m->content &&
               m->content_len <= INT32_MAX;
}

int store_release_import(struct store *s, const struct release_info *info, const struct manifest_list *ms,
                         struct store_release *out) {
        if (out)
                store_release_init(out);
        if (!info || !release_version_ok(info->version) || !ms || ms->n > STORE_MAX_RELEASE_MANIFESTS)
                return -EINVAL;
        for (size_t i = 0; i < ms->n; i++)
                if (!manifest_ok(&ms->v[i]))
                        return -EINVAL;
        int r = CALL(s, release_import, info, ms, out);
        if (r < 0 && out)
                store_release_free(out);
        return r;
}

int store_release_get(struct store *s, const char *version, struct store_release *out) {
        store_release_init(out);
        if (!release_version_ok(version))
                return -EINVAL;
        int r = CALL(s, release_get, version, out);
        if (r < 0)
                store_release_free(out);
        return r;
}

int store_release_list(struct store *s, const struct store_page *pg, struct store_release_list *out) {
        struct store_page p;
        *out = (struct store_release_list) { 0 };
        int r = page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, release_list, &p, out);
        if (r < 0)
                store_release_list_free(out);
        return r;
}

int store_release_manifests(struct store *s, const char *version, struct manifest_list *out) {
        if (!release_version_ok(version) || !out)
                return -EINVAL;
        return CALL(s, release_manifests, version, out);
}

int store_release_delete(struct store *s, const char *version) {
        if (!release_version_ok(version))
                return -EINVAL;
        return CALL(s, release_delete, version);
}

/* ---- payload revisions -------------------------------------------------- */

int store_cluster_add_payload(struct store *s, struct store_payload *p) {
        char nid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!p || norm_id(p->cluster_id, nid) < 0 || !payload_ok(p))
                return -EINVAL;
        if (p->created_at ? model_time_normalize(p->created_at, now) < 0 : model_now_rfc3339(now) < 0)
                return -EINVAL;
        if ((r = set_owned(&p->created_at, now)) < 0)
                return r;
        struct store_payload n = *p;
        n.cluster_id = nid;
        return CALL(s, cluster_add_payload, &n);
}

int store_payload_get(struct store *s, const char *cluster_id, int64_t revision, struct store_payload *out) {
        char nid[UUID_STR_LEN];
        store_payload_init(out);
        if (norm_id(cluster_id, nid) < 0 || revision < 1)
                return -EINVAL;
        int r = CALL(s, payload_get, nid, revision, out);
        if (r < 0)
                store_payload_free(out);
        return r;
}

int store_payload_list(struct store *s, const char *cluster_id, struct store_payload_list *out) {
        char nid[UUID_STR_LEN];
        *out = (struct store_payload_list) { 0 };
        if (norm_id(cluster_id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, payload_list, nid, out);
        if (r < 0)
                store_payload_list_free(out);
        return r < 0 ? r : 0;
}

/* ---- people's tokens ----------------------------------------------------- */

static bool token_role_ok(const char *role) {
        return role && (strcmp(role, "infra-admin") == 0 || strcmp(role, "cluster-creator") == 0);
}

int store_token_add(struct store *s, const struct store_token *t) {
        char id[UUID_STR_LEN], created[MODEL_TIME_LEN], expires[MODEL_TIME_LEN];

        if (!t || norm_id(t->id, id) < 0 || !token_role_ok(t->role) || !t->owner || !*t->owner ||
            too_long(t->owner, MODEL_MAX_STRING) || !t->created_at || !t->expires_at ||
            model_time_normalize(t->created_at, created) < 0 || model_time_normalize(t->expires_at, expires) < 0)
                return -EINVAL;
        struct store_token n = *t;
        n.id = id;
        n.created_at = created;
        n.expires_at = expires;
        return CALL(s, token_add, &n);
}

int store_token_get(struct store *s, const char *id, struct store_token *out) {
        char nid[UUID_STR_LEN];
        store_token_init(out);
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, token_get, nid, out);
        if (r < 0)
                store_token_free(out);
        return r;
}

int store_token_list(struct store *s, const char *owner, const struct store_page *pg,
                     struct store_token_list *out) {
        struct store_page p;
        *out = (struct store_token_list) { 0 };
        int r = page_check(pg, &p);
        if (r >= 0)
                r = CALL(s, token_list, owner, &p, out);
        if (r < 0)
                store_token_list_free(out);
        return r;
}

int store_token_revoke(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, token_revoke, nid);
}

int store_token_check(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, token_check, nid);
}

/* ---- operator catalogs --------------------------------------------------- */

static bool catalog_name_ok(const char *name) {
        return name && *name && !too_long(name, STORE_MAX_CATALOG_NAME);
}

int store_catalog_create(struct store *s, struct store_catalog *c) {
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
        if ((r = set_owned(&c->id, id)) < 0 || (r = set_owned(&c->created_at, now)) < 0)
                return r;
        return CALL(s, catalog_create, c);
}

int store_catalog_get(struct store *s, const char *id, struct store_catalog *out) {
        char nid[UUID_STR_LEN];
        store_catalog_init(out);
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        int r = CALL(s, catalog_get, nid, NULL, out);
        if (r < 0)
                store_catalog_free(out);
        return r;
}

int store_catalog_get_by_name(struct store *s, const char *name, struct store_catalog *out) {
        store_catalog_init(out);
        if (!catalog_name_ok(name))
                return -EINVAL;
        int r = CALL(s, catalog_get, NULL, name, out);
        if (r < 0)
                store_catalog_free(out);
        return r;
}

int store_catalog_list(struct store *s, struct store_catalog_list *out) {
        *out = (struct store_catalog_list) { 0 };
        int r = CALL(s, catalog_list, out);
        if (r < 0)
                store_catalog_list_free(out);
        return r < 0 ? r : 0;
}

int store_catalog_delete(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, catalog_delete, nid);
}

/* ---- operator subscriptions ---------------------------------------------- */

static bool opt_ok(const char *v) {
        return !v || (*v && !too_long(v, MODEL_MAX_STRING));
}

int store_subscription_create(struct store *s, struct store_subscription *sub) {
        char id[UUID_STR_LEN], cid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!sub || !sub->package || !*sub->package || too_long(sub->package, STORE_MAX_CATALOG_NAME) ||
            !sub->owner || !*sub->owner || too_long(sub->owner, MODEL_MAX_STRING) || !opt_ok(sub->channel) ||
            !opt_ok(sub->catalog) || !opt_ok(sub->version_range) || norm_id(sub->cluster_id, cid) < 0)
                return -EINVAL;
        if ((r = model_new_id(id)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = set_owned(&sub->id, id)) < 0 || (r = set_owned(&sub->created_at, now)) < 0 ||
            (r = set_owned(&sub->cluster_id, cid)) < 0)
                return r;
        return CALL(s, subscription_create, sub);
}

int store_subscription_list(struct store *s, const char *cluster_id, struct store_subscription_list *out) {
        char cid[UUID_STR_LEN];
        *out = (struct store_subscription_list) { 0 };
        if (cluster_id && norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        int r = CALL(s, subscription_list, cluster_id ? cid : NULL, out);
        if (r < 0)
                store_subscription_list_free(out);
        return r < 0 ? r : 0;
}

int store_subscription_delete(struct store *s, const char *cluster_id, const char *package) {
        char cid[UUID_STR_LEN];
        if (norm_id(cluster_id, cid) < 0 || !package || !*package || too_long(package, STORE_MAX_CATALOG_NAME))
                return -EINVAL;
        return CALL(s, subscription_delete, cid, package);
}

/* ---- add-ons --------------------------------------------------------------- */

static bool text_ok(const char *v, size_t max) {
        return v && *v && !too_long(v, max);
}

int store_addon_proxy_create(struct store *s, struct store_addon_proxy *p) {
        char id[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;

        if (!p || !text_ok(p->name, STORE_MAX_CATALOG_NAME) || !text_ok(p->owner, MODEL_MAX_STRING) ||
            !text_ok(p->spec, STORE_MAX_ADDON_SPEC))
                return -EINVAL;
        if ((r = model_new_id(id)) < 0 || (r = model_now_rfc3339(now)) < 0)
                return r;
        if ((r = set_owned(&p->id, id)) < 0 || (r = set_owned(&p->created_at, now)) < 0 ||
            (r = set_owned(&p->updated_at, now)) < 0)
                return r;
        p->generation = 1;
        return CALL(s, addon_proxy_create, p);
}

int store_addon_proxy_get(struct store *s, const char *key, struct store_addon_proxy *out) {
        char nid[UUID_STR_LEN];
        int r;
        store_addon_proxy_init(out);
        if (!key || !*key)
                return -EINVAL;
        if (norm_id(key, nid) == 0)
                r = CALL(s, addon_proxy_get, nid, NULL, out);
        else if (too_long(key, STORE_MAX_CATALOG_NAME))
                return -ENOENT;
        else
                r = CALL(s, addon_proxy_get, NULL, key, out);
        if (r < 0)
                store_addon_proxy_free(out);
        return r;
}

int store_addon_proxy_list(struct store *s, struct store_addon_proxy_list *out) {
        *out = (struct store_addon_proxy_list) { 0 };
        int r = CALL(s, addon_proxy_list, out);
        if (r < 0)
                store_addon_proxy_list_free(out);
        return r < 0 ? r : 0;
}

int store_addon_proxy_update(struct store *s, struct store_addon_proxy *p, int64_t expect_generation) {
        char nid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;
        if (!p || norm_id(p->id, nid) < 0 || !text_ok(p->spec, STORE_MAX_ADDON_SPEC) ||
            (p->prev_spec && too_long(p->prev_spec, STORE_MAX_ADDON_SPEC)) ||
            (p->conditions && too_long(p->conditions, STORE_MAX_ADDON_SPEC)) || p->generation < 1)
                return -EINVAL;
        if ((r = model_now_rfc3339(now)) < 0 || (r = set_owned(&p->updated_at, now)) < 0 ||
            (r = set_owned(&p->id, nid)) < 0)
                return r;
        return CALL(s, addon_proxy_update, p, expect_generation);
}

int store_addon_proxy_delete(struct store *s, const char *id) {
        char nid[UUID_STR_LEN];
        if (norm_id(id, nid) < 0)
                return -EINVAL;
        return CALL(s, addon_proxy_delete, nid);
}

int store_addon_release_list(struct store *s, const char *proxy_id, const char *cluster_id,
                             const struct store_page *pg, struct store_addon_release_list *out) {
        char pid[UUID_STR_LEN], cid[UUID_STR_LEN];
        *out = (struct store_addon_release_list) { 0 };
        if ((proxy_id && norm_id(proxy_id, pid) < 0) || (cluster_id && norm_id(cluster_id, cid) < 0) ||
            (pg && pg->limit > STORE_MAX_LIMIT))
                return -EINVAL;
        int r = CALL(s, addon_release_list, proxy_id ? pid : NULL, cluster_id ? cid : NULL, pg, out);
        if (r < 0)
                store_addon_release_list_free(out);
        return r < 0 ? r : 0;
}

int store_addon_release_put(struct store *s, struct store_addon_release *r) {
        char pid[UUID_STR_LEN], cid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int e;
        if (!r || norm_id(r->proxy_id, pid) < 0 || norm_id(r->cluster_id, cid) < 0 ||
            !text_ok(r->content, STORE_MAX_ADDON_CONTENT) ||
            (r->prev_content && too_long(r->prev_content, STORE_MAX_ADDON_CONTENT)) || !text_ok(r->status, 32) ||
            (r->message && too_long(r->message, MODEL_MAX_STRING)) || r->revision < 1)
                return -EINVAL;
        if ((e = model_now_rfc3339(now)) < 0 || (e = set_owned(&r->updated_at, now)) < 0 ||
            (!r->created_at && (e = set_owned(&r->created_at, now)) < 0) || (e = set_owned(&r->proxy_id, pid)) < 0 ||
            (e = set_owned(&r->cluster_id, cid)) < 0)
                return e;
        return CALL(s, addon_release_put, r);
}

int store_addon_release_delete(struct store *s, const char *proxy_id, const char *cluster_id) {
        char pid[UUID_STR_LEN], cid[UUID_STR_LEN];
        if (norm_id(proxy_id, pid) < 0 || norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        return CALL(s, addon_release_delete, pid, cid);
}

int store_host_found_set(struct store *s, const char *infra_env_id, const char *host_id, const char *found_json) {
        char ie[UUID_STR_LEN], h[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;
        if (norm_id(infra_env_id, ie) < 0 || norm_id(host_id, h) < 0 || !text_ok(found_json, STORE_MAX_FOUND))
                return -EINVAL;
        if ((r = model_now_rfc3339(now)) < 0)
                return r;
        return CALL(s, host_found_set, ie, h, found_json, now);
}

int store_host_found_list(struct store *s, const char *cluster_id, struct store_host_found_list *out) {
        char cid[UUID_STR_LEN];
        *out = (struct store_host_found_list) { 0 };
        if (cluster_id && norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        int r = CALL(s, host_found_list, cluster_id ? cid : NULL, out);
        if (r < 0)
                store_host_found_list_free(out);
        return r < 0 ? r : 0;
}

int store_cluster_host_counts(struct store *s, struct store_cluster_count **out, size_t *n) {
        *out = NULL;
        *n = 0;
        int r = CALL(s, cluster_host_counts, out, n);
        if (r < 0) {
                free(*out);
                *out = NULL;
                *n = 0;
        }
        return r < 0 ? r : 0;
}

int store_subscription_set_cleanup(struct store *s, const char *cluster_id, const char *package, bool enabled) {
        char cid[UUID_STR_LEN];
        if (norm_id(cluster_id, cid) < 0 || !package || !*package || too_long(package, STORE_MAX_CATALOG_NAME))
                return -EINVAL;
        return CALL(s, subscription_set_cleanup, cid, package, enabled);
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

int store_subscription_list_uninstalling(struct store *s, struct store_subscription_list *out) {
        *out = (struct store_subscription_list) { 0 };
        int r = CALL(s, subscription_list_uninstalling, out);
        if (r < 0)
                store_subscription_list_free(out);
        return r < 0 ? r : 0;
}

/* ---- operands -------------------------------------------------------------- */

int store_operand_put(struct store *s, struct store_operand *v, size_t n) {
        char cid[UUID_STR_LEN], now[MODEL_TIME_LEN];
        int r;
        if (n == 0)
                return 0;
        if ((r = model_now_rfc3339(now)) < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                struct store_operand *o = &v[i];
                char id[UUID_STR_LEN];
                if (norm_id(o->cluster_id, cid) < 0 || !text_ok(o->package, STORE_MAX_CATALOG_NAME) || !o->group ||
                    too_long(o->group, MODEL_MAX_STRING) || !text_ok(o->version, MODEL_MAX_STRING) ||
                    !text_ok(o->kind, MODEL_MAX_STRING) || (o->namespace && too_long(o->namespace, MODEL_MAX_STRING)) ||
                    !text_ok(o->name, MODEL_MAX_STRING) || !text_ok(o->file, MODEL_MAX_STRING) ||
                    !text_ok(o->content, STORE_MAX_OPERAND_BYTES) || !text_ok(o->owner, MODEL_MAX_STRING))
                        return -EINVAL;
                if ((r = model_new_id(id)) < 0 || (r = set_owned(&o->id, id)) < 0 ||
                    (r = set_owned(&o->created_at, now)) < 0 || (r = set_owned(&o->cluster_id, cid)) < 0)
                        return r;
        }
        return CALL(s, operand_put, v, n);
}

int store_operand_list(struct store *s, const char *cluster_id, struct store_operand_list *out) {
        char cid[UUID_STR_LEN];
        *out = (struct store_operand_list) { 0 };
        if (norm_id(cluster_id, cid) < 0)
                return -EINVAL;
        int r = CALL(s, operand_list, cid, out);
        if (r < 0)
                store_operand_list_free(out);
        return r < 0 ? r : 0;
}

int store_operand_delete(struct store *s, const char *cluster_id, const char *id) {
        char cid[UUID_STR_LEN], oid[UUID_STR_LEN];
        if (norm_id(cluster_id, cid) < 0 || norm_id(id, oid) < 0)
                return -EINVAL;
        return CALL(s, operand_delete, cid, oid);
}

/* ---- events ------------------------------------------------------------ */

/* Checks e and normalises its ids and time (now when it has none). */
static int event_prepare(struct event *e) {
        char now[MODEL_TIME_LEN], ie[UUID_STR_LEN], cid[UUID_STR_LEN], hid[UUID_STR_LEN];
        const char *iep, *cidp, *hidp;
        int r;

        if (!event_severity_to_string(e->severity) || !event_category_to_string(e->category) ||
            !e->message || too_long(e->message, MODEL_MAX_MESSAGE) ||
            norm_opt_id(e->infra_env_id, ie, &iep) < 0 || norm_opt_id(e->cluster_id, cid, &cidp) < 0 ||
            norm_opt_id(e->host_id, hid, &hidp) < 0)
                return -EINVAL;
        if ((r = e->time ? model_time_normalize(e->time, now) : model_now_rfc3339(now)) < 0)
                return e->time ? -EINVAL : r;
        if ((r = set_owned(&e->time, now)) < 0 || (iep && (r = set_owned(&e->infra_env_id, iep)) < 0) ||
            (cidp && (r = set_owned(&e->cluster_id, cidp)) < 0) ||
            (hidp && (r = set_owned(&e->host_id, hidp)) < 0))
                return r;
        return 0;
}

static int event_append(struct store *s, struct event *e, bool wait) {
        int r = event_prepare(e);
        return r < 0 ? r : CALL(s, event_append, e, wait);
}

int store_event_append(struct store *s, struct event *e) {
        return event_append(s, e, true);
}

int store_event_append_unwaited(struct store *s, struct event *e) {
        return event_append(s, e, false);
}

int store_event_list(struct store *s, const struct store_event_filter *f, struct event_list *out) {
        static const struct store_event_filter none = { 0 };
        char ie[UUID_STR_LEN], cid[UUID_STR_LEN], hid[UUID_STR_LEN];
        struct store_event_filter n;

        *out = (struct event_list) { 0 };
        if (!f)
                f = &none;
        n = *f;
        if (f->limit > STORE_MAX_LIMIT || f->min_severity < 0 || f->min_severity >= _EVENT_SEVERITY_MAX ||
            f->since_id < 0 || norm_opt_id(f->infra_env_id, ie, &n.infra_env_id) < 0 ||
            norm_opt_id(f->cluster_id, cid, &n.cluster_id) < 0 || norm_opt_id(f->host_id, hid, &n.host_id) < 0)
                return -EINVAL;
        if (!n.limit)
                n.limit = STORE_DEFAULT_LIMIT;
        int r = CALL(s, event_list, &n, out);
        if (r < 0)
                event_list_free(out);
        return r < 0 ? r : 0;
}

int store_event_prune(struct store *s, const char *before, const char *audit_before, int64_t max_per_host,
                      int64_t *mark) {
        char t[MODEL_TIME_LEN], a[MODEL_TIME_LEN];
        if ((before && model_time_normalize(before, t) < 0) ||
            (audit_before && model_time_normalize(audit_before, a) < 0) || max_per_host < 0)
                return -EINVAL;
        return CALL(s, event_prune, before ? t : NULL, audit_before ? a : NULL, max_per_host, mark);
}
