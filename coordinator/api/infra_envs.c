/* Infra-envs: create, list, show, change, delete, rotate their agent token.
 * The infra-env service (svc/infra_envs.h) decides; these parse, authorize
 * and answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "svc/infra_envs.h"

static json_object *infra_env_reply(const struct infra_env *ie, const char *token) {
        json_object *o = infra_env_to_json(ie, 0);
        if (o && token)
                json_object_object_add(o, "agent_token", json_object_new_string(token));
        return o;
}

/* POST /infra-envs: 201 with the infra-env and its agent token. */
void api_infra_env_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        char perr[256], err[512] = "";
        char *token = NULL;

        if (!api_need_admin(req, resp))
                return;
        if (infra_env_from_json(req->body, &ie, perr, sizeof perr) < 0) {
                http_error(resp, 400, "%s", perr);
                goto out;
        }
        int r = svc_infra_env_create(sv, &ie, P(req)->owner, &token, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "infra-env");
        else
                http_json(resp, 201, infra_env_reply(&ie, token));
out:
        free(token);
        infra_env_free(&ie);
}

void api_infra_env_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env_list l = { 0 };
        struct list_page pg;
        /* Paged like the other lists: ?limit= and ?after=, X-Next-After. */
        if (!api_need_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        int r = svc_infra_env_list(sv, P(req)->role == ROLE_INFRA_ADMIN ? NULL : P(req)->owner, &pg, &l);
        if (r < 0)
                api_store_error(resp, r, "infra-envs");
        else {
                http_json(resp, 200, infra_env_list_to_json(&l, 0));
                resp->next_after = l.next_after;
        }
        infra_env_list_free(&l);
}

void api_infra_env_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) == 0)
                http_json(resp, 200, infra_env_reply(&ie, NULL));
        infra_env_free(&ie);
}

/* DELETE /infra-envs/{id}: with its hosts, but never a host being installed
 * or one lent to another owner's cluster (409 naming them); hosts bound to
 * the owner's own clusters are unbound (svc_infra_env_delete). 204. */
void api_infra_env_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        char err[512] = "";
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
                goto out;
        int r = svc_infra_env_delete(sv, &ie, P(req)->owner, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "infra-env");
        else
                api_no_content(resp);
out:
        infra_env_free(&ie);
}

void api_infra_env_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie, in, now;
        char perr[256], err[512] = "";
        infra_env_init(&in);
        infra_env_init(&now);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
                goto out;
        if (infra_env_from_json(req->body, &in, perr, sizeof perr) < 0) {
                http_error(resp, 400, "%s", perr);
                goto out;
        }
        int r = svc_infra_env_update(sv, ie.id, &in, P(req)->owner, &now, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "infra-env");
        else
                http_json(resp, 200, infra_env_reply(&now, NULL));
out:
        infra_env_free(&now);
        infra_env_free(&in);
        infra_env_free(&ie);
}

/* POST /infra-envs/{id}/actions/rotate-token: every earlier agent token is
 * revoked; 200 with the infra-env and its new agent token. */
void api_infra_env_rotate_token(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        char err[512] = "";
        char *token = NULL;
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) == 0) {
                int r = svc_infra_env_rotate_token(sv, &ie, &token, err, sizeof err);
                if (r < 0)
                        api_svc_error(resp, r, err, "infra-env");
                else
                        http_json(resp, 200, infra_env_reply(&ie, token));
        }
        free(token);
        infra_env_free(&ie);
}
