/* libmicrohttpd glue (http.h): body accumulation with a hard cap, the fixed
 * validation order of STYLE.md, the route table, error and JSON answers,
 * request metrics; and what a hostile client meets: a connection limit from
 * the file limit, a cap per address, a deadline for each request's header,
 * unambiguous framing, and JSON bodies that are UTF-8 with no NUL. */
#include "http/http.h"
#include "jsonread.h"
#include "http/tlscreds.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "growbuf.h"
#include "log.h"

/* Latency buckets of the histogram, in seconds. */
static const double buckets[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5 };
#define N_BUCKETS (sizeof buckets / sizeof *buckets)
#define MAX_STATUS_SLOTS 18
/* Buffer of a streamed answer: the most one read callback fills. */
#define STREAM_BLOCK (256 * 1024)

struct route_stats {
        _Atomic uint64_t by_status[MAX_STATUS_SLOTS]; /* index via status_slot() */
        _Atomic uint64_t bucket[N_BUCKETS + 1];
        _Atomic uint64_t count;
        _Atomic uint64_t sum_us;
};

static const int status_codes[MAX_STATUS_SLOTS] = { 200, 201, 202, 204, 206, 304, 400, 401, 403, 404,
                                                    405, 409, 413, 415, 416, 500, 503, 0 };

static size_t status_slot(int status) {
        for (size_t i = 0; i < MAX_STATUS_SLOTS - 1; i++)
                if (status_codes[i] == status)
                        return i;
        return MAX_STATUS_SLOTS - 1; /* "other" */
}

/* Descriptors kept for the rest of musterd (store, log, listening socket,
 * the pool's wake-up fds, files opened for a moment) before connections. */
#define HTTP_FD_RESERVE 64
/* How often the header deadline is looked at. */
#define DEADLINE_TICK_MS 250

/* A connection as the header deadline sees it (MHD_OPTION_NOTIFY_CONNECTION
 * adds and removes it; its socket stays open until it is removed). */
struct conn_track {
        int fd;
        bool waiting;        /* for a request's header */
        int64_t since_ms;    /* accepted, or the previous request done */
        struct conn_track *prev, *next;
};

struct http_server {
        struct MHD_Daemon *daemon;
        struct http_server_config cfg;
        struct route_stats *stats; /* n_routes + 1 (unmatched) */
        uint16_t port;
        pthread_mutex_t track_lock; /* the list and each entry's fields */
        pthread_cond_t track_wake;
        struct conn_track *tracked;
        pthread_t reaper;
        bool reaper_running, stopping;
        _Atomic unsigned header_timeout_ms;
        _Atomic uint64_t header_timeouts; /* connections cut at the deadline */
        _Atomic size_t body_memory;       /* bytes held by bodies in flight (their buffers) */
        _Atomic uint64_t body_memory_refusals; /* 503s for max_body_memory */
        bool https;
};

struct conn_state {
        char *body;
        size_t len, cap;  /* cap: what body_memory counts for it */
        size_t limit;     /* this request's body limit (its route's and caller's) */
        bool too_large;
        bool over_budget; /* max_body_memory would be passed: dropped, 503 */
        void *auth;       /* what the auth hook left, at the header */
        struct timespec start;
};

/* Take n more bytes of the bodies' budget: false (nothing taken) when that
 * would pass max_body_memory. */
static bool body_memory_take(struct http_server *s, size_t n) {
        size_t cap = s->cfg.max_body_memory;
        size_t cur = atomic_load(&s->body_memory);
        do {
                if (cap && (n > cap || cur > cap - n))
                        return false;
        } while (!atomic_compare_exchange_weak(&s->body_memory, &cur, cur + n));
        return true;
}

/* Grow cs->body to hold `need` bytes, counted against the budget: exactly
 * (a declared length), or doubling (a chunked body). */
static int body_reserve(struct http_server *s, struct conn_state *cs, size_t need, bool exact) {
        if (need <= cs->cap)
                return 0;
        size_t cap = exact ? need : cs->cap ? cs->cap : 4096;
        while (cap < need)
                cap *= 2;
        if (cap > cs->limit + 1)
                cap = cs->limit + 1 > need ? cs->limit + 1 : need;
        if (!body_memory_take(s, cap - cs->cap))
                return -ENOBUFS;
        char *b = realloc(cs->body, cap);
        if (!b) {
                atomic_fetch_sub(&s->body_memory, cap - cs->cap);
                return -ENOMEM;
        }
        cs->body = b;
        cs->cap = cap;
        return 0;
}

static void body_release(struct http_server *s, struct conn_state *cs) {
        if (cs->cap)
                atomic_fetch_sub(&s->body_memory, cs->cap);
        free(cs->body);
        cs->body = NULL;
        cs->cap = cs->len = 0;
}

static void response_clear(struct http_response *resp) {
        json_object_put(resp->json);
        resp->json = NULL;
        free(resp->text);
        resp->text = NULL;
        resp->text_len = 0;
        if (resp->has_file && resp->file_fd >= 0)
                close(resp->file_fd);
        resp->has_file = false;
        resp->file_fd = -1;
        if (resp->stream_read && resp->stream_free)
                resp->stream_free(resp->stream_cls);
        resp->stream_read = NULL;
        resp->stream_free = NULL;
        resp->stream_cls = NULL;
        resp->stream_size = 0;
        for (int i = 0; i < resp->n_headers; i++)
                free(resp->headers[i].value);
        resp->n_headers = 0;
}

void http_error(struct http_response *resp, int status, const char *fmt, ...) {
        char reason[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, sizeof reason, fmt, ap);
        va_end(ap);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "code", json_object_new_int(status));
        json_object_object_add(o, "reason", json_object_new_string(reason));
        http_json(resp, status, o);
}

void http_json(struct http_response *resp, int status, json_object *obj) {
        response_clear(resp);
        resp->status = status;
        resp->json = obj;
}

void http_text(struct http_response *resp, int status, char *text, size_t len, const char *content_type) {
        response_clear(resp);
        resp->status = status;
        resp->text = text;
        resp->text_len = len;
        resp->content_type = content_type;
}

void http_file(struct http_response *resp, int fd, uint64_t size, const char *content_type) {
        response_clear(resp);
        resp->status = 200;
        resp->has_file = true;
        resp->file_fd = fd;
        resp->file_size = size;
        resp->content_type = content_type;
}

void http_stream(struct http_response *resp, int status, uint64_t size, http_stream_read read,
                 void (*free_cls)(void *cls), void *cls, const char *content_type) {
        response_clear(resp);
        resp->status = status;
        resp->stream_read = read;
        resp->stream_free = free_cls;
        resp->stream_cls = cls;
        resp->stream_size = size;
        resp->content_type = content_type;
}

int http_header_add(struct http_response *resp, const char *name, const char *fmt, ...) {
        char value[HTTP_HEADER_VALUE_MAX];
        va_list ap;
        if (resp->n_headers >= HTTP_MAX_HEADERS)
                return -E2BIG;
        va_start(ap, fmt);
        int n = vsnprintf(value, sizeof value, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -EINVAL;
        if ((size_t) n >= sizeof value)
                return -E2BIG;
        if (strpbrk(value, "\r\n"))
                return -EINVAL;
        char *v = strdup(value);
        if (!v)
                return -ENOMEM;
        resp->headers[resp->n_headers++] = (struct http_resp_header) { .name = name, .value = v };
        return 0;
}

const char *http_header(const struct http_request *req, const char *name) {
        if (!req->conn)
                return NULL;
        return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

bool http_route_match(const char *pattern, const char *path, struct http_request *req) {
        const char *p = pattern, *s = path;
        int n = 0;

        while (*p && *s) {
                if (*p == '{') {
                        const char *close = strchr(p, '}');
                        if (!close)
                                return false;
                        const char *end = strchr(s, '/');
                        size_t len = end ? (size_t) (end - s) : strlen(s);
                        if (len == 0 || len >= HTTP_PARAM_MAX || n >= HTTP_MAX_PARAMS)
                                return false;
                        if (req) {
                                memcpy(req->params[n], s, len);
                                req->params[n][len] = '\0';
                        }
                        n++;
                        s += len;
                        p = close + 1;
                        continue;
                }
                if (*p != *s)
                        return false;
                p++;
                s++;
        }
        /* A single trailing slash on the path is tolerated. */
        if (*s == '/' && s[1] == '\0')
                s++;
        if (*p || *s)
                return false;
        if (req)
                req->n_params = n;
        return true;
}

const char *http_query(const struct http_request *req, const char *key) {
        if (!req->conn)
                return NULL;
        return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

int http_parse_listen(const char *listen, struct sockaddr_storage *ss, unsigned *len) {
        char host[128];
        const char *colon;
        memset(ss, 0, sizeof *ss);
        if (!listen || !*listen)
                return -EINVAL;
        if (listen[0] == '[') {
                const char *close = strchr(listen, ']');
                if (!close || close[1] != ':' || (size_t) (close - listen - 1) >= sizeof host)
                        return -EINVAL;
                memcpy(host, listen + 1, (size_t) (close - listen - 1));
                host[close - listen - 1] = '\0';
                colon = close + 1;
        } else {
                colon = strrchr(listen, ':');
                if (!colon || (size_t) (colon - listen) >= sizeof host)
                        return -EINVAL;
                memcpy(host, listen, (size_t) (colon - listen));
                host[colon - listen] = '\0';
        }
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (colon[1] == '\0' || *end || port < 0 || port > 65535)
                return -EINVAL;
        struct sockaddr_in *in4 = (struct sockaddr_in *) ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) ss;
        if (!*host || strcmp(host, "*") == 0) {
                in6->sin6_family = AF_INET6;
                in6->sin6_addr = in6addr_any;
                in6->sin6_port = htons((uint16_t) port);
                *len = sizeof *in6;
        } else if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
                in4->sin_family = AF_INET;
                in4->sin_port = htons((uint16_t) port);
                *len = sizeof *in4;
        } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t) port);
                *len = sizeof *in6;
        } else if (strcmp(host, "localhost") == 0) {
                in4->sin_family = AF_INET;
                in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                in4->sin_port = htons((uint16_t) port);
                *len = sizeof *in4;
        } else
                return -EINVAL;
        return 0;
}

unsigned http_connection_limit(uint64_t nofile) {
        const uint64_t least = 16;
        if (nofile == (uint64_t) RLIM_INFINITY || nofile >= HTTP_FD_RESERVE + 2 * (uint64_t) HTTP_MAX_CONNECTIONS)
                return HTTP_MAX_CONNECTIONS;
        uint64_t n = nofile > HTTP_FD_RESERVE ? (nofile - HTTP_FD_RESERVE) / 2 : 0;
        return (unsigned) (n > least ? n : least);
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629 §4), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n) {
        unsigned char c = p[0];
        unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
        size_t len;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                len = 2;
        else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                if (c == 0xe0)
                        lo = 0xa0; /* overlong */
                else if (c == 0xed)
                        hi = 0x9f; /* surrogates */
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                if (c == 0xf0)
                        lo = 0x90; /* overlong */
                else if (c == 0xf4)
                        hi = 0x8f; /* above U+10FFFF */
        } else
                return 0; /* a continuation byte, C0, C1, F5..FF */
        if (n < len || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (p[i] < 0x80 || p[i] > 0xbf)
                        return 0;
        return len;
}

bool http_utf8_valid(const char *s, size_t len) {
        const unsigned char *p = (const unsigned char *) s;
        for (size_t i = 0, n; i < len; i += n)
                if (!(n = utf8_seq(p + i, len - i)))
                        return false;
        return true;
}

char *http_utf8_repair(const char *s, size_t len, size_t *out_len) {
        const unsigned char *p = (const unsigned char *) s;
        char *out = malloc(len * 3 + 1); /* each byte may become U+FFFD */
        size_t o = 0;
        if (!out)
                return NULL;
        for (size_t i = 0, n; i < len; i += n) {
                n = utf8_seq(p + i, len - i);
                if (n) {
                        memcpy(out + o, p + i, n);
                        o += n;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        n = 1;
                }
        }
        out[o] = '\0';
        *out_len = o;
        return out;
}

int http_json_text_check(const char *text, size_t len, char *why, size_t whylen) {
        const unsigned char *p = (const unsigned char *) text;
        bool in_string = false;

        for (size_t i = 0; i < len;) {
                if (p[i] == 0) {
                        snprintf(why, whylen, "holds a NUL byte (at byte %zu)", i);
                        return -EINVAL;
                }
                if (p[i] >= 0x80) {
                        size_t n = utf8_seq(p + i, len - i);
                        if (!n) {
                                snprintf(why, whylen, "is not valid UTF-8 (at byte %zu)", i);
                                return -EINVAL;
                        }
                        i += n;
                        continue;
                }
                if (p[i] == '"')
                        in_string = !in_string;
                else if (p[i] == '\\' && in_string) {
                        if (len - i >= 6 && memcmp(p + i + 1, "u0000", 5) == 0) {
                                snprintf(why, whylen, "holds a NUL character (\\u0000 at byte %zu)", i);
                                return -EINVAL;
                        }
                        /* Step over the escaped character (a quote or a backslash among
                         * them); a NUL or non-ASCII byte there is looked at as any. */
                        if (len - i >= 2 && p[i + 1] >= 0x20 && p[i + 1] < 0x80)
                                i++;
                }
                i++;
        }
        return 0;
}

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void record(struct http_server *s, size_t route, int status, const struct timespec *start) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double secs = (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
        struct route_stats *st = &s->stats[route == HTTP_ROUTE_UNMATCHED ? s->cfg.n_routes : route];
        atomic_fetch_add(&st->by_status[status_slot(status)], 1);
        atomic_fetch_add(&st->count, 1);
        atomic_fetch_add(&st->sum_us, (uint64_t) (secs * 1e6));
        size_t b = 0;
        while (b < N_BUCKETS && secs > buckets[b])
                b++;
        atomic_fetch_add(&st->bucket[b], 1);
}

/* A streamed answer as libmicrohttpd holds it. */
struct stream {
        http_stream_read read;
        void (*free_cls)(void *cls);
        void *cls;
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
        struct stream *st = cls;
        ssize_t n = st->read(st->cls, pos, buf, max);
        /* The size is known: no more bytes before its end is an error too. */
        return n > 0 ? n : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls) {
        struct stream *st = cls;
        if (st->free_cls)
                st->free_cls(st->cls);
        free(st);
}

static enum MHD_Result send_response(struct MHD_Connection *conn, struct http_response *resp) {
        const char *text;
        const char *ctype;
        size_t len;
        struct MHD_Response *r;
        if (resp->stream_read) {
                ctype = resp->content_type ? resp->content_type : "application/octet-stream";
                struct stream *st = malloc(sizeof *st);
                if (!st)
                        return MHD_NO; /* response_clear() frees cls */
                *st = (struct stream) { resp->stream_read, resp->stream_free, resp->stream_cls };
                r = MHD_create_response_from_callback(resp->stream_size, STREAM_BLOCK, stream_read, st, stream_free);
                if (!r) {
                        free(st);
                        return MHD_NO;
                }
                /* MHD owns cls from here, and frees it through stream_free. */
                resp->stream_read = NULL;
                resp->stream_free = NULL;
                resp->stream_cls = NULL;
        } else if (resp->has_file) {
                ctype = resp->content_type ? resp->content_type : "application/octet-stream";
                /* MHD owns the descriptor from here, and closes it. */
                r = MHD_create_response_from_fd64(resp->file_size, resp->file_fd);
                if (!r)
                        return MHD_NO;
                resp->has_file = false;
                resp->file_fd = -1;
        } else {
                _cleanup_free_ char *repaired = NULL;
                if (resp->json) {
                        text = json_object_to_json_string_ext(resp->json,
                                                              JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                        ctype = "application/json";
                        len = strlen(text);
                        /* json-c copies string bytes as they are: a value stored before the
                         * door checked bodies, a URL echoed in an error or a reason cut
                         * mid-character must not make the answer invalid JSON. */
                        if (!http_utf8_valid(text, len)) {
                                repaired = http_utf8_repair(text, len, &len);
                                if (!repaired)
                                        return MHD_NO;
                                text = repaired;
                        }
                } else {
                        text = resp->text ? resp->text : "";
                        ctype = resp->content_type ? resp->content_type : "text/plain; charset=utf-8";
                        len = resp->text && resp->text_len ? resp->text_len : strlen(text);
                }
                r = MHD_create_response_from_buffer(len, (void *) text, MHD_RESPMEM_MUST_COPY);
                if (!r)
                        return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
        if (resp->next_after > 0) {
                char cursor[24];
                snprintf(cursor, sizeof cursor, "%lld", (long long) resp->next_after);
                MHD_add_response_header(r, "X-Next-After", cursor);
        }
        for (int i = 0; i < resp->n_headers; i++)
                MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value);
        if (resp->close)
                MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
        enum MHD_Result ret = MHD_queue_response(conn, (unsigned) resp->status, r);
        MHD_destroy_response(r);
        return ret;
}

static const char *bearer_of(struct MHD_Connection *conn) {
        const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (!h || strncasecmp(h, "Bearer ", 7) != 0)
                return NULL;
        h += 7;
        while (*h == ' ')
                h++;
        return *h ? h : NULL;
}

size_t http_route_find(const struct http_route *routes, size_t n_routes, const char *method, const char *path,
                       struct http_request *req, bool *path_known) {
        *path_known = false;
        for (size_t i = 0; i < n_routes; i++) {
                if (!http_route_match(routes[i].pattern, path, NULL))
                        continue;
                *path_known = true;
                if (strcmp(routes[i].method, method) == 0) {
                        http_route_match(routes[i].pattern, path, req);
                        return i;
                }
        }
        return HTTP_ROUTE_UNMATCHED;
}

/* The connection's entry for the header deadline: waiting for a header (from
 * now) or not. */
static void track_request(struct http_server *s, struct MHD_Connection *conn, bool waiting) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        struct conn_track *t = ci ? ci->socket_context : NULL;
        if (!t)
                return;
        pthread_mutex_lock(&s->track_lock);
        t->waiting = waiting;
        t->since_ms = mono_ms();
        pthread_mutex_unlock(&s->track_lock);
}

struct framing {
        unsigned n_length, n_coding;
        const char *length, *coding;
        bool lengths_differ;
};

static enum MHD_Result framing_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
        struct framing *f = cls;
        value = value ? value : "";
        if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
                if (f->n_length++ == 0)
                        f->length = value;
                else if (strcmp(f->length, value) != 0)
                        f->lengths_differ = true;
        } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
                f->n_coding++;
                f->coding = value;
        }
        return MHD_YES;
}

/* RFC 9112 §6.1 and §6.3: a request whose body length is ambiguous. libmicrohttpd
 * 0.9.75 frames by the first Content-Length, and by Transfer-Encoding when
 * both come, and keeps the connection: behind a proxy that frames otherwise,
 * that is request smuggling. Fills resp (which closes the connection) and
 * returns true when the request must be refused. */
static bool framing_refused(struct MHD_Connection *conn, const char *version, struct http_response *resp) {
        struct framing f = { 0 };
        MHD_get_connection_values(conn, MHD_HEADER_KIND, framing_header, &f);
        if (f.n_coding && f.n_length)
                http_error(resp, 400, "a request must not have both Transfer-Encoding and Content-Length");
        else if (f.lengths_differ)
                http_error(resp, 400, "the request has Content-Length headers with different values");
        else if (f.n_coding > 1)
                http_error(resp, 400, "the request has more than one Transfer-Encoding header");
        else if (f.n_coding && strcmp(version, MHD_HTTP_VERSION_1_0) == 0)
                http_error(resp, 400, "an HTTP/1.0 request must not have Transfer-Encoding");
        else if (f.n_coding && strcasecmp(f.coding, "chunked") != 0)
                http_error(resp, 501, "transfer coding '%s' is not supported (only chunked)", f.coding);
        else
                return false;
        resp->close = true;
        return true;
}

/* The 503 for a body past [server] max_body_memory, counted. */
static void over_budget(struct http_server *s, struct http_response *resp) {
        atomic_fetch_add(&s->body_memory_refusals, 1);
        http_error(resp, 503, "musterd holds as many request bodies as it may ([server] max_body_memory); try again "
                              "shortly");
        http_header_add(resp, "Retry-After", "2");
}

/* The JSON body's tree into req->body, or a 400 in resp and -1. */
static int parse_body(const struct conn_state *cs, struct http_request *req, struct http_response *resp) {
        struct json_tokener *tok = json_tokener_new_ex(64);
        req->body = tok ? json_tokener_parse_ex(tok, cs->body, (int) cs->len) : NULL;
        enum json_tokener_error jerr = tok ? json_tokener_get_error(tok) : json_tokener_error_size;
        size_t used = tok ? json_tokener_get_parse_end(tok) : 0;
        if (tok)
                json_tokener_free(tok);
        if (req->body && jerr == json_tokener_success && used == cs->len)
                return 0;
        http_error(resp, 400, "request body is not valid JSON (%s)",
                   jerr == json_tokener_success ? "trailing data" : json_tokener_error_desc(jerr));
        return -1;
}

/* Answer with the header alone in (no body byte read): counted, sent, freed. */
static enum MHD_Result answer_at_header(struct http_server *s, struct MHD_Connection *conn, size_t route,
                                        const struct conn_state *cs, struct http_response *resp) {
        record(s, route, resp->status, &cs->start);
        enum MHD_Result ret = send_response(conn, resp);
        response_clear(resp);
        return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
        struct http_server *s = cls;
        struct conn_state *cs = *con_cls;

        if (!cs) {
                cs = calloc(1, sizeof *cs);
                if (!cs)
                        return MHD_NO;
                clock_gettime(CLOCK_MONOTONIC, &cs->start);
                *con_cls = cs;
                track_request(s, conn, false); /* the header is in */
                struct http_response resp = { .status = 500, .file_fd = -1 };
                /* Answered before the body: libmicrohttpd reads no more of it. */
                if (framing_refused(conn, version, &resp))
                        return answer_at_header(s, conn, HTTP_ROUTE_UNMATCHED, cs, &resp);
                /* The token first, from the header alone: a request without a
                 * valid one is answered before any byte of its body is read. */
                struct http_request req = { .method = method, .path = url, .conn = conn };
                bool known;
                size_t ri = http_route_find(s->cfg.routes, s->cfg.n_routes, method, url, &req, &known);
                const struct http_route *route = ri == HTTP_ROUTE_UNMATCHED ? NULL : &s->cfg.routes[ri];
                const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
                bool has_body = (cl && strcmp(cl, "0") != 0) ||
                                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
                if (route && !(route->flags & ROUTE_PUBLIC) && s->cfg.auth) {
                        req.bearer = bearer_of(conn);
                        if (!req.bearer && (route->flags & ROUTE_QUERY_TOKEN)) {
                                const char *q = http_query(&req, "token");
                                req.bearer = q && *q ? q : NULL;
                        }
                        if (!(route->flags & ROUTE_TOKEN_OPTIONAL && !req.bearer)) {
                                if (!s->cfg.auth(s->cfg.app, route, &req, &resp)) {
                                        if (req.auth && s->cfg.auth_free)
                                                s->cfg.auth_free(req.auth);
                                        /* Its body is not read: the connection ends with the answer. */
                                        resp.close = resp.close || has_body;
                                        return answer_at_header(s, conn, ri, cs, &resp);
                                }
                                cs->auth = req.auth;
                        }
                }
                /* The body limit is the route's (a large body for the callers
                 * the auth hook allows it): set before any byte. */
                cs->limit = s->cfg.max_body_bytes;
                if (route && (route->flags & ROUTE_LARGE_BODY) && (req.large_body_ok || !s->cfg.auth) &&
                    s->cfg.max_large_body_bytes > cs->limit)
                        cs->limit = s->cfg.max_large_body_bytes;
                if (route && (route->flags & ROUTE_UPLOAD) && s->cfg.max_upload_bytes)
                        cs->limit = s->cfg.max_upload_bytes;
                /* Refuse a declared oversize body before reading it; hold
                 * the room for a declared one at once, within the budget. */
                unsigned long long declared = cl ? strtoull(cl, NULL, 10) : 0;
                if (declared > cs->limit)
                        cs->too_large = true;
                else if (declared > 0) {
                        int k = body_reserve(s, cs, (size_t) declared + 1, true);
                        if (k == -ENOMEM)
                                return MHD_NO;
                        cs->over_budget = k < 0;
                }
                if (cs->over_budget && route) {
                        over_budget(s, &resp);
                        resp.close = true;
                        return answer_at_header(s, conn, ri, cs, &resp);
                }
                return MHD_YES;
        }
        if (*upload_size) {
                if (!cs->too_large && !cs->over_budget) {
                        if (cs->len + *upload_size > cs->limit) {
                                cs->too_large = true;
                                body_release(s, cs);
                        } else {
                                int k = body_reserve(s, cs, cs->len + *upload_size + 1, false);
                                if (k == -ENOMEM)
                                        return MHD_NO;
                                if (k < 0) {
                                        /* Dropped from here on, answered 503 at its end. */
                                        cs->over_budget = true;
                                        body_release(s, cs);
                                        *upload_size = 0;
                                        return MHD_YES;
                                }
                                memcpy(cs->body + cs->len, upload, *upload_size);
                                cs->len += *upload_size;
                                cs->body[cs->len] = '\0';
                        }
                }
                *upload_size = 0; /* consumed (or dropped past the cap) */
                return MHD_YES;
        }

        struct http_request req = { .method = method, .path = url, .conn = conn };
        struct http_response resp = { .status = 500, .file_fd = -1 };
        bool path_known;
        size_t ri = http_route_find(s->cfg.routes, s->cfg.n_routes, method, url, &req, &path_known);
        const struct http_route *route = ri == HTTP_ROUTE_UNMATCHED ? NULL : &s->cfg.routes[ri];

        if (!route) {
                if (path_known)
                        http_error(&resp, 405, "method %s is not allowed on %s", method, url);
                else
                        http_error(&resp, 404, "no such route: %s %s", method, url);
                goto done;
        }
        req.bearer = bearer_of(conn);
        if (!req.bearer && (route->flags & ROUTE_QUERY_TOKEN)) {
                const char *q = http_query(&req, "token");
                req.bearer = q && *q ? q : NULL;
        }
        /* The token was checked with the header (it answered then if not good). */
        req.auth = cs->auth;
        cs->auth = NULL;
        if (cs->over_budget) {
                over_budget(s, &resp);
                goto done;
        }
        if (route->flags & ROUTE_BODY) {
                const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
                if (cs->too_large) {
                        http_error(&resp, 413, "request body is larger than %zu bytes", cs->limit);
                        goto done;
                }
                if (ct && strncasecmp(ct, "application/json", 16) != 0) {
                        http_error(&resp, 415, "content type must be application/json, not %s", ct);
                        goto done;
                }
                if (!cs->body || cs->len == 0) {
                        http_error(&resp, 400, "a JSON object body is required");
                        goto done;
                }
                if (strlen(cs->body) != cs->len) {
                        http_error(&resp, 400, "request body contains a NUL byte");
                        goto done;
                }
                /* What its parse would hold, bounded before it starts. */
                size_t cost = json_parse_cost(cs->body, cs->len);
                if (!json_parse_cost_ok(cost, cs->len)) {
                        http_error(&resp, 413, "request body of %zu bytes would take about %zu bytes to parse, over "
                                               "%d times its size (too many small values)",
                                   cs->len, cost, JSON_PARSE_COST_RATIO);
                        goto done;
                }
                if (!(route->flags & ROUTE_BODY_TEXT) && parse_body(cs, &req, &resp) < 0)
                        goto done;
                if (req.body && !json_object_is_type(req.body, json_type_object)) {
                        http_error(&resp, 400, "request body must be a JSON object");
                        goto done;
                }
                /* Once here for every route: no handler sees invalid UTF-8 or a NUL
                 * (a name cut at a NUL, "bob\u0000-contractor", is another name). */
                char why[96];
                if (http_json_text_check(cs->body, cs->len, why, sizeof why) < 0) {
                        http_error(&resp, 400, "request body %s", why);
                        goto done;
                }
                req.body_raw = cs->body;
                req.body_len = cs->len;
        } else if (cs->too_large) {
                http_error(&resp, 413, "request body is larger than %zu bytes", cs->limit);
                goto done;
        } else if (route->flags & ROUTE_UPLOAD) {
                req.body_raw = cs->body;
                req.body_len = cs->body ? cs->len : 0;
        }
        route->fn(s->cfg.app, &req, &resp);
done:
        if (route && req.auth && s->cfg.after)
                s->cfg.after(s->cfg.app, route, &req, resp.status);
        record(s, ri, resp.status, &cs->start);
        enum MHD_Result ret = send_response(conn, &resp);
        json_object_put(req.body);
        if (req.auth && s->cfg.auth_free)
                s->cfg.auth_free(req.auth);
        response_clear(&resp);
        return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
        struct conn_state *cs = *con_cls;
        /* A kept-alive connection waits for its next request's header from now. */
        track_request(cls, conn, true);
        if (cs) {
                struct http_server *s = cls;
                body_release(s, cs);
                if (cs->auth && s->cfg.auth_free)
                        s->cfg.auth_free(cs->auth);
                free(cs);
                *con_cls = NULL;
        }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
        struct http_server *s = cls;
        struct conn_track *t = *socket_context;

        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
                t = ci ? calloc(1, sizeof *t) : NULL;
                if (!t)
                        return; /* untracked: only the idle timeout applies to it */
                t->fd = ci->connect_fd;
                t->waiting = true;
                t->since_ms = mono_ms();
                pthread_mutex_lock(&s->track_lock);
                t->next = s->tracked;
                if (s->tracked)
                        s->tracked->prev = t;
                s->tracked = t;
                pthread_mutex_unlock(&s->track_lock);
                *socket_context = t;
        } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && t) {
                /* Called before libmicrohttpd closes the socket: the reaper never
                 * touches a descriptor number that was reused. */
                pthread_mutex_lock(&s->track_lock);
                if (t->prev)
                        t->prev->next = t->next;
                else
                        s->tracked = t->next;
                if (t->next)
                        t->next->prev = t->prev;
                pthread_mutex_unlock(&s->track_lock);
                free(t);
                *socket_context = NULL;
        }
}

/* The header deadline. libmicrohttpd's own timeout is an idle one (each byte
 * restarts it), so a client sending a header byte now and then would keep
 * its connection for ever: past the deadline, the socket is shut down and
 * libmicrohttpd, reading its end, closes the connection. */
static void *reaper_main(void *arg) {
        struct http_server *s = arg;
        pthread_mutex_lock(&s->track_lock);
        while (!s->stopping) {
                struct timespec until;
                clock_gettime(CLOCK_MONOTONIC, &until);
                until.tv_nsec += DEADLINE_TICK_MS * 1000000L;
                if (until.tv_nsec >= 1000000000L) {
                        until.tv_sec++;
                        until.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&s->track_wake, &s->track_lock, &until);
                unsigned limit = atomic_load(&s->header_timeout_ms);
                if (s->stopping || !limit)
                        continue;
                int64_t now = mono_ms();
                for (struct conn_track *t = s->tracked; t; t = t->next)
                        if (t->waiting && now - t->since_ms >= (int64_t) limit) {
                                (void) shutdown(t->fd, SHUT_RDWR);
                                t->waiting = false;
                                atomic_fetch_add(&s->header_timeouts, 1);
                        }
        }
        pthread_mutex_unlock(&s->track_lock);
        return NULL;
}

void http_server_set_header_timeout(struct http_server *s, unsigned seconds) {
        atomic_store(&s->header_timeout_ms, seconds > UINT_MAX / 1000 ? UINT_MAX : seconds * 1000);
}

/* libmicrohttpd's messages are mostly about clients ("Connection was closed
 * by remote side with incomplete request"): any client could fill the
 * journal with them, so they are debug lines. */
static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap) {
        char line[512];
        vsnprintf(line, sizeof line, fmt, ap);
        line[strcspn(line, "\n")] = '\0';
        log_debug("http", "%s", line);
}

static void server_free(struct http_server *s) {
        if (s->reaper_running) {
                pthread_mutex_lock(&s->track_lock);
                s->stopping = true;
                pthread_cond_signal(&s->track_wake);
                pthread_mutex_unlock(&s->track_lock);
                pthread_join(s->reaper, NULL);
        }
        if (s->daemon)
                MHD_stop_daemon(s->daemon); /* every connection's NOTIFY_CLOSED */
        pthread_cond_destroy(&s->track_wake);
        pthread_mutex_destroy(&s->track_lock);
        if (s->https)
                tlscreds_clear();
        free(s->stats);
        free(s);
}

int http_server_set_certificate(struct http_server *s, const char *cert_pem, const char *key_pem) {
        if (!s->https)
                return -EINVAL;
        return tlscreds_set(cert_pem, key_pem);
}

int http_server_start(const struct http_server_config *cfg, struct http_server **out) {
        struct sockaddr_storage ss;
        unsigned slen;
        int r = http_parse_listen(cfg->listen, &ss, &slen);
        if (r < 0)
                return r;
        struct http_server *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->cfg = *cfg;
        pthread_mutex_init(&s->track_lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->track_wake, &ca);
        pthread_condattr_destroy(&ca);
        http_server_set_header_timeout(s, cfg->header_timeout_s);
        s->stats = calloc(cfg->n_routes + 1, sizeof *s->stats);
        if (!s->stats) {
                server_free(s);
                return -ENOMEM;
        }
        unsigned limit = cfg->max_connections;
        if (!limit) {
                struct rlimit rl = { .rlim_cur = 1024 };
                (void) getrlimit(RLIMIT_NOFILE, &rl);
                limit = http_connection_limit(rl.rlim_cur);
                log_info("http", "At most %u connections (file limit %llu)", limit, (unsigned long long) rl.rlim_cur);
        }
        /* One address never holds more than a quarter of them. */
        unsigned per_address = cfg->max_connections_per_address;
        if (per_address && per_address > (limit / 4 ? limit / 4 : 1))
                per_address = limit / 4 ? limit / 4 : 1;
        /* The default SO_REUSEADDR only (a restart binds past TIME_WAIT): with
         * SO_REUSEPORT a second process of the same user could bind the port
         * too and silently take half the connections. */
        /* poll(2), not epoll: 0.9.75's edge-triggered epoll misses a client's
         * close that arrives with its last bytes, and such a connection then
         * waits for the idle timeout (fixed upstream in 1.0). */
        unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
        if (ss.ss_family == AF_INET6)
                flags |= MHD_USE_DUAL_STACK;
        /* HTTPS through libmicrohttpd's GnuTLS with cfg's priorities (by
         * default TLS 1.3, and 1.2 with ECDHE and AEAD ciphers only) and the
         * certificate tlscreds.c presents (replaceable while serving). */
        const char *prio = cfg->tls_priorities && cfg->tls_priorities[0] ? cfg->tls_priorities
                                                                           : HTTP_TLS_PRIORITIES_DEFAULT;
        struct MHD_OptionItem tls[] = {
                { MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *) tlscreds_retrieve },
                { MHD_OPTION_HTTPS_PRIORITIES, 0, (void *) prio },
                { MHD_OPTION_END, 0, NULL },
        };
        s->https = cfg->tls_cert_pem && cfg->tls_key_pem;
        if (s->https && (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
                         MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES)) {
                server_free(s);
                return -EPROTONOSUPPORT;
        }
        if (s->https && (r = tlscreds_set(cfg->tls_cert_pem, cfg->tls_key_pem)) < 0) {
                server_free(s);
                return r;
        }
        if (s->https)
                flags |= MHD_USE_TLS;
        else
                tls[0].option = MHD_OPTION_END;
        /* Set before the first worker serves: a handler may read it (musterd's
         * /metrics does), and a worker answers while others are still being
         * started. */
        *out = s;
        s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                                     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
                                     MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
                                     MHD_OPTION_THREAD_POOL_SIZE, (unsigned) (cfg->threads ? cfg->threads : 4),
                                     MHD_OPTION_CONNECTION_LIMIT, limit,
                                     MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address,
                                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 60,
                                     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                     MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                                     MHD_OPTION_ARRAY, tls,
                                     MHD_OPTION_END);
        if (!s->daemon) {
                *out = NULL;
                server_free(s);
                return -EADDRINUSE;
        }
        if ((r = -pthread_create(&s->reaper, NULL, reaper_main, s)) < 0) {
                *out = NULL;
                server_free(s);
                return r;
        }
        s->reaper_running = true;
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
        s->port = info ? info->port : 0;
        return 0;
}

uint16_t http_server_port(const struct http_server *s) {
        return s->port;
}

void http_server_stop(struct http_server *s) {
        if (s)
                server_free(s);
}

int http_server_metrics(struct http_server *s, struct growbuf *out, size_t max) {
        int r = growbuf_printf(out, max, "# HELP muster_http_requests_total HTTP requests by route and status.\n"
                                         "# TYPE muster_http_requests_total counter\n");
        for (size_t i = 0; r == 0 && i <= s->cfg.n_routes; i++) {
                const char *name = i < s->cfg.n_routes ? s->cfg.routes[i].name : "unmatched";
                for (size_t k = 0; r == 0 && k < MAX_STATUS_SLOTS; k++) {
                        uint64_t v = atomic_load(&s->stats[i].by_status[k]);
                        if (!v)
                                continue;
                        if (status_codes[k])
                                r = growbuf_printf(out, max,
                                                   "muster_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                                                   name, status_codes[k], (unsigned long long) v);
                        else
                                r = growbuf_printf(out, max,
                                                   "muster_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                                                   name, (unsigned long long) v);
                }
        }
        if (r == 0)
                r = growbuf_printf(out, max,
                                   "# HELP muster_http_header_timeouts_total Connections closed for a request header "
                                   "not sent whole in time.\n# TYPE muster_http_header_timeouts_total counter\n"
                                   "muster_http_header_timeouts_total %llu\n",
                                   (unsigned long long) atomic_load(&s->header_timeouts));
        if (r == 0)
                r = growbuf_printf(out, max,
                                   "# HELP muster_http_body_memory_bytes Bytes held by request bodies in flight.\n"
                                   "# TYPE muster_http_body_memory_bytes gauge\nmuster_http_body_memory_bytes %zu\n"
                                   "# HELP muster_http_body_memory_refusals_total Requests refused (503) for "
                                   "[server] max_body_memory.\n# TYPE muster_http_body_memory_refusals_total counter\n"
                                   "muster_http_body_memory_refusals_total %llu\n",
                                   atomic_load(&s->body_memory),
                                   (unsigned long long) atomic_load(&s->body_memory_refusals));
        if (r == 0)
                r = growbuf_printf(out, max,
                                   "# HELP muster_http_request_duration_seconds HTTP request latency by route.\n"
                                   "# TYPE muster_http_request_duration_seconds histogram\n");
        for (size_t i = 0; r == 0 && i <= s->cfg.n_routes; i++) {
                const char *name = i < s->cfg.n_routes ? s->cfg.routes[i].name : "unmatched";
                uint64_t count = atomic_load(&s->stats[i].count);
                if (!count)
                        continue;
                uint64_t cum = 0;
                for (size_t b = 0; r == 0 && b < N_BUCKETS; b++) {
                        cum += atomic_load(&s->stats[i].bucket[b]);
                        r = growbuf_printf(out, max,
                                           "muster_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                                           name, buckets[b], (unsigned long long) cum);
                }
                if (r == 0)
                        r = growbuf_printf(out, max,
                                           "muster_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
                                           name, (unsigned long long) count);
                if (r == 0)
                        r = growbuf_printf(out, max, "muster_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n",
                                           name, (double) atomic_load(&s->stats[i].sum_us) / 1e6);
                if (r == 0)
                        r = growbuf_printf(out, max, "muster_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
                                           name, (unsigned long long) count);
        }
        return r;
}

/* A service's -errno as an HTTP status: the one table (DECISIONS.md D1; STYLE.md:
 * the core returns -errno, the edge speaks HTTP). */
static const struct {
        int err;
        int status;
} errno_status[] = {
        { -EINVAL, 400 }, { -EPERM, 403 },  { -ENOENT, 404 }, { -EEXIST, 409 }, { -EBUSY, 409 },  { -ESTALE, 409 },
        { -ENOPKG, 409 }, { -EDOM, 409 },   { -EDQUOT, 409 }, { -E2BIG, 413 },  { -EUSERS, 429 }, { -EAGAIN, 503 },
        { -ENOSPC, 507 }, { -EALREADY, 409 }, { -ENODATA, 503 },
};

int http_status_of_errno(int r) {
        for (size_t i = 0; i < sizeof errno_status / sizeof *errno_status; i++)
                if (errno_status[i].err == r)
                        return errno_status[i].status;
        return 500;
}
