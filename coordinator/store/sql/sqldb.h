/* The SQL database under the store's operations (the files of store/sql/): one table
 * of a driver's calls, which the SQLite back-end (store/sqlite/) and the
 * PostgreSQL back-end (store/pg/) each provide; the only table a back-end
 * fills in. A new back-end is a folder with its driver and opener, and the
 * opener's row in store/store.c's table of URLs. The operations are
 * written once, in the SQL both databases speak:
 *   - parameters are "?" or "?N" (the PostgreSQL driver numbers them $N);
 *   - times are canonical RFC 3339 text, flags are integers 0/1;
 *   - functions SQLite has and PostgreSQL lacks (instr, json_set,
 *     json_remove, json_type) are defined by the PostgreSQL schema.
 * Only store/sql/ and the drivers include this header. */
#pragma once
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <time.h>

#include "store/store.h"

/* The schema version the operations are written for: the migrations
 * (schema.c, one list for both drivers) end there, checked at build time. */
#define STORE_SCHEMA_VERSION 15

struct db_driver;
struct db_group_waiter;

/* The group commit's state (group.c), one per store handle. Guarded by
 * lock, but `queued`. */
struct db_writer {
        pthread_mutex_t lock;              /* one writer at a time in this process */
        atomic_uint queued;                /* writers waiting for lock */
        struct dbconn *group;              /* the open transaction's connection, or NULL */
        struct db_group_waiter *waiters;   /* its writes waiting for the commit */
        unsigned group_size;               /* writes in it */
        struct timespec group_opened;
        pthread_cond_t committed;          /* a group ended: its waiters are done */
        struct store_latency writes;       /* from asking for the lock to the answer; commits */
};

/* The head of each driver's statement, connection and store handle. */
struct dbstmt {
        const struct db_driver *drv;
};
struct dbconn {
        const struct db_driver *drv;
        bool in_use; /* taken from its pool (db_pool) */
};
/* The head of every driver's store handle: struct sqlite_store { struct
 * store base; ... }, so that a struct store * is the driver's handle too. */
struct store {
        const struct db_driver *drv;
        struct db_writer writer;
};

struct db_driver {
        /* Frees the handle its opener (store/store.c's table of URLs) made. */
        void (*close)(struct store *s);
        /* The store calls an operation again that answered -EAGAIN (a
         * transaction the database aborted and that did nothing). */
        bool retry_eagain;

        /* The connection's prepared statement for `sql`, prepared on first
         * use and kept; reset (db_reset) when a scope is done with it. */
        int (*prepare)(struct dbconn *c, const char *sql, struct dbstmt **out);
        /* Ends a statement's run and drops its bindings. */
        void (*reset)(struct dbstmt *st);
        /* 1: a row is there to read; 0: done; < 0: store.h's code. */
        int (*step)(struct dbstmt *st);
        /* Rows the last statement on c changed. */
        int64_t (*changes)(struct dbconn *c);
        /* Whether c is inside a transaction. */
        bool (*in_transaction)(struct dbconn *c);
        /* Text of len bytes (v NULL: SQL NULL); an integer; bytes. */
        int (*bind_text)(struct dbstmt *st, int i, const char *v, size_t len);
        int (*bind_int64)(struct dbstmt *st, int i, int64_t v);
        int (*bind_null)(struct dbstmt *st, int i);
        int (*bind_blob)(struct dbstmt *st, int i, const void *v, size_t len);
        /* Columns of the current row, from 0. */
        bool (*col_null)(struct dbstmt *st, int i);
        const unsigned char *(*col_text)(struct dbstmt *st, int i); /* NULL for NULL */
        int64_t (*col_int64)(struct dbstmt *st, int i);             /* 0 for NULL; true is 1 */
        size_t (*col_bytes)(struct dbstmt *st, int i);
        const void *(*col_blob)(struct dbstmt *st, int i);

        /* A connection of the pool for reads (each statement on its own). */
        struct dbconn *(*conn_get)(struct store *s);
        void (*conn_put)(struct store *s, struct dbconn *c);
        /* Opens a write transaction on c that no other writer of the
         * database runs beside (SQLite: BEGIN IMMEDIATE; PostgreSQL: BEGIN
         * and an advisory lock that every replica's writes take). */
        int (*begin_write)(struct dbconn *c);

        int (*schema_version)(struct store *s);
        int (*free_space)(struct store *s, int64_t *bytes);
        int (*leader)(struct store *s); /* store_leader */
        /* After rows were copied in with their own ids: the next id the
         * database makes for table.column is past them (PostgreSQL's
         * identity sequences; SQLite's AUTOINCREMENT follows by itself). */
        int (*ids_copied)(struct dbconn *c, const char *table, const char *column);
};

/* A driver's connections, one taken per call (waiting while all are). */
struct db_pool {
        pthread_mutex_t lock; /* guards conns[]->in_use */
        pthread_cond_t freed;
        struct dbconn **conns;
        size_t n;
};
void db_pool_init(struct db_pool *p, struct dbconn **conns, size_t n);
void db_pool_destroy(struct db_pool *p);
struct dbconn *db_pool_take(struct db_pool *p);
void db_pool_give(struct db_pool *p, struct dbconn *c);

/* The group commit (group.c). db_write_begin gives the connection of the
 * open group's transaction, in a savepoint of this write's; db_write_end
 * keeps the write if r >= 0, else undoes it alone, and returns r, or the
 * error that kept it from becoming durable, once it is durable (with
 * wait; without, once it is in the group, which the writers queued behind
 * it commit: a crash in between may lose it). */
void db_writer_init(struct db_writer *w);
void db_writer_destroy(struct db_writer *w);
int db_write_begin(struct store *s, struct dbconn **out);
int db_write_end(struct store *s, struct dbconn *c, int r, bool wait);
void db_write_latency(struct store *s, struct store_latency *out);

/* The driver of a store handle. */
static inline const struct db_driver *sql_drv(struct store *s) {
        return s->drv;
}

/* A statement of no parameters and no rows on c (cached by the driver):
 * 0, or store.h's code. */
static inline int db_exec(struct dbconn *c, const char *sql) {
        struct dbstmt *st;
        int r = c->drv->prepare(c, sql, &st);
        if (r < 0)
                return r;
        r = c->drv->step(st);
        c->drv->reset(st);
        return r < 0 ? r : 0;
}

/* A statement cache's bucket for sql, of n (FNV-1a). */
static inline size_t sql_hash(const char *sql, size_t n) {
        uint64_t h = UINT64_C(1469598103934665603);
        for (; *sql; sql++)
                h = (h ^ (unsigned char) *sql) * UINT64_C(1099511628211);
        return (size_t) (h % n);
}

/* Each driver's open (its row in store/store.c's table of URLs; url as
 * given to store_open: "NAME:..." or, for SQLite, a plain path). open fills
 * in the whole handle; its driver's close frees it. */
int sqlite_store_open(const char *url, struct store **out);
int pg_store_open(const char *url, struct store **out);

/* Count one write transaction of `seconds` into l (store_latency_bounds). */
void store_latency_add(struct store_latency *l, double seconds);
/* A host's current status against an operation's expect_mask (0: any): 0,
 * or -ESTALE, also for a status this build does not know under a mask. */
int store_status_expected(enum host_status cur, uint32_t expect_mask);
