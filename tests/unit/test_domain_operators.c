/* Operators in the payload (coordinator/domain/operators.c): a plan's bundles
 * as manifests named in dependency order after the release's, the payload's
 * "operators" member and that member read back as the installed set. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "catalog.h"
#include "domain/operators_payload.h"
#include "resolve.h"

static const char fbc[] =
        "{\"schema\":\"olm.package\",\"name\":\"etcd\",\"defaultChannel\":\"alpha\"}\n"
        "{\"schema\":\"olm.channel\",\"package\":\"etcd\",\"name\":\"alpha\",\"entries\":[{\"name\":\"etcd.v0.9.0\"}]}\n"
        "{\"schema\":\"olm.bundle\",\"package\":\"etcd\",\"name\":\"etcd.v0.9.0\",\"properties\":["
        "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"etcd\",\"version\":\"0.9.0\"}}]}\n"
        "{\"schema\":\"olm.package\",\"name\":\"app\",\"defaultChannel\":\"stable\"}\n"
        "{\"schema\":\"olm.channel\",\"package\":\"app\",\"name\":\"stable\",\"entries\":[{\"name\":\"app.v1\"}]}\n"
        "{\"schema\":\"olm.bundle\",\"package\":\"app\",\"name\":\"app.v1\",\"properties\":["
        "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"app\",\"version\":\"1.0.0\"}},"
        "{\"type\":\"olm.package.required\",\"value\":{\"packageName\":\"etcd\",\"versionRange\":\"0.9.x\"}}]}\n";

static const char crd[] = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                          "metadata:\n  name: etcdclusters.etcd.database.coreos.com\n";
static const char two[] = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n---\n"
                          "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-operator\n";

static void load(struct catalog *c) {
        struct catalog_file files[] = {
                { "catalog.json", fbc, sizeof fbc - 1 },
                { "bundles/etcd.v0.9.0/manifests/crd.yaml", crd, sizeof crd - 1 },
                { "bundles/app.v1/manifests/operator.yaml", two, sizeof two - 1 },
        };
        char err[512];
        memset(c, 0, sizeof *c);
        cr_assert_eq(catalog_load_files(files, 3, c, err, sizeof err), 0, "%s", err);
}

static void plan_for(const struct catalog *c, struct resolve_installed *inst, size_t n_inst, bool subscribe,
                     bool prune, struct resolve_plan *p) {
        struct resolve_catalog cats[] = { { "community", 0, c } };
        struct resolve_subscription subs[] = { { .package = "app" } };
        struct resolve_request q = { .catalogs = cats, .n_catalogs = 1, .subscriptions = subs,
                                     .n_subscriptions = subscribe ? 1 : 0, .installed = inst, .n_installed = n_inst,
                                     .prune = prune };
        char err[512];
        cr_assert_eq(resolve(&q, p, err, sizeof err), 0, "%s", err);
        cr_assert(p->ok);
}

Test(operators, manifests_follow_the_dependency_order) {
        struct catalog c;
        struct resolve_plan p;
        struct manifest_list ms = { 0 };
        char err[512];
        load(&c);
        plan_for(&c, NULL, 0, true, false, &p);
        cr_assert_eq(operators_manifests(&p, &ms, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ms.n, 3);
        cr_expect_str_eq(ms.v[0].path, "9000_operators_001_etcd.v0.9.0_crd.yaml");
        cr_expect_str_eq(ms.v[0].kind, "CustomResourceDefinition");
        cr_expect_str_eq(ms.v[1].path, "9000_operators_002_app.v1_operator.0.yaml");
        cr_expect_str_eq(ms.v[2].path, "9000_operators_002_app.v1_operator.1.yaml");
        cr_expect_str_eq(ms.v[2].kind, "Deployment");
        manifest_list_free(&ms);
        resolve_plan_free(&p);
        catalog_free(&c);
}

Test(operators, the_member_reads_back_as_the_installed_set) {
        struct catalog c;
        struct resolve_plan p;
        load(&c);
        plan_for(&c, NULL, 0, true, false, &p);
        json_object *payload = json_object_new_object();
        struct resolve_subscription subs[] = { { .package = "app" } };
        json_object_object_add(payload, "operators", operators_member(&p, subs, 1));
        cr_expect_str_eq(json_object_to_json_string_ext(json_object_object_get(payload, "operators"),
                                                        JSON_C_TO_STRING_PLAIN),
                         "[{\"package\":\"etcd\",\"bundle\":\"etcd.v0.9.0\",\"version\":\"0.9.0\",\"catalog\":"
                         "\"community\",\"channel\":\"alpha\",\"dependency\":true,\"subscription\":\"app\"},{\"package\":"
                         "\"app\",\"bundle\":\"app.v1\",\"version\":\"1.0.0\",\"catalog\":\"community\",\"channel\":"
                         "\"stable\",\"dependency\":false,\"subscription\":\"app\"}]");
        struct resolve_installed *inst;
        size_t n;
        cr_assert_eq(operators_installed(payload, &inst, &n), 0);
        cr_assert_eq(n, 2);
        cr_expect(inst[0].dependency);
        cr_expect_str_eq(inst[1].bundle, "app.v1");
        /* Unsubscribed and pruned: nothing is left, so no manifests. */
        struct resolve_plan p2;
        plan_for(&c, inst, n, false, true, &p2);
        struct manifest_list ms = { 0 };
        cr_assert_eq(operators_manifests(&p2, &ms, NULL, 0), 0);
        cr_expect_eq(ms.n, 0);
        cr_expect_eq(p2.n_steps, 2);
        json_object *m = operators_member(&p2, NULL, 0);
        cr_expect_eq(json_object_array_length(m), 0);
        json_object_put(m);
        free(inst);
        resolve_plan_free(&p2);
        json_object_put(payload);
        resolve_plan_free(&p);
        catalog_free(&c);
}

Test(operators, a_bad_member_is_refused) {
        struct resolve_installed *inst;
        size_t n;
        json_object *none = json_tokener_parse("{}");
        cr_expect_eq(operators_installed(none, &inst, &n), 0);
        cr_expect_eq(n, 0);
        json_object *bad = json_tokener_parse("{\"operators\":[{\"package\":\"a\",\"bundle\":\"b\"}]}");
        cr_expect_eq(operators_installed(bad, &inst, &n), -EINVAL);
        json_object *notlist = json_tokener_parse("{\"operators\":{}}");
        cr_expect_eq(operators_installed(notlist, &inst, &n), -EINVAL);
        json_object_put(none);
        json_object_put(bad);
        json_object_put(notlist);
}
