/* The agent <-> coordinator <-> CLI protocol in one place (DESIGN §4-5):
 * API version and routes, step types, host and cluster states, validation
 * ids, error codes. Agent, coordinator and musterctl all include this.
 *
 * History (DECISIONS.md D8: v2, by additions only):
 *   v2 - first version of muster's API, shaped after the Assisted
 *   Installer's v2 so that its users find familiar names: infra-envs, hosts
 *   (register, instructions, step results), clusters, bind and unbind,
 *   events, the discovery ISO.
 *   Added since, each a v2 addition: releases, cluster capabilities, signed
 *   payload revisions, the install step (modes install and apply), install
 *   progress, applied_revision on hosts; people's tokens (list, revoke);
 *   host tokens and a host's token rotation; cluster and host installs,
 *   upgrade, reset, cancel and stop-installation; operator catalogs,
 *   subscriptions, resolution and upgrades; add-on proxies and releases;
 *   operands and operator uninstall with cleanup (the payload's deletions);
 *   PXE and iPXE files; an infra-env's static_network; logs-gather (gather
 *   logs, a host's logs) and reclaim; GET /clusters?selector= (a label
 *   selector in kubectl's words); the OpenAPI document (openapi.json,
 *   openapi.yaml). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MUSTER_API_VERSION "v2"
#define MUSTER_API_PREFIX "/api/" MUSTER_API_VERSION

/* Route paths, each written once (DECISIONS.md D1). The MUSTER_PATH_* macros are
 * relative to MUSTER_API_PREFIX (musterctl's requests add it themselves) and
 * take their parameters as string literals: the coordinator's route table
 * passes placeholders ("{id}", which its matcher takes for any one segment),
 * clients pass printf conversions ("%s"), so the server's pattern and the
 * clients' format come from the same segments and cannot drift apart.
 * tests/unit/test_routes.c formats each with sample ids and matches the
 * result against the route table. */
#define MUSTER_PATH_ITEM(coll, id) coll "/" id
#define MUSTER_PATH_VERSION "/version" /* what the server is (no token) */
#define MUSTER_PATH_INFRA_ENVS "/infra-envs"
#define MUSTER_PATH_INFRA_ENV(ie) MUSTER_PATH_ITEM(MUSTER_PATH_INFRA_ENVS, ie)
#define MUSTER_PATH_INFRA_ENV_IMAGE(ie) MUSTER_PATH_INFRA_ENV(ie) "/downloads/image"
/* The PXE files: vmlinuz, initrd, boot.ipxe. */
#define MUSTER_PATH_INFRA_ENV_PXE(ie, file) MUSTER_PATH_INFRA_ENV(ie) "/downloads/pxe/" file
#define MUSTER_PATH_INFRA_ENV_HOSTS(ie) MUSTER_PATH_INFRA_ENV(ie) "/hosts"
#define MUSTER_PATH_HOST(ie, h) MUSTER_PATH_ITEM(MUSTER_PATH_INFRA_ENV_HOSTS(ie), h)
#define MUSTER_PATH_HOST_INSTRUCTIONS(ie, h) MUSTER_PATH_HOST(ie, h) "/instructions"
#define MUSTER_PATH_HOST_PROGRESS(ie, h) MUSTER_PATH_HOST(ie, h) "/progress"
#define MUSTER_PATH_HOST_LOGS(ie, h) MUSTER_PATH_HOST(ie, h) "/logs"
#define MUSTER_PATH_HOSTS "/hosts"
#define MUSTER_PATH_CLUSTERS "/clusters"
#define MUSTER_PATH_CLUSTER(c) MUSTER_PATH_ITEM(MUSTER_PATH_CLUSTERS, c)
#define MUSTER_PATH_CLUSTER_PAYLOADS(c) MUSTER_PATH_CLUSTER(c) "/payload"
#define MUSTER_PATH_CLUSTER_PAYLOAD(c, rev) MUSTER_PATH_ITEM(MUSTER_PATH_CLUSTER_PAYLOADS(c), rev)
/* Operator subscriptions of a cluster (one per package) and its operators'
 * resolution: a preview, and an upgrade. */
#define MUSTER_PATH_CLUSTER_SUBSCRIPTIONS(c) MUSTER_PATH_CLUSTER(c) "/subscriptions"
#define MUSTER_PATH_CLUSTER_SUBSCRIPTION(c, pkg) MUSTER_PATH_ITEM(MUSTER_PATH_CLUSTER_SUBSCRIPTIONS(c), pkg)
#define MUSTER_PATH_CLUSTER_OPERANDS(c) MUSTER_PATH_CLUSTER(c) "/operands"
#define MUSTER_PATH_CLUSTER_OPERAND(c, o) MUSTER_PATH_ITEM(MUSTER_PATH_CLUSTER_OPERANDS(c), o)
#define MUSTER_PATH_CLUSTER_OPERATORS_RESOLVE(c) MUSTER_PATH_CLUSTER(c) "/operators/resolve"
#define MUSTER_PATH_CLUSTER_OPERATORS_UPGRADE(c) MUSTER_PATH_CLUSTER(c) "/operators/upgrade"
#define MUSTER_PATH_RELEASES "/releases"
#define MUSTER_PATH_RELEASE(v) MUSTER_PATH_ITEM(MUSTER_PATH_RELEASES, v)
#define MUSTER_PATH_RELEASE_PREVIEW(v) MUSTER_PATH_RELEASE(v) "/preview"
#define MUSTER_PATH_RELEASE_OS_IMAGE(v) MUSTER_PATH_RELEASE(v) "/os-image"
#define MUSTER_PATH_SIGNING_KEY "/signing-key"
#define MUSTER_PATH_EVENTS "/events"
#define MUSTER_PATH_CATALOGS "/catalogs"
#define MUSTER_PATH_CATALOG(c) MUSTER_PATH_ITEM(MUSTER_PATH_CATALOGS, c) /* an id, or a name for GET */
#define MUSTER_PATH_ADDON_PROXIES "/addon-proxies"
#define MUSTER_PATH_ADDON_PROXY(p) MUSTER_PATH_ITEM(MUSTER_PATH_ADDON_PROXIES, p) /* an id or a name */
#define MUSTER_PATH_ADDON_PROXY_ACTION(p, a) MUSTER_PATH_ADDON_PROXY(p) "/actions/" a /* pause|resume|rollback */
#define MUSTER_PATH_ADDON_RELEASES "/addon-releases" /* ?proxy=&cluster= */
#define MUSTER_PATH_TOKENS "/tokens"
#define MUSTER_PATH_TOKEN(t) MUSTER_PATH_ITEM(MUSTER_PATH_TOKENS, t)
#define MUSTER_PATH_OPENAPI_JSON "/openapi.json" /* the API described (no token) */
#define MUSTER_PATH_OPENAPI_YAML "/openapi.yaml"
/* Actions: a suffix to the path of an infra-env, a host, a cluster or a
 * token (POST). */
#define MUSTER_ACTION_ROTATE_TOKEN "/actions/rotate-token" /* infra-env, host */
#define MUSTER_ACTION_BIND "/actions/bind"                 /* host */
#define MUSTER_ACTION_UNBIND "/actions/unbind"             /* host */
#define MUSTER_ACTION_INSTALL "/actions/install"           /* host, cluster */
#define MUSTER_ACTION_UPGRADE "/actions/upgrade"           /* cluster */
#define MUSTER_ACTION_RESET "/actions/reset"               /* cluster */
#define MUSTER_ACTION_CANCEL "/actions/cancel"             /* cluster */
#define MUSTER_ACTION_REVOKE "/actions/revoke"             /* token */
#define MUSTER_ACTION_GATHER_LOGS "/actions/gather-logs"   /* host */
#define MUSTER_ACTION_RECLAIM "/actions/reclaim"           /* host */
/* Outside MUSTER_API_PREFIX: probes and metrics. */
#define MUSTER_PATH_HEALTHZ "/healthz"
#define MUSTER_PATH_READYZ "/readyz"
#define MUSTER_PATH_METRICS "/metrics"

/* Step types the coordinator hands an agent. */
enum step_type {
        STEP_INVENTORY,
        STEP_CONNECTIVITY_CHECK,
        STEP_NTP_SYNCHRONIZER,
        STEP_DOMAIN_RESOLUTION,
        STEP_INSTALLATION_DISK_SPEED_CHECK,
        STEP_INSTALL,
        STEP_LOGS_GATHER,
        STEP_STOP_INSTALLATION,
        STEP_RECLAIM,
        _STEP_TYPE_MAX,
        _STEP_TYPE_INVALID = -1,
};
const char *step_type_to_string(enum step_type t);
enum step_type step_type_from_string(const char *s);

/* The install step (DESIGN §6): args {"mode", "cluster_id", "revision",
 * "payload_url", "role"?, "installation_disk"?}. step_id is
 * "install-<rev>" for an installation, "apply-<rev>" for a day-2 apply of an
 * installed host; the agent runs each once per (cluster, revision). */
#define INSTALL_MODE_INSTALL "install"
#define INSTALL_MODE_APPLY "apply"
#define INSTALL_STEP_ID_PREFIX "install-"
#define APPLY_STEP_ID_PREFIX "apply-"
/* Where agents fetch a payload revision and the OS image of a path release
 * (relative to the coordinator URL; printf formats). */
#define MUSTER_PAYLOAD_PATH_FMT MUSTER_API_PREFIX MUSTER_PATH_CLUSTER_PAYLOAD("%s", "%lld")
#define MUSTER_OS_IMAGE_PATH_FMT MUSTER_API_PREFIX MUSTER_PATH_RELEASE_OS_IMAGE("%s")

/* Stages of PUT .../hosts/{h}/progress {"stage", "percent", "info"?}. */
enum install_stage {
        INSTALL_STAGE_STARTING,
        INSTALL_STAGE_WRITING_IMAGE,
        INSTALL_STAGE_WRITING_PAYLOAD,
        INSTALL_STAGE_REBOOTING,
        INSTALL_STAGE_DONE,
        _INSTALL_STAGE_MAX,
        _INSTALL_STAGE_INVALID = -1,
};
/* "starting", "writing-image", "writing-payload", "rebooting", "done". */
const char *install_stage_to_string(enum install_stage s);
enum install_stage install_stage_from_string(const char *s);

/* Host states (DESIGN §5). */
enum host_status {
        HOST_DISCOVERING_UNBOUND,
        HOST_KNOWN_UNBOUND,
        HOST_INSUFFICIENT_UNBOUND,
        HOST_DISCONNECTED_UNBOUND,
        HOST_BINDING,
        HOST_DISCOVERING,
        HOST_KNOWN,
        HOST_INSUFFICIENT,
        HOST_PENDING_FOR_INPUT,
        HOST_DISCONNECTED,
        HOST_PREPARING_FOR_INSTALLATION,
        HOST_INSTALLING,
        HOST_INSTALLING_IN_PROGRESS,
        HOST_INSTALLED,
        HOST_ERROR,
        HOST_UNBINDING_PENDING_USER_ACTION,
        HOST_RESETTING_PENDING_USER_ACTION, /* installed, then its cluster was reset */
        _HOST_STATUS_MAX,
        _HOST_STATUS_INVALID = -1,
};
const char *host_status_to_string(enum host_status s);
/* preparing-for-installation, installing, installing-in-progress. */
static inline int host_status_is_installing(enum host_status s) {
        return s == HOST_PREPARING_FOR_INSTALLATION || s == HOST_INSTALLING || s == HOST_INSTALLING_IN_PROGRESS;
}
enum host_status host_status_from_string(const char *s);
/* The canonical name of a CPU architecture: x86_64, aarch64, ppc64le or
 * s390x ("amd64" and "arm64", Debian's and Go's names, are taken as x86_64
 * and aarch64). NULL for any other name. */
const char *cpu_arch_canonical(const char *s);
/* A DNS name of RFC 1123 labels in lower case (a-z, 0-9, '-', '.'; labels
 * of 1..63, at most 253 in all). False with the reason in why, naming the
 * name as `what` ("hostname", "base DNS domain"). */
bool dns_name_valid(const char *name, const char *what, char *why, size_t whylen);
/* An NTP source: "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6
 * address; the host (brackets taken off) into host, *port 0 when none is
 * named. -EINVAL for anything else (an empty host, a port outside
 * 1..65535, a host of hostlen bytes or more). */
int ntp_source_split(const char *s, char *host, size_t hostlen, uint16_t *port);
/* ntp_source_split() takes it and its host is an IP address or a DNS name
 * (dns_name_valid, in any case). */
bool ntp_source_is_valid(const char *s);
/* A proxy for the agents' fetches: "http://" or "https://", a host, an
 * optional ":port", an optional "user:password@" before the host, nothing
 * else (no path but "/", no query), printable, at most PROXY_URL_MAX bytes. */
#define PROXY_URL_MAX 1024
bool proxy_url_is_valid(const char *s);
/* A no_proxy list: "*" or comma-separated host names, domains (".example.com"
 * or "example.com"), IP addresses and CIDR blocks; printable, no spaces, at
 * most PROXY_URL_MAX bytes, no empty entry. */
bool no_proxy_is_valid(const char *s);
/* The architecture this program was built for, as cpu_arch_canonical names it. */
#if defined(__x86_64__)
#define CPU_ARCH_BUILD "x86_64"
#elif defined(__aarch64__)
#define CPU_ARCH_BUILD "aarch64"
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define CPU_ARCH_BUILD "ppc64le"
#elif defined(__s390x__)
#define CPU_ARCH_BUILD "s390x"
#else
#error "muster is built for x86_64, aarch64, ppc64le or s390x"
#endif

/* A comma-separated list of host statuses ("known-unbound,known") as a set:
 * bit (1 << status) per status. -EINVAL (with *bad pointing at the first
 * unknown name, its length in *bad_len) for an empty or unknown name. */
int host_status_set_parse(const char *list, uint32_t *set, const char **bad, size_t *bad_len);

/* Cluster states. A cluster waits for settings (pending-for-input), for
 * its hosts (insufficient) or is ready; `install` moves it on. While it is
 * preparing-for-installation, installing or finalizing its hosts cannot be
 * moved (DESIGN §5). */
enum cluster_status {
        CLUSTER_PENDING_FOR_INPUT,
        CLUSTER_INSUFFICIENT,
        CLUSTER_READY,
        CLUSTER_PREPARING_FOR_INSTALLATION,
        CLUSTER_INSTALLING,
        CLUSTER_FINALIZING,
        CLUSTER_INSTALLED,
        CLUSTER_ERROR,
        _CLUSTER_STATUS_MAX,
        _CLUSTER_STATUS_INVALID = -1,
};
const char *cluster_status_to_string(enum cluster_status s);
enum cluster_status cluster_status_from_string(const char *s);
/* preparing-for-installation, installing, finalizing. */
static inline int cluster_status_is_installing(enum cluster_status s) {
        return s == CLUSTER_PREPARING_FOR_INSTALLATION || s == CLUSTER_INSTALLING || s == CLUSTER_FINALIZING;
}

/* Validation ids (DESIGN §5). Host validations first, then cluster ones. */
enum validation_id {
        VAL_CONNECTED,
        VAL_HAS_INVENTORY,
        VAL_HAS_MIN_CPU_CORES,
        VAL_HAS_MIN_MEMORY,
        VAL_HAS_MIN_VALID_DISKS,
        VAL_HOSTNAME_VALID,
        VAL_CPU_ARCHITECTURE_MATCHES,
        VAL_HAS_CPU_CORES_FOR_ROLE,
        VAL_HAS_MEMORY_FOR_ROLE,
        VAL_HOSTNAME_UNIQUE,
        VAL_BELONGS_TO_MACHINE_CIDR,
        VAL_BELONGS_TO_MAJORITY_GROUP,
        VAL_SUFFICIENT_NETWORK_LATENCY,
        VAL_SUFFICIENT_PACKET_LOSS,
        VAL_MTU_VALID,
        VAL_NTP_SYNCED,
        VAL_SUFFICIENT_INSTALLATION_DISK_SPEED,
        VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY,
        VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY,
        VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY,
        _VAL_HOST_MAX,
        VAL_MACHINE_CIDR_DEFINED = _VAL_HOST_MAX,
        VAL_API_VIPS_DEFINED,
        VAL_API_VIPS_VALID,
        VAL_INGRESS_VIPS_VALID,
        VAL_DNS_DOMAIN_DEFINED,
        VAL_PULL_SECRET_SET,
        VAL_SUFFICIENT_MASTERS_COUNT,
        VAL_ALL_HOSTS_ARE_READY_TO_INSTALL,
        VAL_CAPABILITIES_VALID,
        VAL_OPERATORS_RESOLVABLE,
        _VAL_MAX,
        _VAL_INVALID = -1,
};
const char *validation_id_to_string(enum validation_id v);
enum validation_id validation_id_from_string(const char *s);

enum validation_status {
        VSTATUS_SUCCESS,
        VSTATUS_FAILURE,
        VSTATUS_PENDING,
        VSTATUS_ERROR,
        VSTATUS_DISABLED,
        _VSTATUS_MAX,
        _VSTATUS_INVALID = -1,
};
const char *validation_status_to_string(enum validation_status s);

enum host_role { ROLE_AUTO, ROLE_MASTER, ROLE_WORKER, _ROLE_MAX, _ROLE_INVALID = -1 };
const char *host_role_to_string(enum host_role r);
enum host_role host_role_from_string(const char *s);

/* Reverse lookup for enums whose names are dense from 0 to max-1: the
 * value whose name(i) is s, or -1. Shared by every *_from_string. */
int enum_lookup(const char *s, int max, const char *(*name)(int));

/* HTTP statuses the API answers with, and the meaning STYLE.md gives them. */
enum api_error {
        API_BAD_REQUEST = 400,      /* bad input */
        API_UNAUTHORIZED = 401,     /* no or bad token */
        API_FORBIDDEN = 403,        /* wrong scope */
        API_NOT_FOUND = 404,
        API_METHOD_NOT_ALLOWED = 405,
        API_CONFLICT = 409,         /* state conflict */
        API_TOO_LARGE = 413,
        API_UNSUPPORTED_MEDIA = 415,
        API_UNPROCESSABLE = 422,    /* failed validation */
        API_INTERNAL = 500,
        API_UNAVAILABLE = 503,
};
