/* The installer (install.h): the step's args, the payload check, the image
 * stream to a file, directory or disk, the root partition by libblkid, a
 * loop mount of it, and the manifests through manifestdir. The order is the
 * point: nothing is written until the payload's digest and signature pass,
 * and a FILE/DIR target only ever sees a complete, checked image. */
#include "install.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "blkid-cleanup.h"
#include "cleanup.h"
#include "errmsg.h"
#include "fdio.h"
#include "unowned.h"
#include "hostfiles.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"
#include "manifestdir.h"
#include "release.h"

#define LOOP_MAJOR_NR 7
#define UMOUNT_TRIES 20


#define FAIL(out, r, ...) errmsg((out)->error, sizeof (out)->error, (r), __VA_ARGS__)

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *install_target_kind_to_string(enum install_target_kind k) {
        switch (k) {
        case INSTALL_TARGET_FILE: return "file";
        case INSTALL_TARGET_DIR: return "directory";
        case INSTALL_TARGET_DISK: return "disk";
        }
        return NULL;
}

/* ---- args ----------------------------------------------------------------- */

static bool printable(const char *s, bool allow_space) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f || (!allow_space && *s == ' '))
                        return false;
        return true;
}

/* A string member of 1..max printable bytes into *out; absent/null is
 * -ENOENT when optional. */
static int arg_str(json_object *args, const char *key, size_t max, bool optional, char **out, char *err,
                   size_t errlen) {
        json_object *v;
        if (!json_object_object_get_ex(args, key, &v) || !v) {
                if (optional)
                        return 0;
                return errmsg(err, errlen, -EINVAL, "args.%s is missing", key);
        }
        if (!json_object_is_type(v, json_type_string))
                return errmsg(err, errlen, -EINVAL, "args.%s must be a string", key);
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);
        if (n == 0 || n > max || strlen(s) != n || !printable(s, false))
                return errmsg(err, errlen, -EINVAL, "args.%s must have 1 to %zu printable characters without spaces",
                              key, max);
        if (!(*out = strdup(s)))
                return -ENOMEM;
        return 0;
}

int install_args_parse(json_object *args, struct install_args *out, char *err, size_t errlen) {
        _cleanup_free_ char *mode = NULL;
        json_object *v;
        int r;

        memset(out, 0, sizeof *out);
        if (err && errlen)
                err[0] = '\0';
        if (!args || !json_object_is_type(args, json_type_object))
                return errmsg(err, errlen, -EINVAL, "args must be an object");
        if ((r = arg_str(args, "mode", 16, false, &mode, err, errlen)) < 0)
                goto error;
        if (strcmp(mode, INSTALL_MODE_INSTALL) == 0)
                out->mode = INSTALL_STEP_INSTALL;
        else if (strcmp(mode, INSTALL_MODE_APPLY) == 0)
                out->mode = INSTALL_STEP_APPLY;
        else {
                r = errmsg(err, errlen, -EINVAL, "args.mode must be \"install\" or \"apply\", not \"%s\"", mode);
                goto error;
        }
        if ((r = arg_str(args, "cluster_id", INSTALL_MAX_ID, false, &out->cluster_id, err, errlen)) < 0)
                goto error;
        if (!json_object_object_get_ex(args, "revision", &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) < 1 || json_object_get_int64(v) == INT64_MAX) {
                r = errmsg(err, errlen, -EINVAL, "args.revision must be a positive integer");
                goto error;
        }
        out->revision = json_object_get_int64(v);
        if ((r = arg_str(args, "payload_url", INSTALL_MAX_URL, false, &out->payload_url, err, errlen)) < 0)
                goto error;
        if (out->payload_url[0] != '/' || out->payload_url[1] == '/') {
                r = errmsg(err, errlen, -EINVAL, "args.payload_url must be a path on the coordinator (\"/api/...\")");
                goto error;
        }
        if ((r = arg_str(args, "role", INSTALL_MAX_ID, true, &out->role, err, errlen)) < 0)
                goto error;
        if ((r = arg_str(args, "installation_disk", 4096, true, &out->installation_disk, err, errlen)) < 0)
                goto error;
        if (out->installation_disk && out->installation_disk[0] != '/') {
                r = errmsg(err, errlen, -EINVAL, "args.installation_disk must be an absolute path");
                goto error;
        }
        if ((r = arg_str(args, "host_token", 4096, true, &out->host_token, err, errlen)) < 0)
                goto error;
        for (const char *p = out->host_token; p && *p; p++)
                if (*p <= ' ' || *p > '~') {
                        r = errmsg(err, errlen, -EINVAL, "args.host_token must be a token (no spaces or controls)");
                        goto error;
                }
        return 0;
error:
        install_args_free(out);
        return r;
}

void install_args_free(struct install_args *a) {
        free(a->cluster_id);
        free(a->payload_url);
        free(a->role);
        free(a->installation_disk);
        if (a->host_token) {
                explicit_bzero(a->host_token, strlen(a->host_token));
                free(a->host_token);
        }
        memset(a, 0, sizeof *a);
}

void install_outcome_free(struct install_outcome *o) {
        json_object_put(o->output);
        o->output = NULL;
}

/* ---- targets -------------------------------------------------------------- */

int install_target_classify(const char *path, enum install_target_kind *kind) {
        struct stat st;

        if (!path || !*path)
                return -EINVAL;
        if (stat(path, &st) == 0) {
                if (S_ISDIR(st.st_mode))
                        *kind = INSTALL_TARGET_DIR;
                else if (S_ISBLK(st.st_mode))
                        *kind = INSTALL_TARGET_DISK;
                else if (S_ISREG(st.st_mode))
                        *kind = INSTALL_TARGET_FILE;
                else
                        return -EINVAL;
                return 0;
        }
        if (errno != ENOENT)
                return -errno;
        /* A new file: its directory must be there. */
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        if (stat(dirname(copy), &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        *kind = INSTALL_TARGET_FILE;
        return 0;
}

/* ---- the image stream ------------------------------------------------------ */

int install_image_begin(struct install_image *w, enum install_target_kind kind, const char *path, uint64_t size,
                        char *err, size_t errlen) {
        int r;

        memset(w, 0, sizeof *w);
        w->fd = -1;
        w->kind = kind;
        w->expected = size;
        if (!(w->path = strdup(path)))
                return -ENOMEM;
        if (kind == INSTALL_TARGET_DISK) {
                uint64_t disk_size = 0;
                /* O_EXCL: the kernel refuses a disk that is mounted or in use. */
                w->fd = open(path, O_WRONLY | O_EXCL | O_CLOEXEC | O_NOCTTY);
                if (w->fd < 0) {
                        r = errmsg(err, errlen, -errno, "failed to open disk %s: %m", path);
                        goto error;
                }
                if (ioctl(w->fd, BLKGETSIZE64, &disk_size) < 0) {
                        r = errmsg(err, errlen, -errno, "failed to read the size of disk %s: %m", path);
                        goto error;
                }
                if (disk_size < size) {
                        r = errmsg(err, errlen, -ENOSPC, "disk %s holds %llu bytes, the OS image needs %llu", path,
                                   (unsigned long long) disk_size, (unsigned long long) size);
                        goto error;
                }
        } else {
                _cleanup_free_ char *d = strdup(path), *b = strdup(path);
                if (!d || !b) {
                        r = -ENOMEM;
                        goto error;
                }
                if (asprintf(&w->tmp, "%s/.%s.muster-tmp.XXXXXX", dirname(d), basename(b)) < 0) {
                        w->tmp = NULL;
                        r = -ENOMEM;
                        goto error;
                }
                w->fd = mkostemp(w->tmp, O_CLOEXEC);
                if (w->fd < 0) {
                        r = errmsg(err, errlen, -errno, "failed to create a file beside %s: %m", path);
                        free(w->tmp);
                        w->tmp = NULL;
                        goto error;
                }
                if (fchmod(w->fd, 0644) < 0) {
                        r = errmsg(err, errlen, -errno, "failed to set the mode of %s: %m", w->tmp);
                        goto error;
                }
        }
        if ((r = crypto_sha256_init(&w->sha)) < 0)
                goto error;
        w->sha_live = true;
        return 0;
error:
        install_image_abort(w);
        return r;
}

int install_image_write(struct install_image *w, const void *data, size_t len) {
        if (w->fd < 0)
                return -EBADF;
        if (len > w->expected - w->written)
                return -EFBIG;
        if (crypto_sha256_update(&w->sha, data, len) < 0)
                return -EIO;
        int r = fd_write_full(w->fd, data, len);
        if (r < 0)
                return r;
        w->written += len;
        return 0;
}

int install_image_commit(struct install_image *w, const char *sha256_hex, char *err, size_t errlen) {
        uint8_t d[CRYPTO_SHA256_LEN];
        char hex[2 * CRYPTO_SHA256_LEN + 1];
        int r;

        if (w->fd < 0)
                return -EBADF;
        if (w->written != w->expected) {
                r = errmsg(err, errlen, -EBADMSG, "the OS image has %llu bytes, the payload says %llu",
                           (unsigned long long) w->written, (unsigned long long) w->expected);
                goto error;
        }
        r = crypto_sha256_final(&w->sha, d);
        w->sha_live = false;
        if (r < 0)
                goto error;
        crypto_hex(d, sizeof d, hex);
        if (!sha256_hex || strcasecmp(hex, sha256_hex) != 0) {
                r = errmsg(err, errlen, -EBADMSG, "the OS image's SHA-256 is %s, the payload says %s", hex,
                           sha256_hex ? sha256_hex : "nothing");
                goto error;
        }
        if (w->kind != INSTALL_TARGET_DISK && ftruncate(w->fd, (off_t) w->written) < 0) {
                r = errmsg(err, errlen, -errno, "failed to size %s: %m", w->tmp);
                goto error;
        }
        if (fsync(w->fd) < 0) {
                r = errmsg(err, errlen, -errno, "failed to sync %s: %m", w->tmp ? w->tmp : w->path);
                goto error;
        }
        if (w->kind == INSTALL_TARGET_DISK)
                /* Let the kernel see the new partitions; loop devices do
                 * the real work, so a busy disk is no failure. */
                (void) ioctl(w->fd, BLKRRPART, 0);
        r = close(w->fd);
        w->fd = -1;
        if (r < 0) {
                r = errmsg(err, errlen, -errno, "failed to write %s: %m", w->tmp ? w->tmp : w->path);
                goto error;
        }
        if (w->tmp) {
                if (rename(w->tmp, w->path) < 0) {
                        r = errmsg(err, errlen, -errno, "failed to move the OS image into %s: %m", w->path);
                        goto error;
                }
                free(w->tmp);
                w->tmp = NULL;
                (void) fd_fsync_parent(w->path);
        }
        install_image_abort(w); /* releases what is left; the image stays */
        return 0;
error:
        install_image_abort(w);
        return r;
}

void install_image_abort(struct install_image *w) {
        if (w->fd >= 0)
                close(w->fd);
        w->fd = -1;
        if (w->tmp)
                unlink(w->tmp);
        free(w->tmp);
        w->tmp = NULL;
        free(w->path);
        w->path = NULL;
        if (w->sha_live)
                crypto_sha256_free(&w->sha);
        w->sha_live = false;
}

/* ---- the root partition ----------------------------------------------------- */

/* Probe [offset, offset+size) of fd for a file system: type and label. */
static int probe_fs(int fd, uint64_t offset, uint64_t size, char *type, size_t typelen, char *label,
                    size_t labellen) {
        _cleanup_blkid_probe_ blkid_probe pr = blkid_new_probe();
        const char *v;
        size_t n;

        type[0] = label[0] = '\0';
        if (!pr)
                return -ENOMEM;
        if (blkid_probe_set_device(pr, fd, (blkid_loff_t) offset, (blkid_loff_t) size) < 0)
                return -EIO;
        blkid_probe_enable_partitions(pr, 0);
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_TYPE);
        int r = blkid_do_safeprobe(pr);
        if (r != 0)
                return r < 0 ? -EIO : 0; /* 1: nothing, -2: ambiguous */
        if (blkid_probe_lookup_value(pr, "TYPE", &v, &n) == 0)
                snprintf(type, typelen, "%s", v);
        if (blkid_probe_lookup_value(pr, "LABEL", &v, &n) == 0)
                snprintf(label, labellen, "%s", v);
        return 0;
}

int install_find_root(const char *image, const char *label, struct install_root *out) {
        _cleanup_close_ int fd = open(image, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_blkid_probe_ blkid_probe pr = NULL;
        struct install_root by_name = { 0 };
        bool have_by_name = false;
        struct stat st;
        uint64_t total;
        int r;

        memset(out, 0, sizeof *out);
        if (!label || !*label)
                return -EINVAL;
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (S_ISBLK(st.st_mode)) {
                if (ioctl(fd, BLKGETSIZE64, &total) < 0)
                        return -errno;
        } else
                total = (uint64_t) st.st_size;
        if (!(pr = blkid_new_probe()))
                return -ENOMEM;
        if (blkid_probe_set_device(pr, fd, 0, 0) < 0)
                return -EIO;
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        blkid_partlist ls = blkid_probe_get_partitions(pr);
        int n = ls ? blkid_partlist_numof_partitions(ls) : 0;

        if (n <= 0) {
                /* No partition table: the image may be one file system. */
                struct install_root whole = { .offset = 0, .size = total, .number = 0 };
                if ((r = probe_fs(fd, 0, 0, whole.fs_type, sizeof whole.fs_type, whole.label, sizeof whole.label)) < 0)
                        return r;
                if (!whole.fs_type[0] || strcmp(whole.label, label) != 0)
                        return -ENOENT;
                *out = whole;
                return 0;
        }
        for (int i = 0; i < n; i++) {
                blkid_partition par = blkid_partlist_get_partition(ls, i);
                struct install_root c = { 0 };
                if (!par)
                        continue;
                blkid_loff_t start = blkid_partition_get_start(par), size = blkid_partition_get_size(par);
                if (start < 0 || size <= 0)
                        continue;
                /* libblkid counts partitions in 512-byte sectors. */
                c.offset = (uint64_t) start * 512;
                c.size = (uint64_t) size * 512;
                if (c.offset >= total)
                        continue;
                if (c.size > total - c.offset)
                        c.size = total - c.offset;
                c.number = blkid_partition_get_partno(par);
                const char *pname = blkid_partition_get_name(par);
                snprintf(c.part_name, sizeof c.part_name, "%s", pname ? pname : "");
                if ((r = probe_fs(fd, c.offset, c.size, c.fs_type, sizeof c.fs_type, c.label, sizeof c.label)) < 0)
                        return r;
                if (c.fs_type[0] && strcmp(c.label, label) == 0) {
                        *out = c;
                        return 0;
                }
                if (!have_by_name && strcmp(c.part_name, label) == 0) {
                        by_name = c;
                        have_by_name = true;
                }
        }
        if (!have_by_name)
                return -ENOENT;
        *out = by_name;
        return by_name.fs_type[0] ? 0 : -EMEDIUMTYPE;
}

/* ---- loop mount ----------------------------------------------------------- */

/* A loop device over [offset, offset+size) of backing: its open fd and
 * path. LOOP_CONFIGURE where the kernel has it, else SET_FD + SET_STATUS64. */
static int loop_attach(const char *backing, uint64_t offset, uint64_t size, int *loop_fd, char *dev, size_t devlen) {
        _cleanup_close_ int bfd = open(backing, O_RDWR | O_CLOEXEC | O_NOCTTY);
        _cleanup_close_ int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        struct loop_config cfg = { 0 };
        int e = EBUSY;

        *loop_fd = -1;
        if (bfd < 0 || ctl < 0)
                return -errno;
        cfg.fd = (uint32_t) bfd;
        cfg.info.lo_offset = offset;
        cfg.info.lo_sizelimit = size;
        cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
        snprintf((char *) cfg.info.lo_file_name, sizeof cfg.info.lo_file_name, "%s", backing);

        for (int attempt = 0; attempt < INSTALL_MAX_LOOP_TRIES; attempt++) {
                int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
                if (nr < 0)
                        return -errno;
                snprintf(dev, devlen, "/dev/loop%d", nr);
                int lfd = open(dev, O_RDWR | O_CLOEXEC);
                if (lfd < 0 && errno == ENOENT) {
                        /* A /dev without udev: make the node ourselves. */
                        if (mknod(dev, S_IFBLK | 0600, makedev(LOOP_MAJOR_NR, (unsigned) nr)) < 0 && errno != EEXIST)
                                return -errno;
                        lfd = open(dev, O_RDWR | O_CLOEXEC);
                }
                if (lfd < 0)
                        return -errno;
                if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
                        *loop_fd = lfd;
                        return 0;
                }
                e = errno;
                if (e == EINVAL || e == ENOTTY) {
                        /* Before Linux 5.8. */
                        if (ioctl(lfd, LOOP_SET_FD, bfd) == 0) {
                                if (ioctl(lfd, LOOP_SET_STATUS64, &cfg.info) == 0) {
                                        *loop_fd = lfd;
                                        return 0;
                                }
                                e = errno;
                                (void) ioctl(lfd, LOOP_CLR_FD, 0);
                        } else
                                e = errno;
                }
                close(lfd);
                if (e != EBUSY)
                        return -e;
                /* Someone took that device between GET_FREE and us. */
        }
        return -e;
}

static void loop_detach(int lfd) {
        if (lfd < 0)
                return;
        (void) ioctl(lfd, LOOP_CLR_FD, 0);
        close(lfd);
}

int install_with_root_dir(const char *image, const struct install_root *root,
                          int (*fn)(const char *manifest_dir, void *userdata), void *userdata, char *err,
                          size_t errlen) {
        char dev[64], mnt[] = "/tmp/muster-root.XXXXXX";
        _cleanup_free_ char *dir = NULL;
        int lfd = -1, r;

        if (!root->fs_type[0])
                return errmsg(err, errlen, -EMEDIUMTYPE, "the root partition of %s has no file system", image);
        r = loop_attach(image, root->offset, root->size, &lfd, dev, sizeof dev);
        if (r < 0)
                return errmsg(err, errlen, r, "failed to attach a loop device to %s: %m", image);
        if (!mkdtemp(mnt)) {
                r = errmsg(err, errlen, -errno, "failed to create a mount point: %m");
                loop_detach(lfd);
                return r;
        }
        if (mount(dev, mnt, root->fs_type, MS_NOSUID | MS_NODEV, NULL) < 0) {
                r = errmsg(err, errlen, -errno, "failed to mount the root partition of %s (%s on %s): %m", image,
                           root->fs_type, dev);
                rmdir(mnt);
                loop_detach(lfd);
                return r;
        }

        int rootfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int dfd = rootfd < 0 ? -errno : manifestdir_mkdir_under(rootfd, INSTALL_MANIFEST_SUBDIR, 0755);
        if (dfd < 0)
                r = errmsg(err, errlen, dfd, "failed to create /%s in the root partition of %s: %m",
                           INSTALL_MANIFEST_SUBDIR, image);
        else if (asprintf(&dir, "%s/%s", mnt, INSTALL_MANIFEST_SUBDIR) < 0) {
                dir = NULL;
                r = -ENOMEM;
        } else
                r = fn(dir, userdata);
        if (dfd >= 0)
                close(dfd);
        if (rootfd >= 0) {
                if (syncfs(rootfd) < 0 && r >= 0)
                        r = errmsg(err, errlen, -errno, "failed to sync the root partition of %s: %m", image);
                close(rootfd);
        }

        int u = -1;
        for (int i = 0; i < UMOUNT_TRIES && (u = umount2(mnt, 0)) < 0 && errno == EBUSY; i++)
                usleep(100 * 1000);
        if (u < 0) {
                if (r >= 0)
                        r = errmsg(err, errlen, -errno, "failed to unmount %s: %m", mnt);
                (void) umount2(mnt, MNT_DETACH);
        }
        rmdir(mnt);
        loop_detach(lfd);
        return r;
}

/* ---- the steps -------------------------------------------------------------- */

static void progress(const struct install_io *io, enum install_stage stage, int percent, const char *info) {
        if (io->progress)
                io->progress(io->userdata, stage, percent, info);
}

struct verified {
        json_object *payload;
        struct payload_file *files;
        size_t n_files;
        struct payload_image img;
        struct payload_deletion *deletions;  /* apply: objects to delete from out-of-band files */
        size_t n_deletions;
};

static void verified_free(struct verified *v) {
        free(v->files);
        free(v->deletions);
        json_object_put(v->payload);
        memset(v, 0, sizeof *v);
}

static int fetch_and_verify(const struct install_options *o, const struct install_args *a,
                            const struct install_io *io, struct verified *v, struct install_outcome *out) {
        _cleanup_free_ char *env = NULL;
        char err[512] = "";
        size_t len = 0;
        int r;

        memset(v, 0, sizeof *v);
        r = io->fetch_payload(io->userdata, a->payload_url, PAYLOAD_MAX_ENVELOPE, &env, &len, err, sizeof err);
        if (r < 0)
                return FAIL(out, r, "failed to fetch the payload %s: %s", a->payload_url, err[0] ? err : strerror(-r));
        r = payload_verify(env, len, o->coordinator_key, a->cluster_id, a->revision, &v->payload, err, sizeof err);
        if (r < 0) {
                verified_free(v);
                return FAIL(out, r, INSTALL_REFUSED_PREFIX "%s", err[0] ? err : strerror(-r));
        }
        err[0] = '\0';
        r = payload_files(v->payload, &v->files, &v->n_files, err, sizeof err);
        if (r >= 0)
                r = payload_image(v->payload, &v->img, err, sizeof err);
        if (r >= 0)
                r = payload_deletions(v->payload, &v->deletions, &v->n_deletions, err, sizeof err);
        if (r < 0) {
                verified_free(v);
                return FAIL(out, r, INSTALL_REFUSED_PREFIX "%s", err[0] ? err : strerror(-r));
        }
        return 0;
}

static json_object *strv_json(const struct strv *s) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < s->n; i++) {
                json_object *e = json_object_new_string(s->v[i]);
                if (!e || json_object_array_add(a, e) < 0) {
                        json_object_put(e);
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

/* The apply answer: {applied_revision, added, updated, removed}. */
static json_object *changes_json(int64_t rev, const struct manifestdir_changes *c) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "applied_revision", json_object_new_int64(rev)) < 0 ||
            jadd(o, "added", strv_json(&c->added)) < 0 || jadd(o, "updated", strv_json(&c->updated)) < 0 ||
            jadd(o, "removed", strv_json(&c->removed)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* Writing into a manifest directory, as a callback for the mounted root. */
struct dir_job {
        const struct install_options *o;
        const struct install_args *a;
        const struct verified *v;
        const struct payload_host_view *hv;  /* install: this host's settings */
        struct strv host_files;   /* install: what hostfiles_write() wrote */
        bool apply;               /* a revision not above the applied one is a no-op */
        int64_t applied;          /* out: the revision the directory holds after */
        struct manifestdir_changes ch;
        bool scanned;             /* apply: found and skipped are filled */
        struct unowned_list found; /* apply: the directory's out-of-band objects */
        json_object *skipped;     /* apply: payload HelmCharts left out for them */
        json_object *deleted;     /* apply: out-of-band objects the payload's deletions removed */
        char err[512];
};

/* Apply: what is in the directory besides muster's files, read before
 * anything is written (DESIGN §10). */
static int scan_found(const char *dir, struct dir_job *j) {
        unowned_list_free(&j->found);
        int r = unowned_scan(dir, &j->found, j->err, sizeof j->err);
        if (r < 0)
                return r;
        if (!j->skipped && !(j->skipped = json_object_new_array()))
                return errmsg(j->err, sizeof j->err, -ENOMEM, "out of memory");
        j->scanned = true;
        return 0;
}

/* A file of the payload's name that muster did not write (in j->found):
 * never written over. The skip recorded as conflicts_with_found's. 1, 0
 * or -ENOMEM. */
static int same_name_as_found(const char *dir, const struct payload_file *f, struct dir_job *j) {
        for (size_t i = 0; i < j->found.n; i++) {
                if (strcmp(j->found.v[i].file, f->path) != 0)
                        continue;
                json_object *e = json_object_new_object();
                if (!e || json_object_array_add(j->skipped, e) < 0) {
                        json_object_put(e);
                        return -ENOMEM;
                }
                if (jadd(e, "path", json_object_new_string(f->path)) < 0 ||
                    jadd(e, "conflict_file", json_object_new_string(f->path)) < 0 ||
                    jadd(e, "reason", json_object_new_string("a file of this name that muster did not write is "
                                                             "there; left alone")) < 0)
                        return -ENOMEM;
                log_warning("install", "Not writing %s/%s: a file of that name that muster did not write is there",
                            dir, f->path);
                return 1;
        }
        return 0;
}

/* Whether payload file f holds a HelmChart whose release (name, namespace)
 * an out-of-band file holds already: then that release is someone else's,
 * muster's file is left out and the skip recorded in j->skipped. 1, 0 or
 * -ENOMEM. */
static int conflicts_with_found(const char *dir, const struct payload_file *f, struct dir_job *j) {
        struct manifest_list ml = { 0 };
        char why[256];
        int r = same_name_as_found(dir, f, j);

        if (r != 0)
                return r;

        if (manifest_parse_file(f->path, f->content, f->len, &ml, why, sizeof why) < 0) {
                manifest_list_free(&ml);
                return 0; /* signed and built from parsed manifests: nothing of ours to compare */
        }
        for (size_t i = 0; i < ml.n && r == 0; i++) {
                const struct manifest *m = &ml.v[i];
                _cleanup_free_ char *ns = NULL;
                const char *file = NULL;
                if (strcmp(m->group, UNOWNED_HELM_GROUP) != 0 || strcmp(m->kind, UNOWNED_HELM_KIND) != 0)
                        continue;
                int k = unowned_helm_release_namespace(m->content, m->content_len, m->namespace, &ns);
                if (k == -ENOMEM) {
                        r = k;
                        break;
                }
                if (k < 0 || !unowned_helm_conflict(&j->found, m->name, ns, &file))
                        continue;
                _cleanup_free_ char *reason = NULL;
                if (asprintf(&reason, "an out-of-band HelmChart for release %s/%s is in %s; left alone", ns, m->name,
                             file) < 0) {
                        reason = NULL;
                        r = -ENOMEM;
                        break;
                }
                json_object *e = json_object_new_object();
                if (!e || json_object_array_add(j->skipped, e) < 0) {
                        json_object_put(e);
                        r = -ENOMEM;
                        break;
                }
                if (jadd(e, "path", json_object_new_string(f->path)) < 0 ||
                    jadd(e, "name", json_object_new_string(m->name)) < 0 ||
                    jadd(e, "namespace", json_object_new_string(ns)) < 0 ||
                    jadd(e, "conflict_file", json_object_new_string(file)) < 0 ||
                    jadd(e, "reason", json_object_new_string(reason)) < 0) {
                        r = -ENOMEM;
                        break;
                }
                log_warning("install", "Not writing %s/%s: %s", dir, f->path, reason);
                r = 1;
        }
        manifest_list_free(&ml);
        return r;
}

/* Apply: {found, found_truncated?, skipped, deleted} beside the changes. */
static int found_json(json_object *o, const struct dir_job *j) {
        if (!j->scanned)
                return 0;
        if (jadd(o, "found", unowned_list_to_json(&j->found)) < 0 ||
            (j->found.truncated && jadd(o, "found_truncated", json_object_new_boolean(true)) < 0) ||
            jadd(o, "deleted", j->deleted ? json_object_get(j->deleted) : json_object_new_array()) < 0)
                return -ENOMEM;
        return jadd(o, "skipped", json_object_get(j->skipped));
}

/* Apply, before the payload's files: the out-of-band objects its deletions
 * name go (DESIGN §9), and "found" becomes what is left. */
static int delete_found(const char *dir, struct dir_job *j) {
        int r;

        if (j->v->n_deletions == 0)
                return 0;
        if (!j->deleted && !(j->deleted = json_object_new_array()))
                return errmsg(j->err, sizeof j->err, -ENOMEM, "out of memory");
        if ((r = scan_found(dir, j)) < 0)
                return r;
        r = unowned_delete(dir, &j->found, j->v->deletions, j->v->n_deletions, j->deleted, j->err, sizeof j->err);
        if (r < 0)
                return r;
        if (r > 0)
                log_info("install", "Deleted %d out-of-band object%s from %s as the payload asks", r,
                         r == 1 ? "" : "s", dir);
        return scan_found(dir, j);
}

/* agent.conf and coordinator.pub beside the manifest dir (etc/muster/). The
 * node agent's token is the host's own (host_token) when the coordinator
 * gave one, so that rotating the infra-env's token leaves it alone. */
static int write_node_files(const char *manifest_dir, const struct install_options *o, const char *host_token,
                            char *err, size_t errlen) {
        if (!o || (!o->node_conf && !o->node_key_pem))
                return 0;
        _cleanup_free_ char *own = NULL;
        const char *conf = o->node_conf;
        if (conf && host_token && o->node_coordinator && o->node_infra_env) {
                if (!(own = install_node_conf(o->node_coordinator, o->node_infra_env, host_token,
                                              o->node_ca_pem != NULL)))
                        return errmsg(err, errlen, -ENOMEM, "out of memory");
                conf = own;
        }
        char parent[PATH_MAX];
        if (snprintf(parent, sizeof parent, "%s", manifest_dir) >= (int) sizeof parent)
                return errmsg(err, errlen, -ENAMETOOLONG, "path too long");
        char *slash = strrchr(parent, '/');
        if (!slash || slash == parent)
                return errmsg(err, errlen, -EINVAL, "%s has no parent folder", manifest_dir);
        *slash = '\0';
        _cleanup_close_ int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errmsg(err, errlen, -errno, "cannot open %s: %m", parent);
        int r = 0;
        if (o->node_key_pem &&
            (r = manifestdir_write_atomic_at(dfd, INSTALL_NODE_KEY, o->node_key_pem, strlen(o->node_key_pem), 0644)) < 0)
                return errmsg(err, errlen, r, "cannot write %s/%s: %s", parent, INSTALL_NODE_KEY, strerror(-r));
        if (o->node_ca_pem &&
            (r = manifestdir_write_atomic_at(dfd, INSTALL_NODE_CA, o->node_ca_pem, strlen(o->node_ca_pem), 0644)) < 0)
                return errmsg(err, errlen, r, "cannot write %s/%s: %s", parent, INSTALL_NODE_CA, strerror(-r));
        /* It holds the token: root only. */
        if (conf && (r = manifestdir_write_atomic_at(dfd, INSTALL_NODE_CONF, conf, strlen(conf), 0600)) < 0)
                r = errmsg(err, errlen, r, "cannot write %s/%s: %s", parent, INSTALL_NODE_CONF, strerror(-r));
        if (own)
                explicit_bzero(own, strlen(own));
        if (r < 0)
                return r;
        (void) fsync(dfd);
        return 0;
}

char *install_node_conf(const char *coordinator, const char *infra_env_id, const char *token, bool with_ca) {
        char *s = NULL;
        if (!coordinator || !infra_env_id || !token)
                return NULL;
        if (asprintf(&s,
                     "# Written by muster-agent when it installed this host. muster-agent-node.service\n"
                     "# reads it to keep /etc/muster/manifests at the cluster's payload revision.\n"
                     "coordinator = %s\n"
                     "infra_env = %s\n"
                     "token = %s\n"
                     "coordinator_key_file = " INSTALL_NODE_KEY_PATH "\n"
                     "%s"
                     "state_dir = " INSTALL_NODE_STATE_DIR "\n",
                     coordinator, infra_env_id, token, with_ca ? "ca_file = " INSTALL_NODE_CA_PATH "\n" : "") < 0)
                return NULL;
        return s;
}

/* The host's settings into the root the manifest dir is in. */
static int write_host_files(const char *manifest_dir, struct dir_job *j) {
        size_t n = strlen(manifest_dir), m = strlen("/" INSTALL_MANIFEST_SUBDIR);
        char root[PATH_MAX];
        if (n <= m || n - m >= sizeof root || strcmp(manifest_dir + n - m, "/" INSTALL_MANIFEST_SUBDIR) != 0)
                return errmsg(j->err, sizeof j->err, -EINVAL, "%s is not under a root's /%s", manifest_dir,
                              INSTALL_MANIFEST_SUBDIR);
        memcpy(root, manifest_dir, n - m);
        root[n - m] = '\0';
        _cleanup_close_ int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return errmsg(j->err, sizeof j->err, -errno, "cannot open %s: %m", root);
        int r = hostfiles_write(rfd, j->hv, &j->host_files, j->err, sizeof j->err);
        if (r == 0 && syncfs(rfd) < 0)
                r = errmsg(j->err, sizeof j->err, -errno, "cannot sync %s: %m", root);
        return r;
}

static int write_manifest_dir(const char *dir, void *userdata) {
        struct dir_job *j = userdata;
        int64_t cur = 0;
        int r;

        if (j->apply) {
                r = manifestdir_applied_revision(dir, &cur);
                if (r < 0)
                        return errmsg(j->err, sizeof j->err, r,
                                      "%s/%s is not muster's bookkeeping; remove it to start afresh", dir,
                                      MANIFESTDIR_BOOKKEEPING);
                if ((r = scan_found(dir, j)) < 0)
                        return r;
                if (j->a->revision <= cur) {
                        j->applied = cur;
                        return 0;
                }
                /* The out-of-band objects the payload deletes go first, so
                 * that a retry after a failure does them again. */
                if ((r = delete_found(dir, j)) < 0)
                        return r;
        }
        _cleanup_free_ struct payload_file *keep = calloc(j->v->n_files ? j->v->n_files : 1, sizeof *keep);
        size_t n_keep = 0;
        if (!keep)
                return errmsg(j->err, sizeof j->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < j->v->n_files; i++) {
                r = j->apply ? conflicts_with_found(dir, &j->v->files[i], j) : 0;
                if (r < 0)
                        return errmsg(j->err, sizeof j->err, r, "out of memory");
                if (r == 0)
                        keep[n_keep++] = j->v->files[i];
        }
        r = manifestdir_apply(dir, j->a->revision, keep, n_keep, &j->ch, j->err, sizeof j->err);
        if (r < 0)
                return r;
        if (!j->apply && (r = write_node_files(dir, j->o, j->a ? j->a->host_token : NULL, j->err, sizeof j->err)) < 0)
                return r;
        if (!j->apply && j->hv && (r = write_host_files(dir, j)) < 0)
                return r;
        j->applied = j->a->revision;
        return 0;
}

/* Where the image and manifests go in install mode. */
static int resolve_target(const struct install_options *o, const struct install_args *a,
                          enum install_target_kind *kind, const char **path, struct install_outcome *out) {
        struct stat st;
        int r;

        if (o->target) {
                r = install_target_classify(o->target, kind);
                if (r < 0)
                        return FAIL(out, r, "install target %s is not usable: %s", o->target,
                                    r == -EINVAL ? "not a file, directory or block device" : strerror(-r));
                *path = o->target;
                return 0;
        }
        if (!a->installation_disk)
                return FAIL(out, -EINVAL, "no installation disk: the step names none and no --install-target is given");
        if (stat(a->installation_disk, &st) < 0)
                return FAIL(out, -errno, "installation disk %s: %m", a->installation_disk);
        if (!S_ISBLK(st.st_mode))
                return FAIL(out, -ENOTBLK, "installation disk %s is not a block device", a->installation_disk);
        *kind = INSTALL_TARGET_DISK;
        *path = a->installation_disk;
        return 0;
}

/* Progress is the share of the bytes to write that are written: the
 * image's, then the manifests'. */
struct sink_ctx {
        struct install_image *w;
        const struct install_io *io;
        uint64_t total;          /* image + manifests */
        int64_t last_ms;
        int last_pct;
};

static int bytes_pct(uint64_t done, uint64_t total) {
        if (total == 0 || done >= total)
                return 100;
        return (int) (done * 100.0 / (double) total);
}

/* The bytes written so far as a report, when they moved the percent and
 * the last report is old enough (or `now`: at once, e.g. on a failure). */
static void image_progress(struct sink_ctx *s, bool now_anyway) {
        int pct = bytes_pct(s->w->written, s->total);
        int64_t now = mono_ms();
        if (pct != s->last_pct && (now_anyway || now - s->last_ms >= INSTALL_PROGRESS_MIN_MS)) {
                char info[96];
                snprintf(info, sizeof info, "%llu of %llu bytes", (unsigned long long) s->w->written,
                         (unsigned long long) s->w->expected);
                progress(s->io, INSTALL_STAGE_WRITING_IMAGE, pct, info);
                s->last_pct = pct;
                s->last_ms = now;
        }
}

/* The image's bytes as they come; len 0 is the transfer's tick: a burst
 * that then stalls is still told, from the bytes written. */
static int image_sink(void *userdata, const void *data, size_t len) {
        struct sink_ctx *s = userdata;
        if (len > 0) {
                int r = install_image_write(s->w, data, len);
                if (r < 0)
                        return r;
        }
        image_progress(s, false);
        return 0;
}

static json_object *root_json(const struct install_root *root) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "offset", json_object_new_int64((int64_t) root->offset)) < 0 ||
            jadd(o, "size", json_object_new_int64((int64_t) root->size)) < 0 ||
            jadd(o, "fs_type", json_object_new_string(root->fs_type)) < 0 ||
            jadd(o, "label", json_object_new_string(root->label)) < 0 ||
            jadd(o, "partition_number", json_object_new_int(root->number)) < 0 ||
            (root->part_name[0] && jadd(o, "partition_name", json_object_new_string(root->part_name)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

static int find_root_or_fail(const char *image, const char *label, struct install_root *root,
                             struct install_outcome *out) {
        int r = install_find_root(image, label, root);
        if (r == -ENOENT)
                return FAIL(out, r, "no partition of the OS image has the file system label or GPT name \"%s\"", label);
        if (r == -EMEDIUMTYPE)
                return FAIL(out, r, "partition %d (\"%s\") of the OS image holds no file system libblkid recognises",
                            root->number, label);
        if (r < 0)
                return FAIL(out, r, "failed to probe the partitions of %s: %m", image);
        return 0;
}

int64_t install_image_deadline_ms(const struct install_options *o, uint64_t size) {
        int64_t base = o && o->image_deadline_s > 0 ? o->image_deadline_s : INSTALL_IMAGE_DEADLINE_S;
        return (base + (int64_t) (size / INSTALL_IMAGE_MIN_RATE)) * 1000;
}

static int do_install(const struct install_options *o, const struct install_args *a, const struct install_io *io,
                      struct install_outcome *out) {
        _cleanup_free_ char *image = NULL, *mdir = NULL;
        _cleanup_json_ json_object *res = NULL;
        struct install_image w = { .fd = -1 };
        struct install_root root;
        struct verified v = { 0 };
        struct sink_ctx sc;
        struct dir_job j = { .o = o, .a = a, .apply = false };
        struct payload_host_view hv;
        enum install_target_kind kind;
        const char *tpath = NULL, *info = NULL;
        char err[512] = "", what[128];
        int r;

        snprintf(what, sizeof what, "cluster %s, revision %lld", a->cluster_id, (long long) a->revision);
        progress(io, INSTALL_STAGE_STARTING, 0, what);
        if ((r = resolve_target(o, a, &kind, &tpath, out)) < 0)
                return r;
        if ((r = fetch_and_verify(o, a, io, &v, out)) < 0)
                return r;

        const struct payload_image *img = &v.img;
        const char *label = img->root_label && *img->root_label ? img->root_label : RELEASE_DEFAULT_ROOT_LABEL;
        if (!img->url || !*img->url || img->size <= 0 || !img->sha256) {
                r = FAIL(out, -EBADMSG, INSTALL_REFUSED_PREFIX "its os_image lacks a url, size or sha256");
                goto out;
        }
        /* This host's settings, checked before anything is written. */
        if ((r = payload_host_settings(v.payload, o->host_id, &hv, err, sizeof err)) < 0) {
                FAIL(out, r, INSTALL_REFUSED_PREFIX "%s", err);
                goto out;
        }
        j.hv = &hv;
        if (kind == INSTALL_TARGET_DIR) {
                if (asprintf(&image, "%s/%s", tpath, INSTALL_DIR_IMAGE) < 0)
                        image = NULL;
        } else
                image = strdup(tpath);
        if (!image) {
                r = FAIL(out, -ENOMEM, "out of memory");
                goto out;
        }

        /* The image: streamed, hashed, checked, then in place. */
        uint64_t total = (uint64_t) img->size, manifest_bytes = 0;
        for (size_t k = 0; k < v.n_files; k++)
                manifest_bytes += v.files[k].len;
        total += manifest_bytes;
        snprintf(what, sizeof what, "%lld bytes to %s", (long long) img->size, install_target_kind_to_string(kind));
        progress(io, INSTALL_STAGE_WRITING_IMAGE, 0, what);
        r = install_image_begin(&w, kind, image, (uint64_t) img->size, err, sizeof err);
        if (r < 0) {
                FAIL(out, r, "%s", err);
                goto out;
        }
        sc = (struct sink_ctx) { .w = &w, .io = io, .total = total, .last_ms = mono_ms(), .last_pct = 0 };
        err[0] = '\0';
        r = io->fetch_image(io->userdata, img->url, (uint64_t) img->size, image_sink, &sc, err, sizeof err);
        if (r < 0)
                image_progress(&sc, true); /* the failure names the percent reached */
        if (r == -EFBIG)
                FAIL(out, r, "the OS image from %s is larger than the payload's %lld bytes", img->url, (long long) img->size);
        else if (r < 0)
                FAIL(out, r, "failed to download the OS image from %s: %s", img->url, err[0] ? err : strerror(-r));
        else if ((r = install_image_commit(&w, img->sha256, err, sizeof err)) < 0)
                FAIL(out, r, "%s", err);
        install_image_abort(&w);
        if (r < 0)
                goto out;
        /* The root partition, and the manifests into it. */
        if ((r = find_root_or_fail(image, label, &root, out)) < 0)
                goto out;
        snprintf(what, sizeof what, "image written and checked; %zu manifests (%llu bytes)", v.n_files,
                 (unsigned long long) manifest_bytes);
        progress(io, INSTALL_STAGE_WRITING_PAYLOAD, bytes_pct((uint64_t) img->size, total), what);
        j.v = &v;
        if (kind == INSTALL_TARGET_DIR) {
                if (asprintf(&mdir, "%s/%s", tpath, INSTALL_MANIFEST_SUBDIR) < 0) {
                        mdir = NULL;
                        r = FAIL(out, -ENOMEM, "out of memory");
                        goto out;
                }
                r = write_manifest_dir(mdir, &j);
                if (r < 0)
                        FAIL(out, r, "failed to write the manifests: %s", j.err);
        } else {
                err[0] = '\0';
                r = install_with_root_dir(image, &root, write_manifest_dir, &j, err, sizeof err);
                if (r < 0)
                        FAIL(out, r, "failed to write the manifests: %s", j.err[0] ? j.err : err);
        }
        if (r < 0)
                goto out;

        if (kind == INSTALL_TARGET_FILE)
                info = "not rebooting: install target is a file";
        else if (kind == INSTALL_TARGET_DIR)
                info = "not rebooting: install target is a directory";
        else if (o->target)
                info = "not rebooting: install target given (--install-target)";
        else if (o->no_reboot)
                info = "not rebooting: --no-reboot";
        else {
                info = "rebooting into the installed system";
                out->reboot = true;
        }
        /* Everything is written; the coordinator calls the host done when
         * its installed system checks in. */
        progress(io, INSTALL_STAGE_REBOOTING, 100, info);

        res = json_object_new_object();
        if (!res || jadd(res, "applied_revision", json_object_new_int64(a->revision)) < 0 ||
            jadd(res, "root_partition", root_json(&root)) < 0 ||
            jadd(res, "manifests", json_object_new_int64((int64_t) v.n_files)) < 0 ||
            jadd(res, "host_files", strv_json(&j.host_files)) < 0) {
                out->reboot = false;
                r = FAIL(out, -ENOMEM, "out of memory");
                goto out;
        }
        out->output = TAKE_PTR(res);
        r = 0;
out:
        strv_free(&j.host_files);
        manifestdir_changes_free(&j.ch);
        verified_free(&v);
        return r;
}

static int do_apply(const struct install_options *o, const struct install_args *a, const struct install_io *io,
                    struct install_outcome *out) {
        _cleanup_free_ char *mdir = NULL;
        struct dir_job j = { .o = o, .a = a, .apply = true };
        enum install_target_kind kind = INSTALL_TARGET_DIR;
        struct verified v = { 0 };
        int r;

        if (o->node) {
                if (!o->manifest_dir)
                        return FAIL(out, -EINVAL, "no --manifest-dir to apply the payload to");
                /* Nothing to fetch when the directory is there already. */
                int64_t cur = 0;
                if ((r = manifestdir_applied_revision(o->manifest_dir, &cur)) < 0)
                        return FAIL(out, r, "%s/%s is not muster's bookkeeping; remove it to start afresh",
                                    o->manifest_dir, MANIFESTDIR_BOOKKEEPING);
                if (a->revision <= cur) {
                        j.applied = cur;
                        if ((r = scan_found(o->manifest_dir, &j)) < 0) {
                                FAIL(out, r, "failed to look at %s: %s", o->manifest_dir, j.err);
                                goto out;
                        }
                        goto answer;
                }
        } else if (!o->target)
                return FAIL(out, -EINVAL, "apply steps are run by muster-agent node (--manifest-dir); "
                                          "this agent has no --install-target to apply to");
        else if ((r = install_target_classify(o->target, &kind)) < 0)
                return FAIL(out, r, "install target %s is not usable: %s", o->target,
                            r == -EINVAL ? "not a file, directory or block device" : strerror(-r));

        if ((r = fetch_and_verify(o, a, io, &v, out)) < 0)
                return r;
        j.v = &v;
        if (o->node || kind == INSTALL_TARGET_DIR) {
                if (o->node)
                        mdir = strdup(o->manifest_dir);
                else if (asprintf(&mdir, "%s/%s", o->target, INSTALL_MANIFEST_SUBDIR) < 0)
                        mdir = NULL;
                if (!mdir) {
                        r = FAIL(out, -ENOMEM, "out of memory");
                        goto out;
                }
                if ((r = write_manifest_dir(mdir, &j)) < 0) {
                        FAIL(out, r, "failed to apply the manifests: %s", j.err);
                        goto out;
                }
        } else {
                const char *label = v.img.root_label && *v.img.root_label ? v.img.root_label
                                                                          : RELEASE_DEFAULT_ROOT_LABEL;
                struct install_root root;
                char err[512] = "";
                if ((r = find_root_or_fail(o->target, label, &root, out)) < 0)
                        goto out;
                r = install_with_root_dir(o->target, &root, write_manifest_dir, &j, err, sizeof err);
                if (r < 0) {
                        FAIL(out, r, "failed to apply the manifests: %s", j.err[0] ? j.err : err);
                        goto out;
                }
        }
answer:
        r = 0;
        if (!(out->output = changes_json(j.applied, &j.ch)) || found_json(out->output, &j) < 0) {
                json_object_put(out->output);
                out->output = NULL;
                r = FAIL(out, -ENOMEM, "out of memory");
        }
out:
        manifestdir_changes_free(&j.ch);
        unowned_list_free(&j.found);
        json_object_put(j.skipped);
        json_object_put(j.deleted);
        verified_free(&v);
        return r;
}

int install_execute(const struct install_options *o, const struct install_args *a, const struct install_io *io,
                    struct install_outcome *out) {
        memset(out, 0, sizeof *out);
        if (!o || !o->coordinator_key)
                return FAIL(out, -ENOKEY, INSTALL_ERR_NO_KEY);
        if (a->mode == INSTALL_STEP_INSTALL) {
                if (o->node)
                        return FAIL(out, -EOPNOTSUPP,
                                    "muster-agent node only applies payloads (mode apply); it does not install");
                return do_install(o, a, io, out);
        }
        return do_apply(o, a, io, out);
}
