/* Background steps of the coordinator loop (runner.h): an install step
 * runs on a thread of its own, once per (cluster, revision), so that the
 * coordinator offering it on every poll neither starts it twice nor stops
 * the heartbeat while an image streams; its result is posted on its own
 * connection, then the host reboots when the install asked to. Also the
 * hooks that cancel it (a signal, stop-installation). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <unistd.h>

#include "backoff.h"
#include "cleanup.h"
#include "client.h"
#include "install.h"
#include "json-cleanup.h"
#include "log.h"
#include "runner.h"
#include "steps.h"

/* For the install threads: the loop's thread watches the signals. */
static bool job_cancel_hook(void *userdata) {
        struct runner *R = userdata;
        return atomic_load(&R->stop);
}

/* The install's own transfers also end on stop-installation (its result is
 * still posted, through job_cancel_hook). */
static bool install_cancel_hook(void *userdata) {
        struct runner *R = userdata;
        return atomic_load(&R->stop) || atomic_load(&R->stop_install);
}

static bool stop_install(void *userdata) {
        struct runner *R = userdata;
        bool running = false;
        pthread_mutex_lock(&R->jobs_lock);
        for (size_t i = 0; i < R->n_jobs; i++)
                running |= !R->jobs[i]->done;
        if (running)
                atomic_store(&R->stop_install, true);
        pthread_mutex_unlock(&R->jobs_lock);
        return running;
}

static void job_free(struct install_job *j) {
        if (!j)
                return;
        if (j->started)
                pthread_join(j->tid, NULL);
        json_object_put(j->in.args);
        run_step_result_free(&j->res);
        free(j->cluster_id);
        free(j);
}

/* The step context of the loop: everything a step needs. */
struct run_step_context runner_step_context(struct runner *R) {
        return (struct run_step_context) {
                .sysroot = R->o->sysroot,
                .min_disk_bytes = R->o->min_disk_bytes,
                .install = &R->inst,
                .client = &R->cl,
                .infra_env_id = R->infra_env_id,
                .host_id = R->host_id,
                .cancel = install_cancel_hook,
                .cancel_userdata = R,
                .stop_install = stop_install,
                .boot_dir = R->o->boot_dir ? R->o->boot_dir : RUN_BOOT_DIR,
                .reclaim_reboots = !R->o->boot_dir && !R->o->no_reboot,
        };
}

/* Post a background step's result on the job's own connection, retrying
 * transient failures until it goes through, is refused or the agent stops.
 * True when the coordinator took it. */
static bool job_post(struct install_job *j, struct client *cl) {
        struct runner *R = j->R;
        struct backoff bo = { .base_ms = RUN_BACKOFF_BASE_MS, .max_ms = RUN_BACKOFF_MAX_MS };

        for (;;) {
                _cleanup_json_ json_object *doc = run_result_json(&j->in, &j->res), *reply = NULL;
                long status = 0;
                char what[600];
                if (!doc) {
                        log_error("run", "Out of memory while writing the result of step %s", j->in.step_id);
                        return false;
                }
                int r = client_request(cl, "POST", R->instructions_path, doc, &status, &reply, NULL);
                if (r == -ECANCELED || atomic_load(&R->stop))
                        return false;
                enum run_action a = run_decide(RUN_CALL_RESULT, r, status);
                client_describe(cl, r, status, reply, what, sizeof what);
                switch (a) {
                case RUN_ACT_OK:
                        log_info("run", "Posted the result of step %s (exit code %d)", j->in.step_id, j->res.exit_code);
                        return true;
                case RUN_ACT_BACKOFF: {
                        uint32_t ms = backoff_next(&bo, step_random_u32());
                        log_warning("run", "Posting the result of step %s failed: %s; retrying in %.1f s", j->in.step_id,
                                    what, ms / 1000.0);
                        if (step_sleep_unless(job_cancel_hook, R, ms))
                                return false;
                        continue;
                }
                case RUN_ACT_SKIP:
                case RUN_ACT_AUTH_EXIT:
                case RUN_ACT_REREGISTER:
                case _RUN_ACT_MAX:
                        break;
                }
                log_warning("run", "Coordinator refused the result of step %s: %s", j->in.step_id, what);
                return false;
        }
}

static void *job_main(void *p) {
        struct install_job *j = p;
        struct runner *R = j->R;
        struct run_step_context ctx = runner_step_context(R);
        struct run_step_result res;
        struct client cl;
        bool posted = false;

        log_info("run", "Step %s: install (cluster %s, revision %lld) started", j->in.step_id, j->cluster_id,
                 (long long) j->revision);
        run_step_execute(&j->in, &ctx, &res);
        if (res.exit_code != 0 && atomic_load(&R->stop_install)) {
                char *why = step_printf("stopped by the coordinator (stop-installation): %s",
                                          res.error ? res.error : "no more was written");
                if (why) {
                        free(res.error);
                        res.error = why;
                }
        }
        if (res.exit_code == 0)
                log_info("run", "Step %s succeeded", j->in.step_id);
        else
                log_warning("run", "Step %s failed: %s", j->in.step_id, res.error ? res.error : "unknown error");

        /* Only this thread touches j->res until `done` is set. */
        j->res = res;
        if (!atomic_load(&R->stop)) {
                if (client_clone(&cl, &R->cl) == 0) {
                        cl.cancel = job_cancel_hook;
                        cl.cancel_userdata = R;
                        posted = job_post(j, &cl);
                        client_done(&cl);
                } else
                        log_error("run", "Out of memory for a connection to post step %s with", j->in.step_id);
        }
        const struct step_kind *k = step_kind_of(j->in.type);
        bool do_reboot = k && (k->flags & STEP_REBOOTS) && j->res.reboot && posted && !atomic_load(&R->stop);
        j->res.reboot = false; /* a result posted again later reboots nothing */

        pthread_mutex_lock(&R->jobs_lock);
        j->done = true;
        pthread_mutex_unlock(&R->jobs_lock);

        if (do_reboot) {
                log_info("run", "Rebooting into the installed system");
                sync();
                if (reboot(RB_AUTOBOOT) < 0)
                        log_error_errno(errno, "run", "Failed to reboot: %m");
        }
        return NULL;
}

/* Copy a finished job's result for posting again. */
static int copy_result(const struct run_step_result *from, struct run_step_result *to) {
        memset(to, 0, sizeof *to);
        to->exit_code = from->exit_code;
        if (from->output && json_object_deep_copy(from->output, &to->output, NULL) < 0)
                return -ENOMEM;
        if (from->error && !(to->error = strdup(from->error))) {
                run_step_result_free(to);
                return -ENOMEM;
        }
        return 0;
}

/* Make room for one more job: forget the oldest finished one. */
static void jobs_make_room(struct runner *R) {
        if (R->n_jobs < RUN_MAX_INSTALL_JOBS)
                return;
        for (size_t i = 0; i < R->n_jobs; i++) {
                if (!R->jobs[i]->done)
                        continue;
                job_free(R->jobs[i]);
                memmove(&R->jobs[i], &R->jobs[i + 1], (R->n_jobs - i - 1) * sizeof *R->jobs);
                R->n_jobs--;
                return;
        }
}

/* An install step offered by a poll: start it in the background, or note
 * that it runs, or hand back its result. */
enum disposition runner_background_dispatch(struct runner *R, const struct run_instruction *in,
                                            struct run_step_result *res) {
        struct install_args a;
        enum disposition d = DISP_NONE;

        /* Refusals are quick and need no thread. */
        if (!R->inst.coordinator_key || install_args_parse(in->args, &a, NULL, 0) < 0)
                return DISP_RUN;

        pthread_mutex_lock(&R->jobs_lock);
        struct install_job *same = NULL, *busy = NULL;
        for (size_t i = 0; i < R->n_jobs; i++) {
                struct install_job *j = R->jobs[i];
                if (j->revision == a.revision && strcmp(j->cluster_id, a.cluster_id) == 0)
                        same = j;
                if (!j->done)
                        busy = j;
        }
        if (same && !same->done)
                log_debug("run", "Step %s: cluster %s revision %lld is still being installed", in->step_id,
                          a.cluster_id, (long long) a.revision);
        else if (same) {
                log_debug("run", "Step %s: cluster %s revision %lld ran already; posting its result again",
                          in->step_id, a.cluster_id, (long long) a.revision);
                d = copy_result(&same->res, res) < 0 ? DISP_RUN : DISP_POST;
        } else if (busy)
                log_info("run", "Step %s waits: step %s (cluster %s revision %lld) is still running", in->step_id,
                         busy->in.step_id, busy->cluster_id, (long long) busy->revision);
        else {
                jobs_make_room(R);
                struct install_job *j = calloc(1, sizeof *j);
                if (!j || R->n_jobs >= RUN_MAX_INSTALL_JOBS || json_object_deep_copy(in->args, &j->in.args, NULL) < 0) {
                        job_free(j);
                        d = DISP_RUN;
                        goto out;
                }
                j->R = R;
                j->cluster_id = TAKE_PTR(a.cluster_id);
                j->revision = a.revision;
                memcpy(j->in.step_id, in->step_id, sizeof j->in.step_id);
                memcpy(j->in.step_type, in->step_type, sizeof j->in.step_type);
                j->in.type = in->type;
                atomic_store(&R->stop_install, false); /* a new install: an old stop is done */
                int r = pthread_create(&j->tid, NULL, job_main, j);
                if (r != 0) {
                        log_warning_errno(r, "run", "Failed to start a thread for step %s: %m", in->step_id);
                        job_free(j);
                        d = DISP_RUN; /* it runs with the batch, then */
                        goto out;
                }
                j->started = true;
                R->jobs[R->n_jobs++] = j;
        }
out:
        pthread_mutex_unlock(&R->jobs_lock);
        install_args_free(&a);
        return d;
}

/* At exit: let running install steps see the stop and end. */
void runner_jobs_stop(struct runner *R) {
        atomic_store(&R->stop, true);
        for (size_t i = 0; i < R->n_jobs; i++)
                job_free(R->jobs[i]);
        R->n_jobs = 0;
}
