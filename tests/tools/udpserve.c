/* The test tools' UDP server loop (udpserve.h). */
#include "udpserve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_DATAGRAM 2048

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static int parse_listen(const char *s, struct sockaddr_in *sa) {
        char host[64];
        const char *colon = s ? strrchr(s, ':') : NULL;
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

int udpserve_run(const char *prog, const char *listen, udpserve_answer answer, void *userdata) {
        struct sockaddr_in sa;
        if (parse_listen(listen, &sa) < 0) {
                fprintf(stderr, "%s: --listen needs an IPv4 ADDR:PORT\n", prog);
                return 2;
        }
        struct sigaction act = { .sa_handler = on_signal };
        sigaction(SIGTERM, &act, NULL);
        sigaction(SIGINT, &act, NULL);
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                fprintf(stderr, "%s: cannot bind %s: %s\n", prog, listen, strerror(errno));
                if (fd >= 0)
                        close(fd);
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        while (!stop) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 200) <= 0)
                        continue;
                uint8_t q[MAX_DATAGRAM], r[MAX_DATAGRAM];
                struct sockaddr_storage from;
                socklen_t fl = sizeof from;
                ssize_t n = recvfrom(fd, q, sizeof q, 0, (struct sockaddr *) &from, &fl);
                if (n <= 0)
                        continue;
                size_t len = answer(userdata, q, (size_t) n, r, sizeof r);
                if (len > 0)
                        (void) sendto(fd, r, len, 0, (struct sockaddr *) &from, fl);
        }
        close(fd);
        return 0;
}
