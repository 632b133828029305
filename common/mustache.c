/* Mustache templates (mustache.h): a parser into a flat node list, where a
 * section's children are the nodes up to its `end`, and a renderer that walks
 * it with a stack of json-c contexts. Standalone-line rules are applied while
 * parsing, so rendering only concatenates. */
#include "mustache.h"
#include "errmsg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "growbuf.h"

enum mus_node_type { MUS_TEXT, MUS_VAR, MUS_RAW, MUS_SECTION, MUS_INVERTED, MUS_PARTIAL };

struct mus_node {
        enum mus_node_type type;
        size_t off, len;         /* the text, or the name, in the template's copy */
        size_t end;              /* sections: index of the first node after their children */
        size_t ind_off, ind_len; /* partials: the indentation of a standalone tag */
};

struct mustache {
        char *src;
        size_t src_len;
        struct mus_node *nodes;
        size_t n, cap;
};

struct mus_parser {
        const char *s;
        size_t len, pos;
        char open[MUSTACHE_MAX_DELIM + 1], close[MUSTACHE_MAX_DELIM + 2]; /* close: room for a leading '}' or '=' */
        size_t olen, clen;
        size_t stack[MUSTACHE_MAX_DEPTH];
        size_t depth;
        struct mustache *t;
        char *err;
        size_t errlen;
};

struct mus_tag {
        char type; /* 0 for a plain variable */
        size_t start, end; /* the whole tag */
        size_t name, name_len;
};

/* Report a failure at template offset off as "line L, column C: ...". */
static int parse_fail(struct mus_parser *p, int r, size_t off, const char *what, const char *name, size_t name_len) {
        size_t line = 1, col = 1;

        for (size_t i = 0; i < off && i < p->len; i++) {
                if (p->s[i] == '\n') {
                        line++;
                        col = 1;
                } else
                        col++;
        }
        if (name)
                errmsg(p->err, p->errlen, 0, "line %zu, column %zu: %s '%.*s'", line, col, what,
                        (int) (name_len > 64 ? 64 : name_len), name);
        else
                errmsg(p->err, p->errlen, 0, "line %zu, column %zu: %s", line, col, what);
        return r;
}

static size_t find(const char *s, size_t len, size_t from, const char *needle, size_t nlen) {
        for (size_t i = from; i + nlen <= len && i + nlen > i; i++)
                if (s[i] == needle[0] && memcmp(s + i, needle, nlen) == 0)
                        return i;
        return SIZE_MAX;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static int add_node(struct mustache *t, enum mus_node_type type, size_t off, size_t len) {
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 16;
                struct mus_node *n = realloc(t->nodes, cap * sizeof *n);
                if (!n)
                        return -ENOMEM;
                t->nodes = n;
                t->cap = cap;
        }
        t->nodes[t->n] = (struct mus_node){ .type = type, .off = off, .len = len };
        t->n++;
        return 0;
}

static int add_text(struct mustache *t, size_t from, size_t to) {
        return to > from ? add_node(t, MUS_TEXT, from, to - from) : 0;
}

/* Whether the tag [o, e) stands alone on its line: only blanks before it back
 * to the line's start (*ls) and after it up to a newline or the end (*next,
 * past that newline). */
static bool standalone(const struct mus_parser *p, size_t o, size_t e, size_t *ls, size_t *next) {
        size_t i = o, j = e;

        while (i > 0 && is_blank(p->s[i - 1]))
                i--;
        if (i > 0 && p->s[i - 1] != '\n')
                return false;
        while (j < p->len && is_blank(p->s[j]))
                j++;
        if (j < p->len) {
                if (p->s[j] == '\n')
                        j++;
                else if (p->s[j] == '\r' && j + 1 < p->len && p->s[j + 1] == '\n')
                        j += 2;
                else
                        return false;
        }
        *ls = i;
        *next = j;
        return true;
}

static void trim(const char *s, size_t *off, size_t *len) {
        while (*len && (is_blank(s[*off]) || s[*off] == '\n' || s[*off] == '\r')) {
                (*off)++;
                (*len)--;
        }
        while (*len && (is_blank(s[*off + *len - 1]) || s[*off + *len - 1] == '\n' || s[*off + *len - 1] == '\r'))
                (*len)--;
}

/* Read the tag opening at o into *tag. */
static int read_tag(struct mus_parser *p, size_t o, struct mus_tag *tag) {
        size_t in = o + p->olen, close_len = p->clen;
        const char *close = p->close + 1; /* p->close[0] is spare for a '}' or '=' */
        char c = in < p->len ? p->s[in] : 0;

        tag->start = o;
        tag->type = strchr("{&#^/!>=", c) && c ? c : 0;
        if (tag->type)
                in++;
        if (tag->type == '{' || tag->type == '=') {
                p->close[0] = tag->type == '{' ? '}' : '=';
                close = p->close;
                close_len++;
        }
        size_t c_at = find(p->s, p->len, in, close, close_len);
        if (c_at == SIZE_MAX)
                return parse_fail(p, -EINVAL, o, "unclosed tag", NULL, 0);
        tag->end = c_at + close_len;
        tag->name = in;
        tag->name_len = c_at - in;
        trim(p->s, &tag->name, &tag->name_len);
        if (tag->name_len == 0 && tag->type != '!')
                return parse_fail(p, -EINVAL, o, "empty tag name", NULL, 0);
        return 0;
}

static bool delim_char_ok(char c) { return c != '=' && !is_blank(c) && c != '\n' && c != '\r'; }

/* Apply "{{=<% %>=}}": two words of 1..MUSTACHE_MAX_DELIM bytes, no '=' or blanks. */
static int set_delims(struct mus_parser *p, const struct mus_tag *tag) {
        const char *s = p->s + tag->name;
        size_t n = tag->name_len, a = 0, b, c;

        while (a < n && delim_char_ok(s[a]))
                a++;
        b = a;
        while (b < n && !delim_char_ok(s[b]) && s[b] != '=')
                b++;
        c = b;
        while (c < n && delim_char_ok(s[c]))
                c++;
        if (a == 0 || b == a || c == b || c != n || a > MUSTACHE_MAX_DELIM || c - b > MUSTACHE_MAX_DELIM)
                return parse_fail(p, -EINVAL, tag->start, "bad delimiters", s, n);
        memcpy(p->open, s, a);
        p->olen = a;
        memcpy(p->close + 1, s + b, c - b);
        p->clen = c - b;
        return 0;
}

static int open_section(struct mus_parser *p, const struct mus_tag *tag) {
        if (p->depth == MUSTACHE_MAX_DEPTH)
                return parse_fail(p, -E2BIG, tag->start, "sections nested too deep at", p->s + tag->name, tag->name_len);
        p->stack[p->depth++] = p->t->n;
        return add_node(p->t, tag->type == '#' ? MUS_SECTION : MUS_INVERTED, tag->name, tag->name_len);
}

static int close_section(struct mus_parser *p, const struct mus_tag *tag) {
        if (p->depth == 0)
                return parse_fail(p, -EINVAL, tag->start, "closing a section that is not open:", p->s + tag->name,
                                  tag->name_len);
        struct mus_node *open = &p->t->nodes[p->stack[p->depth - 1]];
        if (open->len != tag->name_len || memcmp(p->s + open->off, p->s + tag->name, open->len) != 0)
                return parse_fail(p, -EINVAL, tag->start, "unbalanced section: closing tag does not match",
                                  p->s + open->off, open->len);
        open->end = p->t->n;
        p->depth--;
        return 0;
}

static int add_tag(struct mus_parser *p, const struct mus_tag *tag, size_t ind_off, size_t ind_len) {
        switch (tag->type) {
        case 0:
                return add_node(p->t, MUS_VAR, tag->name, tag->name_len);
        case '{':
        case '&':
                return add_node(p->t, MUS_RAW, tag->name, tag->name_len);
        case '#':
        case '^':
                return open_section(p, tag);
        case '/':
                return close_section(p, tag);
        case '>': {
                int r = add_node(p->t, MUS_PARTIAL, tag->name, tag->name_len);
                if (r == 0) {
                        p->t->nodes[p->t->n - 1].ind_off = ind_off;
                        p->t->nodes[p->t->n - 1].ind_len = ind_len;
                }
                return r;
        }
        case '=':
                return set_delims(p, tag);
        default: /* '!' */
                return 0;
        }
}

/* One step: the text up to the next tag and the tag, or the rest as text. */
static int parse_step(struct mus_parser *p, bool *done) {
        struct mus_tag tag;
        size_t ls, next, o = find(p->s, p->len, p->pos, p->open, p->olen);
        int r;

        if (o == SIZE_MAX) {
                *done = true;
                return add_text(p->t, p->pos, p->len);
        }
        r = read_tag(p, o, &tag);
        if (r < 0)
                return r;
        if (tag.type && tag.type != '{' && tag.type != '&' && standalone(p, o, tag.end, &ls, &next)) {
                r = add_text(p->t, p->pos, ls);
                if (r == 0)
                        r = add_tag(p, &tag, ls, o - ls);
                p->pos = next;
                return r;
        }
        r = add_text(p->t, p->pos, o);
        if (r == 0)
                r = add_tag(p, &tag, 0, 0);
        p->pos = tag.end;
        return r;
}

static int parse_all(struct mus_parser *p) {
        bool done = false;
        int r = 0;

        while (!done && r == 0)
                r = parse_step(p, &done);
        if (r == 0 && p->depth > 0) {
                const struct mus_node *open = &p->t->nodes[p->stack[p->depth - 1]];
                /* name the section by where its name sits; close enough to the tag */
                r = parse_fail(p, -EINVAL, open->off, "unclosed section", p->s + open->off, open->len);
        }
        return r;
}

int mustache_parse(const char *tmpl, size_t len, struct mustache **out, char *err, size_t errlen) {
        struct mus_parser p = { .len = len, .olen = 2, .clen = 2, .err = err, .errlen = errlen };
        int r;

        *out = NULL;
        if (err && errlen)
                err[0] = '\0';
        if (len > MUSTACHE_MAX_TEMPLATE) {
                errmsg(err, errlen, 0, "template of %zu bytes is larger than %d", len, MUSTACHE_MAX_TEMPLATE);
                return -E2BIG;
        }
        p.t = calloc(1, sizeof *p.t);
        if (!p.t || !(p.t->src = malloc(len + 1))) {
                free(p.t);
                errmsg(err, errlen, 0, "out of memory");
                return -ENOMEM;
        }
        if (len)
                memcpy(p.t->src, tmpl, len);
        p.t->src[len] = '\0';
        p.t->src_len = len;
        p.s = p.t->src;
        memcpy(p.open, "{{", 2);
        memcpy(p.close + 1, "}}", 2);
        r = parse_all(&p);
        if (r < 0) {
                if (r == -ENOMEM)
                        errmsg(err, errlen, 0, "out of memory");
                mustache_free(p.t);
                return r;
        }
        *out = p.t;
        return 0;
}

void mustache_free(struct mustache *t) {
        if (!t)
                return;
        free(t->nodes);
        free(t->src);
        free(t);
}

/* ---- rendering ---- */

struct mus_render {
        struct growbuf out;
        json_object **stack;
        size_t depth, cap;
        json_object *partials;
        unsigned pdepth;
        size_t steps; /* nodes visited: nested lists multiply them without output */
        char *err;
        size_t errlen;
};

static int emit(struct mus_render *r, const char *p, size_t n) {
        if (n == 0)
                return 0;
        int ret = growbuf_append(&r->out, p, n, MUSTACHE_MAX_OUTPUT, 256);
        if (ret == -E2BIG)
                errmsg(r->err, r->errlen, 0, "output larger than %d bytes", MUSTACHE_MAX_OUTPUT);
        else if (ret < 0)
                errmsg(r->err, r->errlen, 0, "out of memory");
        return ret;
}

static int push(struct mus_render *r, json_object *v) {
        if (r->depth == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 16;
                json_object **s = realloc(r->stack, cap * sizeof *s);
                if (!s) {
                        errmsg(r->err, r->errlen, 0, "out of memory");
                        return -ENOMEM;
                }
                r->stack = s;
                r->cap = cap;
        }
        r->stack[r->depth++] = v;
        return 0;
}

static bool get_key(json_object *o, const char *k, size_t klen, json_object **v) {
        char buf[256];

        if (!o || !json_object_is_type(o, json_type_object) || klen >= sizeof buf)
                return false;
        memcpy(buf, k, klen);
        buf[klen] = '\0';
        return json_object_object_get_ex(o, buf, v);
}

/* Resolve a name: "." is the top context; the first part of a dotted name is
 * looked up down the stack, the rest only inside what that found. */
static json_object *lookup(const struct mus_render *r, const char *name, size_t len) {
        json_object *v = NULL;
        size_t part = 0;

        if (len == 1 && name[0] == '.')
                return r->depth ? r->stack[r->depth - 1] : NULL;
        while (part < len && name[part] != '.')
                part++;
        size_t i = r->depth;
        for (; i > 0; i--)
                if (get_key(r->stack[i - 1], name, part, &v))
                        break;
        if (i == 0)
                return NULL;
        while (part < len && v) {
                size_t from = part + 1, to = from;
                while (to < len && name[to] != '.')
                        to++;
                if (!get_key(v, name + from, to - from, &v))
                        return NULL;
                part = to;
        }
        return v;
}

static bool truthy(json_object *v) {
        if (!v)
                return false;
        if (json_object_is_type(v, json_type_boolean))
                return json_object_get_boolean(v);
        if (json_object_is_type(v, json_type_array))
                return json_object_array_length(v) > 0;
        return true;
}

static int emit_escaped(struct mus_render *r, const char *s, size_t n) {
        size_t from = 0;
        int ret = 0;

        for (size_t i = 0; i < n && ret == 0; i++) {
                const char *rep = s[i] == '&' ? "&amp;" : s[i] == '"' ? "&quot;" : s[i] == '<' ? "&lt;" : s[i] == '>' ? "&gt;" : NULL;
                if (!rep)
                        continue;
                ret = emit(r, s + from, i - from);
                if (ret == 0)
                        ret = emit(r, rep, strlen(rep));
                from = i + 1;
        }
        return ret ? ret : emit(r, s + from, n - from);
}

/* The shortest %g text that reads back as d. */
static void format_double(double d, char *buf, size_t n) {
        for (int prec = 1; prec <= 17; prec++) {
                snprintf(buf, n, "%.*g", prec, d);
                if (strtod(buf, NULL) == d)
                        return;
        }
}

static int emit_value(struct mus_render *r, json_object *v, bool escape) {
        char buf[64];
        const char *s;
        size_t n;

        switch (json_object_get_type(v)) {
        case json_type_null:
                return 0;
        case json_type_string:
                s = json_object_get_string(v);
                n = (size_t) json_object_get_string_len(v);
                break;
        case json_type_int:
                snprintf(buf, sizeof buf, "%" PRId64, json_object_get_int64(v));
                s = buf;
                n = strlen(buf);
                break;
        case json_type_double:
                format_double(json_object_get_double(v), buf, sizeof buf);
                s = buf;
                n = strlen(buf);
                break;
        default: /* booleans, objects, arrays */
                s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
                n = strlen(s);
                break;
        }
        return escape ? emit_escaped(r, s, n) : emit(r, s, n);
}

static int render_nodes(struct mus_render *r, const struct mustache *t, size_t from, size_t to);

/* Count a node or a list item visited, against MUSTACHE_MAX_STEPS. */
static int step(struct mus_render *r) {
        if (++r->steps <= MUSTACHE_MAX_STEPS)
                return 0;
        errmsg(r->err, r->errlen, 0, "rendering takes more than %d steps", MUSTACHE_MAX_STEPS);
        return -E2BIG;
}

static int render_section(struct mus_render *r, const struct mustache *t, size_t i) {
        const struct mus_node *nd = &t->nodes[i];
        json_object *v = lookup(r, t->src + nd->off, nd->len);
        int ret = 0;

        if (nd->type == MUS_INVERTED)
                return truthy(v) ? 0 : render_nodes(r, t, i + 1, nd->end);
        if (!truthy(v))
                return 0;
        if (!json_object_is_type(v, json_type_array)) {
                ret = push(r, v);
                if (ret == 0)
                        ret = render_nodes(r, t, i + 1, nd->end);
                r->depth--;
                return ret;
        }
        for (size_t k = 0; k < json_object_array_length(v) && ret == 0; k++) {
                ret = step(r);
                if (ret == 0)
                        ret = push(r, json_object_array_get_idx(v, k));
                if (ret < 0)
                        break;
                ret = render_nodes(r, t, i + 1, nd->end);
                r->depth--;
        }
        return ret;
}

/* A standalone partial's indentation goes before each of its lines, before
 * it is parsed, so what it interpolates is not indented. */
static char *indent_partial(const char *s, size_t n, const char *ind, size_t ind_len, size_t *out_len) {
        size_t lines = 1;
        for (size_t i = 0; i < n; i++)
                lines += s[i] == '\n';
        char *o = malloc(n + lines * ind_len + 1), *w = o;
        if (!o)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (i == 0 || (s[i - 1] == '\n')) {
                        memcpy(w, ind, ind_len);
                        w += ind_len;
                }
                *w++ = s[i];
        }
        *w = '\0';
        *out_len = (size_t) (w - o);
        return o;
}

static int render_partial(struct mus_render *r, const struct mustache *t, const struct mus_node *nd) {
        json_object *p = NULL;
        struct mustache *pt = NULL;
        size_t n;
        char name[256];
        int ret;

        if (!get_key(r->partials, t->src + nd->off, nd->len, &p) || !json_object_is_type(p, json_type_string))
                return 0;
        if (r->pdepth >= MUSTACHE_MAX_PARTIAL_DEPTH) {
                errmsg(r->err, r->errlen, 0, "partials nested deeper than %d", MUSTACHE_MAX_PARTIAL_DEPTH);
                return -E2BIG;
        }
        char *src = indent_partial(json_object_get_string(p), (size_t) json_object_get_string_len(p),
                                   t->src + nd->ind_off, nd->ind_len, &n);
        if (!src) {
                errmsg(r->err, r->errlen, 0, "out of memory");
                return -ENOMEM;
        }
        snprintf(name, sizeof name, "%.*s", (int) nd->len, t->src + nd->off);
        ret = mustache_parse(src, n, &pt, r->err, r->errlen);
        free(src);
        if (ret < 0) {
                size_t l = r->err ? strlen(r->err) : 0;
                if (r->err && l + 1 < r->errlen)
                        snprintf(r->err + l, r->errlen - l, " (in partial '%s')", name);
                return ret;
        }
        r->pdepth++;
        ret = render_nodes(r, pt, 0, pt->n);
        r->pdepth--;
        mustache_free(pt);
        return ret;
}

static int render_nodes(struct mus_render *r, const struct mustache *t, size_t from, size_t to) {
        int ret = 0;

        for (size_t i = from; i < to && ret == 0;) {
                const struct mus_node *nd = &t->nodes[i];
                ret = step(r);
                if (ret < 0)
                        return ret;
                switch (nd->type) {
                case MUS_TEXT:
                        ret = emit(r, t->src + nd->off, nd->len);
                        break;
                case MUS_VAR:
                case MUS_RAW:
                        ret = emit_value(r, lookup(r, t->src + nd->off, nd->len), nd->type == MUS_VAR);
                        break;
                case MUS_SECTION:
                case MUS_INVERTED:
                        ret = render_section(r, t, i);
                        i = nd->end;
                        continue;
                case MUS_PARTIAL:
                        ret = render_partial(r, t, nd);
                        break;
                }
                i++;
        }
        return ret;
}

int mustache_render_partials(const struct mustache *t, json_object *context, json_object *partials, char **out,
                             size_t *len, char *err, size_t errlen) {
        struct mus_render r = { .partials = partials, .err = err, .errlen = errlen };
        int ret;

        *out = NULL;
        *len = 0;
        if (err && errlen)
                err[0] = '\0';
        ret = push(&r, context);
        if (ret == 0)
                ret = render_nodes(&r, t, 0, t->n);
        if (ret == 0 && !r.out.data)
                ret = growbuf_append(&r.out, "", 0, MUSTACHE_MAX_OUTPUT, 1); /* an empty, terminated string */
        free(r.stack);
        if (ret < 0) {
                if (ret == -ENOMEM)
                        errmsg(err, errlen, 0, "out of memory");
                free(r.out.data);
                return ret;
        }
        *out = r.out.data;
        *len = r.out.len;
        return 0;
}

int mustache_render(const struct mustache *t, json_object *context, char **out, size_t *len, char *err,
                    size_t errlen) {
        return mustache_render_partials(t, context, NULL, out, len, err, errlen);
}
