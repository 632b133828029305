/* A cluster's operators resolved: see opresolve.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/catalogload.h"
#include "cleanup.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "errmsg.h"
#include "growbuf.h"
#include "domain/operators_payload.h"
#include "svc/opresolve.h"
#include "store/store.h"

/* The bundles c's current payload revision installed. */
static int load_installed(struct svc *sv, const struct cluster *c, struct op_resolution *out, char *err,
                          size_t errlen) {
        struct payload_record p;
        if (c->payload_revision <= 0)
                return 0;
        int r = store_payload_get(sv->store, c->id, c->payload_revision, &p);
        if (r < 0) {
                payload_record_free(&p);
                return errmsg(err, errlen, r, "reading payload revision %lld of cluster %s failed",
                              (long long) c->payload_revision, c->id);
        }
        out->payload = json_tokener_parse(p.canonical);
        payload_record_free(&p);
        if (!out->payload)
                return errmsg(err, errlen, -EIO, "payload revision %lld of cluster %s is not JSON",
                              (long long) c->payload_revision, c->id);
        r = operators_installed(out->payload, &out->installed, &out->n_installed);
        if (r < 0)
                return errmsg(err, errlen, r == -ENOMEM ? r : -EIO,
                              "the operators of payload revision %lld of cluster %s cannot be read",
                              (long long) c->payload_revision, c->id);
        return 0;
}

static int collect_subscriptions(struct op_resolution *out, const struct op_options *o) {
        size_t n = out->subs.n + (o ? o->n_extra : 0);
        out->rsubs = calloc(n + 1, sizeof *out->rsubs);
        if (!out->rsubs)
                return -ENOMEM;
        for (size_t i = 0; i < out->subs.n; i++) {
                const struct subscription_record *s = &out->subs.v[i];
                if (o && o->without && strcmp(o->without, s->package) == 0)
                        continue;
                out->rsubs[out->n_rsubs++] = (struct resolve_subscription) {
                        .package = s->package, .channel = s->channel, .catalog = s->catalog,
                        .version_range = s->version_range, .skip_dependencies = s->skip_dependencies };
        }
        for (size_t i = 0; o && i < o->n_extra; i++)
                out->rsubs[out->n_rsubs++] = o->extra[i];
        return 0;
}

int opresolve_cluster(struct svc *sv, const struct cluster *c, const struct op_options *o, struct op_resolution *out,
                      char *err, size_t errlen) {
        memset(out, 0, sizeof *out);
        int r = store_subscription_list(sv->store, c->id, &out->subs);
        if (r < 0)
                return errmsg(err, errlen, r, "reading the subscriptions of cluster %s failed", c->id);
        if (o && o->subscribed_only && out->subs.n == 0 && o->n_extra == 0) {
                out->none = true;
                return 0;
        }
        if ((r = load_installed(sv, c, out, err, errlen)) < 0)
                return r;
        if ((r = collect_subscriptions(out, o)) < 0)
                return errmsg(err, errlen, r, "out of memory");
        if (out->n_rsubs == 0 && out->n_installed == 0) {
                out->none = true;
                return 0;
        }
        if ((r = svc_catalogs_acquire(sv, &out->set)) < 0)
                return errmsg(err, errlen, r, "the operator catalogs cannot be read");
        size_t n_cats = 0;
        const struct resolve_catalog *cats = svc_catalog_set_items(out->set, &n_cats);
        struct resolve_request q = {
                .catalogs = cats, .n_catalogs = n_cats, .subscriptions = out->rsubs, .n_subscriptions = out->n_rsubs,
                .installed = out->installed, .n_installed = out->n_installed,
                .upgrade = o ? o->upgrade : NULL, .n_upgrade = o ? o->n_upgrade : 0,
                .upgrade_all = o && o->upgrade_all, .prune = o && o->prune,
        };
        return resolve(&q, &out->plan, err, errlen);
}

void opresolve_free(struct op_resolution *r) {
        resolve_plan_free(&r->plan);
        svc_catalog_set_release(r->set);
        free(r->installed);
        json_object_put(r->payload);
        free(r->rsubs);
        subscription_record_list_free(&r->subs);
        memset(r, 0, sizeof *r);
}

/* The problems' words together: each is at most RESOLVE_TEXT_MAX. */
#define OPRESOLVE_TEXT_MAX (4 * RESOLVE_TEXT_MAX)

char *opresolve_problems_text(const struct resolve_plan *p) {
        struct growbuf s = { 0 };
        for (size_t i = 0; i < p->n_problems; i++) {
                const struct resolve_problem *pr = &p->problems[i];
                if (growbuf_printf(&s, OPRESOLVE_TEXT_MAX, "%s%s", i ? "; " : "", pr->text ? pr->text : "") < 0)
                        goto oom;
                for (size_t j = 0; j < pr->n_solutions; j++)
                        if (growbuf_printf(&s, OPRESOLVE_TEXT_MAX, "%s%s", j ? "; or " : ". Ways out: ",
                                           pr->solutions[j]) < 0)
                                goto oom;
        }
        return s.data ? s.data : strdup("");
oom:
        free(s.data);
        return NULL;
}

json_object *opresolve_condition(const struct op_resolution *r) {
        _cleanup_json_ json_object *o = json_object_new_object();
        bool ok = r->none || r->plan.ok;
        _cleanup_free_ char *why = ok ? NULL : opresolve_problems_text(&r->plan);
        if (!o || jadd_str_opt(o, "type", "OperatorsResolvable") < 0 || jadd_str_opt(o, "status", ok ? "True" : "False") < 0 ||
            jadd_str_opt(o, "reason", ok ? "AllSubscriptionsResolved" : "ConstraintsNotSatisfiable") < 0 ||
            jadd_str_opt(o, "message", ok ? (r->none ? "No operators are subscribed to" : "Every subscription resolves")
                                     : why ? why : "") < 0)
                return NULL;
        return TAKE_PTR(o);
}

