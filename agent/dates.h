/* The dates the agent is sent: the coordinator's Date header and an
 * ntp-synchronizer step's coordinator_date. RFC 3339 is read by the one
 * reader of common/rfc3339.h, under the agent's limits. Pure; fuzzed
 * (fuzz_dates, fuzz_http_headers). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* RFC 7231 IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT", strictly: the
 * day name must match the date. Seconds since the Unix epoch; -EINVAL. */
int date_parse_imf_fixdate(const char *s, int64_t *epoch_s);
/* RFC 3339 "1994-11-06T08:49:37.25Z" / "...+01:00" (also 't', 'z' and a
 * space for 'T'; rfc3339_parse() with RFC3339_SPACE), of at most 64
 * characters and from the year 1900 on. Milliseconds since the epoch (a
 * leap second :60 is the next minute's :00) and whether the text had a
 * fraction of a second; -EINVAL. */
int date_parse_rfc3339(const char *s, int64_t *epoch_ms, bool *subsecond);
