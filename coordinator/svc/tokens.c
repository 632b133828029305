/* People's tokens (svc.h svc_token_issue, tokens.h): signed here, recorded
 * in the store (a token is good only once the store knows it), revoked
 * there. */
#include "svc/tokens.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "svc/svc.h"
#include "uuid.h"
#include "store/store.h"

int svc_token_issue(struct svc *sv, enum admin_role role, const char *owner, int64_t ttl_s, char **token,
                           struct token_record *rec) {
        char id[UUID_STR_LEN], created[MODEL_TIME_LEN], expires[MODEL_TIME_LEN];
        int64_t now = svc_now(sv);
        int r;

        token_record_init(rec);
        if (ttl_s < 1 || ttl_s > AUTH_MAX_TTL_S)
                return -EINVAL;
        if ((r = model_new_id(id)) < 0 || (r = model_time_format(now, created)) < 0 ||
            (r = model_time_format(now + ttl_s, expires)) < 0)
                return r;
        /* Signed first (it checks owner), recorded second: a token is only
         * good once the store knows it. */
        if ((r = auth_issue_admin(sv->key, role, owner, id, now, now + ttl_s, token)) < 0)
                return r;
        *rec = (struct token_record) { .id = strdup(id), .role = strdup(admin_role_to_string(role)),
                                      .owner = strdup(owner), .created_at = strdup(created),
                                      .expires_at = strdup(expires) };
        if (!rec->id || !rec->role || !rec->owner || !rec->created_at || !rec->expires_at)
                r = -ENOMEM;
        if (r >= 0)
                r = store_token_add(sv->store, rec);
        if (r < 0) {
                free(*token);
                *token = NULL;
                token_record_free(rec);
        }
        return r;
}


int svc_token_create(struct svc *sv, enum admin_role role, const char *owner, int64_t ttl_s, const char *by,
                     char **token, struct token_record *rec, char *err, size_t errlen) {
        *token = NULL;
        int r = svc_token_issue(sv, role, owner, ttl_s, token, rec);
        if (r == -EPERM)
                return errmsg(err, errlen, -EEXIST,
                              "owner \"%s\" already has tokens of the other role; an owner name belongs to one role "
                              "(pick another name)", owner);
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "%s token %s for %s issued by %s, expires %s",
                  rec->role, rec->id, owner, by, rec->expires_at);
        return 0;
}

int svc_token_list(struct svc *sv, const char *owner, const struct list_page *pg, struct token_record_list *out) {
        return store_token_list(sv->store, owner, pg, out);
}

int svc_token_revoke(struct svc *sv, const char *id, const char *by, struct token_record *out) {
        token_record_init(out);
        int r = store_token_revoke(sv->store, id);
        if (r < 0)
                return r;
        /* The store is asked on every request anyway; this also drops it
         * from the cache of checked signatures at once. */
        auth_cache_forget(sv->auth_cache, id);
        if (r == 0)
                svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, NULL, NULL, NULL, "token %s revoked by %s", id, by);
        return store_token_get(sv->store, id, out);
}
