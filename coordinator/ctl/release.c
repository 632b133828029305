/* `musterctl release ...`: releases as musterd keeps them. import sends a
 * release directory's files as they are (release.yaml with its os_image
 * path made absolute, the manifests byte for byte; nothing reached through
 * a link out of the directory) and prints musterd's warnings; show puts a release
 * next to the preview of what a cluster of it would get. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "ctl.h"
#include "fdio.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "strv.h"

/* ---- import ----------------------------------------------------------------- */

/* Whether the canonical path p lies under the canonical folder dir. */
static bool path_under(const char *p, const char *dir) {
        size_t n = strlen(dir);
        if (n == 1 && dir[0] == '/')
                return true;
        return strncmp(p, dir, n) == 0 && p[n] == '/';
}

/* 0 if dir/name, every link resolved, stays inside the release folder
 * (canonical `root`); CTL_EXIT_FAIL with the reason otherwise. A release
 * folder is what is sent: a link out of it would send any file the caller
 * can read (musterctl often runs as root). */
static int check_inside(const char *root, const char *dir, const char *name) {
        _cleanup_free_ char *joined = NULL;
        char real[PATH_MAX];
        if (asprintf(&joined, "%s/%s", dir, name) < 0) {
                joined = NULL;
                return ctl_fail("out of memory");
        }
        if (!realpath(joined, real))
                return ctl_fail("cannot read %s: %s", joined, strerror(errno));
        if (!path_under(real, root))
                return ctl_fail("%s leads out of the release folder %s (to %s): refused", joined, root, real);
        return 0;
}

/* The whole of dir/name, exactly, at most `max` bytes; NULL with a message. */
static char *read_exact(int dfd, const char *dir, const char *name, size_t max, size_t *len) {
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
                ctl_fail("cannot read %s/%s: %s", dir, name, strerror(errno));
                return NULL;
        }
        if (!S_ISREG(st.st_mode)) {
                ctl_fail("%s/%s is not a file", dir, name);
                return NULL;
        }
        if ((uint64_t) st.st_size > max) {
                ctl_fail("%s/%s is larger than the %zu MiB a release may carry", dir, name, max >> 20);
                return NULL;
        }
        /* The size may change while we read: read to the end, bounded. */
        char *buf;
        size_t n;
        int r = fd_read_all(fd, (size_t) st.st_size, max, &buf, &n);
        if (r == -EFBIG)
                ctl_fail("%s/%s is larger than the %zu MiB a release may carry", dir, name, max >> 20);
        else if (r == -ENOMEM)
                ctl_fail("out of memory");
        else if (r < 0)
                ctl_fail("cannot read %s/%s: %s", dir, name, strerror(-r));
        if (r < 0)
                return NULL;
        if (!ctl_text_is_utf8(buf, n)) {
                free(buf);
                ctl_fail("%s/%s is not UTF-8 text", dir, name);
                return NULL;
        }
        *len = n;
        return buf;
}

static bool is_manifest_name(const char *n) {
        size_t l = strlen(n);
        if (n[0] == '.' || strcmp(n, "release.yaml") == 0)
                return false;
        return (l > 5 && strcmp(n + l - 5, ".yaml") == 0) || (l > 4 && strcmp(n + l - 4, ".yml") == 0) ||
               (l > 5 && strcmp(n + l - 5, ".json") == 0);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The manifest files of dir, sorted; regular files only (links followed).
 * 0, or CTL_EXIT_FAIL with the reason printed. */
static int list_manifests(int dfd, const char *dir, struct strv *names, uint64_t *total) {
        int fd = dup(dfd);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return ctl_fail("cannot list %s: %s", dir, strerror(errno));
        }
        _cleanup_closedir_ DIR *dd = d;
        struct dirent *e;
        errno = 0;
        while ((e = readdir(dd))) {
                struct stat st;
                if (!is_manifest_name(e->d_name))
                        continue;
                if (fstatat(dfd, e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue; /* subdirectories, dangling links, devices */
                if (names->n >= CTL_MAX_RELEASE_FILES)
                        return ctl_fail("%s has more than %d manifest files", dir, CTL_MAX_RELEASE_FILES);
                *total += (uint64_t) st.st_size;
                if (*total > CTL_MAX_RELEASE_BYTES)
                        return ctl_fail("the release in %s is larger than the %d MiB an import may carry", dir,
                                        CTL_MAX_RELEASE_BYTES >> 20);
                if (strv_push(names, e->d_name) < 0)
                        return ctl_fail("out of memory");
                errno = 0;
        }
        if (errno)
                return ctl_fail("cannot list %s: %s", dir, strerror(errno));
        if (names->n > 1)
                qsort(names->v, names->n, sizeof *names->v, cmp_str);
        return 0;
}

/* release.yaml's text with a relative os_image.path made absolute against
 * dir (which must then exist, inside the canonical folder root). *text is
 * replaced; 0 or CTL_EXIT_FAIL. */
static int absolute_image_path(const char *root, const char *dir, char **text, size_t *len) {
        size_t start, end, nl;
        _cleanup_free_ char *value = NULL;
        int quote;
        int k = ctl_release_find_path(*text, *len, &start, &end, &value, &quote);
        if (k == -EINVAL)
                return ctl_fail("%s/release.yaml is not YAML", dir); /* the server says where */
        if (k == -ENOTSUP)
                return ctl_fail("%s/release.yaml: write os_image.path on one line, plain or quoted", dir);
        if (k < 0)
                return ctl_fail("out of memory");
        if (k == 0 || value[0] == '/')
                return 0;
        if (!*value)
                return ctl_fail("%s/release.yaml: os_image.path is empty", dir);
        _cleanup_free_ char *joined = NULL;
        char abs[PATH_MAX];
        if (asprintf(&joined, "%s/%s", dir, value) < 0) {
                joined = NULL;
                return ctl_fail("out of memory");
        }
        if (!realpath(joined, abs))
                return ctl_fail("os_image.path %s of %s/release.yaml: %s", value, dir, strerror(errno));
        if (!path_under(abs, root))
                return ctl_fail("os_image.path %s of %s/release.yaml leads out of the release folder %s (to %s): "
                                "refused", value, dir, root, abs);
        if (!ctl_text_is_utf8(abs, strlen(abs)))
                return ctl_fail("the OS image path %s is not UTF-8", abs);
        char *out = ctl_release_splice_path(*text, *len, start, end, quote, abs, &nl);
        if (!out)
                return ctl_fail("out of memory");
        free(*text);
        *text = out;
        *len = nl;
        return 0;
}

/* The import's warnings on stderr, one a line: "musterctl: warning: ...". */
static void print_warnings(json_object *answer) {
        json_object *w = ctl_jget(answer, "warnings");
        size_t n = ctl_jlen(w);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *t = ctl_text_sanitize(ctl_jstr(json_object_array_get_idx(w, i), "message") ?: "?");
                fprintf(stderr, "musterctl: warning: %s\n", t ?: "?");
        }
        if (n > 0)
                fprintf(stderr, "musterctl: --strict refuses a release with such warnings\n");
}

/* --strict into *strict, and the one DIR. true to go on; false with *rc
 * the exit status (0 after --help). */
static bool parse_import_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, bool *strict,
                                 int *rc) {
        enum { O_STRICT = CTL_OPT_FIRST_LOCAL };
        static const struct option opts[] = {
                { "strict", no_argument, NULL, O_STRICT },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case O_STRICT: *strict = true; break;
                default: *rc = CTL_EXIT_USAGE; return false;
                }
        }
        *rc = ctl_want_args(cmd, argc, argv, 1, "DIR");
        return *rc == 0;
}

/* The manifests `names` of the release folder (dfd; `dir` as given, `root`
 * canonical) appended to `files` as {name, content}; `total` counts the
 * bytes sent so far. 0, or CTL_EXIT_FAIL with the reason printed. */
static int add_manifests(json_object *files, int dfd, const char *root, const char *dir, const struct strv *names,
                         uint64_t total) {
        for (size_t i = 0; i < names->n; i++) {
                size_t n;
                if (check_inside(root, dir, names->v[i]))
                        return CTL_EXIT_FAIL;
                _cleanup_free_ char *content = read_exact(dfd, dir, names->v[i], CTL_MAX_RELEASE_BYTES, &n);
                if (!content)
                        return CTL_EXIT_FAIL;
                total += n;
                if (total > CTL_MAX_RELEASE_BYTES)
                        return ctl_fail("the release in %s is larger than the %d MiB an import may carry", dir,
                                        CTL_MAX_RELEASE_BYTES >> 20);
                json_object *f = json_object_new_object();
                if (!f)
                        return ctl_fail("out of memory");
                json_object_object_add(f, "name", json_object_new_string(names->v[i]));
                json_object_object_add(f, "content", json_object_new_string_len(content, (int) n));
                json_object_array_add(files, f);
        }
        return 0;
}

/* The import request: release.yaml's text (`yaml`), the manifests and
 * --strict. NULL with the reason printed, also when the request would be
 * larger than an import may carry. */
static json_object *import_body(int dfd, const char *root, const char *dir, const char *yaml, size_t len,
                                const struct strv *names, bool strict) {
        _cleanup_json_ json_object *body = json_object_new_object();
        json_object *files = json_object_new_array();
        if (!body || !files) {
                json_object_put(files);
                ctl_fail("out of memory");
                return NULL;
        }
        json_object_object_add(body, "release_yaml", json_object_new_string_len(yaml, (int) len));
        json_object_object_add(body, "files", files);
        if (strict)
                json_object_object_add(body, "strict", json_object_new_boolean(true));
        if (add_manifests(files, dfd, root, dir, names, len))
                return NULL;
        /* Escaping makes the request larger than the files; the server's limit is on the request. */
        const char *text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        if (!text) {
                ctl_fail("out of memory");
                return NULL;
        }
        if (strlen(text) > CTL_MAX_RELEASE_BYTES) {
                ctl_fail("the release in %s is %zu MiB as a request, more than the %d MiB an import may carry", dir,
                         strlen(text) >> 20, CTL_MAX_RELEASE_BYTES >> 20);
                return NULL;
        }
        return TAKE_PTR(body);
}

/* What the import answered: the release object with -o json, else a line
 * with its version and how many manifests came of `nfiles` files. */
static int print_imported(struct ctl *c, json_object *answer, size_t nfiles) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(answer);
        _cleanup_free_ char *v = ctl_text_sanitize(ctl_jstr(answer, "version") ?: "?");
        int64_t m = ctl_jint(answer, "manifest_count", -1);
        if (m >= 0)
                printf("release %s imported: %lld manifests from %zu files\n", v, (long long) m, nfiles);
        else
                printf("release %s imported: %zu files\n", v, nfiles);
        return CTL_EXIT_OK;
}

int ctl_release_import(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        bool strict = false;
        int rc;
        if (!parse_import_options(c, cmd, argc, argv, &strict, &rc))
                return rc;
        const char *dir = argv[optind];
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return ctl_fail("cannot open the release directory %s: %s", dir, strerror(errno));
        char root[PATH_MAX];
        if (!realpath(dir, root))
                return ctl_fail("cannot open the release directory %s: %s", dir, strerror(errno));
        size_t len;
        if (check_inside(root, dir, "release.yaml"))
                return CTL_EXIT_FAIL;
        _cleanup_free_ char *yaml = read_exact(dfd, dir, "release.yaml", CTL_MAX_RELEASE_BYTES, &len);
        if (!yaml)
                return CTL_EXIT_FAIL;
        if (absolute_image_path(root, dir, &yaml, &len))
                return CTL_EXIT_FAIL;
        _cleanup_strv_ struct strv names = { 0 };
        uint64_t total = len;
        if (list_manifests(dfd, dir, &names, &total))
                return CTL_EXIT_FAIL;
        _cleanup_json_ json_object *body = import_body(dfd, root, dir, yaml, len, &names, strict);
        if (!body)
                return CTL_EXIT_FAIL;

        struct ctl_reply r;
        rc = ctl_call_object(c, "POST", MUSTER_PATH_RELEASES, body, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        if (rc == CTL_EXIT_OK) {
                print_warnings(r.json);
                rc = print_imported(c, r.json, names.n);
        }
        ctl_reply_free(&r);
        return rc;
}

/* ---- list, show, delete ------------------------------------------------------- */

static const char *image_of(json_object *rel) {
        return ctl_jstr(rel, "os_image.path") ?: ctl_jstr(rel, "os_image.url");
}

/* "None, v4.11, vCurrent" of capability_sets (malloc'd). */
static char *set_names(json_object *rel) {
        json_object *sets = ctl_jget(rel, "capability_sets"), *a = json_object_new_array();
        if (!a)
                return NULL;
        if (sets && json_object_is_type(sets, json_type_object)) {
                json_object_object_foreach(sets, k, v) {
                        (void) v;
                        json_object_array_add(a, json_object_new_string(k));
                }
        }
        char *s = ctl_join(a, "");
        json_object_put(a);
        return s;
}

static int release_row(struct ctl_table *t, json_object *e) {
        char size[32] = "", known[16], created[32], age[16];
        int64_t sz = ctl_jint(e, "os_image.size", -1);
        if (sz >= 0)
                ctl_format_size(sz, size, sizeof size);
        json_object *k = ctl_jget(e, "known_capabilities");
        snprintf(known, sizeof known, "%zu", ctl_jlen(k));
        _cleanup_free_ char *sets = set_names(e);
        const char *row[] = {
                ctl_jstr(e, "version"), ctl_jstr(e, "manifest_count"), known, sets, image_of(e), size,
                ctl_jstr(e, "os_image.sha256"), ctl_jstr(e, "default_profile"),
                ctl_time(ctl_jstr(e, "created_at"), created, sizeof created),
                ctl_age(ctl_jstr(e, "created_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

int ctl_release_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "VERSION", 0, 0, 0 },
                { "MANIFESTS", CTL_COL_RIGHT, 0, 0 },
                { "CAPS", CTL_COL_RIGHT, 3, 0 },
                { "SETS", CTL_COL_FLEX, 4, 12 },
                { "OS-IMAGE", CTL_COL_FLEX | CTL_COL_MIDDLE, 2, 16 },
                { "SIZE", CTL_COL_RIGHT, 5, 0 },
                { "SHA256", CTL_COL_WIDE, 0, 0 },
                { "PROFILE", CTL_COL_WIDE, 0, 0 },
                { "CREATED", CTL_COL_WIDE, 0, 0 },
                { "AGE", 0, 1, 0 },
        };
        return ctl_list_all(c, cmd, argc, argv, MUSTER_PATH_RELEASES, cols, sizeof cols / sizeof *cols, release_row);
}

/* A version as the API names it; usage error (2) otherwise. */
static int check_version(const struct ctl_cmd *cmd, const char *v) {
        size_t n = strlen(v);
        if (n == 0 || n > 64 ||
            strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") != n)
                return ctl_usage_error(cmd, "\"%s\" is not a release version (letters, digits and ._+-)", v);
        return 0;
}

static void add_release_kv(struct ctl_kv *kv, json_object *rel) {
        char size[32], w[64];
        ctl_kv_add(kv, "Version", ctl_jstr(rel, "version"), 0);
        ctl_kv_add(kv, "OS image", image_of(rel), CTL_KV_ID);
        ctl_kv_add(kv, "Image SHA-256", ctl_jstr(rel, "os_image.sha256"), CTL_KV_ID);
        if (ctl_jint(rel, "os_image.size", -1) >= 0)
                ctl_kv_add(kv, "Image size", ctl_format_size(ctl_jint(rel, "os_image.size", -1), size, sizeof size), 0);
        ctl_kv_add(kv, "Root label", ctl_jstr(rel, "os_image.root_label"), 0);
        ctl_kv_add(kv, "Profile", ctl_jstr(rel, "default_profile"), 0);
        ctl_kv_add(kv, "Manifests", ctl_jstr(rel, "manifest_count"), 0);
        _cleanup_free_ char *known = ctl_join(ctl_jget(rel, "known_capabilities"), "none");
        ctl_kv_add(kv, "Known caps", known, 0);
        json_object *sets = ctl_jget(rel, "capability_sets");
        if (sets && json_object_is_type(sets, json_type_object)) {
                json_object_object_foreach(sets, name, caps) {
                        char key[96];
                        snprintf(key, sizeof key, "Set %s", name);
                        _cleanup_free_ char *list = ctl_join(caps, "(none)");
                        ctl_kv_add(kv, key, list, 0);
                }
        }
        ctl_kv_add(kv, "Created", ctl_when(ctl_jstr(rel, "created_at"), w, sizeof w), 0);
}

/* "namespace/name" or "name". */
static int manifest_row(struct ctl_table *t, json_object *m, bool excluded) {
        _cleanup_free_ char *name = NULL;
        if (asprintf(&name, "%s%s%s", ctl_jstr(m, "namespace") ?: "", ctl_jstr(m, "namespace") ? "/" : "",
                     ctl_jstr(m, "name") ?: "") < 0) {
                name = NULL;
                return -ENOMEM;
        }
        const char *row[] = { ctl_jstr(m, "path"), ctl_jstr(m, "kind"), name, ctl_jstr(m, "file"), ctl_jstr(m, "group"),
                              excluded ? ctl_jstr(m, "reason") : NULL, excluded ? ctl_jstr(m, "message") : NULL };
        return ctl_table_add(t, row);
}

static int print_manifests(struct ctl *c, json_object *list, bool excluded) {
        static const struct ctl_col inc_cols[] = {
                { "PATH", CTL_COL_FLEX | CTL_COL_MIDDLE, 0, 36 },
                { "KIND", CTL_COL_FLEX, 0, 10 },
                { "NAME", CTL_COL_FLEX, 1, 16 },
                { "FILE", CTL_COL_WIDE, 0, 0 },
                { "GROUP", CTL_COL_WIDE, 0, 0 },
        };
        static const struct ctl_col exc_cols[] = {
                { "PATH", CTL_COL_FLEX | CTL_COL_MIDDLE, 0, 36 },
                { "KIND", CTL_COL_FLEX, 2, 10 },
                { "NAME", CTL_COL_FLEX, 1, 12 },
                { "FILE", CTL_COL_WIDE, 0, 0 },
                { "GROUP", CTL_COL_WIDE, 0, 0 },
                { "REASON", 0, 0, 0 },
                { "MESSAGE", CTL_COL_WIDE, 0, 0 },
        };
        struct ctl_table t;
        int r = 0;
        size_t n = ctl_jlen(list);
        ctl_table_init(&t, excluded ? exc_cols : inc_cols, excluded ? 7 : 5);
        for (size_t i = 0; i < n && r == 0; i++)
                r = manifest_row(&t, json_object_array_get_idx(list, i), excluded);
        r = r < 0 ? ctl_fail("out of memory") : ctl_print_table(c, &t);
        ctl_table_free(&t);
        return r;
}

/* What `release show` was asked for: the preview's options. */
struct show_opts {
        const char *profile, *fs, *baseline;
        json_object *enable, *exclude; /* arrays of names */
};

/* The options into so, and the one VERSION. true to go on; false with *rc
 * the exit status (0 after --help). */
static bool parse_show_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, struct show_opts *so,
                               int *rc) {
        enum { O_PROFILE = CTL_OPT_FIRST_LOCAL, O_FS, O_BASELINE, O_ENABLE, O_EXCLUDE };
        static const struct option opts[] = {
                { "profile", required_argument, NULL, O_PROFILE },
                { "feature-set", required_argument, NULL, O_FS },
                { "baseline", required_argument, NULL, O_BASELINE },
                { "enable", required_argument, NULL, O_ENABLE },
                { "exclude", required_argument, NULL, O_EXCLUDE },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                *rc = CTL_EXIT_USAGE;
                switch (o) {
                case CTL_OPT_HELP: *rc = CTL_EXIT_OK; return false;
                case CTL_OPT_BAD: return false;
                case O_PROFILE: so->profile = optarg; break;
                case O_FS: so->fs = optarg; break;
                case O_BASELINE: so->baseline = optarg; break;
                case O_ENABLE:
                case O_EXCLUDE:
                        *rc = ctl_opt_names(cmd, o == O_ENABLE ? "--enable" : "--exclude", "names",
                                            o == O_ENABLE ? so->enable : so->exclude, optarg, true);
                        if (*rc)
                                return false;
                        break;
                default: return false;
                }
        }
        *rc = CTL_EXIT_USAGE;
        if (ctl_want_args(cmd, argc, argv, 1, "VERSION") || check_version(cmd, argv[optind]))
                return false;
        if ((so->profile && !*so->profile) || (so->fs && !*so->fs) || (so->baseline && !*so->baseline)) {
                ctl_usage_error(cmd, "--profile, --feature-set and --baseline take a name");
                return false;
        }
        return true;
}

/* The release's path into *rpath and its preview's, the options in the
 * query, into *ppath. 0, or the exit status with the error printed. */
static int show_paths(const struct ctl_cmd *cmd, const struct show_opts *so, const char *version, char **rpath,
                      char **ppath) {
        _cleanup_free_ char *add = ctl_join_sep(so->enable, ",", ""), *exc = ctl_join_sep(so->exclude, ",", "");
        if (!add || !exc)
                return ctl_fail("out of memory");
        struct ctl_query q = { 0 };
        ctl_query_add(&q, "profile", so->profile);
        ctl_query_add(&q, "feature_set", so->fs);
        ctl_query_add(&q, "baseline", so->baseline);
        ctl_query_add(&q, "additional", *add ? add : NULL);
        ctl_query_add(&q, "exclude", *exc ? exc : NULL);
        if (q.overflow)
                return ctl_usage_error(cmd, "the options are too long");
        if (asprintf(rpath, MUSTER_PATH_RELEASE("%s"), version) < 0 ||
            asprintf(ppath, MUSTER_PATH_RELEASE_PREVIEW("%s") "%s", version, q.buf) < 0)
                return ctl_fail("out of memory");
        return 0;
}

/* The release, then what a cluster of it gets and the manifests included
 * and excluded, each after a heading. */
static int print_release(struct ctl *c, const struct show_opts *so, json_object *rel, json_object *pre) {
        struct ctl_kv kv = { 0 };
        add_release_kv(&kv, rel);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        json_object *inc = ctl_jget(pre, "included"), *exl = ctl_jget(pre, "excluded");
        size_t ni = ctl_jlen(inc);
        size_t ne = ctl_jlen(exl);
        _cleanup_free_ char *enabled = ctl_join(ctl_jget(pre, "capabilities.enabled"), "none");
        struct ctl_kv pk = { 0 };
        ctl_kv_add(&pk, "Profile", ctl_jstr(pre, "profile") ?: so->profile, 0);
        ctl_kv_add(&pk, "Feature set", ctl_jstr(pre, "feature_set") ?: so->fs, 0);
        ctl_kv_add(&pk, "Enabled caps", enabled, 0);
        if (r == 0) {
                puts("\nWhat a cluster gets:");
                r = ctl_print_kv(c, &pk);
        }
        ctl_kv_free(&pk);
        if (r == 0) {
                printf("\nIncluded manifests (%zu):\n", ni);
                r = print_manifests(c, inc, false);
        }
        if (r == 0) {
                printf("\nExcluded manifests (%zu):\n", ne);
                r = print_manifests(c, exl, true);
        }
        return r;
}

int ctl_release_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        _cleanup_json_ json_object *enable = json_object_new_array();
        _cleanup_json_ json_object *exclude = json_object_new_array();
        struct show_opts so = { .enable = enable, .exclude = exclude };
        int r;
        if (!enable || !exclude)
                return ctl_fail("out of memory");
        if (!parse_show_options(c, cmd, argc, argv, &so, &r))
                return r;
        _cleanup_free_ char *rpath = NULL, *ppath = NULL;
        if ((r = show_paths(cmd, &so, argv[optind], &rpath, &ppath)))
                return r;

        struct ctl_reply rel, pre;
        if (ctl_call_object(c, "GET", rpath, NULL, &rel) < 0) {
                ctl_reply_free(&rel);
                return CTL_EXIT_FAIL;
        }
        if (ctl_call_object(c, "GET", ppath, NULL, &pre) < 0) {
                ctl_reply_free(&rel);
                ctl_reply_free(&pre);
                return CTL_EXIT_FAIL;
        }
        if (c->output == CTL_OUT_JSON) {
                json_object_object_add(rel.json, "preview", json_object_get(pre.json));
                r = ctl_print_json(rel.json);
        } else
                r = print_release(c, &so, rel.json, pre.json);
        ctl_reply_free(&rel);
        ctl_reply_free(&pre);
        return r;
}

int ctl_release_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "VERSION", &rc))
                return rc;
        if (check_version(cmd, argv[optind]))
                return CTL_EXIT_USAGE;
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, MUSTER_PATH_RELEASE("%s"), argv[optind]) < 0) {
                path = NULL;
                return ctl_fail("out of memory");
        }
        struct ctl_reply r;
        rc = ctl_call(c, "DELETE", path, NULL, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        ctl_reply_free(&r);
        if (rc == CTL_EXIT_OK && c->output != CTL_OUT_JSON)
                printf("release %s deleted\n", argv[optind]);
        return rc;
}
