/* What users do with a cluster's operators (DESIGN §8): subscribe and
 * unsubscribe, list the subscriptions with their phases and the bundles
 * each brought in, preview a resolution, upgrade. A change to an installed
 * cluster builds its next payload revision, which the node agents apply. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "svc/opresolve.h"
#include "svc/svc.h"

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
int svc_operators_subscribe(struct svc *sv, const char *cluster_id, const struct op_subscribe *in, const char *owner,
                            json_object **out, char *err, size_t errlen);

/* {"items": [subscription...], "condition": OperatorsResolvable}. */
int svc_operators_list(struct svc *sv, const char *cluster_id, json_object **out, char *err, size_t errlen);

/* The plan for the cluster's subscriptions with o's changes, nothing
 * stored. */
int svc_operators_preview(struct svc *sv, const char *cluster_id, const struct op_options *o, json_object **out,
                          char *err, size_t errlen);

/* Upgrade the installed cluster's packages (o->upgrade or o->upgrade_all)
 * along their channels' upgrade graphs; *out {"plan", "payload_revision"?}.
 * -EBUSY not installed or installing; -EDOM does not resolve (err
 * explains). */
int svc_operators_upgrade(struct svc *sv, const char *cluster_id, const struct op_options *o, const char *by,
                          json_object **out, char *err, size_t errlen);

/* ---- shared with the uninstall (uninstall.c) ---------------------------- */

/* The cluster by id or name: -ENOENT with err. */
int operators_load_cluster(struct svc *sv, const char *id, struct cluster *c, char *err, size_t errlen);
/* -EBUSY with err while c installs. */
int operators_refuse_installing(const struct cluster *c, char *err, size_t errlen);
/* A name member: 1 to 253 bytes, no control character; -EINVAL. */
int operators_check_name(const char *what, const char *v, bool required, char *err, size_t errlen);
/* The plan of c with o, which must resolve (-EDOM with the words). */
int operators_dry_run(struct svc *sv, const struct cluster *c, const struct op_options *o, json_object **plan,
                      char *err, size_t errlen);
/* After a change: an installed cluster gets its next payload revision
 * (*rev, 0 when its content did not change); any other is validated
 * again. */
int operators_apply_change(struct svc *sv, struct cluster *c, const struct op_options *o, int64_t *rev, char *err,
                           size_t errlen);
/* {"plan", "payload_revision"?} (takes *plan). */
int operators_change_reply(json_object **plan, int64_t rev, json_object **out, char *err, size_t errlen);
/* The subscription to package as listed, with "payload_revision" when rev
 * > 0; NULL on failure (err). */
json_object *operators_subscription_reply(struct svc *sv, const char *cluster_id, const char *package, int64_t rev,
                                          char *err, size_t errlen);
