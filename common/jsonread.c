/* Typed JSON getters with limits and one failure reason (jsonread.h). */
#include "jsonread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The refusal: -EINVAL and its words in c->err. */
__attribute__((format(printf, 2, 0))) static void refuse(struct jctx *c, const char *fmt, va_list ap) {
        c->r = -EINVAL;
        if (c->err && c->errlen)
                vsnprintf(c->err, c->errlen, fmt, ap);
}

/* Member k unless absent or null. */
static json_object *member(json_object *o, const char *k) {
        json_object *v;
        if (!o || !json_object_object_get_ex(o, k, &v) || json_object_is_type(v, json_type_null))
                return NULL;
        return v;
}

void jfail(struct jctx *c, const char *fmt, ...) {
        if (c->r < 0)
                return; /* keep the first reason */
        va_list ap;
        va_start(ap, fmt);
        refuse(c, fmt, ap);
        va_end(ap);
}

void joom(struct jctx *c) {
        jfail(c, "out of memory");
        c->r = -ENOMEM;
}

json_object *jget(json_object *o, const char *k, json_type t, struct jctx *c) {
        json_object *v = member(o, k);
        if (!v)
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

bool jhas(json_object *o, const char *k) {
        return o && json_object_object_get_ex(o, k, NULL);
}

void jrefuse(struct jctx *c, const char *fmt, ...) {
        if (c->r == -ENOMEM)
                return;
        va_list ap;
        va_start(ap, fmt);
        refuse(c, fmt, ap);
        va_end(ap);
}

const char *jget_cstr(json_object *o, const char *k, size_t max, struct jctx *c) {
        json_object *v = member(o, k);
        if (!v)
                return NULL;
        if (!json_object_is_type(v, json_type_string)) {
                jfail(c, "field \"%s\" must be a string", k);
                return NULL;
        }
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);
        if (n > max) {
                jfail(c, "field \"%s\" is longer than %zu bytes", k, max);
                return NULL;
        }
        if (strlen(s) != n) {
                jfail(c, "field \"%s\" has a NUL byte", k);
                return NULL;
        }
        return s;
}

bool jget_bool(json_object *o, const char *k, bool *out, struct jctx *c) {
        json_object *v = member(o, k);
        if (!v)
                return false;
        if (!json_object_is_type(v, json_type_boolean)) {
                jfail(c, "field \"%s\" must be true or false", k);
                return false;
        }
        *out = json_object_get_boolean(v);
        return true;
}

bool jget_int(json_object *o, const char *k, int64_t min, int64_t max, int64_t *out, struct jctx *c) {
        json_object *v = member(o, k);
        if (!v)
                return false;
        if (!json_object_is_type(v, json_type_int)) {
                jfail(c, "field \"%s\" must be an integer", k);
                return false;
        }
        errno = 0;
        int64_t x = json_object_get_int64(v);
        if (errno) {
                jfail(c, "field \"%s\" is out of range", k);
                return false;
        }
        if (x < min || x > max) {
                jfail(c, "field \"%s\" must be an integer from %lld to %lld", k, (long long) min, (long long) max);
                return false;
        }
        *out = x;
        return true;
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

/* ---- Walking a JSON text without its tree ------------------------------ */

static bool is_ws(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *s, size_t len, size_t i) {
        while (i < len && is_ws(s[i]))
                i++;
        return i;
}

/* The index after the closing quote of the string that opens at s[i], or 0. */
static size_t string_end(const char *s, size_t len, size_t i) {
        for (i++; i < len; i++) {
                if (s[i] == '\\')
                        i++;
                else if (s[i] == '"')
                        return i + 1;
        }
        return 0;
}

/* The index after the value that starts at s[i], or 0 if none ends well:
 * a string, a container whose brackets close in kind, or a scalar run up to
 * the next delimiter (json-c judges what it is). */
static size_t value_end(const char *s, size_t len, size_t i) {
        if (i >= len)
                return 0;
        if (s[i] == '"')
                return string_end(s, len, i);
        if (s[i] == '{' || s[i] == '[') {
                uint64_t kinds = 0; /* bit d: level d+1 is an array */
                int depth = 0;
                for (; i < len; i++) {
                        char c = s[i];
                        if (c == '"') {
                                size_t e = string_end(s, len, i);
                                if (!e)
                                        return 0;
                                i = e - 1;
                        } else if (c == '{' || c == '[') {
                                if (depth == JSON_SPAN_DEPTH)
                                        return 0;
                                kinds = c == '[' ? kinds | (UINT64_C(1) << depth) : kinds & ~(UINT64_C(1) << depth);
                                depth++;
                        } else if (c == '}' || c == ']') {
                                if (depth == 0 || ((kinds >> (depth - 1)) & 1) != (c == ']'))
                                        return 0;
                                if (--depth == 0)
                                        return i + 1;
                        }
                }
                return 0;
        }
        size_t j = i;
        while (j < len && !is_ws(s[j]) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ':' && s[j] != '"' &&
               s[j] != '{' && s[j] != '[')
                j++;
        return j > i ? j : 0;
}

static int span_fail(char *err, size_t errlen, const char *what, size_t at) {
        if (err && errlen)
                snprintf(err, errlen, "not valid JSON: %s at byte %zu", what, at);
        return -EINVAL;
}

/* The name whose literal is s[i..e) into key (JSON_SPAN_KEY_MAX + 1 bytes). */
static int decode_key(const char *s, size_t i, size_t e, char *key, char *err, size_t errlen) {
        size_t n = e - i - 2;
        if (!memchr(s + i + 1, '\\', n)) {
                if (n > JSON_SPAN_KEY_MAX)
                        return span_fail(err, errlen, "a member name too long", i);
                memcpy(key, s + i + 1, n);
                key[n] = '\0';
                return 0;
        }
        json_object *o = NULL;
        int r = json_span_parse((struct json_span) { s + i, e - i }, 1, &o);
        if (r < 0 || !json_object_is_type(o, json_type_string)) {
                json_object_put(o);
                return r == -ENOMEM ? r : span_fail(err, errlen, "a bad member name", i);
        }
        size_t k = (size_t) json_object_get_string_len(o);
        const char *v = json_object_get_string(o);
        if (k > JSON_SPAN_KEY_MAX || strlen(v) != k) {
                json_object_put(o);
                return span_fail(err, errlen, k > JSON_SPAN_KEY_MAX ? "a member name too long" : "a NUL in a member name", i);
        }
        memcpy(key, v, k + 1);
        json_object_put(o);
        return 0;
}

/* The walk shared by objects (members) and arrays (elements). */
static int walk(const char *s, size_t len, bool object, json_member_fn mfn, json_element_fn efn, void *ud, char *err,
                size_t errlen) {
        char open = object ? '{' : '[', close = object ? '}' : ']';
        char key[JSON_SPAN_KEY_MAX + 1];
        size_t i = skip_ws(s, len, 0);
        if (i >= len || s[i] != open)
                return span_fail(err, errlen, object ? "not an object" : "not an array", i);
        i = skip_ws(s, len, i + 1);
        if (i < len && s[i] == close)
                goto closed;
        for (size_t n = 0;; n++) {
                if (object) {
                        size_t ke = i < len && s[i] == '"' ? string_end(s, len, i) : 0;
                        if (!ke)
                                return span_fail(err, errlen, "a member name expected", i);
                        int r = decode_key(s, i, ke, key, err, errlen);
                        if (r < 0)
                                return r;
                        i = skip_ws(s, len, ke);
                        if (i >= len || s[i] != ':')
                                return span_fail(err, errlen, "':' expected", i);
                        i = skip_ws(s, len, i + 1);
                }
                size_t ve = value_end(s, len, i);
                if (!ve)
                        return span_fail(err, errlen, "a value expected", i);
                struct json_span v = { s + i, ve - i };
                int r = object ? mfn(ud, key, v) : efn(ud, n, v);
                if (r < 0)
                        return r;
                i = skip_ws(s, len, ve);
                if (i < len && s[i] == ',') {
                        i = skip_ws(s, len, i + 1);
                        continue;
                }
                if (i < len && s[i] == close)
                        break;
                return span_fail(err, errlen, object ? "',' or '}' expected" : "',' or ']' expected", i);
        }
closed:
        i = skip_ws(s, len, i + 1);
        return i == len ? 0 : span_fail(err, errlen, "trailing data", i);
}

int json_members(const char *s, size_t len, json_member_fn fn, void *ud, char *err, size_t errlen) {
        return walk(s, len, true, fn, NULL, ud, err, errlen);
}

int json_elements(const char *s, size_t len, json_element_fn fn, void *ud, char *err, size_t errlen) {
        return walk(s, len, false, NULL, fn, ud, err, errlen);
}

bool json_span_is_null(struct json_span v) {
        return v.len == 4 && memcmp(v.p, "null", 4) == 0;
}

int json_span_parse(struct json_span v, int depth, json_object **out) {
        *out = NULL;
        if (v.len == 0 || v.len > INT32_MAX - 1 || depth < 1)
                return -EINVAL;
        struct json_tokener *tok = json_tokener_new_ex(depth);
        if (!tok)
                return -ENOMEM;
        /* json-c ends a number or a literal only on a byte after it: those
         * are parsed from a copy with its NUL. */
        bool scalar = v.p[0] != '"' && v.p[0] != '{' && v.p[0] != '[';
        char *copy = scalar ? strndup(v.p, v.len) : NULL;
        if (scalar && !copy) {
                json_tokener_free(tok);
                return -ENOMEM;
        }
        json_object *o = json_tokener_parse_ex(tok, scalar ? copy : v.p, (int) v.len + (scalar ? 1 : 0));
        bool ok = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == v.len;
        json_tokener_free(tok);
        free(copy);
        if (!ok) {
                json_object_put(o);
                return -EINVAL;
        }
        *out = o;
        return 0;
}
