/* The out-of-band objects of a manifest directory (agent/unowned.c): which
 * files are read (not muster's, not dot files, not symlinks, manifest
 * extensions only), their objects in file and document order, files that do
 * not parse or are too large as entries with an error, the file and object
 * limits, a HelmChart's release namespace, conflicts, and the JSON form.
 * Every directory is made under a temporary one and removed. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unowned.h"
#include "manifest.h"
#include "manifestdir.h"
#include "testutil.h"

static char *tmp;

static void mk(void) {
        tmp = tu_mkdtemp();
        cr_assert_not_null(tmp);
}

static void rm(void) {
        tu_rm_rf(tmp);
        free(tmp);
}

static char *path_in(const char *dir, const char *rel) {
        char *p;
        cr_assert(asprintf(&p, "%s/%s", dir, rel) > 0);
        return p;
}

/* One line per entry: "file#doc group/version kind ns/name [rel]" or
 * "file ERR", joined with '|'. */
static char *summary(const struct unowned_list *l) {
        size_t cap = 64 + l->n * 600, off = 0;
        char *s = malloc(cap);
        cr_assert_not_null(s);
        s[0] = '\0';
        for (size_t i = 0; i < l->n; i++) {
                const struct unowned_object *o = &l->v[i];
                if (!o->kind)
                        off += (size_t) snprintf(s + off, cap - off, "%s%s ERR", i ? "|" : "", o->file);
                else
                        off += (size_t) snprintf(s + off, cap - off, "%s%s#%u %s/%s %s %s/%s%s%s%s", i ? "|" : "",
                                                 o->file, o->doc_index, o->group, o->version, o->kind,
                                                 o->namespace ? o->namespace : "-", o->name,
                                                 o->release_namespace ? " [" : "",
                                                 o->release_namespace ? o->release_namespace : "",
                                                 o->release_namespace ? "]" : "");
                cr_assert_lt(off, cap);
        }
        return s;
}

#define CM(name) "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " name "\n  namespace: app\n"
#define HELM_TARGET(name, ns, target)                                                                              \
        "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: " name "\n  namespace: " ns             \
        "\nspec:\n  chart: " name "\n  targetNamespace: " target "\n"
#define HELM_NS(name, ns) \
        "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: " name "\n  namespace: " ns "\nspec:\n  chart: x\n"
#define HELM(name) "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: " name "\nspec:\n  chart: x\n"

struct file { const char *name, *text; };

struct scan_case {
        const char *what;
        struct file files[8];
        const char *links[4];  /* names of symlinks to the first file */
        const char *dirs[2];   /* names of folders */
        const char *book;      /* bookkeeping text, NULL: none */
        const char *want;      /* summary() of the scan */
};

static const struct scan_case SCANS[] = {
        { .what = "an empty folder", .want = "" },
        { .what = "muster's files are not listed",
          .files = { { "0000_a.yaml", CM("a") }, { "0000_b.yaml", CM("b") }, { "local.yaml", CM("mine") } },
          .book = "{\"files\":{\"0000_a.yaml\":\"00\",\"0000_b.yaml\":\"00\"},\"revision\":4}\n",
          .want = "local.yaml#0 /v1 ConfigMap app/mine" },
        { .what = "no bookkeeping: every file is someone else's",
          .files = { { "0000_a.yaml", CM("a") }, { "local.yml", CM("mine") } },
          .want = "0000_a.yaml#0 /v1 ConfigMap app/a|local.yml#0 /v1 ConfigMap app/mine" },
        { .what = "dot files, other extensions, symlinks and folders are not read",
          .files = { { "real.yaml", CM("real") }, { ".hidden.yaml", CM("hidden") }, { "notes.txt", CM("txt") },
                     { "x.yaml.bak", CM("bak") }, { ".muster-tmp.a.yaml.1.2", CM("tmp") }, { "yaml", CM("bare") } },
          .links = { "link.yaml" }, .dirs = { "folder.yaml" },
          .want = "real.yaml#0 /v1 ConfigMap app/real" },
        { .what = "several documents in file then document order",
          .files = { { "b.yaml", "---\n" CM("b0") "---\n" CM("b1") "---\n---\n" CM("b2") },
                     { "a.yaml", "# a comment\n" CM("a0") } },
          .want = "a.yaml#0 /v1 ConfigMap app/a0|b.yaml#0 /v1 ConfigMap app/b0|b.yaml#1 /v1 ConfigMap app/b1|"
                  "b.yaml#2 /v1 ConfigMap app/b2" },
        { .what = "a JSON file",
          .files = { { "obj.json", "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"}}" } },
          .want = "obj.json#0 apps/v1 Deployment -/web" },
        { .what = "a file that does not parse is one entry with an error, its neighbours are read",
          .files = { { "a.yaml", CM("a") }, { "b.yaml", CM("b0") "---\nkind: [\n" }, { "c.yaml", "just text\n" },
                     { "d.yaml", CM("d") } },
          .want = "a.yaml#0 /v1 ConfigMap app/a|b.yaml ERR|c.yaml ERR|d.yaml#0 /v1 ConfigMap app/d" },
        { .what = "HelmCharts: targetNamespace, else metadata.namespace, else default",
          .files = { { "h1.yaml", HELM_TARGET("traefik", "kube-system", "ingress") },
                     { "h2.yaml", HELM_NS("cert-manager", "kube-system") },
                     { "h3.yaml", HELM("plain") },
                     { "h4.yaml", HELM_TARGET("empty", "kube-system", "\"\"") },
                     { "h5.yaml", "apiVersion: example.com/v1\nkind: HelmChart\nmetadata:\n  name: other\n" },
                     { "h6.yaml", "apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata:\n  name: cfg\n" } },
          .want = "h1.yaml#0 helm.cattle.io/v1 HelmChart kube-system/traefik [ingress]|"
                  "h2.yaml#0 helm.cattle.io/v1 HelmChart kube-system/cert-manager [kube-system]|"
                  "h3.yaml#0 helm.cattle.io/v1 HelmChart -/plain [default]|"
                  "h4.yaml#0 helm.cattle.io/v1 HelmChart kube-system/empty [kube-system]|"
                  "h5.yaml#0 example.com/v1 HelmChart -/other|"
                  "h6.yaml#0 helm.cattle.io/v1 HelmChartConfig -/cfg" },
        { .what = "a HelmChart whose targetNamespace is not a name is listed with an error and no release",
          .files = { { "h.yaml", "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: odd\nspec:\n"
                                 "  targetNamespace: [a, b]\n" } },
          .want = "h.yaml#0 helm.cattle.io/v1 HelmChart -/odd" },
};

static void set_up(const char *dir, const struct scan_case *c) {
        cr_assert_eq(mkdir(dir, 0755), 0);
        for (size_t i = 0; i < 8 && c->files[i].name; i++)
                cr_assert_eq(tu_write_file(dir, c->files[i].name, c->files[i].text), 0);
        for (size_t i = 0; i < 4 && c->links[i]; i++)
                cr_assert_eq(tu_symlink(dir, c->links[i], c->files[0].name), 0);
        for (size_t i = 0; i < 2 && c->dirs[i]; i++) {
                char *p = path_in(dir, c->dirs[i]);
                cr_assert_eq(mkdir(p, 0755), 0);
                free(p);
        }
        if (c->book)
                cr_assert_eq(tu_write_file(dir, MANIFESTDIR_BOOKKEEPING, c->book), 0);
}

Test(foreign, scans_the_files_that_are_not_musters, .init = mk, .fini = rm) {
        for (size_t i = 0; i < sizeof SCANS / sizeof SCANS[0]; i++) {
                const struct scan_case *c = &SCANS[i];
                char name[32];
                snprintf(name, sizeof name, "case%zu", i);
                char *dir = path_in(tmp, name);
                set_up(dir, c);
                struct unowned_list l;
                char err[256];
                cr_assert_eq(unowned_scan(dir, &l, err, sizeof err), 0, "%s: %s", c->what, err);
                char *got = summary(&l);
                cr_assert_str_eq(got, c->want, "%s", c->what);
                cr_assert_not(l.truncated, "%s", c->what);
                for (size_t k = 0; k < l.n; k++)
                        cr_assert_eq(!l.v[k].kind, !!l.v[k].error && !l.v[k].name, "%s: entry %zu", c->what, k);
                free(got);
                unowned_list_free(&l);
                free(dir);
        }
}

Test(foreign, no_folder_is_an_empty_list, .init = mk, .fini = rm) {
        char *dir = path_in(tmp, "not/there");
        struct unowned_list l;
        char err[256];
        cr_assert_eq(unowned_scan(dir, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, 0);
        cr_assert_not(l.truncated);
        unowned_list_free(&l);
        free(dir);
}

Test(foreign, refuses_what_is_not_a_folder_or_bookkeeping, .init = mk, .fini = rm) {
        struct unowned_list l;
        char err[256];
        cr_assert_eq(tu_write_file(tmp, "file.yaml", CM("a")), 0);
        char *file = path_in(tmp, "file.yaml");
        cr_assert_eq(unowned_scan(file, &l, err, sizeof err), -ENOTDIR);
        cr_assert(strstr(err, "file.yaml"), "%s", err);
        unowned_list_free(&l);

        static const char *const bad[] = { "not json", "[]", "{\"revision\":1}", "{\"files\":[]}" };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                char name[32];
                snprintf(name, sizeof name, "book%zu", i);
                char *dir = path_in(tmp, name);
                cr_assert_eq(mkdir(dir, 0755), 0);
                cr_assert_eq(tu_write_file(dir, MANIFESTDIR_BOOKKEEPING, bad[i]), 0);
                cr_assert_eq(tu_write_file(dir, "a.yaml", CM("a")), 0);
                cr_assert_eq(unowned_scan(dir, &l, err, sizeof err), -EBADMSG, "%s", bad[i]);
                cr_assert(strstr(err, "bookkeeping"), "%s", err);
                unowned_list_free(&l);
                free(dir);
        }
        free(file);
}

Test(foreign, the_parse_error_names_the_file_and_line, .init = mk, .fini = rm) {
        struct unowned_list l;
        char err[256];
        cr_assert_eq(tu_write_file(tmp, "bad.yaml", CM("ok") "---\nkind: v1\n"), 0);
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, 1, "one entry for the file, not its first document");
        cr_assert_str_eq(l.v[0].file, "bad.yaml");
        cr_assert_null(l.v[0].kind);
        cr_assert(strstr(l.v[0].error, "bad.yaml:"), "%s", l.v[0].error);
        cr_assert(strstr(l.v[0].error, "apiVersion"), "%s", l.v[0].error);
        unowned_list_free(&l);
}

/* A ConfigMap padded with a comment to exactly `size` bytes. */
static void write_sized(const char *dir, const char *name, size_t size) {
        const char *head = CM("big") "#";
        size_t h = strlen(head);
        cr_assert_gt(size, h + 1);
        char *buf = malloc(size);
        cr_assert_not_null(buf);
        memcpy(buf, head, h);
        memset(buf + h, 'x', size - h - 1);
        buf[size - 1] = '\n';
        cr_assert_eq(tu_write_bin(dir, name, buf, size), 0);
        free(buf);
}

Test(foreign, reads_one_mebibyte_and_not_a_byte_more, .init = mk, .fini = rm) {
        struct unowned_list l;
        char err[256];
        write_sized(tmp, "a-exact.yaml", UNOWNED_MAX_FILE);
        write_sized(tmp, "b-over.yaml", UNOWNED_MAX_FILE + 1);
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.v[0].file, "a-exact.yaml");
        cr_assert_str_eq(l.v[0].kind, "ConfigMap");
        cr_assert_null(l.v[0].error);
        cr_assert_str_eq(l.v[1].file, "b-over.yaml");
        cr_assert_null(l.v[1].kind);
        cr_assert_str_eq(l.v[1].error, "larger than 1 MiB; not read");
        cr_assert_not(l.truncated);
        unowned_list_free(&l);
}

static void write_many(const char *dir, size_t n) {
        cr_assert_eq(mkdir(dir, 0755), 0);
        /* Written largest name first: what is kept must not be readdir's order. */
        for (size_t i = n; i-- > 0;) {
                char name[32], text[128];
                snprintf(name, sizeof name, "f%04zu.yaml", i);
                snprintf(text, sizeof text, CM("c%zu"), i);
                cr_assert_eq(tu_write_file(dir, name, text), 0);
        }
}

Test(foreign, stops_after_a_thousand_files, .init = mk, .fini = rm) {
        struct unowned_list l;
        char err[256];
        char *exact = path_in(tmp, "exact"), *over = path_in(tmp, "over");
        write_many(exact, UNOWNED_MAX_FILES);
        cr_assert_eq(unowned_scan(exact, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, UNOWNED_MAX_FILES);
        cr_assert_not(l.truncated, "exactly the limit is not truncated");
        unowned_list_free(&l);

        write_many(over, UNOWNED_MAX_FILES + 1);
        cr_assert_eq(unowned_scan(over, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, UNOWNED_MAX_FILES);
        cr_assert(l.truncated);
        cr_assert_str_eq(l.v[0].file, "f0000.yaml");
        cr_assert_str_eq(l.v[UNOWNED_MAX_FILES - 1].file, "f0999.yaml", "the smallest names are kept");
        json_object *j = unowned_list_to_json(&l);
        cr_assert_eq(json_object_array_length(j), UNOWNED_MAX_FILES);
        json_object_put(j);
        unowned_list_free(&l);
        free(exact);
        free(over);
}

Test(foreign, stops_after_a_thousand_objects, .init = mk, .fini = rm) {
        struct unowned_list l;
        char err[256];
        /* a.yaml: 999 documents; b.yaml: 2, of which only the first fits. */
        size_t one = strlen("---\n" CM("x")), cap = one * 1000 + 1, off = 0;
        char *text = malloc(cap);
        cr_assert_not_null(text);
        for (int i = 0; i < 999; i++)
                off += (size_t) snprintf(text + off, cap - off, "---\n" CM("x"));
        cr_assert_eq(tu_write_file(tmp, "a.yaml", text), 0);
        cr_assert_eq(tu_write_file(tmp, "b.yaml", CM("b0") "---\n" CM("b1")), 0);
        cr_assert_eq(tu_write_file(tmp, "c.yaml", CM("c")), 0);
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, UNOWNED_MAX_OBJECTS);
        cr_assert(l.truncated);
        cr_assert_str_eq(l.v[998].file, "a.yaml");
        cr_assert_str_eq(l.v[999].name, "b0");
        unowned_list_free(&l);
        free(text);
}

Test(foreign, a_thousand_objects_in_all_are_not_truncated, .init = mk, .fini = rm) {
        struct unowned_list l;
        char err[256];
        size_t one = strlen("---\n" CM("x")), cap = one * 1000 + 1, off = 0;
        char *text = malloc(cap);
        cr_assert_not_null(text);
        for (int i = 0; i < 999; i++)
                off += (size_t) snprintf(text + off, cap - off, "---\n" CM("x"));
        cr_assert_eq(tu_write_file(tmp, "a.yaml", text), 0);
        cr_assert_eq(tu_write_file(tmp, "b.yaml", CM("b0")), 0);
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, UNOWNED_MAX_OBJECTS);
        cr_assert_not(l.truncated);
        unowned_list_free(&l);
        free(text);
}

struct ns_case {
        const char *what;
        const char *content;
        const char *metadata_ns;
        int r;
        const char *want;
};

static const struct ns_case NAMESPACES[] = {
        { "targetNamespace wins", "metadata:\n  name: a\nspec:\n  targetNamespace: ingress\n", "kube-system", 0, "ingress" },
        { "no spec: metadata.namespace", "metadata:\n  name: a\n", "kube-system", 0, "kube-system" },
        { "no targetNamespace: metadata.namespace", "spec:\n  chart: a\n", "kube-system", 0, "kube-system" },
        { "neither: default", "spec:\n  chart: a\n", NULL, 0, "default" },
        { "empty metadata namespace: default", "spec:\n  chart: a\n", "", 0, "default" },
        { "targetNamespace \"\" is none", "spec:\n  targetNamespace: \"\"\n", "ns", 0, "ns" },
        { "targetNamespace null is none", "spec:\n  targetNamespace: ~\n", "ns", 0, "ns" },
        { "quoted null is a name", "spec:\n  targetNamespace: 'null'\n", "ns", 0, "null" },
        { "spec null", "spec: null\n", NULL, 0, "default" },
        { "the last of a repeated key", "spec:\n  targetNamespace: a\n  targetNamespace: b\n", NULL, 0, "b" },
        { "JSON", "{\"spec\": {\"targetNamespace\": \"json-ns\"}}", "x", 0, "json-ns" },
        { "flow mapping", "{spec: {targetNamespace: flow}}", NULL, 0, "flow" },
        { "through an alias", "base: &b tgt\nspec:\n  targetNamespace: *b\n", NULL, 0, "tgt" },
        { "through a merge key", "base: &b {targetNamespace: merged}\nspec:\n  <<: *b\n  chart: x\n", NULL, 0, "merged" },
        { "an explicit key beats a merged one", "base: &b {targetNamespace: merged}\nspec:\n  <<: *b\n  targetNamespace: own\n",
          NULL, 0, "own" },
        { "merge list: the earlier mapping first",
          "a: &a {targetNamespace: first}\nb: &b {targetNamespace: second}\nspec:\n  <<: [*a, *b]\n", NULL, 0, "first" },
        { "spec from a merge key", "base: &b {spec: {targetNamespace: deep}}\n<<: *b\n", NULL, 0, "deep" },
        { "a quoted \"<<\" is a plain key", "base: &b {targetNamespace: m}\nspec:\n  \"<<\": *b\n", "ns", 0, "ns" },
        { "a merge cycle ends", "spec: &s\n  <<: *s\n  chart: c\n", "ns", 0, "ns" },
        { "empty documents first", "---\n---\n# c\n---\nspec:\n  targetNamespace: later\n", NULL, 0, "later" },
        { "the first document only", "spec:\n  targetNamespace: one\n---\nspec:\n  targetNamespace: two\n", NULL, 0, "one" },
        { "no document at all", "", "ns", 0, "ns" },
        { "a document that is not a mapping", "- a\n- b\n", "ns", -EINVAL, NULL },
        { "a scalar document", "hello\n", "ns", -EINVAL, NULL },
        { "spec not a mapping", "spec: [a]\n", "ns", -EINVAL, NULL },
        { "spec a scalar", "spec: text\n", "ns", -EINVAL, NULL },
        { "targetNamespace a mapping", "spec:\n  targetNamespace: {a: b}\n", "ns", -EINVAL, NULL },
        { "targetNamespace with a newline", "spec:\n  targetNamespace: \"a\\nb\"\n", "ns", -EINVAL, NULL },
        { "targetNamespace with a NUL", "spec:\n  targetNamespace: \"a\\0b\"\n", "ns", -EINVAL, NULL },
        { "not YAML", "spec: [\n", "ns", -EINVAL, NULL },
};

Test(foreign, helm_release_namespace) {
        for (size_t i = 0; i < sizeof NAMESPACES / sizeof NAMESPACES[0]; i++) {
                const struct ns_case *c = &NAMESPACES[i];
                char *out = (char *) "unset";
                int r = unowned_helm_release_namespace(c->content, strlen(c->content), c->metadata_ns, &out);
                cr_assert_eq(r, c->r, "%s: %d", c->what, r);
                if (c->want)
                        cr_assert_str_eq(out, c->want, "%s", c->what);
                else
                        cr_assert_null(out, "%s", c->what);
                free(out);
        }
        char *out = NULL;
        /* Length, not NUL, ends the content. */
        static const char two[] = "spec:\n  targetNamespace: ab";
        cr_assert_eq(unowned_helm_release_namespace(two, sizeof two - 2, NULL, &out), 0);
        cr_assert_str_eq(out, "a");
        free(out);
        /* The longest name there may be, and one byte more. */
        char text[600];
        snprintf(text, sizeof text, "spec:\n  targetNamespace: %0*d\n", MANIFEST_MAX_NAME, 0);
        cr_assert_eq(unowned_helm_release_namespace(text, strlen(text), NULL, &out), 0);
        cr_assert_eq(strlen(out), MANIFEST_MAX_NAME);
        free(out);
        snprintf(text, sizeof text, "spec:\n  targetNamespace: %0*d\n", MANIFEST_MAX_NAME + 1, 0);
        cr_assert_eq(unowned_helm_release_namespace(text, strlen(text), NULL, &out), -EINVAL);
}

struct conflict_case {
        const char *name, *ns;
        bool want;
        const char *file;
};

Test(foreign, helm_conflicts, .init = mk, .fini = rm) {
        cr_assert_eq(tu_write_file(tmp, "a.yaml", HELM_TARGET("traefik", "kube-system", "ingress")), 0);
        cr_assert_eq(tu_write_file(tmp, "b.yaml", CM("cm") "---\n" HELM_NS("cert-manager", "kube-system")), 0);
        cr_assert_eq(tu_write_file(tmp, "c.yaml", HELM("plain")), 0);
        cr_assert_eq(tu_write_file(tmp, "d.yaml", "apiVersion: example.com/v1\nkind: HelmChart\nmetadata:\n  name: other\n"), 0);
        cr_assert_eq(tu_write_file(tmp, "e.yaml", "apiVersion: helm.cattle.io/v1\nkind: HelmChartConfig\nmetadata:\n"
                                                  "  name: cfg\n  namespace: kube-system\n"), 0);
        cr_assert_eq(tu_write_file(tmp, "f.yaml", "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n"
                                                  "  name: odd\nspec:\n  targetNamespace: [x]\n"), 0);
        cr_assert_eq(tu_write_file(tmp, "g.yaml", HELM_NS("mine", "kube-system")), 0);
        cr_assert_eq(tu_write_file(tmp, MANIFESTDIR_BOOKKEEPING, "{\"files\":{\"g.yaml\":\"00\"},\"revision\":1}"), 0);
        struct unowned_list l;
        char err[256];
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);

        static const struct conflict_case cases[] = {
                { "traefik", "ingress", true, "a.yaml" },        /* targetNamespace */
                { "traefik", "kube-system", false, NULL },       /* not where that release goes */
                { "cert-manager", "kube-system", true, "b.yaml" }, /* second document */
                { "plain", "default", true, "c.yaml" },
                { "plain", "kube-system", false, NULL },
                { "other", "default", false, NULL },             /* another group */
                { "cfg", "kube-system", false, NULL },           /* another kind */
                { "odd", "default", false, NULL },               /* its release is not known */
                { "mine", "kube-system", false, NULL },          /* muster's own file */
                { "Traefik", "ingress", false, NULL },
                { "cm", "app", false, NULL },                    /* a ConfigMap of that name */
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                const char *file = NULL;
                bool got = unowned_helm_conflict(&l, cases[i].name, cases[i].ns, &file);
                cr_assert_eq(got, cases[i].want, "%s/%s", cases[i].ns, cases[i].name);
                if (cases[i].file)
                        cr_assert_str_eq(file, cases[i].file, "%s/%s", cases[i].ns, cases[i].name);
                else
                        cr_assert_null(file, "%s/%s", cases[i].ns, cases[i].name);
        }
        cr_assert(unowned_helm_conflict(&l, "traefik", "ingress", NULL), "file may be NULL");
        cr_assert_not(unowned_helm_conflict(&l, NULL, "ingress", NULL));
        struct unowned_list empty = { 0 };
        cr_assert_not(unowned_helm_conflict(&empty, "traefik", "ingress", NULL));
        unowned_list_free(&l);
}

Test(foreign, json_form, .init = mk, .fini = rm) {
        cr_assert_eq(tu_write_file(tmp, "a.yaml", HELM_TARGET("traefik", "kube-system", "ingress")), 0);
        cr_assert_eq(tu_write_file(tmp, "b.json", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n\"}}"), 0);
        cr_assert_eq(tu_write_file(tmp, "c.yaml", "nope\n"), 0);
        struct unowned_list l;
        char err[256];
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);
        json_object *j = unowned_list_to_json(&l);
        cr_assert_not_null(j);
        const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        char want[1024];
        snprintf(want, sizeof want,
                 "[{\"file\":\"a.yaml\",\"group\":\"helm.cattle.io\",\"version\":\"v1\",\"kind\":\"HelmChart\","
                 "\"namespace\":\"kube-system\",\"name\":\"traefik\",\"release_namespace\":\"ingress\"},"
                 "{\"file\":\"b.json\",\"group\":\"\",\"version\":\"v1\",\"kind\":\"Namespace\",\"name\":\"n\"},"
                 "{\"file\":\"c.yaml\",\"group\":null,\"version\":null,\"kind\":null,\"name\":null,\"error\":\"%s\"}]",
                 l.v[2].error);
        cr_assert_str_eq(text, want);
        json_object_put(j);
        unowned_list_free(&l);

        struct unowned_list empty = { 0 };
        j = unowned_list_to_json(&empty);
        cr_assert_str_eq(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), "[]");
        json_object_put(j);
}

Test(foreign, merges_that_repeat_without_end_are_refused_quickly) {
        /* l0: 1000 keys; each further level merges the one before 100 times:
         * 100^8 * 1000 entries to look at, from a few kilobytes. */
        size_t cap = 64 * 1024, off = 0;
        char *text = malloc(cap);
        cr_assert_not_null(text);
        off += (size_t) snprintf(text + off, cap - off, "l0: &l0 {");
        for (int i = 0; i < 1000; i++)
                off += (size_t) snprintf(text + off, cap - off, "%sk%d: v", i ? ", " : "", i);
        off += (size_t) snprintf(text + off, cap - off, "}\n");
        for (int lvl = 1; lvl <= 8; lvl++) {
                off += (size_t) snprintf(text + off, cap - off, "l%d: &l%d {<<: [", lvl, lvl);
                for (int i = 0; i < 100; i++)
                        off += (size_t) snprintf(text + off, cap - off, "%s*l%d", i ? ", " : "", lvl - 1);
                off += (size_t) snprintf(text + off, cap - off, "]}\n");
        }
        off += (size_t) snprintf(text + off, cap - off, "spec:\n  <<: *l8\n");
        cr_assert_lt(off, cap);
        char *out = NULL;
        cr_assert_eq(unowned_helm_release_namespace(text, off, "ns", &out), -EINVAL);
        cr_assert_null(out);
        /* The same shape one level deep (100 * 1000 entries) is answered. */
        char *cut = strstr(text, "l2: &l2");
        cr_assert_not_null(cut);
        off = (size_t) (cut - text);
        off += (size_t) snprintf(cut, cap - off, "spec:\n  <<: *l1\n");
        cr_assert_eq(unowned_helm_release_namespace(text, off, "ns", &out), 0);
        cr_assert_str_eq(out, "ns");
        free(out);
        free(text);
}

/* ---- deletions (issue 17) ---------------------------------------------------- */

#define DB(name, ns) "apiVersion: db.example.com/v1\nkind: Database\nmetadata:\n  name: " name "\n  namespace: " ns "\n"
#define DB_CLUSTER(name) "apiVersion: db.example.com/v1\nkind: Database\nmetadata:\n  name: " name "\n"

static const struct payload_deletion DEL_ORDERS = { .group = "db.example.com", .kind = "Database",
                                                     .namespace = "app", .name = "orders" };

/* unowned_delete over a fresh scan of dir; *deleted is a new array. */
static int delete_in(const char *dir, const struct payload_deletion *del, size_t n, json_object **deleted, char *err,
                     size_t errlen) {
        struct unowned_list l;
        cr_assert_eq(unowned_scan(dir, &l, err, errlen), 0, "%s", err);
        *deleted = json_object_new_array();
        cr_assert_not_null(*deleted);
        int r = unowned_delete(dir, &l, del, n, *deleted, err, errlen);
        unowned_list_free(&l);
        return r;
}

static const char *plain(json_object *o) {
        return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void assert_file(const char *dir, const char *name, const char *want) {
        char *p = path_in(dir, name);
        size_t len;
        char *got = tu_read_file(p, &len);
        cr_assert_not_null(got, "%s is gone", name);
        cr_assert_eq(len, strlen(want), "%s: %zu bytes, want %zu", name, len, strlen(want));
        cr_assert(memcmp(got, want, len) == 0, "%s:\n%s\nwant:\n%s", name, got, want);
        free(got);
        free(p);
}

/* Entries whose names start with '.' (temporary files, bookkeeping). */
static size_t count_dot_files(const char *dir) {
        DIR *d = opendir(dir);
        size_t n = 0;
        cr_assert_not_null(d);
        for (struct dirent *de; (de = readdir(d));)
                n += de->d_name[0] == '.' && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
        closedir(d);
        return n;
}

static bool is_there(const char *dir, const char *name) {
        char *p = path_in(dir, name);
        struct stat st;
        bool r = lstat(p, &st) == 0;
        free(p);
        return r;
}

Test(foreign, delete_removes_a_file_all_of_whose_objects_are_named, .init = mk, .fini = rm) {
        cr_assert_eq(tu_write_file(tmp, "db.yaml", DB("orders", "app")), 0);
        cr_assert_eq(tu_write_file(tmp, "other.yaml", CM("keep")), 0);
        json_object *deleted;
        char err[256];
        cr_assert_eq(delete_in(tmp, &DEL_ORDERS, 1, &deleted, err, sizeof err), 1, "%s", err);
        cr_assert_not(is_there(tmp, "db.yaml"));
        assert_file(tmp, "other.yaml", CM("keep"));
        cr_assert_str_eq(plain(deleted), "[{\"file\":\"db.yaml\",\"group\":\"db.example.com\",\"kind\":\"Database\","
                                         "\"namespace\":\"app\",\"name\":\"orders\"}]");
        json_object_put(deleted);

        /* Again: nothing left to delete. */
        cr_assert_eq(delete_in(tmp, &DEL_ORDERS, 1, &deleted, err, sizeof err), 0, "%s", err);
        cr_assert_eq(json_object_array_length(deleted), 0);
        json_object_put(deleted);

        /* Two documents, both named (the same object twice): the file goes. */
        cr_assert_eq(tu_write_file(tmp, "twice.yaml", DB("orders", "app") "---\n" DB("orders", "app")), 0);
        cr_assert_eq(delete_in(tmp, &DEL_ORDERS, 1, &deleted, err, sizeof err), 2, "%s", err);
        cr_assert_not(is_there(tmp, "twice.yaml"));
        cr_assert_eq(json_object_array_length(deleted), 2);
        json_object_put(deleted);
}

Test(foreign, delete_keeps_the_other_documents_byte_for_byte, .init = mk, .fini = rm) {
        static const char d0[] = "# operands made on the cluster\n" CM("first"),
                          d1[] = "---\n" DB("orders", "app"),
                          d2[] = "--- # last\n" CM("last") "# trailing comment\n";
        char whole[1024];
        snprintf(whole, sizeof whole, "%s%s%s", d0, d1, d2);
        cr_assert_eq(tu_write_file(tmp, "mixed.yaml", whole), 0);
        char *p = path_in(tmp, "mixed.yaml");
        cr_assert_eq(chmod(p, 0640), 0);

        json_object *deleted;
        char err[256], want[1024];
        cr_assert_eq(delete_in(tmp, &DEL_ORDERS, 1, &deleted, err, sizeof err), 1, "%s", err);
        snprintf(want, sizeof want, "%s%s", d0, d2);
        assert_file(tmp, "mixed.yaml", want);
        struct stat st;
        cr_assert_eq(lstat(p, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0640, "its mode is kept: %o", st.st_mode & 07777);
        cr_assert_str_eq(plain(deleted), "[{\"file\":\"mixed.yaml\",\"group\":\"db.example.com\",\"kind\":\"Database\","
                                         "\"namespace\":\"app\",\"name\":\"orders\"}]");
        json_object_put(deleted);

        /* The first document (with the comment before it) out, the last kept. */
        const struct payload_deletion first = { .group = "", .kind = "ConfigMap", .namespace = "app", .name = "first" };
        cr_assert_eq(delete_in(tmp, &first, 1, &deleted, err, sizeof err), 1, "%s", err);
        assert_file(tmp, "mixed.yaml", d2);
        json_object_put(deleted);

        /* No temporary file is left behind. */
        cr_assert_eq(count_dot_files(tmp), 0);
        struct unowned_list l;
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);
        char *s = summary(&l);
        cr_assert_str_eq(s, "mixed.yaml#0 /v1 ConfigMap app/last");
        free(s);
        unowned_list_free(&l);
        free(p);
}

Test(foreign, delete_never_touches_musters_files_dot_files_or_symlinks, .init = mk, .fini = rm) {
        char *outside = path_in(tmp, "outside"), *dir = path_in(tmp, "dir");
        cr_assert_eq(tu_write_file(outside, "target.yaml", DB("orders", "app")), 0);
        cr_assert_eq(tu_write_file(dir, "0000_db.yaml", DB("orders", "app")), 0);
        cr_assert_eq(tu_write_file(dir, "swapped.yaml", DB("orders", "app")), 0);
        cr_assert_eq(tu_write_file(dir, ".hidden.yaml", DB("orders", "app")), 0);
        cr_assert_eq(tu_symlink(dir, "link.yaml", "../outside/target.yaml"), 0);

        /* Scanned before 0000_db.yaml was muster's and while swapped.yaml
         * was a file; then muster writes its bookkeeping and swapped.yaml
         * becomes a symlink to the same object outside. */
        struct unowned_list l;
        char err[256];
        cr_assert_eq(unowned_scan(dir, &l, err, sizeof err), 0, "%s", err);
        char *s = summary(&l);
        cr_assert_str_eq(s, "0000_db.yaml#0 db.example.com/v1 Database app/orders|"
                            "swapped.yaml#0 db.example.com/v1 Database app/orders");
        free(s);
        cr_assert_eq(tu_write_file(dir, MANIFESTDIR_BOOKKEEPING, "{\"files\":{\"0000_db.yaml\":\"00\"},\"revision\":1}"), 0);
        char *sw = path_in(dir, "swapped.yaml");
        cr_assert_eq(unlink(sw), 0);
        cr_assert_eq(tu_symlink(dir, "swapped.yaml", "../outside/target.yaml"), 0);

        /* A list that names a dot file too, as a forged one could. */
        struct unowned_object *o = &l.v[l.n - 1];
        cr_assert_lt(l.n, l.cap);
        l.v[l.n] = (struct unowned_object) { .file = strdup(".hidden.yaml"), .group = strdup(o->group),
                                             .version = strdup(o->version), .kind = strdup(o->kind),
                                             .namespace = strdup(o->namespace), .name = strdup(o->name) };
        l.n++;

        json_object *deleted = json_object_new_array();
        cr_assert_eq(unowned_delete(dir, &l, &DEL_ORDERS, 1, deleted, err, sizeof err), 0, "%s", err);
        cr_assert_eq(json_object_array_length(deleted), 0);
        assert_file(dir, "0000_db.yaml", DB("orders", "app"));
        assert_file(dir, ".hidden.yaml", DB("orders", "app"));
        assert_file(outside, "target.yaml", DB("orders", "app"));
        struct stat st;
        cr_assert_eq(lstat(sw, &st), 0);
        cr_assert(S_ISLNK(st.st_mode), "the symlink stays a symlink");
        char *ln = path_in(dir, "link.yaml");
        cr_assert_eq(lstat(ln, &st), 0);
        cr_assert(S_ISLNK(st.st_mode));
        json_object_put(deleted);
        unowned_list_free(&l);

        /* Muster's own file with the object beside an out-of-band one: only
         * the out-of-band one goes. */
        cr_assert_eq(tu_write_file(dir, "local.yaml", DB("orders", "app")), 0);
        cr_assert_eq(delete_in(dir, &DEL_ORDERS, 1, &deleted, err, sizeof err), 1, "%s", err);
        cr_assert_not(is_there(dir, "local.yaml"));
        assert_file(dir, "0000_db.yaml", DB("orders", "app"));
        assert_file(outside, "target.yaml", DB("orders", "app"));
        cr_assert_str_eq(tu_jstr(deleted, "0.file"), "local.yaml");
        json_object_put(deleted);
        free(ln);
        free(sw);
        free(outside);
        free(dir);
}

Test(foreign, delete_tells_cluster_scoped_from_namespaced_and_groups_apart, .init = mk, .fini = rm) {
        cr_assert_eq(tu_write_file(tmp, "a.yaml", DB_CLUSTER("x") "---\n" DB("x", "app") "---\n" DB("x", "other")), 0);
        cr_assert_eq(tu_write_file(tmp, "b.yaml",
                                   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: app\n"
                                   "---\napiVersion: example.com/v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
                                   "  namespace: app\n"),
                     0);
        json_object *deleted;
        char err[256];

        /* Cluster-scoped: only the document without a namespace. */
        const struct payload_deletion cluster = { .group = "db.example.com", .kind = "Database", .name = "x" };
        cr_assert_eq(delete_in(tmp, &cluster, 1, &deleted, err, sizeof err), 1, "%s", err);
        assert_file(tmp, "a.yaml", "---\n" DB("x", "app") "---\n" DB("x", "other"));
        cr_assert_str_eq(plain(deleted), "[{\"file\":\"a.yaml\",\"group\":\"db.example.com\",\"kind\":\"Database\","
                                         "\"name\":\"x\"}]");
        json_object_put(deleted);

        /* Namespaced: that namespace only. */
        const struct payload_deletion ns = { .group = "db.example.com", .kind = "Database", .namespace = "other",
                                             .name = "x" };
        cr_assert_eq(delete_in(tmp, &ns, 1, &deleted, err, sizeof err), 1, "%s", err);
        assert_file(tmp, "a.yaml", "---\n" DB("x", "app"));
        json_object_put(deleted);

        /* The core group is "": the core ConfigMap goes, example.com's stays. */
        const struct payload_deletion core = { .group = "", .kind = "ConfigMap", .namespace = "app", .name = "cfg" };
        cr_assert_eq(delete_in(tmp, &core, 1, &deleted, err, sizeof err), 1, "%s", err);
        assert_file(tmp, "b.yaml",
                    "---\napiVersion: example.com/v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: app\n");
        cr_assert_str_eq(plain(deleted), "[{\"file\":\"b.yaml\",\"group\":\"\",\"kind\":\"ConfigMap\","
                                         "\"namespace\":\"app\",\"name\":\"cfg\"}]");
        json_object_put(deleted);
}

Test(foreign, delete_with_nothing_named_changes_nothing, .init = mk, .fini = rm) {
        static const char text[] = CM("a") "---\n" DB("orders", "app") "---\n" DB_CLUSTER("orders");
        cr_assert_eq(tu_write_file(tmp, "a.yaml", text), 0);
        cr_assert_eq(tu_write_file(tmp, "bad.yaml", "kind: [\n"), 0);
        char *p = path_in(tmp, "a.yaml");
        struct stat before, after;
        cr_assert_eq(stat(p, &before), 0);
        const struct payload_deletion none[] = {
                { .group = "db.example.com", .kind = "Database", .namespace = "app", .name = "other" },
                { .group = "db.example.com", .kind = "Database", .namespace = "nope", .name = "orders" },
                { .group = "db.example.org", .kind = "Database", .namespace = "app", .name = "orders" },
                { .group = "db.example.com", .kind = "database", .namespace = "app", .name = "orders" },
                { .group = "", .kind = "ConfigMap", .name = "a" },
                { .group = "apps", .kind = "ConfigMap", .namespace = "app", .name = "a" },
        };
        json_object *deleted;
        char err[256];
        cr_assert_eq(delete_in(tmp, none, sizeof none / sizeof *none, &deleted, err, sizeof err), 0, "%s", err);
        cr_assert_eq(json_object_array_length(deleted), 0);
        json_object_put(deleted);
        assert_file(tmp, "a.yaml", text);
        assert_file(tmp, "bad.yaml", "kind: [\n");
        cr_assert_eq(stat(p, &after), 0);
        cr_assert_eq(before.st_ino, after.st_ino, "not rewritten");
        cr_assert_eq(count_dot_files(tmp), 0);

        /* No deletions, or no list: nothing to do, no error. */
        struct unowned_list l;
        cr_assert_eq(unowned_scan(tmp, &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(unowned_delete(tmp, &l, NULL, 0, NULL, err, sizeof err), 0);
        unowned_list_free(&l);
        struct unowned_list empty = { 0 };
        cr_assert_eq(unowned_delete(tmp, &empty, &DEL_ORDERS, 1, NULL, err, sizeof err), 0);
        free(p);
}
