/* musterctl's HTTP session: one libcurl handle (kept alive across the
 * requests of a command), the bearer token, bounded replies, X-Next-After
 * pages, and the CLI's way of saying what went wrong. */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"

void ctl_reply_free(struct ctl_reply *r) {
        json_object_put(r->json);
        free(r->body);
        free(r->next_after);
        memset(r, 0, sizeof *r);
}

void ctl_query_add(struct ctl_query *q, const char *key, const char *value) {
        if (!value)
                return;
        char *v = ctl_url_escape(value);
        if (!v) {
                q->overflow = true;
                return;
        }
        int n = snprintf(q->buf + q->len, sizeof q->buf - q->len, "%c%s=%s", q->len ? '&' : '?', key, v);
        free(v);
        if (n < 0 || (size_t) n >= sizeof q->buf - q->len) {
                q->overflow = true;
                q->buf[q->len] = '\0';
                return;
        }
        q->len += (size_t) n;
}

/* ---- the token ---------------------------------------------------------- */

static bool token_ok(const char *t) {
        if (!*t)
                return false;
        for (; *t; t++)
                if (!isgraph((unsigned char) *t))
                        return false;
        return true;
}

/* --token-file, else $MUSTER_TOKEN, else $MUSTER_TOKEN_FILE, else the
 * coordinator's own admin token file. -ENOKEY once the reason is printed. */
static int load_token(struct ctl *c) {
        const char *env = getenv("MUSTER_TOKEN");
        if (c->token)
                return 0;
        if (!c->token_file && env && *env) {
                if (!token_ok(env)) {
                        ctl_fail("$MUSTER_TOKEN does not hold a token");
                        return -ENOKEY;
                }
                c->token = strdup(env);
                return c->token ? 0 : -ENOMEM;
        }
        const char *path = c->token_file;
        if (!path) {
                env = getenv("MUSTER_TOKEN_FILE");
                path = env && *env ? env : CTL_DEFAULT_TOKEN_FILE;
        }
        char *t = ctl_read_value(path, CTL_MAX_TOKEN, "token file");
        if (!t) {
                fputs("musterctl: give the admin token with --token-file or $MUSTER_TOKEN\n", stderr);
                return -ENOKEY;
        }
        /* Leading blank lines or spaces are harmless; inner ones are not. */
        char *s = t + strspn(t, " \t\r\n");
        if (!token_ok(s)) {
                free(t);
                ctl_fail("token file %s does not hold a token", path);
                return -ENOKEY;
        }
        c->token = strdup(s);
        explicit_bzero(t, strlen(t));
        free(t);
        return c->token ? 0 : -ENOMEM;
}

const char *ctl_ca(struct ctl *c) {
        const char *env = getenv("MUSTER_CA");
        if (c->ca)
                return c->ca;
        if (env && *env)
                return env;
        if (c->ca_found[0])
                return c->ca_found;
        const char *tf = c->token_file;
        if (!tf) {
                env = getenv("MUSTER_TOKEN_FILE");
                tf = env && *env ? env : CTL_DEFAULT_TOKEN_FILE;
        }
        const char *slash = strrchr(tf, '/');
        int n = slash ? (int) (slash - tf) : 1;
        if (snprintf(c->ca_found, sizeof c->ca_found, "%.*s/tls/ca.pem", n, slash ? tf : ".") >=
                    (int) sizeof c->ca_found ||
            access(c->ca_found, R_OK) < 0) {
                c->ca_found[0] = 0;
                return NULL;
        }
        return c->ca_found;
}

/* ---- transfers ------------------------------------------------------------ */

struct sink {
        char *d;
        size_t n;
        bool too_big;
};

static size_t on_body(char *p, size_t sz, size_t nm, void *u) {
        struct sink *b = u;
        size_t k = sz * nm;
        if (b->n + k > CTL_MAX_REPLY) {
                b->too_big = true;
                return 0;
        }
        char *d = realloc(b->d, b->n + k + 1);
        if (!d)
                return 0;
        b->d = d;
        memcpy(b->d + b->n, p, k);
        b->n += k;
        b->d[b->n] = '\0';
        return k;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *u) {
        struct ctl_reply *r = u;
        size_t k = sz * nm;
        static const char name[] = "X-Next-After:";
        if (k > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
                const char *v = p + sizeof name - 1;
                size_t n = k - (sizeof name - 1);
                while (n > 0 && (*v == ' ' || *v == '\t')) {
                        v++;
                        n--;
                }
                while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
                        n--;
                free(r->next_after);
                r->next_after = n > 0 && n < 256 ? strndup(v, n) : NULL;
        }
        return k;
}

static int on_progress(void *u, curl_off_t a, curl_off_t b, curl_off_t cc, curl_off_t d) {
        return ctl_stop ? 1 : 0;
}

/* The token and the libcurl handle, made by the first request and kept for
 * the next ones. 0, or -errno with c->errbuf saying why. */
static int open_session(struct ctl *c) {
        int k = load_token(c);
        if (k < 0) {
                snprintf(c->errbuf, sizeof c->errbuf, "%s", strerror(-k));
                return k;
        }
        if (!c->curl && !(c->curl = curl_easy_init())) {
                snprintf(c->errbuf, sizeof c->errbuf, "cannot initialise libcurl");
                return -ENOMEM;
        }
        return 0;
}

/* The request's headers; one that cannot be added is left out. An empty
 * "Expect:" keeps libcurl from waiting for a 100-continue on a large body. */
static struct curl_slist *request_headers(const char *auth, bool has_body) {
        struct curl_slist *hdrs = NULL, *t;
        if ((t = curl_slist_append(hdrs, auth)))
                hdrs = t;
        if ((t = curl_slist_append(hdrs, "Accept: application/json")))
                hdrs = t;
        if (has_body && (t = curl_slist_append(hdrs, "Content-Type: application/json")))
                hdrs = t;
        if ((t = curl_slist_append(hdrs, "Expect:")))
                hdrs = t;
        return hdrs;
}

/* What an admin does about a failure libcurl names in its own words: the
 * CA, plain HTTP against HTTPS and the other way round. Into c->errbuf
 * (after libcurl's words, which it replaces). */
static void explain_failure(struct ctl *c, CURLcode cr) {
        bool https = strncmp(c->server, "https://", 8) == 0;
        const char *ca = ctl_ca(c);
        char words[sizeof c->errbuf];
        snprintf(words, sizeof words, "%s", c->errbuf[0] ? c->errbuf : curl_easy_strerror(cr));
        if (cr == CURLE_PEER_FAILED_VERIFICATION && strstr(words, "certificate problem")) {
                if (ca)
                        snprintf(c->errbuf, sizeof c->errbuf,
                                 "its certificate is not signed by the CA musterctl trusts (%s); give --ca with "
                                 "musterd's <state_dir>/tls/ca.pem",
                                 ca);
                else
                        snprintf(c->errbuf, sizeof c->errbuf,
                                 "its certificate is not signed by a CA musterctl trusts (looked for tls/ca.pem "
                                 "beside the token file, then the system's CAs); give --ca with musterd's "
                                 "<state_dir>/tls/ca.pem");
        } else if (cr == CURLE_SSL_CONNECT_ERROR && https && strstr(words, "wrong version number"))
                snprintf(c->errbuf, sizeof c->errbuf,
                         "it answers in plain HTTP, not HTTPS (musterd --insecure-http?); give --server http://...");
        else if (cr == CURLE_SSL_CONNECT_ERROR && https &&
                 (strstr(words, "SSL_ERROR_SYSCALL") || strstr(words, "unexpected eof")))
                /* A plain-HTTP musterd may close on a ClientHello before
                 * it answers anything: then OpenSSL only sees the close. */
                snprintf(c->errbuf, sizeof c->errbuf,
                         "it closed the TLS handshake: it may speak plain HTTP, not HTTPS (musterd "
                         "--insecure-http?); give --server http://...");
        else if (cr == CURLE_GOT_NOTHING && !https)
                snprintf(c->errbuf, sizeof c->errbuf,
                         "it closed the connection without an answer: musterd serves HTTPS unless started with "
                         "--insecure-http; give --server https://...");
}

/* A transfer that brought no answer: the part of the body received is
 * dropped and c->errbuf says why. -EINTR (ctl_stop), -ETIMEDOUT or -EIO. */
static int transfer_failed(struct ctl *c, CURLcode cr, struct sink *sink, struct ctl_reply *r) {
        free(sink->d);
        free(r->next_after);
        r->next_after = NULL;
        if (cr == CURLE_ABORTED_BY_CALLBACK) {
                snprintf(c->errbuf, sizeof c->errbuf, "interrupted");
                return -EINTR;
        }
        if (sink->too_big)
                snprintf(c->errbuf, sizeof c->errbuf, "the reply is larger than %d MiB", CTL_MAX_REPLY >> 20);
        else
                explain_failure(c, cr);
        return cr == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
}

int ctl_request(struct ctl *c, const char *method, const char *path, json_object *body, struct ctl_reply *r) {
        memset(r, 0, sizeof *r);
        c->errbuf[0] = '\0';
        int k = open_session(c);
        if (k < 0)
                return k;
        CURL *h = c->curl;
        _cleanup_free_ char *url = NULL, *auth = NULL;
        if (asprintf(&url, "%s%s%s", c->server, MUSTER_API_PREFIX, path) < 0 ||
            asprintf(&auth, "Authorization: Bearer %s", c->token) < 0) {
                url = auth = NULL;
                snprintf(c->errbuf, sizeof c->errbuf, "out of memory");
                return -ENOMEM;
        }
        const char *text = NULL;
        bool sends = strcmp(method, "POST") == 0 || strcmp(method, "PATCH") == 0 || strcmp(method, "PUT") == 0;
        if (body)
                text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        else if (sends)
                text = "{}";
        struct curl_slist *hdrs = request_headers(auth, text != NULL);

        struct sink sink = { 0 };
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "musterctl/" MUSTER_VERSION);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 300L);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        if (strcmp(method, "HEAD") == 0)
                curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        if (text) {
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen(text));
        }
        /* A CA file that cannot be read is this machine's problem, not
         * musterd's: said so, before any connection. */
        if (ctl_ca(c) && access(ctl_ca(c), R_OK) < 0) {
                snprintf(c->errbuf, sizeof c->errbuf, "cannot read the CA file %s: %s", ctl_ca(c), strerror(errno));
                curl_slist_free_all(hdrs);
                explicit_bzero(auth, strlen(auth));
                return -EBADF;
        }
        if (ctl_ca(c)) { /* that CA alone, not also the system's folder of CAs */
                curl_easy_setopt(h, CURLOPT_CAINFO, ctl_ca(c));
                curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
        }
        CURLcode cr = curl_easy_perform(h);
        curl_slist_free_all(hdrs);
        /* The token stays in the session; the header copy goes now. */
        explicit_bzero(auth, strlen(auth));
        if (cr == CURLE_SSL_CACERT_BADFILE) { /* there, but not certificates */
                snprintf(c->errbuf, sizeof c->errbuf, "the CA file %s holds no PEM certificate musterctl can use",
                         ctl_ca(c));
                free(sink.d);
                return -EBADF;
        }
        if (cr != CURLE_OK)
                return transfer_failed(c, cr, &sink, r);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
        r->body = sink.d;
        if (r->body && *r->body)
                r->json = json_tokener_parse(r->body);
        return 0;
}

/* "musterctl: <reason> (HTTP <code>)", the server's words when it gave some. */
static void print_http_error(struct ctl *c, const char *method, const char *path, const struct ctl_reply *r) {
        json_object *v;
        if (r->json && json_object_object_get_ex(r->json, "reason", &v) && json_object_is_type(v, json_type_string)) {
                _cleanup_free_ char *reason = ctl_text_sanitize(json_object_get_string(v));
                ctl_fail("%s (HTTP %ld)", reason ? reason : "?", r->status);
                return;
        }
        _cleanup_free_ char *text = ctl_text_sanitize(r->body ? r->body : "");
        if (text && strlen(text) > 200)
                strcpy(text + 197, "...");
        ctl_fail("%s %s%s%s: %s (HTTP %ld)", method, c->server, MUSTER_API_PREFIX, path,
                 text && *text ? text : "no reason given", r->status);
}

int ctl_report(struct ctl *c, const char *method, const char *path, int k, const struct ctl_reply *r) {
        if (k == -ENOKEY || k == -EINTR)
                return k; /* no token (said why), or interrupted */
        if (k == -EBADF) { /* the CA file: a local failure (1), not "cannot reach" */
                ctl_fail("%s", c->errbuf);
                c->fail_exit = CTL_EXIT_FAIL;
                return k;
        }
        if (k < 0) {
                if (!c->quiet_unreachable)
                        ctl_fail("cannot reach musterd at %s: %s", c->server, c->errbuf);
                c->fail_exit = CTL_EXIT_UNREACHABLE;
                return k;
        }
        if (r->status >= 200 && r->status < 300)
                return 0;
        c->fail_exit = r->status == 404 ? CTL_EXIT_NOT_FOUND : CTL_EXIT_FAIL;
        print_http_error(c, method, path, r);
        return -EPROTO;
}

void ctl_still_trying(struct ctl *c, bool *unreachable) {
        if (!*unreachable)
                ctl_fail("cannot reach musterd at %s: %s; still trying", c->server, c->errbuf);
        *unreachable = true;
}

int ctl_call(struct ctl *c, const char *method, const char *path, json_object *body, struct ctl_reply *r) {
        return ctl_report(c, method, path, ctl_request(c, method, path, body, r), r);
}

int ctl_call_object(struct ctl *c, const char *method, const char *path, json_object *body, struct ctl_reply *r) {
        int k = ctl_call(c, method, path, body, r);
        if (k < 0)
                return k;
        if (!r->json || !json_object_is_type(r->json, json_type_object)) {
                ctl_fail("%s %s: the reply is not a JSON object (HTTP %ld)", method, path, r->status);
                return -EBADMSG;
        }
        return 0;
}

int ctl_get_list(struct ctl *c, const char *path, bool all, json_object **out, bool *more) {
        _cleanup_json_ json_object *rows = json_object_new_array();
        _cleanup_free_ char *cursor = NULL;
        if (more)
                *more = false;
        if (!rows) {
                ctl_fail("out of memory");
                return -ENOMEM;
        }
        for (unsigned page = 0; page < CTL_MAX_PAGES; page++) {
                _cleanup_free_ char *p = NULL;
                _cleanup_free_ char *esc = cursor ? ctl_url_escape(cursor) : NULL;
                if ((cursor && !esc) || asprintf(&p, "%s%s%s", path, !cursor ? "" : strchr(path, '?') ? "&after=" : "?after=",
                             cursor ? esc : "") < 0) {
                        p = NULL;
                        ctl_fail("out of memory");
                        return -ENOMEM;
                }
                struct ctl_reply r;
                int k = ctl_call(c, "GET", p, NULL, &r);
                if (k < 0) {
                        ctl_reply_free(&r);
                        return k;
                }
                if (!r.json || !json_object_is_type(r.json, json_type_array)) {
                        ctl_reply_free(&r);
                        ctl_fail("GET %s: the reply is not a JSON array", p);
                        return -EBADMSG;
                }
                size_t n = json_object_array_length(r.json);
                for (size_t i = 0; i < n; i++)
                        json_object_array_add(rows, json_object_get(json_object_array_get_idx(r.json, i)));
                bool has_more = r.next_after && n > 0;
                /* A cursor that does not move would loop forever. */
                if (has_more && cursor && strcmp(cursor, r.next_after) == 0)
                        has_more = false;
                if (has_more) {
                        free(cursor);
                        cursor = TAKE_PTR(r.next_after);
                }
                ctl_reply_free(&r);
                if (!has_more)
                        break;
                if (!all) {
                        if (more)
                                *more = true;
                        break;
                }
        }
        *out = TAKE_PTR(rows);
        return 0;
}
