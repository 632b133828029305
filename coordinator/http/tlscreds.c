/* The certificate HTTPS presents, replaceable while serving (http.h:
 * http_server_set_certificate). libmicrohttpd asks GnuTLS for it at each
 * handshake through MHD_OPTION_HTTPS_CERT_CALLBACK, whose callback has no
 * argument of ours: the certificate is the process's (one HTTPS server a
 * process, as musterd runs). A replaced one stays allocated until the
 * server stops, since a handshake may still be using it. */
#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "http/tlscreds.h"

#define TLS_MAX_CHAIN 8

struct tls_creds {
        gnutls_pcert_st pcerts[TLS_MAX_CHAIN];
        unsigned n;
        gnutls_privkey_t key;
        struct tls_creds *older;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tls_creds *current;

static void creds_free(struct tls_creds *c) {
        for (unsigned i = 0; i < c->n; i++)
                gnutls_pcert_deinit(&c->pcerts[i]);
        if (c->key)
                gnutls_privkey_deinit(c->key);
        free(c);
}

int tlscreds_set(const char *cert_pem, const char *key_pem) {
        gnutls_datum_t cd = { (unsigned char *) cert_pem, (unsigned) strlen(cert_pem) };
        gnutls_datum_t kd = { (unsigned char *) key_pem, (unsigned) strlen(key_pem) };
        struct tls_creds *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        c->n = TLS_MAX_CHAIN;
        if (gnutls_pcert_list_import_x509_raw(c->pcerts, &c->n, &cd, GNUTLS_X509_FMT_PEM, 0) < 0) {
                c->n = 0;
                creds_free(c);
                return -EINVAL;
        }
        if (gnutls_privkey_init(&c->key) < 0 ||
            gnutls_privkey_import_x509_raw(c->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0) < 0) {
                creds_free(c);
                return -EINVAL;
        }
        pthread_mutex_lock(&lock);
        c->older = current;
        current = c;
        pthread_mutex_unlock(&lock);
        return 0;
}

void tlscreds_clear(void) {
        pthread_mutex_lock(&lock);
        struct tls_creds *c = current;
        current = NULL;
        pthread_mutex_unlock(&lock);
        while (c) {
                struct tls_creds *older = c->older;
                creds_free(c);
                c = older;
        }
}

int tlscreds_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int n_req, const gnutls_pk_algorithm_t *pk_algos,
                      int n_algos, gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *key) {
        (void) session;
        (void) req_ca_dn;
        (void) n_req;
        (void) pk_algos;
        (void) n_algos;
        pthread_mutex_lock(&lock);
        struct tls_creds *c = current;
        pthread_mutex_unlock(&lock);
        if (!c)
                return -1;
        *pcert = c->pcerts;
        *pcert_length = c->n;
        *key = c->key;
        return 0;
}
