/* Unit tests of the network probe's pure parsers (agent/netparse.c). The
 * samples are /proc/net files captured on a Debian 12 VM (kernel 6.x): one
 * plain host with merged FIB tables, one network namespace with a policy
 * rule (unmerged tables), veths, a bridge and overlapping prefixes. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netparse.h"

/* ---- captured samples --------------------------------------------------- */

static const char host_route[] =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"
        "                                                       \n"
        "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0"
        "                                                                               \n"
        "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0"
        "                                                                               \n";

static const char host_ipv6_route[] =
        "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
        "fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000002 00000000 00000001     eth0\n"
        "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0\n"
        "00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n"
        "fd000000000000000000000000000002 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000003 00000000 80200001     eth0\n"
        "fe8000000000000000fc00fffe000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001     eth0\n"
        "ff000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000003 00000000 00000001     eth0\n"
        "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n";

static const char host_if_inet6[] =
        "fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n"
        "fd000000000000000000000000000002 04 40 00 82     eth0\n"
        "00000000000000000000000000000001 01 80 10 80       lo\n";

/* No policy rules: the kernel prints the merged table under both names. */
static const char host_fib_trie_half[] =
        "  +-- 0.0.0.0/0 3 0 5\n"
        "     |-- 0.0.0.0\n"
        "        /0 universe UNICAST\n"
        "     +-- 127.0.0.0/8 2 0 2\n"
        "        +-- 127.0.0.0/31 1 0 0\n"
        "           |-- 127.0.0.0\n"
        "              /8 host LOCAL\n"
        "           |-- 127.0.0.1\n"
        "              /32 host LOCAL\n"
        "        |-- 127.255.255.255\n"
        "           /32 link BROADCAST\n"
        "     +-- 192.0.2.0/24 2 0 2\n"
        "        +-- 192.0.2.0/30 2 0 2\n"
        "           |-- 192.0.2.0\n"
        "              /24 link UNICAST\n"
        "           |-- 192.0.2.2\n"
        "              /32 host LOCAL\n"
        "        |-- 192.0.2.255\n"
        "           /32 link BROADCAST\n";

static char *host_fib_trie(void) {
        char *s = NULL;
        cr_assert(asprintf(&s, "Main:\n%sLocal:\n%s", host_fib_trie_half, host_fib_trie_half) > 0);
        return s;
}

static const char ns_fib_trie[] =
        "Main:\n"
        "  +-- 0.0.0.0/0 3 0 6\n"
        "     +-- 0.0.0.0/4 2 0 2\n"
        "        |-- 0.0.0.0\n"
        "           /0 universe UNICAST\n"
        "        +-- 10.0.0.0/15 2 0 2\n"
        "           |-- 10.0.0.0\n"
        "              /8 universe UNREACHABLE\n"
        "              /8 link UNICAST\n"
        "           |-- 10.1.0.0\n"
        "              /16 link UNICAST\n"
        "     +-- 192.0.0.0/4 2 0 1\n"
        "        |-- 192.0.2.128\n"
        "           /25 universe UNICAST\n"
        "        |-- 198.51.100.0\n"
        "           /24 link UNICAST\n"
        "           /24 link UNICAST\n"
        "        |-- 203.0.113.0\n"
        "           /28 link UNICAST\n"
        "Local:\n"
        "  +-- 0.0.0.0/0 3 0 5\n"
        "     +-- 10.1.0.0/16 2 0 2\n"
        "        +-- 10.1.2.0/29 2 0 2\n"
        "           |-- 10.1.2.3\n"
        "              /32 host LOCAL\n"
        "           |-- 10.1.2.4\n"
        "              /32 host LOCAL\n"
        "        |-- 10.1.255.255\n"
        "           /32 link BROADCAST\n"
        "     +-- 127.0.0.0/8 2 0 2\n"
        "        +-- 127.0.0.0/31 1 0 0\n"
        "           |-- 127.0.0.0\n"
        "              /8 host LOCAL\n"
        "           |-- 127.0.0.1\n"
        "              /32 host LOCAL\n"
        "        |-- 127.255.255.255\n"
        "           /32 link BROADCAST\n"
        "     +-- 192.0.0.0/4 2 0 2\n"
        "        +-- 198.51.100.0/24 2 0 2\n"
        "           +-- 198.51.100.0/30 2 0 2\n"
        "              |-- 198.51.100.1\n"
        "                 /32 host LOCAL\n"
        "              |-- 198.51.100.2\n"
        "                 /32 host LOCAL\n"
        "           |-- 198.51.100.255\n"
        "              /32 link BROADCAST\n"
        "              /32 link BROADCAST\n"
        "        +-- 203.0.113.0/28 2 0 2\n"
        "           |-- 203.0.113.5\n"
        "              /32 host LOCAL\n"
        "           |-- 203.0.113.15\n"
        "              /32 link BROADCAST\n";

static const char ns_route[] =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        "vA\t00000000\t026433C6\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
        "*\t0000000A\t00000000\t0201\t0\t0\t0\t000000FF\t0\t0\t0\n"
        "vF\t0000000A\t00000000\t0001\t0\t0\t7\t000000FF\t0\t0\t0\n"
        "vE\t0000010A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"
        "vA\t800200C0\t026433C6\t0003\t0\t0\t50\t80FFFFFF\t0\t0\t0\n"
        "vA\t006433C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
        "vB\t006433C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
        "br0\t007100CB\t00000000\t0001\t0\t0\t0\tF0FFFFFF\t0\t0\t0\n";

static const char ns_ipv6_route[] =
        "20010db8000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000002 00000000 00000001       vA\n"
        "20010db8000100000000000000000000 30 00000000000000000000000000000000 00 20010db8000000000000000000000002 0000012c 00000001 00000000 00000003       vA\n"
        "fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001       vB\n"
        "fe800000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001       vA\n"
        "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n"
        "ff000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000003 00000000 00000001       vA\n";

/* Format of net/8021q/vlanproc.c: "%-15s| %d  | %s\n" after two header lines. */
static const char vlan_config[] =
        "VLAN Dev name\t | VLAN ID\n"
        "Name-Type: VLAN_NAME_TYPE_RAW_PLUS_VID_NO_PAD\n"
        "eth0.42        | 42  | eth0\n"
        "bond0.4094     | 4094  | bond0\n"
        "abcdefghijklmno| 7  | eno1\n";

/* ---- helpers ------------------------------------------------------------ */

static void route_str(const struct np_route *r, char *buf, size_t size) {
        char dst[64], gw[64] = "-";
        cr_assert(np_format_cidr(r->family, r->dst, r->dst_len, dst, sizeof dst));
        if (r->has_gateway)
                cr_assert(np_format_addr(r->family, r->gw, gw, sizeof gw));
        snprintf(buf, size, "%s via %s dev %s metric %u", dst, gw, r->ifname, r->metric);
}

static void addr_str(const struct np_addr *a, char *buf, size_t size) {
        char cidr[64];
        cr_assert(np_format_cidr(a->family, a->addr, a->plen, cidr, sizeof cidr));
        snprintf(buf, size, "%s %s", a->ifname, cidr);
}

/* Every prefix of `text` (truncated files) and every single-byte change to a
 * hostile character must parse without fault; run under ASan. */
static void torture(const char *text, void (*parse)(const char *)) {
        size_t len = strlen(text);
        char *buf = malloc(len + 1);
        cr_assert(buf);
        for (size_t cut = 0; cut <= len; cut++) {
                memcpy(buf, text, cut);
                buf[cut] = '\0';
                parse(buf);
        }
        static const char junk[] = { '\n', ' ', '|', '/', ':', 'f', '0', '\x01', '\xff', '-' };
        for (size_t i = 0; i < len; i += 3) {
                memcpy(buf, text, len + 1);
                buf[i] = junk[i % sizeof junk];
                parse(buf);
        }
        free(buf);
}

static void parse_all(const char *text) {
        struct np_route *routes = NULL;
        struct np_addr *addrs = NULL;
        struct np_fib_entry *fib = NULL;
        struct np_vlan *vlans = NULL;
        size_t nr = 0, na = 0, nf = 0, nv = 0;
        struct strv names = {};
        char buf[64];
        uint8_t mac[NP_MAC_MAX];

        cr_assert_geq(np_parse_proc_route(text, &routes, &nr), 0);
        cr_assert_geq(np_parse_ipv6_route(text, &routes, &nr), 0);
        cr_assert_geq(np_parse_if_inet6(text, &addrs, &na), 0);
        cr_assert_geq(np_parse_fib_trie(text, &fib, &nf), 0);
        cr_assert_geq(np_parse_vlan_config(text, &vlans, &nv), 0);
        cr_assert_geq(np_ipv4_addrs(fib, nf, routes, nr, &addrs, &na), 0);
        cr_assert_geq(np_parse_name_list(text, &names), 0);
        for (size_t i = 0; i < nr; i++) {
                char s[256];
                (void) np_route_wanted(&routes[i]);
                route_str(&routes[i], s, sizeof s);
        }
        for (size_t i = 0; i < na; i++) {
                char s[256];
                addr_str(&addrs[i], s, sizeof s);
                cr_assert(np_ifname_valid(addrs[i].ifname));
        }
        if (nr)
                qsort(routes, nr, sizeof *routes, np_route_cmp);
        if (na)
                qsort(addrs, na, sizeof *addrs, np_addr_cmp);
        (void) np_uevent_get(text, "DEVTYPE", buf, sizeof buf);
        (void) np_parse_mac(text, mac, sizeof mac);
        (void) np_parse_speed(text);
        (void) np_pci_id(text, buf, sizeof buf);
        (void) np_carrier(text, text);
        strv_free(&names);
        free(routes);
        free(addrs);
        free(fib);
        free(vlans);
}

/* ---- /proc/net/route ---------------------------------------------------- */

Test(netparse, proc_route_host) {
        struct np_route *r = NULL;
        size_t n = 0;
        char s[256];

        cr_assert_eq(np_parse_proc_route(host_route, &r, &n), 2);
        cr_assert_eq(n, 2);
        route_str(&r[0], s, sizeof s);
        cr_assert_str_eq(s, "0.0.0.0/0 via 192.0.2.1 dev eth0 metric 0");
        cr_assert_eq(r[0].family, 4);
        cr_assert(r[0].flags & NP_RTF_GATEWAY);
        route_str(&r[1], s, sizeof s);
        cr_assert_str_eq(s, "192.0.2.0/24 via - dev eth0 metric 0");
        cr_assert(np_route_wanted(&r[0]) && np_route_wanted(&r[1]));
        free(r);
}

Test(netparse, proc_route_namespace) {
        struct np_route *r = NULL;
        size_t n = 0;
        char s[256];

        cr_assert_eq(np_parse_proc_route(ns_route, &r, &n), 8);
        route_str(&r[1], s, sizeof s);
        cr_assert_str_eq(s, "10.0.0.0/8 via - dev  metric 0");
        cr_assert_not(np_route_wanted(&r[1]), "unreachable route has no device");
        route_str(&r[2], s, sizeof s);
        cr_assert_str_eq(s, "10.0.0.0/8 via - dev vF metric 7");
        route_str(&r[4], s, sizeof s);
        cr_assert_str_eq(s, "192.0.2.128/25 via 198.51.100.2 dev vA metric 50");
        route_str(&r[7], s, sizeof s);
        cr_assert_str_eq(s, "203.0.113.0/28 via - dev br0 metric 0");
        free(r);
}

Test(netparse, proc_route_edge_values) {
        static const char text[] =
                "eth0\t00000000\t00000000\t0001\t0\t0\t-1\t00000000\t0\t0\t0\n"      /* metric 2^32-1 */
                "eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FF00FF\t0\t0\t0\n"      /* holey mask */
                "eth0\tZZZZZZZZ\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n"      /* bad hex */
                "eth0\t0000000A\t00000000\t0001\t0\t0\tx\t000000FF\t0\t0\t0\n"      /* bad metric */
                "eth0/x\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n"    /* bad name */
                "eth1\t0102000A\t00000000\t0001\t0\t0\t5\t0000FFFF\t0\t0\t0\n"      /* host bits */
                "eth0\t00000000\n";                                                  /* truncated */
        struct np_route *r = NULL;
        size_t n = 0;
        char s[256];

        cr_assert_eq(np_parse_proc_route(text, &r, &n), 2);
        cr_assert_eq(r[0].metric, UINT32_MAX);
        route_str(&r[1], s, sizeof s);
        cr_assert_str_eq(s, "10.0.0.0/16 via - dev eth1 metric 5");
        free(r);
}

/* ---- /proc/net/ipv6_route ----------------------------------------------- */

Test(netparse, ipv6_route_host) {
        struct np_route *r = NULL;
        size_t n = 0;
        char s[256];
        const char *want[] = {
                "fd00::/64 via - dev eth0 metric 256",
                "fe80::/64 via - dev eth0 metric 256",
                "::/0 via fd00::1 dev eth0 metric 1024",
        };
        size_t k = 0;

        cr_assert_eq(np_parse_ipv6_route(host_ipv6_route, &r, &n), 8);
        for (size_t i = 0; i < n; i++) {
                if (!np_route_wanted(&r[i]))
                        continue;
                cr_assert_lt(k, 3);
                route_str(&r[i], s, sizeof s);
                cr_assert_str_eq(s, want[k]);
                k++;
        }
        cr_assert_eq(k, 3, "local, loopback and multicast routes are dropped");
        free(r);
}

Test(netparse, ipv6_route_garbage_lines) {
        static const char text[] =
                "fd00000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n"
                "fd000000000000000000000000000000 81 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n"
                "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001\n"
                "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0 extra\n"
                "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n";
        struct np_route *r = NULL;
        size_t n = 0;

        cr_assert_eq(np_parse_ipv6_route(text, &r, &n), 1);
        cr_assert_eq(r[0].dst_len, 64);
        free(r);
}

/* ---- /proc/net/if_inet6 ------------------------------------------------- */

Test(netparse, if_inet6) {
        struct np_addr *a = NULL;
        size_t n = 0;
        char s[128];

        cr_assert_eq(np_parse_if_inet6(host_if_inet6, &a, &n), 3);
        addr_str(&a[0], s, sizeof s);
        cr_assert_str_eq(s, "eth0 fe80::fc:ff:fe00:1/64");
        cr_assert(np_is_link_local6(a[0].addr));
        addr_str(&a[1], s, sizeof s);
        cr_assert_str_eq(s, "eth0 fd00::2/64");
        cr_assert_not(np_is_link_local6(a[1].addr));
        addr_str(&a[2], s, sizeof s);
        cr_assert_str_eq(s, "lo ::1/128");
        free(a);
}

Test(netparse, if_inet6_bad_lines) {
        static const char text[] =
                "fd000000000000000000000000000002 04 81 00 82     eth0\n"   /* prefix > 128 */
                "fd000000000000000000000000000002 04 40 00 82\n"            /* no name */
                "fd00000000000000000000000000000g 04 40 00 82     eth0\n"   /* bad hex */
                "fd000000000000000000000000000002 100 40 00 82   eth1\n";   /* 3-digit index is fine */
        struct np_addr *a = NULL;
        size_t n = 0;

        cr_assert_eq(np_parse_if_inet6(text, &a, &n), 1);
        cr_assert_str_eq(a[0].ifname, "eth1");
        free(a);
}

/* ---- /proc/net/fib_trie and IPv4 addresses ------------------------------ */

Test(netparse, fib_trie_entries) {
        char *text = host_fib_trie();
        struct np_fib_entry *f = NULL;
        size_t n = 0;

        cr_assert_eq(np_parse_fib_trie(text, &f, &n), 14);
        cr_assert_eq(f[0].table, NP_FIB_MAIN);
        cr_assert_eq(f[0].plen, 0);
        cr_assert_str_eq(f[0].scope, "universe");
        cr_assert_str_eq(f[0].type, "UNICAST");
        cr_assert_eq(f[5].table, NP_FIB_MAIN);
        cr_assert_eq(f[5].plen, 32);
        cr_assert_str_eq(f[5].type, "LOCAL");
        cr_assert_eq(memcmp(f[5].addr, (uint8_t[]) { 192, 0, 2, 2 }, 4), 0);
        cr_assert_eq(f[7].table, NP_FIB_LOCAL);
        free(f);
        free(text);
}

Test(netparse, ipv4_addrs_merged_tables) {
        char *text = host_fib_trie();
        struct np_fib_entry *f = NULL;
        struct np_route *r = NULL;
        struct np_addr *a = NULL;
        size_t nf = 0, nr = 0, na = 0;
        char s[128];

        cr_assert_geq(np_parse_fib_trie(text, &f, &nf), 0);
        cr_assert_geq(np_parse_proc_route(host_route, &r, &nr), 0);
        cr_assert_eq(np_ipv4_addrs(f, nf, r, nr, &a, &na), 1, "127.0.0.1 is left out, 192.0.2.2 once");
        addr_str(&a[0], s, sizeof s);
        cr_assert_str_eq(s, "eth0 192.0.2.2/24");
        free(a);
        free(r);
        free(f);
        free(text);
}

Test(netparse, ipv4_addrs_unmerged_tables) {
        struct np_fib_entry *f = NULL;
        struct np_route *r = NULL;
        struct np_addr *a = NULL;
        size_t nf = 0, nr = 0, na = 0;
        char s[128];

        cr_assert_geq(np_parse_fib_trie(ns_fib_trie, &f, &nf), 0);
        cr_assert_geq(np_parse_proc_route(ns_route, &r, &nr), 0);
        cr_assert_eq(np_ipv4_addrs(f, nf, r, nr, &a, &na), 5);
        qsort(a, na, sizeof *a, np_addr_cmp);
        /* 10.1.2.3 sits in both 10.0.0.0/8 (vF) and 10.1.0.0/16 (vE): the
         * longer prefix wins. */
        const char *want[] = { "vE 10.1.2.3/16", "vE 10.1.2.4/16", "vA 198.51.100.1/24",
                               "vA 198.51.100.2/24", "br0 203.0.113.5/28" };
        for (size_t i = 0; i < na; i++) {
                addr_str(&a[i], s, sizeof s);
                cr_assert_str_eq(s, want[i]);
        }
        free(a);
        free(r);
        free(f);
}

Test(netparse, ipv4_addrs_without_route_are_dropped) {
        static const char trie[] =
                "Main:\n"
                "  +-- 0.0.0.0/0 3 0 5\n"
                "     |-- 10.9.0.0\n"
                "        /16 link UNICAST\n"
                "Local:\n"
                "  +-- 0.0.0.0/0 3 0 5\n"
                "     |-- 10.9.0.1\n"
                "        /32 host LOCAL\n"
                "     |-- 172.16.0.1\n"
                "        /32 host LOCAL\n";
        struct np_fib_entry *f = NULL;
        struct np_addr *a = NULL;
        size_t nf = 0, na = 0;

        cr_assert_eq(np_parse_fib_trie(trie, &f, &nf), 3);
        cr_assert_eq(np_ipv4_addrs(f, nf, NULL, 0, &a, &na), 0);
        free(f);
        free(a);
}

Test(netparse, fib_trie_leaf_reset) {
        /* A prefix line with no valid leaf above it must not reuse the last
         * address. */
        static const char trie[] =
                "Local:\n"
                "     |-- 10.0.0.1\n"
                "        /32 host LOCAL\n"
                "     |-- 10.0.0.999\n"
                "        /32 host LOCAL\n"
                "  +-- 10.0.0.0/8 1 0 0\n"
                "        /32 host LOCAL\n"
                "     |-- 10.0.0.2\n"
                "        /33 host LOCAL\n"
                "        /x host LOCAL\n"
                "        /32 host\n"
                "        /32 host LOCALLOCALLOCALLOCAL\n";
        struct np_fib_entry *f = NULL;
        size_t n = 0;

        cr_assert_eq(np_parse_fib_trie(trie, &f, &n), 1);
        cr_assert_eq(f[0].table, NP_FIB_LOCAL);
        free(f);
}

/* ---- /proc/net/vlan/config ---------------------------------------------- */

Test(netparse, vlan_config) {
        struct np_vlan *v = NULL;
        size_t n = 0;

        cr_assert_eq(np_parse_vlan_config(vlan_config, &v, &n), 3);
        cr_assert_str_eq(v[0].ifname, "eth0.42");
        cr_assert_eq(v[0].id, 42);
        cr_assert_str_eq(v[0].parent, "eth0");
        cr_assert_eq(v[1].id, 4094);
        cr_assert_str_eq(v[1].parent, "bond0");
        cr_assert_str_eq(v[2].ifname, "abcdefghijklmno");
        free(v);
}

Test(netparse, vlan_config_bad) {
        static const char text[] =
                "eth0.5000      | 5000  | eth0\n"
                "eth0.x         | x  | eth0\n"
                "eth0.-1        | -1  | eth0\n"
                "eth0.1         | 1  | \n"
                "               | 1  | eth0\n"
                "eth0.1 | 1 | eth0 | more\n"
                "abcdefghijklmnop| 7  | eno1\n";
        struct np_vlan *v = NULL;
        size_t n = 0;

        cr_assert_eq(np_parse_vlan_config(text, &v, &n), 0);
        cr_assert_eq(n, 0);
        free(v);
}

/* ---- small helpers ------------------------------------------------------ */

Test(netparse, mac) {
        uint8_t m[NP_MAC_MAX];
        char s[NP_MAC_MAX * 3];

        cr_assert_eq(np_parse_mac("02:FC:00:00:00:01", m, sizeof m), 6);
        cr_assert(np_format_mac(m, 6, s, sizeof s));
        cr_assert_str_eq(s, "02:fc:00:00:00:01");
        cr_assert_eq(np_parse_mac("00:00:00:00:00:00", m, sizeof m), 6);
        cr_assert_not(np_format_mac(m, 6, s, sizeof s), "all-zero is no address");
        cr_assert_not(np_format_mac(m, 0, s, sizeof s));
        cr_assert_eq(np_parse_mac("", m, sizeof m), -EINVAL);
        cr_assert_eq(np_parse_mac("02:fc:0", m, sizeof m), -EINVAL);
        cr_assert_eq(np_parse_mac("02:fc:", m, sizeof m), -EINVAL);
        cr_assert_eq(np_parse_mac("02-fc-00-00-00-01", m, sizeof m), -EINVAL);
        cr_assert_eq(np_parse_mac("02:fc:00:00:00:01", m, 4), -EINVAL, "does not fit");
        /* InfiniBand: 20 bytes. */
        cr_assert_eq(np_parse_mac("80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:bc:de", m,
                                  sizeof m), 20);
        cr_assert_not(np_format_mac(m, 20, s, 20), "buffer too small");
}

Test(netparse, cidr) {
        char s[64];
        uint8_t v4[4] = { 198, 51, 100, 7 }, v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };

        cr_assert(np_format_cidr(4, v4, 24, s, sizeof s));
        cr_assert_str_eq(s, "198.51.100.7/24");
        cr_assert(np_format_cidr(6, v6, 64, s, sizeof s));
        cr_assert_str_eq(s, "2001:db8::/64");
        cr_assert_not(np_format_cidr(4, v4, 33, s, sizeof s));
        cr_assert_not(np_format_cidr(6, v6, 129, s, sizeof s));
        cr_assert_not(np_format_cidr(5, v6, 1, s, sizeof s));
        cr_assert_not(np_format_cidr(4, v4, 24, s, 8), "buffer too small");
        uint8_t ll[16] = { 0xfe, 0xbf }, ula[16] = { 0xfe, 0xc0 };
        cr_assert(np_is_link_local6(ll));
        cr_assert_not(np_is_link_local6(ula));
}

Test(netparse, link_type) {
        cr_assert_str_eq(np_link_type("bond", false), "bond");
        cr_assert_str_eq(np_link_type("vlan", true), "vlan");
        cr_assert_str_eq(np_link_type("bridge", false), "bridge");
        cr_assert_str_eq(np_link_type(NULL, true), "physical");
        cr_assert_str_eq(np_link_type("", true), "physical");
        cr_assert_str_eq(np_link_type("wlan", true), "physical");
        cr_assert_str_eq(np_link_type("veth", false), "virtual");
        cr_assert_str_eq(np_link_type(NULL, false), "virtual");
        cr_assert_str_eq(np_link_type("bonding", false), "virtual");
}

Test(netparse, speed_carrier) {
        cr_assert_eq(np_parse_speed("10000"), 10000);
        cr_assert_eq(np_parse_speed(" 1000\n"), 1000);
        cr_assert_eq(np_parse_speed("-1"), -1);
        cr_assert_eq(np_parse_speed("0"), -1);
        cr_assert_eq(np_parse_speed("4294967295"), -1);
        cr_assert_eq(np_parse_speed("fast"), -1);
        cr_assert_eq(np_parse_speed(""), -1);
        cr_assert_eq(np_parse_speed(NULL), -1);

        cr_assert_eq(np_carrier("1", "up"), 1);
        cr_assert_eq(np_carrier("0", "up"), 0);
        cr_assert_eq(np_carrier(NULL, "down"), 0);
        cr_assert_eq(np_carrier(NULL, "up"), 1);
        cr_assert_eq(np_carrier("garbage", "lowerlayerdown"), 0);
        cr_assert_eq(np_carrier(NULL, "unknown"), -1);
        cr_assert_eq(np_carrier(NULL, NULL), -1);
}

Test(netparse, uevent_names_pci) {
        char buf[32];
        struct strv names = {};

        cr_assert(np_uevent_get("DEVTYPE=vlan\nINTERFACE=eth0.42\nIFINDEX=5\n", "DEVTYPE", buf, sizeof buf));
        cr_assert_str_eq(buf, "vlan");
        cr_assert(np_uevent_get("INTERFACE=eth0\nIFINDEX=4", "IFINDEX", buf, sizeof buf));
        cr_assert_str_eq(buf, "4");
        cr_assert_not(np_uevent_get("XDEVTYPE=bond\nDEVTYPEX=bond\n", "DEVTYPE", buf, sizeof buf));
        cr_assert_not(np_uevent_get("DEVTYPE=0123456789012345678901234567890123456789", "DEVTYPE",
                                    buf, sizeof buf));

        cr_assert_eq(np_parse_name_list("eno1 eno2\n", &names), 2);
        cr_assert_eq(np_parse_name_list("  bad/name ok0 waytoolongname0123 \t", &names), 1);
        cr_assert_eq(names.n, 3);
        cr_assert_str_eq(names.v[2], "ok0");
        strv_free(&names);

        cr_assert(np_pci_id("0x8086\n", buf, sizeof buf));
        cr_assert_str_eq(buf, "0x8086");
        cr_assert(np_pci_id("0x1AF4", buf, sizeof buf));
        cr_assert_str_eq(buf, "0x1af4");
        cr_assert_not(np_pci_id("0x80861", buf, sizeof buf));
        cr_assert_not(np_pci_id("8086", buf, sizeof buf));
        cr_assert_not(np_pci_id("0x80", buf, sizeof buf));
        cr_assert_not(np_pci_id("0x8086", buf, 4));
}

Test(netparse, ifname) {
        char out[NP_IFNAMSIZ];
        cr_assert(np_ifname_valid("eth0"));
        cr_assert(np_ifname_valid("abcdefghijklmno"));
        cr_assert_not(np_ifname_valid("abcdefghijklmnop"));
        cr_assert_not(np_ifname_valid(""));
        cr_assert_not(np_ifname_valid("."));
        cr_assert_not(np_ifname_valid(".."));
        cr_assert_not(np_ifname_valid("a/b"));
        cr_assert_not(np_ifname_valid("a:1"));
        cr_assert_not(np_ifname_valid("a b"));
        cr_assert_not(np_ifname_valid("\xc3\xa9th0"));
        cr_assert_not(np_ifname_valid(NULL));
        cr_assert(np_ifname_copy(out, "eth0xyz", 4));
        cr_assert_str_eq(out, "eth0");
        cr_assert_not(np_ifname_copy(out, "et\0h", 4), "embedded NUL");
}

Test(netparse, route_order) {
        struct np_route *r = NULL;
        size_t n = 0;
        char s[256];

        cr_assert_geq(np_parse_proc_route(ns_route, &r, &n), 0);
        cr_assert_geq(np_parse_ipv6_route(ns_ipv6_route, &r, &n), 0);
        qsort(r, n, sizeof *r, np_route_cmp);
        const char *want[] = {
                "0.0.0.0/0 via 198.51.100.2 dev vA metric 100",
                "10.0.0.0/8 via - dev  metric 0",
                "10.0.0.0/8 via - dev vF metric 7",
                "10.1.0.0/16 via - dev vE metric 0",
                "192.0.2.128/25 via 198.51.100.2 dev vA metric 50",
                "198.51.100.0/24 via - dev vA metric 0",
                "198.51.100.0/24 via - dev vB metric 0",
                "203.0.113.0/28 via - dev br0 metric 0",
                "::/0 via - dev lo metric 4294967295",
                "2001:db8::/64 via - dev vA metric 256",
                "2001:db8:1::/48 via 2001:db8::2 dev vA metric 300",
                "fe80::/64 via - dev vA metric 256",
                "fe80::/64 via - dev vB metric 256",
                "ff00::/8 via - dev vA metric 256",
        };
        cr_assert_eq(n, sizeof want / sizeof *want);
        for (size_t i = 0; i < n; i++) {
                route_str(&r[i], s, sizeof s);
                cr_assert_str_eq(s, want[i], "route %zu", i);
        }
        free(r);
}

/* ---- hostile input ------------------------------------------------------ */

Test(netparse, null_and_empty) {
        parse_all("");
        struct np_route *r = NULL;
        size_t n = 0;
        cr_assert_eq(np_parse_proc_route(NULL, &r, &n), 0);
        cr_assert_eq(np_parse_ipv6_route(NULL, &r, &n), 0);
        cr_assert_eq(np_parse_vlan_config(NULL, NULL, &n), 0);
        cr_assert_eq(n, 0);
        cr_assert_null(r);
}

Test(netparse, truncated_and_mutated_samples) {
        char *trie = host_fib_trie();
        const char *samples[] = { host_route, host_ipv6_route, host_if_inet6, trie,
                                  ns_fib_trie, ns_route, ns_ipv6_route, vlan_config };
        for (size_t i = 0; i < sizeof samples / sizeof *samples; i++)
                torture(samples[i], parse_all);
        free(trie);
}

Test(netparse, random_junk_and_long_lines) {
        size_t len = 1 << 16;
        char *buf = malloc(len + 1);
        uint32_t x = 2463534242u;
        cr_assert(buf);
        for (int round = 0; round < 8; round++) {
                for (size_t i = 0; i < len; i++) {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        /* Mostly characters that matter to the parsers. */
                        static const char alphabet[] = "0123456789abcdefABCDEF:/|.- \t\n+LOCAL";
                        buf[i] = round & 1 ? (char) (x & 0xff ? x & 0xff : 1)
                                           : alphabet[x % (sizeof alphabet - 1)];
                }
                buf[len] = '\0';
                parse_all(buf);
        }
        /* One line far longer than any line buffer, then a good one. */
        memset(buf, 'f', len);
        buf[len - 60] = '\n';
        strcpy(buf + len - 59, "fd000000000000000000000000000002 04 40 00 82     eth0\n");
        struct np_addr *a = NULL;
        size_t n = 0;
        cr_assert_eq(np_parse_if_inet6(buf, &a, &n), 1);
        free(a);
        free(buf);
}
