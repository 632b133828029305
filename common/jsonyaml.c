/* JSON as YAML through libyaml's emitter (jsonyaml.h). The emitter decides
 * how a string can be written; this file decides when a plain one would
 * change its type, which the emitter does not know. */
#include "jsonyaml.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

static bool one_of(const char *s, size_t n, const char *const *words) {
        for (; *words; words++)
                if (strlen(*words) == n && memcmp(*words, s, n) == 0)
                        return true;
        return false;
}

bool jsonyaml_plain_is_ambiguous(const char *s, size_t n) {
        static const char *const words[] = {
                "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
                ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN",
                ".NAN", "<<", "=", NULL,
        };
        if (n == 0 || one_of(s, n, words))
                return true;
        /* Numbers of every base and notation (1_000, 0x1f, 0o17, 1e3, .5,
         * 1:30 sexagesimal) and timestamps (2026-11-21...); "7f3c" and
         * "1st" are words. */
        size_t i = s[0] == '+' || s[0] == '-' ? 1 : 0;
        if (i + 1 < n && s[i] == '0' && strchr("xXoObB", s[i + 1]))
                return true;
        if (strspn(s + i, "0123456789_.:eE+-") >= n - i && strcspn(s + i, "0123456789") < n - i)
                return true;
        return n >= 8 && strspn(s, "0123456789") == 4 && s[4] == '-' && s[5] >= '0' && s[5] <= '9';
}

struct emit {
        yaml_emitter_t e;
        struct growbuf *out;
        bool too_big;
};

static int write_out(void *data, unsigned char *buf, size_t size) {
        struct emit *em = data;
        int r = growbuf_append(em->out, buf, size, JSONYAML_MAX_OUTPUT, 4096);
        em->too_big |= r == -E2BIG;
        return r == 0;
}

static bool emit(struct emit *em, yaml_event_t *ev) {
        return yaml_emitter_emit(&em->e, ev) != 0;
}

static bool scalar(struct emit *em, const char *s, size_t n, yaml_scalar_style_t style, bool plain_ok) {
        yaml_event_t ev;
        if (n > (size_t) INT32_MAX)
                return false;
        return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *) s, (int) n, plain_ok, 1, style) &&
               emit(em, &ev);
}

/* A string: literal block for several lines, double quotes where plain
 * would read as another type, else the emitter's choice. */
static bool string(struct emit *em, const char *s, size_t n) {
        if (memchr(s, '\n', n))
                return scalar(em, s, n, YAML_LITERAL_SCALAR_STYLE, false);
        if (jsonyaml_plain_is_ambiguous(s, n))
                return scalar(em, s, n, YAML_DOUBLE_QUOTED_SCALAR_STYLE, false);
        return scalar(em, s, n, YAML_ANY_SCALAR_STYLE, true);
}

static bool node(struct emit *em, json_object *o) {
        yaml_event_t ev;
        switch (json_object_get_type(o)) {
        case json_type_null: return scalar(em, "null", 4, YAML_PLAIN_SCALAR_STYLE, true);
        case json_type_boolean:
                return json_object_get_boolean(o) ? scalar(em, "true", 4, YAML_PLAIN_SCALAR_STYLE, true)
                                                  : scalar(em, "false", 5, YAML_PLAIN_SCALAR_STYLE, true);
        case json_type_int:
        case json_type_double: {
                const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
                return s && scalar(em, s, strlen(s), YAML_PLAIN_SCALAR_STYLE, true);
        }
        case json_type_string: return string(em, json_object_get_string(o), (size_t) json_object_get_string_len(o));
        case json_type_object:
                if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                         json_object_object_length(o) ? YAML_BLOCK_MAPPING_STYLE
                                                                                      : YAML_FLOW_MAPPING_STYLE) ||
                    !emit(em, &ev))
                        return false;
                json_object_object_foreach(o, k, v) {
                        if (!string(em, k, strlen(k)) || !node(em, v))
                                return false;
                }
                return yaml_mapping_end_event_initialize(&ev) && emit(em, &ev);
        case json_type_array: {
                size_t n = json_object_array_length(o);
                if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                          n ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE) ||
                    !emit(em, &ev))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if (!node(em, json_object_array_get_idx(o, i)))
                                return false;
                return yaml_sequence_end_event_initialize(&ev) && emit(em, &ev);
        }
        }
        return false;
}

int jsonyaml_emit(json_object *o, struct growbuf *out) {
        struct emit em = { .out = out };
        yaml_event_t ev;
        if (!yaml_emitter_initialize(&em.e))
                return -ENOMEM;
        yaml_emitter_set_output(&em.e, write_out, &em);
        yaml_emitter_set_unicode(&em.e, 1);
        yaml_emitter_set_width(&em.e, -1);
        bool ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && emit(&em, &ev) &&
                  yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && emit(&em, &ev) && node(&em, o) &&
                  yaml_document_end_event_initialize(&ev, 1) && emit(&em, &ev) &&
                  yaml_stream_end_event_initialize(&ev) && emit(&em, &ev) && yaml_emitter_flush(&em.e);
        yaml_error_type_t err = em.e.error;
        yaml_emitter_delete(&em.e);
        if (ok)
                return 0;
        return em.too_big ? -E2BIG : err == YAML_MEMORY_ERROR ? -ENOMEM : -EIO;
}
