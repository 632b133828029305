/* The logs-gather bundle (logsgather.h): each source read into the tail of
 * a bounded buffer, then the archive built and compressed as one stream;
 * while it is too big, the log whose turn it is keeps fewer of its newest
 * bytes, as many as the last build's compression ratio says will fit. */
#include "logsgather.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cleanup.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "log.h"
#include "tar.h"

extern char **environ;

#define READ_CHUNK (64u << 10)
#define KMSG_READ_MAX (4 * (size_t) LOGS_SOURCE_MAX) /* a kernel that logs faster than we read: stop */
#define MAX_BUILDS 24
#define MEMBER_MODE 0644

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the tail of a stream ---------------------------------------------------
 * Linear until `max` bytes are held, circular after that (the oldest byte at
 * `start`); tail_finish() turns it linear again. */

struct tail {
        char *data;
        size_t len, cap, max, start;
        size_t dropped; /* bytes written and pushed out */
};

static int tail_write(struct tail *t, const char *p, size_t n) {
        if (t->len + n > t->cap && t->cap < t->max) {
                size_t cap = t->cap ? t->cap : READ_CHUNK;
                while (cap < t->len + n && cap < t->max)
                        cap *= 2;
                if (cap > t->max)
                        cap = t->max;
                char *d = realloc(t->data, cap);
                if (!d)
                        return -ENOMEM;
                t->data = d;
                t->cap = cap;
        }
        while (n > 0) {
                size_t k;
                if (t->len < t->max) { /* start is 0 until the buffer is full */
                        k = n < t->max - t->len ? n : t->max - t->len;
                        memcpy(t->data + t->len, p, k);
                        t->len += k;
                } else {
                        k = n < t->max - t->start ? n : t->max - t->start;
                        memcpy(t->data + t->start, p, k);
                        t->start = (t->start + k) % t->max;
                        t->dropped += k;
                }
                p += k;
                n -= k;
        }
        return 0;
}

static void reverse(char *p, size_t n) {
        for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
                char c = p[i];
                p[i] = p[j - 1];
                p[j - 1] = c;
        }
}

/* Rotate in place so that the oldest byte is first. */
static void tail_finish(struct tail *t) {
        if (t->start == 0)
                return;
        reverse(t->data, t->start);
        reverse(t->data + t->start, t->len - t->start);
        reverse(t->data, t->len);
        t->start = 0;
}

/* ---- members ----------------------------------------------------------------- */

struct member {
        const char *name;
        struct growbuf head; /* never cut: why the source could not be read */
        struct tail body;    /* the source's tail */
        size_t keep;         /* of body, at most this many of its last bytes go in */
        /* From the last build: */
        size_t shown;        /* bytes of body in it */
        size_t bytes;        /* the member's size */
        bool cut;
        uint64_t zbytes;     /* its share of the compressed stream */
};

enum { M_AGENT, M_JOURNAL, M_KERNEL, M_LOGS };

static int note(struct member *m, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int note(struct member *m, int r, const char *fmt, ...) {
        char line[1024];
        va_list ap;
        int saved = errno;
        errno = r < 0 ? -r : r; /* "%m": r's text */
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        errno = saved;
        return growbuf_printf(&m->head, SIZE_MAX - 1, "%s\n", line);
}

static int head_append(struct member *m, const char *p, size_t n) {
        return growbuf_append(&m->head, p, n, SIZE_MAX - 1, 1024);
}

/* Where the body's shown part starts: its last `keep` bytes, from a line's
 * beginning (a body whose source was cut loses its first, partial, line). */
static size_t body_start(const struct member *m) {
        const struct tail *b = &m->body;
        size_t s = m->keep < b->len ? b->len - m->keep : 0;
        if (s == 0 && b->dropped == 0)
                return 0;
        if (s > 0 && b->data[s - 1] == '\n')
                return s;
        const char *nl = memchr(b->data + s, '\n', b->len - s);
        return nl ? (size_t) (nl - b->data) + 1 : b->len;
}

/* The member's bytes as they go in the archive, as pieces: the head, the
 * line counting what was left out (in `line`), the body's shown part. */
struct pieces {
        const void *p[3];
        size_t n[3];
};

static void member_pieces(struct member *m, struct pieces *pc, char *line, size_t linelen) {
        size_t start = body_start(m);
        size_t left_out = m->body.dropped + start;
        line[0] = '\0';
        if (left_out)
                snprintf(line, linelen, "-- %zu bytes left out --\n", left_out);
        *pc = (struct pieces) { { m->head.data, line, m->body.data + start },
                                { m->head.len, strlen(line), m->body.len - start } };
        m->shown = m->body.len - start;
        m->bytes = pc->n[0] + pc->n[1] + pc->n[2];
        m->cut = left_out > 0;
}

/* ---- agent.log ---------------------------------------------------------------- */

static int read_agent_log(struct member *m) {
        size_t n = 0;
        char *copy = log_ring_copy(&n);
        if (!copy) {
                if (errno == ENOMEM)
                        return -ENOMEM;
                return note(m, 0, "The agent kept no log in memory (its log ring was not enabled).");
        }
        int r = tail_write(&m->body, copy, n);
        free(copy);
        tail_finish(&m->body);
        return r;
}

/* ---- journal.log ------------------------------------------------------------- */


/* Read what is there from fd into t; false at the end of the stream (or an
 * error), when fd should be closed. */
static bool drain(int fd, struct tail *t, char *buf, int *r) {
        for (;;) {
                ssize_t n = read(fd, buf, READ_CHUNK);
                if (n > 0) {
                        if ((*r = tail_write(t, buf, (size_t) n)) < 0)
                                return false;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
}

/* journalctl's output into m: this boot's journal, or (kernel) only the
 * kernel's lines, where kmsg cannot be read (a unit with ProtectKernelLogs). */
static int run_journalctl(const struct logs_sources *src, struct member *m, bool kernel) {
        const char *args = kernel ? "-k -b --no-pager -o short-monotonic" : "-b --no-pager -o short-iso-precise";
        const char *path = src->journalctl;
        size_t head0 = m->head.len; /* what was noted before this run */
        if (path && !*path)
                return note(m, 0, "journalctl was not run (none configured).");
        const char *shown = path ? path : "journalctl (from PATH)";
        int pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
        if (pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
                int e = errno;
                for (int i = 0; i < 2; i++) {
                        if (pout[i] >= 0)
                                close(pout[i]);
                        if (perr[i] >= 0)
                                close(perr[i]);
                }
                return note(m, -e, "%s %s was not run: pipe: %m", shown, args) < 0 ? -ENOMEM : 0;
        }
        /* Only our ends are non-blocking: journalctl writes as usual. */
        fcntl(pout[0], F_SETFL, O_NONBLOCK);
        fcntl(perr[0], F_SETFL, O_NONBLOCK);

        posix_spawn_file_actions_t fa;
        posix_spawnattr_t at;
        sigset_t none, dfl;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, pout[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, perr[1], STDERR_FILENO);
        posix_spawnattr_init(&at);
        /* Its own process group, so that a timeout kills what it started;
         * no signal blocked or ignored as the agent's threads may have them. */
        sigemptyset(&none);
        sigemptyset(&dfl);
        sigaddset(&dfl, SIGPIPE);
        sigaddset(&dfl, SIGINT);
        sigaddset(&dfl, SIGTERM);
        sigaddset(&dfl, SIGHUP);
        sigaddset(&dfl, SIGCHLD);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&at, 0);
        posix_spawnattr_setsigmask(&at, &none);
        posix_spawnattr_setsigdefault(&at, &dfl);
        char *argv_boot[] = { "journalctl", "-b", "--no-pager", "-o", "short-iso-precise", NULL };
        char *argv_kernel[] = { "journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic", NULL };
        char **argv = kernel ? argv_kernel : argv_boot;
        pid_t pid;
        int e = path ? posix_spawn(&pid, path, &fa, &at, argv, environ)
                     : posix_spawnp(&pid, "journalctl", &fa, &at, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        close(pout[1]);
        close(perr[1]);
        if (e != 0) {
                close(pout[0]);
                close(perr[0]);
                return note(m, e, "%s %s could not be started: %m", shown, args) < 0 ? -ENOMEM : 0;
        }

        unsigned timeout = src->timeout_ms ? src->timeout_ms : LOGS_COMMAND_TIMEOUT_MS;
        int64_t deadline = mono_ms() + timeout;
        struct tail errt = { .max = LOGS_STDERR_MAX };
        struct pollfd pfd[2] = { { .fd = pout[0], .events = POLLIN }, { .fd = perr[0], .events = POLLIN } };
        struct tail *into[2] = { &m->body, &errt };
        bool timed_out = false;
        int r = 0;
        char *buf = malloc(READ_CHUNK);
        if (!buf)
                r = -ENOMEM;
        while (r == 0 && (pfd[0].fd >= 0 || pfd[1].fd >= 0)) {
                int64_t left = deadline - mono_ms();
                if (left <= 0) {
                        timed_out = true;
                        break;
                }
                int k = poll(pfd, 2, (int) left);
                if (k < 0 && errno != EINTR) {
                        r = -errno;
                        break;
                }
                for (int i = 0; k > 0 && i < 2; i++)
                        if (pfd[i].fd >= 0 && pfd[i].revents && !drain(pfd[i].fd, into[i], buf, &r)) {
                                close(pfd[i].fd);
                                pfd[i].fd = -1;
                        }
        }
        free(buf);
        for (int i = 0; i < 2; i++)
                if (pfd[i].fd >= 0)
                        close(pfd[i].fd);
        /* Both streams ended (or not): it has until the deadline to exit. */
        int status = 0;
        pid_t w = 0;
        while (r == 0 && !timed_out && (w = waitpid(pid, &status, WNOHANG)) == 0) {
                if (mono_ms() >= deadline)
                        timed_out = true;
                else
                        nanosleep(&(struct timespec) { .tv_nsec = 5 * 1000 * 1000 }, NULL);
        }
        if (w <= 0) {
                if (timed_out || r < 0)
                        kill(-pid, SIGKILL); /* still ours: not reaped yet */
                while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                        ;
        }
        tail_finish(&m->body);
        tail_finish(&errt);
        if (r < 0) {
                free(errt.data);
                return r == -ENOMEM ? r : note(m, r, "%s %s: reading its output: %m", shown, args);
        }

        if (timed_out)
                r = note(m, 0, "%s %s was killed after %u ms.", shown, args, timeout);
        else if (w < 0)
                r = note(m, 0, "%s %s: its exit status is unknown (reaped elsewhere).", shown, args);
        else if (WIFSIGNALED(status))
                r = note(m, 0, "%s %s was killed by signal %d.", shown, args, WTERMSIG(status));
        else if (WEXITSTATUS(status) != 0)
                r = note(m, 0, "%s %s failed: exit status %d.", shown, args, WEXITSTATUS(status));
        if (r == 0 && m->head.len > head0) {
                /* What it said on stderr, then what it printed (the body). */
                if (errt.len == 0)
                        r = note(m, 0, "Its standard error was empty.");
                else if ((r = note(m, 0, "Its standard error%s:", errt.dropped ? " (its end)" : "")) == 0 &&
                         (r = head_append(m, errt.data, errt.len)) == 0 && errt.data[errt.len - 1] != '\n')
                        r = head_append(m, "\n", 1);
                if (r == 0)
                        r = note(m, 0, m->body.len || m->body.dropped ? "Its standard output:"
                                                                      : "Its standard output was empty.");
        }
        free(errt.data);
        return r;
}

static int read_journal(const struct logs_sources *src, struct member *m) {
        return run_journalctl(src, m, false);
}

/* ---- kernel.log ------------------------------------------------------------- */

/* One line of kmsg: "PRIO,SEQ,USEC,FLAGS[,...];MESSAGE" becomes
 * "[SECONDS.MICRO] MESSAGE"; the record's " KEY=value" lines are left out;
 * a line that does not parse goes in as it is. */
static int kmsg_line(struct tail *t, const char *line, size_t n) {
        if (n == 0 || line[0] == ' ')
                return 0;
        const char *semi = memchr(line, ';', n);
        const char *c1 = semi ? memchr(line, ',', (size_t) (semi - line)) : NULL;
        const char *c2 = c1 ? memchr(c1 + 1, ',', (size_t) (semi - c1 - 1)) : NULL;
        char stamp[48];
        unsigned long long usec = 0;
        bool ok = c2 != NULL;
        if (ok) {
                const char *p = c2 + 1;
                ok = p < semi && *p >= '0' && *p <= '9';
                for (; ok && p < semi && *p != ','; p++) {
                        ok = *p >= '0' && *p <= '9' && usec <= (UINT64_MAX - 9) / 10;
                        usec = usec * 10 + (unsigned long long) (*p - '0');
                }
        }
        int r;
        if (!ok)
                r = tail_write(t, line, n);
        else {
                snprintf(stamp, sizeof stamp, "[%5llu.%06llu] ", usec / 1000000, usec % 1000000);
                if ((r = tail_write(t, stamp, strlen(stamp))) == 0)
                        r = tail_write(t, semi + 1, n - (size_t) (semi + 1 - line));
        }
        return r < 0 ? r : tail_write(t, "\n", 1);
}

static int read_kernel(const struct logs_sources *src, struct member *m) {
        if (!src->kmsg || !*src->kmsg)
                return note(m, 0, "The kernel's log was not read (no kmsg configured).");
        _cleanup_close_ int fd = open(src->kmsg, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                int r = note(m, -errno, "The kernel's log could not be read: %s: %m", src->kmsg) < 0 ? -ENOMEM : 0;
                /* Hardened units cannot read kmsg; journald kept its lines. */
                if (r == 0 && !(src->journalctl && !*src->journalctl) &&
                    (r = note(m, 0, "Its lines as the journal kept them:")) == 0)
                        r = run_journalctl(src, m, true);
                return r;
        }
        /* /dev/kmsg gives one record per read; a regular file (the tests')
         * any number of lines, the last maybe cut: lines are split here. */
        _cleanup_free_ char *buf = malloc(READ_CHUNK);
        if (!buf)
                return -ENOMEM;
        size_t have = 0, total = 0;
        int r = 0;
        bool end = false;
        while (r == 0 && !end) {
                ssize_t n = read(fd, buf + have, READ_CHUNK - have);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EPIPE) /* records overwritten while we read: go on */
                        continue;
                if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                        r = note(m, -errno, "Reading %s stopped: %m", src->kmsg);
                        break;
                }
                if (n <= 0)
                        end = true;
                else
                        have += (size_t) n;
                total += n > 0 ? (size_t) n : 0;
                if (total > KMSG_READ_MAX)
                        end = true;
                size_t at = 0;
                for (char *nl; r == 0 && (nl = memchr(buf + at, '\n', have - at)); at = (size_t) (nl - buf) + 1)
                        r = kmsg_line(&m->body, buf + at, (size_t) (nl - buf) - at);
                if (r == 0 && at < have && (end || (at == 0 && have == READ_CHUNK))) {
                        r = kmsg_line(&m->body, buf + at, have - at); /* the last line, or a huge one */
                        at = have;
                }
                memmove(buf, buf + at, have - at);
                have -= at;
        }
        tail_finish(&m->body);
        return r;
}

/* ---- gzip ----------------------------------------------------------------------
 * One deflate stream; what it produces is kept in `out` while it fits in
 * `max` bytes and counted beyond that, so a build that does not fit still
 * tells how big it is. */

struct gz {
        z_stream z;
        struct growbuf *out;
        size_t max;
        uint64_t total;
        bool over;
        unsigned char buf[READ_CHUNK];
};

static int gz_init(struct gz *g, struct growbuf *out, size_t max) {
        memset(&g->z, 0, sizeof g->z);
        g->out = out;
        g->max = max;
        g->total = 0;
        g->over = false;
        /* windowBits 15 + 16: the gzip wrapper. */
        return deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK
                       ? 0 : -ENOMEM;
}

/* Feed n bytes, then `flush` (Z_SYNC_FLUSH at a member's end: what came
 * out so far is exactly what went in so far, so each member's share can be
 * counted; Z_FINISH at the end). */
static int gz_feed(struct gz *g, const void *p, size_t n, int flush) {
        const unsigned char *in = p;
        do {
                size_t k = n < (1u << 30) ? n : (1u << 30);
                g->z.next_in = (unsigned char *) in;
                g->z.avail_in = (uInt) k;
                int f = k == n ? flush : Z_NO_FLUSH;
                do {
                        g->z.next_out = g->buf;
                        g->z.avail_out = sizeof g->buf;
                        int zr = deflate(&g->z, f);
                        if (zr == Z_STREAM_ERROR)
                                return -EIO;
                        size_t made = sizeof g->buf - g->z.avail_out;
                        g->total += made;
                        if (!g->over && made) {
                                int r = growbuf_append(g->out, g->buf, made, g->max, READ_CHUNK);
                                if (r == -E2BIG)
                                        g->over = true;
                                else if (r < 0)
                                        return r;
                        }
                } while (g->z.avail_out == 0);
                in += k;
                n -= k;
        } while (n > 0);
        return 0;
}

int logs_gzip(const void *in, size_t len, struct growbuf *out, size_t max) {
        _cleanup_free_ struct gz *g = malloc(sizeof *g);
        if (!g)
                return -ENOMEM;
        size_t was = out->len;
        int r = gz_init(g, out, max);
        if (r < 0)
                return r;
        r = gz_feed(g, in, len, Z_FINISH);
        deflateEnd(&g->z);
        if (r == 0 && g->over)
                r = -E2BIG;
        if (r < 0) {
                out->len = was;
                if (out->data)
                        out->data[was] = '\0';
        }
        return r;
}

/* ---- the bundle --------------------------------------------------------------- */

static int member_entry(json_object *a, const char *name, size_t bytes, bool cut) {
        json_object *o = json_object_new_object();
        if (!o || json_object_array_add(a, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        if (jadd(o, "name", json_object_new_string(name)) < 0 ||
            jadd(o, "bytes", json_object_new_int64((int64_t) bytes)) < 0 ||
            jadd(o, "cut", json_object_new_boolean(cut)) < 0)
                return -ENOMEM;
        return 0;
}

/* [{"name", "bytes", "cut"}] of the logs, then info.json's when info_bytes
 * is not 0; NULL when out of memory. */
static json_object *members_json(const struct member *m, size_t info_bytes) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < M_LOGS; i++)
                if (member_entry(a, m[i].name, m[i].bytes, m[i].cut) < 0)
                        return NULL;
        if (info_bytes && member_entry(a, "info.json", info_bytes, false) < 0)
                return NULL;
        return TAKE_PTR(a);
}

struct bundle_meta {
        const char *created_at, *host_id, *agent_version;
        int64_t mtime;
};

/* Add one member to the stream, its data streamed from its pieces (no
 * copy of a big log), and count its compressed share. */
static int gz_member(struct gz *g, const char *name, int64_t mtime, const struct pieces *pc, uint64_t *share) {
        static const char zeros[TAR_BLOCK];
        char h[TAR_BLOCK];
        uint64_t before = g->total, len = 0;
        for (size_t i = 0; i < 3; i++)
                len += pc->n[i];
        int r = tar_header(h, name, MEMBER_MODE, mtime, len);
        if (r == 0)
                r = gz_feed(g, h, sizeof h, Z_NO_FLUSH);
        for (size_t i = 0; r == 0 && i < 3; i++)
                if (pc->n[i])
                        r = gz_feed(g, pc->p[i], pc->n[i], Z_NO_FLUSH);
        if (r == 0)
                r = gz_feed(g, zeros, (TAR_BLOCK - len % TAR_BLOCK) % TAR_BLOCK, Z_SYNC_FLUSH);
        if (share)
                *share = g->total - before;
        return r;
}

/* One build: the four members, compressed into out (emptied first) while
 * it fits max; *total is the compressed size either way, *info_bytes the
 * size of info.json. */
static int build(struct member *m, const struct bundle_meta *meta, struct growbuf *out, size_t max,
                 uint64_t *total, size_t *info_bytes) {
        _cleanup_free_ struct gz *g = malloc(sizeof *g);
        _cleanup_json_ json_object *info = json_object_new_object();
        struct pieces pc;
        char line[64];
        int r;
        if (!g || !info)
                return -ENOMEM;
        out->len = 0;
        if ((r = gz_init(g, out, max)) < 0)
                return r;
        for (size_t i = 0; r == 0 && i < M_LOGS; i++) {
                member_pieces(&m[i], &pc, line, sizeof line);
                r = gz_member(g, m[i].name, meta->mtime, &pc, &m[i].zbytes);
        }
        if (r == 0 && (jadd(info, "created_at", json_object_new_string(meta->created_at)) < 0 ||
                       jadd_str_or_null(info, "host_id", meta->host_id) < 0 ||
                       jadd_str_or_null(info, "agent_version", meta->agent_version) < 0 ||
                       jadd(info, "members", members_json(m, 0)) < 0))
                r = -ENOMEM;
        if (r == 0) {
                const char *text = json_object_to_json_string_ext(info, JSON_C_TO_STRING_PRETTY |
                                                                         JSON_C_TO_STRING_SPACED |
                                                                         JSON_C_TO_STRING_NOSLASHESCAPE);
                _cleanup_free_ char *withnl = NULL;
                if (!text || asprintf(&withnl, "%s\n", text) < 0)
                        r = -ENOMEM;
                else {
                        *info_bytes = strlen(withnl);
                        pc = (struct pieces) { { withnl }, { *info_bytes } };
                        r = gz_member(g, "info.json", meta->mtime, &pc, NULL);
                }
        }
        if (r == 0) {
                struct growbuf t = { 0 };
                if ((r = tar_end(&t, SIZE_MAX - 1)) == 0)
                        r = gz_feed(g, t.data, t.len, Z_FINISH);
                free(t.data);
        }
        deflateEnd(&g->z);
        *total = g->total;
        return r;
}

/* The next log to lose lines: the journal, then the kernel's, then the
 * agent's; NULL when each shows nothing more to cut. */
static struct member *next_to_cut(struct member *m) {
        static const int order[] = { M_JOURNAL, M_KERNEL, M_AGENT };
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
                if (m[order[i]].shown > 0)
                        return &m[order[i]];
        return NULL;
}

static void members_free(struct member *m) {
        for (size_t i = 0; i < M_LOGS; i++) {
                free(m[i].head.data);
                free(m[i].body.data);
        }
}

int logs_bundle_build(const struct logs_sources *src, const char *host_id, const char *agent_version,
                      size_t max_bytes, void **out, size_t *outlen, json_object **summary, char *err,
                      size_t errlen) {
        const struct logs_sources dflt = LOGS_SOURCES_DEFAULT;
        struct member m[M_LOGS] = {
                [M_AGENT] = { .name = "agent.log" },
                [M_JOURNAL] = { .name = "journal.log" },
                [M_KERNEL] = { .name = "kernel.log" },
        };
        struct growbuf bundle = { 0 };
        _cleanup_json_ json_object *sum = NULL; /* before the first goto */
        int r;

        if (err && errlen)
                err[0] = '\0';
        if (!out || !outlen || !summary)
                return errmsg(err, errlen, -EINVAL, "no place for the bundle");
        *out = NULL;
        *outlen = 0;
        *summary = NULL;
        if (max_bytes < LOGS_BUNDLE_MIN)
                return errmsg(err, errlen, -EINVAL, "the bundle's limit must be at least %u bytes, not %zu",
                              LOGS_BUNDLE_MIN, max_bytes);
        if (!src)
                src = &dflt;
        for (size_t i = 0; i < M_LOGS; i++)
                m[i].body.max = LOGS_SOURCE_MAX;

        if ((r = read_agent_log(&m[M_AGENT])) < 0 || (r = read_journal(src, &m[M_JOURNAL])) < 0 ||
            (r = read_kernel(src, &m[M_KERNEL])) < 0) {
                members_free(m);
                return errmsg(err, errlen, r, "reading the logs: %m");
        }
        for (size_t i = 0; i < M_LOGS; i++)
                m[i].keep = m[i].body.len;

        time_t now = time(NULL);
        struct tm tm;
        char created[32] = "1970-01-01T00:00:00Z";
        if (gmtime_r(&now, &tm))
                strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
        struct bundle_meta meta = { created, host_id, agent_version, now > 0 ? (int64_t) now : 0 };

        uint64_t total = 0;
        size_t info_bytes = 0;
        for (int attempt = 0;; attempt++) {
                if ((r = build(m, &meta, &bundle, max_bytes, &total, &info_bytes)) < 0) {
                        errmsg(err, errlen, r, "building the bundle: %m");
                        goto error;
                }
                if (total <= max_bytes)
                        break;
                struct member *c = next_to_cut(m);
                if (!c || attempt + 1 >= MAX_BUILDS) {
                        r = errmsg(err, errlen, -E2BIG, "the bundle is %llu bytes compressed with %s, more than %zu",
                                   (unsigned long long) total, c ? "its logs cut" : "every log cut", max_bytes);
                        goto error;
                }
                /* The others' share stays; this log gets what is left, less a
                 * margin that doubles on each try, at its compression ratio. */
                uint64_t others = total - c->zbytes;
                uint64_t margin = (uint64_t) (max_bytes / 64 + 1024) << (attempt < 16 ? attempt : 16);
                size_t keep = 0;
                if (others + margin < max_bytes) {
                        double ratio = c->zbytes ? (double) c->shown / (double) c->zbytes : 1.0;
                        double k = (double) (max_bytes - others - margin) * ratio;
                        keep = k < (double) c->shown ? (size_t) k : c->shown;
                }
                if (keep >= c->shown) /* the estimate was off: an eighth at least */
                        keep = c->shown - c->shown / 8 - 1;
                c->keep = keep;
        }

        if (!(sum = json_object_new_object()) || jadd(sum, "bytes", json_object_new_int64((int64_t) total)) < 0 ||
            jadd(sum, "members", members_json(m, info_bytes)) < 0) {
                r = errmsg(err, errlen, -ENOMEM, "building the summary: %m");
                goto error;
        }
        members_free(m);
        *out = TAKE_PTR(bundle.data);
        *outlen = bundle.len;
        *summary = TAKE_PTR(sum);
        return 0;

error:
        members_free(m);
        free(bundle.data);
        return r;
}
