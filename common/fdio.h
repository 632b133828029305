/* Reading a file descriptor to the end, for the small files every program
 * reads whole (keys, tokens, manifests, /sys attributes); writing a buffer
 * whole, and making a rename durable. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Read from fd until n bytes or the end of the file, retrying when
 * interrupted: how many bytes were read (fewer than n only at the end of the
 * file), or -errno. */
ssize_t fd_read_full(int fd, void *buf, size_t n);

/* All of fd to its end, at most max bytes, into *out (malloc'd, a NUL after
 * the *len bytes read): 0, -EFBIG when there is more than max, -ENOMEM, or
 * read's -errno. hint is the size expected (fstat's, say; 0 when unknown):
 * the first allocation, doubled as the file turns out longer. */
int fd_read_all(int fd, size_t hint, size_t max, char **out, size_t *len);

/* Write all n bytes of buf to fd, retrying short and interrupted writes: 0,
 * or -errno (-EIO when write makes no progress). */
int fd_write_full(int fd, const void *buf, size_t n);

/* fsync the directory holding path, so that a rename into it is durable:
 * 0 or -errno. */
int fd_fsync_parent(const char *path);

/* Write n bytes of buf to path with `mode` through path.tmp, fsync, a
 * rename and an fsync of the folder: a reader never sees half a file, and
 * what is written survives a crash. Something at path that is not a regular
 * file or a folder (a device, a FIFO) is written into instead, never
 * replaced. 0 or -errno (path.tmp removed). */
int fd_write_file_atomic(const char *path, const void *buf, size_t n, mode_t mode);
