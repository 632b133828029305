/* What musterd serves HTTPS with (DECISIONS.md D2): [server] tls_cert and tls_key
 * when the operator gives them, else its own CA in <state_dir>/tls, made
 * at first start (ca.pem 0644, ca.key 0600, the folder 0700), and a server
 * certificate it issues from that CA for the names it answers to (the
 * listen address, or every address of the host when it listens on all;
 * localhost and the loopback addresses; the host's name; [server]
 * tls_names), issued again when it is missing, another CA's, short of a
 * name, or within TLS_RENEW_BEFORE_S of expiring (server.pem, server.key
 * 0600). musterctl finds the CA beside admin.token. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "domain/config.h"
#include "strv.h"
#include "daemon/tlsgen.h"

struct daemon_tls {
        struct tls_pair pair;   /* the certificate and key served */
        int64_t not_after;      /* when that certificate expires */
        bool own;               /* the operator's ([server] tls_cert/tls_key) */
        bool issued;            /* a new one was issued now */
        char ca_path[4096];     /* musterd's CA certificate; "" when own */
        struct strv names;      /* what musterd's own certificate names */
};
void daemon_tls_free(struct daemon_tls *t);

/* Load or make what musterd serves (tls.h) as of `now`. -errno with err
 * saying what failed (a missing or unreadable file, a key that is not the
 * certificate's, one of tls_cert/tls_key without the other). */
int daemon_tls_setup(const struct muster_config *cfg, int64_t now, struct daemon_tls *out, char *err, size_t errlen);
