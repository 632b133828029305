/* GET|HEAD /api/v2/infra-envs/{id}/downloads/image: the discovery ISO
 * template streamed with the infra-env's config in its area (DESIGN §11).
 * Nothing is copied: each block the client takes is read from the template
 * and overlaid with the area (iso_read), so a download costs one open file
 * and the area's 256 KiB. Range, If-Range and If-None-Match are honoured. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "cleanup.h"
#include "downloads.h"
#include "log.h"

#define ISO_CONTENT_TYPE "application/x-iso9660-image"

/* One download in flight: what the stream callback needs, all owned. */
struct iso_stream {
        int fd;
        uint64_t area_offset;
        uint8_t *area;         /* BOOTCFG_AREA_SIZE bytes */
        uint64_t start, len;   /* the body is [start, start + len) of the image */
        uint64_t size;         /* of the whole image */
        uint64_t sent;         /* body bytes handed to the server so far */
        bool head;
        char infra_env_id[40];
        struct timespec t0;
};

static ssize_t iso_stream_read(void *cls, uint64_t pos, void *buf, size_t max) {
        struct iso_stream *s = cls;
        if (pos >= s->len)
                return -EIO;
        size_t n = s->len - pos < max ? (size_t) (s->len - pos) : max;
        ssize_t k = iso_read(s->fd, s->area_offset, s->area, BOOTCFG_AREA_SIZE, s->start + pos, buf, n);
        if (k < 0) {
                log_warning_errno((int) k, "api", "ISO download of infra-env %s failed at byte %llu: %m",
                                  s->infra_env_id, (unsigned long long) (s->start + pos));
                return k;
        }
        if (pos + (uint64_t) k > s->sent)
                s->sent = pos + (uint64_t) k;
        return k;
}

/* The answer is done (or the client went away): the one log line of the
 * download, then the resources. */
static void iso_stream_free(void *cls) {
        struct iso_stream *s = cls;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double secs = (double) (now.tv_sec - s->t0.tv_sec) + (double) (now.tv_nsec - s->t0.tv_nsec) / 1e9;
        if (s->head)
                log_info("api", "infra-env %s: ISO image HEAD (%llu bytes)", s->infra_env_id,
                         (unsigned long long) s->size);
        else
                log_info("api", "infra-env %s: ISO image bytes %llu-%llu/%llu: %llu of %llu bytes sent in %.2f s%s",
                         s->infra_env_id, (unsigned long long) s->start,
                         (unsigned long long) (s->start + s->len - (s->len > 0)), (unsigned long long) s->size,
                         (unsigned long long) s->sent, (unsigned long long) s->len, secs,
                         s->sent < s->len ? " (cut short)" : "");
        if (s->fd >= 0)
                close(s->fd);
        free(s->area);
        free(s);
}

/* The coordinator URL the ISO's agent uses: [iso] coordinator_url, else
 * http:// and the Host the client reached us by. NULL after answering. */
static char *coordinator_url(const char *configured, bool https, struct http_request *req,
                             struct http_response *resp) {
        char *url;
        if (configured[0]) {
                url = strdup(configured);
                /* The agent appends /api/v2/...: no trailing slashes. */
                for (size_t n = url ? strlen(url) : 0; n > 0 && url[n - 1] == '/'; n--)
                        url[n - 1] = '\0';
        } else {
                const char *host = http_header(req, "Host");
                if (!host) {
                        http_error(resp, 400,
                                   "the request has no Host header to make the ISO's coordinator URL of; "
                                   "set [iso] coordinator_url");
                        return NULL;
                }
                if (!http_host_ok(host)) {
                        http_error(resp, 400,
                                   "the Host header is not a host[:port] the ISO's agents could use; "
                                   "set [iso] coordinator_url");
                        return NULL;
                }
                if (asprintf(&url, "%s://%s", https ? "https" : "http", host) < 0)
                        url = NULL;
        }
        if (!url)
                http_error(resp, 500, "out of memory");
        return url;
}

/* Answer 503 for a template or config the ISO cannot be served with. */
static void unavailable(struct http_response *resp, const char *ie_id, const char *why) {
        log_warning("api", "infra-env %s: cannot serve the discovery ISO: %s", ie_id, why);
        http_error(resp, 503, "the discovery ISO cannot be served: %s", why);
}

/* The answer's headers and body: 304, 416, or the image (a part of it) as
 * a stream that takes img's open template and area. */
static void answer(struct http_request *req, struct http_response *resp, const struct infra_env *ie,
                   struct iso_image *img) {
        char fname[128];
        /* RFC 9110 §13.2.2: If-None-Match, then If-Range and Range. */
        if (http_etag_none_match(http_header(req, "If-None-Match"), img->etag)) {
                http_text(resp, 304, NULL, 0, NULL);
                http_header_add(resp, "ETag", "%s", img->etag);
                return;
        }
        const char *range = http_header(req, "Range"), *if_range = http_header(req, "If-Range");
        uint64_t size = img->t.size, start = 0, len = size;
        if (range && if_range && !http_etag_if_range(if_range, img->etag))
                range = NULL; /* the client's part is of another ISO: send it all */
        int r = http_range_parse(range, size, &start, &len);
        if (r == -ERANGE) {
                http_error(resp, 416, "the range \"%.64s\" is not within the image's %llu bytes", range,
                           (unsigned long long) size);
                http_header_add(resp, "Content-Range", "bytes */%llu", (unsigned long long) size);
                return;
        }
        if (r == 0) {
                start = 0;
                len = size;
        }
        struct iso_stream *s = calloc(1, sizeof *s);
        if (!s) {
                http_error(resp, 500, "out of memory");
                return;
        }
        *s = (struct iso_stream) {
                .fd = img->t.fd, .area_offset = img->t.area_offset, .area = TAKE_PTR(img->area), .start = start,
                .len = len, .size = size, .head = strcmp(req->method, "HEAD") == 0,
        };
        img->t.fd = -1;
        snprintf(s->infra_env_id, sizeof s->infra_env_id, "%s", ie->id);
        clock_gettime(CLOCK_MONOTONIC, &s->t0);
        http_stream(resp, r == 1 ? 206 : 200, len, iso_stream_read, iso_stream_free, s, ISO_CONTENT_TYPE);
        iso_file_name(ie->name, fname, sizeof fname);
        http_header_add(resp, "Accept-Ranges", "bytes");
        http_header_add(resp, "ETag", "%s", img->etag);
        http_header_add(resp, "Content-Disposition", "attachment; filename=\"%s\"", fname);
        /* It carries an agent token: no shared cache keeps it. */
        http_header_add(resp, "Cache-Control", "private");
        if (r == 1)
                http_header_add(resp, "Content-Range", "bytes %llu-%llu/%llu", (unsigned long long) start,
                                (unsigned long long) (start + len - 1), (unsigned long long) size);
}

void api_iso_download(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct iso_image img = { .t.fd = -1 };
        char err[512] = "";
        _cleanup_free_ char *url = NULL;

        infra_env_init(&ie);
        if (!api_need_admin(req, resp) || api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
                goto out;
        if (!(url = coordinator_url(svc_cfg(sv)->iso_coordinator_url, !((struct api *) app)->insecure_http, req, resp)))
                goto out;
        int r = svc_iso_image_open(sv, &ie, url, &img, err, sizeof err);
        if (r == -ENODATA)
                unavailable(resp, ie.id, err);
        else if (r < 0)
                http_error(resp, 500, "%s", err);
        else
                answer(req, resp, &ie, &img);
out:
        svc_iso_image_close(&img);
        infra_env_free(&ie);
}
