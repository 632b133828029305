/* The MTU probe (mtu.h): the interface MTU of each target's route, an
 * ICMP socket that does not fragment and reports "too big" on its error
 * queue, and the exchange of full-size echoes. */
#include "mtu.h"

#include <errno.h>
#include <ifaddrs.h>
#include <linux/errqueue.h>
#include <linux/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "icmp.h"
#include "netutil.h"
#include "steps_net.h"

#define MTU_TRIES 2
#define MTU_PACKET_MAX 65535

/* The MTU of the interface the kernel routes `sa` out of: the interface
 * (of the list `ifa`) that holds the source address a connected UDP socket
 * gets. 0 or -errno. */
static int route_mtu(const struct sockaddr_storage *sa, socklen_t salen, const struct ifaddrs *ifa, int *mtu) {
        struct sockaddr_storage dst = *sa, local;
        socklen_t ll = sizeof local;
        int r = -ENODEV;

        _cleanup_close_ int fd = socket(sa->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        sockaddr_set_port(&dst, 9);
        if (connect(fd, (struct sockaddr *) &dst, salen) < 0 || getsockname(fd, (struct sockaddr *) &local, &ll) < 0)
                return -errno;
        for (const struct ifaddrs *i = ifa; i; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != local.ss_family || !i->ifa_name ||
                    strlen(i->ifa_name) >= IFNAMSIZ)
                        continue;
                struct sockaddr_storage a = { 0 };
                memcpy(&a, i->ifa_addr, local.ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                                                  : sizeof(struct sockaddr_in6));
                if (!same_address(&a, &local))
                        continue;
                struct ifreq ifr = { 0 };
                memcpy(ifr.ifr_name, i->ifa_name, strlen(i->ifa_name) + 1);
                r = ioctl(fd, SIOCGIFMTU, &ifr) < 0 ? -errno : 0;
                if (r == 0)
                        *mtu = ifr.ifr_mtu;
                break;
        }
        if (r == 0 && *mtu <= 0)
                r = -EINVAL;
        return r;
}

/* An ICMP socket for the probe: don't fragment at the interface's MTU
 * whatever path MTU the kernel has learnt (PROBE), and ICMP errors about
 * our packets on the error queue (RECVERR). fd or -errno. */
static int mtu_socket(int lane, bool *raw) {
        int fd = icmp_open(lane == LANE_ICMP4 ? AF_INET : AF_INET6, raw);
        int one = 1, r;
        if (fd < 0)
                return fd;
        if (lane == LANE_ICMP4) {
                int v = IP_PMTUDISC_PROBE;
                r = setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v) < 0 ||
                    setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof one) < 0;
        } else {
                int v = IPV6_PMTUDISC_PROBE;
                r = setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v, sizeof v) < 0 ||
                    setsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof one) < 0 ||
                    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof one) < 0;
        }
        if (r) {
                r = -errno;
                close(fd);
                return r;
        }
        int rcvbuf = 4 << 20; /* full-size replies from many peers at once */
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        return fd;
}

struct mtu_run {
        struct conn_target *targets;
        size_t n_targets;
        int fd[2];
        bool raw[2];
        uint16_t id;
        uint8_t cookie[8];
        uint8_t *buf;                /* what is sent: MTU_PACKET_MAX */
        uint8_t *rbuf;               /* what is received: MTU_PACKET_MAX + an IPv4 header */
        size_t pending;
};

/* Send the echo of t->mtu bytes (IP header included) to target i; m->buf
 * holds the payload pattern, the header is written here. 0 when sent or
 * failed for good, -EAGAIN when the socket's buffer is full. */
static int mtu_send(struct mtu_run *m, size_t i, unsigned attempt) {
        struct conn_target *t = &m->targets[i];
        int lane = t->lane;
        size_t len = (size_t) t->mtu - (lane == LANE_ICMP4 ? 20 : 40);
        uint8_t *pkt = m->buf;
        memset(pkt, 0, ECHO_LEN);
        pkt[0] = lane == LANE_ICMP4 ? 8 : ICMP6_ECHO_REQUEST;
        put_be16(pkt + 4, m->id);
        put_be16(pkt + 6, (uint16_t) attempt);
        memcpy(pkt + 8, m->cookie, sizeof m->cookie);
        put_be32(pkt + 16, (uint32_t) i);
        if (lane == LANE_ICMP4) /* the kernel sums ICMPv6 itself */
                put_be16(pkt + 2, inet_checksum(pkt, len));
        if (sendto(m->fd[lane], pkt, len, 0, (struct sockaddr *) &t->sa, t->salen) >= 0)
                return 0;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR)
                return -EAGAIN;
        t->mtu_state = MTU_FAILED;
        t->mtu_why = strerror(errno);
        m->pending--;
        return 0;
}

static void mtu_finish(struct mtu_run *m, struct conn_target *t, bool ok, int path_mtu) {
        if (t->mtu_state != MTU_PENDING)
                return;
        t->mtu_state = ok ? MTU_PASSED : MTU_FAILED;
        if (!ok && path_mtu > 0)
                t->path_mtu = path_mtu;
        m->pending--;
}

/* Errors about our probes: "fragmentation needed" / "packet too big" name
 * the MTU of the link that refused them. */
static void mtu_errqueue(struct mtu_run *m, int lane) {
        for (int budget = 1024; budget > 0; budget--) {
                struct sockaddr_storage dst;
                uint8_t data[64], control[512];
                struct iovec iov = { .iov_base = data, .iov_len = sizeof data };
                struct msghdr msg = { .msg_name = &dst, .msg_namelen = sizeof dst, .msg_iov = &iov,
                                      .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control };
                memset(&dst, 0, sizeof dst);
                if (recvmsg(m->fd[lane], &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
                        return;
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                        if (!((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
                              (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR)) ||
                            c->cmsg_len < CMSG_LEN(sizeof(struct sock_extended_err)))
                                continue;
                        struct sock_extended_err ee;
                        memcpy(&ee, CMSG_DATA(c), sizeof ee);
                        if (ee.ee_errno != EMSGSIZE)
                                continue; /* unreachable and the like: the deadline decides */
                        for (size_t i = 0; i < m->n_targets; i++) {
                                struct conn_target *t = &m->targets[i];
                                if (t->lane == lane && t->mtu_state == MTU_PENDING && same_address(&dst, &t->sa))
                                        mtu_finish(m, t, false, (int) ee.ee_info);
                        }
                }
        }
}

static void mtu_receive(struct mtu_run *m, int lane) {
        for (int budget = 4096; budget > 0; budget--) {
                struct sockaddr_storage from;
                socklen_t fl = sizeof from;
                ssize_t n = recvfrom(m->fd[lane], m->rbuf, MTU_PACKET_MAX + 60, MSG_DONTWAIT,
                                     (struct sockaddr *) &from, &fl);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                return;
                        mtu_errqueue(m, lane); /* a queued error */
                        continue;
                }
                struct icmp_echo_reply e;
                if (icmp_echo_reply_decode(m->rbuf, (size_t) n, lane == LANE_ICMP4 && m->raw[lane], &e) < 0)
                        continue;
                if (e.type != (lane == LANE_ICMP4 ? 0 : ICMP6_ECHO_REPLY) || e.code != 0)
                        continue;
                if (m->raw[lane] && e.id != m->id)
                        continue;
                if (memcmp(e.cookie, m->cookie, sizeof m->cookie) != 0)
                        continue;
                size_t i = e.index;
                if (i >= m->n_targets)
                        continue;
                struct conn_target *t = &m->targets[i];
                /* The whole packet came back: nothing cut it on the way. */
                if (t->lane != lane || !same_address(&from, &t->sa) ||
                    e.len + (lane == LANE_ICMP4 ? 20 : 40) < (size_t) t->mtu)
                        continue;
                mtu_finish(m, t, true, 0);
        }
}

/* Which targets the MTU probe takes, each at its interface's MTU (the others
 * get the reason why not), and the ICMP socket of each family they need.
 * Counts them in m->pending. */
static void mtu_select(struct mtu_run *m) {
        bool tried[2] = { false, false };
        struct ifaddrs *ifa = NULL;

        if (getifaddrs(&ifa) < 0)
                ifa = NULL; /* then no address has an interface: said per address */
        for (size_t i = 0; i < m->n_targets; i++) {
                struct conn_target *t = &m->targets[i];
                if (t->lane == LANE_NONE || t->received == 0) {
                        t->mtu_why = "not reachable";
                        continue;
                }
                if (t->lane == LANE_TCP) {
                        t->mtu_why = "needs ICMP echo";
                        continue;
                }
                int e = route_mtu(&t->sa, t->salen, ifa, &t->mtu);
                if (e < 0) {
                        t->mtu = 0;
                        t->mtu_why = "no interface MTU for this address";
                        continue;
                }
                if (t->mtu > MTU_PACKET_MAX)
                        t->mtu = MTU_PACKET_MAX; /* loopback's 65536 */
                if (t->mtu < (t->lane == LANE_ICMP4 ? 68 : 1280)) {
                        t->mtu_why = "interface MTU below the protocol's minimum";
                        continue;
                }
                if (!tried[t->lane]) {
                        tried[t->lane] = true;
                        m->fd[t->lane] = mtu_socket(t->lane, &m->raw[t->lane]);
                }
                if (m->fd[t->lane] < 0) {
                        t->mtu_why = "no ICMP socket for the probe";
                        continue;
                }
                t->mtu_state = MTU_PENDING;
                m->pending++;
        }
        if (ifa)
                freeifaddrs(ifa);
}

/* Send the rounds and take the answers until every probe is answered or
 * the last one sent has had timeout_ns. Rounds are CONN_INTERVAL_MS apart;
 * a round that finds the socket's buffer full goes on 5 ms later
 * (receiving meanwhile), for at most the timeout. 0 or -errno. */
static int mtu_exchange(struct mtu_run *m, int64_t timeout_ns) {
        int64_t start = clock_ns(CLOCK_MONOTONIC), last_send = start;
        unsigned attempt = 0;
        size_t cursor = 0;

        while (m->pending > 0) {
                int64_t now = clock_ns(CLOCK_MONOTONIC), next = INT64_MAX;
                int64_t due = start + (int64_t) attempt * CONN_INTERVAL_MS * NS_PER_MS;
                if (attempt < MTU_TRIES && now >= due) {
                        bool blocked = false;
                        for (; cursor < m->n_targets && !blocked; cursor++)
                                if (m->targets[cursor].mtu_state == MTU_PENDING)
                                        blocked = mtu_send(m, cursor, attempt) == -EAGAIN;
                        last_send = now;
                        if (blocked && now - due < timeout_ns) {
                                cursor--; /* that one again */
                                next = now + 5 * NS_PER_MS;
                        } else {
                                attempt++;
                                cursor = 0;
                        }
                }
                int64_t deadline = last_send + timeout_ns;
                if (attempt >= MTU_TRIES && now >= deadline)
                        break;
                if (attempt < MTU_TRIES && next == INT64_MAX)
                        next = start + (int64_t) attempt * CONN_INTERVAL_MS * NS_PER_MS;
                if (deadline < next)
                        next = deadline;
                if (next < now)
                        next = now;
                struct pollfd pfd[2];
                int lanes[2];
                nfds_t k = 0;
                for (int l = LANE_ICMP4; l <= LANE_ICMP6; l++)
                        if (m->fd[l] >= 0) {
                                pfd[k] = (struct pollfd) { .fd = m->fd[l], .events = POLLIN };
                                lanes[k++] = l;
                        }
                int p = poll(pfd, k, (int) ((next - now + NS_PER_MS - 1) / NS_PER_MS));
                if (p < 0 && errno != EINTR)
                        return -errno;
                for (nfds_t i = 0; p > 0 && i < k; i++) {
                        if (pfd[i].revents & POLLERR)
                                mtu_errqueue(m, lanes[i]);
                        if (pfd[i].revents & POLLIN)
                                mtu_receive(m, lanes[i]);
                }
        }
        return 0;
}

int mtu_probe_all(struct conn_target *targets, size_t n, int64_t timeout_ns) {
        struct mtu_run m = { .targets = targets, .n_targets = n, .fd = { -1, -1 } };
        int r = 0;

        mtu_select(&m);
        if (m.pending == 0)
                goto out;
        m.buf = malloc(MTU_PACKET_MAX);
        m.rbuf = malloc(MTU_PACKET_MAX + 60);
        if (!m.buf || !m.rbuf) {
                r = -ENOMEM;
                goto out;
        }
        random_bytes(m.cookie, sizeof m.cookie);
        random_bytes(&m.id, sizeof m.id);
        for (size_t k = ECHO_LEN; k < MTU_PACKET_MAX; k++)
                m.buf[k] = (uint8_t) k;

        if ((r = mtu_exchange(&m, timeout_ns)) < 0)
                goto out;
        for (size_t i = 0; i < n; i++)
                if (targets[i].mtu_state == MTU_PENDING) {
                        targets[i].mtu_state = MTU_FAILED;
                        targets[i].mtu_why = "no reply to a full-size packet";
                }
out:
        free(m.buf);
        free(m.rbuf);
        for (int l = LANE_ICMP4; l <= LANE_ICMP6; l++)
                if (m.fd[l] >= 0)
                        close(m.fd[l]);
        return r;
}
