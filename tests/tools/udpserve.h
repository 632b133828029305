/* The UDP server loop of the test tools (muster-test-sntpd, -dnsd): bind an
 * IPv4 ADDR:PORT, print "ready" on stdout, and hand each datagram to
 * answer(), sending back what it writes, until SIGTERM or SIGINT. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* answer: the reply to n bytes of q in r (at most rmax bytes); 0: none. */
typedef size_t (*udpserve_answer)(void *userdata, const uint8_t *q, size_t n, uint8_t *r, size_t rmax);

/* 0 after a signal; 1 when the socket cannot be bound; 2 for a `listen`
 * that is not an IPv4 ADDR:PORT (prog names the tool in messages). */
int udpserve_run(const char *prog, const char *listen, udpserve_answer answer, void *userdata);
