/* The network step runners of muster-agent (DESIGN §4): connectivity-check,
 * ntp-synchronizer and domain-resolution. Each takes the step's JSON args and
 * returns the JSON output the coordinator stores; the I/O is inside and every
 * wait is bounded. The step table's functions (steps.h) call them. The pure
 * parts they are built of have headers of their own, included here for the
 * tests: SNTP packets and clock math (sntp.h), ICMP echo replies (icmp.h),
 * HTTP and RFC 3339 dates (dates.h), DNS name rules (dnsname.h). */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dates.h"
#include "dnsname.h"
#include "icmp.h"
#include "sntp.h"

/* ---- limits ------------------------------------------------------------- */

#define CONN_MAX_PEERS 1000
#define CONN_MAX_ADDRESSES 16      /* per peer */
#define CONN_MAX_COUNT 10          /* probes per address */
#define CONN_INTERVAL_MS 100       /* between the rounds of probes */
#define NTP_MAX_SOURCES 16
#define NTP_MAX_SOURCE_LEN 262     /* "[" 253 "]:" 5 */
#define DNS_MAX_NAMES 64

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
