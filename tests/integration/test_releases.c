/* Releases and capabilities over the real musterd's HTTP API (DESIGN §3,
 * §6-7): the fixture releases (tests/fixtures/releases, built with
 * make-release.sh) imported as musterctl sends them, refused when a file or
 * the OS image is wrong, listed, previewed with the fixture README's table,
 * cluster capabilities with the implicit-enable rule and its condition,
 * the upgrade rule 4.15.0 -> 4.16.0, the OS image download and the public
 * signing key. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;
static char *rel15, *rel16; /* built release directories */

/* Small default bodies and a larger one for releases: the per-route limit. */
static const char config[] = "[server]\nmax_body_bytes = 64KiB\nmax_inventory_bytes = 32KiB\n"
                             "max_release_bytes = 1MiB\n";

static char *read_text(const char *path, size_t *len) {
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        cr_assert_eq(fseek(f, 0, SEEK_END), 0);
        long n = ftell(f);
        rewind(f);
        char *b = malloc((size_t) n + 1);
        cr_assert_eq(fread(b, 1, (size_t) n, f), (size_t) n);
        b[n] = '\0';
        fclose(f);
        if (len)
                *len = (size_t) n;
        return b;
}

/* tests/fixtures/releases/V built into DIR/state/images/V (the default
 * releases folder); the directory (malloc'd). */
static char *build_release(const char *version) {
        char *dst, src[4096];
        cr_assert_geq(asprintf(&dst, "%s/state/images/%s", dir, version), 0);
        snprintf(src, sizeof src, "%s/releases/%s", MUSTER_FIXTURES_DIR, version);
        tu_release_build(src, dst);
        return dst;
}

#define url(...) tu_url(md.base, __VA_ARGS__)

static long post_release(json_object *body, const char *token, json_object **out) {
        return tu_http_json("POST", url("/api/v2/releases"), token,
                            json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN), out);
}

static void import(const char *rdir) {
        json_object *o = NULL;
        long code = tu_release_import(md.base, md.admin_token, rdir, &o);
        cr_assert_eq(code, 201, "import %s: %ld %s", rdir, code, o ? json_object_to_json_string(o) : "");
        json_object_put(o);
}

static void up(void) {
        dir = tu_mkdtemp();
        cr_assert_eq(tu_musterd_start_in(&md, dir, config), 0, "musterd started");
        rel15 = build_release("4.15.0");
        rel16 = build_release("4.16.0");
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
        free(rel15);
        free(rel16);
}

TestSuite(releases, .init = up, .fini = down);

static bool has_str(json_object *arr, const char *s) {
        for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s) == 0)
                        return true;
        return false;
}

/* ---- import, list, show, delete ------------------------------------------ */

Test(releases, import_list_show_delete) {
        json_object *b = tu_release_json(rel15), *o;
        cr_assert_eq(post_release(b, md.admin_token, &o), 201, "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "version"), "4.15.0");
        cr_assert_str_eq(tu_jstr(o, "manifest_count"), "13", "12 files, one with 2 documents");
        cr_assert_str_eq(tu_jstr(o, "default_profile"), "self-managed-high-availability");
        cr_assert_eq(json_object_array_length(tu_json_get(o, "known_capabilities")), 7);
        json_object *sets = tu_json_get(o, "capability_sets"), *v411;
        cr_assert(json_object_object_get_ex(sets, "v4.11", &v411));
        cr_assert_eq(json_object_array_length(v411), 3);
        char img[4200];
        snprintf(img, sizeof img, "%s/os.img", rel15);
        cr_assert_str_eq(tu_jstr(o, "os_image.path"), img);
        cr_assert_str_eq(tu_jstr(o, "os_image.size"), "6291456");
        cr_assert_not_null(tu_jstr(o, "created_at"));
        json_object_put(o);
        cr_assert_eq(post_release(b, md.admin_token, &o), 409, "imported once");
        cr_assert(strstr(tu_jstr(o, "reason"), "4.15.0"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);

        /* Only an infra admin imports; any admin reads; agents do not. */
        char *alice = tu_token(&md, "cluster-creator", "alice");
        char *ie, *agent;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "pool", &ie, &agent), 201);
        cr_assert_eq(post_release(b, alice, NULL), 403);
        json_object_put(b);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases"), agent, NULL, NULL), 403);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases"), alice, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 1);
        cr_assert_str_eq(tu_jstr(o, "0.version"), "4.15.0");
        cr_assert_str_eq(tu_jstr(o, "0.manifest_count"), "13");
        cr_assert_null(tu_json_get(o, "0.manifests"), "lists carry no manifests");
        json_object_put(o);
        import(rel16);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases"), md.admin_token, NULL, &o), 200);
        char *versions = tu_join(o, "version");
        cr_assert_str_eq(versions, "4.15.0,4.16.0");
        free(versions);
        json_object_put(o);

        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/4.15.0"), alice, NULL, &o), 200);
        json_object *ms = tu_json_get(o, "manifests");
        cr_assert_eq(json_object_array_length(ms), 13);
        char *paths = tu_join(ms, "path");
        cr_assert_str_eq(paths, "0000_03_config-operator_01_proxy.crd.yaml,"
                                "0000_10_config-operator_01_featuregate-techpreview.crd.yaml,"
                                "0000_20_namespace.json,"
                                "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"
                                "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"
                                "0000_50_cluster-samples-operator_06-operator.yaml,"
                                "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml,"
                                "0000_50_console-operator_07-downloads-deployment.yaml,"
                                "0000_50_insights-operator_10-prometheus-rule.yaml,"
                                "0000_70_future-operator.yaml,"
                                "0000_80_hosted-only-configmap.yaml,"
                                "0000_90_console_01-console-insights-plugin.yaml,"
                                "99_site-config.yml");
        free(paths);
        cr_assert_str_eq(tu_jstr(ms, "3.kind"), "Service");
        json_object *ann = tu_json_get(ms, "3.annotations"), *capname;
        cr_assert(json_object_object_get_ex(ann, "capability.openshift.io/name", &capname));
        cr_assert_str_eq(json_object_get_string(capname), "baremetal");
        cr_assert_null(tu_json_get(ms, "3.content"), "no content in the listing");
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/9.9.9"), md.admin_token, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/bad%%20name"), md.admin_token, NULL, NULL), 400);

        /* A release a cluster uses stays; others go. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token,
                                  "{\"name\":\"c\",\"release_version\":\"4.16.0\"}", NULL), 201);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/releases/4.16.0"), md.admin_token, NULL, &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), "cluster"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/releases/4.15.0"), alice, NULL, NULL), 403);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/releases/4.15.0"), md.admin_token, NULL, NULL), 204);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/4.15.0"), md.admin_token, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/releases/4.15.0"), md.admin_token, NULL, NULL), 404);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events"), md.admin_token, NULL, &o), 200);
        const char *ev = json_object_to_json_string(o);
        cr_assert(strstr(ev, "release 4.15.0 imported by admin: 13 manifests from 12 files"), "%s", ev);
        cr_assert(strstr(ev, "release 4.15.0 deleted by admin"), "%s", ev);
        json_object_put(o);
        free(alice);
        free(ie);
        free(agent);
}

/* The content of files[name] replaced. */
static void set_file(json_object *b, const char *name, const char *content) {
        json_object *files = tu_json_get(b, "files");
        for (size_t i = 0; i < json_object_array_length(files); i++) {
                json_object *f = json_object_array_get_idx(files, i);
                if (strcmp(tu_jstr(f, "name"), name) == 0) {
                        json_object_object_add(f, "content", json_object_new_string(content));
                        return;
                }
        }
        json_object *f = json_object_new_object();
        json_object_object_add(f, "name", json_object_new_string(name));
        json_object_object_add(f, "content", json_object_new_string(content));
        json_object_array_add(files, f);
}

/* release_yaml with `from` replaced by `to` (first occurrence). */
static void edit_yaml(json_object *b, const char *from, const char *to) {
        const char *y = tu_jstr(b, "release_yaml");
        const char *p = strstr(y, from);
        cr_assert_not_null(p, "%s in release.yaml", from);
        char *n;
        cr_assert_geq(asprintf(&n, "%.*s%s%s", (int) (p - y), y, to, p + strlen(from)), 0);
        json_object_object_add(b, "release_yaml", json_object_new_string(n));
        free(n);
}

static void expect_refused(json_object *b, long code, const char *needle) {
        json_object *o = NULL;
        long got = post_release(b, md.admin_token, &o);
        cr_assert_eq(got, code, "%ld %s", got, o ? json_object_to_json_string(o) : "");
        const char *reason = tu_jstr(o, "reason");
        cr_assert(reason && strstr(reason, needle), "reason \"%s\" should name \"%s\"", reason ? reason : "", needle);
        json_object_put(o);
        json_object_put(b);
}

Test(releases, bad_releases_are_refused_with_the_reason) {
        json_object *b = tu_release_json(rel15);
        set_file(b, "0000_20_namespace.json", "{\"apiVersion\": \"v1\", \"kind\": ");
        expect_refused(b, 400, "0000_20_namespace.json:");
        b = tu_release_json(rel15);
        set_file(b, "99_site-config.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n");
        expect_refused(b, 400, "99_site-config.yml:");
        b = tu_release_json(rel15);
        set_file(b, "99_site-config.yml", "apiVersion: v1\nkind: ConfigMap\ndata: {}\n");
        expect_refused(b, 400, "99_site-config.yml");
        b = tu_release_json(rel15);
        edit_yaml(b, "known_capabilities:", "known_capabilities: [\n");
        expect_refused(b, 400, "release.yaml:");
        b = tu_release_json(rel15);
        edit_yaml(b, "v4.11: [baremetal,", "v4.11: [Bogus, baremetal,");
        expect_refused(b, 400, "Bogus");

        /* The image must be there as described. */
        b = tu_release_json(rel15);
        const char *q = strstr(tu_jstr(b, "release_yaml"), "sha256: \"");
        cr_assert_not_null(q);
        char sum[65], bad[65];
        memcpy(sum, q + 9, 64);
        sum[64] = '\0';
        memcpy(bad, sum, 65);
        bad[0] = bad[0] == '0' ? '1' : '0';
        edit_yaml(b, sum, bad);
        expect_refused(b, 400, "sha256");
        b = tu_release_json(rel15);
        edit_yaml(b, "size: 6291456", "size: 6291457");
        expect_refused(b, 400, "6291457");
        b = tu_release_json(rel15);
        char abs[4200];
        snprintf(abs, sizeof abs, "path: %s/os.img", rel15);
        edit_yaml(b, abs, "path: os.img");
        expect_refused(b, 400, "releases folder"); /* relative to it: not there */
        b = tu_release_json(rel15);
        edit_yaml(b, abs, "path: /nonexistent/os.img");
        expect_refused(b, 400, "/nonexistent/os.img");

        /* Shape. */
        b = tu_release_json(rel15);
        set_file(b, "../escape.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
        expect_refused(b, 400, "plain file name");
        b = tu_release_json(rel15);
        json_object_object_del(b, "release_yaml");
        expect_refused(b, 400, "release_yaml");
        b = tu_release_json(rel15);
        json_object_object_add(b, "files", json_object_new_string("x"));
        expect_refused(b, 400, "files");
        b = tu_release_json(rel15);
        set_file(b, "notes.txt", "hello");
        expect_refused(b, 400, "notes.txt");

        /* Nothing was stored by any of them. */
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases"), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(o), 0);
        json_object_put(o);
}

/* ---- the OS image only from the releases folder (issue 12, item 1) --------- */

/* The SHA-256 of a file as sha256sum prints it (malloc'd hex). */
static char *sha256_of(const char *path) {
        char *out = NULL;
        cr_assert_eq(tu_runf(&out, NULL, "sha256sum %s", path), 0);
        cr_assert(out && strlen(out) >= 64);
        out[64] = '\0';
        return out;
}

static off_t size_of(const char *path) {
        struct stat st;
        cr_assert_eq(stat(path, &st), 0, "%s", path);
        return st.st_size;
}

/* rel15's import body with its OS image swapped for path (size, sha256). */
static json_object *with_image(const char *path, long long size, const char *sha) {
        json_object *b = tu_release_json(rel15);
        char from[4200], to[4200], s[64];
        snprintf(from, sizeof from, "path: %s/os.img", rel15);
        snprintf(to, sizeof to, "path: %s", path);
        edit_yaml(b, from, to);
        snprintf(s, sizeof s, "size: %lld", size);
        edit_yaml(b, "size: 6291456", s);
        const char *q = strstr(tu_jstr(b, "release_yaml"), "sha256: \"");
        char old[65];
        memcpy(old, q + 9, 64);
        old[64] = '\0';
        edit_yaml(b, old, sha);
        return b;
}

/* Whether text holds the decimal number n as a whole token. */
static bool has_number(const char *text, long long n) {
        char want[32];
        snprintf(want, sizeof want, "%lld", n);
        for (const char *p = text; (p = strstr(p, want)); p++) {
                bool left = p == text || p[-1] < '0' || p[-1] > '9';
                char r = p[strlen(want)];
                if (left && (r < '0' || r > '9'))
                        return true;
        }
        return false;
}

/* The import of body is refused with 400 naming `needle`, and the answer
 * tells nothing of the file: neither its size nor its digest. */
static void expect_refused_blind(json_object *b, const char *needle, long long size, const char *sha) {
        char *raw = NULL;
        const char *text = json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);
        long code = tu_http("POST", url("/api/v2/releases"), md.admin_token, text, strlen(text), &raw);
        cr_assert_eq(code, 400, "%ld %s", code, raw ? raw : "");
        cr_assert(raw && strstr(raw, needle), "\"%s\" should name \"%s\"", raw ? raw : "", needle);
        cr_assert_null(strstr(raw, sha), "the answer tells the digest: %s", raw);
        cr_assert_not(has_number(raw, size), "the answer tells the size %lld: %s", size, raw);
        free(raw);
        json_object_put(b);
}

static void expect_no_image(const char *version) {
        struct tu_http_reply got;
        long code = tu_http_raw("GET", url("/api/v2/releases/%s/os-image", version), md.admin_token, NULL, NULL, 0,
                                &got);
        cr_assert_neq(code, 200, "served: %.*s", (int) got.len, got.body ? got.body : "");
        cr_assert(!got.body || !memmem(got.body, got.len, "PRIVATE KEY", 11), "the key went out");
        free(got.body);
}

Test(releases, os_image_outside_the_releases_folder_is_refused_blind) {
        char key[4200], link[4200], sub[8500];
        snprintf(key, sizeof key, "%s/signing-key.pem", md.state_dir);
        long long n = (long long) size_of(key);
        char *sha = sha256_of(key);

        /* Wrong size, then the right size and digest: refused either way, and
         * the first answer does not tell them. */
        expect_refused_blind(with_image(key, 1, "0000000000000000000000000000000000000000000000000000000000000000"),
                             "releases folder", n, sha);
        expect_refused_blind(with_image(key, n, sha), "releases folder", n, sha);
        expect_no_image("4.15.0");

        /* Links in the folder that lead out of it: to the file, to its folder. */
        snprintf(link, sizeof link, "%s/images/key.img", md.state_dir);
        cr_assert_eq(symlink(key, link), 0);
        expect_refused_blind(with_image(link, n, sha), "releases folder", n, sha);
        snprintf(link, sizeof link, "%s/images/state", md.state_dir);
        cr_assert_eq(symlink(md.state_dir, link), 0);
        snprintf(sub, sizeof sub, "%s/signing-key.pem", link);
        expect_refused_blind(with_image(sub, n, sha), "releases folder", n, sha);
        /* ".." out of it. */
        snprintf(sub, sizeof sub, "%s/images/../signing-key.pem", md.state_dir);
        expect_refused_blind(with_image(sub, n, sha), "releases folder", n, sha);
        expect_no_image("4.15.0");

        /* A good image replaced by a link after its import is not served. */
        import(rel15);
        char img[4200];
        snprintf(img, sizeof img, "%s/os.img", rel15);
        cr_assert_eq(unlink(img), 0);
        cr_assert_eq(symlink(key, img), 0);
        expect_no_image("4.15.0");
        free(sha);
}

/* A folder configured to hold the state directory still never gives out
 * the state directory's files. */
Test(releases, releases_folder_never_hands_out_the_state_directory) {
        char key[4200], conf[4400], text[4400];
        snprintf(key, sizeof key, "%s/signing-key.pem", md.state_dir);
        long long n = (long long) size_of(key);
        char *sha = sha256_of(key);
        tu_musterd_stop(&md, SIGTERM);
        snprintf(text, sizeof text, "%s[releases]\nimage_dir = %s\n", config, dir);
        cr_assert_eq(tu_write_file(dir, "musterd.conf", text), 0);
        snprintf(conf, sizeof conf, "%s/musterd.conf", dir);
        cr_assert_eq(tu_musterd_restart(&md, conf), 0);
        expect_refused_blind(with_image(key, n, sha), "state directory", n, sha);
        expect_no_image("4.15.0");
        /* Under that folder but outside the state directory: fine. */
        char outside[4300];
        snprintf(outside, sizeof outside, "%s/outside", dir);
        tu_must("cp -r %s %s", rel15, outside);
        import(outside);
        free(sha);
}

struct fifo_import {
        const char *text;
        long code;
        char *raw;
};

static void *post_fifo(void *arg) {
        struct fifo_import *f = arg;
        f->code = tu_http("POST", url("/api/v2/releases"), md.admin_token, f->text, strlen(f->text), &f->raw);
        return NULL;
}

/* A FIFO in the folder is refused at once: several such imports at the same
 * time leave the API answering (an open(2) of a FIFO used to block a worker
 * thread for good). */
Test(releases, os_image_fifo_is_refused_without_blocking) {
        enum { N = 6 };
        char fifo[4200];
        snprintf(fifo, sizeof fifo, "%s/images/os.fifo", md.state_dir);
        cr_assert_eq(mkfifo(fifo, 0644), 0);
        json_object *b = with_image(fifo, 6291456, "0000000000000000000000000000000000000000000000000000000000000000");
        const char *text = json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);
        struct fifo_import f[N];
        pthread_t t[N];
        for (int i = 0; i < N; i++) {
                f[i] = (struct fifo_import) { .text = text };
                cr_assert_eq(pthread_create(&t[i], NULL, post_fifo, &f[i]), 0);
        }
        for (int i = 0; i < N; i++) {
                pthread_join(t[i], NULL);
                cr_assert_eq(f[i].code, 400, "import %d: %ld %s", i, f[i].code, f[i].raw ? f[i].raw : "");
                cr_assert(strstr(f[i].raw, "not a regular file"), "%s", f[i].raw);
                free(f[i].raw);
        }
        json_object_put(b);
        cr_assert_eq(tu_http("GET", url("/healthz"), NULL, NULL, 0, NULL), 200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases"), md.admin_token, NULL, NULL), 200);
}

/* Issue 12, item 17, over the API: the answer lists each manifest naming
 * an undeclared capability; "strict": true refuses such a release. */
Test(releases, import_answers_warnings_and_strict_refuses) {
        json_object *b = tu_release_json(rel15), *o;
        json_object_object_add(b, "strict", json_object_new_string("yes"));
        cr_assert_eq(post_release(b, md.admin_token, &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "strict"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        json_object_object_add(b, "strict", json_object_new_boolean(true));
        cr_assert_eq(post_release(b, md.admin_token, &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "0000_70_future-operator.yaml (FutureCapability)"), "%s",
                  tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/4.15.0"), md.admin_token, NULL, NULL), 404);
        json_object_object_add(b, "strict", json_object_new_boolean(false));
        cr_assert_eq(post_release(b, md.admin_token, &o), 201, "%s", o ? json_object_to_json_string(o) : "");
        json_object *w = tu_json_get(o, "warnings");
        cr_assert_eq(json_object_array_length(w), 1, "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(w, "0.file"), "0000_70_future-operator.yaml");
        cr_assert_str_eq(tu_jstr(w, "0.capability"), "FutureCapability");
        cr_assert(strstr(tu_jstr(w, "0.message"), "never installed"), "%s", tu_jstr(w, "0.message"));
        json_object_put(o);
        json_object_put(b);

        /* A release whose manifests name only declared capabilities: none. */
        b = tu_release_json(rel16);
        json_object *files = tu_json_get(b, "files");
        for (size_t i = 0; i < json_object_array_length(files); i++)
                if (strcmp(tu_jstr(json_object_array_get_idx(files, i), "name"), "0000_70_future-operator.yaml") == 0) {
                        json_object_array_del_idx(files, i, 1);
                        break;
                }
        json_object_object_add(b, "strict", json_object_new_boolean(true));
        cr_assert_eq(post_release(b, md.admin_token, &o), 201, "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_eq(json_object_array_length(tu_json_get(o, "warnings")), 0);
        json_object_put(o);
        json_object_put(b);
}

/* A release body past the default limit is fine up to max_release_bytes;
 * other routes keep theirs. */
Test(releases, release_route_has_its_own_body_limit) {
        json_object *b = tu_release_json(rel16);
        size_t pad = 200 * 1024;
        char *big = malloc(pad + 128);
        int k = snprintf(big, 128, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: padding\ndata:\n  x: \"");
        memset(big + k, 'a', pad);
        strcpy(big + k + pad, "\"\n");
        set_file(b, "zz_padding.yaml", big);
        json_object *o = NULL;
        long code = post_release(b, md.admin_token, &o);
        cr_assert_eq(code, 201, "%ld %s", code, o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "manifest_count"), "14");
        json_object_put(o);
        json_object_put(b);

        free(big);
        /* 2 MiB at /releases, 100 KiB at /clusters: both over their limits. */
        size_t n = 2u << 20;
        char *huge = malloc(n + 1);
        memset(huge, ' ', n);
        huge[0] = '{';
        huge[n - 1] = '}';
        huge[n] = '\0';
        cr_assert_eq(tu_http_json("POST", url("/api/v2/releases"), md.admin_token, huge, &o), 413);
        cr_assert(strstr(tu_jstr(o, "reason"), "1048576"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        huge[100 * 1024] = '}';
        huge[100 * 1024 + 1] = '\0';
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token, huge, &o), 413);
        cr_assert(strstr(tu_jstr(o, "reason"), "65536"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        free(huge);
}

/* ---- preview: the fixture README's table -------------------------------- */

static json_object *preview(const char *query) {
        json_object *o = NULL;
        long code = tu_http_json("GET", url("/api/v2/releases/4.15.0/preview%s", query), md.admin_token, NULL, &o);
        cr_assert_eq(code, 200, "preview%s: %ld %s", query, code, o ? json_object_to_json_string(o) : "");
        return o;
}

/* "path=reason" of each excluded manifest. */
static char *excluded(json_object *o) {
        json_object *a = tu_json_get(o, "excluded");
        size_t cap = 8192, len = 0;
        char *b = calloc(1, cap);
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                len += (size_t) snprintf(b + len, cap - len, "%s%s=%s", i ? "," : "", tu_jstr(e, "path"),
                                         tu_jstr(e, "reason"));
        }
        return b;
}

static void expect_preview(const char *query, const char *inc, const char *exc) {
        json_object *o = preview(query);
        char *i = tu_join(tu_json_get(o, "included"), "path"), *e = excluded(o);
        cr_assert_str_eq(i, inc, "included for %s", query);
        cr_assert_str_eq(e, exc, "excluded for %s", query);
        free(i);
        free(e);
        json_object_put(o);
}

Test(releases, preview_follows_the_fixture_table) {
        import(rel15);
        json_object *o = preview("");
        cr_assert_str_eq(tu_jstr(o, "version"), "4.15.0");
        cr_assert_str_eq(tu_jstr(o, "profile"), "self-managed-high-availability");
        cr_assert_str_eq(tu_jstr(o, "feature_set"), "Default");
        char *en = tu_join(tu_json_get(o, "capabilities.enabled"), NULL);
        cr_assert_str_eq(en, "CSISnapshot,Console,Insights,Storage,baremetal,marketplace,openshift-samples");
        free(en);
        cr_assert_eq(json_object_array_length(tu_json_get(o, "capabilities.implicit")), 0);
        json_object *ex = tu_json_get(o, "excluded");
        for (size_t i = 0; i < json_object_array_length(ex); i++) {
                json_object *e = json_object_array_get_idx(ex, i);
                if (strcmp(tu_jstr(e, "path"), "0000_70_future-operator.yaml") == 0)
                        cr_assert(strstr(tu_jstr(e, "message"), "FutureCapability"), "%s", tu_jstr(e, "message"));
                cr_assert_not_null(tu_jstr(e, "kind"));
                cr_assert_not_null(tu_jstr(e, "file"));
        }
        json_object_put(o);

        /* vCurrent: every row of the table as written. */
        expect_preview("",
                       "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"
                       "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"
                       "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"
                       "0000_50_cluster-samples-operator_06-operator.yaml,"
                       "0000_50_console-operator_07-downloads-deployment.yaml,"
                       "0000_50_insights-operator_10-prometheus-rule.yaml,0000_80_hosted-only-configmap.yaml,"
                       "0000_90_console_01-console-insights-plugin.yaml,99_site-config.yml",
                       "0000_10_config-operator_01_featuregate-techpreview.crd.yaml=feature-set,"
                       "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml=profile,"
                       "0000_70_future-operator.yaml=capability-unknown");
        /* Baseline None + [baremetal, Console]: the README's 8 files. */
        expect_preview("?baseline=None&additional=baremetal,Console",
                       "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"
                       "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"
                       "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"
                       "0000_50_console-operator_07-downloads-deployment.yaml,"
                       "0000_50_insights-operator_10-prometheus-rule.yaml,0000_80_hosted-only-configmap.yaml,"
                       "99_site-config.yml",
                       "0000_10_config-operator_01_featuregate-techpreview.crd.yaml=feature-set,"
                       "0000_50_cluster-samples-operator_06-operator.yaml=capability-disabled,"
                       "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml=profile,"
                       "0000_70_future-operator.yaml=capability-unknown,"
                       "0000_90_console_01-console-insights-plugin.yaml=capability-disabled");
        /* v4.11: baremetal, marketplace, openshift-samples; no Console. */
        expect_preview("?baseline=v4.11",
                       "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"
                       "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"
                       "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"
                       "0000_50_cluster-samples-operator_06-operator.yaml,"
                       "0000_50_insights-operator_10-prometheus-rule.yaml,0000_80_hosted-only-configmap.yaml,"
                       "99_site-config.yml",
                       "0000_10_config-operator_01_featuregate-techpreview.crd.yaml=feature-set,"
                       "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml=profile,"
                       "0000_50_console-operator_07-downloads-deployment.yaml=capability-disabled,"
                       "0000_70_future-operator.yaml=capability-unknown,"
                       "0000_90_console_01-console-insights-plugin.yaml=capability-disabled");
        /* The hosted-only config map goes with its id excluded. */
        expect_preview("?exclude=internal-openshift-hosted",
                       "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"
                       "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"
                       "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"
                       "0000_50_cluster-samples-operator_06-operator.yaml,"
                       "0000_50_console-operator_07-downloads-deployment.yaml,"
                       "0000_50_insights-operator_10-prometheus-rule.yaml,"
                       "0000_90_console_01-console-insights-plugin.yaml,99_site-config.yml",
                       "0000_10_config-operator_01_featuregate-techpreview.crd.yaml=feature-set,"
                       "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml=profile,"
                       "0000_70_future-operator.yaml=capability-unknown,"
                       "0000_80_hosted-only-configmap.yaml=excluded-id");
        /* TechPreviewNoUpgrade brings the tech-preview CRD in. */
        expect_preview("?feature_set=TechPreviewNoUpgrade",
                       "0000_03_config-operator_01_proxy.crd.yaml,"
                       "0000_10_config-operator_01_featuregate-techpreview.crd.yaml,0000_20_namespace.json,"
                       "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"
                       "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"
                       "0000_50_cluster-samples-operator_06-operator.yaml,"
                       "0000_50_console-operator_07-downloads-deployment.yaml,"
                       "0000_50_insights-operator_10-prometheus-rule.yaml,0000_80_hosted-only-configmap.yaml,"
                       "0000_90_console_01-console-insights-plugin.yaml,99_site-config.yml",
                       "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml=profile,"
                       "0000_70_future-operator.yaml=capability-unknown");
        /* Another profile: only what names it, and what names none. */
        expect_preview("?profile=ibm-cloud-managed",
                       "0000_20_namespace.json,0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml,"
                       "99_site-config.yml",
                       "0000_03_config-operator_01_proxy.crd.yaml=profile,"
                       "0000_10_config-operator_01_featuregate-techpreview.crd.yaml=feature-set,"
                       "0000_30_cluster-baremetal-operator_05_deployment.0.yaml=profile,"
                       "0000_30_cluster-baremetal-operator_05_deployment.1.yaml=profile,"
                       "0000_50_cluster-samples-operator_06-operator.yaml=profile,"
                       "0000_50_console-operator_07-downloads-deployment.yaml=profile,"
                       "0000_50_insights-operator_10-prometheus-rule.yaml=profile,"
                       "0000_70_future-operator.yaml=profile,0000_80_hosted-only-configmap.yaml=profile,"
                       "0000_90_console_01-console-insights-plugin.yaml=profile");

        /* Unknown names are 400 and named. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/4.15.0/preview?baseline=v9"), md.admin_token, NULL, &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "v9"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/4.15.0/preview?additional=Console,Foo"), md.admin_token,
                                  NULL, &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "Foo"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/4.99.0/preview"), md.admin_token, NULL, NULL), 404);
}

/* ---- cluster capabilities ------------------------------------------------- */

static json_object *get_cluster(const char *id) {
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", id), md.admin_token, NULL, &o), 200);
        return o;
}

static const char *validation_message(json_object *c, const char *id) {
        json_object *a = tu_json_get(c, "validations");
        for (size_t i = 0; a && i < json_object_array_length(a); i++)
                if (strcmp(tu_jstr(json_object_array_get_idx(a, i), "id"), id) == 0)
                        return tu_jstr(json_object_array_get_idx(a, i), "message");
        return NULL;
}

static char *create_cluster(const char *body) {
        char *id = NULL;
        long code = tu_create_cluster(md.base, md.admin_token, body, &id);
        cr_assert_eq(code, 201, "%s: %ld", body, code);
        return id;
}

Test(releases, cluster_capabilities_and_the_implicit_rule) {
        import(rel15);
        json_object *o;
        /* Unknown set or capability: 400 naming it, on create and PATCH. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token,
                                  "{\"name\":\"x\",\"release_version\":\"4.15.0\",\"capabilities\":{\"spec\":"
                                  "{\"baseline_capability_set\":\"v9\"}}}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "\"v9\""), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token,
                                  "{\"name\":\"x\",\"release_version\":\"4.15.0\",\"capabilities\":{\"spec\":"
                                  "{\"additional_enabled_capabilities\":[\"Console\",\"Foo\"]}}}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "\"Foo\""), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token,
                                  "{\"name\":\"x\",\"release_version\":\"9.9\",\"capabilities\":{\"spec\":"
                                  "{\"baseline_capability_set\":\"None\"}}}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "release 9.9 is not imported"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token,
                                  "{\"name\":\"x\",\"capabilities\":{\"spec\":{\"baseline_capability_set\":\"None\"}}}",
                                  &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "release_version"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token,
                                  "{\"name\":\"x\",\"release_version\":\"4.15.0\",\"capabilities\":{\"spec\":{},"
                                  "\"status\":{\"enabled_capabilities\":[]}}}", NULL), 400, "status is the server's");

        /* A plain create with a release not imported is fine; the validation says why it cannot install. */
        char *later = create_cluster("{\"name\":\"later\",\"release_version\":\"4.16.0\"}");
        o = get_cluster(later);
        cr_assert_null(tu_json_get(o, "capabilities.status"), "no status before the release is there");
        cr_assert_str_eq(tu_validation(o, "capabilities-valid"), "failure");
        cr_assert(strstr(validation_message(o, "capabilities-valid"), "release 4.16.0 is not imported"), "%s",
                  validation_message(o, "capabilities-valid"));
        json_object_put(o);
        char *none = create_cluster("{\"name\":\"none\"}");
        o = get_cluster(none);
        cr_assert(strstr(validation_message(o, "capabilities-valid"), "Set release_version"), "%s",
                  validation_message(o, "capabilities-valid"));
        cr_assert_str_eq(tu_validation(o, "operators-resolvable"), "success"); /* nothing subscribed */
        json_object_put(o);
        import(rel16);
        o = get_cluster(later);
        cr_assert_eq(json_object_array_length(tu_json_get(o, "capabilities.status.enabled_capabilities")), 9,
                     "computed when the release arrived: %s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_validation(o, "capabilities-valid"), "success");
        json_object_put(o);

        /* Baseline None + [baremetal, Console]. */
        char *c = create_cluster("{\"name\":\"caps\",\"release_version\":\"4.15.0\",\"capabilities\":{\"spec\":"
                                 "{\"baseline_capability_set\":\"None\",\"additional_enabled_capabilities\":"
                                 "[\"baremetal\",\"Console\"]}}}");
        o = get_cluster(c);
        cr_assert_str_eq(tu_jstr(o, "capabilities.spec.baseline_capability_set"), "None");
        char *en = tu_join(tu_json_get(o, "capabilities.status.enabled_capabilities"), NULL);
        cr_assert_str_eq(en, "Console,baremetal");
        free(en);
        cr_assert_eq(json_object_array_length(tu_json_get(o, "capabilities.status.known_capabilities")), 7);
        cr_assert_str_eq(tu_jstr(o, "conditions.0.type"), "ImplicitlyEnabledCapabilities");
        cr_assert_str_eq(tu_jstr(o, "conditions.0.status"), "False");
        cr_assert_str_eq(tu_jstr(o, "conditions.0.reason"), "AsExpected");
        cr_assert_not_null(tu_jstr(o, "conditions.0.last_transition_time"));
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "0");
        cr_assert_str_eq(tu_jstr(o, "feature_set"), "Default");
        cr_assert_str_eq(tu_validation(o, "capabilities-valid"), "success");
        json_object_put(o);

        /* Dropping nothing: still False. */
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"capabilities\":{\"spec\":{\"baseline_capability_set\":\"None\","
                                  "\"additional_enabled_capabilities\":[\"Console\",\"baremetal\"]}}}", &o), 200);
        cr_assert_str_eq(tu_jstr(o, "conditions.0.status"), "False");
        cr_assert_str_eq(tu_jstr(o, "conditions.0.reason"), "AsExpected");
        json_object_put(o);
        /* Enabling Insights, then dropping Console and Insights: both stay enabled, implicitly. */
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"capabilities\":{\"spec\":{\"baseline_capability_set\":\"None\","
                                  "\"additional_enabled_capabilities\":[\"Console\",\"baremetal\",\"Insights\"]}}}",
                                  &o), 200);
        cr_assert(has_str(tu_json_get(o, "capabilities.status.enabled_capabilities"), "Insights"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"capabilities\":{\"spec\":{\"baseline_capability_set\":\"None\","
                                  "\"additional_enabled_capabilities\":[\"baremetal\"]}}}", &o), 200);
        json_object *st = tu_json_get(o, "capabilities.status.enabled_capabilities");
        cr_assert(has_str(st, "Console") && has_str(st, "Insights") && has_str(st, "baremetal"), "%s",
                  json_object_to_json_string(st));
        cr_assert_eq(json_object_array_length(st), 3);
        cr_assert_str_eq(tu_jstr(o, "conditions.0.status"), "True");
        cr_assert_str_eq(tu_jstr(o, "conditions.0.reason"), "CapabilitiesImplicitlyEnabled");
        cr_assert(strstr(tu_jstr(o, "conditions.0.message"), "Console"), "%s", tu_jstr(o, "conditions.0.message"));
        cr_assert(strstr(tu_jstr(o, "conditions.0.message"), "Insights"), "%s", tu_jstr(o, "conditions.0.message"));
        cr_assert_str_eq(tu_jstr(o, "capabilities.spec.additional_enabled_capabilities.0"), "baremetal");
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"capabilities\":{\"spec\":{\"additional_enabled_capabilities\":[\"Foo\"]}}}", &o),
                     400);
        cr_assert(strstr(tu_jstr(o, "reason"), "\"Foo\""), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"capabilities\":{\"spec\":{\"baseline_capability_set\":\"v1.0\"}}}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "\"v1.0\""), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"release_version\":\"4.99\",\"capabilities\":{\"spec\":{}}}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "release 4.99 is not imported"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        o = get_cluster(c);
        cr_assert_str_eq(tu_jstr(o, "release_version"), "4.15.0", "a refused PATCH changes nothing");
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?cluster_id=%s", c), md.admin_token, NULL, &o), 200);
        cr_assert(strstr(json_object_to_json_string(o), "ImplicitlyEnabledCapabilities=True"), "%s",
                  json_object_to_json_string(o));
        json_object_put(o);
        free(c);
        free(later);
        free(none);
}

Test(releases, upgrade_enables_what_the_old_release_needed) {
        import(rel15);
        import(rel16);
        char *c = create_cluster("{\"name\":\"up\",\"release_version\":\"4.15.0\",\"capabilities\":{\"spec\":"
                                 "{\"baseline_capability_set\":\"None\",\"additional_enabled_capabilities\":"
                                 "[\"baremetal\",\"Console\"]}}}");
        json_object *o;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/upgrade", c), md.admin_token,
                                  "{\"release_version\":\"4.99.0\"}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "release 4.99.0 is not imported"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/upgrade", c), md.admin_token,
                                  "{\"release_version\":\"4.15.0\"}", NULL), 409, "already there");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/upgrade", c), md.admin_token, "{}", NULL), 400);

        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/upgrade", c), md.admin_token,
                                  "{\"release_version\":\"4.16.0\"}", &o), 200,
                     "%s", o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "release_version"), "4.16.0");
        json_object *en = tu_json_get(o, "capabilities.status.enabled_capabilities");
        char *s = tu_join(en, NULL);
        cr_assert_str_eq(s, "Console,Insights,baremetal", "Insights implicitly, ImageRegistry not");
        free(s);
        cr_assert_eq(json_object_array_length(tu_json_get(o, "capabilities.status.known_capabilities")), 9);
        cr_assert_str_eq(tu_jstr(o, "conditions.0.status"), "True");
        cr_assert_str_eq(tu_jstr(o, "conditions.0.reason"), "CapabilitiesImplicitlyEnabled");
        cr_assert(strstr(tu_jstr(o, "conditions.0.message"), "Insights"), "%s", tu_jstr(o, "conditions.0.message"));
        cr_assert_null(strstr(tu_jstr(o, "conditions.0.message"), "ImageRegistry"));
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "0", "not installed: no payload");
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?cluster_id=%s", c), md.admin_token, NULL, &o), 200);
        cr_assert(strstr(json_object_to_json_string(o), "upgraded from release 4.15.0 to 4.16.0"), "%s",
                  json_object_to_json_string(o));
        json_object_put(o);
        free(c);
}

/* ---- OS image and signing key ------------------------------------------------ */

/* GET with a token: the status; the body, its length and content type in *out. */
static long download(const char *u, const char *token, struct tu_http_reply *out) {
        long code = tu_http_raw("GET", u, token, NULL, NULL, 0, out);
        cr_assert_eq(out->curl, CURLE_OK);
        return code;
}

struct body {
        char *b;
        size_t n;
};

static size_t body_add(char *p, size_t size, size_t nmemb, void *u) {
        struct body *b = u;
        char *nb = realloc(b->b, b->n + size * nmemb + 1);
        cr_assert_not_null(nb);
        memcpy(nb + b->n, p, size * nmemb);
        b->b = nb;
        b->n += size * nmemb;
        return size * nmemb;
}

/* GET u with "Range: bytes=<range>": the status and the body. */
static long get_range(const char *u, const char *token, const char *range, struct body *out) {
        CURL *c = curl_easy_init();
        char auth[2048];
        struct curl_slist *h = NULL;
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
        *out = (struct body) { 0 };
        curl_easy_setopt(c, CURLOPT_URL, u);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_RANGE, range);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_add);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
        cr_assert_eq(curl_easy_perform(c), CURLE_OK);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        return code;
}

Test(releases, os_image_download_and_signing_key) {
        import(rel15);
        char *ie, *agent, path[4200];
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "pool", &ie, &agent), 201);
        snprintf(path, sizeof path, "%s/os.img", rel15);
        size_t len;
        char *want = read_text(path, &len);
        struct tu_http_reply got;
        cr_assert_eq(download(url("/api/v2/releases/4.15.0/os-image"), agent, &got), 200, "agents fetch the image");
        cr_assert_eq(got.len, len);
        cr_assert_eq(memcmp(got.body, want, len), 0, "the bytes of the file");
        cr_assert_str_eq(got.ctype, "application/octet-stream");
        free(got.body);
        cr_assert_eq(download(url("/api/v2/releases/4.15.0/os-image"), md.admin_token, &got), 200);
        cr_assert_eq(got.len, len);
        free(got.body);
        cr_assert_eq(download(url("/api/v2/releases/4.15.0/os-image"), NULL, &got), 401);
        free(got.body);
        cr_assert_eq(download(url("/api/v2/releases/4.99.0/os-image"), agent, &got), 404);
        free(got.body);
        /* The rest from a byte on (an agent resuming a broken transfer). */
        struct body part;
        cr_assert_eq(get_range(url("/api/v2/releases/4.15.0/os-image"), agent, "1000-", &part), 206);
        cr_assert_eq(part.n, len - 1000);
        cr_assert_eq(memcmp(part.b, want + 1000, part.n), 0);
        free(part.b);
        cr_assert_eq(get_range(url("/api/v2/releases/4.15.0/os-image"), agent, "99999999-", &part), 416);
        free(part.b);
        free(want);

        /* A release whose image is a URL says where it is. */
        json_object *b = tu_release_json(rel16);
        char abs[4200];
        snprintf(abs, sizeof abs, "path: %s/os.img", rel16);
        edit_yaml(b, abs, "url: https://images.example.test/4.16.img");
        json_object *o;
        cr_assert_eq(post_release(b, md.admin_token, &o), 201, "%s", o ? json_object_to_json_string(o) : "");
        json_object_put(o);
        json_object_put(b);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/releases/4.16.0/os-image"), agent, NULL, &o), 404);
        cr_assert(strstr(tu_jstr(o, "reason"), "served from https://images.example.test/4.16.img"), "%s",
                  tu_jstr(o, "reason"));
        json_object_put(o);

        /* The public key: any token, the same PEM as DIR/signing-key.pub. */
        snprintf(path, sizeof path, "%s/signing-key.pub", md.state_dir);
        char *pub = read_text(path, NULL);
        cr_assert(strstr(pub, "BEGIN PUBLIC KEY"), "%s", pub);
        cr_assert_eq(download(url("/api/v2/signing-key"), agent, &got), 200);
        cr_assert(strncmp(got.ctype, "text/plain", 10) == 0, "%s", got.ctype);
        cr_assert_eq(got.len, strlen(pub));
        cr_assert_eq(memcmp(got.body, pub, got.len), 0);
        free(got.body);
        cr_assert_eq(download(url("/api/v2/signing-key"), md.admin_token, &got), 200);
        free(got.body);
        cr_assert_eq(download(url("/api/v2/signing-key"), NULL, &got), 401);
        free(got.body);
        free(pub);
        free(ie);
        free(agent);
}
