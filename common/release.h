/* A release's own file, release.yaml (DESIGN §3, §7): version, OS image,
 * known capabilities, capability sets and the default profile. Parsed with
 * libyaml; JSON both ways for the store and the API. Pure. */
#pragma once
#include <json-c/json.h>
#include <stdint.h>

#include "strv.h"

#define RELEASE_MAX_VERSION 64          /* [A-Za-z0-9._+-], starts alphanumeric */
#define RELEASE_MAX_CAPABILITIES 256
#define RELEASE_MAX_SETS 64
#define RELEASE_DEFAULT_PROFILE "self-managed-high-availability"
#define RELEASE_DEFAULT_ROOT_LABEL "root"
#define CAP_SET_NONE "None"
#define CAP_SET_CURRENT "vCurrent"

struct release_os_image {
        char *url;         /* http(s) URL, or NULL when `path` is set */
        char *path;        /* a file on the coordinator's machine, or NULL */
        char *sha256;      /* 64 lower-case hex */
        int64_t size;      /* bytes, > 0 */
        char *root_label;  /* the root file system's label; default "root" */
};

struct cap_set {
        char *name;        /* "None", "v4.11", "vCurrent", ... */
        struct strv caps;  /* sorted, unique, each a known capability */
};

struct release_info {
        char *version;
        struct release_os_image os_image;
        struct strv known_capabilities;  /* sorted, unique */
        struct cap_set *sets;            /* in file order */
        size_t n_sets;
        char *default_profile;           /* default RELEASE_DEFAULT_PROFILE */
};

void release_info_init(struct release_info *r);
void release_info_free(struct release_info *r);

/* Parse release.yaml:
 *   version: "4.16.0"
 *   os_image: {url | path, sha256, size, root_label?}
 *   known_capabilities: [..]
 *   capability_sets: {None: [], v4.11: [..], vCurrent: [..]}
 *   default_profile: self-managed-high-availability   (optional)
 * Exactly one of url/path. A set naming an unknown capability, a duplicate,
 * or a bad field is -EINVAL with a reason naming it. "None" (empty) and
 * "vCurrent" (all known) are added when the file does not define them.
 * Unknown top-level keys are refused (a typo should not pass silently). */
int release_info_parse_yaml(const char *data, size_t len, struct release_info *out, char *err,
                            size_t errlen);

/* {version, os_image{url?, path?, sha256, size, root_label}, known_capabilities[],
 * capability_sets{name: [..]}, default_profile}. NULL on ENOMEM. */
json_object *release_info_to_json(const struct release_info *r);
/* The inverse, with the same checks as the YAML parser. */
int release_info_from_json(json_object *o, struct release_info *out, char *err, size_t errlen);

/* The set named `name`, or NULL. */
const struct cap_set *release_cap_set(const struct release_info *r, const char *name);
