/* Pure parsers of the network probe (see netparse.h). Each format is read
 * line by line into a bounded copy; a line that does not have the expected
 * shape is skipped whole, so truncated or hostile files give fewer entries,
 * never wrong ones. */
#include "netparse.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"

#define LINE_MAX_LEN 1024
#define MAX_TOKENS 16

/* Make room for one more element in an array sized by powers of two; the
 * new slot is zeroed. */
/* Next line of text into buf (NUL-terminated, without the newline). Lines
 * longer than the buffer are skipped whole. Returns false at the end. */
static bool next_line(const char **text, char *buf, size_t size) {
        while (*text && **text) {
                const char *s = *text;
                const char *nl = strchr(s, '\n');
                size_t len = nl ? (size_t) (nl - s) : strlen(s);
                *text = nl ? nl + 1 : s + len;
                if (len >= size)
                        continue;
                memcpy(buf, s, len);
                buf[len] = '\0';
                return true;
        }
        return false;
}

/* Split buf in place on whitespace; number of tokens (at most max). */
static size_t tokenize(char *buf, char **tok, size_t max) {
        size_t n = 0;
        char *p = buf;
        while (*p) {
                while (*p && isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        break;
                if (n == max)
                        return n + 1; /* too many: callers reject */
                tok[n++] = p;
                while (*p && !isspace((unsigned char) *p))
                        p++;
                if (*p)
                        *p++ = '\0';
        }
        return n;
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* 1..8 hex digits, nothing else. */
static bool parse_hex32(const char *s, uint32_t *out) {
        size_t len = strlen(s);
        uint32_t v = 0;
        if (len == 0 || len > 8)
                return false;
        for (size_t i = 0; i < len; i++) {
                int h = hexval(s[i]);
                if (h < 0)
                        return false;
                v = v << 4 | (uint32_t) h;
        }
        *out = v;
        return true;
}

/* Exactly 2*n hex digits into n bytes. */
static bool parse_hex_bytes(const char *s, uint8_t *out, size_t n) {
        if (strlen(s) != 2 * n)
                return false;
        for (size_t i = 0; i < n; i++) {
                int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return false;
                out[i] = (uint8_t) (hi << 4 | lo);
        }
        return true;
}

/* A __be32 that a little-endian kernel printed with %08X. */
static void le_hex_to_bytes(uint32_t v, uint8_t out[4]) {
        for (int i = 0; i < 4; i++)
                out[i] = (uint8_t) (v >> (8 * i));
}

static uint32_t bytes_to_u32(const uint8_t b[4]) {
        return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

static uint32_t mask_of(unsigned plen) {
        return plen == 0 ? 0 : plen >= 32 ? UINT32_MAX : ~(UINT32_MAX >> plen);
}

bool np_ifname_valid(const char *s) {
        size_t len = 0;
        if (!s)
                return false;
        for (; s[len]; len++) {
                unsigned char c = (unsigned char) s[len];
                if (len >= NP_IFNAMSIZ - 1 || c <= 0x20 || c >= 0x7f || c == '/' || c == ':')
                        return false;
        }
        return len > 0 && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

bool np_ifname_copy(char out[NP_IFNAMSIZ], const char *s, size_t len) {
        char tmp[NP_IFNAMSIZ];
        if (!s || len == 0 || len >= NP_IFNAMSIZ)
                return false;
        memcpy(tmp, s, len);
        tmp[len] = '\0';
        if (strlen(tmp) != len || !np_ifname_valid(tmp))
                return false;
        memcpy(out, tmp, len + 1);
        return true;
}

int np_parse_proc_route(const char *text, struct np_route **out, size_t *n) {
        char line[LINE_MAX_LEN];
        int added = 0;

        while (next_line(&text, line, sizeof line)) {
                char *tok[MAX_TOKENS];
                uint32_t dst, gw, flags, mask;
                size_t nt = tokenize(line, tok, MAX_TOKENS);
                /* Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT */
                if (nt < 8 || nt > 11)
                        continue;
                if (!parse_hex32(tok[1], &dst) || !parse_hex32(tok[2], &gw) ||
                    !parse_hex32(tok[3], &flags) || !parse_hex32(tok[7], &mask))
                        continue;
                char *end;
                errno = 0;
                long long metric = strtoll(tok[6], &end, 10);
                if (errno || *end || end == tok[6] || metric < INT32_MIN || metric > UINT32_MAX)
                        continue;

                uint8_t mb[4];
                le_hex_to_bytes(mask, mb);
                uint32_t m = bytes_to_u32(mb);
                unsigned plen = (unsigned) __builtin_popcount(m);
                if (m != mask_of(plen))
                        continue; /* not a contiguous netmask */

                struct np_route r = { .family = 4, .dst_len = plen, .flags = flags,
                                      .metric = (uint32_t) metric };
                if (strcmp(tok[0], "*") != 0 && !np_ifname_copy(r.ifname, tok[0], strlen(tok[0])))
                        continue;
                le_hex_to_bytes(dst, r.dst);
                for (int i = 0; i < 4; i++)
                        r.dst[i] &= mb[i];
                if (gw != 0) {
                        r.has_gateway = true;
                        le_hex_to_bytes(gw, r.gw);
                }
                struct np_route *slot = inv_array_append((void **) out, n, sizeof **out);
                if (!slot)
                        return -ENOMEM;
                *slot = r;
                added++;
        }
        return added;
}

static const uint8_t zero16[16];

int np_parse_ipv6_route(const char *text, struct np_route **out, size_t *n) {
        char line[LINE_MAX_LEN];
        int added = 0;

        while (next_line(&text, line, sizeof line)) {
                char *tok[MAX_TOKENS];
                uint8_t src[16];
                uint32_t plen, splen, metric, refcnt, use, flags;
                size_t nt = tokenize(line, tok, MAX_TOKENS);
                /* dst dst_len src src_len next_hop metric refcnt use flags dev */
                if (nt != 10)
                        continue;
                struct np_route r = { .family = 6 };
                if (!parse_hex_bytes(tok[0], r.dst, 16) || !parse_hex32(tok[1], &plen) ||
                    !parse_hex_bytes(tok[2], src, 16) || !parse_hex32(tok[3], &splen) ||
                    !parse_hex_bytes(tok[4], r.gw, 16) || !parse_hex32(tok[5], &metric) ||
                    !parse_hex32(tok[6], &refcnt) || !parse_hex32(tok[7], &use) ||
                    !parse_hex32(tok[8], &flags) || plen > 128 || splen > 128)
                        continue;
                if (!np_ifname_copy(r.ifname, tok[9], strlen(tok[9])))
                        continue;
                r.dst_len = plen;
                r.metric = metric;
                r.flags = flags;
                r.has_gateway = memcmp(r.gw, zero16, 16) != 0;
                struct np_route *slot = inv_array_append((void **) out, n, sizeof **out);
                if (!slot)
                        return -ENOMEM;
                *slot = r;
                added++;
        }
        return added;
}

int np_parse_if_inet6(const char *text, struct np_addr **out, size_t *n) {
        char line[LINE_MAX_LEN];
        int added = 0;

        while (next_line(&text, line, sizeof line)) {
                char *tok[MAX_TOKENS];
                uint32_t ifindex, plen, scope, flags;
                size_t nt = tokenize(line, tok, MAX_TOKENS);
                /* address ifindex prefix_len scope flags name */
                if (nt != 6)
                        continue;
                struct np_addr a = { .family = 6 };
                if (!parse_hex_bytes(tok[0], a.addr, 16) || !parse_hex32(tok[1], &ifindex) ||
                    !parse_hex32(tok[2], &plen) || !parse_hex32(tok[3], &scope) ||
                    !parse_hex32(tok[4], &flags) || plen > 128)
                        continue;
                if (!np_ifname_copy(a.ifname, tok[5], strlen(tok[5])))
                        continue;
                a.plen = plen;
                struct np_addr *slot = inv_array_append((void **) out, n, sizeof **out);
                if (!slot)
                        return -ENOMEM;
                *slot = a;
                added++;
        }
        return added;
}

static bool copy_word(char *dst, size_t size, const char *src) {
        size_t len = strlen(src);
        if (len == 0 || len >= size)
                return false;
        memcpy(dst, src, len + 1);
        return true;
}

int np_parse_fib_trie(const char *text, struct np_fib_entry **out, size_t *n) {
        char line[LINE_MAX_LEN];
        enum np_fib_table table = NP_FIB_OTHER;
        uint8_t leaf[4] = { 0 };
        bool have_leaf = false;
        int added = 0;

        while (next_line(&text, line, sizeof line)) {
                char *p = line;
                bool indented = isspace((unsigned char) *p);
                while (isspace((unsigned char) *p))
                        p++;
                size_t len = strlen(p);
                while (len > 0 && isspace((unsigned char) p[len - 1]))
                        p[--len] = '\0';
                if (len == 0)
                        continue;

                if (!indented && p[len - 1] == ':') {
                        /* "Main:", "Local:", "Id 1000:" */
                        table = strcmp(p, "Main:") == 0    ? NP_FIB_MAIN
                                : strcmp(p, "Local:") == 0 ? NP_FIB_LOCAL
                                                           : NP_FIB_OTHER;
                        have_leaf = false;
                        continue;
                }
                if (strncmp(p, "+--", 3) == 0) {
                        have_leaf = false;
                        continue;
                }
                if (strncmp(p, "|--", 3) == 0) {
                        char *tok[MAX_TOKENS];
                        struct in_addr ia;
                        have_leaf = tokenize(p + 3, tok, MAX_TOKENS) == 1 &&
                                    inet_pton(AF_INET, tok[0], &ia) == 1;
                        if (have_leaf)
                                memcpy(leaf, &ia, 4);
                        continue;
                }
                if (*p == '/' && have_leaf) {
                        char *tok[MAX_TOKENS];
                        size_t nt = tokenize(p + 1, tok, MAX_TOKENS);
                        char *end;
                        if (nt < 3 || nt > MAX_TOKENS || !isdigit((unsigned char) tok[0][0]))
                                continue;
                        errno = 0;
                        unsigned long plen = strtoul(tok[0], &end, 10);
                        if (errno || *end || plen > 32)
                                continue;
                        struct np_fib_entry e = { .table = table, .plen = (unsigned) plen };
                        memcpy(e.addr, leaf, 4);
                        if (!copy_word(e.scope, sizeof e.scope, tok[1]) ||
                            !copy_word(e.type, sizeof e.type, tok[2]))
                                continue;
                        struct np_fib_entry *slot = inv_array_append((void **) out, n, sizeof **out);
                        if (!slot)
                                return -ENOMEM;
                        *slot = e;
                        added++;
                        continue;
                }
                /* anything else ends the current leaf */
                have_leaf = false;
        }
        return added;
}

static char *trim(char *s) {
        while (isspace((unsigned char) *s))
                s++;
        size_t len = strlen(s);
        while (len > 0 && isspace((unsigned char) s[len - 1]))
                s[--len] = '\0';
        return s;
}

int np_parse_vlan_config(const char *text, struct np_vlan **out, size_t *n) {
        char line[LINE_MAX_LEN];
        int added = 0;

        while (next_line(&text, line, sizeof line)) {
                /* "%-15s| %d  | %s" */
                char *bar1 = strchr(line, '|');
                char *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
                if (!bar2 || strchr(bar2 + 1, '|'))
                        continue;
                *bar1 = *bar2 = '\0';
                char *name = trim(line), *id = trim(bar1 + 1), *parent = trim(bar2 + 1);
                struct np_vlan v = { .id = -1 };
                char *end;
                if (!isdigit((unsigned char) *id))
                        continue;
                errno = 0;
                unsigned long vid = strtoul(id, &end, 10);
                if (errno || *end || vid > 4095)
                        continue;
                if (!np_ifname_copy(v.ifname, name, strlen(name)) ||
                    !np_ifname_copy(v.parent, parent, strlen(parent)))
                        continue;
                v.id = (int64_t) vid;
                struct np_vlan *slot = inv_array_append((void **) out, n, sizeof **out);
                if (!slot)
                        return -ENOMEM;
                *slot = v;
                added++;
        }
        return added;
}

struct v4key {
        uint32_t net;
        unsigned plen;
        size_t order;        /* position in the source, to keep the first */
        const char *ifname;  /* routes only */
};

static int v4key_cmp(const void *a, const void *b) {
        const struct v4key *x = a, *y = b;
        if (x->plen != y->plen)
                return x->plen < y->plen ? -1 : 1;
        if (x->net != y->net)
                return x->net < y->net ? -1 : 1;
        if (x->order != y->order)
                return x->order < y->order ? -1 : 1;
        return 0;
}

/* First key equal to (net, plen) in a sorted array, or NULL. */
static const struct v4key *v4key_find(const struct v4key *k, size_t n, uint32_t net,
                                      unsigned plen) {
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct v4key *m = &k[mid];
                if (m->plen < plen || (m->plen == plen && m->net < net))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < n && k[lo].plen == plen && k[lo].net == net ? &k[lo] : NULL;
}

static int u32_cmp(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
        return x < y ? -1 : x > y;
}

int np_ipv4_addrs(const struct np_fib_entry *fib, size_t nfib, const struct np_route *routes,
                  size_t nroutes, struct np_addr **out, size_t *n) {
        uint32_t *locals = NULL;
        struct v4key *prefixes = NULL, *rkeys = NULL;
        size_t nlocals = 0, nprefixes = 0, nrkeys = 0;
        bool have_main = false;
        int added = 0, r = -ENOMEM;

        for (size_t i = 0; i < nfib; i++)
                if (fib[i].table == NP_FIB_MAIN)
                        have_main = true;

        for (size_t i = 0; i < nfib; i++) {
                const struct np_fib_entry *e = &fib[i];
                uint32_t a = bytes_to_u32(e->addr);
                if (e->plen == 32 && strcmp(e->scope, "host") == 0 &&
                    strcmp(e->type, "LOCAL") == 0) {
                        if ((a >> 24) == 127)
                                continue;
                        uint32_t *slot = inv_array_append((void **) &locals, &nlocals, sizeof *locals);
                        if (!slot)
                                goto out;
                        *slot = a;
                } else if (strcmp(e->scope, "link") == 0 && strcmp(e->type, "UNICAST") == 0 &&
                           (!have_main || e->table == NP_FIB_MAIN)) {
                        struct v4key *k = inv_array_append((void **) &prefixes, &nprefixes, sizeof *prefixes);
                        if (!k)
                                goto out;
                        *k = (struct v4key) { .net = a & mask_of(e->plen), .plen = e->plen,
                                              .order = i };
                }
        }
        for (size_t i = 0; i < nroutes; i++) {
                const struct np_route *rt = &routes[i];
                if (rt->family != 4 || rt->has_gateway || !rt->ifname[0] || rt->dst_len > 32 ||
                    (rt->flags & NP_RTF_REJECT))
                        continue;
                struct v4key *k = inv_array_append((void **) &rkeys, &nrkeys, sizeof *rkeys);
                if (!k)
                        goto out;
                *k = (struct v4key) { .net = bytes_to_u32(rt->dst) & mask_of(rt->dst_len),
                                      .plen = rt->dst_len, .order = i, .ifname = rt->ifname };
        }
        if (nlocals)
                qsort(locals, nlocals, sizeof *locals, u32_cmp);
        if (nprefixes)
                qsort(prefixes, nprefixes, sizeof *prefixes, v4key_cmp);
        if (nrkeys)
                qsort(rkeys, nrkeys, sizeof *rkeys, v4key_cmp);

        for (size_t i = 0; i < nlocals; i++) {
                if (i > 0 && locals[i] == locals[i - 1])
                        continue; /* merged tables list each address twice */
                for (int plen = 32; plen >= 0; plen--) {
                        uint32_t net = locals[i] & mask_of((unsigned) plen);
                        if (!v4key_find(prefixes, nprefixes, net, (unsigned) plen))
                                continue;
                        const struct v4key *rk = v4key_find(rkeys, nrkeys, net, (unsigned) plen);
                        if (!rk)
                                continue;
                        struct np_addr *a = inv_array_append((void **) out, n, sizeof **out);
                        if (!a)
                                goto out;
                        a->family = 4;
                        a->plen = (unsigned) plen;
                        for (int b = 0; b < 4; b++)
                                a->addr[b] = (uint8_t) (locals[i] >> (24 - 8 * b));
                        memcpy(a->ifname, rk->ifname, NP_IFNAMSIZ);
                        added++;
                        break;
                }
        }
        r = added;
out:
        free(locals);
        free(prefixes);
        free(rkeys);
        return r;
}

bool np_route_wanted(const struct np_route *r) {
        if (!r->ifname[0] || strcmp(r->ifname, "lo") == 0)
                return false;
        if (r->flags & (NP_RTF_REJECT | NP_RTF_LOCAL | NP_RTF_ANYCAST | NP_RTF_CACHE))
                return false;
        if (r->family == 6 && r->dst[0] == 0xff)
                return false; /* ff00::/8 lives in the local table */
        return r->family == 4 || r->family == 6;
}

static size_t addr_len(int family) {
        return family == 4 ? 4 : 16;
}

int np_route_cmp(const void *a, const void *b) {
        const struct np_route *x = a, *y = b;
        int c;
        if (x->family != y->family)
                return x->family < y->family ? -1 : 1;
        if ((c = memcmp(x->dst, y->dst, addr_len(x->family))) != 0)
                return c;
        if (x->dst_len != y->dst_len)
                return x->dst_len < y->dst_len ? -1 : 1;
        if (x->metric != y->metric)
                return x->metric < y->metric ? -1 : 1;
        if ((c = strcmp(x->ifname, y->ifname)) != 0)
                return c;
        if (x->has_gateway != y->has_gateway)
                return x->has_gateway ? 1 : -1;
        return memcmp(x->gw, y->gw, addr_len(x->family));
}

int np_addr_cmp(const void *a, const void *b) {
        const struct np_addr *x = a, *y = b;
        int c;
        if (x->family != y->family)
                return x->family < y->family ? -1 : 1;
        if ((c = memcmp(x->addr, y->addr, addr_len(x->family))) != 0)
                return c;
        if (x->plen != y->plen)
                return x->plen < y->plen ? -1 : 1;
        return strcmp(x->ifname, y->ifname);
}

int np_parse_mac(const char *s, uint8_t *out, size_t size) {
        size_t n = 0;
        if (!s || !*s)
                return -EINVAL;
        for (;;) {
                int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);
                if (hi < 0 || lo < 0 || n >= size)
                        return -EINVAL;
                out[n++] = (uint8_t) (hi << 4 | lo);
                s += 2;
                if (*s == '\0')
                        return (int) n;
                if (*s != ':')
                        return -EINVAL;
                s++;
        }
}

bool np_format_mac(const uint8_t *mac, size_t len, char *buf, size_t size) {
        bool nonzero = false;
        if (len == 0 || size < len * 3)
                return false;
        for (size_t i = 0; i < len; i++) {
                static const char hex[] = "0123456789abcdef";
                buf[3 * i] = hex[mac[i] >> 4];
                buf[3 * i + 1] = hex[mac[i] & 15];
                buf[3 * i + 2] = i + 1 < len ? ':' : '\0';
                nonzero |= mac[i] != 0;
        }
        return nonzero;
}

bool np_format_addr(int family, const uint8_t *addr, char *buf, size_t size) {
        char tmp[INET6_ADDRSTRLEN];
        if (family != 4 && family != 6)
                return false;
        if (!inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, tmp, sizeof tmp))
                return false;
        if (strlen(tmp) >= size)
                return false;
        strcpy(buf, tmp);
        return true;
}

bool np_format_cidr(int family, const uint8_t *addr, unsigned plen, char *buf, size_t size) {
        char tmp[INET6_ADDRSTRLEN];
        if (plen > (family == 4 ? 32u : 128u) || !np_format_addr(family, addr, tmp, sizeof tmp))
                return false;
        int k = snprintf(buf, size, "%s/%u", tmp, plen);
        return k > 0 && (size_t) k < size;
}

bool np_is_link_local6(const uint8_t addr[16]) {
        return addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80;
}

const char *np_link_type(const char *kind, bool has_device) {
        static const char *const kinds[] = { "bond", "vlan", "bridge" };
        for (size_t i = 0; kind && i < sizeof kinds / sizeof *kinds; i++)
                if (strcmp(kind, kinds[i]) == 0)
                        return kinds[i];
        return has_device ? "physical" : "virtual";
}

int64_t np_parse_speed(const char *text) {
        char *end;
        if (!text)
                return -1;
        while (isspace((unsigned char) *text))
                text++;
        if (!isdigit((unsigned char) *text) && *text != '-')
                return -1;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        while (isspace((unsigned char) *end))
                end++;
        if (errno || *end || v <= 0 || v >= (long long) UINT32_MAX)
                return -1;
        return v;
}

int np_carrier(const char *carrier, const char *operstate) {
        if (carrier) {
                if (strcmp(carrier, "1") == 0)
                        return 1;
                if (strcmp(carrier, "0") == 0)
                        return 0;
        }
        if (!operstate)
                return -1;
        if (strcmp(operstate, "up") == 0 || strcmp(operstate, "dormant") == 0)
                return 1;
        if (strcmp(operstate, "down") == 0 || strcmp(operstate, "lowerlayerdown") == 0 ||
            strcmp(operstate, "notpresent") == 0)
                return 0;
        return -1;
}

bool np_uevent_get(const char *text, const char *key, char *buf, size_t size) {
        char line[LINE_MAX_LEN];
        size_t klen = strlen(key);
        while (next_line(&text, line, sizeof line)) {
                if (strncmp(line, key, klen) != 0 || line[klen] != '=')
                        continue;
                const char *v = line + klen + 1;
                if (strlen(v) >= size)
                        return false;
                strcpy(buf, v);
                return true;
        }
        return false;
}

int np_parse_name_list(const char *text, struct strv *out) {
        int added = 0;
        if (!text)
                return 0;
        while (*text) {
                while (*text && isspace((unsigned char) *text))
                        text++;
                size_t len = 0;
                while (text[len] && !isspace((unsigned char) text[len]))
                        len++;
                if (len == 0)
                        break;
                char name[NP_IFNAMSIZ];
                if (np_ifname_copy(name, text, len)) {
                        int r = strv_push(out, name);
                        if (r < 0)
                                return r;
                        added++;
                }
                text += len;
        }
        return added;
}

bool np_pci_id(const char *text, char *buf, size_t size) {
        if (!text || size < 7 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
                return false;
        for (int i = 2; i < 6; i++)
                if (hexval(text[i]) < 0)
                        return false;
        for (const char *p = text + 6; *p; p++)
                if (!isspace((unsigned char) *p))
                        return false;
        buf[0] = '0';
        buf[1] = 'x';
        for (int i = 2; i < 6; i++)
                buf[i] = (char) tolower((unsigned char) text[i]);
        buf[6] = '\0';
        return true;
}
