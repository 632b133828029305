/* Base64url (RFC 4648 §5) without padding, as JWS compact serialisation
 * uses it. Decoding is strict: one encoding per byte string is accepted. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Characters needed to encode n bytes, excluding the NUL. */
size_t base64url_encoded_len(size_t n);

/* Encode len bytes into a new NUL-terminated string; 0 or -ENOMEM. */
int base64url_encode(const void *in, size_t len, char **out);

/* Decode len characters into buf (capacity cap); *outlen gets the byte count.
 * -EINVAL for padding, characters outside the alphabet, an impossible length
 * or non-zero unused bits; -ENOBUFS if the result does not fit in cap. */
int base64url_decode_buf(const char *in, size_t len, uint8_t *buf, size_t cap, size_t *outlen);

/* As base64url_decode_buf into a new buffer, which gets an extra NUL after
 * the *outlen bytes so text can be handed to parsers; 0, -EINVAL or -ENOMEM. */
int base64url_decode(const char *in, size_t len, uint8_t **out, size_t *outlen);
