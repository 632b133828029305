/* Reading and writing a file descriptor whole (fdio.h). */
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"

ssize_t fd_read_full(int fd, void *buf, size_t n) {
        size_t got = 0;
        while (got < n) {
                ssize_t k = read(fd, (char *) buf + got, n - got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        return (ssize_t) got;
}

int fd_read_all(int fd, size_t hint, size_t max, char **out, size_t *len) {
        size_t cap = (hint < max ? hint : max) + 1, n = 0;
        char *buf = malloc(cap + 1);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k = fd_read_full(fd, buf + n, cap - n);
                if (k < 0) {
                        free(buf);
                        return (int) k;
                }
                n += (size_t) k;
                if (n < cap)
                        break;
                if (n > max) {
                        free(buf);
                        return -EFBIG;
                }
                size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
                char *b = realloc(buf, ncap + 1);
                if (!b) {
                        free(buf);
                        return -ENOMEM;
                }
                buf = b;
                cap = ncap;
        }
        buf[n] = '\0';
        *out = buf;
        *len = n;
        return 0;
}

int fd_write_full(int fd, const void *buf, size_t n) {
        const char *p = buf;
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int fd_fsync_parent(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        _cleanup_close_ int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0)
                return -errno;
        return 0;
}

int fd_write_file_atomic(const char *path, const void *buf, size_t n, mode_t mode) {
        /* Not a regular file there (/dev/stdout, /dev/null, a FIFO): written
         * into as it is; a rename would replace it, fchmod change it. */
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
                int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0)
                        return -errno;
                int r = fd_write_full(fd, buf, n);
                if (close(fd) < 0 && r == 0)
                        r = -errno;
                return r;
        }
        _cleanup_free_ char *tmp = NULL;
        if (asprintf(&tmp, "%s.tmp", path) < 0)
                return -ENOMEM;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        int r = fd_write_full(fd, buf, n);
        if (r == 0 && (fchmod(fd, mode) < 0 || fsync(fd) < 0))
                r = -errno;
        close(fd);
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        (void) fd_fsync_parent(path); /* written; the folder's fsync is best effort */
        return 0;
}
