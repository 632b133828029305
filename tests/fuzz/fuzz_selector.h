/* Text out of a fuzzer's bytes: the whole input, or (targets that fuzz
 * several readers) the reader picked by the first byte and the rest. */
#pragma once
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* data[1..size) as a NUL-terminated string (malloc'd); NULL for an empty
 * input, one over max bytes, or out of memory. */
static inline char *fuzz_selected_text(const uint8_t *data, size_t size, size_t max) {
        if (size < 1 || size > max)
                return NULL;
        char *s = malloc(size);
        if (!s)
                return NULL;
        memcpy(s, data + 1, size - 1);
        s[size - 1] = '\0';
        return s;
}

/* data[0..size) as a NUL-terminated string (malloc'd); NULL over max bytes
 * or out of memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size, size_t max) {
        if (size > max)
                return NULL;
        char *s = malloc(size + 1);
        if (!s)
                return NULL;
        memcpy(s, data, size);
        s[size] = '\0';
        return s;
}
