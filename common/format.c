/* Human-readable numbers (format.h). */
#include "format.h"

#include <stdio.h>

char *format_bytes(int64_t bytes, char *buf, size_t n) {
        static const char *const u[] = { "B", "KB", "MB", "GB", "TB", "PB", "EB" };
        double v = (double) bytes;
        size_t i = 0;

        if (bytes < 0) {
                snprintf(buf, n, "unknown");
                return buf;
        }
        while (v >= 1000 && i + 1 < sizeof u / sizeof *u) {
                v /= 1000;
                i++;
        }
        snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
        return buf;
}
