/* musterd's configuration file (config.h): a table of known keys, each with
 * its section, type, limits and place in struct muster_config, and a strict
 * line parser over it. */
#include "domain/config.h"

#include <ctype.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "log.h"
#include "confline.h"
#include "domain/opcleanup.h"

#define KIB (INT64_C(1) << 10)
#define MIB (INT64_C(1) << 20)
#define GIB (INT64_C(1) << 30)
#define GB INT64_C(1000000000)
#define MAX_FILE_BYTES (1 << 20)
#define MAX_LINE 4096

enum section {
        SEC_NONE,
        SEC_SERVER,
        SEC_MONITOR,
        SEC_AGENT,
        SEC_REQUIREMENTS,
        SEC_REQ_MASTER,
        SEC_REQ_WORKER,
        SEC_REQ_SNO,
        SEC_REQ_ANY,
        SEC_NTP,
        SEC_ISO,
        SEC_VALIDATIONS,
        SEC_METRICS,
        SEC_RELEASES,
        SEC_INFRA_ENV,
        SEC_EVENTS,
        SEC_NETWORK,
        SEC_DNS,
        SEC_ADDONS,
        SEC_CLEANUP,
        SEC_LOGS,
        SEC_LOG,
        _SEC_MAX,
};

static const char *const section_names[_SEC_MAX] = {
        [SEC_NONE] = "",
        [SEC_SERVER] = "server",
        [SEC_MONITOR] = "monitor",
        [SEC_AGENT] = "agent",
        [SEC_REQUIREMENTS] = "requirements",
        [SEC_REQ_MASTER] = "requirements.master",
        [SEC_REQ_WORKER] = "requirements.worker",
        [SEC_REQ_SNO] = "requirements.sno",
        [SEC_REQ_ANY] = "requirements.any",
        [SEC_NTP] = "ntp",
        [SEC_ISO] = "iso",
        [SEC_VALIDATIONS] = "validations",
        [SEC_METRICS] = "metrics",
        [SEC_RELEASES] = "releases",
        [SEC_INFRA_ENV] = "infraenv",
        [SEC_EVENTS] = "events",
        [SEC_NETWORK] = "network",
        [SEC_DNS] = "dns",
        [SEC_ADDONS] = "addons",
        [SEC_CLEANUP] = "cleanup",
        [SEC_LOGS] = "logs",
        [SEC_LOG] = "log",
};

enum key_type {
        KT_LISTEN,     /* HOST:PORT */
        KT_ABS_PATH,   /* absolute path */
        KT_STORE,      /* store locator */
        KT_INT,        /* plain integer */
        KT_SIZE,       /* bytes with suffix */
        KT_SECONDS,    /* duration, whole seconds; bare = seconds */
        KT_MILLIS,     /* duration in ms; bare = ms */
        KT_URL,        /* http:// or https:// URL */
        KT_ABS_PATH_OR_EMPTY, /* absolute path, or "" for none */
        KT_VALIDATIONS, /* comma-separated validation ids */
        KT_BOOL,       /* true/false, yes/no, on/off, 1/0 */
        KT_NAMES,      /* host names or IP addresses separated by commas */
        KT_TLS_PRIORITIES, /* a GnuTLS priority string */
        KT_LOG_FORMAT, /* text or json (log_format_from_string) */
        KT_LOG_LEVEL,  /* error, warning, info or debug (log_level_from_string) */
};

struct key_def {
        enum section section;
        const char *key;
        enum key_type type;
        size_t offset;
        size_t size;   /* of char[] targets */
        int64_t min, max;
};

#define F(field) offsetof(struct muster_config, field), sizeof(((struct muster_config *) 0)->field)
#define REQ(sec, prof)                                                                         \
        { sec, "cpu_cores", KT_INT, F(req[prof].cpu_cores), 1, 8192 },                          \
        { sec, "memory", KT_SIZE, F(req[prof].memory_bytes), MIB, INT64_C(1) << 50 },          \
        { sec, "disk", KT_SIZE, F(req[prof].disk_bytes), MIB, INT64_C(1) << 55 }

static const struct key_def keys[] = {
        { SEC_SERVER, "listen", KT_LISTEN, F(listen), 0, 0 },
        { SEC_SERVER, "tls_cert", KT_ABS_PATH_OR_EMPTY, F(tls_cert), 0, 0 },
        { SEC_SERVER, "tls_key", KT_ABS_PATH_OR_EMPTY, F(tls_key), 0, 0 },
        { SEC_SERVER, "tls_names", KT_NAMES, F(tls_names), 0, 0 },
        { SEC_SERVER, "tls_priorities", KT_TLS_PRIORITIES, F(tls_priorities), 0, 0 },
        { SEC_SERVER, "insecure_http", KT_BOOL, F(insecure_http), 0, 0 },
        { SEC_SERVER, "openapi_file", KT_ABS_PATH_OR_EMPTY, F(openapi_file), 0, 0 },
        { SEC_SERVER, "state_dir", KT_ABS_PATH, F(state_dir), 0, 0 },
        { SEC_SERVER, "store", KT_STORE, F(store), 0, 0 },
        { SEC_SERVER, "max_body_bytes", KT_SIZE, F(max_body_bytes), KIB, GIB },
        { SEC_SERVER, "max_inventory_bytes", KT_SIZE, F(max_inventory_bytes), KIB, GIB },
        { SEC_SERVER, "max_page_size", KT_INT, F(max_page_size), 1, 100000 },
        { SEC_SERVER, "max_release_bytes", KT_SIZE, F(max_release_bytes), KIB, GIB },
        { SEC_SERVER, "max_body_memory", KT_SIZE, F(max_body_memory), MIB, 64 * GIB },
        { SEC_SERVER, "max_connections_per_address", KT_INT, F(max_connections_per_address), 0, 1000000 },
        { SEC_SERVER, "threads", KT_INT, F(threads), 1, 256 },
        { SEC_SERVER, "header_timeout", KT_SECONDS, F(header_timeout_s), 1, 3600 },
        { SEC_MONITOR, "host_disconnect_timeout", KT_SECONDS, F(host_disconnect_timeout_s), 1, 86400 },
        { SEC_MONITOR, "monitor_interval", KT_SECONDS, F(monitor_interval_s), 1, 3600 },
        { SEC_MONITOR, "first_boot_timeout", KT_SECONDS, F(first_boot_timeout_s), 1, 7 * 86400 },
        { SEC_ADDONS, "interval", KT_SECONDS, F(addons_interval_s), 1, 3600 },
        { SEC_CLEANUP, "interval", KT_SECONDS, F(cleanup_interval_s), 1, 3600 },
        { SEC_CLEANUP, "timeout", KT_SECONDS, F(cleanup_timeout_s), 1, 7 * 24 * 3600 },
        { SEC_AGENT, "instruction_interval", KT_SECONDS, F(instruction_interval_s), 1, 3600 },
        { SEC_AGENT, "inventory_every", KT_INT, F(inventory_every), 1, 10000 },
        REQ(SEC_REQ_MASTER, REQ_MASTER),
        REQ(SEC_REQ_WORKER, REQ_WORKER),
        REQ(SEC_REQ_SNO, REQ_SNO),
        REQ(SEC_REQ_ANY, REQ_ANY),
        { SEC_REQUIREMENTS, "install_disk_fsync_ms", KT_MILLIS, F(install_disk_fsync_ms), 1, 60000 },
        { SEC_NTP, "max_offset_ms", KT_MILLIS, F(ntp_max_offset_ms), 1, 3600000 },
        { SEC_NETWORK, "max_latency_ms", KT_MILLIS, F(network_max_latency_ms), 1, 60000 },
        { SEC_NETWORK, "max_packet_loss_pct", KT_INT, F(network_max_packet_loss_pct), 0, 100 },
        { SEC_NETWORK, "mtu_check", KT_BOOL, F(network_mtu_check), 0, 0 },
        { SEC_NETWORK, "min_mtu", KT_INT, F(network_min_mtu), 0, 65535 },
        { SEC_DNS, "require_api_int", KT_BOOL, F(dns_require_api_int), 0, 0 },
        { SEC_DNS, "require_apps", KT_BOOL, F(dns_require_apps), 0, 0 },
        { SEC_ISO, "template", KT_ABS_PATH, F(iso_template), 0, 0 },
        { SEC_ISO, "coordinator_url", KT_URL, F(iso_coordinator_url), 0, 0 },
        { SEC_ISO, "ca_file", KT_ABS_PATH_OR_EMPTY, F(iso_ca_file), 0, 0 },
        { SEC_VALIDATIONS, "ignore", KT_VALIDATIONS, F(validations_ignored), 0, 0 },
        { SEC_METRICS, "public", KT_BOOL, F(metrics_public), 0, 0 },
        { SEC_RELEASES, "image_dir", KT_ABS_PATH_OR_EMPTY, F(releases_image_dir), 0, 0 },
        { SEC_INFRA_ENV, "max_hosts", KT_INT, F(infra_env_max_hosts), 1, 10000000 },
        { SEC_INFRA_ENV, "register_burst", KT_INT, F(infra_env_register_burst), 1, 1000000 },
        { SEC_INFRA_ENV, "register_interval", KT_MILLIS, F(infra_env_register_interval_ms), 1, 3600000 },
        { SEC_EVENTS, "max_age", KT_SECONDS, F(events_max_age_s), 60, INT64_C(10) * 366 * 86400 },
        { SEC_EVENTS, "max_per_host", KT_INT, F(events_max_per_host), 10, 10000000 },
        { SEC_LOGS, "max_upload_bytes", KT_SIZE, F(logs_max_upload_bytes), 64 * KIB, GIB },
        { SEC_LOGS, "keep_per_host", KT_INT, F(logs_keep_per_host), 1, 100 },
        { SEC_LOG, "format", KT_LOG_FORMAT, F(log_format), 0, 0 },
        { SEC_LOG, "level", KT_LOG_LEVEL, F(log_level), 0, 0 },
        { SEC_EVENTS, "audit_max_age", KT_SECONDS, F(events_audit_max_age_s), 86400, INT64_C(10) * 366 * 86400 },
};
#define N_KEYS (sizeof keys / sizeof *keys)
_Static_assert(N_KEYS <= 64, "seen-key bitmask is 64 bits");
_Static_assert(_VAL_MAX <= 64, "[validations] ignore is a 64-bit mask");

const char *req_profile_to_string(enum req_profile p) {
        switch (p) {
        case REQ_MASTER: return "master";
        case REQ_WORKER: return "worker";
        case REQ_SNO: return "single-node";
        case REQ_ANY: return "any host";
        case _REQ_MAX:
                break;
        }
        return NULL;
}

void config_defaults(struct muster_config *cfg) {
        memset(cfg, 0, sizeof *cfg);
        snprintf(cfg->listen, sizeof cfg->listen, "0.0.0.0:8090");
        snprintf(cfg->state_dir, sizeof cfg->state_dir, "/var/lib/muster");
        snprintf(cfg->openapi_file, sizeof cfg->openapi_file, "%s", CONFIG_DEFAULT_OPENAPI_FILE);
        cfg->store[0] = '\0';
        cfg->max_body_bytes = 4 * MIB;
        cfg->max_inventory_bytes = 2 * MIB;
        cfg->max_page_size = 1000;
        cfg->max_release_bytes = 64 * MIB;
        cfg->max_body_memory = 192 * MIB;
        cfg->logs_max_upload_bytes = 32 * MIB;
        cfg->logs_keep_per_host = 3;
        snprintf(cfg->log_format, sizeof cfg->log_format, "text");
        snprintf(cfg->log_level, sizeof cfg->log_level, "info");
        cfg->max_connections_per_address = 64;
        cfg->threads = 16;
        cfg->header_timeout_s = 30;
        cfg->host_disconnect_timeout_s = 180;
        cfg->first_boot_timeout_s = 3600;
        cfg->monitor_interval_s = 10;
        cfg->addons_interval_s = 5;
        cfg->cleanup_interval_s = 5;
        cfg->cleanup_timeout_s = CLEANUP_DEFAULT_TIMEOUT_S;
        cfg->instruction_interval_s = 60;
        cfg->inventory_every = 10;
        cfg->req[REQ_MASTER] = (struct role_requirements) { 4, 16 * GIB, 100 * GB };
        cfg->req[REQ_WORKER] = (struct role_requirements) { 2, 8 * GIB, 100 * GB };
        cfg->req[REQ_SNO] = (struct role_requirements) { 8, 16 * GIB, 100 * GB };
        cfg->req[REQ_ANY] = cfg->req[REQ_WORKER];
        cfg->install_disk_fsync_ms = 10;
        cfg->ntp_max_offset_ms = 500;
        cfg->network_max_latency_ms = 100;
        cfg->network_max_packet_loss_pct = 0;
        cfg->network_mtu_check = true;
        cfg->network_min_mtu = 0;
        cfg->dns_require_api_int = true;
        cfg->dns_require_apps = true;
        snprintf(cfg->iso_template, sizeof cfg->iso_template, "%s", CONFIG_DEFAULT_ISO_TEMPLATE);
        cfg->infra_env_max_hosts = 10000;
        cfg->infra_env_register_burst = 200;
        cfg->infra_env_register_interval_ms = 100;
        cfg->events_max_age_s = 30 * 86400;
        cfg->events_max_per_host = 1000;
        cfg->events_audit_max_age_s = 366 * 86400;
}

enum req_profile config_profile_for(bool bound, bool single_node, enum host_role role) {
        if (!bound)
                return REQ_ANY;
        if (single_node)
                return REQ_SNO;
        return role == ROLE_MASTER ? REQ_MASTER : REQ_WORKER;
}

/* Digits only, no sign, no overflow. Returns the end of the digits or NULL. */
static const char *parse_u64(const char *s, int64_t *v) {
        int64_t n = 0;

        if (!isdigit((unsigned char) *s))
                return NULL;
        for (; isdigit((unsigned char) *s); s++) {
                int d = *s - '0';
                if (n > (INT64_MAX - d) / 10)
                        return NULL;
                n = n * 10 + d;
        }
        *v = n;
        return s;
}

static int scaled(int64_t n, int64_t mult, int64_t *out) {
        if (n > INT64_MAX / mult)
                return -ERANGE;
        *out = n * mult;
        return 0;
}

int config_parse_size(const char *s, int64_t *bytes) {
        static const struct { const char *suffix; int64_t mult; } units[] = {
                { "b", 1 },
                { "kb", INT64_C(1000) }, { "mb", INT64_C(1000000) },
                { "gb", GB }, { "tb", GB * 1000 },
                { "kib", KIB }, { "mib", MIB }, { "gib", GIB }, { "tib", GIB * 1024 },
        };
        int64_t n;
        const char *end = parse_u64(s, &n);

        if (!end) /* tell a too-big number from a non-number */
                return isdigit((unsigned char) *s) ? -ERANGE : -EINVAL;
        if (*end == '\0')
                return scaled(n, 1, bytes);
        if (*end == ' ')
                end++;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++)
                if (strcasecmp(end, units[i].suffix) == 0)
                        return scaled(n, units[i].mult, bytes);
        return -EINVAL;
}

int config_parse_duration_ms(const char *s, int64_t bare_unit_ms, int64_t *ms) {
        static const struct { const char *suffix; int64_t mult; } units[] = {
                { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
        };
        int64_t n;
        const char *end = parse_u64(s, &n);

        if (!end)
                return isdigit((unsigned char) *s) ? -ERANGE : -EINVAL;
        if (*end == '\0')
                return scaled(n, bare_unit_ms, ms);
        if (*end == ' ')
                end++;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++)
                if (strcmp(end, units[i].suffix) == 0)
                        return scaled(n, units[i].mult, ms);
        return -EINVAL;
}

static int fail(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t errlen, const char *name, unsigned line, const char *fmt, ...) {
        va_list ap;
        int n;

        if (!err || errlen == 0)
                return -EINVAL;
        n = line ? snprintf(err, errlen, "%s:%u: ", name, line) : snprintf(err, errlen, "%s: ", name);
        if (n < 0 || (size_t) n >= errlen)
                return -EINVAL;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t) n, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static bool valid_listen(const char *v) {
        const char *colon = strrchr(v, ':');
        int64_t port;
        const char *end;

        if (!colon || colon == v)
                return false;
        if (v[0] == '[' && colon[-1] != ']')
                return false;
        if (v[0] != '[' && memchr(v, ':', (size_t) (colon - v)))
                return false; /* a bare IPv6 address needs brackets */
        end = parse_u64(colon + 1, &port);
        return end && *end == '\0' && port >= 1 && port <= 65535;
}

static bool valid_store(const char *v) {
        return v[0] == '\0' || v[0] == '/' || strncmp(v, "sqlite:", 7) == 0 ||
               strncmp(v, "postgres://", 11) == 0 || strncmp(v, "postgresql://", 13) == 0;
}

/* Names separated by commas (spaces around them allowed): each 1 to 253
 * of [A-Za-z0-9.:-] (the daemon checks each as a DNS name or an IP
 * address when it issues its certificate). */
static bool valid_names(const char *v) {
        size_t len = 0;
        for (const char *p = v;; p++) {
                if (*p == ',' || !*p) {
                        if (len == 0 && *p)
                                return false;
                        if (!*p)
                                return true;
                        len = 0;
                } else if (*p == ' ') {
                        continue;
                } else if (isalnum((unsigned char) *p) || *p == '.' || *p == ':' || *p == '-') {
                        if (++len > 253)
                                return false;
                } else {
                        return false;
                }
        }
}

/* Whether GnuTLS takes v as a priority string (it refuses one that leaves
 * no TLS version or cipher suite); else false with why, naming where
 * GnuTLS stopped reading a word it does not know. */
static bool valid_tls_priorities(const char *v, char *why, size_t whylen) {
        gnutls_priority_t p = NULL;
        const char *at = NULL;
        int g = gnutls_priority_init(&p, v, &at);
        if (g >= 0) {
                gnutls_priority_deinit(p);
                return true;
        }
        if (g == GNUTLS_E_INVALID_REQUEST && at && at >= v && at <= v + strlen(v))
                snprintf(why, whylen, "GnuTLS rejects it at character %zu ('%s'): %s", (size_t) (at - v) + 1, at,
                         gnutls_strerror(g));
        else
                snprintf(why, whylen, "GnuTLS rejects it: %s", gnutls_strerror(g));
        return false;
}

/* Whether v suits the text type t (the types is_text names). */
static bool text_is_valid(enum key_type t, const char *v) {
        switch (t) {
        case KT_LISTEN: return valid_listen(v);
        case KT_ABS_PATH: return v[0] == '/';
        case KT_STORE: return valid_store(v);
        case KT_URL:
                return (strncmp(v, "http://", 7) == 0 && v[7]) || (strncmp(v, "https://", 8) == 0 && v[8]);
        case KT_ABS_PATH_OR_EMPTY: return v[0] == '\0' || v[0] == '/';
        case KT_NAMES: return valid_names(v);
        case KT_LOG_FORMAT: {
                enum log_format f;
                return log_format_from_string(v, &f) == 0;
        }
        case KT_LOG_LEVEL: {
                enum log_level l;
                return log_level_from_string(v, &l) == 0;
        }
        case KT_TLS_PRIORITIES:
        case KT_INT:
        case KT_SIZE:
        case KT_SECONDS:
        case KT_MILLIS:
        case KT_VALIDATIONS:
        case KT_BOOL:
                break;
        }
        return false;
}

static const char *type_hint(enum key_type t) {
        switch (t) {
        case KT_LISTEN: return "HOST:PORT or [IPV6]:PORT with a port from 1 to 65535";
        case KT_ABS_PATH: return "an absolute path";
        case KT_STORE: return "an absolute path, sqlite:PATH or postgres://...";
        case KT_INT: return "a whole number";
        case KT_SIZE: return "a size such as 512MiB, 16GiB or 100GB";
        case KT_SECONDS: return "a duration in whole seconds such as 180, 3m or 2s";
        case KT_MILLIS: return "a duration such as 10, 10ms or 1s (bare numbers are milliseconds)";
        case KT_URL: return "an http:// or https:// URL";
        case KT_ABS_PATH_OR_EMPTY: return "an absolute path, or nothing";
        case KT_NAMES: return "host names or IP addresses separated by commas";
        case KT_TLS_PRIORITIES: return "a GnuTLS priority string";
        case KT_LOG_FORMAT: return "text or json";
        case KT_LOG_LEVEL: return "error, warning, info or debug";
        case KT_VALIDATIONS: return "validation ids separated by commas";
        case KT_BOOL: return "true or false";
        }
        return "";
}

static void format_limit(enum key_type t, int64_t v, char *buf, size_t n) {
        if (t == KT_SIZE && v % (GIB * 1024) == 0)
                snprintf(buf, n, "%" PRId64 "TiB", v / (GIB * 1024));
        else if (t == KT_SIZE && v % GIB == 0)
                snprintf(buf, n, "%" PRId64 "GiB", v / GIB);
        else if (t == KT_SIZE && v % MIB == 0)
                snprintf(buf, n, "%" PRId64 "MiB", v / MIB);
        else if (t == KT_SIZE && v % KIB == 0)
                snprintf(buf, n, "%" PRId64 "KiB", v / KIB);
        else if (t == KT_SECONDS)
                snprintf(buf, n, "%" PRId64 "s", v);
        else if (t == KT_MILLIS)
                snprintf(buf, n, "%" PRId64 "ms", v);
        else
                snprintf(buf, n, "%" PRId64, v);
}

static int set_value(const struct key_def *k, const char *value, struct muster_config *cfg,
                     char *err, size_t errlen, const char *name, unsigned line) {
        char *base = (char *) cfg + k->offset;
        int64_t v = 0, ms;
        int r = 0;

        switch (k->type) {
        case KT_LISTEN:
        case KT_ABS_PATH:
        case KT_STORE:
        case KT_URL:
        case KT_ABS_PATH_OR_EMPTY:
        case KT_NAMES:
        case KT_LOG_FORMAT:
        case KT_LOG_LEVEL:
                if (!text_is_valid(k->type, value))
                        return fail(err, errlen, name, line, "invalid %s '%s': expected %s",
                                    k->key, value, type_hint(k->type));
                if (strlen(value) >= k->size)
                        return fail(err, errlen, name, line, "%s is too long (at most %zu characters)",
                                    k->key, k->size - 1);
                memcpy(base, value, strlen(value) + 1);
                return 0;
        case KT_TLS_PRIORITIES: {
                char why[512];
                if (strlen(value) >= k->size)
                        return fail(err, errlen, name, line, "%s is too long (at most %zu characters)",
                                    k->key, k->size - 1);
                if (!valid_tls_priorities(value, why, sizeof why))
                        return fail(err, errlen, name, line, "invalid %s '%s': %s", k->key, value, why);
                memcpy(base, value, strlen(value) + 1);
                return 0;
        }
        case KT_VALIDATIONS: {
                uint64_t bits = 0;
                char buf[1024];
                if (strlen(value) >= sizeof buf)
                        return fail(err, errlen, name, line, "%s is too long", k->key);
                memcpy(buf, value, strlen(value) + 1);
                char *save = NULL;
                for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                        t = confline_trim(t);
                        if (!*t)
                                continue;
                        enum validation_id id = validation_id_from_string(t);
                        if (id == _VAL_INVALID)
                                return fail(err, errlen, name, line, "%s: unknown validation id '%s'", k->key, t);
                        bits |= UINT64_C(1) << id;
                }
                memcpy(base, &bits, sizeof bits);
                return 0;
        }
        case KT_BOOL: {
                static const char *const yes[] = { "true", "yes", "on", "1" }, *const no[] = { "false", "no", "off", "0" };
                for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
                        if (strcasecmp(value, yes[i]) == 0 || strcasecmp(value, no[i]) == 0) {
                                *(bool *) base = strcasecmp(value, yes[i]) == 0;
                                return 0;
                        }
                return fail(err, errlen, name, line, "invalid %s '%s': expected %s", k->key, value, type_hint(k->type));
        }
        case KT_INT: {
                const char *end = parse_u64(value, &v);
                r = end && *end == '\0' ? 0 : (end || !isdigit((unsigned char) *value)) ? -EINVAL : -ERANGE;
                break;
        }
        case KT_SIZE:
                r = config_parse_size(value, &v);
                break;
        case KT_SECONDS:
                r = config_parse_duration_ms(value, 1000, &ms);
                if (r == 0 && ms % 1000 != 0)
                        return fail(err, errlen, name, line, "%s '%s' is not a whole number of seconds",
                                    k->key, value);
                v = ms / 1000;
                break;
        case KT_MILLIS:
                r = config_parse_duration_ms(value, 1, &v);
                break;
        }
        if (r < 0 && r != -ERANGE)
                return fail(err, errlen, name, line, "invalid %s '%s': expected %s",
                            k->key, value, type_hint(k->type));
        if (r == -ERANGE || v < k->min || v > k->max) {
                char lo[32], hi[32];
                format_limit(k->type, k->min, lo, sizeof lo);
                format_limit(k->type, k->max, hi, sizeof hi);
                return fail(err, errlen, name, line, "%s '%s' is out of range (%s to %s)",
                            k->key, value, lo, hi);
        }
        memcpy(base, &v, sizeof v);
        return 0;
}

static int parse_line(char *line, const char *name, unsigned lineno, enum section *sec,
                      uint64_t *seen, struct muster_config *cfg, char *err, size_t errlen) {
        struct confline cl;
        enum confline_kind kind = confline_parse(line, CONFLINE_SECTIONS, &cl);

        switch (kind) {
        case CONFLINE_BLANK:
                return 0;
        case CONFLINE_SECTION:
                for (int i = SEC_NONE + 1; i < _SEC_MAX; i++)
                        if (strcmp(cl.key, section_names[i]) == 0) {
                                *sec = (enum section) i;
                                return 0;
                        }
                return fail(err, errlen, name, lineno, "unknown section [%s]", cl.key);
        case CONFLINE_ERR_SECTION:
                return fail(err, errlen, name, lineno, "section header lacks a closing ']'");
        case CONFLINE_ERR_NO_EQUALS:
                return fail(err, errlen, name, lineno, "expected 'key = value' or '[section]'");
        case CONFLINE_ERR_NO_KEY:
                return fail(err, errlen, name, lineno, "missing key before '='");
        case CONFLINE_PAIR:
        case CONFLINE_ERR_QUOTES:
        case CONFLINE_ERR_NO_VALUE:
                break;
        }
        /* A key outside a section is named before what is wrong with its value. */
        if (*sec == SEC_NONE)
                return fail(err, errlen, name, lineno, "key '%s' outside of a [section]", cl.key);
        if (kind == CONFLINE_ERR_QUOTES)
                return fail(err, errlen, name, lineno, "unbalanced quotes in value of '%s'", cl.key);
        if (kind == CONFLINE_ERR_NO_VALUE)
                return fail(err, errlen, name, lineno, "missing value for '%s'", cl.key);

        for (size_t i = 0; i < N_KEYS; i++) {
                if (keys[i].section != *sec || strcmp(keys[i].key, cl.key) != 0)
                        continue;
                if (*seen & (UINT64_C(1) << i))
                        return fail(err, errlen, name, lineno, "duplicate key '%s' in [%s]",
                                    cl.key, section_names[*sec]);
                *seen |= UINT64_C(1) << i;
                return set_value(&keys[i], cl.value, cfg, err, errlen, name, lineno);
        }
        return fail(err, errlen, name, lineno, "unknown key '%s' in [%s]", cl.key, section_names[*sec]);
}

static bool was_seen(uint64_t seen, enum section sec, const char *key) {
        for (size_t i = 0; i < N_KEYS; i++)
                if (keys[i].section == sec && strcmp(keys[i].key, key) == 0)
                        return seen & (UINT64_C(1) << i);
        return false;
}

/* Settings that are fine alone but contradict each other. */
static int cross_check(const struct muster_config *cfg, const char *name, char *err, size_t errlen) {
        if (cfg->monitor_interval_s >= cfg->host_disconnect_timeout_s)
                return fail(err, errlen, name, 0,
                            "[monitor] monitor_interval (%" PRId64 "s) must be shorter than "
                            "host_disconnect_timeout (%" PRId64 "s)",
                            cfg->monitor_interval_s, cfg->host_disconnect_timeout_s);
        if (cfg->max_inventory_bytes > cfg->max_body_bytes)
                return fail(err, errlen, name, 0,
                            "[server] max_inventory_bytes (%" PRId64 ") exceeds max_body_bytes (%" PRId64
                            "): an inventory arrives inside a request body",
                            cfg->max_inventory_bytes, cfg->max_body_bytes);
        int64_t largest = cfg->max_body_bytes > cfg->max_release_bytes ? cfg->max_body_bytes : cfg->max_release_bytes;
        if (cfg->logs_max_upload_bytes > largest)
                largest = cfg->logs_max_upload_bytes;
        if (cfg->max_body_memory <= largest)
                return fail(err, errlen, name, 0,
                            "[server] max_body_memory (%" PRId64 ") must be larger than the largest body a request "
                            "may send (%" PRId64 ": max_body_bytes, max_release_bytes, [logs] max_upload_bytes)",
                            cfg->max_body_memory, largest);
        /* IPv4 links carry at least 576 bytes, IPv6 links 1280. */
        if (cfg->network_min_mtu > 0 && cfg->network_min_mtu < 576)
                return fail(err, errlen, name, 0,
                            "[network] min_mtu (%" PRId64 ") must be 0 (no minimum) or at least 576",
                            cfg->network_min_mtu);
        if (cfg->network_min_mtu > 0 && !cfg->network_mtu_check)
                return fail(err, errlen, name, 0,
                            "[network] min_mtu (%" PRId64 ") needs mtu_check = true: without the probe "
                            "nothing measures the MTU", cfg->network_min_mtu);
        for (int p = 0; p < REQ_ANY; p++) {
                const struct role_requirements *any = &cfg->req[REQ_ANY], *role = &cfg->req[p];
                const char *what = any->cpu_cores > role->cpu_cores ? "cpu_cores"
                                 : any->memory_bytes > role->memory_bytes ? "memory"
                                 : any->disk_bytes > role->disk_bytes ? "disk" : NULL;
                if (what)
                        return fail(err, errlen, name, 0,
                                    "[requirements.any] %s exceeds the %s requirement; "
                                    "the minimum for any host must not be above a role's",
                                    what, req_profile_to_string((enum req_profile) p));
        }
        return 0;
}

int config_parse(const char *text, const char *name, struct muster_config *cfg, char *err, size_t errlen) {
        enum section sec = SEC_NONE;
        uint64_t seen = 0;
        unsigned lineno = 0;
        const char *p = text;
        int r;

        if (err && errlen)
                err[0] = '\0';
        while (*p) {
                char line[MAX_LINE];
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);

                lineno++;
                if (len >= sizeof line)
                        return fail(err, errlen, name, lineno, "line is longer than %d characters", MAX_LINE - 1);
                memcpy(line, p, len);
                line[len] = '\0';
                r = parse_line(line, name, lineno, &sec, &seen, cfg, err, errlen);
                if (r < 0)
                        return r;
                p += len + (nl ? 1 : 0);
        }

        /* [requirements.any] follows worker's minimums for what it leaves unset. */
        if (!was_seen(seen, SEC_REQ_ANY, "cpu_cores"))
                cfg->req[REQ_ANY].cpu_cores = cfg->req[REQ_WORKER].cpu_cores;
        if (!was_seen(seen, SEC_REQ_ANY, "memory"))
                cfg->req[REQ_ANY].memory_bytes = cfg->req[REQ_WORKER].memory_bytes;
        if (!was_seen(seen, SEC_REQ_ANY, "disk"))
                cfg->req[REQ_ANY].disk_bytes = cfg->req[REQ_WORKER].disk_bytes;

        return cross_check(cfg, name, err, errlen);
}

static bool is_text(enum key_type t) {
        switch (t) {
        case KT_LISTEN:
        case KT_ABS_PATH:
        case KT_STORE:
        case KT_URL:
        case KT_ABS_PATH_OR_EMPTY:
        case KT_NAMES:
        case KT_TLS_PRIORITIES:
        case KT_LOG_FORMAT:
        case KT_LOG_LEVEL:
                return true;
        case KT_INT:
        case KT_SIZE:
        case KT_SECONDS:
        case KT_MILLIS:
        case KT_VALIDATIONS:
        case KT_BOOL:
                return false;
        }
        return false;
}

void config_keys(void (*fn)(const char *section, const char *key, void *u), void *u) {
        for (size_t i = 0; i < N_KEYS; i++)
                fn(section_names[keys[i].section], keys[i].key, u);
}

int config_diff(const struct muster_config *a, const struct muster_config *b,
                void (*fn)(const char *section, const char *key, void *u), void *u) {
        int n = 0;

        for (size_t i = 0; i < N_KEYS; i++) {
                const char *pa = (const char *) a + keys[i].offset, *pb = (const char *) b + keys[i].offset;
                /* Text fields: only up to the NUL (a shorter value leaves old bytes behind it). */
                bool same = is_text(keys[i].type) ? strncmp(pa, pb, keys[i].size) == 0
                                                  : memcmp(pa, pb, keys[i].size) == 0;
                if (same)
                        continue;
                n++;
                if (fn)
                        fn(section_names[keys[i].section], keys[i].key, u);
        }
        return n;
}

int config_load(const char *path, struct muster_config *cfg, char *err, size_t errlen) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n;

        config_defaults(cfg);
        if (err && errlen)
                err[0] = '\0';
        f = fopen(path, "re");
        if (!f) {
                int r = -errno;
                fail(err, errlen, path, 0, "cannot open: %s", strerror(-r));
                return r;
        }
        if (fstat(fileno(f), &st) < 0) {
                int r = -errno;
                fail(err, errlen, path, 0, "cannot stat: %s", strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                fail(err, errlen, path, 0, "not a regular file");
                return -EINVAL;
        }
        if (st.st_size > MAX_FILE_BYTES) {
                fail(err, errlen, path, 0, "larger than %d bytes", MAX_FILE_BYTES);
                return -EFBIG;
        }
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        n = fread(buf, 1, (size_t) st.st_size, f);
        if (ferror(f)) {
                fail(err, errlen, path, 0, "read error");
                return -EIO;
        }
        buf[n] = '\0';
        if (strlen(buf) != n) {
                /* Find the line of the NUL for the message. */
                unsigned line = 1;
                for (size_t i = 0; buf[i]; i++)
                        line += buf[i] == '\n';
                return fail(err, errlen, path, line, "NUL byte in line");
        }
        return config_parse(buf, path, cfg, err, errlen);
}
