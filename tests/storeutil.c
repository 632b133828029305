/* Store fixtures (storeutil.h). */
#include "storeutil.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

char *tu_store_infra_env(struct store *st, const char *owner, const char *name) {
        struct infra_env ie;
        infra_env_init(&ie);
        ie.name = strdup(name);
        ie.owner = strdup(owner);
        ie.cpu_architecture = strdup("x86_64");
        ie.pull_secret = strdup("{\"auths\":{}}");
        cr_assert_eq(store_infra_env_create(st, &ie), 0);
        char *id = strdup(ie.id);
        infra_env_free(&ie);
        return id;
}

char *tu_store_cluster(struct store *st, const char *owner, const char *name) {
        struct cluster c;
        cluster_init(&c);
        c.name = strdup(name);
        c.owner = strdup(owner);
        cr_assert_eq(store_cluster_create(st, &c), 0);
        char *id = strdup(c.id);
        cluster_free(&c);
        return id;
}
