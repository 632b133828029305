/* The agent's HTTP client for the coordinator (DESIGN §4): one libcurl easy
 * handle reused for every call (so the connection stays open), JSON bodies
 * in and out, the bearer token, bounded connect and request times and a cap
 * on what the coordinator may send back. It does not decide what a status
 * means; run.c does. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLIENT_TOKEN_MAX 8192                    /* bytes of an agent token */
#define CLIENT_MAX_REPLY_BYTES (8u << 20)        /* 8 MiB */
#define CLIENT_CONNECT_TIMEOUT_MS 10000
#define CLIENT_REQUEST_TIMEOUT_MS 30000
#define CLIENT_DATE_MAX 128                      /* a Date header longer than this is ignored */
#define CLIENT_STREAM_LOW_SPEED_S 60             /* a download with no byte for this long fails */
#define CLIENT_MAX_REDIRECTS 5                   /* for downloads from outside the coordinator */

struct client {
        char *base;              /* "http(s)://host[:port]", no trailing slash */
        char *auth_header;       /* "Authorization: Bearer <token>" */
        char *ca;                /* CA bundle file, or NULL for the system's */
        char *ca_pem;            /* CA certificates as PEM text (kept in memory); wins over ca */
        char *http_proxy;        /* proxy for http:// URLs, or NULL (libcurl's own default) */
        char *https_proxy;       /* proxy for https:// URLs, or NULL */
        char *no_proxy;          /* hosts fetched without a proxy, or NULL */
        long connect_timeout_ms;
        long timeout_ms;
        size_t max_reply_bytes;
        /* Called while a request runs; returning true aborts it (-ECANCELED).
         * The agent uses it to stop at once on SIGTERM. */
        bool (*cancel)(void *userdata);
        void *cancel_userdata;
        struct client_stream *streaming; /* internal: the stream under way, for its ticks */
        void *curl;              /* CURL * */
        char errbuf[256];        /* libcurl's words for the last transport failure */
};

/* Read an agent token: trailing whitespace is trimmed; an empty token, one
 * longer than CLIENT_TOKEN_MAX or one with control characters or spaces
 * inside (it goes into a header) is refused. 0 and a new string in *token,
 * -EINVAL (bad content), -E2BIG (too long) or -errno of the read. */
int client_read_token(const char *path, char **token);

/* Whether `token` (NUL-terminated, as given inline: no trimming) can be an
 * agent token: 0, -EINVAL (empty, or spaces or control characters inside),
 * -E2BIG (longer than CLIENT_TOKEN_MAX). */
int client_check_token(const char *token);

/* Whether `url` is an http:// or https:// URL with a host; the base the
 * client is built on. */
bool client_url_is_valid(const char *url);

/* Set up the client; the strings are copied. curl_global_init() must have
 * run. -EINVAL for a bad URL or token, -ENOMEM, or -ELIBACC / -ELIBBAD when
 * libcurl cannot be loaded (curlload.h; the client's errbuf says why). */
int client_init(struct client *c, const char *base_url, const char *token, const char *ca);
/* Verify the coordinator with the CA certificates in `pem` (PEM text, handed
 * to libcurl from memory: CURLOPT_CAINFO_BLOB) instead of a CA file or the
 * system's; the text is copied. -EINVAL (empty), -ENOMEM. */
int client_set_ca_pem(struct client *c, const char *pem);
/* Fetch http:// and https:// URLs through these proxies (NULL: none
 * given for that scheme), except hosts in no_proxy; the strings are copied
 * and kept by clones. -ENOMEM. */
int client_set_proxy(struct client *c, const char *http_proxy, const char *https_proxy, const char *no_proxy);
/* A second client with src's base, token, CA and limits but its own
 * connection (a libcurl handle serves one thread, one transfer at a time);
 * an in-memory CA is copied too.
 * The cancel hook is not copied. -ENOMEM. */
int client_clone(struct client *dst, const struct client *src);
void client_done(struct client *c);

/* One request: `method` ("GET", "POST", "PUT"), `path` appended to the base
 * URL, `body` sent as JSON when not NULL. Returns 0 when the coordinator
 * answered (any HTTP status, in *status), with the reply parsed in *reply
 * (NULL when it is empty or not JSON; caller puts) and the Date header in
 * *date (NULL when absent; caller frees) — both optional. Returns -errno
 * when there was no answer: -ETIMEDOUT, -ECONNREFUSED, -EHOSTUNREACH
 * (name or route), -EFBIG (reply over the cap), -ECANCELED (cancel hook),
 * -ENOMEM, -EIO (anything else, TLS included; c->errbuf has the words). */
int client_request(struct client *c, const char *method, const char *path, json_object *body, long *status,
                   json_object **reply, char **date);

/* client_request with a body of len bytes sent as they are, under
 * `content_type` ("application/gzip"); the time limit grows by a second a MiB. */
int client_upload(struct client *c, const char *method, const char *path, const char *content_type, const void *data,
                  size_t len, long *status, json_object **reply);

/* Where a download goes: the body is handed to sink() as it arrives, but
 * only for a 2xx answer (any other answer's body is parsed as JSON, capped
 * at CLIENT_MAX_REPLY_BYTES, into *reply for its reason). */
struct client_stream {
        int (*sink)(void *userdata, const void *data, size_t len); /* <0 (-errno) aborts */
        void *userdata;
        uint64_t max_bytes;      /* body cap; 0: none */
        int sink_error;          /* out: what sink() returned when it aborted */
        int64_t content_length;  /* out: Content-Length of the answer, -1 when unknown */
        /* in: > 0 continues a broken transfer: "Range: bytes=N-" is sent and
         * the sink gets the bytes from N on either way (a 206 must start at
         * N, else -EPROTO; a server that answers 200 has its first N bytes
         * skipped). */
        uint64_t resume_from;
        /* in: CLOCK_MONOTONIC ms by which the whole transfer must be over
         * (0: none); past it the transfer fails with -ETIMEDOUT. */
        int64_t deadline_ms;
        /* in: sink is also called with no bytes (data NULL, len 0) while the
         * transfer runs, about once a second whether bytes come or not
         * (libcurl's progress callback), so that progress is told through a
         * stall; an error from it aborts as from a write. */
        bool ticks;
};

/* GET `target` as a stream: a path on the coordinator ("/api/..."), or an
 * absolute http(s) URL; the token is sent only to the coordinator, and only
 * downloads from elsewhere follow redirects (at most CLIENT_MAX_REDIRECTS,
 * http(s) only). No overall time limit but s->deadline_ms (images are
 * large); a transfer that stalls for CLIENT_STREAM_LOW_SPEED_S seconds fails
 * with -ETIMEDOUT.
 * Returns 0 with *status when the server answered; -errno as
 * client_request() does, -EFBIG past s->max_bytes, and s->sink_error (or
 * -EIO) when the sink aborted. -EINVAL for a target that is neither. */
int client_get_stream(struct client *c, const char *target, struct client_stream *s, long *status,
                      json_object **reply);

/* An answer in words for a log line or a step's error: "HTTP 404 (the
 * reply's reason)" for an answer (err 0), "<strerror> (libcurl's words)"
 * for none (err < 0). Into buf, cut to n. */
void client_describe(const struct client *cl, int err, long status, json_object *reply, char *buf, size_t n);
/* What a client_get_stream() that returned r with *status and *reply came
 * to: 0 for a 2xx; else -errno (-ENOENT for a 404, -EACCES for 401/403,
 * -EPROTO for another status, r itself for no answer) with the words in
 * err, or the sink's own error (s->sink_error), without words: its caller
 * knows what it was. */
int client_stream_result(const struct client *cl, const struct client_stream *s, int r, long status,
                         json_object *reply, char *err, size_t errlen);

/* ---- what the coordinator sends, read (pure; tests and fuzzers) ---------- */

/* An answer's body as one JSON document (trailing whitespace allowed); NULL
 * when it is empty, not JSON, or has anything else after the document. */
json_object *client_parse_reply(const char *data, size_t len);

/* One header line as libcurl hands it over (n bytes, not NUL-terminated,
 * line break included). A "Date:" line: its value without the surrounding
 * whitespace into out and true; false for any other line and for a value
 * that is empty, longer than CLIENT_DATE_MAX or holds a NUL byte. */
bool client_header_date(const char *line, size_t n, char out[CLIENT_DATE_MAX + 1]);
/* A "Content-Range: bytes FIRST-..." line: FIRST into *start and true;
 * false for any other line and for a FIRST that is not digits followed by
 * '-' or does not fit an int64_t. */
bool client_header_range_start(const char *line, size_t n, int64_t *start);
