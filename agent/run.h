/* `muster-agent run`: register with the coordinator, poll for instructions,
 * run the steps concurrently and post their results, until a signal or a
 * refused token (DESIGN §4). `muster-agent node` is the same loop on an
 * installed host: it never registers and runs only apply steps. Install
 * steps run in the background, once per (cluster, revision), while the
 * loop goes on polling. The pure pieces — reading an instructions
 * reply under limits, the interval clamp, what a status means for the loop,
 * one step's dispatch and result document — are exposed for tests. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "install.h"
#include "protocol.h"

/* Exit codes of `muster-agent run`. */
#define RUN_EXIT_OK 0          /* stopped by SIGTERM or SIGINT */
#define RUN_EXIT_FAILURE 1     /* could not start: a config source unreadable, token file, host id, state dir, setup */
#define RUN_EXIT_USAGE 2       /* bad command line or configuration, a setting missing, libcurl missing */
#define RUN_EXIT_AUTH 3        /* the coordinator refused the token (401/403) */

#define RUN_MAX_INSTRUCTIONS 64
#define RUN_STEP_ID_MAX 64         /* characters */
#define RUN_STEP_TYPE_MAX 64
#define RUN_MAX_THREADS 16         /* steps running at once */
#define RUN_DEFAULT_INTERVAL_S 60  /* when the reply names none */
#define RUN_MIN_INTERVAL_S 1
#define RUN_MAX_INTERVAL_S 3600
#define RUN_BACKOFF_BASE_MS 1000
#define RUN_BACKOFF_MAX_MS 60000
#define RUN_MAX_INSTALL_JOBS 8     /* (cluster, revision) pairs remembered */
#define RUN_MAX_KEY_BYTES 65536    /* --coordinator-key file */
#define RUN_LOG_RING_BYTES (1 << 20) /* the agent's recent log lines kept for logs-gather */
#define RUN_BOOT_DIR "/boot"       /* node: where reclaim writes the discovery boot entry */
#define RUN_LOGS_DEFAULT_MAX (32 << 20) /* logs-gather without max_bytes */
#define RUN_LOGS_MAX (1 << 30)
#define RUN_RECLAIM_FETCH_DEADLINE_MS (30 * 60 * 1000) /* each of the kernel and the initramfs */

/* The settings, merged from their sources by agentconf.h. */
struct run_options {
        const char *coordinator;     /* base URL */
        const char *infra_env_id;
        const char *token;           /* the token inline, or NULL: */
        const char *token_file;      /* read it from this file */
        const char *ca;              /* CA file, or NULL */
        const char *ca_pem;          /* CA certificates as PEM text (wins over ca), or NULL */
        const char *http_proxy;      /* proxies for every fetch, or NULL */
        const char *https_proxy;
        const char *no_proxy;
        const char *sysroot;         /* inventory's --sysroot, or NULL */
        const char *host_id;         /* --host-id, or NULL */
        const char *state_dir;       /* or NULL */
        int64_t min_disk_bytes;      /* 0: the probe's default */
        const char *coordinator_key; /* the coordinator's PEM public key file, or */
        const char *coordinator_key_pem; /* the PEM text (wins), or both NULL: installs are refused */
        const char *install_target;  /* --install-target FILE|DIR|DEVICE, or NULL */
        bool no_reboot;              /* --no-reboot */
        int64_t image_timeout_s;     /* --image-timeout; 0: INSTALL_IMAGE_DEADLINE_S */
        bool node;                   /* `muster-agent node`: never register, apply steps only */
        const char *manifest_dir;    /* node: --manifest-dir */
        const char *boot_dir;        /* node: --boot-dir, or NULL: RUN_BOOT_DIR, and reclaim reboots */
        const char *reclaim_wipe;    /* run: muster.reclaim_wipe=DISK, or NULL (reclaim.h) */
};

/* The key file's PEM read and parsed: 0, -EINVAL (not a P-256 public key),
 * -EFBIG (over RUN_MAX_KEY_BYTES), -errno. */
int run_load_coordinator_key(const char *path, struct crypto_key **out);

/* Run until stopped; returns one of the RUN_EXIT_* codes. Logs its own
 * errors. Once it has run, SIGTERM and SIGINT stay blocked (the caller is
 * about to exit). */
int run_agent(const struct run_options *o);

/* ---- instructions ------------------------------------------------------- */

struct run_instruction {
        char step_id[RUN_STEP_ID_MAX + 1];
        char step_type[RUN_STEP_TYPE_MAX + 1];
        enum step_type type;         /* _STEP_TYPE_INVALID for a type this build does not know */
        json_object *args;           /* an object, owned (never NULL after parsing) */
};

struct run_instructions {
        unsigned next_instruction_seconds; /* clamped */
        bool exit;                   /* post_step_action "exit": register again */
        struct run_instruction *v;
        size_t n;
};

/* Read an instructions reply {next_instruction_seconds?, post_step_action?
 * ("continue"|"exit"), instructions?[{step_id, step_type, args?}]}. Missing
 * members take their defaults (60 s, continue, none); a member of the wrong
 * type, a step_id that is empty, longer than RUN_STEP_ID_MAX or has control
 * characters, a step_type likewise, args that are not an object, or more
 * than RUN_MAX_INSTRUCTIONS entries refuse the whole reply. 0, -EINVAL (with
 * the first reason in err), -E2BIG (too many), -ENOMEM. *out is always
 * initialised; free it with run_instructions_free(). */
int run_parse_instructions(json_object *reply, struct run_instructions *out, char *err, size_t errlen);
void run_instructions_free(struct run_instructions *in);

/* next_instruction_seconds as the loop uses it: RUN_DEFAULT_INTERVAL_S when
 * absent, otherwise clamped to RUN_MIN_INTERVAL_S..RUN_MAX_INTERVAL_S. */
unsigned run_clamp_interval(bool present, int64_t seconds);

/* ---- what an answer means ------------------------------------------------ */

enum run_call {
        RUN_CALL_REGISTER,
        RUN_CALL_INSTRUCTIONS,
        RUN_CALL_RESULT,
        _RUN_CALL_MAX,
};

enum run_action {
        RUN_ACT_OK,          /* go on */
        RUN_ACT_AUTH_EXIT,   /* token refused: log once, exit RUN_EXIT_AUTH */
        RUN_ACT_REREGISTER,  /* the host is gone: register again */
        RUN_ACT_BACKOFF,     /* transient: wait (backoff) and try again */
        RUN_ACT_SKIP,        /* this result was refused: log and go on */
        _RUN_ACT_MAX,
};
const char *run_action_to_string(enum run_action a);

/* `err` is client_request()'s return (negative: no answer), `status` the
 * HTTP status when err is 0. */
enum run_action run_decide(enum run_call call, int err, long status);

/* ---- steps -------------------------------------------------------------- */

struct client;

struct run_step_context {
        const char *sysroot;
        int64_t min_disk_bytes;
        const char *coordinator_date;  /* Date header of the instructions reply, or NULL */
        int64_t date_received_ms;      /* CLOCK_MONOTONIC ms when that reply arrived */
        /* The install step: the agent's install options (NULL: none, so
         * install steps are refused for want of a key), the coordinator
         * client it clones its own connections from (NULL: none), the ids
         * progress is reported under, and what cancels its transfers. */
        const struct install_options *install;
        const struct client *client;
        const char *infra_env_id;
        const char *host_id;
        bool (*cancel)(void *userdata);
        void *cancel_userdata;
        /* stop-installation: stop a running install step (its transfers
         * see `cancel`); returns whether one was running. NULL: none runs. */
        bool (*stop_install)(void *userdata);
        /* reclaim: the boot partition's folder, and whether the host
         * reboots into it (not with --boot-dir, as in tests). */
        const char *boot_dir;
        bool reclaim_reboots;
        /* logs-gather: journalctl's path (NULL: searched in PATH). */
        const char *journalctl;
};

struct run_step_result {
        int exit_code;
        json_object *output;         /* owned, may be NULL */
        char *error;                 /* owned, may be NULL */
        bool reboot;                 /* install: reboot once this result is posted */
};

/* Run one instruction (blocking; safe to call from several threads at once
 * for different instructions). A step type this agent does not run gives
 * exit_code 1 and error "step type X is not supported by this agent"; an
 * install step without a key "no coordinator public key configured
 * (--coordinator-key); refusing to install"; in node mode (install->node)
 * every step but install gives "muster-agent node runs only apply steps,
 * not X". */
void run_step_execute(const struct run_instruction *in, const struct run_step_context *ctx,
                      struct run_step_result *res);
void run_step_result_free(struct run_step_result *res);

/* The ntp-synchronizer args to run with: a copy of `args`, plus
 * coordinator_date = `date` and coordinator_date_age_ms = `age_ms` when args
 * carry no coordinator_date and date is set. NULL on ENOMEM. */
json_object *run_ntp_args(json_object *args, const char *date, int64_t age_ms);

/* The result document {step_id, step_type, exit_code, output, error}; NULL
 * on ENOMEM. */
json_object *run_result_json(const struct run_instruction *in, const struct run_step_result *res);

/* ---- install downloads ------------------------------------------------------ */

/* How often, at most, an install step fetches its payload or OS image when
 * the coordinator (or the image server) does not answer or answers 5xx: a
 * coordinator restart must not fail the installs in flight. */
#define RUN_FETCH_ATTEMPTS 8
#define RUN_FETCH_BACKOFF_BASE_MS 500
#define RUN_FETCH_BACKOFF_MAX_MS 15000

/* Whether a fetch that ended with client_get_stream()'s `err` (<0: no
 * answer) and HTTP `status`, after `delivered` body bytes reached the sink
 * and with the sink's own error `sink_error`, is worth trying again from
 * the start: no answer (not a cancel, a bad URL or a size cap) or 502, 503,
 * 504, and nothing delivered yet (a half-written image is not resumed). */
bool run_fetch_transient(int err, long status, uint64_t delivered, int sink_error);

/* ---- host id -------------------------------------------------------------- */

#define RUN_HOST_ID_FILE "host-id" /* in the state dir */

/* The host id file in a state dir: 0 and the lower-case id, -ENOENT when
 * there is none, -EINVAL when it does not hold a UUID. */
int run_state_read_host_id(const char *state_dir, char out[37]);
/* Write it atomically (temporary file, fsync, rename); creates the dir. */
int run_state_write_host_id(const char *state_dir, const char *id);
