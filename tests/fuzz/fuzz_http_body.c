/* libFuzzer target for the checks at musterd's door (coordinator/http/http.c):
 * a request body that http_json_text_check() lets through is UTF-8 with no
 * NUL byte, and once json-c parses it no string in the tree holds a NUL;
 * http_utf8_repair() always yields UTF-8, and leaves UTF-8 as it was.
 * Build: clang -g -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon -Icoordinator/http \
 *   tests/fuzz/fuzz_http_body.c coordinator/http/http.c common/log.c -I/usr/include/json-c \
 *   -ljson-c -lmicrohttpd */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"

/* Every string value in o holds no NUL and is UTF-8; so is every name. */
static void walk(json_object *o, int depth) {
        if (depth > 64)
                abort(); /* the tokener's own limit is lower */
        switch (json_object_get_type(o)) {
        case json_type_string: {
                const char *s = json_object_get_string(o);
                size_t len = (size_t) json_object_get_string_len(o);
                if (strlen(s) != len || !http_utf8_valid(s, len))
                        abort();
                break;
        }
        case json_type_object: {
                json_object_object_foreach(o, key, v) {
                        if (!http_utf8_valid(key, strlen(key)))
                                abort();
                        walk(v, depth + 1);
                }
                break;
        }
        case json_type_array:
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        walk(json_object_array_get_idx(o, i), depth + 1);
                break;
        case json_type_null:
        case json_type_boolean:
        case json_type_double:
        case json_type_int:
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;
        char why[96];

        size_t rlen;
        char *fixed = http_utf8_repair(text, size, &rlen);
        if (!fixed || !http_utf8_valid(fixed, rlen))
                abort();
        if (http_utf8_valid(text, size) && (rlen != size || memcmp(fixed, text, size) != 0))
                abort();
        free(fixed);

        if (http_json_text_check(text, size, why, sizeof why) < 0) {
                if (!why[0])
                        abort(); /* a refusal says why */
                return 0;
        }
        if (!http_utf8_valid(text, size) || memchr(text, 0, size))
                abort();
        struct json_tokener *tok = json_tokener_new_ex(64);
        if (!tok)
                return 0;
        json_object *o = json_tokener_parse_ex(tok, text, (int) (size > INT32_MAX ? INT32_MAX : size));
        if (o && json_tokener_get_error(tok) == json_tokener_success)
                walk(o, 0);
        json_object_put(o);
        json_tokener_free(tok);
        return 0;
}
