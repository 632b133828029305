/* Pure parsers and helpers of the network probe: the text formats of
 * /proc/net (route, ipv6_route, if_inet6, fib_trie, vlan/config) and of
 * /sys/class/net, into neutral structs. No file or socket access here, so
 * every rule is unit-tested on captured text; garbage lines are skipped. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strv.h"

#define NP_IFNAMSIZ 16  /* IFNAMSIZ: 15 characters and a NUL */
#define NP_MAC_MAX 32   /* MAX_ADDR_LEN */

/* RTF_* flags of /proc/net/route and /proc/net/ipv6_route. */
#define NP_RTF_GATEWAY 0x0002u
#define NP_RTF_REJECT 0x0200u
#define NP_RTF_ANYCAST 0x00100000u
#define NP_RTF_CACHE 0x01000000u
#define NP_RTF_LOCAL 0x80000000u

struct np_route {
        int family;          /* 4 or 6 */
        uint8_t dst[16];     /* network byte order; 4 bytes used for IPv4 */
        unsigned dst_len;    /* prefix length */
        bool has_gateway;
        uint8_t gw[16];
        uint32_t metric;
        uint32_t flags;      /* RTF_* as in /proc; 0 from netlink */
        char ifname[NP_IFNAMSIZ]; /* "" when the route has no device */
};

struct np_addr {
        char ifname[NP_IFNAMSIZ];
        int family;          /* 4 or 6 */
        uint8_t addr[16];
        unsigned plen;
};

enum np_fib_table { NP_FIB_MAIN, NP_FIB_LOCAL, NP_FIB_OTHER };

/* One "/N scope TYPE" line of /proc/net/fib_trie with its leaf address. */
struct np_fib_entry {
        enum np_fib_table table;
        uint8_t addr[4];
        unsigned plen;
        char scope[16];      /* "host", "link", "universe", ... */
        char type[16];       /* "LOCAL", "UNICAST", "BROADCAST", ... */
};

struct np_vlan {
        char ifname[NP_IFNAMSIZ];
        int64_t id;
        char parent[NP_IFNAMSIZ];
};

/* Parsers append to *out (a malloc'd array, free() it) and return the
 * number of entries added, or -ENOMEM. NULL text adds nothing. */

/* /proc/net/route (the main IPv4 table; addresses as printed by a
 * little-endian kernel). */
int np_parse_proc_route(const char *text, struct np_route **out, size_t *n);
/* /proc/net/ipv6_route (every table, local ones included). */
int np_parse_ipv6_route(const char *text, struct np_route **out, size_t *n);
/* /proc/net/if_inet6 (family 6 entries). */
int np_parse_if_inet6(const char *text, struct np_addr **out, size_t *n);
/* /proc/net/fib_trie: one entry per leaf line, tagged with its table. */
int np_parse_fib_trie(const char *text, struct np_fib_entry **out, size_t *n);
/* /proc/net/vlan/config. */
int np_parse_vlan_config(const char *text, struct np_vlan **out, size_t *n);

/* IPv4 addresses of a captured machine: every "/32 host LOCAL" leaf outside
 * 127.0.0.0/8, with the prefix length of the longest "link UNICAST" prefix
 * of the main table that holds it, on the interface of the matching
 * gateway-less route of /proc/net/route. Addresses that match no such route
 * are left out. Appends family 4 entries; count or -ENOMEM. */
int np_ipv4_addrs(const struct np_fib_entry *fib, size_t nfib, const struct np_route *routes,
                  size_t nroutes, struct np_addr **out, size_t *n);

/* Whether a route parsed from /proc belongs in the inventory: what
 * `ip route` / `ip -6 route` show for the main table, without loopback,
 * local, anycast, cached, reject and multicast entries. */
bool np_route_wanted(const struct np_route *r);

/* Orders for the document: routes by family, destination (numerically,
 * then prefix length), metric, interface, gateway; addresses by family,
 * address, prefix length. qsort-compatible. */
int np_route_cmp(const void *a, const void *b);
int np_addr_cmp(const void *a, const void *b);

/* A kernel interface name: 1-15 printable characters, no '/', ':' or
 * whitespace. */
bool np_ifname_valid(const char *s);
/* Copy a valid interface name of length len into out; false otherwise. */
bool np_ifname_copy(char out[NP_IFNAMSIZ], const char *s, size_t len);

/* "aa:bb:..." (sysfs `address`) into bytes; length, or -EINVAL. */
int np_parse_mac(const char *s, uint8_t *out, size_t size);
/* Lower-case colon form into buf; false if it does not fit. An empty or
 * all-zero address gives false as well (there is no address to report). */
bool np_format_mac(const uint8_t *mac, size_t len, char *buf, size_t size);

/* "192.0.2.0/24", "2001:db8::/64"; false on a bad family, length or size. */
bool np_format_cidr(int family, const uint8_t *addr, unsigned plen, char *buf, size_t size);
/* An address without prefix. */
bool np_format_addr(int family, const uint8_t *addr, char *buf, size_t size);
/* fe80::/10. */
bool np_is_link_local6(const uint8_t addr[16]);

/* Inventory type of a link: "bond", "vlan" or "bridge" from its kind,
 * otherwise "physical" when it has a backing device, else "virtual". */
const char *np_link_type(const char *kind, bool has_device);

/* Speed from sysfs `speed` in Mb/s; INV_UNSET-like -1 for unknown values
 * (-1, 0, SPEED_UNKNOWN, garbage). */
int64_t np_parse_speed(const char *text);

/* Carrier from sysfs `carrier` ("1"/"0") or, when that is unreadable (the
 * kernel refuses it on a down link), from `operstate`: 1, 0, or -1. */
int np_carrier(const char *carrier, const char *operstate);

/* Value of KEY=VALUE in a uevent text into buf; false if absent. */
bool np_uevent_get(const char *text, const char *key, char *buf, size_t size);

/* Interface names of a whitespace-separated list (bonding/slaves), valid
 * names only, appended to out; count or -ENOMEM. */
int np_parse_name_list(const char *text, struct strv *out);

/* A PCI id file ("0x8086\n") into lower-case "0x8086"; false unless it is
 * 0x and 4 hex digits. */
bool np_pci_id(const char *text, char *buf, size_t size);
