/* libFuzzer target for an infra-env's static network configs
 * (staticnet_parse: JSON, then each unit file's ini text), which reach
 * musterd from the API and the agent from a boot config anyone may craft.
 * Invariants: a taken set has file names without '/' that staticnet_check_file
 * takes again, canonical MACs found by staticnet_find, and survives
 * staticnet_to_json and a second parse unchanged; a refusal is -EINVAL with
 * a reason, or -ENOMEM, and leaves nothing allocated. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "staticnet.h"
#include "fuzz_selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_text(data, size, 256 * 1024);
        if (!s)
                return 0;
        struct staticnet sn;
        char err[512] = "";
        int r = staticnet_parse(s, &sn, err, sizeof err);
        if (r < 0) {
                if ((r != -EINVAL && r != -ENOMEM) || (r == -EINVAL && !err[0]) || sn.hosts || sn.n)
                        abort();
        } else {
                for (size_t i = 0; i < sn.n; i++) {
                        const struct staticnet_host *h = &sn.hosts[i];
                        if (!h->n_macs || !h->n_files)
                                abort();
                        for (size_t j = 0; j < h->n_macs; j++) {
                                char c[18];
                                if (!staticnet_mac_canonical(h->macs[j], c) || strcmp(c, h->macs[j]) ||
                                    staticnet_find(&sn, h->macs[j]) != h)
                                        abort();
                        }
                        for (size_t j = 0; j < h->n_files; j++)
                                if (strchr(h->files[j].name, '/') ||
                                    staticnet_check_file(h->files[j].name, h->files[j].text, err, sizeof err) != 0)
                                        abort();
                }
                json_object *o = staticnet_to_json(&sn);
                if (o) {
                        struct staticnet again;
                        const char *t1 = json_object_to_json_string(o);
                        if (staticnet_parse(t1, &again, err, sizeof err) != 0)
                                abort();
                        json_object *o2 = staticnet_to_json(&again);
                        if (o2 && strcmp(t1, json_object_to_json_string(o2)) != 0)
                                abort();
                        json_object_put(o2);
                        staticnet_free(&again);
                        json_object_put(o);
                }
                staticnet_free(&sn);
        }
        free(s);
        return 0;
}
