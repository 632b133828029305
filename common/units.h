/* Human-readable numbers shared by the programs' messages. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Binary (IEC) units, as lsblk, free and musterctl print them, one system
 * for every program's messages: "8 GiB", "1.5 TiB", "368 KiB", "512 B"
 * (one decimal, none when it is 0); "unknown" for a negative size.
 * Returns buf. */
char *units_format_bytes(int64_t bytes, char *buf, size_t n);

/* A duration as people write it: an integer with an optional unit, s, m, h,
 * d, w or y (365 days); a bare number is seconds. "90d", "12h", "1y".
 * 0, -EINVAL for anything else, -ERANGE past INT64_MAX seconds. */
int units_parse_duration_s(const char *s, int64_t *seconds);
