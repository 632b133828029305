/* What the coordinator's answers mean to the loop (run.h): an instructions
 * reply read under limits, the poll interval clamped, and the action an
 * HTTP status (or no answer) calls for. Pure; tested on their own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "protocol.h"
#include "run.h"

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
