/* Operands (DESIGN §3, §9): custom resources of the kinds a
 * cluster's operators own. Two sources: those a creator applies through
 * musterd (kept in the store, carried by the payload after the operators'
 * bundles), and those the node agents find in their manifest directories
 * that musterd did not write (reported with each revision they apply). */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "manifest.h"
#include "model.h"
#include "resolve.h"
#include "svc/svc.h"

/* A kind one of the cluster's operators owns (a GVK its bundle provides). */
struct owned_kind {
        const char *package;
        const char *group, *version, *kind;
};
struct owned_kinds {
        struct owned_kind *v;
        size_t n;
        void *res; /* what the strings point into */
};
void owned_kinds_free(struct owned_kinds *k);
/* The kinds c's operators own: every bundle its resolution installs or
 * keeps. -EDOM with err when the operators do not resolve. */
int operands_owned(struct svc *sv, const struct cluster *c, struct owned_kinds *out, char *err, size_t errlen);
/* The package owning (group, kind) in k; NULL: none. */
const char *owned_by(const struct owned_kinds *k, const char *group, const char *kind);

#define OPERANDS_MAX_FILES 1000

/* Apply files (YAML or JSON, several documents each) to cluster_id: every
 * object must be of a kind one of its operators owns (-EINVAL naming the
 * first that is not: nothing stored then; -E2BIG for a file past a
 * manifest limit or whose aliases expand too far). An installed cluster
 * gets the next payload revision. *out {"items": [operand...], "payload_revision"?}. */
int svc_operands_apply(struct svc *sv, const char *cluster_id, const struct catalog_file *files, size_t n,
                       const char *by, json_object **out, char *err, size_t errlen);
/* {"items": [managed..., found...], "owned_kinds": [...]}. */
int svc_operands_list(struct svc *sv, const char *cluster_id, json_object **out, char *err, size_t errlen);
/* Delete a managed operand (by id); an installed cluster gets the next
 * payload revision. -ENOENT. */
int svc_operand_delete(struct svc *sv, const char *cluster_id, const char *id, const char *by, char *err,
                       size_t errlen);
