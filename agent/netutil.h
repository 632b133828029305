/* What the network steps' files share: the clocks in ns, big-endian bytes,
 * random bytes, socket addresses. Internal to steps_net.c and the files it
 * is built of (sntp.c, icmp.c, reach.c, mtu.c, dnsname.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#define NS_PER_SEC 1000000000LL
#define NS_PER_MS 1000000LL

static inline int64_t clock_ns(clockid_t c) {
        struct timespec ts;
        clock_gettime(c, &ts);
        return (int64_t) ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static inline void put_be16(uint8_t *b, uint16_t v) {
        b[0] = (uint8_t) (v >> 8);
        b[1] = (uint8_t) v;
}

static inline void put_be32(uint8_t *b, uint32_t v) {
        for (int i = 3; i >= 0; i--, v >>= 8)
                b[i] = (uint8_t) v;
}

static inline void put_be64(uint8_t *b, uint64_t v) {
        for (int i = 7; i >= 0; i--, v >>= 8)
                b[i] = (uint8_t) v;
}

static inline uint32_t get_be32(const uint8_t *b) {
        return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

static inline uint64_t get_be64(const uint8_t *b) {
        return (uint64_t) get_be32(b) << 32 | get_be32(b + 4);
}

/* Unpredictable bytes for probe cookies and wildcard labels. Never blocks:
 * early in boot the kernel pool may not be ready, then time and pid will do
 * (these only need to differ between runs, not to resist an attacker). */
void random_bytes(void *buf, size_t n);
void sockaddr_set_port(struct sockaddr_storage *ss, uint16_t port);
/* A numeric IPv4 or IPv6 address (with an optional %scope) into ss. 0 or
 * -EINVAL. */
int parse_numeric_address(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* The same IP address (ports and scopes aside). */
bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
