/* A cluster and its release (DESIGN §6-7): the capabilities status
 * computed from the spec and the release, the ImplicitlyEnabledCapabilities
 * condition, the upgrade rule, and the cluster's signed payload revisions.
 * One builder serves install, day-2 changes and upgrades. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capability.h"
#include "model.h"
#include "svc/svc.h"
#include "svc/opresolve.h"
#include "store/store.h"

/* A release as the store has it, with its manifests when asked. */
struct loaded_release {
        struct release_record r;
        struct manifest_list ms;
        bool loaded;
        bool have_manifests;
};

/* -ENOENT: not imported. lr is always freeable. */
int release_load(struct svc *sv, const char *version, bool with_manifests, struct loaded_release *lr);
void svc_release_unload(struct loaded_release *lr);

/* Recompute c's capabilities status under lr from `spec` (stored into
 * c->cap_spec), with c's current enabled capabilities as "previously
 * enabled" when keep_previous, and also_enable (may be NULL) forced on; the
 * condition replaces c's (its last_transition_time kept when its status
 * stays). -EINVAL with err naming the unknown set or capability. */
int revisions_compute(const struct loaded_release *lr, struct cluster *c, const struct cluster_cap_spec *spec,
                      bool keep_previous, const struct strv *also_enable, char *err, size_t errlen);

/* The upgrade rule: capabilities that must be enabled because a manifest
 * c got under `old` is excluded under `nw` only by a disabled capability
 * (cap_upgrade_implicit with c's enabled set and feature set). Both need
 * their manifests. */
int revisions_upgrade_implicit(const struct loaded_release *old, const struct loaded_release *nw,
                               const struct cluster *c, struct strv *also_enable);

/* Build and sign revision `revision` of c's payload: lr's manifests
 * filtered with c's enabled capabilities, the release's default profile and
 * c's feature set; the OS image from the release's url, or musterd's
 * MUSTER_OS_IMAGE_PATH_FMT for a path release; the cluster's settings and
 * each bound host's part (payload.h), with roles[] (may be NULL) as install
 * assigns them before they are stored. Not stored. lr needs its manifests.
 * err says what failed. */
int revisions_build_payload(struct svc *sv, const struct cluster *c, const struct loaded_release *lr,
                            const struct store_host_role *roles, size_t n_roles, int64_t revision,
                            const struct op_options *ops, struct payload_record *out, char *err, size_t errlen);

/* Does c (as given: its release, enabled set, feature set, settings and
 * bound hosts as stored) yield a payload other than its stored revision
 * c->payload_revision? 1 yes, 0 no, -errno. */
int revisions_payload_differs(struct svc *sv, const struct cluster *c, const struct loaded_release *lr,
                              const struct op_options *ops, char *err, size_t errlen);

/* The event of a new payload revision. */
void revisions_payload_event(struct svc *sv, const struct cluster *c, const struct payload_record *p);

/* Store p as c's next revision and record the event. -ESTALE when another
 * revision won the race. */
int revisions_store_payload(struct svc *sv, const struct cluster *c, struct payload_record *p);


/* Build, sign and store c's next payload revision when its content (as c is
 * now, with ops for its operators; NULL: keep what is installed, no
 * upgrade) differs from the stored one. 1 with c->payload_revision the new
 * revision; 0 when nothing changed; -errno with err (or *what naming the
 * store's part): -ENOPKG release not imported, -EDOM the operators do not
 * resolve (err explains), -ENOENT a subscription names what no catalog has,
 * -ESTALE another revision won the race. */
int revisions_next_payload(struct svc *sv, struct cluster *c, const struct op_options *ops, char *err, size_t errlen,
                           const char **what);

/* A condition {type, status, reason?, message?} as a model condition
 * replacing c's of the same type; the transition time moves only when the
 * status does. 1 when it changed anything, 0 when c had it as it is;
 * -EINVAL, -ENOMEM. */
int revisions_set_condition(struct cluster *c, json_object *cond);
