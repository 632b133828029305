/* The route table of the API (method, path pattern, handler, flags, name)
 * and the authentication hook the HTTP layer runs before any handler:
 * the token's signature, its revocation, and agent-only routes. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "svc/iso.h"
#include "protocol.h"

void api_after(void *app, const struct http_route *route, const struct http_request *req, int status) {
        const struct principal *p = P(req);
        if (!p || p->kind != PRINCIPAL_ADMIN || !strcmp(req->method, "GET") || !strcmp(req->method, "HEAD"))
                return;
        svc_audit(api_svc(app), admin_role_to_string(p->role), p->owner, route->name, req->method, req->path, status);
}

bool api_auth(void *app, const struct http_route *route, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct principal *p;

        if (!req->bearer) {
                http_error(resp, 401, "an Authorization: Bearer token is required");
                return false;
        }
        char err[256] = "";
        struct api_auth *a = calloc(1, sizeof *a);
        int r = -ENOMEM;
        if (a) {
                infra_env_init(&a->ie);
                r = svc_principal_ie(sv, req->bearer, &a->p, &a->ie, err, sizeof err);
                a->have_ie = r >= 0 && a->ie.id != NULL;
        }
        if (r < 0) {
                api_auth_free(a);
                if (*err)
                        http_error(resp, 401, "%s", err);
                else
                        api_store_error(resp, r, "token");
                return false;
        }
        req->auth = a;
        p = &a->p;
        /* Releases, catalogs and operand sets may be large: an infra admin's. */
        req->large_body_ok = p->kind == PRINCIPAL_ADMIN && p->role == ROLE_INFRA_ADMIN;
        /* Routes only a host's agent calls (its heartbeat, its results, its
         * install progress): a person's token would forge them. */
        if ((route->flags & ROUTE_AGENT) && p->kind != PRINCIPAL_AGENT) {
                http_error(resp, 403, "this call is for a host's agent; people's tokens are refused here");
                return false;
        }
        return true;
}

void api_auth_free(void *auth) {
        struct api_auth *a = auth;
        if (a)
                infra_env_free(&a->ie);
        free(a);
}


/* The paths come from common/protocol.h (MUSTER_PATH_*), with placeholders
 * where the clients put ids. */
#define API MUSTER_API_PREFIX
#define ID "{id}"
#define IE_HOST API MUSTER_PATH_HOST(ID, ID)
#define CLUSTER API MUSTER_PATH_CLUSTER(ID)
#define VERSION "{version}"
const struct http_route api_routes[] = {
        { "GET", MUSTER_PATH_HEALTHZ, api_healthz, ROUTE_PUBLIC, "healthz" },
        { "GET", MUSTER_PATH_READYZ, api_readyz, ROUTE_PUBLIC, "readyz" },
        { "GET", MUSTER_PATH_METRICS, api_metrics, ROUTE_TOKEN_OPTIONAL, "metrics" },
        { "GET", API MUSTER_PATH_VERSION, api_version, ROUTE_PUBLIC, "version" },
        { "GET", API MUSTER_PATH_OPENAPI_JSON, api_openapi_json, ROUTE_PUBLIC, "openapi_json" },
        { "GET", API MUSTER_PATH_OPENAPI_YAML, api_openapi_yaml, ROUTE_PUBLIC, "openapi_yaml" },
        { "POST", API MUSTER_PATH_INFRA_ENVS, api_infra_env_create, ROUTE_BODY, "infra_env_create" },
        { "GET", API MUSTER_PATH_INFRA_ENVS, api_infra_env_list, 0, "infra_env_list" },
        { "GET", API MUSTER_PATH_INFRA_ENV(ID), api_infra_env_get, 0, "infra_env_get" },
        { "DELETE", API MUSTER_PATH_INFRA_ENV(ID), api_infra_env_delete, 0, "infra_env_delete" },
        { "PATCH", API MUSTER_PATH_INFRA_ENV(ID), api_infra_env_patch, ROUTE_BODY, "infra_env_patch" },
        { "POST", API MUSTER_PATH_INFRA_ENV(ID) MUSTER_ACTION_ROTATE_TOKEN, api_infra_env_rotate_token, 0, "infra_env_rotate_token" },
        { "GET", API MUSTER_PATH_INFRA_ENV_IMAGE(ID), api_iso_download, 0, "infra_env_image" },
        { "HEAD", API MUSTER_PATH_INFRA_ENV_IMAGE(ID), api_iso_download, 0, "infra_env_image_head" },
        { "GET", API MUSTER_PATH_INFRA_ENV_PXE(ID, "{file}"), api_pxe_download, ROUTE_QUERY_TOKEN, "infra_env_pxe" },
        { "HEAD", API MUSTER_PATH_INFRA_ENV_PXE(ID, "{file}"), api_pxe_download, ROUTE_QUERY_TOKEN,
          "infra_env_pxe_head" },
        { "POST", API MUSTER_PATH_INFRA_ENV_HOSTS(ID), api_host_register, ROUTE_BODY | ROUTE_AGENT, "host_register" },
        { "GET", API MUSTER_PATH_INFRA_ENV_HOSTS(ID), api_infra_env_hosts_list, 0, "infra_env_hosts_list" },
        { "GET", IE_HOST, api_host_get, 0, "host_get" },
        { "PATCH", IE_HOST, api_host_patch, ROUTE_BODY, "host_patch" },
        { "DELETE", IE_HOST, api_host_delete, 0, "host_delete" },
        { "POST", IE_HOST MUSTER_ACTION_BIND, api_host_bind, ROUTE_BODY, "host_bind" },
        { "POST", IE_HOST MUSTER_ACTION_UNBIND, api_host_unbind, 0, "host_unbind" },
        { "POST", IE_HOST MUSTER_ACTION_INSTALL, api_host_install, 0, "host_install" },
        { "POST", IE_HOST MUSTER_ACTION_ROTATE_TOKEN, api_host_rotate_token, 0, "host_rotate_token" },
        { "POST", IE_HOST MUSTER_ACTION_GATHER_LOGS, api_host_gather_logs, 0, "host_gather_logs" },
        { "POST", IE_HOST MUSTER_ACTION_RECLAIM, api_host_reclaim, ROUTE_BODY, "host_reclaim" },
        { "GET", API MUSTER_PATH_HOST_LOGS(ID, ID), api_host_logs_get, 0, "host_logs_get" },
        { "PUT", API MUSTER_PATH_HOST_LOGS(ID, ID), api_host_logs_put, ROUTE_UPLOAD | ROUTE_AGENT, "host_logs_put" },
        { "GET", API MUSTER_PATH_HOST_INSTRUCTIONS(ID, ID), api_host_instructions, ROUTE_AGENT, "host_instructions" },
        { "POST", API MUSTER_PATH_HOST_INSTRUCTIONS(ID, ID), api_host_step_result, ROUTE_BODY | ROUTE_BODY_TEXT | ROUTE_AGENT,
          "host_step_result" },
        { "GET", API MUSTER_PATH_HOSTS, api_hosts_list, 0, "hosts_list" },
        { "POST", API MUSTER_PATH_CLUSTERS, api_cluster_create, ROUTE_BODY, "cluster_create" },
        { "GET", API MUSTER_PATH_CLUSTERS, api_cluster_list, 0, "cluster_list" },
        { "GET", CLUSTER, api_cluster_get, 0, "cluster_get" },
        { "PATCH", CLUSTER, api_cluster_patch, ROUTE_BODY, "cluster_patch" },
        { "DELETE", CLUSTER, api_cluster_delete, 0, "cluster_delete" },
        { "POST", CLUSTER MUSTER_ACTION_INSTALL, api_cluster_install, 0, "cluster_install" },
        { "POST", CLUSTER MUSTER_ACTION_UPGRADE, api_cluster_upgrade, ROUTE_BODY, "cluster_upgrade" },
        { "POST", CLUSTER MUSTER_ACTION_RESET, api_cluster_reset, 0, "cluster_reset" },
        { "POST", CLUSTER MUSTER_ACTION_CANCEL, api_cluster_cancel, 0, "cluster_cancel" },
        { "POST", API MUSTER_PATH_CLUSTER_SUBSCRIPTIONS(ID), api_subscription_create, ROUTE_BODY,
          "subscription_create" },
        { "GET", API MUSTER_PATH_CLUSTER_SUBSCRIPTIONS(ID), api_subscription_list, 0, "subscription_list" },
        { "DELETE", API MUSTER_PATH_CLUSTER_SUBSCRIPTION(ID, "{pkg}"), api_subscription_delete, 0,
          "subscription_delete" },
        { "PATCH", API MUSTER_PATH_CLUSTER_SUBSCRIPTION(ID, "{pkg}"), api_subscription_patch, ROUTE_BODY,
          "subscription_patch" },
        { "POST", API MUSTER_PATH_CLUSTER_OPERANDS(ID), api_operand_apply, ROUTE_BODY | ROUTE_LARGE_BODY,
          "operand_apply" },
        { "GET", API MUSTER_PATH_CLUSTER_OPERANDS(ID), api_operand_list, 0, "operand_list" },
        { "DELETE", API MUSTER_PATH_CLUSTER_OPERAND(ID, ID), api_operand_delete, 0, "operand_delete" },
        { "POST", API MUSTER_PATH_CLUSTER_OPERATORS_RESOLVE(ID), api_operators_resolve, ROUTE_BODY,
          "operators_resolve" },
        { "POST", API MUSTER_PATH_CLUSTER_OPERATORS_UPGRADE(ID), api_operators_upgrade, ROUTE_BODY,
          "operators_upgrade" },
        { "GET", API MUSTER_PATH_CLUSTER_PAYLOADS(ID), api_payload_list, 0, "payload_list" },
        { "GET", API MUSTER_PATH_CLUSTER_PAYLOAD(ID, "{rev}"), api_payload_get, 0, "payload_get" },
        { "PUT", API MUSTER_PATH_HOST_PROGRESS(ID, ID), api_host_progress, ROUTE_BODY | ROUTE_AGENT, "host_progress" },
        { "POST", API MUSTER_PATH_RELEASES, api_release_import, ROUTE_BODY | ROUTE_LARGE_BODY, "release_import" },
        { "GET", API MUSTER_PATH_RELEASES, api_release_list, 0, "release_list" },
        { "GET", API MUSTER_PATH_RELEASE(VERSION), api_release_get, 0, "release_get" },
        { "DELETE", API MUSTER_PATH_RELEASE(VERSION), api_release_delete, 0, "release_delete" },
        { "GET", API MUSTER_PATH_RELEASE_PREVIEW(VERSION), api_release_preview, 0, "release_preview" },
        { "GET", API MUSTER_PATH_RELEASE_OS_IMAGE(VERSION), api_release_os_image, 0, "release_os_image" },
        { "GET", API MUSTER_PATH_SIGNING_KEY, api_signing_key, 0, "signing_key" },
        { "POST", API MUSTER_PATH_CATALOGS, api_catalog_add, ROUTE_BODY | ROUTE_LARGE_BODY, "catalog_add" },
        { "GET", API MUSTER_PATH_CATALOGS, api_catalog_list, 0, "catalog_list" },
        { "GET", API MUSTER_PATH_CATALOG(ID), api_catalog_get, 0, "catalog_get" },
        { "DELETE", API MUSTER_PATH_CATALOG(ID), api_catalog_delete, 0, "catalog_delete" },
        { "POST", API MUSTER_PATH_ADDON_PROXIES, api_addon_proxy_create, ROUTE_BODY, "addon_proxy_create" },
        { "GET", API MUSTER_PATH_ADDON_PROXIES, api_addon_proxy_list, 0, "addon_proxy_list" },
        { "GET", API MUSTER_PATH_ADDON_PROXY(ID), api_addon_proxy_get, 0, "addon_proxy_get" },
        { "PATCH", API MUSTER_PATH_ADDON_PROXY(ID), api_addon_proxy_patch, ROUTE_BODY, "addon_proxy_patch" },
        { "DELETE", API MUSTER_PATH_ADDON_PROXY(ID), api_addon_proxy_delete, 0, "addon_proxy_delete" },
        { "POST", API MUSTER_PATH_ADDON_PROXY_ACTION(ID, "{action}"), api_addon_proxy_action, 0,
          "addon_proxy_action" },
        { "GET", API MUSTER_PATH_ADDON_RELEASES, api_addon_release_list, 0, "addon_release_list" },
        { "GET", API MUSTER_PATH_EVENTS, api_events_list, 0, "events_list" },
        { "POST", API MUSTER_PATH_TOKENS, api_token_create, ROUTE_BODY, "token_create" },
        { "GET", API MUSTER_PATH_TOKENS, api_token_list, 0, "token_list" },
        { "POST", API MUSTER_PATH_TOKEN(ID) MUSTER_ACTION_REVOKE, api_token_revoke, 0, "token_revoke" },
};
const size_t api_n_routes = sizeof api_routes / sizeof *api_routes;
