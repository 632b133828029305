/* musterd's CA and server certificates (coordinator/daemon/tlsgen.h,
 * issue 18), without a socket: a CA signs a server certificate for DNS
 * names and IP addresses that a client's checks accept, and no other name;
 * another CA's certificate does not verify; the key goes with its
 * certificate; expiry is read back; bad names are refused. GnuTLS's own
 * checks are the judge. */
#include <criterion/criterion.h>
#include <errno.h>
#include <gnutls/x509.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/tlsgen.h"

#define NOW ((int64_t) 1790000000) /* 2026-09 */

static struct tls_pair ca, other, srv;

static void setup(void) {
        char err[256];
        cr_assert_eq(tlsgen_ca("muster test CA", NOW, TLS_CA_DAYS, &ca, err, sizeof err), 0, "%s", err);
        cr_assert_eq(tlsgen_ca("someone else", NOW, 30, &other, err, sizeof err), 0, "%s", err);
        static const char *const names[] = { "musterd.example.test", "localhost", "127.0.0.1", "::1", "192.0.2.1" };
        cr_assert_eq(tlsgen_server(&ca, names, 5, NOW, TLS_SERVER_DAYS, &srv, err, sizeof err), 0, "%s", err);
}

static void teardown(void) {
        tls_pair_free(&ca);
        tls_pair_free(&other);
        tls_pair_free(&srv);
}

TestSuite(tlsgen, .init = setup, .fini = teardown);

Test(tlsgen, pem_and_a_ca_that_may_sign) {
        cr_assert(strstr(ca.cert_pem, "-----BEGIN CERTIFICATE-----"));
        cr_assert(strstr(ca.key_pem, "-----BEGIN PRIVATE KEY-----"), "PKCS#8: %s", ca.key_pem);
        gnutls_x509_crt_t c;
        gnutls_datum_t d = { (unsigned char *) ca.cert_pem, (unsigned) strlen(ca.cert_pem) };
        cr_assert_eq(gnutls_x509_crt_init(&c), 0);
        cr_assert_eq(gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM), 0);
        unsigned critical = 0;
        cr_expect_eq(gnutls_x509_crt_get_basic_constraints(c, &critical, NULL, NULL), 1, "CA:TRUE");
        unsigned bits = 0;
        cr_expect_eq(gnutls_x509_crt_get_pk_algorithm(c, &bits), GNUTLS_PK_ECDSA);
        cr_expect_eq(bits, 256);
        cr_expect_eq(gnutls_x509_crt_get_signature_algorithm(c), GNUTLS_SIGN_ECDSA_SHA256);
        gnutls_x509_crt_deinit(c);
        int64_t until = 0;
        bool valid = false;
        char err[256];
        cr_assert_eq(tlsgen_check(ca.cert_pem, ca.cert_pem, NULL, 0, &until, &valid, err, sizeof err), 0, "%s", err);
        cr_expect(valid, "self-signed");
        cr_expect_eq(until, NOW + (int64_t) TLS_CA_DAYS * 86400);
}

Test(tlsgen, the_server_certificate_covers_its_names_only) {
        int64_t until = 0;
        bool valid = false;
        char err[256];
        static const char *const all[] = { "musterd.example.test", "localhost", "127.0.0.1", "::1", "192.0.2.1" };
        cr_assert_eq(tlsgen_check(srv.cert_pem, ca.cert_pem, all, 5, &until, &valid, err, sizeof err), 0, "%s", err);
        cr_expect(valid, "every name, issued by the CA");
        cr_expect_eq(until, NOW + (int64_t) TLS_SERVER_DAYS * 86400);
        static const char *const wrong[][1] = { { "evil.example.test" }, { "192.0.2.2" }, { "::2" }, { "example.test" } };
        for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
                cr_assert_eq(tlsgen_check(srv.cert_pem, ca.cert_pem, wrong[i], 1, &until, &valid, err, sizeof err), 0);
                cr_expect_not(valid, "%s is not one of its names", wrong[i][0]);
        }
        cr_assert_eq(tlsgen_check(srv.cert_pem, other.cert_pem, all, 1, &until, &valid, err, sizeof err), 0);
        cr_expect_not(valid, "another CA did not issue it");
        cr_expect(tlsgen_key_matches(srv.cert_pem, srv.key_pem));
        cr_expect_not(tlsgen_key_matches(srv.cert_pem, ca.key_pem));
        cr_expect_not(tlsgen_key_matches(srv.cert_pem, "not a key"));
        cr_expect_eq(tlsgen_check("not a certificate", NULL, NULL, 0, &until, &valid, err, sizeof err), -EINVAL);
}

Test(tlsgen, names_are_checked) {
        static const char *const good[] = { "a", "musterd-0.rack-9.example.test", "10.0.0.1", "fe80::1", "A-b.C" };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++)
                cr_expect(tls_name_ok(good[i]), "%s", good[i]);
        static const char *const bad[] = { "", "-a", "a-", "a..b", ".a", "a.", "a b", "a_b", "*.example.test",
                                           "\xc3\xa9t\xc3\xa9", "1.2.3.4/24" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                cr_expect_not(tls_name_ok(bad[i]), "%s", bad[i]);
        char err[256];
        struct tls_pair p;
        const char *one[] = { "bad name" };
        cr_expect_eq(tlsgen_server(&ca, one, 1, NOW, 30, &p, err, sizeof err), -EINVAL);
        cr_expect(strstr(err, "bad name"), "%s", err);
        cr_expect_eq(tlsgen_server(&ca, NULL, 0, NOW, 30, &p, err, sizeof err), -EINVAL);
        const char *many[TLS_MAX_NAMES + 1];
        for (size_t i = 0; i <= TLS_MAX_NAMES; i++)
                many[i] = "a";
        cr_expect_eq(tlsgen_server(&ca, many, TLS_MAX_NAMES + 1, NOW, 30, &p, err, sizeof err), -E2BIG);
        struct tls_pair broken = { (char *) "x", (char *) "y" };
        const char *ok[] = { "a" };
        cr_expect_eq(tlsgen_server(&broken, ok, 1, NOW, 30, &p, err, sizeof err), -EINVAL);
        cr_expect_eq(tlsgen_ca("", NOW, 30, &p, err, sizeof err), -EINVAL);
        cr_expect_eq(tlsgen_ca("x", NOW, 0, &p, err, sizeof err), -EINVAL);
}
