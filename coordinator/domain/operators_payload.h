/* Operators in the cluster's payload (DESIGN §6 part 2, §8), pure: a
 * resolved plan's bundles as manifests in dependency order, the payload's
 * "operators" member that records what a revision installed, and that
 * member read back as what the next resolution starts from. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "manifest.h"
#include "resolve.h"

/* Manifest directory names of operator bundles start with this, after the
 * release's ("0000_..." to "0999_..."), so that a directory applied in name
 * order applies the release first, then each bundle in dependency order. */
#define OPERATORS_FILE_PREFIX "9000_operators_"
#define OPERATORS_MAX 10000 /* bundles in one payload */
/* Operands applied through musterd (DESIGN §6 part 2) come after every
 * bundle, each numbered as its operator's bundle. */
#define OPERANDS_FILE_PREFIX "9001_operands_"

/* PREFIX<NNN>_<a>_<name stem><name's extension> with characters outside
 * [A-Za-z0-9._-] as '-', cut to fit a file name keeping the extension. */
void operators_file_name(char *out, size_t n, const char *prefix, size_t place, const char *a, const char *name);

/* Append the manifests of every bundle the plan installs, upgrades or keeps,
 * in the plan's order, to *out: each bundle manifest parsed with
 * manifest_parse_file() under the file name
 * "9000_operators_<NNN>_<bundle>_<manifest name>" (NNN the bundle's place,
 * characters outside [A-Za-z0-9._-] as '-', cut to fit a file name while
 * keeping the extension). 0; -EINVAL with err naming the bundle and file
 * for a manifest that is not one; -E2BIG past the limits; -ENOMEM. */
int operators_manifests(const struct resolve_plan *p, struct manifest_list *out, char *err, size_t errlen);

/* [{package, bundle, version, catalog, channel?, dependency, subscription?}]
 * for the bundles the plan leaves installed, in its order; subscription is
 * the package of the subscription (of subs, the request's) that brought the
 * bundle in. What the revision installs and nothing else: no words that
 * depend on how it was reached, so that the same installed set gives the
 * same payload. NULL on ENOMEM. */
json_object *operators_member(const struct resolve_plan *p, const struct resolve_subscription *subs, size_t n_subs);

/* The "operators" member of a payload object read back as installed
 * bundles; strings point into payload. No member: 0 bundles (a payload
 * built before operators, or with none). -EINVAL for a member that is not
 * a list of such objects; -E2BIG past OPERATORS_MAX; -ENOMEM. */
int operators_installed(json_object *payload, struct resolve_installed **out, size_t *n);
