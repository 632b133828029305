/* ustar archives of regular files (tar.h). */
#include "tar.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cpio.h"

#define GROW_FIRST 4096

static const char zeros[TAR_BLOCK];

static size_t pad512(size_t n) {
        return (TAR_BLOCK - (n & (TAR_BLOCK - 1))) & (TAR_BLOCK - 1);
}

/* An octal field of `size` bytes: size - 1 digits, zero-filled, and a NUL.
 * The callers checked that v fits. */
static void octal(char *field, size_t size, uint64_t v) {
        char tmp[24];
        snprintf(tmp, sizeof tmp, "%0*llo", (int) (size - 1), (unsigned long long) v);
        memcpy(field, tmp, size - 1);
        field[size - 1] = '\0';
}

/* Appended whole or not at all. */
static int put(struct growbuf *b, const void *p1, size_t n1, const void *p2, size_t n2, size_t max) {
        size_t total = n1 + n2 + pad512(n1 + n2);
        if (b->len > max || total > max - b->len)
                return -E2BIG;
        size_t was = b->len;
        int r;
        if ((r = growbuf_append(b, p1, n1, max, GROW_FIRST)) < 0 ||
            (n2 && (r = growbuf_append(b, p2, n2, max, GROW_FIRST)) < 0) ||
            (r = growbuf_append(b, zeros, pad512(n1 + n2), max, GROW_FIRST)) < 0) {
                b->len = was;
                if (b->data)
                        b->data[was] = '\0';
                return r;
        }
        return 0;
}

int tar_header(char h[TAR_BLOCK], const char *name, uint32_t mode, int64_t mtime, uint64_t len) {
        if (!name || !archive_name_ok(name, TAR_NAME_MAX) || (mode & ~(uint32_t) 07777) != 0 || mtime < 0 || mtime > TAR_SIZE_MAX ||
            len > (uint64_t) TAR_SIZE_MAX)
                return -EINVAL;
        /* The fields by their offsets (POSIX.1 pax, "ustar Interchange
         * Format"); what is not set stays NUL. */
        memset(h, 0, TAR_BLOCK);
        memcpy(h, name, strlen(name));  /* name[100] */
        octal(h + 100, 8, mode);        /* mode[8] */
        octal(h + 108, 8, 0);           /* uid[8] */
        octal(h + 116, 8, 0);           /* gid[8] */
        octal(h + 124, 12, len);        /* size[12] */
        octal(h + 136, 12, (uint64_t) mtime); /* mtime[12] */
        memset(h + 148, ' ', 8);        /* chksum[8]: spaces while summing */
        h[156] = '0';                   /* typeflag: regular file */
        memcpy(h + 257, "ustar", 6);    /* magic[6], with its NUL */
        memcpy(h + 263, "00", 2);       /* version[2] */
        memcpy(h + 265, "root", 4);     /* uname[32] */
        memcpy(h + 297, "root", 4);     /* gname[32] */
        octal(h + 329, 8, 0);           /* devmajor[8] */
        octal(h + 337, 8, 0);           /* devminor[8] */
        unsigned sum = 0;
        for (size_t i = 0; i < TAR_BLOCK; i++)
                sum += (unsigned char) h[i];
        /* Six digits, a NUL and a space, as GNU tar writes it. */
        octal(h + 148, 7, sum);
        h[155] = ' ';
        return 0;
}

int tar_add(struct growbuf *b, const char *name, uint32_t mode, int64_t mtime, const void *data, size_t len,
            size_t max) {
        char h[TAR_BLOCK];
        if (len && !data)
                return -EINVAL;
        int r = tar_header(h, name, mode, mtime, len);
        if (r < 0)
                return r;
        return put(b, h, sizeof h, data, len, max);
}

int tar_end(struct growbuf *b, size_t max) {
        static const char end[2 * TAR_BLOCK];
        return put(b, end, sizeof end, NULL, 0, max);
}
