/* SNTP (RFC 4330, RFC 5905) as ntp-synchronizer speaks it: the 48-byte
 * packet, NTP timestamps, the clock offset and delay of an exchange, and
 * whether a reply is a usable answer. Pure; fuzzed (fuzz_sntp). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define SNTP_PACKET_SIZE 48
#define SNTP_PORT 123
#define SNTP_UNIX_EPOCH 2208988800ULL /* 1970-01-01 in NTP era 0 seconds */

struct sntp_packet {
        uint8_t leap;             /* 0-3; 3 = clock not synchronised */
        uint8_t version;          /* 0-7 */
        uint8_t mode;             /* 3 client, 4 server */
        uint8_t stratum;          /* 0 = kiss-o'-death, 16+ unsynchronised */
        int8_t poll;
        int8_t precision;
        uint32_t root_delay;      /* 16.16 fixed point */
        uint32_t root_dispersion;
        uint32_t ref_id;          /* the kiss code when stratum is 0 */
        uint64_t ref_ts;          /* timestamps: 32.32 fixed point NTP time */
        uint64_t orig_ts;
        uint64_t rx_ts;
        uint64_t tx_ts;
};

void sntp_packet_encode(const struct sntp_packet *p, uint8_t out[SNTP_PACKET_SIZE]);
/* -EINVAL when shorter than 48 bytes; extension fields and MACs are ignored. */
int sntp_packet_decode(const void *buf, size_t len, struct sntp_packet *p);
/* A client request (LI 0, VN 4, mode 3) carrying `tx` as transmit time. */
void sntp_request_init(struct sntp_packet *p, uint64_t tx);

/* Unix time in ns <-> NTP timestamp. NTP time wraps every 2^32 s; decoding
 * picks the era that puts the result between 1968 and 2104. */
uint64_t sntp_ts_from_unix_ns(int64_t ns);
int64_t sntp_ts_to_unix_ns(uint64_t ts);

/* A duration in ns as an NTP fixed-point interval (0 for a negative one). */
uint64_t sntp_interval(int64_t ns);

/* Clock offset θ = ((T2-T1) + (T3-T4)) / 2 and round-trip delay
 * δ = (T4-T1) - (T3-T2), in ns; T1 request sent, T2 request received,
 * T3 reply sent (server clock), T4 reply received. Differences are taken
 * modulo 2^64, so an era rollover between the timestamps is harmless. */
void sntp_offset_delay(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4, int64_t *offset_ns,
                       int64_t *delay_ns);

enum sntp_verdict {
        SNTP_VALID,
        SNTP_BAD_MODE,            /* not a server reply */
        SNTP_BAD_VERSION,         /* not 1-4 */
        SNTP_KISS_OF_DEATH,       /* stratum 0 */
        SNTP_BAD_STRATUM,         /* above 15 */
        SNTP_UNSYNCHRONIZED,      /* leap indicator 3 */
        SNTP_ORIGIN_MISMATCH,     /* not the answer to our request */
        SNTP_ZERO_TIMESTAMP,      /* receive or transmit time missing */
        _SNTP_VERDICT_MAX,
};
const char *sntp_verdict_to_string(enum sntp_verdict v);
/* Whether `reply` is a usable answer to the request we sent with `our_tx`. */
enum sntp_verdict sntp_reply_check(const struct sntp_packet *reply, uint64_t our_tx);
