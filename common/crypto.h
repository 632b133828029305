/* Crypto wrappers over mbedTLS: the coordinator's ECDSA P-256 key, SHA-256,
 * and raw r||s digest signatures (the form JWS ES256 and payloads use). */
#pragma once
#include <mbedtls/sha256.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRYPTO_SHA256_LEN 32
#define CRYPTO_SIG_LEN 64 /* r || s, 32 bytes each, big endian */

/* An EC P-256 key: a private key (signs and verifies) or a public key only
 * (verifies). After creation a key is never modified, so any number of
 * threads may use one key at once; signing draws blinding bytes from a
 * per-key DRBG guarded by a mutex inside the key. */
struct crypto_key;

/* Load the PEM private key at path (SEC1 or PKCS#8, unencrypted, P-256).
 * If path does not exist, generate a key and write it there atomically with
 * mode 0600, never replacing a file that appeared meanwhile.
 * -EINVAL if the file exists but is not a P-256 private key (the file is left
 * alone); other -errno from the file system. */
int crypto_key_load_or_create(const char *path, struct crypto_key **out);

/* Generate a fresh in-memory key pair. */
int crypto_key_generate(struct crypto_key **out);

/* Parse a PEM P-256 public key ("BEGIN PUBLIC KEY") into a verify-only key;
 * -EINVAL if it is anything else. */
int crypto_pubkey_load_pem(const char *pem, struct crypto_key **out);

/* The key's public half as a NUL-terminated PEM "PUBLIC KEY" string. */
int crypto_key_public_pem(const struct crypto_key *k, char **pem);

/* True if k holds a private key. */
bool crypto_key_has_private(const struct crypto_key *k);

void crypto_key_free(struct crypto_key *k);

/* Deterministic ECDSA (RFC 6979) over a SHA-256 digest; sig gets r || s
 * with s <= n/2 (low S, as Bitcoin's BIP 62 and libsecp256k1 require).
 * -ENOKEY for a verify-only key. Safe to call from many threads. */
int crypto_sign_digest(const struct crypto_key *k, const uint8_t digest[CRYPTO_SHA256_LEN],
                       uint8_t sig[CRYPTO_SIG_LEN]);

/* Turn sig (r || s) into its low-S twin (r, n - s) when s > n/2; no key is
 * needed. 1 if it was changed, 0 if it was low already, -errno. For
 * signatures made before signing was low-S. */
int crypto_sig_low_s(uint8_t sig[CRYPTO_SIG_LEN]);

/* 0 if sig (r || s) is k's signature of digest, -EBADMSG if not. A high-S
 * signature (s > n/2) is refused even when it is mathematically valid:
 * ECDSA is malleable otherwise (anyone can turn s into n - s). */
int crypto_verify_digest(const struct crypto_key *k, const uint8_t digest[CRYPTO_SHA256_LEN],
                         const uint8_t sig[CRYPTO_SIG_LEN]);

int crypto_sha256(const void *data, size_t len, uint8_t out[CRYPTO_SHA256_LEN]);

/* Streaming SHA-256. final() releases the context; call free() instead to
 * abandon a stream (free() after final() is harmless). */
struct crypto_sha256_ctx {
        mbedtls_sha256_context c;
};
int crypto_sha256_init(struct crypto_sha256_ctx *ctx);
int crypto_sha256_update(struct crypto_sha256_ctx *ctx, const void *data, size_t len);
int crypto_sha256_final(struct crypto_sha256_ctx *ctx, uint8_t out[CRYPTO_SHA256_LEN]);
void crypto_sha256_free(struct crypto_sha256_ctx *ctx);

/* Lower-case hex of len bytes; out needs 2 * len + 1 characters. */
void crypto_hex(const uint8_t *in, size_t len, char *out);
