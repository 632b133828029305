/* Releases over the API (DESIGN §3, §6-7): import of a release.yaml and its
 * manifests in one request, listing, the filter preview, deletion, the OS
 * image of a path release streamed from the releases folder (one Range
 * honoured, for an agent resuming), and musterd's public signing key. The
 * handlers parse and authorize; the services of svc/releases.h decide. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "cleanup.h"
#include "svc/iso.h"
#include "json-cleanup.h"
#include "svc/releases.h"

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
        char err[512] = "";
        if (!version_ok(v)) {
                *lr = (struct loaded_release) { 0 };
                http_error(resp, 400, "\"%.64s\" is not a release version", v);
                return -EINVAL;
        }
        int r = svc_release_get(sv, v, manifests, lr, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "release");
        return r;
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

/* The files of the body, sorted by name (the release order), pointing
 * into it (malloc'd; NULL and a refusal in c otherwise). */
static struct in_file *read_files(json_object *body, size_t *n, struct jctx *c) {
        *n = 0;
        json_object *a = jget(body, "files", json_type_array, c);
        if (!a) {
                jrefuse(c, "field \"files\" must be an array of {name, content}");
                return NULL;
        }
        size_t len = json_object_array_length(a);
        if (len > MAX_RELEASE_FILES) {
                jfail(c, "a release has at most %d files, this one %zu", MAX_RELEASE_FILES, len);
                return NULL;
        }
        _cleanup_free_ struct in_file *v = calloc(len ? len : 1, sizeof *v);
        if (!v) {
                joom(c);
                return NULL;
        }
        for (size_t i = 0; i < len; i++) {
                json_object *e = json_object_array_get_idx(a, i), *name = NULL, *content = NULL;
                struct jctx lax = { 0 }; /* the words are this loop's */
                if (json_object_is_type(e, json_type_object)) {
                        name = jget(e, "name", json_type_string, &lax);
                        content = jget(e, "content", json_type_string, &lax);
                }
                if (!name || !content) {
                        jfail(c, "files[%zu] must be an object with string members name and content", i);
                        return NULL;
                }
                v[i].name = json_object_get_string(name);
                v[i].content = json_object_get_string(content);
                v[i].len = (size_t) json_object_get_string_len(content);
                size_t nl = (size_t) json_object_get_string_len(name);
                if (nl == 0 || nl > MANIFEST_MAX_FILE_NAME || strlen(v[i].name) != nl || strchr(v[i].name, '/') ||
                    v[i].name[0] == '.') {
                        jfail(c, "files[%zu]: \"%.64s\" is not a plain file name", i, v[i].name);
                        return NULL;
                }
                if (strlen(v[i].content) != v[i].len) {
                        jfail(c, "%s: the content contains a NUL byte", v[i].name);
                        return NULL;
                }
                if (v[i].len > MANIFEST_MAX_FILE) {
                        jfail(c, "%s: %zu bytes, a manifest file may have at most %d", v[i].name, v[i].len,
                              MANIFEST_MAX_FILE);
                        return NULL;
                }
        }
        qsort(v, len, sizeof *v, cmp_file);
        for (size_t i = 1; i < len; i++)
                if (strcmp(v[i - 1].name, v[i].name) == 0) {
                        jfail(c, "file %s is given twice", v[i].name);
                        return NULL;
                }
        *n = len;
        return TAKE_PTR(v);
}

/* The body of an import: release.yaml parsed, the files read and their
 * manifests parsed (paths unique), and "strict". 0, or answers 400 (413
 * for a manifest past a limit, 500) and returns -errno. */
static int parse_release(struct http_request *req, struct http_response *resp, struct release_info *info,
                         struct manifest_list *ms, size_t *n_files, bool *strict_on) {
        _cleanup_free_ struct in_file *files = NULL;
        json_object *y;
        char err[512];
        int r;

        struct jctx jc = { err, sizeof err, 0 };
        if (!(y = jget(req->body, "release_yaml", json_type_string, &jc)))
                jrefuse(&jc, "field \"release_yaml\" must hold the text of release.yaml");
        if (!api_read_ok(resp, &jc))
                return jc.r;
        err[0] = '\0';
        if ((r = release_info_parse_yaml(json_object_get_string(y), (size_t) json_object_get_string_len(y), info, err,
                                         sizeof err)) < 0) {
                char msg[600];
                snprintf(msg, sizeof msg, "%s%s", strncmp(err, "release.yaml", 12) == 0 ? "" : "release.yaml: ",
                         err[0] ? err : "not a valid release file");
                /* A release.yaml refused, too large included, is a bad request (400). */
                api_svc_error(resp, r == -ENOMEM ? r : -EINVAL, r == -ENOMEM ? "out of memory" : msg, "release.yaml");
                return r;
        }
        if (!(files = read_files(req->body, n_files, &jc)) && !api_read_ok(resp, &jc))
                return jc.r;
        for (size_t i = 0; i < *n_files; i++) {
                err[0] = '\0';
                r = manifest_parse_file(files[i].name, files[i].content, files[i].len, ms, err, sizeof err);
                if (r < 0) {
                        /* -E2BIG (413): past a manifest limit, or aliases that expand too far; any other
                         * refusal of the file is a bad request. */
                        api_svc_error(resp, r == -ENOMEM || r == -E2BIG ? r : -EINVAL,
                                      r == -ENOMEM ? "out of memory" : err[0] ? err : files[i].name, "manifest");
                        return r;
                }
                if (ms->n > RELEASE_MAX_MANIFESTS) {
                        http_error(resp, 400, "a release has at most %d manifests", RELEASE_MAX_MANIFESTS);
                        return -EINVAL;
                }
        }
        /* Paths become file names in a manifest directory: unique. */
        for (size_t i = 0; i < ms->n; i++)
                for (size_t k = i + 1; k < ms->n; k++)
                        if (strcmp(ms->v[i].path, ms->v[k].path) == 0) {
                                http_error(resp, 400, "%s and %s (document %u) both become %s", ms->v[i].file,
                                           ms->v[k].file, ms->v[k].doc_index, ms->v[k].path);
                                return -EINVAL;
                        }
        /* Null is no boolean here. */
        *strict_on = false;
        if (!jget_bool(req->body, "strict", strict_on, &jc) && jhas(req->body, "strict"))
                jrefuse(&jc, "field \"strict\" must be true or false");
        return api_read_ok(resp, &jc) ? 0 : jc.r;
}

void api_release_import(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct release_info info;
        struct manifest_list ms = { 0 };
        struct loaded_release stored = { 0 };
        size_t n_files = 0;
        bool strict = false;
        _cleanup_json_ json_object *warnings = NULL;
        char err[512] = "";

        release_info_init(&info);
        if (!api_need_infra_admin(req, resp) || parse_release(req, resp, &info, &ms, &n_files, &strict) < 0)
                goto out;
        int r = svc_release_import(sv, &info, &ms, n_files, strict, P(req)->owner, &stored, &warnings, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "release");
                goto out;
        }
        json_object *answer = release_record_to_json(&stored.r);
        if (answer)
                json_object_object_add(answer, "warnings", TAKE_PTR(warnings));
        http_json(resp, 201, answer);
out:
        svc_release_unload(&stored);
        manifest_list_free(&ms);
        release_info_free(&info);
}

/* ---- read, delete ------------------------------------------------------- */

void api_release_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct release_record_list l = { 0 };
        struct list_page pg;
        if (!api_need_admin(req, resp) || api_query_page(sv, req, resp, &pg) < 0)
                return;
        int r = svc_release_list(sv, &pg, &l);
        if (r < 0) {
                api_store_error(resp, r, "releases");
                return;
        }
        json_object *a = json_object_new_array_ext((int) l.n);
        for (size_t i = 0; a && i < l.n; i++)
                json_object_array_add(a, release_record_to_json(&l.v[i]));
        http_json(resp, 200, a);
        resp->next_after = l.next_after;
        svc_release_list_free(&l);
}

void api_release_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct loaded_release lr;
        if (!api_need_admin(req, resp))
                return;
        if (load(sv, req, resp, true, &lr) == 0) {
                json_object *o = release_record_to_json(&lr.r);
                json_object *a = json_object_new_array_ext((int) lr.ms.n);
                for (size_t i = 0; a && i < lr.ms.n; i++)
                        json_object_array_add(a, manifest_to_json(&lr.ms.v[i], false));
                if (o)
                        json_object_object_add(o, "manifests", a);
                else
                        json_object_put(a);
                http_json(resp, 200, o);
        }
        svc_release_unload(&lr);
}

void api_release_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        const char *v = req->params[0];
        char err[512] = "";
        if (!api_need_infra_admin(req, resp))
                return;
        if (!version_ok(v)) {
                http_error(resp, 400, "\"%.64s\" is not a release version", v);
                return;
        }
        int r = svc_release_delete(sv, v, P(req)->owner, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "release");
        else
                api_no_content(resp);
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

/* The preview's answer: what the query enables and each manifest's verdict. */
static json_object *preview_json(const struct loaded_release *lr, const char *feature_set,
                                 const struct svc_release_preview *pv) {
        json_object *o = json_object_new_object(), *caps = json_object_new_object();
        json_object *inc = json_object_new_array(), *exc = json_object_new_array();
        json_object_object_add(o, "version", json_object_new_string(lr->r.info.version));
        const char *fs = feature_set && *feature_set ? feature_set : CAP_DEFAULT_FEATURE_SET;
        json_object_object_add(o, "profile", json_object_new_string(pv->profile ? pv->profile : RELEASE_DEFAULT_PROFILE));
        json_object_object_add(o, "feature_set", json_object_new_string(fs));
        json_object_object_add(caps, "enabled", strv_json(&pv->caps.enabled));
        json_object_object_add(caps, "known", strv_json(&pv->caps.known));
        json_object_object_add(caps, "implicit", strv_json(&pv->caps.implicit));
        json_object_object_add(o, "capabilities", caps);
        for (size_t i = 0; i < lr->ms.n; i++) {
                const struct filter_result *res = &pv->res[i];
                json_object *m = manifest_ref(&lr->ms.v[i]);
                if (m && res->reason != FILTER_INCLUDED) {
                        json_object_object_add(m, "reason",
                                               json_object_new_string(filter_reason_to_string(res->reason)));
                        json_object_object_add(m, "message", json_object_new_string(res->message ? res->message : ""));
                }
                json_object_array_add(res->reason == FILTER_INCLUDED ? inc : exc, m);
        }
        json_object_object_add(o, "included", inc);
        json_object_object_add(o, "excluded", exc);
        return o;
}

/* The release of the path is loaded first (404 before any query check),
 * then the query read, then svc_release_preview filters. */
void api_release_preview(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct loaded_release lr;
        struct strv additional = { 0 }, exclude = { 0 };
        struct svc_release_preview pv = { 0 };
        char err[512] = "";
        bool bad = false;

        if (!api_need_admin(req, resp))
                return;
        if (load(sv, req, resp, true, &lr) < 0)
                goto out;
        const char *profile = query_token(req, resp, "profile", &bad);
        const char *feature_set = bad ? NULL : query_token(req, resp, "feature_set", &bad);
        const char *baseline = bad ? NULL : query_token(req, resp, "baseline", &bad);
        if (bad || query_list(req, resp, "additional", &additional) < 0 || query_list(req, resp, "exclude", &exclude) < 0)
                goto out;
        struct svc_release_query q = {
                .profile = profile,
                .feature_set = feature_set,
                .baseline = baseline,
                .additional = &additional,
                .exclude = &exclude,
        };
        int r = svc_release_preview(sv, &lr, &q, &pv, err, sizeof err);
        if (r < 0)
                api_svc_error(resp, r, err, "release");
        else
                http_json(resp, 200, preview_json(&lr, feature_set, &pv));
out:
        svc_release_preview_free(&pv);
        strv_free(&additional);
        strv_free(&exclude);
        svc_release_unload(&lr);
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
        const char *v = req->params[0];
        char err[512] = "";
        uint64_t size = 0;
        if (!version_ok(v)) {
                http_error(resp, 400, "\"%.64s\" is not a release version", v);
                return;
        }
        int fd = svc_release_os_image(sv, v, &size, err, sizeof err);
        if (fd < 0) {
                api_svc_error(resp, fd, err, "release");
                return;
        }
        /* One range (an agent resuming a broken transfer), or all of it. */
        uint64_t start = 0, len = size;
        const char *range = http_header(req, "Range");
        int k = http_range_parse(range, size, &start, &len);
        if (k == -ERANGE) {
                close(fd);
                http_range_refuse(resp, range, size, "image");
                return;
        }
        if (k != 1) {
                http_file(resp, fd, size, "application/octet-stream");
                http_header_add(resp, "Accept-Ranges", "bytes");
                return;
        }
        struct image_part *p = malloc(sizeof *p);
        if (!p) {
                close(fd);
                http_error(resp, 500, "out of memory");
                return;
        }
        *p = (struct image_part) { .fd = fd, .start = start };
        http_stream(resp, 206, len, image_part_read, image_part_free, p, "application/octet-stream");
        http_header_add(resp, "Accept-Ranges", "bytes");
        http_header_add(resp, "Content-Range", "bytes %llu-%llu/%llu", (unsigned long long) start,
                        (unsigned long long) (start + len - 1), (unsigned long long) size);
}

void api_signing_key(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        char *pem = NULL, err[512] = "";
        (void) req;
        int r = svc_signing_key(sv, &pem, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "signing key");
                return;
        }
        http_text(resp, 200, pem, strlen(pem), "text/plain; charset=utf-8");
}
