/* Part 3 of a cluster's payload (DESIGN §6): its add-on releases as
 * HelmChart manifests (payload_addons.h). */
#include "svc/payload_addons.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domain/addon.h"
#include "cleanup.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "store/store.h"

static int content_of(const struct addon_release_record *r, struct addon_content *out) {
        _cleanup_json_ json_object *o = json_tokener_parse(r->content);
        return addon_content_from_json(o, out);
}

struct part {
        char *proxy;
        struct addon_release_record *r;
};

static int part_cmp(const void *a, const void *b) {
        return strcmp(((const struct part *) a)->proxy, ((const struct part *) b)->proxy);
}

int addons_manifests(struct svc *sv, const struct cluster *c, struct manifest_list *out, char *err, size_t errlen) {
        struct addon_release_record_list l;
        struct part *parts = NULL;
        size_t n = 0;
        int r;

        if ((r = store_addon_release_list(sv->store, NULL, c->id, NULL, &l)) < 0)
                return errmsg(err, errlen, r, "listing the add-on releases of cluster %s failed", c->id);
        parts = calloc(l.n ? l.n : 1, sizeof *parts);
        if (!parts) {
                addon_release_record_list_free(&l);
                return -ENOMEM;
        }
        for (size_t i = 0; i < l.n && r == 0; i++) {
                enum addon_status st = addon_status_from_string(l.v[i].status);
                if (st == ADDON_REMOVING || l.v[i].conflict)
                        continue;
                struct addon_proxy_record p;
                if ((r = store_addon_proxy_get(sv->store, l.v[i].proxy_id, &p)) < 0) {
                        r = errmsg(err, errlen, r, "reading add-on proxy %s failed", l.v[i].proxy_id);
                        break;
                }
                parts[n].proxy = TAKE_PTR(p.name);
                parts[n++].r = &l.v[i];
                addon_proxy_record_free(&p);
        }
        if (r == 0)
                qsort(parts, n, sizeof *parts, part_cmp);
        for (size_t i = 0; i < n && r == 0; i++) {
                struct addon_content ct;
                char file[MANIFEST_MAX_FILE_NAME + 1], perr[256];
                if ((r = content_of(parts[i].r, &ct)) < 0) {
                        r = errmsg(err, errlen, -EIO, "the release of add-on %s on cluster %s is not readable",
                                   parts[i].proxy, c->id);
                        break;
                }
                _cleanup_free_ char *yaml = addon_helmchart_yaml(&ct, parts[i].proxy, parts[i].r->revision);
                addon_content_free(&ct);
                if (!yaml)
                        r = -ENOMEM;
                else if ((r = addon_helmchart_file(parts[i].proxy, file, sizeof file)) < 0 ||
                         (r = manifest_parse_file(file, yaml, strlen(yaml), out, perr, sizeof perr)) < 0)
                        r = errmsg(err, errlen, r, "the HelmChart of add-on %s is not a manifest: %s", parts[i].proxy,
                                   perr);
        }
        for (size_t i = 0; i < n; i++)
                free(parts[i].proxy);
        free(parts);
        addon_release_record_list_free(&l);
        return r;
}
