/* libFuzzer target for token checking (common/jwt.c): any string given as a
 * bearer token is refused with one of the documented codes, unless it is a
 * token the key really signed. The key is made once; the inputs are tokens
 * as a client would send them (the header, claims and signature parts are
 * base64url-decoded and JSON-parsed by the code under test). */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "jwt.h"

static struct crypto_key *key;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!key && crypto_key_generate(&key) < 0)
                abort();
        char *tok = malloc(size + 1);
        if (!tok)
                return 0;
        memcpy(tok, data, size);
        tok[size] = '\0';
        json_object *claims = NULL;
        int r = jwt_verify(key, tok, 1700000000, &claims);
        /* A fresh key's signature cannot be forged by the fuzzer. */
        if (r == 0)
                abort();
        if (r != -E2BIG && r != -EBADMSG && r != -EKEYEXPIRED && r != -EKEYREJECTED && r != -ENOMEM &&
            r != -EINVAL)
                abort();
        if (claims)
                abort();
        free(tok);
        return 0;
}
