/* The probes, the version and metrics: /healthz, /readyz (the store
 * answers and has room to write), /api/v2/version (what this musterd is:
 * its version, API, store schema and features; no token, as the probes)
 * and /metrics (Prometheus text: the HTTP layer's counters,
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

#include "api/api.h"
#include "domain/hostfsm.h"

/* The bound of the /metrics text: every route's histogram is a few KiB, so
 * this is far past any route table (the text had no bound before growbuf). */
enum { METRICS_MAX = 8 << 20 };

void api_healthz(void *app, struct http_request *req, struct http_response *resp) {
        http_json(resp, 200, json_object_new_string("ok"));
}

void api_readyz(void *app, struct http_request *req, struct http_response *resp) {
        struct api *a = app;
        char err[512] = "";
        if (svc_ready(a->svc, err, sizeof err) < 0)
                http_error(resp, 503, "%s", err);
        else
                http_json(resp, 200, json_object_new_string(a->insecure_http ? API_READY_INSECURE : "ready"));
}

void api_version(void *app, struct http_request *req, struct http_response *resp) {
        struct api *a = app;
        struct svc_version v;
        int r = svc_version(a->svc, &v);
        if (r < 0) {
                api_store_error(resp, r, "store");
                return;
        }
        json_object *o = json_object_new_object(), *schema = json_object_new_object(),
                    *features = json_object_new_array();
        if (!o || !schema || !features) {
                json_object_put(o);
                json_object_put(schema);
                json_object_put(features);
                http_error(resp, 500, "out of memory");
                return;
        }
        json_object_object_add(schema, "store", json_object_new_int(v.schema));
        json_object_object_add(schema, "built", json_object_new_int(v.schema_built));
        json_object_array_add(features, json_object_new_string("sqlite"));
        if (v.postgres)
                json_object_array_add(features, json_object_new_string("postgres"));
        json_object_array_add(features, json_object_new_string(a->insecure_http ? "plain-http" : "https"));
        json_object_object_add(o, "server", json_object_new_string("musterd"));
        json_object_object_add(o, "version", json_object_new_string(MUSTER_VERSION));
        json_object_object_add(o, "api", json_object_new_string(MUSTER_API_VERSION));
        json_object_object_add(o, "schema", schema);
        json_object_object_add(o, "features", features);
        http_json(resp, 200, o);
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
        struct growbuf out = { 0 };
        int r = http_server_metrics(a->http, &out, METRICS_MAX);
        if (r == 0)
                r = svc_metrics(sv, &out, METRICS_MAX);
        if (r == 0 && a->metrics)
                r = a->metrics(a->metrics_ctx, &out, METRICS_MAX);
        if (r < 0) {
                free(out.data);
                http_error(resp, 500, r == -E2BIG ? "the metrics text is too large" : "out of memory");
                return;
        }
        resp->status = 200;
        resp->text = out.data;
        resp->content_type = "text/plain; version=0.0.4";
}

