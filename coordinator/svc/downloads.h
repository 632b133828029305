/* One infra-env's discovery ISO, ready to stream (DESIGN §11): the template
 * opened and checked, the infra-env's config area built (coordinator URL,
 * an agent token, the public key, the CA), and its ETag. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "svc/iso.h"
#include "model.h"
#include "svc/svc.h"

struct iso_image {
        struct iso_template t; /* the template; its fd may be taken (set t.fd = -1) */
        uint8_t *area;         /* BOOTCFG_AREA_SIZE bytes; may be taken */
        char etag[ISO_ETAG_MAX];
};

/* Whether ie's settings (static network configs, SSH key, proxy) fit its
 * ISO's config area beside the longest token, URL, key and CA a download
 * would put there: 0, or -E2BIG with err saying by how many bytes not. */
int svc_iso_config_fits(struct svc *sv, const struct infra_env *ie, char *err, size_t errlen);

/* The ISO of infra-env ie whose agent reaches musterd at coordinator_url:
 * [iso] template must boot ie's architecture, [iso] ca_file (if set) must
 * be PEM. 0 and *img (close with svc_iso_image_close), or -errno with err:
 *   -ENODATA  the ISO cannot be served with this template or configuration
 *             (err says why; 503 for the client)
 *   -EIO      the token or key could not be encoded; -ENOMEM. */
int svc_iso_image_open(struct svc *sv, const struct infra_env *ie, const char *coordinator_url,
                       struct iso_image *img, char *err, size_t errlen);
/* Close what is left of img; the area's bytes (a token) are wiped. */
void svc_iso_image_close(struct iso_image *img);

/* One of ie's PXE files (iso.h: pxe_kind), read on demand with svc_pxe_read:
 * [src_offset, src_offset + src_len) of the template, then tail. */
struct pxe_image {
        struct iso_template t; /* its fd may be taken (set t.fd = -1) */
        enum pxe_kind kind;
        uint64_t src_offset, src_len;
        uint8_t *tail;         /* initrd: the config's archive (a token); boot.ipxe: the script; may be taken */
        size_t tail_len;
        uint64_t size;
        char etag[ISO_ETAG_MAX];
};
/* ie's PXE file `kind` for agents reaching musterd at coordinator_url; the
 * script names the other two with `query` appended (NULL: none). As
 * svc_iso_image_open, and -ENODATA for a template built before PXE. */
int svc_pxe_open(struct svc *sv, const struct infra_env *ie, const char *coordinator_url, enum pxe_kind kind,
                 const char *query, struct pxe_image *img, char *err, size_t errlen);
/* Close what is left of img; the tail's bytes are wiped. */
void svc_pxe_close(struct pxe_image *img);
/* The discovery kernel's command line for ie's hosts (the PXE script's),
 * into out. 0, or -ENODATA (err) without a PXE-ready template. */
int svc_pxe_cmdline(struct svc *sv, const struct infra_env *ie, char out[ISO_CMDLINE_MAX], char *err, size_t errlen);
