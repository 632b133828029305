/* Release manifests: identity and annotations of YAML and JSON documents,
 * exact document bytes (the concatenation of a file's documents is the file),
 * every refusal with its "file:line: reason", JSON round trips, and parsing
 * damaged input (truncated, bytes flipped) without crashing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "testutil.h"

#define ERRLEN 512

/* ---- helpers ------------------------------------------------------------ */

static int parse_n(const char *file, const char *data, size_t len, struct manifest_list *l, char *err) {
        err[0] = 0;
        return manifest_parse_file(file, data, len, l, err, ERRLEN);
}

static int parse(const char *file, const char *data, struct manifest_list *l, char *err) {
        return parse_n(file, data, strlen(data), l, err);
}

/* Parse must fail with r and an error containing `want`. */
static void refuse(const char *file, const char *data, int r, const char *want) {
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        int got = parse(file, data, &l, err);
        cr_assert_eq(got, r, "%s: got %d (%s), want %d", want, got, err, r);
        cr_assert(strstr(err, want), "error \"%s\" does not contain \"%s\"", err, want);
        cr_assert_eq(l.n, 0, "nothing is appended from a refused file");
        manifest_list_free(&l);
}

/* The contents of l->v[from..] concatenated equal data; each document's
 * content parsed alone gives that one document again. */
static void check_split(const char *file, const char *data, size_t len, const struct manifest_list *l, size_t from) {
        size_t off = 0;
        if (l->n == from)
                return; /* no documents: nothing to cover */
        for (size_t i = from; i < l->n; i++) {
                const struct manifest *m = &l->v[i];
                cr_assert_eq(m->doc_index, i - from);
                cr_assert_leq(off + m->content_len, len, "doc %zu runs past the file", i - from);
                cr_assert(memcmp(m->content, data + off, m->content_len) == 0, "doc %zu bytes differ", i - from);
                cr_assert_eq(m->content[m->content_len], 0, "content is NUL-terminated");
                off += m->content_len;
        }
        cr_assert_eq(off, len, "the documents cover the whole file (%zu of %zu)", off, len);
        if (l->n - from < 2)
                return;
        for (size_t i = from; i < l->n; i++) {
                const struct manifest *m = &l->v[i];
                struct manifest_list one = { 0 };
                char err[ERRLEN];
                int r = parse_n(file, m->content, m->content_len, &one, err);
                cr_assert_eq(r, 0, "doc %zu alone: %s\n---content---\n%s", i - from, err, m->content);
                cr_assert_eq(one.n, 1, "doc %zu alone holds one document", i - from);
                cr_assert_str_eq(one.v[0].name, m->name);
                cr_assert_str_eq(one.v[0].kind, m->kind);
                cr_assert_eq(one.v[0].content_len, m->content_len);
                manifest_list_free(&one);
        }
}

static void parse_ok(const char *file, const char *data, size_t len, struct manifest_list *l) {
        char err[ERRLEN];
        size_t from = l->n;
        int r = parse_n(file, data, len, l, err);
        cr_assert_eq(r, 0, "%s: %s", file, err);
        check_split(file, data, len, l, from);
}

static const char *ann(const struct manifest *m, const char *k) {
        return manifest_annotation(m, k);
}

#define CM(name) "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " name "\n"

/* ---- identity ----------------------------------------------------------- */

Test(manifest, single_document_keeps_the_whole_file) {
        const char *y = "# Console config\n"
                        "apiVersion: v1\n"
                        "kind: ConfigMap\n"
                        "metadata:\n"
                        "  name: console-config\n"
                        "  namespace: openshift-console\n"
                        "data:\n"
                        "  key: value\n"
                        "# trailing comment\n";
        struct manifest_list l = { 0 };
        parse_ok("0000_50_console.yaml", y, strlen(y), &l);
        cr_assert_eq(l.n, 1);
        struct manifest *m = &l.v[0];
        cr_assert_str_eq(m->file, "0000_50_console.yaml");
        cr_assert_str_eq(m->path, "0000_50_console.yaml");
        cr_assert_eq(m->doc_index, 0);
        cr_assert_str_eq(m->api_version, "v1");
        cr_assert_str_eq(m->group, "");
        cr_assert_str_eq(m->version, "v1");
        cr_assert_str_eq(m->kind, "ConfigMap");
        cr_assert_str_eq(m->namespace, "openshift-console");
        cr_assert_str_eq(m->name, "console-config");
        cr_assert_eq(m->n_annotations, 0);
        cr_assert_str_eq(m->content, y);
        cr_assert_eq(m->content_len, strlen(y));
        manifest_list_free(&l);
        cr_assert_eq(l.n, 0);
        cr_assert_null(l.v);
}

Test(manifest, single_document_with_markers_keeps_the_whole_file) {
        const char *y = "%YAML 1.1\n---\n" CM("a") "...\n# after\n---\n# only a comment\n";
        struct manifest_list l = { 0 };
        parse_ok("a.yml", y, strlen(y), &l);
        cr_assert_eq(l.n, 1);
        cr_assert_str_eq(l.v[0].path, "a.yml", "one non-empty document: the file's own name");
        cr_assert_str_eq(l.v[0].content, y);
        manifest_list_free(&l);
}

Test(manifest, group_and_version) {
        static const struct { const char *api, *group, *version; } cases[] = {
                { "v1", "", "v1" },
                { "apps/v1", "apps", "v1" },
                { "rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io", "v1" },
                { "config.openshift.io/v1alpha1", "config.openshift.io", "v1alpha1" },
                { "\"apiextensions.k8s.io/v1\"", "apiextensions.k8s.io", "v1" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                char y[256];
                snprintf(y, sizeof y, "apiVersion: %s\nkind: X\nmetadata: {name: x}\n", cases[i].api);
                struct manifest_list l = { 0 };
                parse_ok("x.yaml", y, strlen(y), &l);
                cr_assert_str_eq(l.v[0].group, cases[i].group);
                cr_assert_str_eq(l.v[0].version, cases[i].version);
                manifest_list_free(&l);
        }
        refuse("x.yaml", "apiVersion: /v1\nkind: X\nmetadata: {name: x}\n", -EINVAL, "x.yaml:1: apiVersion \"/v1\" is not group/version");
        refuse("x.yaml", "apiVersion: apps/\nkind: X\nmetadata: {name: x}\n", -EINVAL, "is not group/version");
        refuse("x.yaml", "apiVersion: a/b/c\nkind: X\nmetadata: {name: x}\n", -EINVAL, "is not group/version");
}

Test(manifest, namespace_absent_null_or_empty_is_none) {
        const char *docs[] = {
                CM("a"),
                CM("a") "  namespace:\n",
                CM("a") "  namespace: ~\n",
                CM("a") "  namespace: \"\"\n",
        };
        for (size_t i = 0; i < 4; i++) {
                struct manifest_list l = { 0 };
                parse_ok("a.yaml", docs[i], strlen(docs[i]), &l);
                cr_assert_null(l.v[0].namespace, "case %zu", i);
                manifest_list_free(&l);
        }
        refuse("a.yaml", CM("a") "  namespace: 12\n", -EINVAL, "a.yaml:5: metadata.namespace must be a string");
        refuse("a.yaml", CM("a") "  namespace: [a]\n", -EINVAL, "a.yaml:5: metadata.namespace must be a string");
}

Test(manifest, other_fields_are_skipped_whatever_their_shape) {
        const char *y = "spec: {a: [1, 2, {b: c}], d: &anchor {e: f}, g: *anchor}\n"
                        "? [complex, key]\n"
                        ": value\n"
                        "status:\n"
                        "  - - - deep\n"
                        "kind: Thing\n"
                        "metadata:\n"
                        "  labels: {app: x}\n"
                        "  ownerReferences: [{kind: A, name: b}]\n"
                        "  name: thing\n"
                        "apiVersion: example.com/v1\n";
        struct manifest_list l = { 0 };
        parse_ok("t.yaml", y, strlen(y), &l);
        cr_assert_str_eq(l.v[0].kind, "Thing");
        cr_assert_str_eq(l.v[0].name, "thing");
        cr_assert_str_eq(l.v[0].group, "example.com");
        manifest_list_free(&l);
}

Test(manifest, string_values_quoted_tagged_and_block) {
        const char *y = "apiVersion: !!str v1\n"
                        "kind: 'ConfigMap'\n"
                        "metadata:\n"
                        "  name: \"123\"\n"
                        "  namespace: !!str 456\n";
        struct manifest_list l = { 0 };
        parse_ok("a.yaml", y, strlen(y), &l);
        cr_assert_str_eq(l.v[0].name, "123");
        cr_assert_str_eq(l.v[0].namespace, "456");
        cr_assert_str_eq(l.v[0].kind, "ConfigMap");
        manifest_list_free(&l);
}

Test(manifest, non_string_identity_is_refused) {
        static const char *const bad[] = {
                "123", "-1", "0x1F", "0o17", "1_000", "1.5", "1e3", "-.5", ".inf", "-.Inf", ".NaN",
                "true", "False", "yes", "NO", "on", "Off", "y", "~", "null", "Null", "!!int 12",
                "!!bool yes", "!custom x", "[a]", "{a: b}", "\"\"", "''",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char y[256];
                snprintf(y, sizeof y, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", bad[i]);
                struct manifest_list l = { 0 };
                char err[ERRLEN];
                cr_assert_eq(parse("a.yaml", y, &l, err), -EINVAL, "name: %s accepted", bad[i]);
                cr_assert(strstr(err, "a.yaml:4: metadata.name must"), "%s: %s", bad[i], err);
                manifest_list_free(&l);
        }
        /* Look-alikes that are strings. */
        static const char *const good[] = {
                "v1", "1.2.3", "0x", "1e", "e3", "yess", "TrUe", "nulls", "1-2", "12:30", "2001-12-14",
                "+", "a-", ".", "..5", "0b102", "0xZZ", "console-operator",
        };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
                char y[256];
                snprintf(y, sizeof y, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", good[i]);
                struct manifest_list l = { 0 };
                char err[ERRLEN];
                cr_assert_eq(parse("a.yaml", y, &l, err), 0, "name: %s: %s", good[i], err);
                cr_assert_str_eq(l.v[0].name, good[i]);
                manifest_list_free(&l);
        }
        refuse("a.yaml", "apiVersion: 1\nkind: X\nmetadata: {name: x}\n", -EINVAL, "a.yaml:1: apiVersion must be a string");
        refuse("a.yaml", "apiVersion: v1\nkind: true\nmetadata: {name: x}\n", -EINVAL, "a.yaml:2: kind must be a string");
        refuse("a.yaml", "apiVersion: v1\nkind: [K]\nmetadata: {name: x}\n", -EINVAL, "a.yaml:2: kind must be a string");
        refuse("a.yaml", "apiVersion: v1\nkind:\nmetadata: {name: x}\n", -EINVAL, "a.yaml:2: kind must be a string");
        refuse("a.yaml", "apiVersion: v1\nkind: \"\"\nmetadata: {name: x}\n", -EINVAL, "a.yaml:2: kind must not be empty");
}

Test(manifest, control_characters_and_nul_in_identity) {
        refuse("a.yaml", CM("\"a\\0b\""), -EINVAL, "a.yaml:4: metadata.name must not contain control characters");
        refuse("a.yaml", CM("\"a\\x01b\""), -EINVAL, "metadata.name must not contain control characters");
        refuse("a.yaml", CM("\"a\\nb\""), -EINVAL, "metadata.name must not contain control characters");
        refuse("a.yaml", "apiVersion: \"v\\t1\"\nkind: X\nmetadata: {name: x}\n", -EINVAL,
               "apiVersion must not contain control characters");
        refuse("a.yaml", CM("a") "  annotations:\n    k: \"a\\0b\"\n", -EINVAL, "a.yaml:6: annotation \"k\" contains a NUL byte");
        refuse("a.yaml", CM("a") "  annotations:\n    \"k\\0\": v\n", -EINVAL, "a.yaml:6: annotation key contains a NUL byte");
}

Test(manifest, missing_fields_name_the_document_line) {
        refuse("m.yaml", "kind: X\nmetadata: {name: x}\n", -EINVAL, "m.yaml:1: missing apiVersion");
        refuse("m.yaml", "apiVersion: v1\nmetadata: {name: x}\n", -EINVAL, "m.yaml:1: missing kind");
        refuse("m.yaml", "apiVersion: v1\nkind: X\n", -EINVAL, "m.yaml:1: missing metadata.name");
        refuse("m.yaml", "apiVersion: v1\nkind: X\nmetadata:\n", -EINVAL, "m.yaml:1: missing metadata.name");
        refuse("m.yaml", "apiVersion: v1\nkind: X\nmetadata: {namespace: ns}\n", -EINVAL, "missing metadata.name");
        refuse("m.yaml", "{}\n", -EINVAL, "m.yaml:1: missing apiVersion");
        /* In a later document, the line is that document's. */
        refuse("m.yaml", CM("a") "---\n# c\n\napiVersion: v1\nmetadata: {name: b}\n", -EINVAL, "m.yaml:8: missing kind");
        refuse("m.yaml", "apiVersion: v1\nkind: X\nmetadata: name\n", -EINVAL, "m.yaml:3: metadata must be a mapping");
        refuse("m.yaml", "apiVersion: v1\nkind: X\nmetadata: [name]\n", -EINVAL, "m.yaml:3: metadata must be a mapping");
}

Test(manifest, documents_that_are_not_mappings) {
        refuse("d.yaml", "hello\n", -EINVAL, "d.yaml:1: document is not a mapping");
        refuse("d.yaml", "- a\n- b\n", -EINVAL, "d.yaml:1: document is not a mapping");
        refuse("d.yaml", CM("a") "---\n- a\n", -EINVAL, "d.yaml:6: document is not a mapping");
        refuse("d.yaml", CM("a") "--- 12\n", -EINVAL, "d.yaml:5: document is not a mapping");
        refuse("d.yaml", CM("a") "--- \"\"\n", -EINVAL, "d.yaml:5: document is not a mapping");
        refuse("d.yaml", "--- !!str\n", -EINVAL, "document is not a mapping");
}

Test(manifest, duplicate_keys_that_are_read) {
        refuse("d.yaml", "apiVersion: v1\napiVersion: v2\nkind: X\nmetadata: {name: x}\n", -EINVAL, "d.yaml:2: duplicate key apiVersion");
        refuse("d.yaml", "apiVersion: v1\nkind: X\nkind: Y\nmetadata: {name: x}\n", -EINVAL, "d.yaml:3: duplicate key kind");
        refuse("d.yaml", "apiVersion: v1\nkind: X\nmetadata: {name: x}\nmetadata: {name: y}\n", -EINVAL, "d.yaml:4: duplicate key metadata");
        refuse("d.yaml", CM("a") "  name: b\n", -EINVAL, "d.yaml:5: duplicate key metadata.name");
        refuse("d.yaml", CM("a") "  namespace: b\n  namespace: c\n", -EINVAL, "d.yaml:6: duplicate key metadata.namespace");
        refuse("d.yaml", CM("a") "  annotations: {}\n  annotations: {}\n", -EINVAL, "d.yaml:6: duplicate key metadata.annotations");
        /* Keys we do not read may repeat (libyaml does not check). */
        struct manifest_list l = { 0 };
        const char *y = CM("a") "data: {}\ndata: {}\n";
        parse_ok("d.yaml", y, strlen(y), &l);
        manifest_list_free(&l);
}

/* ---- annotations ------------------------------------------------------------ */

Test(manifest, annotations_in_order_with_non_scalar_values_empty) {
        const char *y = CM("a") "  annotations:\n"
                        "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
                        "    capability.openshift.io/name: Console+Insights\n"
                        "    plain-bool: true\n"
                        "    empty:\n"
                        "    tilde: ~\n"
                        "    quoted-null: \"null\"\n"
                        "    a-map: {x: y}\n"
                        "    a-list:\n"
                        "      - 1\n"
                        "    literal: |\n"
                        "      line one\n"
                        "      line two\n"
                        "    folded: >-\n"
                        "      one\n"
                        "      two\n"
                        "    utf8: \"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\"\n";
        struct manifest_list l = { 0 };
        parse_ok("a.yaml", y, strlen(y), &l);
        const struct manifest *m = &l.v[0];
        static const char *const keys[] = {
                "include.release.openshift.io/self-managed-high-availability", "capability.openshift.io/name",
                "plain-bool", "empty", "tilde", "quoted-null", "a-map", "a-list", "literal", "folded", "utf8",
        };
        static const char *const values[] = {
                "true", "Console+Insights", "true", "", "", "null", "", "", "line one\nline two\n", "one two",
                "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
        };
        cr_assert_eq(m->n_annotations, 11);
        for (size_t i = 0; i < 11; i++) {
                cr_assert_str_eq(m->annotations[i].key, keys[i]);
                cr_assert_str_eq(m->annotations[i].value, values[i], "%s", keys[i]);
                cr_assert_str_eq(ann(m, keys[i]), values[i]);
        }
        cr_assert_null(ann(m, "missing"));
        cr_assert_null(ann(m, "capability.openshift.io"));
        cr_assert_null(manifest_annotation(m, NULL));
        manifest_list_free(&l);
}

Test(manifest, annotations_null_or_empty) {
        const char *docs[] = { CM("a") "  annotations:\n", CM("a") "  annotations: {}\n", CM("a") "  annotations: null\n" };
        for (size_t i = 0; i < 3; i++) {
                struct manifest_list l = { 0 };
                parse_ok("a.yaml", docs[i], strlen(docs[i]), &l);
                cr_assert_eq(l.v[0].n_annotations, 0);
                manifest_list_free(&l);
        }
}

Test(manifest, annotation_refusals) {
        refuse("a.yaml", CM("a") "  annotations: [x]\n", -EINVAL, "a.yaml:5: metadata.annotations must be a mapping");
        refuse("a.yaml", CM("a") "  annotations: text\n", -EINVAL, "a.yaml:5: metadata.annotations must be a mapping");
        refuse("a.yaml", CM("a") "  annotations:\n    a: \"1\"\n    b: \"2\"\n    a: \"3\"\n", -EINVAL,
               "a.yaml:8: duplicate annotation \"a\"");
        refuse("a.yaml", CM("a") "  annotations:\n    ? [k]\n    : v\n", -EINVAL, "a.yaml:6: annotation keys must be strings");
        refuse("a.yaml", CM("a") "  annotations:\n    ~: v\n", -EINVAL, "annotation keys must be strings");
        refuse("a.yaml", CM("a") "  annotations:\n    \"\": v\n", -EINVAL, "a.yaml:6: empty annotation key");
        char key[400];
        memset(key, 'k', 318);
        key[318] = 0;
        char y[1024];
        snprintf(y, sizeof y, CM("a") "  annotations:\n    %s: v\n", key);
        refuse("a.yaml", y, -E2BIG, "a.yaml:6: annotation key is longer than 317 bytes");
        key[317] = 0;
        snprintf(y, sizeof y, CM("a") "  annotations:\n    %s: v\n", key);
        struct manifest_list l = { 0 };
        parse_ok("a.yaml", y, strlen(y), &l);
        manifest_list_free(&l);
}

static char *many_annotations(size_t n) {
        size_t cap = 128 + n * 32;
        char *y = malloc(cap);
        size_t off = (size_t) snprintf(y, cap, CM("a") "  annotations:\n");
        for (size_t i = 0; i < n; i++)
                off += (size_t) snprintf(y + off, cap - off, "    key-%zu: \"v%zu\"\n", i, i);
        return y;
}

Test(manifest, annotation_count_limit) {
        char *y = many_annotations(MANIFEST_MAX_ANNOTATIONS);
        struct manifest_list l = { 0 };
        parse_ok("a.yaml", y, strlen(y), &l);
        cr_assert_eq(l.v[0].n_annotations, MANIFEST_MAX_ANNOTATIONS);
        cr_assert_str_eq(ann(&l.v[0], "key-255"), "v255");
        manifest_list_free(&l);
        free(y);
        y = many_annotations(MANIFEST_MAX_ANNOTATIONS + 1);
        refuse("a.yaml", y, -E2BIG, "a.yaml:262: more than 256 annotations");
        free(y);
}

Test(manifest, annotation_total_size_limit) {
        size_t big = 100 * 1024;
        char *v = malloc(big + 1);
        memset(v, 'x', big);
        v[big] = 0;
        size_t cap = 4 * big;
        char *y = malloc(cap);
        snprintf(y, cap, CM("a") "  annotations:\n    a: %s\n    b: %s\n", v, v);
        struct manifest_list l = { 0 };
        parse_ok("a.yaml", y, strlen(y), &l);
        cr_assert_eq(strlen(ann(&l.v[0], "b")), big);
        manifest_list_free(&l);
        snprintf(y, cap, CM("a") "  annotations:\n    a: %s\n    b: %s\n    c: %s\n", v, v, v);
        refuse("a.yaml", y, -E2BIG, "a.yaml:8: annotations are larger than 262144 bytes");
        free(y);
        free(v);
}

/* ---- aliases ----------------------------------------------------------------- */

Test(manifest, aliases_in_metadata_are_refused) {
        refuse("a.yaml", "x: &n foo\napiVersion: v1\nkind: X\nmetadata:\n  name: *n\n", -EINVAL,
               "a.yaml:5: aliases are not allowed for metadata.name");
        refuse("a.yaml", "x: &n v1\napiVersion: *n\nkind: X\nmetadata: {name: a}\n", -EINVAL,
               "a.yaml:2: aliases are not allowed for apiVersion");
        refuse("a.yaml", "x: &m {name: a}\napiVersion: v1\nkind: X\nmetadata: *m\n", -EINVAL,
               "a.yaml:4: aliases are not allowed for metadata");
        refuse("a.yaml", "x: &l {a: b}\n" CM("a") "  labels: *l\n", -EINVAL, "a.yaml:6: aliases are not allowed in metadata");
        refuse("a.yaml", "x: &l {a: b}\n" CM("a") "  labels: {deep: [*l]}\n", -EINVAL, "aliases are not allowed in metadata");
        refuse("a.yaml", "x: &l {a: b}\n" CM("a") "  annotations: *l\n", -EINVAL, "aliases are not allowed in metadata");
        refuse("a.yaml", "x: &l b\n" CM("a") "  annotations:\n    k: *l\n", -EINVAL, "a.yaml:7: aliases are not allowed in metadata");
        refuse("a.yaml", "x: &l b\n" CM("a") "  annotations:\n    *l : v\n", -EINVAL, "aliases are not allowed in metadata");
        refuse("a.yaml", "x: &l {k: v}\n" CM("a") "  annotations:\n    k2: {nested: *l}\n", -EINVAL, "aliases are not allowed in metadata");
        refuse("a.yaml", "x: &l {name: a}\napiVersion: v1\nkind: X\nmetadata:\n  <<: *l\n", -EINVAL,
               "a.yaml:5: merge keys (<<) are not allowed in metadata");
        refuse("a.yaml", "x: &l {kind: X}\napiVersion: v1\n<<: *l\nmetadata: {name: a}\n", -EINVAL,
               "a.yaml:3: merge keys (<<) are not allowed at the top level");
        refuse("a.yaml", CM("a") "  annotations:\n    <<: {k: v}\n", -EINVAL, "annotation keys must be strings");
}

Test(manifest, aliases_outside_metadata_are_counted_not_expanded) {
        /* Events are not expanded here, but whoever applies the manifest
         * expands them: a billion laughs outside metadata is refused
         * (yamlscan.h), a few small aliases are not. */
        char y[4096];
        size_t off = (size_t) snprintf(y, sizeof y, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (int i = 1; i < 10; i++)
                off += (size_t) snprintf(y + off, sizeof y - off,
                                         "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n",
                                         i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        snprintf(y + off, sizeof y - off, CM("laughs") "\"<<\": quoted is a plain key\n");
        refuse("a.yaml", y, -E2BIG, "a.yaml:4: aliases expand past 65536 bytes");
        off = (size_t) snprintf(y, sizeof y, "a0: &a0 [lol, lol]\na1: [*a0, *a0]\n");
        snprintf(y + off, sizeof y - off, CM("laughs") "\"<<\": quoted is a plain key\n");
        struct manifest_list l = { 0 };
        parse_ok("a.yaml", y, strlen(y), &l);
        cr_assert_str_eq(l.v[0].name, "laughs");
        manifest_list_free(&l);
}

/* ---- file names ------------------------------------------------------------------ */

Test(manifest, file_names) {
        refuse("dir/a.yaml", CM("a"), -EINVAL, "file name \"dir/a.yaml\" contains '/'");
        refuse("/a.yaml", CM("a"), -EINVAL, "contains '/'");
        refuse(".a.yaml", CM("a"), -EINVAL, "file name \".a.yaml\" starts with '.'");
        refuse("..yaml", CM("a"), -EINVAL, "starts with '.'");
        refuse(".yaml", CM("a"), -EINVAL, "starts with '.'");
        refuse("a.txt", CM("a"), -EINVAL, "file name \"a.txt\" does not end in .yaml, .yml or .json");
        refuse("a.YAML", CM("a"), -EINVAL, "does not end in");
        refuse("a.yaml.bak", CM("a"), -EINVAL, "does not end in");
        refuse("yaml", CM("a"), -EINVAL, "does not end in");
        refuse("", CM("a"), -EINVAL, "empty file name");
        refuse("a\n.yaml", CM("a"), -EINVAL, "control characters");
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        cr_assert_eq(manifest_parse_file(NULL, CM("a"), 10, &l, err, sizeof err), -EINVAL);
        char name[300];
        memset(name, 'n', sizeof name);
        strcpy(name + 251, ".yaml");
        refuse(name, CM("a"), -E2BIG, "file name is longer than 255 bytes");
        strcpy(name + 250, ".yaml"); /* exactly 255 */
        parse_ok(name, CM("a"), strlen(CM("a")), &l);
        cr_assert_str_eq(l.v[0].path, name);
        /* Several documents make "<stem>.<i>.yaml", too long for that name. */
        refuse(name, CM("a") "---\n" CM("b"), -E2BIG, "file name is too long for 2 documents");
        manifest_list_free(&l);
        /* Odd but plain names are fine. */
        const char *ok[] = { "a b.yaml", "a.b.c.yml", "-.json", "x\\y.yaml", "caf\xc3\xa9.yaml" };
        for (size_t i = 0; i < 5; i++) {
                const char *d = strstr(ok[i], ".json") ? "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"n\"}}" : CM("a");
                parse_ok(ok[i], d, strlen(d), &l);
        }
        cr_assert_eq(l.n, 5);
        manifest_list_free(&l);
}

Test(manifest, paths_of_several_documents) {
        const char *y = CM("a") "---\n" CM("b") "---\n" CM("c");
        struct manifest_list l = { 0 };
        parse_ok("0000_30_ops.yaml", y, strlen(y), &l);
        parse_ok("x.y.yml", y, strlen(y), &l);
        cr_assert_eq(l.n, 6);
        static const char *const paths[] = { "0000_30_ops.0.yaml", "0000_30_ops.1.yaml", "0000_30_ops.2.yaml",
                                             "x.y.0.yml", "x.y.1.yml", "x.y.2.yml" };
        for (size_t i = 0; i < 6; i++) {
                cr_assert_str_eq(l.v[i].path, paths[i]);
                cr_assert_eq(l.v[i].doc_index, i % 3);
                cr_assert_str_eq(l.v[i].file, i < 3 ? "0000_30_ops.yaml" : "x.y.yml");
                cr_assert_eq(l.v[i].name[0], "abc"[i % 3]);
        }
        manifest_list_free(&l);
}

/* ---- exact bytes ------------------------------------------------------------------- */

Test(manifest, split_bytes_exactly) {
        const char *y = "# preamble comment\n"
                        "apiVersion: v1\nkind: A\nmetadata: {name: a}\n"
                        "# belongs to a\n"
                        "---\n"
                        "---   # empty document: its bytes go to b's predecessor\n"
                        "--- # b\n"
                        "apiVersion: v1\nkind: B\nmetadata: {name: b}\n"
                        "...\n"
                        "# still b\n"
                        "%YAML 1.1\n"
                        "--- !!map\n"
                        "apiVersion: v1\nkind: C\nmetadata: {name: c}";
        struct manifest_list l = { 0 };
        parse_ok("s.yaml", y, strlen(y), &l);
        cr_assert_eq(l.n, 3);
        cr_assert_str_eq(l.v[0].content, "# preamble comment\n"
                                         "apiVersion: v1\nkind: A\nmetadata: {name: a}\n"
                                         "# belongs to a\n"
                                         "---\n"
                                         "---   # empty document: its bytes go to b's predecessor\n");
        cr_assert_str_eq(l.v[1].content, "--- # b\n"
                                         "apiVersion: v1\nkind: B\nmetadata: {name: b}\n"
                                         "...\n"
                                         "# still b\n");
        cr_assert_str_eq(l.v[2].content, "%YAML 1.1\n"
                                         "--- !!map\n"
                                         "apiVersion: v1\nkind: C\nmetadata: {name: c}");
        manifest_list_free(&l);
}

Test(manifest, leading_empty_documents_go_to_the_first) {
        const char *y = "---\n# nothing\n--- ~\n--- null\n---\n" CM("a") "---\n" CM("b") "---\n...\n";
        struct manifest_list l = { 0 };
        parse_ok("e.yaml", y, strlen(y), &l);
        cr_assert_eq(l.n, 2);
        cr_assert_eq(l.v[0].doc_index, 0);
        cr_assert_eq(l.v[1].doc_index, 1);
        cr_assert(strncmp(l.v[0].content, "---\n# nothing\n--- ~\n", 20) == 0);
        cr_assert_str_eq(l.v[1].content, "---\n" CM("b") "---\n...\n");
        manifest_list_free(&l);
}

Test(manifest, empty_files_and_empty_documents) {
        const char *empties[] = { "", "\n", "# only a comment\n", "---\n", "--- ~\n...\n", "null\n", "~",
                                  "---\n---\n---\n", "%YAML 1.1\n---\n", "\xef\xbb\xbf", "--- !!null\n" };
        for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
                struct manifest_list l = { 0 };
                char err[ERRLEN];
                cr_assert_eq(parse("e.yaml", empties[i], &l, err), 0, "case %zu: %s", i, err);
                cr_assert_eq(l.n, 0, "case %zu", i);
                manifest_list_free(&l);
        }
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        cr_assert_eq(manifest_parse_file("e.yaml", NULL, 0, &l, err, sizeof err), 0);
        cr_assert_eq(l.n, 0);
}

Test(manifest, split_table) {
        static const char *const files[] = {
                /* markers, comments, end markers */
                CM("a") "---\n" CM("b"),
                "---\n" CM("a") "---\n" CM("b"),
                CM("a") "...\n---\n" CM("b") "...\n",
                CM("a") "# c1\n# c2\n---\n# c3\n" CM("b") "# c4\n",
                CM("a") "--- # comment on the marker\n" CM("b"),
                /* directives */
                "%YAML 1.1\n---\n" CM("a") "...\n%YAML 1.1\n---\n" CM("b"),
                "# header\n%TAG !e! tag:example.com,2000:\n--- !e!thing\n" CM("a") "...\n%TAG !f! tag:f.org,2000:\n--- !f!x\n" CM("b"),
                /* empty documents between, before and after */
                CM("a") "---\n---\n# nothing\n--- ~\n---\n" CM("b") "---\n",
                /* CRLF and CR-only */
                "apiVersion: v1\r\nkind: A\r\nmetadata:\r\n  name: a\r\n---\r\napiVersion: v1\r\nkind: B\r\nmetadata:\r\n  name: b\r\n",
                "apiVersion: v1\rkind: A\rmetadata:\r  name: a\r---\rapiVersion: v1\rkind: B\rmetadata:\r  name: b\r",
                /* multi-byte UTF-8 before a split, and a BOM */
                CM("a") "data: {k: \"\xc3\xa9\xc3\xa9\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x98\x80\xf0\x9f\x98\x80\"}\n# \xc3\xa9\n---\n" CM("b"),
                "\xef\xbb\xbf" CM("\xc3\xa9t\xc3\xa9") "---\n" CM("\xf0\x9f\x98\x80") "---\n" CM("c"),
                "\xef\xbb\xbf---\n" CM("a") "---\n" CM("b"),
                /* line breaks libyaml counts as one character: NEL, LS, PS */
                CM("a") "data: {k: \"x\xc2\x85y\xe2\x80\xa8z\xe2\x80\xa9w\"}\n---\n" CM("b"),
                /* block scalars holding things that look like markers */
                CM("a") "data:\n  script: |\n    echo ---\n    --- not a marker (indented)\n    ...\n---\n" CM("b"),
                CM("a") "data: {k: \"---\"}\n---\n" CM("b"),
                /* no trailing newline */
                CM("a") "---\napiVersion: v1\nkind: B\nmetadata: {name: b}",
                CM("a") "---\n" CM("b") "...",
                /* flow style documents */
                "{apiVersion: v1, kind: A, metadata: {name: a}}\n--- {apiVersion: v1, kind: B, metadata: {name: b}}\n",
                /* many documents */
                CM("a") "---\n" CM("b") "---\n" CM("c") "---\n" CM("d") "---\n" CM("e") "---\n" CM("f"),
        };
        for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
                struct manifest_list l = { 0 };
                char name[32];
                snprintf(name, sizeof name, "case%zu.yaml", i);
                parse_ok(name, files[i], strlen(files[i]), &l);
                cr_assert_geq(l.n, 2, "case %zu", i);
                manifest_list_free(&l);
        }
}

/* ---- the concatenation invariant over generated files ------------------------------ */

static uint64_t rng_state;
static uint32_t rnd(void) {
        return tu_xorshift(&rng_state);
}
static const char *pick(const char *const *v, size_t n) {
        return v[rnd() % n];
}
#define PICK(v) pick(v, sizeof v / sizeof *v)

struct buf {
        char *p;
        size_t n, cap;
};
static void put(struct buf *b, const char *s) {
        size_t n = strlen(s);
        if (b->n + n + 1 > b->cap) {
                b->cap = (b->n + n + 1) * 2;
                b->p = realloc(b->p, b->cap);
        }
        memcpy(b->p + b->n, s, n + 1);
        b->n += n;
}

Test(manifest, concatenation_invariant_on_generated_files) {
        static const char *const preambles[] = { "", "", "# header\n", "# a\n\n# b\n", "\n\n" };
        static const char *const markers[] = { "---\n", "--- # c\n", "---  \n", "--- !!map\n" };
        static const char *const empties[] = { "---\n", "--- ~\n", "---\n# only a comment\n", "--- null\n", "---\n\n" };
        static const char *const words[] = {
                "plain", "caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "\xce\xa9mega", "a-b_c",
                "\xe2\x80\xa8", "\xc2\x85", "x y", "'q'", "---", "#not",
        };
        static const char *const afters[] = { "", "", "# trailing\n", "\n", "...\n", "...\n# after end\n" };
        static const char *const eols[] = { "\n", "\r\n", "\r" };
        rng_state = 0x9e3779b97f4a7c15ull;
        for (int iter = 0; iter < 400; iter++) {
                struct buf b = { 0 };
                put(&b, "");
                bool bom = rnd() % 8 == 0;
                if (bom)
                        put(&b, "\xef\xbb\xbf");
                bool directive = rnd() % 6 == 0;
                put(&b, PICK(preambles));
                if (directive)
                        put(&b, "%YAML 1.1\n");
                size_t ndocs = 1 + rnd() % 5, nonempty = 0;
                bool ended = false; /* the last document ended with "..." */
                for (size_t d = 0; d < ndocs; d++) {
                        bool first = b.n == 0 || d == 0;
                        if (rnd() % 4 == 0) {
                                if (!first && ended && rnd() % 2)
                                        put(&b, "%YAML 1.1\n");
                                put(&b, PICK(empties));
                                ended = false;
                        } else {
                                if (!(first && !directive && rnd() % 2)) {
                                        if (!first && ended && rnd() % 3 == 0)
                                                put(&b, "%TAG !x! tag:example.com,2000:\n");
                                        put(&b, PICK(markers));
                                }
                                char doc[512];
                                snprintf(doc, sizeof doc,
                                         "apiVersion: v1\nkind: K\nmetadata:\n  name: n%zu\n  annotations:\n"
                                         "    a: \"%s %s\"\n    b: '%s'\ndata:\n  k: |\n    %s\n",
                                         nonempty, PICK(words), PICK(words), "x\xc3\xa9", PICK(words));
                                put(&b, doc);
                                nonempty++;
                                const char *after = PICK(afters);
                                put(&b, after);
                                ended = strstr(after, "...") != NULL;
                        }
                }
                if (rnd() % 4 == 0 && b.n && b.p[b.n - 1] == '\n')
                        b.p[--b.n] = 0; /* no trailing newline */
                /* Line endings. */
                const char *eol = PICK(eols);
                struct buf out = { 0 };
                put(&out, "");
                for (size_t i = 0; i < b.n; i++) {
                        char c[2] = { b.p[i], 0 };
                        put(&out, b.p[i] == '\n' ? eol : c);
                }
                struct manifest_list l = { 0 };
                parse_ok("gen.yaml", out.p, out.n, &l);
                cr_assert_eq(l.n, nonempty, "iteration %d: %zu documents, want %zu\n%s", iter, l.n, nonempty, out.p);
                for (size_t i = 0; i < l.n; i++) {
                        char want[32];
                        snprintf(want, sizeof want, "n%zu", i);
                        cr_assert_str_eq(l.v[i].name, want);
                        cr_assert_eq(l.v[i].n_annotations, 2);
                }
                manifest_list_free(&l);
                free(b.p);
                free(out.p);
        }
}

/* ---- errors from libyaml ------------------------------------------------------------ */

Test(manifest, yaml_syntax_errors_name_file_and_line) {
        refuse("s.yaml", "apiVersion: v1\nkind: a: b\n", -EINVAL, "s.yaml:2: mapping values are not allowed in this context");
        refuse("s.yaml", CM("a") "---\nkey: \"unterminated\n", -EINVAL, "s.yaml:6: found unexpected end of stream (while scanning a quoted scalar at line 6)");
        refuse("s.yaml", "apiVersion: v1\n  kind: x\n", -EINVAL, "s.yaml:2:");
        refuse("s.yaml", "a:\n\t- b\n", -EINVAL, "s.yaml:2: found character that cannot start any token");
        refuse("s.yaml", "{a: [1, 2}\n", -EINVAL, "s.yaml:1: did not find expected ',' or ']'");
        refuse("s.yaml", CM("a") "...\nb: c\n", -EINVAL, "s.yaml:6: did not find expected <document start>");
        refuse("s.yaml", "%YAML 2.0\n---\n" CM("a"), -EINVAL, "s.yaml:1: found incompatible YAML document");
        refuse("s.yaml", "a: !<bad tag\n", -EINVAL, "s.yaml:1:");
        /* CRLF: lines still count from 1. */
        refuse("s.yaml", "apiVersion: v1\r\nkind: X\r\nmetadata:\r\n  name: x\r\n  labels: [x\r\n", -EINVAL, "s.yaml:5:");
        refuse("s.yaml", "apiVersion: v1\rkind: X\rmetadata:\r  name: x\r  labels: [x\r", -EINVAL, "s.yaml:5:");
        refuse("s.yaml", "apiVersion: v1\nkind: X\nmetadata:\n  name: x\n  labels: [x", -EINVAL, "s.yaml:5:");
        /* The context names where the construct began. */
        refuse("s.yaml", "a:\n  b: c\n d: e\n", -EINVAL, "(while parsing a block mapping at line");
}

Test(manifest, encoding_errors) {
        refuse("u.yaml", CM("a") "data: {k: \"\xc3\x28\"}\n", -EINVAL, "u.yaml:5: invalid trailing UTF-8 octet");
        refuse("u.yaml", CM("a") "x: \xff\n", -EINVAL, "u.yaml:5: invalid leading UTF-8 octet");
        refuse("u.yaml", CM("a") "x: \"\xed\xa0\x80\"\n", -EINVAL, "u.yaml:5: invalid Unicode character");
        refuse("u.yaml", CM("a") "x: \x01\n", -EINVAL, "u.yaml:5: control characters are not allowed");
        /* A NUL byte in the data. */
        const char y[] = "apiVersion: v1\nkind: X\nmetadata:\n  name: a\x00\n";
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        cr_assert_eq(parse_n("u.yaml", y, sizeof y - 1, &l, err), -EINVAL);
        cr_assert(strstr(err, "u.yaml:4: control characters are not allowed"), "%s", err);
        /* UTF-16 is not accepted (the byte walk counts UTF-8). */
        const char u16[] = "\xff\xfe" "a\0:\0 \0b\0\n\0";
        cr_assert_eq(parse_n("u.yaml", u16, sizeof u16 - 1, &l, err), -EINVAL);
        cr_assert(strstr(err, "u.yaml:1: UTF-16 is not supported"), "%s", err);
        const char u16be[] = "\xfe\xff" "\0a\0:\0 \0b\0\n";
        cr_assert_eq(parse_n("u.yaml", u16be, sizeof u16be - 1, &l, err), -EINVAL);
        /* A BOM cut short is bad UTF-8. */
        cr_assert_eq(parse_n("u.yaml", "\xef\xbb", 2, &l, err), -EINVAL);
        cr_assert_eq(l.n, 0);
}

/* ---- limits ---------------------------------------------------------------------------- */

Test(manifest, name_length_limit) {
        char name[300], y[1024];
        memset(name, 'n', sizeof name);
        name[MANIFEST_MAX_NAME] = 0;
        snprintf(y, sizeof y, CM("%s") "  namespace: %s\n", name, name);
        struct manifest_list l = { 0 };
        parse_ok("a.yaml", y, strlen(y), &l);
        cr_assert_eq(strlen(l.v[0].name), MANIFEST_MAX_NAME);
        manifest_list_free(&l);
        name[MANIFEST_MAX_NAME] = 'n';
        name[MANIFEST_MAX_NAME + 1] = 0;
        snprintf(y, sizeof y, CM("%s"), name);
        refuse("a.yaml", y, -E2BIG, "a.yaml:4: metadata.name is longer than 253 bytes");
        snprintf(y, sizeof y, CM("a") "  namespace: %s\n", name);
        refuse("a.yaml", y, -E2BIG, "a.yaml:5: metadata.namespace is longer than 253 bytes");
        snprintf(y, sizeof y, "apiVersion: v1\nkind: %s\nmetadata: {name: a}\n", name);
        refuse("a.yaml", y, -E2BIG, "a.yaml:2: kind is longer than 253 bytes");
}

Test(manifest, file_size_limit) {
        size_t n = MANIFEST_MAX_FILE + 1;
        char *y = malloc(n);
        memset(y, '#', n);
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        cr_assert_eq(parse_n("big.yaml", y, n, &l, err), -E2BIG);
        cr_assert(strstr(err, "big.yaml: file is larger than 16777216 bytes"), "%s", err);
        /* Exactly at the limit: a comment line then one document. */
        const char *doc = "\n" CM("a");
        memcpy(y + MANIFEST_MAX_FILE - strlen(doc), doc, strlen(doc));
        parse_ok("big.yaml", y, MANIFEST_MAX_FILE, &l);
        cr_assert_eq(l.n, 1);
        cr_assert_eq(l.v[0].content_len, MANIFEST_MAX_FILE);
        manifest_list_free(&l);
        free(y);
}

static char *n_docs(size_t n, size_t *len) {
        struct buf b = { 0 };
        put(&b, "");
        for (size_t i = 0; i < n; i++) {
                char d[128];
                snprintf(d, sizeof d, "---\napiVersion: v1\nkind: K\nmetadata: {name: n%zu}\n--- ~\n", i);
                put(&b, d);
        }
        *len = b.n;
        return b.p;
}

Test(manifest, document_count_limit) {
        size_t len;
        char *y = n_docs(MANIFEST_MAX_DOCS_PER_FILE, &len);
        struct manifest_list l = { 0 };
        parse_ok("many.yaml", y, len, &l);
        cr_assert_eq(l.n, MANIFEST_MAX_DOCS_PER_FILE, "empty documents are not counted");
        cr_assert_str_eq(l.v[999].path, "many.999.yaml");
        manifest_list_free(&l);
        free(y);
        y = n_docs(MANIFEST_MAX_DOCS_PER_FILE + 1, &len);
        char err[ERRLEN];
        cr_assert_eq(parse_n("many.yaml", y, len, &l, err), -E2BIG);
        cr_assert(strstr(err, "many.yaml:5002: more than 1000 documents"), "%s", err);
        cr_assert_eq(l.n, 0);
        free(y);
}

Test(manifest, nesting_limit) {
        size_t depth = 1001;
        char *y = malloc(2 * depth + 256);
        size_t off = (size_t) sprintf(y, CM("a") "spec: ");
        memset(y + off, '[', depth);
        memset(y + off + depth, ']', depth);
        strcpy(y + off + 2 * depth, "\n");
        refuse("n.yaml", y, -E2BIG, "n.yaml:5: nested deeper than 1000 levels");
        depth = 999; /* spec's value at depth 1 */
        off = (size_t) sprintf(y, CM("a") "spec: ");
        memset(y + off, '[', depth);
        memset(y + off + depth, ']', depth);
        strcpy(y + off + 2 * depth, "\n");
        struct manifest_list l = { 0 };
        parse_ok("n.yaml", y, strlen(y), &l);
        manifest_list_free(&l);
        /* Deep block nesting inside metadata too. */
        off = (size_t) sprintf(y, CM("a") "  labels: ");
        memset(y + off, '{', 1001);
        y[off + 1001] = 0;
        refuse("n.yaml", y, -E2BIG, "nested deeper than 1000 levels");
        free(y);
}

Test(manifest, a_refused_file_appends_nothing) {
        struct manifest_list l = { 0 };
        parse_ok("good.yaml", CM("g"), strlen(CM("g")), &l);
        char err[ERRLEN];
        cr_assert_eq(parse("bad.yaml", CM("a") "---\n" CM("b") "---\n- not a mapping\n", &l, err), -EINVAL);
        cr_assert(strstr(err, "bad.yaml:11: document is not a mapping"), "%s", err);
        cr_assert_eq(l.n, 1, "the earlier file's document is kept");
        cr_assert_str_eq(l.v[0].name, "g");
        parse_ok("more.yaml", CM("m"), strlen(CM("m")), &l);
        cr_assert_eq(l.n, 2);
        manifest_list_free(&l);
}

Test(manifest, error_buffer_may_be_small_or_absent) {
        struct manifest_list l = { 0 };
        char err[8];
        cr_assert_eq(manifest_parse_file("a.yaml", "- x\n", 4, &l, err, sizeof err), -EINVAL);
        cr_assert_eq(strlen(err), 7);
        cr_assert_eq(manifest_parse_file("a.yaml", "- x\n", 4, &l, NULL, 0), -EINVAL);
        cr_assert_eq(manifest_parse_file("a.yaml", "- x\n", 4, &l, err, 0), -EINVAL);
}

/* ---- JSON files ---------------------------------------------------------------------------- */

Test(manifest, json_files) {
        const char *j = "{\n"
                        "  \"apiVersion\": \"operator.openshift.io/v1\",\n"
                        "  \"kind\": \"Console\",\n"
                        "  \"metadata\": {\n"
                        "    \"name\": \"cluster\",\n"
                        "    \"annotations\": {\n"
                        "      \"include.release.openshift.io/self-managed-high-availability\": \"true\",\n"
                        "      \"capability.openshift.io/name\": \"Console\",\n"
                        "      \"escaped\": \"a\\/b \\u00e9 \\\"q\\\" \\\\ \\t\",\n"
                        "      \"obj\": {\"x\": [1, 2.5, true, null]},\n"
                        "      \"n\": 12\n"
                        "    }\n"
                        "  },\n"
                        "  \"spec\": {\"managementState\": \"Managed\", \"list\": []}\n"
                        "}\n";
        struct manifest_list l = { 0 };
        parse_ok("0000_50_console-operator_07-operator-config.json", j, strlen(j), &l);
        cr_assert_eq(l.n, 1);
        const struct manifest *m = &l.v[0];
        cr_assert_str_eq(m->path, "0000_50_console-operator_07-operator-config.json");
        cr_assert_str_eq(m->group, "operator.openshift.io");
        cr_assert_str_eq(m->kind, "Console");
        cr_assert_str_eq(m->name, "cluster");
        cr_assert_str_eq(ann(m, "capability.openshift.io/name"), "Console");
        cr_assert_str_eq(ann(m, "escaped"), "a/b \xc3\xa9 \"q\" \\ \t");
        cr_assert_str_eq(ann(m, "obj"), "");
        cr_assert_str_eq(ann(m, "n"), "12");
        cr_assert_str_eq(m->content, j);
        manifest_list_free(&l);

        const char *compact = "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"openshift-console\"}}";
        parse_ok("ns.json", compact, strlen(compact), &l);
        cr_assert_str_eq(l.v[0].name, "openshift-console");
        manifest_list_free(&l);
        const char *tabs = "\xef\xbb\xbf{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"K\",\n\t\"metadata\": {\"name\": \"x\"}\n}\n\n";
        parse_ok("tabs.json", tabs, strlen(tabs), &l);
        manifest_list_free(&l);
        /* A JSON file holding nothing at all. */
        parse_ok("empty.json", "", 0, &l);
        cr_assert_eq(l.n, 0);

        refuse("a.json", "[{\"apiVersion\":\"v1\"}]", -EINVAL, "a.json:1: document is not a mapping");
        refuse("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":1}}", -EINVAL,
               "a.json:1: metadata.name must be a string");
        refuse("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"}}\n---\n"
                         "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"b\"}}\n",
               -EINVAL, "a.json:3: a JSON file holds one document");
        /* YAML that is not JSON. */
        refuse("a.json", "{apiVersion: v1, kind: K, metadata: {name: a}}\n", -EINVAL, "a.json:1: not valid JSON");
        refuse("a.json", "# comment\n{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"}}\n", -EINVAL,
               "not valid JSON");
        refuse("a.json", "apiVersion: v1\nkind: K\nmetadata: {name: a}\n", -EINVAL, "not valid JSON");
        refuse("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"}}\n...\n", -EINVAL,
               "a.json:2: not valid JSON");
        refuse("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"a\"},}", -EINVAL,
               "a.json:1: not valid JSON");
        refuse("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"K\",\"metadata\":{\"name\":'a'}}", -EINVAL, "not valid JSON");
        refuse("a.json", "{\"apiVersion\":\"v1\",\"kind\":\"K\",\n\"metadata\":{\"name\":\"a\"", -EINVAL, "a.json:2:");
}

/* ---- real OpenShift-style manifests --------------------------------------------------------- */

static const char crd[] =
        "apiVersion: apiextensions.k8s.io/v1\n"
        "kind: CustomResourceDefinition\n"
        "metadata:\n"
        "  annotations:\n"
        "    api-approved.openshift.io: https://github.com/openshift/api/pull/486\n"
        "    description: Extension for configuring openshift web console plugins.\n"
        "    displayName: ConsolePlugin\n"
        "    include.release.openshift.io/ibm-cloud-managed: \"true\"\n"
        "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
        "    include.release.openshift.io/single-node-developer: \"true\"\n"
        "    capability.openshift.io/name: Console\n"
        "  name: consoleplugins.console.openshift.io\n"
        "spec:\n"
        "  group: console.openshift.io\n"
        "  names:\n"
        "    kind: ConsolePlugin\n"
        "    listKind: ConsolePluginList\n"
        "    plural: consoleplugins\n"
        "    singular: consoleplugin\n"
        "  scope: Cluster\n"
        "  versions:\n"
        "  - name: v1\n"
        "    schema:\n"
        "      openAPIV3Schema:\n"
        "        description: \"ConsolePlugin is an extension for customizing OpenShift web console by\n"
        "          \\ dynamically loading code from another service running on the cluster.\n"
        "          \\n\\nCompatibility level 1: Stable within a major release for a minimum\n"
        "          of 12 months or 3 minor releases (whichever is longer).\"\n"
        "        properties:\n"
        "          apiVersion:\n"
        "            description: >-\n"
        "              APIVersion defines the versioned schema of this representation\n"
        "              of an object. Servers should convert recognized schemas to the latest\n"
        "              internal value, and may reject unrecognized values. More info:\n"
        "              https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources\n"
        "            type: string\n"
        "          spec:\n"
        "            description: |\n"
        "              ConsolePluginSpec is the desired plugin configuration.\n"
        "              ---\n"
        "              A line of dashes inside a block scalar is text.\n"
        "              ...\n"
        "            properties:\n"
        "              backend:\n"
        "                properties:\n"
        "                  service:\n"
        "                    properties:\n"
        "                      port:\n"
        "                        format: int32\n"
        "                        maximum: 65535\n"
        "                        minimum: 1\n"
        "                        type: integer\n"
        "                    required: [name, namespace, port]\n"
        "                    type: object\n"
        "                type: object\n"
        "              displayName:\n"
        "                minLength: 1\n"
        "                type: string\n"
        "              i18n:\n"
        "                properties:\n"
        "                  loadType:\n"
        "                    enum: [Preload, Lazy, \"\"]\n"
        "                    type: string\n"
        "            type: object\n"
        "        type: object\n"
        "    served: true\n"
        "    storage: true\n";

static const char deployment[] =
        "---\n"
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        "  namespace: openshift-console-operator\n"
        "  name: console-operator\n"
        "  annotations:\n"
        "    config.openshift.io/inject-proxy: console-operator\n"
        "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
        "    include.release.openshift.io/single-node-developer: \"true\"\n"
        "    capability.openshift.io/name: Console+Insights\n"
        "    release.openshift.io/feature-set: TechPreviewNoUpgrade\n"
        "    exclude.release.openshift.io/internal-openshift-hosted: \"true\"\n"
        "spec:\n"
        "  replicas: 1\n"
        "  selector:\n"
        "    matchLabels:\n"
        "      name: console-operator\n"
        "  template:\n"
        "    metadata:\n"
        "      annotations:\n"
        "        target.workload.openshift.io/management: '{\"effect\": \"PreferredDuringScheduling\"}'\n"
        "      labels:\n"
        "        name: console-operator\n"
        "    spec:\n"
        "      containers:\n"
        "      - name: console-operator\n"
        "        image: quay.io/openshift/origin-console-operator:latest\n"
        "        command: [console, operator]\n"
        "        args:\n"
        "        - \"-v=2\"\n"
        "        - \"--config=/var/run/configmaps/config/controller-config.yaml\"\n"
        "        env:\n"
        "        - name: RELEASE_VERSION\n"
        "          value: \"0.0.1-snapshot\"\n"
        "        resources:\n"
        "          requests: {memory: 100Mi, cpu: 10m}\n"
        "      priorityClassName: system-cluster-critical\n"
        "      nodeSelector:\n"
        "        node-role.kubernetes.io/master: \"\"\n"
        "      tolerations:\n"
        "      - key: node-role.kubernetes.io/master\n"
        "        operator: Exists\n"
        "        effect: NoSchedule\n";

static const char service[] =
        "---\n"
        "# Service for the operator's metrics\n"
        "apiVersion: v1\n"
        "kind: Service\n"
        "metadata:\n"
        "  annotations:\n"
        "    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
        "    service.beta.openshift.io/serving-cert-secret-name: serving-cert\n"
        "    capability.openshift.io/name: Console\n"
        "  labels:\n"
        "    name: console-operator\n"
        "  name: metrics\n"
        "  namespace: openshift-console-operator\n"
        "spec:\n"
        "  ports:\n"
        "  - name: https\n"
        "    port: 443\n"
        "    targetPort: 8443\n"
        "  selector:\n"
        "    name: console-operator\n";

Test(manifest, openshift_crd_with_long_description) {
        struct manifest_list l = { 0 };
        parse_ok("0000_10_consoleplugin.crd.yaml", crd, strlen(crd), &l);
        cr_assert_eq(l.n, 1);
        const struct manifest *m = &l.v[0];
        cr_assert_str_eq(m->api_version, "apiextensions.k8s.io/v1");
        cr_assert_str_eq(m->group, "apiextensions.k8s.io");
        cr_assert_str_eq(m->kind, "CustomResourceDefinition");
        cr_assert_str_eq(m->name, "consoleplugins.console.openshift.io");
        cr_assert_null(m->namespace);
        cr_assert_eq(m->n_annotations, 7);
        cr_assert_str_eq(ann(m, "api-approved.openshift.io"), "https://github.com/openshift/api/pull/486");
        cr_assert_str_eq(ann(m, "include.release.openshift.io/single-node-developer"), "true");
        cr_assert_str_eq(ann(m, "capability.openshift.io/name"), "Console");
        cr_assert_str_eq(m->content, crd);
        manifest_list_free(&l);
}

Test(manifest, openshift_multi_document_file) {
        size_t n = strlen(crd) + strlen(deployment) + strlen(service);
        char *y = malloc(n + 1);
        strcpy(y, crd);
        strcat(y, deployment);
        strcat(y, service);
        struct manifest_list l = { 0 };
        parse_ok("0000_50_console-operator.yaml", y, n, &l);
        cr_assert_eq(l.n, 3);
        cr_assert_str_eq(l.v[0].content, crd);
        cr_assert_str_eq(l.v[1].content, deployment);
        cr_assert_str_eq(l.v[2].content, service);
        const struct manifest *d = &l.v[1];
        cr_assert_str_eq(d->path, "0000_50_console-operator.1.yaml");
        cr_assert_str_eq(d->group, "apps");
        cr_assert_str_eq(d->version, "v1");
        cr_assert_str_eq(d->kind, "Deployment");
        cr_assert_str_eq(d->namespace, "openshift-console-operator");
        cr_assert_str_eq(d->name, "console-operator");
        cr_assert_eq(d->n_annotations, 6, "the pod template's annotations are not the object's");
        cr_assert_str_eq(ann(d, "include.release.openshift.io/self-managed-high-availability"), "true");
        cr_assert_str_eq(ann(d, "capability.openshift.io/name"), "Console+Insights");
        cr_assert_str_eq(ann(d, "release.openshift.io/feature-set"), "TechPreviewNoUpgrade");
        cr_assert_str_eq(ann(d, "exclude.release.openshift.io/internal-openshift-hosted"), "true");
        cr_assert_null(ann(d, "target.workload.openshift.io/management"));
        const struct manifest *s = &l.v[2];
        cr_assert_str_eq(s->path, "0000_50_console-operator.2.yaml");
        cr_assert_str_eq(s->kind, "Service");
        cr_assert_str_eq(s->name, "metrics");
        cr_assert_str_eq(ann(s, "service.beta.openshift.io/serving-cert-secret-name"), "serving-cert");
        manifest_list_free(&l);
        free(y);
}

/* ---- same object, copies, JSON ------------------------------------------------------------ */

static struct manifest one(const char *y) {
        struct manifest_list l = { 0 };
        parse_ok("o.yaml", y, strlen(y), &l);
        cr_assert_eq(l.n, 1);
        struct manifest m = l.v[0];
        free(l.v);
        return m;
}

Test(manifest, same_object) {
        struct manifest a = one("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, namespace: ns}\n");
        struct manifest b = one("apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: x, namespace: ns}\n");
        struct manifest c = one("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n");
        struct manifest d = one("apiVersion: v1\nkind: Deployment\nmetadata: {name: x, namespace: ns}\n");
        struct manifest e = one("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x, namespace: ns}\n");
        struct manifest f = one("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: yy, namespace: ns}\n");
        struct manifest g = one("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, namespace: other}\n");
        struct manifest h = one("apiVersion: apps/v2\nkind: Deployment\nmetadata: {name: x}\n");
        cr_assert(manifest_same_object(&a, &a));
        cr_assert(manifest_same_object(&a, &b), "the version does not matter");
        cr_assert(manifest_same_object(&c, &h), "no namespace on both");
        cr_assert_not(manifest_same_object(&a, &c));
        cr_assert_not(manifest_same_object(&c, &a));
        cr_assert_not(manifest_same_object(&a, &d), "core group differs from apps");
        cr_assert_not(manifest_same_object(&a, &e));
        cr_assert_not(manifest_same_object(&a, &f));
        cr_assert_not(manifest_same_object(&a, &g));
        struct manifest *all[] = { &a, &b, &c, &d, &e, &f, &g, &h };
        for (size_t i = 0; i < 8; i++)
                manifest_free(all[i]);
}

static void assert_manifest_eq(const struct manifest *a, const struct manifest *b) {
        cr_assert_str_eq(a->file, b->file);
        cr_assert_eq(a->doc_index, b->doc_index);
        cr_assert_str_eq(a->path, b->path);
        cr_assert_str_eq(a->api_version, b->api_version);
        cr_assert_str_eq(a->group, b->group);
        cr_assert_str_eq(a->version, b->version);
        cr_assert_str_eq(a->kind, b->kind);
        cr_assert_eq(!a->namespace, !b->namespace);
        if (a->namespace)
                cr_assert_str_eq(a->namespace, b->namespace);
        cr_assert_str_eq(a->name, b->name);
        cr_assert_eq(a->n_annotations, b->n_annotations);
        for (size_t i = 0; i < a->n_annotations; i++) {
                cr_assert_str_eq(a->annotations[i].key, b->annotations[i].key);
                cr_assert_str_eq(a->annotations[i].value, b->annotations[i].value);
        }
        cr_assert_eq(a->content_len, b->content_len);
        cr_assert(memcmp(a->content, b->content, a->content_len) == 0);
}

Test(manifest, json_round_trip) {
        size_t n = strlen(crd) + strlen(deployment) + strlen(service);
        char *y = malloc(n + 1);
        strcpy(y, crd);
        strcat(y, deployment);
        strcat(y, service);
        struct manifest_list l = { 0 };
        parse_ok("0000_50_console-operator.yaml", y, n, &l);
        parse_ok("single.yaml", CM("s"), strlen(CM("s")), &l);
        for (size_t i = 0; i < l.n; i++) {
                json_object *o = manifest_to_json(&l.v[i], true);
                cr_assert_not_null(o);
                /* Through text and back, as the store does. */
                char *text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
                json_object_put(o);
                o = json_tokener_parse(text);
                cr_assert_not_null(o);
                struct manifest m;
                char err[ERRLEN] = "";
                cr_assert_eq(manifest_from_json(o, &m, err, sizeof err), 0, "%zu: %s", i, err);
                assert_manifest_eq(&m, &l.v[i]);
                manifest_free(&m);
                json_object_put(o);
                free(text);
        }
        /* Without content: no "content" member, and from_json wants it. */
        json_object *o = manifest_to_json(&l.v[1], false);
        json_object *v;
        cr_assert_not(json_object_object_get_ex(o, "content", &v));
        cr_assert(json_object_object_get_ex(o, "namespace", &v));
        cr_assert_str_eq(json_object_get_string(v), "openshift-console-operator");
        cr_assert(json_object_object_get_ex(o, "annotations", &v));
        cr_assert_str_eq(json_object_get_string(json_object_object_get(v, "capability.openshift.io/name")), "Console+Insights");
        cr_assert_eq(json_object_get_int(json_object_object_get(o, "doc_index")), 1);
        struct manifest m;
        char err[ERRLEN];
        cr_assert_eq(manifest_from_json(o, &m, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "content"), "%s", err);
        manifest_free(&m);
        json_object_put(o);
        /* Cluster-scoped: no namespace member. */
        o = manifest_to_json(&l.v[0], false);
        cr_assert_not(json_object_object_get_ex(o, "namespace", &v));
        json_object_put(o);
        manifest_list_free(&l);
        free(y);
}

static void from_json_refuses(const char *json, const char *want) {
        json_object *o = json_tokener_parse(json);
        cr_assert_not_null(o, "%s", json);
        struct manifest m;
        char err[ERRLEN] = "";
        cr_assert_eq(manifest_from_json(o, &m, err, sizeof err), -EINVAL, "%s", json);
        cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
        manifest_free(&m);
        json_object_put(o);
}

#define JBASE "\"file\":\"a.yaml\",\"doc_index\":0,\"path\":\"a.yaml\",\"api_version\":\"apps/v1\",\"kind\":\"K\",\"name\":\"n\""

Test(manifest, from_json_checks) {
        json_object *o = json_tokener_parse("{" JBASE ",\"content\":\"x\"}");
        struct manifest m;
        char err[ERRLEN] = "";
        cr_assert_eq(manifest_from_json(o, &m, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(m.group, "apps", "group and version come from api_version");
        cr_assert_str_eq(m.version, "v1");
        cr_assert_null(m.namespace);
        cr_assert_eq(m.n_annotations, 0);
        manifest_free(&m);
        json_object_put(o);
        o = json_tokener_parse("{\"file\":\"a.yaml\",\"doc_index\":3,\"path\":\"a.3.yaml\",\"api_version\":\"v1\","
                               "\"group\":\"\",\"version\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"namespace\":\"ns\","
                               "\"annotations\":{\"b\":\"2\",\"a\":\"1\"},\"content\":\"\"}");
        cr_assert_eq(manifest_from_json(o, &m, err, sizeof err), 0, "%s", err);
        cr_assert_eq(m.doc_index, 3);
        cr_assert_str_eq(m.annotations[0].key, "b", "order kept");
        cr_assert_str_eq(m.namespace, "ns");
        cr_assert_eq(m.content_len, 0);
        cr_assert_str_eq(m.content, "");
        manifest_free(&m);
        json_object_put(o);

        from_json_refuses("[]", "must be an object");
        from_json_refuses("{" JBASE "}", "field \"content\" is required");
        from_json_refuses("{" JBASE ",\"content\":1}", "field \"content\" must be string");
        from_json_refuses("{" JBASE ",\"content\":\"a\\u0000b\"}", "NUL");
        from_json_refuses("{\"doc_index\":0,\"path\":\"a.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"content\":\"\"}",
                          "field \"file\" is required");
        from_json_refuses("{\"file\":\"../a.yaml\",\"doc_index\":0,\"path\":\"a.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"content\":\"\"}",
                          "contains '/'");
        from_json_refuses("{\"file\":\"a.yaml\",\"doc_index\":0,\"path\":\"../x.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"content\":\"\"}",
                          "field \"path\" must be \"a.yaml\" or \"a.0.yaml\"");
        from_json_refuses("{\"file\":\"a.yaml\",\"doc_index\":1,\"path\":\"a.0.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"content\":\"\"}",
                          "field \"path\"");
        from_json_refuses("{\"file\":\"a.yaml\",\"doc_index\":-1,\"path\":\"a.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"content\":\"\"}",
                          "doc_index");
        from_json_refuses("{\"file\":\"a.yaml\",\"doc_index\":1000,\"path\":\"a.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"n\",\"content\":\"\"}",
                          "doc_index");
        from_json_refuses("{" JBASE ",\"group\":\"core\",\"content\":\"\"}", "field \"group\" does not match api_version");
        from_json_refuses("{" JBASE ",\"version\":\"v2\",\"content\":\"\"}", "field \"version\" does not match api_version");
        from_json_refuses("{\"file\":\"a.yaml\",\"doc_index\":0,\"path\":\"a.yaml\",\"api_version\":\"a/b/c\",\"kind\":\"K\",\"name\":\"n\",\"content\":\"\"}",
                          "not group/version");
        from_json_refuses("{" JBASE ",\"annotations\":{\"a\":1},\"content\":\"\"}", "annotation \"a\" must be a string");
        from_json_refuses("{" JBASE ",\"annotations\":[],\"content\":\"\"}", "field \"annotations\" must be object");
        from_json_refuses("{" JBASE ",\"annotations\":{\"\":\"v\"},\"content\":\"\"}", "annotation keys");
        from_json_refuses("{" JBASE ",\"namespace\":\"\",\"content\":\"\"}", "field \"namespace\" must not be empty");
        from_json_refuses("{\"file\":\"a.yaml\",\"doc_index\":0,\"path\":\"a.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"a\\nb\",\"content\":\"\"}",
                          "field \"name\" must not contain control characters");
        char big[400];
        memset(big, 'n', 254);
        big[254] = 0;
        char json[1024];
        snprintf(json, sizeof json, "{\"file\":\"a.yaml\",\"doc_index\":0,\"path\":\"a.yaml\",\"api_version\":\"v1\",\"kind\":\"K\",\"name\":\"%s\",\"content\":\"\"}", big);
        from_json_refuses(json, "field \"name\" is longer than 253 bytes");
        json_object *many = json_object_new_object();
        for (int i = 0; i <= MANIFEST_MAX_ANNOTATIONS; i++) {
                char k[16];
                snprintf(k, sizeof k, "k%d", i);
                json_object_object_add(many, k, json_object_new_string("v"));
        }
        o = json_tokener_parse("{" JBASE ",\"content\":\"\"}");
        json_object_object_add(o, "annotations", many);
        cr_assert_eq(manifest_from_json(o, &m, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "more than 256"), "%s", err);
        manifest_free(&m);
        json_object_put(o);
}

Test(manifest, append_copy_is_deep) {
        struct manifest_list src = { 0 }, dst = { 0 };
        size_t n = strlen(deployment) + strlen(service);
        char *y = malloc(n + 1);
        strcpy(y, deployment);
        strcat(y, service);
        parse_ok("d.yaml", y, n, &src);
        for (int round = 0; round < 40; round++)
                for (size_t i = 0; i < src.n; i++)
                        cr_assert_eq(manifest_list_append_copy(&dst, &src.v[i]), 0);
        cr_assert_eq(dst.n, 80);
        struct manifest keep = { 0 };
        struct manifest_list tmp = { 0 };
        cr_assert_eq(manifest_list_append_copy(&tmp, &src.v[0]), 0);
        keep = tmp.v[0];
        free(tmp.v);
        manifest_list_free(&src);
        for (size_t i = 0; i < dst.n; i++)
                cr_assert_str_eq(dst.v[i].name, i % 2 ? "metrics" : "console-operator");
        assert_manifest_eq(&dst.v[0], &keep);
        cr_assert_str_eq(manifest_annotation(&dst.v[78], "capability.openshift.io/name"), "Console+Insights");
        /* A manifest with no namespace, no annotations and no content copies too. */
        struct manifest bare = { .file = "f.yaml", .path = "f.yaml", .api_version = "v1", .group = "",
                                 .version = "v1", .kind = "K", .name = "n" };
        cr_assert_eq(manifest_list_append_copy(&dst, &bare), 0);
        cr_assert_null(dst.v[80].namespace);
        cr_assert_null(dst.v[80].content);
        cr_assert_eq(dst.v[80].n_annotations, 0);
        manifest_free(&keep);
        manifest_list_free(&dst);
        manifest_free(NULL);
        manifest_list_free(NULL);
        free(y);
}

/* ---- damaged input --------------------------------------------------------------------------- */

static int damaged_ok, damaged_refused;

static void check_damaged(const char *file, const char *data, size_t len) {
        struct manifest_list l = { 0 };
        char err[ERRLEN];
        int r = parse_n(file, data, len, &l, err);
        cr_assert(r == 0 || r == -EINVAL || r == -E2BIG, "r = %d", r);
        if (r < 0) {
                damaged_refused++;
                cr_assert_eq(l.n, 0);
                cr_assert(strncmp(err, file, strlen(file)) == 0, "error names the file: %s", err);
        } else {
                damaged_ok++;
                check_split(file, data, len, &l, 0);
        }
        manifest_list_free(&l);
}

static char *fuzz_base(size_t *len) {
        struct buf b = { 0 };
        put(&b, "\xef\xbb\xbf# header\n%YAML 1.1\n");
        put(&b, deployment);
        put(&b, "...\n");
        put(&b, service);
        put(&b, "---\n# empty\n--- {apiVersion: v1, kind: \"K\", metadata: {name: 'caf\xc3\xa9', annotations: {a: [1], b: &x c}}, d: *x}\r\n");
        put(&b, "--- |\n  literal\n");
        *len = b.n;
        return b.p;
}

Test(manifest, truncated_prefixes) {
        size_t len;
        char *y = fuzz_base(&len);
        damaged_ok = damaged_refused = 0;
        for (size_t n = 0; n <= len; n++) {
                char *p = malloc(n ? n : 1); /* exact size: ASan sees any overread */
                memcpy(p, y, n);
                check_damaged("t.yaml", p, n);
                free(p);
        }
        free(y);
        /* Both outcomes happen, so the checks above ran on both paths. */
        cr_assert_gt(damaged_ok, 200, "%d parsed", damaged_ok);
        cr_assert_gt(damaged_refused, 200, "%d refused", damaged_refused);
        y = malloc(strlen(crd));
        memcpy(y, crd, strlen(crd));
        for (size_t n = 0; n <= strlen(crd); n += 3)
                check_damaged("c.json", y, n);
        free(y);
}

Test(manifest, random_byte_flips) {
        size_t len;
        char *base = fuzz_base(&len);
        static const char interesting[] = "-.%#:'\"[]{}&*!|>\n\r\t \\\x00\x80\xc3\xe2\xf0\xff";
        rng_state = 0x2545f4914f6cdd1dull;
        damaged_ok = damaged_refused = 0;
        char *p = malloc(len);
        for (int iter = 0; iter < 2000; iter++) {
                memcpy(p, base, len);
                int flips = 1 + (int) (rnd() % 4);
                for (int f = 0; f < flips; f++) {
                        size_t at = rnd() % len;
                        p[at] = rnd() % 2 ? (char) rnd() : interesting[rnd() % (sizeof interesting - 1)];
                }
                size_t n = rnd() % 3 == 0 ? rnd() % (len + 1) : len;
                check_damaged(iter % 5 == 0 ? "f.json" : "f.yaml", p, n);
        }
        free(p);
        free(base);
        cr_assert_gt(damaged_ok, 50, "%d parsed", damaged_ok);
        cr_assert_gt(damaged_refused, 200, "%d refused", damaged_refused);
}
