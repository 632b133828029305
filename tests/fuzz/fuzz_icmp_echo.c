/* libFuzzer target for the ICMP messages connectivity-check reads back
 * (agent/steps_net.c icmp_echo_reply_decode): the first byte says whether
 * the socket is a raw IPv4 one (the IP header comes first), the rest is the
 * datagram, copied to a buffer of its exact size. Invariants: an accepted
 * message is an ICMP header and the probe's 16 bytes at least, all of it in
 * the buffer, behind the header length an IPv4 header gives (5 to 15
 * words); what is decoded is what those bytes say. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "steps_net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        bool ip_header = data[0] & 1;
        size_t n = size - 1;
        uint8_t *buf = malloc(n ? n : 1);
        if (!buf)
                return 0;
        memcpy(buf, data + 1, n);
        struct icmp_echo_reply e;
        int r = icmp_echo_reply_decode(buf, n, ip_header, &e);
        if (r < 0) {
                if (r != -EINVAL)
                        abort();
                free(buf);
                return 0;
        }
        size_t off = 0;
        if (ip_header) {
                if (n < 20 || buf[0] >> 4 != 4 || (buf[0] & 0x0f) < 5)
                        abort();
                off = (size_t) (buf[0] & 0x0f) * 4;
        }
        if (e.len < 24 || off + e.len != n)
                abort();
        const uint8_t *ic = buf + off;
        if (e.type != ic[0] || e.code != ic[1] || e.id != (uint16_t) (ic[4] << 8 | ic[5]) || e.cookie != ic + 8)
                abort();
        if (e.index != ((uint32_t) ic[16] << 24 | (uint32_t) ic[17] << 16 | (uint32_t) ic[18] << 8 | ic[19]))
                abort();
        free(buf);
        return 0;
}
