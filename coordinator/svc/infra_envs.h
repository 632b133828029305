/* Infra-envs (DESIGN §3): created with their first agent token, listed,
 * changed, deleted with their hosts, their agent tokens rotated. The
 * handlers have parsed the request's JSON and authorized the caller. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "records.h"
#include "svc/svc.h"

/* The infra-env `id` as stored (out always freeable). -ENOENT, store
 * errors. */
int svc_infra_env_get(struct svc *sv, const char *id, struct infra_env *out);

/* Infra-envs of `owner` (NULL: everyone's), a page at a time. Store errors. */
int svc_infra_env_list(struct svc *sv, const char *owner, const struct list_page *pg, struct infra_env_list *out);

/* Create ie (as parsed from the request) for the user `by`, its owner. It
 * needs a name, sets none of the server's fields (id, owner, cluster_id,
 * token_generation), and its cpu_architecture (default x86_64, made
 * canonical) must be the one the discovery ISO boots: the [iso] template's,
 * or without a readable template musterd's own. ie gets what the store gave
 * it; *token its first agent token (the caller frees it). 0, or -errno with
 * err: -EINVAL a field or architecture refused, -EIO the token could not
 * be signed (the infra-env is created); store errors (err empty: the
 * infra-env's). */
int svc_infra_env_create(struct svc *sv, struct infra_env *ie, const char *by, char **token, char *err,
                         size_t errlen);

/* Change infra-env `id` with the fields in->present names (only name,
 * pull_secret, ssh_authorized_key, proxy and ntp_sources can change; a name
 * cannot become empty); the user `by` asked, for the event. *out gets it as
 * stored after (always freeable). 0, or -errno with err: -EINVAL nothing or
 * something else to change; store errors (err empty: the infra-env's). */
int svc_infra_env_update(struct svc *sv, const char *id, struct infra_env *in, const char *by,
                         struct infra_env *out, char *err, size_t errlen);

/* Delete ie (as loaded) and its hosts (the user `by` asked), but never a
 * host being installed, bound to an installing cluster or to a cluster of
 * another owner: then nothing goes and err names up to four of them.
 * Hosts bound to the owner's own clusters are unbound (an event each) and
 * those clusters decide their state again. 0, or -errno with err: -EBUSY
 * blocked; store errors (err empty: the infra-env's). */
int svc_infra_env_delete(struct svc *sv, const struct infra_env *ie, const char *by, char *err, size_t errlen);

/* Revoke every agent token of ie (as loaded): its token_generation becomes
 * the next one and *token that generation's agent token (the caller frees
 * it). 0, or -errno: -EIO (err) it could not be signed; store errors (err
 * empty: the infra-env's). */
int svc_infra_env_rotate_token(struct svc *sv, struct infra_env *ie, char **token, char *err, size_t errlen);
