/* Tokens and scopes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "jwt.h"

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

Test(auth, admin_roles) {
        char *t;
        struct principal p;
        cr_assert_eq(auth_issue_admin(key, ROLE_CLUSTER_CREATOR, "bob", &t), 0);
        cr_assert_eq(auth_check(key, t, 0, &p), 0);
        cr_assert_eq(p.kind, PRINCIPAL_ADMIN);
        cr_assert_eq(p.role, ROLE_CLUSTER_CREATOR);
        cr_assert_str_eq(p.owner, "bob");
        cr_assert(auth_may_see_cluster(&p, "bob"));
        cr_assert_not(auth_may_see_cluster(&p, "carol"), "a creator never sees another owner's cluster");
        cr_assert_not(auth_may_use_infra_env(&p, IE, "carol"));
        free(t);
        cr_assert_eq(auth_issue_admin(key, ROLE_INFRA_ADMIN, "root", &t), 0);
        cr_assert_eq(auth_check(key, t, 0, &p), 0);
        cr_assert(auth_may_see_cluster(&p, "carol"));
        cr_assert(auth_may_use_infra_env(&p, IE, "carol"));
        free(t);
        cr_assert_eq(auth_issue_admin(key, ROLE_INFRA_ADMIN, "", &t), -EINVAL);
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
