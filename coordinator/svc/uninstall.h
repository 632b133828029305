/* Uninstalling an operator from a cluster (DESIGN §9).
 *
 * Without cleanup (the default) the subscription goes at once: the next
 * payload revision leaves the operator's bundle out, its operands stay.
 * With cleanup.enabled the subscription stays, in phase Cleanup, while its
 * operands go first: the managed operands of the kinds its bundle owns
 * leave the store (and so the next revision), and that revision's
 * deletions name every one of them and those the node agents found, for
 * the agents to delete from their manifest directories. An operand is gone
 * when every host of the cluster that has applied a revision reported
 * (by applying that revision or a later one) that it no longer holds it.
 * When none is left, the next revision removes the operator and the
 * subscription is gone. Setting cleanup.enabled=false meanwhile aborts:
 * what was deleted stays deleted, the operator goes. Past [cleanup]
 * timeout with operands pending, a warning names the hosts that have not
 * reported (once) and muster_cleanup_stalled_total counts it. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>

#include "model.h"
#include "svc/svc.h"

/* Uninstall the cluster's subscription to package; prune removes the
 * dependencies nothing needs any more when the operator goes. 0: gone now,
 * *out {"plan", "payload_revision"?, "operands_deleted"?}; 1: its operands
 * are being cleaned up first, *out the subscription (phase Cleanup, its
 * status.cleanup) with "payload_revision". -ENOENT not subscribed, -EBUSY
 * an install in progress, -EALREADY an uninstall under way, -EDOM what
 * would be left does not resolve (nothing changed), -E2BIG too many
 * operands. */
int svc_operators_unsubscribe(struct svc *sv, const char *cluster_id, const char *package, bool prune, const char *by,
                              json_object **out, char *err, size_t errlen);

/* Set cleanup.enabled of the cluster's subscription to package; false
 * during a cleanup aborts it (the operator goes now). *out the
 * subscription as listed (without it when it went). -ENOENT. */
int svc_operators_set_cleanup(struct svc *sv, const char *cluster_id, const char *package, bool enabled, const char *by,
                              json_object **out, char *err, size_t errlen);

/* Follow the uninstalls under way of cluster_id (NULL: of every cluster):
 * take the hosts' reports, say a stall, remove the operators whose
 * operands are gone. How many uninstalls changed, or -errno. The cleanup
 * controller's pass (svc_uninstall_pass) and, for one cluster, what a
 * host's applied revision triggers. */
int svc_uninstall_follow(struct svc *sv, const char *cluster_id);
int svc_uninstall_pass(struct svc *sv);
