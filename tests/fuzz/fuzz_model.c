/* libFuzzer target for the JSON readers of the resource model
 * (common/model.c, inventory.c, release.c, manifest.c, payload.c): what an
 * agent posts as its inventory, what musterd stores and reads back, and what
 * a payload carries. The first byte picks the reader; the rest is parsed with
 * json-c as the HTTP layer does. Each reader gives 0 or a clean error with a
 * message, and leaves its struct freeable either way. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "manifest.h"
#include "model.h"
#include "payload.h"
#include "release.h"

static void check(int r, const char *err) {
        if (r != 0 && r != -EINVAL && r != -ENOMEM && r != -E2BIG && r != -ERANGE)
                abort();
        if (r == -EINVAL && !err[0])
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 2)
                return 0;
        struct json_tokener *tok = json_tokener_new_ex(64);
        if (!tok)
                return 0;
        json_object *o = json_tokener_parse_ex(tok, (const char *) data + 1, (int) (size - 1));
        json_tokener_free(tok);
        if (!o)
                return 0;
        char err[512] = "";
        switch (data[0] % 8) {
        case 0: {
                struct inventory inv;
                inventory_init(&inv);
                check(inventory_from_json(o, &inv, err, sizeof err), err);
                inventory_free(&inv);
                break;
        }
        case 1: {
                struct host h;
                host_init(&h);
                int r = host_from_json(o, &h, err, sizeof err);
                check(r, err);
                if (r == 0 && h.inventory_json) {
                        err[0] = '\0';
                        (void) host_parse_inventory(&h, err, sizeof err);
                }
                host_free(&h);
                break;
        }
        case 2: {
                struct cluster c;
                cluster_init(&c);
                check(cluster_from_json(o, &c, err, sizeof err), err);
                cluster_free(&c);
                break;
        }
        case 3: {
                struct infra_env ie;
                infra_env_init(&ie);
                check(infra_env_from_json(o, &ie, err, sizeof err), err);
                infra_env_free(&ie);
                break;
        }
        case 4: {
                struct event e;
                event_init(&e);
                check(event_from_json(o, &e, err, sizeof err), err);
                event_free(&e);
                break;
        }
        case 5: {
                struct release_info ri;
                release_info_init(&ri);
                check(release_info_from_json(o, &ri, err, sizeof err), err);
                release_info_free(&ri);
                break;
        }
        case 6: {
                struct manifest m = { 0 };
                check(manifest_from_json(o, &m, err, sizeof err), err);
                manifest_free(&m);
                break;
        }
        default: {
                struct payload_file *files = NULL;
                size_t n = 0;
                int r = payload_files(o, &files, &n, err, sizeof err);
                check(r, err);
                for (size_t i = 0; r == 0 && i < n; i++)
                        if (!files[i].path || strchr(files[i].path, '/') || files[i].path[0] == '.')
                                abort();
                free(files);
                struct payload_image img;
                err[0] = '\0';
                check(payload_image(o, &img, err, sizeof err), err);
        }
        }
        json_object_put(o);
        return 0;
}
