/* Releases (releases.h): the import with its warnings and the OS image
 * checks, reading and deletion, the filter preview, the OS image of a path
 * release opened safely from the releases folder, and the signing key. */
#include "svc/releases.h"
#include "svc/refresh.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "crypto.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "log.h"

#define MAX_WARNINGS_IN_REASON 5

static void err_clear(char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
}

/* ---- the OS image of a path release ---------------------------------------- */

/* Whether the canonical path p is dir or lies under it. */
static bool path_under(const char *p, const char *dir) {
        size_t n = strlen(dir);
        if (n == 1 && dir[0] == '/')
                return true;
        return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Open the resolved path `rel` below the directory dfd without following any
 * link on the way (the resolution was done; a link swapped in since is
 * refused) and without blocking on a FIFO. openat2 where the kernel (or a
 * seccomp filter) allows it, else O_NOFOLLOW on the whole path. */
static int open_beneath(int dfd, const char *rel, const char *whole) {
        static _Atomic int have_openat2 = 1;
        const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
        if (have_openat2) {
                struct open_how how = {
                        .flags = (uint64_t) flags,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                int fd = (int) syscall(SYS_openat2, dfd, rel, &how, sizeof how);
                if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
                        return fd;
                have_openat2 = 0;
        }
        return open(whole, flags | O_NOFOLLOW);
}

/* The OS image `path` of a release (absolute, or relative to the releases
 * folder) opened for reading, if it is a regular file under the releases
 * folder ([releases] image_dir) once every link is resolved, and not one of
 * the state directory's files. The fd (blocking again) and its stat, or
 * -errno with the reason in why: a reason names the path and the folder,
 * never anything about the file's content. Nothing here blocks on a FIFO. */
static int os_image_open(struct svc *sv, const char *path, struct stat *st, char *why, size_t whylen) {
        const struct muster_config *cfg = svc_cfg(sv);
        char folder[PATH_MAX], state[PATH_MAX], real[PATH_MAX];
        _cleanup_free_ char *configured = NULL, *joined = NULL;

        if (cfg->releases_image_dir[0])
                configured = strdup(cfg->releases_image_dir);
        else if (asprintf(&configured, "%s/images", cfg->state_dir) < 0)
                configured = NULL;
        if (!configured)
                return -ENOMEM;
        if (!realpath(configured, folder)) {
                int r = -errno;
                snprintf(why, whylen,
                         "the releases folder %.256s ([releases] image_dir) is missing on musterd's machine: %s",
                         configured, strerror(-r));
                return r;
        }
        if (!realpath(cfg->state_dir, state))
                return -errno;
        if (path[0] != '/') {
                if (asprintf(&joined, "%s/%s", folder, path) < 0) {
                        joined = NULL;
                        return -ENOMEM;
                }
                path = joined;
        }
        /* realpath() only reads links and stats: it never opens the file. */
        if (!realpath(path, real) || !path_under(real, folder) || strcmp(real, folder) == 0) {
                snprintf(why, whylen, "os_image.path %.256s is not a file under the releases folder %.256s "
                         "([releases] image_dir)", path, folder);
                return -EACCES;
        }
        /* A folder that holds the state directory must not hand out its keys. */
        if (path_under(real, state) && !(path_under(folder, state) && strcmp(folder, state) != 0)) {
                snprintf(why, whylen, "os_image.path %.256s is in musterd's state directory", path);
                return -EACCES;
        }
        /* Nor the store kept elsewhere (its -wal and -shm files included). */
        const char *db = strncmp(cfg->store, "sqlite:", 7) == 0 ? cfg->store + 7
                         : cfg->store[0] == '/'                ? cfg->store
                                                               : NULL;
        char dbreal[PATH_MAX];
        if (db && realpath(db, dbreal) && strncmp(real, dbreal, strlen(dbreal)) == 0) {
                snprintf(why, whylen, "os_image.path %.256s is musterd's store", path);
                return -EACCES;
        }
        _cleanup_close_ int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        const char *rel = real + strlen(folder);
        while (*rel == '/')
                rel++;
        int fd = open_beneath(dfd, rel, real);
        if (fd < 0) {
                int r = -errno;
                snprintf(why, whylen, "os_image.path %.256s cannot be opened on musterd's machine: %s", path,
                         r == -ELOOP ? "it was replaced by a symbolic link" : strerror(-r));
                return r;
        }
        if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
                close(fd);
                snprintf(why, whylen, "os_image.path %.256s is not a regular file", path);
                return -EINVAL;
        }
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* The OS image of a path release must be in the releases folder as
 * release.yaml describes it. 0, or -EINVAL (-ENOMEM) with err. A refusal
 * names what release.yaml says, never the size or digest of the file found
 * (which may be any file: they would tell an admin about a key). */
static int check_os_image(struct svc *sv, const struct release_os_image *img, char *err, size_t errlen) {
        struct crypto_sha256_ctx ctx;
        uint8_t sum[CRYPTO_SHA256_LEN];
        char hex[2 * CRYPTO_SHA256_LEN + 1], why[1024] = "";
        struct stat st;
        _cleanup_free_ char *buf = NULL;
        const size_t bufsz = 1 << 20;
        int64_t total = 0;

        _cleanup_close_ int fd = os_image_open(sv, img->path, &st, why, sizeof why);
        if (fd == -ENOMEM)
                return errmsg(err, errlen, fd, "out of memory");
        if (fd < 0) {
                if (why[0])
                        return errmsg(err, errlen, -EINVAL, "%s", why);
                return errmsg(err, errlen, -EINVAL, "os_image.path %.256s cannot be checked on musterd's machine: %s",
                              img->path, strerror(-fd));
        }
        if ((int64_t) st.st_size != img->size)
                return errmsg(err, errlen, -EINVAL,
                              "os_image.path %.256s does not have the size release.yaml gives (%lld bytes)", img->path,
                              (long long) img->size);
        if (!(buf = malloc(bufsz)) || crypto_sha256_init(&ctx) < 0)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        for (;;) {
                ssize_t n = read(fd, buf, bufsz);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;
                        crypto_sha256_free(&ctx);
                        return errmsg(err, errlen, -EINVAL, "os_image.path %.256s cannot be read: %s", img->path,
                                      strerror(e));
                }
                if (n == 0)
                        break;
                crypto_sha256_update(&ctx, buf, (size_t) n);
                total += n;
        }
        crypto_sha256_final(&ctx, sum);
        crypto_hex(sum, sizeof sum, hex);
        if (total != img->size || strcmp(hex, img->sha256) != 0)
                return errmsg(err, errlen, -EINVAL,
                              "os_image.path %.256s does not have the sha256 release.yaml gives (%s)", img->path,
                              img->sha256);
        return 0;
}

/* ---- import ------------------------------------------------------------- */

/* Every manifest naming a capability release.yaml does not declare, as
 * {file, document, capability, message}: such a manifest is never installed,
 * which is most likely a mistake in the release. NULL on ENOMEM. */
static json_object *undeclared_warnings(const struct release_info *info, const struct manifest_list *ms) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < ms->n; i++) {
                struct strv names = { 0 };
                if (cap_undeclared(&ms->v[i], &info->known_capabilities, &names) < 0) {
                        strv_free(&names);
                        return NULL;
                }
                for (size_t k = 0; k < names.n; k++) {
                        char msg[512];
                        snprintf(msg, sizeof msg, "%.128s: %s names capability \"%.64s\", which release.yaml does "
                                 "not declare (known_capabilities): that manifest is never installed",
                                 ms->v[i].file, CAP_ANN_CAPABILITY, names.v[k]);
                        json_object *w = json_object_new_object();
                        if (!w || json_object_array_add(a, w) < 0) {
                                json_object_put(w);
                                strv_free(&names);
                                return NULL;
                        }
                        json_object_object_add(w, "file", json_object_new_string(ms->v[i].file));
                        json_object_object_add(w, "document", json_object_new_int((int) ms->v[i].doc_index));
                        json_object_object_add(w, "capability", json_object_new_string(names.v[k]));
                        json_object_object_add(w, "message", json_object_new_string(msg));
                }
                strv_free(&names);
        }
        return TAKE_PTR(a);
}

/* Compute and store the status of every cluster that names `version` and
 * has none yet (the release was imported after the cluster was created),
 * and validate each again. */
static void release_imported(struct svc *sv, const char *version) {
        struct loaded_release lr;
        struct list_page pg = { .limit = STORE_MAX_LIMIT };
        char err[256];

        if (release_load(sv, version, false, &lr) < 0)
                return;
        for (;;) {
                struct cluster_list l = { 0 };
                if (store_cluster_list(sv->store, NULL, &pg, &l) < 0) {
                        cluster_list_free(&l);
                        break;
                }
                for (size_t i = 0; i < l.n; i++) {
                        struct cluster *c = &l.v[i];
                        if (c->has_cap_status || !c->release_version || strcmp(c->release_version, version) != 0)
                                continue;
                        if (revisions_compute(&lr, c, &c->cap_spec, false, NULL, err, sizeof err) < 0)
                                continue; /* capabilities-valid says why */
                        if (store_cluster_update(sv->store, c, CL_F_CAP_STATUS | CL_F_CONDITIONS) == 0)
                                (void) refresh_cluster(sv, c->id, NULL);
                }
                pg.after = l.next_after;
                cluster_list_free(&l);
                if (!pg.after)
                        break;
        }
        svc_release_unload(&lr);
}

/* With "strict": true, warnings refuse the import: -EINVAL naming the
 * first few. */
static int refuse_warnings(json_object *warnings, char *err, size_t errlen) {
        char reason[2048];
        size_t n = json_object_array_length(warnings), len = 0;
        len += (size_t) snprintf(reason, sizeof reason,
                                 "strict import: %zu manifest%s name%s capabilities release.yaml does not declare:", n,
                                 n == 1 ? "" : "s", n == 1 ? "s" : "");
        for (size_t i = 0; i < n && i < MAX_WARNINGS_IN_REASON && len < sizeof reason; i++) {
                json_object *w = json_object_array_get_idx(warnings, i);
                len += (size_t) snprintf(reason + len, sizeof reason - len, "%s %s (%s)", i ? "," : "",
                                         json_object_get_string(json_object_object_get(w, "file")),
                                         json_object_get_string(json_object_object_get(w, "capability")));
        }
        if (n > MAX_WARNINGS_IN_REASON && len < sizeof reason)
                snprintf(reason + len, sizeof reason - len, " and %zu more", n - MAX_WARNINGS_IN_REASON);
        return errmsg(err, errlen, -EINVAL, "%s", reason);
}

int svc_release_import(struct svc *sv, const struct release_info *info, const struct manifest_list *ms,
                       size_t n_files, bool strict, const char *by, struct loaded_release *out,
                       json_object **warnings, char *err, size_t errlen) {
        _cleanup_json_ json_object *w = NULL;
        int r;

        *out = (struct loaded_release) { 0 };
        release_record_init(&out->r);
        *warnings = NULL;
        err_clear(err, errlen);
        if (!(w = undeclared_warnings(info, ms)))
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        if (strict && json_object_array_length(w) > 0)
                return refuse_warnings(w, err, errlen);
        if (info->os_image.path && (r = check_os_image(sv, &info->os_image, err, errlen)) < 0)
                return r;
        r = store_release_import(sv->store, info, ms, &out->r);
        if (r == -EEXIST)
                return errmsg(err, errlen, r, "release %s is already imported", info->version);
        if (r < 0)
                return r;
        out->loaded = true;
        size_t n_warn = json_object_array_length(w);
        char extra[128] = "";
        if (n_warn)
                snprintf(extra, sizeof extra, "; %zu warning%s: capabilities release.yaml does not declare", n_warn,
                         n_warn == 1 ? "" : "s");
        svc_event(sv, n_warn ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL,
                  "release %s imported by %s: %zu manifests from %zu files%s", info->version, by, ms->n, n_files,
                  extra);
        release_imported(sv, info->version);
        *warnings = TAKE_PTR(w);
        return 0;
}

/* ---- read, delete ------------------------------------------------------- */

int svc_release_get(struct svc *sv, const char *version, bool with_manifests, struct loaded_release *lr, char *err,
                    size_t errlen) {
        err_clear(err, errlen);
        int r = release_load(sv, version, with_manifests, lr);
        if (r == -ENOENT)
                return errmsg(err, errlen, r, "release %s is not imported", version);
        return r;
}

int svc_release_list(struct svc *sv, const struct list_page *pg, struct release_record_list *out) {
        return store_release_list(sv->store, pg, out);
}

void svc_release_list_free(struct release_record_list *l) {
        release_record_list_free(l);
}

int svc_release_delete(struct svc *sv, const char *version, const char *by, char *err, size_t errlen) {
        err_clear(err, errlen);
        int r = store_release_delete(sv->store, version);
        if (r == -EBUSY)
                return errmsg(err, errlen, r, "release %s is the release of a cluster; it cannot be deleted", version);
        if (r == -ENOENT)
                return errmsg(err, errlen, r, "release %s is not imported", version);
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "release %s deleted by %s", version, by);
        return 0;
}

/* ---- preview ------------------------------------------------------------ */

int svc_release_preview(struct svc *sv, const struct loaded_release *lr, const struct svc_release_query *q,
                        struct svc_release_preview *out, char *err, size_t errlen) {
        static const struct strv none = { 0 };
        char why[512];
        (void) sv;
        *out = (struct svc_release_preview) { .n = lr->ms.n };
        cap_status_init(&out->caps);
        err_clear(err, errlen);
        struct cap_spec spec = {
                .baseline = (char *) q->baseline,
                .additional = q->additional ? *q->additional : none,
        };
        if (cap_validate_spec(&lr->r.info, &spec, why, sizeof why) < 0)
                return errmsg(err, errlen, -EINVAL, "%s", why);
        if (cap_compute(&lr->r.info, &spec, NULL, NULL, &out->caps) < 0)
                return errmsg(err, errlen, -EIO, "could not compute the enabled capabilities");
        struct filter_context ctx = {
                .profile = q->profile ? q->profile : lr->r.info.default_profile,
                .feature_set = q->feature_set,
                .exclude_ids = q->exclude ? q->exclude : &none,
                .enabled = &out->caps.enabled,
                .known = &lr->r.info.known_capabilities,
        };
        out->profile = ctx.profile;
        if (filter_release(&lr->ms, &ctx, &out->res) < 0)
                return errmsg(err, errlen, -EIO, "could not filter the release");
        return 0;
}

void svc_release_preview_free(struct svc_release_preview *p) {
        for (size_t i = 0; p->res && i < p->n; i++)
                filter_result_free(&p->res[i]);
        free(p->res);
        cap_status_free(&p->caps);
        *p = (struct svc_release_preview) { 0 };
        cap_status_init(&p->caps);
}

/* ---- OS image, signing key ------------------------------------------------ */

int svc_release_os_image(struct svc *sv, const char *version, uint64_t *size, char *err, size_t errlen) {
        struct loaded_release lr;
        struct stat st;
        char why[1024] = "";
        int r = svc_release_get(sv, version, false, &lr, err, errlen);
        if (r < 0)
                goto out;
        const struct release_os_image *img = &lr.r.info.os_image;
        if (!img->path) {
                r = errmsg(err, errlen, -ENOENT, "the OS image of release %s is served from %s", lr.r.info.version,
                           img->url ? img->url : "elsewhere");
                goto out;
        }
        int fd = os_image_open(sv, img->path, &st, why, sizeof why);
        if (fd < 0) {
                /* The folder or the file changed since the import (or the
                 * release predates the folder): the reason goes to the log. */
                log_warning("releases", "OS image of release %s refused: %s", lr.r.info.version,
                            why[0] ? why : strerror(-fd));
                r = errmsg(err, errlen, -ENOENT, "the OS image of release %s is gone from musterd's releases folder",
                           lr.r.info.version);
                goto out;
        }
        if ((int64_t) st.st_size != img->size) {
                close(fd);
                r = errmsg(err, errlen, -ESTALE,
                           "the OS image of release %s changed on musterd's machine since its import",
                           lr.r.info.version);
                goto out;
        }
        *size = (uint64_t) st.st_size;
        r = fd;
out:
        svc_release_unload(&lr);
        return r;
}

int svc_signing_key(struct svc *sv, char **pem, char *err, size_t errlen) {
        err_clear(err, errlen);
        int r = crypto_key_public_pem(sv->key, pem);
        if (r < 0)
                return errmsg(err, errlen, r == -ENOMEM ? r : -EIO, "could not encode the public key");
        return 0;
}
