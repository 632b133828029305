/* DNS names as the agent checks them before it looks anything up
 * (domain-resolution, ntp-synchronizer's sources): RFC 1123 host names and
 * the wildcard label. Pure; fuzzed (fuzz_hostnames). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_MAX 253           /* without a trailing dot */

/* RFC 1123 host name: labels of 1-63 [A-Za-z0-9-] not starting or ending
 * with '-', at most 253 characters (one trailing dot allowed), a top label
 * that is not all digits. With allow_wildcard a leading "*." label is
 * accepted. 0 or -EINVAL. */
int dns_name_check(const char *name, bool allow_wildcard);
/* `name` with a leading "*" replaced by "muster-" and 12 hex digits of
 * `rnd`, into out. -EINVAL if name has no wildcard, -ENAMETOOLONG if the
 * result does not fit in n or is longer than DNS_NAME_MAX. */
int dns_name_expand_wildcard(const char *name, const uint8_t rnd[6], char *out, size_t n);
