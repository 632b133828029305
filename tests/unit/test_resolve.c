/* Operator resolution on libsolv (common/resolve.c): every rule of the
 * encoding alone on small catalogs, the seed's user stories across two
 * catalogs, conflicts and unsatisfiable ranges explained with ways out, a
 * cycle, pre-release order, upgrades along the replaces graph, pruning and
 * skip_dependencies, dependency order, determinism and refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "resolve.h"

#define ERRLEN 512

/* A small language for catalogs, one blob a line:
 *   P name defaultChannel
 *   C package channel entry[,entry...]    entry: name or name<replaced
 *   B package name version [+G/V/K]... [>pkg@range]... [^G/V/K]...
 * In a range '_' stands for a space. */
static void append(char **s, size_t *len, const char *add) {
        size_t n = strlen(add);
        *s = realloc(*s, *len + n + 1);
        cr_assert_not_null(*s);
        memcpy(*s + *len, add, n + 1);
        *len += n;
}

static void gvk_json(char *out, size_t n, const char *spec) {
        char g[128], v[64], k[64];
        cr_assert_eq(sscanf(spec, "%127[^/]/%63[^/]/%63s", g, v, k), 3, "gvk %s", spec);
        snprintf(out, n, "{\"group\":\"%s\",\"version\":\"%s\",\"kind\":\"%s\"}", g, v, k);
}

static void bundle_line(char **s, size_t *len, char *line) {
        char buf[1024];
        char *save = NULL, *pkg = strtok_r(line, " ", &save), *name = strtok_r(NULL, " ", &save),
             *ver = strtok_r(NULL, " ", &save);
        snprintf(buf, sizeof(buf),
                 "{\"schema\":\"olm.bundle\",\"package\":\"%s\",\"name\":\"%s\",\"properties\":["
                 "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"%s\",\"version\":\"%s\"}}",
                 pkg, name, pkg, ver);
        append(s, len, buf);
        for (char *t; (t = strtok_r(NULL, " ", &save));) {
                char g[512];
                if (t[0] == '+' || t[0] == '^') {
                        gvk_json(g, sizeof(g), t + 1);
                        snprintf(buf, sizeof(buf), ",{\"type\":\"%s\",\"value\":%s}",
                                 t[0] == '+' ? "olm.gvk" : "olm.gvk.required", g);
                } else {
                        char *at = strchr(t, '@');
                        cr_assert(t[0] == '>' && at, "bad token %s", t);
                        *at = '\0';
                        for (char *u = at + 1; *u; u++)
                                if (*u == '_')
                                        *u = ' ';
                        snprintf(buf, sizeof(buf),
                                 ",{\"type\":\"olm.package.required\",\"value\":{\"packageName\":\"%s\","
                                 "\"versionRange\":\"%s\"}}",
                                 t + 1, at + 1);
                }
                append(s, len, buf);
        }
        append(s, len, "]}\n");
}

static void channel_line(char **s, size_t *len, char *line) {
        char buf[1024], *save = NULL;
        char *pkg = strtok_r(line, " ", &save), *ch = strtok_r(NULL, " ", &save), *list = strtok_r(NULL, " ", &save);
        snprintf(buf, sizeof(buf), "{\"schema\":\"olm.channel\",\"package\":\"%s\",\"name\":\"%s\",\"entries\":[",
                 pkg, ch);
        append(s, len, buf);
        char *s2 = NULL;
        int i = 0;
        for (char *e = strtok_r(list, ",", &s2); e; e = strtok_r(NULL, ",", &s2), i++) {
                char *lt = strchr(e, '<');
                if (lt)
                        *lt = '\0';
                if (lt)
                        snprintf(buf, sizeof(buf), "%s{\"name\":\"%s\",\"replaces\":\"%s\"}", i ? "," : "", e, lt + 1);
                else
                        snprintf(buf, sizeof(buf), "%s{\"name\":\"%s\"}", i ? "," : "", e);
                append(s, len, buf);
        }
        append(s, len, "]}\n");
}

static struct catalog *cat(const char *spec) {
        char *text = NULL, *copy = strdup(spec), *save = NULL;
        size_t len = 0;
        append(&text, &len, "");
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char buf[512];
                if (line[0] == 'P') {
                        char n[128], d[128];
                        cr_assert_eq(sscanf(line + 2, "%127s %127s", n, d), 2);
                        snprintf(buf, sizeof(buf), "{\"schema\":\"olm.package\",\"name\":\"%s\",\"defaultChannel\":\"%s\"}\n",
                                 n, d);
                        append(&text, &len, buf);
                } else if (line[0] == 'C') {
                        channel_line(&text, &len, line + 2);
                } else if (line[0] == 'B') {
                        bundle_line(&text, &len, line + 2);
                }
        }
        struct catalog *c = calloc(1, sizeof(*c));
        char err[ERRLEN];
        cr_assert_eq(catalog_parse(text, len, "test.json", c, err, sizeof(err)), 0, "%s\n%s", err, text);
        cr_assert_eq(catalog_check(c, err, sizeof(err)), 0, "%s", err);
        free(text);
        free(copy);
        return c;
}

static void drop(struct catalog *c) {
        catalog_free(c);
        free(c);
}

/* The plan's steps as "action package version catalog" lines, in order. */
static char *plan_text(const struct resolve_plan *p) {
        char *s = NULL;
        size_t len = 0;
        append(&s, &len, "");
        for (size_t i = 0; i < p->n_steps; i++) {
                char buf[512];
                snprintf(buf, sizeof(buf), "%s %s %s %s\n", resolve_action_to_string(p->steps[i].action),
                         p->steps[i].package, p->steps[i].version, p->steps[i].catalog);
                append(&s, &len, buf);
        }
        return s;
}

static const struct resolve_step *step_of(const struct resolve_plan *p, const char *package) {
        for (size_t i = 0; i < p->n_steps; i++)
                if (strcmp(p->steps[i].package, package) == 0)
                        return &p->steps[i];
        return NULL;
}

static void expect_plan(const struct resolve_request *q, const char *want) {
        struct resolve_plan p;
        char err[ERRLEN];
        cr_assert_eq(resolve(q, &p, err, sizeof(err)), 0, "%s", err);
        cr_assert(p.ok, "unsatisfiable: %s", p.n_problems ? p.problems[0].text : "?");
        char *got = plan_text(&p);
        cr_expect_str_eq(got, want);
        free(got);
        resolve_plan_free(&p);
}

/* All problems' texts and solutions in one string, for matching. */
static char *problems_text(const struct resolve_plan *p) {
        char *s = NULL;
        size_t len = 0;
        append(&s, &len, "");
        for (size_t i = 0; i < p->n_problems; i++) {
                append(&s, &len, p->problems[i].text);
                append(&s, &len, "\n");
                for (size_t j = 0; j < p->problems[i].n_solutions; j++) {
                        append(&s, &len, "  - ");
                        append(&s, &len, p->problems[i].solutions[j]);
                        append(&s, &len, "\n");
                }
        }
        return s;
}

static char *expect_unsat(const struct resolve_request *q) {
        struct resolve_plan p;
        char err[ERRLEN];
        cr_assert_eq(resolve(q, &p, err, sizeof(err)), 0, "%s", err);
        cr_assert_not(p.ok, "expected no plan");
        cr_assert_gt(p.n_problems, 0);
        char *t = problems_text(&p);
        resolve_plan_free(&p);
        return t;
}

#define SUBS(...) ((struct resolve_subscription[]) { __VA_ARGS__ })
#define ONE_CAT(c) .catalogs = ((struct resolve_catalog[]) { { "community", 10, (c) } }), .n_catalogs = 1

static const char etcd_cat[] = "P etcd alpha\n"
                               "C etcd alpha etcd.v0.9.0,etcd.v0.9.2<etcd.v0.9.0,etcd.v0.9.4<etcd.v0.9.2\n"
                               "B etcd etcd.v0.9.0 0.9.0 +etcd.database.coreos.com/v1beta2/EtcdCluster\n"
                               "B etcd etcd.v0.9.2 0.9.2 +etcd.database.coreos.com/v1beta2/EtcdCluster\n"
                               "B etcd etcd.v0.9.4 0.9.4 +etcd.database.coreos.com/v1beta2/EtcdCluster\n";

Test(resolve, newest_version_of_the_default_channel) {
        struct catalog *c = cat(etcd_cat);
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "etcd" }), .n_subscriptions = 1 };
        expect_plan(&q, "install etcd 0.9.4 community\n");
        drop(c);
}

Test(resolve, a_package_range_picks_within_it) {
        char spec[4096];
        snprintf(spec, sizeof(spec), "%sP app stable\nC app stable app.v1\nB app app.v1 1.0.0 >etcd@0.9.0\n", etcd_cat);
        struct catalog *c = cat(spec);
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        expect_plan(&q, "install etcd 0.9.0 community\ninstall app 1.0.0 community\n");
        struct resolve_plan p;
        cr_assert_eq(resolve(&q, &p, NULL, 0), 0);
        const struct resolve_step *e = step_of(&p, "etcd");
        cr_expect(e->dependency);
        cr_expect_eq(e->subscription, 0);
        cr_expect(strstr(e->why, "required by app.v1 (app 1.0.0 from catalog community): package etcd 0.9.0"),
                  "%s", e->why);
        cr_expect_not(step_of(&p, "app")->dependency);
        cr_expect_str_eq(step_of(&p, "app")->why, "subscribed (channel stable)");
        resolve_plan_free(&p);
        drop(c);
}

Test(resolve, dependencies_come_from_the_default_channel) {
        struct catalog *c = cat("P db stable\n"
                                "C db stable db.v1\n"
                                "C db fast db.v1,db.v2<db.v1\n"
                                "B db db.v1 1.0.0\nB db db.v2 2.0.0\n"
                                "P app stable\nC app stable app.v1\nB app app.v1 1.0.0 >db@>=1.0.0\n");
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        expect_plan(&q, "install db 1.0.0 community\ninstall app 1.0.0 community\n");
        /* A subscription pins db to its channel: then db comes from fast. */
        struct resolve_request q2 = { ONE_CAT(c),
                                      .subscriptions = SUBS({ .package = "app" }, { .package = "db", .channel = "fast" }),
                                      .n_subscriptions = 2 };
        expect_plan(&q2, "install db 2.0.0 community\ninstall app 1.0.0 community\n");
        /* db, subscribed to after app that needs it, serves its own
         * subscription (what a cluster's payload records it under). */
        struct resolve_plan p;
        cr_assert_eq(resolve(&q2, &p, NULL, 0), 0);
        cr_expect_eq(step_of(&p, "db")->subscription, 1);
        cr_expect_not(step_of(&p, "db")->dependency);
        cr_expect_eq(step_of(&p, "app")->subscription, 0);
        resolve_plan_free(&p);
        drop(c);
}

Test(resolve, lower_priority_number_wins_then_name_order) {
        struct catalog *community = cat(etcd_cat);
        struct catalog *redhat = cat("P etcd alpha\nC etcd alpha etcd.v0.9.2\n"
                                     "B etcd etcd.v0.9.2 0.9.2 +etcd.database.coreos.com/v1beta2/EtcdCluster\n");
        struct resolve_catalog cats[] = { { "community", 10, community }, { "redhat", 0, redhat } };
        struct resolve_request q = { .catalogs = cats, .n_catalogs = 2, .subscriptions = SUBS({ .package = "etcd" }), .n_subscriptions = 1 };
        expect_plan(&q, "install etcd 0.9.2 redhat\n");
        struct resolve_catalog same[] = { { "zeta", 5, community }, { "alpha", 5, redhat } };
        struct resolve_request q2 = { .catalogs = same, .n_catalogs = 2, .subscriptions = SUBS({ .package = "etcd" }), .n_subscriptions = 1 };
        expect_plan(&q2, "install etcd 0.9.2 alpha\n");
        /* The subscription names a catalog. */
        struct resolve_request q3 = { .catalogs = cats, .n_catalogs = 2, .subscriptions = SUBS({ .package = "etcd", .catalog = "community" }),
                                      .n_subscriptions = 1 };
        expect_plan(&q3, "install etcd 0.9.4 community\n");
        drop(community);
        drop(redhat);
}

Test(resolve, equal_priority_prefers_the_dependents_catalog) {
        struct catalog *alpha = cat("P etcd alpha\nC etcd alpha etcd.v0.9.2\nB etcd etcd.v0.9.2 0.9.2\n");
        struct catalog *zeta = cat("P etcd alpha\nC etcd alpha etcd.v0.9.2\nB etcd etcd.v0.9.2 0.9.2\n"
                                   "P app stable\nC app stable app.v1\nB app app.v1 1.0.0 >etcd@0.9.x\n");
        struct resolve_catalog cats[] = { { "alpha", 5, alpha }, { "zeta", 5, zeta } };
        struct resolve_request q = { .catalogs = cats, .n_catalogs = 2, .subscriptions = SUBS({ .package = "app" }),
                                     .n_subscriptions = 1 };
        expect_plan(&q, "install etcd 0.9.2 zeta\ninstall app 1.0.0 zeta\n");
        /* Asked for directly, etcd comes from the first catalog by name. */
        struct resolve_request q2 = { .catalogs = cats, .n_catalogs = 2, .subscriptions = SUBS({ .package = "etcd" }),
                                      .n_subscriptions = 1 };
        expect_plan(&q2, "install etcd 0.9.2 alpha\n");
        /* A higher priority still comes first. */
        cats[0].priority = 1;
        expect_plan(&q, "install etcd 0.9.2 alpha\ninstall app 1.0.0 zeta\n");
        drop(alpha);
        drop(zeta);
}

Test(resolve, gvk_requirement_installs_its_provider) {
        char spec[4096];
        snprintf(spec, sizeof(spec), "%sP app stable\nC app stable app.v1\n"
                 "B app app.v1 1.0.0 ^etcd.database.coreos.com/v1beta2/EtcdCluster\n", etcd_cat);
        struct catalog *c = cat(spec);
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        expect_plan(&q, "install etcd 0.9.4 community\ninstall app 1.0.0 community\n");
        struct resolve_plan p;
        cr_assert_eq(resolve(&q, &p, NULL, 0), 0);
        cr_expect(strstr(step_of(&p, "etcd")->why, "API etcd.database.coreos.com/v1beta2 EtcdCluster"), "%s",
                  step_of(&p, "etcd")->why);
        resolve_plan_free(&p);
        drop(c);
}

Test(resolve, one_provider_per_gvk_conflict_is_explained) {
        struct catalog *c = cat("P a stable\nC a stable a.v1\nB a a.v1 1.0.0 +x.io/v1/Thing\n"
                                "P b stable\nC b stable b.v1\nB b b.v1 1.0.0 +x.io/v1/Thing\n");
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "a" }, { .package = "b" }),
                                     .n_subscriptions = 2 };
        char *t = expect_unsat(&q);
        cr_expect(strstr(t, "packages a and b both provide API x.io/v1 Thing"), "%s", t);
        cr_expect(strstr(t, "a cluster has one provider of an API"), "%s", t);
        cr_expect(strstr(t, "drop the subscription to a"), "%s", t);
        cr_expect(strstr(t, "drop the subscription to b"), "%s", t);
        free(t);
        drop(c);
}

Test(resolve, a_range_nothing_satisfies_is_explained_with_a_way_out) {
        struct catalog *c = cat("P prometheus beta\n"
                                "C prometheus beta prom.0.26.0,prom.0.27.0<prom.0.26.0\n"
                                "C prometheus alpha prom.0.32.0\n"
                                "B prometheus prom.0.26.0 0.26.0\nB prometheus prom.0.27.0 0.27.0\n"
                                "B prometheus prom.0.32.0 0.32.0\n"
                                "P app stable\nC app stable app.v1\nB app app.v1 1.0.0 >prometheus@>0.27.0\n");
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        char *t = expect_unsat(&q);
        cr_expect(strstr(t, "app.v1 (app 1.0.0 from catalog community) requires package prometheus >0.27.0"), "%s", t);
        cr_expect(strstr(t, "prom.0.32.0 (prometheus 0.32.0 from catalog community) is not allowed: not in channel "
                            "beta, the default one dependencies come from"),
                  "%s", t);
        cr_expect(strstr(t, "allow prometheus 0.32.0 from catalog community"), "%s", t);
        cr_expect(strstr(t, "drop the subscription to app"), "%s", t);
        free(t);
        /* Without 0.32.0 anywhere nothing satisfies it: the versions there are are named. */
        struct catalog *c2 = cat("P prometheus beta\nC prometheus beta prom.0.26.0,prom.0.27.0<prom.0.26.0\n"
                                 "B prometheus prom.0.26.0 0.26.0\nB prometheus prom.0.27.0 0.27.0\n"
                                 "P app stable\nC app stable app.v1\nB app app.v1 1.0.0 >prometheus@>0.27.0\n");
        struct resolve_request q2 = { ONE_CAT(c2), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        t = expect_unsat(&q2);
        cr_expect(strstr(t, "requires package prometheus >0.27.0, which no bundle of any catalog satisfies (the "
                            "catalogs have 0.27.0 from community, 0.26.0 from community)"),
                  "%s", t);
        cr_expect(strstr(t, "drop the subscription to app"), "%s", t);
        free(t);
        drop(c);
        drop(c2);
}

Test(resolve, seed_user_stories_across_two_catalogs) {
        /* A bundle that requires etcd 0.9.0, and one that requires
         * prometheus >0.27.0 plus the EtcdCluster API. */
        struct catalog *community = cat("P etcd alpha\n"
                                        "C etcd alpha etcd.v0.9.0,etcd.v0.9.2<etcd.v0.9.0,etcd.v0.9.4<etcd.v0.9.2\n"
                                        "B etcd etcd.v0.9.0 0.9.0 +etcd.database.coreos.com/v1beta2/EtcdCluster\n"
                                        "B etcd etcd.v0.9.2 0.9.2 +etcd.database.coreos.com/v1beta2/EtcdCluster\n"
                                        "B etcd etcd.v0.9.4 0.9.4 +etcd.database.coreos.com/v1beta2/EtcdCluster\n"
                                        "P prometheus beta\n"
                                        "C prometheus beta prom.0.26.0,prom.0.27.0<prom.0.26.0,prom.0.32.0<prom.0.27.0\n"
                                        "B prometheus prom.0.26.0 0.26.0 +monitoring.coreos.com/v1/Prometheus\n"
                                        "B prometheus prom.0.27.0 0.27.0 +monitoring.coreos.com/v1/Prometheus\n"
                                        "B prometheus prom.0.32.0 0.32.0 +monitoring.coreos.com/v1/Prometheus\n"
                                        "P old stable\nC old stable old.v1\nB old old.v1 1.0.0 >etcd@0.9.0\n"
                                        "P app stable\nC app stable app.v1\n"
                                        "B app app.v1 1.0.0 >prometheus@>0.27.0 "
                                        "^etcd.database.coreos.com/v1beta2/EtcdCluster\n");
        struct catalog *redhat = cat("P etcd alpha\nC etcd alpha etcd.v0.9.2\n"
                                     "B etcd etcd.v0.9.2 0.9.2 +etcd.database.coreos.com/v1beta2/EtcdCluster\n");
        struct resolve_catalog cats[] = { { "community", 10, community }, { "redhat", 0, redhat } };
        struct resolve_request q = { .catalogs = cats, .n_catalogs = 2, .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        expect_plan(&q, "install etcd 0.9.2 redhat\ninstall prometheus 0.32.0 community\ninstall app 1.0.0 community\n");
        /* With the bundle that needs etcd 0.9.0 too, only community's 0.9.0 does for both. */
        struct resolve_request q2 = { .catalogs = cats, .n_catalogs = 2, .subscriptions = SUBS({ .package = "app" }, { .package = "old" }),
                                      .n_subscriptions = 2 };
        expect_plan(&q2, "install etcd 0.9.0 community\ninstall prometheus 0.32.0 community\n"
                         "install app 1.0.0 community\ninstall old 1.0.0 community\n");
        drop(community);
        drop(redhat);
}

Test(resolve, one_bundle_per_package) {
        char spec[4096];
        snprintf(spec, sizeof(spec), "%sP a stable\nC a stable a.v1\nB a a.v1 1.0.0 >etcd@0.9.0\n"
                 "P b stable\nC b stable b.v1\nB b b.v1 1.0.0 >etcd@0.9.4\n", etcd_cat);
        struct catalog *c = cat(spec);
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "a" }, { .package = "b" }),
                                     .n_subscriptions = 2 };
        char *t = expect_unsat(&q);
        cr_expect(strstr(t, "only one bundle of package etcd can be installed"), "%s", t);
        free(t);
        drop(c);
}

Test(resolve, a_cycle_is_installed_in_name_order) {
        struct catalog *c = cat("P a stable\nC a stable a.v1\nB a a.v1 1.0.0 >b@1.x\n"
                                "P b stable\nC b stable b.v1\nB b b.v1 1.0.0 >a@1.x\n");
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "b" }), .n_subscriptions = 1 };
        expect_plan(&q, "install a 1.0.0 community\ninstall b 1.0.0 community\n");
        drop(c);
}

Test(resolve, pre_releases_order_below_their_release) {
        struct catalog *c = cat("P x stable\nC x stable x.a,x.b<x.a,x.r<x.b\n"
                                "B x x.a 1.0.0-alpha\nB x x.b 1.0.0-beta.2\nB x x.r 1.0.0\n"
                                "P y stable\nC y stable y.v1\nB y y.v1 1.0.0 >x@>=1.0.0-alpha_<1.0.0\n");
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "x" }), .n_subscriptions = 1 };
        expect_plan(&q, "install x 1.0.0 community\n");
        struct resolve_request q2 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "y" }), .n_subscriptions = 1 };
        expect_plan(&q2, "install x 1.0.0-beta.2 community\ninstall y 1.0.0 community\n");
        struct resolve_request q3 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "x", .version_range = "<1.0.0-beta" }),
                                      .n_subscriptions = 1 };
        expect_plan(&q3, "install x 1.0.0-alpha community\n");
        drop(c);
}

Test(resolve, installed_is_kept_and_upgrade_follows_the_replaces_chain) {
        struct catalog *c = cat("P etcd alpha\n"
                                "C etcd alpha etcd.v0.9.0,etcd.v0.9.2<etcd.v0.9.0,etcd.v0.9.4<etcd.v0.9.2,etcd.v1.0.0\n"
                                "B etcd etcd.v0.9.0 0.9.0\nB etcd etcd.v0.9.2 0.9.2\nB etcd etcd.v0.9.4 0.9.4\n"
                                "B etcd etcd.v1.0.0 1.0.0\n");
        struct resolve_installed inst[] = { { "community", "etcd", "etcd.v0.9.0", false } };
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "etcd" }), .n_subscriptions = 1,
                                     .installed = inst, .n_installed = 1 };
        expect_plan(&q, "keep etcd 0.9.0 community\n");
        const char *up[] = { "etcd" };
        q.upgrade = up;
        q.n_upgrade = 1;
        /* 1.0.0 replaces nothing: not reachable from 0.9.0. */
        expect_plan(&q, "upgrade etcd 0.9.4 community\n");
        struct resolve_plan p;
        cr_assert_eq(resolve(&q, &p, NULL, 0), 0);
        cr_expect_str_eq(p.steps[0].from_bundle, "etcd.v0.9.0");
        cr_expect(strstr(p.steps[0].why, "upgrade path from etcd.v0.9.0"), "%s", p.steps[0].why);
        resolve_plan_free(&p);
        drop(c);
}

Test(resolve, a_kept_bundle_in_the_way_proposes_an_upgrade) {
        struct catalog *c = cat("P etcd alpha\nC etcd alpha etcd.v0.9.0,etcd.v0.9.4<etcd.v0.9.0\n"
                                "B etcd etcd.v0.9.0 0.9.0\nB etcd etcd.v0.9.4 0.9.4\n"
                                "P app stable\nC app stable app.v1\nB app app.v1 1.0.0 >etcd@>=0.9.4\n");
        struct resolve_installed inst[] = { { "community", "etcd", "etcd.v0.9.0", false } };
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "etcd" }, { .package = "app" }),
                                     .n_subscriptions = 2, .installed = inst, .n_installed = 1 };
        char *t = expect_unsat(&q);
        cr_expect(strstr(t, "etcd.v0.9.0 is installed and no upgrade was asked for"), "%s", t);
        cr_expect(strstr(t, "upgrade etcd to 0.9.4 from catalog community"), "%s", t);
        free(t);
        drop(c);
}

Test(resolve, skip_dependencies_installs_one_alone) {
        struct catalog *c = cat("P app stable\nC app stable app.v1\nB app app.v1 1.0.0 >missing@1.x ^no.io/v1/Nothing\n");
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        free(expect_unsat(&q));
        struct resolve_request q2 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app", .skip_dependencies = true }),
                                      .n_subscriptions = 1 };
        struct resolve_plan p;
        cr_assert_eq(resolve(&q2, &p, NULL, 0), 0);
        cr_assert(p.ok);
        cr_assert_eq(p.n_steps, 1);
        cr_expect(p.steps[0].dependencies_skipped);
        cr_expect(strstr(p.steps[0].why, "installed alone"), "%s", p.steps[0].why);
        resolve_plan_free(&p);
        drop(c);
}

Test(resolve, unneeded_dependencies_are_removable_and_pruned) {
        char spec[4096];
        snprintf(spec, sizeof(spec), "%sP app stable\nC app stable app.v1\nB app app.v1 1.0.0 >etcd@0.9.x\n", etcd_cat);
        struct catalog *c = cat(spec);
        /* app was unsubscribed: it goes; etcd, its dependency, is kept unless pruned. */
        struct resolve_installed inst[] = { { "community", "app", "app.v1", false },
                                            { "community", "etcd", "etcd.v0.9.2", true } };
        struct resolve_request q = { ONE_CAT(c), .installed = inst, .n_installed = 2 };
        expect_plan(&q, "keep etcd 0.9.2 community\nremove app 1.0.0 community\n");
        struct resolve_plan p;
        cr_assert_eq(resolve(&q, &p, NULL, 0), 0);
        cr_expect(step_of(&p, "etcd")->removable);
        cr_expect_str_eq(step_of(&p, "app")->why, "no longer subscribed to");
        resolve_plan_free(&p);
        q.prune = true;
        expect_plan(&q, "remove app 1.0.0 community\nremove etcd 0.9.2 community\n");
        /* Still subscribed: etcd is needed, kept at its version, never removable. */
        struct resolve_request q2 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1,
                                      .installed = inst, .n_installed = 2, .prune = true };
        expect_plan(&q2, "keep etcd 0.9.2 community\nkeep app 1.0.0 community\n");
        drop(c);
}

Test(resolve, dependency_order_puts_a_dependency_first) {
        struct catalog *c = cat("P z stable\nC z stable z.v1\nB z z.v1 1.0.0\n"
                                "P m stable\nC m stable m.v1\nB m m.v1 1.0.0 >z@1.x\n"
                                "P a stable\nC a stable a.v1\nB a a.v1 1.0.0 >m@1.x\n");
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "a" }), .n_subscriptions = 1 };
        expect_plan(&q, "install z 1.0.0 community\ninstall m 1.0.0 community\ninstall a 1.0.0 community\n");
        drop(c);
}

Test(resolve, the_same_request_gives_the_same_plan) {
        char spec[4096];
        snprintf(spec, sizeof(spec), "%sP app stable\nC app stable app.v1\nB app app.v1 1.0.0 >etcd@>=0.9.0\n", etcd_cat);
        struct catalog *c = cat(spec);
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        const char *first = NULL;
        struct json_object *j0 = NULL;
        for (int i = 0; i < 5; i++) {
                struct resolve_plan p;
                struct json_object *j;
                cr_assert_eq(resolve(&q, &p, NULL, 0), 0);
                cr_assert_eq(resolve_plan_to_json(&p, &j), 0);
                const char *s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
                if (!first) {
                        first = s;
                        j0 = j;
                } else {
                        cr_expect_str_eq(s, first);
                        json_object_put(j);
                }
                resolve_plan_free(&p);
        }
        cr_expect(strstr(first, "\"action\":\"install\",\"package\":\"etcd\",\"bundle\":\"etcd.v0.9.4\""), "%s", first);
        json_object_put(j0);
        drop(c);
}

Test(resolve, refusals_name_what_is_wrong) {
        struct catalog *c = cat(etcd_cat);
        char err[ERRLEN];
        struct resolve_plan p;
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "nope" }), .n_subscriptions = 1 };
        cr_expect_eq(resolve(&q, &p, err, sizeof(err)), -ENOENT);
        cr_expect_str_eq(err, "no catalog has package nope");
        struct resolve_request q2 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "etcd", .channel = "beta" }),
                                      .n_subscriptions = 1 };
        cr_expect_eq(resolve(&q2, &p, err, sizeof(err)), -ENOENT);
        cr_expect_str_eq(err, "package etcd has no channel beta in any catalog");
        struct resolve_request q3 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "etcd", .version_range = ">=1.x.y" }),
                                      .n_subscriptions = 1 };
        cr_expect_eq(resolve(&q3, &p, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "version range of etcd"), "%s", err);
        struct resolve_request q4 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "etcd", .catalog = "other" }),
                                      .n_subscriptions = 1 };
        cr_expect_eq(resolve(&q4, &p, err, sizeof(err)), -ENOENT);
        struct resolve_request q5 = { ONE_CAT(c), .subscriptions = SUBS({ .package = "etcd" }, { .package = "etcd" }),
                                      .n_subscriptions = 2 };
        cr_expect_eq(resolve(&q5, &p, err, sizeof(err)), -EINVAL);
        struct resolve_installed inst[] = { { "community", "etcd", "etcd.v9", false } };
        struct resolve_request q6 = { ONE_CAT(c), .installed = inst, .n_installed = 1 };
        cr_expect_eq(resolve(&q6, &p, err, sizeof(err)), -ENOENT);
        drop(c);
}

Test(resolve, nothing_asked_is_an_empty_plan) {
        struct catalog *c = cat(etcd_cat);
        struct resolve_request q = { ONE_CAT(c) };
        expect_plan(&q, "");
        struct resolve_request none = { 0 };
        expect_plan(&none, "");
        drop(c);
}

#include <solv/pool.h>
#include <solv/solver.h>
#include <solv/testcase.h>
#include <solv/transaction.h>

Test(resolve, libsolv_reads_the_written_testcase_and_solves_the_same) {
        char spec[4096];
        snprintf(spec, sizeof(spec), "%sP app stable\nC app stable app.v1\nB app app.v1 1.0.0 >etcd@0.9.0\n", etcd_cat);
        struct catalog *c = cat(spec);
        struct resolve_request q = { ONE_CAT(c), .subscriptions = SUBS({ .package = "app" }), .n_subscriptions = 1 };
        char dir[] = "/tmp/muster-resolve-XXXXXX", err[ERRLEN];
        cr_assert_not_null(mkdtemp(dir));
        char sub[sizeof(dir) + 8];
        snprintf(sub, sizeof(sub), "%s/case", dir);
        cr_assert_eq(resolve_write_testcase(&q, sub, err, sizeof(err)), 0, "%s", err);
        char path[sizeof(sub) + 32];
        snprintf(path, sizeof(path), "%s/testcase.t", sub);
        Pool *pool = pool_create();
        Queue job;
        queue_init(&job);
        Solver *solv = testcase_read(pool, NULL, path, &job, NULL, NULL);
        cr_assert_not_null(solv);
        cr_assert_eq(solver_solve(solv, &job), 0);
        Transaction *t = solver_create_transaction(solv);
        int installs = 0;
        for (int i = 0; i < t->steps.count; i++) {
                Solvable *s = pool_id2solvable(pool, t->steps.elements[i]);
                installs++;
                cr_expect(strcmp(pool_id2str(pool, s->name), "etcd") == 0 || strcmp(pool_id2str(pool, s->name), "app") == 0);
                if (strcmp(pool_id2str(pool, s->name), "etcd") == 0)
                        cr_expect_str_eq(pool_id2str(pool, s->evr), "1"); /* rank 1: 0.9.0 */
        }
        cr_expect_eq(installs, 2);
        transaction_free(t);
        solver_free(solv);
        queue_free(&job);
        pool_free(pool);
        if (getenv("MUSTER_KEEP_TESTCASE"))
                fprintf(stderr, "testcase in %s\n", sub);
        char cmd[sizeof(dir) + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (!getenv("MUSTER_KEEP_TESTCASE"))
                cr_expect_eq(system(cmd), 0);
        drop(c);
}

/* 100,000 bundles (5,000 packages x 20 versions, each package but every
 * tenth requiring the one before it) are resolved, and the answer is the
 * chain a subscription pulls in. Bounded by the suite's timeout, not timed. */
Test(resolve, a_hundred_thousand_bundles_are_answered, .timeout = 300) {
        size_t cap = 64u << 20, len = 0;
        char *t = malloc(cap);
        cr_assert_not_null(t);
        for (int p = 0; p < 5000; p++) {
                len += (size_t) snprintf(t + len, cap - len,
                                         "{\"schema\":\"olm.package\",\"name\":\"p%d\",\"defaultChannel\":\"s\"}\n"
                                         "{\"schema\":\"olm.channel\",\"package\":\"p%d\",\"name\":\"s\",\"entries\":[",
                                         p, p);
                for (int v = 0; v < 20; v++)
                        len += (size_t) snprintf(t + len, cap - len, "%s{\"name\":\"p%d.v%d\"}", v ? "," : "", p, v);
                len += (size_t) snprintf(t + len, cap - len, "]}\n");
                for (int v = 0; v < 20; v++) {
                        len += (size_t) snprintf(t + len, cap - len,
                                                 "{\"schema\":\"olm.bundle\",\"package\":\"p%d\",\"name\":\"p%d.v%d\","
                                                 "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":"
                                                 "\"p%d\",\"version\":\"1.%d.0\"}}",
                                                 p, p, v, p, v);
                        if (p % 10)
                                len += (size_t) snprintf(t + len, cap - len,
                                                         ",{\"type\":\"olm.package.required\",\"value\":{\"packageName\":"
                                                         "\"p%d\",\"versionRange\":\">=1.%d.0\"}}",
                                                         p - 1, v / 2);
                        len += (size_t) snprintf(t + len, cap - len, "]}\n");
                }
                cr_assert_lt(len, cap - 4096);
        }
        struct catalog c = { 0 };
        char err[ERRLEN];
        cr_assert_eq(catalog_parse(t, len, "big.json", &c, err, sizeof err), 0, "%s", err);
        free(t);
        cr_assert_eq(catalog_check(&c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.n_bundles, 100000);
        struct resolve_request q = { ONE_CAT(&c), .subscriptions = SUBS({ .package = "p4999" }), .n_subscriptions = 1 };
        struct resolve_plan p;
        cr_assert_eq(resolve(&q, &p, err, sizeof err), 0, "%s", err);
        cr_assert(p.ok);
        cr_assert_eq(p.n_steps, 10, "p4990 .. p4999");
        cr_expect_str_eq(p.steps[0].package, "p4990");
        cr_expect_str_eq(p.steps[9].package, "p4999");
        cr_expect_str_eq(p.steps[9].version, "1.19.0");
        resolve_plan_free(&p);
        catalog_free(&c);
}
