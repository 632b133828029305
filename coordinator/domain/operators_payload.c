/* Operators in the payload: see operators_payload.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "domain/operators_payload.h"

static bool installs(const struct resolve_step *s) {
        return s->action != RESOLVE_REMOVE && s->catalog_bundle;
}

/* "9000_operators_NNN_<bundle>_<name>", sanitised, at most
 * MANIFEST_MAX_FILE_NAME bytes with name's extension kept. */
void operators_file_name(char *out, size_t n, const char *prefix, size_t place, const char *bundle,
                         const char *name) {
        const char *ext = strrchr(name, '.');
        size_t ext_len = ext ? strlen(ext) : 0;
        char stem[MANIFEST_MAX_FILE_NAME + 1];
        snprintf(stem, sizeof stem, "%s%03zu_%s_%.*s", prefix, place, bundle,
                 (int) (strlen(name) - ext_len), name);
        for (char *p = stem; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
                      *p == '_' || *p == '-'))
                        *p = '-';
        size_t room = MANIFEST_MAX_FILE_NAME - ext_len;
        if (strlen(stem) > room)
                stem[room] = '\0';
        snprintf(out, n, "%s%s", stem, ext ? ext : "");
}

int operators_manifests(const struct resolve_plan *p, struct manifest_list *out, char *err, size_t errlen) {
        size_t place = 0;
        for (size_t i = 0; i < p->n_steps; i++) {
                const struct resolve_step *s = &p->steps[i];
                if (!installs(s))
                        continue;
                if (++place > OPERATORS_MAX)
                        return errmsg(err, errlen, -E2BIG, "more than %d operator bundles", OPERATORS_MAX);
                const struct catalog_bundle *b = s->catalog_bundle;
                for (size_t j = 0; j < b->n_manifests; j++) {
                        char name[MANIFEST_MAX_FILE_NAME + 1], why[512];
                        operators_file_name(name, sizeof name, OPERATORS_FILE_PREFIX, place, b->name,
                                            b->manifests[j].name);
                        int r = manifest_parse_file(name, b->manifests[j].content, b->manifests[j].len, out, why,
                                                    sizeof why);
                        if (r < 0)
                                return errmsg(err, errlen, r, "bundle %s of catalog %s, manifest %s: %s", b->name,
                                              s->catalog, b->manifests[j].name, why);
                }
        }
        return 0;
}

static json_object *one(const struct resolve_step *s, const char *sub) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "package", json_object_new_string(s->package)) < 0 ||
            jadd(o, "bundle", json_object_new_string(s->bundle)) < 0 ||
            jadd(o, "version", json_object_new_string(s->version)) < 0 ||
            jadd(o, "catalog", json_object_new_string(s->catalog)) < 0 ||
            (s->channel && jadd(o, "channel", json_object_new_string(s->channel)) < 0) ||
            jadd(o, "dependency", json_object_new_boolean(s->dependency)) < 0 ||
            (sub && jadd(o, "subscription", json_object_new_string(sub)) < 0))
                return NULL;
        return TAKE_PTR(o);
}

json_object *operators_member(const struct resolve_plan *p, const struct resolve_subscription *subs, size_t n_subs) {
        _cleanup_json_ json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < p->n_steps; i++) {
                if (!installs(&p->steps[i]))
                        continue;
                size_t k = p->steps[i].subscription;
                json_object *o = one(&p->steps[i], k < n_subs ? subs[k].package : NULL);
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        return NULL;
                }
        }
        return TAKE_PTR(a);
}

static const char *str_of(json_object *o, const char *k) {
        json_object *v;
        if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

int operators_installed(json_object *payload, struct resolve_installed **out, size_t *n) {
        json_object *a;
        *out = NULL;
        *n = 0;
        if (!json_object_object_get_ex(payload, "operators", &a))
                return 0;
        if (!json_object_is_type(a, json_type_array))
                return -EINVAL;
        size_t len = json_object_array_length(a);
        if (len > OPERATORS_MAX)
                return -E2BIG;
        struct resolve_installed *v = calloc(len + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                json_object *o = json_object_array_get_idx(a, i), *dep;
                if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "dependency", &dep) ||
                    !json_object_is_type(dep, json_type_boolean)) {
                        free(v);
                        return -EINVAL;
                }
                v[i] = (struct resolve_installed) { .catalog = str_of(o, "catalog"), .package = str_of(o, "package"),
                                                    .bundle = str_of(o, "bundle"),
                                                    .dependency = json_object_get_boolean(dep) };
                if (!v[i].catalog || !v[i].package || !v[i].bundle) {
                        free(v);
                        return -EINVAL;
                }
        }
        *out = v;
        *n = len;
        return 0;
}
