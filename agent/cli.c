/* muster-agent subcommands. `inventory` probes the machine and prints one
 * JSON document (or a short summary plus the document written to a file);
 * `run` works for the coordinator until stopped, and `node` keeps an
 * installed host's manifests at the cluster's payload revision (run.h). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentconf.h"
#include "bootsetup.h"
#include "cleanup.h"
#include "fdio.h"
#include "units.h"
#include "inventory.h"
#include "json-cleanup.h"
#include "log.h"
#include "probe.h"
#include "run.h"

/* The help: the commands, each one's options, and what run and node share
 * (where their settings come from, their exit status). `muster-agent
 * --help` prints it all, `muster-agent CMD --help` the command's part. */
static const char help_commands[] =
        "Commands:\n"
        "  inventory      Probe this machine and print its inventory as JSON\n"
        "  run            Register with the coordinator and run its steps until stopped\n"
        "                 (the discovery ISO's agent: inventory, checks, install)\n"
        "  node           On an installed host: apply the cluster's new payload revisions\n"
        "                 to its manifest directory (day 2); never registers\n"
        "  boot-setup     On the live image, before the network: root's SSH key and\n"
        "                 this machine's static network configs from the boot config\n";
static const char help_inventory[] =
        "Options of inventory:\n"
        "  --sysroot DIR          Read /sys, /proc, /run and /etc under DIR (default /)\n"
        "  --min-disk-bytes N     Smallest disk offered for installation\n"
        "                         (default 20000000000)\n"
        "  -o, --output FILE      Write the JSON to FILE instead of standard output\n"
        "  --summary              Print a short human summary (with -o: and the\n"
        "                         file's path)\n"
        "  --compact              One-line JSON\n"
        "  -v, --verbose          Debug logging on standard error\n"
        "  --log-format F         Log lines as text (default: time, level, message)\n"
        "                         or json (one object a line, for log shippers);\n"
        "                         under journald, fields of the journal either way\n"
        "  -h, --help             Show this help\n"
        "  --version              Show the version\n";
static const char help_run[] =
        "Options of run:\n"
        "  --coordinator URL      The coordinator, http(s)://HOST[:PORT]\n"
        "  --infra-env ID         The infra-env this host boots from\n"
        "  --token-file FILE      The infra-env's agent token (read once)\n"
        "  --ca FILE              CA certificates to verify the coordinator with\n"
        "  --coordinator-key FILE The coordinator's PEM public key; install payloads must\n"
        "                         carry its signature. Without a key installs are refused\n"
        "  --state-dir DIR        Keep the host id in DIR/host-id across restarts\n"
        "                         (default " AGENTCONF_DEFAULT_STATE_DIR ", unless\n"
        "                         --coordinator is given)\n"
        "  --sysroot DIR          Probe the inventory under DIR (default /)\n"
        "  --host-id UUID         Use this host id instead of the machine's\n"
        "  --min-disk-bytes N     Smallest disk offered for installation\n"
        "                         (default 20000000000)\n"
        "  --install-target PATH  Install into PATH instead of the installation disk:\n"
        "                         an existing directory gets PATH/os-image.img and the\n"
        "                         manifests in PATH/etc/muster/manifests; a file\n"
        "                         (created if missing) or a block device gets the\n"
        "                         image, and the manifests go into its root partition\n"
        "                         (loop-mounted). Never reboots. The disk speed check\n"
        "                         then measures PATH's folder (a device: the device)\n"
        "  --no-reboot            Do not reboot after installing to the installation disk\n"
        "  --image-timeout T      The OS image download's whole time, retries and resumes\n"
        "                         included: T (1800, 30m, 2h; default 30m) plus a second\n"
        "                         per MiB of the image\n"
        "  --boot-config FILE     The boot medium's config area\n"
        "                         (default " AGENTCONF_DEFAULT_BOOT_CONFIG ")\n"
        "  --initrd-config FILE   A PXE boot's config, which musterd appends to the\n"
        "                         initramfs; read instead of --boot-config when it exists\n"
        "                         (default " AGENTCONF_DEFAULT_INITRD_CONFIG ")\n"
        "  --agent-conf FILE      The agent's config file\n"
        "                         (default " AGENTCONF_DEFAULT_AGENT_CONF ")\n"
        "  --cmdline FILE         The kernel command line (default " AGENTCONF_DEFAULT_CMDLINE ")\n"
        "  -v, --verbose          Debug logging on standard error\n"
        "  --log-format F         Log lines as text (default: time, level, message)\n"
        "                         or json (one object a line, for log shippers);\n"
        "                         under journald, fields of the journal either way\n"
        "  -h, --help             Show this help\n";
static const char help_boot_setup[] =
        "Options of boot-setup (the live image runs it before the network starts):\n"
        "  --boot-config FILE, --initrd-config FILE: as for run\n"
        "  --root DIR             Read /sys and write under DIR instead of / (default /)\n"
        "  It writes the boot config's SSH key to /root/.ssh/authorized_keys, which\n"
        "  the live image's SSH server (dropbear, keys only) then serves; without a\n"
        "  key no SSH server runs. The static network configs whose MACs are NICs of\n"
        "  this machine go into /run/systemd/network as 05-muster-NAME; other NICs\n"
        "  keep DHCP. Exit 0, or 1 when the boot config is unusable.\n"
        "  -v, --log-format F, -h: as for run (muster-agent run --help)\n";
static const char help_node[] =
        "Options of node:\n"
        "  --manifest-dir DIR     The installed system's manifest directory, normally\n"
        "                         /etc/muster/manifests (required)\n"
        "  --boot-dir DIR         Where `musterctl host reclaim` writes the discovery\n"
        "                         kernel, initramfs and boot entry (default /boot);\n"
        "                         given, the host does not reboot after a reclaim\n"
        "  --no-reboot            Do not reboot after a reclaim\n"
        "  --coordinator URL, --infra-env ID, --token-file FILE, --ca FILE,\n"
        "  --coordinator-key FILE (a key is required), --state-dir DIR (read the host id\n"
        "  from DIR/host-id), --host-id UUID, --boot-config FILE, --agent-conf FILE,\n"
        "  --cmdline FILE, -v, --log-format F, -h: as for run (muster-agent run --help)\n";
static const char help_settings[] =
        "Settings of run and node come from four places, each overriding the ones\n"
        "before it setting by setting:\n"
        "  1. the config area of the discovery ISO the host booted from (--boot-config),\n"
        "     or the one musterd appended to a PXE boot's initramfs (--initrd-config):\n"
        "     the coordinator, infra-env, token, coordinator key, CA and proxies that\n"
        "     musterd wrote into it; a missing file or an all-zero area gives nothing\n"
        "  2. --agent-conf: \"key = value\" lines and '#' comments; keys coordinator,\n"
        "     infra_env, token, token_file, ca_file, coordinator_key_file, state_dir,\n"
        "     install_target, min_disk_bytes (paths absolute), http_proxy,\n"
        "     https_proxy, no_proxy; a missing file gives nothing\n"
        "  3. --cmdline: the words muster.coordinator=, muster.infra_env=, muster.token=,\n"
        "     muster.ca_file=, muster.coordinator_key_file=, muster.state_dir=,\n"
        "     muster.http_proxy=, muster.https_proxy=, muster.no_proxy=\n"
        "  4. the options above\n"
        "Every fetch (coordinator, payload, OS image) of an https:// URL goes through\n"
        "https_proxy, of an http:// URL through http_proxy, but for hosts in no_proxy.\n"
        "A coordinator, an infra-env and a token are required. A token given inline\n"
        "replaces a token file from a place before it, and the other way round. Plain\n"
        "`muster-agent run` is how the discovery ISO starts the agent.\n"
        "\n"
        "Exit status of run and node: 0 stopped by SIGTERM or SIGINT, 1 could not start\n"
        "(a config file unreadable, token file, coordinator key, host id, state dir),\n"
        "2 bad usage or configuration (a bad line, a corrupt config area, a required\n"
        "setting missing) or libcurl (libcurl.so.4) missing, 3 the coordinator refused\n"
        "the token (HTTP 401/403). run and node load libcurl when they start; inventory,\n"
        "--version and --help never do.\n"
        "Unreachable or failing coordinators are retried with backoff; node also waits\n"
        "(never registers) while the coordinator does not know the host.\n";

/* cmd NULL: everything; else the help of that command. */
static void usage(FILE *f, const char *cmd) {
        static const struct {
                const char *name, *text;
                bool settings;
        } parts[] = {
                { "inventory", help_inventory, false },
                { "run", help_run, true },
                { "boot-setup", help_boot_setup, false },
                { "node", help_node, true },
        };
        if (!cmd) {
                fprintf(f, "Usage: muster-agent COMMAND [OPTIONS]\n\n%s", help_commands);
                for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
                        fprintf(f, "\n%s", parts[i].text);
                fprintf(f, "\n%s", help_settings);
                return;
        }
        for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
                if (strcmp(parts[i].name, cmd) == 0) {
                        fprintf(f, "Usage: muster-agent %s [OPTIONS]\n\n%s", cmd, parts[i].text);
                        if (parts[i].settings)
                                fprintf(f, "\n%s", help_settings);
                        fputs("\nmuster-agent --help shows every command.\n", f);
                        return;
                }
}

static const char *tri_str(int8_t t, const char *yes, const char *no) {
        return t == TRI_TRUE ? yes : t == TRI_FALSE ? no : "unknown";
}

static void print_summary(FILE *f, const struct inventory *inv) {
        char a[32], b[32];
        const struct inv_system_vendor *sv = &inv->system_vendor;

        fprintf(f, "Host      %s (%s), id %s [%s]\n", inv->hostname ? inv->hostname : "?",
                sv->product_name ? sv->product_name : "unknown product",
                inv->host_id ? inv->host_id : "none", inv->host_id_source ? inv->host_id_source : "-");
        fprintf(f, "System    %s, %s; boot %s, secure boot %s\n",
                sv->manufacturer ? sv->manufacturer : "unknown vendor",
                tri_str(sv->virtual_machine, "virtual", "physical"),
                inv->boot.current_boot_mode ? inv->boot.current_boot_mode : "unknown",
                inv->boot.secure_boot_state ? inv->boot.secure_boot_state : "unknown");
        fprintf(f, "CPU       %s, %lld logical (%lld socket(s) x %lld core(s) x %lld thread(s)), %s\n",
                inv->cpu.model_name ? inv->cpu.model_name : "unknown", (long long) inv->cpu.count,
                (long long) inv->cpu.sockets, (long long) inv->cpu.cores_per_socket,
                (long long) inv->cpu.threads_per_core,
                inv->cpu.architecture ? inv->cpu.architecture : "?");
        units_format_bytes(inv->memory.usable_bytes, a, sizeof a);
        units_format_bytes(inv->memory.physical_bytes, b, sizeof b);
        fprintf(f, "Memory    %s usable, %s physical (%s)\n", a, b,
                inv->memory.physical_bytes_method ? inv->memory.physical_bytes_method : "-");
        fprintf(f, "Disks     %zu\n", inv->n_disks);
        for (size_t i = 0; i < inv->n_disks; i++) {
                const struct inv_disk *d = &inv->disks[i];
                units_format_bytes(d->size_bytes, a, sizeof a);
                fprintf(f, "  %-10s %-9s %10s  %-24.24s %s\n", d->name, d->drive_type ? d->drive_type : "?",
                        a, d->model ? d->model : "", d->eligible ? "eligible" : "not eligible:");
                for (size_t k = 0; k < d->not_eligible_reasons.n; k++)
                        fprintf(f, "               - %s\n", d->not_eligible_reasons.v[k]);
        }
        fprintf(f, "NICs      %zu\n", inv->n_interfaces);
        for (size_t i = 0; i < inv->n_interfaces; i++) {
                const struct inv_interface *it = &inv->interfaces[i];
                fprintf(f, "  %-10s %-8s %-17s %s%s\n", it->name, it->type ? it->type : "?",
                        it->mac_address ? it->mac_address : "-",
                        it->ipv4_addresses.n ? it->ipv4_addresses.v[0] : "",
                        it->has_carrier == TRI_TRUE ? " (link up)" : "");
        }
        if (inv->n_gpus || inv->tpm_version)
                fprintf(f, "Other     %zu GPU(s), TPM %s\n", inv->n_gpus, inv->tpm_version ? inv->tpm_version : "none");
        for (unsigned i = 0; i < inv->truncated.n; i++)
                fprintf(f, "Note      %s cut to %lld of %lld\n", inv->truncated.e[i].key,
                        (long long) inv->truncated.e[i].listed, (long long) inv->truncated.e[i].total);
}

static int parse_min_disk(const char *s, int64_t *out) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || *end || v <= 0) {
                log_error("agent", "--min-disk-bytes needs a positive number of bytes, not \"%s\"", s);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

/* The long options without a letter, of every command. */
enum {
        OPT_SYSROOT = 256, OPT_MIN_DISK, OPT_SUMMARY, OPT_COMPACT, OPT_COORDINATOR, OPT_INFRA_ENV, OPT_TOKEN_FILE,
        OPT_CA, OPT_HOST_ID, OPT_STATE_DIR, OPT_COORDINATOR_KEY, OPT_INSTALL_TARGET, OPT_NO_REBOOT, OPT_MANIFEST_DIR,
        OPT_BOOT_CONFIG, OPT_INITRD_CONFIG, OPT_AGENT_CONF, OPT_CMDLINE, OPT_IMAGE_TIMEOUT, OPT_BOOT_DIR,
        OPT_LOG_FORMAT,
};

/* The options of every command; common_option handles them. */
#define COMMON_OPTIONS                                                          \
        { "verbose", no_argument, NULL, 'v' }, { "help", no_argument, NULL, 'h' }, \
        { "log-format", required_argument, NULL, OPT_LOG_FORMAT }

/* -v, --log-format, -h or an option getopt_long did not know (its return
 * value c): -1 to go on, else the exit status (0 after --help, 2 after a
 * usage error). */
static int common_option(int c, const char *cmd) {
        enum log_format f;
        switch (c) {
        case 'v':
                log_set_max_level(LOG_LVL_DEBUG);
                return -1;
        case OPT_LOG_FORMAT:
                if (log_format_from_string(optarg, &f) < 0) {
                        fprintf(stderr, "muster-agent %s: --log-format takes text or json, not \"%s\"\n", cmd, optarg);
                        fprintf(stderr, "Try 'muster-agent %s --help'.\n", cmd);
                        return 2;
                }
                log_set_format(f);
                return -1;
        case 'h':
                usage(stdout, cmd);
                return 0;
        default:
                fprintf(stderr, "Try 'muster-agent %s --help'.\n", cmd);
                return 2;
        }
}

/* After the options: a command that takes no positional arguments. 0 or 2. */
static int no_arguments(const char *cmd, int argc, char **argv) {
        if (optind < argc) {
                log_error("agent", "%s takes no arguments (got \"%s\")", cmd, argv[optind]);
                return 2;
        }
        return 0;
}

/* text and a newline as the file at path (fd_write_file_atomic: a reader
 * never sees half a file; /dev/stdout, /dev/null or a FIFO is written into,
 * never replaced). 0, or -errno after logging. */
static int write_output(const char *path, const char *text) {
        size_t n = strlen(text);
        _cleanup_free_ char *line = malloc(n + 1);
        if (!line)
                return log_error_errno(ENOMEM, "agent", "Failed to write %s: %m", path);
        memcpy(line, text, n);
        line[n] = '\n';
        int r = fd_write_file_atomic(path, line, n + 1, 0644);
        return r < 0 ? log_error_errno(r, "agent", "Failed to write %s: %m", path) : 0;
}

static int cmd_inventory(int argc, char **argv) {
        static const struct option opts[] = {
                { "sysroot", required_argument, NULL, OPT_SYSROOT },
                { "min-disk-bytes", required_argument, NULL, OPT_MIN_DISK },
                { "output", required_argument, NULL, 'o' },
                { "summary", no_argument, NULL, OPT_SUMMARY },
                { "compact", no_argument, NULL, OPT_COMPACT },
                COMMON_OPTIONS,
                {},
        };
        struct probe_options po = { 0 };
        const char *output = NULL;
        bool summary = false, compact = false;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, "o:vh", opts, NULL)) >= 0) {
                switch (c) {
                case OPT_SYSROOT:
                        po.sysroot = optarg;
                        break;
                case OPT_MIN_DISK:
                        if (parse_min_disk(optarg, &po.min_install_bytes) < 0)
                                return 2;
                        break;
                case 'o':
                        output = optarg;
                        break;
                case OPT_SUMMARY:
                        summary = true;
                        break;
                case OPT_COMPACT:
                        compact = true;
                        break;
                default:
                        if ((r = common_option(c, "inventory")) >= 0)
                                return r;
                        break;
                }
        }
        if ((r = no_arguments("inventory", argc, argv)))
                return r;

        struct inventory inv;
        r = inventory_probe(&po, &inv);
        if (r < 0) {
                log_error_errno(r, "agent", "Failed to probe %s: %m", po.sysroot ? po.sysroot : "/");
                inventory_free(&inv);
                return 1;
        }
        _cleanup_json_ json_object *doc = inventory_to_json(&inv);
        int flags = (compact ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) |
                    JSON_C_TO_STRING_NOSLASHESCAPE;
        const char *text = doc ? json_object_to_json_string_ext(doc, flags) : NULL;
        if (!text) {
                inventory_free(&inv);
                log_error("agent", "Out of memory while writing the inventory");
                return 1;
        }
        r = output ? write_output(output, text) : 0;
        if (summary) {
                print_summary(stdout, &inv);
                if (output && r == 0)
                        printf("Inventory %s\n", output);
        } else if (!output)
                printf("%s\n", text);
        inventory_free(&inv);
        if (fflush(stdout) != 0)
                return 1;
        return r < 0 ? 1 : 0;
}

/* Where a missing setting can come from, for the message that says so. */
static void log_missing(enum agentconf_setting s, const char *cmd, const struct agentconf_paths *p) {
        static const struct {
                const char *what, *flag, *word, *key;
        } how[_AGENTCONF_SETTING_MAX] = {
                [AGENTCONF_COORDINATOR] = { "a coordinator URL", "--coordinator URL", "muster.coordinator=URL",
                                            "coordinator = URL" },
                [AGENTCONF_INFRA_ENV] = { "an infra-env id", "--infra-env ID", "muster.infra_env=ID",
                                          "infra_env = ID" },
                [AGENTCONF_TOKEN] = { "an agent token", "--token-file FILE", "muster.token=TOKEN",
                                      "token = TOKEN or token_file = FILE" },
                [AGENTCONF_KEY] = { "a coordinator key", "--coordinator-key FILE",
                                    "muster.coordinator_key_file=FILE", "coordinator_key_file = FILE" },
        };
        log_error("agent",
                  "%s needs %s: give %s, put %s on the kernel command line (%s) or %s in %s, or boot from a "
                  "discovery ISO whose config area (%s) holds it",
                  cmd, how[s].what, how[s].flag, how[s].word, p->cmdline, how[s].key, p->agent_conf, p->boot_config);
}

/* "90", "90s", "30m", "2h" in seconds (at most a week); -1 if it is none. */
static int64_t parse_seconds(const char *s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || v <= 0 || s[0] == '-' || s[0] == '+')
                return -1;
        int64_t unit = strcmp(end, "") == 0 || strcmp(end, "s") == 0 ? 1
                       : strcmp(end, "m") == 0                       ? 60
                       : strcmp(end, "h") == 0                       ? 3600
                                                                     : -1;
        if (unit < 0 || v > 7 * 24 * 3600 / unit)
                return -1;
        return (int64_t) v * unit;
}

/* Record flag `name` (its agent.conf key `key`) with value v. 0 or the exit code. */
static int flag(struct agentconf *flags, const char *key, const char *name, const char *v) {
        char err[512];
        int r = agentconf_set(flags, key, v, AGENTCONF_SRC_FLAG, name, err, sizeof err);
        if (r == -ENOMEM) {
                log_error("agent", "Out of memory");
                return RUN_EXIT_FAILURE;
        }
        if (r < 0) {
                log_error("agent", "%s: %s", name, err);
                return RUN_EXIT_USAGE;
        }
        return 0;
}

/* The options of `run` and of `node`: where the settings come from, then
 * each command's own. */
#define SOURCE_OPTIONS                                                    \
        { "coordinator", required_argument, NULL, OPT_COORDINATOR },          \
        { "infra-env", required_argument, NULL, OPT_INFRA_ENV },              \
        { "token-file", required_argument, NULL, OPT_TOKEN_FILE },            \
        { "ca", required_argument, NULL, OPT_CA },                            \
        { "host-id", required_argument, NULL, OPT_HOST_ID },                  \
        { "state-dir", required_argument, NULL, OPT_STATE_DIR },              \
        { "coordinator-key", required_argument, NULL, OPT_COORDINATOR_KEY },  \
        { "boot-config", required_argument, NULL, OPT_BOOT_CONFIG },          \
        { "initrd-config", required_argument, NULL, OPT_INITRD_CONFIG },      \
        { "agent-conf", required_argument, NULL, OPT_AGENT_CONF },            \
        { "cmdline", required_argument, NULL, OPT_CMDLINE }
static const struct option run_opts[] = {
        SOURCE_OPTIONS,
        { "sysroot", required_argument, NULL, OPT_SYSROOT },
        { "min-disk-bytes", required_argument, NULL, OPT_MIN_DISK },
        { "install-target", required_argument, NULL, OPT_INSTALL_TARGET },
        { "no-reboot", no_argument, NULL, OPT_NO_REBOOT },
        { "image-timeout", required_argument, NULL, OPT_IMAGE_TIMEOUT },
        COMMON_OPTIONS,
        {},
};
static const struct option node_opts[] = {
        SOURCE_OPTIONS,
        { "manifest-dir", required_argument, NULL, OPT_MANIFEST_DIR },
        { "boot-dir", required_argument, NULL, OPT_BOOT_DIR },
        { "no-reboot", no_argument, NULL, OPT_NO_REBOOT },
        COMMON_OPTIONS,
        {},
};
#undef SOURCE_OPTIONS

/* One option of `run` or `node` (getopt_long's c): settings of agent.conf
 * go to flags, the others to ro and paths. -1 to go on, else the exit
 * status. */
static int agent_option(int c, struct agentconf *flags, struct run_options *ro, struct agentconf_paths *paths) {
        int r = 0;

        switch (c) {
        case OPT_COORDINATOR:
                r = flag(flags, "coordinator", "--coordinator", optarg);
                break;
        case OPT_INFRA_ENV:
                r = flag(flags, "infra_env", "--infra-env", optarg);
                break;
        case OPT_TOKEN_FILE:
                r = flag(flags, "token_file", "--token-file", optarg);
                break;
        case OPT_CA:
                r = flag(flags, "ca_file", "--ca", optarg);
                break;
        case OPT_STATE_DIR:
                r = flag(flags, "state_dir", "--state-dir", optarg);
                break;
        case OPT_MIN_DISK:
                r = flag(flags, "min_disk_bytes", "--min-disk-bytes", optarg);
                break;
        case OPT_COORDINATOR_KEY:
                r = flag(flags, "coordinator_key_file", "--coordinator-key", optarg);
                break;
        case OPT_INSTALL_TARGET:
                r = flag(flags, "install_target", "--install-target", optarg);
                break;
        case OPT_SYSROOT:
                ro->sysroot = optarg;
                break;
        case OPT_HOST_ID:
                ro->host_id = optarg;
                break;
        case OPT_NO_REBOOT:
                ro->no_reboot = true;
                break;
        case OPT_IMAGE_TIMEOUT:
                if ((ro->image_timeout_s = parse_seconds(optarg)) <= 0) {
                        log_error("agent", "--image-timeout takes a duration (1800, 30m, 2h), not \"%s\"", optarg);
                        return RUN_EXIT_USAGE;
                }
                break;
        case OPT_MANIFEST_DIR:
                ro->manifest_dir = optarg;
                break;
        case OPT_BOOT_DIR:
                ro->boot_dir = optarg;
                break;
        case OPT_BOOT_CONFIG:
                paths->boot_config = optarg;
                break;
        case OPT_INITRD_CONFIG:
                paths->initrd_config = optarg;
                break;
        case OPT_AGENT_CONF:
                paths->agent_conf = optarg;
                break;
        case OPT_CMDLINE:
                paths->cmdline = optarg;
                break;
        default:
                return common_option(c, ro->node ? "node" : "run");
        }
        return r ? r : -1;
}

/* The merged settings as the loop takes them. */
static void options_from_conf(const struct agentconf *conf, struct run_options *ro) {
        ro->coordinator = conf->coordinator;
        ro->infra_env_id = conf->infra_env_id;
        ro->token = conf->token;
        ro->token_file = conf->token_file;
        ro->ca = conf->ca_file;
        ro->ca_pem = conf->ca_pem;
        ro->http_proxy = conf->http_proxy;
        ro->https_proxy = conf->https_proxy;
        ro->no_proxy = conf->no_proxy;
        ro->coordinator_key = conf->coordinator_key_file;
        ro->coordinator_key_pem = conf->coordinator_key_pem;
        ro->install_target = conf->install_target;
        ro->reclaim_wipe = conf->reclaim_wipe;
        ro->min_disk_bytes = conf->min_disk_bytes;
        ro->state_dir = conf->state_dir;
        /* A host configured by its boot medium or its files keeps its id; a
         * command line that names the coordinator keeps none unless asked. */
        if (!ro->state_dir && conf->from[AGENTCONF_COORDINATOR] != AGENTCONF_SRC_FLAG)
                ro->state_dir = AGENTCONF_DEFAULT_STATE_DIR;
}

/* `boot-setup`: the boot config's SSH key before the SSH server starts. */
static int cmd_boot_setup(int argc, char **argv) {
        enum { O_BOOT = 1, O_INITRD, O_ROOT };
        static const struct option opts[] = {
                { "boot-config", required_argument, NULL, O_BOOT },
                { "initrd-config", required_argument, NULL, O_INITRD },
                { "root", required_argument, NULL, O_ROOT },
                COMMON_OPTIONS,
                {},
        };
        struct bootsetup_options o = { 0 };
        int c, r;
        optind = 1;
        while ((c = getopt_long(argc, argv, "vh", opts, NULL)) >= 0)
                switch (c) {
                case O_BOOT:
                        o.boot_config = optarg;
                        break;
                case O_INITRD:
                        o.initrd_config = optarg;
                        break;
                case O_ROOT:
                        o.root = optarg;
                        break;
                default:
                        if ((r = common_option(c, "boot-setup")) >= 0)
                                return r;
                }
        if (optind < argc) {
                log_error("agent", "boot-setup takes no arguments (\"%s\")", argv[optind]);
                return 2;
        }
        return bootsetup_run(&o);
}

/* `run` and `node`: one option parser, the settings merged from their
 * sources (agentconf.h), one loop (run.h). */
static int cmd_agent(int argc, char **argv, bool node) {
        const char *cmd = node ? "node" : "run";
        struct agentconf_paths paths = { AGENTCONF_DEFAULT_BOOT_CONFIG, AGENTCONF_DEFAULT_AGENT_CONF,
                                         AGENTCONF_DEFAULT_CMDLINE, AGENTCONF_DEFAULT_INITRD_CONFIG };
        _cleanup_(agentconf_free) struct agentconf flags = { 0 }, conf = { 0 };
        struct run_options ro = { .node = node };
        char err[1024];
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, "vh", node ? node_opts : run_opts, NULL)) >= 0)
                if ((r = agent_option(c, &flags, &ro, &paths)) >= 0)
                        return r;
        if ((r = no_arguments(cmd, argc, argv)))
                return r;

        r = agentconf_load(&conf, &paths, &flags, err, sizeof err);
        if (r < 0) {
                log_error("agent", "%s", err);
                return r == -EINVAL ? RUN_EXIT_USAGE : RUN_EXIT_FAILURE;
        }
        unsigned missing = agentconf_missing(&conf, node);
        for (int s = 0; s < _AGENTCONF_SETTING_MAX; s++)
                if (missing & (1u << s))
                        log_missing((enum agentconf_setting) s, cmd, &paths);
        if (node && !ro.manifest_dir) {
                log_error("agent", "node needs --manifest-dir; see muster-agent node --help");
                missing = 1;
        }
        if (missing)
                return RUN_EXIT_USAGE;

        options_from_conf(&conf, &ro);
        agentconf_describe(&conf, err, sizeof err);
        log_info("agent", "Settings: %s; state dir %s", err, ro.state_dir ? ro.state_dir : "none");
        return run_agent(&ro);
}

int agent_main(int argc, char **argv) {
        if (argc < 2) {
                usage(stderr, NULL);
                return 2;
        }
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
                if (argc > 2 && strcmp(argv[1], "help") == 0)
                        for (const char *const *k = (const char *const[]) { "inventory", "run", "node", "boot-setup", NULL };
                             *k; k++)
                                if (strcmp(argv[2], *k) == 0) {
                                        usage(stdout, *k);
                                        return 0;
                                }
                usage(stdout, NULL);
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("muster-agent %s (inventory_version %d)\n", MUSTER_VERSION, INVENTORY_VERSION);
                return 0;
        }
        if (strcmp(argv[1], "inventory") == 0)
                return cmd_inventory(argc - 1, argv + 1);
        if (strcmp(argv[1], "boot-setup") == 0)
                return cmd_boot_setup(argc - 1, argv + 1);
        if (strcmp(argv[1], "run") == 0)
                return cmd_agent(argc - 1, argv + 1, false);
        if (strcmp(argv[1], "node") == 0)
                return cmd_agent(argc - 1, argv + 1, true);
        log_error("agent", "Unknown command \"%s\"; see muster-agent --help", argv[1]);
        return 2;
}
