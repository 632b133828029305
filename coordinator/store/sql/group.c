/* The group commit of both drivers (sqldb.h, struct db_writer).
 *
 * A write is acknowledged (its operation returns) only once it is durable,
 * but writes share their commits: the first writer opens a transaction (the
 * driver's begin_write: SQLite's BEGIN IMMEDIATE, PostgreSQL's BEGIN and
 * the database-wide write lock) on a connection it keeps, each write runs in
 * a savepoint of it, and a writer that finds nobody queued behind it (or a
 * group of DB_GROUP_MAX writes, or one open for DB_GROUP_MAX_US) commits:
 * one fsync for all of them, after which each gets its own answer. While a
 * commit runs, the writers that arrive queue for the lock; they are the next
 * group. A write that fails is rolled back to its savepoint alone, answered
 * at once, and takes nothing of its group with it; only a failure that ends
 * the whole transaction (a full or failing disk, a lost connection, a failed
 * COMMIT) fails every write of the group, none of which had been answered. */
#include "store/sql/sqldb.h"

#include <errno.h>
#include <time.h>

#define DB_GROUP_MAX 256
#define DB_GROUP_MAX_US 20000

/* A write waiting for its group's commit (on the waiting thread's stack). */
struct db_group_waiter {
        struct db_group_waiter *next;
        int result;
        bool done;
};

static struct db_writer *writer(struct store *s) {
        return &s->writer;
}

void db_writer_init(struct db_writer *w) {
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->committed, NULL);
        atomic_init(&w->queued, 0);
        w->group = NULL;
        w->waiters = NULL;
        w->group_size = 0;
}

void db_writer_destroy(struct db_writer *w) {
        pthread_cond_destroy(&w->committed);
        pthread_mutex_destroy(&w->lock);
}

static int64_t since_us(const struct timespec *t0) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        return (int64_t) (t1.tv_sec - t0->tv_sec) * 1000000 + (t1.tv_nsec - t0->tv_nsec) / 1000;
}

/* Ends the open group: COMMIT, or ROLLBACK with `fail` < 0 (or when the
 * database already ended it), and answers its waiters. Called with the
 * lock held; returns the group's result. */
static int group_end(struct store *s, int fail) {
        struct db_writer *w = writer(s);
        struct dbconn *c = w->group;
        int r = fail;
        if (r >= 0 && (r = db_exec(c, "COMMIT")) >= 0)
                w->writes.commits++;
        if (c->drv->in_transaction(c))
                (void) db_exec(c, "ROLLBACK");
        for (struct db_group_waiter *g = w->waiters; g; g = g->next) {
                if (r < 0)
                        g->result = r;
                g->done = true;
        }
        w->waiters = NULL;
        w->group = NULL;
        w->group_size = 0;
        sql_drv(s)->conn_put(s, c);
        pthread_cond_broadcast(&w->committed);
        return r;
}

/* When this thread's write asked for the writer lock (for the latency). */
static _Thread_local struct timespec write_asked;

int db_write_begin(struct store *s, struct dbconn **out) {
        struct db_writer *w = writer(s);
        int64_t room = INT64_MAX;
        /* Refused before it starts on a (nearly) full file system: SQLite
         * needs room for the WAL and its checkpoints, and a write that half
         * fits is worse than one refused (507 at the API). */
        if (sql_drv(s)->free_space(s, &room) == 0 && room < STORE_MIN_FREE_BYTES)
                return -ENOSPC;
        clock_gettime(CLOCK_MONOTONIC, &write_asked);
        atomic_fetch_add(&w->queued, 1);
        pthread_mutex_lock(&w->lock);
        atomic_fetch_sub(&w->queued, 1);
        int r;
        if (!w->group) {
                struct dbconn *c = sql_drv(s)->conn_get(s);
                if ((r = sql_drv(s)->begin_write(c)) < 0) {
                        if (c->drv->in_transaction(c))
                                (void) db_exec(c, "ROLLBACK");
                        sql_drv(s)->conn_put(s, c);
                        pthread_mutex_unlock(&w->lock);
                        return r;
                }
                w->group = c;
                clock_gettime(CLOCK_MONOTONIC, &w->group_opened);
        }
        if ((r = db_exec(w->group, "SAVEPOINT w")) < 0) {
                (void) group_end(s, r);
                pthread_mutex_unlock(&w->lock);
                return r;
        }
        w->group_size++;
        *out = w->group;
        return 0;
}

int db_write_end(struct store *s, struct dbconn *c, int r, bool wait) {
        struct db_writer *w = writer(s);
        int k = r >= 0 ? db_exec(c, "RELEASE w") : r;
        if (k < 0 && c->drv->in_transaction(c)) {
                (void) db_exec(c, "ROLLBACK TO w");
                (void) db_exec(c, "RELEASE w");
        }
        if (k < 0)
                r = k;
        if (!c->drv->in_transaction(c)) {
                /* The database ended the transaction (a full or failing
                 * disk, a lost connection): the group's writes are gone,
                 * and none was answered. */
                (void) group_end(s, r < 0 ? r : -EIO);
                store_latency_add(&w->writes, (double) since_us(&write_asked) / 1e6);
                pthread_mutex_unlock(&w->lock);
                return r < 0 ? r : -EIO;
        }
        struct db_group_waiter me = { .result = r };
        if (r >= 0 && wait) {
                me.next = w->waiters;
                w->waiters = &me;
        }
        if (atomic_load(&w->queued) == 0 || w->group_size >= DB_GROUP_MAX ||
            since_us(&w->group_opened) >= DB_GROUP_MAX_US) {
                int g = group_end(s, 0);
                if (!wait && r >= 0)
                        r = g;
        }
        /* A failed write was undone: nothing of it waits for the commit.
         * Unwaited, the group is left open only with a writer queued
         * behind: that writer, or one after it, commits it. */
        while (wait && r >= 0 && !me.done)
                pthread_cond_wait(&w->committed, &w->lock);
        store_latency_add(&w->writes, (double) since_us(&write_asked) / 1e6);
        pthread_mutex_unlock(&w->lock);
        return r >= 0 && wait ? me.result : r;
}

void db_write_latency(struct store *s, struct store_latency *out) {
        struct db_writer *w = writer(s);
        pthread_mutex_lock(&w->lock);
        *out = w->writes;
        pthread_mutex_unlock(&w->lock);
}
