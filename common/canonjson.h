/* Canonical JSON, the bytes that payload signatures cover: object members
 * sorted by key (byte order), no whitespace, integers only, strings with
 * the minimal escapes ("\"", "\\", \b \f \n \r \t, other control characters
 * as \u00xx) and everything else as raw UTF-8 (no "\/"). The same value
 * always gives the same bytes, however it was parsed. Pure. */
#pragma once
#include <json-c/json.h>
#include <stddef.h>

/* *out is NUL-terminated (malloc'd), *len its length without the NUL.
 * -EINVAL for a double, NaN or a string that is not valid UTF-8; -E2BIG
 * past 1 GiB; -ENOMEM. */
int canonjson_serialize(json_object *o, char **out, size_t *len);
