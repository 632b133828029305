/* The agent's step types, one table (steps.c): each type is a row,
 *   [STEP_X] = { run_step_x, modes, flags },
 * and a function of the one signature below; run_step_execute() (run.h)
 * refuses what the row does not allow and calls the function, and the loop
 * (runloop.c) reads the flags. A new step type is a value of enum
 * step_type (protocol.h), a row and a function. Also the helpers the step
 * files and the loop share. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "protocol.h"
#include "run.h"

/* One step: fill res (zeroed by the caller) from the instruction's args.
 * Blocking; may run on several threads at once for different steps. */
typedef void step_fn(const struct run_instruction *in, const struct run_step_context *ctx,
                     struct run_step_result *res);

/* Which agent runs a step type (a row's modes). */
#define STEP_IN_DISCOVERY (1u << 0) /* muster-agent run, on the discovery system */
#define STEP_IN_NODE (1u << 1)      /* muster-agent node, on an installed host */

/* How the loop treats a step type (a row's flags). */
#define STEP_BACKGROUND (1u << 0) /* runs on a thread of its own, once per (cluster, revision) of
                                   * its install args, while the loop polls on (runjobs.c) */
#define STEP_REBOOTS (1u << 1)    /* its result may ask for a reboot (res->reboot), done once the
                                   * coordinator took the result */

struct step_kind {
        step_fn *fn;
        unsigned modes;         /* STEP_IN_* */
        unsigned flags;         /* STEP_BACKGROUND, STEP_REBOOTS */
        const char *node_name;  /* what a node agent calls it, when not its type's name */
};

/* The row of a step type; NULL for a type this agent does not run. */
const struct step_kind *step_kind_of(enum step_type t);

/* The step functions of the table, each in the file of its step. */
step_fn run_step_inventory;          /* steps_host.c */
step_fn run_step_disk_speed_check;   /* steps_host.c */
step_fn run_step_stop_installation;  /* steps_host.c */
step_fn run_step_connectivity_check; /* steps_net.c */
step_fn run_step_ntp_synchronizer;   /* steps_net.c */
step_fn run_step_domain_resolution;  /* steps_net.c */
step_fn run_step_install;            /* step_install.c */
step_fn run_step_logs_gather;        /* step_logs.c */
step_fn run_step_reclaim;            /* step_reclaim.c */

/* ---- shared by the steps and the loop ----------------------------------- */

/* A malloc'd printf, NULL on ENOMEM: a step's error text. */
char *step_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* CLOCK_MONOTONIC in ms. */
int64_t step_mono_ms(void);
/* A random value for backoff jitter; never blocks. */
uint32_t step_random_u32(void);
/* Sleep ms in 100 ms steps unless cancel(userdata) says stop (NULL: never);
 * true when it did. */
bool step_sleep_unless(bool (*cancel)(void *userdata), void *userdata, uint32_t ms);
