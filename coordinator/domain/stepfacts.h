/* The network step results a host's agent sent (kept by the store as one
 * JSON object per host, keyed by step type) turned into the facts the host
 * validations read (validations.h struct host_facts). Pure: JSON in, facts
 * out; the shapes are those of agent/steps_net.h. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "protocol.h"
#include "strv.h"
#include "domain/validations.h"

struct step_facts {
        struct peer_connectivity *peers; /* peer_host_id points into peer_ids */
        size_t n_peers;
        struct strv peer_ids;
        bool have_connectivity;

        bool have_ntp;
        bool ntp_synced;                 /* an NTP source answered (method "sntp") */
        bool ntp_has_offset;
        double ntp_offset_ms;
        struct strv ntp_tried;           /* sources[].source */

        struct {
                bool present;
                struct strv addresses;
                char *error;             /* printable, at most STEP_FACTS_ERROR_MAX */
        } dns[_DNS_NAME_MAX];

        /* installation-disk-speed-check, as the coordinator stored it
         * (api_install.c): {"disk", "p99_ms", ...} or {"disk", "failed",
         * "error"}; disk is the chosen disk it was asked for (null: none). */
        bool have_disk_speed;
        bool disk_speed_failed;
        double disk_speed_p99_ms;
        char *disk_speed_error;
        char *disk_speed_disk;           /* NULL: measured with no disk chosen */
};

#define STEP_FACTS_ERROR_MAX 120

void step_facts_free(struct step_facts *sf);

/* Whether the stored results hold one of type t (of any shape). */
bool step_facts_has(const char *step_results_json, enum step_type t);

/* Parse the stored results; `cluster_domain` is "<cluster>.<base domain>",
 * whose api., api-int. and *.apps. names the DNS validations check (NULL:
 * none). Entries of the wrong shape are skipped, never trusted: a result
 * that does not parse counts as not received. 0 or -ENOMEM. */
int step_facts_parse(const char *step_results_json, const char *cluster_domain, struct step_facts *out);

/* A disk speed result measured for another disk than `install_disk` (the
 * host's chosen one now, validations_install_disk_path; NULL: none) is
 * dropped: the new disk has not been measured. */
void step_facts_keep_disk(struct step_facts *sf, const char *install_disk);

/* Point f's connectivity, ntp, dns and disk_speed members at sf (which must
 * outlive f). */
void step_facts_apply(const struct step_facts *sf, struct host_facts *f);
