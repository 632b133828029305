/* release.yaml as `release import` sends it: the text goes as it is, except
 * a relative os_image.path, which musterd could not resolve and so is made
 * absolute here. libyaml finds the scalar and where it is written; only
 * those bytes change. Pure: text in, text out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ctl.h"

#define MAX_DEPTH 64 /* release.yaml is two levels deep; more is not one */

struct frame {
        bool mapping;
        bool want_key; /* a mapping whose next node is a key */
        bool as_key;   /* this collection is its parent's (complex) key */
        char *key;     /* the scalar key whose value is being read, or NULL */
};

/* Byte offset of code point `index` of text (libyaml counts code points,
 * after a byte order mark it does not count). */
static size_t byte_offset(const char *text, size_t len, size_t index) {
        size_t i = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
        while (index > 0 && i < len) {
                i++;
                while (i < len && ((unsigned char) text[i] & 0xC0) == 0x80)
                        i++;
                index--;
        }
        return i;
}

/* The scalar event `e` is os_image.path's value: check that its bytes are
 * what the scalar says and report them. */
static int found(const char *text, size_t len, const yaml_event_t *e, size_t *start, size_t *end, char **value,
                 int *quote) {
        size_t s = byte_offset(text, len, e->start_mark.index), t = byte_offset(text, len, e->end_mark.index);
        const char *v = (const char *) e->data.scalar.value;
        size_t vl = e->data.scalar.length;
        int q;
        switch (e->data.scalar.style) {
        case YAML_PLAIN_SCALAR_STYLE:
                q = 0;
                /* A tag may come first; a value folded over lines is not ours to edit. */
                if (t < s || t - s < vl || memcmp(text + t - vl, v, vl) != 0)
                        return -ENOTSUP;
                break;
        case YAML_SINGLE_QUOTED_SCALAR_STYLE:
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
                q = e->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ? '\'' : '"';
                if (t <= s || text[t - 1] != q)
                        return -ENOTSUP;
                break;
        default:
                return -ENOTSUP; /* a block scalar (| or >) */
        }
        if (memchr(v, '\0', vl))
                return -EINVAL;
        char *copy = strndup(v, vl);
        if (!copy)
                return -ENOMEM;
        *start = s;
        *end = t;
        *value = copy;
        *quote = q;
        return 1;
}

/* Whether the scalar value about to be read is os_image.path's: the
 * document's mapping at key os_image, and in it a mapping at key path. */
static bool at_image_path(const struct frame *st, size_t depth) {
        return depth == 2 && st[0].mapping && st[0].key && strcmp(st[0].key, "os_image") == 0 && st[1].mapping &&
               st[1].key && strcmp(st[1].key, "path") == 0;
}

/* A scalar or an alias in the open collections st[0..depth): a mapping's
 * key (an alias one is not ours to follow), os_image.path's value (1, the
 * event left for found()), or another value, which ends its key. 0, 1 or
 * -ENOMEM. */
static int on_scalar(struct frame *st, size_t depth, const yaml_event_t *e) {
        struct frame *top = depth ? &st[depth - 1] : NULL;
        bool scalar = e->type == YAML_SCALAR_EVENT;
        if (top && top->mapping && top->want_key) {
                top->key = scalar ? strndup((const char *) e->data.scalar.value, e->data.scalar.length) : NULL;
                top->want_key = false;
                return scalar && !top->key ? -ENOMEM : 0;
        }
        if (scalar && at_image_path(st, depth))
                return 1;
        if (top && top->mapping) {
                free(top->key);
                top->key = NULL;
                top->want_key = true;
        }
        return 0;
}

/* A mapping or a sequence opens. 0, or -EINVAL past MAX_DEPTH. */
static int on_start(struct frame *st, size_t *depth, bool mapping) {
        struct frame *top = *depth ? &st[*depth - 1] : NULL;
        if (*depth == MAX_DEPTH)
                return -EINVAL;
        st[*depth] = (struct frame) {
                .mapping = mapping,
                .want_key = true,
                .as_key = top && top->mapping && top->want_key,
        };
        (*depth)++;
        return 0;
}

/* A mapping or a sequence closes: as a value it ends its parent's key; as
 * a (complex) key its value comes next. */
static void on_end(struct frame *st, size_t *depth) {
        if (*depth == 0)
                return;
        (*depth)--;
        free(st[*depth].key);
        bool as_key = st[*depth].as_key;
        st[*depth] = (struct frame) { 0 };
        if (*depth > 0 && st[*depth - 1].mapping) {
                struct frame *parent = &st[*depth - 1];
                if (!as_key) {
                        free(parent->key);
                        parent->key = NULL;
                }
                parent->want_key = !as_key;
        }
}

int ctl_release_find_path(const char *text, size_t len, size_t *start, size_t *end, char **value, int *quote) {
        struct frame st[MAX_DEPTH] = { 0 };
        size_t depth = 0;
        int r = 0;
        yaml_parser_t p;

        if (!ctl_text_is_utf8(text, len))
                return -EINVAL;
        if (!yaml_parser_initialize(&p))
                return -ENOMEM;
        yaml_parser_set_input_string(&p, (const unsigned char *) text, len);
        for (bool done = false; !done;) {
                yaml_event_t e;
                if (!yaml_parser_parse(&p, &e)) {
                        r = p.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
                        break;
                }
                switch (e.type) {
                case YAML_DOCUMENT_END_EVENT: /* only the first document is the release */
                case YAML_STREAM_END_EVENT:
                        done = true;
                        break;
                case YAML_SCALAR_EVENT:
                case YAML_ALIAS_EVENT:
                        r = on_scalar(st, depth, &e);
                        if (r == 1) {
                                r = found(text, len, &e, start, end, value, quote);
                                done = true;
                        }
                        break;
                case YAML_MAPPING_START_EVENT:
                case YAML_SEQUENCE_START_EVENT:
                        r = on_start(st, &depth, e.type == YAML_MAPPING_START_EVENT);
                        break;
                case YAML_MAPPING_END_EVENT:
                case YAML_SEQUENCE_END_EVENT:
                        on_end(st, &depth);
                        break;
                default:
                        break;
                }
                yaml_event_delete(&e);
                if (r < 0)
                        done = true;
        }
        for (size_t i = 0; i < MAX_DEPTH; i++)
                free(st[i].key);
        yaml_parser_delete(&p);
        return r;
}

/* A path every YAML reader takes as a plain string. */
static bool plain_safe(const char *s) {
        if (!*s)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("/._+-", *p)))
                        return false;
        return s[0] == '/' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9') || (s[0] >= 'a' && s[0] <= 'z') ||
               (s[0] >= 'A' && s[0] <= 'Z');
}

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

char *ctl_release_splice_path(const char *text, size_t len, size_t start, size_t end, int quote, const char *path,
                              size_t *out_len) {
        size_t pl = strlen(path);
        if (start > end || end > len)
                return NULL;
        if (quote == 0 && !plain_safe(path))
                quote = '"';
        if (quote == '\'' && has_control(path))
                quote = '"';
        /* At worst 4 bytes per byte of the path (\xNN), and two quotes. */
        size_t cap = len - (end - start) + 4 * pl + 3;
        char *out = malloc(cap), *o = out;
        if (!out)
                return NULL;
        memcpy(o, text, start);
        o += start;
        if (quote)
                *o++ = (char) quote;
        for (const char *p = path; *p; p++) {
                unsigned char ch = (unsigned char) *p;
                if (quote == '\'' && ch == '\'') {
                        *o++ = '\'';
                        *o++ = '\'';
                } else if (quote == '"' && (ch == '"' || ch == '\\')) {
                        *o++ = '\\';
                        *o++ = (char) ch;
                } else if (quote == '"' && (ch < 0x20 || ch == 0x7f)) {
                        o += sprintf(o, "\\x%02x", ch);
                } else
                        *o++ = (char) ch;
        }
        if (quote)
                *o++ = (char) quote;
        memcpy(o, text + end, len - end);
        o += len - end;
        *o = '\0';
        *out_len = (size_t) (o - out);
        return out;
}
