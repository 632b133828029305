/* musterd's own certificates (DECISIONS.md D2): a private CA made at first start
 * and the server certificate it issues for the names musterd answers to,
 * renewed from the CA before it expires. ECDSA P-256 keys, SHA-256
 * signatures, PEM text; no file here (tls.c keeps them).
 *
 * Made with GnuTLS's x509 API rather than mbedTLS's writer: Debian 12 has
 * mbedTLS 2.28, whose writer cannot set subject alternative names (the
 * setter came in 3.x; the extension would be hand-encoded ASN.1 of our
 * own), while GnuTLS, which libmicrohttpd serves TLS with already, sets
 * DNS and IP names, key purposes and key ids, and checks a name against a
 * certificate as TLS clients do. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLS_CA_DAYS 3650           /* the private CA */
#define TLS_SERVER_DAYS 397        /* a server certificate */
#define TLS_RENEW_BEFORE_S (30 * 86400) /* renewed when it expires sooner */
#define TLS_MAX_NAMES 64
#define TLS_MAX_NAME 253

struct tls_pair {
        char *cert_pem;
        char *key_pem; /* PKCS#8, unencrypted */
};
void tls_pair_free(struct tls_pair *p);

/* A name is a DNS name (letters, digits, '-', '.', at most TLS_MAX_NAME,
 * labels of 1 to 63) or an IPv4/IPv6 literal. */
bool tls_name_ok(const char *name);

/* A new CA: key and self-signed certificate (CA:TRUE, keyCertSign,
 * cRLSign) named cn, valid from an hour before now for days. -EINVAL (bad
 * cn or days), -EIO with err from GnuTLS. */
int tlsgen_ca(const char *cn, int64_t now, int days, struct tls_pair *out, char *err, size_t errlen);

/* A server certificate for names[0..n) (each tls_name_ok; IP literals
 * become IP addresses, the rest DNS names; the first is the subject's CN),
 * TLS server auth only, issued by ca, valid from an hour before now for
 * days. -EINVAL for a bad name or none, -E2BIG past TLS_MAX_NAMES, -EIO. */
int tlsgen_server(const struct tls_pair *ca, const char *const *names, size_t n, int64_t now, int days,
                  struct tls_pair *out, char *err, size_t errlen);

/* What cert says: *not_after (seconds since the epoch); *valid: issued
 * by ca_cert (its signature verifies; ca_cert NULL: not checked) and
 * covering every one of names[0..n) as a TLS client checks a host name or
 * address. -EINVAL with err when cert (or ca_cert) is not a PEM
 * certificate. */
int tlsgen_check(const char *cert_pem, const char *ca_cert_pem, const char *const *names, size_t n,
                 int64_t *not_after, bool *valid, char *err, size_t errlen);

/* Whether key_pem is the private key of cert_pem. */
bool tlsgen_key_matches(const char *cert_pem, const char *key_pem);
