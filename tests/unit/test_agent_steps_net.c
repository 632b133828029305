/* Unit tests of the network step runners (agent/steps_net.c): the pure
 * parts (SNTP packets and clock math, dates, DNS names, argument checks),
 * then real exchanges on loopback only: an SNTP responder run here, ICMP
 * echo and TCP probes to 127.0.0.1 and ::1 (the ICMP choices in a network
 * namespace of the test's own, with ping sockets granted or not), and one
 * name lookup through the system resolver (a reserved .invalid name).
 * Deadlines are checked by their effect (a "timed out" result); how fast
 * the steps are is bench/steps-net's business, not a test's. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/capability.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "steps_net.h"
#include "testutil.h"

#define HOST_A "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
#define HOST_B "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"

/* ---- helpers ------------------------------------------------------------ */

static int64_t real_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static json_object *parse(const char *text) {
        json_object *o = json_tokener_parse(text);
        cr_assert(o, "test JSON does not parse: %s", text);
        return o;
}

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

static bool jnull(json_object *o, const char *path) {
        json_object *v = NULL;
        /* present and null: tu_json_get cannot tell that from absent */
        char buf[256], *dot;
        snprintf(buf, sizeof buf, "%s", path);
        dot = strrchr(buf, '.');
        json_object *parent = o;
        if (dot) {
                *dot = '\0';
                parent = tu_json_get(o, buf);
        }
        return parent && json_object_object_get_ex(parent, dot ? dot + 1 : buf, &v) && v == NULL;
}

/* Run a step on JSON text: its return value, and the output in *out. */
static int run_step(int (*step)(json_object *, json_object **), const char *args_text, json_object **out) {
        json_object *args = parse(args_text);
        *out = NULL;
        int r = step(args, out);
        json_object_put(args);
        if (r == 0)
                cr_assert(*out, "step returned 0 without output");
        else
                cr_assert_null(*out);
        return r;
}

static int expect_einval(int (*step)(json_object *, json_object **), const char *args_text) {
        json_object *out = NULL;
        int r = run_step(step, args_text, &out);
        cr_expect_eq(r, -EINVAL, "args %s: got %d, want -EINVAL", args_text, r);
        json_object_put(out);
        return r;
}

/* A loopback TCP port nothing listens on (bound, then released). */
static uint16_t free_tcp_port(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        cr_assert(fd >= 0);
        cr_assert(bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0);
        cr_assert(getsockname(fd, (struct sockaddr *) &sa, &len) == 0);
        close(fd);
        return ntohs(sa.sin_port);
}

/* ---- a tiny SNTP responder ---------------------------------------------- */

enum resp_mode { RESP_NORMAL, RESP_SILENT, RESP_KOD, RESP_LEAP3, RESP_WRONG_ORIGIN, RESP_STRATUM16 };

struct responder {
        int fd;
        int fd6;             /* -1, or ::1 on the same port (responder_start_dual) */
        uint16_t port;
        enum resp_mode mode;
        int64_t offset_ns;   /* our clock's lead over the client's */
        int delay_ms;        /* between receiving and answering */
        volatile bool stop;
        int served;
        pthread_t thread;
};

static void *responder_main(void *arg) {
        struct responder *r = arg;
        while (!r->stop) {
                struct pollfd p[2] = { { .fd = r->fd, .events = POLLIN }, { .fd = r->fd6, .events = POLLIN } };
                if (poll(p, 2, 50) <= 0)
                        continue;
                int fd = p[0].revents ? r->fd : r->fd6;
                uint8_t buf[128];
                struct sockaddr_storage from;
                socklen_t fl = sizeof from;
                ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *) &from, &fl);
                struct sntp_packet req, rep;
                if (n < 0 || sntp_packet_decode(buf, (size_t) n, &req) < 0 || req.mode != 3)
                        continue;
                if (r->mode == RESP_SILENT)
                        continue;
                /* A slow path, not a slow server: the wait happens before
                 * the receive timestamp, so it shows up in the delay. */
                if (r->delay_ms)
                        usleep((useconds_t) r->delay_ms * 1000);
                uint64_t rx = sntp_ts_from_unix_ns(real_ns() + r->offset_ns);
                memset(&rep, 0, sizeof rep);
                rep.version = 4;
                rep.mode = 4;
                rep.stratum = 2;
                rep.precision = -20;
                rep.ref_id = 0x7f000001;
                rep.ref_ts = rx - (10ULL << 32);
                rep.orig_ts = req.tx_ts;
                rep.rx_ts = rx;
                rep.tx_ts = sntp_ts_from_unix_ns(real_ns() + r->offset_ns);
                switch (r->mode) {
                case RESP_KOD:
                        rep.stratum = 0;
                        rep.ref_id = 'R' << 24 | 'A' << 16 | 'T' << 8 | 'E';
                        break;
                case RESP_LEAP3:
                        rep.leap = 3;
                        break;
                case RESP_WRONG_ORIGIN:
                        rep.orig_ts ^= 0x10000;
                        break;
                case RESP_STRATUM16:
                        rep.stratum = 16;
                        break;
                default:
                        break;
                }
                sntp_packet_encode(&rep, buf);
                if (sendto(fd, buf, SNTP_PACKET_SIZE, 0, (struct sockaddr *) &from, fl) == SNTP_PACKET_SIZE)
                        r->served++;
        }
        return NULL;
}

static void responder_bind(struct responder *r, int family, uint16_t port);

static void responder_start(struct responder *r, int family, enum resp_mode mode, int64_t offset_ms,
                            int delay_ms) {
        memset(r, 0, sizeof *r);
        r->fd6 = -1;
        r->mode = mode;
        r->offset_ns = offset_ms * 1000000LL;
        r->delay_ms = delay_ms;
        responder_bind(r, family, 0);
        cr_assert(pthread_create(&r->thread, NULL, responder_main, r) == 0);
}

/* On 127.0.0.1 and ::1 with one port, for a name that may resolve to either. */
static void responder_start_dual(struct responder *r, enum resp_mode mode, int64_t offset_ms) {
        for (int tries = 0;; tries++) {
                memset(r, 0, sizeof *r);
                r->mode = mode;
                r->offset_ns = offset_ms * 1000000LL;
                responder_bind(r, AF_INET, 0);
                struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_addr = in6addr_loopback,
                                           .sin6_port = htons(r->port) };
                r->fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                cr_assert(r->fd6 >= 0);
                if (bind(r->fd6, (struct sockaddr *) &s6, sizeof s6) == 0)
                        break;
                cr_assert_lt(tries, 20, "no port free on both 127.0.0.1 and ::1");
                close(r->fd);
                close(r->fd6);
        }
        cr_assert(pthread_create(&r->thread, NULL, responder_main, r) == 0);
}

static void responder_bind(struct responder *r, int family, uint16_t port) {
        struct sockaddr_storage ss = { 0 };
        socklen_t len;
        if (family == AF_INET) {
                struct sockaddr_in *s = (struct sockaddr_in *) &ss;
                s->sin_family = AF_INET;
                s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                s->sin_port = htons(port);
                len = sizeof *s;
        } else {
                struct sockaddr_in6 *s = (struct sockaddr_in6 *) &ss;
                s->sin6_family = AF_INET6;
                s->sin6_addr = in6addr_loopback;
                s->sin6_port = htons(port);
                len = sizeof *s;
        }
        r->fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        cr_assert(r->fd >= 0);
        cr_assert(bind(r->fd, (struct sockaddr *) &ss, len) == 0, "bind: %s", strerror(errno));
        cr_assert(getsockname(r->fd, (struct sockaddr *) &ss, &len) == 0);
        r->port = ntohs(family == AF_INET ? ((struct sockaddr_in *) &ss)->sin_port
                                          : ((struct sockaddr_in6 *) &ss)->sin6_port);
}

static void responder_stop(struct responder *r) {
        r->stop = true;
        pthread_join(r->thread, NULL);
        close(r->fd);
        if (r->fd6 >= 0)
                close(r->fd6);
}

/* ---- SNTP packets and clock math ---------------------------------------- */

Test(sntp, request_encoding) {
        uint8_t b[SNTP_PACKET_SIZE];
        struct sntp_packet p;
        sntp_request_init(&p, 0x0123456789abcdefULL);
        sntp_packet_encode(&p, b);
        cr_expect_eq(b[0], 0x23); /* LI 0, VN 4, mode 3 */
        for (int i = 1; i < 40; i++)
                cr_expect_eq(b[i], 0, "byte %d", i);
        static const uint8_t tx[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
        cr_expect_arr_eq(b + 40, tx, 8);
}

Test(sntp, decode_roundtrip_and_short) {
        struct sntp_packet p = { .leap = 3, .version = 4, .mode = 4, .stratum = 16, .poll = 6, .precision = -23,
                                 .root_delay = 0x00010002, .root_dispersion = 0x00030004,
                                 .ref_id = 0x47505300, .ref_ts = 1, .orig_ts = 2, .rx_ts = 3,
                                 .tx_ts = 0xfedcba9876543210ULL },
                           q;
        uint8_t b[SNTP_PACKET_SIZE + 20] = { 0 };
        sntp_packet_encode(&p, b);
        cr_expect_eq(b[0], 0xe4);
        cr_expect_eq(b[2], 6);
        cr_expect_eq(b[3], 0xe9);
        cr_assert_eq(sntp_packet_decode(b, sizeof b, &q), 0); /* trailing extension data ignored */
        cr_expect(p.leap == q.leap && p.version == q.version && p.mode == q.mode && p.stratum == q.stratum &&
                  p.poll == q.poll && p.precision == q.precision && p.root_delay == q.root_delay &&
                  p.root_dispersion == q.root_dispersion && p.ref_id == q.ref_id && p.ref_ts == q.ref_ts &&
                  p.orig_ts == q.orig_ts && p.rx_ts == q.rx_ts && p.tx_ts == q.tx_ts);
        cr_expect_eq(sntp_packet_decode(b, SNTP_PACKET_SIZE - 1, &q), -EINVAL);
        cr_expect_eq(sntp_packet_decode(NULL, 48, &q), -EINVAL);
}

Test(sntp, timestamp_conversion) {
        cr_expect_eq(sntp_ts_from_unix_ns(0), SNTP_UNIX_EPOCH << 32);
        cr_expect_eq(sntp_ts_from_unix_ns(500000000), SNTP_UNIX_EPOCH << 32 | 0x80000000ULL);
        cr_expect_eq(sntp_ts_to_unix_ns(SNTP_UNIX_EPOCH << 32 | 0x40000000ULL), 250000000);
        /* 2036-02-07T06:28:16Z is the end of era 0: NTP seconds wrap to 0. */
        int64_t wrap = (int64_t) ((1ULL << 32) - SNTP_UNIX_EPOCH) * 1000000000LL;
        cr_expect_eq(sntp_ts_from_unix_ns(wrap), 0);
        cr_expect_eq(sntp_ts_to_unix_ns(0), wrap);
        cr_expect_eq(sntp_ts_to_unix_ns(5ULL << 32), wrap + 5000000000LL);
        const int64_t samples[] = { 1700000000123456789LL, 1, 999999999, 2085978495999999999LL, -1000000000LL };
        for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
                int64_t back = sntp_ts_to_unix_ns(sntp_ts_from_unix_ns(samples[i]));
                cr_expect(llabs(back - samples[i]) <= 1, "%lld came back as %lld", (long long) samples[i],
                          (long long) back);
        }
}

Test(sntp, offset_and_delay) {
        /* T1 1000.0, T2 1003.1, T3 1003.2, T4 1000.5 (seconds): the server is
         * 2.9 s ahead and the path took 0.4 s. */
        uint64_t base = (SNTP_UNIX_EPOCH + 1700000000ULL) << 32;
        uint64_t t1 = base, t2 = base + (3ULL << 32) + 429496730ULL, t3 = base + (3ULL << 32) + 858993459ULL,
                 t4 = base + 2147483648ULL;
        int64_t off, del;
        sntp_offset_delay(t1, t2, t3, t4, &off, &del);
        cr_expect(llabs(off - 2900000000LL) < 10, "offset %lld", (long long) off);
        cr_expect(llabs(del - 400000000LL) < 10, "delay %lld", (long long) del);

        /* Server behind by 1.25 s, symmetric 20 ms path. */
        t1 = base;
        t2 = base + 42949673ULL - 5368709120ULL; /* +10 ms - 1.25 s */
        t3 = t2;
        t4 = base + 85899346ULL;                 /* +20 ms */
        sntp_offset_delay(t1, t2, t3, t4, &off, &del);
        cr_expect(llabs(off + 1250000000LL) < 10, "offset %lld", (long long) off);
        cr_expect(llabs(del - 20000000LL) < 10, "delay %lld", (long long) del);

        /* Across the era rollover: T1 just before, the rest just after. */
        t1 = 0xffffffff00000000ULL; /* era 0, last second */
        t2 = (1ULL << 32);          /* +2 s */
        t3 = t2;
        t4 = 0;                     /* +1 s */
        sntp_offset_delay(t1, t2, t3, t4, &off, &del);
        cr_expect_eq(off, 1500000000LL);
        cr_expect_eq(del, 1000000000LL);
}

Test(sntp, reply_check) {
        uint64_t tx = 0x1122334455667788ULL;
        struct sntp_packet ok = { .version = 4, .mode = 4, .stratum = 2, .orig_ts = tx, .rx_ts = 5, .tx_ts = 6 };
        struct sntp_packet p = ok;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_VALID);
        p.version = 3;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_VALID);
        p = ok, p.mode = 3;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_BAD_MODE);
        p = ok, p.version = 5;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_BAD_VERSION);
        p = ok, p.orig_ts = tx + 1;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_ORIGIN_MISMATCH);
        p = ok, p.stratum = 0;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_KISS_OF_DEATH);
        p.orig_ts = 0; /* an unmatched kiss is not believed */
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_ORIGIN_MISMATCH);
        p = ok, p.stratum = 16;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_BAD_STRATUM);
        p = ok, p.leap = 3;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_UNSYNCHRONIZED);
        p = ok, p.leap = 1; /* a leap second announced is fine */
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_VALID);
        p = ok, p.tx_ts = 0;
        cr_expect_eq(sntp_reply_check(&p, tx), SNTP_ZERO_TIMESTAMP);
        for (int v = 0; v < _SNTP_VERDICT_MAX; v++)
                cr_expect_str_neq(sntp_verdict_to_string((enum sntp_verdict) v), "unknown");
}

/* ---- dates -------------------------------------------------------------- */

Test(dates, imf_fixdate) {
        int64_t t = 0;
        cr_expect_eq(date_parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT", &t), 0);
        cr_expect_eq(t, 784111777);
        cr_expect_eq(date_parse_imf_fixdate("Thu, 01 Jan 1970 00:00:00 GMT", &t), 0);
        cr_expect_eq(t, 0);
        cr_expect_eq(date_parse_imf_fixdate("Thu, 29 Feb 2024 23:59:59 GMT", &t), 0);
        cr_expect_eq(t, 1709251199);
        cr_expect_eq(date_parse_imf_fixdate("Sat, 31 Dec 2016 23:59:60 GMT", &t), 0); /* leap second */
        cr_expect_eq(t, 1483228800);
        cr_expect_eq(date_parse_imf_fixdate("Wed, 31 Dec 1969 23:59:59 GMT", &t), 0);
        cr_expect_eq(t, -1);

        static const char *const bad[] = {
                "",
                "Sun, 06 Nov 1994 08:49:37",
                "Sun, 06 Nov 1994 08:49:37 UTC",
                "Sun, 06 Nov 1994 08:49:37 GMT ",
                "Mon, 06 Nov 1994 08:49:37 GMT", /* wrong day name */
                "sun, 06 Nov 1994 08:49:37 GMT",
                "Sun, 06 nov 1994 08:49:37 GMT",
                "Sun,  6 Nov 1994 08:49:37 GMT",
                "Sun, 06 Nov 94 08:49:37 GMT",
                "Sunday, 06-Nov-94 08:49:37 GMT", /* RFC 850 */
                "Sun Nov  6 08:49:37 1994",       /* asctime */
                "Thu, 30 Feb 2023 08:49:37 GMT",
                "Fri, 29 Feb 2023 00:00:00 GMT",
                "Sun, 06 Nov 1994 24:00:00 GMT",
                "Sun, 06 Nov 1994 08:60:00 GMT",
                "Sun, 06 Nov 1994 08:49:61 GMT",
                "Sun, 00 Nov 1994 08:49:37 GMT",
                "Sun, 06 Xyz 1994 08:49:37 GMT",
                "Sun, 06 Nov 1994 08:4a:37 GMT",
                "Sun, 06 Nov 1994 08-49-37 GMT",
                "Sun, 06 Nov 1994 08:49:37 GMT\n",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                t = 12345;
                cr_expect_eq(date_parse_imf_fixdate(bad[i], &t), -EINVAL, "accepted '%s'", bad[i]);
                cr_expect_eq(t, 12345);
        }
        cr_expect_eq(date_parse_imf_fixdate(NULL, &t), -EINVAL);
        char longer[200];
        memset(longer, 'x', sizeof longer - 1);
        longer[sizeof longer - 1] = '\0';
        cr_expect_eq(date_parse_imf_fixdate(longer, &t), -EINVAL);
}

Test(dates, rfc3339) {
        int64_t ms = 0;
        bool sub = true;
        cr_expect_eq(date_parse_rfc3339("1994-11-06T08:49:37Z", &ms, &sub), 0);
        cr_expect_eq(ms, 784111777000LL);
        cr_expect_not(sub);
        cr_expect_eq(date_parse_rfc3339("1994-11-06T09:49:37.25+01:00", &ms, &sub), 0);
        cr_expect_eq(ms, 784111777250LL);
        cr_expect(sub);
        cr_expect_eq(date_parse_rfc3339("1994-11-06t03:19:37.123456789-05:30", &ms, &sub), 0);
        cr_expect_eq(ms, 784111777123LL);
        cr_expect_eq(date_parse_rfc3339("1994-11-06 08:49:37z", &ms, NULL), 0);
        cr_expect_eq(ms, 784111777000LL);
        static const char *const bad[] = {
                "1994-11-06T08:49:37", "1994-11-06", "1994-11-06T08:49:37.Z", "1994-11-06T08:49Z",
                "1994-13-06T08:49:37Z", "1994-11-31T08:49:37Z", "1994-11-06T08:49:37+0100",
                "1994-11-06T08:49:37+24:00", "1994-11-06T08:49:37Zjunk", "94-11-06T08:49:37Z",
                "1994/11/06T08:49:37Z", "Sun, 06 Nov 1994 08:49:37 GMT",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                cr_expect_eq(date_parse_rfc3339(bad[i], &ms, &sub), -EINVAL, "accepted '%s'", bad[i]);
}

/* ---- DNS names ---------------------------------------------------------- */

Test(dns, name_check) {
        char max[DNS_NAME_MAX + 3];
        /* 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 */
        memset(max, 'a', DNS_NAME_MAX);
        max[63] = max[127] = max[191] = '.';
        max[DNS_NAME_MAX] = '\0';
        static const char *const good[] = { "api.c1.example.com", "localhost", "a-b.c", "example.com.",
                                            "A1.Example.COM", "1a.2b", "xn--bcher-kva.example", "x" };
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
                cr_expect_eq(dns_name_check(good[i], false), 0, "rejected '%s'", good[i]);
        cr_expect_eq(dns_name_check(max, false), 0);
        cr_expect_eq(dns_name_check("*.apps.c1.example.com", true), 0);
        cr_expect_eq(dns_name_check("*.apps.c1.example.com", false), -EINVAL);
        static const char *const bad[] = { "", ".", "a..b", ".a", "-a.com", "a-.com", "a_b.com", "*.", "*",
                                           "a.*.com", "*a.com", "**.com", "a b.com", "1.2.3.4", "a.123",
                                           "example.com..", "ex\xc3\xa9mple.com" };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                cr_expect_eq(dns_name_check(bad[i], true), -EINVAL, "accepted '%s'", bad[i]);
        cr_expect_eq(dns_name_check(NULL, true), -EINVAL);
        char label64[80];
        memset(label64, 'b', 64);
        strcpy(label64 + 64, ".com");
        cr_expect_eq(dns_name_check(label64, false), -EINVAL);
        label64[1] = '.'; /* "b." + 62 b's */
        cr_expect_eq(dns_name_check(label64, false), 0);
        strcat(max, "."); /* a trailing dot does not count */
        cr_expect_eq(dns_name_check(max, false), 0);
        max[DNS_NAME_MAX] = 'a';
        max[DNS_NAME_MAX + 1] = '\0'; /* 254 */
        cr_expect_eq(dns_name_check(max, false), -EINVAL);
}

Test(dns, wildcard_expansion) {
        const uint8_t rnd[6] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02 };
        char out[DNS_NAME_MAX + 2];
        cr_assert_eq(dns_name_expand_wildcard("*.apps.c1.example.com", rnd, out, sizeof out), 0);
        cr_expect_str_eq(out, "muster-deadbeef0102.apps.c1.example.com");
        cr_expect_eq(dns_name_check(out, false), 0);
        cr_expect_eq(dns_name_expand_wildcard("apps.example.com", rnd, out, sizeof out), -EINVAL);
        char small[10];
        cr_expect_eq(dns_name_expand_wildcard("*.example.com", rnd, small, sizeof small), -ENAMETOOLONG);
        /* valid as a wildcard, too long once the label is 19 characters */
        char longname[DNS_NAME_MAX + 1];
        memset(longname, 'a', DNS_NAME_MAX);
        longname[0] = '*';
        longname[1] = longname[63] = longname[127] = longname[191] = '.';
        longname[DNS_NAME_MAX] = '\0';
        cr_expect_eq(dns_name_check(longname, true), 0);
        cr_expect_eq(dns_name_expand_wildcard(longname, rnd, out, sizeof out), -ENAMETOOLONG);
}

/* ---- argument checks ---------------------------------------------------- */

Test(args, connectivity) {
        json_object *out = NULL;
        cr_expect_eq(step_connectivity_check(NULL, &out), -EINVAL);
        json_object *a = parse("{\"peers\":[]}");
        cr_expect_eq(step_connectivity_check(a, NULL), -EINVAL);
        json_object_put(a);
        expect_einval(step_connectivity_check, "[]");
        expect_einval(step_connectivity_check, "{}");
        expect_einval(step_connectivity_check, "{\"peers\":{}}");
        expect_einval(step_connectivity_check, "{\"peers\":[1]}");
        expect_einval(step_connectivity_check, "{\"peers\":[{\"addresses\":[\"127.0.0.1\"]}]}");
        expect_einval(step_connectivity_check, "{\"peers\":[{\"host_id\":7,\"addresses\":[]}]}");
        expect_einval(step_connectivity_check, "{\"peers\":[{\"host_id\":\"\",\"addresses\":[]}]}");
        expect_einval(step_connectivity_check, "{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":\"127.0.0.1\"}]}");
        expect_einval(step_connectivity_check, "{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[1]}]}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"count\":0}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"count\":11}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"count\":\"3\"}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"count\":2.5}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"timeout_ms\":5}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"timeout_ms\":30001}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"tcp_port\":0}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"tcp_port\":65536}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"method\":\"udp\"}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"method\":\"tcp\"}"); /* needs tcp_port */
        expect_einval(step_connectivity_check, "{\"peers\":[],\"mtu_probe\":\"yes\"}");
        expect_einval(step_connectivity_check, "{\"peers\":[],\"mtu_probe\":1}");

        /* caps: 1000 peers, 16 addresses each */
        json_object *args = json_object_new_object(), *peers = json_object_new_array();
        json_object_object_add(args, "peers", peers);
        for (int i = 0; i < CONN_MAX_PEERS + 1; i++) {
                json_object *p = json_object_new_object();
                json_object_object_add(p, "host_id", json_object_new_string(HOST_A));
                json_object_object_add(p, "addresses", json_object_new_array());
                json_object_array_add(peers, p);
        }
        cr_expect_eq(step_connectivity_check(args, &out), -EINVAL);
        json_object_put(args);
        args = json_object_new_object();
        peers = json_object_new_array();
        json_object *p = json_object_new_object(), *addrs = json_object_new_array();
        json_object_object_add(args, "peers", peers);
        json_object_array_add(peers, p);
        json_object_object_add(p, "host_id", json_object_new_string(HOST_A));
        json_object_object_add(p, "addresses", addrs);
        for (int i = 0; i < CONN_MAX_ADDRESSES + 1; i++)
                json_object_array_add(addrs, json_object_new_string("127.0.0.1"));
        cr_expect_eq(step_connectivity_check(args, &out), -EINVAL);
        json_object_put(args);

        /* an empty list is fine, and needs no network */
        cr_assert_eq(run_step(step_connectivity_check, "{\"peers\":[]}", &out), 0);
        cr_expect_eq(json_object_array_length(tu_json_get(out, "peers")), 0);
        json_object_put(out);
}

Test(args, connectivity_bad_address_is_per_entry) {
        json_object *out;
        cr_assert_eq(run_step(step_connectivity_check,
                              "{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"not-an-ip\",\"192.0.2.300\"]},"
                              "{\"host_id\":\"" HOST_B "\"}]}",
                              &out),
                     0);
        cr_expect_not(jbool(out, "peers.0.reachable"));
        cr_expect_not(jbool(out, "peers.0.addresses.0.reachable"));
        cr_expect_str_eq(jstr(out, "peers.0.addresses.0.error"), "not an IP address");
        cr_expect_str_eq(jstr(out, "peers.0.addresses.1.error"), "not an IP address");
        cr_expect_eq(jnum(out, "peers.0.addresses.0.loss_pct"), 100.0);
        cr_expect_eq(jnum(out, "peers.0.addresses.0.sent"), 0);
        cr_expect(jnull(out, "peers.0.addresses.0.method"));
        cr_expect_str_eq(jstr(out, "peers.1.host_id"), HOST_B);
        cr_expect_not(jbool(out, "peers.1.reachable"));
        cr_expect_eq(json_object_array_length(tu_json_get(out, "peers.1.addresses")), 0);
        json_object_put(out);
}

Test(args, ntp) {
        json_object *out = NULL;
        cr_expect_eq(step_ntp_synchronizer(NULL, &out), -EINVAL);
        expect_einval(step_ntp_synchronizer, "{}"); /* neither sources nor a date */
        expect_einval(step_ntp_synchronizer, "{\"ntp_sources\":[]}");
        expect_einval(step_ntp_synchronizer, "{\"ntp_sources\":\"127.0.0.1\"}");
        expect_einval(step_ntp_synchronizer, "{\"ntp_sources\":[123]}");
        expect_einval(step_ntp_synchronizer, "{\"ntp_sources\":[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
                                             "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"]}");
        expect_einval(step_ntp_synchronizer, "{\"coordinator_date\":\"yesterday\"}");
        expect_einval(step_ntp_synchronizer, "{\"coordinator_date\":1700000000}");
        expect_einval(step_ntp_synchronizer, "{\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\",\"timeout_ms\":0}");
        expect_einval(step_ntp_synchronizer, "{\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\",\"max_offset_ms\":0}");
        expect_einval(step_ntp_synchronizer, "{\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\",\"max_offset_ms\":true}");
}

Test(args, ntp_bad_sources_are_per_entry) {
        json_object *out;
        /* none of these is sent anything: each fails to parse */
        cr_assert_eq(run_step(step_ntp_synchronizer,
                              "{\"ntp_sources\":[\"bad host!\",\"127.0.0.1:0\",\"127.0.0.1:99999\",\"[::1\","
                              "\"host:\",\"-x.example\"],\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\"}",
                              &out),
                     0);
        for (int i = 0; i < 6; i++) {
                char path[64];
                snprintf(path, sizeof path, "sources.%d.error", i);
                cr_expect(jstr(out, path), "source %d has no error", i);
                snprintf(path, sizeof path, "sources.%d.reachable", i);
                cr_expect_not(jbool(out, path));
        }
        /* 1994 is decades behind this clock */
        cr_expect_str_eq(jstr(out, "method"), "coordinator-date");
        cr_expect_not(jbool(out, "synced"));
        cr_expect_lt(jnum(out, "offset_ms"), -9e11);
        json_object_put(out);
}

Test(args, domain) {
        json_object *out = NULL;
        cr_expect_eq(step_domain_resolution(NULL, &out), -EINVAL);
        expect_einval(step_domain_resolution, "{}");
        expect_einval(step_domain_resolution, "{\"names\":\"localhost\"}");
        expect_einval(step_domain_resolution, "{\"names\":[null]}");
        expect_einval(step_domain_resolution, "{\"names\":[42]}");
        expect_einval(step_domain_resolution, "{\"names\":[],\"timeout_ms\":9}");
        expect_einval(step_domain_resolution, "{\"names\":[],\"timeout_ms\":\"1s\"}");
        json_object *args = json_object_new_object(), *names = json_object_new_array();
        json_object_object_add(args, "names", names);
        for (int i = 0; i < DNS_MAX_NAMES + 1; i++)
                json_object_array_add(names, json_object_new_string("localhost"));
        cr_expect_eq(step_domain_resolution(args, &out), -EINVAL);
        json_object_put(args);
        char longname[300];
        memset(longname, 'a', 255);
        longname[255] = '\0';
        args = json_object_new_object();
        names = json_object_new_array();
        json_object_object_add(args, "names", names);
        json_object_array_add(names, json_object_new_string(longname));
        cr_expect_eq(step_domain_resolution(args, &out), -EINVAL);
        json_object_put(args);

        /* syntactically bad names are reported, not looked up */
        cr_assert_eq(run_step(step_domain_resolution, "{\"names\":[\"bad_name.example\",\"a.*.example\",\"\"]}", &out), 0);
        for (int i = 0; i < 3; i++) {
                char path[64];
                snprintf(path, sizeof path, "resolutions.%d.error", i);
                cr_expect_str_eq(jstr(out, path), "not a valid host name");
        }
        cr_expect_eq(json_object_array_length(tu_json_get(out, "resolutions.0.ipv4_addresses")), 0);
        json_object_put(out);
}

/* ---- SNTP exchanges on loopback ----------------------------------------- */

static json_object *ntp_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_object *ntp_run(const char *fmt, ...) {
        char *text = NULL;
        va_list ap;
        json_object *out;
        va_start(ap, fmt);
        cr_assert(vasprintf(&text, fmt, ap) >= 0);
        va_end(ap);
        int r = run_step(step_ntp_synchronizer, text, &out);
        cr_assert_eq(r, 0, "ntp step failed (%d) on %s", r, text);
        free(text);
        return out;
}

Test(ntp, server_three_seconds_ahead) {
        struct responder rs;
        responder_start(&rs, AF_INET, RESP_NORMAL, 3000, 0);
        json_object *out = ntp_run("{\"ntp_sources\":[\"127.0.0.1:%u\"],\"timeout_ms\":2000}", rs.port);
        responder_stop(&rs);
        cr_expect_str_eq(jstr(out, "method"), "sntp");
        cr_expect_not(jbool(out, "synced"));
        cr_expect(fabs(jnum(out, "offset_ms") - 3000) < 50, "offset %f", jnum(out, "offset_ms"));
        cr_expect(jbool(out, "sources.0.reachable"));
        cr_expect_eq(jnum(out, "sources.0.stratum"), 2);
        cr_expect_geq(jnum(out, "sources.0.delay_ms"), 0);
        cr_expect_lt(jnum(out, "sources.0.delay_ms"), 100);
        cr_expect_str_eq(jstr(out, "sources.0.address"), "127.0.0.1");
        cr_expect(jnull(out, "sources.0.error"));
        cr_expect_eq(jnum(out, "max_offset_ms"), 500);
        cr_expect_eq(rs.served, 1);
        json_object_put(out);
}

/* A name goes through getaddrinfo first; "localhost" is in /etc/hosts. */
Test(ntp, source_by_name) {
        struct responder rs;
        responder_start_dual(&rs, RESP_NORMAL, -1500);
        json_object *out = ntp_run("{\"ntp_sources\":[\"localhost:%u\"],\"max_offset_ms\":2000}", rs.port);
        responder_stop(&rs);
        cr_expect_str_eq(jstr(out, "method"), "sntp");
        cr_expect(jbool(out, "synced"));
        cr_expect(fabs(jnum(out, "offset_ms") + 1500) < 50, "offset %f", jnum(out, "offset_ms"));
        const char *addr = jstr(out, "sources.0.address");
        cr_expect(addr && (strcmp(addr, "127.0.0.1") == 0 || strcmp(addr, "::1") == 0), "address %s", addr);
        cr_expect_eq(jnum(out, "max_offset_ms"), 2000);
        json_object_put(out);
}

Test(ntp, server_in_step_ipv6_and_threshold) {
        struct responder rs;
        responder_start(&rs, AF_INET6, RESP_NORMAL, 0, 0);
        json_object *out = ntp_run("{\"ntp_sources\":[\"[::1]:%u\"],\"timeout_ms\":2000}", rs.port);
        cr_expect_str_eq(jstr(out, "method"), "sntp");
        cr_expect(jbool(out, "synced"));
        cr_expect(fabs(jnum(out, "offset_ms")) < 50, "offset %f", jnum(out, "offset_ms"));
        cr_expect_str_eq(jstr(out, "sources.0.address"), "::1");
        json_object_put(out);
        rs.offset_ns = 200 * 1000000LL; /* 200 ms ahead: out of a 100 ms bound */
        out = ntp_run("{\"ntp_sources\":[\"[::1]:%u\"],\"max_offset_ms\":100}", rs.port);
        responder_stop(&rs);
        cr_expect_not(jbool(out, "synced"));
        cr_expect(fabs(jnum(out, "offset_ms") - 200) < 50, "offset %f", jnum(out, "offset_ms"));
        json_object_put(out);
}

Test(ntp, lowest_delay_wins) {
        struct responder slow, fast;
        responder_start(&slow, AF_INET, RESP_NORMAL, 5000, 150);
        responder_start(&fast, AF_INET, RESP_NORMAL, 1000, 0);
        json_object *out = ntp_run("{\"ntp_sources\":[\"127.0.0.1:%u\",\"127.0.0.1:%u\"]}", slow.port, fast.port);
        responder_stop(&slow);
        responder_stop(&fast);
        char want[32];
        snprintf(want, sizeof want, "127.0.0.1:%u", fast.port);
        cr_expect_str_eq(jstr(out, "source"), want);
        cr_expect(fabs(jnum(out, "offset_ms") - 1000) < 50, "offset %f", jnum(out, "offset_ms"));
        cr_expect(jbool(out, "sources.0.reachable"));
        cr_expect_geq(jnum(out, "sources.0.delay_ms"), 140);
        cr_expect_lt(jnum(out, "sources.1.delay_ms"), 50);
        /* all of the slow path is on the way out: half of it skews the offset */
        cr_expect(fabs(jnum(out, "sources.0.offset_ms") - 5075) < 50, "slow offset %f",
                  jnum(out, "sources.0.offset_ms"));
        json_object_put(out);
}

Test(ntp, silent_source_falls_back_to_coordinator_date) {
        struct responder rs;
        responder_start(&rs, AF_INET, RESP_SILENT, 0, 0);
        /* the coordinator's clock, 10 s ahead of ours, as an HTTP Date */
        time_t ahead = time(NULL) + 10;
        struct tm tm;
        char date[64];
        gmtime_r(&ahead, &tm);
        strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        json_object *out = ntp_run("{\"ntp_sources\":[\"127.0.0.1:%u\"],\"timeout_ms\":300,"
                                   "\"coordinator_date\":\"%s\"}", rs.port, date);
        responder_stop(&rs);
        cr_expect_str_eq(jstr(out, "method"), "coordinator-date");
        cr_expect_str_eq(jstr(out, "source"), "coordinator");
        cr_expect_not(jbool(out, "synced"));
        cr_expect(fabs(jnum(out, "offset_ms") - 10000) <= 1100, "offset %f", jnum(out, "offset_ms"));
        cr_expect_not(jbool(out, "sources.0.reachable"));
        cr_expect_str_eq(jstr(out, "sources.0.error"), "timed out");
        json_object_put(out);
}

Test(ntp, coordinator_date_rfc3339_only) {
        char date[64];
        int64_t now = real_ns();
        time_t s = (time_t) (now / 1000000000LL);
        struct tm tm;
        gmtime_r(&s, &tm);
        size_t n = strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(date + n, sizeof date - n, ".%03dZ", (int) (now / 1000000 % 1000));
        json_object *out = ntp_run("{\"coordinator_date\":\"%s\"}", date);
        cr_expect_str_eq(jstr(out, "method"), "coordinator-date");
        cr_expect_not(jbool(out, "synced"), "the coordinator's Date is no NTP source");
        cr_expect(fabs(jnum(out, "offset_ms")) < 200, "offset %f", jnum(out, "offset_ms"));
        cr_expect_eq(json_object_array_length(tu_json_get(out, "sources")), 0);
        json_object_put(out);

        /* a Date received 5 s before the step started is 5 s old */
        now = real_ns() - 5000000000LL;
        s = (time_t) (now / 1000000000LL);
        gmtime_r(&s, &tm);
        n = strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(date + n, sizeof date - n, ".%03dZ", (int) (now / 1000000 % 1000));
        out = ntp_run("{\"coordinator_date\":\"%s\",\"coordinator_date_age_ms\":5000}", date);
        cr_expect(fabs(jnum(out, "offset_ms")) < 200, "offset %f", jnum(out, "offset_ms"));
        json_object_put(out);
        expect_einval(step_ntp_synchronizer, "{\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\","
                                             "\"coordinator_date_age_ms\":-1}");
}

Test(ntp, rejected_replies) {
        struct responder kod, leap, wrong, s16;
        uint16_t closed = free_tcp_port(); /* same number, UDP: most likely closed too */
        responder_start(&kod, AF_INET, RESP_KOD, 0, 0);
        responder_start(&leap, AF_INET, RESP_LEAP3, 0, 0);
        responder_start(&wrong, AF_INET, RESP_WRONG_ORIGIN, 0, 0);
        responder_start(&s16, AF_INET, RESP_STRATUM16, 0, 0);
        json_object *out = ntp_run("{\"ntp_sources\":[\"127.0.0.1:%u\",\"127.0.0.1:%u\",\"127.0.0.1:%u\","
                                   "\"127.0.0.1:%u\",\"127.0.0.1:%u\"],\"timeout_ms\":400}",
                                   kod.port, leap.port, wrong.port, s16.port, closed);
        responder_stop(&kod);
        responder_stop(&leap);
        responder_stop(&wrong);
        responder_stop(&s16);
        cr_expect_not(jbool(out, "synced"));
        cr_expect(jnull(out, "method"));
        cr_expect(jnull(out, "offset_ms"));
        cr_expect(jstr(out, "error"));
        cr_expect_str_eq(jstr(out, "sources.0.error"), "kiss-o'-death RATE");
        cr_expect_str_eq(jstr(out, "sources.1.error"), "server is not synchronised (leap indicator 3)");
        cr_expect_str_eq(jstr(out, "sources.2.error"), "timed out (reply does not match the request)");
        cr_expect_str_eq(jstr(out, "sources.3.error"), "server is not synchronised (stratum above 15)");
        cr_expect(jstr(out, "sources.4.error"));
        for (int i = 0; i < 5; i++) {
                char path[64];
                snprintf(path, sizeof path, "sources.%d.reachable", i);
                cr_expect_not(jbool(out, path));
        }
        json_object_put(out);
}

/* ---- connectivity on loopback ------------------------------------------- */

static json_object *conn_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_object *conn_run(const char *fmt, ...) {
        char *text = NULL;
        va_list ap;
        json_object *out;
        va_start(ap, fmt);
        cr_assert(vasprintf(&text, fmt, ap) >= 0);
        va_end(ap);
        int r = run_step(step_connectivity_check, text, &out);
        cr_assert_eq(r, 0, "connectivity step failed (%d) on %s", r, text);
        free(text);
        return out;
}

static void expect_reached(json_object *out, const char *addr_path, const char *method) {
        char p[128];
        snprintf(p, sizeof p, "%s.reachable", addr_path);
        cr_expect(jbool(out, p), "%s not reachable: %s", addr_path, json_object_to_json_string(out));
        snprintf(p, sizeof p, "%s.loss_pct", addr_path);
        cr_expect_eq(jnum(out, p), 0);
        snprintf(p, sizeof p, "%s.rtt_avg_ms", addr_path);
        double avg = jnum(out, p);
        snprintf(p, sizeof p, "%s.rtt_min_ms", addr_path);
        double mn = jnum(out, p);
        snprintf(p, sizeof p, "%s.rtt_max_ms", addr_path);
        double mx = jnum(out, p);
        cr_expect(mn <= avg && avg <= mx && mn >= 0 && mx < 500, "rtt %f/%f/%f", mn, avg, mx);
        snprintf(p, sizeof p, "%s.method", addr_path);
        if (method)
                cr_expect_str_eq(jstr(out, p), method);
        snprintf(p, sizeof p, "%s.error", addr_path);
        cr_expect(jnull(out, p));
}

Test(connectivity, loopback_v4_v6) {
        uint16_t port = free_tcp_port(); /* for the TCP fallback where ICMP is not permitted */
        json_object *out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\",\"::1\"]}],"
                                    "\"count\":3,\"timeout_ms\":1000,\"tcp_port\":%u}", port);
        expect_reached(out, "peers.0.addresses.0", NULL);
        expect_reached(out, "peers.0.addresses.1", NULL);
        cr_expect_str_eq(jstr(out, "peers.0.addresses.1.address"), "::1");
        cr_expect_eq(jnum(out, "peers.0.addresses.0.sent"), 3);
        cr_expect_eq(jnum(out, "peers.0.addresses.0.received"), 3);
        cr_expect(jbool(out, "peers.0.reachable"));
        cr_expect_eq(jnum(out, "peers.0.loss_pct"), 0);
        cr_expect_str_eq(jstr(out, "peers.0.host_id"), HOST_A);
        json_object_put(out);
}

/* This test's process (Criterion gives each test its own) in a network
 * namespace of its own with lo up, ping sockets granted to every group or
 * to none (net.ipv4.ping_group_range is per namespace), and CAP_NET_RAW
 * kept or dropped: each way ICMP can be permitted, or not, set here
 * rather than found. Without the privilege to do so the test is skipped,
 * and counted as such; as root it must work. */
static void private_net(bool ping_sockets, bool raw) {
        if (unshare(CLONE_NEWNET) < 0) {
                int e = errno;
                if (e == EPERM && geteuid() != 0)
                        cr_skip_test("unshare(CLONE_NEWNET): %s; run as root", strerror(e));
                cr_assert_fail("unshare(CLONE_NEWNET): %s", strerror(e));
        }
        tu_must("ip link set lo up");
        FILE *f = fopen("/proc/sys/net/ipv4/ping_group_range", "we");
        cr_assert_not_null(f, "ping_group_range: %s", strerror(errno));
        fprintf(f, ping_sockets ? "0 2147483647\n" : "1 0\n");
        cr_assert_eq(fclose(f), 0, "ping_group_range: %s", strerror(errno));
        if (!raw) {
                struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
                struct __user_cap_data_struct data[2];
                cr_assert(syscall(SYS_capget, &hdr, data) == 0);
                data[CAP_NET_RAW / 32].effective &= ~(1U << (CAP_NET_RAW % 32));
                data[CAP_NET_RAW / 32].permitted &= ~(1U << (CAP_NET_RAW % 32));
                cr_assert(syscall(SYS_capset, &hdr, data) == 0, "capset: %s", strerror(errno));
        }
        /* The premise, checked: what the step will find. */
        int s4 = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP), r4 = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
        cr_assert_eq(s4 >= 0, ping_sockets, "ping socket %s", s4 >= 0 ? "allowed" : strerror(errno));
        cr_assert_eq(r4 >= 0, raw, "raw socket %s", r4 >= 0 ? "allowed" : strerror(errno));
        if (s4 >= 0)
                close(s4);
        if (r4 >= 0)
                close(r4);
}

static void expect_icmp_refused(json_object *out, const char *addr_path) {
        char p[128];
        snprintf(p, sizeof p, "%s.reachable", addr_path);
        cr_expect_not(jbool(out, p), "%s: %s", p, json_object_to_json_string(out));
        snprintf(p, sizeof p, "%s.method", addr_path);
        cr_expect(jnull(out, p), "%s: %s", p, json_object_to_json_string(out));
        snprintf(p, sizeof p, "%s.error", addr_path);
        cr_expect(jstr(out, p), "%s: %s", p, json_object_to_json_string(out));
}

#define ICMP_ARGS "{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\",\"::1\"]}]," \
                  "\"count\":2,\"timeout_ms\":500,\"method\":\"icmp\"}"

/* The full-MTU probe on loopback: lo's MTU (65536) is more than an IP
 * packet holds, so the largest packet (65535 bytes) is tried, and passes. */
static void expect_full_mtu(json_object *out, const char *addr_path) {
        char p[128];
        snprintf(p, sizeof p, "%s.mtu_ok", addr_path);
        cr_expect(jbool(out, p), "%s: %s", p, json_object_to_json_string(out));
        snprintf(p, sizeof p, "%s.mtu", addr_path);
        cr_expect_eq(jnum(out, p), 65535, "%s", p);
        snprintf(p, sizeof p, "%s.path_mtu", addr_path);
        cr_expect(jnull(out, p), "%s", p);
        snprintf(p, sizeof p, "%s.mtu_error", addr_path);
        cr_expect(jnull(out, p), "%s", p);
}

Test(connectivity, icmp_by_ping_socket) {
        private_net(true, false);
        json_object *out = conn_run(ICMP_ARGS);
        expect_reached(out, "peers.0.addresses.0", "icmp");
        expect_reached(out, "peers.0.addresses.1", "icmp");
        expect_full_mtu(out, "peers.0.addresses.0");
        expect_full_mtu(out, "peers.0.addresses.1");
        cr_expect(jbool(out, "peers.0.mtu_ok"));
        cr_expect_eq(jnum(out, "peers.0.mtu"), 65535);
        json_object_put(out);
}

Test(connectivity, icmp_by_raw_socket) {
        private_net(false, true);
        json_object *out = conn_run(ICMP_ARGS);
        expect_reached(out, "peers.0.addresses.0", "icmp");
        expect_reached(out, "peers.0.addresses.1", "icmp");
        expect_full_mtu(out, "peers.0.addresses.0");
        expect_full_mtu(out, "peers.0.addresses.1");
        json_object_put(out);
        /* A smaller MTU on lo is the one tried. */
        tu_must("ip link set lo mtu 1400");
        out = conn_run(ICMP_ARGS);
        cr_expect(jbool(out, "peers.0.addresses.0.mtu_ok"), "%s", json_object_to_json_string(out));
        cr_expect_eq(jnum(out, "peers.0.addresses.0.mtu"), 1400);
        cr_expect_eq(jnum(out, "peers.0.addresses.1.mtu"), 1400);
        cr_expect_eq(jnum(out, "peers.0.mtu"), 1400);
        json_object_put(out);
        /* Without the probe, no MTU members. */
        out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\"]}],"
                       "\"count\":1,\"method\":\"icmp\",\"mtu_probe\":false}");
        expect_reached(out, "peers.0.addresses.0", "icmp");
        cr_expect_null(tu_json_get(out, "peers.0.addresses.0.mtu_ok"), "%s", json_object_to_json_string(out));
        cr_expect_not(json_object_object_get_ex(tu_json_get(out, "peers.0"), "mtu_ok", NULL));
        json_object_put(out);
}

Test(connectivity, icmp_only_when_permitted) {
        private_net(false, false);
        json_object *out = conn_run(ICMP_ARGS);
        expect_icmp_refused(out, "peers.0.addresses.0");
        expect_icmp_refused(out, "peers.0.addresses.1");
        cr_expect(jnull(out, "peers.0.addresses.0.mtu_ok"));
        cr_expect_str_eq(jstr(out, "peers.0.addresses.0.mtu_error"), "not reachable");
        cr_expect(jnull(out, "peers.0.mtu_ok"), "nothing probed");
        json_object_put(out);
}

Test(connectivity, tcp_refused_counts_as_reached) {
        uint16_t port = free_tcp_port();
        json_object *out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\",\"::1\"]}],"
                                    "\"count\":3,\"timeout_ms\":1000,\"tcp_port\":%u,\"method\":\"tcp\"}", port);
        expect_reached(out, "peers.0.addresses.0", "tcp");
        expect_reached(out, "peers.0.addresses.1", "tcp");
        json_object_put(out);
}

Test(connectivity, tcp_listener) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        cr_assert(bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0);
        cr_assert(listen(fd, 16) == 0);
        cr_assert(getsockname(fd, (struct sockaddr *) &sa, &len) == 0);
        json_object *out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\"]}],"
                                    "\"count\":2,\"tcp_port\":%u,\"method\":\"tcp\"}", ntohs(sa.sin_port));
        close(fd);
        expect_reached(out, "peers.0.addresses.0", "tcp");
        json_object_put(out);
}

/* A listener whose accept queue is full drops SYNs: connects to it hang
 * until the probe times out. Twenty addresses, two rounds, 300 ms each:
 * every probe ends as lost at its deadline, none hangs the step (Criterion's
 * timeout). That they run at once is measured by bench/steps-net. */
Test(connectivity, tcp_probes_end_lost_at_their_deadline, .timeout = 60) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int lfd = socket(AF_INET, SOCK_STREAM, 0), fill[4];
        cr_assert(bind(lfd, (struct sockaddr *) &sa, sizeof sa) == 0);
        cr_assert(listen(lfd, 0) == 0);
        cr_assert(getsockname(lfd, (struct sockaddr *) &sa, &len) == 0);
        for (int i = 0; i < 4; i++) { /* fill the queue; the later ones hang, non-blocking */
                fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
                (void) connect(fill[i], (struct sockaddr *) &sa, sizeof sa);
        }
        usleep(100000);
        char addrs[512] = "";
        for (int i = 0; i < 5; i++)
                strcat(addrs, i ? ",\"127.0.0.1\"" : "\"127.0.0.1\"");
        json_object *out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[%s]},"
                                    "{\"host_id\":\"" HOST_B "\",\"addresses\":[%s]},"
                                    "{\"host_id\":\"" HOST_A "\",\"addresses\":[%s]},"
                                    "{\"host_id\":\"" HOST_B "\",\"addresses\":[%s]}],"
                                    "\"count\":2,\"timeout_ms\":300,\"tcp_port\":%u,\"method\":\"tcp\"}",
                                    addrs, addrs, addrs, addrs, ntohs(sa.sin_port));
        for (int i = 0; i < 4; i++)
                close(fill[i]);
        close(lfd);
        for (int p = 0; p < 4; p++) {
                char path[64];
                snprintf(path, sizeof path, "peers.%d.reachable", p);
                cr_expect_not(jbool(out, path), "%s", json_object_to_json_string(out));
                for (int a = 0; a < 5; a++) {
                        snprintf(path, sizeof path, "peers.%d.addresses.%d.loss_pct", p, a);
                        cr_expect_eq(jnum(out, path), 100, "%s", path);
                        snprintf(path, sizeof path, "peers.%d.addresses.%d.sent", p, a);
                        cr_expect_eq(jnum(out, path), 2, "%s", path);
                        snprintf(path, sizeof path, "peers.%d.addresses.%d.received", p, a);
                        cr_expect_eq(jnum(out, path), 0, "%s", path);
                }
        }
        cr_expect(tu_json_get(out, "peers.0.addresses.0.rtt_avg_ms") == NULL);
        json_object_put(out);
}

/* "auto" takes ICMP where it is permitted (here: ping sockets granted,
 * no CAP_NET_RAW), and falls back to TCP where it is not (neither). */
Test(connectivity, auto_uses_icmp_when_ping_sockets_are_granted) {
        private_net(true, false);
        uint16_t port = free_tcp_port();
        json_object *out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\",\"::1\"]}],"
                                    "\"count\":2,\"tcp_port\":%u}", port);
        expect_reached(out, "peers.0.addresses.0", "icmp");
        expect_reached(out, "peers.0.addresses.1", "icmp");
        json_object_put(out);
}

Test(connectivity, falls_back_to_tcp_without_icmp) {
        private_net(false, false);
        uint16_t port = free_tcp_port();
        json_object *out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\",\"::1\"]}],"
                                    "\"count\":2,\"tcp_port\":%u}", port);
        expect_reached(out, "peers.0.addresses.0", "tcp");
        expect_reached(out, "peers.0.addresses.1", "tcp");
        /* The MTU probe needs ICMP echo: not probed, and said why. */
        cr_expect(jnull(out, "peers.0.addresses.0.mtu_ok"), "%s", json_object_to_json_string(out));
        cr_expect_str_eq(jstr(out, "peers.0.addresses.0.mtu_error"), "needs ICMP echo");
        cr_expect(jnull(out, "peers.0.mtu_ok"));
        json_object_put(out);
        out = conn_run("{\"peers\":[{\"host_id\":\"" HOST_A "\",\"addresses\":[\"127.0.0.1\"]}],\"count\":1}");
        cr_expect_not(jbool(out, "peers.0.addresses.0.reachable"));
        cr_expect_str_eq(jstr(out, "peers.0.addresses.0.error"),
                         "no ICMP echo here (Operation not permitted) and no tcp_port was given");
        json_object_put(out);
}

Test(connectivity, many_loopback_addresses) {
        /* 127.0.0.0/8 is all local: 16 peers x 16 addresses, all answer */
        json_object *args = json_object_new_object(), *peers = json_object_new_array();
        json_object_object_add(args, "peers", peers);
        json_object_object_add(args, "count", json_object_new_int(3));
        json_object_object_add(args, "tcp_port", json_object_new_int(free_tcp_port()));
        for (int i = 0; i < 16; i++) {
                json_object *p = json_object_new_object(), *a = json_object_new_array();
                json_object_object_add(p, "host_id", json_object_new_string(i % 2 ? HOST_A : HOST_B));
                json_object_object_add(p, "addresses", a);
                for (int k = 0; k < 16; k++) {
                        char buf[32];
                        snprintf(buf, sizeof buf, "127.0.%d.%d", i, k + 1);
                        json_object_array_add(a, json_object_new_string(buf));
                }
                json_object_array_add(peers, p);
        }
        json_object *out = NULL;
        cr_assert_eq(step_connectivity_check(args, &out), 0);
        json_object_put(args);
        for (int i = 0; i < 16; i++)
                for (int k = 0; k < 16; k++) {
                        char path[64];
                        snprintf(path, sizeof path, "peers.%d.addresses.%d.received", i, k);
                        cr_expect_eq(jnum(out, path), 3, "%s", path);
                }
        json_object_put(out);
}

/* ---- domain resolution -------------------------------------------------- */

/* One lookup goes to the system resolver: a wildcard under the reserved
 * .invalid TLD (RFC 6761), which must fail (no answer, or "timed out" at
 * the deadline: an error either way). */
Test(dns, resolve_localhost_and_invalid) {
        json_object *out;
        cr_assert_eq(run_step(step_domain_resolution,
                              "{\"names\":[\"localhost\",\"*.nothing.invalid\"],\"timeout_ms\":3000}", &out),
                     0);
        cr_expect_str_eq(jstr(out, "resolutions.0.name"), "localhost");
        cr_expect(jnull(out, "resolutions.0.error"), "localhost: %s", json_object_to_json_string(out));
        json_object *v4 = tu_json_get(out, "resolutions.0.ipv4_addresses");
        bool found = false;
        for (size_t i = 0; v4 && i < json_object_array_length(v4); i++)
                found |= strcmp(json_object_get_string(json_object_array_get_idx(v4, i)), "127.0.0.1") == 0;
        cr_expect(found, "no 127.0.0.1 for localhost: %s", json_object_to_json_string(out));

        cr_expect_str_eq(jstr(out, "resolutions.1.name"), "*.nothing.invalid");
        const char *q = jstr(out, "resolutions.1.queried_name");
        cr_assert(q);
        cr_expect(strncmp(q, "muster-", 7) == 0 && strlen(q) == 19 + strlen(".nothing.invalid") &&
                  strcmp(q + 19, ".nothing.invalid") == 0, "queried %s", q);
        cr_expect(jstr(out, "resolutions.1.error"), "nothing.invalid resolved: %s", json_object_to_json_string(out));
        cr_expect_eq(json_object_array_length(tu_json_get(out, "resolutions.1.ipv4_addresses")), 0);
        cr_expect_eq(json_object_array_length(tu_json_get(out, "resolutions.1.ipv6_addresses")), 0);
        json_object_put(out);
}
