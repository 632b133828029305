/* Real agents across coordinator events (issue 3): a killed agent's host
 * goes disconnected-unbound after the configured 2-second timeout and comes
 * back when the agent returns; musterd killed with SIGKILL in the middle of
 * 200 registrations keeps every acknowledged one, and the running agents
 * carry on with the same host ids once it is back. Loopback only; every
 * wait is bounded; every process is stopped by its PID. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define FIXTURE MUSTER_FIXTURES_DIR "/qemu-q35/root"
#define N_AGENTS 3
#define N_REGISTRATIONS 200

static struct tu_musterd md;
static char *dir, config[4096];
static int pids[N_AGENTS];

static void up(void) {
        char state[4096];
        dir = tu_mkdtemp();
        snprintf(state, sizeof state, "%s/state", dir);
        snprintf(config, sizeof config, "%s/musterd.conf", dir);
        cr_assert_eq(tu_write_file(dir, "musterd.conf",
                                   "[agent]\ninstruction_interval = 1\n"
                                   "[monitor]\nhost_disconnect_timeout = 2\nmonitor_interval = 1\n"), 0);
        cr_assert_eq(tu_musterd_start(&md, state, config), 0);
        memset(pids, 0, sizeof pids);
}

static void down(void) {
        for (int i = 0; i < N_AGENTS; i++)
                if (pids[i] > 0)
                        tu_stop(&pids[i], SIGTERM); /* exits 0: checked by tu_stop */
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(lifecycle, .init = up, .fini = down);

/* The suite's musterd and a printf-formatted path (tu_url's buffers). */
#define url(...) tu_url(md.base, __VA_ARGS__)

static char *make_ie(char **token_file) {
        char *id, *token;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "lab", &id, &token), 201);
        cr_assert_eq(tu_write_file(dir, "agent.token", token), 0);
        free(token);
        cr_assert(asprintf(token_file, "%s/agent.token", dir) > 0);
        return id;
}

static void host_id(int i, char out[40]) {
        snprintf(out, 40, "5a9e0d6c-1f7b-4c3a-8e2d-%012d", i);
}

static int start_agent(int i, const char *ie, const char *token_file) {
        char id[40], log[4096];
        host_id(i, id);
        snprintf(log, sizeof log, "%s/agent-%d.log", dir, i);
        const char *argv[] = { tu_agent_path(), "run", "--coordinator", md.base, "--infra-env", ie, "--token-file",
                               token_file, "--sysroot", FIXTURE, "--host-id", id, NULL };
        int pid = tu_spawn(argv, log);
        cr_assert_gt(pid, 0);
        return pid;
}

static char *host_field(const char *ie, int i, const char *field) {
        char id[40];
        json_object *h = NULL;
        host_id(i, id);
        if (tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, id), md.admin_token, NULL, &h) != 200) {
                json_object_put(h);
                return NULL;
        }
        const char *v = tu_jstr(h, field);
        char *r = v ? strdup(v) : NULL;
        json_object_put(h);
        return r;
}

static void wait_status(const char *ie, int i, const char *want) {
        int64_t deadline = tu_mono_ms() + 30000;
        char *s = NULL;
        for (;;) {
                free(s);
                s = host_field(ie, i, "status");
                if (s && strcmp(s, want) == 0)
                        break;
                cr_assert_lt(tu_mono_ms(), deadline, "host %d is %s, not %s", i, s ? s : "(none)", want);
                usleep(100 * 1000);
        }
        free(s);
}

Test(lifecycle, killed_agent_goes_disconnected_and_comes_back) {
        char *tf;
        char *ie = make_ie(&tf);
        pids[0] = start_agent(0, ie, tf);
        wait_status(ie, 0, "insufficient-unbound"); /* the QEMU server has 2 GiB */
        cr_assert_eq(tu_kill_wait(pids[0], SIGKILL), 128 + SIGKILL);
        pids[0] = 0;
        wait_status(ie, 0, "disconnected-unbound");
        char *info = host_field(ie, 0, "status_info");
        cr_assert_not_null(info);
        free(info);
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?host_id=5a9e0d6c-1f7b-4c3a-8e2d-000000000000"),
                                  md.admin_token, NULL, &o), 200);
        cr_assert(strstr(json_object_to_json_string(o), "disconnected"), "%s", json_object_to_json_string(o));
        json_object_put(o);
        pids[0] = start_agent(0, ie, tf);
        wait_status(ie, 0, "insufficient-unbound");
        cr_assert_eq(tu_kill_wait(pids[0], SIGTERM), 0, "a clean stop");
        pids[0] = 0;
        free(ie);
        free(tf);
}

/* ---- kill -9 during registrations -------------------------------------- */

#define N_THREADS 4
#define KILL_AT (N_REGISTRATIONS / 4)

struct storm {
        const char *ie;
        const char *token;
        int musterd_pid;
        char acked[N_REGISTRATIONS][40];
        atomic_int n_acked;
        atomic_int n_tried;
        atomic_int next;
};

/* Four registering threads; the one whose acknowledgement is the KILL_AT-th
 * kills musterd while the others have requests in flight. */
static void *register_many(void *arg) {
        struct storm *s = arg;
        for (int i; (i = atomic_fetch_add(&s->next, 1)) < N_REGISTRATIONS;) {
                char id[40], body[128];
                snprintf(id, sizeof id, "0ddba11a-0000-4000-8000-%012d", i);
                snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"storm\"}", id);
                long code = tu_http("POST", url("/api/v2/infra-envs/%s/hosts", s->ie), s->token, body, strlen(body), NULL);
                if (code == 201 || code == 200) {
                        int k = atomic_fetch_add(&s->n_acked, 1);
                        memcpy(s->acked[k], id, sizeof id);
                        if (k + 1 == KILL_AT)
                                kill(s->musterd_pid, SIGKILL);
                }
                atomic_fetch_add(&s->n_tried, 1);
        }
        return NULL;
}

Test(lifecycle, kill_9_during_200_registrations) {
        char *tf;
        char *ie = make_ie(&tf);
        FILE *f = fopen(tf, "r");
        char token[4096] = "";
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(token, sizeof token, f));
        fclose(f);
        for (int i = 0; i < N_AGENTS; i++)
                pids[i] = start_agent(i, ie, tf);
        for (int i = 0; i < N_AGENTS; i++)
                wait_status(ie, i, "insufficient-unbound");

        static struct storm s;
        memset(&s, 0, sizeof s);
        s.ie = ie;
        s.token = token;
        s.musterd_pid = md.pid;
        pthread_t t[N_THREADS];
        for (int i = 0; i < N_THREADS; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, register_many, &s), 0);
        for (int i = 0; i < N_THREADS; i++)
                pthread_join(t[i], NULL);
        tu_musterd_stop(&md, SIGKILL); /* reap it */
        int acked = atomic_load(&s.n_acked);
        cr_assert_geq(acked, KILL_AT);
        cr_assert_lt(acked, N_REGISTRATIONS, "the kill landed during the registrations");
        cr_assert_eq(tu_musterd_restart(&md, config), 0, "musterd back on the same port and state");

        /* Every acknowledged registration is there, exactly once. */
        json_object *l;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?infra_env_id=%s&limit=1000", ie), md.admin_token, NULL, &l),
                     200);
        size_t n = json_object_array_length(l);
        for (int i = 0; i < acked; i++) {
                int found = 0;
                for (size_t k = 0; k < n; k++)
                        found += strcmp(tu_jstr(json_object_array_get_idx(l, k), "id"), s.acked[i]) == 0;
                cr_assert_eq(found, 1, "acknowledged host %s is there once", s.acked[i]);
        }
        cr_assert_leq(n, (size_t) N_AGENTS + (size_t) atomic_load(&s.n_tried), "no invented hosts");
        json_object_put(l);

        /* The agents carry on: each checks in again on its own record. */
        for (int i = 0; i < N_AGENTS; i++) {
                char *before = host_field(ie, i, "checked_in_at");
                cr_assert_not_null(before);
                int64_t until = tu_mono_ms() + 60000;
                char *now = NULL;
                for (;;) {
                        free(now);
                        now = host_field(ie, i, "checked_in_at");
                        if (now && strcmp(now, before) > 0)
                                break;
                        cr_assert_lt(tu_mono_ms(), until, "agent %d did not check in after the restart", i);
                        usleep(200 * 1000);
                }
                free(now);
                free(before);
                char id[40];
                host_id(i, id);
                cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?id=%s", id), md.admin_token, NULL, &l), 200);
                cr_assert_eq(json_object_array_length(l), 1, "agent %d is still one host", i);
                json_object_put(l);
        }
        for (int i = 0; i < N_AGENTS; i++) {
                cr_assert_eq(tu_kill_wait(pids[i], SIGTERM), 0, "agent %d stops cleanly", i);
                pids[i] = 0;
        }
        free(ie);
        free(tf);
}
