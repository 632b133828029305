/* The installation story (DESIGN §5-6): starting it, resetting and
 * cancelling it, a day-2 host joining an installed cluster, the agents'
 * progress reports and step results, hosts that fail, the cluster that fails
 * with them or is done when all its hosts are, and the signed payload
 * revisions the agents fetch. Used by the API's handlers, the disconnect
 * monitor and re-registration. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "model.h"
#include "records.h"
#include "svc/svc.h"

struct steps_input;

/* Host h failed its installation because of `why`: unless it is already in
 * error, it becomes error with status_info "<prefix><why>" (prefix NULL:
 * "Installation failed: "), only from the status it has in h; then its
 * cluster, if installing, becomes error with "Host <hostname> failed:
 * <why>". Events for both. 0, or -ESTALE if the host moved meanwhile. */
int installation_fail_host(struct svc *sv, const struct host *h, const char *prefix, const char *why);

/* The installed system's node agent checked in (with the host's own token):
 * a host waiting for it becomes installed (stage done, 100%), event, and
 * its cluster is installed when all its hosts are. 1 if it moved, 0 if it
 * was not waiting (or moved meanwhile), -errno. h->status is updated. */
int installation_first_boot(struct svc *sv, struct host *h);

/* Start installing cluster `cluster_id` (the user `by` asked, for the
 * event): re-validated, it must be ready; auto roles are assigned (masters
 * first from the capable hosts), payload revision N+1 is built and signed,
 * and in one transaction the cluster becomes preparing-for-installation
 * and its known hosts preparing (their disk speed check comes next). If
 * anything fails, nothing moves. 0, or -errno with err:
 *   -EBUSY    not ready (its status and why)
 *   -ENOPKG   its release is not imported
 *   -EDOM     its capabilities cannot be computed
 *   -ESTALE   it changed state meanwhile
 *   -EIO      the payload could not be built; -ENOMEM; store errors. */
int svc_install_start_cluster(struct svc *sv, const char *cluster_id, const char *by, char *err, size_t errlen);

/* Reset cluster `cluster_id`'s failed or stuck installation (the user `by`
 * asked): hosts that had started installing register again and are checked
 * anew, installed ones wait to be booted from the discovery ISO
 * (resetting-pending-user-action), the cluster becomes insufficient and
 * follows its hosts. *out (always freeable) gets the cluster as stored
 * after. 0, or -errno with err: -EBUSY nothing to reset (it never started,
 * or is installed); store errors (err empty: the cluster's; -ESTALE it
 * changed state meanwhile). */
int svc_install_reset_cluster(struct svc *sv, const char *cluster_id, const char *by, struct cluster *out, char *err,
                              size_t errlen);

/* Cancel cluster `cluster_id`'s installation in progress (the user `by`
 * asked): its installing hosts fail with "cancelled", keep their progress
 * and are sent stop-installation; the cluster is in error (reset it to try
 * again). *out as svc_install_reset_cluster's. 0, or -errno with err: -EBUSY
 * not installing; store errors (err empty: the cluster's). */
int svc_install_cancel_cluster(struct svc *sv, const char *cluster_id, const char *by, struct cluster *out, char *err,
                               size_t errlen);

/* Day 2 (the user `by` asked): known host h (as loaded), bound to an
 * installed cluster, installs on its own with the cluster's current payload
 * revision (a next one built first when the latest does not carry the
 * host's settings as they are now), as a worker unless its role is set; it
 * becomes preparing, its disk measured again (refresh_preparation moves it
 * on). h is changed. 0, or -errno with err:
 *   -EBUSY    not bound, the cluster not installed, or the host not known
 *   -ENOPKG   the cluster's release is not imported
 *   -ESTALE   another payload revision was built meanwhile
 *   -EIO      the next payload could not be built; -ENOMEM
 *   store errors (err empty; *what names what failed: "cluster", "release",
 *   "payload" or "host"). */
int svc_install_day2_host(struct svc *sv, struct host *h, const char *by, char *err, size_t errlen, const char **what);

/* Revoke every earlier host token of h (the user `by` asked; the
 * infra-env's agent token is untouched): *gen gets the new generation,
 * *token the host token for the installed system (the caller frees it).
 * 0, or -errno: -EIO (err) it could not be signed; store errors (err empty:
 * the host's). */
int svc_install_host_token_rotate(struct svc *sv, const struct host *h, const char *by, int64_t *gen, char **token,
                                  char *err, size_t errlen);

/* Host h's agent reports its installation's progress: stage (not done,
 * which is the coordinator's to set), percent 0..100 and info (may be NULL)
 * are stored with its status_info; an installing host becomes
 * installing-in-progress (event). 0, or -errno with err: -EBUSY h is not
 * installing, -ESTALE it changed state meanwhile; store errors (err empty:
 * the host's). */
int svc_install_progress(struct svc *sv, const struct host *h, enum install_stage stage, int64_t percent,
                         const char *info, char *err, size_t errlen);

/* Cluster `cluster_id`'s payload revisions (their bodies left out). Store
 * errors. */
int svc_install_payload_list(struct svc *sv, const char *cluster_id, struct payload_record_list *out);

/* Whether a host of infra-env `infra_env_id` (host_id non-empty: that host)
 * is bound to cluster `cluster_id`: 1 yes, 0 no (or it cannot be read).
 * What an agent's right to a cluster's payloads rests on. */
int svc_install_payload_bound(struct svc *sv, const char *infra_env_id, const char *host_id, const char *cluster_id);

/* Revision `rev` of cluster `cluster_id`'s payload as the signed envelope
 * the agents check (payload.h), as stored (a high-S signature of an older
 * revision as its low-S twin); *env the caller's to free. 0, or -errno with
 * err: -ENOENT no such revision; -ENOMEM; store errors (err empty; *what:
 * "cluster" or "payload"). */
int svc_install_payload_envelope(struct svc *sv, const char *cluster_id, int64_t rev, char **env, char *err,
                                 size_t errlen, const char **what);

/* The result of an install step of host h (step_id "install-N": mode
 * install; "apply-N": apply, day 2 changes of an installed host): an
 * installing host has written revision N and waits for its first boot, or
 * failed (and its cluster with it); an installed host applied N, or failed
 * to and stays installed. Events for each. A late repeat of a result
 * already taken, or one that can no longer be written, is dropped: the
 * agent is done with it either way. */
void svc_install_step_result(struct svc *sv, struct host *h, const char *step_id, int64_t exit_code,
                             json_object *output, const char *error);

/* The result of h's installation-disk-speed-check: kept as its step result
 * (for the disk the coordinator chose, only the members the validation and
 * the event read, each checked) while it is preparing, its validations and
 * its cluster's preparation follow (refresh_preparation); a late result
 * is ignored. 0, or -errno with err (-ENOMEM); store errors (err empty;
 * *what: "cluster" or "step result"). */
int svc_install_disk_speed_result(struct svc *sv, struct host *h, int64_t exit_code, json_object *output,
                                  const char *error, char *err, size_t errlen, const char **what);

/* The step arguments a preparing, installing or installed host h gets on a
 * poll: fills the install members of *in, installation_disk included (the
 * disk speed check's too: the disk has-min-valid-disks approved), reading
 * h's cluster into *c (freeable after; in's strings live in *c and *h).
 * 0, or the store's -errno (-ENOENT: the cluster is gone). */
int installation_steps_input(struct svc *sv, struct host *h, struct cluster *c, struct steps_input *in);
