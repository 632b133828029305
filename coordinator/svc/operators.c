/* What users do with a cluster's operators: see operators.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "svc/revisions.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "svc/operators.h"
#include "svc/refresh.h"
#include "svc/operands.h"
#include "semver.h"
#include "svc/payload_uninstalls.h"

#define OP_MAX_NAME 253

int operators_load_cluster(struct svc *sv, const char *id, struct cluster *c, char *err, size_t errlen) {
        cluster_init(c);
        int r = store_cluster_get(sv->store, id, c);
        if (r == -ENOENT || r == -EINVAL)
                return errmsg(err, errlen, -ENOENT, "cluster %s not found", id);
        return r < 0 ? errmsg(err, errlen, r, "reading cluster %s failed", id) : 0;
}

int operators_refuse_installing(const struct cluster *c, char *err, size_t errlen) {
        if (cluster_status_is_installing(cluster_status_from_string(c->status)))
                return errmsg(err, errlen, -EBUSY, "cluster %s is %s; change its operators when that is over", c->name,
                              c->status);
        return 0;
}

static json_object *plan_json(const struct op_resolution *op) {
        json_object *j = NULL;
        if (op->none) {
                struct resolve_plan empty = { .ok = true };
                return resolve_plan_to_json(&empty, &j) < 0 ? NULL : j;
        }
        return resolve_plan_to_json(&op->plan, &j) < 0 ? NULL : j;
}

/* ---- describing the subscriptions ------------------------------------------ */

struct described {
        struct cluster c;
        struct op_resolution op;
        struct op_resolution up; /* with every upgrade asked for: what could move */
        bool applied;            /* every installed host applied the current revision */
};

static void described_free(struct described *d) {
        opresolve_free(&d->op);
        opresolve_free(&d->up);
        cluster_free(&d->c);
}

static int all_applied(struct svc *sv, const struct cluster *c, bool *applied) {
        struct cluster_view v;
        int r = cluster_view_load(sv, c->id, false, &v);
        *applied = true;
        for (size_t i = 0; r >= 0 && i < v.hosts.n; i++)
                if (v.hosts.v[i].status == HOST_INSTALLED && v.hosts.v[i].applied_revision < c->payload_revision)
                        *applied = false;
        if (r >= 0)
                cluster_view_free(&v);
        return r;
}

static int describe(struct svc *sv, const char *cluster_id, struct described *d, char *err, size_t errlen) {
        memset(d, 0, sizeof *d);
        int r = operators_load_cluster(sv, cluster_id, &d->c, err, errlen);
        if (r >= 0)
                r = opresolve_cluster(sv, &d->c, NULL, &d->op, err, errlen);
        if (r >= 0 && d->c.payload_revision > 0 && !d->op.none && d->op.plan.ok) {
                struct op_options all = { .upgrade_all = true };
                char ignored[256];
                if (opresolve_cluster(sv, &d->c, &all, &d->up, ignored, sizeof ignored) < 0)
                        opresolve_free(&d->up);
        }
        if (r >= 0 && d->c.payload_revision > 0 && (r = all_applied(sv, &d->c, &d->applied)) < 0)
                errmsg(err, errlen, r, "reading the hosts of cluster %s failed", cluster_id);
        return r;
}

/* Why the current resolution keeps (or changes) `package`. */
static const char *step_why(const struct described *d, const char *package) {
        for (size_t i = 0; package && !d->op.none && d->op.plan.ok && i < d->op.plan.n_steps; i++)
                if (strcmp(d->op.plan.steps[i].package, package) == 0)
                        return d->op.plan.steps[i].why;
        return NULL;
}

/* The installed bundles the current payload says `package`'s subscription
 * brought in: copies of the payload's operators entries. */
static int installed_bundles(const struct described *d, const char *package, json_object *out, bool *any) {
        json_object *ops = d->op.payload ? json_object_object_get(d->op.payload, "operators") : NULL;
        *any = false;
        for (size_t i = 0; ops && i < json_object_array_length(ops); i++) {
                json_object *e = json_object_array_get_idx(ops, i);
                const char *sub = json_object_get_string(json_object_object_get(e, "subscription"));
                if (!sub || strcmp(sub, package) != 0)
                        continue;
                *any = true;
                json_object *copy = NULL;
                const char *why = step_why(d, json_object_get_string(json_object_object_get(e, "package")));
                if (json_object_deep_copy(e, &copy, NULL) < 0 || (why && jadd_str_opt(copy, "why", why) < 0) ||
                    json_object_array_add(out, copy) < 0) {
                        json_object_put(copy);
                        return -ENOMEM;
                }
        }
        return 0;
}

/* What the plan would bring in for subscription k (not installed yet). */
static int planned_bundles(const struct described *d, size_t k, json_object *out) {
        for (size_t i = 0; d->op.plan.ok && i < d->op.plan.n_steps; i++) {
                const struct resolve_step *s = &d->op.plan.steps[i];
                if (s->subscription != k || s->action == RESOLVE_REMOVE)
                        continue;
                json_object *e = json_object_new_object();
                if (!e || jadd_str_opt(e, "package", s->package) < 0 || jadd_str_opt(e, "bundle", s->bundle) < 0 ||
                    jadd_str_opt(e, "version", s->version) < 0 || jadd_str_opt(e, "catalog", s->catalog) < 0 ||
                    jadd_str_opt(e, "channel", s->channel) < 0 ||
                    jadd(e, "dependency", json_object_new_boolean(s->dependency)) < 0 || jadd_str_opt(e, "why", s->why) < 0 ||
                    json_object_array_add(out, e) < 0) {
                        json_object_put(e);
                        return -ENOMEM;
                }
        }
        return 0;
}

static bool upgrade_pending(const struct described *d, const char *package) {
        for (size_t i = 0; d->up.plan.ok && i < d->up.plan.n_steps; i++)
                if (d->up.plan.steps[i].action == RESOLVE_UPGRADE && strcmp(d->up.plan.steps[i].package, package) == 0)
                        return true;
        return false;
}

static const char *phase_of(const struct described *d, const char *package, bool in_payload, const char **msg) {
        bool ok = d->op.none || d->op.plan.ok;
        *msg = NULL;
        if (d->c.payload_revision > 0 && in_payload) {
                enum cluster_status cs = cluster_status_from_string(d->c.status);
                if (cluster_status_is_installing(cs)) {
                        *msg = "in the payload the cluster is installing with";
                        return "Installing";
                }
                if (cs != CLUSTER_INSTALLED) {
                        *msg = "the cluster is not installed (reset or failed): it installs with the cluster";
                        return "Resolving";
                }
                if (!d->applied) {
                        *msg = "in the cluster's current payload revision; not every installed host applied it yet";
                        return "Installing";
                }
                if (upgrade_pending(d, package)) {
                        *msg = "a newer bundle is reachable on its channel: musterctl operator upgrade";
                        return "UpgradePending";
                }
                return "Installed";
        }
        if (!ok)
                return "Failed";
        *msg = d->c.payload_revision > 0 ? "not in the cluster's payload yet" : "installed with the cluster";
        return "Resolving";
}

static json_object *cleanup_json(bool enabled) {
        json_object *o = json_object_new_object();
        if (o && jadd(o, "enabled", json_object_new_boolean(enabled)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* status {phase, reason, message, conditions: [Cleanup], cleanup} of a
 * subscription being uninstalled. */
static json_object *uninstall_status(const char *phase, const char *reason, const char *msg,
                                     const struct cleanup_state *st) {
        _cleanup_json_ json_object *o = json_object_new_object(), *conds = json_object_new_array(),
                                   *cond = json_object_new_object();
        if (!o || !conds || !cond || jadd(cond, "type", json_object_new_string("Cleanup")) < 0 ||
            jadd(cond, "status", json_object_new_string(st->phase == CLEANUP_WAITING ? "True" : "False")) < 0 ||
            jadd(cond, "reason", json_object_new_string(reason)) < 0 ||
            jadd(cond, "message", json_object_new_string(msg)) < 0 || json_object_array_add(conds, TAKE_PTR(cond)) < 0 ||
            jadd(o, "phase", json_object_new_string(phase)) < 0 || jadd(o, "reason", json_object_new_string(reason)) < 0 ||
            jadd(o, "message", json_object_new_string(msg)) < 0 || jadd(o, "conditions", TAKE_PTR(conds)) < 0 ||
            jadd(o, "cleanup", cleanup_status_json(st)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_object *subscription_json(const struct described *d, size_t k, const struct subscription_record *s) {
        _cleanup_json_ json_object *o = json_object_new_object();
        _cleanup_json_ json_object *bundles = json_object_new_array();
        _cleanup_free_ char *why = NULL;
        bool in_payload = false;
        const char *msg = NULL;
        if (!o || !bundles ||
            (d->c.payload_revision > 0 ? installed_bundles(d, s->package, bundles, &in_payload)
                                       : planned_bundles(d, k, bundles)) < 0)
                return NULL;
        const char *phase = phase_of(d, s->package, in_payload, &msg), *reason = NULL;
        if (strcmp(phase, "Failed") == 0 && !(msg = why = opresolve_problems_text(&d->op.plan)))
                return NULL;
        /* An uninstall under way (uninstall.h). */
        _cleanup_(uninstall_free) struct uninstall u = { 0 };
        _cleanup_json_ json_object *status = NULL;
        if (s->uninstall && uninstall_parse(s->uninstall, &u) == 0) {
                free(why);
                why = NULL;
                if (u.st.phase == CLEANUP_WAITING) {
                        phase = "Cleanup";
                        reason = "CleanupWaiting";
                        if (!(msg = why = cleanup_message(&u.st)))
                                return NULL;
                } else {
                        phase = "Uninstalling";
                        reason = u.st.aborted ? "CleanupAborted" : "CleanupDone";
                        msg = u.st.aborted ? "the cleanup was aborted; the operator is being removed"
                                           : "its operands are gone; the operator is being removed";
                }
                if (!(status = uninstall_status(phase, reason, msg, &u.st)))
                        return NULL;
        }
        if (jadd_str_opt(o, "id", s->id) < 0 || jadd_str_opt(o, "cluster_id", s->cluster_id) < 0 ||
            jadd_str_opt(o, "package", s->package) < 0 || jadd_str_opt(o, "channel", s->channel) < 0 ||
            jadd_str_opt(o, "catalog", s->catalog) < 0 || jadd_str_opt(o, "version_range", s->version_range) < 0 ||
            jadd(o, "skip_dependencies", json_object_new_boolean(s->skip_dependencies)) < 0 ||
            jadd(o, "cleanup", cleanup_json(s->cleanup)) < 0 ||
            jadd_str_opt(o, "owner", s->owner) < 0 || jadd_str_opt(o, "created_at", s->created_at) < 0 ||
            jadd_str_opt(o, "phase", phase) < 0 || jadd_str_opt(o, "reason", reason) < 0 ||
            jadd_str_opt(o, "message", msg) < 0 || (status && jadd(o, "status", TAKE_PTR(status)) < 0) ||
            jadd(o, "bundles", TAKE_PTR(bundles)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* The subscriptions of d (only `package`'s when not NULL) into a new array. */
static json_object *subscriptions_json(const struct described *d, const char *package) {
        _cleanup_json_ json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < d->op.subs.n; i++) {
                const struct subscription_record *s = &d->op.subs.v[i];
                if (package && strcmp(package, s->package) != 0)
                        continue;
                json_object *o = subscription_json(d, i, s);
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        return NULL;
                }
        }
        return TAKE_PTR(a);
}

int svc_operators_list(struct svc *sv, const char *cluster_id, json_object **out, char *err, size_t errlen) {
        struct described d;
        int r = describe(sv, cluster_id, &d, err, errlen);
        _cleanup_json_ json_object *o = r < 0 ? NULL : json_object_new_object();
        if (r >= 0 && (!o || jadd(o, "items", subscriptions_json(&d, NULL)) < 0 ||
                       jadd(o, "condition", opresolve_condition(&d.op)) < 0))
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
        described_free(&d);
        if (r >= 0)
                *out = TAKE_PTR(o);
        return r;
}

/* ---- changes ---------------------------------------------------------------- */

int operators_check_name(const char *what, const char *v, bool required, char *err, size_t errlen) {
        if (!v)
                return required ? errmsg(err, errlen, -EINVAL, "%s is required", what) : 0;
        if (!*v || strlen(v) > OP_MAX_NAME)
                return errmsg(err, errlen, -EINVAL, "%s must be 1 to %d characters", what, OP_MAX_NAME);
        for (const char *p = v; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return errmsg(err, errlen, -EINVAL, "%s has a control character", what);
        return 0;
}

static int check_subscribe(const struct op_subscribe *in, char *err, size_t errlen) {
        int r = operators_check_name("package", in->package, true, err, errlen);
        if (r >= 0)
                r = operators_check_name("channel", in->channel, false, err, errlen);
        if (r >= 0)
                r = operators_check_name("catalog", in->catalog, false, err, errlen);
        if (r >= 0 && in->version_range) {
                struct semver_range range;
                char why[256];
                if ((r = semver_range_parse(in->version_range, &range, why, sizeof why)) < 0)
                        r = errmsg(err, errlen, r == -ENOMEM ? r : -EINVAL, "version_range: %s", why);
                semver_range_free(&range);
        }
        return r;
}

/* After a change: an installed cluster gets its next payload revision
 * (*rev, 0 when its content did not change); any other is validated again. */
int operators_apply_change(struct svc *sv, struct cluster *c, const struct op_options *o, int64_t *rev, char *err,
                        size_t errlen) {
        const char *what = NULL;
        *rev = 0;
        if (c->payload_revision <= 0) {
                /* A failed refresh is retried by the periodic pass. */
                (void) refresh_cluster(sv, c->id, NULL);
                return 0;
        }
        int r = revisions_next_payload(sv, c, o, err, errlen, &what);
        if (r == 1)
                *rev = c->payload_revision;
        if (r < 0 && what)
                errmsg(err, errlen, r, "writing the %s of cluster %s failed", what, c->name);
        return r < 0 ? r : 0;
}

static int already_subscribed(struct svc *sv, const struct cluster *c, const char *package, char *err, size_t errlen) {
        struct subscription_record_list l;
        int r = store_subscription_list(sv->store, c->id, &l);
        for (size_t i = 0; r >= 0 && i < l.n; i++)
                if (strcmp(l.v[i].package, package) == 0)
                        r = errmsg(err, errlen, -EEXIST, "cluster %s is subscribed to %s already", c->name, package);
        subscription_record_list_free(&l);
        return r;
}

/* Does the package, channel and catalog exist? The resolver says, on the
 * cluster's subscriptions plus this one. */
static int dry_subscribe(struct svc *sv, const struct cluster *c, const struct op_subscribe *in, char *err,
                         size_t errlen) {
        struct resolve_subscription rs = { .package = in->package, .channel = in->channel, .catalog = in->catalog,
                                           .version_range = in->version_range,
                                           .skip_dependencies = in->skip_dependencies };
        struct op_options o = { .extra = &rs, .n_extra = 1 };
        struct op_resolution op;
        int r = opresolve_cluster(sv, c, &o, &op, err, errlen);
        opresolve_free(&op);
        return r;
}

json_object *operators_subscription_reply(struct svc *sv, const char *cluster_id, const char *package, int64_t rev,
                                     char *err, size_t errlen) {
        struct described d;
        json_object *o = NULL;
        if (describe(sv, cluster_id, &d, err, errlen) >= 0) {
                _cleanup_json_ json_object *a = subscriptions_json(&d, package);
                if (a && json_object_array_length(a) == 1 && json_object_deep_copy(json_object_array_get_idx(a, 0), &o,
                                                                                     NULL) < 0)
                        o = NULL;
                if (o && rev > 0 && jadd(o, "payload_revision", json_object_new_int64(rev)) < 0) {
                        json_object_put(o);
                        o = NULL;
                }
        }
        described_free(&d);
        return o;
}

int svc_operators_subscribe(struct svc *sv, const char *cluster_id, const struct op_subscribe *in, const char *owner,
                            json_object **out, char *err, size_t errlen) {
        struct cluster c;
        int64_t rev = 0;
        int r = operators_load_cluster(sv, cluster_id, &c, err, errlen);
        if (r >= 0)
                r = operators_refuse_installing(&c, err, errlen);
        if (r >= 0)
                r = check_subscribe(in, err, errlen);
        if (r >= 0)
                r = already_subscribed(sv, &c, in->package, err, errlen);
        if (r >= 0)
                r = dry_subscribe(sv, &c, in, err, errlen);
        if (r >= 0) {
                struct subscription_record s = { .cluster_id = strdup(c.id), .package = strdup(in->package),
                                                .channel = in->channel ? strdup(in->channel) : NULL,
                                                .catalog = in->catalog ? strdup(in->catalog) : NULL,
                                                .version_range = in->version_range ? strdup(in->version_range) : NULL,
                                                .skip_dependencies = in->skip_dependencies,
                                                .cleanup = in->cleanup,
                                                .owner = strdup(owner) };
                r = store_subscription_create(sv->store, &s);
                subscription_record_free(&s);
                if (r < 0)
                        errmsg(err, errlen, r, r == -EEXIST ? "cluster %s is subscribed to %s already"
                                                            : "the subscription of cluster %s to %s cannot be stored",
                               c.name, in->package);
        }
        if (r >= 0) {
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s subscribed to %s by %s", c.name,
                          in->package, owner);
                /* One that does not resolve stays: its phase and the cluster's
                 * condition say why. */
                char why[1024];
                if (operators_apply_change(sv, &c, NULL, &rev, why, sizeof why) < 0)
                        svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, c.id, NULL,
                                  "cluster %s: no payload revision with %s: %s", c.name, in->package, why);
                if (!(*out = operators_subscription_reply(sv, c.id, in->package, rev, err, errlen)))
                        r = errmsg(err, errlen, -ENOMEM, "out of memory");
        }
        cluster_free(&c);
        return r;
}

/* A resolution of c with o, checked to resolve: -EDOM with the words. */
int operators_dry_run(struct svc *sv, const struct cluster *c, const struct op_options *o, json_object **plan,
                   char *err, size_t errlen) {
        struct op_resolution op;
        int r = opresolve_cluster(sv, c, o, &op, err, errlen);
        if (r >= 0 && !op.none && !op.plan.ok) {
                _cleanup_free_ char *why = opresolve_problems_text(&op.plan);
                r = errmsg(err, errlen, -EDOM, "the operators of cluster %s would not resolve: %s", c->name,
                           why ? why : "");
        }
        if (r >= 0 && !(*plan = plan_json(&op)))
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
        opresolve_free(&op);
        return r;
}

int operators_change_reply(json_object **plan, int64_t rev, json_object **out, char *err, size_t errlen) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "plan", TAKE_PTR(*plan)) < 0 ||
            (rev > 0 && jadd(o, "payload_revision", json_object_new_int64(rev)) < 0))
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        *out = TAKE_PTR(o);
        return 0;
}

int svc_operators_preview(struct svc *sv, const char *cluster_id, const struct op_options *o, json_object **out,
                          char *err, size_t errlen) {
        struct cluster c;
        struct op_resolution op = { 0 };
        int r = operators_load_cluster(sv, cluster_id, &c, err, errlen);
        for (size_t i = 0; r >= 0 && o && i < o->n_extra; i++) {
                struct op_subscribe in = { o->extra[i].package, o->extra[i].channel, o->extra[i].catalog,
                                           o->extra[i].version_range, o->extra[i].skip_dependencies, false };
                r = check_subscribe(&in, err, errlen);
        }
        if (r >= 0)
                r = opresolve_cluster(sv, &c, o, &op, err, errlen);
        if (r >= 0 && !(*out = plan_json(&op)))
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
        opresolve_free(&op);
        cluster_free(&c);
        return r;
}

/* -EBUSY when the upgrade o would touch a package being uninstalled. */
static int refuse_uninstalling(struct svc *sv, const struct cluster *c, const struct op_options *o, char *err,
                               size_t errlen) {
        struct subscription_record_list l;
        int r = store_subscription_list(sv->store, c->id, &l);
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                bool named = o->upgrade_all;
                for (size_t k = 0; !named && k < o->n_upgrade; k++)
                        named = strcmp(o->upgrade[k], l.v[i].package) == 0;
                if (l.v[i].uninstall && named)
                        r = errmsg(err, errlen, -EBUSY, "%s is being uninstalled from cluster %s; upgrade when that "
                                   "is over", l.v[i].package, c->name);
        }
        subscription_record_list_free(&l);
        return r;
}

/* The (group, kind) pairs of before that after does not have. */
static int kinds_dropped(const struct owned_kinds *before, const struct owned_kinds *after, struct strv *out) {
        struct cleanup_kind *b = calloc(before->n + 1, sizeof *b), *a = calloc(after->n + 1, sizeof *a);
        int r = b && a ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < before->n; i++)
                b[i] = (struct cleanup_kind) { before->v[i].group, before->v[i].kind };
        for (size_t i = 0; r == 0 && i < after->n; i++)
                a[i] = (struct cleanup_kind) { after->v[i].group, after->v[i].kind };
        if (r == 0)
                r = cleanup_kinds_dropped(b, before->n, a, after->n, out);
        free(a);
        free(b);
        return r;
}

int svc_operators_upgrade(struct svc *sv, const char *cluster_id, const struct op_options *o, const char *by,
                          json_object **out, char *err, size_t errlen) {
        struct cluster c;
        _cleanup_json_ json_object *plan = NULL;
        int64_t rev = 0;
        int r = operators_load_cluster(sv, cluster_id, &c, err, errlen);
        if (r >= 0)
                r = operators_refuse_installing(&c, err, errlen);
        if (r >= 0 && c.payload_revision <= 0)
                r = errmsg(err, errlen, -EBUSY, "cluster %s is not installed: its operators install with it", c.name);
        if (r >= 0)
                r = refuse_uninstalling(sv, &c, o, err, errlen);
        if (r >= 0)
                r = operators_dry_run(sv, &c, o, &plan, err, errlen);
        /* An upgrade never deletes an operand: one of a kind the new
         * bundles no longer own is reported. */
        struct owned_kinds before = { 0 }, after = { 0 };
        _cleanup_strv_ struct strv dropped = { 0 };
        if (r >= 0 && operands_owned(sv, &c, &before, err, errlen) < 0)
                owned_kinds_free(&before);
        if (r >= 0) {
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "operators of cluster %s upgraded by %s",
                          c.name, by);
                r = operators_apply_change(sv, &c, o, &rev, err, errlen);
        }
        if (r >= 0 && rev > 0 && before.n > 0 && operands_owned(sv, &c, &after, err, errlen) >= 0 &&
            (r = kinds_dropped(&before, &after, &dropped)) >= 0 && dropped.n > 0) {
                _cleanup_free_ char *list = strv_join(&dropped, ", ", 100);
                svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, c.id, NULL,
                          "cluster %s: after the upgrade no operator owns kind(s) %s any more; their operands are "
                          "kept (an upgrade never deletes them) and an uninstall with cleanup will not delete them",
                          c.name, list ? list : "?");
        }
        owned_kinds_free(&before);
        owned_kinds_free(&after);
        if (r >= 0)
                r = operators_change_reply(&plan, rev, out, err, errlen);
        if (r >= 0 && dropped.n > 0) {
                json_object *a = json_object_new_array();
                for (size_t i = 0; a && i < dropped.n; i++)
                        if (json_object_array_add(a, json_object_new_string(dropped.v[i])) < 0) {
                                json_object_put(a);
                                a = NULL;
                        }
                if (jadd(*out, "kinds_no_longer_owned", a) < 0)
                        r = -ENOMEM;
        }
        cluster_free(&c);
        return r;
}
