/* musterd's own log, read back where an admin reads it: the text lines
 * (time, level, subsystem, message, ids), [log] format = json (one JSON
 * object a line), and under a real systemd-journald (in a private mount
 * namespace, its own sockets and runtime journal) the entries' MUSTER_*
 * fields through `journalctl MUSTER_HOST_ID=...`. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <regex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char *dir;
static struct tu_musterd md;
static int jpid = -1; /* the journald this test started, stopped by its pid even when the test fails */
static int apid = -1; /* the agent, the same */

static void up(void) { dir = tu_mkdtemp(); }

static void down(void) {
        tu_musterd_free(&md);
        if (jpid > 0)
                (void) tu_kill_wait(jpid, SIGTERM);
        if (apid > 0)
                (void) tu_kill_wait(apid, SIGTERM);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(logs, .init = up, .fini = down, .timeout = 120);

static const char *H = "6d757374-6572-4071-8335-00000000a001";

/* musterd with config_text, its output in DIR/musterd.log; an infra-env
 * and host H registered in it. *ie: the infra-env's id (caller frees). */
static void start_and_register(const char *config_text, char **ie) {
        char *token = NULL, body[256];
        cr_assert(asprintf(&md.log, "%s/musterd.log", dir) > 0);
        cr_assert_eq(tu_musterd_start_in(&md, dir, config_text), 0, "musterd started");
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "logs", ie, &token), 201);
        snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", H);
        long code = tu_http_json("POST", tu_url(md.base, "/api/v2/infra-envs/%s/hosts", *ie), token, body, NULL);
        cr_assert(code == 201 || code == 200, "register: %ld", code);
        free(token);
}

static bool matches(const char *text, const char *re) {
        regex_t rx;
        cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE), 0, "%s", re);
        int r = regexec(&rx, text, 0, NULL, 0);
        regfree(&rx);
        return r == 0;
}

Test(logs, text_lines_have_time_level_and_the_host_id) {
        char *ie = NULL, re[512];
        start_and_register(NULL, &ie);
        tu_musterd_stop(&md, SIGTERM);
        char *log = tu_read_file(md.log, NULL);
        cr_assert_not_null(log);
        cr_assert(matches(log, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z INFO  musterd: serving on "),
                  "%s", log);
        snprintf(re, sizeof re, "^[0-9-]{10}T[0-9:.]{12}Z INFO  agent: host %s registered in infra-env %s .* host=%s.* infra_env=%s$",
                 H, ie, H, ie);
        cr_assert(matches(log, re), "no %s in\n%s", re, log);
        free(log);
        free(ie);
}

static const char *jstr(json_object *o, const char *key) {
        json_object *v;
        return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* Each line of log as a JSON object with a time, a level and a message,
 * given to fn with arg; the number of lines. */
static int each_json_line(char *log, void (*fn)(json_object *o, const char *line, void *arg), void *arg) {
        int lines = 0;
        char *save = NULL;
        for (char *l = strtok_r(log, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                json_object *o = json_tokener_parse(l);
                cr_assert(o && json_object_is_type(o, json_type_object), "not a JSON object: %s", l);
                cr_assert(jstr(o, "time") && matches(jstr(o, "time"), "^[0-9-]{10}T[0-9:.]{12}Z$"), "%s", l);
                cr_assert(jstr(o, "level") && jstr(o, "message"), "%s", l);
                fn(o, l, arg);
                json_object_put(o);
                lines++;
        }
        return lines;
}

struct seen {
        const char *ie;
        int registered;
};

static void musterd_line(json_object *o, const char *l, void *arg) {
        struct seen *s = arg;
        cr_assert(jstr(o, "subsystem"), "%s", l);
        if (jstr(o, "host_id") && strcmp(jstr(o, "host_id"), H) == 0 && strstr(jstr(o, "message"), "registered")) {
                cr_assert_str_eq(jstr(o, "level"), "INFO");
                cr_assert_str_eq(jstr(o, "subsystem"), "agent");
                cr_assert_str_eq(jstr(o, "infra_env_id"), s->ie);
                s->registered++;
        }
}

Test(logs, json_format_gives_one_object_a_line) {
        char *ie = NULL;
        start_and_register("[log]\nformat = json\n", &ie);
        tu_musterd_stop(&md, SIGTERM);
        char *log = tu_read_file(md.log, NULL);
        cr_assert_not_null(log);
        struct seen s = { .ie = ie };
        int lines = each_json_line(log, musterd_line, &s);
        cr_assert_gt(lines, 1, "%d lines", lines);
        cr_assert_eq(s.registered, 1);
        free(log);
        free(ie);
}

Test(logs, bad_log_format_is_refused_with_its_line) {
        char *out = NULL, *err = NULL;
        cr_assert_eq(tu_write_file(dir, "bad.conf", "[server]\nlisten = 127.0.0.1:1\n[log]\nformat = xml\n"), 0);
        cr_assert_eq(tu_runf(&out, &err, "%s --check-config %s/bad.conf", getenv("MUSTERD"), dir), 2);
        cr_assert(strstr(err, "bad.conf:4: ") && strstr(err, "text or json"), "%s", err);
        free(out);
        free(err);
}

static bool any_status(json_object *host, const void *unused) {
        (void) unused;
        return tu_jstr(host, "status") != NULL;
}

static void agent_line(json_object *o, const char *l, void *arg) {
        struct seen *s = arg;
        if (strstr(jstr(o, "message"), "Registered host")) {
                cr_assert_str_eq(jstr(o, "host_id"), "6d757374-6572-4071-8335-000000000001", "%s", l);
                s->registered++;
        }
}

/* The agent's own log as JSON lines (--log-format json): one object a line,
 * the host id on each once it is known. */
Test(logs, agent_json_format_gives_one_object_a_line) {
        char *ie = NULL, *token = NULL, tokfile[4096], state[4096], alog[4096];
        cr_assert(asprintf(&md.log, "%s/musterd.log", dir) > 0);
        cr_assert_eq(tu_musterd_start_in(&md, dir, NULL), 0, "musterd started");
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "agentlog", &ie, &token), 201);
        cr_assert_eq(tu_write_file(dir, "agent.token", token), 0);
        snprintf(tokfile, sizeof tokfile, "%s/agent.token", dir);
        snprintf(state, sizeof state, "%s/agent-state", dir);
        snprintf(alog, sizeof alog, "%s/agent.log", dir);
        const char *argv[] = { tu_agent_path(), "run", "--coordinator", md.base, "--infra-env", ie, "--token-file",
                               tokfile, "--sysroot", MUSTER_FIXTURES_DIR "/qemu-q35/root", "--state-dir", state,
                               "-v", "--log-format", "json", NULL };
        apid = tu_spawn(argv, alog);
        cr_assert_gt(apid, 0);
        json_object *h = tu_wait_host(&md, ie, "6d757374-6572-4071-8335-000000000001", any_status, NULL, 20000,
                                      "registered");
        json_object_put(h);
        cr_assert_eq(tu_stop(&apid, SIGTERM), 0, "the agent stops cleanly on SIGTERM");
        char *log = tu_read_file(alog, NULL);
        cr_assert_not_null(log);
        struct seen seen = { 0 };
        int lines = each_json_line(log, agent_line, &seen);
        cr_assert_gt(lines, 1, "%d lines", lines);
        cr_assert_geq(seen.registered, 1, "no line says the host registered");
        free(log);
        free(ie);
        free(token);
}

Test(logs, agent_bad_log_format_is_a_usage_error) {
        char *out = NULL, *err = NULL;
        cr_assert_eq(tu_runf(&out, &err, "%s run --log-format xml", tu_agent_path()), 2);
        cr_assert(strstr(err, "--log-format takes text or json, not \"xml\""), "%s", err);
        free(out);
        free(err);
}

/* ---- under journald ------------------------------------------------------- */

static void tmpfs_on(const char *path) {
        mkdir(path, 0755); /* in the private namespace's mounts below, or there already */
        cr_assert_eq(mount("tmpfs", path, "tmpfs", 0, "mode=0755"), 0, "mount tmpfs on %s: %m", path);
}

Test(logs, journald_entries_carry_the_ids) {
        const char *journald = "/lib/systemd/systemd-journald";
        if (access(journald, X_OK) != 0 || geteuid() != 0)
                cr_skip_test("needs root and %s", journald);
        /* This test's process alone gets its own mounts: journald's sockets
         * and its runtime journal in tmpfs, none of the machine's. */
        cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare: %m");
        cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%m");
        tmpfs_on("/run/systemd");
        tmpfs_on("/run/log");
        struct stat st;
        if (stat("/var/log/journal", &st) == 0)
                tmpfs_on("/var/log/journal"); /* Storage=auto would write there: keep it volatile */
        char jlog[4200];
        snprintf(jlog, sizeof jlog, "%s/journald.log", dir);
        jpid = tu_spawn((const char *const[]) { journald, NULL }, jlog);
        cr_assert_gt(jpid, 0);
        bool ready = false;
        for (int i = 0; i < 100 && !ready; i++) {
                ready = access("/run/systemd/journal/socket", F_OK) == 0 && access("/run/systemd/journal/stdout", F_OK) == 0;
                if (!ready)
                        usleep(50 * 1000);
        }
        cr_assert(ready, "journald made its sockets");

        /* musterd as a service with StandardError=journal runs. */
        char wrapper[4200], script[9000];
        snprintf(script, sizeof script, "#!/bin/sh\nexec '%s' '%s' \"$@\"\n", getenv("MUSTER_TEST_JOURNAL_EXEC"),
                 getenv("MUSTERD"));
        cr_assert_eq(tu_write_file(dir, "musterd-journal", script), 0);
        snprintf(wrapper, sizeof wrapper, "%s/musterd-journal", dir);
        cr_assert_eq(chmod(wrapper, 0755), 0);
        setenv("MUSTERD", wrapper, 1);
        char *ie = NULL;
        start_and_register(NULL, &ie);
        tu_musterd_stop(&md, SIGTERM);

        FILE *mid = fopen("/etc/machine-id", "re");
        char machine[64] = "";
        cr_assert(mid && fscanf(mid, "%63s", machine) == 1);
        fclose(mid);
        int found = 0;
        char *out = NULL;
        for (int i = 0; i < 50 && !found; i++) {
                free(out);
                out = NULL;
                cr_assert_eq(tu_runf(&out, NULL, "journalctl --no-pager --directory=/run/log/journal/%s MUSTER_HOST_ID=%s -o json",
                                     machine, H), 0);
                for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
                        json_object *o = json_tokener_parse(l);
                        cr_assert_not_null(o, "%s", l);
                        const char *msg = jstr(o, "MESSAGE");
                        if (msg && strstr(msg, "registered")) {
                                cr_assert_str_eq(jstr(o, "MUSTER_HOST_ID"), H);
                                cr_assert_str_eq(jstr(o, "MUSTER_INFRA_ENV_ID"), ie);
                                cr_assert_str_eq(jstr(o, "MUSTER_SUBSYSTEM"), "agent");
                                cr_assert_str_eq(jstr(o, "PRIORITY"), "6");
                                cr_assert_str_eq(jstr(o, "SYSLOG_IDENTIFIER"), "musterd");
                                cr_assert_str_eq(jstr(o, "_TRANSPORT"), "journal", "sent as an entry, not a stream line");
                                cr_assert(jstr(o, "CODE_FILE") && strstr(jstr(o, "CODE_FILE"), "daemon.c"), "%s", l);
                                cr_assert(jstr(o, "CODE_LINE"));
                                found++;
                        }
                        json_object_put(o);
                }
                if (!found)
                        usleep(100 * 1000);
        }
        cr_assert_eq(found, 1, "journalctl MUSTER_HOST_ID=%s: %s", H, out ? out : "");
        free(out);
        /* Nothing of it went to the stream as plain lines with <N> prefixes. */
        cr_assert_eq(tu_runf(&out, NULL, "journalctl --no-pager --directory=/run/log/journal/%s _TRANSPORT=stdout -o cat",
                             machine), 0);
        cr_assert_null(strstr(out, "registered"), "%s", out);
        free(out);
        cr_assert_eq(tu_stop_pid(jpid, SIGTERM, 10000), 0);
        jpid = -1;
        free(ie);
}
