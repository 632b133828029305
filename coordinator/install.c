/* Failures and completion of an installation (install.h). The host state
 * machine says where a host goes; the cluster follows its hosts. */
#include "install.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hostfsm.h"
#include "log.h"
#include "refresh.h"
#include "stepfacts.h"

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

/* Measured, and nothing fails or waits (the stored validations are those of
 * the refresh that followed the result). */
static bool host_prepared(const struct host *h) {
        if (!step_facts_has(h->step_results_json, STEP_INSTALLATION_DISK_SPEED_CHECK) || h->n_validations == 0)
                return false;
        for (size_t i = 0; i < h->n_validations; i++)
                if (h->validations[i].status != VSTATUS_SUCCESS && h->validations[i].status != VSTATUS_DISABLED)
                        return false;
        return true;
}

static int prepared(struct musterd *d, const struct host *h) {
        enum host_status to;
        const char *why;
        int r = hostfsm_apply(h->status, HOSTFSM_EV_PREPARED, NULL, &to, &why);
        if (r < 0)
                return r;
        r = store_host_set_status(d->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), NULL, 0,
                                  STORE_STATUS(h->status));
        if (r < 0)
                return r;
        musterd_event(d, EVENT_INFO, EVENT_CAT_SYSTEM, h->infra_env_id, h->cluster_id, h->id, "host %s: %s -> %s: %s",
                      h->id, host_status_to_string(h->status), host_status_to_string(to), why);
        return 1;
}

/* A host left the preparation: the cluster is insufficient again. */
static int preparation_failed(struct musterd *d, struct cluster_view *v, const struct host *left) {
        char info[1024];
        const char *name = host_hostname(left) ? host_hostname(left) : left->id;
        snprintf(info, sizeof info, "The installation did not start: host %s is %s: %s", name,
                 host_status_to_string(left->status), left->status_info ? left->status_info : "");
        int r = store_cluster_set_status_from(d->store, v->c.id, v->c.status,
                                              cluster_status_to_string(CLUSTER_INSUFFICIENT), info, NULL, 0);
        if (r == -ESTALE)
                return 0; /* moved meanwhile; whoever moved it decided */
        if (r < 0)
                return r;
        musterd_event(d, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, v->c.id, NULL, "cluster %s (%s): %s -> %s: %s",
                      v->c.name, v->c.id, v->c.status, cluster_status_to_string(CLUSTER_INSUFFICIENT), info);
        for (size_t i = 0; i < v->hosts.n; i++) {
                struct host *h = &v->hosts.v[i];
                enum host_status to;
                const char *why;
                if (h->status != HOST_PREPARING_FOR_INSTALLATION ||
                    hostfsm_apply(h->status, HOSTFSM_EV_PREPARATION_FAILED, NULL, &to, &why) < 0 ||
                    store_host_set_status(d->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), NULL, 0,
                                          STORE_STATUS(h->status)) < 0)
                        continue;
                musterd_event(d, EVENT_WARNING, EVENT_CAT_SYSTEM, h->infra_env_id, h->cluster_id, h->id,
                              "host %s: %s -> %s: %s", h->id, host_status_to_string(h->status),
                              host_status_to_string(to), why);
                h->status = to;
                (void) refresh_host(d, h);
        }
        (void) refresh_cluster(d, v->c.id, NULL);
        return 1;
}

int install_prepare_check(struct musterd *d, const char *cluster_id) {
        struct cluster_view v;
        char info[256];
        int r = cluster_view_load(d, cluster_id, true, &v);
        if (r < 0)
                return r;
        enum cluster_status cs = cluster_status_from_string(v.c.status);
        const struct host *left = NULL;
        size_t preparing = 0, ready = 0, moved = 0;
        for (size_t i = 0; i < v.hosts.n; i++) {
                const struct host *h = &v.hosts.v[i];
                if (h->status == HOST_PREPARING_FOR_INSTALLATION) {
                        preparing++;
                        ready += host_prepared(h);
                } else if (!host_status_is_installing(h->status) && !left)
                        left = h;
        }
        r = 0;
        if (cs == CLUSTER_INSTALLED) {
                /* Day 2: each host on its own. */
                for (size_t i = 0; i < v.hosts.n; i++)
                        if (v.hosts.v[i].status == HOST_PREPARING_FOR_INSTALLATION && host_prepared(&v.hosts.v[i]))
                                r = prepared(d, &v.hosts.v[i]) > 0 ? 1 : r;
        } else if (cs == CLUSTER_PREPARING_FOR_INSTALLATION && left)
                r = preparation_failed(d, &v, left);
        else if (cs == CLUSTER_PREPARING_FOR_INSTALLATION && ready == preparing) {
                for (size_t i = 0; i < v.hosts.n; i++)
                        if (v.hosts.v[i].status == HOST_PREPARING_FOR_INSTALLATION)
                                moved += prepared(d, &v.hosts.v[i]) > 0;
                snprintf(info, sizeof info,
                         "Installation in progress: %zu host(s) installing payload revision %lld", moved + (v.hosts.n - preparing),
                         (long long) v.c.payload_revision);
                if (moved == preparing &&
                    store_cluster_set_status_from(d->store, v.c.id, v.c.status,
                                                  cluster_status_to_string(CLUSTER_INSTALLING), info, NULL, 0) == 0) {
                        musterd_event(d, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, v.c.id, NULL,
                                      "cluster %s (%s): %s -> %s: %s", v.c.name, v.c.id, v.c.status,
                                      cluster_status_to_string(CLUSTER_INSTALLING), info);
                        r = 1;
                } else
                        r = moved > 0;
        }
        cluster_view_free(&v);
        return r;
}
