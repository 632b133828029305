/* musterd's HTTPS certificate: the operator's, or its own CA's (tls.h). */
#include "daemon/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "errmsg.h"
#include "fdio.h"
#include "log.h"

#define TLS_MAX_FILE (64 * 1024)

void daemon_tls_free(struct daemon_tls *t) {
        tls_pair_free(&t->pair);
        strv_free(&t->names);
        *t = (struct daemon_tls) { 0 };
}

/* A PEM file's text; NULL with errno (ENOENT when there is none). */
static char *read_text(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        char *buf = malloc(TLS_MAX_FILE + 1);
        ssize_t n = buf ? fd_read_full(fd, buf, TLS_MAX_FILE + 1) : -ENOMEM;
        close(fd);
        if (n < 0 || n > TLS_MAX_FILE) {
                free(buf);
                errno = n < 0 ? (int) -n : EFBIG;
                return NULL;
        }
        buf[n] = 0;
        return buf;
}

static int add_name(struct strv *v, const char *name) {
        if (!tls_name_ok(name) || strv_contains(v, name) || v->n >= TLS_MAX_NAMES)
                return 0;
        return strv_push(v, name);
}

/* Every address of the host's interfaces (not link-local IPv6). */
static int add_interfaces(struct strv *v) {
        struct ifaddrs *ifs = NULL;
        if (getifaddrs(&ifs) < 0)
                return 0; /* the names it has are enough */
        int r = 0;
        for (struct ifaddrs *i = ifs; i && r >= 0; i = i->ifa_next) {
                char a[INET6_ADDRSTRLEN];
                if (!i->ifa_addr)
                        continue;
                if (i->ifa_addr->sa_family == AF_INET)
                        inet_ntop(AF_INET, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, a, sizeof a);
                else if (i->ifa_addr->sa_family == AF_INET6 &&
                         !IN6_IS_ADDR_LINKLOCAL(&((struct sockaddr_in6 *) i->ifa_addr)->sin6_addr))
                        inet_ntop(AF_INET6, &((struct sockaddr_in6 *) i->ifa_addr)->sin6_addr, a, sizeof a);
                else
                        continue;
                r = add_name(v, a);
        }
        freeifaddrs(ifs);
        return r;
}

/* The names musterd's certificate is for (tls.h), deduplicated, at most
 * TLS_MAX_NAMES. -EINVAL with err naming a bad [server] tls_names entry. */
static int daemon_tls_names(const struct muster_config *cfg, struct strv *out, char *err, size_t errlen) {
        char host[CONFIG_LISTEN_MAX], buf[sizeof cfg->tls_names];
        int r = 0;
        *out = (struct strv) { 0 };
        /* The operator's names first: they are what a client asks for. */
        snprintf(buf, sizeof buf, "%s", cfg->tls_names);
        char *save = NULL;
        for (char *t = strtok_r(buf, ", ", &save); t && r >= 0; t = strtok_r(NULL, ", ", &save)) {
                if (!tls_name_ok(t))
                        return errmsg(err, errlen, -EINVAL, "[server] tls_names: \"%s\" is neither a DNS name nor an "
                                      "IP address", t);
                r = add_name(out, t);
        }
        /* The listen address: HOST:PORT or [V6]:PORT. */
        snprintf(host, sizeof host, "%s", cfg->listen[0] == '[' ? cfg->listen + 1 : cfg->listen);
        char *end = cfg->listen[0] == '[' ? strchr(host, ']') : strrchr(host, ':');
        if (end)
                *end = 0;
        bool every = !*host || !strcmp(host, "0.0.0.0") || !strcmp(host, "::");
        char hostname[256] = "";
        if (r >= 0 && !every)
                r = add_name(out, host);
        if (r >= 0 && gethostname(hostname, sizeof hostname - 1) == 0)
                r = add_name(out, hostname);
        if (r >= 0)
                r = add_name(out, "localhost");
        if (r >= 0)
                r = add_name(out, "127.0.0.1");
        if (r >= 0)
                r = add_name(out, "::1");
        if (r >= 0 && every)
                r = add_interfaces(out);
        if (r < 0)
                strv_free(out);
        return r < 0 ? errmsg(err, errlen, r, "out of memory") : 0;
}

/* The operator's certificate and key. */
static int load_own(const struct muster_config *cfg, struct daemon_tls *out, char *err, size_t errlen) {
        bool valid;
        if (!cfg->tls_cert[0] || !cfg->tls_key[0])
                return errmsg(err, errlen, -EINVAL, "[server] tls_cert and tls_key go together (one is not set)");
        if (!(out->pair.cert_pem = read_text(cfg->tls_cert)))
                return errmsg(err, errlen, -errno, "reading [server] tls_cert %s: %s", cfg->tls_cert, strerror(errno));
        if (!(out->pair.key_pem = read_text(cfg->tls_key)))
                return errmsg(err, errlen, -errno, "reading [server] tls_key %s: %s", cfg->tls_key, strerror(errno));
        int r = tlsgen_check(out->pair.cert_pem, NULL, NULL, 0, &out->not_after, &valid, err, errlen);
        if (r < 0)
                return errmsg(err, errlen, r, "[server] tls_cert %s: %s", cfg->tls_cert, err);
        if (!tlsgen_key_matches(out->pair.cert_pem, out->pair.key_pem))
                return errmsg(err, errlen, -EINVAL, "[server] tls_key %s is not the key of tls_cert %s (or not a PEM "
                              "key)", cfg->tls_key, cfg->tls_cert);
        out->own = true;
        return 0;
}

/* DIR/name into path; -ENAMETOOLONG. */
static int path_in(char *path, size_t size, const char *dir, const char *name) {
        return snprintf(path, size, "%s/%s", dir, name) >= (int) size ? -ENAMETOOLONG : 0;
}

/* musterd's CA: DIR/ca.pem and ca.key, made when there are none. */
static int load_ca(const char *dir, int64_t now, struct tls_pair *ca, char *ca_path, size_t ca_size, char *err,
                   size_t errlen) {
        char key_path[PATH_MAX];
        int r;
        if ((r = path_in(ca_path, ca_size, dir, "ca.pem")) < 0 || (r = path_in(key_path, sizeof key_path, dir, "ca.key")) < 0)
                return errmsg(err, errlen, r, "the state dir's path is too long");
        ca->cert_pem = read_text(ca_path);
        ca->key_pem = ca->cert_pem ? read_text(key_path) : NULL;
        if (ca->cert_pem && ca->key_pem) {
                if (!tlsgen_key_matches(ca->cert_pem, ca->key_pem))
                        return errmsg(err, errlen, -EINVAL, "%s is not the key of %s; move both away to make a new CA "
                                      "(every client then needs the new ca.pem)", key_path, ca_path);
                return 0;
        }
        if (errno != ENOENT)
                return errmsg(err, errlen, -errno, "reading %s: %s", ca->cert_pem ? key_path : ca_path,
                              strerror(errno));
        tls_pair_free(ca);
        char cn[300], host[256] = "";
        (void) gethostname(host, sizeof host - 1);
        snprintf(cn, sizeof cn, "musterd CA %.40s", host);
        if ((r = tlsgen_ca(cn, now, TLS_CA_DAYS, ca, err, errlen)) < 0)
                return r;
        /* The key first: a CA certificate is never without its key. */
        if ((r = fd_write_file_atomic(key_path, ca->key_pem, strlen(ca->key_pem), 0600)) < 0 ||
            (r = fd_write_file_atomic(ca_path, ca->cert_pem, strlen(ca->cert_pem), 0644)) < 0)
                return errmsg(err, errlen, r, "writing musterd's CA into %s: %s", dir, strerror(-r));
        log_info("tls", "Made a CA for musterd: %s (clients trust it: musterctl finds it beside admin.token; "
                 "agents get it with --ca or in the ISO)", ca_path);
        return 0;
}

/* The server certificate in DIR, or a new one when it is not right. */
static int load_server(const char *dir, const struct tls_pair *ca, int64_t now, struct daemon_tls *out, char *err,
                       size_t errlen) {
        char cert_path[PATH_MAX], key_path[PATH_MAX];
        bool valid = false;
        int r;
        if ((r = path_in(cert_path, sizeof cert_path, dir, "server.pem")) < 0 ||
            (r = path_in(key_path, sizeof key_path, dir, "server.key")) < 0)
                return errmsg(err, errlen, r, "the state dir's path is too long");
        out->pair.cert_pem = read_text(cert_path);
        out->pair.key_pem = out->pair.cert_pem ? read_text(key_path) : NULL;
        const char *const *names = (const char *const *) out->names.v;
        if (out->pair.cert_pem && out->pair.key_pem &&
            tlsgen_check(out->pair.cert_pem, ca->cert_pem, names, out->names.n, &out->not_after, &valid, err,
                         errlen) == 0 &&
            valid && tlsgen_key_matches(out->pair.cert_pem, out->pair.key_pem) &&
            out->not_after - now > TLS_RENEW_BEFORE_S)
                return 0;
        tls_pair_free(&out->pair);
        if ((r = tlsgen_server(ca, names, out->names.n, now, TLS_SERVER_DAYS, &out->pair, err, errlen)) < 0)
                return r;
        if ((r = fd_write_file_atomic(key_path, out->pair.key_pem, strlen(out->pair.key_pem), 0600)) < 0 ||
            (r = fd_write_file_atomic(cert_path, out->pair.cert_pem, strlen(out->pair.cert_pem), 0600)) < 0)
                return errmsg(err, errlen, r, "writing musterd's certificate into %s: %s", dir, strerror(-r));
        out->not_after = now + (int64_t) TLS_SERVER_DAYS * 86400;
        out->issued = true;
        return 0;
}

int daemon_tls_setup(const struct muster_config *cfg, int64_t now, struct daemon_tls *out, char *err, size_t errlen) {
        char dir[PATH_MAX];
        struct tls_pair ca = { 0 };
        int r;
        *out = (struct daemon_tls) { 0 };
        if (cfg->tls_cert[0] || cfg->tls_key[0])
                return load_own(cfg, out, err, errlen);
        if ((r = path_in(dir, sizeof dir, cfg->state_dir, "tls")) < 0)
                return errmsg(err, errlen, r, "the state dir's path is too long");
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return errmsg(err, errlen, -errno, "creating %s: %s", dir, strerror(errno));
        if ((r = daemon_tls_names(cfg, &out->names, err, errlen)) >= 0 &&
            (r = load_ca(dir, now, &ca, out->ca_path, sizeof out->ca_path, err, errlen)) >= 0)
                r = load_server(dir, &ca, now, out, err, errlen);
        tls_pair_free(&ca);
        return r;
}
