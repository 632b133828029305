/* The route paths of common/protocol.h against musterd's route table: each
 * path a client builds from the MUSTER_PATH_* macros (printf form, sample
 * ids) reaches, through the server's own lookup, the route it is meant for
 * with the ids as its parameters; every route of the table is reached by
 * one; and a few formatted paths are spelled out as they go on the wire. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "http/http.h"
#include "api/api.h"
#include "protocol.h"

/* Sample ids. */
#define IEID "0b7f5d2e-3c1a-4e8f-9a6b-2d4c8e1f0a3b"
#define HID "5e9c1b7a-8d2f-4a3e-b6c0-7f1d9e2a4b8c"
#define CID "c3a8e6f1-2b9d-4c7e-8a1f-6d5b3e9c0a2f"
#define VER "4.17.3"
#define TOK "tok-7f3a"
#define API MUSTER_API_PREFIX
#define S "%s" /* a client's conversion for one id */

static char *pathf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static char *pathf(char *buf, size_t n, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(buf, n, fmt, ap);
        va_end(ap);
        cr_assert(k > 0 && (size_t) k < n, "path too long: %s", fmt);
        return buf;
}
/* A path formatted into a buffer that lives for the enclosing statement. */
#define PATH(...) pathf((char[512]) { 0 }, 512, __VA_ARGS__)

static bool hit[128];

/* method + path must reach the route named `name`, with the parameters
 * p0, p1 (NULL: fewer). */
static void expect(const char *method, const char *path, const char *name, const char *p0, const char *p1) {
        struct http_request req = { 0 };
        bool known;
        size_t i = http_route_find(api_routes, api_n_routes, method, path, &req, &known);
        cr_assert_neq(i, HTTP_ROUTE_UNMATCHED, "%s %s matches no route (path known: %d)", method, path, known);
        cr_assert_str_eq(api_routes[i].name, name, "%s %s", method, path);
        cr_assert_eq(req.n_params, !!p0 + !!p1, "%s %s: %d parameters", method, path, req.n_params);
        if (p0)
                cr_assert_str_eq(req.params[0], p0);
        if (p1)
                cr_assert_str_eq(req.params[1], p1);
        cr_assert_lt(i, sizeof hit / sizeof *hit);
        hit[i] = true;
}

Test(routes, every_client_path_reaches_its_route_and_every_route_is_reached) {
        cr_assert_leq(api_n_routes, sizeof hit / sizeof *hit);

        expect("GET", MUSTER_PATH_HEALTHZ, "healthz", NULL, NULL);
        expect("GET", MUSTER_PATH_READYZ, "readyz", NULL, NULL);
        expect("GET", MUSTER_PATH_METRICS, "metrics", NULL, NULL);

        /* Infra-envs: musterctl (infra_env.c, download.c, resource.c). */
        expect("POST", API MUSTER_PATH_INFRA_ENVS, "infra_env_create", NULL, NULL);
        expect("GET", API MUSTER_PATH_INFRA_ENVS, "infra_env_list", NULL, NULL);
        expect("GET", PATH(API MUSTER_PATH_INFRA_ENV(S), IEID), "infra_env_get", IEID, NULL);
        expect("GET", PATH(API MUSTER_PATH_ITEM(S, S), MUSTER_PATH_INFRA_ENVS, IEID), "infra_env_get", IEID, NULL);
        expect("DELETE", PATH(API MUSTER_PATH_ITEM(S, S), MUSTER_PATH_INFRA_ENVS, IEID), "infra_env_delete", IEID,
               NULL);
        expect("PATCH", PATH(API MUSTER_PATH_INFRA_ENV(S), IEID), "infra_env_patch", IEID, NULL);
        expect("POST", PATH(API MUSTER_PATH_INFRA_ENV(S) MUSTER_ACTION_ROTATE_TOKEN, IEID), "infra_env_rotate_token",
               IEID, NULL);
        expect("GET", PATH(API MUSTER_PATH_INFRA_ENV_IMAGE(S), IEID), "infra_env_image", IEID, NULL);
        expect("HEAD", PATH(API MUSTER_PATH_INFRA_ENV_IMAGE(S), IEID), "infra_env_image_head", IEID, NULL);
        expect("GET", PATH(API MUSTER_PATH_INFRA_ENV_PXE(S, "initrd"), IEID), "infra_env_pxe", IEID, "initrd");
        expect("HEAD", PATH(API MUSTER_PATH_INFRA_ENV_PXE(S, "boot.ipxe"), IEID), "infra_env_pxe_head", IEID,
               "boot.ipxe");

        /* Hosts: the agent (run.c) and musterctl (host.c: the host path plus
         * an action suffix). */
        expect("POST", PATH(API MUSTER_PATH_INFRA_ENV_HOSTS(S), IEID), "host_register", IEID, NULL);
        expect("GET", PATH(API MUSTER_PATH_INFRA_ENV_HOSTS(S), IEID), "infra_env_hosts_list", IEID, NULL);
        expect("GET", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, ""), "host_get", IEID, HID);
        expect("PATCH", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, ""), "host_patch", IEID, HID);
        expect("DELETE", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, ""), "host_delete", IEID, HID);
        expect("POST", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, MUSTER_ACTION_BIND), "host_bind", IEID, HID);
        expect("POST", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, MUSTER_ACTION_UNBIND), "host_unbind", IEID, HID);
        expect("POST", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, MUSTER_ACTION_INSTALL), "host_install", IEID, HID);
        expect("POST", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, MUSTER_ACTION_ROTATE_TOKEN),
               "host_rotate_token", IEID, HID);
        expect("GET", PATH(API MUSTER_PATH_HOST_INSTRUCTIONS(S, S), IEID, HID), "host_instructions", IEID, HID);
        expect("POST", PATH(API MUSTER_PATH_HOST_INSTRUCTIONS(S, S), IEID, HID), "host_step_result", IEID, HID);
        expect("PUT", PATH(API MUSTER_PATH_HOST_PROGRESS(S, S), IEID, HID), "host_progress", IEID, HID);
        /* A host's logs (the agent's upload, musterctl host logs) and reclaim. */
        expect("PUT", PATH(API MUSTER_PATH_HOST_LOGS(S, S), IEID, HID), "host_logs_put", IEID, HID);
        expect("GET", PATH(API MUSTER_PATH_HOST_LOGS(S, S), IEID, HID), "host_logs_get", IEID, HID);
        expect("POST", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, MUSTER_ACTION_GATHER_LOGS), "host_gather_logs",
               IEID, HID);
        expect("POST", PATH(API MUSTER_PATH_HOST(S, S) S, IEID, HID, MUSTER_ACTION_RECLAIM), "host_reclaim", IEID,
               HID);
        expect("GET", PATH(API MUSTER_PATH_HOSTS S, ""), "hosts_list", NULL, NULL);

        /* Clusters: musterctl (cluster.c, install.c, lookup by ctl_cluster_path
         * plus a suffix, watch.c) and the payload URL of the install step. */
        expect("POST", API MUSTER_PATH_CLUSTERS, "cluster_create", NULL, NULL);
        expect("GET", API MUSTER_PATH_CLUSTERS, "cluster_list", NULL, NULL);
        expect("GET", PATH(API MUSTER_PATH_CLUSTER(S) S, CID, ""), "cluster_get", CID, NULL);
        expect("PATCH", PATH(API MUSTER_PATH_CLUSTER(S), CID), "cluster_patch", CID, NULL);
        expect("DELETE", PATH(API MUSTER_PATH_ITEM(S, S), MUSTER_PATH_CLUSTERS, CID), "cluster_delete", CID, NULL);
        expect("POST", PATH(API MUSTER_PATH_CLUSTER(S) S, CID, MUSTER_ACTION_INSTALL), "cluster_install", CID, NULL);
        expect("POST", PATH(API MUSTER_PATH_CLUSTER(S) S, CID, MUSTER_ACTION_UPGRADE), "cluster_upgrade", CID, NULL);
        expect("POST", PATH(API MUSTER_PATH_CLUSTER(S) S, CID, MUSTER_ACTION_RESET), "cluster_reset", CID, NULL);
        expect("POST", PATH(API MUSTER_PATH_CLUSTER(S) S, CID, MUSTER_ACTION_CANCEL), "cluster_cancel", CID, NULL);
        expect("POST", PATH(API MUSTER_PATH_CLUSTER_SUBSCRIPTIONS(S), CID), "subscription_create", CID, NULL);
        expect("GET", PATH(API MUSTER_PATH_CLUSTER_SUBSCRIPTIONS(S), CID), "subscription_list", CID, NULL);
        expect("DELETE", PATH(API MUSTER_PATH_CLUSTER_SUBSCRIPTION(S, S), CID, "etcd"), "subscription_delete", CID,
               "etcd");
        expect("POST", PATH(API MUSTER_PATH_CLUSTER_OPERATORS_RESOLVE(S), CID), "operators_resolve", CID, NULL);
        expect("POST", PATH(API MUSTER_PATH_CLUSTER_OPERATORS_UPGRADE(S), CID), "operators_upgrade", CID, NULL);
        expect("GET", PATH(API MUSTER_PATH_CLUSTER_PAYLOADS(S), CID), "payload_list", CID, NULL);
        expect("GET", PATH(API MUSTER_PATH_CLUSTER_PAYLOAD("%s", "%ld"), CID, 7L), "payload_get", CID, "7");
        expect("GET", PATH(MUSTER_PAYLOAD_PATH_FMT, CID, 12LL), "payload_get", CID, "12");

        /* Releases, the signing key, the version, events, tokens: musterctl
         * (release.c, signingkey.c, version.c, event.c, token.c) and the OS image URL of a path
         * release. */
        expect("POST", API MUSTER_PATH_RELEASES, "release_import", NULL, NULL);
        expect("GET", API MUSTER_PATH_RELEASES, "release_list", NULL, NULL);
        expect("GET", PATH(API MUSTER_PATH_RELEASE(S), VER), "release_get", VER, NULL);
        expect("DELETE", PATH(API MUSTER_PATH_RELEASE(S), VER), "release_delete", VER, NULL);
        expect("GET", PATH(API MUSTER_PATH_RELEASE_PREVIEW(S) S, VER, ""), "release_preview", VER, NULL);
        expect("GET", PATH(API MUSTER_PATH_RELEASE_OS_IMAGE(S), VER), "release_os_image", VER, NULL);
        expect("GET", PATH(MUSTER_OS_IMAGE_PATH_FMT, VER), "release_os_image", VER, NULL);
        expect("GET", API MUSTER_PATH_SIGNING_KEY, "signing_key", NULL, NULL);
        expect("GET", API MUSTER_PATH_VERSION, "version", NULL, NULL); /* musterctl's version.c */
        expect("GET", API MUSTER_PATH_OPENAPI_JSON, "openapi_json", NULL, NULL); /* the API described */
        expect("GET", API MUSTER_PATH_OPENAPI_YAML, "openapi_yaml", NULL, NULL);
        expect("GET", PATH(API MUSTER_PATH_EVENTS S, ""), "events_list", NULL, NULL);
        /* Catalogs: musterctl (catalog.c), by id or (GET) by name. */
        expect("POST", API MUSTER_PATH_CATALOGS, "catalog_add", NULL, NULL);
        expect("GET", API MUSTER_PATH_CATALOGS, "catalog_list", NULL, NULL);
        expect("GET", PATH(API MUSTER_PATH_CATALOG(S), "community"), "catalog_get", "community", NULL);
        expect("GET", PATH(API MUSTER_PATH_CATALOG(S), CID), "catalog_get", CID, NULL);
        expect("DELETE", PATH(API MUSTER_PATH_CATALOG(S), CID), "catalog_delete", CID, NULL);
        /* Operands and a subscription's cleanup: musterctl (operand.c, operator.c). */
        expect("POST", PATH(API MUSTER_PATH_CLUSTER_OPERANDS(S), CID), "operand_apply", CID, NULL);
        expect("GET", PATH(API MUSTER_PATH_CLUSTER_OPERANDS(S), CID), "operand_list", CID, NULL);
        expect("DELETE", PATH(API MUSTER_PATH_CLUSTER_OPERAND(S, S), CID, CID), "operand_delete", CID, CID);
        expect("PATCH", PATH(API MUSTER_PATH_CLUSTER_SUBSCRIPTION(S, S), CID, "etcd"), "subscription_patch", CID,
               "etcd");
        /* Add-ons: musterctl (addon.c), proxies by id or name. */
        expect("POST", API MUSTER_PATH_ADDON_PROXIES, "addon_proxy_create", NULL, NULL);
        expect("GET", API MUSTER_PATH_ADDON_PROXIES, "addon_proxy_list", NULL, NULL);
        expect("GET", PATH(API MUSTER_PATH_ADDON_PROXY(S), "mon"), "addon_proxy_get", "mon", NULL);
        expect("PATCH", PATH(API MUSTER_PATH_ADDON_PROXY(S), CID), "addon_proxy_patch", CID, NULL);
        expect("DELETE", PATH(API MUSTER_PATH_ADDON_PROXY(S), "mon"), "addon_proxy_delete", "mon", NULL);
        expect("POST", PATH(API MUSTER_PATH_ADDON_PROXY_ACTION(S, "rollback"), "mon"), "addon_proxy_action", "mon",
               "rollback");
        expect("GET", API MUSTER_PATH_ADDON_RELEASES, "addon_release_list", NULL, NULL);
        expect("POST", API MUSTER_PATH_TOKENS, "token_create", NULL, NULL);
        expect("GET", API MUSTER_PATH_TOKENS, "token_list", NULL, NULL);
        expect("POST", PATH(API MUSTER_PATH_TOKEN(S) MUSTER_ACTION_REVOKE, TOK), "token_revoke", TOK, NULL);

        for (size_t i = 0; i < api_n_routes; i++)
                cr_expect(hit[i], "route %s %s (%s) is reached by no path of common/protocol.h", api_routes[i].method,
                          api_routes[i].pattern, api_routes[i].name);
}

/* The macros spell the paths of the v2 API as they go on the wire. */
Test(routes, wire_spelling) {
        cr_assert_str_eq(PATH(API MUSTER_PATH_HOST_INSTRUCTIONS(S, S), "ie", "h"),
                         "/api/v2/infra-envs/ie/hosts/h/instructions");
        cr_assert_str_eq(PATH(API MUSTER_PATH_HOST(S, S) MUSTER_ACTION_ROTATE_TOKEN, "ie", "h"),
                         "/api/v2/infra-envs/ie/hosts/h/actions/rotate-token");
        cr_assert_str_eq(PATH(MUSTER_PAYLOAD_PATH_FMT, "c", 3LL), "/api/v2/clusters/c/payload/3");
        cr_assert_str_eq(PATH(MUSTER_OS_IMAGE_PATH_FMT, "4.17.3"), "/api/v2/releases/4.17.3/os-image");
        cr_assert_str_eq(PATH(API MUSTER_PATH_INFRA_ENV_IMAGE(S), "ie"), "/api/v2/infra-envs/ie/downloads/image");
        cr_assert_str_eq(API MUSTER_PATH_SIGNING_KEY, "/api/v2/signing-key");
        cr_assert_str_eq(PATH(API MUSTER_PATH_CATALOG(S), "redhat"), "/api/v2/catalogs/redhat");
}

/* A wrong method on a known path is told apart from an unknown path (405
 * rather than 404), as the server answers. */
Test(routes, method_and_unknown_path) {
        bool known;
        cr_assert_eq(http_route_find(api_routes, api_n_routes, "PUT",
                                     PATH(API MUSTER_PATH_CLUSTER(S) MUSTER_ACTION_INSTALL, CID), NULL, &known),
                     HTTP_ROUTE_UNMATCHED);
        cr_assert(known);
        cr_assert_eq(http_route_find(api_routes, api_n_routes, "GET", API "/clusterz", NULL, &known),
                     HTTP_ROUTE_UNMATCHED);
        cr_assert_not(known);
}
