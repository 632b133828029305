/* musterd's configuration file: "key = value" lines under [section] headers,
 * '#' comments. Parsed strictly: an unknown section or key, a repeated key or
 * a bad value is an error naming file:line, so a typo never passes silently. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

#define CONFIG_DEFAULT_PATH "/etc/muster/musterd.conf"

#define CONFIG_LISTEN_MAX 256
#define CONFIG_PATH_MAX 4096
#define CONFIG_URL_MAX 2048
#define CONFIG_DEFAULT_ISO_TEMPLATE "/usr/share/muster/muster-discovery.iso"
#define CONFIG_DEFAULT_OPENAPI_FILE "/usr/share/muster/openapi.yaml"

/* Hardware minimums of one requirement profile (DESIGN §5). */
struct role_requirements {
        int64_t cpu_cores;    /* logical CPUs */
        int64_t memory_bytes; /* physical memory */
        int64_t disk_bytes;   /* installation disk size */
};

/* Which [requirements.*] section applies. ANY is the minimum every host must
 * meet, bound or not; unless set, each of its keys is worker's value. */
enum req_profile { REQ_MASTER, REQ_WORKER, REQ_SNO, REQ_ANY, _REQ_MAX };
const char *req_profile_to_string(enum req_profile p);

struct muster_config {
        /* [server] */
        char listen[CONFIG_LISTEN_MAX];   /* "HOST:PORT" or "[V6]:PORT" */
        char state_dir[CONFIG_PATH_MAX];
        /* HTTPS (DECISIONS.md D2): an operator's own certificate and key (PEM; both
         * or neither), else musterd's CA in <state_dir>/tls issues one for
         * the listen address, the host's names and tls_names; insecure_http
         * serves plain HTTP instead (labs; said at start and in /readyz). */
        char tls_cert[CONFIG_PATH_MAX];
        char tls_key[CONFIG_PATH_MAX];
        char tls_names[1024];             /* "a.example.test, 192.0.2.1" */
        /* The GnuTLS priority string HTTPS offers (checked when parsed);
         * "" = HTTP_TLS_PRIORITIES_DEFAULT, Mozilla's "intermediate". */
        char tls_priorities[1024];
        bool insecure_http;
        /* The OpenAPI document GET /api/v2/openapi.{json,yaml} answer (read at
         * start); default CONFIG_DEFAULT_OPENAPI_FILE, where the package puts it;
         * "" = none served. */
        char openapi_file[CONFIG_PATH_MAX];
        char store[CONFIG_PATH_MAX];      /* "" = SQLite at <state_dir>/muster.db;
                                           * "sqlite:PATH", "/PATH", "postgres://…" */
        int64_t max_body_bytes;
        int64_t max_body_memory;          /* all request bodies in flight together */
        int64_t max_inventory_bytes;      /* <= max_body_bytes */
        int64_t max_page_size;
        int64_t max_release_bytes;        /* body of POST /releases (release_yaml + files) */
        /* [logs] a host's uploaded logs (PUT .../logs): the largest upload
         * taken (413 past it), and how many uploads each host keeps. */
        int64_t logs_max_upload_bytes;
        int64_t logs_keep_per_host;
        /* [log] musterd's own lines on stderr: "text" (time, level, subsystem,
         * message, ids as key=value) or "json" (one object per line); under
         * journald they are journal entries either way. The most verbose
         * level logged: "error", "warning", "info", "debug" (-v: debug). */
        char log_format[8];
        char log_level[8];
        int64_t max_connections_per_address; /* open connections from one client address; 0 = no cap */
        int64_t threads;                     /* the HTTP server's threads */
        int64_t header_timeout_s;         /* a request's header must arrive whole within it */
        /* [monitor] */
        int64_t host_disconnect_timeout_s;
        int64_t monitor_interval_s;       /* < host_disconnect_timeout_s */
        /* From the install step's result to the installed system's first
         * check-in (reboot, firmware, boot): past it the host is in error. */
        int64_t first_boot_timeout_s;
        /* [addons] how often the add-on reconciler follows the agents' reports */
        int64_t addons_interval_s;
        /* [cleanup] operand cleanup on uninstall (DESIGN §9): how often the
         * pass follows the agents' reports, and how long before a cleanup
         * with operands still pending is said to stall */
        int64_t cleanup_interval_s;
        int64_t cleanup_timeout_s;
        /* [agent] */
        int64_t instruction_interval_s;   /* next_instruction_seconds handed out */
        int64_t inventory_every;          /* re-request the inventory every N-th poll */
        /* [requirements.master|worker|sno|any] */
        struct role_requirements req[_REQ_MAX];
        /* [requirements] */
        int64_t install_disk_fsync_ms;    /* fsync latency ceiling of the install disk */
        /* [ntp] */
        int64_t ntp_max_offset_ms;
        /* [network] */
        int64_t network_max_latency_ms;      /* average round trip to each other bound host */
        int64_t network_max_packet_loss_pct; /* packet loss to each other bound host */
        bool network_mtu_check;              /* mtu-valid: full-size packets must reach each other host */
        int64_t network_min_mtu;             /* ... and the MTU tried must be at least this (0: any) */
        /* [dns] */
        bool dns_require_api_int;            /* api-int.<cluster>.<domain> must resolve */
        bool dns_require_apps;               /* *.apps.<cluster>.<domain> must resolve */
        /* [metrics] */
        bool metrics_public;              /* GET /metrics without a token */
        /* [iso] */
        char iso_template[CONFIG_PATH_MAX];        /* the discovery ISO template (sidecar: + ".json") */
        char iso_coordinator_url[CONFIG_URL_MAX];  /* written into ISOs; "" = https:// (http:// with
                                                    * insecure_http) + the request's Host */
        char iso_ca_file[CONFIG_PATH_MAX];         /* CA PEM written into ISOs; "" = musterd's own CA
                                                    * (none with insecure_http or tls_cert) */
        /* [releases] */
        char releases_image_dir[CONFIG_PATH_MAX];  /* OS images of path releases live under it;
                                                    * "" = <state_dir>/images */
        /* [infraenv] */
        int64_t infra_env_max_hosts;            /* hosts one infra-env may hold */
        int64_t infra_env_register_burst;       /* new hosts one infra-env may register at once... */
        int64_t infra_env_register_interval_ms; /* ...and one more every this long (a token bucket) */
        /* [events] */
        int64_t events_max_age_s;              /* older events are pruned */
        int64_t events_max_per_host;           /* a host's newest this many are kept */
        int64_t events_audit_max_age_s;        /* audit events (people's changes) are kept this long */
        /* [validations] */
        uint64_t validations_ignored;              /* bit (1 << enum validation_id): reported "disabled" */
};

/* Fill in the built-in defaults (the values documented in DESIGN §5). */
void config_defaults(struct muster_config *cfg);

/* Parse a configuration text over the defaults. `name` is used in messages.
 * 0 on success; -EINVAL with "name:line: reason" in err on a bad line. */
int config_parse(const char *text, const char *name, struct muster_config *cfg,
                 char *err, size_t errlen);

/* config_defaults() then the file at `path`. -errno if it cannot be read,
 * -EINVAL on a bad line, with a message in err either way. */
int config_load(const char *path, struct muster_config *cfg, char *err, size_t errlen);

/* Call fn(section, key, u) for each configuration key whose value differs
 * between a and b, in file order. Returns how many differ. Pure. */
int config_diff(const struct muster_config *a, const struct muster_config *b,
                void (*fn)(const char *section, const char *key, void *u), void *u);

/* Call fn(section, key, u) for every configuration key, in file order:
 * what the documented default file and the README must each name. Pure. */
void config_keys(void (*fn)(const char *section, const char *key, void *u), void *u);

/* Value parsers shared with the command line (exposed for tests).
 * Sizes: integer with optional B/KB/MB/GB/TB (10^3) or KiB/MiB/GiB/TiB (2^10)
 * suffix. Durations: integer with optional ms/s/m/h suffix; a bare number is
 * in `bare_unit_ms` units. 0 or -EINVAL / -ERANGE. */
int config_parse_size(const char *s, int64_t *bytes);
int config_parse_duration_ms(const char *s, int64_t bare_unit_ms, int64_t *ms);

/* The requirement profile for a host: unbound hosts use ANY, hosts of a
 * single-node cluster SNO, masters MASTER, workers and auto-role hosts
 * WORKER (the least a host of a Full cluster can end up as). */
enum req_profile config_profile_for(bool bound, bool single_node, enum host_role role);
