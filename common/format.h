/* Human-readable numbers shared by the programs' messages. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Decimal units, as disk vendors count: "8.6 GB", "376.8 KB", "512 B";
 * "unknown" for a negative size. Returns buf. */
char *format_bytes(int64_t bytes, char *buf, size_t n);
