/* One infra-env's discovery ISO (downloads.h): the template, the config
 * area that makes it this infra-env's, and its ETag. The bytes are read
 * from the template when they are sent (iso_read); nothing is copied. */
#include "downloads.h"

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
                };
                r = iso_build_area(&bc, area);
                if (r < 0)
                        r = errmsg(err, errlen, r == -ENOMEM ? r : -ENODATA, "%s",
                                   r == -E2BIG    ? "the config (coordinator URL, token, key, CA) does not fit the ISO's config area"
                                   : r == -EINVAL ? "the coordinator URL, token or key cannot go into the ISO's config area"
                                                  : "out of memory");
        } else
                r = errmsg(err, errlen, -EIO, "could not encode the public key");
        explicit_bzero(token, strlen(token));
        return r;
}

int svc_iso_image_open(struct svc *sv, const struct infra_env *ie, const char *coordinator_url,
                       struct iso_image *img, char *err, size_t errlen) {
        char why[512];
        _cleanup_free_ char *ca = NULL;
        *img = (struct iso_image) { .t.fd = -1 };
        /* The configuration once: a reload may replace it meanwhile. */
        const struct muster_config *cfg = svc_cfg(sv);
        int r = iso_template_open(cfg->iso_template, &img->t, why, sizeof why);
        if (r < 0)
                return errmsg(err, errlen, -ENODATA, "%s", why);
        if (!ie->cpu_architecture || strcmp(ie->cpu_architecture, img->t.cpu_architecture) != 0)
                return errmsg(err, errlen, -ENODATA, "the infra-env is for %s hosts, the ISO template %s boots %s",
                              ie->cpu_architecture ? ie->cpu_architecture : "?", cfg->iso_template,
                              img->t.cpu_architecture);
        if ((r = read_ca(cfg->iso_ca_file[0] ? cfg->iso_ca_file : sv->tls_ca_file, &ca, why, sizeof why)) < 0)
                return errmsg(err, errlen, r == -ENOMEM ? r : -ENODATA, "%s", why);
        if (!(img->area = malloc(BOOTCFG_AREA_SIZE)))
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        if ((r = build_area(sv, ie, coordinator_url, ca, img->area, err, errlen)) < 0)
                return r;
        iso_etag(&img->t, img->area, BOOTCFG_AREA_SIZE, img->etag);
        return 0;
}

void svc_iso_image_close(struct iso_image *img) {
        if (img->area)
                explicit_bzero(img->area, BOOTCFG_AREA_SIZE);
        free(img->area);
        img->area = NULL;
        iso_template_close(&img->t);
}
