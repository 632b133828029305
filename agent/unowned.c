/* The out-of-band objects of a manifest directory (unowned.h): the file
 * names manifestdir's bookkeeping does not list, read in name order within
 * fixed limits, each parsed as manifests; and the one field of a HelmChart
 * the manifest parser does not read, spec.targetNamespace. */
#include "unowned.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cleanup.h"
#include "errmsg.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "manifest.h"
#include "manifestdir.h"
#include "yamlscan.h"

#define MERGE_DEPTH 8  /* "<<" inside what "<<" brought in; aliases can make a cycle */
/* Mapping entries looked at for one answer: aliases let a small text merge
 * the same mappings over and over (as "billion laughs" does). */
#define MERGE_BUDGET (1u << 20)

/* ---- spec.targetNamespace -------------------------------------------------- */

static bool node_is(const yaml_node_t *n, const char *s) {
        return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == strlen(s) &&
               memcmp(n->data.scalar.value, s, n->data.scalar.length) == 0;
}

static bool node_is_null(const yaml_node_t *n) {
        return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               yscan_plain_is_null((const char *) n->data.scalar.value, n->data.scalar.length);
}

struct budget {
        size_t left;
        bool spent;  /* ran out: the answer is not known */
};

/* Whether looking at n more mapping entries stays within the budget. */
static bool spend(struct budget *b, size_t n) {
        if (b->spent || n > b->left) {
                b->spent = true;
                return false;
        }
        b->left -= n;
        return true;
}

/* The value of `key` in mapping m: the last one given there, else the
 * first found through its merge keys ("<<: *a" or "<<: [*a, *b]", earlier
 * mappings first), as YAML 1.1 and the Kubernetes decoder have it. NULL
 * when there is none or the budget ran out (then b->spent). */
static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *m, const char *key, int depth, struct budget *b) {
        yaml_node_t *found = NULL;
        if (!m || m->type != YAML_MAPPING_NODE)
                return NULL;
        size_t n = (size_t) (m->data.mapping.pairs.top - m->data.mapping.pairs.start);
        if (!spend(b, n))
                return NULL;
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++)
                if (node_is(yaml_document_get_node(d, p->key), key))
                        found = yaml_document_get_node(d, p->value);
        if (found || depth >= MERGE_DEPTH)
                return found;
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top && !b->spent; p++) {
                yaml_node_t *k = yaml_document_get_node(d, p->key);
                if (!node_is(k, "<<") || k->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                        continue;
                yaml_node_t *v = yaml_document_get_node(d, p->value);
                if (v && v->type == YAML_MAPPING_NODE)
                        found = map_get(d, v, key, depth + 1, b);
                else if (v && v->type == YAML_SEQUENCE_NODE)
                        for (yaml_node_item_t *i = v->data.sequence.items.start;
                             !found && !b->spent && i < v->data.sequence.items.top; i++)
                                found = map_get(d, yaml_document_get_node(d, *i), key, depth + 1, b);
                if (found)
                        return found;
        }
        return NULL;
}

/* The targetNamespace of document d's root mapping: 0 and *out (NULL when
 * not given), or -EINVAL/-ENOMEM. */
static int target_namespace(yaml_document_t *d, yaml_node_t *root, char **out) {
        struct budget b = { .left = MERGE_BUDGET };
        yaml_node_t *spec = map_get(d, root, "spec", 0, &b);
        *out = NULL;
        if (b.spent)
                return -EINVAL; /* too many merges to tell */
        if (!spec || node_is_null(spec))
                return 0;
        if (spec->type != YAML_MAPPING_NODE)
                return -EINVAL;
        yaml_node_t *t = map_get(d, spec, "targetNamespace", 0, &b);
        if (b.spent)
                return -EINVAL;
        if (!t || node_is_null(t))
                return 0;
        if (t->type != YAML_SCALAR_NODE)
                return -EINVAL;
        const char *s = (const char *) t->data.scalar.value;
        size_t n = t->data.scalar.length;
        if (n == 0)
                return 0; /* "" is no target namespace, as for helm-controller */
        if (n > MANIFEST_MAX_NAME)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return -EINVAL;
        *out = strndup(s, n);
        return *out ? 0 : -ENOMEM;
}

int unowned_helm_release_namespace(const char *content, size_t len, const char *metadata_ns, char **out) {
        yaml_parser_t parser;
        _cleanup_free_ char *target = NULL;
        int r = 0;

        *out = NULL;
        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) (content ? content : ""), content ? len : 0);
        /* The first document that is not empty; each load consumes input,
         * and the manifest parser allows no more documents than this. */
        for (unsigned i = 0; i <= MANIFEST_MAX_DOCS_PER_FILE; i++) {
                yaml_document_t doc;
                if (!yaml_parser_load(&parser, &doc)) {
                        r = parser.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
                        break;
                }
                yaml_node_t *root = yaml_document_get_root_node(&doc);
                bool empty = root && root->type == YAML_SCALAR_NODE &&
                             (root->data.scalar.length == 0 || node_is_null(root));
                if (root && !empty)
                        r = root->type == YAML_MAPPING_NODE ? target_namespace(&doc, root, &target) : -EINVAL;
                yaml_document_delete(&doc);
                if (!root || !empty)
                        break;
        }
        yaml_parser_delete(&parser);
        if (r < 0)
                return r;
        if (target)
                *out = TAKE_PTR(target);
        else
                *out = strdup(metadata_ns && *metadata_ns ? metadata_ns : "default");
        return *out ? 0 : -ENOMEM;
}

/* ---- the list ------------------------------------------------------------- */

static void object_free(struct unowned_object *o) {
        free(o->file);
        free(o->group);
        free(o->version);
        free(o->kind);
        free(o->namespace);
        free(o->name);
        free(o->release_namespace);
        free(o->error);
        memset(o, 0, sizeof *o);
}

void unowned_list_free(struct unowned_list *l) {
        for (size_t i = 0; i < l->n; i++)
                object_free(&l->v[i]);
        free(l->v);
        memset(l, 0, sizeof *l);
}

/* A new zeroed entry at the end of l, or NULL (ENOMEM). */
static struct unowned_object *list_add(struct unowned_list *l) {
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 16;
                struct unowned_object *v = realloc(l->v, cap * sizeof *v);
                if (!v)
                        return NULL;
                l->v = v;
                l->cap = cap;
        }
        struct unowned_object *o = &l->v[l->n++];
        memset(o, 0, sizeof *o);
        return o;
}

static int add_error(struct unowned_list *l, const char *file, const char *error) {
        struct unowned_object *o = list_add(l);
        if (!o)
                return -ENOMEM;
        o->file = strdup(file);
        o->error = strdup(error);
        return o->file && o->error ? 0 : -ENOMEM;
}

static char *dup_opt(const char *s, bool *oom) {
        char *c = s ? strdup(s) : NULL;
        if (s && !c)
                *oom = true;
        return c;
}

static int add_manifest(struct unowned_list *l, const struct manifest *m) {
        struct unowned_object *o = list_add(l);
        bool oom = false;
        if (!o)
                return -ENOMEM;
        o->file = dup_opt(m->file, &oom);
        o->doc_index = m->doc_index;
        o->group = dup_opt(m->group, &oom);
        o->version = dup_opt(m->version, &oom);
        o->kind = dup_opt(m->kind, &oom);
        o->namespace = dup_opt(m->namespace, &oom);
        o->name = dup_opt(m->name, &oom);
        if (oom)
                return -ENOMEM;
        if (strcmp(m->group, UNOWNED_HELM_GROUP) != 0 || strcmp(m->kind, UNOWNED_HELM_KIND) != 0)
                return 0;
        int r = unowned_helm_release_namespace(m->content, m->content_len, m->namespace, &o->release_namespace);
        if (r == -EINVAL) {
                o->error = strdup("spec.targetNamespace is not a namespace; its release is not known");
                return o->error ? 0 : -ENOMEM;
        }
        return r;
}

/* ---- the scan ------------------------------------------------------------- */

static bool has_manifest_ext(const char *name) {
        static const char *const exts[] = { ".yaml", ".yml", ".json", NULL };
        size_t n = strlen(name);
        for (const char *const *e = exts; *e; e++) {
                size_t en = strlen(*e);
                if (n > en && strcmp(name + n - en, *e) == 0)
                        return true;
        }
        return false;
}

/* The bookkeeping's "files" object, or a new empty one when there is none. */
static int read_book_files(int dfd, json_object **files) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *doc = NULL;
        _cleanup_json_tokener_ json_tokener *tok = NULL;
        json_object *f;
        size_t len;

        *files = NULL;
        int r = manifestdir_read_at(dfd, MANIFESTDIR_BOOKKEEPING, MANIFESTDIR_MAX_BOOKKEEPING, &text, &len);
        if (r == -ENOENT) {
                *files = json_object_new_object();
                return *files ? 0 : -ENOMEM;
        }
        if (r == -EFBIG || r == -EISDIR || r == -ELOOP)
                return -EBADMSG;
        if (r < 0)
                return r;
        if (!(tok = json_tokener_new()))
                return -ENOMEM;
        doc = len <= INT32_MAX ? json_tokener_parse_ex(tok, text, (int) len) : NULL;
        if (json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(doc, json_type_object) ||
            !json_object_object_get_ex(doc, "files", &f) || !json_object_is_type(f, json_type_object))
                return -EBADMSG;
        *files = json_object_get(f);
        return 0;
}

/* Keep the UNOWNED_MAX_FILES smallest names (sorted) of all offered, so
 * that what a huge directory shows does not depend on readdir's order. */
struct names {
        char **v;
        size_t n;
        bool dropped;
};

static void names_free(struct names *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        memset(s, 0, sizeof *s);
}

static int names_offer(struct names *s, const char *name) {
        size_t lo = 0, hi = s->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(s->v[mid], name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == UNOWNED_MAX_FILES) {
                s->dropped = true;
                return 0;
        }
        if (!s->v && !(s->v = calloc(UNOWNED_MAX_FILES + 1, sizeof *s->v)))
                return -ENOMEM;
        char *c = strdup(name);
        if (!c)
                return -ENOMEM;
        memmove(s->v + lo + 1, s->v + lo, (s->n - lo) * sizeof *s->v);
        s->v[lo] = c;
        if (++s->n > UNOWNED_MAX_FILES) {
                free(s->v[--s->n]);
                s->dropped = true;
        }
        return 0;
}

/* DIR opened (*dfd; -1 and 0 when there is no DIR) and its bookkeeping's
 * "files" (*book). 0 or -errno with err. */
static int open_with_book(const char *dir, int *dfd, json_object **book, char *err, size_t errlen) {
        *dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*dfd < 0)
                return errno == ENOENT ? 0 : errmsg(err, errlen, -errno, "cannot open %s: %m", dir);
        int r = read_book_files(*dfd, book);
        if (r == -EBADMSG)
                return errmsg(err, errlen, r, "%s/%s is not muster's bookkeeping", dir, MANIFESTDIR_BOOKKEEPING);
        if (r < 0)
                return errmsg(err, errlen, r, "cannot read %s/%s: %m", dir, MANIFESTDIR_BOOKKEEPING);
        return 0;
}

/* The candidate names of dfd: regular files, not dot files, manifest
 * extensions, not muster's. */
static int list_names(int dfd, json_object *book, struct names *out) {
        int fd = dup(dfd);
        if (fd < 0)
                return -errno;
        _cleanup_closedir_ DIR *d = fdopendir(fd);
        if (!d) {
                int r = -errno;
                close(fd);
                return r;
        }
        for (;;) {
                struct stat st;
                errno = 0;
                struct dirent *de = readdir(d);
                if (!de)
                        return errno ? -errno : 0;
                const char *name = de->d_name;
                if (name[0] == '.' || !has_manifest_ext(name) || json_object_object_get_ex(book, name, NULL))
                        continue;
                if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                int r = names_offer(out, name);
                if (r < 0)
                        return r;
        }
}

/* One file's entries; 1 when the object limit stopped it. */
static int scan_file(int dfd, const char *name, struct unowned_list *l) {
        _cleanup_free_ char *data = NULL;
        struct manifest_list ml = { 0 };
        char why[512];
        size_t len;

        if (l->n >= UNOWNED_MAX_OBJECTS)
                return 1;
        int r = manifestdir_read_at(dfd, name, UNOWNED_MAX_FILE, &data, &len);
        if (r == -ENOENT || r == -ELOOP || r == -EISDIR)
                return 0; /* gone or replaced since it was listed: not a file to report */
        if (r == -EFBIG)
                return add_error(l, name, "larger than 1 MiB; not read");
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                snprintf(why, sizeof why, "cannot read it: %s", strerror(-r));
                return add_error(l, name, why);
        }
        why[0] = '\0';
        r = manifest_parse_file(name, data, len, &ml, why, sizeof why);
        if (r == -ENOMEM) {
                manifest_list_free(&ml);
                return r;
        }
        if (r < 0) {
                manifest_list_free(&ml);
                return add_error(l, name, why[0] ? why : strerror(-r));
        }
        for (size_t i = 0; i < ml.n && r == 0; i++) {
                if (l->n >= UNOWNED_MAX_OBJECTS)
                        r = 1;
                else
                        r = add_manifest(l, &ml.v[i]);
        }
        manifest_list_free(&ml);
        return r;
}

int unowned_scan(const char *dir, struct unowned_list *out, char *err, size_t errlen) {
        _cleanup_json_ json_object *book = NULL;
        _cleanup_close_ int dfd = -1;
        struct names names = { 0 };
        int r;

        memset(out, 0, sizeof *out);
        if (err && errlen)
                err[0] = '\0';
        if ((r = open_with_book(dir, &dfd, &book, err, errlen)) < 0 || dfd < 0)
                return r;
        r = list_names(dfd, book, &names);
        if (r < 0) {
                names_free(&names);
                return errmsg(err, errlen, r, "cannot list %s: %m", dir);
        }
        out->truncated = names.dropped;
        for (size_t i = 0; i < names.n; i++) {
                r = scan_file(dfd, names.v[i], out);
                if (r < 0) {
                        names_free(&names);
                        return errmsg(err, errlen, r, "cannot read %s/%s: %m", dir, names.v[i]);
                }
                if (r > 0) {
                        out->truncated = true;
                        break;
                }
        }
        names_free(&names);
        return 0;
}

/* ---- answers -------------------------------------------------------------- */

json_object *unowned_list_to_json(const struct unowned_list *l) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < l->n; i++) {
                const struct unowned_object *f = &l->v[i];
                json_object *o = json_object_new_object();
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        return NULL;
                }
                if (jadd(o, "file", json_object_new_string(f->file ? f->file : "")) < 0 ||
                    jadd_str_or_null(o, "group", f->group) < 0 || jadd_str_or_null(o, "version", f->version) < 0 ||
                    jadd_str_or_null(o, "kind", f->kind) < 0 || jadd_str_opt(o, "namespace", f->namespace) < 0 ||
                    jadd_str_or_null(o, "name", f->name) < 0 ||
                    jadd_str_opt(o, "release_namespace", f->release_namespace) < 0 ||
                    jadd_str_opt(o, "error", f->error) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

bool unowned_helm_conflict(const struct unowned_list *l, const char *name, const char *release_ns,
                           const char **file) {
        if (!l || !name || !release_ns)
                return false;
        for (size_t i = 0; i < l->n; i++) {
                const struct unowned_object *f = &l->v[i];
                if (!f->kind || !f->group || !f->name || !f->release_namespace ||
                    strcmp(f->kind, UNOWNED_HELM_KIND) != 0 || strcmp(f->group, UNOWNED_HELM_GROUP) != 0 ||
                    strcmp(f->name, name) != 0 || strcmp(f->release_namespace, release_ns) != 0)
                        continue;
                if (file)
                        *file = f->file;
                return true;
        }
        return false;
}

/* ---- deletions (DESIGN §9) -------------------------------------------------- */

static bool str_eq(const char *a, const char *b) {
        return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Whether one of del names the object (group, kind, namespace, name). */
static bool is_named(const struct payload_deletion *del, size_t n, const char *group, const char *kind,
                     const char *ns, const char *name) {
        if (!kind || !name)
                return false;
        for (size_t i = 0; i < n; i++) {
                const struct payload_deletion *d = &del[i];
                if (!d->kind || !d->name || !str_eq(d->group, group) || strcmp(d->kind, kind) != 0 ||
                    strcmp(d->name, name) != 0 || !d->namespace != !ns || (ns && strcmp(d->namespace, ns) != 0))
                        continue;
                return true;
        }
        return false;
}

static int deleted_add(json_object *deleted, const char *file, const struct manifest *m) {
        if (!deleted)
                return 0;
        json_object *o = json_object_new_object();
        if (!o || json_object_array_add(deleted, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        if (jadd(o, "file", json_object_new_string(file)) < 0 || jadd(o, "group", jstr_or_empty(m->group)) < 0 ||
            jadd(o, "kind", json_object_new_string(m->kind)) < 0 || jadd_str_opt(o, "namespace", m->namespace) < 0 ||
            jadd(o, "name", json_object_new_string(m->name)) < 0)
                return -ENOMEM;
        return 0;
}

/* The named objects of dfd/name out of it: how many, 0 when the file is
 * gone, changed into something else or no longer holds one. */
static int delete_in_file(int dfd, const char *dir, const char *name, const struct payload_deletion *del, size_t n,
                          json_object *deleted, char *err, size_t errlen) {
        _cleanup_free_ char *data = NULL, *rest = NULL;
        struct manifest_list ml = { 0 };
        size_t len, off = 0, rest_len = 0;
        unsigned named = 0;
        struct stat st;
        char why[512];
        int r;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : errmsg(err, errlen, -errno, "cannot look at %s/%s: %m", dir, name);
        if (!S_ISREG(st.st_mode))
                return 0;
        r = manifestdir_read_at(dfd, name, UNOWNED_MAX_FILE, &data, &len);
        if (r == -ENOENT || r == -ELOOP || r == -EISDIR || r == -EFBIG)
                return 0; /* gone or replaced since it was scanned: not what was found */
        if (r < 0)
                return errmsg(err, errlen, r, "cannot read %s/%s: %m", dir, name);
        r = manifest_parse_file(name, data, len, &ml, why, sizeof why);
        if (r == -ENOMEM)
                goto out;
        if (r < 0) {
                r = 0; /* changed since the scan; the next scan reports it */
                goto out;
        }
        /* The documents must give back the file, or the rest would not be
         * what its owner wrote. */
        for (size_t i = 0; i < ml.n; i++) {
                const struct manifest *m = &ml.v[i];
                if (m->content_len > len - off || memcmp(data + off, m->content, m->content_len) != 0)
                        break;
                off += m->content_len;
                named += is_named(del, n, m->group, m->kind, m->namespace, m->name);
        }
        if (off != len) {
                r = errmsg(err, errlen, -EBADMSG, "cannot split %s/%s into its documents exactly; not changed", dir,
                           name);
                goto out;
        }
        if (named == 0) {
                r = 0;
                goto out;
        }
        if (named == ml.n) {
                if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
                        r = errmsg(err, errlen, -errno, "cannot remove %s/%s: %m", dir, name);
                        goto out;
                }
        } else {
                if (!(rest = malloc(len + 1))) {
                        r = -ENOMEM;
                        goto out;
                }
                for (size_t i = 0; i < ml.n; i++) {
                        const struct manifest *m = &ml.v[i];
                        if (is_named(del, n, m->group, m->kind, m->namespace, m->name))
                                continue;
                        memcpy(rest + rest_len, m->content, m->content_len);
                        rest_len += m->content_len;
                }
                r = manifestdir_write_atomic_at(dfd, name, rest, rest_len, st.st_mode & 07777);
                if (r < 0) {
                        r = errmsg(err, errlen, r, "cannot rewrite %s/%s: %m", dir, name);
                        goto out;
                }
        }
        for (size_t i = 0; i < ml.n; i++) {
                const struct manifest *m = &ml.v[i];
                if (is_named(del, n, m->group, m->kind, m->namespace, m->name) &&
                    (r = deleted_add(deleted, name, m)) < 0)
                        goto out;
        }
        r = (int) named;
out:
        manifest_list_free(&ml);
        if (r == -ENOMEM)
                errmsg(err, errlen, r, "out of memory");
        return r;
}

int unowned_delete(const char *dir, const struct unowned_list *found, const struct payload_deletion *del, size_t n,
                   json_object *deleted, char *err, size_t errlen) {
        _cleanup_json_ json_object *book = NULL;
        _cleanup_close_ int dfd = -1;
        int total = 0, r = 0;

        if (err && errlen)
                err[0] = '\0';
        if (!dir || !found || found->n == 0 || n == 0 || !del)
                return 0;
        if ((r = open_with_book(dir, &dfd, &book, err, errlen)) < 0 || dfd < 0)
                return r;
        for (size_t i = 0; i < found->n && r >= 0; i++) {
                const char *file = found->v[i].file;
                bool wanted = false;
                if (!file || (i > 0 && found->v[i - 1].file && strcmp(found->v[i - 1].file, file) == 0))
                        continue; /* one look per file */
                for (size_t j = i; j < found->n && found->v[j].file && strcmp(found->v[j].file, file) == 0; j++) {
                        const struct unowned_object *f = &found->v[j];
                        wanted = wanted || is_named(del, n, f->group, f->kind, f->namespace, f->name);
                }
                if (!wanted || !manifestdir_name_is_valid(file) || !has_manifest_ext(file) ||
                    json_object_object_get_ex(book, file, NULL))
                        continue;
                r = delete_in_file(dfd, dir, file, del, n, deleted, err, errlen);
                if (r > 0)
                        total += r;
        }
        /* What was removed before a failure stays removed: make it last. */
        if (total > 0 && fsync(dfd) < 0 && r >= 0)
                r = errmsg(err, errlen, -errno, "cannot sync %s: %m", dir);
        return r < 0 ? r : total;
}
