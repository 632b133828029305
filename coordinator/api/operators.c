/* A cluster's operators over the API (DESIGN §8): subscriptions
 * (subscribe, list, unsubscribe), the resolution's preview and upgrades.
 * Whoever may see the cluster may change its operators; the catalogs they
 * come from are the infra admins'. The handlers parse and authorize;
 * svc/operators.h decides. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "cleanup.h"
#include "json-cleanup.h"
#include "svc/operators.h"
#include "svc/uninstall.h"

#define OP_MAX_LIST 1000 /* packages or subscriptions in one request */

/* Member "cleanup": {"enabled": bool} into *out (absent: left alone):
 * whether it was there. */
static bool read_cleanup(json_object *o, bool *out, struct jctx *c) {
        if (c->r < 0)
                return false;
        json_object *v = jget(o, "cleanup", json_type_object, c);
        bool e;
        if (v && json_object_object_length(v) == 1 && jget_bool(v, "enabled", &e, c)) {
                *out = e;
                return true;
        }
        if (v || c->r < 0)
                jrefuse(c, "field \"cleanup\" must be {\"enabled\": true|false}");
        return false;
}

/* {package, channel?, catalog?, version_range?, skip_dependencies?, cleanup?};
 * the strings point into o. */
static void read_subscription(json_object *o, struct op_subscribe *s, struct jctx *c) {
        if (!json_object_is_type(o, json_type_object)) {
                jfail(c, "a subscription must be a JSON object");
                return;
        }
        s->package = jget_cstr(o, "package", SIZE_MAX, c);
        if (!s->package)
                jfail(c, "field \"package\" is required");
        s->channel = jget_cstr(o, "channel", SIZE_MAX, c);
        s->catalog = jget_cstr(o, "catalog", SIZE_MAX, c);
        s->version_range = jget_cstr(o, "version_range", SIZE_MAX, c);
        jget_bool(o, "skip_dependencies", &s->skip_dependencies, c);
        read_cleanup(o, &s->cleanup, c);
}

/* An array member of package names (absent: none); the names point into o. */
static const char **read_names(json_object *o, const char *k, size_t *n, struct jctx *c) {
        *n = 0;
        if (c->r < 0)
                return NULL;
        json_object *a = jget_array(o, k, OP_MAX_LIST, c);
        if (!a) {
                if (c->r < 0)
                        jrefuse(c, "field \"%s\" must be a list of at most %d package names", k, OP_MAX_LIST);
                return NULL;
        }
        size_t len = json_object_array_length(a);
        const char **v = calloc(len + 1, sizeof *v);
        if (!v) {
                joom(c);
                return NULL;
        }
        for (size_t i = 0; i < len && c->r == 0; i++) {
                json_object *e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_string) || !json_object_get_string_len(e))
                        jfail(c, "%s[%zu] must be a package name", k, i);
                else
                        v[(*n)++] = json_object_get_string(e);
        }
        return v;
}

void api_subscription_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        struct op_subscribe in = { 0 };
        json_object *out = NULL;
        char err[2048] = "";
        struct jctx jc = { err, sizeof err, 0 };
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        read_subscription(req->body, &in, &jc);
        if (!api_read_ok(resp, &jc))
                goto out;
        int r = svc_operators_subscribe(sv, c.id, &in, P(req)->owner, &out, err, sizeof err);
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
                int r = svc_operators_list(sv, c.id, &out, err, sizeof err);
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
        int r = svc_operators_unsubscribe(sv, c.id, req->params[1], prune && strcmp(prune, "true") == 0, P(req)->owner,
                                          &out, err, sizeof err);
        api_answer(resp, r, err, "subscription", r == 1 ? 202 : 200, out);
out:
        cluster_free(&c);
}

/* The preview's added subscriptions, from body.subscriptions (absent:
 * none). */
static struct resolve_subscription *read_extra(json_object *body, size_t *n, struct jctx *c) {
        *n = 0;
        if (c->r < 0)
                return NULL;
        json_object *a = jget_array(body, "subscriptions", OP_MAX_LIST, c);
        if (!a) {
                if (c->r < 0)
                        jrefuse(c, "field \"subscriptions\" must be a list of at most %d subscriptions", OP_MAX_LIST);
                return NULL;
        }
        size_t len = json_object_array_length(a);
        struct resolve_subscription *v = calloc(len + 1, sizeof *v);
        if (!v) {
                joom(c);
                return NULL;
        }
        for (size_t i = 0; i < len && c->r == 0; i++) {
                struct op_subscribe s = { 0 };
                read_subscription(json_object_array_get_idx(a, i), &s, c);
                v[(*n)++] = (struct resolve_subscription) { s.package, s.channel, s.catalog, s.version_range,
                                                            s.skip_dependencies };
        }
        return v;
}

void api_operators_resolve(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        _cleanup_free_ struct resolve_subscription *extra = NULL;
        _cleanup_free_ const char **up = NULL;
        struct op_options o = { 0 };
        json_object *out = NULL;
        char err[2048] = "";
        struct jctx jc = { err, sizeof err, 0 };
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        extra = read_extra(req->body, &o.n_extra, &jc);
        up = read_names(req->body, "upgrade", &o.n_upgrade, &jc);
        jget_bool(req->body, "upgrade_all", &o.upgrade_all, &jc);
        jget_bool(req->body, "prune", &o.prune, &jc);
        if (!api_read_ok(resp, &jc))
                goto out;
        o.extra = extra;
        o.upgrade = up;
        int r = svc_operators_preview(sv, c.id, &o, &out, err, sizeof err);
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
        struct jctx jc = { err, sizeof err, 0 };
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        pkgs = read_names(req->body, "packages", &o.n_upgrade, &jc);
        jget_bool(req->body, "all", &o.upgrade_all, &jc);
        jget_bool(req->body, "prune", &o.prune, &jc);
        if (!api_read_ok(resp, &jc))
                goto out;
        if (!o.upgrade_all && o.n_upgrade == 0) {
                http_error(resp, 400, "name the packages to upgrade, or set \"all\": true");
                goto out;
        }
        o.upgrade = pkgs;
        int r = svc_operators_upgrade(sv, c.id, &o, P(req)->owner, &out, err, sizeof err);
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
        struct jctx jc = { err, sizeof err, 0 };
        bool enabled = false;
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if (!json_object_is_type(req->body, json_type_object) || json_object_object_length(req->body) != 1 ||
            !read_cleanup(req->body, &enabled, &jc)) {
                if (jc.r == 0)
                        jfail(&jc, "a subscription's PATCH is {\"cleanup\": {\"enabled\": true|false}}");
                api_read_ok(resp, &jc);
                goto out;
        }
        int r = svc_operators_set_cleanup(sv, c.id, req->params[1], enabled, P(req)->owner, &out, err, sizeof err);
        api_answer(resp, r, err, "subscription", 200, out);
out:
        cluster_free(&c);
}
