/* Operator catalogs (catalog.h): JSON streams are cut into blobs with json-c's
 * tokener, YAML documents are loaded with libyaml and turned into the same
 * json-c objects, so one set of blob readers serves both formats. A bundle's
 * olm.bundle.object properties are decoded (mbedTLS's base64) and checked as
 * release manifests are (manifest.h) before they become its manifests. */
#include "catalog.h"

#include <errno.h>
#include <mbedtls/base64.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "manifest.h"
#include "yamlscan.h"

#define MAX_DEPTH 200 /* nesting of a blob; property values may nest */

struct cparse {
        struct catalog *c;
        const char *file;
        size_t file_idx;
        size_t line;
        const char *schema; /* of the blob being read, NULL between blobs */
        const char *name;   /* of the blob being read, once known */
        size_t *ignored;
        struct catalog_bundle *deps; /* what a dependencies.yaml fills */
        char *err;
        size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct cparse *p, int r, const char *fmt, ...) {
        if (!p->err || !p->errlen)
                return r;
        int n;
        if (p->schema && p->name)
                n = snprintf(p->err, p->errlen, "%s:%zu: %s \"%s\": ", p->file, p->line, p->schema, p->name);
        else if (p->schema)
                n = snprintf(p->err, p->errlen, "%s:%zu: %s: ", p->file, p->line, p->schema);
        else
                n = snprintf(p->err, p->errlen, "%s:%zu: ", p->file, p->line);
        if (n >= 0 && (size_t) n < p->errlen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(p->err + n, p->errlen - n, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* Room for element n of *v: capacities are 4, 8, 16, ... */
static int reserve(void **v, size_t n, size_t size) {
        if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
                return 0;
        size_t cap = n ? n * 2 : 4;
        void *nv = realloc(*v, cap * size);
        if (!nv)
                return -ENOMEM;
        *v = nv;
        return 0;
}

/* ---- fields ----------------------------------------------------------- */

/* The string field key of o in *out (NULL when absent or null and optional).
 * Names are non-empty; every field is at most max bytes and has no NUL. */
static int get_str(struct cparse *p, json_object *o, const char *key, bool required, size_t max,
                   const char **out) {
        json_object *v = NULL;
        *out = NULL;
        if (!json_object_object_get_ex(o, key, &v) || !v) {
                if (required)
                        return fail(p, -EINVAL, "no %s", key);
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return fail(p, -EINVAL, "%s is not a string", key);
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);
        if (n > max)
                return fail(p, -E2BIG, "%s is longer than %zu bytes", key, max);
        if (strlen(s) != n)
                return fail(p, -EINVAL, "%s holds a NUL", key);
        if (required && n == 0)
                return fail(p, -EINVAL, "%s is empty", key);
        *out = s;
        return 0;
}

static int dup_str(struct cparse *p, const char *s, char **out) {
        *out = NULL;
        if (!s)
                return 0;
        *out = strdup(s);
        return *out ? 0 : fail(p, -ENOMEM, "out of memory");
}

static json_object *get_obj(json_object *o, const char *key, enum json_type t) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, t))
                return NULL;
        return v;
}

/* ---- freeing ---------------------------------------------------------- */

static void gvk_free(struct catalog_gvk *g) {
        free(g->group);
        free(g->version);
        free(g->kind);
}

static void entry_free(struct catalog_entry *e) {
        free(e->name);
        free(e->replaces);
        for (size_t i = 0; i < e->n_skips; i++)
                free(e->skips[i]);
        free(e->skips);
        free(e->skip_range_text);
        semver_range_free(&e->skip_range);
}

static void channel_free(struct catalog_channel *ch) {
        free(ch->package);
        free(ch->name);
        for (size_t i = 0; i < ch->n_entries; i++)
                entry_free(&ch->entries[i]);
        free(ch->entries);
}

static void package_free(struct catalog_package *pk) {
        free(pk->name);
        free(pk->default_channel);
        free(pk->description);
        free(pk->channels);
}

static void bundle_free(struct catalog_bundle *b) {
        free(b->package);
        free(b->name);
        free(b->image);
        for (size_t i = 0; i < b->n_provides_gvks; i++)
                gvk_free(&b->provides_gvks[i]);
        free(b->provides_gvks);
        for (size_t i = 0; i < b->n_requires_packages; i++) {
                free(b->requires_packages[i].package);
                free(b->requires_packages[i].range_text);
                semver_range_free(&b->requires_packages[i].range);
        }
        free(b->requires_packages);
        for (size_t i = 0; i < b->n_requires_gvks; i++)
                gvk_free(&b->requires_gvks[i]);
        free(b->requires_gvks);
        for (size_t i = 0; i < b->n_manifests; i++) {
                free(b->manifests[i].name);
                free(b->manifests[i].content);
        }
        free(b->manifests);
}

void catalog_free(struct catalog *c) {
        for (size_t i = 0; i < c->n_packages; i++)
                package_free(&c->packages[i]);
        for (size_t i = 0; i < c->n_channels; i++)
                channel_free(&c->channels[i]);
        for (size_t i = 0; i < c->n_bundles; i++)
                bundle_free(&c->bundles[i]);
        for (size_t i = 0; i < c->n_files; i++)
                free(c->files[i]);
        free(c->packages);
        free(c->channels);
        free(c->bundles);
        free(c->files);
        *c = (struct catalog){ 0 };
}

/* ---- olm.package ------------------------------------------------------ */

static int blob_package(struct cparse *p, json_object *o) {
        const char *name, *def, *desc;
        int r = get_str(p, o, "name", true, CATALOG_MAX_NAME, &name);
        if (r < 0)
                return r;
        p->name = name;
        if ((r = get_str(p, o, "defaultChannel", true, CATALOG_MAX_NAME, &def)) < 0 ||
            (r = get_str(p, o, "description", false, CATALOG_MAX_DESCRIPTION, &desc)) < 0)
                return r;
        struct catalog *c = p->c;
        if (c->n_packages >= CATALOG_MAX_PACKAGES)
                return fail(p, -E2BIG, "more than %d packages", CATALOG_MAX_PACKAGES);
        if (reserve((void **) &c->packages, c->n_packages, sizeof *c->packages) < 0)
                return fail(p, -ENOMEM, "out of memory");
        struct catalog_package *pk = &c->packages[c->n_packages];
        *pk = (struct catalog_package){ .at = { p->file_idx, p->line } };
        if ((r = dup_str(p, name, &pk->name)) < 0 || (r = dup_str(p, def, &pk->default_channel)) < 0 ||
            (r = dup_str(p, desc, &pk->description)) < 0) {
                package_free(pk);
                return r;
        }
        c->n_packages++;
        return 0;
}

/* ---- olm.channel ------------------------------------------------------ */

static int entry_skips(struct cparse *p, json_object *eo, struct catalog_entry *e) {
        json_object *sk = NULL;
        if (!json_object_object_get_ex(eo, "skips", &sk) || !sk)
                return 0;
        if (!json_object_is_type(sk, json_type_array))
                return fail(p, -EINVAL, "entry \"%s\": skips is not a list", e->name);
        size_t n = json_object_array_length(sk);
        if (n > CATALOG_MAX_SKIPS)
                return fail(p, -E2BIG, "entry \"%s\": more than %d skips", e->name, CATALOG_MAX_SKIPS);
        e->skips = calloc(n ? n : 1, sizeof *e->skips);
        if (!e->skips)
                return fail(p, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(sk, i);
                size_t sl = s ? (size_t) json_object_get_string_len(s) : 0;
                if (!json_object_is_type(s, json_type_string) || sl == 0 || sl > CATALOG_MAX_NAME ||
                    strlen(json_object_get_string(s)) != sl)
                        return fail(p, -EINVAL, "entry \"%s\": skips[%zu] is not a bundle name", e->name, i);
                int r = dup_str(p, json_object_get_string(s), &e->skips[i]);
                if (r < 0)
                        return r;
                e->n_skips++;
        }
        return 0;
}

static int channel_entry(struct cparse *p, json_object *eo, struct catalog_entry *e) {
        const char *name, *repl, *range;
        int r;
        if (!json_object_is_type(eo, json_type_object))
                return fail(p, -EINVAL, "an entry is not an object");
        if ((r = get_str(p, eo, "name", true, CATALOG_MAX_NAME, &name)) < 0 || (r = dup_str(p, name, &e->name)) < 0)
                return r;
        if ((r = get_str(p, eo, "replaces", false, CATALOG_MAX_NAME, &repl)) < 0 ||
            (r = dup_str(p, repl && *repl ? repl : NULL, &e->replaces)) < 0)
                return r;
        if ((r = entry_skips(p, eo, e)) < 0)
                return r;
        if ((r = get_str(p, eo, "skipRange", false, SEMVER_RANGE_MAX_LEN, &range)) < 0)
                return r;
        if (!range)
                return 0;
        char why[256];
        r = semver_range_parse(range, &e->skip_range, why, sizeof why);
        if (r < 0)
                return fail(p, r == -ENOMEM ? r : r == -E2BIG ? r : -EINVAL, "entry \"%s\": skipRange \"%s\": %s",
                            e->name, range, why);
        e->has_skip_range = true;
        return dup_str(p, range, &e->skip_range_text);
}

static int channel_entries(struct cparse *p, json_object *o, struct catalog_channel *ch) {
        json_object *ents = get_obj(o, "entries", json_type_array);
        if (!ents)
                return fail(p, -EINVAL, "entries is not a list");
        size_t n = json_object_array_length(ents);
        if (n > CATALOG_MAX_ENTRIES)
                return fail(p, -E2BIG, "more than %d entries", CATALOG_MAX_ENTRIES);
        ch->entries = calloc(n ? n : 1, sizeof *ch->entries);
        if (!ch->entries)
                return fail(p, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                int r = channel_entry(p, json_object_array_get_idx(ents, i), &ch->entries[i]);
                ch->n_entries++;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int blob_channel(struct cparse *p, json_object *o) {
        const char *name, *pkg;
        int r = get_str(p, o, "name", true, CATALOG_MAX_NAME, &name);
        if (r < 0)
                return r;
        p->name = name;
        if ((r = get_str(p, o, "package", true, CATALOG_MAX_NAME, &pkg)) < 0)
                return r;
        struct catalog *c = p->c;
        if (c->n_channels >= (size_t) CATALOG_MAX_PACKAGES * CATALOG_MAX_CHANNELS)
                return fail(p, -E2BIG, "more than %d channels", CATALOG_MAX_PACKAGES * CATALOG_MAX_CHANNELS);
        if (reserve((void **) &c->channels, c->n_channels, sizeof *c->channels) < 0)
                return fail(p, -ENOMEM, "out of memory");
        struct catalog_channel *ch = &c->channels[c->n_channels];
        *ch = (struct catalog_channel){ .at = { p->file_idx, p->line } };
        if ((r = dup_str(p, name, &ch->name)) < 0 || (r = dup_str(p, pkg, &ch->package)) < 0 ||
            (r = channel_entries(p, o, ch)) < 0) {
                channel_free(ch);
                return r;
        }
        c->n_channels++;
        return 0;
}

/* ---- olm.bundle ------------------------------------------------------- */

static int read_gvk(struct cparse *p, const char *what, json_object *v, struct catalog_gvk **arr, size_t *n) {
        const char *g, *ver, *k;
        if (!json_object_is_type(v, json_type_object))
                return fail(p, -EINVAL, "%s: not an object", what);
        int r;
        if ((r = get_str(p, v, "group", false, CATALOG_MAX_GVK_PART, &g)) < 0 ||
            (r = get_str(p, v, "version", true, CATALOG_MAX_GVK_PART, &ver)) < 0 ||
            (r = get_str(p, v, "kind", true, CATALOG_MAX_GVK_PART, &k)) < 0)
                return fail(p, r, "%s: %s", what, r == -E2BIG ? "a field is too long" : "needs version and kind");
        if (reserve((void **) arr, *n, sizeof **arr) < 0)
                return fail(p, -ENOMEM, "out of memory");
        struct catalog_gvk *x = &(*arr)[*n];
        *x = (struct catalog_gvk){ 0 };
        if ((r = dup_str(p, g ? g : "", &x->group)) < 0 || (r = dup_str(p, ver, &x->version)) < 0 ||
            (r = dup_str(p, k, &x->kind)) < 0) {
                gvk_free(x);
                return r;
        }
        (*n)++;
        return 0;
}

static int read_required_package(struct cparse *p, const char *what, const char *pkg, const char *range,
                                  struct catalog_bundle *b) {
        if (!pkg || !*pkg)
                return fail(p, -EINVAL, "%s: no package name", what);
        if (!range)
                return fail(p, -EINVAL, "%s: no version range", what);
        if (reserve((void **) &b->requires_packages, b->n_requires_packages, sizeof *b->requires_packages) < 0)
                return fail(p, -ENOMEM, "out of memory");
        struct catalog_required_package *x = &b->requires_packages[b->n_requires_packages];
        *x = (struct catalog_required_package){ 0 };
        char why[256];
        int r = semver_range_parse(range, &x->range, why, sizeof why);
        if (r < 0)
                return fail(p, r == -ENOMEM || r == -E2BIG ? r : -EINVAL, "%s: versionRange \"%s\": %s", what,
                            range, why);
        if ((r = dup_str(p, pkg, &x->package)) < 0 || (r = dup_str(p, range, &x->range_text)) < 0) {
                free(x->package);
                semver_range_free(&x->range);
                return r;
        }
        b->n_requires_packages++;
        return 0;
}

static int prop_package(struct cparse *p, json_object *v, struct catalog_bundle *b) {
        const char *pkg, *ver;
        int r;
        if (!json_object_is_type(v, json_type_object))
                return fail(p, -EINVAL, "property olm.package: not an object");
        if ((r = get_str(p, v, "packageName", true, CATALOG_MAX_NAME, &pkg)) < 0 ||
            (r = get_str(p, v, "version", true, SEMVER_MAX_LEN, &ver)) < 0)
                return fail(p, r, "property olm.package: needs packageName and version");
        if (b->has_version)
                return fail(p, -EINVAL, "more than one olm.package property");
        if (strcmp(pkg, b->package) != 0)
                return fail(p, -EINVAL, "property olm.package: packageName \"%s\" is not the bundle's package \"%s\"",
                            pkg, b->package);
        if (semver_parse(ver, &b->version) < 0)
                return fail(p, -EINVAL, "property olm.package: version \"%s\" is not a semantic version", ver);
        b->has_version = true;
        return 0;
}

/* ---- manifests -------------------------------------------------------- */

static bool manifest_name_ok(const char *name) {
        size_t n = strlen(name);
        if (n == 0 || n > CATALOG_MAX_MANIFEST_NAME || name[0] == '.' || strchr(name, '/'))
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) name[i] < 0x20 || name[i] == 0x7f)
                        return false;
        return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml")) ||
               (n > 5 && !strcmp(name + n - 5, ".json"));
}

int catalog_bundle_add_manifest(struct catalog_bundle *b, const char *name, const char *content, size_t len) {
        if (!name || !manifest_name_ok(name) || (!content && len))
                return -EINVAL;
        if (len > CATALOG_MAX_MANIFEST || b->n_manifests >= CATALOG_MAX_MANIFESTS)
                return -E2BIG;
        for (size_t i = 0; i < b->n_manifests; i++)
                if (!strcmp(b->manifests[i].name, name))
                        return -EEXIST;
        if (reserve((void **) &b->manifests, b->n_manifests, sizeof *b->manifests) < 0)
                return -ENOMEM;
        struct catalog_manifest m = { .name = strdup(name), .content = malloc(len + 1), .len = len };
        if (!m.name || !m.content) {
                free(m.name);
                free(m.content);
                return -ENOMEM;
        }
        if (len)
                memcpy(m.content, content, len);
        m.content[len] = '\0';
        b->manifests[b->n_manifests++] = m;
        return 0;
}

/* "<index>-<kind>-<name><ext>" in lower case, other characters than
 * [a-z0-9._-] as '-'. */
static void object_name(size_t index, const struct manifest *m, const char *ext, char *out, size_t n) {
        snprintf(out, n, "%zu-%.60s-%.120s%s", index, m->kind, m->name, ext);
        for (char *c = out; *c; c++) {
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char) (*c - 'A' + 'a');
                else if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
                           *c == '-'))
                        *c = '-';
        }
}

/* The decoded bytes of an olm.bundle.object's data (malloc'd, NUL after
 * them) into *out. */
static int object_decode(struct cparse *p, const char *data, size_t dlen, char **out, size_t *len) {
        size_t need = 0;
        int k = mbedtls_base64_decode(NULL, 0, &need, (const unsigned char *) data, dlen);
        if (k == MBEDTLS_ERR_BASE64_INVALID_CHARACTER)
                return fail(p, -EINVAL, "property olm.bundle.object: data is not base64");
        if (need > CATALOG_MAX_MANIFEST)
                return fail(p, -E2BIG, "property olm.bundle.object: a manifest has at most %u bytes",
                            CATALOG_MAX_MANIFEST);
        _cleanup_free_ char *buf = malloc(need + 1);
        if (!buf)
                return fail(p, -ENOMEM, "out of memory");
        if (mbedtls_base64_decode((unsigned char *) buf, need + 1, len, (const unsigned char *) data, dlen) != 0)
                return fail(p, -EINVAL, "property olm.bundle.object: data is not base64");
        buf[*len] = '\0';
        if (memchr(buf, '\0', *len))
                return fail(p, -EINVAL, "property olm.bundle.object: data decodes to bytes that are not text");
        *out = TAKE_PTR(buf);
        return 0;
}

/* {"data": base64 of one JSON or YAML Kubernetes object}: a manifest of b. */
static int prop_bundle_object(struct cparse *p, json_object *v, struct catalog_bundle *b) {
        const char *data;
        int r;
        if (!json_object_is_type(v, json_type_object))
                return fail(p, -EINVAL, "property olm.bundle.object: not an object");
        if ((r = get_str(p, v, "data", true, 2 * (size_t) CATALOG_MAX_MANIFEST, &data)) < 0)
                return r;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        if ((r = object_decode(p, data, strlen(data), &text, &len)) < 0)
                return r;
        size_t i = strspn(text, " \t\r\n");
        const char *ext = text[i] == '{' ? ".json" : ".yaml";
        const char *tmp = text[i] == '{' ? "olm.bundle.object.json" : "olm.bundle.object.yaml";
        struct manifest_list ml = { 0 };
        char why[512] = "";
        r = manifest_parse_file(tmp, text, len, &ml, why, sizeof why);
        if (r >= 0 && ml.n != 1) {
                snprintf(why, sizeof why, "it holds %zu documents, a bundle object is one", ml.n);
                r = -EINVAL;
        }
        char name[CATALOG_MAX_MANIFEST_NAME + 1];
        if (r >= 0)
                object_name(b->n_manifests, &ml.v[0], ext, name, sizeof name);
        manifest_list_free(&ml);
        if (r == -ENOMEM)
                return fail(p, r, "out of memory");
        if (r < 0)
                return fail(p, r, "property olm.bundle.object %zu: not a manifest: %s", b->n_manifests, why);
        r = catalog_bundle_add_manifest(b, name, text, len);
        if (r == -EEXIST || r == -E2BIG)
                return fail(p, r == -EEXIST ? -EINVAL : r, "property olm.bundle.object: %s",
                            r == -EEXIST ? "two manifests of the same name" : "too many manifests");
        return r < 0 ? fail(p, r, "out of memory") : 0;
}

static int bundle_property(struct cparse *p, json_object *prop, struct catalog_bundle *b) {
        const char *type, *pkg, *range;
        int r;
        if (!json_object_is_type(prop, json_type_object))
                return fail(p, -EINVAL, "a property is not an object");
        if ((r = get_str(p, prop, "type", true, CATALOG_MAX_NAME, &type)) < 0)
                return fail(p, r, "a property has no type");
        json_object *v = NULL;
        json_object_object_get_ex(prop, "value", &v);
        if (!strcmp(type, "olm.package"))
                return prop_package(p, v, b);
        if (!strcmp(type, "olm.gvk"))
                return read_gvk(p, "property olm.gvk", v, &b->provides_gvks, &b->n_provides_gvks);
        if (!strcmp(type, "olm.gvk.required"))
                return read_gvk(p, "property olm.gvk.required", v, &b->requires_gvks, &b->n_requires_gvks);
        if (!strcmp(type, "olm.bundle.object"))
                return prop_bundle_object(p, v, b);
        if (strcmp(type, "olm.package.required") != 0) {
                (*p->ignored)++;
                return 0;
        }
        if (!json_object_is_type(v, json_type_object))
                return fail(p, -EINVAL, "property olm.package.required: not an object");
        if ((r = get_str(p, v, "packageName", false, CATALOG_MAX_NAME, &pkg)) < 0 ||
            (r = get_str(p, v, "versionRange", false, SEMVER_RANGE_MAX_LEN, &range)) < 0)
                return fail(p, r, "property olm.package.required: bad packageName or versionRange");
        return read_required_package(p, "property olm.package.required", pkg, range, b);
}

/* One item of a dependencies list; its fields either flat or under "value". */
static int dependency(struct cparse *p, json_object *d, struct catalog_bundle *b) {
        const char *type, *pkg, *range;
        int r;
        if (!json_object_is_type(d, json_type_object))
                return fail(p, -EINVAL, "a dependency is not an object");
        if ((r = get_str(p, d, "type", true, CATALOG_MAX_NAME, &type)) < 0)
                return fail(p, r, "a dependency has no type");
        json_object *v = get_obj(d, "value", json_type_object);
        if (!v)
                v = d;
        if (!strcmp(type, "olm.gvk"))
                return read_gvk(p, "dependency olm.gvk", v, &b->requires_gvks, &b->n_requires_gvks);
        if (strcmp(type, "olm.package") != 0) {
                (*p->ignored)++;
                return 0;
        }
        if ((r = get_str(p, v, "packageName", false, CATALOG_MAX_NAME, &pkg)) < 0 ||
            (!pkg && (r = get_str(p, v, "name", false, CATALOG_MAX_NAME, &pkg)) < 0) ||
            (r = get_str(p, v, "version", false, SEMVER_RANGE_MAX_LEN, &range)) < 0)
                return fail(p, r, "dependency olm.package: bad packageName or version");
        return read_required_package(p, "dependency olm.package", pkg, range, b);
}

static int read_list(struct cparse *p, json_object *o, const char *key, bool is_deps, struct catalog_bundle *b) {
        json_object *l = NULL;
        if (!json_object_object_get_ex(o, key, &l) || !l)
                return 0;
        if (!json_object_is_type(l, json_type_array))
                return fail(p, -EINVAL, "%s is not a list", key);
        size_t n = json_object_array_length(l);
        if (n > CATALOG_MAX_PROPERTIES || b->n_properties + n > CATALOG_MAX_PROPERTIES)
                return fail(p, -E2BIG, "more than %d properties and dependencies", CATALOG_MAX_PROPERTIES);
        b->n_properties += n;
        for (size_t i = 0; i < n; i++) {
                json_object *it = json_object_array_get_idx(l, i);
                int r = is_deps ? dependency(p, it, b) : bundle_property(p, it, b);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int bundle_fill(struct cparse *p, json_object *o, const char *pkg, const char *image,
                       struct catalog_bundle *b) {
        int r;
        if ((r = dup_str(p, p->name, &b->name)) < 0 || (r = dup_str(p, pkg, &b->package)) < 0 ||
            (r = dup_str(p, image, &b->image)) < 0)
                return r;
        if (!get_obj(o, "properties", json_type_array) && json_object_object_get_ex(o, "properties", NULL))
                return fail(p, -EINVAL, "properties is not a list");
        if ((r = read_list(p, o, "properties", false, b)) < 0 || (r = read_list(p, o, "dependencies", true, b)) < 0)
                return r;
        if (!b->has_version)
                return fail(p, -EINVAL, "no olm.package property gives its version");
        return 0;
}

static int blob_bundle(struct cparse *p, json_object *o) {
        const char *name, *pkg, *image;
        int r = get_str(p, o, "name", true, CATALOG_MAX_NAME, &name);
        if (r < 0)
                return r;
        p->name = name;
        if ((r = get_str(p, o, "package", true, CATALOG_MAX_NAME, &pkg)) < 0 ||
            (r = get_str(p, o, "image", false, CATALOG_MAX_IMAGE, &image)) < 0)
                return r;
        struct catalog *c = p->c;
        if (c->n_bundles >= CATALOG_MAX_BUNDLES)
                return fail(p, -E2BIG, "more than %d bundles", CATALOG_MAX_BUNDLES);
        if (reserve((void **) &c->bundles, c->n_bundles, sizeof *c->bundles) < 0)
                return fail(p, -ENOMEM, "out of memory");
        struct catalog_bundle *b = &c->bundles[c->n_bundles];
        *b = (struct catalog_bundle){ .at = { p->file_idx, p->line } };
        if ((r = bundle_fill(p, o, pkg, image, b)) < 0) {
                bundle_free(b);
                return r;
        }
        c->n_bundles++;
        return 0;
}

static int blob(struct cparse *p, json_object *o) {
        const char *schema;
        p->schema = NULL;
        p->name = NULL;
        if (!json_object_is_type(o, json_type_object))
                return fail(p, -EINVAL, "a blob is not an object");
        int r = get_str(p, o, "schema", true, CATALOG_MAX_NAME, &schema);
        if (r < 0)
                return r;
        p->schema = schema;
        if (!strcmp(schema, "olm.package"))
                return blob_package(p, o);
        if (!strcmp(schema, "olm.channel"))
                return blob_channel(p, o);
        if (!strcmp(schema, "olm.bundle"))
                return blob_bundle(p, o);
        (*p->ignored)++;
        return 0;
}

/* ---- JSON streams ----------------------------------------------------- */

typedef int blob_fn(struct cparse *p, json_object *o);

static int parse_json_stream(struct cparse *p, const char *text, size_t len, blob_fn *each) {
        size_t off = 0;
        p->line = 1;
        for (;;) {
                while (off < len && strchr(" \t\r\n", text[off]) && text[off]) {
                        if (text[off] == '\n')
                                p->line++;
                        off++;
                }
                if (off >= len)
                        return 0;
                _cleanup_json_tokener_ json_tokener *tok = json_tokener_new_ex(MAX_DEPTH);
                if (!tok)
                        return fail(p, -ENOMEM, "out of memory");
                /* Strict JSON, but the next blob may follow the value. */
                json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
                _cleanup_json_ json_object *o = json_tokener_parse_ex(tok, text + off, (int) (len - off));
                enum json_tokener_error jerr = json_tokener_get_error(tok);
                size_t end = json_tokener_get_parse_end(tok);
                if (jerr != json_tokener_success) {
                        for (size_t i = off; i < off + end && i < len; i++)
                                p->line += text[i] == '\n';
                        p->schema = NULL;
                        return fail(p, -EINVAL, "JSON: %s",
                                    jerr == json_tokener_continue ? "the text ends inside a value"
                                                                  : json_tokener_error_desc(jerr));
                }
                int r = each(p, o);
                if (r < 0)
                        return r;
                for (size_t i = off; i < off + end; i++)
                        p->line += text[i] == '\n';
                off += end;
        }
}

/* ---- YAML streams ----------------------------------------------------- */

/* The document's nodes as JSON; its aliases were counted first
 * (yscan_aliases_document), so the copies they make stay within the cap. */
struct yconv {
        yaml_document_t *doc;
};

static int ynode(struct cparse *p, struct yconv *y, yaml_node_t *n, int depth, json_object **out) {
        *out = NULL;
        if (!n || depth > MAX_DEPTH)
                return fail(p, -E2BIG, "YAML nests deeper than %d", MAX_DEPTH);
        if (n->type == YAML_SCALAR_NODE) {
                const char *s = (const char *) n->data.scalar.value;
                size_t l = n->data.scalar.length;
                if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && yscan_plain_is_null(s, l))
                        return 0;
                *out = json_object_new_string_len(s, (int) l);
                return *out ? 0 : fail(p, -ENOMEM, "out of memory");
        }
        bool seq = n->type == YAML_SEQUENCE_NODE;
        _cleanup_json_ json_object *o = seq ? json_object_new_array() : json_object_new_object();
        if (!o)
                return fail(p, -ENOMEM, "out of memory");
        if (seq) {
                for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
                        json_object *v;
                        int r = ynode(p, y, yaml_document_get_node(y->doc, *it), depth + 1, &v);
                        if (r < 0 || json_object_array_add(o, v) < 0) {
                                json_object_put(v);
                                return r < 0 ? r : fail(p, -ENOMEM, "out of memory");
                        }
                }
        } else {
                for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
                        yaml_node_t *k = yaml_document_get_node(y->doc, pr->key);
                        if (!k || k->type != YAML_SCALAR_NODE ||
                            strlen((char *) k->data.scalar.value) != k->data.scalar.length)
                                return fail(p, -EINVAL, "a mapping key is not a plain string");
                        json_object *v;
                        int r = ynode(p, y, yaml_document_get_node(y->doc, pr->value), depth + 1, &v);
                        if (r < 0 || json_object_object_add(o, (char *) k->data.scalar.value, v) < 0) {
                                json_object_put(v);
                                return r < 0 ? r : fail(p, -ENOMEM, "out of memory");
                        }
                }
        }
        *out = o;
        o = NULL;
        return 0;
}

static int yaml_doc(struct cparse *p, yaml_document_t *doc, struct yscan_aliases *aliases, blob_fn *each) {
        yaml_node_t *root = yaml_document_get_root_node(doc);
        p->line = root->start_mark.line + 1;
        p->schema = NULL;
        if (root->type == YAML_SCALAR_NODE && root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            yscan_plain_is_null((const char *) root->data.scalar.value, root->data.scalar.length))
                return 0;
        int r = yscan_aliases_document(aliases, doc);
        if (r < 0)
                return fail(p, r, "%s", aliases->why);
        struct yconv y = { .doc = doc };
        _cleanup_json_ json_object *o = NULL;
        if ((r = ynode(p, &y, root, 0, &o)) < 0)
                return r;
        return each(p, o);
}

static int parse_yaml_stream(struct cparse *p, const char *text, size_t len, blob_fn *each) {
        yaml_parser_t parser;
        int r = 0;
        struct yscan_aliases aliases;
        if (!yaml_parser_initialize(&parser))
                return fail(p, -ENOMEM, "out of memory");
        yscan_aliases_init(&aliases, len);
        yaml_parser_set_input_string(&parser, (const unsigned char *) (text ? text : ""), len);
        for (;;) {
                yaml_document_t doc;
                if (!yaml_parser_load(&parser, &doc)) {
                        p->schema = NULL;
                        p->line = yscan_clamp_line(text, len, parser.problem_mark.line + 1);
                        r = parser.error == YAML_MEMORY_ERROR
                                    ? fail(p, -ENOMEM, "out of memory")
                                    : fail(p, -EINVAL, "YAML: %s%s%s", parser.problem ? parser.problem : "error",
                                           parser.context ? " " : "", parser.context ? parser.context : "");
                        break;
                }
                if (!yaml_document_get_root_node(&doc)) {
                        yaml_document_delete(&doc);
                        break;
                }
                r = yaml_doc(p, &doc, &aliases, each);
                yaml_document_delete(&doc);
                if (r < 0)
                        break;
        }
        yscan_aliases_done(&aliases);
        yaml_parser_delete(&parser);
        return r;
}

static int parse_stream(struct cparse *p, const char *text, size_t len, blob_fn *each) {
        p->line = 1;
        if (len > CATALOG_MAX_INPUT)
                return fail(p, -E2BIG, "the file is larger than %u bytes", CATALOG_MAX_INPUT);
        size_t i = 0;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
                i++;
        if (i < len && text[i] == '{')
                return parse_json_stream(p, text, len, each);
        return parse_yaml_stream(p, text, len, each);
}

/* ---- entry points ----------------------------------------------------- */

static void rollback(struct catalog *c, const struct catalog *mark) {
        while (c->n_packages > mark->n_packages)
                package_free(&c->packages[--c->n_packages]);
        while (c->n_channels > mark->n_channels)
                channel_free(&c->channels[--c->n_channels]);
        while (c->n_bundles > mark->n_bundles)
                bundle_free(&c->bundles[--c->n_bundles]);
        while (c->n_files > mark->n_files)
                free(c->files[--c->n_files]);
        c->n_ignored = mark->n_ignored;
}

int catalog_parse(const char *text, size_t len, const char *file_name, struct catalog *into, char *err,
                  size_t errlen) {
        struct cparse p = { .c = into, .file = file_name ? file_name : "<catalog>", .err = err, .errlen = errlen,
                            .ignored = &into->n_ignored, .file_idx = into->n_files };
        struct catalog mark = *into;
        if (err && errlen)
                err[0] = 0;
        if (into->n_files >= CATALOG_MAX_FILES)
                return fail(&p, -E2BIG, "more than %d files", CATALOG_MAX_FILES);
        if (reserve((void **) &into->files, into->n_files, sizeof *into->files) < 0 ||
            !(into->files[into->n_files] = strdup(p.file)))
                return fail(&p, -ENOMEM, "out of memory");
        into->n_files++;
        int r = parse_stream(&p, text, len, blob);
        if (r < 0)
                rollback(into, &mark);
        return r;
}

static int deps_doc(struct cparse *p, json_object *o) {
        if (!json_object_is_type(o, json_type_object))
                return fail(p, -EINVAL, "not a mapping");
        return read_list(p, o, "dependencies", true, p->deps);
}

int catalog_parse_dependencies(const char *text, size_t len, const char *file_name, struct catalog_bundle *b,
                               char *err, size_t errlen) {
        size_t ignored = 0;
        struct cparse p = { .file = file_name ? file_name : "dependencies.yaml", .err = err, .errlen = errlen,
                            .ignored = &ignored, .deps = b };
        struct catalog_bundle mark = *b;
        if (err && errlen)
                err[0] = 0;
        int r = parse_stream(&p, text, len, deps_doc);
        if (r < 0) {
                while (b->n_requires_packages > mark.n_requires_packages) {
                        struct catalog_required_package *x = &b->requires_packages[--b->n_requires_packages];
                        free(x->package);
                        free(x->range_text);
                        semver_range_free(&x->range);
                }
                while (b->n_requires_gvks > mark.n_requires_gvks)
                        gvk_free(&b->requires_gvks[--b->n_requires_gvks]);
                b->n_properties = mark.n_properties;
                /* Arrays this call allocated go too, so b is as it was. */
                if (!mark.requires_packages) {
                        free(b->requires_packages);
                        b->requires_packages = NULL;
                }
                if (!mark.requires_gvks) {
                        free(b->requires_gvks);
                        b->requires_gvks = NULL;
                }
        }
        return r;
}

/* ---- cross references ------------------------------------------------- */

/* A sorted index: (a, b) names and the element's position. */
struct key {
        const char *a, *b;
        size_t i;
};

static int key_cmp(const void *x, const void *y) {
        const struct key *k = x, *l = y;
        int d = strcmp(k->a, l->a);
        return d ? d : strcmp(k->b, l->b);
}

static const struct key *key_find(const struct key *keys, size_t n, const char *a, const char *b) {
        struct key k = { a, b, 0 };
        return bsearch(&k, keys, n, sizeof *keys, key_cmp);
}

struct check {
        struct catalog *c;
        struct key *pkgs, *chans, *bundles;
        char *err;
        size_t errlen;
};

__attribute__((format(printf, 4, 5)))
static int cfail(struct check *k, const struct catalog_origin *at, const char *blob, const char *fmt, ...) {
        if (!k->err || !k->errlen)
                return -EINVAL;
        const char *file = at->file < k->c->n_files ? k->c->files[at->file] : "<catalog>";
        int n = snprintf(k->err, k->errlen, "%s:%zu: %s: ", file, at->line, blob);
        if (n >= 0 && (size_t) n < k->errlen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(k->err + n, k->errlen - n, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

static const char *origin_file(const struct catalog *c, const struct catalog_origin *at) {
        return at->file < c->n_files ? c->files[at->file] : "<catalog>";
}

static int check_index(struct check *k) {
        struct catalog *c = k->c;
        k->pkgs = calloc(c->n_packages + 1, sizeof *k->pkgs);
        k->chans = calloc(c->n_channels + 1, sizeof *k->chans);
        k->bundles = calloc(c->n_bundles + 1, sizeof *k->bundles);
        if (!k->pkgs || !k->chans || !k->bundles)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_packages; i++)
                k->pkgs[i] = (struct key){ c->packages[i].name, "", i };
        for (size_t i = 0; i < c->n_channels; i++)
                k->chans[i] = (struct key){ c->channels[i].package, c->channels[i].name, i };
        for (size_t i = 0; i < c->n_bundles; i++)
                k->bundles[i] = (struct key){ c->bundles[i].name, "", i };
        qsort(k->pkgs, c->n_packages, sizeof *k->pkgs, key_cmp);
        qsort(k->chans, c->n_channels, sizeof *k->chans, key_cmp);
        qsort(k->bundles, c->n_bundles, sizeof *k->bundles, key_cmp);
        return 0;
}

/* Duplicates: the later of two equal keys is named, with where the first is. */
static int check_dups(struct check *k) {
        struct catalog *c = k->c;
        char blob[CATALOG_MAX_NAME * 2 + 64];
        for (size_t i = 1; i < c->n_packages; i++)
                if (!key_cmp(&k->pkgs[i - 1], &k->pkgs[i])) {
                        const struct catalog_package *a = &c->packages[k->pkgs[i - 1].i];
                        const struct catalog_package *b = &c->packages[k->pkgs[i].i];
                        snprintf(blob, sizeof blob, "olm.package \"%s\"", b->name);
                        return cfail(k, &b->at, blob, "duplicate package, also at %s:%zu", origin_file(c, &a->at),
                                     a->at.line);
                }
        for (size_t i = 1; i < c->n_channels; i++)
                if (!key_cmp(&k->chans[i - 1], &k->chans[i])) {
                        const struct catalog_channel *a = &c->channels[k->chans[i - 1].i];
                        const struct catalog_channel *b = &c->channels[k->chans[i].i];
                        snprintf(blob, sizeof blob, "olm.channel \"%s\"", b->name);
                        return cfail(k, &b->at, blob, "duplicate channel of package \"%s\", also at %s:%zu", b->package,
                                     origin_file(c, &a->at), a->at.line);
                }
        for (size_t i = 1; i < c->n_bundles; i++)
                if (!key_cmp(&k->bundles[i - 1], &k->bundles[i])) {
                        const struct catalog_bundle *a = &c->bundles[k->bundles[i - 1].i];
                        const struct catalog_bundle *b = &c->bundles[k->bundles[i].i];
                        snprintf(blob, sizeof blob, "olm.bundle \"%s\"", b->name);
                        return cfail(k, &b->at, blob, "duplicate bundle, also at %s:%zu", origin_file(c, &a->at),
                                     a->at.line);
                }
        return 0;
}

static int check_channels(struct check *k) {
        struct catalog *c = k->c;
        char blob[CATALOG_MAX_NAME + 32];
        for (size_t i = 0; i < c->n_channels; i++) {
                const struct catalog_channel *ch = &c->channels[i];
                snprintf(blob, sizeof blob, "olm.channel \"%s\"", ch->name);
                if (!key_find(k->pkgs, c->n_packages, ch->package, ""))
                        return cfail(k, &ch->at, blob, "package \"%s\" does not exist", ch->package);
                for (size_t j = 0; j < ch->n_entries; j++) {
                        const struct key *b = key_find(k->bundles, c->n_bundles, ch->entries[j].name, "");
                        if (!b)
                                return cfail(k, &ch->at, blob, "entry \"%s\": no such bundle", ch->entries[j].name);
                        if (strcmp(c->bundles[b->i].package, ch->package) != 0)
                                return cfail(k, &ch->at, blob,
                                             "entry \"%s\": the bundle is of package \"%s\", not \"%s\"",
                                             ch->entries[j].name, c->bundles[b->i].package, ch->package);
                }
        }
        return 0;
}

/* Each package's channels are a run of the sorted channel index. */
static int check_packages(struct check *k) {
        struct catalog *c = k->c;
        char blob[CATALOG_MAX_NAME + 32];
        for (size_t i = 0; i < c->n_packages; i++) {
                struct catalog_package *pk = &c->packages[i];
                snprintf(blob, sizeof blob, "olm.package \"%s\"", pk->name);
                struct key lo = { pk->name, "", 0 };
                size_t a = 0, b = c->n_channels;
                while (a < b) {
                        size_t m = a + (b - a) / 2;
                        if (key_cmp(&k->chans[m], &lo) < 0)
                                a = m + 1;
                        else
                                b = m;
                }
                size_t n = 0;
                while (a + n < c->n_channels && !strcmp(k->chans[a + n].a, pk->name))
                        n++;
                if (n > CATALOG_MAX_CHANNELS) {
                        cfail(k, &pk->at, blob, "more than %d channels", CATALOG_MAX_CHANNELS);
                        return -E2BIG;
                }
                free(pk->channels);
                pk->n_channels = 0;
                pk->channels = calloc(n ? n : 1, sizeof *pk->channels);
                if (!pk->channels)
                        return -ENOMEM;
                for (size_t j = 0; j < n; j++)
                        pk->channels[pk->n_channels++] = k->chans[a + j].i;
                if (!key_find(k->chans, c->n_channels, pk->name, pk->default_channel))
                        return cfail(k, &pk->at, blob, "defaultChannel \"%s\" is not a channel of the package",
                                     pk->default_channel);
        }
        return 0;
}

static int check_bundles(struct check *k) {
        struct catalog *c = k->c;
        char blob[CATALOG_MAX_NAME + 32];
        for (size_t i = 0; i < c->n_bundles; i++) {
                const struct catalog_bundle *b = &c->bundles[i];
                snprintf(blob, sizeof blob, "olm.bundle \"%s\"", b->name);
                if (!key_find(k->pkgs, c->n_packages, b->package, ""))
                        return cfail(k, &b->at, blob, "package \"%s\" does not exist", b->package);
                struct semver v;
                if (!b->has_version || semver_parse(b->version.text, &v) < 0)
                        return cfail(k, &b->at, blob, "no valid version");
                for (size_t j = 0; j < b->n_requires_packages; j++)
                        if (!b->requires_packages[j].range.n_sets)
                                return cfail(k, &b->at, blob, "required package \"%s\": no range",
                                             b->requires_packages[j].package);
        }
        return 0;
}

int catalog_check(struct catalog *c, char *err, size_t errlen) {
        struct check k = { .c = c, .err = err, .errlen = errlen };
        if (err && errlen)
                err[0] = 0;
        int r = check_index(&k);
        if (r == -ENOMEM && err && errlen)
                snprintf(err, errlen, "out of memory");
        if (r >= 0)
                r = check_dups(&k);
        if (r >= 0)
                r = check_bundles(&k);
        if (r >= 0)
                r = check_channels(&k);
        if (r >= 0)
                r = check_packages(&k);
        if (r == -ENOMEM && err && errlen)
                snprintf(err, errlen, "out of memory");
        free(k.pkgs);
        free(k.chans);
        free(k.bundles);
        return r;
}
