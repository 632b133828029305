/* Catalog directories (catalog.h): a directory's files checked and taken in
 * path order, its bundles/<B>/ parts given to their bundles; the same
 * directory read from disk for musterctl without following a link out of
 * it; and the canonical form of a file set, as musterd stores a catalog. */
#include "catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canonjson.h"
#include "cleanup.h"
#include "errmsg.h"
#include "fdio.h"
#include "json-cleanup.h"
#include "manifest.h"

static bool ends_with(const char *s, size_t n, const char *suffix) {
        size_t k = strlen(suffix);
        return n > k && memcmp(s + n - k, suffix, k) == 0;
}

/* A name (or path) of a file catalog_parse or a manifest may be read from. */
static bool catalog_ext(const char *s) {
        size_t n = strlen(s);
        return ends_with(s, n, ".json") || ends_with(s, n, ".yaml") || ends_with(s, n, ".yml");
}

/* ---- paths -------------------------------------------------------------- */

int catalog_path_check(const char *path, char *why, size_t whylen) {
        if (!path || !*path)
                return errmsg(why, whylen, -EINVAL, "a file has an empty path");
        size_t n = strnlen(path, CATALOG_MAX_PATH + 1);
        if (n > CATALOG_MAX_PATH)
                return errmsg(why, whylen, -EINVAL, "%.64s...: a path has at most %d bytes", path, CATALOG_MAX_PATH);
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) path[i] < 0x20 || path[i] == 0x7f)
                        return errmsg(why, whylen, -EINVAL, "%.128s: a path holds a control character", path);
        if (path[0] == '/')
                return errmsg(why, whylen, -EINVAL, "%.128s: the path is absolute, not relative to the catalog", path);
        size_t depth = 0;
        for (const char *c = path;;) {
                const char *slash = strchr(c, '/');
                size_t len = slash ? (size_t) (slash - c) : strlen(c);
                if (len == 0)
                        return errmsg(why, whylen, -EINVAL, "%.128s: the path has an empty component", path);
                if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
                        return errmsg(why, whylen, -EINVAL, "%.128s: the path has a \".\" or \"..\" component", path);
                if (len > CATALOG_MAX_PATH_PART)
                        return errmsg(why, whylen, -EINVAL, "%.128s: a component is longer than %d bytes", path,
                                      CATALOG_MAX_PATH_PART);
                if (++depth > CATALOG_MAX_DEPTH)
                        return errmsg(why, whylen, -EINVAL, "%.128s: more than %d components", path,
                                      CATALOG_MAX_DEPTH);
                if (!slash)
                        return 0;
                c = slash + 1;
        }
}

/* ---- loading a directory given as files ---------------------------------- */

enum fkind { FK_IGNORE, FK_CATALOG, FK_MANIFEST, FK_DEPS, FK_NESTED };

/* What a path is to catalog_load_files: for the bundles/<B>/ kinds, B
 * (bundle, blen bytes) and the file's name below manifests/ or metadata/. */
struct fclass {
        enum fkind kind;
        const char *bundle;
        size_t blen;
        const char *base;
};

static struct fclass classify(const char *path) {
        struct fclass c = { .kind = catalog_ext(path) ? FK_CATALOG : FK_IGNORE };
        if (strncmp(path, "bundles/", 8) != 0)
                return c;
        const char *b = path + 8, *s1 = strchr(b, '/');
        const char *sub = s1 ? s1 + 1 : NULL, *s2 = sub ? strchr(sub, '/') : NULL;
        if (!s2)
                return c;
        const char *rest = s2 + 1;
        bool deeper = strchr(rest, '/') != NULL;
        struct fclass d = { .bundle = b, .blen = (size_t) (s1 - b), .base = rest };
        if (s2 - sub == 9 && !strncmp(sub, "manifests", 9)) {
                d.kind = !catalog_ext(rest) ? FK_IGNORE : deeper ? FK_NESTED : FK_MANIFEST;
                return d;
        }
        if (s2 - sub == 8 && !strncmp(sub, "metadata", 8)) {
                d.kind = !deeper && (!strcmp(rest, "dependencies.yaml") || !strcmp(rest, "dependencies.yml"))
                                 ? FK_DEPS
                                 : FK_IGNORE;
                return d;
        }
        return c;
}

/* By path; a missing path first (it is refused). */
static int cmp_file_ptr(const void *a, const void *b) {
        const char *x = (*(const struct catalog_file *const *) a)->path;
        const char *y = (*(const struct catalog_file *const *) b)->path;
        return !x || !y ? (x != NULL) - (y != NULL) : strcmp(x, y);
}

/* The files as pointers in path order, each path checked, none twice. */
static int sorted_files(const struct catalog_file *files, size_t n, const struct catalog_file ***out, char *err,
                        size_t errlen) {
        *out = NULL;
        if (n > CATALOG_MAX_FILES)
                return errmsg(err, errlen, -E2BIG, "a catalog has at most %d files, this one %zu", CATALOG_MAX_FILES,
                              n);
        const struct catalog_file **v = calloc(n ? n : 1, sizeof *v);
        if (!v)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
                v[i] = &files[i];
        /* Checked in path order too: the first bad path is the same one
         * whatever the order given. */
        qsort(v, n, sizeof *v, cmp_file_ptr);
        for (size_t i = 0; i < n; i++) {
                int r = catalog_path_check(v[i]->path, err, errlen);
                if (r >= 0 && !v[i]->content && v[i]->len)
                        r = errmsg(err, errlen, -EINVAL, "%s: no content", v[i]->path);
                if (r < 0) {
                        free(v);
                        return r;
                }
        }
        for (size_t i = 1; i < n; i++)
                if (!strcmp(v[i - 1]->path, v[i]->path)) {
                        int r = errmsg(err, errlen, -EINVAL, "%s: the path is given twice", v[i]->path);
                        free(v);
                        return r;
                }
        *out = v;
        return 0;
}

/* A parser's "NAME:LINE: WHAT" (or "NAME: WHAT") as "PATH:LINE: olm.bundle
 * \"B\": WHAT", the form of every catalog error. */
static int relocate(char *err, size_t errlen, int r, const char *msg, const char *name, const char *path,
                    const char *bundle) {
        size_t nl = strlen(name);
        const char *rest = !strncmp(msg, name, nl) && msg[nl] == ':' ? msg + nl + 1 : msg;
        size_t digits = strspn(rest, "0123456789");
        char line[24] = "";
        if (digits && digits < sizeof line - 1 && rest[digits] == ':') {
                snprintf(line, sizeof line, ":%.*s", (int) digits, rest);
                rest += digits + 1;
        }
        rest += strspn(rest, " ");
        return errmsg(err, errlen, r, "%s%s: olm.bundle \"%s\": %s", path, line, bundle, rest);
}

/* Every file that is not bundles/<B>/ content, through catalog_parse. */
static int parse_catalog_files(const struct catalog_file **v, size_t n, struct catalog *out, char *err,
                               size_t errlen) {
        for (size_t i = 0; i < n; i++) {
                if (classify(v[i]->path).kind != FK_CATALOG)
                        continue;
                int r = catalog_parse(v[i]->content, v[i]->len, v[i]->path, out, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

struct bkey {
        const char *name;
        size_t i;
};

static int cmp_bkey(const void *a, const void *b) {
        const struct bkey *x = a, *y = b;
        int d = strcmp(x->name, y->name);
        return d ? d : (x->i > y->i) - (x->i < y->i);
}

/* The bundle named by the first blen bytes of name, the first one declared
 * when there are several (catalog_check refuses those). */
static struct catalog_bundle *find_bundle(struct catalog *c, const struct bkey *keys, const char *name,
                                          size_t blen) {
        char want[CATALOG_MAX_PATH_PART + 1];
        snprintf(want, sizeof want, "%.*s", (int) blen, name);
        size_t lo = 0, hi = c->n_bundles;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(keys[mid].name, want) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < c->n_bundles && !strcmp(keys[lo].name, want) ? &c->bundles[keys[lo].i] : NULL;
}

/* bundles/<B>/manifests/<F>: checked as a release manifest, then kept. */
static int dir_manifest(const struct catalog_file *f, const struct fclass *k, struct catalog_bundle *b, char *err,
                        size_t errlen) {
        struct manifest_list ml = { 0 };
        char why[512] = "";
        int r = f->len > CATALOG_MAX_MANIFEST ? -E2BIG : manifest_parse_file(k->base, f->content, f->len, &ml, why,
                                                                            sizeof why);
        size_t docs = ml.n;
        manifest_list_free(&ml);
        if (r == -ENOMEM)
                return errmsg(err, errlen, r, "out of memory");
        if (r == -E2BIG && !why[0])
                snprintf(why, sizeof why, "a manifest has at most %u bytes", CATALOG_MAX_MANIFEST);
        if (r < 0)
                return relocate(err, errlen, r, why, k->base, f->path, b->name);
        if (docs == 0)
                return relocate(err, errlen, -EINVAL, "the file holds no Kubernetes object", "", f->path, b->name);
        r = catalog_bundle_add_manifest(b, k->base, f->content, f->len);
        if (r == -EEXIST)
                return relocate(err, errlen, -EINVAL, "a manifest of the bundle already has this name", "", f->path,
                                b->name);
        if (r == -E2BIG)
                snprintf(why, sizeof why, "a bundle has at most %d manifests", CATALOG_MAX_MANIFESTS);
        if (r == -E2BIG)
                return relocate(err, errlen, r, why, "", f->path, b->name);
        if (r < 0)
                return relocate(err, errlen, r, r == -ENOMEM ? "out of memory" : "not a manifest file name", "",
                                f->path, b->name);
        return 0;
}

/* One bundles/<B>/ file into its bundle. */
static int bundle_file(struct catalog *c, const struct bkey *keys, const struct catalog_file *f, char *err,
                       size_t errlen) {
        struct fclass k = classify(f->path);
        char bname[CATALOG_MAX_PATH_PART + 1];
        snprintf(bname, sizeof bname, "%.*s", (int) k.blen, k.bundle);
        if (k.kind == FK_NESTED)
                return relocate(err, errlen, -EINVAL, "manifests are files right under manifests/, not deeper", "",
                                f->path, bname);
        struct catalog_bundle *b = find_bundle(c, keys, k.bundle, k.blen);
        if (!b)
                return relocate(err, errlen, -EINVAL, "no olm.bundle blob of the catalog declares this bundle", "",
                                f->path, bname);
        if (k.kind == FK_MANIFEST)
                return dir_manifest(f, &k, b, err, errlen);
        char why[512] = "";
        int r = catalog_parse_dependencies(f->content, f->len, f->path, b, why, sizeof why);
        if (r < 0)
                return relocate(err, errlen, r, why, f->path, f->path, bname);
        return 0;
}

/* The bundles/<B>/ files, each into the bundle it names. */
static int bundle_files(const struct catalog_file **v, size_t n, struct catalog *c, char *err, size_t errlen) {
        struct bkey *keys = calloc(c->n_bundles + 1, sizeof *keys);
        if (!keys)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        for (size_t i = 0; i < c->n_bundles; i++)
                keys[i] = (struct bkey){ c->bundles[i].name, i };
        qsort(keys, c->n_bundles, sizeof *keys, cmp_bkey);
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                enum fkind k = classify(v[i]->path).kind;
                if (k == FK_MANIFEST || k == FK_DEPS || k == FK_NESTED)
                        r = bundle_file(c, keys, v[i], err, errlen);
        }
        free(keys);
        return r;
}

int catalog_load_files(const struct catalog_file *files, size_t n, struct catalog *out, char *err, size_t errlen) {
        const struct catalog_file **v;
        *out = (struct catalog){ 0 };
        if (err && errlen)
                err[0] = '\0';
        int r = sorted_files(files, n, &v, err, errlen);
        if (r < 0)
                return r;
        if ((r = parse_catalog_files(v, n, out, err, errlen)) >= 0 && (r = bundle_files(v, n, out, err, errlen)) >= 0)
                r = catalog_check(out, err, errlen);
        free(v);
        if (r < 0)
                catalog_free(out);
        return r;
}

/* ---- reading a directory from disk --------------------------------------- */

struct rdir {
        const char *top;            /* as given, for messages */
        char topbuf[PATH_MAX];      /* the folder of a single file */
        char root[PATH_MAX];        /* canonical */
        char rel[CATALOG_MAX_PATH + 1];
        struct catalog_file *v;
        size_t n, cap;
        uint64_t total;
        char *err;
        size_t errlen;
};

void catalog_files_free(struct catalog_file *files, size_t n) {
        for (size_t i = 0; files && i < n; i++) {
                free((char *) files[i].path);
                free((char *) files[i].content);
        }
        free(files);
}

/* The regular file open on fd becomes w->rel's file. */
static int take_file(struct rdir *w, int fd) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return errmsg(w->err, w->errlen, -errno, "cannot read %s/%s: %m", w->top, w->rel);
        if (!S_ISREG(st.st_mode))
                return errmsg(w->err, w->errlen, -EINVAL, "%s/%s is not a regular file", w->top, w->rel);
        if (w->n >= CATALOG_MAX_FILES)
                return errmsg(w->err, w->errlen, -E2BIG, "%s has more than %d catalog files", w->top,
                              CATALOG_MAX_FILES);
        char why[256];
        if (catalog_path_check(w->rel, why, sizeof why) < 0)
                return errmsg(w->err, w->errlen, -EINVAL, "%s/%s", w->top, why);
        char *buf = NULL;
        size_t len = 0;
        int r = fd_read_all(fd, (size_t) st.st_size, CATALOG_MAX_INPUT, &buf, &len);
        if (r == -EFBIG)
                return errmsg(w->err, w->errlen, -E2BIG, "%s/%s is larger than %u bytes", w->top, w->rel,
                              CATALOG_MAX_INPUT);
        if (r < 0)
                return errmsg(w->err, w->errlen, r, "cannot read %s/%s: %m", w->top, w->rel);
        w->total += len;
        if (memchr(buf, '\0', len) || w->total > CATALOG_MAX_DIR_BYTES) {
                free(buf);
                return w->total > CATALOG_MAX_DIR_BYTES
                               ? errmsg(w->err, w->errlen, -E2BIG, "%s holds more than %u bytes of catalog files",
                                        w->top, CATALOG_MAX_DIR_BYTES)
                               : errmsg(w->err, w->errlen, -EINVAL, "%s/%s is not text (it holds a NUL byte)",
                                        w->top, w->rel);
        }
        if (w->n == w->cap) {
                size_t ncap = w->cap ? w->cap * 2 : 16;
                struct catalog_file *nv = realloc(w->v, ncap * sizeof *nv);
                if (!nv) {
                        free(buf);
                        return errmsg(w->err, w->errlen, -ENOMEM, "out of memory");
                }
                w->v = nv;
                w->cap = ncap;
        }
        w->v[w->n] = (struct catalog_file){ strdup(w->rel), buf, len };
        if (!w->v[w->n].path) {
                free(buf);
                return errmsg(w->err, w->errlen, -ENOMEM, "out of memory");
        }
        w->n++;
        return 0;
}

static bool path_under(const char *p, const char *dir) {
        size_t n = strlen(dir);
        if (n == 1 && dir[0] == '/')
                return p[1] != '\0';
        return strncmp(p, dir, n) == 0 && p[n] == '/';
}

/* A symbolic link w->rel: followed to a regular catalog file inside the
 * tree; one to a directory or out of the tree is refused. */
static int take_link(struct rdir *w, const char *name) {
        _cleanup_free_ char *full = NULL;
        char real[PATH_MAX];
        struct stat st;
        if (asprintf(&full, "%s/%s", w->root, w->rel) < 0) {
                full = NULL;
                return errmsg(w->err, w->errlen, -ENOMEM, "out of memory");
        }
        if (stat(full, &st) < 0)
                return catalog_ext(name) ? errmsg(w->err, w->errlen, -ENOENT, "%s/%s: a link to nothing", w->top,
                                                  w->rel)
                                         : 0;
        if (S_ISDIR(st.st_mode))
                return errmsg(w->err, w->errlen, -EINVAL, "%s/%s is a link to a directory: not followed", w->top,
                              w->rel);
        if (!catalog_ext(name))
                return 0;
        if (!realpath(full, real) || !path_under(real, w->root))
                return errmsg(w->err, w->errlen, -EACCES, "%s/%s leads out of the catalog directory %s: refused",
                              w->top, w->rel, w->root);
        _cleanup_close_ int fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return errmsg(w->err, w->errlen, -errno, "cannot read %s/%s: %m", w->top, w->rel);
        return take_file(w, fd);
}

static int walk(struct rdir *w, int dfd, size_t rel_len, int depth);

/* One entry `name` of the directory dfd (w->rel is that directory). */
static int take_entry(struct rdir *w, int dfd, const char *name, size_t rel_len, int depth) {
        size_t nl = strlen(name), at = rel_len ? rel_len + 1 : 0;
        if (at + nl > CATALOG_MAX_PATH)
                return errmsg(w->err, w->errlen, -E2BIG, "%s/%s/%s: the path is longer than %d bytes", w->top,
                              w->rel, name, CATALOG_MAX_PATH);
        if (rel_len)
                w->rel[rel_len] = '/';
        memcpy(w->rel + at, name, nl + 1);
        struct stat st;
        int r = 0;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                r = errmsg(w->err, w->errlen, -errno, "cannot read %s/%s: %m", w->top, w->rel);
        else if (S_ISDIR(st.st_mode)) {
                int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (depth + 1 >= CATALOG_MAX_DEPTH)
                        r = errmsg(w->err, w->errlen, -E2BIG, "%s/%s: more than %d levels deep", w->top, w->rel,
                                   CATALOG_MAX_DEPTH);
                else if (sub < 0)
                        r = errmsg(w->err, w->errlen, -errno, "cannot read %s/%s: %m", w->top, w->rel);
                else
                        r = walk(w, sub, at + nl, depth + 1);
                if (sub >= 0)
                        close(sub);
        } else if (S_ISLNK(st.st_mode))
                r = take_link(w, name);
        else if (catalog_ext(name)) {
                _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
                r = fd < 0 ? errmsg(w->err, w->errlen, -errno, "cannot read %s/%s: %m", w->top, w->rel)
                           : take_file(w, fd);
        }
        w->rel[rel_len] = '\0';
        return r;
}

/* The entries of directory dfd (borrowed), hidden ones left out. */
static int walk(struct rdir *w, int dfd, size_t rel_len, int depth) {
        int fd = dup(dfd);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                int r = -errno;
                if (fd >= 0)
                        close(fd);
                return errmsg(w->err, w->errlen, r, "cannot list %s/%s: %m", w->top, w->rel);
        }
        _cleanup_closedir_ DIR *dd = d;
        struct dirent *e;
        int r = 0;
        errno = 0;
        while (r >= 0 && (e = readdir(dd))) {
                if (e->d_name[0] != '.')
                        r = take_entry(w, dfd, e->d_name, rel_len, depth);
                errno = 0;
        }
        if (r >= 0 && errno)
                r = errmsg(w->err, w->errlen, -errno, "cannot list %s/%s: %m", w->top, w->rel);
        return r;
}

static int cmp_file(const void *a, const void *b) {
        return strcmp(((const struct catalog_file *) a)->path, ((const struct catalog_file *) b)->path);
}

/* One file given by its own path: named by its base name. */
static int read_one(struct rdir *w, int fd, const char *path) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        if (!catalog_ext(base) || strlen(base) > CATALOG_MAX_PATH_PART || base[0] == '.')
                return errmsg(w->err, w->errlen, -EINVAL, "%s: a catalog file is named *.json, *.yaml or *.yml",
                              path);
        snprintf(w->rel, sizeof w->rel, "%s", base);
        snprintf(w->topbuf, sizeof w->topbuf, "%.*s", slash ? (int) (slash - path) : 1, slash ? path : ".");
        w->top = w->topbuf;
        return take_file(w, fd);
}

int catalog_read_dir(const char *path, struct catalog_file **files, size_t *n, char *err, size_t errlen) {
        struct rdir *w = calloc(1, sizeof *w);
        struct stat st;
        *files = NULL;
        *n = 0;
        if (!w)
                return errmsg(err, errlen, -ENOMEM, "out of memory");
        *w = (struct rdir){ .top = path, .err = err, .errlen = errlen };
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        int r = 0;
        if (fd < 0 || fstat(fd, &st) < 0)
                r = errmsg(err, errlen, -errno, "cannot read %s: %m", path);
        else if (S_ISDIR(st.st_mode))
                r = realpath(path, w->root) ? walk(w, fd, 0, 0) : errmsg(err, errlen, -errno, "cannot read %s: %m", path);
        else if (S_ISREG(st.st_mode))
                r = read_one(w, fd, path);
        else
                r = errmsg(err, errlen, -EINVAL, "%s is neither a directory nor a regular file", path);
        if (r < 0) {
                catalog_files_free(w->v, w->n);
                free(w);
                return r;
        }
        qsort(w->v, w->n, sizeof *w->v, cmp_file);
        *files = w->v;
        *n = w->n;
        free(w);
        return 0;
}

/* ---- the canonical form ---------------------------------------------------- */

int catalog_files_to_canonical(const struct catalog_file *files, size_t n, char **out, size_t *len) {
        *out = NULL;
        *len = 0;
        if (n > CATALOG_MAX_FILES)
                return -E2BIG;
        _cleanup_free_ const struct catalog_file **v = calloc(n ? n : 1, sizeof *v);
        _cleanup_json_ json_object *a = json_object_new_array_ext((int) n);
        if (!v || !a)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!files[i].path || (!files[i].content && files[i].len))
                        return -EINVAL;
                if (files[i].len > INT32_MAX)
                        return -E2BIG;
                v[i] = &files[i];
        }
        qsort(v, n, sizeof *v, cmp_file_ptr);
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_new_object();
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        return -ENOMEM;
                }
                json_object *p = json_object_new_string(v[i]->path);
                json_object *c = json_object_new_string_len(v[i]->content ? v[i]->content : "", (int) v[i]->len);
                if (!p || !c || json_object_object_add(o, "path", p) < 0) {
                        json_object_put(p);
                        json_object_put(c);
                        return -ENOMEM;
                }
                if (json_object_object_add(o, "content", c) < 0) {
                        json_object_put(c);
                        return -ENOMEM;
                }
        }
        return canonjson_serialize(a, out, len);
}

/* A copy of the string member key of o (NUL-terminated; its length in *len). */
static int dup_member(json_object *o, const char *key, char **out, size_t *len) {
        json_object *v;
        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return -EINVAL;
        size_t n = (size_t) json_object_get_string_len(v);
        if (!(*out = malloc(n + 1)))
                return -ENOMEM;
        memcpy(*out, json_object_get_string(v), n + 1);
        if (len)
                *len = n;
        return 0;
}

int catalog_files_from_canonical(const char *text, size_t len, struct catalog_file **files, size_t *n) {
        *files = NULL;
        *n = 0;
        if (!text || len > INT32_MAX)
                return -EINVAL;
        _cleanup_json_tokener_ json_tokener *tok = json_tokener_new_ex(4);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        _cleanup_json_ json_object *a = json_tokener_parse_ex(tok, text, (int) len);
        if (json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(a, json_type_array))
                return -EINVAL;
        size_t k = json_object_array_length(a);
        if (k > CATALOG_MAX_FILES)
                return -E2BIG;
        struct catalog_file *v = calloc(k ? k : 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < k && r >= 0; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                char *path = NULL, *content = NULL;
                size_t plen = 0;
                if ((r = dup_member(o, "path", &path, &plen)) >= 0 && strlen(path) != plen)
                        r = -EINVAL;
                if (r >= 0)
                        r = dup_member(o, "content", &content, &v[i].len);
                v[i].path = path;
                v[i].content = content;
        }
        if (r < 0) {
                catalog_files_free(v, k);
                return r;
        }
        *files = v;
        *n = k;
        return 0;
}
