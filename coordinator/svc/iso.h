/* The discovery ISO as musterd serves it (DESIGN §11): the template named by
 * [iso] template, checked against its sidecar TEMPLATE.json, and the bytes of
 * one infra-env's copy, which are the template's with the config area
 * (common/bootcfg.h) overlaid. Nothing is copied or rebuilt: a download reads
 * the template through svc_iso_read(). Pure apart from reading the files. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bootcfg.h"
#include "growbuf.h"

#define ISO_TEMPLATE_FORMAT "muster-iso-template/1"
#define ISO_SIDECAR_MAX (64 * 1024) /* a larger sidecar is not ours */
#define ISO_ETAG_MAX 72             /* "\"" + 64 hex + "\"" + NUL, rounded */
#define ISO_CMDLINE_MAX 1024        /* bytes of the kernel command line, NUL included */

/* An open, checked template. */
struct iso_template {
        int fd;               /* O_RDONLY; -1 when closed */
        uint64_t size;        /* bytes of the file (= the sidecar's "size") */
        uint64_t area_offset; /* where the BOOTCFG_AREA_SIZE-byte area starts */
        /* Identity, for the ETag: a rebuilt or replaced template differs. */
        uint64_t dev, ino;
        int64_t mtime_ns;
        /* The architecture the ISO boots (sidecar "cpu_architecture",
         * cpu_arch_canonical; templates built before it was written: x86_64). */
        char cpu_architecture[16];
        /* Where the kernel and the initramfs are in the ISO, and their
         * command line (sidecar "pxe"; templates built before it: pxe
         * false, and no PXE files). */
        bool pxe;
        uint64_t kernel_offset, kernel_size, initrd_offset, initrd_size;
        char cmdline[ISO_CMDLINE_MAX];
};

/* Open `path` and its sidecar path + ".json" and check them: the sidecar is
 * {"format": ISO_TEMPLATE_FORMAT, "config_offset": N, "config_size":
 * BOOTCFG_AREA_SIZE, "size": S, "cpu_architecture": A?, ...}, the file is regular with S bytes, the
 * area lies inside it and is all zero bytes in the template. 0 and *t (close
 * with iso_template_close); else -errno with the reason in err: -ENOENT and
 * other open errors (template or sidecar missing or unreadable), -EINVAL
 * (a sidecar or template that does not match), -ENOMEM. */
int iso_template_open(const char *path, struct iso_template *t, char *err, size_t errlen);
void iso_template_close(struct iso_template *t);

/* The bytes [pos, pos + len) of the output: the template (read from fd with
 * pread) except where they meet [area_offset, area_offset + area_len), whose
 * bytes come from `area`. Template bytes under the area are not read. The
 * caller keeps pos + len within the file. len, or -errno: -EIO when the
 * file ends early (it shrank), -EOVERFLOW for a range past 2^63, a read
 * error. */
ssize_t svc_iso_read(int fd, uint64_t area_offset, const uint8_t *area, size_t area_len, uint64_t pos, void *buf,
                     size_t len);

/* One infra-env's area (BOOTCFG_AREA_SIZE bytes) from c: bootcfg_encode's
 * result (0, -EINVAL, -E2BIG, -ENOMEM). */
int iso_build_area(const struct bootcfg *c, uint8_t area[BOOTCFG_AREA_SIZE]);

/* A strong ETag ("\"<64 hex>\"", quotes included) over the template's
 * identity (dev, inode, size, mtime, area offset) and the area's bytes: it
 * changes when the template is rebuilt or the config (a rotated token)
 * does. */
void iso_etag(const struct iso_template *t, const uint8_t *area, size_t area_len, char out[ISO_ETAG_MAX]);

/* ---- PXE ----------------------------------------------------------------- */

/* The files a PXE boot takes from musterd: the ISO's kernel, its initramfs
 * with the infra-env's config appended, and the iPXE script loading both. */
enum pxe_kind { PXE_VMLINUZ, PXE_INITRD, PXE_SCRIPT, _PXE_KIND_MAX };
int svc_pxe_kind_from_name(const char *name);
/* Where the agent finds the config in the initramfs (bootcfg's bytes). */
#define PXE_CONFIG_PATH "muster/config.img"
/* What follows the template's initramfs in `initrd`: zero bytes up to a
 * multiple of 4 (where the kernel looks for the next archive), then a cpio
 * archive of the folder "muster" and PXE_CONFIG_PATH (mode 0600: it holds
 * a token) with cfg[0..n), owned by root, time 0. 0 and *out (malloc'd
 * into out->data); -E2BIG, -ENOMEM. */
int pxe_initrd_tail(uint64_t initrd_size, const uint8_t *cfg, size_t n, struct growbuf *out);
/* The iPXE script for t's kernel and initramfs, named relative to where
 * it was fetched; `query` (NULL or "": none) is appended to both names
 * (?token=... for a boot that fetches them from musterd). malloc'd or
 * NULL. */
char *pxe_script(const struct iso_template *t, const char *infra_env_name, const char *query);
/* Bytes [pos, pos + len) of a file made of [src_offset, src_offset +
 * src_len) of fd followed by tail[0..tail_len): len, or -errno (-EIO when
 * the template ended early, -EOVERFLOW). The caller keeps pos + len within
 * src_len + tail_len. */
ssize_t svc_pxe_read(int fd, uint64_t src_offset, uint64_t src_len, const uint8_t *tail, size_t tail_len, uint64_t pos,
                     void *buf, size_t len);
/* A strong ETag over t's identity, the kind and the tail's bytes. */
void pxe_etag(const struct iso_template *t, enum pxe_kind k, const uint8_t *tail, size_t tail_len,
              char out[ISO_ETAG_MAX]);

/* An infra-env name as a file name: [A-Za-z0-9._-] kept, anything else
 * '_', no leading '.', at most `n - 5` bytes, "discovery" when nothing is
 * left; then ".iso". out has n bytes (n >= 16). Pure. */
void svc_iso_file_name(const char *name, char *out, size_t n);
