/* musterd's HTTP layer over libmicrohttpd: a table of routes, requests
 * decoded before any handler runs (method, route, auth, content type, size,
 * JSON shape), one way to answer errors, and per-route metrics. Handlers
 * never see HTTP: they take a decoded request and fill a response. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "growbuf.h"

#define HTTP_MAX_PARAMS 4
#define HTTP_PARAM_MAX 128
#define HTTP_MAX_HEADERS 8        /* extra response headers of one answer */
#define HTTP_HEADER_VALUE_MAX 1024

struct http_request {
        const char *method;
        const char *path;
        char params[HTTP_MAX_PARAMS][HTTP_PARAM_MAX]; /* the {..} parts of the pattern */
        int n_params;
        json_object *body;        /* parsed JSON body, or NULL */
        const char *body_raw;
        size_t body_len;
        const char *bearer;       /* token of "Authorization: Bearer", or NULL */
        void *conn;               /* for http_query() */
        void *auth;               /* set by the server's auth hook */
        /* Set by the auth hook: this caller may send a ROUTE_LARGE_BODY
         * route its larger body (else max_body_bytes holds). */
        bool large_body_ok;
};

/* A streamed body (http_stream()): fill buf with up to max bytes of the body
 * from `pos` (counted from the body's first byte): how many (> 0), or
 * -errno to abort the transfer (the connection is closed). */
typedef ssize_t (*http_stream_read)(void *cls, uint64_t pos, void *buf, size_t max);

struct http_resp_header {
        const char *name;         /* a static string */
        char *value;              /* owned */
};

struct http_response {
        int status;
        json_object *json;        /* owned; serialised by the server */
        char *text;               /* owned; alternative to json */
        size_t text_len;          /* 0: strlen(text) */
        const char *content_type; /* for text and file; default text/plain */
        int64_t next_after;       /* > 0: a list has more; sent as X-Next-After */
        bool has_file;            /* answer with file_fd's bytes (http_file()) */
        int file_fd;              /* owned when has_file */
        uint64_t file_size;
        http_stream_read stream_read; /* non-NULL: answer with stream_size bytes read through it */
        void (*stream_free)(void *cls);
        void *stream_cls;         /* owned: stream_free()d once the answer is done */
        uint64_t stream_size;
        struct http_resp_header headers[HTTP_MAX_HEADERS]; /* sent as they are (http_header_add()) */
        int n_headers;
        bool close;               /* "Connection: close", and close once answered */
};

typedef void (*http_handler)(void *app, struct http_request *req, struct http_response *resp);

enum {
        ROUTE_PUBLIC = 1 << 0,    /* no token needed */
        ROUTE_BODY = 1 << 1,      /* takes a JSON object body */
        ROUTE_LARGE_BODY = 1 << 2,/* its body may reach max_large_body_bytes */
        ROUTE_TOKEN_OPTIONAL = 1 << 3, /* the auth hook runs only when a token is sent (req->auth NULL
                                        * without one): the handler decides */
        ROUTE_QUERY_TOKEN = 1 << 4,  /* without an Authorization header, the token may come as ?token=
                                      * (an iPXE script's URLs cannot carry headers) */
        ROUTE_UPLOAD = 1 << 5,    /* takes a body of any type, up to max_upload_bytes, as it came
                                   * (req->body_raw, body_len; no JSON parse) */
        ROUTE_BODY_TEXT = 1 << 6, /* with ROUTE_BODY: the body passes the same checks (type, size, parse
                                   * cost, UTF-8, no NUL) but is not parsed (req->body NULL); the handler
                                   * walks req->body_raw member by member (json_members) */
        ROUTE_AGENT = 1 << 8,     /* agents' tokens only (the auth hook refuses people's with 403) */
};

struct http_route {
        const char *method;
        const char *pattern;      /* "/api/v2/infra-envs/{id}/hosts/{id}" */
        http_handler fn;
        unsigned flags;
        const char *name;         /* metrics label */
};

/* Answers 401/403 itself and returns false when the request may not go on.
 * It runs once the request's header is in, before any byte of its body is
 * read or held: a refused request costs no body. */
typedef bool (*http_auth_hook)(void *app, const struct http_route *route, struct http_request *req,
                               struct http_response *resp);

/* Mozilla's "intermediate" TLS profile (DECISIONS.md D3): TLS 1.3, and TLS 1.2
 * with ECDHE and AEAD ciphers only (AES-GCM, ChaCha20-Poly1305; no CBC, no
 * SHA-1 MAC, no static RSA key exchange); the client picks among them. */
#define HTTP_TLS_PRIORITIES_DEFAULT                                                                    \
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:" \
        "-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"

struct http_server_config {
        const char *listen;       /* "127.0.0.1:8090", "[::1]:0", ":8090" */
        /* HTTPS with this certificate (a PEM chain, leaf first) and key;
         * NULL: plain HTTP. Copied: the caller's text may go. */
        const char *tls_cert_pem, *tls_key_pem;
        /* What HTTPS offers, a GnuTLS priority string; NULL or "":
         * HTTP_TLS_PRIORITIES_DEFAULT. */
        const char *tls_priorities;
        unsigned threads;
        unsigned max_connections; /* 0: http_connection_limit() of RLIMIT_NOFILE */
        unsigned max_connections_per_address; /* 0: no cap */
        unsigned header_timeout_s; /* a request's header must arrive whole within it; 0: none */
        size_t max_body_bytes;
        size_t max_large_body_bytes; /* routes with ROUTE_LARGE_BODY; 0: max_body_bytes */
        size_t max_upload_bytes;     /* routes with ROUTE_UPLOAD; 0: max_body_bytes */
        /* The memory all bodies in flight may hold together; a body that
         * would pass it gets 503 with Retry-After (0: no cap). */
        size_t max_body_memory;
        const struct http_route *routes;
        size_t n_routes;
        http_auth_hook auth;
        void (*auth_free)(void *auth);
        /* After a request the auth hook let through was answered (NULL:
         * none): the route, the request (its auth still there) and the
         * status. */
        void (*after)(void *app, const struct http_route *route, const struct http_request *req, int status);
        void *app;
};

struct http_server;

/* *out is set before the first request is served (handlers may read it
 * through cfg->app), and NULL again on failure. 0 or -errno. */
int http_server_start(const struct http_server_config *cfg, struct http_server **out);
/* Present another certificate and key (PEM) from the next TLS handshake
 * on; connections already open keep theirs (a renewal without a restart).
 * One HTTPS server a process. -EINVAL for plain HTTP or text that does not
 * parse (the old certificate stays), -ENOMEM. */
int http_server_set_certificate(struct http_server *s, const char *cert_pem, const char *key_pem);
/* The port actually bound (useful with port 0). */
uint16_t http_server_port(const struct http_server *s);
void http_server_stop(struct http_server *s);
/* Prometheus text of request counts by route and status and latency,
 * appended to out. 0, -E2BIG past max, -ENOMEM. */
int http_server_metrics(struct http_server *s, struct growbuf *out, size_t max);
/* Change header_timeout_s of a running server (a reload); 0: none. */
void http_server_set_header_timeout(struct http_server *s, unsigned seconds);

/* How many connections a process with `nofile` descriptors may serve: room
 * for the store, the log and the like, then two per connection (its socket
 * and a file it may stream), at most HTTP_MAX_CONNECTIONS. Pure. */
#define HTTP_MAX_CONNECTIONS 20000u
unsigned http_connection_limit(uint64_t nofile);

/* Whether s[0..len) is UTF-8 as RFC 3629 has it: no overlong forms, no
 * surrogates (U+D800..U+DFFF), nothing above U+10FFFF. Pure. */
bool http_utf8_valid(const char *s, size_t len);
/* A copy of s[0..len) with each byte that starts no valid UTF-8 sequence
 * replaced by U+FFFD (malloc'd, NUL-terminated, its length in *out_len);
 * NULL when out of memory. Pure. */
char *http_utf8_repair(const char *s, size_t len, size_t *out_len);
/* The check at the door for a JSON body that json-c parsed: the whole text
 * is valid UTF-8 and no string or member name holds a NUL (a raw byte or
 * \u0000; json-c cuts member names at a NUL, so the parsed tree cannot tell).
 * 0, or -EINVAL with the reason in why. Pure. */
int http_json_text_check(const char *text, size_t len, char *why, size_t whylen);


/* Match `path` against `pattern`; fills params. Pure. */
bool http_route_match(const char *pattern, const char *path, struct http_request *req);
/* Route lookup as the server does it: the index of the first route of
 * routes[0..n_routes) for method+path (params into req when not NULL), or
 * HTTP_ROUTE_UNMATCHED with *path_known telling whether another method
 * would have matched (405 rather than 404; the metrics count it under route
 * "unmatched"). Pure. */
#define HTTP_ROUTE_UNMATCHED ((size_t) -1)
size_t http_route_find(const struct http_route *routes, size_t n_routes, const char *method, const char *path,
                       struct http_request *req, bool *path_known);

/* A query parameter of the request, or NULL. */
const char *http_query(const struct http_request *req, const char *key);

/* Fill an error response {"code": status, "reason": "..."}. */
void http_error(struct http_response *resp, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Fill a JSON response, taking ownership of obj. */
void http_json(struct http_response *resp, int status, json_object *obj);
/* Fill a text response of len bytes (taking ownership of text) with the
 * given content type (a static string). */
void http_text(struct http_response *resp, int status, char *text, size_t len, const char *content_type);
/* Answer 200 with the `size` bytes of the open file fd from offset 0,
 * streamed (taking ownership of fd). */
void http_file(struct http_response *resp, int fd, uint64_t size, const char *content_type);

/* Answer `status` with a body of `size` bytes produced by read(cls, ...) as
 * the client takes them, never held whole in memory; free_cls(cls) (may be
 * NULL) runs when the answer is done or abandoned, and also when the
 * response is replaced before it is sent. HEAD requests get the headers
 * (Content-Length: size) and no body. */
void http_stream(struct http_response *resp, int status, uint64_t size, http_stream_read read,
                 void (*free_cls)(void *cls), void *cls, const char *content_type);
/* Add a header to the answer (name: a static string). Set the body first:
 * http_error(), http_json(), http_text(), http_file() and http_stream()
 * drop the headers added before them. 0; -E2BIG past HTTP_MAX_HEADERS or
 * HTTP_HEADER_VALUE_MAX, -EINVAL for a value with CR or LF, -ENOMEM. */
int http_header_add(struct http_response *resp, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* A request header (case-insensitive name), or NULL. */
const char *http_header(const struct http_request *req, const char *name);

/* Parse "host:port" ("[v6]:port", ":port" = all) into a sockaddr. */
struct sockaddr_storage;
int http_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *len);

/* The HTTP status of a service's (or the store's, or a parser's) -errno,
 * from the one table every answer takes its status from (the API's
 * handlers add only the words): -EINVAL 400, -EPERM 403, -ENOENT 404,
 * -EEXIST/-EBUSY/-ESTALE/-ENOPKG/-EDOM/-EDQUOT/-EALREADY 409, -E2BIG 413,
 * -EUSERS 429 (too many at once: a rate), -EAGAIN/-ENODATA 503 (-ENODATA:
 * cannot be served with this configuration), -ENOSPC 507; anything else
 * (-ENOMEM, -EIO, ...) 500. To add an error: a row in http.c's table and
 * its line here. */
int http_status_of_errno(int r);

/* ---- conditional and partial requests (conditional.c) ---------------------- */

/* A Range header against a body of `size` bytes (RFC 9110 §14): 1 and the
 * range [*start, *start + *len) for one satisfiable range "bytes=a-b",
 * "bytes=a-" or "bytes=-n"; 0 when the whole body is to be sent (no header,
 * a malformed one, another unit, several ranges); -ERANGE when it is
 * unsatisfiable (416). Pure. */
int http_range_parse(const char *header, uint64_t size, uint64_t *start, uint64_t *len);
/* The answer to a Range header that http_range_parse found unsatisfiable:
 * 416 with the Content-Range RFC 9110 §14.4 asks for (the whole size after
 * "bytes" and an asterisk) and a reason naming the range and `what` ("file",
 * "image"). */
void http_range_refuse(struct http_response *resp, const char *header, uint64_t size, const char *what);

/* Whether an If-None-Match (weak comparison, "*" matches) or If-Range
 * (strong comparison; a date never matches) header value names etag. Pure. */
bool http_etag_none_match(const char *header, const char *etag);
bool http_etag_if_range(const char *header, const char *etag);

/* The Host header as a URL authority ("name", "name:port", "[v6]:port"):
 * true when it is 1..255 characters of [A-Za-z0-9.:-[]] only. Pure. */
bool http_host_ok(const char *host);
