/* Add-ons over the API (DESIGN §10): AddonProxies (create, list,
 * show, change, delete, and the rollout's pause, resume and rollback) are
 * the infra admins'; their releases are listed for the admins, and for a
 * cluster creator on its own clusters. The handlers parse and authorize;
 * svc/addons.h decides. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svc/addons.h"
#include "api/api.h"
#include "cleanup.h"
#include "json-cleanup.h"

static void reply_proxy(struct svc *sv, struct http_response *resp, int status, const struct addon_proxy_record *p) {
        json_object *o = svc_addon_proxy_json(sv, p);
        if (!o)
                http_error(resp, 500, "out of memory");
        else
                http_json(resp, status, o);
}

/* A service's answer about one proxy: the error, or `status` with the
 * proxy (204 with none for a service's 1: gone). */
static void answer(struct svc *sv, struct http_response *resp, int r, const char *err, const char *what, int status,
                   struct addon_proxy_record *p) {
        if (r < 0)
                api_svc_error(resp, r, err, what);
        else if (r == 1)
                api_no_content(resp);
        else
                reply_proxy(sv, resp, status, p);
        addon_proxy_record_free(p);
}

void api_addon_proxy_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct addon_proxy_record p;
        const char *what = "add-on proxy";
        char err[1024] = "";
        if (!api_need_infra_admin(req, resp))
                return;
        int r = svc_addon_proxy_create(sv, req->body, P(req)->owner, &p, err, sizeof err, &what);
        answer(sv, resp, r, err, what, 201, &p);
}

void api_addon_proxy_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct addon_proxy_record_list l;
        if (!api_need_infra_admin(req, resp))
                return;
        int r = svc_addon_proxy_list(sv, &l);
        if (r < 0) {
                api_store_error(resp, r, "add-on proxies");
                return;
        }
        _cleanup_json_ json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < l.n; i++) {
                json_object *o = svc_addon_proxy_json(sv, &l.v[i]);
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        json_object_put(TAKE_PTR(a));
                }
        }
        addon_proxy_record_list_free(&l);
        if (!a)
                http_error(resp, 500, "out of memory");
        else
                http_json(resp, 200, TAKE_PTR(a));
}

void api_addon_proxy_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct addon_proxy_record p;
        if (!api_need_infra_admin(req, resp))
                return;
        int r = svc_addon_proxy_get(sv, req->params[0], &p);
        if (r < 0)
                api_store_error(resp, r, "add-on proxy");
        else
                reply_proxy(sv, resp, 200, &p);
        addon_proxy_record_free(&p);
}

void api_addon_proxy_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct addon_proxy_record p;
        const char *what = "add-on proxy";
        char err[1024] = "";
        if (!api_need_infra_admin(req, resp))
                return;
        int r = svc_addon_proxy_patch(sv, req->params[0], req->body, P(req)->owner, &p, err, sizeof err, &what);
        answer(sv, resp, r, err, what, 200, &p);
}

void api_addon_proxy_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct addon_proxy_record p;
        const char *what = "add-on proxy";
        char err[1024] = "";
        if (!api_need_infra_admin(req, resp))
                return;
        /* 202: its releases are being removed; 204: gone. */
        int r = svc_addon_proxy_delete(sv, req->params[0], P(req)->owner, &p, err, sizeof err, &what);
        answer(sv, resp, r, err, what, 202, &p);
}

void api_addon_proxy_action(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct addon_proxy_record p;
        const char *what = "add-on proxy";
        char err[1024] = "";
        int a = 0;
        if (!api_need_infra_admin(req, resp))
                return;
        while (a < _ADDON_ACTION_MAX && strcmp(svc_addon_action_to_string(a), req->params[1]) != 0)
                a++;
        if (a == _ADDON_ACTION_MAX) {
                http_error(resp, 404, "no such action: the rollout's actions are pause, resume and rollback");
                return;
        }
        int r = svc_addon_proxy_action(sv, req->params[0], a, P(req)->owner, &p, err, sizeof err, &what);
        answer(sv, resp, r, err, what, 200, &p);
}

void api_addon_release_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        const char *proxy = http_query(req, "proxy"), *cluster = http_query(req, "cluster");
        struct list_page pg;
        struct cluster c;
        json_object *out = NULL;
        int64_t next = 0;

        cluster_init(&c);
        if (!api_need_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        /* A cluster creator sees the releases of a cluster of its own. */
        if (P(req)->role != ROLE_INFRA_ADMIN && !cluster) {
                http_error(resp, 403, "a cluster creator lists the add-on releases of one of its clusters (?cluster=)");
                return;
        }
        if (cluster && api_load_cluster(sv, req, resp, cluster, &c) < 0)
                goto out;
        int r = svc_addon_release_list(sv, proxy && *proxy ? proxy : NULL, cluster ? c.id : NULL, &pg, &out, &next);
        if (r < 0)
                api_store_error(resp, r, r == -ENOENT ? "add-on proxy" : "add-on releases");
        else {
                http_json(resp, 200, out);
                resp->next_after = next;
        }
out:
        cluster_free(&c);
}
