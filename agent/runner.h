/* What the coordinator loop's files share (runloop.c, runjobs.c, run.c):
 * the runner's state, and the background install jobs it keeps. Internal
 * to `muster-agent run` and `node`; run.h is the interface. */
#pragma once
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "client.h"
#include "crypto.h"
#include "install.h"
#include "run.h"
#include "uuid.h"

/* An install step running (or run) in the background: one per (cluster,
 * revision), so that the coordinator offering it on every poll neither
 * starts it twice nor stops the heartbeat while an image streams. */
struct install_job {
        struct runner *R;
        char *cluster_id;
        int64_t revision;
        struct run_instruction in;   /* a copy; args owned */
        struct run_step_result res;  /* valid once done */
        bool done;                   /* under R->jobs_lock */
        bool started;                /* the thread exists (join it) */
        pthread_t tid;
};

struct runner {
        const struct run_options *o;
        struct client cl;
        char host_id[UUID_STR_LEN];
        char infra_env_id[UUID_STR_LEN];
        char *register_path;
        char *instructions_path;
        int sfd;               /* signalfd of SIGTERM and SIGINT */
        int signo;             /* the signal that stopped us, 0 while running */
        atomic_bool stop;      /* the same for other threads */
        atomic_bool stop_install; /* stop-installation: the running install ends */
        struct backoff bo;
        bool failing;          /* the last call had no good answer */
        struct crypto_key *key;
        struct install_options inst;
        pthread_mutex_t jobs_lock;
        struct install_job *jobs[RUN_MAX_INSTALL_JOBS];
        size_t n_jobs;
};

/* What the loop does with each instruction of a poll. */
enum disposition {
        DISP_RUN,    /* run it now (with the batch) and post its result */
        DISP_POST,   /* its result is known already: post it */
        DISP_NONE,   /* runs in the background, or waits: post nothing */
};

/* A call the loop could not complete because of a signal. */
#define STOPPED (-1)

/* ---- runloop.c ---------------------------------------------------------- */

/* Register (run), poll, run the steps, post the results, sleep, until a
 * signal or a refused token: RUN_EXIT_OK or RUN_EXIT_AUTH. */
int runner_loop(struct runner *R);
/* The coordinator client's cancel hook (userdata R): a stop signal came.
 * The loop's thread only. */
bool runner_cancel_hook(void *userdata);

/* ---- runjobs.c ---------------------------------------------------------- */

/* The step context of the loop: everything a step needs. */
struct run_step_context runner_step_context(struct runner *R);
/* A STEP_BACKGROUND step offered by a poll (steps.h): start it on its own
 * thread, or note that it runs (or waits for another), or hand back the
 * result it had; DISP_RUN when it is to run with the batch after all (a
 * refusal, which needs no thread, or no thread to be had). */
enum disposition runner_background_dispatch(struct runner *R, const struct run_instruction *in,
                                            struct run_step_result *res);
/* At exit: let running background steps see the stop and end. */
void runner_jobs_stop(struct runner *R);
