/* Part 3 of a cluster's payload (DESIGN §6): one HelmChart manifest per
 * add-on release kept for the cluster. Its own file so that the payload
 * builder (revisions.c) and the reconciler (addons.c), which builds
 * payloads, do not call each other. */
#pragma once
#include <stddef.h>

#include "manifest.h"
#include "model.h"
#include "svc/svc.h"

/* c's releases (not removing, not held by an out-of-band release) as
 * HelmChart manifests appended to *out, in proxy name order. */
int addons_manifests(struct svc *sv, const struct cluster *c, struct manifest_list *out, char *err, size_t errlen);
