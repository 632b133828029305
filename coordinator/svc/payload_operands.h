/* The operands of a cluster's payload (DESIGN §6 part 2): the managed
 * operands as manifests after every operator bundle, each numbered as the
 * bundle of the operator that owns its kind. Its own file so that the
 * payload builder (revisions.c) and the operand services (operands.c),
 * which build payloads, do not call each other. */
#pragma once
#include <stddef.h>

#include "manifest.h"
#include "model.h"
#include "resolve.h"
#include "svc/svc.h"

/* c's managed operands appended to *out; plan (may be NULL) orders them. */
int operands_manifests(struct svc *sv, const struct cluster *c, const struct resolve_plan *plan,
                       struct manifest_list *out, char *err, size_t errlen);
