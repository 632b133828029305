/* Clusters and late binding (DESIGN §3, §5): cluster CRUD with owner
 * scoping, bind and unbind of pool hosts, and the start of an installation.
 * The state rules are hostfsm's; the "cluster is installing" check is made
 * again inside the store's transaction, so a bind racing an install loses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cleanup.h"
#include "hostfsm.h"
#include "log.h"
#include "refresh.h"
#include "uuid.h"
#include "validations.h"

/* The cluster as stored now (after a refresh), as the answer. */
static void reply_cluster(struct musterd *d, struct http_response *resp, int status, const char *id) {
        struct cluster c;
        cluster_init(&c);
        int r = store_cluster_get(d->store, id, &c);
        if (r < 0)
                api_store_error(resp, r, "cluster");
        else
                http_json(resp, status, cluster_to_json(&c, 0));
        cluster_free(&c);
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
                                    CL_F_CREATED_AT | CL_F_UPDATED_AT;
        struct cidr net;
        struct ip_addr a;
        char why[128];
        if (in->present & server_set) {
                http_error(resp, 400, "fields id, owner, status, status_info, validations, created_at and updated_at "
                                      "are set by the server");
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
        return 0;
}

void api_cluster_create(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
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
        c.owner = strdup(P(req)->owner);
        int r = store_cluster_create(d->store, &c);
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s (%s) created by %s", c.name, c.id,
                      c.owner);
        (void) refresh_cluster(d, c.id, NULL);
        reply_cluster(d, resp, 201, c.id);
out:
        cluster_free(&c);
}

void api_cluster_list(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct cluster_list l = { 0 };
        int64_t limit = 0, after = 0;
        if (!api_need_admin(req, resp))
                return;
        if (api_query_i64(req, resp, "limit", d->cfg.max_page_size, &limit) < 0 ||
            api_query_i64(req, resp, "after", INT64_MAX, &after) < 0)
                return;
        struct store_page pg = { .limit = (unsigned) limit, .after = after };
        int r = store_cluster_list(d->store, P(req)->role == ROLE_INFRA_ADMIN ? NULL : P(req)->owner, &pg, &l);
        if (r < 0)
                api_store_error(resp, r, "clusters");
        else {
                http_json(resp, 200, cluster_list_to_json(&l, 0));
                resp->next_after = l.next_after;
        }
        cluster_list_free(&l);
}

void api_cluster_get(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct cluster c;
        if (api_load_cluster(d, req, resp, req->params[0], &c) == 0)
                http_json(resp, 200, cluster_to_json(&c, 0));
        cluster_free(&c);
}

/* Every bound host re-validated (the cluster's settings feed theirs). */
static void refresh_bound_hosts(struct musterd *d, const char *cluster_id) {
        struct cluster_view v;
        if (cluster_view_load(d, cluster_id, true, &v) < 0)
                return;
        for (size_t i = 0; i < v.hosts.n; i++)
                (void) refresh_host(d, &v.hosts.v[i]);
        cluster_view_free(&v);
}

static bool is_installing(const struct cluster *c) {
        return cluster_status_is_installing(cluster_status_from_string(c->status));
}

void api_cluster_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct cluster c, in;
        char err[256];
        cluster_init(&in);
        if (api_load_cluster(d, req, resp, req->params[0], &c) < 0)
                goto out;
        if (cluster_from_json(req->body, &in, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        if (check_cluster_input(&in, resp) < 0)
                goto out;
        if (!in.present) {
                http_error(resp, 400, "nothing to change");
                goto out;
        }
        if (is_installing(&c)) {
                http_error(resp, 409, "cluster %s is %s; its settings cannot change now", c.id, c.status);
                goto out;
        }
        free(in.id);
        in.id = strdup(c.id);
        int r = store_cluster_update(d->store, &in, in.present);
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s updated by %s", c.id, P(req)->owner);
        refresh_bound_hosts(d, c.id);
        (void) refresh_cluster(d, c.id, NULL);
        reply_cluster(d, resp, 200, c.id);
out:
        cluster_free(&in);
        cluster_free(&c);
}

void api_cluster_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct cluster c;
        if (api_load_cluster(d, req, resp, req->params[0], &c) < 0)
                goto out;
        if (is_installing(&c)) {
                http_error(resp, 409, "cluster %s is %s; it cannot be deleted now", c.id, c.status);
                goto out;
        }
        int r = store_cluster_delete(d->store, c.id);
        if (r == -EBUSY)
                http_error(resp, 409, "cluster %s still has hosts bound; unbind them first", c.id);
        else if (r < 0)
                api_store_error(resp, r, "cluster");
        else {
                musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL, "cluster %s (%s) deleted by %s", c.name,
                              c.id, P(req)->owner);
                api_no_content(resp);
        }
out:
        cluster_free(&c);
}

void api_cluster_install(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct cluster c;
        enum cluster_status st;
        if (api_load_cluster(d, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = refresh_cluster(d, c.id, &st);
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        if (st != CLUSTER_READY) {
                cluster_free(&c);
                cluster_init(&c);
                r = store_cluster_get(d->store, req->params[0], &c);
                http_error(resp, 409, "cluster is %s, not ready to install: %s", cluster_status_to_string(st),
                           r == 0 && c.status_info ? c.status_info : "see its validations");
                goto out;
        }
        r = store_cluster_start_install(d->store, c.id, "Installation started; preparing the hosts",
                                        HOST_PREPARING_FOR_INSTALLATION,
                                        hostfsm_status_info(HOST_PREPARING_FOR_INSTALLATION));
        if (r == -ESTALE) {
                http_error(resp, 409, "cluster %s changed state meanwhile; try again", c.id);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, c.id, NULL,
                      "installation of cluster %s started by %s with %d host(s)", c.id, P(req)->owner, r);
        reply_cluster(d, resp, 202, c.id);
out:
        cluster_free(&c);
}

/* ---- binding ----------------------------------------------------------- */

void api_host_bind(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h;
        struct cluster c;
        json_object *v;
        cluster_init(&c);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(d, req, resp, &ie, &h) < 0)
                goto out;
        if (!json_object_object_get_ex(req->body, "cluster_id", &v) || !json_object_is_type(v, json_type_string)) {
                http_error(resp, 400, "field \"cluster_id\" is required");
                goto out;
        }
        if (api_load_cluster(d, req, resp, json_object_get_string(v), &c) < 0)
                goto out;
        if (h.cluster_id && strcmp(h.cluster_id, c.id) == 0) {
                http_error(resp, 409, "host %s is already bound to cluster %s", h.id, c.id);
                goto out;
        }
        struct hostfsm_ctx ctx = { .cluster_installing = is_installing(&c) };
        enum host_status to;
        const char *why;
        int r = hostfsm_apply(h.status, HOSTFSM_EV_BIND, &ctx, &to, &why);
        if (r < 0) {
                http_error(resp, hostfsm_error_http(r), "cannot bind host %s (%s): %s", h.id,
                           host_status_to_string(h.status), why);
                goto out;
        }
        r = store_host_bind(d->store, ie.id, h.id, c.id, to, hostfsm_status_info(to), STORE_STATUS(h.status));
        if (r == -EBUSY) {
                http_error(resp, 409, "cluster %s is installing; hosts cannot be bound to it now", c.id);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, ie.id, c.id, h.id, "host %s bound to cluster %s (%s) by %s", h.id,
                      c.name, c.id, P(req)->owner);
        (void) refresh_cluster(d, c.id, NULL);
        api_reply_host(d, resp, ie.id, h.id, MODEL_JSON_NO_INVENTORY);
out:
        cluster_free(&c);
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_unbind(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h;
        struct cluster c;
        cluster_init(&c);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(d, req, resp, &ie, &h) < 0)
                goto out;
        if (h.cluster_id && store_cluster_get(d->store, h.cluster_id, &c) < 0)
                cluster_init(&c);
        struct hostfsm_ctx ctx = { .cluster_installing = c.id && is_installing(&c) };
        enum host_status to;
        const char *why;
        int r = hostfsm_apply(h.status, HOSTFSM_EV_UNBIND, &ctx, &to, &why);
        if (r < 0) {
                http_error(resp, hostfsm_error_http(r), "cannot unbind host %s (%s): %s", h.id,
                           host_status_to_string(h.status), why);
                goto out;
        }
        r = store_host_bind(d->store, ie.id, h.id, NULL, to, hostfsm_status_info(to), STORE_STATUS(h.status));
        if (r == -EBUSY) {
                http_error(resp, 409, "cluster %s is installing; its hosts cannot be unbound now", h.cluster_id);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, ie.id, h.cluster_id, h.id, "host %s unbound from cluster %s by %s%s",
                      h.id, h.cluster_id ? h.cluster_id : "?", P(req)->owner,
                      to == HOST_UNBINDING_PENDING_USER_ACTION ? "; boot it from the discovery ISO again" : "");
        if (h.cluster_id)
                (void) refresh_cluster(d, h.cluster_id, NULL);
        api_reply_host(d, resp, ie.id, h.id, MODEL_JSON_NO_INVENTORY);
out:
        cluster_free(&c);
        host_free(&h);
        infra_env_free(&ie);
}
