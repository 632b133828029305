/* The periodic passes' work (svc.h): hosts that went silent, installs that
 * stalled, installed systems that never booted, event retention, and the
 * buffered check-ins. The daemon's controllers call these on their
 * intervals; a test calls them one at a time. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "svc/checkins.h"
#include "cleanup.h"
#include "domain/hostfsm.h"
#include "svc/install.h"
#include "svc/refresh.h"
#include "svc/svc.h"
#include "store/store.h"

/* Stale hosts are handled in batches, so a fleet going dark is one
 * transaction per batch. */
#define STALE_BATCH 500

/* Hosts in `mask` that have not checked in since `before`, a batch at a time,
 * handed to `act`, which returns how many it changed. Stops after a batch
 * that changes none or is short. Returns how many changed in all. */
static int for_stale_hosts(struct svc *sv, const char *before, uint32_t mask, const char *stage, bool stage_match,
                           int (*act)(struct svc *sv, const char *before, uint32_t mask, struct host_list *l)) {
        int total = 0;
        for (;;) {
                struct host_list l = { 0 };
                int r = store_host_list_stale(sv->store, before, mask, stage, stage_match, STALE_BATCH, &l);
                if (r < 0 || l.n == 0) {
                        host_list_free(&l);
                        return r < 0 ? r : total;
                }
                r = act(sv, before, mask, &l);
                size_t n = l.n;
                host_list_free(&l);
                if (r < 0)
                        return r;
                total += r;
                if (r == 0 || n < STALE_BATCH)
                        return total;
        }
}

/* A batch of hosts being installed that went silent: error (status_info
 * "Installation failed: <why>"), and their cluster with them. */
static int fail_silent(struct svc *sv, const char *before, uint32_t mask, struct host_list *l, const char *why,
                       int64_t after_s) {
        char info[256];
        snprintf(info, sizeof info, "Installation failed: %s", why);
        bool *changed = calloc(l->n, sizeof *changed);
        int r = changed ? store_host_mark_stale(sv->store, l->v, l->n, before, mask, HOST_ERROR, info, changed)
                        : -ENOMEM;
        for (size_t i = 0; r > 0 && i < l->n; i++) {
                if (!changed[i])
                        continue;
                svc_event(sv, EVENT_ERROR, EVENT_CAT_SYSTEM, l->v[i].infra_env_id, l->v[i].cluster_id, l->v[i].id,
                              "host %s: %s -> error: %s (no check-in for %lld s)", l->v[i].id,
                              host_status_to_string(l->v[i].status), info, (long long) after_s);
                /* Now in error: only the cluster is left to fail. */
                l->v[i].status = HOST_ERROR;
                (void) installation_fail_host(sv, &l->v[i], NULL, why);
        }
        free(changed);
        return r;
}

/* Hosts that stopped checking in while writing their installation. */
static int fail_stale_installs(struct svc *sv, const char *before, uint32_t mask, struct host_list *l) {
        return fail_silent(sv, before, mask, l, "Host stopped checking in during installation",
                           svc_cfg(sv)->host_disconnect_timeout_s);
}

/* Hosts whose installed system never checked in after the install step's
 * result (the firmware, the boot or the node agent failed). */
static int fail_first_boots(struct svc *sv, const char *before, uint32_t mask, struct host_list *l) {
        char why[160];
        snprintf(why, sizeof why, "The installed system did not check in within %lld s of the install",
                 (long long) svc_cfg(sv)->first_boot_timeout_s);
        return fail_silent(sv, before, mask, l, why, svc_cfg(sv)->first_boot_timeout_s);
}

/* A batch of hosts that stopped checking in: disconnected. */
static int mark_disconnected(struct svc *sv, const char *before, uint32_t mask, struct host_list *l) {
        _cleanup_free_ bool *changed = calloc(l->n ? l->n : 1, sizeof *changed);
        if (!changed)
                return -ENOMEM;
        int r = store_host_mark_disconnected(sv->store, l->v, l->n, before, mask,
                                             "The host has not checked in within the disconnect timeout", changed);
        for (size_t i = 0; r > 0 && i < l->n; i++) {
                /* Only the hosts this pass moved: a host that checked in
                 * meanwhile, or that another replica's pass moved, is not
                 * said to be disconnected (again). */
                if (!changed[i])
                        continue;
                svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, l->v[i].infra_env_id, l->v[i].cluster_id,
                              l->v[i].id, "host %s is disconnected: no check-in for %lld s", l->v[i].id,
                              (long long) svc_cfg(sv)->host_disconnect_timeout_s);
                /* A bound host going dark changes its cluster's verdict; once
                 * per cluster and batch. */
                bool seen = !l->v[i].cluster_id;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = l->v[k].cluster_id && strcmp(l->v[k].cluster_id, l->v[i].cluster_id) == 0;
                if (!seen)
                        (void) refresh_cluster(sv, l->v[i].cluster_id, NULL);
        }
        return r;
}

int svc_monitor_pass(struct svc *sv) {
        char before[MODEL_TIME_LEN];
        int flushed = checkins_flush(sv->checkins, sv->store, true);
        if (flushed < 0)
                return flushed;
        int64_t cutoff = svc_now(sv) - svc_cfg(sv)->host_disconnect_timeout_s;
        const uint32_t installing = STORE_STATUS(HOST_INSTALLING) | STORE_STATUS(HOST_INSTALLING_IN_PROGRESS);
        uint32_t live = 0;

        model_time_format(cutoff, before);
        /* States the timeout moves to disconnected; those it moves to error
         * (an installation in progress) are fail_stale_installs()'s. */
        for (int s = 0; s < _HOST_STATUS_MAX; s++) {
                enum host_status to;
                if (hostfsm_apply((enum host_status) s, HOSTFSM_EV_CHECKIN_TIMEOUT, NULL, &to, NULL) == 0 &&
                    to != (enum host_status) s && to != HOST_ERROR)
                        live |= STORE_STATUS(s);
        }
        /* A host rebooting into its installed system is silent until that
         * system's node agent checks in: it has first_boot_timeout. */
        int failed = for_stale_hosts(sv, before, installing, install_stage_to_string(INSTALL_STAGE_REBOOTING), false, fail_stale_installs);
        if (failed < 0)
                return failed;
        char boot_before[MODEL_TIME_LEN];
        model_time_format(svc_now(sv) - svc_cfg(sv)->first_boot_timeout_s, boot_before);
        int unbooted = for_stale_hosts(sv, boot_before, STORE_STATUS(HOST_INSTALLING_IN_PROGRESS),
                                       install_stage_to_string(INSTALL_STAGE_REBOOTING), true, fail_first_boots);
        if (unbooted < 0)
                return unbooted;
        int disconnected = for_stale_hosts(sv, before, live, NULL, false, mark_disconnected);
        return disconnected < 0 ? disconnected : failed + unbooted + disconnected;
}

int svc_prune_events(struct svc *sv) {
        char before[MODEL_TIME_LEN], audit_before[MODEL_TIME_LEN];
        const struct muster_config *cfg = svc_cfg(sv);
        model_time_format(svc_now(sv) - cfg->events_max_age_s, before);
        model_time_format(svc_now(sv) - cfg->events_audit_max_age_s, audit_before);
        return store_event_prune(sv->store, before, audit_before, cfg->events_max_per_host, &sv->events_pruned_to);
}

int svc_flush_checkins(struct svc *sv) {
        return checkins_flush(sv->checkins, sv->store, false);
}

int svc_flush_all_checkins(struct svc *sv) {
        return checkins_flush(sv->checkins, sv->store, true);
}

int svc_leader(struct svc *sv) {
        return store_leader(sv->store);
}
