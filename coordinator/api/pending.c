/* What an admin asks of a host's agent (gather its logs, reclaim it), and
 * the logs: the agent's upload and the admin's download. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/api.h"
#include "svc/pending.h"

void api_host_gather_logs(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        char err[512] = "", at[MODEL_TIME_LEN];
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, HOST_OP_GATHER_LOGS, &ie, &h) < 0)
                goto out;
        int r = svc_host_request_logs(sv, &h, P(req)->owner, at, err, sizeof err);
        json_object *o = r < 0 ? NULL : json_object_new_object();
        if (o) {
                json_object_object_add(o, "host_id", json_object_new_string(h.id));
                json_object_object_add(o, "requested_at", json_object_new_string(at));
                json_object_object_add(o, "pending_actions", json_object_new_string("gather-logs"));
        }
        api_answer(resp, r, err, "host", 202, o);
out:
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_reclaim(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        char err[512] = "";
        struct jctx jc = { err, sizeof err, 0 };
        bool wipe = false, cancel = false;
        if (!api_need_admin(req, resp))
                return;
        json_object_object_foreach(req->body, key, val) {
                (void) val;
                if (strcmp(key, "wipe") != 0 && strcmp(key, "cancel") != 0) {
                        http_error(resp, 400, "unknown field \"%.64s\" (reclaim takes \"wipe\" and \"cancel\")", key);
                        return;
                }
        }
        /* Null is no boolean here. */
        if ((!jget_bool(req->body, "wipe", &wipe, &jc) && jhas(req->body, "wipe")) ||
            (!jget_bool(req->body, "cancel", &cancel, &jc) && jhas(req->body, "cancel")))
                jrefuse(&jc, "fields \"wipe\" and \"cancel\" must be true or false");
        if (!api_read_ok(resp, &jc))
                return;
        if (wipe && cancel) {
                http_error(resp, 400, "\"cancel\" withdraws a reclaim: it takes no \"wipe\"");
                return;
        }
        if (api_load_host(sv, req, resp, HOST_OP_RECLAIM, &ie, &h) < 0)
                goto out;
        int r = cancel ? svc_host_reclaim_cancel(sv, &h, P(req)->owner, err, sizeof err)
                       : svc_host_reclaim(sv, &ie, &h, wipe, P(req)->owner, err, sizeof err);
        json_object *o = r < 0 ? NULL : json_object_new_object();
        if (o) {
                json_object_object_add(o, "host_id", json_object_new_string(h.id));
                if (cancel)
                        json_object_object_add(o, "cancelled", json_object_new_boolean(true));
                else
                        json_object_object_add(o, "wipe", json_object_new_boolean(wipe));
        }
        api_answer(resp, r, err, "host", cancel ? 200 : 202, o);
out:
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_logs_put(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        char err[512] = "";
        if (api_load_host(sv, req, resp, HOST_OP_AGENT_LOGS_UPLOAD, &ie, &h) < 0)
                goto out;
        const char *ct = http_header(req, "Content-Type");
        if (ct && strncasecmp(ct, "application/gzip", 16) != 0 && strncasecmp(ct, "application/octet-stream", 24) != 0) {
                http_error(resp, 415, "content type must be application/gzip, not %.64s", ct);
                goto out;
        }
        int r = svc_host_logs_upload(sv, &h, req->body_raw, req->body_len, err, sizeof err);
        json_object *o = r < 0 ? NULL : json_object_new_object();
        if (o)
                json_object_object_add(o, "bytes", json_object_new_int64((int64_t) req->body_len));
        api_answer(resp, r, err, "host", 201, o);
out:
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_logs_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        struct host_logs_record l = { 0 };
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, HOST_OP_LOGS, &ie, &h) < 0)
                goto out;
        int r = svc_host_logs_get(sv, &h, &l);
        if (r < 0) {
                char none[256];
                snprintf(none, sizeof none, "host %s has uploaded no logs yet; ask for them with POST "
                                            "…/actions/gather-logs (musterctl host logs HOST --gather)", h.id);
                api_svc_error(resp, r, r == -ENOENT ? none : NULL, "host");
                goto out;
        }
        http_text(resp, 200, (char *) l.data, l.len, "application/gzip");
        l.data = NULL;
        /* After http_text, which starts the answer afresh. */
        http_header_add(resp, "Content-Disposition", "attachment; filename=\"muster-logs-%s.tar.gz\"", h.id);
        http_header_add(resp, "X-Muster-Logs-Created-At", "%s", l.created_at);
        http_header_add(resp, "X-Muster-Logs-Kept", "%lld", (long long) l.count);
out:
        host_logs_record_free(&l);
        host_free(&h);
        infra_env_free(&ie);
}
