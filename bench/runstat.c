/* bench-runstat: run one command, report its wall time and peak RSS.
 *
 *   bench-runstat [--timeout SEC] -- CMD ARGS...
 *
 * The command runs with stdin, stdout and stderr on /dev/null, in its own
 * process group.  Wall time is CLOCK_MONOTONIC from just before fork() to the
 * return of wait4(); peak RSS is ru_maxrss from wait4(), i.e. the largest of
 * the child and the descendants it reaped.  On timeout the child's process
 * group and the child itself get SIGKILL; bench-runstat is a child subreaper,
 * so killed or exited grandchildren are reaped here, not left as zombies.
 * One line goes to stdout:
 *
 *   wall_ns=<n> maxrss_kb=<n> status=<exit:N|signal:N|timeout|exec-error:ERRNO>
 *
 * Exit status: 0 when a line was printed, 2 on usage errors, 1 on internal
 * errors, 128+N when interrupted by signal N (the child is killed first).
 * Used by bench/probe; not a test. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void usage(FILE *f) {
        fputs("usage: bench-runstat [--timeout SEC] -- CMD ARGS...\n"
              "Runs CMD with output to /dev/null and prints\n"
              "  wall_ns=<n> maxrss_kb=<n> status=<exit:N|signal:N|timeout|exec-error:ERRNO>\n"
              "SEC may be fractional; 0 (default) means no timeout.\n",
              f);
}

static void kill_child(pid_t pid) {
        (void) kill(-pid, SIGKILL); /* its process group (helpers it spawned) */
        (void) kill(pid, SIGKILL);  /* in case setpgid() did not happen yet */
}

/* Reap grandchildren re-parented to us. After a timeout their group was
 * SIGKILLed, so give them a moment to die; otherwise only take what is dead. */
static void reap_orphans(bool wait_a_bit) {
        for (int tries = wait_a_bit ? 100 : 1; tries > 0; tries--) {
                pid_t r;
                while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
                        ;
                if (r < 0) /* ECHILD: nothing left */
                        return;
                if (tries > 1)
                        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
        }
}

/* Child side: never returns. Reports exec failure through errfd. */
static void exec_child(char **argv, const sigset_t *origmask, int errfd) {
        (void) setpgid(0, 0);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0 ||
            dup2(null, STDERR_FILENO) < 0)
                goto fail;
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        sigprocmask(SIG_SETMASK, origmask, NULL);
        execvp(argv[0], argv);
fail:;
        int e = errno;
        ssize_t n = write(errfd, &e, sizeof e);
        (void) n;
        _exit(127);
}

int main(int argc, char **argv) {
        double timeout = 0;
        int i = 1;
        for (; i < argc; i++) {
                if (strcmp(argv[i], "--") == 0) {
                        i++;
                        break;
                } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
                        char *end;
                        errno = 0;
                        timeout = strtod(argv[++i], &end);
                        if (errno || end == argv[i] || *end || !(timeout >= 0) || isinf(timeout)) {
                                fprintf(stderr, "bench-runstat: bad --timeout '%s'\n", argv[i]);
                                return 2;
                        }
                } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        usage(stdout);
                        return 0;
                } else {
                        usage(stderr);
                        return 2;
                }
        }
        if (i >= argc) {
                usage(stderr);
                return 2;
        }
        char **cmd = argv + i;

        /* SIGCHLD must not be SIG_IGN (that would auto-reap and lose the rusage).
         * Block it and the termination signals; sigtimedwait() collects them. */
        signal(SIGCHLD, SIG_DFL);
        sigset_t waitset, origmask;
        sigemptyset(&waitset);
        sigaddset(&waitset, SIGCHLD);
        sigaddset(&waitset, SIGINT);
        sigaddset(&waitset, SIGTERM);
        sigaddset(&waitset, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &waitset, &origmask) < 0) {
                perror("bench-runstat: sigprocmask");
                return 1;
        }

        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

        int errpipe[2];
        if (pipe2(errpipe, O_CLOEXEC) < 0) {
                perror("bench-runstat: pipe2");
                return 1;
        }

        int64_t start = now_ns();
        pid_t pid = fork();
        if (pid < 0) {
                perror("bench-runstat: fork");
                return 1;
        }
        if (pid == 0)
                exec_child(cmd, &origmask, errpipe[1]);
        (void) setpgid(pid, pid); /* also from the parent: no race with kill(-pid) */
        close(errpipe[1]);

        int64_t deadline = timeout > 0 ? start + (int64_t) (timeout * 1e9) : 0;
        bool timed_out = false;
        int status = 0;
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        for (;;) {
                pid_t r = wait4(pid, &status, WNOHANG, &ru);
                if (r == pid)
                        break;
                if (r < 0 && errno != EINTR) {
                        perror("bench-runstat: wait4");
                        kill_child(pid);
                        return 1;
                }
                struct timespec ts = { .tv_sec = 3600 }, *tsp = NULL;
                if (deadline) {
                        int64_t left = deadline - now_ns();
                        if (left <= 0) {
                                timed_out = true;
                                kill_child(pid);
                                if (wait4(pid, &status, 0, &ru) < 0) {
                                        perror("bench-runstat: wait4");
                                        return 1;
                                }
                                break;
                        }
                        ts.tv_sec = left / 1000000000;
                        ts.tv_nsec = left % 1000000000;
                }
                tsp = &ts;
                int sig = sigtimedwait(&waitset, NULL, tsp);
                if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
                        kill_child(pid);
                        (void) wait4(pid, &status, 0, &ru);
                        fprintf(stderr, "bench-runstat: interrupted by signal %d\n", sig);
                        return 128 + sig;
                }
                /* SIGCHLD, EAGAIN (timeout) or EINTR: loop and poll again. */
        }
        int64_t wall = now_ns() - start;
        reap_orphans(timed_out);

        int exec_errno = 0;
        ssize_t n = read(errpipe[0], &exec_errno, sizeof exec_errno);
        close(errpipe[0]);
        if (n != (ssize_t) sizeof exec_errno)
                exec_errno = 0;

        char st[48];
        if (exec_errno) {
                snprintf(st, sizeof st, "exec-error:%d", exec_errno);
                fprintf(stderr, "bench-runstat: cannot run %s: %s\n", cmd[0], strerror(exec_errno));
        } else if (timed_out)
                snprintf(st, sizeof st, "timeout");
        else if (WIFEXITED(status))
                snprintf(st, sizeof st, "exit:%d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
                snprintf(st, sizeof st, "signal:%d", WTERMSIG(status));
        else
                snprintf(st, sizeof st, "unknown:%d", status);

        printf("wall_ns=%lld maxrss_kb=%ld status=%s\n", (long long) wall, (long) ru.ru_maxrss, st);
        return fflush(stdout) == 0 ? 0 : 1;
}
