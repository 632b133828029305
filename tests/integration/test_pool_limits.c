/* The pool's limits and its edges against the real musterd (issue 12):
 * deleting an infra-env never takes installing hosts or another owner's
 * hosts with it; registrations are rate limited and capped per infra-env;
 * events are pruned by age and count; the infra-env list is paged; a
 * cluster's status names a missing VIP once; `musterctl host unbind` says
 * the state the host is in; GET /infra-envs/{id}/hosts; and a musterd whose
 * state directory is on a full file system still starts, serves reads,
 * refuses writes with 507 and is not ready until space returns. The agent
 * side is played over HTTP as muster-agent sends it. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <unistd.h>

#include "store/store.h"
#include "testutil.h"

static struct tu_musterd md;
static char *dir;
static char mounted[4096]; /* a tmpfs to take away at the end, or "" */

static void down(void) {
        tu_musterd_free(&md);
        if (mounted[0]) {
                (void) umount2(mounted, MNT_DETACH);
                mounted[0] = '\0';
        }
        if (dir) {
                tu_rm_rf(dir);
                free(dir);
                dir = NULL;
        }
}

TestSuite(pool, .fini = down, .timeout = 300);

/* This test's musterd, with the low hardware minimums and `extra` config. */
static void start(const char *extra) {
        char conf[4096];
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        snprintf(conf, sizeof conf, "%s%s", TU_CONFIG_LOW_MINIMUMS, extra ? extra : "");
        cr_assert_eq(tu_musterd_start_in(&md, dir, conf), 0, "musterd started");
}

#define url(...) tu_url(md.base, __VA_ARGS__)
#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })

/* ---- HTTP with one response header ------------------------------------------ */

struct hdr_want {
        const char *name;
        char value[256];
};

static size_t on_header(char *p, size_t sz, size_t nm, void *u) {
        struct hdr_want *w = u;
        size_t len = sz * nm, n = strlen(w->name);
        if (len > n + 1 && strncasecmp(p, w->name, n) == 0 && p[n] == ':') {
                const char *v = p + n + 1;
                size_t vl = len - n - 1;
                while (vl && (*v == ' ' || *v == '\t'))
                        v++, vl--;
                while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
                        vl--;
                snprintf(w->value, sizeof w->value, "%.*s", (int) vl, v);
        }
        return len;
}

static size_t on_body(char *p, size_t sz, size_t nm, void *u) {
        FILE *f = u;
        return fwrite(p, sz, nm, f);
}

/* method url with token and a JSON body (may be NULL): the status; the body
 * parsed in *out (may be NULL) and header `name` in *value ("" if absent). */
static long http_hdr(const char *method, const char *u, const char *token, const char *body, json_object **out,
                     const char *name, char value[256]) {
        CURL *c = curl_easy_init();
        struct curl_slist *h = NULL;
        struct hdr_want w = { .name = name, .value = "" };
        char auth[4096], *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        long status = 0;
        cr_assert(c && f);
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
        h = curl_slist_append(h, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_URL, u);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &w);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
        if (body)
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        if (curl_easy_perform(c) == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        fclose(f);
        if (out)
                *out = buf && *buf ? json_tokener_parse(buf) : NULL;
        free(buf);
        if (value)
                snprintf(value, 256, "%s", w.value);
        return status;
}

/* ---- the agent side, as muster-agent sends it -------------------------------- */

static long reg(const char *ie, const char *tok, const char *host) {
        char body[512];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", host);
        return tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL);
}

static void post_result(const char *ie, const char *tok, const char *host, const char *type, json_object *output) {
        long code = tu_step_result(md.base, ie, tok, host, "s-1", type, 0, output, NULL);
        cr_assert_eq(code, 200, "%s result: %ld", type, code);
}

/* Register `host` with the qemu-q35 fixture's inventory, its id replaced. */
static void agent_boot(const char *ie, const char *tok, const char *host) {
        long code = reg(ie, tok, host);
        cr_assert(code == 201 || code == 200, "register %s: %ld", host, code);
        json_object *inv = json_object_from_file(MUSTER_FIXTURES_DIR "/qemu-q35/expected.json");
        cr_assert_not_null(inv);
        json_object_object_add(inv, "host_id", json_object_new_string(host));
        char name[32];
        snprintf(name, sizeof name, "node-%s", host + strlen(host) - 2);
        json_object_object_add(inv, "hostname", json_object_new_string(name));
        post_result(ie, tok, host, "inventory", inv);
}

static json_object *get(const char *path) {
        json_object *o;
        long code = tu_http_json("GET", url("%s", path), md.admin_token, NULL, &o);
        cr_assert_eq(code, 200, "GET %s: %ld", path, code);
        return o;
}

static char *status_of(const char *ie, const char *host) {
        char p[256];
        snprintf(p, sizeof p, "/api/v2/infra-envs/%s/hosts/%s", ie, host);
        json_object *o = get(p);
        char *s = strdup(tu_jstr(o, "status"));
        json_object_put(o);
        return s;
}

static void expect_status(const char *ie, const char *host, const char *want) {
        char *s = status_of(ie, host);
        cr_assert_str_eq(s, want, "host %s is %s, not %s", host, s, want);
        free(s);
}

static char *create(const char *token, const char *path, const char *body, const char *key) {
        return tu_create(md.base, token, path, body, key);
}

static void bind_to(const char *token, const char *ie, const char *host, const char *cluster) {
        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cluster);
        long code = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, host), token, body, NULL);
        cr_assert_eq(code, 200, "bind %s: %ld", host, code);
}

/* How many times needle occurs in s. */
static int count_of(const char *s, const char *needle) {
        int n = 0;
        for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static const char *A = "6d757374-6572-4071-8335-0000000000a1";
static const char *B = "6d757374-6572-4071-8335-0000000000b2";
static const char *C = "6d757374-6572-4071-8335-0000000000c3";
static const char *D = "6d757374-6572-4071-8335-0000000000d4";
static const char *E = "6d757374-6572-4071-8335-0000000000e5";

/* A single-node cluster with host A installing: the fixture release, A
 * bound, registered again, given its role and step results, installed. */
static char *install_sno(const char *ie, const char *tok) {
        char rel[4096];
        snprintf(rel, sizeof rel, "%s/state/images/4.15.0", dir); /* under [releases] image_dir */
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        cr_assert_eq(tu_release_import(md.base, md.admin_token, rel, NULL), 201);
        char *c = create(md.admin_token, "/api/v2/clusters",
                         "{\"name\":\"sno\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                         "\"192.0.2.0/24\",\"high_availability_mode\":\"None\",\"pull_secret\":\"{\\\"auths\\\":{}}\","
                         "\"release_version\":\"4.15.0\"}",
                         "id");
        agent_boot(ie, tok, A);
        bind_to(md.admin_token, ie, A, c);
        cr_assert_eq(reg(ie, tok, A), 200, "registered again after the bind");
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token,
                                  "{\"role\":\"master\",\"requested_hostname\":\"sno-0\"}", NULL), 200);
        post_result(ie, tok, A, "ntp-synchronizer",
                    json_tokener_parse("{\"synced\":true,\"offset_ms\":-2,\"method\":\"sntp\"}"));
        post_result(ie, tok, A, "domain-resolution",
                    json_tokener_parse("{\"resolutions\":[{\"name\":\"api.sno.example.test\","
                                       "\"ipv4_addresses\":[\"192.0.2.10\"]},{\"name\":\"api-int.sno.example.test\","
                                       "\"ipv4_addresses\":[\"192.0.2.10\"]},{\"name\":\"*.apps.sno.example.test\","
                                       "\"ipv4_addresses\":[\"192.0.2.10\"]}]}"));
        expect_status(ie, A, "known");
        json_object *o;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", c), md.admin_token, NULL, &o), 202,
                     "%s", o ? json_object_to_json_string(o) : "");
        json_object_put(o);
        post_result(ie, tok, A, "installation-disk-speed-check",
                    json_tokener_parse("{\"path\":\"/dev/vda\",\"method\":\"device\",\"writes\":50,\"p99_ms\":2}"));
        expect_status(ie, A, "installing");
        return c;
}

/* ---- item 4: deleting an infra-env ------------------------------------------ */

Test(pool, infra_env_delete_keeps_installing_and_foreign_hosts) {
        start(NULL);
        json_object *o;
        char *ie, *tok, *ie2, *tok2, *ie3, *tok3;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack", &ie, &tok), 201);
        char *sno = install_sno(ie, tok);

        /* An installing host keeps its infra-env: 409 naming it, nothing goes. */
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s", ie), md.admin_token, NULL, &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), A) && strstr(tu_jstr(o, "reason"), "installing"), "%s",
                  tu_jstr(o, "reason"));
        json_object_put(o);
        expect_status(ie, A, "installing");
        o = get(tu_url("", "/api/v2/clusters/%s", sno));
        cr_assert_str_eq(tu_jstr(o, "status"), "installing");
        json_object_put(o);

        /* A host lent to another owner's cluster keeps its infra-env too. */
        char *alice = create(md.admin_token, "/api/v2/tokens", "{\"role\":\"cluster-creator\",\"owner\":\"alice\"}",
                             "token");
        char *ca = create(alice, "/api/v2/clusters", "{\"name\":\"a\"}", "id");
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack2", &ie2, &tok2), 201);
        agent_boot(ie2, tok2, C);
        expect_status(ie2, C, "known-unbound");
        bind_to(alice, ie2, C, ca);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s", ie2), md.admin_token, NULL, &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), C) && strstr(tu_jstr(o, "reason"), "alice"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        expect_status(ie2, C, "binding");

        /* Hosts bound to the owner's own clusters are unbound with events, and
         * their cluster can go afterwards: it is left in no state it cannot leave. */
        char *own = create(md.admin_token, "/api/v2/clusters", "{\"name\":\"own\"}", "id");
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack3", &ie3, &tok3), 201);
        agent_boot(ie3, tok3, D);
        agent_boot(ie3, tok3, E);
        expect_status(ie3, D, "known-unbound");
        bind_to(md.admin_token, ie3, D, own);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s", own), md.admin_token, NULL, NULL), 409,
                     "a cluster with a host cannot go");
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s", ie3), md.admin_token, NULL, NULL), 204);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie3, D), md.admin_token, NULL, NULL),
                     404);
        o = get(tu_url("", "/api/v2/hosts?cluster_id=%s", own));
        cr_assert_eq(json_object_array_length(o), 0, "the cluster has no hosts left");
        json_object_put(o);
        o = get(tu_url("", "/api/v2/events?cluster_id=%s", own));
        const char *ev = json_object_to_json_string(o);
        cr_assert(strstr(ev, D) && strstr(ev, "unbound from cluster"), "the unbind is an event of the cluster: %s", ev);
        json_object_put(o);
        o = get(tu_url("", "/api/v2/clusters/%s", own));
        cr_assert(strstr(tu_jstr(o, "status_info"), "No host is bound"), "the cluster decided again: %s",
                  tu_jstr(o, "status_info"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s", own), md.admin_token, NULL, NULL), 204);
        free(sno);
        free(alice);
        free(ca);
        free(own);
        free(ie);
        free(tok);
        free(ie2);
        free(tok2);
        free(ie3);
        free(tok3);
}

/* ---- item 20: musterctl host unbind says the state ----------------------------- */

Test(pool, host_unbind_prints_the_state_the_server_answered) {
        start(NULL);
        char *ie, *tok, *out = NULL, *err = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack", &ie, &tok), 201);
        char *sno = install_sno(ie, tok);
        /* The installation fails: the host is in error, its cluster no longer installing. */
        json_object *res = json_tokener_parse("{\"step_id\":\"install-1\",\"step_type\":\"install\",\"exit_code\":1,"
                                              "\"error\":\"the disk caught fire\"}");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), tok,
                                  json_object_to_json_string(res), NULL), 200);
        json_object_put(res);
        expect_status(ie, A, "error");

        cr_assert_eq(CTL(&out, &err, "host", "unbind", A), 0, "%s", err);
        cr_assert(strstr(out, "unbinding-pending-user-action"), "%s", out);
        cr_assert_null(strstr(out, "unbound"), "the host is not unbound yet: %s", out);
        free(out);
        free(err);
        expect_status(ie, A, "unbinding-pending-user-action");

        /* A host that was not installed is back in the pool at once: said so. */
        char *pool = create(md.admin_token, "/api/v2/clusters", "{\"name\":\"pool\"}", "id");
        agent_boot(ie, tok, B);
        expect_status(ie, B, "known-unbound");
        bind_to(md.admin_token, ie, B, pool);
        cr_assert_eq(CTL(&out, &err, "host", "unbind", B), 0, "%s", err);
        cr_assert(strstr(out, "unbound: discovering-unbound"), "%s", out);
        free(out);
        free(err);
        free(sno);
        free(pool);
        free(ie);
        free(tok);
}

/* ---- item 7: registrations and events ---------------------------------------- */

Test(pool, registrations_rate_limited_and_capped) {
        start("[infraenv]\nmax_hosts = 4\nregister_burst = 5\nregister_interval = 1h\n");
        char *ie, *tok, *ie2, *tok2, retry[256];
        char hosts[7][40];
        for (int i = 0; i < 7; i++)
                snprintf(hosts[i], sizeof hosts[i], "6d757374-6572-4071-8335-00000000010%d", i);
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack", &ie, &tok), 201);
        for (int i = 0; i < 4; i++)
                cr_assert_eq(reg(ie, tok, hosts[i]), 201, "host %d of the cap", i);
        /* The cap: 409, and the infra-env still holds 4. */
        json_object *o;
        char body[256];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", hosts[4]);
        cr_assert_eq(http_hdr("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, &o, "Retry-After", retry), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), "max_hosts"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        o = get(tu_url("", "/api/v2/infra-envs/%s/hosts", ie));
        cr_assert_eq(json_object_array_length(o), 4);
        json_object_put(o);
        /* A known host registers again whatever the cap and the rate. */
        for (int k = 0; k < 3; k++)
                cr_assert_eq(reg(ie, tok, hosts[0]), 200, "re-registration %d", k);

        /* The bucket (5) is empty now: a new host gets 429 with Retry-After. */
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", ie, hosts[3]), md.admin_token, NULL,
                                  NULL), 204, "room under the cap again");
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", hosts[5]);
        cr_assert_eq(http_hdr("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, &o, "Retry-After", retry), 429);
        json_object_put(o);
        long after = strtol(retry, NULL, 10);
        cr_assert(after >= 1 && after <= 3600, "Retry-After: \"%s\"", retry);
        /* Polls and step results of known hosts are never limited. */
        for (int k = 0; k < 20; k++)
                cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, hosts[1]), tok,
                                          NULL, NULL), 200, "poll %d", k);
        json_object *inv = json_object_from_file(MUSTER_FIXTURES_DIR "/qemu-q35/expected.json");
        cr_assert_not_null(inv);
        json_object_object_add(inv, "host_id", json_object_new_string(hosts[1]));
        post_result(ie, tok, hosts[1], "inventory", inv);
        cr_assert_eq(reg(ie, tok, hosts[1]), 200);

        /* The bucket is the infra-env's: another one registers at once. */
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack2", &ie2, &tok2), 201);
        cr_assert_eq(reg(ie2, tok2, hosts[6]), 201);
        free(ie);
        free(tok);
        free(ie2);
        free(tok2);
}

/* Events appended straight to the store (as musterd does) with a time of
 * our choosing. */
static void append_events(const char *host, const char *time, const char *prefix, int n) {
        char path[4096];
        struct store *st;
        snprintf(path, sizeof path, "sqlite:%s/muster.db", md.state_dir);
        cr_assert_eq(store_open(path, &st), 0);
        for (int i = 0; i < n; i++) {
                struct event e;
                char msg[64];
                event_init(&e);
                snprintf(msg, sizeof msg, "%s %d", prefix, i);
                e.severity = EVENT_INFO;
                e.category = EVENT_CAT_AGENT;
                e.host_id = strdup(host);
                e.message = strdup(msg);
                e.time = time ? strdup(time) : NULL;
                cr_assert_eq(store_event_append(st, &e), 0);
                event_free(&e);
        }
        store_close(st);
}

static size_t host_events(const char *host, json_object **out) {
        *out = get(tu_url("", "/api/v2/events?host_id=%s&limit=1000", host));
        return json_object_array_length(*out);
}

Test(pool, events_pruned_by_age_and_count) {
        start("[monitor]\nmonitor_interval = 1\n[events]\nmax_age = 1h\nmax_per_host = 10\n");
        append_events(A, "2020-01-01T00:00:00Z", "ancient", 3);
        append_events(B, NULL, "fresh", 2);
        append_events(C, NULL, "chatty", 25);
        /* The periodic pass prunes: wait (bounded) for its effect. */
        json_object *o = NULL;
        int64_t until = tu_mono_ms() + 60000;
        size_t na = 0, nc = 0;
        do {
                json_object_put(o);
                na = host_events(A, &o);
                json_object_put(o);
                nc = host_events(C, &o);
                if (na == 0 && nc == 10)
                        break;
                usleep(200 * 1000);
        } while (tu_mono_ms() < until);
        cr_assert_eq(na, 0, "events older than max_age are pruned");
        cr_assert_eq(nc, 10, "a host keeps its newest max_per_host events, not %zu", nc);
        cr_assert_str_eq(tu_jstr(o, "0.message"), "chatty 15", "the oldest kept: %s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "9.message"), "chatty 24");
        json_object_put(o);
        cr_assert_eq(host_events(B, &o), 2, "fresh events of a quiet host stay");
        json_object_put(o);
}

/* ---- item 15 and 25: lists ---------------------------------------------------- */

Test(pool, infra_env_list_pages_and_musterctl_follows) {
        start(NULL);
        char path[4096], next[256];
        struct store *st;
        /* More than a server page (1000) and the default one (100), made
         * straight in the store: fast. */
        snprintf(path, sizeof path, "sqlite:%s/muster.db", md.state_dir);
        cr_assert_eq(store_open(path, &st), 0);
        for (int i = 0; i < 1005; i++) {
                struct infra_env ie;
                char name[32];
                infra_env_init(&ie);
                snprintf(name, sizeof name, "bulk-%04d", i);
                ie.name = strdup(name);
                ie.owner = strdup("admin");
                ie.cpu_architecture = strdup("x86_64");
                cr_assert_eq(store_infra_env_create(st, &ie), 0);
                infra_env_free(&ie);
        }
        store_close(st);

        /* Pages follow X-Next-After; the last page has none. */
        json_object *o;
        size_t seen = 0;
        char after[300] = "";
        for (int page = 0; page < 10; page++) {
                long code = http_hdr("GET", url("/api/v2/infra-envs?limit=400%s", after), md.admin_token, NULL, &o,
                                     "X-Next-After", next);
                cr_assert_eq(code, 200);
                size_t n = json_object_array_length(o);
                if (seen == 0)
                        cr_assert_str_eq(tu_jstr(o, "0.name"), "bulk-0000");
                seen += n;
                json_object_put(o);
                if (!next[0])
                        break;
                cr_assert_eq(n, 400, "a page with a cursor is full");
                snprintf(after, sizeof after, "&after=%s", next);
        }
        cr_assert_eq(seen, 1005, "every infra-env, once");
        cr_assert_eq(http_hdr("GET", url("/api/v2/infra-envs?limit=1001"), md.admin_token, NULL, NULL, "X", next), 400,
                     "?limit= has the server's maximum");

        char *out = NULL, *err = NULL;
        cr_assert_eq(CTL(&out, &err, "infraenv", "list", "-o", "json"), 0, "%s", err);
        o = json_tokener_parse(out);
        cr_assert_not_null(o, "%.200s", out);
        cr_assert_eq(json_object_array_length(o), 1005, "musterctl follows the cursor");
        cr_assert_str_eq(tu_jstr(o, "1004.name"), "bulk-1004");
        json_object_put(o);
        free(out);
        free(err);
}

Test(pool, infra_env_hosts_list) {
        start(NULL);
        char *ie, *tok, *ie2, *tok2, next[256];
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack", &ie, &tok), 201);
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack2", &ie2, &tok2), 201);
        agent_boot(ie, tok, A);
        cr_assert_eq(reg(ie, tok, B), 201);
        cr_assert_eq(reg(ie, tok, C), 201);
        agent_boot(ie2, tok2, D);

        /* Only that infra-env's hosts, without inventories. */
        o = get(tu_url("", "/api/v2/infra-envs/%s/hosts", ie));
        cr_assert_eq(json_object_array_length(o), 3);
        cr_assert_str_eq(tu_jstr(o, "0.id"), A);
        cr_assert_str_eq(tu_jstr(o, "1.id"), B);
        cr_assert_str_eq(tu_jstr(o, "2.id"), C);
        for (size_t i = 0; i < 3; i++) {
                cr_assert_str_eq(tu_jstr(json_object_array_get_idx(o, i), "infra_env_id"), ie);
                cr_assert_null(tu_json_get(json_object_array_get_idx(o, i), "inventory"));
        }
        cr_assert_str_eq(tu_jstr(o, "0.hostname"), "node-a1", "from the inventory");
        json_object_put(o);
        /* Filters and pages. */
        o = get(tu_url("", "/api/v2/infra-envs/%s/hosts?status=known-unbound", ie));
        cr_assert_eq(json_object_array_length(o), 1);
        cr_assert_str_eq(tu_jstr(o, "0.id"), A);
        json_object_put(o);
        cr_assert_eq(http_hdr("GET", url("/api/v2/infra-envs/%s/hosts?limit=2", ie), md.admin_token, NULL, &o,
                              "X-Next-After", next), 200);
        cr_assert_eq(json_object_array_length(o), 2);
        cr_assert(next[0], "a cursor for the rest");
        json_object_put(o);
        cr_assert_eq(http_hdr("GET", url("/api/v2/infra-envs/%s/hosts?limit=2&after=%s", ie, next), md.admin_token,
                              NULL, &o, "X-Next-After", next), 200);
        cr_assert_eq(json_object_array_length(o), 1);
        cr_assert_str_eq(tu_jstr(o, "0.id"), C);
        cr_assert_str_eq(next, "", "the last page has no cursor");
        json_object_put(o);
        o = get(tu_url("", "/api/v2/infra-envs/%s/hosts", ie2));
        cr_assert_eq(json_object_array_length(o), 1);
        cr_assert_str_eq(tu_jstr(o, "0.id"), D);
        json_object_put(o);

        /* Refusals: bad input, unknown, agents, other owners. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts?status=sleeping", ie), md.admin_token, NULL,
                                  NULL), 400);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/not-a-uuid/hosts"), md.admin_token, NULL, NULL), 400);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/11111111-2222-4333-8444-555555555555/hosts"),
                                  md.admin_token, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts", ie), tok, NULL, NULL), 403,
                     "agents list no hosts");
        char *bob = create(md.admin_token, "/api/v2/tokens", "{\"role\":\"cluster-creator\",\"owner\":\"bob\"}",
                           "token");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts", ie), bob, NULL, NULL), 403,
                     "another owner's infra-env");
        free(bob);
        free(ie);
        free(tok);
        free(ie2);
        free(tok2);
}

/* ---- item 18: a missing VIP is said once ---------------------------------------- */

Test(pool, cluster_status_names_missing_api_vip_once) {
        start(NULL);
        char *c = create(md.admin_token, "/api/v2/clusters",
                         "{\"name\":\"full\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                         "\"192.0.2.0/24\",\"pull_secret\":\"{}\"}",
                         "id");
        json_object *o = get(tu_url("", "/api/v2/clusters/%s", c));
        const char *info = tu_jstr(o, "status_info");
        cr_assert_str_eq(tu_jstr(o, "status"), "pending-for-input");
        cr_assert_eq(count_of(info, "The API VIP is not set"), 1, "once: \"%s\"", info);
        cr_assert_eq(count_of(info, "The ingress VIP is not set"), 1, "\"%s\"", info);
        cr_assert_str_eq(tu_validation(o, "api-vips-defined"), "failure", "the validations keep their verdicts");
        cr_assert_str_eq(tu_validation(o, "api-vips-valid"), "pending");
        json_object_put(o);
        free(c);
}

/* ---- item 14: a full file system ------------------------------------------------ */

/* Fill the file system mounted at mnt with one file: its path (malloc'd). */
static char *fill(const char *mnt) {
        char *p;
        cr_assert(asprintf(&p, "%s/fill", mnt) > 0);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        static char block[65536];
        ssize_t n;
        while ((n = write(fd, block, sizeof block)) > 0)
                ;
        /* What is left is smaller than a block: take it byte by byte. */
        while ((n = write(fd, block, 1)) > 0)
                ;
        cr_assert_eq(errno, ENOSPC, "filled to the brim: %s", strerror(errno));
        close(fd);
        return p;
}

Test(pool, full_file_system_starts_reads_refuses_writes) {
        if (geteuid() != 0)
                cr_skip_test("mounting a small tmpfs needs root (CI runs as root)");
        dir = tu_mkdtemp();
        char mnt[2048], state[4096], conf[4096], *pub_before, *pub_after;
        snprintf(mnt, sizeof mnt, "%s/mnt", dir);
        snprintf(state, sizeof state, "%s/state", mnt);
        cr_assert_eq(tu_write_file(dir, "mnt/.keep", ""), 0);
        cr_assert_eq(mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=8m,mode=0700"), 0, "mount: %s",
                     strerror(errno));
        snprintf(mounted, sizeof mounted, "%s", mnt);
        /* The configuration stays outside, as /etc/muster does. */
        snprintf(conf, sizeof conf, "%s/musterd.conf", dir);
        cr_assert_eq(tu_write_file(dir, "musterd.conf", TU_CONFIG_LOW_MINIMUMS), 0);
        cr_assert_eq(tu_musterd_start(&md, state, conf), 0);
        char *ie = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "before", &ie, NULL), 201);
        tu_musterd_stop(&md, SIGTERM);
        char pub[4200];
        snprintf(pub, sizeof pub, "%s/signing-key.pub", state);
        pub_before = tu_read_file(pub, NULL);
        cr_assert_not_null(pub_before);

        char *filler = fill(mnt);
        cr_assert_eq(tu_musterd_restart(&md, conf), 0, "musterd starts on a full file system");
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs"), md.admin_token, NULL, &o), 200, "reads");
        cr_assert_str_eq(tu_jstr(o, "0.id"), ie);
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s", ie), md.admin_token, NULL, NULL), 200);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token, "{\"name\":\"during\"}", &o), 507,
                     "writes: %s", o ? json_object_to_json_string(o) : "");
        cr_assert(strstr(tu_jstr(o, "reason"), "full"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token, "{\"name\":\"x\"}", NULL),
                     507);
        cr_assert_eq(tu_http_json("GET", url("/readyz"), NULL, NULL, &o), 503);
        cr_assert(strstr(tu_jstr(o, "reason"), "full"), "readyz says why: %s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/healthz"), NULL, NULL, NULL), 200, "alive all the same");

        /* Space returns: writes work and musterd is ready again, no restart. */
        cr_assert_eq(unlink(filler), 0);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token, "{\"name\":\"after\"}", NULL), 201);
        cr_assert_eq(tu_http_json("GET", url("/readyz"), NULL, NULL, NULL), 200);
        o = get("/api/v2/infra-envs");
        cr_assert_eq(json_object_array_length(o), 2);
        json_object_put(o);
        tu_musterd_stop(&md, SIGTERM);
        pub_after = tu_read_file(pub, NULL);
        cr_assert_str_eq(pub_after, pub_before, "the public key is the same");
        cr_assert_eq(umount(mnt), 0, "umount: %s", strerror(errno));
        mounted[0] = '\0';
        free(pub_before);
        free(pub_after);
        free(filler);
        free(ie);
}
