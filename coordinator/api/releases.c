/* Releases over the API (DESIGN §3, §6-7): import of a release.yaml and its
 * manifests in one request, listing, the filter preview, deletion, the OS
 * image of a path release streamed from the releases folder (one Range
 * honoured, for an agent resuming), and musterd's public signing key. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "api.h"
#include "capability.h"
#include "cleanup.h"
#include "clusterrel.h"
#include "crypto.h"
#include "iso.h"
#include "json-cleanup.h"
#include "log.h"
#include "manifest.h"
#include "release.h"

#define MAX_RELEASE_FILES 10000
#define MAX_QUERY_LIST 256     /* entries of ?additional= and ?exclude= */
#define MAX_QUERY_TOKEN 128

static bool version_ok(const char *v) {
        size_t n = strlen(v);
        if (n == 0 || n > RELEASE_MAX_VERSION)
                return false;
        for (size_t i = 0; i < n; i++) {
                char ch = v[i];
                bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
                if (!alnum && !(i > 0 && (ch == '.' || ch == '_' || ch == '+' || ch == '-')))
                        return false;
        }
        return true;
}

/* The release of the path, or answers (400, 404) and returns -errno. */
static int load(struct svc *sv, struct http_request *req, struct http_response *resp, bool manifests,
                struct loaded_release *lr) {
        const char *v = req->params[0];
        if (!version_ok(v)) {
                *lr = (struct loaded_release) { 0 };
                store_release_init(&lr->r);
                http_error(resp, 400, "\"%.64s\" is not a release version", v);
                return -EINVAL;
        }
        int r = release_load(sv, v, manifests, lr);
        if (r == -ENOENT)
                http_error(resp, 404, "release %s is not imported", v);
        else if (r < 0)
                api_store_error(resp, r, "release");
        return r;
}

static json_object *release_json(const struct store_release *r) {
        json_object *o = release_info_to_json(&r->info);
        if (!o)
                return NULL;
        json_object_object_add(o, "manifest_count", json_object_new_int64(r->manifest_count));
        if (r->created_at)
                json_object_object_add(o, "created_at", json_object_new_string(r->created_at));
        return o;
}

/* ---- import ------------------------------------------------------------- */

struct in_file {
        const char *name;
        const char *content;
        size_t len;
};

static int cmp_file(const void *a, const void *b) {
        return strcmp(((const struct in_file *) a)->name, ((const struct in_file *) b)->name);
}

/* ---- the OS image of a path release ---------------------------------------- */

/* Whether the canonical path p is dir or lies under it. */
static bool path_under(const char *p, const char *dir) {
        size_t n = strlen(dir);
        if (n == 1 && dir[0] == '/')
                return true;
        return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Open the resolved path `rel` below the directory dfd without following any
 * link on the way (the resolution was done; a link swapped in since is
 * refused) and without blocking on a FIFO. openat2 where the kernel (or a
 * seccomp filter) allows it, else O_NOFOLLOW on the whole path. */
static int open_beneath(int dfd, const char *rel, const char *whole) {
        static _Atomic int have_openat2 = 1;
        const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
        if (have_openat2) {
                struct open_how how = {
                        .flags = (uint64_t) flags,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                int fd = (int) syscall(SYS_openat2, dfd, rel, &how, sizeof how);
                if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
                        return fd;
                have_openat2 = 0;
        }
        return open(whole, flags | O_NOFOLLOW);
}

/* The OS image `path` of a release (absolute, or relative to the releases
 * folder) opened for reading, if it is a regular file under the releases
 * folder ([releases] image_dir) once every link is resolved, and not one of
 * the state directory's files. The fd (blocking again) and its stat, or
 * -errno with the reason in why: a reason names the path and the folder,
 * never anything about the file's content. Nothing here blocks on a FIFO. */
static int os_image_open(struct svc *sv, const char *path, struct stat *st, char *why, size_t whylen) {
        const struct muster_config *cfg = svc_cfg(sv);
        char folder[PATH_MAX], state[PATH_MAX], real[PATH_MAX];
        _cleanup_free_ char *configured = NULL, *joined = NULL;

        if (cfg->releases_image_dir[0])
                configured = strdup(cfg->releases_image_dir);
        else if (asprintf(&configured, "%s/images", cfg->state_dir) < 0)
                configured = NULL;
        if (!configured)
                return -ENOMEM;
        if (!realpath(configured, folder)) {
                int r = -errno;
                snprintf(why, whylen,
                         "the releases folder %.256s ([releases] image_dir) is missing on musterd's machine: %s",
                         configured, strerror(-r));
                return r;
        }
        if (!realpath(cfg->state_dir, state))
                return -errno;
        if (path[0] != '/') {
                if (asprintf(&joined, "%s/%s", folder, path) < 0) {
                        joined = NULL;
                        return -ENOMEM;
                }
                path = joined;
        }
        /* realpath() only reads links and stats: it never opens the file. */
        if (!realpath(path, real) || !path_under(real, folder) || strcmp(real, folder) == 0) {
                snprintf(why, whylen, "os_image.path %.256s is not a file under the releases folder %.256s "
                         "([releases] image_dir)", path, folder);
                return -EACCES;
        }
        /* A folder that holds the state directory must not hand out its keys. */
        if (path_under(real, state) && !(path_under(folder, state) && strcmp(folder, state) != 0)) {
                snprintf(why, whylen, "os_image.path %.256s is in musterd's state directory", path);
                return -EACCES;
        }
        /* Nor the store kept elsewhere (its -wal and -shm files included). */
        const char *db = strncmp(cfg->store, "sqlite:", 7) == 0 ? cfg->store + 7
                         : cfg->store[0] == '/'                ? cfg->store
                                                               : NULL;
        char dbreal[PATH_MAX];
        if (db && realpath(db, dbreal) && strncmp(real, dbreal, strlen(dbreal)) == 0) {
                snprintf(why, whylen, "os_image.path %.256s is musterd's store", path);
                return -EACCES;
        }
        _cleanup_close_ int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        const char *rel = real + strlen(folder);
        while (*rel == '/')
                rel++;
        int fd = open_beneath(dfd, rel, real);
        if (fd < 0) {
                int r = -errno;
                snprintf(why, whylen, "os_image.path %.256s cannot be opened on musterd's machine: %s", path,
                         r == -ELOOP ? "it was replaced by a symbolic link" : strerror(-r));
                return r;
        }
        if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
                close(fd);
                snprintf(why, whylen, "os_image.path %.256s is not a regular file", path);
                return -EINVAL;
        }
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* The OS image of a path release must be in the releases folder as
 * release.yaml describes it. 0, or answers 400 and returns -errno. A refusal
 * names what release.yaml says, never the size or digest of the file found
 * (which may be any file: they would tell an admin about a key). */
static int check_os_image(struct svc *sv, const struct release_os_image *img, struct http_response *resp) {
        struct crypto_sha256_ctx ctx;
        uint8_t sum[CRYPTO_SHA256_LEN];
        char hex[2 * CRYPTO_SHA256_LEN + 1], why[1024] = "";
        struct stat st;
        _cleanup_free_ char *buf = NULL;
        const size_t bufsz = 1 << 20;
        int64_t total = 0;

        _cleanup_close_ int fd = os_image_open(sv, img->path, &st, why, sizeof why);
        if (fd == -ENOMEM) {
                http_error(resp, 500, "out of memory");
                return fd;
        }
        if (fd < 0) {
                if (why[0])
                        http_error(resp, 400, "%s", why);
                else
                        http_error(resp, 400, "os_image.path %.256s cannot be checked on musterd's machine: %s",
                                   img->path, strerror(-fd));
                return fd;
        }
        if ((int64_t) st.st_size != img->size) {
                http_error(resp, 400, "os_image.path %.256s does not have the size release.yaml gives (%lld bytes)",
                           img->path, (long long) img->size);
                return -EINVAL;
        }
        if (!(buf = malloc(bufsz)) || crypto_sha256_init(&ctx) < 0) {
                http_error(resp, 500, "out of memory");
                return -ENOMEM;
        }
        for (;;) {
                ssize_t n = read(fd, buf, bufsz);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        crypto_sha256_free(&ctx);
                        http_error(resp, 400, "os_image.path %.256s cannot be read: %s", img->path, strerror(errno));
                        return -EINVAL;
                }
                if (n == 0)
                        break;
                crypto_sha256_update(&ctx, buf, (size_t) n);
                total += n;
        }
        crypto_sha256_final(&ctx, sum);
        crypto_hex(sum, sizeof sum, hex);
        if (total != img->size || strcmp(hex, img->sha256) != 0) {
                http_error(resp, 400, "os_image.path %.256s does not have the sha256 release.yaml gives (%s)",
                           img->path, img->sha256);
                return -EINVAL;
        }
        return 0;
}

/* The files of the body, sorted by name (the release order). 0, or answers
 * 400 and returns -EINVAL. */
static int read_files(json_object *body, struct in_file **out, size_t *n, struct http_response *resp) {
        json_object *a;
        *out = NULL;
        *n = 0;
        if (!json_object_object_get_ex(body, "files", &a) || !json_object_is_type(a, json_type_array)) {
                http_error(resp, 400, "field \"files\" must be an array of {name, content}");
                return -EINVAL;
        }
        size_t len = json_object_array_length(a);
        if (len > MAX_RELEASE_FILES) {
                http_error(resp, 400, "a release has at most %d files, this one %zu", MAX_RELEASE_FILES, len);
                return -EINVAL;
        }
        struct in_file *v = calloc(len ? len : 1, sizeof *v);
        if (!v) {
                http_error(resp, 500, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < len; i++) {
                json_object *e = json_object_array_get_idx(a, i), *name, *content;
                if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "name", &name) ||
                    !json_object_is_type(name, json_type_string) || !json_object_object_get_ex(e, "content", &content) ||
                    !json_object_is_type(content, json_type_string)) {
                        http_error(resp, 400, "files[%zu] must be an object with string members name and content", i);
                        goto fail;
                }
                v[i].name = json_object_get_string(name);
                v[i].content = json_object_get_string(content);
                v[i].len = (size_t) json_object_get_string_len(content);
                size_t nl = (size_t) json_object_get_string_len(name);
                if (nl == 0 || nl > MANIFEST_MAX_FILE_NAME || strlen(v[i].name) != nl || strchr(v[i].name, '/') ||
                    v[i].name[0] == '.') {
                        http_error(resp, 400, "files[%zu]: \"%.64s\" is not a plain file name", i, v[i].name);
                        goto fail;
                }
                if (strlen(v[i].content) != v[i].len) {
                        http_error(resp, 400, "%s: the content contains a NUL byte", v[i].name);
                        goto fail;
                }
                if (v[i].len > MANIFEST_MAX_FILE) {
                        http_error(resp, 400, "%s: %zu bytes, a manifest file may have at most %d", v[i].name, v[i].len,
                                   MANIFEST_MAX_FILE);
                        goto fail;
                }
        }
        qsort(v, len, sizeof *v, cmp_file);
        for (size_t i = 1; i < len; i++)
                if (strcmp(v[i - 1].name, v[i].name) == 0) {
                        http_error(resp, 400, "file %s is given twice", v[i].name);
                        goto fail;
                }
        *out = v;
        *n = len;
        return 0;
fail:
        free(v);
        return -EINVAL;
}

#define MAX_WARNINGS_IN_REASON 5

/* Every manifest naming a capability release.yaml does not declare, as
 * {file, document, capability, message}: such a manifest is never installed,
 * which is most likely a mistake in the release. NULL on ENOMEM. */
static json_object *undeclared_warnings(const struct release_info *info, const struct manifest_list *ms) {
        _cleanup_json_ json_object *a = json_object_new_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < ms->n; i++) {
                struct strv names = { 0 };
                if (cap_undeclared(&ms->v[i], &info->known_capabilities, &names) < 0) {
                        strv_free(&names);
                        return NULL;
                }
                for (size_t k = 0; k < names.n; k++) {
                        char msg[512];
                        snprintf(msg, sizeof msg, "%.128s: %s names capability \"%.64s\", which release.yaml does "
                                 "not declare (known_capabilities): that manifest is never installed",
                                 ms->v[i].file, CAP_ANN_CAPABILITY, names.v[k]);
                        json_object *w = json_object_new_object();
                        if (!w || json_object_array_add(a, w) < 0) {
                                json_object_put(w);
                                strv_free(&names);
                                return NULL;
                        }
                        json_object_object_add(w, "file", json_object_new_string(ms->v[i].file));
                        json_object_object_add(w, "document", json_object_new_int((int) ms->v[i].doc_index));
                        json_object_object_add(w, "capability", json_object_new_string(names.v[k]));
                        json_object_object_add(w, "message", json_object_new_string(msg));
                }
                strv_free(&names);
        }
        return TAKE_PTR(a);
}

/* With "strict": true, warnings refuse the import: 400 naming the first few. */
static void refuse_warnings(json_object *warnings, struct http_response *resp) {
        char reason[2048];
        size_t n = json_object_array_length(warnings), len = 0;
        len += (size_t) snprintf(reason, sizeof reason,
                                 "strict import: %zu manifest%s name%s capabilities release.yaml does not declare:", n,
                                 n == 1 ? "" : "s", n == 1 ? "s" : "");
        for (size_t i = 0; i < n && i < MAX_WARNINGS_IN_REASON && len < sizeof reason; i++) {
                json_object *w = json_object_array_get_idx(warnings, i);
                len += (size_t) snprintf(reason + len, sizeof reason - len, "%s %s (%s)", i ? "," : "",
                                         json_object_get_string(json_object_object_get(w, "file")),
                                         json_object_get_string(json_object_object_get(w, "capability")));
        }
        if (n > MAX_WARNINGS_IN_REASON && len < sizeof reason)
                snprintf(reason + len, sizeof reason - len, " and %zu more", n - MAX_WARNINGS_IN_REASON);
        http_error(resp, 400, "%s", reason);
}

void api_release_import(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct release_info info;
        struct manifest_list ms = { 0 };
        struct store_release stored;
        _cleanup_free_ struct in_file *files = NULL;
        size_t n_files = 0;
        json_object *y, *strict = NULL;
        _cleanup_json_ json_object *warnings = NULL;
        char err[512];
        int r;

        release_info_init(&info);
        store_release_init(&stored);
        if (!api_need_infra_admin(req, resp))
                goto out;
        if (!json_object_object_get_ex(req->body, "release_yaml", &y) || !json_object_is_type(y, json_type_string)) {
                http_error(resp, 400, "field \"release_yaml\" must hold the text of release.yaml");
                goto out;
        }
        err[0] = '\0';
        if ((r = release_info_parse_yaml(json_object_get_string(y), (size_t) json_object_get_string_len(y), &info, err,
                                         sizeof err)) < 0) {
                if (r == -ENOMEM)
                        http_error(resp, 500, "out of memory");
                else
                        http_error(resp, 400, "%s%s", strncmp(err, "release.yaml", 12) == 0 ? "" : "release.yaml: ",
                                   err[0] ? err : "not a valid release file");
                goto out;
        }
        if (read_files(req->body, &files, &n_files, resp) < 0)
                goto out;
        for (size_t i = 0; i < n_files; i++) {
                err[0] = '\0';
                r = manifest_parse_file(files[i].name, files[i].content, files[i].len, &ms, err, sizeof err);
                if (r == -ENOMEM) {
                        http_error(resp, 500, "out of memory");
                        goto out;
                }
                if (r < 0) {
                        http_error(resp, 400, "%s", err[0] ? err : files[i].name);
                        goto out;
                }
                if (ms.n > STORE_MAX_RELEASE_MANIFESTS) {
                        http_error(resp, 400, "a release has at most %d manifests", STORE_MAX_RELEASE_MANIFESTS);
                        goto out;
                }
        }
        /* Paths become file names in a manifest directory: unique. */
        for (size_t i = 0; i < ms.n; i++)
                for (size_t k = i + 1; k < ms.n; k++)
                        if (strcmp(ms.v[i].path, ms.v[k].path) == 0) {
                                http_error(resp, 400, "%s and %s (document %u) both become %s", ms.v[i].file,
                                           ms.v[k].file, ms.v[k].doc_index, ms.v[k].path);
                                goto out;
                        }
        warnings = undeclared_warnings(&info, &ms);
        if (!warnings) {
                http_error(resp, 500, "out of memory");
                goto out;
        }
        if (json_object_object_get_ex(req->body, "strict", &strict) &&
            !json_object_is_type(strict, json_type_boolean)) {
                http_error(resp, 400, "field \"strict\" must be true or false");
                goto out;
        }
        if (strict && json_object_get_boolean(strict) && json_object_array_length(warnings) > 0) {
                refuse_warnings(warnings, resp);
                goto out;
        }
        if (info.os_image.path && check_os_image(sv, &info.os_image, resp) < 0)
                goto out;
        r = store_release_import(sv->store, &info, &ms, &stored);
        if (r == -EEXIST) {
                http_error(resp, 409, "release %s is already imported", info.version);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "release");
                goto out;
        }
        size_t n_warn = json_object_array_length(warnings);
        char extra[128] = "";
        if (n_warn)
                snprintf(extra, sizeof extra, "; %zu warning%s: capabilities release.yaml does not declare", n_warn,
                         n_warn == 1 ? "" : "s");
        svc_event(sv, n_warn ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL,
                      "release %s imported by %s: %zu manifests from %zu files%s", info.version, P(req)->owner, ms.n,
                      n_files, extra);
        clusterrel_release_imported(sv, info.version);
        json_object *answer = release_json(&stored);
        if (answer)
                json_object_object_add(answer, "warnings", TAKE_PTR(warnings));
        http_json(resp, 201, answer);
out:
        store_release_free(&stored);
        manifest_list_free(&ms);
        release_info_free(&info);
}

/* ---- read, delete ------------------------------------------------------- */

void api_release_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct store_release_list l = { 0 };
        struct store_page pg;
        if (!api_need_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        int r = store_release_list(sv->store, &pg, &l);
        if (r < 0) {
                api_store_error(resp, r, "releases");
                return;
        }
        json_object *a = json_object_new_array_ext((int) l.n);
        for (size_t i = 0; a && i < l.n; i++)
                json_object_array_add(a, release_json(&l.v[i]));
        http_json(resp, 200, a);
        resp->next_after = l.next_after;
        store_release_list_free(&l);
}

void api_release_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct loaded_release lr;
        if (!api_need_admin(req, resp))
                return;
        if (load(sv, req, resp, true, &lr) == 0) {
                json_object *o = release_json(&lr.r);
                json_object *a = json_object_new_array_ext((int) lr.ms.n);
                for (size_t i = 0; a && i < lr.ms.n; i++)
                        json_object_array_add(a, manifest_to_json(&lr.ms.v[i], false));
                if (o)
                        json_object_object_add(o, "manifests", a);
                else
                        json_object_put(a);
                http_json(resp, 200, o);
        }
        release_unload(&lr);
}

void api_release_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        const char *v = req->params[0];
        if (!api_need_infra_admin(req, resp))
                return;
        if (!version_ok(v)) {
                http_error(resp, 400, "\"%.64s\" is not a release version", v);
                return;
        }
        int r = store_release_delete(sv->store, v);
        if (r == -EBUSY)
                http_error(resp, 409, "release %s is the release of a cluster; it cannot be deleted", v);
        else if (r == -ENOENT)
                http_error(resp, 404, "release %s is not imported", v);
        else if (r < 0)
                api_store_error(resp, r, "release");
        else {
                svc_event(sv, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "release %s deleted by %s", v,
                              P(req)->owner);
                api_no_content(resp);
        }
}

/* ---- preview ------------------------------------------------------------ */

/* A comma-separated query list into out (empty entries skipped). 0, or
 * answers 400 and returns -EINVAL. */
static int query_list(struct http_request *req, struct http_response *resp, const char *key, struct strv *out) {
        const char *s = http_query(req, key);
        while (s && *s) {
                const char *comma = strchr(s, ',');
                size_t n = comma ? (size_t) (comma - s) : strlen(s);
                if (n > MAX_QUERY_TOKEN) {
                        http_error(resp, 400, "query parameter %s: entries are at most %d characters", key, MAX_QUERY_TOKEN);
                        return -EINVAL;
                }
                if (n) {
                        if (out->n >= MAX_QUERY_LIST) {
                                http_error(resp, 400, "query parameter %s has more than %d entries", key, MAX_QUERY_LIST);
                                return -EINVAL;
                        }
                        if (strv_consume(out, strndup(s, n)) < 0) {
                                http_error(resp, 500, "out of memory");
                                return -ENOMEM;
                        }
                }
                s = comma ? comma + 1 : NULL;
        }
        return 0;
}

static const char *query_token(struct http_request *req, struct http_response *resp, const char *key, bool *bad) {
        const char *s = http_query(req, key);
        if (s && (!*s || strlen(s) > MAX_QUERY_TOKEN)) {
                http_error(resp, 400, "query parameter %s must be 1-%d characters", key, MAX_QUERY_TOKEN);
                *bad = true;
                return NULL;
        }
        return s;
}

static json_object *strv_json(const struct strv *v) {
        json_object *a = json_object_new_array_ext((int) v->n);
        for (size_t i = 0; a && i < v->n; i++)
                json_object_array_add(a, json_object_new_string(v->v[i]));
        return a;
}

static json_object *manifest_ref(const struct manifest *m) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "path", json_object_new_string(m->path));
        json_object_object_add(o, "file", json_object_new_string(m->file));
        json_object_object_add(o, "group", json_object_new_string(m->group));
        json_object_object_add(o, "kind", json_object_new_string(m->kind));
        if (m->namespace)
                json_object_object_add(o, "namespace", json_object_new_string(m->namespace));
        json_object_object_add(o, "name", json_object_new_string(m->name));
        return o;
}

void api_release_preview(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct loaded_release lr;
        struct strv additional = { 0 }, exclude = { 0 };
        struct cap_status st;
        struct filter_result *res = NULL;
        char err[512];
        bool bad = false;

        cap_status_init(&st);
        if (!api_need_admin(req, resp))
                return;
        if (load(sv, req, resp, true, &lr) < 0)
                goto out;
        const char *profile = query_token(req, resp, "profile", &bad);
        const char *feature_set = bad ? NULL : query_token(req, resp, "feature_set", &bad);
        const char *baseline = bad ? NULL : query_token(req, resp, "baseline", &bad);
        if (bad || query_list(req, resp, "additional", &additional) < 0 || query_list(req, resp, "exclude", &exclude) < 0)
                goto out;
        struct cap_spec spec = { .baseline = (char *) baseline, .additional = additional };
        if (cap_validate_spec(&lr.r.info, &spec, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        if (cap_compute(&lr.r.info, &spec, NULL, NULL, &st) < 0) {
                http_error(resp, 500, "could not compute the enabled capabilities");
                goto out;
        }
        struct filter_context ctx = {
                .profile = profile ? profile : lr.r.info.default_profile,
                .feature_set = feature_set,
                .exclude_ids = &exclude,
                .enabled = &st.enabled,
                .known = &lr.r.info.known_capabilities,
        };
        if (filter_release(&lr.ms, &ctx, &res) < 0) {
                http_error(resp, 500, "could not filter the release");
                goto out;
        }
        json_object *o = json_object_new_object(), *caps = json_object_new_object();
        json_object *inc = json_object_new_array(), *exc = json_object_new_array();
        json_object_object_add(o, "version", json_object_new_string(lr.r.info.version));
        json_object_object_add(o, "profile", json_object_new_string(ctx.profile ? ctx.profile : RELEASE_DEFAULT_PROFILE));
        json_object_object_add(o, "feature_set",
                               json_object_new_string(feature_set && *feature_set ? feature_set : CAP_DEFAULT_FEATURE_SET));
        json_object_object_add(caps, "enabled", strv_json(&st.enabled));
        json_object_object_add(caps, "known", strv_json(&st.known));
        json_object_object_add(caps, "implicit", strv_json(&st.implicit));
        json_object_object_add(o, "capabilities", caps);
        for (size_t i = 0; i < lr.ms.n; i++) {
                json_object *m = manifest_ref(&lr.ms.v[i]);
                if (m && res[i].reason != FILTER_INCLUDED) {
                        json_object_object_add(m, "reason", json_object_new_string(filter_reason_to_string(res[i].reason)));
                        json_object_object_add(m, "message", json_object_new_string(res[i].message ? res[i].message : ""));
                }
                json_object_array_add(res[i].reason == FILTER_INCLUDED ? inc : exc, m);
        }
        json_object_object_add(o, "included", inc);
        json_object_object_add(o, "excluded", exc);
        http_json(resp, 200, o);
out:
        for (size_t i = 0; res && i < lr.ms.n; i++)
                filter_result_free(&res[i]);
        free(res);
        cap_status_free(&st);
        strv_free(&additional);
        strv_free(&exclude);
        release_unload(&lr);
}

/* ---- OS image, signing key ------------------------------------------------ */

/* A range of an OS image file, streamed as the client takes it. */
struct image_part {
        int fd;
        uint64_t start;
};

static ssize_t image_part_read(void *cls, uint64_t pos, void *buf, size_t max) {
        struct image_part *p = cls;
        ssize_t n;
        do
                n = pread(p->fd, buf, max, (off_t) (p->start + pos));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n > 0 ? n : -EIO; /* the file shrank under us */
}

static void image_part_free(void *cls) {
        struct image_part *p = cls;
        close(p->fd);
        free(p);
}

void api_release_os_image(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct loaded_release lr;
        struct stat st;
        if (load(sv, req, resp, false, &lr) < 0)
                goto out;
        const struct release_os_image *img = &lr.r.info.os_image;
        if (!img->path) {
                http_error(resp, 404, "the OS image of release %s is served from %s", lr.r.info.version,
                           img->url ? img->url : "elsewhere");
                goto out;
        }
        char why[1024] = "";
        int fd = os_image_open(sv, img->path, &st, why, sizeof why);
        if (fd < 0) {
                /* The folder or the file changed since the import (or the
                 * release predates the folder): the reason goes to the log. */
                log_warning("api", "OS image of release %s refused: %s", lr.r.info.version,
                            why[0] ? why : strerror(-fd));
                http_error(resp, 404, "the OS image of release %s is gone from musterd's releases folder",
                           lr.r.info.version);
                goto out;
        }
        if ((int64_t) st.st_size != img->size) {
                close(fd);
                http_error(resp, 409, "the OS image of release %s changed on musterd's machine since its import",
                           lr.r.info.version);
                goto out;
        }
        /* One range (an agent resuming a broken transfer), or all of it. */
        uint64_t size = (uint64_t) st.st_size, start = 0, len = size;
        const char *range = http_header(req, "Range");
        int k = iso_range_parse(range, size, &start, &len);
        if (k == -ERANGE) {
                close(fd);
                http_error(resp, 416, "the range \"%.64s\" is not within the image's %llu bytes", range,
                           (unsigned long long) size);
                http_header_add(resp, "Content-Range", "bytes */%llu", (unsigned long long) size);
                goto out;
        }
        if (k != 1) {
                http_file(resp, fd, size, "application/octet-stream");
                http_header_add(resp, "Accept-Ranges", "bytes");
                goto out;
        }
        struct image_part *p = malloc(sizeof *p);
        if (!p) {
                close(fd);
                http_error(resp, 500, "out of memory");
                goto out;
        }
        *p = (struct image_part) { .fd = fd, .start = start };
        http_stream(resp, 206, len, image_part_read, image_part_free, p, "application/octet-stream");
        http_header_add(resp, "Accept-Ranges", "bytes");
        http_header_add(resp, "Content-Range", "bytes %llu-%llu/%llu", (unsigned long long) start,
                        (unsigned long long) (start + len - 1), (unsigned long long) size);
out:
        release_unload(&lr);
}

void api_signing_key(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        char *pem = NULL;
        if (crypto_key_public_pem(sv->key, &pem) < 0) {
                http_error(resp, 500, "could not encode the public key");
                return;
        }
        http_text(resp, 200, pem, strlen(pem), "text/plain; charset=utf-8");
}
