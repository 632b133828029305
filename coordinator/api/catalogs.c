/* Operator catalogs over the API (DESIGN §3, §8): add a catalog
 * from a directory's files (infra admins; a cluster creator may read but
 * never add, change or delete one), list, show one with its packages,
 * delete. The handlers parse and authorize; svc/catalogs.h decides. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "svc/catalogs.h"
#include "cleanup.h"
#include "uuid.h"

/* ---- add ------------------------------------------------------------------- */

void api_catalog_add(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        _cleanup_free_ struct catalog_file *files = NULL;
        const char *name;
        int64_t priority = 0;
        size_t n;
        char err[1024] = "";
        struct jctx jc = { err, sizeof err, 0 };
        if (!api_need_infra_admin(req, resp))
                return;
        if (!(name = jget_cstr(req->body, "name", SIZE_MAX, &jc)))
                jrefuse(&jc, "field \"name\" must be the catalog's name");
        if (!api_read_ok(resp, &jc))
                return;
        /* An integer first; then one json-c clamped is out of range. */
        if (!jget(req->body, "priority", json_type_int, &jc))
                jrefuse(&jc, "field \"priority\" must be an integer from %d to %d (lower is preferred)",
                        SVC_CATALOG_MIN_PRIORITY, SVC_CATALOG_MAX_PRIORITY);
        else
                jget_int(req->body, "priority", INT64_MIN, INT64_MAX, &priority, &jc);
        if (!api_read_ok(resp, &jc) ||
            api_read_files(req->body, CATALOG_MAX_FILES, "a catalog", &files, &n, resp) < 0)
                return;
        struct catalog_record c;
        int r = svc_catalog_add(sv, name, priority, files, n, P(req)->owner, &c, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "catalog");
        else
                http_json(resp, 201, catalog_record_to_json(&c));
        svc_catalog_record_free(&c);
}

/* ---- read, list, delete -------------------------------------------------------- */

void api_catalog_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct catalog_record_list l;
        if (!api_need_admin(req, resp))
                return;
        int r = svc_catalog_list(sv, &l);
        if (r < 0) {
                api_store_error(resp, r, "catalogs");
                return;
        }
        json_object *a = json_object_new_array_ext((int) l.n);
        for (size_t i = 0; a && i < l.n; i++)
                json_object_array_add(a, catalog_record_to_json(&l.v[i]));
        http_json(resp, 200, a);
        svc_catalog_list_free(&l);
}

/* Bundles by name, for the versions of channel entries. */
struct by_name {
        const char *name;
        const struct catalog_bundle *b;
};

static int cmp_by_name(const void *a, const void *b) {
        return strcmp(((const struct by_name *) a)->name, ((const struct by_name *) b)->name);
}

static json_object *entry_json(const struct catalog_entry *e, const struct by_name *idx, size_t n) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        struct by_name key = { e->name, NULL };
        const struct by_name *hit = bsearch(&key, idx, n, sizeof *idx, cmp_by_name);
        json_object_object_add(o, "bundle", json_object_new_string(e->name));
        if (hit)
                json_object_object_add(o, "version", json_object_new_string(hit->b->version.text));
        if (e->replaces)
                json_object_object_add(o, "replaces", json_object_new_string(e->replaces));
        if (e->n_skips) {
                json_object *sk = json_object_new_array_ext((int) e->n_skips);
                for (size_t i = 0; sk && i < e->n_skips; i++)
                        json_object_array_add(sk, json_object_new_string(e->skips[i]));
                json_object_object_add(o, "skips", sk);
        }
        if (e->skip_range_text)
                json_object_object_add(o, "skip_range", json_object_new_string(e->skip_range_text));
        return o;
}

static json_object *package_json(const struct catalog *c, const struct catalog_package *p, const struct by_name *idx) {
        json_object *o = json_object_new_object(), *chans = json_object_new_array_ext((int) p->n_channels);
        if (!o || !chans) {
                json_object_put(o);
                json_object_put(chans);
                return NULL;
        }
        json_object_object_add(o, "name", json_object_new_string(p->name));
        json_object_object_add(o, "default_channel", json_object_new_string(p->default_channel));
        if (p->description)
                json_object_object_add(o, "description", json_object_new_string(p->description));
        for (size_t i = 0; i < p->n_channels; i++) {
                const struct catalog_channel *ch = &c->channels[p->channels[i]];
                json_object *co = json_object_new_object(), *ents = json_object_new_array_ext((int) ch->n_entries);
                if (co)
                        json_object_object_add(co, "name", json_object_new_string(ch->name));
                for (size_t k = 0; ents && k < ch->n_entries; k++)
                        json_object_array_add(ents, entry_json(&ch->entries[k], idx, c->n_bundles));
                if (co)
                        json_object_object_add(co, "entries", ents);
                else
                        json_object_put(ents);
                json_object_array_add(chans, co);
        }
        json_object_object_add(o, "channels", chans);
        return o;
}

static int cmp_package(const void *a, const void *b) {
        return strcmp((*(const struct catalog_package *const *) a)->name,
                      (*(const struct catalog_package *const *) b)->name);
}

/* "packages": each with its default channel and channels (in the catalog's
 * order of channels), each entry with its bundle's version; by name. */
static json_object *packages_json(const struct catalog *c) {
        _cleanup_free_ struct by_name *idx = calloc(c->n_bundles + 1, sizeof *idx);
        _cleanup_free_ const struct catalog_package **pk = calloc(c->n_packages + 1, sizeof *pk);
        json_object *a = json_object_new_array_ext((int) c->n_packages);
        if (!idx || !pk || !a) {
                json_object_put(a);
                return NULL;
        }
        for (size_t i = 0; i < c->n_bundles; i++)
                idx[i] = (struct by_name){ c->bundles[i].name, &c->bundles[i] };
        qsort(idx, c->n_bundles, sizeof *idx, cmp_by_name);
        for (size_t i = 0; i < c->n_packages; i++)
                pk[i] = &c->packages[i];
        qsort(pk, c->n_packages, sizeof *pk, cmp_package);
        for (size_t i = 0; i < c->n_packages; i++)
                json_object_array_add(a, package_json(c, pk[i], idx));
        return a;
}

void api_catalog_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct svc_catalog_view v;
        char err[512] = "";
        if (!api_need_admin(req, resp))
                return;
        int r = svc_catalog_get(sv, req->params[0], &v, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "catalog");
                return;
        }
        json_object *o = catalog_record_to_json(&v.info);
        if (o)
                json_object_object_add(o, "packages", packages_json(v.catalog));
        http_json(resp, 200, o);
        svc_catalog_view_free(&v);
}

void api_catalog_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        char err[512] = "";
        if (!api_need_infra_admin(req, resp))
                return;
        if (!uuid_is_valid(req->params[0])) {
                http_error(resp, 400, "catalog id \"%.64s\" is not a UUID (delete takes the id GET shows)",
                           req->params[0]);
                return;
        }
        int r = svc_catalog_delete(sv, req->params[0], P(req)->owner, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "catalog");
        else
                api_no_content(resp);
}
