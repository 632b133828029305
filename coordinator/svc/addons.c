/* Add-on proxies, their releases and the reconciler (addons.h). */
#include "svc/addons.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/addonlock.h"
#include "domain/addon.h"
#include "cleanup.h"
#include "svc/revisions.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"

const char *svc_addon_action_to_string(enum addon_action a) {
        switch (a) {
        case ADDON_ACTION_PAUSE: return "pause";
        case ADDON_ACTION_RESUME: return "resume";
        case ADDON_ACTION_ROLLBACK: return "rollback";
        case _ADDON_ACTION_MAX: break;
        }
        return NULL;
}

static void lock(struct svc *sv) {
        svc_addon_lock(sv->addons);
}

static void unlock(struct svc *sv) {
        svc_addon_unlock(sv->addons);
}

static void set_str(char **dst, const char *v) {
        char *d = v ? strdup(v) : NULL;
        free(*dst);
        *dst = d;
}

/* A stored spec, parsed. */
static int spec_load(const struct addon_proxy_record *p, struct addon_spec *s) {
        _cleanup_json_ json_object *o = json_tokener_parse(p->spec);
        char err[256];
        int r = o ? addon_spec_parse(o, s, err, sizeof err) : -EINVAL;
        if (r < 0)
                log_error("addons", "The stored spec of add-on proxy %s does not parse: %s", p->name,
                          o ? err : "not JSON");
        return r;
}

static char *spec_text(const struct addon_spec *s) {
        _cleanup_json_ json_object *o = addon_spec_to_json(s);
        const char *t = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                          : NULL;
        return t ? strdup(t) : NULL;
}

/* ---- the clusters of a pass --------------------------------------------------- */

enum phase {
        PHASE_BEFORE,     /* not installing yet: releases change at once */
        PHASE_INSTALLING, /* its install payload is fixed: changes wait */
        PHASE_INSTALLED,  /* changes go through payload revisions, in stages */
};

static enum phase phase_of(const struct cluster *c) {
        switch (cluster_status_from_string(c->status)) {
        case CLUSTER_PREPARING_FOR_INSTALLATION:
        case CLUSTER_INSTALLING:
        case CLUSTER_FINALIZING:
                return PHASE_INSTALLING;
        case CLUSTER_INSTALLED:
                return c->payload_revision > 0 ? PHASE_INSTALLED : PHASE_INSTALLING;
        case CLUSTER_PENDING_FOR_INPUT:
        case CLUSTER_INSUFFICIENT:
        case CLUSTER_READY:
        case CLUSTER_ERROR:
        case _CLUSTER_STATUS_MAX:
        case _CLUSTER_STATUS_INVALID:
                break;
        }
        return PHASE_BEFORE;
}

/* An out-of-band Helm release a node agent found. */
struct oob {
        char *name, *ns, *file, *host;
};

struct pcl {
        struct cluster c;
        struct addon_cluster ac;
        json_object *ctx;         /* the template context, made when first needed */
        enum phase phase;
        bool touched;             /* its payload must be built again */
        bool hosts_loaded;
        struct host_list hosts;
        struct oob *oob;
        size_t n_oob;
};

struct pproxy {
        struct addon_proxy_record p;
        struct addon_spec spec;
        bool ok;                  /* the spec parsed */
        bool dirty;               /* the row must be written */
        size_t in_flight, failures;
};

struct pass {
        struct svc *sv;
        int64_t now;
        struct pcl *cl;           /* sorted by id */
        size_t ncl;
        struct pproxy *px;
        size_t npx;
        struct addon_release_record_list rel;
        struct addon_release_record **relx; /* sorted by (proxy_id, cluster_id) */
        struct addon_release_record **fresh; /* rows made in this pass */
        size_t nfresh;
        int changed;
};

static int cl_cmp(const void *a, const void *b) {
        return strcmp(((const struct pcl *) a)->c.id, ((const struct pcl *) b)->c.id);
}

static struct pcl *cl_find(struct pass *ps, const char *id) {
        struct pcl key = { .c.id = (char *) id };
        return id ? bsearch(&key, ps->cl, ps->ncl, sizeof *ps->cl, cl_cmp) : NULL;
}

static int rel_cmp(const void *a, const void *b) {
        const struct addon_release_record *x = *(struct addon_release_record *const *) a,
                                         *y = *(struct addon_release_record *const *) b;
        int c = strcmp(x->proxy_id, y->proxy_id);
        return c ? c : strcmp(x->cluster_id, y->cluster_id);
}

static struct addon_release_record *rel_find(struct pass *ps, const char *proxy_id, const char *cluster_id) {
        struct addon_release_record key = { .proxy_id = (char *) proxy_id, .cluster_id = (char *) cluster_id }, *kp = &key;
        struct addon_release_record **f = bsearch(&kp, ps->relx, ps->rel.n, sizeof *ps->relx, rel_cmp);
        return f ? *f : NULL;
}

static void pass_free(struct pass *ps) {
        for (size_t i = 0; i < ps->ncl; i++) {
                struct pcl *p = &ps->cl[i];
                cluster_free(&p->c);
                json_object_put(p->ctx);
                host_list_free(&p->hosts);
                for (size_t k = 0; k < p->n_oob; k++) {
                        free(p->oob[k].name);
                        free(p->oob[k].ns);
                        free(p->oob[k].file);
                        free(p->oob[k].host);
                }
                free(p->oob);
        }
        free(ps->cl);
        for (size_t i = 0; i < ps->npx; i++) {
                addon_proxy_record_free(&ps->px[i].p);
                addon_spec_free(&ps->px[i].spec);
        }
        free(ps->px);
        addon_release_record_list_free(&ps->rel);
        free(ps->relx);
        for (size_t i = 0; i < ps->nfresh; i++) {
                addon_release_record_free(ps->fresh[i]);
                free(ps->fresh[i]);
        }
        free(ps->fresh);
        *ps = (struct pass) { 0 };
}

/* What node agents found that is a Helm release (HelmChart objects in
 * helm.cattle.io), per cluster. */
static int load_oob(struct pass *ps) {
        struct store_host_found_list fl;
        int r = store_host_found_list(ps->sv->store, NULL, &fl);
        if (r < 0)
                return r;
        for (size_t i = 0; i < fl.n; i++) {
                struct pcl *p = cl_find(ps, fl.v[i].cluster_id);
                _cleanup_json_ json_object *a = p ? json_tokener_parse(fl.v[i].found) : NULL;
                size_t n = json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
                for (size_t k = 0; k < n; k++) {
                        json_object *o = json_object_array_get_idx(a, k), *v;
                        const char *kind = json_object_object_get_ex(o, "kind", &v) ? json_object_get_string(v) : NULL;
                        const char *grp = json_object_object_get_ex(o, "group", &v) ? json_object_get_string(v) : NULL;
                        const char *name = json_object_object_get_ex(o, "name", &v) ? json_object_get_string(v) : NULL;
                        const char *ns = json_object_object_get_ex(o, "release_namespace", &v)
                                                 ? json_object_get_string(v)
                                                 : NULL;
                        const char *file = json_object_object_get_ex(o, "file", &v) ? json_object_get_string(v) : NULL;
                        if (!kind || !grp || !name || !ns || strcmp(kind, HELMCHART_KIND) != 0 ||
                            strcmp(grp, HELMCHART_GROUP) != 0)
                                continue;
                        struct oob *e = inv_array_append((void **) &p->oob, &p->n_oob, sizeof *e);
                        if (!e) {
                                store_host_found_list_free(&fl);
                                return -ENOMEM;
                        }
                        *e = (struct oob) { strdup(name), strdup(ns), strdup(file ? file : "?"),
                                            strdup(fl.v[i].host_id) };
                }
        }
        store_host_found_list_free(&fl);
        return 0;
}

static int count_cmp(const void *a, const void *b) {
        return strcmp(((const struct store_cluster_count *) a)->cluster_id,
                      ((const struct store_cluster_count *) b)->cluster_id);
}

/* The hosts of cluster id in counts (store_cluster_host_counts: sorted). */
static int64_t hosts_of(const struct store_cluster_count *counts, size_t n, const char *id) {
        struct store_cluster_count key;
        snprintf(key.cluster_id, sizeof key.cluster_id, "%s", id);
        const struct store_cluster_count *f = n ? bsearch(&key, counts, n, sizeof *counts, count_cmp) : NULL;
        return f ? f->hosts : 0;
}

static int pass_load(struct svc *sv, struct pass *ps) {
        struct addon_proxy_record_list pl;
        struct store_cluster_count *counts = NULL;
        size_t ncounts = 0;
        int r;

        *ps = (struct pass) { .sv = sv, .now = svc_now(sv) };
        if ((r = store_addon_proxy_list(sv->store, &pl)) < 0)
                return r;
        ps->px = calloc(pl.n ? pl.n : 1, sizeof *ps->px);
        if (!ps->px) {
                addon_proxy_record_list_free(&pl);
                return -ENOMEM;
        }
        for (size_t i = 0; i < pl.n; i++) {
                ps->px[i].p = pl.v[i];
                ps->px[i].ok = spec_load(&ps->px[i].p, &ps->px[i].spec) == 0;
        }
        ps->npx = pl.n;
        free(pl.v);

        struct list_page pg = { .limit = STORE_MAX_LIMIT };
        for (;;) {
                struct cluster_list l;
                if ((r = store_cluster_list(sv->store, NULL, &pg, &l)) < 0)
                        return r;
                struct pcl *n = realloc(ps->cl, (ps->ncl + l.n + 1) * sizeof *n);
                if (!n) {
                        cluster_list_free(&l);
                        return -ENOMEM;
                }
                ps->cl = n;
                for (size_t i = 0; i < l.n; i++)
                        ps->cl[ps->ncl++] = (struct pcl) { .c = l.v[i] };
                free(l.v);
                if (!l.next_after)
                        break;
                pg.after = l.next_after;
        }
        qsort(ps->cl, ps->ncl, sizeof *ps->cl, cl_cmp);
        if ((r = store_cluster_host_counts(sv->store, &counts, &ncounts)) < 0)
                return r;
        for (size_t i = 0; i < ps->ncl; i++) {
                struct pcl *p = &ps->cl[i];
                addon_cluster_from_model(&p->c, hosts_of(counts, ncounts, p->c.id), &p->ac);
                p->phase = phase_of(&p->c);
        }
        free(counts);
        if ((r = store_addon_release_list(sv->store, NULL, NULL, NULL, &ps->rel)) < 0)
                return r;
        ps->relx = calloc(ps->rel.n ? ps->rel.n : 1, sizeof *ps->relx);
        if (!ps->relx)
                return -ENOMEM;
        for (size_t i = 0; i < ps->rel.n; i++)
                ps->relx[i] = &ps->rel.v[i];
        qsort(ps->relx, ps->rel.n, sizeof *ps->relx, rel_cmp);
        return load_oob(ps);
}

static int cl_hosts(struct svc *sv, struct pcl *p) {
        if (p->hosts_loaded)
                return 0;
        struct host_filter f = { .cluster_id = p->c.id, .no_inventory = true };
        struct list_page pg = { .limit = STORE_MAX_LIMIT };
        int r = store_host_list(sv->store, &f, &pg, &p->hosts);
        if (r == 0)
                p->hosts_loaded = true;
        return r;
}

static const struct oob *oob_find(const struct pcl *p, const char *name, const char *ns) {
        for (size_t i = 0; i < p->n_oob; i++)
                if (strcmp(p->oob[i].name, name) == 0 && strcmp(p->oob[i].ns, ns) == 0)
                        return &p->oob[i];
        return NULL;
}

/* ---- writing releases --------------------------------------------------------- */

static int rel_put(struct pass *ps, struct addon_release_record *r) {
        int e = store_addon_release_put(ps->sv->store, r);
        if (e < 0)
                log_error_errno(e, "addons", "Storing the release of proxy %s on cluster %s failed: %m", r->proxy_id,
                                r->cluster_id);
        else
                ps->changed++;
        return e;
}

static void rel_set(struct addon_release_record *r, enum addon_status st, const char *msg) {
        set_str(&r->status, addon_status_to_string(st));
        set_str(&r->message, msg && *msg ? msg : NULL);
}

/* A row made in this pass, kept with the others until it ends. */
static struct addon_release_record *rel_fresh(struct pass *ps, struct pproxy *x, struct pcl *p, const char *content) {
        struct addon_release_record *r = calloc(1, sizeof *r);
        struct addon_release_record **v = r ? inv_array_append((void **) &ps->fresh, &ps->nfresh, sizeof *v) : NULL;
        if (!v) {
                free(r);
                return NULL;
        }
        *v = r;
        r->proxy_id = strdup(x->p.id);
        r->cluster_id = strdup(p->c.id);
        r->content = strdup(content);
        r->generation = x->p.generation;
        return r->proxy_id && r->cluster_id && r->content ? r : NULL;
}

/* A release for a cluster that has none (old NULL), or whose release left
 * and comes back (old, removing): a new revision with content. */
static int rel_new(struct pass *ps, struct pproxy *x, struct pcl *p, struct addon_release_record *old,
                   const char *content, enum addon_status st, const char *msg) {
        struct addon_release_record *r = old;
        int e;
        if (r) {
                char *c = strdup(content);
                if (!c)
                        return -ENOMEM;
                free(r->content);
                r->content = c;
                r->revision++;
                r->generation = x->p.generation;
        } else if (!(r = rel_fresh(ps, x, p, content)))
                return -ENOMEM;
        else
                r->revision = 1;
        r->payload_revision = 0;
        r->applied_at = 0;
        r->started_at = st == ADDON_ROLLING ? ps->now : 0;
        r->conflict = false;
        rel_set(r, st, msg);
        if (!r->status)
                return -ENOMEM;
        if ((e = rel_put(ps, r)) == 0)
                svc_event(ps->sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, p->c.id, NULL,
                          "add-on %s: release revision %lld for cluster %s (%s)", x->p.name, (long long) r->revision,
                          p->c.name, addon_status_to_string(st));
        return e;
}

/* A new revision of an existing release: content replaces what it held. */
static int rel_update(struct pass *ps, struct pproxy *x, struct pcl *p, struct addon_release_record *r,
                      const char *content, enum addon_status st, const char *msg) {
        char *prev = r->content;
        r->content = strdup(content);
        if (!r->content) {
                r->content = prev;
                return -ENOMEM;
        }
        free(r->prev_content);
        r->prev_content = prev;
        r->revision++;
        r->generation = x->p.generation;
        r->payload_revision = 0;
        r->started_at = st == ADDON_ROLLING ? ps->now : 0;
        r->applied_at = 0;
        rel_set(r, st, msg);
        int e = rel_put(ps, r);
        if (e == 0)
                svc_event(ps->sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, p->c.id, NULL,
                          "add-on %s: release revision %lld for cluster %s (%s)", x->p.name, (long long) r->revision,
                          p->c.name, addon_status_to_string(st));
        return e;
}

/* ---- one proxy ------------------------------------------------------------------ */

/* A cluster's release to be started by the rollout. */
struct candidate {
        struct pcl *p;
        struct addon_release_record *r; /* NULL: a new release */
        char *content;
};

static int cand_cmp(const void *a, const void *b) {
        const struct candidate *x = a, *y = b;
        int c = strcmp(x->p->c.name, y->p->c.name);
        return c ? c : strcmp(x->p->c.id, y->p->c.id);
}

/* The release leaves the cluster: removed at once when nothing of it can be
 * on the cluster, else left out of the next payload. */
static void rel_remove(struct pass *ps, struct pproxy *x, struct pcl *p, struct addon_release_record *r) {
        enum addon_status st = addon_status_from_string(r->status);
        if (st == ADDON_REMOVING)
                return;
        if (p->phase == PHASE_BEFORE || r->conflict) {
                if (store_addon_release_delete(ps->sv->store, r->proxy_id, r->cluster_id) == 0) {
                        ps->changed++;
                        svc_event(ps->sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, p->c.id, NULL,
                                  "add-on %s: release removed from cluster %s", x->p.name, p->c.name);
                }
                rel_set(r, ADDON_REMOVING, NULL); /* gone: not counted below */
                r->conflict = false;
                r->payload_revision = -1;
                return;
        }
        rel_set(r, ADDON_REMOVING, "leaving the cluster's payload");
        r->payload_revision = 0;
        r->started_at = ps->now;
        if (rel_put(ps, r) == 0) {
                p->touched = true;
                svc_event(ps->sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, p->c.id, NULL,
                          "add-on %s: removing its release from cluster %s", x->p.name, p->c.name);
        }
}

/* Mark r (or a new row) as held by an out-of-band release. */
static void rel_conflict(struct pass *ps, struct pproxy *x, struct pcl *p, struct addon_release_record *r,
                         const char *content, const struct oob *o) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "an out-of-band Helm release %s/%s is on the cluster (file %s on host %s); musterd leaves it alone",
                 o->ns, o->name, o->file, o->host);
        if (!r) {
                struct addon_release_record *n = rel_fresh(ps, x, p, content);
                if (!n)
                        return;
                n->revision = 1;
                n->conflict = true;
                rel_set(n, ADDON_FAILED, msg);
                if (n->status)
                        (void) rel_put(ps, n);
        } else {
                bool was = r->conflict;
                r->conflict = true;
                r->payload_revision = 0;
                rel_set(r, ADDON_FAILED, msg);
                if (rel_put(ps, r) == 0 && !was)
                        p->touched = true; /* the next payload leaves it out */
        }
        svc_event(ps->sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, p->c.id, NULL, "add-on %s on cluster %s: %s",
                  x->p.name, p->c.name, msg);
}

static void proxy_pass(struct pass *ps, struct pproxy *x) {
        struct candidate *cand = NULL;
        size_t ncand = 0;
        char err[512];

        if (!x->ok)
                return; /* a spec that does not parse (logged) changes nothing */
        for (size_t i = 0; i < ps->ncl; i++) {
                struct pcl *p = &ps->cl[i];
                struct addon_release_record *r = rel_find(ps, x->p.id, p->c.id);
                bool sel = x->ok && !x->p.deleting && addon_selects(&x->spec, &p->ac);
                if (!sel) {
                        if (r)
                                rel_remove(ps, x, p, r);
                        continue;
                }
                /* What it wants there: rendered again only when the proxy's
                 * generation or the cluster's facts changed. */
                const char *text = NULL;
                int e = addon_want(svc_addon_memo(ps->sv->addons), x->p.id, x->p.generation, &x->spec, &p->ac,
                                   &p->ctx, &text, err, sizeof err);
                if (e < 0) {
                        /* A cluster's facts changed so that its values no longer render. */
                        if (r && (!r->message || strcmp(r->message, err) != 0)) {
                                set_str(&r->message, err);
                                (void) rel_put(ps, r);
                        }
                        continue;
                }
                enum addon_status st = r ? addon_status_from_string(r->status) : ADDON_PENDING;
                const struct oob *o = oob_find(p, x->spec.release_name, x->spec.namespace);
                if (o) {
                        if (!r || !r->conflict)
                                rel_conflict(ps, x, p, r, text, o);
                        continue;
                }
                if (r && r->conflict) {
                        /* The out-of-band release is gone: musterd may install it now. */
                        r->conflict = false;
                        r->payload_revision = 0;
                        rel_set(r, ADDON_PENDING, "the out-of-band release is gone");
                        (void) rel_put(ps, r);
                        st = ADDON_PENDING;
                }
                bool same = r && st != ADDON_REMOVING && strcmp(r->content, text) == 0;
                if (same || (r && st != ADDON_REMOVING && x->spec.strategy == ADDON_INSTALL_ONCE))
                        continue;
                if (p->phase != PHASE_INSTALLED) {
                        const char *msg = "waiting for the cluster to be installed";
                        if (!r || st == ADDON_REMOVING)
                                (void) rel_new(ps, x, p, r, text, ADDON_PENDING, msg);
                        else if (p->phase == PHASE_BEFORE)
                                (void) rel_update(ps, x, p, r, text, ADDON_PENDING, msg);
                        continue; /* installing: its payload is fixed until it is installed */
                }
                struct candidate *c = inv_array_append((void **) &cand, &ncand, sizeof *c);
                if (!c || !(c->content = strdup(text))) {
                        log_error("addons", "Out of memory reconciling add-on %s", x->p.name);
                        break;
                }
                c->p = p;
                c->r = r; /* NULL: a new release; removing: it comes back */
        }

        /* The rollout: how many may start now. */
        if (ncand > 0) {
                bool pause = false;
                size_t failures = x->failures > (size_t) x->p.failure_base ? x->failures - (size_t) x->p.failure_base : 0;
                size_t slots = addon_rollout_slots(&x->spec.rollout, x->in_flight, failures, &pause);
                if (x->p.rollback_generation == x->p.generation) {
                        slots = SIZE_MAX; /* a rollback is not staged */
                        pause = false;
                }
                if (pause && !x->p.paused) {
                        x->p.paused = true;
                        x->dirty = true;
                        svc_event(ps->sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, NULL, NULL,
                                  "add-on %s: rollout paused: %zu cluster(s) failed (max_failures %lld); "
                                  "`musterctl addon rollout resume|rollback %s` decides",
                                  x->p.name, failures, (long long) x->spec.rollout.max_failures, x->p.name);
                }
                if (x->p.paused)
                        slots = 0;
                qsort(cand, ncand, sizeof *cand, cand_cmp);
                for (size_t i = 0; i < ncand && i < slots; i++) {
                        struct candidate *c = &cand[i];
                        enum addon_status st = c->r ? addon_status_from_string(c->r->status) : ADDON_PENDING;
                        int e = !c->r || st == ADDON_REMOVING
                                        ? rel_new(ps, x, c->p, c->r, c->content, ADDON_ROLLING, NULL)
                                        : rel_update(ps, x, c->p, c->r, c->content, ADDON_ROLLING, NULL);
                        if (e == 0) {
                                c->p->touched = true;
                                x->in_flight++;
                        }
                }
        }
        for (size_t i = 0; i < ncand; i++)
                free(cand[i].content);
        free(cand);
}

/* ---- following the agents -------------------------------------------------------- */

/* The state of one release of an installed cluster, from its hosts. */
static void rel_track(struct pass *ps, struct pproxy *x, struct pcl *p, struct addon_release_record *r) {
        enum addon_status st = addon_status_from_string(r->status);
        struct addon_track_out out;
        char msg[1024];

        if (r->payload_revision < 0)
                return; /* removed in this pass */
        if (st == ADDON_FAILED) {
                if (r->generation == x->p.generation && !r->conflict)
                        x->failures++;
                return;
        }
        if (p->phase != PHASE_INSTALLED || st == ADDON_PENDING)
                return;
        if (cl_hosts(ps->sv, p) < 0)
                return;
        struct addon_track_in in = {
                .status = st,
                .payload_revision = r->payload_revision,
                .min_applied = INT64_MAX,
                .started_s = r->started_at,
                .applied_s = r->applied_at,
                .now_s = ps->now,
                .ro = &x->spec.rollout,
        };
        for (size_t i = 0; i < p->hosts.n; i++) {
                const struct host *h = &p->hosts.v[i];
                if (h->status == HOST_DISCONNECTED && !in.disconnected_host)
                        in.disconnected_host = h->id;
                if (h->status != HOST_INSTALLED && h->status != HOST_DISCONNECTED)
                        continue; /* a host still installing follows on its own */
                in.hosts++;
                if (h->applied_revision < in.min_applied)
                        in.min_applied = h->applied_revision;
                if (h->applied_revision < r->payload_revision && !in.lagging_host)
                        in.lagging_host = h->id;
        }
        if (in.hosts == 0)
                in.min_applied = 0;
        addon_track(&in, &out, msg, sizeof msg);
        if (out.in_flight && r->generation == x->p.generation)
                x->in_flight++;
        if (out.removed) {
                if (store_addon_release_delete(ps->sv->store, r->proxy_id, r->cluster_id) == 0) {
                        ps->changed++;
                        r->payload_revision = -1;
                        svc_event(ps->sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, p->c.id, NULL,
                                  "add-on %s: release removed from cluster %s (payload revision %lld applied)",
                                  x->p.name, p->c.name, (long long) in.payload_revision);
                }
                return;
        }
        bool moved = out.status != st;
        if (!moved && ((!r->message && !*msg) || (r->message && strcmp(r->message, msg) == 0)))
                return;
        if (moved && out.status == ADDON_APPLIED) {
                r->applied_revision = r->revision;
                r->applied_at = ps->now;
        }
        if (moved && out.status == ADDON_FAILED && r->generation == x->p.generation)
                x->failures++;
        rel_set(r, out.status, msg);
        if (rel_put(ps, r) == 0 && moved)
                svc_event(ps->sv, out.status == ADDON_FAILED ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_SYSTEM, NULL,
                          p->c.id, NULL, "add-on %s on cluster %s: revision %lld %s%s%s", x->p.name, p->c.name,
                          (long long) r->revision, addon_status_to_string(out.status), *msg ? ": " : "", msg);
}

/* Pending releases of installed clusters (kept while the cluster was not
 * installed) and removals waiting for a payload get one now. */
static void rel_promote(struct pass *ps, struct pcl *p, struct addon_release_record *r) {
        enum addon_status st = addon_status_from_string(r->status);
        if (p->phase != PHASE_INSTALLED || r->payload_revision != 0 || r->conflict)
                return;
        if (st == ADDON_PENDING) {
                rel_set(r, ADDON_ROLLING, NULL);
                r->started_at = ps->now;
                if (rel_put(ps, r) == 0)
                        p->touched = true;
        } else if (st == ADDON_ROLLING || st == ADDON_REMOVING)
                p->touched = true; /* its payload was not built yet */
}

/* Build the payloads of the clusters whose releases moved, and note which
 * revision carries them. */
static void payloads(struct pass *ps) {
        char err[1024];
        for (size_t i = 0; i < ps->ncl; i++) {
                struct pcl *p = &ps->cl[i];
                const char *what = "payload";
                if (!p->touched)
                        continue;
                int e = revisions_next_payload(ps->sv, &p->c, NULL, err, sizeof err, &what);
                if (e < 0)
                        log_warning_fields("addons", ((struct log_fields) { .cluster = p->c.id }),
                                           "The add-ons' payload of cluster %s could not be built: %s", p->c.name,
                                           err[0] ? err : strerror(-e));
                for (size_t k = 0; k < ps->rel.n + ps->nfresh; k++) {
                        struct addon_release_record *r = k < ps->rel.n ? &ps->rel.v[k] : ps->fresh[k - ps->rel.n];
                        enum addon_status st = addon_status_from_string(r->status);
                        if (strcmp(r->cluster_id, p->c.id) != 0 || r->payload_revision != 0 ||
                            (st != ADDON_ROLLING && st != ADDON_REMOVING && !r->conflict))
                                continue;
                        if (e < 0) {
                                char msg[1200];
                                snprintf(msg, sizeof msg, "no payload revision could be built: %s", err);
                                set_str(&r->message, msg);
                        } else
                                r->payload_revision = p->c.payload_revision;
                        (void) rel_put(ps, r);
                }
        }
}

/* ---- the proxy's status ---------------------------------------------------------- */

struct counts {
        size_t selected, pending, rolling, applied, failed, removing, conflicts, up_to_date;
};

static void count_one(const struct addon_release_record *v, const struct addon_proxy_record *p, struct counts *c,
                      char *failed_on, size_t flen) {
        if (strcmp(v->proxy_id, p->id) != 0 || v->payload_revision < 0)
                return;
        {
                enum addon_status st = addon_status_from_string(v->status);
                if (st != ADDON_REMOVING)
                        c->selected++;
                switch (st) {
                case ADDON_PENDING: c->pending++; break;
                case ADDON_ROLLING: c->rolling++; break;
                case ADDON_APPLIED: c->applied++; break;
                case ADDON_FAILED:
                        c->failed++;
                        if (failed_on && strlen(failed_on) + 40 < flen) {
                                if (*failed_on)
                                        strcat(failed_on, ", ");
                                strncat(failed_on, v->cluster_id, 36);
                        }
                        break;
                case ADDON_REMOVING: c->removing++; break;
                case _ADDON_STATUS_MAX:
                case _ADDON_STATUS_INVALID: break;
                }
                if (v->conflict)
                        c->conflicts++;
                if (st != ADDON_REMOVING && v->generation == p->generation && !v->conflict)
                        c->up_to_date++;
        }
}

static void count_releases(const struct addon_release_record *v, size_t n, struct addon_release_record *const *more,
                           size_t nmore, const struct addon_proxy_record *p, struct counts *c, char *failed_on,
                           size_t flen) {
        *c = (struct counts) { 0 };
        if (failed_on && flen)
                failed_on[0] = '\0';
        for (size_t i = 0; i < n; i++)
                count_one(&v[i], p, c, failed_on, flen);
        for (size_t i = 0; i < nmore; i++)
                count_one(more[i], p, c, failed_on, flen);
}

static json_object *condition(const char *type, bool ok, const char *reason, const char *msg) {
        json_object *o = json_object_new_object();
        if (o && (jadd(o, "type", json_object_new_string(type)) < 0 ||
                  jadd(o, "status", json_object_new_string(ok ? "True" : "False")) < 0 ||
                  jadd(o, "reason", json_object_new_string(reason)) < 0 ||
                  jadd(o, "message", json_object_new_string(msg)) < 0)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* The conditions of p over its releases, the transition times kept from
 * the stored ones when a status did not move. */
static json_object *conditions(const struct addon_proxy_record *p, const struct counts *c, const char *failed_on,
                               const char *now) {
        char m1[1024], m2[512], m3[256];
        const char *r1, *r2, *r3;
        bool ready = c->applied == c->selected && c->removing == 0;
        if (ready) {
                r1 = "ReleasesApplied";
                snprintf(m1, sizeof m1, "%zu of %zu release(s) applied", c->applied, c->selected);
        } else if (c->conflicts) {
                r1 = "OutOfBandRelease";
                snprintf(m1, sizeof m1, "%zu cluster(s) hold an out-of-band release of the same name: %s", c->conflicts,
                         failed_on);
        } else if (c->failed) {
                r1 = "ReleasesFailed";
                snprintf(m1, sizeof m1, "%zu release(s) failed on cluster(s) %s", c->failed, failed_on);
        } else {
                r1 = "ReleasesPending";
                snprintf(m1, sizeof m1, "%zu of %zu release(s) applied; %zu pending, %zu rolling, %zu removing",
                         c->applied, c->selected, c->pending, c->rolling, c->removing);
        }
        bool current = c->up_to_date == c->selected;
        r2 = current ? "SpecsUpToDate" : p->paused ? "RolloutPaused" : "RolloutInProgress";
        snprintf(m2, sizeof m2, "%zu of %zu cluster(s) have generation %lld", c->up_to_date, c->selected,
                 (long long) p->generation);
        r3 = p->paused ? "Paused" : "Running";
        snprintf(m3, sizeof m3, "%s", p->paused ? "the rollout is paused; resume or roll back" : "the rollout runs");

        _cleanup_json_ json_object *a = json_object_new_array(), *old = p->conditions ? json_tokener_parse(p->conditions)
                                                                                          : NULL;
        json_object *v[3] = { condition("ReleasesReady", ready, r1, m1), condition("SpecsUpToDate", current, r2, m2),
                              condition("RolloutPaused", p->paused, r3, m3) };
        bool ok = a != NULL;
        for (size_t i = 0; i < 3; i++) {
                if (!v[i] || !ok) {
                        json_object_put(v[i]);
                        ok = false;
                        continue;
                }
                const char *time = now;
                size_t n = json_object_is_type(old, json_type_array) ? json_object_array_length(old) : 0;
                for (size_t k = 0; k < n; k++) {
                        json_object *o = json_object_array_get_idx(old, k), *t, *s, *lt;
                        if (json_object_object_get_ex(o, "type", &t) && json_object_object_get_ex(o, "status", &s) &&
                            json_object_object_get_ex(o, "last_transition_time", &lt) &&
                            strcmp(json_object_get_string(t), json_object_get_string(json_object_object_get(v[i], "type"))) == 0 &&
                            strcmp(json_object_get_string(s), json_object_get_string(json_object_object_get(v[i], "status"))) == 0)
                                time = json_object_get_string(lt);
                }
                ok = jadd(v[i], "last_transition_time", json_object_new_string(time)) == 0 &&
                     json_object_array_add(a, v[i]) == 0;
                if (!ok)
                        json_object_put(v[i]);
        }
        return ok ? TAKE_PTR(a) : NULL;
}

static void proxy_status(struct pass *ps, struct pproxy *x) {
        struct counts c;
        char failed_on[512], now[MODEL_TIME_LEN];
        if (model_now_rfc3339(now) < 0)
                return;
        count_releases(ps->rel.v, ps->rel.n, ps->fresh, ps->nfresh, &x->p, &c, failed_on, sizeof failed_on);
        _cleanup_json_ json_object *conds = conditions(&x->p, &c, failed_on, now);
        const char *t = conds ? json_object_to_json_string_ext(conds, JSON_C_TO_STRING_PLAIN) : NULL;
        if (!t)
                return;
        /* The stored ones, when only a transition time would differ, stay. */
        _cleanup_json_ json_object *old = x->p.conditions ? json_tokener_parse(x->p.conditions) : NULL;
        bool same = old && json_object_array_length(old) == json_object_array_length(conds);
        for (size_t i = 0; same && i < json_object_array_length(conds); i++) {
                json_object *a = json_object_array_get_idx(conds, i), *b = json_object_array_get_idx(old, i);
                same = json_object_equal(a, b);
        }
        if (!same) {
                set_str(&x->p.conditions, t);
                x->dirty = true;
        }
}

/* ---- the pass --------------------------------------------------------------------- */

static int reconcile_locked(struct svc *sv) {
        struct pass ps;
        int r = pass_load(sv, &ps);
        if (r < 0) {
                pass_free(&ps);
                return r;
        }
        /* What is in flight and failed, from the agents' reports; pending
         * releases of newly installed clusters start. */
        for (size_t i = 0; i < ps.rel.n; i++) {
                struct addon_release_record *rl = &ps.rel.v[i];
                struct pcl *p = cl_find(&ps, rl->cluster_id);
                struct pproxy *x = NULL;
                for (size_t k = 0; k < ps.npx && !x; k++)
                        if (strcmp(ps.px[k].p.id, rl->proxy_id) == 0)
                                x = &ps.px[k];
                if (!p || !x || !x->ok)
                        continue;
                rel_promote(&ps, p, rl);
                rel_track(&ps, x, p, rl);
        }
        for (size_t k = 0; k < ps.npx; k++)
                proxy_pass(&ps, &ps.px[k]);
        payloads(&ps);
        addon_memo_sweep(svc_addon_memo(sv->addons));
        for (size_t k = 0; k < ps.npx; k++) {
                struct pproxy *x = &ps.px[k];
                if (x->p.deleting) {
                        int e = store_addon_proxy_delete(sv->store, x->p.id);
                        if (e == 0) {
                                ps.changed++;
                                svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, NULL, NULL,
                                          "add-on proxy %s deleted: its releases are removed", x->p.name);
                                continue;
                        }
                }
                proxy_status(&ps, x);
                if (x->dirty && (r = store_addon_proxy_update(sv->store, &x->p, x->p.generation)) < 0 && r != -ESTALE)
                        log_error_errno(r, "addons", "Storing the state of add-on proxy %s failed: %m", x->p.name);
        }
        r = ps.changed;
        pass_free(&ps);
        return r;
}

int svc_addon_reconcile(struct svc *sv) {
        lock(sv);
        int r = reconcile_locked(sv);
        unlock(sv);
        return r;
}

/* ---- proxies ----------------------------------------------------------------------- */

/* Every cluster s selects must render: -EINVAL naming the first that does not. */
static int check_renders(struct svc *sv, const struct addon_spec *s, char *err, size_t errlen) {
        struct list_page pg = { .limit = STORE_MAX_LIMIT };
        _cleanup_free_ struct store_cluster_count *counts = NULL;
        size_t ncounts = 0;
        int r = store_cluster_host_counts(sv->store, &counts, &ncounts);
        if (r < 0)
                return r;
        for (;;) {
                struct cluster_list l;
                if ((r = store_cluster_list(sv->store, NULL, &pg, &l)) < 0)
                        return r;
                for (size_t i = 0; i < l.n && r == 0; i++) {
                        struct addon_cluster ac;
                        addon_cluster_from_model(&l.v[i], hosts_of(counts, ncounts, l.v[i].id), &ac);
                        if (!addon_selects(s, &ac))
                                continue;
                        _cleanup_json_ json_object *ctx = addon_cluster_context(&ac);
                        struct addon_content c = { 0 };
                        r = ctx ? addon_render(s, &ac, ctx, &c, err, errlen) : -ENOMEM;
                        addon_content_free(&c);
                }
                int64_t next = l.next_after;
                cluster_list_free(&l);
                if (r < 0 || !next)
                        return r;
                pg.after = next;
        }
}

int svc_addon_check_cluster(struct svc *sv, const struct cluster *c, const struct cluster *in, char *err,
                            size_t errlen) {
        struct addon_proxy_record_list pl;
        struct addon_cluster ac;
        int64_t hosts = 0;
        int r;

        if (!(in->present & (CL_F_LABELS | CL_F_NAME | CL_F_BASE_DNS_DOMAIN | CL_F_MACHINE_NETWORK_CIDR | CL_F_API_VIP |
                             CL_F_INGRESS_VIP | CL_F_RELEASE_VERSION)))
                return 0;
        if ((r = store_addon_proxy_list(sv->store, &pl)) < 0 || pl.n == 0) {
                addon_proxy_record_list_free(&pl);
                return r < 0 ? r : 0;
        }
        (void) store_cluster_count_hosts(sv->store, c->id, 0, &hosts);
        addon_cluster_from_model(c, hosts, &ac);
        if (in->present & CL_F_LABELS) {
                ac.labels = in->labels;
                ac.n_labels = in->n_labels;
        }
#define TAKE_IN(F, m) if (in->present & (F)) ac.m = in->m
        TAKE_IN(CL_F_NAME, name);
        TAKE_IN(CL_F_MACHINE_NETWORK_CIDR, machine_network_cidr);
        TAKE_IN(CL_F_API_VIP, api_vip);
        TAKE_IN(CL_F_INGRESS_VIP, ingress_vip);
        TAKE_IN(CL_F_RELEASE_VERSION, release_version);
#undef TAKE_IN
        if (in->present & CL_F_BASE_DNS_DOMAIN)
                ac.base_domain = in->base_dns_domain;
        _cleanup_json_ json_object *ctx = addon_cluster_context(&ac);
        for (size_t i = 0; ctx && i < pl.n && r == 0; i++) {
                struct addon_spec s;
                struct addon_content ct = { 0 };
                char why[768];
                if (pl.v[i].deleting || spec_load(&pl.v[i], &s) < 0)
                        continue;
                if (addon_selects(&s, &ac) && addon_render(&s, &ac, ctx, &ct, why, sizeof why) < 0)
                        r = errmsg(err, errlen, -EINVAL, "add-on proxy %s: %s", pl.v[i].name, why);
                addon_content_free(&ct);
                addon_spec_free(&s);
        }
        addon_proxy_record_list_free(&pl);
        return ctx ? r : -ENOMEM;
}

/* After a change: a pass, then p as stored now; 1 when it is gone. */
static int after_change(struct svc *sv, struct addon_proxy_record *p) {
        char id[UUID_STR_LEN];
        (void) reconcile_locked(sv);
        snprintf(id, sizeof id, "%s", p->id);
        addon_proxy_record_free(p);
        int r = store_addon_proxy_get(sv->store, id, p);
        return r == -ENOENT ? 1 : r;
}

int svc_addon_proxy_create(struct svc *sv, json_object *spec, const char *by, struct addon_proxy_record *out,
                           char *err, size_t errlen, const char **what) {
        struct addon_spec s;
        int r;

        addon_proxy_record_init(out);
        *what = "add-on proxy";
        if ((r = addon_spec_parse(spec, &s, err, errlen)) < 0)
                return r;
        lock(sv);
        if ((r = check_renders(sv, &s, err, errlen)) < 0)
                goto out;
        out->name = strdup(s.name);
        out->owner = strdup(by);
        out->spec = spec_text(&s);
        if (!out->name || !out->owner || !out->spec) {
                r = -ENOMEM;
                goto out;
        }
        if ((r = store_addon_proxy_create(sv->store, out)) < 0) {
                if (r == -EEXIST)
                        r = errmsg(err, errlen, r, "an add-on proxy named %s exists", s.name);
                goto out;
        }
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "add-on proxy %s (%s %s@%s) created by %s", s.name,
                  s.chart.repository, s.chart.name, s.chart.version, by);
        r = after_change(sv, out);
out:
        unlock(sv);
        addon_spec_free(&s);
        return r;
}

int svc_addon_proxy_get(struct svc *sv, const char *key, struct addon_proxy_record *out) {
        return store_addon_proxy_get(sv->store, key, out);
}

int svc_addon_proxy_list(struct svc *sv, struct addon_proxy_record_list *out) {
        return store_addon_proxy_list(sv->store, out);
}

int svc_addon_proxy_patch(struct svc *sv, const char *key, json_object *patch, const char *by,
                          struct addon_proxy_record *out, char *err, size_t errlen, const char **what) {
        struct addon_spec cur = { 0 }, next = { 0 };
        _cleanup_free_ char *text = NULL;
        int r;

        *what = "add-on proxy";
        lock(sv);
        if ((r = store_addon_proxy_get(sv->store, key, out)) < 0)
                goto out;
        if (out->deleting) {
                r = errmsg(err, errlen, -EBUSY, "add-on proxy %s is being deleted", out->name);
                goto out;
        }
        if ((r = spec_load(out, &cur)) < 0 || (r = addon_spec_patch(&cur, patch, &next, err, errlen)) < 0 ||
            (r = check_renders(sv, &next, err, errlen)) < 0)
                goto out;
        if (!(text = spec_text(&next))) {
                r = -ENOMEM;
                goto out;
        }
        int64_t gen = out->generation;
        bool output = !addon_spec_same_output(&cur, &next);
        if (output) {
                free(out->prev_spec);
                out->prev_spec = TAKE_PTR(out->spec);
                out->generation++;
                out->failure_base = 0;
        } else
                free(out->spec);
        out->spec = TAKE_PTR(text);
        if ((r = store_addon_proxy_update(sv->store, out, gen)) < 0)
                goto out;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "add-on proxy %s changed by %s%s", out->name, by,
                  output ? "; its releases follow" : " (rollout settings)");
        r = after_change(sv, out);
out:
        unlock(sv);
        addon_spec_free(&cur);
        addon_spec_free(&next);
        return r;
}

int svc_addon_proxy_delete(struct svc *sv, const char *key, const char *by, struct addon_proxy_record *out,
                           char *err, size_t errlen, const char **what) {
        int r;
        (void) err;
        (void) errlen;
        *what = "add-on proxy";
        lock(sv);
        if ((r = store_addon_proxy_get(sv->store, key, out)) < 0)
                goto out;
        if (!out->deleting) {
                out->deleting = true;
                if ((r = store_addon_proxy_update(sv->store, out, out->generation)) < 0)
                        goto out;
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL,
                          "add-on proxy %s deleted by %s; removing its releases", out->name, by);
        }
        r = after_change(sv, out);
out:
        unlock(sv);
        return r;
}

int svc_addon_proxy_action(struct svc *sv, const char *key, enum addon_action a, const char *by,
                           struct addon_proxy_record *out, char *err, size_t errlen, const char **what) {
        int r;
        *what = "add-on proxy";
        lock(sv);
        if ((r = store_addon_proxy_get(sv->store, key, out)) < 0)
                goto out;
        if (out->deleting) {
                r = errmsg(err, errlen, -EBUSY, "add-on proxy %s is being deleted", out->name);
                goto out;
        }
        int64_t gen = out->generation;
        switch (a) {
        case ADDON_ACTION_PAUSE:
                out->paused = true;
                break;
        case ADDON_ACTION_RESUME: {
                /* The failures so far are forgiven: the budget starts again. */
                struct addon_release_record_list l;
                if ((r = store_addon_release_list(sv->store, out->id, NULL, NULL, &l)) < 0)
                        goto out;
                int64_t failed = 0;
                for (size_t i = 0; i < l.n; i++)
                        if (addon_status_from_string(l.v[i].status) == ADDON_FAILED && !l.v[i].conflict &&
                            l.v[i].generation == out->generation)
                                failed++;
                addon_release_record_list_free(&l);
                out->paused = false;
                out->failure_base = failed;
                break;
        }
        case ADDON_ACTION_ROLLBACK:
                if (!out->prev_spec) {
                        r = errmsg(err, errlen, -EALREADY,
                                   "add-on proxy %s has no earlier spec to roll back to", out->name);
                        goto out;
                }
                char *t = out->spec;
                out->spec = out->prev_spec;
                out->prev_spec = t;
                out->generation++;
                out->rollback_generation = out->generation;
                out->paused = false;
                out->failure_base = 0;
                break;
        case _ADDON_ACTION_MAX:
                r = -EINVAL;
                goto out;
        }
        if ((r = store_addon_proxy_update(sv->store, out, gen)) < 0)
                goto out;
        svc_event(sv, a == ADDON_ACTION_PAUSE ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL,
                  "add-on proxy %s: rollout %s by %s", out->name,
                  a == ADDON_ACTION_PAUSE ? "paused" : a == ADDON_ACTION_RESUME ? "resumed" : "rolled back", by);
        r = after_change(sv, out);
out:
        unlock(sv);
        return r;
}

/* ---- answers ---------------------------------------------------------------------- */

json_object *svc_addon_proxy_json(struct svc *sv, const struct addon_proxy_record *p) {
        struct addon_release_record_list l;
        struct counts c;
        char failed_on[512] = "", now[MODEL_TIME_LEN];
        _cleanup_json_ json_object *o = json_tokener_parse(p->spec), *st = json_object_new_object();
        if (!o || !st || store_addon_release_list(sv->store, p->id, NULL, NULL, &l) < 0)
                return NULL;
        count_releases(l.v, l.n, NULL, 0, p, &c, failed_on, sizeof failed_on);
        addon_release_record_list_free(&l);
        /* The conditions as the releases are now (the counts beside them),
         * with the transition times the last pass stored: an answer never
         * pairs new counts with a condition of the pass before. */
        json_object *conds = model_now_rfc3339(now) == 0 ? conditions(p, &c, failed_on, now) : NULL;
        if (!conds)
                conds = p->conditions ? json_tokener_parse(p->conditions) : json_object_new_array();
        if (jadd(st, "selected", json_object_new_int64((int64_t) c.selected)) < 0 ||
            jadd(st, "pending", json_object_new_int64((int64_t) c.pending)) < 0 ||
            jadd(st, "rolling", json_object_new_int64((int64_t) c.rolling)) < 0 ||
            jadd(st, "applied", json_object_new_int64((int64_t) c.applied)) < 0 ||
            jadd(st, "failed", json_object_new_int64((int64_t) c.failed)) < 0 ||
            jadd(st, "removing", json_object_new_int64((int64_t) c.removing)) < 0 ||
            jadd(st, "conflicts", json_object_new_int64((int64_t) c.conflicts)) < 0 ||
            jadd(st, "up_to_date", json_object_new_int64((int64_t) c.up_to_date)) < 0 ||
            jadd(st, "conditions", conds) < 0 || jadd(o, "id", json_object_new_string(p->id)) < 0 ||
            jadd(o, "owner", json_object_new_string(p->owner)) < 0 ||
            jadd(o, "generation", json_object_new_int64(p->generation)) < 0 ||
            jadd(o, "paused", json_object_new_boolean(p->paused)) < 0 ||
            jadd(o, "deleting", json_object_new_boolean(p->deleting)) < 0 ||
            jadd(o, "can_roll_back", json_object_new_boolean(p->prev_spec != NULL)) < 0 ||
            jadd(o, "status", TAKE_PTR(st)) < 0 || jadd(o, "created_at", json_object_new_string(p->created_at)) < 0 ||
            jadd(o, "updated_at", json_object_new_string(p->updated_at)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *release_json(const struct addon_release_record *r, const char *proxy, const char *cluster_name) {
        _cleanup_json_ json_object *o = json_tokener_parse(r->content);
        if (!o || jadd(o, "proxy", json_object_new_string(proxy)) < 0 ||
            jadd(o, "proxy_id", json_object_new_string(r->proxy_id)) < 0 ||
            jadd(o, "cluster_id", json_object_new_string(r->cluster_id)) < 0 ||
            jadd_str_opt(o, "cluster_name", cluster_name) < 0 ||
            jadd(o, "revision", json_object_new_int64(r->revision)) < 0 ||
            jadd(o, "applied_revision", json_object_new_int64(r->applied_revision)) < 0 ||
            jadd(o, "payload_revision", json_object_new_int64(r->payload_revision)) < 0 ||
            jadd(o, "generation", json_object_new_int64(r->generation)) < 0 ||
            jadd(o, "status", json_object_new_string(r->status)) < 0 ||
            jadd(o, "message", json_object_new_string(r->message ? r->message : "")) < 0 ||
            jadd(o, "conflict", json_object_new_boolean(r->conflict)) < 0 ||
            jadd(o, "created_at", json_object_new_string(r->created_at)) < 0 ||
            jadd(o, "updated_at", json_object_new_string(r->updated_at)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

int svc_addon_release_list(struct svc *sv, const char *proxy_key, const char *cluster_id,
                           const struct list_page *pg, json_object **out, int64_t *next_after) {
        struct addon_proxy_record p;
        struct addon_release_record_list l;
        const char *pid = NULL;
        int r;

        *out = NULL;
        *next_after = 0;
        addon_proxy_record_init(&p);
        if (proxy_key) {
                if ((r = store_addon_proxy_get(sv->store, proxy_key, &p)) < 0)
                        return r;
                pid = p.id;
        }
        if ((r = store_addon_release_list(sv->store, pid, cluster_id, pg, &l)) < 0) {
                addon_proxy_record_free(&p);
                return r;
        }
        _cleanup_json_ json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < l.n; i++) {
                struct addon_proxy_record q;
                struct cluster c;
                cluster_init(&c);
                addon_proxy_record_init(&q);
                const char *name = pid ? p.name : NULL;
                if (!name && store_addon_proxy_get(sv->store, l.v[i].proxy_id, &q) == 0)
                        name = q.name;
                (void) store_cluster_get(sv->store, l.v[i].cluster_id, &c);
                json_object *o = release_json(&l.v[i], name ? name : l.v[i].proxy_id, c.name);
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        r = -ENOMEM;
                }
                cluster_free(&c);
                addon_proxy_record_free(&q);
        }
        *next_after = l.next_after;
        addon_release_record_list_free(&l);
        addon_proxy_record_free(&p);
        if (!a || r < 0)
                return -ENOMEM;
        *out = TAKE_PTR(a);
        return 0;
}

/* ---- agents' reports ---------------------------------------------------------------- */

void svc_addon_apply_failed(struct svc *sv, const char *cluster_id, const char *host_id, int64_t rev,
                            const char *why) {
        struct addon_release_record_list l;
        if (!cluster_id)
                return;
        lock(sv);
        if (store_addon_release_list(sv->store, NULL, cluster_id, NULL, &l) == 0) {
                for (size_t i = 0; i < l.n; i++) {
                        struct addon_release_record *r = &l.v[i];
                        if (addon_status_from_string(r->status) != ADDON_ROLLING || r->payload_revision <= 0 ||
                            r->payload_revision > rev)
                                continue;
                        char msg[1024];
                        snprintf(msg, sizeof msg, "host %s failed to apply payload revision %lld: %.900s", host_id,
                                 (long long) rev, why && *why ? why : "no reason given");
                        rel_set(r, ADDON_FAILED, msg);
                        if (store_addon_release_put(sv->store, r) == 0)
                                svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, cluster_id, host_id,
                                          "add-on release revision %lld on cluster %s failed: %s",
                                          (long long) r->revision, cluster_id, msg);
                }
                addon_release_record_list_free(&l);
        }
        unlock(sv);
}

void svc_addon_found(struct svc *sv, const struct host *h, json_object *found) {
        if (!json_object_is_type(found, json_type_array))
                return;
        const char *t = json_object_to_json_string_ext(found, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        int r = t ? store_host_found_set(sv->store, h->infra_env_id, h->id, t) : -ENOMEM;
        if (r < 0)
                log_host_warning("addons", h->id, "Keeping what host %s found in its manifest directory failed: %s",
                                 h->id, strerror(-r));
}

