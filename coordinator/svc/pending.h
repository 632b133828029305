/* What an admin asks of a host's agent that it does on its next poll
 * (struct host.pending_actions): gather and upload its logs, and reclaim an
 * installed host (its node agent boots it into discovery again, the
 * installation disk wiped first with `wipe`); and the logs uploaded. The
 * handlers have authorized the caller. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "model.h"
#include "records.h"
#include "svc/svc.h"

/* Bytes that start a gzip stream (RFC 1952): an upload must be one. */
#define HOSTLOGS_MAGIC "\x1f\x8b"

/* Ask h's agent for its logs (logs-gather on its next poll, until they are
 * uploaded or the step fails), at requested_at. 0, -EBUSY with err when no agent of h would
 * run it (told to register again, or reclaimed); store errors. */
int svc_host_request_logs(struct svc *sv, const struct host *h, const char *by, char requested_at[MODEL_TIME_LEN],
                          char *err, size_t errlen);

/* The logs h's agent uploaded (data, len: a gzip stream, checked here),
 * taken only when asked for (an agent token cannot fill the store
 * unasked): kept as the newest of h's, [logs] keep_per_host of them; the
 * request is done. 0, -EINVAL (err) for what is not gzip, -EBUSY (err) when
 * none were asked for; store errors. */
int svc_host_logs_upload(struct svc *sv, const struct host *h, const void *data, size_t len, char *err,
                         size_t errlen);

/* h's newest logs. 0, -ENOENT when it uploaded none. */
int svc_host_logs_get(struct svc *sv, const struct host *h, struct host_logs_record *out);

/* logs-gather's result: a failure ends the request, with an event saying why. */
int svc_agent_logs_result(struct svc *sv, const struct host *h, int64_t exit_code, const char *error);

/* Reclaim installed host h: its node agent is sent `reclaim` (the
 * discovery kernel and initramfs to its boot partition, the next boot, a
 * reboot); with wipe, the discovery system wipes the installation disk
 * before it registers. 0, -EBUSY with err unless h is installed, -ENODATA
 * with err when ie's ISO template has no PXE files to boot into; store
 * errors. A discovery agent registering ends the request. */
int svc_host_reclaim(struct svc *sv, const struct infra_env *ie, const struct host *h, bool wipe, const char *by,
                     char *err, size_t errlen);

/* Withdraw h's pending reclaim, until its node agent has been handed the
 * step (HOST_ACTION_RECLAIM_STARTED): from then on, and when none is
 * pending, -EBUSY with err. The boot files are no longer served to its
 * token. */
int svc_host_reclaim_cancel(struct svc *sv, const struct host *h, const char *by, char *err, size_t errlen);

/* reclaim's result from h's node agent: on success h is unbound from its
 * cluster (unbinding-pending-user-action, until the discovery system
 * registers it again: discovering-unbound, a host of the pool); on a
 * failure the request ends with an event saying why. 0 or store errors. */
int svc_agent_reclaim_result(struct svc *sv, const struct host *h, int64_t exit_code, json_object *output,
                             const char *error);

/* The disk a reclaim --wipe wipes: the one h's install chose
 * (validations_install_disk_path over its stored inventory, in cluster c).
 * h is read whole into *full (host_init'ed; the caller frees it), which the
 * answer points into; NULL when it cannot be told. */
const char *svc_reclaim_disk(struct svc *sv, const struct host *h, const struct cluster *c, struct host *full);

/* Whether a host token of h may fetch the discovery boot files (PXE
 * vmlinuz/initrd): only while h is being reclaimed. */
bool svc_host_may_fetch_boot_files(const struct host *h);
