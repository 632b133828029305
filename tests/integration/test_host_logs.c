/* A host's logs and the admin's asks of its agent (issue 21) against the
 * real musterd and musterctl on loopback: PUT .../logs checked at the door
 * (a host's agent only, gzip only, at most [logs] max_upload_bytes: 413),
 * the newest [logs] keep_per_host kept and served to admins only, the
 * logs-gather step handed out until the upload lands (or the step fails),
 * musterctl host logs, and reclaim refused for a host that is not
 * installed. The real agents' side (bundle, upload, reclaim) is in
 * test_install_e2e. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir, *ie, *agent_token;

#define HOST "6d757374-6572-4071-8335-00000000c0de"
#define OTHER "6d757374-6572-4071-8335-00000000beef"
#define url(...) tu_url(md.base, __VA_ARGS__)
#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })

static void up(void) {
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        cr_assert_eq(tu_musterd_start_in(&md, dir, "[logs]\nmax_upload_bytes = 64KiB\nkeep_per_host = 2\n"), 0,
                     "musterd started");
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack-7", &ie, &agent_token), 201);
        char body[128];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", HOST);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), agent_token, body, NULL), 201);
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
        free(ie);
        free(agent_token);
}

TestSuite(host_logs, .init = up, .fini = down, .timeout = 120);

/* A real gzip stream of `text` (the gzip tool's), malloc'd. */
static char *gzip_of(const char *text, size_t *len) {
        cr_assert_eq(tu_write_file(dir, "plain.txt", text), 0);
        char path[4200];
        snprintf(path, sizeof path, "%s/plain.txt", dir);
        tu_must("gzip -9 -n -f %s", path);
        snprintf(path, sizeof path, "%s/plain.txt.gz", dir);
        char *data = tu_read_file(path, len);
        cr_assert_not_null(data);
        return data;
}

static long put_logs(const char *token, const char *host, const char *ctype, const void *data, size_t len,
                     struct tu_http_reply *r) {
        return tu_http_raw("PUT", url("/api/v2/infra-envs/%s/hosts/%s/logs", ie, host), token, ctype, data, len, r);
}

static void reply_free(struct tu_http_reply *r) {
        free(r->body);
        memset(r, 0, sizeof *r);
}

/* The steps the agent gets on its next poll, as one string. */
static char *instructions(void) {
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, HOST), agent_token,
                                  NULL, &o),
                     200);
        char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
        return s;
}

static const char *pending(json_object **keep) {
        json_object *h = tu_admin_get(&md, "/api/v2/infra-envs/%s/hosts/%s", ie, HOST);
        json_object *pa = tu_json_get(h, "pending_actions");
        *keep = h;
        return pa ? json_object_to_json_string(pa) : "none";
}

Test(host_logs, upload_checked_at_the_door) {
        struct tu_http_reply r = { 0 };
        size_t n;
        char *gz = gzip_of("agent.log\nRegistered host\n", &n);

        /* Not gzip: 400. */
        cr_assert_eq(put_logs(agent_token, HOST, "application/gzip", "plain text, not gzip at all", 27, &r), 400);
        cr_assert(strstr(r.body, "gzip"), "%s", r.body);
        reply_free(&r);
        /* Past max_upload_bytes: 413, before the body is taken. */
        size_t big = 64 * 1024 + 1;
        char *huge = calloc(1, big);
        huge[0] = '\x1f';
        huge[1] = '\x8b';
        cr_assert_eq(put_logs(agent_token, HOST, "application/gzip", huge, big, &r), 413);
        cr_assert(strstr(r.body, "65536"), "%s", r.body);
        reply_free(&r);
        free(huge);
        /* Another content type: 415. */
        cr_assert_eq(put_logs(agent_token, HOST, "application/json", gz, n, &r), 415);
        reply_free(&r);
        /* A person's token never acts as an agent: 403. */
        cr_assert_eq(put_logs(md.admin_token, HOST, "application/gzip", gz, n, &r), 403);
        reply_free(&r);
        /* No token: 401; an unknown host: 404. */
        cr_assert_eq(put_logs(NULL, HOST, "application/gzip", gz, n, &r), 401);
        reply_free(&r);
        cr_assert_eq(put_logs(agent_token, OTHER, "application/gzip", gz, n, &r), 404);
        reply_free(&r);

        /* Nothing yet: 404 with the way to ask; musterctl says so too. */
        cr_assert_eq(tu_http_raw("GET", url("/api/v2/infra-envs/%s/hosts/%s/logs", ie, HOST), md.admin_token, NULL,
                                 NULL, 0, &r),
                     404);
        cr_assert(strstr(r.body, "no logs yet") && strstr(r.body, "--gather"), "%s", r.body);
        reply_free(&r);
        char out_path[4200], *err = NULL;
        snprintf(out_path, sizeof out_path, "%s/got.tar.gz", dir);
        cr_assert_eq(CTL(NULL, &err, "host", "logs", HOST, "-o", out_path), 3);
        cr_assert(strstr(err, "no logs yet"), "%s", err);
        free(err);

        /* Not asked for: 409, so an agent token cannot fill the store. */
        cr_assert_eq(put_logs(agent_token, HOST, "application/gzip", gz, n, &r), 409);
        cr_assert(strstr(r.body, "no logs were asked"), "%s", r.body);
        reply_free(&r);
        /* Three asked-for uploads, two kept: the newest is served, to admins
         * only; a second upload for one ask is refused. */
        for (int i = 0; i < 3; i++) {
                free(gz);
                char text[64];
                snprintf(text, sizeof text, "upload %d\n", i);
                gz = gzip_of(text, &n);
                cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/gather-logs", ie, HOST),
                                          md.admin_token, NULL, NULL),
                             202);
                cr_assert_eq(put_logs(agent_token, HOST, "application/gzip", gz, n, &r), 201, "%s", r.body);
                reply_free(&r);
                cr_assert_eq(put_logs(agent_token, HOST, "application/gzip", gz, n, &r), 409);
                reply_free(&r);
        }

        cr_assert_eq(tu_http_raw("GET", url("/api/v2/infra-envs/%s/hosts/%s/logs", ie, HOST), agent_token, NULL, NULL,
                                 0, &r),
                     403, "an agent does not read logs back");
        reply_free(&r);
        cr_assert_eq(CTL(NULL, NULL, "host", "logs", HOST, "-o", out_path), 0);
        size_t got_len;
        char *got = tu_read_file(out_path, &got_len);
        cr_assert(got && got_len == n && memcmp(got, gz, n) == 0, "the newest upload, byte for byte");
        free(got);
        struct stat st;
        cr_assert(stat(out_path, &st) == 0 && (st.st_mode & 07777) == 0600, "a host's logs are private: mode %o",
                  st.st_mode & 07777);
        char *text = NULL;
        cr_assert_eq(tu_runf(&text, NULL, "gzip -dc %s", out_path), 0);
        cr_assert_str_eq(text, "upload 2\n");
        free(text);
        /* -o - : to standard output. */
        char *stdout_text = NULL;
        cr_assert_eq(CTL(&stdout_text, NULL, "host", "logs", HOST, "-o", "-"), 0);
        cr_assert(stdout_text && memcmp(stdout_text, gz, n) == 0, "the same bytes on standard output");
        free(stdout_text);
        /* --gather with no agent polling: it gives up after --timeout, saying so. */
        err = NULL;
        cr_assert_eq(CTL(NULL, &err, "host", "logs", HOST, "--gather", "--timeout", "1", "-o", out_path), 1);
        cr_assert(strstr(err, "has not uploaded its logs after 1s"), "%s", err);
        free(err);
        cr_assert_eq(tu_http_raw("GET", url("/api/v2/infra-envs/%s/hosts/%s/logs", ie, HOST), md.admin_token, NULL,
                                 NULL, 0, &r),
                     200);
        cr_assert_str_eq(r.ctype, "application/gzip");
        reply_free(&r);
        json_object *ev = tu_admin_get(&md, "/api/v2/events?infra_env_id=%s&limit=100", ie);
        cr_assert(strstr(json_object_to_json_string(ev), "uploaded its logs"), "%s", json_object_to_json_string(ev));
        json_object_put(ev);
        free(gz);
}

Test(host_logs, gather_logs_step_until_the_upload) {
        json_object *h;
        char *s = instructions();
        cr_assert_null(strstr(s, "logs-gather"), "not asked: %s", s);
        free(s);
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/gather-logs", ie, HOST),
                                  md.admin_token, NULL, &o),
                     202);
        cr_assert_not_null(tu_jstr(o, "requested_at"));
        json_object_put(o);
        /* An agent's token does not ask. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/gather-logs", ie, HOST),
                                  agent_token, NULL, NULL),
                     403);
        cr_assert_str_eq(pending(&h), "[ \"gather-logs\" ]");
        json_object_put(h);
        /* Handed out on every poll until done, with musterd's cap. */
        for (int i = 0; i < 2; i++) {
                s = instructions();
                cr_assert(strstr(s, "\"step_type\":\"logs-gather\"") && strstr(s, "\"max_bytes\":65536"), "%s", s);
                free(s);
        }
        /* A failure ends the request, saying why. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, HOST), agent_token,
                                  "{\"step_id\":\"logs-gather\",\"step_type\":\"logs-gather\",\"exit_code\":1,"
                                  "\"error\":\"journalctl broke\"}",
                                  NULL),
                     200);
        cr_assert_str_eq(pending(&h), "none");
        json_object_put(h);
        json_object *ev = tu_admin_get(&md, "/api/v2/events?infra_env_id=%s&limit=100", ie);
        cr_assert(strstr(json_object_to_json_string(ev), "could not gather its logs: journalctl broke"), "%s",
                  json_object_to_json_string(ev));
        json_object_put(ev);
        /* Asked again: the upload ends it. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/gather-logs", ie, HOST),
                                  md.admin_token, NULL, NULL),
                     202);
        size_t n;
        char *gz = gzip_of("fresh\n", &n);
        struct tu_http_reply r = { 0 };
        cr_assert_eq(put_logs(agent_token, HOST, "application/gzip", gz, n, &r), 201);
        reply_free(&r);
        free(gz);
        cr_assert_str_eq(pending(&h), "none");
        json_object_put(h);
        s = instructions();
        cr_assert_null(strstr(s, "logs-gather"), "done: %s", s);
        free(s);
}

Test(host_logs, reclaim_only_for_installed_hosts) {
        struct tu_http_reply r = { 0 };
        const char *path = url("/api/v2/infra-envs/%s/hosts/%s/actions/reclaim", ie, HOST);
        cr_assert_eq(tu_http_raw("POST", path, md.admin_token, "application/json", "{\"wipe\":\"yes\"}", 14, &r), 400);
        cr_assert(strstr(r.body, "wipe") && strstr(r.body, "must be true or false"), "%s", r.body);
        reply_free(&r);
        cr_assert_eq(tu_http_raw("POST", path, md.admin_token, "application/json", "{\"wipe\":true,\"disk\":1}", 22,
                                 &r),
                     400);
        reply_free(&r);
        cr_assert_eq(tu_http_raw("POST", path, agent_token, "application/json", "{}", 2, &r), 403);
        reply_free(&r);
        char *err = NULL;
        cr_assert_eq(CTL(NULL, &err, "host", "reclaim", HOST, "--wipe"), 1);
        cr_assert(strstr(err, "only an installed host") && strstr(err, "discovering-unbound"), "%s", err);
        free(err);
        /* Withdrawing: only what was asked, and never with --wipe. */
        cr_assert_eq(CTL(NULL, &err, "host", "reclaim", HOST, "--cancel"), 1);
        cr_assert(strstr(err, "has no reclaim to withdraw"), "%s", err);
        free(err);
        cr_assert_eq(CTL(NULL, &err, "host", "reclaim", HOST, "--cancel", "--wipe"), 2);
        cr_assert(strstr(err, "--cancel withdraws a reclaim"), "%s", err);
        free(err);
        json_object *h;
        cr_assert_str_eq(pending(&h), "none", "nothing was asked");
        json_object_put(h);
}
