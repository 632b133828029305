/* The coordinator client (client.h): libcurl glue with the limits of the
 * agent's side of the API — bounded times, a capped reply, JSON both ways,
 * and the coordinator's Date header kept for the clock check. */
#include "client.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put)
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
        for (;;) {
                ssize_t k = read(fd, buf + len, cap - len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                len += (size_t) k;
                if (len == cap) {
                        char extra;
                        if (read(fd, &extra, 1) > 0)
                                return -E2BIG;
                        break;
                }
        }
        while (len > 0 && isspace((unsigned char) buf[len - 1]))
                len--;
        buf[len] = '\0';
        if (len == 0)
                return -EINVAL;
        if (len > CLIENT_TOKEN_MAX)
                return -E2BIG;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char) buf[i];
                if (ch <= 0x20 || ch == 0x7f)
                        return -EINVAL;
        }
        *token = TAKE_PTR(buf);
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
        memset(c, 0, sizeof *c);
        if (!client_url_is_valid(base_url) || !token || !*token || strlen(token) > CLIENT_TOKEN_MAX)
                return -EINVAL;
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

void client_done(struct client *c) {
        if (c->curl)
                curl_easy_cleanup(c->curl);
        if (c->auth_header)
                /* The token was in there; do not leave it in freed memory. */
                explicit_bzero(c->auth_header, strlen(c->auth_header));
        free(c->auth_header);
        free(c->base);
        free(c->ca);
        memset(c, 0, sizeof *c);
}

/* ---- one request -------------------------------------------------------- */

struct reply_buf {
        char *data;
        size_t len, cap, max;
        bool too_large;
        char date[CLIENT_DATE_MAX + 1];
        bool have_date;
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *userdata) {
        struct reply_buf *b = userdata;
        size_t n = size * nmemb;

        if (n > b->max - b->len) {
                b->too_large = true;
                return 0; /* libcurl stops with CURLE_WRITE_ERROR */
        }
        if (b->len + n + 1 > b->cap) {
                size_t cap = b->cap ? b->cap : 16384;
                while (cap < b->len + n + 1)
                        cap *= 2;
                char *d = realloc(b->data, cap);
                if (!d)
                        return 0;
                b->data = d;
                b->cap = cap;
        }
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = '\0';
        return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *userdata) {
        struct reply_buf *b = userdata;
        size_t n = size * nmemb;

        /* A new status line starts a new header block (1xx replies). */
        if (n >= 5 && strncmp(p, "HTTP/", 5) == 0)
                b->have_date = false;
        if (n > 5 && strncasecmp(p, "Date:", 5) == 0) {
                const char *v = p + 5;
                size_t k = n - 5;
                while (k > 0 && (*v == ' ' || *v == '\t'))
                        v++, k--;
                while (k > 0 && isspace((unsigned char) v[k - 1]))
                        k--;
                if (k > 0 && k <= CLIENT_DATE_MAX && !memchr(v, '\0', k)) {
                        memcpy(b->date, v, k);
                        b->date[k] = '\0';
                        b->have_date = true;
                }
        }
        return n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
        struct client *c = userdata;
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

int client_request(struct client *c, const char *method, const char *path, json_object *body, long *status,
                   json_object **reply, char **date) {
        _cleanup_(curl_slist_free_allp) struct curl_slist *headers = NULL;
        _cleanup_free_ char *url = NULL;
        struct reply_buf b = { .max = c->max_reply_bytes };
        CURL *h = c->curl;
        const char *text = NULL;
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
        if (body) {
                text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
                if (!text)
                        return -ENOMEM;
        }

        struct curl_slist *l;
        if (!(l = curl_slist_append(headers, c->auth_header)))
                return -ENOMEM;
        headers = l;
        if (!(l = curl_slist_append(headers, "Accept: application/json")))
                return -ENOMEM;
        headers = l;
        if (body) {
                if (!(l = curl_slist_append(headers, "Content-Type: application/json")))
                        return -ENOMEM;
                headers = l;
        }
        /* No "100 continue" round trip for our small bodies. */
        if (!(l = curl_slist_append(headers, "Expect:")))
                return -ENOMEM;
        headers = l;

        /* Reset drops the last request's options but keeps the open
         * connection and the DNS cache. */
        curl_easy_reset(h);
        c->errbuf[0] = '\0';
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
        curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "muster-agent/" MUSTER_VERSION);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(h, CURLOPT_HEADERDATA, &b);
        curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
        if (c->cancel) {
                curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
                curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
                curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        }
        if (c->ca)
                curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
        if (strcmp(method, "GET") == 0)
                curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        else {
                curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, text ? text : "");
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) (text ? strlen(text) : 0));
        }

        cc = curl_easy_perform(h);
        /* The header list and the buffers go away with this call. */
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
        if (cc != CURLE_OK) {
                if (!c->errbuf[0])
                        snprintf(c->errbuf, sizeof c->errbuf, "%s", curl_easy_strerror(cc));
                r = b.too_large ? -EFBIG : curl_to_errno(cc);
                free(b.data);
                return r;
        }
        long code = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        if (status)
                *status = code;
        if (reply && b.len > 0) {
                json_tokener *tok = json_tokener_new();
                if (tok) {
                        json_object *o = json_tokener_parse_ex(tok, b.data, (int) b.len);
                        /* Trailing bytes other than whitespace make it not JSON. */
                        size_t used = json_tokener_get_parse_end(tok);
                        while (used < b.len && isspace((unsigned char) b.data[used]))
                                used++;
                        if (json_tokener_get_error(tok) == json_tokener_success && used == b.len)
                                *reply = o;
                        else
                                json_object_put(o);
                        json_tokener_free(tok);
                }
        }
        if (date && b.have_date)
                *date = strdup(b.date);
        free(b.data);
        return 0;
}
