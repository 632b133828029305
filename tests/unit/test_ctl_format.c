/* musterctl's pure side: sizes and ages, text cutting and wrapping, tables
 * fitted into a width (160, 80, 60, none), key/value blocks, and command lines refused
 * before anything is sent. */
#include <criterion/criterion.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "table.h"
#include "testutil.h"

#define ELL "\xe2\x80\xa6"

/* As musterctl in a UTF-8 locale (setlocale(LC_CTYPE, "")), for
 * libsmartcols to count the ellipsis as one column: before Criterion forks
 * the tests. */
__attribute__((constructor)) static void utf8_locale(void) {
        setlocale(LC_CTYPE, "C.UTF-8");
}

/* Every line of s at most `width` code points wide; the number of lines. */
static size_t assert_lines_fit(const char *s, size_t width) {
        size_t lines = 0;
        const char *p = s;
        while (*p) {
                size_t n = strcspn(p, "\n");
                char *line = strndup(p, n);
                cr_assert_leq(ctl_text_width(line), width, "line wider than %zu: \"%s\"", width, line);
                free(line);
                lines++;
                p += n;
                if (*p == '\n')
                        p++;
        }
        return lines;
}

/* Line i (0-based) of s, malloc'd. */
static char *line_of(const char *s, size_t i) {
        const char *p = s;
        while (i-- > 0) {
                p = strchr(p, '\n');
                cr_assert_not_null(p);
                p++;
        }
        return strndup(p, strcspn(p, "\n"));
}

/* ---- sizes, ages, numbers ---------------------------------------------- */

Test(ctl_units, sizes_parse) {
        static const struct {
                const char *in;
                int64_t want;
        } ok[] = {
                { "16GiB", INT64_C(17179869184) }, { "100GB", INT64_C(100000000000) }, { "512", 512 },
                { "512B", 512 },                   { "0", 0 },                         { "16g", INT64_C(17179869184) },
                { "16G", INT64_C(17179869184) },  { "4 KiB", 4096 },                  { "4kb", 4000 },
                { "1.5TiB", INT64_C(1649267441664) }, { "0.5 GB", 500000000 },       { "2M", 2097152 },
                { "1PB", INT64_C(1000000000000000) }, { " 8MiB ", 8388608 },
                { "9223372036854775807", INT64_MAX }, { "0.1KB", 100 },
        };
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
                int64_t v = -7;
                cr_assert_eq(ctl_parse_size(ok[i].in, &v), 0, "\"%s\" parses", ok[i].in);
                cr_assert_eq(v, ok[i].want, "\"%s\" = %lld, not %lld", ok[i].in, (long long) ok[i].want, (long long) v);
        }
}

Test(ctl_units, sizes_refused) {
        static const char *const bad[] = { "", "abc", "16XB", "-1", "1.2.3", "16 GiB x", "GiB", ".5G", "16.",
                                           "1e9", "16 G B", "+5", "16GiBs" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                int64_t v = 42;
                cr_assert_eq(ctl_parse_size(bad[i], &v), -EINVAL, "\"%s\" is refused", bad[i]);
                cr_assert_eq(v, 42, "and leaves the output alone");
        }
        int64_t v;
        cr_assert_eq(ctl_parse_size("9223372036854775808", &v), -ERANGE);
        cr_assert_eq(ctl_parse_size("8192PiB", &v), -ERANGE);
        cr_assert_eq(ctl_parse_size("99999999999999999999999", &v), -ERANGE);
        cr_assert_eq(ctl_parse_size(NULL, &v), -EINVAL);
}

Test(ctl_units, sizes_print_in_binary_units) {
        char b[32];
        cr_assert_str_eq(ctl_format_size(0, b, sizeof b), "0 B");
        cr_assert_str_eq(ctl_format_size(1023, b, sizeof b), "1023 B");
        cr_assert_str_eq(ctl_format_size(1024, b, sizeof b), "1 KiB");
        cr_assert_str_eq(ctl_format_size(INT64_C(17179869184), b, sizeof b), "16 GiB");
        cr_assert_str_eq(ctl_format_size(INT64_C(1610612736), b, sizeof b), "1.5 GiB");
        cr_assert_str_eq(ctl_format_size(INT64_C(2054553600), b, sizeof b), "1.9 GiB");
        cr_assert_str_eq(ctl_format_size(INT64_C(1099511627776), b, sizeof b), "1 TiB");
        cr_assert_str_eq(ctl_format_size(INT64_MAX, b, sizeof b), "8 EiB");
        cr_assert_str_eq(ctl_format_size(-1, b, sizeof b), "-");
        /* What is printed parses back to the same size. */
        int64_t v;
        cr_assert_eq(ctl_parse_size(ctl_format_size(INT64_C(17179869184), b, sizeof b), &v), 0);
        cr_assert_eq(v, INT64_C(17179869184));
}

Test(ctl_units, ages) {
        char b[16];
        cr_assert_str_eq(ctl_format_age(0, b, sizeof b), "0s");
        cr_assert_str_eq(ctl_format_age(59, b, sizeof b), "59s");
        cr_assert_str_eq(ctl_format_age(60, b, sizeof b), "1m");
        cr_assert_str_eq(ctl_format_age(3599, b, sizeof b), "59m");
        cr_assert_str_eq(ctl_format_age(3600, b, sizeof b), "1h");
        cr_assert_str_eq(ctl_format_age(47 * 3600 + 59, b, sizeof b), "47h");
        cr_assert_str_eq(ctl_format_age(48 * 3600, b, sizeof b), "2d");
        cr_assert_str_eq(ctl_format_age(-5, b, sizeof b), "-");
}

Test(ctl_units, numbers_and_intervals) {
        long n;
        double d;
        cr_assert_eq(ctl_parse_long("10", 1, 100, &n), 0);
        cr_assert_eq(n, 10);
        cr_assert_eq(ctl_parse_long("0", 1, 100, &n), -ERANGE);
        cr_assert_eq(ctl_parse_long("101", 1, 100, &n), -ERANGE);
        cr_assert_eq(ctl_parse_long("1x", 1, 100, &n), -EINVAL);
        cr_assert_eq(ctl_parse_long("", 1, 100, &n), -EINVAL);
        cr_assert_eq(ctl_parse_long(" 5", 1, 100, &n), -EINVAL);
        cr_assert_eq(ctl_parse_long("99999999999999999999", 1, 100, &n), -ERANGE);
        cr_assert_eq(ctl_parse_interval("1", &d), 0);
        cr_assert_float_eq(d, 1.0, 1e-9);
        cr_assert_eq(ctl_parse_interval("0.5", &d), 0);
        cr_assert_float_eq(d, 0.5, 1e-9);
        cr_assert_eq(ctl_parse_interval("250ms", &d), 0);
        cr_assert_float_eq(d, 0.25, 1e-9);
        cr_assert_eq(ctl_parse_interval("2s", &d), 0);
        cr_assert_float_eq(d, 2.0, 1e-9);
        cr_assert_eq(ctl_parse_interval("0", &d), -EINVAL);
        cr_assert_eq(ctl_parse_interval("-1", &d), -EINVAL);
        cr_assert_eq(ctl_parse_interval("nan", &d), -EINVAL);
        cr_assert_eq(ctl_parse_interval("3601", &d), -EINVAL);
        cr_assert_eq(ctl_parse_interval("1h", &d), -EINVAL);
}

Test(ctl_units, url_escape) {
        char *s = ctl_url_escape("a b&c=d/é~_.-");
        cr_assert_str_eq(s, "a%20b%26c%3Dd%2F%C3%A9~_.-");
        free(s);
}

/* ---- text ------------------------------------------------------------- */

Test(ctl_text, width_counts_code_points) {
        cr_assert_eq(ctl_text_width("abc"), 3);
        cr_assert_eq(ctl_text_width("h\xc3\xa9llo"), 5);
        cr_assert_eq(ctl_text_width(ELL), 1);
        cr_assert_eq(ctl_text_width(""), 0);
}

Test(ctl_text, sanitize_removes_control_characters) {
        char *s = ctl_text_sanitize("a\tb\nc\x1b[31md\x7f" "e\xff\xc3(f\xc2\x85g\xc3\xa9");
        cr_assert_str_eq(s, "a b c?[31md?e?" "?(f?g\xc3\xa9");
        free(s);
        s = ctl_text_sanitize("\xed\xa0\x80x"); /* a UTF-16 surrogate is not UTF-8 */
        cr_assert_str_eq(s, "?" "?" "?x");
        free(s);
}

Test(ctl_text, cut_marks_what_it_dropped) {
        char *s = ctl_text_cut("hello world", 8, ELL);
        cr_assert_str_eq(s, "hello w" ELL);
        cr_assert_eq(ctl_text_width(s), 8);
        free(s);
        s = ctl_text_cut("hello world", 8, "~");
        cr_assert_str_eq(s, "hello w~");
        free(s);
        s = ctl_text_cut("short", 8, ELL);
        cr_assert_str_eq(s, "short");
        free(s);
        s = ctl_text_cut("h\xc3\xa9h\xc3\xa9h\xc3\xa9", 4, "~"); /* never inside a character */
        cr_assert_str_eq(s, "h\xc3\xa9h~");
        free(s);
        s = ctl_text_cut("abc", 0, ELL);
        cr_assert_str_eq(s, "");
        free(s);
}

Test(ctl_text, wrap_breaks_at_spaces) {
        const char *text = "Host does not meet the minimum requirements: Insufficient memory: 2.0 GiB, "
                           "8.0 GiB required for any host";
        char *s = ctl_text_wrap(text, 30, 4);
        cr_assert_str_eq(s, "Host does not meet the minimum\n"
                            "    requirements: Insufficient\n"
                            "    memory: 2.0 GiB, 8.0 GiB\n"
                            "    required for any host");
        free(s);
        s = ctl_text_wrap("aaaaaaaaaaaaaaaaaaaaaaaaa bb", 10, 0); /* a longer word breaks hard */
        cr_assert_str_eq(s, "aaaaaaaaaa\naaaaaaaaaa\naaaaa bb");
        free(s);
        s = ctl_text_wrap("unchanged  text", 0, 2);
        cr_assert_str_eq(s, "unchanged  text");
        free(s);
}

/* ---- tables ------------------------------------------------------------- */

static const struct ctl_col host_cols[] = {
        { "ID", CTL_COL_ID, 0, 0 },
        { "HOSTNAME", CTL_COL_FLEX, 0, 10 },
        { "STATUS", CTL_COL_FLEX, 0, 20 },
        { "ROLE", 0, 3, 0 },
        { "CLUSTER", CTL_COL_ID, 2, 0 },
        { "INFRA-ENV", CTL_COL_ID, 1, 0 },
        { "AGENT", CTL_COL_WIDE, 0, 0 },
        { "SEEN", CTL_COL_RIGHT, 4, 0 },
};

static void fill_hosts(struct ctl_table *t, const char *hostname) {
        ctl_table_init(t, host_cols, sizeof host_cols / sizeof *host_cols);
        const char *r1[] = { "6d757374-6572-4071-8335-000000000001", hostname, "installing-in-progress",
                             "master", "d7b72eed-a41a-438b-aa6f-be12c8afa0d2", "f362a240-6a39-43d3-9cf4-a51336cc3f12",
                             "v1.2.3-long-agent-version", "12s" };
        const char *r2[] = { "9e11c25c-e9b0-571b-b799-f7d3ccdd4c01", "vm", "known-unbound", "auto", NULL,
                             "f362a240-6a39-43d3-9cf4-a51336cc3f12", "", "3h" };
        cr_assert_eq(ctl_table_add(t, r1), 0);
        cr_assert_eq(ctl_table_add(t, r2), 0);
}

/* What `host show` prints under its key/value block (ctl_print_validations). */
static const struct ctl_col validation_cols[] = {
        { "VALIDATION", 0, 0, 0 },
        { "STATUS", 0, 0, 0 },
        { "MESSAGE", CTL_COL_FLEX, 0, 20 },
};
static const char LONG_MESSAGE[] =
        "Host does not meet the minimum requirements: Insufficient memory: 2.0 GiB, 8.0 GiB required for any "
        "host; Insufficient CPU cores: 1, 2 required for any host; the installation disk must hold at least "
        "100 GiB and be one of nvme, ssd or hdd (a removable disk never is)";

static void fill_validations(struct ctl_table *t, const char *message) {
        ctl_table_init(t, validation_cols, 3);
        const char *r1[] = { "has-min-memory", "failure", message };
        const char *r2[] = { "has-min-cpu-cores", "success", "Sufficient CPU cores" };
        cr_assert_eq(ctl_table_add(t, r1), 0);
        cr_assert_eq(ctl_table_add(t, r2), 0);
}

/* Every word of `text` is somewhere in s, whole. */
static void assert_words_in(const char *s, const char *text) {
        char *copy = strdup(text), *save = NULL;
        for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
                cr_assert(strstr(s, w), "\"%s\" is lost:\n%s", w, s);
        free(copy);
}

/* The header line's column names, space-separated ("ID HOSTNAME ..."). */
static char *header_names(const char *s) {
        char *h = line_of(s, 0), *out = calloc(1, strlen(h) + 1), *save = NULL;
        for (char *w = strtok_r(h, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                if (*out)
                        strcat(out, " ");
                strcat(out, w);
        }
        free(h);
        return out;
}

Test(ctl_table, short_rows_print_in_full_with_short_ids) {
        struct ctl_table t;
        struct ctl_fmt f = { .width = 80, .ellipsis = ELL };
        fill_hosts(&t, "node-1");
        char *s = ctl_table_render(&t, &f);
        cr_assert_eq(assert_lines_fit(s, 80), 3);
        char *h = line_of(s, 0), *l1 = line_of(s, 1), *l2 = line_of(s, 2);
        cr_assert_str_eq(h, "ID        HOSTNAME  STATUS                  ROLE    CLUSTER   INFRA-ENV  SEEN");
        cr_assert_str_eq(l1, "6d757374  node-1    installing-in-progress  master  d7b72eed  f362a240    12s");
        cr_assert_str_eq(l2, "9e11c25c  vm        known-unbound           auto    -         f362a240     3h");
        cr_assert_null(strstr(s, "AGENT"), "wide-only columns stay out");
        free(h);
        free(l1);
        free(l2);
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, at_160_columns_nothing_of_a_long_message_is_lost) {
        struct ctl_table t;
        struct ctl_fmt f = { .width = 160, .ellipsis = ELL };
        fill_validations(&t, LONG_MESSAGE);
        char *s = ctl_table_render(&t, &f);
        size_t lines = assert_lines_fit(s, 160);
        assert_words_in(s, LONG_MESSAGE);
        cr_assert_gt(lines, 3, "the message (%zu columns) is wrapped within 160: %s", strlen(LONG_MESSAGE), s);
        cr_assert_null(strstr(s, ELL), "nothing is cut: %s", s);
        char *l1 = line_of(s, 1), *l2 = line_of(s, 2);
        cr_assert_eq(strncmp(l1, "has-min-memory     failure  Host does not meet", 46), 0, "%s", s);
        cr_assert_eq(strspn(l2, " "), strlen("has-min-memory     failure  "),
                     "the wrapped lines stay in the MESSAGE column: %s", s);
        cr_assert_gt(ctl_text_width(l1), 100, "the room is used: %s", s);
        free(l1);
        free(l2);
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, at_60_columns_a_long_message_is_wrapped_not_cut) {
        struct ctl_table t;
        struct ctl_fmt f = { .width = 60, .ellipsis = ELL };
        fill_validations(&t, LONG_MESSAGE);
        char *s = ctl_table_render(&t, &f);
        size_t lines = assert_lines_fit(s, 60);
        assert_words_in(s, LONG_MESSAGE);
        cr_assert_gt(lines, 6, "%s", s);
        cr_assert_null(strstr(s, ELL), "nothing is cut: %s", s);
        cr_assert(strstr(s, "\nhas-min-cpu-cores  success  Sufficient CPU cores\n"), "the next row follows: %s", s);
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, unlimited_is_a_line_per_row_with_whole_cells) {
        struct ctl_table t;
        struct ctl_fmt f = { .width = 0, .ellipsis = ELL };
        fill_validations(&t, LONG_MESSAGE);
        char *s = ctl_table_render(&t, &f);
        size_t lines = 0;
        for (const char *p = s; *p; p++)
                lines += *p == '\n';
        cr_assert_eq(lines, 3, "a header and a line per row: %s", s);
        cr_assert(strstr(s, LONG_MESSAGE), "the message whole on its line: %s", s);
        free(s);
        ctl_table_free(&t);

        fill_hosts(&t, "a-rather-long-hostname-of-a-rack-server.lab.example.com");
        s = ctl_table_render(&t, &f);
        char *l1 = line_of(s, 1);
        cr_assert(strstr(l1, "a-rather-long-hostname-of-a-rack-server.lab.example.com"), "%s", s);
        cr_assert(strstr(s, "SEEN") && strstr(s, "ROLE"), "every column: %s", s);
        cr_assert(strstr(l1, "6d757374 ") && !strstr(l1, "6d757374-"), "ids stay short in a table: %s", s);
        free(l1);
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, no_headers_drops_the_header_line) {
        struct ctl_table t;
        fill_validations(&t, "Insufficient memory");
        for (unsigned width = 0; width <= 160; width += 80) {
                struct ctl_fmt f = { .width = width, .ellipsis = ELL, .no_header = true };
                char *s = ctl_table_render(&t, &f);
                cr_assert_null(strstr(s, "VALIDATION"), "%s", s);
                cr_assert_eq(strncmp(s, "has-min-memory     failure  Insufficient memory\n", 48), 0, "%s", s);
                cr_assert_eq(assert_lines_fit(s, 160), 2, "%s", s);
                free(s);
                f.no_header = false;
                s = ctl_table_render(&t, &f);
                cr_assert_eq(strncmp(s, "VALIDATION ", 11), 0, "%s", s);
                free(s);
        }
        ctl_table_free(&t);
}

Test(ctl_table, the_columns_depend_on_the_width_not_the_rows) {
        struct ctl_table short_rows, long_rows;
        fill_hosts(&short_rows, "vm");
        fill_hosts(&long_rows, "a-rather-long-hostname-of-a-rack-server.lab.example.com");
        for (unsigned width = 30; width <= 170; width += 5) {
                struct ctl_fmt f = { .width = width, .ellipsis = ELL };
                unsigned ws[8], wl[8];
                ctl_table_layout(&short_rows, &f, ws);
                ctl_table_layout(&long_rows, &f, wl);
                for (size_t i = 0; i < 8; i++)
                        cr_assert_eq(ws[i] != 0, wl[i] != 0, "column %s at %u: %u and %u", host_cols[i].header, width,
                                     ws[i], wl[i]);
                char *a = ctl_table_render(&short_rows, &f), *b = ctl_table_render(&long_rows, &f);
                assert_lines_fit(a, width);
                assert_lines_fit(b, width);
                char *ha = header_names(a), *hb = header_names(b);
                cr_assert_str_eq(ha, hb, "the same columns at %u:\n%s\n%s", width, a, b);
                free(ha);
                free(hb);
                free(a);
                free(b);
        }
        ctl_table_free(&short_rows);
        ctl_table_free(&long_rows);
}

Test(ctl_table, columns_drop_by_rank_when_their_floors_do_not_fit) {
        struct ctl_table t;
        struct ctl_fmt f = { .width = 60, .ellipsis = "~" };
        fill_hosts(&t, "a-rather-long-hostname-of-a-rack-server.lab.example.com");
        unsigned w[8];
        ctl_table_layout(&t, &f, w);
        cr_assert_eq(w[7], 0, "SEEN (rank 4) goes first");
        cr_assert_eq(w[3], 0, "ROLE (rank 3) next");
        cr_assert_eq(w[4], 0, "CLUSTER (rank 2) next");
        cr_assert_gt(w[5], 0, "INFRA-ENV (rank 1) stays");
        cr_assert_eq(w[6], 0, "AGENT is wide-only");
        cr_assert_eq(w[0], CTL_SHORT_ID);
        char *s = ctl_table_render(&t, &f);
        assert_lines_fit(s, 60);
        cr_assert(strstr(s, "a-rather-long-h"), "the hostname wraps, it is not cut: %s", s);
        cr_assert_null(strstr(s, "~"), "%s", s);
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, narrow_widths_still_fit) {
        struct ctl_table t;
        fill_hosts(&t, "a-rather-long-hostname-of-a-rack-server.lab.example.com");
        for (unsigned width = 8; width <= 100; width += 7) {
                struct ctl_fmt f = { .width = width, .ellipsis = ELL };
                char *s = ctl_table_render(&t, &f);
                assert_lines_fit(s, width);
                free(s);
        }
        ctl_table_free(&t);
}

Test(ctl_table, wide_shows_everything_in_full) {
        struct ctl_table t;
        struct ctl_fmt f = { .width = 60, .wide = true, .ellipsis = ELL };
        fill_hosts(&t, "a-rather-long-hostname-of-a-rack-server.lab.example.com");
        char *s = ctl_table_render(&t, &f);
        cr_assert(strstr(s, "6d757374-6572-4071-8335-000000000001"));
        cr_assert(strstr(s, "a-rather-long-hostname-of-a-rack-server.lab.example.com"));
        cr_assert(strstr(s, "AGENT") && strstr(s, "v1.2.3-long-agent-version"));
        cr_assert_null(strstr(s, ELL));
        char *l1 = line_of(s, 1);
        cr_assert_gt(ctl_text_width(l1), 80, "-o wide has no width: %s", s);
        free(l1);
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, cells_are_sanitized) {
        static const struct ctl_col cols[] = { { "TIME", 0, 0, 19 }, { "SEVERITY", 0, 0, 8 },
                                               { "MESSAGE", CTL_COL_FLEX, 0, 20 } };
        struct ctl_table t;
        struct ctl_fmt f = { .width = 80, .ellipsis = ELL, .no_header = true };
        ctl_table_init(&t, cols, 3);
        const char *r[] = { "2026-11-21 21:50:11", "info", "line one\nline two\x1b[2J" };
        cr_assert_eq(ctl_table_add(&t, r), 0);
        char *s = ctl_table_render(&t, &f);
        cr_assert_str_eq(s, "2026-11-21 21:50:11  info      line one line two?[2J\n");
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, empty_table_is_its_header) {
        struct ctl_table t;
        struct ctl_fmt f = { .width = 80, .ellipsis = ELL };
        ctl_table_init(&t, host_cols, sizeof host_cols / sizeof *host_cols);
        char *s = ctl_table_render(&t, &f);
        cr_assert_str_eq(s, "ID  HOSTNAME  STATUS  ROLE  CLUSTER  INFRA-ENV  SEEN\n");
        free(s);
        f.no_header = true;
        s = ctl_table_render(&t, &f);
        cr_assert_str_eq(s, "");
        free(s);
        ctl_table_free(&t);
}

Test(ctl_table, key_value_blocks_wrap_to_the_width_ids_and_digests_whole) {
        static const char digest[] = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        struct ctl_kv kv = { 0 };
        cr_assert_eq(ctl_kv_add(&kv, "ID", "6d757374-6572-4071-8335-000000000001", CTL_KV_ID), 0);
        cr_assert_eq(ctl_kv_add(&kv, "Skipped", NULL, 0), 0);
        cr_assert_eq(ctl_kv_add(&kv, "Status info", LONG_MESSAGE, 0), 0);
        cr_assert_eq(ctl_kv_add(&kv, "Digest", digest, CTL_KV_ID), 0);
        static const unsigned widths[] = { 60, 80, 160 };
        for (size_t k = 0; k < 3; k++) {
                struct ctl_fmt f = { .width = widths[k], .ellipsis = ELL };
                char *s = ctl_kv_render(&kv, &f);
                char *above = strndup(s, (size_t) (strstr(s, "\nDigest:") - s));
                size_t lines = assert_lines_fit(above, widths[k]) + 1;
                free(above);
                cr_assert_gt(lines, 3, "the status info wraps at %u: %s", widths[k], s);
                assert_words_in(s, LONG_MESSAGE);
                char *l0 = line_of(s, 0), *l1 = line_of(s, 1), *l2 = line_of(s, 2), *last = line_of(s, lines - 1);
                cr_assert_str_eq(l0, "ID:          6d757374-6572-4071-8335-000000000001");
                cr_assert_eq(strncmp(l1, "Status info: Host does not meet", 31), 0, "%s", l1);
                cr_assert_eq(strncmp(l2, "             ", 13), 0, "continuation lines are indented: %s", l2);
                cr_assert_str_eq(last, "Digest:      sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                                 "a digest is never cut or wrapped: %s", s);
                cr_assert_null(strstr(s, ELL));
                free(l0);
                free(l1);
                free(l2);
                free(last);
                free(s);
        }
        struct ctl_fmt f = { .width = 0, .ellipsis = ELL };
        char *s = ctl_kv_render(&kv, &f);
        cr_assert(strstr(s, "\nStatus info: Host does not meet"), "%s", s);
        cr_assert(strstr(s, LONG_MESSAGE), "unlimited: the value whole on its line: %s", s);
        free(s);
        ctl_kv_free(&kv);
}

Test(ctl_table, the_width_is_columns_else_the_terminal_else_none) {
        cr_assert_eq(ctl_output_width(NULL, false, 0), 0, "piped: no limit");
        cr_assert_eq(ctl_output_width(NULL, true, 132), 132, "the terminal's width");
        cr_assert_eq(ctl_output_width(NULL, true, 0), 80, "a terminal of unknown size");
        cr_assert_eq(ctl_output_width("60", true, 132), 60, "COLUMNS wins");
        cr_assert_eq(ctl_output_width("160", false, 0), 160, "COLUMNS when piped too");
        static const char *bad[] = { "", "0", "-5", "wide", "80x", " 80", "100000" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(ctl_output_width(bad[i], true, 100), 100, "COLUMNS=\"%s\" is ignored", bad[i]);
                cr_assert_eq(ctl_output_width(bad[i], false, 0), 0, "COLUMNS=\"%s\" is ignored", bad[i]);
        }
}

/* ---- command lines refused before any request ---------------------------- */

/* Run ctl_main on argv (NULL-terminated) with stdout and stderr captured.
 * The server is a closed port: a request would fail with 1, never 2. */
static int run(char **err, const char *first, ...) {
        char *argv[64];
        int argc = 0;
        va_list ap;
        argv[argc++] = (char *) "musterctl";
        argv[argc++] = (char *) "--server";
        argv[argc++] = (char *) "http://127.0.0.1:1";
        argv[argc++] = (char *) "--token-file";
        argv[argc++] = (char *) "/nonexistent/token";
        va_start(ap, first);
        for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
                argv[argc++] = (char *) a;
        va_end(ap);
        argv[argc] = NULL;

        fflush(stdout);
        fflush(stderr);
        FILE *eo = tmpfile(), *oo = tmpfile();
        cr_assert(eo && oo);
        int saved_err = dup(2), saved_out = dup(1);
        dup2(fileno(eo), 2);
        dup2(fileno(oo), 1);
        int r = ctl_main(argc, argv);
        fflush(stdout);
        fflush(stderr);
        dup2(saved_err, 2);
        dup2(saved_out, 1);
        close(saved_err);
        close(saved_out);
        long n = ftell(eo);
        rewind(eo);
        char *e = calloc(1, (size_t) (n > 0 ? n : 0) + 1);
        if (n > 0 && fread(e, 1, (size_t) n, eo) != (size_t) n)
                cr_assert_fail("reading the captured stderr");
        fclose(eo);
        fclose(oo);
        if (err)
                *err = e;
        else
                free(e);
        return r;
}

#define REFUSED(...)                                                                                       \
        do {                                                                                               \
                char *e_ = NULL;                                                                           \
                int r_ = run(&e_, __VA_ARGS__, NULL);                                                      \
                cr_assert_eq(r_, 2, "exit %d for a usage error: %s", r_, e_);                              \
                cr_assert(strstr(e_, "musterctl: ") && strstr(e_, "Try 'musterctl"), "with a hint: %s", e_); \
                free(e_);                                                                                  \
        } while (0)

Test(ctl_args, usage_errors_exit_2_with_a_hint) {
        REFUSED("bogus");
        REFUSED("host", "frobnicate");
        REFUSED("-o", "yml", "host", "list");
        REFUSED("-o", "custom-columns=ID", "host", "list");
        REFUSED("cluster", "list", "-l", "env in (a");
        REFUSED("wait", "cluster", "c1");
        REFUSED("wait", "cluster", "c1", "--for", "status");
        REFUSED("wait", "cluster", "c1", "--for", "status=x", "--timeout", "soon");
        REFUSED("host", "list", "--interval", "1");
        REFUSED("host", "list", "-o", "xml");
        REFUSED("--server", "ftp://example.com", "host", "list");
        REFUSED("--server", "http://", "host", "list");
        REFUSED("host", "list", "--min-memory", "16XB");
        REFUSED("host", "list", "--min-disk", "-5");
        REFUSED("host", "list", "--min-cpu", "four");
        REFUSED("host", "list", "--limit", "0");
        REFUSED("host", "list", "--status", "sleeping");
        REFUSED("host", "list", "--unbound", "--cluster", "c1");
        REFUSED("host", "list", "extra");
        REFUSED("host", "list", "--nope");
        REFUSED("host", "list", "--status");
        REFUSED("host", "show");
        REFUSED("host", "show", "a", "b");
        REFUSED("host", "bind", "h1");
        REFUSED("host", "set", "h1");
        REFUSED("host", "set", "h1", "--role", "boss");
        REFUSED("infraenv", "create");
        REFUSED("infraenv", "create", "");
        REFUSED("infraenv", "create", "a", "b");
        REFUSED("infraenv", "create", "a", "--ntp-source", "");
        REFUSED("infraenv", "delete");
        REFUSED("cluster", "create", "c", "--label", "novalue");
        REFUSED("cluster", "create", "c", "--label", "=v");
        REFUSED("event", "list", "--severity", "loud");
        REFUSED("event", "list", "--interval", "0");
        REFUSED("event", "list", "--limit", "-3");
        REFUSED("token", "create", "--role", "root", "--owner", "x");
        REFUSED("token", "create", "--owner", "x");
        REFUSED("release", "import");
        REFUSED("release", "import", "a", "b");
        REFUSED("release", "show");
        REFUSED("release", "show", "4.15.0", "--enable", "a,,b");
        REFUSED("release", "show", "4.15/../x");
        REFUSED("release", "show", "4.15.0", "--baseline", "");
        REFUSED("release", "delete", "bad version");
        REFUSED("cluster", "create", "c", "--enable", "Console,");
        REFUSED("cluster", "create", "c", "--baseline", "");
        REFUSED("cluster", "set", "c");
        REFUSED("cluster", "set");
        REFUSED("cluster", "capabilities");
        REFUSED("cluster", "capabilities", "c", "--disable", "");
        REFUSED("cluster", "capabilities", "c", "--enable", "A", "--disable", "A");
        REFUSED("cluster", "install");
        REFUSED("cluster", "upgrade", "c");
        REFUSED("cluster", "payload", "c", "--revision", "0");
        REFUSED("cluster", "payload", "c", "--revision", "x");
        REFUSED("cluster", "watch", "c", "--timeout", "soon");
        REFUSED("cluster", "watch", "c", "--interval", "-1");
        REFUSED("cluster", "watch");
        REFUSED("signing-key", "extra");
        REFUSED("signing-key", "-o");
}

Test(ctl_args, no_command_is_a_usage_error_and_help_is_not) {
        char *e = NULL;
        cr_assert_eq(run(&e, NULL, NULL), 2);
        cr_assert(strstr(e, "Usage: musterctl"), "%s", e);
        free(e);
        cr_assert_eq(run(NULL, "host", NULL), 2, "a resource without a verb");
        cr_assert_eq(run(NULL, "--help", NULL), 0);
        cr_assert_eq(run(NULL, "help", NULL), 0);
        cr_assert_eq(run(NULL, "host", "--help", NULL), 0);
        cr_assert_eq(run(NULL, "--version", NULL), 0);
        static const char *const cmds[][2] = {
                { "infraenv", "create" }, { "infraenv", "list" }, { "infraenv", "show" }, { "infraenv", "delete" },
                { "infraenv", "rotate-token" }, { "host", "list" }, { "host", "show" }, { "host", "bind" },
                { "host", "unbind" }, { "host", "set" }, { "host", "delete" }, { "cluster", "create" },
                { "cluster", "list" }, { "cluster", "show" }, { "cluster", "delete" }, { "event", "list" },
                { "token", "create" }, { "cluster", "set" }, { "cluster", "capabilities" }, { "cluster", "install" },
                { "cluster", "upgrade" }, { "cluster", "payload" }, { "cluster", "watch" }, { "release", "import" },
                { "release", "list" }, { "release", "show" }, { "release", "delete" },
        };
        for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
                cr_assert_eq(run(NULL, cmds[i][0], cmds[i][1], "--help", NULL), 0, "%s %s --help", cmds[i][0],
                             cmds[i][1]);
        cr_assert_eq(run(NULL, "signing-key", "--help", NULL), 0);
        cr_assert_eq(run(NULL, "release", "--help", NULL), 0);
}

Test(ctl_args, good_command_lines_get_as_far_as_the_token) {
        char *e = NULL;
        /* Parsed fine; then the token file is missing: a failure (1), not usage (2). */
        cr_assert_eq(run(&e, "host", "list", "--min-memory", "16GiB", "--min-disk", "100GB", "--status",
                         "known-unbound", "-o", "wide", "--limit", "5", "--all", NULL), 1);
        cr_assert(strstr(e, "/nonexistent/token"), "%s", e);
        free(e);
        cr_assert_eq(run(&e, "event", "list", "--interval", "250ms", "--severity", "warning", NULL), 1);
        free(e);
        cr_assert_eq(run(&e, "cluster", "watch", "c", "--interval", "500ms", "--timeout", "10m", NULL), 1);
        free(e);
        cr_assert_eq(run(&e, "release", "show", "4.16.0+build.1", "--enable", "Console, Insights", "--enable",
                         "baremetal", "--exclude", "internal-openshift-hosted", "--profile", "single-node-developer",
                         NULL), 1);
        cr_assert(strstr(e, "/nonexistent/token"), "%s", e);
        free(e);
        /* -o after signing-key names a file; before it, the format. */
        cr_assert_eq(run(&e, "-o", "json", "signing-key", "-o", "/tmp/key.pem", NULL), 1);
        cr_assert(strstr(e, "/nonexistent/token"), "%s", e);
        free(e);
}

Test(ctl_args, unreachable_server_is_named) {
        char *tmp = tu_mkdtemp(), path[4096];
        cr_assert_not_null(tmp);
        snprintf(path, sizeof path, "%s/token", tmp);
        cr_assert_eq(tu_write_file(tmp, "token", "not-a-real-token\n"), 0);
        char *argv[] = { "musterctl", "--server", "http://127.0.0.1:1/", "--token-file", path, "infraenv", "list", NULL };
        fflush(stderr);
        FILE *eo = tmpfile();
        int saved = dup(2);
        dup2(fileno(eo), 2);
        int r = ctl_main(7, argv);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        tu_rm_rf(tmp);
        free(tmp);
        char buf[1024] = "";
        rewind(eo);
        size_t n = fread(buf, 1, sizeof buf - 1, eo);
        buf[n] = '\0';
        fclose(eo);
        cr_assert_eq(r, 4, "could not reach musterd");
        cr_assert(strstr(buf, "http://127.0.0.1:1"), "the server is named: %s", buf);
}

/* ---- issue 4: releases, capabilities, watch ---------------------------------------- */

Test(ctl_units, durations) {
        double d;
        cr_assert_eq(ctl_parse_duration("90", 1e6, &d), 0);
        cr_assert_float_eq(d, 90, 1e-9);
        cr_assert_eq(ctl_parse_duration("1.5m", 1e6, &d), 0);
        cr_assert_float_eq(d, 90, 1e-9);
        cr_assert_eq(ctl_parse_duration("2h", 1e6, &d), 0);
        cr_assert_float_eq(d, 7200, 1e-9);
        cr_assert_eq(ctl_parse_duration("250ms", 1e6, &d), 0);
        cr_assert_float_eq(d, 0.25, 1e-9);
        cr_assert_eq(ctl_parse_duration("30s", 1e6, &d), 0);
        cr_assert_float_eq(d, 30, 1e-9);
        static const char *const bad[] = { "", "0", "-1", "5d", "m", "1 m", "soon", "nan", "inf", "2h", NULL };
        for (size_t i = 0; bad[i]; i++)
                cr_assert_eq(ctl_parse_duration(bad[i], 3600, &d), -EINVAL, "\"%s\"", bad[i]);
}

Test(ctl_text, utf8_check) {
        cr_assert(ctl_text_is_utf8("plain", 5));
        cr_assert(ctl_text_is_utf8("caf\xc3\xa9", 5));
        cr_assert(ctl_text_is_utf8("", 0));
        cr_assert_not(ctl_text_is_utf8("caf\xc3", 4), "a sequence cut at the end");
        cr_assert_not(ctl_text_is_utf8("a\0b", 3), "NUL");
        cr_assert_not(ctl_text_is_utf8("\xff", 1));
        cr_assert_not(ctl_text_is_utf8("\xed\xa0\x80", 3), "a surrogate");
}

Test(ctl_progress, bar_rendering) {
        char buf[64];
        cr_assert_str_eq(ctl_progress_bar(45, 20, buf, sizeof buf), "[#########-----------]  45%");
        cr_assert_str_eq(ctl_progress_bar(0, 20, buf, sizeof buf), "[--------------------]   0%");
        cr_assert_str_eq(ctl_progress_bar(100, 20, buf, sizeof buf), "[####################] 100%");
        cr_assert_str_eq(ctl_progress_bar(99, 20, buf, sizeof buf), "[###################-]  99%", "full only at 100");
        cr_assert_str_eq(ctl_progress_bar(-5, 10, buf, sizeof buf), "[----------]   0%");
        cr_assert_str_eq(ctl_progress_bar(250, 10, buf, sizeof buf), "[##########] 100%");
        cr_assert_str_eq(ctl_progress_bar(5, 20, buf, sizeof buf), "[#-------------------]   5%");
        char small[8];
        ctl_progress_bar(50, 20, small, sizeof small);
        cr_assert_eq(strlen(small), 7, "cut to the buffer: %s", small);
}

Test(ctl_names, csv_lists) {
        json_object *a = json_object_new_array();
        cr_assert_eq(ctl_csv_append(a, "Console, Insights"), 0);
        cr_assert_eq(ctl_csv_append(a, "baremetal,Console"), 0);
        cr_assert_eq(ctl_csv_append(a, ""), 0);
        cr_assert_eq(json_object_array_length(a), 3, "each once: %s", json_object_to_json_string(a));
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(a, 0)), "Console");
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(a, 1)), "Insights");
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(a, 2)), "baremetal");
        cr_assert_eq(ctl_csv_append(a, "a,,b"), -EINVAL);
        cr_assert_eq(ctl_csv_append(a, ","), -EINVAL);
        cr_assert_eq(ctl_csv_append(a, "x, "), -EINVAL);
        char *j = ctl_join(a, "none"), *k = ctl_join_sep(a, ",", "");
        cr_assert_str_eq(j, "Console, Insights, baremetal");
        cr_assert_str_eq(k, "Console,Insights,baremetal");
        free(j);
        free(k);
        json_object_put(a);
        a = json_object_new_array();
        j = ctl_join(a, "none");
        cr_assert_str_eq(j, "none");
        free(j);
        char many[CTL_MAX_NAMES * 6 + 16] = "";
        for (int i = 0; i <= CTL_MAX_NAMES; i++)
                snprintf(many + strlen(many), sizeof many - strlen(many), "%sc%d", i ? "," : "", i);
        cr_assert_eq(ctl_csv_append(a, many), -E2BIG);
        json_object_put(a);
}

/* Find os_image.path in text and splice `abs` in; the new text. */
static char *rewrite(const char *text, const char *abs, const char *want_value) {
        size_t start, end, n;
        char *value = NULL;
        int quote;
        int r = ctl_release_find_path(text, strlen(text), &start, &end, &value, &quote);
        cr_assert_eq(r, 1, "found in:\n%s", text);
        cr_assert_str_eq(value, want_value);
        free(value);
        char *out = ctl_release_splice_path(text, strlen(text), start, end, quote, abs, &n);
        cr_assert_not_null(out);
        cr_assert_eq(n, strlen(out));
        return out;
}

Test(ctl_release, os_image_path_is_rewritten_in_place) {
        const char *yaml = "# A release\n"
                           "version: \"4.15.0\"\n"
                           "path: top-level-is-not-it\n"
                           "os_image:\n"
                           "  path: os.img   # beside this file\n"
                           "  sha256: \"abc\"\n"
                           "  size: 6291456\n"
                           "known_capabilities: [path, os_image]\n";
        char *out = rewrite(yaml, "/srv/rel/os.img", "os.img");
        cr_assert_str_eq(out, "# A release\n"
                              "version: \"4.15.0\"\n"
                              "path: top-level-is-not-it\n"
                              "os_image:\n"
                              "  path: /srv/rel/os.img   # beside this file\n"
                              "  sha256: \"abc\"\n"
                              "  size: 6291456\n"
                              "known_capabilities: [path, os_image]\n");
        free(out);

        /* Quoting is kept, and what needs quotes gets them. */
        out = rewrite("os_image:\n  sha256: x\n  path: \"img/os.img\"\n", "/a \"b\"/os.img", "img/os.img");
        cr_assert_str_eq(out, "os_image:\n  sha256: x\n  path: \"/a \\\"b\\\"/os.img\"\n");
        free(out);
        out = rewrite("os_image:\n  path: 'os.img'\n", "/it's/os.img", "os.img");
        cr_assert_str_eq(out, "os_image:\n  path: '/it''s/os.img'\n");
        free(out);
        out = rewrite("os_image:\n  path: os.img\n", "/with space: and #/os.img", "os.img");
        cr_assert_str_eq(out, "os_image:\n  path: \"/with space: and #/os.img\"\n");
        free(out);
        /* Flow style, CRLF, a byte order mark and non-ASCII before it. */
        out = rewrite("\xef\xbb\xbfversion: \"caf\xc3\xa9\"\r\nos_image: {sha256: x, path: os.img, size: 1}\r\n",
                      "/r/os.img", "os.img");
        cr_assert_str_eq(out, "\xef\xbb\xbfversion: \"caf\xc3\xa9\"\r\n"
                              "os_image: {sha256: x, path: /r/os.img, size: 1}\r\n");
        free(out);
        /* Nested deeper or under another key: not it. */
        out = rewrite("other:\n  path: no\nos_image:\n  extra:\n    path: no\n  path: yes.img\n", "/y.img", "yes.img");
        cr_assert_str_eq(out, "other:\n  path: no\nos_image:\n  extra:\n    path: no\n  path: /y.img\n");
        free(out);
}

Test(ctl_release, os_image_without_path_or_not_yaml) {
        size_t s, e;
        char *v = NULL;
        int q;
        const char *url = "os_image:\n  url: https://example.com/os.img\n  sha256: x\n";
        cr_assert_eq(ctl_release_find_path(url, strlen(url), &s, &e, &v, &q), 0);
        cr_assert_null(v);
        const char *bad = "os_image: [\n";
        cr_assert_eq(ctl_release_find_path(bad, strlen(bad), &s, &e, &v, &q), -EINVAL);
        const char *latin1 = "version: caf\xe9\n";
        cr_assert_eq(ctl_release_find_path(latin1, strlen(latin1), &s, &e, &v, &q), -EINVAL);
        const char *block = "os_image:\n  path: |\n    os.img\n";
        cr_assert_eq(ctl_release_find_path(block, strlen(block), &s, &e, &v, &q), -ENOTSUP);
        /* Only the first document is the release. */
        const char *two = "version: x\n---\nos_image:\n  path: os.img\n";
        cr_assert_eq(ctl_release_find_path(two, strlen(two), &s, &e, &v, &q), 0);
}

static json_object *host_json(const char *hostname, const char *status, const char *stage, int percent) {
        json_object *h = json_object_new_object();
        json_object_object_add(h, "id", json_object_new_string("6d757374-6572-4071-8335-000000000001"));
        json_object_object_add(h, "hostname", json_object_new_string(hostname));
        json_object_object_add(h, "role", json_object_new_string("master"));
        json_object_object_add(h, "status", json_object_new_string(status));
        json_object_object_add(h, "status_info", json_object_new_string("Installation failed: the disk went away"));
        if (stage) {
                json_object *p = json_object_new_object();
                json_object_object_add(p, "stage", json_object_new_string(stage));
                json_object_object_add(p, "percent", json_object_new_int(percent));
                json_object_object_add(h, "progress", p);
        }
        return h;
}

Test(ctl_watch, block_fits_and_shows_progress) {
        json_object *cl = json_tokener_parse("{\"id\":\"c1\",\"name\":\"prod\",\"status\":\"installing\","
                                             "\"status_info\":\"Installing the hosts\"}");
        json_object *hosts = json_object_new_array();
        json_object_array_add(hosts, host_json("master-0.a-rather-long-hostname.example.com", "installing-in-progress",
                                               "writing-image", 45));
        json_object_array_add(hosts, host_json("master-1", "installed", NULL, 0));
        json_object_array_add(hosts, host_json("master-2", "installing", NULL, 0));
        struct ctl_fmt f = { .width = 80, .ellipsis = "~" };
        char *s = ctl_watch_render(cl, hosts, &f);
        cr_assert_not_null(s);
        assert_lines_fit(s, 80);
        cr_assert(strstr(s, "[#########-----------]  45%"), "%s", s);
        cr_assert(strstr(s, "[####################] 100%"), "an installed host is done: %s", s);
        cr_assert(strstr(s, "installing-in-progress") && strstr(s, "writing-image"), "%s", s);
        cr_assert(strstr(s, "1 of 3"), "%s", s);
        cr_assert(strstr(s, "prod") && strstr(s, "Installing the hosts"), "%s", s);
        free(s);
        f.width = 0;
        f.wide = true;
        s = ctl_watch_render(cl, hosts, &f);
        cr_assert(strstr(s, "6d757374-6572-4071-8335-000000000001") && strstr(s, "the disk went away"), "%s", s);
        free(s);
        bool started = false;
        cr_assert_eq(ctl_watch_outcome(cl, &started), 0);
        cr_assert(started, "installing: an install runs");
        json_object_object_add(cl, "status", json_object_new_string("installed"));
        cr_assert_eq(ctl_watch_outcome(cl, &started), 1);
        json_object_object_add(cl, "status", json_object_new_string("error"));
        cr_assert_eq(ctl_watch_outcome(cl, &started), -1);
        /* Insufficient before an install is waiting; after one, it stopped. */
        json_object_object_add(cl, "status", json_object_new_string("insufficient"));
        started = false;
        cr_assert_eq(ctl_watch_outcome(cl, &started), 0);
        json_object_object_add(cl, "status", json_object_new_string("preparing-for-installation"));
        cr_assert_eq(ctl_watch_outcome(cl, &started), 0);
        json_object_object_add(cl, "status", json_object_new_string("insufficient"));
        cr_assert_eq(ctl_watch_outcome(cl, &started), -1);
        json_object_put(hosts);
        hosts = json_object_new_array();
        f = (struct ctl_fmt) { .width = 80 };
        s = ctl_watch_render(cl, hosts, &f);
        cr_assert(strstr(s, "No hosts"), "%s", s);
        free(s);
        json_object_put(hosts);
        json_object_put(cl);
}

Test(ctl_text, cut_in_the_middle_keeps_both_ends) {
        char *s = ctl_text_cut_middle("0000_30_cluster-baremetal-operator_05_deployment.0.yaml", 24, ELL);
        cr_assert_eq(ctl_text_width(s), 24, "%s", s);
        cr_assert_str_eq(s, "0000_30_clu" ELL "yment.0.yaml", "the start and the end are kept");
        free(s);
        s = ctl_text_cut_middle("abcdefghij", 5, "~");
        cr_assert_str_eq(s, "ab~ij");
        free(s);
        s = ctl_text_cut_middle("short", 10, "~");
        cr_assert_str_eq(s, "short");
        free(s);
        s = ctl_text_cut_middle("abcdef", 2, "~");
        cr_assert_str_eq(s, "a~", "too narrow for both ends: a plain cut");
        free(s);

        /* In a table: a MIDDLE column is cut so; two paths differing at the end stay apart. */
        static const struct ctl_col cols[] = {
                { "PATH", CTL_COL_FLEX | CTL_COL_MIDDLE, 0, 20 },
                { "KIND", 0, 0, 0 },
        };
        struct ctl_table t;
        ctl_table_init(&t, cols, 2);
        const char *r1[] = { "0000_30_cluster-baremetal-operator_05_deployment.0.yaml", "Service" };
        const char *r2[] = { "0000_30_cluster-baremetal-operator_05_deployment.1.yaml", "Deployment" };
        cr_assert_eq(ctl_table_add(&t, r1), 0);
        cr_assert_eq(ctl_table_add(&t, r2), 0);
        struct ctl_fmt f = { .width = 40, .ellipsis = "~" };
        char *out = ctl_table_render(&t, &f);
        assert_lines_fit(out, 40);
        char *l1 = line_of(out, 1), *l2 = line_of(out, 2);
        cr_assert(strstr(l1, ".0.yaml") && strstr(l2, ".1.yaml"), "%s", out);
        cr_assert(strstr(l1, "~") && strstr(l1, "Service"), "%s", out);
        free(l1);
        free(l2);
        free(out);
        ctl_table_free(&t);
}
