/* Test helpers: process spawning with captured output, temp trees, the
 * real musterd and agents by PID, HTTP on loopback, JSON paths, fixture
 * releases, network namespaces and musterctl. */
#include "testutil.h"
#include "protocol.h"
#include "bootcfg.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <signal.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <time.h>
#include <curl/curl.h>
#ifdef MUSTER_WITH_POSTGRES
#include <libpq-fe.h>
#endif
#include <sqlite3.h>

extern char **environ;

const char *tu_agent_path(void) {
        const char *p = getenv("MUSTER_AGENT");
        return p && *p ? p : "muster-agent";
}

static int append(char **buf, size_t *len, size_t *cap, const char *data, size_t n) {
        if (*len + n + 1 > *cap) {
                size_t c = *cap ? *cap : 65536;
                while (c < *len + n + 1)
                        c *= 2;
                char *b = realloc(*buf, c);
                if (!b)
                        return -1;
                *buf = b;
                *cap = c;
        }
        memcpy(*buf + *len, data, n);
        *len += n;
        (*buf)[*len] = '\0';
        return 0;
}

/* Hand s to the caller through *dst, or free it when dst is NULL. */
static void give(char **dst, char *s) {
        if (dst)
                *dst = s;
        else
                free(s);
}

const char *tu_sanitizer_report(const char *text) {
        static const char *const marks[] = { "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                                             "SUMMARY: " };
        const char *first = NULL;
        for (size_t i = 0; text && i < sizeof marks / sizeof *marks; i++) {
                const char *p = strstr(text, marks[i]);
                if (p && (!first || p < first))
                        first = p;
        }
        if (!first)
                return NULL;
        while (first > text && first[-1] != '\n')
                first--;
        return first;
}

static int tu_status(int st) {
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- processes started by tu_spawn: their output and how they end --------
 * Each one's stdout+stderr go to a log (its own temporary file when the
 * caller names none); whichever helper reaps it reads what it wrote there
 * and fails the test on a sanitizer report, a crash, or an unclean exit
 * after SIGTERM/SIGINT. */

#define TU_PROCS 256
struct tu_proc {
        int pid;          /* 0: free slot */
        int expect;       /* exit status wanted after SIGTERM/SIGINT */
        bool own_log;     /* a temporary file of ours, removed when reaped */
        long start;       /* the log's size when it started: its output follows */
        char log[4096];
        char name[160];
};
static struct tu_proc procs[TU_PROCS];
static pthread_mutex_t procs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Criterion 2.4 prints a failed assertion in a .fini but passes the test;
 * a test process that dies in its teardown does fail. So the suite's and the
 * test's .fini are wrapped (in this test's process only): a check that
 * fails there is printed and counted, the rest of the teardown still runs,
 * and then the process kills itself. */
static bool in_fini;
static int fini_failures, fini_pending;
static void (*suite_fini)(void), (*test_fini)(void);

static void fini_done(void) {
        if (--fini_pending > 0 || !fini_failures)
                return;
        fprintf(stderr, "[----] %d check(s) of the processes this test started failed in its teardown (above)\n",
                fini_failures);
        fflush(stderr);
        raise(SIGKILL);
}

static void wrap_suite_fini(void) {
        in_fini = true;
        if (suite_fini)
                suite_fini();
        fini_done();
}

static void wrap_test_fini(void) {
        in_fini = true;
        if (test_fini)
                test_fini();
        fini_done();
}

static void guard_teardown(void) {
        static bool done;
        if (done || !criterion_current_test || !criterion_current_test->data)
                return;
        done = true;
        /* The worker's copies of these records need not be aligned (UBSan
         * says so): their fini pointers are read and written bytewise. */
        void (*wrap)(void);
        char *t = (char *) criterion_current_test->data;
        char *su = criterion_current_suite ? (char *) criterion_current_suite->data : NULL;
        size_t at = offsetof(struct criterion_test_extra_data, fini);
        if (su) {
                memcpy(&suite_fini, su + at, sizeof suite_fini);
                wrap = wrap_suite_fini;
                memcpy(su + at, &wrap, sizeof wrap);
                fini_pending++;
        }
        memcpy(&test_fini, t + at, sizeof test_fini);
        wrap = wrap_test_fini;
        memcpy(t + at, &wrap, sizeof wrap);
        fini_pending++;
}

/* Fail the test with msg: an assertion in the test's body, a counted
 * failure in its teardown. */
static void tu_fail(const char *msg) {
        if (in_fini) {
                fprintf(stderr, "[----] %s\n", msg);
                fini_failures++;
                return;
        }
        cr_assert_fail("%s", msg);
}

static void proc_add(int pid, const char *const argv[], const char *log, bool own_log, long start) {
        pthread_mutex_lock(&procs_lock);
        guard_teardown();
        for (int i = 0; i < TU_PROCS; i++) {
                struct tu_proc *p = &procs[i];
                if (p->pid)
                        continue;
                const char *base = strrchr(argv[0], '/');
                *p = (struct tu_proc) { .pid = pid, .own_log = own_log, .start = start };
                snprintf(p->log, sizeof p->log, "%s", log);
                snprintf(p->name, sizeof p->name, "%s%s%s", base ? base + 1 : argv[0], argv[1] ? " " : "",
                         argv[1] ? argv[1] : "");
                break;
        }
        pthread_mutex_unlock(&procs_lock);
}

void tu_expect_exit(int pid, int status) {
        pthread_mutex_lock(&procs_lock);
        for (int i = 0; i < TU_PROCS; i++)
                if (procs[i].pid == pid)
                        procs[i].expect = status;
        pthread_mutex_unlock(&procs_lock);
}

/* What the process wrote to its log (malloc'd; at most the last 16 MiB). */
static char *proc_output(const struct tu_proc *p) {
        FILE *f = fopen(p->log, "re");
        if (!f)
                return NULL;
        fseek(f, 0, SEEK_END);
        long end = ftell(f), from = p->start;
        if (end - from > (16L << 20))
                from = end - (16L << 20);
        char *buf = NULL;
        if (end >= from && fseek(f, from, SEEK_SET) == 0 && (buf = malloc((size_t) (end - from) + 1))) {
                size_t n = fread(buf, 1, (size_t) (end - from), f);
                buf[n] = '\0';
                /* NULs in a log would hide what follows them from strstr. */
                for (size_t i = 0; i < n; i++)
                        if (!buf[i])
                                buf[i] = ' ';
        }
        fclose(f);
        return buf;
}

static bool crash_signal(int status) {
        int sig = status - 128;
        return status > 128 && (sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS || sig == SIGFPE ||
                                sig == SIGILL || sig == SIGSYS || sig == SIGTRAP);
}

/* pid ended with `status` after we sent `sig` (0: none; `escalated`: it did
 * not end on sig and was killed). Nothing for a process tu_spawn did not
 * start; else the checks above, failing the test. */
static void proc_reaped(int pid, int status, int sig, bool escalated) {
        struct tu_proc p;
        bool found = false;
        pthread_mutex_lock(&procs_lock);
        for (int i = 0; i < TU_PROCS; i++)
                if (procs[i].pid == pid) {
                        p = procs[i];
                        procs[i].pid = 0;
                        found = true;
                        break;
                }
        pthread_mutex_unlock(&procs_lock);
        if (!found)
                return;
        char *out = proc_output(&p);
        const char *report = tu_sanitizer_report(out);
        char why[512] = "";
        if (report)
                snprintf(why, sizeof why, "printed a sanitizer report (exit status %d)", status);
        else if (escalated)
                snprintf(why, sizeof why, "did not exit after signal %d: killed", sig);
        else if ((sig == SIGTERM || sig == SIGINT) && status != p.expect)
                snprintf(why, sizeof why, "exited with status %d after signal %d, not %d", status, sig, p.expect);
        else if (crash_signal(status))
                snprintf(why, sizeof why, "crashed: signal %d", status - 128);
        if (*why && out)
                fprintf(stderr, "---- %s (pid %d): %s ----\n%s\n---- end ----\n", p.log, pid, p.name, out);
        if (p.own_log)
                unlink(p.log);
        if (*why) {
                char msg[8192];
                const char *show = report ? report : out ? out : "";
                if (!report && strlen(show) > 3000)
                        show += strlen(show) - 3000; /* how it ended */
                snprintf(msg, sizeof msg, "%s (pid %d) %s; its output (%s):\n%.3000s", p.name, pid, why,
                         p.own_log ? "removed" : p.log, show);
                free(out);
                tu_fail(msg);
                return;
        }
        free(out);
}

char *tu_run(const char *const argv[], int *status, char **err_out) {
        int out[2], err[2];
        posix_spawn_file_actions_t fa;
        pid_t pid;
        char *obuf = NULL, *ebuf = NULL;
        size_t olen = 0, ocap = 0, elen = 0, ecap = 0;

        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
                return NULL;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, err[1], 2);
        if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *) argv, environ) != 0) {
                posix_spawn_file_actions_destroy(&fa);
                return NULL;
        }
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        close(err[1]);
        struct pollfd p[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
        int open_fds = 2;
        append(&obuf, &olen, &ocap, "", 0);
        append(&ebuf, &elen, &ecap, "", 0);
        while (open_fds > 0) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        if (p[i].fd < 0 || !p[i].revents)
                                continue;
                        char chunk[65536];
                        ssize_t k = read(p[i].fd, chunk, sizeof chunk);
                        if (k <= 0) {
                                close(p[i].fd);
                                p[i].fd = -1;
                                open_fds--;
                                continue;
                        }
                        if (i == 0)
                                append(&obuf, &olen, &ocap, chunk, (size_t) k);
                        else
                                append(&ebuf, &elen, &ecap, chunk, (size_t) k);
                }
        }
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (status)
                *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        /* Our binaries are built with the sanitizers in one of the builds:
         * whatever the exit status, a report in their stderr fails. */
        const char *report = tu_sanitizer_report(ebuf);
        if (report) {
                char msg[4096];
                snprintf(msg, sizeof msg, "%s printed a sanitizer report:\n%.3000s", argv[0], report);
                guard_teardown();
                tu_fail(msg);
        }
        give(err_out, ebuf);
        return obuf;
}

int tu_runf(char **out, char **err, const char *fmt, ...) {
        char *line = NULL, *argv[64], *save = NULL, *e = NULL;
        size_t n = 0;
        int status = -1;
        va_list ap;

        va_start(ap, fmt);
        int k = vasprintf(&line, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -1;
        for (char *t = strtok_r(line, " ", &save); t && n < 63; t = strtok_r(NULL, " ", &save))
                argv[n++] = t;
        argv[n] = NULL;
        char *o = n ? tu_run((const char *const *) argv, &status, &e) : NULL;
        if (!o)
                status = -1;
        give(out, o);
        give(err, e);
        free(line);
        return status;
}

void tu_must(const char *fmt, ...) {
        char *cmd = NULL, *err = NULL;
        va_list ap;
        va_start(ap, fmt);
        cr_assert(vasprintf(&cmd, fmt, ap) >= 0);
        va_end(ap);
        int st = tu_runf(NULL, &err, "%s", cmd);
        cr_assert_eq(st, 0, "%s: %s", cmd, err ? err : "");
        free(err);
        free(cmd);
}

json_object *tu_agent_inventory(const char *sysroot, int *status) {
        const char *argv[] = { tu_agent_path(), "inventory", sysroot ? "--sysroot" : NULL, sysroot, NULL };
        char *err = NULL;
        char *out = tu_run(argv, status, &err);
        if (err && *err)
                fprintf(stderr, "%s", err);
        free(err);
        if (!out)
                return NULL;
        json_object *o = json_tokener_parse(out);
        free(out);
        return o;
}

char *tu_dir;

void tu_dir_up(void) {
        tu_dir = tu_mkdtemp();
        cr_assert_not_null(tu_dir);
}

char *tu_path_in(const char *d, const char *rel) {
        char *p;
        cr_assert(asprintf(&p, "%s/%s", d, rel) > 0);
        return p;
}

int tu_sh(char **out, char **err, const char *fmt, ...) {
        char cmd[8192];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof cmd, fmt, ap);
        va_end(ap);
        int status = -1;
        char *e = NULL;
        char *o = tu_run((const char *const[]) { "sh", "-c", cmd, NULL }, &status, &e);
        cr_log_info("%s: %s", cmd, e ? e : "");
        if (err)
                *err = e;
        else
                free(e);
        if (out)
                *out = o;
        else
                free(o);
        return status;
}

void tu_dir_down(void) {
        if (tu_dir)
                tu_rm_rf(tu_dir);
        free(tu_dir);
        tu_dir = NULL;
}

char *tu_mkdtemp(void) {
        const char *t = getenv("TMPDIR");
        char *p;
        if (asprintf(&p, "%s/muster-test.XXXXXX", t && *t ? t : "/tmp") < 0)
                return NULL;
        if (!mkdtemp(p)) {
                free(p);
                return NULL;
        }
        return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int tu_rm_rf(const char *path) {
        return nftw(path, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

static int mkparents(const char *path) {
        char buf[PATH_MAX];
        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -1;
                *p = '/';
        }
        return 0;
}

int tu_write_bin(const char *root, const char *relpath, const void *data, size_t len) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", root, relpath);
        if (mkparents(path) < 0)
                return -1;
        FILE *f = fopen(path, "we");
        if (!f)
                return -1;
        size_t w = fwrite(data, 1, len, f);
        return fclose(f) == 0 && w == len ? 0 : -1;
}

int tu_write_file(const char *root, const char *relpath, const char *text) {
        return tu_write_bin(root, relpath, text, strlen(text));
}

int tu_symlink(const char *root, const char *relpath, const char *target) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", root, relpath);
        if (mkparents(path) < 0)
                return -1;
        return symlink(target, path);
}

char *tu_read_file(const char *path, size_t *len) {
        FILE *f = fopen(path, "rbe");
        if (!f)
                return NULL;
        char *buf = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&buf, &n);
        char chunk[65536];
        size_t k;
        while (m && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
                fwrite(chunk, 1, k, m);
        bool bad = !m || ferror(f);
        fclose(f);
        if (m && fclose(m) != 0)
                bad = true;
        if (bad) {
                free(buf);
                return NULL;
        }
        if (len)
                *len = n;
        return buf;
}

char *tu_listing(const char *path) {
        struct dirent **ents;
        int n = scandir(path, &ents, NULL, alphasort);
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        cr_assert_not_null(m);
        for (int i = 0; i < n; i++) {
                if (ents[i]->d_name[0] != '.')
                        fprintf(m, "%s%s", ftell(m) > 0 ? "," : "", ents[i]->d_name);
                free(ents[i]);
        }
        if (n >= 0)
                free(ents);
        fclose(m);
        return buf;
}

json_object *tu_json_get(json_object *root, const char *dotted) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", dotted);
        json_object *cur = root;
        for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur;
             tok = strtok_r(NULL, ".", &save)) {
                if (json_object_is_type(cur, json_type_array)) {
                        char *end;
                        long i = strtol(tok, &end, 10);
                        cur = *end ? NULL : json_object_array_get_idx(cur, (size_t) i);
                } else if (!json_object_object_get_ex(cur, tok, &cur))
                        cur = NULL;
        }
        return cur;
}

const char *tu_jstr(json_object *o, const char *dotted) {
        return json_object_get_string(tu_json_get(o, dotted));
}

const char *tu_validation(json_object *host, const char *id) {
        json_object *a = tu_json_get(host, "validations");
        for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                json_object *v = json_object_array_get_idx(a, i);
                if (strcmp(tu_jstr(v, "id"), id) == 0)
                        return tu_jstr(v, "status");
        }
        return NULL;
}

char *tu_join(json_object *arr, const char *key) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        cr_assert_not_null(m);
        for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                const char *v = key ? tu_jstr(e, key) : json_object_get_string(e);
                fprintf(m, "%s%s", i ? "," : "", v ? v : "?");
        }
        fclose(m);
        return buf;
}

void tu_assert_join(json_object *arr, const char *key, const char *want) {
        char *got = tu_join(arr, key);
        cr_assert_str_eq(got, want, "%s of %s", key ? key : "the elements", json_object_to_json_string(arr));
        free(got);
}

int64_t tu_mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tu_enter_netns(const char *name) {
        char path[128];
        snprintf(path, sizeof path, "/run/netns/%s", name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
        close(fd);
        return r;
}

int64_t tu_proc_status_bytes(int pid, const char *name) {
        char path[64], line[256];
        size_t n = strlen(name);
        long long kib = -1;
        snprintf(path, sizeof path, "/proc/%d/status", pid);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        while (fgets(line, sizeof line, f))
                if (strncmp(line, name, n) == 0 && line[n] == ':' && sscanf(line + n + 1, "%lld", &kib) == 1)
                        break;
        fclose(f);
        cr_assert_geq(kib, 0, "%s of %d", name, pid);
        return (int64_t) kib * 1024;
}

uint8_t *tu_pxe_template(const char *dir) {
        uint64_t seed = 0x7ec1a1d;
        uint8_t *tpl = malloc(TU_TPL_SIZE);
        cr_assert_not_null(tpl);
        for (size_t i = 0; i < TU_TPL_SIZE; i += 4) {
                uint32_t v = tu_xorshift(&seed);
                memcpy(tpl + i, &v, 4);
        }
        memset(tpl + TU_TPL_AREA_OFF, 0, BOOTCFG_AREA_SIZE);
        cr_assert_eq(tu_write_bin(dir, "discovery.iso", tpl, TU_TPL_SIZE), 0);
        char side[1024];
        snprintf(side, sizeof side,
                 "{\"format\": \"muster-iso-template/1\", \"config_offset\": %d, \"config_size\": %d, \"size\": %d, "
                 "\"pxe\": {\"kernel_offset\": %d, \"kernel_size\": %d, \"initrd_offset\": %d, \"initrd_size\": %d, "
                 "\"cmdline\": \"%s\"}}\n",
                 TU_TPL_AREA_OFF, BOOTCFG_AREA_SIZE, TU_TPL_SIZE, TU_TPL_KERNEL_OFF, TU_TPL_KERNEL_SIZE,
                 TU_TPL_INITRD_OFF, TU_TPL_INITRD_SIZE, TU_TPL_CMDLINE);
        cr_assert_eq(tu_write_file(dir, "discovery.iso.json", side), 0);
        return tpl;
}

uint32_t tu_xorshift(uint64_t *state) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        return (uint32_t) (*state >> 11);
}

/* ---- musterd under test ------------------------------------------------ */

/* STATE/admin.token's first line replaces m->admin_token when there is one.
 * 0 if m has a token then, else -1. */
static int read_admin_token(struct tu_musterd *m) {
        char tok[4096];
        if (!m->admin_token_path && asprintf(&m->admin_token_path, "%s/admin.token", m->state_dir) < 0) {
                m->admin_token_path = NULL;
                return -1;
        }
        FILE *f = fopen(m->admin_token_path, "re");
        if (!f)
                return -1;
        if (fgets(tok, sizeof tok, f)) {
                tok[strcspn(tok, "\n")] = '\0';
                free(m->admin_token);
                m->admin_token = strdup(tok);
        }
        fclose(f);
        return m->admin_token ? 0 : -1;
}

unsigned tu_free_port(void) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof a) < 0 || getsockname(fd, (struct sockaddr *) &a, &len) < 0) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        close(fd);
        return ntohs(a.sin_port);
}

static void tu_sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Whether the musterd answering at m->base is the one with m->state_dir:
 * it takes the admin token that this state dir holds (another musterd on a
 * reused port signs with another key and answers 401). */
static bool musterd_is_ours(struct tu_musterd *m) {
        char url[160];
        free(m->admin_token);
        m->admin_token = NULL;
        if (read_admin_token(m) < 0)
                return false;
        snprintf(url, sizeof url, "%s" MUSTER_API_PREFIX MUSTER_PATH_TOKENS, m->base);
        return tu_http("GET", url, m->admin_token, NULL, 0, NULL) == 200;
}

/* Spawn musterd on m->base's address with m->state_dir and wait up to 20 s
 * for /healthz from it (not from another test's musterd that took the same
 * free port): 1 when it answers; 0 when it exited (the port taken?) or never
 * answered (then it is killed); -1 when it could not be spawned. */
static int spawn_musterd(struct tu_musterd *m, const char *config) {
        const char *bin = getenv("MUSTERD");
        char url[128], ca[4200];
        snprintf(url, sizeof url, "%s/healthz", m->base);
        const char *listen = strstr(m->base, "://") + 3;
        snprintf(ca, sizeof ca, "%.4000s/tls/ca.pem", m->state_dir);
        if (m->https)
                tu_http_set_ca(ca);
        const char *argv[12] = { bin && *bin ? bin : "musterd", "--listen", listen, "--state-dir", m->state_dir };
        int k = 5;
        static char store[4400];
        const char *backend = getenv("MUSTER_TEST_STORE");
        if (backend && strcmp(backend, "postgres") == 0) {
#ifdef MUSTER_WITH_POSTGRES
                if (!m->pg_db[0])
                        tu_pg_database(store, sizeof store, m->pg_db, sizeof m->pg_db);
                else
                        tu_pg_url(m->pg_db, store, sizeof store);
                argv[k++] = "--store";
                argv[k++] = store;
#else
                cr_assert_fail("MUSTER_TEST_STORE=postgres: this build has no PostgreSQL store");
#endif
        } else if (backend && *backend && strcmp(backend, "sqlite") != 0) {
                cr_assert_fail("MUSTER_TEST_STORE=%s: no such store back-end (known: sqlite, postgres)", backend);
        }
        if (!m->https)
                argv[k++] = "--insecure-http";
        if (m->verbose)
                argv[k++] = "-v";
        if (config) {
                argv[k++] = "--config";
                argv[k++] = config;
        }
        int pid = tu_spawn(argv, m->log);
        if (pid < 0)
                return -1;
        m->pid = pid;
        for (int i = 0; i < 400; i++) {
                int st;
                if (tu_http("GET", url, NULL, NULL, 0, NULL) == 200 && musterd_is_ours(m))
                        return 1;
                if (waitpid(pid, &st, WNOHANG) == pid) {
                        m->pid = 0;
                        proc_reaped(pid, tu_status(st), 0, false);
                        return 0;
                }
                tu_sleep_ms(50);
        }
        tu_musterd_stop(m, SIGKILL);
        return 0;
}

int tu_musterd_start(struct tu_musterd *m, const char *state_dir, const char *config) {
        if (!m->state_dir)
                m->state_dir = strdup(state_dir);
        /* A free port may be taken before musterd binds it: try another. */
        for (int attempt = 0; attempt < 5; attempt++) {
                m->port = tu_free_port();
                snprintf(m->base, sizeof m->base, "%s://127.0.0.1:%u", m->https ? "https" : "http", m->port);
                int r = spawn_musterd(m, config);
                if (r < 0)
                        return -1;
                if (r > 0)
                        return 0; /* spawn_musterd read its admin token */
        }
        return -1;
}

/* DIR/state in state; DIR/musterd.conf in config, written with config_text
 * (when that is NULL, config is ""). 0 or -1. */
static int state_and_config(const char *dir, const char *config_text, char state[4096], char config[4096]) {
        snprintf(state, 4096, "%s/state", dir);
        config[0] = '\0';
        if (!config_text)
                return 0;
        snprintf(config, 4096, "%s/musterd.conf", dir);
        return tu_write_file(dir, "musterd.conf", config_text);
}

int tu_musterd_start_in(struct tu_musterd *m, const char *dir, const char *config_text) {
        char state[4096], config[4096];
        if (state_and_config(dir, config_text, state, config) < 0)
                return -1;
        return tu_musterd_start(m, state, *config ? config : NULL);
}

int tu_musterd_start_at(struct tu_musterd *m, const char *listen, const char *dir, const char *config_text) {
        char state[4096], config[4096];
        const char *colon = strrchr(listen, ':');
        if (!colon || state_and_config(dir, config_text, state, config) < 0)
                return -1;
        if (!m->state_dir)
                m->state_dir = strdup(state);
        if (!m->log && asprintf(&m->log, "%s/musterd.log", dir) < 0)
                m->log = NULL;
        m->port = (unsigned) strtoul(colon + 1, NULL, 10);
        snprintf(m->base, sizeof m->base, "%s://%s", m->https ? "https" : "http", listen);
        return spawn_musterd(m, *config ? config : NULL) > 0 ? 0 : -1;
}

void tu_musterd_stop(struct tu_musterd *m, int sig) {
        tu_musterd_stop_status(m, sig);
}

int tu_musterd_stop_status(struct tu_musterd *m, int sig) {
        if (m->pid <= 0)
                return -1;
        int pid = m->pid;
        m->pid = 0;
        /* Bounded: a musterd that ignores SIGTERM fails, it does not hang. */
        return tu_stop_pid(pid, sig, 30000);
}

void tu_musterd_free(struct tu_musterd *m) {
        tu_musterd_stop(m, SIGTERM);
#ifdef MUSTER_WITH_POSTGRES
        if (m->pg_db[0])
                tu_pg_drop(m->pg_db);
#endif
        free(m->state_dir);
        free(m->admin_token);
        free(m->log);
        free(m->admin_token_path);
        memset(m, 0, sizeof *m);
}

struct tu_buf {
        char *d;
        size_t n;
};

static size_t tu_sink(char *p, size_t sz, size_t nm, void *u) {
        struct tu_buf *b = u;
        char *d = realloc(b->d, b->n + sz * nm + 1);
        if (!d)
                return 0;
        b->d = d;
        memcpy(b->d + b->n, p, sz * nm);
        b->n += sz * nm;
        b->d[b->n] = '\0';
        return sz * nm;
}

static char tu_ca[4200];

/* With MUSTER_API_RECORD set (tests/tools/answers-checked sets it for each
 * integration suite), every answer tu_http_raw gets is appended as one JSON
 * line to DIR/PID.jsonl: the test's name, the method, the URL's path and
 * query, the status, the content type and the body (as JSON where it is
 * JSON, else only its length). tests/tools/openapi-answers then validates
 * each against openapi/muster.yaml. One writev(2) a line, O_APPEND: the
 * threads and forked tests of one suite never interleave inside a line. */
static void tu_record_answer(const char *method, const char *url, const struct tu_http_reply *r) {
        const char *dir = getenv("MUSTER_API_RECORD");
        if (!dir || !*dir)
                return;
        const char *p = strstr(url, "://");
        p = p ? strchr(p + 3, '/') : url;
        json_object *line = json_object_new_object();
        char test[512];
        snprintf(test, sizeof test, "%s/%s", criterion_current_suite ? criterion_current_suite->name : "?",
                 criterion_current_test ? criterion_current_test->name : "?");
        json_object_object_add(line, "test", json_object_new_string(test));
        json_object_object_add(line, "method", json_object_new_string(method));
        json_object_object_add(line, "path", json_object_new_string(p ? p : "/"));
        json_object_object_add(line, "status", json_object_new_int64(r->status));
        json_object_object_add(line, "ctype", json_object_new_string(r->ctype));
        json_object_object_add(line, "length", json_object_new_int64((int64_t) r->len));
        if (r->body && !strncmp(r->ctype, "application/json", 16)) {
                json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
                json_object *body = tok ? json_tokener_parse_ex(tok, r->body, (int) r->len) : NULL;
                bool whole = tok && json_tokener_get_error(tok) == json_tokener_success &&
                             json_tokener_get_parse_end(tok) == r->len;
                if (tok)
                        json_tokener_free(tok);
                if (whole)
                        json_object_object_add(line, "body", body);
                else {
                        json_object_put(body);
                        json_object_object_add(line, "body_not_json", json_object_new_boolean(1));
                }
        }
        const char *text = json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN);
        struct iovec iov[2] = { { (void *) text, strlen(text) }, { "\n", 1 } };
        char path[4300];
        snprintf(path, sizeof path, "%s/%ld.jsonl", dir, (long) getpid());
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 || writev(fd, iov, 2) != (ssize_t) (iov[0].iov_len + 1))
                fprintf(stderr, "testutil: could not record an answer in %s: %s\n", path, strerror(errno));
        if (fd >= 0)
                close(fd);
        json_object_put(line);
}

void tu_http_set_ca(const char *path) {
        snprintf(tu_ca, sizeof tu_ca, "%s", path ? path : "");
}

long tu_http_raw(const char *method, const char *url, const char *token, const char *ctype, const void *body,
                 size_t body_len, struct tu_http_reply *r) {
        CURL *c = curl_easy_init();
        struct curl_slist *h = NULL;
        struct tu_buf b = { 0 };
        char hdr[8300];
        *r = (struct tu_http_reply) { .curl = CURLE_FAILED_INIT, .content_length = -1 };
        if (!c)
                return 0;
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, tu_sink);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        if (tu_ca[0])
                curl_easy_setopt(c, CURLOPT_CAINFO, tu_ca);
        if (token) {
                snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", token);
                h = curl_slist_append(h, hdr);
        }
        if (ctype) {
                snprintf(hdr, sizeof hdr, "Content-Type: %s", ctype);
                h = curl_slist_append(h, hdr);
        }
        if (body) {
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) body_len);
        }
        h = curl_slist_append(h, "Expect:");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        r->curl = curl_easy_perform(c);
        if (r->curl == CURLE_OK) {
                char *ct = NULL;
                curl_off_t cl = -1;
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
                curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
                curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
                snprintf(r->ctype, sizeof r->ctype, "%s", ct ? ct : "");
                r->content_length = cl;
        }
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        r->body = b.d;
        r->len = b.n;
        if (r->curl == CURLE_OK)
                tu_record_answer(method, url, r);
        return r->status;
}

long tu_http(const char *method, const char *url, const char *token, const char *body, size_t body_len, char **out) {
        struct tu_http_reply r;
        long code = tu_http_raw(method, url, token, body ? "application/json" : NULL, body, body_len, &r);
        give(out, r.body);
        return code;
}

long tu_http_json(const char *method, const char *url, const char *token, const char *body, json_object **out) {
        char *text = NULL;
        long code = tu_http(method, url, token, body, body ? strlen(body) : 0, &text);
        if (out)
                *out = text ? json_tokener_parse(text) : NULL;
        free(text);
        return code;
}

json_object *tu_admin_get(const struct tu_musterd *m, const char *fmt, ...) {
        char path[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        json_object *o = NULL;
        long code = tu_http_json("GET", tu_url(m->base, "%s", path), m->admin_token, NULL, &o);
        cr_assert_eq(code, 200, "GET %s: %ld", path, code);
        return o;
}

char *tu_token(const struct tu_musterd *m, const char *role, const char *owner) {
        char body[256];
        json_object *o = NULL;
        snprintf(body, sizeof body, "{\"role\":\"%s\",\"owner\":\"%s\"}", role, owner);
        cr_assert_eq(tu_http_json("POST", tu_url(m->base, "/api/v2/tokens"), m->admin_token, body, &o), 201, "%s",
                     body);
        char *t = strdup(tu_jstr(o, "token"));
        json_object_put(o);
        return t;
}

long tu_create_infra_env(const char *base, const char *admin, const char *name, char **id, char **agent_token) {
        json_object *body = json_object_new_object(), *o = NULL;
        json_object_object_add(body, "name", json_object_new_string(name));
        long code = tu_http_json("POST", tu_url(base, "/api/v2/infra-envs"), admin, json_object_to_json_string(body), &o);
        const char *v;
        if (code == 201 && id)
                *id = (v = tu_jstr(o, "id")) ? strdup(v) : NULL;
        if (code == 201 && agent_token)
                *agent_token = (v = tu_jstr(o, "agent_token")) ? strdup(v) : NULL;
        json_object_put(o);
        json_object_put(body);
        return code;
}

char *tu_create(const char *base, const char *token, const char *path, const char *body, const char *key) {
        json_object *o = NULL;
        long code = tu_http_json("POST", tu_url(base, "%s", path), token, body, &o);
        cr_assert_eq(code, 201, "POST %s: %ld %s", path, code, o ? json_object_to_json_string(o) : "");
        const char *v = tu_jstr(o, key);
        cr_assert_not_null(v, "no \"%s\" in %s", key, json_object_to_json_string(o));
        char *copy = strdup(v);
        json_object_put(o);
        return copy;
}

long tu_step_result(const char *base, const char *ie, const char *tok, const char *host, const char *step_id,
                    const char *type, int exit_code, json_object *output, const char *error) {
        json_object *res = json_object_new_object();
        json_object_object_add(res, "step_id", json_object_new_string(step_id));
        json_object_object_add(res, "step_type", json_object_new_string(type));
        json_object_object_add(res, "exit_code", json_object_new_int(exit_code));
        if (output)
                json_object_object_add(res, "output", output);
        if (error)
                json_object_object_add(res, "error", json_object_new_string(error));
        long code = tu_http_json("POST", tu_url(base, "/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host), tok,
                                 json_object_to_json_string(res), NULL);
        json_object_put(res);
        return code;
}

long tu_create_cluster(const char *base, const char *token, const char *body, char **id) {
        json_object *o = NULL;
        long code = tu_http_json("POST", tu_url(base, "/api/v2/clusters"), token, body, &o);
        const char *v;
        if (code == 201 && id)
                *id = (v = tu_jstr(o, "id")) ? strdup(v) : NULL;
        json_object_put(o);
        return code;
}

const char *tu_url(const char *base, const char *fmt, ...) {
        static _Thread_local char buf[4][1024];
        static _Thread_local int i;
        char path[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(path, sizeof path, fmt, ap);
        va_end(ap);
        i = (i + 1) % 4;
        snprintf(buf[i], sizeof buf[i], "%s%s", base, path);
        return buf[i];
}

/* ---- processes under test (agent run) ------------------------------------ */

int tu_musterd_restart(struct tu_musterd *m, const char *config) {
        if (m->pid > 0 || !m->port || !m->state_dir)
                return -1;
        /* Up to 10 attempts: the old listener's port may linger briefly. */
        for (int attempt = 0; attempt < 10; attempt++) {
                int r = spawn_musterd(m, config);
                if (r < 0)
                        return -1;
                if (r > 0)
                        return 0;
                tu_sleep_ms(200);
        }
        return -1;
}

int tu_spawn(const char *const argv[], const char *log_path) {
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int r;
        char tmp[4096];
        bool own = !log_path;
        struct stat st;

        if (own) {
                /* The output is scanned when it ends: a file of its own. */
                const char *t = getenv("TMPDIR");
                snprintf(tmp, sizeof tmp, "%s/muster-proc.XXXXXX", t && *t ? t : "/tmp");
                int fd = mkostemp(tmp, O_CLOEXEC);
                if (fd < 0)
                        return -1;
                close(fd);
                log_path = tmp;
        }
        long start = stat(log_path, &st) == 0 ? (long) st.st_size : 0;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        r = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *) argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0) {
                if (own)
                        unlink(tmp);
                return -1;
        }
        proc_add((int) pid, argv, log_path, own, start);
        return (int) pid;
}

/* waitpid for up to timeout_ms: the status, -1 if still running, -2 if
 * it is no child of ours (reaped already). No checks. */
static int wait_raw(int pid, int timeout_ms) {
        for (int waited = 0;; waited += 20) {
                int st;
                pid_t r = waitpid(pid, &st, WNOHANG);
                if (r == pid)
                        return tu_status(st);
                if (r < 0 && errno != EINTR)
                        return -2;
                if (waited >= timeout_ms)
                        return -1;
                tu_sleep_ms(20);
        }
}

static int kill_wait_raw(int pid, int sig) {
        int st;
        kill(pid, sig);
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -1;
        return tu_status(st);
}

int tu_wait_pid(int pid, int timeout_ms) {
        int st = wait_raw(pid, timeout_ms);
        if (st >= 0)
                proc_reaped(pid, st, 0, false);
        return st >= 0 ? st : -1;
}

int tu_kill_wait(int pid, int sig) {
        if (pid <= 0)
                return -1;
        int st = kill_wait_raw(pid, sig);
        if (st >= 0)
                proc_reaped(pid, st, sig, false);
        return st;
}

int tu_stop_pid(int pid, int sig, int timeout_ms) {
        if (pid <= 0)
                return -1;
        if (wait_raw(pid, 0) == -2)
                return -1; /* not ours (any more): signal no stranger */
        kill(pid, sig);
        int st = wait_raw(pid, timeout_ms);
        bool escalated = st == -1 && sig != SIGKILL;
        if (st == -1)
                st = kill_wait_raw(pid, SIGKILL);
        if (st >= 0)
                proc_reaped(pid, st, sig, escalated);
        return st;
}

int tu_stop(int *pid, int sig) {
        int p = *pid;
        *pid = -1;
        return tu_stop_pid(p, sig, 10000);
}

/* ---- hosts as the API shows them ----------------------------------------- */

bool tu_status_is(json_object *host, const void *status) {
        const char *s = tu_jstr(host, "status");
        return s && strcmp(s, status) == 0;
}

json_object *tu_wait_host(const struct tu_musterd *m, const char *ie, const char *host_id, tu_host_pred pred,
                          const void *arg, int timeout_ms, const char *what) {
        int64_t deadline = tu_mono_ms() + timeout_ms;
        json_object *h = NULL;
        for (;;) {
                json_object_put(h);
                h = NULL;
                if (tu_http_json("GET", tu_url(m->base, "/api/v2/infra-envs/%s/hosts/%s", ie, host_id), m->admin_token,
                                 NULL, &h) != 200) {
                        json_object_put(h);
                        h = NULL;
                }
                if (h && pred(h, arg))
                        return h;
                if (tu_mono_ms() > deadline)
                        break;
                tu_sleep_ms(200);
        }
        /* What matters first (Criterion cuts long messages): the state. */
        const char *st = h ? tu_jstr(h, "status") : NULL, *info = h ? tu_jstr(h, "status_info") : NULL;
        json_object *prog = h ? tu_json_get(h, "progress") : NULL;
        cr_assert_fail("host %s never became %s: status %s (%s), progress %s, checked in at %s", host_id, what,
                       st ? st : "(not registered)", info ? info : "-",
                       prog ? json_object_to_json_string_ext(prog, JSON_C_TO_STRING_PLAIN) : "-",
                       h && tu_jstr(h, "checked_in_at") ? tu_jstr(h, "checked_in_at") : "-");
        return NULL;
}

bool tu_applied(json_object *host, const void *rev) {
        json_object *a = tu_json_get(host, "applied_revision");
        return a && json_object_get_int64(a) == *(const int64_t *) rev;
}

bool tu_written(json_object *host, const void *unused) {
        (void) unused;
        const char *status = tu_jstr(host, "status"), *stage = tu_jstr(host, "progress.stage"),
                   *info = tu_jstr(host, "progress.info");
        return status && strcmp(status, "installing-in-progress") == 0 && stage && strcmp(stage, "rebooting") == 0 &&
               info && strstr(info, " written; waiting for the installed system");
}

json_object *tu_wait_cluster(const struct tu_musterd *m, const char *id, tu_host_pred pred, const void *arg,
                             int timeout_ms, const char *what) {
        int64_t deadline = tu_mono_ms() + timeout_ms;
        json_object *c = NULL;
        for (;;) {
                json_object_put(c);
                c = tu_admin_get(m, "/api/v2/clusters/%s", id);
                if (pred(c, arg))
                        return c;
                if (tu_mono_ms() > deadline)
                        break;
                tu_sleep_ms(200);
        }
        cr_assert_fail("cluster %s never became %s: %s", id, what,
                       json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN));
        return NULL;
}

/* ---- fixtures ------------------------------------------------------------- */

void tu_release_build(const char *src, const char *out_dir) {
        tu_must("bash %s/../make-release.sh %s %s", src, src, out_dir);
}

/* A whole file (malloc'd, NUL-terminated); the test fails if unreadable. */
static char *read_whole(const char *path) {
        char *buf = tu_read_file(path, NULL);
        cr_assert_not_null(buf, "%s", path);
        return buf;
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

json_object *tu_release_json(const char *rdir) {
        static const char image[] = "path: os.img";
        char path[4096];
        snprintf(path, sizeof path, "%s/release.yaml", rdir);
        char *y = read_whole(path), *p = strstr(y, image), *abs;
        cr_assert_not_null(p, "%s has %s", path, image);
        *p = '\0';
        cr_assert_geq(asprintf(&abs, "%spath: %s/os.img%s", y, rdir, p + strlen(image)), 0);
        free(y);
        json_object *o = json_object_new_object(), *files = json_object_new_array();
        json_object_object_add(o, "release_yaml", json_object_new_string(abs));
        free(abs);
        DIR *d = opendir(rdir);
        cr_assert_not_null(d, "%s", rdir);
        char *names[64];
        size_t n = 0;
        for (struct dirent *e; (e = readdir(d));) {
                const char *dot = strrchr(e->d_name, '.');
                if (!dot || strcmp(e->d_name, "release.yaml") == 0 ||
                    (strcmp(dot, ".yaml") && strcmp(dot, ".yml") && strcmp(dot, ".json")))
                        continue;
                cr_assert_lt(n, 64, "at most 64 files in %s", rdir);
                names[n++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmp_names);
        for (size_t i = 0; i < n; i++) {
                snprintf(path, sizeof path, "%s/%s", rdir, names[i]);
                char *text = read_whole(path);
                json_object *f = json_object_new_object();
                json_object_object_add(f, "name", json_object_new_string(names[i]));
                json_object_object_add(f, "content", json_object_new_string(text));
                json_object_array_add(files, f);
                free(text);
                free(names[i]);
        }
        json_object_object_add(o, "files", files);
        return o;
}

long tu_release_import(const char *base, const char *token, const char *release_dir, json_object **out) {
        json_object *body = tu_release_json(release_dir);
        long code = tu_http_json("POST", tu_url(base, "/api/v2/releases"), token,
                                 json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN), out);
        json_object_put(body);
        return code;
}

void tu_fixture_variant(const char *root, const char *out, const char *address, const char *hostname,
                        const char *mac) {
        char line[256];
        tu_must("cp -a %s %s", root, out);
        tu_must("sed -i \\#/dev/vda#d %s/proc/self/mountinfo", out);
        tu_must("sed -i s/192\\.0\\.2\\.2$/%s/ %s/proc/net/fib_trie", address, out);
        snprintf(line, sizeof line, "%s\n", hostname);
        cr_assert_eq(tu_write_file(out, "proc/sys/kernel/hostname", line), 0);
        snprintf(line, sizeof line, "%s\n", mac);
        cr_assert_eq(tu_write_file(out, "sys/class/net/eth0/address", line), 0);
}

/* ---- network namespaces ----------------------------------------------------- */

void tu_fabric_up(struct tu_fabric *f, const char *prefix, const char *coord_addr) {
        memset(f, 0, sizeof *f);
        snprintf(f->prefix, sizeof f->prefix, "%s", prefix);
        snprintf(f->coord, sizeof f->coord, "%sc%d", prefix, (int) (getpid() % 100000));
        tu_must("ip netns add %s", f->coord);
        tu_must("ip -n %s link set lo up", f->coord);
        tu_must("ip -n %s link add br0 type bridge", f->coord);
        tu_must("ip -n %s addr add %s/24 dev br0", f->coord, coord_addr);
        tu_must("ip -n %s link set br0 up", f->coord);
}

int tu_fabric_add(struct tu_fabric *f, const char *address, const char *mac) {
        cr_assert_lt(f->n, TU_FABRIC_MAX);
        int i = f->n++;
        char *ns = f->node[i];
        snprintf(ns, sizeof f->node[i], "%sa%d-%d", f->prefix, i, (int) (getpid() % 100000));
        tu_must("ip netns add %s", ns);
        tu_must("ip -n %s link set lo up", ns);
        tu_must("ip -n %s link add p%d type veth peer name eth0 netns %s", f->coord, i, ns);
        tu_must("ip -n %s link set p%d master br0 up", f->coord, i);
        tu_must("ip -n %s link set eth0 address %s", ns, mac);
        tu_must("ip -n %s addr add %s/24 dev eth0", ns, address);
        tu_must("ip -n %s link set eth0 up", ns);
        return i;
}

int tu_fabric_spawn(const struct tu_fabric *f, int i, const char *hosts, const char *resolv, const char *const *argv,
                    const char *log) {
        const char *v[64] = { "ip", "netns", "exec", f->node[i], "sh", "-c",
                              "mount --bind \"$0\" /etc/hosts && "
                              "if [ -n \"$1\" ]; then mount --bind \"$1\" /etc/resolv.conf || exit 1; fi && "
                              "shift && exec \"$@\"",
                              hosts, resolv ? resolv : "" };
        int n = 9;
        for (; *argv && n < 63; argv++)
                v[n++] = *argv;
        v[n] = NULL;
        return tu_spawn(v, log);
}

void tu_fabric_down(struct tu_fabric *f) {
        for (int i = 0; i < TU_FABRIC_MAX; i++)
                if (f->node[i][0])
                        tu_runf(NULL, NULL, "ip netns del %s", f->node[i]);
        if (f->coord[0])
                tu_runf(NULL, NULL, "ip netns del %s", f->coord);
        memset(f, 0, sizeof *f);
}

/* ---- end to end: musterd and real agents on a fabric -------------------------- */

char *tu_e2e_up(struct tu_fabric *f, const char *prefix, const char *coord_addr, const struct tu_node *nodes, int n) {
        char *dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        tu_fabric_up(f, prefix, coord_addr);
        for (int i = 0; i < n; i++)
                tu_fabric_add(f, nodes[i].address, nodes[i].mac);
        cr_assert_eq(tu_enter_netns(f->coord), 0);
        return dir;
}

int tu_e2e_agent(const struct tu_fabric *f, const struct tu_node *nodes, int i, const char *dir,
                 const struct tu_agent_run *r) {
        const struct tu_node *node = &nodes[i];
        bool run = strcmp(r->mode, "run") == 0;
        char root[4096], log[4200], hosts[4200], resolv[4200];
        snprintf(root, sizeof root, "%s/%s-root", dir, node->name);
        struct stat st;
        if (run && stat(root, &st) != 0)
                tu_fixture_variant(r->machine, root, node->address, node->name, node->mac);
        snprintf(log, sizeof log, "%s/%s-%s.log", dir, node->name, r->mode);
        snprintf(hosts, sizeof hosts, "%s/hosts", dir);
        snprintf(resolv, sizeof resolv, "%s/resolv.conf", dir);
        const char *argv[40] = { tu_agent_path(), r->mode, "--coordinator", r->coordinator, "--infra-env",
                                 r->infra_env, "--token-file", r->token_file, "--host-id", node->host_id,
                                 "--coordinator-key", r->key_file };
        int n = 12;
        if (run) {
                argv[n++] = "--sysroot";
                argv[n++] = root;
        }
        for (const char *const *e = r->extra; e && *e && n < 39; e++)
                argv[n++] = *e;
        argv[n] = NULL;
        int pid = tu_fabric_spawn(f, i, hosts, resolv, argv, log);
        cr_assert_gt(pid, 0, "spawn %s", node->name);
        return pid;
}

char *tu_e2e_infra_env(const struct tu_musterd *m, const char *name, const char *dir, int *sntpd, const char *more) {
        char *ie, *agent_token, addr[64], source[64], *body;
        cr_assert_eq(tu_create_infra_env(m->base, m->admin_token, name, &ie, &agent_token), 201);
        /* m->base is "http://ADDR:PORT". */
        const char *host = m->base + strlen("http://");
        snprintf(addr, sizeof addr, "%.*s", (int) (strrchr(host, ':') - host), host);
        tu_stop(sntpd, SIGTERM);
        cr_assert_gt(*sntpd = tu_sntpd_start(NULL, addr, dir, source), 0, "the SNTP server started");
        cr_assert_geq(asprintf(&body, "{\"ntp_sources\":[\"%s\"]%s%s}", source, more ? "," : "", more ? more : ""), 0);
        cr_assert_eq(tu_http_json("PATCH", tu_url(m->base, "/api/v2/infra-envs/%s", ie), m->admin_token, body, NULL),
                     200, "%s", body);
        free(body);
        cr_assert_eq(tu_write_file(dir, "agent.token", agent_token), 0);
        free(agent_token);
        return ie;
}

int tu_e2e_c1_names(const char *dir, const char *coord_addr) {
        cr_assert_eq(tu_write_file(dir, "hosts",
                                   "127.0.0.1 localhost\n"
                                   "192.0.2.100 api.c1.example.test api-int.c1.example.test\n"), 0);
        int pid = tu_dnsd_start(coord_addr, dir, "*.apps.c1.example.test 192.0.2.101\n");
        cr_assert_gt(pid, 0, "the DNS server started");
        return pid;
}

void tu_require_pg_store(void) {
        const char *store = getenv("MUSTER_TEST_STORE");
        cr_assert(store && strcmp(store, "postgres") == 0,
                  "replicas share a PostgreSQL store: run through scripts/with-pg-test-server with "
                  "MUSTER_TEST_STORE=postgres");
}

void tu_e2e_down(struct tu_fabric *f, struct tu_musterd *m, int *pids, int n, int *sntpd, int *dnsd, char **dir) {
        for (int i = 0; i < n; i++) {
                if (pids[i] > 0)
                        kill(pids[i], SIGCONT);
                tu_stop(&pids[i], SIGTERM);
        }
        tu_stop(sntpd, SIGTERM);
        tu_stop(dnsd, SIGTERM);
        tu_stop(&m->pid, SIGTERM);
        tu_fabric_down(f);
        tu_musterd_free(m);
        if (!*dir)
                return;
        const char *const umount_left[] = {
                "sh", "-c", "grep -o \" $0[^ ]*\" /proc/self/mounts | xargs -r -n1 umount -l", *dir, NULL
        };
        int status;
        free(tu_run(umount_left, &status, NULL));
        tu_rm_rf(*dir);
        free(*dir);
        *dir = NULL;
}

/* ---- musterctl ---------------------------------------------------------------- */

void tu_ctl_clean_env(void) {
        unsetenv("MUSTER_TOKEN");
        unsetenv("MUSTER_TOKEN_FILE");
        unsetenv("MUSTER_SERVER");
        unsetenv("COLUMNS");
}

const char *tu_ctl_path(void) {
        const char *p = getenv("MUSTERCTL");
        cr_assert(p && *p, "MUSTERCTL names the built musterctl");
        return p;
}

/* argv = musterctl --server SERVER --token-file TOKEN_FILE ARGS...; the
 * argument count. */
static int ctl_argv(const char *argv[64], const char *server, const char *token_file, const char *const *args) {
        int n = 0;
        argv[n++] = tu_ctl_path();
        argv[n++] = "--server";
        argv[n++] = server;
        argv[n++] = "--token-file";
        argv[n++] = token_file;
        for (; *args && n < 63; args++)
                argv[n++] = *args;
        argv[n] = NULL;
        return n;
}

int tu_ctl(char **out, char **err, const char *server, const char *token_file, const char *const *args) {
        const char *argv[64];
        int n = ctl_argv(argv, server, token_file, args);
        int status = -1;
        char *e = NULL;
        char *o = tu_run(argv, &status, &e);
        cr_assert_not_null(o, "musterctl ran");
        /* Failures exit 1 too: the sanitizers are told by what they print. */
        cr_assert_neq(status, 23, "LeakSanitizer found leaks in musterctl:\n%s", e ? e : "");
        if (e && (strstr(e, "Sanitizer") || strstr(e, "runtime error:")))
                cr_assert_fail("a sanitizer spoke in musterctl %s:\n%s", n > 5 ? argv[5] : "", e);
        give(out, o);
        give(err, e);
        return status;
}

int tu_ctl_admin(char **out, const struct tu_musterd *m, const char *const *args) {
        char *o = NULL, *err = NULL;
        int status = tu_ctl(&o, &err, m->base, m->admin_token_path, args);
        if (status != 0)
                cr_log_info("musterctl %s %s -> %d: %s%s", args[0], args[1] ? args[1] : "", status, o, err ? err : "");
        free(err);
        if (out)
                *out = o;
        else
                free(o);
        return status;
}

json_object *tu_ctl_json(const struct tu_musterd *m, const char *const *args) {
        const char *argv[59] = { "-o", "json" };
        int n = 2;
        for (; *args && n < 58; args++)
                argv[n++] = *args;
        argv[n] = NULL;
        char *out = NULL;
        int status = tu_ctl_admin(&out, m, argv);
        cr_assert_eq(status, 0, "musterctl -o json %s %s: exit %d", argv[2], argv[3] ? argv[3] : "", status);
        json_object *o = json_tokener_parse(out);
        cr_assert_not_null(o, "-o json prints JSON:\n%s", out);
        free(out);
        return o;
}

int tu_ctl_spawn(const char *server, const char *token_file, const char *const *args, int *out_fd) {
        const char *argv[64];
        int p[2];
        ctl_argv(argv, server, token_file, args);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        /* Its stderr goes to a log of its own, read when it is reaped. */
        char log[4096];
        const char *t = getenv("TMPDIR");
        snprintf(log, sizeof log, "%s/muster-proc.XXXXXX", t && *t ? t : "/tmp");
        int lfd = mkostemp(log, O_CLOEXEC);
        cr_assert_geq(lfd, 0, "%s: %s", log, strerror(errno));
        close(lfd);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, p[1], 1);
        posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_APPEND, 0);
        posix_spawnattr_t at;
        sigset_t def, none;
        posix_spawnattr_init(&at);
        sigemptyset(&def);
        sigaddset(&def, SIGINT);
        sigaddset(&def, SIGTERM);
        posix_spawnattr_setsigdefault(&at, &def);
        sigemptyset(&none);
        posix_spawnattr_setsigmask(&at, &none);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
        pid_t pid;
        cr_assert_eq(posix_spawn(&pid, argv[0], &fa, &at, (char *const *) argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        close(p[1]);
        const char *name[] = { "musterctl", args[0], NULL };
        proc_add((int) pid, name, log, true, 0);
        *out_fd = p[0];
        return pid;
}

bool tu_read_until(int fd, char **buf, size_t *len, const char *needle, int timeout_ms) {
        int64_t deadline = tu_mono_ms() + timeout_ms;
        for (;;) {
                if (*buf && strstr(*buf, needle))
                        return true;
                int64_t left = deadline - tu_mono_ms();
                if (left <= 0)
                        return false;
                struct pollfd p = { fd, POLLIN, 0 };
                int r = poll(&p, 1, (int) left);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        return false;
                char chunk[4096];
                ssize_t k = read(fd, chunk, sizeof chunk);
                if (k <= 0)
                        return *buf && strstr(*buf, needle);
                char *b = realloc(*buf, *len + (size_t) k + 1);
                cr_assert_not_null(b);
                *buf = b;
                memcpy(*buf + *len, chunk, (size_t) k);
                *len += (size_t) k;
                (*buf)[*len] = '\0';
        }
}

void tu_assert_fits(const char *s, const char *token) {
        const char *p = s;
        while (*p) {
                size_t n = strcspn(p, "\n"), w = 0;
                for (size_t i = 0; i < n; i++)
                        if (((unsigned char) p[i] & 0xC0) != 0x80)
                                w++;
                bool is_token = token && n == strlen(token) && strncmp(p, token, n) == 0;
                cr_assert(w <= 80 || is_token, "a line of %zu columns:\n%.*s\nin:\n%s", w, (int) n, p, s);
                p += n;
                if (*p)
                        p++;
        }
}

void tu_ctl_assert_fits(const char *server, const char *token_file, const char *const *args) {
        char *out = NULL, *err = NULL;
        setenv("COLUMNS", "80", 1);
        int st = tu_ctl(&out, &err, server, token_file, args);
        unsetenv("COLUMNS");
        cr_assert_eq(st, 0, "musterctl %s %s with COLUMNS=80: exit %d\n%s%s", args[0], args[1] ? args[1] : "", st, out,
                     err ? err : "");
        tu_assert_fits(out, NULL);
        free(out);
        free(err);
}

/* ---- an SNTP server for real agents ------------------------------------- */

/* A test server (sntpd, dnsd) started and waited for: it writes "ready"
 * to its log once it listens (within 5 s). Its pid, or -1 (stopped). */
static int spawn_until_ready(const char *const *argv, const char *log) {
        int pid = tu_spawn(argv, log);
        if (pid < 0)
                return -1;
        for (int i = 0; i < 250; i++) {
                size_t n;
                char *text = tu_read_file(log, &n);
                bool ready = text && strstr(text, "ready\n");
                free(text);
                if (ready)
                        return pid;
                if (wait_raw(pid, 0) != -1)
                        break;
                tu_sleep_ms(20);
        }
        (void) tu_stop(&pid, SIGKILL);
        return -1;
}

int tu_dnsd_start(const char *addr, const char *dir, const char *zone) {
        const char *bin = getenv("MUSTER_TEST_DNSD");
        char listen[64], log[4096], zone_path[4096], resolv[256];
        if (!bin || !*bin || tu_write_file(dir, "dns.zone", zone) < 0)
                return -1;
        snprintf(resolv, sizeof resolv, "nameserver %s\noptions timeout:1 attempts:2\n", addr);
        if (tu_write_file(dir, "resolv.conf", resolv) < 0)
                return -1;
        snprintf(listen, sizeof listen, "%s:53", addr);
        snprintf(log, sizeof log, "%s/dnsd.log", dir);
        snprintf(zone_path, sizeof zone_path, "%s/dns.zone", dir);
        const char *argv[] = { bin, "--listen", listen, "--zone", zone_path, NULL };
        return spawn_until_ready(argv, log);
}

int tu_sntpd_start(const char *netns, const char *addr, const char *dir, char source[64]) {
        const char *bin = getenv("MUSTER_TEST_SNTPD");
        char listen[64], log[4096];
        if (!bin || !*bin)
                return -1;
        /* A free UDP port: in a fresh namespace every port is; on loopback,
         * ask the kernel for one. */
        unsigned port = 0;
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        if (fd >= 0 && bind(fd, (struct sockaddr *) &a, sizeof a) == 0 &&
            getsockname(fd, (struct sockaddr *) &a, &len) == 0)
                port = ntohs(a.sin_port);
        if (fd >= 0)
                close(fd);
        if (!port)
                return -1;
        snprintf(listen, sizeof listen, "%s:%u", addr, port);
        snprintf(log, sizeof log, "%s/sntpd-%u.log", dir, port);
        const char *plain[] = { bin, "--listen", listen, NULL };
        const char *in_ns[] = { "ip", "netns", "exec", netns, bin, "--listen", listen, NULL };
        int pid = spawn_until_ready(netns ? in_ns : plain, log);
        if (pid > 0)
                snprintf(source, 64, "%s", listen);
        return pid;
}

char *tu_agent_conf_token(const char *conf_path) {
        char *conf = tu_read_file(conf_path, NULL);
        char *tk = conf ? strstr(conf, "\ntoken = ") : NULL;
        char *out = NULL;
        if (tk) {
                tk += strlen("\ntoken = ");
                tk[strcspn(tk, "\r\n")] = '\0';
                out = strdup(tk);
        }
        free(conf);
        return out;
}

void tu_tamper_stored_payload(const struct tu_musterd *m, const char *cluster_id, long revision, const char *from,
                              const char *to) {
#ifdef MUSTER_WITH_POSTGRES
        if (m->pg_db[0]) {
                char url[4400], rev[32];
                tu_pg_url(m->pg_db, url, sizeof url);
                /* libpq takes the URL, less our own pool=, which it has not. */
                PGconn *c = PQconnectdb(url);
                cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
                snprintf(rev, sizeof rev, "%ld", revision);
                const char *params[] = { cluster_id, rev, from, to };
                PGresult *r = PQexecParams(c,
                                           "UPDATE payload_revisions SET canonical = replace(canonical, $3, $4) "
                                           "WHERE cluster_id = $1 AND revision = $2::bigint",
                                           4, NULL, params, NULL, NULL, 0);
                cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s", PQerrorMessage(c));
                cr_assert_str_eq(PQcmdTuples(r), "1", "one payload row changed");
                PQclear(r);
                PQfinish(c);
                return;
        }
#endif
        char db[4200];
        snprintf(db, sizeof db, "%s/muster.db", m->state_dir);
        sqlite3 *s;
        cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
        sqlite3_stmt *st;
        cr_assert_eq(sqlite3_prepare_v2(s,
                                        "UPDATE payload_revisions SET canonical = replace(canonical, ?3, ?4) "
                                        "WHERE cluster_id = ?1 AND revision = ?2",
                                        -1, &st, NULL),
                     SQLITE_OK, "%s", sqlite3_errmsg(s));
        sqlite3_bind_text(st, 1, cluster_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, revision);
        sqlite3_bind_text(st, 3, from, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, to, -1, SQLITE_STATIC);
        cr_assert_eq(sqlite3_step(st), SQLITE_DONE, "%s", sqlite3_errmsg(s));
        cr_assert_eq(sqlite3_changes(s), 1, "one payload row changed");
        sqlite3_finalize(st);
        sqlite3_close(s);
}

void tu_store_exec(const char *url, const char *sql) {
#ifdef MUSTER_WITH_POSTGRES
        if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
                PGconn *c = PQconnectdb(url);
                cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
                PGresult *r = PQexec(c, sql);
                cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(c));
                PQclear(r);
                PQfinish(c);
                return;
        }
#endif
        const char *path = strncmp(url, "sqlite://", 9) == 0 ? url + 9 : strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url;
        sqlite3 *s;
        cr_assert_eq(sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK, "%s", path);
        char *err = NULL;
        cr_assert_eq(sqlite3_exec(s, sql, NULL, NULL, &err), SQLITE_OK, "%s: %s", sql, err ? err : "?");
        sqlite3_close(s);
}

json_object *tu_find_by(json_object *arr, const char *key, const char *value) {
        for (size_t i = 0; json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                const char *v = tu_jstr(e, key);
                if (v && strcmp(v, value) == 0)
                        return e;
        }
        return NULL;
}

void tu_ctl_assert_help(const struct tu_musterd *m, const char *const (*cmds)[2], size_t n) {
        char *out = NULL;
        cr_assert_eq(tu_ctl(&out, NULL, m->base, m->admin_token_path, (const char *const[]) { "--help", NULL }), 0);
        tu_assert_fits(out, NULL);
        for (size_t i = 0; i < n; i++) {
                char want[128];
                snprintf(want, sizeof want, "%s %s", cmds[i][0], cmds[i][1]);
                cr_assert(strstr(out, want), "musterctl --help lists %s:\n%s", want, out);
        }
        free(out);
        for (size_t i = 0; i < n; i++) {
                char want[128];
                cr_assert_eq(tu_ctl(&out, NULL, m->base, m->admin_token_path,
                                    (const char *const[]) { cmds[i][0], cmds[i][1], "--help", NULL }),
                             0, "%s %s --help", cmds[i][0], cmds[i][1]);
                snprintf(want, sizeof want, "Usage: musterctl %s %s", cmds[i][0], cmds[i][1]);
                cr_assert(strstr(out, want), "%s", out);
                tu_assert_fits(out, NULL);
                free(out);
        }
}

#ifdef MUSTER_WITH_POSTGRES
/* A statement on MUSTER_TEST_PG's maintenance database. */
static void pg_admin(const char *sql) {
        const char *info = getenv("MUSTER_TEST_PG");
        cr_assert(info && *info, "MUSTER_TEST_PG is not set: run the suite through scripts/with-pg-test-server");
        PGconn *c = PQconnectdb(info);
        cr_assert_eq(PQstatus(c), CONNECTION_OK, "MUSTER_TEST_PG=%s: %s", info, PQerrorMessage(c));
        PGresult *r = PQexec(c, sql);
        cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
}

void tu_pg_database(char *out, size_t n, char *db, size_t db_n) {
        static unsigned made;
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        snprintf(db, db_n, "t_%d_%ld_%ld_%u", (int) getpid(), (long) t.tv_sec, t.tv_nsec, made++);
        char sql[256];
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
        pg_admin(sql);
        tu_pg_url(db, out, n);
}

void tu_pg_url(const char *db, char *out, size_t n) {
        /* The server's socket folder and port, from the connection string. */
        char *err = NULL;
        PQconninfoOption *opts = PQconninfoParse(getenv("MUSTER_TEST_PG"), &err);
        cr_assert_not_null(opts, "MUSTER_TEST_PG: %s", err ? err : "?");
        const char *host = NULL, *port = NULL, *user = NULL;
        for (PQconninfoOption *o = opts; o->keyword; o++) {
                if (strcmp(o->keyword, "host") == 0)
                        host = o->val;
                else if (strcmp(o->keyword, "port") == 0)
                        port = o->val;
                else if (strcmp(o->keyword, "user") == 0)
                        user = o->val;
        }
        cr_assert(host && port && user, "MUSTER_TEST_PG needs host, port and user");
        snprintf(out, n, "postgres://%s@/%s?host=%s&port=%s", user, db, host, port);
        PQconninfoFree(opts);
}

long tu_pg_count(const char *sql) {
        PGconn *c = PQconnectdb(getenv("MUSTER_TEST_PG"));
        cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
        PGresult *r = PQexec(c, sql);
        cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
        cr_assert_eq(PQntuples(r), 1, "%s", sql);
        long n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
        PQfinish(c);
        return n;
}

void tu_pg_drop(const char *db) {
        char sql[256];
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
        pg_admin(sql);
}
#endif

/* ---- an HTTP CONNECT proxy on loopback ------------------------------------------ */

#define PROXY_IDLE_MS 100

struct proxy_tunnel {
        struct tu_proxy *p;
        int fd;
};

/* fd ends when it reads EOF or the proxy stops; relays a <-> b. */
static void proxy_relay(struct tu_proxy *p, int a, int b) {
        char buf[16384];
        struct pollfd pf[2] = { { .fd = a, .events = POLLIN }, { .fd = b, .events = POLLIN } };
        while (!atomic_load(&p->stop)) {
                int n = poll(pf, 2, PROXY_IDLE_MS);
                if (n < 0 && errno != EINTR)
                        return;
                for (int i = 0; n > 0 && i < 2; i++) {
                        if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        ssize_t k = read(pf[i].fd, buf, sizeof buf);
                        if (k <= 0)
                                return;
                        for (ssize_t off = 0; off < k;) {
                                ssize_t w = write(pf[1 - i].fd, buf + off, (size_t) (k - off));
                                if (w <= 0)
                                        return;
                                off += w;
                        }
                }
        }
}

/* One client: "CONNECT 127.0.0.1:PORT HTTP/1.1" (loopback only), then a
 * tunnel; anything else is answered 405 and closed. */
static void *proxy_conn_main(void *arg) {
        struct proxy_tunnel *t = arg;
        struct tu_proxy *p = t->p;
        char head[8192];
        size_t n = 0;
        int up = -1;
        while (n < sizeof head - 1 && !strstr(head, "\r\n\r\n")) {
                struct pollfd pf = { .fd = t->fd, .events = POLLIN };
                if (atomic_load(&p->stop) || poll(&pf, 1, 5000) <= 0)
                        goto out;
                ssize_t k = read(t->fd, head + n, sizeof head - 1 - n);
                if (k <= 0)
                        goto out;
                n += (size_t) k;
                head[n] = '\0';
        }
        unsigned port = 0;
        char host[64] = "";
        if (sscanf(head, "CONNECT %63[^:]:%u HTTP/1.", host, &port) != 2 || strcmp(host, "127.0.0.1") != 0 ||
            port == 0 || port > 65535) {
                static const char no[] = "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n";
                atomic_fetch_add(&p->refused, 1);
                (void) !write(t->fd, no, sizeof no - 1);
                goto out;
        }
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        inet_pton(AF_INET, host, &a.sin_addr);
        up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (up < 0 || connect(up, (struct sockaddr *) &a, sizeof a) < 0) {
                static const char bad[] = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";
                (void) !write(t->fd, bad, sizeof bad - 1);
                goto out;
        }
        atomic_fetch_add(&p->connects, 1);
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        if (write(t->fd, ok, sizeof ok - 1) != (ssize_t) sizeof ok - 1)
                goto out;
        proxy_relay(p, t->fd, up);
out:
        if (up >= 0)
                close(up);
        close(t->fd);
        free(t);
        return NULL;
}

static void *proxy_main(void *arg) {
        struct tu_proxy *p = arg;
        while (!atomic_load(&p->stop)) {
                struct pollfd pf = { .fd = p->lfd, .events = POLLIN };
                if (poll(&pf, 1, PROXY_IDLE_MS) <= 0)
                        continue;
                int fd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        continue;
                struct proxy_tunnel *t = malloc(sizeof *t);
                if (!t || p->n_threads >= TU_PROXY_MAX_CONNS) {
                        free(t);
                        close(fd);
                        continue;
                }
                *t = (struct proxy_tunnel) { p, fd };
                if (pthread_create(&p->threads[p->n_threads], NULL, proxy_conn_main, t) != 0) {
                        free(t);
                        close(fd);
                        continue;
                }
                p->n_threads++;
        }
        return NULL;
}

int tu_proxy_start(struct tu_proxy *p) {
        memset(p, 0, sizeof *p);
        p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        if (p->lfd < 0 || bind(p->lfd, (struct sockaddr *) &a, sizeof a) < 0 || listen(p->lfd, 64) < 0 ||
            getsockname(p->lfd, (struct sockaddr *) &a, &len) < 0) {
                if (p->lfd >= 0)
                        close(p->lfd);
                p->lfd = -1;
                return -1;
        }
        p->port = ntohs(a.sin_port);
        if (pthread_create(&p->thread, NULL, proxy_main, p) != 0) {
                close(p->lfd);
                p->lfd = -1;
                return -1;
        }
        p->running = true;
        return 0;
}

void tu_proxy_stop(struct tu_proxy *p) {
        if (!p->running)
                return;
        atomic_store(&p->stop, true);
        pthread_join(p->thread, NULL);
        for (int i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);
        close(p->lfd);
        p->lfd = -1;
        p->running = false;
}
