/* Reachability (reach.h): connectivity-check's ICMP echo and TCP probes,
 * sent in rounds on lanes (ICMP of each family, TCP within a window of
 * descriptors), answered or expired, over one poll loop. */
#include "reach.h"

#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "icmp.h"
#include "netutil.h"
#include "steps_net.h"

enum probe_state { PROBE_PENDING, PROBE_INFLIGHT, PROBE_DONE };

#define TCP_WINDOW_MAX 256

struct conn_probe {
        int64_t sent_ns;
        int fd;                      /* TCP probes in flight */
        int live_pos;                /* index in conn_run.live */
        uint8_t state;
};

struct conn_run {
        struct conn_target *targets;
        size_t n_targets;
        struct conn_probe *probes;   /* probe p: round p / n_targets, target p % n_targets */
        size_t n_probes, n_done;
        int64_t start_ns, timeout_ns;
        uint16_t tcp_port;
        int icmp_fd[2];
        bool icmp_raw[2];
        uint16_t icmp_id;
        uint8_t cookie[8];
        size_t cursor[_LANE_MAX];    /* next probe to start */
        size_t expire[_LANE_MAX];    /* oldest probe that may be in flight */
        int64_t blocked_until[_LANE_MAX];
        unsigned sent_since_read[_LANE_MAX];
        char (*icmp_why)[96];        /* why a family has no ICMP socket: the caller's reach_args */
        size_t *live;                /* TCP probes in flight */
        size_t n_live, window;
};

static void icmp_receive(struct conn_run *r, int lane);

static void probe_finish(struct conn_run *r, size_t p, bool replied, int64_t now, int err) {
        struct conn_probe *pr = &r->probes[p];
        struct conn_target *t = &r->targets[p % r->n_targets];
        if (pr->state == PROBE_DONE)
                return;
        if (replied) {
                int64_t rtt = now - pr->sent_ns;
                if (t->received == 0 || rtt < t->rtt_min)
                        t->rtt_min = rtt;
                if (t->received == 0 || rtt > t->rtt_max)
                        t->rtt_max = rtt;
                t->rtt_sum += rtt;
                t->received++;
        } else if (err && !t->err && !t->why) {
                t->err = err;
        }
        if (pr->fd >= 0) {
                close(pr->fd);
                pr->fd = -1;
                size_t last = r->live[--r->n_live];
                r->live[pr->live_pos] = last;
                r->probes[last].live_pos = pr->live_pos;
        }
        pr->state = PROBE_DONE;
        r->n_done++;
}

/* 0 sent, -EAGAIN try later, other -errno: this probe failed. */
static int icmp_send(struct conn_run *r, int lane, size_t p) {
        struct conn_target *t = &r->targets[p % r->n_targets];
        uint8_t pkt[ECHO_LEN] = { 0 };
        pkt[0] = lane == LANE_ICMP4 ? 8 : ICMP6_ECHO_REQUEST;
        put_be16(pkt + 4, r->icmp_id); /* ping sockets put their own */
        put_be16(pkt + 6, (uint16_t) p);
        memcpy(pkt + 8, r->cookie, sizeof r->cookie);
        put_be32(pkt + 16, (uint32_t) p);
        if (lane == LANE_ICMP4) /* the kernel sums ICMPv6 itself */
                put_be16(pkt + 2, inet_checksum(pkt, sizeof pkt));
        if (sendto(r->icmp_fd[lane], pkt, sizeof pkt, 0, (struct sockaddr *) &t->sa, t->salen) < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR ? -EAGAIN
                                                                                                      : -errno;
        return 0;
}

/* Drain the replies queued on an ICMP socket. */
static void icmp_receive(struct conn_run *r, int lane) {
        uint8_t buf[1024];
        for (int budget = 4096; budget > 0; budget--) {
                struct sockaddr_storage from;
                socklen_t fl = sizeof from;
                ssize_t n = recvfrom(r->icmp_fd[lane], buf, sizeof buf, 0, (struct sockaddr *) &from, &fl);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                return;
                        continue; /* a queued socket error: read and go on */
                }
                int64_t now = clock_ns(CLOCK_MONOTONIC);
                struct icmp_echo_reply e;
                if (icmp_echo_reply_decode(buf, (size_t) n, lane == LANE_ICMP4 && r->icmp_raw[lane], &e) < 0)
                        continue;
                if (e.type != (lane == LANE_ICMP4 ? 0 : ICMP6_ECHO_REPLY) || e.code != 0)
                        continue;
                if (r->icmp_raw[lane] && e.id != r->icmp_id)
                        continue;
                if (memcmp(e.cookie, r->cookie, sizeof r->cookie) != 0)
                        continue;
                size_t p = e.index;
                if (p >= r->n_probes || r->probes[p].state != PROBE_INFLIGHT)
                        continue;
                struct conn_target *t = &r->targets[p % r->n_targets];
                if (t->lane != lane || !same_address(&from, &t->sa))
                        continue;
                probe_finish(r, p, true, now, 0);
        }
}

/* Start a TCP connect; 0 in flight or finished, -EAGAIN out of sockets. */
static int tcp_start(struct conn_run *r, size_t p, int64_t now) {
        struct conn_target *t = &r->targets[p % r->n_targets];
        struct conn_probe *pr = &r->probes[p];
        struct sockaddr_storage sa = t->sa;
        int fd = socket(t->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return errno == EMFILE || errno == ENFILE || errno == ENOBUFS ? -EAGAIN : -errno;
        sockaddr_set_port(&sa, r->tcp_port);
        pr->sent_ns = now;
        pr->state = PROBE_INFLIGHT;
        t->sent++;
        if (connect(fd, (struct sockaddr *) &sa, t->salen) == 0 || errno == ECONNREFUSED) {
                close(fd);
                probe_finish(r, p, true, clock_ns(CLOCK_MONOTONIC), 0);
        } else if (errno == EINPROGRESS) {
                pr->fd = fd;
                pr->live_pos = (int) r->n_live;
                r->live[r->n_live++] = p;
        } else {
                int e = errno;
                close(fd);
                probe_finish(r, p, false, now, e);
        }
        return 0;
}

static void tcp_complete(struct conn_run *r, size_t p) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(r->probes[p].fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
        if (err == EINPROGRESS || err == EALREADY)
                return;
        probe_finish(r, p, err == 0 || err == ECONNREFUSED, clock_ns(CLOCK_MONOTONIC), err);
}

static int64_t probe_due(const struct conn_run *r, size_t p) {
        return r->start_ns + (int64_t) (p / r->n_targets) * CONN_INTERVAL_MS * NS_PER_MS;
}

/* Start the lane's probes that are due; *next: when to look again. */
static void lane_start(struct conn_run *r, int lane, int64_t now, int64_t *next) {
        if (r->blocked_until[lane] > now) {
                if (r->blocked_until[lane] < *next)
                        *next = r->blocked_until[lane];
                return;
        }
        while (r->cursor[lane] < r->n_probes) {
                size_t p = r->cursor[lane];
                struct conn_target *t = &r->targets[p % r->n_targets];
                if (t->lane != lane || r->probes[p].state != PROBE_PENDING) {
                        r->cursor[lane]++;
                        continue;
                }
                int64_t due = probe_due(r, p);
                if (due > now) {
                        if (due < *next)
                                *next = due;
                        return;
                }
                int e;
                if (lane == LANE_TCP) {
                        if (r->n_live >= r->window)
                                return; /* a completion or an expiry wakes us */
                        e = tcp_start(r, p, now);
                } else {
                        /* Replies to local addresses queue up while we
                         * send: read them between batches. */
                        if (++r->sent_since_read[lane] % 32 == 0)
                                icmp_receive(r, lane);
                        e = icmp_send(r, lane, p);
                        if (e == 0 || e != -EAGAIN) {
                                r->probes[p].sent_ns = now;
                                r->probes[p].state = PROBE_INFLIGHT;
                                t->sent++;
                                if (e < 0)
                                        probe_finish(r, p, false, now, -e);
                        }
                }
                if (e == -EAGAIN) {
                        /* Socket buffer or descriptors exhausted: back off,
                         * but not for longer than a probe may take. */
                        if (now - due < r->timeout_ns) {
                                r->blocked_until[lane] = now + 5 * NS_PER_MS;
                                if (r->blocked_until[lane] < *next)
                                        *next = r->blocked_until[lane];
                                return;
                        }
                        t->sent++;
                        probe_finish(r, p, false, now, lane == LANE_TCP ? EMFILE : ENOBUFS);
                }
                r->cursor[lane]++;
        }
}

/* Give up on the lane's probes older than the timeout. */
static void lane_expire(struct conn_run *r, int lane, int64_t now, int64_t *next) {
        while (r->expire[lane] < r->cursor[lane]) {
                size_t p = r->expire[lane];
                if (r->targets[p % r->n_targets].lane != lane || r->probes[p].state != PROBE_INFLIGHT) {
                        r->expire[lane]++;
                        continue;
                }
                int64_t limit = r->probes[p].sent_ns + r->timeout_ns;
                if (limit > now) {
                        if (limit < *next)
                                *next = limit;
                        return;
                }
                probe_finish(r, p, false, now, 0);
                r->expire[lane]++;
        }
}

static int conn_loop(struct conn_run *r) {
        _cleanup_free_ struct pollfd *pfd = calloc(2 + r->window, sizeof *pfd);
        _cleanup_free_ size_t *pfd_probe = calloc(2 + r->window, sizeof *pfd_probe);
        if (!pfd || !pfd_probe)
                return -ENOMEM;
        r->start_ns = clock_ns(CLOCK_MONOTONIC);
        for (;;) {
                int64_t now = clock_ns(CLOCK_MONOTONIC), next = INT64_MAX;
                for (int l = 0; l < _LANE_MAX; l++)
                        lane_start(r, l, now, &next);
                for (int l = 0; l < _LANE_MAX; l++)
                        lane_expire(r, l, now, &next);
                if (r->n_done >= r->n_probes)
                        return 0;

                nfds_t n = 0;
                for (int l = LANE_ICMP4; l <= LANE_ICMP6; l++)
                        if (r->icmp_fd[l] >= 0) {
                                pfd[n] = (struct pollfd) { .fd = r->icmp_fd[l], .events = POLLIN };
                                pfd_probe[n++] = (size_t) l;
                        }
                size_t n_icmp = n;
                for (size_t i = 0; i < r->n_live; i++) {
                        pfd[n] = (struct pollfd) { .fd = r->probes[r->live[i]].fd, .events = POLLOUT };
                        pfd_probe[n++] = r->live[i];
                }
                int64_t wait = next == INT64_MAX ? 1000 : (next - now + NS_PER_MS - 1) / NS_PER_MS;
                if (wait > 1000)
                        wait = 1000;
                if (wait < 0)
                        wait = 0;
                int k = poll(pfd, n, (int) wait);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k <= 0)
                        continue;
                for (size_t i = 0; i < n_icmp; i++)
                        if (pfd[i].revents)
                                icmp_receive(r, (int) pfd_probe[i]);
                for (size_t i = n_icmp; i < n; i++)
                        if (pfd[i].revents && r->probes[pfd_probe[i]].state == PROBE_INFLIGHT)
                                tcp_complete(r, pfd_probe[i]);
        }
}

/* How many TCP connects may be in flight at once: TCP_WINDOW_MAX, or a
 * quarter of the descriptors the process may open when that is fewer. */
static size_t tcp_window(void) {
        struct rlimit rl;
        size_t window = TCP_WINDOW_MAX;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < window)
                window = rl.rlim_cur / 4 > 0 ? rl.rlim_cur / 4 : 1;
        return window;
}

/* Each target (r->targets, in order) its lane: ICMP echo when wanted and
 * its family has a socket (opened at the family's first address), else TCP
 * when wanted; otherwise the target says why not. */
static void conn_assign_lanes(struct conn_run *r, bool want_icmp, bool want_tcp) {
        bool icmp_tried[2] = { false, false };

        for (size_t ti = 0; ti < r->n_targets; ti++) {
                struct conn_target *t = &r->targets[ti];
                t->lane = LANE_NONE;
                if (parse_numeric_address(t->address, &t->sa, &t->salen) < 0) {
                        t->why = "not an IP address";
                        continue;
                }
                int fam = t->sa.ss_family == AF_INET ? LANE_ICMP4 : LANE_ICMP6;
                if (want_icmp && !icmp_tried[fam]) {
                        icmp_tried[fam] = true;
                        int fd = icmp_open(fam == LANE_ICMP4 ? AF_INET : AF_INET6, &r->icmp_raw[fam]);
                        if (fd >= 0)
                                r->icmp_fd[fam] = fd;
                        else
                                snprintf(r->icmp_why[fam], sizeof r->icmp_why[fam],
                                         "no ICMP echo here (%s)%s", strerror(-fd),
                                         r->tcp_port ? "" : " and no tcp_port was given");
                }
                if (want_icmp && r->icmp_fd[fam] >= 0)
                        t->lane = fam;
                else if (want_tcp)
                        t->lane = LANE_TCP;
                else
                        t->why = r->icmp_why[fam];
        }
}

int reach_probe_all(struct conn_target *targets, size_t n_targets, struct reach_args *a) {
        struct conn_run run = { .targets = targets, .n_targets = n_targets, .timeout_ns = a->timeout_ns,
                                .tcp_port = a->tcp_port, .icmp_fd = { -1, -1 }, .icmp_why = a->icmp_why };
        _cleanup_free_ struct conn_probe *probes = calloc(n_targets ? n_targets * (size_t) a->count : 1,
                                                          sizeof *probes);
        run.window = tcp_window();
        _cleanup_free_ size_t *live = calloc(run.window, sizeof *live);
        if (!probes || !live)
                return -ENOMEM;
        run.probes = probes;
        run.live = live;
        run.n_probes = n_targets * (size_t) a->count;
        random_bytes(run.cookie, sizeof run.cookie);
        random_bytes(&run.icmp_id, sizeof run.icmp_id);
        conn_assign_lanes(&run, a->want_icmp, a->want_tcp);
        for (size_t p = 0; p < run.n_probes; p++) {
                probes[p].fd = -1;
                if (targets[p % n_targets].lane == LANE_NONE) {
                        probes[p].state = PROBE_DONE;
                        run.n_done++;
                }
        }

        int r = run.n_probes > 0 ? conn_loop(&run) : 0;
        for (size_t i = 0; i < run.n_live; i++)
                close(probes[live[i]].fd);
        for (int l = LANE_ICMP4; l <= LANE_ICMP6; l++)
                if (run.icmp_fd[l] >= 0)
                        close(run.icmp_fd[l]);
        return r;
}
