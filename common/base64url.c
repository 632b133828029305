/* Base64url without padding (RFC 4648 §5, RFC 7515 §2). The decoder refuses
 * anything but the canonical form so a token has exactly one spelling. */
#include "base64url.h"

#include <errno.h>
#include <stdlib.h>

static const char alphabet[64] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int sextet(char c) {
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '-')
                return 62;
        if (c == '_')
                return 63;
        return -1;
}

size_t base64url_encoded_len(size_t n) {
        return n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1);
}

int base64url_encode(const void *in, size_t len, char **out) {
        const uint8_t *p = in;

        if (len > (SIZE_MAX - 1) / 4 * 3)
                return -ENOMEM;
        char *s = malloc(base64url_encoded_len(len) + 1);
        if (!s)
                return -ENOMEM;

        size_t o = 0, i = 0;
        for (; i + 3 <= len; i += 3) {
                uint32_t v = (uint32_t) p[i] << 16 | (uint32_t) p[i + 1] << 8 | p[i + 2];
                s[o++] = alphabet[v >> 18 & 63];
                s[o++] = alphabet[v >> 12 & 63];
                s[o++] = alphabet[v >> 6 & 63];
                s[o++] = alphabet[v & 63];
        }
        if (len - i == 1) {
                uint32_t v = (uint32_t) p[i] << 16;
                s[o++] = alphabet[v >> 18 & 63];
                s[o++] = alphabet[v >> 12 & 63];
        } else if (len - i == 2) {
                uint32_t v = (uint32_t) p[i] << 16 | (uint32_t) p[i + 1] << 8;
                s[o++] = alphabet[v >> 18 & 63];
                s[o++] = alphabet[v >> 12 & 63];
                s[o++] = alphabet[v >> 6 & 63];
        }
        s[o] = '\0';
        *out = s;
        return 0;
}

static size_t decoded_len(size_t len) {
        return len / 4 * 3 + (len % 4 == 0 ? 0 : len % 4 - 1);
}

int base64url_decode_buf(const char *in, size_t len, uint8_t *buf, size_t cap, size_t *outlen) {
        if (len % 4 == 1)
                return -EINVAL;
        if (decoded_len(len) > cap)
                return -ENOBUFS;

        size_t o = 0;
        uint32_t acc = 0;
        unsigned bits = 0;
        for (size_t i = 0; i < len; i++) {
                int v = sextet(in[i]);
                if (v < 0)
                        return -EINVAL;
                acc = acc << 6 | (uint32_t) v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        buf[o++] = (uint8_t) (acc >> bits);
                        acc &= (1u << bits) - 1;
                }
        }
        /* Leftover bits must be zero, or two spellings would decode alike. */
        if (acc != 0)
                return -EINVAL;
        *outlen = o;
        return 0;
}

int base64url_decode(const char *in, size_t len, uint8_t **out, size_t *outlen) {
        size_t n = decoded_len(len);
        uint8_t *buf = malloc(n + 1);
        if (!buf)
                return -ENOMEM;
        int r = base64url_decode_buf(in, len, buf, n, outlen);
        if (r < 0) {
                free(buf);
                return r == -ENOBUFS ? -EINVAL : r;
        }
        buf[*outlen] = '\0';
        *out = buf;
        return 0;
}
