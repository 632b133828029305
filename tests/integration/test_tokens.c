/* Tokens against the real musterd and musterctl on loopback (issue 12):
 * agent routes refuse people's tokens (item 5), cluster creators do not
 * change other owners' pool hosts (6), people's tokens expire, are listed
 * and revoked (8), high-S signatures are refused (12), and an owner name
 * belongs to one role (13). Tokens the server never issued are made here
 * with musterd's own key, read from its state directory. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/bignum.h>

#include "base64url.h"
#include "crypto.h"
#include "jwt.h"
#include "model.h"
#include "testutil.h"

static struct tu_musterd md;
static char *dir;

static void up(void) {
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        cr_assert_eq(tu_musterd_start_in(&md, dir, TU_CONFIG_LOW_MINIMUMS), 0, "musterd started");
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(tokens, .init = up, .fini = down, .timeout = 180);

#define url(...) tu_url(md.base, __VA_ARGS__)
#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })

static const char *A = "6d757374-6572-4071-8335-0000000000a1";
static const char *B = "6d757374-6572-4071-8335-0000000000b2";

static json_object *post(const char *token, const char *path, const char *body) {
        json_object *o = NULL;
        long code = tu_http_json("POST", url("%s", path), token, body, &o);
        cr_assert_eq(code, 201, "POST %s: %ld %s", path, code, o ? json_object_to_json_string(o) : "");
        return o;
}

/* A person's token from POST /tokens (caller frees). */
static char *person(const char *role, const char *owner) {
        char body[256];
        snprintf(body, sizeof body, "{\"role\":\"%s\",\"owner\":\"%s\"}", role, owner);
        json_object *o = post(md.admin_token, "/api/v2/tokens", body);
        char *t = strdup(tu_jstr(o, "token"));
        json_object_put(o);
        return t;
}

static void result(const char *ie, const char *tok, const char *host, const char *type, json_object *output,
                   long want) {
        long code = tu_step_result(md.base, ie, tok, host, "s-1", type, 0, output, NULL);
        cr_assert_eq(code, want, "%s result: %ld", type, code);
}

/* Register `host` with the captured QEMU server's inventory, as its agent. */
static void agent_boot(const char *ie, const char *tok, const char *host) {
        char body[256], path[4096];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", host);
        long code = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL);
        cr_assert(code == 201 || code == 200, "register: %ld", code);
        snprintf(path, sizeof path, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv);
        json_object_object_add(inv, "host_id", json_object_new_string(host));
        result(ie, tok, host, "inventory", inv, 200);
}

/* musterd's signing key, to make tokens the server did not issue. */
static struct crypto_key *server_key(void) {
        char path[4200];
        struct crypto_key *k = NULL;
        snprintf(path, sizeof path, "%s/signing-key.pem", md.state_dir);
        cr_assert_eq(crypto_key_load_or_create(path, &k), 0);
        return k;
}

static char *sign(const char *claims) {
        struct crypto_key *k = server_key();
        json_object *c = json_tokener_parse(claims);
        cr_assert_not_null(c, "%s", claims);
        char *t = NULL;
        cr_assert_eq(jwt_sign(k, c, &t), 0);
        json_object_put(c);
        crypto_key_free(k);
        return t;
}

/* A token's claims (not verified: the test reads what the server made). */
static json_object *claims_of(const char *token) {
        const char *d1 = strchr(token, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        cr_assert_not_null(d2);
        uint8_t *buf = NULL;
        size_t n;
        cr_assert_eq(base64url_decode(d1 + 1, (size_t) (d2 - d1 - 1), &buf, &n), 0);
        json_object *o = json_tokener_parse((const char *) buf);
        free(buf);
        cr_assert_not_null(o);
        return o;
}

static int64_t seconds(const char *rfc3339) {
        int64_t t;
        cr_assert_not_null(rfc3339);
        cr_assert_eq(model_time_parse(rfc3339, &t), 0, "%s", rfc3339);
        return t;
}

/* Item 5: agent routes take agents' tokens only. */
Test(tokens, people_are_refused_on_agent_routes) {
        char *ie, *tok;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        char *carol = person("cluster-creator", "carol");
        const char *people[] = { md.admin_token, carol };
        char reg[128];
        snprintf(reg, sizeof reg, "{\"host_id\":\"%s\"}", B);
        for (size_t i = 0; i < 2; i++) {
                const char *p = people[i];
                json_object *o = NULL;
                cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), p, reg, &o), 403,
                             "register");
                cr_assert(strstr(tu_jstr(o, "reason"), "agent"), "%s", tu_jstr(o, "reason"));
                json_object_put(o);
                cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), p, NULL,
                                          NULL), 403, "polling (the heartbeat)");
                result(ie, p, A, "inventory", json_object_new_object(), 403);
                cr_assert_eq(tu_http_json("PUT", url("/api/v2/infra-envs/%s/hosts/%s/progress", ie, A), p,
                                          "{\"stage\":\"starting\",\"percent\":0}", NULL), 403, "install progress");
        }
        /* Nothing was forged: B never registered, A is still the agent's. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, B), md.admin_token, NULL, NULL),
                     404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, A), tok, NULL, NULL),
                     200, "the agent still polls");
        /* People's routes stay people's: the agent cannot list the pool. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), tok, NULL, NULL), 403);
        free(carol);
        free(ie);
        free(tok);
}

/* Item 6: a creator binds from any pool, but renames and deletes only hosts
 * of its own infra-envs or bound to its own clusters. */
Test(tokens, creators_do_not_change_other_owners_pool_hosts) {
        char *ie, *tok;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "admins", &ie, &tok), 201);
        agent_boot(ie, tok, A);
        agent_boot(ie, tok, B);
        char *dave = person("cluster-creator", "dave");
        json_object *o;

        json_object *e = NULL;
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), dave,
                                  "{\"requested_hostname\":\"daves\"}", &e), 403, "rename a pool host");
        cr_assert(strstr(tu_jstr(e, "reason"), "another owner"), "%s", tu_jstr(e, "reason"));
        json_object_put(e);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), dave, NULL, NULL), 403,
                     "delete a pool host");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), md.admin_token, NULL, &o), 200,
                     "still there");
        cr_assert_null(tu_json_get(o, "requested_hostname"), "not renamed");
        json_object_put(o);

        /* Bound to dave's cluster, A is his to change. */
        o = post(dave, "/api/v2/clusters", "{\"name\":\"d1\"}");
        char *cl = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        char body[128];
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cl);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, A), dave, body, NULL),
                     200, "picking from any pool is allowed");
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), dave,
                                  "{\"requested_hostname\":\"master-0\"}", NULL), 200);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", ie, B), dave, NULL, NULL), 403,
                     "B is still another owner's pool host");
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", ie, A), dave, NULL, NULL), 204);

        /* In his own infra-env, every host is his. */
        char *mine, *mtok;
        cr_assert_eq(tu_create_infra_env(md.base, dave, "daves", &mine, &mtok), 201);
        agent_boot(mine, mtok, B);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s/hosts/%s", mine, B), dave,
                                  "{\"requested_hostname\":\"worker-0\"}", NULL), 200);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", mine, B), dave, NULL, NULL), 204);
        /* And the infra admin changes anything. */
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/infra-envs/%s/hosts/%s", ie, B), md.admin_token, NULL, NULL),
                     204);
        free(mine);
        free(mtok);
        free(cl);
        free(dave);
        free(ie);
        free(tok);
}

/* Item 8: --ttl (default one year), list without the tokens, revoke by id:
 * refused at the next request although the token was just used (cached). */
Test(tokens, create_list_revoke_with_musterctl) {
        char *out = NULL, *err = NULL, path[4200];
        snprintf(path, sizeof path, "%s/erin.token", dir);
        cr_assert_eq(CTL(&out, NULL, "-o", "json", "token", "create", "--role", "cluster-creator", "--owner", "erin",
                         "--ttl", "90d", "--token-out", path), 0);
        json_object *o = json_tokener_parse(out);
        cr_assert_not_null(o, "%s", out);
        cr_assert_null(tu_json_get(o, "token"), "written to the file, not printed");
        char *id = strdup(tu_jstr(o, "id"));
        cr_assert_eq(seconds(tu_jstr(o, "expires_at")) - seconds(tu_jstr(o, "created_at")), 90 * 86400);
        json_object_put(o);
        free(out);
        char *erin = tu_read_file(path, NULL);
        cr_assert_not_null(erin);
        erin[strcspn(erin, "\n")] = '\0';
        json_object *c = claims_of(erin);
        cr_assert_str_eq(tu_jstr(c, "jti"), id);
        cr_assert_eq(json_object_get_int64(tu_json_get(c, "exp")) - json_object_get_int64(tu_json_get(c, "iat")),
                     90 * 86400);
        json_object_put(c);

        /* The default is one year. */
        cr_assert_eq(CTL(&out, NULL, "-o", "json", "token", "create", "--role", "cluster-creator", "--owner", "fred"), 0);
        o = json_tokener_parse(out);
        cr_assert_eq(seconds(tu_jstr(o, "expires_at")) - seconds(tu_jstr(o, "created_at")), 365 * 86400);
        char *fred = strdup(tu_jstr(o, "token"));
        json_object_put(o);
        free(out);
        cr_assert_eq(CTL(NULL, &err, "token", "create", "--role", "cluster-creator", "--owner", "x", "--ttl", "soon"),
                     2);
        cr_assert(strstr(err, "--ttl"), "%s", err);
        free(err);

        /* The list: ids, roles, owners, dates; never a token. */
        cr_assert_eq(CTL(&out, NULL, "-o", "json", "token", "list"), 0);
        cr_assert_null(strstr(out, erin), "no token in the list");
        cr_assert_null(strstr(out, fred));
        cr_assert_null(strstr(out, md.admin_token));
        o = json_tokener_parse(out);
        cr_assert_eq(json_object_array_length(o), 3, "admin.token's, erin's, fred's:\n%s", out);
        cr_assert_str_eq(tu_jstr(o, "0.owner"), "admin");
        cr_assert_str_eq(tu_jstr(o, "0.role"), "infra-admin");
        cr_assert_str_eq(tu_jstr(o, "1.id"), id);
        cr_assert_str_eq(tu_jstr(o, "1.owner"), "erin");
        cr_assert_str_eq(tu_jstr(o, "1.revoked"), "false");
        json_object_put(o);
        free(out);
        cr_assert_eq(CTL(&out, NULL, "token", "list"), 0);
        char short_id[9];
        snprintf(short_id, sizeof short_id, "%.8s", id);
        cr_assert(strstr(out, short_id) && strstr(out, "erin") && strstr(out, "EXPIRES"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);

        /* Used (and so cached), revoked, refused at once. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters"), erin, NULL, NULL), 200);
        cr_assert_eq(CTL(&out, NULL, "token", "revoke", id), 0);
        cr_assert(strstr(out, "revoked"), "%s", out);
        free(out);
        json_object *e = NULL;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters"), erin, NULL, &e), 401);
        cr_assert(strstr(tu_jstr(e, "reason"), "revoked"), "%s", tu_jstr(e, "reason"));
        json_object_put(e);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters"), fred, NULL, NULL), 200, "only that one");
        cr_assert_eq(CTL(&out, NULL, "-o", "json", "token", "list"), 0);
        o = json_tokener_parse(out);
        cr_assert_str_eq(tu_jstr(o, "1.revoked"), "true");
        cr_assert_not_null(tu_jstr(o, "1.revoked_at"));
        json_object_put(o);
        free(out);
        cr_assert_eq(CTL(NULL, NULL, "token", "revoke", "00000000-0000-4000-8000-000000000000"), 3, "unknown id");
        cr_assert_eq(CTL(NULL, NULL, "token", "revoke", "nope"), 3, "no such id: not found");
        /* The table's short id is enough. */
        json_object *fc = claims_of(fred);
        char prefix[9];
        snprintf(prefix, sizeof prefix, "%.8s", tu_jstr(fc, "jti"));
        json_object_put(fc);
        cr_assert_eq(CTL(NULL, NULL, "token", "revoke", prefix), 0);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters"), fred, NULL, NULL), 401);

        /* Only an infra admin lists and revokes. */
        char *gina = person("cluster-creator", "gina");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/tokens"), gina, NULL, NULL), 403);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens/%s/actions/revoke", id), gina, NULL, NULL), 403);
        free(gina);
        free(fred);
        free(erin);
        free(id);
}

/* Item 8: tokens that are expired (an "exp" with a fraction too), have no
 * expiry or id (issued before this change), or were never recorded. */
Test(tokens, expired_old_and_unknown_tokens_are_refused) {
        json_object *c = claims_of(md.admin_token);
        const char *jti = tu_jstr(c, "jti");
        cr_assert_not_null(jti);
        int64_t now = (int64_t) time(NULL);
        char claims[512];
        snprintf(claims, sizeof claims,
                 "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"admin\",\"jti\":\"%s\",\"exp\":%lld.5}", jti,
                 (long long) now - 2);
        char *expired = sign(claims);
        snprintf(claims, sizeof claims,
                 "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"admin\",\"jti\":\"%s\",\"exp\":%lld.5}", jti,
                 (long long) now + 3600);
        char *good = sign(claims);
        char *old = sign("{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"admin\"}");
        snprintf(claims, sizeof claims,
                 "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"admin\","
                 "\"jti\":\"00000000-0000-4000-8000-000000000000\",\"exp\":%lld}", (long long) now + 3600);
        char *unknown = sign(claims);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), good, NULL, NULL), 200, "a fractional exp ahead");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), expired, NULL, NULL), 401, "a fractional exp past");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), old, NULL, NULL), 401, "no exp, no jti");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), unknown, NULL, NULL), 401, "never issued");
        free(expired);
        free(good);
        free(old);
        free(unknown);
        json_object_put(c);
}

/* Item 8: admin.token expires in a year like any person's token, and musterd
 * replaces it at start once it is revoked. */
Test(tokens, admin_token_expires_and_is_replaced_after_revocation) {
        json_object *c = claims_of(md.admin_token);
        cr_assert_eq(json_object_get_int64(tu_json_get(c, "exp")) - json_object_get_int64(tu_json_get(c, "iat")),
                     365 * 86400);
        char *id = strdup(tu_jstr(c, "jti"));
        json_object_put(c);
        char *before = strdup(md.admin_token);
        /* A restart keeps a good one. */
        tu_musterd_stop(&md, SIGTERM);
        cr_assert_eq(tu_musterd_restart(&md, NULL), 0);
        cr_assert_str_eq(md.admin_token, before, "not rewritten");

        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens/%s/actions/revoke", id), md.admin_token, NULL, NULL),
                     200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), before, NULL, NULL), 401);
        tu_musterd_stop(&md, SIGTERM);
        cr_assert_eq(tu_musterd_restart(&md, NULL), 0);
        cr_assert_str_neq(md.admin_token, before, "a fresh admin.token");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), md.admin_token, NULL, NULL), 200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), before, NULL, NULL), 401, "the old one stays revoked");
        free(before);
        free(id);
}

/* Item 12: the high-S twin of a token musterd issued is refused. */
Test(tokens, high_s_token_is_refused) {
        const char *dot = strrchr(md.admin_token, '.');
        uint8_t sig[64];
        size_t n;
        cr_assert_eq(base64url_decode_buf(dot + 1, strlen(dot + 1), sig, sizeof sig, &n), 0);
        mbedtls_mpi order, s;
        mbedtls_mpi_init(&order);
        mbedtls_mpi_init(&s);
        cr_assert_eq(mbedtls_mpi_read_string(&order, 16,
                                             "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"), 0);
        cr_assert_eq(mbedtls_mpi_read_binary(&s, sig + 32, 32), 0);
        cr_assert_eq(mbedtls_mpi_sub_mpi(&s, &order, &s), 0);
        cr_assert_eq(mbedtls_mpi_write_binary(&s, sig + 32, 32), 0);
        mbedtls_mpi_free(&s);
        mbedtls_mpi_free(&order);
        char *s64 = NULL, *twin = NULL;
        cr_assert_eq(base64url_encode(sig, sizeof sig, &s64), 0);
        cr_assert_geq(asprintf(&twin, "%.*s.%s", (int) (dot - md.admin_token), md.admin_token, s64), 0);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), md.admin_token, NULL, NULL), 200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts"), twin, NULL, NULL), 401);
        free(twin);
        free(s64);
}

/* Item 13: an owner name belongs to one role, so an infra admin "bob" and
 * a creator "bob" never share bob's infra-envs and clusters. */
Test(tokens, an_owner_name_belongs_to_one_role) {
        char *err = NULL;
        char *bob = person("infra-admin", "bob");
        cr_assert_eq(CTL(NULL, &err, "token", "create", "--role", "cluster-creator", "--owner", "bob"), 1);
        cr_assert(strstr(err, "one role"), "%s", err);
        free(err);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens"), md.admin_token,
                                  "{\"role\":\"cluster-creator\",\"owner\":\"admin\"}", NULL), 409,
                     "admin.token's owner is an infra admin");
        free(person("infra-admin", "bob"));
        char *cb = person("cluster-creator", "carl");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens"), md.admin_token,
                                  "{\"role\":\"infra-admin\",\"owner\":\"carl\"}", NULL), 409);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens"), md.admin_token,
                                  "{\"role\":\"cluster-creator\",\"owner\":\"carl\",\"ttl_seconds\":0}", NULL), 400);
        free(cb);
        free(bob);
}
