/* Growable byte buffers with a limit (growbuf.h). */
#include "growbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the NUL (growbuf_append's rules). */
static int reserve(struct growbuf *b, size_t n, size_t max, size_t first) {
        if (n > max - b->len)
                return -E2BIG;
        if (b->len + n + 1 > b->cap) {
                size_t cap = b->cap ? b->cap : first;
                while (cap < b->len + n + 1)
                        cap *= 2;
                if (cap - 1 > max)
                        cap = max + 1; /* doubling must not reach twice the limit */
                char *d = realloc(b->data, cap);
                if (!d)
                        return -ENOMEM;
                b->data = d;
                b->cap = cap;
        }
        return 0;
}

int growbuf_append(struct growbuf *b, const void *p, size_t n, size_t max, size_t first) {
        int r = reserve(b, n, max, first);
        if (r < 0)
                return r;
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
}

int growbuf_printf(struct growbuf *b, size_t max, const char *fmt, ...) {
        char *at = b->data ? b->data + b->len : NULL;
        size_t room = b->data ? b->cap - b->len : 0;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(at, room, fmt, ap);
        va_end(ap);
        int r = n < 0 ? -EINVAL : reserve(b, (size_t) n, max, GROWBUF_PRINTF_FIRST);
        if (r == 0 && (size_t) n >= room) { /* it did not fit: again, now that it does */
                va_start(ap, fmt);
                vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
                va_end(ap);
        }
        if (r == 0)
                b->len += (size_t) n;
        if (b->data)
                b->data[b->len] = '\0'; /* a refused text leaves no trace */
        return r;
}
