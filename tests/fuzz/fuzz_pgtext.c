/* libFuzzer target for the PostgreSQL driver's rewrites (pgtext.h): the
 * first byte picks one. pg_sql_translate on arbitrary SQL text: an answer
 * has no "?" outside quotes, its highest parameter in 0..PG_MAX_PARAMS, and
 * is the input itself when the input had none. pg_url_take_pool on an
 * arbitrary store URL: an answer is no longer than the URL, keeps no
 * pool= parameter, and its pool is in 1..PG_POOL_MAX; a refusal is EINVAL. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_selector.h"
#include "store/pg/pgtext.h"

/* The '?' outside quotes in s. */
static size_t marks(const char *s) {
        size_t n = 0;
        char quote = 0;
        for (; *s; s++) {
                if (quote) {
                        if (*s == quote)
                                quote = 0;
                } else if (*s == '\'' || *s == '"')
                        quote = *s;
                else
                        n += *s == '?';
        }
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_selected_text(data, size, 8192);
        if (!s)
                return 0;
        if (data[0] & 1) {
                int n = -1;
                char *out = pg_sql_translate(s, &n);
                if (out) {
                        if (n < 0 || n > PG_MAX_PARAMS || marks(out) != 0)
                                abort();
                        if (marks(s) == 0 && (n != 0 || strcmp(out, s) != 0))
                                abort();
                        if (marks(s) != 0 && n == 0)
                                abort();
                        free(out);
                }
        } else {
                int pool = -1;
                errno = 0;
                char *out = pg_url_take_pool(s, &pool);
                if (out) {
                        if (strlen(out) > strlen(s) || pool < 1 || pool > PG_POOL_MAX)
                                abort();
                        const char *q = strchr(out, '?');
                        for (const char *p = q; p; p = strchr(p + 1, '&'))
                                if (strncmp(p + 1, "pool=", 5) == 0)
                                        abort();
                        if (!strchr(s, '?') && strcmp(out, s) != 0)
                                abort();
                        free(out);
                } else if (errno != EINVAL && errno != ENOMEM)
                        abort();
        }
        free(s);
        return 0;
}
