/* What YAML aliases expand to (yamlscan.h, issue 32 item 8): the shared
 * count over libyaml's events and over its loaded documents, the same
 * bytes either way, refused past yscan_alias_cap() without copying; and
 * every YAML reader with it: catalogs (and a bundle's dependencies.yaml),
 * manifests (releases, operands, the agent's out-of-band files) and add-on
 * values refuse a text whose 1 MiB string is aliased many times, quickly
 * and with "aliases expand past ...", while a few small aliases read as
 * the same text without them does; release.yaml refuses every alias. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "domain/addon.h"
#include "catalog.h"
#include "unowned.h"
#include "json-cleanup.h"
#include "manifest.h"
#include "release.h"
#include "testutil.h"
#include "yamlscan.h"

#define ERRLEN 512
#define MIB (1024 * 1024)
#define FAST_MS 2000 /* what refusing a hostile text may take, sanitizers included */

/* ---- the count -------------------------------------------------------------- */

/* The count over text's events: 0 or the first refusal; *copied what the
 * aliases cost (up to the refusal); why the message. */
static int count_events(const char *text, size_t *copied, char *why) {
        yaml_parser_t p;
        struct yscan_aliases a;
        int r = 0;
        cr_assert(yaml_parser_initialize(&p));
        yscan_aliases_init(&a, strlen(text));
        yaml_parser_set_input_string(&p, (const unsigned char *) text, strlen(text));
        for (bool done = false; !done && r == 0;) {
                yaml_event_t e;
                cr_assert(yaml_parser_parse(&p, &e), "%s: %s", text, p.problem);
                done = e.type == YAML_STREAM_END_EVENT;
                r = yscan_aliases_event(&a, &e);
                yaml_event_delete(&e);
        }
        *copied = a.copied;
        if (why)
                snprintf(why, ERRLEN, "%s", r < 0 ? a.why : "");
        yscan_aliases_done(&a);
        yaml_parser_delete(&p);
        return r;
}

/* The same over the documents libyaml's loader makes of text. */
static int count_documents(const char *text, size_t *copied, char *why) {
        yaml_parser_t p;
        struct yscan_aliases a;
        int r = 0;
        cr_assert(yaml_parser_initialize(&p));
        yscan_aliases_init(&a, strlen(text));
        yaml_parser_set_input_string(&p, (const unsigned char *) text, strlen(text));
        for (;;) {
                yaml_document_t d;
                cr_assert(yaml_parser_load(&p, &d), "%s: %s", text, p.problem);
                bool end = !yaml_document_get_root_node(&d);
                if (!end)
                        r = yscan_aliases_document(&a, &d);
                yaml_document_delete(&d);
                if (end || r < 0)
                        break;
        }
        *copied = a.copied;
        if (why)
                snprintf(why, ERRLEN, "%s", r < 0 ? a.why : "");
        yscan_aliases_done(&a);
        yaml_parser_delete(&p);
        return r;
}

Test(yscan_aliases, the_cap_is_four_times_the_input_and_at_least_64_kib) {
        cr_assert_eq(yscan_alias_cap(0), 64 * 1024);
        cr_assert_eq(yscan_alias_cap(16 * 1024), 64 * 1024);
        cr_assert_eq(yscan_alias_cap(16 * 1024 + 1), 64 * 1024 + 4);
        cr_assert_eq(yscan_alias_cap(MIB), 4 * MIB);
        cr_assert_eq(yscan_alias_cap(SIZE_MAX / 2), SIZE_MAX, "no overflow");
}

Test(yscan_aliases, events_and_documents_count_the_same_bytes) {
        /* A node is its scalar bytes and YSCAN_NODE_BYTES (32); an alias is
         * its node with the aliases inside counted again. */
        static const struct {
                const char *text;
                size_t copied;
        } cases[] = {
                { "a: 1\nb: [x, y]\n", 0 },
                { "a: &a hello\nb: *a\n", 32 + 5 },
                { "a: &a hello\nb: [*a, *a, *a]\n", 3 * 37 },
                { "a: &m {k: v}\nb: *m\n", 32 + 33 + 33 },
                /* a = 98; b = 32 + 98 + 98 = 228; then *a, *a and *b. */
                { "a: &a [x, y]\nb: &b [*a, *a]\nc: *b\n", 98 + 98 + 228 },
                { "a: &k key\n*k : v\n", 35 },
                { "--- &a [x, y]\n--- [1, 2]\n--- &b {a: [*b0]}\n", 0 + 32 },
                { "a: &big \"" "0123456789012345678901234567890123456789" "\"\nb: {x: *big, y: *big}\n", 2 * 72 },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                size_t ev = 0, doc = 0;
                const char *t = cases[i].text;
                if (strstr(t, "*b0")) { /* an undefined alias: the loader refuses it, events count a node */
                        cr_assert_eq(count_events(t, &ev, NULL), 0, "%s", t);
                        cr_assert_eq(ev, cases[i].copied, "%s: %zu", t, ev);
                        continue;
                }
                cr_assert_eq(count_events(t, &ev, NULL), 0, "%s", t);
                cr_assert_eq(count_documents(t, &doc, NULL), 0, "%s", t);
                cr_assert_eq(ev, cases[i].copied, "events of %s: %zu, not %zu", t, ev, cases[i].copied);
                cr_assert_eq(doc, cases[i].copied, "documents of %s: %zu, not %zu", t, doc, cases[i].copied);
        }
}

Test(yscan_aliases, an_anchor_names_its_own_document_and_its_latest_node) {
        size_t n;
        /* The second document's *a is not the first's list. */
        cr_assert_eq(count_events("--- &a [xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]\n--- [*a]\n", &n, NULL), 0);
        cr_assert_eq(n, 32);
        /* Defined again: the later node counts. */
        cr_assert_eq(count_events("a: &a [xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx, y, z]\nb: &a x\nc: [*a, *a]\n", &n,
                                  NULL),
                     0);
        cr_assert_eq(n, 2 * 33);
        /* Defined again inside itself: the inner one. */
        cr_assert_eq(count_events("a: &a [xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx, &a y]\nc: [*a, *a]\n", &n, NULL), 0);
        cr_assert_eq(n, 2 * 33);
}

Test(yscan_aliases, the_cap_is_the_line) {
        /* 1,000 bytes aliased k times: 1,032 k bytes against 64 KiB. */
        char text[4096], *p = text;
        p += sprintf(p, "a: &a \"%01000d\"\nb: [", 0);
        for (int i = 0; i < 63; i++)
                p += sprintf(p, "%s*a", i ? ", " : "");
        sprintf(p, "]\n");
        size_t ev, doc;
        cr_assert_eq(count_events(text, &ev, NULL), 0);
        cr_assert_eq(count_documents(text, &doc, NULL), 0);
        cr_assert_eq(ev, 63 * 1032);
        cr_assert_eq(doc, 63 * 1032);
        sprintf(p, ", *a]\n");
        char why[ERRLEN], want[ERRLEN];
        snprintf(want, sizeof want, "aliases expand past 65536 bytes (the document is %zu bytes)", strlen(text));
        cr_assert_eq(count_events(text, &ev, why), -E2BIG);
        cr_assert_str_eq(why, want);
        cr_assert_eq(count_documents(text, &doc, why), -E2BIG);
        cr_assert_str_eq(why, want);
}

Test(yscan_aliases, an_alias_inside_its_own_node_is_refused) {
        static const char *const texts[] = { "&a [*a]\n", "a: &a {b: [1, {c: *a}]}\n", "&a [x, &b [*a]]\n" };
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
                size_t n;
                char why[ERRLEN];
                char want[ERRLEN];
                snprintf(want, sizeof want,
                         "aliases expand past 65536 bytes (the document is %zu bytes): an alias is inside the node it "
                         "names",
                         strlen(texts[i]));
                cr_assert_eq(count_events(texts[i], &n, why), -E2BIG, "%s", texts[i]);
                cr_assert_str_eq(why, want);
                /* libyaml's loader makes a cycle of it. */
                cr_assert_eq(count_documents(texts[i], &n, why), -E2BIG, "%s", texts[i]);
                cr_assert_str_eq(why, want);
        }
}

/* Nine levels of ten aliases of the level below: 10^9 "lol"s. */
static char *laughs(const char *prefix, const char *suffix) {
        size_t cap = 4096 + strlen(prefix) + strlen(suffix);
        char *y = malloc(cap), *p = y;
        p += sprintf(p, "%sl0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n", prefix);
        for (int i = 1; i < 10; i++)
                p += sprintf(p, "l%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
                             i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        sprintf(p, "%s", suffix);
        return y;
}

/* prefix, "<key>: &a" and n_big bytes of 'x' (quoted), "<list>: [*a, ...]"
 * with n aliases, suffix. */
static char *bomb(const char *prefix, const char *key, size_t n_big, const char *list, size_t n, const char *suffix) {
        size_t cap = strlen(prefix) + strlen(suffix) + n_big + 4 * n + 256;
        char *t = malloc(cap), *p = t;
        cr_assert_not_null(t);
        p += sprintf(p, "%s%s: &a \"", prefix, key);
        memset(p, 'x', n_big);
        p += n_big;
        p += sprintf(p, "\"\n%s: [", list);
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%s*a", i ? "," : "");
        p += sprintf(p, "]\n%s", suffix);
        cr_assert_lt((size_t) (p - t), cap);
        return t;
}

Test(yscan_aliases, hostile_texts_are_refused_quickly) {
        char *texts[] = { laughs("", ""), bomb("", "s", MIB, "l", 600, ""), bomb("", "s", MIB, "l", 60000, "") };
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
                size_t n;
                char why[ERRLEN];
                int64_t t0 = tu_mono_ms();
                cr_assert_eq(count_events(texts[i], &n, why), -E2BIG);
                cr_assert(strstr(why, "aliases expand past "), "%s", why);
                cr_assert_gt(n, yscan_alias_cap(strlen(texts[i])));
                cr_assert_eq(count_documents(texts[i], &n, why), -E2BIG);
                cr_assert(strstr(why, "aliases expand past "), "%s", why);
                cr_assert_lt(tu_mono_ms() - t0, FAST_MS, "text %zu", i);
                free(texts[i]);
        }
}

/* ---- catalogs ------------------------------------------------------------------ */

/* A small catalog, written with aliases and without. */
static const char small_aliased[] =
        "schema: olm.package\nname: small\ndefaultChannel: stable\ndescription: a small package\n"
        "---\n"
        "schema: olm.bundle\npackage: small\nname: small.v1.0.0\nimage: &img quay.io/example/small:v1\n"
        "properties:\n"
        "  - {type: olm.package, value: {packageName: small, version: 1.0.0}}\n"
        "  - {type: olm.gvk, value: &gvk {group: example.com, kind: Small, version: v1}}\n"
        "  - {type: olm.gvk.required, value: *gvk}\n"
        "  - {type: olm.package.required, value: &req {packageName: other, versionRange: '>=1.0.0'}}\n"
        "relatedImages: [{name: a, image: *img}, {name: b, image: *img}]\n"
        "notes: [*img, *req, *gvk]\n";
static const char small_plain[] =
        "schema: olm.package\nname: small\ndefaultChannel: stable\ndescription: a small package\n"
        "---\n"
        "schema: olm.bundle\npackage: small\nname: small.v1.0.0\nimage: quay.io/example/small:v1\n"
        "properties:\n"
        "  - {type: olm.package, value: {packageName: small, version: 1.0.0}}\n"
        "  - {type: olm.gvk, value: {group: example.com, kind: Small, version: v1}}\n"
        "  - {type: olm.gvk.required, value: {group: example.com, kind: Small, version: v1}}\n"
        "  - {type: olm.package.required, value: {packageName: other, versionRange: '>=1.0.0'}}\n"
        "relatedImages: [{name: a, image: quay.io/example/small:v1}, {name: b, image: quay.io/example/small:v1}]\n"
        "notes: [quay.io/example/small:v1, {packageName: other, versionRange: '>=1.0.0'}, "
        "{group: example.com, kind: Small, version: v1}]\n";

static void gvk_eq(const struct catalog_gvk *a, const struct catalog_gvk *b) {
        cr_assert_str_eq(a->group, b->group);
        cr_assert_str_eq(a->version, b->version);
        cr_assert_str_eq(a->kind, b->kind);
}

Test(catalog_aliases, a_few_small_aliases_read_as_the_text_without_them) {
        struct catalog a = { 0 }, b = { 0 };
        char err[ERRLEN];
        cr_assert_eq(catalog_parse(small_aliased, strlen(small_aliased), "a.yaml", &a, err, sizeof err), 0, "%s", err);
        cr_assert_eq(catalog_parse(small_plain, strlen(small_plain), "b.yaml", &b, err, sizeof err), 0, "%s", err);
        cr_assert_eq(a.n_packages, 1);
        cr_assert_eq(b.n_packages, 1);
        cr_assert_str_eq(a.packages[0].description, "a small package");
        cr_assert_str_eq(a.packages[0].description, b.packages[0].description);
        cr_assert_eq(a.n_bundles, 1);
        cr_assert_eq(b.n_bundles, 1);
        const struct catalog_bundle *x = &a.bundles[0], *y = &b.bundles[0];
        cr_assert_str_eq(x->image, y->image);
        cr_assert_str_eq(x->version.text, y->version.text);
        cr_assert_eq(x->n_provides_gvks, 1);
        cr_assert_eq(y->n_provides_gvks, 1);
        gvk_eq(&x->provides_gvks[0], &y->provides_gvks[0]);
        cr_assert_eq(x->n_requires_gvks, 1);
        cr_assert_eq(y->n_requires_gvks, 1);
        gvk_eq(&x->requires_gvks[0], &y->requires_gvks[0]);
        cr_assert_eq(x->n_requires_packages, 1);
        cr_assert_str_eq(x->requires_packages[0].package, "other");
        cr_assert_str_eq(x->requires_packages[0].range_text, y->requires_packages[0].range_text);
        cr_assert_eq(x->n_properties, y->n_properties);
        cr_assert_eq(a.n_ignored, b.n_ignored);
        catalog_free(&a);
        catalog_free(&b);
}

Test(catalog_aliases, a_mebibyte_aliased_many_times_is_refused_quickly) {
        static const size_t counts[] = { 5, 600, 60000 };
        for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
                char *t = bomb("schema: olm.package\nname: bomb\ndefaultChannel: stable\n", "description", MIB, "icon",
                               counts[i], "");
                struct catalog c = { 0 };
                char err[ERRLEN], want[ERRLEN];
                size_t len = strlen(t);
                snprintf(want, sizeof want, "bomb.yaml:1: aliases expand past %zu bytes (the document is %zu bytes)",
                         4 * len, len);
                int64_t t0 = tu_mono_ms();
                cr_assert_eq(catalog_parse(t, len, "bomb.yaml", &c, err, sizeof err), -E2BIG, "%zu: %s", counts[i],
                             err);
                cr_assert_lt(tu_mono_ms() - t0, FAST_MS, "%zu aliases", counts[i]);
                cr_assert_str_eq(err, want);
                cr_assert_eq(c.n_packages, 0);
                catalog_free(&c);
                free(t);
        }
        /* Fewer copies than the cap allows: read (the copies cost what they cost). */
        char *t = bomb("schema: olm.package\nname: bomb\ndefaultChannel: stable\n", "description", MIB, "icon", 3, "");
        struct catalog c = { 0 };
        char err[ERRLEN];
        cr_assert_eq(catalog_parse(t, strlen(t), "bomb.yaml", &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(strlen(c.packages[0].description), MIB);
        catalog_free(&c);
        free(t);
}

Test(catalog_aliases, laughs_and_cycles_are_refused_in_any_document) {
        char *t = laughs("schema: olm.package\nname: one\ndefaultChannel: stable\n---\n"
                         "schema: olm.package\nname: lol\ndefaultChannel: stable\n",
                         "");
        struct catalog c = { 0 };
        char err[ERRLEN];
        cr_assert_eq(catalog_parse(t, strlen(t), "lol.yaml", &c, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "lol.yaml:5: aliases expand past 65536 bytes"), "%s", err);
        cr_assert_eq(c.n_packages, 0, "nothing of the file is kept");
        free(t);
        static const char cycle[] = "schema: olm.package\nname: c\ndefaultChannel: stable\nx: &a [1, [*a]]\n";
        cr_assert_eq(catalog_parse(cycle, strlen(cycle), "c.yaml", &c, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "c.yaml:1: aliases expand past 65536 bytes"), "%s", err);
        catalog_free(&c);
}

Test(catalog_aliases, a_dependencies_file_is_counted_too) {
        char *t = bomb("", "x", MIB / 2, "dependencies", 1000, "");
        struct catalog_bundle b = { 0 };
        char err[ERRLEN];
        int64_t t0 = tu_mono_ms();
        cr_assert_eq(catalog_parse_dependencies(t, strlen(t), "dependencies.yaml", &b, err, sizeof err), -E2BIG);
        cr_assert_lt(tu_mono_ms() - t0, FAST_MS);
        cr_assert(strstr(err, "dependencies.yaml:1: aliases expand past "), "%s", err);
        free(t);
}

/* ---- manifests -------------------------------------------------------------------- */

#define CM "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"

Test(manifest_aliases, a_mebibyte_aliased_many_times_is_refused_quickly) {
        static const size_t counts[] = { 600, 60000 };
        for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
                char *t = bomb("---\n" CM "data:\n", "  big", MIB, "  list", counts[i], "---\n" CM);
                struct manifest_list l = { 0 };
                char err[ERRLEN], want[ERRLEN];
                size_t len = strlen(t);
                snprintf(want, sizeof want, "a.yaml:8: aliases expand past %zu bytes (the document is %zu bytes)",
                         4 * len, len);
                int64_t t0 = tu_mono_ms();
                cr_assert_eq(manifest_parse_file("a.yaml", t, len, &l, err, sizeof err), -E2BIG, "%s", err);
                cr_assert_lt(tu_mono_ms() - t0, FAST_MS);
                cr_assert_str_eq(err, want);
                manifest_list_free(&l);
                free(t);
        }
}

Test(manifest_aliases, laughs_outside_metadata_are_refused) {
        char *t = laughs("", CM);
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        cr_assert_eq(manifest_parse_file("a.yaml", t, strlen(t), &l, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "a.yaml:4: aliases expand past 65536 bytes"), "%s", err);
        manifest_list_free(&l);
        free(t);
}

Test(manifest_aliases, a_few_small_aliases_read_as_before) {
        static const char text[] = CM "data:\n  a: &v value\n  b: *v\n  c: *v\n---\n"
                                      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
                                      "spec: {template: {spec: {containers: [&c {name: x, image: i}, *c]}}}\n";
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        cr_assert_eq(manifest_parse_file("a.yaml", text, strlen(text), &l, err, sizeof err), 0, "%s", err);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.v[0].name, "cm");
        cr_assert_str_eq(l.v[1].kind, "Deployment");
        cr_assert_eq(l.v[0].content_len + l.v[1].content_len, strlen(text), "the bytes are kept as they are");
        manifest_list_free(&l);
}

/* ---- release.yaml ------------------------------------------------------------------- */

Test(release_aliases, release_yaml_refuses_every_alias_before_it_expands) {
        char *t = bomb("version: \"4.16.0\"\n", "x", MIB, "known_capabilities", 60000, "");
        struct release_info r;
        char err[ERRLEN];
        release_info_init(&r);
        int64_t t0 = tu_mono_ms();
        cr_assert_eq(release_info_parse_yaml(t, strlen(t), &r, err, sizeof err), -EINVAL);
        cr_assert_lt(tu_mono_ms() - t0, FAST_MS);
        cr_assert(strstr(err, "aliases are not supported"), "%s", err);
        release_info_free(&r);
        free(t);
}

/* ---- add-on values ----------------------------------------------------------------- */

static int render(const char *tmpl, char *err, struct addon_content *c) {
        static const char base[] =
                "{\"name\":\"mon\",\"cluster_selector\":{},\"chart\":{\"repository\":\"https://charts.example.test\","
                "\"name\":\"kube-prom\",\"version\":\"1.2.3\"},\"namespace\":\"monitoring\"}";
        _cleanup_json_ json_object *o = json_tokener_parse(base);
        json_object_object_add(o, "values_template", json_object_new_string(tmpl));
        struct addon_spec s;
        cr_assert_eq(addon_spec_parse(o, &s, err, ERRLEN), 0, "%s", err);
        struct addon_cluster a = { .id = "11111111-1111-4111-8111-111111111111", .name = "east" };
        _cleanup_json_ json_object *ctx = addon_cluster_context(&a);
        int r = addon_render(&s, &a, ctx, c, err, ERRLEN);
        addon_spec_free(&s);
        return r;
}

Test(addon_aliases, values_that_alias_too_much_are_refused_naming_the_cluster) {
        char *t = bomb("cluster: {{cluster.name}}\n", "big", 200 * 1024, "list", 100, "");
        struct addon_content c = { 0 };
        char err[ERRLEN];
        int64_t t0 = tu_mono_ms();
        cr_assert_eq(render(t, err, &c), -E2BIG, "%s", err);
        cr_assert_lt(tu_mono_ms() - t0, FAST_MS);
        cr_assert(strstr(err, "the values rendered for cluster east at line 3: aliases expand past "), "%s", err);
        addon_content_free(&c);
        free(t);
        t = laughs("", "");
        cr_assert_eq(render(t, err, &c), -E2BIG, "%s", err);
        cr_assert(strstr(err, "aliases expand past 65536 bytes"), "%s", err);
        addon_content_free(&c);
        free(t);
}

Test(addon_aliases, a_few_small_aliases_render_as_before) {
        static const char tmpl[] = "cluster: &n {{cluster.name}}\nlabels: {a: *n, b: *n}\nres: &r {cpu: 1}\nmore: *r\n";
        struct addon_content c = { 0 };
        char err[ERRLEN];
        cr_assert_eq(render(tmpl, err, &c), 0, "%s", err);
        cr_assert_str_eq(c.values, "cluster: &n east\nlabels: {a: *n, b: *n}\nres: &r {cpu: 1}\nmore: *r\n");
        addon_content_free(&c);
}

/* ---- the agent's out-of-band files ------------------------------------------------ */

Test(unowned_aliases, a_file_that_aliases_too_much_is_an_entry_with_the_reason) {
        char *dir = tu_mkdtemp(), path[4096];
        cr_assert_not_null(dir);
        char *t = bomb(CM "data:\n", "  big", 900 * 1024, "  list", 1000, "");
        snprintf(path, sizeof path, "%s/bomb.yaml", dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(t, 1, strlen(t), f), strlen(t));
        fclose(f);
        static const char ok[] = "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: h}\n"
                                 "base: &b tgt\nspec:\n  targetNamespace: *b\n";
        snprintf(path, sizeof path, "%s/ok.yaml", dir);
        f = fopen(path, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(ok, 1, strlen(ok), f), strlen(ok));
        fclose(f);
        struct unowned_list l;
        char err[ERRLEN];
        int64_t t0 = tu_mono_ms();
        cr_assert_eq(unowned_scan(dir, &l, err, sizeof err), 0, "%s", err);
        cr_assert_lt(tu_mono_ms() - t0, FAST_MS);
        cr_assert_eq(l.n, 2);
        cr_assert_str_eq(l.v[0].file, "bomb.yaml");
        cr_assert_null(l.v[0].kind);
        cr_assert(l.v[0].error && strstr(l.v[0].error, "bomb.yaml:7: aliases expand past "), "%s",
                  l.v[0].error ? l.v[0].error : "(none)");
        cr_assert_str_eq(l.v[1].file, "ok.yaml");
        cr_assert_str_eq(l.v[1].release_namespace, "tgt", "a small alias is still followed");
        unowned_list_free(&l);
        free(t);
        tu_rm_rf(dir);
        free(dir);
}
