/* The coordinator client (client.h): libcurl glue with the limits of the
 * agent's side of the API — bounded times, a capped reply, JSON both ways,
 * and the coordinator's Date header kept for the clock check. */
#include "client.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "curlload.h" /* the curl_* names below call into the dlopen()ed libcurl */
#include "fdio.h"
#include "growbuf.h"
#include "json-cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct curl_slist *, curl_slist_free_all)

int client_read_token(const char *path, char **token) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        *token = NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        /* One byte more than allowed, and a little slack for a trailing
         * newline, tells "too long" from "just fits". */
        const size_t cap = CLIENT_TOKEN_MAX + 64;
        buf = malloc(cap + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t k = fd_read_full(fd, buf, cap);
        if (k < 0)
                return (int) k;
        len = (size_t) k;
        if (len == cap) {
                char extra;
                if (read(fd, &extra, 1) > 0)
                        return -E2BIG;
        }
        while (len > 0 && isspace((unsigned char) buf[len - 1]))
                len--;
        buf[len] = '\0';
        /* A NUL inside would cut the token short unseen. */
        if (strlen(buf) != len)
                return -EINVAL;
        int r = client_check_token(buf);
        if (r < 0)
                return r;
        *token = TAKE_PTR(buf);
        return 0;
}

int client_check_token(const char *token) {
        size_t len = token ? strlen(token) : 0;

        if (len == 0)
                return -EINVAL;
        if (len > CLIENT_TOKEN_MAX)
                return -E2BIG;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char) token[i];
                if (ch <= 0x20 || ch == 0x7f)
                        return -EINVAL;
        }
        return 0;
}

bool client_url_is_valid(const char *url) {
        const char *host;

        if (!url)
                return false;
        if (strncasecmp(url, "http://", 7) == 0)
                host = url + 7;
        else if (strncasecmp(url, "https://", 8) == 0)
                host = url + 8;
        else
                return false;
        if (*host == '\0' || *host == '/' || *host == ':' || strlen(url) > 2048)
                return false;
        for (const char *p = url; *p; p++)
                if ((unsigned char) *p <= 0x20 || *p == 0x7f || *p == '?' || *p == '#')
                        return false;
        return true;
}

int client_init(struct client *c, const char *base_url, const char *token, const char *ca) {
        int r;

        memset(c, 0, sizeof *c);
        if (!client_url_is_valid(base_url) || !token || !*token || strlen(token) > CLIENT_TOKEN_MAX)
                return -EINVAL;
        /* libcurl is loaded on first use (curlload.h): `run` loads it before
         * it gets here and says why when it cannot; other callers (the
         * tests) get it loaded here. -ELIBACC, -ELIBBAD: errbuf says why. */
        if ((r = curlload_open(c->errbuf, sizeof c->errbuf)) < 0)
                return r;
        c->base = strdup(base_url);
        if (!c->base)
                goto oom;
        for (size_t n = strlen(c->base); n > 0 && c->base[n - 1] == '/'; n--)
                c->base[n - 1] = '\0';
        if (asprintf(&c->auth_header, "Authorization: Bearer %s", token) < 0) {
                c->auth_header = NULL;
                goto oom;
        }
        if (ca && !(c->ca = strdup(ca)))
                goto oom;
        c->curl = curl_easy_init();
        if (!c->curl)
                goto oom;
        c->connect_timeout_ms = CLIENT_CONNECT_TIMEOUT_MS;
        c->timeout_ms = CLIENT_REQUEST_TIMEOUT_MS;
        c->max_reply_bytes = CLIENT_MAX_REPLY_BYTES;
        return 0;
oom:
        client_done(c);
        return -ENOMEM;
}

int client_set_ca_pem(struct client *c, const char *pem) {
        if (!pem || !*pem)
                return -EINVAL;
        char *copy = strdup(pem);
        if (!copy)
                return -ENOMEM;
        free(c->ca_pem);
        c->ca_pem = copy;
        return 0;
}

/* *dst = a copy of s (NULL stays NULL): 0 or -ENOMEM, *dst untouched then. */
static int dup_opt(char **dst, const char *s) {
        char *d = NULL;
        if (s && !(d = strdup(s)))
                return -ENOMEM;
        free(*dst);
        *dst = d;
        return 0;
}

int client_set_proxy(struct client *c, const char *http_proxy, const char *https_proxy, const char *no_proxy) {
        if (dup_opt(&c->http_proxy, http_proxy) < 0 || dup_opt(&c->https_proxy, https_proxy) < 0 ||
            dup_opt(&c->no_proxy, no_proxy) < 0)
                return -ENOMEM;
        return 0;
}

int client_clone(struct client *dst, const struct client *src) {
        memset(dst, 0, sizeof *dst);
        if (!(dst->base = strdup(src->base)) || !(dst->auth_header = strdup(src->auth_header)) ||
            (src->ca && !(dst->ca = strdup(src->ca))) || (src->ca_pem && !(dst->ca_pem = strdup(src->ca_pem))) ||
            client_set_proxy(dst, src->http_proxy, src->https_proxy, src->no_proxy) < 0 ||
            !(dst->curl = curl_easy_init())) {
                client_done(dst);
                return -ENOMEM;
        }
        dst->connect_timeout_ms = src->connect_timeout_ms;
        dst->timeout_ms = src->timeout_ms;
        dst->max_reply_bytes = src->max_reply_bytes;
        return 0;
}

void client_done(struct client *c) {
        if (c->curl)
                curl_easy_cleanup(c->curl);
        if (c->auth_header)
                /* The token was in there; do not leave it in freed memory. */
                explicit_bzero(c->auth_header, strlen(c->auth_header));
        free(c->auth_header);
        free(c->base);
        free(c->ca);
        free(c->ca_pem);
        free(c->http_proxy);
        free(c->https_proxy);
        free(c->no_proxy);
        memset(c, 0, sizeof *c);
}

/* ---- one request -------------------------------------------------------- */

struct reply_buf {
        struct growbuf body;
        size_t max;
        bool too_large;
        char date[CLIENT_DATE_MAX + 1];
        bool have_date;
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *userdata) {
        struct reply_buf *b = userdata;
        size_t n = size * nmemb;

        int r = growbuf_append(&b->body, p, n, b->max, 16384);
        if (r == -E2BIG)
                b->too_large = true;
        return r < 0 ? 0 : n; /* 0: libcurl stops with CURLE_WRITE_ERROR */
}

bool client_header_date(const char *line, size_t n, char out[CLIENT_DATE_MAX + 1]) {
        if (n <= 5 || strncasecmp(line, "Date:", 5) != 0)
                return false;
        const char *v = line + 5;
        size_t k = n - 5;
        while (k > 0 && (*v == ' ' || *v == '\t'))
                v++, k--;
        while (k > 0 && isspace((unsigned char) v[k - 1]))
                k--;
        if (k == 0 || k > CLIENT_DATE_MAX || memchr(v, '\0', k))
                return false;
        memcpy(out, v, k);
        out[k] = '\0';
        return true;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *userdata) {
        struct reply_buf *b = userdata;
        size_t n = size * nmemb;

        /* A new status line starts a new header block (1xx replies). */
        if (n >= 5 && strncmp(p, "HTTP/", 5) == 0)
                b->have_date = false;
        if (client_header_date(p, n, b->date))
                b->have_date = true;
        return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
        struct client *c = userdata;
        struct client_stream *s = c->streaming;
        if (s && s->ticks && !s->sink_error) {
                int r = s->sink(s->userdata, NULL, 0);
                if (r < 0) {
                        s->sink_error = r;
                        return 1;
                }
        }
        return c->cancel && c->cancel(c->cancel_userdata) ? 1 : 0;
}

static int curl_to_errno(CURLcode cc) {
        switch (cc) {
        case CURLE_OPERATION_TIMEDOUT:
                return -ETIMEDOUT;
        case CURLE_COULDNT_CONNECT:
                return -ECONNREFUSED;
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
                return -EHOSTUNREACH;
        case CURLE_ABORTED_BY_CALLBACK:
                return -ECANCELED;
        case CURLE_OUT_OF_MEMORY:
                return -ENOMEM;
        default:
                return -EIO;
        }
}

/* The options every request shares. Reset drops the last request's
 * options but keeps the open connection and the DNS cache. */
static void setup_handle(struct client *c, const char *url, struct curl_slist *headers) {
        CURL *h = c->curl;

        curl_easy_reset(h);
        c->errbuf[0] = '\0';
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "muster-agent/" MUSTER_VERSION);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
        if (c->cancel || (c->streaming && c->streaming->ticks)) {
                curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
                curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
                curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        }
        if (c->ca_pem) {
                /* The text lives as long as the client; libcurl need not copy it. */
                struct curl_blob blob = { .data = c->ca_pem, .len = strlen(c->ca_pem), .flags = CURL_BLOB_NOCOPY };
                curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
        } else if (c->ca)
                curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
        /* Given a CA, trust it alone: not the system's folder of CAs
         * (Debian's libcurl looks in /etc/ssl/certs besides CAINFO). */
        if (c->ca_pem || c->ca)
                curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
        /* The infra-env's proxy for the URL's scheme; given any, libcurl's
         * own (the environment's) is not used. */
        if (c->http_proxy || c->https_proxy || c->no_proxy) {
                const char *proxy = strncasecmp(url, "https://", 8) == 0 ? c->https_proxy : c->http_proxy;
                curl_easy_setopt(h, CURLOPT_PROXY, proxy ? proxy : "");
                curl_easy_setopt(h, CURLOPT_NOPROXY, c->no_proxy ? c->no_proxy : "");
        }
}

/* Append header h to *headers; -ENOMEM leaves the list as it was. */
static int add_header(struct curl_slist **headers, const char *h) {
        struct curl_slist *l = curl_slist_append(*headers, h);
        if (!l)
                return -ENOMEM;
        *headers = l;
        return 0;
}

/* Run the transfer set up by setup_handle(): its header list and error
 * buffer are unhooked after (they go away with the caller), and c->errbuf
 * tells what went wrong when it failed. */
static CURLcode perform(struct client *c) {
        CURLcode cc = curl_easy_perform(c->curl);
        curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, NULL);
        if (cc != CURLE_OK && !c->errbuf[0])
                snprintf(c->errbuf, sizeof c->errbuf, "%s", curl_easy_strerror(cc));
        return cc;
}

json_object *client_parse_reply(const char *data, size_t len) {
        json_object *o = NULL;
        json_tokener *tok = json_tokener_new();

        if (!tok || len == 0 || len > INT32_MAX) {
                if (tok)
                        json_tokener_free(tok);
                return NULL;
        }
        o = json_tokener_parse_ex(tok, data, (int) len);
        /* Trailing bytes other than whitespace make it not JSON. */
        size_t used = json_tokener_get_parse_end(tok);
        while (used < len && isspace((unsigned char) data[used]))
                used++;
        if (json_tokener_get_error(tok) != json_tokener_success || used != len) {
                json_object_put(o);
                o = NULL;
        }
        json_tokener_free(tok);
        return o;
}

/* client_request, and client_upload with `ctype` set: data[len] sent as it is. */
static int request(struct client *c, const char *method, const char *path, json_object *body, const char *ctype,
                   const void *data, size_t len, long *status, json_object **reply, char **date) {
        _cleanup_(curl_slist_free_allp) struct curl_slist *headers = NULL;
        _cleanup_free_ char *url = NULL, *ct = NULL;
        struct reply_buf b = { .max = c->max_reply_bytes };
        CURL *h = c->curl;
        const char *text = NULL;
        size_t text_len = 0;
        CURLcode cc;
        int r;

        if (status)
                *status = 0;
        if (reply)
                *reply = NULL;
        if (date)
                *date = NULL;
        if (!h || !method || !path)
                return -EINVAL;
        if (asprintf(&url, "%s%s", c->base, path) < 0) {
                url = NULL;
                return -ENOMEM;
        }
        if (ctype) {
                text = data;
                text_len = len;
                if (asprintf(&ct, "Content-Type: %s", ctype) < 0) {
                        ct = NULL;
                        return -ENOMEM;
                }
        } else if (body) {
                text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                if (!text)
                        return -ENOMEM;
                text_len = strlen(text);
                ct = strdup("Content-Type: application/json");
                if (!ct)
                        return -ENOMEM;
        }

        if (add_header(&headers, c->auth_header) < 0 || add_header(&headers, "Accept: application/json") < 0 ||
            (ct && add_header(&headers, ct) < 0) ||
            /* No "100 continue" round trip for our small bodies. */
            add_header(&headers, "Expect:") < 0)
                return -ENOMEM;

        setup_handle(c, url, headers);
        /* An upload gets a second more per MiB (the slowest link waited for). */
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms + (long) (text_len >> 20) * 1000L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &b);
        if (strcmp(method, "GET") == 0)
                curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        else {
                curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, text ? text : "");
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) text_len);
        }

        cc = perform(c);
        if (cc != CURLE_OK) {
                r = b.too_large ? -EFBIG : curl_to_errno(cc);
                free(b.body.data);
                return r;
        }
        long code = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        if (status)
                *status = code;
        if (reply && b.body.len > 0)
                *reply = client_parse_reply(b.body.data, b.body.len);
        if (date && b.have_date)
                *date = strdup(b.date);
        free(b.body.data);
        return 0;
}

int client_request(struct client *c, const char *method, const char *path, json_object *body, long *status,
                   json_object **reply, char **date) {
        return request(c, method, path, body, NULL, NULL, 0, status, reply, date);
}

int client_upload(struct client *c, const char *method, const char *path, const char *content_type, const void *data,
                  size_t len, long *status, json_object **reply) {
        if (!content_type || (!data && len))
                return -EINVAL;
        return request(c, method, path, NULL, content_type, data ? data : "", len, status, reply, NULL);
}

/* ---- downloads ---------------------------------------------------------- */

/* True when `url` is the coordinator's own (starts with c->base followed by
 * '/' or nothing): only such URLs get the token. */
static bool client_url_is_coordinator(const struct client *c, const char *url) {
        size_t n = strlen(c->base);
        return strncasecmp(url, c->base, n) == 0 && (url[n] == '\0' || url[n] == '/');
}

struct stream_state {
        struct client *c;
        struct client_stream *s;
        struct reply_buf err;    /* a non-2xx answer's body */
        uint64_t received;
        long status;             /* of the answer whose body arrives, 0 before */
        bool too_large;
        int64_t range_start;     /* Content-Range's first byte, -1 when none */
        uint64_t skip;           /* bytes of a 200 answer the sink already has */
};

bool client_header_range_start(const char *line, size_t n, int64_t *start) {
        static const char prefix[] = "Content-Range: bytes ";
        const size_t plen = sizeof prefix - 1;
        if (n <= plen || strncasecmp(line, prefix, plen) != 0)
                return false;
        /* The line is not NUL-terminated: digits up to n only. */
        int64_t v = 0;
        size_t k = 0;
        for (; plen + k < n && line[plen + k] >= '0' && line[plen + k] <= '9'; k++) {
                int d = line[plen + k] - '0';
                if (v > (INT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        if (k == 0 || plen + k >= n || line[plen + k] != '-')
                return false;
        *start = v;
        return true;
}

/* Content-Range of the last header block (a redirect's does not count). */
static size_t on_stream_header(char *p, size_t size, size_t nmemb, void *userdata) {
        struct stream_state *st = userdata;
        size_t n = size * nmemb;
        int64_t start;
        if (n >= 5 && strncmp(p, "HTTP/", 5) == 0)
                st->range_start = -1;
        else if (client_header_range_start(p, n, &start))
                st->range_start = start;
        return n;
}

static size_t on_stream(char *p, size_t size, size_t nmemb, void *userdata) {
        struct stream_state *st = userdata;
        size_t n = size * nmemb;

        if (st->status == 0) {
                curl_off_t cl = -1;
                curl_easy_getinfo(st->c->curl, CURLINFO_RESPONSE_CODE, &st->status);
                if (curl_easy_getinfo(st->c->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK)
                        st->s->content_length = cl;
                if (st->s->resume_from > 0 && st->status == 206 &&
                    st->range_start != (int64_t) st->s->resume_from) {
                        st->s->sink_error = -EPROTO;
                        return 0;
                }
                if (st->s->resume_from > 0 && st->status == 200)
                        st->skip = st->s->resume_from; /* no ranges here: from the start again */
        }
        if (st->status < 200 || st->status > 299)
                return on_body(p, size, nmemb, &st->err);
        if (st->skip > 0) {
                size_t k = n < st->skip ? n : (size_t) st->skip;
                st->skip -= k;
                p += k;
                if (k == n)
                        return n;
                size_t rest = n - k;
                size_t done = on_stream(p, 1, rest, st);
                return done == rest ? n : 0;
        }
        if (st->s->max_bytes && n > st->s->max_bytes - st->received) {
                st->too_large = true;
                return 0;
        }
        st->received += n;
        int r = n ? st->s->sink(st->s->userdata, p, n) : 0;
        if (r < 0) {
                st->s->sink_error = r;
                return 0;
        }
        return n;
}

int client_get_stream(struct client *c, const char *target, struct client_stream *s, long *status,
                      json_object **reply) {
        _cleanup_(curl_slist_free_allp) struct curl_slist *headers = NULL;
        _cleanup_free_ char *url = NULL;
        struct stream_state st = { .c = c, .s = s, .err = { .max = c->max_reply_bytes }, .range_start = -1 };
        char range[48];
        int64_t left_ms = 0;
        CURL *h = c->curl;
        bool own;
        int r;

        *status = 0;
        if (reply)
                *reply = NULL;
        s->sink_error = 0;
        s->content_length = -1;
        if (!h || !target || !s->sink)
                return -EINVAL;
        for (const char *p = target; *p; p++)
                if ((unsigned char) *p <= 0x20 || *p == 0x7f)
                        return -EINVAL;
        if (target[0] == '/' && target[1] != '/') {
                if (asprintf(&url, "%s%s", c->base, target) < 0) {
                        url = NULL;
                        return -ENOMEM;
                }
        } else if (client_url_is_valid(target)) {
                if (!(url = strdup(target)))
                        return -ENOMEM;
        } else
                return -EINVAL;
        own = client_url_is_coordinator(c, url);

        if ((own && add_header(&headers, c->auth_header) < 0) || add_header(&headers, "Expect:") < 0)
                return -ENOMEM;
        if (s->deadline_ms > 0) {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                left_ms = s->deadline_ms - ((int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
                if (left_ms <= 0)
                        return -ETIMEDOUT;
        }

        c->streaming = s;
        setup_handle(c, url, headers);
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long) left_ms);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_stream_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &st);
        if (s->resume_from > 0) {
                snprintf(range, sizeof range, "%llu-", (unsigned long long) s->resume_from);
                curl_easy_setopt(h, CURLOPT_RANGE, range);
        }
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long) CLIENT_STREAM_LOW_SPEED_S);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &st);
        if (!own) {
                curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
                curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long) CLIENT_MAX_REDIRECTS);
                curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        }

        CURLcode cc = perform(c);
        c->streaming = NULL;
        if (cc != CURLE_OK) {
                if (st.too_large || st.err.too_large)
                        r = -EFBIG;
                else if (s->sink_error)
                        r = s->sink_error;
                else
                        r = curl_to_errno(cc);
                free(st.err.body.data);
                return r;
        }
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        if (reply && st.err.body.len > 0)
                *reply = client_parse_reply(st.err.body.data, st.err.body.len);
        free(st.err.body.data);
        return 0;
}

/* ---- an answer in words ------------------------------------------------- */

void client_describe(const struct client *cl, int err, long status, json_object *reply, char *buf, size_t n) {
        json_object *v;
        if (err < 0) {
                errno = -err;
                snprintf(buf, n, "%m (%s)", cl->errbuf[0] ? cl->errbuf : "no answer");
                return;
        }
        const char *reason = reply && json_object_object_get_ex(reply, "reason", &v) &&
                                             json_object_is_type(v, json_type_string)
                                     ? json_object_get_string(v)
                                     : "no reason given";
        snprintf(buf, n, "HTTP %ld (%.300s)", status, reason);
}

int client_stream_result(const struct client *cl, const struct client_stream *s, int r, long status,
                         json_object *reply, char *err, size_t errlen) {
        if (r == 0 && status >= 200 && status <= 299)
                return 0;
        if (r < 0 && s->sink_error)
                return s->sink_error;
        client_describe(cl, r, status, reply, err, errlen);
        if (r < 0)
                return r;
        return status == 404 ? -ENOENT : status == 401 || status == 403 ? -EACCES : -EPROTO;
}
