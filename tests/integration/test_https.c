/* HTTPS by default (issue 18), with the real musterd, musterctl and agent on
 * loopback:
 *  - musterd makes its CA and a server certificate in STATE/tls at first
 *    start (the folder 0700, the keys 0600), keeps them across a restart,
 *    and issues a new certificate from the same CA when the one there
 *    names too little or expires within 30 days; /metrics has its expiry;
 *  - musterctl trusts that CA with no flag (it finds it beside the token
 *    file); with another CA it refuses to talk, and says why;
 *  - a real agent registers over HTTPS with --ca; with another CA it never
 *    does;
 *  - [server] tls_cert/tls_key: the operator's own certificate is served;
 *    one for another name, or expired, is refused by clients; one of the
 *    two without the other, or a key of another certificate, stops musterd
 *    with the reason;
 *  - a reload renews a certificate due for renewal without a restart,
 *    while an agent keeps polling;
 *  - --insecure-http: plain HTTP, said at start and in /readyz;
 *  - TLS (issue 32): by default TLS 1.3, and TLS 1.2 with ECDHE and AEAD
 *    suites only: a client offering only CBC (SHA-1 or SHA-2) suites is
 *    refused, and served once [server] tls_priorities allows them; a
 *    TLS 1.3-only setting refuses TLS 1.2; a bad priority string stops
 *    musterd, naming the key. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "daemon/tlsgen.h"

static struct tu_musterd md;
static char *dir;
static char state[4096];

static void up(void) {
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        snprintf(state, sizeof state, "%s/state", dir);
}

/* What a test starts besides md (agents, a musterd of its own), stopped by
 * PID at the end even when an assertion ends the test early. */
static int pids[4] = { -1, -1, -1, -1 };

static void down(void) {
        for (size_t i = 0; i < sizeof pids / sizeof *pids; i++)
                if (pids[i] > 0)
                        tu_stop_pid(pids[i], SIGKILL, 10000);
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(https, .init = up, .fini = down, .timeout = 180);

#define url(...) tu_url(md.base, __VA_ARGS__)

static void start_https(const char *config) {
        md.https = true;
        if (!md.log && asprintf(&md.log, "%s/musterd.log", dir) < 0)
                md.log = NULL;
        int r = config ? tu_musterd_start_in(&md, dir, config) : tu_musterd_start(&md, state, NULL);
        cr_assert_eq(r, 0, "musterd did not answer over HTTPS; see %s", md.log ? md.log : "its output");
        cr_assert(!strncmp(md.base, "https://", 8), "%s", md.base);
}

static mode_t mode_of(const char *name) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", state, name);
        cr_assert_eq(stat(path, &st), 0, "%s", path);
        return st.st_mode & 07777;
}

static char *state_file(const char *name) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", state, name);
        return tu_read_file(path, NULL);
}

/* musterctl ARGS... against md with its admin token file (and so, by
 * default, the CA beside it): exit status, output in *out, errors in *err. */
static int ctl(char **out, char **err, const char *const *args) {
        return tu_ctl(out, err, md.base, md.admin_token_path, args);
}

Test(https, own_ca_at_first_start_kept_and_renewed) {
        start_https(NULL);
        cr_assert_eq(mode_of("tls"), 0700);
        cr_assert_eq(mode_of("tls/ca.key"), 0600);
        cr_assert_eq(mode_of("tls/server.key"), 0600);
        cr_assert_eq(mode_of("tls/ca.pem"), 0644, "the CA certificate is for clients to take");
        char *ca = state_file("tls/ca.pem"), *cert = state_file("tls/server.pem");
        int64_t until = 0;
        bool valid = false;
        char err[256];
        static const char *const names[] = { "127.0.0.1", "localhost", "::1" };
        cr_assert_eq(tlsgen_check(cert, ca, names, 3, &until, &valid, err, sizeof err), 0, "%s", err);
        cr_assert(valid, "issued by its CA for the loopback names");
        cr_assert_gt(until, (int64_t) time(NULL) + 300 * 86400);

        /* Over HTTPS with that CA (tu_http trusts it); /metrics says when
         * the certificate expires. */
        char *m = NULL;
        cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &m), 200);
        char want[64];
        snprintf(want, sizeof want, "\nmuster_tls_cert_expiry_timestamp_seconds %lld\n", (long long) until);
        cr_assert(strstr(m, want), "%s", m);
        free(m);
        char *ready = NULL;
        cr_assert_eq(tu_http("GET", url("/readyz"), NULL, NULL, 0, &ready), 200);
        cr_assert_str_eq(ready, "\"ready\"");
        free(ready);

        /* A restart keeps the CA and the certificate. */
        tu_musterd_stop(&md, SIGTERM);
        start_https(NULL);
        char *ca2 = state_file("tls/ca.pem"), *cert2 = state_file("tls/server.pem");
        cr_assert_str_eq(ca2, ca);
        cr_assert_str_eq(cert2, cert, "not issued again without a reason");
        free(ca2);
        free(cert2);

        /* One that expires within 30 days is issued again from the same CA
         * at the next start, and so is one that misses a name. */
        struct tls_pair capair = { ca, state_file("tls/ca.key") }, shortlived, narrow;
        cr_assert_eq(tlsgen_server(&capair, names, 3, (int64_t) time(NULL), 10, &shortlived, err, sizeof err), 0);
        static const char *const other[] = { "elsewhere.example.test" };
        cr_assert_eq(tlsgen_server(&capair, other, 1, (int64_t) time(NULL), 300, &narrow, err, sizeof err), 0);
        const struct tls_pair *cases[] = { &shortlived, &narrow };
        for (size_t i = 0; i < 2; i++) {
                tu_musterd_stop(&md, SIGTERM);
                cr_assert_eq(tu_write_file(state, "tls/server.pem", cases[i]->cert_pem), 0);
                cr_assert_eq(tu_write_file(state, "tls/server.key", cases[i]->key_pem), 0);
                start_https(NULL);
                char *now = state_file("tls/server.pem"), *ca3 = state_file("tls/ca.pem");
                cr_assert_str_neq(now, cases[i]->cert_pem, "case %zu: issued again", i);
                cr_assert_str_eq(ca3, ca, "by the same CA");
                cr_assert_eq(tlsgen_check(now, ca, names, 3, &until, &valid, err, sizeof err), 0);
                cr_assert(valid);
                cr_assert_gt(until, (int64_t) time(NULL) + 300 * 86400);
                free(now);
                free(ca3);
        }
        tls_pair_free(&shortlived);
        tls_pair_free(&narrow);
        tls_pair_free(&capair);
        free(cert);
}

Test(https, musterctl_trusts_the_ca_beside_the_token_and_no_other) {
        start_https(NULL);
        char *out = NULL, *err = NULL;
        cr_assert_eq(ctl(&out, &err, (const char *const[]) { "infraenv", "create", "rack-1", NULL }), 0, "%s", err);
        free(out);
        free(err);
        cr_assert_eq(ctl(&out, &err, (const char *const[]) { "infraenv", "list", NULL }), 0, "%s", err);
        cr_assert(strstr(out, "rack-1"), "%s", out);
        free(out);
        free(err);
        /* Another CA: refused, and said why. */
        struct tls_pair other;
        char e[256];
        cr_assert_eq(tlsgen_ca("not musterd's", (int64_t) time(NULL), 30, &other, e, sizeof e), 0);
        cr_assert_eq(tu_write_file(dir, "other-ca.pem", other.cert_pem), 0);
        char other_path[4200];
        snprintf(other_path, sizeof other_path, "%s/other-ca.pem", dir);
        cr_assert_eq(ctl(&out, &err, (const char *const[]) { "--ca", other_path, "infraenv", "list", NULL }), 4, "a TLS failure: musterd could not be reached");
        cr_assert(strstr(err, "its certificate is not signed by the CA musterctl trusts (") && strstr(err, other_path) &&
                          strstr(err, "give --ca"),
                  "%s", err);
        free(out);
        free(err);
        /* A CA file that cannot be read, or holds no certificate: this
         * machine's failure (1), before any connection. */
        char missing[4300];
        snprintf(missing, sizeof missing, "%s/no-such-ca.pem", dir);
        cr_assert_eq(ctl(&out, &err, (const char *const[]) { "--ca", missing, "infraenv", "list", NULL }), 1);
        cr_assert(strstr(err, "cannot read the CA file") && strstr(err, missing) && !strstr(err, "cannot reach"), "%s",
                  err);
        free(out);
        free(err);
        cr_assert_eq(ctl(&out, &err, (const char *const[]) { "--ca", md.admin_token_path, "infraenv", "list", NULL }),
                     1);
        cr_assert(strstr(err, "holds no PEM certificate") && !strstr(err, "cannot reach"), "%s", err);
        free(out);
        free(err);
        /* The token file alone, without musterd's CA beside it: said where
         * musterctl looked. */
        char alone[4300];
        snprintf(alone, sizeof alone, "%s/alone/admin.token", dir);
        char *tok = tu_read_file(md.admin_token_path, NULL);
        cr_assert_eq(tu_write_file(dir, "alone/admin.token", tok), 0);
        free(tok);
        cr_assert_eq(tu_ctl(&out, &err, md.base, alone, (const char *const[]) { "infraenv", "list", NULL }), 4);
        cr_assert(strstr(err, "looked for tls/ca.pem beside the token file") && strstr(err, "give --ca"), "%s", err);
        free(out);
        free(err);
        /* Plain HTTP to the HTTPS port says so. */
        char plain[256];
        snprintf(plain, sizeof plain, "http://%s", md.base + strlen("https://"));
        cr_assert_eq(tu_ctl(&out, &err, plain, md.admin_token_path, (const char *const[]) { "infraenv", "list", NULL }), 4);
        cr_assert(strstr(err, "musterd serves HTTPS unless started with --insecure-http; give --server https://"), "%s",
                  err);
        free(out);
        free(err);
        /* $MUSTER_CA names it as well. */
        cr_assert_eq(setenv("MUSTER_CA", other_path, 1), 0);
        cr_assert_eq(ctl(&out, &err, (const char *const[]) { "infraenv", "list", NULL }), 4);
        unsetenv("MUSTER_CA");
        free(out);
        free(err);
        tls_pair_free(&other);
}

/* A real agent: registers over HTTPS with musterd's CA; with another CA it
 * never reaches musterd. */
Test(https, the_agent_trusts_only_the_ca_it_is_given) {
        start_https(NULL);
        char *ie = NULL, *tok = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "lab", &ie, &tok), 201);
        cr_assert_eq(tu_write_file(dir, "agent.token", tok), 0);
        struct tls_pair other;
        char e[256], tf[4200], ca[4200], other_path[4200], log[2][4200];
        cr_assert_eq(tlsgen_ca("not musterd's", (int64_t) time(NULL), 30, &other, e, sizeof e), 0);
        cr_assert_eq(tu_write_file(dir, "other-ca.pem", other.cert_pem), 0);
        snprintf(tf, sizeof tf, "%s/agent.token", dir);
        snprintf(ca, sizeof ca, "%s/tls/ca.pem", state);
        snprintf(other_path, sizeof other_path, "%s/other-ca.pem", dir);
        static const char *const ids[] = { "4a1c0de0-0000-4000-8000-0000000000a1", "4a1c0de0-0000-4000-8000-0000000000a2" };
        const char *cas[] = { ca, other_path };
        int pid[2];
        for (int i = 0; i < 2; i++) {
                char sd[4200];
                snprintf(sd, sizeof sd, "%s/agent-%d", dir, i);
                snprintf(log[i], sizeof log[i], "%s/agent-%d.log", dir, i);
                const char *argv[] = { tu_agent_path(), "run", "--coordinator", md.base, "--infra-env", ie,
                                       "--token-file", tf, "--ca", cas[i], "--state-dir", sd, "--host-id", ids[i],
                                       "--sysroot", MUSTER_FIXTURES_DIR "/qemu-q35/root", NULL };
                cr_assert_gt(pids[i] = pid[i] = tu_spawn(argv, log[i]), 0);
        }
        json_object_put(tu_wait_host(&md, ie, ids[0], tu_status_is, "insufficient-unbound", 30000,
                                     "registered and validated over HTTPS"));
        json_object *h = NULL;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, ids[1]), md.admin_token, NULL, &h),
                     404, "the agent with another CA never registered");
        json_object_put(h);
        char *l = tu_read_file(log[1], NULL);
        cr_assert(l && strstr(l, "certificate"), "the agent says why: %s", l ? l : "(no log)");
        free(l);
        for (int i = 0; i < 2; i++) {
                cr_assert_eq(tu_stop(&pid[i], SIGTERM), 0);
                pids[i] = -1;
        }
        tls_pair_free(&other);
        free(ie);
        free(tok);
}

/* [server] tls_cert/tls_key: served as given; clients refuse one for another
 * name and one that expired. */
Test(https, the_operators_certificate_and_what_clients_refuse) {
        struct tls_pair ca, good, wrong, old;
        char e[256];
        int64_t now = (int64_t) time(NULL);
        static const char *const lo[] = { "127.0.0.1", "localhost" };
        static const char *const elsewhere[] = { "musterd.example.test" };
        cr_assert_eq(tlsgen_ca("operator CA", now, 365, &ca, e, sizeof e), 0);
        cr_assert_eq(tlsgen_server(&ca, lo, 2, now, 90, &good, e, sizeof e), 0);
        cr_assert_eq(tlsgen_server(&ca, elsewhere, 1, now, 90, &wrong, e, sizeof e), 0);
        cr_assert_eq(tlsgen_server(&ca, lo, 2, now - 40 * 86400, 30, &old, e, sizeof e), 0, "expired 10 days ago");
        cr_assert_eq(tu_write_file(dir, "ca.pem", ca.cert_pem), 0);
        char ca_path[4200], conf[9000];
        snprintf(ca_path, sizeof ca_path, "%s/ca.pem", dir);
        const struct tls_pair *pairs[] = { &good, &wrong, &old };
        static const char *const said[] = { NULL, "match", "expired" };
        for (int i = 0; i < 3; i++) {
                char c[32], k[32];
                snprintf(c, sizeof c, "cert-%d.pem", i);
                snprintf(k, sizeof k, "key-%d.pem", i);
                cr_assert_eq(tu_write_file(dir, c, pairs[i]->cert_pem), 0);
                cr_assert_eq(tu_write_file(dir, k, pairs[i]->key_pem), 0);
                snprintf(conf, sizeof conf, "[server]\ntls_cert = %s/%s\ntls_key = %s/%s\n", dir, c, dir, k);
                /* The harness checks /healthz with musterd's own CA: here
                 * the operator's, so musterd is started and polled by hand. */
                md.https = true;
                cr_assert_eq(tu_write_file(dir, "musterd.conf", conf), 0);
                char cpath[4200], logp[4200], listen[64];
                snprintf(cpath, sizeof cpath, "%s/musterd.conf", dir);
                snprintf(logp, sizeof logp, "%s/musterd-%d.log", dir, i);
                unsigned port = tu_free_port();
                snprintf(listen, sizeof listen, "127.0.0.1:%u", port);
                const char *argv[] = { getenv("MUSTERD"), "--listen", listen, "--state-dir", state, "--config", cpath,
                                       NULL };
                int pid = pids[2] = tu_spawn(argv, logp);
                cr_assert_gt(pid, 0);
                char base[80];
                snprintf(base, sizeof base, "https://127.0.0.1:%u", port);
                tu_http_set_ca(ca_path);
                struct tu_http_reply r = { 0 };
                for (int t = 0; t < 200; t++) {
                        free(r.body);
                        tu_http_raw("GET", tu_url(base, "/healthz"), NULL, NULL, NULL, 0, &r);
                        if (r.curl != CURLE_COULDNT_CONNECT)
                                break;
                        usleep(50 * 1000);
                }
                if (!said[i]) {
                        cr_assert_eq(r.status, 200, "the operator's certificate is served (curl %d)", r.curl);
                        char *s = state_file("tls/server.pem");
                        cr_assert_null(s, "musterd made no certificate of its own");
                } else {
                        cr_assert(r.curl == CURLE_PEER_FAILED_VERIFICATION, "case %d: curl %d (%s)", i, r.curl,
                                  curl_easy_strerror(r.curl));
                }
                free(r.body);
                cr_assert_eq(tu_stop(&pid, SIGTERM), 0);
                pids[2] = -1;
        }
        /* One without the other, or a key that is not the certificate's:
         * musterd does not start, and says why. */
        static const char *const bad[][3] = {
                { "cert-0.pem", NULL, "tls_cert and tls_key go together" },
                { "cert-0.pem", "key-1.pem", "is not the key of" },
        };
        for (size_t i = 0; i < 2; i++) {
                snprintf(conf, sizeof conf, "[server]\ntls_cert = %s/%s\n", dir, bad[i][0]);
                if (bad[i][1])
                        snprintf(conf + strlen(conf), sizeof conf - strlen(conf), "tls_key = %s/%s\n", dir, bad[i][1]);
                cr_assert_eq(tu_write_file(dir, "musterd.conf", conf), 0);
                char cpath[4200];
                snprintf(cpath, sizeof cpath, "%s/musterd.conf", dir);
                const char *argv[] = { getenv("MUSTERD"), "--listen", "127.0.0.1:0", "--state-dir", state, "--config",
                                       cpath, NULL };
                int st = -1;
                char *out = NULL, *err = NULL;
                out = tu_run(argv, &st, &err);
                cr_assert_neq(st, 0);
                cr_assert(err && strstr(err, bad[i][2]), "%s", err ? err : "");
                free(out);
                free(err);
        }
        tls_pair_free(&ca);
        tls_pair_free(&good);
        tls_pair_free(&wrong);
        tls_pair_free(&old);
}

static size_t discard(char *p, size_t sz, size_t n, void *u) {
        (void) p;
        (void) u;
        return sz * n;
}

/* The certificate a new TLS connection to md is served (its PEM). */
static char *served_cert(void) {
        CURL *c = curl_easy_init();
        char ca[4200];
        snprintf(ca, sizeof ca, "%s/tls/ca.pem", state);
        curl_easy_setopt(c, CURLOPT_URL, url("/healthz"));
        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
        curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
        curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
        cr_assert_eq(curl_easy_perform(c), CURLE_OK);
        struct curl_certinfo *ci = NULL;
        char *pem = NULL;
        cr_assert_eq(curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci), CURLE_OK);
        for (int i = 0; ci && i < ci->num_of_certs && !pem; i++)
                for (struct curl_slist *l = ci->certinfo[i]; l && !pem; l = l->next)
                        if (!strncmp(l->data, "Cert:", 5))
                                pem = strdup(l->data + 5);
        curl_easy_cleanup(c);
        cr_assert_not_null(pem, "curl shows the served certificate");
        return pem;
}

static int64_t metric_expiry(void) {
        char *m = NULL;
        cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &m), 200);
        static const char key[] = "\nmuster_tls_cert_expiry_timestamp_seconds ";
        const char *l = strstr(m, key);
        int64_t v = l ? atoll(l + sizeof key - 1) : 0;
        free(m);
        return v;
}

/* A reload (SIGHUP) issues a certificate due for renewal again and serves
 * it from the next handshake on, without a restart, while an agent keeps
 * polling. */
Test(https, a_reload_renews_the_certificate_while_an_agent_keeps_polling) {
        start_https("[agent]\ninstruction_interval = 1\n");
        char *ie = NULL, *tok = NULL, tf[4200], ca_path[4200], sd[4200], log[4200], e[256];
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "lab", &ie, &tok), 201);
        cr_assert_eq(tu_write_file(dir, "agent.token", tok), 0);
        snprintf(tf, sizeof tf, "%s/agent.token", dir);
        snprintf(ca_path, sizeof ca_path, "%s/tls/ca.pem", state);
        snprintf(sd, sizeof sd, "%s/agent", dir);
        snprintf(log, sizeof log, "%s/agent.log", dir);
        static const char *const id = "4a1c0de0-0000-4000-8000-0000000000b1";
        const char *argv[] = { tu_agent_path(), "run", "--coordinator", md.base, "--infra-env", ie, "--token-file", tf,
                               "--ca", ca_path, "--state-dir", sd, "--host-id", id, "--sysroot",
                               MUSTER_FIXTURES_DIR "/qemu-q35/root", NULL };
        int agent = pids[3] = tu_spawn(argv, log);
        cr_assert_gt(agent, 0);
        json_object_put(tu_wait_host(&md, ie, id, tu_status_is, "insufficient-unbound", 30000, "registered"));

        char *first = state_file("tls/server.pem"), *served = served_cert();
        cr_assert_str_eq(served, first, "the certificate in the state dir is served");
        free(served);
        /* Due for renewal: valid for 10 more days only. */
        struct tls_pair capair = { state_file("tls/ca.pem"), state_file("tls/ca.key") }, due;
        static const char *const names[] = { "127.0.0.1", "localhost" };
        cr_assert_eq(tlsgen_server(&capair, names, 2, (int64_t) time(NULL), 10, &due, e, sizeof e), 0, "%s", e);
        cr_assert_eq(tu_write_file(state, "tls/server.pem", due.cert_pem), 0);
        cr_assert_eq(tu_write_file(state, "tls/server.key", due.key_pem), 0);
        cr_assert_eq(kill(md.pid, SIGHUP), 0);
        /* Issued again (the expiry may fall in the same second as the
         * first one's: the file tells). */
        int64_t deadline = tu_mono_ms() + 20000;
        for (char *t; (t = state_file("tls/server.pem")) && !strcmp(t, due.cert_pem);) {
                free(t);
                cr_assert(tu_mono_ms() < deadline, "not renewed on reload; musterd said:\n%s",
                          md.log ? tu_read_file(md.log, NULL) : "");
                usleep(100 * 1000);
        }
        cr_assert_gt(metric_expiry(), (int64_t) time(NULL) + 300 * 86400, "/metrics has the new expiry");
        char *now = state_file("tls/server.pem");
        cr_assert_str_neq(now, first);
        cr_assert_str_neq(now, due.cert_pem, "issued again, not the one due");
        served = served_cert();
        cr_assert_str_eq(served, now, "served from the next handshake on, no restart");
        free(served);
        /* The agent goes on polling over the new certificate. */
        json_object *h = tu_admin_get(&md, "/api/v2/infra-envs/%s/hosts/%s", ie, id);
        char *seen = strdup(tu_jstr(h, "checked_in_at"));
        json_object_put(h);
        deadline = tu_mono_ms() + 20000;
        for (bool moved = false; !moved;) {
                cr_assert(tu_mono_ms() < deadline, "the agent stopped checking in after the renewal");
                usleep(500 * 1000);
                h = tu_admin_get(&md, "/api/v2/infra-envs/%s/hosts/%s", ie, id);
                moved = strcmp(tu_jstr(h, "checked_in_at"), seen) != 0;
                json_object_put(h);
        }
        cr_assert_eq(tu_stop(&agent, SIGTERM), 0);
        pids[3] = -1;
        free(seen);
        free(now);
        free(first);
        tls_pair_free(&due);
        tls_pair_free(&capair);
        free(ie);
        free(tok);
}

Test(https, insecure_http_is_asked_for_and_said) {
        cr_assert_eq(tu_musterd_start(&md, state, NULL), 0); /* the harness asks with --insecure-http */
        cr_assert(!strncmp(md.base, "http://", 7));
        char *ready = NULL;
        cr_assert_eq(tu_http("GET", url("/readyz"), NULL, NULL, 0, &ready), 200);
        cr_assert(strstr(ready, "warning: plain HTTP (--insecure-http)"), "%s", ready);
        free(ready);
        char path[4200];
        snprintf(path, sizeof path, "%s/tls", state);
        cr_assert_neq(access(path, F_OK), 0, "no CA is made for plain HTTP");
        /* HTTPS to it says that it speaks plain HTTP. */
        char tls_url[256], *out = NULL, *err = NULL;
        snprintf(tls_url, sizeof tls_url, "https://%s", md.base + strlen("http://"));
        cr_assert_eq(tu_ctl(&out, &err, tls_url, md.admin_token_path, (const char *const[]) { "infraenv", "list", NULL }),
                     4);
        /* Said for sure when musterd's answer reached OpenSSL, as a "may"
         * when musterd closed on the handshake first (timing). */
        cr_assert((strstr(err, "it answers in plain HTTP, not HTTPS") || strstr(err, "it may speak plain HTTP")) &&
                          strstr(err, "give --server http://"),
                  "%s", err);
        free(out);
        free(err);
}

/* One handshake with md by `openssl s_client` on loopback, verifying
 * musterd's CA: its exit status (0: done), and when done the
 * "Protocol version: ..." and "Ciphersuite: ..." it printed in *said. */
static int handshake(const char *options, char **said) {
        char *out = NULL;
        int st = tu_sh(&out, NULL,
                       "timeout 20 openssl s_client -connect 127.0.0.1:%u -servername localhost -CAfile '%s/tls/ca.pem' "
                       "-verify_return_error -brief %s </dev/null 2>&1",
                       md.port, state, options);
        if (said)
                *said = out;
        else
                free(out);
        return st;
}

/* TLS 1.2 with only these suites (@SECLEVEL=0: the client's own policy
 * lets all of them be offered), and what musterd says to it. */
static int tls12(const char *suites, char **said) {
        char opt[512];
        snprintf(opt, sizeof opt, "-tls1_2 -cipher '%s:@SECLEVEL=0'", suites);
        return handshake(opt, said);
}

/* CBC suites, with SHA-1 and with SHA-2 MACs, for musterd's ECDSA
 * certificate and for RSA key exchange (GnuTLS's NORMAL serves the first
 * two). */
static const char *const old_suites[] = {
        "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "AES128-SHA", "AES256-SHA",
        "ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384",
        "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:AES128-SHA:AES256-SHA:ECDHE-ECDSA-AES128-SHA256",
};

Test(https, tls_offers_mozilla_intermediate_and_refuses_cbc_sha1) {
        start_https(NULL);
        char *said = NULL;
        for (size_t i = 0; i < sizeof old_suites / sizeof *old_suites; i++) {
                int st = tls12(old_suites[i], &said);
                cr_assert_neq(st, 0, "TLS 1.2 with only %s is refused: %s", old_suites[i], said ? said : "");
                cr_assert(!strstr(said, "Ciphersuite:"), "%s: %s", old_suites[i], said);
                free(said);
        }
        /* What it does serve: TLS 1.2 with ECDHE and AEAD suites, TLS 1.3. */
        static const char *const good[][2] = {
                { "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256" },
                { "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384" },
                { "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305" },
                /* Offered the old ones too, it gets an AEAD one. */
                { "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256" },
        };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
                char want[128];
                cr_assert_eq(tls12(good[i][0], &said), 0, "TLS 1.2 with %s: %s", good[i][0], said ? said : "");
                snprintf(want, sizeof want, "Ciphersuite: %s\n", good[i][1]);
                cr_assert(strstr(said, "Protocol version: TLSv1.2\n") && strstr(said, want), "%s: %s", good[i][0],
                          said);
                free(said);
        }
        cr_assert_eq(handshake("-tls1_3", &said), 0, "TLS 1.3: %s", said ? said : "");
        cr_assert(strstr(said, "Protocol version: TLSv1.3\n"), "%s", said);
        free(said);
        /* And the API over it, as every client uses it. */
        char *ready = NULL;
        cr_assert_eq(tu_http("GET", url("/readyz"), NULL, NULL, 0, &ready), 200);
        free(ready);
}

/* [server] tls_priorities is what is served: GnuTLS's NORMAL serves the
 * CBC-SHA-1 suite the default refuses (so that refusal is musterd's, not
 * the client's), a TLS 1.3-only string refuses TLS 1.2. */
Test(https, tls_priorities_set_what_is_served) {
        start_https("[server]\ntls_priorities = NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2\n");
        char *said = NULL;
        cr_assert_eq(tls12("ECDHE-ECDSA-AES128-SHA", &said), 0, "%s", said ? said : "");
        cr_assert(strstr(said, "Ciphersuite: ECDHE-ECDSA-AES128-SHA\n"), "%s", said);
        free(said);
        tu_musterd_stop(&md, SIGTERM);

        start_https("[server]\ntls_priorities = NORMAL:-VERS-ALL:+VERS-TLS1.3\n");
        cr_assert_neq(tls12("ECDHE-ECDSA-AES128-GCM-SHA256", &said), 0, "TLS 1.2 is refused: %s", said ? said : "");
        cr_assert(!strstr(said, "Ciphersuite:"), "%s", said);
        free(said);
        cr_assert_eq(handshake("-tls1_3", &said), 0, "TLS 1.3: %s", said ? said : "");
        cr_assert(strstr(said, "Protocol version: TLSv1.3\n"), "%s", said);
        free(said);
}

/* A priority string GnuTLS does not take: musterd does not start, and says
 * which key and where GnuTLS stopped. */
Test(https, a_bad_tls_priorities_stops_musterd) {
        static const char *const bad[][2] = {
                { "NORMAL:-VERS-ALL:+VERS-TLS1.2:+NO-SUCH-CIPHER", "'+NO-SUCH-CIPHER'" },
                { "NONE", "GnuTLS rejects it" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char conf[512], cpath[4200];
                snprintf(conf, sizeof conf, "[server]\ntls_priorities = %s\n", bad[i][0]);
                cr_assert_eq(tu_write_file(dir, "musterd.conf", conf), 0);
                snprintf(cpath, sizeof cpath, "%s/musterd.conf", dir);
                const char *argv[] = { getenv("MUSTERD"), "--listen", "127.0.0.1:0", "--state-dir", state, "--config",
                                       cpath, NULL };
                int st = -1;
                char *err = NULL, *out = tu_run(argv, &st, &err);
                cr_assert_eq(st, 2, "%s: exit %d: %s", bad[i][0], st, err ? err : "");
                cr_assert(err && strstr(err, "musterd.conf:2: invalid tls_priorities") && strstr(err, bad[i][1]), "%s",
                          err ? err : "");
                free(out);
                free(err);
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/tls", state);
        cr_assert_neq(access(path, F_OK), 0, "stopped before making anything");
}

/* /metrics follows Prometheus's naming rules (promtool from Debian's
 * prometheus package, scripts/install-deps.sh), with muster_build_info and
 * the process metrics a client library exports. Over HTTPS, so that the
 * certificate's expiry is in it too. */
Test(https, metrics_pass_promtool) {
        start_https(NULL);
        const char *promtool = getenv("MUSTER_PROMTOOL");
        cr_assert(promtool && access(promtool, X_OK) == 0, "promtool (scripts/install-deps.sh) at %s",
                  promtool ? promtool : "$MUSTER_PROMTOOL unset");
        char *m = NULL;
        cr_assert_eq(tu_http("GET", url("/readyz"), NULL, NULL, 0, &m), 200);
        free(m);
        cr_assert_eq(tu_http("GET", url("/api/v2/nothing-here"), md.admin_token, NULL, 0, &m), 404);
        free(m);
        cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &m), 200);
        cr_assert_eq(tu_write_file(dir, "metrics.txt", m), 0);
        char *out = NULL, *err = NULL;
        int st = tu_sh(&out, &err, "'%s' check metrics < '%s/metrics.txt'", promtool, dir);
        cr_assert_eq(st, 0, "promtool: %s%s", out, err);
        cr_assert_str_eq(out, "", "no lint problem: %s", out);
        free(out);
        free(err);
        cr_assert(strstr(m, "\nmuster_build_info{version=\"" MUSTER_VERSION "\",api=\"v2\",schema=\""), "%s", m);
        cr_assert(strstr(m, "\nmuster_tls_cert_expiry_timestamp_seconds "), "%s", m);
        static const char *const process[] = { "process_start_time_seconds", "process_cpu_seconds_total",
                                               "process_resident_memory_bytes", "process_virtual_memory_bytes",
                                               "process_open_fds", "process_max_fds" };
        for (size_t i = 0; i < sizeof process / sizeof *process; i++) {
                char key[64];
                snprintf(key, sizeof key, "\n%s ", process[i]);
                const char *l = strstr(m, key);
                cr_assert(l, "%s missing: %s", process[i], m);
                double v = strtod(l + strlen(key), NULL);
                if (strcmp(process[i], "process_cpu_seconds_total") != 0)
                        cr_assert_gt(v, 0, "%s", process[i]);
                if (strcmp(process[i], "process_start_time_seconds") == 0)
                        cr_assert(v <= (double) time(NULL) && v > (double) time(NULL) - 600, "%f", v);
        }
        /* Every counter's name ends in _total. */
        for (const char *t = strstr(m, "# TYPE "); t; t = strstr(t + 1, "# TYPE ")) {
                char name[128], type[32];
                cr_assert_eq(sscanf(t, "# TYPE %127s %31s", name, type), 2);
                if (strcmp(type, "counter") == 0)
                        cr_assert(strlen(name) > 6 && strcmp(name + strlen(name) - 6, "_total") == 0, "%s", name);
        }
        free(m);
}
