/* Token buckets (ratelimit.h) in the GCRA form: per key one "theoretical
 * arrival time" `tat`; a take is allowed while tat is at most
 * (burst - 1) * interval ahead of now, and moves it one interval on. That is
 * exactly a bucket of `burst` tokens refilled every interval, in one integer. */
#include "domain/ratelimit.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 1024

struct rl_entry {
        struct rl_entry *next;
        int64_t tat;
        char key[RATELIMIT_KEY_MAX + 1];
};

struct ratelimit {
        pthread_mutex_t lock;
        struct rl_entry *table[BUCKETS];
        size_t n;
};

int ratelimit_new(struct ratelimit **out) {
        struct ratelimit *rl = calloc(1, sizeof *rl);
        if (!rl)
                return -ENOMEM;
        pthread_mutex_init(&rl->lock, NULL);
        *out = rl;
        return 0;
}

void ratelimit_free(struct ratelimit *rl) {
        if (!rl)
                return;
        for (size_t b = 0; b < BUCKETS; b++)
                for (struct rl_entry *e = rl->table[b], *next; e; e = next) {
                        next = e->next;
                        free(e);
                }
        pthread_mutex_destroy(&rl->lock);
        free(rl);
}

static size_t slot(const char *key) {
        uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
        for (size_t i = 0; key[i] && i < RATELIMIT_KEY_MAX; i++)
                h = (h ^ (unsigned char) key[i]) * UINT64_C(1099511628211);
        return (size_t) (h % BUCKETS);
}

static bool same_key(const struct rl_entry *e, const char *key) {
        return strncmp(e->key, key, RATELIMIT_KEY_MAX) == 0;
}

/* Drop the entries whose bucket is full again: they say nothing a new
 * entry would not. Under the lock. */
static void sweep(struct ratelimit *rl, int64_t now_ms) {
        for (size_t b = 0; b < BUCKETS; b++)
                for (struct rl_entry **p = &rl->table[b]; *p;) {
                        if ((*p)->tat <= now_ms) {
                                struct rl_entry *e = *p;
                                *p = e->next;
                                free(e);
                                rl->n--;
                        } else
                                p = &(*p)->next;
                }
}

int64_t ratelimit_take(struct ratelimit *rl, const char *key, int64_t burst, int64_t interval_ms, int64_t now_ms) {
        if (burst < 1)
                burst = 1;
        if (interval_ms < 0)
                interval_ms = 0;
        size_t b = slot(key);
        int64_t wait = 0;
        pthread_mutex_lock(&rl->lock);
        struct rl_entry *e = rl->table[b];
        while (e && !same_key(e, key))
                e = e->next;
        if (!e) {
                if (rl->n >= RATELIMIT_SWEEP_AT)
                        sweep(rl, now_ms);
                e = calloc(1, sizeof *e);
                if (!e) {
                        pthread_mutex_unlock(&rl->lock);
                        return -ENOMEM;
                }
                strncpy(e->key, key, RATELIMIT_KEY_MAX);
                e->tat = now_ms;
                e->next = rl->table[b];
                rl->table[b] = e;
                rl->n++;
        }
        int64_t tat = e->tat > now_ms ? e->tat : now_ms;
        int64_t tolerance = (burst - 1) * interval_ms;
        if (tat - now_ms > tolerance)
                wait = tat - tolerance - now_ms;
        else
                e->tat = tat + interval_ms;
        pthread_mutex_unlock(&rl->lock);
        return wait;
}

void ratelimit_forget(struct ratelimit *rl, const char *key) {
        size_t b = slot(key);
        pthread_mutex_lock(&rl->lock);
        for (struct rl_entry **p = &rl->table[b]; *p; p = &(*p)->next)
                if (same_key(*p, key)) {
                        struct rl_entry *e = *p;
                        *p = e->next;
                        free(e);
                        rl->n--;
                        break;
                }
        pthread_mutex_unlock(&rl->lock);
}
