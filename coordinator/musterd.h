/* musterd's process-wide state, shared by the API handlers, the monitor
 * and main. */
#pragma once
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "auth.h"
#include "config.h"
#include "controllers.h"
#include "crypto.h"
#include "http.h"
#include "store.h"

/* One configuration in force: immutable once published. A reload publishes
 * a new one and keeps the old ones (a request may still be reading them)
 * until musterd_stop() frees them all. */
struct musterd_config_snapshot {
        struct muster_config cfg;
        struct musterd_config_snapshot *older;
};

struct musterd {
        struct musterd_config_snapshot *_Atomic config; /* read through musterd_cfg() */
        struct store *store;
        struct crypto_key *key;
        struct auth_cache *auth_cache;   /* verified tokens */
        struct checkin_buffer *checkins; /* agents' check-ins, written in batches */
        struct ratelimit *registrations; /* new hosts per infra-env ([infraenv] register_*) */
        int64_t events_pruned_to;        /* events up to this id were counted (the monitor's) */
        struct http_server *http;
        struct controllers controllers;  /* the periodic passes, run by the monitor thread */
        pthread_t monitor;
        bool monitor_running;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool stopping;
};

/* Start everything: state dir, key, admin token, store, HTTP, monitor.
 * Logs what fails and returns -errno. */
int musterd_start(struct musterd *d, const struct muster_config *cfg);
void musterd_stop(struct musterd *d);

/* The configuration in force (SIGHUP may replace it: read it through this,
 * once per request, and never keep the pointer past the request). */
const struct muster_config *musterd_cfg(struct musterd *d);

/* Put `next` in force (SIGHUP). What cannot change while running (listen,
 * state_dir, store, the HTTP body limits max_body_bytes and
 * max_release_bytes, and max_connections_per_address) keeps its running
 * value, with a warning naming each
 * such key that differs. Call from one thread at a time (main). Returns how
 * many settings changed, or -ENOMEM (the old configuration stays). */
int musterd_reload(struct musterd *d, const struct muster_config *next);

/* The route table of the API. */
extern const struct http_route musterd_routes[];
extern const size_t musterd_n_routes;
bool musterd_auth(void *app, const struct http_route *route, struct http_request *req, struct http_response *resp);
void musterd_auth_free(void *auth);

/* Issue a person's token for ttl_s seconds and record it in the store
 * (rec gets the record; both the caller's to free). -EINVAL for a bad
 * owner or ttl, -EPERM when the owner name already has the other role. */
int api_issue_person_token(struct musterd *d, enum admin_role role, const char *owner, int64_t ttl_s, char **token,
                           struct store_token *rec);

/* One pass of the disconnect monitor (the "monitor" controller). Returns how many
 * hosts were marked disconnected, or failed (error) for not checking in
 * during their installation, or -errno. */
int musterd_monitor_pass(struct musterd *d);

/* One pass of event retention ([events] max_age, max_per_host): the
 * "events" controller. Returns how many events went, or -errno. */
int musterd_prune_events(struct musterd *d);

/* Record an event; failures are logged, never fatal. */
void musterd_event(struct musterd *d, enum event_severity sev, enum event_category cat, const char *infra_env_id,
                   const char *cluster_id, const char *host_id, const char *fmt, ...)
        __attribute__((format(printf, 7, 8)));
