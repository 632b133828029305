/* musterd's CA and server certificates with GnuTLS (tlsgen.h). */
#include "daemon/tlsgen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

static void crt_done(gnutls_x509_crt_t c) {
        if (c)
                gnutls_x509_crt_deinit(c);
}

static void key_done(gnutls_x509_privkey_t k) {
        if (k)
                gnutls_x509_privkey_deinit(k);
}

void tls_pair_free(struct tls_pair *p) {
        free(p->cert_pem);
        free(p->key_pem);
        *p = (struct tls_pair) { 0 };
}

/* An IP literal into addr (4 or 16 bytes): its length, 0 when not one. */
static size_t ip_of(const char *name, unsigned char addr[16]) {
        if (inet_pton(AF_INET, name, addr) == 1)
                return 4;
        if (inet_pton(AF_INET6, name, addr) == 1)
                return 16;
        return 0;
}

bool tls_name_ok(const char *name) {
        unsigned char addr[16];
        if (!name || !*name || strlen(name) > TLS_MAX_NAME)
                return false;
        if (ip_of(name, addr))
                return true;
        size_t label = 0;
        for (const char *p = name;; p++) {
                if (*p == '.' || !*p) {
                        if (label == 0 || label > 63 || p[-1] == '-')
                                return false;
                        if (!*p)
                                return true;
                        label = 0;
                        continue;
                }
                bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                          (*p == '-' && label > 0);
                if (!ok)
                        return false;
                label++;
        }
}

static int gnutls_fail(int g, const char *what, char *err, size_t errlen) {
        return errmsg(err, errlen, g == GNUTLS_E_MEMORY_ERROR ? -ENOMEM : -EIO, "%s: %s", what, gnutls_strerror(g));
}

static char *datum_str(gnutls_datum_t *d) {
        char *s = malloc(d->size + 1);
        if (s) {
                memcpy(s, d->data, d->size);
                s[d->size] = 0;
        }
        gnutls_free(d->data);
        d->data = NULL;
        return s;
}

/* A fresh key, and the certificate's common fields: version 3, a random
 * positive serial, the validity, the subject's CN, the key and its id. */
static int start_cert(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const char *cn, int64_t now, int days,
                      char *err, size_t errlen) {
        unsigned char serial[16], id[64];
        size_t id_len = sizeof id;
        int g = gnutls_x509_privkey_generate2(key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0,
                                              NULL, 0);
        if (g < 0)
                return gnutls_fail(g, "generating an ECDSA P-256 key", err, errlen);
        if ((g = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial)) < 0)
                return gnutls_fail(g, "a random serial", err, errlen);
        serial[0] = (unsigned char) ((serial[0] & 0x7f) | 0x01); /* positive, 16 bytes */
        if ((g = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
            (g = gnutls_x509_crt_set_serial(crt, serial, sizeof serial)) < 0 ||
            (g = gnutls_x509_crt_set_activation_time(crt, (time_t) (now - 3600))) < 0 ||
            (g = gnutls_x509_crt_set_expiration_time(crt, (time_t) (now + (int64_t) days * 86400))) < 0 ||
            (g = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned) strlen(cn))) < 0 ||
            (g = gnutls_x509_crt_set_key(crt, key)) < 0 ||
            (g = gnutls_x509_privkey_get_key_id(key, GNUTLS_KEYID_USE_SHA1, id, &id_len)) < 0 ||
            (g = gnutls_x509_crt_set_subject_key_id(crt, id, id_len)) < 0)
                return gnutls_fail(g, "filling in the certificate", err, errlen);
        return 0;
}

/* Sign crt with (issuer, ikey) and export both as PEM into out. */
static int finish_cert(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, gnutls_x509_crt_t issuer,
                       gnutls_x509_privkey_t ikey, struct tls_pair *out, char *err, size_t errlen) {
        gnutls_datum_t c = { 0 }, k = { 0 };
        int g = gnutls_x509_crt_sign2(crt, issuer, ikey, GNUTLS_DIG_SHA256, 0);
        if (g < 0)
                return gnutls_fail(g, "signing the certificate", err, errlen);
        if ((g = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &c)) < 0 ||
            (g = gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN, &k)) < 0) {
                gnutls_free(c.data);
                return gnutls_fail(g, "exporting the certificate", err, errlen);
        }
        *out = (struct tls_pair) { datum_str(&c), datum_str(&k) };
        if (!out->cert_pem || !out->key_pem) {
                tls_pair_free(out);
                return -ENOMEM;
        }
        return 0;
}

int tlsgen_ca(const char *cn, int64_t now, int days, struct tls_pair *out, char *err, size_t errlen) {
        gnutls_x509_crt_t crt = NULL;
        gnutls_x509_privkey_t key = NULL;
        int r, g;

        *out = (struct tls_pair) { 0 };
        if (!cn || !*cn || strlen(cn) > 64 || days < 1 || days > 36500)
                return errmsg(err, errlen, -EINVAL, "a CA needs a name of 1 to 64 bytes and 1 to 36500 days");
        if ((g = gnutls_x509_crt_init(&crt)) < 0 || (g = gnutls_x509_privkey_init(&key)) < 0)
                r = gnutls_fail(g, "starting a certificate", err, errlen);
        else if ((r = start_cert(crt, key, cn, now, days, err, errlen)) >= 0) {
                if ((g = gnutls_x509_crt_set_basic_constraints(crt, 1, -1)) < 0 ||
                    (g = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN)) < 0)
                        r = gnutls_fail(g, "the CA's extensions", err, errlen);
                else
                        r = finish_cert(crt, key, crt, key, out, err, errlen);
        }
        crt_done(crt);
        key_done(key);
        return r;
}

static int import_crt(const char *pem, gnutls_x509_crt_t *crt) {
        gnutls_datum_t d = { (unsigned char *) pem, pem ? (unsigned) strlen(pem) : 0 };
        if (!pem || gnutls_x509_crt_init(crt) < 0)
                return -EINVAL;
        if (gnutls_x509_crt_import(*crt, &d, GNUTLS_X509_FMT_PEM) < 0) {
                gnutls_x509_crt_deinit(*crt);
                *crt = NULL;
                return -EINVAL;
        }
        return 0;
}

static int import_key(const char *pem, gnutls_x509_privkey_t *key) {
        gnutls_datum_t d = { (unsigned char *) pem, pem ? (unsigned) strlen(pem) : 0 };
        if (!pem || gnutls_x509_privkey_init(key) < 0)
                return -EINVAL;
        if (gnutls_x509_privkey_import2(*key, &d, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN) < 0) {
                gnutls_x509_privkey_deinit(*key);
                *key = NULL;
                return -EINVAL;
        }
        return 0;
}

/* The server's names into crt: IP literals as addresses, the rest as DNS
 * names. */
static int add_names(gnutls_x509_crt_t crt, const char *const *names, size_t n, char *err, size_t errlen) {
        for (size_t i = 0; i < n; i++) {
                unsigned char addr[16];
                size_t len = ip_of(names[i], addr);
                int g = len ? gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, addr, (unsigned) len,
                                                                   GNUTLS_FSAN_APPEND)
                            : gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, names[i],
                                                                   (unsigned) strlen(names[i]), GNUTLS_FSAN_APPEND);
                if (g < 0)
                        return gnutls_fail(g, "a subject alternative name", err, errlen);
        }
        return 0;
}

int tlsgen_server(const struct tls_pair *ca, const char *const *names, size_t n, int64_t now, int days,
                  struct tls_pair *out, char *err, size_t errlen) {
        gnutls_x509_crt_t crt = NULL, ca_crt = NULL;
        gnutls_x509_privkey_t key = NULL, ca_key = NULL;
        unsigned char id[64];
        size_t id_len = sizeof id;
        int r = 0, g;

        *out = (struct tls_pair) { 0 };
        if (n == 0 || days < 1 || days > 36500)
                return errmsg(err, errlen, -EINVAL, "a server certificate needs a name and 1 to 36500 days");
        if (n > TLS_MAX_NAMES)
                return errmsg(err, errlen, -E2BIG, "a server certificate carries at most %d names", TLS_MAX_NAMES);
        for (size_t i = 0; i < n; i++)
                if (!tls_name_ok(names[i]))
                        return errmsg(err, errlen, -EINVAL, "\"%.80s\" is neither a DNS name nor an IP address",
                                      names[i] ? names[i] : "");
        if (import_crt(ca->cert_pem, &ca_crt) < 0 || import_key(ca->key_pem, &ca_key) < 0)
                r = errmsg(err, errlen, -EINVAL, "the CA's certificate or key is not PEM");
        else if ((g = gnutls_x509_crt_init(&crt)) < 0 || (g = gnutls_x509_privkey_init(&key)) < 0)
                r = gnutls_fail(g, "starting a certificate", err, errlen);
        else if ((r = start_cert(crt, key, names[0], now, days, err, errlen)) >= 0 &&
                 (r = add_names(crt, names, n, err, errlen)) >= 0) {
                if ((g = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
                    (g = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
                    (g = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
                    (g = gnutls_x509_crt_get_subject_key_id(ca_crt, id, &id_len, NULL)) < 0 ||
                    (g = gnutls_x509_crt_set_authority_key_id(crt, id, id_len)) < 0)
                        r = gnutls_fail(g, "the server certificate's extensions", err, errlen);
                else
                        r = finish_cert(crt, key, ca_crt, ca_key, out, err, errlen);
        }
        crt_done(crt);
        key_done(key);
        crt_done(ca_crt);
        key_done(ca_key);
        return r;
}

static bool covers(gnutls_x509_crt_t crt, const char *name) {
        unsigned char addr[16];
        size_t len = ip_of(name, addr);
        return len ? gnutls_x509_crt_check_ip(crt, addr, (unsigned) len, 0) != 0
                   : gnutls_x509_crt_check_hostname2(crt, name, 0) != 0;
}

int tlsgen_check(const char *cert_pem, const char *ca_cert_pem, const char *const *names, size_t n,
                 int64_t *not_after, bool *valid, char *err, size_t errlen) {
        gnutls_x509_crt_t crt = NULL, ca = NULL;
        *valid = false;
        *not_after = 0;
        if (import_crt(cert_pem, &crt) < 0)
                return errmsg(err, errlen, -EINVAL, "the certificate is not PEM");
        if (ca_cert_pem && import_crt(ca_cert_pem, &ca) < 0) {
                gnutls_x509_crt_deinit(crt);
                return errmsg(err, errlen, -EINVAL, "the CA certificate is not PEM");
        }
        *not_after = (int64_t) gnutls_x509_crt_get_expiration_time(crt);
        unsigned status = 0;
        bool ok = !ca || (gnutls_x509_crt_verify(crt, &ca, 1,
                                                 GNUTLS_VERIFY_DISABLE_TIME_CHECKS |
                                                         GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS,
                                                 &status) >= 0 &&
                          status == 0);
        for (size_t i = 0; ok && i < n; i++)
                ok = covers(crt, names[i]);
        *valid = ok;
        crt_done(crt);
        crt_done(ca);
        return 0;
}

bool tlsgen_key_matches(const char *cert_pem, const char *key_pem) {
        gnutls_x509_crt_t crt = NULL;
        gnutls_x509_privkey_t key = NULL;
        unsigned char a[64], b[64];
        size_t la = sizeof a, lb = sizeof b;
        bool same = false;
        if (import_crt(cert_pem, &crt) == 0 && import_key(key_pem, &key) == 0 &&
            gnutls_x509_crt_get_key_id(crt, 0, a, &la) >= 0 && gnutls_x509_privkey_get_key_id(key, 0, b, &lb) >= 0)
                same = la == lb && memcmp(a, b, la) == 0;
        crt_done(crt);
        key_done(key);
        return same;
}
