/* libFuzzer target for release_info_parse_yaml: any input parses to 0 or a
 * clean -EINVAL/-E2BIG, and what parses survives the JSON round trip.
 * Build: clang -g -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Icommon \
 *   tests/fuzz/fuzz_release.c common/release.c common/strv.c \
 *   -I/usr/include/json-c -ljson-c -lyaml */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "release.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct release_info r, back;
        char err[256];
        int ret = release_info_parse_yaml((const char *) data, size, &r, err, sizeof err);
        if (ret != 0 && ret != -EINVAL && ret != -E2BIG)
                abort();
        if (ret == 0) {
                json_object *o = release_info_to_json(&r);
                if (!o || release_info_from_json(o, &back, err, sizeof err) != 0)
                        abort();
                json_object *o2 = release_info_to_json(&back);
                if (!o2 || strcmp(json_object_to_json_string(o), json_object_to_json_string(o2)) != 0)
                        abort();
                json_object_put(o);
                json_object_put(o2);
                release_info_free(&back);
        }
        release_info_free(&r);
        return 0;
}
