/* The progress line of `musterctl infraenv download` (ctl_download_line):
 * bar, percent, sizes and rate, or sizes and rate alone when the length is
 * not known; always within 80 columns. */
#include <criterion/criterion.h>
#include <string.h>

#include "ctl.h"

#define MIB (1024LL * 1024)

Test(ctl_download, progress_line) {
        char buf[160];
        cr_assert_str_eq(ctl_download_line(0, 100 * MIB, 0, buf, sizeof buf),
                         "[--------------------]   0%  0 B / 100 MiB  0 B/s");
        cr_assert_str_eq(ctl_download_line(50 * MIB, 100 * MIB, 2, buf, sizeof buf),
                         "[##########----------]  50%  50 MiB / 100 MiB  25 MiB/s");
        cr_assert_str_eq(ctl_download_line(100 * MIB - 1, 100 * MIB, 1, buf, sizeof buf),
                         "[###################-]  99%  100 MiB / 100 MiB  100 MiB/s");
        cr_assert_str_eq(ctl_download_line(100 * MIB, 100 * MIB, 4, buf, sizeof buf),
                         "[####################] 100%  100 MiB / 100 MiB  25 MiB/s");
        /* More than announced is shown as done, not past 100. */
        cr_assert_str_eq(ctl_download_line(200, 100, 1, buf, sizeof buf),
                         "[####################] 100%  200 B / 100 B  200 B/s");
        /* No Content-Length. */
        cr_assert_str_eq(ctl_download_line(3 * MIB / 2, -1, 0.5, buf, sizeof buf), "1.5 MiB  3 MiB/s");
        cr_assert_str_eq(ctl_download_line(0, 0, 0, buf, sizeof buf), "0 B  0 B/s");
}

Test(ctl_download, fits_80_columns) {
        char buf[160];
        const long long sizes[] = { 0, 1023, 1024 * 1023 + 1000, 1023 * MIB + 1000000, 1000LL * 1024 * MIB,
                                    (long long) 9.2e18 };
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
                for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
                        ctl_download_line(sizes[i], sizes[j], 0.001, buf, sizeof buf);
                        cr_assert_leq(strlen(buf), 80, "%s", buf);
                }
        /* A short buffer is cut, never overrun. */
        char small[12];
        memset(small, 'x', sizeof small);
        ctl_download_line(50 * MIB, 100 * MIB, 2, small, sizeof small);
        cr_assert_eq(strlen(small), sizeof small - 1);
}
