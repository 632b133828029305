/* ES256 JWTs. Verification reads only "alg" from the header, checks the
 * signature before it parses the claims, and accepts one spelling of each
 * part (strict base64url, exactly three parts, 64-byte signature). */
#include "jwt.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base64url.h"
#include "cleanup.h"
#include "json-cleanup.h"

static const char jwt_header[] = "{\"alg\":\"ES256\",\"typ\":\"JWT\"}";

int jwt_sign(const struct crypto_key *k, json_object *claims, char **token) {
        if (!k || !token || !json_object_is_type(claims, json_type_object))
                return -EINVAL;

        _cleanup_free_ char *h = NULL;
        _cleanup_free_ char *p = NULL;
        _cleanup_free_ char *s = NULL;
        int r = base64url_encode(jwt_header, sizeof jwt_header - 1, &h);
        if (r < 0)
                return r;
        size_t plen;
        const char *json = json_object_to_json_string_length(
                claims, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &plen);
        if (!json)
                return -ENOMEM;
        if (plen > JWT_MAX_LEN)
                return -E2BIG;
        r = base64url_encode(json, plen, &p);
        if (r < 0)
                return r;

        size_t hl = strlen(h), pl = strlen(p), sl = base64url_encoded_len(CRYPTO_SIG_LEN);
        size_t total = hl + 1 + pl + 1 + sl;
        if (total > JWT_MAX_LEN)
                return -E2BIG;

        _cleanup_free_ char *t = malloc(total + 1);
        if (!t)
                return -ENOMEM;
        memcpy(t, h, hl);
        t[hl] = '.';
        memcpy(t + hl + 1, p, pl);

        uint8_t digest[CRYPTO_SHA256_LEN], sig[CRYPTO_SIG_LEN];
        r = crypto_sha256(t, hl + 1 + pl, digest);
        if (r < 0)
                return r;
        r = crypto_sign_digest(k, digest, sig);
        if (r < 0)
                return r;
        r = base64url_encode(sig, sizeof sig, &s);
        if (r < 0)
                return r;
        t[hl + 1 + pl] = '.';
        memcpy(t + hl + 1 + pl + 1, s, sl + 1);
        *token = TAKE_PTR(t);
        return 0;
}

/* Decode one base64url part and parse it as a JSON object, strictly: no
 * embedded NUL, nothing but whitespace after the object. */
static int decode_object(const char *part, size_t len, json_object **out) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n;
        if (base64url_decode(part, len, &buf, &n) < 0)
                return -EBADMSG;
        if (n == 0 || memchr(buf, '\0', n))
                return -EBADMSG;

        _cleanup_json_tokener_ json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        _cleanup_json_ json_object *o = json_tokener_parse_ex(tok, (const char *) buf, (int) n);
        if (!o || json_tokener_get_error(tok) != json_tokener_success)
                return -EBADMSG;
        for (size_t i = json_tokener_get_parse_end(tok); i < n; i++)
                if (!strchr(" \t\r\n", buf[i]))
                        return -EBADMSG;
        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;
        *out = TAKE_PTR(o);
        return 0;
}

/* Compare NumericDate claim `name` with now: *cmp gets -1, 0 or 1 for
 * claim < now, == now, > now; *present false if the claim is absent. */
static int claim_vs_now(json_object *claims, const char *name, int64_t now, bool *present, int *cmp) {
        json_object *v;
        *present = json_object_object_get_ex(claims, name, &v);
        if (!*present)
                return 0;
        if (json_object_is_type(v, json_type_int)) {
                int64_t t = json_object_get_int64(v);
                *cmp = t < now ? -1 : t > now;
                return 0;
        }
        if (json_object_is_type(v, json_type_double)) {
                double t = json_object_get_double(v);
                if (!isfinite(t))
                        return -EBADMSG;
                *cmp = t < (double) now ? -1 : t > (double) now;
                return 0;
        }
        return -EBADMSG;
}

int jwt_verify(const struct crypto_key *k, const char *token, int64_t now, json_object **claims) {
        if (!k || !token || !claims)
                return -EINVAL;
        size_t len = strnlen(token, JWT_MAX_LEN + 1);
        if (len > JWT_MAX_LEN)
                return -E2BIG;

        const char *d1 = memchr(token, '.', len);
        if (!d1)
                return -EBADMSG;
        const char *d2 = memchr(d1 + 1, '.', len - (size_t) (d1 + 1 - token));
        if (!d2)
                return -EBADMSG;
        const char *sp = d2 + 1, *end = token + len;
        if (memchr(sp, '.', (size_t) (end - sp)))
                return -EBADMSG; /* JWE or junk */
        size_t hl = (size_t) (d1 - token), pl = (size_t) (d2 - d1 - 1), sl = (size_t) (end - sp);
        if (hl == 0 || pl == 0 || sl == 0)
                return -EBADMSG;

        /* The header is unauthenticated: take "alg" from it and nothing else. */
        _cleanup_json_ json_object *hdr = NULL;
        int r = decode_object(token, hl, &hdr);
        if (r < 0)
                return r;
        json_object *alg;
        if (!json_object_object_get_ex(hdr, "alg", &alg) || !json_object_is_type(alg, json_type_string) ||
            strcmp(json_object_get_string(alg), "ES256") != 0 || json_object_get_string_len(alg) != 5)
                return -EBADMSG;
        /* RFC 7515 §4.1.11: extensions we do not understand must be refused. */
        if (json_object_object_get_ex(hdr, "crit", NULL))
                return -EBADMSG;

        uint8_t sig[CRYPTO_SIG_LEN], digest[CRYPTO_SHA256_LEN];
        size_t n;
        if (base64url_decode_buf(sp, sl, sig, sizeof sig, &n) < 0 || n != sizeof sig)
                return -EBADMSG;
        r = crypto_sha256(token, (size_t) (d2 - token), digest);
        if (r < 0)
                return r;
        r = crypto_verify_digest(k, digest, sig);
        if (r < 0)
                return r;

        _cleanup_json_ json_object *c = NULL;
        r = decode_object(d1 + 1, pl, &c);
        if (r < 0)
                return r;

        bool present;
        int cmp;
        r = claim_vs_now(c, "exp", now, &present, &cmp);
        if (r < 0)
                return r;
        if (present && cmp <= 0)
                return -EKEYEXPIRED;
        r = claim_vs_now(c, "nbf", now, &present, &cmp);
        if (r < 0)
                return r;
        if (present && cmp > 0)
                return -EKEYREJECTED;

        *claims = TAKE_PTR(c);
        return 0;
}
