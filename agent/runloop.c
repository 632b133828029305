/* The coordinator loop of `muster-agent run` and `node` (runner.h):
 * register, poll for instructions, run the steps on a bounded pool of
 * threads (a STEP_BACKGROUND step goes to runjobs.c), post the results,
 * reboot when a step asked to, sleep; every wait ends at once on SIGTERM
 * or SIGINT (the signalfd). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backoff.h"
#include "cleanup.h"
#include "client.h"
#include "json-cleanup.h"
#include "log.h"
#include "runner.h"
#include "steps.h"

/* Whether a stop signal arrived; waits up to timeout_ms (0: just look).
 * The loop's thread only. */
static bool wait_signal(struct runner *R, int64_t timeout_ms) {
        if (R->signo)
                return true;
        int64_t deadline = step_mono_ms() + timeout_ms;
        for (;;) {
                int64_t left = deadline - step_mono_ms();
                struct pollfd p = { .fd = R->sfd, .events = POLLIN };
                int k = poll(&p, 1, left > 0 ? (int) (left > 86400000 ? 86400000 : left) : 0);
                if (k < 0 && errno != EINTR)
                        return false;
                if (k > 0) {
                        struct signalfd_siginfo si;
                        if (read(R->sfd, &si, sizeof si) == (ssize_t) sizeof si) {
                                R->signo = (int) si.ssi_signo;
                                atomic_store(&R->stop, true);
                                return true;
                        }
                }
                if (step_mono_ms() >= deadline)
                        return false;
        }
}

bool runner_cancel_hook(void *userdata) {
        return wait_signal(userdata, 0);
}
/* A transient failure: say so and wait. True when a signal ended the wait. */
static bool back_off(struct runner *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool back_off(struct runner *R, const char *fmt, ...) {
        uint32_t ms = backoff_next(&R->bo, step_random_u32());
        char what[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        log_warning("run", "%s; retrying in %.1f s", what, ms / 1000.0);
        R->failing = true;
        return wait_signal(R, ms);
}

static void succeeded(struct runner *R) {
        if (R->failing)
                log_info("run", "Coordinator %s answers again", R->cl.base);
        R->failing = false;
        backoff_reset(&R->bo);
}

static void describe(struct runner *R, int err, long status, json_object *reply, char *buf, size_t n) {
        client_describe(&R->cl, err, status, reply, buf, n);
}

static void auth_exit(struct runner *R, long status, json_object *reply) {
        char what[512];
        describe(R, 0, status, reply, what, sizeof what);
        log_error("run", "Coordinator %s refused this agent's token: %s %s; exiting with code %d",
                  R->cl.base, status == 401 ? "Unauthorized," : "Forbidden,", what, RUN_EXIT_AUTH);
}

/* A call the loop could not complete because of a signal. */
#define STOPPED (-1)

/* The host is unknown (404) or asked to register (exit). `run` registers
 * again; `node` never registers: it waits and asks again. Returns
 * RUN_ACT_REREGISTER, RUN_ACT_BACKOFF (already waited) or STOPPED. */
static int host_unknown(struct runner *R, const char *why) {
        if (!R->o->node) {
                log_info("run", "%s; registering again", why);
                return RUN_ACT_REREGISTER;
        }
        if (back_off(R, "%s; muster-agent node does not register", why))
                return STOPPED;
        return RUN_ACT_BACKOFF;
}

/* POST register. Returns RUN_ACT_* or STOPPED. */
static int do_register(struct runner *R) {
        _cleanup_json_ json_object *body = json_object_new_object(), *reply = NULL;
        long status = 0;
        if (!body || json_object_object_add(body, "host_id", json_object_new_string(R->host_id)) < 0 ||
            json_object_object_add(body, "discovery_agent_version", json_object_new_string(MUSTER_VERSION)) < 0)
                return RUN_ACT_BACKOFF;
        int r = client_request(&R->cl, "POST", R->register_path, body, &status, &reply, NULL);
        if (r == -ECANCELED)
                return STOPPED;
        enum run_action a = run_decide(RUN_CALL_REGISTER, r, status);
        if (a == RUN_ACT_OK) {
                succeeded(R);
                log_info("run", "Registered host %s with %s (HTTP %ld)", R->host_id, R->cl.base, status);
        } else if (a == RUN_ACT_AUTH_EXIT) {
                auth_exit(R, status, reply);
        } else {
                char what[600];
                describe(R, r, status, reply, what, sizeof what);
                if (back_off(R, "Registration with %s failed: %s", R->cl.base, what))
                        return STOPPED;
        }
        return a;
}

struct batch {
        const struct run_instructions *ins;
        const struct run_step_context *ctx;
        const uint8_t *disp;
        struct run_step_result *res;
        atomic_size_t next;
};

static void *worker(void *p) {
        struct batch *b = p;
        for (;;) {
                size_t i = atomic_fetch_add(&b->next, 1);
                if (i >= b->ins->n)
                        return NULL;
                if (b->disp[i] != DISP_RUN)
                        continue;
                const struct run_instruction *in = &b->ins->v[i];
                log_debug("run", "Running step %s (%s)", in->step_id, in->step_type);
                run_step_execute(in, b->ctx, &b->res[i]);
                log_debug("run", "Step %s finished with exit code %d", in->step_id, b->res[i].exit_code);
        }
}

/* Run the instructions marked DISP_RUN, at most RUN_MAX_THREADS at once;
 * this thread is one of the workers, so a failed pthread_create only slows
 * things down. */
static void run_all(const struct run_instructions *ins, const struct run_step_context *ctx, const uint8_t *disp,
                    struct run_step_result *res) {
        struct batch b = { .ins = ins, .ctx = ctx, .disp = disp, .res = res };
        pthread_t tids[RUN_MAX_THREADS];
        size_t n_threads = 0, n_run = 0;

        for (size_t i = 0; i < ins->n; i++)
                n_run += disp[i] == DISP_RUN;
        if (n_run == 0)
                return;
        size_t want = n_run < RUN_MAX_THREADS ? n_run : RUN_MAX_THREADS;
        atomic_init(&b.next, 0);
        for (size_t i = 1; i < want; i++) {
                int r = pthread_create(&tids[n_threads], NULL, worker, &b);
                if (r != 0) {
                        log_warning_errno(r, "run", "Failed to start a step thread: %m");
                        break;
                }
                n_threads++;
        }
        worker(&b);
        for (size_t i = 0; i < n_threads; i++)
                pthread_join(tids[i], NULL);
}

/* Post the results of the instructions marked DISP_RUN or DISP_POST, in
 * order. RUN_ACT_OK when all went (or were skipped), else the first action
 * that stops the posting, or STOPPED. */
static int post_results(struct runner *R, const struct run_instructions *ins, const uint8_t *disp,
                        const struct run_step_result *res) {
        for (size_t i = 0; i < ins->n; i++) {
                if (disp[i] == DISP_NONE)
                        continue;
                _cleanup_json_ json_object *doc = run_result_json(&ins->v[i], &res[i]), *reply = NULL;
                long status = 0;
                if (!doc) {
                        log_error("run", "Out of memory while writing the result of step %s", ins->v[i].step_id);
                        continue;
                }
                int r = client_request(&R->cl, "POST", R->instructions_path, doc, &status, &reply, NULL);
                if (r == -ECANCELED)
                        return STOPPED;
                enum run_action a = run_decide(RUN_CALL_RESULT, r, status);
                char what[600];
                switch (a) {
                case RUN_ACT_OK:
                        log_debug("run", "Posted the result of step %s (%s, exit code %d)", ins->v[i].step_id,
                                  ins->v[i].step_type, res[i].exit_code);
                        break;
                case RUN_ACT_SKIP:
                        describe(R, r, status, reply, what, sizeof what);
                        log_warning("run", "Coordinator refused the result of step %s (%s): %s", ins->v[i].step_id,
                                    ins->v[i].step_type, what);
                        break;
                case RUN_ACT_AUTH_EXIT:
                        auth_exit(R, status, reply);
                        return a;
                case RUN_ACT_REREGISTER:
                        snprintf(what, sizeof what, "Coordinator no longer knows host %s", R->host_id);
                        return host_unknown(R, what);
                case RUN_ACT_BACKOFF:
                        describe(R, r, status, reply, what, sizeof what);
                        if (back_off(R, "Posting the result of step %s to %s failed: %s", ins->v[i].step_id,
                                     R->cl.base, what))
                                return STOPPED;
                        return a;
                case _RUN_ACT_MAX:
                        break;
                }
        }
        return RUN_ACT_OK;
}

/* An installed system reboots cleanly, through systemd (its unit has no
 * CAP_SYS_BOOT); reboot(2) only where systemctl cannot be run. */
static void reboot_installed_system(void) {
        char *argv[] = { "systemctl", "reboot", NULL };
        pid_t pid;
        int status = 0;
        log_info("run", "Rebooting into the discovery system (systemctl reboot)");
        sync();
        if (posix_spawnp(&pid, "systemctl", NULL, NULL, argv, environ) == 0 &&
            waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return;
        log_warning("run", "systemctl reboot did not work; rebooting directly");
        if (reboot(RB_AUTOBOOT) < 0)
                log_error_errno(errno, "run", "Failed to reboot: %m");
}

/* Whether the table's row of step type t has flag f (steps.h). */
static bool step_has(enum step_type t, unsigned f) {
        const struct step_kind *k = step_kind_of(t);
        return k && (k->flags & f);
}

/* The steps of one poll: STEP_BACKGROUND steps (install) go to the
 * background, the others run now; then the results are posted. RUN_ACT_OK, the action that stopped
 * the posting (a backoff already waited out), or STOPPED. */
static int run_steps(struct runner *R, const struct run_instructions *ins, const char *date, int64_t received) {
        struct run_step_context ctx = runner_step_context(R);
        ctx.coordinator_date = date;
        ctx.date_received_ms = received;
        struct run_step_result *res = calloc(ins->n, sizeof *res);
        uint8_t *disp = calloc(ins->n, sizeof *disp);
        if (!res || !disp) {
                free(res);
                free(disp);
                if (back_off(R, "Out of memory for the step results"))
                        return STOPPED;
                return RUN_ACT_BACKOFF;
        }
        for (size_t i = 0; i < ins->n; i++)
                disp[i] = step_has(ins->v[i].type, STEP_BACKGROUND) ? runner_background_dispatch(R, &ins->v[i], &res[i])
                                                                    : DISP_RUN;
        run_all(ins, &ctx, disp, res);
        /* A signal during the steps: they are done, stop before posting. */
        int ret = wait_signal(R, 0) ? STOPPED : post_results(R, ins, disp, res);
        bool want_reboot = false;
        for (size_t i = 0; i < ins->n; i++) {
                want_reboot |= step_has(ins->v[i].type, STEP_REBOOTS) && res[i].reboot && res[i].exit_code == 0 &&
                               disp[i] == DISP_RUN;
                run_step_result_free(&res[i]);
        }
        /* A STEP_REBOOTS step run now (reclaim): into the discovery system,
         * once its result was taken. */
        if (want_reboot && ret == RUN_ACT_OK)
                reboot_installed_system();
        free(res);
        free(disp);
        return ret;
}

/* One poll: GET instructions, run them, post the results. Returns the
 * action for the loop (RUN_ACT_OK: sleep *sleep_s, then poll again) or
 * STOPPED. A backoff has already been waited out when it returns
 * RUN_ACT_BACKOFF. */
static int poll_once(struct runner *R, unsigned *sleep_s, bool *reregister) {
        _cleanup_json_ json_object *reply = NULL;
        _cleanup_free_ char *date = NULL;
        struct run_instructions ins;
        long status = 0;
        char err[256];

        *reregister = false;
        int r = client_request(&R->cl, "GET", R->instructions_path, NULL, &status, &reply, &date);
        int64_t received = step_mono_ms();
        if (r == -ECANCELED)
                return STOPPED;
        enum run_action a = run_decide(RUN_CALL_INSTRUCTIONS, r, status);
        switch (a) {
        case RUN_ACT_OK:
                break;
        case RUN_ACT_AUTH_EXIT:
                auth_exit(R, status, reply);
                return a;
        case RUN_ACT_REREGISTER:
                snprintf(err, sizeof err, "Coordinator no longer knows host %s (HTTP %ld)", R->host_id, status);
                return host_unknown(R, err);
        case RUN_ACT_BACKOFF:
        case RUN_ACT_SKIP:
        case _RUN_ACT_MAX: {
                char what[600];
                describe(R, r, status, reply, what, sizeof what);
                if (back_off(R, "Polling %s for instructions failed: %s", R->cl.base, what))
                        return STOPPED;
                return RUN_ACT_BACKOFF;
        }
        }

        r = run_parse_instructions(reply, &ins, err, sizeof err);
        if (r < 0) {
                if (back_off(R, "Coordinator %s sent instructions this agent cannot read: %s", R->cl.base,
                             r == -ENOMEM ? "out of memory" : err))
                        return STOPPED;
                return RUN_ACT_BACKOFF;
        }
        /* An "exit" a node cannot follow is no success: its waits grow. */
        if (!(R->o->node && ins.exit))
                succeeded(R);
        log_debug("run", "%zu instruction(s), next poll in %u s%s", ins.n, ins.next_instruction_seconds,
                  ins.exit ? ", register again" : "");

        int ret = ins.n > 0 ? run_steps(R, &ins, date, received) : RUN_ACT_OK;
        if (ret == RUN_ACT_OK && ins.exit) {
                snprintf(err, sizeof err, "Coordinator asked host %s to register again", R->host_id);
                ret = host_unknown(R, err);
                if (ret == RUN_ACT_REREGISTER) {
                        *reregister = true;
                        ret = RUN_ACT_OK;
                }
        }
        *sleep_s = ins.next_instruction_seconds;
        run_instructions_free(&ins);
        return ret;
}

int runner_loop(struct runner *R) {
        bool need_register = !R->o->node;
        unsigned reregister_streak = 0;

        for (;;) {
                if (wait_signal(R, 0))
                        return RUN_EXIT_OK;
                if (need_register) {
                        int a = do_register(R);
                        if (a == STOPPED)
                                return RUN_EXIT_OK;
                        if (a == RUN_ACT_AUTH_EXIT)
                                return RUN_EXIT_AUTH;
                        if (a != RUN_ACT_OK)
                                continue;
                        need_register = false;
                }

                unsigned sleep_s = RUN_DEFAULT_INTERVAL_S;
                bool reregister = false;
                int a = poll_once(R, &sleep_s, &reregister);
                switch (a) {
                case STOPPED:
                        return RUN_EXIT_OK;
                case RUN_ACT_AUTH_EXIT:
                        return RUN_EXIT_AUTH;
                case RUN_ACT_REREGISTER:
                        need_register = true;
                        /* Registered and at once unknown again: do not spin. */
                        if (reregister_streak++ > 0 && back_off(R, "Coordinator keeps forgetting this host"))
                                return RUN_EXIT_OK;
                        continue;
                case RUN_ACT_BACKOFF:
                        continue; /* already waited */
                default:
                        break;
                }
                reregister_streak = 0;
                need_register = reregister;
                if (wait_signal(R, (int64_t) sleep_s * 1000))
                        return RUN_EXIT_OK;
        }
}
