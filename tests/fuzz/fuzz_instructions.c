/* libFuzzer target for the agent's poll (issue 32, item 11): the body of a
 * GET .../instructions answer as the client reads it (agent/client.c
 * client_parse_reply), then the instructions in it (agent/run.c
 * run_parse_instructions), then what the agent builds from each one before
 * and after it runs: an ntp-synchronizer's args with the coordinator's Date
 * (run_ntp_args) and the result document (run_result_json). Invariants: a
 * refusal is -EINVAL or -E2BIG with a reason, or -ENOMEM, and hands out no
 * instruction; the interval is within its clamp; an accepted step has an
 * id and a type of 1..64 printable bytes, the enum that names its type,
 * and an object of args, which the Date is added to unless it has one. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "protocol.h"
#include "run.h"

#define DATE "Sun, 06 Nov 1994 08:49:37 GMT"

static void check_token(const char *s, size_t max) {
        size_t n = strnlen(s, max + 1);
        if (n == 0 || n > max)
                abort();
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        abort();
}

static void check_instruction(const struct run_instruction *in) {
        check_token(in->step_id, RUN_STEP_ID_MAX);
        check_token(in->step_type, RUN_STEP_TYPE_MAX);
        if (in->type != step_type_from_string(in->step_type))
                abort();
        if (in->type != _STEP_TYPE_INVALID && strcmp(step_type_to_string(in->type), in->step_type) != 0)
                abort();
        if (!json_object_is_type(in->args, json_type_object))
                abort();

        json_object *had = NULL, *v = NULL;
        if (in->type == STEP_NTP_SYNCHRONIZER) {
                bool dated = json_object_object_get_ex(in->args, "coordinator_date", &had) && had;
                json_object *ntp = run_ntp_args(in->args, DATE, 1500);
                if (ntp) {
                        if (!json_object_object_get_ex(ntp, "coordinator_date", &v) || !v)
                                abort();
                        if (!dated && strcmp(json_object_get_string(v), DATE) != 0)
                                abort();
                        json_object_put(ntp);
                }
        }

        struct run_step_result res = { .exit_code = 1, .error = strdup("fuzz") };
        json_object *doc = run_result_json(in, &res);
        if (doc) {
                if (!json_object_object_get_ex(doc, "step_id", &v) ||
                    strcmp(json_object_get_string(v), in->step_id) != 0)
                        abort();
                json_object_put(doc);
        }
        run_step_result_free(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        json_object *reply = client_parse_reply((const char *) data, size);
        if (!reply)
                return 0;
        struct run_instructions ins;
        char err[256];
        int r = run_parse_instructions(reply, &ins, err, sizeof err);
        if (r != 0 && r != -EINVAL && r != -E2BIG && r != -ENOMEM)
                abort();
        if ((r == -EINVAL || r == -E2BIG) && !err[0])
                abort();
        if (r < 0 && (ins.n || ins.v))
                abort();
        if (ins.next_instruction_seconds < RUN_MIN_INTERVAL_S || ins.next_instruction_seconds > RUN_MAX_INTERVAL_S)
                abort();
        if (ins.n > RUN_MAX_INSTRUCTIONS)
                abort();
        for (size_t i = 0; i < ins.n; i++)
                check_instruction(&ins.v[i]);
        run_instructions_free(&ins);
        json_object_put(reply);
        return 0;
}
