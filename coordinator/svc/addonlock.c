/* The add-on reconciler's lock (addonlock.h). */
#include "svc/addonlock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "domain/addon.h"

struct svc_addons {
        pthread_mutex_t lock; /* one pass, or one change of a proxy, at a time */
        struct addon_memo *memo;
};

int svc_addon_new(struct svc_addons **out) {
        struct svc_addons *a = calloc(1, sizeof *a);
        if (!a)
                return -ENOMEM;
        if (!(a->memo = addon_memo_new())) {
                free(a);
                return -ENOMEM;
        }
        pthread_mutex_init(&a->lock, NULL);
        *out = a;
        return 0;
}

void svc_addon_free(struct svc_addons *a) {
        if (!a)
                return;
        pthread_mutex_destroy(&a->lock);
        addon_memo_free(a->memo);
        free(a);
}

void svc_addon_lock(struct svc_addons *a) {
        pthread_mutex_lock(&a->lock);
}

struct addon_memo *svc_addon_memo(struct svc_addons *a) {
        return a->memo;
}

void svc_addon_unlock(struct svc_addons *a) {
        pthread_mutex_unlock(&a->lock);
}
