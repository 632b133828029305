/* Validations and state for hosts and clusters (refresh.h): gather the
 * facts from the store, call the pure validations and state machine, write
 * back what changed, and say so in events. */
#include "svc/refresh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "svc/revisions.h"
#include "json-cleanup.h"
#include "svc/opresolve.h"
#include "domain/hostfsm.h"
#include "log.h"
#include "domain/stepfacts.h"
#include "domain/validations.h"

int cluster_view_load(struct svc *sv, const char *cluster_id, bool with_inventory, struct cluster_view *v) {
        char err[256];
        cluster_init(&v->c);
        v->hosts = (struct host_list) { 0 };
        int r = store_cluster_get(sv->store, cluster_id, &v->c);
        if (r < 0)
                return r;
        struct host_filter f = { .cluster_id = cluster_id, .no_inventory = !with_inventory };
        struct list_page pg = { .limit = STORE_MAX_LIMIT };
        r = store_host_list(sv->store, &f, &pg, &v->hosts);
        if (r < 0) {
                cluster_view_free(v);
                return r;
        }
        for (size_t i = 0; with_inventory && i < v->hosts.n; i++)
                if (v->hosts.v[i].inventory_json)
                        (void) host_parse_inventory(&v->hosts.v[i], err, sizeof err);
        return 0;
}

void cluster_view_free(struct cluster_view *v) {
        cluster_free(&v->c);
        host_list_free(&v->hosts);
}

/* What a bound host's validations compare it with: its cluster's settings,
 * its peers' names, and its network steps' results (a disk speed result
 * for the disk it measured only). The strings live in *view (*have_view
 * once it is loaded), *peers, *sf. */
static int bound_facts(struct svc *sv, struct host *h, struct host_facts *f, struct cluster_view *view,
                       bool *have_view, struct host_peer **peers, struct step_facts *sf) {
        char cluster_domain[300] = "";
        int r = cluster_view_load(sv, h->cluster_id, false, view);
        if (r < 0)
                return r;
        *have_view = true;
        f->cluster.single_node = view->c.high_availability_mode == HA_MODE_NONE;
        f->cluster.cpu_architecture = view->c.cpu_architecture;
        f->cluster.name = view->c.name;
        f->cluster.base_dns_domain = view->c.base_dns_domain;
        f->cluster.machine_network_cidr = view->c.machine_network_cidr;
        f->cluster.api_vip = view->c.api_vip;
        f->cluster.ingress_vip = view->c.ingress_vip;
        *peers = calloc(view->hosts.n ? view->hosts.n : 1, sizeof **peers);
        if (!*peers)
                return -ENOMEM;
        for (size_t i = 0; i < view->hosts.n; i++) {
                const struct host *p = &view->hosts.v[i];
                if (host_same(p, h))
                        continue;
                (*peers)[f->cluster.n_peers++] = (struct host_peer) { p->id, host_hostname(p) };
        }
        f->cluster.peers = *peers;
        if (view->c.name && view->c.base_dns_domain)
                snprintf(cluster_domain, sizeof cluster_domain, "%s.%s", view->c.name, view->c.base_dns_domain);
        if ((r = step_facts_parse(h->step_results_json, cluster_domain[0] ? cluster_domain : NULL, sf)) < 0)
                return r;
        step_facts_keep_disk(sf, validations_install_disk_path(h->inventory, h->installation_disk_id,
                                                                f->cluster.single_node, h->role, svc_cfg(sv)));
        step_facts_apply(sf, f);
        return 0;
}

/* What the validations res[0..n) give h: its next status, the status info
 * and the validations to store. */
struct verdict {
        enum host_status to;
        char info[1024];
        struct validation *v;
        size_t nv;
};

/* 1 with *vd (free vd->v), 0 when h's state does not follow validations,
 * or -ENOMEM. */
static int verdict_of(const struct host *h, const struct validation_result *res, size_t n, struct verdict *vd) {
        struct hostfsm_ctx ctx = { .validations = res, .n_validations = n };
        *vd = (struct verdict) { 0 };
        if (hostfsm_apply(h->status, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &vd->to, NULL) < 0)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (validation_list_set(&vd->v, &vd->nv, res[i].id, res[i].status, res[i].message) < 0) {
                        validation_list_free(&vd->v, &vd->nv);
                        return -ENOMEM;
                }
        hostfsm_format_status_info(vd->to, res, n, vd->info, sizeof vd->info);
        return 1;
}

/* The events of a verdict: one for each validation that starts or stops
 * failing, one for a change of status; into ev[0..VAL_HOST_COUNT]. */
static size_t verdict_events(const struct host *h, const struct validation_result *res, size_t n,
                             const struct verdict *vd, struct event *ev) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                const struct validation *old = validation_list_find(h->validations, h->n_validations, res[i].id);
                bool bad_now = res[i].status == VSTATUS_FAILURE || res[i].status == VSTATUS_ERROR;
                bool bad_before = old && (old->status == VSTATUS_FAILURE || old->status == VSTATUS_ERROR);
                if (bad_now == bad_before || (!old && !bad_now))
                        continue;
                svc_event_make(&ev[k++], bad_now ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_SYSTEM, h->infra_env_id,
                               h->cluster_id, h->id, "host %s: validation %s %s: %s", h->id,
                               validation_id_to_string(res[i].id), bad_now ? "fails" : "passes now", res[i].message);
        }
        if (vd->to != h->status)
                svc_event_make(&ev[k++],
                               vd->to == HOST_INSUFFICIENT_UNBOUND || vd->to == HOST_INSUFFICIENT ? EVENT_WARNING
                                                                                              : EVENT_INFO,
                               EVENT_CAT_SYSTEM, h->infra_env_id, h->cluster_id, h->id, "host %s: %s -> %s: %s", h->id,
                               host_status_to_string(h->status), host_status_to_string(vd->to), vd->info);
        return k;
}

/* The verdict is stored, and its events ev[0..nev) with it (`recorded`) or
 * not yet: they go to the store (unless recorded) and the sink, and are
 * freed; h takes its new status; a bound host's cluster follows a change. */
static void verdict_stored(struct svc *sv, struct host *h, const struct verdict *vd, struct event *ev, size_t nev,
                           bool recorded) {
        for (size_t i = 0; i < nev; i++) {
                int r = recorded ? 0 : store_event_append_unwaited(sv->store, &ev[i]);
                if (r < 0)
                        log_warning_errno(r, "events", "Failed to record event \"%s\": %m",
                                          ev[i].message ? ev[i].message : "?");
                else
                        svc_event_emit(sv, &ev[i]);
                event_free(&ev[i]);
        }
        if (vd->to != h->status) {
                h->status = vd->to;
                if (h->cluster_id)
                        (void) refresh_cluster(sv, h->cluster_id, NULL);
        }
}

/* Store the status the validations res[0..n) give h (when its state
 * follows validations), with events for what changed; a bound host's
 * cluster follows a change. 0 (a lost race counts as done) or -errno. */
static int store_host_verdict(struct svc *sv, struct host *h, const struct validation_result *res, size_t n) {
        struct verdict vd;
        int r = verdict_of(h, res, n, &vd);
        if (r <= 0)
                return r;
        r = store_host_set_status(sv->store, h->infra_env_id, h->id, vd.to, vd.info, vd.v, vd.nv,
                                  STORE_STATUS(h->status));
        if (r >= 0) {
                struct event ev[VAL_HOST_COUNT + 1];
                verdict_stored(sv, h, &vd, ev, verdict_events(h, res, n, &vd, ev), false);
        }
        validation_list_free(&vd.v, &vd.nv);
        return r == -ESTALE ? 0 : r;
}

/* h's validations into res (its inventory parsed if it was not), against
 * its infra-env (ie, or read when NULL) and, bound, its cluster: how many,
 * -ENOENT when it was unbound meanwhile, or -errno. */
static int host_validations(struct svc *sv, struct host *h, const struct infra_env *ie,
                            struct validation_result *res) {
        char err[256];
        struct cluster_view view;
        struct host_peer *peers = NULL;
        struct step_facts sf = { 0 };
        int r = 0;

        if (h->inventory_json && !h->inventory)
                (void) host_parse_inventory(h, err, sizeof err);
        struct infra_env own;
        infra_env_init(&own);
        if (!ie) {
                if (store_infra_env_get(sv->store, h->infra_env_id, &own) < 0)
                        infra_env_init(&own); /* deleted meanwhile: nothing to compare with */
                ie = &own;
        }
        struct host_facts f = {
                .status = h->status,
                .has_inventory = h->inventory_json != NULL,
                .inventory = h->inventory,
                .seconds_since_checkin = 0,
                .requested_hostname = h->requested_hostname,
                .installation_disk_id = h->installation_disk_id,
                .infra_env_name = ie->name,
                .infra_env_cpu_architecture = ie->cpu_architecture,
                .bound = h->cluster_id != NULL,
                .role = h->role,
        };
        bool have_view = false;
        if (!h->cluster_id || (r = bound_facts(sv, h, &f, &view, &have_view, &peers, &sf)) >= 0)
                r = validations_host(&f, svc_cfg(sv), res);
        step_facts_free(&sf);
        free(peers);
        if (have_view)
                cluster_view_free(&view);
        infra_env_free(&own);
        return r;
}

int refresh_host(struct svc *sv, struct host *h) {
        struct validation_result res[VAL_HOST_COUNT];
        int n = host_validations(sv, h, NULL, res);
        if (n == -ENOENT)
                return 0; /* unbound meanwhile */
        return n < 0 ? n : store_host_verdict(sv, h, res, (size_t) n);
}

int refresh_host_inventory(struct svc *sv, struct host *h, const struct infra_env *ie, char *text,
                           struct inventory *inv) {
        struct inventory *own = malloc(sizeof *own);
        if (!own) {
                free(text);
                return -ENOMEM;
        }
        free(h->inventory_json);
        h->inventory_json = text;
        *own = *inv;
        inventory_init(inv);
        host_set_parsed_inventory(h, own);
        h->has_inventory = true;

        struct validation_result res[VAL_HOST_COUNT];
        struct verdict vd = { 0 };
        int n = host_validations(sv, h, ie, res);
        int k = n >= 0 ? verdict_of(h, res, (size_t) n, &vd) : 0;
        if (k < 0)
                return k;
        /* The verdict's events go in the same write. */
        struct event ev[VAL_HOST_COUNT + 1];
        size_t nev = k == 1 ? verdict_events(h, res, (size_t) n, &vd, ev) : 0;
        struct store_host_status st = { .status = vd.to, .status_info = vd.info, .v = vd.v, .n_v = vd.nv,
                                        .expect_mask = STORE_STATUS(h->status), .events = ev, .n_events = nev };
        int r = store_host_set_inventory_status(sv->store, h->infra_env_id, h->id, text, h->inventory,
                                                k == 1 ? &st : NULL);
        if (r == 1)
                verdict_stored(sv, h, &vd, ev, nev, true);
        else
                for (size_t i = 0; i < nev; i++)
                        event_free(&ev[i]);
        validation_list_free(&vd.v, &vd.nv);
        if (r < 0)
                return r;
        if (r == 0 && (k == 1 || n < 0)) {
                /* Its status changed since it was read (or its cluster went
                 * meanwhile): validated again as it is stored now. */
                struct host fresh;
                if (store_host_get(sv->store, h->infra_env_id, h->id, &fresh) == 0)
                        (void) refresh_host(sv, &fresh);
                host_free(&fresh);
        }
        return 0;
}

/* What a cluster's validations look at: its settings, its hosts, its
 * release (imported or not) and whether its capabilities can be computed.
 * The strings live in *view, *lr, *hosts and caperr. */
static bool has_condition(const struct cluster *c, const char *type) {
        for (size_t i = 0; i < c->n_conditions; i++)
                if (c->conditions[i].type && strcmp(c->conditions[i].type, type) == 0)
                        return true;
        return false;
}

/* The cluster's operators resolved: the facts of operators-resolvable
 * (*why owns the explanation) and the OperatorsResolvable condition, stored
 * when it changed. A resolution that cannot run at all (a catalog the
 * subscriptions name is gone) fails the validation with its reason. */
static void operator_facts(struct svc *sv, struct cluster *c, struct cluster_facts *f, char **why) {
        struct op_resolution op;
        char err[512] = "";
        struct op_options quick = { .subscribed_only = true };
        int r = opresolve_cluster(sv, c, &quick, &op, err, sizeof err);
        f->operators_subscribed = op.n_rsubs > 0;
        if (r < 0)
                *why = strdup(err);
        else if (!op.none && !op.plan.ok)
                *why = opresolve_problems_text(&op.plan);
        else if (!op.none)
                f->n_operator_bundles = op.plan.n_steps;
        f->operators_error = r < 0 || (!op.none && !op.plan.ok) ? (*why ? *why : "out of memory") : NULL;
        if (r >= 0 && (!op.none || has_condition(c, "OperatorsResolvable"))) {
                _cleanup_json_ json_object *cond = opresolve_condition(&op);
                if (cond && revisions_set_condition(c, cond) > 0)
                        store_cluster_update(sv->store, c, CL_F_CONDITIONS);
        }
        opresolve_free(&op);
}

static int cluster_facts(struct svc *sv, const struct cluster_view *view, struct loaded_release *lr,
                         struct cluster_host **hosts, char *caperr, size_t caperrlen, struct cluster_facts *f) {
        bool imported = release_load(sv, view->c.release_version, false, lr) == 0;
        const char *capmsg = NULL;
        if (imported) {
                struct cap_spec sp = { .baseline = view->c.cap_spec.baseline_capability_set,
                                       .additional = view->c.cap_spec.additional_enabled_capabilities };
                if (cap_validate_spec(&lr->r.info, &sp, caperr, caperrlen) < 0)
                        capmsg = caperr;
                else if (!view->c.has_cap_status)
                        capmsg = "the capabilities status is not computed yet";
        }
        *hosts = calloc(view->hosts.n ? view->hosts.n : 1, sizeof **hosts);
        if (!*hosts)
                return -ENOMEM;
        for (size_t i = 0; i < view->hosts.n; i++) {
                const struct host *h = &view->hosts.v[i];
                (*hosts)[i] = (struct cluster_host) { h->id, host_hostname(h), h->role, h->status, h->inventory };
        }
        *f = (struct cluster_facts) {
                .single_node = view->c.high_availability_mode == HA_MODE_NONE,
                .name = view->c.name,
                .base_dns_domain = view->c.base_dns_domain,
                .machine_network_cidr = view->c.machine_network_cidr,
                .api_vip = view->c.api_vip,
                .ingress_vip = view->c.ingress_vip,
                .pull_secret = view->c.pull_secret,
                .hosts = *hosts,
                .n_hosts = view->hosts.n,
                .release_version = view->c.release_version,
                .release_imported = imported,
                .capabilities_error = capmsg,
                .n_enabled_capabilities = view->c.cap_status.enabled_capabilities.n,
                .n_known_capabilities = imported ? lr->r.info.known_capabilities.n : 0,
        };
        return 0;
}

int refresh_cluster(struct svc *sv, const char *cluster_id, enum cluster_status *status_out) {
        struct validation_result res[VAL_CLUSTER_COUNT];
        struct cluster_view view;
        struct cluster_host *hosts = NULL;
        struct validation *v = NULL;
        size_t nv = 0;
        enum cluster_status cur, to = _CLUSTER_STATUS_INVALID;
        bool preparing = false;
        struct loaded_release lr;
        char caperr[256];
        _cleanup_free_ char *opwhy = NULL;
        int r = cluster_view_load(sv, cluster_id, true, &view);
        if (r < 0)
                return r;
        struct cluster_facts f;
        lr = (struct loaded_release) { 0 };
        if ((r = cluster_facts(sv, &view, &lr, &hosts, caperr, sizeof caperr, &f)) < 0)
                goto out;
        operator_facts(sv, &view.c, &f, &opwhy);
        int n = validations_cluster(&f, svc_cfg(sv), res);
        if (n < 0) {
                r = n;
                goto out;
        }
        cur = to = cluster_status_from_string(view.c.status);
        char info[1024] = "";
        if (cur == CLUSTER_PENDING_FOR_INPUT || cur == CLUSTER_INSUFFICIENT || cur == CLUSTER_READY ||
            cur == _CLUSTER_STATUS_INVALID)
                to = validations_cluster_status(res, (size_t) n, info, sizeof info);
        else
                snprintf(info, sizeof info, "%s", view.c.status_info ? view.c.status_info : "");
        for (int i = 0; i < n; i++)
                if (validation_list_set(&v, &nv, res[i].id, res[i].status, res[i].message) < 0) {
                        r = -ENOMEM;
                        goto out;
                }
        r = store_cluster_set_status_from(sv->store, view.c.id, view.c.status, cluster_status_to_string(to), info, v,
                                          nv);
        /* A host that left its preparation, or the last one passing it,
         * moves a preparing cluster (install.h). */
        preparing = r == 0 && cur == CLUSTER_PREPARING_FOR_INSTALLATION;
        if (r == -ESTALE) { /* changed meanwhile; whoever changed it refreshes */
                r = 0;
                to = cur;
                goto out;
        }
        if (r < 0)
                goto out;
        if (to != cur)
                svc_event(sv, to == CLUSTER_INSUFFICIENT ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_SYSTEM, NULL,
                              view.c.id, NULL, "cluster %s (%s): %s -> %s: %s", view.c.name, view.c.id,
                              view.c.status ? view.c.status : "?", cluster_status_to_string(to), info);
out:
        validation_list_free(&v, &nv);
        free(hosts);
        cluster_view_free(&view);
        svc_release_unload(&lr);
        if (preparing && refresh_preparation(sv, cluster_id) > 0) {
                struct cluster c;
                cluster_init(&c);
                if (store_cluster_get(sv->store, cluster_id, &c) == 0)
                        to = cluster_status_from_string(c.status);
                cluster_free(&c);
        }
        if (r >= 0 && status_out)
                *status_out = to;
        return r;
}

/* ---- the preparation of an installation ----------------------------------- */

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

/* Whether every host of the cluster, as stored now, is past its
 * preparation: installing or installing-in-progress. */
static bool all_installing_now(struct svc *sv, const char *cluster_id) {
        struct cluster_view w;
        if (cluster_view_load(sv, cluster_id, true, &w) < 0)
                return false;
        bool all = w.hosts.n > 0;
        for (size_t i = 0; i < w.hosts.n && all; i++)
                all = w.hosts.v[i].status == HOST_INSTALLING || w.hosts.v[i].status == HOST_INSTALLING_IN_PROGRESS;
        cluster_view_free(&w);
        return all;
}

int refresh_preparation(struct svc *sv, const char *cluster_id) {
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
                /* Two results at once (two threads, or two replicas) may each
                 * move some of the hosts and neither all of them: whoever
                 * finds every host installing now moves the cluster (its
                 * expected status lets only one of them). */
                if (moved < preparing && all_installing_now(sv, cluster_id)) {
                        snprintf(info, sizeof info, "Installation in progress: %zu host(s) installing payload revision %lld",
                                 v.hosts.n, (long long) v.c.payload_revision);
                        moved = preparing;
                }
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
