/* `wait --for FIELD=VALUE` (waitfor.h): the condition split and checked
 * once, then judged on each answer. */
#include "waitfor.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "growbuf.h"
#include "jsonpath.h"

void waitfor_free(struct waitfor *w) {
        free(w->path);
        free(w->value);
        w->path = w->value = NULL;
}

/* The first '=' outside brackets, braces and quotes, or NULL. */
static const char *field_end(const char *p) {
        const char *e = jsonpath_scan_to(p, '=');
        return *e ? e : NULL;
}

int waitfor_parse(const char *arg, struct waitfor *out, char *err, size_t errlen) {
        *out = (struct waitfor) { 0 };
        if (err && errlen)
                err[0] = '\0';
        if (strnlen(arg, WAITFOR_MAX + 1) > WAITFOR_MAX)
                return errmsg(err, errlen, -E2BIG, "a condition is at most %d bytes", WAITFOR_MAX);
        if (strncmp(arg, "jsonpath=", 9) == 0)
                arg += 9;
        const char *eq = field_end(arg);
        if (!eq)
                return errmsg(err, errlen, -EINVAL, "--for takes FIELD=VALUE (.status=installed), not \"%s\"", arg);
        const char *s = arg, *e = eq;
        /* The shell's quotes kubectl users write: --for=jsonpath='{.status}'=x. */
        if (e - s >= 2 && (*s == '\'' || *s == '"') && e[-1] == *s)
                s++, e--;
        if (s == e)
                return errmsg(err, errlen, -EINVAL, "--for needs a FIELD before '=', not \"%s\"", arg);
        char *path = strndup(s, (size_t) (e - s)), *value = strdup(eq + 1);
        if (!path || !value) {
                free(path);
                free(value);
                return -ENOMEM;
        }
        json_object **nodes;
        size_t n;
        char why[256];
        int r = jsonpath_query(path, NULL, &nodes, &n, why, sizeof why);
        if (r < 0) {
                r = r == -ENOMEM ? r : errmsg(err, errlen, r, "--for field \"%s\": %s", path, why);
                free(path);
                free(value);
                return r;
        }
        *out = (struct waitfor) { path, value };
        return 0;
}

int waitfor_check(const struct waitfor *w, json_object *o, char **seen) {
        json_object **nodes = NULL;
        size_t n = 0;
        struct growbuf b = { 0 };
        *seen = NULL;
        int r = jsonpath_query(w->path, o, &nodes, &n, NULL, 0);
        if (r == -ENOMEM)
                return r;
        for (size_t i = 0; r == 0 && i < n; i++) {
                json_object *v = nodes[i];
                const char *s = json_object_is_type(v, json_type_string)
                                        ? json_object_get_string(v)
                                        : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
                if (!s)
                        r = -ENOMEM;
                if (r == 0 && i > 0)
                        r = growbuf_append(&b, ",", 1, WAITFOR_MAX_SEEN, 64);
                if (r == 0)
                        r = growbuf_append(&b, s, strlen(s), WAITFOR_MAX_SEEN, 64);
        }
        free(nodes);
        if (r == -ENOMEM) {
                free(b.data);
                return r;
        }
        /* Past WAITFOR_MAX_SEEN what fits is shown, and differs. */
        if (n == 0)
                return 0;
        *seen = b.data ? b.data : strdup("");
        if (!*seen)
                return -ENOMEM;
        return r == 0 && strcmp(*seen, w->value) == 0;
}
