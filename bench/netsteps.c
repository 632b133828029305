/* Network step timings: how long the agent's network steps (agent/steps_net.c)
 * take on loopback next to the deadline they were given, and whether their
 * probes run at once. The tests only check that a deadline ends a step with
 * a timeout result; the figures live here. Loopback only; the silent DNS
 * server case runs in a mount and network namespace of its own (root).
 * Usage: bench-netsteps [ROUNDS] (default 7). Prints median/min/max per case. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "steps_net.h"
#include "benchstat.h"

#define MAX_ROUNDS 101

typedef int (*step_fn)(json_object *, json_object **);

/* One run of step on args (JSON text): its wall time in ms, or -1 when
 * the step failed. `check`, when not NULL, must appear in its output. */
static double run_once(step_fn step, const char *args, const char *check) {
        json_object *in = json_tokener_parse(args), *out = NULL;
        if (!in)
                return -1;
        double t0 = bench_now_ms();
        int r = step(in, &out);
        double took = bench_now_ms() - t0;
        const char *text = out ? json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN) : "";
        bool ok = r == 0 && (!check || strstr(text, check));
        json_object_put(in);
        json_object_put(out);
        return ok ? took : -1;
}

static void report(const char *name, double *v, int n, const char *bound) {
        int ok = 0;
        for (int i = 0; i < n; i++)
                if (v[i] >= 0)
                        v[ok++] = v[i];
        if (ok == 0) {
                printf("%-18s  all %d runs failed\n", name, n);
                return;
        }
        qsort(v, (size_t) ok, sizeof *v, bench_cmp_double);
        double med = ok % 2 ? v[ok / 2] : (v[ok / 2 - 1] + v[ok / 2]) / 2;
        printf("%-18s %8.1f %8.1f %8.1f  %s%s\n", name, med, v[0], v[ok - 1], bound,
               ok < n ? "  (some runs failed)" : "");
}

static void bench(const char *name, step_fn step, const char *args, const char *check, int rounds,
                  const char *bound) {
        double v[MAX_ROUNDS];
        run_once(step, args, check); /* warm-up */
        for (int i = 0; i < rounds; i++)
                v[i] = run_once(step, args, check);
        report(name, v, rounds, bound);
}

/* A socket bound on 127.0.0.1 (type: SOCK_DGRAM or SOCK_STREAM); its port. */
static int bound_socket(int type, uint16_t *port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
            getsockname(fd, (struct sockaddr *) &sa, &len) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        *port = ntohs(sa.sin_port);
        return fd;
}

/* TCP probes to a listener whose accept queue is full (SYNs dropped): every
 * probe waits for its deadline. 20 addresses x 2 rounds x 300 ms would take
 * 12 s one after another. */
static void bench_tcp_timeouts(int rounds) {
        uint16_t port;
        int lfd = bound_socket(SOCK_STREAM, &port), fill[4];
        if (lfd < 0 || listen(lfd, 0) < 0) {
                printf("%-18s  cannot listen: %s\n", "tcp-timeouts", strerror(errno));
                return;
        }
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        for (int i = 0; i < 4; i++) {
                fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                (void) connect(fill[i], (struct sockaddr *) &sa, sizeof sa);
        }
        usleep(100000);
        char addrs[128] = "", args[1024], bound[128];
        for (int i = 0; i < 5; i++)
                strcat(addrs, i ? ",\"127.0.0.1\"" : "\"127.0.0.1\"");
        snprintf(args, sizeof args,
                 "{\"peers\":[{\"host_id\":\"a\",\"addresses\":[%s]},{\"host_id\":\"b\",\"addresses\":[%s]},"
                 "{\"host_id\":\"c\",\"addresses\":[%s]},{\"host_id\":\"d\",\"addresses\":[%s]}],"
                 "\"count\":2,\"timeout_ms\":300,\"tcp_port\":%u,\"method\":\"tcp\"}",
                 addrs, addrs, addrs, addrs, port);
        snprintf(bound, sizeof bound, "at once: %d + 300 ms; one by one: 12000 ms", CONN_INTERVAL_MS);
        bench("tcp-timeouts", step_connectivity_check, args, "\"loss_pct\":100", rounds, bound);
        for (int i = 0; i < 4; i++)
                close(fill[i]);
        close(lfd);
}

/* 16 peers x 16 addresses of 127.0.0.0/8, 3 rounds: all answer. */
static void bench_loopback_256(int rounds) {
        uint16_t port;
        int fd = bound_socket(SOCK_STREAM, &port); /* a port for the TCP fallback, closed below */
        if (fd >= 0)
                close(fd);
        char *args = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&args, &len);
        if (!m)
                return;
        fputs("{\"peers\":[", m);
        for (int i = 0; i < 16; i++) {
                fprintf(m, "%s{\"host_id\":\"h%d\",\"addresses\":[", i ? "," : "", i);
                for (int k = 0; k < 16; k++)
                        fprintf(m, "%s\"127.0.%d.%d\"", k ? "," : "", i, k + 1);
                fputs("]}", m);
        }
        fprintf(m, "],\"count\":3,\"tcp_port\":%u}", port);
        fclose(m);
        char bound[128];
        snprintf(bound, sizeof bound, "two intervals: %d ms", 2 * CONN_INTERVAL_MS);
        bench("loopback-256", step_connectivity_check, args, NULL, rounds, bound);
        free(args);
}

/* An SNTP source that never answers, with the coordinator's date to fall
 * back on: the step ends at its 300 ms deadline. */
static void bench_ntp_silent(int rounds) {
        uint16_t port;
        int fd = bound_socket(SOCK_DGRAM, &port);
        if (fd < 0)
                return;
        char args[256];
        snprintf(args, sizeof args,
                 "{\"ntp_sources\":[\"127.0.0.1:%u\"],\"timeout_ms\":300,"
                 "\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\"}", port);
        bench("ntp-silent", step_ntp_synchronizer, args, "timed out", rounds, "deadline 300 ms");
        close(fd);
}

static int lo_up(void) {
        struct ifreq ifr = { 0 };
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = -1;
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
        if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
                ifr.ifr_flags |= IFF_UP;
                r = ioctl(fd, SIOCSIFFLAGS, &ifr);
        }
        if (fd >= 0)
                close(fd);
        return r;
}

/* In a child with its own mount and network namespaces: /etc/resolv.conf
 * names a server on 127.0.0.1:53 that reads nothing, so every lookup runs
 * into the 300 ms deadline. The child prints its own row. */
static void bench_dns_silent(int rounds) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
                return;
        if (pid > 0) {
                int st;
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                        ;
                return;
        }
        char conf[] = "/tmp/muster-bench-resolv-XXXXXX";
        int fd;
        if (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            (fd = mkstemp(conf)) < 0) {
                printf("%-18s  skipped: no namespaces (%s); run as root\n", "dns-silent-server", strerror(errno));
                _exit(0);
        }
        dprintf(fd, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
        close(fd);
        int mr = mount(conf, "/etc/resolv.conf", NULL, MS_BIND, NULL);
        unlink(conf);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int silent = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (mr < 0 || lo_up() < 0 || silent < 0 || bind(silent, (struct sockaddr *) &sa, sizeof sa) < 0) {
                printf("%-18s  skipped: %s\n", "dns-silent-server", strerror(errno));
                _exit(0);
        }
        bench("dns-silent-server", step_domain_resolution,
              "{\"names\":[\"api.c1.example.test\",\"*.apps.c1.example.test\"],\"timeout_ms\":300}", "timed out",
              rounds, "deadline 300 ms");
        fflush(stdout);
        sleep(2); /* the abandoned lookups end in glibc meanwhile */
        _exit(0);
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 7;
        if (argc > 2 || rounds < 1 || rounds > MAX_ROUNDS) {
                fprintf(stderr, "Usage: %s [ROUNDS]   (1-%d, default 7)\n", argv[0], MAX_ROUNDS);
                return 2;
        }
        printf("network steps on loopback, %d rounds after a warm-up (ms)\n", rounds);
        printf("%-18s %8s %8s %8s  %s\n", "case", "median", "min", "max", "bound");
        bench_tcp_timeouts(rounds);
        bench_loopback_256(rounds);
        bench_ntp_silent(rounds);
        bench("dns-system", step_domain_resolution,
              "{\"names\":[\"localhost\",\"*.nothing.invalid\"],\"timeout_ms\":3000}", "localhost", rounds,
              "deadline 3000 ms");
        bench_dns_silent(rounds);
        return 0;
}
