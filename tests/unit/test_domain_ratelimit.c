/* The per-infra-env token bucket (coordinator/domain/ratelimit.h), on a clock the
 * test moves by hand. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "domain/ratelimit.h"

static struct ratelimit *rl;

static void up(void) {
        cr_assert_eq(ratelimit_new(&rl), 0);
}

static void down(void) {
        ratelimit_free(rl);
}

TestSuite(ratelimit, .init = up, .fini = down);

Test(ratelimit, burst_then_one_per_interval) {
        int64_t t = 1000000;
        for (int i = 0; i < 3; i++)
                cr_assert_eq(ratelimit_take(rl, "a", 3, 100, t), 0, "take %d of the burst", i);
        cr_assert_eq(ratelimit_take(rl, "a", 3, 100, t), 100, "empty: one token in 100 ms");
        cr_assert_eq(ratelimit_take(rl, "a", 3, 100, t + 40), 60, "refused takes cost nothing");
        cr_assert_eq(ratelimit_take(rl, "a", 3, 100, t + 100), 0);
        cr_assert_eq(ratelimit_take(rl, "a", 3, 100, t + 100), 100);
        /* A long pause fills the bucket again, never over its depth. */
        t += 100000;
        for (int i = 0; i < 3; i++)
                cr_assert_eq(ratelimit_take(rl, "a", 3, 100, t), 0);
        cr_assert_gt(ratelimit_take(rl, "a", 3, 100, t), 0);
}

Test(ratelimit, keys_are_separate_and_forgotten) {
        cr_assert_eq(ratelimit_take(rl, "a", 1, 3600000, 0), 0);
        cr_assert_eq(ratelimit_take(rl, "a", 1, 3600000, 0), 3600000);
        cr_assert_eq(ratelimit_take(rl, "b", 1, 3600000, 0), 0, "another key has its own bucket");
        ratelimit_forget(rl, "a");
        cr_assert_eq(ratelimit_take(rl, "a", 1, 3600000, 0), 0, "a forgotten key starts full");
}

Test(ratelimit, many_keys_are_swept_when_full_again) {
        char key[32];
        for (int i = 0; i < RATELIMIT_SWEEP_AT + 10; i++) {
                snprintf(key, sizeof key, "k%d", i);
                cr_assert_eq(ratelimit_take(rl, key, 2, 10, i), 0);
        }
        /* Each of those buckets was full again 10 ms later; the busy one is kept. */
        cr_assert_eq(ratelimit_take(rl, "busy", 1, 1000000, 50000), 0);
        for (int i = 0; i < RATELIMIT_SWEEP_AT + 10; i++) {
                snprintf(key, sizeof key, "n%d", i);
                cr_assert_eq(ratelimit_take(rl, key, 2, 10, 60000), 0);
        }
        cr_assert_gt(ratelimit_take(rl, "busy", 1, 1000000, 60000), 0, "a bucket still filling is never swept");
}
