/* The REST API of DESIGN §4 as handlers over the store. Each handler gets a
 * decoded request (http.h) and a principal (auth.h) and answers JSON; the
 * checks of STYLE.md's order that are not HTTP's happen here: scope, shape,
 * semantics. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "checkins.h"
#include "cleanup.h"
#include "hostfsm.h"
#include "format.h"
#include "install.h"
#include "iso.h"
#include "log.h"
#include "musterd.h"
#include "protocol.h"
#include "ratelimit.h"
#include "refresh.h"
#include "stepfacts.h"
#include "steps.h"
#include "uuid.h"
#include "validations.h"

/* ---- errors from the store and the services ------------------------------ */

/* A service's -errno as an HTTP status: the one table (issue 14). */
static const struct {
        int err;
        int status;
} svc_status[] = {
        { -EINVAL, 400 }, { -EPERM, 403 },  { -ENOENT, 404 }, { -EEXIST, 409 }, { -EBUSY, 409 },  { -ESTALE, 409 },
        { -ENOPKG, 409 }, { -EDOM, 409 },   { -E2BIG, 413 },  { -EAGAIN, 503 }, { -ENOSPC, 507 },
};

void api_svc_error(struct http_response *resp, int r, const char *err, const char *what) {
        if (!err || !*err) {
                api_store_error(resp, r, what);
                return;
        }
        for (size_t i = 0; i < sizeof svc_status / sizeof *svc_status; i++)
                if (svc_status[i].err == r) {
                        http_error(resp, svc_status[i].status, "%s", err);
                        return;
                }
        log_error_errno(r, "api", "%s: %m", err);
        http_error(resp, 500, "%s", err);
}

void api_store_error(struct http_response *resp, int r, const char *what) {
        switch (r) {
        case -ENOENT: http_error(resp, 404, "%s not found", what); break;
        case -EEXIST: http_error(resp, 409, "%s already exists", what); break;
        case -EBUSY: http_error(resp, 409, "%s is still in use", what); break;
        case -ESTALE: http_error(resp, 409, "%s changed state meanwhile; try again", what); break;
        case -EINVAL: http_error(resp, 400, "invalid %s", what); break;
        case -E2BIG: http_error(resp, 413, "%s is too large", what); break;
        case -EAGAIN: http_error(resp, 503, "store is busy; try again"); break;
        case -ENOSPC:
                http_error(resp, 507, "the store's file system is full: %s is not written (reads still work)", what);
                break;
        default:
                log_error_errno(r, "api", "store failed on %s: %m", what);
                http_error(resp, 500, "internal error on %s", what);
        }
}

/* ---- auth -------------------------------------------------------------- */

bool musterd_auth(void *app, const struct http_route *route, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct principal *p;

        if (!req->bearer) {
                http_error(resp, 401, "an Authorization: Bearer token is required");
                return false;
        }
        p = calloc(1, sizeof *p);
        if (!p || auth_check_cached(d->auth_cache, d->key, req->bearer, (int64_t) time(NULL), p) < 0) {
                free(p);
                http_error(resp, 401, "the token is not valid");
                return false;
        }
        req->auth = p;
        if (p->kind == PRINCIPAL_AGENT && p->host_id[0]) {
                /* A host's own token: its generation must be the host's. */
                int64_t gen = 0;
                int r = store_host_token_generation(d->store, p->infra_env_id, p->host_id, &gen);
                if (r < 0 || gen != p->generation) {
                        http_error(resp, 401, "the token was revoked");
                        return false;
                }
        } else if (p->kind == PRINCIPAL_AGENT) {
                /* Revocation: the token's generation must be the infra-env's. */
                struct infra_env ie;
                infra_env_init(&ie);
                int r = store_infra_env_get(d->store, p->infra_env_id, &ie);
                bool ok = r == 0 && ie.token_generation == p->generation;
                infra_env_free(&ie);
                if (!ok) {
                        http_error(resp, 401, "the token was revoked");
                        return false;
                }
        } else {
                /* A person's token: on the revocation list, or never issued
                 * by this store, it is refused; checked on every request. */
                int r = store_token_check(d->store, p->jti);
                if (r == -EKEYREVOKED || r == -ENOENT) {
                        http_error(resp, 401, r == -ENOENT ? "the token is not known to this coordinator"
                                                           : "the token was revoked");
                        return false;
                }
                if (r < 0) {
                        api_store_error(resp, r, "token");
                        return false;
                }
        }
        /* Routes only a host's agent calls (its heartbeat, its results, its
         * install progress): a person's token would forge them. */
        if ((route->flags & ROUTE_AGENT) && p->kind != PRINCIPAL_AGENT) {
                http_error(resp, 403, "this call is for a host's agent; people's tokens are refused here");
                return false;
        }
        return true;
}

void musterd_auth_free(void *auth) {
        free(auth);
}

bool api_need_admin(struct http_request *req, struct http_response *resp) {
        if (auth_is_admin(P(req)))
                return true;
        http_error(resp, 403, "this call is for administrators, not agents");
        return false;
}

bool api_need_infra_admin(struct http_request *req, struct http_response *resp) {
        if (auth_is_admin(P(req)) && P(req)->role == ROLE_INFRA_ADMIN)
                return true;
        http_error(resp, 403, "this call needs the infra-admin role");
        return false;
}

/* The infra-env without the owner check (callers add the right one). */
static int get_infra_env(struct musterd *d, struct http_request *req, struct http_response *resp, const char *id,
                         struct infra_env *ie) {
        infra_env_init(ie);
        if (!uuid_is_valid(id)) {
                http_error(resp, 400, "infra-env id \"%s\" is not a UUID", id);
                return -EINVAL;
        }
        /* An agent of another infra-env is refused before anything is read. */
        if (P(req)->kind == PRINCIPAL_AGENT && strcasecmp(P(req)->infra_env_id, id) != 0) {
                http_error(resp, 403, "this token belongs to another infra-env");
                return -EPERM;
        }
        int r = store_infra_env_get(d->store, id, ie);
        if (r < 0)
                api_store_error(resp, r, "infra-env");
        return r;
}

int api_load_infra_env(struct musterd *d, struct http_request *req, struct http_response *resp, const char *id,
                       struct infra_env *ie) {
        int r = get_infra_env(d, req, resp, id, ie);
        if (r < 0)
                return r;
        if (!auth_may_use_infra_env(P(req), ie->id, ie->owner)) {
                http_error(resp, 403, "infra-env %s belongs to another owner", ie->id);
                return -EPERM;
        }
        return 0;
}

int api_load_cluster(struct musterd *d, struct http_request *req, struct http_response *resp, const char *id,
                     struct cluster *c) {
        cluster_init(c);
        if (P(req)->kind != PRINCIPAL_ADMIN) {
                http_error(resp, 403, "agents have no access to clusters");
                return -EPERM;
        }
        if (!uuid_is_valid(id)) {
                http_error(resp, 400, "cluster id \"%s\" is not a UUID", id);
                return -EINVAL;
        }
        int r = store_cluster_get(d->store, id, c);
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                return r;
        }
        if (!auth_may_see_cluster(P(req), c->owner)) {
                /* Not even its existence is told to another owner. */
                http_error(resp, 404, "cluster not found");
                return -EPERM;
        }
        return 0;
}

/* One host as answered to people: its JSON plus the installation disk the
 * host would install to now (validations_install_disk, the choice that
 * has-min-valid-disks approves and the install step uses):
 * "installation_disk_id" is the requested disk, else the chosen one's id;
 * "installation_disk_path" the chosen one's /dev path; both null when no disk
 * fits. */
static json_object *host_reply_json(struct musterd *d, struct host *h, unsigned flags) {
        json_object *o = host_to_json(h, flags);
        char err[256];
        if (!o)
                return NULL;
        if (h->inventory_json && !h->inventory)
                (void) host_parse_inventory(h, err, sizeof err);
        bool single_node = false;
        if (h->cluster_id) {
                struct cluster c;
                if (store_cluster_get(d->store, h->cluster_id, &c) == 0)
                        single_node = c.high_availability_mode == HA_MODE_NONE;
                cluster_free(&c);
        }
        const struct inv_disk *disk = NULL;
        int i = h->inventory ? validations_install_disk(h->inventory, h->installation_disk_id, h->cluster_id != NULL,
                                                        single_node, h->role, musterd_cfg(d))
                             : -ENOENT;
        if (i >= 0)
                disk = &h->inventory->disks[i];
        const char *id = h->installation_disk_id && *h->installation_disk_id ? h->installation_disk_id
                         : disk ? (disk->id ? disk->id : disk->path) : NULL;
        json_object_object_add(o, "installation_disk_id", id ? json_object_new_string(id) : NULL);
        json_object_object_add(o, "installation_disk_path",
                               disk && disk->path ? json_object_new_string(disk->path) : NULL);
        return o;
}

void api_reply_host(struct musterd *d, struct http_response *resp, const char *infra_env_id, const char *host_id,
                    unsigned flags) {
        struct host h;
        int r = store_host_get(d->store, infra_env_id, host_id, &h);
        if (r < 0)
                api_store_error(resp, r, "host");
        else
                http_json(resp, 200, host_reply_json(d, &h, flags));
        host_free(&h);
}

void api_no_content(struct http_response *resp) {
        resp->status = 204;
        resp->text = strdup("");
}

/* ---- health ------------------------------------------------------------ */

static void h_healthz(void *app, struct http_request *req, struct http_response *resp) {
        http_json(resp, 200, json_object_new_string("ok"));
}

static void h_readyz(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env_list l = { 0 };
        struct store_page pg = { .limit = 1 };
        int r = store_infra_env_list(d->store, NULL, &pg, &l);
        infra_env_list_free(&l);
        int64_t room = INT64_MAX;
        if (r < 0)
                http_error(resp, 503, "store is not ready");
        else if (store_free_space(d->store, &room) == 0 && room < STORE_MIN_FREE_BYTES)
                http_error(resp, 503, "the store's file system is full (%lld bytes free, writes need %lld): "
                           "reads are served, writes are refused with 507", (long long) room,
                           (long long) STORE_MIN_FREE_BYTES);
        else
                http_json(resp, 200, json_object_new_string("ready"));
}

static void h_metrics(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        /* Administrators only, unless [metrics] public: an agent's token sits
         * in every ISO, so it proves nothing. */
        if (!musterd_cfg(d)->metrics_public) {
                if (!req->auth) {
                        http_error(resp, 401, "an Authorization: Bearer token is required ([metrics] public is false)");
                        return;
                }
                if (!api_need_admin(req, resp))
                        return;
        }
        /* The HTTP layer's, then hosts by status, store latency and the
         * controllers (each appended; a failure is out of memory). */
        char *out = http_server_metrics(d->http);
        size_t len = out ? strlen(out) : 0, cap = out ? len + 1 : 0;
        int r = out ? 0 : -ENOMEM;
        if (r == 0)
                r = format_append(&out, &len, &cap, "# HELP muster_hosts Hosts by status.\n# TYPE muster_hosts gauge\n");
        int64_t counts[_HOST_STATUS_MAX];
        if (r == 0 && store_host_count_by_status(d->store, counts) == 0)
                for (int s = 0; r == 0 && s < _HOST_STATUS_MAX; s++)
                        r = format_append(&out, &len, &cap, "muster_hosts{status=\"%s\"} %lld\n",
                                          host_status_to_string((enum host_status) s), (long long) counts[s]);
        struct store_latency w;
        store_write_latency(d->store, &w);
        if (r == 0)
                r = format_append(&out, &len, &cap,
                                  "# HELP muster_store_write_seconds Store write transactions, lock wait to commit.\n"
                                  "# TYPE muster_store_write_seconds histogram\n");
        uint64_t cum = 0;
        for (int b = 0; r == 0 && b < STORE_LATENCY_BUCKETS; b++) {
                cum += w.bucket[b];
                r = format_append(&out, &len, &cap, "muster_store_write_seconds_bucket{le=\"%g\"} %llu\n",
                                  store_latency_bounds[b], (unsigned long long) cum);
        }
        if (r == 0)
                r = format_append(&out, &len, &cap,
                                  "muster_store_write_seconds_bucket{le=\"+Inf\"} %llu\n"
                                  "muster_store_write_seconds_sum %.6f\nmuster_store_write_seconds_count %llu\n",
                                  (unsigned long long) w.count, w.sum_s, (unsigned long long) w.count);
        if (r == 0)
                r = controllers_metrics(d, &out, &len, &cap);
        if (r < 0) {
                free(out);
                http_error(resp, 500, "out of memory");
                return;
        }
        resp->status = 200;
        resp->text = out;
        resp->content_type = "text/plain; version=0.0.4";
}

/* ---- infra-envs -------------------------------------------------------- */

static json_object *infra_env_reply(const struct infra_env *ie, const char *token) {
        json_object *o = infra_env_to_json(ie, 0);
        if (o && token)
                json_object_object_add(o, "agent_token", json_object_new_string(token));
        return o;
}

/* An infra-env's hosts boot the discovery ISO: its architecture must be the
 * template's ([iso] template's sidecar). Without a readable template (agents
 * started by hand, `make run`), only musterd's own architecture. 0, or
 * answers 400. */
static int ie_arch_has_iso(struct musterd *d, const char *arch, struct http_response *resp) {
        struct iso_template t;
        char err[512], path[CONFIG_PATH_MAX];
        snprintf(path, sizeof path, "%s", musterd_cfg(d)->iso_template);
        if (iso_template_open(path, &t, err, sizeof err) == 0) {
                char have[sizeof t.cpu_architecture];
                snprintf(have, sizeof have, "%s", t.cpu_architecture);
                iso_template_close(&t);
                if (strcmp(have, arch) == 0)
                        return 0;
                http_error(resp, 400, "no discovery ISO for %s: the ISO template %s boots %s hosts", arch, path, have);
                return -EINVAL;
        }
        if (strcmp(arch, CPU_ARCH_BUILD) == 0)
                return 0;
        http_error(resp, 400, "no discovery ISO for %s: %s; without one only %s (musterd's own) is accepted", arch,
                   err, CPU_ARCH_BUILD);
        return -EINVAL;
}

static void h_ie_create(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        char err[256];
        _cleanup_free_ char *token = NULL;

        if (!api_need_admin(req, resp))
                return;
        if (infra_env_from_json(req->body, &ie, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        if (!ie.name || !*ie.name) {
                http_error(resp, 400, "field \"name\" is required");
                goto out;
        }
        if (ie.present & (IE_F_ID | IE_F_OWNER | IE_F_TOKEN_GENERATION | IE_F_CLUSTER_ID)) {
                http_error(resp, 400, "fields id, owner, cluster_id and token_generation are set by the server");
                goto out;
        }
        free(ie.owner);
        ie.owner = strdup(P(req)->owner);
        const char *arch = cpu_arch_canonical(ie.cpu_architecture ? ie.cpu_architecture : "x86_64");
        if (!arch) {
                http_error(resp, 400, "field \"cpu_architecture\" must be x86_64, aarch64, ppc64le or s390x");
                goto out;
        }
        if (ie_arch_has_iso(d, arch, resp) < 0)
                goto out;
        free(ie.cpu_architecture);
        ie.cpu_architecture = strdup(arch);
        int r = store_infra_env_create(d->store, &ie);
        if (r < 0) {
                api_store_error(resp, r, "infra-env");
                goto out;
        }
        if (auth_issue_agent(d->key, ie.id, ie.token_generation, &token) < 0) {
                http_error(resp, 500, "could not sign the agent token");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, ie.id, NULL, NULL, "infra-env %s (%s) created by %s", ie.name,
                      ie.id, ie.owner);
        http_json(resp, 201, infra_env_reply(&ie, token));
out:
        infra_env_free(&ie);
}

static void h_ie_list(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env_list l = { 0 };
        struct store_page pg;
        /* Paged like the other lists: ?limit= and ?after=, X-Next-After. */
        if (!api_need_admin(req, resp) || api_query_page(d, req, resp, &pg) < 0)
                return;
        int r = store_infra_env_list(d->store, P(req)->role == ROLE_INFRA_ADMIN ? NULL : P(req)->owner, &pg, &l);
        if (r < 0)
                api_store_error(resp, r, "infra-envs");
        else {
                http_json(resp, 200, infra_env_list_to_json(&l, 0));
                resp->next_after = l.next_after;
        }
        infra_env_list_free(&l);
}

static void h_ie_get(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        if (api_load_infra_env(d, req, resp, req->params[0], &ie) == 0)
                http_json(resp, 200, infra_env_reply(&ie, NULL));
        infra_env_free(&ie);
}

/* Why a host keeps its infra-env (store_infra_env_delete's rule), in words. */
static void blocker_words(struct musterd *d, const struct infra_env *ie, const struct host *h, char *buf, size_t n) {
        if (host_status_is_installing(h->status)) {
                snprintf(buf, n, "host %s is %s", h->id, host_status_to_string(h->status));
                return;
        }
        struct cluster c;
        cluster_init(&c);
        if (h->cluster_id && store_cluster_get(d->store, h->cluster_id, &c) == 0 &&
            cluster_status_is_installing(cluster_status_from_string(c.status)))
                snprintf(buf, n, "host %s is bound to cluster %s, which is %s", h->id, c.id, c.status);
        else if (h->cluster_id && c.owner && ie->owner && strcmp(c.owner, ie->owner) != 0)
                snprintf(buf, n, "host %s is bound to cluster %s of owner %s", h->id, c.id, c.owner);
        else
                snprintf(buf, n, "host %s is %s (cluster %s)", h->id, host_status_to_string(h->status),
                         h->cluster_id ? h->cluster_id : "none");
        cluster_free(&c);
}

/* An infra-env goes with its hosts, but never a host being installed or one
 * lent to another owner's cluster (409 naming them): deleting those would
 * leave a cluster installing without hosts, or take a host from under
 * someone else. Hosts bound to the owner's own clusters are unbound as part
 * of the delete, and their clusters decide their state again. */
static void h_ie_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host_list blocked = { 0 }, unbound = { 0 };
        const uint32_t installing = STORE_STATUS(HOST_PREPARING_FOR_INSTALLATION) | STORE_STATUS(HOST_INSTALLING) |
                                    STORE_STATUS(HOST_INSTALLING_IN_PROGRESS);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(d, req, resp, req->params[0], &ie) < 0)
                goto out;
        int r = store_infra_env_delete(d->store, ie.id, installing, &blocked, &unbound);
        if (r == -EBUSY) {
                char why[4096], one[512];
                size_t len = 0;
                why[0] = '\0';
                for (size_t i = 0; i < blocked.n && i < 4; i++) {
                        blocker_words(d, &ie, &blocked.v[i], one, sizeof one);
                        len += (size_t) snprintf(why + len, sizeof why - len, "%s%s", i ? "; " : "", one);
                        if (len >= sizeof why)
                                len = sizeof why - 1;
                }
                if (blocked.n > 4)
                        snprintf(why + len, sizeof why - len, "; and %zu more", blocked.n - 4);
                http_error(resp, 409, "infra-env %s cannot be deleted: %s", ie.id, why);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "infra-env");
                goto out;
        }
        for (size_t i = 0; i < unbound.n; i++)
                musterd_event(d, EVENT_WARNING, EVENT_CAT_USER, ie.id, unbound.v[i].cluster_id, unbound.v[i].id,
                              "host %s (%s) unbound from cluster %s and deleted: its infra-env %s was deleted by %s",
                              unbound.v[i].id, host_status_to_string(unbound.v[i].status), unbound.v[i].cluster_id,
                              ie.id, P(req)->owner);
        /* Each cluster that lost hosts decides its state again, once. */
        for (size_t i = 0; i < unbound.n; i++) {
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = strcmp(unbound.v[k].cluster_id, unbound.v[i].cluster_id) == 0;
                if (!seen)
                        (void) refresh_cluster(d, unbound.v[i].cluster_id, NULL);
        }
        ratelimit_forget(d->registrations, ie.id);
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "infra-env %s deleted by %s%s", ie.id,
                      P(req)->owner, unbound.n ? " with hosts bound to clusters; they were unbound" : "");
        api_no_content(resp);
out:
        host_list_free(&unbound);
        host_list_free(&blocked);
        infra_env_free(&ie);
}

static void h_ie_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie, in;
        char err[256];
        infra_env_init(&in);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(d, req, resp, req->params[0], &ie) < 0)
                goto out;
        if (infra_env_from_json(req->body, &in, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        const uint32_t allowed = IE_F_NAME | IE_F_PULL_SECRET | IE_F_SSH_AUTHORIZED_KEY | IE_F_PROXY | IE_F_NTP_SOURCES;
        if (in.present & ~allowed) {
                http_error(resp, 400, "only name, pull_secret, ssh_authorized_key, proxy and ntp_sources can be changed");
                goto out;
        }
        if (!in.present) {
                http_error(resp, 400, "nothing to change");
                goto out;
        }
        if ((in.present & IE_F_NAME) && (!in.name || !*in.name)) {
                http_error(resp, 400, "field \"name\" cannot be empty");
                goto out;
        }
        free(in.id);
        in.id = strdup(ie.id);
        int r = store_infra_env_update(d->store, &in, in.present);
        if (r < 0) {
                api_store_error(resp, r, "infra-env");
                goto out;
        }
        infra_env_free(&ie);
        if ((r = store_infra_env_get(d->store, in.id, &ie)) < 0) {
                api_store_error(resp, r, "infra-env");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, ie.id, NULL, NULL, "infra-env %s updated by %s", ie.id,
                      P(req)->owner);
        http_json(resp, 200, infra_env_reply(&ie, NULL));
out:
        infra_env_free(&in);
        infra_env_free(&ie);
}

static void h_ie_rotate(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        _cleanup_free_ char *token = NULL;
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(d, req, resp, req->params[0], &ie) == 0) {
                int64_t gen;
                int r = store_infra_env_bump_token(d->store, ie.id, &gen);
                if (r < 0)
                        api_store_error(resp, r, "infra-env");
                else if (auth_issue_agent(d->key, ie.id, gen, &token) < 0)
                        http_error(resp, 500, "could not sign the agent token");
                else {
                        ie.token_generation = gen;
                        musterd_event(d, EVENT_WARNING, EVENT_CAT_USER, ie.id, NULL, NULL,
                                      "agent tokens of infra-env %s rotated to generation %lld; older ones are revoked",
                                      ie.id, (long long) gen);
                        http_json(resp, 200, infra_env_reply(&ie, token));
                }
        }
        infra_env_free(&ie);
}

/* ---- hosts: agent side -------------------------------------------------- */

/* A known host registered again: after a bind or unbind (its agent was told
 * to), a restart of the agent, or a reboot. The state machine says where it
 * goes; then its stored inventory and results decide again at once. */
static void reregistered(struct musterd *d, struct host *h) {
        enum host_status to;
        const char *why;
        int r = hostfsm_apply(h->status, HOSTFSM_EV_REGISTERED, NULL, &to, &why);
        if (r < 0 || to == h->status) {
                if (r == 0)
                        (void) refresh_host(d, h);
                return;
        }
        if (to == HOST_ERROR && host_status_is_installing(h->status)) {
                /* Its installation is over; so is its cluster's. */
                (void) install_fail_host(d, h, NULL, why);
                return;
        }
        r = store_host_set_status(d->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), NULL, 0,
                                  STORE_STATUS(h->status));
        if (r < 0)
                return;
        musterd_event(d, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                      "host %s registered again: %s -> %s", h->id, host_status_to_string(h->status),
                      host_status_to_string(to));
        h->status = to;
        /* A restarted or rebooted host (fixed, maybe) gets its disk measured
         * again at the next installation: a failed check no longer holds it. */
        if (h->cluster_id &&
            store_host_forget_step_result(d->store, h->infra_env_id, h->id, STEP_INSTALLATION_DISK_SPEED_CHECK) > 0) {
                struct host fresh;
                host_init(&fresh);
                if (store_host_get(d->store, h->infra_env_id, h->id, &fresh) == 0) {
                        free(h->step_results_json);
                        h->step_results_json = TAKE_PTR(fresh.step_results_json);
                }
                host_free(&fresh);
        }
        (void) refresh_host(d, h);
}

static bool host_is_known(struct musterd *d, const char *infra_env_id, const char *host_id) {
        struct host h;
        bool known = store_host_get(d->store, infra_env_id, host_id, &h) == 0;
        host_free(&h);
        return known;
}

/* A token from the infra-env's registration bucket ([infraenv]
 * register_burst, register_interval), else 429 with Retry-After. */
static bool registration_allowed(struct musterd *d, const struct infra_env *ie, struct http_response *resp) {
        const struct muster_config *cfg = musterd_cfg(d);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t wait = ratelimit_take(d->registrations, ie->id, cfg->infraenv_register_burst,
                                      cfg->infraenv_register_interval_ms,
                                      (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000);
        if (wait <= 0) /* taken, or no memory to keep the bucket: let it in */
                return true;
        http_error(resp, 429, "infra-env %s registers new hosts too fast (%lld at once, then one every %lld ms); "
                   "try again later", ie->id, (long long) cfg->infraenv_register_burst,
                   (long long) cfg->infraenv_register_interval_ms);
        http_header_add(resp, "Retry-After", "%lld", (long long) ((wait + 999) / 1000));
        return false;
}

static void h_host_register(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h;
        json_object *v;
        host_init(&h);
        if (api_load_infra_env(d, req, resp, req->params[0], &ie) < 0)
                goto out;
        if (P(req)->kind != PRINCIPAL_AGENT) {
                http_error(resp, 403, "hosts register with their infra-env's agent token");
                goto out;
        }
        if (!json_object_object_get_ex(req->body, "host_id", &v) || !json_object_is_type(v, json_type_string) ||
            !uuid_is_valid(json_object_get_string(v))) {
                http_error(resp, 400, "field \"host_id\" must be a UUID");
                goto out;
        }
        const char *host_id = json_object_get_string(v);
        if (P(req)->host_id[0] && strcasecmp(P(req)->host_id, host_id) != 0) {
                http_error(resp, 403, "this token belongs to another host");
                goto out;
        }
        const char *version = NULL;
        if (json_object_object_get_ex(req->body, "discovery_agent_version", &v)) {
                if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > 128) {
                        http_error(resp, 400, "field \"discovery_agent_version\" must be a short string");
                        goto out;
                }
                version = json_object_get_string(v);
        }
        /* A known host registering again (after a bind, an agent restart, a
         * reboot) is never limited; a new one counts against the infra-env's
         * rate and cap: one ISO's token must not fill the disk. */
        if (!host_is_known(d, ie.id, host_id) && !registration_allowed(d, &ie, resp))
                goto out;
        int r = store_host_register_capped(d->store, ie.id, host_id, version, musterd_cfg(d)->infraenv_max_hosts, &h);
        if (r == -EDQUOT) {
                http_error(resp, 409, "infra-env %s already holds %lld hosts, its cap ([infraenv] max_hosts); "
                           "delete hosts of it or raise the cap", ie.id,
                           (long long) musterd_cfg(d)->infraenv_max_hosts);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        if (r == 1)
                musterd_event(d, EVENT_INFO, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id,
                              "host %s registered in infra-env %s (agent %s)", h.id, ie.id, version ? version : "?");
        else
                reregistered(d, &h);
        http_json(resp, r == 1 ? 201 : 200, host_to_json(&h, MODEL_JSON_NO_INVENTORY));
out:
        host_free(&h);
        infra_env_free(&ie);
}

int api_load_host(struct musterd *d, struct http_request *req, struct http_response *resp, struct infra_env *ie,
                  struct host *h) {
        host_init(h);
        const struct principal *p = P(req);
        /* A cluster creator picks hosts from any infra-env's pool. */
        bool creator = p->kind == PRINCIPAL_ADMIN && p->role == ROLE_CLUSTER_CREATOR;
        int r = creator ? get_infra_env(d, req, resp, req->params[0], ie)
                        : api_load_infra_env(d, req, resp, req->params[0], ie);
        if (r < 0)
                return r;
        if (!uuid_is_valid(req->params[1])) {
                http_error(resp, 400, "host id \"%s\" is not a UUID", req->params[1]);
                return -EINVAL;
        }
        /* A host's own token speaks for that host only. */
        if (p->kind == PRINCIPAL_AGENT && p->host_id[0] && strcasecmp(p->host_id, req->params[1]) != 0) {
                http_error(resp, 403, "this token belongs to another host");
                return -EPERM;
        }
        r = store_host_get(d->store, ie->id, req->params[1], h);
        if (r < 0) {
                api_store_error(resp, r, "host");
                return r;
        }
        if (creator && !(ie->owner && strcmp(ie->owner, p->owner) == 0) && h->cluster_id) {
                struct cluster c;
                cluster_init(&c);
                bool mine = store_cluster_get(d->store, h->cluster_id, &c) == 0 && auth_may_see_cluster(p, c.owner);
                cluster_free(&c);
                if (!mine) {
                        http_error(resp, 404, "host not found");
                        return -EPERM;
                }
        }
        return 0;
}

/* The other hosts of a bound host's cluster with the addresses to check them
 * on (inside the machine network when it is set). */
struct bound_peers {
        struct cluster_view view;
        bool loaded;
        struct step_peer *peers;
        struct strv *addrs;
        size_t n;
};

static void bound_peers_free(struct bound_peers *bp) {
        for (size_t i = 0; bp->addrs && i < bp->view.hosts.n; i++)
                strv_free(&bp->addrs[i]);
        free(bp->addrs);
        free(bp->peers);
        if (bp->loaded)
                cluster_view_free(&bp->view);
        *bp = (struct bound_peers) { 0 };
}

static int bound_peers_load(struct musterd *d, const struct host *h, struct bound_peers *bp) {
        int r = cluster_view_load(d, h->cluster_id, true, &bp->view);
        if (r < 0)
                return r;
        bp->loaded = true;
        size_t n = bp->view.hosts.n;
        bp->peers = calloc(n ? n : 1, sizeof *bp->peers);
        bp->addrs = calloc(n ? n : 1, sizeof *bp->addrs);
        if (!bp->peers || !bp->addrs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct host *p = &bp->view.hosts.v[i];
                if (host_same(p, h) || !p->inventory)
                        continue;
                if ((r = steps_host_addresses(p->inventory, bp->view.c.machine_network_cidr, &bp->addrs[i])) < 0)
                        return r;
                bp->peers[bp->n++] = (struct step_peer) { p->id, (const char *const *) bp->addrs[i].v,
                                                          bp->addrs[i].n };
        }
        return 0;
}

/* The seed of one answer's step ids: random, so that ids never repeat across
 * restarts (rand() unseeded would). */
static uint64_t random_seed(void) {
        uint64_t v;
        if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t) sizeof v) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                v = ((uint64_t) ts.tv_sec << 30) ^ (uint64_t) ts.tv_nsec ^ ((uint64_t) getpid() << 48);
        }
        return v;
}

static void h_instructions(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h;
        _cleanup_free_ char *host_token = NULL; /* before any goto: its cleanup runs at out */
        if (api_load_host(d, req, resp, &ie, &h) < 0)
                goto out;
        /* The check-in is buffered (checkins.h): a poll writes nothing. */
        char now[MODEL_TIME_LEN];
        uint64_t polls = 1; /* not counted (a full buffer): not a multiple either */
        int r = model_now_rfc3339(now);
        if (r >= 0 && checkins_note(d->checkins, ie.id, h.id, now, &polls) < 0)
                r = store_host_checkin(d->store, ie.id, h.id, now);
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        if (h.status == HOST_DISCONNECTED_UNBOUND || h.status == HOST_DISCONNECTED) {
                enum host_status to;
                if (hostfsm_apply(h.status, HOSTFSM_EV_RECONNECTED, NULL, &to, NULL) == 0 &&
                    store_host_set_status(d->store, ie.id, h.id, to, hostfsm_status_info(to), NULL, 0,
                                          STORE_STATUS(h.status)) == 0) {
                        musterd_event(d, EVENT_INFO, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id,
                                      "host %s is connected again", h.id);
                        h.status = to;
                        refresh_host(d, &h);
                }
        }
        /* The installed system's node agent speaks with the host's own
         * token: its first check-in ends the installation. */
        if (P(req)->host_id[0] && (r = install_first_boot(d, &h)) < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        /* Only a host with the flag set costs a write. */
        int reregister = h.reregister_pending ? store_host_take_reregister(d->store, ie.id, h.id) : 0;
        struct steps_input in = {
                .status = h.status,
                .inventory_received = h.inventory_json != NULL,
                .poll_count = polls,
                .inventory_every = (unsigned) musterd_cfg(d)->inventory_every,
                .interval_s = (unsigned) musterd_cfg(d)->instruction_interval_s,
                .must_reregister = reregister == 1,
                .ntp_sources = (const char *const *) ie.ntp_sources.v,
                .n_ntp_sources = ie.ntp_sources.n,
                .seed = random_seed(),
                .coordinator_date = now,
                .ntp_max_offset_ms = musterd_cfg(d)->ntp_max_offset_ms,
                .skip_mtu_probe = !musterd_cfg(d)->network_mtu_check,
        };
        struct steps_reply rep = { 0 };
        struct bound_peers bp = { 0 };
        struct cluster cl;
        cluster_init(&cl);
        /* The install step and the disk speed check go to the same disk. */
        if (h.cluster_id && !in.must_reregister &&
            (steps_allowed(h.status) & (1u << STEP_INSTALL | 1u << STEP_INSTALLATION_DISK_SPEED_CHECK)) &&
            (r = api_install_steps_input(d, &h, &cl, &in)) < 0 && r != -ENOENT) {
                cluster_free(&cl);
                api_store_error(resp, r, "cluster");
                goto out;
        }
        /* An installing host gets its own token for its installed system's
         * node agent (rotated per host, not with the infra-env's). */
        if (h.cluster_id && !in.must_reregister && host_status_is_installing(h.status)) {
                int64_t gen = 0;
                if ((r = store_host_token_generation(d->store, ie.id, h.id, &gen)) < 0 ||
                    (r = auth_issue_host(d->key, ie.id, h.id, gen, &host_token)) < 0) {
                        cluster_free(&cl);
                        api_store_error(resp, r, "host");
                        goto out;
                }
                in.host_token = host_token;
        }
        if (h.cluster_id && !in.must_reregister && (steps_allowed(h.status) & (1u << STEP_CONNECTIVITY_CHECK))) {
                r = bound_peers_load(d, &h, &bp);
                if (r < 0) {
                        bound_peers_free(&bp);
                        cluster_free(&cl);
                        api_store_error(resp, r, "cluster");
                        goto out;
                }
                in.cluster_name = bp.view.c.name;
                in.base_dns_domain = bp.view.c.base_dns_domain;
                in.peers = bp.peers;
                in.n_peers = bp.n;
        }
        in.disk_speed_measured = step_facts_has(h.step_results_json, STEP_INSTALLATION_DISK_SPEED_CHECK);
        if (h.status == HOST_ERROR && !in.must_reregister) {
                int sp = store_host_stop_pending(d->store, ie.id, h.id);
                in.stop_installation = sp > 0;
        }
        r = steps_for_host(&in, &rep);
        bound_peers_free(&bp);
        cluster_free(&cl);
        if (r < 0) {
                http_error(resp, 500, "could not decide the host's steps");
                goto out;
        }
        http_json(resp, 200, steps_reply_to_json(&rep));
        steps_reply_free(&rep);
out:
        host_free(&h);
        infra_env_free(&ie);
}

static void h_step_result(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h;
        json_object *v;
        if (api_load_host(d, req, resp, &ie, &h) < 0)
                goto out;
        if (!json_object_object_get_ex(req->body, "step_type", &v) || !json_object_is_type(v, json_type_string) ||
            step_type_from_string(json_object_get_string(v)) == _STEP_TYPE_INVALID) {
                http_error(resp, 400, "field \"step_type\" must name a step type");
                goto out;
        }
        enum step_type t = step_type_from_string(json_object_get_string(v));
        int64_t exit_code = 0;
        if (json_object_object_get_ex(req->body, "exit_code", &v)) {
                if (!json_object_is_type(v, json_type_int)) {
                        http_error(resp, 400, "field \"exit_code\" must be an integer");
                        goto out;
                }
                exit_code = json_object_get_int64(v);
        }
        json_object *output = NULL;
        json_object_object_get_ex(req->body, "output", &output);
        if (t == STEP_STOP_INSTALLATION) {
                /* The agent stopped (or had nothing running): no more stops. */
                int r = store_host_clear_stop(d->store, ie.id, h.id);
                if (r < 0) {
                        api_store_error(resp, r, "host");
                        goto out;
                }
                json_object *st = NULL;
                bool stopped = json_object_object_get_ex(output, "stopped", &st) && json_object_get_boolean(st);
                if (r > 0)
                        musterd_event(d, EVENT_INFO, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id,
                                      "host %s: %s", h.id,
                                      stopped ? "the agent stopped its installation"
                                              : "the agent had no installation running");
                http_json(resp, 200, json_object_new_object());
                goto out;
        }
        if (t == STEP_INSTALL) {
                json_object *e = NULL, *sid = NULL;
                json_object_object_get_ex(req->body, "error", &e);
                json_object_object_get_ex(req->body, "step_id", &sid);
                api_install_result(d, &h, json_object_is_type(sid, json_type_string) ? json_object_get_string(sid) : NULL,
                                   exit_code, output,
                                   json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL, resp);
                goto out;
        }
        if (t == STEP_INSTALLATION_DISK_SPEED_CHECK) {
                json_object *e = NULL;
                json_object_object_get_ex(req->body, "error", &e);
                api_disk_speed_result(d, &h, exit_code, output,
                                      json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL, resp);
                goto out;
        }
        if (exit_code != 0) {
                json_object *e = NULL;
                json_object_object_get_ex(req->body, "error", &e);
                musterd_event(d, EVENT_WARNING, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id, "step %s failed on host %s: %s",
                              step_type_to_string(t), h.id, e && json_object_is_type(e, json_type_string)
                                                                     ? json_object_get_string(e) : "no reason given");
                http_json(resp, 200, json_object_new_object());
                goto out;
        }
        if (t == STEP_INVENTORY) {
                if (!output || !(json_object_is_type(output, json_type_object) || json_object_is_type(output, json_type_string))) {
                        http_error(resp, 400, "an inventory result needs \"output\": the inventory document");
                        goto out;
                }
                const char *text = json_object_is_type(output, json_type_string)
                                           ? json_object_get_string(output)
                                           : json_object_to_json_string_ext(output, JSON_C_TO_STRING_PLAIN);
                if ((int64_t) strlen(text) > musterd_cfg(d)->max_inventory_bytes) {
                        http_error(resp, 413, "inventory is larger than %lld bytes", (long long) musterd_cfg(d)->max_inventory_bytes);
                        goto out;
                }
                struct inventory inv;
                char err[256];
                if (inventory_from_string(text, &inv, err, sizeof err) < 0) {
                        inventory_free(&inv);
                        http_error(resp, 400, "inventory: %s", err);
                        goto out;
                }
                int r = store_host_set_inventory(d->store, ie.id, h.id, text, &inv);
                inventory_free(&inv);
                if (r < 0) {
                        api_store_error(resp, r, "inventory");
                        goto out;
                }
                host_free(&h);
                host_init(&h);
                /* The validations decide the state the new inventory puts it in. */
                if (store_host_get(d->store, ie.id, req->params[1], &h) == 0)
                        refresh_host(d, &h);
        } else if (t == STEP_CONNECTIVITY_CHECK || t == STEP_NTP_SYNCHRONIZER || t == STEP_DOMAIN_RESOLUTION) {
                if (!output || !json_object_is_type(output, json_type_object)) {
                        http_error(resp, 400, "a %s result needs \"output\": an object", step_type_to_string(t));
                        goto out;
                }
                if (!h.cluster_id) {
                        /* Handed out while bound, answered after an unbind: stale. */
                        http_json(resp, 200, json_object_new_object());
                        goto out;
                }
                int r = store_host_set_step_result(d->store, ie.id, h.id, t,
                                                   json_object_to_json_string_ext(output, JSON_C_TO_STRING_PLAIN));
                if (r < 0) {
                        api_store_error(resp, r, "step result");
                        goto out;
                }
                host_free(&h);
                if (store_host_get(d->store, ie.id, req->params[1], &h) == 0)
                        refresh_host(d, &h);
        }
        http_json(resp, 200, json_object_new_object());
out:
        host_free(&h);
        infra_env_free(&ie);
}

/* ---- hosts: admin side ------------------------------------------------- */

static void h_host_get(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h;
        if (api_load_host(d, req, resp, &ie, &h) == 0)
                http_json(resp, 200, host_reply_json(d, &h, 0));
        host_free(&h);
        infra_env_free(&ie);
}

int api_query_i64(struct http_request *req, struct http_response *resp, const char *key, int64_t max, int64_t *out) {
        const char *s = http_query(req, key);
        if (!s)
                return 0;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || *end || end == s || v < 0 || v > max) {
                http_error(resp, 400, "query parameter %s must be an integer from 0 to %lld", key, (long long) max);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

int api_query_page(struct musterd *d, struct http_request *req, struct http_response *resp, struct store_page *pg) {
        int64_t limit = 0, after = 0;
        int r;
        if ((r = api_query_i64(req, resp, "limit", musterd_cfg(d)->max_page_size, &limit)) < 0 ||
            (r = api_query_i64(req, resp, "after", INT64_MAX, &after)) < 0)
                return r;
        *pg = (struct store_page) { .limit = (unsigned) limit, .after = after };
        return 0;
}

/* GET /hosts, and GET /infra-envs/{id}/hosts with infra_env_id given. */
static void list_hosts(struct musterd *d, struct http_request *req, struct http_response *resp,
                       const char *infra_env_id) {
        struct store_host_filter f = { .no_inventory = true };
        struct store_page pg = { 0 };
        int64_t offset = 0;
        const char *status = http_query(req, "status");
        if (status) {
                const char *bad;
                size_t bad_len;
                if (host_status_set_parse(status, &f.status_mask, &bad, &bad_len) < 0) {
                        http_error(resp, 400, "unknown host status \"%.*s\" in status=%s", (int) bad_len, bad, status);
                        return;
                }
        }
        f.cluster_id = http_query(req, "cluster_id");
        f.infra_env_id = infra_env_id ? infra_env_id : http_query(req, "infra_env_id");
        f.host_id = http_query(req, "id");
        if ((f.cluster_id && !uuid_is_valid(f.cluster_id)) || (f.infra_env_id && !uuid_is_valid(f.infra_env_id)) ||
            (f.host_id && !uuid_is_valid(f.host_id))) {
                http_error(resp, 400, "id, cluster_id and infra_env_id must be UUIDs");
                return;
        }
        const char *unbound = http_query(req, "unbound");
        f.unbound_only = unbound && strcmp(unbound, "true") == 0;
        f.hostname_contains = http_query(req, "hostname");
        if (api_query_i64(req, resp, "min_cpu_cores", INT64_MAX, &f.min_cpu_cores) < 0 ||
            api_query_i64(req, resp, "min_memory_bytes", INT64_MAX, &f.min_memory_bytes) < 0 ||
            api_query_i64(req, resp, "min_disk_bytes", INT64_MAX, &f.min_disk_bytes) < 0 ||
            api_query_page(d, req, resp, &pg) < 0 || api_query_i64(req, resp, "offset", UINT_MAX, &offset) < 0)
                return;
        pg.offset = (unsigned) offset;
        if (P(req)->role == ROLE_CLUSTER_CREATOR)
                f.cluster_owner = P(req)->owner;
        struct host_list l = { 0 };
        int r = store_host_list(d->store, &f, &pg, &l);
        if (r < 0)
                api_store_error(resp, r, "hosts");
        else {
                http_json(resp, 200, host_list_to_json(&l, MODEL_JSON_NO_INVENTORY));
                resp->next_after = l.next_after;
        }
        host_list_free(&l);
}

static void h_hosts_list(void *app, struct http_request *req, struct http_response *resp) {
        if (api_need_admin(req, resp))
                list_hosts(app, req, resp, NULL);
}

static void h_ie_hosts_list(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        infra_env_init(&ie);
        if (api_need_admin(req, resp) && api_load_infra_env(d, req, resp, req->params[0], &ie) == 0)
                list_hosts(d, req, resp, ie.id);
        infra_env_free(&ie);
}

/* Changing a host (rename, delete) is for its infra-env's owner and for the
 * creator of the cluster it is bound to; a cluster creator picks hosts from
 * every pool but does not change other owners' pool hosts. */
static bool may_change_host(struct musterd *d, struct http_request *req, struct http_response *resp,
                            const struct infra_env *ie, const struct host *h) {
        const struct principal *p = P(req);
        if (p->kind != PRINCIPAL_ADMIN || p->role != ROLE_CLUSTER_CREATOR ||
            (ie->owner && strcmp(ie->owner, p->owner) == 0))
                return true;
        bool mine = false;
        if (h->cluster_id) {
                struct cluster c;
                cluster_init(&c);
                mine = store_cluster_get(d->store, h->cluster_id, &c) == 0 && auth_may_see_cluster(p, c.owner);
                cluster_free(&c);
        }
        if (!mine)
                http_error(resp, 403, "host %s is in another owner's infra-env and not bound to one of your clusters",
                           h->id);
        return mine;
}

/* PATCH a host: role, requested_hostname, installation_disk_id. */
static void h_host_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h, in;
        char err[256];
        host_init(&in);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(d, req, resp, &ie, &h) < 0 || !may_change_host(d, req, resp, &ie, &h))
                goto out;
        if (host_from_json(req->body, &in, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        const uint32_t allowed = HOST_F_ROLE | HOST_F_REQUESTED_HOSTNAME | HOST_F_INSTALLATION_DISK_ID;
        if (in.present & ~allowed) {
                http_error(resp, 400, "only role, requested_hostname and installation_disk_id can be changed");
                goto out;
        }
        if (!in.present) {
                http_error(resp, 400, "nothing to change: give role, requested_hostname or installation_disk_id");
                goto out;
        }
        if ((in.present & HOST_F_ROLE) && in.role == _ROLE_INVALID) {
                http_error(resp, 400, "field \"role\" must be auto, master or worker");
                goto out;
        }
        if ((in.present & HOST_F_REQUESTED_HOSTNAME) && in.requested_hostname &&
            !hostname_is_valid(in.requested_hostname, err, sizeof err)) {
                http_error(resp, 400, "requested_hostname \"%.64s\" is not valid: %s", in.requested_hostname, err);
                goto out;
        }
        if (host_status_is_installing(h.status) || h.status == HOST_INSTALLED) {
                http_error(resp, 409, "host %s is %s; its settings cannot change now", h.id,
                           host_status_to_string(h.status));
                goto out;
        }
        free(in.infra_env_id);
        free(in.id);
        in.infra_env_id = strdup(ie.id);
        in.id = strdup(h.id);
        int r = store_host_update(d->store, &in, in.present);
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, ie.id, h.cluster_id, h.id, "host %s updated by %s%s%s%s%s%s%s",
                      h.id, P(req)->owner, in.present & HOST_F_ROLE ? ": role " : "",
                      in.present & HOST_F_ROLE ? host_role_to_string(in.role) : "",
                      in.present & HOST_F_REQUESTED_HOSTNAME ? "; hostname " : "",
                      in.present & HOST_F_REQUESTED_HOSTNAME ? (in.requested_hostname ? in.requested_hostname : "(none)") : "",
                      in.present & HOST_F_INSTALLATION_DISK_ID ? "; installation disk " : "",
                      in.present & HOST_F_INSTALLATION_DISK_ID
                              ? (in.installation_disk_id ? in.installation_disk_id : "(any)") : "");
        host_free(&h);
        if ((r = store_host_get(d->store, ie.id, in.id, &h)) < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        (void) refresh_host(d, &h);
        if (h.cluster_id)
                (void) refresh_cluster(d, h.cluster_id, NULL);
        api_reply_host(d, resp, ie.id, in.id, 0);
out:
        host_free(&in);
        host_free(&h);
        infra_env_free(&ie);
}

static void h_host_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct infra_env ie;
        struct host h;
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(d, req, resp, &ie, &h) < 0 || !may_change_host(d, req, resp, &ie, &h))
                goto out;
        if (host_status_is_installing(h.status)) {
                http_error(resp, 409, "host %s is being installed; it cannot be deleted now", h.id);
                goto out;
        }
        int r = store_host_delete(d->store, ie.id, h.id);
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, ie.id, h.cluster_id, h.id, "host %s deleted by %s", h.id,
                      P(req)->owner);
        if (h.cluster_id)
                (void) refresh_cluster(d, h.cluster_id, NULL);
        api_no_content(resp);
out:
        host_free(&h);
        infra_env_free(&ie);
}

/* ---- events ------------------------------------------------------------ */

static void h_events(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct store_event_filter f = { 0 };
        int64_t since = 0, limit = 0;
        if (!api_need_admin(req, resp))
                return;
        f.infra_env_id = http_query(req, "infra_env_id");
        f.cluster_id = http_query(req, "cluster_id");
        f.host_id = http_query(req, "host_id");
        const char *sev = http_query(req, "severity");
        if (sev) {
                int s = event_severity_from_string(sev);
                if (s < 0) {
                        http_error(resp, 400, "unknown severity \"%s\"", sev);
                        return;
                }
                f.min_severity = (enum event_severity) s;
        }
        if (api_query_i64(req, resp, "since_id", INT64_MAX, &since) < 0 ||
            api_query_i64(req, resp, "limit", musterd_cfg(d)->max_page_size, &limit) < 0)
                return;
        f.since_id = since;
        f.limit = (unsigned) limit;
        /* A cluster creator sees only its own clusters' events. */
        if (P(req)->role == ROLE_CLUSTER_CREATOR && !f.cluster_id) {
                http_error(resp, 403, "cluster creators list events of one of their clusters (cluster_id=...)");
                return;
        }
        if (P(req)->role == ROLE_CLUSTER_CREATOR) {
                struct cluster c;
                cluster_init(&c);
                int r = store_cluster_get(d->store, f.cluster_id, &c);
                bool ok = r == 0 && auth_may_see_cluster(P(req), c.owner);
                cluster_free(&c);
                if (!ok) {
                        http_error(resp, 404, "cluster not found");
                        return;
                }
        }
        struct event_list l = { 0 };
        int r = store_event_list(d->store, &f, &l);
        if (r < 0)
                api_store_error(resp, r, "events");
        else
                http_json(resp, 200, event_list_to_json(&l, 0));
        event_list_free(&l);
}

/* ---- tokens ------------------------------------------------------------ */

static json_object *token_record_to_json(const struct store_token *t) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_string(t->id));
        json_object_object_add(o, "role", json_object_new_string(t->role));
        json_object_object_add(o, "owner", json_object_new_string(t->owner));
        json_object_object_add(o, "created_at", json_object_new_string(t->created_at));
        json_object_object_add(o, "expires_at", json_object_new_string(t->expires_at));
        json_object_object_add(o, "revoked", json_object_new_boolean(t->revoked_at != NULL));
        json_object_object_add(o, "revoked_at", t->revoked_at ? json_object_new_string(t->revoked_at) : NULL);
        return o;
}

int api_issue_person_token(struct musterd *d, enum admin_role role, const char *owner, int64_t ttl_s, char **token,
                           struct store_token *rec) {
        char id[UUID_STR_LEN], created[MODEL_TIME_LEN], expires[MODEL_TIME_LEN];
        int64_t now = (int64_t) time(NULL);
        int r;

        store_token_init(rec);
        if (ttl_s < 1 || ttl_s > AUTH_MAX_TTL_S)
                return -EINVAL;
        if ((r = model_new_id(id)) < 0 || (r = model_time_format(now, created)) < 0 ||
            (r = model_time_format(now + ttl_s, expires)) < 0)
                return r;
        /* Signed first (it checks owner), recorded second: a token is only
         * good once the store knows it. */
        if ((r = auth_issue_admin(d->key, role, owner, id, now, now + ttl_s, token)) < 0)
                return r;
        *rec = (struct store_token) { .id = strdup(id), .role = strdup(admin_role_to_string(role)),
                                      .owner = strdup(owner), .created_at = strdup(created),
                                      .expires_at = strdup(expires) };
        if (!rec->id || !rec->role || !rec->owner || !rec->created_at || !rec->expires_at)
                r = -ENOMEM;
        if (r >= 0)
                r = store_token_add(d->store, rec);
        if (r < 0) {
                free(*token);
                *token = NULL;
                store_token_free(rec);
        }
        return r;
}

static void h_token_create(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        json_object *v, *owner;
        enum admin_role role;
        int64_t ttl = AUTH_DEFAULT_TTL_S;
        _cleanup_free_ char *token = NULL;
        if (!api_need_infra_admin(req, resp))
                return;
        if (!json_object_object_get_ex(req->body, "role", &v) || admin_role_from_string(json_object_get_string(v), &role) < 0) {
                http_error(resp, 400, "field \"role\" must be infra-admin or cluster-creator");
                return;
        }
        if (!json_object_object_get_ex(req->body, "owner", &owner) || !json_object_is_type(owner, json_type_string) ||
            json_object_get_string_len(owner) < 1 || json_object_get_string_len(owner) > 127 ||
            strlen(json_object_get_string(owner)) != (size_t) json_object_get_string_len(owner)) {
                http_error(resp, 400, "field \"owner\" must be a non-empty string of at most 127 characters");
                return;
        }
        if (json_object_object_get_ex(req->body, "ttl_seconds", &v)) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 ||
                    json_object_get_int64(v) > AUTH_MAX_TTL_S) {
                        http_error(resp, 400, "field \"ttl_seconds\" must be an integer from 1 to %d (10 years)",
                                   AUTH_MAX_TTL_S);
                        return;
                }
                ttl = json_object_get_int64(v);
        }
        struct store_token rec;
        int r = api_issue_person_token(d, role, json_object_get_string(owner), ttl, &token, &rec);
        if (r == -EPERM) {
                http_error(resp, 409, "owner \"%s\" already has tokens of the other role; an owner name belongs to "
                                      "one role (pick another name)", json_object_get_string(owner));
                return;
        }
        if (r < 0) {
                api_store_error(resp, r, "token");
                return;
        }
        json_object *o = token_record_to_json(&rec);
        json_object_object_add(o, "token", json_object_new_string(token));
        store_token_free(&rec);
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "%s token %s for %s issued by %s, expires %s",
                      json_object_get_string(json_object_object_get(o, "role")), json_object_get_string(
                              json_object_object_get(o, "id")), json_object_get_string(owner), P(req)->owner,
                      json_object_get_string(json_object_object_get(o, "expires_at")));
        http_json(resp, 201, o);
}

static void h_token_list(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct store_page pg;
        struct store_token_list l = { 0 };
        if (!api_need_infra_admin(req, resp) || api_query_page(d, req, resp, &pg) < 0)
                return;
        int r = store_token_list(d->store, http_query(req, "owner"), &pg, &l);
        if (r < 0) {
                api_store_error(resp, r, "tokens");
                return;
        }
        json_object *a = json_object_new_array_ext((int) l.n);
        for (size_t i = 0; a && i < l.n; i++)
                json_object_array_add(a, token_record_to_json(&l.v[i]));
        http_json(resp, 200, a);
        resp->next_after = l.next_after;
        store_token_list_free(&l);
}

static void h_token_revoke(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct store_token t;
        if (!api_need_infra_admin(req, resp))
                return;
        if (!uuid_is_valid(req->params[0])) {
                http_error(resp, 400, "token id \"%s\" is not a UUID", req->params[0]);
                return;
        }
        int r = store_token_revoke(d->store, req->params[0]);
        if (r < 0) {
                api_store_error(resp, r, "token");
                return;
        }
        /* The store is asked on every request anyway; this also drops it
         * from the cache of checked signatures at once. */
        auth_cache_forget(d->auth_cache, req->params[0]);
        if (r == 0)
                musterd_event(d, EVENT_WARNING, EVENT_CAT_USER, NULL, NULL, NULL, "token %s revoked by %s",
                              req->params[0], P(req)->owner);
        if ((r = store_token_get(d->store, req->params[0], &t)) < 0)
                api_store_error(resp, r, "token");
        else
                http_json(resp, 200, token_record_to_json(&t));
        store_token_free(&t);
}

/* The paths come from common/protocol.h (MUSTER_PATH_*), with placeholders
 * where the clients put ids. */
#define API MUSTER_API_PREFIX
#define ID "{id}"
#define IE_HOST API MUSTER_PATH_HOST(ID, ID)
#define CLUSTER API MUSTER_PATH_CLUSTER(ID)
#define VERSION "{version}"
const struct http_route musterd_routes[] = {
        { "GET", MUSTER_PATH_HEALTHZ, h_healthz, ROUTE_PUBLIC, "healthz" },
        { "GET", MUSTER_PATH_READYZ, h_readyz, ROUTE_PUBLIC, "readyz" },
        { "GET", MUSTER_PATH_METRICS, h_metrics, ROUTE_TOKEN_OPTIONAL, "metrics" },
        { "POST", API MUSTER_PATH_INFRA_ENVS, h_ie_create, ROUTE_BODY, "infra_env_create" },
        { "GET", API MUSTER_PATH_INFRA_ENVS, h_ie_list, 0, "infra_env_list" },
        { "GET", API MUSTER_PATH_INFRA_ENV(ID), h_ie_get, 0, "infra_env_get" },
        { "DELETE", API MUSTER_PATH_INFRA_ENV(ID), h_ie_delete, 0, "infra_env_delete" },
        { "PATCH", API MUSTER_PATH_INFRA_ENV(ID), h_ie_patch, ROUTE_BODY, "infra_env_patch" },
        { "POST", API MUSTER_PATH_INFRA_ENV(ID) MUSTER_ACTION_ROTATE_TOKEN, h_ie_rotate, 0, "infra_env_rotate_token" },
        { "GET", API MUSTER_PATH_INFRA_ENV_IMAGE(ID), api_iso_download, 0, "infra_env_image" },
        { "HEAD", API MUSTER_PATH_INFRA_ENV_IMAGE(ID), api_iso_download, 0, "infra_env_image_head" },
        { "POST", API MUSTER_PATH_INFRA_ENV_HOSTS(ID), h_host_register, ROUTE_BODY | ROUTE_AGENT, "host_register" },
        { "GET", API MUSTER_PATH_INFRA_ENV_HOSTS(ID), h_ie_hosts_list, 0, "infra_env_hosts_list" },
        { "GET", IE_HOST, h_host_get, 0, "host_get" },
        { "PATCH", IE_HOST, h_host_patch, ROUTE_BODY, "host_patch" },
        { "DELETE", IE_HOST, h_host_delete, 0, "host_delete" },
        { "POST", IE_HOST MUSTER_ACTION_BIND, api_host_bind, ROUTE_BODY, "host_bind" },
        { "POST", IE_HOST MUSTER_ACTION_UNBIND, api_host_unbind, 0, "host_unbind" },
        { "POST", IE_HOST MUSTER_ACTION_INSTALL, api_host_install, 0, "host_install" },
        { "POST", IE_HOST MUSTER_ACTION_ROTATE_TOKEN, api_host_rotate_token, 0, "host_rotate_token" },
        { "GET", API MUSTER_PATH_HOST_INSTRUCTIONS(ID, ID), h_instructions, ROUTE_AGENT, "host_instructions" },
        { "POST", API MUSTER_PATH_HOST_INSTRUCTIONS(ID, ID), h_step_result, ROUTE_BODY | ROUTE_AGENT,
          "host_step_result" },
        { "GET", API MUSTER_PATH_HOSTS, h_hosts_list, 0, "hosts_list" },
        { "POST", API MUSTER_PATH_CLUSTERS, api_cluster_create, ROUTE_BODY, "cluster_create" },
        { "GET", API MUSTER_PATH_CLUSTERS, api_cluster_list, 0, "cluster_list" },
        { "GET", CLUSTER, api_cluster_get, 0, "cluster_get" },
        { "PATCH", CLUSTER, api_cluster_patch, ROUTE_BODY, "cluster_patch" },
        { "DELETE", CLUSTER, api_cluster_delete, 0, "cluster_delete" },
        { "POST", CLUSTER MUSTER_ACTION_INSTALL, api_cluster_install, 0, "cluster_install" },
        { "POST", CLUSTER MUSTER_ACTION_UPGRADE, api_cluster_upgrade, ROUTE_BODY, "cluster_upgrade" },
        { "POST", CLUSTER MUSTER_ACTION_RESET, api_cluster_reset, 0, "cluster_reset" },
        { "POST", CLUSTER MUSTER_ACTION_CANCEL, api_cluster_cancel, 0, "cluster_cancel" },
        { "GET", API MUSTER_PATH_CLUSTER_PAYLOADS(ID), api_payload_list, 0, "payload_list" },
        { "GET", API MUSTER_PATH_CLUSTER_PAYLOAD(ID, "{rev}"), api_payload_get, 0, "payload_get" },
        { "PUT", API MUSTER_PATH_HOST_PROGRESS(ID, ID), api_host_progress, ROUTE_BODY | ROUTE_AGENT, "host_progress" },
        { "POST", API MUSTER_PATH_RELEASES, api_release_import, ROUTE_BODY | ROUTE_LARGE_BODY, "release_import" },
        { "GET", API MUSTER_PATH_RELEASES, api_release_list, 0, "release_list" },
        { "GET", API MUSTER_PATH_RELEASE(VERSION), api_release_get, 0, "release_get" },
        { "DELETE", API MUSTER_PATH_RELEASE(VERSION), api_release_delete, 0, "release_delete" },
        { "GET", API MUSTER_PATH_RELEASE_PREVIEW(VERSION), api_release_preview, 0, "release_preview" },
        { "GET", API MUSTER_PATH_RELEASE_OS_IMAGE(VERSION), api_release_os_image, 0, "release_os_image" },
        { "GET", API MUSTER_PATH_SIGNING_KEY, api_signing_key, 0, "signing_key" },
        { "GET", API MUSTER_PATH_EVENTS, h_events, 0, "events_list" },
        { "POST", API MUSTER_PATH_TOKENS, h_token_create, ROUTE_BODY, "token_create" },
        { "GET", API MUSTER_PATH_TOKENS, h_token_list, 0, "token_list" },
        { "POST", API MUSTER_PATH_TOKEN(ID) MUSTER_ACTION_REVOKE, h_token_revoke, 0, "token_revoke" },
};
const size_t musterd_n_routes = sizeof musterd_routes / sizeof *musterd_routes;
