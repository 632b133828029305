/* Growable buffers (common/growbuf.h): appends and printf against the limit,
 * the first allocation and growth, and a refused append leaving no trace. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "growbuf.h"

Test(growbuf, append_grows_from_first_and_keeps_nul) {
        struct growbuf b = { 0 };
        cr_assert_eq(growbuf_append(&b, "abc", 3, 100, 4), 0);
        cr_assert_eq(b.cap, 4);
        cr_assert_str_eq(b.data, "abc");
        cr_assert_eq(growbuf_append(&b, "defgh", 5, 100, 4), 0);
        cr_assert_eq(b.cap, 16); /* 4 doubled until 9 fit */
        cr_assert_eq(b.len, 8);
        cr_assert_str_eq(b.data, "abcdefgh");
        free(b.data);
}

Test(growbuf, append_limit_is_exact_and_refusal_appends_nothing) {
        struct growbuf b = { 0 };
        cr_assert_eq(growbuf_append(&b, "0123456789", 10, 10, 4), 0);
        cr_assert_eq(b.cap, 11, "doubling stops at max + 1");
        cr_assert_eq(growbuf_append(&b, "x", 1, 10, 4), -E2BIG);
        cr_assert_eq(b.len, 10);
        cr_assert_str_eq(b.data, "0123456789");
        free(b.data);
}

Test(growbuf, printf_formats_and_appends) {
        struct growbuf b = { 0 };
        cr_assert_eq(growbuf_printf(&b, 10000, "%s=%d", "a", 1), 0);
        cr_assert_eq(b.cap, GROWBUF_PRINTF_FIRST);
        cr_assert_eq(growbuf_printf(&b, 10000, ";%s=%llu", "b", 18446744073709551615ULL), 0);
        cr_assert_str_eq(b.data, "a=1;b=18446744073709551615");
        cr_assert_eq(b.len, strlen(b.data));
        cr_assert_eq(growbuf_printf(&b, 1000, "%s", ""), 0, "an empty text is appended too");
        cr_assert_eq(b.len, strlen("a=1;b=18446744073709551615"));
        free(b.data);
}

Test(growbuf, printf_grows_past_the_first_allocation) {
        struct growbuf b = { 0 };
        char big[3000];
        memset(big, 'q', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        cr_assert_eq(growbuf_printf(&b, SIZE_MAX - 1, "<%s>", big), 0);
        cr_assert_eq(b.len, sizeof big + 1);
        cr_assert_eq(b.cap, 4 * GROWBUF_PRINTF_FIRST);
        cr_assert_eq(b.data[0], '<');
        cr_assert_eq(b.data[b.len - 1], '>');
        cr_assert_eq(b.data[b.len], '\0');
        /* and again with text already there, past the room left */
        cr_assert_eq(growbuf_printf(&b, SIZE_MAX - 1, "%s", big), 0);
        cr_assert_eq(b.len, 2 * sizeof big);
        cr_assert_eq(strlen(b.data), b.len);
        cr_assert_eq(b.data[sizeof big + 1], 'q');
        free(b.data);
}

Test(growbuf, printf_at_the_limit) {
        struct growbuf b = { 0 };
        cr_assert_eq(growbuf_printf(&b, 8, "%s", "12345"), 0);
        cr_assert_eq(b.cap, 9, "the first allocation is cut to max + 1");
        cr_assert_eq(growbuf_printf(&b, 8, "%d", 678), 0, "exactly max fits");
        cr_assert_str_eq(b.data, "12345678");
        cr_assert_eq(growbuf_printf(&b, 8, "%c", 'x'), -E2BIG);
        cr_assert_eq(b.len, 8);
        cr_assert_str_eq(b.data, "12345678");
        free(b.data);
}

Test(growbuf, printf_refused_in_room_leaves_no_trace) {
        /* Room enough in the allocation, but past the limit: vsnprintf has
         * already written into the spare bytes; the text must still end where
         * it ended. */
        struct growbuf b = { 0 };
        cr_assert_eq(growbuf_append(&b, "ab", 2, 100, 64), 0);
        cr_assert_eq(growbuf_printf(&b, 4, "%s", "cde"), -E2BIG);
        cr_assert_eq(b.len, 2);
        cr_assert_str_eq(b.data, "ab");
        cr_assert_eq(growbuf_printf(&b, 4, "%s", "cd"), 0);
        cr_assert_str_eq(b.data, "abcd");
        free(b.data);
}

Test(growbuf, printf_refused_over_the_room_leaves_no_trace) {
        struct growbuf b = { 0 };
        cr_assert_eq(growbuf_append(&b, "ab", 2, 100, 4), 0);
        char big[50];
        memset(big, 'z', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        cr_assert_eq(growbuf_printf(&b, 20, "%s", big), -E2BIG);
        cr_assert_eq(b.len, 2);
        cr_assert_eq(b.cap, 4, "nothing allocated for a refused text");
        cr_assert_str_eq(b.data, "ab");
        free(b.data);
}
