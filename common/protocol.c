/* Names of the protocol's enums (protocol.h). Switches have no default so
 * the compiler flags a value without a name. */
#include "protocol.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "errmsg.h"

const char *step_type_to_string(enum step_type t) {
        switch (t) {
        case STEP_INVENTORY: return "inventory";
        case STEP_CONNECTIVITY_CHECK: return "connectivity-check";
        case STEP_NTP_SYNCHRONIZER: return "ntp-synchronizer";
        case STEP_DOMAIN_RESOLUTION: return "domain-resolution";
        case STEP_INSTALLATION_DISK_SPEED_CHECK: return "installation-disk-speed-check";
        case STEP_INSTALL: return "install";
        case STEP_LOGS_GATHER: return "logs-gather";
        case STEP_STOP_INSTALLATION: return "stop-installation";
        case STEP_RECLAIM: return "reclaim";
        case _STEP_TYPE_MAX:
        case _STEP_TYPE_INVALID:
                break;
        }
        return NULL;
}

const char *install_stage_to_string(enum install_stage s) {
        switch (s) {
        case INSTALL_STAGE_STARTING: return "starting";
        case INSTALL_STAGE_WRITING_IMAGE: return "writing-image";
        case INSTALL_STAGE_WRITING_PAYLOAD: return "writing-payload";
        case INSTALL_STAGE_REBOOTING: return "rebooting";
        case INSTALL_STAGE_DONE: return "done";
        case _INSTALL_STAGE_MAX:
        case _INSTALL_STAGE_INVALID:
                break;
        }
        return NULL;
}

const char *host_status_to_string(enum host_status s) {
        switch (s) {
        case HOST_DISCOVERING_UNBOUND: return "discovering-unbound";
        case HOST_KNOWN_UNBOUND: return "known-unbound";
        case HOST_INSUFFICIENT_UNBOUND: return "insufficient-unbound";
        case HOST_DISCONNECTED_UNBOUND: return "disconnected-unbound";
        case HOST_BINDING: return "binding";
        case HOST_DISCOVERING: return "discovering";
        case HOST_KNOWN: return "known";
        case HOST_INSUFFICIENT: return "insufficient";
        case HOST_PENDING_FOR_INPUT: return "pending-for-input";
        case HOST_DISCONNECTED: return "disconnected";
        case HOST_PREPARING_FOR_INSTALLATION: return "preparing-for-installation";
        case HOST_INSTALLING: return "installing";
        case HOST_INSTALLING_IN_PROGRESS: return "installing-in-progress";
        case HOST_INSTALLED: return "installed";
        case HOST_ERROR: return "error";
        case HOST_UNBINDING_PENDING_USER_ACTION: return "unbinding-pending-user-action";
        case HOST_RESETTING_PENDING_USER_ACTION: return "resetting-pending-user-action";
        case _HOST_STATUS_MAX:
        case _HOST_STATUS_INVALID:
                break;
        }
        return NULL;
}

const char *validation_id_to_string(enum validation_id v) {
        switch (v) {
        case VAL_CONNECTED: return "connected";
        case VAL_HAS_INVENTORY: return "has-inventory";
        case VAL_HAS_MIN_CPU_CORES: return "has-min-cpu-cores";
        case VAL_HAS_MIN_MEMORY: return "has-min-memory";
        case VAL_HAS_MIN_VALID_DISKS: return "has-min-valid-disks";
        case VAL_HOSTNAME_VALID: return "hostname-valid";
        case VAL_CPU_ARCHITECTURE_MATCHES: return "cpu-architecture-matches";
        case VAL_HAS_CPU_CORES_FOR_ROLE: return "has-cpu-cores-for-role";
        case VAL_HAS_MEMORY_FOR_ROLE: return "has-memory-for-role";
        case VAL_HOSTNAME_UNIQUE: return "hostname-unique";
        case VAL_BELONGS_TO_MACHINE_CIDR: return "belongs-to-machine-cidr";
        case VAL_BELONGS_TO_MAJORITY_GROUP: return "belongs-to-majority-group";
        case VAL_SUFFICIENT_NETWORK_LATENCY: return "sufficient-network-latency";
        case VAL_SUFFICIENT_PACKET_LOSS: return "sufficient-packet-loss";
        case VAL_MTU_VALID: return "mtu-valid";
        case VAL_NTP_SYNCED: return "ntp-synced";
        case VAL_SUFFICIENT_INSTALLATION_DISK_SPEED: return "sufficient-installation-disk-speed";
        case VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY: return "api-domain-name-resolved-correctly";
        case VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY: return "api-int-domain-name-resolved-correctly";
        case VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY: return "apps-domain-name-resolved-correctly";
        case VAL_MACHINE_CIDR_DEFINED: return "machine-cidr-defined";
        case VAL_API_VIPS_DEFINED: return "api-vips-defined";
        case VAL_API_VIPS_VALID: return "api-vips-valid";
        case VAL_INGRESS_VIPS_VALID: return "ingress-vips-valid";
        case VAL_DNS_DOMAIN_DEFINED: return "dns-domain-defined";
        case VAL_PULL_SECRET_SET: return "pull-secret-set";
        case VAL_SUFFICIENT_MASTERS_COUNT: return "sufficient-masters-count";
        case VAL_ALL_HOSTS_ARE_READY_TO_INSTALL: return "all-hosts-are-ready-to-install";
        case VAL_CAPABILITIES_VALID: return "capabilities-valid";
        case VAL_OPERATORS_RESOLVABLE: return "operators-resolvable";
        case _VAL_MAX:
        case _VAL_INVALID:
                break;
        }
        return NULL;
}

const char *validation_status_to_string(enum validation_status s) {
        switch (s) {
        case VSTATUS_SUCCESS: return "success";
        case VSTATUS_FAILURE: return "failure";
        case VSTATUS_PENDING: return "pending";
        case VSTATUS_ERROR: return "error";
        case VSTATUS_DISABLED: return "disabled";
        case _VSTATUS_MAX:
        case _VSTATUS_INVALID:
                break;
        }
        return NULL;
}

const char *host_role_to_string(enum host_role r) {
        switch (r) {
        case ROLE_AUTO: return "auto";
        case ROLE_MASTER: return "master";
        case ROLE_WORKER: return "worker";
        case _ROLE_MAX:
        case _ROLE_INVALID:
                break;
        }
        return NULL;
}

int enum_lookup(const char *s, int max, const char *(*name)(int)) {
        for (int i = 0; s && i < max; i++) {
                const char *n = name(i);
                if (n && strcmp(n, s) == 0)
                        return i;
        }
        return -1;
}

static const char *step_name(int i) { return step_type_to_string((enum step_type) i); }
const char *cluster_status_to_string(enum cluster_status s) {
        switch (s) {
        case CLUSTER_PENDING_FOR_INPUT: return "pending-for-input";
        case CLUSTER_INSUFFICIENT: return "insufficient";
        case CLUSTER_READY: return "ready";
        case CLUSTER_PREPARING_FOR_INSTALLATION: return "preparing-for-installation";
        case CLUSTER_INSTALLING: return "installing";
        case CLUSTER_FINALIZING: return "finalizing";
        case CLUSTER_INSTALLED: return "installed";
        case CLUSTER_ERROR: return "error";
        case _CLUSTER_STATUS_MAX:
        case _CLUSTER_STATUS_INVALID:
                break;
        }
        return NULL;
}

static const char *status_name(int i) { return host_status_to_string((enum host_status) i); }
static const char *val_name(int i) { return validation_id_to_string((enum validation_id) i); }
static const char *role_name(int i) { return host_role_to_string((enum host_role) i); }

static const char *stage_name(int i) { return install_stage_to_string((enum install_stage) i); }
enum install_stage install_stage_from_string(const char *s) {
        return (enum install_stage) enum_lookup(s, _INSTALL_STAGE_MAX, stage_name);
}
enum step_type step_type_from_string(const char *s) {
        return (enum step_type) enum_lookup(s, _STEP_TYPE_MAX, step_name);
}
enum host_status host_status_from_string(const char *s) {
        return (enum host_status) enum_lookup(s, _HOST_STATUS_MAX, status_name);
}
const char *cpu_arch_canonical(const char *s) {
        static const char *const names[][2] = {
                { "x86_64", "x86_64" }, { "amd64", "x86_64" }, { "aarch64", "aarch64" },
                { "arm64", "aarch64" }, { "ppc64le", "ppc64le" }, { "s390x", "s390x" },
        };
        for (size_t i = 0; s && i < sizeof names / sizeof *names; i++)
                if (strcmp(s, names[i][0]) == 0)
                        return names[i][1];
        return NULL;
}

int host_status_set_parse(const char *list, uint32_t *set, const char **bad, size_t *bad_len) {
        char name[64];
        *set = 0;
        if (!list)
                return -EINVAL;
        for (const char *p = list;;) {
                size_t n = strcspn(p, ",");
                enum host_status s = _HOST_STATUS_INVALID;
                if (n > 0 && n < sizeof name) {
                        memcpy(name, p, n);
                        name[n] = '\0';
                        s = host_status_from_string(name);
                }
                if (s == _HOST_STATUS_INVALID) {
                        if (bad)
                                *bad = p;
                        if (bad_len)
                                *bad_len = n;
                        return -EINVAL;
                }
                *set |= UINT32_C(1) << s;
                if (!p[n])
                        return 0;
                p += n + 1;
        }
}

static const char *cluster_status_name(int i) { return cluster_status_to_string((enum cluster_status) i); }
enum cluster_status cluster_status_from_string(const char *s) {
        return (enum cluster_status) enum_lookup(s, _CLUSTER_STATUS_MAX, cluster_status_name);
}
enum validation_id validation_id_from_string(const char *s) {
        return (enum validation_id) enum_lookup(s, _VAL_MAX, val_name);
}
enum host_role host_role_from_string(const char *s) {
        return (enum host_role) enum_lookup(s, _ROLE_MAX, role_name);
}

/* ---- names ---------------------------------------------------------------- */

bool dns_name_valid(const char *name, const char *what, char *whybuf, size_t whylen) {
        size_t len;
        const char *label;

        if (!name || !*name) {
                (void) errmsg(whybuf, whylen, 0, "%s is empty", what);
                return false;
        }
        len = strlen(name);
        if (len > 253) {
                (void) errmsg(whybuf, whylen, 0, "%s is %zu characters long, at most 253 are allowed", what, len);
                return false;
        }
        label = name;
        for (const char *p = name;; p++) {
                if (*p == '.' || *p == '\0') {
                        size_t l = (size_t) (p - label);
                        if (l == 0) {
                                (void) errmsg(whybuf, whylen, 0, "%s has an empty label (leading, trailing or double dot)", what);
                                return false;
                        }
                        if (l > 63) {
                                (void) errmsg(whybuf, whylen, 0, "a label of the %s is %zu characters long, at most 63 are allowed",
                                    what, l);
                                return false;
                        }
                        if (label[0] == '-' || p[-1] == '-') {
                                (void) errmsg(whybuf, whylen, 0, "label '%.*s' of the %s starts or ends with '-'", (int) l, label,
                                    what);
                                return false;
                        }
                        if (*p == '\0')
                                return true;
                        label = p + 1;
                        continue;
                }
                unsigned char c = (unsigned char) *p;
                if (isupper(c)) {
                        (void) errmsg(whybuf, whylen, 0, "%s contains upper-case letters; node names must be lower case", what);
                        return false;
                }
                if (!(islower(c) || isdigit(c) || c == '-')) {
                        if (isgraph(c))
                                (void) errmsg(whybuf, whylen, 0, "%s contains '%c'; only a-z, 0-9, '-' and '.' are allowed", what, c);
                        else
                                (void) errmsg(whybuf, whylen, 0, "%s contains byte 0x%02x; only a-z, 0-9, '-' and '.' are allowed",
                                    what, c);
                        return false;
                }
        }
}

int ntp_source_split(const char *s, char *host, size_t hostlen, uint16_t *port) {
        const char *h = s, *hend, *ps = NULL;
        *port = 0;
        if (*s == '[') {
                h = s + 1;
                hend = strchr(h, ']');
                if (!hend)
                        return -EINVAL;
                if (hend[1] == ':')
                        ps = hend + 2;
                else if (hend[1] != '\0')
                        return -EINVAL;
        } else {
                const char *c = strchr(s, ':');
                if (c && !strchr(c + 1, ':')) { /* exactly one colon: a port */
                        hend = c;
                        ps = c + 1;
                } else {
                        hend = s + strlen(s);
                }
        }
        size_t hl = (size_t) (hend - h);
        if (hl == 0 || hl >= hostlen)
                return -EINVAL;
        memcpy(host, h, hl);
        host[hl] = '\0';
        if (ps) {
                int v = 0;
                if (!*ps || strlen(ps) > 5)
                        return -EINVAL;
                for (const char *c = ps; *c; c++) {
                        if (*c < '0' || *c > '9')
                                return -EINVAL;
                        v = v * 10 + (*c - '0');
                }
                if (v < 1 || v > 65535)
                        return -EINVAL;
                *port = (uint16_t) v;
        }
        return 0;
}

bool proxy_url_is_valid(const char *s) {
        if (!s || strlen(s) > PROXY_URL_MAX)
                return false;
        const char *h;
        if (strncasecmp(s, "http://", 7) == 0)
                h = s + 7;
        else if (strncasecmp(s, "https://", 8) == 0)
                h = s + 8;
        else
                return false;
        for (const char *p = s; *p; p++)
                if ((unsigned char) *p <= 0x20 || (unsigned char) *p >= 0x7f || *p == '?' || *p == '#' || *p == '\\')
                        return false;
        const char *at = strrchr(h, '@');
        if (at)
                h = at + 1;
        size_t n = strcspn(h, "/");
        if (h[n] && strcmp(h + n, "/") != 0)
                return false; /* a path: not a proxy */
        /* host[:port] or [v6][:port] */
        char hostport[300], host[256];
        if (n == 0 || n >= sizeof hostport)
                return false;
        memcpy(hostport, h, n);
        hostport[n] = '\0';
        uint16_t port;
        if (ntp_source_split(hostport, host, sizeof host, &port) < 0)
                return false;
        unsigned char b[16];
        if (inet_pton(AF_INET, host, b) == 1 || inet_pton(AF_INET6, host, b) == 1)
                return true;
        for (char *c = host; *c; c++)
                *c = (char) tolower((unsigned char) *c);
        return dns_name_valid(host, "proxy", NULL, 0);
}

bool no_proxy_is_valid(const char *s) {
        if (!s || !*s || strlen(s) > PROXY_URL_MAX)
                return false;
        if (strcmp(s, "*") == 0)
                return true;
        for (const char *e = s;;) {
                size_t n = strcspn(e, ",");
                if (n == 0)
                        return false;
                for (size_t i = 0; i < n; i++) {
                        char ch = e[i];
                        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                                  ch == '.' || ch == '-' || ch == ':' || ch == '/' || ch == '[' || ch == ']' ||
                                  ch == '_';
                        if (!ok)
                                return false;
                }
                if (!e[n])
                        return true;
                e += n + 1;
        }
}

bool ntp_source_is_valid(const char *s) {
        char host[256];
        uint16_t port;
        unsigned char b[16];
        if (!s || ntp_source_split(s, host, sizeof host, &port) < 0)
                return false;
        if (inet_pton(AF_INET, host, b) == 1 || inet_pton(AF_INET6, host, b) == 1)
                return true;
        /* A DNS name in any case. */
        for (char *c = host; *c; c++)
                *c = (char) tolower((unsigned char) *c);
        return dns_name_valid(host, "NTP source", NULL, 0);
}
