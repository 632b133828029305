/* RFC 3339 date-times, read once for everyone: the coordinator's model
 * (model_time_parse, seconds) and the agent's clock check
 * (date_parse_rfc3339, milliseconds) are two policies over this reader.
 * Also the proleptic Gregorian calendar under it (H. Hinnant's
 * days_from_civil), which the agent's IMF-fixdate reader shares. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* rfc3339_parse() flags. */
#define RFC3339_SPACE (1u << 0) /* a space may stand for the 'T' (RFC 3339 §5.6, NOTE) */

struct rfc3339_time {
        int64_t unix_ms;        /* ms since the epoch, the fraction cut to ms; a
                                 * leap second ":60" counts as the next minute's ":00" */
        int year;               /* as written: 0000-9999 */
        bool subsecond;         /* the text had a fraction of a second */
        bool leap_second;       /* its seconds were 60 */
};

/* "1994-11-06T08:49:37.25Z" / "...+01:00", 't' and 'z' too: a full date,
 * 'T', a full time with an optional fraction of any length, and 'Z' or a
 * numeric offset, nothing after. The date must exist (29 February only in
 * leap years), hours 0-23, minutes 0-59, seconds 0-60, offsets to 23:59.
 * 0, or -EINVAL (s or out NULL too). */
int rfc3339_parse(const char *s, unsigned flags, struct rfc3339_time *out);

/* Days since 1970-01-01 of a proleptic Gregorian date. */
int64_t civil_to_days(int64_t y, int m, int d);
/* 28-31; m 1-12. */
int civil_days_in_month(int64_t y, int m);
