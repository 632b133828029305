/* The network step runners of muster-agent (DESIGN §4): connectivity-check,
 * ntp-synchronizer and domain-resolution. Each takes the step's JSON args and
 * returns the JSON output the coordinator stores; the I/O is inside and every
 * wait is bounded. The pure parts (SNTP packets and clock math, ICMP echo
 * replies, HTTP and RFC 3339 dates, DNS name rules) are exposed for tests. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- limits ------------------------------------------------------------- */

#define CONN_MAX_PEERS 1000
#define CONN_MAX_ADDRESSES 16      /* per peer */
#define CONN_MAX_COUNT 10          /* probes per address */
#define CONN_INTERVAL_MS 100       /* between the rounds of probes */
#define NTP_MAX_SOURCES 16
#define NTP_MAX_SOURCE_LEN 262     /* "[" 253 "]:" 5 */
#define DNS_MAX_NAMES 64
#define DNS_NAME_MAX 253           /* without a trailing dot */

/* ---- step runners ------------------------------------------------------- */
/* All three: 0 and a new object in *out (caller puts), -EINVAL when args do
 * not have the documented shape or break a limit (types, caps, ranges),
 * -ENOMEM. Problems with one entry (an address that does not parse, a name
 * that is not a host name, a source that does not answer) are reported in
 * that entry's "error", not as a failure of the step. */

/* args {"peers":[{"host_id","addresses":[..]}], "count" (1-10, 3),
 * "timeout_ms" (10-30000, 1000), "tcp_port" (1-65535, optional),
 * "method" ("auto"|"icmp"|"tcp", "auto")}. "auto" uses ICMP echo (datagram
 * ping socket, else a raw socket) and falls back to a TCP connect to tcp_port
 * for a family where ICMP is not permitted; a refused connection counts as a
 * reply. All addresses are probed at once, `count` rounds CONN_INTERVAL_MS
 * apart; a probe is lost when no reply came within timeout_ms.
 * "mtu_probe" (boolean, true): then every address that answered ICMP gets
 * an echo as large as the MTU of the interface the route to it leaves by,
 * with don't-fragment set (IP_PMTUDISC_PROBE / IPV6_DONTFRAG: the path MTU
 * the kernel may have learnt is ignored), twice CONN_INTERVAL_MS apart; it
 * passes when a whole reply comes back within timeout_ms, and fails on an
 * ICMP "fragmentation needed" / "packet too big" (whose MTU is kept) or no
 * reply. Addresses reached only by TCP are not probed.
 * out {"peers":[{"host_id","reachable","loss_pct","rtt_avg_ms"(best address),
 * "mtu_ok","mtu","path_mtu", "addresses":[{"address","reachable","method",
 * "sent","received","loss_pct","rtt_min_ms","rtt_avg_ms","rtt_max_ms","error",
 * "mtu","mtu_ok","path_mtu","mtu_error"}]}]}; rtt_* only when something was
 * received; the mtu members only with mtu_probe. An address's mtu is the MTU
 * tried, mtu_ok null when it was not probed (mtu_error says why), path_mtu
 * what a router reported. A peer's mtu_ok is false when one of its probed
 * addresses failed (mtu and path_mtu are then that address's), true when
 * all probed passed (mtu the smallest tried), null when none was probed. */
int step_connectivity_check(json_object *args, json_object **out);

/* args {"ntp_sources":["host", "host:port", "[v6]:port", ...] (<= 16),
 * "coordinator_date" (IMF-fixdate or RFC 3339), "coordinator_date_age_ms"
 * (0-3600000, 0: how long before the step started the agent received that
 * date), "timeout_ms" (10-60000, 2000), "max_offset_ms" (1-3600000, 500)};
 * at least one of sources and date. Names are resolved first (bounded by timeout_ms), then one SNTP
 * request goes to every source at once (bounded by timeout_ms again); the
 * valid reply with the lowest delay wins. Without one, the offset is
 * estimated from coordinator_date (±1 s).
 * out {"synced" (|offset| <= max_offset_ms), "offset_ms", "source", "method"
 * ("sntp"|"coordinator-date"|null), "max_offset_ms", "error",
 * "sources":[{"source","address","reachable","offset_ms","delay_ms",
 * "stratum","error"}]}. */
int step_ntp_synchronizer(json_object *args, json_object **out);

/* args {"names":[..] (<= 64, each <= 253 characters), "timeout_ms"
 * (10-60000, 5000)}. A leading "*." label is replaced by a random one. All
 * names are looked up at once, each on its own thread; one that has not
 * answered by the deadline gets error "timed out" (its thread finishes on
 * its own). out {"resolutions":[{"name","queried_name","ipv4_addresses",
 * "ipv6_addresses","error"}]}. */
int step_domain_resolution(json_object *args, json_object **out);

/* ---- SNTP (RFC 4330, RFC 5905) ------------------------------------------ */

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

/* ---- ICMP echo replies -------------------------------------------------- */

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

/* ---- dates -------------------------------------------------------------- */

/* RFC 7231 IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT", strictly: the
 * day name must match the date. Seconds since the Unix epoch; -EINVAL. */
int date_parse_imf_fixdate(const char *s, int64_t *epoch_s);
/* RFC 3339 "1994-11-06T08:49:37.25Z" / "...+01:00" (also 't', 'z' and a
 * space for 'T'). Milliseconds since the epoch and whether the text had a
 * fraction of a second; -EINVAL. */
int date_parse_rfc3339(const char *s, int64_t *epoch_ms, bool *subsecond);

/* ---- DNS names ---------------------------------------------------------- */

/* RFC 1123 host name: labels of 1-63 [A-Za-z0-9-] not starting or ending
 * with '-', at most 253 characters (one trailing dot allowed), a top label
 * that is not all digits. With allow_wildcard a leading "*." label is
 * accepted. 0 or -EINVAL. */
int dns_name_check(const char *name, bool allow_wildcard);
/* `name` with a leading "*" replaced by "muster-" and 12 hex digits of
 * `rnd`, into out. -EINVAL if name has no wildcard, -ENAMETOOLONG if the
 * result does not fit in n or is longer than DNS_NAME_MAX. */
int dns_name_expand_wildcard(const char *name, const uint8_t rnd[6], char *out, size_t n);
