/* Secrets at rest and in answers (issue 18), against the real musterd with
 * debug logging, over its default HTTPS: an infra-env's and a cluster's
 * pull secret and an infra-env's SSH key go in through the API and
 * musterctl, and never come out again, neither in any answer (shows,
 * lists, events, musterctl -o json, a refusal of a bad one) nor in
 * musterd's log; only `*_set: true` says they are there. The state dir is
 * 0700 and the database, signing key, admin token and TLS keys 0600. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;

#define PULL_MARK "cHVsbC1zZWNyZXQtbWFyay1BQkMxMjM"
#define PULL "{\"auths\":{\"quay.io\":{\"auth\":\"" PULL_MARK "\"}}}"
#define CL_MARK "Y2x1c3Rlci1zZWNyZXQtWFlaOTg3"
#define CL_PULL "{\"auths\":{\"registry.example\":{\"auth\":\"" CL_MARK "\"}}}"
#define SSH_MARK "AAAAC3NzaC1lZDI1NTE5AAAAISECRETKEYMARK"
#define SSH "ssh-ed25519 " SSH_MARK " ops@example"

static void up(void) {
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        md.https = true;
        md.verbose = true;
        cr_assert_geq(asprintf(&md.log, "%s/musterd.log", dir), 0);
        cr_assert_eq(tu_musterd_start_in(&md, dir, NULL), 0, "musterd started; see %s", md.log);
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(secrets, .init = up, .fini = down, .timeout = 120);

#define url(...) tu_url(md.base, __VA_ARGS__)

static void assert_clean(const char *what, const char *text) {
        cr_assert_not_null(text, "%s: no text", what);
        cr_assert_null(strstr(text, PULL_MARK), "%s has the infra-env's pull secret: %s", what, text);
        cr_assert_null(strstr(text, CL_MARK), "%s has the cluster's pull secret: %s", what, text);
        cr_assert_null(strstr(text, SSH_MARK), "%s has the SSH key: %s", what, text);
}

static char *get(const char *path) {
        char *out = NULL;
        cr_assert_eq(tu_http("GET", url("%s", path), md.admin_token, NULL, 0, &out), 200, "GET %s", path);
        return out;
}

static mode_t mode_of(const char *name) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/state%s%s", dir, *name ? "/" : "", name);
        cr_assert_eq(stat(path, &st), 0, "%s", path);
        return st.st_mode & 07777;
}

Test(secrets, never_in_answers_or_logs_and_files_are_the_owners) {
        char ps[4200], key[4200], cps[4200];
        cr_assert_eq(tu_write_file(dir, "ps.json", PULL), 0);
        cr_assert_eq(tu_write_file(dir, "key.pub", SSH "\n"), 0);
        cr_assert_eq(tu_write_file(dir, "cluster-ps.json", CL_PULL), 0);
        snprintf(ps, sizeof ps, "%s/ps.json", dir);
        snprintf(key, sizeof key, "%s/key.pub", dir);
        snprintf(cps, sizeof cps, "%s/cluster-ps.json", dir);
        char *out = NULL, *err = NULL;
        const char *args[] = { "infraenv", "create", "rack-s", "--pull-secret-file", ps, "--ssh-key-file", key, NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, md.admin_token_path, args), 0, "%s", err);
        assert_clean("infraenv create", out);
        free(out);
        free(err);
        const char *cargs[] = { "cluster", "create", "c1", "--base-domain", "example.test", "--machine-cidr",
                                "192.0.2.0/24", "--api-vip", "192.0.2.100", "--ingress-vip", "192.0.2.101",
                                "--pull-secret-file", cps, NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, md.admin_token_path, cargs), 0, "%s", err);
        assert_clean("cluster create", out);
        free(out);
        free(err);

        /* Every answer that shows them says only that they are set. */
        json_object *l = tu_admin_get(&md, "/api/v2/infra-envs");
        const char *ie = tu_jstr(l, "0.id");
        cr_assert_not_null(ie, "%s", json_object_to_json_string(l));
        char path[256];
        snprintf(path, sizeof path, "/api/v2/infra-envs/%s", ie);
        char *one = get(path);
        assert_clean("GET infra-env", one);
        json_object *o = json_tokener_parse(one);
        cr_assert(json_object_get_boolean(tu_json_get(o, "pull_secret_set")) &&
                  json_object_get_boolean(tu_json_get(o, "ssh_authorized_key_set")), "%s", one);
        json_object_put(o);
        free(one);
        json_object *cl = tu_admin_get(&md, "/api/v2/clusters");
        snprintf(path, sizeof path, "/api/v2/clusters/%s", tu_jstr(cl, "0.id"));
        one = get(path);
        assert_clean("GET cluster", one);
        o = json_tokener_parse(one);
        cr_assert(json_object_get_boolean(tu_json_get(o, "pull_secret_set")), "%s", one);
        json_object_put(o);
        free(one);
        static const char *const lists[] = { "/api/v2/infra-envs", "/api/v2/clusters", "/api/v2/events?limit=1000",
                                             "/api/v2/hosts" };
        for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
                char *t = get(lists[i]);
                assert_clean(lists[i], t);
                free(t);
        }
        static const char *const shows[][4] = { { "infraenv", "show", "rack-s", NULL }, { "cluster", "show", "c1", NULL },
                                                { "-o", "json", "infraenv", "show" }, { "-o", "json", "cluster", "list" } };
        for (size_t i = 0; i < sizeof shows / sizeof *shows; i++) {
                const char *a[6] = { shows[i][0], shows[i][1], shows[i][2], shows[i][3], NULL, NULL };
                if (i == 2)
                        a[4] = "rack-s";
                cr_assert_eq(tu_ctl(&out, &err, md.base, md.admin_token_path, a), 0, "%s", err);
                assert_clean("musterctl show", out);
                free(out);
                free(err);
        }
        /* A refused change does not echo the secret back either. */
        char *bad = NULL;
        char body[512];
        snprintf(body, sizeof body, "{\"pull_secret\":\"{not json " PULL_MARK "\"}");
        long code = tu_http("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token, body, strlen(body), &bad);
        cr_assert_eq(code, 400, "%s", bad ? bad : "");
        assert_clean("a refusal", bad);
        free(bad);
        json_object_put(l);
        json_object_put(cl);

        /* Nor the log, at debug level. */
        char *log = tu_read_file(md.log, NULL);
        cr_assert(log && strstr(log, "HTTPS"), "the log is musterd's: %s", log ? log : "");
        assert_clean("musterd's log", log);
        free(log);

        /* The files are the owner's. */
        cr_assert_eq(mode_of(""), 0700, "the state dir");
        cr_assert_eq(mode_of("muster.db"), 0600);
        cr_assert_eq(mode_of("signing-key.pem"), 0600);
        cr_assert_eq(mode_of("admin.token"), 0600);
        cr_assert_eq(mode_of("tls/ca.key"), 0600);
        cr_assert_eq(mode_of("tls/server.key"), 0600);
}
