/* Agents' check-ins, kept in memory and written to the store in one
 * transaction a second (by the monitor thread), so that an instruction poll
 * costs no write and no fsync. A crash loses at most the last second of
 * check-in times, which the next polls restore; nothing a client was told
 * depends on them.
 *
 * The buffer also counts each host's polls since musterd started (what
 * `[agent] inventory_every` counts). A host not seen for CHECKINS_FORGET_S
 * flushes (an hour at one flush a second) is forgotten and counts from 0
 * again, as after a restart. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define CHECKINS_MAX (1u << 20) /* distinct hosts counted at once */
#define CHECKINS_FORGET_S 3600  /* flushes without a poll before a host is forgotten */

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

/* Write everything noted so far to the store (one transaction) and empty
 * the buffer. Returns how many hosts were written, or -errno; on failure
 * the entries are kept for the next flush. */
int checkins_flush(struct checkin_buffer *b, struct store *s);
