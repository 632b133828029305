/* Operands applied through musterd and found by the node agents
 * (operands.h). */
#include "svc/operands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cleanup.h"
#include "svc/revisions.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "svc/opresolve.h"
#include "store/store.h"

void owned_kinds_free(struct owned_kinds *k) {
        free(k->v);
        if (k->res) {
                opresolve_free(k->res);
                free(k->res);
        }
        *k = (struct owned_kinds) { 0 };
}

int operands_owned(struct svc *sv, const struct cluster *c, struct owned_kinds *out, char *err, size_t errlen) {
        struct op_resolution *op = calloc(1, sizeof *op);
        int r;

        *out = (struct owned_kinds) { 0 };
        if (!op)
                return -ENOMEM;
        out->res = op;
        if ((r = opresolve_cluster(sv, c, NULL, op, err, errlen)) < 0 || op->none)
                return r;
        if (!op->plan.ok) {
                _cleanup_free_ char *why = opresolve_problems_text(&op->plan);
                return errmsg(err, errlen, -EDOM, "the operators of cluster %s do not resolve: %s", c->name,
                              why ? why : "out of memory");
        }
        for (size_t i = 0; i < op->plan.n_steps; i++) {
                const struct resolve_step *s = &op->plan.steps[i];
                if (s->action == RESOLVE_REMOVE || !s->catalog_bundle)
                        continue;
                for (size_t k = 0; k < s->catalog_bundle->n_provides_gvks; k++) {
                        const struct catalog_gvk *g = &s->catalog_bundle->provides_gvks[k];
                        struct owned_kind *e = inv_array_append((void **) &out->v, &out->n, sizeof *e);
                        if (!e)
                                return -ENOMEM;
                        *e = (struct owned_kind) { s->package, g->group ? g->group : "", g->version, g->kind };
                }
        }
        return 0;
}

const char *owned_by(const struct owned_kinds *k, const char *group, const char *kind) {
        for (size_t i = 0; i < k->n; i++)
                if (strcmp(k->v[i].group, group ? group : "") == 0 && strcmp(k->v[i].kind, kind) == 0)
                        return k->v[i].package;
        return NULL;
}

static int load_cluster(struct svc *sv, const char *id, struct cluster *c, char *err, size_t errlen) {
        cluster_init(c);
        int r = store_cluster_get(sv->store, id, c);
        return r == -ENOENT ? errmsg(err, errlen, r, "no cluster %s", id) : r;
}

static json_object *operand_json(const struct operand_record *o) {
        _cleanup_json_ json_object *j = json_object_new_object();
        if (!j || jadd(j, "id", json_object_new_string(o->id)) < 0 ||
            jadd(j, "source", json_object_new_string("managed")) < 0 ||
            jadd(j, "package", json_object_new_string(o->package)) < 0 ||
            jadd(j, "group", json_object_new_string(o->group)) < 0 ||
            jadd(j, "version", json_object_new_string(o->version)) < 0 ||
            jadd(j, "kind", json_object_new_string(o->kind)) < 0 || jadd_str_opt(j, "namespace", o->namespace) < 0 ||
            jadd(j, "name", json_object_new_string(o->name)) < 0 || jadd(j, "file", json_object_new_string(o->file)) < 0 ||
            jadd(j, "owner", json_object_new_string(o->owner)) < 0 ||
            jadd(j, "created_at", json_object_new_string(o->created_at)) < 0)
                return NULL;
        return TAKE_PTR(j);
}

/* An installed cluster's next payload revision, with what changed: its
 * number in *rev (0: none was needed or the cluster is not installed). */
static int next_revision(struct svc *sv, struct cluster *c, int64_t *rev, char *err, size_t errlen) {
        const char *what = NULL;
        *rev = 0;
        if (c->payload_revision <= 0 || cluster_status_from_string(c->status) != CLUSTER_INSTALLED)
                return 0;
        int r = revisions_next_payload(sv, c, NULL, err, errlen, &what);
        if (r == 1)
                *rev = c->payload_revision;
        if (r < 0 && what)
                errmsg(err, errlen, r, "writing the %s of cluster %s failed", what, c->name);
        return r < 0 ? r : 0;
}

/* 1 when c's subscription to package is being uninstalled, 0 when not,
 * -errno. */
static int uninstalling(struct svc *sv, const struct cluster *c, const char *package) {
        struct subscription_record_list l;
        int r = store_subscription_list(sv->store, c->id, &l);
        for (size_t i = 0; r == 0 && i < l.n; i++)
                if (l.v[i].uninstall && strcmp(l.v[i].package, package) == 0)
                        r = 1;
        subscription_record_list_free(&l);
        return r;
}

int svc_operands_apply(struct svc *sv, const char *cluster_id, const struct catalog_file *files, size_t n,
                       const char *by, json_object **out, char *err, size_t errlen) {
        struct cluster c;
        struct owned_kinds k = { 0 };
        struct manifest_list ms = { 0 };
        struct operand_record *v = NULL;
        _cleanup_json_ json_object *o = NULL, *a = NULL;
        int64_t rev = 0;
        char why[512];
        int r;

        *out = NULL;
        if ((r = load_cluster(sv, cluster_id, &c, err, errlen)) < 0)
                goto out;
        if (n == 0 || n > OPERANDS_MAX_FILES) {
                r = errmsg(err, errlen, -EINVAL, "an apply takes 1 to %d files", OPERANDS_MAX_FILES);
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                const char *p = files[i].path;
                if (!p || !*p || strchr(p, '/') || p[0] == '.' || strlen(p) > MANIFEST_MAX_FILE_NAME) {
                        r = errmsg(err, errlen, -EINVAL, "file %zu: \"%.80s\" is not a plain file name", i, p ? p : "");
                        goto out;
                }
                if (files[i].len > STORE_MAX_OPERAND_BYTES) {
                        r = errmsg(err, errlen, -EINVAL, "file %s is %zu bytes, at most %d", p, files[i].len,
                                   STORE_MAX_OPERAND_BYTES);
                        goto out;
                }
                if ((r = manifest_parse_file(p, files[i].content, files[i].len, &ms, why, sizeof why)) < 0) {
                        r = errmsg(err, errlen, r == -ENOMEM || r == -E2BIG ? r : -EINVAL, "%s", why);
                        goto out;
                }
        }
        if ((r = operands_owned(sv, &c, &k, err, errlen)) < 0)
                goto out;
        if (!(v = calloc(ms.n ? ms.n : 1, sizeof *v))) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < ms.n; i++) {
                const struct manifest *m = &ms.v[i];
                const char *pkg = owned_by(&k, m->group, m->kind);
                if (!pkg) {
                        r = errmsg(err, errlen, -EINVAL,
                                   "%s: kind %s (%s) is owned by no operator installed on cluster %s", m->file, m->kind,
                                   *m->group ? m->group : "core", c.name);
                        goto out;
                }
                if ((r = uninstalling(sv, &c, pkg)) != 0) {
                        if (r > 0)
                                r = errmsg(err, errlen, -EBUSY, "%s: kind %s is owned by %s, which is being "
                                           "uninstalled from cluster %s with its operands", m->file, m->kind, pkg,
                                           c.name);
                        goto out;
                }
                v[i] = (struct operand_record) {
                        .cluster_id = strdup(c.id), .package = strdup(pkg), .group = strdup(m->group),
                        .version = strdup(m->version), .kind = strdup(m->kind),
                        .namespace = m->namespace ? strdup(m->namespace) : NULL, .name = strdup(m->name),
                        .file = strdup(m->file), .content = strdup(m->content), .owner = strdup(by),
                };
                if (!v[i].cluster_id || !v[i].package || !v[i].group || !v[i].version || !v[i].kind || !v[i].name ||
                    !v[i].file || !v[i].content || !v[i].owner || (m->namespace && !v[i].namespace)) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        if ((r = store_operand_put(sv->store, v, ms.n)) < 0) {
                if (r == -EDQUOT)
                        r = errmsg(err, errlen, r, "cluster %s would have more than %d operands", c.name,
                                   STORE_MAX_OPERANDS);
                goto out;
        }
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s: %zu operand(s) applied by %s", c.name,
                  ms.n, by);
        if (next_revision(sv, &c, &rev, why, sizeof why) < 0)
                svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, c.id, NULL,
                          "cluster %s: no payload revision with the operands: %s", c.name, why);
        o = json_object_new_object();
        a = json_object_new_array();
        for (size_t i = 0; a && i < ms.n; i++) {
                json_object *e = operand_json(&v[i]);
                if (!e || json_object_array_add(a, e) < 0) {
                        json_object_put(e);
                        json_object_put(TAKE_PTR(a));
                }
        }
        if (!o || !a || jadd(o, "items", TAKE_PTR(a)) < 0 ||
            (rev > 0 && jadd(o, "payload_revision", json_object_new_int64(rev)) < 0))
                r = -ENOMEM;
        else
                *out = TAKE_PTR(o);
out:
        for (size_t i = 0; v && i < ms.n; i++)
                operand_record_free(&v[i]);
        free(v);
        manifest_list_free(&ms);
        owned_kinds_free(&k);
        cluster_free(&c);
        return r;
}

/* The found objects of the cluster's hosts that are of an owned kind,
 * merged across hosts by identity, into a: each with the hosts that
 * reported it. */
static int found_json(struct svc *sv, const struct cluster *c, const struct owned_kinds *k, json_object *a) {
        struct store_host_found_list fl;
        int r = store_host_found_list(sv->store, c->id, &fl);
        if (r < 0)
                return r;
        for (size_t i = 0; i < fl.n && r == 0; i++) {
                _cleanup_json_ json_object *l = json_tokener_parse(fl.v[i].found);
                size_t n = json_object_is_type(l, json_type_array) ? json_object_array_length(l) : 0;
                for (size_t j = 0; j < n && r == 0; j++) {
                        json_object *f = json_object_array_get_idx(l, j), *x;
                        const char *kind = json_object_object_get_ex(f, "kind", &x) ? json_object_get_string(x) : NULL;
                        const char *grp = json_object_object_get_ex(f, "group", &x) ? json_object_get_string(x) : NULL;
                        const char *name = json_object_object_get_ex(f, "name", &x) ? json_object_get_string(x) : NULL;
                        const char *ns = json_object_object_get_ex(f, "namespace", &x) ? json_object_get_string(x)
                                                                                       : NULL;
                        const char *pkg = kind && name ? owned_by(k, grp, kind) : NULL;
                        if (!pkg)
                                continue;
                        /* The same object on another host: one entry, more hosts. */
                        json_object *same = NULL;
                        for (size_t e = 0; e < json_object_array_length(a) && !same; e++) {
                                json_object *o = json_object_array_get_idx(a, e), *y;
                                const char *ons = json_object_object_get_ex(o, "namespace", &y) ? json_object_get_string(y)
                                                                                               : NULL;
                                if (!strcmp(json_object_get_string(json_object_object_get(o, "source")), "found") &&
                                    !strcmp(json_object_get_string(json_object_object_get(o, "kind")), kind) &&
                                    !strcmp(json_object_get_string(json_object_object_get(o, "group")), grp ? grp : "") &&
                                    !strcmp(json_object_get_string(json_object_object_get(o, "name")), name) &&
                                    ((!ons && !ns) || (ons && ns && !strcmp(ons, ns))))
                                        same = o;
                        }
                        if (same) {
                                if (json_object_array_add(json_object_object_get(same, "hosts"),
                                                          json_object_new_string(fl.v[i].host_id)) < 0)
                                        r = -ENOMEM;
                                continue;
                        }
                        json_object *o = json_object_new_object(), *hosts = json_object_new_array();
                        const char *file = json_object_object_get_ex(f, "file", &x) ? json_object_get_string(x) : "";
                        const char *ver = json_object_object_get_ex(f, "version", &x) ? json_object_get_string(x) : "";
                        if (!o || !hosts || json_object_array_add(hosts, json_object_new_string(fl.v[i].host_id)) < 0 ||
                            jadd(o, "source", json_object_new_string("found")) < 0 ||
                            jadd(o, "package", json_object_new_string(pkg)) < 0 ||
                            jadd(o, "group", json_object_new_string(grp ? grp : "")) < 0 ||
                            jadd(o, "version", json_object_new_string(ver ? ver : "")) < 0 ||
                            jadd(o, "kind", json_object_new_string(kind)) < 0 || jadd_str_opt(o, "namespace", ns) < 0 ||
                            jadd(o, "name", json_object_new_string(name)) < 0 ||
                            jadd(o, "file", json_object_new_string(file ? file : "")) < 0 ||
                            jadd(o, "hosts", hosts) < 0 || json_object_array_add(a, o) < 0) {
                                json_object_put(o);
                                r = -ENOMEM;
                        }
                }
        }
        store_host_found_list_free(&fl);
        return r;
}

static json_object *owned_json(const struct owned_kinds *k) {
        _cleanup_json_ json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < k->n; i++) {
                json_object *o = json_object_new_object();
                if (!o || jadd(o, "package", json_object_new_string(k->v[i].package)) < 0 ||
                    jadd(o, "group", json_object_new_string(k->v[i].group)) < 0 ||
                    jadd(o, "version", json_object_new_string(k->v[i].version ? k->v[i].version : "")) < 0 ||
                    jadd(o, "kind", json_object_new_string(k->v[i].kind)) < 0 || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        return NULL;
                }
        }
        return TAKE_PTR(a);
}

int svc_operands_list(struct svc *sv, const char *cluster_id, json_object **out, char *err, size_t errlen) {
        struct cluster c;
        struct owned_kinds k = { 0 };
        struct operand_record_list l = { 0 };
        _cleanup_json_ json_object *o = NULL, *a = NULL;
        char why[512];
        int r;

        *out = NULL;
        if ((r = load_cluster(sv, cluster_id, &c, err, errlen)) < 0 || (r = store_operand_list(sv->store, c.id, &l)) < 0)
                goto out;
        /* Operators that do not resolve own nothing for now: the managed
         * operands are listed still. */
        if ((r = operands_owned(sv, &c, &k, why, sizeof why)) == -EDOM)
                r = 0;
        if (r < 0)
                goto out;
        o = json_object_new_object();
        a = json_object_new_array();
        for (size_t i = 0; a && i < l.n; i++) {
                json_object *e = operand_json(&l.v[i]);
                if (!e || json_object_array_add(a, e) < 0) {
                        json_object_put(e);
                        json_object_put(TAKE_PTR(a));
                }
        }
        if (!o || !a || (r = found_json(sv, &c, &k, a)) < 0 || jadd(o, "items", TAKE_PTR(a)) < 0 ||
            jadd(o, "owned_kinds", owned_json(&k)) < 0)
                r = r < 0 ? r : -ENOMEM;
        else
                *out = TAKE_PTR(o);
out:
        operand_record_list_free(&l);
        owned_kinds_free(&k);
        cluster_free(&c);
        return r;
}

int svc_operand_delete(struct svc *sv, const char *cluster_id, const char *id, const char *by, char *err,
                       size_t errlen) {
        struct cluster c;
        int64_t rev = 0;
        char why[512];
        int r;
        if ((r = load_cluster(sv, cluster_id, &c, err, errlen)) < 0)
                goto out;
        if ((r = store_operand_delete(sv->store, c.id, id)) < 0) {
                if (r == -ENOENT || r == -EINVAL)
                        r = errmsg(err, errlen, -ENOENT, "cluster %s has no operand %s", c.name, id);
                goto out;
        }
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s: operand %s deleted by %s", c.name, id,
                  by);
        if (next_revision(sv, &c, &rev, why, sizeof why) < 0)
                svc_event(sv, EVENT_WARNING, EVENT_CAT_SYSTEM, NULL, c.id, NULL,
                          "cluster %s: no payload revision without operand %s: %s", c.name, id, why);
out:
        cluster_free(&c);
        return r;
}
