/* Operator catalogs: the same catalog in JSON and YAML gives the same model;
 * channel entries, required packages and GVKs, dependencies.yaml; ignored
 * blobs and properties counted; each refusal of catalog_check with its
 * words; malformed input with file and line; limits; a large catalog. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "testutil.h"

#define ERRLEN 512
/* What the olm.bundle.object of the two catalogs below decodes to. */
#define CONFIGMAP "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"prom-config\"}}"

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
        "  {\"type\":\"olm.bundle.object\",\"value\":{\"data\":\"eyJhcGlWZXJzaW9uIjoidjEiLCJraW5kIjoiQ29uZmlnTWFwIiwibWV0YWRhdGEiOnsibmFtZSI6InByb20tY29uZmlnIn19\"}}]}\n"
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
        "    value: {data: eyJhcGlWZXJzaW9uIjoidjEiLCJraW5kIjoiQ29uZmlnTWFwIiwibWV0YWRhdGEiOnsibmFtZSI6InByb20tY29uZmlnIn19}\n"
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
        cr_assert_eq(a->n_manifests, b->n_manifests);
        for (size_t i = 0; i < a->n_manifests; i++) {
                cr_assert_str_eq(a->manifests[i].name, b->manifests[i].name);
                cr_assert_eq(a->manifests[i].len, b->manifests[i].len);
                cr_assert(!memcmp(a->manifests[i].content, b->manifests[i].content, a->manifests[i].len));
        }
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
        cr_assert_eq(j.n_ignored, 1, "olm.deprecations");
        cr_assert_eq(j.bundles[1].n_manifests, 1, "olm.bundle.object");
        cr_assert_str_eq(j.bundles[1].manifests[0].name, "0-configmap-prom-config.json");
        cr_assert_str_eq(j.bundles[1].manifests[0].content, CONFIGMAP);
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
        refuse("c.yaml", "a: &a [*a]\n", -E2BIG,
               "c.yaml:1: aliases expand past 65536 bytes (the document is 11 bytes): an alias is inside the node it names");
        char deep[512];
        memset(deep, '[', 250);
        memset(deep + 250, ']', 250);
        deep[500] = '\0';
        refuse("c.yaml", deep, -E2BIG, "c.yaml:1: YAML nests deeper than 200");
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

/* ---- bundle objects ------------------------------------------------------ */

/* Standard base64 of n bytes (a test's own, so the parser's is checked
 * against something else). */
static char *b64(const char *in, size_t n) {
        static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned char) in[i] << 16;
                if (i + 1 < n)
                        v |= (unsigned char) in[i + 1] << 8;
                if (i + 2 < n)
                        v |= (unsigned char) in[i + 2];
                *o++ = a[v >> 18 & 63];
                *o++ = a[v >> 12 & 63];
                *o++ = i + 1 < n ? a[v >> 6 & 63] : '=';
                *o++ = i + 2 < n ? a[v & 63] : '=';
        }
        *o = 0;
        return out;
}

/* A bundle blob of package p whose properties end with olm.bundle.object
 * properties of the given texts (NULL-terminated); malloc'd. */
static char *bundle_with_objects(const char *const *texts) {
        size_t cap = 1024;
        for (size_t i = 0; texts[i]; i++)
                cap += strlen(texts[i]) * 2 + 64;
        char *t = malloc(cap), *p = t;
        p += sprintf(p, "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1\",\"properties\":["
                        "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.0\"}}");
        for (size_t i = 0; texts[i]; i++) {
                char *d = b64(texts[i], strlen(texts[i]));
                p += sprintf(p, ",{\"type\":\"olm.bundle.object\",\"value\":{\"data\":\"%s\"}}", d);
                free(d);
        }
        sprintf(p, "]}\n");
        return t;
}

#define CRD_YAML                                                                                            \
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"                \
        "  name: etcdclusters.etcd.database.coreos.com\nspec:\n  group: etcd.database.coreos.com\n"

Test(catalog, bundle_objects_become_manifests_in_order) {
        const char *texts[] = { CONFIGMAP, CRD_YAML,
                                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"A b/C\\u00e9\"}}",
                                NULL };
        char *t = bundle_with_objects(texts);
        struct catalog c = { 0 };
        parse_ok(&c, "c.json", t);
        const struct catalog_bundle *b = &c.bundles[0];
        cr_assert_eq(b->n_manifests, 3);
        cr_assert_str_eq(b->manifests[0].name, "0-configmap-prom-config.json");
        cr_assert_str_eq(b->manifests[1].name, "1-customresourcedefinition-etcdclusters.etcd.database.coreos.com.yaml");
        cr_assert_str_eq(b->manifests[2].name, "2-secret-a-b-c--.json", "lower case, [a-z0-9._-] only");
        cr_assert_str_eq(b->manifests[1].content, CRD_YAML);
        cr_assert_eq(b->manifests[1].len, strlen(CRD_YAML));
        cr_assert_eq(c.n_ignored, 0, "bundle objects are no longer ignored");
        catalog_free(&c);
        free(t);
}

/* A bundle blob with one olm.bundle.object whose data is `data` as given. */
static void refuse_data(const char *data, int r, const char *want) {
        char *t = malloc(strlen(data) + 512);
        sprintf(t, "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1\",\"properties\":["
                   "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"p\",\"version\":\"1.0.0\"}},"
                   "{\"type\":\"olm.bundle.object\",\"value\":{\"data\":%s}}]}", data);
        refuse("c.json", t, r, want);
        free(t);
}

Test(catalog, bundle_object_refusals) {
        refuse_data("\"!!!!\"", -EINVAL, "c.json:1: olm.bundle \"p.v1\": property olm.bundle.object: data is not base64");
        refuse_data("7", -EINVAL, "olm.bundle \"p.v1\": data is not a string");
        refuse_data("\"e30=\"", -EINVAL, "property olm.bundle.object 0: not a manifest: ");
        char two[] = "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\napiVersion: v1\nkind: B\nmetadata: {name: b}\n";
        char *d = b64(two, strlen(two)), q[512];
        snprintf(q, sizeof q, "\"%s\"", d);
        refuse_data(q, -EINVAL, "it holds 2 documents, a bundle object is one");
        free(d);
        d = b64("a\0b", 3);
        snprintf(q, sizeof q, "\"%s\"", d);
        refuse_data(q, -EINVAL, "data decodes to bytes that are not text");
        free(d);
        d = b64("kind: [", 7);
        snprintf(q, sizeof q, "\"%s\"", d);
        refuse_data(q, -EINVAL, "not a manifest: olm.bundle.object.yaml:1: ");
        free(d);
        refuse("c.json", "{\"schema\":\"olm.bundle\",\"package\":\"p\",\"name\":\"p.v1\",\"properties\":["
                         "{\"type\":\"olm.bundle.object\",\"value\":[1]}]}",
               -EINVAL, "property olm.bundle.object: not an object");
        /* Larger than a manifest may be, decoded. */
        size_t n = CATALOG_MAX_MANIFEST + 1;
        char *big = malloc(n + 1);
        memset(big, 'a', n);
        big[n] = 0;
        d = b64(big, n);
        char *quoted = malloc(strlen(d) + 3);
        sprintf(quoted, "\"%s\"", d);
        refuse_data(quoted, -E2BIG, "property olm.bundle.object: a manifest has at most 8388608 bytes");
        free(quoted);
        free(d);
        free(big);
}

Test(catalog, add_manifest_rules) {
        struct catalog_bundle b = { 0 };
        cr_assert_eq(catalog_bundle_add_manifest(&b, "a.yaml", "x", 1), 0);
        cr_assert_eq(catalog_bundle_add_manifest(&b, "a.yaml", "y", 1), -EEXIST);
        cr_assert_eq(catalog_bundle_add_manifest(&b, "a.txt", "y", 1), -EINVAL);
        cr_assert_eq(catalog_bundle_add_manifest(&b, "d/a.yaml", "y", 1), -EINVAL);
        cr_assert_eq(catalog_bundle_add_manifest(&b, ".a.yaml", "y", 1), -EINVAL);
        cr_assert_eq(catalog_bundle_add_manifest(&b, "a\n.yaml", "y", 1), -EINVAL);
        cr_assert_eq(catalog_bundle_add_manifest(&b, "b.json", "y", CATALOG_MAX_MANIFEST + 1), -E2BIG);
        for (size_t i = 1; i < CATALOG_MAX_MANIFESTS; i++) {
                char name[32];
                snprintf(name, sizeof name, "m%zu.yml", i);
                cr_assert_eq(catalog_bundle_add_manifest(&b, name, "", 0), 0);
        }
        cr_assert_eq(catalog_bundle_add_manifest(&b, "one-more.yaml", "", 0), -E2BIG);
        cr_assert_eq(b.n_manifests, CATALOG_MAX_MANIFESTS);
        cr_assert_str_eq(b.manifests[0].content, "x");
        struct catalog c = { .bundles = malloc(sizeof b), .n_bundles = 1 };
        c.bundles[0] = b;
        catalog_free(&c);
}

/* ---- a directory given as files ------------------------------------------- */

static const char dir_catalog[] =
        "schema: olm.package\nname: etcd\ndefaultChannel: alpha\n---\n"
        "schema: olm.channel\npackage: etcd\nname: alpha\nentries:\n- name: etcd.v1\n- {name: etcd.v2, replaces: etcd.v1}\n"
        "---\nschema: olm.bundle\npackage: etcd\nname: etcd.v1\nproperties:\n"
        "- {type: olm.package, value: {packageName: etcd, version: 1.0.0}}\n"
        "---\nschema: olm.bundle\npackage: etcd\nname: etcd.v2\nproperties:\n"
        "- {type: olm.package, value: {packageName: etcd, version: 2.0.0}}\n";
static const char dir_deps[] = "dependencies:\n- {type: olm.gvk, group: g.io, version: v1, kind: K}\n"
                               "- {type: olm.package, packageName: etcd, version: '>=1.0.0'}\n";

#define F(p, c) { p, c, sizeof c - 1 }
static const struct catalog_file dir_files[] = {
        F("catalog/etcd.yaml", dir_catalog),
        F("bundles/etcd.v2/manifests/crd.yaml", CRD_YAML),
        F("bundles/etcd.v2/manifests/a-configmap.json", CONFIGMAP),
        F("bundles/etcd.v2/manifests/notes.txt", "not a manifest, ignored"),
        F("bundles/etcd.v2/metadata/dependencies.yaml", dir_deps),
        F("bundles/etcd.v2/metadata/annotations.yaml", "annotations: {x: y}\n"),
        F("README.md", "# ignored\n"),
        F("extra.json", "{\"schema\":\"vendor.thing\"}"),
};
#define N_DIR_FILES (sizeof dir_files / sizeof *dir_files)

static void load_ok(const struct catalog_file *f, size_t n, struct catalog *c) {
        char err[ERRLEN];
        int r = catalog_load_files(f, n, c, err, sizeof err);
        cr_assert_eq(r, 0, "%d %s", r, err);
}

Test(catalog, load_files_reads_a_directory) {
        struct catalog c;
        load_ok(dir_files, N_DIR_FILES, &c);
        cr_assert_eq(c.n_bundles, 2);
        cr_assert_eq(c.n_ignored, 1, "vendor.thing");
        cr_assert_eq(c.n_files, 2, "the two catalog files");
        const struct catalog_bundle *b = &c.bundles[1];
        cr_assert_str_eq(b->name, "etcd.v2");
        cr_assert_eq(b->n_manifests, 2);
        cr_assert_str_eq(b->manifests[0].name, "a-configmap.json", "in path order");
        cr_assert_str_eq(b->manifests[1].name, "crd.yaml");
        cr_assert_str_eq(b->manifests[1].content, CRD_YAML);
        cr_assert_eq(b->n_requires_gvks, 1);
        cr_assert_str_eq(b->requires_gvks[0].kind, "K");
        cr_assert_eq(b->n_requires_packages, 1);
        cr_assert_eq(c.bundles[0].n_manifests, 0);
        catalog_free(&c);
}

/* Every order of the files gives the same catalog, or the same error. */
static void same_in_any_order(const struct catalog_file *f, size_t n, int want) {
        struct catalog_file *v = malloc(n * sizeof *v);
        char first[ERRLEN] = "", err[ERRLEN];
        struct catalog ref = { 0 };
        uint64_t seed = 42;
        cr_assert_eq(catalog_load_files(f, n, &ref, first, sizeof first), want, "%s", first);
        for (int round = 0; round < 40; round++) {
                memcpy(v, f, n * sizeof *v);
                for (size_t i = n; i > 1; i--) {
                        size_t j = tu_xorshift(&seed) % i;
                        struct catalog_file t = v[i - 1];
                        v[i - 1] = v[j];
                        v[j] = t;
                }
                struct catalog c;
                cr_assert_eq(catalog_load_files(v, n, &c, err, sizeof err), want);
                if (want == 0)
                        catalogs_eq(&ref, &c);
                else
                        cr_assert_str_eq(err, first, "the same error in every order");
                catalog_free(&c);
        }
        catalog_free(&ref);
        free(v);
}

Test(catalog, load_files_does_not_depend_on_order) {
        same_in_any_order(dir_files, N_DIR_FILES, 0);
        struct catalog_file bad[N_DIR_FILES + 2];
        memcpy(bad, dir_files, sizeof dir_files);
        bad[N_DIR_FILES] = (struct catalog_file) F("bundles/zz.v1/manifests/a.yaml", CRD_YAML);
        bad[N_DIR_FILES + 1] = (struct catalog_file) F("bundles/aa.v1/manifests/a.yaml", CRD_YAML);
        same_in_any_order(bad, N_DIR_FILES + 2, -EINVAL);
        /* Two bad paths: the first in path order is named, whatever the order given. */
        bad[N_DIR_FILES] = (struct catalog_file) F("zz/../a.yaml", "a: b");
        bad[N_DIR_FILES + 1] = (struct catalog_file) F("/abs.yaml", "a: b");
        same_in_any_order(bad, N_DIR_FILES + 2, -EINVAL);
}

/* Loading fails with r and words, and leaves nothing. */
static void load_refuses(const struct catalog_file *f, size_t n, int r, const char *want) {
        struct catalog c = { .n_bundles = 99 };
        char err[ERRLEN];
        int got = catalog_load_files(f, n, &c, err, sizeof err);
        cr_assert_eq(got, r, "%s: got %d (%s)", want, got, err);
        cr_assert(strstr(err, want), "error \"%s\" does not contain \"%s\"", err, want);
        cr_assert(!c.n_bundles && !c.bundles && !c.n_files && !c.packages, "nothing is left");
}

/* The directory's files with one more, which must be refused. */
static void one_more_refused(struct catalog_file extra, int r, const char *want) {
        struct catalog_file v[N_DIR_FILES + 1];
        memcpy(v, dir_files, sizeof dir_files);
        v[N_DIR_FILES] = extra;
        load_refuses(v, N_DIR_FILES + 1, r, want);
}

Test(catalog, load_files_refuses_hostile_paths) {
        static const char *bad[] = { "/etc/passwd.yaml", "a/../b.yaml", "../b.yaml", "a//b.yaml", "a/./b.yaml",
                                     "a/b/", "", "a\nb.yaml", "x\x7f.yaml" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                one_more_refused((struct catalog_file) { bad[i], "", 0 }, -EINVAL, "");
        one_more_refused((struct catalog_file) { "/abs.yaml", "", 0 }, -EINVAL, "/abs.yaml: the path is absolute");
        one_more_refused((struct catalog_file) { "a/../b.yaml", "", 0 }, -EINVAL, "a \".\" or \"..\" component");
        one_more_refused((struct catalog_file) { NULL, "", 0 }, -EINVAL, "an empty path");
        char long_path[CATALOG_MAX_PATH + 2], long_part[CATALOG_MAX_PATH_PART + 8], deep[256] = "";
        memset(long_path, 'a', sizeof long_path - 1);
        long_path[sizeof long_path - 1] = 0;
        one_more_refused((struct catalog_file) { long_path, "", 0 }, -EINVAL, "a path has at most 1024 bytes");
        memset(long_part, 'b', sizeof long_part - 1);
        long_part[sizeof long_part - 1] = 0;
        one_more_refused((struct catalog_file) { long_part, "", 0 }, -EINVAL, "a component is longer than 255");
        for (int i = 0; i <= CATALOG_MAX_DEPTH; i++)
                strcat(deep, i ? "/d" : "d");
        one_more_refused((struct catalog_file) { deep, "", 0 }, -EINVAL, "more than 32 components");
        one_more_refused((struct catalog_file) F("README.md", "again"), -EINVAL, "README.md: the path is given twice");
        struct catalog c;
        char err[ERRLEN];
        cr_assert_eq(catalog_load_files(dir_files, CATALOG_MAX_FILES + 1, &c, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "a catalog has at most 100000 files"), "%s", err);
        cr_assert_eq(catalog_path_check("bundles/x/manifests/a.yaml", NULL, 0), 0);
        cr_assert_eq(catalog_path_check("..a/b..", NULL, 0), 0, "dots inside a name are fine");
}

Test(catalog, load_files_refuses_bad_bundle_directories) {
        one_more_refused((struct catalog_file) F("bundles/nope.v1/manifests/a.yaml", CRD_YAML), -EINVAL,
                         "bundles/nope.v1/manifests/a.yaml: olm.bundle \"nope.v1\": no olm.bundle blob of the "
                         "catalog declares this bundle");
        one_more_refused((struct catalog_file) F("bundles/nope.v1/metadata/dependencies.yaml", dir_deps), -EINVAL,
                         "bundles/nope.v1/metadata/dependencies.yaml: olm.bundle \"nope.v1\": no olm.bundle blob");
        one_more_refused((struct catalog_file) F("bundles/etcd.v1/manifests/sub/a.yaml", CRD_YAML), -EINVAL,
                         "bundles/etcd.v1/manifests/sub/a.yaml: olm.bundle \"etcd.v1\": manifests are files right "
                         "under manifests/");
        one_more_refused((struct catalog_file) F("bundles/etcd.v1/manifests/bad.yaml",
                                                 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: x\n"),
                         -EINVAL, "bundles/etcd.v1/manifests/bad.yaml:1: olm.bundle \"etcd.v1\": missing metadata.name");
        one_more_refused((struct catalog_file) F("bundles/etcd.v1/manifests/empty.yaml", "# nothing\n"), -EINVAL,
                         "bundles/etcd.v1/manifests/empty.yaml: olm.bundle \"etcd.v1\": the file holds no Kubernetes");
        one_more_refused((struct catalog_file) F("bundles/etcd.v1/metadata/dependencies.yaml",
                                                 "dependencies:\n- type: olm.package\n  packageName: x\n  version: '>>1'\n"),
                         -EINVAL, "bundles/etcd.v1/metadata/dependencies.yaml:1: olm.bundle \"etcd.v1\": dependency "
                                  "olm.package: versionRange \">>1\"");
        one_more_refused((struct catalog_file) F("more/broken.json", "{\"schema\":\"olm.package\",\n\"name\": }"),
                         -EINVAL, "more/broken.json:2: JSON: ");
        one_more_refused((struct catalog_file) F("more/dangling.yaml",
                                                 "schema: olm.channel\npackage: etcd\nname: beta\nentries: [{name: x.v9}]\n"),
                         -EINVAL, "more/dangling.yaml:1: olm.channel \"beta\": entry \"x.v9\": no such bundle");
        /* Manifests of a bundle and its bundle objects share names: a clash is refused. */
        char *blob = bundle_with_objects((const char *[]) { CONFIGMAP, NULL });
        struct catalog_file v[] = {
                F("p.yaml", "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\npackage: p\n"
                            "name: s\nentries: [{name: p.v1}]\n"),
                { "p-bundle.json", blob, strlen(blob) },
                F("bundles/p.v1/manifests/0-configmap-prom-config.json", CONFIGMAP),
        };
        load_refuses(v, 3, -EINVAL, "bundles/p.v1/manifests/0-configmap-prom-config.json: olm.bundle \"p.v1\": a "
                                    "manifest of the bundle already has this name");
        struct catalog c;
        load_ok(v, 2, &c);
        cr_assert_eq(c.bundles[0].n_manifests, 1);
        catalog_free(&c);
        free(blob);
}

/* ---- a directory from disk ------------------------------------------------ */

static const struct catalog_file *find_file(const struct catalog_file *v, size_t n, const char *path) {
        for (size_t i = 0; i < n; i++)
                if (!strcmp(v[i].path, path))
                        return &v[i];
        return NULL;
}

/* tmp/cat: the directory files of dir_files, a link inside, a hidden file
 * and folder, a file of another kind; tmp/outside.yaml next to it. */
static char *make_tree(void) {
        char *tmp = tu_mkdtemp(), root[4200];
        snprintf(root, sizeof root, "%s/cat", tmp);
        for (size_t i = 0; i < N_DIR_FILES; i++)
                cr_assert_eq(tu_write_file(root, dir_files[i].path, dir_files[i].content), 0);
        cr_assert_eq(tu_write_file(root, ".hidden.yaml", "not: read"), 0);
        cr_assert_eq(tu_write_file(root, ".git/config.yaml", "not: read"), 0);
        cr_assert_eq(tu_write_file(root, "bin/tool", "\x7f" "ELF\x01"), 0);
        cr_assert_eq(tu_symlink(root, "link.yaml", "catalog/etcd.yaml"), 0);
        cr_assert_eq(tu_write_file(tmp, "outside.yaml", "secret: x"), 0);
        return tmp;
}

Test(catalog, read_dir_reads_the_tree_sorted) {
        char *tmp = make_tree(), root[4200], err[ERRLEN];
        snprintf(root, sizeof root, "%s/cat", tmp);
        struct catalog_file *v;
        size_t n;
        cr_assert_eq(catalog_read_dir(root, &v, &n, err, sizeof err), 0, "%s", err);
        cr_assert_eq(n, 7, "the .json, .yaml and .yml files and the link; nothing hidden");
        for (size_t i = 1; i < n; i++)
                cr_assert_lt(strcmp(v[i - 1].path, v[i].path), 0, "sorted by path");
        const struct catalog_file *l = find_file(v, n, "link.yaml");
        cr_assert_not_null(l, "a link inside the tree is followed");
        cr_assert_eq(l->len, strlen(dir_catalog));
        cr_assert_not_null(find_file(v, n, "bundles/etcd.v2/metadata/dependencies.yaml"));
        cr_assert_null(find_file(v, n, "README.md"));
        cr_assert_null(find_file(v, n, ".hidden.yaml"));
        /* What it read loads (the link duplicates the catalog: refused by catalog_check). */
        struct catalog c;
        cr_assert_eq(catalog_load_files(v, n, &c, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "duplicate"), "%s", err);
        catalog_files_free(v, n);
        char one[4300];
        snprintf(one, sizeof one, "%s/catalog/etcd.yaml", root);
        cr_assert_eq(catalog_read_dir(one, &v, &n, err, sizeof err), 0, "%s", err);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(v[0].path, "etcd.yaml", "a single file is named by its base name");
        cr_assert_eq(v[0].len, strlen(dir_catalog));
        catalog_files_free(v, n);
        tu_rm_rf(tmp);
        free(tmp);
}

/* catalog_read_dir(tmp/cat) after `change` refuses with want. */
static void read_refuses(const char *tmp, const char *path, int r, const char *want) {
        char err[ERRLEN];
        struct catalog_file *v = (struct catalog_file *) 1;
        size_t n = 7;
        int got = catalog_read_dir(path, &v, &n, err, sizeof err);
        cr_assert_eq(got, r, "%s: %d %s", want, got, err);
        cr_assert(strstr(err, want), "error \"%s\" does not contain \"%s\"", err, want);
        cr_assert(!v && !n);
        (void) tmp;
}

Test(catalog, read_dir_refusals) {
        char *tmp = make_tree(), root[4200], p[4400];
        snprintf(root, sizeof root, "%s/cat", tmp);
        cr_assert_eq(tu_symlink(root, "out.yaml", "../outside.yaml"), 0);
        read_refuses(tmp, root, -EACCES, "out.yaml leads out of the catalog directory");
        snprintf(p, sizeof p, "%s/out.yaml", root);
        unlink(p);
        cr_assert_eq(tu_symlink(root, "again", "bundles"), 0);
        read_refuses(tmp, root, -EINVAL, "again is a link to a directory: not followed");
        snprintf(p, sizeof p, "%s/again", root);
        unlink(p);
        snprintf(p, sizeof p, "%s/fifo.yaml", root);
        cr_assert_eq(mkfifo(p, 0600), 0);
        read_refuses(tmp, root, -EINVAL, "fifo.yaml is not a regular file");
        unlink(p);
        cr_assert_eq(tu_write_bin(root, "nul.json", "{\0}", 3), 0);
        read_refuses(tmp, root, -EINVAL, "nul.json is not text (it holds a NUL byte)");
        snprintf(p, sizeof p, "%s/nul.json", root);
        unlink(p);
        snprintf(p, sizeof p, "%s/big.yaml", root);
        int fd = open(p, O_WRONLY | O_CREAT, 0600);
        cr_assert(fd >= 0 && ftruncate(fd, (off_t) CATALOG_MAX_INPUT + 1) == 0);
        close(fd);
        read_refuses(tmp, root, -E2BIG, "big.yaml is larger than 67108864 bytes");
        unlink(p);
        snprintf(p, sizeof p, "%s/bin/tool", root);
        read_refuses(tmp, p, -EINVAL, "a catalog file is named *.json, *.yaml or *.yml");
        snprintf(p, sizeof p, "%s/nonexistent", root);
        read_refuses(tmp, p, -ENOENT, "nonexistent");
        read_refuses(tmp, "/dev/null", -EINVAL, "neither a directory nor a regular file");
        char deep[4200];
        snprintf(deep, sizeof deep, "%s/deep", tmp);
        char rel[256] = "";
        for (int i = 0; i < CATALOG_MAX_DEPTH; i++)
                strcat(rel, "d/");
        strcat(rel, "x.yaml");
        cr_assert_eq(tu_write_file(deep, rel, "a: b"), 0);
        read_refuses(tmp, deep, -E2BIG, "levels deep");
        tu_rm_rf(tmp);
        free(tmp);
}

/* ---- the canonical form ---------------------------------------------------- */

Test(catalog, canonical_files_round_trip_in_path_order) {
        struct catalog_file a[] = { F("z.yaml", "b: \"\\u00e9\"\n"), F("a/b.json", "{\"x\":\"\\n\"}"),
                                    F("m.yml", "\t\x01 ctl") };
        struct catalog_file b[] = { a[2], a[0], a[1] };
        char *x, *y;
        size_t xl, yl;
        cr_assert_eq(catalog_files_to_canonical(a, 3, &x, &xl), 0);
        cr_assert_eq(catalog_files_to_canonical(b, 3, &y, &yl), 0);
        cr_assert_str_eq(x, y, "the order given does not matter");
        cr_assert_eq(xl, strlen(x));
        cr_assert(!strncmp(x, "[{\"content\":\"{\\\"x\\\":\\\"\\\\n\\\"}\",\"path\":\"a/b.json\"}", 45), "%s", x);
        struct catalog_file *v;
        size_t n;
        cr_assert_eq(catalog_files_from_canonical(x, xl, &v, &n), 0);
        cr_assert_eq(n, 3);
        cr_assert_str_eq(v[0].path, "a/b.json");
        cr_assert_str_eq(v[1].path, "m.yml");
        cr_assert_eq(v[1].len, strlen("\t\x01 ctl"));
        cr_assert_str_eq(v[1].content, "\t\x01 ctl");
        cr_assert_str_eq(v[2].content, "b: \"\\u00e9\"\n");
        catalog_files_free(v, n);
        free(x);
        free(y);
        struct catalog_file latin1[] = { F("a.yaml", "caf\xe9") };
        cr_assert_eq(catalog_files_to_canonical(latin1, 1, &x, &xl), -EINVAL, "not UTF-8");
        cr_assert_null(x);
        static const char *shapes[] = { "{}", "[1]", "[{\"path\":\"a\"}]", "[{\"path\":1,\"content\":\"\"}]",
                                        "[{\"path\":\"a\\u0000b\",\"content\":\"\"}]", "[", "" };
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
                v = (struct catalog_file *) 1;
                cr_assert_eq(catalog_files_from_canonical(shapes[i], strlen(shapes[i]), &v, &n), -EINVAL, "%s",
                             shapes[i]);
                cr_assert_null(v);
        }
}

/* ---- the fixture catalogs (tests/fixtures/catalogs/README.md) ---------------- */

static void load_fixture(const char *name, struct catalog *c, size_t *n_files) {
        char path[4096], err[ERRLEN];
        struct catalog_file *v;
        snprintf(path, sizeof path, "%s/catalogs/%s", MUSTER_FIXTURES_DIR, name);
        cr_assert_eq(catalog_read_dir(path, &v, n_files, err, sizeof err), 0, "%s", err);
        int r = catalog_load_files(v, *n_files, c, err, sizeof err);
        cr_assert_eq(r, 0, "%s: %s", name, err);
        catalog_files_free(v, *n_files);
}

static const struct catalog_bundle *bundle_named(const struct catalog *c, const char *name) {
        for (size_t i = 0; i < c->n_bundles; i++)
                if (!strcmp(c->bundles[i].name, name))
                        return &c->bundles[i];
        cr_assert_fail("no bundle %s", name);
        return NULL;
}

Test(catalog, the_fixture_catalogs_load_as_their_readme_says) {
        struct catalog c;
        size_t files, manifests = 0;
        load_fixture("community", &c, &files);
        cr_assert_eq(files, 24);
        cr_assert_eq(c.n_packages, 4);
        cr_assert_eq(c.n_channels, 4);
        cr_assert_eq(c.n_bundles, 10);
        cr_assert_eq(c.n_ignored, 1, "vendor.example.audit");
        for (size_t i = 0; i < c.n_bundles; i++)
                manifests += c.bundles[i].n_manifests;
        cr_assert_eq(manifests, 20);
        const struct catalog_bundle *b = bundle_named(&c, "dbop.v1.1.0");
        cr_assert_eq(b->n_requires_gvks, 1, "from metadata/dependencies.yaml");
        cr_assert_str_eq(b->requires_gvks[0].kind, "EtcdCluster");
        b = bundle_named(&c, "dbop.v1.0.0");
        cr_assert_eq(b->n_requires_packages, 1);
        cr_assert_str_eq(b->requires_packages[0].range_text, ">=0.9.0 <0.10.0");
        b = bundle_named(&c, "myapp.v1.1.0");
        cr_assert_eq(b->n_manifests, 2);
        cr_assert_str_eq(b->manifests[0].name, "0-serviceaccount-myapp-operator.yaml", "the object first");
        cr_assert_str_eq(b->manifests[1].name, "myapp.v1.1.0.clusterserviceversion.yaml");
        b = bundle_named(&c, "etcdoperator.v0.9.4");
        cr_assert_str_eq(b->manifests[0].name, "0-configmap-etcd-operator-defaults.json");
        cr_assert_eq(b->n_provides_gvks, 1);
        catalog_free(&c);
        load_fixture("redhat", &c, &files);
        cr_assert_eq(files, 3);
        cr_assert_eq(c.n_bundles, 1);
        cr_assert_str_eq(c.bundles[0].name, "etcdoperator.v0.9.2");
        cr_assert_eq(c.bundles[0].n_manifests, 2);
        catalog_free(&c);
}
