/* Two musterd replicas on one PostgreSQL database (run through
 * scripts/with-pg-test-server, MUSTER_TEST_STORE=postgres): the second
 * replica's state folder is a copy of the first's (the signing key and
 * admin.token the admin copies), so either answers for the other. Real
 * agents talk to one replica while the admin's musterctl works through the
 * other; a
 * host bound through both at once is bound once (the other answer is 409);
 * the passes one replica runs (the monitor) run on the leader alone, move to
 * the other replica when the leader is killed, and say each host went
 * silent once. Every wait is bounded; nothing is timed. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define FIXTURE MUSTER_FIXTURES_DIR "/qemu-q35/root"
#define WAIT_MS 30000
#define N_AGENTS 3

static struct tu_musterd a, b;
static char *dir;
static int agents[N_AGENTS];

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
}

static void up(void) {
        tu_require_pg_store();
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        memset(agents, 0, sizeof agents);
}

static void down(void) {
        for (int i = 0; i < N_AGENTS; i++)
                if (agents[i] > 0)
                        tu_stop_pid(agents[i], SIGTERM, WAIT_MS);
        /* b shares a's database: a drops it. */
        b.pg_db[0] = '\0';
        tu_musterd_free(&b);
        tu_musterd_free(&a);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(replicas, .init = up, .fini = down, .timeout = 240);

/* Replica a on a new database, then replica b on the same database with a
 * copy of a's state folder (key, admin token); both with `config`. */
static void replicas_up(const char *config) {
        char conf[4200], state[4200], cmd[9000];
        cr_assert_eq(tu_write_file(dir, "musterd.conf", config), 0);
        snprintf(conf, sizeof conf, "%s/musterd.conf", dir);
        snprintf(state, sizeof state, "%s/a", dir);
        cr_assert_eq(tu_musterd_start(&a, state, conf), 0, "replica a started");
        snprintf(cmd, sizeof cmd, "cp -a '%s/a' '%s/b'", dir, dir);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        memcpy(b.pg_db, a.pg_db, sizeof b.pg_db);
        snprintf(state, sizeof state, "%s/b", dir);
        cr_assert_eq(tu_musterd_start(&b, state, conf), 0, "replica b started");
        cr_assert_str_eq(a.admin_token, b.admin_token);
}

static json_object *host_get(const struct tu_musterd *m, const char *ie, const char *h) {
        json_object *o = NULL;
        if (tu_http_json("GET", tu_url(m->base, "/api/v2/infra-envs/%s/hosts/%s", ie, h), m->admin_token, NULL,
                         &o) != 200) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* The host's status as m shows it, once it is `status` (or NULL, once it is
 * not "binding" and bound) within WAIT_MS; false otherwise. */
static bool wait_status(const struct tu_musterd *m, const char *ie, const char *h, const char *status) {
        for (int waited = 0; waited < WAIT_MS; waited += 100) {
                json_object *o = host_get(m, ie, h);
                const char *s = o ? tu_jstr(o, "status") : NULL;
                bool ok = s && (status ? strcmp(s, status) == 0 : strcmp(s, "binding") != 0 && !strstr(s, "-unbound"));
                json_object_put(o);
                if (ok)
                        return true;
                sleep_ms(100);
        }
        return false;
}

static const char *host_id(int i) {
        static char ids[N_AGENTS][40];
        snprintf(ids[i], sizeof ids[i], "6d757374-6572-4071-8335-0000000001%02u", (unsigned) i % 100u);
        return ids[i];
}

/* Real agent i on the fixture, talking to m. */
static void agent_start(int i, const struct tu_musterd *m, const char *ie, const char *token) {
        char tokfile[4200], name[64], log[4200], state[4200];
        snprintf(name, sizeof name, "token-%d", i);
        cr_assert_eq(tu_write_file(dir, name, token), 0);
        snprintf(tokfile, sizeof tokfile, "%s/%s", dir, name);
        snprintf(log, sizeof log, "%s/agent-%d.log", dir, i);
        snprintf(state, sizeof state, "%s/agent-%d", dir, i);
        const char *argv[] = { tu_agent_path(), "run", "--coordinator", m->base, "--infra-env", ie, "--token-file",
                               tokfile, "--sysroot", FIXTURE, "--host-id", host_id(i), "--state-dir", state, NULL };
        agents[i] = tu_spawn(argv, log);
        cr_assert_gt(agents[i], 0, "agent %d started", i);
}

struct bind_call {
        const struct tu_musterd *m;
        const char *url;
        const char *body;
        long status;
};

static void *bind_main(void *arg) {
        struct bind_call *c = arg;
        c->status = tu_http_json("POST", c->url, c->m->admin_token, c->body, NULL);
        return NULL;
}

Test(replicas, agents_on_one_replica_the_admin_on_the_other) {
        replicas_up("[agent]\ninstruction_interval = 1\n[requirements.any]\nmemory = 1 GiB\ncpu_cores = 1\n");
        /* The admin's musterctl talks to b, the agents to a. */
        char *out = NULL, *err = NULL;
        cr_assert_eq(tu_ctl(&out, &err, b.base, b.admin_token_path,
                            (const char *const[]) { "-o", "json", "infraenv", "create", "fleet", NULL }),
                     0, "%s", err ? err : "");
        json_object *made = json_tokener_parse(out);
        cr_assert_not_null(made, "%s", out);
        char *ie = strdup(tu_jstr(made, "id")), *tok = strdup(tu_jstr(made, "agent_token"));
        json_object_put(made);
        free(out);
        free(err);
        for (int i = 0; i < N_AGENTS; i++)
                agent_start(i, &a, ie, tok);
        /* Registered and validated through a, seen through b. */
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert(wait_status(&b, ie, host_id(i), "known-unbound"), "host %d known-unbound as b shows it", i);
        cr_assert_eq(tu_ctl(&out, &err, b.base, b.admin_token_path,
                            (const char *const[]) { "-o", "json", "host", "list", "--unbound", NULL }),
                     0, "%s", err ? err : "");
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert(strstr(out, host_id(i)), "musterctl host list through b:\n%s", out);
        free(out);
        free(err);
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("GET", tu_url(a.base, "/api/v2/infra-envs/%s/hosts", ie), a.admin_token, NULL, &o),
                     200);
        cr_assert_not_null(o);
        json_object_put(o);

        /* A cluster made through a; host 0 bound through b reaches its agent
         * through a: it registers again and leaves "binding". */
        char *cluster = NULL;
        cr_assert_eq(tu_create_cluster(a.base, a.admin_token, "{\"name\":\"c1\"}", &cluster), 201);
        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cluster);
        cr_assert_eq(tu_ctl(&out, &err, b.base, b.admin_token_path,
                            (const char *const[]) { "host", "bind", host_id(0), "--cluster", cluster, NULL }),
                     0, "musterctl host bind through b: %s", err ? err : "");
        free(out);
        free(err);
        cr_assert(wait_status(&a, ie, host_id(0), NULL), "host 0 bound and past binding, as a shows it");
        json_object *h = host_get(&b, ie, host_id(0));
        cr_assert_not_null(h);
        cr_assert_str_eq(tu_jstr(h, "cluster_id"), cluster);
        json_object_put(h);

        /* Host 1 bound through both replicas at once: bound once. */
        struct bind_call calls[2];
        pthread_t t[2];
        char url_a[512], url_b[512];
        snprintf(url_a, sizeof url_a, "%s", tu_url(a.base, "/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, host_id(1)));
        snprintf(url_b, sizeof url_b, "%s", tu_url(b.base, "/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, host_id(1)));
        calls[0] = (struct bind_call) { .m = &a, .url = url_a, .body = body };
        calls[1] = (struct bind_call) { .m = &b, .url = url_b, .body = body };
        for (int i = 0; i < 2; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, bind_main, &calls[i]), 0);
        for (int i = 0; i < 2; i++)
                pthread_join(t[i], NULL);
        cr_assert((calls[0].status == 200 && calls[1].status == 409) ||
                          (calls[0].status == 409 && calls[1].status == 200),
                  "one bind wins, the other is 409: %ld through a, %ld through b", calls[0].status, calls[1].status);
        cr_assert(wait_status(&b, ie, host_id(1), NULL), "host 1 bound and past binding, as b shows it");

        /* Host 2 stays in the pool, as both show it. */
        cr_assert(wait_status(&a, ie, host_id(2), "known-unbound"));
        cr_assert(wait_status(&b, ie, host_id(2), "known-unbound"));

        /* A person's token made through one replica works on the other. */
        char *viewer = tu_token(&a, "cluster-creator", "alice");
        cr_assert_eq(tu_http_json("GET", tu_url(b.base, "/api/v2/clusters"), viewer, NULL, NULL), 200);
        free(viewer);
        free(cluster);
        free(ie);
        free(tok);
}

/* muster_leader of m's /metrics: 1, 0, -1 (not asked yet), or -2 (no answer). */
static int leader_of(const struct tu_musterd *m) {
        char *text = NULL;
        int v = -2;
        if (tu_http("GET", tu_url(m->base, "/metrics"), m->admin_token, NULL, 0, &text) == 200 && text) {
                const char *p = strstr(text, "\nmuster_leader ");
                if (p)
                        v = atoi(p + strlen("\nmuster_leader "));
        }
        free(text);
        return v;
}

static bool wait_leader(const struct tu_musterd *m, int want) {
        for (int waited = 0; waited < WAIT_MS; waited += 100) {
                if (leader_of(m) == want)
                        return true;
                sleep_ms(100);
        }
        return false;
}

/* n new hosts registered through m with the agent token, never heard of
 * again: the monitor's. Their ids go to ids[first..first+n). */
static void register_silent(const struct tu_musterd *m, const char *ie, const char *tok, char ids[][40], int first,
                            int n) {
        for (int i = first; i < first + n; i++) {
                snprintf(ids[i], 40, "6d757374-6572-4071-8335-0000000002%02u", (unsigned) i % 100u);
                char body[128];
                snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", ids[i]);
                long st = tu_http_json("POST", tu_url(m->base, "/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL);
                cr_assert(st == 201 || st == 200, "registration of %s: %ld", ids[i], st);
        }
}

/* How many "is disconnected" events host h has, as m lists them. */
static int disconnect_events(const struct tu_musterd *m, const char *h) {
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("GET", tu_url(m->base, "/api/v2/events?host_id=%s&limit=100", h), m->admin_token,
                                  NULL, &o),
                     200);
        json_object *items = json_object_is_type(o, json_type_array) ? o : NULL;
        if (!items)
                json_object_object_get_ex(o, "items", &items);
        cr_assert_not_null(items, "events of %s", h);
        int n = 0;
        for (size_t i = 0; i < json_object_array_length(items); i++) {
                const char *msg = tu_jstr(json_object_array_get_idx(items, i), "message");
                if (msg && strstr(msg, "is disconnected"))
                        n++;
        }
        json_object_put(o);
        return n;
}

static bool wait_disconnected(const struct tu_musterd *m, const char *ie, char ids[][40], int first, int n) {
        for (int i = first; i < first + n; i++)
                if (!wait_status(m, ie, ids[i], "disconnected-unbound"))
                        return false;
        return true;
}

Test(replicas, the_monitor_runs_on_one_leader_and_moves_when_it_dies) {
        replicas_up("[monitor]\nmonitor_interval = 1s\nhost_disconnect_timeout = 2s\n");
        cr_assert(wait_leader(&a, 1), "a, started first, leads");
        cr_assert(wait_leader(&b, 0), "b does not");

        char *ie, *tok;
        cr_assert_eq(tu_create_infra_env(a.base, a.admin_token, "silent", &ie, &tok), 201);
        char ids[8][40];
        register_silent(&b, ie, tok, ids, 0, 4);
        cr_assert(wait_disconnected(&b, ie, ids, 0, 4), "the leader's monitor marked them");
        sleep_ms(2500); /* more passes of both replicas' controllers */
        for (int i = 0; i < 4; i++)
                cr_assert_eq(disconnect_events(&b, ids[i]), 1, "host %s said disconnected once", ids[i]);

        /* The leader dies; b takes the monitor over within a few passes. */
        tu_musterd_stop(&a, SIGKILL);
        cr_assert(wait_leader(&b, 1), "b leads once a is gone");
        register_silent(&b, ie, tok, ids, 4, 4);
        cr_assert(wait_disconnected(&b, ie, ids, 4, 4), "b's monitor marked the new ones");
        sleep_ms(2500);
        for (int i = 0; i < 8; i++)
                cr_assert_eq(disconnect_events(&b, ids[i]), 1, "host %s said disconnected once", ids[i]);
        free(ie);
        free(tok);
}

static int cmp_lines(const void *x, const void *y) {
        return strcmp(*(char *const *) x, *(char *const *) y);
}

/* The hosts of infra-env ie as m lists them, as "ID STATUS CLUSTER CHECKIN" lines
 * sorted (malloc'd), to compare two musterds' answers. */
static char *hosts_summary(const struct tu_musterd *m, const char *ie) {
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("GET", tu_url(m->base, "/api/v2/infra-envs/%s/hosts", ie), m->admin_token, NULL, &o),
                     200);
        json_object *items = json_object_is_type(o, json_type_array) ? o : NULL;
        if (!items)
                json_object_object_get_ex(o, "items", &items);
        cr_assert_not_null(items);
        size_t n = json_object_array_length(items);
        char **lines = calloc(n ? n : 1, sizeof *lines);
        size_t total = 1;
        for (size_t i = 0; i < n; i++) {
                json_object *h = json_object_array_get_idx(items, i);
                const char *cl = tu_jstr(h, "cluster_id");
                const char *at = tu_jstr(h, "checked_in_at");
                cr_assert(asprintf(&lines[i], "%s %s %s %s\n", tu_jstr(h, "id"), tu_jstr(h, "status"), cl ? cl : "-",
                                   at ? at : "-") > 0);
                total += strlen(lines[i]);
        }
        qsort(lines, n, sizeof *lines, cmp_lines);
        char *out = calloc(1, total);
        for (size_t i = 0; i < n; i++) {
                strcat(out, lines[i]);
                free(lines[i]);
        }
        free(lines);
        json_object_put(o);
        return out;
}

static int run_musterd(char **out, char **err, const char *a1, const char *a2, const char *a3, const char *a4,
                       const char *a5) {
        const char *bin = getenv("MUSTERD");
        const char *argv[] = { bin && *bin ? bin : "musterd", a1, a2, a3, a4, a5, NULL };
        int status = -1;
        *out = tu_run(argv, &status, err);
        return status;
}

Test(replicas, a_sqlite_store_migrates_to_postgres) {
        /* musterd on SQLite: an agent's host with its inventory, bound;
         * two silent hosts; a cluster; then stopped. */
        cr_assert_eq(unsetenv("MUSTER_TEST_STORE"), 0);
        char conf[4200], state[4200];
        cr_assert_eq(tu_write_file(dir, "musterd.conf",
                                   "[agent]\ninstruction_interval = 1\n[requirements.any]\nmemory = 1 GiB\n"
                                   "cpu_cores = 1\n"),
                     0);
        snprintf(conf, sizeof conf, "%s/musterd.conf", dir);
        snprintf(state, sizeof state, "%s/s", dir);
        cr_assert_eq(tu_musterd_start(&a, state, conf), 0, "musterd on SQLite");
        cr_assert_eq(setenv("MUSTER_TEST_STORE", "postgres", 1), 0);
        cr_assert_null(a.pg_db[0] ? a.pg_db : NULL);
        char *ie, *tok, *cluster = NULL;
        cr_assert_eq(tu_create_infra_env(a.base, a.admin_token, "old", &ie, &tok), 201);
        agent_start(0, &a, ie, tok);
        cr_assert(wait_status(&a, ie, host_id(0), "known-unbound"));
        cr_assert_eq(tu_stop_pid(agents[0], SIGTERM, WAIT_MS), 0);
        agents[0] = 0;
        char ids[8][40];
        register_silent(&a, ie, tok, ids, 0, 2);
        cr_assert_eq(tu_create_cluster(a.base, a.admin_token, "{\"name\":\"kept\"}", &cluster), 201);
        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cluster);
        cr_assert_eq(tu_http_json("POST", tu_url(a.base, "/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, host_id(0)),
                                  a.admin_token, body, NULL),
                     200);
        /* Logs asked of a silent host and uploaded (bytes with a NUL in
         * them), and asked of the other (pending_actions). */
        static const char logs[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" "not really deflate\0x";
        cr_assert_eq(tu_http_json("POST", tu_url(a.base, "/api/v2/infra-envs/%s/hosts/%s/actions/gather-logs", ie,
                                                 ids[0]),
                                  a.admin_token, NULL, NULL),
                     202);
        struct tu_http_reply lr = { 0 };
        cr_assert_eq(tu_http_raw("PUT", tu_url(a.base, "/api/v2/infra-envs/%s/hosts/%s/logs", ie, ids[0]), tok,
                                 "application/gzip", logs, sizeof logs, &lr),
                     201, "%s", lr.body);
        free(lr.body);
        cr_assert_eq(tu_http_json("POST", tu_url(a.base, "/api/v2/infra-envs/%s/hosts/%s/actions/gather-logs", ie,
                                                 ids[1]),
                                  a.admin_token, NULL, NULL),
                     202);
        char *before = hosts_summary(&a, ie);
        tu_musterd_stop(&a, SIGTERM);

        /* Copied into a new PostgreSQL database. */
        char from[4300], to[4400], db[96], *out = NULL, *err = NULL;
        snprintf(from, sizeof from, "sqlite:%s/muster.db", state);
        tu_pg_database(to, sizeof to, db, sizeof db);
        int st = run_musterd(&out, &err, "migrate", "--from", from, "--to", to);
        cr_assert_eq(st, 0, "musterd migrate: %s%s", out ? out : "", err ? err : "");
        cr_assert(strstr(out, "3 host(s) read the same from both"), "%s", out);
        cr_assert(strstr(out, "hosts "), "%s", out);
        free(out);
        free(err);

        /* Into a store that is not empty: refused, nothing changed. */
        st = run_musterd(&out, &err, "migrate", "--from", from, "--to", to);
        cr_assert_eq(st, 1);
        cr_assert(err && strstr(err, "not empty"), "%s", err ? err : "");
        free(out);
        free(err);
        /* A source that is not there; a missing option. */
        char nowhere[4300];
        snprintf(nowhere, sizeof nowhere, "sqlite:%s/nowhere.db", dir);
        cr_assert_eq(run_musterd(&out, &err, "migrate", "--from", nowhere, "--to", to), 1);
        free(out);
        free(err);
        cr_assert_eq(run_musterd(&out, &err, "migrate", "--from", from, NULL, NULL), 2);
        free(out);
        free(err);

        /* musterd on the copy, with the same state folder (key, admin
         * token): the same hosts, the cluster, and the admin's token. */
        memcpy(b.pg_db, db, sizeof b.pg_db);
        cr_assert_eq(tu_musterd_start(&b, state, conf), 0, "musterd on the PostgreSQL copy");
        char *after = hosts_summary(&b, ie);
        cr_assert_str_eq(after, before);
        json_object *o = tu_admin_get(&b, "/api/v2/clusters/%s", cluster);
        cr_assert_str_eq(tu_jstr(o, "name"), "kept");
        json_object_put(o);
        /* The logs came along byte for byte, the pending ask too. */
        lr = (struct tu_http_reply) { 0 };
        cr_assert_eq(tu_http_raw("GET", tu_url(b.base, "/api/v2/infra-envs/%s/hosts/%s/logs", ie, ids[0]),
                                 b.admin_token, NULL, NULL, 0, &lr),
                     200);
        cr_assert(lr.len == sizeof logs && memcmp(lr.body, logs, sizeof logs) == 0, "the logs, byte for byte");
        free(lr.body);
        o = tu_admin_get(&b, "/api/v2/infra-envs/%s/hosts/%s", ie, ids[1]);
        cr_assert_str_eq(json_object_to_json_string(tu_json_get(o, "pending_actions")), "[ \"gather-logs\" ]");
        json_object_put(o);
        /* New rows get new ids past the copied ones. */
        register_silent(&b, ie, tok, ids, 2, 1);
        free(before);
        free(after);
        /* b made nothing of its own: the database is dropped here. */
        tu_musterd_stop(&b, SIGTERM);
        b.pg_db[0] = '\0';
        tu_pg_drop(db);
        free(cluster);
        free(ie);
        free(tok);
}
