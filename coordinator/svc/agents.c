/* What a host's agent does (agents.h): register, poll for its steps, and
 * report their results. */
#include "svc/agents.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/random.h>
#include <unistd.h>

#include "svc/checkins.h"
#include "cleanup.h"
#include "svc/downloads.h"
#include "errmsg.h"
#include "domain/stepfacts.h"
#include "svc/pending.h"
#include "domain/hostfsm.h"
#include "svc/install.h"
#include "domain/ratelimit.h"
#include "svc/refresh.h"
#include "uuid.h"
#include "store/store.h"

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
                (void) installation_fail_host(sv, h, NULL, why);
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
        bool known = store_host_get_brief(sv->store, infra_env_id, host_id, &h) == 0;
        host_free(&h);
        return known;
}

/* A token from the infra-env's registration bucket; 0, or how many ms until
 * the next one. */
static int64_t registration_wait_ms(struct svc *sv, const struct infra_env *ie) {
        const struct muster_config *cfg = svc_cfg(sv);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t wait = ratelimit_take(sv->registrations, ie->id, cfg->infra_env_register_burst,
                                      cfg->infra_env_register_interval_ms,
                                      (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000);
        return wait > 0 ? wait : 0; /* taken, or no memory to keep the bucket: let it in */
}

int svc_agent_register(struct svc *sv, const struct infra_env *ie, const char *host_id, const char *version,
                       struct host *h, int64_t *retry_after_s, char *err, size_t errlen) {
        const struct muster_config *cfg = svc_cfg(sv);
        host_init(h);
        /* A known host registering again (after a bind, an agent restart, a
         * reboot) is never limited; a new one counts against the infra-env's
         * rate and cap: one ISO's token must not fill the disk. */
        if (!host_is_known(sv, ie->id, host_id)) {
                int64_t wait = registration_wait_ms(sv, ie);
                if (wait > 0) {
                        *retry_after_s = (wait + 999) / 1000;
                        return errmsg(err, errlen, -EUSERS,
                                      "infra-env %s registers new hosts too fast (%lld at once, then one every %lld "
                                      "ms); try again later", ie->id, (long long) cfg->infra_env_register_burst,
                                      (long long) cfg->infra_env_register_interval_ms);
                }
        }
        /* A new host's event goes in the same write (its id as stored:
         * lower case). */
        char hid[UUID_STR_LEN];
        if (uuid_normalize(host_id, hid) < 0)
                return -EINVAL;
        struct event ev;
        svc_event_make(&ev, EVENT_INFO, EVENT_CAT_AGENT, ie->id, ie->cluster_id, hid,
                       "host %s registered in infra-env %s (agent %s)", hid, ie->id, version ? version : "?");
        int r = store_host_register_event(sv->store, ie->id, host_id, version, cfg->infra_env_max_hosts, &ev, h);
        if (r == 1)
                svc_event_emit(sv, &ev);
        event_free(&ev);
        if (r == -EDQUOT)
                return errmsg(err, errlen, r,
                              "infra-env %s already holds %lld hosts, its cap ([infraenv] max_hosts); "
                              "delete hosts of it or raise the cap", ie->id, (long long) cfg->infra_env_max_hosts);
        if (r < 0)
                return r;
        if (r == 0)
                reregistered(sv, h);
        return r;
}

/* The agent stopped its installation (stopped) or had none running: no more
 * stop-installation steps for h. 0 or -errno. */
static int agent_stopped(struct svc *sv, const struct host *h, bool stopped) {
        int r = store_host_clear_stop(sv->store, h->infra_env_id, h->id);
        if (r > 0)
                svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id, "host %s: %s", h->id,
                          stopped ? "the agent stopped its installation" : "the agent had no installation running");
        return r < 0 ? r : 0;
}

/* A step of type t failed on h with `error` (may be NULL): an event. */
static void agent_step_failed(struct svc *sv, const struct host *h, enum step_type t, const char *error) {
        svc_event(sv, EVENT_WARNING, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                  "step %s failed on host %s: %s", step_type_to_string(t), h->id, error ? error : "no reason given");
}

/* The host as stored now, validated again (after a new fact). */
static void revalidate(struct svc *sv, const struct host *h) {
        struct host fresh;
        if (store_host_get(sv->store, h->infra_env_id, h->id, &fresh) == 0)
                (void) refresh_host(sv, &fresh);
        host_free(&fresh);
}

int svc_agent_inventory(struct svc *sv, const struct infra_env *ie, struct host *h, const char *text, size_t len,
                        char *err, size_t errlen) {
        int64_t max = svc_cfg(sv)->max_inventory_bytes;
        if ((int64_t) len > max)
                return errmsg(err, errlen, -E2BIG, "inventory is larger than %lld bytes", (long long) max);
        struct inventory inv;
        char why[256];
        int k = inventory_from_text(text, len, &inv, why, sizeof why);
        if (k < 0) {
                inventory_free(&inv);
                return errmsg(err, errlen, k == -E2BIG ? k : -EINVAL, "inventory: %s", why);
        }
        char *own = strndup(text, len);
        if (!own) {
                inventory_free(&inv);
                return -ENOMEM;
        }
        /* Stored with the state its validations put the host in: one write. */
        int r = refresh_host_inventory(sv, h, ie, own, &inv);
        inventory_free(&inv);
        return r;
}

/* The result of a network step (connectivity-check, ntp-synchronizer,
 * domain-resolution) of h: kept as its step result and the host validated
 * again. A host no longer bound (an unbind came between) drops it. 0 or
 * -errno (store errors). */
static int agent_network_result(struct svc *sv, const struct host *h, enum step_type t, json_object *output) {
        /* Handed out while bound, answered after an unbind: stale. */
        if (!h->cluster_id)
                return 0;
        int r = store_host_set_step_result(sv->store, h->infra_env_id, h->id, t,
                                           json_object_to_json_string_ext(output, JSON_C_TO_STRING_PLAIN));
        if (r < 0)
                return r;
        revalidate(sv, h);
        return 0;
}

int svc_agent_step_result(struct svc *sv, const struct infra_env *ie, struct host *h,
                          const struct agent_step_result *res, char *err, size_t errlen, const char **what) {
        enum step_type t = res->type;
        json_object *stopped = NULL;
        *what = "step result";
        switch (t) {
        case STEP_STOP_INSTALLATION:
                /* The agent stopped (or had nothing running): no more stops. */
                *what = "host";
                return agent_stopped(sv, h, json_object_object_get_ex(res->output, "stopped", &stopped) &&
                                                    json_object_get_boolean(stopped));
        case STEP_INSTALL:
                svc_install_step_result(sv, h, res->step_id, res->exit_code, res->output, res->error);
                return 0;
        case STEP_INSTALLATION_DISK_SPEED_CHECK:
                *what = "cluster";
                return svc_install_disk_speed_result(sv, h, res->exit_code, res->output, res->error, err, errlen, what);
        case STEP_LOGS_GATHER:
                return svc_agent_logs_result(sv, h, res->exit_code, res->error);
        case STEP_RECLAIM:
                return svc_agent_reclaim_result(sv, h, res->exit_code, res->output, res->error);
        default:
                break;
        }
        if (res->exit_code != 0) {
                agent_step_failed(sv, h, t, res->error);
                return 0;
        }
        if (t == STEP_INVENTORY) {
                *what = "inventory";
                return svc_agent_inventory(sv, ie, h, res->text, res->len, err, errlen);
        }
        if (t == STEP_CONNECTIVITY_CHECK || t == STEP_NTP_SYNCHRONIZER || t == STEP_DOMAIN_RESOLUTION)
                return agent_network_result(sv, h, t, res->output);
        return 0;
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

/* The check-in of a poll: buffered (checkins.h), so a poll writes nothing;
 * a disconnected host is connected again. */
static int check_in(struct svc *sv, const struct infra_env *ie, struct host *h, char now[MODEL_TIME_LEN],
                    uint64_t *polls) {
        *polls = 1; /* not counted (a full buffer): not a multiple either */
        int r = model_time_format(svc_now(sv), now);
        if (r >= 0 && checkins_note(sv->checkins, ie->id, h->id, now, polls) < 0)
                r = store_host_checkin(sv->store, ie->id, h->id, now);
        if (r < 0)
                return r;
        if (h->status == HOST_DISCONNECTED_UNBOUND || h->status == HOST_DISCONNECTED) {
                enum host_status to;
                if (hostfsm_apply(h->status, HOSTFSM_EV_RECONNECTED, NULL, &to, NULL) == 0 &&
                    store_host_set_status(sv->store, ie->id, h->id, to, hostfsm_status_info(to), NULL, 0,
                                          STORE_STATUS(h->status)) == 0) {
                        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, ie->id, h->cluster_id, h->id,
                                  "host %s is connected again", h->id);
                        h->status = to;
                        refresh_host(sv, h);
                }
        }
        return 0;
}

/* What a reclaim step needs: the coordinator paths of the discovery kernel
 * and initramfs, their command line, and the installation disk (to wipe). */
struct reclaim_inputs {
        char kernel_url[256], initrd_url[256];
        char cmdline[ISO_CMDLINE_MAX];
        struct host full;
};

static int reclaim_inputs(struct svc *sv, const struct infra_env *ie, const struct host *h, const struct cluster *cl,
                          struct steps_input *in, struct reclaim_inputs *ri) {
        char err[512];
        int r = svc_pxe_cmdline(sv, ie, ri->cmdline, err, sizeof err);
        if (r < 0) {
                /* Nothing to boot into: the request fails and says why. */
                (void) svc_agent_reclaim_result(sv, h, 1, NULL, err);
                return r == -ENODATA ? 0 : r;
        }
        snprintf(ri->kernel_url, sizeof ri->kernel_url, MUSTER_API_PREFIX MUSTER_PATH_INFRA_ENV_PXE("%s", "vmlinuz"),
                 ie->id);
        snprintf(ri->initrd_url, sizeof ri->initrd_url, MUSTER_API_PREFIX MUSTER_PATH_INFRA_ENV_PXE("%s", "initrd"),
                 ie->id);
        in->reclaim = true;
        in->reclaim_wipe = (h->pending_actions & HOST_ACTION_RECLAIM_WIPE) != 0;
        in->reclaim_kernel_url = ri->kernel_url;
        in->reclaim_initrd_url = ri->initrd_url;
        in->reclaim_cmdline = ri->cmdline;
        /* The disk it was installed to, as the install step chose it. */
        if (in->reclaim_wipe)
                in->installation_disk = svc_reclaim_disk(sv, h, cl, &ri->full);
        return 0;
}

/* What a bound host's steps need besides its own state: the install step's
 * and the disk check's arguments, its own token while it installs, the
 * peers to check, a pending stop. Strings live in *cl, *bp, *host_token. */
static int bound_inputs(struct svc *sv, const struct infra_env *ie, struct host *h, struct steps_input *in,
                        struct cluster *cl, struct bound_peers *bp, char **host_token, struct reclaim_inputs *ri,
                        const char **what) {
        int r;
        /* The install step and the disk speed check go to the same disk. */
        if (h->cluster_id && !in->must_reregister &&
            (steps_allowed(h->status) & (1u << STEP_INSTALL | 1u << STEP_INSTALLATION_DISK_SPEED_CHECK)) &&
            (r = installation_steps_input(sv, h, cl, in)) < 0 && r != -ENOENT) {
                *what = "cluster";
                return r;
        }
        /* An installing host gets its own token for its installed system's
         * node agent (rotated per host, not with the infra-env's). */
        if (h->cluster_id && !in->must_reregister && host_status_is_installing(h->status)) {
                int64_t gen = 0;
                if ((r = store_host_token_generation(sv->store, ie->id, h->id, &gen)) < 0 ||
                    (r = auth_issue_host(sv->key, ie->id, h->id, gen, host_token)) < 0)
                        return r;
                in->host_token = *host_token;
        }
        if (h->cluster_id && !in->must_reregister && (steps_allowed(h->status) & (1u << STEP_CONNECTIVITY_CHECK))) {
                if ((r = bound_peers_load(sv, h, bp)) < 0) {
                        *what = "cluster";
                        return r;
                }
                in->cluster_name = bp->view.c.name;
                in->base_dns_domain = bp->view.c.base_dns_domain;
                in->peers = bp->peers;
                in->n_peers = bp->n;
        }
        in->disk_speed_measured = step_facts_has(h->step_results_json, STEP_INSTALLATION_DISK_SPEED_CHECK);
        if (h->status == HOST_ERROR && !in->must_reregister)
                in->stop_installation = store_host_stop_pending(sv->store, ie->id, h->id) > 0;
        if (h->status == HOST_INSTALLED && (h->pending_actions & HOST_ACTION_RECLAIM) && !in->must_reregister &&
            (r = reclaim_inputs(sv, ie, h, cl, in, ri)) < 0)
                return r;
        return 0;
}

/* A reclaim step in the reply is marked handed out (too late to withdraw it
 * from then on), only while the reclaim is still asked for; withdrawn
 * meanwhile, the step is taken out of the reply. */
static int reclaim_handed_out(struct svc *sv, const struct host *h, struct steps_reply *rep) {
        size_t n = rep->instructions ? json_object_array_length(rep->instructions) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *t = NULL;
                json_object_object_get_ex(json_object_array_get_idx(rep->instructions, i), "step_type", &t);
                if (!t || strcmp(json_object_get_string(t), step_type_to_string(STEP_RECLAIM)) != 0)
                        continue;
                int r = store_host_actions(sv->store, h->infra_env_id, h->id, HOST_ACTION_RECLAIM_STARTED, 0,
                                           HOST_ACTION_RECLAIM | HOST_ACTION_RECLAIM_STARTED, HOST_ACTION_RECLAIM);
                if (r == -EBUSY)
                        return json_object_array_del_idx(rep->instructions, i, 1) < 0 ? -ENOMEM : 0;
                if (r >= 0)
                        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                                  "host %s's node agent was handed the reclaim; it can no longer be withdrawn", h->id);
                return r;
        }
        return 0;
}

int svc_agent_poll(struct svc *sv, const struct infra_env *ie, struct host *h, bool own_token,
                   struct steps_reply *rep, const char **what) {
        const struct muster_config *cfg = svc_cfg(sv);
        char now[MODEL_TIME_LEN];
        uint64_t polls;
        *what = "host";
        /* A brief read serves a host in the pool that is connected; the
         * rest (bound, or connected again: validated again) need all of it. */
        if (h->brief && (h->cluster_id || h->status == HOST_DISCONNECTED_UNBOUND || h->status == HOST_DISCONNECTED)) {
                struct host full;
                int k = store_host_get(sv->store, ie->id, h->id, &full);
                if (k < 0)
                        return k;
                host_free(h);
                *h = full;
        }
        int r = check_in(sv, ie, h, now, &polls);
        if (r < 0)
                return r;
        /* The installed system's node agent's first check-in ends the
         * installation. */
        if (own_token && (r = installation_first_boot(sv, h)) < 0)
                return r;
        /* Only a host with the flag set costs a write. */
        int reregister = h->reregister_pending ? store_host_take_reregister(sv->store, ie->id, h->id) : 0;
        struct steps_input in = {
                .status = h->status,
                .inventory_received = h->has_inventory,
                .poll_count = polls,
                .inventory_every = (unsigned) cfg->inventory_every,
                .interval_s = (unsigned) cfg->instruction_interval_s,
                .must_reregister = reregister == 1,
                .ntp_sources = (const char *const *) ie->ntp_sources.v,
                .n_ntp_sources = ie->ntp_sources.n,
                .seed = random_seed(),
                .coordinator_date = now,
                .ntp_max_offset_ms = cfg->ntp_max_offset_ms,
                .skip_mtu_probe = !cfg->network_mtu_check,
                .gather_logs = (h->pending_actions & HOST_ACTION_GATHER_LOGS) != 0,
                .logs_max_bytes = cfg->logs_max_upload_bytes,
        };
        _cleanup_free_ char *host_token = NULL;
        struct bound_peers bp = { 0 };
        struct cluster cl;
        _cleanup_free_ struct reclaim_inputs *ri = NULL;
        cluster_init(&cl);
        if ((h->pending_actions & HOST_ACTION_RECLAIM) && !(ri = calloc(1, sizeof *ri)))
                return -ENOMEM;
        if (ri)
                host_init(&ri->full);
        r = bound_inputs(sv, ie, h, &in, &cl, &bp, &host_token, ri, what);
        if (r >= 0 && steps_for_host(&in, rep) < 0)
                r = -EIO;
        if (r >= 0 && in.reclaim && !(h->pending_actions & HOST_ACTION_RECLAIM_STARTED))
                r = reclaim_handed_out(sv, h, rep);
        if (ri)
                host_free(&ri->full);
        bound_peers_free(&bp);
        cluster_free(&cl);
        return r;
}
