/* Typed JSON getters with limits and one failure reason (jsonread.h). */
#include "jsonread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jfail(struct jctx *c, const char *fmt, ...) {
        if (c->r < 0)
                return; /* keep the first reason */
        c->r = -EINVAL;
        if (c->err && c->errlen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(c->err, c->errlen, fmt, ap);
                va_end(ap);
        }
}

void joom(struct jctx *c) {
        jfail(c, "out of memory");
        c->r = -ENOMEM;
}

json_object *jget(json_object *o, const char *k, json_type t, struct jctx *c) {
        json_object *v;
        if (!o || !json_object_object_get_ex(o, k, &v) || json_object_is_type(v, json_type_null))
                return NULL;
        if (t == json_type_double && json_object_is_type(v, json_type_int))
                return v;
        if (!json_object_is_type(v, t)) {
                jfail(c, "field \"%s\" must be %s", k, json_type_to_name(t));
                return NULL;
        }
        return v;
}

void jset_str(char **out, const char *v, struct jctx *c) {
        free(*out);
        if (!(*out = strdup(v)))
                joom(c);
}

void jget_str(json_object *o, const char *k, char **out, size_t max, struct jctx *c) {
        json_object *v = jget(o, k, json_type_string, c);
        if (!v)
                return;
        if ((size_t) json_object_get_string_len(v) > max)
                jfail(c, "field \"%s\" is longer than %zu bytes", k, max);
        else if (strlen(json_object_get_string(v)) != (size_t) json_object_get_string_len(v))
                jfail(c, "field \"%s\" contains a NUL byte", k);
        else
                jset_str(out, json_object_get_string(v), c);
}

void jget_i64(json_object *o, const char *k, int64_t *out, int64_t max, struct jctx *c) {
        json_object *v = jget(o, k, json_type_int, c);
        if (!v)
                return;
        int64_t x = json_object_get_int64(v);
        if (x < 0 && max == INT64_MAX)
                jfail(c, "field \"%s\" must not be negative", k);
        else if (x < 0 || x > max)
                jfail(c, "field \"%s\" must be between 0 and %lld", k, (long long) max);
        else
                *out = x;
}

void jget_strv(json_object *o, const char *k, struct strv *out, size_t max, size_t maxlen, struct jctx *c) {
        json_object *a = jget_array(o, k, max, c);
        if (!a)
                return;
        strv_free(out);
        for (size_t i = 0; i < json_object_array_length(a) && c->r == 0; i++) {
                json_object *s = json_object_array_get_idx(a, i);
                if (!json_object_is_type(s, json_type_string)) {
                        jfail(c, "field \"%s\" must hold strings", k);
                        return;
                }
                if ((size_t) json_object_get_string_len(s) > maxlen)
                        jfail(c, "entries of \"%s\" must be at most %zu bytes", k, maxlen);
                else if (strv_push(out, json_object_get_string(s)) < 0)
                        joom(c);
        }
}

json_object *jget_array(json_object *o, const char *k, size_t max, struct jctx *c) {
        json_object *a = jget(o, k, json_type_array, c);
        if (a && json_object_array_length(a) > max) {
                jfail(c, "field \"%s\" has %zu entries, at most %zu allowed", k, json_object_array_length(a), max);
                return NULL;
        }
        return a;
}

json_object *jget_elem(json_object *a, size_t i, const char *k, struct jctx *c) {
        json_object *e = json_object_array_get_idx(a, i);
        if (!json_object_is_type(e, json_type_object)) {
                jfail(c, "entries of \"%s\" must be objects", k);
                return NULL;
        }
        return e;
}

size_t json_parse_cost(const char *s, size_t len) {
        size_t cost = len;
        bool in_str = false, esc = false, value_next = true;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (in_str) {
                        if (esc)
                                esc = false;
                        else if (c == '\\')
                                esc = true;
                        else if (c == '"')
                                in_str = false;
                        continue;
                }
                switch (c) {
                case '"': in_str = true; value_next = false; cost += 96; break;
                case '{': cost += 800; value_next = true; break;
                case '[': cost += 160; value_next = true; break;
                case ':': cost += 64; value_next = true; break;
                case ',': value_next = true; break;
                case '}': case ']': value_next = false; break;
                case ' ': case '\t': case '\n': case '\r': break;
                default:
                        /* The first byte of a number or a literal. */
                        if (value_next)
                                cost += 80;
                        value_next = false;
                }
        }
        return cost;
}
