/* A pool of a driver's connections (sqldb.h). */
#include "store/sql/sqldb.h"

void db_pool_init(struct db_pool *p, struct dbconn **conns, size_t n) {
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->freed, NULL);
        p->conns = conns;
        p->n = n;
}

void db_pool_destroy(struct db_pool *p) {
        pthread_cond_destroy(&p->freed);
        pthread_mutex_destroy(&p->lock);
}

struct dbconn *db_pool_take(struct db_pool *p) {
        pthread_mutex_lock(&p->lock);
        for (;;) {
                for (size_t i = 0; i < p->n; i++)
                        if (!p->conns[i]->in_use) {
                                p->conns[i]->in_use = true;
                                pthread_mutex_unlock(&p->lock);
                                return p->conns[i];
                        }
                pthread_cond_wait(&p->freed, &p->lock);
        }
}

void db_pool_give(struct db_pool *p, struct dbconn *c) {
        pthread_mutex_lock(&p->lock);
        c->in_use = false;
        pthread_cond_signal(&p->freed);
        pthread_mutex_unlock(&p->lock);
}
