/* The audit trail (issue 18) with the real musterd and musterctl: every
 * change a person's token asks for (create, delete, bind, unbind, install,
 * token issue and revoke), answered or refused, is an event of category
 * audit naming the token's role and owner, what was asked and the answer;
 * an agent's calls and reads are not; the audit is listed only when asked
 * for (`event list --category audit`). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;

static void up(void) {
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        char state[4200];
        snprintf(state, sizeof state, "%s/state", dir);
        cr_assert_eq(tu_musterd_start(&md, state, NULL), 0);
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(audit, .init = up, .fini = down, .timeout = 120);

#define url(...) tu_url(md.base, __VA_ARGS__)

/* The audit's messages, oldest first, one a line. */
static char *audit_text(void) {
        json_object *l = tu_admin_get(&md, "/api/v2/events?category=audit&limit=1000");
        size_t n = json_object_array_length(l), len = 0;
        char *t = NULL;
        FILE *f = open_memstream(&t, &len);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(l, i);
                cr_assert_str_eq(tu_jstr(e, "category"), "audit");
                fprintf(f, "%s %s\n", tu_jstr(e, "severity"), tu_jstr(e, "message"));
        }
        fclose(f);
        json_object_put(l);
        return t;
}

Test(audit, every_change_names_who_and_the_answer) {
        char *ie = NULL, *tok = NULL, *out = NULL;
        json_object *o = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack-a", &ie, &tok), 201);
        static const char *const host = "6d757374-6572-4071-8335-0000000000a1";
        char body[256];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", host);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL), 201,
                     "an agent registers (not audited)");
        char *alice = tu_token(&md, "cluster-creator", "alice");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), alice, "{\"name\":\"c1\"}", &o), 201);
        char *cid = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cid);
        /* Whatever the answer (a host still discovering may be refused),
         * it is audited with it. */
        long bind = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, host), md.admin_token,
                                 body, NULL);
        long unbind = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, host),
                                   md.admin_token, NULL, NULL);
        cr_assert(bind > 0 && unbind > 0);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", cid), alice, NULL, NULL), 409,
                     "not ready: refused, and audited");
        json_object *tl = tu_admin_get(&md, "/api/v2/tokens");
        const char *j = tu_jstr(tu_find_by(tl, "owner", "alice"), "id");
        cr_assert_not_null(j, "%s", json_object_to_json_string(tl));
        char *jti = strdup(j);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens/%s/actions/revoke", jti), md.admin_token, NULL, NULL), 200);
        json_object_put(tl);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s", cid), md.admin_token, NULL, NULL), 204);

        char *t = audit_text();
        char want[512];
        static const char *const lines[] = {
                "info infra-admin admin: infra_env_create POST /api/v2/infra-envs, answered 201\n",
                "info infra-admin admin: token_create POST /api/v2/tokens, answered 201\n",
                "info cluster-creator alice: cluster_create POST /api/v2/clusters, answered 201\n",
        };
        for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
                cr_assert(strstr(t, lines[i]), "%s in:\n%s", lines[i], t);
        snprintf(want, sizeof want, "infra-admin admin: host_bind POST /api/v2/infra-envs/%s/hosts/%s/actions/bind, "
                 "answered %ld\n", ie, host, bind);
        cr_assert(strstr(t, want), "%s in:\n%s", want, t);
        snprintf(want, sizeof want, "infra-admin admin: host_unbind POST /api/v2/infra-envs/%s/hosts/%s/actions/unbind, "
                 "answered %ld\n", ie, host, unbind);
        cr_assert(strstr(t, want), "%s in:\n%s", want, t);
        snprintf(want, sizeof want, "warning cluster-creator alice: cluster_install POST /api/v2/clusters/%s/actions/"
                 "install, answered 409\n", cid);
        cr_assert(strstr(t, want), "%s in:\n%s", want, t);
        snprintf(want, sizeof want, "infra-admin admin: token_revoke POST /api/v2/tokens/%s/actions/revoke, answered "
                 "200\n", jti);
        cr_assert(strstr(t, want), "%s in:\n%s", want, t);
        snprintf(want, sizeof want, "infra-admin admin: cluster_delete DELETE /api/v2/clusters/%s, answered 204\n", cid);
        cr_assert(strstr(t, want), "%s in:\n%s", want, t);
        cr_assert_null(strstr(t, "host_register"), "an agent's call is not a person's change:\n%s", t);
        cr_assert_null(strstr(t, " GET "), "reads are not audited:\n%s", t);
        free(t);

        /* Listed only when asked for. */
        json_object *all = tu_admin_get(&md, "/api/v2/events?limit=1000");
        for (size_t i = 0; i < json_object_array_length(all); i++)
                cr_assert_str_neq(tu_jstr(json_object_array_get_idx(all, i), "category"), "audit");
        json_object_put(all);
        const char *args[] = { "event", "list", "--category", "audit", "--limit", "1000", NULL };
        char *err = NULL;
        cr_assert_eq(tu_ctl(&out, &err, md.base, md.admin_token_path, args), 0, "%s", err);
        cr_assert(strstr(out, "cluster-creator alice: cluster_create"), "%s", out);
        free(out);
        free(err);
        const char *bad[] = { "event", "list", "--category", "secret", NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, md.admin_token_path, bad), 2);
        cr_assert(strstr(err, "--category takes user, system, agent or audit"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?category=secret"), md.admin_token, NULL, NULL), 400);
        free(alice);
        free(jti);
        free(cid);
        free(ie);
        free(tok);
}
