/* The OpenAPI document is enough to drive muster: tests/tools/openapi-client-flow
 * walks the late-binding flow with clients/python/muster_client.py, which
 * reads the document a real musterd (HTTPS, its own CA) serves and calls
 * operations by their operationId only. The suite then reads the effect
 * back itself over HTTP: the host is unbound, in the pool, known-unbound,
 * and the events hold its binding and its unbinding. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;

static void up(void) {
        dir = tu_mkdtemp();
        md.https = true;
        cr_assert_eq(tu_musterd_start_in(&md, dir,
                                         TU_CONFIG_LOW_MINIMUMS
                                         "[server]\nopenapi_file = " MUSTER_SOURCE_DIR "/openapi/muster.yaml\n"),
                     0, "musterd started");
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(openapi_client, .init = up, .fini = down);

#define url(...) tu_url(md.base, __VA_ARGS__)

static const char *H = "6d757374-6572-4071-8335-0000000000c1";

Test(openapi_client, late_binding_by_operation_ids) {
        char flow[4096], ca[4200], inventory[4096];
        snprintf(flow, sizeof flow, "%s/tests/tools/openapi-client-flow", MUSTER_SOURCE_DIR);
        snprintf(ca, sizeof ca, "%s/tls/ca.pem", md.state_dir);
        snprintf(inventory, sizeof inventory, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        const char *argv[] = { "/usr/bin/python3", flow, md.base, md.admin_token_path, ca, inventory, H, NULL };
        int status = -1;
        char *err = NULL, *out = tu_run(argv, &status, &err);
        cr_assert_eq(status, 0, "the flow failed (exit %d):\n%s", status, err ? err : "");
        json_object *ids = out ? json_tokener_parse(out) : NULL;
        cr_assert_not_null(ids, "the flow's last line is its ids: %s", out ? out : "");
        const char *ie = tu_jstr(ids, "infra_env_id"), *cl = tu_jstr(ids, "cluster_id");
        cr_assert(ie && cl, "%s", out);
        cr_assert_str_eq(tu_jstr(ids, "host_id"), H);

        /* The host as the API shows it: no cluster, known-unbound. */
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, H), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "status"), "known-unbound", "%s", tu_jstr(o, "status_info"));
        cr_assert_null(tu_json_get(o, "cluster_id"), "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "hostname"), "oa-node-1", "the inventory the flow posted");
        json_object_put(o);
        /* In the pool, and the cluster the flow made has no host. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?unbound=true&infra_env_id=%s", ie), md.admin_token, NULL,
                                  &o), 200);
        tu_assert_join(o, "id", H);
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", cl), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "name"), "oa-c1");
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?cluster_id=%s", cl), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 0, "%s", json_object_to_json_string(o));
        json_object_put(o);
        /* The trail: bound to oa-c1, then unbound from it. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?host_id=%s", H), md.admin_token, NULL, &o), 200);
        const char *trail = json_object_to_json_string(o);
        char want[160];
        snprintf(want, sizeof want, "host %s bound to cluster oa-c1 (%s)", H, cl);
        const char *bound = strstr(trail, want);
        cr_assert(bound, "no \"%s\" in %s", want, trail);
        snprintf(want, sizeof want, "host %s unbound from cluster %s", H, cl);
        const char *unbound = strstr(trail, want);
        cr_assert(unbound, "no \"%s\" in %s", want, trail);
        cr_assert(bound < unbound, "bound, then unbound (events come oldest first)");
        json_object_put(o);
        json_object_put(ids);
        free(out);
        free(err);
}
