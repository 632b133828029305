/* Exponential backoff with full jitter, shared by the agent's coordinator
 * client and musterctl's retries. Pure. */
#pragma once
#include <stdint.h>

struct backoff {
        uint32_t base_ms;  /* first delay's ceiling */
        uint32_t max_ms;   /* cap of every delay's ceiling */
        uint32_t attempt;  /* failures so far */
};

/* The delay before the next try after one more failure: a uniform value in
 * [ceiling/2, ceiling] where ceiling = min(max, base * 2^attempt); `rnd` is
 * any 32-bit random value (the caller's source, so tests are exact). */
uint32_t backoff_next(struct backoff *b, uint32_t rnd);
/* After a success. */
void backoff_reset(struct backoff *b);
