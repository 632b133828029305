/* A cluster's capabilities and payload revisions under its release
 * (revisions.h): the pure capability and payload code of common/ fed with
 * what the store holds, and the results written back. */
#include "svc/revisions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/payload_addons.h"
#include "svc/payload_uninstalls.h"
#include "canonjson.h"
#include "cleanup.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "log.h"
#include "svc/payload_operands.h"
#include "domain/operators_payload.h"
#include "svc/opresolve.h"
#include "payload.h"

int release_load(struct svc *sv, const char *version, bool with_manifests, struct loaded_release *lr) {
        *lr = (struct loaded_release) { 0 };
        release_record_init(&lr->r);
        if (!version)
                return -ENOENT;
        int r = store_release_get(sv->store, version, &lr->r);
        if (r < 0)
                return r == -EINVAL ? -ENOENT : r;
        lr->loaded = true;
        if (with_manifests) {
                r = store_release_manifests(sv->store, version, &lr->ms);
                if (r < 0) {
                        svc_release_unload(lr);
                        return r;
                }
                lr->have_manifests = true;
        }
        return 0;
}

void svc_release_unload(struct loaded_release *lr) {
        release_record_free(&lr->r);
        manifest_list_free(&lr->ms);
        *lr = (struct loaded_release) { 0 };
        release_record_init(&lr->r);
}

static int strv_copy(const struct strv *from, struct strv *to) {
        struct strv n = { 0 };
        for (size_t i = 0; i < from->n; i++)
                if (strv_push(&n, from->v[i]) < 0) {
                        strv_free(&n);
                        return -ENOMEM;
                }
        strv_free(to);
        *to = n;
        return 0;
}

/* capability.h's spec over the cluster's strings (borrowed, not freed). */
static struct cap_spec borrow_spec(const struct cluster_cap_spec *s) {
        return (struct cap_spec) { .baseline = s->baseline_capability_set,
                                   .additional = s->additional_enabled_capabilities };
}

int revisions_set_condition(struct cluster *c, json_object *cond) {
        char now[MODEL_TIME_LEN];
        const char *type = json_object_get_string(json_object_object_get(cond, "type"));
        const char *status = json_object_get_string(json_object_object_get(cond, "status"));
        const char *reason = json_object_get_string(json_object_object_get(cond, "reason"));
        const char *message = json_object_get_string(json_object_object_get(cond, "message"));
        struct model_condition *old = NULL;
        int r;

        if (!type || !status)
                return -EINVAL;
        if ((r = model_now_rfc3339(now)) < 0)
                return r;
        for (size_t i = 0; i < c->n_conditions; i++)
                if (c->conditions[i].type && strcmp(c->conditions[i].type, type) == 0)
                        old = &c->conditions[i];
        if (old && strcmp(old->status ? old->status : "", status) == 0 &&
            strcmp(old->reason ? old->reason : "", reason ? reason : "") == 0 &&
            strcmp(old->message ? old->message : "", message ? message : "") == 0 && old->last_transition_time)
                return 0;
        if (!old) {
                old = inv_array_append((void **) &c->conditions, &c->n_conditions, sizeof *old);
                if (!old)
                        return -ENOMEM;
                *old = (struct model_condition) { 0 };
        }
        bool moved = !old->status || strcmp(old->status, status) != 0 || !old->last_transition_time;
        struct model_condition n = {
                .type = strdup(type),
                .status = strdup(status),
                .reason = reason ? strdup(reason) : NULL,
                .message = message ? strdup(message) : NULL,
                .last_transition_time = strdup(moved ? now : old->last_transition_time),
        };
        if (!n.type || !n.status || (reason && !n.reason) || (message && !n.message) || !n.last_transition_time) {
                free(n.type);
                free(n.status);
                free(n.reason);
                free(n.message);
                free(n.last_transition_time);
                return -ENOMEM;
        }
        free(old->type);
        free(old->status);
        free(old->reason);
        free(old->message);
        free(old->last_transition_time);
        *old = n;
        return 1;
}

int revisions_compute(const struct loaded_release *lr, struct cluster *c, const struct cluster_cap_spec *spec,
                      bool keep_previous, const struct strv *also_enable, char *err, size_t errlen) {
        struct cap_spec sp = borrow_spec(spec);
        struct cap_status st;
        int r;

        if (err && errlen)
                err[0] = '\0';
        if ((r = cap_validate_spec(&lr->r.info, &sp, err, errlen)) < 0)
                return r;
        cap_status_init(&st);
        r = cap_compute(&lr->r.info, &sp, keep_previous && c->has_cap_status ? &c->cap_status.enabled_capabilities : NULL,
                        also_enable, &st);
        if (r < 0) {
                cap_status_free(&st);
                if (err && errlen)
                        snprintf(err, errlen, "could not compute the enabled capabilities");
                return r;
        }
        _cleanup_json_ json_object *cond = cap_condition_json(&st);
        if (!cond) {
                cap_status_free(&st);
                return -ENOMEM;
        }
        if (spec != &c->cap_spec) {
                char *b = spec->baseline_capability_set ? strdup(spec->baseline_capability_set) : NULL;
                if ((spec->baseline_capability_set && !b) ||
                    strv_copy(&spec->additional_enabled_capabilities, &c->cap_spec.additional_enabled_capabilities) < 0) {
                        free(b);
                        cap_status_free(&st);
                        return -ENOMEM;
                }
                free(c->cap_spec.baseline_capability_set);
                c->cap_spec.baseline_capability_set = b;
        }
        cluster_cap_status_free(&c->cap_status);
        c->cap_status.enabled_capabilities = st.enabled;
        c->cap_status.known_capabilities = st.known;
        c->cap_status.implicit_capabilities = st.implicit;
        c->has_cap_status = true;
        /* st's vectors now belong to c. */
        int k = revisions_set_condition(c, cond);
        return k < 0 ? k : 0;
}

static struct filter_context filter_ctx(const struct loaded_release *lr, const struct cluster *c) {
        return (struct filter_context) {
                .profile = lr->r.info.default_profile,
                .feature_set = c->feature_set,
                .exclude_ids = NULL,
                .enabled = &c->cap_status.enabled_capabilities,
                .known = &lr->r.info.known_capabilities,
        };
}

int revisions_upgrade_implicit(const struct loaded_release *old, const struct loaded_release *nw,
                               const struct cluster *c, struct strv *also_enable) {
        if (!old->have_manifests || !nw->have_manifests || !c->has_cap_status)
                return -EINVAL;
        struct filter_context oc = filter_ctx(old, c), nc = filter_ctx(nw, c);
        return cap_upgrade_implicit(&old->ms, &oc, &nw->ms, &nc, also_enable);
}

/* What the payload tells the hosts of a cluster (payload.h "settings" and
 * "hosts"), with the store's records it points into. */
struct host_settings {
        struct host_list hosts;
        struct infra_env *ies;      /* one per host, by index */
        struct payload_host *ph;
        struct payload_settings s;
};

static void host_settings_free(struct host_settings *b) {
        for (size_t i = 0; b->ies && i < b->hosts.n; i++)
                infra_env_free(&b->ies[i]);
        free(b->ies);
        free(b->ph);
        host_list_free(&b->hosts);
        *b = (struct host_settings) { 0 };
}

/* The cluster's settings, and for each host bound to it: its role (roles[]
 * as install assigns them, else its own; auto goes as worker, as the
 * install step's role does), its hostname, and its infra-env's NTP sources
 * and SSH key. */
static int host_settings_load(struct svc *sv, const struct cluster *c, const struct store_host_role *roles,
                              size_t n_roles, struct host_settings *b, char *err, size_t errlen) {
        struct host_filter f = { .cluster_id = c->id, .no_inventory = true };
        struct list_page pg = { .limit = STORE_MAX_LIMIT };
        int r;

        *b = (struct host_settings) { 0 };
        if ((r = store_host_list(sv->store, &f, &pg, &b->hosts)) < 0) {
                snprintf(err, errlen, "listing the hosts of cluster %s failed", c->id);
                return r;
        }
        size_t n = b->hosts.n;
        b->ies = calloc(n ? n : 1, sizeof *b->ies);
        b->ph = calloc(n ? n : 1, sizeof *b->ph);
        if (!b->ies || !b->ph) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                infra_env_init(&b->ies[i]);
        for (size_t i = 0; i < n; i++) {
                const struct host *h = &b->hosts.v[i];
                enum host_role role = h->role;
                for (size_t k = 0; k < n_roles; k++)
                        if (roles[k].host_id && strcmp(roles[k].host_id, h->id) == 0)
                                role = roles[k].role;
                /* Hosts mostly share an infra-env: each is read once. */
                const struct infra_env *ie = NULL;
                for (size_t k = 0; k < i && !ie; k++)
                        if (strcmp(b->hosts.v[k].infra_env_id, h->infra_env_id) == 0)
                                ie = &b->ies[k];
                if (!ie) {
                        r = store_infra_env_get(sv->store, h->infra_env_id, &b->ies[i]);
                        if (r < 0 && r != -ENOENT) {
                                snprintf(err, errlen, "reading infra-env %s of host %s failed", h->infra_env_id, h->id);
                                return r;
                        }
                        ie = &b->ies[i];
                }
                b->ph[i] = (struct payload_host) {
                        .host_id = h->id,
                        .role = host_role_to_string(role == ROLE_MASTER ? ROLE_MASTER : ROLE_WORKER),
                        .hostname = host_hostname(h),
                        .ntp_sources = &ie->ntp_sources,
                        .ssh_authorized_key = ie->ssh_authorized_key,
                };
        }
        b->s = (struct payload_settings) {
                .cluster_name = c->name,
                .base_dns_domain = c->base_dns_domain,
                .api_vip = c->api_vip,
                .ingress_vip = c->ingress_vip,
                .pull_secret = c->pull_secret,
                .hosts = b->ph,
                .n_hosts = n,
        };
        return 0;
}

/* Part 2 of the payload (DESIGN §6): the cluster's operators resolved, their
 * bundles' manifests in dependency order. A cluster with no subscriptions
 * and no operators installed has none (op->none). -EDOM with the
 * explanation when the subscriptions do not resolve. */
static int operator_part(struct svc *sv, const struct cluster *c, const struct op_options *ops,
                         struct op_resolution *op, struct manifest_list *ms, char *err, size_t errlen) {
        int r = opresolve_cluster(sv, c, ops, op, err, errlen);
        if (r < 0 || op->none)
                return r;
        if (!op->plan.ok) {
                _cleanup_free_ char *why = opresolve_problems_text(&op->plan);
                return errmsg(err, errlen, -EDOM, "the operators of cluster %s do not resolve: %s", c->name,
                              why ? why : "out of memory");
        }
        return operators_manifests(&op->plan, ms, err, errlen);
}

/* The payload object of revision `revision` and how many manifests it carries. */
static int build_object(struct svc *sv, const struct cluster *c, const struct loaded_release *lr,
                        const struct store_host_role *roles, size_t n_roles, int64_t revision,
                        const struct op_options *ops, json_object **out, size_t *n_included, char *err,
                        size_t errlen) {
        _cleanup_(host_settings_free) struct host_settings hs = { 0 };
        _cleanup_(opresolve_free) struct op_resolution op = { .none = true };
        _cleanup_(manifest_list_free) struct manifest_list opms = { 0 };
        _cleanup_(manifest_list_free) struct manifest_list adms = { 0 };
        _cleanup_(manifest_list_free) struct manifest_list odms = { 0 };
        struct filter_context ctx = filter_ctx(lr, c);
        struct filter_result *res = NULL;
        _cleanup_free_ const struct manifest **inc = NULL;
        char url[512];
        size_t n = 0;
        int r;

        *out = NULL;
        if (!lr->have_manifests || !c->has_cap_status || !c->release_version) {
                snprintf(err, errlen, "the capabilities of cluster %s are not computed for release %s", c->id,
                         c->release_version ? c->release_version : "(none)");
                return -EINVAL;
        }
        if (lr->ms.n > PAYLOAD_MAX_MANIFESTS) {
                snprintf(err, errlen, "release %s has %zu manifests, a payload carries at most %d", lr->r.info.version,
                         lr->ms.n, PAYLOAD_MAX_MANIFESTS);
                return -E2BIG;
        }
        if ((r = host_settings_load(sv, c, roles, n_roles, &hs, err, errlen)) < 0)
                return r;
        if ((r = filter_release(&lr->ms, &ctx, &res)) < 0) {
                snprintf(err, errlen, "filtering the manifests of release %s failed", lr->r.info.version);
                return r;
        }
        if ((r = operator_part(sv, c, ops, &op, &opms, err, errlen)) < 0) {
                for (size_t i = 0; i < lr->ms.n; i++)
                        filter_result_free(&res[i]);
                free(res);
                return r;
        }
        /* Part 2 goes on with the managed operands; part 3: the add-ons' releases. */
        if ((r = operands_manifests(sv, c, op.none ? NULL : &op.plan, &odms, err, errlen)) < 0 ||
            (r = addons_manifests(sv, c, &adms, err, errlen)) < 0) {
                for (size_t i = 0; i < lr->ms.n; i++)
                        filter_result_free(&res[i]);
                free(res);
                return r;
        }
        inc = calloc(lr->ms.n + opms.n + odms.n + adms.n + 1, sizeof *inc);
        for (size_t i = 0; i < lr->ms.n; i++) {
                if (inc && res[i].reason == FILTER_INCLUDED)
                        inc[n++] = &lr->ms.v[i];
                filter_result_free(&res[i]);
        }
        free(res);
        if (!inc)
                return -ENOMEM;
        for (size_t i = 0; i < opms.n; i++)
                inc[n++] = &opms.v[i];
        for (size_t i = 0; i < odms.n; i++)
                inc[n++] = &odms.v[i];
        for (size_t i = 0; i < adms.n; i++)
                inc[n++] = &adms.v[i];
        if (lr->r.info.os_image.url)
                snprintf(url, sizeof url, "%s", lr->r.info.os_image.url);
        else
                snprintf(url, sizeof url, MUSTER_OS_IMAGE_PATH_FMT, lr->r.info.version);
        *out = payload_build(c->id, revision, c->release_version, url, &lr->r.info.os_image,
                             &c->cap_status.enabled_capabilities, (const struct manifest *const *) inc, n, &hs.s);
        if (*out && !op.none) {
                json_object *m = operators_member(&op.plan, op.rsubs, op.n_rsubs), *del = NULL;
                if (!m || json_object_object_add(*out, "operators", m) < 0) {
                        json_object_put(m);
                        json_object_put(*out);
                        *out = NULL;
                } else if (uninstall_deletions(&op.subs, &del) < 0 ||
                           (del && json_object_object_add(*out, "deletions", del) < 0)) {
                        /* The operands the uninstalls under way delete (DESIGN §9). */
                        json_object_put(del);
                        json_object_put(*out);
                        *out = NULL;
                }
        }
        if (!*out) {
                snprintf(err, errlen, "out of memory building the payload");
                return -ENOMEM;
        }
        *n_included = n;
        return 0;
}

int revisions_build_payload(struct svc *sv, const struct cluster *c, const struct loaded_release *lr,
                            const struct store_host_role *roles, size_t n_roles, int64_t revision,
                            const struct op_options *ops, struct payload_record *out, char *err, size_t errlen) {
        _cleanup_json_ json_object *obj = NULL;
        struct payload_signed ps = { 0 };
        size_t n = 0;
        int r;

        payload_record_init(out);
        if ((r = build_object(sv, c, lr, roles, n_roles, revision, ops, &obj, &n, err, errlen)) < 0)
                return r;
        if ((r = payload_sign(obj, sv->key, &ps)) < 0) {
                snprintf(err, errlen, "signing the payload failed: %s", strerror(-r));
                payload_signed_free(&ps);
                return r;
        }
        out->cluster_id = strdup(c->id);
        out->revision = revision;
        out->digest = strdup(ps.digest);
        out->signature = TAKE_PTR(ps.signature);
        out->canonical = TAKE_PTR(ps.canonical);
        out->canonical_len = ps.len;
        out->release_version = strdup(c->release_version);
        out->manifest_count = (int64_t) n;
        payload_signed_free(&ps);
        if (!out->cluster_id || !out->digest || !out->release_version) {
                payload_record_free(out);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        return 0;
}

int revisions_payload_differs(struct svc *sv, const struct cluster *c, const struct loaded_release *lr,
                              const struct op_options *ops, char *err, size_t errlen) {
        _cleanup_json_ json_object *obj = NULL;
        _cleanup_free_ char *canon = NULL;
        struct payload_record cur;
        size_t n = 0, len = 0;
        int r;

        if (c->payload_revision <= 0)
                return 1;
        if ((r = build_object(sv, c, lr, NULL, 0, c->payload_revision, ops, &obj, &n, err, errlen)) < 0)
                return r;
        if ((r = canonjson_serialize(obj, &canon, &len)) < 0) {
                snprintf(err, errlen, "the payload is not canonical JSON");
                return r;
        }
        r = store_payload_get(sv->store, c->id, c->payload_revision, &cur);
        if (r == -ENOENT) {
                payload_record_free(&cur);
                return 1;
        }
        if (r < 0) {
                snprintf(err, errlen, "reading payload revision %lld failed", (long long) c->payload_revision);
                return r;
        }
        bool same = cur.canonical_len == len && memcmp(cur.canonical, canon, len) == 0;
        payload_record_free(&cur);
        return same ? 0 : 1;
}

void revisions_payload_event(struct svc *sv, const struct cluster *c, const struct payload_record *p) {
        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, c->id, NULL,
                      "payload revision %lld of cluster %s built: release %s, %lld manifests, %s",
                      (long long) p->revision, c->id, p->release_version, (long long) p->manifest_count, p->digest);
}

int revisions_store_payload(struct svc *sv, const struct cluster *c, struct payload_record *p) {
        int r = store_cluster_add_payload(sv->store, p);
        if (r < 0)
                return r;
        revisions_payload_event(sv, c, p);
        return 0;
}

int revisions_next_payload(struct svc *sv, struct cluster *c, const struct op_options *ops, char *err, size_t errlen,
                           const char **what) {
        struct loaded_release lr;
        struct payload_record p;
        char why[1024] = "";
        int r;

        payload_record_init(&p);
        if ((r = release_load(sv, c->release_version, true, &lr)) < 0) {
                if (r == -ENOENT)
                        r = errmsg(err, errlen, -ENOPKG, "release %s of cluster %s is not imported",
                                   c->release_version, c->name);
                else
                        *what = "release";
                goto out;
        }
        if ((r = revisions_payload_differs(sv, c, &lr, ops, why, sizeof why)) == 1 &&
            (r = revisions_build_payload(sv, c, &lr, NULL, 0, c->payload_revision + 1, ops, &p, why, sizeof why)) == 0) {
                r = revisions_store_payload(sv, c, &p);
                if (r == 0) {
                        c->payload_revision = p.revision;
                        r = 1;
                } else if (r == -ESTALE)
                        r = errmsg(err, errlen, -ESTALE,
                                   "another payload revision of cluster %s was built meanwhile; try again", c->name);
                else
                        *what = "payload";
                goto out;
        }
        if (r == -EDOM || r == -ENOENT)
                r = errmsg(err, errlen, r, "%s", why);
        else if (r < 0) {
                log_error_errno(r, "install", "Building a payload of cluster %s failed: %s", c->id, why);
                r = errmsg(err, errlen, r == -ENOMEM ? -ENOMEM : -EIO, "could not build the next payload of cluster %s: %s",
                           c->name, why);
        }
out:
        payload_record_free(&p);
        svc_release_unload(&lr);
        return r;
}
