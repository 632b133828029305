/* People's tokens: issue, list, revoke (infra admins only). The token
 * service (svc/tokens.h) decides; these parse, authorize and answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "svc/tokens.h"
#include "uuid.h"

void api_token_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        enum admin_role role;
        int64_t ttl = AUTH_DEFAULT_TTL_S;
        char err[512] = "";
        if (!api_need_infra_admin(req, resp))
                return;
        struct jctx jc = { err, sizeof err, 0 };
        const char *r_name = jget_cstr(req->body, "role", SIZE_MAX, &jc);
        if (!r_name || admin_role_from_string(r_name, &role) < 0)
                jrefuse(&jc, "field \"role\" must be infra-admin or cluster-creator");
        if (!api_read_ok(resp, &jc))
                return;
        const char *owner = jget_cstr(req->body, "owner", 127, &jc);
        if (!owner || !*owner)
                jrefuse(&jc, "field \"owner\" must be a non-empty string of at most 127 characters");
        if (!api_read_ok(resp, &jc))
                return;
        /* Null is no integer here. */
        if (!jget_int(req->body, "ttl_seconds", 1, AUTH_MAX_TTL_S, &ttl, &jc) && jhas(req->body, "ttl_seconds"))
                jrefuse(&jc, "field \"ttl_seconds\" must be an integer from 1 to %d (10 years)", AUTH_MAX_TTL_S);
        if (!api_read_ok(resp, &jc))
                return;
        struct token_record rec;
        char *token = NULL;
        int r = svc_token_create(sv, role, owner, ttl, P(req)->owner, &token, &rec, err,
                                 sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "token");
        else {
                json_object *o = token_record_to_json(&rec);
                json_object_object_add(o, "token", json_object_new_string(token));
                http_json(resp, 201, o);
        }
        token_record_free(&rec);
        free(token);
}

void api_token_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct list_page pg;
        struct token_record_list l = { 0 };
        if (!api_need_infra_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        int r = svc_token_list(sv, http_query(req, "owner"), &pg, &l);
        if (r < 0) {
                api_store_error(resp, r, "tokens");
                return;
        }
        json_object *a = json_object_new_array_ext((int) l.n);
        for (size_t i = 0; a && i < l.n; i++)
                json_object_array_add(a, token_record_to_json(&l.v[i]));
        http_json(resp, 200, a);
        resp->next_after = l.next_after;
        token_record_list_free(&l);
}

void api_token_revoke(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct token_record t;
        if (!api_need_infra_admin(req, resp))
                return;
        if (!uuid_is_valid(req->params[0])) {
                http_error(resp, 400, "token id \"%s\" is not a UUID", req->params[0]);
                return;
        }
        int r = svc_token_revoke(sv, req->params[0], P(req)->owner, &t);
        if (r < 0)
                api_store_error(resp, r, "token");
        else
                http_json(resp, 200, token_record_to_json(&t));
        token_record_free(&t);
}
