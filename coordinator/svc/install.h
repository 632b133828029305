/* The installation story after `install` (DESIGN §5-6): hosts that fail,
 * the cluster that fails with them or is done when all its hosts are. Used
 * by the step results, the progress reports, the disconnect monitor and
 * re-registration. */
#pragma once
#include <stdbool.h>

#include "model.h"
#include "svc.h"

/* Host h failed its installation because of `why`: unless it is already in
 * error, it becomes error with status_info "<prefix><why>" (prefix NULL:
 * "Installation failed: "), only from the status it has in h; then its
 * cluster, if installing, becomes error with "Host <hostname> failed:
 * <why>". Events for both. 0, or -ESTALE if the host moved meanwhile. */
int install_fail_host(struct svc *sv, const struct host *h, const char *prefix, const char *why);

/* If every host bound to the cluster is installed, an installing cluster
 * becomes installed (event). 1 if it did, 0 if not yet, -errno. */
int install_cluster_check(struct svc *sv, const char *cluster_id);

/* Whether h's install step reported success and h waits for its installed
 * system's first check-in (installing-in-progress at stage rebooting). */
bool install_waits_for_first_boot(const struct host *h);

/* The installed system's node agent checked in (with the host's own token):
 * a host waiting for it becomes installed (stage done, 100%), event, and
 * its cluster is installed when all its hosts are. 1 if it moved, 0 if it
 * was not waiting (or moved meanwhile), -errno. h->status is updated. */
int install_first_boot(struct svc *sv, struct host *h);

/* The preparation of an installation (preparing-for-installation): a host
 * has passed once its installation-disk-speed-check result is in and none
 * of its validations fails or waits.
 * - A cluster install: when every host has passed, they all become
 *   installing (prepared) and the cluster installing. When a host left its
 *   preparation (insufficient on a failed check, disconnected, registered
 *   again), the cluster goes back to insufficient saying why, its other
 *   preparing hosts back to known (preparation-failed); nothing was written.
 * - A day-2 host of an installed cluster: it becomes installing on its own.
 * Events for each move. 1 if something moved, 0 if not, -errno. */
int install_prepare_check(struct svc *sv, const char *cluster_id);

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
int install_start_cluster(struct svc *sv, const char *cluster_id, const char *by, char *err, size_t errlen);
