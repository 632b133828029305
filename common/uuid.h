/* UUID helpers: validation, normalisation and name-based (v5) derivation. */
#pragma once
#include <stdbool.h>

#define UUID_STR_LEN 37 /* 36 characters + NUL */

/* True for the 8-4-4-4-12 hex form (either case). */
bool uuid_is_valid(const char *s);
/* Copy s to out in lower case; -EINVAL if not a UUID. */
int uuid_normalize(const char *s, char out[UUID_STR_LEN]);
/* RFC 4122 version 5 UUID of `name` in namespace `ns` (a UUID string). */
int uuid_v5(const char *ns, const char *name, char out[UUID_STR_LEN]);
