/* libFuzzer target for the small readers of names that reach musterd and
 * the agent from outside (issue 13): a host status list as
 * `GET /hosts?status=` takes it (host_status_set_parse), a CPU architecture
 * name (cpu_arch_canonical), and an install step's arguments as the agent
 * reads them (install_args_parse, host_token included), and the same JSON as
 * disk speed check arguments (diskspeed_args_parse), and the infra-env's
 * proxy settings (proxy_url_is_valid, no_proxy_is_valid). The first byte
 * picks the reader. Invariants: a parsed set names known statuses only; a refusal
 * points inside the input; an architecture maps to one of the four names. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_selector.h"
#include "diskspeed.h"
#include "install.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_selected_text(data, size, 4096);
        if (!s)
                return 0;
        switch (data[0] % 4) {
        case 0: {
                uint32_t set = 0;
                const char *bad = NULL;
                size_t bad_len = 0;
                int r = host_status_set_parse(s, &set, &bad, &bad_len);
                if (r == 0 && (set == 0 || (set >> _HOST_STATUS_MAX) != 0))
                        abort();
                if (r < 0 && (r != -EINVAL || !bad || bad < s || bad + bad_len > s + strlen(s)))
                        abort();
                break;
        }
        case 1: {
                const char *a = cpu_arch_canonical(s);
                if (a && strcmp(a, "x86_64") && strcmp(a, "aarch64") && strcmp(a, "ppc64le") && strcmp(a, "s390x"))
                        abort();
                break;
        }
        case 2:
                /* A proxy the agents would fetch through: the scheme, and
                 * nothing that could end a line or a header. */
                if (proxy_url_is_valid(s)) {
                        if (strncasecmp(s, "http://", 7) != 0 && strncasecmp(s, "https://", 8) != 0)
                                abort();
                        for (const char *p = s; *p; p++)
                                if ((unsigned char) *p <= ' ' || (unsigned char) *p >= 0x7f)
                                        abort();
                }
                if (no_proxy_is_valid(s) && (strchr(s, ' ') || strstr(s, ",,") || s[0] == ',' ||
                                             strlen(s) > PROXY_URL_MAX))
                        abort();
                break;
        default: {
                json_object *o = json_tokener_parse(s);
                if (o) {
                        struct install_args a;
                        char err[256] = "";
                        int r = install_args_parse(o, &a, err, sizeof err);
                        if (r < 0 && r != -EINVAL && r != -ENOMEM)
                                abort();
                        if (r == 0 && a.host_token)
                                for (const char *p = a.host_token; *p; p++)
                                        if (*p <= ' ' || *p > '~')
                                                abort();
                        install_args_free(&a);
                        /* The same object as disk speed check args. */
                        struct diskspeed_args ds;
                        r = diskspeed_args_parse(o, &ds, err, sizeof err);
                        if ((r < 0 && r != -EINVAL && r != -ENOMEM) ||
                            (r == 0 && (ds.writes < 1 || ds.writes > DISKSPEED_MAX_WRITES ||
                                        (ds.path && (ds.path[0] != '/' || strlen(ds.path) > DISKSPEED_PATH_MAX)))) ||
                            (r < 0 && ds.path))
                                abort();
                        diskspeed_args_free(&ds);
                        json_object_put(o);
                }
                break;
        }
        }
        free(s);
        return 0;
}
