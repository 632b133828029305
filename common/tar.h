/* ustar archives (POSIX.1-1988, magic "ustar\0" version "00") of regular
 * files, built in memory: the agent's logs-gather step packs its logs in
 * one. Each member is a 512-byte header (octal ASCII fields and a checksum
 * of the header's bytes) followed by its data padded to a multiple of 512;
 * two zero blocks end the archive. Names fit the 100-byte name field alone
 * (no prefix field). Pure. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "growbuf.h"

#define TAR_BLOCK 512
#define TAR_NAME_MAX 99                       /* the name field keeps a NUL */
#define TAR_SIZE_MAX ((int64_t) 077777777777) /* 11 octal digits: 8 GiB - 1 */

/* A regular file in archive b: `name` is relative (no leading '/', no
 * empty, "." or ".." component, no control character, at most TAR_NAME_MAX
 * bytes); `mode` holds permission bits only (07777 at most); owned by
 * root:root (0/0), modified at `mtime` (0 to TAR_SIZE_MAX seconds). 0;
 * -EINVAL for a name, mode, time or size the format does not take; -E2BIG
 * when b would pass max bytes; -ENOMEM. On an error nothing is appended. */
int tar_add(struct growbuf *b, const char *name, uint32_t mode, int64_t mtime, const void *data, size_t len,
            size_t max);
/* The header tar_add writes for a regular file of len bytes, into h, for
 * a writer that streams the data itself (followed by zeros up to a multiple
 * of TAR_BLOCK). 0 or -EINVAL, as tar_add. */
int tar_header(char h[TAR_BLOCK], const char *name, uint32_t mode, int64_t mtime, uint64_t len);
/* The two zero blocks that end archive b: as tar_add. */
int tar_end(struct growbuf *b, size_t max);
