/* libFuzzer target for the SMBIOS parser (agent/smbios.c): the first byte
 * says how much of the input is the entry point, the rest is the structure
 * table. Garbage gives -EINVAL; a partial table what it holds, never a read
 * past its end (ASan checks the exact-size copies). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "smbios.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        size_t ep_len = data[0] % 40;
        if (ep_len > size - 1)
                ep_len = size - 1;
        size_t tlen = size - 1 - ep_len;
        /* Exact-size heap copies, so any over-read is caught. */
        uint8_t *ep = ep_len ? malloc(ep_len) : NULL;
        uint8_t *table = tlen ? malloc(tlen) : NULL;
        if ((ep_len && !ep) || (tlen && !table))
                goto out;
        if (ep_len)
                memcpy(ep, data + 1, ep_len);
        if (tlen)
                memcpy(table, data + 1 + ep_len, tlen);
        struct smbios_info info;
        memset(&info, 0, sizeof info);
        int r = smbios_parse(ep, ep_len, table, tlen, &info);
        if (r != 0 && r != -EINVAL && r != -ENOMEM)
                abort();
        if (r == 0 && (info.structures <= 0 || info.memory_devices < 0))
                abort();
        if (info.sys_uuid && strlen(info.sys_uuid) != 36)
                abort();
        smbios_info_free(&info);
out:
        free(ep);
        free(table);
        return 0;
}
