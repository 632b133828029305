/* What users do with a cluster's operators (DESIGN §8): subscribe and
 * unsubscribe, list the subscriptions with their phases and the bundles
 * each brought in, preview a resolution, upgrade. A change to an installed
 * cluster builds its next payload revision, which the node agents apply. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "opresolve.h"
#include "svc.h"

struct op_subscribe {
        const char *package;
        const char *channel; /* NULL: default channel */
        const char *catalog; /* NULL: any */
        const char *version_range; /* NULL: any */
        bool skip_dependencies;
        bool cleanup; /* cleanup.enabled (DESIGN §9) */
};

/* Subscribe cluster_id to a package (by owner). *out: the subscription
 * object (the API's), with "payload_revision" when the cluster is installed
 * and a new revision was built. A subscription that does not resolve is
 * kept (phase Failed, the cluster's OperatorsResolvable False). -ENOENT no
 * cluster, or no catalog has the package/channel/catalog (err says which);
 * -EINVAL a bad name or range; -EEXIST already subscribed; -EBUSY an install
 * in progress; -EDQUOT too many. */
int operators_subscribe(struct svc *sv, const char *cluster_id, const struct op_subscribe *in, const char *owner,
                        json_object **out, char *err, size_t errlen);

/* Unsubscribe; prune removes the dependencies nothing needs any more.
 * *out: {"plan", "payload_revision"?}. -ENOENT, -EBUSY, -EDOM (what is left
 * does not resolve: nothing changed). */
int operators_unsubscribe(struct svc *sv, const char *cluster_id, const char *package, bool prune, const char *by,
                          json_object **out, char *err, size_t errlen);

/* Set cleanup.enabled of the cluster's subscription to package; *out the
 * subscription as listed. -ENOENT. */
int operators_set_cleanup(struct svc *sv, const char *cluster_id, const char *package, bool enabled, const char *by,
                          json_object **out, char *err, size_t errlen);

/* {"items": [subscription...], "condition": OperatorsResolvable}. */
int operators_list(struct svc *sv, const char *cluster_id, json_object **out, char *err, size_t errlen);

/* The plan for the cluster's subscriptions with o's changes, nothing
 * stored. */
int operators_preview(struct svc *sv, const char *cluster_id, const struct op_options *o, json_object **out,
                      char *err, size_t errlen);

/* Upgrade the installed cluster's packages (o->upgrade or o->upgrade_all)
 * along their channels' upgrade graphs; *out {"plan", "payload_revision"?}.
 * -EBUSY not installed or installing; -EDOM does not resolve (err
 * explains). */
int operators_upgrade(struct svc *sv, const char *cluster_id, const struct op_options *o, const char *by,
                      json_object **out, char *err, size_t errlen);
