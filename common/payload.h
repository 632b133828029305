/* The install payload (DESIGN §6): a cluster's filtered manifests and its OS
 * image reference as canonical JSON, its SHA-256 digest and the
 * coordinator's ECDSA P-256 signature; and the agent's check of all that
 * before it touches a disk. Pure (no I/O).
 *
 * Payload object (canonical JSON; members sorted):
 *   {cluster_id, revision, release_version, enabled_capabilities[],
 *    os_image{url, sha256, size, root_label},
 *    manifests[{path, file, group, version, kind, namespace?, name, content}],
 *    settings?{cluster_name, base_dns_domain?, api_vip?, ingress_vip?,
 *              pull_secret?},
 *    hosts?{"<host id>": {role, hostname?, ntp_sources[], ssh_authorized_key?}},
 *    operators?[{package, bundle, version, catalog, channel?, dependency,
 *                subscription?}],
 *    deletions?[{group, version?, kind, namespace?, name}]}
 * manifests are in release order (file name, then document index), then the
 * operator bundles' (named 9000_operators_NNN_..., in dependency order),
 * the operands applied through musterd (9001_operands_NNN_<package>_...,
 * NNN their operator's place), and one HelmChart per add-on release
 * (9500_addon_<proxy>.yaml, in proxy name order);
 * operators records what the revision installed (coordinator/domain/
 * operators_payload.h), the start of the next resolution.
 * deletions names objects the agents delete from the out-of-band files of
 * their manifest directories (files muster did not write: operands created
 * on the cluster, DESIGN §9); group "" is the core group, no namespace a
 * cluster-scoped object. The first install ignores it.
 * settings and hosts are what each host's installed system is set up with
 * (payload_host_settings() joins them for one host); a payload without them
 * was built before they existed.
 * Envelope, as GET /clusters/{c}/payload/{rev} serves it:
 *   {"cluster_id":..,"digest":"sha256:<hex>","payload":<canonical bytes>,
 *    "revision":N,"signature":"<base64url of r||s>"}
 * The signature is crypto_sign_digest() over SHA-256(canonical bytes). */
#pragma once
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto.h"
#include "manifest.h"
#include "release.h"
#include "strv.h"

#define PAYLOAD_MAX_ENVELOPE (256 * 1024 * 1024)
#define PAYLOAD_MAX_MANIFESTS 20000
#define PAYLOAD_DIGEST_LEN (7 + 2 * CRYPTO_SHA256_LEN)  /* "sha256:" + hex, no NUL */

/* The payload object. os_image_url is the URL agents fetch the image from
 * (the release's url, or the coordinator's path for it); img gives sha256,
 * size and root_label. included: the manifests to carry. NULL on ENOMEM. */
struct payload_host {
        const char *host_id;
        const char *role;                 /* "master" | "worker" */
        const char *hostname;             /* NULL: none */
        const struct strv *ntp_sources;   /* NULL or empty: none */
        const char *ssh_authorized_key;   /* NULL: none; one key a line */
};
struct payload_settings {
        const char *cluster_name;
        const char *base_dns_domain;      /* NULL members are left out */
        const char *api_vip;
        const char *ingress_vip;
        const char *pull_secret;
        const struct payload_host *hosts;
        size_t n_hosts;
};
/* settings NULL: a payload without settings and hosts. */
json_object *payload_build(const char *cluster_id, int64_t revision, const char *release_version,
                           const char *os_image_url, const struct release_os_image *img,
                           const struct strv *enabled_capabilities,
                           const struct manifest *const *included, size_t n_included,
                           const struct payload_settings *settings);

struct payload_signed {
        char *canonical;                       /* NUL-terminated */
        size_t len;
        char digest[PAYLOAD_DIGEST_LEN + 1];   /* "sha256:<hex>" */
        char *signature;                       /* base64url of r||s, NUL-terminated */
};
void payload_signed_free(struct payload_signed *s);

/* Canonicalise, digest and sign with a private key. -ENOKEY for a public
 * key, -EINVAL for what canonjson refuses, -ENOMEM. */
int payload_sign(json_object *payload, const struct crypto_key *key, struct payload_signed *out);

/* The envelope text (malloc'd, NUL-terminated), canonical bytes embedded
 * verbatim. A high-S signature (a revision signed before signing was low-S)
 * goes out as its low-S twin, equally valid and the only one agents accept.
 * NULL on ENOMEM. */
char *payload_envelope(const char *cluster_id, int64_t revision, const char *digest,
                       const char *signature, const char *canonical, size_t canonical_len);

/* The agent's check, before anything is written: parse the envelope,
 * canonicalise its payload again, compare the SHA-256 with "digest", verify
 * "signature" with pub, and check that the payload's cluster_id and revision
 * are the envelope's and the expected ones (expect_cluster NULL / expect_rev
 * 0: any). 0 and *payload (owned) on success; -EBADMSG with err saying which
 * check failed ("payload digest does not match", "payload signature is not
 * the coordinator's", "payload is for revision 2, expected 3", ...); -EINVAL
 * for an envelope that is not one; -E2BIG past PAYLOAD_MAX_ENVELOPE. */
int payload_verify(const char *envelope, size_t len, const struct crypto_key *pub,
                   const char *expect_cluster, int64_t expect_revision, json_object **payload,
                   char *err, size_t errlen);

/* A verified payload's manifest files, pointing into `payload` (valid while
 * it lives). Every path must be a plain file name (no '/', not starting with
 * '.', at most MANIFEST_MAX_FILE_NAME bytes) and unique. -EINVAL with err. */
struct payload_file {
        const char *path;
        const char *content;
        size_t len;
};
int payload_files(json_object *payload, struct payload_file **out, size_t *n, char *err, size_t errlen);

/* The payload's os_image; strings point into `payload`. */
struct payload_image {
        const char *url;
        const char *sha256;
        int64_t size;
        const char *root_label;
};
int payload_image(json_object *payload, struct payload_image *out, char *err, size_t errlen);

/* One host's part of a verified payload, joined with the cluster's
 * settings; strings point into `payload`. Every value is checked before an
 * agent writes it into a system's files: the role is master or worker, the
 * hostname and domain are DNS names (dns_name_valid), the VIPs IP
 * addresses, NTP sources host names or addresses with or without a port
 * (ntp_source_split), the SSH keys printable
 * lines, the pull secret a JSON object. */
#define PAYLOAD_MAX_NTP_SOURCES 16
#define PAYLOAD_MAX_SSH_KEYS (64 * 1024)
#define PAYLOAD_MAX_PULL_SECRET (64 * 1024)
struct payload_host_view {
        const char *host_id;
        const char *role;
        const char *hostname;             /* NULL: none */
        const char *cluster_id;
        const char *cluster_name;
        const char *base_dns_domain;      /* NULL: none */
        const char *api_vip;              /* NULL: none */
        const char *ingress_vip;          /* NULL: none */
        const char *pull_secret;          /* NULL: none */
        const char *ssh_authorized_key;   /* NULL: none */
        const char *ntp_sources[PAYLOAD_MAX_NTP_SOURCES];
        size_t n_ntp_sources;
};
/* 0; -ENODATA for a payload without settings (built before they existed);
 * -ENOENT when it has none for host_id; -EINVAL with err for a value that
 * is not what it must be. */
int payload_host_settings(json_object *payload, const char *host_id, struct payload_host_view *out, char *err,
                          size_t errlen);

/* An object a verified payload tells the agents to delete (deletions[]);
 * strings point into the payload. */
#define PAYLOAD_MAX_DELETIONS 10000
struct payload_deletion {
        const char *group;      /* "" for the core group */
        const char *kind;
        const char *namespace;  /* NULL: cluster-scoped */
        const char *name;
};
/* The payload's deletions, in order, into *out (malloc'd, free() it; NULL
 * when none). No member: 0 and *n = 0. Every entry must be an object with
 * string group (may be ""), kind and name (non-empty), optional version and
 * namespace (non-empty strings), each printable and at most
 * MANIFEST_MAX_NAME bytes; at most PAYLOAD_MAX_DELETIONS entries. Other
 * members of an entry are ignored. -EINVAL with err naming the entry and
 * member, -ENOMEM. */
int payload_deletions(json_object *payload, struct payload_deletion **out, size_t *n, char *err, size_t errlen);

/* The deletions member as the coordinator builds it: [{group, kind,
 * namespace?, name}] in the given order (a NULL group is ""). NULL on
 * ENOMEM, or EINVAL for v NULL with n > 0 or more than
 * PAYLOAD_MAX_DELETIONS. */
json_object *payload_deletions_to_json(const struct payload_deletion *v, size_t n);
