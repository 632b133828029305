/* Releases (DESIGN §3, §6-7): import of a parsed release.yaml and its
 * manifests, reading, deletion, the filter preview, the OS image of a path
 * release opened from the releases folder, and musterd's public signing
 * key. The handlers have parsed the request and authorized the caller. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "capability.h"
#include "svc/revisions.h"
#include "manifest.h"
#include "release.h"
#include "svc/svc.h"

/* Release `version` (with its manifests when asked) into *lr (always
 * freeable with svc_release_unload). 0, or -ENOENT with err when it is not
 * imported; store errors (err empty). */
int svc_release_get(struct svc *sv, const char *version, bool with_manifests, struct loaded_release *lr, char *err,
                    size_t errlen);

/* A page of the imported releases (without manifests). Store errors. */
int svc_release_list(struct svc *sv, const struct list_page *pg, struct release_record_list *out);
void svc_release_list_free(struct release_record_list *l);

/* Import release `info` with its manifests `ms` (parsed from n_files files,
 * their paths unique), imported by `by`. Manifests naming a capability the
 * release does not declare are never installed: they are warnings
 * ({file, document, capability, message}; *warnings, the caller's), or with
 * `strict` a refusal. A path release's OS image must be in the releases
 * folder as release.yaml describes it. Then clusters waiting for this
 * release get their capabilities status. out (always freeable with
 * svc_release_unload) gets the release as stored. 0, or -errno with err:
 * -EINVAL the strict refusal or the OS image, -EEXIST imported already;
 * -ENOMEM; store errors (err empty). */
int svc_release_import(struct svc *sv, const struct release_info *info, const struct manifest_list *ms,
                       size_t n_files, bool strict, const char *by, struct loaded_release *out,
                       json_object **warnings, char *err, size_t errlen);

/* Delete release `version` (by `by`). 0, or -errno with err: -EBUSY a
 * cluster's release, -ENOENT not imported; store errors (err empty). */
int svc_release_delete(struct svc *sv, const char *version, const char *by, char *err, size_t errlen);

/* What a preview asks for: NULL members take the release's default profile,
 * the default feature set and baseline; the lists may be empty. */
struct svc_release_query {
        const char *profile;
        const char *feature_set;
        const char *baseline;
        const struct strv *additional;
        const struct strv *exclude; /* manifest ids left out */
};

/* A preview: the capabilities the query enables, and each manifest's
 * verdict (res[i] for lr's manifest i, n of them). */
struct svc_release_preview {
        struct cap_status caps;
        struct filter_result *res;
        size_t n;
        const char *profile; /* filtered for: the query's, else the release's default (may be NULL) */
};

/* Filter release lr (loaded with its manifests) as a cluster with query q's
 * settings would get it, into *out (always freeable). 0, or -errno with
 * err: -EINVAL an unknown baseline or capability; -EIO. */
int svc_release_preview(struct svc *sv, const struct loaded_release *lr, const struct svc_release_query *q,
                        struct svc_release_preview *out, char *err, size_t errlen);
void svc_release_preview_free(struct svc_release_preview *p);

/* The OS image of path release `version`, opened for reading: the fd (the
 * caller's to close), its size in *size. -errno with err: -ENOENT not
 * imported, served from a URL, or gone from the releases folder (the reason
 * logged: it may name the folder's files); -ESTALE its size is no longer
 * the imported one; store errors (err empty). */
int svc_release_os_image(struct svc *sv, const char *version, uint64_t *size, char *err, size_t errlen);

/* musterd's public signing key as PEM text (*pem, the caller's). 0, or
 * -errno with err. */
int svc_signing_key(struct svc *sv, char **pem, char *err, size_t errlen);
