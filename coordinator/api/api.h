/* The API layer (DESIGN §2, §4): the route table, the authentication hook,
 * and one file per resource whose handlers parse and authorize a request,
 * call a service and write the answer. The daemon hands the HTTP server
 * a struct api as every handler's `app`. */
#pragma once
#include "domain/auth.h"
#include "http/http.h"
#include "jsonread.h"
#include "model.h"
#include "svc/svc.h"

/* What /readyz answers while musterd serves plain HTTP. */
#define API_READY_INSECURE                                                                             \
        "ready; warning: plain HTTP (--insecure-http): tokens, pull secrets and payloads cross the " \
        "network unencrypted"

struct api {
        struct svc *svc;
        struct http_server *http; /* its own counters in /metrics */
        /* More /metrics text from the layer that runs the API (the daemon's
         * controllers), appended to out (at most max bytes); may be NULL. */
        int (*metrics)(void *ctx, struct growbuf *out, size_t max);
        void *metrics_ctx;
        bool insecure_http; /* serving plain HTTP (--insecure-http): /readyz says so */
        /* The OpenAPI document as read at start and as JSON (NULL: none;
         * the daemon's, for as long as the server runs). */
        const char *openapi_yaml, *openapi_json;
};

/* The route table, and the hook the HTTP layer runs before a handler:
 * the token checked (signature, revocation, agent-only routes). */
extern const struct http_route api_routes[];
extern const size_t api_n_routes;
bool api_auth(void *app, const struct http_route *route, struct http_request *req, struct http_response *resp);
void api_auth_free(void *auth);
/* The HTTP layer's after-hook: every change (not GET or HEAD) a person's
 * token asked for is audited (svc_audit), answered or refused. */
void api_after(void *app, const struct http_route *route, const struct http_request *req, int status);

/* A handler's services. */
static inline struct svc *api_svc(void *app) {
        return ((struct api *) app)->svc;
}

/* What api_auth leaves in req->auth: the principal first (P), then, for an
 * infra-env's agent token, the infra-env read to check it, which the
 * request's handler takes instead of reading it again (api_load_infra_env). */
struct api_auth {
        struct principal p;
        struct infra_env ie;
        bool have_ie;
};
#define P(req) ((const struct principal *) (req)->auth)

/* Answer a store's (or a service's) -errno with words about `what`; its
 * status is http/'s one table's (http_status_of_errno: the API adds words,
 * never a status of its own); a 500 is logged. */
void api_store_error(struct http_response *resp, int r, const char *what);
/* A service's answer: -errno with the service's own words in err (none:
 * api_store_error's about `what`), its status from http/'s one table
 * (http_status_of_errno); a 500 is logged. */
void api_svc_error(struct http_response *resp, int r, const char *err, const char *what);

/* A service's result: api_svc_error's answer for r < 0, else `status`
 * with out (taken over). */
void api_answer(struct http_response *resp, int r, const char *err, const char *what, int status, json_object *out);

/* Whether the request's members read so far through c (jsonread.h's
 * reader) passed: else answers c's refusal (its status the table's:
 * -EINVAL 400, -ENOMEM 500) and returns false. */
bool api_read_ok(struct http_response *resp, const struct jctx *c);

/* 403 unless the caller is an administrator (any role). */
bool api_need_admin(struct http_request *req, struct http_response *resp);
/* 403 unless the caller is an infra admin. */
bool api_need_infra_admin(struct http_request *req, struct http_response *resp);

/* A ROUTE_BODY_TEXT body walked once: its members but `raw` parsed into a
 * new object (*rest, the caller's to put), and raw's value left as its
 * bytes (*span; p NULL when absent). 0, or -1 with a 400 in resp. */
int api_body_split(const struct http_request *req, struct http_response *resp, const char *raw, json_object **rest,
                   struct json_span *span);
/* The infra-env `id` if the caller may use it; else answers and returns
 * -errno. ie is always freeable. */
int api_load_infra_env(struct svc *sv, struct http_request *req, struct http_response *resp, const char *id,
                       struct infra_env *ie);
/* The host of /infra-envs/{params[0]}/hosts/{params[1]} if the caller may
 * do op on it (auth_host_may, the one rule for every host route: 403 or 404
 * answered otherwise). ie and h are always freeable. */
int api_load_host(struct svc *sv, struct http_request *req, struct http_response *resp, enum host_op op,
                  struct infra_env *ie, struct host *h);
/* The same, read brief (svc_host_get_brief). */
int api_load_host_brief(struct svc *sv, struct http_request *req, struct http_response *resp, enum host_op op,
                        struct infra_env *ie, struct host *h);
/* The cluster `id` if the caller may see it (agents: never). */
int api_load_cluster(struct svc *sv, struct http_request *req, struct http_response *resp, const char *id,
                     struct cluster *c);

/* The query parameter `key` as an integer in 0..max into *out (left alone
 * when absent). 0, or answers 400 and returns -EINVAL. */
int api_query_i64(struct http_request *req, struct http_response *resp, const char *key, int64_t max, int64_t *out);
/* ?limit= (at most the configured page size) and ?after= into *pg (offset 0).
 * 0, or answers 400 and returns -EINVAL. */
int api_query_page(struct svc *sv, struct http_request *req, struct http_response *resp, struct list_page *pg);

/* A host as answered to people: host_to_json with `flags`, plus the
 * installation disk it would install to now ("installation_disk_id",
 * "installation_disk_path"; null when no disk fits). */
json_object *api_host_json(struct svc *sv, struct host *h, unsigned flags);
/* 200 with the host as stored now (after a change), model flags as
 * host_to_json's; or the store's error. */
void api_reply_host(struct svc *sv, struct http_response *resp, const char *infra_env_id, const char *host_id,
                    unsigned flags);

/* body.files ([{path, content}], at most max: `what` names the whole in a
 * refusal) as files pointing into the body (*out malloc'd). 0, or answers
 * 400 (500) and returns -errno. */
struct catalog_file;
int api_read_files(json_object *body, size_t max, const char *what, struct catalog_file **out, size_t *n,
                   struct http_response *resp);

/* An answer of 204 with no body. */
void api_no_content(struct http_response *resp);

/* Clusters and binding (clusters.c). */
void api_cluster_create(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_list(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_get(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_patch(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_delete(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_install(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_upgrade(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_reset(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_cancel(void *app, struct http_request *req, struct http_response *resp);
void api_host_install(void *app, struct http_request *req, struct http_response *resp);
void api_host_rotate_token(void *app, struct http_request *req, struct http_response *resp);
void api_host_bind(void *app, struct http_request *req, struct http_response *resp);
void api_host_unbind(void *app, struct http_request *req, struct http_response *resp);

/* A host's pending actions and its logs (pending.c). */
void api_host_gather_logs(void *app, struct http_request *req, struct http_response *resp);
void api_host_logs_get(void *app, struct http_request *req, struct http_response *resp);
void api_host_logs_put(void *app, struct http_request *req, struct http_response *resp);
void api_host_reclaim(void *app, struct http_request *req, struct http_response *resp);

/* Releases and the signing key (releases.c). */
void api_release_import(void *app, struct http_request *req, struct http_response *resp);
void api_release_list(void *app, struct http_request *req, struct http_response *resp);
void api_release_get(void *app, struct http_request *req, struct http_response *resp);
void api_release_delete(void *app, struct http_request *req, struct http_response *resp);
void api_release_preview(void *app, struct http_request *req, struct http_response *resp);
void api_release_os_image(void *app, struct http_request *req, struct http_response *resp);
void api_signing_key(void *app, struct http_request *req, struct http_response *resp);
void api_pxe_download(void *app, struct http_request *req, struct http_response *resp);

/* A cluster's operators: subscriptions, preview, upgrade (operators.c). */
void api_subscription_create(void *app, struct http_request *req, struct http_response *resp);
void api_subscription_list(void *app, struct http_request *req, struct http_response *resp);
void api_subscription_delete(void *app, struct http_request *req, struct http_response *resp);
void api_subscription_patch(void *app, struct http_request *req, struct http_response *resp);
/* A cluster's operands (operands.c). */
void api_operand_apply(void *app, struct http_request *req, struct http_response *resp);
void api_operand_list(void *app, struct http_request *req, struct http_response *resp);
void api_operand_delete(void *app, struct http_request *req, struct http_response *resp);
void api_operators_resolve(void *app, struct http_request *req, struct http_response *resp);
void api_operators_upgrade(void *app, struct http_request *req, struct http_response *resp);
/* Add-on proxies and their releases (addons.c). */
void api_addon_proxy_create(void *app, struct http_request *req, struct http_response *resp);
void api_addon_proxy_list(void *app, struct http_request *req, struct http_response *resp);
void api_addon_proxy_get(void *app, struct http_request *req, struct http_response *resp);
void api_addon_proxy_patch(void *app, struct http_request *req, struct http_response *resp);
void api_addon_proxy_delete(void *app, struct http_request *req, struct http_response *resp);
void api_addon_proxy_action(void *app, struct http_request *req, struct http_response *resp);
void api_addon_release_list(void *app, struct http_request *req, struct http_response *resp);

/* Operator catalogs (catalogs.c). */
void api_catalog_add(void *app, struct http_request *req, struct http_response *resp);
void api_catalog_list(void *app, struct http_request *req, struct http_response *resp);
void api_catalog_get(void *app, struct http_request *req, struct http_response *resp);
void api_catalog_delete(void *app, struct http_request *req, struct http_response *resp);

/* Probes and metrics (health.c). */
void api_healthz(void *app, struct http_request *req, struct http_response *resp);
void api_readyz(void *app, struct http_request *req, struct http_response *resp);
void api_version(void *app, struct http_request *req, struct http_response *resp);
/* The OpenAPI document (openapi.c): as JSON, as YAML; 404 when none was read. */
void api_openapi_json(void *app, struct http_request *req, struct http_response *resp);
void api_openapi_yaml(void *app, struct http_request *req, struct http_response *resp);
void api_metrics(void *app, struct http_request *req, struct http_response *resp);

/* Infra-envs (infra_envs.c) and their discovery ISO (iso.c). */
void api_infra_env_create(void *app, struct http_request *req, struct http_response *resp);
void api_infra_env_list(void *app, struct http_request *req, struct http_response *resp);
void api_infra_env_get(void *app, struct http_request *req, struct http_response *resp);
void api_infra_env_delete(void *app, struct http_request *req, struct http_response *resp);
void api_infra_env_patch(void *app, struct http_request *req, struct http_response *resp);
void api_infra_env_rotate_token(void *app, struct http_request *req, struct http_response *resp);
void api_iso_download(void *app, struct http_request *req, struct http_response *resp);

/* What agents call (agents.c). */
void api_host_register(void *app, struct http_request *req, struct http_response *resp);
void api_host_instructions(void *app, struct http_request *req, struct http_response *resp);
void api_host_step_result(void *app, struct http_request *req, struct http_response *resp);

/* Hosts as people see them (hosts.c). */
void api_host_get(void *app, struct http_request *req, struct http_response *resp);
void api_hosts_list(void *app, struct http_request *req, struct http_response *resp);
void api_infra_env_hosts_list(void *app, struct http_request *req, struct http_response *resp);
void api_host_patch(void *app, struct http_request *req, struct http_response *resp);
void api_host_delete(void *app, struct http_request *req, struct http_response *resp);

/* Events (events.c) and people's tokens (tokens.c). */
void api_events_list(void *app, struct http_request *req, struct http_response *resp);
void api_token_create(void *app, struct http_request *req, struct http_response *resp);
void api_token_list(void *app, struct http_request *req, struct http_response *resp);
void api_token_revoke(void *app, struct http_request *req, struct http_response *resp);

/* Installation (install.c): the install action, progress reports and
 * payload revisions. */
void api_host_progress(void *app, struct http_request *req, struct http_response *resp);
void api_payload_list(void *app, struct http_request *req, struct http_response *resp);
void api_payload_get(void *app, struct http_request *req, struct http_response *resp);
