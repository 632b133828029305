/* What a host's agent calls: register, the heartbeat that answers the next
 * steps, and the steps' results. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/random.h>

#include "api.h"
#include "checkins.h"
#include "cleanup.h"
#include "hostfsm.h"
#include "install.h"
#include "log.h"
#include "ratelimit.h"
#include "refresh.h"
#include "stepfacts.h"
#include "steps.h"
#include "uuid.h"
#include "validations.h"

/* A known host registered again: after a bind or unbind (its agent was told
 * to), a restart of the agent, or a reboot. The state machine says where it
 * goes; then its stored inventory and results decide again at once. */
static void reregistered(struct svc *sv, struct host *h) {
        enum host_status to;
        const char *why;
        int r = hostfsm_apply(h->status, HOSTFSM_EV_REGISTERED, NULL, &to, &why);
        if (r < 0 || to == h->status) {
                if (r == 0)
                        (void) refresh_host(sv, h);
                return;
        }
        if (to == HOST_ERROR && host_status_is_installing(h->status)) {
                /* Its installation is over; so is its cluster's. */
                (void) install_fail_host(sv, h, NULL, why);
                return;
        }
        r = store_host_set_status(sv->store, h->infra_env_id, h->id, to, hostfsm_status_info(to), NULL, 0,
                                  STORE_STATUS(h->status));
        if (r < 0)
                return;
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                      "host %s registered again: %s -> %s", h->id, host_status_to_string(h->status),
                      host_status_to_string(to));
        h->status = to;
        /* A restarted or rebooted host (fixed, maybe) gets its disk measured
         * again at the next installation: a failed check no longer holds it. */
        if (h->cluster_id &&
            store_host_forget_step_result(sv->store, h->infra_env_id, h->id, STEP_INSTALLATION_DISK_SPEED_CHECK) > 0) {
                struct host fresh;
                host_init(&fresh);
                if (store_host_get(sv->store, h->infra_env_id, h->id, &fresh) == 0) {
                        free(h->step_results_json);
                        h->step_results_json = TAKE_PTR(fresh.step_results_json);
                }
                host_free(&fresh);
        }
        (void) refresh_host(sv, h);
}

static bool host_is_known(struct svc *sv, const char *infra_env_id, const char *host_id) {
        struct host h;
        bool known = store_host_get(sv->store, infra_env_id, host_id, &h) == 0;
        host_free(&h);
        return known;
}

/* A token from the infra-env's registration bucket ([infraenv]
 * register_burst, register_interval), else 429 with Retry-After. */
static bool registration_allowed(struct svc *sv, const struct infra_env *ie, struct http_response *resp) {
        const struct muster_config *cfg = svc_cfg(sv);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t wait = ratelimit_take(sv->registrations, ie->id, cfg->infraenv_register_burst,
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

void api_host_register(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        json_object *v;
        host_init(&h);
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
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
        if (!host_is_known(sv, ie.id, host_id) && !registration_allowed(sv, &ie, resp))
                goto out;
        int r = store_host_register_capped(sv->store, ie.id, host_id, version, svc_cfg(sv)->infraenv_max_hosts, &h);
        if (r == -EDQUOT) {
                http_error(resp, 409, "infra-env %s already holds %lld hosts, its cap ([infraenv] max_hosts); "
                           "delete hosts of it or raise the cap", ie.id,
                           (long long) svc_cfg(sv)->infraenv_max_hosts);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        if (r == 1)
                svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id,
                              "host %s registered in infra-env %s (agent %s)", h.id, ie.id, version ? version : "?");
        else
                reregistered(sv, &h);
        http_json(resp, r == 1 ? 201 : 200, host_to_json(&h, MODEL_JSON_NO_INVENTORY));
out:
        host_free(&h);
        infra_env_free(&ie);
}

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

static int bound_peers_load(struct svc *sv, const struct host *h, struct bound_peers *bp) {
        int r = cluster_view_load(sv, h->cluster_id, true, &bp->view);
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

void api_host_instructions(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        _cleanup_free_ char *host_token = NULL; /* before any goto: its cleanup runs at out */
        if (api_load_host(sv, req, resp, &ie, &h) < 0)
                goto out;
        /* The check-in is buffered (checkins.h): a poll writes nothing. */
        char now[MODEL_TIME_LEN];
        uint64_t polls = 1; /* not counted (a full buffer): not a multiple either */
        int r = model_now_rfc3339(now);
        if (r >= 0 && checkins_note(sv->checkins, ie.id, h.id, now, &polls) < 0)
                r = store_host_checkin(sv->store, ie.id, h.id, now);
        if (r < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        if (h.status == HOST_DISCONNECTED_UNBOUND || h.status == HOST_DISCONNECTED) {
                enum host_status to;
                if (hostfsm_apply(h.status, HOSTFSM_EV_RECONNECTED, NULL, &to, NULL) == 0 &&
                    store_host_set_status(sv->store, ie.id, h.id, to, hostfsm_status_info(to), NULL, 0,
                                          STORE_STATUS(h.status)) == 0) {
                        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id,
                                      "host %s is connected again", h.id);
                        h.status = to;
                        refresh_host(sv, &h);
                }
        }
        /* The installed system's node agent speaks with the host's own
         * token: its first check-in ends the installation. */
        if (P(req)->host_id[0] && (r = install_first_boot(sv, &h)) < 0) {
                api_store_error(resp, r, "host");
                goto out;
        }
        /* Only a host with the flag set costs a write. */
        int reregister = h.reregister_pending ? store_host_take_reregister(sv->store, ie.id, h.id) : 0;
        struct steps_input in = {
                .status = h.status,
                .inventory_received = h.inventory_json != NULL,
                .poll_count = polls,
                .inventory_every = (unsigned) svc_cfg(sv)->inventory_every,
                .interval_s = (unsigned) svc_cfg(sv)->instruction_interval_s,
                .must_reregister = reregister == 1,
                .ntp_sources = (const char *const *) ie.ntp_sources.v,
                .n_ntp_sources = ie.ntp_sources.n,
                .seed = random_seed(),
                .coordinator_date = now,
                .ntp_max_offset_ms = svc_cfg(sv)->ntp_max_offset_ms,
                .skip_mtu_probe = !svc_cfg(sv)->network_mtu_check,
        };
        struct steps_reply rep = { 0 };
        struct bound_peers bp = { 0 };
        struct cluster cl;
        cluster_init(&cl);
        /* The install step and the disk speed check go to the same disk. */
        if (h.cluster_id && !in.must_reregister &&
            (steps_allowed(h.status) & (1u << STEP_INSTALL | 1u << STEP_INSTALLATION_DISK_SPEED_CHECK)) &&
            (r = api_install_steps_input(sv, &h, &cl, &in)) < 0 && r != -ENOENT) {
                cluster_free(&cl);
                api_store_error(resp, r, "cluster");
                goto out;
        }
        /* An installing host gets its own token for its installed system's
         * node agent (rotated per host, not with the infra-env's). */
        if (h.cluster_id && !in.must_reregister && host_status_is_installing(h.status)) {
                int64_t gen = 0;
                if ((r = store_host_token_generation(sv->store, ie.id, h.id, &gen)) < 0 ||
                    (r = auth_issue_host(sv->key, ie.id, h.id, gen, &host_token)) < 0) {
                        cluster_free(&cl);
                        api_store_error(resp, r, "host");
                        goto out;
                }
                in.host_token = host_token;
        }
        if (h.cluster_id && !in.must_reregister && (steps_allowed(h.status) & (1u << STEP_CONNECTIVITY_CHECK))) {
                r = bound_peers_load(sv, &h, &bp);
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
                int sp = store_host_stop_pending(sv->store, ie.id, h.id);
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

void api_host_step_result(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        json_object *v;
        if (api_load_host(sv, req, resp, &ie, &h) < 0)
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
                int r = store_host_clear_stop(sv->store, ie.id, h.id);
                if (r < 0) {
                        api_store_error(resp, r, "host");
                        goto out;
                }
                json_object *st = NULL;
                bool stopped = json_object_object_get_ex(output, "stopped", &st) && json_object_get_boolean(st);
                if (r > 0)
                        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id,
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
                api_install_result(sv, &h, json_object_is_type(sid, json_type_string) ? json_object_get_string(sid) : NULL,
                                   exit_code, output,
                                   json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL, resp);
                goto out;
        }
        if (t == STEP_INSTALLATION_DISK_SPEED_CHECK) {
                json_object *e = NULL;
                json_object_object_get_ex(req->body, "error", &e);
                api_disk_speed_result(sv, &h, exit_code, output,
                                      json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL, resp);
                goto out;
        }
        if (exit_code != 0) {
                json_object *e = NULL;
                json_object_object_get_ex(req->body, "error", &e);
                svc_event(sv, EVENT_WARNING, EVENT_CAT_AGENT, ie.id, h.cluster_id, h.id, "step %s failed on host %s: %s",
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
                if ((int64_t) strlen(text) > svc_cfg(sv)->max_inventory_bytes) {
                        http_error(resp, 413, "inventory is larger than %lld bytes", (long long) svc_cfg(sv)->max_inventory_bytes);
                        goto out;
                }
                struct inventory inv;
                char err[256];
                if (inventory_from_string(text, &inv, err, sizeof err) < 0) {
                        inventory_free(&inv);
                        http_error(resp, 400, "inventory: %s", err);
                        goto out;
                }
                int r = store_host_set_inventory(sv->store, ie.id, h.id, text, &inv);
                inventory_free(&inv);
                if (r < 0) {
                        api_store_error(resp, r, "inventory");
                        goto out;
                }
                host_free(&h);
                host_init(&h);
                /* The validations decide the state the new inventory puts it in. */
                if (store_host_get(sv->store, ie.id, req->params[1], &h) == 0)
                        refresh_host(sv, &h);
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
                int r = store_host_set_step_result(sv->store, ie.id, h.id, t,
                                                   json_object_to_json_string_ext(output, JSON_C_TO_STRING_PLAIN));
                if (r < 0) {
                        api_store_error(resp, r, "step result");
                        goto out;
                }
                host_free(&h);
                if (store_host_get(sv->store, ie.id, req->params[1], &h) == 0)
                        refresh_host(sv, &h);
        }
        http_json(resp, 200, json_object_new_object());
out:
        host_free(&h);
        infra_env_free(&ie);
}

