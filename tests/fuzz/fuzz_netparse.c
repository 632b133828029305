/* libFuzzer target for the agent's /proc/net and sysfs text parsers
 * (agent/netparse.c): the first byte picks the parser. Each returns a count
 * or a clean error and every entry it hands out is freeable. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netparse.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        char *text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';

        size_t n = 0;
        int r = 0;
        char buf[64];
        switch (data[0] % 10) {
        case 0: {
                struct np_route *v = NULL;
                r = np_parse_proc_route(text, &v, &n);
                free(v);
                break;
        }
        case 1: {
                struct np_route *v = NULL;
                r = np_parse_ipv6_route(text, &v, &n);
                free(v);
                break;
        }
        case 2: {
                struct np_addr *v = NULL;
                r = np_parse_if_inet6(text, &v, &n);
                free(v);
                break;
        }
        case 3: {
                struct np_fib_entry *v = NULL;
                r = np_parse_fib_trie(text, &v, &n);
                free(v);
                break;
        }
        case 4: {
                struct np_vlan *v = NULL;
                r = np_parse_vlan_config(text, &v, &n);
                free(v);
                break;
        }
        case 5: {
                uint8_t mac[32];
                r = np_parse_mac(text, mac, sizeof mac);
                if (r > (int) sizeof mac)
                        abort();
                r = 0;
                break;
        }
        case 6:
                (void) np_parse_speed(text);
                break;
        case 7:
                if (np_uevent_get(text, "INTERFACE", buf, sizeof buf) && strlen(buf) >= sizeof buf)
                        abort();
                break;
        case 8: {
                struct strv names = { 0 };
                r = np_parse_name_list(text, &names);
                if (r >= 0 && (size_t) r != names.n)
                        abort();
                strv_free(&names);
                r = 0;
                break;
        }
        default:
                if (np_pci_id(text, buf, sizeof buf) && strlen(buf) >= sizeof buf)
                        abort();
        }
        if (r < 0 && r != -ENOMEM)
                abort();
        if (r >= 0 && (size_t) r > n)
                abort();
        free(text);
        return 0;
}
