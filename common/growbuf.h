/* Growable NUL-terminated byte buffers with a size limit, for what is built
 * or received in memory: canonical JSON, HTTP replies, downloads. */
#pragma once
#include <stddef.h>

struct growbuf {
        char *data;  /* NUL-terminated once anything was appended; free() it */
        size_t len;
        size_t cap;
};

/* Append n bytes of p. -E2BIG, with nothing appended, when the length would
 * pass max; -ENOMEM. The first allocation is `first` bytes (> 0), doubled
 * until what is asked for fits, but never more than max + 1 bytes. */
int growbuf_append(struct growbuf *b, const void *p, size_t n, size_t max, size_t first);

/* printf onto the buffer: growbuf_append's rules for the text it makes
 * (-E2BIG, with nothing appended, past max; -ENOMEM), -EINVAL for a format
 * error. The first allocation is GROWBUF_PRINTF_FIRST bytes. */
#define GROWBUF_PRINTF_FIRST 1024
int growbuf_printf(struct growbuf *b, size_t max, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
