/* Growable byte buffers with a limit (growbuf.h). */
#include "growbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int growbuf_append(struct growbuf *b, const void *p, size_t n, size_t max, size_t first) {
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
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return 0;
}
