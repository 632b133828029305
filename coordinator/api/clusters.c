/* Clusters and late binding (DESIGN §3, §5, §7) over the API: cluster
 * CRUD with owner scoping, upgrades, bind and unbind of pool hosts. The
 * handlers parse and authorize; the services of svc/clusters.h decide. */
#include <errno.h>
#include <stdbool.h>

#include "api/api.h"
#include "cleanup.h"
#include "labelsel.h"
#include "svc/clusters.h"

void api_cluster_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c, out;
        const char *what = "cluster";
        char bad[256], err[512] = "";
        cluster_init(&out);
        if (!api_need_admin(req, resp))
                return;
        if (cluster_from_json(req->body, &c, bad, sizeof bad) < 0) {
                http_error(resp, 400, "%s", bad);
                goto out;
        }
        int r = svc_cluster_create(sv, &c, P(req)->owner, &out, err, sizeof err, &what);
        if (r < 0)
                api_svc_error(resp, r, err, what);
        else
                http_json(resp, 201, cluster_to_json(&out, 0));
out:
        cluster_free(&out);
        cluster_free(&c);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct labelsel *, labelsel_free)

void api_cluster_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster_list l = { 0 };
        struct list_page pg;
        _cleanup_(labelsel_freep) struct labelsel *sel = NULL;
        const char *text = http_query(req, "selector");
        char why[512];
        if (!api_need_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        /* ?selector= in kubectl's words (env=prod,tier in (a,b)), checked here. */
        if (text) {
                int k = labelsel_parse_text(text, &sel, why, sizeof why);
                if (k == -ENOMEM) {
                        http_error(resp, 500, "out of memory");
                        return;
                }
                if (k < 0) {
                        http_error(resp, 400, "selector: %s", why);
                        return;
                }
        }
        /* A cluster creator sees its own clusters only. */
        int r = svc_cluster_list(sv, P(req)->role == ROLE_INFRA_ADMIN ? NULL : P(req)->owner, &pg, sel, &l);
        if (r < 0)
                api_store_error(resp, r, "clusters");
        else {
                http_json(resp, 200, cluster_list_to_json(&l, 0));
                resp->next_after = l.next_after;
        }
        cluster_list_free(&l);
}

void api_cluster_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        if (api_load_cluster(sv, req, resp, req->params[0], &c) == 0)
                http_json(resp, 200, cluster_to_json(&c, 0));
        cluster_free(&c);
}

void api_cluster_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c, in, out;
        const char *what = "cluster";
        char bad[256], err[512] = "";
        cluster_init(&in);
        cluster_init(&out);
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if (cluster_from_json(req->body, &in, bad, sizeof bad) < 0) {
                http_error(resp, 400, "%s", bad);
                goto out;
        }
        int r = svc_cluster_update(sv, &c, &in, P(req)->owner, &out, err, sizeof err, &what);
        if (r < 0)
                api_svc_error(resp, r, err, what);
        else
                http_json(resp, 200, cluster_to_json(&out, 0));
out:
        cluster_free(&out);
        cluster_free(&in);
        cluster_free(&c);
}

void api_cluster_upgrade(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c, out;
        const char *what = "cluster";
        char err[512] = "";
        cluster_init(&out);
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        struct jctx jc = { err, sizeof err, 0 };
        const char *version = jget_cstr(req->body, "release_version", RELEASE_MAX_VERSION, &jc);
        if (!version || !*version)
                jrefuse(&jc, "field \"release_version\" must name an imported release");
        if (!api_read_ok(resp, &jc))
                goto out;
        int r = svc_cluster_upgrade(sv, &c, version, P(req)->owner, &out, err, sizeof err, &what);
        if (r < 0)
                api_svc_error(resp, r, err, what);
        else
                http_json(resp, 200, cluster_to_json(&out, 0));
out:
        cluster_free(&out);
        cluster_free(&c);
}

void api_cluster_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        char err[512] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = svc_cluster_delete(sv, &c, P(req)->owner, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "cluster");
        else
                api_no_content(resp);
out:
        cluster_free(&c);
}

/* ---- binding ----------------------------------------------------------- */

/* Bind (bind) or unbind a pool host: the caller may reach the host and, to
 * bind, the cluster; svc_host_bind/unbind decide. 200 with the host. */
static void host_set_binding(struct svc *sv, struct http_request *req, struct http_response *resp, bool bind) {
        struct infra_env ie;
        struct host h, out;
        struct cluster c;
        const char *what = "host";
        char err[512] = "";
        int r;
        cluster_init(&c);
        host_init(&h);
        host_init(&out);
        infra_env_init(&ie);
        if (!api_need_admin(req, resp))
                return;
        struct jctx jc = { err, sizeof err, 0 };
        const char *cluster_id = bind ? jget_cstr(req->body, "cluster_id", SIZE_MAX, &jc) : NULL;
        if (bind && !cluster_id)
                jrefuse(&jc, "field \"cluster_id\" is required");
        if (!api_read_ok(resp, &jc))
                return;
        if (api_load_host(sv, req, resp, bind ? HOST_OP_BIND : HOST_OP_UNBIND, &ie, &h) < 0 ||
            (bind && api_load_cluster(sv, req, resp, cluster_id, &c) < 0))
                goto out;
        r = bind ? svc_host_bind(sv, &h, &c, P(req)->owner, &out, err, sizeof err, &what)
                 : svc_host_unbind(sv, &h, P(req)->owner, &out, err, sizeof err, &what);
        if (r < 0)
                api_svc_error(resp, r, err, what);
        else
                http_json(resp, 200, api_host_json(sv, &out, MODEL_JSON_NO_INVENTORY));
out:
        host_free(&out);
        cluster_free(&c);
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_bind(void *app, struct http_request *req, struct http_response *resp) {
        host_set_binding(api_svc(app), req, resp, true);
}

void api_host_unbind(void *app, struct http_request *req, struct http_response *resp) {
        host_set_binding(api_svc(app), req, resp, false);
}
