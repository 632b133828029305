/* muster-test-journal-exec PROGRAM [ARG...]: run PROGRAM with stdout and
 * stderr connected to journald's stream socket and JOURNAL_STREAM naming
 * that stream, as systemd does for a service with StandardError=journal
 * (sd_journal_stream_fd(3), systemd.exec(5)). For the tests that read what
 * a real musterd sends to a real journald. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s PROGRAM [ARG...]\n", argv[0]);
                return 2;
        }
        const char *slash = strrchr(argv[1], '/');
        int fd = sd_journal_stream_fd(slash ? slash + 1 : argv[1], LOG_INFO, 1);
        if (fd < 0) {
                fprintf(stderr, "sd_journal_stream_fd: %s\n", strerror(-fd));
                return 1;
        }
        struct stat st;
        char env[64];
        if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 || fstat(STDERR_FILENO, &st) < 0)
                return 1;
        if (fd > STDERR_FILENO)
                close(fd);
        snprintf(env, sizeof env, "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
        setenv("JOURNAL_STREAM", env, 1);
        execv(argv[1], argv + 1);
        perror("execv");
        return 127;
}
