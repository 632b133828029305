/* libFuzzer target for the ISO config area (common/bootcfg.c), which the
 * agent reads from a boot medium anyone can write: any area decodes to 0,
 * -ENODATA or a clean -EINVAL with a reason, and what decodes encodes back
 * to an area that decodes to the same settings. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bootcfg.h"

static int same(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *area = malloc(size ? size : 1);
        if (!area)
                return 0;
        memcpy(area, data, size);
        struct bootcfg c = { 0 }, back = { 0 };
        char err[256] = "";
        int r = bootcfg_decode(area, size, &c, err, sizeof err);
        if (r != 0 && r != -ENODATA && r != -EINVAL && r != -ENOMEM)
                abort();
        if (r == -EINVAL && !err[0])
                abort();
        if (r == 0) {
                size_t cap = size < 4096 ? 4096 : size;
                uint8_t *again = calloc(1, cap);
                if (again && bootcfg_encode(&c, again, cap) == 0) {
                        if (bootcfg_decode(again, cap, &back, err, sizeof err) != 0)
                                abort();
                        if (!same(c.coordinator_url, back.coordinator_url) || !same(c.infra_env_id, back.infra_env_id) ||
                            !same(c.token, back.token) || !same(c.coordinator_key_pem, back.coordinator_key_pem) ||
                            !same(c.ca_pem, back.ca_pem))
                                abort();
                }
                free(again);
        }
        bootcfg_free(&c);
        bootcfg_free(&back);
        free(area);
        return 0;
}
