/* Operator catalogs (catalogs.h): an add parses the files first and stores
 * them canonically with their digest; the parsed model goes to the cache
 * (catalogcache.h), from which reads and the resolver's snapshots are
 * served. After a restart a catalog is parsed again from its stored files
 * the first time something needs it. Adds, deletes and loads take the
 * cache's writer lock, so a catalog is parsed once and a delete cannot
 * race a load back into memory. */
#include "svc/catalogs.h"
#include "svc/catalogcache.h"
#include "svc/catalogload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crypto.h"
#include "errmsg.h"
#include "log.h"
#include "svc/opresolve.h"
#include "uuid.h"
#include "store/store.h"

static void err_clear(char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
}

/* A catalog name: a DNS label (1-63 characters of a-z, 0-9 and '-', not
 * starting or ending with '-') that is not a UUID (paths take either). */
static bool svc_catalog_name_ok(const char *s) {
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n > SVC_CATALOG_MAX_NAME || s[0] == '-' || s[n - 1] == '-' || uuid_is_valid(s))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

/* Whether cluster c's operators use catalog `name`: a bundle its current
 * payload revision installed, or one its subscriptions resolve to now. */
static bool cluster_uses(struct svc *sv, const char *cluster_id, const char *name) {
        struct cluster cl;
        struct op_resolution op = { 0 };
        char err[256];
        bool used = false;
        cluster_init(&cl);
        if (store_cluster_get(sv->store, cluster_id, &cl) == 0 && opresolve_cluster(sv, &cl, NULL, &op, err, sizeof err) >= 0) {
                for (size_t i = 0; i < op.n_installed && !used; i++)
                        used = strcmp(op.installed[i].catalog, name) == 0;
                for (size_t i = 0; !op.none && op.plan.ok && i < op.plan.n_steps && !used; i++)
                        used = op.plan.steps[i].action != RESOLVE_REMOVE && strcmp(op.plan.steps[i].catalog, name) == 0;
        }
        opresolve_free(&op);
        cluster_free(&cl);
        return used;
}

int svc_catalog_in_use(struct svc *sv, const struct catalog_record *c) {
        struct subscription_record_list l;
        int r = store_subscription_list(sv->store, NULL, &l);
        if (r < 0)
                return r;
        int used = 0;
        for (size_t i = 0; i < l.n && !used; i++) {
                bool seen = false; /* each cluster once */
                for (size_t j = 0; j < i && !seen; j++)
                        seen = strcmp(l.v[j].cluster_id, l.v[i].cluster_id) == 0;
                used = (l.v[i].catalog && strcmp(l.v[i].catalog, c->name) == 0) ||
                       (!seen && cluster_uses(sv, l.v[i].cluster_id, c->name));
        }
        subscription_record_list_free(&l);
        return used;
}

/* ---- add ---------------------------------------------------------------------- */

/* The record of a parsed catalog: its files canonical, their digest and
 * what they hold. */
static int make_record(const struct catalog_file *files, size_t n, const struct catalog *c, struct catalog_record *rec,
                       char *err, size_t errlen) {
        uint8_t sum[CRYPTO_SHA256_LEN];
        char hex[2 * CRYPTO_SHA256_LEN + 1];
        int r = catalog_files_to_canonical(files, n, &rec->files, &rec->files_len);
        if (r == -EINVAL)
                return errmsg(err, errlen, r, "the catalog's files must be UTF-8 text");
        if (r < 0)
                return errmsg(err, errlen, r, r == -ENOMEM ? "out of memory" : "the catalog is too large to keep");
        if (rec->files_len > STORE_MAX_CATALOG_BYTES)
                return errmsg(err, errlen, -E2BIG, "the catalog is %zu bytes as stored, more than %d", rec->files_len,
                              STORE_MAX_CATALOG_BYTES);
        if ((r = crypto_sha256(rec->files, rec->files_len, sum)) < 0)
                return errmsg(err, errlen, -EIO, "could not hash the catalog");
        crypto_hex(sum, sizeof sum, hex);
        if (asprintf(&rec->digest, "sha256:%s", hex) < 0) {
                rec->digest = NULL;
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        }
        rec->n_files = (int64_t) n;
        rec->n_packages = (int64_t) c->n_packages;
        rec->n_channels = (int64_t) c->n_channels;
        rec->n_bundles = (int64_t) c->n_bundles;
        rec->n_ignored = (int64_t) c->n_ignored;
        for (size_t i = 0; i < c->n_bundles; i++)
                rec->n_manifests += (int64_t) c->bundles[i].n_manifests;
        return 0;
}

/* Store rec (under the writer lock, with the count checked) and put the
 * parsed catalog in memory. */
static int store_and_cache(struct svc *sv, struct catalog_record *rec, struct catalog *parsed, char *err,
                           size_t errlen) {
        struct catalog_record_list l;
        catcache_writer_lock(sv->catalogs);
        int r = store_catalog_list(sv->store, &l);
        if (r >= 0 && l.n >= SVC_MAX_CATALOGS)
                r = errmsg(err, errlen, -EDQUOT, "musterd holds %d catalogs, the most it takes; delete one first",
                           SVC_MAX_CATALOGS);
        catalog_record_list_free(&l);
        if (r >= 0 && (r = store_catalog_create(sv->store, rec)) == -EEXIST)
                errmsg(err, errlen, r, "catalog %s exists; delete it first to add it again", rec->name);
        if (r >= 0) {
                struct svc_catalog_entry *e = catcache_entry_new(rec->id, rec->name, (int) rec->priority, rec->digest,
                                                                 parsed);
                /* Without memory now, it is parsed from the store when needed. */
                if (e)
                        (void) catcache_insert(sv->catalogs, e);
        }
        catcache_writer_unlock(sv->catalogs);
        return r;
}

int svc_catalog_add(struct svc *sv, const char *name, int64_t priority, const struct catalog_file *files, size_t n,
                    const char *by, struct catalog_record *out, char *err, size_t errlen) {
        struct catalog parsed;
        catalog_record_init(out);
        err_clear(err, errlen);
        if (!svc_catalog_name_ok(name))
                return errmsg(err, errlen, -EINVAL,
                              "a catalog name is a DNS label: 1-%d characters of a-z, 0-9 and '-', not starting or "
                              "ending with '-' (and not a UUID)", SVC_CATALOG_MAX_NAME);
        if (priority < SVC_CATALOG_MIN_PRIORITY || priority > SVC_CATALOG_MAX_PRIORITY)
                return errmsg(err, errlen, -EINVAL, "priority must be an integer from %d to %d (lower is preferred)",
                              SVC_CATALOG_MIN_PRIORITY, SVC_CATALOG_MAX_PRIORITY);
        int r = catalog_load_files(files, n, &parsed, err, errlen);
        if (r < 0)
                return r;
        if (!parsed.n_packages) {
                catalog_free(&parsed);
                return errmsg(err, errlen, -EINVAL, "the files hold no olm.package blob: no catalog there");
        }
        out->name = strdup(name);
        out->owner = strdup(by);
        out->priority = priority;
        if (!out->name || !out->owner)
                r = errmsg(err, errlen, -ENOMEM, "out of memory");
        if (r >= 0)
                r = make_record(files, n, &parsed, out, err, errlen);
        if (r >= 0)
                r = store_and_cache(sv, out, &parsed, err, errlen);
        catalog_free(&parsed);
        free(out->files);
        out->files = NULL;
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL,
                  "catalog %s (priority %lld) added by %s: %lld packages, %lld bundles from %lld files", name,
                  (long long) priority, by, (long long) out->n_packages, (long long) out->n_bundles,
                  (long long) out->n_files);
        return 0;
}

/* ---- read, list, delete ---------------------------------------------------------- */

/* The record (without files) of catalog id_or_name, taken out of a list. */
static int find_record(struct svc *sv, const char *id_or_name, struct catalog_record *out) {
        struct catalog_record_list l;
        bool by_id = uuid_is_valid(id_or_name);
        catalog_record_init(out);
        int r = store_catalog_list(sv->store, &l);
        if (r < 0)
                return r;
        r = -ENOENT;
        for (size_t i = 0; i < l.n && r == -ENOENT; i++)
                if (by_id ? !strcasecmp(l.v[i].id, id_or_name) : !strcmp(l.v[i].name, id_or_name)) {
                        *out = l.v[i];
                        catalog_record_init(&l.v[i]);
                        r = 0;
                }
        catalog_record_list_free(&l);
        return r;
}

int svc_catalog_get(struct svc *sv, const char *id_or_name, struct svc_catalog_view *out, char *err, size_t errlen) {
        *out = (struct svc_catalog_view){ 0 };
        err_clear(err, errlen);
        int r = find_record(sv, id_or_name, &out->info);
        if (r >= 0)
                r = catalogload_entry(sv, &out->info, &out->entry);
        if (r == -ENOENT)
                r = errmsg(err, errlen, r, "catalog %.64s not found", id_or_name);
        if (r < 0) {
                svc_catalog_view_free(out);
                return r;
        }
        out->catalog = catcache_entry_catalog(out->entry);
        return 0;
}

void svc_catalog_view_free(struct svc_catalog_view *v) {
        catcache_entry_unref(v->entry);
        catalog_record_free(&v->info);
        *v = (struct svc_catalog_view){ 0 };
}

int svc_catalog_list(struct svc *sv, struct catalog_record_list *out) {
        return store_catalog_list(sv->store, out);
}

void svc_catalog_list_free(struct catalog_record_list *l) {
        catalog_record_list_free(l);
}

void svc_catalog_record_free(struct catalog_record *c) {
        catalog_record_free(c);
}

int svc_catalog_delete(struct svc *sv, const char *id, const char *by, char *err, size_t errlen) {
        struct catalog_record c;
        err_clear(err, errlen);
        if (!uuid_is_valid(id))
                return errmsg(err, errlen, -EINVAL, "catalog id \"%.64s\" is not a UUID", id);
        catcache_writer_lock(sv->catalogs);
        int r = find_record(sv, id, &c);
        if (r == -ENOENT)
                errmsg(err, errlen, r, "catalog %s not found", id);
        else if (r >= 0 && svc_catalog_in_use(sv, &c))
                r = errmsg(err, errlen, -EBUSY, "catalog %s is in use by subscriptions; it cannot be deleted", c.name);
        if (r >= 0 && (r = store_catalog_delete(sv->store, c.id)) == -ENOENT)
                errmsg(err, errlen, r, "catalog %s not found", id);
        if (r >= 0)
                catcache_remove(sv->catalogs, c.id);
        catcache_writer_unlock(sv->catalogs);
        if (r >= 0)
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "catalog %s (priority %lld) deleted by %s",
                          c.name, (long long) c.priority, by);
        catalog_record_free(&c);
        return r;
}
