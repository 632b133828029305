/* Uninstalling an operator, its operands first when asked (uninstall.h). */
#include "svc/uninstall.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"
#include "svc/operands.h"
#include "svc/operators.h"
#include "svc/refresh.h"
#include "svc/payload_uninstalls.h"
#include "store/store.h"

#define UNINSTALL_RETRIES 8 /* of a state another request changed meanwhile */

/* The subscription of c to package in *l (read here): *s, or -ENOENT with err. */
static int find_sub(struct svc *sv, const struct cluster *c, const char *package, struct subscription_record_list *l,
                    struct subscription_record **s, char *err, size_t errlen) {
        int r = store_subscription_list(sv->store, c->id, l);
        *s = NULL;
        if (r < 0)
                return errmsg(err, errlen, r, "reading the subscriptions of cluster %s failed", c->name);
        for (size_t i = 0; i < l->n && !*s; i++)
                if (strcmp(l->v[i].package, package) == 0)
                        *s = &l->v[i];
        return *s ? 0 : errmsg(err, errlen, -ENOENT, "cluster %s is not subscribed to %s", c->name, package);
}

/* The entries of a host's found list (JSON text) as operands; strings
 * point into *holder. Entries without kind or name are skipped. */
static int found_operands(const char *text, json_object **holder, struct cleanup_operand **v, size_t *n) {
        *holder = text ? json_tokener_parse(text) : NULL;
        *v = NULL;
        *n = 0;
        size_t len = json_object_is_type(*holder, json_type_array) ? json_object_array_length(*holder) : 0;
        if (len == 0)
                return 0;
        if (!(*v = calloc(len, sizeof **v)))
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                json_object *f = json_object_array_get_idx(*holder, i), *x;
#define S(k) (json_object_object_get_ex(f, k, &x) && json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL)
                struct cleanup_operand o = { S("group"), S("kind"), S("namespace"), S("name"), false };
#undef S
                if (o.kind && o.name)
                        (*v)[(*n)++] = o;
        }
        return 0;
}

/* ---- starting ------------------------------------------------------------- */

/* What an uninstall with cleanup deletes: the operands of the kinds
 * package's bundle owns, the managed ones (their ids to drop from the
 * store) and those the cluster's hosts found. */
struct doomed {
        struct owned_kinds k;
        struct operand_record_list managed;
        struct store_host_found_list fl;
        json_object **holders;
        struct cleanup_operand *v;
        size_t n, n_managed;
        const char **drop;
};

static void doomed_free(struct doomed *d) {
        owned_kinds_free(&d->k);
        operand_record_list_free(&d->managed);
        for (size_t i = 0; d->holders && i < d->fl.n; i++)
                json_object_put(d->holders[i]);
        free(d->holders);
        store_host_found_list_free(&d->fl);
        free(d->v);
        free(d->drop);
        *d = (struct doomed) { 0 };
}

static int push(struct doomed *d, const struct cleanup_operand *o) {
        struct cleanup_operand *v = realloc(d->v, (d->n + 1) * sizeof *v);
        if (!v)
                return -ENOMEM;
        d->v = v;
        d->v[d->n++] = *o;
        return 0;
}

static int doomed_collect(struct svc *sv, const struct cluster *c, const char *package, struct doomed *d, char *err,
                          size_t errlen) {
        int r;
        *d = (struct doomed) { 0 };
        if ((r = operands_owned(sv, c, &d->k, err, errlen)) < 0)
                return r;
        if ((r = store_operand_list(sv->store, c->id, &d->managed)) < 0)
                return errmsg(err, errlen, r, "listing the operands of cluster %s failed", c->name);
        if (!(d->drop = calloc(d->managed.n ? d->managed.n : 1, sizeof *d->drop)))
                return -ENOMEM;
        for (size_t i = 0; i < d->managed.n; i++) {
                const struct operand_record *o = &d->managed.v[i];
                const char *owner = owned_by(&d->k, o->group, o->kind);
                if (!owner || strcmp(owner, package) != 0)
                        continue; /* another operator's, or a kind no bundle owns now: kept */
                struct cleanup_operand op = { o->group, o->kind, o->namespace, o->name, true };
                if ((r = push(d, &op)) < 0)
                        return r;
                d->drop[d->n_managed++] = o->id;
        }
        if (c->payload_revision <= 0)
                return 0; /* nothing installed: no host holds anything */
        if ((r = store_host_found_list(sv->store, c->id, &d->fl)) < 0)
                return errmsg(err, errlen, r, "reading what the hosts of cluster %s found failed", c->name);
        if (!(d->holders = calloc(d->fl.n ? d->fl.n : 1, sizeof *d->holders)))
                return -ENOMEM;
        for (size_t i = 0; i < d->fl.n; i++) {
                _cleanup_free_ struct cleanup_operand *f = NULL;
                size_t n = 0;
                if ((r = found_operands(d->fl.v[i].found, &d->holders[i], &f, &n)) < 0)
                        return r;
                for (size_t j = 0; j < n; j++) {
                        const char *owner = owned_by(&d->k, f[j].group, f[j].kind);
                        if (owner && strcmp(owner, package) == 0 && (r = push(d, &f[j])) < 0)
                                return r;
                }
        }
        return 0;
}

/* ---- finishing ------------------------------------------------------------ */

/* The packages a plan (JSON) reports removable, as "a, b"; NULL: none. */
static char *removable_text(json_object *plan) {
        json_object *steps = json_object_object_get(plan, "steps");
        char *t = NULL;
        for (size_t i = 0; i < json_object_array_length(steps); i++) {
                json_object *s = json_object_array_get_idx(steps, i);
                const char *pkg = json_object_get_string(json_object_object_get(s, "package"));
                if (!pkg || !json_object_get_boolean(json_object_object_get(s, "removable")))
                        continue;
                char *n = NULL;
                if (asprintf(&n, "%s%s%s", t ? t : "", t ? ", " : "", pkg) < 0) {
                        free(t);
                        return NULL;
                }
                free(t);
                t = n;
        }
        return t;
}

/* The operator leaves: the next payload revision goes without it, then
 * the subscription is deleted. *plan (may be NULL) gets the plan. */
static int finish(struct svc *sv, struct cluster *c, const char *package, const struct uninstall *u,
                  json_object **plan, int64_t *rev, char *err, size_t errlen) {
        _cleanup_json_ json_object *p = NULL;
        struct op_options o = { .without = package, .prune = u->prune };
        bool installed = c->payload_revision > 0;
        *rev = 0;
        int r = operators_dry_run(sv, c, &o, &p, err, errlen);
        /* Installed: the revision without it first (it stays subscribed
         * until that is stored, so a failure is tried again). */
        if (r >= 0 && installed)
                r = operators_apply_change(sv, c, &o, rev, err, errlen);
        if (r < 0)
                return r;
        r = store_subscription_delete(sv->store, c->id, package);
        if (r >= 0 && !installed)
                (void) operators_apply_change(sv, c, &o, rev, err, errlen); /* validated again */
        if (r == -ENOENT)
                r = 0; /* someone else finished it */
        else if (r < 0)
                return errmsg(err, errlen, r, "the subscription of cluster %s to %s cannot be removed", c->name,
                              package);
        else {
                _cleanup_free_ char *removable = removable_text(p);
                char revtext[64] = "";
                if (*rev > 0)
                        snprintf(revtext, sizeof revtext, "; payload revision %lld goes without it", (long long) *rev);
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c->id, NULL,
                          "cluster %s: operator %s uninstalled%s%s%s%s%s", c->name, package,
                          u->by ? " (asked by " : "", u->by ? u->by : "", u->by ? ")" : "", revtext,
                          removable ? "; dependencies nothing needs now are kept, removable: " : "");
                if (removable)
                        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, c->id, NULL,
                                  "cluster %s: after %s is uninstalled, removable: %s (musterctl operator upgrade "
                                  "--prune removes them)", c->name, package, removable);
        }
        if (plan)
                *plan = TAKE_PTR(p);
        return r;
}

/* ---- following ------------------------------------------------------------ */

/* Store u over the text it was read from (-ESTALE: another request
 * changed it; the next pass reads it again). */
static int save(struct svc *sv, const struct cluster *c, const char *package, const char *was,
                const struct uninstall *u, const char *const *drop, size_t n_drop) {
        _cleanup_free_ char *t = uninstall_format(u);
        if (!t)
                return -ENOMEM;
        if (was && strcmp(was, t) == 0 && n_drop == 0)
                return 0;
        return store_subscription_set_uninstall(sv->store, c->id, package, was, t, drop, n_drop);
}

/* The hosts an operand must be gone on: every host of the cluster that
 * applied a revision (whatever its status now: one that stopped
 * answering still holds what it held). */
static int holders(const struct cluster_view *v, struct strv *out) {
        for (size_t i = 0; i < v->hosts.n; i++)
                if (v->hosts.v[i].applied_revision > 0 && strv_push(out, v->hosts.v[i].id) < 0)
                        return -ENOMEM;
        return 0;
}

/* Take the reports of the hosts that applied u's revision or a later one:
 * what each still holds is its last found list. */
static int take_reports(struct svc *sv, const struct cluster_view *v, struct uninstall *u) {
        struct store_host_found_list fl;
        int r = store_host_found_list(sv->store, v->c.id, &fl);
        for (size_t i = 0; r >= 0 && i < v->hosts.n; i++) {
                const struct host *h = &v->hosts.v[i];
                if (h->applied_revision <= 0 || h->applied_revision < u->st.revision)
                        continue;
                const char *found = NULL;
                for (size_t j = 0; j < fl.n && !found; j++)
                        if (strcmp(fl.v[j].host_id, h->id) == 0)
                                found = fl.v[j].found;
                _cleanup_json_ json_object *holder = NULL;
                _cleanup_free_ struct cleanup_operand *present = NULL;
                size_t n = 0;
                if ((r = found_operands(found, &holder, &present, &n)) >= 0)
                        r = cleanup_report(&u->st, h->id, present, n);
        }
        if (r >= 0)
                store_host_found_list_free(&fl);
        return r < 0 ? r : 0;
}

/* One uninstall under way: 1 when it changed, 0, -errno. */
static int follow_one(struct svc *sv, const struct subscription_record *s) {
        _cleanup_(uninstall_free) struct uninstall u = { 0 };
        _cleanup_(cleanup_step_free) struct cleanup_step step = { 0 };
        _cleanup_strv_ struct strv hosts = { 0 };
        struct cluster_view v;
        char err[1024];
        int64_t rev = 0;
        int r;

        if (uninstall_parse(s->uninstall, &u) < 0) {
                log_warning("cleanup", "The uninstall of %s on cluster %s is not readable; left alone", s->package,
                            s->cluster_id);
                return 0;
        }
        if ((r = cluster_view_load(sv, s->cluster_id, false, &v)) < 0)
                return r == -ENOENT ? 0 : r;
        if (u.st.phase == CLEANUP_DONE) {
                /* Aborted, or a finish that failed before: the operator goes. */
                r = finish(sv, &v.c, s->package, &u, NULL, &rev, err, sizeof err);
                if (r < 0)
                        log_warning("cleanup", "Removing operator %s from cluster %s failed: %s", s->package,
                                    v.c.name, err);
                cluster_view_free(&v);
                return r < 0 ? r : 1;
        }
        if (u.st.phase != CLEANUP_WAITING) {
                cluster_view_free(&v);
                return 0;
        }
        int64_t before = (int64_t) u.st.n;
        bool carried = u.st.revision > 0;
        if (!carried && v.c.payload_revision > 0) {
                /* The revision that carries the deletions: the next one, or
                 * the current one when another change built it already. */
                if ((r = operators_apply_change(sv, &v.c, NULL, &rev, err, sizeof err)) < 0)
                        log_warning("cleanup", "The payload revision deleting %s's operands on cluster %s failed: %s",
                                    s->package, v.c.name, err);
                else
                        u.st.revision = v.c.payload_revision;
        }
        if (r >= 0 && u.st.revision > 0)
                r = take_reports(sv, &v, &u);
        if (r >= 0)
                r = holders(&v, &hosts);
        if (r >= 0 && u.st.revision > 0)
                r = cleanup_advance(&u.st, (const char *const *) hosts.v, hosts.n, svc_now(sv),
                                    svc_cfg(sv)->cleanup_timeout_s, &step);
        if (r >= 0 && (r = save(sv, &v.c, s->package, s->uninstall, &u, NULL, 0)) >= 0) {
                int64_t gone = before - (int64_t) u.st.n;
                if (!carried && u.st.revision > 0)
                        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, v.c.id, NULL,
                                  "cluster %s: payload revision %lld deletes the %lld operand(s) of %s", v.c.name,
                                  (long long) u.st.revision, (long long) u.st.n, s->package);
                if (gone > 0 && !step.done_now)
                        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, v.c.id, NULL,
                                  "cluster %s: %lld more operand(s) of %s gone from every host; %zu of %lld pending",
                                  v.c.name, (long long) gone, s->package, u.st.n, (long long) u.st.total);
                if (step.stalled_now) {
                        _cleanup_free_ char *lag = strv_join(&step.lagging, ", ", 10);
                        atomic_fetch_add(&sv->cleanup_stalled, 1);
                        svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, v.c.id, NULL,
                                  "cluster %s: the cleanup of %s's operands is stalled: %zu of %lld still pending "
                                  "after %lld s; not reported by host(s) %s", v.c.name, s->package, u.st.n,
                                  (long long) u.st.total, (long long) svc_cfg(sv)->cleanup_timeout_s,
                                  lag ? lag : "?");
                }
                if (step.done_now) {
                        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, v.c.id, NULL,
                                  "cluster %s: every operand of %s is gone (%lld deleted); the operator goes now",
                                  v.c.name, s->package, (long long) u.st.total);
                        /* Done is stored: a failure here is tried again by the next pass. */
                        if ((r = finish(sv, &v.c, s->package, &u, NULL, &rev, err, sizeof err)) < 0)
                                log_warning("cleanup", "Removing operator %s from cluster %s failed: %s", s->package,
                                            v.c.name, err);
                }
                r = r < 0 ? r : (gone > 0 || step.stalled_now || step.done_now || (!carried && u.st.revision > 0));
        } else if (r == -ESTALE) {
                r = 0; /* changed meanwhile: the next pass */
        }
        cluster_view_free(&v);
        return r;
}

int svc_uninstall_follow(struct svc *sv, const char *cluster_id) {
        struct subscription_record_list l;
        int r = store_subscription_list_uninstalling(sv->store, &l), changed = 0;
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                if (cluster_id && strcmp(l.v[i].cluster_id, cluster_id) != 0)
                        continue;
                int k = follow_one(sv, &l.v[i]);
                if (k > 0)
                        changed++;
                else if (k < 0 && r == 0)
                        r = k; /* said by the controller; the others go on */
        }
        subscription_record_list_free(&l);
        return r < 0 && changed == 0 ? r : changed;
}

int svc_uninstall_pass(struct svc *sv) {
        return svc_uninstall_follow(sv, NULL);
}

/* ---- what users do -------------------------------------------------------- */

/* Whether the plan keeps package's bundle (another package needs it). */
static bool still_needed(json_object *plan, const char *package) {
        json_object *steps = json_object_object_get(plan, "steps");
        for (size_t i = 0; i < json_object_array_length(steps); i++) {
                json_object *s = json_object_array_get_idx(steps, i);
                const char *pkg = json_object_get_string(json_object_object_get(s, "package"));
                const char *action = json_object_get_string(json_object_object_get(s, "action"));
                if (pkg && action && strcmp(pkg, package) == 0 && strcmp(action, "remove") != 0)
                        return true;
        }
        return false;
}

int svc_operators_unsubscribe(struct svc *sv, const char *cluster_id, const char *package, bool prune, const char *by,
                              json_object **out, char *err, size_t errlen) {
        struct cluster c;
        struct subscription_record_list l = { 0 };
        struct subscription_record *s = NULL;
        _cleanup_(uninstall_free) struct uninstall u = { .prune = prune };
        _cleanup_(doomed_free) struct doomed d = { 0 };
        _cleanup_json_ json_object *plan = NULL;
        struct op_options o = { .without = package, .prune = prune };
        int64_t rev = 0;
        int r = operators_load_cluster(sv, cluster_id, &c, err, errlen);
        if (r >= 0)
                r = operators_refuse_installing(&c, err, errlen);
        if (r >= 0)
                r = operators_check_name("package", package, true, err, errlen);
        if (r >= 0)
                r = find_sub(sv, &c, package, &l, &s, err, errlen);
        if (r >= 0 && s->uninstall)
                r = errmsg(err, errlen, -EALREADY, "%s is being uninstalled from cluster %s already", package, c.name);
        if (r >= 0)
                r = operators_dry_run(sv, &c, &o, &plan, err, errlen);
        /* A package another one still needs stays as its dependency: then
         * nothing of it is uninstalled, and its operands stay. */
        bool stays = r >= 0 && still_needed(plan, package);
        if (r >= 0 && s->cleanup && !stays)
                r = doomed_collect(sv, &c, package, &d, err, errlen);
        if (r >= 0 && (u.by = strdup(by)) == NULL)
                r = -ENOMEM;
        if (r >= 0 && (r = cleanup_start(&u.st, s->cleanup, d.v, d.n, svc_now(sv))) == -E2BIG)
                errmsg(err, errlen, r, "%s has more than %d operands on cluster %s", package, CLEANUP_MAX_ITEMS,
                       c.name);
        /* Nothing installed: no host holds the operands, the managed ones
         * just leave the store. */
        if (r >= 0 && u.st.phase == CLEANUP_WAITING && c.payload_revision <= 0) {
                (void) cleanup_abort(&u.st);
                u.st.aborted = false;
        }
        if (r >= 0 && u.st.phase == CLEANUP_WAITING) {
                long long found = u.st.total > (long long) d.n_managed ? u.st.total - (long long) d.n_managed : 0;
                char split[96];
                if (found)
                        snprintf(split, sizeof split, "%zu applied through musterd, %lld found on the hosts",
                                 d.n_managed, found);
                else
                        snprintf(split, sizeof split, "all applied through musterd");
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL,
                          "cluster %s: %s uninstalled by %s with cleanup: its %lld operand%s (%s) go first; the "
                          "operator stays until they are gone", c.name, package, by, (long long) u.st.total,
                          u.st.total == 1 ? "" : "s", split);
                if ((r = save(sv, &c, package, NULL, &u, d.drop, d.n_managed)) < 0)
                        r = errmsg(err, errlen, r, r == -ESTALE ? "%s is being uninstalled from cluster %s already"
                                                                : "the uninstall of %s on cluster %s cannot be stored",
                                   package, c.name);
                subscription_record_list_free(&l);
                if (r >= 0 && (r = find_sub(sv, &c, package, &l, &s, err, errlen)) >= 0 && follow_one(sv, s) < 0)
                        log_warning("cleanup", "Following the uninstall of %s on cluster %s failed", package, c.name);
                cluster_free(&c);
                if (r >= 0 && (r = operators_load_cluster(sv, cluster_id, &c, err, errlen)) >= 0) {
                        if (!(*out = operators_subscription_reply(sv, c.id, package, c.payload_revision, err, errlen)))
                                r = errmsg(err, errlen, -ENOMEM, "out of memory");
                        else
                                r = 1;
                }
                subscription_record_list_free(&l);
                cluster_free(&c);
                return r;
        }
        if (r >= 0) {
                /* Done at once: without cleanup, with nothing to delete, or
                 * on a cluster not installed. */
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s unsubscribed from %s by %s%s%s",
                          c.name, package, by, prune ? " (pruning unneeded dependencies)" : "",
                          stays ? "; it stays as a dependency, with its operands"
                                : s->cleanup ? "" : "; its operands stay");
                if (d.n_managed > 0 &&
                    (r = store_subscription_set_uninstall(sv->store, c.id, package, NULL, NULL, d.drop, d.n_managed)) < 0)
                        errmsg(err, errlen, r, "deleting the operands of %s on cluster %s failed", package, c.name);
        }
        if (r >= 0) {
                json_object_put(TAKE_PTR(plan));
                r = finish(sv, &c, package, &u, &plan, &rev, err, errlen);
        }
        if (r >= 0)
                r = operators_change_reply(&plan, rev, out, err, errlen);
        if (r >= 0 && d.n_managed > 0 && jadd(*out, "operands_deleted", json_object_new_int64((int64_t) d.n_managed)) < 0)
                r = -ENOMEM;
        subscription_record_list_free(&l);
        cluster_free(&c);
        return r;
}

int svc_operators_set_cleanup(struct svc *sv, const char *cluster_id, const char *package, bool enabled, const char *by,
                              json_object **out, char *err, size_t errlen) {
        struct cluster c;
        int64_t rev = 0;
        bool aborted = false;
        int r = operators_load_cluster(sv, cluster_id, &c, err, errlen);
        if (r >= 0 && (r = store_subscription_set_cleanup(sv->store, c.id, package, enabled)) < 0)
                r = errmsg(err, errlen, r, r == -ENOENT ? "cluster %s has no subscription to %s"
                                                        : "the cleanup setting of %s on cluster %s cannot be stored",
                           r == -ENOENT ? c.name : package, r == -ENOENT ? package : c.name);
        if (r >= 0)
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL,
                          "cluster %s: cleanup of %s's operands on uninstall %s by %s", c.name, package,
                          enabled ? "enabled" : "disabled", by);
        /* Off during a cleanup: it ends, and the operator goes. */
        for (int tries = 0; r >= 0 && !enabled && tries < UNINSTALL_RETRIES; tries++) {
                struct subscription_record_list l;
                struct subscription_record *s;
                _cleanup_(uninstall_free) struct uninstall u = { 0 };
                if ((r = find_sub(sv, &c, package, &l, &s, err, errlen)) < 0) {
                        subscription_record_list_free(&l);
                        break;
                }
                if (!s->uninstall || uninstall_parse(s->uninstall, &u) < 0 || !cleanup_abort(&u.st)) {
                        subscription_record_list_free(&l);
                        break;
                }
                r = save(sv, &c, package, s->uninstall, &u, NULL, 0);
                subscription_record_list_free(&l);
                if (r == -ESTALE) {
                        r = 0;
                        continue;
                }
                if (r < 0) {
                        errmsg(err, errlen, r, "the uninstall of %s on cluster %s cannot be stored", package, c.name);
                        break;
                }
                aborted = true;
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL,
                          "cluster %s: the cleanup of %s's operands is aborted by %s (what is deleted stays deleted); "
                          "the operator goes now", c.name, package, by);
                if ((r = finish(sv, &c, package, &u, NULL, &rev, err, errlen)) < 0)
                        log_warning("cleanup", "Removing operator %s from cluster %s failed: %s (the cleanup pass "
                                    "tries again)", package, c.name, err);
                r = 0;
                break;
        }
        if (r >= 0) {
                if (!(*out = operators_subscription_reply(sv, c.id, package, rev, err, errlen)) && aborted) {
                        /* It went: say so. */
                        *out = json_object_new_object();
                        if (!*out || jadd(*out, "package", json_object_new_string(package)) < 0 ||
                            jadd(*out, "uninstalled", json_object_new_boolean(true)) < 0 ||
                            (rev > 0 && jadd(*out, "payload_revision", json_object_new_int64(rev)) < 0))
                                r = -ENOMEM;
                } else if (!*out) {
                        r = errmsg(err, errlen, -ENOMEM, "out of memory");
                }
        }
        cluster_free(&c);
        return r;
}
