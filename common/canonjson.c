/* Canonical JSON: one byte string per JSON value, whatever spelling it was
 * parsed from, so that a digest of it can be signed and checked again after
 * a round trip through any JSON parser. Integers only; strings must be
 * UTF-8 and are escaped minimally. */
#include "canonjson.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "growbuf.h"

#define CANON_MAX_LEN ((size_t) 1 << 30)
#define CANON_MAX_DEPTH 256

static int buf_add(struct growbuf *b, const void *s, size_t n) {
        return growbuf_append(b, s, n, CANON_MAX_LEN, 256);
}

static int buf_addc(struct growbuf *b, char c) {
        return buf_add(b, &c, 1);
}

/* Length of the well-formed UTF-8 sequence at s (at most n bytes), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
        unsigned char c = s[0];
        if (c < 0x80)
                return 1;
        size_t len;
        unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
        if (c >= 0xC2 && c <= 0xDF)
                len = 2;
        else if (c == 0xE0) {
                len = 3;
                lo = 0xA0;
        } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
                len = 3;
        else if (c == 0xED) {
                len = 3;
                hi = 0x9F;
        } else if (c == 0xF0) {
                len = 4;
                lo = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3)
                len = 4;
        else if (c == 0xF4) {
                len = 4;
                hi = 0x8F;
        } else
                return 0;
        if (n < len)
                return 0;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xBF)
                        return 0;
        return len;
}

static int put_string(struct growbuf *b, const char *str, size_t n) {
        const unsigned char *s = (const unsigned char *) str;
        int r = buf_addc(b, '"');
        if (r < 0)
                return r;
        size_t i = 0;
        while (i < n) {
                /* Copy the longest run that needs no escape in one go. */
                size_t j = i;
                while (j < n && s[j] >= 0x20 && s[j] != '"' && s[j] != '\\') {
                        size_t l = utf8_seq(s + j, n - j);
                        if (l == 0)
                                return -EINVAL;
                        j += l;
                }
                if (j > i) {
                        r = buf_add(b, s + i, j - i);
                        if (r < 0)
                                return r;
                        i = j;
                        continue;
                }
                char esc[7];
                switch (s[i]) {
                case '"':  memcpy(esc, "\\\"", 3); break;
                case '\\': memcpy(esc, "\\\\", 3); break;
                case '\b': memcpy(esc, "\\b", 3); break;
                case '\f': memcpy(esc, "\\f", 3); break;
                case '\n': memcpy(esc, "\\n", 3); break;
                case '\r': memcpy(esc, "\\r", 3); break;
                case '\t': memcpy(esc, "\\t", 3); break;
                default:
                        snprintf(esc, sizeof esc, "\\u%04x", s[i]);
                        break;
                }
                r = buf_add(b, esc, strlen(esc));
                if (r < 0)
                        return r;
                i++;
        }
        return buf_addc(b, '"');
}

struct member {
        const char *key;
        json_object *val;
};

static int member_cmp(const void *a, const void *b) {
        /* strcmp compares as unsigned char: byte order. */
        return strcmp(((const struct member *) a)->key, ((const struct member *) b)->key);
}

static int put_value(struct growbuf *b, json_object *o, unsigned depth);

static int put_object(struct growbuf *b, json_object *o, unsigned depth) {
        size_t n = (size_t) json_object_object_length(o);
        _cleanup_free_ struct member *m = NULL;
        if (n > 0) {
                m = calloc(n, sizeof *m);
                if (!m)
                        return -ENOMEM;
        }
        size_t i = 0;
        json_object_object_foreach(o, k, v) {
                if (i >= n)
                        return -EINVAL; /* cannot happen: the table changed under us */
                m[i++] = (struct member) { k, v };
        }
        n = i;
        if (n > 1)
                qsort(m, n, sizeof *m, member_cmp);

        int r = buf_addc(b, '{');
        if (r < 0)
                return r;
        for (i = 0; i < n; i++) {
                if (i > 0 && (r = buf_addc(b, ',')) < 0)
                        return r;
                r = put_string(b, m[i].key, strlen(m[i].key));
                if (r < 0)
                        return r;
                r = buf_addc(b, ':');
                if (r < 0)
                        return r;
                r = put_value(b, m[i].val, depth + 1);
                if (r < 0)
                        return r;
        }
        return buf_addc(b, '}');
}

static int put_value(struct growbuf *b, json_object *o, unsigned depth) {
        if (depth > CANON_MAX_DEPTH)
                return -E2BIG;
        int r;
        switch (json_object_get_type(o)) {
        case json_type_null:
                return buf_add(b, "null", 4);
        case json_type_boolean:
                return json_object_get_boolean(o) ? buf_add(b, "true", 4) : buf_add(b, "false", 5);
        case json_type_double:
                return -EINVAL;
        case json_type_int: {
                int64_t v = json_object_get_int64(o);
                /* json-c keeps integers above INT64_MAX as uint64; those
                 * read back clamped, so refuse them rather than sign a lie. */
                if (v == INT64_MAX && json_object_get_uint64(o) != (uint64_t) INT64_MAX)
                        return -EINVAL;
                char num[24];
                int l = snprintf(num, sizeof num, "%" PRId64, v);
                return buf_add(b, num, (size_t) l);
        }
        case json_type_string:
                return put_string(b, json_object_get_string(o), (size_t) json_object_get_string_len(o));
        case json_type_object:
                return put_object(b, o, depth);
        case json_type_array: {
                size_t n = json_object_array_length(o);
                r = buf_addc(b, '[');
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        if (i > 0 && (r = buf_addc(b, ',')) < 0)
                                return r;
                        r = put_value(b, json_object_array_get_idx(o, i), depth + 1);
                        if (r < 0)
                                return r;
                }
                return buf_addc(b, ']');
        }
        }
        return -EINVAL;
}

int canonjson_serialize(json_object *o, char **out, size_t *len) {
        if (!out || !len)
                return -EINVAL;
        struct growbuf b = { 0 };
        int r = put_value(&b, o, 0);
        if (r < 0) {
                free(b.data);
                return r;
        }
        *out = b.data;
        *len = b.len;
        return 0;
}
