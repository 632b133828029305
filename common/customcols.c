/* kubectl's custom-columns (customcols.h): the spec split where kubectl
 * splits it, each EXPR checked by jsonpath_query, and a table whose cells
 * are the paths' results. */
#include "customcols.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"

void customcols_free(struct customcols *c) {
        for (size_t i = 0; i < c->n; i++) {
                free(c->v[i].header);
                free(c->v[i].expr);
        }
        free(c->v);
        c->v = NULL;
        c->n = 0;
}

static int say(char *err, size_t errlen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int say(char *err, size_t errlen, int r, const char *fmt, ...) {
        if (err && errlen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* The end of the column that starts at p: the first ',' outside brackets
 * and quotes, or the end of the spec. */
static const char *column_end(const char *p) {
        return jsonpath_scan_to(p, ',');
}

static int add_column(struct customcols *c, const char *s, const char *e, char *err, size_t errlen) {
        size_t idx = c->n + 1, len = (size_t) (e - s);
        const char *colon = memchr(s, ':', len);
        if (!colon)
                return say(err, errlen, -EINVAL, "column %zu (\"%.*s\") is not HEADER:EXPR", idx, (int) len, s);
        if (colon == s)
                return say(err, errlen, -EINVAL, "column %zu (\"%.*s\") has no header", idx, (int) len, s);
        if (colon + 1 == e)
                return say(err, errlen, -EINVAL, "column %zu (%.*s) has no EXPR after ':'", idx,
                           (int) (colon - s), s);
        for (const char *p = s; p < colon; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return say(err, errlen, -EINVAL, "column %zu: a header without control characters", idx);
        if (c->n >= CUSTOMCOLS_MAX_COLUMNS)
                return say(err, errlen, -E2BIG, "at most %d columns", CUSTOMCOLS_MAX_COLUMNS);
        char *header = strndup(s, (size_t) (colon - s)), *expr = strndup(colon + 1, (size_t) (e - colon - 1));
        struct customcol *v = header && expr ? realloc(c->v, (c->n + 1) * sizeof *v) : NULL;
        if (!v) {
                free(header);
                free(expr);
                return say(err, errlen, -ENOMEM, "out of memory");
        }
        c->v = v;
        c->v[c->n++] = (struct customcol) { header, expr };
        json_object **nodes;
        size_t n;
        char why[256];
        int r = jsonpath_query(expr, NULL, &nodes, &n, why, sizeof why);
        if (r < 0)
                return say(err, errlen, r, "column %zu (%s): %s", idx, header, why);
        return 0;
}

int customcols_parse(const char *spec, struct customcols *out, char *err, size_t errlen) {
        struct customcols c = { 0 };
        int r = 0;
        *out = c;
        if (err && errlen)
                err[0] = '\0';
        if (strnlen(spec, CUSTOMCOLS_MAX_SPEC + 1) > CUSTOMCOLS_MAX_SPEC)
                return say(err, errlen, -E2BIG, "a spec is at most %d bytes", CUSTOMCOLS_MAX_SPEC);
        if (!*spec)
                return say(err, errlen, -EINVAL, "custom-columns needs HEADER:EXPR[,HEADER:EXPR...]");
        for (const char *p = spec;;) {
                const char *e = column_end(p);
                if ((r = add_column(&c, p, e, err, errlen)) < 0)
                        break;
                if (!*e)
                        break;
                p = e + 1;
        }
        if (r < 0) {
                customcols_free(&c);
                return r;
        }
        *out = c;
        return 0;
}

/* s appended to b with tabs and newlines as spaces, control characters
 * as '?'. */
static int put_clean(struct growbuf *b, const char *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char) s[i];
                char o = ch == '\t' || ch == '\n' || ch == '\r' ? ' ' : ch < 0x20 || ch == 0x7f ? '?' : (char) ch;
                int r = growbuf_append(b, &o, 1, CUSTOMCOLS_MAX_OUTPUT, 64);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* One cell (customcols_render's rules); malloc'd, NULL on ENOMEM. */
static char *customcols_cell(const struct customcol *col, json_object *item) {
        json_object **nodes = NULL;
        size_t n = 0;
        struct growbuf b = { 0 };
        int r = jsonpath_query(col->expr, item, &nodes, &n, NULL, 0);
        if (r == -ENOMEM)
                return NULL;
        size_t shown = 0;
        for (size_t i = 0; r == 0 && i < n; i++) {
                json_object *o = nodes[i];
                if (!o || json_object_is_type(o, json_type_null))
                        continue;
                const char *s = json_object_is_type(o, json_type_string)
                                        ? json_object_get_string(o)
                                        : json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
                size_t len = json_object_is_type(o, json_type_string) ? (size_t) json_object_get_string_len(o)
                                                                      : s ? strlen(s) : 0;
                if (!s) {
                        r = -ENOMEM;
                        break;
                }
                if (shown++ && (r = growbuf_append(&b, ",", 1, CUSTOMCOLS_MAX_OUTPUT, 64)) < 0)
                        break;
                r = put_clean(&b, s, len);
        }
        free(nodes);
        if (r == -ENOMEM) {
                free(b.data);
                return NULL;
        }
        /* A path the spec check let through cannot fail here but for size:
         * what fits is shown. */
        if (!shown) {
                free(b.data);
                return strdup(CUSTOMCOLS_NONE);
        }
        if (!b.data)
                return strdup("");
        return b.data;
}

/* Columns on a terminal: UTF-8 code points, not bytes. */
static size_t width(const char *s) {
        size_t w = 0;
        for (; *s; s++)
                w += ((unsigned char) *s & 0xc0) != 0x80;
        return w;
}

int customcols_render(const struct customcols *c, json_object *doc, struct growbuf *out) {
        bool list = json_object_is_type(doc, json_type_array);
        size_t nrows = (list ? json_object_array_length(doc) : 1) + 1, ncells = nrows * c->n;
        if (c->n == 0)
                return 0;
        char **cell = calloc(ncells, sizeof *cell);
        size_t *w = calloc(c->n, sizeof *w);
        int r = cell && w ? 0 : -ENOMEM;
        for (size_t row = 0; r == 0 && row < nrows; row++)
                for (size_t k = 0; r == 0 && k < c->n; k++) {
                        json_object *item = list ? json_object_array_get_idx(doc, row - 1) : doc;
                        char *s = row == 0 ? strdup(c->v[k].header) : customcols_cell(&c->v[k], item);
                        if (!s) {
                                r = -ENOMEM;
                                break;
                        }
                        cell[row * c->n + k] = s;
                        size_t cw = width(s);
                        if (cw > w[k])
                                w[k] = cw;
                }
        for (size_t row = 0; r == 0 && row < nrows; row++)
                for (size_t k = 0; r == 0 && k < c->n; k++) {
                        const char *s = cell[row * c->n + k];
                        bool last = k + 1 == c->n;
                        r = growbuf_append(out, s, strlen(s), CUSTOMCOLS_MAX_OUTPUT, 256);
                        for (size_t pad = last ? 0 : w[k] - width(s) + 3; r == 0 && pad > 0; pad--)
                                r = growbuf_append(out, " ", 1, CUSTOMCOLS_MAX_OUTPUT, 256);
                        if (r == 0 && last)
                                r = growbuf_append(out, "\n", 1, CUSTOMCOLS_MAX_OUTPUT, 256);
                }
        for (size_t i = 0; cell && i < ncells; i++)
                free(cell[i]);
        free(cell);
        free(w);
        return r;
}
