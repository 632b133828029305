/* cpio "newc" archives (cpio.h). */
#include "cpio.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define GROW_FIRST 1024

static size_t pad4(size_t n) {
        return (4 - (n & 3)) & 3;
}

bool archive_name_ok(const char *name, size_t max) {
        size_t len = strlen(name);
        if (len == 0 || len > max)
                return false;
        for (const char *p = name; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return false;
        for (const char *c = name;;) {
                size_t n = strcspn(c, "/");
                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (!c[n])
                        return true;
                c += n + 1;
        }
}

/* A name the kernel's unpacker writes where it says, and not the trailer's. */
static bool name_ok(const char *name) {
        return archive_name_ok(name, CPIO_NAME_MAX) && strcmp(name, "TRAILER!!!") != 0;
}

/* Header, name, padding, data, padding: appended whole or not at all. */
static int put(struct growbuf *b, const char *name, uint32_t mode, uint32_t ino, uint32_t nlink, uint32_t mtime,
               const void *data, size_t len, size_t max) {
        static const char zeros[4] = { 0 };
        size_t namesize = strlen(name) + 1;
        size_t total = CPIO_NEWC_HEADER + namesize + pad4(CPIO_NEWC_HEADER + namesize) + len + pad4(len);
        if (b->len > max || total > max - b->len)
                return -E2BIG;
        char h[CPIO_NEWC_HEADER + 1];
        /* magic ino mode uid gid nlink mtime filesize devmajor devminor
         * rdevmajor rdevminor namesize check */
        snprintf(h, sizeof h, CPIO_NEWC_MAGIC "%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino, mode, 0u,
                 0u, nlink, mtime, (uint32_t) len, 0u, 0u, 0u, 0u, (uint32_t) namesize, 0u);
        size_t was = b->len;
        int r;
        if ((r = growbuf_append(b, h, CPIO_NEWC_HEADER, max, GROW_FIRST)) < 0 ||
            (r = growbuf_append(b, name, namesize, max, GROW_FIRST)) < 0 ||
            (r = growbuf_append(b, zeros, pad4(CPIO_NEWC_HEADER + namesize), max, GROW_FIRST)) < 0 ||
            (len && (r = growbuf_append(b, data, len, max, GROW_FIRST)) < 0) ||
            (r = growbuf_append(b, zeros, pad4(len), max, GROW_FIRST)) < 0) {
                b->len = was;
                if (b->data)
                        b->data[was] = '\0';
                return r;
        }
        return 0;
}

int cpio_newc_add(struct growbuf *b, const char *name, uint32_t mode, uint32_t ino, uint32_t mtime,
                  const void *data, size_t len, size_t max) {
        if (!name || !name_ok(name) || ino == 0 || (mode & ~(uint32_t) (S_IFMT | 07777)) != 0 || len > UINT32_MAX ||
            (len && !data))
                return -EINVAL;
        if (S_ISDIR(mode)) {
                if (len)
                        return -EINVAL;
                return put(b, name, mode, ino, 2, mtime, NULL, 0, max);
        }
        if (!S_ISREG(mode))
                return -EINVAL;
        return put(b, name, mode, ino, 1, mtime, data, len, max);
}

int cpio_newc_end(struct growbuf *b, size_t max) {
        return put(b, "TRAILER!!!", 0, 0, 1, 0, NULL, 0, max);
}
