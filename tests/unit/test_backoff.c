/* Backoff: growth, cap, jitter range, reset. */
#include <criterion/criterion.h>

#include "backoff.h"

Test(backoff, grows_doubles_and_caps) {
        struct backoff b = { .base_ms = 500, .max_ms = 30000 };
        uint32_t lo[] = { 250, 500, 1000, 2000, 4000, 8000, 15000, 15000, 15000 };
        uint32_t hi[] = { 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000 };
        for (int i = 0; i < 9; i++) {
                struct backoff floor_probe = b, top_probe = b;
                cr_assert_eq(backoff_next(&floor_probe, 0), lo[i], "attempt %d: rnd 0 gives the floor", i);
                /* rnd = span-1 gives the ceiling exactly. */
                cr_assert_eq(backoff_next(&top_probe, hi[i] - lo[i]), hi[i], "attempt %d ceiling", i);
                backoff_next(&b, 12345);
        }
}

Test(backoff, jitter_stays_in_range) {
        for (uint32_t r = 0; r < 100000; r += 7) {
                struct backoff b = { .base_ms = 1000, .max_ms = 60000, .attempt = 3 };
                uint32_t d = backoff_next(&b, r * 2654435761u);
                cr_assert(d >= 4000 && d <= 8000, "%u", d);
        }
}

Test(backoff, reset_and_huge_attempts) {
        struct backoff b = { .base_ms = 100, .max_ms = 1000, .attempt = 4000000000u };
        cr_assert_leq(backoff_next(&b, 99), 1000);
        backoff_reset(&b);
        cr_assert_leq(backoff_next(&b, 99), 100);
        struct backoff z = { 0 };
        cr_assert_leq(backoff_next(&z, 5), 1, "zero config does not divide by zero");
}
