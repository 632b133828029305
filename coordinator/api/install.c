/* Installation over the API (DESIGN §4-6): install, reset and cancel a
 * cluster, a day-2 host, a host's own token, the agents' progress reports
 * and install step results, and the signed payload revisions they fetch.
 * The install service (svc/install.h) decides; these parse, authorize and
 * answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "svc/clusters.h"
#include "svc/install.h"
#include "uuid.h"

/* ---- install ------------------------------------------------------------ */

/* POST /clusters/{id}/actions/install: svc_install_start_cluster() decides;
 * 202 with the cluster. */
void api_cluster_install(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        char err[512] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = svc_install_start_cluster(sv, c.id, P(req)->owner, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "cluster");
                goto out;
        }
        cluster_free(&c);
        if ((r = svc_cluster_get(sv, req->params[0], &c)) < 0)
                api_store_error(resp, r, "cluster");
        else
                http_json(resp, 202, cluster_to_json(&c, 0));
out:
        cluster_free(&c);
}

/* ---- reset and cancel ---------------------------------------------------- */

/* POST /clusters/{id}/actions/reset: a failed or stuck installation goes
 * back to where it is validated and installed again (svc_install_reset_cluster).
 * 409 where there is nothing to reset (a cluster that never started, or is
 * installed).
 *
 * POST /clusters/{id}/actions/cancel: an installation in progress stops
 * (svc_install_cancel_cluster); the cluster is then in error: reset it to try
 * again. Both answer 200 with the cluster. */
static void cluster_reset_or_cancel(struct svc *sv, struct http_request *req, struct http_response *resp,
                                    bool cancel) {
        struct cluster c, now;
        char err[512] = "";

        cluster_init(&now);
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = (cancel ? svc_install_cancel_cluster : svc_install_reset_cluster)(sv, c.id, P(req)->owner, &now, err,
                                                                          sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "cluster");
        else
                http_json(resp, 200, cluster_to_json(&now, 0));
out:
        cluster_free(&now);
        cluster_free(&c);
}

void api_cluster_reset(void *app, struct http_request *req, struct http_response *resp) {
        cluster_reset_or_cancel(api_svc(app), req, resp, false);
}

void api_cluster_cancel(void *app, struct http_request *req, struct http_response *resp) {
        cluster_reset_or_cancel(api_svc(app), req, resp, true);
}

/* ---- day 2: one host joins an installed cluster ---------------------------- */

/* POST /infra-envs/{ie}/hosts/{id}/actions/install: a known host bound to an
 * installed cluster installs on its own, with the cluster's current payload
 * revision, as a worker unless its role is set; installed, it follows the
 * cluster's later revisions like the others (svc_install_day2_host). */
void api_host_install(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        char err[512] = "";
        const char *what = "host";
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, HOST_OP_INSTALL, &ie, &h) < 0)
                goto out;
        int r = svc_install_day2_host(sv, &h, P(req)->owner, err, sizeof err, &what);
        if (r < 0)
                api_svc_error(resp, r, err, what);
        else
                api_reply_host(sv, resp, ie.id, req->params[1], MODEL_JSON_NO_INVENTORY);
out:
        host_free(&h);
        infra_env_free(&ie);
}

/* POST /infra-envs/{ie}/hosts/{id}/actions/rotate-token: every earlier host
 * token of the host is revoked; the answer carries the new one
 * ({"host_id", "token_generation", "host_token"}), for the installed
 * system's /etc/muster/agent.conf. The infra-env's agent token is untouched. */
void api_host_rotate_token(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        char *token = NULL;
        char err[512] = "";
        int64_t gen = 0;
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, HOST_OP_ROTATE_TOKEN, &ie, &h) < 0)
                goto out;
        int r = svc_install_host_token_rotate(sv, &h, P(req)->owner, &gen, &token, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "host");
                goto out;
        }
        json_object *o = json_object_new_object();
        json_object_object_add(o, "host_id", json_object_new_string(h.id));
        json_object_object_add(o, "token_generation", json_object_new_int64(gen));
        json_object_object_add(o, "host_token", json_object_new_string(token));
        http_json(resp, 200, o);
out:
        free(token);
        host_free(&h);
        infra_env_free(&ie);
}

/* ---- progress ------------------------------------------------------------ */

/* PUT /infra-envs/{ie}/hosts/{id}/progress from the host's agent:
 * {stage, percent, info?} (svc_install_progress). */
void api_host_progress(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        char err[512] = "";
        if (api_load_host(sv, req, resp, HOST_OP_AGENT_PROGRESS, &ie, &h) < 0)
                goto out;
        if (P(req)->kind != PRINCIPAL_AGENT) {
                http_error(resp, 403, "install progress is reported by the host's agent");
                goto out;
        }
        struct jctx jc = { err, sizeof err, 0 };
        const char *st = jget_cstr(req->body, "stage", SIZE_MAX, &jc);
        enum install_stage stage = st ? install_stage_from_string(st) : _INSTALL_STAGE_INVALID;
        if (stage == _INSTALL_STAGE_INVALID)
                jrefuse(&jc, "field \"stage\" must be one of starting, writing-image, writing-payload, rebooting, "
                             "done");
        else if (stage == INSTALL_STAGE_DONE)
                jrefuse(&jc, "stage \"done\" is the coordinator's to set: a host is done when its installed system "
                             "checks in");
        if (!api_read_ok(resp, &jc))
                goto out;
        int64_t percent = 0;
        if (!jget_int(req->body, "percent", 0, 100, &percent, &jc))
                jrefuse(&jc, "field \"percent\" must be an integer from 0 to 100");
        if (!api_read_ok(resp, &jc))
                goto out;
        const char *info = jget_cstr(req->body, "info", MODEL_MAX_MESSAGE, &jc);
        if (jc.r < 0)
                jrefuse(&jc, "field \"info\" must be a string of at most %d bytes", MODEL_MAX_MESSAGE);
        if (!api_read_ok(resp, &jc))
                goto out;
        int r = svc_install_progress(sv, &h, stage, percent, info, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "host");
                goto out;
        }
        http_json(resp, 200, json_object_new_object());
out:
        host_free(&h);
        infra_env_free(&ie);
}

/* ---- payload revisions ---------------------------------------------------- */

void api_payload_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        struct payload_record_list l = { 0 };
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = svc_install_payload_list(sv, c.id, &l);
        if (r < 0) {
                api_store_error(resp, r, "payload revisions");
                goto out;
        }
        json_object *a = json_object_new_array_ext((int) l.n);
        for (size_t i = 0; a && i < l.n; i++) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "revision", json_object_new_int64(l.v[i].revision));
                json_object_object_add(o, "digest", json_object_new_string(l.v[i].digest));
                json_object_object_add(o, "release_version", json_object_new_string(l.v[i].release_version));
                json_object_object_add(o, "manifest_count", json_object_new_int64(l.v[i].manifest_count));
                json_object_object_add(o, "created_at", json_object_new_string(l.v[i].created_at));
                json_object_array_add(a, o);
        }
        http_json(resp, 200, a);
out:
        payload_record_list_free(&l);
        cluster_free(&c);
}

/* GET /clusters/{c}/payload/{rev}: the signed envelope, to the cluster's
 * people and to the agents of its hosts. */
void api_payload_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        char *end, *env = NULL;
        char err[512] = "";
        const char *what = "payload";
        cluster_init(&c);
        long long rev = strtoll(req->params[1], &end, 10);
        if (*end || rev < 1) {
                http_error(resp, 400, "payload revision \"%s\" is not a positive integer", req->params[1]);
                goto out;
        }
        const char *cluster_id = req->params[0];
        if (P(req)->kind == PRINCIPAL_AGENT) {
                if (!uuid_is_valid(req->params[0])) {
                        http_error(resp, 400, "cluster id \"%s\" is not a UUID", req->params[0]);
                        goto out;
                }
                /* An agent may fetch the payloads of a cluster one of its
                 * infra-env's hosts (a host token: its host) is bound to. */
                if (svc_install_payload_bound(sv, P(req)->infra_env_id, P(req)->host_id, req->params[0]) <= 0) {
                        http_error(resp, 403, "no host of this infra-env is bound to cluster %s", req->params[0]);
                        goto out;
                }
        } else if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        else
                cluster_id = c.id;
        int r = svc_install_payload_envelope(sv, cluster_id, rev, &env, err, sizeof err, &what);
        if (r < 0) {
                api_svc_error(resp, r, err, what);
                goto out;
        }
        http_text(resp, 200, env, strlen(env), "application/json");
out:
        cluster_free(&c);
}
