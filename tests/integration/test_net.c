/* Integration tests of the network probe through the real muster-agent:
 * the live host against iproute2, a network namespace built here (veth,
 * bridge, addresses, routes), and captured sysroot trees, clean and
 * garbled (bonds and VLANs among them). Live bonds, VLANs and dummy links
 * are made under the ISO's kernel: e2e/test_iso_qemu. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */


static json_object *find_iface(json_object *inv, const char *name) {
        json_object *a = tu_json_get(inv, "interfaces");
        cr_assert(a && json_object_is_type(a, json_type_array), "no interfaces array");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                json_object *nm = tu_json_get(e, "name");
                if (nm && strcmp(json_object_get_string(nm), name) == 0)
                        return e;
        }
        return NULL;
}

static json_object *must_iface(json_object *inv, const char *name) {
        json_object *e = find_iface(inv, name);
        cr_assert(e, "interface %s missing from the inventory", name);
        return e;
}

static const char *jstr(json_object *o, const char *key) {
        json_object *v = tu_json_get(o, key);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int64_t jint(json_object *o, const char *key) {
        json_object *v = tu_json_get(o, key);
        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -12345;
}

/* -1 absent, else the boolean. */
static int jbool(json_object *o, const char *key) {
        json_object *v = tu_json_get(o, key);
        return v && json_object_is_type(v, json_type_boolean) ? json_object_get_boolean(v) : -1;
}

static void expect_str(json_object *o, const char *key, const char *want) {
        const char *got = jstr(o, key);
        if (!want) {
                cr_expect_null(got, "%s: %s should be absent, is %s", jstr(o, "name"), key, got);
                return;
        }
        cr_expect(got && strcmp(got, want) == 0, "%s: %s is %s, want %s", jstr(o, "name"), key,
                  got ? got : "(absent)", want);
}

/* The array `key` holds exactly `want` (NULL-terminated), in order. */
static void expect_list(json_object *o, const char *key, const char *const *want) {
        json_object *a = tu_json_get(o, key);
        size_t n = 0;
        while (want[n])
                n++;
        cr_assert(a && json_object_is_type(a, json_type_array), "%s: %s is not an array",
                  jstr(o, "name"), key);
        cr_expect_eq(json_object_array_length(a), n, "%s: %s has %zu entries, want %zu: %s",
                     jstr(o, "name"), key, json_object_array_length(a), n,
                     json_object_to_json_string(a));
        for (size_t i = 0; i < n && i < json_object_array_length(a); i++)
                cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(a, i)), want[i],
                                 "%s: %s[%zu]", jstr(o, "name"), key, i);
}

/* Whether `routes` holds a route with these fields (gw NULL: none). */
static bool has_route(json_object *inv, int family, const char *dst, const char *gw, const char *dev,
                      int64_t metric) {
        json_object *a = tu_json_get(inv, "routes");
        cr_assert(a && json_object_is_type(a, json_type_array), "no routes array");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *r = json_object_array_get_idx(a, i);
                const char *g = jstr(r, "gateway"), *d = jstr(r, "interface");
                if (jint(r, "family") == family && strcmp(jstr(r, "destination"), dst) == 0 &&
                    ((!gw && !g) || (gw && g && strcmp(gw, g) == 0)) && d && strcmp(d, dev) == 0 &&
                    jint(r, "metric") == metric)
                        return true;
        }
        return false;
}

static void expect_route(json_object *inv, int family, const char *dst, const char *gw,
                         const char *dev, int64_t metric) {
        cr_expect(has_route(inv, family, dst, gw, dev, metric),
                  "route %s via %s dev %s metric %lld missing: %s", dst, gw ? gw : "-", dev,
                  (long long) metric, json_object_to_json_string(tu_json_get(inv, "routes")));
}

/* Interfaces sorted by name, routes by family, no "lo" anywhere. */
static void expect_order_and_no_lo(json_object *inv) {
        json_object *a = tu_json_get(inv, "interfaces");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                const char *nm = jstr(json_object_array_get_idx(a, i), "name");
                cr_expect_str_neq(nm, "lo");
                if (i > 0)
                        cr_expect_lt(strcmp(jstr(json_object_array_get_idx(a, i - 1), "name"), nm), 0,
                                     "interfaces not sorted at %s", nm);
        }
        a = tu_json_get(inv, "routes");
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *r = json_object_array_get_idx(a, i);
                const char *d = jstr(r, "interface");
                cr_expect(!d || strcmp(d, "lo") != 0, "route on lo: %s", json_object_to_json_string(r));
                if (i > 0)
                        cr_expect_leq(jint(json_object_array_get_idx(a, i - 1), "family"),
                                      jint(r, "family"), "routes not sorted by family");
        }
}

static bool is_link_local6(const char *addr) {
        struct in6_addr a;
        return inet_pton(AF_INET6, addr, &a) == 1 && a.s6_addr[0] == 0xfe &&
               (a.s6_addr[1] & 0xc0) == 0x80;
}

/* ---- (a) the live host against iproute2 --------------------------------- */

Test(net, live_matches_iproute2, .timeout = 120) {
        int status;
        json_object *inv = tu_agent_inventory(NULL, &status);
        char *links_text = NULL, *addrs_text = NULL;

        cr_assert(inv, "agent printed no JSON");
        cr_assert_eq(status, 0);
        cr_assert_eq(tu_runf(&links_text, NULL, "ip -j link show"), 0);
        cr_assert_eq(tu_runf(&addrs_text, NULL, "ip -j addr show"), 0);
        json_object *links = json_tokener_parse(links_text);
        json_object *addrs = json_tokener_parse(addrs_text);
        cr_assert(links && addrs, "ip -j gave no JSON");
        expect_order_and_no_lo(inv);

        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i);
                const char *name = jstr(l, "ifname");
                if (strcmp(name, "lo") == 0) {
                        cr_expect_null(find_iface(inv, "lo"));
                        continue;
                }
                json_object *it = must_iface(inv, name);
                cr_expect_eq(jint(it, "mtu"), jint(l, "mtu"), "%s: mtu", name);
                const char *lt = jstr(l, "link_type");
                if (lt && (strcmp(lt, "ether") == 0 || strcmp(lt, "infiniband") == 0)) {
                        const char *want = jstr(l, "permaddr") ? jstr(l, "permaddr") : jstr(l, "address");
                        expect_str(it, "mac_address", want);
                } else
                        expect_str(it, "mac_address", NULL);
        }
        for (size_t i = 0; i < json_object_array_length(addrs); i++) {
                json_object *l = json_object_array_get_idx(addrs, i);
                const char *name = jstr(l, "ifname");
                if (strcmp(name, "lo") == 0)
                        continue;
                json_object *it = must_iface(inv, name);
                json_object *ai = tu_json_get(l, "addr_info");
                size_t want4 = 0, want6 = 0;
                for (size_t k = 0; ai && k < json_object_array_length(ai); k++) {
                        json_object *a = json_object_array_get_idx(ai, k);
                        const char *fam = jstr(a, "family"), *local = jstr(a, "local");
                        char cidr[128];
                        bool v6 = strcmp(fam, "inet6") == 0;
                        if (!v6 && strcmp(fam, "inet") != 0)
                                continue;
                        if (v6 && is_link_local6(local))
                                continue;
                        snprintf(cidr, sizeof cidr, "%s/%lld", local, (long long) jint(a, "prefixlen"));
                        json_object *list = tu_json_get(it, v6 ? "ipv6_addresses" : "ipv4_addresses");
                        bool found = false;
                        for (size_t j = 0; list && j < json_object_array_length(list); j++)
                                found |= strcmp(json_object_get_string(json_object_array_get_idx(list, j)),
                                                cidr) == 0;
                        cr_expect(found, "%s: address %s missing", name, cidr);
                        *(v6 ? &want6 : &want4) += 1;
                }
                json_object *l4 = tu_json_get(it, "ipv4_addresses"), *l6 = tu_json_get(it, "ipv6_addresses");
                cr_expect_eq(l4 ? json_object_array_length(l4) : 0, want4, "%s: IPv4 count", name);
                cr_expect_eq(l6 ? json_object_array_length(l6) : 0, want6, "%s: IPv6 count", name);
        }
        json_object_put(links);
        json_object_put(addrs);
        json_object_put(inv);
        free(links_text);
        free(addrs_text);
}

/* ---- (b) a network namespace built by the test -------------------------- */

static char ns_name[64];

static void ns_fini(void) {
        if (ns_name[0]) {
                tu_runf(NULL, NULL, "ip netns del %s", ns_name);
                ns_name[0] = '\0';
        }
}

/* `ip -n NS ARGS` (ARGS a string literal); asserts success. */
#define nsip(args) tu_must("ip -n %s " args, ns_name)

/* A namespace of this test's own, lo up. Skipped (and counted) when it
 * cannot be made for lack of privilege, which root never lacks. */
static void ns_up(void) {
        char *err = NULL;
        snprintf(ns_name, sizeof ns_name, "muster-test-%d", (int) getpid());
        if (tu_runf(NULL, &err, "ip netns add %s", ns_name) != 0) {
                bool perm = geteuid() != 0 && err && (strstr(err, "ermission") || strstr(err, "not permitted"));
                char msg[256];
                snprintf(msg, sizeof msg, "%s", err ? err : "");
                free(err);
                ns_name[0] = '\0';
                if (perm)
                        cr_skip_test("cannot create a network namespace: %s", msg);
                cr_assert_fail("ip netns add failed: %s", msg);
        }
        free(err);
        nsip("link set lo up");
}

/* The agent's inventory from inside the namespace. */
static json_object *ns_inventory(void) {
        char *out = NULL, *aerr = NULL;
        int st = tu_runf(&out, &aerr, "ip netns exec %s %s inventory", ns_name, tu_agent_path());
        cr_assert_eq(st, 0, "agent failed in the namespace: %s", aerr ? aerr : "");
        json_object *inv = json_tokener_parse(out);
        cr_assert(inv, "agent printed no JSON: %s", aerr ? aerr : "");
        free(out);
        free(aerr);
        return inv;
}

Test(net, namespace_topology, .fini = ns_fini, .timeout = 120) {
        ns_up();
        nsip("link add vA type veth peer name vB");
        nsip("link set vA address 02:00:00:00:00:0a mtu 1400");
        nsip("link set vB mtu 1400");
        nsip("addr add 198.51.100.1/24 dev vA");
        nsip("addr add 2001:db8::1/64 dev vA nodad");
        nsip("addr add 198.51.100.2/24 dev vB");
        nsip("addr add 2001:db8::2/64 dev vB nodad");
        nsip("link set vA up");
        nsip("link set vB up");
        nsip("link add br0 type bridge");
        nsip("link add vC type veth peer name vD");
        nsip("link set vC master br0");
        nsip("link set br0 up");
        nsip("link set vC up");
        nsip("addr add 203.0.113.5/28 dev br0");
        nsip("route add default via 198.51.100.2 dev vA metric 100");
        nsip("route add 192.0.2.128/25 via 198.51.100.2 dev vA metric 50");
        nsip("-6 route add 2001:db8:1::/48 via 2001:db8::3 dev vA metric 300");
        nsip("-6 route add default via 2001:db8::3 dev vA metric 512");

        json_object *inv = ns_inventory();
        expect_order_and_no_lo(inv);
        cr_expect_null(find_iface(inv, "lo"));

        json_object *va = must_iface(inv, "vA");
        expect_str(va, "type", "virtual");
        expect_str(va, "mac_address", "02:00:00:00:00:0a");
        cr_expect_eq(jbool(va, "mac_is_permanent"), 0);
        cr_expect_eq(jint(va, "mtu"), 1400);
        cr_expect_eq(jbool(va, "has_carrier"), 1);
        expect_list(va, "ipv4_addresses", (const char *[]) { "198.51.100.1/24", NULL });
        expect_list(va, "ipv6_addresses", (const char *[]) { "2001:db8::1/64", NULL });
        expect_str(va, "vendor", NULL);
        expect_str(va, "driver", NULL);

        json_object *vb = must_iface(inv, "vB");
        expect_list(vb, "ipv4_addresses", (const char *[]) { "198.51.100.2/24", NULL });
        expect_list(vb, "ipv6_addresses", (const char *[]) { "2001:db8::2/64", NULL });

        json_object *br = must_iface(inv, "br0");
        expect_str(br, "type", "bridge");
        expect_list(br, "ipv4_addresses", (const char *[]) { "203.0.113.5/28", NULL });
        cr_expect_null(tu_json_get(br, "bond_members"), "a bridge has no bond members");
        expect_str(must_iface(inv, "vC"), "type", "virtual");
        expect_str(must_iface(inv, "vD"), "type", "virtual");
        cr_expect_eq(jbool(must_iface(inv, "vD"), "has_carrier"), 0, "peer vC up, vD down");


        expect_route(inv, 4, "0.0.0.0/0", "198.51.100.2", "vA", 100);
        expect_route(inv, 4, "192.0.2.128/25", "198.51.100.2", "vA", 50);
        /* The same prefix on two links is two routes. */
        expect_route(inv, 4, "198.51.100.0/24", NULL, "vA", 0);
        expect_route(inv, 4, "198.51.100.0/24", NULL, "vB", 0);
        expect_route(inv, 4, "203.0.113.0/28", NULL, "br0", 0);
        expect_route(inv, 6, "::/0", "2001:db8::3", "vA", 512);
        expect_route(inv, 6, "2001:db8:1::/48", "2001:db8::3", "vA", 300);
        expect_route(inv, 6, "2001:db8::/64", NULL, "vA", 256);
        expect_route(inv, 6, "fe80::/64", NULL, "vA", 256);
        /* Local-table routes stay out. */
        cr_expect_not(has_route(inv, 4, "198.51.100.1/32", NULL, "vA", 0));
        json_object *routes = tu_json_get(inv, "routes");
        for (size_t i = 0; i < json_object_array_length(routes); i++) {
                const char *d = jstr(json_object_array_get_idx(routes, i), "destination");
                cr_expect(strncmp(d, "ff00::", 6) != 0, "multicast route listed");
        }
        json_object_put(inv);
}


/* ---- (c) captured sysroot trees ----------------------------------------- */

static void w(const char *root, const char *rel, const char *text) {
        cr_assert_eq(tu_write_file(root, rel, text), 0, "write %s", rel);
}

static void rm_in(const char *root, const char *rel) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", root, rel);
        cr_assert_eq(unlink(path), 0, "unlink %s", rel);
}

static void ln(const char *root, const char *rel, const char *target) {
        cr_assert_eq(tu_symlink(root, rel, target), 0, "symlink %s", rel);
}

/* One netdev directory under /sys/devices and its /sys/class/net link. */
static void netdev(const char *root, const char *devdir, const char *name, const char *mac,
                   const char *mtu, const char *carrier, const char *oper, const char *speed,
                   const char *assign, const char *uevent) {
        char rel[512], target[512];
        struct { const char *file, *text; } f[] = {
                { "address", mac }, { "mtu", mtu }, { "carrier", carrier }, { "operstate", oper },
                { "speed", speed }, { "addr_assign_type", assign }, { "uevent", uevent },
                { "type", "1\n" },
        };
        for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
                if (!f[i].text)
                        continue;
                snprintf(rel, sizeof rel, "sys/devices/%s/net/%s/%s", devdir, name, f[i].file);
                w(root, rel, f[i].text);
        }
        snprintf(rel, sizeof rel, "sys/class/net/%s", name);
        snprintf(target, sizeof target, "../../devices/%s/net/%s", devdir, name);
        ln(root, rel, target);
}

static void pci_function(const char *root, const char *devdir, const char *vendor,
                         const char *device, const char *driver) {
        char rel[512], target[512];
        snprintf(rel, sizeof rel, "sys/devices/%s/vendor", devdir);
        w(root, rel, vendor);
        snprintf(rel, sizeof rel, "sys/devices/%s/device", devdir);
        w(root, rel, device);
        snprintf(rel, sizeof rel, "sys/devices/%s/subsystem", devdir);
        ln(root, rel, "../../../bus/pci");
        snprintf(rel, sizeof rel, "sys/devices/%s/driver", devdir);
        snprintf(target, sizeof target, "../../../bus/pci/drivers/%s", driver);
        ln(root, rel, target);
        snprintf(rel, sizeof rel, "sys/bus/pci/drivers/%s/.keep", driver);
        w(root, rel, "");
}

/* A two-port server: eno1 (PCI, Intel) alone; eno2 + eno3 (PCI) bonded
 * into bond0 with VLAN 42 on top; a bridge, a veth and loopback. */
static char *make_machine(void) {
        char *root = tu_mkdtemp();
        cr_assert(root);
        const char *p1 = "pci0000:00/0000:00:03.0", *p2 = "pci0000:00/0000:00:04.0",
                   *p3 = "pci0000:00/0000:00:05.0";
        pci_function(root, p1, "0x8086\n", "0x100E\n", "e1000");
        pci_function(root, p2, "0x15b3\n", "0x1017\n", "mlx5_core");
        pci_function(root, p3, "0x15b3\n", "0x1017\n", "mlx5_core");
        w(root, "sys/bus/pci/.keep", "");

        netdev(root, p1, "eno1", "52:54:00:12:34:56\n", "9000\n", "1\n", "up\n", "25000\n", "0\n",
               "INTERFACE=eno1\nIFINDEX=2\n");
        ln(root, "sys/devices/pci0000:00/0000:00:03.0/net/eno1/device", "../../../0000:00:03.0");
        netdev(root, p2, "eno2", "02:00:00:00:00:b0\n", "1500\n", "1\n", "up\n", "100000\n", "3\n",
               "INTERFACE=eno2\nIFINDEX=3\n");
        ln(root, "sys/devices/pci0000:00/0000:00:04.0/net/eno2/device", "../../../0000:00:04.0");
        w(root, "sys/devices/pci0000:00/0000:00:04.0/net/eno2/bonding_slave/perm_hwaddr",
          "b8:ce:f6:00:00:02\n");
        /* carrier missing (down link: the kernel refuses the read) */
        netdev(root, p3, "eno3", "02:00:00:00:00:b0\n", "1500\n", NULL, "down\n", "-1\n", "3\n",
               "INTERFACE=eno3\nIFINDEX=4\n");
        ln(root, "sys/devices/pci0000:00/0000:00:05.0/net/eno3/device", "../../../0000:00:05.0");
        w(root, "sys/devices/pci0000:00/0000:00:05.0/net/eno3/bonding_slave/perm_hwaddr",
          "b8:ce:f6:00:00:03\n");

        netdev(root, "virtual", "bond0", "02:00:00:00:00:b0\n", "1500\n", "1\n", "up\n", NULL, "3\n",
               "DEVTYPE=bond\nINTERFACE=bond0\nIFINDEX=5\n");
        w(root, "sys/devices/virtual/net/bond0/bonding/slaves", "eno3 eno2\n");
        netdev(root, "virtual", "bond0.42", "02:00:00:00:00:b0\n", "1500\n", "1\n", "up\n", NULL,
               "3\n", "DEVTYPE=vlan\nINTERFACE=bond0.42\nIFINDEX=6\n");
        netdev(root, "virtual", "br0", "0a:00:00:00:00:01\n", "1500\n", "0\n", "down\n", NULL, "3\n",
               "DEVTYPE=bridge\nINTERFACE=br0\nIFINDEX=7\n");
        w(root, "sys/devices/virtual/net/br0/bridge/stp_state", "0\n");
        netdev(root, "virtual", "veth0", "ca:fe:00:00:00:01\n", "1500\n", "1\n", "up\n", "10000\n",
               "1\n", "INTERFACE=veth0\nIFINDEX=8\n");
        netdev(root, "virtual", "lo", "00:00:00:00:00:00\n", "65536\n", "1\n", "unknown\n", NULL, "0\n",
               "INTERFACE=lo\nIFINDEX=1\n");
        w(root, "sys/class/net/bonding_masters", "bond0\n");

        w(root, "proc/net/vlan/config",
          "VLAN Dev name\t | VLAN ID\n"
          "Name-Type: VLAN_NAME_TYPE_RAW_PLUS_VID_NO_PAD\n"
          "bond0.42       | 42  | bond0\n");
        w(root, "proc/net/route",
          "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
          "bond0.42\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
          "*\t0000000A\t00000000\t0201\t0\t0\t0\t000000FF\t0\t0\t0\n"
          "bond0.42\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
          "eno1\t0000140A\t00000000\t0001\t0\t0\t100\t0000FFFF\t0\t0\t0\n");
        w(root, "proc/net/fib_trie",
          "Main:\n"
          "  +-- 0.0.0.0/0 3 0 5\n"
          "     |-- 0.0.0.0\n"
          "        /0 universe UNICAST\n"
          "     +-- 10.20.0.0/16 2 0 2\n"
          "        |-- 10.20.0.0\n"
          "           /16 link UNICAST\n"
          "        |-- 10.20.30.40\n"
          "           /32 host LOCAL\n"
          "     +-- 127.0.0.0/8 2 0 2\n"
          "        +-- 127.0.0.0/31 1 0 0\n"
          "           |-- 127.0.0.0\n"
          "              /8 host LOCAL\n"
          "           |-- 127.0.0.1\n"
          "              /32 host LOCAL\n"
          "     +-- 192.0.2.0/24 2 0 2\n"
          "        +-- 192.0.2.0/28 2 0 2\n"
          "           |-- 192.0.2.0\n"
          "              /24 link UNICAST\n"
          "           |-- 192.0.2.10\n"
          "              /32 host LOCAL\n"
          "        |-- 192.0.2.255\n"
          "           /32 link BROADCAST\n");
        w(root, "proc/net/if_inet6",
          "fe80000000000000505400fffe123456 02 40 20 80     eno1\n"
          "20010db8000000000000000000000010 06 40 00 80 bond0.42\n"
          "00000000000000000000000000000001 01 80 10 80       lo\n");
        w(root, "proc/net/ipv6_route",
          "20010db8000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 bond0.42\n"
          "00000000000000000000000000000000 00 00000000000000000000000000000000 00 20010db8000000000000000000000001 00000400 00000002 00000000 00000003 bond0.42\n"
          "20010db8000000000000000000000010 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000003 00000000 80200001 bond0.42\n"
          "ff000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000003 00000000 00000001 bond0.42\n"
          "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n");
        return root;
}

Test(net, sysroot_machine, .timeout = 120) {
        char *root = make_machine();
        int status;
        json_object *inv = tu_agent_inventory(root, &status);
        cr_assert(inv, "agent printed no JSON");
        cr_expect_eq(status, 0);
        expect_order_and_no_lo(inv);

        json_object *a = tu_json_get(inv, "interfaces");
        cr_expect_eq(json_object_array_length(a), 7, "%s", json_object_to_json_string(a));
        cr_expect_null(find_iface(inv, "bonding_masters"));

        json_object *e = must_iface(inv, "eno1");
        expect_str(e, "type", "physical");
        expect_str(e, "mac_address", "52:54:00:12:34:56");
        cr_expect_eq(jbool(e, "mac_is_permanent"), 1);
        cr_expect_eq(jint(e, "mtu"), 9000);
        cr_expect_eq(jbool(e, "has_carrier"), 1);
        cr_expect_eq(jint(e, "speed_mbps"), 25000);
        expect_str(e, "vendor", "0x8086");
        expect_str(e, "product", "0x100e");
        expect_str(e, "driver", "e1000");
        expect_list(e, "ipv4_addresses", (const char *[]) { "10.20.30.40/16", NULL });
        expect_list(e, "ipv6_addresses", (const char *[]) { NULL });

        e = must_iface(inv, "eno2");
        expect_str(e, "type", "physical");
        expect_str(e, "mac_address", "b8:ce:f6:00:00:02");
        cr_expect_eq(jbool(e, "mac_is_permanent"), 1);
        expect_str(e, "vendor", "0x15b3");
        expect_str(e, "driver", "mlx5_core");
        cr_expect_eq(jint(e, "speed_mbps"), 100000);

        e = must_iface(inv, "eno3");
        cr_expect_eq(jbool(e, "has_carrier"), 0);
        cr_expect_null(tu_json_get(e, "speed_mbps"));

        e = must_iface(inv, "bond0");
        expect_str(e, "type", "bond");
        expect_list(e, "bond_members", (const char *[]) { "eno2", "eno3", NULL });
        expect_str(e, "mac_address", "02:00:00:00:00:b0");
        cr_expect_eq(jbool(e, "mac_is_permanent"), 0);
        expect_str(e, "vendor", NULL);

        e = must_iface(inv, "bond0.42");
        expect_str(e, "type", "vlan");
        cr_expect_eq(jint(e, "vlan_id"), 42);
        expect_str(e, "vlan_parent", "bond0");
        expect_list(e, "ipv4_addresses", (const char *[]) { "192.0.2.10/24", NULL });
        expect_list(e, "ipv6_addresses", (const char *[]) { "2001:db8::10/64", NULL });

        expect_str(must_iface(inv, "br0"), "type", "bridge");
        cr_expect_eq(jbool(must_iface(inv, "br0"), "has_carrier"), 0);
        e = must_iface(inv, "veth0");
        expect_str(e, "type", "virtual");
        cr_expect_eq(jbool(e, "mac_is_permanent"), 0);

        json_object *routes = tu_json_get(inv, "routes");
        cr_expect_eq(json_object_array_length(routes), 5, "%s", json_object_to_json_string(routes));
        expect_route(inv, 4, "0.0.0.0/0", "192.0.2.1", "bond0.42", 0);
        expect_route(inv, 4, "10.20.0.0/16", NULL, "eno1", 100);
        expect_route(inv, 4, "192.0.2.0/24", NULL, "bond0.42", 0);
        expect_route(inv, 6, "::/0", "2001:db8::1", "bond0.42", 1024);
        expect_route(inv, 6, "2001:db8::/64", NULL, "bond0.42", 256);
        /* Deterministic order: family, then destination. */
        expect_str(json_object_array_get_idx(routes, 0), "destination", "0.0.0.0/0");
        expect_str(json_object_array_get_idx(routes, 3), "destination", "::/0");
        cr_expect_null(tu_json_get(inv, "truncated.interfaces"));

        json_object_put(inv);
        tu_rm_rf(root);
        free(root);
}

Test(net, sysroot_caps, .timeout = 120) {
        char *root = tu_mkdtemp();
        cr_assert(root);
        char rel[256];
        for (int i = 0; i < 1100; i++) {
                snprintf(rel, sizeof rel, "sys/class/net/n%04d/mtu", i);
                w(root, rel, "1500\n");
        }
        size_t cap = 6000 * 64;
        char *route = malloc(cap), *p = route;
        p += sprintf(p, "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n");
        for (int i = 0; i < 5000; i++)
                p += sprintf(p, "n0000\t%02X%02X000A\t00000000\t0001\t0\t0\t%d\t0000FFFF\t0\t0\t0\n",
                             i & 0xff, (i >> 8) & 0xff, i);
        w(root, "proc/net/route", route);
        free(route);

        int status;
        json_object *inv = tu_agent_inventory(root, &status);
        cr_assert(inv, "agent printed no JSON");
        cr_expect_eq(status, 0);
        cr_expect_eq(json_object_array_length(tu_json_get(inv, "interfaces")), 1024);
        cr_expect_eq(jint(inv, "truncated.interfaces.total"), 1100);
        cr_expect_eq(jint(inv, "truncated.interfaces.listed"), 1024);
        cr_expect_eq(json_object_array_length(tu_json_get(inv, "routes")), 4096);
        cr_expect_eq(jint(inv, "truncated.routes.total"), 5000);
        cr_expect_eq(jint(inv, "truncated.routes.listed"), 4096);
        expect_str(json_object_array_get_idx(tu_json_get(inv, "interfaces"), 1023), "name", "n1023");
        json_object_put(inv);
        tu_rm_rf(root);
        free(root);
}

static void wb(const char *root, const char *rel, const void *data, size_t len) {
        cr_assert_eq(tu_write_bin(root, rel, data, len), 0, "write %s", rel);
}

Test(net, sysroot_garbled, .timeout = 120) {
        char *root = make_machine();
        char junk[4096], path[1024];
        uint32_t x = 0x9e3779b9u;
        for (size_t i = 0; i < sizeof junk; i++) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                junk[i] = (char) x;
        }
#define ENO1 "sys/devices/pci0000:00/0000:00:03.0/net/eno1/"
#define ENO2 "sys/devices/pci0000:00/0000:00:04.0/net/eno2/"
#define ENO3 "sys/devices/pci0000:00/0000:00:05.0/net/eno3/"
        wb(root, ENO1 "address", junk, 64);
        wb(root, ENO1 "mtu", "9000abc", 7);
        wb(root, ENO1 "speed", junk + 100, 200);
        wb(root, ENO1 "uevent", junk + 300, sizeof junk - 300);
        /* A device link loop, and a device link out of the root. */
        rm_in(root, ENO1 "device");
        ln(root, ENO1 "device", "device");
        rm_in(root, ENO2 "device");
        ln(root, ENO2 "device", "../../../../../../../../../etc");
        wb(root, "sys/devices/virtual/net/bond0/bonding/slaves", junk, sizeof junk);
        wb(root, ENO3 "bonding_slave/perm_hwaddr", junk, 40);
        /* Truncated mid-line. */
        static const char route[] = "Iface\tDestination\tGateway \tFlags\nbond0.42\t000200C0\t0000";
        static const char trie[] = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 192.0.2.10\n        /32 ho";
        static const char route6[] = "20010db8000000000000000000000000 40 0000";
        wb(root, "proc/net/route", route, sizeof route - 1);
        wb(root, "proc/net/fib_trie", trie, sizeof trie - 1);
        wb(root, "proc/net/ipv6_route", route6, sizeof route6 - 1);
        wb(root, "proc/net/vlan/config", junk + 7, 999);
        wb(root, "proc/net/if_inet6", junk + 1000, 2000);
        /* An interface directory with nothing in it. */
        snprintf(path, sizeof path, "%s/sys/class/net/empty0", root);
        cr_assert_eq(mkdir(path, 0755), 0);
#undef ENO1
#undef ENO2
#undef ENO3

        int status;
        json_object *inv = tu_agent_inventory(root, &status);
        cr_assert(inv, "agent printed no JSON on a garbled tree");
        cr_expect_eq(status, 0);
        json_object *e = must_iface(inv, "eno1");
        cr_expect_null(tu_json_get(e, "mac_address"));
        cr_expect_null(tu_json_get(e, "mtu"));
        cr_expect_null(tu_json_get(e, "speed_mbps"));
        expect_str(e, "type", "virtual");
        e = must_iface(inv, "empty0");
        expect_str(e, "type", "virtual");
        cr_expect_null(tu_json_get(e, "mac_address"));
        expect_str(must_iface(inv, "eno2"), "vendor", NULL);
        json_object_put(inv);

        /* Everything turned to junk, including the directory entries' files. */
        const char *files[] = { "proc/net/route", "proc/net/fib_trie", "proc/net/if_inet6",
                                "proc/net/ipv6_route", "proc/net/vlan/config" };
        for (size_t i = 0; i < sizeof files / sizeof *files; i++)
                cr_assert_eq(tu_write_bin(root, files[i], junk, sizeof junk), 0);
        inv = tu_agent_inventory(root, &status);
        cr_assert(inv, "agent printed no JSON on junk /proc/net");
        cr_expect_eq(status, 0);
        cr_expect(json_object_is_type(tu_json_get(inv, "routes"), json_type_array));
        json_object_put(inv);

        tu_rm_rf(root);
        free(root);
}
