/* What the network steps' files share (netutil.h): random bytes that never
 * block, and socket addresses set, parsed and compared. */
#include "netutil.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/if.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* Unpredictable bytes for probe cookies and wildcard labels. Never blocks:
 * early in boot the kernel pool may not be ready, then time and pid will do
 * (these only need to differ between runs, not to resist an attacker). */
void random_bytes(void *buf, size_t n) {
        uint8_t *b = buf;
        ssize_t r = getrandom(buf, n, GRND_NONBLOCK);
        if (r == (ssize_t) n)
                return;
        uint64_t x = (uint64_t) clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t) getpid() << 32);
        for (size_t i = 0; i < n; i++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                b[i] = (uint8_t) x;
        }
}

void sockaddr_set_port(struct sockaddr_storage *ss, uint16_t port) {
        if (ss->ss_family == AF_INET)
                ((struct sockaddr_in *) ss)->sin_port = htons(port);
        else
                ((struct sockaddr_in6 *) ss)->sin6_port = htons(port);
}

/* A numeric IPv4 or IPv6 address (with an optional %scope) into ss. */
int parse_numeric_address(const char *s, struct sockaddr_storage *ss, socklen_t *len) {
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM,
                                  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
        struct addrinfo *res = NULL;
        if (!s || !*s || strlen(s) > INET6_ADDRSTRLEN + IFNAMSIZ)
                return -EINVAL;
        if (getaddrinfo(s, NULL, &hints, &res) != 0 || !res)
                return -EINVAL;
        if ((res->ai_family != AF_INET && res->ai_family != AF_INET6) || res->ai_addrlen > sizeof *ss) {
                freeaddrinfo(res);
                return -EINVAL;
        }
        memset(ss, 0, sizeof *ss);
        memcpy(ss, res->ai_addr, res->ai_addrlen);
        *len = res->ai_addrlen;
        freeaddrinfo(res);
        return 0;
}

bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
        if (a->ss_family != b->ss_family)
                return false;
        if (a->ss_family == AF_INET)
                return ((const struct sockaddr_in *) a)->sin_addr.s_addr ==
                       ((const struct sockaddr_in *) b)->sin_addr.s_addr;
        return memcmp(&((const struct sockaddr_in6 *) a)->sin6_addr, &((const struct sockaddr_in6 *) b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
}
