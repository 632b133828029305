/* The dates the agent is sent (dates.h): IMF-fixdate read strictly, and
 * RFC 3339 through common/rfc3339.h under the agent's limits. */
#include "dates.h"

#include <errno.h>
#include <string.h>

#include "rfc3339.h"

static const char day_names[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char month_names[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Exactly n ASCII digits. */
static bool digits(const char *s, int n, int *out) {
        int v = 0;
        for (int i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *out = v;
        return true;
}

static int name_index(const char names[][4], int n, const char *s) {
        for (int i = 0; i < n; i++)
                if (memcmp(names[i], s, 3) == 0)
                        return i;
        return -1;
}

static bool date_valid(int y, int mon, int d, int h, int mi, int s) {
        return y >= 1900 && mon >= 1 && mon <= 12 && d >= 1 && d <= civil_days_in_month(y, mon) && h <= 23 &&
               mi <= 59 && s <= 60;
}

int date_parse_imf_fixdate(const char *s, int64_t *epoch_s) {
        int d, y, h, mi, sec;
        /* "Sun, 06 Nov 1994 08:49:37 GMT" */
        if (!s || !epoch_s || strnlen(s, 30) != 29)
                return -EINVAL;
        int wday = name_index(day_names, 7, s);
        int mon = name_index(month_names, 12, s + 8) + 1;
        if (wday < 0 || mon < 1 || s[3] != ',' || s[4] != ' ' || !digits(s + 5, 2, &d) || s[7] != ' ' ||
            s[11] != ' ' || !digits(s + 12, 4, &y) || s[16] != ' ' || !digits(s + 17, 2, &h) || s[19] != ':' ||
            !digits(s + 20, 2, &mi) || s[22] != ':' || !digits(s + 23, 2, &sec) || s[25] != ' ' ||
            memcmp(s + 26, "GMT", 3) != 0)
                return -EINVAL;
        if (!date_valid(y, mon, d, h, mi, sec))
                return -EINVAL;
        int64_t days = civil_to_days(y, mon, d);
        if ((days % 7 + 11) % 7 != wday) /* 1970-01-01 was a Thursday */
                return -EINVAL;
        *epoch_s = days * 86400 + h * 3600 + mi * 60 + sec;
        return 0;
}

int date_parse_rfc3339(const char *s, int64_t *epoch_ms, bool *subsecond) {
        struct rfc3339_time t;
        if (!s || !epoch_ms || strnlen(s, 65) > 64)
                return -EINVAL;
        if (rfc3339_parse(s, RFC3339_SPACE, &t) < 0 || t.year < 1900)
                return -EINVAL;
        *epoch_ms = t.unix_ms;
        if (subsecond)
                *subsecond = t.subsecond;
        return 0;
}
