/* Logging back-end: one line per call on stderr, errno text appended; on
 * request the recent lines are also kept in memory (log_ring_*), so that a
 * host without a journal can still hand its log over. */
#include "log.h"

#include <pthread.h>
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
 * flag lets log_internal skip the mutex (and the clock) while no ring is
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

int log_internal(enum log_level lvl, int err, const char *subsys, const char *fmt, ...) {
        static int journal = -1;
        char msg[2048];
        va_list ap;
        int saved = errno;

        if (journal < 0)
                journal = getenv("JOURNAL_STREAM") != NULL;
        if (err != 0)
                errno = abs(err); /* so %m in fmt names the error we were given */
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (journal)
                fprintf(stderr, "<%d>%s: %s\n", (int) lvl, subsys, msg);
        else
                fprintf(stderr, "%s: %s\n", subsys, msg);
        if (atomic_load_explicit(&ring_on, memory_order_relaxed)) {
                char ts[128], prio[16] = "";
                timestamp(ts, sizeof ts);
                if (journal)
                        snprintf(prio, sizeof prio, "<%d>", (int) lvl);
                pthread_mutex_lock(&ring_lock);
                if (ring)
                        ring_line((const char *const[]) { ts, prio, subsys, ": ", msg }, 5);
                pthread_mutex_unlock(&ring_lock);
        }
        errno = saved;
        return -abs(err);
}
