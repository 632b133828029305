/* The install step (install.h does the work): its two connections to the
 * coordinator, one streaming the payload and the OS image with retries and
 * resumes (run_fetch_transient), the other reporting progress while that
 * stream runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "cleanup.h"
#include "client.h"
#include "growbuf.h"
#include "install.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"
#include "protocol.h"
#include "run.h"
#include "steps.h"

/* Two connections of its own: one streams the payload and the image, the
 * other reports progress while that stream runs. */
struct install_link {
        const struct run_step_context *ctx;
        struct client dl, api;
        char *progress_path;
        const char *stage;     /* the last stage reported, or NULL */
        int percent;
};

struct membuf {
        struct growbuf b;
        size_t max;             /* the client's cap on the body */
};

static int membuf_sink(void *userdata, const void *p, size_t n) {
        struct membuf *m = userdata;
        int r = growbuf_append(&m->b, p, n, m->max, 65536);
        return r == -E2BIG ? -EFBIG : r;
}

bool run_fetch_transient(int err, long status, uint64_t delivered, int sink_error) {
        if (delivered > 0 || sink_error)
                return false;
        if (err < 0)
                return err != -ECANCELED && err != -EINVAL && err != -EFBIG && err != -ENOMEM;
        return status == 502 || status == 503 || status == 504;
}

/* Counts what reaches the real sink, so a retry knows nothing was written. */
struct counting_sink {
        int (*sink)(void *userdata, const void *data, size_t len);
        void *userdata;
        uint64_t delivered;
};

static int counting_sink(void *userdata, const void *data, size_t len) {
        struct counting_sink *c = userdata;
        int r = c->sink(c->userdata, data, len);
        if (r >= 0)
                c->delivered += len;
        return r;
}

/* GET target into sink, again (bounded, with backoff) while the failure is
 * transient: from the start while nothing was delivered, else from where
 * the transfer broke (s->resume_from). Not past s->deadline_ms. */
static int link_get(struct install_link *l, const char *target, struct client_stream *s, long *status,
                    json_object **reply) {
        struct backoff bo = { .base_ms = RUN_FETCH_BACKOFF_BASE_MS, .max_ms = RUN_FETCH_BACKOFF_MAX_MS };
        struct counting_sink c = { .sink = s->sink, .userdata = s->userdata };
        int r = 0;

        s->sink = counting_sink;
        s->userdata = &c;
        for (int attempt = 1;; attempt++) {
                json_object_put(*reply);
                *reply = NULL;
                *status = 0;
                s->sink_error = 0;
                s->resume_from = c.delivered;
                r = client_get_stream(&l->dl, target, s, status, reply);
                bool ok = r == 0 && *status >= 200 && *status <= 299;
                /* What was delivered stays: a retry resumes after it. */
                if (ok || attempt >= RUN_FETCH_ATTEMPTS || !run_fetch_transient(r, *status, 0, s->sink_error) ||
                    (s->deadline_ms > 0 && step_mono_ms() >= s->deadline_ms))
                        break;
                if (c.delivered > 0)
                        log_info("install", "Resuming %s after %llu bytes", target, (unsigned long long) c.delivered);
                char what[512];
                uint32_t ms = backoff_next(&bo, step_random_u32());
                client_describe(&l->dl, r, *status, *reply, what, sizeof what);
                log_warning("install", "Fetching %s failed (%s); attempt %d of %d in %.1f s", target, what, attempt + 1,
                            RUN_FETCH_ATTEMPTS, ms / 1000.0);
                if (step_sleep_unless(l->ctx->cancel, l->ctx->cancel_userdata, ms)) {
                        r = -ECANCELED;
                        break;
                }
        }
        s->sink = c.sink;
        s->userdata = c.userdata;
        return r;
}

static int link_fetch_payload(void *userdata, const char *path, size_t max, char **data, size_t *len, char *err,
                              size_t errlen) {
        struct install_link *l = userdata;
        _cleanup_json_ json_object *reply = NULL;
        struct membuf m = { .max = max };
        struct client_stream s = { .sink = membuf_sink, .userdata = &m, .max_bytes = max };
        long status = 0;

        int r = link_get(l, path, &s, &status, &reply);
        if (r == -EFBIG || s.sink_error == -EFBIG)
                snprintf(err, errlen, "it is larger than %zu bytes", max);
        else
                r = client_stream_result(&l->dl, &s, r, status, reply, err, errlen);
        if (r < 0) {
                free(m.b.data);
                return r;
        }
        if (!m.b.data && !(m.b.data = strdup("")))
                return -ENOMEM;
        *data = m.b.data;
        *len = m.b.len;
        return 0;
}

static int link_fetch_image(void *userdata, const char *url, uint64_t size, int (*sink)(void *, const void *, size_t),
                            void *sink_userdata, char *err, size_t errlen) {
        struct install_link *l = userdata;
        _cleanup_json_ json_object *reply = NULL;
        int64_t limit = install_image_deadline_ms(l->ctx->install, size);
        struct client_stream s = { .sink = sink, .userdata = sink_userdata, .deadline_ms = step_mono_ms() + limit,
                                   .ticks = true };
        long status = 0;

        int r = link_get(l, url, &s, &status, &reply);
        if (r == -ETIMEDOUT && step_mono_ms() >= s.deadline_ms) {
                snprintf(err, errlen, "not done within %lld s (retries and resumes included)",
                         (long long) (limit / 1000));
                return r;
        }
        if (r == -EINVAL && !s.sink_error) {
                snprintf(err, errlen, "not a coordinator path or an http(s) URL");
                return r;
        }
        return client_stream_result(&l->dl, &s, r, status, reply, err, errlen);
}

static void link_progress(void *userdata, enum install_stage stage_id, int percent, const char *info) {
        const char *stage = install_stage_to_string(stage_id);
        struct install_link *l = userdata;
        _cleanup_json_ json_object *body = json_object_new_object(), *reply = NULL;
        long status = 0;
        char what[512];

        log_info("install", "Install %s %d%%%s%s", stage, percent, info ? ": " : "", info ? info : "");
        l->stage = stage;
        l->percent = percent;
        if (!body || jadd(body, "stage", json_object_new_string(stage)) < 0 ||
            jadd(body, "percent", json_object_new_int(percent)) < 0 ||
            (info && jadd(body, "info", json_object_new_string(info)) < 0))
                return;
        int r = client_request(&l->api, "PUT", l->progress_path, body, &status, &reply, NULL);
        if (r == 0 && status >= 200 && status <= 299)
                return;
        client_describe(&l->api, r, status, reply, what, sizeof what);
        log_warning("install", "Failed to report progress (%s %d%%) to the coordinator: %s", stage, percent, what);
}

void run_step_install(const struct run_instruction *in, const struct run_step_context *ctx,
                      struct run_step_result *res) {
        struct install_link l = { .ctx = ctx };
        struct install_outcome out;
        struct install_args a;
        char err[512];
        int r;

        res->exit_code = 1;
        if (!ctx->install || !ctx->install->coordinator_key) {
                res->error = step_printf("%s", INSTALL_ERR_NO_KEY);
                return;
        }
        if (install_args_parse(in->args, &a, err, sizeof err) < 0) {
                res->error = step_printf("the arguments of step %s are not valid for install: %s", in->step_id, err);
                return;
        }
        if (!ctx->client || !ctx->infra_env_id || !ctx->host_id) {
                res->error = step_printf("no coordinator connection to fetch the payload with");
                install_args_free(&a);
                return;
        }
        if (client_clone(&l.dl, ctx->client) < 0 || client_clone(&l.api, ctx->client) < 0 ||
            asprintf(&l.progress_path, MUSTER_API_PREFIX MUSTER_PATH_HOST_PROGRESS("%s", "%s"), ctx->infra_env_id,
                     ctx->host_id) < 0) {
                l.progress_path = NULL;
                res->error = step_printf("out of memory");
                goto done;
        }
        l.dl.cancel = l.api.cancel = ctx->cancel;
        l.dl.cancel_userdata = l.api.cancel_userdata = ctx->cancel_userdata;

        struct install_io io = {
                .fetch_payload = link_fetch_payload,
                .fetch_image = link_fetch_image,
                .progress = a.mode == INSTALL_STEP_INSTALL ? link_progress : NULL,
                .userdata = &l,
        };
        r = install_execute(ctx->install, &a, &io, &out);
        /* A failure says where the install was when it ended (a stop too). */
        if (r < 0 && l.stage)
                res->error = step_printf("%s (at stage %s, %d%%)", out.error, l.stage, l.percent);
        else if (r < 0)
                res->error = step_printf("%s", out.error);
        else {
                res->exit_code = 0;
                res->output = TAKE_PTR(out.output);
                res->reboot = out.reboot;
        }
        install_outcome_free(&out);
done:
        client_done(&l.dl);
        client_done(&l.api);
        free(l.progress_path);
        install_args_free(&a);
}
