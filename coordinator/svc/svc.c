/* The services' shared state (svc.h): set-up and the configuration in
 * force, an immutable snapshot published with release order, replaced whole
 * by a reload, the old ones kept until svc_fini (a request may still read
 * them). */
#include "svc/svc.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "svc/addonlock.h"
#include "svc/catalogcache.h"
#include "svc/checkins.h"
#include "log.h"
#include "domain/ratelimit.h"

int svc_init(struct svc *s, struct store *store, struct crypto_key *key, const struct muster_config *cfg) {
        memset(s, 0, sizeof *s); /* as in svc_fini: clang takes no { } into the _Atomic pointer */
        s->store = store;
        s->key = key;
        struct svc_config_snapshot *snap = calloc(1, sizeof *snap);
        if (!snap)
                return -ENOMEM;
        snap->cfg = *cfg;
        atomic_init(&s->config, snap);
        int r;
        if ((r = auth_cache_new(&s->auth_cache)) < 0 || (r = checkins_new(&s->checkins)) < 0 ||
            (r = ratelimit_new(&s->registrations)) < 0 || (r = catcache_new(&s->catalogs)) < 0 ||
            (r = svc_addon_new(&s->addons)) < 0) {
                svc_fini(s); /* what was made so far; every free takes NULL */
                return r;
        }
        return 0;
}

void svc_fini(struct svc *s) {
        catcache_free(s->catalogs);
        svc_addon_free(s->addons);
        checkins_free(s->checkins);
        ratelimit_free(s->registrations);
        auth_cache_free(s->auth_cache);
        for (struct svc_config_snapshot *c = atomic_load(&s->config), *older; c; c = older) {
                older = c->older;
                free(c);
        }
        memset(s, 0, sizeof *s); /* not { 0 }: clang will not put 0 into the _Atomic pointer */
}

int64_t svc_now(struct svc *s) {
        return s->clock ? s->clock(s->clock_ctx) : (int64_t) time(NULL);
}

const struct muster_config *svc_cfg(struct svc *s) {
        /* Acquire: pairs with the release in svc_config_publish(), so the
         * snapshot's contents are seen complete. */
        return &atomic_load_explicit(&s->config, memory_order_acquire)->cfg;
}

/* Settings a running musterd cannot take: the socket, the state directory
 * and store, and the HTTP server's body and per-address limits (fixed at start). */
static const struct {
        const char *section, *key;
        size_t offset, size;
        bool text; /* compared up to the NUL: bytes after it mean nothing */
} fixed_keys[] = {
#define FIXED(sec, key, field, text) \
        { sec, key, offsetof(struct muster_config, field), sizeof(((struct muster_config *) 0)->field), text }
        FIXED("server", "listen", listen, true),
        FIXED("server", "state_dir", state_dir, true),
        FIXED("server", "store", store, true),
        FIXED("server", "max_body_bytes", max_body_bytes, false),
        FIXED("server", "max_release_bytes", max_release_bytes, false),
        FIXED("server", "max_body_memory", max_body_memory, false),
        FIXED("server", "max_connections_per_address", max_connections_per_address, false),
        FIXED("server", "threads", threads, false),
        /* The HTTPS certificate is loaded or issued at start. */
        FIXED("server", "tls_cert", tls_cert, true),
        FIXED("server", "tls_key", tls_key, true),
        FIXED("server", "tls_names", tls_names, true),
        FIXED("server", "tls_priorities", tls_priorities, true), /* libmicrohttpd takes them at start */
        FIXED("server", "insecure_http", insecure_http, false),
#undef FIXED
};

struct diff_log {
        char text[1024];
        size_t len;
};

static void add_changed(const char *section, const char *key, void *u) {
        struct diff_log *l = u;
        int n = snprintf(l->text + l->len, sizeof l->text - l->len, "%s[%s] %s", l->len ? ", " : "", section, key);
        if (n > 0)
                l->len = l->len + (size_t) n < sizeof l->text ? l->len + (size_t) n : sizeof l->text - 1;
}

int svc_config_publish(struct svc *s, const struct muster_config *next) {
        struct svc_config_snapshot *cur = atomic_load_explicit(&s->config, memory_order_acquire);
        struct svc_config_snapshot *snap = calloc(1, sizeof *snap);
        if (!snap)
                return -ENOMEM;
        snap->cfg = *next;
        for (size_t i = 0; i < sizeof fixed_keys / sizeof *fixed_keys; i++) {
                char *to = (char *) &snap->cfg + fixed_keys[i].offset;
                const char *from = (const char *) &cur->cfg + fixed_keys[i].offset;
                if (fixed_keys[i].text ? strncmp(to, from, fixed_keys[i].size) == 0
                                       : memcmp(to, from, fixed_keys[i].size) == 0)
                        continue;
                memcpy(to, from, fixed_keys[i].size);
                log_warning("musterd",
                            "[%s] %s changed in the configuration file: it takes a restart, keeping the running value",
                            fixed_keys[i].section, fixed_keys[i].key);
        }
        struct diff_log changed = { .len = 0 };
        int n = config_diff(&cur->cfg, &snap->cfg, add_changed, &changed);
        snap->older = cur;
        /* Readers holding `cur` keep reading valid memory: it is freed at stop. */
        atomic_store_explicit(&s->config, snap, memory_order_release);
        if (n > 0)
                log_info("musterd", "configuration reloaded; changed: %s", changed.text);
        else
                log_info("musterd", "configuration reloaded; nothing changed");
        return n;
}
