/* Static network configs (staticnet.h). */
#include "staticnet.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "errmsg.h"
#include "json-cleanup.h"

bool staticnet_mac_canonical(const char *s, char out[18]) {
        if (!s || strlen(s) != 17)
                return false;
        for (int i = 0; i < 17; i++) {
                char c = s[i];
                if (i % 3 == 2) {
                        if (c != ':' && c != '-')
                                return false;
                        out[i] = ':';
                } else {
                        if (!isxdigit((unsigned char) c))
                                return false;
                        out[i] = (char) tolower((unsigned char) c);
                }
        }
        out[17] = '\0';
        return true;
}

/* ---- one unit file ---------------------------------------------------------- */

enum kind { K_NETWORK, K_NETDEV, K_LINK };

static const char *const network_sections[] = {
        "Match", "Link", "SR-IOV", "Network", "Address", "Neighbor", "IPv6AddressLabel", "RoutingPolicyRule",
        "NextHop", "Route", "DHCPv4", "DHCPv6", "DHCPPrefixDelegation", "IPv6AcceptRA", "DHCPServer",
        "DHCPServerStaticLease", "IPv6SendRA", "IPv6Prefix", "IPv6RoutePrefix", "LLDP", "CAN", "IPoIB",
        "QDisc", "Bridge", "BridgeFDB", "BridgeMDB", "BridgeVLAN", NULL,
};
static const char *const netdev_sections[] = {
        "Match", "NetDev", "Bond", "VLAN", "MACVLAN", "MACVTAP", "IPVLAN", "IPVTAP", "VXLAN", "GENEVE",
        "BareUDP", "L2TP", "L2TPSession", "MACsec", "MACsecReceiveChannel", "MACsecTransmitAssociation",
        "MACsecReceiveAssociation", "Tunnel", "FooOverUDP", "Peer", "VXCAN", "Tun", "Tap", "WireGuard",
        "WireGuardPeer", "Bridge", "VRF", "BatmanAdvanced", "IPoIB", "WLAN", "Xfrm", NULL,
};
static const char *const link_sections[] = { "Match", "Link", "SR-IOV", NULL };

static bool in(const char *const *list, const char *s, size_t n) {
        for (; *list; list++)
                if (strlen(*list) == n && strncmp(*list, s, n) == 0)
                        return true;
        return false;
}

/* An address with an optional /prefix within its family's bits. */
static bool addr_ok(const char *v, bool prefix_allowed) {
        char buf[64];
        const char *slash = strchr(v, '/');
        size_t n = slash ? (size_t) (slash - v) : strlen(v);
        if (n == 0 || n >= sizeof buf || (slash && !prefix_allowed))
                return false;
        memcpy(buf, v, n);
        buf[n] = '\0';
        unsigned char b[16];
        int max;
        if (inet_pton(AF_INET, buf, b) == 1)
                max = 32;
        else if (inet_pton(AF_INET6, buf, b) == 1)
                max = 128;
        else
                return false;
        if (!slash)
                return true;
        char *end;
        long p = strtol(slash + 1, &end, 10);
        return slash[1] && !*end && p >= 0 && p <= max;
}

/* The value of `key` in `section` checked where its form is known. */
static const char *value_error(enum kind k, const char *section, const char *key, const char *v) {
        bool network = k == K_NETWORK;
        if (strcmp(key, "MACAddress") == 0 || strcmp(key, "PermanentMACAddress") == 0) {
                /* [Match] takes a list; [Link]/[NetDev] one. */
                char copy[1024], mac[18];
                if (strlen(v) >= sizeof copy)
                        return "is too long";
                snprintf(copy, sizeof copy, "%s", v);
                int n = 0;
                for (char *save = NULL, *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save), n++)
                        if (!staticnet_mac_canonical(t, mac))
                                return "is not a MAC address (xx:xx:xx:xx:xx:xx)";
                if (n == 0)
                        return "is empty";
                return NULL;
        }
        if (network && (strcmp(section, "Network") == 0 || strcmp(section, "Address") == 0) &&
            strcmp(key, "Address") == 0)
                return addr_ok(v, true) ? NULL : "is not an address with a prefix (192.0.2.10/24, 2001:db8::10/64)";
        if (network && (strcmp(section, "Network") == 0 || strcmp(section, "Route") == 0) &&
            strcmp(key, "Gateway") == 0)
                return addr_ok(v, false) || strcmp(v, "_dhcp4") == 0 || strcmp(v, "_ipv6ra") == 0
                               ? NULL
                               : "is not an address";
        if (network && strcmp(section, "Route") == 0 && strcmp(key, "Destination") == 0)
                return addr_ok(v, true) ? NULL : "is not an address with a prefix";
        if (network && strcmp(section, "Network") == 0 && strcmp(key, "DNS") == 0) {
                char copy[1024];
                if (strlen(v) >= sizeof copy)
                        return "is too long";
                snprintf(copy, sizeof copy, "%s", v);
                for (char *save = NULL, *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
                        /* DNS= takes ADDRESS[:PORT][%IFACE][#NAME]; the address is checked. */
                        char a[64];
                        size_t n = strcspn(t, "%#");
                        if (n >= sizeof a)
                                return "is not a list of addresses";
                        memcpy(a, t, n);
                        a[n] = '\0';
                        if (!addr_ok(a, false)) {
                                /* IPv4 with :port */
                                char *colon = strchr(a, ':');
                                if (!colon || strchr(colon + 1, ':'))
                                        return "is not a list of addresses";
                                *colon = '\0';
                                if (!addr_ok(a, false))
                                        return "is not a list of addresses";
                        }
                }
        }
        return NULL;
}

int staticnet_check_file(const char *name, const char *text, char *err, size_t errlen) {
        size_t nl = name ? strlen(name) : 0;
        if (nl == 0 || nl > STATICNET_NAME_MAX || name[0] == '.')
                return errmsg(err, errlen, -EINVAL, "file name \"%.80s\" is empty, too long or hidden", name ? name : "");
        for (const char *p = name; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("_.@-", *p))
                        return errmsg(err, errlen, -EINVAL,
                                      "file name \"%.80s\": only letters, digits and _.@- (no folders)", name);
        enum kind k;
        const char *const *sections;
        if (nl > 8 && strcmp(name + nl - 8, ".network") == 0)
                k = K_NETWORK, sections = network_sections;
        else if (nl > 7 && strcmp(name + nl - 7, ".netdev") == 0)
                k = K_NETDEV, sections = netdev_sections;
        else if (nl > 5 && strcmp(name + nl - 5, ".link") == 0)
                k = K_LINK, sections = link_sections;
        else
                return errmsg(err, errlen, -EINVAL, "file name \"%s\" is not NAME.network, NAME.netdev or NAME.link",
                              name);
        if (!text)
                return errmsg(err, errlen, -EINVAL, "%s: no text", name);
        if (strlen(text) > STATICNET_FILE_MAX)
                return errmsg(err, errlen, -EINVAL, "%s is larger than %d bytes", name, STATICNET_FILE_MAX);
        char section[64] = "";
        bool have_match_key = false, any_section = false;
        unsigned line = 0;
        for (const char *p = text; *p;) {
                line++;
                size_t n = strcspn(p, "\n");
                const char *l = p, *end = p + n;
                p = *end ? end + 1 : end;
                while (l < end && (*l == ' ' || *l == '\t'))
                        l++;
                while (end > l && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
                        end--;
                for (const char *c = l; c < end; c++)
                        if ((unsigned char) *c < 0x20 && *c != '\t')
                                return errmsg(err, errlen, -EINVAL, "%s line %u: a control character", name, line);
                if (l == end || *l == '#' || *l == ';')
                        continue;
                if (end[-1] == '\\')
                        return errmsg(err, errlen, -EINVAL, "%s line %u: continued lines are not taken", name, line);
                if (*l == '[') {
                        if (end[-1] != ']' || end - l < 3 || (size_t) (end - l - 2) >= sizeof section)
                                return errmsg(err, errlen, -EINVAL, "%s line %u: a section header is [Name]", name,
                                              line);
                        size_t sn = (size_t) (end - l - 2);
                        if (!in(sections, l + 1, sn))
                                return errmsg(err, errlen, -EINVAL, "%s line %u: [%.*s] is not a section of a %s file",
                                              name, line, (int) sn, l + 1,
                                              k == K_NETWORK ? ".network" : k == K_NETDEV ? ".netdev" : ".link");
                        memcpy(section, l + 1, sn);
                        section[sn] = '\0';
                        any_section = true;
                        continue;
                }
                const char *eq = memchr(l, '=', (size_t) (end - l));
                if (!eq)
                        return errmsg(err, errlen, -EINVAL, "%s line %u: neither [Section] nor Key=Value", name, line);
                if (!section[0])
                        return errmsg(err, errlen, -EINVAL, "%s line %u: a setting before any [Section]", name, line);
                const char *ke = eq;
                while (ke > l && (ke[-1] == ' ' || ke[-1] == '\t'))
                        ke--;
                char key[64], value[2048];
                size_t kn = (size_t) (ke - l);
                if (kn == 0 || kn >= sizeof key)
                        return errmsg(err, errlen, -EINVAL, "%s line %u: no key before '='", name, line);
                for (const char *c = l; c < ke; c++)
                        if (!isalnum((unsigned char) *c))
                                return errmsg(err, errlen, -EINVAL, "%s line %u: \"%.*s\" is not a key", name, line,
                                              (int) kn, l);
                memcpy(key, l, kn);
                key[kn] = '\0';
                const char *v = eq + 1;
                while (v < end && (*v == ' ' || *v == '\t'))
                        v++;
                size_t vn = (size_t) (end - v);
                if (vn >= sizeof value)
                        return errmsg(err, errlen, -EINVAL, "%s line %u: the value is too long", name, line);
                memcpy(value, v, vn);
                value[vn] = '\0';
                if (strcmp(section, "Match") == 0 && vn > 0)
                        have_match_key = true;
                const char *why = vn ? value_error(k, section, key, value) : NULL;
                if (why)
                        return errmsg(err, errlen, -EINVAL, "%s line %u: %s=%.64s %s", name, line, key, value, why);
        }
        if (!any_section)
                return errmsg(err, errlen, -EINVAL, "%s: no [Section]", name);
        if (k != K_NETDEV && !have_match_key)
                return errmsg(err, errlen, -EINVAL,
                              "%s: no [Match] setting (MACAddress=, Name=, ...): it would apply to every NIC", name);
        return 0;
}

/* ---- the set ------------------------------------------------------------------ */

void staticnet_free(struct staticnet *sn) {
        if (!sn)
                return;
        for (size_t i = 0; i < sn->n; i++) {
                struct staticnet_host *h = &sn->hosts[i];
                for (size_t j = 0; j < h->n_files; j++) {
                        free(h->files[j].name);
                        free(h->files[j].text);
                }
                free(h->files);
                free(h->macs);
        }
        free(sn->hosts);
        sn->hosts = NULL;
        sn->n = 0;
}

static int cmp_file(const void *a, const void *b) {
        return strcmp(((const struct staticnet_file *) a)->name, ((const struct staticnet_file *) b)->name);
}

/* Entry i, for messages: "static_network[i] (MAC)". */
static const char *who(const struct staticnet_host *h, size_t i, char *buf, size_t n) {
        snprintf(buf, n, "static_network[%zu]%s%s%s", i, h->n_macs ? " (" : "", h->n_macs ? h->macs[0] : "",
                 h->n_macs ? ")" : "");
        return buf;
}

static int host_from_json(json_object *e, size_t i, struct staticnet_host *h, char *err, size_t errlen) {
        char w[64], why[512];
        json_object *macs, *files;
        if (!json_object_is_type(e, json_type_object))
                return errmsg(err, errlen, -EINVAL, "static_network[%zu] is not an object", i);
        json_object_object_foreach(e, key, val) {
                (void) val;
                if (strcmp(key, "mac_addresses") && strcmp(key, "files"))
                        return errmsg(err, errlen, -EINVAL, "static_network[%zu]: unknown member \"%.64s\"", i, key);
        }
        if (!json_object_object_get_ex(e, "mac_addresses", &macs) || !json_object_is_type(macs, json_type_array) ||
            json_object_array_length(macs) == 0 || json_object_array_length(macs) > STATICNET_MAX_MACS)
                return errmsg(err, errlen, -EINVAL, "static_network[%zu]: mac_addresses must be an array of 1 to %d MACs",
                              i, STATICNET_MAX_MACS);
        size_t nm = json_object_array_length(macs);
        if (!(h->macs = calloc(nm, sizeof *h->macs)))
                return -ENOMEM;
        for (size_t j = 0; j < nm; j++) {
                json_object *m = json_object_array_get_idx(macs, j);
                if (!json_object_is_type(m, json_type_string) ||
                    !staticnet_mac_canonical(json_object_get_string(m), h->macs[j]))
                        return errmsg(err, errlen, -EINVAL,
                                      "static_network[%zu]: mac_addresses[%zu] is not a MAC address (xx:xx:xx:xx:xx:xx)",
                                      i, j);
                for (size_t k = 0; k < j; k++)
                        if (strcmp(h->macs[k], h->macs[j]) == 0)
                                return errmsg(err, errlen, -EINVAL, "static_network[%zu]: %s is listed twice", i,
                                              h->macs[j]);
                h->n_macs++;
        }
        if (!json_object_object_get_ex(e, "files", &files) || !json_object_is_type(files, json_type_object) ||
            json_object_object_length(files) == 0 || json_object_object_length(files) > STATICNET_MAX_FILES)
                return errmsg(err, errlen, -EINVAL, "%s: files must be an object of 1 to %d NAME: TEXT",
                              who(h, i, w, sizeof w), STATICNET_MAX_FILES);
        if (!(h->files = calloc((size_t) json_object_object_length(files), sizeof *h->files)))
                return -ENOMEM;
        json_object_object_foreach(files, name, text) {
                if (!json_object_is_type(text, json_type_string))
                        return errmsg(err, errlen, -EINVAL, "%s: files[\"%.64s\"] is not text", who(h, i, w, sizeof w),
                                      name);
                if (staticnet_check_file(name, json_object_get_string(text), why, sizeof why) < 0)
                        return errmsg(err, errlen, -EINVAL, "%s: %s", who(h, i, w, sizeof w), why);
                struct staticnet_file *f = &h->files[h->n_files];
                if (!(f->name = strdup(name)) || !(f->text = strdup(json_object_get_string(text))))
                        return -ENOMEM;
                h->n_files++;
        }
        qsort(h->files, h->n_files, sizeof *h->files, cmp_file);
        return 0;
}

int staticnet_from_json(json_object *v, struct staticnet *out, char *err, size_t errlen) {
        memset(out, 0, sizeof *out);
        if (!json_object_is_type(v, json_type_array))
                return errmsg(err, errlen, -EINVAL, "static_network must be an array");
        size_t n = json_object_array_length(v);
        if (n > STATICNET_MAX_HOSTS)
                return errmsg(err, errlen, -EINVAL, "static_network holds more than %d hosts", STATICNET_MAX_HOSTS);
        if (n && !(out->hosts = calloc(n, sizeof *out->hosts)))
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; r == 0 && i < n; i++) {
                r = host_from_json(json_object_array_get_idx(v, i), i, &out->hosts[i], err, errlen);
                out->n = i + 1;
                /* A MAC in one entry only: which config would it get? */
                for (size_t j = 0; r == 0 && j < i; j++)
                        for (size_t a = 0; r == 0 && a < out->hosts[i].n_macs; a++)
                                if (staticnet_find(&(struct staticnet) { &out->hosts[j], 1 }, out->hosts[i].macs[a]))
                                        r = errmsg(err, errlen, -EINVAL,
                                                   "static_network[%zu]: %s is also in static_network[%zu]", i,
                                                   out->hosts[i].macs[a], j);
        }
        if (r < 0)
                staticnet_free(out);
        return r;
}

int staticnet_parse(const char *text, struct staticnet *out, char *err, size_t errlen) {
        memset(out, 0, sizeof *out);
        _cleanup_json_tokener_ json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        size_t len = text ? strlen(text) : 0;
        if (len > INT32_MAX)
                return errmsg(err, errlen, -EINVAL, "static_network is too large");
        json_object *v = json_tokener_parse_ex(tok, text ? text : "", (int) len);
        if (!v || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
                json_object_put(v);
                return errmsg(err, errlen, -EINVAL, "static_network is not JSON");
        }
        int r = staticnet_from_json(v, out, err, errlen);
        json_object_put(v);
        return r;
}

json_object *staticnet_to_json(const struct staticnet *sn) {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; arr && i < sn->n; i++) {
                const struct staticnet_host *h = &sn->hosts[i];
                json_object *e = json_object_new_object(), *macs = json_object_new_array(),
                            *files = json_object_new_object();
                bool ok = e && macs && files;
                for (size_t j = 0; ok && j < h->n_macs; j++)
                        ok = json_object_array_add(macs, json_object_new_string(h->macs[j])) == 0;
                for (size_t j = 0; ok && j < h->n_files; j++)
                        ok = json_object_object_add(files, h->files[j].name,
                                                    json_object_new_string(h->files[j].text)) == 0;
                if (ok && json_object_object_add(e, "mac_addresses", macs) == 0) {
                        macs = NULL;
                        if (json_object_object_add(e, "files", files) == 0) {
                                files = NULL;
                                ok = json_object_array_add(arr, e) == 0;
                                if (ok)
                                        e = NULL;
                        } else
                                ok = false;
                } else
                        ok = false;
                json_object_put(e);
                json_object_put(macs);
                json_object_put(files);
                if (!ok) {
                        json_object_put(arr);
                        return NULL;
                }
        }
        return arr;
}

const struct staticnet_host *staticnet_find(const struct staticnet *sn, const char *mac) {
        for (size_t i = 0; i < sn->n; i++)
                for (size_t j = 0; j < sn->hosts[i].n_macs; j++)
                        if (strcmp(sn->hosts[i].macs[j], mac) == 0)
                                return &sn->hosts[i];
        return NULL;
}
