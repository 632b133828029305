/* libFuzzer target for the walk of a JSON text without its tree
 * (common/jsonread.c: json_members, json_elements, json_span_parse) and the
 * inventory read that way (inventory_from_text, what musterd does with a
 * step result's inventory), each checked against json-c's whole-tree
 * reading of the same text: on standard JSON (json-c strict), the walk
 * rebuilds the very tree, and the inventory is read with the same result
 * and the same reason. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "jsonread.h"

/* Whether a callback refused a value (the walk then gives no reason of its own). */
static bool value_refused;

static int add_member(void *ud, const char *key, struct json_span v) {
        json_object *o = NULL;
        int r = json_span_parse(v, 60, &o);
        if (r == 0)
                json_object_object_add(ud, key, o);
        value_refused |= r < 0;
        return r;
}

static int add_element(void *ud, size_t i, struct json_span v) {
        json_object *o = NULL;
        if (i != json_object_array_length(ud))
                abort();
        int r = json_span_parse(v, 60, &o);
        if (r == 0)
                json_object_array_add(ud, o);
        value_refused |= r < 0;
        return r;
}

/* The deepest nesting of containers in s (strings skipped). */
static int nesting(const char *s, size_t len) {
        int d = 0, max = 0;
        bool str = false;
        for (size_t i = 0; i < len; i++) {
                if (str) {
                        if (s[i] == '\\')
                                i++;
                        else if (s[i] == '"')
                                str = false;
                } else if (s[i] == '"')
                        str = true;
                else if (s[i] == '{' || s[i] == '[')
                        max = ++d > max ? d : max;
                else if (s[i] == '}' || s[i] == ']')
                        d--;
        }
        return max;
}

static json_object *strict_parse(const char *s, size_t len) {
        struct json_tokener *tok = json_tokener_new_ex(64);
        if (!tok)
                return NULL;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        json_object *o = json_tokener_parse_ex(tok, s, (int) len);
        bool ok = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
        json_tokener_free(tok);
        if (!ok) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *s = (const char *) data;
        if (size == 0 || memchr(s, '\0', size))
                return 0;
        char err[256] = "", err_o[256] = "";
        /* The walk, as an object and as an array: never a crash, a reason
         * for every refusal. */
        json_object *obj = json_object_new_object(), *arr = json_object_new_array();
        if (!obj || !arr)
                abort();
        value_refused = false;
        int ro = json_members(s, size, add_member, obj, err_o, sizeof err_o);
        if (ro == -EINVAL && !err_o[0] && !value_refused)
                abort();
        err[0] = '\0';
        value_refused = false;
        int ra = json_elements(s, size, add_element, arr, err, sizeof err);
        if (ra == -EINVAL && !err[0] && !value_refused)
                abort();
        /* Standard JSON not too deep: the walk gives json-c's tree, but for
         * names past JSON_SPAN_KEY_MAX, which it refuses by design. */
        bool shallow = nesting(s, size) <= 30;
        json_object *whole = shallow ? strict_parse(s, size) : NULL;
        bool long_name = strstr(err_o, "member name too long") || strstr(err, "member name too long");
        if (whole && !long_name && json_object_is_type(whole, json_type_object) &&
            (ro != 0 || !json_object_equal(whole, obj)))
                abort();
        if (whole && json_object_is_type(whole, json_type_array) && (ra != 0 || !json_object_equal(whole, arr)))
                abort();
        json_object_put(obj);
        json_object_put(arr);

        /* The inventory, from its text and from its tree. */
        struct inventory a, b;
        char ea[256] = "", eb[256] = "";
        int rb = inventory_from_text(s, size, &b, eb, sizeof eb);
        if (rb != 0 && rb != -EINVAL && rb != -ENOMEM && rb != -E2BIG)
                abort();
        if (rb == -EINVAL && !eb[0])
                abort();
        if (whole && !strstr(eb, "member name too long") && rb != -E2BIG && rb != -ENOMEM) {
                int rt = inventory_from_json(whole, &a, ea, sizeof ea);
                if (rt != rb || strcmp(ea, eb) != 0)
                        abort();
                if (rt == 0) {
                        json_object *ja = inventory_to_json(&a), *jb = inventory_to_json(&b);
                        if (ja && jb && !json_object_equal(ja, jb))
                                abort();
                        json_object_put(ja);
                        json_object_put(jb);
                }
                inventory_free(&a);
        }
        inventory_free(&b);
        json_object_put(whole);
        return 0;
}
