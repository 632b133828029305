/* The process's HTTPS certificate, swappable while serving (tlscreds.c). */
#pragma once
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

/* Parse cert_pem (a chain, leaf first) and key_pem and present them from
 * the next handshake on. -EINVAL when either does not parse, -ENOMEM. */
int tlscreds_set(const char *cert_pem, const char *key_pem);
/* Forget every certificate (the server has stopped). */
void tlscreds_clear(void);
/* gnutls_certificate_retrieve_function2 for MHD_OPTION_HTTPS_CERT_CALLBACK. */
int tlscreds_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int n_req, const gnutls_pk_algorithm_t *pk_algos,
                      int n_algos, gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *key);
