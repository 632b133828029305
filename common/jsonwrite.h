/* Building JSON documents: adders that take ownership of what they add, so a
 * chain of them can end in one failure check. The writing side of jsonread.h. */
#pragma once
#include <json-c/json.h>

/* Add v (owned) as member k of o; -ENOMEM, with v released, when v is NULL
 * (a failed allocation) or cannot be added. */
int jadd(json_object *o, const char *k, json_object *v);
/* A JSON string of s, "" for NULL; NULL on allocation failure. */
json_object *jstr_or_empty(const char *s);
