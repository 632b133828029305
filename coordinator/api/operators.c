/* A cluster's operators over the API (DESIGN §8): subscriptions
 * (subscribe, list, unsubscribe), the resolution's preview and upgrades.
 * Whoever may see the cluster may change its operators; the catalogs they
 * come from are the infra admins'. The handlers parse and authorize;
 * svc/operators.h decides. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cleanup.h"
#include "json-cleanup.h"
#include "operators.h"
#include "uninstall.h"

#define OP_MAX_LIST 1000 /* packages or subscriptions in one request */

/* Optional member k: a string (*out), absent or null (NULL). 0, or answers
 * 400 and returns -EINVAL. */
static int opt_str(json_object *o, const char *k, const char **out, struct http_response *resp) {
        json_object *v;
        *out = NULL;
        if (!json_object_object_get_ex(o, k, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_string)) {
                http_error(resp, 400, "field \"%s\" must be a string", k);
                return -EINVAL;
        }
        *out = json_object_get_string(v);
        if (strlen(*out) != (size_t) json_object_get_string_len(v)) {
                http_error(resp, 400, "field \"%s\" has a NUL byte", k);
                return -EINVAL;
        }
        return 0;
}

static int opt_bool(json_object *o, const char *k, bool *out, struct http_response *resp) {
        json_object *v;
        *out = false;
        if (!json_object_object_get_ex(o, k, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_boolean)) {
                http_error(resp, 400, "field \"%s\" must be true or false", k);
                return -EINVAL;
        }
        *out = json_object_get_boolean(v);
        return 0;
}

/* Member "cleanup": {"enabled": bool} into *out (absent: false); *given
 * says whether it was there. 0, or answers 400 and returns -EINVAL. */
static int opt_cleanup(json_object *o, bool *out, bool *given, struct http_response *resp) {
        json_object *v, *e;
        *out = false;
        *given = false;
        if (!json_object_object_get_ex(o, "cleanup", &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_object) || json_object_object_length(v) != 1 ||
            !json_object_object_get_ex(v, "enabled", &e) || !json_object_is_type(e, json_type_boolean)) {
                http_error(resp, 400, "field \"cleanup\" must be {\"enabled\": true|false}");
                return -EINVAL;
        }
        *out = json_object_get_boolean(e);
        *given = true;
        return 0;
}

/* {package, channel?, catalog?, version_range?, skip_dependencies?, cleanup?}. */
static int read_subscription(json_object *o, struct op_subscribe *s, struct http_response *resp) {
        if (!json_object_is_type(o, json_type_object)) {
                http_error(resp, 400, "a subscription must be a JSON object");
                return -EINVAL;
        }
        int r = opt_str(o, "package", &s->package, resp);
        if (r >= 0 && !s->package) {
                http_error(resp, 400, "field \"package\" is required");
                r = -EINVAL;
        }
        if (r >= 0)
                r = opt_str(o, "channel", &s->channel, resp);
        if (r >= 0)
                r = opt_str(o, "catalog", &s->catalog, resp);
        if (r >= 0)
                r = opt_str(o, "version_range", &s->version_range, resp);
        if (r >= 0)
                r = opt_bool(o, "skip_dependencies", &s->skip_dependencies, resp);
        bool given;
        if (r >= 0)
                r = opt_cleanup(o, &s->cleanup, &given, resp);
        return r;
}

/* An array member of package names (absent: none); the names point into o. */
static int read_names(json_object *o, const char *k, const char ***out, size_t *n, struct http_response *resp) {
        json_object *a;
        *out = NULL;
        *n = 0;
        if (!json_object_object_get_ex(o, k, &a) || !a)
                return 0;
        size_t len = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
        if (!json_object_is_type(a, json_type_array) || len > OP_MAX_LIST) {
                http_error(resp, 400, "field \"%s\" must be a list of at most %d package names", k, OP_MAX_LIST);
                return -EINVAL;
        }
        *out = calloc(len + 1, sizeof **out);
        if (!*out) {
                http_error(resp, 500, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < len; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_string) || !json_object_get_string_len(e)) {
                        http_error(resp, 400, "%s[%zu] must be a package name", k, i);
                        return -EINVAL;
                }
                (*out)[(*n)++] = json_object_get_string(e);
        }
        return 0;
}

void api_subscription_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        struct op_subscribe in = { 0 };
        json_object *out = NULL;
        char err[2048] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0 || read_subscription(req->body, &in, resp) < 0)
                goto out;
        int r = operators_subscribe(sv, c.id, &in, P(req)->owner, &out, err, sizeof err);
        api_answer(resp, r, err, "subscription", 201, out);
out:
        cluster_free(&c);
}

void api_subscription_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        json_object *out = NULL;
        char err[2048] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) >= 0) {
                int r = operators_list(sv, c.id, &out, err, sizeof err);
                api_answer(resp, r, err, "subscriptions", 200, out);
        }
        cluster_free(&c);
}

void api_subscription_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        json_object *out = NULL;
        char err[2048] = "";
        const char *prune = http_query(req, "prune");
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if (prune && strcmp(prune, "true") != 0 && strcmp(prune, "false") != 0) {
                http_error(resp, 400, "prune must be true or false");
                goto out;
        }
        /* 200: gone; 202: its operands are being cleaned up first. */
        int r = operators_unsubscribe(sv, c.id, req->params[1], prune && strcmp(prune, "true") == 0, P(req)->owner,
                                      &out, err, sizeof err);
        api_answer(resp, r, err, "subscription", r == 1 ? 202 : 200, out);
out:
        cluster_free(&c);
}

/* The preview's added subscriptions, from body.subscriptions. */
static int read_extra(json_object *body, struct resolve_subscription **out, size_t *n, struct http_response *resp) {
        json_object *a;
        *out = NULL;
        *n = 0;
        if (!json_object_object_get_ex(body, "subscriptions", &a) || !a)
                return 0;
        size_t len = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
        if (!json_object_is_type(a, json_type_array) || len > OP_MAX_LIST) {
                http_error(resp, 400, "field \"subscriptions\" must be a list of at most %d subscriptions",
                           OP_MAX_LIST);
                return -EINVAL;
        }
        if (!(*out = calloc(len + 1, sizeof **out))) {
                http_error(resp, 500, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < len; i++) {
                struct op_subscribe s = { 0 };
                if (read_subscription(json_object_array_get_idx(a, i), &s, resp) < 0)
                        return -EINVAL;
                (*out)[(*n)++] = (struct resolve_subscription) { s.package, s.channel, s.catalog, s.version_range,
                                                                 s.skip_dependencies };
        }
        return 0;
}

void api_operators_resolve(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        _cleanup_free_ struct resolve_subscription *extra = NULL;
        _cleanup_free_ const char **up = NULL;
        struct op_options o = { 0 };
        json_object *out = NULL;
        char err[2048] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0 ||
            read_extra(req->body, &extra, &o.n_extra, resp) < 0 || read_names(req->body, "upgrade", &up, &o.n_upgrade, resp) < 0 ||
            opt_bool(req->body, "upgrade_all", &o.upgrade_all, resp) < 0 || opt_bool(req->body, "prune", &o.prune, resp) < 0)
                goto out;
        o.extra = extra;
        o.upgrade = up;
        int r = operators_preview(sv, c.id, &o, &out, err, sizeof err);
        api_answer(resp, r, err, "resolution", 200, out);
out:
        cluster_free(&c);
}

void api_operators_upgrade(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        _cleanup_free_ const char **pkgs = NULL;
        struct op_options o = { 0 };
        json_object *out = NULL;
        char err[2048] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0 ||
            read_names(req->body, "packages", &pkgs, &o.n_upgrade, resp) < 0 ||
            opt_bool(req->body, "all", &o.upgrade_all, resp) < 0 || opt_bool(req->body, "prune", &o.prune, resp) < 0)
                goto out;
        if (!o.upgrade_all && o.n_upgrade == 0) {
                http_error(resp, 400, "name the packages to upgrade, or set \"all\": true");
                goto out;
        }
        o.upgrade = pkgs;
        int r = operators_upgrade(sv, c.id, &o, P(req)->owner, &out, err, sizeof err);
        api_answer(resp, r, err, "operators", 200, out);
out:
        cluster_free(&c);
}

/* PATCH {cleanup: {enabled}}: whether the operator's operands go before it
 * on uninstall (DESIGN §9). */
void api_subscription_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        json_object *out = NULL;
        char err[2048] = "";
        bool enabled, given;
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if (!json_object_is_type(req->body, json_type_object) || json_object_object_length(req->body) != 1 ||
            opt_cleanup(req->body, &enabled, &given, resp) < 0 || !given) {
                if (!resp->status)
                        http_error(resp, 400, "a subscription's PATCH is {\"cleanup\": {\"enabled\": true|false}}");
                goto out;
        }
        int r = operators_set_cleanup(sv, c.id, req->params[1], enabled, P(req)->owner, &out, err, sizeof err);
        api_answer(resp, r, err, "subscription", 200, out);
out:
        cluster_free(&c);
}
