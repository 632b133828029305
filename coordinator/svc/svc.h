/* The service layer: what users and agents do (register, bind, install,
 * releases, capabilities, payloads, tokens) and the periodic passes' work,
 * over the store, with no HTTP. A service returns 0 or -errno (and its own
 * words in an err buffer where the user must read why); the API maps that
 * to a status in one table. Events go up through the sink, never by a call
 * into a higher layer. A test builds a struct svc on a real store and calls
 * services without a socket (tests/unit/test_svc.c). */
#pragma once
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "domain/auth.h"
#include "domain/config.h"
#include "crypto.h"
#include "growbuf.h"
#include "model.h"
#include "records.h"

struct store;

/* One configuration in force: immutable once published. A reload publishes
 * a new one and keeps the old ones (a request may still be reading them)
 * until svc_fini() frees them all. */
struct svc_config_snapshot {
        struct muster_config cfg;
        struct svc_config_snapshot *older;
};

/* Where events go after the store has them: the layer that wired the
 * services (the daemon: /metrics counts them) is told, without the services
 * knowing who listens. emit may be NULL. */
struct svc_event_sink {
        void (*emit)(void *ctx, const struct event *e);
        void *ctx;
};

struct svc {
        struct svc_config_snapshot *_Atomic config; /* read through svc_cfg() */
        struct store *store;
        struct crypto_key *key;           /* signs tokens and payloads */
        struct auth_cache *auth_cache;    /* verified tokens (revocation forgets one) */
        struct checkin_buffer *checkins;  /* agents' check-ins, written in batches */
        struct ratelimit *registrations;  /* new hosts per infra-env ([infraenv] register_*) */
        struct svc_catalogs *catalogs;    /* parsed operator catalogs (catalogs.h) */
        struct svc_addons *addons;        /* the add-on reconciler's lock (addons.h) */
        int64_t events_pruned_to;         /* events up to this id were counted (retention) */
        _Atomic uint64_t cleanup_stalled; /* operand cleanups said to stall (uninstall.h) */
        /* musterd's own CA (HTTPS, DECISIONS.md D2), which ISOs carry when [iso]
         * ca_file names none; "" when it serves plain HTTP or the
         * operator's certificate. Set before serving. */
        char tls_ca_file[4096];
        struct svc_event_sink sink;
        /* The services' clock, seconds since the epoch (NULL: time(NULL)):
         * what "now" is for check-ins, timeouts, token lifetimes and event
         * retention. A test moves it instead of waiting. */
        int64_t (*clock)(void *ctx);
        void *clock_ctx;
};

/* Set up s over an open store and key (both stay the caller's) with `cfg`
 * in force: the caches and buffers are made here. -ENOMEM. */
int svc_init(struct svc *s, struct store *store, struct crypto_key *key, const struct muster_config *cfg);
/* Free what svc_init made (every configuration snapshot included). */
void svc_fini(struct svc *s);

/* Now, by the services' clock. */
int64_t svc_now(struct svc *s);

/* The configuration in force (a reload may replace it: read it through
 * this, once per request, and never keep the pointer past the request). */
const struct muster_config *svc_cfg(struct svc *s);

/* Put `next` in force. What cannot change while running (listen,
 * state_dir, store, the HTTP body limits max_body_bytes and
 * max_release_bytes, and max_connections_per_address) keeps its running
 * value, with a warning naming each such key that differs. One caller at a
 * time. Returns how many settings changed, or -ENOMEM (the old
 * configuration stays). */
int svc_config_publish(struct svc *s, const struct muster_config *next);

/* Record an event in the store, then hand it to the sink; a failure is
 * logged, never fatal. */
void svc_event(struct svc *s, enum event_severity sev, enum event_category cat, const char *infra_env_id,
               const char *cluster_id, const char *host_id, const char *fmt, ...)
        __attribute__((format(printf, 7, 8)));
/* The event svc_event would record, made (the caller frees it with
 * event_free), for a store write that records it with what it writes; then
 * svc_event_emit hands it to the sink. */
void svc_event_make(struct event *e, enum event_severity sev, enum event_category cat, const char *infra_env_id,
                    const char *cluster_id, const char *host_id, const char *fmt, ...)
        __attribute__((format(printf, 7, 8)));
void svc_event_emit(struct svc *s, const struct event *e);

/* An audit event: a change a person's token (of `role`, for `owner`) made
 * through the API (`action`: the route's name; method and path) and the
 * status it was answered with; a warning when refused. Category audit:
 * only [events] audit_max_age prunes it. */
void svc_audit(struct svc *s, const char *role, const char *owner, const char *action, const char *method,
               const char *path, int status);

/* Issue a person's token for ttl_s seconds and record it in the store
 * (rec gets the record; both the caller's to free). -EINVAL for a bad
 * owner or ttl, -EPERM when the owner name already has the other role. */
int svc_token_issue(struct svc *s, enum admin_role role, const char *owner, int64_t ttl_s, char **token,
                    struct token_record *rec);

/* One pass of the disconnect monitor: hosts that went silent become
 * disconnected, or error while installing or waiting for their first boot
 * (their cluster with them). Returns how many hosts moved, or -errno. */
int svc_monitor_pass(struct svc *s);

/* One pass of event retention ([events] max_age, max_per_host). Returns how
 * many events went, or -errno. */
int svc_prune_events(struct svc *s);

/* Whether this musterd leads the passes one replica runs (store_leader):
 * 1, 0, or -errno. */
int svc_leader(struct svc *s);

/* Who `token` speaks for: its signature (cached), then its revocation in
 * the store. 0, -EACCES with err saying why it is refused ("the token is
 * not valid", "... was revoked", "... is not known to this coordinator"),
 * or a store error. */
int svc_principal(struct svc *sv, const char *token, struct principal *p, char *err, size_t errlen);
/* The same; for an infra-env's agent token, *ie (if not NULL) is the
 * infra-env as read for the check (else left initialised and empty), so that
 * the request need not read it again. */
int svc_principal_ie(struct svc *sv, const char *token, struct principal *p, struct infra_env *ie, char *err,
                     size_t errlen);

/* Whether the services can serve: the store answers and has room to write.
 * 0, or -errno with err saying why not. */
int svc_ready(struct svc *sv, char *err, size_t errlen);

/* What this musterd is: its store's schema version, the one this build
 * makes, and the back-ends the build has. 0, or -errno from the store. */
struct svc_version {
        int schema;       /* the open store's */
        int schema_built; /* this build's */
        bool postgres;    /* built with the PostgreSQL back-end */
};
int svc_version(struct svc *sv, struct svc_version *out);

/* The services' part of /metrics (hosts by status, store write latency)
 * as Prometheus text appended to out. 0, -E2BIG past max, -ENOMEM. */
int svc_metrics(struct svc *sv, struct growbuf *out, size_t max);

/* Write the buffered check-ins that are due (checkins.h: a host's time at
 * most once in CHECKINS_WRITE_EVERY flushes). Returns how many, or -errno. */
int svc_flush_checkins(struct svc *s);
/* Write every buffered check-in (at shutdown). */
int svc_flush_all_checkins(struct svc *s);
