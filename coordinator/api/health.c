/* The probes and metrics: /healthz, /readyz (the store answers and has
 * room to write) and /metrics (Prometheus text: the HTTP layer's counters,
 * hosts by status, store write latency, and the daemon's own: its
 * controllers' and the events its sink counted). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "format.h"
#include "hostfsm.h"

void api_healthz(void *app, struct http_request *req, struct http_response *resp) {
        http_json(resp, 200, json_object_new_string("ok"));
}

void api_readyz(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env_list l = { 0 };
        struct store_page pg = { .limit = 1 };
        int r = store_infra_env_list(sv->store, NULL, &pg, &l);
        infra_env_list_free(&l);
        int64_t room = INT64_MAX;
        if (r < 0)
                http_error(resp, 503, "store is not ready");
        else if (store_free_space(sv->store, &room) == 0 && room < STORE_MIN_FREE_BYTES)
                http_error(resp, 503, "the store's file system is full (%lld bytes free, writes need %lld): "
                           "reads are served, writes are refused with 507", (long long) room,
                           (long long) STORE_MIN_FREE_BYTES);
        else
                http_json(resp, 200, json_object_new_string("ready"));
}

void api_metrics(void *app, struct http_request *req, struct http_response *resp) {
        struct api *a = app;
        struct svc *sv = a->svc;
        /* Administrators only, unless [metrics] public: an agent's token sits
         * in every ISO, so it proves nothing. */
        if (!svc_cfg(sv)->metrics_public) {
                if (!req->auth) {
                        http_error(resp, 401, "an Authorization: Bearer token is required ([metrics] public is false)");
                        return;
                }
                if (!api_need_admin(req, resp))
                        return;
        }
        /* The HTTP layer's, then hosts by status, store latency and the
         * controllers (each appended; a failure is out of memory). */
        char *out = http_server_metrics(a->http);
        size_t len = out ? strlen(out) : 0, cap = out ? len + 1 : 0;
        int r = out ? 0 : -ENOMEM;
        if (r == 0)
                r = format_append(&out, &len, &cap, "# HELP muster_hosts Hosts by status.\n# TYPE muster_hosts gauge\n");
        int64_t counts[_HOST_STATUS_MAX];
        if (r == 0 && store_host_count_by_status(sv->store, counts) == 0)
                for (int s = 0; r == 0 && s < _HOST_STATUS_MAX; s++)
                        r = format_append(&out, &len, &cap, "muster_hosts{status=\"%s\"} %lld\n",
                                          host_status_to_string((enum host_status) s), (long long) counts[s]);
        struct store_latency w;
        store_write_latency(sv->store, &w);
        if (r == 0)
                r = format_append(&out, &len, &cap,
                                  "# HELP muster_store_write_seconds Store write transactions, lock wait to commit.\n"
                                  "# TYPE muster_store_write_seconds histogram\n");
        uint64_t cum = 0;
        for (int b = 0; r == 0 && b < STORE_LATENCY_BUCKETS; b++) {
                cum += w.bucket[b];
                r = format_append(&out, &len, &cap, "muster_store_write_seconds_bucket{le=\"%g\"} %llu\n",
                                  store_latency_bounds[b], (unsigned long long) cum);
        }
        if (r == 0)
                r = format_append(&out, &len, &cap,
                                  "muster_store_write_seconds_bucket{le=\"+Inf\"} %llu\n"
                                  "muster_store_write_seconds_sum %.6f\nmuster_store_write_seconds_count %llu\n",
                                  (unsigned long long) w.count, w.sum_s, (unsigned long long) w.count);
        if (r == 0 && a->metrics)
                r = a->metrics(a->metrics_ctx, &out, &len, &cap);
        if (r < 0) {
                free(out);
                http_error(resp, 500, "out of memory");
                return;
        }
        resp->status = 200;
        resp->text = out;
        resp->content_type = "text/plain; version=0.0.4";
}

