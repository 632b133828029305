/* Infra-envs: create, list, show, change, delete, rotate their agent token. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "cleanup.h"
#include "iso.h"
#include "log.h"
#include "ratelimit.h"
#include "refresh.h"
#include "uuid.h"

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
static int ie_arch_has_iso(struct svc *sv, const char *arch, struct http_response *resp) {
        struct iso_template t;
        char err[512], path[CONFIG_PATH_MAX];
        snprintf(path, sizeof path, "%s", svc_cfg(sv)->iso_template);
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

void api_infra_env_create(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
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
        if (ie_arch_has_iso(sv, arch, resp) < 0)
                goto out;
        free(ie.cpu_architecture);
        ie.cpu_architecture = strdup(arch);
        int r = store_infra_env_create(sv->store, &ie);
        if (r < 0) {
                api_store_error(resp, r, "infra-env");
                goto out;
        }
        if (auth_issue_agent(sv->key, ie.id, ie.token_generation, &token) < 0) {
                http_error(resp, 500, "could not sign the agent token");
                goto out;
        }
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, ie.id, NULL, NULL, "infra-env %s (%s) created by %s", ie.name,
                      ie.id, ie.owner);
        http_json(resp, 201, infra_env_reply(&ie, token));
out:
        infra_env_free(&ie);
}

void api_infra_env_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env_list l = { 0 };
        struct store_page pg;
        /* Paged like the other lists: ?limit= and ?after=, X-Next-After. */
        if (!api_need_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        int r = store_infra_env_list(sv->store, P(req)->role == ROLE_INFRA_ADMIN ? NULL : P(req)->owner, &pg, &l);
        if (r < 0)
                api_store_error(resp, r, "infra-envs");
        else {
                http_json(resp, 200, infra_env_list_to_json(&l, 0));
                resp->next_after = l.next_after;
        }
        infra_env_list_free(&l);
}

void api_infra_env_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) == 0)
                http_json(resp, 200, infra_env_reply(&ie, NULL));
        infra_env_free(&ie);
}

/* Why a host keeps its infra-env (store_infra_env_delete's rule), in words. */
static void blocker_words(struct svc *sv, const struct infra_env *ie, const struct host *h, char *buf, size_t n) {
        if (host_status_is_installing(h->status)) {
                snprintf(buf, n, "host %s is %s", h->id, host_status_to_string(h->status));
                return;
        }
        struct cluster c;
        cluster_init(&c);
        if (h->cluster_id && store_cluster_get(sv->store, h->cluster_id, &c) == 0 &&
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
void api_infra_env_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host_list blocked = { 0 }, unbound = { 0 };
        const uint32_t installing = STORE_STATUS(HOST_PREPARING_FOR_INSTALLATION) | STORE_STATUS(HOST_INSTALLING) |
                                    STORE_STATUS(HOST_INSTALLING_IN_PROGRESS);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
                goto out;
        int r = store_infra_env_delete(sv->store, ie.id, installing, &blocked, &unbound);
        if (r == -EBUSY) {
                char why[4096], one[512];
                size_t len = 0;
                why[0] = '\0';
                for (size_t i = 0; i < blocked.n && i < 4; i++) {
                        blocker_words(sv, &ie, &blocked.v[i], one, sizeof one);
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
                svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, ie.id, unbound.v[i].cluster_id, unbound.v[i].id,
                              "host %s (%s) unbound from cluster %s and deleted: its infra-env %s was deleted by %s",
                              unbound.v[i].id, host_status_to_string(unbound.v[i].status), unbound.v[i].cluster_id,
                              ie.id, P(req)->owner);
        /* Each cluster that lost hosts decides its state again, once. */
        for (size_t i = 0; i < unbound.n; i++) {
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = strcmp(unbound.v[k].cluster_id, unbound.v[i].cluster_id) == 0;
                if (!seen)
                        (void) refresh_cluster(sv, unbound.v[i].cluster_id, NULL);
        }
        ratelimit_forget(sv->registrations, ie.id);
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "infra-env %s deleted by %s%s", ie.id,
                      P(req)->owner, unbound.n ? " with hosts bound to clusters; they were unbound" : "");
        api_no_content(resp);
out:
        host_list_free(&unbound);
        host_list_free(&blocked);
        infra_env_free(&ie);
}

void api_infra_env_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie, in;
        char err[256];
        infra_env_init(&in);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
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
        int r = store_infra_env_update(sv->store, &in, in.present);
        if (r < 0) {
                api_store_error(resp, r, "infra-env");
                goto out;
        }
        infra_env_free(&ie);
        if ((r = store_infra_env_get(sv->store, in.id, &ie)) < 0) {
                api_store_error(resp, r, "infra-env");
                goto out;
        }
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, ie.id, NULL, NULL, "infra-env %s updated by %s", ie.id,
                      P(req)->owner);
        http_json(resp, 200, infra_env_reply(&ie, NULL));
out:
        infra_env_free(&in);
        infra_env_free(&ie);
}

void api_infra_env_rotate_token(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        _cleanup_free_ char *token = NULL;
        if (!api_need_admin(req, resp))
                return;
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) == 0) {
                int64_t gen;
                int r = store_infra_env_bump_token(sv->store, ie.id, &gen);
                if (r < 0)
                        api_store_error(resp, r, "infra-env");
                else if (auth_issue_agent(sv->key, ie.id, gen, &token) < 0)
                        http_error(resp, 500, "could not sign the agent token");
                else {
                        ie.token_generation = gen;
                        svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, ie.id, NULL, NULL,
                                      "agent tokens of infra-env %s rotated to generation %lld; older ones are revoked",
                                      ie.id, (long long) gen);
                        http_json(resp, 200, infra_env_reply(&ie, token));
                }
        }
        infra_env_free(&ie);
}

