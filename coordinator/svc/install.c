/* Failures and completion of an installation (install.h). The host state
 * machine says where a host goes; the cluster follows its hosts. */
#include "install.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "clusterrel.h"
#include "errmsg.h"
#include "hostfsm.h"
#include "log.h"
#include "refresh.h"
#include "stepfacts.h"

int install_fail_host(struct svc *sv, const struct host *h, const char *prefix, const char *why) {
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
                r = store_host_set_install_state(sv->store, h->infra_env_id, h->id, to, info, NULL, -1,
                                                 STORE_STATUS(h->status));
                if (r < 0)
                        return r;
                svc_event(sv, EVENT_ERROR, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                              "host %s: %s -> %s: %s", h->id, host_status_to_string(h->status),
                              host_status_to_string(to), info);
        }
        if (!h->cluster_id)
                return 0;
        struct cluster c;
        if (store_cluster_get(sv->store, h->cluster_id, &c) < 0)
                return 0;
        enum cluster_status cs = cluster_status_from_string(c.status);
        if (cluster_status_is_installing(cs)) {
                snprintf(info, sizeof info, "Host %s failed: %s", name, why);
                r = store_cluster_set_status_from(sv->store, c.id, c.status, cluster_status_to_string(CLUSTER_ERROR),
                                                  info, NULL, 0);
                if (r == 0)
                        svc_event(sv, EVENT_ERROR, EVENT_CAT_SYSTEM, NULL, c.id, NULL, "cluster %s (%s): %s -> %s: %s",
                                      c.name, c.id, c.status, cluster_status_to_string(CLUSTER_ERROR), info);
        }
        cluster_free(&c);
        return 0;
}

int install_cluster_check(struct svc *sv, const char *cluster_id) {
        int64_t all = 0, done = 0;
        struct cluster c;
        char info[256];
        int r;

        if ((r = store_cluster_count_hosts(sv->store, cluster_id, 0, &all)) < 0 ||
            (r = store_cluster_count_hosts(sv->store, cluster_id, STORE_STATUS(HOST_INSTALLED), &done)) < 0)
                return r;
        if (all == 0 || done < all)
                return 0;
        if ((r = store_cluster_get(sv->store, cluster_id, &c)) < 0)
                return r;
        if (cluster_status_from_string(c.status) != CLUSTER_INSTALLING) {
                cluster_free(&c);
                return 0;
        }
        snprintf(info, sizeof info, "Cluster is installed: all %lld hosts are installed", (long long) all);
        r = store_cluster_set_status_from(sv->store, c.id, c.status, cluster_status_to_string(CLUSTER_INSTALLED), info,
                                          NULL, 0);
        if (r == 0)
                svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, c.id, NULL, "cluster %s (%s): %s -> %s: %s", c.name,
                              c.id, c.status, cluster_status_to_string(CLUSTER_INSTALLED), info);
        cluster_free(&c);
        return r == 0 ? 1 : r == -ESTALE ? 0 : r;
}

bool install_waits_for_first_boot(const struct host *h) {
        return h->status == HOST_INSTALLING_IN_PROGRESS && h->progress.stage &&
               strcmp(h->progress.stage, install_stage_to_string(INSTALL_STAGE_REBOOTING)) == 0 &&
               h->applied_revision > 0;
}

int install_first_boot(struct svc *sv, struct host *h) {
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
        r = store_host_set_install_state(sv->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), &p, -1,
                                         STORE_STATUS(h->status));
        if (r == -ESTALE)
                return 0;
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                      "host %s: %s -> %s: its installed system checked in (payload revision %lld)", h->id,
                      host_status_to_string(h->status), host_status_to_string(to), (long long) h->applied_revision);
        h->status = to;
        if (h->cluster_id)
                (void) install_cluster_check(sv, h->cluster_id);
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

static int prepared(struct svc *sv, const struct host *h) {
        enum host_status to;
        const char *why;
        int r = hostfsm_apply(h->status, HOSTFSM_EV_PREPARED, NULL, &to, &why);
        if (r < 0)
                return r;
        r = store_host_set_status(sv->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), NULL, 0,
                                  STORE_STATUS(h->status));
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, h->infra_env_id, h->cluster_id, h->id, "host %s: %s -> %s: %s",
                      h->id, host_status_to_string(h->status), host_status_to_string(to), why);
        return 1;
}

/* A host left the preparation: the cluster is insufficient again. */
static int preparation_failed(struct svc *sv, struct cluster_view *v, const struct host *left) {
        char info[1024];
        const char *name = host_hostname(left) ? host_hostname(left) : left->id;
        snprintf(info, sizeof info, "The installation did not start: host %s is %s: %s", name,
                 host_status_to_string(left->status), left->status_info ? left->status_info : "");
        int r = store_cluster_set_status_from(sv->store, v->c.id, v->c.status,
                                              cluster_status_to_string(CLUSTER_INSUFFICIENT), info, NULL, 0);
        if (r == -ESTALE)
                return 0; /* moved meanwhile; whoever moved it decided */
        if (r < 0)
                return r;
        svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, v->c.id, NULL, "cluster %s (%s): %s -> %s: %s",
                      v->c.name, v->c.id, v->c.status, cluster_status_to_string(CLUSTER_INSUFFICIENT), info);
        for (size_t i = 0; i < v->hosts.n; i++) {
                struct host *h = &v->hosts.v[i];
                enum host_status to;
                const char *why;
                if (h->status != HOST_PREPARING_FOR_INSTALLATION ||
                    hostfsm_apply(h->status, HOSTFSM_EV_PREPARATION_FAILED, NULL, &to, &why) < 0 ||
                    store_host_set_status(sv->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), NULL, 0,
                                          STORE_STATUS(h->status)) < 0)
                        continue;
                svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, h->infra_env_id, h->cluster_id, h->id,
                              "host %s: %s -> %s: %s", h->id, host_status_to_string(h->status),
                              host_status_to_string(to), why);
                h->status = to;
                (void) refresh_host(sv, h);
        }
        (void) refresh_cluster(sv, v->c.id, NULL);
        return 1;
}

int install_prepare_check(struct svc *sv, const char *cluster_id) {
        struct cluster_view v;
        char info[256];
        int r = cluster_view_load(sv, cluster_id, true, &v);
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
                                r = prepared(sv, &v.hosts.v[i]) > 0 ? 1 : r;
        } else if (cs == CLUSTER_PREPARING_FOR_INSTALLATION && left)
                r = preparation_failed(sv, &v, left);
        else if (cs == CLUSTER_PREPARING_FOR_INSTALLATION && ready == preparing) {
                for (size_t i = 0; i < v.hosts.n; i++)
                        if (v.hosts.v[i].status == HOST_PREPARING_FOR_INSTALLATION)
                                moved += prepared(sv, &v.hosts.v[i]) > 0;
                snprintf(info, sizeof info,
                         "Installation in progress: %zu host(s) installing payload revision %lld", moved + (v.hosts.n - preparing),
                         (long long) v.c.payload_revision);
                if (moved == preparing &&
                    store_cluster_set_status_from(sv->store, v.c.id, v.c.status,
                                                  cluster_status_to_string(CLUSTER_INSTALLING), info, NULL, 0) == 0) {
                        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, v.c.id, NULL,
                                      "cluster %s (%s): %s -> %s: %s", v.c.name, v.c.id, v.c.status,
                                      cluster_status_to_string(CLUSTER_INSTALLING), info);
                        r = 1;
                } else
                        r = moved > 0;
        }
        cluster_view_free(&v);
        return r;
}

/* ---- starting a cluster's installation ------------------------------------ */

#define FULL_MASTERS 3

/* Auto roles (DESIGN §5): masters first, taken from the auto hosts that
 * meet the master (single-node: sno) minimums, in bind order; the rest
 * workers. Fills roles (v->hosts.n entries at most); returns how many. */
static size_t assign_roles(struct svc *sv, const struct cluster_view *v, struct store_host_role *roles) {
        bool sno = v->c.high_availability_mode == HA_MODE_NONE;
        const struct role_requirements *req = &svc_cfg(sv)->req[sno ? REQ_SNO : REQ_MASTER];
        size_t masters = 0, n = 0;
        long need;

        for (size_t i = 0; i < v->hosts.n; i++)
                masters += v->hosts.v[i].role == ROLE_MASTER;
        need = (long) (sno ? 1 : FULL_MASTERS) - (long) masters;
        /* Two passes: capable hosts become masters, then the rest workers. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < v->hosts.n; i++) {
                        const struct host *h = &v->hosts.v[i];
                        bool taken = false;
                        if (h->role != ROLE_AUTO)
                                continue;
                        for (size_t k = 0; k < n; k++)
                                taken |= roles[k].host_id == h->id;
                        if (taken)
                                continue;
                        bool capable = h->facts.cpu_count >= req->cpu_cores && h->facts.memory_bytes >= req->memory_bytes;
                        if (pass == 0 && (!capable || need <= 0))
                                continue;
                        roles[n++] = (struct store_host_role) {
                                h->infra_env_id, h->id, pass == 0 || (sno && need > 0) ? ROLE_MASTER : ROLE_WORKER
                        };
                        if (pass == 0 || (sno && need > 0))
                                need--;
                }
        return n;
}

static enum host_role role_of(const struct host *h, const struct store_host_role *roles, size_t n) {
        for (size_t k = 0; k < n; k++)
                if (roles[k].host_id == h->id)
                        return roles[k].role;
        return h->role;
}

/* Re-validate the cluster's preparing hosts (the disk speed check is now
 * pending), which may also end the preparation (refresh_cluster). */
static void refresh_preparing(struct svc *sv, const char *cluster_id) {
        struct cluster_view v;
        if (cluster_view_load(sv, cluster_id, true, &v) < 0)
                return;
        for (size_t i = 0; i < v.hosts.n; i++)
                if (v.hosts.v[i].status == HOST_PREPARING_FOR_INSTALLATION)
                        (void) refresh_host(sv, &v.hosts.v[i]);
        cluster_view_free(&v);
}

int install_start_cluster(struct svc *sv, const char *cluster_id, const char *by, char *err, size_t errlen) {
        struct cluster_view v = { 0 };
        struct loaded_release lr;
        struct store_payload p;
        _cleanup_free_ struct store_host_role *roles = NULL;
        enum cluster_status st;
        bool have_view = false;
        int r;

        cluster_init(&v.c);
        store_payload_init(&p);
        lr = (struct loaded_release) { 0 };
        if ((r = refresh_cluster(sv, cluster_id, &st)) < 0 || (r = cluster_view_load(sv, cluster_id, false, &v)) < 0) {
                errmsg(err, errlen, r, "cluster %s cannot be read", cluster_id);
                goto out;
        }
        have_view = true;
        if (st != CLUSTER_READY) {
                r = errmsg(err, errlen, -EBUSY, "cluster is %s, not ready to install: %s", cluster_status_to_string(st),
                           v.c.status_info ? v.c.status_info : "see its validations");
                goto out;
        }
        if ((r = release_load(sv, v.c.release_version, true, &lr)) < 0) {
                if (r == -ENOENT)
                        r = errmsg(err, errlen, -ENOPKG, "release %s is not imported",
                                   v.c.release_version ? v.c.release_version : "(none)");
                else
                        errmsg(err, errlen, r, "release %s cannot be read", v.c.release_version);
                goto out;
        }
        if (!v.c.has_cap_status) {
                char why[400] = "";
                if (clusterrel_compute(&lr, &v.c, &v.c.cap_spec, true, NULL, why, sizeof why) < 0 ||
                    store_cluster_update(sv->store, &v.c, CL_F_CAP_STATUS | CL_F_CONDITIONS) < 0) {
                        r = errmsg(err, errlen, -EDOM, "the capabilities of cluster %s cannot be computed: %s", v.c.id,
                                   why);
                        goto out;
                }
        }
        roles = calloc(v.hosts.n ? v.hosts.n : 1, sizeof *roles);
        if (!roles) {
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
                goto out;
        }
        size_t n_roles = assign_roles(sv, &v, roles);
        /* If the payload cannot be built, nothing moves. */
        char why[400] = "";
        if ((r = clusterrel_build_payload(sv, &v.c, &lr, roles, n_roles, v.c.payload_revision + 1, &p, why, sizeof why)) <
            0) {
                log_error_errno(r, "install", "Building the payload of cluster %s failed: %s", v.c.id, why);
                r = errmsg(err, errlen, r == -ENOMEM ? -ENOMEM : -EIO, "could not build the payload of cluster %s: %s",
                           v.c.id, why);
                goto out;
        }
        r = store_cluster_start_install(sv->store, v.c.id, "Installation started; preparing the hosts",
                                        HOST_PREPARING_FOR_INSTALLATION,
                                        hostfsm_status_info(HOST_PREPARING_FOR_INSTALLATION), roles, n_roles, &p);
        if (r < 0) {
                errmsg(err, errlen, r, r == -ESTALE ? "cluster %s changed state meanwhile; try again"
                                                    : "cluster %s cannot be written", v.c.id);
                goto out;
        }
        int moved = r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, v.c.id, NULL,
                      "installation of cluster %s started by %s with %d host(s)", v.c.id, by, moved);
        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, v.c.id, NULL, "cluster %s (%s): ready -> %s: %s", v.c.name,
                      v.c.id,
                      cluster_status_to_string(CLUSTER_PREPARING_FOR_INSTALLATION),
                      "Installation started; preparing the hosts");
        clusterrel_payload_event(sv, &v.c, &p);
        /* The hosts stay preparing until each has passed its disk speed check
         * (install_prepare_check); their validations say they wait for it. */
        for (size_t i = 0; i < v.hosts.n; i++) {
                struct host *h = &v.hosts.v[i];
                enum host_status prep;
                const char *moved_why;
                if (h->status != HOST_KNOWN ||
                    hostfsm_apply(HOST_KNOWN, HOSTFSM_EV_INSTALL_STARTED, NULL, &prep, &moved_why) < 0)
                        continue;
                svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, h->infra_env_id, v.c.id, h->id,
                              "host %s: known -> %s: %s (role %s)", h->id, host_status_to_string(prep), moved_why,
                              host_role_to_string(role_of(h, roles, n_roles)));
        }
        refresh_preparing(sv, v.c.id);
        r = 0;
out:
        store_payload_free(&p);
        release_unload(&lr);
        if (have_view)
                cluster_view_free(&v);
        else
                cluster_free(&v.c);
        return r;
}
