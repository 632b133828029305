/* Keeping hosts and clusters in step with their facts: re-run a host's
 * validations (with its cluster, its peers and its network step results)
 * and move it through the state machine; re-run a cluster's validations
 * and set its status. Called by the API after anything that can change a
 * verdict: an inventory, a step result, a (re-)registration, a bind or
 * unbind, a PATCH. */
#pragma once
#include "model.h"
#include "svc/svc.h"

/* A cluster and every host bound to it (inventories parsed when asked). */
struct cluster_view {
        struct cluster c;
        struct host_list hosts;
};
int cluster_view_load(struct svc *sv, const char *cluster_id, bool with_inventory, struct cluster_view *v);
void cluster_view_free(struct cluster_view *v);

/* Re-validate h (as read from the store) and store its new status and
 * validations; records events for a status change and for validations that
 * start or stop failing. If the host is bound and its status changed, the
 * cluster is refreshed too. Returns 0 (a lost race counts as done) or
 * -errno. h->status is updated. */
int refresh_host(struct svc *sv, struct host *h);

/* h (as read at the start of the request) with a new inventory: `text`
 * (a NUL-terminated copy h takes, whatever the outcome), already parsed
 * into inv, which h takes too (inv is left empty). The
 * inventory and the status its validations give h are stored in one write
 * (store_host_set_inventory_status) while h's status is still the one it
 * was read with; else the inventory alone, and the host as stored then is
 * validated again (refresh_host). Events and the cluster as refresh_host.
 * ie: h's infra-env. 0 or -errno (nothing stored). */
int refresh_host_inventory(struct svc *sv, struct host *h, const struct infra_env *ie, char *text,
                           struct inventory *inv);

/* Re-validate a cluster. Before installation its status follows the
 * verdict: pending-for-input (a setting is missing), insufficient (a host or
 * a rule fails) or ready; during and after installation only the
 * validations are stored. *status_out (may be NULL) gets the status. */
int refresh_cluster(struct svc *sv, const char *cluster_id, enum cluster_status *status_out);

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
int refresh_preparation(struct svc *sv, const char *cluster_id);
