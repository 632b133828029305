/* Opening a store: store_open picks a back-end by the URL (one row per
 * back-end in url_backends, each its driver's opener, sqldb.h); the calls
 * of store.h about the handle as a whole. Every other operation of store.h
 * is in the resource file of what it works on (store/sql/hosts.c,
 * clusters.c, ...), which checks its arguments and runs its SQL on the
 * handle's driver. What every resource file shares is in records.c and
 * store/sql/common.c. */
#include "store/store.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "store/sql/sqlstore.h"

/* URL prefixes and their back-ends' openers. A back-end this build does
 * not have (NULL) answers -EPROTONOSUPPORT, as does any other "scheme://";
 * anything else is a path, for SQLite, the embedded default. */
static const struct {
        const char *prefix;
        int (*open)(const char *url, struct store **out);
} url_backends[] = {
        { "sqlite:", sqlite_store_open },
#ifdef MUSTER_WITH_POSTGRES
        { "postgres://", pg_store_open },
        { "postgresql://", pg_store_open },
#else
        { "postgres://", NULL },
        { "postgresql://", NULL },
#endif
};

int store_open(const char *url, struct store **out) {
        int (*open)(const char *url, struct store **out) = sqlite_store_open;
        size_t i, n = sizeof url_backends / sizeof *url_backends;

        *out = NULL;
        if (!url)
                return -EINVAL;
        for (i = 0; i < n; i++)
                if (strncmp(url, url_backends[i].prefix, strlen(url_backends[i].prefix)) == 0)
                        break;
        if (i < n)
                open = url_backends[i].open;
        else if (strstr(url, "://"))
                open = NULL;
        if (!open)
                return -EPROTONOSUPPORT;
        int r = open(url, out);
        if (r < 0) {
                *out = NULL;
                return r;
        }
        return 0;
}

void store_close(struct store *s) {
        if (s)
                s->drv->close(s);
}

int store_schema_version(struct store *s) {
        return s->drv->schema_version(s);
}

int store_schema_version_built(void) {
        return STORE_SCHEMA_VERSION;
}

bool store_backend_built(const char *prefix) {
        for (size_t i = 0; i < sizeof url_backends / sizeof *url_backends; i++)
                if (strcmp(url_backends[i].prefix, prefix) == 0)
                        return url_backends[i].open != NULL;
        return false;
}

int store_free_space(struct store *s, int64_t *bytes) {
        int r;
        unsigned n = 0;
        while ((r = s->drv->free_space(s, bytes)) == -EAGAIN && s->drv->retry_eagain && ++n < STORE_RETRIES)
                sql_retry_pause(n);
        return r;
}

int store_leader(struct store *s) {
        return s->drv->leader(s);
}

void store_write_latency(struct store *s, struct store_latency *out) {
        db_write_latency(s, out);
}
