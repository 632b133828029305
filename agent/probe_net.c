/* Network probe: links, addresses and routes. On the running system they
 * come from rtnetlink (libnl-route-3), under a sysroot from /sys/class/net
 * and /proc/net (parsed by netparse.c). Both back-ends fill the same neutral
 * lists, then share the sysfs enrichment, the filters, the sort and the caps,
 * so a captured machine reads like a live one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/vlan.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "log.h"
#include "netparse.h"
#include "probe.h"

#define SUB "net"
#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP 0x10000 /* linux/if.h, which clashes with net/if.h */
#endif
/* Names kept for sorting before the cap; beyond this a hostile tree only
 * adds to the count. */
#define MAX_NAMES 65536
/* Largest /proc/net file read under a sysroot. */
#define PROC_MAX ((size_t) 16 << 20)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_sock *, nl_socket_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_cache *, nl_cache_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct rtnl_link *, rtnl_link_put)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_cb *, nl_cb_put)

/* What a back-end found out about a link besides the inventory fields. */
struct link_raw {
        int ifindex;            /* netlink index, 0 under a sysroot */
        char kind[32];          /* "bond", "vlan", "bridge", "veth", ... or "" */
        int arptype;            /* ARPHRD_*, -1 unknown */
        uint8_t mac[NP_MAC_MAX];
        size_t mac_len;
};

struct net_probe {
        const struct sysroot *sr;
        struct inventory *inv;
        struct link_raw *raw;   /* parallel to inv->interfaces */
        struct np_addr *addrs;
        size_t n_addrs;
        struct np_route *routes;
        size_t n_routes;
};

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int iface_cmp(const void *key, const void *elem) {
        return strcmp(key, ((const struct inv_interface *) elem)->name);
}

static struct inv_interface *find_iface(struct inventory *inv, const char *name) {
        if (!inv->n_interfaces)
                return NULL;
        return bsearch(name, inv->interfaces, inv->n_interfaces, sizeof *inv->interfaces,
                       iface_cmp);
}

/* Count a candidate name; keep it while there is room. "lo" is never part
 * of the inventory. */
static int names_add(struct strv *names, size_t *total, const char *name) {
        if (!np_ifname_valid(name) || strcmp(name, "lo") == 0)
                return 0;
        (*total)++;
        return names->n < MAX_NAMES ? strv_push(names, name) : 0;
}

/* One interface per name, sorted, capped. */
static int add_interfaces(struct net_probe *p, struct strv *names, size_t total) {
        struct inventory *inv = p->inv;

        if (names->n)
                qsort(names->v, names->n, sizeof *names->v, name_cmp);
        size_t keep = names->n < INV_MAX_INTERFACES ? names->n : INV_MAX_INTERFACES;
        if (total > keep)
                inv_trunc_note(&inv->truncated, "interfaces", (int64_t) total, (int64_t) keep);
        p->raw = calloc(keep ? keep : 1, sizeof *p->raw);
        if (!p->raw)
                return -ENOMEM;
        for (size_t i = 0; i < keep; i++)
                p->raw[i].arptype = -1;
        for (size_t i = 0; i < keep; i++) {
                if (i > 0 && strcmp(names->v[i], names->v[i - 1]) == 0)
                        continue;
                struct inv_interface *it = inv_array_append((void **) &inv->interfaces,
                                                            &inv->n_interfaces, sizeof *it);
                if (!it)
                        return -ENOMEM;
                inv_interface_init(it);
                if (!(it->name = strdup(names->v[i])))
                        return -ENOMEM;
        }
        return 0;
}

static int push_addr(struct net_probe *p, const struct np_addr *a) {
        struct np_addr *slot = inv_array_append((void **) &p->addrs, &p->n_addrs, sizeof *slot);
        if (!slot)
                return -ENOMEM;
        *slot = *a;
        return 0;
}

static int push_route(struct net_probe *p, const struct np_route *r) {
        struct np_route *slot = inv_array_append((void **) &p->routes, &p->n_routes, sizeof *slot);
        if (!slot)
                return -ENOMEM;
        *slot = *r;
        return 0;
}

/* ---- live back-end: rtnetlink ------------------------------------------ */

static int family_of(int af) {
        return af == AF_INET ? 4 : af == AF_INET6 ? 6 : 0;
}

/* Copy an nl_addr of the given family; false if it has another size. */
static bool nladdr_bytes(struct nl_addr *a, int af, uint8_t out[16]) {
        unsigned need = af == AF_INET ? 4 : 16;
        memset(out, 0, 16);
        if (!a)
                return false;
        if (nl_addr_get_family(a) != af || nl_addr_get_len(a) != need)
                return false;
        memcpy(out, nl_addr_get_binary_addr(a), need);
        return true;
}

static void live_links(struct net_probe *p, struct nl_cache *links) {
        for (size_t i = 0; i < p->inv->n_interfaces; i++) {
                struct inv_interface *it = &p->inv->interfaces[i];
                struct link_raw *raw = &p->raw[i];
                _cleanup_(rtnl_link_putp) struct rtnl_link *l =
                        rtnl_link_get_by_name(links, it->name);
                if (!l)
                        continue;
                raw->ifindex = rtnl_link_get_ifindex(l);
                raw->arptype = (int) rtnl_link_get_arptype(l);
                struct nl_addr *ll = rtnl_link_get_addr(l);
                if (ll && nl_addr_get_len(ll) > 0 && nl_addr_get_len(ll) <= NP_MAC_MAX) {
                        raw->mac_len = nl_addr_get_len(ll);
                        memcpy(raw->mac, nl_addr_get_binary_addr(ll), raw->mac_len);
                }
                unsigned mtu = rtnl_link_get_mtu(l);
                if (mtu > 0)
                        it->mtu = mtu;
                it->has_carrier = (rtnl_link_get_flags(l) & IFF_LOWER_UP) ? TRI_TRUE : TRI_FALSE;
                const char *kind = rtnl_link_get_type(l);
                if (kind)
                        snprintf(raw->kind, sizeof raw->kind, "%s", kind);
                if (rtnl_link_is_vlan(l)) {
                        int32_t nsid;
                        char parent[IFNAMSIZ];
                        it->vlan_id = rtnl_link_vlan_get_id(l);
                        /* A parent in another namespace has an index that
                         * means nothing here. */
                        if (rtnl_link_get_link_netnsid(l, &nsid) < 0 && rtnl_link_get_link(l) > 0 &&
                            rtnl_link_i2name(links, rtnl_link_get_link(l), parent, sizeof parent) &&
                            np_ifname_valid(parent))
                                it->vlan_parent = strdup(parent);
                }
        }
        /* Bond members: links whose master is a bond. */
        for (struct nl_object *o = nl_cache_get_first(links); o; o = nl_cache_get_next(o)) {
                struct rtnl_link *l = (struct rtnl_link *) o;
                int master = rtnl_link_get_master(l);
                const char *name = rtnl_link_get_name(l);
                char mname[IFNAMSIZ];
                if (master <= 0 || !np_ifname_valid(name) ||
                    !rtnl_link_i2name(links, master, mname, sizeof mname))
                        continue;
                struct inv_interface *m = find_iface(p->inv, mname);
                if (!m || strcmp(p->raw[m - p->inv->interfaces].kind, "bond") != 0)
                        continue;
                if (!strv_contains(&m->bond_members, name))
                        (void) strv_push(&m->bond_members, name);
        }
}

static int live_addrs(struct net_probe *p, struct nl_sock *sk, struct nl_cache *links) {
        _cleanup_(nl_cache_freep) struct nl_cache *cache = NULL;
        int r = rtnl_addr_alloc_cache(sk, &cache);
        if (r < 0)
                return log_debug_errno(EIO, SUB, "Cannot dump addresses: %s", nl_geterror(r));
        for (struct nl_object *o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
                struct rtnl_addr *ra = (struct rtnl_addr *) o;
                int af = rtnl_addr_get_family(ra);
                struct np_addr a = { .family = family_of(af) };
                int plen = rtnl_addr_get_prefixlen(ra);
                if (!a.family || !nladdr_bytes(rtnl_addr_get_local(ra), af, a.addr) || plen < 0 ||
                    plen > (a.family == 4 ? 32 : 128))
                        continue;
                a.plen = (unsigned) plen;
                if (!rtnl_link_i2name(links, rtnl_addr_get_ifindex(ra), a.ifname,
                                      sizeof a.ifname) ||
                    !np_ifname_valid(a.ifname))
                        continue;
                if ((r = push_addr(p, &a)) < 0)
                        return r;
        }
        return 0;
}

struct route_dump {
        struct net_probe *p;
        struct nl_cache *links;
        int af;
        int error;
};

static void route_add(struct route_dump *d, struct rtnl_route *rt) {
        int af = d->af;
        /* What `ip route` shows: the main table's unicast routes. */
        if (rtnl_route_get_family(rt) != af || rtnl_route_get_table(rt) != RT_TABLE_MAIN ||
            rtnl_route_get_type(rt) != RTN_UNICAST)
                return;
        struct np_route base = { .family = family_of(af), .metric = rtnl_route_get_priority(rt) };
        struct nl_addr *dst = rtnl_route_get_dst(rt);
        if (dst && nl_addr_get_len(dst) > 0 && !nladdr_bytes(dst, af, base.dst))
                return;
        base.dst_len = dst ? nl_addr_get_prefixlen(dst) : 0;
        if (base.dst_len > (af == AF_INET ? 32u : 128u))
                return;
        int nnh = rtnl_route_get_nnexthops(rt);
        for (int i = 0; i < nnh; i++) {
                struct rtnl_nexthop *nh = rtnl_route_nexthop_n(rt, i);
                struct np_route e = base;
                if (!nh)
                        continue;
                if (!rtnl_link_i2name(d->links, rtnl_route_nh_get_ifindex(nh), e.ifname,
                                      sizeof e.ifname))
                        e.ifname[0] = '\0';
                e.has_gateway = nladdr_bytes(rtnl_route_nh_get_gateway(nh), af, e.gw);
                if (np_route_wanted(&e) && push_route(d->p, &e) < 0)
                        d->error = -ENOMEM;
        }
}

static int route_msg(struct nl_msg *msg, void *arg) {
        struct route_dump *d = arg;
        struct rtnl_route *rt = NULL;
        if (rtnl_route_parse(nlmsg_hdr(msg), &rt) < 0 || !rt)
                return NL_SKIP;
        route_add(d, rt);
        rtnl_route_put(rt);
        return d->error ? NL_STOP : NL_OK;
}

/* A plain dump rather than a route cache: the cache keys routes without
 * their device, so the same prefix on two links would show only once. */
static int live_routes(struct net_probe *p, struct nl_sock *sk, struct nl_cache *links, int af) {
        _cleanup_(nl_cb_putp) struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
        struct route_dump d = { .p = p, .links = links, .af = af };
        struct rtmsg rtm = { .rtm_family = (unsigned char) af };
        int r;

        if (!cb)
                return -ENOMEM;
        nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, route_msg, &d);
        if ((r = nl_send_simple(sk, RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof rtm)) < 0 ||
            (r = nl_recvmsgs(sk, cb)) < 0)
                log_debug(SUB, "Cannot dump IPv%d routes: %s", family_of(af), nl_geterror(r));
        return d.error;
}

/* -ENOMEM, or another -errno when netlink is unusable (nothing was added
 * then, and the caller falls back to sysfs). */
static int probe_live(struct net_probe *p) {
        _cleanup_(nl_socket_freep) struct nl_sock *sk = nl_socket_alloc();
        _cleanup_(nl_cache_freep) struct nl_cache *links = NULL;
        struct strv names = {};
        size_t total = 0;
        int r;

        if (!sk)
                return -ENOMEM;
        if ((r = nl_connect(sk, NETLINK_ROUTE)) < 0)
                return log_debug_errno(EIO, SUB, "Cannot open rtnetlink: %s", nl_geterror(r));
        if ((r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &links)) < 0)
                return log_debug_errno(EIO, SUB, "Cannot dump links: %s", nl_geterror(r));

        for (struct nl_object *o = nl_cache_get_first(links); o; o = nl_cache_get_next(o))
                if ((r = names_add(&names, &total, rtnl_link_get_name((struct rtnl_link *) o))) < 0)
                        goto out;
        if ((r = add_interfaces(p, &names, total)) < 0)
                goto out;
        live_links(p, links);
        if ((r = live_addrs(p, sk, links)) == -ENOMEM)
                goto out;
        if ((r = live_routes(p, sk, links, AF_INET)) == -ENOMEM)
                goto out;
        if ((r = live_routes(p, sk, links, AF_INET6)) == -ENOMEM)
                goto out;
        r = 0;
out:
        strv_free(&names);
        return r;
}

/* ---- sysroot back-end: /sys/class/net and /proc/net --------------------- */

static char *read_proc(const struct sysroot *sr, const char *path) {
        char *text = sr_read_all(sr, path, PROC_MAX, NULL);
        if (!text)
                log_debug(SUB, "Cannot read %s: %m", path);
        return text;
}

static void sysfs_link(struct net_probe *p, size_t idx, const struct np_vlan *vlans,
                       size_t nvlans) {
        const struct sysroot *sr = p->sr;
        struct inv_interface *it = &p->inv->interfaces[idx];
        struct link_raw *raw = &p->raw[idx];
        char buf[256], carrier[16], oper[32];
        int64_t v;

        if (sr_read_i64f(sr, &v, "/sys/class/net/%s/type", it->name) == 0 && v >= 0 && v <= 0xffff)
                raw->arptype = (int) v;
        if (sr_read_strf(sr, buf, sizeof buf, "/sys/class/net/%s/address", it->name) > 0) {
                int n = np_parse_mac(buf, raw->mac, sizeof raw->mac);
                raw->mac_len = n > 0 ? (size_t) n : 0;
        }
        if (sr_read_i64f(sr, &v, "/sys/class/net/%s/mtu", it->name) == 0 && v > 0 && v <= INT32_MAX)
                it->mtu = v;
        bool have_carrier = sr_read_strf(sr, carrier, sizeof carrier, "/sys/class/net/%s/carrier",
                                         it->name) >= 0;
        bool have_oper = sr_read_strf(sr, oper, sizeof oper, "/sys/class/net/%s/operstate",
                                      it->name) >= 0;
        int c = np_carrier(have_carrier ? carrier : NULL, have_oper ? oper : NULL);
        it->has_carrier = c < 0 ? TRI_UNSET : c ? TRI_TRUE : TRI_FALSE;

        /* Kind: DEVTYPE of uevent, then the directories each kind owns. */
        if (sr_read_strf(sr, buf, sizeof buf, "/sys/class/net/%s/uevent", it->name) >= 0)
                np_uevent_get(buf, "DEVTYPE", raw->kind, sizeof raw->kind);
        snprintf(buf, sizeof buf, "/sys/class/net/%s/bonding", it->name);
        if (sr_exists(sr, buf))
                snprintf(raw->kind, sizeof raw->kind, "bond");
        snprintf(buf, sizeof buf, "/sys/class/net/%s/bridge", it->name);
        if (sr_exists(sr, buf))
                snprintf(raw->kind, sizeof raw->kind, "bridge");
        for (size_t i = 0; i < nvlans; i++)
                if (strcmp(vlans[i].ifname, it->name) == 0) {
                        snprintf(raw->kind, sizeof raw->kind, "vlan");
                        it->vlan_id = vlans[i].id;
                        free(it->vlan_parent);
                        it->vlan_parent = strdup(vlans[i].parent);
                }

        if (strcmp(raw->kind, "bond") == 0) {
                char slaves[4096];
                if (sr_read_strf(sr, slaves, sizeof slaves, "/sys/class/net/%s/bonding/slaves",
                                 it->name) > 0)
                        (void) np_parse_name_list(slaves, &it->bond_members);
        }
}

static int sysfs_addrs_routes(struct net_probe *p) {
        _cleanup_free_ char *route4 = read_proc(p->sr, "/proc/net/route");
        _cleanup_free_ char *route6 = read_proc(p->sr, "/proc/net/ipv6_route");
        _cleanup_free_ char *inet6 = read_proc(p->sr, "/proc/net/if_inet6");
        _cleanup_free_ char *trie = read_proc(p->sr, "/proc/net/fib_trie");
        _cleanup_free_ struct np_route *routes = NULL;
        _cleanup_free_ struct np_fib_entry *fib = NULL;
        size_t nroutes = 0, nfib = 0;
        int r;

        if ((r = np_parse_proc_route(route4, &routes, &nroutes)) < 0 ||
            (r = np_parse_ipv6_route(route6, &routes, &nroutes)) < 0 ||
            (r = np_parse_fib_trie(trie, &fib, &nfib)) < 0 ||
            (r = np_parse_if_inet6(inet6, &p->addrs, &p->n_addrs)) < 0 ||
            (r = np_ipv4_addrs(fib, nfib, routes, nroutes, &p->addrs, &p->n_addrs)) < 0)
                return r;
        for (size_t i = 0; i < nroutes; i++)
                if (np_route_wanted(&routes[i]) && (r = push_route(p, &routes[i])) < 0)
                        return r;
        return 0;
}

static int probe_sysfs(struct net_probe *p) {
        _cleanup_closedir_ DIR *d = sr_opendir(p->sr, "/sys/class/net");
        _cleanup_free_ char *vlantext = NULL;
        _cleanup_free_ struct np_vlan *vlans = NULL;
        struct strv names = {};
        size_t total = 0, nvlans = 0;
        int r = 0;

        if (!d)
                log_debug(SUB, "Cannot open /sys/class/net: %m");
        for (struct dirent *de; d && (de = readdir(d));) {
                char path[PATH_MAX];
                if (!np_ifname_valid(de->d_name))
                        continue;
                /* Entries are directories (links to them); bonding_masters is a file. */
                snprintf(path, sizeof path, "/sys/class/net/%s", de->d_name);
                int fd = sr_open(p->sr, path, O_PATH | O_DIRECTORY);
                if (fd < 0)
                        continue;
                close(fd);
                if ((r = names_add(&names, &total, de->d_name)) < 0)
                        goto out;
        }
        if ((r = add_interfaces(p, &names, total)) < 0)
                goto out;

        vlantext = sr_read_all(p->sr, "/proc/net/vlan/config", PROC_MAX, NULL);
        if ((r = np_parse_vlan_config(vlantext, &vlans, &nvlans)) < 0)
                goto out;
        for (size_t i = 0; i < p->inv->n_interfaces; i++)
                sysfs_link(p, i, vlans, nvlans);
        r = sysfs_addrs_routes(p);
out:
        strv_free(&names);
        return r;
}

/* ---- shared: sysfs enrichment, addresses, routes ------------------------ */

static int ethtool_fd(void) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        return fd;
}

/* The permanent address through ETHTOOL_GPERMADDR: its length (0 when the
 * device has none) or -errno. */
static int ethtool_perm_addr(int fd, const char *ifname, uint8_t *out, size_t size) {
        union {
                struct ethtool_perm_addr h;
                uint8_t raw[sizeof(struct ethtool_perm_addr) + NP_MAC_MAX];
        } u = { .h = { .cmd = ETHTOOL_GPERMADDR, .size = NP_MAC_MAX } };
        struct ifreq ifr = {};

        if (fd < 0)
                return -EBADF;
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
        ifr.ifr_data = (void *) &u;
        if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
                return -errno;
        if (u.h.size > NP_MAC_MAX || u.h.size > size)
                return -EINVAL;
        memcpy(out, u.h.data, u.h.size);
        for (size_t i = 0; i < u.h.size; i++)
                if (out[i])
                        return (int) u.h.size;
        return 0;
}

static bool printable(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s <= 0x20 || (unsigned char) *s >= 0x7f)
                        return false;
        return true;
}

/* Facts of the device behind a link: whether there is one on a bus (its
 * `subsystem` link resolves), its driver, and PCI ids (of the device, or of
 * the PCI function under a virtio device). */
static void sysfs_device(const struct sysroot *sr, struct inv_interface *it, bool *has_device) {
        char link[PATH_MAX], dev[PATH_MAX], path[PATH_MAX + 16], sub[64], buf[64], id[8];

        *has_device = false;
        snprintf(link, sizeof link, "/sys/class/net/%s/device", it->name);
        if (sr_resolve(sr, link, dev, sizeof dev) <= 0)
                return;
        snprintf(path, sizeof path, "%s/subsystem", dev);
        if (sr_readlink_base(sr, path, sub, sizeof sub) <= 0)
                return;
        *has_device = true;
        snprintf(path, sizeof path, "%s/driver", dev);
        if (sr_readlink_base(sr, path, buf, sizeof buf) > 0 && printable(buf))
                it->driver = strdup(buf);

        /* virtio-net sits on a virtio bus whose parent is the PCI function;
         * other buses (usb, platform) have no PCI ids of their own. */
        if (strcmp(sub, "virtio") == 0) {
                char *slash = strrchr(dev, '/');
                if (!slash || slash == dev)
                        return;
                *slash = '\0';
                snprintf(path, sizeof path, "%s/subsystem", dev);
                if (sr_readlink_base(sr, path, sub, sizeof sub) <= 0)
                        return;
        }
        if (strcmp(sub, "pci") != 0)
                return;
        snprintf(path, sizeof path, "%s/vendor", dev);
        if (sr_read_str(sr, path, buf, sizeof buf) > 0 && np_pci_id(buf, id, sizeof id))
                it->vendor = strdup(id);
        snprintf(path, sizeof path, "%s/device", dev);
        if (sr_read_str(sr, path, buf, sizeof buf) > 0 && np_pci_id(buf, id, sizeof id))
                it->product = strdup(id);
}

static void enrich(struct net_probe *p, bool live) {
        _cleanup_close_ int fd = live ? ethtool_fd() : -1;

        for (size_t i = 0; i < p->inv->n_interfaces; i++) {
                struct inv_interface *it = &p->inv->interfaces[i];
                struct link_raw *raw = &p->raw[i];
                const struct sysroot *sr = p->sr;
                bool sysfs_ok = true, has_device = false;
                uint8_t perm[NP_MAC_MAX];
                int perm_len = -1, assign = -1;
                char buf[128];
                int64_t v;

                /* A live sysfs mounted for another network namespace (nsenter
                 * without remount) describes other links: ignore it. */
                if (live && raw->ifindex > 0)
                        sysfs_ok = sr_read_i64f(sr, &v, "/sys/class/net/%s/ifindex",
                                                it->name) == 0 &&
                                   v == raw->ifindex;
                if (sysfs_ok) {
                        if (sr_read_strf(sr, buf, sizeof buf, "/sys/class/net/%s/speed",
                                         it->name) > 0 &&
                            (v = np_parse_speed(buf)) > 0)
                                it->speed_mbps = v;
                        sysfs_device(sr, it, &has_device);
                        if (sr_read_i64f(sr, &v, "/sys/class/net/%s/addr_assign_type",
                                         it->name) == 0)
                                assign = (int) v;
                }

                it->type = strdup(np_link_type(raw->kind, has_device));
                strv_sort(&it->bond_members);
                /* Only Ethernet-like links have a MAC; a tunnel's link-layer
                 * "address" is an IP address. */
                if (raw->arptype >= 0 && raw->arptype != ARPHRD_ETHER &&
                    raw->arptype != ARPHRD_INFINIBAND)
                        continue;

                /* Permanent MAC: ethtool on the live system, else what
                 * bonding saved for an enslaved port. */
                if (live)
                        perm_len = ethtool_perm_addr(fd, it->name, perm, sizeof perm);
                if (perm_len <= 0 && sysfs_ok &&
                    sr_read_strf(sr, buf, sizeof buf, "/sys/class/net/%s/bonding_slave/perm_hwaddr",
                                 it->name) > 0) {
                        int n = np_parse_mac(buf, perm, sizeof perm);
                        if (n > 0)
                                perm_len = n;
                }
                char mac[NP_MAC_MAX * 3];
                if (perm_len > 0 && np_format_mac(perm, (size_t) perm_len, mac, sizeof mac)) {
                        it->mac_address = strdup(mac);
                        it->mac_is_permanent = TRI_TRUE;
                } else if (np_format_mac(raw->mac, raw->mac_len, mac, sizeof mac)) {
                        it->mac_address = strdup(mac);
                        /* NET_ADDR_PERM: the current address is the device's own. */
                        if (assign == 0)
                                it->mac_is_permanent = TRI_TRUE;
                        else if (assign > 0 || perm_len == 0)
                                it->mac_is_permanent = TRI_FALSE;
                }
        }
}

static int place_addrs(struct net_probe *p) {
        if (p->n_addrs)
                qsort(p->addrs, p->n_addrs, sizeof *p->addrs, np_addr_cmp);
        for (size_t i = 0; i < p->n_addrs; i++) {
                const struct np_addr *a = &p->addrs[i];
                char cidr[64];
                if (i > 0 && np_addr_cmp(a, &p->addrs[i - 1]) == 0)
                        continue;
                if (strcmp(a->ifname, "lo") == 0 || (a->family == 6 && np_is_link_local6(a->addr)))
                        continue;
                struct inv_interface *it = find_iface(p->inv, a->ifname);
                if (!it)
                        continue;
                struct strv *list = a->family == 4 ? &it->ipv4_addresses : &it->ipv6_addresses;
                if (list->n >= INV_MAX_ADDRESSES ||
                    !np_format_cidr(a->family, a->addr, a->plen, cidr, sizeof cidr))
                        continue;
                int r = strv_push(list, cidr);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int place_routes(struct net_probe *p) {
        struct inventory *inv = p->inv;

        if (p->n_routes)
                qsort(p->routes, p->n_routes, sizeof *p->routes, np_route_cmp);
        size_t keep = p->n_routes < INV_MAX_ROUTES ? p->n_routes : INV_MAX_ROUTES;
        if (p->n_routes > keep)
                inv_trunc_note(&inv->truncated, "routes", (int64_t) p->n_routes, (int64_t) keep);
        for (size_t i = 0; i < keep; i++) {
                const struct np_route *r = &p->routes[i];
                char dst[64], gw[64];
                if (!np_format_cidr(r->family, r->dst, r->dst_len, dst, sizeof dst))
                        continue;
                struct inv_route *ro = inv_array_append((void **) &inv->routes, &inv->n_routes,
                                                        sizeof *ro);
                if (!ro)
                        return -ENOMEM;
                ro->family = r->family;
                ro->metric = r->metric;
                ro->destination = strdup(dst);
                if (r->has_gateway && np_format_addr(r->family, r->gw, gw, sizeof gw))
                        ro->gateway = strdup(gw);
                if (r->ifname[0])
                        ro->interface = strdup(r->ifname);
                if (!ro->destination)
                        return -ENOMEM;
        }
        return 0;
}

static void net_probe_reset(struct net_probe *p) {
        struct inventory *inv = p->inv;
        for (size_t i = 0; i < inv->n_interfaces; i++)
                inv_interface_free(&inv->interfaces[i]);
        free(inv->interfaces);
        inv->interfaces = NULL;
        inv->n_interfaces = 0;
        free(p->raw);
        free(p->addrs);
        free(p->routes);
        *p = (struct net_probe) { .sr = p->sr, .inv = inv };
}

int probe_net(const struct sysroot *sr, struct inventory *inv) {
        struct net_probe p = { .sr = sr, .inv = inv };
        bool live = sr->live;
        int r;

        if (live) {
                r = probe_live(&p);
                if (r < 0 && r != -ENOMEM) {
                        /* No rtnetlink (seccomp, odd kernels): read /sys and /proc. */
                        log_debug(SUB, "Falling back to sysfs and /proc/net");
                        net_probe_reset(&p);
                        live = false;
                        r = probe_sysfs(&p);
                }
        } else
                r = probe_sysfs(&p);
        if (r >= 0) {
                enrich(&p, live);
                if ((r = place_addrs(&p)) >= 0)
                        r = place_routes(&p);
        }
        free(p.raw);
        free(p.addrs);
        free(p.routes);
        return r < 0 ? r : 0;
}
