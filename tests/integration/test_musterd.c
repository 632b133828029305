/* The real musterd on loopback: infra-envs, agent registration and the
 * inventory step, validations from a captured machine's inventory, token
 * scope and revocation, bad input, kill -9 durability, metrics. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "yamljson.h"

static struct tu_musterd md;
static char *dir;

static void up(void) {
        dir = tu_mkdtemp();
        char state[4096];
        snprintf(state, sizeof state, "%s/state", dir);
        cr_assert_eq(tu_musterd_start(&md, state, NULL), 0, "musterd started");
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(musterd, .init = up, .fini = down, .timeout = 120);

/* The suite's musterd and a printf-formatted path (tu_url's buffers). */
#define url(...) tu_url(md.base, __VA_ARGS__)

/* Create an infra-env; returns its id and agent token (caller frees). */
static void make_ie(const char *name, char **id, char **token) {
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, name, id, token), 201);
}

/* Register host_id and answer its inventory step with a fixture's inventory. */
static void register_with_inventory(const char *ie, const char *tok, const char *host_id, const char *fixture) {
        char body[512], path[4096];
        json_object *o;
        snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", host_id);
        long code = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, &o);
        cr_assert(code == 201 || code == 200, "register: %ld", code);
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host_id), tok, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "instructions.0.step_type"), "inventory", "a new host is asked for its inventory");
        json_object_put(o);
        snprintf(path, sizeof path, "%s/%s/expected.json", MUSTER_FIXTURES_DIR, fixture);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv);
        json_object *res = json_object_new_object();
        json_object_object_add(res, "step_id", json_object_new_string("inventory-1"));
        json_object_object_add(res, "step_type", json_object_new_string("inventory"));
        json_object_object_add(res, "exit_code", json_object_new_int(0));
        json_object_object_add(res, "output", inv);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host_id), tok,
                                  json_object_to_json_string(res), NULL), 200);
        json_object_put(res);
}

static const char *H1 = "6d757374-6572-4071-8335-000000000001";
static const char *H2 = "9e11c25c-e9b0-571b-b799-f7d3ccdd4c01";

Test(musterd, register_inventory_and_validations) {
        char *ie, *tok;
        make_ie("lab", &ie, &tok);
        /* The QEMU server has 2 GiB of memory: insufficient, with the reason. */
        register_with_inventory(ie, tok, H1, "qemu-q35");
        json_object *h;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, H1), md.admin_token, NULL, &h), 200);
        cr_assert_str_eq(tu_jstr(h, "status"), "insufficient-unbound");
        cr_assert(strstr(tu_jstr(h, "status_info"), "memory"), "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "inventory.system_vendor.product_name"), "MS-2200 Rack Server");
        json_object_put(h);
        /* Registering again is idempotent: same record, one host. */
        char body[256];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", H1);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 200);
        json_object *l;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?infra_env_id=%s", ie), md.admin_token, NULL, &l), 200);
        cr_assert_eq(json_object_array_length(l), 1);
        json_object_put(l);
        /* Filters. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?min_memory_bytes=4000000000"), md.admin_token, NULL, &l), 200);
        cr_assert_eq(json_object_array_length(l), 0);
        json_object_put(l);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?status=insufficient-unbound&min_cpu_cores=4"), md.admin_token, NULL, &l), 200);
        cr_assert_eq(json_object_array_length(l), 1);
        json_object_put(l);
        /* Events scoped to the infra-env. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?host_id=%s", H1), md.admin_token, NULL, &l), 200);
        cr_assert_geq(json_object_array_length(l), 2, "registration and validation change");
        json_object_put(l);
        free(ie);
        free(tok);
}

/* A step result's body is walked member by member and its inventory read
 * from the bytes of "output" (no tree of the whole document): the
 * document itself or a string holding it, whatever its spacing; a body
 * broken anywhere is 400 with where, and the host keeps what it had. */
Test(musterd, step_results_are_read_from_their_text) {
        char *ie, *tok;
        make_ie("text", &ie, &tok);
        register_with_inventory(ie, tok, H1, "qemu-q35");
        char path[4096];
        snprintf(path, sizeof path, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv);
        const char *steps = url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, H1);
        char *steps_url = strdup(steps);
        /* Spaced out, as a string, with members around and after it. */
        json_object_object_add(inv, "hostname", json_object_new_string("spaced-out"));
        const char *pretty = json_object_to_json_string_ext(inv, JSON_C_TO_STRING_PRETTY);
        size_t cap = strlen(pretty) + 256;
        char *body = malloc(cap);
        cr_assert_not_null(body);
        snprintf(body, cap, " {\n  \"step_type\" : \"inventory\" ,\n \"output\" :\n%s ,\"exit_code\":0 }\n", pretty);
        cr_assert_eq(tu_http_json("POST", steps_url, tok, body, NULL), 200, "%.200s", body);
        json_object *h;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, H1), md.admin_token, NULL, &h), 200);
        cr_assert_str_eq(tu_jstr(h, "inventory.hostname"), "spaced-out");
        cr_assert_str_eq(tu_jstr(h, "inventory.system_vendor.product_name"), "MS-2200 Rack Server");
        json_object_put(h);
        json_object_object_add(inv, "hostname", json_object_new_string("as-a-string"));
        json_object *res = json_object_new_object();
        json_object_object_add(res, "step_type", json_object_new_string("inventory"));
        json_object_object_add(res, "output", json_object_new_string(json_object_to_json_string(inv)));
        cr_assert_eq(tu_http_json("POST", steps_url, tok, json_object_to_json_string(res), NULL), 200);
        json_object_put(res);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, H1), md.admin_token, NULL, &h), 200);
        cr_assert_str_eq(tu_jstr(h, "inventory.hostname"), "as-a-string");
        json_object_put(h);
        /* The last "output" holds, as json-c's reading of a repeated name. */
        json_object_object_add(inv, "hostname", json_object_new_string("the-last"));
        snprintf(body, cap, "{\"step_type\":\"inventory\",\"output\":7,\"output\":%s}", json_object_to_json_string(inv));
        cr_assert_eq(tu_http_json("POST", steps_url, tok, body, NULL), 200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, H1), md.admin_token, NULL, &h), 200);
        cr_assert_str_eq(tu_jstr(h, "inventory.hostname"), "the-last");
        json_object_put(h);
        /* Broken bodies: 400 with the reason, and nothing stored. */
        static const struct {
                const char *body, *why;
        } bad[] = {
                { "{\"step_type\":\"inventory\",\"output\":{\"inventory_version\":1,\"disks\":[{]}}", "at byte" },
                { "{\"step_type\":\"inventory\",\"output\":{\"inventory_version\":1},}", "at byte" },
                { "{\"step_type\":\"inventory\" \"output\":{}}", "',' or '}' expected" },
                { "[{\"step_type\":\"inventory\"}]", "not an object" },
                { "{\"step_type\":\"inventory\",\"output\":{\"inventory_version\":1,\"hostname\":nope}}",
                  "not valid JSON (field \\\"hostname\\\")" },
                { "{\"step_type\":\"inventory\",\"output\":\"{\\u0000}\"}", "NUL" },
                { "{\"step_type\":\"inventory\",\"output\":[]}", "the inventory document" },
                { "{\"step_type\":\"ntp-synchronizer\",\"output\":{\"a\":tru}}", "\\\"output\\\" is not valid JSON" },
                { "{\"step_type\":\"inventory\",\"exit_code\":1 2}", "',' or '}' expected" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char *text = NULL;
                long code = tu_http("POST", steps_url, tok, bad[i].body, strlen(bad[i].body), &text);
                cr_assert_eq(code, 400, "%s: %ld %s", bad[i].body, code, text ? text : "");
                cr_assert(text && strstr(text, bad[i].why), "%s: %s", bad[i].body, text ? text : "");
                free(text);
        }
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, H1), md.admin_token, NULL, &h), 200);
        cr_assert_str_eq(tu_jstr(h, "inventory.hostname"), "the-last");
        json_object_put(h);
        free(body);
        free(steps_url);
        json_object_put(inv);
        free(ie);
        free(tok);
}

Test(musterd, token_scope_and_revocation) {
        char *ie1, *tok1, *ie2, *tok2;
        make_ie("a", &ie1, &tok1);
        make_ie("b", &ie2, &tok2);
        register_with_inventory(ie1, tok1, H1, "qemu-q35");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie1, H1), tok2, NULL, NULL), 403,
                     "another infra-env's agent token");
        char body[256];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", H2);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie1), tok2, body, NULL), 403);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), tok1, NULL, NULL), 403, "agents cannot list the pool");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), "garbage", NULL, NULL), 401);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), NULL, NULL, NULL), 401);
        /* Rotate: the old token is refused, the new one works. */
        json_object *o;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/actions/rotate-token", ie1), md.admin_token, NULL, &o), 200);
        char *fresh = strdup(tu_jstr(o, "agent_token"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie1, H1), tok1, NULL, NULL), 401);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie1, H1), fresh, NULL, NULL), 200);
        /* A cluster creator cannot make tokens; an infra admin can. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens"), md.admin_token, "{\"role\":\"cluster-creator\",\"owner\":\"bob\"}", &o), 201);
        char *bob = strdup(tu_jstr(o, "token"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens"), bob, "{\"role\":\"infra-admin\",\"owner\":\"bob\"}", NULL), 403);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s", ie1), bob, NULL, NULL), 403, "not bob's infra-env");
        free(bob);
        free(fresh);
        free(ie1);
        free(tok1);
        free(ie2);
        free(tok2);
}

Test(musterd, bad_input_gets_4xx_and_the_server_keeps_serving) {
        char *ie, *tok;
        make_ie("bad", &ie, &tok);
        json_object *o;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token, "{\"name\":", &o), 400);
        cr_assert_not_null(tu_json_get(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token, "{\"name\":5}", NULL), 400);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token, "{}", NULL), 400);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/nope"), md.admin_token, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/not-a-uuid"), md.admin_token, NULL, NULL), 400);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/00000000-0000-4000-8000-000000000000"), md.admin_token, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, "{\"host_id\":\"x\"}", NULL), 400);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?status=sleeping"), md.admin_token, NULL, NULL), 400);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?limit=100000"), md.admin_token, NULL, NULL), 400);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, H1), tok,
                                  "{\"step_type\":\"inventory\",\"output\":{}}", NULL), 404, "unregistered host");
        size_t n = 10 * 1024 * 1024;
        char *big = malloc(n);
        memset(big, ' ', n);
        big[0] = '{';
        big[n - 1] = '}';
        cr_assert_eq(tu_http("POST", url("/api/v2/infra-envs"), md.admin_token, big, n, NULL), 413);
        free(big);
        /* A broken inventory is refused with the field named. */
        char body[256];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", H2);
        tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, H2), tok,
                                  "{\"step_type\":\"inventory\",\"exit_code\":0,\"output\":{\"inventory_version\":1,\"cpu\":{\"count\":\"many\"}}}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "count"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/healthz"), NULL, NULL, NULL), 200);
        free(ie);
        free(tok);
}

Test(musterd, kill_9_keeps_acknowledged_registrations) {
        char *ie, *tok;
        make_ie("durable", &ie, &tok);
        char ids[50][40];
        for (int i = 0; i < 50; i++) {
                char body[256];
                snprintf(ids[i], sizeof ids[i], "0b0e6f4e-4c1f-4b47-9d3c-%012d", i);
                cr_assert_lt(snprintf(body, sizeof body, "{\"host_id\":\"%.36s\"}", ids[i]), (int) sizeof body);
                cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 201);
        }
        tu_musterd_stop(&md, SIGKILL);
        cr_assert_eq(tu_musterd_start(&md, md.state_dir, NULL), 0, "restarted on the same state");
        json_object *l;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?infra_env_id=%s&limit=1000", ie), md.admin_token, NULL, &l), 200);
        cr_assert_eq(json_object_array_length(l), 50, "every acknowledged registration survived");
        json_object_put(l);
        /* The same agent token still works: the key survived too. */
        char body[256];
        snprintf(body, sizeof body, "{\"host_id\":\"%.36s\"}", ids[7]);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 200, "same host, no second record");
        free(ie);
        free(tok);
}

Test(musterd, metrics_and_readyz) {
        char *text = NULL;
        cr_assert_eq(tu_http("GET", url("/readyz"), NULL, NULL, 0, NULL), 200);
        tu_http("GET", url("/healthz"), NULL, NULL, 0, NULL);
        cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &text), 200);
        cr_assert(strstr(text, "muster_http_requests_total{route=\"healthz\",status=\"200\"}"), "%s", text);
        cr_assert(strstr(text, "muster_hosts{status=\"known-unbound\"} 0"));
        cr_assert(strstr(text, "muster_store_write_seconds_bucket{le=\"+Inf\"}"), "store latency");
        cr_assert(strstr(text, "muster_store_write_seconds_count "));
        cr_assert(strstr(text, "muster_events_total{severity=\"info\"} 0\n"), "no event yet: %s", text);
        free(text);
        text = NULL;
        /* The event sink: an infra-env's creation is an info event and its
         * audit event, counted by the daemon as they go up. */
        char *ie, *tok;
        make_ie("counted", &ie, &tok);
        free(ie);
        free(tok);
        cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &text), 200);
        cr_assert(strstr(text, "muster_events_total{severity=\"info\"} 2\n"), "%s", text);
        cr_assert(strstr(text, "muster_events_total{severity=\"warning\"} 0\n"), "%s", text);
        /* Group commit: the writes so far (the infra-env, its events) were
         * made durable by at least one commit and by no more commits than
         * writes. */
        const char *w = strstr(text, "\nmuster_store_write_seconds_count "), *c = strstr(text, "\nmuster_store_commits_total ");
        cr_assert(w && c, "%s", text);
        long long writes = atoll(w + strlen("\nmuster_store_write_seconds_count ")),
                  commits = atoll(c + strlen("\nmuster_store_commits_total "));
        cr_assert(writes >= 3 && commits >= 1 && commits <= writes, "%lld writes, %lld commits", writes, commits);
        free(text);
        text = NULL;
        /* The periodic controllers, each named, with its counters (issue
         * 14): all three have run once their first tick came. */
        const char *const names[] = { "checkins", "monitor", "events" };
        for (int i = 0; i < 3; i++) {
                char want[128];
                snprintf(want, sizeof want, "muster_controller_runs_total{controller=\"%s\"} ", names[i]);
                const char *at = NULL;
                for (int k = 0; k < 50 && !at; k++) {
                        free(text);
                        text = NULL;
                        cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &text), 200);
                        at = strstr(text, want);
                        if (at && strtoull(at + strlen(want), NULL, 10) == 0)
                                at = NULL;
                        if (!at)
                                usleep(100 * 1000);
                }
                cr_assert(at, "%s never ran: %s", names[i], text);
                snprintf(want, sizeof want, "muster_controller_failures_total{controller=\"%s\"} 0\n", names[i]);
                cr_assert(strstr(text, want), "%s", text);
                snprintf(want, sizeof want, "muster_controller_last_duration_seconds{controller=\"%s\"} ", names[i]);
                cr_assert(strstr(text, want), "%s", text);
                free(text);
                text = NULL;
        }
}

/* The CI flake of iso_download::musterctl_download: another test's musterd
 * took the same free port, answered /healthz first, and the test's own
 * musterd was taken for up. Starting one more musterd on this suite's port
 * must fail (its own musterd cannot listen there), not report the other
 * one as its own. */
Test(musterd, a_musterd_on_a_taken_port_is_not_taken_for_another) {
        struct tu_musterd second = { 0 };
        char other[4200], listen[64];
        snprintf(other, sizeof other, "%s/second", dir);
        cr_assert_eq(mkdir(other, 0700), 0);
        snprintf(listen, sizeof listen, "127.0.0.1:%u", md.port);
        int r = tu_musterd_start_at(&second, listen, other, NULL);
        int pid = second.pid;
        tu_musterd_free(&second); /* stopped by its PID before any assertion can end the test */
        cr_assert_eq(r, -1, "the port is the suite's musterd's");
        cr_assert_eq(pid, 0, "the second musterd exited (its port was taken)");
        cr_assert_eq(tu_http("GET", url("/healthz"), NULL, NULL, 0, NULL), 200, "the first one still serves");
}

/* ---- what the server is --------------------------------------------------- */

Test(musterd, version_without_a_token) {
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/version"), NULL, NULL, &o), 200, "no token needed");
        cr_assert_str_eq(tu_jstr(o, "server"), "musterd");
        cr_assert_str_eq(tu_jstr(o, "version"), MUSTER_VERSION);
        cr_assert_str_eq(tu_jstr(o, "api"), "v2");
        json_object *schema, *v;
        cr_assert(json_object_object_get_ex(o, "schema", &schema));
        cr_assert(json_object_object_get_ex(schema, "store", &v) && json_object_get_int(v) > 0);
        int store = json_object_get_int(v);
        cr_assert(json_object_object_get_ex(schema, "built", &v) && json_object_get_int(v) == store);
        char *features = tu_join(json_object_object_get(o, "features"), NULL);
        cr_assert(strstr(features, "sqlite"), "%s", features);
        cr_assert(strstr(features, strncmp(md.base, "https:", 6) == 0 ? "https" : "plain-http"), "%s: %s", md.base,
                  features);
        free(features);
        json_object_put(o);
        /* The binary says the same. */
        char *out = NULL;
        char want[128];
        snprintf(want, sizeof want, "musterd %s (API v2, store schema %d)\n", MUSTER_VERSION, store);
        cr_assert_eq(tu_runf(&out, NULL, "%s --version", getenv("MUSTERD")), 0);
        cr_assert_str_eq(out, want);
        free(out);
}

/* The API described (openapi/muster.yaml, issue 35): served without a
 * token as YAML and as JSON, the same document; 404 from a musterd that
 * has none (the suite's, whose default path is the installed one). */
static size_t n_paths(json_object *doc) {
        json_object *paths = NULL;
        cr_assert(json_object_object_get_ex(doc, "paths", &paths) && json_object_is_type(paths, json_type_object));
        return (size_t) json_object_object_length(paths);
}

Test(musterd, openapi_document_without_a_token) {
        struct tu_musterd m = { 0 };
        char *d = tu_mkdtemp();
        cr_assert_eq(tu_musterd_start_in(&m, d, "[server]\nopenapi_file = " MUSTER_SOURCE_DIR "/openapi/muster.yaml\n"),
                     0);
        char u[1024], *yaml = NULL;
        json_object *json = NULL, *from_yaml = NULL, *v = NULL;
        snprintf(u, sizeof u, "%s/api/v2/openapi.json", m.base);
        cr_assert_eq(tu_http_json("GET", u, NULL, NULL, &json), 200, "no token needed");
        snprintf(u, sizeof u, "%s/api/v2/openapi.yaml", m.base);
        cr_assert_eq(tu_http("GET", u, NULL, NULL, 0, &yaml), 200, "no token needed");
        char err[256];
        cr_assert_eq(yamljson_parse(yaml, strlen(yaml), &from_yaml, err, sizeof err), 0, "%s", err);
        cr_assert_gt(n_paths(json), 40);
        cr_assert_eq(n_paths(json), n_paths(from_yaml), "the JSON and the YAML describe as many paths");
        cr_assert(json_object_equal(json, from_yaml), "the JSON is the YAML's document");
        cr_assert(json_object_object_get_ex(json, "openapi", &v));
        cr_assert_str_eq(json_object_get_string(v), "3.1.0");
        /* The document's info.version is the API version this musterd
         * reports (DECISIONS.md D8; scripts/openapi-compat holds the
         * document to it). */
        json_object *info = NULL, *ver = NULL;
        cr_assert(json_object_object_get_ex(json, "info", &info));
        cr_assert(json_object_object_get_ex(info, "version", &v));
        snprintf(u, sizeof u, "%s/api/v2/version", m.base);
        cr_assert_eq(tu_http_json("GET", u, NULL, NULL, &ver), 200);
        cr_assert_str_eq(json_object_get_string(v), tu_jstr(ver, "api"),
                         "info.version is what GET /api/v2/version says in api");
        json_object_put(ver);
        json_object_put(json);
        json_object_put(from_yaml);
        free(yaml);
        tu_musterd_free(&m);
        tu_rm_rf(d);
        free(d);

        json_object *o = NULL;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/openapi.json"), NULL, NULL, &o), 404);
        cr_assert(strstr(tu_jstr(o, "reason"), "openapi_file"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
}

Test(musterd, check_config_says_the_bad_line) {
        char *out = NULL, *err = NULL;
        cr_assert_eq(tu_write_file(dir, "good.conf", "[server]\nlisten = 127.0.0.1:1\n[agent]\ninstruction_interval = 5\n"), 0);
        cr_assert_eq(tu_write_file(dir, "bad.conf", "[server]\nlisten = 127.0.0.1:1\nthreads = many\n"), 0);
        cr_assert_eq(tu_runf(&out, &err, "%s --check-config %s/good.conf", getenv("MUSTERD"), dir), 0, "%s", err);
        cr_assert(strstr(out, "good.conf: ok"), "%s", out);
        free(out);
        free(err);
        cr_assert_eq(tu_runf(&out, &err, "%s --check-config %s/bad.conf", getenv("MUSTERD"), dir), 2);
        cr_assert(strstr(err, "bad.conf:3: "), "the file, the line and why: %s", err);
        cr_assert_str_eq(out, "");
        free(out);
        free(err);
        cr_assert_eq(tu_runf(&out, &err, "%s --check-config %s/missing.conf", getenv("MUSTERD"), dir), 2);
        cr_assert(strstr(err, "missing.conf"), "%s", err);
        free(out);
        free(err);
        /* It starts nothing: no state directory made. */
        struct stat st;
        char path[4096];
        snprintf(path, sizeof path, "%s/none", dir);
        cr_assert_eq(tu_runf(&out, &err, "%s --check-config %s/good.conf --state-dir %s", getenv("MUSTERD"), dir, path), 0);
        cr_assert_neq(stat(path, &st), 0);
        free(out);
        free(err);
}

/* A state dir more open than 0700 (it holds the signing key and
 * admin.token) is closed again, with a warning in the log. */
Test(musterd, open_state_dir_is_made_private) {
        char state[4096];
        snprintf(state, sizeof state, "%s/open-state", dir);
        cr_assert_eq(mkdir(state, 0755), 0);
        cr_assert_eq(chmod(state, 0755), 0, "whatever the umask");
        struct tu_musterd m2 = { 0 };
        cr_assert(asprintf(&m2.log, "%s/open-state.log", dir) > 0);
        int started = tu_musterd_start(&m2, state, NULL);
        char *log = m2.log ? tu_read_file(m2.log, NULL) : NULL;
        tu_musterd_free(&m2); /* stopped before anything can fail */
        cr_assert_eq(started, 0, "musterd started on an open state dir");
        struct stat st;
        cr_assert_eq(stat(state, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
        cr_assert(log && strstr(log, "was mode 0755: made it 0700"), "%s", log ? log : "(no log)");
        free(log);
}
