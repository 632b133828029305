/* The texts the PostgreSQL driver rewrites before libpq sees them: the
 * operations' SQL ("?N" parameters) and the store URL (our own pool=N).
 * Pure functions, no libpq: fuzzed by tests/fuzz/fuzz_pgtext.c. */
#pragma once

#define PG_MAX_PARAMS 64    /* parameters of one statement */
#define PG_POOL_DEFAULT 16  /* connections without pool= */
#define PG_POOL_MAX 256

/* sql with its "?" and "?N" as PostgreSQL's "$N" ("?" after "?N" is N + 1,
 * as in SQLite); text in single or double quotes is left alone. *n: the
 * highest N. NULL for a parameter outside 1..PG_MAX_PARAMS, or out of
 * memory. Malloc'd. */
char *pg_sql_translate(const char *sql, int *n);
/* url less its pool=N parameters, for libpq (which refuses what it does
 * not know); *pool: the last N, or PG_POOL_DEFAULT. NULL with errno EINVAL
 * for a pool= that is not 1..PG_POOL_MAX, ENOMEM out of memory. Malloc'd. */
char *pg_url_take_pool(const char *url, int *pool);
