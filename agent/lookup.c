/* getaddrinfo() bounded by a deadline (lookup.h). */
#include "lookup.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netutil.h"

/* getaddrinfo cannot be interrupted, so each lookup runs on a detached
 * thread. The caller waits until a deadline and leaves; the batch is
 * reference counted so a late thread finds it, and frees it if it is last. */

struct gai_batch;
struct gai_job {
        struct gai_batch *batch;
        char *node;
        int family, socktype;
        bool done;
        int rc, sys_errno;
        struct addrinfo *res;
};

struct gai_batch {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        unsigned refs;
        size_t pending;
        size_t n;
        struct gai_job jobs[];
};

static void gai_batch_free(struct gai_batch *b) {
        for (size_t i = 0; i < b->n; i++) {
                if (b->jobs[i].res)
                        freeaddrinfo(b->jobs[i].res);
                free(b->jobs[i].node);
        }
        pthread_cond_destroy(&b->cond);
        pthread_mutex_destroy(&b->lock);
        free(b);
}

/* Drop one reference; called with the lock held, returns with it released. */
static void gai_batch_unref_unlock(struct gai_batch *b) {
        bool last = --b->refs == 0;
        pthread_mutex_unlock(&b->lock);
        if (last)
                gai_batch_free(b);
}

static void *gai_thread(void *arg) {
        struct gai_job *j = arg;
        struct gai_batch *b = j->batch;
        struct addrinfo hints = { .ai_family = j->family, .ai_socktype = j->socktype };
        struct addrinfo *res = NULL;
        int rc = getaddrinfo(j->node, NULL, &hints, &res);
        int e = errno;

        pthread_mutex_lock(&b->lock);
        j->rc = rc;
        j->sys_errno = e;
        j->res = rc == 0 ? res : NULL;
        j->done = true;
        b->pending--;
        pthread_cond_broadcast(&b->cond);
        gai_batch_unref_unlock(b);
        return NULL;
}

int lookup_all(const char *const *nodes, size_t n, int family, int socktype, int64_t timeout_ms,
               struct lookup *out) {
        struct gai_batch *b;
        pthread_condattr_t ca;
        pthread_attr_t ta;
        struct timespec deadline;

        memset(out, 0, n * sizeof *out);
        if (n == 0)
                return 0;
        b = calloc(1, sizeof *b + n * sizeof b->jobs[0]);
        if (!b)
                return -ENOMEM;
        b->n = n;
        for (size_t i = 0; i < n; i++) {
                b->jobs[i] = (struct gai_job) { .batch = b, .node = strdup(nodes[i]), .family = family,
                                                .socktype = socktype };
                if (!b->jobs[i].node) {
                        for (size_t k = 0; k < i; k++)
                                free(b->jobs[k].node);
                        free(b);
                        return -ENOMEM;
                }
        }
        pthread_mutex_init(&b->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&b->cond, &ca);
        pthread_condattr_destroy(&ca);
        pthread_attr_init(&ta);
        pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (timeout_ms % 1000) * NS_PER_MS;
        if (deadline.tv_nsec >= NS_PER_SEC) {
                deadline.tv_sec++;
                deadline.tv_nsec -= NS_PER_SEC;
        }

        pthread_mutex_lock(&b->lock);
        b->refs = 1;
        b->pending = n;
        for (size_t i = 0; i < n; i++) {
                pthread_t t;
                b->refs++;
                int r = pthread_create(&t, &ta, gai_thread, &b->jobs[i]);
                if (r != 0) {
                        b->refs--;
                        b->jobs[i].done = true;
                        b->jobs[i].rc = EAI_SYSTEM;
                        b->jobs[i].sys_errno = r;
                        b->pending--;
                }
        }
        pthread_attr_destroy(&ta);
        while (b->pending > 0)
                if (pthread_cond_timedwait(&b->cond, &b->lock, &deadline) == ETIMEDOUT)
                        break;
        for (size_t i = 0; i < n; i++) {
                struct gai_job *j = &b->jobs[i];
                if (j->done) {
                        out[i] = (struct lookup) { .rc = j->rc, .sys_errno = j->sys_errno, .res = j->res };
                        j->res = NULL;
                } else {
                        out[i] = (struct lookup) { .rc = EAI_AGAIN, .timed_out = true };
                }
        }
        gai_batch_unref_unlock(b);
        return 0;
}

const char *lookup_error(const struct lookup *l, char *buf, size_t n) {
        if (l->timed_out)
                return "timed out";
        if (l->rc == EAI_SYSTEM) {
                snprintf(buf, n, "%s", strerror(l->sys_errno));
                return buf;
        }
        if (l->rc == 0 && !l->res)
                return "no address";
        return l->rc ? gai_strerror(l->rc) : NULL;
}
