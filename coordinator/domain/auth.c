/* Token issue and check, and the scope rules (auth.h). */
#include "domain/auth.h"

#include <pthread.h>
#include <stdlib.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "jwt.h"
#include "protocol.h"
#include "uuid.h"

const char *admin_role_to_string(enum admin_role r) {
        switch (r) {
        case ROLE_INFRA_ADMIN: return "infra-admin";
        case ROLE_CLUSTER_CREATOR: return "cluster-creator";
        }
        return NULL;
}

int admin_role_from_string(const char *s, enum admin_role *out) {
        if (s && strcmp(s, "infra-admin") == 0)
                *out = ROLE_INFRA_ADMIN;
        else if (s && strcmp(s, "cluster-creator") == 0)
                *out = ROLE_CLUSTER_CREATOR;
        else
                return -EINVAL;
        return 0;
}

/* An infra-env's agent token (host_id NULL) or a host's own token. */
static int issue_machine(const struct crypto_key *k, const char *infra_env_id, const char *host_id, int64_t gen,
                         char **token) {
        if (!uuid_is_valid(infra_env_id) || (host_id && !uuid_is_valid(host_id)) || gen < 1)
                return -EINVAL;
        json_object *c = json_object_new_object();
        json_object_object_add(c, "sub", json_object_new_string(host_id ? "host" : "agent"));
        json_object_object_add(c, "infra_env_id", json_object_new_string(infra_env_id));
        if (host_id)
                json_object_object_add(c, "host_id", json_object_new_string(host_id));
        json_object_object_add(c, "gen", json_object_new_int64(gen));
        int r = jwt_sign(k, c, token);
        json_object_put(c);
        return r;
}

int auth_issue_agent(const struct crypto_key *k, const char *infra_env_id, int64_t gen, char **token) {
        return issue_machine(k, infra_env_id, NULL, gen, token);
}

int auth_issue_host(const struct crypto_key *k, const char *infra_env_id, const char *host_id, int64_t gen,
                    char **token) {
        if (!host_id)
                return -EINVAL;
        return issue_machine(k, infra_env_id, host_id, gen, token);
}

int auth_issue_admin(const struct crypto_key *k, enum admin_role role, const char *owner, const char *jti,
                     int64_t iat, int64_t exp, char **token) {
        if (!owner || !*owner || strlen(owner) >= sizeof ((struct principal *) 0)->owner || !admin_role_to_string(role) ||
            !jti || !uuid_is_valid(jti) || iat < 0 || exp <= iat || exp - iat > AUTH_MAX_TTL_S)
                return -EINVAL;
        json_object *c = json_object_new_object();
        json_object_object_add(c, "sub", json_object_new_string("admin"));
        json_object_object_add(c, "role", json_object_new_string(admin_role_to_string(role)));
        json_object_object_add(c, "owner", json_object_new_string(owner));
        json_object_object_add(c, "jti", json_object_new_string(jti));
        json_object_object_add(c, "iat", json_object_new_int64(iat));
        json_object_object_add(c, "exp", json_object_new_int64(exp));
        int r = jwt_sign(k, c, token);
        json_object_put(c);
        return r;
}

static const char *claim_str(json_object *c, const char *k) {
        json_object *v;
        if (!json_object_object_get_ex(c, k, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

/* auth_check(), and until when the answer holds (the token's "exp", if any). */
static int check_until(const struct crypto_key *k, const char *token, int64_t now, struct principal *out,
                       int64_t *until) {
        json_object *c = NULL, *v;
        int r = -EACCES;

        memset(out, 0, sizeof *out);
        *until = INT64_MAX;
        if (!token || jwt_verify(k, token, now, &c) < 0)
                return -EACCES;
        /* jwt_verify() took "exp" as a number; the cache must stop where it
         * does: the first whole second at or past it. */
        bool has_exp = json_object_object_get_ex(c, "exp", &v);
        if (has_exp && json_object_is_type(v, json_type_int))
                *until = json_object_get_int64(v);
        else if (has_exp && json_object_is_type(v, json_type_double)) {
                double e = json_object_get_double(v); /* finite, > now: jwt_verify() checked */
                if (e >= 9.2e18)
                        *until = INT64_MAX;
                else {
                        *until = (int64_t) e;
                        if ((double) *until < e)
                                (*until)++;
                }
        }
        const char *sub = claim_str(c, "sub");
        bool host = sub && strcmp(sub, "host") == 0;
        if (sub && (strcmp(sub, "agent") == 0 || host)) {
                const char *ie = claim_str(c, "infra_env_id"), *hid = host ? claim_str(c, "host_id") : NULL;
                if (ie && uuid_is_valid(ie) && (!host || (hid && uuid_is_valid(hid))) &&
                    json_object_object_get_ex(c, "gen", &v) && json_object_is_type(v, json_type_int) &&
                    json_object_get_int64(v) >= 1) {
                        out->kind = PRINCIPAL_AGENT;
                        snprintf(out->infra_env_id, sizeof out->infra_env_id, "%s", ie);
                        if (hid)
                                snprintf(out->host_id, sizeof out->host_id, "%s", hid);
                        out->generation = json_object_get_int64(v);
                        r = 0;
                }
        } else if (sub && strcmp(sub, "admin") == 0) {
                const char *owner = claim_str(c, "owner"), *jti = claim_str(c, "jti");
                /* No jti or no exp: a token from before they could expire
                 * or be revoked, refused. */
                if (owner && *owner && strlen(owner) < sizeof out->owner && jti && uuid_is_valid(jti) && has_exp &&
                    admin_role_from_string(claim_str(c, "role"), &out->role) == 0) {
                        out->kind = PRINCIPAL_ADMIN;
                        snprintf(out->owner, sizeof out->owner, "%s", owner);
                        snprintf(out->jti, sizeof out->jti, "%s", jti);
                        out->expires_at = *until;
                        r = 0;
                }
        }
        json_object_put(c);
        return r;
}

int auth_check(const struct crypto_key *k, const char *token, int64_t now, struct principal *out) {
        int64_t until;
        return check_until(k, token, now, out, &until);
}

struct auth_cache_entry {
        uint8_t key[CRYPTO_SHA256_LEN];
        int64_t until; /* 0: empty */
        struct principal p;
};

struct auth_cache {
        pthread_mutex_t lock;
        struct auth_cache_entry slot[AUTH_CACHE_SLOTS];
};

int auth_cache_new(struct auth_cache **out) {
        struct auth_cache *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        *out = c;
        return 0;
}

void auth_cache_free(struct auth_cache *c) {
        if (!c)
                return;
        pthread_mutex_destroy(&c->lock);
        free(c);
}

int auth_check_cached(struct auth_cache *c, const struct crypto_key *k, const char *token, int64_t now,
                      struct principal *out) {
        uint8_t key[CRYPTO_SHA256_LEN];
        int64_t until;
        if (!c || !token || strlen(token) > JWT_MAX_LEN || crypto_sha256(token, strlen(token), key) < 0)
                return auth_check(k, token, now, out);
        /* Direct-mapped: a collision only costs a verification. */
        struct auth_cache_entry *e = &c->slot[(((size_t) key[0] << 8) | key[1]) % AUTH_CACHE_SLOTS];
        pthread_mutex_lock(&c->lock);
        bool hit = e->until > now && memcmp(e->key, key, sizeof key) == 0;
        if (hit)
                *out = e->p;
        pthread_mutex_unlock(&c->lock);
        if (hit)
                return 0;
        int r = check_until(k, token, now, out, &until);
        if (r < 0)
                return r;
        if (until > now + AUTH_CACHE_TTL_S)
                until = now + AUTH_CACHE_TTL_S;
        pthread_mutex_lock(&c->lock);
        memcpy(e->key, key, sizeof key);
        e->until = until;
        e->p = *out;
        pthread_mutex_unlock(&c->lock);
        return 0;
}

void auth_cache_forget(struct auth_cache *c, const char *jti) {
        if (!c || !jti || !*jti)
                return;
        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; i < AUTH_CACHE_SLOTS; i++) {
                struct auth_cache_entry *e = &c->slot[i];
                if (e->until != 0 && e->p.kind == PRINCIPAL_ADMIN && strcasecmp(e->p.jti, jti) == 0)
                        memset(e, 0, sizeof *e);
        }
        pthread_mutex_unlock(&c->lock);
}

bool auth_is_admin(const struct principal *p) {
        return p->kind == PRINCIPAL_ADMIN;
}

bool auth_may_use_infra_env(const struct principal *p, const char *infra_env_id, const char *ie_owner) {
        if (p->kind == PRINCIPAL_AGENT)
                return infra_env_id && strcmp(p->infra_env_id, infra_env_id) == 0;
        if (p->role == ROLE_INFRA_ADMIN)
                return true;
        /* A cluster creator may look at infra-envs to find unbound hosts;
         * changing one stays with its owner. The handler narrows further. */
        return ie_owner && strcmp(ie_owner, p->owner) == 0;
}

bool auth_may_see_cluster(const struct principal *p, const char *cluster_owner) {
        if (p->kind != PRINCIPAL_ADMIN)
                return false;
        if (p->role == ROLE_INFRA_ADMIN)
                return true;
        return cluster_owner && strcmp(cluster_owner, p->owner) == 0;
}

const char *host_op_to_string(enum host_op op) {
        switch (op) {
        case HOST_OP_SHOW: return "show";
        case HOST_OP_SET: return "set";
        case HOST_OP_DELETE: return "delete";
        case HOST_OP_BIND: return "bind";
        case HOST_OP_UNBIND: return "unbind";
        case HOST_OP_INSTALL: return "install";
        case HOST_OP_ROTATE_TOKEN: return "rotate-token";
        case HOST_OP_GATHER_LOGS: return "gather-logs";
        case HOST_OP_LOGS: return "logs";
        case HOST_OP_RECLAIM: return "reclaim";
        case HOST_OP_AGENT_POLL: return "agent-poll";
        case HOST_OP_AGENT_RESULT: return "agent-result";
        case HOST_OP_AGENT_PROGRESS: return "agent-progress";
        case HOST_OP_AGENT_LOGS_UPLOAD: return "agent-logs-upload";
        case _HOST_OP_MAX: break;
        }
        return "?";
}

enum host_place auth_host_place(bool cluster_bound, int host_status) {
        if (!cluster_bound)
                return HOST_PLACE_POOL;
        if (host_status_is_installing((enum host_status) host_status) || host_status == HOST_INSTALLED ||
            host_status == HOST_RESETTING_PENDING_USER_ACTION)
                return HOST_PLACE_INSTALLED;
        return HOST_PLACE_BOUND;
}

static bool same_owner(const char *a, const char *b) {
        return a && b && strcmp(a, b) == 0;
}

static int agent_may(const struct principal *p, const struct host_scope *s, enum host_op op, const char **why) {
        if (p->host_id[0] && (!s->host_id || strcasecmp(p->host_id, s->host_id) != 0)) {
                *why = "this token belongs to another host";
                return -EPERM;
        }
        if (!host_op_is_agents(op)) {
                /* A host token may read its own host; the infra-env's token,
                 * which every ISO and PXE URL carries, reads no host. */
                if (op == HOST_OP_SHOW && p->host_id[0])
                        return 0;
                *why = "this call is for administrators, not agents";
                return -EPERM;
        }
        if (p->host_id[0])
                return 0;
        if (s->node_agent) {
                *why = "the host is installed: its node agent speaks with the host's own token, not the "
                       "infra-env's";
                return -EPERM;
        }
        return 0;
}

int auth_host_may(const struct principal *p, const struct host_scope *s, enum host_op op, const char **why) {
        *why = "";
        if (p->kind == PRINCIPAL_AGENT)
                return agent_may(p, s, op, why);
        if (host_op_is_agents(op)) {
                *why = "this call is for a host's agent; people's tokens are refused here";
                return -EPERM;
        }
        if (p->role == ROLE_INFRA_ADMIN)
                return 0;
        bool my_ie = same_owner(s->ie_owner, p->owner);
        bool my_cluster = s->place != HOST_PLACE_POOL && same_owner(s->cluster_owner, p->owner);
        switch (s->place) {
        case HOST_PLACE_POOL:
                /* Any creator picks hosts from any pool. */
                if (my_ie || op == HOST_OP_SHOW || op == HOST_OP_BIND)
                        return 0;
                *why = "the host is in another owner's infra-env and not bound to one of your clusters";
                return -EPERM;
        case HOST_PLACE_BOUND:
                if (my_ie || my_cluster)
                        return 0;
                break;
        case HOST_PLACE_INSTALLED:
                if (my_cluster)
                        return 0;
                if (my_ie) {
                        if (op == HOST_OP_SHOW)
                                return 0;
                        *why = "the host is installed into another owner's cluster: its token, logs and reclaim "
                               "are that owner's";
                        return -EPERM;
                }
                break;
        }
        *why = "host not found";
        return -ENOENT;
}
