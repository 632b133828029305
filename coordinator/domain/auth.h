/* Who is calling: the tokens musterd issues and what each may reach
 * (DESIGN §1, §3). Agent tokens belong to one infra-env and one token
 * generation; admin tokens carry a role and an owner. Pure apart from the
 * signature check: the caller compares the generation with the store. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "crypto.h"

enum principal_kind { PRINCIPAL_AGENT, PRINCIPAL_ADMIN };
enum admin_role { ROLE_INFRA_ADMIN, ROLE_CLUSTER_CREATOR };

struct principal {
        enum principal_kind kind;
        enum admin_role role;      /* admins only */
        char owner[128];           /* admins only */
        char jti[40];              /* admins only: the token's id (a UUID) */
        int64_t expires_at;        /* admins only: "exp" */
        char infra_env_id[40];     /* agents only */
        char host_id[40];          /* agents with a host token only: the one host it speaks for */
        int64_t generation;        /* agents only: the infra-env's token generation, or the host's */
};

/* The default and the longest life of a person's token. */
#define AUTH_DEFAULT_TTL_S (365 * 86400)
#define AUTH_MAX_TTL_S (10 * 365 * 86400)

/* Token claims: {"sub":"agent","infra_env_id":..,"gen":N} or
 * {"sub":"admin","role":"infra-admin"|"cluster-creator","owner":"..",
 *  "jti":"<uuid>","iat":N,"exp":N}. A person's token always expires and has
 * an id the store can revoke (store_token_*); the caller picks jti (a UUID)
 * and 0 < exp - iat <= AUTH_MAX_TTL_S. */
int auth_issue_agent(const struct crypto_key *k, const char *infra_env_id, int64_t gen, char **token);
/* A host's own token, given to its installed system's node agent:
 * {"sub":"host","infra_env_id":..,"host_id":..,"gen":N}, N the host's token
 * generation (rotated per host, untouched by the infra-env's rotation). It
 * checks as PRINCIPAL_AGENT with host_id set. */
int auth_issue_host(const struct crypto_key *k, const char *infra_env_id, const char *host_id, int64_t gen,
                    char **token);
int auth_issue_admin(const struct crypto_key *k, enum admin_role role, const char *owner, const char *jti,
                     int64_t iat, int64_t exp, char **token);

/* 0 and the principal, or -EACCES for any token that is not ours, is
 * malformed, expired or names an unknown role, and for a person's token
 * without "jti" or "exp" (issued before tokens could expire: issue a new one).
 * Revocation is the caller's: it looks jti up in the store. */
int auth_check(const struct crypto_key *k, const char *token, int64_t now, struct principal *out);

/* A cache of verified tokens, so that the ECDSA check (about 1 ms of CPU)
 * runs once per token and not once per request: every agent of an
 * infra-env polls with the same token. Entries are keyed by the token's
 * SHA-256, live AUTH_CACHE_TTL_S at most and never past the token's "exp"
 * (an integer or a fraction: a token is good while now < exp). Revocation
 * is unaffected: the caller still compares the generation (agents) or
 * looks the jti up (people) in the store on every request, and
 * auth_cache_forget() drops a revoked token at once. Thread-safe. */
#define AUTH_CACHE_SLOTS 4096
#define AUTH_CACHE_TTL_S 300
struct auth_cache;
int auth_cache_new(struct auth_cache **out);
void auth_cache_free(struct auth_cache *c);
/* auth_check() through the cache (c may be NULL: no cache). */
int auth_check_cached(struct auth_cache *c, const struct crypto_key *k, const char *token, int64_t now,
                      struct principal *out);
/* Drop every cached entry of the person's token with this jti. */
void auth_cache_forget(struct auth_cache *c, const char *jti);

const char *admin_role_to_string(enum admin_role r);
/* -EINVAL for an unknown name. */
int admin_role_from_string(const char *s, enum admin_role *out);

/* Scope rules. An agent reaches only hosts of its infra-env; an infra
 * admin reaches everything; a cluster creator reaches its own clusters,
 * unbound hosts, and hosts bound to its clusters. */
bool auth_may_use_infra_env(const struct principal *p, const char *infra_env_id, const char *ie_owner);
bool auth_may_see_cluster(const struct principal *p, const char *cluster_owner);
bool auth_is_admin(const struct principal *p);

/* Who may act on a host: the one rule every host route asks (DECISIONS.md D4).
 * People's calls and agents' calls are both here, so that a route cannot
 * forget a check. */
enum host_op {
        HOST_OP_SHOW,
        HOST_OP_SET,          /* PATCH: role, hostname, disk */
        HOST_OP_DELETE,
        HOST_OP_BIND,
        HOST_OP_UNBIND,
        HOST_OP_INSTALL,      /* day 2 */
        HOST_OP_ROTATE_TOKEN,
        HOST_OP_GATHER_LOGS,
        HOST_OP_LOGS,         /* download what the agent uploaded */
        HOST_OP_RECLAIM,      /* ask, or withdraw the ask */
        /* The host's agent (discovery or node): */
        HOST_OP_AGENT_POLL,   /* instructions: its check-in */
        HOST_OP_AGENT_RESULT, /* a step's result */
        HOST_OP_AGENT_PROGRESS,
        HOST_OP_AGENT_LOGS_UPLOAD,
        _HOST_OP_MAX,
};
const char *host_op_to_string(enum host_op op);
static inline bool host_op_is_agents(enum host_op op) {
        return op >= HOST_OP_AGENT_POLL;
}

/* Where a host stands as far as ownership goes. A pool host belongs to its
 * infra-env's owner (any cluster creator may still see and bind it); a bound
 * one also to its cluster's owner; once its cluster's install has begun
 * (installing, installed, reset pending) it is the cluster's: its token, logs
 * and reclaim are its cluster owner's and the infra-admin's alone. */
enum host_place { HOST_PLACE_POOL, HOST_PLACE_BOUND, HOST_PLACE_INSTALLED };

struct host_scope {
        const char *host_id;       /* the host the route names */
        const char *ie_owner;      /* its infra-env's owner (NULL: none) */
        const char *cluster_owner; /* bound: its cluster's owner (NULL: unknown) */
        enum host_place place;
        /* Its status is installed: its node agent runs and speaks with the
         * host's own token only. */
        bool node_agent;
};

/* The place of a host bound or not (cluster_bound) in that status. */
enum host_place auth_host_place(bool cluster_bound, int host_status);

/* 0 when p may do op on the host; else -EPERM (the caller may know the
 * host but not do this) or -ENOENT (not even its existence is told: a host
 * of another owner's cluster), with the reason in *why (static text). */
int auth_host_may(const struct principal *p, const struct host_scope *s, enum host_op op, const char **why);
