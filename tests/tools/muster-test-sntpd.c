/* A minimal SNTP server (RFC 4330 §5) for the test suites: it answers each
 * client request on ADDR:PORT with the machine's clock plus --offset-ms,
 * stratum 1, until SIGTERM or SIGINT, then exits 0. Real agents in the
 * integration suites are given it as their infra-env's NTP source, so the
 * ntp-synced validation measures a real exchange on loopback (or in a test's
 * network namespace). Never pointed anywhere else.
 *
 *   muster-test-sntpd --listen ADDR:PORT [--offset-ms N]
 *
 * Prints "ready" on stdout once bound. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PKT 48
#define NTP_UNIX_DELTA 2208988800ULL /* seconds from 1900 to 1970 */

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static void put64(uint8_t *p, uint64_t v) {
        for (int i = 7; i >= 0; i--, v >>= 8)
                p[i] = (uint8_t) v;
}

static uint64_t ntp_now(int64_t offset_ms) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec + offset_ms * 1000000LL;
        uint64_t sec = (uint64_t) (ns / 1000000000LL) + NTP_UNIX_DELTA;
        uint64_t frac = ((uint64_t) (ns % 1000000000LL) << 32) / 1000000000ULL;
        return sec << 32 | frac;
}

static int parse_listen(const char *s, struct sockaddr_in *sa) {
        char host[64];
        const char *colon = strrchr(s, ':');
        if (!colon || (size_t) (colon - s) >= sizeof host)
                return -1;
        memcpy(host, s, (size_t) (colon - s));
        host[colon - s] = '\0';
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (*end || port < 1 || port > 65535)
                return -1;
        memset(sa, 0, sizeof *sa);
        sa->sin_family = AF_INET;
        sa->sin_port = htons((uint16_t) port);
        return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv) {
        struct sockaddr_in sa;
        int64_t offset_ms = 0;
        const char *listen = NULL;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc)
                        listen = argv[++i];
                else if (strcmp(argv[i], "--offset-ms") == 0 && i + 1 < argc)
                        offset_ms = strtoll(argv[++i], NULL, 10);
                else {
                        fprintf(stderr, "usage: %s --listen ADDR:PORT [--offset-ms N]\n", argv[0]);
                        return 2;
                }
        }
        if (!listen || parse_listen(listen, &sa) < 0) {
                fprintf(stderr, "%s: --listen needs an IPv4 ADDR:PORT\n", argv[0]);
                return 2;
        }
        struct sigaction act = { .sa_handler = on_signal };
        sigaction(SIGTERM, &act, NULL);
        sigaction(SIGINT, &act, NULL);
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                fprintf(stderr, "%s: cannot bind %s: %s\n", argv[0], listen, strerror(errno));
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        while (!stop) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 200) <= 0)
                        continue;
                uint8_t req[PKT * 2], rep[PKT] = { 0 };
                struct sockaddr_storage from;
                socklen_t fl = sizeof from;
                ssize_t n = recvfrom(fd, req, sizeof req, 0, (struct sockaddr *) &from, &fl);
                /* A client request: at least 48 bytes, mode 3. */
                if (n < PKT || (req[0] & 7) != 3)
                        continue;
                uint64_t now = ntp_now(offset_ms);
                rep[0] = (uint8_t) (0 << 6 | ((req[0] >> 3) & 7) << 3 | 4); /* LI 0, client's version, server */
                rep[1] = 1;                                                 /* stratum 1 */
                rep[2] = req[2];                                            /* poll */
                rep[3] = (uint8_t) -20;                                     /* precision ~1 us */
                memcpy(rep + 12, "TEST", 4);                                /* reference id */
                put64(rep + 16, now - (16ULL << 32));                       /* reference time */
                memcpy(rep + 24, req + 40, 8);                              /* originate = client's transmit */
                put64(rep + 32, now);                                       /* receive */
                put64(rep + 40, ntp_now(offset_ms));                        /* transmit */
                (void) sendto(fd, rep, PKT, 0, (struct sockaddr *) &from, fl);
        }
        close(fd);
        return 0;
}
