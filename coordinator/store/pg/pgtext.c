/* The PostgreSQL driver's two rewrites of text (pgtext.h): pure, no libpq,
 * fuzzed by tests/fuzz/fuzz_pgtext.c. */
#include "store/pg/pgtext.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The operations' "?" and "?N" as PostgreSQL's "$N" ("?" after "?N" is
 * N + 1, as in SQLite); quoted text is left alone. *n: the highest N. */
char *pg_sql_translate(const char *sql, int *n) {
        size_t len = strlen(sql);
        char *out = malloc(len * 4 + 1); /* "?" becomes at most "$64" */
        if (!out)
                return NULL;
        size_t o = 0;
        int next = 1, max = 0;
        char quote = 0;
        for (size_t i = 0; i < len; i++) {
                char ch = sql[i];
                if (quote) {
                        if (ch == quote)
                                quote = 0;
                        out[o++] = ch;
                        continue;
                }
                if (ch == '\'' || ch == '"') {
                        quote = ch;
                        out[o++] = ch;
                        continue;
                }
                if (ch != '?') {
                        out[o++] = ch;
                        continue;
                }
                int k = 0;
                size_t j = i + 1;
                while (j < len && sql[j] >= '0' && sql[j] <= '9' && k < 1000)
                        k = k * 10 + (sql[j++] - '0');
                if (j == i + 1)
                        k = next;
                if (k < 1 || k > PG_MAX_PARAMS) {
                        free(out);
                        return NULL;
                }
                next = k + 1;
                if (k > max)
                        max = k;
                o += (size_t) sprintf(out + o, "$%d", k);
                i = j - 1;
        }
        out[o] = '\0';
        *n = max;
        return out;
}

/* url without our pool=N (libpq refuses parameters it does not know);
 * *pool from it. */
char *pg_url_take_pool(const char *url, int *pool) {
        char *u = strdup(url);
        if (!u)
                return NULL;
        *pool = PG_POOL_DEFAULT;
        char *q = strchr(u, '?');
        if (!q)
                return u;
        char *w = q + 1, *p = q + 1;
        while (*p) {
                size_t n = strcspn(p, "&");
                if (strncmp(p, "pool=", 5) == 0) {
                        char *end;
                        long k = strtol(p + 5, &end, 10);
                        if (end != p + n || k < 1 || k > PG_POOL_MAX) {
                                free(u);
                                errno = EINVAL;
                                return NULL;
                        }
                        *pool = (int) k;
                } else {
                        if (w != q + 1)
                                *w++ = '&';
                        memmove(w, p, n);
                        w += n;
                }
                p += n;
                if (*p == '&')
                        p++;
        }
        *w = '\0';
        if (w == q + 1)
                *q = '\0';
        return u;
}
