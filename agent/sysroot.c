/* Root-prefixed file access for the probes (see sysroot.h). Under a sysroot
 * other than "/", opens use openat2(RESOLVE_IN_ROOT) so that links in a
 * captured or hostile tree resolve inside it. */
#include "sysroot.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdio.h"

int sysroot_open(struct sysroot *sr, const char *root) {
        char real[PATH_MAX];

        *sr = (struct sysroot) { .fd = -1 };
        if (!root || !*root)
                root = "/";
        if (!realpath(root, real))
                return -errno;
        sr->live = strcmp(real, "/") == 0;
        sr->root = strdup(sr->live ? "" : real);
        if (!sr->root)
                return -ENOMEM;
        sr->fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sr->fd < 0) {
                int r = -errno;
                sysroot_close(sr);
                return r;
        }
        return 0;
}

void sysroot_close(struct sysroot *sr) {
        if (sr->fd >= 0)
                close(sr->fd);
        free(sr->root);
        *sr = (struct sysroot) { .fd = -1 };
}

static const char *rel(const char *path) {
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

int sr_open(const struct sysroot *sr, const char *path, int flags) {
        static int have_openat2 = 1;
        int fd;

        flags |= O_CLOEXEC;
        if (sr->live) {
                fd = open(path, flags);
                return fd < 0 ? -errno : fd;
        }
        if (have_openat2) {
                struct open_how how = { .flags = (uint64_t) flags, .resolve = RESOLVE_IN_ROOT };
                fd = (int) syscall(SYS_openat2, sr->fd, rel(path), &how, sizeof how);
                if (fd >= 0)
                        return fd;
                if (errno != ENOSYS)
                        return -errno;
                have_openat2 = 0;
        }
        fd = openat(sr->fd, rel(path), flags);
        return fd < 0 ? -errno : fd;
}

char *str_rstrip(char *s) {
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                s[--n] = '\0';
        return s;
}

char *str_dup_trimmed(const char *s) {
        if (!s)
                return NULL;
        while (isspace((unsigned char) *s))
                s++;
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                n--;
        return n ? strndup(s, n) : NULL;
}

ssize_t sr_read_str(const struct sysroot *sr, const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -1;

        if (size == 0)
                return -EINVAL;
        fd = sr_open(sr, path, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
                return fd;
        ssize_t got = fd_read_full(fd, buf, size - 1);
        if (got < 0)
                return got;
        buf[got] = '\0';
        str_rstrip(buf);
        return (ssize_t) strlen(buf);
}

/* Format a path for the *f variants; -ENAMETOOLONG when it does not fit. */
static int vpath(char path[PATH_MAX], const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static int vpath(char path[PATH_MAX], const char *fmt, va_list ap) {
        int n = vsnprintf(path, PATH_MAX, fmt, ap);
        return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

ssize_t sr_read_strf(const struct sysroot *sr, char *buf, size_t size, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int r = vpath(path, fmt, ap);
        va_end(ap);
        return r < 0 ? r : sr_read_str(sr, path, buf, size);
}

char *sr_read_all(const struct sysroot *sr, const char *path, size_t max, size_t *len) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t got = 0, cap = 0;

        fd = sr_open(sr, path, O_RDONLY | O_NONBLOCK);
        if (fd < 0) {
                errno = -fd;
                return NULL;
        }
        for (;;) {
                if (got + 1 >= cap) {
                        if (cap >= max + 1)
                                break;
                        size_t ncap = cap ? cap * 2 : 16384;
                        if (ncap > max + 1)
                                ncap = max + 1;
                        char *n = realloc(buf, ncap);
                        if (!n) {
                                errno = ENOMEM;
                                return NULL;
                        }
                        buf = n;
                        cap = ncap;
                        if (got + 1 >= cap)
                                break;
                }
                ssize_t k = read(fd, buf + got, cap - 1 - got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return NULL;
                }
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        if (!buf && !(buf = malloc(1))) {
                errno = ENOMEM;
                return NULL;
        }
        buf[got] = '\0';
        if (len)
                *len = got;
        return TAKE_PTR(buf);
}

/* A decimal (or 0x hex) integer file; -EINVAL if it is not a clean number. */
static int sr_read_i64(const struct sysroot *sr, const char *path, int64_t *out) {
        char buf[64], *end;
        ssize_t r = sr_read_str(sr, path, buf, sizeof buf);
        if (r < 0)
                return (int) r;
        const char *s = buf;
        while (isspace((unsigned char) *s))
                s++;
        if (!*s)
                return -EINVAL;
        errno = 0;
        long long v = strtoll(s, &end, 0);
        if (errno || *end)
                return -EINVAL;
        *out = v;
        return 0;
}

int sr_read_i64f(const struct sysroot *sr, int64_t *out, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        va_start(ap, fmt);
        int r = vpath(path, fmt, ap);
        va_end(ap);
        return r < 0 ? r : sr_read_i64(sr, path, out);
}

bool sr_exists(const struct sysroot *sr, const char *path) {
        int fd = sr_open(sr, path, O_PATH);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

DIR *sr_opendir(const struct sysroot *sr, const char *path) {
        int fd = sr_open(sr, path, O_RDONLY | O_DIRECTORY);
        if (fd < 0) {
                errno = -fd;
                return NULL;
        }
        DIR *d = fdopendir(fd);
        if (!d)
                close(fd);
        return d;
}

/* Split path into parent and last component, open the parent inside the
 * root, and readlinkat the component. */
static ssize_t sr_readlink(const struct sysroot *sr, const char *path, char *buf, size_t size) {
        char parent[PATH_MAX];
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        ssize_t n;

        if (size == 0 || !*name)
                return -EINVAL;
        if (slash) {
                size_t plen = (size_t) (slash - path);
                if (plen >= sizeof parent)
                        return -ENAMETOOLONG;
                memcpy(parent, path, plen);
                parent[plen] = '\0';
        } else
                strcpy(parent, ".");
        _cleanup_close_ int dfd = sr_open(sr, *parent ? parent : "/", O_PATH | O_DIRECTORY);
        if (dfd < 0)
                return dfd;
        n = readlinkat(dfd, name, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return n;
}

ssize_t sr_readlink_base(const struct sysroot *sr, const char *path, char *buf, size_t size) {
        char link[PATH_MAX];
        ssize_t n = sr_readlink(sr, path, link, sizeof link);
        if (n < 0)
                return n;
        const char *b = strrchr(link, '/');
        b = b ? b + 1 : link;
        if (strlen(b) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, b);
        return (ssize_t) strlen(buf);
}

/* Lexical resolution with links followed inside the root, at most 40 hops. */
ssize_t sr_resolve(const struct sysroot *sr, const char *path, char *buf, size_t size) {
        char out[PATH_MAX] = "";
        char todo[PATH_MAX];
        int hops = 0;

        if (strlen(path) >= sizeof todo)
                return -ENAMETOOLONG;
        strcpy(todo, path);
        char *p = todo;
        while (*p) {
                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                char *end = strchr(p, '/');
                size_t clen = end ? (size_t) (end - p) : strlen(p);
                char comp[NAME_MAX + 1];
                if (clen > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(comp, p, clen);
                comp[clen] = '\0';
                p += clen;
                if (strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0) {
                        char *s = strrchr(out, '/');
                        if (s)
                                *s = '\0';
                        continue;
                }
                size_t olen = strlen(out);
                if (olen + 1 + clen >= sizeof out)
                        return -ENAMETOOLONG;
                out[olen] = '/';
                strcpy(out + olen + 1, comp);

                char link[PATH_MAX];
                ssize_t n = sr_readlink(sr, out, link, sizeof link);
                if (n == -EINVAL || n == -ENOENT)
                        continue; /* not a link (or gone): keep the name */
                if (n < 0)
                        return n;
                if (++hops > 40)
                        return -ELOOP;
                /* Replace the component by the link text, then the rest. */
                char rest[PATH_MAX];
                size_t plen = strlen(p);
                if (plen + (size_t) n + 1 > sizeof rest)
                        return -ENAMETOOLONG;
                memcpy(rest, link, (size_t) n);
                memcpy(rest + n, p, plen + 1);
                if (link[0] == '/')
                        out[0] = '\0';
                else
                        out[olen] = '\0';
                strcpy(todo, rest);
                p = todo;
        }
        if (!*out)
                strcpy(out, "/");
        if (strlen(out) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, out);
        return (ssize_t) strlen(buf);
}
