/* Network step runners (steps_net.h): ICMP/TCP reachability of the peers,
 * the clock offset from SNTP sources or the coordinator's Date, and the
 * resolution of the cluster's names. Pure helpers first, then the shared
 * deadline-bounded resolver, then the three runners. */
#include "steps_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/errqueue.h>
#include <linux/icmp.h> /* ICMP_FILTER; not with <net/if.h>, hence IFNAMSIZ */
#include <linux/if.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "run.h"
#include "steps.h"

#define NS_PER_SEC 1000000000LL
#define NS_PER_MS 1000000LL

/* ---- small helpers ------------------------------------------------------ */

static int64_t clock_ns(clockid_t c) {
        struct timespec ts;
        clock_gettime(c, &ts);
        return (int64_t) ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static void put_be16(uint8_t *b, uint16_t v) {
        b[0] = (uint8_t) (v >> 8);
        b[1] = (uint8_t) v;
}

static void put_be32(uint8_t *b, uint32_t v) {
        for (int i = 3; i >= 0; i--, v >>= 8)
                b[i] = (uint8_t) v;
}

static void put_be64(uint8_t *b, uint64_t v) {
        for (int i = 7; i >= 0; i--, v >>= 8)
                b[i] = (uint8_t) v;
}

static uint32_t get_be32(const uint8_t *b) {
        return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

static uint64_t get_be64(const uint8_t *b) {
        return (uint64_t) get_be32(b) << 32 | get_be32(b + 4);
}

/* Unpredictable bytes for probe cookies and wildcard labels. Never blocks:
 * early in boot the kernel pool may not be ready, then time and pid will do
 * (these only need to differ between runs, not to resist an attacker). */
static void random_bytes(void *buf, size_t n) {
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

/* Milliseconds as a JSON number with three decimals (json-c would otherwise
 * print 17 significant digits). */
static json_object *json_ms(double ms) {
        char buf[48];
        snprintf(buf, sizeof buf, "%.3f", ms);
        return json_object_new_double_s(ms, buf);
}

static json_object *json_str_or_null(const char *s) {
        return s ? json_object_new_string(s) : NULL;
}

/* Optional integer member: `def` when absent or null, -EINVAL when not an
 * integer or outside [min, max]. */
static int arg_int(json_object *args, const char *key, int64_t def, int64_t min, int64_t max, int64_t *out) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v) {
                *out = def;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int))
                return -EINVAL;
        int64_t x = json_object_get_int64(v);
        if (x < min || x > max)
                return -EINVAL;
        *out = x;
        return 0;
}

/* Optional boolean member: `def` when absent or null, -EINVAL when not a boolean. */
static int arg_bool(json_object *args, const char *key, bool def, bool *out) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v) {
                *out = def;
                return 0;
        }
        if (!json_object_is_type(v, json_type_boolean))
                return -EINVAL;
        *out = json_object_get_boolean(v);
        return 0;
}

/* Optional string member: NULL when absent or null, -EINVAL when not a string. */
static int arg_string(json_object *args, const char *key, const char **out) {
        json_object *v = NULL;
        *out = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        *out = json_object_get_string(v);
        return 0;
}

/* Optional array member of at most `max` elements: NULL when absent or null. */
static int arg_array(json_object *args, const char *key, size_t max, json_object **out) {
        json_object *v = NULL;
        *out = NULL;
        if (!json_object_object_get_ex(args, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) > max)
                return -EINVAL;
        *out = v;
        return 0;
}

static void sockaddr_to_text(const struct sockaddr *sa, char *buf, size_t n) {
        buf[0] = '\0';
        if (getnameinfo(sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
                        buf, (socklen_t) n, NULL, 0, NI_NUMERICHOST) != 0)
                snprintf(buf, n, "?");
}

static void sockaddr_set_port(struct sockaddr_storage *ss, uint16_t port) {
        if (ss->ss_family == AF_INET)
                ((struct sockaddr_in *) ss)->sin_port = htons(port);
        else
                ((struct sockaddr_in6 *) ss)->sin6_port = htons(port);
}

/* A numeric IPv4 or IPv6 address (with an optional %scope) into ss. */
static int parse_numeric_address(const char *s, struct sockaddr_storage *ss, socklen_t *len) {
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

/* ---- SNTP --------------------------------------------------------------- */

void sntp_packet_encode(const struct sntp_packet *p, uint8_t out[SNTP_PACKET_SIZE]) {
        memset(out, 0, SNTP_PACKET_SIZE);
        out[0] = (uint8_t) ((p->leap & 3) << 6 | (p->version & 7) << 3 | (p->mode & 7));
        out[1] = p->stratum;
        out[2] = (uint8_t) p->poll;
        out[3] = (uint8_t) p->precision;
        put_be32(out + 4, p->root_delay);
        put_be32(out + 8, p->root_dispersion);
        put_be32(out + 12, p->ref_id);
        put_be64(out + 16, p->ref_ts);
        put_be64(out + 24, p->orig_ts);
        put_be64(out + 32, p->rx_ts);
        put_be64(out + 40, p->tx_ts);
}

int sntp_packet_decode(const void *buf, size_t len, struct sntp_packet *p) {
        const uint8_t *b = buf;
        if (!buf || !p || len < SNTP_PACKET_SIZE)
                return -EINVAL;
        p->leap = b[0] >> 6;
        p->version = (b[0] >> 3) & 7;
        p->mode = b[0] & 7;
        p->stratum = b[1];
        p->poll = (int8_t) b[2];
        p->precision = (int8_t) b[3];
        p->root_delay = get_be32(b + 4);
        p->root_dispersion = get_be32(b + 8);
        p->ref_id = get_be32(b + 12);
        p->ref_ts = get_be64(b + 16);
        p->orig_ts = get_be64(b + 24);
        p->rx_ts = get_be64(b + 32);
        p->tx_ts = get_be64(b + 40);
        return 0;
}

void sntp_request_init(struct sntp_packet *p, uint64_t tx) {
        memset(p, 0, sizeof *p);
        p->version = 4;
        p->mode = 3;
        p->tx_ts = tx;
}

uint64_t sntp_ts_from_unix_ns(int64_t ns) {
        int64_t sec = ns / NS_PER_SEC, rem = ns % NS_PER_SEC;
        if (rem < 0) {
                rem += NS_PER_SEC;
                sec--;
        }
        uint64_t s = (uint64_t) sec + SNTP_UNIX_EPOCH;
        uint64_t frac = (((uint64_t) rem << 32) + NS_PER_SEC / 2) / NS_PER_SEC;
        if (frac >> 32) { /* rounded up to the next second */
                frac = 0;
                s++;
        }
        return (s & 0xffffffffULL) << 32 | frac;
}

int64_t sntp_ts_to_unix_ns(uint64_t ts) {
        uint64_t s = ts >> 32, frac = ts & 0xffffffffULL;
        int64_t sec = (int64_t) s - (int64_t) SNTP_UNIX_EPOCH;
        if (s < 0x80000000ULL) /* before 1968: era 1, 2036-2104 */
                sec += (int64_t) 1 << 32;
        return sec * NS_PER_SEC + (int64_t) ((frac * NS_PER_SEC + (1ULL << 31)) >> 32);
}

/* a - b of two NTP timestamps, in ns; the modular difference read as signed
 * 32.32 fixed point is exact across an era rollover. */
static int64_t ntp_diff_ns(uint64_t a, uint64_t b) {
        int64_t d = (int64_t) (a - b);
        int64_t sec = d >> 32; /* floor: the fraction below is added back */
        uint64_t frac = (uint64_t) d & 0xffffffffULL;
        return sec * NS_PER_SEC + (int64_t) ((frac * NS_PER_SEC) >> 32);
}

/* A duration in ns as an NTP fixed-point interval. */
static uint64_t ntp_interval(int64_t ns) {
        if (ns < 0)
                ns = 0;
        uint64_t sec = (uint64_t) (ns / NS_PER_SEC), rem = (uint64_t) (ns % NS_PER_SEC);
        return (sec << 32) + (rem << 32) / NS_PER_SEC;
}

void sntp_offset_delay(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4, int64_t *offset_ns,
                       int64_t *delay_ns) {
        /* Each difference is within ±2^31 s, i.e. ±2.2e18 ns: the sums fit. */
        if (offset_ns)
                *offset_ns = (ntp_diff_ns(t2, t1) + ntp_diff_ns(t3, t4)) / 2;
        if (delay_ns)
                *delay_ns = ntp_diff_ns(t4, t1) - ntp_diff_ns(t3, t2);
}

const char *sntp_verdict_to_string(enum sntp_verdict v) {
        switch (v) {
        case SNTP_VALID:
                return "valid";
        case SNTP_BAD_MODE:
                return "not a server reply";
        case SNTP_BAD_VERSION:
                return "unsupported NTP version";
        case SNTP_KISS_OF_DEATH:
                return "kiss-o'-death";
        case SNTP_BAD_STRATUM:
                return "server is not synchronised (stratum above 15)";
        case SNTP_UNSYNCHRONIZED:
                return "server is not synchronised (leap indicator 3)";
        case SNTP_ORIGIN_MISMATCH:
                return "reply does not match the request";
        case SNTP_ZERO_TIMESTAMP:
                return "reply lacks a timestamp";
        case _SNTP_VERDICT_MAX:
                break;
        }
        return "unknown";
}

enum sntp_verdict sntp_reply_check(const struct sntp_packet *r, uint64_t our_tx) {
        /* Match the request before believing anything else the packet says:
         * a kiss-o'-death that does not echo our timestamp may be forged. */
        if (r->mode != 4)
                return SNTP_BAD_MODE;
        if (r->version < 1 || r->version > 4)
                return SNTP_BAD_VERSION;
        if (r->orig_ts != our_tx)
                return SNTP_ORIGIN_MISMATCH;
        if (r->stratum == 0)
                return SNTP_KISS_OF_DEATH;
        if (r->stratum > 15)
                return SNTP_BAD_STRATUM;
        if (r->leap == 3)
                return SNTP_UNSYNCHRONIZED;
        if (r->rx_ts == 0 || r->tx_ts == 0)
                return SNTP_ZERO_TIMESTAMP;
        return SNTP_VALID;
}

/* ---- dates -------------------------------------------------------------- */

static const char day_names[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char month_names[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d) {
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

static int days_in_month(int64_t y, int m) {
        static const int dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        return m == 2 && leap ? 29 : dm[m - 1];
}

/* Exactly n ASCII digits. */
static bool digits(const char *s, int n, int *out) {
        int v = 0;
        for (int i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *out = v;
        return true;
}

static int name_index(const char names[][4], int n, const char *s) {
        for (int i = 0; i < n; i++)
                if (memcmp(names[i], s, 3) == 0)
                        return i;
        return -1;
}

static bool date_valid(int y, int mon, int d, int h, int mi, int s) {
        return y >= 1900 && mon >= 1 && mon <= 12 && d >= 1 && d <= days_in_month(y, mon) && h <= 23 &&
               mi <= 59 && s <= 60;
}

int date_parse_imf_fixdate(const char *s, int64_t *epoch_s) {
        int d, y, h, mi, sec;
        /* "Sun, 06 Nov 1994 08:49:37 GMT" */
        if (!s || !epoch_s || strnlen(s, 30) != 29)
                return -EINVAL;
        int wday = name_index(day_names, 7, s);
        int mon = name_index(month_names, 12, s + 8) + 1;
        if (wday < 0 || mon < 1 || s[3] != ',' || s[4] != ' ' || !digits(s + 5, 2, &d) || s[7] != ' ' ||
            s[11] != ' ' || !digits(s + 12, 4, &y) || s[16] != ' ' || !digits(s + 17, 2, &h) || s[19] != ':' ||
            !digits(s + 20, 2, &mi) || s[22] != ':' || !digits(s + 23, 2, &sec) || s[25] != ' ' ||
            memcmp(s + 26, "GMT", 3) != 0)
                return -EINVAL;
        if (!date_valid(y, mon, d, h, mi, sec))
                return -EINVAL;
        int64_t days = days_from_civil(y, mon, d);
        if ((days % 7 + 11) % 7 != wday) /* 1970-01-01 was a Thursday */
                return -EINVAL;
        *epoch_s = days * 86400 + h * 3600 + mi * 60 + sec;
        return 0;
}

int date_parse_rfc3339(const char *s, int64_t *epoch_ms, bool *subsecond) {
        int y, mon, d, h, mi, sec, oh = 0, om = 0, sign = 0;
        int64_t frac_ms = 0;
        bool has_frac = false;
        if (!s || !epoch_ms || strnlen(s, 65) > 64 || strnlen(s, 20) < 20)
                return -EINVAL;
        if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mon) || s[7] != '-' || !digits(s + 8, 2, &d) ||
            (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s + 11, 2, &h) || s[13] != ':' ||
            !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
                return -EINVAL;
        const char *p = s + 19;
        if (*p == '.') {
                int n = 0;
                for (p++; *p >= '0' && *p <= '9'; p++, n++)
                        if (n < 3)
                                frac_ms = frac_ms * 10 + (*p - '0');
                if (n == 0)
                        return -EINVAL;
                for (; n < 3; n++)
                        frac_ms *= 10;
                has_frac = true;
        }
        if (*p == 'Z' || *p == 'z') {
                p++;
        } else if (*p == '+' || *p == '-') {
                sign = *p == '+' ? 1 : -1;
                if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
                        return -EINVAL;
                p += 6;
        } else {
                return -EINVAL;
        }
        if (*p != '\0' || !date_valid(y, mon, d, h, mi, sec))
                return -EINVAL;
        int64_t t = days_from_civil(y, mon, d) * 86400 + h * 3600 + mi * 60 + sec - sign * (oh * 3600 + om * 60);
        *epoch_ms = t * 1000 + frac_ms;
        if (subsecond)
                *subsecond = has_frac;
        return 0;
}

/* ---- DNS names ---------------------------------------------------------- */

static bool ldh(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

int dns_name_check(const char *name, bool allow_wildcard) {
        if (!name)
                return -EINVAL;
        size_t len = strnlen(name, DNS_NAME_MAX + 2);
        if (len > 1 && name[len - 1] == '.')
                len--;
        if (len == 0 || len > DNS_NAME_MAX)
                return -EINVAL;
        const char *p = name, *end = name + len;
        if (allow_wildcard && len > 2 && p[0] == '*' && p[1] == '.')
                p += 2;
        bool all_digits = true;
        while (p < end) {
                const char *q = p;
                while (q < end && *q != '.')
                        q++;
                size_t l = (size_t) (q - p);
                if (l == 0 || l > 63 || p[0] == '-' || p[l - 1] == '-')
                        return -EINVAL;
                all_digits = true;
                for (const char *c = p; c < q; c++) {
                        if (!ldh(*c))
                                return -EINVAL;
                        if (*c < '0' || *c > '9')
                                all_digits = false;
                }
                p = q;
                if (p < end && ++p == end) /* "a..", or an empty label before the end */
                        return -EINVAL;
        }
        /* An all-numeric top label would make "192.0.2.1" a host name. */
        return all_digits ? -EINVAL : 0;
}

int dns_name_expand_wildcard(const char *name, const uint8_t rnd[6], char *out, size_t n) {
        if (!name || !out || name[0] != '*' || name[1] != '.')
                return -EINVAL;
        int r = snprintf(out, n, "muster-%02x%02x%02x%02x%02x%02x%s", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
                         rnd[5], name + 1);
        if (r < 0 || (size_t) r >= n)
                return -ENAMETOOLONG;
        size_t len = (size_t) r;
        if (len > 1 && out[len - 1] == '.')
                len--;
        return len > DNS_NAME_MAX ? -ENAMETOOLONG : 0;
}

/* ---- deadline-bounded getaddrinfo --------------------------------------- */

/* getaddrinfo cannot be interrupted, so each lookup runs on a detached
 * thread. The caller waits until a deadline and leaves; the batch is
 * reference counted so a late thread finds it, and frees it if it is last. */

struct lookup {
        int rc;                 /* getaddrinfo's result; EAI_AGAIN with timed_out */
        int sys_errno;          /* with EAI_SYSTEM */
        bool timed_out;
        struct addrinfo *res;   /* caller frees */
};

struct gai_batch;
struct gai_job {
        struct gai_batch *batch;
        char *node;
        int family, socktype;
        bool done;
        int rc, sys_errno;
        struct addrinfo *res;
};

struct gai_batch {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        unsigned refs;
        size_t pending;
        size_t n;
        struct gai_job jobs[];
};

static void gai_batch_free(struct gai_batch *b) {
        for (size_t i = 0; i < b->n; i++) {
                if (b->jobs[i].res)
                        freeaddrinfo(b->jobs[i].res);
                free(b->jobs[i].node);
        }
        pthread_cond_destroy(&b->cond);
        pthread_mutex_destroy(&b->lock);
        free(b);
}

/* Drop one reference; called with the lock held, returns with it released. */
static void gai_batch_unref_unlock(struct gai_batch *b) {
        bool last = --b->refs == 0;
        pthread_mutex_unlock(&b->lock);
        if (last)
                gai_batch_free(b);
}

static void *gai_thread(void *arg) {
        struct gai_job *j = arg;
        struct gai_batch *b = j->batch;
        struct addrinfo hints = { .ai_family = j->family, .ai_socktype = j->socktype };
        struct addrinfo *res = NULL;
        int rc = getaddrinfo(j->node, NULL, &hints, &res);
        int e = errno;

        pthread_mutex_lock(&b->lock);
        j->rc = rc;
        j->sys_errno = e;
        j->res = rc == 0 ? res : NULL;
        j->done = true;
        b->pending--;
        pthread_cond_broadcast(&b->cond);
        gai_batch_unref_unlock(b);
        return NULL;
}

/* Look up all `nodes` at once; out[i] gets each result or timed_out. 0 or
 * -ENOMEM (then nothing was started). */
static int resolve_all(const char *const *nodes, size_t n, int family, int socktype, int64_t timeout_ms,
                       struct lookup *out) {
        struct gai_batch *b;
        pthread_condattr_t ca;
        pthread_attr_t ta;
        struct timespec deadline;

        memset(out, 0, n * sizeof *out);
        if (n == 0)
                return 0;
        b = calloc(1, sizeof *b + n * sizeof b->jobs[0]);
        if (!b)
                return -ENOMEM;
        b->n = n;
        for (size_t i = 0; i < n; i++) {
                b->jobs[i] = (struct gai_job) { .batch = b, .node = strdup(nodes[i]), .family = family,
                                                .socktype = socktype };
                if (!b->jobs[i].node) {
                        for (size_t k = 0; k < i; k++)
                                free(b->jobs[k].node);
                        free(b);
                        return -ENOMEM;
                }
        }
        pthread_mutex_init(&b->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&b->cond, &ca);
        pthread_condattr_destroy(&ca);
        pthread_attr_init(&ta);
        pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (timeout_ms % 1000) * NS_PER_MS;
        if (deadline.tv_nsec >= NS_PER_SEC) {
                deadline.tv_sec++;
                deadline.tv_nsec -= NS_PER_SEC;
        }

        pthread_mutex_lock(&b->lock);
        b->refs = 1;
        b->pending = n;
        for (size_t i = 0; i < n; i++) {
                pthread_t t;
                b->refs++;
                int r = pthread_create(&t, &ta, gai_thread, &b->jobs[i]);
                if (r != 0) {
                        b->refs--;
                        b->jobs[i].done = true;
                        b->jobs[i].rc = EAI_SYSTEM;
                        b->jobs[i].sys_errno = r;
                        b->pending--;
                }
        }
        pthread_attr_destroy(&ta);
        while (b->pending > 0)
                if (pthread_cond_timedwait(&b->cond, &b->lock, &deadline) == ETIMEDOUT)
                        break;
        for (size_t i = 0; i < n; i++) {
                struct gai_job *j = &b->jobs[i];
                if (j->done) {
                        out[i] = (struct lookup) { .rc = j->rc, .sys_errno = j->sys_errno, .res = j->res };
                        j->res = NULL;
                } else {
                        out[i] = (struct lookup) { .rc = EAI_AGAIN, .timed_out = true };
                }
        }
        gai_batch_unref_unlock(b);
        return 0;
}

static const char *lookup_error(const struct lookup *l, char *buf, size_t n) {
        if (l->timed_out)
                return "timed out";
        if (l->rc == EAI_SYSTEM) {
                snprintf(buf, n, "%s", strerror(l->sys_errno));
                return buf;
        }
        if (l->rc == 0 && !l->res)
                return "no address";
        return l->rc ? gai_strerror(l->rc) : NULL;
}

/* ---- connectivity-check ------------------------------------------------- */

enum lane { LANE_ICMP4, LANE_ICMP6, LANE_TCP, _LANE_MAX, LANE_NONE = -1 };

enum probe_state { PROBE_PENDING, PROBE_INFLIGHT, PROBE_DONE };

#define ECHO_PAYLOAD 16 /* cookie (8), probe index (4), zero (4) */
#define ECHO_LEN (8 + ECHO_PAYLOAD)
#define TCP_WINDOW_MAX 256

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
        char icmp_why[2][96];        /* why a family has no ICMP socket */
        size_t *live;                /* TCP probes in flight */
        size_t n_live, window;
};

static uint16_t inet_checksum(const uint8_t *b, size_t n) {
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

/* An ICMP echo socket: an unprivileged ping socket when
 * net.ipv4.ping_group_range lets us, else a raw socket. fd or -errno. */
static int icmp_open(int family, bool *raw) {
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

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
        if (a->ss_family != b->ss_family)
                return false;
        if (a->ss_family == AF_INET)
                return ((const struct sockaddr_in *) a)->sin_addr.s_addr ==
                       ((const struct sockaddr_in *) b)->sin_addr.s_addr;
        return memcmp(&((const struct sockaddr_in6 *) a)->sin6_addr, &((const struct sockaddr_in6 *) b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
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

/* ---- the MTU probe ------------------------------------------------------ */

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

/* Probe every reached ICMP target with one echo of its interface's MTU,
 * don't fragment, MTU_TRIES times CONN_INTERVAL_MS apart; no answer within
 * timeout_ns of the last is a failure. 0 or -errno. */
static int mtu_probe_all(struct conn_target *targets, size_t n, int64_t timeout_ns) {
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

static json_object *conn_address_json(const struct conn_target *t, unsigned count) {
        static const char *const method[_LANE_MAX] = { "icmp", "icmp", "tcp" };
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "address", json_object_new_string(t->address));
        json_object_object_add(o, "reachable", json_object_new_boolean(t->received > 0));
        json_object_object_add(o, "method", t->lane >= 0 ? json_object_new_string(method[t->lane]) : NULL);
        json_object_object_add(o, "sent", json_object_new_int((int) t->sent));
        json_object_object_add(o, "received", json_object_new_int((int) t->received));
        json_object_object_add(o, "loss_pct", json_ms(100.0 * (count - t->received) / count));
        if (t->received > 0) {
                json_object_object_add(o, "rtt_min_ms", json_ms((double) t->rtt_min / NS_PER_MS));
                json_object_object_add(o, "rtt_avg_ms", json_ms((double) t->rtt_sum / t->received / NS_PER_MS));
                json_object_object_add(o, "rtt_max_ms", json_ms((double) t->rtt_max / NS_PER_MS));
        }
        const char *why = t->why ? t->why : t->err && t->received == 0 ? strerror(t->err) : NULL;
        json_object_object_add(o, "error", json_str_or_null(why));
        if (t->mtu_state != MTU_NOT_PROBED || t->mtu_why) {
                bool probed = t->mtu_state == MTU_PASSED || t->mtu_state == MTU_FAILED;
                json_object_object_add(o, "mtu", t->mtu > 0 ? json_object_new_int(t->mtu) : NULL);
                json_object_object_add(o, "mtu_ok", probed ? json_object_new_boolean(t->mtu_state == MTU_PASSED) : NULL);
                json_object_object_add(o, "path_mtu", t->path_mtu > 0 ? json_object_new_int(t->path_mtu) : NULL);
                json_object_object_add(o, "mtu_error", json_str_or_null(t->mtu_state == MTU_PASSED ? NULL : t->mtu_why));
        }
        return o;
}

static int conn_output(json_object *peers, const struct conn_run *r, unsigned count, bool with_mtu,
                       json_object **out) {
        _cleanup_json_ json_object *res = json_object_new_object();
        json_object *arr = json_object_new_array();
        size_t ti = 0;
        if (!res || !arr) {
                json_object_put(arr);
                return -ENOMEM;
        }
        json_object_object_add(res, "peers", arr);
        for (size_t i = 0; i < json_object_array_length(peers); i++) {
                json_object *peer = json_object_array_get_idx(peers, i), *hid = NULL, *addrs = NULL;
                json_object_object_get_ex(peer, "host_id", &hid);
                json_object_object_get_ex(peer, "addresses", &addrs);
                json_object *po = json_object_new_object(), *pa = json_object_new_array();
                if (!po || !pa) {
                        json_object_put(po);
                        json_object_put(pa);
                        return -ENOMEM;
                }
                json_object_array_add(arr, po);
                json_object_object_add(po, "host_id", json_object_get(hid));
                double best_loss = 100.0, best_rtt = -1;
                bool reachable = false;
                const struct conn_target *mtu_pass = NULL, *mtu_fail = NULL;
                size_t na = addrs ? json_object_array_length(addrs) : 0;
                for (size_t a = 0; a < na; a++, ti++) {
                        const struct conn_target *t = &r->targets[ti];
                        json_object *ao = conn_address_json(t, count);
                        if (!ao)
                                return -ENOMEM;
                        json_object_array_add(pa, ao);
                        double loss = 100.0 * (count - t->received) / count;
                        if (loss < best_loss)
                                best_loss = loss;
                        if (t->received > 0) {
                                double avg = (double) t->rtt_sum / t->received / NS_PER_MS;
                                reachable = true;
                                if (best_rtt < 0 || avg < best_rtt)
                                        best_rtt = avg;
                        }
                        if (t->mtu_state == MTU_FAILED && !mtu_fail)
                                mtu_fail = t;
                        else if (t->mtu_state == MTU_PASSED && (!mtu_pass || t->mtu < mtu_pass->mtu))
                                mtu_pass = t;
                }
                json_object_object_add(po, "reachable", json_object_new_boolean(reachable));
                json_object_object_add(po, "loss_pct", json_ms(best_loss));
                json_object_object_add(po, "rtt_avg_ms", best_rtt >= 0 ? json_ms(best_rtt) : NULL);
                if (with_mtu) {
                        /* Every address probed must pass; the peer's mtu is
                         * the failing one's, else the smallest that passed. */
                        const struct conn_target *m = mtu_fail ? mtu_fail : mtu_pass;
                        json_object_object_add(po, "mtu_ok", m ? json_object_new_boolean(!mtu_fail) : NULL);
                        json_object_object_add(po, "mtu", m && m->mtu > 0 ? json_object_new_int(m->mtu) : NULL);
                        json_object_object_add(po, "path_mtu",
                                               mtu_fail && mtu_fail->path_mtu > 0 ? json_object_new_int(mtu_fail->path_mtu)
                                                                                  : NULL);
                }
                json_object_object_add(po, "addresses", pa);
        }
        *out = TAKE_PTR(res);
        return 0;
}

/* Check the args' shape; counts the addresses. */
static int conn_validate(json_object *peers, size_t *n_targets) {
        size_t n = 0;
        for (size_t i = 0; i < json_object_array_length(peers); i++) {
                json_object *peer = json_object_array_get_idx(peers, i), *hid = NULL, *addrs = NULL;
                if (!json_object_is_type(peer, json_type_object))
                        return -EINVAL;
                if (!json_object_object_get_ex(peer, "host_id", &hid) || !json_object_is_type(hid, json_type_string) ||
                    json_object_get_string_len(hid) == 0 || json_object_get_string_len(hid) > 64)
                        return -EINVAL;
                int r = arg_array(peer, "addresses", CONN_MAX_ADDRESSES, &addrs);
                if (r < 0)
                        return r;
                for (size_t a = 0; addrs && a < json_object_array_length(addrs); a++) {
                        json_object *v = json_object_array_get_idx(addrs, a);
                        if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > 255)
                                return -EINVAL;
                        n++;
                }
        }
        *n_targets = n;
        return 0;
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

/* Each address of the peers as a target (r->targets, in order) with its
 * lane: ICMP echo when wanted and its family has a socket (opened at the
 * family's first address), else TCP when wanted; otherwise the target
 * says why not. */
static void conn_assign_lanes(struct conn_run *r, json_object *peers, bool want_icmp, bool want_tcp) {
        bool icmp_tried[2] = { false, false };
        size_t ti = 0;

        for (size_t i = 0; i < json_object_array_length(peers); i++) {
                json_object *addrs = NULL;
                json_object_object_get_ex(json_object_array_get_idx(peers, i), "addresses", &addrs);
                for (size_t a = 0; addrs && a < json_object_array_length(addrs); a++, ti++) {
                        struct conn_target *t = &r->targets[ti];
                        t->address = json_object_get_string(json_object_array_get_idx(addrs, a));
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
}

int step_connectivity_check(json_object *args, json_object **out) {
        json_object *peers = NULL;
        const char *method = NULL;
        int64_t count, timeout_ms, tcp_port;
        size_t n_targets = 0;
        bool mtu_probe = true;
        int r;

        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!json_object_is_type(args, json_type_object))
                return -EINVAL;
        if ((r = arg_array(args, "peers", CONN_MAX_PEERS, &peers)) < 0 ||
            (r = arg_int(args, "count", 3, 1, CONN_MAX_COUNT, &count)) < 0 ||
            (r = arg_int(args, "timeout_ms", 1000, 10, 30000, &timeout_ms)) < 0 ||
            (r = arg_int(args, "tcp_port", 0, 1, 65535, &tcp_port)) < 0 ||
            (r = arg_string(args, "method", &method)) < 0 ||
            (r = arg_bool(args, "mtu_probe", true, &mtu_probe)) < 0)
                return r;
        if (!peers)
                return -EINVAL;
        bool want_icmp = true, want_tcp = true;
        if (method && strcmp(method, "icmp") == 0)
                want_tcp = false;
        else if (method && strcmp(method, "tcp") == 0)
                want_icmp = false;
        else if (method && strcmp(method, "auto") != 0)
                return -EINVAL;
        if (!want_icmp && tcp_port == 0)
                return -EINVAL;
        if (!want_tcp || tcp_port == 0)
                want_tcp = false;
        if ((r = conn_validate(peers, &n_targets)) < 0)
                return r;

        struct conn_run run = { .n_targets = n_targets, .timeout_ns = timeout_ms * NS_PER_MS,
                                .tcp_port = (uint16_t) tcp_port, .icmp_fd = { -1, -1 } };
        _cleanup_free_ struct conn_target *targets = calloc(n_targets ? n_targets : 1, sizeof *targets);
        _cleanup_free_ struct conn_probe *probes = calloc(n_targets ? n_targets * (size_t) count : 1,
                                                          sizeof *probes);
        run.window = tcp_window();
        _cleanup_free_ size_t *live = calloc(run.window, sizeof *live);
        if (!targets || !probes || !live)
                return -ENOMEM;
        run.targets = targets;
        run.probes = probes;
        run.live = live;
        run.n_probes = n_targets * (size_t) count;
        random_bytes(run.cookie, sizeof run.cookie);
        random_bytes(&run.icmp_id, sizeof run.icmp_id);
        conn_assign_lanes(&run, peers, want_icmp, want_tcp);
        for (size_t p = 0; p < run.n_probes; p++) {
                probes[p].fd = -1;
                if (targets[p % n_targets].lane == LANE_NONE) {
                        probes[p].state = PROBE_DONE;
                        run.n_done++;
                }
        }

        r = run.n_probes > 0 ? conn_loop(&run) : 0;
        for (size_t i = 0; i < run.n_live; i++)
                close(probes[live[i]].fd);
        for (int l = LANE_ICMP4; l <= LANE_ICMP6; l++)
                if (run.icmp_fd[l] >= 0)
                        close(run.icmp_fd[l]);
        if (r < 0)
                return r;
        if (mtu_probe && n_targets > 0 && (r = mtu_probe_all(targets, n_targets, run.timeout_ns)) < 0)
                return r;
        return conn_output(peers, &run, (unsigned) count, mtu_probe, out);
}

/* ---- ntp-synchronizer --------------------------------------------------- */

struct ntp_source {
        const char *text;
        char host[DNS_NAME_MAX + 2];
        uint16_t port;
        bool needs_lookup;
        struct sockaddr_storage sa;
        socklen_t salen;
        char address[INET6_ADDRSTRLEN + IFNAMSIZ + 2];
        int fd;
        uint64_t tx;             /* our transmit timestamp: T1 */
        int64_t sent_mono;
        bool done, ok;
        const char *why;         /* fixed reason, or ... */
        char whybuf[384];        /* ... one written here */
        struct sntp_packet reply;
        int64_t offset_ns, delay_ns;
};

/* A source as ntp_source_split() reads it; no port: SNTP's. */
static int ntp_parse_source(const char *s, char *host, size_t hostlen, uint16_t *port) {
        int r = ntp_source_split(s, host, hostlen, port);
        if (r == 0 && *port == 0)
                *port = SNTP_PORT;
        return r;
}

static void ntp_send(struct ntp_source *s) {
        uint8_t pkt[SNTP_PACKET_SIZE];
        struct sntp_packet req;
        uint16_t noise;

        s->fd = socket(s->sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s->fd < 0 || connect(s->fd, (struct sockaddr *) &s->sa, s->salen) < 0) {
                snprintf(s->whybuf, sizeof s->whybuf, "%s", strerror(errno));
                s->why = s->whybuf;
                s->done = true;
                return;
        }
        /* Our transmit time with random low bits (15 µs at most): a reply
         * must echo it, which an off-path sender cannot guess. */
        random_bytes(&noise, sizeof noise);
        s->sent_mono = clock_ns(CLOCK_MONOTONIC);
        s->tx = (sntp_ts_from_unix_ns(clock_ns(CLOCK_REALTIME)) & ~0xffffULL) | noise;
        sntp_request_init(&req, s->tx);
        sntp_packet_encode(&req, pkt);
        if (send(s->fd, pkt, sizeof pkt, 0) != (ssize_t) sizeof pkt) {
                snprintf(s->whybuf, sizeof s->whybuf, "%s", strerror(errno));
                s->why = s->whybuf;
                s->done = true;
        }
}

static void ntp_receive(struct ntp_source *s) {
        uint8_t buf[512];
        for (;;) {
                ssize_t n = recv(s->fd, buf, sizeof buf, 0);
                int64_t now = clock_ns(CLOCK_MONOTONIC);
                struct sntp_packet rep;
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                return;
                        snprintf(s->whybuf, sizeof s->whybuf, "%s", strerror(errno));
                        s->why = s->whybuf;
                        s->done = true;
                        return;
                }
                if (sntp_packet_decode(buf, (size_t) n, &rep) < 0) {
                        s->why = "short reply";
                        continue;
                }
                enum sntp_verdict v = sntp_reply_check(&rep, s->tx);
                if (v == SNTP_BAD_MODE || v == SNTP_ORIGIN_MISMATCH) { /* not ours: keep waiting */
                        s->why = sntp_verdict_to_string(v);
                        continue;
                }
                s->done = true;
                if (v == SNTP_KISS_OF_DEATH) {
                        char code[5];
                        for (int i = 0; i < 4; i++) {
                                char c = (char) (rep.ref_id >> (24 - 8 * i));
                                code[i] = c >= 0x21 && c <= 0x7e ? c : '?';
                        }
                        code[4] = '\0';
                        snprintf(s->whybuf, sizeof s->whybuf, "kiss-o'-death %s", code);
                        s->why = s->whybuf;
                        return;
                }
                if (v != SNTP_VALID) {
                        s->why = sntp_verdict_to_string(v);
                        return;
                }
                uint64_t t4 = s->tx + ntp_interval(now - s->sent_mono);
                s->reply = rep;
                sntp_offset_delay(s->tx, rep.rx_ts, rep.tx_ts, t4, &s->offset_ns, &s->delay_ns);
                if (s->delay_ns < 0)
                        s->delay_ns = 0;
                s->ok = true;
                s->why = NULL;
                return;
        }
}

static int ntp_query_all(struct ntp_source *src, size_t n, int64_t timeout_ms) {
        struct pollfd pfd[NTP_MAX_SOURCES];
        size_t idx[NTP_MAX_SOURCES];
        for (size_t i = 0; i < n; i++)
                if (!src[i].done)
                        ntp_send(&src[i]);
        int64_t deadline = clock_ns(CLOCK_MONOTONIC) + timeout_ms * NS_PER_MS;
        for (;;) {
                nfds_t k = 0;
                for (size_t i = 0; i < n; i++)
                        if (!src[i].done) {
                                pfd[k] = (struct pollfd) { .fd = src[i].fd, .events = POLLIN };
                                idx[k++] = i;
                        }
                int64_t left = deadline - clock_ns(CLOCK_MONOTONIC);
                if (k == 0 || left <= 0)
                        break;
                int r = poll(pfd, k, (int) ((left + NS_PER_MS - 1) / NS_PER_MS));
                if (r < 0 && errno != EINTR)
                        return -errno;
                for (nfds_t i = 0; r > 0 && i < k; i++)
                        if (pfd[i].revents)
                                ntp_receive(&src[idx[i]]);
        }
        for (size_t i = 0; i < n; i++) {
                if (!src[i].done) {
                        src[i].done = true;
                        if (!src[i].why)
                                src[i].why = "timed out";
                        else {
                                char tmp[sizeof src[i].whybuf];
                                snprintf(tmp, sizeof tmp, "timed out (%s)", src[i].why);
                                memcpy(src[i].whybuf, tmp, sizeof tmp);
                                src[i].why = src[i].whybuf;
                        }
                }
                if (src[i].fd >= 0)
                        close(src[i].fd);
                src[i].fd = -1;
        }
        return 0;
}

static int ntp_resolve(struct ntp_source *src, size_t n, int64_t timeout_ms) {
        const char *nodes[NTP_MAX_SOURCES] = { 0 };
        size_t which[NTP_MAX_SOURCES], k = 0;
        struct lookup res[NTP_MAX_SOURCES];
        for (size_t i = 0; i < n; i++)
                if (src[i].needs_lookup) {
                        nodes[k] = src[i].host;
                        which[k++] = i;
                }
        int r = resolve_all(nodes, k, AF_UNSPEC, SOCK_DGRAM, timeout_ms, res);
        if (r < 0)
                return r;
        for (size_t j = 0; j < k; j++) {
                struct ntp_source *s = &src[which[j]];
                const struct addrinfo *ai = res[j].res;
                while (ai && ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
                              ai->ai_addrlen > sizeof s->sa))
                        ai = ai->ai_next;
                if (!ai) {
                        char ebuf[64];
                        const char *e = lookup_error(&res[j], ebuf, sizeof ebuf);
                        snprintf(s->whybuf, sizeof s->whybuf, "cannot resolve %s: %s", s->host,
                                 e ? e : "no address");
                        s->why = s->whybuf;
                        s->done = true;
                } else {
                        memcpy(&s->sa, ai->ai_addr, ai->ai_addrlen);
                        s->salen = ai->ai_addrlen;
                }
                if (res[j].res)
                        freeaddrinfo(res[j].res);
        }
        return 0;
}

static json_object *ntp_source_json(const struct ntp_source *s) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "source", json_object_new_string(s->text));
        json_object_object_add(o, "address", s->address[0] ? json_object_new_string(s->address) : NULL);
        json_object_object_add(o, "reachable", json_object_new_boolean(s->ok));
        json_object_object_add(o, "offset_ms", s->ok ? json_ms((double) s->offset_ns / NS_PER_MS) : NULL);
        json_object_object_add(o, "delay_ms", s->ok ? json_ms((double) s->delay_ns / NS_PER_MS) : NULL);
        json_object_object_add(o, "stratum", s->ok ? json_object_new_int(s->reply.stratum) : NULL);
        json_object_object_add(o, "error", json_str_or_null(s->why));
        return o;
}

/* The coordinator's clock when the step started, from its Date (IMF
 * fixdate or RFC 3339) received age_ms ago. 0 or -EINVAL. */
static int ntp_coordinator_ms(const char *date, int64_t age_ms, int64_t *date_ms) {
        int64_t s;
        bool sub = false;

        if (date_parse_imf_fixdate(date, &s) == 0)
                *date_ms = s * 1000;
        else if (date_parse_rfc3339(date, date_ms, &sub) < 0)
                return -EINVAL;
        /* A whole second was printed: the coordinator's clock was
         * somewhere in [D, D+1), the middle is the best guess. */
        if (!sub)
                *date_ms += 500;
        *date_ms += age_ms;
        return 0;
}

/* The n sources of the args into src: each an address, a name to look up,
 * or done with the reason it is neither. -EINVAL when one is not a string
 * of at most NTP_MAX_SOURCE_LEN bytes. */
static int ntp_read_sources(json_object *sources, size_t n, struct ntp_source *src) {
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(sources, i);
                if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > NTP_MAX_SOURCE_LEN)
                        return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                struct ntp_source *s = &src[i];
                s->text = json_object_get_string(json_object_array_get_idx(sources, i));
                s->fd = -1;
                if (ntp_parse_source(s->text, s->host, sizeof s->host, &s->port) < 0) {
                        s->why = "not a host, host:port or [address]:port";
                        s->done = true;
                } else if (parse_numeric_address(s->host, &s->sa, &s->salen) == 0) {
                        /* an address */
                } else if (dns_name_check(s->host, false) == 0) {
                        s->needs_lookup = true;
                } else {
                        s->why = "not a valid host name or address";
                        s->done = true;
                }
        }
        return 0;
}

/* The step's output: every source, and the offset of the nearest one that
 * answered, else of the coordinator's Date when there is one. */
static int ntp_output(const struct ntp_source *src, size_t n, bool have_date, int64_t date_ms,
                      int64_t max_offset_ms, json_object **out) {
        const struct ntp_source *best = NULL;
        for (size_t i = 0; i < n; i++)
                if (src[i].ok && (!best || src[i].delay_ns < best->delay_ns))
                        best = &src[i];

        _cleanup_json_ json_object *res = json_object_new_object();
        json_object *list = json_object_new_array();
        if (!res || !list) {
                json_object_put(list);
                return -ENOMEM;
        }
        json_object_object_add(res, "sources", list);
        for (size_t i = 0; i < n; i++) {
                json_object *o = ntp_source_json(&src[i]);
                if (!o)
                        return -ENOMEM;
                json_object_array_add(list, o);
        }
        double offset_ms = 0;
        const char *method = NULL, *source = NULL, *error = NULL;
        if (best) {
                offset_ms = (double) best->offset_ns / NS_PER_MS;
                method = "sntp";
                source = best->text;
        } else if (have_date) {
                offset_ms = (double) (date_ms - clock_ns(CLOCK_REALTIME) / NS_PER_MS);
                method = "coordinator-date";
                source = "coordinator";
        } else {
                error = "no NTP source answered and no coordinator_date was given";
        }
        /* Synced means to an NTP source; the coordinator's Date is information. */
        bool synced = best && offset_ms <= (double) max_offset_ms && offset_ms >= -(double) max_offset_ms;
        json_object_object_add(res, "synced", json_object_new_boolean(synced));
        json_object_object_add(res, "offset_ms", method ? json_ms(offset_ms) : NULL);
        json_object_object_add(res, "source", json_str_or_null(source));
        json_object_object_add(res, "method", json_str_or_null(method));
        json_object_object_add(res, "max_offset_ms", json_object_new_int64(max_offset_ms));
        json_object_object_add(res, "error", json_str_or_null(error));
        *out = TAKE_PTR(res);
        return 0;
}

int step_ntp_synchronizer(json_object *args, json_object **out) {
        json_object *sources = NULL;
        const char *date = NULL;
        int64_t timeout_ms, max_offset_ms, date_age_ms, date_ms = 0;
        bool have_date = false;
        int r;

        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!json_object_is_type(args, json_type_object))
                return -EINVAL;
        if ((r = arg_array(args, "ntp_sources", NTP_MAX_SOURCES, &sources)) < 0 ||
            (r = arg_string(args, "coordinator_date", &date)) < 0 ||
            (r = arg_int(args, "timeout_ms", 2000, 10, 60000, &timeout_ms)) < 0 ||
            (r = arg_int(args, "max_offset_ms", 500, 1, 3600000, &max_offset_ms)) < 0 ||
            (r = arg_int(args, "coordinator_date_age_ms", 0, 0, 3600000, &date_age_ms)) < 0)
                return r;
        if (date) {
                if (ntp_coordinator_ms(date, date_age_ms, &date_ms) < 0)
                        return -EINVAL;
                have_date = true;
        }
        size_t n = sources ? json_object_array_length(sources) : 0;
        if (n == 0 && !have_date)
                return -EINVAL;

        struct ntp_source src[NTP_MAX_SOURCES];
        memset(src, 0, sizeof src);
        if ((r = ntp_read_sources(sources, n, src)) < 0)
                return r;
        if ((r = ntp_resolve(src, n, timeout_ms)) < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (!src[i].done) {
                        sockaddr_set_port(&src[i].sa, src[i].port);
                        sockaddr_to_text((struct sockaddr *) &src[i].sa, src[i].address, sizeof src[i].address);
                }
        if ((r = ntp_query_all(src, n, timeout_ms)) < 0)
                return r;
        return ntp_output(src, n, have_date, date_ms, max_offset_ms, out);
}

/* ---- domain-resolution -------------------------------------------------- */

/* Append the address as text unless it is there already. */
static int add_unique_address(json_object *arr, const struct sockaddr *sa) {
        char buf[INET6_ADDRSTRLEN];
        const void *a = sa->sa_family == AF_INET ? (const void *) &((const struct sockaddr_in *) sa)->sin_addr
                                                 : (const void *) &((const struct sockaddr_in6 *) sa)->sin6_addr;
        if (!inet_ntop(sa->sa_family, a, buf, sizeof buf))
                return 0;
        for (size_t i = 0; i < json_object_array_length(arr); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), buf) == 0)
                        return 0;
        json_object *s = json_object_new_string(buf);
        if (!s || json_object_array_add(arr, s) < 0) {
                json_object_put(s);
                return -ENOMEM;
        }
        return 0;
}

/* The name to look up for `name` into queried: itself, or with its
 * wildcard label replaced by a random one. NULL, or why it is not looked
 * up. */
static const char *dns_query_name(const char *name, char *queried, size_t n) {
        snprintf(queried, n, "%s", name);
        if (dns_name_check(name, true) < 0)
                return "not a valid host name";
        if (name[0] == '*') {
                uint8_t rnd[6];
                random_bytes(rnd, sizeof rnd);
                if (dns_name_expand_wildcard(name, rnd, queried, n) < 0)
                        return "name too long once the wildcard is replaced";
        }
        return NULL;
}

/* One name's entry of the output, appended to list: its addresses from
 * the lookup l (NULL when it was not looked up, because of why). */
static int dns_resolution_json(json_object *list, const char *name, const char *queried, const char *why,
                               const struct lookup *l) {
        json_object *o = json_object_new_object(), *v4 = json_object_new_array(), *v6 = json_object_new_array();
        char ebuf[96];
        const char *err = why;

        if (!o || !v4 || !v6 || json_object_array_add(list, o) < 0) {
                json_object_put(o);
                json_object_put(v4);
                json_object_put(v6);
                return -ENOMEM;
        }
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "queried_name", json_object_new_string(queried));
        json_object_object_add(o, "ipv4_addresses", v4);
        json_object_object_add(o, "ipv6_addresses", v6);
        if (l) {
                err = lookup_error(l, ebuf, sizeof ebuf);
                for (const struct addrinfo *ai = l->res; ai; ai = ai->ai_next) {
                        int r = 0;
                        if (ai->ai_family == AF_INET)
                                r = add_unique_address(v4, ai->ai_addr);
                        else if (ai->ai_family == AF_INET6)
                                r = add_unique_address(v6, ai->ai_addr);
                        if (r < 0)
                                return r;
                }
        }
        json_object_object_add(o, "error", json_str_or_null(err));
        return 0;
}

int step_domain_resolution(json_object *args, json_object **out) {
        json_object *names = NULL;
        int64_t timeout_ms;
        int r;

        if (!out)
                return -EINVAL;
        *out = NULL;
        if (!json_object_is_type(args, json_type_object))
                return -EINVAL;
        if ((r = arg_array(args, "names", DNS_MAX_NAMES, &names)) < 0 ||
            (r = arg_int(args, "timeout_ms", 5000, 10, 60000, &timeout_ms)) < 0)
                return r;
        if (!names)
                return -EINVAL;
        size_t n = json_object_array_length(names);
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(names, i);
                if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > DNS_NAME_MAX + 1)
                        return -EINVAL;
        }

        char queried[DNS_MAX_NAMES][DNS_NAME_MAX + 2];
        const char *why[DNS_MAX_NAMES] = { 0 };
        const char *nodes[DNS_MAX_NAMES];
        size_t which[DNS_MAX_NAMES], k = 0;
        struct lookup res[DNS_MAX_NAMES];
        for (size_t i = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                if ((why[i] = dns_query_name(name, queried[i], sizeof queried[i])))
                        continue;
                nodes[k] = queried[i];
                which[k++] = i;
        }
        if ((r = resolve_all(nodes, k, AF_UNSPEC, SOCK_STREAM, timeout_ms, res)) < 0)
                return r;

        _cleanup_json_ json_object *result = json_object_new_object();
        json_object *list = json_object_new_array();
        if (!result || !list) {
                json_object_put(list);
                r = -ENOMEM;
                goto finish;
        }
        json_object_object_add(result, "resolutions", list);
        for (size_t i = 0, j = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                bool looked_up = j < k && which[j] == i;
                if ((r = dns_resolution_json(list, name, queried[i], why[i], looked_up ? &res[j] : NULL)) < 0)
                        goto finish;
                if (looked_up)
                        j++;
        }
        *out = TAKE_PTR(result);
        r = 0;
finish:
        for (size_t j = 0; j < k; j++)
                if (res[j].res)
                        freeaddrinfo(res[j].res);
        return r;
}

/* ---- the table's step functions (steps.h) -------------------------------- */

#define NTP_MAX_DATE_AGE_MS 3600000

json_object *run_ntp_args(json_object *args, const char *date, int64_t age_ms) {
        json_object *copy = NULL, *v;

        if (args) {
                if (json_object_deep_copy(args, &copy, NULL) < 0)
                        return NULL;
        } else if (!(copy = json_object_new_object()))
                return NULL;
        if (!date || !*date || !json_object_is_type(copy, json_type_object))
                return copy;
        if (json_object_object_get_ex(copy, "coordinator_date", &v) && v)
                return copy; /* the coordinator said what to compare with */
        if (age_ms < 0)
                age_ms = 0;
        if (age_ms > NTP_MAX_DATE_AGE_MS)
                age_ms = NTP_MAX_DATE_AGE_MS;
        json_object *d = json_object_new_string(date), *a = json_object_new_int64(age_ms);
        if (!d || !a || json_object_object_add(copy, "coordinator_date", d) < 0) {
                json_object_put(d);
                json_object_put(a);
                json_object_put(copy);
                return NULL;
        }
        if (json_object_object_add(copy, "coordinator_date_age_ms", a) < 0) {
                json_object_put(a);
                json_object_put(copy);
                return NULL;
        }
        return copy;
}

/* One of the runners above on args, its answer as the step's result. */
static void net_step(const struct run_instruction *in, json_object *args, int (*runner)(json_object *, json_object **),
                     struct run_step_result *res) {
        json_object *out = NULL;
        int r = runner(args, &out);
        if (r < 0) {
                json_object_put(out);
                res->exit_code = 1;
                res->error = r == -EINVAL ? step_printf("the arguments of step %s are not valid for %s", in->step_id,
                                                        in->step_type)
                                          : (errno = -r, step_printf("step %s failed: %m", in->step_type));
                return;
        }
        res->exit_code = 0;
        res->output = out;
}

void run_step_connectivity_check(const struct run_instruction *in, const struct run_step_context *ctx,
                                 struct run_step_result *res) {
        net_step(in, in->args, step_connectivity_check, res);
}

/* With the coordinator's Date of the instructions reply, aged, unless the
 * args name a date of their own (run_ntp_args). */
void run_step_ntp_synchronizer(const struct run_instruction *in, const struct run_step_context *ctx,
                               struct run_step_result *res) {
        _cleanup_json_ json_object *args = run_ntp_args(in->args, ctx->coordinator_date,
                                                        ctx->coordinator_date ? step_mono_ms() - ctx->date_received_ms
                                                                              : 0);
        if (!args) {
                res->exit_code = 1;
                res->error = step_printf("out of memory");
                return;
        }
        net_step(in, args, step_ntp_synchronizer, res);
}

void run_step_domain_resolution(const struct run_instruction *in, const struct run_step_context *ctx,
                                struct run_step_result *res) {
        net_step(in, in->args, step_domain_resolution, res);
}
