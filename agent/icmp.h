/* ICMP echo as connectivity-check and its MTU probe use it: the replies
 * read (pure; fuzzed, fuzz_icmp_echo), the Internet checksum, and the echo
 * socket. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ECHO_PAYLOAD 16 /* cookie (8), probe index (4), zero (4) */
#define ECHO_LEN (8 + ECHO_PAYLOAD)

/* An echo reply to one of connectivity-check's probes, as an ICMP socket
 * hands it over. The echoes it sends carry 16 bytes: a cookie (8), the
 * probe's index (4) and four zero bytes. */
struct icmp_echo_reply {
        uint8_t type, code;
        uint16_t id;              /* a ping socket's is its own */
        const uint8_t *cookie;    /* 8 bytes, inside the buffer */
        uint32_t index;
        size_t len;               /* of the ICMP message, from its header on */
};
/* Read the n bytes of buf, behind an IPv4 header when ip_header (raw IPv4
 * sockets see it). -EINVAL when they are too short for the ICMP header and
 * those 16 bytes, or with ip_header do not start with an IPv4 header. */
int icmp_echo_reply_decode(const void *buf, size_t n, bool ip_header, struct icmp_echo_reply *e);

/* The Internet checksum (RFC 1071) of n bytes. */
uint16_t inet_checksum(const uint8_t *b, size_t n);
/* An ICMP echo socket of `family` (AF_INET, AF_INET6), non-blocking: an
 * unprivileged ping socket when net.ipv4.ping_group_range lets us, else a
 * raw socket (*raw) that lets only echo replies through. fd or -errno. */
int icmp_open(int family, bool *raw);
