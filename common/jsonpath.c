/* kubectl's jsonpath templates, the subset scripts use (jsonpath.h): a
 * renderer that walks the template once per range pass, with no tree of
 * its own; a path's results are the document's own nodes (not owned). */
#include "jsonpath.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jp {
        const char *tpl;
        json_object *root;
        struct growbuf *out; /* NULL: check only */
        char *err;
        size_t errlen;
        unsigned long work; /* nodes visited and range passes, against JSONPATH_MAX_WORK */
};

struct nodes {
        json_object **v;
        size_t n, cap;
};

static int fail(struct jp *j, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct jp *j, const char *at, const char *fmt, ...) {
        if (j->err && j->errlen) {
                va_list ap;
                va_start(ap, fmt);
                int n = vsnprintf(j->err, j->errlen, fmt, ap);
                va_end(ap);
                if (n >= 0 && (size_t) n < j->errlen)
                        snprintf(j->err + n, j->errlen - (size_t) n, " (at byte %td of the template)", at - j->tpl);
        }
        return -EINVAL;
}

static int push(struct nodes *l, json_object *o) {
        if (l->n >= JSONPATH_MAX_WORK)
                return -E2BIG;
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 8;
                json_object **v = realloc(l->v, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->cap = cap;
        }
        l->v[l->n++] = o;
        return 0;
}

static int emit(struct jp *j, const char *s, size_t n) {
        return j->out ? growbuf_append(j->out, s, n, JSONPATH_MAX_OUTPUT, 256) : 0;
}

/* The '}' that closes the block opening at p ('{'), skipping quoted text;
 * NULL if none before end. */
static const char *block_end(const char *p, const char *end) {
        for (const char *q = p + 1; q < end; q++) {
                if (*q == '"' || *q == '\'') {
                        char quote = *q;
                        for (q++; q < end && *q != quote; q++)
                                if (*q == '\\' && q + 1 < end)
                                        q++;
                        if (q >= end)
                                return NULL;
                } else if (*q == '}')
                        return q;
        }
        return NULL;
}

/* The block's content without the spaces around it. */
static void trimmed(const char *open, const char *close, const char **s, const char **e) {
        *s = open + 1;
        *e = close;
        while (*s < *e && **s == ' ')
                (*s)++;
        while (*e > *s && (*e)[-1] == ' ')
                (*e)--;
}

static bool is_word(const char *s, const char *e, const char *w) {
        size_t n = strlen(w);
        return (size_t) (e - s) >= n && strncmp(s, w, n) == 0 && (s + n == e || s[n] == ' ');
}

/* ---- paths ------------------------------------------------------------------- */

static bool name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int step_member(struct nodes *in, struct nodes *out, const char *name, size_t len) {
        for (size_t i = 0; i < in->n; i++) {
                json_object *o = in->v[i], *v;
                if (!json_object_is_type(o, json_type_object))
                        continue;
                /* json-c wants a NUL-terminated key. */
                char key[256];
                if (len >= sizeof key)
                        continue;
                memcpy(key, name, len);
                key[len] = '\0';
                if (json_object_object_get_ex(o, key, &v) && push(out, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int step_index(struct nodes *in, struct nodes *out, long idx) {
        for (size_t i = 0; i < in->n; i++) {
                json_object *o = in->v[i];
                if (!json_object_is_type(o, json_type_array))
                        continue;
                long n = (long) json_object_array_length(o), k = idx < 0 ? n + idx : idx;
                if (k >= 0 && k < n && push(out, json_object_array_get_idx(o, (size_t) k)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int step_all(struct nodes *in, struct nodes *out) {
        for (size_t i = 0; i < in->n; i++) {
                json_object *o = in->v[i];
                if (json_object_is_type(o, json_type_array)) {
                        for (size_t k = 0; k < json_object_array_length(o); k++)
                                if (push(out, json_object_array_get_idx(o, k)) < 0)
                                        return -ENOMEM;
                } else if (json_object_is_type(o, json_type_object)) {
                        json_object_object_foreach(o, key, val) {
                                (void) key;
                                if (push(out, val) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        return 0;
}

/* The results of the path [s, e) from cur into *res (emptied first). */
static int eval(struct jp *j, const char *s, const char *e, json_object *cur, struct nodes *res) {
        struct nodes a = { 0 }, b = { 0 };
        int r = 0;
        res->n = 0;
        if (s < e && *s == '$')
                cur = j->root, s++;
        else if (s < e && *s == '@')
                s++;
        if ((r = push(&a, cur)) < 0)
                goto out;
        while (s < e && r == 0) {
                b.n = 0;
                if (*s == '.') {
                        s++;
                        if (s < e && *s == '.') {
                                r = fail(j, s, "recursive descent (..) is not supported");
                                break;
                        }
                        if (s == e || *s == '[')
                                continue;
                        const char *n0 = s;
                        while (s < e && name_char(*s))
                                s++;
                        if (s == n0) {
                                r = fail(j, s, "a member name is wanted after '.'");
                                break;
                        }
                        r = step_member(&a, &b, n0, (size_t) (s - n0));
                } else if (*s == '[') {
                        s++;
                        if (s + 1 < e && s[0] == '*' && s[1] == ']') {
                                r = step_all(&a, &b);
                                s += 2;
                        } else if (s < e && (*s == '\'' || *s == '"')) {
                                char quote = *s++;
                                const char *n0 = s;
                                while (s < e && *s != quote)
                                        s++;
                                if (s + 1 >= e || s[1] != ']') {
                                        r = fail(j, n0, "a quoted member name is wanted, then ']'");
                                        break;
                                }
                                r = step_member(&a, &b, n0, (size_t) (s - n0));
                                s += 2;
                        } else if (s < e && (*s == '-' || (*s >= '0' && *s <= '9'))) {
                                const char *n0 = s;
                                if (*s == '-')
                                        s++;
                                long idx = 0;
                                while (s < e && *s >= '0' && *s <= '9' && idx < 100000000)
                                        idx = idx * 10 + (*s++ - '0');
                                if (s < e && *s == ':') {
                                        r = fail(j, s, "slices ([a:b]) are not supported");
                                        break;
                                }
                                if (s >= e || *s != ']' || s == n0 + (*n0 == '-')) {
                                        r = fail(j, n0, "an index is wanted, then ']'");
                                        break;
                                }
                                r = step_index(&a, &b, *n0 == '-' ? -idx : idx);
                                s++;
                        } else if (s < e && *s == '?') {
                                r = fail(j, s, "filters ([?(...)]) are not supported");
                                break;
                        } else {
                                r = fail(j, s, "'*', an index or a quoted name is wanted after '['");
                                break;
                        }
                } else {
                        r = fail(j, s, "'.' or '[' is wanted, not '%c'", *s);
                        break;
                }
                if (r == 0 && (j->work += b.n) > JSONPATH_MAX_WORK)
                        r = -E2BIG;
                struct nodes t = a;
                a = b;
                b = t;
        }
        if (r == 0) {
                free(res->v);
                *res = a;
                a.v = NULL;
        }
out:
        free(a.v);
        free(b.v);
        return r;
}

/* ---- rendering --------------------------------------------------------------- */

static int put_node(struct jp *j, json_object *o) {
        if (json_object_is_type(o, json_type_string))
                return emit(j, json_object_get_string(o), (size_t) json_object_get_string_len(o));
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        return s ? emit(j, s, strlen(s)) : -ENOMEM;
}

/* A string literal's text ("..." with \n \t \" \\), from s ('"') to e. */
static int put_literal(struct jp *j, const char *s, const char *e) {
        if (e - s < 2 || e[-1] != '"')
                return fail(j, s, "a string is wanted as \"...\"");
        int r = 0;
        for (const char *p = s + 1; p < e - 1 && r == 0; p++) {
                char c = *p;
                if (c == '\\' && p + 1 < e - 1) {
                        c = *++p;
                        c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
                } else if (c == '"')
                        return fail(j, p, "a '\"' inside a string is written \\\"");
                r = emit(j, &c, 1);
        }
        return r;
}

/* The {end} that closes the range whose body starts at p: its '{'. */
static const char *range_end(const char *p, const char *end, const char **after) {
        int level = 0;
        while (p < end) {
                if (*p != '{') {
                        p++;
                        continue;
                }
                const char *close = block_end(p, end), *s, *e;
                if (!close)
                        return NULL;
                trimmed(p, close, &s, &e);
                if (is_word(s, e, "range"))
                        level++;
                else if (e - s == 3 && strncmp(s, "end", 3) == 0) {
                        if (level == 0) {
                                *after = close + 1;
                                return p;
                        }
                        level--;
                }
                p = close + 1;
        }
        return NULL;
}

static int render(struct jp *j, const char *p, const char *end, json_object *cur, int depth) {
        struct nodes res = { 0 };
        int r = 0;
        while (p < end && r == 0) {
                if (*p != '{') {
                        const char *q = memchr(p, '{', (size_t) (end - p));
                        if (!q)
                                q = end;
                        if (memchr(p, '}', (size_t) (q - p))) {
                                r = fail(j, (const char *) memchr(p, '}', (size_t) (q - p)), "a '}' without its '{'");
                                break;
                        }
                        r = emit(j, p, (size_t) (q - p));
                        p = q;
                        continue;
                }
                const char *close = block_end(p, end), *s, *e;
                if (!close) {
                        r = fail(j, p, "a '{' without its '}'");
                        break;
                }
                trimmed(p, close, &s, &e);
                if (is_word(s, e, "range")) {
                        const char *after = NULL, *stop = range_end(close + 1, end, &after);
                        if (!stop) {
                                r = fail(j, p, "a {range} without its {end}");
                                break;
                        }
                        if (depth + 1 > JSONPATH_MAX_DEPTH) {
                                r = fail(j, p, "ranges nest at most %d deep", JSONPATH_MAX_DEPTH);
                                break;
                        }
                        const char *ps = s + 5;
                        while (ps < e && *ps == ' ')
                                ps++;
                        if ((r = eval(j, ps, e, cur, &res)) < 0)
                                break;
                        if (!j->out) /* a check: the body once, over nothing */
                                r = render(j, close + 1, stop, NULL, depth + 1);
                        else /* the body's paths have results of their own */
                                for (size_t i = 0; i < res.n && r == 0; i++)
                                        r = ++j->work > JSONPATH_MAX_WORK ? -E2BIG
                                                                          : render(j, close + 1, stop, res.v[i], depth + 1);
                        p = after;
                } else if (e - s == 3 && strncmp(s, "end", 3) == 0) {
                        r = fail(j, p, "an {end} without its {range}");
                } else if (s < e && *s == '"') {
                        r = put_literal(j, s, e);
                        p = close + 1;
                } else if (s == e) {
                        r = fail(j, p, "an empty {}");
                } else {
                        if ((r = eval(j, s, e, cur, &res)) < 0)
                                break;
                        if ((j->work += res.n + 1) > JSONPATH_MAX_WORK) {
                                r = -E2BIG;
                                break;
                        }
                        for (size_t i = 0; i < res.n && r == 0 && j->out; i++) {
                                if (i)
                                        r = emit(j, " ", 1);
                                if (r == 0)
                                        r = put_node(j, res.v[i]);
                        }
                        p = close + 1;
                }
        }
        free(res.v);
        return r;
}

static int run(const char *tpl, json_object *root, struct growbuf *out, char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
        size_t n = strnlen(tpl, JSONPATH_MAX_TEMPLATE + 1);
        if (n > JSONPATH_MAX_TEMPLATE) {
                if (err && errlen)
                        snprintf(err, errlen, "a template is at most %d bytes", JSONPATH_MAX_TEMPLATE);
                return -E2BIG;
        }
        struct jp j = { .tpl = tpl, .root = root, .out = out, .err = err, .errlen = errlen };
        /* A template is checked whole before anything is written. */
        int r = out ? run(tpl, NULL, NULL, err, errlen) : 0;
        if (r == 0)
                r = render(&j, tpl, tpl + n, root, 0);
        if (r == -E2BIG && err && errlen)
                snprintf(err, errlen, "the output passes %u MiB, or the template visits more than %u nodes",
                         JSONPATH_MAX_OUTPUT >> 20, JSONPATH_MAX_WORK);
        if (r == -ENOMEM && err && errlen)
                snprintf(err, errlen, "out of memory");
        return r;
}

int jsonpath_check(const char *tpl, char *err, size_t errlen) {
        return run(tpl, NULL, NULL, err, errlen);
}

int jsonpath_render(const char *tpl, json_object *root, struct growbuf *out, char *err, size_t errlen) {
        return run(tpl, root, out, err, errlen);
}

int jsonpath_query(const char *path, json_object *root, json_object ***nodes, size_t *n, char *err, size_t errlen) {
        *nodes = NULL;
        *n = 0;
        if (err && errlen)
                err[0] = '\0';
        size_t len = strnlen(path, JSONPATH_MAX_TEMPLATE + 1);
        if (len > JSONPATH_MAX_TEMPLATE) {
                if (err && errlen)
                        snprintf(err, errlen, "a path is at most %d bytes", JSONPATH_MAX_TEMPLATE);
                return -E2BIG;
        }
        struct jp j = { .tpl = path, .root = root, .err = err, .errlen = errlen };
        const char *s = path, *e = path + len;
        while (s < e && *s == ' ')
                s++;
        while (e > s && e[-1] == ' ')
                e--;
        if (s < e && *s == '{') {
                if (e[-1] != '}' || block_end(s, e) != e - 1)
                        return fail(&j, s, "a path in braces is {.a.b}, alone");
                trimmed(s, e - 1, &s, &e);
        }
        if (s == e)
                return fail(&j, s, "an empty path");
        /* "status" is ".status": kubectl's wait --for and custom-columns take both. */
        char *dotted = NULL;
        if (*s != '.' && *s != '[' && *s != '$' && *s != '@') {
                if (!(dotted = malloc((size_t) (e - s) + 2)))
                        return -ENOMEM;
                dotted[0] = '.';
                memcpy(dotted + 1, s, (size_t) (e - s));
                dotted[e - s + 1] = '\0';
                j.tpl = dotted;
                e = dotted + (e - s) + 1;
                s = dotted;
        }
        struct nodes res = { 0 };
        int r = eval(&j, s, e, root, &res);
        if (r == 0 && !root)
                res.n = 0;
        if (r == 0 && res.n) {
                *nodes = res.v;
                *n = res.n;
                res.v = NULL;
        }
        free(res.v);
        free(dotted);
        if (r == -E2BIG && err && errlen)
                snprintf(err, errlen, "the path visits more than %u nodes", JSONPATH_MAX_WORK);
        if (r == -ENOMEM && err && errlen)
                snprintf(err, errlen, "out of memory");
        return r;
}

const char *jsonpath_scan_to(const char *p, char stop) {
        int depth = 0;
        char quote = 0;
        for (; *p; p++) {
                if (quote) {
                        if (*p == '\\' && p[1])
                                p++;
                        else if (*p == quote)
                                quote = 0;
                } else if (*p == '\'' || *p == '"')
                        quote = *p;
                else if (*p == '[' || *p == '{')
                        depth++;
                else if ((*p == ']' || *p == '}') && depth > 0)
                        depth--;
                else if (*p == stop && depth == 0)
                        break;
        }
        return p;
}
