/* Every /sys, /proc, /run and /etc read of the probes goes through a root
 * prefix (`--sysroot DIR`, default "/"), so probes run unchanged on captured
 * machines. Paths are absolute-looking ("/sys/block") and resolved inside the
 * root: symlinks in a captured tree cannot escape it. */
#pragma once
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sysroot {
        char *root;  /* as given, without trailing slash ("" for "/") */
        int fd;      /* directory fd of the root */
        bool live;   /* the root is the running system's "/" */
};

int sysroot_open(struct sysroot *sr, const char *root);
void sysroot_close(struct sysroot *sr);

/* Open a file under the root (O_RDONLY|O_CLOEXEC plus `flags`); fd or -errno. */
int sr_open(const struct sysroot *sr, const char *path, int flags);

/* Read at most size-1 bytes of a file into buf, NUL-terminate, strip trailing
 * whitespace. Length or -errno. Embedded NULs end the string. */
ssize_t sr_read_str(const struct sysroot *sr, const char *path, char *buf, size_t size);
/* The same for printf-style paths. */
ssize_t sr_read_strf(const struct sysroot *sr, char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Whole file into a new buffer (NUL-terminated), at most `max` bytes; NULL
 * with errno set on failure. *len gets the length when non-NULL. */
char *sr_read_all(const struct sysroot *sr, const char *path, size_t max, size_t *len);
int sr_read_i64f(const struct sysroot *sr, int64_t *out, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
bool sr_exists(const struct sysroot *sr, const char *path);
DIR *sr_opendir(const struct sysroot *sr, const char *path);
/* Basename of a symlink's target ("driver" -> "virtio_net"); length or -errno. */
ssize_t sr_readlink_base(const struct sysroot *sr, const char *path, char *buf, size_t size);
/* Canonical path of `path` inside the root (all links resolved, "/sys/..."),
 * length or -errno. */
ssize_t sr_resolve(const struct sysroot *sr, const char *path, char *buf, size_t size);

/* Trim trailing whitespace in place; returns s. */
char *str_rstrip(char *s);
/* Duplicate s with leading and trailing whitespace trimmed; NULL for empty. */
char *str_dup_trimmed(const char *s);
