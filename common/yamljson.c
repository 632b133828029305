/* YAML into JSON over libyaml's event parser (yamljson.h): one recursive
 * reader per node kind, the depth bounded, aliases refused. */
#include "yamljson.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yamlscan.h"

struct yj {
        yaml_parser_t parser;
        const char *data;
        size_t len;
        char *err;
        size_t errlen;
};

static int failv(struct yj *y, int r, size_t line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int failv(struct yj *y, int r, size_t line, const char *fmt, ...) {
        if (y->err && y->errlen) {
                char msg[256];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(msg, sizeof msg, fmt, ap);
                va_end(ap);
                snprintf(y->err, y->errlen, "line %zu: %s", yscan_clamp_line(y->data, y->len, line), msg);
        }
        return r;
}

static size_t ev_line(const yaml_event_t *e) {
        return e->start_mark.line + 1;
}

static int next(struct yj *y, yaml_event_t *e) {
        if (yaml_parser_parse(&y->parser, e))
                return 0;
        if (y->parser.error == YAML_MEMORY_ERROR)
                return -ENOMEM;
        return failv(y, -EINVAL, y->parser.problem_mark.line + 1, "%s",
                     y->parser.problem ? y->parser.problem : "not YAML");
}

static bool tagged(const yaml_event_t *e, const char *tag) {
        return e->data.scalar.tag && strcmp((const char *) e->data.scalar.tag, tag) == 0;
}

/* YAML 1.2 core schema: [-+]?[0-9]+ is an integer (when it fits), a
 * decimal with a dot or an exponent a double; inf and nan stay strings. */
static json_object *plain_number(const char *s, size_t n) {
        if (n == 0 || n > 64 || strspn(s, "0123456789+-.eE") != n || strcspn(s, "0123456789") == n)
                return NULL;
        char *end;
        errno = 0;
        if (strcspn(s, ".eE") == n) {
                long long v = strtoll(s, &end, 10);
                return !errno && end == s + n ? json_object_new_int64(v) : NULL;
        }
        double d = strtod(s, &end);
        return !errno && end == s + n && isfinite(d) ? json_object_new_double(d) : NULL;
}

static int scalar(struct yj *y, const yaml_event_t *e, json_object **out) {
        const char *s = (const char *) e->data.scalar.value;
        size_t n = e->data.scalar.length;
        bool plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !e->data.scalar.tag;
        if (e->data.scalar.tag && !tagged(e, "tag:yaml.org,2002:str") && !tagged(e, "!"))
                return failv(y, -EINVAL, ev_line(e), "tag %s is not supported (only !!str)",
                             (const char *) e->data.scalar.tag);
        *out = NULL;
        if (plain && yscan_plain_is_null(s, n))
                return 0;
        if (plain && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")))
                *out = json_object_new_boolean(1);
        else if (plain && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")))
                *out = json_object_new_boolean(0);
        else if (!plain || !(*out = plain_number(s, n)))
                *out = json_object_new_string_len(s, (int) n);
        return *out ? 0 : -ENOMEM;
}

static int node(struct yj *y, yaml_event_t *e, unsigned depth, json_object **out);

static int mapping(struct yj *y, unsigned depth, json_object **out) {
        json_object *o = json_object_new_object();
        int r;
        if (!o)
                return -ENOMEM;
        for (;;) {
                yaml_event_t k;
                r = next(y, &k);
                if (r < 0)
                        goto fail;
                if (k.type == YAML_MAPPING_END_EVENT) {
                        yaml_event_delete(&k);
                        *out = o;
                        return 0;
                }
                if (k.type != YAML_SCALAR_EVENT) {
                        r = failv(y, -EINVAL, ev_line(&k), "a mapping's keys must be scalars");
                        yaml_event_delete(&k);
                        goto fail;
                }
                char *key = strndup((const char *) k.data.scalar.value, k.data.scalar.length);
                size_t line = ev_line(&k);
                yaml_event_delete(&k);
                if (!key) {
                        r = -ENOMEM;
                        goto fail;
                }
                if (json_object_object_get_ex(o, key, NULL)) {
                        r = failv(y, -EINVAL, line, "key \"%.64s\" appears twice", key);
                        free(key);
                        goto fail;
                }
                yaml_event_t v;
                json_object *val = NULL;
                if ((r = next(y, &v)) < 0) {
                        free(key);
                        goto fail;
                }
                r = node(y, &v, depth + 1, &val);
                yaml_event_delete(&v);
                if (r == 0 && json_object_object_add(o, key, val) < 0) {
                        json_object_put(val);
                        r = -ENOMEM;
                }
                free(key);
                if (r < 0)
                        goto fail;
        }
fail:
        json_object_put(o);
        return r;
}

static int sequence(struct yj *y, unsigned depth, json_object **out) {
        json_object *a = json_object_new_array();
        if (!a)
                return -ENOMEM;
        for (;;) {
                yaml_event_t e;
                int r = next(y, &e);
                if (r < 0) {
                        json_object_put(a);
                        return r;
                }
                if (e.type == YAML_SEQUENCE_END_EVENT) {
                        yaml_event_delete(&e);
                        *out = a;
                        return 0;
                }
                json_object *v = NULL;
                r = node(y, &e, depth + 1, &v);
                yaml_event_delete(&e);
                if (r == 0 && json_object_array_add(a, v) < 0) {
                        json_object_put(v);
                        r = -ENOMEM;
                }
                if (r < 0) {
                        json_object_put(a);
                        return r;
                }
        }
}

/* The node that starts with event e (the caller deletes e). */
static int node(struct yj *y, yaml_event_t *e, unsigned depth, json_object **out) {
        *out = NULL;
        if (depth > YAMLJSON_MAX_DEPTH)
                return failv(y, -EINVAL, ev_line(e), "nested deeper than %d", YAMLJSON_MAX_DEPTH);
        switch (e->type) {
        case YAML_SCALAR_EVENT:
                if (e->data.scalar.anchor)
                        break;
                return scalar(y, e, out);
        case YAML_MAPPING_START_EVENT:
                if (e->data.mapping_start.anchor)
                        break;
                return mapping(y, depth, out);
        case YAML_SEQUENCE_START_EVENT:
                if (e->data.sequence_start.anchor)
                        break;
                return sequence(y, depth, out);
        case YAML_ALIAS_EVENT:
                break;
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                return failv(y, -EINVAL, ev_line(e), "a node was expected");
        }
        return failv(y, -EINVAL, ev_line(e), "anchors and aliases are not supported");
}

/* Expect an event of `type` (and drop it). */
static int expect(struct yj *y, yaml_event_type_t type, const char *what) {
        yaml_event_t e;
        int r = next(y, &e);
        if (r < 0)
                return r;
        if (e.type != type)
                r = failv(y, -EINVAL, ev_line(&e), "%s", what);
        yaml_event_delete(&e);
        return r;
}

int yamljson_parse(const char *data, size_t len, json_object **out, char *err, size_t errlen) {
        struct yj y = { .data = data ? data : "", .len = data ? len : 0, .err = err, .errlen = errlen };
        json_object *o = NULL;
        yaml_event_t e;
        int r;

        *out = NULL;
        if (err && errlen)
                *err = '\0';
        if (!yaml_parser_initialize(&y.parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&y.parser, (const unsigned char *) y.data, y.len);
        if ((r = expect(&y, YAML_STREAM_START_EVENT, "not a YAML stream")) < 0 ||
            (r = expect(&y, YAML_DOCUMENT_START_EVENT, "the text holds no document")) < 0 || (r = next(&y, &e)) < 0)
                goto out;
        r = node(&y, &e, 0, &o);
        yaml_event_delete(&e);
        if (r < 0 || (r = expect(&y, YAML_DOCUMENT_END_EVENT, "the document does not end")) < 0 ||
            (r = expect(&y, YAML_STREAM_END_EVENT, "the text holds more than one document")) < 0)
                goto out;
        *out = o;
        o = NULL;
out:
        json_object_put(o);
        yaml_parser_delete(&y.parser);
        return r;
}
