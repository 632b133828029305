/* The store's schema, written once for both databases (schema.c): every
 * migration, with tokens (@NAME@) where SQLite's words and PostgreSQL's
 * differ, and parts for one database alone. Each driver gives its dialect
 * (the words of each token) and runs the migrations its database lacks.
 * Only the drivers include this header. */
#pragma once

/* The tokens: @INT@ in the text is the words of SCHEMA_INT, and so on. */
enum schema_token {
        SCHEMA_INT,     /* @INT@: a 64-bit integer column */
        SCHEMA_BLOB,    /* @BLOB@: a column of bytes */
        SCHEMA_AUTO_ID, /* @AUTO_ID@: an integer primary key the database numbers, never reusing one */
        SCHEMA_ROWID,   /* @ROWID@: SQLite's implicit rowid as a column (comma included) where
                         * a database has none, nothing where it has */
        SCHEMA_N_TOKENS
};

/* The databases, for the parts written for one of them alone. */
enum schema_db {
        SCHEMA_SQLITE = 1,
        SCHEMA_PG = 2,
};

/* A driver's dialect: its database and the words of each token. */
struct schema_dialect {
        enum schema_db db;
        const char *tokens[SCHEMA_N_TOKENS];
};

/* The table of the schema's version (one row), made before migration 1;
 * the same words in both databases. */
extern const char schema_version_table[];

/* Migration `to` (1..STORE_SCHEMA_VERSION) in dialect d: the statements
 * that take a database from version to - 1 to `to`, its parts for d and
 * the tokens rewritten. Malloc'd; NULL with errno EINVAL for no such
 * migration, a token the schema does not know or d lacks, ENOMEM out of
 * memory. */
char *schema_migration(int to, const struct schema_dialect *d);
