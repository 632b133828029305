/* Agents' check-ins, kept in memory and written to the store in one
 * transaction a second (by the monitor thread), so that an instruction poll
 * costs no write and no fsync. A crash loses at most the last second of
 * check-in times, which the next polls restore; nothing a client was told
 * depends on them.
 *
 * A host that polls more often than every CHECKINS_WRITE_EVERY flushes has
 * its time written once in that many (its newest time then): a host polling
 * back to back costs one row write in 10 s, not one a second. The monitor's
 * pass writes every time noted before it compares check-ins with the
 * disconnect timeout, so the stored time that the monitor reads is never
 * behind; what a client reads is at most CHECKINS_WRITE_EVERY s (or one
 * monitor interval) behind.
 *
 * The buffer also counts each host's polls since musterd started (what
 * `[agent] inventory_every` counts). A host not seen for CHECKINS_FORGET_S
 * flushes (an hour at one flush a second) is forgotten and counts from 0
 * again, as after a restart. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

#define CHECKINS_MAX (1u << 20) /* distinct hosts counted at once */
#define CHECKINS_FORGET_S 3600  /* flushes without a poll before a host is forgotten */
#define CHECKINS_WRITE_EVERY 10 /* flushes between two writes of one host's time (unless `all`) */

struct checkin_buffer;

int checkins_new(struct checkin_buffer **out);
void checkins_free(struct checkin_buffer *b);

/* Note that host (infra_env_id, host_id) checked in at `at` (RFC 3339,
 * canonical). A later note of the same host replaces the time (an older one
 * is ignored). *polls (may be NULL) gets this host's poll count, this one
 * included: 1, 2, 3, ... -E2BIG when CHECKINS_MAX hosts are counted (write
 * through instead), -EINVAL for a bad id, -ENOMEM. */
int checkins_note(struct checkin_buffer *b, const char *infra_env_id, const char *host_id, const char *at,
                  uint64_t *polls);

/* Write what was noted so far to the store (one transaction): with `all`
 * every time noted, else those of hosts whose time was not written in the
 * last CHECKINS_WRITE_EVERY flushes (the others wait, newest time kept).
 * Returns how many hosts were written, or -errno; on failure the entries
 * are kept for the next flush. */
int checkins_flush(struct checkin_buffer *b, struct store *s, bool all);
