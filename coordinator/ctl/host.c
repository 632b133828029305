/* `musterctl host ...`: the host pool. A host is keyed by (infra-env, id)
 * in the API; the user names it by id, prefix or hostname and lookup.c
 * finds its infra-env. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "table.h"

#define WATCH_MAX_TIMEOUT (7 * 24 * 3600.0)

static const char *hostname_of(json_object *h) {
        return ctl_jstr(h, "hostname") ?: ctl_jstr(h, "requested_hostname") ?: ctl_jstr(h, "inventory.hostname");
}

static int host_row(struct ctl_table *t, json_object *h) {
        char reg[32], seen[16], hmem[32] = "", hdisk[32] = "";
        int64_t m = ctl_jint(h, "hardware.memory_bytes", -1), dk = ctl_jint(h, "hardware.max_disk_bytes", -1);
        if (m >= 0)
                ctl_format_size(m, hmem, sizeof hmem);
        if (dk > 0)
                ctl_format_size(dk, hdisk, sizeof hdisk);
        const char *row[] = {
                ctl_jstr(h, "id"), hostname_of(h), ctl_jstr(h, "status"), ctl_jstr(h, "role"),
                ctl_jstr(h, "hardware.cpu_count"), hmem, hdisk, ctl_jstr(h, "cluster_id"), ctl_jstr(h, "infra_env_id"),
                ctl_jstr(h, "discovery_agent_version"), ctl_time(ctl_jstr(h, "registered_at"), reg, sizeof reg),
                ctl_age(ctl_jstr(h, "checked_in_at"), seen, sizeof seen), ctl_jstr(h, "status_info"),
        };
        return ctl_table_add(t, row);
}

/* The filters of `host list`, as the query sends them. */
struct host_filters {
        const char *status, *cluster, *ie, *hostname; /* cluster and ie as given */
        char cpu[24], mem[24], disk[24], limit[24];   /* "" when not given */
        char statuses[1024];                          /* what status points to */
        bool unbound, all;
        bool watch;                                   /* -w: then poll every interval until timeout */
        double interval, timeout;                     /* timeout 0: until a signal */
        const char *interval_arg, *timeout_arg;       /* as given, for the usage error */
};

/* A --status value added to the ones before: a list, and repeatable, so
 * the union is sent. 0, or the exit status with the error printed. */
static int add_status(const struct ctl_cmd *cmd, struct host_filters *f, const char *arg) {
        uint32_t set;
        const char *bad;
        size_t bad_len;
        if (host_status_set_parse(arg, &set, &bad, &bad_len) < 0)
                return ctl_usage_error(cmd, "unknown host status \"%.*s\" (known-unbound, "
                                       "insufficient-unbound, known, installing, ...)",
                                       (int) bad_len, bad);
        size_t used = strlen(f->statuses);
        if (used + strlen(arg) + 2 > sizeof f->statuses)
                return ctl_usage_error(cmd, "too many --status values");
        snprintf(f->statuses + used, sizeof f->statuses - used, "%s%s", used ? "," : "", arg);
        f->status = f->statuses;
        return 0;
}

/* The options into f, and no argument. true to go on; false with *rc the
 * exit status (0 after --help). */
static bool parse_filters(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, struct host_filters *f,
                          int *rc) {
        enum { O_STATUS = CTL_OPT_FIRST_LOCAL, O_CLUSTER, O_IE, O_UNBOUND, O_CPU, O_MEM, O_DISK, O_HOSTNAME, O_LIMIT,
               O_ALL, O_INTERVAL, O_TIMEOUT };
        static const struct option opts[] = {
                { "status", required_argument, NULL, O_STATUS },
                { "cluster", required_argument, NULL, O_CLUSTER },
                { "infra-env", required_argument, NULL, O_IE },
                { "unbound", no_argument, NULL, O_UNBOUND },
                { "min-cpu", required_argument, NULL, O_CPU },
                { "min-memory", required_argument, NULL, O_MEM },
                { "min-disk", required_argument, NULL, O_DISK },
                { "hostname", required_argument, NULL, O_HOSTNAME },
                { "limit", required_argument, NULL, O_LIMIT },
                { "all", no_argument, NULL, O_ALL },
                { "watch", no_argument, NULL, 'w' },
                { "interval", required_argument, NULL, O_INTERVAL },
                { "timeout", required_argument, NULL, O_TIMEOUT },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                int64_t size;
                long n;
                *rc = CTL_EXIT_USAGE;
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case CTL_OPT_BAD: return false;
                case O_STATUS:
                        if ((*rc = add_status(cmd, f, optarg)))
                                return false;
                        break;
                case O_CLUSTER: f->cluster = optarg; break;
                case O_IE: f->ie = optarg; break;
                case O_UNBOUND: f->unbound = true; break;
                case O_CPU:
                        if (ctl_parse_long(optarg, 0, 1000000, &n) < 0) {
                                *rc = ctl_usage_error(cmd, "--min-cpu needs a number of CPUs, not \"%s\"", optarg);
                                return false;
                        }
                        snprintf(f->cpu, sizeof f->cpu, "%ld", n);
                        break;
                case O_MEM:
                case O_DISK:
                        if (ctl_parse_size(optarg, &size) < 0) {
                                *rc = ctl_usage_error(cmd, "%s needs a size such as 16GiB, 100GB or 512, not \"%s\"",
                                                      o == O_MEM ? "--min-memory" : "--min-disk", optarg);
                                return false;
                        }
                        snprintf(o == O_MEM ? f->mem : f->disk, sizeof f->mem, "%lld", (long long) size);
                        break;
                case O_HOSTNAME: f->hostname = optarg; break;
                case O_LIMIT:
                        if (ctl_opt_limit(cmd, optarg, 100000, &n))
                                return false;
                        snprintf(f->limit, sizeof f->limit, "%ld", n);
                        break;
                case O_ALL: f->all = true; break;
                case 'w': f->watch = true; break;
                case O_INTERVAL:
                        if (ctl_opt_interval(cmd, optarg, &f->interval))
                                return false;
                        f->interval_arg = optarg;
                        break;
                case O_TIMEOUT:
                        if (ctl_parse_duration(optarg, WATCH_MAX_TIMEOUT, &f->timeout) < 0) {
                                *rc = ctl_usage_error(cmd, "--timeout needs a duration (90, 90s, 10m, 2h; at most a "
                                                      "week), not \"%s\"", optarg);
                                return false;
                        }
                        f->timeout_arg = optarg;
                        break;
                default: return false;
                }
        }
        if ((*rc = ctl_want_args(cmd, argc, argv, 0, "")))
                return false;
        if (f->unbound && f->cluster) {
                *rc = ctl_usage_error(cmd, "--unbound and --cluster exclude each other");
                return false;
        }
        if (!f->watch && (f->interval_arg || f->timeout_arg)) {
                *rc = ctl_usage_error(cmd, "--interval and --timeout go with --watch");
                return false;
        }
        return true;
}

/* "/hosts?filters" into *path, the cluster and infra-env looked up. 0, or
 * the exit status with the error printed. */
static int filters_path(struct ctl *c, const struct ctl_cmd *cmd, const struct host_filters *f, char **path) {
        struct ctl_query q = { 0 };
        _cleanup_free_ char *cluster_id = NULL, *ie_id = NULL;
        if (f->cluster && !(cluster_id = ctl_lookup_cluster(c, f->cluster)))
                return CTL_EXIT_FAIL;
        if (f->ie && !(ie_id = ctl_lookup_infra_env(c, f->ie)))
                return CTL_EXIT_FAIL;
        ctl_query_add(&q, "status", f->status);
        ctl_query_add(&q, "cluster_id", cluster_id);
        ctl_query_add(&q, "infra_env_id", ie_id);
        ctl_query_add(&q, "unbound", f->unbound ? "true" : NULL);
        ctl_query_add(&q, "min_cpu_cores", *f->cpu ? f->cpu : NULL);
        ctl_query_add(&q, "min_memory_bytes", *f->mem ? f->mem : NULL);
        ctl_query_add(&q, "min_disk_bytes", *f->disk ? f->disk : NULL);
        ctl_query_add(&q, "hostname", f->hostname);
        ctl_query_add(&q, "limit", *f->limit ? f->limit : NULL);
        if (q.overflow)
                return ctl_usage_error(cmd, "the filters are too long");
        if (asprintf(path, MUSTER_PATH_HOSTS "%s", q.buf) < 0) {
                *path = NULL;
                return ctl_fail("out of memory");
        }
        return 0;
}

/* ---- host list --watch ---------------------------------------------------- */

static double mono_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* What a watch compares of a host: its status and install stage. */
static char *watch_key(json_object *h) {
        char *k;
        if (asprintf(&k, "%s\x1f%s", ctl_jstr(h, "status") ?: "", ctl_jstr(h, "progress.stage") ?: "") < 0)
                return NULL;
        return k;
}

/* The hosts' keys by id, for the next poll's comparison. */
static json_object *watch_keys(json_object *rows) {
        json_object *m = json_object_new_object();
        for (size_t i = 0; m && i < ctl_jlen(rows); i++) {
                json_object *h = json_object_array_get_idx(rows, i);
                _cleanup_free_ char *k = watch_key(h);
                if (!k || !ctl_jstr(h, "id")) {
                        json_object_put(m);
                        return NULL;
                }
                json_object_object_add(m, ctl_jstr(h, "id"), json_object_new_string(k));
        }
        return m;
}

/* The rows of `changed` without a header (table forms), or each host as
 * -o asks (JSON forms). */
static int print_changed(struct ctl *c, json_object *changed, const struct ctl_col *cols, size_t ncols) {
        if (c->output == CTL_OUT_JSON) {
                for (size_t i = 0; i < ctl_jlen(changed); i++)
                        if (ctl_print_json(json_object_array_get_idx(changed, i)))
                                return CTL_EXIT_FAIL;
                return fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_FAIL;
        }
        struct ctl_table t;
        int r = 0;
        ctl_table_init(&t, cols, ncols);
        for (size_t i = 0; i < ctl_jlen(changed) && r == 0; i++)
                r = host_row(&t, json_object_array_get_idx(changed, i));
        _cleanup_free_ char *text = r == 0 ? ctl_table_render(&t, &c->fmt) : NULL;
        ctl_table_free(&t);
        if (!text)
                return ctl_fail("out of memory");
        const char *body = strchr(text, '\n');
        fputs(body ? body + 1 : "", stdout);
        return fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_FAIL;
}

/* The hosts of `rows` that are new or changed since `keys`, and the ones of
 * `last` that are gone (their status shown as "gone"). */
static json_object *watch_changes(json_object *keys, json_object *last, json_object *rows) {
        json_object *changed = json_object_new_array(), *seen = json_object_new_object();
        if (!changed || !seen)
                goto oom;
        for (size_t i = 0; i < ctl_jlen(rows); i++) {
                json_object *h = json_object_array_get_idx(rows, i), *was;
                const char *id = ctl_jstr(h, "id");
                _cleanup_free_ char *k = watch_key(h);
                if (!k || !id)
                        goto oom;
                json_object_object_add(seen, id, NULL);
                if (!json_object_object_get_ex(keys, id, &was) || strcmp(json_object_get_string(was), k) != 0)
                        json_object_array_add(changed, json_object_get(h));
        }
        for (size_t i = 0; i < ctl_jlen(last); i++) {
                json_object *h = json_object_array_get_idx(last, i), *gone;
                const char *id = ctl_jstr(h, "id");
                if (!id || json_object_object_get_ex(seen, id, NULL))
                        continue;
                /* The same members (shared: counted references), the status
                 * "gone"; not json_object_deep_copy, which refuses the
                 * doubles json-c's tokener keeps with their text. */
                if (!(gone = json_object_new_object()))
                        goto oom;
                json_object_object_foreach(h, key, val) json_object_object_add(gone, key, json_object_get(val));
                json_object_object_add(gone, "status", json_object_new_string("gone"));
                json_object_array_add(changed, gone);
        }
        json_object_put(seen);
        return changed;
oom:
        json_object_put(changed);
        json_object_put(seen);
        return NULL;
}

/* The list, then a row each time a host's status or stage changes, or it
 * comes or goes, until f->timeout or a signal: exit 0 either way. */
static int watch_hosts(struct ctl *c, const struct host_filters *f, const char *path, json_object *rows,
                       const struct ctl_col *cols, size_t ncols) {
        _cleanup_json_ json_object *last = json_object_get(rows);
        _cleanup_json_ json_object *keys = watch_keys(rows);
        double interval = f->interval > 0 ? f->interval : 2;
        double deadline = f->timeout > 0 ? mono_now() + f->timeout : 0;
        bool unreachable = false;
        if (!keys)
                return ctl_fail("out of memory");
        fflush(stdout);
        ctl_catch_stop(NULL, NULL);
        c->quiet_unreachable = true;
        for (;;) {
                double left = deadline > 0 ? deadline - mono_now() : interval;
                if (left <= 0)
                        return CTL_EXIT_OK;
                ctl_nap(left < interval ? left : interval);
                if (ctl_stop || (deadline > 0 && deadline - mono_now() <= 0))
                        return CTL_EXIT_OK;
                _cleanup_json_ json_object *now_rows = NULL;
                /* Quiet while musterd cannot be reached: a watch rides out its restart. */
                int k = ctl_get_list(c, path, f->all, &now_rows, NULL);
                if (k == -EINTR || ctl_stop)
                        return CTL_EXIT_OK;
                if (k == -EIO || k == -ETIMEDOUT) {
                        ctl_still_trying(c, &unreachable);
                        continue;
                }
                if (k < 0)
                        return CTL_EXIT_FAIL;
                unreachable = false;
                _cleanup_json_ json_object *changed = watch_changes(keys, last, now_rows);
                json_object *next = watch_keys(now_rows);
                if (!changed || !next) {
                        json_object_put(next);
                        return ctl_fail("out of memory");
                }
                if (ctl_jlen(changed) && print_changed(c, changed, cols, ncols))
                        return CTL_EXIT_FAIL;
                json_object_put(keys);
                keys = next;
                json_object_put(last);
                last = json_object_get(now_rows);
        }
}

int ctl_host_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "ID", CTL_COL_ID, 0, 0 },
                { "HOSTNAME", CTL_COL_FLEX, 0, 10 },
                { "STATUS", CTL_COL_FLEX, 0, 20 },
                { "ROLE", 0, 3, 0 },
                { "CPU", CTL_COL_RIGHT, 6, 0 },
                { "MEMORY", CTL_COL_RIGHT, 7, 0 },
                { "DISK", CTL_COL_RIGHT, 8, 0 },
                { "CLUSTER", CTL_COL_ID, 2, 0 },
                { "INFRA-ENV", CTL_COL_ID, 1, 0 },
                { "AGENT", CTL_COL_WIDE, 0, 0 },
                { "REGISTERED", CTL_COL_WIDE, 0, 0 },
                { "SEEN", 0, 4, 0 },
                { "STATUS-INFO", CTL_COL_WIDE, 0, 0 },
        };
        struct host_filters f = { 0 };
        _cleanup_free_ char *path = NULL;
        _cleanup_json_ json_object *rows = NULL;
        bool more = false;
        int rc;

        if (!parse_filters(c, cmd, argc, argv, &f, &rc))
                return rc;
        if ((rc = filters_path(c, cmd, &f, &path)))
                return rc;
        if (ctl_get_list(c, path, f.all, &rows, &more) < 0)
                return CTL_EXIT_FAIL;
        rc = ctl_print_rows(c, rows, cols, sizeof cols / sizeof *cols, host_row);
        if (more && c->output != CTL_OUT_JSON)
                fputs("musterctl: there are more hosts; --all lists every page\n", stderr);
        if (rc == CTL_EXIT_OK && f.watch)
                rc = watch_hosts(c, &f, path, rows, cols, sizeof cols / sizeof *cols);
        return rc;
}

/* ---- one host --------------------------------------------------------------- */

/* "200 GiB NVMe QEMU NVMe Ctrl, eligible" */
static void disk_line(json_object *d, char *buf, size_t n) {
        char size[32];
        ctl_format_size(ctl_jint(d, "size_bytes", -1), size, sizeof size);
        int k = snprintf(buf, n, "%s %s%s%s", size, ctl_jstr(d, "drive_type") ?: "", ctl_jstr(d, "model") ? " " : "",
                         ctl_jstr(d, "model") ?: "");
        json_object *el = ctl_jget(d, "installation_eligibility.eligible");
        if (k < 0 || (size_t) k >= n || !el)
                return;
        if (json_object_get_boolean(el)) {
                snprintf(buf + k, n - (size_t) k, ", eligible");
                return;
        }
        k += snprintf(buf + k, n - (size_t) k, ", not eligible");
        json_object *why = ctl_jget(d, "installation_eligibility.not_eligible_reasons");
        for (size_t i = 0; why && json_object_is_type(why, json_type_array) && i < json_object_array_length(why); i++) {
                if ((size_t) k >= n)
                        return;
                k += snprintf(buf + k, n - (size_t) k, "%s%s", i ? ", " : ": ",
                              json_object_get_string(json_object_array_get_idx(why, i)));
        }
}

static void add_hardware(struct ctl_kv *kv, json_object *inv) {
        char buf[1024], a[32], b[32];
        if (!inv) {
                ctl_kv_add(kv, "Hardware", "no inventory yet", 0);
                return;
        }
        json_object *virt = ctl_jget(inv, "system_vendor.virtual");
        snprintf(buf, sizeof buf, "%s %s%s", ctl_jstr(inv, "system_vendor.manufacturer") ?: "unknown vendor",
                 ctl_jstr(inv, "system_vendor.product_name") ?: "",
                 virt && json_object_get_boolean(virt) ? " (virtual)" : "");
        ctl_kv_add(kv, "System", buf, 0);
        snprintf(buf, sizeof buf, "%lld x %s (%s)", (long long) ctl_jint(inv, "cpu.count", 0),
                 ctl_jstr(inv, "cpu.model_name") ?: "unknown CPU", ctl_jstr(inv, "cpu.architecture") ?: "?");
        ctl_kv_add(kv, "CPU", buf, 0);
        ctl_format_size(ctl_jint(inv, "memory.physical_bytes", -1), a, sizeof a);
        ctl_format_size(ctl_jint(inv, "memory.usable_bytes", -1), b, sizeof b);
        snprintf(buf, sizeof buf, "%s physical, %s usable", a, b);
        ctl_kv_add(kv, "Memory", buf, 0);
        if (ctl_jstr(inv, "boot.current_boot_mode")) {
                snprintf(buf, sizeof buf, "%s, secure boot %s", ctl_jstr(inv, "boot.current_boot_mode"),
                         ctl_jstr(inv, "boot.secure_boot_state") ?: "unknown");
                ctl_kv_add(kv, "Boot", buf, 0);
        }
        json_object *disks = ctl_jget(inv, "disks");
        for (size_t i = 0; disks && json_object_is_type(disks, json_type_array) && i < json_object_array_length(disks); i++) {
                json_object *d = json_object_array_get_idx(disks, i);
                char key[96];
                snprintf(key, sizeof key, "Disk %s", ctl_jstr(d, "name") ?: "?");
                disk_line(d, buf, sizeof buf);
                ctl_kv_add(kv, key, buf, 0);
        }
        json_object *nics = ctl_jget(inv, "interfaces");
        for (size_t i = 0; nics && json_object_is_type(nics, json_type_array) && i < json_object_array_length(nics); i++) {
                json_object *n = json_object_array_get_idx(nics, i);
                char key[96];
                json_object *carrier = ctl_jget(n, "has_carrier");
                snprintf(key, sizeof key, "NIC %s", ctl_jstr(n, "name") ?: "?");
                snprintf(buf, sizeof buf, "%s %s%s%s%s", ctl_jstr(n, "type") ?: "?", ctl_jstr(n, "mac_address") ?: "-",
                         ctl_jstr(n, "ipv4_addresses.0") ? " " : "", ctl_jstr(n, "ipv4_addresses.0") ?: "",
                         carrier && json_object_get_boolean(carrier) ? ", link up" : "");
                ctl_kv_add(kv, key, buf, 0);
        }
}

static int print_host(struct ctl *c, json_object *h, bool details) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(h);
        struct ctl_kv kv = { 0 };
        char w1[64], w2[64], prog[256];
        ctl_kv_add(&kv, "ID", ctl_jstr(h, "id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Infra-env", ctl_jstr(h, "infra_env_id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Cluster", ctl_jstr(h, "cluster_id") ?: "none (unbound)", CTL_KV_ID);
        ctl_kv_add(&kv, "Owner", ctl_jstr(h, "owner"), 0);
        ctl_kv_add(&kv, "Hostname", hostname_of(h), 0);
        ctl_kv_add(&kv, "Role", ctl_jstr(h, "role"), 0);
        ctl_kv_add(&kv, "Status", ctl_jstr(h, "status"), 0);
        ctl_kv_add(&kv, "Status info", ctl_jstr(h, "status_info"), 0);
        if (ctl_jget(h, "progress")) {
                snprintf(prog, sizeof prog, "%s %lld%%%s%s", ctl_jstr(h, "progress.stage") ?: "",
                         (long long) ctl_jint(h, "progress.percent", 0), ctl_jstr(h, "progress.info") ? ": " : "",
                         ctl_jstr(h, "progress.info") ?: "");
                ctl_kv_add(&kv, "Progress", prog, 0);
        }
        ctl_kv_add(&kv, "Installation disk", ctl_jstr(h, "installation_disk_id"), 0);
        ctl_kv_add(&kv, "Installation path", ctl_jstr(h, "installation_disk_path"), 0);
        ctl_kv_add(&kv, "Agent", ctl_jstr(h, "discovery_agent_version"), 0);
        ctl_kv_add(&kv, "Checked in", ctl_when(ctl_jstr(h, "checked_in_at"), w1, sizeof w1), 0);
        ctl_kv_add(&kv, "Registered", ctl_when(ctl_jstr(h, "registered_at"), w2, sizeof w2), 0);
        if (details)
                add_hardware(&kv, ctl_jget(h, "inventory"));
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        if (r == 0 && details)
                r = ctl_print_validations(c, ctl_jget(h, "validations"));
        return r;
}

/* The one HOST argument, looked up, as "/infra-envs/IE/hosts/H" + suffix. */
static char *host_path(struct ctl *c, const char *arg, const char *suffix, char **host_id) {
        _cleanup_free_ char *ie = NULL, *h = NULL;
        char *path;
        if (ctl_lookup_host(c, arg, &ie, &h) < 0)
                return NULL;
        if (asprintf(&path, MUSTER_PATH_HOST("%s", "%s") "%s", ie, h, suffix) < 0)
                return NULL;
        if (host_id)
                *host_id = TAKE_PTR(h);
        return path;
}

int ctl_host_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "HOST", &rc))
                return rc;
        _cleanup_free_ char *path = host_path(c, argv[optind], "", NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "GET", path, NULL, print_host, true);
}

/* After an unbind, what the server says the host is: back in the pool, or
 * (installed or failed) left waiting for a boot from the discovery ISO. */
static void print_unbound(const char *id, const char *status) {
        size_t n = status ? strlen(status) : 0;
        if (status && strcmp(status, "unbinding-pending-user-action") == 0)
                printf("host %s is %s: boot it from the discovery ISO to return it to the pool\n", id, status);
        else if (n > 8 && strcmp(status + n - 8, "-unbound") == 0)
                printf("host %s unbound: %s\n", id, status);
        else
                printf("host %s is %s\n", id, status ?: "in an unknown state (the server did not say)");
}

/* A change to one host: POST an action or PATCH/DELETE it; `done` says what
 * happened, in words, after the host's id (NULL: an unbind, in the words of
 * print_unbound()). */
static int host_change(struct ctl *c, const char *arg, const char *method, const char *suffix, json_object *body,
                       const char *done) {
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *path = host_path(c, arg, suffix, &id);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        int rc;
        if (strcmp(method, "DELETE") == 0)
                rc = ctl_call(c, method, path, body, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        else
                rc = ctl_call_object(c, method, path, body, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        if (rc == CTL_EXIT_OK) {
                if (c->output == CTL_OUT_JSON && r.json)
                        rc = ctl_print_json(r.json);
                else if (c->output != CTL_OUT_JSON) {
                        const char *status = r.json ? ctl_jstr(r.json, "status") : NULL;
                        if (!done)
                                print_unbound(id, status);
                        else
                                printf("host %s %s%s%s%s\n", id, done, status ? " (" : "", status ?: "",
                                       status ? ")" : "");
                }
        }
        ctl_reply_free(&r);
        return rc;
}

int ctl_host_bind(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "cluster", required_argument, NULL, CTL_OPT_FIRST_LOCAL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *cluster = NULL;
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, opts, &cluster, 1, "HOST", &rc))
                return rc;
        if (!cluster)
                return ctl_usage_error(cmd, "--cluster is required");
        _cleanup_free_ char *cid = ctl_lookup_cluster(c, cluster);
        if (!cid)
                return CTL_EXIT_FAIL;
        _cleanup_json_ json_object *body = json_object_new_object();
        if (!body)
                return ctl_fail("out of memory");
        json_object_object_add(body, "cluster_id", json_object_new_string(cid));
        char done[128];
        snprintf(done, sizeof done, "is binding to cluster %s", cid);
        return host_change(c, argv[optind], "POST", MUSTER_ACTION_BIND, body, done);
}

int ctl_host_unbind(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "HOST", &rc))
                return rc;
        return host_change(c, argv[optind], "POST", MUSTER_ACTION_UNBIND, NULL, NULL);
}

int ctl_host_install(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "HOST", &rc))
                return rc;
        return host_change(c, argv[optind], "POST", MUSTER_ACTION_INSTALL, NULL,
                           "is installing into its installed cluster");
}

int ctl_host_rotate_token(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "token-out", required_argument, NULL, CTL_OPT_FIRST_LOCAL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *token_out = NULL;
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, opts, &token_out, 1, "HOST", &rc))
                return rc;
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *path = host_path(c, argv[optind], MUSTER_ACTION_ROTATE_TOKEN, &id);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        if (ctl_call_object(c, "POST", path, NULL, &r) < 0) {
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        const char *token = ctl_jstr(r.json, "host_token");
        rc = CTL_EXIT_OK;
        if (!token)
                rc = ctl_fail("the server sent no host_token");
        else if (token_out && ctl_write_secret(token_out, token) < 0)
                rc = CTL_EXIT_FAIL;
        else if (c->output == CTL_OUT_JSON) {
                if (token_out)
                        json_object_object_del(r.json, "host_token");
                rc = ctl_print_json(r.json);
        } else {
                printf("host %s: token rotated to generation %s\nIts earlier host tokens are revoked.\n", id,
                       ctl_jstr(r.json, "token_generation") ?: "?");
                if (token_out)
                        printf("Host token written to %s\n", token_out);
                else
                        printf("Host token (put it in the host's /etc/muster/agent.conf as token = ...):\n%s\n", token);
        }
        ctl_reply_free(&r);
        return rc;
}

int ctl_host_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "HOST", &rc))
                return rc;
        return host_change(c, argv[optind], "DELETE", "", NULL, "deleted");
}

int ctl_host_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_ROLE = CTL_OPT_FIRST_LOCAL, O_HOSTNAME, O_DISK };
        static const struct option opts[] = {
                { "role", required_argument, NULL, O_ROLE },
                { "hostname", required_argument, NULL, O_HOSTNAME },
                { "installation-disk", required_argument, NULL, O_DISK },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        _cleanup_json_ json_object *body = json_object_new_object();
        int o;
        if (!body)
                return ctl_fail("out of memory");
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_ROLE:
                        if (host_role_from_string(optarg) == _ROLE_INVALID)
                                return ctl_usage_error(cmd, "--role takes auto, master or worker, not \"%s\"", optarg);
                        json_object_object_add(body, "role", json_object_new_string(optarg));
                        break;
                case O_HOSTNAME:
                        json_object_object_add(body, "requested_hostname", json_object_new_string(optarg));
                        break;
                case O_DISK:
                        json_object_object_add(body, "installation_disk_id", json_object_new_string(optarg));
                        break;
                default: return CTL_EXIT_USAGE;
                }
        }
        if (ctl_want_args(cmd, argc, argv, 1, "HOST"))
                return CTL_EXIT_USAGE;
        if (json_object_object_length(body) == 0)
                return ctl_usage_error(cmd, "nothing to set: give --role, --hostname or --installation-disk");
        _cleanup_free_ char *path = host_path(c, argv[optind], "", NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "PATCH", path, body, print_host, false);
}

/* Whether host JSON h still lists `action` in its pending_actions. */
static bool action_pending(json_object *h, const char *action) {
        json_object *pa = NULL;
        if (!json_object_object_get_ex(h, "pending_actions", &pa) || !json_object_is_type(pa, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(pa); i++) {
                const char *s = json_object_get_string(json_object_array_get_idx(pa, i));
                if (s && strncmp(s, action, strlen(action)) == 0)
                        return true;
        }
        return false;
}

int ctl_host_logs(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_OUT = CTL_OPT_FIRST_LOCAL, O_GATHER, O_TIMEOUT };
        static const struct option opts[] = {
                { "output-file", required_argument, NULL, O_OUT },
                { "gather", no_argument, NULL, O_GATHER },
                { "timeout", required_argument, NULL, O_TIMEOUT },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *out = NULL;
        bool gather = false;
        double timeout = 300;
        int o;
        /* -o FILE as well as --output-file FILE (-o alone is --output). */
        for (int i = 1; i + 1 < argc; i++)
                if (strcmp(argv[i], "-o") == 0)
                        argv[i] = (char *) "--output-file";
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_OUT: out = optarg; break;
                case O_GATHER: gather = true; break;
                case O_TIMEOUT:
                        if (ctl_parse_duration(optarg, 7 * 86400, &timeout) < 0 || timeout <= 0)
                                return ctl_usage_error(cmd, "--timeout needs a duration (90, 90s, 10m), not \"%s\"",
                                                       optarg);
                        break;
                }
        }
        int rc = ctl_want_args(cmd, argc, argv, 1, "HOST");
        if (rc != CTL_EXIT_OK)
                return rc;
        if (!out)
                return ctl_usage_error(cmd, "-o FILE is required (- for standard output)");
        _cleanup_free_ char *id = NULL;
        _cleanup_free_ char *hpath = host_path(c, argv[optind], "", &id);
        _cleanup_free_ char *lpath = host_path(c, argv[optind], "/logs", NULL);
        if (!hpath || !lpath)
                return CTL_EXIT_FAIL;
        char since[128] = "";
        if (gather) {
                _cleanup_free_ char *apath = host_path(c, argv[optind], MUSTER_ACTION_GATHER_LOGS, NULL);
                struct ctl_reply r;
                if (!apath || ctl_call_object(c, "POST", apath, NULL, &r) < 0) {
                        ctl_reply_free(&r);
                        return CTL_EXIT_FAIL;
                }
                snprintf(since, sizeof since, "%s", ctl_jstr(r.json, "requested_at") ?: "");
                ctl_reply_free(&r);
                fprintf(stderr, "asked host %s for its logs; waiting for its agent (at most %gs)\n", id, timeout);
                struct timespec t0, now;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                for (;;) {
                        if (ctl_call_object(c, "GET", hpath, NULL, &r) < 0) {
                                ctl_reply_free(&r);
                                return CTL_EXIT_FAIL;
                        }
                        bool pending = action_pending(r.json, "gather-logs");
                        ctl_reply_free(&r);
                        if (!pending)
                                break;
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if ((double) (now.tv_sec - t0.tv_sec) + (double) (now.tv_nsec - t0.tv_nsec) / 1e9 > timeout)
                                return ctl_fail("host %s has not uploaded its logs after %gs (is its agent running?)",
                                                id, timeout);
                        if (ctl_stop)
                                return ctl_fail("interrupted");
                        usleep(500 * 1000);
                }
        }
        char created[128];
        rc = ctl_download_to(c, lpath, out, "X-Muster-Logs-Created-At", created, sizeof created);
        if (rc != CTL_EXIT_OK)
                return rc;
        /* RFC 3339 UTC times of one format compare as text. */
        if (since[0] && strcmp(created, since) < 0) {
                if (strcmp(out, "-") != 0)
                        unlink(out);
                return ctl_fail("host %s could not gather its logs (see musterctl event list --host %s); its newest, "
                                "from %s, were not written", id, id, created[0] ? created : "earlier");
        }
        if (c->output != CTL_OUT_JSON)
                fprintf(stderr, "host %s: logs from %s\n", id, created[0] ? created : "(time not given)");
        return CTL_EXIT_OK;
}

int ctl_host_reclaim(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_WIPE = CTL_OPT_FIRST_LOCAL, O_CANCEL };
        static const struct option opts[] = {
                { "wipe", no_argument, NULL, O_WIPE },
                { "cancel", no_argument, NULL, O_CANCEL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        bool wipe = false, cancel = false;
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_WIPE: wipe = true; break;
                case O_CANCEL: cancel = true; break;
                }
        }
        int rc = ctl_want_args(cmd, argc, argv, 1, "HOST");
        if (rc != CTL_EXIT_OK)
                return rc;
        if (wipe && cancel)
                return ctl_usage_error(cmd, "--cancel withdraws a reclaim: it takes no --wipe");
        _cleanup_json_ json_object *body = json_object_new_object();
        if (!body)
                return ctl_fail("out of memory");
        if (cancel) {
                json_object_object_add(body, "cancel", json_object_new_boolean(true));
                return host_change(c, argv[optind], "POST", MUSTER_ACTION_RECLAIM, body,
                                   "stays installed: its reclaim is withdrawn");
        }
        json_object_object_add(body, "wipe", json_object_new_boolean(wipe));
        return host_change(c, argv[optind], "POST", MUSTER_ACTION_RECLAIM, body,
                           wipe ? "will boot into discovery at its node agent's next check-in, its installation "
                                  "disk wiped first; it then joins the pool as a new host"
                                : "will boot into discovery at its node agent's next check-in and join the pool");
}
