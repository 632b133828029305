/* The check-in buffer (checkins.h): an open-addressing table keyed by
 * (infra-env, host) that lives as long as musterd. Each entry holds the
 * host's poll count and, when it polled since the last flush, the time to
 * write; a flush copies those out under the lock and writes them outside it. */
#include "svc/checkins.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "uuid.h"
#include "store/store.h"

struct entry {
        struct store_checkin c; /* c.infra_env_id[0] == 0: empty slot */
        uint64_t polls;
        uint64_t seen;          /* the flush generation of its last poll */
        uint64_t written;       /* 1 + the flush generation of its last write; 0: never */
        bool dirty;             /* c.at not written yet */
};

struct table {
        struct entry *v;
        size_t cap; /* power of two */
        size_t n;
};

struct checkin_buffer {
        pthread_mutex_t lock;
        struct table t;
        uint64_t gen; /* flushes so far */
};

int checkins_new(struct checkin_buffer **out) {
        struct checkin_buffer *b = calloc(1, sizeof *b);
        if (!b)
                return -ENOMEM;
        pthread_mutex_init(&b->lock, NULL);
        *out = b;
        return 0;
}

void checkins_free(struct checkin_buffer *b) {
        if (!b)
                return;
        free(b->t.v);
        pthread_mutex_destroy(&b->lock);
        free(b);
}

static size_t hash(const char *ie, const char *id) {
        uint64_t h = 1469598103934665603u; /* FNV-1a */
        for (const char *p = ie; *p; p++)
                h = (h ^ (uint8_t) *p) * 1099511628211u;
        for (const char *p = id; *p; p++)
                h = (h ^ (uint8_t) *p) * 1099511628211u;
        return (size_t) h;
}

static struct entry *slot(struct table *t, const char *ie, const char *id) {
        for (size_t i = hash(ie, id) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
                struct entry *e = &t->v[i];
                if (!e->c.infra_env_id[0] ||
                    (strcmp(e->c.infra_env_id, ie) == 0 && strcmp(e->c.host_id, id) == 0))
                        return e;
        }
}

/* A table of `cap` slots holding t's entries seen at or after `since`. */
static int rebuild(struct table *t, size_t cap, uint64_t since) {
        struct table nt = { .v = calloc(cap, sizeof *nt.v), .cap = cap };
        if (!nt.v)
                return -ENOMEM;
        for (size_t i = 0; i < t->cap; i++)
                if (t->v[i].c.infra_env_id[0] && (t->v[i].dirty || t->v[i].seen >= since)) {
                        *slot(&nt, t->v[i].c.infra_env_id, t->v[i].c.host_id) = t->v[i];
                        nt.n++;
                }
        free(t->v);
        *t = nt;
        return 0;
}

/* The entry of (ie, id), made when missing; NULL with *r set on failure. */
static struct entry *find_or_add(struct checkin_buffer *b, const char *ie, const char *id, int *r) {
        *r = 0;
        if ((b->t.n + 1) * 2 > b->t.cap) {
                if (b->t.n >= CHECKINS_MAX)
                        *r = -E2BIG;
                else
                        *r = rebuild(&b->t, b->t.cap ? b->t.cap * 2 : 1024, 0);
                if (*r < 0) {
                        /* A full table may still hold this host. */
                        struct entry *e = b->t.cap ? slot(&b->t, ie, id) : NULL;
                        if (e && e->c.infra_env_id[0]) {
                                *r = 0;
                                return e;
                        }
                        return NULL;
                }
        }
        struct entry *e = slot(&b->t, ie, id);
        if (!e->c.infra_env_id[0]) {
                strcpy(e->c.infra_env_id, ie);
                strcpy(e->c.host_id, id);
                b->t.n++;
        }
        return e;
}

static void note_time(struct entry *e, const char *at) {
        if (!e->dirty || strcmp(at, e->c.at) > 0)
                strcpy(e->c.at, at);
        e->dirty = true;
}

int checkins_note(struct checkin_buffer *b, const char *infra_env_id, const char *host_id, const char *at,
                  uint64_t *polls) {
        if (!uuid_is_valid(infra_env_id) || !uuid_is_valid(host_id) || !at || strlen(at) >= MODEL_TIME_LEN)
                return -EINVAL;
        int r;
        pthread_mutex_lock(&b->lock);
        struct entry *e = find_or_add(b, infra_env_id, host_id, &r);
        if (e) {
                note_time(e, at);
                e->seen = b->gen;
                e->polls++;
                if (polls)
                        *polls = e->polls;
        }
        pthread_mutex_unlock(&b->lock);
        return r;
}

/* Whether e's time goes out in this flush. */
static bool due(const struct checkin_buffer *b, const struct entry *e, bool all) {
        return e->c.infra_env_id[0] && e->dirty &&
               (all || e->written == 0 || b->gen + 1 - e->written >= CHECKINS_WRITE_EVERY);
}

int checkins_flush(struct checkin_buffer *b, struct store *s, bool all) {
        pthread_mutex_lock(&b->lock);
        size_t n = 0;
        for (size_t i = 0; i < b->t.cap; i++)
                n += due(b, &b->t.v[i], all);
        struct store_checkin *v = n ? malloc(n * sizeof *v) : NULL;
        if (n && !v) {
                pthread_mutex_unlock(&b->lock);
                return -ENOMEM;
        }
        n = 0;
        for (size_t i = 0; i < b->t.cap; i++) {
                struct entry *e = &b->t.v[i];
                if (due(b, e, all)) {
                        v[n++] = e->c;
                        e->dirty = false;
                        e->written = b->gen + 1;
                }
        }
        b->gen++;
        /* Now and then, forget the hosts that stopped polling. */
        if (b->gen % 600 == 0 && b->gen > CHECKINS_FORGET_S)
                (void) rebuild(&b->t, b->t.cap, b->gen - CHECKINS_FORGET_S);
        pthread_mutex_unlock(&b->lock);
        if (n == 0)
                return 0;
        int r = store_host_checkin_many(s, v, n);
        if (r < 0) {
                /* Keep them for the next flush (newer notes win). */
                pthread_mutex_lock(&b->lock);
                for (size_t i = 0; i < n; i++) {
                        int rr;
                        struct entry *e = find_or_add(b, v[i].infra_env_id, v[i].host_id, &rr);
                        if (e) {
                                note_time(e, v[i].at);
                                e->written = 0;
                        }
                }
                pthread_mutex_unlock(&b->lock);
        }
        free(v);
        return r < 0 ? r : (int) n;
}
