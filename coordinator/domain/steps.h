/* Which steps a host's agent gets on GET .../instructions (DESIGN §4): a
 * table from the host's state to step types, plus the JSON arguments of
 * each. Pure: the caller passes the host's state, its peers' addresses, the
 * NTP sources and a random seed for the step ids. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory.h"
#include "protocol.h"
#include "strv.h"

#define STEPS_DEFAULT_INTERVAL_S 60
#define STEPS_DEFAULT_INVENTORY_EVERY 10
#define STEPS_ID_MAX 48 /* "installation-disk-speed-check-" + 8 hex + NUL fits */

/* The agent's step runners refuse arguments past these (agent/steps_net.h);
 * longer lists are cut here so one oversized cluster does not break the step. */
#define STEPS_MAX_PEERS 1000
#define STEPS_MAX_PEER_ADDRESSES 16
#define STEPS_MAX_NTP_SOURCES 16
#define STEPS_MAX_NTP_SOURCE_LEN 262
#define STEPS_DISK_SPEED_WRITES 50 /* fdatasyncs per disk speed check (the agent takes 1-1000) */

/* Another bound host of the cluster and the addresses to check it on. */
struct step_peer {
        const char *host_id;
        const char *const *addresses; /* bare addresses, no prefix */
        size_t n_addresses;
};

struct steps_input {
        enum host_status status;
        bool inventory_received;       /* an inventory was stored for this host */
        uint64_t poll_count;           /* instruction polls answered so far for this host */
        unsigned inventory_every;      /* re-send inventory every N-th poll; 0 = default */
        unsigned interval_s;           /* next_instruction_seconds; 0 = default */
        bool must_reregister;          /* bind/unbind happened: tell the agent to exit */
        const char *cluster_name;      /* bound hosts */
        const char *base_dns_domain;
        const struct step_peer *peers; /* the other bound hosts */
        size_t n_peers;
        const char *const *ntp_sources; /* the infra-env's; may be empty */
        size_t n_ntp_sources;
        const char *coordinator_date;  /* now, IMF-fixdate or RFC 3339: the agent's
                                        * fallback clock reference when no NTP
                                        * source answers (or none is set) */
        int64_t ntp_max_offset_ms;     /* config [ntp] max_offset_ms; <= 0: omitted */
        bool skip_mtu_probe;           /* config [network] mtu_check = false */
        uint64_t seed;                 /* random per call: step ids derive from it */
        /* Installation (installing, installing-in-progress, installed). */
        const char *cluster_id;
        int64_t payload_revision;      /* the cluster's latest; 0: none */
        int64_t applied_revision;      /* what the host last applied */
        enum host_role role;           /* the host's role at install */
        const char *installation_disk; /* device path for the install and the disk speed
                                        * check; NULL: the agent's choice (none to measure) */
        bool disk_speed_measured;      /* preparing: a disk speed result is in */
        const char *host_token;        /* install: the host's own token for its node agent; NULL: none */
        bool install_written;          /* the install step's result was taken: the host waits for
                                        * its installed system's first check-in; no install step */
        bool stop_installation;        /* the install was cancelled: send stop-installation */
        /* Asked by the admin (struct host.pending_actions). */
        bool gather_logs;              /* logs-gather {"max_bytes"}, whatever the state's plan says */
        int64_t logs_max_bytes;        /* the upload cap the bundle must fit ([logs] max_upload_bytes) */
        bool reclaim;                  /* installed: reclaim, instead of any apply */
        bool reclaim_wipe;
        const char *reclaim_kernel_url;   /* coordinator paths of the PXE vmlinuz and initrd */
        const char *reclaim_initrd_url;
        const char *reclaim_cmdline;      /* the discovery kernel's command line */
};

struct steps_reply {
        json_object *instructions;     /* array of {step_id, step_type, args}; caller puts */
        unsigned next_instruction_seconds;
        const char *post_step_action;  /* "continue" | "exit" */
};

/* Decide the steps for one poll. 0, -EINVAL (bad state) or -ENOMEM.
 * Unbound hosts: inventory (when none yet, or every N-th poll). Bound hosts
 * before installation: also connectivity-check (when a peer has addresses),
 * ntp-synchronizer (when there is an NTP source or a coordinator_date) and
 * domain-resolution (when cluster name and base domain are set).
 * binding, or must_reregister: no steps and "exit", so the agent registers
 * again. preparing-for-installation: installation-disk-speed-check on
 * installation_disk until disk_speed_measured. installing and installing-in-progress: the install step
 * (mode install, step_id "install-<rev>") on every poll while the cluster
 * has a payload, until install_written; installed: the install step in mode apply (step_id
 * "apply-<rev>") while applied_revision < payload_revision; nothing else. */
int steps_for_host(const struct steps_input *in, struct steps_reply *out);

/* The whole reply body {next_instruction_seconds, post_step_action,
 * instructions}; takes a reference to r->instructions. NULL on ENOMEM. */
json_object *steps_reply_to_json(const struct steps_reply *r);

void steps_reply_free(struct steps_reply *r);

/* The step types a host in state s may get (before the per-poll filters),
 * as a bitmask of 1 << enum step_type. */
unsigned steps_allowed(enum host_status s);

/* "<type>-<8 hex>" from the seed and the step's index in the reply. */
void steps_make_id(enum step_type t, uint64_t seed, unsigned index, char out[STEPS_ID_MAX]);

/* A host's addresses for peers to check, without prefix, from its
 * inventory: IPv4 first, then IPv6; only those inside machine_cidr if it
 * is set and valid. 0 or -ENOMEM. */
int steps_host_addresses(const struct inventory *inv, const char *machine_cidr, struct strv *out);

/* Argument builders (exposed for tests); shapes as agent/steps_net.h reads
 * them. New objects, NULL on ENOMEM.
 * connectivity-check {"peers":[{"host_id","addresses":[..]}], "mtu_probe"}:
 *   peers without addresses are left out; caps as above.
 * ntp-synchronizer {"ntp_sources":[..], "coordinator_date"?, "max_offset_ms"?}.
 * domain-resolution {"names":["api.C.D", "api-int.C.D", "*.apps.C.D"]}; the
 *   agent resolves a random label in place of '*'. */
json_object *steps_connectivity_args(const struct step_peer *peers, size_t n, bool mtu_probe);
json_object *steps_ntp_args(const char *const *sources, size_t n, const char *coordinator_date,
                            int64_t max_offset_ms);
/* installation-disk-speed-check {"path"?, "writes"} (agent/diskspeed.h);
 * writes 0 is STEPS_DISK_SPEED_WRITES, a NULL path is left out. */
json_object *steps_disk_speed_args(const char *path, unsigned writes);
