/* People's tokens: signed here, recorded in the store (a token is good
 * only once the store knows it), revoked there. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "svc.h"
#include "uuid.h"

int svc_token_issue(struct svc *sv, enum admin_role role, const char *owner, int64_t ttl_s, char **token,
                           struct store_token *rec) {
        char id[UUID_STR_LEN], created[MODEL_TIME_LEN], expires[MODEL_TIME_LEN];
        int64_t now = (int64_t) time(NULL);
        int r;

        store_token_init(rec);
        if (ttl_s < 1 || ttl_s > AUTH_MAX_TTL_S)
                return -EINVAL;
        if ((r = model_new_id(id)) < 0 || (r = model_time_format(now, created)) < 0 ||
            (r = model_time_format(now + ttl_s, expires)) < 0)
                return r;
        /* Signed first (it checks owner), recorded second: a token is only
         * good once the store knows it. */
        if ((r = auth_issue_admin(sv->key, role, owner, id, now, now + ttl_s, token)) < 0)
                return r;
        *rec = (struct store_token) { .id = strdup(id), .role = strdup(admin_role_to_string(role)),
                                      .owner = strdup(owner), .created_at = strdup(created),
                                      .expires_at = strdup(expires) };
        if (!rec->id || !rec->role || !rec->owner || !rec->created_at || !rec->expires_at)
                r = -ENOMEM;
        if (r >= 0)
                r = store_token_add(sv->store, rec);
        if (r < 0) {
                free(*token);
                *token = NULL;
                store_token_free(rec);
        }
        return r;
}

