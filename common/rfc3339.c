/* RFC 3339 date-times (rfc3339.h): the one reader of the coordinator's and
 * the agent's, and the civil calendar it counts days with. */
#include "rfc3339.h"

#include <errno.h>
#include <stddef.h>

int64_t civil_to_days(int64_t y, int m, int d) {
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

int civil_days_in_month(int64_t y, int m) {
        static const int dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        return m == 2 && leap ? 29 : dm[m - 1];
}

/* Exactly n ASCII digits at *p, which moves past them. */
static bool digits(const char **p, int n, int *out) {
        int v = 0;
        for (int i = 0; i < n; i++) {
                char ch = (*p)[i];
                if (ch < '0' || ch > '9')
                        return false;
                v = v * 10 + (ch - '0');
        }
        *p += n;
        *out = v;
        return true;
}

int rfc3339_parse(const char *s, unsigned flags, struct rfc3339_time *out) {
        int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
        int64_t frac_ms = 0;
        bool has_frac = false;
        const char *p = s;

        if (!s || !out)
                return -EINVAL;
        if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d) ||
            !(*p == 'T' || *p == 't' || (*p == ' ' && (flags & RFC3339_SPACE))) || !(p++, digits(&p, 2, &h)) ||
            *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &sec))
                return -EINVAL;
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
        if (*p == 'Z' || *p == 'z')
                p++;
        else if (*p == '+' || *p == '-') {
                sign = *p++ == '+' ? 1 : -1;
                if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59)
                        return -EINVAL;
        } else
                return -EINVAL;
        if (*p)
                return -EINVAL;
        if (mo < 1 || mo > 12 || d < 1 || d > civil_days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
                return -EINVAL;
        int64_t t = civil_to_days(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - sign * (oh * 3600 + om * 60);
        *out = (struct rfc3339_time) { .unix_ms = t * 1000 + frac_ms, .year = y, .subsecond = has_frac,
                                       .leap_second = sec == 60 };
        return 0;
}
