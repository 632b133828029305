/* Late binding over the real musterd's HTTP API (DESIGN §3, §5): clusters
 * with owner scoping, bind / unbind / rebind, the exit that makes an agent
 * re-register, step results feeding the bound-host validations, a cluster
 * that becomes ready, installs, and then refuses to let its hosts move
 * (409). The agent side is played over HTTP exactly as muster-agent sends
 * it (the real agent runs in test_agents_netns). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;

static void up(void) {
        dir = tu_mkdtemp();
        cr_assert_eq(tu_musterd_start_in(&md, dir, TU_CONFIG_LOW_MINIMUMS), 0, "musterd started");
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(binding, .init = up, .fini = down);

/* The suite's musterd and a printf-formatted path (tu_url's buffers). */
#define url(...) tu_url(md.base, __VA_ARGS__)

static char *create(const char *token, const char *path, const char *body, const char *key) {
        return tu_create(md.base, token, path, body, key);
}

static void post_result(const char *ie, const char *tok, const char *host, const char *type, json_object *output) {
        long code = tu_step_result(md.base, ie, tok, host, "s-1", type, 0, output, NULL);
        cr_assert_eq(code, 200, "%s result: %ld", type, code);
}

/* Register `host` with the fixture's inventory, its host_id replaced. */
static void agent_boot(const char *ie, const char *tok, const char *host, const char *fixture) {
        char body[256], path[4096];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", host);
        long code = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL);
        cr_assert(code == 201 || code == 200);
        snprintf(path, sizeof path, "%s/%s/expected.json", MUSTER_FIXTURES_DIR, fixture);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv);
        json_object_object_add(inv, "host_id", json_object_new_string(host));
        char name[32];
        snprintf(name, sizeof name, "node-%s", host + strlen(host) - 2);
        json_object_object_add(inv, "hostname", json_object_new_string(name));
        post_result(ie, tok, host, "inventory", inv);
}

static json_object *get_host(const char *ie, const char *host) {
        json_object *h;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, host), md.admin_token, NULL, &h),
                     200);
        return h;
}

static void expect_status(const char *ie, const char *host, const char *want) {
        json_object *h = get_host(ie, host);
        cr_assert_str_eq(tu_jstr(h, "status"), want, "host %s: %s (%s)", host, tu_jstr(h, "status"), tu_jstr(h, "status_info"));
        json_object_put(h);
}

/* The instructions' post_step_action. */
static char *poll_action(const char *ie, const char *tok, const char *host, json_object **reply) {
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host), tok, NULL, &o),
                     200);
        char *a = strdup(tu_jstr(o, "post_step_action"));
        if (reply)
                *reply = o;
        else
                json_object_put(o);
        return a;
}

static bool has_step(json_object *reply, const char *type) {
        json_object *a = tu_json_get(reply, "instructions");
        for (size_t i = 0; a && i < json_object_array_length(a); i++)
                if (strcmp(tu_jstr(json_object_array_get_idx(a, i), "step_type"), type) == 0)
                        return true;
        return false;
}

static const char *A = "6d757374-6572-4071-8335-00000000000a";
static const char *B = "6d757374-6572-4071-8335-00000000000b";

Test(binding, bind_unbind_rebind_and_steps_feed_validations) {
        char *ie = NULL, *tok = NULL;
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "pool", &ie, &tok), 201);
        agent_boot(ie, tok, A, "qemu-q35");
        agent_boot(ie, tok, B, "qemu-q35");
        expect_status(ie, A, "known-unbound");

        char *c1 = create(md.admin_token, "/api/v2/clusters",
                          "{\"name\":\"c1\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                          "\"192.0.2.0/24\",\"api_vip\":\"192.0.2.100\",\"ingress_vip\":\"192.0.2.101\","
                          "\"pull_secret\":\"{}\"}", "id");
        char *c2 = create(md.admin_token, "/api/v2/clusters", "{\"name\":\"c2\"}", "id");

        /* Bind both to c1: "binding" at once, then the agents are told to exit. */
        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", c1);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, A), md.admin_token,
                                  body, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "status"), "binding");
        cr_assert_str_eq(tu_jstr(o, "cluster_id"), c1);
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, A), md.admin_token,
                                  body, NULL), 409, "already bound");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, B), md.admin_token,
                                  body, NULL), 200);
        char *act = poll_action(ie, tok, A, NULL);
        cr_assert_str_eq(act, "exit", "a bound host's agent must register again");
        free(act);
        expect_status(ie, A, "binding");
        /* Re-registration: discovering, and the stored inventory decides at once. */
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", A);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 200);
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", B);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 200);
        act = poll_action(ie, tok, A, NULL);
        cr_assert_str_eq(act, "continue", "registered again: back to work");
        free(act);
        json_object *h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "status"), "discovering", "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_validation(h, "belongs-to-majority-group"), "pending");
        cr_assert_str_eq(tu_validation(h, "ntp-synced"), "pending");
        json_object_put(h);

        /* A bound host gets the network steps, with its peer's addresses. */
        json_object *reply;
        free(poll_action(ie, tok, A, &reply));
        cr_assert(has_step(reply, "connectivity-check"), "%s", json_object_to_json_string(reply));
        cr_assert(has_step(reply, "ntp-synchronizer"));
        cr_assert(has_step(reply, "domain-resolution"));
        cr_assert(strstr(json_object_to_json_string(reply), B), "the peer is named");
        cr_assert(strstr(json_object_to_json_string(reply), "192.0.2.10"), "inside the machine network");
        json_object_put(reply);

        /* Results: B unreachable -> majority fails; then reachable -> passes. */
        char out[1024];
        snprintf(out, sizeof out, "{\"peers\":[{\"host_id\":\"%s\",\"reachable\":false,\"loss_pct\":100}]}", B);
        post_result(ie, tok, A, "connectivity-check", json_tokener_parse(out));
        post_result(ie, tok, A, "ntp-synchronizer",
                    json_tokener_parse("{\"synced\":true,\"offset_ms\":4,\"method\":\"coordinator-date\","
                                       "\"sources\":[{\"source\":\"ntp.example.test\",\"reachable\":false}]}"));
        post_result(ie, tok, A, "domain-resolution",
                    json_tokener_parse("{\"resolutions\":[{\"name\":\"api.c1.example.test\","
                                       "\"ipv4_addresses\":[\"192.0.2.100\"]}]}"));
        h = get_host(ie, A);
        cr_assert_str_eq(tu_validation(h, "belongs-to-majority-group"), "failure");
        cr_assert_str_eq(tu_validation(h, "ntp-synced"), "failure", "the coordinator's clock is no NTP source");
        cr_assert(strstr(json_object_to_json_string(h), "No NTP source reachable (tried: ntp.example.test)"), "%s",
                  json_object_to_json_string(tu_json_get(h, "validations")));
        cr_assert_str_eq(tu_validation(h, "api-domain-name-resolved-correctly"), "success");
        cr_assert_str_eq(tu_jstr(h, "status"), "insufficient", "%s", tu_jstr(h, "status_info"));
        cr_assert(strstr(tu_jstr(h, "status_info"), "Reaches only 0 of 1"), "%s", tu_jstr(h, "status_info"));
        json_object_put(h);
        snprintf(out, sizeof out, "{\"peers\":[{\"host_id\":\"%s\",\"reachable\":true,\"loss_pct\":0,"
                                  "\"rtt_avg_ms\":0.3}]}", B);
        post_result(ie, tok, A, "connectivity-check", json_tokener_parse(out));
        h = get_host(ie, A);
        cr_assert_str_eq(tu_validation(h, "belongs-to-majority-group"), "success");
        json_object_put(h);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?host_id=%s", A), md.admin_token, NULL, &o), 200);
        cr_assert(strstr(json_object_to_json_string(o), "belongs-to-majority-group fails"), "a validation change is an event");
        cr_assert(strstr(json_object_to_json_string(o), "bound to cluster c1"));
        json_object_put(o);

        /* Unbind A: back in the pool at once; its results are gone. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, A), md.admin_token,
                                  NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "status"), "discovering-unbound");
        cr_assert_null(tu_json_get(o, "cluster_id"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, A), md.admin_token,
                                  NULL, NULL), 409, "not bound");
        act = poll_action(ie, tok, A, NULL);
        cr_assert_str_eq(act, "exit");
        free(act);
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", A);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 200);
        expect_status(ie, A, "known-unbound");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?cluster_id=%s", c1), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 1, "only B is left in c1");
        json_object_put(o);

        /* Rebind A to c2. */
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", c2);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, A), md.admin_token,
                                  body, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "cluster_id"), c2);
        json_object_put(o);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s", c2), md.admin_token, NULL, NULL), 409,
                     "a cluster with hosts cannot go");
        free(ie);
        free(tok);
        free(c1);
        free(c2);
}

/* A single-node cluster that passes every check installs; then its host
 * cannot be moved, nor another bound into it (409). */
Test(binding, installing_cluster_refuses_moves) {
        char *ie, *tok;
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "sno", &ie, &tok), 201);
        agent_boot(ie, tok, A, "qemu-q35");
        agent_boot(ie, tok, B, "qemu-q35");
        /* Install needs a release: the fixture's, imported as musterctl does. */
        char rel[4096];
        snprintf(rel, sizeof rel, "%s/state/images/4.15.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        cr_assert_eq(tu_release_import(md.base, md.admin_token, rel, NULL), 201);
        char *c = create(md.admin_token, "/api/v2/clusters",
                         "{\"name\":\"sno\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                         "\"192.0.2.0/24\",\"high_availability_mode\":\"None\",\"pull_secret\":\"{\\\"auths\\\":{}}\","
                         "\"release_version\":\"4.15.0\"}",
                         "id");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 409,
                     "no host yet");
        cr_assert(strstr(tu_jstr(o, "reason"), "not ready"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);

        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", c);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, A), md.admin_token,
                                  body, NULL), 200);
        free(poll_action(ie, tok, A, NULL));
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", A);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 200);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token,
                                  "{\"role\":\"master\",\"requested_hostname\":\"sno-0\"}", &o), 200);
        cr_assert_str_eq(tu_jstr(o, "role"), "master");
        cr_assert_str_eq(tu_jstr(o, "requested_hostname"), "sno-0");
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token,
                                  "{\"requested_hostname\":\"Not_Valid\"}", NULL), 400);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token,
                                  "{\"status\":\"known\"}", NULL), 400, "status is not the user's to set");
        post_result(ie, tok, A, "ntp-synchronizer",
                    json_tokener_parse("{\"synced\":true,\"offset_ms\":-2,\"method\":\"sntp\"}"));
        /* Single node without a VIP: api.<name>.<domain> must be the host itself. */
        post_result(ie, tok, A, "domain-resolution",
                    json_tokener_parse("{\"resolutions\":[{\"name\":\"api.sno.example.test\","
                                       "\"ipv4_addresses\":[\"192.0.2.10\"]},{\"name\":\"api-int.sno.example.test\","
                                       "\"ipv4_addresses\":[\"192.0.2.10\"]},{\"name\":\"*.apps.sno.example.test\","
                                       "\"ipv4_addresses\":[\"192.0.2.10\"]}]}"));
        expect_status(ie, A, "known");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", c), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "status"), "ready", "%s", tu_jstr(o, "status_info"));
        json_object_put(o);

        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 202);
        cr_assert_str_eq(tu_jstr(o, "status"), "preparing-for-installation");
        json_object_put(o);
        expect_status(ie, A, "preparing-for-installation");
        /* The guards hold from the preparation on. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, A), md.admin_token,
                                  NULL, NULL), 409);
        post_result(ie, tok, A, "installation-disk-speed-check",
                    json_tokener_parse("{\"path\":\"/dev/vda\",\"method\":\"device\",\"writes\":50,\"p99_ms\":2}"));
        expect_status(ie, A, "installing");

        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, A), md.admin_token,
                                  NULL, &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), "install"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", c);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, B), md.admin_token,
                                  body, NULL), 409, "no host joins an installing cluster");
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token, "{\"api_vip\":\"192.0.2.9\"}",
                                  NULL), 409);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token, NULL, NULL),
                     409);
        expect_status(ie, A, "installing");
        free(ie);
        free(tok);
        free(c);
}

/* A cluster creator sees its own clusters and the unbound pool, nothing else. */
Test(binding, cluster_creator_scope) {
        json_object *o;
        char *ie, *tok;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "p", &ie, &tok), 201);
        agent_boot(ie, tok, A, "qemu-q35");
        agent_boot(ie, tok, B, "qemu-q35");
        char *alice = create(md.admin_token, "/api/v2/tokens", "{\"role\":\"cluster-creator\",\"owner\":\"alice\"}", "token");
        char *bob = create(md.admin_token, "/api/v2/tokens", "{\"role\":\"cluster-creator\",\"owner\":\"bob\"}", "token");
        char *ca = create(alice, "/api/v2/clusters", "{\"name\":\"a\"}", "id");
        char *cb = create(bob, "/api/v2/clusters", "{\"name\":\"b\"}", "id");

        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters"), alice, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 1);
        cr_assert_str_eq(tu_jstr(o, "0.id"), ca);
        cr_assert_str_eq(tu_jstr(o, "0.owner"), "alice");
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", cb), alice, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s", cb), alice, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", cb), md.admin_token, NULL, NULL), 200,
                     "the infra admin sees all");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", ca), tok, NULL, NULL), 403, "agents see no clusters");

        /* Alice binds A from the pool to her cluster; she may not use Bob's. */
        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cb);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, A), alice, body, NULL),
                     404);
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", ca);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, A), alice, body, NULL),
                     200);
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cb);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, B), bob, body, NULL),
                     200);
        /* Alice's pool view: her host, and no longer Bob's. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), alice, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 1);
        cr_assert_str_eq(tu_jstr(o, "0.id"), A);
        cr_assert_null(tu_json_get(o, "0.inventory"), "lists leave inventories out...");
        cr_assert_str_eq(tu_jstr(o, "0.hostname"), "node-0a", "...but keep the hostname");
        cr_assert_str_eq(tu_jstr(o, "0.hardware.cpu_count"), "4");
        cr_assert_str_eq(tu_jstr(o, "0.hardware.memory_bytes"), "2147483648");
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, B), alice, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, B), alice, NULL, NULL),
                     404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?cluster_id=%s", cb), alice, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?cluster_id=%s", ca), alice, NULL, &o), 200);
        cr_assert(strstr(json_object_to_json_string(o), A), "the binding event is in her cluster's scope");
        json_object_put(o);
        free(alice);
        free(bob);
        free(ca);
        free(cb);
        free(ie);
        free(tok);
}

Test(binding, cluster_input_and_pages) {
        json_object *o;
        static const char *const bad[] = {
                "{}", "{\"name\":\"Upper\"}", "{\"name\":\"-x\"}", "{\"name\":\"c\",\"machine_network_cidr\":\"10.0.0.0\"}",
                "{\"name\":\"c\",\"api_vip\":\"300.1.1.1\"}", "{\"name\":\"c\",\"high_availability_mode\":\"Half\"}",
                "{\"name\":\"c\",\"status\":\"ready\"}", "{\"name\":\"c\",\"base_dns_domain\":\"a..b\"}",
                "{\"name\":5}",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token, bad[i], &o), 400, "%s", bad[i]);
                cr_assert_not_null(tu_jstr(o, "reason"));
                json_object_put(o);
        }
        char *ids[5];
        for (int i = 0; i < 5; i++) {
                char body[64];
                snprintf(body, sizeof body, "{\"name\":\"p%d\"}", i);
                ids[i] = create(md.admin_token, "/api/v2/clusters", body, "id");
        }
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", ids[0]), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "status"), "pending-for-input", "no settings yet");
        cr_assert(strstr(tu_jstr(o, "status_info"), "machine network"), "%s", tu_jstr(o, "status_info"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", ids[0]), md.admin_token,
                                  "{\"base_dns_domain\":\"example.test\",\"labels\":{\"env\":\"lab\"}}", &o), 200);
        cr_assert_str_eq(tu_jstr(o, "base_dns_domain"), "example.test");
        cr_assert_str_eq(tu_jstr(o, "labels.env"), "lab");
        json_object_put(o);
        /* Pages of 2 follow X-Next-After: the cursor is in the body-less header,
         * so walk with after= from the ids' order instead: 2 + 2 + 1. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters?limit=2"), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 2);
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters?limit=100000"), md.admin_token, NULL, NULL), 400);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s", ids[4]), md.admin_token, NULL, NULL), 204);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", ids[4]), md.admin_token, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/not-a-uuid"), md.admin_token, NULL, NULL), 400);
        for (int i = 0; i < 5; i++)
                free(ids[i]);

        /* PATCH of an infra-env. */
        char *ie;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "x", &ie, NULL), 201);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token,
                                  "{\"name\":\"y\",\"ntp_sources\":[\"ntp.example.test\"]}", &o), 200);
        cr_assert_str_eq(tu_jstr(o, "name"), "y");
        cr_assert_str_eq(tu_jstr(o, "ntp_sources.0"), "ntp.example.test");
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token, "{\"token_generation\":9}",
                                  NULL), 400);
        free(ie);
}

/* `[agent] inventory_every = N`: each host is asked for its inventory again
 * on exactly every N-th poll, counted per host (two hosts polled in turns
 * each keep their own count). */
Test(binding, inventory_every_counts_each_hosts_polls) {
        struct tu_musterd m2 = { 0 };
        char *d2 = tu_mkdtemp();
        cr_assert_eq(tu_musterd_start_in(&m2, d2, TU_CONFIG_LOW_MINIMUMS "[agent]\ninventory_every = 4\n"), 0);
        char *ie = NULL, *tok = NULL;
        cr_assert_eq(tu_create_infra_env(m2.base, m2.admin_token, "pool", &ie, &tok), 201);
        const char *hosts[2] = { A, B };
        for (int i = 0; i < 2; i++) {
                char body[256];
                snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", hosts[i]);
                cr_assert_eq(tu_http_json("POST", tu_url(m2.base, "/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL),
                             201);
        }
        /* Before an inventory is stored, every poll asks for one. */
        for (int poll = 1; poll <= 2; poll++) {
                json_object *o;
                cr_assert_eq(tu_http_json("GET", tu_url(m2.base, "/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A),
                                          tok, NULL, &o), 200);
                cr_assert(has_step(o, "inventory"), "poll %d without an inventory", poll);
                json_object_put(o);
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        for (int i = 0; i < 2; i++) {
                json_object *inv = json_object_from_file(path);
                json_object_object_add(inv, "host_id", json_object_new_string(hosts[i]));
                cr_assert_eq(tu_step_result(m2.base, ie, tok, hosts[i], "s-1", "inventory", 0, inv, NULL), 200);
        }
        /* A has polled twice, B never: A's 4th, 8th, 12th and B's 4th, 8th, 12th. */
        int asked[2] = { 0, 0 };
        for (int poll = 3; poll <= 12; poll++)
                for (int i = 0; i < 2; i++) {
                        int n = i == 0 ? poll : poll - 2;
                        json_object *o;
                        cr_assert_eq(tu_http_json("GET",
                                                  tu_url(m2.base, "/api/v2/infra-envs/%s/hosts/%s/instructions", ie,
                                                         hosts[i]), tok, NULL, &o), 200);
                        bool inv = has_step(o, "inventory");
                        json_object_put(o);
                        cr_assert_eq(inv, n % 4 == 0, "host %d, poll %d: inventory %s", i, n, inv ? "asked" : "not asked");
                        asked[i] += inv;
                }
        cr_assert_eq(asked[0], 3, "A's polls 4, 8, 12");
        cr_assert_eq(asked[1], 2, "B's polls 4, 8 (of 1..10)");
        free(ie);
        free(tok);
        tu_musterd_free(&m2);
        tu_rm_rf(d2);
        free(d2);
}
