/* The discovery ISO template and the bytes of one infra-env's copy (iso.h):
 * the sidecar's checks, the overlay reader downloads go through, the ETag,
 * and the pure helpers of the download route (Range, If-*, Host, file
 * name). */
#include "svc/iso.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cpio.h"
#include "crypto.h"
#include "errmsg.h"
#include "fdio.h"
#include "json-cleanup.h"
#include "protocol.h"

/* ---- the template ------------------------------------------------------- */

/* Exactly len bytes of fd at off. */
static int pread_full(int fd, uint8_t *buf, size_t len, uint64_t off) {
        while (len > 0) {
                ssize_t k = pread(fd, buf, len, (off_t) off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO; /* the file ended: it shrank under us */
                buf += k;
                len -= (size_t) k;
                off += (uint64_t) k;
        }
        return 0;
}

/* A non-negative integer member of the sidecar. */
static int sidecar_u64(json_object *o, const char *key, uint64_t *out) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return -EINVAL;
        errno = 0;
        int64_t n = json_object_get_int64(v);
        if (n < 0 || errno != 0)
                return -EINVAL;
        *out = (uint64_t) n;
        return 0;
}

/* [off, off + len) lies in a file of size bytes and clear of the area. */
static bool extent_ok(uint64_t off, uint64_t len, uint64_t size, uint64_t area) {
        return len > 0 && off <= size && len <= size - off &&
               (off + len <= area || off >= area + BOOTCFG_AREA_SIZE);
}

/* The sidecar's "pxe": {kernel_offset, kernel_size, initrd_offset,
 * initrd_size, cmdline}, checked against the ISO's size and its area. */
static int sidecar_pxe(json_object *o, uint64_t size, uint64_t area, struct iso_template *t) {
        json_object *v;
        if (!json_object_is_type(o, json_type_object) || sidecar_u64(o, "kernel_offset", &t->kernel_offset) < 0 ||
            sidecar_u64(o, "kernel_size", &t->kernel_size) < 0 ||
            sidecar_u64(o, "initrd_offset", &t->initrd_offset) < 0 ||
            sidecar_u64(o, "initrd_size", &t->initrd_size) < 0 || !json_object_object_get_ex(o, "cmdline", &v) ||
            !json_object_is_type(v, json_type_string))
                return -EINVAL;
        if (!extent_ok(t->kernel_offset, t->kernel_size, size, area) ||
            !extent_ok(t->initrd_offset, t->initrd_size, size, area))
                return -EINVAL;
        const char *c = json_object_get_string(v);
        size_t n = strlen(c);
        if (n >= sizeof t->cmdline)
                return -EINVAL;
        /* It goes on a line of the iPXE script: printable, no quotes. */
        for (size_t i = 0; i < n; i++)
                if (c[i] < 0x20 || c[i] > 0x7e || c[i] == '"' || c[i] == '\'')
                        return -EINVAL;
        memcpy(t->cmdline, c, n + 1);
        t->pxe = true;
        return 0;
}

/* Read and parse the sidecar path.json: the object, or -errno. */
static int read_sidecar(const char *sidecar, json_object **out, char *err, size_t errlen) {
        _cleanup_close_ int fd = open(sidecar, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                int r = -errno;
                return errmsg(err, errlen, r, "the ISO template's sidecar %s cannot be opened: %s", sidecar,
                              strerror(-r));
        }
        _cleanup_free_ char *text = malloc(ISO_SIDECAR_MAX + 1);
        if (!text)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        ssize_t n = fd_read_full(fd, text, ISO_SIDECAR_MAX + 1);
        if (n < 0)
                return errmsg(err, errlen, (int) n, "the ISO template's sidecar %s cannot be read: %s", sidecar,
                              strerror((int) -n));
        if (n > ISO_SIDECAR_MAX)
                return errmsg(err, errlen, -EINVAL, "the ISO template's sidecar %s is larger than %d bytes", sidecar,
                              ISO_SIDECAR_MAX);
        _cleanup_json_tokener_ json_tokener *tok = json_tokener_new_ex(16);
        if (!tok)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        json_object *o = json_tokener_parse_ex(tok, text, (int) n);
        if (!o || json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return errmsg(err, errlen, -EINVAL, "the ISO template's sidecar %s is not a JSON object", sidecar);
        }
        *out = o;
        return 0;
}

int iso_template_open(const char *path, struct iso_template *t, char *err, size_t errlen) {
        _cleanup_free_ char *sidecar = NULL;
        _cleanup_json_ json_object *o = NULL;
        _cleanup_close_ int fd = -1;
        _cleanup_free_ uint8_t *area = NULL;
        struct stat st;
        json_object *v;
        uint64_t offset, size, area_size;
        int r;

        *t = (struct iso_template) { .fd = -1 };
        if (!path || !*path)
                return errmsg(err, errlen, -ENOENT, "no ISO template is configured ([iso] template)");
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                return errmsg(err, errlen, r, "the ISO template %s cannot be opened: %s", path, strerror(-r));
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                return errmsg(err, errlen, r, "the ISO template %s cannot be read: %s", path, strerror(-r));
        }
        if (!S_ISREG(st.st_mode))
                return errmsg(err, errlen, -EINVAL, "the ISO template %s is not a regular file", path);
        if (asprintf(&sidecar, "%s.json", path) < 0) {
                sidecar = NULL;
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        }
        if ((r = read_sidecar(sidecar, &o, err, errlen)) < 0)
                return r;
        if (!json_object_object_get_ex(o, "format", &v) || !json_object_is_type(v, json_type_string) ||
            strcmp(json_object_get_string(v), ISO_TEMPLATE_FORMAT) != 0)
                return errmsg(err, errlen, -EINVAL, "the ISO template's sidecar %s is not of format \"%s\"", sidecar,
                              ISO_TEMPLATE_FORMAT);
        if (sidecar_u64(o, "config_offset", &offset) < 0 || sidecar_u64(o, "config_size", &area_size) < 0 ||
            sidecar_u64(o, "size", &size) < 0)
                return errmsg(err, errlen, -EINVAL,
                              "the ISO template's sidecar %s needs integers config_offset, config_size and size",
                              sidecar);
        const char *arch = "x86_64";
        if (json_object_object_get_ex(o, "cpu_architecture", &v) &&
            (!json_object_is_type(v, json_type_string) || !(arch = cpu_arch_canonical(json_object_get_string(v)))))
                return errmsg(err, errlen, -EINVAL,
                              "the ISO template's sidecar %s names no known cpu_architecture (x86_64, aarch64, "
                              "ppc64le, s390x)", sidecar);
        if (area_size != BOOTCFG_AREA_SIZE)
                return errmsg(err, errlen, -EINVAL, "the ISO template's sidecar %s says config_size %llu, not %d",
                              sidecar, (unsigned long long) area_size, BOOTCFG_AREA_SIZE);
        if ((uint64_t) st.st_size != size)
                return errmsg(err, errlen, -EINVAL,
                              "the ISO template %s has %llu bytes, its sidecar says %llu "
                              "(rebuilt without its sidecar?)",
                              path, (unsigned long long) st.st_size, (unsigned long long) size);
        if (offset > size || size - offset < BOOTCFG_AREA_SIZE)
                return errmsg(err, errlen, -EINVAL,
                              "the ISO template's config area (%llu bytes at %llu) is not inside its %llu bytes",
                              (unsigned long long) area_size, (unsigned long long) offset, (unsigned long long) size);
        struct iso_template pxe = { 0 };
        if (json_object_object_get_ex(o, "pxe", &v) && (r = sidecar_pxe(v, size, offset, &pxe)) < 0)
                return errmsg(err, errlen, -EINVAL,
                              "the ISO template's sidecar %s has a \"pxe\" member that does not fit the ISO: it "
                              "needs kernel_offset, kernel_size, initrd_offset and initrd_size inside the file and "
                              "clear of the config area, and a printable cmdline of under %d bytes",
                              sidecar, ISO_CMDLINE_MAX);
        if (!(area = malloc(BOOTCFG_AREA_SIZE)))
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        if ((r = pread_full(fd, area, BOOTCFG_AREA_SIZE, offset)) < 0)
                return errmsg(err, errlen, r, "the ISO template %s cannot be read: %s", path, strerror(-r));
        for (size_t i = 0; i < BOOTCFG_AREA_SIZE; i++)
                if (area[i])
                        return errmsg(err, errlen, -EINVAL,
                                      "the ISO template %s is not blank at its config area (byte %llu is not zero)",
                                      path, (unsigned long long) (offset + i));
        *t = (struct iso_template) {
                .fd = fd,
                .size = size,
                .area_offset = offset,
                .dev = (uint64_t) st.st_dev,
                .ino = (uint64_t) st.st_ino,
                .mtime_ns = (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
        };
        snprintf(t->cpu_architecture, sizeof t->cpu_architecture, "%s", arch);
        if (pxe.pxe) {
                t->pxe = true;
                t->kernel_offset = pxe.kernel_offset;
                t->kernel_size = pxe.kernel_size;
                t->initrd_offset = pxe.initrd_offset;
                t->initrd_size = pxe.initrd_size;
                memcpy(t->cmdline, pxe.cmdline, sizeof t->cmdline);
        }
        fd = -1;
        return 0;
}

void iso_template_close(struct iso_template *t) {
        if (t->fd >= 0)
                close(t->fd);
        t->fd = -1;
}

/* ---- the bytes --------------------------------------------------------- */

ssize_t svc_iso_read(int fd, uint64_t area_offset, const uint8_t *area, size_t area_len, uint64_t pos, void *buf,
                     size_t len) {
        uint8_t *out = buf;
        const uint64_t lim = (uint64_t) INT64_MAX;
        if (len > (size_t) SSIZE_MAX || pos > lim || len > lim - pos || area_offset > lim || area_len > lim - area_offset)
                return -EOVERFLOW;
        const uint64_t end = pos + len, a0 = area_offset, a1 = area_offset + area_len;
        /* The intersection with the area: [i0, i1), empty when i0 >= i1. */
        const uint64_t i0 = pos > a0 ? pos : a0, i1 = end < a1 ? end : a1;
        int r;
        if (i0 >= i1) /* no overlap: all from the template */
                return (r = pread_full(fd, out, len, pos)) < 0 ? r : (ssize_t) len;
        /* Before the area, the area's part, after the area. */
        if (pos < i0 && (r = pread_full(fd, out, (size_t) (i0 - pos), pos)) < 0)
                return r;
        memcpy(out + (i0 - pos), area + (i0 - a0), (size_t) (i1 - i0));
        if (i1 < end && (r = pread_full(fd, out + (i1 - pos), (size_t) (end - i1), i1)) < 0)
                return r;
        return (ssize_t) len;
}

int iso_build_area(const struct bootcfg *c, uint8_t area[BOOTCFG_AREA_SIZE]) {
        return bootcfg_encode(c, area, BOOTCFG_AREA_SIZE);
}

static void put_u64(uint8_t *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t) (v >> (56 - 8 * i));
}

/* A strong ETag: SHA-256 over magic || t's identity (dev, inode, size,
 * mtime) || extra || SHA-256(bytes), in quotes. */
static void etag_make(const char magic[11], const struct iso_template *t, uint64_t extra, const uint8_t *bytes,
                      size_t n, char out[ISO_ETAG_MAX]) {
        uint8_t id[11 + 5 * 8 + CRYPTO_SHA256_LEN], sum[CRYPTO_SHA256_LEN];
        memcpy(id, magic, 11);
        put_u64(id + 11, t->dev);
        put_u64(id + 19, t->ino);
        put_u64(id + 27, t->size);
        put_u64(id + 35, (uint64_t) t->mtime_ns);
        put_u64(id + 43, extra);
        crypto_sha256(bytes, n, id + 51);
        crypto_sha256(id, sizeof id, sum);
        out[0] = '"';
        crypto_hex(sum, sizeof sum, out + 1);
        out[1 + 2 * CRYPTO_SHA256_LEN] = '"';
        out[2 + 2 * CRYPTO_SHA256_LEN] = '\0';
}

void iso_etag(const struct iso_template *t, const uint8_t *area, size_t area_len, char out[ISO_ETAG_MAX]) {
        etag_make("muster-iso1", t, t->area_offset, area, area_len, out);
}

/* ---- PXE ----------------------------------------------------------------- */

static const char *const pxe_names[_PXE_KIND_MAX] = {
        [PXE_VMLINUZ] = "vmlinuz",
        [PXE_INITRD] = "initrd",
        [PXE_SCRIPT] = "boot.ipxe",
};

int svc_pxe_kind_from_name(const char *name) {
        for (int k = 0; k < _PXE_KIND_MAX; k++)
                if (name && strcmp(name, pxe_names[k]) == 0)
                        return k;
        return -1;
}

#define PXE_TAIL_MAX (BOOTCFG_AREA_SIZE + 4096)

int pxe_initrd_tail(uint64_t initrd_size, const uint8_t *cfg, size_t n, struct growbuf *out) {
        static const char zeros[4] = { 0 };
        size_t pad = (size_t) ((4 - (initrd_size & 3)) & 3);
        int r;
        *out = (struct growbuf) { 0 };
        if ((pad && (r = growbuf_append(out, zeros, pad, PXE_TAIL_MAX, 1024)) < 0) ||
            (r = cpio_newc_add(out, "muster", S_IFDIR | 0755, 1, 0, NULL, 0, PXE_TAIL_MAX)) < 0 ||
            (r = cpio_newc_add(out, PXE_CONFIG_PATH, S_IFREG | 0600, 2, 0, cfg, n, PXE_TAIL_MAX)) < 0 ||
            (r = cpio_newc_end(out, PXE_TAIL_MAX)) < 0) {
                if (out->data)
                        explicit_bzero(out->data, out->len);
                free(out->data);
                *out = (struct growbuf) { 0 };
                return r;
        }
        return 0;
}

char *pxe_script(const struct iso_template *t, const char *infra_env_name, const char *query) {
        char *s;
        const char *q = query ? query : "";
        /* The name shown while it boots: the infra-env's, in iPXE-safe characters. */
        char name[128];
        size_t k = 0;
        for (const char *p = infra_env_name ? infra_env_name : ""; *p && k < sizeof name - 1; p++)
                name[k++] = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                                            *p == '-' || *p == '_' || *p == '.'
                                    ? *p
                                    : '_';
        name[k] = '\0';
        if (asprintf(&s,
                     "#!ipxe\n"
                     "# muster discovery: infra-env %s\n"
                     "echo muster discovery: infra-env %s\n"
                     "kernel --name vmlinuz vmlinuz%s initrd=initrd %s\n"
                     "initrd --name initrd initrd%s\n"
                     "boot\n",
                     name, name, q, t->cmdline, q) < 0)
                return NULL;
        return s;
}

ssize_t svc_pxe_read(int fd, uint64_t src_offset, uint64_t src_len, const uint8_t *tail, size_t tail_len, uint64_t pos,
                     void *buf, size_t len) {
        uint8_t *out = buf;
        const uint64_t lim = (uint64_t) INT64_MAX;
        if (len > (size_t) SSIZE_MAX || pos > lim || len > lim - pos || src_offset > lim || src_len > lim - src_offset ||
            tail_len > lim - src_len || pos + len > src_len + tail_len)
                return -EOVERFLOW;
        size_t done = 0;
        int r;
        if (pos < src_len) {
                size_t n = src_len - pos < len ? (size_t) (src_len - pos) : len;
                if ((r = pread_full(fd, out, n, src_offset + pos)) < 0)
                        return r;
                done = n;
        }
        if (done < len)
                memcpy(out + done, tail + (pos + done - src_len), len - done);
        return (ssize_t) len;
}

void pxe_etag(const struct iso_template *t, enum pxe_kind k, const uint8_t *tail, size_t tail_len,
              char out[ISO_ETAG_MAX]) {
        etag_make("muster-pxe1", t, (uint64_t) k, tail, tail_len, out);
}

void svc_iso_file_name(const char *name, char *out, size_t n) {
        size_t k = 0, kept = 0;
        const size_t max = n - 5; /* room for ".iso" and the NUL */
        for (const char *p = name ? name : ""; *p && k < max; p++) {
                char ch = *p;
                bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                          ch == '.' || ch == '_' || ch == '-';
                if (ok && !(k == 0 && ch == '.')) {
                        out[k] = ch;
                        kept++;
                } else
                        out[k] = '_';
                k++;
        }
        /* A name of nothing but replaced characters says nothing. */
        if (kept == 0)
                k = (size_t) snprintf(out, n, "discovery");
        snprintf(out + k, n - k, ".iso");
}
