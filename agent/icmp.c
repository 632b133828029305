/* ICMP echo (icmp.h): replies read, the checksum, the echo socket. */
#include "icmp.h"

#include <errno.h>
#include <linux/icmp.h> /* ICMP_FILTER; not with <net/if.h> */
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "netutil.h"

uint16_t inet_checksum(const uint8_t *b, size_t n) {
        uint32_t sum = 0;
        for (size_t i = 0; i + 1 < n; i += 2)
                sum += (uint32_t) b[i] << 8 | b[i + 1];
        if (n & 1)
                sum += (uint32_t) b[n - 1] << 8;
        while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
        return (uint16_t) ~sum;
}

int icmp_echo_reply_decode(const void *buf, size_t n, bool ip_header, struct icmp_echo_reply *e) {
        const uint8_t *b = buf;
        size_t off = 0;
        if (!buf || !e)
                return -EINVAL;
        if (ip_header) { /* raw IPv4 sockets see the IP header */
                if (n < 20 || (b[0] >> 4) != 4 || (b[0] & 0x0f) < 5)
                        return -EINVAL;
                off = (size_t) (b[0] & 0x0f) * 4;
        }
        if (n < off + ECHO_LEN)
                return -EINVAL;
        const uint8_t *ic = b + off;
        e->type = ic[0];
        e->code = ic[1];
        e->id = (uint16_t) (ic[4] << 8 | ic[5]);
        e->cookie = ic + 8;
        e->index = get_be32(ic + 16);
        e->len = n - off;
        return 0;
}

int icmp_open(int family, bool *raw) {
        int proto = family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
        int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        *raw = false;
        if (fd >= 0)
                goto done;
        fd = socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        if (fd < 0)
                return -errno;
        *raw = true;
        /* A raw socket gets every ICMP message, our own echo requests to
         * local addresses included: let only the replies queue up. */
        if (family == AF_INET) {
                struct icmp_filter f = { .data = ~(1U << ICMP_ECHOREPLY) };
                (void) setsockopt(fd, SOL_RAW, ICMP_FILTER, &f, sizeof f);
        } else {
                struct icmp6_filter f;
                ICMP6_FILTER_SETBLOCKALL(&f);
                ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
                (void) setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof f);
        }
done:;
        int rcvbuf = 1 << 20; /* a round to many peers answers in a burst */
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        return fd;
}
