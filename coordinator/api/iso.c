/* GET|HEAD /api/v2/infra-envs/{id}/downloads/image: the discovery ISO
 * template streamed with the infra-env's config in its area (DESIGN §11);
 * and GET|HEAD .../downloads/pxe/{vmlinuz,initrd,boot.ipxe}: the ISO's
 * kernel, its initramfs with the config appended as a cpio archive, and
 * the iPXE script that loads both.
 * Nothing is copied: each block the client takes is read from the template
 * and overlaid with the area (svc_iso_read), so a download costs one open file
 * and the area's 256 KiB. Range, If-Range and If-None-Match are honoured. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "cleanup.h"
#include "svc/downloads.h"
#include "svc/pending.h"
#include "svc/hosts.h"
#include "log.h"

#define ISO_CONTENT_TYPE "application/x-iso9660-image"

/* One download in flight: what the stream callback needs, all owned. The
 * ISO is the template with the area overlaid; a PXE file is a run of the
 * template followed by a tail (svc_pxe_read). */
struct dl_stream {
        int fd;
        bool pxe;
        uint64_t area_offset;
        uint8_t *area;         /* ISO: BOOTCFG_AREA_SIZE bytes */
        uint64_t src_offset, src_len;
        uint8_t *tail;         /* PXE: after the template's run */
        size_t tail_len;
        uint64_t start, len;   /* the body is [start, start + len) of the file */
        uint64_t size;         /* of the whole file */
        uint64_t sent;         /* body bytes handed to the server so far */
        bool head;
        const char *what;      /* "ISO image", "PXE vmlinuz", ... */
        char infra_env_id[40];
        struct timespec t0;
};

static ssize_t dl_stream_read(void *cls, uint64_t pos, void *buf, size_t max) {
        struct dl_stream *s = cls;
        if (pos >= s->len)
                return -EIO;
        size_t n = s->len - pos < max ? (size_t) (s->len - pos) : max;
        ssize_t k = s->pxe ? svc_pxe_read(s->fd, s->src_offset, s->src_len, s->tail, s->tail_len, s->start + pos, buf, n)
                           : svc_iso_read(s->fd, s->area_offset, s->area, BOOTCFG_AREA_SIZE, s->start + pos, buf, n);
        if (k < 0) {
                log_warning_errno((int) k, "api", "%s download of infra-env %s failed at byte %llu: %m", s->what,
                                  s->infra_env_id, (unsigned long long) (s->start + pos));
                return k;
        }
        if (pos + (uint64_t) k > s->sent)
                s->sent = pos + (uint64_t) k;
        return k;
}

/* What a stream holds (the template, an area or tail with a token): wiped
 * and let go. */
static void dl_proto_drop(struct dl_stream *p) {
        if (p->area)
                explicit_bzero(p->area, BOOTCFG_AREA_SIZE);
        free(p->area);
        if (p->tail)
                explicit_bzero(p->tail, p->tail_len);
        free(p->tail);
        if (p->fd >= 0)
                close(p->fd);
}

/* The answer is done (or the client went away): the one log line of the
 * download, then the resources. */
static void dl_stream_free(void *cls) {
        struct dl_stream *s = cls;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double secs = (double) (now.tv_sec - s->t0.tv_sec) + (double) (now.tv_nsec - s->t0.tv_nsec) / 1e9;
        if (s->head)
                log_info("api", "infra-env %s: %s HEAD (%llu bytes)", s->infra_env_id, s->what,
                         (unsigned long long) s->size);
        else
                log_info("api", "infra-env %s: %s bytes %llu-%llu/%llu: %llu of %llu bytes sent in %.2f s%s",
                         s->infra_env_id, s->what, (unsigned long long) s->start,
                         (unsigned long long) (s->start + s->len - (s->len > 0)), (unsigned long long) s->size,
                         (unsigned long long) s->sent, (unsigned long long) s->len, secs,
                         s->sent < s->len ? " (cut short)" : "");
        dl_proto_drop(s);
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

/* Answer an ISO or PXE file that cannot be opened (r < 0): -ENODATA, a
 * template or config it cannot be served with, is said and logged so. */
static void refuse(struct http_response *resp, int r, const char *ie_id, const char *why) {
        char msg[640];
        if (r == -ENODATA) {
                log_warning("api", "infra-env %s: cannot serve the discovery ISO: %s", ie_id, why);
                snprintf(msg, sizeof msg, "the discovery ISO cannot be served: %s", why);
                why = msg;
        }
        api_svc_error(resp, r, why, "discovery ISO");
}

/* The answer's headers and body: 304, 416, or the file (a part of it) as
 * the stream *proto describes, which it takes (fd, area, tail). */
static void answer(struct http_request *req, struct http_response *resp, const struct infra_env *ie,
                   struct dl_stream *proto, const char *etag, const char *fname, const char *content_type) {
        /* RFC 9110 §13.2.2: If-None-Match, then If-Range and Range. */
        if (http_etag_none_match(http_header(req, "If-None-Match"), etag)) {
                http_text(resp, 304, NULL, 0, NULL);
                http_header_add(resp, "ETag", "%s", etag);
                return;
        }
        const char *range = http_header(req, "Range"), *if_range = http_header(req, "If-Range");
        uint64_t size = proto->size, start = 0, len = size;
        if (range && if_range && !http_etag_if_range(if_range, etag))
                range = NULL; /* the client's part is of another file: send it all */
        int r = http_range_parse(range, size, &start, &len);
        if (r == -ERANGE) {
                http_range_refuse(resp, range, size, "file");
                return;
        }
        if (r == 0) {
                start = 0;
                len = size;
        }
        struct dl_stream *s = malloc(sizeof *s);
        if (!s) {
                http_error(resp, 500, "out of memory");
                return;
        }
        *s = *proto;
        proto->fd = -1;
        proto->area = NULL;
        proto->tail = NULL;
        s->start = start;
        s->len = len;
        s->head = strcmp(req->method, "HEAD") == 0;
        snprintf(s->infra_env_id, sizeof s->infra_env_id, "%s", ie->id);
        clock_gettime(CLOCK_MONOTONIC, &s->t0);
        http_stream(resp, r == 1 ? 206 : 200, len, dl_stream_read, dl_stream_free, s, content_type);
        http_header_add(resp, "Accept-Ranges", "bytes");
        http_header_add(resp, "ETag", "%s", etag);
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
        if (r < 0)
                refuse(resp, r, ie.id, err);
        else {
                char fname[128];
                struct dl_stream proto = {
                        .fd = img.t.fd, .area_offset = img.t.area_offset, .area = img.area, .size = img.t.size,
                        .what = "ISO image",
                };
                img.t.fd = -1;
                img.area = NULL;
                svc_iso_file_name(ie.name, fname, sizeof fname);
                answer(req, resp, &ie, &proto, img.etag, fname, ISO_CONTENT_TYPE);
                dl_proto_drop(&proto);
        }
out:
        svc_iso_image_close(&img);
        infra_env_free(&ie);
}

void api_pxe_download(void *app, struct http_request *req, struct http_response *resp) {
        static const char *const what[_PXE_KIND_MAX] = {
                [PXE_VMLINUZ] = "PXE vmlinuz", [PXE_INITRD] = "PXE initrd", [PXE_SCRIPT] = "PXE boot.ipxe",
        };
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct pxe_image img = { .t.fd = -1 };
        char err[512] = "", query[4200] = "";
        _cleanup_free_ char *url = NULL;

        infra_env_init(&ie);
        int kind = svc_pxe_kind_from_name(req->params[1]);
        if (kind < 0) {
                http_error(resp, 404, "no PXE file \"%.64s\" (vmlinuz, initrd, boot.ipxe)", req->params[1]);
                goto out;
        }
        /* An administrator, or a boot holding this infra-env's agent token
         * (the one its initramfs carries anyway); a host's own token only
         * while that host is being reclaimed (its node agent fetches the
         * discovery kernel and initramfs). */
        const struct principal *p = P(req);
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
                goto out;
        if (p->kind == PRINCIPAL_AGENT && p->host_id[0]) {
                struct host h;
                host_init(&h);
                bool may = kind != PXE_SCRIPT && svc_host_get_brief(sv, ie.id, p->host_id, &h) == 0 &&
                           svc_host_may_fetch_boot_files(&h);
                host_free(&h);
                if (!may) {
                        http_error(resp, 403, "a host's token does not download boot files (unless the host is being "
                                              "reclaimed); the infra-env's does");
                        goto out;
                }
        }
        if (!(url = coordinator_url(svc_cfg(sv)->iso_coordinator_url, !((struct api *) app)->insecure_http, req, resp)))
                goto out;
        /* Fetched with ?token=, the script fetches the others the same way. */
        const char *qt = http_header(req, "Authorization") ? NULL : http_query(req, "token");
        if (qt)
                snprintf(query, sizeof query, "?token=%s", qt);
        int r = svc_pxe_open(sv, &ie, url, (enum pxe_kind) kind, query, &img, err, sizeof err);
        if (r < 0)
                refuse(resp, r, ie.id, err);
        else {
                struct dl_stream proto = {
                        .fd = img.t.fd, .pxe = true, .src_offset = img.src_offset, .src_len = img.src_len,
                        .tail = img.tail, .tail_len = img.tail_len, .size = img.size, .what = what[kind],
                };
                img.t.fd = -1;
                img.tail = NULL;
                answer(req, resp, &ie, &proto, img.etag, req->params[1],
                       kind == PXE_SCRIPT ? "text/plain; charset=utf-8" : "application/octet-stream");
                dl_proto_drop(&proto);
        }
out:
        explicit_bzero(query, sizeof query);
        svc_pxe_close(&img);
        infra_env_free(&ie);
}
