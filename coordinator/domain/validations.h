/* Host and cluster validations (DESIGN §5), as pure functions: facts in,
 * {id, status, message} out. The caller gathers the facts (store, step
 * results); nothing here touches the network, the store or a clock. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/config.h"
#include "inventory.h"
#include "protocol.h"

#define VAL_MSG_MAX 256
#define VAL_HOST_COUNT ((size_t) _VAL_HOST_MAX)
#define VAL_CLUSTER_COUNT ((size_t) (_VAL_MAX - _VAL_HOST_MAX))

struct validation_result {
        enum validation_id id;
        enum validation_status status;
        /* With VSTATUS_PENDING: what is missing is a setting only a user can
         * give (machine network, base domain, VIP), not data the agent will
         * send. Drives pending-for-input (hostfsm.h). Not part of the JSON. */
        bool awaits_user;
        char message[VAL_MSG_MAX];
};

/* ---- addresses and networks -------------------------------------------- */

struct ip_addr {
        int family;     /* AF_INET or AF_INET6 */
        uint8_t b[16];  /* network order; 4 bytes used for AF_INET */
};

struct cidr {
        struct ip_addr addr;
        unsigned prefix;
};

/* A bare address, "192.0.2.1" or "2001:db8::1". 0 or -EINVAL. */
int ip_parse(const char *s, struct ip_addr *out);
/* "ADDR/PREFIX", prefix 0-32 (v4) or 0-128 (v6), decimal without leading
 * zeros. Host bits may be set (interface addresses are written that way).
 * 0 or -EINVAL. */
int cidr_parse(const char *s, struct cidr *out);
bool ip_equal(const struct ip_addr *a, const struct ip_addr *b);
/* a is inside net (same family, first `prefix` bits equal). */
bool cidr_contains(const struct cidr *net, const struct ip_addr *a);
bool cidr_has_host_bits(const struct cidr *c);
/* The network written canonically ("192.0.2.0/24"): buf, or NULL if n is too small. */
char *cidr_network_string(const struct cidr *c, char *buf, size_t n);

/* RFC 1123 host name usable as a node name: dot-separated labels of 1-63
 * characters [a-z0-9-], no '-' at either end of a label, at most 253 in all,
 * lower case, and not a loopback name ("localhost", "localhost.localdomain",
 * ...). On false, why (if non-NULL) says what is wrong. */
bool hostname_is_valid(const char *name, char *why, size_t whylen);

/* ---- host validations -------------------------------------------------- */

/* The connectivity check's full-MTU probe to a peer (agent/steps_net.h). */
enum peer_mtu {
        PEER_MTU_UNKNOWN,  /* not probed (unreachable, TCP only, probe off) or not reported */
        PEER_MTU_PASSED,   /* a don't-fragment echo of the interface's MTU came back whole */
        PEER_MTU_FAILED,   /* it did not (path_mtu: what a router said, if one did) */
};

struct peer_connectivity {
        const char *peer_host_id;
        bool reachable;
        double latency_ms;
        double loss_pct;
        enum peer_mtu mtu_result;
        int64_t mtu;                      /* the MTU tried; 0: not known */
        int64_t path_mtu;                 /* from an ICMP "too big"; 0: none */
};

/* The names domain-resolution looks up for a cluster C in domain D:
 * api.C.D, api-int.C.D and *.apps.C.D (the agent resolves a random label
 * in place of '*'). */
enum cluster_dns_name { DNS_NAME_API, DNS_NAME_API_INT, DNS_NAME_APPS, _DNS_NAME_MAX };
/* "api", "api-int", "*.apps"; NULL past the end. */
const char *cluster_dns_prefix(enum cluster_dns_name n);

/* One name's resolution, as the agent reported it. */
struct dns_fact {
        bool present;                     /* the name was looked up */
        const char *const *addresses;     /* IPv4 then IPv6, as text */
        size_t n_addresses;
        const char *error;                /* the agent's reason when none; NULL: none given */
};

/* Another host bound to the same cluster. */
struct host_peer {
        const char *host_id;
        const char *hostname; /* effective hostname; NULL if not known yet */
};

struct host_facts {
        enum host_status status;          /* current state */
        bool has_inventory;               /* an inventory was received ... */
        const struct inventory *inventory; /* ... and parsed (NULL: it did not parse) */
        int64_t seconds_since_checkin;    /* < 0: never checked in */
        int64_t disconnect_timeout_s;     /* <= 0: the config's */
        const char *requested_hostname;   /* overrides the inventory's */
        const char *installation_disk_id; /* chosen disk (inv_disk id, path or name); NULL = any */
        const char *infra_env_name;       /* for messages */
        const char *infra_env_cpu_architecture; /* NULL: not checked */

        bool bound;
        enum host_role role;
        struct {
                bool single_node;         /* high_availability_mode None */
                const char *cpu_architecture; /* NULL: x86_64 */
                const char *name;
                const char *base_dns_domain;
                const char *machine_network_cidr;
                const char *api_vip;
                const char *ingress_vip;
                const struct host_peer *peers; /* the other bound hosts */
                size_t n_peers;
        } cluster;

        /* Step results; each is "not received yet" until `present`. From the
         * agent's outputs (agent/steps_net.h): connectivity-check peers[]
         * {host_id, reachable, rtt_avg_ms, loss_pct, mtu_ok, mtu, path_mtu};
         * ntp-synchronizer synced = (method == "sntp"), offset_ms,
         * sources[].source (a result with neither a method nor sources is
         * absent); domain-resolution: per cluster name (enum
         * cluster_dns_name) the ipv4/ipv6 addresses and error of its entry. */
        struct {
                bool present;
                const struct peer_connectivity *peers;
                size_t n_peers;
        } connectivity;
        struct {
                bool present;
                bool synced;              /* an NTP source answered; offset_ms is against it */
                bool has_offset;          /* offset_ms was measured (a source, or else the coordinator) */
                double offset_ms;         /* vs the source, or (information only) the coordinator's Date */
                const char *const *tried; /* the sources the agent was given */
                size_t n_tried;
        } ntp;
        struct dns_fact dns[_DNS_NAME_MAX];
        /* installation-disk-speed-check (agent/diskspeed.h): the p99 of its
         * fdatasync latencies, or its error; only for the disk the host
         * would install to now (stepfacts.h). */
        struct {
                bool present;
                bool failed;              /* the step failed: see error */
                const char *error;
                const char *disk;         /* which disk was measured */
                double fsync_ms;          /* p99 of fdatasync, ms */
        } disk_speed;
};

/* Run the host validations: the seven "always" ones, plus the bound-only ones
 * when f->bound, in validation_id order. Writes up to VAL_HOST_COUNT results;
 * returns how many, or -EINVAL on missing arguments.
 * Minimums: the "always" checks use [requirements.any]; the role checks and
 * has-min-valid-disks of a bound host its role's (config_profile_for).
 * Memory is physical when known, else usable; CPU cores are logical CPUs.
 * belongs-to-majority-group: disabled for single-node and with no other host;
 * passes when more than half of the other bound hosts are reachable.
 * sufficient-installation-disk-speed: disabled until preparing-for-installation
 * (the check writes to the disk), then pending until measured; a measured
 * p99 fdatasync over [requirements] install_disk_fsync_ms fails, a failed
 * check is an error (both kept after preparation, see v_disk_speed).
 * mtu-valid ([network] mtu_check, min_mtu): disabled like the latency check;
 * fails when a reached host did not pass a full-MTU don't-fragment packet,
 * or when the MTU tried is below min_mtu.
 * api-domain-name-resolved-correctly, api-int-... and apps-...: api.<name>.
 * <domain> and api-int.<name>.<domain> must resolve to the API VIP,
 * *.apps.<name>.<domain> to the ingress VIP; on single-node without the VIP,
 * to an address of the host. With [dns] require_api_int / require_apps
 * false, that name not resolving passes (resolving elsewhere still fails). */
int validations_host(const struct host_facts *f, const struct muster_config *cfg,
                     struct validation_result *out);

/* Index into inv->disks of the installation disk: `disk_id` (matched against
 * id, by_id, by_path, path and name) if given, else the first eligible disk
 * of at least min_bytes. -ENOENT if none fits. */
int validations_pick_install_disk(const struct inventory *inv, const char *disk_id, int64_t min_bytes);

/* The installation disk of a host as has-min-valid-disks approves it and
 * the install step uses it: validations_pick_install_disk with the minimum
 * of the host's role profile (config_profile_for). -ENOENT if none fits. */
int validations_install_disk(const struct inventory *inv, const char *disk_id, bool bound, bool single_node,
                             enum host_role role, const struct muster_config *cfg);

/* The device path of a bound host's installation disk as the install step
 * and the disk speed check get it: the chosen disk's (validations_install_disk)
 * by-id path, else its /dev path; NULL when no disk fits or it has neither. */
const char *validations_install_disk_path(const struct inventory *inv, const char *disk_id, bool single_node,
                                          enum host_role role, const struct muster_config *cfg);

/* The effective hostname: requested, else the inventory's; NULL if neither. */
const char *host_facts_hostname(const struct host_facts *f);

/* ---- cluster validations ----------------------------------------------- */

struct cluster_host {
        const char *host_id;
        const char *hostname;
        enum host_role role;
        enum host_status status;
        const struct inventory *inventory; /* NULL if none yet */
};

struct cluster_facts {
        bool single_node;
        const char *name;
        const char *base_dns_domain;
        const char *machine_network_cidr;
        const char *api_vip;
        const char *ingress_vip;
        const char *pull_secret;
        const struct cluster_host *hosts; /* the bound hosts */
        size_t n_hosts;
        /* capabilities-valid: the cluster's release, whether it is imported,
         * and why its capabilities spec does not validate against it (NULL:
         * it does; cap_validate_spec's reason otherwise). */
        const char *release_version;
        bool release_imported;
        const char *capabilities_error;
        size_t n_enabled_capabilities;    /* for the success message */
        size_t n_known_capabilities;
        /* operators-resolvable: whether anything is subscribed, how many
         * bundles the resolution installs, and why it does not resolve
         * (NULL: it does). */
        bool operators_subscribed;
        size_t n_operator_bundles;
        const char *operators_error;
};

/* Run the cluster validations in validation_id order. Writes
 * VAL_CLUSTER_COUNT results; returns that count, or -EINVAL.
 * capabilities-valid fails while release_version is unset or not imported,
 * or while capabilities_error is set. operators-resolvable fails while
 * operators_error is set. */
int validations_cluster(const struct cluster_facts *f, const struct muster_config *cfg,
                        struct validation_result *out);

/* The status a cluster's validations give it before installation: ready
 * when all pass; pending-for-input when a setting is missing (machine CIDR,
 * API VIPs, DNS domain, pull secret, capabilities); insufficient when
 * something else fails. info gets the status text: "Cluster is ready to
 * install", or the failing messages, each once, joined by "; ". */
enum cluster_status validations_cluster_status(const struct validation_result *res, size_t n, char *info,
                                               size_t infolen);

/* ---- output ------------------------------------------------------------ */

/* [{"id", "status", "message"}, ...]; NULL on ENOMEM. */
json_object *validations_to_json(const struct validation_result *v, size_t n);
/* The result with this id, or NULL. */
const struct validation_result *validations_find(const struct validation_result *v, size_t n,
                                                 enum validation_id id);
