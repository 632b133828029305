/* The steps that look at this host and nothing else: inventory (probe.h),
 * installation-disk-speed-check (diskspeed.h), and stop-installation, which
 * asks the loop to stop a running install. */
#include <errno.h>
#include <string.h>

#include "diskspeed.h"
#include "inventory.h"
#include "log.h"
#include "probe.h"
#include "run.h"
#include "steps.h"

void run_step_inventory(const struct run_instruction *in, const struct run_step_context *ctx,
                        struct run_step_result *res) {
        struct probe_options po = { .sysroot = ctx->sysroot, .min_install_bytes = ctx->min_disk_bytes };
        struct inventory inv;
        int r = inventory_probe(&po, &inv);

        if (r < 0) {
                errno = -r;
                res->error = step_printf("failed to probe %s: %m", ctx->sysroot ? ctx->sysroot : "/");
        } else if (!(res->output = inventory_to_json(&inv)))
                res->error = step_printf("out of memory while writing the inventory");
        inventory_free(&inv);
        res->exit_code = res->output ? 0 : 1;
}

/* stop-installation: {"stopped": whether an install was running}. */
void run_step_stop_installation(const struct run_instruction *in, const struct run_step_context *ctx,
                                struct run_step_result *res) {
        bool stopped = ctx->stop_install && ctx->stop_install(ctx->cancel_userdata);
        res->exit_code = 0;
        res->output = json_object_new_object();
        if (res->output)
                json_object_object_add(res->output, "stopped", json_object_new_boolean(stopped));
        if (stopped)
                log_warning("run", "Step %s: the coordinator cancelled the installation; stopping it", in->step_id);
}

/* installation-disk-speed-check: on the --install-target when there is one
 * (tests), else on args.path. */
void run_step_disk_speed_check(const struct run_instruction *in, const struct run_step_context *ctx,
                               struct run_step_result *res) {
        struct diskspeed_args a;
        json_object *out = NULL;
        char err[512];
        int r = diskspeed_args_parse(in->args, &a, err, sizeof err);
        if (r >= 0)
                r = diskspeed_run(&a, ctx->install ? ctx->install->target : NULL, &out, err, sizeof err);
        diskspeed_args_free(&a);
        if (r < 0) {
                res->exit_code = 1;
                res->error = r == -ENOMEM && !err[0] ? step_printf("out of memory")
                                                     : step_printf("%s", err[0] ? err : "the disk speed check failed");
                return;
        }
        log_info("run", "Step %s: fdatasync p99 %.2f ms on %s", in->step_id,
                 json_object_get_double(json_object_object_get(out, "p99_ms")),
                 json_object_get_string(json_object_object_get(out, "path")));
        res->exit_code = 0;
        res->output = out;
}
