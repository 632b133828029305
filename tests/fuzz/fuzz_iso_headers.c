/* libFuzzer target for the request headers of the ISO download
 * (coordinator/http/conditional.c, coordinator/svc/iso.c): Range against any body size, If-None-Match, If-Range,
 * Host and the file name never read or write out of bounds, and a range they
 * accept lies inside the body.
 * Build: clang -g -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon -Icoordinator/svc -Icoordinator/http \
 *   tests/fuzz/fuzz_iso_headers.c coordinator/svc/iso.c coordinator/http/conditional.c common/bootcfg.c common/crypto.c common/fdio.c \
 *   common/uuid.c -I/usr/include/json-c -ljson-c -lmbedcrypto */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "svc/iso.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint64_t body = 0;
        if (size < 8)
                return 0;
        memcpy(&body, data, 8);
        if (data[0] & 1)
                body %= 1u << 20; /* small bodies too, where clamping matters */
        char *s = malloc(size - 8 + 1);
        if (!s)
                return 0;
        memcpy(s, data + 8, size - 8);
        s[size - 8] = '\0';

        uint64_t start = 0, len = 0;
        int r = http_range_parse(s, body, &start, &len);
        if (r == 1 && (len == 0 || start >= body || len > body - start))
                abort();
        if (r != 1 && r != 0 && r != -ERANGE)
                abort();
        static const char etag[] = "\"0123456789abcdef\"";
        bool strong = http_etag_if_range(s, etag);
        if (strong && !http_etag_none_match(s, etag))
                abort(); /* a strong match is a weak one too */
        (void) http_host_ok(s);
        char name[64];
        svc_iso_file_name(s, name, sizeof name);
        size_t n = strlen(name);
        if (n < 5 || n > sizeof name - 1 || strcmp(name + n - 4, ".iso") != 0 || name[0] == '.' ||
            strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
                abort();
        free(s);
        return 0;
}
