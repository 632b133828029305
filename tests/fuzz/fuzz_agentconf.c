/* libFuzzer target for the agent's configuration sources (agent/agentconf.c):
 * agent.conf text, the kernel command line and the boot medium's config
 * area. The first byte picks the source. A source parses to 0 or a clean
 * -EINVAL with a message, and what it sets says where it came from. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agentconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        const uint8_t *in = data + 1;
        size_t len = size - 1;
        char *copy = malloc(len ? len : 1); /* exact size: over-reads are caught */
        if (!copy)
                return 0;
        if (len)
                memcpy(copy, in, len);
        struct agentconf c;
        memset(&c, 0, sizeof c);
        char err[256] = "";
        int r;
        switch (data[0] % 3) {
        case 0: r = agentconf_parse_file(&c, copy, len, "agent.conf", err, sizeof err); break;
        case 1: r = agentconf_parse_cmdline(&c, copy, len, "cmdline", err, sizeof err); break;
        default: r = agentconf_parse_boot(&c, (const uint8_t *) copy, len, "config.img", err, sizeof err);
        }
        if (r != 0 && r != -EINVAL && r != -ENOMEM && r != -ENODATA && r != -E2BIG)
                abort();
        if (r == -EINVAL && !err[0])
                abort();
        for (int i = 0; i < _AGENTCONF_SETTING_MAX; i++)
                if (c.from[i] && !c.origin[i])
                        abort();
        agentconf_free(&c);
        free(copy);
        return 0;
}
