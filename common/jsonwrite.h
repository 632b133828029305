/* Building JSON documents: adders that take ownership of what they add, so a
 * chain of them can end in one failure check. The writing side of jsonread.h. */
#pragma once
#include <json-c/json.h>

/* Add v (owned) as member k of o; -ENOMEM, with v released, when v is NULL
 * (a failed allocation) or cannot be added. */
int jadd(json_object *o, const char *k, json_object *v);
/* Add s as string member k of o, or JSON null when s is NULL (json-c's null
 * is a NULL object, which jadd would take for a failed allocation). 0 or
 * -ENOMEM. */
int jadd_str_or_null(json_object *o, const char *k, const char *s);
/* Add s as string member k of o; nothing when s is NULL. 0 or -ENOMEM. */
int jadd_str_opt(json_object *o, const char *k, const char *s);
/* A JSON string of s, "" for NULL; NULL on allocation failure. */
json_object *jstr_or_empty(const char *s);
