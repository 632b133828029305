/* Operators (issue 15) the way a user meets them, through the real
 * musterctl:
 *  - offline: `operator resolve --catalog DIR...` on the fixture catalogs
 *    (tests/fixtures/catalogs), a plan in dependency order, and a request
 *    nothing satisfies explained with a way out;
 *  - the API's refusals against the real musterd on loopback: who may
 *    subscribe and who may add catalogs, bad bodies, unknown packages,
 *    duplicates, subscriptions that do not resolve;
 *  - end to end: musterd and three real agents in network namespaces the
 *    test builds (as test_install_e2e.c), installing into folder targets
 *    under the test's temp dir (never a disk). A cluster subscribed to
 *    myapp (myapp -> dbop -> etcd, and prometheus) and to myapp-console
 *    (tests/fixtures/catalogs/partner, which holds myapp at 1.0.x) installs
 *    its release's manifests and the bundles'; unsubscribing the console
 *    leaves myapp 1.0.0 with an upgrade pending, `operator upgrade` moves it
 *    along the replaces chain to 1.1.0 as a new revision the node agents
 *    apply, and `unsubscribe --prune` takes myapp and its dependencies out
 *    of the manifest directories again;
 *  - operand cleanup on uninstall (issue 17), on the same installed cluster
 *    with vault (tests/fixtures/catalogs/lab: two owned kinds a version):
 *    an upgrade that drops a kind keeps cleanup.enabled and deletes
 *    nothing; uninstall without cleanup keeps the operands; with cleanup,
 *    3 managed and 2 found operands leave the directories of the hosts
 *    that apply the cleanup revision while the operator stays, a frozen
 *    agent keeps them pending until the stall is said ([cleanup] timeout 4
 *    s: event, metric, the host named), and once thawed the operator goes
 *    last; an abort mid-way removes the operator at once and deletes
 *    nothing more. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "testutil.h"

#define CATALOGS MUSTER_FIXTURES_DIR "/catalogs"
#define WAIT_MS 90000

/* ---- shared helpers -------------------------------------------------------- */

/* Where the table in `out` has a row whose first two cells are action and
 * pkg: that row's start; NULL if none. */
static const char *row_of(const char *out, const char *action, const char *pkg) {
        for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                char a[64], p[128];
                if (sscanf(l, "%63s %127s", a, p) == 2 && !strcmp(a, action) && !strcmp(p, pkg))
                        return l;
        }
        return NULL;
}

/* ---- offline ---------------------------------------------------------------- */

static char *tmp;

static void offline_up(void) {
        tu_ctl_clean_env();
        setenv("COLUMNS", "80", 1); /* the 80-column layout the suite checks fits */
        tmp = tu_mkdtemp();
        cr_assert_not_null(tmp);
}

static void offline_down(void) {
        tu_rm_rf(tmp);
        free(tmp);
}

TestSuite(operators_offline, .init = offline_up, .fini = offline_down, .timeout = 600);

/* musterctl with no server to talk to: the offline mode needs none (a
 * request would fail to connect). */
#define NO_SERVER "http://127.0.0.1:9"
#define OFFLINE(out, err, ...) \
        tu_ctl(out, err, NO_SERVER, "/nonexistent/token", (const char *const[]) { __VA_ARGS__, NULL })

Test(operators_offline, a_plan_in_dependency_order_across_two_catalogs) {
        char *out, *err;
        cr_assert_eq(OFFLINE(&out, &err, "operator", "resolve", "--catalog", CATALOGS "/redhat", "--catalog",
                             CATALOGS "/community", "myapp"), 0, "%s", err);
        tu_assert_fits(out, NULL);
        cr_assert(!strncmp(out, "ACTION ", 7), "%s", out);
        const char *etcd = row_of(out, "install", "etcd"), *dbop = row_of(out, "install", "dbop"),
                   *prom = row_of(out, "install", "prometheus"), *app = row_of(out, "install", "myapp");
        cr_assert(etcd && dbop && prom && app, "four bundles to install:\n%s", out);
        cr_assert(etcd < dbop && dbop < app && prom < app, "a dependency before what needs it:\n%s", out);
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int) strcspn(etcd, "\n"), etcd);
        cr_assert(strstr(line, " 0.9.2 ") && strstr(line, " redhat "), "etcd from redhat, priority 0: %s", line);
        free(out);
        free(err);

        cr_assert_eq(OFFLINE(&out, &err, "-o", "json", "operator", "resolve", "--catalog", CATALOGS "/redhat",
                             "--catalog", CATALOGS "/community", "myapp"), 0, "%s", err);
        json_object *p = json_tokener_parse(out);
        cr_assert_not_null(p, "%s", out);
        cr_assert(json_object_get_boolean(tu_json_get(p, "ok")));
        json_object *steps = tu_json_get(p, "steps");
        tu_assert_join(steps, "package", "etcd,prometheus,dbop,myapp");
        tu_assert_join(steps, "catalog", "redhat,community,community,community");
        tu_assert_join(steps, "version", "0.9.2,0.32.0,1.1.0,1.1.0");
        tu_assert_join(steps, "dependency", "true,true,true,false");
        cr_assert(strstr(tu_jstr(p, "steps.0.why"), "dbop.v1.1.0"), "why etcd: %s", tu_jstr(p, "steps.0.why"));
        cr_assert_eq(json_object_array_length(tu_json_get(p, "problems")), 0);
        json_object_put(p);
        free(out);
        free(err);
}

/* webapp 2.0.0 requires etcd >=1.0.0; the catalogs have 0.9.x only. */
static const char webapp_catalog[] =
        "{\"schema\":\"olm.package\",\"name\":\"webapp\",\"defaultChannel\":\"stable\"}\n"
        "{\"schema\":\"olm.channel\",\"package\":\"webapp\",\"name\":\"stable\",\"entries\":"
        "[{\"name\":\"webapp.v2.0.0\"}]}\n"
        "{\"schema\":\"olm.bundle\",\"package\":\"webapp\",\"name\":\"webapp.v2.0.0\",\"properties\":["
        "{\"type\":\"olm.package\",\"value\":{\"packageName\":\"webapp\",\"version\":\"2.0.0\"}},"
        "{\"type\":\"olm.package.required\",\"value\":{\"packageName\":\"etcd\",\"versionRange\":\">=1.0.0\"}}]}\n";

Test(operators_offline, a_range_nothing_satisfies_is_explained_with_a_way_out) {
        cr_assert_eq(tu_write_file(tmp, "web/catalog.json", webapp_catalog), 0);
        char web[4200], *out, *err;
        snprintf(web, sizeof web, "%s/web", tmp);
        cr_assert_eq(OFFLINE(&out, &err, "operator", "resolve", "--catalog", web, "--catalog", CATALOGS "/community",
                             "webapp"), 1, "%s", out);
        cr_assert_str_eq(out, "", "no plan on stdout");
        tu_assert_fits(err, NULL);
        cr_assert(strstr(err, "cannot be resolved") && strstr(err, "Problem 1: "), "%s", err);
        cr_assert(strstr(err, "etcd >=1.0.0") && strstr(err, "webapp"), "names the package and range:\n%s", err);
        cr_assert(strstr(err, "0.9.4"), "says what the catalogs have:\n%s", err);
        cr_assert(strstr(err, "Ways out:\n    - "), "with a way out:\n%s", err);
        free(out);
        free(err);

        cr_assert_eq(OFFLINE(&out, &err, "-o", "json", "operator", "resolve", "--catalog", web, "--catalog",
                             CATALOGS "/community", "webapp"), 1);
        json_object *p = json_tokener_parse(out);
        cr_assert_not_null(p, "%s", out);
        cr_assert_not(json_object_get_boolean(tu_json_get(p, "ok")));
        cr_assert(strstr(tu_jstr(p, "problems.0.text"), "etcd"), "%s", out);
        cr_assert_gt(json_object_array_length(tu_json_get(p, "problems.0.solutions")), 0, "%s", out);
        json_object_put(p);
        free(out);
        free(err);
}

Test(operators_offline, exactly_one_of_cluster_and_catalog) {
        char *out, *err;
        cr_assert_eq(OFFLINE(&out, &err, "operator", "resolve", "myapp"), 2);
        cr_assert(strstr(err, "--cluster") && strstr(err, "--catalog"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(OFFLINE(&out, &err, "operator", "resolve", "--cluster", "c1", "--catalog", CATALOGS "/redhat",
                             "etcd"), 2);
        free(out);
        free(err);
        cr_assert_eq(OFFLINE(&out, &err, "operator", "resolve", "--catalog", CATALOGS "/redhat", "--prune", "etcd"), 2);
        cr_assert(strstr(err, "need --cluster"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(OFFLINE(&out, &err, "operator", "upgrade", "c1", "myapp", "--all"), 2, "packages or --all");
        free(out);
        free(err);
        cr_assert_eq(OFFLINE(&out, &err, "operator", "unsubscribe", "c1"), 2);
        free(out);
        free(err);
}

/* ---- the API's refusals, on loopback ----------------------------------------- */

static struct tu_musterd lo;
static char *lo_dir;

static void api_up(void) {
        tu_ctl_clean_env();
        setenv("COLUMNS", "80", 1); /* the 80-column layout the suite checks fits */
        lo_dir = tu_mkdtemp();
        cr_assert_not_null(lo_dir);
        cr_assert_eq(tu_musterd_start_in(&lo, lo_dir, NULL), 0, "musterd started");
}

static void api_down(void) {
        tu_musterd_free(&lo);
        tu_rm_rf(lo_dir);
        free(lo_dir);
}

TestSuite(operators_api, .init = api_up, .fini = api_down, .timeout = 600);

#define lurl(...) tu_url(lo.base, __VA_ARGS__)
/* musterctl as the admin, or with the token file `tf`. */
#define LCTL(out, err, ...) tu_ctl(out, err, lo.base, lo.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })
#define LCTL_AS(tf, out, err, ...) tu_ctl(out, err, lo.base, tf, (const char *const[]) { __VA_ARGS__, NULL })

static void add_catalog(const char *base, const char *token_file, const char *name, const char *prio) {
        char path[4200], *out = NULL, *err = NULL;
        snprintf(path, sizeof path, CATALOGS "/%s", name);
        const char *args[] = { "catalog", "add", name, path, "--priority", prio, NULL };
        cr_assert_eq(tu_ctl(&out, &err, base, token_file, args), 0, "catalog add %s: %s", name, err);
        free(out);
        free(err);
}

/* A cluster-creator token for owner, and a file holding it (path in tf). */
static char *creator(const char *owner, char tf[4300]) {
        char *t = tu_token(&lo, "cluster-creator", owner);
        char name[64];
        snprintf(name, sizeof name, "%s.token", owner);
        cr_assert_eq(tu_write_file(lo_dir, name, t), 0);
        snprintf(tf, 4300, "%s/%s", lo_dir, name);
        return t;
}

/* POST a subscription body as token: the status; the answer on request. */
static long subscribe(const char *token, const char *cid, const char *body, json_object **out) {
        return tu_http_json("POST", lurl("/api/v2/clusters/%s/subscriptions", cid), token, body, out);
}

/* The validation `id` of a cluster object: its {id, status, message}. */
static json_object *validation_of(json_object *cluster, const char *id) {
        return tu_find_by(tu_json_get(cluster, "validations"), "id", id);
}

/* A creator subscribes its own cluster (not another's), adds no catalog. */
static void creator_subscribes_own_cluster(const char *alice, const char *cid, const char *alice_tf) {
        json_object *s = NULL;
        cr_assert_eq(subscribe(alice, cid, "{\"package\":\"myapp\"}", &s), 201, "%s", json_object_to_json_string(s));
        cr_assert_str_eq(tu_jstr(s, "package"), "myapp");
        cr_assert_str_eq(tu_jstr(s, "cluster_id"), cid);
        cr_assert_str_eq(tu_jstr(s, "owner"), "alice");
        cr_assert_str_eq(tu_jstr(s, "phase"), "Resolving", "not installed yet: %s", json_object_to_json_string(s));
        cr_assert_null(tu_json_get(s, "payload_revision"), "no revision for a cluster not installed");
        json_object *b = tu_json_get(s, "bundles");
        cr_assert_str_eq(tu_jstr(tu_find_by(b, "package", "etcd"), "catalog"), "redhat");
        cr_assert(json_object_get_boolean(tu_json_get(tu_find_by(b, "package", "dbop"), "dependency")));
        cr_assert_not(json_object_get_boolean(tu_json_get(tu_find_by(b, "package", "myapp"), "dependency")));
        cr_assert_not_null(tu_find_by(b, "package", "prometheus"));
        cr_assert(tu_jstr(tu_find_by(b, "package", "dbop"), "why"), "every bundle says why");
        json_object_put(s);
        /* Catalogs are the infra admins'. */
        json_object *e = NULL;
        cr_assert_eq(tu_http_json("POST", lurl("/api/v2/catalogs"), alice,
                                  "{\"name\":\"x\",\"priority\":0,\"files\":[]}", &e), 403);
        json_object_put(e);
        char *out, *err;
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "catalog", "add", "mine", CATALOGS "/redhat", "--priority", "1"), 1);
        cr_assert(strstr(err, "HTTP 403"), "%s", err);
        free(out);
        free(err);
        /* Another creator does not see alice's cluster. */
        char bob_tf[4300];
        char *bob = creator("bob", bob_tf);
        cr_assert_eq(subscribe(bob, cid, "{\"package\":\"etcd\"}", NULL), 404, "not bob's cluster");
        free(bob);
}

/* 400 for a body that is not one, 404 for what no catalog has, 409 twice. */
static void bad_subscriptions_refused(const char *alice, const char *cid) {
        static const struct {
                const char *body;
                long status;
        } cases[] = {
                { "{\"package\":", 400 },
                { "[\"myapp\"]", 400 },
                { "{}", 400 },
                { "{\"package\":7}", 400 },
                { "{\"package\":\"etcd\",\"skip_dependencies\":\"yes\"}", 400 },
                { "{\"package\":\"etcd\",\"version_range\":\">=>1\"}", 400 },
                { "{\"package\":\"nosuchpackage\"}", 404 },
                { "{\"package\":\"etcd\",\"channel\":\"nosuchchannel\"}", 404 },
                { "{\"package\":\"etcd\",\"catalog\":\"nosuchcatalog\"}", 404 },
                { "{\"package\":\"myapp\"}", 409 },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                json_object *e = NULL;
                long st = subscribe(alice, cid, cases[i].body, &e);
                cr_assert_eq(st, cases[i].status, "%s -> %ld: %s", cases[i].body, st, json_object_to_json_string(e));
                cr_assert(tu_jstr(e, "reason"), "a reason for %s", cases[i].body);
                json_object_put(e);
        }
        cr_assert_eq(subscribe(alice, "7c0ffee0-0000-4000-8000-00000000dead", "{\"package\":\"etcd\"}", NULL), 404,
                     "unknown cluster");
        char *out, *err;
        cr_assert_eq(LCTL(&out, &err, "operator", "subscribe", cid, "nosuchpackage"), 3);
        cr_assert(strstr(err, "HTTP 404"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(tu_http_json("DELETE", lurl("/api/v2/clusters/%s/subscriptions/etcd", cid), alice, NULL, NULL),
                     404, "not subscribed");
}

/* What wait_validation waits for: validation `id` with `status`. */
struct validation_want {
        const char *id, *status;
};

static bool validation_is(json_object *cluster, const void *arg) {
        const struct validation_want *w = arg;
        const char *st = tu_validation(cluster, w->id);
        return st && strcmp(st, w->status) == 0;
}

/* Poll the cluster (as the admin of m) until its validation `id` has
 * `status`: that cluster. The test fails after WAIT_MS. */
static json_object *wait_validation(const struct tu_musterd *m, const char *cid, const char *id, const char *status) {
        char what[128];
        snprintf(what, sizeof what, "one whose validation %s is %s", id, status);
        return tu_wait_cluster(m, cid, validation_is, &(struct validation_want) { id, status }, WAIT_MS, what);
}

/* A subscription that does not resolve with the others is kept, Failed;
 * the cluster's condition and validation say why, naming the package. */
static void unresolvable_subscription_explained(const char *alice_tf, const char *cid) {
        char *out, *err;
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "operator", "subscribe", cid, "prometheus", "--version-range",
                             "<0.27.0"), 0, "%s", err);
        cr_assert(strstr(out, "subscribed to prometheus: Failed"), "%s", out);
        cr_assert(strstr(err, "prometheus does not resolve"), "%s", err);
        tu_assert_fits(err, NULL);
        free(out);
        free(err);
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "operator", "list", cid), 0, "%s", err);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "PACKAGE") && strstr(out, "PHASE") && strstr(out, "Failed"), "%s", out);
        cr_assert(strstr(out, "OperatorsResolvable=False (ConstraintsNotSatisfiable): "), "%s", out);
        free(out);
        free(err);
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "-o", "json", "operator", "list", cid), 0, "%s", err);
        json_object *l = json_tokener_parse(out);
        cr_assert_not_null(l, "%s", out);
        tu_assert_join(tu_json_get(l, "items"), "package", "myapp,prometheus");
        cr_assert_str_eq(tu_jstr(tu_find_by(tu_json_get(l, "items"), "package", "prometheus"), "phase"), "Failed");
        cr_assert_str_eq(tu_jstr(l, "condition.type"), "OperatorsResolvable");
        cr_assert_str_eq(tu_jstr(l, "condition.status"), "False");
        cr_assert_str_eq(tu_jstr(l, "condition.reason"), "ConstraintsNotSatisfiable");
        cr_assert(strstr(tu_jstr(l, "condition.message"), "prometheus"), "%s", tu_jstr(l, "condition.message"));
        json_object_put(l);
        free(out);
        free(err);
        json_object *c = wait_validation(&lo, cid, "operators-resolvable", "failure");
        const char *msg = tu_jstr(validation_of(c, "operators-resolvable"), "message");
        cr_assert(msg && strstr(msg, "prometheus"), "the validation names the package: %s", msg);
        json_object_put(c);
        /* Dropped, the rest resolves again. */
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "operator", "unsubscribe", cid, "prometheus"), 0, "%s", err);
        cr_assert(strstr(out, "unsubscribed from prometheus"), "%s", out);
        free(out);
        free(err);
        json_object_put(wait_validation(&lo, cid, "operators-resolvable", "success"));
}

/* The preview adds subscriptions for a moment; nothing changes. */
static void preview_changes_nothing(const char *alice, const char *alice_tf, const char *cid) {
        char *out, *err;
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "operator", "resolve", "--cluster", cid, "myapp-console"), 0, "%s",
                     err);
        tu_assert_fits(out, NULL);
        const char *app = row_of(out, "install", "myapp"), *console = row_of(out, "install", "myapp-console");
        cr_assert(app && console && app < console, "%s", out);
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int) strcspn(app, "\n"), app);
        cr_assert(strstr(line, " 1.0.0 "), "the console holds myapp at 1.0.x:\n%s", out);
        free(out);
        free(err);
        json_object *p = NULL;
        cr_assert_eq(tu_http_json("POST", lurl("/api/v2/clusters/%s/operators/resolve", cid), alice,
                                  "{\"subscriptions\":[{\"package\":\"prometheus\",\"version_range\":\"<0.27.0\"}]}",
                                  &p), 200);
        cr_assert_not(json_object_get_boolean(tu_json_get(p, "ok")), "%s", json_object_to_json_string(p));
        cr_assert(strstr(tu_jstr(p, "problems.0.text"), "prometheus"), "%s", json_object_to_json_string(p));
        cr_assert_gt(json_object_array_length(tu_json_get(p, "problems.0.solutions")), 0);
        json_object_put(p);
        cr_assert_eq(tu_http_json("POST", lurl("/api/v2/clusters/%s/operators/resolve", cid), alice, "{\"upgrade\":5}",
                                  NULL), 400);
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "-o", "json", "operator", "list", cid), 0, "%s", err);
        json_object *l = json_tokener_parse(out);
        tu_assert_join(tu_json_get(l, "items"), "package", "myapp");
        json_object_put(l);
        free(out);
        free(err);
}

Test(operators_api, subscriptions_who_may_bad_input_and_what_does_not_resolve) {
        add_catalog(lo.base, lo.admin_token_path, "redhat", "0");
        add_catalog(lo.base, lo.admin_token_path, "community", "10");
        add_catalog(lo.base, lo.admin_token_path, "partner", "20");
        char alice_tf[4300], *cid = NULL;
        char *alice = creator("alice", alice_tf);
        cr_assert_eq(tu_create_cluster(lo.base, alice, "{\"name\":\"a1\"}", &cid), 201);
        creator_subscribes_own_cluster(alice, cid, alice_tf);
        bad_subscriptions_refused(alice, cid);
        unresolvable_subscription_explained(alice_tf, cid);
        preview_changes_nothing(alice, alice_tf, cid);
        /* A catalog a subscription names stays (one bundles are installed
         * from: operators_e2e). */
        char *out, *err;
        cr_assert_eq(LCTL_AS(alice_tf, &out, &err, "operator", "subscribe", cid, "myapp-console", "--catalog",
                             "partner"), 0, "%s", err);
        free(out);
        free(err);
        cr_assert_eq(LCTL(&out, &err, "catalog", "delete", "partner"), 1);
        cr_assert(strstr(err, "in use") && strstr(err, "HTTP 409"), "%s", err);
        free(out);
        free(err);
        free(cid);
        free(alice);
}

/* ---- end to end: three hosts in network namespaces ---------------------------- */

#define COORD_ADDR "192.0.2.1"
#define BASE "http://" COORD_ADDR ":8090"
#define N_AGENTS 3

static const struct tu_node agents[N_AGENTS] = {
        { "master-0", "7c0ffee0-0000-4000-8000-000000000020", "192.0.2.20", "02:00:00:00:02:20" },
        { "master-1", "7c0ffee0-0000-4000-8000-000000000021", "192.0.2.21", "02:00:00:00:02:21" },
        { "master-2", "7c0ffee0-0000-4000-8000-000000000022", "192.0.2.22", "02:00:00:00:02:22" },
};

static struct tu_fabric fab;
static struct tu_musterd md;
static char *dir;
static int agent_pid[N_AGENTS] = { -1, -1, -1 };
static int sntpd_pid = -1, dnsd_pid = -1;
static char token_file[4400], pub_file[4400], target[N_AGENTS][4200], mdir[N_AGENTS][4300];

#define url(...) tu_url(BASE, __VA_ARGS__)

/* musterctl --server BASE --token-file ADMIN args... (tu_ctl_admin). */
#define CTL(out, ...) tu_ctl_admin(out, &md, (const char *const[]) { __VA_ARGS__, NULL })

/* musterctl -o json ARGS... parsed; exit 0 asserted (tu_ctl_json). */
#define CTL_JSON(...) tu_ctl_json(&md, (const char *const[]) { __VA_ARGS__, NULL })

static json_object *wait_host(const char *ie, int i, tu_host_pred pred, const void *arg, const char *what) {
        return tu_wait_host(&md, ie, agents[i].host_id, pred, arg, WAIT_MS, what);
}

static json_object *wait_cluster(const char *cid, const char *status) {
        return tu_wait_cluster(&md, cid, tu_status_is, status, WAIT_MS, status);
}

static void setup(void) {
        tu_ctl_clean_env();
        setenv("COLUMNS", "80", 1); /* the 80-column layout the suite checks fits */
        dir = tu_e2e_up(&fab, "o", COORD_ADDR, agents, N_AGENTS);
        char rel[4200];
        snprintf(rel, sizeof rel, "%s/state/images/rel-4.15.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        dnsd_pid = tu_e2e_c1_names(dir, COORD_ADDR);
}

static void teardown(void) {
        tu_e2e_down(&fab, &md, agent_pid, N_AGENTS, &sntpd_pid, &dnsd_pid, &dir);
}

TestSuite(operators_e2e, .init = setup, .fini = teardown, .timeout = 600);

/* muster-agent run|node for agent i in its namespace, with the test's
 * /etc/hosts and resolv.conf (tu_e2e_agent). extra: more arguments,
 * NULL-ended. */
static void start_agent(int i, const char *mode, const char *ie, const char *const *extra) {
        const struct tu_agent_run r = { mode, MUSTER_FIXTURES_DIR "/build-machine/root", BASE, ie, token_file, pub_file,
                                        extra };
        agent_pid[i] = tu_e2e_agent(&fab, agents, i, dir, &r);
}

/* musterd in the coordinator's namespace, an infra-env whose hosts check
 * their clocks against an SNTP server beside it (its id), the coordinator's
 * key in pub_file. */
static char *start_with_key(void) {
        cr_assert_eq(tu_musterd_start_at(&md, COORD_ADDR ":8090", dir,
                                         "[agent]\ninstruction_interval = 1\n"
                                         "[cleanup]\ninterval = 1\ntimeout = 4\n"
                                         "[requirements]\ninstall_disk_fsync_ms = 10000\n"
                                         "[requirements.master]\ncpu_cores = 2\n"),
                     0, "musterd did not answer; see %s", md.log);
        char *ie = tu_e2e_infra_env(&md, "rack-9", dir, &sntpd_pid, NULL);
        snprintf(token_file, sizeof token_file, "%s/agent.token", dir);
        snprintf(pub_file, sizeof pub_file, "%s/coordinator.pub", dir);
        cr_assert_eq(CTL(NULL, "signing-key", "-o", pub_file), 0);
        return ie;
}

static char *cluster_id(const char *name) {
        json_object *o = CTL_JSON("cluster", "show", name);
        char *id = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        return id;
}

/* What baseline None + [baremetal, Console] gets from release 4.15.0
 * (tests/fixtures/releases/README.md; test_install_e2e.c checks the bytes). */
#define RELEASE_LISTING                                                                                            \
        "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"                                        \
        "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,"                                                 \
        "0000_30_cluster-baremetal-operator_05_deployment.1.yaml,"                                                 \
        "0000_50_console-operator_07-downloads-deployment.yaml,0000_50_insights-operator_10-prometheus-rule.yaml,"  \
        "0000_80_hosted-only-configmap.yaml,99_site-config.yml"
#define OPS_PREFIX "9000_operators_"

/* Three agents installing into folders, the catalogs, and cluster c1 of
 * 4.15.0 with the three hosts bound, ready: its id. */
static char *ready_cluster(const char *ie) {
        for (int i = 0; i < N_AGENTS; i++) {
                snprintf(target[i], sizeof target[i], "%s/target-%d", dir, i);
                snprintf(mdir[i], sizeof mdir[i], "%.4200s/etc/muster/manifests", target[i]);
                tu_must("mkdir -p %s", target[i]);
                start_agent(i, "run", ie, (const char *const[]) { "--install-target", target[i], NULL });
        }
        char rel[4200];
        snprintf(rel, sizeof rel, "%s/state/images/rel-4.15.0", dir);
        cr_assert_eq(CTL(NULL, "release", "import", rel), 0);
        add_catalog(BASE, md.admin_token_path, "redhat", "0");
        add_catalog(BASE, md.admin_token_path, "community", "10");
        add_catalog(BASE, md.admin_token_path, "partner", "20");
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_status_is, "known-unbound", "known-unbound"));
        cr_assert_eq(CTL(NULL, "cluster", "create", "c1", "--release", "4.15.0", "--base-domain", "example.test",
                         "--machine-cidr", "192.0.2.0/24", "--api-vip", "192.0.2.100", "--ingress-vip", "192.0.2.101",
                         "--baseline", "None", "--enable", "baremetal,Console"), 0);
        char *cid = cluster_id("c1");
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", cid), md.admin_token,
                                  "{\"pull_secret\":\"{\\\"auths\\\":{}}\"}", NULL), 200);
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert_eq(CTL(NULL, "host", "bind", agents[i].host_id, "--cluster", "c1"), 0);
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_status_is, "known", "known in c1"));
        json_object_put(wait_cluster(cid, "ready"));
        return cid;
}

/* The phase of the subscription to pkg, as `operator list -o json` says. */
static char *phase_of(const char *pkg) {
        json_object *l = CTL_JSON("operator", "list", "c1");
        const char *p = tu_jstr(tu_find_by(tu_json_get(l, "items"), "package", pkg), "phase");
        cr_assert_not_null(p, "no subscription to %s: %s", pkg, json_object_to_json_string(l));
        char *s = strdup(p);
        json_object_put(l);
        return s;
}

/* Poll `operator list` until pkg's phase is `phase` (bounded). */
static void wait_phase(const char *pkg, const char *phase) {
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        for (;;) {
                char *p = phase_of(pkg);
                bool yes = strcmp(p, phase) == 0;
                if (!yes && tu_mono_ms() > deadline)
                        cr_assert_fail("%s never %s (it is %s)", pkg, phase, p);
                free(p);
                if (yes)
                        return;
                usleep(300 * 1000);
        }
}

/* Subscribed to myapp and myapp-console, and to prometheus in a range that
 * conflicts with myapp's: the install is refused (409) naming prometheus,
 * until that subscription goes. */
static void subscribe_refused_install(const char *cid) {
        char *out = NULL;
        cr_assert_eq(CTL(&out, "operator", "subscribe", "c1", "myapp"), 0);
        cr_assert(strstr(out, "cluster c1 subscribed to myapp: Resolving\n"), "%s", out);
        cr_assert(strstr(out, "dbop") && strstr(out, "etcd") && strstr(out, "prometheus"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        cr_assert_eq(CTL(NULL, "operator", "subscribe", "c1", "myapp-console", "--catalog", "partner"), 0);
        cr_assert_eq(CTL(NULL, "operator", "subscribe", "c1", "prometheus", "--version-range", "<0.27.0"), 0);
        cr_assert_eq(CTL(&out, "cluster", "install", "c1"), 1, "refused: %s", out);
        free(out);
        json_object *e = NULL;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", cid), md.admin_token, NULL, &e),
                     409);
        cr_assert(strstr(json_object_to_json_string(e), "prometheus"), "the explanation names the package: %s",
                  json_object_to_json_string(e));
        json_object_put(e);
        json_object *c = wait_validation(&md, cid, "operators-resolvable", "failure");
        const char *msg = tu_jstr(validation_of(c, "operators-resolvable"), "message");
        cr_assert(msg && strstr(msg, "prometheus"), "%s", msg);
        json_object_put(c);
        cr_assert_eq(CTL(NULL, "operator", "unsubscribe", "c1", "prometheus"), 0);
        json_object_put(wait_validation(&md, cid, "operators-resolvable", "success"));
        json_object_put(wait_cluster(cid, "ready"));
        json_object *l = CTL_JSON("operator", "list", "c1");
        tu_assert_join(tu_json_get(l, "items"), "package", "myapp,myapp-console");
        tu_assert_join(tu_json_get(l, "items"), "phase", "Resolving,Resolving");
        json_object_put(l);
        /* The preview of what installs: the console holds myapp at 1.0.0. */
        json_object *p = CTL_JSON("operator", "resolve", "--cluster", "c1");
        tu_assert_join(tu_json_get(p, "steps"), "package", "etcd,prometheus,dbop,myapp,myapp-console");
        tu_assert_join(tu_json_get(p, "steps"), "version", "0.9.2,0.32.0,1.1.0,1.0.0,1.0.0");
        tu_assert_join(tu_json_get(p, "steps"), "action", "install,install,install,install,install");
        json_object_put(p);
}

static int strcmp_ptr(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The manifest paths of payload revision rev, sorted and comma-joined. */
static char *payload_paths(const char *cid, int64_t rev) {
        json_object *env = tu_admin_get(&md, "/api/v2/clusters/%s/payload/%lld", cid, (long long) rev);
        json_object *ms = tu_json_get(env, "payload.manifests");
        cr_assert_not_null(ms, "revision %lld has manifests", (long long) rev);
        size_t n = json_object_array_length(ms);
        char **v = calloc(n + 1, sizeof *v);
        for (size_t i = 0; i < n; i++)
                v[i] = strdup(tu_jstr(json_object_array_get_idx(ms, i), "path"));
        qsort(v, n, sizeof *v, strcmp_ptr);
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        for (size_t i = 0; i < n; i++) {
                fprintf(m, "%s%s", i ? "," : "", v[i]);
                free(v[i]);
        }
        fclose(m);
        free(v);
        json_object_put(env);
        return buf;
}

/* A listing split in the release's files and the operators' ("9000_..."). */
static void split_listing(const char *l, char **release, char **ops) {
        size_t rl = 0, ol = 0;
        FILE *r = open_memstream(release, &rl), *o = open_memstream(ops, &ol);
        char *copy = strdup(l);
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                bool op = strncmp(t, OPS_PREFIX, strlen(OPS_PREFIX)) == 0;
                FILE *f = op ? o : r;
                fprintf(f, "%s%s", ftell(f) > 0 ? "," : "", t);
        }
        free(copy);
        fclose(r);
        fclose(o);
}

/* The operators' files of a listing name the bundles `want` (each with
 * `files` manifests) in that order: the bundle of each file, in name
 * order, never goes back. */
static void check_bundle_order(const char *ops, const char *const *want, const int *files) {
        size_t nw = 0;
        while (want[nw])
                nw++;
        int count[16] = { 0 };
        size_t at = 0;
        char *copy = strdup(ops);
        for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                size_t k = nw;
                for (size_t j = 0; j < nw && k == nw; j++) {
                        char needle[256];
                        snprintf(needle, sizeof needle, "_%s_", want[j]);
                        if (strstr(t, needle))
                                k = j;
                }
                cr_assert_lt(k, nw, "%s is the file of no expected bundle (%s)", t, ops);
                cr_assert_geq(k, at, "%s comes after a bundle that needs it: %s", t, ops);
                at = k;
                count[k]++;
        }
        free(copy);
        for (size_t j = 0; j < nw; j++)
                cr_assert_eq(count[j], files[j], "%s has %d manifests, not %d: %s", want[j], count[j], files[j], ops);
}

/* Every host's manifest directory holds exactly revision rev's files: the
 * release's filtered manifests, then the bundles' in dependency order. */
static void check_manifest_dirs(const char *cid, int64_t rev, const char *const *want, const int *files) {
        char *paths = payload_paths(cid, rev), *release = NULL, *ops = NULL;
        split_listing(paths, &release, &ops);
        cr_assert_str_eq(release, RELEASE_LISTING, "revision %lld: the release's manifests first", (long long) rev);
        if (want[0])
                check_bundle_order(ops, want, files);
        else
                cr_assert_str_eq(ops, "", "no operators left in revision %lld", (long long) rev);
        for (int i = 0; i < N_AGENTS; i++) {
                char *l = tu_listing(mdir[i]);
                cr_assert_str_eq(l, paths, "host %d holds exactly revision %lld's manifests", i, (long long) rev);
                free(l);
        }
        free(paths);
        free(release);
        free(ops);
}

/* The one file in host 0's manifest directory whose name ends with
 * `_<bundle>_<manifest>` is that fixture manifest, byte for byte. */
static void check_bundle_bytes(const char *catalog, const char *bundle, const char *manifest) {
        char suffix[512], src[4200];
        snprintf(suffix, sizeof suffix, "_%s_%s", bundle, manifest);
        snprintf(src, sizeof src, CATALOGS "/%s/bundles/%s/manifests/%s", catalog, bundle, manifest);
        char *l = tu_listing(mdir[0]), *found = NULL;
        for (char *save = NULL, *t = strtok_r(l, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (strlen(t) > strlen(suffix) && strcmp(t + strlen(t) - strlen(suffix), suffix) == 0)
                        found = t;
        cr_assert_not_null(found, "a file for %s", suffix);
        char path[8800];
        snprintf(path, sizeof path, "%s/%s", mdir[0], found);
        size_t la, lb;
        char *got = tu_read_file(path, &la), *want = tu_read_file(src, &lb);
        cr_assert(got && want && la == lb && memcmp(got, want, la) == 0, "%s equals %s", path, src);
        free(got);
        free(want);
        free(l);
}

static const char *const rev1_bundles[] = { "etcdoperator.v0.9.2", "prometheusoperator.0.32.0", "dbop.v1.1.0",
                                            "myapp.v1.0.0", "myapp-console.v1.0.0", NULL };
static const int rev1_files[] = { 2, 2, 2, 1, 1 };

/* Install: the run agents write revision 1 (release and bundles) and wait
 * for their installed systems; the subscriptions are Installing. */
static void install_with_operators(const char *ie, const char *cid) {
        char *out = NULL;
        cr_assert_eq(CTL(&out, "cluster", "install", "c1"), 0, "%s", out);
        free(out);
        for (int i = 0; i < N_AGENTS; i++) {
                json_object *h = wait_host(ie, i, tu_written, NULL, "written, waiting for its installed system");
                cr_assert_eq(json_object_get_int64(tu_json_get(h, "applied_revision")), 1);
                json_object_put(h);
        }
        /* Their phase now depends on how "applied by every installed host"
         * reads while none is installed yet; boot_installed_systems checks
         * the end, upgrade_myapp sees Installing for certain. */
        json_object *l = CTL_JSON("operator", "list", "c1");
        cr_log_info("phases once every host wrote revision 1: %s",
                    json_object_to_json_string(tu_json_get(l, "items.0.phase")));
        cr_assert_str_eq(tu_jstr(l, "condition.status"), "True");
        json_object_put(l);
        check_manifest_dirs(cid, 1, rev1_bundles, rev1_files);
        json_object *e = NULL;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/subscriptions", cid), md.admin_token,
                                  "{\"package\":\"etcd\"}", &e), 409, "the install is in progress: %s",
                     json_object_to_json_string(e));
        json_object_put(e);
        /* What is installed from a catalog keeps it. */
        cr_assert_eq(CTL(&out, "catalog", "delete", "redhat"), 1, "%s", out);
        free(out);
        check_bundle_bytes("partner", "myapp-console.v1.0.0", "myapp-console.v1.0.0.clusterserviceversion.yaml");
        check_bundle_bytes("redhat", "etcdoperator.v0.9.2", "etcdclusters.crd.yaml");
        check_bundle_bytes("community", "prometheusoperator.0.32.0", "prometheuses.crd.json");
        /* The payload records what it installed. */
        json_object *env = tu_admin_get(&md, "/api/v2/clusters/%s/payload/1", cid);
        tu_assert_join(tu_json_get(env, "payload.operators"), "bundle",
                    "etcdoperator.v0.9.2,prometheusoperator.0.32.0,dbop.v1.1.0,myapp.v1.0.0,myapp-console.v1.0.0");
        json_object_put(env);
}

/* The installed systems boot: node agents on the manifest directories with
 * the hosts' own tokens; the cluster and its subscriptions are installed.
 * myapp is Installed, not UpgradePending: 1.1.0 is on its channel's upgrade
 * graph, but the console holds it at 1.0.x. */
static void boot_installed_systems(const char *ie, const char *cid) {
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "run agent %s exits cleanly", agents[i].name);
        for (int i = 0; i < N_AGENTS; i++) {
                char conf[4400], name[64];
                snprintf(conf, sizeof conf, "%.4200s/etc/muster/agent.conf", target[i]);
                char *tok = tu_agent_conf_token(conf);
                cr_assert_not_null(tok, "no token in %s", conf);
                snprintf(name, sizeof name, "host-%d.token", i);
                cr_assert_eq(tu_write_file(dir, name, tok), 0);
                free(tok);
                snprintf(token_file, sizeof token_file, "%s/%s", dir, name);
                start_agent(i, "node", ie, (const char *const[]) { "--manifest-dir", mdir[i], NULL });
        }
        json_object_put(wait_cluster(cid, "installed"));
        wait_phase("myapp-console", "Installed");
        wait_phase("myapp", "Installed");
}

static const char *const rev2_bundles[] = { "etcdoperator.v0.9.2", "prometheusoperator.0.32.0", "dbop.v1.1.0",
                                            "myapp.v1.0.0", NULL };
static const int rev2_files[] = { 2, 2, 2, 1 };

/* Dropping the console leaves myapp 1.0.0 installed with 1.1.0 pending. */
static void unsubscribe_console(const char *ie, const char *cid) {
        char *out = NULL;
        cr_assert_eq(CTL(&out, "operator", "unsubscribe", "c1", "myapp-console"), 0);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "cluster c1 unsubscribed from myapp-console\n"), "%s", out);
        cr_assert(row_of(out, "remove", "myapp-console"), "%s", out);
        cr_assert(row_of(out, "keep", "myapp"), "myapp 1.0.0 is kept: %s", out);
        cr_assert(strstr(out, "Payload revision 2 "), "%s", out);
        free(out);
        int64_t rev = 2;
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied revision 2"));
        check_manifest_dirs(cid, 2, rev2_bundles, rev2_files);
        wait_phase("myapp", "UpgradePending");
        cr_assert_eq(CTL(&out, "operator", "list", "c1"), 0);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "UpgradePending") && strstr(out, "1.0.0"), "%s", out);
        free(out);
        /* The preview of the upgrade changes nothing. */
        json_object *p = CTL_JSON("operator", "resolve", "--cluster", "c1", "--upgrade", "myapp");
        json_object *app = tu_find_by(tu_json_get(p, "steps"), "package", "myapp");
        cr_assert_str_eq(tu_jstr(app, "action"), "upgrade", "%s", json_object_to_json_string(p));
        cr_assert_str_eq(tu_jstr(app, "from_version"), "1.0.0");
        cr_assert_str_eq(tu_jstr(app, "version"), "1.1.0");
        cr_assert_str_eq(tu_jstr(tu_find_by(tu_json_get(p, "steps"), "package", "dbop"), "action"), "keep");
        json_object_put(p);
        json_object *c = tu_admin_get(&md, "/api/v2/clusters/%s", cid);
        cr_assert_eq(json_object_get_int64(tu_json_get(c, "payload_revision")), 2, "a preview builds nothing");
        json_object_put(c);
}

static const char *const rev3_bundles[] = { "etcdoperator.v0.9.2", "prometheusoperator.0.32.0", "dbop.v1.1.0",
                                            "myapp.v1.1.0", NULL };
static const int rev3_files[] = { 2, 2, 2, 2 };

/* operator upgrade: myapp 1.0.0 -> 1.1.0 along community's replaces chain,
 * a new revision; Installing while one node agent (frozen) has not applied
 * it, Installed once every one has. */
static void upgrade_myapp(const char *ie, const char *cid) {
        cr_assert_eq(kill(agent_pid[2], SIGSTOP), 0);
        char *out = NULL;
        cr_assert_eq(CTL(&out, "operator", "upgrade", "c1", "myapp"), 0);
        tu_assert_fits(out, NULL);
        const char *row = row_of(out, "upgrade", "myapp");
        cr_assert(row, "%s", out);
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int) strcspn(row, "\n"), row);
        cr_assert(strstr(line, "1.0.0 -> 1.1.0"), "%s", line);
        cr_assert(row_of(out, "keep", "dbop") && row_of(out, "keep", "etcd"), "%s", out);
        cr_assert(strstr(out, "Payload revision 3 "), "%s", out);
        free(out);
        int64_t rev = 3;
        for (int i = 0; i < 2; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied revision 3"));
        wait_phase("myapp", "Installing");
        cr_assert_eq(kill(agent_pid[2], SIGCONT), 0);
        json_object_put(wait_host(ie, 2, tu_applied, &rev, "applied revision 3 once thawed"));
        wait_phase("myapp", "Installed");
        check_manifest_dirs(cid, 3, rev3_bundles, rev3_files);
        check_bundle_bytes("community", "myapp.v1.1.0", "myapp.v1.1.0.clusterserviceversion.yaml");
        /* Nothing left to upgrade: the same request changes nothing more. */
        json_object *r = CTL_JSON("operator", "upgrade", "c1", "--all");
        cr_assert(json_object_get_boolean(tu_json_get(r, "plan.ok")), "%s", json_object_to_json_string(r));
        tu_assert_join(tu_json_get(r, "plan.steps"), "action", "keep,keep,keep,keep");
        cr_assert_null(tu_json_get(r, "payload_revision"), "no new revision when nothing changes: %s",
                       json_object_to_json_string(r));
        json_object_put(r);
}

/* unsubscribe --prune: myapp goes, and with it the dependencies nothing
 * needs any more; the manifest directories hold the release's alone. */
static void unsubscribe_prune(const char *ie, const char *cid) {
        json_object *c = tu_admin_get(&md, "/api/v2/clusters/%s", cid);
        int64_t rev = json_object_get_int64(tu_json_get(c, "payload_revision")) + 1;
        json_object_put(c);
        char *out = NULL;
        cr_assert_eq(CTL(&out, "operator", "unsubscribe", "c1", "myapp", "--prune"), 0);
        tu_assert_fits(out, NULL);
        static const char *const gone[] = { "myapp", "dbop", "etcd", "prometheus" };
        for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
                cr_assert(row_of(out, "remove", gone[i]), "%s is removed: %s", gone[i], out);
        char want[64];
        snprintf(want, sizeof want, "Payload revision %lld ", (long long) rev);
        cr_assert(strstr(out, want), "%s", out);
        free(out);
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied the pruned revision"));
        static const char *const none[] = { NULL };
        check_manifest_dirs(cid, rev, none, NULL);
        cr_assert_eq(CTL(&out, "operator", "list", "c1"), 0);
        cr_assert_str_eq(out, "cluster c1 is subscribed to no operators\n");
        free(out);
}

static const char *const last_bundles[] = { "etcdoperator.v0.9.4", NULL };
static const int last_files[] = { 3 };

/* Subscribing an installed cluster builds a revision of its own at once. */
static void subscribe_installed(const char *ie, const char *cid) {
        json_object *s = CTL_JSON("operator", "subscribe", "c1", "etcd", "--catalog", "community");
        int64_t rev = json_object_get_int64(tu_json_get(s, "payload_revision"));
        json_object *c = tu_admin_get(&md, "/api/v2/clusters/%s", cid);
        cr_assert_eq(rev, json_object_get_int64(tu_json_get(c, "payload_revision")), "%s",
                     json_object_to_json_string(s));
        json_object_put(c);
        cr_assert_str_eq(tu_jstr(s, "bundles.0.bundle"), "etcdoperator.v0.9.4", "%s", json_object_to_json_string(s));
        json_object_put(s);
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied the new subscription's revision"));
        wait_phase("etcd", "Installed");
        check_manifest_dirs(cid, rev, last_bundles, last_files);
        char *out = NULL;
        cr_assert_eq(CTL(&out, "catalog", "delete", "community"), 1, "named by a subscription: %s", out);
        free(out);
}

/* Operands (issue 17) on the installed cluster: an EtcdCluster applied
 * through musterd reaches every manifest directory after etcd's bundle, a
 * Widget nobody owns is refused; an EtcdCluster someone put on host 0
 * is listed as found once the hosts apply the next revision (the delete
 * of the managed one, which leaves every directory). */
static void operands_installed(const char *ie, const char *cid) {
        static const char etcd[] = "apiVersion: etcd.database.coreos.com/v1beta2\nkind: EtcdCluster\nmetadata:\n"
                                   "  name: main\n  namespace: db\nspec:\n  size: 3\n";
        json_object *body = json_object_new_object(), *files = json_object_new_array(), *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string("etcd.yaml"));
        json_object_object_add(f, "content", json_object_new_string(etcd));
        json_object_array_add(files, f);
        json_object_object_add(body, "files", files);
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/operands", cid), md.admin_token,
                                  json_object_to_json_string(body), &o), 201, "%s",
                     o ? json_object_to_json_string(o) : "");
        json_object_put(body);
        int64_t rev = json_object_get_int64(tu_json_get(o, "payload_revision"));
        cr_assert_gt(rev, 0, "an installed cluster gets a revision: %s", json_object_to_json_string(o));
        char *id = strdup(tu_jstr(o, "items.0.id"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/operands", cid), md.admin_token,
                                  "{\"files\":[{\"path\":\"w.yaml\",\"content\":\"apiVersion: example.com/v1\\n"
                                  "kind: Widget\\nmetadata:\\n  name: w\\n\"}]}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "owned by no operator"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied the operand's revision"));
        for (int i = 0; i < N_AGENTS; i++) {
                char path[4500];
                snprintf(path, sizeof path, "%.4300s/9001_operands_000_etcd_EtcdCluster_db_main.yaml", mdir[i]);
                char *t = tu_read_file(path, NULL);
                cr_assert_str_eq(t, etcd, "host %d holds the operand as applied", i);
                free(t);
        }
        cr_assert_eq(tu_write_file(mdir[0], "local-etcd.yaml",
                                   "apiVersion: etcd.database.coreos.com/v1beta2\nkind: EtcdCluster\nmetadata:\n"
                                   "  name: legacy\n  namespace: db\n"), 0);
        cr_assert_eq(tu_http("DELETE", url("/api/v2/clusters/%s/operands/%s", cid, id), md.admin_token, NULL, 0, NULL),
                     204);
        rev++;
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied the revision without it"));
        o = tu_admin_get(&md, "/api/v2/clusters/%s/operands", cid);
        json_object *items = tu_json_get(o, "items");
        cr_assert_eq(json_object_array_length(items), 1, "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(items, "0.source"), "found");
        cr_assert_str_eq(tu_jstr(items, "0.name"), "legacy");
        cr_assert_str_eq(tu_jstr(items, "0.package"), "etcd");
        cr_assert_str_eq(tu_jstr(items, "0.hosts.0"), agents[0].host_id);
        json_object_put(o);
        char path[4500];
        snprintf(path, sizeof path, "%.4300s/9001_operands_000_etcd_EtcdCluster_db_main.yaml", mdir[1]);
        char *t = tu_read_file(path, NULL);
        cr_assert_null(t, "the deleted operand left the directories");
        free(id);
}

/* ---- operand cleanup on uninstall (issue 17) ------------------------------------ */

/* tests/fixtures/catalogs/lab: vault 1.0.0 owns Vault and VaultBackup,
 * 1.1.0 (which replaces it) Vault and VaultSnapshot; vault-pin holds vault
 * at 1.0.x. */
#define VAULT_API "apiVersion: vault.example.com/v1\n"

/* A vault.example.com document of kind in namespace sec. */
static char *vault_doc(const char *kind, const char *name) {
        char *t = NULL;
        cr_assert_geq(asprintf(&t, VAULT_API "kind: %s\nmetadata:\n  name: %s\n  namespace: sec\nspec: {}\n", kind,
                               name), 0);
        return t;
}

static int64_t cluster_rev(const char *cid) {
        json_object *c = tu_admin_get(&md, "/api/v2/clusters/%s", cid);
        int64_t rev = json_object_get_int64(tu_json_get(c, "payload_revision"));
        json_object_put(c);
        return rev;
}

/* Wait until every host in [from, to) applied revision rev. */
static void wait_applied(const char *ie, int from, int to, int64_t rev, const char *what) {
        for (int i = from; i < to; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, what));
}

/* Apply the documents (one file each) through musterd: the revision that
 * carries them, applied by every host. */
static void apply_vault(const char *ie, const char *cid, const char *const *docs, size_t n) {
        json_object *body = json_object_new_object(), *files = json_object_new_array(), *o = NULL;
        for (size_t i = 0; i < n; i++) {
                json_object *f = json_object_new_object();
                char name[32];
                snprintf(name, sizeof name, "vault-%zu.yaml", i);
                json_object_object_add(f, "path", json_object_new_string(name));
                json_object_object_add(f, "content", json_object_new_string(docs[i]));
                json_object_array_add(files, f);
        }
        json_object_object_add(body, "files", files);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/operands", cid), md.admin_token,
                                  json_object_to_json_string(body), &o), 201, "%s",
                     o ? json_object_to_json_string(o) : "");
        int64_t rev = json_object_get_int64(tu_json_get(o, "payload_revision"));
        cr_assert_gt(rev, 0, "%s", json_object_to_json_string(o));
        json_object_put(o);
        json_object_put(body);
        wait_applied(ie, 0, N_AGENTS, rev, "applied the operands' revision");
}

/* Whether host i's manifest directory has a file whose name contains
 * `part` (and ends with `suffix` when not NULL). */
static bool has_file(int i, const char *part, const char *suffix) {
        DIR *d = opendir(mdir[i]);
        bool yes = false;
        for (struct dirent *e; d && !yes && (e = readdir(d));) {
                size_t n = strlen(e->d_name), k = suffix ? strlen(suffix) : 0;
                yes = strstr(e->d_name, part) && (!suffix || (n >= k && !strcmp(e->d_name + n - k, suffix)));
        }
        if (d)
                closedir(d);
        return yes;
}

/* The managed operand (kind, name) of vault in host i's directory. */
static bool has_operand(int i, const char *kind, const char *name) {
        char suffix[128];
        snprintf(suffix, sizeof suffix, "_vault_%s_sec_%s.yaml", kind, name);
        return has_file(i, "9001_operands_", suffix);
}

/* The subscription to pkg (a copy), NULL when there is none. */
static json_object *subscription(const char *pkg) {
        json_object *l = CTL_JSON("operator", "list", "c1"), *s = tu_find_by(tu_json_get(l, "items"), "package", pkg),
                    *copy = NULL;
        if (s)
                cr_assert_eq(json_object_deep_copy(s, &copy, NULL), 0);
        json_object_put(l);
        return copy;
}

/* An event of the cluster whose message has every one of needles. */
static bool event_says(const char *cid, const char *a, const char *b) {
        bool yes = false;
        for (int64_t since = 0, n = 1; !yes && n > 0;) {
                json_object *ev = tu_admin_get(&md, "/api/v2/events?cluster_id=%s&since_id=%lld&limit=1000", cid,
                                               (long long) since);
                json_object *items = ev; /* an array, oldest first */
                cr_assert(json_object_is_type(items, json_type_array), "%s", json_object_to_json_string(ev));
                n = (int64_t) json_object_array_length(items);
                for (int64_t i = 0; !yes && i < n; i++) {
                        json_object *e = json_object_array_get_idx(items, (size_t) i);
                        const char *m = tu_jstr(e, "message");
                        yes = m && strstr(m, a) && (!b || strstr(m, b));
                        since = json_object_get_int64(tu_json_get(e, "id"));
                }
                json_object_put(ev);
        }
        return yes;
}

static void wait_event(const char *cid, const char *a, const char *b) {
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        while (!event_says(cid, a, b)) {
                if (tu_mono_ms() > deadline)
                        cr_assert_fail("no event saying \"%s\" %s", a, b ? b : "");
                usleep(300 * 1000);
        }
}

/* Wait until the subscription to pkg is gone. */
static void wait_unsubscribed(const char *pkg) {
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        for (json_object *s; (s = subscription(pkg));) {
                if (tu_mono_ms() > deadline)
                        cr_assert_fail("%s never left: %s", pkg, json_object_to_json_string(s));
                json_object_put(s);
                usleep(300 * 1000);
        }
}

/* vault 1.0.0 (held by vault-pin) with cleanup enabled and a VaultBackup
 * applied; vault-pin goes, and `operator upgrade` moves vault to 1.1.0,
 * which no longer owns VaultBackup: the setting carries over, nothing is
 * deleted, and the kind is reported. */
static void cleanup_upgrade(const char *ie, const char *cid) {
        add_catalog(BASE, md.admin_token_path, "lab", "30");
        cr_assert_eq(CTL(NULL, "operator", "subscribe", "c1", "vault-pin"), 0);
        cr_assert_eq(CTL(NULL, "operator", "subscribe", "c1", "vault", "--cleanup"), 0);
        wait_applied(ie, 0, N_AGENTS, cluster_rev(cid), "applied vault 1.0.0");
        wait_phase("vault", "Installed");
        _cleanup_free_ char *nightly = vault_doc("VaultBackup", "nightly");
        apply_vault(ie, cid, (const char *const[]) { nightly }, 1);
        cr_assert_eq(CTL(NULL, "operator", "unsubscribe", "c1", "vault-pin"), 0);
        wait_applied(ie, 0, N_AGENTS, cluster_rev(cid), "applied the revision without vault-pin");
        wait_phase("vault", "UpgradePending");
        json_object *up = CTL_JSON("operator", "upgrade", "c1", "vault");
        cr_assert_str_eq(tu_jstr(up, "kinds_no_longer_owned.0"), "VaultBackup.vault.example.com", "%s",
                         json_object_to_json_string(up));
        int64_t rev = json_object_get_int64(tu_json_get(up, "payload_revision"));
        json_object_put(up);
        wait_applied(ie, 0, N_AGENTS, rev, "applied vault 1.1.0");
        json_object *s = subscription("vault");
        cr_assert(json_object_get_boolean(tu_json_get(s, "cleanup.enabled")), "carried over: %s",
                  json_object_to_json_string(s));
        cr_assert_str_eq(tu_jstr(tu_find_by(tu_json_get(s, "bundles"), "package", "vault"), "version"), "1.1.0", "%s",
                         json_object_to_json_string(s));
        json_object_put(s);
        for (int i = 0; i < N_AGENTS; i++) {
                cr_assert(has_operand(i, "VaultBackup", "nightly"), "an upgrade deletes nothing (host %d)", i);
                cr_assert(has_file(i, "vaultop.v1.1.0", NULL) && !has_file(i, "vaultop.v1.0.0", NULL), "host %d", i);
        }
        cr_assert(event_says(cid, "no operator owns kind(s) VaultBackup.vault.example.com", "kept"));
}

/* Without cleanup the operator goes and its operands stay. */
static void uninstall_keeps_operands(const char *ie, const char *cid) {
        cr_assert_eq(CTL(NULL, "operator", "set", "c1", "vault", "--cleanup=false"), 0);
        _cleanup_free_ char *a = vault_doc("Vault", "a");
        apply_vault(ie, cid, (const char *const[]) { a }, 1);
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s/subscriptions/vault", cid), md.admin_token, NULL,
                                  &o), 200, "%s", o ? json_object_to_json_string(o) : "");
        int64_t rev = json_object_get_int64(tu_json_get(o, "payload_revision"));
        cr_assert_gt(rev, 0, "%s", json_object_to_json_string(o));
        json_object_put(o);
        wait_applied(ie, 0, N_AGENTS, rev, "applied the revision without vault");
        for (int i = 0; i < N_AGENTS; i++) {
                cr_assert_not(has_file(i, "vaultop.", NULL), "the operator left host %d", i);
                cr_assert(has_operand(i, "Vault", "a") && has_operand(i, "VaultBackup", "nightly"),
                          "the operands stay on host %d", i);
        }
}

/* The pending deletions of the subscription's status, as "Kind=count,...". */
static char *pending_text(json_object *s) {
        json_object *p = tu_json_get(s, "status.cleanup.pending_deletion");
        char buf[512] = "";
        for (size_t i = 0; i < json_object_array_length(p); i++) {
                json_object *k = json_object_array_get_idx(p, i);
                size_t n = strlen(buf);
                snprintf(buf + n, sizeof buf - n, "%s%s=%lld", i ? "," : "", tu_jstr(k, "kind"),
                         (long long) json_object_get_int64(tu_json_get(k, "count")));
        }
        return strdup(buf);
}

/* With cleanup: 3 managed operands of vault 1.1.0's two kinds and 2 found
 * on the hosts go first, while the operator stays; host 2's agent is
 * frozen, so they stay pending, the stall is said (event, metric, the
 * hosts named) after [cleanup] timeout; thawed, it reports and the
 * operator goes. VaultBackup, a kind vault no longer owns, stays. */
static void uninstall_with_cleanup(const char *ie, const char *cid) {
        cr_assert_eq(CTL(NULL, "operator", "subscribe", "c1", "vault", "--cleanup"), 0);
        wait_applied(ie, 0, N_AGENTS, cluster_rev(cid), "applied vault again");
        /* Found: written beside muster's files, reported with the next apply. */
        cr_assert_eq(tu_write_file(mdir[0], "local-vault.yaml", VAULT_API "kind: Vault\nmetadata:\n  name: legacy\n"
                                                                 "  namespace: sec\n"), 0);
        static const char snap[] = VAULT_API "kind: VaultSnapshot\nmetadata:\n  name: hourly\n  namespace: sec\n"
                                             "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep-me\n"
                                             "  namespace: sec\n";
        cr_assert_eq(tu_write_file(mdir[1], "local-snap.yaml", snap), 0);
        _cleanup_free_ char *b = vault_doc("Vault", "b"), *daily = vault_doc("VaultSnapshot", "daily");
        apply_vault(ie, cid, (const char *const[]) { b, daily }, 2);

        cr_assert_eq(kill(agent_pid[2], SIGSTOP), 0);
        char *out = NULL;
        cr_assert_eq(CTL(&out, "operator", "uninstall", "c1", "vault"), 0, "%s", out);
        cr_assert(strstr(out, "Uninstalling vault from cluster c1: waiting for operator to finish cleanup for 5 CRs\n"),
                  "%s", out);
        cr_assert(strstr(out, "Follow it with: musterctl operator show c1 vault\n"), "%s", out);
        cr_assert(row_of(out, "Vault", "vault.example.com") && row_of(out, "VaultSnapshot", "vault.example.com"), "%s",
                  out);
        free(out);
        json_object *o = subscription("vault");
        cr_assert_str_eq(tu_jstr(o, "phase"), "Cleanup", "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(o, "reason"), "CleanupWaiting");
        cr_assert_str_eq(tu_jstr(o, "message"), "waiting for operator to finish cleanup for 5 CRs");
        _cleanup_free_ char *pend = pending_text(o);
        cr_assert_str_eq(pend, "Vault=3,VaultSnapshot=2", "%s", json_object_to_json_string(o));
        json_object_put(o);
        cr_assert(event_says(cid, "its 5 operands (3 applied through musterd, 2 found on the hosts) go first", NULL));
        int64_t rev = cluster_rev(cid);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s/subscriptions/vault", cid), md.admin_token, NULL,
                                  &o), 409, "asked once");
        json_object_put(o);
        wait_applied(ie, 0, 2, rev, "applied the cleanup revision");
        /* Between revisions: the operands are gone, the operator is not. */
        for (int i = 0; i < 2; i++) {
                cr_assert_not(has_operand(i, "Vault", "a") || has_operand(i, "Vault", "b") ||
                              has_operand(i, "VaultSnapshot", "daily"), "host %d deleted the managed operands", i);
                cr_assert(has_file(i, "vaultop.v1.1.0", NULL), "the operator stays on host %d meanwhile", i);
                cr_assert(has_operand(i, "VaultBackup", "nightly"), "a kind vault does not own stays");
        }
        char path[4500];
        snprintf(path, sizeof path, "%.4300s/local-vault.yaml", mdir[0]);
        cr_assert_eq(access(path, F_OK), -1, "the found Vault's file went with it");
        snprintf(path, sizeof path, "%.4300s/local-snap.yaml", mdir[1]);
        _cleanup_free_ char *left = tu_read_file(path, NULL);
        cr_assert_str_eq(left, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep-me\n  namespace: sec\n",
                         "the rest of the file stays: [%s]", left ? left : "(none)");

        /* Host 2 has not reported: pending stays, the stall is said. */
        wait_event(cid, "the cleanup of vault's operands is stalled", agents[2].host_id);
        json_object *s = subscription("vault");
        cr_assert_str_eq(tu_jstr(s, "phase"), "Cleanup", "%s", json_object_to_json_string(s));
        cr_assert_eq(json_object_get_int64(tu_json_get(s, "status.cleanup.pending_count")), 5);
        cr_assert(json_object_get_boolean(tu_json_get(s, "status.cleanup.stalled")));
        cr_assert_str_eq(tu_jstr(s, "status.cleanup.lagging_hosts.0"), agents[2].host_id);
        cr_assert_eq(json_object_array_length(tu_json_get(s, "status.cleanup.lagging_hosts")), 1);
        json_object_put(s);
        cr_assert_eq(CTL(&out, "operator", "show", "c1", "vault"), 0);
        char want[256];
        snprintf(want, sizeof want, "stalled: yes — hosts not reported: %s\n", agents[2].host_id);
        cr_assert(strstr(out, "phase: Cleanup (CleanupWaiting)\n") && strstr(out, "pending deletion: 5 of 5\n") &&
                  strstr(out, want), "%s", out);
        free(out);
        char *m = NULL;
        cr_assert_eq(tu_http("GET", url("/metrics"), md.admin_token, NULL, 0, &m), 200);
        static const char key[] = "\nmuster_cleanup_stalled_total ";
        const char *line = strstr(m, key);
        cr_assert(line && atoll(line + sizeof key - 1) >= 1, "%s", m);
        free(m);

        cr_assert_eq(kill(agent_pid[2], SIGCONT), 0);
        wait_unsubscribed("vault");
        int64_t last = cluster_rev(cid);
        cr_assert_gt(last, rev, "the operator leaves with a revision of its own");
        wait_applied(ie, 0, N_AGENTS, last, "applied the revision without the operator");
        for (int i = 0; i < N_AGENTS; i++) {
                cr_assert_not(has_file(i, "vaultop.", NULL), "the operator left host %d last", i);
                cr_assert_not(has_operand(i, "Vault", "a") || has_operand(i, "VaultSnapshot", "daily"), "host %d", i);
                cr_assert(has_operand(i, "VaultBackup", "nightly"));
        }
        cr_assert(event_says(cid, "every operand of vault is gone (5 deleted)", NULL));
        cr_assert(event_says(cid, "operator vault uninstalled", NULL));
        cr_assert(event_says(cid, "after vault is uninstalled, removable: vault-agent", NULL),
                  "the dependency installed for vault alone is named, not deleted");
}

/* Abort mid-way: cleanup.enabled=false while host 2 has not applied the
 * cleanup revision; the operator goes at once, what hosts 0 and 1 deleted
 * stays deleted, and host 2's found Vault, which no later revision names,
 * stays. */
static void abort_cleanup(const char *ie, const char *cid) {
        cr_assert_eq(CTL(NULL, "operator", "subscribe", "c1", "vault", "--cleanup"), 0);
        wait_applied(ie, 0, N_AGENTS, cluster_rev(cid), "applied vault once more");
        cr_assert_eq(tu_write_file(mdir[2], "local-keep.yaml", VAULT_API "kind: Vault\nmetadata:\n  name: keep\n"
                                                                "  namespace: sec\n"), 0);
        _cleanup_free_ char *c = vault_doc("Vault", "c");
        apply_vault(ie, cid, (const char *const[]) { c }, 1);
        cr_assert_eq(kill(agent_pid[2], SIGSTOP), 0);
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/clusters/%s/subscriptions/vault", cid), md.admin_token, NULL,
                                  &o), 202, "%s", o ? json_object_to_json_string(o) : "");
        int64_t rev = json_object_get_int64(tu_json_get(o, "payload_revision"));
        json_object_put(o);
        wait_applied(ie, 0, 2, rev, "applied the cleanup revision");
        cr_assert_not(has_operand(0, "Vault", "c"));
        json_object *r = CTL_JSON("operator", "set", "c1", "vault", "--cleanup=false");
        cr_assert(json_object_get_boolean(tu_json_get(r, "uninstalled")), "%s", json_object_to_json_string(r));
        json_object_put(r);
        json_object *gone = subscription("vault");
        cr_assert_null(gone, "the operator goes at once");
        cr_assert_eq(kill(agent_pid[2], SIGCONT), 0);
        wait_applied(ie, 0, N_AGENTS, cluster_rev(cid), "applied the revision after the abort");
        for (int i = 0; i < N_AGENTS; i++) {
                cr_assert_not(has_file(i, "vaultop.", NULL), "host %d", i);
                cr_assert_not(has_operand(i, "Vault", "c"), "deleted stays deleted (host %d)", i);
        }
        char path[4500];
        snprintf(path, sizeof path, "%.4300s/local-keep.yaml", mdir[2]);
        cr_assert_eq(access(path, F_OK), 0, "no further deletion after the abort");
        cr_assert(event_says(cid, "the cleanup of vault's operands is aborted", NULL));
}

Test(operators_e2e, three_hosts_subscribe_install_upgrade_and_prune) {
        char *ie = start_with_key();
        char *cid = ready_cluster(ie);
        subscribe_refused_install(cid);
        install_with_operators(ie, cid);
        boot_installed_systems(ie, cid);
        unsubscribe_console(ie, cid);
        upgrade_myapp(ie, cid);
        unsubscribe_prune(ie, cid);
        subscribe_installed(ie, cid);
        operands_installed(ie, cid);
        cleanup_upgrade(ie, cid);
        uninstall_keeps_operands(ie, cid);
        uninstall_with_cleanup(ie, cid);
        abort_cleanup(ie, cid);
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "node agent %s exits cleanly", agents[i].name);
        cr_assert_eq(tu_stop(&md.pid, SIGTERM), 0, "musterd");
        free(cid);
        free(ie);
}
