/* Agents' check-ins, kept in memory and written to the store in one
 * transaction a second (by the monitor thread), so that an instruction poll
 * costs no write and no fsync. A crash loses at most the last second of
 * check-in times, which the next polls restore; nothing a client was told
 * depends on them. */
#pragma once
#include <stddef.h>

#include "store.h"

#define CHECKINS_MAX (1u << 20) /* distinct hosts between two flushes */

struct checkin_buffer;

int checkins_new(struct checkin_buffer **out);
void checkins_free(struct checkin_buffer *b);

/* Note that host (infra_env_id, host_id) checked in at `at` (RFC 3339,
 * canonical). A later note of the same host replaces the time. -E2BIG when
 * CHECKINS_MAX hosts are waiting (write through instead), -EINVAL for a
 * bad id, -ENOMEM. */
int checkins_note(struct checkin_buffer *b, const char *infra_env_id, const char *host_id, const char *at);

/* Write everything noted so far to the store (one transaction) and empty
 * the buffer. Returns how many hosts were written, or -errno; on failure
 * the entries are kept for the next flush. */
int checkins_flush(struct checkin_buffer *b, struct store *s);
