/* libFuzzer target for the dates the agent is sent (agent/dates.c): the
 * coordinator's Date header and an ntp-synchronizer step's
 * coordinator_date, as IMF-fixdate (date_parse_imf_fixdate) or RFC 3339
 * (date_parse_rfc3339), and the same text through the model's RFC 3339
 * reader (common/model.c model_time_parse); both RFC 3339 readers are
 * policies over the one of common/rfc3339.c (rfc3339_parse), read here too.
 * Invariants: an accepted IMF-fixdate prints back to itself (but a leap
 * second); an accepted RFC 3339 time printed in UTC with milliseconds reads
 * back to the same instant; the agent's and the model's readers accept the
 * same texts (the agent's also takes a space for 'T', and only years from
 * 1900 and 64 characters) and agree on the second; each agrees with
 * rfc3339_parse on what it accepts and on the instant; a time the model
 * prints reads back to itself. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "rfc3339.h"
#include "steps_net.h"
#include "fuzz_selector.h"

static int64_t floor_div(int64_t a, int64_t b) {
        return a / b - (a % b < 0);
}

static void check_imf(const char *s) {
        int64_t t;
        if (date_parse_imf_fixdate(s, &t) < 0)
                return;
        time_t tt = (time_t) t;
        struct tm tm;
        char back[64];
        if (!gmtime_r(&tt, &tm) || tm.tm_year + 1900 < 1900 || tm.tm_year + 1900 > 9999 + 1)
                abort();
        if (strcmp(s + 23, "60 GMT") == 0) /* 23:59:60 is the next day's 00:00:00 */
                return;
        if (strftime(back, sizeof back, "%a, %d %b %Y %H:%M:%S GMT", &tm) == 0 || strcmp(back, s) != 0)
                abort();
}

static void check_rfc3339(const char *s) {
        int64_t ms, model_s;
        bool sub = true;
        int r = date_parse_rfc3339(s, &ms, &sub);
        int m = model_time_parse(s, &model_s);
        size_t len = strlen(s);
        if (r == 0 && s[10] != ' ' && m != 0)
                abort(); /* the agent's reader takes no more than the model's */
        if (m == 0 && len <= 64 && strncmp(s, "1900", 4) >= 0 && r != 0)
                abort(); /* nor less, from 1900 on */
        if (r < 0)
                return;
        if (sub != (strchr(s, '.') != NULL))
                abort();
        int64_t sec = floor_div(ms, 1000);
        if (m == 0 && model_s != sec && !(s[17] == '6' && s[18] == '0' && model_s == sec - 1))
                abort(); /* the model reads a leap second as :59 */

        time_t tt = (time_t) sec;
        struct tm tm;
        if (!gmtime_r(&tt, &tm))
                abort();
        if (tm.tm_year + 1900 >= 1900 && tm.tm_year + 1900 <= 9999) {
                char back[64];
                int64_t again;
                bool sub2 = false;
                snprintf(back, sizeof back, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (ms - sec * 1000));
                if (date_parse_rfc3339(back, &again, &sub2) < 0 || again != ms || !sub2)
                        abort();
        }
}

/* The two policies against the one reader they share. */
static void check_merged(const char *s) {
        struct rfc3339_time t, ts;
        int64_t ms, model_s;
        bool sub = false;
        int r = rfc3339_parse(s, 0, &t), rs = rfc3339_parse(s, RFC3339_SPACE, &ts);
        if (r == 0 && (rs != 0 || ts.unix_ms != t.unix_ms))
                abort(); /* RFC3339_SPACE only adds */
        int m = model_time_parse(s, &model_s);
        if ((m == 0) != (r == 0))
                abort();
        if (m == 0 && model_s != floor_div(t.unix_ms, 1000) - t.leap_second)
                abort();
        int a = date_parse_rfc3339(s, &ms, &sub);
        if ((a == 0) != (rs == 0 && strlen(s) <= 64 && ts.year >= 1900))
                abort();
        if (a == 0 && (ms != ts.unix_ms || sub != ts.subsecond))
                abort();
}

static void check_model(const char *s) {
        int64_t t, again;
        char buf[MODEL_TIME_LEN];
        if (model_time_parse(s, &t) < 0 || model_time_format(t, buf) < 0)
                return;
        if (model_time_parse(buf, &again) < 0 || again != t)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_text(data, size, 256);
        if (!s)
                return 0;
        check_imf(s);
        check_rfc3339(s);
        check_merged(s);
        check_model(s);
        free(s);
        return 0;
}
