/* The check-in buffer (checkins.h): an open-addressing table keyed by
 * (infra-env, host), swapped out whole under the lock at each flush. */
#include "checkins.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uuid.h"

struct table {
        struct store_checkin *v; /* slots; infra_env_id[0] == 0: empty */
        size_t cap;              /* power of two */
        size_t n;
};

struct checkin_buffer {
        pthread_mutex_t lock;
        struct table t;
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

static struct store_checkin *slot(struct table *t, const char *ie, const char *id) {
        for (size_t i = hash(ie, id) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
                struct store_checkin *e = &t->v[i];
                if (!e->infra_env_id[0] || (strcmp(e->infra_env_id, ie) == 0 && strcmp(e->host_id, id) == 0))
                        return e;
        }
}

static int grow(struct table *t) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        struct table nt = { .v = calloc(cap, sizeof *nt.v), .cap = cap };
        if (!nt.v)
                return -ENOMEM;
        for (size_t i = 0; i < t->cap; i++)
                if (t->v[i].infra_env_id[0]) {
                        *slot(&nt, t->v[i].infra_env_id, t->v[i].host_id) = t->v[i];
                        nt.n++;
                }
        free(t->v);
        *t = nt;
        return 0;
}

int checkins_note(struct checkin_buffer *b, const char *infra_env_id, const char *host_id, const char *at) {
        if (!uuid_is_valid(infra_env_id) || !uuid_is_valid(host_id) || !at || strlen(at) >= MODEL_TIME_LEN)
                return -EINVAL;
        int r = 0;
        pthread_mutex_lock(&b->lock);
        if ((b->t.n + 1) * 2 > b->t.cap) {
                if (b->t.n >= CHECKINS_MAX)
                        r = -E2BIG;
                else
                        r = grow(&b->t);
        }
        if (r == 0) {
                struct store_checkin *e = slot(&b->t, infra_env_id, host_id);
                if (!e->infra_env_id[0]) {
                        strcpy(e->infra_env_id, infra_env_id);
                        strcpy(e->host_id, host_id);
                        b->t.n++;
                }
                if (strcmp(at, e->at) > 0)
                        strcpy(e->at, at);
        }
        pthread_mutex_unlock(&b->lock);
        return r;
}

int checkins_flush(struct checkin_buffer *b, struct store *s) {
        pthread_mutex_lock(&b->lock);
        struct table t = b->t;
        b->t = (struct table) { 0 };
        pthread_mutex_unlock(&b->lock);
        if (t.n == 0) {
                free(t.v);
                return 0;
        }
        /* Pack the used slots to the front for the store. */
        size_t n = 0;
        for (size_t i = 0; i < t.cap; i++)
                if (t.v[i].infra_env_id[0])
                        t.v[n++] = t.v[i];
        int r = store_host_checkin_many(s, t.v, n);
        if (r < 0) {
                /* Put them back (newer notes win). */
                for (size_t i = 0; i < n; i++)
                        (void) checkins_note(b, t.v[i].infra_env_id, t.v[i].host_id, t.v[i].at);
        }
        free(t.v);
        return r < 0 ? r : (int) n;
}
