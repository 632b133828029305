/* Rate limits keyed by a short string (an infra-env id): a token bucket per
 * key, `burst` deep, refilled with one token every `interval_ms`. Kept in
 * memory by the process (a restart starts every bucket full). The clock is
 * the caller's, so the arithmetic is tested without waiting. */
#pragma once
#include <stdint.h>

#define RATELIMIT_KEY_MAX 64    /* longest key kept; longer ones are cut */
#define RATELIMIT_SWEEP_AT 4096 /* keys held before full buckets are forgotten */

struct ratelimit;

int ratelimit_new(struct ratelimit **out);
void ratelimit_free(struct ratelimit *rl);

/* Take a token from key's bucket at now_ms (a monotonic clock, ms): 0 when
 * one was there, else how many ms until one will be (> 0; nothing taken).
 * Thread-safe. -ENOMEM when a new key cannot be kept (the caller decides). */
int64_t ratelimit_take(struct ratelimit *rl, const char *key, int64_t burst, int64_t interval_ms, int64_t now_ms);

/* Forget key's bucket (its infra-env is gone). */
void ratelimit_forget(struct ratelimit *rl, const char *key);
