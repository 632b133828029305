/* JSON adders that take ownership (jsonwrite.h). */
#include "jsonwrite.h"

#include <errno.h>

int jadd(json_object *o, const char *k, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, k, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int jadd_str_or_null(json_object *o, const char *k, const char *s) {
        if (s)
                return jadd(o, k, json_object_new_string(s));
        return json_object_object_add(o, k, NULL) < 0 ? -ENOMEM : 0;
}

int jadd_str_opt(json_object *o, const char *k, const char *s) {
        return s ? jadd(o, k, json_object_new_string(s)) : 0;
}

json_object *jstr_or_empty(const char *s) {
        return json_object_new_string(s ? s : "");
}
