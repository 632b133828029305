/* cpio archives in the "newc" format (magic 070701) the Linux kernel
 * unpacks into its initramfs, several of them one after another (the
 * kernel's early-userspace buffer format): musterd appends one to the
 * discovery initramfs to carry an infra-env's config for PXE boots. Each
 * member is a header of 110 ASCII bytes (13 fields of 8 hex digits), its
 * name with a NUL padded to a multiple of 4, its data padded the same; a
 * member named TRAILER!!! ends the archive. Pure: built in memory. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "growbuf.h"

#define CPIO_NEWC_MAGIC "070701"
#define CPIO_NEWC_HEADER 110
#define CPIO_NAME_MAX 255

/* A member name an unpacker (the kernel's, GNU cpio, tar) writes where it
 * says: relative, 1..max bytes, no leading '/', no empty, "." or ".."
 * component, no control character. Shared with tar.h. */
bool archive_name_ok(const char *name, size_t max);

/* A member of archive b: `name` is relative (no leading '/', no "." or ".."
 * component, no empty component, at most CPIO_NAME_MAX bytes); `mode` holds
 * the type (S_IFDIR with len 0, or S_IFREG) and the permission bits; owned
 * by root, inode number `ino` (distinct per member, > 0), modified at
 * `mtime`. 0; -EINVAL for a name, mode or size the format or the kernel
 * would not take; -E2BIG past max bytes in all; -ENOMEM. On an error
 * nothing is appended. */
int cpio_newc_add(struct growbuf *b, const char *name, uint32_t mode, uint32_t ino, uint32_t mtime,
                  const void *data, size_t len, size_t max);
/* The trailer that ends archive b: as cpio_newc_add. */
int cpio_newc_end(struct growbuf *b, size_t max);
