/* libFuzzer target for common/mustache.c: the input is parsed as a template
 * and rendered over a small fixed context with one partial. Neither may
 * crash, and failures are only -EINVAL, -E2BIG or -ENOMEM with a reason; a
 * render's length is its text's. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mustache.h"

static const char context_json[] =
        "{\"name\":\"Joe <b>\",\"n\":3,\"pi\":3.14,\"t\":true,\"f\":false,\"z\":null,"
        "\"list\":[1,\"two\",{\"name\":\"three\"},[4]],\"empty\":[],\"a\":{\"b\":{\"c\":\"deep\"}}}";
static const char partials_json[] = "{\"p\":\"[{{name}}]\\n{{#list}}{{.}}{{/list}}\",\"self\":\"{{>self}}\"}";

static bool allowed(int r) { return r == -EINVAL || r == -E2BIG || r == -ENOMEM; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static json_object *context, *partials;
        struct mustache *t = (struct mustache *) 1;
        char err[256] = "", *out = (char *) 1;
        size_t len;

        if (!context) {
                context = json_tokener_parse(context_json);
                partials = json_tokener_parse(partials_json);
                if (!context || !partials)
                        abort();
        }
        int r = mustache_parse((const char *) data, size, &t, err, sizeof err);
        if (r < 0) {
                if (!allowed(r) || t || !err[0])
                        abort();
                return 0;
        }
        if (r != 0 || !t)
                abort();
        r = mustache_render_partials(t, context, partials, &out, &len, err, sizeof err);
        if (r < 0) {
                if (!allowed(r) || out || !err[0])
                        abort();
        } else if (r != 0 || !out || strlen(out) > len) {
                abort(); /* a NUL from the template may end the text early, never late */
        } else {
                free(out);
        }
        mustache_free(t);
        return 0;
}
