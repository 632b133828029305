/* libmicrohttpd glue (http.h): body accumulation with a hard cap, the fixed
 * validation order of STYLE.md, the route table, error and JSON answers,
 * request metrics. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "cleanup.h"

/* Latency buckets of the histogram, in seconds. */
static const double buckets[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5 };
#define N_BUCKETS (sizeof buckets / sizeof *buckets)
#define MAX_STATUS_SLOTS 18
/* Buffer of a streamed answer: the most one read callback fills. */
#define STREAM_BLOCK (256 * 1024)
/* Requests that matched no route count under route "unmatched". */
#define UNMATCHED_ROUTE ((size_t) -1)

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

struct http_server {
        struct MHD_Daemon *daemon;
        struct http_server_config cfg;
        struct route_stats *stats; /* n_routes + 1 (unmatched) */
        uint16_t port;
};

struct conn_state {
        char *body;
        size_t len, cap;
        size_t limit;     /* this request's body limit (its route's) */
        bool too_large;
        struct timespec start;
};

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

static void record(struct http_server *s, size_t route, int status, const struct timespec *start) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double secs = (double) (now.tv_sec - start->tv_sec) + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
        struct route_stats *st = &s->stats[route == UNMATCHED_ROUTE ? s->cfg.n_routes : route];
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
                if (resp->json) {
                        text = json_object_to_json_string_ext(resp->json,
                                                              JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                        ctype = "application/json";
                        len = strlen(text);
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

/* Route lookup: the index of the route for method+path, or
 * UNMATCHED_ROUTE with *path_known telling whether another method would
 * have matched (405 rather than 404). */
static size_t find_route(const struct http_server *s, const char *method, const char *path,
                         struct http_request *req, bool *path_known) {
        *path_known = false;
        for (size_t i = 0; i < s->cfg.n_routes; i++) {
                if (!http_route_match(s->cfg.routes[i].pattern, path, NULL))
                        continue;
                *path_known = true;
                if (strcmp(s->cfg.routes[i].method, method) == 0) {
                        http_route_match(s->cfg.routes[i].pattern, path, req);
                        return i;
                }
        }
        return UNMATCHED_ROUTE;
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
                /* The body limit is the route's: look it up before any byte. */
                bool known;
                size_t ri = find_route(s, method, url, NULL, &known);
                cs->limit = s->cfg.max_body_bytes;
                if (ri != UNMATCHED_ROUTE && (s->cfg.routes[ri].flags & ROUTE_LARGE_BODY) &&
                    s->cfg.max_large_body_bytes > cs->limit)
                        cs->limit = s->cfg.max_large_body_bytes;
                /* Refuse a declared oversize body before reading it. */
                const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
                if (cl && strtoull(cl, NULL, 10) > cs->limit)
                        cs->too_large = true;
                return MHD_YES;
        }
        if (*upload_size) {
                if (!cs->too_large) {
                        if (cs->len + *upload_size > cs->limit)
                                cs->too_large = true;
                        else {
                                if (cs->len + *upload_size + 1 > cs->cap) {
                                        size_t cap = cs->cap ? cs->cap : 4096;
                                        while (cap < cs->len + *upload_size + 1)
                                                cap *= 2;
                                        char *b = realloc(cs->body, cap);
                                        if (!b)
                                                return MHD_NO;
                                        cs->body = b;
                                        cs->cap = cap;
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
        size_t ri = find_route(s, method, url, &req, &path_known);
        const struct http_route *route = ri == UNMATCHED_ROUTE ? NULL : &s->cfg.routes[ri];

        if (!route) {
                if (path_known)
                        http_error(&resp, 405, "method %s is not allowed on %s", method, url);
                else
                        http_error(&resp, 404, "no such route: %s %s", method, url);
                goto done;
        }
        req.bearer = bearer_of(conn);
        if (!(route->flags & ROUTE_PUBLIC) && s->cfg.auth && !s->cfg.auth(s->cfg.app, route, &req, &resp))
                goto done;
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
                struct json_tokener *tok = json_tokener_new_ex(64);
                req.body = tok ? json_tokener_parse_ex(tok, cs->body, (int) cs->len) : NULL;
                enum json_tokener_error jerr = tok ? json_tokener_get_error(tok) : json_tokener_error_size;
                size_t used = tok ? json_tokener_get_parse_end(tok) : 0;
                if (tok)
                        json_tokener_free(tok);
                if (!req.body || jerr != json_tokener_success || used != cs->len) {
                        http_error(&resp, 400, "request body is not valid JSON (%s)",
                                   jerr == json_tokener_success ? "trailing data" : json_tokener_error_desc(jerr));
                        goto done;
                }
                if (!json_object_is_type(req.body, json_type_object)) {
                        http_error(&resp, 400, "request body must be a JSON object");
                        goto done;
                }
                req.body_raw = cs->body;
                req.body_len = cs->len;
        } else if (cs->too_large) {
                http_error(&resp, 413, "request body is larger than %zu bytes", cs->limit);
                goto done;
        }
        route->fn(s->cfg.app, &req, &resp);
done:
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
        if (cs) {
                free(cs->body);
                free(cs);
                *con_cls = NULL;
        }
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
        s->stats = calloc(cfg->n_routes + 1, sizeof *s->stats);
        if (!s->stats) {
                free(s);
                return -ENOMEM;
        }
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_EPOLL;
        if (ss.ss_family == AF_INET6)
                flags |= MHD_USE_DUAL_STACK;
        s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
                                     MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
                                     MHD_OPTION_THREAD_POOL_SIZE, (unsigned) (cfg->threads ? cfg->threads : 4),
                                     MHD_OPTION_CONNECTION_LIMIT, (unsigned) 20000,
                                     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 60,
                                     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                     MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned) 1,
                                     MHD_OPTION_END);
        if (!s->daemon) {
                free(s->stats);
                free(s);
                return -EADDRINUSE;
        }
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
        s->port = info ? info->port : 0;
        *out = s;
        return 0;
}

uint16_t http_server_port(const struct http_server *s) {
        return s->port;
}

void http_server_stop(struct http_server *s) {
        if (!s)
                return;
        MHD_stop_daemon(s->daemon);
        free(s->stats);
        free(s);
}

static int appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int appendf(char **buf, size_t *len, size_t *cap, const char *fmt, ...) {
        for (;;) {
                va_list ap;
                va_start(ap, fmt);
                int n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
                va_end(ap);
                if (n < 0)
                        return -EINVAL;
                if (*buf && *len + (size_t) n < *cap) {
                        *len += (size_t) n;
                        return 0;
                }
                size_t ncap = *cap ? *cap * 2 : 8192;
                while (ncap < *len + (size_t) n + 1)
                        ncap *= 2;
                char *b = realloc(*buf, ncap);
                if (!b)
                        return -ENOMEM;
                *buf = b;
                *cap = ncap;
        }
}

char *http_server_metrics(struct http_server *s) {
        char *buf = NULL;
        size_t len = 0, cap = 0;
        appendf(&buf, &len, &cap, "# HELP muster_http_requests_total HTTP requests by route and status.\n"
                                  "# TYPE muster_http_requests_total counter\n");
        for (size_t i = 0; i <= s->cfg.n_routes; i++) {
                const char *name = i < s->cfg.n_routes ? s->cfg.routes[i].name : "unmatched";
                for (size_t k = 0; k < MAX_STATUS_SLOTS; k++) {
                        uint64_t v = atomic_load(&s->stats[i].by_status[k]);
                        if (!v)
                                continue;
                        if (status_codes[k])
                                appendf(&buf, &len, &cap, "muster_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                                        name, status_codes[k], (unsigned long long) v);
                        else
                                appendf(&buf, &len, &cap, "muster_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                                        name, (unsigned long long) v);
                }
        }
        appendf(&buf, &len, &cap, "# HELP muster_http_request_duration_seconds HTTP request latency by route.\n"
                                  "# TYPE muster_http_request_duration_seconds histogram\n");
        for (size_t i = 0; i <= s->cfg.n_routes; i++) {
                const char *name = i < s->cfg.n_routes ? s->cfg.routes[i].name : "unmatched";
                uint64_t count = atomic_load(&s->stats[i].count);
                if (!count)
                        continue;
                uint64_t cum = 0;
                for (size_t b = 0; b < N_BUCKETS; b++) {
                        cum += atomic_load(&s->stats[i].bucket[b]);
                        appendf(&buf, &len, &cap, "muster_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                                name, buckets[b], (unsigned long long) cum);
                }
                appendf(&buf, &len, &cap, "muster_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
                        name, (unsigned long long) count);
                appendf(&buf, &len, &cap, "muster_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", name,
                        (double) atomic_load(&s->stats[i].sum_us) / 1e6);
                appendf(&buf, &len, &cap, "muster_http_request_duration_seconds_count{route=\"%s\"} %llu\n", name,
                        (unsigned long long) count);
        }
        return buf;
}
