/* libFuzzer target for manifest_parse_file: any input parses to 0 or a clean
 * -EINVAL/-E2BIG, and on success the documents' bytes concatenate to the
 * input. The first input byte picks the file name (YAML or JSON).
 * Build: clang -g -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon \
 *   tests/fuzz/fuzz_manifest.c common/manifest.c common/jsonread.c common/strv.c \
 *   -I/usr/include/json-c -ljson-c -lyaml */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        const char *name = data[0] & 1 ? "fuzz.json" : "fuzz.yaml";
        const char *text = (const char *) data + 1;
        size_t len = size - 1;
        struct manifest_list l = { 0 };
        char err[256];
        int r = manifest_parse_file(name, text, len, &l, err, sizeof err);
        if (r != 0 && r != -EINVAL && r != -E2BIG)
                abort();
        if (r == 0 && l.n) {
                size_t off = 0;
                for (size_t i = 0; i < l.n; i++) {
                        if (off + l.v[i].content_len > len || memcmp(l.v[i].content, text + off, l.v[i].content_len))
                                abort();
                        off += l.v[i].content_len;
                        json_object *o = manifest_to_json(&l.v[i], true);
                        struct manifest m;
                        if (!o || manifest_from_json(o, &m, err, sizeof err) != 0)
                                abort();
                        manifest_free(&m);
                        json_object_put(o);
                }
                if (off != len)
                        abort();
        }
        manifest_list_free(&l);
        return 0;
}
