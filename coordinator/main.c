/* musterd: the coordinator. Parses options and runs until SIGINT/SIGTERM. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "musterd.h"

static void usage(FILE *f) {
        fputs("Usage: musterd [--listen ADDR:PORT] [--state-dir DIR] [--store sqlite:PATH] [--config FILE]\n"
              "\n"
              "  --listen ADDR:PORT   Address to serve the API on (default from config: 0.0.0.0:8090)\n"
              "  --state-dir DIR      Keys, admin.token and the default store (DIR/muster.db)\n"
              "  --store URL          sqlite:PATH (default: sqlite:DIR/muster.db)\n"
              "  --config FILE        Configuration file (see musterd.conf)\n"
              "  -v, --verbose        Debug logging\n"
              "  -h, --help           Show this help\n",
              f);
}

int main(int argc, char **argv) {
        static const struct option opts[] = {
                { "listen", required_argument, NULL, 'l' }, { "state-dir", required_argument, NULL, 's' },
                { "store", required_argument, NULL, 'S' },  { "config", required_argument, NULL, 'c' },
                { "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
                {},
        };
        struct muster_config cfg;
        const char *listen = NULL, *state = NULL, *store = NULL, *config = NULL;
        char err[512];
        int c;

        while ((c = getopt_long(argc, argv, "vh", opts, NULL)) >= 0) {
                switch (c) {
                case 'l': listen = optarg; break;
                case 's': state = optarg; break;
                case 'S': store = optarg; break;
                case 'c': config = optarg; break;
                case 'v': log_set_max_level(LOG_LVL_DEBUG); break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                log_error("musterd", "unexpected argument \"%s\"", argv[optind]);
                return 2;
        }
        config_defaults(&cfg);
        if (config && config_load(config, &cfg, err, sizeof err) < 0) {
                log_error("musterd", "%s", err);
                return 2;
        }
        if (listen)
                snprintf(cfg.listen, sizeof cfg.listen, "%s", listen);
        if (state)
                snprintf(cfg.state_dir, sizeof cfg.state_dir, "%s", state);
        if (store)
                snprintf(cfg.store, sizeof cfg.store, "%s", store);
        if (!cfg.state_dir[0]) {
                log_error("musterd", "--state-dir is required (or state_dir in the config file)");
                return 2;
        }

        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set, NULL); /* every thread inherits the mask */
        signal(SIGPIPE, SIG_IGN);

        struct musterd d;
        if (musterd_start(&d, &cfg) < 0) {
                musterd_stop(&d);
                return 1;
        }
        log_info("musterd", "serving on %s (port %u), state in %s", cfg.listen, http_server_port(d.http), cfg.state_dir);
        int sig = 0;
        sigwait(&set, &sig);
        log_info("musterd", "signal %d: stopping", sig);
        musterd_stop(&d);
        return 0;
}
