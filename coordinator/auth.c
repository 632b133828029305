/* Token issue and check, and the scope rules (auth.h). */
#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jwt.h"
#include "uuid.h"

const char *admin_role_to_string(enum admin_role r) {
        switch (r) {
        case ROLE_INFRA_ADMIN: return "infra-admin";
        case ROLE_CLUSTER_CREATOR: return "cluster-creator";
        }
        return NULL;
}

int admin_role_from_string(const char *s, enum admin_role *out) {
        if (s && strcmp(s, "infra-admin") == 0)
                *out = ROLE_INFRA_ADMIN;
        else if (s && strcmp(s, "cluster-creator") == 0)
                *out = ROLE_CLUSTER_CREATOR;
        else
                return -EINVAL;
        return 0;
}

int auth_issue_agent(const struct crypto_key *k, const char *infra_env_id, int64_t gen, char **token) {
        if (!uuid_is_valid(infra_env_id) || gen < 1)
                return -EINVAL;
        json_object *c = json_object_new_object();
        json_object_object_add(c, "sub", json_object_new_string("agent"));
        json_object_object_add(c, "infra_env_id", json_object_new_string(infra_env_id));
        json_object_object_add(c, "gen", json_object_new_int64(gen));
        int r = jwt_sign(k, c, token);
        json_object_put(c);
        return r;
}

int auth_issue_admin(const struct crypto_key *k, enum admin_role role, const char *owner, char **token) {
        if (!owner || !*owner || strlen(owner) >= sizeof ((struct principal *) 0)->owner)
                return -EINVAL;
        json_object *c = json_object_new_object();
        json_object_object_add(c, "sub", json_object_new_string("admin"));
        json_object_object_add(c, "role", json_object_new_string(admin_role_to_string(role)));
        json_object_object_add(c, "owner", json_object_new_string(owner));
        int r = jwt_sign(k, c, token);
        json_object_put(c);
        return r;
}

static const char *claim_str(json_object *c, const char *k) {
        json_object *v;
        if (!json_object_object_get_ex(c, k, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

int auth_check(const struct crypto_key *k, const char *token, int64_t now, struct principal *out) {
        json_object *c = NULL, *v;
        int r = -EACCES;

        memset(out, 0, sizeof *out);
        if (!token || jwt_verify(k, token, now, &c) < 0)
                return -EACCES;
        const char *sub = claim_str(c, "sub");
        if (sub && strcmp(sub, "agent") == 0) {
                const char *ie = claim_str(c, "infra_env_id");
                if (ie && uuid_is_valid(ie) && json_object_object_get_ex(c, "gen", &v) &&
                    json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 1) {
                        out->kind = PRINCIPAL_AGENT;
                        snprintf(out->infra_env_id, sizeof out->infra_env_id, "%s", ie);
                        out->generation = json_object_get_int64(v);
                        r = 0;
                }
        } else if (sub && strcmp(sub, "admin") == 0) {
                const char *owner = claim_str(c, "owner");
                if (owner && *owner && strlen(owner) < sizeof out->owner &&
                    admin_role_from_string(claim_str(c, "role"), &out->role) == 0) {
                        out->kind = PRINCIPAL_ADMIN;
                        snprintf(out->owner, sizeof out->owner, "%s", owner);
                        r = 0;
                }
        }
        json_object_put(c);
        return r;
}

bool auth_is_admin(const struct principal *p) {
        return p->kind == PRINCIPAL_ADMIN;
}

bool auth_may_use_infra_env(const struct principal *p, const char *infra_env_id, const char *ie_owner) {
        if (p->kind == PRINCIPAL_AGENT)
                return infra_env_id && strcmp(p->infra_env_id, infra_env_id) == 0;
        if (p->role == ROLE_INFRA_ADMIN)
                return true;
        /* A cluster creator may look at infra-envs to find unbound hosts;
         * changing one stays with its owner. The handler narrows further. */
        return ie_owner && strcmp(ie_owner, p->owner) == 0;
}

bool auth_may_see_cluster(const struct principal *p, const char *cluster_owner) {
        if (p->kind != PRINCIPAL_ADMIN)
                return false;
        if (p->role == ROLE_INFRA_ADMIN)
                return true;
        return cluster_owner && strcmp(cluster_owner, p->owner) == 0;
}
