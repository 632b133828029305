/* The cpio "newc" writer (common/cpio.h) read back by GNU cpio, the way the
 * kernel reads it: names listed by `cpio -t`, files unpacked by `cpio -i`
 * with their bytes and modes; names and modes the kernel would put
 * elsewhere, or not take, are refused with nothing appended. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpio.h"
#include "testutil.h"

#define MAX (1 << 20)

#define dir tu_dir

TestSuite(cpio, .init = tu_dir_up, .fini = tu_dir_down);

static void write_archive(const struct growbuf *b, const char *name) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(b->data, 1, b->len, f), b->len);
        cr_assert_eq(fclose(f), 0);
}

Test(cpio, gnu_cpio_lists_and_unpacks_it) {
        struct growbuf b = { 0 };
        static const char config[] = "MUSTERCFG1\n{\"token\":\"abc\"}"; /* 28 bytes + 1: odd */
        cr_assert_eq(cpio_newc_add(&b, "muster", S_IFDIR | 0755, 1, 1700000000, NULL, 0, MAX), 0);
        cr_assert_eq(cpio_newc_add(&b, "muster/config.img", S_IFREG | 0600, 2, 1700000000, config, sizeof config - 1,
                                   MAX), 0);
        cr_assert_eq(cpio_newc_add(&b, "muster/four", S_IFREG | 0644, 3, 0, "abcd", 4, MAX), 0);
        cr_assert_eq(cpio_newc_add(&b, "muster/empty", S_IFREG | 0644, 4, 0, NULL, 0, MAX), 0);
        cr_assert_eq(cpio_newc_end(&b, MAX), 0);
        cr_assert_eq(b.len % 4, 0, "every member ends on a multiple of 4: %zu", b.len);
        cr_assert_eq(memcmp(b.data, "070701", 6), 0);
        write_archive(&b, "a.cpio");

        char *out = NULL;
        cr_assert_eq(tu_sh(&out, NULL, "cd %s && cpio -t --quiet < a.cpio", dir), 0);
        cr_assert_str_eq(out, "muster\nmuster/config.img\nmuster/four\nmuster/empty\n");
        free(out);
        cr_assert_eq(tu_sh(NULL, NULL, "mkdir %s/x && cd %s/x && cpio -i --quiet --no-absolute-filenames "
                              "--preserve-modification-time < ../a.cpio", dir, dir), 0);
        char p[4300];
        size_t n = 0;
        snprintf(p, sizeof p, "%s/x/muster/config.img", dir);
        char *got = tu_read_file(p, &n);
        cr_assert_eq(n, sizeof config - 1);
        cr_assert_eq(memcmp(got, config, n), 0);
        free(got);
        struct stat st;
        cr_assert_eq(stat(p, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0600);
        cr_assert_eq(st.st_mtime, 1700000000);
        snprintf(p, sizeof p, "%s/x/muster", dir);
        cr_assert_eq(stat(p, &st), 0);
        cr_assert(S_ISDIR(st.st_mode));
        cr_assert_eq(st.st_mode & 07777, 0755);
        snprintf(p, sizeof p, "%s/x/muster/four", dir);
        got = tu_read_file(p, &n);
        cr_assert_eq(n, 4);
        cr_assert_eq(memcmp(got, "abcd", 4), 0);
        free(got);
        snprintf(p, sizeof p, "%s/x/muster/empty", dir);
        cr_assert_eq(stat(p, &st), 0);
        cr_assert_eq(st.st_size, 0);
        free(b.data);
}

/* What GNU cpio writes for the same member is byte for byte what we write
 * (with the header fields it sets: inode, owner, links, time). */
Test(cpio, the_header_is_the_format_s) {
        struct growbuf b = { 0 };
        cr_assert_eq(cpio_newc_add(&b, "f", S_IFREG | 0644, 7, 1600000000, "hello", 5, MAX), 0);
        cr_assert_eq(cpio_newc_end(&b, MAX), 0);
        /* 110 + "f\0" = 112 (aligned), 5 + 3 padding, trailer 110 + 11 + 3. */
        cr_assert_eq(b.len, 112 + 8 + 124);
        cr_assert_eq(memcmp(b.data,
                            "070701" "00000007" "000081A4" "00000000" "00000000" "00000001" "5F5E1000" "00000005"
                            "00000000" "00000000" "00000000" "00000000" "00000002" "00000000" "f\0",
                            112), 0);
        cr_assert_eq(memcmp(b.data + 112, "hello\0\0\0", 8), 0);
        cr_assert_eq(memcmp(b.data + 120 + 94, "0000000B" "00000000" "TRAILER!!!", 26), 0);
        free(b.data);
}

Test(cpio, names_modes_and_sizes_refused_with_nothing_appended) {
        struct growbuf b = { 0 };
        cr_assert_eq(cpio_newc_add(&b, "ok", S_IFREG | 0600, 1, 0, "x", 1, MAX), 0);
        size_t len = b.len;
        static const char *const bad[] = { "", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/.", "a/",
                                           "TRAILER!!!", "tab\tname", NULL };
        for (const char *const *n = bad; *n; n++)
                cr_assert_eq(cpio_newc_add(&b, *n, S_IFREG | 0600, 2, 0, "x", 1, MAX), -EINVAL, "name \"%s\"", *n);
        char longname[300];
        memset(longname, 'a', sizeof longname - 1);
        longname[sizeof longname - 1] = '\0';
        cr_assert_eq(cpio_newc_add(&b, longname, S_IFREG | 0600, 2, 0, "x", 1, MAX), -EINVAL);
        cr_assert_eq(cpio_newc_add(&b, "link", S_IFLNK | 0777, 2, 0, "x", 1, MAX), -EINVAL, "symlinks are not ours");
        cr_assert_eq(cpio_newc_add(&b, "dev", S_IFCHR | 0600, 2, 0, NULL, 0, MAX), -EINVAL);
        cr_assert_eq(cpio_newc_add(&b, "d", S_IFDIR | 0755, 2, 0, "x", 1, MAX), -EINVAL, "a directory has no data");
        cr_assert_eq(cpio_newc_add(&b, "f", S_IFREG | 0600, 0, 0, "x", 1, MAX), -EINVAL, "inode 0");
        cr_assert_eq(cpio_newc_add(&b, "f", S_IFREG | 0600 | 0x10000000u, 2, 0, "x", 1, MAX), -EINVAL);
        cr_assert_eq(cpio_newc_add(&b, "f", S_IFREG | 0600, 2, 0, NULL, 1, MAX), -EINVAL);
        cr_assert_eq(b.len, len, "nothing appended by a refusal");
        /* Past max: -E2BIG, the archive as it was. */
        char big[600] = { 0 };
        cr_assert_eq(cpio_newc_add(&b, "big", S_IFREG | 0600, 2, 0, big, sizeof big, len + 700), -E2BIG);
        cr_assert_eq(b.len, len);
        cr_assert_eq(cpio_newc_add(&b, "big", S_IFREG | 0600, 2, 0, big, sizeof big, len + 724), 0);
        free(b.data);
}
