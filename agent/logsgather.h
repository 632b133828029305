/* The logs-gather step's bundle: the agent's own recent log (the log ring),
 * this boot's journal and the kernel's ring buffer, with a small index,
 * packed as a gzip-compressed ustar archive no bigger than the coordinator
 * takes; when it would be bigger the oldest lines go. Building only: the
 * step's wiring and the upload are the caller's. */
#pragma once
#include <json-c/json.h>
#include <stddef.h>

#include "growbuf.h"

#define LOGS_SOURCE_MAX (64u << 20)     /* bytes kept of each source: its tail */
#define LOGS_COMMAND_TIMEOUT_MS 20000   /* journalctl is killed after this long */
#define LOGS_BUNDLE_MIN (64u << 10)     /* the smallest max_bytes taken */
#define LOGS_STDERR_MAX (16u << 10)     /* journalctl's stderr kept when it fails: its tail */
#define LOGS_KMSG "/dev/kmsg"

struct logs_sources {
        const char *journalctl; /* path of journalctl, or NULL: searched in PATH; "": not run */
        const char *kmsg;       /* LOGS_KMSG as a rule; NULL or "": not read */
        unsigned timeout_ms;    /* journalctl's time limit; 0: LOGS_COMMAND_TIMEOUT_MS */
};
#define LOGS_SOURCES_DEFAULT ((struct logs_sources) { .journalctl = NULL, .kmsg = LOGS_KMSG })

/* Build the bundle (src NULL: LOGS_SOURCES_DEFAULT), a gzip-compressed
 * ustar archive of, in this order:
 *   agent.log   - log_ring_copy(), or a line saying no ring was enabled;
 *   journal.log - `journalctl -b --no-pager -o short-iso-precise`'s output
 *                 (spawned without a shell, stdin /dev/null, killed with its
 *                 process group after the time limit); when it could not be
 *                 started, failed or was killed, lines saying so and its
 *                 stderr's tail come first, then what it printed;
 *   kernel.log  - the records of kmsg, read without blocking until EAGAIN
 *                 (or the end of a regular file), one "[seconds.micro]
 *                 message" line each; or why it could not be read;
 *   info.json   - {"created_at": RFC 3339 UTC, "host_id", "agent_version"
 *                 (null when NULL), "members": [{"name", "bytes", "cut"}]
 *                 for the three logs}.
 * Of each source at most LOGS_SOURCE_MAX bytes are kept, its tail. When the
 * compressed bundle would pass max_bytes (at least LOGS_BUNDLE_MIN), the
 * journal, then the kernel log, then the agent log, is cut from its start
 * at a line boundary and the bundle built again until it fits; a log that
 * lost bytes starts with a line "-- N bytes left out --" (after the
 * lines on a failure, if any). 0 with *out (malloc'd), *outlen and
 * *summary = {"bytes", "members": [{"name", "bytes", "cut"}] for all four};
 * or -EINVAL (arguments), -ENOMEM, -E2BIG (does not fit even with every
 * log cut), -EIO (zlib), with the reason in err. */
int logs_bundle_build(const struct logs_sources *src, const char *host_id, const char *agent_version,
                      size_t max_bytes, void **out, size_t *outlen, json_object **summary, char *err,
                      size_t errlen);

/* len bytes of in, gzip-compressed (deflate, gzip wrapper), appended to
 * out: 0; -E2BIG when out would pass max bytes (out as it was), -ENOMEM,
 * -EIO. */
int logs_gzip(const void *in, size_t len, struct growbuf *out, size_t max);
