/* Reading a descriptor whole (common/fdio.h: fd_read_all): every size
 * against the bound and the hint, from files and from a pipe, which has no
 * size to hint. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"

/* A file of n bytes (a pattern), open for reading at its start. */
static int file_of(size_t n) {
        char path[] = "/tmp/muster-fdio-XXXXXX";
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        unlink(path);
        for (size_t i = 0; i < n; i++) {
                char c = (char) ('a' + i % 26);
                cr_assert_eq(write(fd, &c, 1), 1);
        }
        cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
        return fd;
}

static void check_pattern(const char *buf, size_t n) {
        for (size_t i = 0; i < n; i++)
                cr_assert_eq(buf[i], (char) ('a' + i % 26), "byte %zu", i);
        cr_assert_eq(buf[n], '\0');
}

Test(fdio, every_size_up_to_the_bound_whatever_the_hint) {
        const size_t max = 300;
        const size_t sizes[] = { 0, 1, 2, 31, 32, 33, 299, 300 };
        const size_t hints[] = { 0, 1, 16, 299, 300, 301, 100000 };
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
                for (size_t j = 0; j < sizeof hints / sizeof *hints; j++) {
                        int fd = file_of(sizes[i]);
                        char *buf = NULL;
                        size_t len = 99;
                        cr_assert_eq(fd_read_all(fd, hints[j], max, &buf, &len), 0, "size %zu hint %zu", sizes[i],
                                     hints[j]);
                        cr_assert_eq(len, sizes[i]);
                        check_pattern(buf, len);
                        free(buf);
                        close(fd);
                }
}

Test(fdio, one_byte_past_the_bound_is_efbig_and_nothing_is_returned) {
        const size_t hints[] = { 0, 1, 300, 301, 5000 };
        for (size_t j = 0; j < sizeof hints / sizeof *hints; j++) {
                int fd = file_of(301);
                char *buf = (char *) 1;
                size_t len = 7;
                cr_assert_eq(fd_read_all(fd, hints[j], 300, &buf, &len), -EFBIG, "hint %zu", hints[j]);
                cr_assert_eq(buf, (char *) 1, "out untouched");
                cr_assert_eq(len, 7);
                close(fd);
        }
}

Test(fdio, a_pipe_is_read_to_its_end) {
        int p[2];
        cr_assert_eq(pipe(p), 0);
        char data[5000];
        for (size_t i = 0; i < sizeof data; i++)
                data[i] = (char) ('a' + i % 26);
        cr_assert_eq(write(p[1], data, sizeof data), (ssize_t) sizeof data);
        close(p[1]);
        char *buf;
        size_t len;
        cr_assert_eq(fd_read_all(p[0], 0, 1 << 20, &buf, &len), 0);
        cr_assert_eq(len, sizeof data);
        check_pattern(buf, len);
        free(buf);
        close(p[0]);
}

Test(fdio, a_read_error_is_its_errno) {
        char *buf;
        size_t len;
        int fd = open("/", O_RDONLY | O_DIRECTORY);
        cr_assert_geq(fd, 0);
        cr_assert_eq(fd_read_all(fd, 0, 100, &buf, &len), -EISDIR);
        close(fd);
        cr_assert_eq(fd_read_all(-1, 0, 100, &buf, &len), -EBADF);
}
