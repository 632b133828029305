/* Integration tests of the network step runners across network namespaces
 * the test builds itself: two namespaces joined by a veth pair
 * (198.51.100.0/24, 2001:db8:5163::/64), a responder process inside the
 * peer namespace (SNTP on port 123, a TCP listener), and the steps run from
 * a child that entered the other namespace. A last test gives a child its
 * own mount and network namespace with a DNS server on loopback that never
 * answers, to see the lookup deadline. No packet leaves the namespaces.
 * Deadlines are checked by their effect ("timed out", lost probes); how
 * long the steps take is measured by bench/steps-net. Without the privilege
 * to make namespaces a test is skipped (and counted); as root it must run. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "steps_net.h"
#include "testutil.h"

#define HOST_B "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"
#define HOST_C "1b2c3d4e-5f60-4b7c-9d8e-9fa0b1c2d3e4"
#define ADDR_A "198.51.100.1"
#define ADDR_B "198.51.100.2"
#define ADDR_NOBODY "198.51.100.3"
#define ADDR6_A "2001:db8:5163::1"
#define ADDR6_B "2001:db8:5163::2"
#define TCP_PORT 8080
#define PEER_OFFSET_MS (-2000)

/* ---- helpers ------------------------------------------------------------ */


#define run(err, ...) tu_runf(NULL, err, __VA_ARGS__)

static const char *jstr(json_object *o, const char *path) {
        json_object *v = tu_json_get(o, path);
        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static double jnum(json_object *o, const char *path) {
        json_object *v = tu_json_get(o, path);
        cr_assert(v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)),
                  "%s is not a number in %s", path, json_object_to_json_string(o));
        return json_object_get_double(v);
}

static bool jbool(json_object *o, const char *path) {
        json_object *v = tu_json_get(o, path);
        cr_assert(v && json_object_is_type(v, json_type_boolean), "%s is not a boolean in %s", path,
                  json_object_to_json_string(o));
        return json_object_get_boolean(v);
}

/* Read everything from fd until EOF or the deadline; malloc'd text. */
static char *read_all(int fd, int timeout_ms) {
        size_t len = 0, cap = 4096;
        char *buf = malloc(cap);
        int64_t deadline = tu_mono_ms() + timeout_ms;
        cr_assert(buf);
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int64_t left = deadline - tu_mono_ms();
                if (left <= 0 || poll(&p, 1, (int) left) <= 0)
                        break;
                if (len + 1024 > cap)
                        cr_assert(buf = realloc(buf, cap *= 2));
                ssize_t k = read(fd, buf + len, cap - len - 1);
                if (k <= 0)
                        break;
                len += (size_t) k;
        }
        buf[len] = '\0';
        return buf;
}

/* ---- the two namespaces and the responder in B -------------------------- */

static char ns_a[32], ns_b[32], ns_r[32];
static pid_t responder_pid = -1, worker_pid = -1;

static void kill_child(pid_t *pid) {
        if (*pid > 0) {
                kill(*pid, SIGKILL);
                waitpid(*pid, NULL, 0);
                *pid = -1;
        }
}

/* Wait for a child that should be exiting; SIGKILL it after timeout_ms.
 * Its wait status. */
static int reap(pid_t *pid, int timeout_ms) {
        int status = -1;
        for (int waited = 0; *pid > 0; waited += 10) {
                pid_t r = waitpid(*pid, &status, WNOHANG);
                if (r == *pid || (r < 0 && errno != EINTR))
                        break;
                if (waited >= timeout_ms) {
                        kill(*pid, SIGKILL);
                        waitpid(*pid, &status, 0);
                        break;
                }
                usleep(10000);
        }
        *pid = -1;
        return status;
}

static void ns_fini(void) {
        kill_child(&worker_pid);
        kill_child(&responder_pid);
        if (ns_a[0])
                run(NULL, "ip netns del %s", ns_a);
        if (ns_b[0])
                run(NULL, "ip netns del %s", ns_b);
        if (ns_r[0])
                run(NULL, "ip netns del %s", ns_r);
        ns_a[0] = ns_b[0] = ns_r[0] = '\0';
}

/* Skips the test when namespaces cannot be made for lack of privilege (not
 * root); any other failure fails it. */
static void netns_add(char *name, size_t n, const char *tag) {
        char *err = NULL;
        snprintf(name, n, "muster-steps-%s-%d", tag, (int) getpid());
        if (run(&err, "ip netns add %s", name) != 0) {
                bool perm = geteuid() != 0 && err && (strstr(err, "ermission") || strstr(err, "not permitted"));
                char msg[256];
                snprintf(msg, sizeof msg, "%s", err ? err : "");
                free(err);
                name[0] = '\0';
                if (perm)
                        cr_skip_test("cannot create a network namespace: %s", msg);
                cr_assert_fail("ip netns add failed: %s", msg);
        }
        free(err);
}

static void answer_sntp(int fd) {
        uint8_t buf[128];
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        struct sntp_packet req, rep = { .version = 4, .mode = 4, .stratum = 1, .precision = -20,
                                        .ref_id = 'G' << 24 | 'P' << 16 | 'S' << 8 };
        struct timespec ts;
        ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *) &from, &fl);
        if (n < 0 || sntp_packet_decode(buf, (size_t) n, &req) < 0 || req.mode != 3)
                return;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t now = (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec + PEER_OFFSET_MS * 1000000LL;
        rep.orig_ts = req.tx_ts;
        rep.rx_ts = rep.tx_ts = sntp_ts_from_unix_ns(now);
        rep.ref_ts = rep.rx_ts - (16ULL << 32);
        sntp_packet_encode(&rep, buf);
        (void) sendto(fd, buf, SNTP_PACKET_SIZE, 0, (struct sockaddr *) &from, fl);
}

/* In the child: enter B, serve until killed. Writes 'R' when ready. */
static void responder_main(int ready) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(SNTP_PORT) };
        int u, t, one = 1;
        inet_pton(AF_INET, ADDR_B, &sa.sin_addr);
        if (tu_enter_netns(ns_b) < 0)
                _exit(2);
        u = socket(AF_INET, SOCK_DGRAM, 0);
        t = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (u < 0 || t < 0 || bind(u, (struct sockaddr *) &sa, sizeof sa) < 0)
                _exit(3);
        sa.sin_port = htons(TCP_PORT);
        if (bind(t, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(t, 64) < 0)
                _exit(4);
        if (write(ready, "R", 1) != 1)
                _exit(5);
        close(ready);
        for (;;) {
                struct pollfd p[2] = { { .fd = u, .events = POLLIN }, { .fd = t, .events = POLLIN } };
                if (poll(p, 2, 1000) <= 0)
                        continue;
                if (p[0].revents)
                        answer_sntp(u);
                if (p[1].revents) {
                        int c = accept(t, NULL, NULL);
                        if (c >= 0)
                                close(c);
                }
        }
}

static void topology_up(void) {
        netns_add(ns_a, sizeof ns_a, "a");
        netns_add(ns_b, sizeof ns_b, "b");
        tu_must("ip -n %s link set lo up", ns_a);
        tu_must("ip -n %s link set lo up", ns_b);
        tu_must("ip -n %s link add vA type veth peer name vB netns %s", ns_a, ns_b);
        tu_must("ip -n %s addr add " ADDR_A "/24 dev vA", ns_a);
        tu_must("ip -n %s addr add " ADDR6_A "/64 dev vA nodad", ns_a);
        tu_must("ip -n %s addr add " ADDR_B "/24 dev vB", ns_b);
        tu_must("ip -n %s addr add " ADDR6_B "/64 dev vB nodad", ns_b);
        tu_must("ip -n %s link set vA up", ns_a);
        tu_must("ip -n %s link set vB up", ns_b);
        /* IPv6 drops what it sends before both ends report carrier */
        for (int i = 0;; i++) {
                char *a = NULL, *b = NULL;
                tu_runf(&a, NULL, "ip -n %s -o link show vA", ns_a);
                tu_runf(&b, NULL, "ip -n %s -o link show vB", ns_b);
                bool up = a && b && strstr(a, "state UP") && strstr(b, "state UP");
                free(a);
                free(b);
                if (up)
                        break;
                cr_assert_lt(i, 250, "the veth pair did not come up");
                usleep(20000);
        }

        int p[2];
        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        responder_pid = fork();
        cr_assert(responder_pid >= 0);
        if (responder_pid == 0) {
                close(p[0]);
                responder_main(p[1]);
        }
        close(p[1]);
        char *ready = read_all(p[0], 10000);
        close(p[0]);
        cr_assert_str_eq(ready, "R", "the responder did not start in %s", ns_b);
        free(ready);
}

typedef int (*step_fn)(json_object *, json_object **);

/* Run `step` on `args` in a child that entered namespace `ns`; the output
 * comes back through a pipe. Asserts the step returned 0. */
static json_object *step_in_ns(const char *ns, step_fn step, const char *args) {
        int p[2];
        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        worker_pid = fork();
        cr_assert(worker_pid >= 0);
        if (worker_pid == 0) {
                close(p[0]);
                json_object *in = json_tokener_parse(args), *out = NULL;
                int r = tu_enter_netns(ns);
                if (r == 0)
                        r = step(in, &out);
                dprintf(p[1], "%d\n%s", r, out ? json_object_to_json_string(out) : "null");
                _exit(0);
        }
        close(p[1]);
        char *text = read_all(p[0], 60000);
        close(p[0]);
        int status = reap(&worker_pid, 5000);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the step's child ended with status %#x: %s",
                  status, text);
        char *nl = strchr(text, '\n');
        cr_assert(nl, "no answer from the child: '%s'", text);
        cr_assert_eq(atoi(text), 0, "step failed in %s: %s", ns, text);
        json_object *o = json_tokener_parse(nl + 1);
        cr_assert(o, "bad output: %s", nl + 1);
        free(text);
        return o;
}

/* ---- tests -------------------------------------------------------------- */

Test(steps_netns, connectivity_icmp, .fini = ns_fini) {
        topology_up();
        json_object *out = step_in_ns(ns_a, step_connectivity_check,
                                      "{\"peers\":[{\"host_id\":\"" HOST_B "\",\"addresses\":[\"" ADDR_B "\",\"" ADDR6_B "\"]},"
                                      "{\"host_id\":\"" HOST_C "\",\"addresses\":[\"" ADDR_NOBODY "\"]}],"
                                      "\"count\":3,\"timeout_ms\":500}");
        const char *m = jstr(out, "peers.0.addresses.0.method");
        cr_assert(m && strcmp(m, "icmp") == 0, "not probed by ICMP: %s", json_object_to_json_string(out));
        cr_expect(jbool(out, "peers.0.reachable"));
        cr_expect(jbool(out, "peers.0.addresses.0.reachable"));
        cr_expect_eq(jnum(out, "peers.0.addresses.0.loss_pct"), 0);
        cr_expect_lt(jnum(out, "peers.0.addresses.0.rtt_max_ms"), 100);
        cr_expect(jbool(out, "peers.0.addresses.1.reachable"), "%s", json_object_to_json_string(out));
        cr_expect_eq(jnum(out, "peers.0.addresses.1.received"), 3);
        cr_expect_str_eq(jstr(out, "peers.1.host_id"), HOST_C);
        cr_expect_not(jbool(out, "peers.1.reachable"));
        cr_expect_not(jbool(out, "peers.1.addresses.0.reachable"));
        cr_expect_eq(jnum(out, "peers.1.addresses.0.loss_pct"), 100);
        cr_expect_eq(jnum(out, "peers.1.addresses.0.sent"), 3);
        cr_expect_null(tu_json_get(out, "peers.1.addresses.0.rtt_avg_ms"));
        cr_expect_eq(jnum(out, "peers.1.addresses.0.received"), 0);
        /* The full-MTU probe: the veth pair carries its 1500 bytes both ways. */
        cr_expect(jbool(out, "peers.0.mtu_ok"), "%s", json_object_to_json_string(out));
        cr_expect_eq(jnum(out, "peers.0.mtu"), 1500);
        cr_expect(jbool(out, "peers.0.addresses.1.mtu_ok"), "IPv6: %s", json_object_to_json_string(out));
        cr_expect_null(tu_json_get(out, "peers.1.mtu_ok"), "nobody there: not probed");
        cr_expect_str_eq(jstr(out, "peers.1.addresses.0.mtu_error"), "not reachable");
        json_object_put(out);
}

Test(steps_netns, connectivity_tcp, .fini = ns_fini) {
        topology_up();
        json_object *out = step_in_ns(ns_a, step_connectivity_check,
                                      "{\"peers\":[{\"host_id\":\"" HOST_B "\",\"addresses\":[\"" ADDR_B "\"]},"
                                      "{\"host_id\":\"" HOST_C "\",\"addresses\":[\"" ADDR_NOBODY "\"]}],"
                                      "\"count\":2,\"timeout_ms\":400,\"method\":\"tcp\",\"tcp_port\":8080}");
        cr_expect_str_eq(jstr(out, "peers.0.addresses.0.method"), "tcp");
        cr_expect(jbool(out, "peers.0.addresses.0.reachable"), "%s", json_object_to_json_string(out));
        cr_expect_eq(jnum(out, "peers.0.addresses.0.received"), 2);
        cr_expect_not(jbool(out, "peers.1.addresses.0.reachable"));
        cr_expect_eq(jnum(out, "peers.1.addresses.0.loss_pct"), 100);
        json_object_put(out);

        /* a port nobody listens on still proves the host is there */
        out = step_in_ns(ns_a, step_connectivity_check,
                         "{\"peers\":[{\"host_id\":\"" HOST_B "\",\"addresses\":[\"" ADDR_B "\",\"" ADDR6_B "\"]}],"
                         "\"count\":1,\"timeout_ms\":1000,\"method\":\"tcp\",\"tcp_port\":9}");
        cr_expect(jbool(out, "peers.0.addresses.0.reachable"), "%s", json_object_to_json_string(out));
        cr_expect(jbool(out, "peers.0.addresses.1.reachable"), "%s", json_object_to_json_string(out));
        json_object_put(out);
}

Test(steps_netns, ntp_from_peer, .fini = ns_fini) {
        topology_up();
        json_object *out = step_in_ns(ns_a, step_ntp_synchronizer,
                                      "{\"ntp_sources\":[\"" ADDR_NOBODY ":123\",\"" ADDR_B "\"],\"timeout_ms\":800}");
        cr_expect_str_eq(jstr(out, "method"), "sntp");
        cr_expect_str_eq(jstr(out, "source"), ADDR_B);
        cr_expect_not(jbool(out, "synced"));
        cr_expect(fabs(jnum(out, "offset_ms") - PEER_OFFSET_MS) < 100, "offset %f", jnum(out, "offset_ms"));
        cr_expect_eq(jnum(out, "sources.1.stratum"), 1);
        cr_expect_not(jbool(out, "sources.0.reachable"));
        cr_expect_str_eq(jstr(out, "sources.0.error"), "timed out");
        json_object_put(out);
}

/* ---- the full-MTU probe through a router ----------------------------------- */

#define R_ADDR_A "198.51.100.254"
#define R_ADDR6_A "2001:db8:5163::fe"
#define R_ADDR_B "203.0.113.254"
#define R_ADDR6_B "2001:db8:7::fe"
#define FAR_ADDR "203.0.113.2"
#define FAR_ADDR6 "2001:db8:7::2"

static void wait_up(const char *ns, const char *dev) {
        for (int i = 0;; i++) {
                char *a = NULL;
                tu_runf(&a, NULL, "ip -n %s -o link show %s", ns, dev);
                bool up = a && strstr(a, "state UP");
                free(a);
                if (up)
                        return;
                cr_assert_lt(i, 250, "%s in %s did not come up", dev, ns);
                usleep(20000);
        }
}

/* A (vA, MTU 1500) -- (rA, 1500) router (rB, far_mtu) -- (vB, far_mtu) B,
 * IPv4 and IPv6, the router forwarding both. */
static void routed_up(int far_mtu) {
        netns_add(ns_a, sizeof ns_a, "a");
        netns_add(ns_r, sizeof ns_r, "r");
        netns_add(ns_b, sizeof ns_b, "b");
        tu_must("ip -n %s link set lo up", ns_a);
        tu_must("ip -n %s link set lo up", ns_r);
        tu_must("ip -n %s link set lo up", ns_b);
        tu_must("ip netns exec %s sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1", ns_r);
        tu_must("ip -n %s link add vA type veth peer name rA netns %s", ns_a, ns_r);
        tu_must("ip -n %s link add vB type veth peer name rB netns %s", ns_b, ns_r);
        tu_must("ip -n %s link set vB mtu %d", ns_b, far_mtu);
        tu_must("ip -n %s link set rB mtu %d", ns_r, far_mtu);
        tu_must("ip -n %s addr add " ADDR_A "/24 dev vA", ns_a);
        tu_must("ip -n %s addr add " ADDR6_A "/64 dev vA nodad", ns_a);
        tu_must("ip -n %s addr add " R_ADDR_A "/24 dev rA", ns_r);
        tu_must("ip -n %s addr add " R_ADDR6_A "/64 dev rA nodad", ns_r);
        tu_must("ip -n %s addr add " R_ADDR_B "/24 dev rB", ns_r);
        tu_must("ip -n %s addr add " R_ADDR6_B "/64 dev rB nodad", ns_r);
        tu_must("ip -n %s addr add " FAR_ADDR "/24 dev vB", ns_b);
        tu_must("ip -n %s addr add " FAR_ADDR6 "/64 dev vB nodad", ns_b);
        tu_must("ip -n %s link set vA up", ns_a);
        tu_must("ip -n %s link set rA up", ns_r);
        tu_must("ip -n %s link set rB up", ns_r);
        tu_must("ip -n %s link set vB up", ns_b);
        wait_up(ns_a, "vA");
        wait_up(ns_r, "rA");
        wait_up(ns_r, "rB");
        wait_up(ns_b, "vB");
        tu_must("ip -n %s route add default via " R_ADDR_A, ns_a);
        tu_must("ip -n %s -6 route add default via " R_ADDR6_A, ns_a);
        tu_must("ip -n %s route add default via " R_ADDR_B, ns_b);
        tu_must("ip -n %s -6 route add default via " R_ADDR6_B, ns_b);
        /* IPv6 drops the first packets across a fresh router (neighbour
         * discovery on links just up): wait until small probes cross. */
        for (int i = 0;; i++) {
                json_object *o = step_in_ns(ns_a, step_connectivity_check,
                                            "{\"peers\":[{\"host_id\":\"" HOST_C "\",\"addresses\":[\"" FAR_ADDR "\",\""
                                            FAR_ADDR6 "\"]}],\"count\":1,\"timeout_ms\":300,\"method\":\"icmp\","
                                            "\"mtu_probe\":false}");
                bool both = jbool(o, "peers.0.addresses.0.reachable") && jbool(o, "peers.0.addresses.1.reachable");
                json_object_put(o);
                if (both)
                        break;
                cr_assert_lt(i, 20, "the far host is not reachable across the router");
        }
}

#define MTU_ARGS "{\"peers\":[{\"host_id\":\"" HOST_B "\",\"addresses\":[\"" R_ADDR_A "\",\"" R_ADDR6_A "\"]}," \
                 "{\"host_id\":\"" HOST_C "\",\"addresses\":[\"" FAR_ADDR "\",\"" FAR_ADDR6 "\"]}]," \
                 "\"count\":2,\"timeout_ms\":800,\"method\":\"icmp\"}"

/* The far link carries 1280 bytes: small probes cross it, a full-size
 * (1500) don't-fragment one does not, and the router says so. The router
 * itself, on A's own link, passes. */
Test(steps_netns, mtu_smaller_beyond_a_router, .fini = ns_fini) {
        routed_up(1280);
        json_object *out = step_in_ns(ns_a, step_connectivity_check, MTU_ARGS);
        const char *all = json_object_to_json_string(out);
        cr_expect(jbool(out, "peers.0.reachable"), "%s", all);
        cr_expect(jbool(out, "peers.0.mtu_ok"), "%s", all);
        cr_expect_eq(jnum(out, "peers.0.mtu"), 1500);
        cr_expect(jbool(out, "peers.0.addresses.0.mtu_ok"));
        cr_expect(jbool(out, "peers.0.addresses.1.mtu_ok"), "%s", all);
        cr_expect(jbool(out, "peers.1.reachable"), "small packets cross: %s", all);
        cr_expect_eq(jnum(out, "peers.1.addresses.0.received"), 2);
        cr_expect_not(jbool(out, "peers.1.mtu_ok"), "%s", all);
        cr_expect_eq(jnum(out, "peers.1.mtu"), 1500);
        cr_expect_eq(jnum(out, "peers.1.path_mtu"), 1280, "%s", all);
        for (int a = 0; a < 2; a++) {
                char p[64];
                snprintf(p, sizeof p, "peers.1.addresses.%d.mtu_ok", a);
                cr_expect_not(jbool(out, p), "%s: %s", p, all);
                snprintf(p, sizeof p, "peers.1.addresses.%d.mtu", a);
                cr_expect_eq(jnum(out, p), 1500, "%s", p);
                snprintf(p, sizeof p, "peers.1.addresses.%d.path_mtu", a);
                cr_expect_eq(jnum(out, p), 1280, "%s: %s", p, all);
        }
        json_object_put(out);

        /* The far link raised to 1500: now it passes, though A's kernel has
         * learnt a path MTU of 1280 for B (the probe ignores it). */
        tu_must("ip -n %s link set rB mtu 1500", ns_r);
        tu_must("ip -n %s link set vB mtu 1500", ns_b);
        out = step_in_ns(ns_a, step_connectivity_check, MTU_ARGS);
        all = json_object_to_json_string(out);
        cr_expect(jbool(out, "peers.1.mtu_ok"), "%s", all);
        cr_expect_eq(jnum(out, "peers.1.mtu"), 1500);
        cr_expect(jbool(out, "peers.1.addresses.0.mtu_ok"), "%s", all);
        cr_expect(jbool(out, "peers.1.addresses.1.mtu_ok"), "%s", all);
        cr_expect_null(tu_json_get(out, "peers.1.path_mtu"));
        json_object_put(out);

        /* A's own interface at 1280: that is the MTU tried, and it passes. */
        tu_must("ip -n %s link set vA mtu 1280", ns_a);
        out = step_in_ns(ns_a, step_connectivity_check, MTU_ARGS);
        cr_expect(jbool(out, "peers.1.mtu_ok"), "%s", json_object_to_json_string(out));
        cr_expect_eq(jnum(out, "peers.1.mtu"), 1280);
        json_object_put(out);
}

/* ---- lookups against a DNS server that never answers --------------------- */

/* In a child: own mount and network namespaces, lo up, a UDP socket on
 * 127.0.0.1:53 that reads nothing, /etc/resolv.conf bind-mounted to point
 * at it. Then the steps that resolve names must give up at their deadline;
 * the child stays a little longer so the abandoned lookups finish and free
 * their batch. */
static void dns_child(int out_fd) {
        char conf[] = "/tmp/muster-resolv-XXXXXX";
        int fd;
        if (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0) {
                dprintf(out_fd, "skip unshare: %s", strerror(errno));
                _exit(0);
        }
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || (fd = mkstemp(conf)) < 0) {
                dprintf(out_fd, "skip mount: %s", strerror(errno));
                _exit(0);
        }
        dprintf(fd, "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
        close(fd);
        int mr = mount(conf, "/etc/resolv.conf", NULL, MS_BIND, NULL);
        unlink(conf);
        if (mr < 0) {
                dprintf(out_fd, "skip bind mount: %s", strerror(errno));
                _exit(0);
        }
        if (run(NULL, "ip link set lo up") != 0)
                _exit(6);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int silent = socket(AF_INET, SOCK_DGRAM, 0);
        if (silent < 0 || bind(silent, (struct sockaddr *) &sa, sizeof sa) < 0)
                _exit(7);

        json_object *in = json_tokener_parse("{\"names\":[\"api.c1.example.test\",\"*.apps.c1.example.test\","
                                             "\"localhost\"],\"timeout_ms\":300}");
        json_object *dns = NULL, *ntp = NULL;
        int r1 = step_domain_resolution(in, &dns);
        json_object_put(in);
        in = json_tokener_parse("{\"ntp_sources\":[\"ntp.example.test\"],\"timeout_ms\":300,"
                                "\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\"}");
        int r2 = step_ntp_synchronizer(in, &ntp);
        json_object_put(in);
        usleep(1500000); /* the lookups time out in glibc now */
        dprintf(out_fd, "%d %d\n%s\n%s", r1, r2, dns ? json_object_to_json_string(dns) : "null",
                ntp ? json_object_to_json_string(ntp) : "null");
        json_object_put(dns);
        json_object_put(ntp);
        _exit(0);
}

Test(steps_netns, lookup_deadline, .fini = ns_fini) {
        int p[2];
        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        worker_pid = fork();
        cr_assert(worker_pid >= 0);
        if (worker_pid == 0) {
                close(p[0]);
                dns_child(p[1]);
        }
        close(p[1]);
        char *text = read_all(p[0], 60000);
        close(p[0]);
        int status = reap(&worker_pid, 5000);
        if (strncmp(text, "skip", 4) == 0) {
                bool perm = geteuid() != 0 && (strstr(text, "ermission") || strstr(text, "not permitted"));
                char msg[256];
                snprintf(msg, sizeof msg, "%s", text);
                free(text);
                if (perm)
                        cr_skip_test("cannot make namespaces: %s", msg);
                cr_assert_fail("%s", msg);
        }
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d: %s", status, text);
        int r1, r2;
        char *l1 = strchr(text, '\n'), *l2 = l1 ? strchr(l1 + 1, '\n') : NULL;
        cr_assert(l2 && sscanf(text, "%d %d", &r1, &r2) == 2, "child said: %s", text);
        *l2 = '\0';
        cr_assert_eq(r1, 0);
        cr_assert_eq(r2, 0);
        json_object *dns = json_tokener_parse(l1 + 1), *ntp = json_tokener_parse(l2 + 1);
        cr_assert(dns && ntp, "child said: %s", text);
        cr_expect_str_eq(jstr(dns, "resolutions.0.error"), "timed out");
        cr_expect_str_eq(jstr(dns, "resolutions.1.error"), "timed out");
        cr_expect_neq(strcmp(jstr(dns, "resolutions.1.queried_name"), "*.apps.c1.example.test"), 0);
        cr_expect_null(tu_json_get(dns, "resolutions.2.error"), "localhost: %s", json_object_to_json_string(dns));
        cr_expect_str_eq(jstr(dns, "resolutions.2.ipv4_addresses.0"), "127.0.0.1");

        cr_expect_str_eq(jstr(ntp, "method"), "coordinator-date");
        cr_expect_str_eq(jstr(ntp, "sources.0.error"), "cannot resolve ntp.example.test: timed out");
        cr_expect_not(jbool(ntp, "synced"));
        json_object_put(dns);
        json_object_put(ntp);
        free(text);
}
