/* The logs-gather bundle (agent/logsgather.h) opened by the system's tar and
 * gzip: its four members with what a fake journalctl printed (or why it
 * failed, could not start, or was killed), a kmsg file's records, the log
 * ring's lines; the size cap cutting the oldest lines; and the log ring
 * itself (common/log.h): order, line boundaries after wrapping, threads. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "logsgather.h"
#include "testutil.h"

#define dir tu_dir
#define TS_RE "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "

static void setup(void) {
        unsetenv("JOURNAL_STREAM"); /* lines without <N>, whoever runs the suite */
        tu_dir_up();
}

TestSuite(logsgather, .init = setup, .fini = tu_dir_down);

static char *path_in(const char *rel) {
        char *p;
        cr_assert_geq(asprintf(&p, "%s/%s", dir, rel), 0);
        return p;
}

/* An executable script DIR/name (malloc'd path). */
static char *script(const char *name, const char *body) {
        char *text;
        cr_assert_geq(asprintf(&text, "#!/bin/sh\n%s\n", body), 0);
        cr_assert_eq(tu_write_file(dir, name, text), 0);
        free(text);
        char *p = path_in(name);
        cr_assert_eq(chmod(p, 0755), 0);
        return p;
}

static bool matches(const char *re, const char *s) {
        regex_t rx;
        cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
        bool ok = regexec(&rx, s, 0, NULL, 0) == 0;
        regfree(&rx);
        return ok;
}

struct bundle {
        void *data;
        size_t len;
        json_object *summary;
        char *files[4]; /* agent.log, journal.log, kernel.log, info.json as extracted */
        size_t sizes[4];
        json_object *info;
};

static const char *const names[4] = { "agent.log", "journal.log", "kernel.log", "info.json" };

/* Build the bundle, check its summary against what `tar -xzf` gives. */
static void bundle(struct bundle *b, const struct logs_sources *src, size_t max) {
        char err[512] = "";
        memset(b, 0, sizeof *b);
        int r = logs_bundle_build(src, "5b7c1d9e-0000-4000-8000-000000000001", "9.8.7", max, &b->data, &b->len,
                                  &b->summary, err, sizeof err);
        cr_assert_eq(r, 0, "%d: %s", r, err);
        cr_assert_leq(b->len, max);
        cr_assert_geq(b->len, 18);
        cr_assert_eq(memcmp(b->data, "\x1f\x8b\x08", 3), 0, "gzip, deflate");
        cr_assert_eq(tu_write_bin(dir, "bundle.tar.gz", b->data, b->len), 0);
        char *out = NULL;
        cr_assert_eq(tu_sh(&out, NULL, "cd %s && tar -tzf bundle.tar.gz", dir), 0);
        cr_assert_str_eq(out, "agent.log\njournal.log\nkernel.log\ninfo.json\n");
        free(out);
        cr_assert_eq(tu_sh(NULL, NULL, "rm -rf %s/x && mkdir %s/x && tar -xzf %s/bundle.tar.gz -C %s/x", dir, dir, dir, dir),
                     0);
        for (int i = 0; i < 4; i++) {
                char rel[64];
                snprintf(rel, sizeof rel, "x/%s", names[i]);
                char *p = path_in(rel);
                b->files[i] = tu_read_file(p, &b->sizes[i]);
                cr_assert_not_null(b->files[i], "%s", rel);
                free(p);
        }
        b->info = json_tokener_parse(b->files[3]);
        cr_assert_not_null(b->info, "info.json: %s", b->files[3]);

        cr_assert_eq(json_object_get_int64(json_object_object_get(b->summary, "bytes")), (int64_t) b->len);
        json_object *sm = json_object_object_get(b->summary, "members");
        json_object *im = json_object_object_get(b->info, "members");
        cr_assert_eq(json_object_array_length(sm), 4, "%s", json_object_to_json_string(b->summary));
        cr_assert_eq(json_object_array_length(im), 3, "%s", b->files[3]);
        for (size_t i = 0; i < 4; i++) {
                json_object *s = json_object_array_get_idx(sm, i);
                cr_assert_str_eq(tu_jstr(s, "name"), names[i]);
                cr_assert_eq(json_object_get_int64(json_object_object_get(s, "bytes")), (int64_t) b->sizes[i],
                             "%s", names[i]);
                if (i < 3) {
                        json_object *m = json_object_array_get_idx(im, i);
                        cr_assert_str_eq(tu_jstr(m, "name"), names[i]);
                        cr_assert_eq(json_object_get_int64(json_object_object_get(m, "bytes")),
                                     (int64_t) b->sizes[i]);
                        cr_assert_eq(json_object_get_boolean(json_object_object_get(m, "cut")),
                                     json_object_get_boolean(json_object_object_get(s, "cut")));
                }
        }
        cr_assert_str_eq(tu_jstr(b->info, "host_id"), "5b7c1d9e-0000-4000-8000-000000000001");
        cr_assert_str_eq(tu_jstr(b->info, "agent_version"), "9.8.7");
        cr_assert(matches("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", tu_jstr(b->info, "created_at")),
                  "%s", tu_jstr(b->info, "created_at"));
}

static bool cut(const struct bundle *b, int i) {
        json_object *s = json_object_array_get_idx(json_object_object_get(b->summary, "members"), (size_t) i);
        return json_object_get_boolean(json_object_object_get(s, "cut"));
}

static void bundle_free(struct bundle *b) {
        free(b->data);
        json_object_put(b->summary);
        json_object_put(b->info);
        for (int i = 0; i < 4; i++)
                free(b->files[i]);
}

/* The journal a fake journalctl prints: n lines. */
static char *journal_lines(int n) {
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);
        cr_assert_not_null(f);
        for (int i = 1; i <= n; i++)
                fprintf(f, "2024-05-01T10:00:00.%06d+00:00 node1 kernel: journal line %d\n", i, i);
        fclose(f);
        return s;
}

Test(logsgather, four_members_with_what_each_source_gave) {
        cr_assert_eq(log_ring_enable(64 * 1024), 0);
        log_info("logs-test", "hello %d", 42);
        log_warning("logs-test", "second line");
        /* It checks how it is called: arguments, stdin. */
        char *jc = script("journalctl",
                          "[ \"$*\" = \"-b --no-pager -o short-iso-precise\" ] || { echo \"args: $*\" >&2; exit 3; }\n"
                          "[ \"$(readlink /proc/$$/fd/0)\" = /dev/null ] || { echo stdin >&2; exit 4; }\n"
                          "i=1\n"
                          "while [ $i -le 1000 ]; do\n"
                          "  printf '2024-05-01T10:00:00.%06d+00:00 node1 kernel: journal line %d\\n' $i $i\n"
                          "  i=$((i + 1))\n"
                          "done\n"
                          "echo 'a warning on stderr' >&2");
        cr_assert_eq(tu_write_file(dir, "kmsg",
                                   "6,1,1234567,-;Linux version 6.1.0 (gcc)\n"
                                   " SUBSYSTEM=cpu\n"
                                   " DEVICE=+cpu:0\n"
                                   "4,2,2000001,-,caller=T1;second \\x1b message\n"
                                   "not a record\n"
                                   "3,3,0,c;at zero"), /* no newline at the end of the file */
                     0);
        char *kmsg = path_in("kmsg");
        struct logs_sources src = { .journalctl = jc, .kmsg = kmsg };
        struct bundle b;
        bundle(&b, &src, 1 << 20);

        char *want = journal_lines(1000);
        cr_assert_str_eq(b.files[1], want);
        free(want);
        cr_assert_str_eq(b.files[2], "[    1.234567] Linux version 6.1.0 (gcc)\n"
                                     "[    2.000001] second \\x1b message\n"
                                     "not a record\n"
                                     "[    0.000000] at zero\n");
        cr_assert(matches("^" TS_RE "logs-test: hello 42\n" TS_RE "logs-test: second line\n$", b.files[0]), "%s",
                  b.files[0]);
        for (int i = 0; i < 4; i++)
                cr_assert_not(cut(&b, i), "%s", names[i]);
        bundle_free(&b);
        free(jc);
        free(kmsg);
}

Test(logsgather, what_was_not_there_is_said) {
        struct logs_sources src = { .journalctl = "", .kmsg = "" };
        struct bundle b;
        bundle(&b, &src, LOGS_BUNDLE_MIN);
        cr_assert_str_eq(b.files[0], "The agent kept no log in memory (its log ring was not enabled).\n");
        cr_assert_str_eq(b.files[1], "journalctl was not run (none configured).\n");
        cr_assert_str_eq(b.files[2], "The kernel's log was not read (no kmsg configured).\n");
        bundle_free(&b);

        char *nokmsg = path_in("no-such-kmsg");
        char *nojc = path_in("no-such-journalctl");
        src = (struct logs_sources) { .journalctl = nojc, .kmsg = nokmsg };
        bundle(&b, &src, LOGS_BUNDLE_MIN);
        char want[8192];
        snprintf(want, sizeof want,
                 "%s -b --no-pager -o short-iso-precise could not be started: No such file or directory\n", nojc);
        cr_assert_str_eq(b.files[1], want);
        snprintf(want, sizeof want,
                 "The kernel's log could not be read: %s: No such file or directory\n"
                 "Its lines as the journal kept them:\n"
                 "%s -k -b --no-pager -o short-monotonic could not be started: No such file or directory\n",
                 nokmsg, nojc);
        cr_assert_str_eq(b.files[2], want);
        bundle_free(&b);
        free(nokmsg);
        free(nojc);
}

/* A hardened unit (ProtectKernelLogs=, PrivateDevices=) cannot open kmsg:
 * kernel.log then holds the kernel's lines from the journal (-k). */
Test(logsgather, kernel_lines_from_the_journal_without_kmsg) {
        char *jc = script("journalctl", "if [ \"$1\" = -k ]; then echo \"[    0.000000] kernel: Linux version 6.1 $*\"; "
                                        "else echo 'boot line'; fi");
        char *nokmsg = path_in("unreadable-kmsg");
        struct logs_sources src = { .journalctl = jc, .kmsg = nokmsg };
        struct bundle b;
        bundle(&b, &src, LOGS_BUNDLE_MIN);
        cr_assert_str_eq(b.files[1], "boot line\n");
        char want[8192];
        snprintf(want, sizeof want,
                 "The kernel's log could not be read: %s: No such file or directory\n"
                 "Its lines as the journal kept them:\n"
                 "[    0.000000] kernel: Linux version 6.1 -k -b --no-pager -o short-monotonic\n",
                 nokmsg);
        cr_assert_str_eq(b.files[2], want);
        bundle_free(&b);
        free(nokmsg);
        free(jc);
}

Test(logsgather, a_failing_journalctl_is_reported) {
        char *jc = script("journalctl", "echo 'a line it printed'\n"
                                        "echo 'Failed to open journal: boom' >&2\n"
                                        "exit 1");
        struct logs_sources src = { .journalctl = jc };
        struct bundle b;
        bundle(&b, &src, LOGS_BUNDLE_MIN);
        char want[8192];
        snprintf(want, sizeof want,
                 "%s -b --no-pager -o short-iso-precise failed: exit status 1.\n"
                 "Its standard error:\n"
                 "Failed to open journal: boom\n"
                 "Its standard output:\n"
                 "a line it printed\n", jc);
        cr_assert_str_eq(b.files[1], want);
        bundle_free(&b);
        free(jc);
}

Test(logsgather, a_hanging_journalctl_is_killed) {
        char *jc = script("journalctl", "echo started\nsleep 30 &\nsleep 30"); /* its child is killed too */
        struct logs_sources src = { .journalctl = jc, .timeout_ms = 300 };
        struct bundle b;
        int64_t t0 = tu_mono_ms();
        bundle(&b, &src, LOGS_BUNDLE_MIN);
        int64_t took = tu_mono_ms() - t0;
        cr_assert_lt(took, 2000, "%lld ms", (long long) took);
        char want[8192];
        snprintf(want, sizeof want,
                 "%s -b --no-pager -o short-iso-precise was killed after 300 ms.\n"
                 "Its standard error was empty.\n"
                 "Its standard output:\n"
                 "started\n", jc);
        cr_assert_str_eq(b.files[1], want);
        char *out = NULL;
        tu_sh(&out, NULL, "pgrep -f '^sleep 30$' || true");
        cr_assert_str_eq(out, "", "the script's sleeps were left running: %s", out);
        free(out);
        bundle_free(&b);
        free(jc);
}

/* Lines of hex from a fixed seed: they compress to about half. */
static char *noisy_lines(size_t bytes, size_t *len, const char *tag) {
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        cr_assert_not_null(f);
        uint64_t seed = 0x9e3779b97f4a7c15ull;
        for (unsigned i = 0; ftell(f) < (long) bytes; i++) {
                fprintf(f, "%s line %07u ", tag, i);
                for (int k = 0; k < 12; k++)
                        fprintf(f, "%08x", tu_xorshift(&seed));
                fputc('\n', f);
        }
        fclose(f);
        *len = n;
        return s;
}

/* The kept text is the source's tail from a line's beginning, after a line
 * counting what went, and the two add up to the source. */
static void check_cut(const char *member, size_t member_len, const char *source, size_t source_len) {
        unsigned long long gone = 0;
        int used = 0;
        cr_assert_eq(sscanf(member, "-- %llu bytes left out --\n%n", &gone, &used), 1, "%.200s", member);
        cr_assert_gt(used, 0);
        size_t kept = member_len - (size_t) used;
        cr_assert_eq(gone + kept, source_len, "%llu left out + %zu kept, of %zu", gone, kept, source_len);
        cr_assert_gt(gone, 0);
        cr_assert_eq(source[gone - 1], '\n', "cut at a line boundary");
        cr_assert_eq(memcmp(member + used, source + gone, kept), 0);
}

Test(logsgather, the_journal_is_cut_from_its_start_to_fit) {
        size_t jlen = 0;
        char *journal = noisy_lines(4u << 20, &jlen, "journal");
        cr_assert_eq(tu_write_bin(dir, "journal.txt", journal, jlen), 0);
        char *body;
        cr_assert_geq(asprintf(&body, "exec cat '%s/journal.txt'", dir), 0);
        char *jc = script("journalctl", body);
        free(body);
        cr_assert_eq(log_ring_enable(8192), 0);
        log_info("logs-test", "the agent's line");
        struct logs_sources src = { .journalctl = jc, .kmsg = "" };
        struct bundle b;
        bundle(&b, &src, 64 * 1024);
        cr_assert_leq(b.len, 64 * 1024);
        check_cut(b.files[1], b.sizes[1], journal, jlen);
        /* Its last line is there, and a fair share of the room went to it. */
        const char *last = memrchr(journal, '\n', jlen - 1) + 1;
        cr_assert_eq(memcmp(b.files[1] + b.sizes[1] - strlen(last), last, strlen(last)), 0);
        cr_log_info("bundle %zu bytes, journal.log %zu of %zu", b.len, b.sizes[1], jlen);
        cr_assert_gt(b.sizes[1], 80 * 1024, "only %zu bytes of journal kept", b.sizes[1]);
        cr_assert(cut(&b, 1));
        cr_assert_not(cut(&b, 0));
        cr_assert_not(cut(&b, 2));
        cr_assert(matches("^" TS_RE "logs-test: the agent's line\n$", b.files[0]), "%s", b.files[0]);
        bundle_free(&b);
        free(jc);
        free(journal);
}

/* With the journal gone entirely the kernel's log is cut next. */
Test(logsgather, then_the_kernel_log) {
        size_t klen = 0;
        char *raw = noisy_lines(1u << 20, &klen, "6,1,1000000,-;kernel");
        cr_assert_eq(tu_write_bin(dir, "kmsg", raw, klen), 0);
        char *kmsg = path_in("kmsg");
        size_t jlen = 0;
        char *journal = noisy_lines(1u << 20, &jlen, "journal");
        cr_assert_eq(tu_write_bin(dir, "journal.txt", journal, jlen), 0);
        char *body;
        cr_assert_geq(asprintf(&body, "exec cat '%s/journal.txt'", dir), 0);
        char *jc = script("journalctl", body);
        free(body);
        struct logs_sources src = { .journalctl = jc, .kmsg = kmsg };
        struct bundle b;
        bundle(&b, &src, 64 * 1024);
        cr_assert(cut(&b, 1));
        cr_assert(cut(&b, 2));
        cr_assert_not(cut(&b, 0));
        unsigned long long gone = 0;
        cr_assert_eq(sscanf(b.files[1], "-- %llu bytes left out --\n", &gone), 1);
        cr_assert_eq(gone, jlen, "the journal is all gone: %s", b.files[1]);
        /* The kernel's lines as kernel.log writes them: "[    1.000000] kernel line ...". */
        char *want = NULL;
        size_t wlen = 0;
        FILE *f = open_memstream(&want, &wlen);
        for (char *p = raw; p < raw + klen;) {
                char *nl = memchr(p, '\n', (size_t) (raw + klen - p));
                fprintf(f, "[    1.000000] %.*s\n", (int) (nl - p - 14), p + 14);
                p = nl + 1;
        }
        fclose(f);
        check_cut(b.files[2], b.sizes[2], want, wlen);
        free(want);
        bundle_free(&b);
        free(raw);
        free(journal);
        free(kmsg);
        free(jc);
}

Test(logsgather, refusals) {
        void *out = (void *) 1;
        size_t len = 1;
        json_object *sum = NULL;
        char err[256];
        struct logs_sources src = { .journalctl = "", .kmsg = "" };
        cr_assert_eq(logs_bundle_build(&src, NULL, NULL, LOGS_BUNDLE_MIN - 1, &out, &len, &sum, err, sizeof err),
                     -EINVAL);
        cr_assert_null(out);
        cr_assert_null(sum);
        cr_assert_str_eq(err, "the bundle's limit must be at least 65536 bytes, not 65535");
        /* NULL host id and version: JSON null. */
        cr_assert_eq(logs_bundle_build(&src, NULL, NULL, LOGS_BUNDLE_MIN, &out, &len, &sum, err, sizeof err), 0,
                     "%s", err);
        cr_assert_eq(tu_write_bin(dir, "b.tgz", out, len), 0);
        char *info = NULL;
        cr_assert_eq(tu_sh(&info, NULL, "tar -xzOf %s/b.tgz info.json", dir), 0);
        json_object *o = json_tokener_parse(info);
        cr_assert_not_null(o, "%s", info);
        cr_assert(json_object_object_get_ex(o, "host_id", NULL));
        cr_assert_null(json_object_object_get(o, "host_id"));
        cr_assert_null(json_object_object_get(o, "agent_version"));
        json_object_put(o);
        free(info);
        free(out);
        json_object_put(sum);
}

Test(logsgather, gzip_reads_what_logs_gzip_writes) {
        size_t n = 0;
        char *text = noisy_lines(300000, &n, "gz");
        struct growbuf g = { 0 };
        cr_assert_eq(logs_gzip(text, n, &g, n), 0);
        cr_assert_lt(g.len, n);
        cr_assert_eq(tu_write_bin(dir, "t.gz", g.data, g.len), 0);
        char *p = path_in("t.gz");
        char *out = NULL;
        cr_assert_eq(tu_sh(&out, NULL, "gzip -dc '%s'", p), 0);
        cr_assert_str_eq(out, text);
        free(out);
        size_t was = g.len;
        char *copy = malloc(was);
        memcpy(copy, g.data, was);
        cr_assert_eq(logs_gzip(text, n, &g, was + 1000), -E2BIG, "a second copy does not fit");
        cr_assert_eq(g.len, was);
        cr_assert_eq(memcmp(g.data, copy, was), 0);
        free(copy);
        free(p);
        free(g.data);
        free(text);
}

/* ---- the log ring ------------------------------------------------------------ */

Test(logsgather, the_ring_wraps_at_line_boundaries) {
        size_t len = 0;
        errno = 0;
        cr_assert_null(log_ring_copy(&len));
        cr_assert_eq(errno, ENODATA);
        cr_assert_eq(log_ring_enable(LOG_RING_MIN), 0);
        for (int i = 0; i < 500; i++)
                log_info("ring", "line %d of the ring", i);
        char *c = log_ring_copy(&len);
        cr_assert_not_null(c);
        cr_assert_leq(len, LOG_RING_MIN);
        cr_assert_gt(len, LOG_RING_MIN - 100);
        cr_assert_eq(strlen(c), len);
        /* Whole lines, consecutive, the newest last. */
        int first = -1, prev = -1;
        for (char *line = c; *line;) {
                char *nl = strchr(line, '\n');
                cr_assert_not_null(nl);
                *nl = '\0';
                cr_assert(matches("^" TS_RE "ring: line [0-9]+ of the ring$", line), "%s", line);
                int k = atoi(strstr(line, "line ") + 5);
                if (first < 0)
                        first = k;
                else
                        cr_assert_eq(k, prev + 1);
                prev = k;
                line = nl + 1;
        }
        cr_assert_eq(prev, 499);
        cr_assert_gt(first, 0);
        free(c);

        /* Bigger: the same lines kept, and room for more. Smaller: the newest that fit. */
        cr_assert_eq(log_ring_enable(3 * LOG_RING_MIN), 0);
        char *again = log_ring_copy(&len);
        cr_assert_not_null(again);
        cr_assert(matches(TS_RE "ring: line 499 of the ring\n$", again));
        cr_assert(strstr(again, "of the ring\n") != NULL);
        size_t before = len;
        free(again);
        log_info("ring", "after resizing");
        again = log_ring_copy(&len);
        cr_assert_gt(len, before);
        cr_assert(matches("ring: line 499 of the ring\n" TS_RE "ring: after resizing\n$", again), "%s", again);
        free(again);
        cr_assert_eq(log_ring_enable(LOG_RING_MIN), 0);
        again = log_ring_copy(&len);
        cr_assert_leq(len, LOG_RING_MIN);
        cr_assert(matches("^" TS_RE "ring: line [0-9]+ of the ring\n", again), "%s", again);
        cr_assert(matches(TS_RE "ring: after resizing\n$", again));
        free(again);

        /* A line longer than the ring: cut, ending in a newline. */
        char big[2101]; /* a message stops at 2047 bytes: the rest in the subsystem */
        memset(big, 'z', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        log_info(big, "%s", big);
        again = log_ring_copy(&len);
        cr_assert_eq(len, LOG_RING_MIN);
        cr_assert(matches("^" TS_RE "z{2100}: z+\n$", again));
        free(again);

        cr_assert_eq(log_ring_enable(0), 0);
        errno = 0;
        cr_assert_null(log_ring_copy(&len));
        cr_assert_eq(errno, ENODATA);
}

static void *logger(void *arg) {
        for (int i = 0; i < 300; i++)
                log_info("thread", "%s %d", (const char *) arg, i);
        return NULL;
}

Test(logsgather, the_ring_takes_lines_from_threads_whole) {
        cr_assert_eq(log_ring_enable(1 << 20), 0);
        static const char *const who[] = { "alpha", "beta", "gamma", "delta" };
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, logger, (void *) who[i]), 0);
        for (int i = 0; i < 4; i++)
                pthread_join(t[i], NULL);
        size_t len = 0;
        char *c = log_ring_copy(&len);
        cr_assert_not_null(c);
        int next[4] = { 0 };
        int lines = 0;
        for (char *line = c; *line; lines++) {
                char *nl = strchr(line, '\n');
                cr_assert_not_null(nl);
                *nl = '\0';
                cr_assert(matches("^" TS_RE "thread: (alpha|beta|gamma|delta) [0-9]+$", line), "%s", line);
                for (int i = 0; i < 4; i++)
                        if (strncmp(line + 25 + 8, who[i], strlen(who[i])) == 0) {
                                cr_assert_eq(atoi(line + 25 + 8 + strlen(who[i])), next[i], "%s", line);
                                next[i]++;
                        }
                line = nl + 1;
        }
        cr_assert_eq(lines, 1200);
        for (int i = 0; i < 4; i++)
                cr_assert_eq(next[i], 300);
        free(c);
}
