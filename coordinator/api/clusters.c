/* Clusters and late binding (DESIGN §3, §5, §7): cluster CRUD with owner
 * scoping, capabilities, day-2 changes and upgrades (a new payload revision
 * when an installed cluster's content changes), bind and unbind of pool
 * hosts.
 * The state rules are hostfsm's; the "cluster is installing" check is made
 * again inside the store's transaction, so a bind racing an install loses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cleanup.h"
#include "clusterrel.h"
#include "hostfsm.h"
#include "log.h"
#include "refresh.h"
#include "uuid.h"
#include "validations.h"

/* The cluster as stored now (after a refresh), as the answer. */
static void reply_cluster(struct svc *sv, struct http_response *resp, int status, const char *id) {
        struct cluster c;
        cluster_init(&c);
        int r = store_cluster_get(sv->store, id, &c);
        if (r < 0)
                api_store_error(resp, r, "cluster");
        else
                http_json(resp, status, cluster_to_json(&c, 0));
        cluster_free(&c);
}

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

/* Shape checks of the settable members (create and PATCH). 0, or answers 400. */
static int check_cluster_input(const struct cluster *in, struct http_response *resp) {
        const uint32_t server_set = CL_F_ID | CL_F_OWNER | CL_F_STATUS | CL_F_STATUS_INFO | CL_F_VALIDATIONS |
                                    CL_F_CREATED_AT | CL_F_UPDATED_AT | CL_F_CAP_STATUS | CL_F_CONDITIONS |
                                    CL_F_PAYLOAD_REVISION;
        struct cidr net;
        struct ip_addr a;
        char why[128];
        if (in->present & server_set) {
                http_error(resp, 400, "fields id, owner, status, status_info, validations, created_at, updated_at, "
                                      "capabilities.status, conditions and payload_revision are set by the server");
                return -EINVAL;
        }
        if ((in->present & CL_F_NAME) && !cluster_name_ok(in->name)) {
                http_error(resp, 400, "field \"name\" must be a DNS label: 1-54 characters of a-z, 0-9 and '-', "
                                      "not starting or ending with '-'");
                return -EINVAL;
        }
        if (in->base_dns_domain && !hostname_is_valid(in->base_dns_domain, why, sizeof why)) {
                http_error(resp, 400, "field \"base_dns_domain\" is not a valid domain: %s", why);
                return -EINVAL;
        }
        if (in->machine_network_cidr && cidr_parse(in->machine_network_cidr, &net) < 0) {
                http_error(resp, 400, "field \"machine_network_cidr\" is not a CIDR (e.g. 192.0.2.0/24)");
                return -EINVAL;
        }
        if (in->api_vip && ip_parse(in->api_vip, &a) < 0) {
                http_error(resp, 400, "field \"api_vip\" is not an IP address");
                return -EINVAL;
        }
        if (in->ingress_vip && ip_parse(in->ingress_vip, &a) < 0) {
                http_error(resp, 400, "field \"ingress_vip\" is not an IP address");
                return -EINVAL;
        }
        if ((in->present & CL_F_HA_MODE) && in->high_availability_mode == _HA_MODE_INVALID) {
                http_error(resp, 400, "field \"high_availability_mode\" must be Full or None");
                return -EINVAL;
        }
        if ((in->present & CL_F_CPU_ARCHITECTURE) && !cpu_arch_canonical(in->cpu_architecture)) {
                http_error(resp, 400, "field \"cpu_architecture\" must be x86_64, aarch64, ppc64le or s390x");
                return -EINVAL;
        }
        if (in->feature_set && !feature_set_ok(in->feature_set)) {
                http_error(resp, 400, "field \"feature_set\" must be a name of 1-64 letters and digits (Default, "
                                      "TechPreviewNoUpgrade, ...)");
                return -EINVAL;
        }
        return 0;
}

/* Release versions and names compare as text; NULL is "none". */
static bool same_str(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

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

/* The capabilities status of a new cluster (in memory), when its release is
 * imported. A spec needs an imported release; a plain release_version need
 * not be imported yet (capabilities-valid then says so). 0, or answers and
 * returns -errno. */
static int caps_for_new(struct svc *sv, struct cluster *c, struct http_response *resp) {
        struct loaded_release lr;
        char err[512];
        bool given = c->present & CL_F_CAPABILITIES;
        int r;

        if (given && !c->release_version) {
                http_error(resp, 400, "capabilities need a release_version");
                return -EINVAL;
        }
        if (!c->release_version)
                return 0;
        r = release_load(sv, c->release_version, false, &lr);
        if (r == -ENOENT) {
                release_unload(&lr);
                if (!given)
                        return 0;
                http_error(resp, 400, "release %s is not imported", c->release_version);
                return -EINVAL;
        }
        if (r < 0) {
                api_store_error(resp, r, "release");
                return r;
        }
        r = clusterrel_compute(&lr, c, &c->cap_spec, false, NULL, err, sizeof err);
        release_unload(&lr);
        if (r < 0)
                http_error(resp, r == -EINVAL ? 400 : 500, "%s", err[0] ? err : "the capabilities cannot be computed");
        return r;
}

void api_cluster_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        char err[256];
        if (!api_need_admin(req, resp))
                return;
        if (cluster_from_json(req->body, &c, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        if (!(c.present & CL_F_NAME)) {
                http_error(resp, 400, "field \"name\" is required");
                goto out;
        }
        if (check_cluster_input(&c, resp) < 0)
                goto out;
        if (c.cpu_architecture) {
                const char *arch = cpu_arch_canonical(c.cpu_architecture);
                free(c.cpu_architecture);
                c.cpu_architecture = strdup(arch);
        }
        if (caps_for_new(sv, &c, resp) < 0)
                goto out;
        c.owner = strdup(P(req)->owner);
        int r = store_cluster_create(sv->store, &c);
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s (%s) created by %s", c.name, c.id,
                      c.owner);
        (void) refresh_cluster(sv, c.id, NULL);
        reply_cluster(sv, resp, 201, c.id);
out:
        cluster_free(&c);
}

void api_cluster_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster_list l = { 0 };
        struct store_page pg;
        if (!api_need_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        int r = store_cluster_list(sv->store, P(req)->role == ROLE_INFRA_ADMIN ? NULL : P(req)->owner, &pg, &l);
        if (r < 0)
                api_store_error(resp, r, "clusters");
        else {
                http_json(resp, 200, cluster_list_to_json(&l, 0));
                resp->next_after = l.next_after;
        }
        cluster_list_free(&l);
}

void api_cluster_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        if (api_load_cluster(sv, req, resp, req->params[0], &c) == 0)
                http_json(resp, 200, cluster_to_json(&c, 0));
        cluster_free(&c);
}

/* Every bound host re-validated (the cluster's settings feed theirs). */
static void refresh_bound_hosts(struct svc *sv, const char *cluster_id) {
        struct cluster_view v;
        if (cluster_view_load(sv, cluster_id, true, &v) < 0)
                return;
        for (size_t i = 0; i < v.hosts.n; i++)
                (void) refresh_host(sv, &v.hosts.v[i]);
        cluster_view_free(&v);
}

static bool is_installing(const struct cluster *c) {
        return cluster_status_is_installing(cluster_status_from_string(c->status));
}

/* A change of an existing cluster's release, capabilities spec or feature
 * set (PATCH and upgrade), made in memory on c: the status recomputed with
 * c's enabled capabilities kept, plus the upgrade rule when `upgrade` or
 * when an installed cluster changes release; and, for an installed cluster
 * whose payload content changes, revision N+1 built and signed into *p (not
 * stored). *fields gets the members to store. 0, or answers and returns
 * -errno; then nothing is to be stored. */
static int cluster_rework(struct svc *sv, struct cluster *c, bool rel_given, const char *rel,
                          const struct cluster_cap_spec *spec, bool fs_given, const char *fs, bool upgrade,
                          struct store_payload *p, uint32_t *fields, struct http_response *resp) {
        struct loaded_release nlr, olr;
        struct strv also = { 0 };
        _cleanup_free_ char *before = NULL;
        char err[512] = "";
        bool installed = c->payload_revision > 0;
        bool rel_change = rel_given && !same_str(rel, c->release_version);
        bool fs_change = fs_given && strcmp(feature_set_name(fs), feature_set_name(c->feature_set)) != 0;
        const char *target = rel_given ? rel : c->release_version;
        int r;

        *fields = 0;
        nlr = olr = (struct loaded_release) { 0 };
        if (!spec && !rel_change && !fs_change)
                return 0;
        if (spec && !target) {
                http_error(resp, 400, "capabilities need a release_version");
                return -EINVAL;
        }
        if (installed && rel_given && !rel) {
                http_error(resp, 400, "cluster %s is installed; its release_version cannot be cleared", c->id);
                return -EINVAL;
        }
        if (condition_status(c) && !(before = strdup(condition_status(c))))
                return -ENOMEM;
        r = release_load(sv, target, installed || upgrade, &nlr);
        if (r == -ENOENT) {
                release_unload(&nlr);
                if (spec || installed || upgrade) {
                        http_error(resp, 400, "release %s is not imported", target ? target : "(none)");
                        return -EINVAL;
                }
                /* A release not imported yet: no status until it is. */
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
                return 0;
        }
        if (r < 0) {
                api_store_error(resp, r, "release");
                return r;
        }
        if ((upgrade || installed) && rel_change && c->has_cap_status && c->release_version &&
            (r = release_load(sv, c->release_version, true, &olr)) == 0 &&
            (r = clusterrel_upgrade_implicit(&olr, &nlr, c, &also)) < 0) {
                http_error(resp, 500, "the upgrade rule failed for release %s -> %s", c->release_version, target);
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
                r = -ENOMEM;
                http_error(resp, 500, "out of memory");
                goto out;
        }
        if ((r = clusterrel_compute(&nlr, c, spec ? spec : &c->cap_spec, true, &also, err, sizeof err)) < 0) {
                http_error(resp, r == -EINVAL ? 400 : 500, "%s", err[0] ? err : "the capabilities cannot be computed");
                goto out;
        }
        *fields = CL_F_CAP_STATUS | CL_F_CONDITIONS | (spec ? CL_F_CAPABILITIES : 0) |
                  (rel_change ? CL_F_RELEASE_VERSION : 0) | (fs_given ? CL_F_FEATURE_SET : 0);
        if (installed) {
                r = clusterrel_payload_differs(sv, c, &nlr, err, sizeof err);
                if (r > 0)
                        r = clusterrel_build_payload(sv, c, &nlr, NULL, 0, c->payload_revision + 1, p, err, sizeof err);
                if (r < 0) {
                        log_error_errno(r, "api", "Building a payload of cluster %s failed: %s", c->id, err);
                        http_error(resp, 500, "could not build the next payload of cluster %s: %s", c->id, err);
                        *fields = 0;
                        goto out;
                }
                r = 0;
        }
        caps_events(sv, c, before);
out:
        strv_free(&also);
        release_unload(&olr);
        release_unload(&nlr);
        return r;
}

/* Store what cluster_rework decided, and the new payload revision. */
static int rework_store(struct svc *sv, struct cluster *c, uint32_t fields, struct store_payload *p,
                        struct http_response *resp) {
        int r = fields ? store_cluster_update(sv->store, c, fields) : 0;
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                return r;
        }
        if (p->canonical) {
                r = clusterrel_store_payload(sv, c, p);
                if (r == -ESTALE) {
                        http_error(resp, 409, "another payload revision of cluster %s was built meanwhile; try again",
                                   c->id);
                        return r;
                }
                if (r < 0) {
                        api_store_error(resp, r, "payload");
                        return r;
                }
        }
        return 0;
}

void api_cluster_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c, in;
        struct store_payload p;
        uint32_t fields = 0;
        char err[256];
        cluster_init(&in);
        store_payload_init(&p);
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if (cluster_from_json(req->body, &in, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        if (check_cluster_input(&in, resp) < 0)
                goto out;
        if (in.present & CL_F_CPU_ARCHITECTURE) {
                http_error(resp, 400, "field \"cpu_architecture\" is set when the cluster is created");
                goto out;
        }
        if (!in.present) {
                http_error(resp, 400, "nothing to change");
                goto out;
        }
        if (is_installing(&c)) {
                http_error(resp, 409, "cluster %s is %s; its settings cannot change now", c.id, c.status);
                goto out;
        }
        if (cluster_rework(sv, &c, in.present & CL_F_RELEASE_VERSION, in.release_version,
                           (in.present & CL_F_CAPABILITIES) ? &in.cap_spec : NULL, in.present & CL_F_FEATURE_SET,
                           in.feature_set, false, &p, &fields, resp) < 0)
                goto out;
        free(in.id);
        in.id = strdup(c.id);
        /* The release, spec and feature set go with the status (c). */
        uint32_t plain = in.present & ~(CL_F_CAPABILITIES | CL_F_RELEASE_VERSION | CL_F_FEATURE_SET);
        int r = plain ? store_cluster_update(sv->store, &in, plain) : 0;
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        if (rework_store(sv, &c, fields, &p, resp) < 0)
                goto out;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s updated by %s", c.id, P(req)->owner);
        refresh_bound_hosts(sv, c.id);
        (void) refresh_cluster(sv, c.id, NULL);
        reply_cluster(sv, resp, 200, c.id);
out:
        store_payload_free(&p);
        cluster_free(&in);
        cluster_free(&c);
}

void api_cluster_upgrade(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        struct store_payload p;
        uint32_t fields = 0;
        json_object *v;
        char *from = NULL;
        store_payload_init(&p);
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if (!json_object_object_get_ex(req->body, "release_version", &v) || !json_object_is_type(v, json_type_string) ||
            json_object_get_string_len(v) == 0 || json_object_get_string_len(v) > RELEASE_MAX_VERSION) {
                http_error(resp, 400, "field \"release_version\" must name an imported release");
                goto out;
        }
        const char *to = json_object_get_string(v);
        if (is_installing(&c)) {
                http_error(resp, 409, "cluster %s is %s; it cannot be upgraded now", c.id, c.status);
                goto out;
        }
        if (same_str(c.release_version, to)) {
                http_error(resp, 409, "cluster %s is already on release %s", c.id, to);
                goto out;
        }
        from = c.release_version ? strdup(c.release_version) : NULL;
        if (cluster_rework(sv, &c, true, to, NULL, false, NULL, true, &p, &fields, resp) < 0 ||
            rework_store(sv, &c, fields, &p, resp) < 0)
                goto out;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s (%s) upgraded from release %s to %s by %s%s",
                      c.name, c.id, from ? from : "(none)", to, P(req)->owner,
                      p.canonical ? "; a new payload revision is built" : "");
        refresh_bound_hosts(sv, c.id);
        (void) refresh_cluster(sv, c.id, NULL);
        reply_cluster(sv, resp, 200, c.id);
out:
        free(from);
        store_payload_free(&p);
        cluster_free(&c);
}

void api_cluster_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if (is_installing(&c)) {
                http_error(resp, 409, "cluster %s is %s; it cannot be deleted now", c.id, c.status);
                goto out;
        }
        int r = store_cluster_delete(sv->store, c.id);
        if (r == -EBUSY)
                http_error(resp, 409, "cluster %s still has hosts bound; unbind them first", c.id);
        else if (r < 0)
                api_store_error(resp, r, "cluster");
        else {
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s (%s) deleted by %s", c.name,
                              c.id, P(req)->owner);
                api_no_content(resp);
        }
out:
        cluster_free(&c);
}

/* ---- binding ----------------------------------------------------------- */

/* Bind (bind) or unbind a pool host. The state machine decides on the
 * host's status as read; when the host changed meanwhile (its agent checked
 * in between the read and the write), the request is decided again on the
 * new status, a few times, rather than answered 409. */
static void host_set_binding(struct svc *sv, struct http_request *req, struct http_response *resp, bool bind) {
        struct infra_env ie;
        struct host h;
        struct cluster c;
        json_object *v = NULL;
        const char *verb = bind ? "bind" : "unbind";
        int r = -ESTALE;
        cluster_init(&c);
        host_init(&h);
        infra_env_init(&ie);
        if (!api_need_admin(req, resp))
                return;
        if (bind && (!json_object_object_get_ex(req->body, "cluster_id", &v) ||
                     !json_object_is_type(v, json_type_string))) {
                http_error(resp, 400, "field \"cluster_id\" is required");
                return;
        }
        enum host_status to = HOST_BINDING;
        for (int attempt = 0; r == -ESTALE && attempt < 5; attempt++) {
                host_free(&h);
                infra_env_free(&ie);
                cluster_free(&c);
                if (api_load_host(sv, req, resp, &ie, &h) < 0)
                        goto out;
                if (bind) {
                        if (api_load_cluster(sv, req, resp, json_object_get_string(v), &c) < 0)
                                goto out;
                        if (h.cluster_id && strcmp(h.cluster_id, c.id) == 0) {
                                http_error(resp, 409, "host %s is already bound to cluster %s", h.id, c.id);
                                goto out;
                        }
                } else if (h.cluster_id && store_cluster_get(sv->store, h.cluster_id, &c) < 0)
                        cluster_init(&c);
                struct hostfsm_ctx ctx = { .cluster_installing = c.id && is_installing(&c) };
                const char *why;
                r = hostfsm_apply(h.status, bind ? HOSTFSM_EV_BIND : HOSTFSM_EV_UNBIND, &ctx, &to, &why);
                if (r < 0) {
                        http_error(resp, hostfsm_error_http(r), "cannot %s host %s (%s): %s", verb, h.id,
                                   host_status_to_string(h.status), why);
                        goto out;
                }
                r = store_host_bind(sv->store, ie.id, h.id, bind ? c.id : NULL, to, hostfsm_status_info(to),
                                    STORE_STATUS(h.status));
        }
        if (r == -EBUSY) {
                http_error(resp, 409, "cluster %s is installing; its hosts cannot be %s now", c.id,
                           bind ? "bound to it" : "unbound");
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        if (bind)
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, ie.id, c.id, h.id, "host %s bound to cluster %s (%s) by %s",
                              h.id, c.name, c.id, P(req)->owner);
        else
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, ie.id, h.cluster_id, h.id,
                              "host %s unbound from cluster %s by %s%s", h.id, h.cluster_id ? h.cluster_id : "?",
                              P(req)->owner,
                              to == HOST_UNBINDING_PENDING_USER_ACTION ? "; boot it from the discovery ISO again" : "");
        if (bind ? c.id != NULL : h.cluster_id != NULL)
                (void) refresh_cluster(sv, bind ? c.id : h.cluster_id, NULL);
        api_reply_host(sv, resp, ie.id, h.id, MODEL_JSON_NO_INVENTORY);
out:
        cluster_free(&c);
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_bind(void *app, struct http_request *req, struct http_response *resp) {
        host_set_binding(api_svc(app), req, resp, true);
}

void api_host_unbind(void *app, struct http_request *req, struct http_response *resp) {
        host_set_binding(api_svc(app), req, resp, false);
}
