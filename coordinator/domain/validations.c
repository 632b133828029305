/* Host and cluster validations (validations.h). Each check is one function
 * from facts to a result; the runners call them in validation_id order.
 * Messages name the numbers involved so an admin sees what to fix. */
#include "domain/validations.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "errmsg.h"
#include "units.h"

/* ---- addresses and networks -------------------------------------------- */

int ip_parse(const char *s, struct ip_addr *out) {
        if (!s || !out)
                return -EINVAL;
        memset(out, 0, sizeof *out);
        if (inet_pton(AF_INET, s, out->b) == 1) {
                out->family = AF_INET;
                return 0;
        }
        if (inet_pton(AF_INET6, s, out->b) == 1) {
                out->family = AF_INET6;
                return 0;
        }
        return -EINVAL;
}

int cidr_parse(const char *s, struct cidr *out) {
        char addr[INET6_ADDRSTRLEN];
        const char *slash, *p;
        unsigned prefix = 0, max;
        size_t len;

        if (!s || !out)
                return -EINVAL;
        slash = strchr(s, '/');
        if (!slash)
                return -EINVAL;
        len = (size_t) (slash - s);
        if (len == 0 || len >= sizeof addr)
                return -EINVAL;
        memcpy(addr, s, len);
        addr[len] = '\0';
        if (ip_parse(addr, &out->addr) < 0)
                return -EINVAL;
        max = out->addr.family == AF_INET ? 32 : 128;

        p = slash + 1;
        if (!isdigit((unsigned char) *p) || (p[0] == '0' && p[1] != '\0'))
                return -EINVAL;
        for (; *p; p++) {
                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
                prefix = prefix * 10 + (unsigned) (*p - '0');
                if (prefix > max)
                        return -EINVAL;
        }
        out->prefix = prefix;
        return 0;
}

static size_t addr_len(const struct ip_addr *a) {
        return a->family == AF_INET ? 4 : 16;
}

bool ip_equal(const struct ip_addr *a, const struct ip_addr *b) {
        return a->family == b->family && memcmp(a->b, b->b, addr_len(a)) == 0;
}

/* The first `prefix` bits of a and b are equal. */
static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned prefix) {
        unsigned whole = prefix / 8, rest = prefix % 8;

        if (memcmp(a, b, whole) != 0)
                return false;
        if (rest == 0)
                return true;
        uint8_t mask = (uint8_t) (0xffu << (8 - rest));
        return (a[whole] & mask) == (b[whole] & mask);
}

bool cidr_contains(const struct cidr *net, const struct ip_addr *a) {
        return net->addr.family == a->family && prefix_equal(net->addr.b, a->b, net->prefix);
}

static struct ip_addr network_of(const struct cidr *c) {
        struct ip_addr n = c->addr;
        size_t len = addr_len(&n);

        for (size_t i = 0; i < len; i++) {
                unsigned bit = (unsigned) i * 8;
                if (bit >= c->prefix)
                        n.b[i] = 0;
                else if (bit + 8 > c->prefix)
                        n.b[i] &= (uint8_t) (0xffu << (8 - (c->prefix - bit)));
        }
        return n;
}

static struct ip_addr broadcast_of(const struct cidr *c) {
        struct ip_addr n = c->addr;
        size_t len = addr_len(&n);

        for (size_t i = 0; i < len; i++) {
                unsigned bit = (unsigned) i * 8;
                if (bit >= c->prefix)
                        n.b[i] = 0xff;
                else if (bit + 8 > c->prefix)
                        n.b[i] |= (uint8_t) (0xffu >> (c->prefix - bit));
        }
        return n;
}

bool cidr_has_host_bits(const struct cidr *c) {
        struct ip_addr n = network_of(c);
        return !ip_equal(&n, &c->addr);
}

char *cidr_network_string(const struct cidr *c, char *buf, size_t n) {
        char a[INET6_ADDRSTRLEN];
        struct ip_addr net = network_of(c);
        int r;

        if (!inet_ntop(net.family, net.b, a, sizeof a))
                return NULL;
        r = snprintf(buf, n, "%s/%u", a, c->prefix);
        return r < 0 || (size_t) r >= n ? NULL : buf;
}

static const char *ip_string(const struct ip_addr *a, char buf[INET6_ADDRSTRLEN]) {
        return inet_ntop(a->family, a->b, buf, INET6_ADDRSTRLEN) ? buf : "?";
}

/* ---- names -------------------------------------------------------------- */

bool hostname_is_valid(const char *name, char *whybuf, size_t whylen) {
        static const char *const loopback[] = {
                "localhost", "localhost.localdomain", "localhost4", "localhost4.localdomain4",
                "localhost6", "localhost6.localdomain6",
        };

        if (name)
                for (size_t i = 0; i < sizeof loopback / sizeof *loopback; i++)
                        if (strcasecmp(name, loopback[i]) == 0) {
                                (void) errmsg(whybuf, whylen, 0, "'%s' is a loopback name", name);
                                return false;
                        }
        return dns_name_valid(name, "hostname", whybuf, whylen);
}

/* ---- result helpers ------------------------------------------------------ */

__attribute__((format(printf, 4, 0)))
static void vset(struct validation_result *r, enum validation_id id, enum validation_status st,
                 const char *fmt, va_list ap) {
        r->id = id;
        r->status = st;
        r->awaits_user = false;
        vsnprintf(r->message, sizeof r->message, fmt, ap);
}

static void set(struct validation_result *r, enum validation_id id, enum validation_status st,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void set(struct validation_result *r, enum validation_id id, enum validation_status st,
                const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vset(r, id, st, fmt, ap);
        va_end(ap);
}

/* Pending on a setting a user must give. */
static void set_user(struct validation_result *r, enum validation_id id, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void set_user(struct validation_result *r, enum validation_id id, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vset(r, id, VSTATUS_PENDING, fmt, ap);
        va_end(ap);
        r->awaits_user = true;
}

/* Append to the message; a message that does not fit ends in "...". */
static void append(struct validation_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(struct validation_result *r, const char *fmt, ...) {
        size_t len = strlen(r->message), room = sizeof r->message - len;
        va_list ap;
        int n;

        if (room <= 1)
                return;
        va_start(ap, fmt);
        n = vsnprintf(r->message + len, room, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t) n >= room)
                memcpy(r->message + sizeof r->message - 4, "...", 4);
}

static bool truncated(const struct validation_result *r) {
        size_t len = strlen(r->message);
        return len == sizeof r->message - 1 && strcmp(r->message + len - 3, "...") == 0;
}

static char *fmt_duration(int64_t s, char *buf, size_t n) {
        if (s >= 3600)
                snprintf(buf, n, "%" PRId64 "h%" PRId64 "m", s / 3600, s % 3600 / 60);
        else if (s >= 60 && s % 60)
                snprintf(buf, n, "%" PRId64 "m%" PRId64 "s", s / 60, s % 60);
        else if (s >= 60)
                snprintf(buf, n, "%" PRId64 "m", s / 60);
        else
                snprintf(buf, n, "%" PRId64 "s", s);
        return buf;
}

/* ---- host validations -------------------------------------------------- */

struct host_ctx {
        const struct host_facts *f;
        const struct muster_config *cfg;
        const struct inventory *inv; /* NULL if none usable */
        enum req_profile profile;    /* the host's role profile (ANY when unbound) */
        char role_label[48];         /* "worker", "master", "worker (auto role)", ... */
};

const char *host_facts_hostname(const struct host_facts *f) {
        if (f->requested_hostname && *f->requested_hostname)
                return f->requested_hostname;
        if (f->inventory && f->inventory->hostname)
                return f->inventory->hostname;
        return NULL;
}

static const char *profile_label(enum req_profile p, enum host_role role, char *buf, size_t n) {
        if (p == REQ_WORKER && role == ROLE_AUTO)
                snprintf(buf, n, "worker (auto role)");
        else
                snprintf(buf, n, "%s", req_profile_to_string(p));
        return buf;
}

/* Pending because there is no usable inventory; true if so. */
static bool need_inventory(const struct host_ctx *c, struct validation_result *r, enum validation_id id) {
        if (c->inv)
                return false;
        if (!c->f->has_inventory)
                set(r, id, VSTATUS_PENDING, "Waiting for the host's hardware inventory");
        else
                set(r, id, VSTATUS_PENDING, "Waiting for a usable inventory (the last one could not be parsed)");
        return true;
}

static void v_connected(const struct host_ctx *c, struct validation_result *r) {
        int64_t timeout = c->f->disconnect_timeout_s > 0 ? c->f->disconnect_timeout_s
                                                         : c->cfg->host_disconnect_timeout_s;
        char a[32], b[32];

        if (c->f->seconds_since_checkin < 0)
                set(r, VAL_CONNECTED, VSTATUS_FAILURE, "Host has never checked in");
        else if (c->f->seconds_since_checkin > timeout)
                set(r, VAL_CONNECTED, VSTATUS_FAILURE, "Host has not checked in for %s (disconnect timeout %s)",
                    fmt_duration(c->f->seconds_since_checkin, a, sizeof a), fmt_duration(timeout, b, sizeof b));
        else
                set(r, VAL_CONNECTED, VSTATUS_SUCCESS, "Host is connected");
}

static void v_has_inventory(const struct host_ctx *c, struct validation_result *r) {
        if (!c->f->has_inventory)
                set(r, VAL_HAS_INVENTORY, VSTATUS_PENDING, "Waiting for the host's hardware inventory");
        else if (!c->inv)
                set(r, VAL_HAS_INVENTORY, VSTATUS_ERROR, "The host's inventory could not be parsed");
        else
                set(r, VAL_HAS_INVENTORY, VSTATUS_SUCCESS, "Inventory received");
}

static void v_cpu(const struct host_ctx *c, struct validation_result *r, enum validation_id id,
                  enum req_profile p, const char *label) {
        int64_t have, need = c->cfg->req[p].cpu_cores;

        if (need_inventory(c, r, id))
                return;
        have = c->inv->cpu.count;
        if (have < 1)
                set(r, id, VSTATUS_ERROR, "The inventory does not report the number of CPU cores");
        else if (have < need)
                set(r, id, VSTATUS_FAILURE, "Insufficient CPU cores: %" PRId64 ", %" PRId64 " required for %s",
                    have, need, label);
        else
                set(r, id, VSTATUS_SUCCESS, "Sufficient CPU cores: %" PRId64 ", %" PRId64 " required for %s",
                    have, need, label);
}

/* Physical memory when known (what the requirements are written in), else
 * what the kernel can use. */
static int64_t host_memory(const struct inventory *inv) {
        return inv->memory.physical_bytes > 0 ? inv->memory.physical_bytes : inv->memory.usable_bytes;
}

static void v_memory(const struct host_ctx *c, struct validation_result *r, enum validation_id id,
                     enum req_profile p, const char *label) {
        int64_t have, need = c->cfg->req[p].memory_bytes;
        char a[32], b[32];

        if (need_inventory(c, r, id))
                return;
        have = host_memory(c->inv);
        if (have <= 0)
                set(r, id, VSTATUS_ERROR, "The inventory does not report the amount of memory");
        else if (have < need)
                set(r, id, VSTATUS_FAILURE, "Insufficient memory: %s, %s required for %s",
                    units_format_bytes(have, a, sizeof a), units_format_bytes(need, b, sizeof b), label);
        else
                set(r, id, VSTATUS_SUCCESS, "Sufficient memory: %s, %s required for %s",
                    units_format_bytes(have, a, sizeof a), units_format_bytes(need, b, sizeof b), label);
}

static bool disk_matches(const struct inv_disk *d, const char *id) {
        const char *const names[] = { d->id, d->by_id, d->by_path, d->path, d->name };
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
                if (names[i] && strcmp(names[i], id) == 0)
                        return true;
        return false;
}

static int find_disk(const struct inventory *inv, const char *id) {
        for (size_t i = 0; i < inv->n_disks; i++)
                if (disk_matches(&inv->disks[i], id))
                        return (int) i;
        return -ENOENT;
}

int validations_pick_install_disk(const struct inventory *inv, const char *disk_id, int64_t min_bytes) {
        if (!inv)
                return -EINVAL;
        if (disk_id && *disk_id) {
                int i = find_disk(inv, disk_id);
                if (i < 0 || !inv->disks[i].eligible || inv->disks[i].size_bytes < min_bytes)
                        return -ENOENT;
                return i;
        }
        for (size_t i = 0; i < inv->n_disks && i <= INT32_MAX; i++)
                if (inv->disks[i].eligible && inv->disks[i].size_bytes >= min_bytes)
                        return (int) i;
        return -ENOENT;
}

int validations_install_disk(const struct inventory *inv, const char *disk_id, bool bound, bool single_node,
                             enum host_role role, const struct muster_config *cfg) {
        if (!cfg)
                return -EINVAL;
        return validations_pick_install_disk(inv, disk_id,
                                             cfg->req[config_profile_for(bound, single_node, role)].disk_bytes);
}

const char *validations_install_disk_path(const struct inventory *inv, const char *disk_id, bool single_node,
                                          enum host_role role, const struct muster_config *cfg) {
        int i = inv ? validations_install_disk(inv, disk_id, true, single_node, role, cfg) : -ENOENT;
        if (i < 0)
                return NULL;
        const struct inv_disk *d = &inv->disks[i];
        /* A stable name when there is one (by-id, else by-path). */
        return d->id && d->id[0] == '/' ? d->id : d->path && d->path[0] == '/' ? d->path : NULL;
}

static const char *disk_label(const struct inv_disk *d) {
        return d->name ? d->name : d->path ? d->path : d->id ? d->id : "?";
}

static void append_reasons(struct validation_result *r, const struct inv_disk *d) {
        for (size_t k = 0; k < d->not_eligible_reasons.n; k++)
                append(r, "%s%s", k ? ", " : "", d->not_eligible_reasons.v[k]);
        if (d->not_eligible_reasons.n == 0)
                append(r, "not eligible");
}

static void v_disks(const struct host_ctx *c, struct validation_result *r) {
        const enum validation_id id = VAL_HAS_MIN_VALID_DISKS;
        int64_t need = c->cfg->req[c->profile].disk_bytes;
        const char *want = c->f->installation_disk_id;
        char a[32], b[32];
        int i;

        if (need_inventory(c, r, id))
                return;
        units_format_bytes(need, b, sizeof b);

        if (want && *want) {
                const struct inv_disk *d;
                i = find_disk(c->inv, want);
                if (i < 0) {
                        set(r, id, VSTATUS_FAILURE, "Installation disk %s is not among the host's disks", want);
                        return;
                }
                d = &c->inv->disks[i];
                if (!d->eligible) {
                        set(r, id, VSTATUS_FAILURE, "Installation disk %s is not eligible: ", disk_label(d));
                        append_reasons(r, d);
                } else if (d->size_bytes < need)
                        set(r, id, VSTATUS_FAILURE, "Installation disk %s is too small: %s, %s required for %s",
                            disk_label(d), units_format_bytes(d->size_bytes, a, sizeof a), b, c->role_label);
                else
                        set(r, id, VSTATUS_SUCCESS, "Installation disk %s (%s) is eligible, %s required for %s",
                            disk_label(d), units_format_bytes(d->size_bytes, a, sizeof a), b, c->role_label);
                return;
        }

        if (c->inv->n_disks == 0) {
                set(r, id, VSTATUS_FAILURE, "The host has no disks");
                return;
        }
        i = validations_pick_install_disk(c->inv, NULL, need);
        if (i >= 0) {
                const struct inv_disk *d = &c->inv->disks[i];
                set(r, id, VSTATUS_SUCCESS, "Disk %s (%s) is eligible for installation, %s required for %s",
                    disk_label(d), units_format_bytes(d->size_bytes, a, sizeof a), b, c->role_label);
                return;
        }
        set(r, id, VSTATUS_FAILURE, "No eligible disk of at least %s for %s:", b, c->role_label);
        for (size_t k = 0; k < c->inv->n_disks && !truncated(r); k++) {
                const struct inv_disk *d = &c->inv->disks[k];
                append(r, "%s %s ", k ? ";" : "", disk_label(d));
                if (d->eligible)
                        append(r, "is %s", units_format_bytes(d->size_bytes, a, sizeof a));
                else
                        append_reasons(r, d);
        }
}

/* The host's CPU architecture against its infra-env's (the ISO it booted is
 * for that one) and, when bound, its cluster's; "arm64" is "aarch64". */
static void v_cpu_architecture(const struct host_ctx *c, struct validation_result *r) {
        const enum validation_id id = VAL_CPU_ARCHITECTURE_MATCHES;
        if (need_inventory(c, r, id))
                return;
        const char *raw = c->inv->cpu.architecture, *have = cpu_arch_canonical(raw);
        if (!have) {
                set(r, id, VSTATUS_FAILURE, "The host reports %s CPU architecture", raw ? "an unknown" : "no");
                if (raw)
                        append(r, " (%s)", raw);
                return;
        }
        const char *ie = cpu_arch_canonical(c->f->infra_env_cpu_architecture);
        if (c->f->infra_env_cpu_architecture && (!ie || strcmp(ie, have) != 0)) {
                set(r, id, VSTATUS_FAILURE, "The host is %s; infra-env %s is for %s hosts", have,
                    c->f->infra_env_name ? c->f->infra_env_name : "?", c->f->infra_env_cpu_architecture);
                return;
        }
        if (c->f->bound) {
                const char *want = c->f->cluster.cpu_architecture ? c->f->cluster.cpu_architecture : "x86_64";
                const char *cl = cpu_arch_canonical(want);
                if (!cl || strcmp(cl, have) != 0) {
                        set(r, id, VSTATUS_FAILURE, "The host is %s; cluster %s is %s", have,
                            c->f->cluster.name ? c->f->cluster.name : "?", want);
                        return;
                }
                set(r, id, VSTATUS_SUCCESS, "CPU architecture %s, as the infra-env's and the cluster's", have);
                return;
        }
        set(r, id, VSTATUS_SUCCESS, "CPU architecture %s, as the infra-env's", have);
}

static void v_hostname_valid(const struct host_ctx *c, struct validation_result *r) {
        const char *name = host_facts_hostname(c->f);
        char whybuf[160];

        if (!name) {
                if (!need_inventory(c, r, VAL_HOSTNAME_VALID))
                        set(r, VAL_HOSTNAME_VALID, VSTATUS_FAILURE,
                            "The host reports no hostname; set one through DHCP/DNS or a requested hostname");
                return;
        }
        if (hostname_is_valid(name, whybuf, sizeof whybuf))
                set(r, VAL_HOSTNAME_VALID, VSTATUS_SUCCESS, "Hostname %s is valid", name);
        else
                set(r, VAL_HOSTNAME_VALID, VSTATUS_FAILURE, "Hostname '%.64s' is not valid: %s", name, whybuf);
}

static void v_hostname_unique(const struct host_ctx *c, struct validation_result *r) {
        const char *name = host_facts_hostname(c->f);
        size_t dups = 0;

        if (!name) {
                if (!need_inventory(c, r, VAL_HOSTNAME_UNIQUE))
                        set(r, VAL_HOSTNAME_UNIQUE, VSTATUS_PENDING, "Waiting for the host to report a hostname");
                return;
        }
        for (size_t i = 0; i < c->f->cluster.n_peers; i++) {
                const char *other = c->f->cluster.peers[i].hostname;
                if (other && strcasecmp(other, name) == 0)
                        dups++;
        }
        if (dups == 0)
                set(r, VAL_HOSTNAME_UNIQUE, VSTATUS_SUCCESS, "Hostname %.64s is unique in the cluster", name);
        else
                set(r, VAL_HOSTNAME_UNIQUE, VSTATUS_FAILURE,
                    "Hostname %.64s is also used by %zu other host%s of the cluster; set a requested hostname",
                    name, dups, dups == 1 ? "" : "s");
}

/* Calls fn for every address of the host (CIDR strings of the inventory);
 * stops when fn returns true and returns that interface's index, else -1. */
typedef bool (*addr_fn)(const struct ip_addr *a, const void *data);
static int for_each_address(const struct inventory *inv, addr_fn fn, const void *data, const char **found) {
        for (size_t i = 0; i < inv->n_interfaces; i++) {
                const struct inv_interface *ifc = &inv->interfaces[i];
                const struct strv *lists[] = { &ifc->ipv4_addresses, &ifc->ipv6_addresses };
                for (size_t l = 0; l < 2; l++)
                        for (size_t k = 0; k < lists[l]->n; k++) {
                                struct cidr cc;
                                if (cidr_parse(lists[l]->v[k], &cc) < 0 && ip_parse(lists[l]->v[k], &cc.addr) < 0)
                                        continue;
                                if (fn(&cc.addr, data)) {
                                        if (found)
                                                *found = lists[l]->v[k];
                                        return (int) i;
                                }
                        }
        }
        return -1;
}

static bool in_cidr(const struct ip_addr *a, const void *data) {
        return cidr_contains(data, a);
}

static bool is_addr(const struct ip_addr *a, const void *data) {
        return ip_equal(a, data);
}

static void v_machine_cidr(const struct host_ctx *c, struct validation_result *r) {
        const enum validation_id id = VAL_BELONGS_TO_MACHINE_CIDR;
        const char *s = c->f->cluster.machine_network_cidr, *addr = NULL;
        struct cidr net;
        int i;

        if (!s || !*s) {
                set_user(r, id, "The cluster's machine network CIDR is not set");
                return;
        }
        if (cidr_parse(s, &net) < 0) {
                set(r, id, VSTATUS_ERROR, "The cluster's machine network CIDR '%.64s' is not valid", s);
                return;
        }
        if (need_inventory(c, r, id))
                return;
        i = for_each_address(c->inv, in_cidr, &net, &addr);
        if (i >= 0) {
                set(r, id, VSTATUS_SUCCESS, "Address %s of %s is in the machine network %s", addr,
                    c->inv->interfaces[i].name ? c->inv->interfaces[i].name : "?", s);
                return;
        }
        set(r, id, VSTATUS_FAILURE, "No address of the host is in the machine network %s", s);
        bool first = true;
        for (size_t k = 0; k < c->inv->n_interfaces && !truncated(r); k++) {
                const struct inv_interface *ifc = &c->inv->interfaces[k];
                const struct strv *lists[] = { &ifc->ipv4_addresses, &ifc->ipv6_addresses };
                for (size_t l = 0; l < 2; l++)
                        for (size_t j = 0; j < lists[l]->n; j++) {
                                append(r, "%s%s", first ? " (host has " : ", ", lists[l]->v[j]);
                                first = false;
                        }
        }
        if (!first && !truncated(r))
                append(r, ")");
}

static const struct peer_connectivity *find_conn(const struct host_facts *f, const char *peer) {
        for (size_t i = 0; i < f->connectivity.n_peers; i++)
                if (f->connectivity.peers[i].peer_host_id && peer &&
                    strcmp(f->connectivity.peers[i].peer_host_id, peer) == 0)
                        return &f->connectivity.peers[i];
        return NULL;
}

/* A host belongs to the majority group when it reaches more than half of
 * the other bound hosts (with one other host: that host). Disabled for
 * single-node clusters and while the host is alone in its cluster. */
static void v_majority(const struct host_ctx *c, struct validation_result *r) {
        const enum validation_id id = VAL_BELONGS_TO_MAJORITY_GROUP;
        size_t n = c->f->cluster.n_peers, reached = 0, unknown = 0;

        if (c->f->cluster.single_node) {
                set(r, id, VSTATUS_DISABLED, "Not applicable to single-node clusters");
                return;
        }
        if (n == 0) {
                set(r, id, VSTATUS_DISABLED, "No other host is bound to the cluster yet");
                return;
        }
        if (!c->f->connectivity.present) {
                set(r, id, VSTATUS_PENDING, "Waiting for the connectivity check");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const struct peer_connectivity *p = find_conn(c->f, c->f->cluster.peers[i].host_id);
                if (!p)
                        unknown++;
                else if (p->reachable)
                        reached++;
        }
        if (reached * 2 > n) {
                set(r, id, VSTATUS_SUCCESS, "Reaches %zu of %zu other hosts", reached, n);
                return;
        }
        if ((reached + unknown) * 2 > n) {
                set(r, id, VSTATUS_PENDING, "Reaches %zu of %zu other hosts; %zu not checked yet", reached, n,
                    unknown);
                return;
        }
        set(r, id, VSTATUS_FAILURE, "Reaches only %zu of %zu other hosts, more than half are needed; cannot reach",
            reached, n);
        for (size_t i = 0, k = 0; i < n && !truncated(r); i++) {
                const struct host_peer *peer = &c->f->cluster.peers[i];
                const struct peer_connectivity *p = find_conn(c->f, peer->host_id);
                if (p && !p->reachable)
                        append(r, "%s %s", k++ ? "," : "", peer->hostname ? peer->hostname : peer->host_id);
        }
}

/* Whether the connectivity check has other bound hosts to judge r by; if
 * not, r says so (disabled without any, pending before the check). */
static bool peers_measured(const struct host_ctx *c, struct validation_result *r, enum validation_id id) {
        if (c->f->cluster.single_node || c->f->cluster.n_peers == 0) {
                set(r, id, VSTATUS_DISABLED, "No other host to measure against");
                return false;
        }
        if (!c->f->connectivity.present) {
                set(r, id, VSTATUS_PENDING, "Waiting for the connectivity check");
                return false;
        }
        return true;
}

/* sufficient-network-latency and sufficient-packet-loss: the connectivity
 * check's average round trip and loss to each other bound host it reached,
 * against [network] max_latency_ms and max_packet_loss_pct. Unreachable
 * hosts are belongs-to-majority-group's to judge. */
static void v_network(const struct host_ctx *c, struct validation_result *r, enum validation_id id) {
        bool latency = id == VAL_SUFFICIENT_NETWORK_LATENCY;
        double limit = (double) (latency ? c->cfg->network_max_latency_ms : c->cfg->network_max_packet_loss_pct);
        const char *unit = latency ? " ms" : "%";
        size_t n = c->f->cluster.n_peers, measured = 0, bad = 0;
        double worst = 0;

        if (!peers_measured(c, r, id))
                return;
        for (size_t i = 0; i < n; i++) {
                const struct peer_connectivity *p = find_conn(c->f, c->f->cluster.peers[i].host_id);
                double v = p ? (latency ? p->latency_ms : p->loss_pct) : NAN;
                if (!p || !p->reachable || isnan(v))
                        continue;
                measured++;
                worst = v > worst ? v : worst;
                bad += v > limit;
        }
        if (measured == 0) {
                set(r, id, VSTATUS_PENDING, "No other host measured yet");
                return;
        }
        if (bad == 0) {
                set(r, id, VSTATUS_SUCCESS, "%s to %zu other host(s) at most %.1f%s (limit %.0f%s)",
                    latency ? "Round trip" : "Packet loss", measured, worst, unit, limit, unit);
                return;
        }
        set(r, id, VSTATUS_FAILURE, "%s over %.0f%s to:", latency ? "Round trip" : "Packet loss", limit, unit);
        for (size_t i = 0, k = 0; i < n && !truncated(r); i++) {
                const struct host_peer *peer = &c->f->cluster.peers[i];
                const struct peer_connectivity *p = find_conn(c->f, peer->host_id);
                double v = p ? (latency ? p->latency_ms : p->loss_pct) : NAN;
                if (p && p->reachable && !isnan(v) && v > limit)
                        append(r, "%s %s (%.1f%s)", k++ ? "," : "", peer->hostname ? peer->hostname : peer->host_id, v,
                               unit);
        }
}

static void v_ntp(const struct host_ctx *c, struct validation_result *r) {
        const enum validation_id id = VAL_NTP_SYNCED;
        int64_t limit = c->cfg->ntp_max_offset_ms;
        double off;

        if (!c->f->ntp.present) {
                set(r, id, VSTATUS_PENDING, "Waiting for the clock check");
                return;
        }
        if (!c->f->ntp.synced) {
                /* The coordinator's whole-second Date is no NTP source: it is
                 * told as information, never passes the check. */
                set(r, id, VSTATUS_FAILURE, "No NTP source reachable (tried: ");
                for (size_t i = 0; i < c->f->ntp.n_tried; i++)
                        append(r, "%s%s", i ? ", " : "", c->f->ntp.tried[i]);
                append(r, "%s)", c->f->ntp.n_tried ? "" : "none; set ntp_sources on the infra-env");
                if (c->f->ntp.has_offset && !isnan(c->f->ntp.offset_ms))
                        append(r, "; for information, the clock differs from the coordinator's by %.0f ms",
                               c->f->ntp.offset_ms);
                return;
        }
        off = fabs(c->f->ntp.offset_ms);
        if (isnan(off) || off > (double) limit)
                set(r, id, VSTATUS_FAILURE, "Clock is off by %.0f ms, at most %" PRId64 " ms allowed; check the NTP sources",
                    c->f->ntp.offset_ms, limit);
        else
                set(r, id, VSTATUS_SUCCESS, "Clock is synchronized (offset %.0f ms, at most %" PRId64 " ms)",
                    c->f->ntp.offset_ms, limit);
}

/* Measuring writes to the disk, so it runs only once the installation
 * starts (preparing-for-installation); before that it is disabled. A result
 * is kept (for the disk it was measured on) until the host registers again,
 * so a host that failed it stays insufficient; the limit is the config's
 * now, so raising it is a fix too. */
static void v_disk_speed(const struct host_ctx *c, struct validation_result *r) {
        const enum validation_id id = VAL_SUFFICIENT_INSTALLATION_DISK_SPEED;
        const char *disk = c->f->disk_speed.disk ? c->f->disk_speed.disk : "the installation disk";
        int64_t limit = c->cfg->install_disk_fsync_ms;

        if (!c->f->disk_speed.present) {
                if (c->f->status == HOST_PREPARING_FOR_INSTALLATION)
                        set(r, id, VSTATUS_PENDING, "Waiting for the installation disk speed check");
                else
                        set(r, id, VSTATUS_DISABLED,
                            "Measured when the installation starts (the check writes to the disk)");
        } else if (c->f->disk_speed.failed)
                set(r, id, VSTATUS_ERROR, "The disk speed check on %.100s failed: %.120s", disk,
                    c->f->disk_speed.error ? c->f->disk_speed.error : "no reason given");
        else if (isnan(c->f->disk_speed.fsync_ms) || c->f->disk_speed.fsync_ms > (double) limit)
                set(r, id, VSTATUS_FAILURE,
                    "Disk %.100s is too slow: fdatasync p99 %.1f ms, at most %" PRId64 " ms allowed", disk,
                    c->f->disk_speed.fsync_ms, limit);
        else
                set(r, id, VSTATUS_SUCCESS,
                    "Disk %.100s is fast enough: fdatasync p99 %.1f ms, at most %" PRId64 " ms allowed", disk,
                    c->f->disk_speed.fsync_ms, limit);
}

const char *cluster_dns_prefix(enum cluster_dns_name n) {
        switch (n) {
        case DNS_NAME_API: return "api";
        case DNS_NAME_API_INT: return "api-int";
        case DNS_NAME_APPS: return "*.apps";
        case _DNS_NAME_MAX: break;
        }
        return NULL;
}

/* api.<cluster>.<domain> and api-int.<cluster>.<domain> must resolve to the
 * API VIP, *.apps.<cluster>.<domain> to the ingress VIP; on a single-node
 * cluster without that VIP, to an address of the host itself. api-int and
 * apps may be made optional ([dns]): then not resolving passes, resolving
 * to the wrong address still fails. */
static void v_dns(const struct host_ctx *c, struct validation_result *r, enum cluster_dns_name which) {
        static const enum validation_id ids[_DNS_NAME_MAX] = {
                [DNS_NAME_API] = VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY,
                [DNS_NAME_API_INT] = VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY,
                [DNS_NAME_APPS] = VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY,
        };
        const enum validation_id id = ids[which];
        const struct dns_fact *d = &c->f->dns[which];
        const char *name = c->f->cluster.name, *domain = c->f->cluster.base_dns_domain;
        bool apps = which == DNS_NAME_APPS;
        const char *vip = apps ? c->f->cluster.ingress_vip : c->f->cluster.api_vip;
        const char *vip_what = apps ? "the ingress VIP " : "the API VIP ";
        const char *optional_key = which == DNS_NAME_API_INT ? "require_api_int" : apps ? "require_apps" : NULL;
        bool required = which == DNS_NAME_API || (which == DNS_NAME_API_INT ? c->cfg->dns_require_api_int
                                                                            : c->cfg->dns_require_apps);
        struct ip_addr vip_addr;
        char fqdn[300];
        bool use_vip = vip && *vip;

        if (!name || !*name || !domain || !*domain) {
                set_user(r, id, "The cluster's %s is not set", !domain || !*domain ? "base DNS domain" : "name");
                return;
        }
        snprintf(fqdn, sizeof fqdn, "%s.%s.%s", cluster_dns_prefix(which), name, domain);
        if (use_vip && ip_parse(vip, &vip_addr) < 0) {
                set(r, id, VSTATUS_ERROR, "The cluster's %s VIP '%.64s' is not a valid address", apps ? "ingress" : "API",
                    vip);
                return;
        }
        if (!use_vip && !c->f->cluster.single_node) {
                set_user(r, id, "The cluster's %s VIP is not set", apps ? "ingress" : "API");
                return;
        }
        if (!d->present) {
                set(r, id, VSTATUS_PENDING, "Waiting for the resolution of %.200s", fqdn);
                return;
        }
        if (!use_vip && need_inventory(c, r, id))
                return;
        if (d->n_addresses == 0) {
                if (!required)
                        set(r, id, VSTATUS_SUCCESS, "%.200s does not resolve; not required ([dns] %s = false)", fqdn,
                            optional_key);
                else
                        set(r, id, VSTATUS_FAILURE, "%.200s does not resolve; it must point to %s%s", fqdn,
                            use_vip ? vip_what : "an address of this host", use_vip ? vip : "");
                if (d->error && !truncated(r))
                        append(r, " (%s)", d->error);
                return;
        }
        for (size_t i = 0; i < d->n_addresses; i++) {
                struct ip_addr a;
                if (!d->addresses[i] || ip_parse(d->addresses[i], &a) < 0)
                        continue;
                if (use_vip ? ip_equal(&a, &vip_addr) : for_each_address(c->inv, is_addr, &a, NULL) >= 0) {
                        set(r, id, VSTATUS_SUCCESS, "%.200s resolves to %s, %s", fqdn, d->addresses[i],
                            use_vip ? (apps ? "the ingress VIP" : "the API VIP") : "an address of this host");
                        return;
                }
        }
        set(r, id, VSTATUS_FAILURE, "%.200s resolves to", fqdn);
        for (size_t i = 0; i < d->n_addresses && !truncated(r); i++)
                append(r, "%s %s", i ? "," : "", d->addresses[i] ? d->addresses[i] : "?");
        append(r, " instead of %s%s", use_vip ? vip_what : "an address of this host", use_vip ? vip : "");
}

/* mtu-valid: the connectivity check's full-MTU probe to each other bound
 * host it reached; with [network] min_mtu, the MTU tried must be at least
 * that. Unreachable hosts are belongs-to-majority-group's to judge. */
static void v_mtu(const struct host_ctx *c, struct validation_result *r) {
        const enum validation_id id = VAL_MTU_VALID;
        int64_t min_mtu = c->cfg->network_min_mtu, smallest = 0;
        size_t n = c->f->cluster.n_peers, reached = 0, measured = 0, bad = 0;

        if (!c->cfg->network_mtu_check) {
                set(r, id, VSTATUS_DISABLED, "Not checked: [network] mtu_check = false");
                return;
        }
        if (!peers_measured(c, r, id))
                return;
        for (size_t i = 0; i < n; i++) {
                const struct peer_connectivity *p = find_conn(c->f, c->f->cluster.peers[i].host_id);
                if (!p || !p->reachable)
                        continue;
                reached++;
                if (p->mtu_result == PEER_MTU_UNKNOWN)
                        continue;
                measured++;
                if (smallest == 0 || p->mtu < smallest)
                        smallest = p->mtu;
                bad += p->mtu_result == PEER_MTU_FAILED || p->mtu < min_mtu;
        }
        if (reached == 0) {
                set(r, id, VSTATUS_PENDING, "No other host reached yet");
                return;
        }
        if (measured == 0) {
                /* Reached by TCP only, or an agent without the probe. */
                if (min_mtu > 0)
                        set(r, id, VSTATUS_FAILURE,
                            "The MTU could not be measured to any other host (the probe needs ICMP echo); "
                            "[network] min_mtu = %" PRId64 " requires it", min_mtu);
                else
                        set(r, id, VSTATUS_DISABLED,
                            "Could not be measured: no other host was probed with ICMP echo");
                return;
        }
        if (bad == 0) {
                set(r, id, VSTATUS_SUCCESS, "Full-size packets (MTU %" PRId64 ") reach %zu other host(s)", smallest,
                    measured);
                if (min_mtu > 0)
                        append(r, "; at least %" PRId64 " required", min_mtu);
                return;
        }
        set(r, id, VSTATUS_FAILURE, "Full-size packets do not reach:");
        for (size_t i = 0, k = 0; i < n && !truncated(r); i++) {
                const struct host_peer *peer = &c->f->cluster.peers[i];
                const struct peer_connectivity *p = find_conn(c->f, peer->host_id);
                const char *who = peer->hostname ? peer->hostname : peer->host_id;
                if (!p || !p->reachable || p->mtu_result == PEER_MTU_UNKNOWN)
                        continue;
                if (p->mtu_result == PEER_MTU_FAILED && p->path_mtu > 0)
                        append(r, "%s %s (MTU %" PRId64 " tried, path MTU %" PRId64 ")", k++ ? "," : "", who, p->mtu,
                               p->path_mtu);
                else if (p->mtu_result == PEER_MTU_FAILED)
                        append(r, "%s %s (MTU %" PRId64 " tried, no reply)", k++ ? "," : "", who, p->mtu);
                else if (p->mtu < min_mtu)
                        append(r, "%s %s (MTU %" PRId64 ", below [network] min_mtu %" PRId64 ")", k++ ? "," : "", who,
                               p->mtu, min_mtu);
        }
}

/* ---- host validations ignored by the config ------------------------------ */

/* [validations] ignore: the named validations are reported disabled, so they
 * neither block nor count (a lab without DNS, say). */
static void apply_ignored(const struct muster_config *cfg, struct validation_result *out, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (cfg->validations_ignored & (UINT64_C(1) << out[i].id))
                        set(&out[i], out[i].id, VSTATUS_DISABLED, "Ignored: listed in musterd's [validations] ignore");
}

int validations_host(const struct host_facts *f, const struct muster_config *cfg, struct validation_result *out) {
        struct host_ctx c = { .f = f, .cfg = cfg };
        char any_label[32];
        size_t n = 0;

        if (!f || !cfg || !out)
                return -EINVAL;
        c.inv = f->has_inventory ? f->inventory : NULL;
        c.profile = config_profile_for(f->bound, f->cluster.single_node, f->role);
        profile_label(c.profile, f->role, c.role_label, sizeof c.role_label);
        profile_label(REQ_ANY, f->role, any_label, sizeof any_label);

        memset(out, 0, VAL_HOST_COUNT * sizeof *out);
        v_connected(&c, &out[n++]);
        v_has_inventory(&c, &out[n++]);
        v_cpu(&c, &out[n++], VAL_HAS_MIN_CPU_CORES, REQ_ANY, any_label);
        v_memory(&c, &out[n++], VAL_HAS_MIN_MEMORY, REQ_ANY, any_label);
        v_disks(&c, &out[n++]);
        v_hostname_valid(&c, &out[n++]);
        v_cpu_architecture(&c, &out[n++]);
        if (!f->bound) {
                apply_ignored(cfg, out, n);
                return (int) n;
        }
        v_cpu(&c, &out[n++], VAL_HAS_CPU_CORES_FOR_ROLE, c.profile, c.role_label);
        v_memory(&c, &out[n++], VAL_HAS_MEMORY_FOR_ROLE, c.profile, c.role_label);
        v_hostname_unique(&c, &out[n++]);
        v_machine_cidr(&c, &out[n++]);
        v_majority(&c, &out[n++]);
        v_network(&c, &out[n++], VAL_SUFFICIENT_NETWORK_LATENCY);
        v_network(&c, &out[n++], VAL_SUFFICIENT_PACKET_LOSS);
        v_mtu(&c, &out[n++]);
        v_ntp(&c, &out[n++]);
        v_disk_speed(&c, &out[n++]);
        v_dns(&c, &out[n++], DNS_NAME_API);
        v_dns(&c, &out[n++], DNS_NAME_API_INT);
        v_dns(&c, &out[n++], DNS_NAME_APPS);
        apply_ignored(cfg, out, n);
        return (int) n;
}

/* ---- cluster validations ----------------------------------------------- */

static void c_machine_cidr(const struct cluster_facts *f, struct validation_result *r) {
        const enum validation_id id = VAL_MACHINE_CIDR_DEFINED;
        const char *s = f->machine_network_cidr;
        struct cidr net;
        char canon[INET6_ADDRSTRLEN + 8];

        if (!s || !*s)
                set(r, id, VSTATUS_FAILURE, "The machine network CIDR is not set");
        else if (cidr_parse(s, &net) < 0)
                set(r, id, VSTATUS_FAILURE, "The machine network CIDR '%.64s' is not valid (expected e.g. 192.0.2.0/24)", s);
        else if (cidr_has_host_bits(&net))
                set(r, id, VSTATUS_FAILURE, "The machine network CIDR %s has host bits set; did you mean %s?", s,
                    cidr_network_string(&net, canon, sizeof canon) ? canon : "?");
        else
                set(r, id, VSTATUS_SUCCESS, "The machine network CIDR is %s", s);
}

static void c_api_vips_defined(const struct cluster_facts *f, struct validation_result *r) {
        const enum validation_id id = VAL_API_VIPS_DEFINED;

        if (f->api_vip && *f->api_vip)
                set(r, id, VSTATUS_SUCCESS, "The API VIP is %.64s", f->api_vip);
        else if (f->single_node)
                set(r, id, VSTATUS_DISABLED, "Not needed: a single-node cluster serves its API on the host's address");
        else
                set(r, id, VSTATUS_FAILURE, "The API VIP is not set");
}

/* Which host, if any, has address a. */
static const struct cluster_host *host_with_address(const struct cluster_facts *f, const struct ip_addr *a) {
        for (size_t i = 0; i < f->n_hosts; i++)
                if (f->hosts[i].inventory && for_each_address(f->hosts[i].inventory, is_addr, a, NULL) >= 0)
                        return &f->hosts[i];
        return NULL;
}

static void c_vip_valid(const struct cluster_facts *f, struct validation_result *r, enum validation_id id,
                        const char *what, const char *vip, const char *other_what, const char *other) {
        const char *s = f->machine_network_cidr;
        struct ip_addr a, o;
        struct cidr net;
        char buf[INET6_ADDRSTRLEN];
        const struct cluster_host *h;

        if (!vip || !*vip) {
                if (f->single_node)
                        set(r, id, VSTATUS_DISABLED, "Not needed: a single-node cluster uses the host's address");
                else
                        set_user(r, id, "The %s is not set", what);
                return;
        }
        if (ip_parse(vip, &a) < 0) {
                set(r, id, VSTATUS_FAILURE, "The %s '%.64s' is not a valid IP address", what, vip);
                return;
        }
        if (!s || !*s || cidr_parse(s, &net) < 0) {
                set_user(r, id, "A valid machine network CIDR is needed to check the %s", what);
                return;
        }
        if (!cidr_contains(&net, &a)) {
                set(r, id, VSTATUS_FAILURE, "The %s %s is outside the machine network %s", what, vip, s);
                return;
        }
        struct ip_addr netaddr = network_of(&net), bcast = broadcast_of(&net);
        if (net.prefix < (a.family == AF_INET ? 31u : 127u)) {
                if (ip_equal(&a, &netaddr)) {
                        set(r, id, VSTATUS_FAILURE, "The %s %s is the network address of %s", what, vip, s);
                        return;
                }
                if (a.family == AF_INET && ip_equal(&a, &bcast)) {
                        set(r, id, VSTATUS_FAILURE, "The %s %s is the broadcast address of %s", what, vip, s);
                        return;
                }
        }
        if (other && *other && ip_parse(other, &o) == 0 && ip_equal(&a, &o)) {
                set(r, id, VSTATUS_FAILURE, "The %s and the %s must differ, both are %s", what, other_what, vip);
                return;
        }
        h = host_with_address(f, &a);
        if (h) {
                set(r, id, VSTATUS_FAILURE, "The %s %s is already an address of host %s", what,
                    ip_string(&a, buf), h->hostname ? h->hostname : h->host_id ? h->host_id : "?");
                return;
        }
        set(r, id, VSTATUS_SUCCESS, "The %s %s is in the machine network %s and no host uses it", what, vip, s);
}

static void c_dns_domain(const struct cluster_facts *f, struct validation_result *r) {
        const enum validation_id id = VAL_DNS_DOMAIN_DEFINED;
        const char *d = f->base_dns_domain;
        char whybuf[160];

        if (!d || !*d) {
                set(r, id, VSTATUS_FAILURE, "The base DNS domain is not set");
                return;
        }
        if (!dns_name_valid(d, "base DNS domain", whybuf, sizeof whybuf)) {
                set(r, id, VSTATUS_FAILURE, "The base DNS domain '%.64s' is not valid: %s", d, whybuf);
                return;
        }
        /* The longest name the cluster needs must still be a DNS name. */
        size_t longest = strlen("*.apps..") + (f->name ? strlen(f->name) : 0) + strlen(d);
        if (longest > 253) {
                set(r, id, VSTATUS_FAILURE, "*.apps.<cluster name>.%.64s would be %zu characters, at most 253 are allowed",
                    d, longest);
                return;
        }
        set(r, id, VSTATUS_SUCCESS, "The base DNS domain is %.200s", d);
}

/* OpenShift-style pull secret: a JSON object with an "auths" object. */
static void c_pull_secret(const struct cluster_facts *f, struct validation_result *r) {
        const enum validation_id id = VAL_PULL_SECRET_SET;
        json_object *o, *auths;
        json_tokener *tok;
        bool ok;

        if (!f->pull_secret || !*f->pull_secret) {
                set(r, id, VSTATUS_FAILURE, "The pull secret is not set");
                return;
        }
        tok = json_tokener_new();
        if (!tok) {
                set(r, id, VSTATUS_ERROR, "Out of memory while checking the pull secret");
                return;
        }
        o = json_tokener_parse_ex(tok, f->pull_secret, (int) strnlen(f->pull_secret, INT32_MAX));
        ok = o && json_tokener_get_error(tok) == json_tokener_success &&
             (size_t) json_tokener_get_parse_end(tok) == strlen(f->pull_secret) &&
             json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, "auths", &auths) &&
             json_object_is_type(auths, json_type_object);
        json_object_put(o);
        json_tokener_free(tok);
        if (ok)
                set(r, id, VSTATUS_SUCCESS, "The pull secret is set");
        else
                set(r, id, VSTATUS_FAILURE, "The pull secret is not valid: expected a JSON object with an \"auths\" object");
}

static bool meets(const struct inventory *inv, const struct role_requirements *req) {
        return inv && inv->cpu.count >= req->cpu_cores && host_memory(inv) >= req->memory_bytes;
}

#define FULL_MASTERS 3

static void c_masters(const struct cluster_facts *f, const struct muster_config *cfg, struct validation_result *r) {
        const enum validation_id id = VAL_SUFFICIENT_MASTERS_COUNT;
        size_t masters = 0, autos = 0, capable = 0;

        for (size_t i = 0; i < f->n_hosts; i++) {
                if (f->hosts[i].role == ROLE_MASTER)
                        masters++;
                else if (f->hosts[i].role == ROLE_AUTO) {
                        autos++;
                        capable += meets(f->hosts[i].inventory, &cfg->req[REQ_MASTER]);
                }
        }
        if (f->single_node) {
                if (f->n_hosts != 1)
                        set(r, id, VSTATUS_FAILURE, "A single-node cluster needs exactly 1 host, %zu %s bound",
                            f->n_hosts, f->n_hosts == 1 ? "is" : "are");
                else if (f->hosts[0].role == ROLE_WORKER)
                        set(r, id, VSTATUS_FAILURE, "The host of a single-node cluster must have role master or auto, not worker");
                else
                        set(r, id, VSTATUS_SUCCESS, "The single-node cluster has its 1 host");
                return;
        }
        if (masters > FULL_MASTERS)
                set(r, id, VSTATUS_FAILURE, "Exactly %d masters are needed, %zu hosts have role master", FULL_MASTERS,
                    masters);
        else if (masters + capable >= FULL_MASTERS)
                set(r, id, VSTATUS_SUCCESS,
                    "%d masters: %zu with role master, %zu from auto-role hosts that meet master requirements",
                    FULL_MASTERS, masters, (size_t) FULL_MASTERS - masters);
        else
                set(r, id, VSTATUS_FAILURE,
                    "%d masters are needed: %zu host%s role master and %zu of %zu auto-role hosts meet master requirements",
                    FULL_MASTERS, masters, masters == 1 ? " has" : "s have", capable, autos);
}

static bool host_ready(enum host_status s) {
        switch (s) {
        case HOST_KNOWN:
        case HOST_PREPARING_FOR_INSTALLATION:
        case HOST_INSTALLING:
        case HOST_INSTALLING_IN_PROGRESS:
        case HOST_INSTALLED:
                return true;
        default:
                return false;
        }
}

static void c_all_ready(const struct cluster_facts *f, struct validation_result *r) {
        const enum validation_id id = VAL_ALL_HOSTS_ARE_READY_TO_INSTALL;
        size_t not_ready = 0;

        if (f->n_hosts == 0) {
                set(r, id, VSTATUS_FAILURE, "No host is bound to the cluster");
                return;
        }
        for (size_t i = 0; i < f->n_hosts; i++)
                not_ready += !host_ready(f->hosts[i].status);
        if (not_ready == 0) {
                set(r, id, VSTATUS_SUCCESS, "All %zu hosts are ready to install", f->n_hosts);
                return;
        }
        set(r, id, VSTATUS_FAILURE, "%zu of %zu hosts %s not ready:", not_ready, f->n_hosts,
            not_ready == 1 ? "is" : "are");
        for (size_t i = 0, k = 0; i < f->n_hosts && !truncated(r); i++) {
                const struct cluster_host *h = &f->hosts[i];
                const char *st = host_status_to_string(h->status);
                if (host_ready(h->status))
                        continue;
                append(r, "%s %s (%s)", k++ ? "," : "", h->hostname ? h->hostname : h->host_id ? h->host_id : "?",
                       st ? st : "unknown state");
        }
}

static void c_capabilities(const struct cluster_facts *f, struct validation_result *r) {
        const enum validation_id id = VAL_CAPABILITIES_VALID;

        if (!f->release_version || !*f->release_version) {
                set(r, id, VSTATUS_FAILURE, "No release is chosen: Set release_version to an imported release");
                return;
        }
        if (!f->release_imported) {
                set(r, id, VSTATUS_FAILURE, "The release %.64s is not imported", f->release_version);
                return;
        }
        if (f->capabilities_error) {
                set(r, id, VSTATUS_FAILURE, "The capabilities do not fit release %.64s: %.160s", f->release_version,
                    f->capabilities_error);
                return;
        }
        set(r, id, VSTATUS_SUCCESS, "The capabilities fit release %.64s: %zu of %zu enabled", f->release_version,
            f->n_enabled_capabilities, f->n_known_capabilities);
}

static void c_operators(const struct cluster_facts *f, struct validation_result *r) {
        enum validation_id id = VAL_OPERATORS_RESOLVABLE;
        if (f->operators_error)
                set(r, id, VSTATUS_FAILURE, "The operators do not resolve (operator list shows it all): %s",
                    f->operators_error);
        else if (!f->operators_subscribed)
                set(r, id, VSTATUS_SUCCESS, "No operators are subscribed to");
        else
                set(r, id, VSTATUS_SUCCESS, "The operator subscriptions resolve: %zu bundles", f->n_operator_bundles);
}

int validations_cluster(const struct cluster_facts *f, const struct muster_config *cfg,
                        struct validation_result *out) {
        size_t n = 0;

        if (!f || !cfg || !out)
                return -EINVAL;
        memset(out, 0, VAL_CLUSTER_COUNT * sizeof *out);
        c_machine_cidr(f, &out[n++]);
        c_api_vips_defined(f, &out[n++]);
        c_vip_valid(f, &out[n++], VAL_API_VIPS_VALID, "API VIP", f->api_vip, "ingress VIP", f->ingress_vip);
        c_vip_valid(f, &out[n++], VAL_INGRESS_VIPS_VALID, "ingress VIP", f->ingress_vip, "API VIP", f->api_vip);
        c_dns_domain(f, &out[n++]);
        c_pull_secret(f, &out[n++]);
        c_masters(f, cfg, &out[n++]);
        c_all_ready(f, &out[n++]);
        c_capabilities(f, &out[n++]);
        c_operators(f, &out[n++]);
        apply_ignored(cfg, out, n);
        return (int) n;
}

/* ---- output ------------------------------------------------------------ */

json_object *validations_to_json(const struct validation_result *v, size_t n) {
        json_object *arr = json_object_new_array();

        if (!arr)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_new_object();
                const char *id = validation_id_to_string(v[i].id);
                const char *st = validation_status_to_string(v[i].status);
                if (!o || !id || !st ||
                    json_object_object_add(o, "id", json_object_new_string(id)) < 0 ||
                    json_object_object_add(o, "status", json_object_new_string(st)) < 0 ||
                    json_object_object_add(o, "message", json_object_new_string(v[i].message)) < 0 ||
                    json_object_array_add(arr, o) < 0) {
                        json_object_put(o);
                        json_object_put(arr);
                        return NULL;
                }
        }
        return arr;
}

const struct validation_result *validations_find(const struct validation_result *v, size_t n,
                                                 enum validation_id id) {
        for (size_t i = 0; i < n; i++)
                if (v[i].id == id)
                        return &v[i];
        return NULL;
}

/* Validations whose failure means a setting is missing, not a host. */
static bool is_setting(enum validation_id id) {
        return id == VAL_MACHINE_CIDR_DEFINED || id == VAL_API_VIPS_DEFINED || id == VAL_DNS_DOMAIN_DEFINED ||
               id == VAL_PULL_SECRET_SET || id == VAL_CAPABILITIES_VALID;
}

/* Whether a result before res[i] that goes into the status has this message. */
static bool said_before(const struct validation_result *res, size_t i, const char *message) {
        for (size_t k = 0; k < i; k++)
                if (res[k].status != VSTATUS_SUCCESS && res[k].status != VSTATUS_DISABLED &&
                    strcmp(res[k].message, message) == 0)
                        return true;
        return false;
}

enum cluster_status validations_cluster_status(const struct validation_result *res, size_t n, char *info,
                                               size_t infolen) {
        bool missing = false, failing = false;
        size_t len = 0;
        info[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                if (res[i].status == VSTATUS_SUCCESS || res[i].status == VSTATUS_DISABLED)
                        continue;
                if (is_setting(res[i].id))
                        missing = true;
                else
                        failing = true;
                /* Several validations wait on the same missing setting
                 * (api-vips-defined and api-vips-valid both on the API
                 * VIP): the status names each thing once. */
                if (said_before(res, i, res[i].message))
                        continue;
                if (len < infolen - 1)
                        len += (size_t) snprintf(info + len, infolen - len, "%s%s", len ? "; " : "", res[i].message);
        }
        if (missing)
                return CLUSTER_PENDING_FOR_INPUT;
        if (failing)
                return CLUSTER_INSUFFICIENT;
        snprintf(info, infolen, "Cluster is ready to install");
        return CLUSTER_READY;
}
