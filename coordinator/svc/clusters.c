/* Clusters and late binding (clusters.h): cluster settings checked and
 * stored, capabilities and payload revisions following a change of release,
 * spec or feature set, and pool hosts bound and unbound.
 * The state rules are hostfsm's; the "cluster is installing" check is made
 * again inside the store's transaction, so a bind racing an install loses. */
#include "svc/clusters.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/addons.h"
#include "cleanup.h"
#include "svc/revisions.h"
#include "errmsg.h"
#include "domain/hostfsm.h"
#include "log.h"
#include "svc/refresh.h"
#include "domain/validations.h"

static void err_clear(char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
}

/* Release versions and names compare as text; NULL is "none". */
static bool same_str(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

static bool is_installing(const struct cluster *c) {
        return cluster_status_is_installing(cluster_status_from_string(c->status));
}

/* ---- settings ----------------------------------------------------------- */

static bool feature_set_ok(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
                        return false;
        return true;
}

/* The cluster name is a DNS label: it becomes api.<name>.<base domain>. */
static bool cluster_name_ok(const char *s) {
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n > 54 || s[0] == '-' || s[n - 1] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

/* The settable members' values (create and change). 0, or -EINVAL (err). */
static int check_cluster_input(const struct cluster *in, char *err, size_t errlen) {
        const uint32_t server_set = CL_F_ID | CL_F_OWNER | CL_F_STATUS | CL_F_STATUS_INFO | CL_F_VALIDATIONS |
                                    CL_F_CREATED_AT | CL_F_UPDATED_AT | CL_F_CAP_STATUS | CL_F_CONDITIONS |
                                    CL_F_PAYLOAD_REVISION;
        struct cidr net;
        struct ip_addr a;
        char why[128];
        if (in->present & server_set)
                return errmsg(err, errlen, -EINVAL,
                              "fields id, owner, status, status_info, validations, created_at, updated_at, "
                              "capabilities.status, conditions and payload_revision are set by the server");
        if ((in->present & CL_F_NAME) && !cluster_name_ok(in->name))
                return errmsg(err, errlen, -EINVAL,
                              "field \"name\" must be a DNS label: 1-54 characters of a-z, 0-9 and '-', "
                              "not starting or ending with '-'");
        if (in->base_dns_domain && !hostname_is_valid(in->base_dns_domain, why, sizeof why))
                return errmsg(err, errlen, -EINVAL, "field \"base_dns_domain\" is not a valid domain: %s", why);
        if (in->machine_network_cidr && cidr_parse(in->machine_network_cidr, &net) < 0)
                return errmsg(err, errlen, -EINVAL,
                              "field \"machine_network_cidr\" is not a CIDR (e.g. 192.0.2.0/24)");
        if (in->api_vip && ip_parse(in->api_vip, &a) < 0)
                return errmsg(err, errlen, -EINVAL, "field \"api_vip\" is not an IP address");
        if (in->ingress_vip && ip_parse(in->ingress_vip, &a) < 0)
                return errmsg(err, errlen, -EINVAL, "field \"ingress_vip\" is not an IP address");
        if ((in->present & CL_F_HA_MODE) && in->high_availability_mode == _HA_MODE_INVALID)
                return errmsg(err, errlen, -EINVAL, "field \"high_availability_mode\" must be Full or None");
        if ((in->present & CL_F_CPU_ARCHITECTURE) && !cpu_arch_canonical(in->cpu_architecture))
                return errmsg(err, errlen, -EINVAL,
                              "field \"cpu_architecture\" must be x86_64, aarch64, ppc64le or s390x");
        if (in->feature_set && !feature_set_ok(in->feature_set))
                return errmsg(err, errlen, -EINVAL,
                              "field \"feature_set\" must be a name of 1-64 letters and digits (Default, "
                              "TechPreviewNoUpgrade, ...)");
        return 0;
}

/* ---- capabilities --------------------------------------------------------- */

static const char *feature_set_name(const char *fs) {
        return fs ? fs : CAP_DEFAULT_FEATURE_SET;
}

/* An event when the condition changed status (before_status: what it was). */
static void caps_events(struct svc *sv, const struct cluster *c, const char *before_status) {
        for (size_t i = 0; i < c->n_conditions; i++) {
                const struct model_condition *k = &c->conditions[i];
                if (!k->type || strcmp(k->type, CAP_CONDITION_TYPE) != 0 || same_str(before_status, k->status))
                        continue;
                svc_event(sv, strcmp(k->status, "True") == 0 ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_SYSTEM, NULL,
                              c->id, NULL, "cluster %s: %s=%s (%s): %s", c->id, k->type, k->status,
                              k->reason ? k->reason : "", k->message ? k->message : "");
        }
}

static const char *condition_status(const struct cluster *c) {
        for (size_t i = 0; i < c->n_conditions; i++)
                if (c->conditions[i].type && strcmp(c->conditions[i].type, CAP_CONDITION_TYPE) == 0)
                        return c->conditions[i].status;
        return NULL;
}

/* revisions_compute's failure r (its words in why) as the user reads it:
 * a bad spec is the request's fault, anything else ours. */
static int caps_error(int r, const char *why, char *err, size_t errlen) {
        return errmsg(err, errlen, r == -EINVAL || r == -ENOMEM ? r : -EIO, "%s",
                      why[0] ? why : "the capabilities cannot be computed");
}

/* The capabilities status of a new cluster (in memory), when its release is
 * imported. A spec needs an imported release; a plain release_version need
 * not be imported yet (capabilities-valid then says so). */
static int caps_for_new(struct svc *sv, struct cluster *c, char *err, size_t errlen, const char **what) {
        struct loaded_release lr;
        char why[512];
        bool given = c->present & CL_F_CAPABILITIES;
        int r;

        if (given && !c->release_version)
                return errmsg(err, errlen, -EINVAL, "capabilities need a release_version");
        if (!c->release_version)
                return 0;
        r = release_load(sv, c->release_version, false, &lr);
        if (r == -ENOENT) {
                svc_release_unload(&lr);
                if (!given)
                        return 0;
                return errmsg(err, errlen, -EINVAL, "release %s is not imported", c->release_version);
        }
        if (r < 0) {
                *what = "release";
                return r;
        }
        r = revisions_compute(&lr, c, &c->cap_spec, false, NULL, why, sizeof why);
        svc_release_unload(&lr);
        return r < 0 ? caps_error(r, why, err, errlen) : r;
}

/* ---- a change of release, spec or feature set ------------------------------ */

/* A release not imported yet: c takes the release and feature set with no
 * capabilities status until it is. *fields gets the members to store. */
static void rework_unimported(struct cluster *c, const char *rel, bool rel_change, bool fs_given, const char *fs,
                              uint32_t *fields) {
        free(c->release_version);
        c->release_version = rel ? strdup(rel) : NULL;
        if (fs_given) {
                free(c->feature_set);
                c->feature_set = fs ? strdup(fs) : NULL;
        }
        c->has_cap_status = false;
        cluster_cap_status_free(&c->cap_status);
        model_condition_list_free(&c->conditions, &c->n_conditions);
        *fields = CL_F_CAP_STATUS | CL_F_CONDITIONS | (rel_change ? CL_F_RELEASE_VERSION : 0) |
                  (fs_given ? CL_F_FEATURE_SET : 0);
}

/* Revision N+1 of installed cluster c under lr built and signed into *p
 * (not stored) when its payload content changes. */
static int rework_payload(struct svc *sv, const struct cluster *c, const struct loaded_release *lr,
                          struct payload_record *p, char *err, size_t errlen) {
        char why[512] = "";
        int r = revisions_payload_differs(sv, c, lr, NULL, why, sizeof why);
        if (r > 0)
                r = revisions_build_payload(sv, c, lr, NULL, 0, c->payload_revision + 1, NULL, p, why, sizeof why);
        if (r < 0) {
                log_error_errno(r, "clusters", "Building a payload of cluster %s failed: %s", c->id, why);
                return errmsg(err, errlen, r == -ENOMEM ? r : -EIO,
                              "could not build the next payload of cluster %s: %s", c->id, why);
        }
        return 0;
}

/* A change of an existing cluster's release, capabilities spec or feature
 * set (change and upgrade), made in memory on c: the status recomputed with
 * c's enabled capabilities kept, plus the upgrade rule when `upgrade` or
 * when an installed cluster changes release; and, for an installed cluster
 * whose payload content changes, revision N+1 built and signed into *p (not
 * stored). *fields gets the members to store. 0, or -errno (err, or *what
 * for the store's); then nothing is to be stored. */
static int cluster_rework(struct svc *sv, struct cluster *c, bool rel_given, const char *rel,
                          const struct cluster_cap_spec *spec, bool fs_given, const char *fs, bool upgrade,
                          struct payload_record *p, uint32_t *fields, char *err, size_t errlen, const char **what) {
        struct loaded_release nlr, olr;
        struct strv also = { 0 };
        _cleanup_free_ char *before = NULL;
        char why[512] = "";
        bool installed = c->payload_revision > 0;
        bool rel_change = rel_given && !same_str(rel, c->release_version);
        bool fs_change = fs_given && strcmp(feature_set_name(fs), feature_set_name(c->feature_set)) != 0;
        const char *target = rel_given ? rel : c->release_version;
        int r;

        *fields = 0;
        nlr = olr = (struct loaded_release) { 0 };
        if (!spec && !rel_change && !fs_change)
                return 0;
        if (spec && !target)
                return errmsg(err, errlen, -EINVAL, "capabilities need a release_version");
        if (installed && rel_given && !rel)
                return errmsg(err, errlen, -EINVAL, "cluster %s is installed; its release_version cannot be cleared",
                              c->id);
        if (condition_status(c) && !(before = strdup(condition_status(c))))
                return -ENOMEM;
        r = release_load(sv, target, installed || upgrade, &nlr);
        if (r == -ENOENT) {
                svc_release_unload(&nlr);
                if (spec || installed || upgrade)
                        return errmsg(err, errlen, -EINVAL, "release %s is not imported", target ? target : "(none)");
                rework_unimported(c, rel, rel_change, fs_given, fs, fields);
                return 0;
        }
        if (r < 0) {
                *what = "release";
                return r;
        }
        if ((upgrade || installed) && rel_change && c->has_cap_status && c->release_version &&
            (r = release_load(sv, c->release_version, true, &olr)) == 0 &&
            (r = revisions_upgrade_implicit(&olr, &nlr, c, &also)) < 0) {
                r = errmsg(err, errlen, -EIO, "the upgrade rule failed for release %s -> %s", c->release_version,
                           target);
                goto out;
        }
        r = 0;
        if (rel_change) {
                free(c->release_version);
                c->release_version = strdup(rel);
        }
        if (fs_given) {
                free(c->feature_set);
                c->feature_set = fs ? strdup(fs) : NULL;
        }
        if ((rel_change && !c->release_version) || (fs_given && fs && !c->feature_set)) {
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
                goto out;
        }
        if ((r = revisions_compute(&nlr, c, spec ? spec : &c->cap_spec, true, &also, why, sizeof why)) < 0) {
                r = caps_error(r, why, err, errlen);
                goto out;
        }
        *fields = CL_F_CAP_STATUS | CL_F_CONDITIONS | (spec ? CL_F_CAPABILITIES : 0) |
                  (rel_change ? CL_F_RELEASE_VERSION : 0) | (fs_given ? CL_F_FEATURE_SET : 0);
        if (installed && (r = rework_payload(sv, c, &nlr, p, err, errlen)) < 0) {
                *fields = 0;
                goto out;
        }
        caps_events(sv, c, before);
out:
        strv_free(&also);
        svc_release_unload(&olr);
        svc_release_unload(&nlr);
        return r;
}

/* Store what cluster_rework decided, and the new payload revision. */
static int rework_store(struct svc *sv, struct cluster *c, uint32_t fields, struct payload_record *p, char *err,
                        size_t errlen, const char **what) {
        int r = fields ? store_cluster_update(sv->store, c, fields) : 0;
        if (r < 0) {
                *what = "cluster";
                return r;
        }
        if (p->canonical) {
                r = revisions_store_payload(sv, c, p);
                if (r == -ESTALE)
                        return errmsg(err, errlen, r,
                                      "another payload revision of cluster %s was built meanwhile; try again", c->id);
                if (r < 0) {
                        *what = "payload";
                        return r;
                }
        }
        return 0;
}

/* After a change: every bound host re-validated (the cluster's settings
 * feed theirs), then the cluster; out gets it as stored then. */
static int revalidate(struct svc *sv, const char *cluster_id, struct cluster *out, const char **what) {
        struct cluster_view v;
        if (cluster_view_load(sv, cluster_id, true, &v) == 0) {
                for (size_t i = 0; i < v.hosts.n; i++)
                        (void) refresh_host(sv, &v.hosts.v[i]);
                cluster_view_free(&v);
        }
        (void) refresh_cluster(sv, cluster_id, NULL);
        *what = "cluster";
        return store_cluster_get(sv->store, cluster_id, out);
}

/* ---- the services ----------------------------------------------------------- */

int svc_cluster_get(struct svc *sv, const char *id, struct cluster *c) {
        cluster_init(c);
        return store_cluster_get(sv->store, id, c);
}

static bool cluster_selected(const struct labelsel *sel, const struct cluster *c) {
        const char *keys[MODEL_MAX_LABELS], *values[MODEL_MAX_LABELS];
        size_t n = c->n_labels < MODEL_MAX_LABELS ? c->n_labels : MODEL_MAX_LABELS;
        for (size_t i = 0; i < n; i++) {
                keys[i] = c->labels[i].key;
                values[i] = c->labels[i].value;
        }
        return labelsel_matches(sel, keys, values, n);
}

/* The selector filters the store's page (DECISIONS.md D10). */
int svc_cluster_list(struct svc *sv, const char *owner, const struct list_page *pg, const struct labelsel *sel,
                     struct cluster_list *out) {
        int r = store_cluster_list(sv->store, owner, pg, out);
        if (r < 0 || !sel)
                return r;
        size_t kept = 0;
        for (size_t i = 0; i < out->n; i++) {
                if (!cluster_selected(sel, &out->v[i])) {
                        cluster_free(&out->v[i]);
                        continue;
                }
                if (kept != i)
                        out->v[kept] = out->v[i];
                kept++;
        }
        out->n = kept;
        return 0;
}

int svc_cluster_create(struct svc *sv, struct cluster *c, const char *by, struct cluster *out, char *err,
                       size_t errlen, const char **what) {
        int r;
        cluster_init(out);
        err_clear(err, errlen);
        *what = "cluster";
        if (!(c->present & CL_F_NAME))
                return errmsg(err, errlen, -EINVAL, "field \"name\" is required");
        if ((r = check_cluster_input(c, err, errlen)) < 0)
                return r;
        if (c->cpu_architecture) {
                const char *arch = cpu_arch_canonical(c->cpu_architecture);
                free(c->cpu_architecture);
                c->cpu_architecture = strdup(arch);
        }
        if ((r = caps_for_new(sv, c, err, errlen, what)) < 0)
                return r;
        c->owner = strdup(by);
        if ((r = store_cluster_create(sv->store, c)) < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c->id, NULL, "cluster %s (%s) created by %s", c->name, c->id,
                  c->owner);
        (void) refresh_cluster(sv, c->id, NULL);
        (void) svc_addon_reconcile(sv);
        return store_cluster_get(sv->store, c->id, out);
}

int svc_cluster_update(struct svc *sv, struct cluster *c, struct cluster *in, const char *by, struct cluster *out,
                       char *err, size_t errlen, const char **what) {
        struct payload_record p;
        uint32_t fields = 0;
        int r;
        cluster_init(out);
        err_clear(err, errlen);
        payload_record_init(&p);
        *what = "cluster";
        if ((r = check_cluster_input(in, err, errlen)) < 0)
                goto out;
        if (in->present & CL_F_CPU_ARCHITECTURE) {
                r = errmsg(err, errlen, -EINVAL, "field \"cpu_architecture\" is set when the cluster is created");
                goto out;
        }
        if (!in->present) {
                r = errmsg(err, errlen, -EINVAL, "nothing to change");
                goto out;
        }
        if (is_installing(c)) {
                r = errmsg(err, errlen, -EBUSY, "cluster %s is %s; its settings cannot change now", c->id, c->status);
                goto out;
        }
        if ((r = svc_addon_check_cluster(sv, c, in, err, errlen)) < 0)
                goto out;
        const struct cluster_cap_spec *spec = (in->present & CL_F_CAPABILITIES) ? &in->cap_spec : NULL;
        if ((r = cluster_rework(sv, c, in->present & CL_F_RELEASE_VERSION, in->release_version, spec,
                                in->present & CL_F_FEATURE_SET, in->feature_set, false, &p, &fields, err, errlen,
                                what)) < 0)
                goto out;
        free(in->id);
        in->id = strdup(c->id);
        /* The release, spec and feature set go with the status (c). */
        uint32_t plain = in->present & ~(CL_F_CAPABILITIES | CL_F_RELEASE_VERSION | CL_F_FEATURE_SET);
        *what = "cluster";
        if ((r = plain ? store_cluster_update(sv->store, in, plain) : 0) < 0 ||
            (r = rework_store(sv, c, fields, &p, err, errlen, what)) < 0)
                goto out;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c->id, NULL, "cluster %s updated by %s", c->id, by);
        (void) svc_addon_reconcile(sv); /* labels select add-ons; facts fill their values */
        r = revalidate(sv, c->id, out, what);
out:
        payload_record_free(&p);
        return r;
}

int svc_cluster_upgrade(struct svc *sv, struct cluster *c, const char *to, const char *by, struct cluster *out,
                        char *err, size_t errlen, const char **what) {
        struct payload_record p;
        uint32_t fields = 0;
        _cleanup_free_ char *from = NULL;
        int r;
        cluster_init(out);
        err_clear(err, errlen);
        payload_record_init(&p);
        *what = "cluster";
        if (is_installing(c)) {
                r = errmsg(err, errlen, -EBUSY, "cluster %s is %s; it cannot be upgraded now", c->id, c->status);
                goto out;
        }
        if (same_str(c->release_version, to)) {
                r = errmsg(err, errlen, -EEXIST, "cluster %s is already on release %s", c->id, to);
                goto out;
        }
        from = c->release_version ? strdup(c->release_version) : NULL;
        if ((r = cluster_rework(sv, c, true, to, NULL, false, NULL, true, &p, &fields, err, errlen, what)) < 0 ||
            (r = rework_store(sv, c, fields, &p, err, errlen, what)) < 0)
                goto out;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c->id, NULL,
                  "cluster %s (%s) upgraded from release %s to %s by %s%s", c->name, c->id, from ? from : "(none)", to,
                  by, p.canonical ? "; a new payload revision is built" : "");
        r = revalidate(sv, c->id, out, what);
out:
        payload_record_free(&p);
        return r;
}

int svc_cluster_delete(struct svc *sv, const struct cluster *c, const char *by, char *err, size_t errlen) {
        err_clear(err, errlen);
        if (is_installing(c))
                return errmsg(err, errlen, -EBUSY, "cluster %s is %s; it cannot be deleted now", c->id, c->status);
        int r = store_cluster_delete(sv->store, c->id);
        if (r == -EBUSY)
                return errmsg(err, errlen, r, "cluster %s still has hosts bound; unbind them first", c->id);
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c->id, NULL, "cluster %s (%s) deleted by %s", c->name, c->id,
                  by);
        return 0;
}

/* ---- binding ----------------------------------------------------------- */

/* The state machine's word on binding (bind) or unbinding host h, with c
 * its target or current cluster (c->id NULL: none), into *to. "Not in this
 * state" becomes -EBUSY (409). */
static int binding_allowed(const struct host *h, const struct cluster *c, bool bind, enum host_status *to, char *err,
                           size_t errlen) {
        struct hostfsm_ctx ctx = { .cluster_installing = c->id && is_installing(c) };
        const char *why;
        int r = hostfsm_apply(h->status, bind ? HOSTFSM_EV_BIND : HOSTFSM_EV_UNBIND, &ctx, to, &why);
        if (r >= 0)
                return 0;
        r = r == -EPERM || r == -EBUSY ? -EBUSY : r == -EINVAL ? -EINVAL : -EIO;
        return errmsg(err, errlen, r, "cannot %s host %s (%s): %s", bind ? "bind" : "unbind", h->id,
                      host_status_to_string(h->status), why);
}

static void binding_event(struct svc *sv, const struct host *h, const struct cluster *c, bool bind,
                          enum host_status to, const char *by) {
        if (bind)
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, c->id, h->id,
                          "host %s bound to cluster %s (%s) by %s", h->id, c->name, c->id, by);
        else
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, h->cluster_id, h->id,
                          "host %s unbound from cluster %s by %s%s", h->id, h->cluster_id ? h->cluster_id : "?", by,
                          to == HOST_UNBINDING_PENDING_USER_ACTION ? "; boot it from the discovery ISO again" : "");
}

/* Bind (c0: the target) or unbind (c0 NULL) host h0, both as the caller
 * loaded and authorized them. The state machine decides on the host's
 * status as read; when the host changed meanwhile, the request is decided
 * again on the new status, a few times, rather than answered 409 — unless
 * its binding changed too: the caller's authorization was for the one it
 * had. */
static int set_binding(struct svc *sv, const struct host *h0, const struct cluster *c0, const char *by,
                       struct host *out, char *err, size_t errlen, const char **what) {
        const bool bind = c0 != NULL;
        const struct host *h = h0;
        const struct cluster *c = c0;
        struct host cur;
        struct cluster cl; /* read here: the target on a retry, or the host's own cluster */
        enum host_status to = HOST_BINDING;
        int r = -ESTALE;

        host_init(out);
        host_init(&cur);
        cluster_init(&cl);
        err_clear(err, errlen);
        for (int attempt = 0; r == -ESTALE && attempt < 5; attempt++) {
                *what = "host";
                if (attempt > 0) {
                        host_free(&cur);
                        if ((r = store_host_get(sv->store, h0->infra_env_id, h0->id, &cur)) < 0)
                                goto out;
                        h = &cur;
                        if (!same_str(h->cluster_id, h0->cluster_id)) {
                                r = -ESTALE;
                                goto out;
                        }
                }
                cluster_free(&cl);
                cluster_init(&cl);
                if (bind) {
                        *what = "cluster";
                        if (attempt > 0 && (r = store_cluster_get(sv->store, c0->id, &cl)) < 0)
                                goto out;
                        c = attempt > 0 ? &cl : c0;
                        if (h->cluster_id && strcmp(h->cluster_id, c->id) == 0) {
                                r = errmsg(err, errlen, -EEXIST, "host %s is already bound to cluster %s", h->id,
                                           c->id);
                                goto out;
                        }
                } else {
                        if (h->cluster_id && store_cluster_get(sv->store, h->cluster_id, &cl) < 0)
                                cluster_init(&cl);
                        c = &cl;
                }
                if ((r = binding_allowed(h, c, bind, &to, err, errlen)) < 0)
                        goto out;
                *what = "host";
                r = store_host_bind(sv->store, h->infra_env_id, h->id, bind ? c->id : NULL, to, hostfsm_status_info(to),
                                    STORE_STATUS(h->status));
        }
        if (r == -EBUSY) {
                r = errmsg(err, errlen, r, "cluster %s is installing; its hosts cannot be %s now", c->id,
                           bind ? "bound to it" : "unbound");
                goto out;
        }
        if (r < 0)
                goto out;
        binding_event(sv, h, c, bind, to, by);
        if (bind ? c->id != NULL : h->cluster_id != NULL)
                (void) refresh_cluster(sv, bind ? c->id : h->cluster_id, NULL);
        r = store_host_get(sv->store, h->infra_env_id, h->id, out);
out:
        cluster_free(&cl);
        host_free(&cur);
        return r;
}

int svc_host_bind(struct svc *sv, const struct host *h, const struct cluster *c, const char *by, struct host *out,
                  char *err, size_t errlen, const char **what) {
        return set_binding(sv, h, c, by, out, err, errlen, what);
}

int svc_host_unbind(struct svc *sv, const struct host *h, const char *by, struct host *out, char *err, size_t errlen,
                    const char **what) {
        return set_binding(sv, h, NULL, by, out, err, errlen, what);
}
