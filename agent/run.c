/* `muster-agent run` (run.h): the coordinator loop. Pure pieces first (the
 * instructions reply, the interval, what a status means, one step and its
 * result), then the host id kept in the state dir, then the loop itself:
 * register, poll, run the steps on a bounded pool of threads, post the
 * results, sleep — every wait ends at once on SIGTERM/SIGINT. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/reboot.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backoff.h"
#include "cleanup.h"
#include "client.h"
#include "crypto.h"
#include "curlload.h" /* curl_global_*: the dlopen()ed libcurl's */
#include "diskspeed.h"
#include "errmsg.h"
#include "fdio.h"
#include "growbuf.h"
#include "install.h"
#include "inventory.h"
#include "json-cleanup.h"
#include "log.h"
#include "logsgather.h"
#include "model.h"
#include "probe.h"
#include "protocol.h"
#include "reclaim.h"
#include "steps_net.h"
#include "uuid.h"

#define HOST_ID_FILE "host-id"
#define NTP_MAX_DATE_AGE_MS 3600000

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- instructions ------------------------------------------------------- */

unsigned run_clamp_interval(bool present, int64_t seconds) {
        if (!present)
                return RUN_DEFAULT_INTERVAL_S;
        if (seconds < RUN_MIN_INTERVAL_S)
                return RUN_MIN_INTERVAL_S;
        if (seconds > RUN_MAX_INTERVAL_S)
                return RUN_MAX_INTERVAL_S;
        return (unsigned) seconds;
}

/* A printable string of 1..max bytes into out. */
static int read_token(json_object *o, const char *key, size_t i, char *out, size_t max, char *err, size_t errlen) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return errmsg(err, errlen, -EINVAL, "instructions[%zu].%s must be a string", i, key);
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);
        if (n == 0 || n > max)
                return errmsg(err, errlen, -EINVAL, "instructions[%zu].%s must have 1 to %zu characters", i, key, max);
        for (size_t k = 0; k < n; k++)
                if ((unsigned char) s[k] < 0x20 || s[k] == 0x7f)
                        return errmsg(err, errlen, -EINVAL, "instructions[%zu].%s has control characters", i, key);
        memcpy(out, s, n);
        out[n] = '\0';
        return 0;
}

int run_parse_instructions(json_object *reply, struct run_instructions *out, char *err, size_t errlen) {
        json_object *v, *list = NULL;
        bool have_next = false;
        int64_t next = 0;
        int r;

        memset(out, 0, sizeof *out);
        out->next_instruction_seconds = RUN_DEFAULT_INTERVAL_S;
        if (err && errlen)
                err[0] = '\0';
        if (!reply || !json_object_is_type(reply, json_type_object))
                return errmsg(err, errlen, -EINVAL, "the reply is not a JSON object");

        if (json_object_object_get_ex(reply, "next_instruction_seconds", &v) && v) {
                if (!json_object_is_type(v, json_type_int))
                        return errmsg(err, errlen, -EINVAL, "next_instruction_seconds must be an integer");
                next = json_object_get_int64(v);
                have_next = true;
        }
        if (json_object_object_get_ex(reply, "post_step_action", &v) && v) {
                const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                if (s && strcmp(s, "exit") == 0)
                        out->exit = true;
                else if (!s || strcmp(s, "continue") != 0)
                        return errmsg(err, errlen, -EINVAL, "post_step_action must be \"continue\" or \"exit\"");
        }
        if (json_object_object_get_ex(reply, "instructions", &v) && v) {
                if (!json_object_is_type(v, json_type_array))
                        return errmsg(err, errlen, -EINVAL, "instructions must be an array");
                list = v;
        }
        out->next_instruction_seconds = run_clamp_interval(have_next, next);

        size_t n = list ? json_object_array_length(list) : 0;
        if (n > RUN_MAX_INSTRUCTIONS) {
                errmsg(err, errlen, -EINVAL, "%zu instructions, more than the %d this agent accepts", n,
                       RUN_MAX_INSTRUCTIONS);
                return -E2BIG;
        }
        if (n == 0)
                return 0;
        out->v = calloc(n, sizeof *out->v);
        if (!out->v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                struct run_instruction *in = &out->v[i];

                if (!e || !json_object_is_type(e, json_type_object)) {
                        r = errmsg(err, errlen, -EINVAL, "instructions[%zu] must be an object", i);
                        goto error;
                }
                if ((r = read_token(e, "step_id", i, in->step_id, RUN_STEP_ID_MAX, err, errlen)) < 0 ||
                    (r = read_token(e, "step_type", i, in->step_type, RUN_STEP_TYPE_MAX, err, errlen)) < 0)
                        goto error;
                in->type = step_type_from_string(in->step_type);
                if (json_object_object_get_ex(e, "args", &v) && v) {
                        if (!json_object_is_type(v, json_type_object)) {
                                r = errmsg(err, errlen, -EINVAL, "instructions[%zu].args must be an object", i);
                                goto error;
                        }
                        /* A private copy: each step runs on its own thread. */
                        if (json_object_deep_copy(v, &in->args, NULL) < 0) {
                                r = -ENOMEM;
                                goto error;
                        }
                } else if (!(in->args = json_object_new_object())) {
                        r = -ENOMEM;
                        goto error;
                }
                out->n = i + 1;
        }
        return 0;
error:
        run_instructions_free(out);
        return r;
}

void run_instructions_free(struct run_instructions *in) {
        for (size_t i = 0; i < in->n; i++)
                json_object_put(in->v[i].args);
        free(in->v);
        in->v = NULL;
        in->n = 0;
}

/* ---- what an answer means ------------------------------------------------ */

const char *run_action_to_string(enum run_action a) {
        switch (a) {
        case RUN_ACT_OK: return "ok";
        case RUN_ACT_AUTH_EXIT: return "auth-exit";
        case RUN_ACT_REREGISTER: return "reregister";
        case RUN_ACT_BACKOFF: return "backoff";
        case RUN_ACT_SKIP: return "skip";
        case _RUN_ACT_MAX:
                break;
        }
        return NULL;
}

enum run_action run_decide(enum run_call call, int err, long status) {
        if (err < 0)
                return RUN_ACT_BACKOFF;   /* no answer: connection, timeout, TLS, too large */
        if (status >= 200 && status <= 299)
                return RUN_ACT_OK;
        if (status == 401 || status == 403)
                return RUN_ACT_AUTH_EXIT;
        /* A 404 on a host path means the host record is gone (deleted): a
         * fresh registration brings it back. On registration it is the
         * infra-env that is missing; that may come back too, slowly. */
        if (status == 404 && (call == RUN_CALL_INSTRUCTIONS || call == RUN_CALL_RESULT))
                return RUN_ACT_REREGISTER;
        if (status == 408 || status == 429 || status >= 500)
                return RUN_ACT_BACKOFF;
        /* Any other 4xx: the coordinator did not like one result; the next
         * poll asks again. For registration and polls there is nothing else
         * to do than try again later. */
        if (call == RUN_CALL_RESULT && status >= 400 && status <= 499)
                return RUN_ACT_SKIP;
        return RUN_ACT_BACKOFF;
}

/* ---- steps -------------------------------------------------------------- */

static char *strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strdup_printf(const char *fmt, ...) {
        char *s;
        va_list ap;
        va_start(ap, fmt);
        int k = vasprintf(&s, fmt, ap);
        va_end(ap);
        return k < 0 ? NULL : s;
}

json_object *run_ntp_args(json_object *args, const char *date, int64_t age_ms) {
        json_object *copy = NULL, *v;

        if (args) {
                if (json_object_deep_copy(args, &copy, NULL) < 0)
                        return NULL;
        } else if (!(copy = json_object_new_object()))
                return NULL;
        if (!date || !*date || !json_object_is_type(copy, json_type_object))
                return copy;
        if (json_object_object_get_ex(copy, "coordinator_date", &v) && v)
                return copy; /* the coordinator said what to compare with */
        if (age_ms < 0)
                age_ms = 0;
        if (age_ms > NTP_MAX_DATE_AGE_MS)
                age_ms = NTP_MAX_DATE_AGE_MS;
        json_object *d = json_object_new_string(date), *a = json_object_new_int64(age_ms);
        if (!d || !a || json_object_object_add(copy, "coordinator_date", d) < 0) {
                json_object_put(d);
                json_object_put(a);
                json_object_put(copy);
                return NULL;
        }
        if (json_object_object_add(copy, "coordinator_date_age_ms", a) < 0) {
                json_object_put(a);
                json_object_put(copy);
                return NULL;
        }
        return copy;
}

static void step_inventory(const struct run_step_context *ctx, struct run_step_result *res) {
        struct probe_options po = { .sysroot = ctx->sysroot, .min_install_bytes = ctx->min_disk_bytes };
        struct inventory inv;
        int r = inventory_probe(&po, &inv);

        if (r < 0) {
                errno = -r;
                res->error = strdup_printf("failed to probe %s: %m", ctx->sysroot ? ctx->sysroot : "/");
        } else if (!(res->output = inventory_to_json(&inv)))
                res->error = strdup_printf("out of memory while writing the inventory");
        inventory_free(&inv);
        res->exit_code = res->output ? 0 : 1;
}

/* ---- the install step's connection to the coordinator --------------------- */

static int add_member(json_object *o, const char *k, json_object *v, bool null_ok);

/* Two connections of its own: one streams the payload and the image, the
 * other reports progress while that stream runs. */
struct install_link {
        const struct run_step_context *ctx;
        struct client dl, api;
        char *progress_path;
        const char *stage;     /* the last stage reported, or NULL */
        int percent;
};

/* "HTTP 404 (reason)" or "connection refused (libcurl words)". */
static void describe_answer(const struct client *cl, int err, long status, json_object *reply, char *buf, size_t n) {
        json_object *v;
        if (err < 0) {
                errno = -err;
                snprintf(buf, n, "%m (%s)", cl->errbuf[0] ? cl->errbuf : "no answer");
                return;
        }
        const char *reason = reply && json_object_object_get_ex(reply, "reason", &v) &&
                                             json_object_is_type(v, json_type_string)
                                     ? json_object_get_string(v)
                                     : "no reason given";
        snprintf(buf, n, "HTTP %ld (%.300s)", status, reason);
}

struct membuf {
        struct growbuf b;
        size_t max;             /* the client's cap on the body */
};

static int membuf_sink(void *userdata, const void *p, size_t n) {
        struct membuf *m = userdata;
        int r = growbuf_append(&m->b, p, n, m->max, 65536);
        return r == -E2BIG ? -EFBIG : r;
}

/* A stream that did not end in a 2xx: -errno with the words in err (none
 * for the sink's own error: its caller knows what it was). */
static int stream_result(struct client *cl, const struct client_stream *s, int r, long status, json_object *reply,
                         char *err, size_t errlen) {
        if (r == 0 && status >= 200 && status <= 299)
                return 0;
        if (r < 0 && s->sink_error)
                return s->sink_error;
        describe_answer(cl, r, status, reply, err, errlen);
        if (r < 0)
                return r;
        return status == 404 ? -ENOENT : status == 401 || status == 403 ? -EACCES : -EPROTO;
}

static uint32_t random_u32(void) {
        uint32_t v;
        if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t) sizeof v)
                v = (uint32_t) mono_ms() * 2654435761u ^ (uint32_t) getpid();
        return v;
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

/* Sleep ms in 100 ms steps unless cancel(userdata) says stop (NULL: never);
 * true when it did. */
static bool sleep_unless(bool (*cancel)(void *userdata), void *userdata, uint32_t ms) {
        for (uint32_t slept = 0; slept < ms; slept += 100) {
                if (cancel && cancel(userdata))
                        return true;
                usleep(100 * 1000);
        }
        return cancel && cancel(userdata);
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
                    (s->deadline_ms > 0 && mono_ms() >= s->deadline_ms))
                        break;
                if (c.delivered > 0)
                        log_info("install", "Resuming %s after %llu bytes", target, (unsigned long long) c.delivered);
                char what[512];
                uint32_t ms = backoff_next(&bo, random_u32());
                describe_answer(&l->dl, r, *status, *reply, what, sizeof what);
                log_warning("install", "Fetching %s failed (%s); attempt %d of %d in %.1f s", target, what, attempt + 1,
                            RUN_FETCH_ATTEMPTS, ms / 1000.0);
                if (sleep_unless(l->ctx->cancel, l->ctx->cancel_userdata, ms)) {
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
                r = stream_result(&l->dl, &s, r, status, reply, err, errlen);
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
        struct client_stream s = { .sink = sink, .userdata = sink_userdata, .deadline_ms = mono_ms() + limit,
                                   .ticks = true };
        long status = 0;

        int r = link_get(l, url, &s, &status, &reply);
        if (r == -ETIMEDOUT && mono_ms() >= s.deadline_ms) {
                snprintf(err, errlen, "not done within %lld s (retries and resumes included)",
                         (long long) (limit / 1000));
                return r;
        }
        if (r == -EINVAL && !s.sink_error) {
                snprintf(err, errlen, "not a coordinator path or an http(s) URL");
                return r;
        }
        return stream_result(&l->dl, &s, r, status, reply, err, errlen);
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
        if (!body || add_member(body, "stage", json_object_new_string(stage), false) < 0 ||
            add_member(body, "percent", json_object_new_int(percent), false) < 0 ||
            (info && add_member(body, "info", json_object_new_string(info), false) < 0))
                return;
        int r = client_request(&l->api, "PUT", l->progress_path, body, &status, &reply, NULL);
        if (r == 0 && status >= 200 && status <= 299)
                return;
        describe_answer(&l->api, r, status, reply, what, sizeof what);
        log_warning("install", "Failed to report progress (%s %d%%) to the coordinator: %s", stage, percent, what);
}

static void step_install(const struct run_instruction *in, const struct run_step_context *ctx,
                         struct run_step_result *res) {
        struct install_link l = { .ctx = ctx };
        struct install_outcome out;
        struct install_args a;
        char err[512];
        int r;

        res->exit_code = 1;
        if (!ctx->install || !ctx->install->coordinator_key) {
                res->error = strdup_printf("%s", INSTALL_ERR_NO_KEY);
                return;
        }
        if (install_args_parse(in->args, &a, err, sizeof err) < 0) {
                res->error = strdup_printf("the arguments of step %s are not valid for install: %s", in->step_id, err);
                return;
        }
        if (!ctx->client || !ctx->infra_env_id || !ctx->host_id) {
                res->error = strdup_printf("no coordinator connection to fetch the payload with");
                install_args_free(&a);
                return;
        }
        if (client_clone(&l.dl, ctx->client) < 0 || client_clone(&l.api, ctx->client) < 0 ||
            asprintf(&l.progress_path, MUSTER_API_PREFIX MUSTER_PATH_HOST_PROGRESS("%s", "%s"), ctx->infra_env_id,
                     ctx->host_id) < 0) {
                l.progress_path = NULL;
                res->error = strdup_printf("out of memory");
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
                res->error = strdup_printf("%s (at stage %s, %d%%)", out.error, l.stage, l.percent);
        else if (r < 0)
                res->error = strdup_printf("%s", out.error);
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

/* installation-disk-speed-check: on the --install-target when there is one
 * (tests), else on args.path. */
static void step_disk_speed(const struct run_instruction *in, const struct run_step_context *ctx,
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
                res->error = r == -ENOMEM && !err[0] ? strdup_printf("out of memory")
                                                     : strdup_printf("%s", err[0] ? err : "the disk speed check failed");
                return;
        }
        log_info("run", "Step %s: fdatasync p99 %.2f ms on %s", in->step_id,
                 json_object_get_double(json_object_object_get(out, "p99_ms")),
                 json_object_get_string(json_object_object_get(out, "path")));
        res->exit_code = 0;
        res->output = out;
}

/* logs-gather {"max_bytes"?}: the bundle (logsgather.h), cut to fit the
 * coordinator's cap, uploaded to PUT .../logs; the result says what went. */
static void step_logs_gather(const struct run_instruction *in, const struct run_step_context *ctx,
                             struct run_step_result *res) {
        int64_t max = RUN_LOGS_DEFAULT_MAX;
        json_object *v = NULL;
        char err[512] = "", what[600];
        res->exit_code = 1;
        if (json_object_object_get_ex(in->args, "max_bytes", &v)) {
                if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < (int64_t) LOGS_BUNDLE_MIN) {
                        res->error = strdup_printf("the arguments of step %s are not valid for logs-gather: "
                                                   "max_bytes must be an integer of at least %u",
                                                   in->step_id, LOGS_BUNDLE_MIN);
                        return;
                }
                max = json_object_get_int64(v);
        }
        if (max > RUN_LOGS_MAX)
                max = RUN_LOGS_MAX;
        if (!ctx->client || !ctx->infra_env_id || !ctx->host_id) {
                res->error = strdup_printf("no coordinator connection to upload the logs to");
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
                res->error = strdup_printf("gathering the logs failed: %s", err[0] ? err : "out of memory");
                return;
        }
        _cleanup_free_ char *path = NULL;
        struct client cl;
        if (asprintf(&path, MUSTER_API_PREFIX MUSTER_PATH_HOST_LOGS("%s", "%s"), ctx->infra_env_id, ctx->host_id) < 0) {
                path = NULL;
                res->error = strdup_printf("out of memory");
                return;
        }
        if (client_clone(&cl, ctx->client) < 0) {
                res->error = strdup_printf("out of memory");
                return;
        }
        cl.cancel = ctx->cancel;
        cl.cancel_userdata = ctx->cancel_userdata;
        long status = 0;
        r = client_upload(&cl, "PUT", path, "application/gzip", data, len, &status, &reply);
        if (r < 0 || status < 200 || status > 299) {
                describe_answer(&cl, r, status, reply, what, sizeof what);
                res->error = strdup_printf("uploading the logs (%zu bytes) failed: %s", len, what);
                client_done(&cl);
                return;
        }
        client_done(&cl);
        log_info("run", "Step %s: uploaded the logs (%zu bytes)", in->step_id, len);
        res->exit_code = 0;
        res->output = TAKE_PTR(summary);
}

/* A download into an open file, counted. */
struct file_sink {
        int fd;
        uint64_t n;
};

static int file_sink(void *userdata, const void *p, size_t n) {
        struct file_sink *f = userdata;
        int r = fd_write_full(f->fd, p, n);
        if (r >= 0)
                f->n += n;
        return r;
}

/* Stream a coordinator path into dir/name, through a temporary file
 * renamed once whole and synced. 0 and *bytes, or -errno with err. */
static int reclaim_fetch(struct client *cl, const char *url, const char *dir, const char *name, uint64_t *bytes,
                         char *err, size_t errlen) {
        _cleanup_free_ char *final = NULL, *tmp = NULL;
        if (asprintf(&final, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0) {
                final = tmp = NULL;
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        }
        struct file_sink f = { .fd = mkostemp(tmp, O_CLOEXEC) };
        if (f.fd < 0)
                return errmsg(err, errlen, -errno, "cannot create a file in %s: %s", dir, strerror(errno));
        _cleanup_json_ json_object *reply = NULL;
        struct client_stream s = { .sink = file_sink, .userdata = &f,
                                   .deadline_ms = mono_ms() + RUN_RECLAIM_FETCH_DEADLINE_MS };
        long status = 0;
        int r = client_get_stream(cl, url, &s, &status, &reply);
        char what[512];
        r = stream_result(cl, &s, r, status, reply, what, sizeof what);
        if (r < 0)
                errmsg(err, errlen, r, "fetching %s failed: %s", url, s.sink_error ? strerror(-r) : what);
        if (r >= 0 && (fchmod(f.fd, 0644) < 0 || fsync(f.fd) < 0))
                r = errmsg(err, errlen, -errno, "cannot write %s: %s", tmp, strerror(errno));
        if (close(f.fd) < 0 && r >= 0)
                r = errmsg(err, errlen, -errno, "cannot write %s: %s", tmp, strerror(errno));
        if (r >= 0 && rename(tmp, final) < 0)
                r = errmsg(err, errlen, -errno, "cannot rename %s to %s: %s", tmp, final, strerror(errno));
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        *bytes = f.n;
        /* Best effort: the boot entry written next is synced on its own. */
        (void) fd_fsync_parent(final);
        return 0;
}

/* reclaim {"kernel_url", "initrd_url", "cmdline", "wipe", "installation_disk"?}
 * on an installed host's node agent: the discovery kernel and initramfs
 * into the boot partition, the boot entry made the next boot (reclaim.h),
 * then a reboot once the result is posted. With wipe the entry's command
 * line carries muster.reclaim_wipe=DISK for the discovery agent. */
static void step_reclaim(const struct run_instruction *in, const struct run_step_context *ctx,
                         struct run_step_result *res) {
        const char *kurl = NULL, *iurl = NULL, *cmdline = NULL, *disk = NULL;
        bool wipe = false;
        json_object *v;
        char err[600] = "";
        res->exit_code = 1;
        if (json_object_object_get_ex(in->args, "kernel_url", &v) && json_object_is_type(v, json_type_string))
                kurl = json_object_get_string(v);
        if (json_object_object_get_ex(in->args, "initrd_url", &v) && json_object_is_type(v, json_type_string))
                iurl = json_object_get_string(v);
        if (json_object_object_get_ex(in->args, "cmdline", &v) && json_object_is_type(v, json_type_string))
                cmdline = json_object_get_string(v);
        if (json_object_object_get_ex(in->args, "wipe", &v) && json_object_is_type(v, json_type_boolean))
                wipe = json_object_get_boolean(v);
        if (json_object_object_get_ex(in->args, "installation_disk", &v) && json_object_is_type(v, json_type_string))
                disk = json_object_get_string(v);
        if (!kurl || !iurl || kurl[0] != '/' || iurl[0] != '/' || !cmdline) {
                res->error = strdup_printf("the arguments of step %s are not valid for reclaim: kernel_url and "
                                           "initrd_url must be coordinator paths, cmdline a string", in->step_id);
                return;
        }
        if (wipe && (!disk || disk[0] != '/' || strpbrk(disk, " \t\n\"'"))) {
                res->error = strdup_printf("reclaim with wipe needs the installation disk's path, and the coordinator "
                                           "sent none that can go on a command line");
                return;
        }
        if (!ctx->client || !ctx->boot_dir) {
                res->error = strdup_printf("no coordinator connection or boot folder for reclaim");
                return;
        }
        _cleanup_free_ char *dir = NULL, *line = NULL;
        if (asprintf(&dir, "%s/%s", ctx->boot_dir, RECLAIM_DIR) < 0 ||
            asprintf(&line, "%s%s%s", cmdline, wipe ? " muster.reclaim_wipe=" : "", wipe ? disk : "") < 0) {
                dir = line = NULL;
                res->error = strdup_printf("out of memory");
                return;
        }
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                res->error = strdup_printf("cannot make %s: %m", dir);
                return;
        }
        struct client cl;
        if (client_clone(&cl, ctx->client) < 0) {
                res->error = strdup_printf("out of memory");
                return;
        }
        cl.cancel = ctx->cancel;
        cl.cancel_userdata = ctx->cancel_userdata;
        uint64_t kb = 0, ib = 0;
        int r = reclaim_fetch(&cl, kurl, dir, RECLAIM_KERNEL, &kb, err, sizeof err);
        if (r >= 0)
                r = reclaim_fetch(&cl, iurl, dir, RECLAIM_INITRD, &ib, err, sizeof err);
        client_done(&cl);
        if (r >= 0)
                r = reclaim_write_entry(ctx->boot_dir, line, err, sizeof err);
        if (r < 0) {
                res->error = strdup_printf("reclaim failed: %s", err[0] ? err : "unknown error");
                return;
        }
        json_object *o = json_object_new_object();
        if (!o || add_member(o, "boot_dir", json_object_new_string(ctx->boot_dir), false) < 0 ||
            add_member(o, "entry", json_object_new_string(RECLAIM_ENTRY_ID), false) < 0 ||
            add_member(o, "kernel_bytes", json_object_new_int64((int64_t) kb), false) < 0 ||
            add_member(o, "initrd_bytes", json_object_new_int64((int64_t) ib), false) < 0 ||
            add_member(o, "wipe", json_object_new_boolean(wipe), false) < 0 ||
            add_member(o, "reboot", json_object_new_boolean(ctx->reclaim_reboots), false) < 0) {
                json_object_put(o);
                res->error = strdup_printf("out of memory");
                return;
        }
        log_warning("run", "Step %s: the discovery system (%llu + %llu bytes) is the next boot from %s%s", in->step_id,
                    (unsigned long long) kb, (unsigned long long) ib, ctx->boot_dir,
                    ctx->reclaim_reboots ? "; rebooting once the result is posted" : "; not rebooting (--boot-dir)");
        res->exit_code = 0;
        res->output = o;
        res->reboot = ctx->reclaim_reboots;
}

void run_step_execute(const struct run_instruction *in, const struct run_step_context *ctx,
                      struct run_step_result *res) {
        int (*runner)(json_object *, json_object **) = NULL;
        _cleanup_json_ json_object *ntp_args = NULL;
        json_object *args = in->args;

        memset(res, 0, sizeof *res);
        if (ctx->install && ctx->install->node && in->type != STEP_INSTALL && in->type != STEP_LOGS_GATHER &&
            in->type != STEP_RECLAIM) {
                res->exit_code = 1;
                res->error = strdup_printf("muster-agent node runs only apply, logs-gather and reclaim steps, not %s",
                                           in->step_type);
                return;
        }
        if (in->type == STEP_RECLAIM && !(ctx->install && ctx->install->node)) {
                res->exit_code = 1;
                res->error = strdup_printf("reclaim is for an installed host's node agent, not the discovery agent");
                return;
        }
        switch (in->type) {
        case STEP_INVENTORY:
                step_inventory(ctx, res);
                return;
        case STEP_CONNECTIVITY_CHECK:
                runner = step_connectivity_check;
                break;
        case STEP_NTP_SYNCHRONIZER:
                runner = step_ntp_synchronizer;
                ntp_args = run_ntp_args(in->args, ctx->coordinator_date,
                                        ctx->coordinator_date ? mono_ms() - ctx->date_received_ms : 0);
                if (!ntp_args) {
                        res->exit_code = 1;
                        res->error = strdup_printf("out of memory");
                        return;
                }
                args = ntp_args;
                break;
        case STEP_DOMAIN_RESOLUTION:
                runner = step_domain_resolution;
                break;
        case STEP_INSTALL:
                step_install(in, ctx, res);
                return;
        case STEP_STOP_INSTALLATION: {
                bool stopped = ctx->stop_install && ctx->stop_install(ctx->cancel_userdata);
                res->exit_code = 0;
                res->output = json_object_new_object();
                if (res->output)
                        json_object_object_add(res->output, "stopped", json_object_new_boolean(stopped));
                if (stopped)
                        log_warning("run", "Step %s: the coordinator cancelled the installation; stopping it",
                                    in->step_id);
                return;
        }
        case STEP_INSTALLATION_DISK_SPEED_CHECK:
                step_disk_speed(in, ctx, res);
                return;
        case STEP_LOGS_GATHER:
                step_logs_gather(in, ctx, res);
                return;
        case STEP_RECLAIM:
                step_reclaim(in, ctx, res);
                return;
        case _STEP_TYPE_MAX:
        case _STEP_TYPE_INVALID:
                break;
        }
        if (!runner) {
                res->exit_code = 1;
                res->error = strdup_printf("step type %s is not supported by this agent", in->step_type);
                return;
        }
        json_object *out = NULL;
        int r = runner(args, &out);
        if (r < 0) {
                json_object_put(out);
                res->exit_code = 1;
                res->error = r == -EINVAL ? strdup_printf("the arguments of step %s are not valid for %s", in->step_id,
                                                          in->step_type)
                                          : (errno = -r, strdup_printf("step %s failed: %m", in->step_type));
                return;
        }
        res->exit_code = 0;
        res->output = out;
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

/* ---- host id in the state dir ------------------------------------------- */

int run_state_read_host_id(const char *state_dir, char out[UUID_STR_LEN]) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        char buf[128];
        ssize_t k;

        if (asprintf(&path, "%s/%s", state_dir, HOST_ID_FILE) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        do
                k = read(fd, buf, sizeof buf - 1);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        buf[k] = '\0';
        buf[strcspn(buf, " \t\r\n")] = '\0';
        return uuid_normalize(buf, out) < 0 ? -EINVAL : 0;
}

int run_state_write_host_id(const char *state_dir, const char *id) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        _cleanup_close_ int dfd = -1;
        char line[UUID_STR_LEN + 1];
        int fd, r = 0;

        if (!uuid_is_valid(id))
                return -EINVAL;
        if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (asprintf(&path, "%s/%s", state_dir, HOST_ID_FILE) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        if (asprintf(&tmp, "%s/.%s.XXXXXX", state_dir, HOST_ID_FILE) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int n = snprintf(line, sizeof line, "%s\n", id);
        if (write(fd, line, (size_t) n) != n)
                r = errno ? -errno : -EIO;
        else if (fchmod(fd, 0644) < 0 || fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        /* The rename itself must survive a power cut. */
        dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                fsync(dfd);
        return 0;
}

/* ---- the loop ----------------------------------------------------------- */

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

/* Whether a stop signal arrived; waits up to timeout_ms (0: just look).
 * The loop's thread only. */
static bool wait_signal(struct runner *R, int64_t timeout_ms) {
        if (R->signo)
                return true;
        int64_t deadline = mono_ms() + timeout_ms;
        for (;;) {
                int64_t left = deadline - mono_ms();
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
                if (mono_ms() >= deadline)
                        return false;
        }
}

static bool cancel_hook(void *userdata) {
        return wait_signal(userdata, 0);
}

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

/* A transient failure: say so and wait. True when a signal ended the wait. */
static bool back_off(struct runner *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool back_off(struct runner *R, const char *fmt, ...) {
        uint32_t ms = backoff_next(&R->bo, random_u32());
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
        describe_answer(&R->cl, err, status, reply, buf, n);
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

/* What the loop does with each instruction of a poll. */
enum disposition {
        DISP_RUN,    /* run it now (with the batch) and post its result */
        DISP_POST,   /* its result is known already: post it */
        DISP_NONE,   /* runs in the background, or waits: post nothing */
};

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

/* ---- install steps in the background ------------------------------------ */

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
static struct run_step_context step_context(struct runner *R) {
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
                describe_answer(cl, r, status, reply, what, sizeof what);
                switch (a) {
                case RUN_ACT_OK:
                        log_info("run", "Posted the result of step %s (exit code %d)", j->in.step_id, j->res.exit_code);
                        return true;
                case RUN_ACT_BACKOFF: {
                        uint32_t ms = backoff_next(&bo, random_u32());
                        log_warning("run", "Posting the result of step %s failed: %s; retrying in %.1f s", j->in.step_id,
                                    what, ms / 1000.0);
                        if (sleep_unless(job_cancel_hook, R, ms))
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
        struct run_step_context ctx = step_context(R);
        struct run_step_result res;
        struct client cl;
        bool posted = false;

        log_info("run", "Step %s: install (cluster %s, revision %lld) started", j->in.step_id, j->cluster_id,
                 (long long) j->revision);
        run_step_execute(&j->in, &ctx, &res);
        if (res.exit_code != 0 && atomic_load(&R->stop_install)) {
                char *why = strdup_printf("stopped by the coordinator (stop-installation): %s",
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
        bool do_reboot = j->res.reboot && posted && !atomic_load(&R->stop);
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
static enum disposition install_dispatch(struct runner *R, const struct run_instruction *in,
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
static void jobs_stop(struct runner *R) {
        atomic_store(&R->stop, true);
        for (size_t i = 0; i < R->n_jobs; i++)
                job_free(R->jobs[i]);
        R->n_jobs = 0;
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

/* The steps of one poll: install steps go to the background, the others
 * run now; then the results are posted. RUN_ACT_OK, the action that stopped
 * the posting (a backoff already waited out), or STOPPED. */
static int run_steps(struct runner *R, const struct run_instructions *ins, const char *date, int64_t received) {
        struct run_step_context ctx = step_context(R);
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
                disp[i] = ins->v[i].type == STEP_INSTALL ? install_dispatch(R, &ins->v[i], &res[i]) : DISP_RUN;
        run_all(ins, &ctx, disp, res);
        /* A signal during the steps: they are done, stop before posting. */
        int ret = wait_signal(R, 0) ? STOPPED : post_results(R, ins, disp, res);
        bool want_reboot = false;
        for (size_t i = 0; i < ins->n; i++) {
                want_reboot |= res[i].reboot && res[i].exit_code == 0 && disp[i] == DISP_RUN;
                run_step_result_free(&res[i]);
        }
        /* reclaim: into the discovery system, once its result was taken. */
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
        int64_t received = mono_ms();
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

static int loop(struct runner *R) {
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

/* The host id: --host-id, else the state dir's, else the inventory's (a
 * random one when the machine has no usable identity and there is a state
 * dir to keep it in). Recorded in the state dir when one is given. */
static int choose_host_id(const struct run_options *o, char out[UUID_STR_LEN]) {
        char stored[UUID_STR_LEN] = "";
        int r;

        if (o->state_dir) {
                r = run_state_read_host_id(o->state_dir, stored);
                if (r == -EINVAL)
                        log_warning("run", "%s/%s does not hold a host id; replacing it", o->state_dir, HOST_ID_FILE);
                else if (r < 0 && r != -ENOENT)
                        return log_error_errno(r, "run", "Failed to read %s/%s: %m", o->state_dir, HOST_ID_FILE);
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
                log_info("run", "Host id %s (from %s/%s)", out, o->state_dir, HOST_ID_FILE);
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
        if (!(buf = malloc(RUN_MAX_KEY_BYTES + 1)))
                return -ENOMEM;
        ssize_t k = fd_read_full(fd, buf, RUN_MAX_KEY_BYTES + 1);
        if (k < 0)
                return (int) k;
        len = (size_t) k;
        if (len > RUN_MAX_KEY_BYTES)
                return -EFBIG;
        buf[len] = '\0';
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
static char *read_small_file(const char *path, size_t max) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return NULL;
        char *buf = malloc(max + 1);
        ssize_t k = buf ? fd_read_full(fd, buf, max + 1) : -ENOMEM;
        if (k < 0 || (size_t) k > max || memchr(buf, 0, (size_t) k)) {
                free(buf);
                errno = k < 0 ? (int) -k : EINVAL;
                return NULL;
        }
        buf[k] = 0;
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
        else if (o->ca && !(*node_ca_pem = read_small_file(o->ca, 256 * 1024))) {
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
        R->cl.cancel = cancel_hook;
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
        if (choose_host_id(o, R.host_id) < 0 || make_paths(&R) < 0 || connect_client(&R, token) < 0)
                goto out_paths;
        if (o->node)
                log_info("run", "muster-agent %s node: host %s, infra-env %s, coordinator %s, manifests in %s",
                         MUSTER_VERSION, R.host_id, R.infra_env_id, R.cl.base, o->manifest_dir);
        else
                log_info("run", "muster-agent %s: host %s, infra-env %s, coordinator %s", MUSTER_VERSION, R.host_id,
                         R.infra_env_id, R.cl.base);

        if (!o->node && o->reclaim_wipe)
                reclaim_wipe_first(o);
        ret = loop(&R);
        if (ret == RUN_EXIT_OK)
                log_info("run", "Received %s; exiting", R.signo == SIGINT ? "SIGINT" : "SIGTERM");
        ran = true;
        jobs_stop(&R);
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
        crypto_key_free(R.key);
        return ret;
}
