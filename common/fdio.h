/* Reading a file descriptor to the end, for the small files every program
 * reads whole (keys, tokens, manifests, /sys attributes). */
#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Read from fd until n bytes or the end of the file, retrying when
 * interrupted: how many bytes were read (fewer than n only at the end of the
 * file), or -errno. */
ssize_t fd_read_full(int fd, void *buf, size_t n);
