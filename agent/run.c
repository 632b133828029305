/* `muster-agent run` and `node` (run.h): the start and the end. The
 * settings checked, the host id chosen, the coordinator key and the token
 * read, what an installed host's node agent will need prepared, the
 * signals turned into a descriptor, the coordinator client set up; then the
 * loop (runloop.c), and everything released again. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cleanup.h"
#include "client.h"
#include "crypto.h"
#include "curlload.h" /* curl_global_*: the dlopen()ed libcurl's */
#include "fdio.h"
#include "install.h"
#include "inventory.h"
#include "json-cleanup.h"
#include "log.h"
#include "model.h"
#include "probe.h"
#include "protocol.h"
#include "reclaim.h"
#include "runner.h"
#include "uuid.h"

/* The host id: --host-id, else the state dir's, else the inventory's (a
 * random one when the machine has no usable identity and there is a state
 * dir to keep it in). Recorded in the state dir when one is given. */
static int choose_host_id(const struct run_options *o, char out[UUID_STR_LEN]) {
        char stored[UUID_STR_LEN] = "";
        int r;

        if (o->state_dir) {
                r = run_state_read_host_id(o->state_dir, stored);
                if (r == -EINVAL)
                        log_warning("run", "%s/%s does not hold a host id; replacing it", o->state_dir, RUN_HOST_ID_FILE);
                else if (r < 0 && r != -ENOENT)
                        return log_error_errno(r, "run", "Failed to read %s/%s: %m", o->state_dir, RUN_HOST_ID_FILE);
                if (r < 0)
                        stored[0] = '\0';
        }
        if (o->host_id) {
                if (uuid_normalize(o->host_id, out) < 0)
                        return log_error_errno(EINVAL, "run", "--host-id needs a UUID, not \"%s\"", o->host_id);
                if (stored[0] && strcmp(stored, out) != 0)
                        log_warning("run", "--host-id %s replaces host id %s recorded in %s", out, stored, o->state_dir);
                log_info("run", "Host id %s (from --host-id)", out);
        } else if (stored[0]) {
                memcpy(out, stored, UUID_STR_LEN);
                log_info("run", "Host id %s (from %s/%s)", out, o->state_dir, RUN_HOST_ID_FILE);
        } else {
                struct probe_options po = { .sysroot = o->sysroot, .min_install_bytes = o->min_disk_bytes };
                struct inventory inv;
                r = inventory_probe(&po, &inv);
                if (r >= 0 && inv.host_id && uuid_normalize(inv.host_id, out) == 0)
                        log_info("run", "Host id %s (from %s)", out, inv.host_id_source ? inv.host_id_source : "the inventory");
                else if (o->state_dir && model_new_id(out) == 0)
                        log_warning("run", "No SMBIOS UUID, board serial or MAC to derive a host id from; "
                                    "using random host id %s, kept in %s", out, o->state_dir);
                else {
                        inventory_free(&inv);
                        return log_error_errno(r < 0 ? r : ENOENT, "run",
                                               "Failed to find a host id for this machine (%m); pass --host-id or --state-dir");
                }
                inventory_free(&inv);
        }
        if (o->state_dir && strcmp(stored, out) != 0) {
                r = run_state_write_host_id(o->state_dir, out);
                if (r < 0)
                        return log_error_errno(r, "run", "Failed to record the host id in %s: %m", o->state_dir);
        }
        return 0;
}

int run_load_coordinator_key(const char *path, struct crypto_key **out) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        *out = NULL;
        if (fd < 0)
                return -errno;
        int r = fd_read_all(fd, 0, RUN_MAX_KEY_BYTES, &buf, &len);
        if (r < 0)
                return r;
        if (strlen(buf) != len)
                return -EINVAL;
        return crypto_pubkey_load_pem(buf, out) < 0 ? -EINVAL : 0;
}

/* The install options from the command line: the key loaded, the target
 * looked at. RUN_EXIT_OK, or the exit code after logging why not. */
static int setup_install(struct runner *R) {
        const struct run_options *o = R->o;
        int r;

        R->inst = (struct install_options) {
                .target = o->install_target,
                .host_id = R->host_id,   /* filled in before the first step */
                .no_reboot = o->no_reboot,
                .node = o->node,
                .manifest_dir = o->manifest_dir,
                .image_deadline_s = o->image_timeout_s,
        };
        if (o->node && ((!o->coordinator_key && !o->coordinator_key_pem) || !o->manifest_dir)) {
                log_error("run", "muster-agent node needs a coordinator key and --manifest-dir");
                return RUN_EXIT_USAGE;
        }
        if (o->coordinator_key_pem) {
                if (strlen(o->coordinator_key_pem) > RUN_MAX_KEY_BYTES ||
                    crypto_pubkey_load_pem(o->coordinator_key_pem, &R->key) < 0) {
                        log_error("run", "The coordinator key PEM is not a P-256 public key of at most %d bytes",
                                  RUN_MAX_KEY_BYTES);
                        return RUN_EXIT_FAILURE;
                }
                R->inst.coordinator_key = R->key;
        } else if (o->coordinator_key) {
                r = run_load_coordinator_key(o->coordinator_key, &R->key);
                if (r == -EINVAL)
                        log_error("run", "Coordinator key %s is not a PEM P-256 public key", o->coordinator_key);
                else if (r == -EFBIG)
                        log_error("run", "Coordinator key %s is longer than %d bytes", o->coordinator_key,
                                  RUN_MAX_KEY_BYTES);
                else if (r < 0)
                        log_error_errno(r, "run", "Failed to read coordinator key %s: %m", o->coordinator_key);
                if (r < 0)
                        return RUN_EXIT_FAILURE;
                R->inst.coordinator_key = R->key;
        } else
                log_warning("run", "No coordinator key (--coordinator-key, coordinator_key_file in agent.conf or the "
                            "boot config): install steps will be refused");
        if (o->install_target && !o->node) {
                enum install_target_kind kind;
                r = install_target_classify(o->install_target, &kind);
                if (r == -EINVAL) {
                        log_error("run", "--install-target %s is not a file, a directory or a block device",
                                  o->install_target);
                        return RUN_EXIT_USAGE;
                }
                if (r < 0) {
                        log_error_errno(r, "run", "--install-target %s is not usable: %m", o->install_target);
                        return RUN_EXIT_USAGE;
                }
                log_info("run", "Install target %s (%s); this agent will not reboot", o->install_target,
                         install_target_kind_to_string(kind));
        }
        return RUN_EXIT_OK;
}

/* What run_agent() cannot go without: a coordinator URL, an infra-env and
 * a token, and ids that are UUIDs. RUN_EXIT_OK or RUN_EXIT_USAGE (logged). */
static int check_options(const struct run_options *o) {
        if (!o->coordinator || !o->infra_env_id || (!o->token && !o->token_file)) {
                log_error("run", "A coordinator, an infra-env and a token are needed");
                return RUN_EXIT_USAGE;
        }
        if (!client_url_is_valid(o->coordinator)) {
                log_error("run", "--coordinator needs an http:// or https:// URL, not \"%s\"", o->coordinator);
                return RUN_EXIT_USAGE;
        }
        if (!uuid_is_valid(o->infra_env_id)) {
                log_error("run", "--infra-env needs a UUID, not \"%s\"", o->infra_env_id);
                return RUN_EXIT_USAGE;
        }
        if (o->host_id && !uuid_is_valid(o->host_id)) {
                log_error("run", "--host-id needs a UUID, not \"%s\"", o->host_id);
                return RUN_EXIT_USAGE;
        }
        return RUN_EXIT_OK;
}

/* The token, inline or from its file, into *token. 0, or -1 after logging
 * why not. */
static int load_token(const struct run_options *o, char **token) {
        int r;

        if (o->token) {
                r = client_check_token(o->token);
                if (r < 0) {
                        log_error("run", "The token is empty, longer than %d bytes or not a token", CLIENT_TOKEN_MAX);
                        return -1;
                }
                if (!(*token = strdup(o->token))) {
                        log_error("run", "Out of memory");
                        return -1;
                }
        } else if ((r = client_read_token(o->token_file, token)) < 0) {
                if (r == -EINVAL)
                        log_error("run", "Token file %s is empty or not a token (spaces or control characters inside)",
                                  o->token_file);
                else if (r == -E2BIG)
                        log_error("run", "Token file %s is longer than %d bytes", o->token_file, CLIENT_TOKEN_MAX);
                else
                        log_error_errno(r, "run", "Failed to read token file %s: %m", o->token_file);
                return -1;
        }
        return 0;
}

/* A text file of at most max bytes (no NUL), malloc'd; NULL with errno. */
static char *read_text_file(const char *path, size_t max) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return NULL;
        char *buf = NULL;
        size_t len = 0;
        int r = fd_read_all(fd, 0, max, &buf, &len);
        if (r == 0 && memchr(buf, 0, len))
                r = -EINVAL;
        if (r < 0) {
                free(buf);
                errno = r == -EFBIG ? EINVAL : -r;
                return NULL;
        }
        return buf;
}

/* What an installed host's node agent will need (written beside its
 * manifests at install): its agent.conf and the coordinator key, owned by
 * the caller in *node_conf and *node_key_pem. 0, or -1 after logging. */
static int prepare_node_agent(struct runner *R, const char *token, char **node_conf, char **node_key_pem,
                              char **node_ca_pem) {
        const struct run_options *o = R->o;

        /* The CA this agent trusts the coordinator with, for the node agent. */
        if (o->ca_pem)
                *node_ca_pem = strdup(o->ca_pem);
        else if (o->ca && !(*node_ca_pem = read_text_file(o->ca, 256 * 1024))) {
                log_error_errno(errno, "run", "Failed to read CA file %s: %m", o->ca);
                return -1;
        }
        if ((o->ca_pem && !*node_ca_pem) ||
            !(*node_conf = install_node_conf(o->coordinator, o->infra_env_id, token, *node_ca_pem != NULL)) ||
            crypto_key_public_pem(R->key, node_key_pem) < 0) {
                log_error("run", "Out of memory");
                return -1;
        }
        R->inst.node_conf = *node_conf;
        R->inst.node_key_pem = *node_key_pem;
        R->inst.node_ca_pem = *node_ca_pem;
        R->inst.node_coordinator = o->coordinator;
        R->inst.node_infra_env = o->infra_env_id;
        return 0;
}

/* SIGTERM and SIGINT arrive on a descriptor, so every wait — the sleep, a
 * request, the backoff — ends at once; the step threads inherit the
 * blocked mask. *old gets the mask before. 0, or -1 after logging (with
 * the mask as it was). */
static int block_signals(struct runner *R, sigset_t *old) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if ((r = pthread_sigmask(SIG_BLOCK, &mask, old)) != 0) {
                log_error_errno(r, "run", "Failed to block signals: %m");
                return -1;
        }
        R->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (R->sfd < 0) {
                log_error_errno(errno, "run", "Failed to create a signalfd: %m");
                pthread_sigmask(SIG_SETMASK, old, NULL);
                return -1;
        }
        signal(SIGPIPE, SIG_IGN);
        return 0;
}

/* The coordinator paths of this host. 0, or -1 after logging. */
static int make_paths(struct runner *R) {
        uuid_normalize(R->o->infra_env_id, R->infra_env_id);
        if (asprintf(&R->register_path, MUSTER_API_PREFIX MUSTER_PATH_INFRA_ENV_HOSTS("%s"), R->infra_env_id) < 0)
                R->register_path = NULL;
        if (asprintf(&R->instructions_path, MUSTER_API_PREFIX MUSTER_PATH_HOST_INSTRUCTIONS("%s", "%s"),
                     R->infra_env_id, R->host_id) < 0)
                R->instructions_path = NULL;
        if (!R->register_path || !R->instructions_path) {
                log_error("run", "Out of memory");
                return -1;
        }
        return 0;
}

/* libcurl and the coordinator client, which takes the token (wiped here
 * once the client holds it). 0, or -1 after logging, with libcurl cleaned
 * up again. */
static int connect_client(struct runner *R, char *token) {
        const struct run_options *o = R->o;
        int r;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                log_error("run", "Failed to initialise libcurl");
                return -1;
        }
        r = client_init(&R->cl, o->coordinator, token, o->ca);
        explicit_bzero(token, strlen(token));
        if (r == 0 && o->ca_pem)
                r = client_set_ca_pem(&R->cl, o->ca_pem);
        if (r == 0)
                r = client_set_proxy(&R->cl, o->http_proxy, o->https_proxy, o->no_proxy);
        if (r < 0 && R->cl.curl)
                client_done(&R->cl);
        if (r < 0) {
                log_error_errno(r, "run", "Failed to set up the coordinator client: %m");
                curl_global_cleanup();
                return -1;
        }
        R->cl.cancel = runner_cancel_hook;
        R->cl.cancel_userdata = R;
        return 0;
}

/* The discovery system a reclaim --wipe booted: the installation disk
 * (the --install-target instead, in tests) loses its partition table and
 * signatures before the host registers as a new one. A failure is logged;
 * the host registers all the same, for the admin to see. */
static void reclaim_wipe_first(const struct run_options *o) {
        const char *target = o->install_target ? o->install_target : o->reclaim_wipe;
        _cleanup_json_ json_object *report = NULL;
        char err[512] = "";
        log_warning("run", "Reclaim: wiping %s%s before registering", target,
                    o->install_target ? " (the install target, in place of the disk)" : "");
        int r = reclaim_wipe(target, true, &report, err, sizeof err);
        if (r < 0) {
                log_error("run", "Reclaim: wiping %s failed: %s", target, err[0] ? err : strerror(-r));
                return;
        }
        json_object *e = NULL, *d = NULL;
        json_object_object_get_ex(report, "erased", &e);
        json_object_object_get_ex(report, "discarded", &d);
        log_info("run", "Reclaim: %s wiped (%s, %zu signatures erased)", target,
                 json_object_get_boolean(d) ? "discarded" : "not discarded",
                 json_object_is_type(e, json_type_array) ? json_object_array_length(e) : (size_t) 0);
}

int run_agent(const struct run_options *o) {
        struct runner R = { .o = o, .sfd = -1, .bo = { .base_ms = RUN_BACKOFF_BASE_MS, .max_ms = RUN_BACKOFF_MAX_MS } };
        _cleanup_free_ char *token = NULL;
        char *node_conf = NULL, *node_key_pem = NULL, *node_ca_pem = NULL;
        sigset_t old;
        bool ran = false;
        int r, ret;

        atomic_init(&R.stop, false);
        if ((ret = check_options(o)) != RUN_EXIT_OK)
                return ret;
        /* The agent's own recent lines, for logs-gather where no journal is. */
        (void) log_ring_enable(RUN_LOG_RING_BYTES);
        /* libcurl, loaded now rather than linked (curlload.h), and first:
         * an image without it is broken, so say so before any other setup
         * touches the state dir. Exit 2 as for a bad configuration, which the
         * unit does not restart (RestartPreventExitStatus=2 3): a restart
         * cannot bring the library back. */
        char why[512];
        if (curlload_open(why, sizeof why) < 0) {
                log_error("muster-agent", "%s", why);
                return RUN_EXIT_USAGE;
        }
        if ((ret = setup_install(&R)) != RUN_EXIT_OK)
                goto out_key;
        ret = RUN_EXIT_FAILURE;
        if (load_token(o, &token) < 0)
                goto out_key;
        if (o->ca && access(o->ca, R_OK) < 0) {
                log_error_errno(errno, "run", "Failed to read CA file %s: %m", o->ca);
                goto out_token;
        }
        if (!o->node && R.key && prepare_node_agent(&R, token, &node_conf, &node_key_pem, &node_ca_pem) < 0)
                goto out_token;
        if ((r = pthread_mutex_init(&R.jobs_lock, NULL)) != 0) {
                log_error_errno(r, "run", "Failed to set up a mutex: %m");
                goto out_token;
        }
        if (block_signals(&R, &old) < 0)
                goto out_mutex;
        if (choose_host_id(o, R.host_id) < 0)
                goto out_paths;
        /* Every line from now on carries the host id (MUSTER_HOST_ID= under journald). */
        log_set_process_fields((struct log_fields) { .host = R.host_id, .infra_env = R.infra_env_id });
        if (make_paths(&R) < 0 || connect_client(&R, token) < 0)
                goto out_paths;
        if (o->node)
                log_info("run", "muster-agent %s node: host %s, infra-env %s, coordinator %s, manifests in %s",
                         MUSTER_VERSION, R.host_id, R.infra_env_id, R.cl.base, o->manifest_dir);
        else
                log_info("run", "muster-agent %s: host %s, infra-env %s, coordinator %s", MUSTER_VERSION, R.host_id,
                         R.infra_env_id, R.cl.base);

        if (!o->node && o->reclaim_wipe)
                reclaim_wipe_first(o);
        ret = runner_loop(&R);
        if (ret == RUN_EXIT_OK)
                log_info("run", "Received %s; exiting", R.signo == SIGINT ? "SIGINT" : "SIGTERM");
        ran = true;
        runner_jobs_stop(&R);
        client_done(&R.cl);
        curl_global_cleanup();
out_paths:
        free(R.register_path);
        free(R.instructions_path);
        close(R.sfd);
        /* After a run the signals stay blocked: the process is about to
         * exit, and a second SIGTERM must not kill it halfway through. */
        if (!ran)
                pthread_sigmask(SIG_SETMASK, &old, NULL);
out_mutex:
        pthread_mutex_destroy(&R.jobs_lock);
out_token:
        if (token)
                explicit_bzero(token, strlen(token));
        if (node_conf)
                explicit_bzero(node_conf, strlen(node_conf));
        free(node_conf);
        free(node_key_pem);
        free(node_ca_pem);
out_key:
        log_set_process_fields((struct log_fields) { 0 });
        crypto_key_free(R.key);
        return ret;
}
