/* libcurl is dlopen()ed by `muster-agent run` and `node`, not linked
 * (agent/curlload.h): the binary does not need it, names it in its
 * .note.dlopen ELF note, and with libcurl's file hidden — /dev/null (or a
 * library that is no libcurl) bound over it in a private mount namespace, no
 * switch in the agent — run and node stop at once with exit status 2 and a
 * message that says how to fix it, while inventory, --version and --help
 * work as before. That the dlopen()ed libcurl talks to a real musterd is
 * test_agent_run_musterd's and test_https's. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "testutil.h"

#define FIXTURE MUSTER_FIXTURES_DIR "/qemu-q35/root"
#define INFRA_ENV "6d757374-6572-4071-8335-0000000000aa"
#define EXIT_USAGE 2  /* RUN_EXIT_USAGE: also "libcurl missing" */

static char *dir;

static void up(void) {
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        cr_assert_eq(tu_write_file(dir, "token", "tok.en\n"), 0);
        cr_assert_eq(tu_write_file(dir, "cmdline", ""), 0);
}

static void down(void) {
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(agent_curl, .init = up, .fini = down, .timeout = 120);

/* ---- the binary --------------------------------------------------------- */

Test(agent_curl, binary_does_not_need_libcurl) {
        char *out = NULL, *err = NULL;
        int st = tu_runf(&out, &err, "readelf -d %s", tu_agent_path());
        cr_assert_eq(st, 0, "readelf -d: %s", err ? err : "");
        /* json-c is needed: the check reads the right list. */
        cr_assert(strstr(out, "Shared library: [libjson-c.so."), "%s", out);
        cr_assert_null(strstr(out, "libcurl"), "the agent needs libcurl:\n%s", out);
        cr_assert_null(strstr(out, "libgnutls"), "%s", out);
        free(out);
        free(err);

        /* What iso/build.sh reads to put libcurl into the live image. */
        st = tu_runf(&out, &err, "readelf -p .note.dlopen %s", tu_agent_path());
        cr_assert_eq(st, 0, "readelf -p: %s", err ? err : "");
        cr_assert(strstr(out, "FDO"), "%s", out);
        cr_assert(strstr(out, "\"soname\":[\"libcurl.so.4\"]"), "%s", out);
        free(out);
        free(err);
}

/* ---- libcurl hidden ----------------------------------------------------- */

/* The file the dynamic loader maps for `soname`: the one this test binary
 * (which links libcurl and json-c) has, resolved. */
static void library_file(const char *soname, char out[PATH_MAX]) {
        void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
        if (!h)
                h = dlopen(soname, RTLD_NOW);
        cr_assert_not_null(h, "%s: %s", soname, dlerror());
        struct link_map *lm = NULL;
        cr_assert_eq(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0, "%s", dlerror());
        cr_assert(realpath(lm->l_name, out), "realpath %s: %s", lm->l_name, strerror(errno));
        dlclose(h);
}

/* Run argv in a private mount namespace where the file `hide` is `with`
 * (bound over it); stdout and stderr into *out and *err (caller frees). The
 * exit status; the test fails when the namespace cannot be set up. */
static int run_hidden(const char *hide, const char *with, const char *const argv[], char **out, char **err) {
        char opath[PATH_MAX], epath[PATH_MAX];
        snprintf(opath, sizeof opath, "%s/stdout", dir);
        snprintf(epath, sizeof epath, "%s/stderr", dir);
        int ofd = open(opath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int efd = open(epath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert(ofd >= 0 && efd >= 0);

        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                const char *step = "unshare(CLONE_NEWNS)";
                if (unshare(CLONE_NEWNS) == 0) {
                        step = "mount --make-rprivate /";
                        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) {
                                step = "mount --bind";
                                if (mount(with, hide, NULL, MS_BIND, NULL) == 0) {
                                        dup2(ofd, 1);
                                        dup2(efd, 2);
                                        execv(argv[0], (char *const *) argv);
                                        step = "execv";
                                }
                        }
                }
                dprintf(efd, "test setup: %s: %s\n", step, strerror(errno));
                _exit(125);
        }
        close(ofd);
        close(efd);
        int ws;
        cr_assert_eq(waitpid(pid, &ws, 0), pid);
        *out = tu_read_file(opath, NULL);
        *err = tu_read_file(epath, NULL);
        cr_assert(*out && *err);
        cr_assert_neq(WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, 125, "%s", *err);
        cr_assert_null(tu_sanitizer_report(*err), "%s", *err);
        return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Root for the mount namespace (CI runs the suites as root). */
static void need_root(void) {
        if (geteuid() != 0)
                cr_skip_test("hiding libcurl needs a private mount namespace, which needs root");
}

/* What the agent says when it cannot load libcurl: the library, the
 * loader's words (`loader`, or any of its words for an unreadable file when
 * NULL), and how to install it. */
static void assert_libcurl_message(const char *err, const char *loader) {
        cr_assert(strstr(err, "muster-agent: libcurl (libcurl.so.4) could not be loaded: "), "%s", err);
        if (loader)
                cr_assert(strstr(err, loader), "%s", err);
        else
                cr_assert(strstr(err, "file too short") || strstr(err, "cannot open shared object file"), "%s", err);
        cr_assert(strstr(err, "apt-get install libcurl4"), "%s", err);
}

/* `run` against the unreachable port 1 with the suite's token and no other
 * configuration source, into argv (NULL-terminated). */
static void run_argv(const char *argv[18], char tok[PATH_MAX], char none[PATH_MAX], char cmdline[PATH_MAX]) {
        snprintf(tok, PATH_MAX, "%s/token", dir);
        snprintf(none, PATH_MAX, "%s/none", dir);
        snprintf(cmdline, PATH_MAX, "%s/cmdline", dir);
        const char *v[] = { tu_agent_path(), "run", "--coordinator", "https://127.0.0.1:1", "--infra-env", INFRA_ENV,
                            "--token-file", tok, "--sysroot", FIXTURE, "--boot-config", none, "--agent-conf", none,
                            "--cmdline", cmdline, NULL };
        memcpy(argv, v, sizeof v);
}

Test(agent_curl, run_without_libcurl_exits_2_and_says_why) {
        need_root();
        char curl[PATH_MAX], tok[PATH_MAX], none[PATH_MAX], cmdline[PATH_MAX];
        const char *argv[18];
        library_file("libcurl.so.4", curl);
        /* Port 1 on loopback: were libcurl loaded, the agent would retry it
         * until stopped (the suite's timeout would fail the test). */
        run_argv(argv, tok, none, cmdline);
        char *out, *err;
        cr_assert_eq(run_hidden(curl, "/dev/null", argv, &out, &err), EXIT_USAGE, "%s", err);
        assert_libcurl_message(err, NULL);
        /* Nothing else went on: no registration was tried. */
        cr_assert_null(strstr(err, "egistr"), "%s", err);
        free(out);
        free(err);
}

/* A file in libcurl's place that loads but is no libcurl (json-c's): the
 * first function looked up is missing, and that is said the same way. */
Test(agent_curl, run_with_a_library_that_is_no_libcurl_exits_2) {
        need_root();
        char curl[PATH_MAX], other[PATH_MAX], tok[PATH_MAX], none[PATH_MAX], cmdline[PATH_MAX];
        const char *argv[18];
        library_file("libcurl.so.4", curl);
        library_file("libjson-c.so.5", other);
        run_argv(argv, tok, none, cmdline);
        char *out, *err;
        cr_assert_eq(run_hidden(curl, other, argv, &out, &err), EXIT_USAGE, "%s", err);
        assert_libcurl_message(err, "undefined symbol: curl_global_init");
        free(out);
        free(err);
}

Test(agent_curl, node_without_libcurl_exits_2) {
        need_root();
        char curl[PATH_MAX], tok[PATH_MAX], none[PATH_MAX], cmdline[PATH_MAX], key[PATH_MAX], man[PATH_MAX];
        library_file("libcurl.so.4", curl);
        snprintf(tok, sizeof tok, "%s/token", dir);
        snprintf(none, sizeof none, "%s/none", dir);
        snprintf(cmdline, sizeof cmdline, "%s/cmdline", dir);
        snprintf(key, sizeof key, "%s/key.pem", dir);
        snprintf(man, sizeof man, "%s/manifests", dir);
        const char *argv[] = { tu_agent_path(), "node", "--coordinator", "http://127.0.0.1:1", "--infra-env",
                               INFRA_ENV, "--token-file", tok, "--coordinator-key", key, "--manifest-dir", man,
                               "--boot-config", none, "--agent-conf", none, "--cmdline", cmdline, NULL };
        char *out, *err;
        cr_assert_eq(run_hidden(curl, "/dev/null", argv, &out, &err), EXIT_USAGE, "%s", err);
        assert_libcurl_message(err, NULL);
        free(out);
        free(err);
}

Test(agent_curl, inventory_version_help_without_libcurl) {
        need_root();
        char curl[PATH_MAX];
        char *out, *err;
        library_file("libcurl.so.4", curl);

        const char *inv[] = { tu_agent_path(), "inventory", "--sysroot", FIXTURE, "--compact", NULL };
        cr_assert_eq(run_hidden(curl, "/dev/null", inv, &out, &err), 0, "%s", err);
        json_object *doc = json_tokener_parse(out);
        cr_assert_not_null(doc, "not JSON: %s", out);
        cr_assert_str_eq(tu_jstr(doc, "hostname"), "muster-q35-01");
        cr_assert_null(strstr(err, "libcurl"), "%s", err);
        json_object_put(doc);
        free(out);
        free(err);

        const char *ver[] = { tu_agent_path(), "--version", NULL };
        cr_assert_eq(run_hidden(curl, "/dev/null", ver, &out, &err), 0, "%s", err);
        cr_assert(strncmp(out, "muster-agent ", 13) == 0, "%s", out);
        free(out);
        free(err);

        const char *help[] = { tu_agent_path(), "--help", NULL };
        cr_assert_eq(run_hidden(curl, "/dev/null", help, &out, &err), 0, "%s", err);
        cr_assert(strstr(out, "libcurl"), "the exit statuses name it: %s", out);
        free(out);
        free(err);
}

/* The control: the same command with libcurl in place gets past loading
 * it to the coordinator (refused on port 1: retried until SIGTERM, exit 0),
 * so the failures above come from the hidden file, not from the agent. */
Test(agent_curl, run_with_libcurl_reaches_the_coordinator) {
        char tok[PATH_MAX], none[PATH_MAX], cmdline[PATH_MAX], log[PATH_MAX];
        const char *argv[18];
        run_argv(argv, tok, none, cmdline);
        snprintf(log, sizeof log, "%s/agent.log", dir);
        int pid = tu_spawn(argv, log);
        cr_assert_gt(pid, 0);
        char *text = NULL;
        for (int64_t deadline = tu_mono_ms() + 30000;;) {
                free(text);
                text = tu_read_file(log, NULL);
                if (text && strstr(text, "Registration with https://127.0.0.1:1 failed"))
                        break;
                if (tu_mono_ms() > deadline || tu_wait_pid(pid, 100) >= 0) {
                        tu_stop(&pid, SIGTERM);
                        cr_assert_fail("no registration attempt: %s", text ? text : "");
                }
        }
        cr_assert_null(strstr(text, "libcurl"), "%s", text);
        free(text);
        cr_assert_eq(tu_stop(&pid, SIGTERM), 0);
}
