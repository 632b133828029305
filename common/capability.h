/* Capabilities and the release filter (DESIGN §6-7), pure:
 * - which capabilities a cluster has enabled from its spec, what it had
 *   before and what an upgrade forces on;
 * - which manifests of a release a cluster gets, in OpenShift's filter order
 *   with OpenShift's annotation keys, each excluded one with its reason. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "manifest.h"
#include "release.h"
#include "strv.h"

#define CAP_ANN_EXCLUDE_PREFIX "exclude.release.openshift.io/"
#define CAP_ANN_FEATURE_SET "release.openshift.io/feature-set"
#define CAP_ANN_INCLUDE_PREFIX "include.release.openshift.io/"
#define CAP_ANN_CAPABILITY "capability.openshift.io/name"
#define CAP_DEFAULT_FEATURE_SET "Default"
#define CAP_CONDITION_TYPE "ImplicitlyEnabledCapabilities"

/* ---- capabilities ------------------------------------------------------ */

struct cap_spec {
        char *baseline;         /* NULL: vCurrent */
        struct strv additional; /* additional_enabled_capabilities */
};
void cap_spec_init(struct cap_spec *s);
void cap_spec_free(struct cap_spec *s);

struct cap_status {
        struct strv enabled;    /* sorted, unique */
        struct strv known;      /* the release's, sorted */
        struct strv implicit;   /* enabled but neither in the baseline set nor
                                 * in additional: kept from before or forced by
                                 * an upgrade; sorted */
};
void cap_status_init(struct cap_status *s);
void cap_status_free(struct cap_status *s);

/* 0, or -EINVAL with err naming the unknown set ("unknown capability set
 * \"v9\"; known sets: None, v4.11, vCurrent") or capability ("unknown
 * capability \"Foo\"; known: ..."). */
int cap_validate_spec(const struct release_info *r, const struct cap_spec *spec, char *err, size_t errlen);

/* enabled = baseline set ∪ additional ∪ previously_enabled ∪ also_enable:
 * of set, additional and also_enable only capabilities the release knows,
 * but every previously enabled one, known or not (once enabled, enabled for
 * good: an upgrade to a release that dropped it keeps it, and it is in
 * implicit). previously/also may be NULL.
 * The spec must have passed cap_validate_spec (-EINVAL otherwise). */
int cap_compute(const struct release_info *r, const struct cap_spec *spec,
                const struct strv *previously_enabled, const struct strv *also_enable,
                struct cap_status *out);

/* The cluster condition for st: {type: ImplicitlyEnabledCapabilities,
 * status: "True", reason: CapabilitiesImplicitlyEnabled, message: "The
 * following capabilities could not be disabled: A, B"} when st->implicit is
 * not empty, else {status: "False", reason: AsExpected, message:
 * "Capabilities match configured spec"}. NULL on ENOMEM. */
json_object *cap_condition_json(const struct cap_status *st);

/* ---- the release filter ------------------------------------------------ */

enum filter_reason {
        FILTER_INCLUDED,
        FILTER_EXCLUDED_ID,          /* exclude.release.openshift.io/<id>="true", id excluded */
        FILTER_FEATURE_SET,          /* feature-set annotation lacks the cluster's set */
        FILTER_PROFILE,              /* include.* annotations, none "true" for the profile */
        FILTER_CAPABILITY_UNKNOWN,   /* names a capability the release does not know */
        FILTER_CAPABILITY_DISABLED,  /* names a known capability that is not enabled */
        _FILTER_REASON_MAX,
};
/* "included", "excluded-id", "feature-set", "profile",
 * "capability-unknown", "capability-disabled". */
const char *filter_reason_to_string(enum filter_reason r);

struct filter_context {
        const char *profile;              /* NULL: RELEASE_DEFAULT_PROFILE */
        const char *feature_set;          /* NULL or "": CAP_DEFAULT_FEATURE_SET */
        const struct strv *exclude_ids;   /* may be NULL */
        const struct strv *enabled;       /* enabled capabilities */
        const struct strv *known;         /* the release's known capabilities */
};

struct filter_result {
        enum filter_reason reason;
        char *message;             /* NULL when included, else a sentence naming
                                    * the annotation and value that excluded it */
        struct strv missing;       /* FILTER_CAPABILITY_DISABLED: the capabilities
                                    * not enabled (sorted); empty otherwise */
};
void filter_result_free(struct filter_result *r);

/* One manifest, rules in DESIGN §6 order; the first failing rule decides.
 * Capability annotation: names split on '+', surrounding blanks trimmed,
 * an empty name is unknown, and so is a name neither in known nor in
 * enabled (an enabled one the release dropped is not). An unknown name wins
 * over a disabled one. */
int filter_manifest(const struct manifest *m, const struct filter_context *ctx, struct filter_result *out);

/* Every manifest of ms; *out gets ms->n results (caller frees each and the
 * array). */
int filter_release(const struct manifest_list *ms, const struct filter_context *ctx,
                   struct filter_result **out);

/* The names in m's capability annotation (split on '+', trimmed; empty
 * ones skipped) that `known` does not hold, appended to out once each: what
 * a release import warns about (a manifest for a capability release.yaml
 * does not declare is never installed). 0 or -ENOMEM. */
int cap_undeclared(const struct manifest *m, const struct strv *known, struct strv *out);

/* DESIGN §7 upgrade rule: the capabilities to enable implicitly. For each
 * manifest of new_ms whose only failure under new_ctx is
 * FILTER_CAPABILITY_DISABLED and whose object (manifest_same_object) was
 * included by old_ms under old_ctx, its missing capabilities. Appended to
 * out sorted and unique. */
int cap_upgrade_implicit(const struct manifest_list *old_ms, const struct filter_context *old_ctx,
                         const struct manifest_list *new_ms, const struct filter_context *new_ctx,
                         struct strv *out);
