/* The logs-gather step: the bundle logsgather.h builds, cut to the size
 * asked for, uploaded to the coordinator. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cleanup.h"
#include "client.h"
#include "json-cleanup.h"
#include "log.h"
#include "logsgather.h"
#include "protocol.h"
#include "run.h"
#include "steps.h"

/* logs-gather {"max_bytes"?}: the bundle (logsgather.h), cut to fit the
 * coordinator's cap, uploaded to PUT .../logs; the result says what went. */
void run_step_logs_gather(const struct run_instruction *in, const struct run_step_context *ctx,
                          struct run_step_result *res) {
        int64_t max = RUN_LOGS_DEFAULT_MAX;
        json_object *v = NULL;
        char err[512] = "", what[600];
        res->exit_code = 1;
        if (json_object_object_get_ex(in->args, "max_bytes", &v)) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < (int64_t) LOGS_BUNDLE_MIN) {
                        res->error = step_printf("the arguments of step %s are not valid for logs-gather: "
                                                   "max_bytes must be an integer of at least %u",
                                                   in->step_id, LOGS_BUNDLE_MIN);
                        return;
                }
                max = json_object_get_int64(v);
        }
        if (max > RUN_LOGS_MAX)
                max = RUN_LOGS_MAX;
        if (!ctx->client || !ctx->infra_env_id || !ctx->host_id) {
                res->error = step_printf("no coordinator connection to upload the logs to");
                return;
        }
        _cleanup_free_ void *data = NULL;
        size_t len = 0;
        _cleanup_json_ json_object *summary = NULL, *reply = NULL;
        struct logs_sources src = LOGS_SOURCES_DEFAULT;
        if (ctx->journalctl)
                src.journalctl = ctx->journalctl;
        int r = logs_bundle_build(&src, ctx->host_id, MUSTER_VERSION, (size_t) max, &data, &len, &summary, err,
                                  sizeof err);
        if (r < 0) {
                res->error = step_printf("gathering the logs failed: %s", err[0] ? err : "out of memory");
                return;
        }
        _cleanup_free_ char *path = NULL;
        struct client cl;
        if (asprintf(&path, MUSTER_API_PREFIX MUSTER_PATH_HOST_LOGS("%s", "%s"), ctx->infra_env_id, ctx->host_id) < 0) {
                path = NULL;
                res->error = step_printf("out of memory");
                return;
        }
        if (client_clone(&cl, ctx->client) < 0) {
                res->error = step_printf("out of memory");
                return;
        }
        cl.cancel = ctx->cancel;
        cl.cancel_userdata = ctx->cancel_userdata;
        long status = 0;
        r = client_upload(&cl, "PUT", path, "application/gzip", data, len, &status, &reply);
        if (r < 0 || status < 200 || status > 299) {
                client_describe(&cl, r, status, reply, what, sizeof what);
                res->error = step_printf("uploading the logs (%zu bytes) failed: %s", len, what);
                client_done(&cl);
                return;
        }
        client_done(&cl);
        log_info("run", "Step %s: uploaded the logs (%zu bytes)", in->step_id, len);
        res->exit_code = 0;
        res->output = TAKE_PTR(summary);
}
