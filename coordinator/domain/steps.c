/* Steps per host state (steps.h): plan[] says which step types each state
 * gets and whether the agent must exit to register again; the per-poll
 * filters (inventory cadence, peers present, names known) come after. */
#include "domain/steps.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "domain/validations.h"

static json_object *steps_reclaim_args(const char *kernel_url, const char *initrd_url, const char *cmdline, bool wipe,
                                       const char *installation_disk);

#define S(t) (1u << (t))
#define DISCOVERY_STEPS S(STEP_INVENTORY)
#define BOUND_STEPS (S(STEP_INVENTORY) | S(STEP_CONNECTIVITY_CHECK) | S(STEP_NTP_SYNCHRONIZER) | S(STEP_DOMAIN_RESOLUTION))

static const struct {
        unsigned steps;
        bool exit; /* the agent must register again */
} plan[_HOST_STATUS_MAX] = {
        [HOST_DISCOVERING_UNBOUND] = { DISCOVERY_STEPS, false },
        [HOST_KNOWN_UNBOUND] = { DISCOVERY_STEPS, false },
        [HOST_INSUFFICIENT_UNBOUND] = { DISCOVERY_STEPS, false },
        [HOST_DISCONNECTED_UNBOUND] = { DISCOVERY_STEPS, false },
        [HOST_BINDING] = { 0, true },
        [HOST_DISCOVERING] = { BOUND_STEPS, false },
        [HOST_KNOWN] = { BOUND_STEPS, false },
        [HOST_INSUFFICIENT] = { BOUND_STEPS, false },
        [HOST_PENDING_FOR_INPUT] = { BOUND_STEPS, false },
        [HOST_DISCONNECTED] = { BOUND_STEPS, false },
        /* Nothing is written before the disk speed check passes. */
        [HOST_PREPARING_FOR_INSTALLATION] = { S(STEP_INSTALLATION_DISK_SPEED_CHECK), false },
        [HOST_INSTALLING] = { S(STEP_INSTALL), false },
        [HOST_INSTALLING_IN_PROGRESS] = { S(STEP_INSTALL), false },
        /* Day 2: the apply of a newer payload revision. */
        [HOST_INSTALLED] = { S(STEP_INSTALL), false },
        [HOST_ERROR] = { 0, false },
        /* An agent still running on an unbound host registers again. */
        [HOST_UNBINDING_PENDING_USER_ACTION] = { 0, true },
        /* The installed system's agent is told to stop; the ISO's registers. */
        [HOST_RESETTING_PENDING_USER_ACTION] = { 0, true },
};

unsigned steps_allowed(enum host_status s) {
        return (int) s >= 0 && s < _HOST_STATUS_MAX ? plan[s].steps : 0;
}

static uint64_t splitmix64(uint64_t x) {
        x += UINT64_C(0x9e3779b97f4a7c15);
        x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
        return x ^ (x >> 31);
}

void steps_make_id(enum step_type t, uint64_t seed, unsigned index, char out[STEPS_ID_MAX]) {
        /* Adding the index keeps the ids of one reply distinct. */
        uint32_t h = (uint32_t) splitmix64(seed) + index;
        const char *name = step_type_to_string(t);

        snprintf(out, STEPS_ID_MAX, "%s-%08x", name ? name : "step", (unsigned) h);
}

/* An array of the non-NULL strings of v no longer than max_len, at most cap. */
static json_object *str_array(const char *const *v, size_t n, size_t cap, size_t max_len) {
        _cleanup_json_ json_object *a = json_object_new_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < n && json_object_array_length(a) < cap; i++) {
                json_object *s;
                if (!v[i] || strlen(v[i]) > max_len)
                        continue;
                s = json_object_new_string(v[i]);
                if (!s || json_object_array_add(a, s) < 0) {
                        json_object_put(s);
                        return NULL;
                }
        }
        return TAKE_PTR(a);
}

json_object *steps_connectivity_args(const struct step_peer *peers, size_t n, bool mtu_probe) {
        _cleanup_json_ json_object *args = json_object_new_object();
        json_object *list = json_object_new_array();

        if (!args) {
                json_object_put(list);
                return NULL;
        }
        if (jadd(args, "peers", list) < 0 || jadd(args, "mtu_probe", json_object_new_boolean(mtu_probe)) < 0)
                return NULL;
        for (size_t i = 0; i < n && json_object_array_length(list) < STEPS_MAX_PEERS; i++) {
                json_object *p;
                if (!peers[i].host_id || peers[i].n_addresses == 0)
                        continue;
                p = json_object_new_object();
                if (!p || json_object_array_add(list, p) < 0) {
                        json_object_put(p);
                        return NULL;
                }
                if (jadd(p, "host_id", json_object_new_string(peers[i].host_id)) < 0 ||
                    jadd(p, "addresses", str_array(peers[i].addresses, peers[i].n_addresses, STEPS_MAX_PEER_ADDRESSES,
                                                  INET6_ADDRSTRLEN)) < 0)
                        return NULL;
        }
        return TAKE_PTR(args);
}

json_object *steps_ntp_args(const char *const *sources, size_t n, const char *coordinator_date,
                            int64_t max_offset_ms) {
        _cleanup_json_ json_object *args = json_object_new_object();

        if (!args || jadd(args, "ntp_sources", str_array(sources, n, STEPS_MAX_NTP_SOURCES, STEPS_MAX_NTP_SOURCE_LEN)) < 0)
                return NULL;
        if (coordinator_date && *coordinator_date &&
            jadd(args, "coordinator_date", json_object_new_string(coordinator_date)) < 0)
                return NULL;
        if (max_offset_ms > 0 && jadd(args, "max_offset_ms", json_object_new_int64(max_offset_ms)) < 0)
                return NULL;
        return TAKE_PTR(args);
}

/* The names a cluster needs: the API, the internal API and the wildcard
 * ingress name (the agent resolves a random label in place of '*'). */
static json_object *steps_domain_args(const char *cluster_name, const char *base_dns_domain) {
        _cleanup_json_ json_object *args = json_object_new_object();
        json_object *list = json_object_new_array();

        if (!args) {
                json_object_put(list);
                return NULL;
        }
        if (jadd(args, "names", list) < 0)
                return NULL;
        for (int i = 0; i < _DNS_NAME_MAX; i++) {
                _cleanup_free_ char *name = NULL;
                json_object *s;
                if (asprintf(&name, "%s.%s.%s", cluster_dns_prefix((enum cluster_dns_name) i), cluster_name,
                             base_dns_domain) < 0) {
                        name = NULL;
                        return NULL;
                }
                s = json_object_new_string(name);
                if (!s || json_object_array_add(list, s) < 0) {
                        json_object_put(s);
                        return NULL;
                }
        }
        return TAKE_PTR(args);
}

/* install {"mode", "cluster_id", "revision", "payload_url", "role"?,
 * "installation_disk"?}; role and installation_disk only in mode install
 * (role auto is sent as worker; a NULL disk is left out). */
static json_object *steps_install_args(const char *mode, const char *cluster_id, int64_t revision, enum host_role role,
                                const char *installation_disk) {
        _cleanup_json_ json_object *args = json_object_new_object();
        char url[256];
        bool install = strcmp(mode, INSTALL_MODE_INSTALL) == 0;

        if (!args || !cluster_id)
                return NULL;
        snprintf(url, sizeof url, MUSTER_PAYLOAD_PATH_FMT, cluster_id, (long long) revision);
        if (jadd(args, "mode", json_object_new_string(mode)) < 0 ||
            jadd(args, "cluster_id", json_object_new_string(cluster_id)) < 0 ||
            jadd(args, "revision", json_object_new_int64(revision)) < 0 ||
            jadd(args, "payload_url", json_object_new_string(url)) < 0)
                return NULL;
        if (install && jadd(args, "role", json_object_new_string(role == ROLE_MASTER ? "master" : "worker")) < 0)
                return NULL;
        if (install && installation_disk && *installation_disk &&
            jadd(args, "installation_disk", json_object_new_string(installation_disk)) < 0)
                return NULL;
        return TAKE_PTR(args);
}

json_object *steps_disk_speed_args(const char *path, unsigned writes) {
        _cleanup_json_ json_object *args = json_object_new_object();

        if (!args || jadd(args, "writes", json_object_new_int64(writes ? writes : STEPS_DISK_SPEED_WRITES)) < 0)
                return NULL;
        if (path && *path && jadd(args, "path", json_object_new_string(path)) < 0)
                return NULL;
        return TAKE_PTR(args);
}

/* A step with a fixed id (id != NULL) or one derived from the seed. */
static int add_step_id(json_object *arr, enum step_type t, json_object *args, uint64_t seed, const char *fixed_id) {
        _cleanup_json_ json_object *a = args;
        _cleanup_json_ json_object *step = NULL;
        char id[STEPS_ID_MAX];

        if (!a)
                return -ENOMEM;
        if (fixed_id)
                snprintf(id, sizeof id, "%s", fixed_id);
        else
                steps_make_id(t, seed, (unsigned) json_object_array_length(arr), id);
        step = json_object_new_object();
        if (!step || jadd(step, "step_id", json_object_new_string(id)) < 0 ||
            jadd(step, "step_type", json_object_new_string(step_type_to_string(t))) < 0 ||
            jadd(step, "args", TAKE_PTR(a)) < 0)
                return -ENOMEM;
        if (json_object_array_add(arr, step) < 0)
                return -ENOMEM;
        step = NULL;
        return 0;
}

static int add_step(json_object *arr, enum step_type t, json_object *args, uint64_t seed) {
        return add_step_id(arr, t, args, seed, NULL);
}

static bool set_str(const char *s) {
        return s && *s;
}

/* The facts a state gathers: the inventory (first, then every `every`
 * polls), connectivity to the peers that have addresses, the clock against
 * the NTP sources or the coordinator's date, the cluster's DNS names. */
static int add_fact_steps(json_object *arr, const struct steps_input *in, unsigned allowed) {
        unsigned every = in->inventory_every ? in->inventory_every : STEPS_DEFAULT_INVENTORY_EVERY;
        size_t with_addresses = 0;
        int r;
        for (size_t i = 0; i < in->n_peers; i++)
                with_addresses += in->peers[i].host_id && in->peers[i].n_addresses > 0;
        if ((allowed & S(STEP_INVENTORY)) && (!in->inventory_received || in->poll_count % every == 0)) {
                r = add_step(arr, STEP_INVENTORY, json_object_new_object(), in->seed);
                if (r < 0)
                        return r;
        }
        if ((allowed & S(STEP_CONNECTIVITY_CHECK)) && with_addresses > 0) {
                r = add_step(arr, STEP_CONNECTIVITY_CHECK, steps_connectivity_args(in->peers, in->n_peers, !in->skip_mtu_probe), in->seed);
                if (r < 0)
                        return r;
        }
        /* Without a source or a date the agent has nothing to compare with. */
        bool ntp_input = set_str(in->coordinator_date);
        for (size_t i = 0; i < in->n_ntp_sources && !ntp_input; i++)
                ntp_input = in->ntp_sources[i] && strlen(in->ntp_sources[i]) <= STEPS_MAX_NTP_SOURCE_LEN;
        if ((allowed & S(STEP_NTP_SYNCHRONIZER)) && ntp_input) {
                r = add_step(arr, STEP_NTP_SYNCHRONIZER,
                             steps_ntp_args(in->ntp_sources, in->n_ntp_sources, in->coordinator_date,
                                            in->ntp_max_offset_ms),
                             in->seed);
                if (r < 0)
                        return r;
        }
        if ((allowed & S(STEP_DOMAIN_RESOLUTION)) && set_str(in->cluster_name) && set_str(in->base_dns_domain))
                return add_step(arr, STEP_DOMAIN_RESOLUTION, steps_domain_args(in->cluster_name, in->base_dns_domain),
                                in->seed);
        return 0;
}

/* The install step: the same id on every poll, so the agent runs it once
 * per (cluster, revision); an installed host applies newer revisions. */
static int add_install_step(json_object *arr, const struct steps_input *in) {
        bool installing = in->status == HOST_INSTALLING || in->status == HOST_INSTALLING_IN_PROGRESS;
        char id[STEPS_ID_MAX];
        if (installing && in->install_written)
                return 0; /* written: what is left is the installed system's to do */
        if (installing) {
                snprintf(id, sizeof id, INSTALL_STEP_ID_PREFIX "%lld", (long long) in->payload_revision);
                json_object *args = steps_install_args(INSTALL_MODE_INSTALL, in->cluster_id, in->payload_revision,
                                                       in->role, in->installation_disk);
                if (args && in->host_token && jadd(args, "host_token", json_object_new_string(in->host_token)) < 0) {
                        json_object_put(args);
                        args = NULL;
                }
                return add_step_id(arr, STEP_INSTALL, args, in->seed, id);
        }
        if (in->applied_revision >= in->payload_revision)
                return 0;
        snprintf(id, sizeof id, APPLY_STEP_ID_PREFIX "%lld", (long long) in->payload_revision);
        return add_step_id(arr, STEP_INSTALL,
                           steps_install_args(INSTALL_MODE_APPLY, in->cluster_id, in->payload_revision, in->role, NULL),
                           in->seed, id);
}

int steps_for_host(const struct steps_input *in, struct steps_reply *out) {
        _cleanup_json_ json_object *arr = NULL;
        int r;

        if (!in || !out || (int) in->status < 0 || in->status >= _HOST_STATUS_MAX)
                return -EINVAL;
        memset(out, 0, sizeof *out);
        arr = json_object_new_array();
        if (!arr)
                return -ENOMEM;

        if (in->must_reregister || plan[in->status].exit) {
                out->instructions = TAKE_PTR(arr);
                out->next_instruction_seconds = 0;
                out->post_step_action = "exit";
                return 0;
        }

        unsigned allowed = plan[in->status].steps;
        if ((r = add_fact_steps(arr, in, allowed)) < 0)
                return r;
        /* Preparing: the installation disk's speed, until a result is in. */
        if ((allowed & S(STEP_INSTALLATION_DISK_SPEED_CHECK)) && !in->disk_speed_measured) {
                r = add_step(arr, STEP_INSTALLATION_DISK_SPEED_CHECK,
                             steps_disk_speed_args(in->installation_disk, STEPS_DISK_SPEED_WRITES), in->seed);
                if (r < 0)
                        return r;
        }
        /* A cancelled install: stop it, whatever the state's plan says. */
        if (in->stop_installation) {
                r = add_step_id(arr, STEP_STOP_INSTALLATION, json_object_new_object(), in->seed, "stop-installation");
                if (r < 0)
                        return r;
        }
        /* The admin's asks: the logs from any agent that polls, a reclaim
         * from an installed host's node agent (and then no apply). */
        if (in->gather_logs) {
                json_object *a = json_object_new_object();
                if (a && in->logs_max_bytes > 0 && jadd(a, "max_bytes", json_object_new_int64(in->logs_max_bytes)) < 0) {
                        json_object_put(a);
                        a = NULL;
                }
                if ((r = add_step_id(arr, STEP_LOGS_GATHER, a, in->seed, "logs-gather")) < 0)
                        return r;
        }
        bool reclaim = in->reclaim && in->status == HOST_INSTALLED && set_str(in->reclaim_kernel_url) &&
                       set_str(in->reclaim_initrd_url) && in->reclaim_cmdline;
        if (reclaim && (r = add_step_id(arr, STEP_RECLAIM,
                                        steps_reclaim_args(in->reclaim_kernel_url, in->reclaim_initrd_url,
                                                           in->reclaim_cmdline, in->reclaim_wipe, in->installation_disk),
                                        in->seed, "reclaim")) < 0)
                return r;
        if (!reclaim && (allowed & S(STEP_INSTALL)) && set_str(in->cluster_id) && in->payload_revision > 0 &&
            (r = add_install_step(arr, in)) < 0)
                return r;

        out->instructions = TAKE_PTR(arr);
        out->next_instruction_seconds = in->interval_s ? in->interval_s : STEPS_DEFAULT_INTERVAL_S;
        out->post_step_action = "continue";
        return 0;
}

/* reclaim {"kernel_url", "initrd_url", "cmdline", "wipe", "installation_disk"?}
 * (agent/reclaim.h). */
static json_object *steps_reclaim_args(const char *kernel_url, const char *initrd_url, const char *cmdline, bool wipe,
                                const char *installation_disk) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "kernel_url", json_object_new_string(kernel_url)) < 0 ||
            jadd(o, "initrd_url", json_object_new_string(initrd_url)) < 0 ||
            jadd(o, "cmdline", json_object_new_string(cmdline)) < 0 || jadd(o, "wipe", json_object_new_boolean(wipe)) < 0 ||
            (set_str(installation_disk) && jadd(o, "installation_disk", json_object_new_string(installation_disk)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

json_object *steps_reply_to_json(const struct steps_reply *r) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o || !r || !r->instructions ||
            jadd(o, "next_instruction_seconds", json_object_new_int64(r->next_instruction_seconds)) < 0 ||
            jadd(o, "post_step_action", json_object_new_string(r->post_step_action ? r->post_step_action : "continue")) < 0 ||
            jadd(o, "instructions", json_object_get(r->instructions)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

void steps_reply_free(struct steps_reply *r) {
        if (!r)
                return;
        json_object_put(r->instructions);
        r->instructions = NULL;
}

static int push_addresses(const struct strv *list, const struct cidr *net, struct strv *out) {
        for (size_t k = 0; k < list->n; k++) {
                struct cidr c;
                char buf[INET6_ADDRSTRLEN];
                int r;

                if (cidr_parse(list->v[k], &c) < 0 && ip_parse(list->v[k], &c.addr) < 0)
                        continue;
                if (net && !cidr_contains(net, &c.addr))
                        continue;
                if (!inet_ntop(c.addr.family, c.addr.b, buf, sizeof buf))
                        continue;
                if (strv_contains(out, buf))
                        continue;
                r = strv_push(out, buf);
                if (r < 0)
                        return r;
        }
        return 0;
}

int steps_host_addresses(const struct inventory *inv, const char *machine_cidr, struct strv *out) {
        struct cidr net;
        const struct cidr *filter = NULL;
        int r;

        if (!inv || !out)
                return -EINVAL;
        if (machine_cidr && *machine_cidr && cidr_parse(machine_cidr, &net) == 0)
                filter = &net;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < inv->n_interfaces; i++) {
                        const struct inv_interface *ifc = &inv->interfaces[i];
                        r = push_addresses(pass == 0 ? &ifc->ipv4_addresses : &ifc->ipv6_addresses, filter, out);
                        if (r < 0)
                                return r;
                }
        return 0;
}
