/* JSON Web Tokens (RFC 7519) in JWS compact form, ES256 only: the tokens
 * musterd issues to infra-envs and users and checks on every request. */
#pragma once
#include <json-c/json.h>
#include <stdint.h>

#include "crypto.h"

/* Longest token jwt_sign() produces and jwt_verify() looks at. */
#define JWT_MAX_LEN 8192

/* Sign claims (a JSON object) with k: header {"alg":"ES256","typ":"JWT"}.
 * *token is a new string. -EINVAL if claims is not an object, -ENOKEY for a
 * verify-only key, -E2BIG if the token would exceed JWT_MAX_LEN. */
int jwt_sign(const struct crypto_key *k, json_object *claims, char **token);

/* Check token against k at time now (seconds since the epoch) and hand out
 * its claims object (caller puts it). Only the header's "alg" is read and it
 * must be "ES256"; a "crit" header is refused. Returns 0, or
 *   -E2BIG        token longer than JWT_MAX_LEN;
 *   -EBADMSG      malformed, other alg, bad signature, claims not an object,
 *                 "exp"/"nbf" not a number;
 *   -EKEYEXPIRED  "exp" <= now;
 *   -EKEYREJECTED "nbf" > now (not valid yet).
 * Safe to call from many threads with one key. */
int jwt_verify(const struct crypto_key *k, const char *token, int64_t now, json_object **claims);
