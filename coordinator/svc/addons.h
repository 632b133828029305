/* Add-ons across clusters (DESIGN §10): AddonProxies an infra
 * admin declares, the AddonRelease inventory musterd keeps per selected
 * cluster, and the reconciler that installs, updates and removes releases
 * through the clusters' payloads (DESIGN §6 part 3), in stages.
 *
 * The reconciler (svc_addon_reconcile) runs after every change that can
 * move a release (a proxy created, changed, deleted or acted on; a
 * cluster's labels or facts changed) and as the `addons` controller, which
 * also follows the agents' reports. One pass at a time per process. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "manifest.h"
#include "model.h"
#include "records.h"
#include "svc/svc.h"

/* The proxy as answered: its spec, rollout state, live counts of its
 * releases and its conditions. NULL on ENOMEM. */
json_object *svc_addon_proxy_json(struct svc *sv, const struct addon_proxy_record *p);

/* Create a proxy from a client's spec. Every cluster it selects must render
 * values that are YAML (-EINVAL naming the cluster). The first releases are
 * made before it returns. -EEXIST: the name is taken. */
int svc_addon_proxy_create(struct svc *sv, json_object *spec, const char *by, struct addon_proxy_record *out,
                           char *err, size_t errlen, const char **what);
/* By id or name. -ENOENT. */
int svc_addon_proxy_get(struct svc *sv, const char *key, struct addon_proxy_record *out);
int svc_addon_proxy_list(struct svc *sv, struct addon_proxy_record_list *out);
/* Apply a PATCH (addon_spec_patch): a change of what it renders is a new
 * generation, rolled out in stages; the rollout settings alone are not. */
int svc_addon_proxy_patch(struct svc *sv, const char *key, json_object *patch, const char *by,
                          struct addon_proxy_record *out, char *err, size_t errlen, const char **what);
/* Delete: its releases are removed from their clusters first. 1 when the
 * proxy is gone already, 0 when it is being deleted (out: as it is now). */
int svc_addon_proxy_delete(struct svc *sv, const char *key, const char *by, struct addon_proxy_record *out,
                           char *err, size_t errlen, const char **what);

enum addon_action { ADDON_ACTION_PAUSE, ADDON_ACTION_RESUME, ADDON_ACTION_ROLLBACK, _ADDON_ACTION_MAX };
const char *svc_addon_action_to_string(enum addon_action a);
/* pause, resume (forgives the failures so far), rollback (the spec before
 * the last change comes back, to every cluster at once; -EALREADY when
 * there is none). */
int svc_addon_proxy_action(struct svc *sv, const char *key, enum addon_action a, const char *by,
                           struct addon_proxy_record *out, char *err, size_t errlen, const char **what);

/* Releases, filtered by proxy (id or name) and cluster id (either NULL),
 * as JSON objects (svc_addon_release_json) into a JSON array. */
int svc_addon_release_list(struct svc *sv, const char *proxy_key, const char *cluster_id,
                           const struct list_page *pg, json_object **out, int64_t *next_after);

/* One pass: every proxy's releases brought toward its spec, within its
 * rollout's limits; the agents' reports followed. How many releases
 * changed, or -errno. */
int svc_addon_reconcile(struct svc *sv);

/* A host of cluster_id failed to apply payload revision rev: the releases
 * of the cluster rolling in that revision or before fail, counting against
 * their rollouts. */
void svc_addon_apply_failed(struct svc *sv, const char *cluster_id, const char *host_id, int64_t rev,
                            const char *why);
/* What a host's node agent found in its manifest directory that muster did
 * not write (the apply step's "found" member): kept for the next pass. */
void svc_addon_found(struct svc *sv, const struct host *h, json_object *found);

/* Before a PATCH of cluster c with `in` (its present members): every proxy
 * that would select the cluster as changed must render YAML values for it.
 * -EINVAL naming the proxy and the cluster. */
int svc_addon_check_cluster(struct svc *sv, const struct cluster *c, const struct cluster *in, char *err,
                            size_t errlen);
