/* People's tokens: issue, list, revoke (infra admins only). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "log.h"
#include "uuid.h"

static json_object *token_record_to_json(const struct store_token *t) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_string(t->id));
        json_object_object_add(o, "role", json_object_new_string(t->role));
        json_object_object_add(o, "owner", json_object_new_string(t->owner));
        json_object_object_add(o, "created_at", json_object_new_string(t->created_at));
        json_object_object_add(o, "expires_at", json_object_new_string(t->expires_at));
        json_object_object_add(o, "revoked", json_object_new_boolean(t->revoked_at != NULL));
        json_object_object_add(o, "revoked_at", t->revoked_at ? json_object_new_string(t->revoked_at) : NULL);
        return o;
}

void api_token_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        json_object *v, *owner;
        enum admin_role role;
        int64_t ttl = AUTH_DEFAULT_TTL_S;
        _cleanup_free_ char *token = NULL;
        if (!api_need_infra_admin(req, resp))
                return;
        if (!json_object_object_get_ex(req->body, "role", &v) || admin_role_from_string(json_object_get_string(v), &role) < 0) {
                http_error(resp, 400, "field \"role\" must be infra-admin or cluster-creator");
                return;
        }
        if (!json_object_object_get_ex(req->body, "owner", &owner) || !json_object_is_type(owner, json_type_string) ||
            json_object_get_string_len(owner) < 1 || json_object_get_string_len(owner) > 127 ||
            strlen(json_object_get_string(owner)) != (size_t) json_object_get_string_len(owner)) {
                http_error(resp, 400, "field \"owner\" must be a non-empty string of at most 127 characters");
                return;
        }
        if (json_object_object_get_ex(req->body, "ttl_seconds", &v)) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 ||
                    json_object_get_int64(v) > AUTH_MAX_TTL_S) {
                        http_error(resp, 400, "field \"ttl_seconds\" must be an integer from 1 to %d (10 years)",
                                   AUTH_MAX_TTL_S);
                        return;
                }
                ttl = json_object_get_int64(v);
        }
        struct store_token rec;
        int r = svc_token_issue(sv, role, json_object_get_string(owner), ttl, &token, &rec);
        if (r == -EPERM) {
                http_error(resp, 409, "owner \"%s\" already has tokens of the other role; an owner name belongs to "
                                      "one role (pick another name)", json_object_get_string(owner));
                return;
        }
        if (r < 0) {
                api_store_error(resp, r, "token");
                return;
        }
        json_object *o = token_record_to_json(&rec);
        json_object_object_add(o, "token", json_object_new_string(token));
        store_token_free(&rec);
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "%s token %s for %s issued by %s, expires %s",
                      json_object_get_string(json_object_object_get(o, "role")), json_object_get_string(
                              json_object_object_get(o, "id")), json_object_get_string(owner), P(req)->owner,
                      json_object_get_string(json_object_object_get(o, "expires_at")));
        http_json(resp, 201, o);
}

void api_token_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct store_page pg;
        struct store_token_list l = { 0 };
        if (!api_need_infra_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        int r = store_token_list(sv->store, http_query(req, "owner"), &pg, &l);
        if (r < 0) {
                api_store_error(resp, r, "tokens");
                return;
        }
        json_object *a = json_object_new_array_ext((int) l.n);
        for (size_t i = 0; a && i < l.n; i++)
                json_object_array_add(a, token_record_to_json(&l.v[i]));
        http_json(resp, 200, a);
        resp->next_after = l.next_after;
        store_token_list_free(&l);
}

void api_token_revoke(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct store_token t;
        if (!api_need_infra_admin(req, resp))
                return;
        if (!uuid_is_valid(req->params[0])) {
                http_error(resp, 400, "token id \"%s\" is not a UUID", req->params[0]);
                return;
        }
        int r = store_token_revoke(sv->store, req->params[0]);
        if (r < 0) {
                api_store_error(resp, r, "token");
                return;
        }
        /* The store is asked on every request anyway; this also drops it
         * from the cache of checked signatures at once. */
        auth_cache_forget(sv->auth_cache, req->params[0]);
        if (r == 0)
                svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, NULL, NULL, NULL, "token %s revoked by %s",
                              req->params[0], P(req)->owner);
        if ((r = store_token_get(sv->store, req->params[0], &t)) < 0)
                api_store_error(resp, r, "token");
        else
                http_json(resp, 200, token_record_to_json(&t));
        store_token_free(&t);
}
