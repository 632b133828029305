/* The manifest directory writer (manifestdir.h): every file goes through a
 * temporary file and a rename, the bookkeeping says which files are
 * muster's, and everything happens relative to one directory descriptor so
 * that a symlink planted in the directory cannot redirect a write. */
#include "manifestdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "crypto.h"
#include "errmsg.h"
#include "fdio.h"
#include "json-cleanup.h"
#include "manifest.h"

#define SHA_HEX_LEN (2 * CRYPTO_SHA256_LEN)

void manifestdir_changes_free(struct manifestdir_changes *c) {
        strv_free(&c->added);
        strv_free(&c->updated);
        strv_free(&c->removed);
        c->previous_revision = 0;
}

bool manifestdir_name_is_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;
        if (n == 0 || n > MANIFEST_MAX_FILE_NAME || name[0] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if (name[i] == '/' || (unsigned char) name[i] < 0x20 || name[i] == 0x7f)
                        return false;
        return true;
}

/* mkdir -p with mode 0755. */
static int mkdir_p(const char *path) {
        _cleanup_free_ char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int manifestdir_read_at(int dfd, const char *name, size_t max, char **out, size_t *len) {
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n = 0;

        *out = NULL;
        *len = 0;
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EISDIR;
        if ((uint64_t) st.st_size > max)
                return -EFBIG;
        buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t k = fd_read_full(fd, buf, (size_t) st.st_size);
        if (k < 0)
                return (int) k;
        n = (size_t) k;
        buf[n] = '\0';
        *out = TAKE_PTR(buf);
        *len = n;
        return 0;
}

/* The bookkeeping: *rev and a path -> sha256hex object (never NULL on
 * success). No file: revision 0, no paths. Entries with a name that could
 * not be a manifest's are dropped: they are never removed. */
static int read_book(int dfd, int64_t *rev, json_object **files) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *doc = NULL;
        json_object *r, *f;
        size_t len;

        *rev = 0;
        *files = NULL;
        int k = manifestdir_read_at(dfd, MANIFESTDIR_BOOKKEEPING, MANIFESTDIR_MAX_BOOKKEEPING, &text, &len);
        if (k == -ENOENT) {
                *files = json_object_new_object();
                return *files ? 0 : -ENOMEM;
        }
        if (k == -EFBIG || k == -EISDIR || k == -ELOOP)
                return -EBADMSG;
        if (k < 0)
                return k;
        json_tokener *tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        doc = len <= INT32_MAX ? json_tokener_parse_ex(tok, text, (int) len) : NULL;
        bool whole = json_tokener_get_error(tok) == json_tokener_success;
        json_tokener_free(tok);
        if (!whole || !doc || !json_object_is_type(doc, json_type_object) ||
            !json_object_object_get_ex(doc, "revision", &r) || !json_object_is_type(r, json_type_int) ||
            json_object_get_int64(r) < 0 || !json_object_object_get_ex(doc, "files", &f) ||
            !json_object_is_type(f, json_type_object))
                return -EBADMSG;
        json_object *out = json_object_new_object();
        if (!out)
                return -ENOMEM;
        json_object_object_foreach(f, key, val) {
                if (!json_object_is_type(val, json_type_string)) {
                        json_object_put(out);
                        return -EBADMSG;
                }
                if (!manifestdir_name_is_valid(key))
                        continue;
                if (json_object_object_add(out, key, json_object_get(val)) < 0) {
                        json_object_put(val);
                        json_object_put(out);
                        return -ENOMEM;
                }
        }
        *rev = json_object_get_int64(r);
        *files = out;
        return 0;
}

int manifestdir_applied_revision(const char *dir, int64_t *rev) {
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_json_ json_object *files = NULL;

        *rev = 0;
        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        return read_book(dfd, rev, &files);
}

int manifestdir_write_atomic_at(int dfd, const char *name, const void *data, size_t len, mode_t mode) {
        char tmp[sizeof MANIFESTDIR_TMP_PREFIX + MANIFEST_MAX_FILE_NAME + 32];
        static _Atomic unsigned counter;
        int fd = -1, r = 0;

        for (int attempt = 0; fd < 0; attempt++) {
                snprintf(tmp, sizeof tmp, MANIFESTDIR_TMP_PREFIX "%s.%d.%u", name, (int) getpid(), counter++);
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd < 0 && (errno != EEXIST || attempt > 100))
                        return -errno;
        }
        r = fd_write_full(fd, data, len);
        /* The umask must not decide who can read a manifest. */
        if (r == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0)
                unlinkat(dfd, tmp, 0);
        return r;
}

/* {"files":{...},"revision":N}, paths sorted, written atomically. */
static int write_book(int dfd, int64_t rev, json_object *files) {
        _cleanup_json_ json_object *doc = json_object_new_object(), *sorted = json_object_new_object();
        _cleanup_free_ char *line = NULL; /* here: the gotos below must not skip its initialisation */
        struct strv keys = { 0 };
        int r = 0;

        if (!doc || !sorted)
                return -ENOMEM;
        json_object_object_foreach(files, key, val) {
                (void) val;
                if ((r = strv_push(&keys, key)) < 0)
                        goto out;
        }
        strv_sort(&keys);
        for (size_t i = 0; i < keys.n; i++) {
                json_object *v = json_object_object_get(files, keys.v[i]);
                if (json_object_object_add(sorted, keys.v[i], json_object_get(v)) < 0) {
                        json_object_put(v);
                        r = -ENOMEM;
                        goto out;
                }
        }
        if (json_object_object_add(doc, "files", json_object_get(sorted)) < 0) {
                json_object_put(sorted);
                r = -ENOMEM;
                goto out;
        }
        json_object *rv = json_object_new_int64(rev);
        if (!rv || json_object_object_add(doc, "revision", rv) < 0) {
                json_object_put(rv);
                r = -ENOMEM;
                goto out;
        }
        const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text) {
                r = -ENOMEM;
                goto out;
        }
        if (asprintf(&line, "%s\n", text) < 0) {
                line = NULL;
                r = -ENOMEM;
                goto out;
        }
        r = manifestdir_write_atomic_at(dfd, MANIFESTDIR_BOOKKEEPING, line, strlen(line), 0644);
out:
        strv_free(&keys);
        return r;
}

/* Whether dfd/name is a regular file holding exactly data. */
static bool same_content_at(int dfd, const char *name, const char *data, size_t len) {
        _cleanup_free_ char *cur = NULL;
        size_t n;
        if (len > MANIFESTDIR_MAX_FILE || manifestdir_read_at(dfd, name, MANIFESTDIR_MAX_FILE, &cur, &n) < 0)
                return false;
        return n == len && memcmp(cur, data, len) == 0;
}

/* Remove temporary files an interrupted apply left behind. */
static void remove_stale_tmp(int dfd) {
        int fd = dup(dfd);
        if (fd < 0)
                return;
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        struct dirent *de;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, MANIFESTDIR_TMP_PREFIX, sizeof MANIFESTDIR_TMP_PREFIX - 1) == 0)
                        unlinkat(dfd, de->d_name, 0);
}

int manifestdir_apply(const char *dir, int64_t revision, const struct payload_file *files, size_t n,
                  struct manifestdir_changes *out, char *err, size_t errlen) {
        _cleanup_json_ json_object *prev = NULL, *next = json_object_new_object();
        _cleanup_close_ int dfd = -1;
        int64_t prev_rev = 0;
        int r;

        memset(out, 0, sizeof *out);
        if (err && errlen)
                err[0] = '\0';
        if (!next)
                return -ENOMEM;
        if (revision < 0)
                return errmsg(err, errlen, -EINVAL, "revision %lld is negative", (long long) revision);

        /* The new set: each name checked, each content hashed. */
        for (size_t i = 0; i < n; i++) {
                uint8_t d[CRYPTO_SHA256_LEN];
                char hex[SHA_HEX_LEN + 1];
                if (!manifestdir_name_is_valid(files[i].path))
                        return errmsg(err, errlen, -EINVAL, "\"%s\" is not a plain file name for a manifest directory",
                                      files[i].path ? files[i].path : "");
                if (json_object_object_get_ex(next, files[i].path, NULL))
                        return errmsg(err, errlen, -EINVAL, "the payload holds %s twice", files[i].path);
                if ((r = crypto_sha256(files[i].content, files[i].len, d)) < 0)
                        return r;
                crypto_hex(d, sizeof d, hex);
                json_object *v = json_object_new_string(hex);
                if (!v || json_object_object_add(next, files[i].path, v) < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
        }

        if ((r = mkdir_p(dir)) < 0)
                return errmsg(err, errlen, r, "failed to create %s: %m", dir);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errmsg(err, errlen, -errno, "failed to open %s: %m", dir);
        remove_stale_tmp(dfd);
        r = read_book(dfd, &prev_rev, &prev);
        if (r == -EBADMSG)
                return errmsg(err, errlen, r, "%s/%s is not muster's bookkeeping; remove it to start afresh", dir,
                              MANIFESTDIR_BOOKKEEPING);
        if (r < 0)
                return errmsg(err, errlen, r, "failed to read %s/%s: %m", dir, MANIFESTDIR_BOOKKEEPING);
        out->previous_revision = prev_rev;

        /* Which paths the previous apply knew, then record the new ones
         * before the first of them exists. */
        _cleanup_free_ bool *known = calloc(n ? n : 1, sizeof *known);
        if (!known)
                return -ENOMEM;
        bool widen = false;
        for (size_t i = 0; i < n; i++) {
                if ((known[i] = json_object_object_get_ex(prev, files[i].path, NULL)))
                        continue;
                json_object *sha = json_object_object_get(next, files[i].path);
                if (json_object_object_add(prev, files[i].path, json_object_get(sha)) < 0) {
                        json_object_put(sha);
                        return -ENOMEM;
                }
                widen = true;
        }
        if (widen && (r = write_book(dfd, prev_rev, prev)) < 0)
                return errmsg(err, errlen, r, "failed to write %s/%s: %m", dir, MANIFESTDIR_BOOKKEEPING);

        for (size_t i = 0; i < n; i++) {
                const struct payload_file *f = &files[i];
                const char *new_sha = json_object_get_string(json_object_object_get(next, f->path));
                const char *old_sha = json_object_get_string(json_object_object_get(prev, f->path));
                bool on_disk = same_content_at(dfd, f->path, f->content, f->len);
                if (!on_disk && (r = manifestdir_write_atomic_at(dfd, f->path, f->content, f->len, 0644)) < 0) {
                        manifestdir_changes_free(out);
                        return errmsg(err, errlen, r, "failed to write %s/%s: %m", dir, f->path);
                }
                if (!known[i])
                        r = strv_push(&out->added, f->path);
                else if (!on_disk || !old_sha || strcmp(old_sha, new_sha) != 0)
                        r = strv_push(&out->updated, f->path);
                if (r < 0)
                        goto oom;
        }

        json_object_object_foreach(prev, old_path, old_val) {
                struct stat st;
                (void) old_val;
                if (json_object_object_get_ex(next, old_path, NULL))
                        continue;
                if (fstatat(dfd, old_path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT) {
                                r = -errno;
                                manifestdir_changes_free(out);
                                return errmsg(err, errlen, r, "failed to look at %s/%s: %m", dir, old_path);
                        }
                } else if (S_ISDIR(st.st_mode))
                        continue; /* not a file muster wrote any more: leave it */
                else if (unlinkat(dfd, old_path, 0) < 0 && errno != ENOENT) {
                        r = -errno;
                        manifestdir_changes_free(out);
                        return errmsg(err, errlen, r, "failed to remove %s/%s: %m", dir, old_path);
                }
                if ((r = strv_push(&out->removed, old_path)) < 0)
                        goto oom;
        }

        if ((r = write_book(dfd, revision, next)) < 0) {
                manifestdir_changes_free(out);
                return errmsg(err, errlen, r, "failed to write %s/%s: %m", dir, MANIFESTDIR_BOOKKEEPING);
        }
        if (fsync(dfd) < 0) {
                r = -errno;
                manifestdir_changes_free(out);
                return errmsg(err, errlen, r, "failed to sync %s: %m", dir);
        }
        strv_sort(&out->added);
        strv_sort(&out->updated);
        strv_sort(&out->removed);
        return 0;
oom:
        manifestdir_changes_free(out);
        return -ENOMEM;
}

int manifestdir_mkdir_under(int root, const char *rel, mode_t mode) {
        _cleanup_free_ char *copy = strdup(rel);
        int cur = dup(root);
        char *save = NULL;

        if (!copy || cur < 0) {
                if (cur >= 0)
                        close(cur);
                return copy ? -errno : -ENOMEM;
        }
        for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
                if (mkdirat(cur, part, mode) < 0 && errno != EEXIST) {
                        int r = -errno;
                        close(cur);
                        return r;
                }
                int next = openat(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int r = -errno;
                close(cur);
                if (next < 0)
                        return r;
                cur = next;
        }
        return cur;
}
