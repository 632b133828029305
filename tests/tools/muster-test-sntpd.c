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

#include "udpserve.h"

#define PKT 48
#define NTP_UNIX_DELTA 2208988800ULL /* seconds from 1900 to 1970 */

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

/* A client request (at least 48 bytes, mode 3) gets the clock plus the
 * offset, as a stratum 1 server. */
static size_t answer_time(void *userdata, const uint8_t *req, size_t n, uint8_t *rep, size_t rmax) {
        int64_t offset_ms = *(const int64_t *) userdata;
        if (n < PKT || (req[0] & 7) != 3 || rmax < PKT)
                return 0;
        uint64_t now = ntp_now(offset_ms);
        memset(rep, 0, PKT);
        rep[0] = (uint8_t) (0 << 6 | ((req[0] >> 3) & 7) << 3 | 4); /* LI 0, client's version, server */
        rep[1] = 1;                                                 /* stratum 1 */
        rep[2] = req[2];                                            /* poll */
        rep[3] = (uint8_t) -20;                                     /* precision ~1 us */
        memcpy(rep + 12, "TEST", 4);                                /* reference id */
        put64(rep + 16, now - (16ULL << 32));                       /* reference time */
        memcpy(rep + 24, req + 40, 8);                              /* originate = client's transmit */
        put64(rep + 32, now);                                       /* receive */
        put64(rep + 40, ntp_now(offset_ms));                        /* transmit */
        return PKT;
}

int main(int argc, char **argv) {
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
        return udpserve_run(argv[0], listen, answer_time, &offset_ms);
}
