/* The event list, filtered by scope, severity and position. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"

void api_events_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct store_event_filter f = { 0 };
        int64_t since = 0, limit = 0;
        if (!api_need_admin(req, resp))
                return;
        f.infra_env_id = http_query(req, "infra_env_id");
        f.cluster_id = http_query(req, "cluster_id");
        f.host_id = http_query(req, "host_id");
        const char *sev = http_query(req, "severity");
        if (sev) {
                int s = event_severity_from_string(sev);
                if (s < 0) {
                        http_error(resp, 400, "unknown severity \"%s\"", sev);
                        return;
                }
                f.min_severity = (enum event_severity) s;
        }
        if (api_query_i64(req, resp, "since_id", INT64_MAX, &since) < 0 ||
            api_query_i64(req, resp, "limit", svc_cfg(sv)->max_page_size, &limit) < 0)
                return;
        f.since_id = since;
        f.limit = (unsigned) limit;
        /* A cluster creator sees only its own clusters' events. */
        if (P(req)->role == ROLE_CLUSTER_CREATOR && !f.cluster_id) {
                http_error(resp, 403, "cluster creators list events of one of their clusters (cluster_id=...)");
                return;
        }
        if (P(req)->role == ROLE_CLUSTER_CREATOR) {
                struct cluster c;
                cluster_init(&c);
                int r = store_cluster_get(sv->store, f.cluster_id, &c);
                bool ok = r == 0 && auth_may_see_cluster(P(req), c.owner);
                cluster_free(&c);
                if (!ok) {
                        http_error(resp, 404, "cluster not found");
                        return;
                }
        }
        struct event_list l = { 0 };
        int r = store_event_list(sv->store, &f, &l);
        if (r < 0)
                api_store_error(resp, r, "events");
        else
                http_json(resp, 200, event_list_to_json(&l, 0));
        event_list_free(&l);
}

