/* The installation over the real musterd's HTTP API (DESIGN §4-6), the
 * agent side played over HTTP with agent tokens as muster-agent sends it:
 * install hands the install step to every host, the signed payload checks
 * out with the key of GET /signing-key and carries the fixture README's
 * files, progress reports and results move hosts and the cluster, a failed
 * host fails its cluster, day-2 changes and upgrades build the next
 * revision and installed hosts get the apply step, and a payload altered in
 * the store is served as stored (the agent is the one to refuse it). */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "payload.h"
#include "testutil.h"

static struct tu_musterd md;
static char *dir;
static uint8_t *tpl; /* the discovery ISO template's bytes: reclaim boots into it */

#define url(...) tu_url(md.base, __VA_ARGS__)

/* The two fixture releases, imported as musterctl does. */
static void up(void) {
        dir = tu_mkdtemp();
        tpl = tu_pxe_template(dir);
        char config[4600];
        /* first_boot_timeout short enough to see it end (first_boot_never_comes). */
        snprintf(config, sizeof config,
                 TU_CONFIG_LOW_MINIMUMS "[monitor]\nmonitor_interval = 1\nfirst_boot_timeout = 5\n"
                                        "[iso]\ntemplate = %s/discovery.iso\n", dir);
        md.https = true;
        cr_assert_eq(tu_musterd_start_in(&md, dir, config), 0, "musterd started");
        static const char *const versions[] = { "4.15.0", "4.16.0" };
        for (size_t i = 0; i < 2; i++) {
                char src[4096], rel[4096];
                json_object *o = NULL;
                snprintf(src, sizeof src, "%s/releases/%s", MUSTER_FIXTURES_DIR, versions[i]);
                snprintf(rel, sizeof rel, "%s/state/images/%s", dir, versions[i]);
                tu_release_build(src, rel);
                long code = tu_release_import(md.base, md.admin_token, rel, &o);
                cr_assert_eq(code, 201, "import %s: %ld %s", versions[i], code, o ? json_object_to_json_string(o) : "");
                json_object_put(o);
        }
}

static void down(void) {
        free(tpl);
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(install_api, .init = up, .fini = down);

/* ---- the agent side over HTTP --------------------------------------------- */

static long post_result(const char *ie, const char *tok, const char *host, const char *step_id, const char *type,
                        int exit_code, json_object *output, const char *error) {
        return tu_step_result(md.base, ie, tok, host, step_id, type, exit_code, output, error);
}

static void ok_result(const char *ie, const char *tok, const char *host, const char *type, json_object *output) {
        cr_assert_eq(post_result(ie, tok, host, "s-1", type, 0, output, NULL), 200, "%s result", type);
}

static void register_host(const char *ie, const char *tok, const char *host) {
        char body[256];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", host);
        long code = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL);
        cr_assert(code == 201 || code == 200, "register %s: %ld", host, code);
}

/* Register `host` with the QEMU fixture's inventory as node-<last 2>. */
static void agent_boot(const char *ie, const char *tok, const char *host) {
        char path[4096], name[32];
        register_host(ie, tok, host);
        snprintf(path, sizeof path, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv);
        json_object_object_add(inv, "host_id", json_object_new_string(host));
        snprintf(name, sizeof name, "node-%s", host + strlen(host) - 2);
        json_object_object_add(inv, "hostname", json_object_new_string(name));
        ok_result(ie, tok, host, "inventory", inv);
}

static json_object *get_host(const char *ie, const char *host) {
        json_object *h;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, host), md.admin_token, NULL, &h), 200);
        return h;
}

static void expect_host(const char *ie, const char *host, const char *status) {
        json_object *h = get_host(ie, host);
        cr_assert_str_eq(tu_jstr(h, "status"), status, "host %s: %s (%s)", host, tu_jstr(h, "status"),
                         tu_jstr(h, "status_info"));
        json_object_put(h);
}

static json_object *get_cluster(const char *id) {
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", id), md.admin_token, NULL, &o), 200);
        return o;
}

static void expect_cluster(const char *id, const char *status) {
        json_object *o = get_cluster(id);
        cr_assert_str_eq(tu_jstr(o, "status"), status, "cluster: %s (%s)", tu_jstr(o, "status"), tu_jstr(o, "status_info"));
        json_object_put(o);
}

/* The installed system's first check-in: its node agent polls with the
 * host's own token (a fresh one, as musterctl host rotate-token hands out),
 * which it returns (malloc'd): an installed host's agent calls take no other
 * (issue 32, item 5). */
static char *node_checkin(const char *ie, const char *host) {
        json_object *o;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/rotate-token", ie, host),
                                  md.admin_token, NULL, &o), 200);
        char *ht = strdup(tu_jstr(o, "host_token"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host), ht, NULL, NULL),
                     200);
        return ht;
}

/* Re-register (as the agent does when told to exit) and post the network
 * results that make a bound host known in cluster `name`. */
static void register_ready(const char *ie, const char *tok, const char *host, const char *name, const char *api_ip,
                           const char *const *peers, size_t n_peers) {
        char out[2048];
        register_host(ie, tok, host);
        ok_result(ie, tok, host, "ntp-synchronizer",
                  json_tokener_parse("{\"synced\":true,\"offset_ms\":1,\"method\":\"sntp\"}"));
        /* *.apps: the multi-host clusters' ingress VIP; a single node's own address. */
        const char *apps_ip = strcmp(name, "full") == 0 || strcmp(name, "three") == 0 ? "192.0.2.101" : api_ip;
        snprintf(out, sizeof out,
                 "{\"resolutions\":[{\"name\":\"api.%s.example.test\",\"ipv4_addresses\":[\"%s\"]},"
                 "{\"name\":\"api-int.%s.example.test\",\"ipv4_addresses\":[\"%s\"]},"
                 "{\"name\":\"*.apps.%s.example.test\",\"ipv4_addresses\":[\"%s\"]}]}",
                 name, api_ip, name, api_ip, name, apps_ip);
        ok_result(ie, tok, host, "domain-resolution", json_tokener_parse(out));
        if (n_peers) {
                size_t len = (size_t) snprintf(out, sizeof out, "{\"peers\":[");
                for (size_t i = 0; i < n_peers; i++)
                        len += (size_t) snprintf(out + len, sizeof out - len,
                                                 "%s{\"host_id\":\"%s\",\"reachable\":true,\"loss_pct\":0,\"rtt_avg_ms\":0.2}",
                                                 i ? "," : "", peers[i]);
                snprintf(out + len, sizeof out - len, "]}");
                ok_result(ie, tok, host, "connectivity-check", json_tokener_parse(out));
        }
}

/* Bind, then register_ready. */
static void bind_ready(const char *ie, const char *tok, const char *host, const char *cluster, const char *name,
                       const char *api_ip, const char *const *peers, size_t n_peers) {
        char body[512];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cluster);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, host), md.admin_token,
                                  body, NULL), 200);
        register_ready(ie, tok, host, name, api_ip, peers, n_peers);
}

static json_object *poll(const char *ie, const char *tok, const char *host) {
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host), tok, NULL, &o), 200);
        return o;
}

/* The one install step of a poll reply (NULL if there is none). */
static json_object *install_step(json_object *reply) {
        json_object *a = tu_json_get(reply, "instructions"), *found = NULL;
        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                json_object *s = json_object_array_get_idx(a, i);
                if (strcmp(tu_jstr(s, "step_type"), "install") == 0) {
                        cr_assert_null(found, "one install step per poll");
                        found = s;
                }
        }
        return found;
}

/* The one step of type `type` of a poll reply (NULL if there is none). */
static json_object *step_of(json_object *reply, const char *type) {
        json_object *a = tu_json_get(reply, "instructions"), *found = NULL;
        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                json_object *s = json_object_array_get_idx(a, i);
                if (strcmp(tu_jstr(s, "step_type"), type) == 0) {
                        cr_assert_null(found, "one %s step per poll", type);
                        found = s;
                }
        }
        return found;
}

/* The agent's installation-disk-speed-check result for a preparing host:
 * p99 `p99_ms` (fast: 1.5 ms) or, with error set, a failed check. */
static void disk_speed(const char *ie, const char *tok, const char *host, double p99_ms, const char *error) {
        char out[256];
        snprintf(out, sizeof out, "{\"path\":\"/dev/vda\",\"method\":\"device\",\"writes\":50,\"p99_ms\":%.2f,"
                 "\"median_ms\":0.5,\"max_ms\":%.2f}", p99_ms, p99_ms);
        cr_assert_eq(post_result(ie, tok, host, "installation-disk-speed-check-1", "installation-disk-speed-check",
                                 error ? 1 : 0, error ? NULL : json_tokener_parse(out), error), 200);
}
#define disk_speed_ok(ie, tok, host) disk_speed(ie, tok, host, 1.5, NULL)

static long put_progress(const char *ie, const char *tok, const char *host, const char *body) {
        return tu_http_json("PUT", url("/api/v2/infra-envs/%s/hosts/%s/progress", ie, host), tok, body, NULL);
}

static struct crypto_key *coordinator_key(const char *tok) {
        char *pem = NULL;
        cr_assert_eq(tu_http("GET", url("/api/v2/signing-key"), tok, NULL, 0, &pem), 200);
        struct crypto_key *k = NULL;
        cr_assert_eq(crypto_pubkey_load_pem(pem, &k), 0, "%s", pem);
        free(pem);
        return k;
}

/* GET a payload revision as the agent and verify it: the checked payload. */
static json_object *fetch_payload(const char *tok, const struct crypto_key *k, const char *cluster, long rev) {
        char *env = NULL, err[256] = "";
        json_object *payload = NULL;
        long code = tu_http("GET", url("/api/v2/clusters/%s/payload/%ld", cluster, rev), tok, NULL, 0, &env);
        cr_assert_eq(code, 200, "payload %ld: %ld %s", rev, code, env ? env : "");
        int r = payload_verify(env, strlen(env), k, cluster, rev, &payload, err, sizeof err);
        cr_assert_eq(r, 0, "payload %ld does not verify: %s", rev, err);
        free(env);
        return payload;
}

/* The payload's manifest paths, joined with ','. */
static char *payload_paths(json_object *payload) {
        struct payload_file *files = NULL;
        size_t n = 0;
        char err[256] = "";
        cr_assert_eq(payload_files(payload, &files, &n, err, sizeof err), 0, "%s", err);
        size_t cap = 8192, len = 0;
        char *b = calloc(1, cap);
        for (size_t i = 0; i < n; i++)
                len += (size_t) snprintf(b + len, cap - len, "%s%s", i ? "," : "", files[i].path);
        free(files);
        return b;
}

static const char *const README_8 =
        "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"
        "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"
        "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"
        "0000_50_console-operator_07-downloads-deployment.yaml,"
        "0000_50_insights-operator_10-prometheus-rule.yaml,0000_80_hosted-only-configmap.yaml,99_site-config.yml";

/* A single-node cluster "sno" of `release` in 192.0.2.0/24: its id. */
static char *sno_cluster(const char *release) {
        char body[512], *c = NULL;
        snprintf(body, sizeof body,
                 "{\"name\":\"sno\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                 "\"192.0.2.0/24\",\"high_availability_mode\":\"None\",\"pull_secret\":"
                 "\"{\\\"auths\\\":{}}\",\"release_version\":\"%s\"}", release);
        cr_assert_eq(tu_create_cluster(md.base, md.admin_token, body, &c), 201);
        return c;
}

static const char *A = "6d757374-6572-4071-8335-00000000000a";
static const char *B = "6d757374-6572-4071-8335-00000000000b";

static bool events_have(const char *query, const char *needle) {
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?%s&limit=1000", query), md.admin_token, NULL, &o), 200);
        bool yes = strstr(json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE), needle) != NULL;
        json_object_put(o);
        return yes;
}

/* A single-node cluster from install to installed, then day 2 and an
 * upgrade with the apply step, and a payload altered in the store. */
Test(install_api, install_day2_upgrade_and_what_the_store_holds) {
        char *ie, *tok, *other_ie, *other_tok;
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "sno", &ie, &tok), 201);
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "other", &other_ie, &other_tok), 201);
        agent_boot(ie, tok, A);
        char *c;
        cr_assert_eq(tu_create_cluster(md.base, md.admin_token,
                                       "{\"name\":\"sno\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                                       "\"192.0.2.0/24\",\"high_availability_mode\":\"None\",\"pull_secret\":"
                                       "\"{\\\"auths\\\":{}}\",\"release_version\":\"4.15.0\",\"capabilities\":{\"spec\":"
                                       "{\"baseline_capability_set\":\"None\",\"additional_enabled_capabilities\":"
                                       "[\"baremetal\",\"Console\"]}}}", &c), 201);
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        expect_host(ie, A, "known");
        expect_cluster(c, "ready");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s/payload", c), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 0, "no payload before the install");
        json_object_put(o);

        /* Install: revision 1, cluster and host preparing, the role assigned;
         * the host's agent gets the disk speed check on the install disk,
         * and nothing to install yet (issue 13, item 8). */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 202,
                     "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "status"), "preparing-for-installation", "%s", tu_jstr(o, "status_info"));
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "1");
        json_object_put(o);
        json_object *h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "status"), "preparing-for-installation");
        cr_assert_str_eq(tu_validation(h, "sufficient-installation-disk-speed"), "pending");
        char chosen[256];
        snprintf(chosen, sizeof chosen, "%s", tu_jstr(h, "installation_disk_id"));
        json_object_put(h);
        json_object *pr = poll(ie, tok, A);
        cr_assert_null(install_step(pr), "nothing is written before the check");
        json_object *ds = step_of(pr, "installation-disk-speed-check");
        cr_assert_not_null(ds, "%s", json_object_to_json_string(pr));
        cr_assert_str_eq(tu_jstr(ds, "args.path"), "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_MUSTERNVME0001");
        cr_assert_str_eq(tu_jstr(ds, "args.path"), chosen, "the disk shown on the host, the one installed to");
        cr_assert_str_eq(tu_jstr(ds, "args.writes"), "50");
        json_object_put(pr);
        disk_speed_ok(ie, tok, A);
        expect_cluster(c, "installing");
        pr = poll(ie, tok, A);
        cr_assert_null(step_of(pr, "installation-disk-speed-check"), "measured once");
        json_object_put(pr);
        h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "status"), "installing");
        cr_assert_str_eq(tu_validation(h, "sufficient-installation-disk-speed"), "success");
        cr_assert(strstr(json_object_to_json_string(tu_json_get(h, "validations")),
                         "is fast enough: fdatasync p99 1.5 ms, at most 10 ms allowed"), "%s",
                  json_object_to_json_string(tu_json_get(h, "validations")));
        cr_assert_str_eq(tu_jstr(h, "role"), "master", "the single node is the master");
        cr_assert_str_eq(tu_jstr(h, "applied_revision"), "0");
        json_object_put(h);
        char q[128];
        snprintf(q, sizeof q, "cluster_id=%s", c);
        cr_assert(events_have(q, "known -> preparing-for-installation"));
        cr_assert(events_have(q, "fdatasync p99 1.50 ms"));
        cr_assert(events_have(q, "preparing-for-installation -> installing"));
        cr_assert(events_have(q, "ready -> preparing-for-installation"));
        cr_assert(events_have(q, "payload revision 1 of cluster"));
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 409);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"capabilities\":{\"spec\":{\"additional_enabled_capabilities\":[\"Insights\"]}}}",
                                  NULL), 409, "no change while installing");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/upgrade", c), md.admin_token,
                                  "{\"release_version\":\"4.16.0\"}", NULL), 409, "no upgrade while installing");

        /* The install step on every poll, the same each time. */
        for (int i = 0; i < 2; i++) {
                json_object *r = poll(ie, tok, A);
                json_object *s = install_step(r);
                cr_assert_not_null(s, "%s", json_object_to_json_string(r));
                cr_assert_str_eq(tu_jstr(r, "post_step_action"), "continue");
                cr_assert_str_eq(tu_jstr(s, "step_id"), "install-1");
                cr_assert_str_eq(tu_jstr(s, "args.mode"), "install");
                cr_assert_str_eq(tu_jstr(s, "args.cluster_id"), c);
                cr_assert_str_eq(tu_jstr(s, "args.revision"), "1");
                char want[256];
                snprintf(want, sizeof want, "/api/v2/clusters/%s/payload/1", c);
                cr_assert_str_eq(tu_jstr(s, "args.payload_url"), want);
                cr_assert_str_eq(tu_jstr(s, "args.role"), "master");
                cr_assert_str_eq(tu_jstr(s, "args.installation_disk"), "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_MUSTERNVME0001",
                                 "the first eligible disk");
                json_object_put(r);
        }

        /* The payload as the agent gets it verifies with the public key and
         * carries the README's 8 files and the image of the path release. */
        struct crypto_key *key = coordinator_key(tok);
        json_object *payload = fetch_payload(tok, key, c, 1);
        char *paths = payload_paths(payload);
        cr_assert_str_eq(paths, README_8);
        free(paths);
        struct payload_image img;
        char err[256];
        cr_assert_eq(payload_image(payload, &img, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(img.url, "/api/v2/releases/4.15.0/os-image");
        cr_assert_eq(img.size, 6291456);
        cr_assert_str_eq(img.root_label, "root");
        json_object *en = tu_json_get(payload, "enabled_capabilities");
        cr_assert_str_eq(json_object_to_json_string_ext(en, JSON_C_TO_STRING_PLAIN), "[\"Console\",\"baremetal\"]");
        cr_assert_str_eq(tu_jstr(payload, "release_version"), "4.15.0");
        json_object_put(payload);
        cr_assert_eq(tu_http("GET", url("/api/v2/clusters/%s/payload/1", c), other_tok, NULL, 0, NULL), 403,
                     "an agent of another infra-env");
        cr_assert_eq(tu_http("GET", url("/api/v2/clusters/%s/payload/2", c), tok, NULL, 0, NULL), 404);
        cr_assert_eq(tu_http("GET", url("/api/v2/clusters/%s/payload/x", c), tok, NULL, 0, NULL), 400);
        cr_assert_eq(tu_http("GET", url("/api/v2/clusters/%s/payload/1", c), md.admin_token, NULL, 0, NULL), 200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s/payload", c), tok, NULL, NULL), 403);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s/payload", c), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 1);
        cr_assert_str_eq(tu_jstr(o, "0.revision"), "1");
        cr_assert_str_eq(tu_jstr(o, "0.release_version"), "4.15.0");
        cr_assert_str_eq(tu_jstr(o, "0.manifest_count"), "8");
        cr_assert(strncmp(tu_jstr(o, "0.digest"), "sha256:", 7) == 0);
        json_object_put(o);

        /* Progress: installing-in-progress on the first report; bad ones refused. */
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"starting\",\"percent\":0}"), 200);
        expect_host(ie, A, "installing-in-progress");
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"writing-image\",\"percent\":40,\"info\":\"2 of 5 MiB\"}"), 200);
        h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "progress.stage"), "writing-image");
        cr_assert_str_eq(tu_jstr(h, "progress.percent"), "40");
        cr_assert_str_eq(tu_jstr(h, "progress.info"), "2 of 5 MiB");
        json_object_put(h);
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"flying\",\"percent\":40}"), 400);
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"done\",\"percent\":101}"), 400);
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"done\"}"), 400);
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"done\",\"percent\":100}"), 400,
                     "done is the coordinator's, when the installed system checks in");
        cr_assert_eq(put_progress(ie, md.admin_token, A, "{\"stage\":\"done\",\"percent\":100}"), 403);
        cr_assert_eq(put_progress(ie, other_tok, A, "{\"stage\":\"done\",\"percent\":100}"), 403);
        cr_assert(events_have(q, "installing -> installing-in-progress"));

        /* Success: written; installed once the installed system checks in
         * (issue 13, item 6). Until then the host waits at stage rebooting
         * and is not handed the install again. */
        cr_assert_eq(post_result(ie, tok, A, "install-1", "install", 0,
                                 json_tokener_parse("{\"applied_revision\":1,\"root_partition\":\"/dev/nvme0n1p1\"}"),
                                 NULL), 200);
        h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "status"), "installing-in-progress", "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "progress.stage"), "rebooting");
        cr_assert_str_eq(tu_jstr(h, "progress.percent"), "100");
        cr_assert(strstr(tu_jstr(h, "status_info"), "waiting for the installed system to check in"), "%s",
                  tu_jstr(h, "status_info"));
        json_object_put(h);
        expect_cluster(c, "installing");
        json_object *r0 = poll(ie, tok, A);
        cr_assert_null(install_step(r0), "written: %s", json_object_to_json_string(r0));
        json_object_put(r0);
        cr_assert(events_have(q, "waiting up to"));
        char *ntok = node_checkin(ie, A);
        h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "status"), "installed", "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "applied_revision"), "1");
        cr_assert_str_eq(tu_jstr(h, "progress.stage"), "done");
        cr_assert_str_eq(tu_jstr(h, "progress.percent"), "100");
        json_object_put(h);
        expect_cluster(c, "installed");
        cr_assert(events_have(q, "payload revision 1 written; root file system on /dev/nvme0n1p1"));
        cr_assert(events_have(q, "installing-in-progress -> installed: its installed system checked in"));
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"rebooting\",\"percent\":100}"), 403,
                     "installed: the infra-env's token speaks no more for it");
        cr_assert_eq(post_result(ie, tok, A, "install-1", "install", 0, json_tokener_parse("{\"applied_revision\":1}"),
                                 NULL), 403, "nor posts its results");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), tok, NULL, NULL),
                     403, "nor checks in for it");
        cr_assert_eq(put_progress(ie, ntok, A, "{\"stage\":\"rebooting\",\"percent\":100}"), 409, "not installing any more");
        cr_assert_eq(post_result(ie, ntok, A, "install-1", "install", 0, json_tokener_parse("{\"applied_revision\":1}"),
                                 NULL), 200, "a repeat is taken quietly");
        json_object *r = poll(ie, ntok, A);
        cr_assert_null(install_step(r), "up to date: %s", json_object_to_json_string(r));
        json_object_put(r);

        /* Day 2: a change that leaves the content alone builds nothing... */
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"labels\":{\"env\":\"lab\"},\"capabilities\":{\"spec\":{\"baseline_capability_set\":"
                                  "\"None\",\"additional_enabled_capabilities\":[\"Console\",\"baremetal\"]}}}", &o), 200);
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "1");
        json_object_put(o);
        /* ...enabling Insights builds revision 2, and the host gets the apply step. */
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"capabilities\":{\"spec\":{\"baseline_capability_set\":\"None\","
                                  "\"additional_enabled_capabilities\":[\"Console\",\"baremetal\",\"Insights\"]}}}", &o),
                     200, "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "2");
        cr_assert_str_eq(tu_jstr(o, "status"), "installed");
        json_object_put(o);
        payload = fetch_payload(tok, key, c, 2);
        paths = payload_paths(payload);
        cr_assert(strstr(paths, "0000_90_console_01-console-insights-plugin.yaml"), "Console+Insights now: %s", paths);
        free(paths);
        json_object_put(payload);
        r = poll(ie, ntok, A);
        json_object *s = install_step(r);
        cr_assert_not_null(s, "%s", json_object_to_json_string(r));
        cr_assert_str_eq(tu_jstr(s, "step_id"), "apply-2");
        cr_assert_str_eq(tu_jstr(s, "args.mode"), "apply");
        cr_assert_str_eq(tu_jstr(s, "args.revision"), "2");
        cr_assert_null(tu_json_get(s, "args.installation_disk"));
        json_object_put(r);
        /* A failed apply keeps the host installed and says why. */
        cr_assert_eq(post_result(ie, ntok, A, "apply-2", "install", 1, NULL, "manifest dir is read-only"), 200);
        h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "status"), "installed");
        cr_assert_str_eq(tu_jstr(h, "status_info"), "Applying payload revision 2 failed: manifest dir is read-only");
        cr_assert_str_eq(tu_jstr(h, "applied_revision"), "1");
        json_object_put(h);
        cr_assert(events_have(q, "failed to apply payload revision 2: manifest dir is read-only"));
        cr_assert_eq(post_result(ie, ntok, A, "apply-2", "install", 0,
                                 json_tokener_parse("{\"applied_revision\":2,\"added\":[\"0000_90_console_01-console-"
                                                    "insights-plugin.yaml\"],\"updated\":[],\"removed\":[]}"),
                                 NULL), 200);
        h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "applied_revision"), "2");
        cr_assert_str_eq(tu_jstr(h, "status_info"), "Host is installed");
        json_object_put(h);
        cr_assert(events_have(q, "applied payload revision 2: 1 added, 0 updated, 0 removed"));
        r = poll(ie, ntok, A);
        cr_assert_null(install_step(r));
        json_object_put(r);

        /* An upgrade of the installed cluster: revision 3 under 4.16.0. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/upgrade", c), md.admin_token,
                                  "{\"release_version\":\"4.16.0\"}", &o), 200, "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "3");
        json_object_put(o);
        payload = fetch_payload(tok, key, c, 3);
        cr_assert_str_eq(tu_jstr(payload, "release_version"), "4.16.0");
        paths = payload_paths(payload);
        cr_assert(strstr(paths, "0000_50_console-operator_08-downloads-deployment.yaml"), "%s", paths);
        cr_assert_null(strstr(paths, "99_site-config.yml"), "gone in 4.16.0: %s", paths);
        cr_assert_null(strstr(paths, "image-registry"), "ImageRegistry is not enabled: %s", paths);
        free(paths);
        json_object_put(payload);
        r = poll(ie, ntok, A);
        cr_assert_str_eq(tu_jstr(install_step(r), "step_id"), "apply-3");
        json_object_put(r);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s/payload", c), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 3);
        json_object_put(o);

        /* A byte changed in the store (musterd stopped) is served as stored:
         * the digest no longer matches, which the agent refuses. */
        tu_musterd_stop(&md, SIGTERM);
        tu_tamper_stored_payload(&md, c, 1, "site-config", "site-confiX");
        cr_assert_eq(tu_musterd_restart(&md, NULL), 0);
        char *env = NULL;
        cr_assert_eq(tu_http("GET", url("/api/v2/clusters/%s/payload/1", c), tok, NULL, 0, &env), 200);
        cr_assert(strstr(env, "site-confiX"), "served as stored");
        json_object *bad = NULL;
        cr_assert_eq(payload_verify(env, strlen(env), key, c, 1, &bad, err, sizeof err), -EBADMSG);
        cr_assert(strstr(err, "digest"), "%s", err);
        free(env);
        json_object_put(fetch_payload(tok, key, c, 2)); /* the others are untouched */
        crypto_key_free(key);
        free(ntok);
        free(c);
        free(ie);
        free(tok);
        free(other_ie);
        free(other_tok);
}

/* Four hosts of a Full cluster: three masters and a worker by auto roles;
 * one installs, one fails and fails the cluster with it. */
Test(install_api, roles_and_a_failed_host) {
        static const char *const H[4] = {
                "6d757374-6572-4071-8335-000000000021", "6d757374-6572-4071-8335-000000000022",
                "6d757374-6572-4071-8335-000000000023", "6d757374-6572-4071-8335-000000000024",
        };
        char *ie, *tok;
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack", &ie, &tok), 201);
        for (int i = 0; i < 4; i++)
                agent_boot(ie, tok, H[i]);
        char *c;
        cr_assert_eq(tu_create_cluster(md.base, md.admin_token,
                                       "{\"name\":\"full\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                                       "\"192.0.2.0/24\",\"api_vip\":\"192.0.2.100\",\"ingress_vip\":\"192.0.2.101\","
                                       "\"pull_secret\":\"{\\\"auths\\\":{}}\",\"release_version\":\"4.16.0\"}", &c), 201);
        for (int i = 0; i < 4; i++) {
                const char *peers[3];
                size_t n = 0;
                for (int k = 0; k < 4; k++)
                        if (k != i)
                                peers[n++] = H[k];
                bind_ready(ie, tok, H[i], c, "full", "192.0.2.100", peers, n);
        }
        for (int i = 0; i < 4; i++)
                expect_host(ie, H[i], "known");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 202,
                     "%s", o ? json_object_to_json_string(o) : "");
        json_object_put(o);
        /* The hosts wait for each other: none installs before all passed. */
        for (int i = 0; i < 4; i++) {
                disk_speed_ok(ie, tok, H[i]);
                if (i < 3) {
                        expect_host(ie, H[i], "preparing-for-installation");
                        expect_cluster(c, "preparing-for-installation");
                        json_object *r = poll(ie, tok, H[i]);
                        cr_assert_eq(json_object_array_length(tu_json_get(r, "instructions")), 0, "%s",
                                     json_object_to_json_string(r));
                        json_object_put(r);
                }
        }
        expect_cluster(c, "installing");
        const char *roles[4] = { "master", "master", "master", "worker" };
        for (int i = 0; i < 4; i++) {
                json_object *h = get_host(ie, H[i]);
                cr_assert_str_eq(tu_jstr(h, "status"), "installing");
                cr_assert_str_eq(tu_jstr(h, "role"), roles[i], "host %d", i);
                json_object_put(h);
                json_object *r = poll(ie, tok, H[i]);
                cr_assert_str_eq(tu_jstr(install_step(r), "args.role"), roles[i]);
                json_object_put(r);
        }
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s/payload", c), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "0.release_version"), "4.16.0");
        json_object_put(o);

        /* One done: the cluster still installs. */
        cr_assert_eq(post_result(ie, tok, H[0], "install-1", "install", 0, json_tokener_parse("{\"applied_revision\":1}"),
                                 NULL), 200);
        free(node_checkin(ie, H[0]));
        expect_host(ie, H[0], "installed");
        expect_cluster(c, "installing");
        /* One fails: host error with the reason, the cluster with it. */
        cr_assert_eq(post_result(ie, tok, H[1], "install-1", "install", 1, NULL, "disk /dev/nvme0n1 is read-only"), 200);
        json_object *h = get_host(ie, H[1]);
        cr_assert_str_eq(tu_jstr(h, "status"), "error");
        cr_assert_str_eq(tu_jstr(h, "status_info"), "Installation failed: disk /dev/nvme0n1 is read-only");
        json_object_put(h);
        o = get_cluster(c);
        cr_assert_str_eq(tu_jstr(o, "status"), "error");
        cr_assert_str_eq(tu_jstr(o, "status_info"), "Host node-22 failed: disk /dev/nvme0n1 is read-only");
        json_object_put(o);
        char q[128];
        snprintf(q, sizeof q, "cluster_id=%s&severity=error", c);
        cr_assert(events_have(q, "Installation failed: disk /dev/nvme0n1 is read-only"));
        cr_assert(events_have(q, "-> error: Host node-22 failed"));
        /* An error host gets no more install steps. */
        json_object *r = poll(ie, tok, H[1]);
        cr_assert_null(install_step(r));
        json_object_put(r);

        /* Reset (issue 13, item 1): the failed and installing hosts register
         * again; the installed one waits to be booted from the ISO. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/reset", c), md.admin_token, NULL, &o), 200,
                     "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_neq(tu_jstr(o, "status"), "error");
        json_object_put(o);
        expect_host(ie, H[0], "resetting-pending-user-action");
        for (int i = 1; i < 4; i++)
                expect_host(ie, H[i], "discovering");
        for (int i = 0; i < 4; i++) {
                r = poll(ie, tok, H[i]);
                cr_assert_str_eq(tu_jstr(r, "post_step_action"), "exit", "host %d must register again", i);
                json_object_put(r);
        }
        snprintf(q, sizeof q, "cluster_id=%s", c);
        cr_assert(events_have(q, "installation of cluster"));
        cr_assert(events_have(q, "-> resetting-pending-user-action"));
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/reset", c), md.admin_token, NULL, &o), 409,
                     "nothing left to reset");
        cr_assert(strstr(tu_jstr(o, "reason"), "only a failed or installing cluster can be reset"), "%s",
                  tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 409,
                     "not ready before the hosts are checked again");
        /* All four boot and are checked again (the installed one from the ISO): ready, and the retry installs. */
        for (int i = 0; i < 4; i++) {
                const char *peers[3];
                size_t n = 0;
                for (int k = 0; k < 4; k++)
                        if (k != i)
                                peers[n++] = H[k];
                register_ready(ie, tok, H[i], "full", "192.0.2.100", peers, n);
        }
        for (int i = 0; i < 4; i++)
                expect_host(ie, H[i], "known");
        expect_cluster(c, "ready");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 202,
                     "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "2", "the retry builds a new revision");
        json_object_put(o);
        for (int i = 0; i < 4; i++) /* measured again for the retry */
                disk_speed_ok(ie, tok, H[i]);
        for (int i = 0; i < 4; i++) {
                r = poll(ie, tok, H[i]);
                cr_assert_str_eq(tu_jstr(install_step(r), "step_id"), "install-2", "host %d", i);
                json_object_put(r);
        }
        free(c);
        free(ie);
        free(tok);
}

/* A host that stops checking in during its installation fails, and its
 * cluster with it, once the disconnect timeout passes. */
Test(install_api, silent_host_fails_its_installation) {
        char *ie, *tok;
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "quiet", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        char *c;
        c = sno_cluster("4.15.0");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        disk_speed_ok(ie, tok, A);
        json_object_put(poll(ie, tok, A));
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"writing-image\",\"percent\":10}"), 200);
        /* Now a short timeout, and no more polls. */
        tu_musterd_stop(&md, SIGTERM);
        cr_assert_eq(tu_write_file(dir, "quick.conf", "[monitor]\nhost_disconnect_timeout = 2\nmonitor_interval = 1\n"),
                     0);
        char cfg[4200];
        snprintf(cfg, sizeof cfg, "%s/quick.conf", dir);
        cr_assert_eq(tu_musterd_restart(&md, cfg), 0);
        int64_t deadline = tu_mono_ms() + 20000;
        json_object *h = NULL;
        for (;;) {
                json_object_put(h);
                h = get_host(ie, A);
                if (strcmp(tu_jstr(h, "status"), "installing-in-progress") != 0 || tu_mono_ms() > deadline)
                        break;
                usleep(200 * 1000);
        }
        cr_assert_str_eq(tu_jstr(h, "status"), "error", "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "status_info"), "Installation failed: Host stopped checking in during installation");
        json_object_put(h);
        o = get_cluster(c);
        cr_assert_str_eq(tu_jstr(o, "status"), "error");
        cr_assert_str_eq(tu_jstr(o, "status_info"), "Host node-0a failed: Host stopped checking in during installation");
        json_object_put(o);
        free(c);
        free(ie);
        free(tok);
}

/* Install needs an imported release and valid capabilities; a cluster
 * without one is not ready and nothing moves. */
Test(install_api, no_release_no_install) {
        char *ie, *tok;
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "sno2", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        char *c;
        c = sno_cluster("4.20.0");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        expect_host(ie, A, "known");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), "release 4.20.0 is not imported"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        expect_host(ie, A, "known");
        o = get_cluster(c);
        cr_assert_str_eq(tu_jstr(o, "status"), "pending-for-input");
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "0");
        json_object_put(o);
        /* Fixing the release makes it ready. */
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token, "{\"release_version\":\"4.15.0\"}",
                                  &o), 200);
        cr_assert_str_eq(tu_jstr(o, "status"), "ready", "%s", tu_jstr(o, "status_info"));
        json_object_put(o);
        free(c);
        free(ie);
        free(tok);
}

/* The disk has-min-valid-disks approves is the disk the install step names
 * (issue 13, item 5): with a 500 GiB single-node minimum, the first eligible
 * disk (NVMe, 200 GiB) is too small and the 1 TiB virtio disk is chosen by
 * both, where install used to take the first eligible disk of any size. */
Test(install_api, install_disk_is_the_validated_disk) {
        char *ie, *tok, *c, cfg[4200];
        json_object *o;
        tu_musterd_stop(&md, SIGTERM);
        cr_assert_eq(tu_write_file(dir, "bigdisk.conf", TU_CONFIG_LOW_MINIMUMS "[requirements.sno]\ndisk = 500GiB\n"), 0);
        snprintf(cfg, sizeof cfg, "%s/bigdisk.conf", dir);
        cr_assert_eq(tu_musterd_restart(&md, cfg), 0);
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "disks", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        c = sno_cluster("4.15.0");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        expect_host(ie, A, "known");
        json_object *h = get_host(ie, A);
        const char *vs = json_object_to_json_string(tu_json_get(h, "validations"));
        cr_assert(strstr(vs, "Disk vda (1 TiB) is eligible for installation"), "%s", vs);
        /* Shown on the host before the install. */
        cr_assert_str_eq(tu_jstr(h, "installation_disk_id"), "/dev/disk/by-id/virtio-MUSTERVIRT0001");
        cr_assert_str_eq(tu_jstr(h, "installation_disk_path"), "/dev/vda");
        json_object_put(h);
        /* Unbound, the "any host" minimum (100 GB by default) lets the NVMe
         * disk be the first fit; a requested disk is shown as requested. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, A), md.admin_token,
                                  NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "installation_disk_path"), "/dev/nvme0n1", "%s", json_object_to_json_string(o));
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token,
                                  "{\"installation_disk_id\":\"vda\"}", &o), 200);
        cr_assert_str_eq(tu_jstr(o, "installation_disk_id"), "vda");
        cr_assert_str_eq(tu_jstr(o, "installation_disk_path"), "/dev/vda");
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token,
                                  "{\"installation_disk_id\":\"sda\"}", &o), 200);
        cr_assert_null(tu_json_get(o, "installation_disk_path"), "sda is not eligible");
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token,
                                  "{\"installation_disk_id\":\"\"}", &o), 200);
        json_object_put(o);
        register_host(ie, tok, A);
        expect_host(ie, A, "known-unbound");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        expect_host(ie, A, "known");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        /* The disk speed check measures the same disk. */
        o = poll(ie, tok, A);
        cr_assert_str_eq(tu_jstr(step_of(o, "installation-disk-speed-check"), "args.path"),
                         "/dev/disk/by-id/virtio-MUSTERVIRT0001");
        json_object_put(o);
        disk_speed_ok(ie, tok, A);
        o = poll(ie, tok, A);
        json_object *s = install_step(o);
        cr_assert_not_null(s, "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(s, "args.installation_disk"), "/dev/disk/by-id/virtio-MUSTERVIRT0001");
        json_object_put(o);
        free(c);
        free(ie);
        free(tok);
}

/* Day 2 (issue 13, item 2): a host bound to an installed cluster installs on
 * its own with the cluster's current revision, as a worker, and then follows
 * the cluster's later revisions. */
Test(install_api, day2_host_joins_an_installed_cluster) {
        char *ie, *tok, *c;
        json_object *o, *r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "day2", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        c = sno_cluster("4.15.0");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        /* Not before the cluster is installed. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/install", ie, A), md.admin_token,
                                  NULL, &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), "only into an installed cluster"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        disk_speed_ok(ie, tok, A);
        json_object_put(poll(ie, tok, A));
        cr_assert_eq(post_result(ie, tok, A, "install-1", "install", 0, json_tokener_parse("{\"applied_revision\":1}"),
                                 NULL), 200);
        char *ntok_a = node_checkin(ie, A);
        expect_cluster(c, "installed");

        /* B joins: bound, checked, installed on its own. */
        agent_boot(ie, tok, B);
        expect_host(ie, B, "known-unbound");
        bind_ready(ie, tok, B, c, "sno", "192.0.2.10", NULL, 0);
        expect_host(ie, B, "known");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/install", ie, B), md.admin_token,
                                  NULL, &o), 200, "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "status"), "preparing-for-installation");
        cr_assert_str_eq(tu_jstr(o, "role"), "worker", "a day-2 host is a worker unless told otherwise");
        json_object_put(o);
        /* It prepares on its own: the disk speed check, then the install. */
        r = poll(ie, tok, B);
        cr_assert_null(install_step(r));
        cr_assert_not_null(step_of(r, "installation-disk-speed-check"), "%s", json_object_to_json_string(r));
        json_object_put(r);
        disk_speed_ok(ie, tok, B);
        expect_host(ie, B, "installing");
        expect_cluster(c, "installed");
        /* Revision 1 was built before B was bound: B's settings come in
         * revision 2, which B installs and A applies. */
        r = poll(ie, tok, B);
        json_object *s = install_step(r);
        cr_assert_not_null(s, "%s", json_object_to_json_string(r));
        cr_assert_str_eq(tu_jstr(s, "step_id"), "install-2", "the revision that carries B's settings");
        cr_assert_str_eq(tu_jstr(s, "args.mode"), "install");
        cr_assert_str_eq(tu_jstr(s, "args.role"), "worker");
        json_object_put(r);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s/payload/2", c), md.admin_token, NULL, &o), 200);
        char key[128];
        snprintf(key, sizeof key, "payload.hosts.%s.role", B);
        cr_assert_str_eq(tu_jstr(o, key), "worker", "%s", json_object_to_json_string(o));
        snprintf(key, sizeof key, "payload.hosts.%s.role", A);
        cr_assert_str_eq(tu_jstr(o, key), "master");
        cr_assert_str_eq(tu_jstr(o, "payload.settings.cluster_name"), "sno");
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/install", ie, B), md.admin_token,
                                  NULL, NULL), 409, "already installing");
        cr_assert_eq(post_result(ie, tok, B, "install-2", "install", 0, json_tokener_parse("{\"applied_revision\":2}"),
                                 NULL), 200);
        char *ntok_b = node_checkin(ie, B);
        expect_host(ie, B, "installed");
        expect_cluster(c, "installed");
        r = poll(ie, ntok_a, A);
        s = install_step(r);
        cr_assert_not_null(s, "%s", json_object_to_json_string(r));
        cr_assert_str_eq(tu_jstr(s, "step_id"), "apply-2", "A follows the revision B joined with");
        json_object_put(r);
        cr_assert_eq(post_result(ie, ntok_a, A, "apply-2", "install", 0, json_tokener_parse("{\"applied_revision\":2}"),
                                 NULL), 200);

        /* The next revision reaches both. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/upgrade", c), md.admin_token,
                                  "{\"release_version\":\"4.16.0\"}", &o), 200, "%s",
                     o ? json_object_to_json_string(o) : "");
        json_object_put(o);
        const char *hosts[2] = { A, B }, *ntoks[2] = { ntok_a, ntok_b };
        for (int i = 0; i < 2; i++) {
                r = poll(ie, ntoks[i], hosts[i]);
                s = install_step(r);
                cr_assert_not_null(s, "host %d: %s", i, json_object_to_json_string(r));
                cr_assert_str_eq(tu_jstr(s, "step_id"), "apply-3", "host %d", i);
                json_object_put(r);
        }
        free(ntok_a);
        free(ntok_b);
        free(c);
        free(ie);
        free(tok);
}

/* An installed system that never checks in: first_boot_timeout after the
 * install's result the host is in error, and its cluster with it; a reset
 * then starts again (issue 13, item 6). */
Test(install_api, first_boot_never_comes) {
        char *ie, *tok, *c;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "unbooted", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        c = sno_cluster("4.15.0");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        disk_speed_ok(ie, tok, A);
        json_object_put(poll(ie, tok, A));
        cr_assert_eq(post_result(ie, tok, A, "install-1", "install", 0, json_tokener_parse("{\"applied_revision\":1}"),
                                 NULL), 200);
        expect_host(ie, A, "installing-in-progress");
        json_object *h = NULL;
        for (int i = 0; i < 150; i++) {
                json_object_put(h);
                h = get_host(ie, A);
                if (strcmp(tu_jstr(h, "status"), "installing-in-progress") != 0)
                        break;
                usleep(100 * 1000);
        }
        cr_assert_str_eq(tu_jstr(h, "status"), "error", "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "status_info"),
                         "Installation failed: The installed system did not check in within 5 s of the install");
        json_object_put(h);
        /* The host's error is written first, its cluster's just after (two
         * transactions of the same pass): wait for the second. */
        json_object *o = NULL;
        for (int i = 0; i < 50; i++) {
                json_object_put(o);
                o = get_cluster(c);
                if (strcmp(tu_jstr(o, "status"), "installing") != 0)
                        break;
                usleep(100 * 1000);
        }
        cr_assert_str_eq(tu_jstr(o, "status"), "error");
        cr_assert(strstr(tu_jstr(o, "status_info"), "did not check in within 5 s"), "%s", tu_jstr(o, "status_info"));
        json_object_put(o);
        /* The monitor controller did it, and counts it once its pass has
         * returned (a moment after the pass's writes, which we saw). */
        static const char counter[] = "muster_controller_changed_total{controller=\"monitor\"} ";
        char *m = NULL;
        bool counted = false;
        for (int i = 0; i < 50 && !counted; i++) {
                free(m);
                m = NULL;
                cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &m), 200);
                const char *at = strstr(m, counter);
                counted = at && strtoull(at + strlen(counter), NULL, 10) >= 1;
                if (!counted)
                        usleep(100 * 1000);
        }
        cr_assert(counted, "%s", m);
        free(m);
        /* A late check-in does not make it installed. */
        free(node_checkin(ie, A));
        expect_host(ie, A, "error");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/reset", c), md.admin_token, NULL, NULL), 200);
        free(c);
        free(ie);
        free(tok);
}

/* Each installing host gets its own token for its installed system (issue
 * 13, item 3): it speaks for that host only, survives the infra-env's
 * rotation, and is rotated per host. */
Test(install_api, host_tokens_scope_and_rotation) {
        char *ie, *tok, *c;
        json_object *o, *r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "tokens", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        agent_boot(ie, tok, B);
        c = sno_cluster("4.15.0");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        r = poll(ie, tok, A);
        cr_assert_null(tu_json_get(install_step(r) ? install_step(r) : r, "args.host_token"), "not before the install");
        json_object_put(r);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        r = poll(ie, tok, A);
        cr_assert_null(tu_json_get(r, "instructions.0.args.host_token"), "not while preparing");
        json_object_put(r);
        disk_speed_ok(ie, tok, A);
        r = poll(ie, tok, A);
        json_object *s = install_step(r);
        cr_assert_not_null(s);
        char *host_tok = strdup(tu_jstr(s, "args.host_token"));
        json_object_put(r);
        cr_assert(host_tok && strlen(host_tok) > 20);
        cr_assert_eq(post_result(ie, tok, A, "install-1", "install", 0, json_tokener_parse("{\"applied_revision\":1}"),
                                 NULL), 200);
        expect_host(ie, A, "installing-in-progress");
        /* The ISO's agent polling on is no installed system. */
        json_object_put(poll(ie, tok, A));
        expect_host(ie, A, "installing-in-progress");

        /* Its host, its cluster's payload; nothing of another host. Its
         * first check-in with its own token: installed. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), host_tok, NULL,
                                  NULL), 200);
        expect_host(ie, A, "installed");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), tok, NULL, &o), 403,
                     "installed: the ISO's token no longer checks in for it");
        cr_assert(strstr(tu_jstr(o, "reason"), "host's own token"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, B), host_tok, NULL, &o),
                     403);
        cr_assert(strstr(tu_jstr(o, "reason"), "another host"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s/payload/1", c), host_tok, NULL, NULL), 200);
        char body[128];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", B);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), host_tok, body, NULL), 403);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/rotate-token", ie, A), host_tok,
                                  NULL, NULL), 403, "agents do not rotate tokens");

        /* The infra-env's rotation revokes the ISO's token, not the host's. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/actions/rotate-token", ie), md.admin_token, NULL,
                                  NULL), 200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), tok, NULL, NULL),
                     401);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), host_tok, NULL,
                                  NULL), 200);

        /* The host's own rotation revokes its earlier token. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/rotate-token", ie, A),
                                  md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "token_generation"), "2");
        char *new_tok = strdup(tu_jstr(o, "host_token"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), host_tok, NULL, &o),
                     401);
        cr_assert(strstr(tu_jstr(o, "reason"), "revoked"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), new_tok, NULL,
                                  NULL), 200);
        free(new_tok);
        free(host_tok);
        free(c);
        free(ie);
        free(tok);
}

/* Cancel (issue 13, item 1): an installation in progress stops; the hosts
 * fail as cancelled, keep their progress, and their agents are sent
 * stop-installation until they answer; reset then lets it install again. */
Test(install_api, cancel_stops_the_hosts_and_reset_retries) {
        char *ie, *tok, *c;
        json_object *o, *r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "cancel", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        c = sno_cluster("4.15.0");
        bind_ready(ie, tok, A, c, "sno", "192.0.2.10", NULL, 0);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/cancel", c), md.admin_token, NULL, &o), 409,
                     "nothing is installing yet");
        cr_assert(strstr(tu_jstr(o, "reason"), "only an installation in progress can be cancelled"), "%s",
                  tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        disk_speed_ok(ie, tok, A);
        json_object_put(poll(ie, tok, A));
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"writing-image\",\"percent\":30}"), 200);

        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/cancel", c), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "status"), "error");
        cr_assert(strstr(tu_jstr(o, "status_info"), "Installation cancelled by"), "%s", tu_jstr(o, "status_info"));
        json_object_put(o);
        json_object *h = get_host(ie, A);
        cr_assert_str_eq(tu_jstr(h, "status"), "error");
        cr_assert(strstr(tu_jstr(h, "status_info"), "Installation cancelled by"), "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "progress.stage"), "writing-image", "what it had written stays");
        cr_assert_str_eq(tu_jstr(h, "progress.percent"), "30");
        json_object_put(h);
        /* The agent is told to stop, on every poll until it answers. */
        for (int i = 0; i < 2; i++) {
                r = poll(ie, tok, A);
                cr_assert_null(install_step(r), "no more install steps");
                cr_assert(strstr(json_object_to_json_string(r), "\"stop-installation\""), "%s",
                          json_object_to_json_string(r));
                json_object_put(r);
        }
        cr_assert_eq(post_result(ie, tok, A, "stop-installation", "stop-installation", 0,
                                 json_tokener_parse("{\"stopped\":true}"), NULL), 200);
        r = poll(ie, tok, A);
        cr_assert_null(strstr(json_object_to_json_string(r), "\"stop-installation\""), "%s",
                       json_object_to_json_string(r));
        json_object_put(r);
        char q[128];
        snprintf(q, sizeof q, "cluster_id=%s", c);
        cr_assert(events_have(q, "the agent stopped its installation"));
        cr_assert(events_have(q, "cancelled by"));
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/cancel", c), md.admin_token, NULL, NULL), 409,
                     "nothing in progress now");
        /* Reset: the host registers again and can install again. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/reset", c), md.admin_token, NULL, NULL), 200);
        register_ready(ie, tok, A, "sno", "192.0.2.10", NULL, 0);
        expect_host(ie, A, "known");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        free(c);
        free(ie);
        free(tok);
}

/* The disk speed check (issue 13, item 8) failing: a slow disk or a check
 * that could not run takes its host out of the preparation (insufficient,
 * its validation saying what was measured against which limit), the other
 * hosts back to known, the cluster back to insufficient; no host got an
 * install step. The user fixes it without a reset: a larger limit (or
 * another disk) and the next install measures again. */
Test(install_api, disk_speed_failure_stops_the_preparation) {
        static const char *const H[3] = {
                "6d757374-6572-4071-8335-000000000031", "6d757374-6572-4071-8335-000000000032",
                "6d757374-6572-4071-8335-000000000033",
        };
        char *ie, *tok, *c, q[128];
        json_object *o, *r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "slow", &ie, &tok), 201);
        for (int i = 0; i < 3; i++)
                agent_boot(ie, tok, H[i]);
        cr_assert_eq(tu_create_cluster(md.base, md.admin_token,
                                       "{\"name\":\"three\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                                       "\"192.0.2.0/24\",\"api_vip\":\"192.0.2.100\",\"ingress_vip\":\"192.0.2.101\","
                                       "\"pull_secret\":\"{\\\"auths\\\":{}}\",\"release_version\":\"4.15.0\"}", &c), 201);
        for (int i = 0; i < 3; i++) {
                const char *peers[2];
                size_t n = 0;
                for (int k = 0; k < 3; k++)
                        if (k != i)
                                peers[n++] = H[k];
                bind_ready(ie, tok, H[i], c, "three", "192.0.2.100", peers, n);
        }
        expect_cluster(c, "ready");
        snprintf(q, sizeof q, "cluster_id=%s", c);

        /* 1. Host 0 passes, host 1's disk is too slow (p99 25 ms, 10 allowed). */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        disk_speed_ok(ie, tok, H[0]);
        expect_host(ie, H[0], "preparing-for-installation");
        disk_speed(ie, tok, H[1], 25, NULL);
        json_object *h = get_host(ie, H[1]);
        cr_assert_str_eq(tu_jstr(h, "status"), "insufficient", "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_validation(h, "sufficient-installation-disk-speed"), "failure");
        cr_assert(strstr(tu_jstr(h, "status_info"),
                         "is too slow: fdatasync p99 25.0 ms, at most 10 ms allowed"), "%s", tu_jstr(h, "status_info"));
        json_object_put(h);
        o = get_cluster(c);
        cr_assert_str_eq(tu_jstr(o, "status"), "insufficient", "%s", tu_jstr(o, "status_info"));
        json_object_put(o);
        for (int i = 0; i < 3; i += 2) {
                expect_host(ie, H[i], "known");
                r = poll(ie, tok, H[i]);
                cr_assert_null(install_step(r), "nothing written: %s", json_object_to_json_string(r));
                json_object_put(r);
        }
        cr_assert(events_have(q, "preparing-for-installation -> insufficient: The installation did not start: host "
                                 "node-32 is insufficient"));
        cr_assert(events_have(q, "Another host of the cluster failed its preparation"));
        cr_assert(events_have(q, "fdatasync p99 25.00 ms"));
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 409,
                     "the slow disk still holds its host");
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/reset", c), md.admin_token, NULL, &o), 409,
                     "no reset needed (nor possible): nothing was installed");
        json_object_put(o);

        /* 2. The fix: a limit of 30 ms; the host is known again, the cluster
         * ready, and the next install measures again (the earlier results are
         * forgotten): this time host 2's check fails to run. */
        tu_musterd_stop(&md, SIGTERM);
        cr_assert_eq(tu_write_file(dir, "limit.conf", TU_CONFIG_LOW_MINIMUMS "[requirements]\ninstall_disk_fsync_ms = 30\n"),
                     0);
        char cfg[4200];
        snprintf(cfg, sizeof cfg, "%s/limit.conf", dir);
        cr_assert_eq(tu_musterd_restart(&md, cfg), 0);
        register_ready(ie, tok, H[1], "three", "192.0.2.100", (const char *const[]) { H[0], H[2] }, 2);
        expect_host(ie, H[1], "known");
        expect_cluster(c, "ready");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, NULL), 202);
        h = get_host(ie, H[1]);
        cr_assert_str_eq(tu_validation(h, "sufficient-installation-disk-speed"), "pending", "measured again");
        json_object_put(h);
        disk_speed(ie, tok, H[1], 25, NULL);
        expect_host(ie, H[1], "preparing-for-installation");
        disk_speed(ie, tok, H[2], 0, "cannot open /dev/vda for writing: Read-only file system");
        h = get_host(ie, H[2]);
        cr_assert_str_eq(tu_jstr(h, "status"), "insufficient");
        cr_assert_str_eq(tu_validation(h, "sufficient-installation-disk-speed"), "error");
        cr_assert(strstr(tu_jstr(h, "status_info"), "failed: cannot open /dev/vda for writing: Read-only file system"),
                  "%s", tu_jstr(h, "status_info"));
        json_object_put(h);
        expect_cluster(c, "insufficient");
        for (int i = 0; i < 2; i++)
                expect_host(ie, H[i], "known");
        /* A result that comes late (the host is no longer preparing) is not taken. */
        disk_speed_ok(ie, tok, H[2]);
        expect_host(ie, H[2], "insufficient");

        /* 3. Host 2 fixed and rebooted: it registers again, its failed check
         * no longer holds it, and the install goes through. */
        register_ready(ie, tok, H[2], "three", "192.0.2.100", (const char *const[]) { H[0], H[1] }, 2);
        expect_host(ie, H[2], "known");
        expect_cluster(c, "ready");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 202);
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "3", "each attempt its revision");
        json_object_put(o);
        for (int i = 0; i < 3; i++)
                disk_speed_ok(ie, tok, H[i]);
        expect_cluster(c, "installing");
        for (int i = 0; i < 3; i++) {
                r = poll(ie, tok, H[i]);
                cr_assert_str_eq(tu_jstr(install_step(r), "step_id"), "install-3", "host %d", i);
                json_object_put(r);
        }
        free(c);
        free(ie);
        free(tok);
}

/* ---- who acts on a host (issue 32, items 1-6) --------------------------------- */

static long host_call(const char *method, const char *ie, const char *host, const char *suffix, const char *tok,
                      const char *body, json_object **o) {
        return tu_http_json(method, url("/api/v2/infra-envs/%s/hosts/%s%s", ie, host, suffix), tok, body, o);
}

static void expect_refused(long want, const char *method, const char *ie, const char *host, const char *suffix,
                           const char *tok, const char *body, const char *who) {
        json_object *o = NULL;
        long code = host_call(method, ie, host, suffix, tok, body, &o);
        cr_assert_eq(code, want, "%s %s%s as %s: %ld, not %ld: %s", method, host, suffix, who, code, want,
                     o ? json_object_to_json_string(o) : "");
        cr_assert_null(tu_json_get(o, "host_token"), "nothing in the answer");
        json_object_put(o);
}

static const char *pending(const char *ie, const char *host, char *buf, size_t len) {
        json_object *h = get_host(ie, host);
        json_object *pa = tu_json_get(h, "pending_actions");
        snprintf(buf, len, "%s", pa ? json_object_to_json_string(pa) : "");
        json_object_put(h);
        return buf;
}

/* Alice (a cluster creator) owns the infra-env; bob, another creator, picks
 * her pool host for his cluster. Before, he may bind it but not take its
 * token or its logs; once installed in his cluster, its token, logs and
 * reclaim are his (and the infra admin's), not alice's; the infra-env's
 * agent token no longer speaks for it; a reclaim can be withdrawn until the
 * node agent has been handed it. */
Test(install_api, owners_of_a_host_and_its_token_logs_and_reclaim) {
        char *alice = tu_token(&md, "cluster-creator", "alice"), *bob = tu_token(&md, "cluster-creator", "bob");
        char *ie, *tok, *c, buf[256];
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, alice, "alice-rack", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        expect_host(ie, A, "known-unbound");

        /* Items 1 and 2: a pool host of alice's, for bob to see and bind only. */
        expect_refused(403, "POST", ie, A, "/actions/rotate-token", bob, NULL, "bob");
        expect_refused(403, "POST", ie, A, "/actions/gather-logs", bob, NULL, "bob");
        cr_assert_str_eq(pending(ie, A, buf, sizeof buf), "", "no ask left behind");
        expect_refused(403, "GET", ie, A, "/logs", bob, NULL, "bob");
        expect_refused(403, "PATCH", ie, A, "", bob, "{\"requested_hostname\":\"mine\"}", "bob");
        expect_refused(403, "DELETE", ie, A, "", bob, NULL, "bob");
        cr_assert_eq(host_call("GET", ie, A, "", bob, NULL, NULL), 200, "bob sees the pool");
        /* Nothing was revoked: alice's own rotation is the host's first
         * (from generation 1 to 2). */
        cr_assert_eq(host_call("POST", ie, A, "/actions/rotate-token", alice, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "token_generation"), "2", "%s", json_object_to_json_string(o));
        json_object_put(o);
        cr_assert_eq(host_call("POST", ie, A, "/actions/gather-logs", alice, NULL, NULL), 202, "alice's own host");
        cr_assert_str_eq(pending(ie, A, buf, sizeof buf), "[ \"gather-logs\" ]");

        /* Bob's cluster takes it and installs it. */
        char body[512];
        snprintf(body, sizeof body,
                 "{\"name\":\"sno\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                 "\"192.0.2.0/24\",\"high_availability_mode\":\"None\",\"pull_secret\":"
                 "\"{\\\"auths\\\":{}}\",\"release_version\":\"4.15.0\"}");
        cr_assert_eq(tu_create_cluster(md.base, bob, body, &c), 201);
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", c);
        cr_assert_eq(host_call("POST", ie, A, "/actions/bind", bob, body, NULL), 200, "bob binds from any pool");
        register_ready(ie, tok, A, "sno", "192.0.2.10", NULL, 0);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), bob, NULL, NULL), 202);
        disk_speed_ok(ie, tok, A);
        json_object_put(poll(ie, tok, A));
        cr_assert_eq(post_result(ie, tok, A, "install-1", "install", 0, json_tokener_parse("{\"applied_revision\":1}"),
                                 NULL), 200);
        /* Item 4: from the start of the install it is bob's cluster's. */
        expect_refused(403, "POST", ie, A, "/actions/rotate-token", alice, NULL, "alice");
        char *ntok = node_checkin(ie, A);
        expect_host(ie, A, "installed");
        expect_refused(403, "POST", ie, A, "/actions/rotate-token", alice, NULL, "alice");
        expect_refused(403, "POST", ie, A, "/actions/gather-logs", alice, NULL, "alice");
        expect_refused(403, "GET", ie, A, "/logs", alice, NULL, "alice");
        expect_refused(403, "POST", ie, A, "/actions/reclaim", alice, "{\"wipe\":true}", "alice");
        expect_refused(403, "POST", ie, A, "/actions/unbind", alice, NULL, "alice");
        cr_assert_eq(host_call("GET", ie, A, "", alice, NULL, NULL), 200, "alice still sees her infra-env's host");
        cr_assert_eq(host_call("POST", ie, A, "/actions/gather-logs", bob, NULL, NULL), 202, "bob's installed host");
        /* Item 5: the infra-env's token (in every ISO and PXE URL) posts
         * nothing for it any more; its reclaim result least of all. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), bob, NULL, NULL), 403);
        cr_assert_eq(post_result(ie, tok, A, "reclaim", "reclaim", 0, json_tokener_parse("{\"boot_dir\":\"/boot\"}"),
                                 NULL), 403);
        cr_assert_eq(put_progress(ie, tok, A, "{\"stage\":\"rebooting\",\"percent\":100}"), 403);
        cr_assert_eq(tu_http_raw("PUT", url("/api/v2/infra-envs/%s/hosts/%s/logs", ie, A), tok, "application/gzip",
                                 "\x1f\x8b\x08\0\0\0\0\0\0\x03\x03\0\0\0\0\0\0\0\0\0", 20,
                                 &(struct tu_http_reply) { 0 }),
                     403);
        expect_host(ie, A, "installed");

        /* Item 6: bob asks for a reclaim and withdraws it before the node
         * agent checks in; its boot files are then refused to the host's token. */
        cr_assert_eq(host_call("POST", ie, A, "/actions/reclaim", bob, "{}", NULL), 202);
        cr_assert(strstr(pending(ie, A, buf, sizeof buf), "\"reclaim\""), "%s", buf);
        struct tu_http_reply r = { 0 };
        cr_assert_eq(tu_http_raw("GET", url("/api/v2/infra-envs/%s/downloads/pxe/vmlinuz", ie), ntok, NULL, NULL, 0,
                                 &r), 200, "served while the reclaim is pending");
        cr_assert(r.len == TU_TPL_KERNEL_SIZE && memcmp(r.body, tpl + TU_TPL_KERNEL_OFF, r.len) == 0, "the kernel");
        free(r.body);
        cr_assert_eq(host_call("POST", ie, A, "/actions/reclaim", bob, "{\"cancel\":true,\"wipe\":true}", NULL), 400);
        cr_assert_eq(host_call("POST", ie, A, "/actions/reclaim", bob, "{\"cancel\":true}", &o), 200, "%s",
                     o ? json_object_to_json_string(o) : "");
        json_object_put(o);
        cr_assert_null(strstr(pending(ie, A, buf, sizeof buf), "reclaim"), "%s", buf);
        r = (struct tu_http_reply) { 0 };
        cr_assert_eq(tu_http_raw("GET", url("/api/v2/infra-envs/%s/downloads/pxe/vmlinuz", ie), ntok, NULL, NULL, 0,
                                 &r), 403, "withdrawn: no boot files");
        free(r.body);
        o = poll(ie, ntok, A);
        cr_assert_null(step_of(o, "reclaim"), "%s", json_object_to_json_string(o));
        json_object_put(o);
        cr_assert_eq(host_call("POST", ie, A, "/actions/reclaim", bob, "{\"cancel\":true}", &o), 409,
                     "nothing to withdraw");
        json_object_put(o);
        /* Asked again and handed to the node agent: too late to withdraw. */
        cr_assert_eq(host_call("POST", ie, A, "/actions/reclaim", bob, "{}", NULL), 202);
        o = poll(ie, ntok, A);
        cr_assert_not_null(step_of(o, "reclaim"), "%s", json_object_to_json_string(o));
        json_object_put(o);
        cr_assert_eq(host_call("POST", ie, A, "/actions/reclaim", bob, "{\"cancel\":true}", &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), "has started the reclaim"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        /* Its result, with its own token, unbinds it. */
        cr_assert_eq(post_result(ie, ntok, A, "reclaim", "reclaim", 0, json_tokener_parse("{\"boot_dir\":\"/boot\"}"),
                                 NULL), 200);
        o = get_host(ie, A);
        cr_assert_null(tu_json_get(o, "cluster_id"), "%s", json_object_to_json_string(o));
        json_object_put(o);
        cr_assert_str_eq(pending(ie, A, buf, sizeof buf), "[ \"gather-logs\" ]", "bob's ask for its logs stays");
        free(ntok);
        free(c);
        free(ie);
        free(tok);
        free(alice);
        free(bob);
}
