/* libFuzzer target for GRUB's environment block as reclaim reads it from a
 * host's boot partition (reclaim_grubenv_set): any bytes as the block, a
 * name and a value from the input's tail. Invariants: a block taken gives
 * exactly RECLAIM_GRUBENV_SIZE bytes that start with the signature, which
 * take the same change again to the same bytes (setting is idempotent);
 * a refusal is -EINVAL and leaves out untouched. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reclaim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* BLOCK 0xff NAME[=VALUE]: the change from the input's tail; without
         * a 0xff the whole input is the block, and next_entry the change. */
        char name[64] = "next_entry", value[256] = "muster-discovery";
        size_t blen = size;
        const uint8_t *nul = memchr(data, 0xff, size);
        if (nul) {
                blen = (size_t) (nul - data);
                size_t rest = size - blen - 1, nl = rest < sizeof name - 1 ? rest : sizeof name - 1;
                const uint8_t *split = memchr(nul + 1, '=', rest);
                if (split) {
                        nl = (size_t) (split - nul - 1) < sizeof name - 1 ? (size_t) (split - nul - 1) : sizeof name - 1;
                        size_t vl = rest - (size_t) (split - nul);
                        vl = vl < sizeof value - 1 ? vl : sizeof value - 1;
                        memcpy(value, split + 1, vl);
                        value[vl] = '\0';
                }
                memcpy(name, nul + 1, nl);
                name[nl] = '\0';
        }
        char out[RECLAIM_GRUBENV_SIZE], again[RECLAIM_GRUBENV_SIZE];
        memset(out, 0x5a, sizeof out);
        int r = reclaim_grubenv_set((const char *) data, blen, name, value, out);
        if (r < 0) {
                if (r != -EINVAL)
                        abort();
                for (size_t i = 0; i < sizeof out; i++)
                        if (out[i] != 0x5a)
                                abort();
                return 0;
        }
        if (memcmp(out, RECLAIM_GRUBENV_SIGNATURE, strlen(RECLAIM_GRUBENV_SIGNATURE)) != 0)
                abort();
        if (reclaim_grubenv_set(out, sizeof out, name, value, again) != 0 || memcmp(out, again, sizeof out) != 0)
                abort();
        return 0;
}
