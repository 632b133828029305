/* The event list, filtered by scope, severity and position
 * (svc_event_list). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "svc/events.h"

void api_events_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct event_filter f = { 0 };
        int64_t since = 0, limit = 0;
        char err[512] = "";
        if (!api_need_admin(req, resp))
                return;
        f.infra_env_id = http_query(req, "infra_env_id");
        f.cluster_id = http_query(req, "cluster_id");
        f.host_id = http_query(req, "host_id");
        const char *sev = http_query(req, "severity"), *cat = http_query(req, "category");
        if (cat && event_category_from_string(cat) < 0) {
                http_error(resp, 400, "unknown category \"%.64s\" (user, system, agent or audit)", cat);
                return;
        }
        f.category = cat;
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
        bool creator = P(req)->role == ROLE_CLUSTER_CREATOR;
        if (creator && !f.cluster_id) {
                http_error(resp, 403, "cluster creators list events of one of their clusters (cluster_id=...)");
                return;
        }
        struct event_list l = { 0 };
        int r = svc_event_list(sv, &f, creator ? P(req)->owner : NULL, &l, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "events");
        else
                http_json(resp, 200, event_list_to_json(&l, 0));
        event_list_free(&l);
}
