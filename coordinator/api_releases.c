/* Releases over the API (DESIGN §3, §6-7): import of a release.yaml and its
 * manifests in one request, listing, the filter preview, deletion, the OS
 * image of a path release streamed from musterd's disk, and musterd's
 * public signing key. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "capability.h"
#include "cleanup.h"
#include "clusterrel.h"
#include "crypto.h"
#include "log.h"
#include "manifest.h"
#include "release.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put)

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
static int load(struct musterd *d, struct http_request *req, struct http_response *resp, bool manifests,
                struct loaded_release *lr) {
        const char *v = req->params[0];
        if (!version_ok(v)) {
                *lr = (struct loaded_release) { 0 };
                store_release_init(&lr->r);
                http_error(resp, 400, "\"%.64s\" is not a release version", v);
                return -EINVAL;
        }
        int r = release_load(d, v, manifests, lr);
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

/* The OS image of a path release must be on this machine as release.yaml
 * describes it. 0, or answers 400 and returns -EINVAL. */
static int check_os_image(const struct release_os_image *img, struct http_response *resp) {
        struct crypto_sha256_ctx ctx;
        uint8_t sum[CRYPTO_SHA256_LEN];
        char hex[2 * CRYPTO_SHA256_LEN + 1];
        struct stat st;
        _cleanup_free_ char *buf = NULL;
        const size_t bufsz = 1 << 20;
        int64_t total = 0;

        if (img->path[0] != '/') {
                http_error(resp, 400, "os_image.path \"%.256s\" must be absolute (a path on musterd's machine)", img->path);
                return -EINVAL;
        }
        _cleanup_close_ int fd = open(img->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                http_error(resp, 400, "os_image.path %.256s cannot be opened on musterd's machine: %s", img->path,
                           strerror(errno));
                return -EINVAL;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                http_error(resp, 400, "os_image.path %.256s is not a regular file", img->path);
                return -EINVAL;
        }
        if ((int64_t) st.st_size != img->size) {
                http_error(resp, 400, "os_image.path %.256s has %lld bytes, release.yaml says size %lld", img->path,
                           (long long) st.st_size, (long long) img->size);
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
                http_error(resp, 400, "os_image.path %.256s has sha256 %s, release.yaml says sha256 %s", img->path, hex,
                           img->sha256);
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

void api_release_import(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct release_info info;
        struct manifest_list ms = { 0 };
        struct store_release stored;
        _cleanup_free_ struct in_file *files = NULL;
        size_t n_files = 0;
        json_object *y;
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
        if (info.os_image.path && check_os_image(&info.os_image, resp) < 0)
                goto out;
        r = store_release_import(d->store, &info, &ms, &stored);
        if (r == -EEXIST) {
                http_error(resp, 409, "release %s is already imported", info.version);
                goto out;
        }
        if (r < 0) {
                api_store_error(resp, r, "release");
                goto out;
        }
        musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL,
                      "release %s imported by %s: %zu manifests from %zu files", info.version, P(req)->owner, ms.n,
                      n_files);
        clusterrel_release_imported(d, info.version);
        http_json(resp, 201, release_json(&stored));
out:
        store_release_free(&stored);
        manifest_list_free(&ms);
        release_info_free(&info);
}

/* ---- read, delete ------------------------------------------------------- */

void api_release_list(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct store_release_list l = { 0 };
        struct store_page pg;
        if (!api_need_admin(req, resp) || api_query_page(d, req, resp, &pg) < 0)
                return;
        int r = store_release_list(d->store, &pg, &l);
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
        struct musterd *d = app;
        struct loaded_release lr;
        if (!api_need_admin(req, resp))
                return;
        if (load(d, req, resp, true, &lr) == 0) {
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
        struct musterd *d = app;
        const char *v = req->params[0];
        if (!api_need_infra_admin(req, resp))
                return;
        if (!version_ok(v)) {
                http_error(resp, 400, "\"%.64s\" is not a release version", v);
                return;
        }
        int r = store_release_delete(d->store, v);
        if (r == -EBUSY)
                http_error(resp, 409, "release %s is the release of a cluster; it cannot be deleted", v);
        else if (r == -ENOENT)
                http_error(resp, 404, "release %s is not imported", v);
        else if (r < 0)
                api_store_error(resp, r, "release");
        else {
                musterd_event(d, EVENT_INFO, EVENT_CAT_USER, NULL, NULL, NULL, "release %s deleted by %s", v,
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
        struct musterd *d = app;
        struct loaded_release lr;
        struct strv additional = { 0 }, exclude = { 0 };
        struct cap_status st;
        struct filter_result *res = NULL;
        char err[512];
        bool bad = false;

        cap_status_init(&st);
        if (!api_need_admin(req, resp))
                return;
        if (load(d, req, resp, true, &lr) < 0)
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

void api_release_os_image(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        struct loaded_release lr;
        struct stat st;
        if (load(d, req, resp, false, &lr) < 0)
                goto out;
        const struct release_os_image *img = &lr.r.info.os_image;
        if (!img->path) {
                http_error(resp, 404, "the OS image of release %s is served from %s", lr.r.info.version,
                           img->url ? img->url : "elsewhere");
                goto out;
        }
        int fd = open(img->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                log_warning_errno(errno, "api", "OS image %s of release %s cannot be opened: %m", img->path,
                                  lr.r.info.version);
                http_error(resp, 404, "the OS image of release %s is gone from musterd's machine", lr.r.info.version);
                goto out;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (int64_t) st.st_size != img->size) {
                close(fd);
                http_error(resp, 409, "the OS image of release %s changed on musterd's machine since its import",
                           lr.r.info.version);
                goto out;
        }
        http_file(resp, fd, (uint64_t) st.st_size, "application/octet-stream");
out:
        release_unload(&lr);
}

void api_signing_key(void *app, struct http_request *req, struct http_response *resp) {
        struct musterd *d = app;
        char *pem = NULL;
        if (crypto_key_public_pem(d->key, &pem) < 0) {
                http_error(resp, 500, "could not encode the public key");
                return;
        }
        http_text(resp, 200, pem, strlen(pem), "text/plain; charset=utf-8");
}
