/* The operator services without a socket (issue 15): a struct svc over a
 * real SQLite file and the fixture catalogs. Subscribing checks names
 * against the catalogs and keeps what does not resolve (phase Failed, the
 * cluster's condition False, its operators-resolvable validation failing);
 * the list tells the bundles each subscription brought in, with why; a
 * preview changes nothing; unsubscribing what is left unresolvable is
 * refused; a catalog a subscription names is not deleted. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/catalogs.h"
#include "crypto.h"
#include "json-cleanup.h"
#include "svc/operators.h"
#include "svc/uninstall.h"
#include "svc/refresh.h"
#include "store/store.h"
#include "storeutil.h"
#include "svc/svc.h"
#include "testutil.h"

static char *dir, *cl;
static struct store *st;
static struct crypto_key *key;
static struct svc sv;
static struct muster_config cfg;

static void setup(void) {
        config_defaults(&cfg);
        tu_svc_open(&sv, &st, &key, &cfg, &dir);
        tu_svc_add_fixture_catalog(&sv, "community", 10);
        tu_svc_add_fixture_catalog(&sv, "redhat", 0);
        cl = tu_store_cluster(st, "alice", "c1");
}

static void teardown(void) {
        free(cl);
        tu_svc_close(&sv, st, key, dir);
}

TestSuite(svc_operators, .init = setup, .fini = teardown);

static int subscribe(const char *pkg, const char *range, json_object **out, char *err) {
        struct op_subscribe in = { .package = pkg, .version_range = range };
        return svc_operators_subscribe(&sv, cl, &in, "alice", out, err, 1024);
}

static const char *jstr(json_object *o, const char *k) {
        return json_object_get_string(json_object_object_get(o, k));
}

Test(svc_operators, subscribe_names_what_the_catalogs_have) {
        char err[1024];
        json_object *o = NULL;
        cr_expect_eq(subscribe("nope", NULL, &o, err), -ENOENT);
        cr_expect_str_eq(err, "no catalog has package nope");
        cr_expect_eq(subscribe("etcd", ">=1.x.y", &o, err), -EINVAL);
        struct op_subscribe ch = { .package = "etcd", .channel = "beta" };
        cr_expect_eq(svc_operators_subscribe(&sv, cl, &ch, "alice", &o, err, sizeof err), -ENOENT);
        cr_expect_eq(svc_operators_subscribe(&sv, "8a6e0804-2bd0-4672-b79d-d97027f9071a", &ch, "alice", &o, err,
                                             sizeof err),
                     -ENOENT);
        cr_assert_eq(subscribe("myapp", NULL, &o, err), 0, "%s", err);
        cr_expect_str_eq(jstr(o, "phase"), "Resolving");
        json_object *b = json_object_object_get(o, "bundles");
        cr_assert_eq(json_object_array_length(b), 4);
        /* etcd comes from redhat (priority 0), before what needs it. */
        cr_expect_str_eq(jstr(json_object_array_get_idx(b, 0), "package"), "etcd");
        cr_expect_str_eq(jstr(json_object_array_get_idx(b, 0), "catalog"), "redhat");
        cr_expect(strstr(jstr(json_object_array_get_idx(b, 0), "why"), "required by dbop"), "%s",
                  jstr(json_object_array_get_idx(b, 0), "why"));
        cr_expect_str_eq(jstr(json_object_array_get_idx(b, 3), "package"), "myapp");
        json_object_put(o);
        cr_expect_eq(subscribe("myapp", NULL, &o, err), -EEXIST);
}

Test(svc_operators, what_does_not_resolve_is_kept_and_explained) {
        char err[1024];
        json_object *o = NULL;
        cr_assert_eq(subscribe("myapp", NULL, &o, err), 0, "%s", err);
        json_object_put(o);
        cr_assert_eq(subscribe("prometheus", "<0.27.0", &o, err), 0, "%s", err);
        cr_expect_str_eq(jstr(o, "phase"), "Failed");
        cr_expect(strstr(jstr(o, "message"), "requires package prometheus >0.27.0"), "%s", jstr(o, "message"));
        cr_expect(strstr(jstr(o, "message"), "Ways out: allow prometheus 0.32.0 from catalog community"), "%s",
                  jstr(o, "message"));
        json_object_put(o);
        cr_assert_eq(svc_operators_list(&sv, cl, &o, err, sizeof err), 0, "%s", err);
        json_object *cond = json_object_object_get(o, "condition");
        cr_expect_str_eq(jstr(cond, "status"), "False");
        cr_expect_str_eq(jstr(cond, "reason"), "ConstraintsNotSatisfiable");
        json_object_put(o);
        /* The cluster's validation and its stored condition say so too. */
        cr_assert_eq(refresh_cluster(&sv, cl, NULL), 0);
        struct cluster c;
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        bool seen = false;
        for (size_t i = 0; i < c.n_validations; i++)
                if (c.validations[i].id == VAL_OPERATORS_RESOLVABLE) {
                        seen = true;
                        cr_expect_eq(c.validations[i].status, VSTATUS_FAILURE);
                }
        cr_expect(seen);
        cr_assert_gt(c.n_conditions, 0);
        cr_expect_str_eq(c.conditions[c.n_conditions - 1].type, "OperatorsResolvable");
        cr_expect_str_eq(c.conditions[c.n_conditions - 1].status, "False");
        cluster_free(&c);
        /* Dropping myapp would leave it resolvable; dropping prometheus too. */
        cr_assert_eq(svc_operators_unsubscribe(&sv, cl, "prometheus", false, "alice", &o, err, sizeof err), 0, "%s", err);
        cr_expect(json_object_get_boolean(json_object_object_get(json_object_object_get(o, "plan"), "ok")));
        json_object_put(o);
        cr_assert_eq(store_cluster_get(st, cl, &c), 0);
        cr_expect_str_eq(c.conditions[c.n_conditions - 1].status, "True", "refreshed after the change");
        cluster_free(&c);
}

Test(svc_operators, a_preview_changes_nothing) {
        char err[1024];
        json_object *o = NULL;
        struct resolve_subscription extra = { .package = "etcd", .version_range = "0.9.0" };
        struct op_options opt = { .extra = &extra, .n_extra = 1 };
        cr_assert_eq(svc_operators_preview(&sv, cl, &opt, &o, err, sizeof err), 0, "%s", err);
        cr_expect(json_object_get_boolean(json_object_object_get(o, "ok")));
        json_object *steps = json_object_object_get(o, "steps");
        cr_assert_eq(json_object_array_length(steps), 1);
        cr_expect_str_eq(jstr(json_object_array_get_idx(steps, 0), "version"), "0.9.0");
        cr_expect_str_eq(jstr(json_object_array_get_idx(steps, 0), "catalog"), "community");
        json_object_put(o);
        struct subscription_record_list l;
        cr_assert_eq(store_subscription_list(st, cl, &l), 0);
        cr_expect_eq(l.n, 0);
        subscription_record_list_free(&l);
        /* Unsubscribing what is not there. */
        cr_expect_eq(svc_operators_unsubscribe(&sv, cl, "etcd", false, "alice", &o, err, sizeof err), -ENOENT);
        /* Upgrading a cluster that is not installed. */
        struct op_options all = { .upgrade_all = true };
        cr_expect_eq(svc_operators_upgrade(&sv, cl, &all, "alice", &o, err, sizeof err), -EBUSY);
}

Test(svc_operators, a_named_catalog_is_not_deleted) {
        char err[1024];
        json_object *o = NULL;
        struct op_subscribe in = { .package = "etcd", .catalog = "redhat" };
        cr_assert_eq(svc_operators_subscribe(&sv, cl, &in, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);
        struct catalog_record rec;
        cr_assert_eq(store_catalog_get_by_name(st, "redhat", &rec), 0);
        cr_expect_eq(svc_catalog_delete(&sv, rec.id, "admin", err, sizeof err), -EBUSY);
        cr_assert_eq(svc_operators_unsubscribe(&sv, cl, "etcd", false, "alice", &o, err, sizeof err), 0, "%s", err);
        json_object_put(o);
        cr_expect_eq(svc_catalog_delete(&sv, rec.id, "admin", err, sizeof err), 0, "%s", err);
        catalog_record_free(&rec);
}
