/* One infra-env's discovery ISO (downloads.h): the template, the config
 * area that makes it this infra-env's, and its ETag. The bytes are read
 * from the template when they are sent (svc_iso_read); nothing is copied. */
#include "svc/downloads.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "errmsg.h"
#include "fdio.h"

/* A CA file's text ([iso] ca_file, or musterd's own CA): 0 and *out (NULL
 * when there is none), or -errno with the reason in err. */
static int read_ca(const char *path, char **out, char *err, size_t errlen) {
        *out = NULL;
        if (!path[0])
                return 0;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errmsg(err, errlen, -errno, "[iso] ca_file %s cannot be read: %s", path, strerror(errno));
        _cleanup_free_ char *buf = malloc(BOOTCFG_PEM_MAX + 2);
        if (!buf)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        ssize_t n = fd_read_full(fd, buf, BOOTCFG_PEM_MAX + 1);
        if (n < 0)
                return errmsg(err, errlen, (int) n, "[iso] ca_file %s cannot be read: %s", path, strerror((int) -n));
        if (n > BOOTCFG_PEM_MAX || n == 0 || memchr(buf, '\0', (size_t) n))
                return errmsg(err, errlen, -EINVAL, "[iso] ca_file %s is not PEM text of at most %d bytes", path,
                              BOOTCFG_PEM_MAX);
        buf[n] = '\0';
        *out = TAKE_PTR(buf);
        return 0;
}

/* The area of ie's copy: its agent's token and the key and CA it trusts. */
static int build_area(struct svc *sv, const struct infra_env *ie, const char *url, const char *ca, uint8_t *area,
                      char *err, size_t errlen) {
        _cleanup_free_ char *token = NULL, *pem = NULL;
        if (auth_issue_agent(sv->key, ie->id, ie->token_generation, &token) < 0)
                return errmsg(err, errlen, -EIO, "could not sign the agent token");
        int r = crypto_key_public_pem(sv->key, &pem);
        if (r >= 0) {
                /* bootcfg's fields are not const; it only reads them. */
                struct bootcfg bc = {
                        .coordinator_url = (char *) url, .infra_env_id = ie->id, .token = token,
                        .coordinator_key_pem = pem, .ca_pem = (char *) ca,
                        .http_proxy = ie->proxy.http_proxy, .https_proxy = ie->proxy.https_proxy,
                        .no_proxy = ie->proxy.no_proxy, .ssh_authorized_key = ie->ssh_authorized_key,
                        .static_network = ie->static_network,
                };
                r = iso_build_area(&bc, area);
                if (r < 0)
                        r = errmsg(err, errlen, r == -ENOMEM ? r : -ENODATA, "%s",
                                   r == -E2BIG    ? "the config (coordinator URL, token, key, CA, proxy, SSH key, static network) does not fit the ISO's config area"
                                   : r == -EINVAL ? "the coordinator URL, token or key cannot go into the ISO's config area"
                                                  : "out of memory");
        } else
                r = errmsg(err, errlen, -EIO, "could not encode the public key");
        explicit_bzero(token, strlen(token));
        return r;
}

/* The template that boots ie's hosts, opened into *t. */
static int open_template(const struct muster_config *cfg, const struct infra_env *ie, struct iso_template *t,
                         char *err, size_t errlen) {
        char why[512];
        int r = iso_template_open(cfg->iso_template, t, why, sizeof why);
        if (r < 0)
                return errmsg(err, errlen, -ENODATA, "%s", why);
        if (!ie->cpu_architecture || strcmp(ie->cpu_architecture, t->cpu_architecture) != 0)
                return errmsg(err, errlen, -ENODATA, "the infra-env is for %s hosts, the ISO template %s boots %s",
                              ie->cpu_architecture ? ie->cpu_architecture : "?", cfg->iso_template,
                              t->cpu_architecture);
        return 0;
}

/* ie's config area (BOOTCFG_AREA_SIZE bytes, malloc'd into *area). */
static int make_area(struct svc *sv, const struct muster_config *cfg, const struct infra_env *ie, const char *url,
                     uint8_t **area, char *err, size_t errlen) {
        char why[512];
        _cleanup_free_ char *ca = NULL;
        int r = read_ca(cfg->iso_ca_file[0] ? cfg->iso_ca_file : sv->tls_ca_file, &ca, why, sizeof why);
        if (r < 0)
                return errmsg(err, errlen, r == -ENOMEM ? r : -ENODATA, "%s", why);
        if (!(*area = malloc(BOOTCFG_AREA_SIZE)))
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        return build_area(sv, ie, url, ca, *area, err, errlen);
}

int svc_iso_config_fits(struct svc *sv, const struct infra_env *ie, char *err, size_t errlen) {
        const struct muster_config *cfg = svc_cfg(sv);
        char why[512];
        _cleanup_free_ char *ca = NULL, *pem = NULL, *token = NULL, *url = NULL;
        int r = read_ca(cfg->iso_ca_file[0] ? cfg->iso_ca_file : sv->tls_ca_file, &ca, why, sizeof why);
        if (r == -ENOMEM)
                return r;
        /* The longest URL a download could put there: the configured one, or
         * a Host header of a 253-byte name and a port. */
        if (cfg->iso_coordinator_url[0])
                url = strdup(cfg->iso_coordinator_url);
        else if (asprintf(&url, "https://%0253d:65535", 0) < 0)
                url = NULL;
        static const char placeholder_id[] = "00000000-0000-4000-8000-000000000000";
        if (!url || auth_issue_agent(sv->key, ie->id ? ie->id : placeholder_id,
                                     ie->token_generation > 0 ? ie->token_generation : 1, &token) < 0 ||
            crypto_key_public_pem(sv->key, &pem) < 0)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        struct bootcfg bc = {
                .coordinator_url = url, .infra_env_id = (char *) (ie->id ? ie->id : placeholder_id), .token = token,
                .coordinator_key_pem = pem, .ca_pem = ca, .http_proxy = ie->proxy.http_proxy,
                .https_proxy = ie->proxy.https_proxy, .no_proxy = ie->proxy.no_proxy,
                .ssh_authorized_key = ie->ssh_authorized_key, .static_network = ie->static_network,
        };
        size_t need = bootcfg_size(&bc);
        explicit_bzero(token, strlen(token));
        if (need == 0)
                return errmsg(err, errlen, -EINVAL, "the infra-env's settings cannot go into a discovery ISO");
        if (need > BOOTCFG_AREA_SIZE)
                return errmsg(err, errlen, -E2BIG,
                              "the infra-env's config takes %zu bytes, %zu over the %d its discovery ISO holds (static "
                              "network configs, SSH key and proxy, beside the token, key and CA)",
                              need, need - BOOTCFG_AREA_SIZE, BOOTCFG_AREA_SIZE);
        return 0;
}

int svc_iso_image_open(struct svc *sv, const struct infra_env *ie, const char *coordinator_url,
                       struct iso_image *img, char *err, size_t errlen) {
        *img = (struct iso_image) { .t.fd = -1 };
        /* The configuration once: a reload may replace it meanwhile. */
        const struct muster_config *cfg = svc_cfg(sv);
        int r;
        if ((r = open_template(cfg, ie, &img->t, err, errlen)) < 0 ||
            (r = make_area(sv, cfg, ie, coordinator_url, &img->area, err, errlen)) < 0)
                return r;
        iso_etag(&img->t, img->area, BOOTCFG_AREA_SIZE, img->etag);
        return 0;
}

int svc_pxe_cmdline(struct svc *sv, const struct infra_env *ie, char out[ISO_CMDLINE_MAX], char *err, size_t errlen) {
        struct iso_template t = { .fd = -1 };
        int r = open_template(svc_cfg(sv), ie, &t, err, errlen);
        if (r >= 0 && !t.pxe)
                r = errmsg(err, errlen, -ENODATA, "the ISO template %s was built before PXE: build it again",
                           svc_cfg(sv)->iso_template);
        if (r >= 0)
                memcpy(out, t.cmdline, ISO_CMDLINE_MAX);
        iso_template_close(&t);
        return r;
}

int svc_pxe_open(struct svc *sv, const struct infra_env *ie, const char *coordinator_url, enum pxe_kind kind,
                 const char *query, struct pxe_image *img, char *err, size_t errlen) {
        *img = (struct pxe_image) { .t.fd = -1, .kind = kind };
        const struct muster_config *cfg = svc_cfg(sv);
        int r = open_template(cfg, ie, &img->t, err, errlen);
        if (r < 0)
                return r;
        if (!img->t.pxe)
                return errmsg(err, errlen, -ENODATA,
                              "the ISO template %s was built before PXE (its sidecar has no \"pxe\"): build it again "
                              "with iso/build.sh", cfg->iso_template);
        switch (kind) {
        case PXE_VMLINUZ:
                img->src_offset = img->t.kernel_offset;
                img->src_len = img->t.kernel_size;
                break;
        case PXE_INITRD: {
                _cleanup_free_ uint8_t *area = NULL;
                if ((r = make_area(sv, cfg, ie, coordinator_url, &area, err, errlen)) < 0) {
                        if (area)
                                explicit_bzero(area, BOOTCFG_AREA_SIZE);
                        return r;
                }
                /* The config with one of the area's zero bytes after the JSON
                 * (bootcfg_decode's end mark), not all 256 KiB of them. */
                size_t n = BOOTCFG_AREA_SIZE;
                while (n > 0 && area[n - 1] == 0)
                        n--;
                n += n < BOOTCFG_AREA_SIZE;
                struct growbuf tail;
                r = pxe_initrd_tail(img->t.initrd_size, area, n, &tail);
                explicit_bzero(area, BOOTCFG_AREA_SIZE);
                if (r < 0)
                        return errmsg(err, errlen, r == -ENOMEM ? r : -ENODATA, "%s",
                                      r == -ENOMEM ? "out of memory" : "the config does not fit the initramfs archive");
                img->src_offset = img->t.initrd_offset;
                img->src_len = img->t.initrd_size;
                img->tail = (uint8_t *) tail.data;
                img->tail_len = tail.len;
                break;
        }
        case PXE_SCRIPT: {
                char *text = pxe_script(&img->t, ie->name, query);
                if (!text)
                        return errmsg(err, errlen, -ENOMEM, "out of memory");
                img->tail = (uint8_t *) text;
                img->tail_len = strlen(text);
                break;
        }
        default:
                return errmsg(err, errlen, -EINVAL, "no such PXE file");
        }
        img->size = img->src_len + img->tail_len;
        pxe_etag(&img->t, kind, img->tail ? img->tail : (const uint8_t *) "", img->tail_len, img->etag);
        return 0;
}

void svc_pxe_close(struct pxe_image *img) {
        if (img->tail)
                explicit_bzero(img->tail, img->tail_len);
        free(img->tail);
        img->tail = NULL;
        iso_template_close(&img->t);
}

void svc_iso_image_close(struct iso_image *img) {
        if (img->area)
                explicit_bzero(img->area, BOOTCFG_AREA_SIZE);
        free(img->area);
        img->area = NULL;
        iso_template_close(&img->t);
}
