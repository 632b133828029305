/* connectivity-check's probes (reach.c): every address of the peers a
 * target, reached by ICMP echo or, where ICMP is not permitted, a TCP
 * connect; `count` rounds CONN_INTERVAL_MS apart, all at once. The MTU
 * probe (mtu.h) takes the same targets after. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* How a target is probed: its family's ICMP echo, or a TCP connect. */
enum lane { LANE_ICMP4, LANE_ICMP6, LANE_TCP, _LANE_MAX, LANE_NONE = -1 };

struct conn_target {
        const char *address;         /* from args */
        struct sockaddr_storage sa;
        socklen_t salen;
        int lane;
        int err;                     /* first send/connect error (errno) */
        const char *why;             /* or a fixed reason */
        unsigned sent, received;
        int64_t rtt_min, rtt_max, rtt_sum;
        /* The MTU probe: one echo of the outgoing interface's MTU, don't
         * fragment. */
        int mtu;                     /* the MTU tried; 0: not probed */
        int mtu_state;               /* MTU_* */
        int path_mtu;                /* what an ICMP "too big" said; 0: none came */
        const char *mtu_why;         /* why it was not probed, or failed locally */
};

enum { MTU_NOT_PROBED, MTU_PENDING, MTU_PASSED, MTU_FAILED };

struct reach_args {
        unsigned count;              /* rounds */
        int64_t timeout_ns;          /* for each probe's answer */
        uint16_t tcp_port;           /* 0: none */
        bool want_icmp, want_tcp;    /* the methods allowed */
        /* out: why a family has no ICMP socket; a target's why may point
         * here, so these live as long as the targets are read. */
        char icmp_why[2][96];
};

/* Probe targets[0..n), whose address is set: each gets its lane (ICMP echo
 * when wanted and its family has a socket, opened at the family's first
 * address, else TCP when wanted; otherwise why not) and its counts and
 * round trips. 0, or -errno (-ENOMEM, a failed poll). */
int reach_probe_all(struct conn_target *targets, size_t n, struct reach_args *a);
