/* musterd: the coordinator. Parses options and runs until SIGINT/SIGTERM;
 * SIGHUP re-reads the --config file. Tells systemd (Type=notify) when it
 * serves, reloads and stops; without $NOTIFY_SOCKET those messages go
 * nowhere. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "log.h"
#include "daemon/musterd.h"
#include "store/store.h"

static void usage(FILE *f) {
        fputs("Usage: musterd [--listen ADDR:PORT] [--state-dir DIR] [--store URL] [--config FILE]\n"
              "               [--insecure-http]\n"
              "       musterd --check-config FILE           (exit 0 if FILE is good, 2 with file:line: why)\n"
              "       musterd --version\n"
              "       musterd migrate --from URL --to URL   (a store copied into another; --help)\n"
              "\n"
              "  --listen ADDR:PORT   Address to serve the API on (default from config: 0.0.0.0:8090)\n"
              "  --state-dir DIR      Keys, admin.token and the default store (DIR/muster.db)\n"
              "  --store URL          sqlite:PATH (default: sqlite:DIR/muster.db) or\n"
              "                       postgres://USER@HOST/DB[?sslmode=...&pool=N] (PostgreSQL)\n"
              "  --config FILE        Configuration file (see musterd.conf); SIGHUP re-reads it\n"
              "  --insecure-http      Serve plain HTTP instead of HTTPS (a lab only: tokens and\n"
              "                       secrets cross the network unencrypted; said at start and\n"
              "                       in /readyz). Without it musterd serves HTTPS with\n"
              "                       [server] tls_cert/tls_key, or with a certificate from its\n"
              "                       own CA (DIR/tls/ca.pem, made at first start)\n"
              "  --check-config FILE  Read FILE as musterd.conf, over the defaults, and stop:\n"
              "                       \"FILE: ok\" and exit 0, or the first bad line as\n"
              "                       FILE:LINE: reason and exit 2; starts nothing\n"
              "  -v, --verbose        Debug logging\n"
              "  -h, --help           Show this help\n"
              "  --version            Show musterd's version, its API and its store schema\n"
              "\n"
              "Exit status: 0 stopped cleanly (SIGTERM, SIGINT) or a good --check-config;\n"
              "1 could not start (port, state directory, store); 2 bad usage or configuration.\n",
              f);
}

static int check_config(const char *path) {
        static struct muster_config cfg;
        char err[512];
        if (config_load(path, &cfg, err, sizeof err) < 0) {
                fprintf(stderr, "%s\n", err);
                return 2;
        }
        printf("%s: ok\n", path);
        return 0;
}

/* What the command line sets over the configuration file (at start and at
 * every reload). */
struct overrides {
        const char *config, *listen, *state, *store;
        bool insecure; /* --insecure-http */
};

/* The configuration file (or the defaults) with the command line over it.
 * 0, or -errno with the reason ("file:line: ...") in err. */
static int load_config(const struct overrides *o, struct muster_config *cfg, char *err, size_t errlen) {
        config_defaults(cfg);
        if (o->config) {
                int r = config_load(o->config, cfg, err, errlen);
                if (r < 0)
                        return r;
        }
        if (o->listen)
                snprintf(cfg->listen, sizeof cfg->listen, "%s", o->listen);
        if (o->state)
                snprintf(cfg->state_dir, sizeof cfg->state_dir, "%s", o->state);
        if (o->store)
                snprintf(cfg->store, sizeof cfg->store, "%s", o->store);
        if (o->insecure)
                cfg->insecure_http = true;
        return 0;
}

static uint64_t now_monotonic_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* [log] format and level; -v (debug) wins over the level. */
static bool verbose;
static void apply_log(const struct muster_config *cfg) {
        enum log_format f = LOG_FORMAT_TEXT;
        enum log_level l = LOG_LVL_INFO;
        (void) log_format_from_string(cfg->log_format, &f); /* checked when loaded */
        (void) log_level_from_string(cfg->log_level, &l);
        log_set_format(f);
        log_set_max_level(verbose ? LOG_LVL_DEBUG : l);
}

/* SIGHUP: RELOADING=1, the file again, READY=1. A file that does not load
 * changes nothing: the error is logged and musterd goes on as it was. */
static void reload(struct musterd *d, const struct overrides *o, const char *serving) {
        static struct muster_config next; /* large: not on the stack; main's thread only */
        char err[512];

        (void) sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=Reloading %s", now_monotonic_usec(),
                          o->config ? o->config : "the configuration");
        if (!o->config) {
                log_info("musterd", "SIGHUP: no --config file to re-read");
                (void) sd_notifyf(0, "READY=1\nSTATUS=%s", serving);
                return;
        }
        int r = load_config(o, &next, err, sizeof err);
        if (r < 0) {
                log_error("musterd", "reload failed, keeping the running configuration: %s", err);
                (void) sd_notifyf(0, "READY=1\nSTATUS=%s; reload failed: %s", serving, err);
                return;
        }
        r = musterd_reload(d, &next);
        if (r < 0) {
                log_error_errno(r, "musterd", "reload failed, keeping the running configuration: %m");
                (void) sd_notifyf(0, "READY=1\nSTATUS=%s; reload failed", serving);
                return;
        }
        apply_log(&next);
        (void) sd_notifyf(0, "READY=1\nSTATUS=%s; configuration reloaded", serving);
}

/* ---- musterd migrate ------------------------------------------------------ */

static void migrate_usage(FILE *f) {
        fputs("Usage: musterd migrate --from URL --to URL\n"
              "\n"
              "Copies a stopped musterd's store into a new, empty one, then checks the copy: as many\n"
              "rows of each table in both, and every host the same in both. Stop musterd first.\n"
              "\n"
              "  --from URL   the store to copy: sqlite:PATH or PATH (it must exist), or postgres://...\n"
              "  --to URL     the empty store to fill: postgres://USER@HOST/DB[?sslmode=...] (the database\n"
              "               must exist; its tables are made), or sqlite:PATH\n"
              "  -h, --help   Show this help\n"
              "\n"
              "Exit status: 0 copied and checked, 1 failed (the destination is left as it was), 2 usage.\n",
              f);
}

/* A SQLite URL or plain path whose file is not there: the source is not
 * made up (opening a SQLite store makes its file). */
static bool sqlite_missing(const char *url) {
        const char *path = url;
        if (strncmp(url, "sqlite://", 9) == 0)
                path = url + 9;
        else if (strncmp(url, "sqlite:", 7) == 0)
                path = url + 7;
        else if (strstr(url, "://"))
                return false;
        struct stat st;
        return *path && stat(path, &st) < 0;
}

static int migrate_main(int argc, char **argv) {
        static const struct option opts[] = {
                { "from", required_argument, NULL, 'f' },
                { "to", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *from = NULL, *to = NULL;
        int c;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
                switch (c) {
                case 'f': from = optarg; break;
                case 't': to = optarg; break;
                case 'h': migrate_usage(stdout); return 0;
                default: migrate_usage(stderr); return 2;
                }
        }
        if (optind < argc || !from || !to) {
                migrate_usage(stderr);
                return 2;
        }
        if (sqlite_missing(from)) {
                log_error("migrate", "the source store %s does not exist", from);
                return 1;
        }
        struct store *a = NULL, *b = NULL;
        int r = store_open(from, &a);
        if (r < 0) {
                log_error_errno(r, "migrate", "Failed to open the source store %s: %m", from);
                return 1;
        }
        r = store_open(to, &b);
        if (r < 0) {
                log_error_errno(r, "migrate", "Failed to open the destination store %s: %m", to);
                store_close(a);
                return 1;
        }
        struct store_copy_report rep;
        char err[512] = "";
        r = store_copy(a, b, &rep, err, sizeof err);
        store_close(a);
        store_close(b);
        if (r < 0) {
                log_error_errno(r, "migrate", "The copy failed: %s (%m)", err[0] ? err : "see above");
                return 1;
        }
        int64_t rows = 0;
        printf("%-20s %12s\n", "TABLE", "ROWS");
        for (size_t i = 0; i < rep.n_tables; i++) {
                printf("%-20s %12lld\n", rep.tables[i].table, (long long) rep.tables[i].rows);
                rows += rep.tables[i].rows;
        }
        printf("copied %lld row(s) of %zu table(s); the same count of each in both; %lld host(s) read the same "
               "from both\n",
               (long long) rows, rep.n_tables, (long long) rep.hosts_checked);
        return 0;
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "listen", required_argument, NULL, 'l' }, { "state-dir", required_argument, NULL, 's' },
                { "store", required_argument, NULL, 'S' },  { "config", required_argument, NULL, 'c' },
                { "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
                { "insecure-http", no_argument, NULL, 'I' },
                { "version", no_argument, NULL, 'V' },      { "check-config", required_argument, NULL, 'C' },
                {},
        };
        static struct muster_config cfg;
        struct overrides o = { 0 };
        char err[512];
        int c;

        /* First thing: a SIGTERM during start-up waits for sigwait below
         * (a clean stop once started) instead of killing musterd halfway. */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* every thread inherits the mask */
        signal(SIGPIPE, SIG_IGN);

        if (argc >= 2 && strcmp(argv[1], "migrate") == 0)
                return migrate_main(argc - 1, argv + 1);
        while ((c = getopt_long(argc, argv, "vh", opts, NULL)) >= 0) {
                switch (c) {
                case 'l': o.listen = optarg; break;
                case 's': o.state = optarg; break;
                case 'S': o.store = optarg; break;
                case 'c': o.config = optarg; break;
                case 'I': o.insecure = true; break;
                case 'v': verbose = true; log_set_max_level(LOG_LVL_DEBUG); break;
                case 'h': usage(stdout); return 0;
                case 'V':
                        printf("musterd %s (API %s, store schema %d)\n", MUSTER_VERSION, MUSTER_API_VERSION,
                               store_schema_version_built());
                        return 0;
                case 'C': return check_config(optarg);
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                log_error("musterd", "unexpected argument \"%s\"", argv[optind]);
                return 2;
        }
        if (load_config(&o, &cfg, err, sizeof err) < 0) {
                log_error("musterd", "%s", err);
                (void) sd_notifyf(0, "STATUS=Bad configuration: %s", err);
                return 2;
        }
        apply_log(&cfg);
        if (!cfg.state_dir[0]) {
                log_error("musterd", "--state-dir is required (or state_dir in the config file)");
                return 2;
        }

        struct musterd d;
        if (musterd_start(&d, &cfg) < 0) {
                (void) sd_notify(0, "STATUS=Failed to start (see the log)");
                musterd_stop(&d);
                return 1;
        }
        char serving[CONFIG_LISTEN_MAX + 64];
        snprintf(serving, sizeof serving, "Serving %s on %s (port %u)", cfg.insecure_http ? "plain HTTP" : "HTTPS",
                 cfg.listen, http_server_port(d.api.http));
        log_info("musterd", "serving on %s (port %u), state in %s", cfg.listen, http_server_port(d.api.http), cfg.state_dir);
        (void) sd_notifyf(0, "READY=1\nSTATUS=%s", serving);

        for (;;) {
                int sig = 0;
                if (sigwait(&set, &sig) != 0)
                        continue;
                if (sig == SIGHUP) {
                        reload(&d, &o, serving);
                        continue;
                }
                log_info("musterd", "signal %d: stopping", sig);
                break;
        }
        (void) sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
        musterd_stop(&d);
        return 0;
}
