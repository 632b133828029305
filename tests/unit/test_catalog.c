/* Operator catalogs: the same catalog in JSON and YAML gives the same model;
 * channel entries, required packages and GVKs, dependencies.yaml; ignored
 * blobs and properties counted; each refusal of catalog_check with its
 * words; malformed input with file and line; limits; a large catalog. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

#define ERRLEN 512

static const char two_json[] =
        "{\"schema\":\"olm.package\",\"name\":\"etcd\",\"defaultChannel\":\"alpha\",\"description\":\"a store\"}\n"
        "{\"schema\":\"olm.channel\",\"package\":\"etcd\",\"name\":\"alpha\",\"entries\":[\n"
        "  {\"name\":\"etcd.v0.9.0\"},\n"
        "  {\"name\":\"etcd.v0.9.2\",\"replaces\":\"etcd.v0.9.0\",\"skips\":[\"etcd.v0.9.1\"],\"skipRange\":\">=0.9.0 <0.9.2\"}]}\n"
        "{\"schema\":\"olm.bundle\",\"package\":\"etcd\",\"name\":\"etcd.v0.9.0\",\"image\":\"quay.io/etcd:0.9.0\",\n"
        " \"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"etcd\",\"version\":\"0.9.0\"}},\n"
        "  {\"type\":\"olm.gvk\",\"value\":{\"group\":\"etcd.io\",\"version\":\"v1\",\"kind\":\"EtcdCluster\"}}]}\n"
        "{\"schema\":\"olm.bundle\",\"package\":\"etcd\",\"name\":\"etcd.v0.9.2\",\n"
        " \"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"etcd\",\"version\":\"0.9.2\"}},\n"
        "  {\"type\":\"olm.package.required\",\"value\":{\"packageName\":\"prom\",\"versionRange\":\">=1.0.0 <2.0.0\"}},\n"
        "  {\"type\":\"olm.gvk.required\",\"value\":{\"group\":\"monitoring.io\",\"version\":\"v1\",\"kind\":\"Prometheus\"}},\n"
        "  {\"type\":\"olm.bundle.object\",\"value\":{\"data\":\"e30=\"}}]}\n"
        "{\"schema\":\"olm.package\",\"name\":\"prom\",\"defaultChannel\":\"stable\"}\n"
        "{\"schema\":\"olm.channel\",\"package\":\"prom\",\"name\":\"stable\",\"entries\":[{\"name\":\"prom.v1.0.0\"}]}\n"
        "{\"schema\":\"olm.bundle\",\"package\":\"prom\",\"name\":\"prom.v1.0.0\",\n"
        " \"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"prom\",\"version\":\"1.0.0\"}}]}\n"
        "{\"schema\":\"olm.deprecations\",\"package\":\"prom\"}\n";

static const char two_yaml[] =
        "---\n"
        "schema: olm.package\n"
        "name: etcd\n"
        "defaultChannel: alpha\n"
        "description: a store\n"
        "---\n"
        "schema: olm.channel\n"
        "package: etcd\n"
        "name: alpha\n"
        "entries:\n"
        "  - name: etcd.v0.9.0\n"
        "  - name: etcd.v0.9.2\n"
        "    replaces: etcd.v0.9.0\n"
        "    skips: [etcd.v0.9.1]\n"
        "    skipRange: '>=0.9.0 <0.9.2'\n"
        "---\n"
        "schema: olm.bundle\n"
        "package: etcd\n"
        "name: etcd.v0.9.0\n"
        "image: quay.io/etcd:0.9.0\n"
        "properties:\n"
        "  - type: olm.package\n"
        "    value: {packageName: etcd, version: 0.9.0}\n"
        "  - type: olm.gvk\n"
        "    value: {group: etcd.io, version: v1, kind: EtcdCluster}\n"
        "---\n"
        "schema: olm.bundle\n"
        "package: etcd\n"
        "name: etcd.v0.9.2\n"
        "properties:\n"
        "  - type: olm.package\n"
        "    value: {packageName: etcd, version: 0.9.2}\n"
        "  - type: olm.package.required\n"
        "    value: {packageName: prom, versionRange: '>=1.0.0 <2.0.0'}\n"
        "  - type: olm.gvk.required\n"
        "    value: {group: monitoring.io, version: v1, kind: Prometheus}\n"
        "  - type: olm.bundle.object\n"
        "    value: {data: e30=}\n"
        "---\n"
        "schema: olm.package\n"
        "name: prom\n"
        "defaultChannel: stable\n"
        "---\n"
        "schema: olm.channel\n"
        "package: prom\n"
        "name: stable\n"
        "entries: [{name: prom.v1.0.0}]\n"
        "---\n"
        "schema: olm.bundle\n"
        "package: prom\n"
        "name: prom.v1.0.0\n"
        "properties:\n"
        "  - {type: olm.package, value: {packageName: prom, version: 1.0.0}}\n"
        "---\n"
        "schema: olm.deprecations\n"
        "package: prom\n";

static int parse(struct catalog *c, const char *file, const char *text, char *err) {
        return catalog_parse(text, strlen(text), file, c, err, ERRLEN);
}

static void parse_ok(struct catalog *c, const char *file, const char *text) {
        char err[ERRLEN];
        int r = parse(c, file, text, err);
        cr_assert_eq(r, 0, "%s: %d %s", file, r, err);
}

/* Parsing must fail with r and words; nothing is left of the file. */
static void refuse(const char *file, const char *text, int r, const char *want) {
        struct catalog c = { 0 };
        char err[ERRLEN];
        int got = parse(&c, file, text, err);
        cr_assert_eq(got, r, "%s: got %d (%s), want %d", want, got, err, r);
        cr_assert(strstr(err, want), "error \"%s\" does not contain \"%s\"", err, want);
        cr_assert(c.n_packages == 0 && c.n_channels == 0 && c.n_bundles == 0 && c.n_files == 0 && c.n_ignored == 0);
        catalog_free(&c);
}

/* Parsing succeeds, catalog_check fails with words. */
static void check_refuses(const char *file, const char *text, const char *want) {
        struct catalog c = { 0 };
        char err[ERRLEN];
        parse_ok(&c, file, text);
        int r = catalog_check(&c, err, sizeof err);
        cr_assert_eq(r, -EINVAL, "%s: got %d (%s)", want, r, err);
        cr_assert(strstr(err, want), "error \"%s\" does not contain \"%s\"", err, want);
        catalog_free(&c);
}

static bool streq(const char *a, const char *b) {
        return (!a && !b) || (a && b && !strcmp(a, b));
}

static void gvks_eq(const struct catalog_gvk *a, const struct catalog_gvk *b, size_t n) {
        for (size_t i = 0; i < n; i++)
                cr_assert(streq(a[i].group, b[i].group) && streq(a[i].version, b[i].version) &&
                          streq(a[i].kind, b[i].kind));
}

static void bundles_eq(const struct catalog_bundle *a, const struct catalog_bundle *b) {
        cr_assert(streq(a->name, b->name) && streq(a->package, b->package) && streq(a->image, b->image));
        cr_assert(a->has_version && b->has_version && semver_cmp(&a->version, &b->version) == 0);
        cr_assert_eq(a->n_provides_gvks, b->n_provides_gvks);
        gvks_eq(a->provides_gvks, b->provides_gvks, a->n_provides_gvks);
        cr_assert_eq(a->n_requires_gvks, b->n_requires_gvks);
        gvks_eq(a->requires_gvks, b->requires_gvks, a->n_requires_gvks);
        cr_assert_eq(a->n_requires_packages, b->n_requires_packages);
        for (size_t i = 0; i < a->n_requires_packages; i++)
                cr_assert(streq(a->requires_packages[i].package, b->requires_packages[i].package) &&
                          streq(a->requires_packages[i].range_text, b->requires_packages[i].range_text));
}

static void channels_eq(const struct catalog_channel *a, const struct catalog_channel *b) {
        cr_assert(streq(a->name, b->name) && streq(a->package, b->package));
        cr_assert_eq(a->n_entries, b->n_entries);
        for (size_t i = 0; i < a->n_entries; i++) {
                const struct catalog_entry *x = &a->entries[i], *y = &b->entries[i];
                cr_assert(streq(x->name, y->name) && streq(x->replaces, y->replaces));
                cr_assert(streq(x->skip_range_text, y->skip_range_text) && x->has_skip_range == y->has_skip_range);
                cr_assert_eq(x->n_skips, y->n_skips);
                for (size_t j = 0; j < x->n_skips; j++)
                        cr_assert_str_eq(x->skips[j], y->skips[j]);
        }
}

static void catalogs_eq(const struct catalog *a, const struct catalog *b) {
        cr_assert_eq(a->n_packages, b->n_packages);
        cr_assert_eq(a->n_channels, b->n_channels);
        cr_assert_eq(a->n_bundles, b->n_bundles);
        cr_assert_eq(a->n_ignored, b->n_ignored);
        for (size_t i = 0; i < a->n_packages; i++) {
                cr_assert(streq(a->packages[i].name, b->packages[i].name));
                cr_assert(streq(a->packages[i].default_channel, b->packages[i].default_channel));
                cr_assert(streq(a->packages[i].description, b->packages[i].description));
                cr_assert_eq(a->packages[i].n_channels, b->packages[i].n_channels);
        }
        for (size_t i = 0; i < a->n_channels; i++)
                channels_eq(&a->channels[i], &b->channels[i]);
        for (size_t i = 0; i < a->n_bundles; i++)
                bundles_eq(&a->bundles[i], &b->bundles[i]);
}

/* ---- the model ---------------------------------------------------------- */

Test(catalog, json_and_yaml_give_the_same_model) {
        struct catalog j = { 0 }, y = { 0 };
        char err[ERRLEN];
        parse_ok(&j, "catalog.json", two_json);
        parse_ok(&y, "catalog.yaml", two_yaml);
        cr_assert_eq(catalog_check(&j, err, sizeof err), 0, "%s", err);
        cr_assert_eq(catalog_check(&y, err, sizeof err), 0, "%s", err);
        cr_assert_eq(j.n_packages, 2);
        cr_assert_eq(j.n_channels, 2);
        cr_assert_eq(j.n_bundles, 3);
        cr_assert_eq(j.n_ignored, 2, "olm.bundle.object and olm.deprecations");
        catalogs_eq(&j, &y);
        cr_assert_eq(j.packages[0].n_channels, 1);
        cr_assert_str_eq(j.channels[j.packages[0].channels[0]].name, "alpha");
        cr_assert_str_eq(j.packages[0].description, "a store");
        cr_assert_null(j.packages[1].description);
        cr_assert_eq(j.bundles[0].at.line, 5);
        cr_assert_eq(y.bundles[0].at.line, 17);
        catalog_free(&j);
        catalog_free(&y);
        cr_assert_eq(j.n_bundles, 0);
}

Test(catalog, channel_entries) {
        struct catalog c = { 0 };
        parse_ok(&c, "catalog.json", two_json);
        const struct catalog_channel *ch = &c.channels[0];
        cr_assert_eq(ch->n_entries, 2);
        cr_assert_null(ch->entries[0].replaces);
        cr_assert_eq(ch->entries[0].n_skips, 0);
        cr_assert(!ch->entries[0].has_skip_range);
        const struct catalog_entry *e = &ch->entries[1];
        cr_assert_str_eq(e->replaces, "etcd.v0.9.0");
        cr_assert_eq(e->n_skips, 1);
        cr_assert_str_eq(e->skips[0], "etcd.v0.9.1");
        cr_assert(e->has_skip_range);
        cr_assert_str_eq(e->skip_range_text, ">=0.9.0 <0.9.2");
        struct semver v;
        cr_assert_eq(semver_parse("0.9.1", &v), 0);
        cr_assert(semver_range_match(&e->skip_range, &v));
        cr_assert_eq(semver_parse("0.9.2", &v), 0);
        cr_assert(!semver_range_match(&e->skip_range, &v));
        catalog_free(&c);
}

Test(catalog, required_packages_and_gvks) {
        struct catalog c = { 0 };
        parse_ok(&c, "catalog.yaml", two_yaml);
        const struct catalog_bundle *b = &c.bundles[1];
        cr_assert_str_eq(b->version.text, "0.9.2");
        cr_assert_null(b->image);
        cr_assert_str_eq(c.bundles[0].image, "quay.io/etcd:0.9.0");
        cr_assert_eq(c.bundles[0].n_provides_gvks, 1);
        cr_assert_str_eq(c.bundles[0].provides_gvks[0].kind, "EtcdCluster");
        cr_assert_eq(b->n_requires_packages, 1);
        cr_assert_str_eq(b->requires_packages[0].package, "prom");
        cr_assert_str_eq(b->requires_packages[0].range_text, ">=1.0.0 <2.0.0");
        struct semver v;
        cr_assert_eq(semver_parse("1.5.0", &v), 0);
        cr_assert(semver_range_match(&b->requires_packages[0].range, &v));
        cr_assert_eq(b->n_requires_gvks, 1);
        cr_assert_str_eq(b->requires_gvks[0].group, "monitoring.io");
        cr_assert_str_eq(b->requires_gvks[0].version, "v1");
        cr_assert_str_eq(b->requires_gvks[0].kind, "Prometheus");
        catalog_free(&c);
}

Test(catalog, several_files_into_one_catalog) {
        struct catalog c = { 0 };
        char err[ERRLEN];
        parse_ok(&c, "a.json", "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"s\",\"entries\":[{\"name\":\"p.v1\"}]}");
        parse_ok(&c, "b.yaml", "schema: olm.package\nname: p\ndefaultChannel: s\n");
        parse_ok(&c, "c.yaml", "schema: olm.bundle\npackage: p\nname: p.v1\nproperties:\n"
                               "- {type: olm.package, value: {packageName: p, version: 1.0.0}}\n");
        cr_assert_eq(catalog_check(&c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.n_files, 3);
        cr_assert_str_eq(c.files[c.bundles[0].at.file], "c.yaml");
        catalog_free(&c);
}

/* ---- dependencies.yaml -------------------------------------------------- */

Test(catalog, dependencies_yaml_fills_the_same_fields) {
        static const char deps[] = "dependencies:\n"
                                   "  - type: olm.package\n"
                                   "    packageName: prom\n"
                                   "    version: \">=1.0.0 <2.0.0\"\n"
                                   "  - type: olm.gvk\n"
                                   "    group: monitoring.io\n"
                                   "    version: v1\n"
                                   "    kind: Prometheus\n"
                                   "  - type: olm.label\n"
                                   "    value: {label: x}\n"
                                   "  - type: olm.package\n"
                                   "    value: {packageName: other, version: '1.x'}\n";
        struct catalog c = { 0 };
        char err[ERRLEN];
        parse_ok(&c, "catalog.yaml", two_yaml);
        struct catalog_bundle *from_props = &c.bundles[1];
        struct catalog_bundle b = { 0 };
        cr_assert_eq(catalog_parse_dependencies(deps, strlen(deps), "dependencies.yaml", &b, err, sizeof err), 0, "%s",
                     err);
        cr_assert_eq(b.n_requires_packages, 2);
        cr_assert_str_eq(b.requires_packages[0].package, from_props->requires_packages[0].package);
        cr_assert_str_eq(b.requires_packages[0].range_text, from_props->requires_packages[0].range_text);
        cr_assert_str_eq(b.requires_packages[1].package, "other");
        cr_assert_eq(b.n_requires_gvks, 1);
        gvks_eq(b.requires_gvks, from_props->requires_gvks, 1);
        const char *bad = "dependencies:\n  - type: olm.package\n    name: prom\n    version: '>=1 <'\n";
        cr_assert_eq(catalog_parse_dependencies(bad, strlen(bad), "dependencies.yaml", &b, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "dependencies.yaml:1: dependency olm.package: versionRange \">=1 <\""), "%s", err);
        cr_assert_eq(b.n_requires_packages, 2, "a refused file adds nothing");
        c.bundles[c.n_bundles++] = b; /* three allocated: catalog_free frees it */
        catalog_free(&c);
}

Test(catalog, dependencies_in_a_bundle_blob) {
        struct catalog c = { 0 };
        parse_ok(&c, "c.yaml", "schema: olm.bundle\npackage: p\nname: p.v1\nproperties:\n"
                               "- {type: olm.package, value: {packageName: p, version: 1.0.0}}\n"
                               "dependencies:\n- {type: olm.package, name: q, version: ^1.2.0}\n");
        cr_assert_eq(c.bundles[0].n_requires_packages, 1);
        cr_assert_str_eq(c.bundles[0].requires_packages[0].package, "q");
        catalog_free(&c);
}

/* ---- refusals ----------------------------------------------------------- */

#define BUNDLE(pkg, name, ver)                                                                                 \
        "{\"schema\":\"olm.bundle\",\"package\":\"" pkg "\",\"name\":\"" name "\",\"properties\":[{\"type\":" \
        "\"olm.package\",\"value\":{\"packageName\":\"" pkg "\",\"version\":\"" ver "\"}}]}\n"
#define PACKAGE(name, def) "{\"schema\":\"olm.package\",\"name\":\"" name "\",\"defaultChannel\":\"" def "\"}\n"
#define CHANNEL(pkg, name, entry)                                                                   \
        "{\"schema\":\"olm.channel\",\"package\":\"" pkg "\",\"name\":\"" name "\",\"entries\":[{\"name\":\"" entry \
        "\"}]}\n"

Test(catalog, check_refusals) {
        check_refuses("c.json", PACKAGE("p", "s") CHANNEL("p", "s", "p.v1") BUNDLE("p", "p.v1", "1.0.0") PACKAGE("p", "s"),
                      "c.json:4: olm.package \"p\": duplicate package, also at c.json:1");
        check_refuses("c.json", PACKAGE("p", "s") CHANNEL("p", "s", "p.v1") CHANNEL("p", "s", "p.v1") BUNDLE("p", "p.v1", "1.0.0"),
                      "olm.channel \"s\": duplicate channel of package \"p\"");
        check_refuses("c.json", PACKAGE("p", "s") CHANNEL("p", "s", "p.v1") BUNDLE("p", "p.v1", "1.0.0") BUNDLE("p", "p.v1", "1.0.1"),
                      "c.json:4: olm.bundle \"p.v1\": duplicate bundle, also at c.json:3");
        check_refuses("c.json", PACKAGE("p", "s") CHANNEL("q", "s", "p.v1") BUNDLE("p", "p.v1", "1.0.0"),
                      "c.json:2: olm.channel \"s\": package \"q\" does not exist");
        check_refuses("c.json", PACKAGE("p", "s") CHANNEL("p", "s", "p.v1") BUNDLE("q", "p.v1", "1.0.0"),
                      "c.json:3: olm.bundle \"p.v1\": package \"q\" does not exist");
        check_refuses("c.json", PACKAGE("p", "s") CHANNEL("p", "s", "p.v2") BUNDLE("p", "p.v1", "1.0.0"),
                      "olm.channel \"s\": entry \"p.v2\": no such bundle");
        check_refuses("c.json", PACKAGE("p", "s") PACKAGE("q", "s") CHANNEL("p", "s", "q.v1") CHANNEL("q", "s", "q.v1")
                              BUNDLE("q", "q.v1", "1.0.0"),
                      "entry \"q.v1\": the bundle is of package \"q\", not \"p\"");
        check_refuses("c.json", PACKAGE("p", "stable") CHANNEL("p", "s", "p.v1") BUNDLE("p", "p.v1", "1.0.0"),
                      "c.json:1: olm.package \"p\": defaultChannel \"stable\" is not a channel of the package");
}

Test(catalog, blob_refusals) {
        refuse("catalog.yaml", "schema: olm.bundle\npackage: etcd\nname: etcd.v0.9.2\nproperties:\n"
                               "- {type: olm.package, value: {packageName: etcd, version: 0.9.2}}\n"
                               "- type: olm.package.required\n  value: {packageName: a, versionRange: '>=0.9.0 <'}\n",
               -EINVAL, "catalog.yaml:1: olm.bundle \"etcd.v0.9.2\": property olm.package.required: versionRange \">=0.9.0 <\": ");
        refuse("c.json", BUNDLE("p", "p.v1", "1.0"), -EINVAL,
               "c.json:1: olm.bundle \"p.v1\": property olm.package: version \"1.0\" is not a semantic version");
        refuse("c.json", "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1\",\"properties\":[]}", -EINVAL,
               "olm.bundle \"p.v1\": no olm.package property gives its version");
        refuse("c.json", BUNDLE("p", "p.v1", "1.0.0") "\n\n{\"name\":\"x\"}", -EINVAL, "c.json:4: no schema");
        refuse("c.json", "{\"schema\":\"olm.package\",\"name\":\"\",\"defaultChannel\":\"s\"}", -EINVAL,
               "olm.package: name is empty");
        refuse("c.json", "{\"schema\":\"olm.package\",\"name\":\"p\",\"defaultChannel\":7}", -EINVAL,
               "olm.package \"p\": defaultChannel is not a string");
        refuse("c.json", "{\"schema\":\"olm.channel\",\"package\":\"p\",\"name\":\"s\",\"entries\":[{\"name\":\"a\",\"skipRange\":\"~>1\"}]}",
               -EINVAL, "olm.channel \"s\": entry \"a\": skipRange \"~>1\"");
        refuse("c.yaml", "schema: olm.channel\npackage: p\nname: s\n", -EINVAL, "c.yaml:1: olm.channel \"s\": entries is not a list");
        refuse("c.yaml", "- a\n- b\n", -EINVAL, "c.yaml:1: a blob is not an object");
}

Test(catalog, malformed_json_and_yaml_name_file_and_line) {
        refuse("c.json", PACKAGE("p", "s") "\n{\"schema\": \"olm.package\",\n \"name\": }\n", -EINVAL, "c.json:4: JSON: ");
        refuse("c.json", PACKAGE("p", "s") "{\"schema\": \"olm", -EINVAL, "c.json:2: JSON: the text ends inside a value");
        refuse("c.yaml", "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: [\nname: x\n", -EINVAL, "c.yaml:6: YAML: ");
        refuse("c.yaml", "a: b\n  c: d\n", -EINVAL, "c.yaml:2: YAML: ");
        refuse("c.yaml", "a: &a [*a]\n", -E2BIG, "c.yaml:1: YAML nests deeper than");
}

Test(catalog, unknown_schemas_and_properties_are_counted) {
        struct catalog c = { 0 };
        char err[ERRLEN];
        parse_ok(&c, "c.yaml", "schema: olm.deprecations\n---\nschema: vendor.thing\nx: [1, 2]\n---\n"
                               "schema: olm.bundle\npackage: p\nname: p.v1\nproperties:\n"
                               "- {type: olm.package, value: {packageName: p, version: 1.0.0}}\n"
                               "- {type: olm.csv.metadata, value: {a: {b: [c]}}}\n- {type: olm.maxOpenShiftVersion, value: 4.9}\n");
        cr_assert_eq(c.n_ignored, 4);
        cr_assert_eq(c.n_bundles, 1);
        cr_assert_eq(parse(&c, "d.yaml", "schema: olm.unknown\n---\nschema: [\n", err), -EINVAL);
        cr_assert_eq(c.n_ignored, 4, "a refused file's ignored blobs are not counted");
        catalog_free(&c);
}

/* ---- limits ------------------------------------------------------------- */

Test(catalog, too_many_properties) {
        size_t n = CATALOG_MAX_PROPERTIES + 1, cap = 200 + n * 64;
        char *t = malloc(cap), *p = t;
        p += sprintf(p, "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1\",\"properties\":[");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%s{\"type\":\"x.%zu\",\"value\":1}", i ? "," : "", i);
        sprintf(p, "]}");
        refuse("c.json", t, -E2BIG, "olm.bundle \"p.v1\": more than 100 properties");
        free(t);
}

Test(catalog, too_long_a_name_and_too_big_an_input) {
        char name[CATALOG_MAX_NAME + 2], t[512];
        memset(name, 'a', sizeof name - 1);
        name[sizeof name - 1] = 0;
        snprintf(t, sizeof t, "{\"schema\":\"olm.package\",\"name\":\"%s\",\"defaultChannel\":\"s\"}", name);
        refuse("c.json", t, -E2BIG, "olm.package: name is longer than 253 bytes");
        struct catalog c = { 0 };
        char err[ERRLEN];
        cr_assert_eq(catalog_parse("{}", (size_t) CATALOG_MAX_INPUT + 1, "big.json", &c, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "big.json:1: the file is larger than"), "%s", err);
        catalog_free(&c);
}

Test(catalog, twenty_thousand_bundles) {
        size_t n = 20000, cap = 256 + n * 256;
        char *t = malloc(cap), *p = t;
        p += sprintf(p, PACKAGE("big", "stable") "{\"schema\":\"olm.channel\",\"package\":\"big\",\"name\":\"stable\",\"entries\":[");
        for (size_t i = 0; i < n; i++)
                if (i == 0)
                        p += sprintf(p, "{\"name\":\"big.v0\"}");
                else
                        p += sprintf(p, ",{\"name\":\"big.v%zu\",\"replaces\":\"big.v%zu\"}", i, i - 1);
        p += sprintf(p, "]}\n");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "{\"schema\":\"olm.bundle\",\"package\":\"big\",\"name\":\"big.v%zu\",\"properties\":"
                                "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"big\",\"version\":\"1.%zu.0\"}}]}\n",
                             i, i);
        cr_assert_lt((size_t) (p - t), cap);
        struct catalog c = { 0 };
        char err[ERRLEN];
        cr_assert_eq(catalog_parse(t, (size_t) (p - t), "big.json", &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.n_bundles, n);
        cr_assert_eq(c.channels[0].n_entries, n);
        cr_assert_eq(catalog_check(&c, err, sizeof err), 0, "%s", err);
        catalog_free(&c);
        free(t);
}
