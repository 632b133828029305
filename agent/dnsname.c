/* DNS names (dnsname.h): the RFC 1123 host-name check and the wildcard
 * label's expansion. */
#include "dnsname.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool ldh(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

int dns_name_check(const char *name, bool allow_wildcard) {
        if (!name)
                return -EINVAL;
        size_t len = strnlen(name, DNS_NAME_MAX + 2);
        if (len > 1 && name[len - 1] == '.')
                len--;
        if (len == 0 || len > DNS_NAME_MAX)
                return -EINVAL;
        const char *p = name, *end = name + len;
        if (allow_wildcard && len > 2 && p[0] == '*' && p[1] == '.')
                p += 2;
        bool all_digits = true;
        while (p < end) {
                const char *q = p;
                while (q < end && *q != '.')
                        q++;
                size_t l = (size_t) (q - p);
                if (l == 0 || l > 63 || p[0] == '-' || p[l - 1] == '-')
                        return -EINVAL;
                all_digits = true;
                for (const char *c = p; c < q; c++) {
                        if (!ldh(*c))
                                return -EINVAL;
                        if (*c < '0' || *c > '9')
                                all_digits = false;
                }
                p = q;
                if (p < end && ++p == end) /* "a..", or an empty label before the end */
                        return -EINVAL;
        }
        /* An all-numeric top label would make "192.0.2.1" a host name. */
        return all_digits ? -EINVAL : 0;
}

int dns_name_expand_wildcard(const char *name, const uint8_t rnd[6], char *out, size_t n) {
        if (!name || !out || name[0] != '*' || name[1] != '.')
                return -EINVAL;
        int r = snprintf(out, n, "muster-%02x%02x%02x%02x%02x%02x%s", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
                         rnd[5], name + 1);
        if (r < 0 || (size_t) r >= n)
                return -ENAMETOOLONG;
        size_t len = (size_t) r;
        if (len > 1 && out[len - 1] == '.')
                len--;
        return len > DNS_NAME_MAX ? -ENAMETOOLONG : 0;
}
