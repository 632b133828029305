/* The schema both back-ends make from the one list of migrations
 * (coordinator/store/sql/schema.c): every migration from version 1 run by
 * store_open on a new SQLite file and on a new PostgreSQL database, then
 * each database's tables, columns and indexes read back (sqlite_master and
 * pragma table_info / index_info; information_schema and pg_index) in a
 * common vocabulary and compared column by column: name, type, nullability,
 * place in the primary key, default. The comparison needs PostgreSQL
 * (MUSTER_TEST_STORE=postgres under scripts/with-pg-test-server:
 * unit/test_schema/postgres); without it the SQLite side alone is checked. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MUSTER_WITH_POSTGRES
#include <libpq-fe.h>
#endif

#include "store/store.h"
#include "testutil.h"

#define MAX_LINES 1024
#define LINE_MAX_LEN 512

/* A schema as lines, one per column ("table.column type null|not-null
 * pk=N default=D") and one per index the schema made ("index name on
 * table(columns)"), in table then column order. */
struct schema_lines {
        char line[MAX_LINES][LINE_MAX_LEN];
        int n;
};

static void add_line(struct schema_lines *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_line(struct schema_lines *s, const char *fmt, ...) {
        cr_assert_lt(s->n, MAX_LINES, "more than %d lines of schema", MAX_LINES);
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(s->line[s->n], LINE_MAX_LEN, fmt, ap);
        va_end(ap);
        cr_assert(n > 0 && n < LINE_MAX_LEN);
        s->n++;
}

/* The common vocabulary of types: SQLite's and PostgreSQL's names of each. */
static const char *sqlite_type(const char *t) {
        if (strcmp(t, "INTEGER") == 0)
                return "integer";
        if (strcmp(t, "TEXT") == 0)
                return "text";
        if (strcmp(t, "BLOB") == 0)
                return "blob";
        return NULL;
}

/* PostgreSQL's 64-bit integer is SQLite's INTEGER; its 32-bit one is only
 * schema_version's (both drivers make that table with the words INTEGER,
 * 32 bits in PostgreSQL since its first schema). */
static const char *pg_type(const char *table, const char *column, const char *t) {
        if (strcmp(t, "bigint") == 0)
                return "integer";
        if (strcmp(t, "integer") == 0)
                return strcmp(table, "schema_version") == 0 && strcmp(column, "version") == 0 ? "integer" : "int32";
        if (strcmp(t, "text") == 0)
                return "text";
        if (strcmp(t, "bytea") == 0)
                return "blob";
        return NULL;
}

/* ---- SQLite ---------------------------------------------------------------- */

static void sqlite_read(const char *path, struct schema_lines *s) {
        sqlite3 *db;
        cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        sqlite3_stmt *tables, *cols, *idx, *idxcols;
        cr_assert_eq(sqlite3_prepare_v2(db,
                                        "SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%' ORDER BY name",
                                        -1, &tables, NULL),
                     SQLITE_OK);
        cr_assert_eq(sqlite3_prepare_v2(db,
                                        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?) "
                                        "ORDER BY cid",
                                        -1, &cols, NULL),
                     SQLITE_OK);
        /* The indexes CREATE INDEX made (not those of UNIQUE and PRIMARY KEY). */
        cr_assert_eq(sqlite3_prepare_v2(db,
                                        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
                                        "AND sql IS NOT NULL ORDER BY name",
                                        -1, &idx, NULL),
                     SQLITE_OK);
        cr_assert_eq(sqlite3_prepare_v2(db, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", -1, &idxcols, NULL),
                     SQLITE_OK);
        while (sqlite3_step(tables) == SQLITE_ROW) {
                const char *table = (const char *) sqlite3_column_text(tables, 0);
                sqlite3_bind_text(cols, 1, table, -1, SQLITE_TRANSIENT);
                while (sqlite3_step(cols) == SQLITE_ROW) {
                        const char *name = (const char *) sqlite3_column_text(cols, 0);
                        const char *type = (const char *) sqlite3_column_text(cols, 1);
                        const char *dflt = (const char *) sqlite3_column_text(cols, 3);
                        int pk = sqlite3_column_int(cols, 4);
                        const char *t = sqlite_type(type);
                        cr_assert_not_null(t, "SQLite: %s.%s has type %s, outside the vocabulary", table, name, type);
                        /* A primary key's column is NOT NULL in PostgreSQL;
                         * SQLite does not say so (and lets a TEXT one be
                         * NULL, its old quirk). */
                        bool notnull = sqlite3_column_int(cols, 2) || pk;
                        add_line(s, "%s.%s %s %s pk=%d default=%s", table, name, t, notnull ? "not-null" : "null", pk,
                                 dflt ? dflt : "");
                }
                sqlite3_reset(cols);
                sqlite3_bind_text(idx, 1, table, -1, SQLITE_TRANSIENT);
                while (sqlite3_step(idx) == SQLITE_ROW) {
                        const char *name = (const char *) sqlite3_column_text(idx, 0);
                        char list[256] = "";
                        sqlite3_bind_text(idxcols, 1, name, -1, SQLITE_TRANSIENT);
                        while (sqlite3_step(idxcols) == SQLITE_ROW) {
                                if (list[0])
                                        strcat(list, ",");
                                strncat(list, (const char *) sqlite3_column_text(idxcols, 0),
                                        sizeof list - strlen(list) - 1);
                        }
                        sqlite3_reset(idxcols);
                        add_line(s, "index %s on %s(%s)", name, table, list);
                }
                sqlite3_reset(idx);
        }
        sqlite3_finalize(tables);
        sqlite3_finalize(cols);
        sqlite3_finalize(idx);
        sqlite3_finalize(idxcols);
        sqlite3_close(db);
}

/* A new SQLite store, migrated from version 1, read back; its version. */
static int sqlite_schema(struct schema_lines *s, char **dir) {
        *dir = tu_mkdtemp();
        cr_assert_not_null(*dir);
        char path[4096], url[4200];
        snprintf(path, sizeof path, "%s/muster.db", *dir);
        snprintf(url, sizeof url, "sqlite:%s", path);
        struct store *st;
        cr_assert_eq(store_open(url, &st), 0, "store_open(%s)", url);
        int version = store_schema_version(st);
        cr_assert_geq(version, 15, "version %d", version);
        store_close(st);
        sqlite_read(path, s);
        return version;
}

/* The SQLite side alone: it has the tables the store uses, every column in
 * the vocabulary (sqlite_read asserts it). */
Test(schema, sqlite_from_version_1) {
        static struct schema_lines s;
        char *dir;
        sqlite_schema(&s, &dir);
        cr_assert_gt(s.n, 150, "%d lines", s.n);
        bool hosts_seq = false;
        for (int i = 0; i < s.n; i++)
                hosts_seq |= strcmp(s.line[i], "hosts.seq integer not-null pk=1 default=") == 0;
        cr_assert(hosts_seq);
        tu_rm_rf(dir);
        free(dir);
}

/* ---- PostgreSQL -------------------------------------------------------------- */

#ifdef MUSTER_WITH_POSTGRES
static PGresult *pg_query(PGconn *c, const char *sql) {
        PGresult *r = PQexec(c, sql);
        cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
        return r;
}

/* "'x'::text" is SQLite's "'x'". */
static void pg_default(const char *d, char *out, size_t n) {
        snprintf(out, n, "%s", d);
        size_t len = strlen(out);
        if (len > 6 && strcmp(out + len - 6, "::text") == 0)
                out[len - 6] = '\0';
}

/* Database db of MUSTER_TEST_PG read back. PostgreSQL's column rowid of a
 * table is SQLite's implicit rowid (schema.h, @ROWID@): left out, once
 * checked to be one. */
static void pg_read(const char *db, struct schema_lines *s) {
        char url[4200];
        tu_pg_url(db, url, sizeof url);
        PGconn *c = PQconnectdb(url);
        cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
        PGresult *r = pg_query(c,
                "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, coalesce(c.column_default, ''),"
                "  c.is_identity,"
                "  coalesce((SELECT k.ordinal_position FROM information_schema.key_column_usage k"
                "    JOIN information_schema.table_constraints t ON t.constraint_schema = k.constraint_schema"
                "      AND t.constraint_name = k.constraint_name"
                "    WHERE t.constraint_type = 'PRIMARY KEY' AND k.table_schema = c.table_schema"
                "      AND k.table_name = c.table_name AND k.column_name = c.column_name), 0)"
                " FROM information_schema.columns c JOIN information_schema.tables tb"
                "  ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name"
                " WHERE c.table_schema = current_schema() AND tb.table_type = 'BASE TABLE'"
                " ORDER BY c.table_name COLLATE \"C\", c.ordinal_position");
        /* The indexes CREATE INDEX made: those behind no constraint. */
        PGresult *ix = pg_query(c,
                "SELECT t.relname, i.relname, (SELECT string_agg(a.attname, ',' ORDER BY k.n)"
                "   FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)"
                "   JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum)"
                " FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid"
                " WHERE t.relnamespace = current_schema()::regnamespace"
                "  AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = x.indexrelid)"
                " ORDER BY i.relname COLLATE \"C\"");
        int rows = PQntuples(r), k = 0;
        for (int i = 0; i < rows; i++) {
                const char *table = PQgetvalue(r, i, 0), *name = PQgetvalue(r, i, 1);
                const char *t = pg_type(table, name, PQgetvalue(r, i, 2));
                cr_assert_not_null(t, "PostgreSQL: %s.%s has type %s, outside the vocabulary", table, name,
                                   PQgetvalue(r, i, 2));
                bool notnull = strcmp(PQgetvalue(r, i, 3), "NO") == 0;
                int pk = atoi(PQgetvalue(r, i, 6));
                if (strcmp(name, "rowid") == 0) {
                        cr_assert(strcmp(t, "integer") == 0 && notnull && pk == 0 &&
                                  strcmp(PQgetvalue(r, i, 5), "YES") == 0,
                                  "PostgreSQL: %s.rowid is not SQLite's implicit rowid", table);
                        continue;
                }
                char dflt[256];
                pg_default(PQgetvalue(r, i, 4), dflt, sizeof dflt);
                add_line(s, "%s.%s %s %s pk=%d default=%s", table, name, t, notnull ? "not-null" : "null", pk, dflt);
                /* The table's indexes after its last column, as SQLite's. */
                if (i + 1 == rows || strcmp(PQgetvalue(r, i + 1, 0), table) != 0)
                        for (int j = 0; j < PQntuples(ix); j++)
                                if (strcmp(PQgetvalue(ix, j, 0), table) == 0) {
                                        add_line(s, "index %s on %s(%s)", PQgetvalue(ix, j, 1), table,
                                                 PQgetvalue(ix, j, 2));
                                        k++;
                                }
        }
        cr_assert_eq(k, PQntuples(ix), "PostgreSQL has indexes on tables of no column");
        PQclear(ix);
        PQclear(r);
        PQfinish(c);
}

/* The lines of a not in b, logged; their count. */
static int only_in(const struct schema_lines *a, const struct schema_lines *b, const char *name) {
        int n = 0;
        for (int i = 0; i < a->n; i++) {
                int j = 0;
                while (j < b->n && strcmp(a->line[i], b->line[j]) != 0)
                        j++;
                if (j == b->n && n++ < 20)
                        cr_log_error("%s alone: %s", name, a->line[i]);
        }
        return n;
}

/* The comparison: every column and index of each, in order, the same. */
Test(schema, sqlite_and_postgres_alike) {
        const char *store = getenv("MUSTER_TEST_STORE");
        if (!store || strcmp(store, "postgres") != 0)
                cr_skip_test("the comparison runs with MUSTER_TEST_STORE=postgres (unit/test_schema/postgres)");
        static struct schema_lines lite, pg;
        char *dir;
        int version = sqlite_schema(&lite, &dir);

        char url[4200], db[128];
        tu_pg_database(url, sizeof url, db, sizeof db);
        struct store *st;
        cr_assert_eq(store_open(url, &st), 0, "store_open(%s)", url);
        cr_assert_eq(store_schema_version(st), version, "PostgreSQL at %d, SQLite at %d", store_schema_version(st),
                     version);
        store_close(st);
        pg_read(db, &pg);
        tu_pg_drop(db);

        /* What one has and the other lacks, then the order. */
        int diffs = only_in(&lite, &pg, "SQLite") + only_in(&pg, &lite, "PostgreSQL");
        cr_expect_eq(diffs, 0, "%d line(s) of one schema not in the other (%d SQLite, %d PostgreSQL); above", diffs,
                     lite.n, pg.n);
        for (int i = 0; diffs == 0 && i < lite.n; i++)
                cr_expect_str_eq(lite.line[i], pg.line[i], "line %d: the same lines in another order", i + 1);
        cr_expect_gt(lite.n, 150);
        tu_rm_rf(dir);
        free(dir);
}
#endif
