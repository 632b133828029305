/* SNTP (sntp.h): the packet codec, NTP timestamps, offset and delay, the
 * checks a reply must pass. */
#include "sntp.h"

#include <errno.h>
#include <string.h>

#include "netutil.h"

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
uint64_t sntp_interval(int64_t ns) {
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
