/* The installation story (install.h): starting, resetting and cancelling
 * it, a day-2 host, progress and step results, failures and completion, the
 * payload revisions. The host state machine says where a host goes; the
 * cluster follows its hosts. */
#include "svc/install.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "svc/addons.h"
#include "cleanup.h"
#include "svc/revisions.h"
#include "errmsg.h"
#include "domain/hostfsm.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"
#include "payload.h"
#include "svc/refresh.h"
#include "domain/stepfacts.h"
#include "domain/steps.h"
#include "svc/uninstall.h"
#include "domain/validations.h"

int installation_fail_host(struct svc *sv, const struct host *h, const char *prefix, const char *why) {
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

/* If every host bound to the cluster is installed, an installing cluster
 * becomes installed (event). 1 if it did, 0 if not yet, -errno. */
static int install_cluster_check(struct svc *sv, const char *cluster_id) {
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

/* Whether h's install step reported success and h waits for its installed
 * system's first check-in (installing-in-progress at stage rebooting). */
static bool install_waits_for_first_boot(const struct host *h) {
        return h->status == HOST_INSTALLING_IN_PROGRESS && h->progress.stage &&
               strcmp(h->progress.stage, install_stage_to_string(INSTALL_STAGE_REBOOTING)) == 0 &&
               h->applied_revision > 0;
}

int installation_first_boot(struct svc *sv, struct host *h) {
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

/* A ready cluster's release with its manifests, and its capabilities status
 * computed if it never was. 0, or -errno with err (-ENOPKG not imported,
 * -EDOM capabilities that cannot be computed). */
static int start_release(struct svc *sv, struct cluster *c, struct loaded_release *lr, char *err, size_t errlen) {
        int r = release_load(sv, c->release_version, true, lr);
        if (r == -ENOENT)
                return errmsg(err, errlen, -ENOPKG, "release %s is not imported",
                              c->release_version ? c->release_version : "(none)");
        if (r < 0)
                return errmsg(err, errlen, r, "release %s cannot be read", c->release_version);
        if (!c->has_cap_status) {
                char why[400] = "";
                if (revisions_compute(lr, c, &c->cap_spec, true, NULL, why, sizeof why) < 0 ||
                    store_cluster_update(sv->store, c, CL_F_CAP_STATUS | CL_F_CONDITIONS) < 0)
                        return errmsg(err, errlen, -EDOM, "the capabilities of cluster %s cannot be computed: %s",
                                      c->id, why);
        }
        return 0;
}

/* The events of a started installation: who started it, the cluster's
 * move, the new payload revision, and each known host's move. */
static void started_events(struct svc *sv, const struct cluster_view *v, const struct payload_record *p,
                           const struct store_host_role *roles, size_t n_roles, int moved, const char *by) {
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, v->c.id, NULL,
                  "installation of cluster %s started by %s with %d host(s)", v->c.id, by, moved);
        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, v->c.id, NULL, "cluster %s (%s): ready -> %s: %s", v->c.name,
                  v->c.id, cluster_status_to_string(CLUSTER_PREPARING_FOR_INSTALLATION),
                  "Installation started; preparing the hosts");
        revisions_payload_event(sv, &v->c, p);
        for (size_t i = 0; i < v->hosts.n; i++) {
                const struct host *h = &v->hosts.v[i];
                enum host_status prep;
                const char *moved_why;
                if (h->status != HOST_KNOWN ||
                    hostfsm_apply(HOST_KNOWN, HOSTFSM_EV_INSTALL_STARTED, NULL, &prep, &moved_why) < 0)
                        continue;
                svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, h->infra_env_id, v->c.id, h->id,
                          "host %s: known -> %s: %s (role %s)", h->id, host_status_to_string(prep), moved_why,
                          host_role_to_string(role_of(h, roles, n_roles)));
        }
}

int svc_install_start_cluster(struct svc *sv, const char *cluster_id, const char *by, char *err, size_t errlen) {
        struct cluster_view v = { 0 };
        struct loaded_release lr;
        struct payload_record p;
        _cleanup_free_ struct store_host_role *roles = NULL;
        enum cluster_status st;
        bool have_view = false;
        int r;

        cluster_init(&v.c);
        payload_record_init(&p);
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
        if ((r = start_release(sv, &v.c, &lr, err, errlen)) < 0)
                goto out;
        roles = calloc(v.hosts.n ? v.hosts.n : 1, sizeof *roles);
        if (!roles) {
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
                goto out;
        }
        size_t n_roles = assign_roles(sv, &v, roles);
        /* If the payload cannot be built, nothing moves. */
        char why[1024] = "";
        if ((r = revisions_build_payload(sv, &v.c, &lr, roles, n_roles, v.c.payload_revision + 1, NULL, &p, why, sizeof why)) <
            0) {
                /* Operators that do not resolve are the user's to fix (409). */
                if (r == -EDOM || r == -ENOENT)
                        r = errmsg(err, errlen, -EDOM, "%s", why);
                else {
                        log_error_errno(r, "install", "Building the payload of cluster %s failed: %s", v.c.id, why);
                        r = errmsg(err, errlen, r == -ENOMEM ? -ENOMEM : -EIO,
                                   "could not build the payload of cluster %s: %s", v.c.id, why);
                }
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
        started_events(sv, &v, &p, roles, n_roles, r, by);
        /* The hosts stay preparing until each has passed its disk speed check
         * (refresh_preparation); their validations say they wait for it. */
        refresh_preparing(sv, v.c.id);
        r = 0;
out:
        payload_record_free(&p);
        svc_release_unload(&lr);
        if (have_view)
                cluster_view_free(&v);
        else
                cluster_free(&v.c);
        return r;
}

/* ---- reset and cancel ---------------------------------------------------- */

/* The hosts a reset (or a cancel) moves and where to, into moves (one per
 * host of v at most); returns how many. A cancel fails only the installing
 * hosts, with its own words. */
static size_t reset_moves(const struct cluster_view *v, bool cancel, const char *info,
                          struct store_host_reset *moves) {
        size_t n = 0;
        for (size_t i = 0; i < v->hosts.n; i++) {
                const struct host *h = &v->hosts.v[i];
                enum host_status to;
                if ((cancel && !host_status_is_installing(h->status)) ||
                    hostfsm_apply(h->status, cancel ? HOSTFSM_EV_FAILED : HOSTFSM_EV_RESET, NULL, &to, NULL) < 0 ||
                    to == h->status)
                        continue;
                moves[n++] = (struct store_host_reset) { h->infra_env_id, h->id, h->status, to,
                                                         cancel ? info : hostfsm_status_info(to) };
        }
        return n;
}

/* The events of a reset or cancel that moved `moved` hosts (the store's
 * count) and the cluster c to `to`. */
static void reset_events(struct svc *sv, const struct cluster *c, bool cancel, const char *by, int moved,
                         enum cluster_status to, const char *info, const struct store_host_reset *moves, size_t n) {
        svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, NULL, c->id, NULL, "installation of cluster %s %s by %s: %d %s",
                  c->id, cancel ? "cancelled" : "reset", by, moved, cancel ? "host(s) told to stop" : "host(s) moved");
        enum event_severity sev = cancel ? EVENT_ERROR : EVENT_INFO;
        svc_event(sv, sev, EVENT_CAT_SYSTEM, NULL, c->id, NULL, "cluster %s (%s): %s -> %s: %s", c->name, c->id,
                  c->status, cluster_status_to_string(to), info);
        for (size_t i = 0; i < n; i++)
                svc_event(sv, sev, EVENT_CAT_SYSTEM, moves[i].infra_env_id, c->id, moves[i].host_id,
                          "host %s: %s -> %s: %s", moves[i].host_id, host_status_to_string(moves[i].from),
                          host_status_to_string(moves[i].to), moves[i].status_info);
}

static int reset_or_cancel(struct svc *sv, const char *cluster_id, const char *by, bool cancel, struct cluster *out,
                           char *err, size_t errlen) {
        struct cluster_view v;
        _cleanup_free_ struct store_host_reset *moves = NULL;
        char info[256];
        int r;

        cluster_init(out);
        if ((r = cluster_view_load(sv, cluster_id, false, &v)) < 0)
                goto out;
        enum cluster_status st = cluster_status_from_string(v.c.status);
        if (!cancel && st == CLUSTER_INSTALLED) {
                r = errmsg(err, errlen, -EBUSY,
                           "cluster %s is installed; change it with an upgrade or new hosts, not a reset", v.c.id);
                goto out;
        }
        if (cancel && !cluster_status_is_installing(st)) {
                r = errmsg(err, errlen, -EBUSY, "cluster %s is %s: only an installation in progress can be cancelled",
                           v.c.id, v.c.status);
                goto out;
        }
        snprintf(info, sizeof info, cancel ? "Installation cancelled by %s"
                                           : "Installation reset by %s; the hosts are checked again", by);
        if (!(moves = calloc(v.hosts.n ? v.hosts.n : 1, sizeof *moves))) {
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
                goto out;
        }
        size_t n = reset_moves(&v, cancel, info, moves);
        /* A cluster that is not failed may still have hosts to bring back
         * (left in error by an earlier reset of one of its hosts' states). */
        if (!cancel && st != CLUSTER_ERROR && !cluster_status_is_installing(st) && n == 0) {
                r = errmsg(err, errlen, -EBUSY, "cluster %s is %s: only a failed or installing cluster can be reset",
                           v.c.id, v.c.status);
                goto out;
        }
        enum cluster_status to = cancel ? CLUSTER_ERROR : CLUSTER_INSUFFICIENT;
        r = (cancel ? store_cluster_cancel : store_cluster_reset)(sv->store, v.c.id, v.c.status,
                                                                  cluster_status_to_string(to), info, moves, n);
        if (r < 0) /* -ESTALE: the cluster changed state meanwhile */
                goto out;
        reset_events(sv, &v.c, cancel, by, r, to, info, moves, n);
        if (!cancel)
                (void) refresh_cluster(sv, v.c.id, NULL);
        r = store_cluster_get(sv->store, v.c.id, out);
out:
        cluster_view_free(&v);
        return r < 0 ? r : 0;
}

int svc_install_reset_cluster(struct svc *sv, const char *cluster_id, const char *by, struct cluster *out, char *err,
                              size_t errlen) {
        return reset_or_cancel(sv, cluster_id, by, false, out, err, errlen);
}

int svc_install_cancel_cluster(struct svc *sv, const char *cluster_id, const char *by, struct cluster *out, char *err,
                               size_t errlen) {
        return reset_or_cancel(sv, cluster_id, by, true, out, err, errlen);
}

/* ---- day 2: one host joins an installed cluster ---------------------------- */

/* The host's settings travel in the payload: when the cluster's latest
 * revision does not carry them as they are now (a host bound after it was
 * built, a hostname set since), the next revision is built and stored, and
 * the installed hosts apply it as any other. 0, or -errno as
 * svc_install_day2_host's. */
static int day2_payload(struct svc *sv, struct cluster *c, char *err, size_t errlen, const char **what) {
        int r = revisions_next_payload(sv, c, NULL, err, errlen, what);
        return r < 0 ? r : 0;
}

int svc_install_day2_host(struct svc *sv, struct host *h, const char *by, char *err, size_t errlen, const char **what) {
        struct cluster c;
        enum host_status prep;
        const char *why;
        int r;

        cluster_init(&c);
        *what = "host";
        if (!h->cluster_id) {
                r = errmsg(err, errlen, -EBUSY, "host %s is bound to no cluster; bind it to an installed cluster first",
                           h->id);
                goto out;
        }
        if ((r = store_cluster_get(sv->store, h->cluster_id, &c)) < 0) {
                *what = "cluster";
                goto out;
        }
        if (cluster_status_from_string(c.status) != CLUSTER_INSTALLED || c.payload_revision <= 0) {
                r = errmsg(err, errlen, -EBUSY, "cluster %s is %s: a host installs on its own only into an installed "
                                                "cluster (install the cluster itself with musterctl cluster install)",
                           c.name, c.status);
                goto out;
        }
        /* The latest look at the host before it moves. */
        (void) refresh_host(sv, h);
        if (hostfsm_apply(h->status, HOSTFSM_EV_INSTALL_STARTED, NULL, &prep, &why) < 0) {
                r = errmsg(err, errlen, -EBUSY, "host %s is %s, not known: %s", h->id, host_status_to_string(h->status),
                           h->status_info ? h->status_info : why);
                goto out;
        }
        if (h->role == ROLE_AUTO) {
                h->role = ROLE_WORKER;
                if ((r = store_host_update(sv->store, h, HOST_F_ROLE)) < 0)
                        goto out;
        }
        if ((r = day2_payload(sv, &c, err, errlen, what)) < 0)
                goto out;
        /* Measured again for this installation (refresh_preparation moves it on). */
        if ((r = store_host_forget_step_result(sv->store, h->infra_env_id, h->id, STEP_INSTALLATION_DISK_SPEED_CHECK)) >=
            0)
                r = store_host_set_status(sv->store, h->infra_env_id, h->id, prep, hostfsm_status_info(prep), NULL, 0,
                                          STORE_STATUS(h->status));
        if (r < 0)
                goto out;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, c.id, h->id,
                  "day-2 install of host %s into cluster %s (payload revision %lld, role %s) started by %s", h->id,
                  c.name, (long long) c.payload_revision, host_role_to_string(h->role), by);
        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, h->infra_env_id, c.id, h->id, "host %s: %s -> %s: %s", h->id,
                  host_status_to_string(h->status), host_status_to_string(prep), why);
        struct host fresh;
        host_init(&fresh);
        if (store_host_get(sv->store, h->infra_env_id, h->id, &fresh) == 0)
                (void) refresh_host(sv, &fresh);
        host_free(&fresh);
        r = 0;
out:
        cluster_free(&c);
        return r;
}

/* ---- the host's own token ------------------------------------------------- */

int svc_install_host_token_rotate(struct svc *sv, const struct host *h, const char *by, int64_t *gen, char **token,
                                  char *err, size_t errlen) {
        int r = store_host_rotate_token(sv->store, h->infra_env_id, h->id, gen);
        if (r < 0)
                return r;
        if (auth_issue_host(sv->key, h->infra_env_id, h->id, *gen, token) < 0)
                return errmsg(err, errlen, -EIO, "could not sign the host token");
        svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, h->infra_env_id, h->cluster_id, h->id,
                  "host token of host %s rotated to generation %lld by %s; older ones are revoked", h->id,
                  (long long) *gen, by);
        return 0;
}

/* ---- progress ------------------------------------------------------------ */

int svc_install_progress(struct svc *sv, const struct host *h, enum install_stage stage, int64_t percent,
                         const char *info, char *err, size_t errlen) {
        enum host_status to;
        char status_info[256];

        if (hostfsm_apply(h->status, HOSTFSM_EV_PROGRESS, NULL, &to, NULL) < 0)
                return errmsg(err, errlen, -EBUSY, "host %s is %s, not installing", h->id,
                              host_status_to_string(h->status));
        snprintf(status_info, sizeof status_info, "Installation in progress: %s (%lld%%)",
                 install_stage_to_string(stage), (long long) percent);
        struct host_progress p = { .stage = (char *) install_stage_to_string(stage), .percent = percent,
                                   .info = (char *) info };
        int r = store_host_set_install_state(sv->store, h->infra_env_id, h->id, to, status_info, &p, -1,
                                             STORE_STATUS(h->status));
        if (r == -ESTALE)
                return errmsg(err, errlen, -ESTALE, "host %s changed state meanwhile", h->id);
        if (r < 0)
                return r;
        if (to != h->status)
                svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                          "host %s: %s -> %s: %s", h->id, host_status_to_string(h->status),
                          host_status_to_string(to), status_info);
        return 0;
}

/* ---- payload revisions ---------------------------------------------------- */

int svc_install_payload_list(struct svc *sv, const char *cluster_id, struct payload_record_list *out) {
        return store_payload_list(sv->store, cluster_id, out);
}

int svc_install_payload_bound(struct svc *sv, const char *infra_env_id, const char *host_id, const char *cluster_id) {
        struct host_filter f = { .infra_env_id = infra_env_id, .cluster_id = cluster_id, .no_inventory = true,
                                       .host_id = host_id && *host_id ? host_id : NULL };
        struct list_page pg = { .limit = 1 };
        struct host_list l = { 0 };
        bool ok = store_host_list(sv->store, &f, &pg, &l) == 0 && l.n > 0;
        host_list_free(&l);
        return ok;
}

int svc_install_payload_envelope(struct svc *sv, const char *cluster_id, int64_t rev, char **env, char *err,
                                 size_t errlen, const char **what) {
        struct cluster c;
        struct payload_record p;
        int r;

        *env = NULL;
        cluster_init(&c);
        payload_record_init(&p);
        *what = "cluster";
        if ((r = store_cluster_get(sv->store, cluster_id, &c)) < 0)
                goto out;
        *what = "payload";
        r = store_payload_get(sv->store, c.id, rev, &p);
        if (r == -ENOENT) {
                r = errmsg(err, errlen, -ENOENT, "cluster %s has no payload revision %lld", c.id, (long long) rev);
                goto out;
        }
        if (r < 0)
                goto out;
        /* As stored (a high-S signature of an older revision as its low-S
         * twin): the agent checks digest and signature. */
        *env = payload_envelope(p.cluster_id, p.revision, p.digest, p.signature, p.canonical, p.canonical_len);
        if (!*env)
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
out:
        payload_record_free(&p);
        cluster_free(&c);
        return r;
}

/* ---- the install step ----------------------------------------------------- */

int installation_steps_input(struct svc *sv, struct host *h, struct cluster *c, struct steps_input *in) {
        char err[256];
        int r = store_cluster_get(sv->store, h->cluster_id, c);
        if (r < 0)
                return r;
        in->cluster_id = c->id;
        in->payload_revision = c->payload_revision;
        in->applied_revision = h->applied_revision;
        in->role = h->role;
        in->installation_disk = NULL;
        in->install_written = install_waits_for_first_boot(h);
        if (h->status == HOST_INSTALLED || !h->inventory_json)
                return 0;
        if (!h->inventory && host_parse_inventory(h, err, sizeof err) < 0)
                return 0;
        /* The disk has-min-valid-disks approved (the same function). */
        in->installation_disk = validations_install_disk_path(h->inventory, h->installation_disk_id,
                                                              c->high_availability_mode == HA_MODE_NONE, h->role,
                                                              svc_cfg(sv));
        return 0;
}

/* The revision a step id names ("install-3", "apply-3"), or 0. */
static int64_t step_revision(const char *step_id, const char *prefix) {
        size_t n = strlen(prefix);
        if (!step_id || strncmp(step_id, prefix, n) != 0)
                return 0;
        char *end;
        long long v = strtoll(step_id + n, &end, 10);
        return *end || v <= 0 ? 0 : v;
}

static int64_t output_i64(json_object *output, const char *key, int64_t fallback) {
        json_object *v;
        if (json_object_is_type(output, json_type_object) && json_object_object_get_ex(output, key, &v) &&
            json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
                return json_object_get_int64(v);
        return fallback;
}

static size_t output_count(json_object *output, const char *key) {
        json_object *v;
        if (json_object_is_type(output, json_type_object) && json_object_object_get_ex(output, key, &v) &&
            json_object_is_type(v, json_type_array))
                return json_object_array_length(v);
        return 0;
}

/* The install step's result: everything is written. The host is installed
 * once its installed system checks in (installation_first_boot); until then it
 * waits at stage rebooting, with first_boot_timeout to do it. */
static void install_done(struct svc *sv, struct host *h, int64_t rev, json_object *output) {
        struct host_progress p = { .stage = (char *) install_stage_to_string(INSTALL_STAGE_REBOOTING), .percent = 100 };
        enum host_status to;
        char info[160], more[256] = "", status_info[256];
        json_object *root;
        if (install_waits_for_first_boot(h))
                return; /* a repeat */
        if (hostfsm_apply(h->status, HOSTFSM_EV_PROGRESS, NULL, &to, NULL) < 0)
                return;
        snprintf(info, sizeof info, "Payload revision %lld written; waiting for the installed system to check in",
                 (long long) rev);
        snprintf(status_info, sizeof status_info, "Installation in progress: %s", info);
        p.info = info;
        if (store_host_set_install_state(sv->store, h->infra_env_id, h->id, to, status_info, &p, rev,
                                         STORE_STATUS(h->status)) < 0)
                return;
        if (json_object_is_type(output, json_type_object) && json_object_object_get_ex(output, "root_partition", &root) &&
            json_object_is_type(root, json_type_string))
                snprintf(more, sizeof more, "; root file system on %.200s", json_object_get_string(root));
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                  "host %s: payload revision %lld written%s; waiting up to %lld s for its installed system to "
                  "check in", h->id, (long long) rev, more, (long long) svc_cfg(sv)->first_boot_timeout_s);
}

static void apply_done(struct svc *sv, struct host *h, int64_t rev, int64_t exit_code, json_object *output,
                       const char *error) {
        char info[1024];
        if (exit_code != 0) {
                snprintf(info, sizeof info, "Applying payload revision %lld failed: %s", (long long) rev,
                         error && *error ? error : "no reason given");
                (void) store_host_set_install_state(sv->store, h->infra_env_id, h->id, HOST_INSTALLED, info, NULL, -1,
                                                    STORE_STATUS(HOST_INSTALLED));
                svc_event(sv, EVENT_ERROR, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                          "host %s failed to apply payload revision %lld: %s", h->id, (long long) rev,
                          error && *error ? error : "no reason given");
                svc_addon_apply_failed(sv, h->cluster_id, h->id, rev, error);
                return;
        }
        /* What the node agent found beside muster's files (out-of-band
         * releases the add-ons must leave alone). */
        json_object *found;
        if (json_object_is_type(output, json_type_object) && json_object_object_get_ex(output, "found", &found))
                svc_addon_found(sv, h, found);
        int64_t applied = output_i64(output, "applied_revision", rev);
        if (applied <= h->applied_revision)
                return; /* a repeat */
        if (store_host_set_install_state(sv->store, h->infra_env_id, h->id, HOST_INSTALLED,
                                         hostfsm_status_info(HOST_INSTALLED), NULL, applied,
                                         STORE_STATUS(HOST_INSTALLED)) < 0)
                return;
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                  "host %s applied payload revision %lld: %zu added, %zu updated, %zu removed%s", h->id,
                  (long long) applied, output_count(output, "added"), output_count(output, "updated"),
                  output_count(output, "removed"), output_count(output, "deleted") ? "; operands deleted" : "");
        /* An uninstall waiting for this host's report goes on now. */
        if (h->cluster_id && svc_uninstall_follow(sv, h->cluster_id) < 0)
                log_warning_fields("cleanup", ((struct log_fields) { .host = h->id, .cluster = h->cluster_id }),
                                   "Following the uninstalls of cluster %s failed", h->cluster_id);
}

void svc_install_step_result(struct svc *sv, struct host *h, const char *step_id, int64_t exit_code,
                             json_object *output, const char *error) {
        int64_t rev_install = step_revision(step_id, INSTALL_STEP_ID_PREFIX);
        int64_t rev_apply = step_revision(step_id, APPLY_STEP_ID_PREFIX);
        bool installing = h->status == HOST_INSTALLING || h->status == HOST_INSTALLING_IN_PROGRESS;

        if (rev_apply || (!rev_install && h->status == HOST_INSTALLED)) {
                if (h->status == HOST_INSTALLED)
                        apply_done(sv, h, rev_apply ? rev_apply : output_i64(output, "applied_revision", 0), exit_code,
                                   output, error);
        } else if (installing) {
                if (exit_code == 0)
                        install_done(sv, h, output_i64(output, "applied_revision", rev_install), output);
                else if (installation_fail_host(sv, h, NULL, error) == 0 &&
                         store_host_actions(sv->store, h->infra_env_id, h->id, HOST_ACTION_GATHER_LOGS, 0, 0, 0) == 0)
                        /* Its agent still runs: its logs, for whoever looks
                         * into the failure (as the Assisted Installer does). */
                        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, h->infra_env_id, h->cluster_id, h->id,
                                  "asked host %s for its logs after the failed install (musterctl host logs %s -o "
                                  "FILE)", h->id, h->id);
        }
        /* Anything else is a late repeat of a result already taken. */
}

/* ---- the disk speed check ------------------------------------------------- */

/* A finite number member >= 0 of o, copied into rec; false if absent or bad. */
static bool copy_ms(json_object *o, json_object *rec, const char *key, double *out) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return false;
        double x = json_object_get_double(v);
        if (!(x >= 0 && x < 1e9))
                return false;
        if (out)
                *out = x;
        return jadd(rec, key, json_object_new_double(x)) == 0;
}

/* A printable string member of o of at most max bytes, copied into rec. */
static const char *copy_str(json_object *o, json_object *rec, const char *key, size_t max) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);
        if (n == 0 || n > max || strlen(s) != n)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return NULL;
        return jadd(rec, key, json_object_new_string(s)) == 0 ? s : NULL;
}

/* The record of a check that failed for `reason` (control characters
 * blanked, cut to 512 bytes): the disk, failed, the error; *words gets the
 * event's. NULL when out of memory. */
static json_object *disk_speed_failed(const struct host *h, const char *disk, const char *reason, char *words,
                                      size_t wordslen) {
        json_object *rec = json_object_new_object();
        char cut[513];
        snprintf(cut, sizeof cut, "%s", reason);
        for (char *p = cut; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = ' ';
        if (!rec || jadd_str_or_null(rec, "disk", disk) < 0 ||
            jadd(rec, "failed", json_object_new_boolean(true)) < 0 ||
            jadd(rec, "error", json_object_new_string(cut)) < 0) {
                json_object_put(rec);
                return NULL;
        }
        snprintf(words, wordslen, "host %s: the installation disk speed check on %s failed: %s", h->id,
                 disk ? disk : "(no disk chosen)", cut);
        return rec;
}

/* The rest of a measurement (rec has its disk and p99_ms): median, max,
 * method, path, mount and writes where valid; *words gets the event's. */
static void disk_speed_measured(struct svc *sv, const struct host *h, const char *disk, json_object *output,
                                json_object *rec, double p99, char *words, size_t wordslen) {
        double median = 0, max = 0;
        json_object *v;
        bool has_median = copy_ms(output, rec, "median_ms", &median);
        bool has_max = copy_ms(output, rec, "max_ms", &max);
        const char *method = copy_str(output, rec, "method", 16);
        const char *path = copy_str(output, rec, "path", 4096);
        (void) copy_str(output, rec, "mount", 4096);
        int64_t writes = 0;
        if (json_object_object_get_ex(output, "writes", &v) && json_object_is_type(v, json_type_int) &&
            json_object_get_int64(v) >= 1 && json_object_get_int64(v) <= 1000) {
                writes = json_object_get_int64(v);
                (void) jadd(rec, "writes", json_object_new_int64(writes));
        }
        snprintf(words, wordslen,
                 "host %s: installation disk %s: fdatasync p99 %.2f ms (median %.2f, max %.2f ms; "
                 "%lld writes, %s on %.200s); at most %lld ms allowed",
                 h->id, disk ? disk : "(no disk chosen)", p99, has_median ? median : NAN, has_max ? max : NAN,
                 (long long) writes, method ? method : "?", path ? path : "?",
                 (long long) svc_cfg(sv)->install_disk_fsync_ms);
}

int svc_install_disk_speed_result(struct svc *sv, struct host *h, int64_t exit_code, json_object *output,
                                  const char *error, char *err, size_t errlen, const char **what) {
        _cleanup_json_ json_object *rec = json_object_new_object();
        struct steps_input in = { 0 };
        struct cluster c;
        char words[1024];
        double p99 = 0;
        int r = 0;

        cluster_init(&c);
        *what = "cluster";
        /* Handed out while preparing, answered after it ended: stale. */
        if (h->status != HOST_PREPARING_FOR_INSTALLATION || !h->cluster_id)
                goto out;
        if ((r = installation_steps_input(sv, h, &c, &in)) < 0)
                goto out;
        const char *disk = in.installation_disk;
        if (!rec || jadd_str_or_null(rec, "disk", disk) < 0) {
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
                goto out;
        }
        /* The agent is not trusted: only the members the validation and the
         * events read are kept, each checked. */
        const char *reason = NULL;
        if (exit_code != 0)
                reason = error && *error ? error : "the agent gave no reason";
        else if (!json_object_is_type(output, json_type_object) || !copy_ms(output, rec, "p99_ms", &p99))
                reason = "the agent's result has no valid p99_ms";
        if (reason) {
                json_object_put(rec);
                if (!(rec = disk_speed_failed(h, disk, reason, words, sizeof words))) {
                        r = errmsg(err, errlen, -ENOMEM, "out of memory");
                        goto out;
                }
        } else
                disk_speed_measured(sv, h, disk, output, rec, p99, words, sizeof words);
        *what = "step result";
        r = store_host_set_step_result(sv->store, h->infra_env_id, h->id, STEP_INSTALLATION_DISK_SPEED_CHECK,
                                       json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
        if (r < 0)
                goto out;
        svc_event(sv, reason || p99 > (double) svc_cfg(sv)->install_disk_fsync_ms ? EVENT_WARNING : EVENT_INFO,
                  EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id, "%s", words);
        /* The validation decides: a failure takes the host out of its
         * preparation (and the cluster's, refresh_cluster); a pass may be the
         * last one the cluster waited for. */
        struct host fresh;
        host_init(&fresh);
        if (store_host_get(sv->store, h->infra_env_id, h->id, &fresh) == 0) {
                (void) refresh_host(sv, &fresh);
                (void) refresh_preparation(sv, h->cluster_id);
        }
        host_free(&fresh);
        r = 0;
out:
        cluster_free(&c);
        return r;
}
