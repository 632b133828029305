/* The ustar writer (common/tar.h) read back by GNU tar: names, sizes, modes,
 * owners and times listed by `tar -tv`, bytes given back by `tar -x` (which
 * checks each header's checksum), a header byte for byte as GNU tar writes
 * it; names, modes and sizes it must not take are refused with nothing
 * appended. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tar.h"
#include "testutil.h"

#define MAX (1 << 20)
#define MTIME 1700000000 /* 2023-11-14 22:13:20 UTC */

#define dir tu_dir

TestSuite(tar, .init = tu_dir_up, .fini = tu_dir_down);

static void write_archive(const void *data, size_t len, const char *name) {
        cr_assert_eq(tu_write_bin(dir, name, data, len), 0);
}

static void check_file(const char *rel, const void *want, size_t want_len, unsigned mode) {
        char p[4300];
        size_t n = 0;
        snprintf(p, sizeof p, "%s/x/%s", dir, rel);
        char *got = tu_read_file(p, &n);
        cr_assert_not_null(got, "%s was not extracted", rel);
        cr_assert_eq(n, want_len, "%s: %zu bytes, not %zu", rel, n, want_len);
        cr_assert(want_len == 0 || memcmp(got, want, n) == 0, "%s: other bytes", rel);
        free(got);
        struct stat st;
        cr_assert_eq(stat(p, &st), 0);
        cr_assert(S_ISREG(st.st_mode));
        cr_assert_eq(st.st_mode & 07777, mode, "%s: mode %o", rel, st.st_mode & 07777);
        cr_assert_eq(st.st_mtime, MTIME);
}

Test(tar, gnu_tar_lists_and_extracts_it) {
        struct growbuf b = { 0 };
        char five12[512], five13[513], bin[1000];
        for (size_t i = 0; i < sizeof five12; i++)
                five12[i] = (char) ('a' + i % 26);
        for (size_t i = 0; i < sizeof five13; i++)
                five13[i] = (char) ('A' + i % 26);
        for (size_t i = 0; i < sizeof bin; i++)
                bin[i] = (char) (i * 7 % 256); /* NULs, high bytes, newlines */
        static const char config[] = "{\"token\":\"abc\"}\n";
        char longname[TAR_NAME_MAX + 1];
        memset(longname, 'n', TAR_NAME_MAX);
        longname[TAR_NAME_MAX] = '\0';
        cr_assert_eq(tar_add(&b, "empty", 0644, MTIME, NULL, 0, MAX), 0);
        cr_assert_eq(tar_add(&b, "d/five12", 0644, MTIME, five12, sizeof five12, MAX), 0);
        cr_assert_eq(tar_add(&b, "d/e/five13", 0600, MTIME, five13, sizeof five13, MAX), 0);
        cr_assert_eq(tar_add(&b, "bin.dat", 0755, MTIME, bin, sizeof bin, MAX), 0);
        cr_assert_eq(tar_add(&b, "config.json", 0400, MTIME, config, sizeof config - 1, MAX), 0);
        cr_assert_eq(tar_add(&b, longname, 0644, MTIME, "x", 1, MAX), 0);
        cr_assert_eq(tar_end(&b, MAX), 0);
        /* 6 headers, data blocks 0 + 1 + 2 + 2 + 1 + 1, two zero blocks. */
        cr_assert_eq(b.len, (size_t) (6 + 7 + 2) * 512, "%zu", b.len);
        cr_assert_eq(memcmp(b.data + 257, "ustar\0" "00", 8), 0);
        for (size_t i = b.len - 1024; i < b.len; i++)
                cr_assert_eq(b.data[i], 0);
        write_archive(b.data, b.len, "a.tar");

        char *out = NULL;
        cr_assert_eq(tu_sh(&out, NULL, "cd %s && TZ=UTC0 tar -tvf a.tar --full-time | awk '{print $1, $2, $3, $4, $5, $6}'",
                        dir), 0);
        char want[1024];
        snprintf(want, sizeof want,
                 "-rw-r--r-- root/root 0 2023-11-14 22:13:20 empty\n"
                 "-rw-r--r-- root/root 512 2023-11-14 22:13:20 d/five12\n"
                 "-rw------- root/root 513 2023-11-14 22:13:20 d/e/five13\n"
                 "-rwxr-xr-x root/root 1000 2023-11-14 22:13:20 bin.dat\n"
                 "-r-------- root/root 16 2023-11-14 22:13:20 config.json\n"
                 "-rw-r--r-- root/root 1 2023-11-14 22:13:20 %s\n", longname);
        cr_assert_str_eq(out, want);
        free(out);
        cr_assert_eq(tu_sh(&out, NULL, "cd %s && tar -tvf a.tar --numeric-owner | awk '{print $2}' | sort -u", dir), 0);
        cr_assert_str_eq(out, "0/0\n");
        free(out);

        char *err = NULL;
        cr_assert_eq(tu_sh(NULL, &err, "mkdir %s/x && tar -xf %s/a.tar -C %s/x", dir, dir, dir), 0);
        cr_assert_str_eq(err, "", "GNU tar had something to say: %s", err); /* e.g. a bad checksum */
        free(err);
        check_file("empty", "", 0, 0644);
        check_file("d/five12", five12, sizeof five12, 0644);
        check_file("d/e/five13", five13, sizeof five13, 0600);
        check_file("bin.dat", bin, sizeof bin, 0755);
        check_file("config.json", config, sizeof config - 1, 0400);
        check_file(longname, "x", 1, 0644);
        free(b.data);
}

/* GNU tar checks the checksum: one byte changed in a header, and it refuses
 * the member (so extraction succeeding above says the sum was right). */
Test(tar, a_wrong_checksum_is_noticed) {
        struct growbuf b = { 0 };
        cr_assert_eq(tar_add(&b, "first", 0644, MTIME, "hello\n", 6, MAX), 0);
        cr_assert_eq(tar_end(&b, MAX), 0);
        write_archive(b.data, b.len, "good.tar");
        b.data[0] = 'F'; /* "First": the sum no longer matches */
        write_archive(b.data, b.len, "bad.tar");
        char *out = NULL, *err = NULL;
        cr_assert_eq(tu_sh(&out, NULL, "tar -tf %s/good.tar", dir), 0);
        cr_assert_str_eq(out, "first\n");
        free(out);
        cr_assert_neq(tu_sh(&out, &err, "tar -tf %s/bad.tar", dir), 0);
        cr_assert_str_eq(out, "");
        cr_assert_not_null(strstr(err, "This does not look like a tar archive"), "%s", err);
        free(out);
        free(err);
        free(b.data);
}

/* The header is the one GNU tar writes in ustar format for the same file
 * (owner, group, mode and time forced to ours). */
Test(tar, the_header_is_gnu_tar_s) {
        struct growbuf b = { 0 };
        cr_assert_eq(tar_add(&b, "f.txt", 0644, 1600000000, "hello", 5, MAX), 0);
        cr_assert_eq(b.len, 1024);
        cr_assert_eq(tu_write_file(dir, "src/f.txt", "hello"), 0);
        cr_assert_eq(tu_sh(NULL, NULL,
                        "cd %s/src && chmod 0644 f.txt && tar --format=ustar --owner=root:0 --group=root:0 "
                        "--mtime=@1600000000 -cf ../gnu.tar f.txt", dir), 0);
        char p[4300];
        size_t n = 0;
        snprintf(p, sizeof p, "%s/gnu.tar", dir);
        char *gnu = tu_read_file(p, &n);
        cr_assert_not_null(gnu);
        cr_assert_geq(n, 1024);
        for (size_t i = 0; i < 1024; i++)
                cr_assert_eq(b.data[i], gnu[i], "byte %zu: %02x, GNU tar %02x", i, (unsigned char) b.data[i],
                             (unsigned char) gnu[i]);
        /* Checksum "%06o\0 " of the bytes with the field as spaces. */
        cr_assert_eq(memcmp(b.data + 148 + 6, "\0 ", 2), 0);
        /* tar_header, for streaming writers, is the same header. */
        char h[TAR_BLOCK];
        cr_assert_eq(tar_header(h, "f.txt", 0644, 1600000000, 5), 0);
        cr_assert_eq(memcmp(h, b.data, TAR_BLOCK), 0);
        cr_assert_eq(tar_header(h, "../f", 0644, 0, 5), -EINVAL);
        free(gnu);
        free(b.data);
}

Test(tar, names_modes_and_sizes_refused_with_nothing_appended) {
        struct growbuf b = { 0 };
        cr_assert_eq(tar_add(&b, "ok", 0600, MTIME, "x", 1, MAX), 0);
        size_t len = b.len;
        char *before = malloc(len);
        cr_assert_not_null(before);
        memcpy(before, b.data, len);

        char toolong[TAR_NAME_MAX + 2];
        memset(toolong, 'n', TAR_NAME_MAX + 1);
        toolong[TAR_NAME_MAX + 1] = '\0';
        const char *const bad[] = { "", "/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/.", "a/", ".",
                                    "..", "tab\tname", "nl\nname", "del\x7f", toolong, NULL };
        for (const char *const *nm = bad; *nm; nm++)
                cr_assert_eq(tar_add(&b, *nm, 0600, MTIME, "x", 1, MAX), -EINVAL, "name \"%s\"", *nm);
        cr_assert_eq(tar_add(&b, NULL, 0600, MTIME, "x", 1, MAX), -EINVAL);
        cr_assert_eq(tar_add(&b, "f", S_IFREG | 0644, MTIME, "x", 1, MAX), -EINVAL, "a type in mode");
        cr_assert_eq(tar_add(&b, "f", 010000, MTIME, "x", 1, MAX), -EINVAL);
        cr_assert_eq(tar_add(&b, "f", 0644, -1, "x", 1, MAX), -EINVAL);
        cr_assert_eq(tar_add(&b, "f", 0644, TAR_SIZE_MAX + 1, "x", 1, MAX), -EINVAL);
        cr_assert_eq(tar_add(&b, "f", 0644, MTIME, NULL, 1, MAX), -EINVAL);
        cr_assert_eq(tar_add(&b, "f", 0644, MTIME, "x", (size_t) TAR_SIZE_MAX + 1, SIZE_MAX), -EINVAL);

        /* 513 bytes take a header and two blocks: 1536 in all. */
        char big[513];
        memset(big, 'b', sizeof big);
        cr_assert_eq(tar_add(&b, "big", 0644, MTIME, big, sizeof big, len + 1535), -E2BIG);
        cr_assert_eq(tar_add(&b, "big", 0644, MTIME, big, sizeof big, len / 2), -E2BIG, "already past max");
        cr_assert_eq(tar_end(&b, len + 1023), -E2BIG);
        cr_assert_eq(b.len, len);
        cr_assert_eq(memcmp(b.data, before, len), 0);
        cr_assert_eq(b.data[len], '\0');

        cr_assert_eq(tar_add(&b, "big", 0644, MTIME, big, sizeof big, len + 1536), 0, "exactly max");
        cr_assert_eq(b.len, len + 1536);
        cr_assert_eq(tar_end(&b, len + 1536 + 1024), 0);
        free(before);
        free(b.data);
}
