/* The step table (steps.h): what each step type runs, in which agent, and
 * how the loop treats it; one instruction's dispatch through it, the
 * result document, and the small helpers the steps and the loop share. */
#include "steps.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "json-cleanup.h"

/* lldpd's protos[] is the model: one designated row per enum value; a type
 * without a row is answered "not supported". */
static const struct step_kind steps[_STEP_TYPE_MAX] = {
        [STEP_INVENTORY] = { .fn = run_step_inventory, .modes = STEP_IN_DISCOVERY, .flags = 0 },
        [STEP_CONNECTIVITY_CHECK] = { .fn = run_step_connectivity_check, .modes = STEP_IN_DISCOVERY, .flags = 0 },
        [STEP_NTP_SYNCHRONIZER] = { .fn = run_step_ntp_synchronizer, .modes = STEP_IN_DISCOVERY, .flags = 0 },
        [STEP_DOMAIN_RESOLUTION] = { .fn = run_step_domain_resolution, .modes = STEP_IN_DISCOVERY, .flags = 0 },
        [STEP_INSTALLATION_DISK_SPEED_CHECK] = { .fn = run_step_disk_speed_check,
                                                 .modes = STEP_IN_DISCOVERY,
                                                 .flags = 0 },
        /* On a node, install steps are apply steps (install.h). */
        [STEP_INSTALL] = { .fn = run_step_install,
                           .modes = STEP_IN_DISCOVERY | STEP_IN_NODE,
                           .flags = STEP_BACKGROUND | STEP_REBOOTS,
                           .node_name = "apply" },
        [STEP_LOGS_GATHER] = { .fn = run_step_logs_gather, .modes = STEP_IN_DISCOVERY | STEP_IN_NODE, .flags = 0 },
        [STEP_STOP_INSTALLATION] = { .fn = run_step_stop_installation, .modes = STEP_IN_DISCOVERY, .flags = 0 },
        [STEP_RECLAIM] = { .fn = run_step_reclaim, .modes = STEP_IN_NODE, .flags = STEP_REBOOTS },
};

const struct step_kind *step_kind_of(enum step_type t) {
        if ((int) t < 0 || t >= _STEP_TYPE_MAX || !steps[t].fn)
                return NULL;
        return &steps[t];
}

/* "apply, logs-gather and reclaim": the steps a node agent runs. */
static void node_steps(char *buf, size_t n) {
        size_t k = 0, count = 0, len = 0;
        for (int t = 0; t < _STEP_TYPE_MAX; t++)
                count += step_kind_of(t) && (steps[t].modes & STEP_IN_NODE);
        buf[0] = '\0';
        for (int t = 0; t < _STEP_TYPE_MAX && len < n; t++) {
                if (!step_kind_of(t) || !(steps[t].modes & STEP_IN_NODE))
                        continue;
                const char *name = steps[t].node_name ? steps[t].node_name : step_type_to_string(t);
                int w = snprintf(buf + len, n - len, "%s%s", k == 0 ? "" : k + 1 == count ? " and " : ", ", name);
                if (w < 0)
                        break;
                len += (size_t) w;
                k++;
        }
}

void run_step_execute(const struct run_instruction *in, const struct run_step_context *ctx,
                      struct run_step_result *res) {
        const struct step_kind *k = step_kind_of(in->type);
        bool node = ctx->install && ctx->install->node;

        memset(res, 0, sizeof *res);
        if (node && !(k && (k->modes & STEP_IN_NODE))) {
                char names[256];
                node_steps(names, sizeof names);
                res->exit_code = 1;
                res->error = step_printf("muster-agent node runs only %s steps, not %s", names, in->step_type);
                return;
        }
        if (k && !node && !(k->modes & STEP_IN_DISCOVERY)) {
                res->exit_code = 1;
                res->error = step_printf("%s is for an installed host's node agent, not the discovery agent",
                                         step_type_to_string(in->type));
                return;
        }
        if (!k) {
                res->exit_code = 1;
                res->error = step_printf("step type %s is not supported by this agent", in->step_type);
                return;
        }
        k->fn(in, ctx, res);
}

void run_step_result_free(struct run_step_result *res) {
        json_object_put(res->output);
        free(res->error);
        memset(res, 0, sizeof *res);
}

/* Add v (owned) as member k; a NULL v is JSON null when null_ok, else a
 * failed allocation. */
static int add_member(json_object *o, const char *k, json_object *v, bool null_ok) {
        if (!v && !null_ok)
                return -ENOMEM;
        if (json_object_object_add(o, k, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

json_object *run_result_json(const struct run_instruction *in, const struct run_step_result *res) {
        _cleanup_json_ json_object *o = json_object_new_object();

        if (!o || add_member(o, "step_id", json_object_new_string(in->step_id), false) < 0 ||
            add_member(o, "step_type", json_object_new_string(in->step_type), false) < 0 ||
            add_member(o, "exit_code", json_object_new_int(res->exit_code), false) < 0 ||
            add_member(o, "output", json_object_get(res->output), true) < 0 ||
            add_member(o, "error", res->error ? json_object_new_string(res->error) : NULL, !res->error) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* ---- shared by the steps and the loop ----------------------------------- */

char *step_printf(const char *fmt, ...) {
        char *s;
        va_list ap;
        va_start(ap, fmt);
        int k = vasprintf(&s, fmt, ap);
        va_end(ap);
        return k < 0 ? NULL : s;
}

int64_t step_mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint32_t step_random_u32(void) {
        uint32_t v;
        if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t) sizeof v)
                v = (uint32_t) step_mono_ms() * 2654435761u ^ (uint32_t) getpid();
        return v;
}

bool step_sleep_unless(bool (*cancel)(void *userdata), void *userdata, uint32_t ms) {
        for (uint32_t slept = 0; slept < ms; slept += 100) {
                if (cancel && cancel(userdata))
                        return true;
                usleep(100 * 1000);
        }
        return cancel && cancel(userdata);
}
