/* Tokens and scopes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domain/auth.h"
#include "units.h"
#include "jwt.h"
#include "protocol.h"

static struct crypto_key *key, *other;

static void setup(void) {
        cr_assert_eq(crypto_key_generate(&key), 0);
        cr_assert_eq(crypto_key_generate(&other), 0);
}

static void teardown(void) {
        crypto_key_free(key);
        crypto_key_free(other);
}

TestSuite(auth, .init = setup, .fini = teardown);

static const char *IE = "0b0e6f4e-4c1f-4b47-9d3c-0f1e2d3c4b5a";
static const char *JTI = "3c2b1a09-8f7e-4d6c-9b5a-493827160504";

Test(auth, agent_token_round_trip_and_scope) {
        char *t;
        struct principal p;
        cr_assert_eq(auth_issue_agent(key, IE, 3, &t), 0);
        cr_assert_eq(auth_check(key, t, 0, &p), 0);
        cr_assert_eq(p.kind, PRINCIPAL_AGENT);
        cr_assert_str_eq(p.infra_env_id, IE);
        cr_assert_eq(p.generation, 3);
        cr_assert(auth_may_use_infra_env(&p, IE, "alice"));
        cr_assert_not(auth_may_use_infra_env(&p, "aaaaaaaa-4c1f-4b47-9d3c-0f1e2d3c4b5a", "alice"));
        cr_assert_not(auth_may_see_cluster(&p, "alice"), "agents see no clusters");
        cr_assert_not(auth_is_admin(&p));
        cr_assert_eq(auth_check(other, t, 0, &p), -EACCES, "another key's token");
        free(t);
        cr_assert_eq(auth_issue_agent(key, "not-a-uuid", 1, &t), -EINVAL);
        cr_assert_eq(auth_issue_agent(key, IE, 0, &t), -EINVAL);
}

/* A host's own token (issue 13, item 3): an agent principal for one host. */
Test(auth, host_token_round_trip) {
        static const char *const H = "6d757374-6572-4071-8335-0000000000a1";
        char *t;
        struct principal p;
        cr_assert_eq(auth_issue_host(key, IE, H, 2, &t), 0);
        cr_assert_eq(auth_check(key, t, 0, &p), 0);
        cr_assert_eq(p.kind, PRINCIPAL_AGENT);
        cr_assert_str_eq(p.infra_env_id, IE);
        cr_assert_str_eq(p.host_id, H);
        cr_assert_eq(p.generation, 2);
        cr_assert_not(auth_is_admin(&p));
        free(t);
        cr_assert_eq(auth_issue_agent(key, IE, 2, &t), 0);
        cr_assert_eq(auth_check(key, t, 0, &p), 0);
        cr_assert_str_eq(p.host_id, "", "an infra-env token names no host");
        free(t);
        cr_assert_eq(auth_issue_host(key, IE, "nope", 1, &t), -EINVAL);
        cr_assert_eq(auth_issue_host(key, IE, H, 0, &t), -EINVAL);
        /* "sub":"host" without a host_id is no token of ours. */
        json_object *c = json_tokener_parse("{\"sub\":\"host\",\"infra_env_id\":\"0b0e6f4e-4c1f-4b47-9d3c-0f1e2d3c4b5a\","
                                            "\"gen\":1}");
        cr_assert_eq(jwt_sign(key, c, &t), 0);
        json_object_put(c);
        cr_assert_eq(auth_check(key, t, 0, &p), -EACCES);
        free(t);
}

Test(auth, admin_roles) {
        char *t;
        struct principal p;
        cr_assert_eq(auth_issue_admin(key, ROLE_CLUSTER_CREATOR, "bob", JTI, 0, 100, &t), 0);
        cr_assert_eq(auth_check(key, t, 0, &p), 0);
        cr_assert_str_eq(p.jti, JTI);
        cr_assert_eq(p.expires_at, 100);
        cr_assert_eq(p.kind, PRINCIPAL_ADMIN);
        cr_assert_eq(p.role, ROLE_CLUSTER_CREATOR);
        cr_assert_str_eq(p.owner, "bob");
        cr_assert(auth_may_see_cluster(&p, "bob"));
        cr_assert_not(auth_may_see_cluster(&p, "carol"), "a creator never sees another owner's cluster");
        cr_assert_not(auth_may_use_infra_env(&p, IE, "carol"));
        free(t);
        cr_assert_eq(auth_issue_admin(key, ROLE_INFRA_ADMIN, "root", JTI, 0, 100, &t), 0);
        cr_assert_eq(auth_check(key, t, 0, &p), 0);
        cr_assert(auth_may_see_cluster(&p, "carol"));
        cr_assert(auth_may_use_infra_env(&p, IE, "carol"));
        free(t);
        cr_assert_eq(auth_issue_admin(key, ROLE_INFRA_ADMIN, "", JTI, 0, 100, &t), -EINVAL);
        cr_assert_eq(auth_issue_admin(key, ROLE_INFRA_ADMIN, "root", "not-a-uuid", 0, 100, &t), -EINVAL);
        cr_assert_eq(auth_issue_admin(key, ROLE_INFRA_ADMIN, "root", JTI, 100, 100, &t), -EINVAL, "no life at all");
        cr_assert_eq(auth_issue_admin(key, ROLE_INFRA_ADMIN, "root", JTI, 0, AUTH_MAX_TTL_S + 1, &t), -EINVAL);
}

static char *sign_claims(const char *json) {
        json_object *c = json_tokener_parse(json);
        char *t = NULL;
        cr_assert_eq(jwt_sign(key, c, &t), 0);
        json_object_put(c);
        return t;
}

Test(auth, well_signed_but_wrong_claims_are_refused) {
        const char *bad[] = {
                "{}",
                "{\"sub\":\"root\"}",
                "{\"sub\":\"agent\",\"infra_env_id\":\"x\",\"gen\":1}",
                "{\"sub\":\"agent\",\"infra_env_id\":\"0b0e6f4e-4c1f-4b47-9d3c-0f1e2d3c4b5a\",\"gen\":\"1\"}",
                "{\"sub\":\"agent\",\"infra_env_id\":\"0b0e6f4e-4c1f-4b47-9d3c-0f1e2d3c4b5a\",\"gen\":0}",
                "{\"sub\":\"admin\",\"role\":\"superuser\",\"owner\":\"x\"}",
                "{\"sub\":\"admin\",\"role\":\"infra-admin\"}",
                "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"x\",\"exp\":1}",
                /* People's tokens need an id and an expiry (issue 12, item 8). */
                "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"x\"}",
                "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"x\",\"exp\":5000}",
                "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"x\",\"jti\":\"3c2b1a09-8f7e-4d6c-9b5a-493827160504\"}",
                "{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"x\",\"exp\":5000,\"jti\":\"x\"}",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char *t = sign_claims(bad[i]);
                struct principal p;
                cr_assert_eq(auth_check(key, t, 1000, &p), -EACCES, "%s", bad[i]);
                free(t);
        }
        struct principal p;
        cr_assert_eq(auth_check(key, NULL, 0, &p), -EACCES);
        cr_assert_eq(auth_check(key, "a.b.c", 0, &p), -EACCES);
}

/* An "exp" with a fraction ends the cached answer where it ends the token:
 * here 1000.5 (the old cache kept such a token AUTH_CACHE_TTL_S longer). */
Test(auth, cache_honours_an_exp_with_a_fraction) {
        struct auth_cache *c;
        struct principal p;
        cr_assert_eq(auth_cache_new(&c), 0);
        char *t = sign_claims("{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"x\",\"exp\":1000.5,"
                              "\"jti\":\"3c2b1a09-8f7e-4d6c-9b5a-493827160504\"}");
        cr_assert_eq(auth_check_cached(c, key, t, 990, &p), 0, "cached now");
        cr_assert_eq(p.expires_at, 1001);
        cr_assert_eq(auth_check_cached(c, key, t, 1000, &p), 0, "1000 < 1000.5");
        cr_assert_eq(auth_check_cached(c, key, t, 1001, &p), -EACCES, "expired, cached or not");
        cr_assert_eq(auth_check_cached(c, key, t, 1100, &p), -EACCES);
        free(t);
        auth_cache_free(c);
}

/* auth_cache_forget() drops a revoked token's entries: the next check
 * verifies it again (here against the wrong key, to see that it does). */
Test(auth, cache_forgets_a_revoked_token) {
        struct auth_cache *c;
        struct principal p;
        char *t;
        cr_assert_eq(auth_cache_new(&c), 0);
        cr_assert_eq(auth_issue_admin(key, ROLE_CLUSTER_CREATOR, "bob", JTI, 0, 100000, &t), 0);
        cr_assert_eq(auth_check_cached(c, key, t, 1000, &p), 0);
        cr_assert_eq(auth_check_cached(c, other, t, 1001, &p), 0, "a hit: the key is not looked at");
        auth_cache_forget(c, "aaaaaaaa-8f7e-4d6c-9b5a-493827160504");
        cr_assert_eq(auth_check_cached(c, other, t, 1002, &p), 0, "another id: still cached");
        auth_cache_forget(c, JTI);
        cr_assert_eq(auth_check_cached(c, other, t, 1003, &p), -EACCES, "forgotten: checked again");
        free(t);
        auth_cache_free(c);
}

/* `musterctl token create --ttl`'s durations (units_parse_duration_s). */
Test(auth, ttl_durations) {
        static const struct { const char *s; int64_t want; } ok[] = {
                { "90d", 90 * 86400 }, { "12h", 12 * 3600 }, { "1y", 365 * 86400 }, { "2w", 14 * 86400 },
                { "30m", 1800 }, { "45s", 45 }, { "3600", 3600 }, { "0", 0 },
        };
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
                int64_t v = -1;
                cr_assert_eq(units_parse_duration_s(ok[i].s, &v), 0, "%s", ok[i].s);
                cr_assert_eq(v, ok[i].want, "%s", ok[i].s);
        }
        static const char *bad[] = { "", "d", "1.5d", "-1d", "1 d", "1dd", "1D", "1x", " 1d", "soon" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                int64_t v;
                cr_assert_eq(units_parse_duration_s(bad[i], &v), -EINVAL, "\"%s\"", bad[i]);
        }
        int64_t v;
        cr_assert_eq(units_parse_duration_s("99999999999999999999", &v), -ERANGE);
        cr_assert_eq(units_parse_duration_s("999999999999999y", &v), -ERANGE);
}

/* Who may act on a host (issue 32, item 3): every role against every
 * placement and every host route, as one table. The host is in alice's
 * infra-env; bound or installed, it is in bob's cluster. Each row's 14
 * letters are the answers to: show set delete bind unbind install
 * rotate-token gather-logs logs reclaim | agent-poll agent-result
 * agent-progress agent-logs-upload; '.' allowed, 'F' -EPERM, 'H' -ENOENT
 * (403 and 404 by http/'s table: test_http, errors.host_rule). */
enum who { W_INFRA_ADMIN, W_IE_OWNER, W_CLUSTER_OWNER, W_OTHER_CREATOR, W_AGENT, W_HOST, W_OTHER_HOST, _W_MAX };

static const char *const HOST_ID = "5e0b2c4d-6a7f-4e81-9c3d-2b1a0f9e8d7c";
static const char *const OTHER_HOST_ID = "7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2918";

static struct principal who_principal(enum who w) {
        struct principal p = { .kind = PRINCIPAL_ADMIN, .role = ROLE_CLUSTER_CREATOR };
        switch (w) {
        case W_INFRA_ADMIN: p.role = ROLE_INFRA_ADMIN; strcpy(p.owner, "root"); break;
        case W_IE_OWNER: strcpy(p.owner, "alice"); break;
        case W_CLUSTER_OWNER: strcpy(p.owner, "bob"); break;
        case W_OTHER_CREATOR: strcpy(p.owner, "carol"); break;
        case W_AGENT: p.kind = PRINCIPAL_AGENT; strcpy(p.infra_env_id, IE); break;
        case W_HOST: p.kind = PRINCIPAL_AGENT; strcpy(p.infra_env_id, IE); strcpy(p.host_id, HOST_ID); break;
        case W_OTHER_HOST:
                p.kind = PRINCIPAL_AGENT;
                strcpy(p.infra_env_id, IE);
                strcpy(p.host_id, OTHER_HOST_ID);
                break;
        case _W_MAX: break;
        }
        return p;
}

static const char *const WHO_NAMES[] = { "infra-admin", "ie-owner", "cluster-owner", "other-creator",
                                         "agent", "host-token", "other-host-token" };

static const char *const EXPECT[3][_W_MAX] = {
        [HOST_PLACE_POOL] = {
                [W_INFRA_ADMIN]   = "..........FFFF",
                [W_IE_OWNER]      = "..........FFFF",
                [W_CLUSTER_OWNER] = ".FF.FFFFFFFFFF", /* bob owns no cluster of an unbound host */
                [W_OTHER_CREATOR] = ".FF.FFFFFFFFFF",
                [W_AGENT]         = "FFFFFFFFFF....",
                [W_HOST]          = ".FFFFFFFFF....",
                [W_OTHER_HOST]    = "FFFFFFFFFFFFFF",
        },
        [HOST_PLACE_BOUND] = {
                [W_INFRA_ADMIN]   = "..........FFFF",
                [W_IE_OWNER]      = "..........FFFF",
                [W_CLUSTER_OWNER] = "..........FFFF",
                [W_OTHER_CREATOR] = "HHHHHHHHHHFFFF",
                [W_AGENT]         = "FFFFFFFFFF....",
                [W_HOST]          = ".FFFFFFFFF....",
                [W_OTHER_HOST]    = "FFFFFFFFFFFFFF",
        },
        [HOST_PLACE_INSTALLED] = {
                [W_INFRA_ADMIN]   = "..........FFFF",
                [W_IE_OWNER]      = ".FFFFFFFFFFFFF",
                [W_CLUSTER_OWNER] = "..........FFFF",
                [W_OTHER_CREATOR] = "HHHHHHHHHHFFFF",
                [W_AGENT]         = "FFFFFFFFFFFFFF", /* the node agent speaks with the host's token */
                [W_HOST]          = ".FFFFFFFFF....",
                [W_OTHER_HOST]    = "FFFFFFFFFFFFFF",
        },
};

Test(auth, host_rule_table) {
        static const char *const places[] = { "pool", "bound", "installed" };
        cr_assert_eq(_HOST_OP_MAX, 14);
        for (int pl = 0; pl < 3; pl++)
                for (int w = 0; w < _W_MAX; w++) {
                        struct principal p = who_principal((enum who) w);
                        struct host_scope s = {
                                .host_id = HOST_ID,
                                .ie_owner = "alice",
                                .cluster_owner = pl == HOST_PLACE_POOL ? NULL : "bob",
                                .place = (enum host_place) pl,
                                .node_agent = pl == HOST_PLACE_INSTALLED,
                        };
                        for (int op = 0; op < _HOST_OP_MAX; op++) {
                                const char *why = NULL;
                                int got = auth_host_may(&p, &s, (enum host_op) op, &why);
                                char c = EXPECT[pl][w][op];
                                int want = c == '.' ? 0 : c == 'F' ? -EPERM : -ENOENT;
                                cr_expect_eq(got, want, "%s host, %s, %s: %d, not %d (%s)", places[pl], WHO_NAMES[w],
                                             host_op_to_string((enum host_op) op), got, want, why ? why : "");
                                cr_expect(got == 0 || (why && *why), "a refusal says why");
                        }
                }
}

Test(auth, host_place_from_status) {
        cr_assert_eq(auth_host_place(false, HOST_KNOWN_UNBOUND), HOST_PLACE_POOL);
        cr_assert_eq(auth_host_place(true, HOST_KNOWN), HOST_PLACE_BOUND);
        cr_assert_eq(auth_host_place(true, HOST_ERROR), HOST_PLACE_BOUND);
        cr_assert_eq(auth_host_place(true, HOST_PREPARING_FOR_INSTALLATION), HOST_PLACE_INSTALLED);
        cr_assert_eq(auth_host_place(true, HOST_INSTALLING_IN_PROGRESS), HOST_PLACE_INSTALLED);
        cr_assert_eq(auth_host_place(true, HOST_INSTALLED), HOST_PLACE_INSTALLED);
        cr_assert_eq(auth_host_place(true, HOST_RESETTING_PENDING_USER_ACTION), HOST_PLACE_INSTALLED);
}
