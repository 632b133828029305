/* Logging back-end: one line per call on stderr, errno text appended; on
 * request the recent lines are also kept in memory (log_ring_*), so that a
 * host without a journal can still hand its log over. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* program_invocation_short_name */
#endif
#include "log.h"

#include <json-c/json.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static enum log_level max_level = LOG_LVL_INFO;

void log_set_max_level(enum log_level lvl) { max_level = lvl; }
enum log_level log_get_max_level(void) { return max_level; }

/* ---- the ring ---------------------------------------------------------------
 * A circular buffer of whole lines: a line that does not fit pushes out the
 * oldest lines, whole, so the ring always starts at a line's beginning. The
 * flag lets log_v skip the mutex (and the clock) while no ring is
 * enabled. */

static atomic_bool ring_on;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static char *ring;
static size_t ring_cap, ring_head, ring_len; /* the oldest byte at ring_head, ring_len bytes in all */

/* Drop the oldest lines until `need` more bytes fit (need <= ring_cap). */
static void ring_make_room(size_t need) {
        while (ring_cap - ring_len < need) {
                size_t i = 0;
                while (i < ring_len && ring[(ring_head + i) % ring_cap] != '\n')
                        i++;
                i = i < ring_len ? i + 1 : ring_len; /* through its '\n' */
                ring_head = (ring_head + i) % ring_cap;
                ring_len -= i;
        }
}

static void ring_put(const char *p, size_t n) {
        size_t at = (ring_head + ring_len) % ring_cap;
        size_t first = n < ring_cap - at ? n : ring_cap - at;
        memcpy(ring + at, p, first);
        memcpy(ring, p + first, n - first);
        ring_len += n;
}

/* One line from its pieces; cut, still ending in '\n', when longer than the
 * whole ring. */
static void ring_line(const char *const *piece, size_t n_pieces) {
        size_t n = 0;
        for (size_t i = 0; i < n_pieces; i++)
                n += strlen(piece[i]);
        size_t room = n < ring_cap ? n : ring_cap - 1;
        ring_make_room(room + 1);
        for (size_t i = 0; i < n_pieces && room; i++) {
                size_t k = strlen(piece[i]);
                if (k > room)
                        k = room;
                ring_put(piece[i], k);
                room -= k;
        }
        ring_put("\n", 1);
}

/* The ring's bytes in order into dst (ring_len bytes). */
static void ring_linear(char *dst) {
        size_t first = ring_len < ring_cap - ring_head ? ring_len : ring_cap - ring_head;
        memcpy(dst, ring + ring_head, first);
        memcpy(dst + first, ring, ring_len - first);
}

int log_ring_enable(size_t bytes) {
        char *fresh = NULL;
        if (bytes > 0) {
                if (bytes < LOG_RING_MIN)
                        bytes = LOG_RING_MIN;
                if (!(fresh = malloc(bytes)))
                        return -ENOMEM;
        }
        pthread_mutex_lock(&ring_lock);
        size_t len = 0;
        if (ring && fresh) {
                if (bytes < ring_cap)
                        ring_make_room(ring_cap - bytes); /* the newest lines that fit */
                ring_linear(fresh);
                len = ring_len;
        }
        free(ring);
        ring = fresh;
        ring_cap = bytes;
        ring_head = 0;
        ring_len = len;
        atomic_store(&ring_on, ring != NULL);
        pthread_mutex_unlock(&ring_lock);
        return 0;
}

char *log_ring_copy(size_t *len) {
        pthread_mutex_lock(&ring_lock);
        if (!ring) {
                pthread_mutex_unlock(&ring_lock);
                errno = ENODATA;
                return NULL;
        }
        char *copy = malloc(ring_len + 1);
        if (copy) {
                ring_linear(copy);
                copy[ring_len] = '\0';
                if (len)
                        *len = ring_len;
        }
        pthread_mutex_unlock(&ring_lock);
        if (!copy)
                errno = ENOMEM;
        return copy;
}

/* "2024-05-01T12:34:56.789Z " */
static void timestamp(char *buf, size_t n) {
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        if (!gmtime_r(&ts.tv_sec, &tm)) {
                snprintf(buf, n, "? ");
                return;
        }
        snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

/* ---- lines ------------------------------------------------------------------ */

static _Atomic int format = LOG_FORMAT_TEXT;
static pthread_mutex_t fields_lock = PTHREAD_MUTEX_INITIALIZER;
static char proc_host[LOG_FIELD_MAX], proc_cluster[LOG_FIELD_MAX], proc_infra[LOG_FIELD_MAX];
static atomic_bool proc_fields_on;
static _Atomic int journal = -1; /* -1: not looked at yet */

void log_set_format(enum log_format fmt) { atomic_store(&format, (int) fmt); }
static enum log_format log_get_format(void) { return (enum log_format) atomic_load(&format); }
void log_reopen(void) { atomic_store(&journal, -1); }

int log_format_from_string(const char *s, enum log_format *out) {
        if (strcmp(s, "text") == 0)
                *out = LOG_FORMAT_TEXT;
        else if (strcmp(s, "json") == 0)
                *out = LOG_FORMAT_JSON;
        else
                return -EINVAL;
        return 0;
}

int log_level_from_string(const char *s, enum log_level *out) {
        static const struct { const char *name; enum log_level lvl; } names[] = {
                { "error", LOG_LVL_ERR }, { "warning", LOG_LVL_WARNING },
                { "info", LOG_LVL_INFO }, { "debug", LOG_LVL_DEBUG },
        };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                if (strcmp(s, names[i].name) == 0) {
                        *out = names[i].lvl;
                        return 0;
                }
        return -EINVAL;
}

static void copy_field(char *dst, const char *src) {
        snprintf(dst, LOG_FIELD_MAX, "%s", src ? src : "");
}

void log_set_process_fields(struct log_fields f) {
        pthread_mutex_lock(&fields_lock);
        copy_field(proc_host, f.host);
        copy_field(proc_cluster, f.cluster);
        copy_field(proc_infra, f.infra_env);
        atomic_store(&proc_fields_on, proc_host[0] || proc_cluster[0] || proc_infra[0]);
        pthread_mutex_unlock(&fields_lock);
}

/* JOURNAL_STREAM is "DEV:INODE" of the stream journald gave us; only when
 * stderr is still that stream are we talking to the journal (sd_journal(3)). */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

static const char *level_word(enum log_level lvl) {
        switch (lvl) {
        case LOG_LVL_ERR: return "ERROR";
        case LOG_LVL_WARNING: return "WARN";
        case LOG_LVL_INFO: return "INFO";
        case LOG_LVL_DEBUG: return "DEBUG";
        }
        return "?";
}

static bool has(const char *s) { return s && *s; }

/* " host=ID cluster=ID infra_env=ID", those there are. */
static void fields_text(char *buf, size_t n, const struct log_fields *f) {
        size_t at = 0;
        buf[0] = '\0';
        if (has(f->host))
                at += (size_t) snprintf(buf + at, n - at, " host=%s", f->host);
        if (has(f->cluster) && at < n)
                at += (size_t) snprintf(buf + at, n - at, " cluster=%s", f->cluster);
        if (has(f->infra_env) && at < n)
                snprintf(buf + at, n - at, " infra_env=%s", f->infra_env);
}

static int journal_send(enum log_level lvl, int err, const char *file, int line, const char *subsys,
                        const struct log_fields *f, const char *msg) {
        char prio[32], sub[128], code_file[512], code_line[32], id[128], errno_f[32];
        char host[32 + LOG_FIELD_MAX], cluster[32 + LOG_FIELD_MAX], infra[32 + LOG_FIELD_MAX];
        struct iovec iov[12];
        int n = 0;
        size_t mlen = strlen(msg);
        char *m = malloc(sizeof "MESSAGE=" + mlen);
        if (!m)
                return -ENOMEM;
        memcpy(m, "MESSAGE=", 8);
        memcpy(m + 8, msg, mlen + 1);
#define ADD(buf, ...) do { int _k = snprintf(buf, sizeof buf, __VA_ARGS__); \
                iov[n++] = (struct iovec) { buf, (size_t) _k < sizeof buf ? (size_t) _k : sizeof buf - 1 }; } while (0)
        iov[n++] = (struct iovec) { m, 8 + mlen };
        ADD(prio, "PRIORITY=%d", (int) lvl);
        ADD(id, "SYSLOG_IDENTIFIER=%s", program_invocation_short_name);
        ADD(sub, "MUSTER_SUBSYSTEM=%s", subsys);
        if (file) {
                ADD(code_file, "CODE_FILE=%s", file);
                ADD(code_line, "CODE_LINE=%d", line);
        }
        if (err)
                ADD(errno_f, "ERRNO=%d", abs(err));
        if (has(f->host))
                ADD(host, "MUSTER_HOST_ID=%s", f->host);
        if (has(f->cluster))
                ADD(cluster, "MUSTER_CLUSTER_ID=%s", f->cluster);
        if (has(f->infra_env))
                ADD(infra, "MUSTER_INFRA_ENV_ID=%s", f->infra_env);
#undef ADD
        int r = sd_journal_sendv(iov, n);
        free(m);
        return r;
}

static void json_line(char *ts, enum log_level lvl, int err, const char *subsys, const struct log_fields *f,
                      const char *msg) {
        json_object *o = json_object_new_object();
        if (!o)
                return;
        json_object_object_add(o, "time", json_object_new_string(ts));
        json_object_object_add(o, "level", json_object_new_string(level_word(lvl)));
        json_object_object_add(o, "subsystem", json_object_new_string(subsys));
        json_object_object_add(o, "message", json_object_new_string(msg));
        if (has(f->host))
                json_object_object_add(o, "host_id", json_object_new_string(f->host));
        if (has(f->cluster))
                json_object_object_add(o, "cluster_id", json_object_new_string(f->cluster));
        if (has(f->infra_env))
                json_object_object_add(o, "infra_env_id", json_object_new_string(f->infra_env));
        if (err)
                json_object_object_add(o, "errno", json_object_new_int(abs(err)));
        fprintf(stderr, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(o);
}

__attribute__((format(printf, 7, 0)))
static int log_v(enum log_level lvl, int err, const char *file, int line, const char *subsys,
                 const struct log_fields *given, const char *fmt, va_list ap) {
        char msg[2048], ts[64], extra[3 * (LOG_FIELD_MAX + 16)];
        char host[LOG_FIELD_MAX], cluster[LOG_FIELD_MAX], infra[LOG_FIELD_MAX];
        struct log_fields f = given ? *given : (struct log_fields) { 0 };
        int saved = errno;
        int j = atomic_load(&journal);

        if (j < 0) {
                j = stderr_is_journal();
                atomic_store(&journal, j);
        }
        if (err != 0)
                errno = abs(err); /* so %m in fmt names the error we were given */
        vsnprintf(msg, sizeof msg, fmt, ap);
        if (atomic_load_explicit(&proc_fields_on, memory_order_relaxed)) {
                pthread_mutex_lock(&fields_lock);
                memcpy(host, proc_host, sizeof host);
                memcpy(cluster, proc_cluster, sizeof cluster);
                memcpy(infra, proc_infra, sizeof infra);
                pthread_mutex_unlock(&fields_lock);
                if (!has(f.host) && host[0])
                        f.host = host;
                if (!has(f.cluster) && cluster[0])
                        f.cluster = cluster;
                if (!has(f.infra_env) && infra[0])
                        f.infra_env = infra;
        }
        fields_text(extra, sizeof extra, &f);
        timestamp(ts, sizeof ts); /* "...Z " */
        bool sent = j && journal_send(lvl, err, file, line, subsys, &f, msg) >= 0;
        if (sent) {
                /* the journal has it */
        } else if (j)
                fprintf(stderr, "<%d>%s: %s%s\n", (int) lvl, subsys, msg, extra);
        else if (log_get_format() == LOG_FORMAT_JSON) {
                ts[strcspn(ts, " ")] = '\0';
                json_line(ts, lvl, err, subsys, &f, msg);
                strcat(ts, " ");
        } else
                fprintf(stderr, "%s%-5s %s: %s%s\n", ts, level_word(lvl), subsys, msg, extra);
        if (atomic_load_explicit(&ring_on, memory_order_relaxed)) {
                char prio[16] = "";
                if (j)
                        snprintf(prio, sizeof prio, "<%d>", (int) lvl);
                pthread_mutex_lock(&ring_lock);
                if (ring)
                        ring_line((const char *const[]) { ts, prio, subsys, ": ", msg, extra }, 6);
                pthread_mutex_unlock(&ring_lock);
        }
        errno = saved;
        return -abs(err);
}

int log_internal_fields(enum log_level lvl, int err, const char *file, int line, const char *subsys,
                        const struct log_fields *f, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = log_v(lvl, err, file, line, subsys, f, fmt, ap);
        va_end(ap);
        return r;
}
