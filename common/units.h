/* Human-readable numbers shared by the programs' messages. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Decimal units, as disk vendors count: "8.6 GB", "376.8 KB", "512 B";
 * "unknown" for a negative size. Returns buf. */
char *units_format_bytes(int64_t bytes, char *buf, size_t n);

/* A duration as people write it: an integer with an optional unit, s, m, h,
 * d, w or y (365 days); a bare number is seconds. "90d", "12h", "1y".
 * 0, -EINVAL for anything else, -ERANGE past INT64_MAX seconds. */
int units_parse_duration_s(const char *s, int64_t *seconds);
