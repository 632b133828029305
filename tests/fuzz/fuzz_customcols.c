/* libFuzzer target for custom-columns specs (common/customcols.c): the
 * input's first line is the spec, the rest a JSON document. A spec parses
 * or is refused with a message; a parsed one renders over the document,
 * or fails only for size or memory, with a header line first. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "customcols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 1 << 16)
                return 0;
        const char *nl = memchr(data, '\n', size);
        size_t sl = nl ? (size_t) (nl - (const char *) data) : size;
        char *spec = malloc(sl + 1);
        if (!spec)
                return 0;
        memcpy(spec, data, sl);
        spec[sl] = '\0';
        struct customcols c;
        char err[256] = "";
        int r = customcols_parse(spec, &c, err, sizeof err);
        if (r == 0) {
                if (c.n == 0 || c.n > CUSTOMCOLS_MAX_COLUMNS)
                        abort();
                json_object *doc = NULL;
                if (nl) {
                        json_tokener *tok = json_tokener_new_ex(32);
                        if (tok) {
                                doc = json_tokener_parse_ex(tok, nl + 1, (int) (size - sl - 1));
                                json_tokener_free(tok);
                        }
                }
                struct growbuf out = { 0 };
                r = customcols_render(&c, doc, &out);
                if (r != 0 && r != -E2BIG && r != -ENOMEM)
                        abort();
                if (r == 0 && (!out.data || strncmp(out.data, c.v[0].header, strlen(c.v[0].header)) != 0))
                        abort();
                free(out.data);
                json_object_put(doc);
                customcols_free(&c);
        } else if (r != -ENOMEM && !err[0])
                abort(); /* a refusal says why */
        free(spec);
        return 0;
}
