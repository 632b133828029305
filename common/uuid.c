/* UUID text handling and v5 derivation (SHA-1 through mbedTLS). */
#include "uuid.h"

#include <ctype.h>
#include <errno.h>
#include <mbedtls/md.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

bool uuid_is_valid(const char *s) {
        if (!s || strlen(s) != 36)
                return false;
        for (int i = 0; i < 36; i++) {
                if (i == 8 || i == 13 || i == 18 || i == 23) {
                        if (s[i] != '-')
                                return false;
                } else if (!isxdigit((unsigned char) s[i]))
                        return false;
        }
        return true;
}

int uuid_normalize(const char *s, char out[UUID_STR_LEN]) {
        if (!uuid_is_valid(s))
                return -EINVAL;
        for (int i = 0; i < 36; i++)
                out[i] = (char) tolower((unsigned char) s[i]);
        out[36] = '\0';
        return 0;
}

static int uuid_bytes(const char *s, uint8_t b[16]) {
        if (!uuid_is_valid(s))
                return -EINVAL;
        for (int i = 0, j = 0; i < 16; i++, j += 2) {
                if (s[j] == '-')
                        j++;
                unsigned v;
                if (sscanf(s + j, "%2x", &v) != 1)
                        return -EINVAL;
                b[i] = (uint8_t) v;
        }
        return 0;
}

int uuid_v5(const char *ns, const char *name, char out[UUID_STR_LEN]) {
        uint8_t nsb[16], digest[20];
        const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA1);
        mbedtls_md_context_t ctx;
        int r;

        if (uuid_bytes(ns, nsb) < 0)
                return -EINVAL;
        mbedtls_md_init(&ctx);
        r = mbedtls_md_setup(&ctx, md, 0);
        if (r == 0)
                r = mbedtls_md_starts(&ctx);
        if (r == 0)
                r = mbedtls_md_update(&ctx, nsb, 16);
        if (r == 0)
                r = mbedtls_md_update(&ctx, (const unsigned char *) name, strlen(name));
        if (r == 0)
                r = mbedtls_md_finish(&ctx, digest);
        mbedtls_md_free(&ctx);
        if (r != 0)
                return -EIO;
        digest[6] = (uint8_t) ((digest[6] & 0x0f) | 0x50); /* version 5 */
        digest[8] = (uint8_t) ((digest[8] & 0x3f) | 0x80); /* RFC 4122 variant */
        snprintf(out, UUID_STR_LEN,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6],
                 digest[7], digest[8], digest[9], digest[10], digest[11], digest[12], digest[13],
                 digest[14], digest[15]);
        return 0;
}
