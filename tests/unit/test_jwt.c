/* jwt: ES256 sign/verify, refusal of everything but an intact ES256 token
 * from our key, time claims, size limit, and RFC 7515 A.3. */
#include <criterion/criterion.h>
#include <errno.h>
#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/md.h>
#include <mbedtls/pk.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64url.h"
#include "crypto.h"
#include "jwt.h"

#define NOW INT64_C(1700000000)

static struct crypto_key *key, *other;

static void setup(void) {
        cr_assert_eq(crypto_key_generate(&key), 0);
        cr_assert_eq(crypto_key_generate(&other), 0);
}

static void teardown(void) {
        crypto_key_free(key);
        crypto_key_free(other);
}

TestSuite(jwt, .init = setup, .fini = teardown);

static char *b64(const char *s) {
        char *out = NULL;
        cr_assert_eq(base64url_encode(s, strlen(s), &out), 0);
        return out;
}

/* A compact JWS over arbitrary header and payload text, signed with k's
 * ES256 key, for tokens jwt_sign() would never make. */
static char *forge(const struct crypto_key *k, const char *header, const char *payload) {
        char *h = b64(header), *p = b64(payload), *input = NULL, *s = NULL, *tok = NULL;
        cr_assert_geq(asprintf(&input, "%s.%s", h, p), 0);
        uint8_t d[32], sig[64];
        cr_assert_eq(crypto_sha256(input, strlen(input), d), 0);
        cr_assert_eq(crypto_sign_digest(k, d, sig), 0);
        cr_assert_eq(base64url_encode(sig, sizeof sig, &s), 0);
        cr_assert_geq(asprintf(&tok, "%s.%s", input, s), 0);
        free(h);
        free(p);
        free(input);
        free(s);
        return tok;
}

static char *sign_claims(const char *json) {
        json_object *c = json_tokener_parse(json);
        cr_assert_not_null(c);
        char *tok = NULL;
        cr_assert_eq(jwt_sign(key, c, &tok), 0);
        json_object_put(c);
        return tok;
}

static int verify(const struct crypto_key *k, const char *tok, int64_t now) {
        json_object *c = NULL;
        int r = jwt_verify(k, tok, now, &c);
        if (r == 0)
                cr_assert_not_null(c);
        else
                cr_assert_null(c);
        json_object_put(c);
        return r;
}

Test(jwt, round_trip) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "infra_env_id", json_object_new_string("0b7c2a8e-54a3-4c4f-9d0a-7f0e0cbb5a11"));
        json_object_object_add(c, "gen", json_object_new_int(3));
        json_object_object_add(c, "url", json_object_new_string("https://x/y"));
        char *tok = NULL;
        cr_assert_eq(jwt_sign(key, c, &tok), 0);

        /* Three base64url parts; the header is exactly ours. */
        const char *d1 = strchr(tok, '.'), *d2 = strchr(d1 + 1, '.');
        cr_assert_not_null(d2);
        cr_assert_null(strchr(d2 + 1, '.'));
        cr_assert_eq(strlen(d2 + 1), 86, "64 bytes unpadded");
        uint8_t *hdr = NULL;
        size_t n;
        cr_assert_eq(base64url_decode(tok, (size_t) (d1 - tok), &hdr, &n), 0);
        cr_assert_str_eq((char *) hdr, "{\"alg\":\"ES256\",\"typ\":\"JWT\"}");
        free(hdr);

        json_object *back = NULL;
        cr_assert_eq(jwt_verify(key, tok, NOW, &back), 0);
        cr_assert(json_object_equal(back, c));

        /* A verify-only key from the PEM accepts it too. */
        char *pem = NULL;
        struct crypto_key *pub = NULL;
        cr_assert_eq(crypto_key_public_pem(key, &pem), 0);
        cr_assert_eq(crypto_pubkey_load_pem(pem, &pub), 0);
        cr_assert_eq(verify(pub, tok, NOW), 0);
        char *t2 = NULL;
        cr_assert_eq(jwt_sign(pub, c, &t2), -ENOKEY);

        crypto_key_free(pub);
        free(pem);
        json_object_put(back);
        json_object_put(c);
        free(tok);
}

Test(jwt, sign_rejects_non_objects) {
        char *tok = NULL;
        json_object *a = json_object_new_array();
        cr_assert_eq(jwt_sign(key, a, &tok), -EINVAL);
        cr_assert_eq(jwt_sign(key, NULL, &tok), -EINVAL);
        json_object_put(a);
        cr_assert_null(tok);
}

Test(jwt, other_key_refused) {
        char *tok = sign_claims("{\"sub\":\"a\"}");
        cr_assert_eq(verify(other, tok, NOW), -EBADMSG);
        free(tok);
}

Test(jwt, every_bit_flip_refused, .timeout = 300) {
        char *tok = sign_claims("{\"infra_env_id\":\"e1\",\"gen\":1}");
        size_t len = strlen(tok);
        char *copy = strdup(tok);
        for (size_t i = 0; i < len; i++) {
                for (int bit = 0; bit < 8; bit++) {
                        copy[i] = (char) (tok[i] ^ (1 << bit));
                        cr_assert_neq(verify(key, copy, NOW), 0, "byte %zu bit %d accepted", i, bit);
                }
                copy[i] = tok[i];
        }
        cr_assert_eq(verify(key, copy, NOW), 0);
        free(copy);
        free(tok);
}

Test(jwt, every_truncation_refused) {
        char *tok = sign_claims("{\"sub\":\"x\"}");
        size_t len = strlen(tok);
        for (size_t n = 0; n < len; n++) {
                char *cut = strndup(tok, n);
                cr_assert_eq(verify(key, cut, NOW), -EBADMSG, "length %zu", n);
                free(cut);
        }
        free(tok);
}

Test(jwt, structural_junk_refused) {
        char *tok = sign_claims("{\"sub\":\"x\"}");
        char *t = NULL;
        const char *suffixes[] = { ".", ".x", "=", "==", " ", "\n", "A" };
        for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
                cr_assert_geq(asprintf(&t, "%s%s", tok, suffixes[i]), 0);
                cr_assert_eq(verify(key, t, NOW), -EBADMSG, "suffix '%s'", suffixes[i]);
                free(t);
        }
        cr_assert_geq(asprintf(&t, " %s", tok), 0);
        cr_assert_eq(verify(key, t, NOW), -EBADMSG);
        free(t);
        const char *junk[] = { "", ".", "..", "...", "a.b.c", "e30.e30.", ".e30.AAAA", "e30..AAAA" };
        for (size_t i = 0; i < sizeof junk / sizeof *junk; i++)
                cr_assert_eq(verify(key, junk[i], NOW), -EBADMSG, "'%s'", junk[i]);
        free(tok);
}

Test(jwt, only_es256) {
        const char *payload = "{\"sub\":\"x\"}";
        /* Properly signed with our key, but the header names another alg or
         * is odd: each is refused on the header alone. */
        const char *headers[] = {
                "{\"alg\":\"none\"}",
                "{\"alg\":\"HS256\",\"typ\":\"JWT\"}",
                "{\"alg\":\"es256\"}",
                "{\"alg\":\"ES384\"}",
                "{\"alg\":\"ES256 \"}",
                "{\"alg\":\"ES256\\u0000\"}",
                "{\"alg\":[\"ES256\"]}",
                "{\"typ\":\"JWT\"}",
                "{\"alg\":\"ES256\",\"crit\":[\"exp\"]}",
                "[\"ES256\"]",
                "\"ES256\"",
                "{\"alg\":\"ES256\"",
                "{'alg':'ES256'}",
                "{\"alg\":\"ES256\"} x",
        };
        for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
                char *t = forge(key, headers[i], payload);
                cr_assert_eq(verify(key, t, NOW), -EBADMSG, "header %s", headers[i]);
                free(t);
        }
        /* A minimal ES256 header and trailing whitespace are fine. */
        char *t = forge(key, "{\"alg\":\"ES256\"}", payload);
        cr_assert_eq(verify(key, t, NOW), 0);
        free(t);
        t = forge(key, "{\"alg\":\"ES256\",\"kid\":\"whatever\"}\r\n", payload);
        cr_assert_eq(verify(key, t, NOW), 0);
        free(t);
}

Test(jwt, alg_none_and_hs256_forgeries) {
        char *h = b64("{\"alg\":\"none\",\"typ\":\"JWT\"}"), *p = b64("{\"sub\":\"admin\"}");
        char *t = NULL;
        cr_assert_geq(asprintf(&t, "%s.%s.", h, p), 0);
        cr_assert_eq(verify(key, t, NOW), -EBADMSG, "unsigned");
        free(t);

        /* Our real signature moved under an alg=none header. */
        char *good = sign_claims("{\"sub\":\"admin\"}");
        cr_assert_geq(asprintf(&t, "%s%s", h, strchr(good, '.')), 0);
        cr_assert_eq(verify(key, t, NOW), -EBADMSG);
        free(t);
        free(h);

        /* HS256 keyed with our public key PEM (the classic confusion). */
        char *pem = NULL;
        cr_assert_eq(crypto_key_public_pem(key, &pem), 0);
        h = b64("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
        char *input = NULL, *s = NULL;
        cr_assert_geq(asprintf(&input, "%s.%s", h, p), 0);
        uint8_t mac[32];
        cr_assert_eq(mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), (const uint8_t *) pem,
                                     strlen(pem), (const uint8_t *) input, strlen(input), mac),
                     0);
        cr_assert_eq(base64url_encode(mac, sizeof mac, &s), 0);
        cr_assert_geq(asprintf(&t, "%s.%s", input, s), 0);
        cr_assert_eq(verify(key, t, NOW), -EBADMSG);

        free(t);
        free(s);
        free(input);
        free(h);
        free(p);
        free(pem);
        free(good);
}

Test(jwt, claims_must_be_an_object) {
        const char *payloads[] = { "[]", "null", "1", "\"s\"", "{\"a\":1", "{\"a\":1}x", "{\"a\":1}{}", "", "{,}" };
        for (size_t i = 0; i < sizeof payloads / sizeof *payloads; i++) {
                char *t = forge(key, "{\"alg\":\"ES256\"}", payloads[i]);
                cr_assert_eq(verify(key, t, NOW), -EBADMSG, "payload '%s'", payloads[i]);
                free(t);
        }
}

Test(jwt, time_claims) {
        struct {
                const char *claims;
                int expect;
        } cases[] = {
                { "{\"exp\":1700000001}", 0 },
                { "{\"exp\":1700000000}", -EKEYEXPIRED },
                { "{\"exp\":1699999999}", -EKEYEXPIRED },
                { "{\"exp\":0}", -EKEYEXPIRED },
                { "{\"exp\":-5}", -EKEYEXPIRED },
                { "{\"exp\":1700000000.5}", 0 },
                { "{\"exp\":1699999999.5}", -EKEYEXPIRED },
                { "{\"exp\":99999999999999999999}", 0 },
                { "{\"nbf\":1700000000}", 0 },
                { "{\"nbf\":1699999999}", 0 },
                { "{\"nbf\":1700000001}", -EKEYREJECTED },
                { "{\"nbf\":1700000000.25}", -EKEYREJECTED },
                { "{\"nbf\":1699999000,\"exp\":1700001000}", 0 },
                { "{\"nbf\":1700000500,\"exp\":1700001000}", -EKEYREJECTED },
                { "{\"exp\":\"1800000000\"}", -EBADMSG },
                { "{\"exp\":null}", -EBADMSG },
                { "{\"nbf\":true}", -EBADMSG },
                { "{\"exp\":{}}", -EBADMSG },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                char *t = forge(key, "{\"alg\":\"ES256\",\"typ\":\"JWT\"}", cases[i].claims);
                cr_assert_eq(verify(key, t, NOW), cases[i].expect, "%s", cases[i].claims);
                free(t);
        }
}

Test(jwt, size_limit) {
        /* A token jwt_sign would not make is refused unread. */
        char *big = malloc(JWT_MAX_LEN + 2);
        memset(big, 'A', JWT_MAX_LEN + 1);
        big[JWT_MAX_LEN + 1] = '\0';
        cr_assert_eq(verify(key, big, NOW), -E2BIG);
        big[JWT_MAX_LEN] = '\0';
        cr_assert_eq(verify(key, big, NOW), -EBADMSG);
        free(big);

        /* Claims that would make a longer token are refused at signing. */
        char *filler = malloc(JWT_MAX_LEN);
        memset(filler, 'x', JWT_MAX_LEN - 1);
        filler[JWT_MAX_LEN - 1] = '\0';
        json_object *c = json_object_new_object();
        json_object_object_add(c, "pad", json_object_new_string(filler));
        char *tok = NULL;
        cr_assert_eq(jwt_sign(key, c, &tok), -E2BIG);
        cr_assert_null(tok);

        /* The largest token that fits verifies. */
        size_t lo = 0, hi = JWT_MAX_LEN;
        while (lo + 1 < hi) {
                size_t mid = (lo + hi) / 2;
                filler[mid] = '\0';
                json_object_object_add(c, "pad", json_object_new_string(filler));
                filler[mid] = 'x';
                if (jwt_sign(key, c, &tok) == 0) {
                        lo = mid;
                        free(tok);
                        tok = NULL;
                } else
                        hi = mid;
        }
        filler[lo] = '\0';
        json_object_object_add(c, "pad", json_object_new_string(filler));
        cr_assert_eq(jwt_sign(key, c, &tok), 0);
        cr_assert_leq(strlen(tok), JWT_MAX_LEN);
        cr_assert_geq(strlen(tok), JWT_MAX_LEN - 3);
        cr_assert_eq(verify(key, tok, NOW), 0);
        free(tok);
        json_object_put(c);
        free(filler);
}

/* RFC 7515 Appendix A.3: JWK x/y of the example key and its compact JWS. */
static const char a3_x[] = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
static const char a3_y[] = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
static const char a3_token[] =
        "eyJhbGciOiJFUzI1NiJ9"
        "."
        "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        "."
        "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";

/* Public key PEM from JWK coordinates, through mbedTLS directly. */
static char *pem_from_xy(const char *x64, const char *y64) {
        uint8_t point[65];
        size_t n;
        point[0] = 0x04;
        cr_assert_eq(base64url_decode_buf(x64, strlen(x64), point + 1, 32, &n), 0);
        cr_assert_eq(n, 32);
        cr_assert_eq(base64url_decode_buf(y64, strlen(y64), point + 33, 32, &n), 0);
        cr_assert_eq(n, 32);

        mbedtls_pk_context pk;
        mbedtls_pk_init(&pk);
        cr_assert_eq(mbedtls_pk_setup(&pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)), 0);
        mbedtls_ecp_keypair *ec = mbedtls_pk_ec(pk);
        cr_assert_eq(mbedtls_ecp_group_load(&ec->grp, MBEDTLS_ECP_DP_SECP256R1), 0);
        cr_assert_eq(mbedtls_ecp_point_read_binary(&ec->grp, &ec->Q, point, sizeof point), 0);
        unsigned char buf[512];
        cr_assert_eq(mbedtls_pk_write_pubkey_pem(&pk, buf, sizeof buf), 0);
        mbedtls_pk_free(&pk);
        return strdup((char *) buf);
}

/* The token with its signature's S replaced by n - S (the other valid
 * spelling of the same ECDSA signature). */
static char *twin_token(const char *tok) {
        static const char n_hex[] = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
        const char *dot = strrchr(tok, '.');
        uint8_t sig[64];
        size_t n;
        cr_assert_eq(base64url_decode_buf(dot + 1, strlen(dot + 1), sig, sizeof sig, &n), 0);
        cr_assert_eq(n, 64);
        mbedtls_mpi order, v;
        mbedtls_mpi_init(&order);
        mbedtls_mpi_init(&v);
        cr_assert_eq(mbedtls_mpi_read_string(&order, 16, n_hex), 0);
        cr_assert_eq(mbedtls_mpi_read_binary(&v, sig + 32, 32), 0);
        cr_assert_eq(mbedtls_mpi_sub_mpi(&v, &order, &v), 0);
        cr_assert_eq(mbedtls_mpi_write_binary(&v, sig + 32, 32), 0);
        mbedtls_mpi_free(&v);
        mbedtls_mpi_free(&order);
        char *s64 = NULL, *out = NULL;
        cr_assert_eq(base64url_encode(sig, sizeof sig, &s64), 0);
        cr_assert_geq(asprintf(&out, "%.*s.%s", (int) (dot - tok), tok, s64), 0);
        free(s64);
        return out;
}

/* RFC 7515 A.3 as published has a high S: refused (ECDSA malleability,
 * issue 12 item 12). Its low-S twin is the same signature and verifies. */
Test(jwt, rfc7515_a3) {
        char *pem = pem_from_xy(a3_x, a3_y);
        struct crypto_key *k = NULL;
        cr_assert_eq(crypto_pubkey_load_pem(pem, &k), 0);

        json_object *c = NULL;
        cr_assert_eq(jwt_verify(k, a3_token, 1300819379, &c), -EBADMSG, "high S");
        cr_assert_null(c);
        char *low = twin_token(a3_token);
        cr_assert_eq(jwt_verify(k, low, 1300819379, &c), 0);
        json_object *v;
        cr_assert(json_object_object_get_ex(c, "iss", &v));
        cr_assert_str_eq(json_object_get_string(v), "joe");
        cr_assert(json_object_object_get_ex(c, "exp", &v));
        cr_assert_eq(json_object_get_int64(v), 1300819380);
        cr_assert(json_object_object_get_ex(c, "http://example.com/is_root", &v));
        cr_assert(json_object_get_boolean(v));
        json_object_put(c);

        /* Its exp is in 2011, after the signature checked out. */
        cr_assert_eq(verify(k, low, 1300819380), -EKEYEXPIRED);
        cr_assert_eq(verify(k, low, NOW), -EKEYEXPIRED);
        cr_assert_eq(verify(key, low, 1300819379), -EBADMSG, "not our key");

        /* Any changed signature byte breaks it. */
        char *t = strdup(low);
        char *last = t + strlen(t) - 2;
        *last = *last == 'U' ? 'V' : 'U';
        cr_assert_eq(verify(k, t, 1300819379), -EBADMSG);
        free(t);

        free(low);
        crypto_key_free(k);
        free(pem);
}

/* Our tokens are low-S; the high-S twin of a valid one is refused. */
Test(jwt, high_s_twin_of_our_token_is_refused) {
        json_object *claims = json_tokener_parse("{\"sub\":\"x\"}");
        for (int i = 0; i < 20; i++) {
                char *tok = NULL;
                json_object_object_add(claims, "n", json_object_new_int(i));
                cr_assert_eq(jwt_sign(key, claims, &tok), 0);
                cr_assert_eq(verify(key, tok, NOW), 0);
                char *high = twin_token(tok);
                cr_assert_eq(verify(key, high, NOW), -EBADMSG, "token %d", i);
                free(high);
                free(tok);
        }
        json_object_put(claims);
}

struct vworker {
        const char *tok;
        int failures;
};

static void *verify_many(void *arg) {
        struct vworker *w = arg;
        for (int i = 0; i < 50; i++) {
                json_object *c = NULL;
                if (jwt_verify(key, w->tok, NOW, &c) != 0)
                        w->failures++;
                json_object_put(c);
                char *mine = NULL;
                json_object *claims = json_object_new_object();
                json_object_object_add(claims, "i", json_object_new_int(i));
                if (jwt_sign(key, claims, &mine) != 0 || jwt_verify(key, mine, NOW, &c) != 0)
                        w->failures++;
                json_object_put(c);
                json_object_put(claims);
                free(mine);
        }
        return NULL;
}

Test(jwt, concurrent_verify_and_sign, .timeout = 120) {
        char *tok = sign_claims("{\"infra_env_id\":\"e\",\"gen\":2}");
        enum { N = 8 };
        pthread_t t[N];
        struct vworker w[N];
        for (int i = 0; i < N; i++) {
                w[i] = (struct vworker){ .tok = tok };
                cr_assert_eq(pthread_create(&t[i], NULL, verify_many, &w[i]), 0);
        }
        for (int i = 0; i < N; i++) {
                pthread_join(t[i], NULL);
                cr_assert_eq(w[i].failures, 0);
        }
        free(tok);
}
