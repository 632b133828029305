/* The one unit system of every program's sizes (common/units.h): binary
 * units, one decimal unless it is 0, rounding up into the next unit. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "units.h"

Test(units, bytes_in_binary_units) {
        static const struct {
                int64_t bytes;
                const char *text;
        } cases[] = {
                { 0, "0 B" },
                { 1023, "1023 B" },
                { 1024, "1 KiB" },
                { 376832, "368 KiB" },
                { 1048575, "1 MiB" }, /* 1023.999 KiB rounds to the next unit, not "1024 KiB" */
                { INT64_C(2054553600), "1.9 GiB" },
                { INT64_C(8589934592), "8 GiB" },
                { INT64_C(100000000000), "93.1 GiB" },
                { INT64_C(214748364800), "200 GiB" },
                { INT64_C(1099511627776), "1 TiB" },
                { INT64_C(2000000000000), "1.8 TiB" },
                { INT64_MAX, "8 EiB" },
                { -1, "unknown" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                char b[32];
                cr_assert_str_eq(units_format_bytes(cases[i].bytes, b, sizeof b), cases[i].text, "%lld bytes",
                                 (long long) cases[i].bytes);
        }
}
