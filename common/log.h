/* Logging macros with a subsystem token and errno variants.
 * Lines go to stderr; under systemd (JOURNAL_STREAM set) they carry <N>
 * priority prefixes so journald keeps the level. */
#pragma once
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_LVL_ERR = 3, LOG_LVL_WARNING = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

void log_set_max_level(enum log_level lvl);
enum log_level log_get_max_level(void);
/* Keep the lines logged from now on in a ring of `bytes` in memory as well
 * (at least LOG_RING_MIN), each prefixed with its UTC time to the
 * millisecond ("2024-05-01T12:34:56.789Z "); the oldest lines make way,
 * whole. Again with another size: the ring is resized, keeping the newest
 * lines that fit; 0 disables and frees it. Off until called. 0 or -ENOMEM
 * (then the ring is as it was). */
#define LOG_RING_MIN 4096
int log_ring_enable(size_t bytes);
/* The ring's lines, oldest first, starting at a line's beginning (malloc'd,
 * NUL-terminated after *len bytes). NULL with errno ENODATA when no ring is
 * enabled, ENOMEM. Thread-safe, as logging is. */
char *log_ring_copy(size_t *len);

/* Returns -abs(err) so callers can `return log_error_errno(r, ...)`. */
int log_internal(enum log_level lvl, int err, const char *subsys, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

#define log_full_errno(lvl, err, sub, ...)                                     \
        ({ int _e = (err); (lvl) <= log_get_max_level()                         \
                ? log_internal((lvl), _e, (sub), __VA_ARGS__) : -abs(_e); })
#define log_debug(sub, ...)   ((void) log_full_errno(LOG_LVL_DEBUG, 0, sub, __VA_ARGS__))
#define log_info(sub, ...)    ((void) log_full_errno(LOG_LVL_INFO, 0, sub, __VA_ARGS__))
#define log_warning(sub, ...) ((void) log_full_errno(LOG_LVL_WARNING, 0, sub, __VA_ARGS__))
#define log_error(sub, ...)   ((void) log_full_errno(LOG_LVL_ERR, 0, sub, __VA_ARGS__))
#define log_debug_errno(e, sub, ...)   log_full_errno(LOG_LVL_DEBUG, e, sub, __VA_ARGS__)
#define log_warning_errno(e, sub, ...) log_full_errno(LOG_LVL_WARNING, e, sub, __VA_ARGS__)
#define log_error_errno(e, sub, ...)   log_full_errno(LOG_LVL_ERR, e, sub, __VA_ARGS__)
