/* muster-agent run, the parts without sockets: reading instructions replies
 * under limits, the interval clamp, what each answer means for the loop,
 * step dispatch (unsupported types, the ntp fallback date), the result
 * document, the token file and the host id kept in a state dir. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "crypto.h"
#include "run.h"
#include "testutil.h"

static json_object *parse(const char *text) {
        json_object *o = json_tokener_parse(text);
        cr_assert_not_null(o, "test JSON: %s", text);
        return o;
}

static int parse_instructions(const char *text, struct run_instructions *ins, char *err, size_t errlen) {
        json_object *o = parse(text);
        int r = run_parse_instructions(o, ins, err, errlen);
        json_object_put(o);
        return r;
}

Test(agent_run, parses_a_coordinator_reply) {
        struct run_instructions ins;
        char err[256];
        int r = parse_instructions("{\"next_instruction_seconds\":5,\"post_step_action\":\"continue\",\"instructions\":["
                                   "{\"step_id\":\"inventory-1a2b\",\"step_type\":\"inventory\",\"args\":{}},"
                                   "{\"step_id\":\"ntp-1\",\"step_type\":\"ntp-synchronizer\",\"args\":{\"ntp_sources\":[\"a\"]}},"
                                   "{\"step_id\":\"x-1\",\"step_type\":\"logs-gather\"},"
                                   "{\"step_id\":\"y-1\",\"step_type\":\"teleport\",\"args\":null}]}",
                                   &ins, err, sizeof err);
        cr_assert_eq(r, 0, "%s", err);
        cr_assert_eq(ins.n, 4);
        cr_assert_eq(ins.next_instruction_seconds, 5);
        cr_assert_not(ins.exit);
        cr_assert_str_eq(ins.v[0].step_id, "inventory-1a2b");
        cr_assert_eq(ins.v[0].type, STEP_INVENTORY);
        cr_assert_eq(ins.v[1].type, STEP_NTP_SYNCHRONIZER);
        cr_assert_str_eq(json_object_get_string(tu_json_get(ins.v[1].args, "ntp_sources.0")), "a");
        cr_assert_eq(ins.v[2].type, STEP_LOGS_GATHER);
        cr_assert(json_object_is_type(ins.v[2].args, json_type_object), "absent args are an empty object");
        cr_assert_eq(ins.v[3].type, _STEP_TYPE_INVALID, "an unknown type parses; it is answered, not refused");
        cr_assert_str_eq(ins.v[3].step_type, "teleport");
        cr_assert(json_object_is_type(ins.v[3].args, json_type_object));
        run_instructions_free(&ins);
        cr_assert_eq(ins.n, 0);
}

Test(agent_run, args_are_a_private_copy) {
        json_object *o = parse("{\"instructions\":[{\"step_id\":\"a\",\"step_type\":\"inventory\",\"args\":{\"k\":1}}]}");
        struct run_instructions ins;
        cr_assert_eq(run_parse_instructions(o, &ins, NULL, 0), 0);
        json_object_put(o); /* the reply goes; the args stay */
        cr_assert_eq(json_object_get_int(tu_json_get(ins.v[0].args, "k")), 1);
        run_instructions_free(&ins);
}

Test(agent_run, defaults_and_exit) {
        struct run_instructions ins;
        cr_assert_eq(parse_instructions("{}", &ins, NULL, 0), 0);
        cr_assert_eq(ins.n, 0);
        cr_assert_eq(ins.next_instruction_seconds, RUN_DEFAULT_INTERVAL_S, "default 60 s when missing");
        cr_assert_not(ins.exit);
        run_instructions_free(&ins);

        /* What musterd sends when a host must register again. */
        cr_assert_eq(parse_instructions("{\"next_instruction_seconds\":0,\"post_step_action\":\"exit\",\"instructions\":[]}",
                                        &ins, NULL, 0), 0);
        cr_assert(ins.exit);
        cr_assert_eq(ins.next_instruction_seconds, 1, "0 is clamped to 1 s: an exit loop cannot spin");
        run_instructions_free(&ins);

        cr_assert_eq(parse_instructions("{\"next_instruction_seconds\":null,\"post_step_action\":null,\"instructions\":null}",
                                        &ins, NULL, 0), 0);
        cr_assert_eq(ins.next_instruction_seconds, RUN_DEFAULT_INTERVAL_S);
        run_instructions_free(&ins);
}

Test(agent_run, clamps_the_interval) {
        cr_assert_eq(run_clamp_interval(false, 0), 60);
        cr_assert_eq(run_clamp_interval(false, 5), 60, "absent means absent");
        cr_assert_eq(run_clamp_interval(true, 0), 1);
        cr_assert_eq(run_clamp_interval(true, -5), 1);
        cr_assert_eq(run_clamp_interval(true, 1), 1);
        cr_assert_eq(run_clamp_interval(true, 30), 30);
        cr_assert_eq(run_clamp_interval(true, 3600), 3600);
        cr_assert_eq(run_clamp_interval(true, 3601), 3600);
        cr_assert_eq(run_clamp_interval(true, INT64_MAX), 3600);
        cr_assert_eq(run_clamp_interval(true, INT64_MIN), 1);

        struct run_instructions ins;
        cr_assert_eq(parse_instructions("{\"next_instruction_seconds\":99999999999}", &ins, NULL, 0), 0);
        cr_assert_eq(ins.next_instruction_seconds, 3600);
        run_instructions_free(&ins);
}

Test(agent_run, refuses_bad_shapes_naming_the_field) {
        static const struct {
                const char *json, *needle;
        } bad[] = {
                { "[]", "object" },
                { "\"instructions\"", "object" },
                { "{\"next_instruction_seconds\":\"5\"}", "next_instruction_seconds" },
                { "{\"next_instruction_seconds\":1.5}", "next_instruction_seconds" },
                { "{\"post_step_action\":\"reboot\"}", "post_step_action" },
                { "{\"post_step_action\":1}", "post_step_action" },
                { "{\"instructions\":{}}", "instructions" },
                { "{\"instructions\":[1]}", "instructions[0]" },
                { "{\"instructions\":[{\"step_type\":\"inventory\"}]}", "step_id" },
                { "{\"instructions\":[{\"step_id\":5,\"step_type\":\"inventory\"}]}", "step_id" },
                { "{\"instructions\":[{\"step_id\":\"\",\"step_type\":\"inventory\"}]}", "step_id" },
                { "{\"instructions\":[{\"step_id\":\"a\\nb\",\"step_type\":\"inventory\"}]}", "control" },
                { "{\"instructions\":[{\"step_id\":\"a\"}]}", "step_type" },
                { "{\"instructions\":[{\"step_id\":\"a\",\"step_type\":[]}]}", "step_type" },
                { "{\"instructions\":[{\"step_id\":\"a\",\"step_type\":\"inventory\",\"args\":[]}]}", "args" },
                { "{\"instructions\":[{\"step_id\":\"a\",\"step_type\":\"inventory\",\"args\":\"x\"}]}", "args" },
                { "{\"instructions\":[{\"step_id\":\"a\",\"step_type\":\"inventory\"},7]}", "instructions[1]" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct run_instructions ins;
                char err[256];
                int r = parse_instructions(bad[i].json, &ins, err, sizeof err);
                cr_assert_eq(r, -EINVAL, "%s -> %d", bad[i].json, r);
                cr_assert(strstr(err, bad[i].needle), "%s: \"%s\" lacks \"%s\"", bad[i].json, err, bad[i].needle);
                cr_assert_eq(ins.n, 0);
                cr_assert_null(ins.v);
                run_instructions_free(&ins);
        }
        struct run_instructions ins;
        cr_assert_eq(run_parse_instructions(NULL, &ins, NULL, 0), -EINVAL);
}

static char *n_instructions(size_t n, size_t id_len) {
        size_t cap = 64 + n * (id_len + 64);
        char *s = malloc(cap), *p = s;
        p += sprintf(p, "{\"instructions\":[");
        for (size_t i = 0; i < n; i++) {
                p += sprintf(p, "%s{\"step_id\":\"", i ? "," : "");
                for (size_t k = 0; k < id_len; k++)
                        *p++ = (char) ('a' + (i + k) % 26);
                p += sprintf(p, "\",\"step_type\":\"inventory\"}");
        }
        sprintf(p, "]}");
        return s;
}

Test(agent_run, limits) {
        struct run_instructions ins;
        char err[256];
        char *s = n_instructions(RUN_MAX_INSTRUCTIONS, 8);
        cr_assert_eq(parse_instructions(s, &ins, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ins.n, RUN_MAX_INSTRUCTIONS);
        run_instructions_free(&ins);
        free(s);

        s = n_instructions(RUN_MAX_INSTRUCTIONS + 1, 8);
        cr_assert_eq(parse_instructions(s, &ins, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "65 instructions"), "%s", err);
        cr_assert_eq(ins.n, 0);
        free(s);

        s = n_instructions(1, RUN_STEP_ID_MAX);
        cr_assert_eq(parse_instructions(s, &ins, err, sizeof err), 0, "a 64-character step id is fine");
        cr_assert_eq(strlen(ins.v[0].step_id), RUN_STEP_ID_MAX);
        run_instructions_free(&ins);
        free(s);

        s = n_instructions(1, RUN_STEP_ID_MAX + 1);
        cr_assert_eq(parse_instructions(s, &ins, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "step_id"), "%s", err);
        free(s);

        s = n_instructions(10000, 8);
        cr_assert_eq(parse_instructions(s, &ins, err, sizeof err), -E2BIG, "a flood is refused whole");
        free(s);
}

Test(agent_run, decisions) {
        /* The token is refused: exit, whichever call saw it. */
        for (int c = 0; c < _RUN_CALL_MAX; c++) {
                cr_assert_eq(run_decide(c, 0, 401), RUN_ACT_AUTH_EXIT);
                cr_assert_eq(run_decide(c, 0, 403), RUN_ACT_AUTH_EXIT);
                cr_assert_eq(run_decide(c, 0, 200), RUN_ACT_OK);
                cr_assert_eq(run_decide(c, 0, 201), RUN_ACT_OK);
                cr_assert_eq(run_decide(c, 0, 204), RUN_ACT_OK);
                /* Transient: backoff, never an exit. */
                cr_assert_eq(run_decide(c, 0, 500), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, 0, 502), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, 0, 503), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, 0, 429), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, 0, 408), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, -ECONNREFUSED, 0), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, -ETIMEDOUT, 0), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, -EHOSTUNREACH, 0), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, -EFBIG, 0), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, -EIO, 0), RUN_ACT_BACKOFF);
                cr_assert_eq(run_decide(c, 0, 302), RUN_ACT_BACKOFF, "redirects are not followed");
        }
        /* The host was deleted: register again. */
        cr_assert_eq(run_decide(RUN_CALL_INSTRUCTIONS, 0, 404), RUN_ACT_REREGISTER);
        cr_assert_eq(run_decide(RUN_CALL_RESULT, 0, 404), RUN_ACT_REREGISTER);
        cr_assert_eq(run_decide(RUN_CALL_REGISTER, 0, 404), RUN_ACT_BACKOFF, "no infra-env: wait, it may come");
        /* A refused result is logged and the others still go. */
        cr_assert_eq(run_decide(RUN_CALL_RESULT, 0, 400), RUN_ACT_SKIP);
        cr_assert_eq(run_decide(RUN_CALL_RESULT, 0, 413), RUN_ACT_SKIP);
        cr_assert_eq(run_decide(RUN_CALL_RESULT, 0, 422), RUN_ACT_SKIP);
        cr_assert_eq(run_decide(RUN_CALL_REGISTER, 0, 400), RUN_ACT_BACKOFF);
        cr_assert_eq(run_decide(RUN_CALL_INSTRUCTIONS, 0, 400), RUN_ACT_BACKOFF);
        for (int a = 0; a < _RUN_ACT_MAX; a++)
                cr_assert_not_null(run_action_to_string(a));
}

static json_object *result_of(const char *reply, size_t idx, const struct run_step_context *ctx,
                              struct run_step_result *res) {
        struct run_instructions ins;
        char err[256];
        cr_assert_eq(parse_instructions(reply, &ins, err, sizeof err), 0, "%s", err);
        run_step_execute(&ins.v[idx], ctx, res);
        json_object *doc = run_result_json(&ins.v[idx], res);
        run_instructions_free(&ins);
        cr_assert_not_null(doc);
        return doc;
}

static bool stop_running(void *userdata) {
        (*(int *) userdata)++;
        return true;
}

/* stop-installation: answered {"stopped": bool}, exit 0; the runner's hook
 * says whether an install was running (none without a hook). */
Test(agent_run, stop_installation_is_answered) {
        struct run_step_context ctx = { 0 };
        struct run_step_result res;
        json_object *doc = result_of("{\"instructions\":[{\"step_id\":\"stop-installation\","
                                     "\"step_type\":\"stop-installation\"}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 0);
        cr_assert_eq(json_object_get_boolean(tu_json_get(doc, "output.stopped")), 0);
        json_object_put(doc);
        run_step_result_free(&res);
        int calls = 0;
        ctx.stop_install = stop_running;
        ctx.cancel_userdata = &calls;
        doc = result_of("{\"instructions\":[{\"step_id\":\"stop-installation\","
                        "\"step_type\":\"stop-installation\"}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 0);
        cr_assert_eq(json_object_get_boolean(tu_json_get(doc, "output.stopped")), 1);
        cr_assert_eq(calls, 1);
        json_object_put(doc);
        run_step_result_free(&res);
}

Test(agent_run, unsupported_step_types_are_answered_not_fatal) {
        static const char *types[] = { "teleport", "TELEPORT" };
        struct run_step_context ctx = { 0 };
        for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
                char reply[256], want[128];
                struct run_step_result res;
                snprintf(reply, sizeof reply, "{\"instructions\":[{\"step_id\":\"s-%zu\",\"step_type\":\"%s\"}]}", i,
                         types[i]);
                json_object *doc = result_of(reply, 0, &ctx, &res);
                snprintf(want, sizeof want, "step type %s is not supported by this agent", types[i]);
                cr_assert_eq(res.exit_code, 1);
                cr_assert_str_eq(res.error, want);
                cr_assert_eq(json_object_get_int(tu_json_get(doc, "exit_code")), 1);
                cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "error")), want);
                cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "step_type")), types[i]);
                char id[16];
                snprintf(id, sizeof id, "s-%zu", i);
                cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "step_id")), id);
                json_object *out;
                cr_assert(json_object_object_get_ex(doc, "output", &out) && out == NULL, "output is null");
                json_object_put(doc);
                run_step_result_free(&res);
        }
}

/* installation-disk-speed-check through the dispatch: on the install target's
 * folder with --install-target, its reason as the error when it fails. */
Test(agent_run, disk_speed_step_on_the_install_target) {
        char *dir = tu_mkdtemp();
        struct install_options io = { .target = dir };
        struct run_step_context ctx = { .install = &io };
        struct run_step_result res;
        json_object *doc = result_of("{\"instructions\":[{\"step_id\":\"ds\",\"step_type\":"
                                     "\"installation-disk-speed-check\",\"args\":{\"writes\":5}}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 0, "%s", res.error ? res.error : "");
        cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "output.method")), "file");
        cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "output.path")), dir);
        cr_assert_eq(json_object_get_int(tu_json_get(doc, "output.writes")), 5);
        cr_assert_geq(json_object_get_double(tu_json_get(doc, "output.p99_ms")), 0);
        json_object_put(doc);
        run_step_result_free(&res);

        doc = result_of("{\"instructions\":[{\"step_id\":\"ds\",\"step_type\":"
                        "\"installation-disk-speed-check\",\"args\":{\"writes\":1001}}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_str_eq(res.error, "args.writes must be an integer from 1 to 1000");
        json_object_put(doc);
        run_step_result_free(&res);

        /* No target, no path: nothing to measure. */
        ctx.install = NULL;
        doc = result_of("{\"instructions\":[{\"step_id\":\"ds\",\"step_type\":"
                        "\"installation-disk-speed-check\",\"args\":{}}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert(strstr(res.error, "no installation disk"), "%s", res.error);
        json_object_put(doc);
        run_step_result_free(&res);
        tu_rm_rf(dir);
        free(dir);
}

Test(agent_run, inventory_step_on_a_fixture) {
        struct run_step_context ctx = { .sysroot = MUSTER_FIXTURES_DIR "/qemu-q35/root" };
        struct run_step_result res;
        json_object *doc = result_of("{\"instructions\":[{\"step_id\":\"inv\",\"step_type\":\"inventory\",\"args\":{}}]}", 0,
                                     &ctx, &res);
        cr_assert_eq(res.exit_code, 0, "%s", res.error ? res.error : "");
        cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "output.host_id")), "6d757374-6572-4071-8335-000000000001");
        cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "output.hostname")), "muster-q35-01");
        json_object *e;
        cr_assert(json_object_object_get_ex(doc, "error", &e) && e == NULL, "error is null on success");
        json_object_put(doc);
        run_step_result_free(&res);

        ctx.sysroot = "/nonexistent/muster-sysroot";
        doc = result_of("{\"instructions\":[{\"step_id\":\"inv\",\"step_type\":\"inventory\"}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert(strstr(res.error, "/nonexistent/muster-sysroot"), "%s", res.error);
        json_object_put(doc);
        run_step_result_free(&res);
}

Test(agent_run, bad_step_args_fail_the_step_only) {
        struct run_step_context ctx = { 0 };
        struct run_step_result res;
        json_object *doc = result_of("{\"instructions\":[{\"step_id\":\"c\",\"step_type\":\"connectivity-check\","
                                     "\"args\":{\"peers\":\"nope\"}}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert(strstr(res.error, "not valid"), "%s", res.error);
        json_object_put(doc);
        run_step_result_free(&res);

        doc = result_of("{\"instructions\":[{\"step_id\":\"d\",\"step_type\":\"domain-resolution\","
                        "\"args\":{\"names\":[1]}}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        json_object_put(doc);
        run_step_result_free(&res);

        /* Neither sources nor a date: nothing to compare with. */
        doc = result_of("{\"instructions\":[{\"step_id\":\"n\",\"step_type\":\"ntp-synchronizer\",\"args\":{}}]}", 0, &ctx,
                        &res);
        cr_assert_eq(res.exit_code, 1);
        json_object_put(doc);
        run_step_result_free(&res);
}

Test(agent_run, ntp_falls_back_to_the_coordinator_date) {
        json_object *args = parse("{\"ntp_sources\":[\"192.0.2.1\"],\"max_offset_ms\":100}");
        json_object *a = run_ntp_args(args, "Sun, 06 Nov 1994 08:49:37 GMT", 250);
        cr_assert_str_eq(json_object_get_string(tu_json_get(a, "coordinator_date")), "Sun, 06 Nov 1994 08:49:37 GMT");
        cr_assert_eq(json_object_get_int64(tu_json_get(a, "coordinator_date_age_ms")), 250);
        cr_assert_eq(json_object_get_int(tu_json_get(a, "max_offset_ms")), 100);
        cr_assert_null(tu_json_get(args, "coordinator_date"), "the instruction's args are not changed");
        json_object_put(a);

        a = run_ntp_args(args, "Sun, 06 Nov 1994 08:49:37 GMT", -5);
        cr_assert_eq(json_object_get_int64(tu_json_get(a, "coordinator_date_age_ms")), 0);
        json_object_put(a);
        a = run_ntp_args(args, "Sun, 06 Nov 1994 08:49:37 GMT", INT64_C(1) << 40);
        cr_assert_eq(json_object_get_int64(tu_json_get(a, "coordinator_date_age_ms")), 3600000);
        json_object_put(a);

        a = run_ntp_args(args, NULL, 0);
        cr_assert_null(tu_json_get(a, "coordinator_date"), "no header, nothing added");
        json_object_put(a);
        json_object_put(args);

        /* The coordinator's own coordinator_date wins. */
        args = parse("{\"coordinator_date\":\"2024-01-01T00:00:00Z\"}");
        a = run_ntp_args(args, "Sun, 06 Nov 1994 08:49:37 GMT", 10);
        cr_assert_str_eq(json_object_get_string(tu_json_get(a, "coordinator_date")), "2024-01-01T00:00:00Z");
        cr_assert_null(tu_json_get(a, "coordinator_date_age_ms"));
        json_object_put(a);
        json_object_put(args);
}

Test(agent_run, ntp_step_uses_the_date_header) {
        /* No sources: only the Date of the instructions reply. The header
         * is in the past, so the offset is large and the clock not synced;
         * what matters is that the step ran with it, not an args error. */
        struct run_step_context ctx = { .coordinator_date = "Sun, 06 Nov 1994 08:49:37 GMT" };
        struct run_step_result res;
        json_object *doc = result_of("{\"instructions\":[{\"step_id\":\"n\",\"step_type\":\"ntp-synchronizer\",\"args\":{}}]}", 0,
                                     &ctx, &res);
        cr_assert_eq(res.exit_code, 0, "%s", res.error ? res.error : "");
        cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "output.method")), "coordinator-date");
        cr_assert_not(json_object_get_boolean(tu_json_get(doc, "output.synced")));
        json_object_put(doc);
        run_step_result_free(&res);
}

/* ---- token file and state dir -------------------------------------------- */

static char *tmpdir;

static void mk(void) {
        tmpdir = tu_mkdtemp();
        cr_assert_not_null(tmpdir);
}

static void rm(void) {
        tu_rm_rf(tmpdir);
        free(tmpdir);
}

static int token_of(const char *content, size_t len, char **tok) {
        char path[4096];
        cr_assert_eq(tu_write_bin(tmpdir, "token", content, len), 0);
        snprintf(path, sizeof path, "%s/token", tmpdir);
        return client_read_token(path, tok);
}

Test(agent_run, token_file, .init = mk, .fini = rm) {
        char *tok = NULL;
        cr_assert_eq(token_of("abc.def.ghi\n", 12, &tok), 0);
        cr_assert_str_eq(tok, "abc.def.ghi");
        free(tok);
        cr_assert_eq(token_of("abc \t\r\n\n", 8, &tok), 0, "trailing whitespace is trimmed");
        cr_assert_str_eq(tok, "abc");
        free(tok);
        cr_assert_eq(token_of("", 0, &tok), -EINVAL, "empty");
        cr_assert_null(tok);
        cr_assert_eq(token_of(" \n\n", 3, &tok), -EINVAL, "only whitespace");
        cr_assert_eq(token_of("a b", 3, &tok), -EINVAL, "a space inside");
        cr_assert_eq(token_of("a\r\nX-Evil: 1", 12, &tok), -EINVAL, "no header injection");
        cr_assert_eq(token_of("a\0b", 3, &tok), -EINVAL);

        char *big = malloc(CLIENT_TOKEN_MAX + 2);
        memset(big, 'x', CLIENT_TOKEN_MAX + 1);
        big[CLIENT_TOKEN_MAX] = '\n';
        cr_assert_eq(token_of(big, CLIENT_TOKEN_MAX + 1, &tok), 0, "8 KiB and a newline is fine");
        cr_assert_eq(strlen(tok), CLIENT_TOKEN_MAX);
        free(tok);
        big[CLIENT_TOKEN_MAX] = 'x';
        cr_assert_eq(token_of(big, CLIENT_TOKEN_MAX + 1, &tok), -E2BIG);
        free(big);
        size_t n = 1 << 20;
        big = malloc(n);
        memset(big, 'x', n);
        cr_assert_eq(token_of(big, n, &tok), -E2BIG);
        free(big);

        char path[4096];
        snprintf(path, sizeof path, "%s/missing", tmpdir);
        cr_assert_eq(client_read_token(path, &tok), -ENOENT);
}

Test(agent_run, urls) {
        cr_assert(client_url_is_valid("http://127.0.0.1:8090"));
        cr_assert(client_url_is_valid("https://muster.example.com/"));
        cr_assert(client_url_is_valid("HTTPS://[::1]:8090"));
        cr_assert_not(client_url_is_valid("ftp://x"));
        cr_assert_not(client_url_is_valid("127.0.0.1:8090"));
        cr_assert_not(client_url_is_valid("http://"));
        cr_assert_not(client_url_is_valid("http:///path"));
        cr_assert_not(client_url_is_valid("http://a b"));
        cr_assert_not(client_url_is_valid("http://a?x=1"));
        cr_assert_not(client_url_is_valid(NULL));
}

Test(agent_run, host_id_in_the_state_dir, .init = mk, .fini = rm) {
        char id[37], state[4096], path[4200];
        snprintf(state, sizeof state, "%s/state", tmpdir);
        cr_assert_eq(run_state_read_host_id(state, id), -ENOENT);
        cr_assert_eq(run_state_write_host_id(state, "6D757374-6572-4071-8335-000000000001"), 0, "creates the dir");
        cr_assert_eq(run_state_read_host_id(state, id), 0);
        cr_assert_str_eq(id, "6d757374-6572-4071-8335-000000000001", "kept in lower case");
        cr_assert_eq(run_state_write_host_id(state, "0b0e6f4e-4c1f-4b47-9d3c-000000000007"), 0, "replaced");
        cr_assert_eq(run_state_read_host_id(state, id), 0);
        cr_assert_str_eq(id, "0b0e6f4e-4c1f-4b47-9d3c-000000000007");
        cr_assert_eq(run_state_write_host_id(state, "nope"), -EINVAL);
        snprintf(path, sizeof path, "%s/host-id", state);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(st.st_mode & 0777, 0644);
        cr_assert_eq(tu_write_file(state, "host-id", "garbage\n"), 0);
        cr_assert_eq(run_state_read_host_id(state, id), -EINVAL);
}

/* ---- install steps through the dispatcher --------------------------------- */

#define INSTALL_STEP(args) "{\"instructions\":[{\"step_id\":\"install-1\",\"step_type\":\"install\",\"args\":" args "}]}"
#define GOOD_ARGS "{\"mode\":\"install\",\"cluster_id\":\"c1\",\"revision\":1,\"payload_url\":\"/api/v2/clusters/c1/payload/1\"}"

Test(agent_run, install_steps_need_the_coordinator_key) {
        struct run_step_context ctx = { 0 };
        struct run_step_result res;
        json_object *doc = result_of(INSTALL_STEP(GOOD_ARGS), 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_str_eq(res.error, INSTALL_ERR_NO_KEY);
        cr_assert_str_eq(json_object_get_string(tu_json_get(doc, "step_type")), "install");
        cr_assert_not(res.reboot);
        json_object_put(doc);
        run_step_result_free(&res);

        /* Options without a key: the same, whatever the args. */
        struct install_options io = { .target = "/nonexistent" };
        ctx.install = &io;
        doc = result_of(INSTALL_STEP("{}"), 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_str_eq(res.error, INSTALL_ERR_NO_KEY);
        json_object_put(doc);
        run_step_result_free(&res);
}

Test(agent_run, install_step_args_and_connection) {
        struct crypto_key *key;
        cr_assert_eq(crypto_key_generate(&key), 0);
        struct install_options io = { .coordinator_key = key, .target = "/nonexistent/target" };
        struct run_step_context ctx = { .install = &io };
        struct run_step_result res;

        json_object *doc = result_of(INSTALL_STEP("{\"mode\":\"install\",\"cluster_id\":\"c1\",\"revision\":0,"
                                                  "\"payload_url\":\"/p\"}"), 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_str_eq(res.error, "the arguments of step install-1 are not valid for install: "
                                    "args.revision must be a positive integer");
        json_object_put(doc);
        run_step_result_free(&res);

        /* Good args but no coordinator to fetch from. */
        doc = result_of(INSTALL_STEP(GOOD_ARGS), 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert(strstr(res.error, "no coordinator connection"), "%s", res.error);
        json_object_put(doc);
        run_step_result_free(&res);
        crypto_key_free(key);
}

Test(agent_run, node_mode_runs_only_apply_steps) {
        struct crypto_key *key;
        cr_assert_eq(crypto_key_generate(&key), 0);
        struct install_options io = { .coordinator_key = key, .node = true, .manifest_dir = "/nonexistent/m" };
        struct run_step_context ctx = { .install = &io, .sysroot = MUSTER_FIXTURES_DIR "/qemu-q35/root" };
        struct run_step_result res;

        json_object *doc = result_of("{\"instructions\":[{\"step_id\":\"inv\",\"step_type\":\"inventory\"}]}", 0, &ctx,
                                     &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_str_eq(res.error, "muster-agent node runs only apply, logs-gather and reclaim steps, not inventory");
        cr_assert_null(res.output, "nothing was probed");
        json_object_put(doc);
        run_step_result_free(&res);
        crypto_key_free(key);
}

/* logs-gather and reclaim without a coordinator connection: refused
 * saying why; reclaim only on a node, its arguments checked first. */
Test(agent_run, logs_and_reclaim_need_their_setting) {
        struct run_step_context ctx = { 0 };
        struct run_step_result res;
        json_object *doc = result_of("{\"instructions\":[{\"step_id\":\"logs-gather\",\"step_type\":\"logs-gather\","
                                     "\"args\":{\"max_bytes\":10}}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert(strstr(res.error, "max_bytes must be an integer of at least 65536"), "%s", res.error);
        json_object_put(doc);
        run_step_result_free(&res);
        doc = result_of("{\"instructions\":[{\"step_id\":\"logs-gather\",\"step_type\":\"logs-gather\"}]}", 0, &ctx,
                        &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_str_eq(res.error, "no coordinator connection to upload the logs to");
        json_object_put(doc);
        run_step_result_free(&res);
        doc = result_of("{\"instructions\":[{\"step_id\":\"reclaim\",\"step_type\":\"reclaim\"}]}", 0, &ctx, &res);
        cr_assert_eq(res.exit_code, 1);
        cr_assert_str_eq(res.error, "reclaim is for an installed host's node agent, not the discovery agent");
        json_object_put(doc);
        run_step_result_free(&res);

        struct install_options io = { .node = true, .manifest_dir = "/nonexistent/m" };
        ctx.install = &io;
        static const char *const bad[] = {
                "{}",
                "{\"kernel_url\":\"http://elsewhere/vmlinuz\",\"initrd_url\":\"/i\",\"cmdline\":\"\"}",
                "{\"kernel_url\":\"/k\",\"initrd_url\":\"/i\",\"cmdline\":\"quiet\",\"wipe\":true}",
                "{\"kernel_url\":\"/k\",\"initrd_url\":\"/i\",\"cmdline\":\"quiet\",\"wipe\":true,"
                "\"installation_disk\":\"/dev/sda quiet\"}",
        };
        static const char *const why[] = {
                "are not valid for reclaim", "are not valid for reclaim", "needs the installation disk's path",
                "needs the installation disk's path",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char reply[512];
                snprintf(reply, sizeof reply,
                         "{\"instructions\":[{\"step_id\":\"reclaim\",\"step_type\":\"reclaim\",\"args\":%s}]}", bad[i]);
                doc = result_of(reply, 0, &ctx, &res);
                cr_assert_eq(res.exit_code, 1);
                cr_assert(strstr(res.error, why[i]), "%s: %s", bad[i], res.error);
                json_object_put(doc);
                run_step_result_free(&res);
        }
}

Test(agent_run, coordinator_key_file, .init = mk, .fini = rm) {
        struct crypto_key *key, *loaded = NULL;
        char *pem, path[4096];
        cr_assert_eq(crypto_key_generate(&key), 0);
        cr_assert_eq(crypto_key_public_pem(key, &pem), 0);
        cr_assert_eq(tu_write_file(tmpdir, "coordinator.pub", pem), 0);
        snprintf(path, sizeof path, "%s/coordinator.pub", tmpdir);
        cr_assert_eq(run_load_coordinator_key(path, &loaded), 0);
        cr_assert_not_null(loaded);
        cr_assert_not(crypto_key_has_private(loaded));
        /* It verifies what the generated key signs. */
        uint8_t d[CRYPTO_SHA256_LEN] = { 1, 2, 3 }, sig[CRYPTO_SIG_LEN];
        cr_assert_eq(crypto_sign_digest(key, d, sig), 0);
        cr_assert_eq(crypto_verify_digest(loaded, d, sig), 0);
        crypto_key_free(loaded);
        free(pem);

        cr_assert_eq(tu_write_file(tmpdir, "coordinator.pub", "-----BEGIN PUBLIC KEY-----\nnope\n"), 0);
        cr_assert_eq(run_load_coordinator_key(path, &loaded), -EINVAL);
        cr_assert_null(loaded);
        char *big = malloc(RUN_MAX_KEY_BYTES + 2);
        memset(big, 'A', RUN_MAX_KEY_BYTES + 1);
        big[RUN_MAX_KEY_BYTES + 1] = '\0';
        cr_assert_eq(tu_write_file(tmpdir, "coordinator.pub", big), 0);
        cr_assert_eq(run_load_coordinator_key(path, &loaded), -EFBIG);
        free(big);
        snprintf(path, sizeof path, "%s/missing.pub", tmpdir);
        cr_assert_eq(run_load_coordinator_key(path, &loaded), -ENOENT);
        crypto_key_free(key);
}

/* ---- install downloads: what is tried again ----------------------------- */

Test(agent_run, fetch_retries_only_transient_failures_before_any_byte) {
        /* No answer at all: the coordinator restarting, a timeout. */
        cr_assert(run_fetch_transient(-ECONNREFUSED, 0, 0, 0));
        cr_assert(run_fetch_transient(-ETIMEDOUT, 0, 0, 0));
        cr_assert(run_fetch_transient(-EHOSTUNREACH, 0, 0, 0));
        /* Gateways and an overloaded server. */
        cr_assert(run_fetch_transient(0, 502, 0, 0));
        cr_assert(run_fetch_transient(0, 503, 0, 0));
        cr_assert(run_fetch_transient(0, 504, 0, 0));
        /* Answers that will not change, our own limits, a cancel. */
        cr_assert_not(run_fetch_transient(0, 200, 0, 0));
        cr_assert_not(run_fetch_transient(0, 404, 0, 0));
        cr_assert_not(run_fetch_transient(0, 403, 0, 0));
        cr_assert_not(run_fetch_transient(0, 500, 0, 0));
        cr_assert_not(run_fetch_transient(-ECANCELED, 0, 0, 0));
        cr_assert_not(run_fetch_transient(-EINVAL, 0, 0, 0));
        cr_assert_not(run_fetch_transient(-EFBIG, 0, 0, 0));
        cr_assert_not(run_fetch_transient(-ENOMEM, 0, 0, 0));
        /* Once bytes reached the disk, or the sink refused them, never. */
        cr_assert_not(run_fetch_transient(-ECONNRESET, 0, 1, 0));
        cr_assert_not(run_fetch_transient(0, 503, 4096, 0));
        cr_assert_not(run_fetch_transient(-EIO, 0, 0, -ENOSPC));
}
