/* Human-readable numbers (units.h). */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *units_format_bytes(int64_t bytes, char *buf, size_t n) {
        static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        double v = (double) bytes;
        size_t i = 0;

        if (bytes < 0) {
                snprintf(buf, n, "unknown");
                return buf;
        }
        while (v >= 1024 && i + 1 < sizeof u / sizeof *u) {
                v /= 1024;
                i++;
        }
        if (i == 0) {
                snprintf(buf, n, "%lld B", (long long) bytes);
                return buf;
        }
        /* One decimal, none when it is 0: "1.5 GiB", "16 GiB". A value that
         * rounds up to 1024 says so in the next unit. */
        char num[32];
        snprintf(num, sizeof num, "%.1f", v);
        if (strcmp(num, "1024.0") == 0 && i + 1 < sizeof u / sizeof *u)
                snprintf(num, sizeof num, "1.0"), i++;
        size_t l = strlen(num);
        if (l > 2 && strcmp(num + l - 2, ".0") == 0)
                num[l - 2] = '\0';
        snprintf(buf, n, "%s %s", num, u[i]);
        return buf;
}

int units_parse_duration_s(const char *s, int64_t *seconds) {
        static const struct { char unit; int64_t mult; } units[] = {
                { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 }, { 'y', 365 * 86400 },
        };
        int64_t n = 0;
        const char *p = s;

        if (!s || !isdigit((unsigned char) *p))
                return -EINVAL;
        for (; isdigit((unsigned char) *p); p++) {
                if (n > (INT64_MAX - (*p - '0')) / 10)
                        return -ERANGE;
                n = n * 10 + (*p - '0');
        }
        if (*p == '\0') {
                *seconds = n;
                return 0;
        }
        if (p[1] != '\0')
                return -EINVAL;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++)
                if (*p == units[i].unit) {
                        if (n > INT64_MAX / units[i].mult)
                                return -ERANGE;
                        *seconds = n * units[i].mult;
                        return 0;
                }
        return -EINVAL;
}
