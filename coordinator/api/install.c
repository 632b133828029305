/* Installation over the API (DESIGN §4-6): the install action (roles,
 * payload revision 1, hosts preparing), the disk speed check that prepares
 * them, the agents' progress reports and step results, and the signed
 * payload revisions they fetch. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "cleanup.h"
#include "clusterrel.h"
#include "hostfsm.h"
#include "install.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"
#include "payload.h"
#include "refresh.h"
#include "steps.h"
#include "uuid.h"
#include "validations.h"

/* ---- install ------------------------------------------------------------ */

/* POST /clusters/{id}/actions/install: install_start_cluster() decides;
 * 202 with the cluster. */
void api_cluster_install(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        char err[512] = "";
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = install_start_cluster(sv, c.id, P(req)->owner, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "cluster");
                goto out;
        }
        cluster_free(&c);
        if ((r = store_cluster_get(sv->store, req->params[0], &c)) < 0)
                api_store_error(resp, r, "cluster");
        else
                http_json(resp, 202, cluster_to_json(&c, 0));
out:
        cluster_free(&c);
}

/* ---- reset and cancel ---------------------------------------------------- */

/* POST /clusters/{id}/actions/reset: a failed or stuck installation goes
 * back to where it is validated and installed again. Hosts that had started
 * installing register again and are checked anew; installed ones wait to be
 * booted from the discovery ISO (resetting-pending-user-action); the cluster
 * becomes insufficient and follows its hosts. 409 where there is nothing to
 * reset (a cluster that never started, or is installed).
 *
 * POST /clusters/{id}/actions/cancel: an installation in progress stops. Its
 * hosts that are installing fail with "cancelled" and keep their progress
 * (what they had written); their agents are sent stop-installation, and stop
 * before writing more. The cluster is then in error: reset it to try again. */
static void cluster_reset_or_cancel(struct svc *sv, struct http_request *req, struct http_response *resp,
                                    bool cancel) {
        struct cluster c;
        struct cluster_view v = { 0 };
        _cleanup_free_ struct store_host_reset *moves = NULL;
        bool have_view = false;
        size_t n = 0;
        int r;

        cluster_init(&v.c);
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        if ((r = cluster_view_load(sv, c.id, false, &v)) < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        have_view = true;
        enum cluster_status st = cluster_status_from_string(v.c.status);
        if (!cancel && st == CLUSTER_INSTALLED) {
                http_error(resp, 409, "cluster %s is installed; change it with an upgrade or new hosts, not a reset",
                           c.id);
                goto out;
        }
        if (cancel && !cluster_status_is_installing(st)) {
                http_error(resp, 409, "cluster %s is %s: only an installation in progress can be cancelled", c.id,
                           v.c.status);
                goto out;
        }
        char info[256];
        snprintf(info, sizeof info, cancel ? "Installation cancelled by %s"
                                           : "Installation reset by %s; the hosts are checked again", P(req)->owner);
        if (!(moves = calloc(v.hosts.n ? v.hosts.n : 1, sizeof *moves))) {
                http_error(resp, 500, "out of memory");
                goto out;
        }
        for (size_t i = 0; i < v.hosts.n; i++) {
                const struct host *h = &v.hosts.v[i];
                enum host_status to;
                if ((cancel && !host_status_is_installing(h->status)) ||
                    hostfsm_apply(h->status, cancel ? HOSTFSM_EV_FAILED : HOSTFSM_EV_RESET, NULL, &to, NULL) < 0 ||
                    to == h->status)
                        continue;
                moves[n++] = (struct store_host_reset) { h->infra_env_id, h->id, h->status, to,
                                                         cancel ? info : hostfsm_status_info(to) };
        }
        /* A cluster that is not failed may still have hosts to bring back
         * (left in error by an earlier reset of one of its hosts' states). */
        if (!cancel && st != CLUSTER_ERROR && !cluster_status_is_installing(st) && n == 0) {
                http_error(resp, 409, "cluster %s is %s: only a failed or installing cluster can be reset", c.id,
                           v.c.status);
                goto out;
        }
        enum cluster_status to = cancel ? CLUSTER_ERROR : CLUSTER_INSUFFICIENT;
        r = (cancel ? store_cluster_cancel : store_cluster_reset)(sv->store, c.id, v.c.status,
                                                                  cluster_status_to_string(to), info, moves, n);
        if (r < 0) { /* -ESTALE: 409, the cluster changed state meanwhile */
                api_store_error(resp, r, "cluster");
                goto out;
        }
        svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, NULL, c.id, NULL, "installation of cluster %s %s by %s: %d %s",
                      c.id, cancel ? "cancelled" : "reset", P(req)->owner, r,
                      cancel ? "host(s) told to stop" : "host(s) moved");
        enum event_severity sev = cancel ? EVENT_ERROR : EVENT_INFO;
        svc_event(sv, sev, EVENT_CAT_SYSTEM, NULL, c.id, NULL, "cluster %s (%s): %s -> %s: %s", v.c.name, c.id,
                      v.c.status, cluster_status_to_string(to), info);
        for (size_t i = 0; i < n; i++)
                svc_event(sv, sev, EVENT_CAT_SYSTEM, moves[i].infra_env_id, c.id, moves[i].host_id,
                              "host %s: %s -> %s: %s", moves[i].host_id, host_status_to_string(moves[i].from),
                              host_status_to_string(moves[i].to), moves[i].status_info);
        if (!cancel)
                (void) refresh_cluster(sv, c.id, NULL);
        cluster_free(&c);
        if ((r = store_cluster_get(sv->store, req->params[0], &c)) < 0)
                api_store_error(resp, r, "cluster");
        else
                http_json(resp, 200, cluster_to_json(&c, 0));
out:
        if (have_view)
                cluster_view_free(&v);
        else
                cluster_free(&v.c);
        cluster_free(&c);
}

void api_cluster_reset(void *app, struct http_request *req, struct http_response *resp) {
        cluster_reset_or_cancel(api_svc(app), req, resp, false);
}

void api_cluster_cancel(void *app, struct http_request *req, struct http_response *resp) {
        cluster_reset_or_cancel(api_svc(app), req, resp, true);
}

/* ---- day 2: one host joins an installed cluster ---------------------------- */

/* The host's settings travel in the payload: when the cluster's latest
 * revision does not carry them as they are now (a host bound after it was
 * built, a hostname set since), the next revision is built and stored, and
 * the installed hosts apply it as any other. 0, or answers and -errno. */
static int day2_payload(struct svc *sv, struct cluster *c, struct http_response *resp) {
        struct loaded_release lr;
        struct store_payload p;
        char err[512] = "";
        int r;

        store_payload_init(&p);
        if ((r = release_load(sv, c->release_version, true, &lr)) < 0) {
                if (r == -ENOENT)
                        http_error(resp, 409, "release %s of cluster %s is not imported", c->release_version, c->name);
                else
                        api_store_error(resp, r, "release");
                goto out;
        }
        if ((r = clusterrel_payload_differs(sv, c, &lr, err, sizeof err)) == 1 &&
            (r = clusterrel_build_payload(sv, c, &lr, NULL, 0, c->payload_revision + 1, &p, err, sizeof err)) == 0) {
                r = clusterrel_store_payload(sv, c, &p);
                if (r == 0)
                        c->payload_revision = p.revision;
                else if (r == -ESTALE) {
                        http_error(resp, 409, "another payload revision of cluster %s was built meanwhile; try again",
                                   c->name);
                        goto out;
                } else {
                        api_store_error(resp, r, "payload");
                        goto out;
                }
        }
        if (r < 0) {
                log_error_errno(r, "api", "Building a payload of cluster %s failed: %s", c->id, err);
                http_error(resp, 500, "could not build the next payload of cluster %s: %s", c->name, err);
        }
out:
        store_payload_free(&p);
        release_unload(&lr);
        return r < 0 ? r : 0;
}

/* POST /infra-envs/{ie}/hosts/{id}/actions/install: a known host bound to an
 * installed cluster installs on its own, with the cluster's current payload
 * revision, as a worker unless its role is set; installed, it follows the
 * cluster's later revisions like the others. */
void api_host_install(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        struct cluster c;
        cluster_init(&c);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, &ie, &h) < 0)
                goto out;
        if (!h.cluster_id) {
                http_error(resp, 409, "host %s is bound to no cluster; bind it to an installed cluster first", h.id);
                goto out;
        }
        int r = store_cluster_get(sv->store, h.cluster_id, &c);
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        if (cluster_status_from_string(c.status) != CLUSTER_INSTALLED || c.payload_revision <= 0) {
                http_error(resp, 409, "cluster %s is %s: a host installs on its own only into an installed cluster "
                                      "(install the cluster itself with musterctl cluster install)", c.name, c.status);
                goto out;
        }
        /* The latest look at the host before it moves. */
        (void) refresh_host(sv, &h);
        enum host_status prep;
        const char *why;
        if (hostfsm_apply(h.status, HOSTFSM_EV_INSTALL_STARTED, NULL, &prep, &why) < 0) {
                http_error(resp, 409, "host %s is %s, not known: %s", h.id, host_status_to_string(h.status),
                           h.status_info ? h.status_info : why);
                goto out;
        }
        if (h.role == ROLE_AUTO) {
                h.role = ROLE_WORKER;
                if ((r = store_host_update(sv->store, &h, HOST_F_ROLE)) < 0) {
                        api_store_error(resp, r, "host");
                        goto out;
                }
        }
        if (day2_payload(sv, &c, resp) < 0)
                goto out;
        /* Measured again for this installation (install_prepare_check moves it on). */
        if ((r = store_host_forget_step_result(sv->store, ie.id, h.id, STEP_INSTALLATION_DISK_SPEED_CHECK)) >= 0)
                r = store_host_set_status(sv->store, ie.id, h.id, prep, hostfsm_status_info(prep), NULL, 0,
                                          STORE_STATUS(h.status));
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, ie.id, c.id, h.id,
                      "day-2 install of host %s into cluster %s (payload revision %lld, role %s) started by %s", h.id,
                      c.name, (long long) c.payload_revision, host_role_to_string(h.role), P(req)->owner);
        svc_event(sv, EVENT_INFO, EVENT_CAT_SYSTEM, ie.id, c.id, h.id, "host %s: %s -> %s: %s", h.id,
                      host_status_to_string(h.status), host_status_to_string(prep), why);
        host_free(&h);
        host_init(&h);
        if (store_host_get(sv->store, ie.id, req->params[1], &h) == 0)
                (void) refresh_host(sv, &h);
        api_reply_host(sv, resp, ie.id, req->params[1], MODEL_JSON_NO_INVENTORY);
out:
        cluster_free(&c);
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
        _cleanup_free_ char *token = NULL;
        int64_t gen = 0;
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, &ie, &h) < 0)
                goto out;
        int r = store_host_rotate_token(sv->store, ie.id, h.id, &gen);
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        if (auth_issue_host(sv->key, ie.id, h.id, gen, &token) < 0) {
                http_error(resp, 500, "could not sign the host token");
                goto out;
        }
        svc_event(sv, EVENT_WARNING, EVENT_CAT_USER, ie.id, h.cluster_id, h.id,
                      "host token of host %s rotated to generation %lld by %s; older ones are revoked", h.id,
                      (long long) gen, P(req)->owner);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "host_id", json_object_new_string(h.id));
        json_object_object_add(o, "token_generation", json_object_new_int64(gen));
        json_object_object_add(o, "host_token", json_object_new_string(token));
        http_json(resp, 200, o);
out:
        host_free(&h);
        infra_env_free(&ie);
}

/* ---- the install step ----------------------------------------------------- */

int api_install_steps_input(struct svc *sv, struct host *h, struct cluster *c, struct steps_input *in) {
        char err[256];
        int r = store_cluster_get(sv->store, h->cluster_id, c);
        if (r < 0)
                return r;
        in->cluster_id = c->id;
        in->payload_revision = c->payload_revision;
        in->applied_revision = h->applied_revision;
        in->role = h->role;
        in->installation_disk = NULL;
        in->install_written = install_waits_for_first_boot(h);
        if (h->status == HOST_INSTALLED || !h->inventory_json)
                return 0;
        if (!h->inventory && host_parse_inventory(h, err, sizeof err) < 0)
                return 0;
        /* The disk has-min-valid-disks approved (the same function). */
        in->installation_disk = validations_install_disk_path(h->inventory, h->installation_disk_id,
                                                              c->high_availability_mode == HA_MODE_NONE, h->role,
                                                              svc_cfg(sv));
        return 0;
}

/* ---- the disk speed check ------------------------------------------------- */

/* A finite number member >= 0 of o, copied into rec; false if absent or bad. */
static bool copy_ms(json_object *o, json_object *rec, const char *key, double *out) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return false;
        double x = json_object_get_double(v);
        if (!(x >= 0 && x < 1e9))
                return false;
        if (out)
                *out = x;
        return jadd(rec, key, json_object_new_double(x)) == 0;
}

/* A printable string member of o of at most max bytes, copied into rec. */
static const char *copy_str(json_object *o, json_object *rec, const char *key, size_t max) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);
        if (n == 0 || n > max || strlen(s) != n)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return NULL;
        return jadd(rec, key, json_object_new_string(s)) == 0 ? s : NULL;
}

void api_disk_speed_result(struct svc *sv, struct host *h, int64_t exit_code, json_object *output,
                           const char *error, struct http_response *resp) {
        _cleanup_json_ json_object *rec = json_object_new_object();
        struct steps_input in = { 0 };
        struct cluster c;
        char what[1024];
        double p99 = 0, median = 0, max = 0;
        int r;

        cluster_init(&c);
        /* Handed out while preparing, answered after it ended: stale. */
        if (h->status != HOST_PREPARING_FOR_INSTALLATION || !h->cluster_id) {
                http_json(resp, 200, json_object_new_object());
                goto out;
        }
        if ((r = api_install_steps_input(sv, h, &c, &in)) < 0) {
                api_store_error(resp, r, "cluster");
                goto out;
        }
        const char *disk = in.installation_disk;
        if (!rec || jadd(rec, "disk", disk ? json_object_new_string(disk) : json_object_new_null()) < 0) {
                http_error(resp, 500, "out of memory");
                goto out;
        }
        /* The agent is not trusted: only the members the validation and the
         * events read are kept, each checked. */
        const char *reason = NULL;
        if (exit_code != 0)
                reason = error && *error ? error : "the agent gave no reason";
        else if (!json_object_is_type(output, json_type_object) || !copy_ms(output, rec, "p99_ms", &p99))
                reason = "the agent's result has no valid p99_ms";
        if (reason) {
                json_object_put(rec);
                rec = json_object_new_object();
                char cut[513];
                snprintf(cut, sizeof cut, "%s", reason);
                for (char *p = cut; *p; p++)
                        if ((unsigned char) *p < 0x20 || *p == 0x7f)
                                *p = ' ';
                if (!rec || jadd(rec, "disk", disk ? json_object_new_string(disk) : json_object_new_null()) < 0 ||
                    jadd(rec, "failed", json_object_new_boolean(true)) < 0 ||
                    jadd(rec, "error", json_object_new_string(cut)) < 0) {
                        http_error(resp, 500, "out of memory");
                        goto out;
                }
                snprintf(what, sizeof what, "host %s: the installation disk speed check on %s failed: %s", h->id,
                         disk ? disk : "(no disk chosen)", cut);
        } else {
                json_object *v;
                bool has_median = copy_ms(output, rec, "median_ms", &median);
                bool has_max = copy_ms(output, rec, "max_ms", &max);
                const char *method = copy_str(output, rec, "method", 16);
                const char *path = copy_str(output, rec, "path", 4096);
                (void) copy_str(output, rec, "mount", 4096);
                int64_t writes = 0;
                if (json_object_object_get_ex(output, "writes", &v) && json_object_is_type(v, json_type_int) &&
                    json_object_get_int64(v) >= 1 && json_object_get_int64(v) <= 1000) {
                        writes = json_object_get_int64(v);
                        (void) jadd(rec, "writes", json_object_new_int64(writes));
                }
                snprintf(what, sizeof what,
                         "host %s: installation disk %s: fdatasync p99 %.2f ms (median %.2f, max %.2f ms; "
                         "%lld writes, %s on %.200s); at most %lld ms allowed",
                         h->id, disk ? disk : "(no disk chosen)", p99, has_median ? median : NAN,
                         has_max ? max : NAN, (long long) writes, method ? method : "?", path ? path : "?",
                         (long long) svc_cfg(sv)->install_disk_fsync_ms);
        }
        r = store_host_set_step_result(sv->store, h->infra_env_id, h->id, STEP_INSTALLATION_DISK_SPEED_CHECK,
                                       json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
        if (r < 0) {
                api_store_error(resp, r, "step result");
                goto out;
        }
        svc_event(sv, reason || p99 > (double) svc_cfg(sv)->install_disk_fsync_ms ? EVENT_WARNING : EVENT_INFO,
                      EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id, "%s", what);
        /* The validation decides: a failure takes the host out of its
         * preparation (and the cluster's, refresh_cluster); a pass may be the
         * last one the cluster waited for. */
        struct host fresh;
        host_init(&fresh);
        if (store_host_get(sv->store, h->infra_env_id, h->id, &fresh) == 0) {
                (void) refresh_host(sv, &fresh);
                (void) install_prepare_check(sv, h->cluster_id);
        }
        host_free(&fresh);
        http_json(resp, 200, json_object_new_object());
out:
        cluster_free(&c);
}

/* The revision a step id names ("install-3", "apply-3"), or 0. */
static int64_t step_revision(const char *step_id, const char *prefix) {
        size_t n = strlen(prefix);
        if (!step_id || strncmp(step_id, prefix, n) != 0)
                return 0;
        char *end;
        long long v = strtoll(step_id + n, &end, 10);
        return *end || v <= 0 ? 0 : v;
}

static int64_t output_i64(json_object *output, const char *key, int64_t fallback) {
        json_object *v;
        if (json_object_is_type(output, json_type_object) && json_object_object_get_ex(output, key, &v) &&
            json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0)
                return json_object_get_int64(v);
        return fallback;
}

static size_t output_count(json_object *output, const char *key) {
        json_object *v;
        if (json_object_is_type(output, json_type_object) && json_object_object_get_ex(output, key, &v) &&
            json_object_is_type(v, json_type_array))
                return json_object_array_length(v);
        return 0;
}

/* The install step's result: everything is written. The host is installed
 * once its installed system checks in (install_first_boot); until then it
 * waits at stage rebooting, with first_boot_timeout to do it. */
static void install_done(struct svc *sv, struct host *h, int64_t rev, json_object *output) {
        struct host_progress p = { .stage = (char *) install_stage_to_string(INSTALL_STAGE_REBOOTING), .percent = 100 };
        enum host_status to;
        char info[160], more[256] = "", status_info[256];
        json_object *root;
        if (install_waits_for_first_boot(h))
                return; /* a repeat */
        if (hostfsm_apply(h->status, HOSTFSM_EV_PROGRESS, NULL, &to, NULL) < 0)
                return;
        snprintf(info, sizeof info, "Payload revision %lld written; waiting for the installed system to check in",
                 (long long) rev);
        snprintf(status_info, sizeof status_info, "Installation in progress: %s", info);
        p.info = info;
        if (store_host_set_install_state(sv->store, h->infra_env_id, h->id, to, status_info, &p, rev,
                                         STORE_STATUS(h->status)) < 0)
                return;
        if (json_object_is_type(output, json_type_object) && json_object_object_get_ex(output, "root_partition", &root) &&
            json_object_is_type(root, json_type_string))
                snprintf(more, sizeof more, "; root file system on %.200s", json_object_get_string(root));
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                      "host %s: payload revision %lld written%s; waiting up to %lld s for its installed system to "
                      "check in", h->id, (long long) rev, more, (long long) svc_cfg(sv)->first_boot_timeout_s);
}

static void apply_done(struct svc *sv, struct host *h, int64_t rev, int64_t exit_code, json_object *output,
                       const char *error) {
        char info[1024];
        if (exit_code != 0) {
                snprintf(info, sizeof info, "Applying payload revision %lld failed: %s", (long long) rev,
                         error && *error ? error : "no reason given");
                (void) store_host_set_install_state(sv->store, h->infra_env_id, h->id, HOST_INSTALLED, info, NULL, -1,
                                                    STORE_STATUS(HOST_INSTALLED));
                svc_event(sv, EVENT_ERROR, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                              "host %s failed to apply payload revision %lld: %s", h->id, (long long) rev,
                              error && *error ? error : "no reason given");
                return;
        }
        int64_t applied = output_i64(output, "applied_revision", rev);
        if (applied <= h->applied_revision)
                return; /* a repeat */
        if (store_host_set_install_state(sv->store, h->infra_env_id, h->id, HOST_INSTALLED,
                                         hostfsm_status_info(HOST_INSTALLED), NULL, applied,
                                         STORE_STATUS(HOST_INSTALLED)) < 0)
                return;
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                      "host %s applied payload revision %lld: %zu added, %zu updated, %zu removed", h->id,
                      (long long) applied, output_count(output, "added"), output_count(output, "updated"),
                      output_count(output, "removed"));
}

void api_install_result(struct svc *sv, struct host *h, const char *step_id, int64_t exit_code, json_object *output,
                        const char *error, struct http_response *resp) {
        int64_t rev_install = step_revision(step_id, INSTALL_STEP_ID_PREFIX);
        int64_t rev_apply = step_revision(step_id, APPLY_STEP_ID_PREFIX);
        bool installing = h->status == HOST_INSTALLING || h->status == HOST_INSTALLING_IN_PROGRESS;

        if (rev_apply || (!rev_install && h->status == HOST_INSTALLED)) {
                if (h->status == HOST_INSTALLED)
                        apply_done(sv, h, rev_apply ? rev_apply : output_i64(output, "applied_revision", 0), exit_code,
                                   output, error);
        } else if (installing) {
                if (exit_code == 0)
                        install_done(sv, h, output_i64(output, "applied_revision", rev_install), output);
                else
                        (void) install_fail_host(sv, h, NULL, error);
        }
        /* Anything else is a late repeat of a result already taken. */
        http_json(resp, 200, json_object_new_object());
}

/* ---- progress ------------------------------------------------------------ */

void api_host_progress(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        json_object *v;
        char *info = NULL;
        if (api_load_host(sv, req, resp, &ie, &h) < 0)
                goto out;
        if (P(req)->kind != PRINCIPAL_AGENT) {
                http_error(resp, 403, "install progress is reported by the host's agent");
                goto out;
        }
        if (!json_object_object_get_ex(req->body, "stage", &v) || !json_object_is_type(v, json_type_string) ||
            install_stage_from_string(json_object_get_string(v)) == _INSTALL_STAGE_INVALID) {
                http_error(resp, 400, "field \"stage\" must be one of starting, writing-image, writing-payload, "
                                      "rebooting, done");
                goto out;
        }
        enum install_stage stage = install_stage_from_string(json_object_get_string(v));
        if (stage == INSTALL_STAGE_DONE) {
                http_error(resp, 400, "stage \"done\" is the coordinator's to set: a host is done when its "
                                      "installed system checks in");
                goto out;
        }
        if (!json_object_object_get_ex(req->body, "percent", &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) < 0 || json_object_get_int64(v) > 100) {
                http_error(resp, 400, "field \"percent\" must be an integer from 0 to 100");
                goto out;
        }
        int64_t percent = json_object_get_int64(v);
        if (json_object_object_get_ex(req->body, "info", &v) && !json_object_is_type(v, json_type_null)) {
                if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > MODEL_MAX_MESSAGE ||
                    strlen(json_object_get_string(v)) != (size_t) json_object_get_string_len(v)) {
                        http_error(resp, 400, "field \"info\" must be a string of at most %d bytes", MODEL_MAX_MESSAGE);
                        goto out;
                }
                info = (char *) json_object_get_string(v);
        }
        enum host_status to;
        if (hostfsm_apply(h.status, HOSTFSM_EV_PROGRESS, NULL, &to, NULL) < 0) {
                http_error(resp, 409, "host %s is %s, not installing", h.id, host_status_to_string(h.status));
                goto out;
        }
        char status_info[256];
        snprintf(status_info, sizeof status_info, "Installation in progress: %s (%lld%%)",
                 install_stage_to_string(stage), (long long) percent);
        struct host_progress p = { .stage = (char *) install_stage_to_string(stage), .percent = percent, .info = info };
        int r = store_host_set_install_state(sv->store, ie.id, h.id, to, status_info, &p, -1, STORE_STATUS(h.status));
        if (r == -ESTALE) {
                http_error(resp, 409, "host %s changed state meanwhile", h.id);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        if (to != h.status)
                svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id, "host %s: %s -> %s: %s", h.id,
                              host_status_to_string(h.status), host_status_to_string(to), status_info);
        http_json(resp, 200, json_object_new_object());
out:
        host_free(&h);
        infra_env_free(&ie);
}

/* ---- payload revisions ---------------------------------------------------- */

void api_payload_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        struct store_payload_list l = { 0 };
        if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = store_payload_list(sv->store, c.id, &l);
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
        store_payload_list_free(&l);
        cluster_free(&c);
}

/* An agent may fetch the payloads of a cluster one of its infra-env's hosts
 * is bound to. */
static bool agent_may_fetch(struct svc *sv, const struct principal *p, const char *cluster_id) {
        struct store_host_filter f = { .infra_env_id = p->infra_env_id, .cluster_id = cluster_id, .no_inventory = true,
                                       .host_id = p->host_id[0] ? p->host_id : NULL };
        struct store_page pg = { .limit = 1 };
        struct host_list l = { 0 };
        bool ok = store_host_list(sv->store, &f, &pg, &l) == 0 && l.n > 0;
        host_list_free(&l);
        return ok;
}

void api_payload_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct cluster c;
        struct store_payload p;
        char *end;
        cluster_init(&c);
        store_payload_init(&p);
        long long rev = strtoll(req->params[1], &end, 10);
        if (*end || rev < 1) {
                http_error(resp, 400, "payload revision \"%s\" is not a positive integer", req->params[1]);
                goto out;
        }
        if (P(req)->kind == PRINCIPAL_AGENT) {
                if (!uuid_is_valid(req->params[0])) {
                        http_error(resp, 400, "cluster id \"%s\" is not a UUID", req->params[0]);
                        goto out;
                }
                if (!agent_may_fetch(sv, P(req), req->params[0])) {
                        http_error(resp, 403, "no host of this infra-env is bound to cluster %s", req->params[0]);
                        goto out;
                }
                int r = store_cluster_get(sv->store, req->params[0], &c);
                if (r < 0) {
                        api_store_error(resp, r, "cluster");
                        goto out;
                }
        } else if (api_load_cluster(sv, req, resp, req->params[0], &c) < 0)
                goto out;
        int r = store_payload_get(sv->store, c.id, rev, &p);
        if (r == -ENOENT) {
                http_error(resp, 404, "cluster %s has no payload revision %lld", c.id, rev);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "payload");
                goto out;
        }
        /* As stored (a high-S signature of an older revision as its low-S
         * twin): the agent checks digest and signature. */
        char *env = payload_envelope(p.cluster_id, p.revision, p.digest, p.signature, p.canonical, p.canonical_len);
        if (!env) {
                http_error(resp, 500, "out of memory");
                goto out;
        }
        http_text(resp, 200, env, strlen(env), "application/json");
out:
        store_payload_free(&p);
        cluster_free(&c);
}
