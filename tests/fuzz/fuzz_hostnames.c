/* libFuzzer target for the host names a network step's args carry, as the
 * agent reads them before it looks anything up (agent/steps_net.c): an
 * ntp-synchronizer source split into host and port (ntp_source_split) and
 * its host checked as a name, and a domain-resolution name
 * (dns_name_check, with and without a wildcard) whose "*." label is replaced
 * (dns_name_expand_wildcard). The first byte picks which, and the bytes of
 * the wildcard label. Invariants: a split host is 1..NTP_MAX_SOURCE_LEN
 * bytes of the source, the whole of it when there is no port, and in
 * brackets when the source starts with one; an accepted name has
 * at most 253 characters of letters, digits, '-' and '.' (and "*." first
 * with a wildcard), and once expanded it is a plain name that passes. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "steps_net.h"
#include "fuzz_selector.h"

static void check_name(const char *s, bool wildcard) {
        if (dns_name_check(s, wildcard) < 0)
                return;
        size_t len = strlen(s);
        if (len == 0 || len > DNS_NAME_MAX + 1 || (len == DNS_NAME_MAX + 1 && s[len - 1] != '.'))
                abort();
        const char *p = s;
        if (wildcard && p[0] == '*')
                p += 2;
        if (strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") != strlen(p))
                abort();
        if (!wildcard && dns_name_check(s, true) < 0)
                abort(); /* a wildcard allowed takes every plain name */
}

static void check_expand(const char *s, const uint8_t rnd[6]) {
        char out[DNS_NAME_MAX + 2];
        if (dns_name_check(s, true) < 0)
                return;
        int r = dns_name_expand_wildcard(s, rnd, out, sizeof out);
        if (s[0] != '*') {
                if (r != -EINVAL)
                        abort();
                return;
        }
        if (r == -ENAMETOOLONG)
                return;
        if (r < 0 || dns_name_check(out, false) < 0 || strncmp(out, "muster-", 7) != 0 ||
            strcmp(out + 19, s + 1) != 0)
                abort();
}

static void check_source(const char *s) {
        char host[NTP_MAX_SOURCE_LEN + 1];
        uint16_t port = 1;
        if (ntp_source_split(s, host, sizeof host, &port) < 0)
                return;
        size_t hl = strlen(host);
        if (hl == 0 || hl > NTP_MAX_SOURCE_LEN || !strstr(s, host))
                abort();
        if (s[0] == '[') { /* "[host]" or "[host]:port" */
                if (memcmp(s + 1, host, hl) != 0 || s[1 + hl] != ']' || (port ? s[2 + hl] != ':' : s[2 + hl] != '\0'))
                        abort();
        } else if (port ? !strchr(s, ':') : strcmp(host, s) != 0) { /* "host:port" or "host" */
                abort();
        }
        (void) dns_name_check(host, false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 7)
                return 0;
        const uint8_t *rnd = data + 1;
        char *s = fuzz_text(data + 7, size - 7, 1024);
        if (!s)
                return 0;
        switch (data[0] % 3) {
        case 0:
                check_source(s);
                break;
        case 1:
                check_name(s, false);
                check_name(s, true);
                break;
        default:
                check_expand(s, rnd);
        }
        free(s);
        return 0;
}
