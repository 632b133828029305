/* Failures and completion of an installation (install.h). The host state
 * machine says where a host goes; the cluster follows its hosts. */
#include "install.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hostfsm.h"
#include "log.h"

int install_fail_host(struct musterd *d, const struct host *h, const char *prefix, const char *why) {
        char info[1024];
        enum host_status to;
        const char *name = host_hostname(h) ? host_hostname(h) : h->id;
        int r;

        if (!why || !*why)
                why = "no reason given";
        if (h->status != HOST_ERROR) {
                if ((r = hostfsm_apply(h->status, HOSTFSM_EV_FAILED, NULL, &to, NULL)) < 0)
                        return r;
                snprintf(info, sizeof info, "%s%s", prefix ? prefix : "Installation failed: ", why);
                r = store_host_set_install_state(d->store, h->infra_env_id, h->id, to, info, NULL, -1,
                                                 STORE_STATUS(h->status));
                if (r < 0)
                        return r;
                musterd_event(d, EVENT_ERROR, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                              "host %s: %s -> %s: %s", h->id, host_status_to_string(h->status),
                              host_status_to_string(to), info);
        }
        if (!h->cluster_id)
                return 0;
        struct cluster c;
        if (store_cluster_get(d->store, h->cluster_id, &c) < 0)
                return 0;
        enum cluster_status cs = cluster_status_from_string(c.status);
        if (cluster_status_is_installing(cs)) {
                snprintf(info, sizeof info, "Host %s failed: %s", name, why);
                r = store_cluster_set_status_from(d->store, c.id, c.status, cluster_status_to_string(CLUSTER_ERROR),
                                                  info, NULL, 0);
                if (r == 0)
                        musterd_event(d, EVENT_ERROR, EVENT_CAT_SYSTEM, NULL, c.id, NULL, "cluster %s (%s): %s -> %s: %s",
                                      c.name, c.id, c.status, cluster_status_to_string(CLUSTER_ERROR), info);
        }
        cluster_free(&c);
        return 0;
}

int install_cluster_check(struct musterd *d, const char *cluster_id) {
        int64_t all = 0, done = 0;
        struct cluster c;
        char info[256];
        int r;

        if ((r = store_cluster_count_hosts(d->store, cluster_id, 0, &all)) < 0 ||
            (r = store_cluster_count_hosts(d->store, cluster_id, STORE_STATUS(HOST_INSTALLED), &done)) < 0)
                return r;
        if (all == 0 || done < all)
                return 0;
        if ((r = store_cluster_get(d->store, cluster_id, &c)) < 0)
                return r;
        if (cluster_status_from_string(c.status) != CLUSTER_INSTALLING) {
                cluster_free(&c);
                return 0;
        }
        snprintf(info, sizeof info, "Cluster is installed: all %lld hosts are installed", (long long) all);
        r = store_cluster_set_status_from(d->store, c.id, c.status, cluster_status_to_string(CLUSTER_INSTALLED), info,
                                          NULL, 0);
        if (r == 0)
                musterd_event(d, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, c.id, NULL, "cluster %s (%s): %s -> %s: %s", c.name,
                              c.id, c.status, cluster_status_to_string(CLUSTER_INSTALLED), info);
        cluster_free(&c);
        return r == 0 ? 1 : r == -ESTALE ? 0 : r;
}

bool install_waits_for_first_boot(const struct host *h) {
        return h->status == HOST_INSTALLING_IN_PROGRESS && h->progress.stage &&
               strcmp(h->progress.stage, install_stage_to_string(INSTALL_STAGE_REBOOTING)) == 0 &&
               h->applied_revision > 0;
}

int install_first_boot(struct musterd *d, struct host *h) {
        struct host_progress p = { .stage = (char *) install_stage_to_string(INSTALL_STAGE_DONE), .percent = 100 };
        enum host_status to;
        const char *why;
        char info[160];
        int r;

        if (!install_waits_for_first_boot(h))
                return 0;
        if ((r = hostfsm_apply(h->status, HOSTFSM_EV_INSTALLED, NULL, &to, &why)) < 0)
                return r;
        snprintf(info, sizeof info, "Installed payload revision %lld; the installed system checked in",
                 (long long) h->applied_revision);
        p.info = info;
        r = store_host_set_install_state(d->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), &p, -1,
                                         STORE_STATUS(h->status));
        if (r == -ESTALE)
                return 0;
        if (r < 0)
                return r;
        musterd_event(d, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                      "host %s: %s -> %s: its installed system checked in (payload revision %lld)", h->id,
                      host_status_to_string(h->status), host_status_to_string(to), (long long) h->applied_revision);
        h->status = to;
        if (h->cluster_id)
                (void) install_cluster_check(d, h->cluster_id);
        return 1;
}
