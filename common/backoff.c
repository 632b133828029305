/* Exponential backoff with jitter (backoff.h). "Equal jitter": half the
 * ceiling is always waited, so a fleet of agents restarting together
 * spreads out without any of them hammering the coordinator. */
#include "backoff.h"

uint32_t backoff_next(struct backoff *b, uint32_t rnd) {
        uint64_t ceiling = b->base_ms ? b->base_ms : 1;
        for (uint32_t i = 0; i < b->attempt && ceiling < b->max_ms; i++)
                ceiling *= 2;
        if (ceiling > b->max_ms)
                ceiling = b->max_ms;
        if (b->attempt < UINT32_MAX)
                b->attempt++;
        uint64_t half = ceiling / 2;
        return (uint32_t) (half + (ceiling - half ? rnd % (ceiling - half + 1) : 0));
}

void backoff_reset(struct backoff *b) {
        b->attempt = 0;
}
