/* musterd's process: the services, the API the HTTP server serves, the
 * controllers (the periodic passes) and the thread that runs them. The top
 * layer: it wires the ones below and nothing calls up into it. */
#pragma once
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "api/api.h"
#include "domain/config.h"
#include "daemon/controllers.h"
#include "svc/svc.h"
#include "daemon/tls.h"

struct musterd {
        struct svc svc;                  /* the services and their shared state */
        struct api api;                  /* the handlers' app (api.http: the server) */
        struct store *store;             /* opened here, the services' */
        struct crypto_key *key;          /* loaded here, the services' */
        struct controllers controllers;  /* the periodic passes, run by the monitor thread */
        struct daemon_tls tls;           /* what HTTPS serves (none with --insecure-http); tls_lock */
        pthread_mutex_t tls_lock;        /* tls, between a reload and the monitor's renewal */
        _Atomic int64_t tls_not_after;   /* when the certificate served expires (/metrics); 0: none */
        int64_t tls_checked;             /* monotonic seconds of the last renewal check */
        _Atomic uint64_t events[_EVENT_SEVERITY_MAX]; /* the event sink's count, by severity */
        int64_t started_at;              /* seconds since the epoch (process_start_time_seconds) */
        bool svc_ready;
        char *openapi_yaml, *openapi_json; /* [server] openapi_file, read at start (api's); NULL: none */
        pthread_t monitor;
        bool monitor_running;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool stopping;
};

/* Start everything: state dir, key, admin token, store, services, HTTP,
 * monitor. Logs what fails and returns -errno. */
int musterd_start(struct musterd *d, const struct muster_config *cfg);
void musterd_stop(struct musterd *d);

/* Put `next` in force (SIGHUP): svc_config_publish, then the HTTP server's
 * header timeout. Returns how many settings changed, or -ENOMEM (the old
 * configuration stays). */
int musterd_reload(struct musterd *d, const struct muster_config *next);
