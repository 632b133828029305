/* libFuzzer target for the agent's /proc and udev-database parsers
 * (agent/procparse.c): the first byte picks the parser, the rest is the text.
 * Each returns a clean code, never reads past the text, and what it hands out
 * is consistent (counts within their caps, strings NUL-terminated). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        char *text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';

        switch (data[0] % 7) {
        case 0: {
                struct cpuinfo ci = { 0 };
                if (cpuinfo_parse(text, &ci) == 0 && ci.processors < 0)
                        abort();
                cpuinfo_free(&ci);
                break;
        }
        case 1: {
                int64_t b = 0;
                int r = meminfo_get(text, "MemTotal", &b);
                if (r == 0 && b < 0)
                        abort();
                break;
        }
        case 2: {
                int64_t n = 0;
                int r = cpulist_count(text, 8192, &n);
                if (r == 0 && (n < 0 || n > 8192))
                        abort();
                break;
        }
        case 3: {
                free(cmdline_get(text, "BOOTIF"));
                char *mac = bootif_to_mac(text);
                if (mac && strlen(mac) != 17)
                        abort();
                free(mac);
                break;
        }
        case 4: {
                struct mount_table t = { 0 };
                if (mountinfo_parse(text, &t) == 0)
                        for (size_t i = 0; i < t.n; i++)
                                if (!t.e[i].mountpoint)
                                        abort();
                (void) mount_table_find(&t, 8, 0);
                mount_table_free(&t);
                break;
        }
        case 5: {
                struct udev_record rec = { 0 };
                if (udev_record_parse(text, &rec) == 0)
                        (void) udev_record_get(&rec, "ID_SERIAL");
                udev_record_free(&rec);
                break;
        }
        default: {
                unsigned ma, mi;
                (void) devnum_parse(text, &ma, &mi);
        }
        }
        free(text);
        return 0;
}
