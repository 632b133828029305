/* A cluster's operators resolved (DESIGN §8): its subscriptions against the
 * catalogs as of now, starting from the bundles its current payload
 * revision installed. The payload builder, the cluster validation and the
 * operator services all resolve through here. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "resolve.h"
#include "records.h"
#include "svc/svc.h"

struct svc_catalog_set;

/* What to resolve besides the cluster's subscriptions as stored. */
struct op_options {
        const char *const *upgrade; /* packages to upgrade */
        size_t n_upgrade;
        bool upgrade_all;
        bool prune;
        const struct resolve_subscription *extra; /* a preview's added subscriptions */
        size_t n_extra;
        const char *without; /* a package whose subscription is left out (unsubscribe) */
        /* Nothing subscribed counts as none without reading the payload
         * (the validation's quick path: bundles kept from an earlier
         * subscription are not checked then). */
        bool subscribed_only;
};

struct op_resolution {
        bool none; /* nothing subscribed, nothing installed: no operators at all */
        struct subscription_record_list subs;
        struct resolve_subscription *rsubs;
        size_t n_rsubs;
        json_object *payload; /* the current revision's payload object */
        struct resolve_installed *installed; /* strings in payload */
        size_t n_installed;
        struct svc_catalog_set *set; /* what the plan's bundles point into */
        struct resolve_plan plan;
};

/* Resolve c's operators (o may be NULL). 0 with out->none, or with
 * out->plan (out->plan.ok false: its problems say why); -errno with err: a
 * subscription naming what no catalog has any more (-ENOENT), store and
 * memory errors. out is freeable in every case. */
int opresolve_cluster(struct svc *sv, const struct cluster *c, const struct op_options *o, struct op_resolution *out,
                      char *err, size_t errlen);
void opresolve_free(struct op_resolution *r);

/* The problems of a plan that does not resolve as one text: each problem,
 * then "ways out: ...". malloc'd; NULL on ENOMEM. */
char *opresolve_problems_text(const struct resolve_plan *p);

/* The OperatorsResolvable condition of a cluster as JSON {type, status,
 * reason, message} from a resolution (NULL on ENOMEM). */
json_object *opresolve_condition(const struct op_resolution *r);
