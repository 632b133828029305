/* libFuzzer target for the signed payload envelope the agent fetches
 * (common/payload.c payload_verify): any envelope is refused with a
 * documented code (the fuzzer cannot forge a fresh key's signature), and a
 * refusal hands out nothing. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "payload.h"

static struct crypto_key *key;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!key && crypto_key_generate(&key) < 0)
                abort();
        char *env = malloc(size ? size : 1);
        if (!env)
                return 0;
        memcpy(env, data, size);
        json_object *payload = NULL;
        char err[256] = "";
        int r = payload_verify(env, size, key, NULL, 0, &payload, err, sizeof err);
        if (r == 0 || payload)
                abort();
        if (r != -EBADMSG && r != -EINVAL && r != -E2BIG && r != -ENOMEM)
                abort();
        free(env);
        return 0;
}
