/* The SQLite driver of the store (sqldb.h; the operations over it are
 * store/sql/'s resource files): one database file in WAL mode, a
 * small pool of connections with their prepared statements; the schema's
 * migrations (store/sql/schema.c) in SQLite's words. */
#include "store/store.h"
#include "store/sql/sqldb.h"
#include "store/sql/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "json-cleanup.h"

static void sqlite_store_close(struct store *base);

/* Threading: a pool of POOL_SIZE connections (db_pool). A call takes one
 * for its duration, so reads run side by side (WAL readers do not block each
 * other or the writer). Writes go through the group commit (store/sql/
 * group.c): writers queue in order on its lock rather than poll in SQLite's
 * busy handler; busy_timeout is then only for other processes on the same
 * file. */
#define POOL_SIZE 16
#define BUSY_TIMEOUT_MS 10000
#define STMT_BUCKETS 64
#define STMT_CACHE_MAX 256 /* statements per connection before the cache is flushed */

/* ---- schema ------------------------------------------------------------ */

/* SQLite's words for the schema's tokens (store/sql/schema.c). */
static const struct schema_dialect sqlite_dialect = {
        .db = SCHEMA_SQLITE,
        .tokens = {
                [SCHEMA_INT] = "INTEGER",
                [SCHEMA_BLOB] = "BLOB",
                [SCHEMA_AUTO_ID] = "INTEGER PRIMARY KEY AUTOINCREMENT",
                [SCHEMA_ROWID] = "",
        },
};
#define SCHEMA_VERSION STORE_SCHEMA_VERSION

/* ---- connections and statements ---------------------------------------- */

struct stmt_entry {
        struct dbstmt base;
        struct stmt_entry *next;
        char *sql;
        sqlite3_stmt *st;
};

struct conn {
        struct dbconn base;
        sqlite3 *db;
        struct stmt_entry *cache[STMT_BUCKETS];
        unsigned n_cached;
};

struct sqlite_store {
        struct store base;
        char *path;                 /* the database file (for statvfs) */
        struct db_pool pool;        /* of conns */
        struct dbconn *pooled[POOL_SIZE];
        struct conn conns[POOL_SIZE];
        int version;
};

static const struct db_driver sqlite_driver;

static struct sqlite_store *sq(struct store *s) {
        return (struct sqlite_store *) s;
}

static int sql_err(int rc) {
        switch (rc) {
        case SQLITE_OK:
        case SQLITE_ROW:
        case SQLITE_DONE:
                return 0;
        case SQLITE_CONSTRAINT_UNIQUE:
        case SQLITE_CONSTRAINT_PRIMARYKEY:
                return -EEXIST;
        case SQLITE_CONSTRAINT_FOREIGNKEY:
                return -EBUSY;
        }
        switch (rc & 0xff) {
        case SQLITE_CONSTRAINT: return -EINVAL; /* NOT NULL, CHECK */
        case SQLITE_BUSY:
        case SQLITE_LOCKED: return -EAGAIN;
        case SQLITE_NOMEM: return -ENOMEM;
        case SQLITE_FULL: return -ENOSPC;
        case SQLITE_TOOBIG: return -E2BIG;
        case SQLITE_READONLY:
        case SQLITE_PERM:
        case SQLITE_AUTH: return -EACCES;
        default: return -EIO;
        }
}

static void cache_flush(struct conn *c) {
        for (size_t b = 0; b < STMT_BUCKETS; b++) {
                struct stmt_entry *e = c->cache[b];
                while (e) {
                        struct stmt_entry *next = e->next;
                        sqlite3_finalize(e->st);
                        free(e->sql);
                        free(e);
                        e = next;
                }
                c->cache[b] = NULL;
        }
        c->n_cached = 0;
}

/* The connection's prepared statement for `sql` (prepared on first use). */
static int stmt_get(struct conn *c, const char *sql, struct stmt_entry **out) {
        size_t b = sql_hash(sql, STMT_BUCKETS);
        for (struct stmt_entry *e = c->cache[b]; e; e = e->next)
                if (strcmp(e->sql, sql) == 0) {
                        *out = e;
                        return 0;
                }
        struct stmt_entry *e = calloc(1, sizeof *e);
        if (!e || !(e->sql = strdup(sql))) {
                free(e);
                return -ENOMEM;
        }
        int rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &e->st, NULL);
        if (rc != SQLITE_OK) {
                free(e->sql);
                free(e);
                return sql_err(sqlite3_extended_errcode(c->db));
        }
        e->base.drv = &sqlite_driver;
        e->next = c->cache[b];
        c->cache[b] = e;
        c->n_cached++;
        *out = e;
        return 0;
}

static int stmt(struct conn *c, const char *sql, sqlite3_stmt **out) {
        struct stmt_entry *e;
        int r = stmt_get(c, sql, &e);
        if (r >= 0)
                *out = e->st;
        return r;
}

/* Statements are cached, so a scope ends by resetting, not finalizing. */
static inline void stmt_resetp(sqlite3_stmt **st) {
        if (*st) {
                sqlite3_reset(*st);
                sqlite3_clear_bindings(*st);
        }
}
#define _cleanup_reset_ _cleanup_(stmt_resetp)

static int exec(struct conn *c, const char *sql) {
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int r = stmt(c, sql, &st);
        if (r < 0)
                return r;
        int rc = sqlite3_step(st);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : sql_err(sqlite3_extended_errcode(c->db));
}

/* One row expected: 1 for a row, 0 for none, or an error. */
static int step_row(struct conn *c, sqlite3_stmt *st) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                return 1;
        if (rc == SQLITE_DONE)
                return 0;
        return sql_err(sqlite3_extended_errcode(c->db));
}

static struct conn *conn_get(struct store *base) {
        struct conn *c = (struct conn *) db_pool_take(&sq(base)->pool);
        if (c->n_cached > STMT_CACHE_MAX)
                cache_flush(c);
        return c;
}

static void conn_put(struct store *base, struct conn *c) {
        db_pool_give(&sq(base)->pool, &c->base);
}

static int sqlite_free_space(struct store *s, int64_t *bytes) {
        struct statvfs v;
        if (statvfs(sq(s)->path, &v) < 0)
                return -errno;
        uint64_t b = (uint64_t) v.f_bavail * (uint64_t) v.f_frsize;
        *bytes = b > INT64_MAX ? INT64_MAX : (int64_t) b;
        return 0;
}

static int conn_open(const char *path, struct conn *c) {
        /* A new database is the owner's alone (it holds pull secrets and
         * token records); SQLite gives its -wal and -shm files the same
         * mode. */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
                close(fd);
        c->base.drv = &sqlite_driver;
        int rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                 SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
        if (rc != SQLITE_OK)
                return rc == SQLITE_NOMEM ? -ENOMEM : sql_err(rc);
        sqlite3_extended_result_codes(c->db, 1);
        sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS);
        /* Keep the -wal and -shm files when the last connection closes: a
         * restart on a full file system can then read (a new -shm needs
         * space SQLite could not get). */
        int persist = 1;
        (void) sqlite3_file_control(c->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
        rc = sqlite3_exec(c->db,
                          "PRAGMA foreign_keys = ON;"
                          "PRAGMA synchronous = FULL;"
                          "PRAGMA trusted_schema = OFF;",
                          NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                return sql_err(sqlite3_extended_errcode(c->db));
        return 0;
}

static int journal_wal(struct conn *c) {
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int r = stmt(c, "PRAGMA journal_mode = WAL", &st);
        if (r < 0)
                return r;
        r = step_row(c, st);
        if (r < 0)
                return r;
        const unsigned char *mode = r ? sqlite3_column_text(st, 0) : NULL;
        return mode && strcmp((const char *) mode, "wal") == 0 ? 0 : -EOPNOTSUPP;
}

static int read_version(struct conn *c, int *v) {
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int r = stmt(c, "SELECT version FROM schema_version", &st);
        if (r < 0)
                return r;
        r = step_row(c, st);
        if (r < 0)
                return r;
        *v = r ? sqlite3_column_int(st, 0) : 0;
        return 0;
}

/* Each migration in its own transaction; BEGIN IMMEDIATE and reading the
 * version inside it let two processes open a fresh file at once. */
static int migrate(struct conn *c, int *version) {
        int r = exec(c, schema_version_table);
        if (r < 0)
                return r;
        for (;;) {
                int v = 0;
                if ((r = exec(c, "BEGIN IMMEDIATE")) < 0)
                        return r;
                r = read_version(c, &v);
                if (r >= 0 && v > SCHEMA_VERSION)
                        r = -EPROTO;
                if (r >= 0 && v == SCHEMA_VERSION) {
                        *version = v;
                        return exec(c, "COMMIT");
                }
                char *sql = r >= 0 ? schema_migration(v + 1, &sqlite_dialect) : NULL;
                if (r >= 0 && !sql)
                        r = -errno;
                if (r >= 0 && sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
                        r = sql_err(sqlite3_extended_errcode(c->db));
                free(sql);
                if (r >= 0)
                        r = exec(c, v == 0 ? "INSERT INTO schema_version (version) VALUES (1)"
                                           : "UPDATE schema_version SET version = version + 1");
                if (r >= 0)
                        r = exec(c, "COMMIT");
                if (r < 0) {
                        if (!sqlite3_get_autocommit(c->db))
                                (void) exec(c, "ROLLBACK");
                        return r;
                }
        }
}

/* "sqlite://PATH", "sqlite:PATH" or a plain PATH (store.c sent other
 * schemes elsewhere). */
static const char *url_path(const char *url) {
        if (strncmp(url, "sqlite://", 9) == 0)
                return url + 9;
        if (strncmp(url, "sqlite:", 7) == 0)
                return url + 7;
        return url;
}

int sqlite_store_open(const char *url, struct store **out) {
        const char *path = url_path(url);
        if (!*path || strcmp(path, ":memory:") == 0)
                return -EINVAL; /* a pool needs one shared file */
        if (!sqlite3_threadsafe())
                return -EOPNOTSUPP;

        /* Pull secrets live here: create the file private. SQLite gives the
         * -wal and -shm files the same mode. */
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return -errno;
        close(fd);

        struct sqlite_store *s = calloc(1, sizeof *s);
        if (!s || !(s->path = strdup(path))) {
                free(s);
                return -ENOMEM;
        }
        s->base.drv = &sqlite_driver;
        db_writer_init(&s->base.writer);
        for (int i = 0; i < POOL_SIZE; i++)
                s->pooled[i] = &s->conns[i].base;
        db_pool_init(&s->pool, s->pooled, POOL_SIZE);

        int r = 0;
        for (int i = 0; i < POOL_SIZE && r >= 0; i++)
                r = conn_open(path, &s->conns[i]);
        if (r >= 0)
                r = journal_wal(&s->conns[0]);
        if (r >= 0)
                r = migrate(&s->conns[0], &s->version);
        if (r < 0) {
                sqlite_store_close(&s->base);
                return r;
        }
        *out = &s->base;
        return 0;
}

static void sqlite_store_close(struct store *base) {
        struct sqlite_store *s = sq(base);
        for (int i = 0; i < POOL_SIZE; i++) {
                cache_flush(&s->conns[i]);
                if (s->conns[i].db)
                        sqlite3_close(s->conns[i].db);
        }
        db_pool_destroy(&s->pool);
        db_writer_destroy(&s->base.writer);
        free(s->path);
        free(s);
}

static int sqlite_schema_version(struct store *s) {
        return sq(s)->version;
}

/* AUTOINCREMENT goes on past the largest id inserted by itself. */
static int sqlite_ids_copied(struct dbconn *c, const char *table, const char *column) {
        (void) c;
        (void) table;
        (void) column;
        return 0;
}

/* One process per file: it leads. */
static int sqlite_leader(struct store *s) {
        (void) s;
        return 1;
}

/* ---- the driver's table (sqldb.h) ---------------------------------------- */

static struct stmt_entry *ent(struct dbstmt *st) {
        return (struct stmt_entry *) st;
}

static int d_prepare(struct dbconn *c, const char *sql, struct dbstmt **out) {
        struct stmt_entry *e;
        int r = stmt_get((struct conn *) c, sql, &e);
        if (r >= 0)
                *out = &e->base;
        return r;
}

static void d_reset(struct dbstmt *st) {
        sqlite3_reset(ent(st)->st);
        sqlite3_clear_bindings(ent(st)->st);
}

static int d_step(struct dbstmt *st) {
        int rc = sqlite3_step(ent(st)->st);
        if (rc == SQLITE_ROW)
                return 1;
        if (rc == SQLITE_DONE)
                return 0;
        return sql_err(sqlite3_extended_errcode(sqlite3_db_handle(ent(st)->st)));
}

static int64_t d_changes(struct dbconn *c) {
        return sqlite3_changes64(((struct conn *) c)->db);
}

static bool d_in_transaction(struct dbconn *c) {
        return !sqlite3_get_autocommit(((struct conn *) c)->db);
}

static int d_bind_text(struct dbstmt *st, int i, const char *v, size_t len) {
        int rc = v ? sqlite3_bind_text64(ent(st)->st, i, v, len, SQLITE_TRANSIENT, SQLITE_UTF8)
                   : sqlite3_bind_null(ent(st)->st, i);
        return rc == SQLITE_OK ? 0 : sql_err(rc);
}

static int d_bind_int64(struct dbstmt *st, int i, int64_t v) {
        int rc = sqlite3_bind_int64(ent(st)->st, i, v);
        return rc == SQLITE_OK ? 0 : sql_err(rc);
}

static int d_bind_null(struct dbstmt *st, int i) {
        int rc = sqlite3_bind_null(ent(st)->st, i);
        return rc == SQLITE_OK ? 0 : sql_err(rc);
}

static int d_bind_blob(struct dbstmt *st, int i, const void *v, size_t len) {
        int rc = sqlite3_bind_blob64(ent(st)->st, i, v, len, SQLITE_TRANSIENT);
        return rc == SQLITE_OK ? 0 : sql_err(rc);
}

static bool d_col_null(struct dbstmt *st, int i) {
        return sqlite3_column_type(ent(st)->st, i) == SQLITE_NULL;
}

static const unsigned char *d_col_text(struct dbstmt *st, int i) {
        return sqlite3_column_text(ent(st)->st, i);
}

static int64_t d_col_int64(struct dbstmt *st, int i) {
        return sqlite3_column_int64(ent(st)->st, i);
}

static size_t d_col_bytes(struct dbstmt *st, int i) {
        return (size_t) sqlite3_column_bytes(ent(st)->st, i);
}

static const void *d_col_blob(struct dbstmt *st, int i) {
        return sqlite3_column_blob(ent(st)->st, i);
}

static struct dbconn *d_conn_get(struct store *s) {
        return &conn_get(s)->base;
}

static void d_conn_put(struct store *s, struct dbconn *c) {
        conn_put(s, (struct conn *) c);
}

/* The writer's transaction: the database's write lock at once, so that the
 * group's savepoints never wait for another process's. */
static int d_begin_write(struct dbconn *c) {
        return exec((struct conn *) c, "BEGIN IMMEDIATE");
}

static const struct db_driver sqlite_driver = {
        .close = sqlite_store_close,
        .prepare = d_prepare,
        .reset = d_reset,
        .step = d_step,
        .changes = d_changes,
        .in_transaction = d_in_transaction,
        .bind_text = d_bind_text,
        .bind_int64 = d_bind_int64,
        .bind_null = d_bind_null,
        .bind_blob = d_bind_blob,
        .col_null = d_col_null,
        .col_text = d_col_text,
        .col_int64 = d_col_int64,
        .col_bytes = d_col_bytes,
        .col_blob = d_col_blob,
        .conn_get = d_conn_get,
        .conn_put = d_conn_put,
        .begin_write = d_begin_write,
        .schema_version = sqlite_schema_version,
        .free_space = sqlite_free_space,
        .leader = sqlite_leader,
        .ids_copied = sqlite_ids_copied,
};
