/* The agent's HTTP client for the coordinator (DESIGN §4): one libcurl easy
 * handle reused for every call (so the connection stays open), JSON bodies
 * in and out, the bearer token, bounded connect and request times and a cap
 * on what the coordinator may send back. It does not decide what a status
 * means; run.c does. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define CLIENT_TOKEN_MAX 8192                    /* bytes of an agent token */
#define CLIENT_MAX_REPLY_BYTES (8u << 20)        /* 8 MiB */
#define CLIENT_CONNECT_TIMEOUT_MS 10000
#define CLIENT_REQUEST_TIMEOUT_MS 30000
#define CLIENT_DATE_MAX 128                      /* a Date header longer than this is ignored */

struct client {
        char *base;              /* "http(s)://host[:port]", no trailing slash */
        char *auth_header;       /* "Authorization: Bearer <token>" */
        char *ca;                /* CA bundle file, or NULL for the system's */
        long connect_timeout_ms;
        long timeout_ms;
        size_t max_reply_bytes;
        /* Called while a request runs; returning true aborts it (-ECANCELED).
         * The agent uses it to stop at once on SIGTERM. */
        bool (*cancel)(void *userdata);
        void *cancel_userdata;
        void *curl;              /* CURL * */
        char errbuf[256];        /* libcurl's words for the last transport failure */
};

/* Read an agent token: trailing whitespace is trimmed; an empty token, one
 * longer than CLIENT_TOKEN_MAX or one with control characters or spaces
 * inside (it goes into a header) is refused. 0 and a new string in *token,
 * -EINVAL (bad content), -E2BIG (too long) or -errno of the read. */
int client_read_token(const char *path, char **token);

/* Whether `url` is an http:// or https:// URL with a host; the base the
 * client is built on. */
bool client_url_is_valid(const char *url);

/* Set up the client; the strings are copied. curl_global_init() must have
 * run. -EINVAL for a bad URL or token, -ENOMEM. */
int client_init(struct client *c, const char *base_url, const char *token, const char *ca);
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
