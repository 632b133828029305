/* The condition of `musterctl wait --for`, after kubectl wait's
 * --for=jsonpath='{.status}'=installed: a field path (jsonpath_query's, so
 * ".status", "status" and "{.status}" are one) and the value its string
 * form must equal. Pure: no I/O. */
#pragma once
#include <json-c/json.h>
#include <stddef.h>

#define WAITFOR_MAX 4096 /* bytes of a condition */
#define WAITFOR_MAX_SEEN (1u << 20) /* bytes of a field's string form kept */

struct waitfor {
        char *path;  /* as jsonpath_query takes it */
        char *value; /* what the field must read, may be "" */
};

/* "FIELD=VALUE", or kubectl's "jsonpath=FIELD=VALUE"; the '=' that ends
 * FIELD is the first outside brackets, braces and quotes, and quotes
 * around FIELD ('{.status}') are dropped. 0 with *out set; -EINVAL with err
 * saying what is wrong; -E2BIG past WAITFOR_MAX; -ENOMEM. */
int waitfor_parse(const char *arg, struct waitfor *out, char *err, size_t errlen);
void waitfor_free(struct waitfor *w);

/* The field's string form in o: a string as it is, anything else as
 * compact JSON, several results joined by ","; malloc'd into *seen, or
 * NULL when the field is absent. 1 when it equals w->value, 0 when not,
 * -ENOMEM. */
int waitfor_check(const struct waitfor *w, json_object *o, char **seen);
