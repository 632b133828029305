/* Logging macros with a subsystem token and errno variants.
 * Under journald (JOURNAL_STREAM naming stderr's dev:inode) each line is a
 * journal entry (sd_journal_sendv): PRIORITY, MESSAGE, SYSLOG_IDENTIFIER,
 * MUSTER_SUBSYSTEM, CODE_FILE/CODE_LINE and MUSTER_HOST_ID /
 * MUSTER_CLUSTER_ID / MUSTER_INFRA_ENV_ID when the line is about one; when
 * the send fails, the line goes to stderr with a <N> prefix. Elsewhere,
 * stderr, one line each: "2026-12-03T11:20:00.123Z INFO  subsys: message
 * host=ID cluster=ID infra_env=ID" (LOG_FORMAT_TEXT) or one JSON object
 * {"time","level","subsystem","message","host_id","cluster_id",
 * "infra_env_id","errno"} (LOG_FORMAT_JSON). */
#pragma once
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_LVL_ERR = 3, LOG_LVL_WARNING = 4, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

/* The ids a line is about; NULL or "" for none. */
struct log_fields {
        const char *host, *cluster, *infra_env;
};

enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };
void log_set_format(enum log_format fmt);
/* "text"/"json" -> 0 and *out; -EINVAL otherwise. */
int log_format_from_string(const char *s, enum log_format *out);
/* "error"/"warning"/"info"/"debug" -> 0 and *out; -EINVAL otherwise. */
int log_level_from_string(const char *s, enum log_level *out);
/* The fields every line of this process carries from now on unless the call
 * names its own (the agent: its host id once known); copied (each cut at
 * LOG_FIELD_MAX - 1 bytes). All NULL clears. */
#define LOG_FIELD_MAX 80
void log_set_process_fields(struct log_fields f);
/* Re-read JOURNAL_STREAM (tests; after stderr is redirected). */
void log_reopen(void);

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
int log_internal_fields(enum log_level lvl, int err, const char *file, int line, const char *subsys,
                        const struct log_fields *f, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

#define log_full_fields(lvl, err, sub, f, ...)                                                     \
        ({ int _e = (err); (lvl) <= log_get_max_level()                                             \
                ? log_internal_fields((lvl), _e, __FILE__, __LINE__, (sub), &(f), __VA_ARGS__) : -abs(_e); })
#define log_full_errno(lvl, err, sub, ...)                                                         \
        ({ int _e = (err); (lvl) <= log_get_max_level()                                             \
                ? log_internal_fields((lvl), _e, __FILE__, __LINE__, (sub), NULL, __VA_ARGS__) : -abs(_e); })
/* log_info_fields(sub, ((struct log_fields){ .host = id }), fmt, ...) */
#define log_debug_fields(sub, f, ...)   ((void) log_full_fields(LOG_LVL_DEBUG, 0, sub, f, __VA_ARGS__))
#define log_info_fields(sub, f, ...)    ((void) log_full_fields(LOG_LVL_INFO, 0, sub, f, __VA_ARGS__))
#define log_warning_fields(sub, f, ...) ((void) log_full_fields(LOG_LVL_WARNING, 0, sub, f, __VA_ARGS__))
#define log_error_fields(sub, f, ...)   ((void) log_full_fields(LOG_LVL_ERR, 0, sub, f, __VA_ARGS__))
#define log_host_info(sub, id, ...)     log_info_fields(sub, ((struct log_fields){ .host = (id) }), __VA_ARGS__)
#define log_host_warning(sub, id, ...)  log_warning_fields(sub, ((struct log_fields){ .host = (id) }), __VA_ARGS__)
#define log_cluster_info(sub, id, ...)  log_info_fields(sub, ((struct log_fields){ .cluster = (id) }), __VA_ARGS__)
#define log_infraenv_info(sub, id, ...) log_info_fields(sub, ((struct log_fields){ .infra_env = (id) }), __VA_ARGS__)
#define log_debug(sub, ...)   ((void) log_full_errno(LOG_LVL_DEBUG, 0, sub, __VA_ARGS__))
#define log_info(sub, ...)    ((void) log_full_errno(LOG_LVL_INFO, 0, sub, __VA_ARGS__))
#define log_warning(sub, ...) ((void) log_full_errno(LOG_LVL_WARNING, 0, sub, __VA_ARGS__))
#define log_error(sub, ...)   ((void) log_full_errno(LOG_LVL_ERR, 0, sub, __VA_ARGS__))
#define log_debug_errno(e, sub, ...)   log_full_errno(LOG_LVL_DEBUG, e, sub, __VA_ARGS__)
#define log_warning_errno(e, sub, ...) log_full_errno(LOG_LVL_WARNING, e, sub, __VA_ARGS__)
#define log_error_errno(e, sub, ...)   log_full_errno(LOG_LVL_ERR, e, sub, __VA_ARGS__)
