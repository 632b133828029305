/* libFuzzer target for the HTTP header lines the agent reads
 * (agent/client.c): the coordinator's Date (client_header_date), then read
 * as the clock check reads it (date_parse_imf_fixdate, date_parse_rfc3339),
 * and the first byte of a Content-Range when a download resumes
 * (client_header_range_start). The input is one line as libcurl hands it
 * over: not NUL-terminated, so it is copied to a buffer of its exact size.
 * Invariants: a Date value is 1..CLIENT_DATE_MAX bytes of the line, with no
 * NUL and no whitespace around it; a range start is the line's digits after
 * "bytes ", leading zeros aside. */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "steps_net.h"

static void check_date(const char *line, size_t n) {
        char out[CLIENT_DATE_MAX + 1];
        memset(out, 'x', sizeof out);
        if (!client_header_date(line, n, out))
                return;
        size_t k = strnlen(out, sizeof out);
        if (k == 0 || k > CLIENT_DATE_MAX)
                abort();
        if (out[0] == ' ' || out[0] == '\t' || isspace((unsigned char) out[k - 1]))
                abort();
        if (!memmem(line + 5, n - 5, out, k))
                abort();
        int64_t s, ms;
        bool sub;
        (void) date_parse_imf_fixdate(out, &s);
        (void) date_parse_rfc3339(out, &ms, &sub);
}

static void check_range(const char *line, size_t n) {
        int64_t start = -1;
        if (!client_header_range_start(line, n, &start))
                return;
        if (start < 0)
                abort();
        const size_t plen = strlen("Content-Range: bytes ");
        size_t at = plen;
        while (at < n && line[at] == '0')
                at++;
        char digits[32];
        int k = snprintf(digits, sizeof digits, "%" PRId64, start);
        if (start == 0) {
                if (line[plen] != '0')
                        abort();
        } else if (n - at < (size_t) k || memcmp(line + at, digits, (size_t) k) != 0 || line[at + (size_t) k] != '-')
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *line = malloc(size ? size : 1);
        if (!line)
                return 0;
        memcpy(line, data, size);
        check_date(line, size);
        check_range(line, size);
        free(line);
        return 0;
}
