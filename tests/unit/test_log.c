/* common/log: the text and JSON lines on stderr, the ids they carry, the
 * ring's lines (one timestamp each). stderr is a temporary file here. */
#include "cleanup.h"
#include "log.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *capture;
static int saved_stderr = -1;

static void start(void) {
        unsetenv("JOURNAL_STREAM");
        fflush(stderr);
        capture = tmpfile();
        cr_assert(capture);
        saved_stderr = dup(STDERR_FILENO);
        cr_assert(dup2(fileno(capture), STDERR_FILENO) >= 0);
        log_reopen();
        log_set_format(LOG_FORMAT_TEXT);
        log_set_process_fields((struct log_fields) { 0 });
}

/* What was written since start (malloc'd). */
static char *captured(void) {
        fflush(stderr);
        long n = ftell(capture);
        char *buf = calloc(1, (size_t) n + 1);
        cr_assert(buf);
        rewind(capture);
        cr_assert_eq(fread(buf, 1, (size_t) n, capture), (size_t) n);
        return buf;
}

static void stop(void) {
        fflush(stderr);
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        fclose(capture);
        log_set_format(LOG_FORMAT_TEXT);
        log_set_process_fields((struct log_fields) { 0 });
        log_ring_enable(0);
}

TestSuite(log, .init = start, .fini = stop);

static void assert_matches(const char *text, const char *re) {
        regex_t rx;
        cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE), 0, "%s", re);
        int r = regexec(&rx, text, 0, NULL, 0);
        regfree(&rx);
        cr_assert_eq(r, 0, "%s does not match %s", text, re);
}

Test(log, text_has_time_level_and_ids) {
        log_info_fields("hosts", ((struct log_fields) { .host = "h-1", .cluster = "c-2" }), "registered %d", 7);
        log_warning("store", "slow");
        errno = 0;
        (void) log_error_errno(-ENOENT, "files", "gone: %m");
        _cleanup_free_ char *out = captured();
        assert_matches(out, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z INFO  hosts: "
                            "registered 7 host=h-1 cluster=c-2$");
        assert_matches(out, "^[0-9-]{10}T[0-9:.]{12}Z WARN  store: slow$");
        assert_matches(out, "^[0-9-]{10}T[0-9:.]{12}Z ERROR files: gone: No such file or directory$");
        cr_assert_eq(strstr(out, "store: slow host="), NULL);
}

Test(log, json_lines_parse_with_their_fields) {
        log_set_format(LOG_FORMAT_JSON);
        log_info_fields("install", ((struct log_fields) { .host = "h-9", .infra_env = "ie-3" }),
                        "stage \"writing\" 50%%\tnow");
        (void) log_warning_errno(-EIO, "agent", "upload: %m");
        _cleanup_free_ char *out = captured();
        char *nl = strchr(out, '\n');
        cr_assert(nl);
        *nl = '\0';
        json_object *o = json_tokener_parse(out);
        cr_assert(o, "not JSON: %s", out);
        json_object *v;
        cr_assert(json_object_object_get_ex(o, "time", &v));
        assert_matches(json_object_get_string(v), "^[0-9-]{10}T[0-9:.]{12}Z$");
        cr_assert(json_object_object_get_ex(o, "level", &v));
        cr_assert_str_eq(json_object_get_string(v), "INFO");
        cr_assert(json_object_object_get_ex(o, "subsystem", &v));
        cr_assert_str_eq(json_object_get_string(v), "install");
        cr_assert(json_object_object_get_ex(o, "message", &v));
        cr_assert_str_eq(json_object_get_string(v), "stage \"writing\" 50%\tnow");
        cr_assert(json_object_object_get_ex(o, "host_id", &v));
        cr_assert_str_eq(json_object_get_string(v), "h-9");
        cr_assert(json_object_object_get_ex(o, "infra_env_id", &v));
        cr_assert_str_eq(json_object_get_string(v), "ie-3");
        cr_assert_not(json_object_object_get_ex(o, "cluster_id", &v));
        json_object_put(o);

        json_object *w = json_tokener_parse(nl + 1);
        cr_assert(w, "not JSON: %s", nl + 1);
        cr_assert(json_object_object_get_ex(w, "level", &v));
        cr_assert_str_eq(json_object_get_string(v), "WARN");
        cr_assert(json_object_object_get_ex(w, "errno", &v));
        cr_assert_eq(json_object_get_int(v), EIO);
        cr_assert(json_object_object_get_ex(w, "message", &v));
        cr_assert_str_eq(json_object_get_string(v), "upload: Input/output error");
        json_object_put(w);
}

Test(log, process_fields_on_every_line_unless_the_call_names_its_own) {
        log_set_process_fields((struct log_fields) { .host = "agent-host" });
        log_info("agent", "hello");
        log_host_info("agent", "other", "about another");
        log_set_process_fields((struct log_fields) { 0 });
        log_info("agent", "bare");
        _cleanup_free_ char *out = captured();
        assert_matches(out, "agent: hello host=agent-host$");
        assert_matches(out, "agent: about another host=other$");
        assert_matches(out, "agent: bare$");
}

Test(log, ring_lines_have_one_timestamp) {
        cr_assert_eq(log_ring_enable(LOG_RING_MIN), 0);
        log_host_info("agent", "h-1", "in the ring");
        size_t len;
        _cleanup_free_ char *ring = log_ring_copy(&len);
        cr_assert(ring);
        assert_matches(ring, "^[0-9-]{10}T[0-9:.]{12}Z agent: in the ring host=h-1$");
}

Test(log, journal_stream_not_ours_means_stderr_text) {
        /* JOURNAL_STREAM inherited but stderr redirected elsewhere: not the journal. */
        setenv("JOURNAL_STREAM", "1:1", 1);
        log_reopen();
        log_info("daemon", "plain");
        unsetenv("JOURNAL_STREAM");
        log_reopen();
        _cleanup_free_ char *out = captured();
        assert_matches(out, "^[0-9-]{10}T[0-9:.]{12}Z INFO  daemon: plain$");
}

Test(log, format_and_level_words) {
        enum log_format f;
        enum log_level l;
        cr_assert_eq(log_format_from_string("json", &f), 0);
        cr_assert_eq(f, LOG_FORMAT_JSON);
        cr_assert_eq(log_format_from_string("text", &f), 0);
        cr_assert_eq(f, LOG_FORMAT_TEXT);
        cr_assert_eq(log_format_from_string("JSON", &f), -EINVAL);
        cr_assert_eq(log_level_from_string("debug", &l), 0);
        cr_assert_eq(l, LOG_LVL_DEBUG);
        cr_assert_eq(log_level_from_string("warning", &l), 0);
        cr_assert_eq(l, LOG_LVL_WARNING);
        cr_assert_eq(log_level_from_string("loud", &l), -EINVAL);
}
