/* libFuzzer target for jsonpath templates (common/jsonpath.c): the input's
 * first line is the template, the rest a JSON document. A template the
 * check accepts renders over the document or fails only for size; one it
 * refuses is refused by the renderer too, with a message; the output stays
 * within its bound. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 1 << 16)
                return 0;
        const char *nl = memchr(data, '\n', size);
        size_t tl = nl ? (size_t) (nl - (const char *) data) : size;
        char *tpl = malloc(tl + 1);
        if (!tpl)
                return 0;
        memcpy(tpl, data, tl);
        tpl[tl] = '\0';
        json_object *doc = NULL;
        if (nl) {
                json_tokener *tok = json_tokener_new_ex(32);
                if (tok) {
                        doc = json_tokener_parse_ex(tok, nl + 1, (int) (size - tl - 1));
                        json_tokener_free(tok);
                }
        }
        char err[256] = "";
        int checked = jsonpath_check(tpl, err, sizeof err);
        if (checked < 0 && !err[0])
                abort(); /* a refusal says why */
        struct growbuf out = { 0 };
        char err2[256] = "";
        int r = jsonpath_render(tpl, doc, &out, err2, sizeof err2);
        if (checked < 0 && r != checked)
                abort(); /* the renderer refuses what the check refuses */
        if (checked == 0 && r < 0 && r != -E2BIG && r != -ENOMEM)
                abort(); /* and renders what it accepts */
        if (out.len > JSONPATH_MAX_OUTPUT || (out.data && out.data[out.len] != '\0'))
                abort();
        free(out.data);
        json_object_put(doc);
        free(tpl);
        return 0;
}
