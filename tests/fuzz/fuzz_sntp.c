/* libFuzzer target for what an NTP server sends the agent's
 * ntp-synchronizer (agent/steps_net.c): any datagram is decoded
 * (sntp_packet_decode) and judged as the answer to a request with its own
 * origin timestamp and with another one (sntp_reply_check); a valid answer
 * gives an offset and a delay (sntp_offset_delay), T4 from the 8 bytes after
 * the packet; every timestamp goes through the Unix conversions. Invariants:
 * shorter than 48 bytes is -EINVAL, else the packet encodes back to its
 * first 48 bytes; a verdict is one of the list with words for it, and a
 * reply that does not echo our timestamp is never believed; ns -> NTP -> ns
 * is exact and NTP -> ns -> NTP moves a timestamp by at most 3 units (but
 * at the end of the era window, where 2104 wraps to 1968). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "steps_net.h"

/* Where the window of NTP time decoding ends (2104-02-07T06:28:16Z): the
 * last fraction of the second before it rounds up to it, which encodes as
 * the start of the window (1968). */
#define WINDOW_END_NS ((((int64_t) 1 << 32) + ((int64_t) 1 << 31) - (int64_t) SNTP_UNIX_EPOCH) * 1000000000)

static void check_ts(uint64_t ts) {
        int64_t ns = sntp_ts_to_unix_ns(ts);
        if (ns >= WINDOW_END_NS) {
                if (ns != WINDOW_END_NS)
                        abort();
                return;
        }
        uint64_t back = sntp_ts_from_unix_ns(ns);
        if (sntp_ts_to_unix_ns(back) != ns)
                abort();
        int64_t d = (int64_t) (back - ts);
        if (d < -3 || d > 3)
                abort();
}

static enum sntp_verdict verdict(const struct sntp_packet *p, uint64_t our_tx) {
        enum sntp_verdict v = sntp_reply_check(p, our_tx);
        if ((int) v < 0 || v >= _SNTP_VERDICT_MAX || strcmp(sntp_verdict_to_string(v), "unknown") == 0)
                abort();
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* An exact copy: a read past the datagram is ASan's to see. */
        uint8_t *buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        struct sntp_packet p;
        int r = sntp_packet_decode(buf, size, &p);
        if (size < SNTP_PACKET_SIZE) {
                if (r != -EINVAL)
                        abort();
                free(buf);
                return 0;
        }
        if (r != 0 || p.leap > 3 || p.version > 7 || p.mode > 7)
                abort();
        uint8_t again[SNTP_PACKET_SIZE];
        sntp_packet_encode(&p, again);
        if (memcmp(again, buf, SNTP_PACKET_SIZE) != 0)
                abort();

        enum sntp_verdict other = verdict(&p, ~p.orig_ts);
        if (other != SNTP_BAD_MODE && other != SNTP_BAD_VERSION && other != SNTP_ORIGIN_MISMATCH)
                abort();
        enum sntp_verdict v = verdict(&p, p.orig_ts);
        if (v == SNTP_VALID) {
                if (p.mode != 4 || p.stratum == 0 || p.stratum > 15 || p.leap == 3 || !p.rx_ts || !p.tx_ts)
                        abort();
                uint64_t t4 = p.orig_ts + 1;
                if (size >= SNTP_PACKET_SIZE + 8) {
                        t4 = 0;
                        for (int i = 0; i < 8; i++)
                                t4 = t4 << 8 | buf[SNTP_PACKET_SIZE + i];
                }
                int64_t offset, delay;
                sntp_offset_delay(p.orig_ts, p.rx_ts, p.tx_ts, t4, &offset, &delay);
                sntp_offset_delay(p.orig_ts, p.rx_ts, p.tx_ts, t4, NULL, NULL);
        }
        check_ts(p.ref_ts);
        check_ts(p.orig_ts);
        check_ts(p.rx_ts);
        check_ts(p.tx_ts);
        free(buf);
        return 0;
}
