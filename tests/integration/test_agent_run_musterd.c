/* `muster-agent run` against the real musterd on loopback: registration and
 * the inventory step from a captured machine, token rotation (exit code 3,
 * then a new agent with the new token is the same host), a coordinator that
 * dies and comes back on the same address, the host id kept in --state-dir,
 * a deleted host coming back, and binding reaching the agent ("exit" ->
 * register again). Every wait is bounded; nothing is timed. The client's
 * own limits (reply cap, timeouts, Date header) are checked against a raw
 * loopback socket that answers with canned bytes. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "testutil.h"

#define FIXTURE MUSTER_FIXTURES_DIR "/qemu-q35/root"
#define FIXTURE_HOST_ID "6d757374-6572-4071-8335-000000000001"
#define EXIT_AUTH 3
#define WAIT_MS 30000

static struct tu_musterd md;
static char *dir;
static char config[4096];
static int agents[4];      /* pids this test started and has not reaped */
static int n_logs;

/* Polls are every second; the QEMU fixture (2 GiB) passes the pool's
 * minimums when `lenient`, so the host can become known-unbound and bound. */
static void md_up(bool lenient) {
        char text[512];
        snprintf(text, sizeof text, "[agent]\ninstruction_interval = 1\n%s",
                 lenient ? "[requirements.any]\nmemory = 1 GiB\ncpu_cores = 1\n" : "");
        snprintf(config, sizeof config, "%s/musterd.conf", dir);
        cr_assert_eq(tu_write_file(dir, "musterd.conf", text), 0);
        char state[4096];
        snprintf(state, sizeof state, "%s/state", dir);
        cr_assert_eq(tu_musterd_start(&md, state, config), 0, "musterd started");
}

static void up(void) {
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        memset(agents, 0, sizeof agents);
        n_logs = 0;
}

static void down(void) {
        for (size_t i = 0; i < sizeof agents / sizeof *agents; i++)
                if (agents[i] > 0)
                        tu_stop_pid(agents[i], SIGTERM, WAIT_MS); /* exits 0: checked by tu_stop_pid */
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(agent_run, .init = up, .fini = down, .timeout = 240);

/* The suite's musterd and a printf-formatted path (tu_url's buffers). */
#define url(...) tu_url(md.base, __VA_ARGS__)

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
}

static void make_ie(char **id, char **token) {
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "agents", id, token), 201);
}

static void print_log(const char *path) {
        char *text = NULL;
        FILE *f = fopen(path, "re");
        if (!f)
                return;
        size_t n = 0;
        if (getdelim(&text, &n, '\0', f) > 0)
                fprintf(stderr, "---- %s ----\n%s---- end ----\n", path, text);
        free(text);
        fclose(f);
}

struct agent {
        int slot;
        int pid;
        char log[4096];
};

/* Start `muster-agent run -v` on the fixture with `token`; extra options
 * (NULL-terminated) after the standard ones. */
static void agent_start(struct agent *a, const char *ie, const char *token, ...) {
        char tokfile[4096], name[64];
        const char *argv[32];
        size_t n = 0;
        va_list ap;

        snprintf(name, sizeof name, "token-%d", n_logs);
        cr_assert_eq(tu_write_file(dir, name, token), 0);
        snprintf(tokfile, sizeof tokfile, "%s/%s", dir, name);
        snprintf(a->log, sizeof a->log, "%s/agent-%d.log", dir, n_logs++);
        argv[n++] = tu_agent_path();
        argv[n++] = "run";
        argv[n++] = "--coordinator";
        argv[n++] = md.base;
        argv[n++] = "--infra-env";
        argv[n++] = ie;
        argv[n++] = "--token-file";
        argv[n++] = tokfile;
        argv[n++] = "--sysroot";
        argv[n++] = FIXTURE;
        argv[n++] = "-v";
        va_start(ap, token);
        for (const char *s; (s = va_arg(ap, const char *)) && n < 31;)
                argv[n++] = s;
        va_end(ap);
        argv[n] = NULL;
        a->slot = -1;
        for (int i = 0; i < (int) (sizeof agents / sizeof *agents); i++)
                if (agents[i] == 0) {
                        a->slot = i;
                        break;
                }
        cr_assert_geq(a->slot, 0, "too many agents at once");
        a->pid = tu_spawn(argv, a->log);
        cr_assert_gt(a->pid, 0, "agent started");
        agents[a->slot] = a->pid;
}

/* Its exit status once it ended by itself within WAIT_MS; -1 otherwise. */
static int agent_wait(struct agent *a) {
        int st = tu_wait_pid(a->pid, WAIT_MS);
        if (st >= 0)
                agents[a->slot] = 0;
        else
                print_log(a->log);
        return st;
}

/* SIGTERM, bounded wait, SIGKILL if that did not do it; the exit status. */
static int agent_stop(struct agent *a) {
        int st = tu_stop_pid(a->pid, SIGTERM, WAIT_MS);
        agents[a->slot] = 0;
        if (st != 0)
                print_log(a->log);
        return st;
}

static bool log_has(const struct agent *a, const char *needle) {
        char *text = NULL;
        size_t n = 0;
        bool found = false;
        FILE *f = fopen(a->log, "re");
        if (!f)
                return false;
        if (getdelim(&text, &n, '\0', f) > 0)
                found = strstr(text, needle) != NULL;
        free(text);
        fclose(f);
        return found;
}

/* Wait (bounded) for a line the agent logs after the event a test saw. */
static bool wait_log(const struct agent *a, const char *needle) {
        for (int waited = 0; waited < WAIT_MS; waited += 100) {
                if (log_has(a, needle))
                        return true;
                sleep_ms(100);
        }
        print_log(a->log);
        return false;
}

/* The host as the admin sees it, or NULL if it does not exist. */
static json_object *host_get(const char *ie, const char *h) {
        json_object *o = NULL;
        long code = tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, h), md.admin_token, NULL, &o);
        if (code != 200) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static bool validated(const char *status) {
        return status && (strcmp(status, "known-unbound") == 0 || strcmp(status, "insufficient-unbound") == 0);
}

/* Wait until the host is in a state `ok` accepts; the host, or NULL. */
static json_object *wait_host(const char *ie, const char *h, bool (*ok)(const char *), const struct agent *a) {
        for (int waited = 0; waited < WAIT_MS; waited += 100) {
                json_object *o = host_get(ie, h);
                if (o && ok(tu_jstr(o, "status")))
                        return o;
                json_object_put(o);
                sleep_ms(100);
        }
        if (a)
                print_log(a->log);
        return NULL;
}

/* wait_host for a test that only needs the host to get there. */
static void await_host(const char *ie, const char *h, bool (*ok)(const char *), const struct agent *a,
                       const char *what) {
        json_object *o = wait_host(ie, h, ok, a);
        cr_assert_not_null(o, "%s", what);
        json_object_put(o);
}

/* Wait until the host checks in at another second than `before` (checked_in_at
 * has whole seconds; callers let a second pass first). */
static bool wait_checkin_after(const char *ie, const char *h, const char *before, const struct agent *a) {
        for (int waited = 0; waited < WAIT_MS; waited += 100) {
                json_object *o = host_get(ie, h);
                const char *t = o ? tu_jstr(o, "checked_in_at") : NULL;
                bool newer = t && (!before || strcmp(t, before) > 0);
                json_object_put(o);
                if (newer)
                        return true;
                sleep_ms(100);
        }
        print_log(a->log);
        return false;
}

static char *checked_in_at(const char *ie, const char *h) {
        json_object *o = host_get(ie, h);
        cr_assert_not_null(o);
        char *t = strdup(tu_jstr(o, "checked_in_at"));
        json_object_put(o);
        return t;
}

static size_t host_count(const char *ie) {
        json_object *l;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?infra_env_id=%s", ie), md.admin_token, NULL, &l), 200);
        size_t n = json_object_array_length(l);
        json_object_put(l);
        return n;
}

Test(agent_run, registers_posts_inventory_and_gets_validated) {
        char *ie, *tok;
        struct agent a;
        md_up(false);
        make_ie(&ie, &tok);
        agent_start(&a, ie, tok, NULL);
        json_object *h = wait_host(ie, FIXTURE_HOST_ID, validated, &a);
        cr_assert_not_null(h, "the host reached a validated state");
        /* The QEMU machine has 2 GiB: insufficient for the pool, and why. */
        cr_assert_str_eq(tu_jstr(h, "status"), "insufficient-unbound");
        cr_assert(strstr(tu_jstr(h, "status_info"), "memory"), "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "discovery_agent_version"), MUSTER_VERSION);
        cr_assert_str_eq(tu_jstr(h, "inventory.hostname"), "muster-q35-01");
        cr_assert_str_eq(tu_jstr(h, "inventory.system_vendor.product_name"), "MS-2200 Rack Server");
        json_object_put(h);
        cr_assert_eq(host_count(ie), 1);
        cr_assert_eq(agent_stop(&a), 0, "SIGTERM: clean exit 0");
        cr_assert(log_has(&a, "Received SIGTERM"));
        free(ie);
        free(tok);
}

Test(agent_run, rotated_token_stops_the_agent_and_the_new_one_is_the_same_host) {
        char *ie, *tok;
        struct agent a, b;
        json_object *o;
        md_up(false);
        make_ie(&ie, &tok);
        agent_start(&a, ie, tok, NULL);
        await_host(ie, FIXTURE_HOST_ID, validated, &a, "the host was validated");

        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/actions/rotate-token", ie), md.admin_token, NULL, &o), 200);
        char *fresh = strdup(tu_jstr(o, "agent_token"));
        json_object_put(o);
        cr_assert_eq(agent_wait(&a), EXIT_AUTH, "a revoked agent exits with the auth code");
        cr_assert(log_has(&a, "HTTP 401"), "the log names the HTTP reason");
        cr_assert(log_has(&a, md.base), "the log names the coordinator");

        char *before = checked_in_at(ie, FIXTURE_HOST_ID);
        sleep_ms(1100);
        agent_start(&b, ie, fresh, NULL);
        cr_assert(wait_checkin_after(ie, FIXTURE_HOST_ID, before, &b), "the new agent checks in");
        cr_assert_eq(host_count(ie), 1, "same host id, no second host");
        cr_assert_eq(agent_stop(&b), 0);
        free(before);
        free(fresh);
        free(ie);
        free(tok);
}

Test(agent_run, survives_a_coordinator_crash) {
        char *ie, *tok;
        struct agent a;
        md_up(false);
        make_ie(&ie, &tok);
        agent_start(&a, ie, tok, NULL);
        await_host(ie, FIXTURE_HOST_ID, validated, &a, "the host was validated");

        tu_musterd_stop(&md, SIGKILL);
        cr_assert(wait_log(&a, "retrying in"), "it backs off");
        /* Down a little longer: a few failed tries, a growing delay. */
        sleep_ms(2000);
        cr_assert_eq(tu_wait_pid(a.pid, 0), -1, "the agent keeps running without its coordinator");
        cr_assert_eq(tu_musterd_restart(&md, config), 0, "musterd back on the same port and state");
        char *before = checked_in_at(ie, FIXTURE_HOST_ID);
        cr_assert(wait_checkin_after(ie, FIXTURE_HOST_ID, before, &a), "the agent reconnects");
        cr_assert(wait_log(&a, "answers again"));
        cr_assert_eq(host_count(ie), 1, "still exactly one host");
        cr_assert_eq(agent_stop(&a), 0);
        free(before);
        free(ie);
        free(tok);
}

/* The file exists and its first line (with its newline) is `want`. */
static void assert_first_line(const char *path, const char *want) {
        char *line = NULL;
        size_t n = 0;
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f, "%s written", path);
        cr_assert_gt(getline(&line, &n, f), 0);
        fclose(f);
        cr_assert_str_eq(line, want);
        free(line);
}

Test(agent_run, state_dir_keeps_the_host_id) {
        static const char *X = "0b0e6f4e-4c1f-4b47-9d3c-00000000000a";
        static const char *Y = "0b0e6f4e-4c1f-4b47-9d3c-00000000000b";
        char *ie, *tok, state[4096], path[4200];
        struct agent a, b, c;
        md_up(false);
        make_ie(&ie, &tok);
        snprintf(state, sizeof state, "%s/agent-state", dir);
        snprintf(path, sizeof path, "%s/host-id", state);

        /* First boot: --host-id, recorded. */
        agent_start(&a, ie, tok, "--state-dir", state, "--host-id", X, NULL);
        await_host(ie, X, validated, &a, "the host was validated");
        cr_assert_eq(agent_stop(&a), 0);
        assert_first_line(path, "0b0e6f4e-4c1f-4b47-9d3c-00000000000a\n");

        /* Restart without --host-id: the recorded id, not the machine's.
         * Check-ins are written a second at a time: the first agent's last
         * one is in before `before` is read, so only the new agent's counts. */
        sleep_ms(1100);
        char *before = checked_in_at(ie, X);
        sleep_ms(1100);
        agent_start(&b, ie, tok, "--state-dir", state, NULL);
        cr_assert(wait_checkin_after(ie, X, before, &b));
        cr_assert_eq(agent_stop(&b), 0);
        cr_assert_eq(host_count(ie), 1, "the restarted agent is the same host");
        json_object *none = host_get(ie, FIXTURE_HOST_ID);
        cr_assert_null(none, "the machine's own id was never used");
        free(before);

        /* An explicit, different --host-id wins and is recorded. */
        agent_start(&c, ie, tok, "--state-dir", state, "--host-id", Y, NULL);
        await_host(ie, Y, validated, &c, "the host was validated");
        cr_assert_eq(agent_stop(&c), 0);
        assert_first_line(path, "0b0e6f4e-4c1f-4b47-9d3c-00000000000b\n");
        free(ie);
        free(tok);
}

Test(agent_run, deleted_host_registers_again) {
        char *ie, *tok;
        struct agent a;
        md_up(false);
        make_ie(&ie, &tok);
        agent_start(&a, ie, tok, NULL);
        await_host(ie, FIXTURE_HOST_ID, validated, &a, "the host was validated");
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", ie, FIXTURE_HOST_ID), md.admin_token,
                                  NULL, NULL), 204);
        /* The next poll gets 404; the agent registers again and is validated anew. */
        await_host(ie, FIXTURE_HOST_ID, validated, &a, "the host came back");
        cr_assert_eq(host_count(ie), 1);
        cr_assert(log_has(&a, "registering again"));
        cr_assert_eq(agent_stop(&a), 0);
        free(ie);
        free(tok);
}

static bool known(const char *s) {
        return s && strcmp(s, "known-unbound") == 0;
}

static bool past_binding(const char *s) {
        /* Any bound state after the agent registered again. */
        return s && strcmp(s, "binding") != 0 && !strstr(s, "-unbound");
}

Test(agent_run, binding_reaches_the_agent) {
        char *ie, *tok;
        struct agent a;
        json_object *o;
        md_up(true);
        make_ie(&ie, &tok);
        agent_start(&a, ie, tok, NULL);
        await_host(ie, FIXTURE_HOST_ID, known, &a, "with lenient minimums the fixture is known-unbound");

        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token, "{\"name\":\"c1\"}", &o), 201);
        char *cluster = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cluster);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, FIXTURE_HOST_ID),
                                  md.admin_token, body, NULL), 200);
        /* "exit" -> the agent registers again -> the host leaves "binding". */
        json_object *h = wait_host(ie, FIXTURE_HOST_ID, past_binding, &a);
        cr_assert_not_null(h, "the agent registered again after the bind");
        cr_assert_str_eq(tu_jstr(h, "cluster_id"), cluster);
        json_object_put(h);
        cr_assert(log_has(&a, "register again"));

        /* Unbind: back in the pool and validated again. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, FIXTURE_HOST_ID),
                                  md.admin_token, NULL, NULL), 200);
        await_host(ie, FIXTURE_HOST_ID, known, &a, "the host is known-unbound again");
        cr_assert_eq(host_count(ie), 1);
        cr_assert_eq(tu_wait_pid(a.pid, 0), -1, "the agent never exited");
        cr_assert_eq(agent_stop(&a), 0);
        free(cluster);
        free(ie);
        free(tok);
}

Test(agent_run, refuses_to_start_on_bad_input) {
        char *ie, *tok;
        struct agent a;
        md_up(false);
        make_ie(&ie, &tok);
        /* A token the coordinator does not know: 401 at registration. */
        agent_start(&a, ie, "not-a-token", NULL);
        cr_assert_eq(agent_wait(&a), EXIT_AUTH);
        cr_assert(log_has(&a, "HTTP 401"));
        cr_assert_eq(host_count(ie), 0);

        /* Another infra-env's token: 403. */
        char *ie2, *tok2;
        make_ie(&ie2, &tok2);
        agent_start(&a, ie, tok2, NULL);
        cr_assert_eq(agent_wait(&a), EXIT_AUTH);
        cr_assert(log_has(&a, "HTTP 403"));

        /* An empty token file, a bad host id, a missing CA file, a bad URL,
         * missing options: no start at all. */
        agent_start(&a, ie, "\n", NULL);
        cr_assert_eq(agent_wait(&a), 1);
        cr_assert(log_has(&a, "empty"));
        agent_start(&a, ie, tok, "--host-id", "nope", NULL);
        cr_assert_eq(agent_wait(&a), 2);
        agent_start(&a, ie, tok, "--ca", "/nonexistent/ca.pem", NULL);
        cr_assert_eq(agent_wait(&a), 1);
        cr_assert(log_has(&a, "CA file"));
        char *err = NULL;
        cr_assert_eq(tu_runf(NULL, &err, "%s run --coordinator ftp://x --infra-env %s --token-file /dev/null",
                             tu_agent_path(), ie), 2, "%s", err);
        free(err);
        cr_assert_eq(tu_runf(NULL, &err, "%s run --coordinator %s", tu_agent_path(), md.base), 2, "%s", err);
        free(err);
        char *out = NULL;
        cr_assert_eq(tu_runf(&out, NULL, "%s --help", tu_agent_path()), 0);
        cr_assert(strstr(out, "--token-file") && strstr(out, "3 the coordinator refused"), "%s", out);
        free(out);
        free(ie2);
        free(tok2);
        free(ie);
        free(tok);
}

/* ---- the HTTP client against a raw socket --------------------------------- */

struct canned {
        int lfd;
        unsigned port;
        const char *response;  /* NULL: read the request, then wait for the client to go */
        char request[16384];
        size_t request_len;
        pthread_t thread;
};

static void *canned_serve(void *p) {
        struct canned *c = p;
        int fd = accept(c->lfd, NULL, NULL);
        if (fd < 0)
                return NULL;
        /* Headers, then as many body bytes as Content-Length says. */
        size_t want = 0;
        for (;;) {
                ssize_t k = read(fd, c->request + c->request_len, sizeof c->request - 1 - c->request_len);
                if (k <= 0)
                        break;
                c->request_len += (size_t) k;
                c->request[c->request_len] = '\0';
                char *end = strstr(c->request, "\r\n\r\n");
                if (!end)
                        continue;
                const char *cl = strcasestr(c->request, "Content-Length:");
                want = (size_t) (end + 4 - c->request) + (cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0);
                if (c->request_len >= want)
                        break;
        }
        if (c->response) {
                size_t n = strlen(c->response), off = 0;
                while (off < n) {
                        ssize_t k = write(fd, c->response + off, n - off);
                        if (k <= 0)
                                break;
                        off += (size_t) k;
                }
        } else {
                char buf[256];
                while (read(fd, buf, sizeof buf) > 0)
                        ;
        }
        close(fd);
        return NULL;
}

static void canned_start(struct canned *c, const char *response) {
        memset(c, 0, sizeof *c);
        c->response = response;
        c->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        cr_assert(c->lfd >= 0 && bind(c->lfd, (struct sockaddr *) &a, sizeof a) == 0 && listen(c->lfd, 4) == 0 &&
                  getsockname(c->lfd, (struct sockaddr *) &a, &len) == 0);
        c->port = ntohs(a.sin_port);
        cr_assert_eq(pthread_create(&c->thread, NULL, canned_serve, c), 0);
}

static void canned_stop(struct canned *c) {
        pthread_join(c->thread, NULL);
        close(c->lfd);
}

static void client_for(struct client *cl, const struct canned *c) {
        char base[64];
        snprintf(base, sizeof base, "http://127.0.0.1:%u/", c->port);
        cr_assert_eq(client_init(cl, base, "tok.en", NULL), 0);
}

static void curl_up(void) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void curl_down(void) {
        curl_global_cleanup();
}

TestSuite(agent_client, .init = curl_up, .fini = curl_down, .timeout = 60);

Test(agent_client, sends_json_with_the_token_and_reads_status_body_and_date) {
        struct canned c;
        struct client cl;
        canned_start(&c, "HTTP/1.1 503 Service Unavailable\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                         "Content-Type: application/json\r\nContent-Length: 37\r\nConnection: close\r\n\r\n"
                         "{\"code\":503,\"reason\":\"store is busy\"}");
        client_for(&cl, &c);
        json_object *body = json_tokener_parse("{\"host_id\":\"x\"}"), *reply = NULL;
        long status = 0;
        char *date = NULL;
        cr_assert_eq(client_request(&cl, "POST", "/api/v2/infra-envs/i/hosts", body, &status, &reply, &date), 0);
        canned_stop(&c);
        cr_assert_eq(status, 503);
        cr_assert_str_eq(tu_jstr(reply, "reason"), "store is busy");
        cr_assert_str_eq(date, "Sun, 06 Nov 1994 08:49:37 GMT");
        cr_assert(strstr(c.request, "POST /api/v2/infra-envs/i/hosts HTTP/1.1\r\n"), "%s", c.request);
        cr_assert(strstr(c.request, "Authorization: Bearer tok.en\r\n"), "%s", c.request);
        cr_assert(strstr(c.request, "Content-Type: application/json\r\n"), "%s", c.request);
        cr_assert(strstr(c.request, "\r\n\r\n{\"host_id\":\"x\"}"), "%s", c.request);
        json_object_put(body);
        json_object_put(reply);
        free(date);
        client_done(&cl);
}

Test(agent_client, a_reply_that_is_not_json_is_no_reply) {
        struct canned c;
        struct client cl;
        canned_start(&c, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{\"a\":1} junk");
        client_for(&cl, &c);
        json_object *reply = (json_object *) 1;
        long status = 0;
        cr_assert_eq(client_request(&cl, "GET", "/x", NULL, &status, &reply, NULL), 0);
        canned_stop(&c);
        cr_assert_eq(status, 200);
        cr_assert_null(reply, "trailing garbage: not JSON");
        cr_assert(strstr(c.request, "GET /x HTTP/1.1\r\n"), "%s", c.request);
        client_done(&cl);
}

Test(agent_client, caps_the_reply) {
        static char resp[200000];
        int n = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n");
        memset(resp + n, ' ', 100000);
        resp[n] = '{';
        resp[n + 99999] = '}';
        struct canned c;
        struct client cl;
        canned_start(&c, resp);
        client_for(&cl, &c);
        cl.max_reply_bytes = 65536;
        json_object *reply = NULL;
        long status = 0;
        cr_assert_eq(client_request(&cl, "GET", "/big", NULL, &status, &reply, NULL), -EFBIG);
        cr_assert_null(reply);
        canned_stop(&c);
        client_done(&cl);
}

Test(agent_client, times_out) {
        struct canned c;
        struct client cl;
        canned_start(&c, NULL);
        client_for(&cl, &c);
        cl.timeout_ms = 300;
        long status = 1;
        cr_assert_eq(client_request(&cl, "GET", "/slow", NULL, &status, NULL, NULL), -ETIMEDOUT);
        cr_assert_eq(status, 0);
        client_done(&cl); /* closes the connection; the server thread ends */
        canned_stop(&c);
}

static bool cancel_now(void *userdata) {
        return true;
}

Test(agent_client, cancel_hook_stops_a_request) {
        struct canned c;
        struct client cl;
        canned_start(&c, NULL);
        client_for(&cl, &c);
        cl.cancel = cancel_now;
        cr_assert_eq(client_request(&cl, "GET", "/x", NULL, NULL, NULL, NULL), -ECANCELED);
        client_done(&cl);
        /* The server may not even have seen the connection: poke it. */
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) c.port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        connect(fd, (struct sockaddr *) &a, sizeof a);
        close(fd);
        canned_stop(&c);
}

Test(agent_client, nobody_listening) {
        struct canned c;
        struct client cl;
        canned_start(&c, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        client_for(&cl, &c);
        long status = 0;
        json_object *reply = (json_object *) 1;
        cr_assert_eq(client_request(&cl, "DELETE", "/x", NULL, &status, &reply, NULL), 0);
        cr_assert_eq(status, 204);
        cr_assert_null(reply, "no body, no reply");
        canned_stop(&c); /* the listener closes: nothing on that port now */
        cr_assert_eq(client_request(&cl, "GET", "/x", NULL, &status, NULL, NULL), -ECONNREFUSED);
        client_done(&cl);
}

/* The infra-env deleted under a running agent: it exits with the auth
 * code, and its log says the infra-env is gone, not that its token was
 * revoked. */
Test(agent_run, an_agent_of_a_deleted_infra_env_says_so) {
        char *ie, *tok;
        struct agent a;
        md_up(false);
        make_ie(&ie, &tok);
        agent_start(&a, ie, tok, NULL);
        await_host(ie, FIXTURE_HOST_ID, validated, &a, "the host was validated");
        long code = tu_http_json("DELETE", url("/api/v2/infra-envs/%s", ie), md.admin_token, NULL, NULL);
        cr_assert(code == 200 || code == 204, "the infra-env is deleted: %ld", code);
        cr_assert_eq(agent_wait(&a), EXIT_AUTH, "it exits with the auth code");
        cr_assert(log_has(&a, "the infra-env this token was issued for was deleted"), "the log says why");
        cr_assert(!log_has(&a, "revoked"), "not that the token was revoked");
        free(ie);
        free(tok);
}
