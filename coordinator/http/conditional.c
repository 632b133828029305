/* Conditional and partial requests (RFC 9110 §13-14): Range, If-None-Match
 * and If-Range against a body and its ETag, and a Host header fit to put in
 * a URL, and the 416 for a range outside the body. Pure but for that
 * answer: the handlers that stream files (the discovery ISO, a release's OS
 * image) decide with these. */
#include "http/http.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static const char *skip_ows(const char *s) {
        while (*s == ' ' || *s == '\t')
                s++;
        return s;
}

/* Digits at *s into *v, saturating at UINT64_MAX; false when there are none. */
static bool parse_digits(const char **s, uint64_t *v) {
        const char *p = *s;
        uint64_t n = 0;
        if (*p < '0' || *p > '9')
                return false;
        for (; *p >= '0' && *p <= '9'; p++) {
                unsigned d = (unsigned) (*p - '0');
                n = n > (UINT64_MAX - d) / 10 ? UINT64_MAX : n * 10 + d;
        }
        *s = p;
        *v = n;
        return true;
}

int http_range_parse(const char *header, uint64_t size, uint64_t *start, uint64_t *len) {
        if (!header)
                return 0;
        const char *p = skip_ows(header);
        if (strncasecmp(p, "bytes", 5) != 0)
                return 0;
        p = skip_ows(p + 5);
        if (*p++ != '=')
                return 0;
        p = skip_ows(p);
        uint64_t a = 0, b = 0;
        bool has_a = parse_digits(&p, &a);
        if (*p++ != '-')
                return 0;
        bool has_b = parse_digits(&p, &b);
        p = skip_ows(p);
        if (*p) /* several ranges (a comma) or junk: the whole body */
                return 0;
        if (!has_a && !has_b)
                return 0;
        if (!has_a) { /* suffix: the last b bytes */
                if (b == 0 || size == 0)
                        return -ERANGE;
                uint64_t n = b < size ? b : size;
                *start = size - n;
                *len = n;
                return 1;
        }
        if (has_b && b < a)
                return 0; /* invalid: ignored */
        if (a >= size)
                return -ERANGE;
        uint64_t last = has_b && b < size - 1 ? b : size - 1;
        *start = a;
        *len = last - a + 1;
        return 1;
}

void http_range_refuse(struct http_response *resp, const char *header, uint64_t size, const char *what) {
        http_error(resp, 416, "the range \"%.64s\" is not within the %s's %llu bytes", header ? header : "", what,
                   (unsigned long long) size);
        http_header_add(resp, "Content-Range", "bytes */%llu", (unsigned long long) size);
}

/* Whether a comma-separated list of entity-tags holds etag: weak tags
 * (W/"x") match too unless `strong`. A list that is not one matches
 * nothing. */
static bool etag_list_match(const char *header, const char *etag, bool strong) {
        const char *p = header;
        size_t elen = strlen(etag);
        for (;;) {
                p = skip_ows(p);
                while (*p == ',')
                        p = skip_ows(p + 1);
                if (!*p)
                        return false;
                bool weak = false;
                if (p[0] == 'W' && p[1] == '/') {
                        weak = true;
                        p += 2;
                }
                if (*p != '"')
                        return false; /* not an entity-tag list */
                const char *close = strchr(p + 1, '"');
                if (!close)
                        return false;
                size_t n = (size_t) (close - p) + 1;
                if (n == elen && memcmp(p, etag, n) == 0 && !(strong && weak))
                        return true;
                p = close + 1;
        }
}

bool http_etag_none_match(const char *header, const char *etag) {
        if (!header)
                return false;
        const char *p = skip_ows(header);
        if (p[0] == '*' && *skip_ows(p + 1) == '\0')
                return true;
        return etag_list_match(p, etag, false);
}

bool http_etag_if_range(const char *header, const char *etag) {
        if (!header)
                return false;
        /* One strong entity-tag, exactly; a weak tag or an HTTP date never
         * validates a range of ours. */
        const char *p = skip_ows(header);
        size_t n = strlen(p);
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                n--;
        return n == strlen(etag) && memcmp(p, etag, n) == 0;
}

bool http_host_ok(const char *host) {
        if (!host)
                return false;
        size_t n = strlen(host);
        if (n == 0 || n > 255)
                return false;
        return strspn(host, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.:-[]") == n;
}
