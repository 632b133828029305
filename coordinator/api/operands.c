/* A cluster's operands over the API (DESIGN §3, §9): apply
 * manifests of the kinds its operators own, list them with those the node
 * agents found, delete one. Whoever may see the cluster may change its
 * operands. The handlers parse and authorize; svc/operands.h decides. */
#include <errno.h>
#include <stdlib.h>

#include "api/api.h"
#include "catalog.h"
#include "cleanup.h"
#include "svc/operands.h"

void api_operand_apply(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        _cleanup_free_ struct catalog_file *files = NULL;
        struct cluster c;
        json_object *out = NULL;
        char err[2048] = "";
        size_t n = 0;
        if (api_load_cluster(sv, req, resp, req->params[0], &c) == 0 &&
            api_read_files(req->body, OPERANDS_MAX_FILES, "an apply", &files, &n, resp) == 0) {
                int r = svc_operands_apply(sv, c.id, files, n, P(req)->owner, &out, err, sizeof err);
                api_answer(resp, r, err, "operands", 201, out);
        }
        cluster_free(&c);
}

void api_operand_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        json_object *out = NULL;
        char err[2048] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) == 0) {
                int r = svc_operands_list(sv, c.id, &out, err, sizeof err);
                api_answer(resp, r, err, "operands", 200, out);
        }
        cluster_free(&c);
}

void api_operand_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        char err[2048] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) == 0) {
                int r = svc_operand_delete(sv, c.id, req->params[1], P(req)->owner, err, sizeof err);
                if (r < 0)
                        api_svc_error(resp, r, err, "operand");
                else
                        api_no_content(resp);
        }
        cluster_free(&c);
}
