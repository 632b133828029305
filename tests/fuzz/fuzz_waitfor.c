/* libFuzzer target for `wait --for` conditions (common/waitfor.c): the
 * input's first line is the condition, the rest a JSON document. A
 * condition parses or is refused with a message; a parsed one is judged on
 * the document: met only when the value seen is the value wanted. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "waitfor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 1 << 16)
                return 0;
        const char *nl = memchr(data, '\n', size);
        size_t cl = nl ? (size_t) (nl - (const char *) data) : size;
        char *cond = malloc(cl + 1);
        if (!cond)
                return 0;
        memcpy(cond, data, cl);
        cond[cl] = '\0';
        struct waitfor w;
        char err[256] = "";
        int r = waitfor_parse(cond, &w, err, sizeof err);
        if (r == 0) {
                json_object *doc = NULL;
                if (nl) {
                        json_tokener *tok = json_tokener_new_ex(32);
                        if (tok) {
                                doc = json_tokener_parse_ex(tok, nl + 1, (int) (size - cl - 1));
                                json_tokener_free(tok);
                        }
                }
                char *seen = NULL;
                int met = waitfor_check(&w, doc, &seen);
                if (met == 1 && (!seen || strcmp(seen, w.value) != 0))
                        abort();
                if (met < 0 && met != -ENOMEM)
                        abort();
                free(seen);
                json_object_put(doc);
                waitfor_free(&w);
        } else if (r != -ENOMEM && !err[0])
                abort();
        free(cond);
        return 0;
}
