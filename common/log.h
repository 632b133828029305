/* Logging macros with a subsystem token and errno variants.
 * Lines go to stderr; under systemd (JOURNAL_STREAM set) they carry <N>
 * priority prefixes so journald keeps the level. */
#pragma once
#include <errno.h>
#include <stdarg.h>

enum log_level { LOG_LVL_ERR = 3, LOG_LVL_WARNING = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

void log_set_max_level(enum log_level lvl);
enum log_level log_get_max_level(void);
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
