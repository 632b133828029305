/* People's tokens as the API hands them out (svc.h svc_token_issue signs
 * and records one): issued with an event, listed, revoked. The handlers
 * have parsed the request and checked that the caller is an infra admin. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "domain/auth.h"
#include "records.h"
#include "svc/svc.h"

/* Issue `owner` a token of `role` for ttl_s seconds (svc_token_issue), the
 * user `by` asked (event). *token and *rec as svc_token_issue's (the
 * caller's to free). 0, or -errno with err: -EEXIST the owner name already
 * has the other role; others as svc_token_issue's (err empty: the token's). */
int svc_token_create(struct svc *sv, enum admin_role role, const char *owner, int64_t ttl_s, const char *by,
                     char **token, struct token_record *rec, char *err, size_t errlen);

/* The tokens of `owner` (NULL: everyone's), a page at a time. Store errors. */
int svc_token_list(struct svc *sv, const char *owner, const struct list_page *pg, struct token_record_list *out);

/* Revoke token `id` (the user `by` asked: an event, unless it already
 * was) and forget it in the cache of checked signatures at once. *out gets
 * its record after (always freeable). 0, or the store's -errno (-ENOENT). */
int svc_token_revoke(struct svc *sv, const char *id, const char *by, struct token_record *out);
