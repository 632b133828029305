/* Add-ons (issue 16) the way an admin meets them:
 *  - addons_api: the refusals at the door against the real musterd on
 *    loopback: templates that do not parse, are too large or too deep,
 *    selectors with 10,000 expressions, values that are not YAML for a
 *    selected cluster, bad label keys; who may declare a proxy; nothing is
 *    stored by a refused request;
 *  - addons_e2e: musterd and three real agents in network namespaces the
 *    test builds (as test_operators_e2e.c), each installing a single-node
 *    cluster (a, b, c) into a folder target, then node agents applying the
 *    clusters' payload revisions into their manifest directories. A proxy
 *    made before the install reaches the selected clusters with their
 *    install; relabelling moves a release from one cluster to another; a
 *    new template is revision 2 everywhere; InstallOnce ignores a change;
 *    an out-of-band HelmChart of the same release is left alone and
 *    reported; a rollout with max_concurrent 1 moves one cluster at a
 *    time, pauses at max_failures 1 when a cluster's agent is stopped, and
 *    rolls back. Every check reads the manifest directories. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define WAIT_MS 90000

/* The condition `type` of a proxy; NULL if none. */
static json_object *condition(json_object *proxy, const char *type) {
        return tu_find_by(tu_json_get(proxy, "status.conditions"), "type", type);
}

/* A proxy spec: name, selector (JSON), template; more members (JSON text
 * without braces, "" for none). */
static char *spec(const char *name, const char *selector, const char *tmpl, const char *more) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "cluster_selector", json_tokener_parse(selector));
        json_object_object_add(o, "chart", json_tokener_parse("{\"repository\":\"https://charts.example.test\","
                                                              "\"name\":\"demo\",\"version\":\"1.0.0\"}"));
        json_object_object_add(o, "namespace", json_object_new_string(name));
        json_object_object_add(o, "values_template", json_object_new_string(tmpl));
        char text[8192];
        snprintf(text, sizeof text, "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        if (*more) {
                text[strlen(text) - 1] = '\0';
                strncat(text, ",", sizeof text - strlen(text) - 1);
                strncat(text, more, sizeof text - strlen(text) - 1);
                strncat(text, "}", sizeof text - strlen(text) - 1);
        }
        return strdup(text);
}

/* ---- at the door -------------------------------------------------------------- */

static struct tu_musterd lo;
static char *lodir;

static void api_up(void) {
        tu_ctl_clean_env();
        lodir = tu_mkdtemp();
        cr_assert_eq(tu_musterd_start_in(&lo, lodir, NULL), 0);
}

static void api_down(void) {
        tu_musterd_stop(&lo, SIGTERM);
        tu_musterd_free(&lo);
        tu_rm_rf(lodir);
        free(lodir);
}

TestSuite(addons_api, .init = api_up, .fini = api_down, .timeout = 300);

static void refused(const char *method, const char *path, const char *token, const char *body, long status,
                    const char *says) {
        json_object *o = NULL;
        long got = tu_http_json(method, tu_url(lo.base, "%s", path), token, body, &o);
        cr_assert_eq(got, status, "%s %s: %ld, expected %ld: %s", method, path, got, status,
                     o ? json_object_to_json_string(o) : "");
        const char *why = tu_jstr(o, "reason");
        cr_assert(why && strstr(why, says), "%s %s: \"%s\" should say \"%s\"", method, path, why ? why : "", says);
        json_object_put(o);
}

Test(addons_api, bad_input_is_refused_and_nothing_is_stored) {
        char *id = NULL;
        cr_assert_eq(tu_create_cluster(lo.base, lo.admin_token, "{\"name\":\"east\",\"labels\":{\"env\":\"prod\"}}", &id),
                     201);
        const char *P = "/api/v2/addon-proxies";
        char *s = spec("mon", "{\"match_labels\":{\"env\":\"prod\"}}", "a: {{#cluster}}\n", "");
        refused("POST", P, lo.admin_token, s, 400, "values_template: line 1, column");
        free(s);
        /* 1 MB of template. */
        size_t big = 1000 * 1000;
        char *t = malloc(big + 1);
        memset(t, 'x', big);
        t[big] = '\0';
        char *s0 = spec("mon", "{}", "", "");
        json_object *o = json_tokener_parse(s0);
        free(s0);
        json_object_object_add(o, "values_template", json_object_new_string(t));
        refused("POST", P, lo.admin_token, json_object_to_json_string(o), 400, "at most 262144");
        free(t);
        /* Sections nested past the limit. */
        char deep[8192] = "";
        for (int i = 0; i < 500; i++)
                strcat(deep, "{{#a}}");
        json_object_object_add(o, "values_template", json_object_new_string(deep));
        refused("POST", P, lo.admin_token, json_object_to_json_string(o), 400, "values_template: ");
        json_object_object_add(o, "values_template", json_object_new_string(""));
        /* 10,000 expressions. */
        json_object *exprs = json_object_new_array(), *sel = json_object_new_object();
        for (int i = 0; i < 10000; i++) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "key", json_object_new_string("env"));
                json_object_object_add(e, "operator", json_object_new_string("Exists"));
                json_object_array_add(exprs, e);
        }
        json_object_object_add(sel, "match_expressions", exprs);
        json_object_object_add(o, "cluster_selector", sel);
        refused("POST", P, lo.admin_token, json_object_to_json_string(o), 400, "cluster_selector:");
        json_object_put(o);
        /* Values that are not YAML for a cluster it selects: named. */
        s = spec("mon", "{\"match_labels\":{\"env\":\"prod\"}}", "- {{cluster.name}}\n", "");
        refused("POST", P, lo.admin_token, s, 400, "cluster east are not a YAML mapping");
        free(s);
        refused("POST", P, lo.admin_token, "{\"name\":\"mon\"", 400, "");
        refused("POST", P, lo.admin_token, "[]", 400, "must be a JSON object");
        /* Only an infra admin declares add-ons. */
        char *alice = tu_token(&lo, "cluster-creator", "alice");
        s = spec("mon", "{}", "", "");
        refused("POST", P, alice, s, 403, "");
        refused("GET", "/api/v2/addon-releases", alice, NULL, 403, "?cluster=");
        free(alice);
        json_object *l = tu_admin_get(&lo, "/api/v2/addon-proxies");
        cr_assert_eq(json_object_array_length(l), 0, "nothing stored: %s", json_object_to_json_string(l));
        json_object_put(l);

        /* A good one; then a PATCH whose values are not YAML for east is
         * refused, naming it, and changes nothing. */
        o = NULL;
        cr_assert_eq(tu_http_json("POST", tu_url(lo.base, "%s", P), lo.admin_token, s, &o), 201);
        cr_assert_eq(json_object_get_int64(tu_json_get(o, "generation")), 1);
        json_object_put(o);
        refused("PATCH", "/api/v2/addon-proxies/mon", lo.admin_token, "{\"values_template\":\"a: [{{cluster.name}}\"}", 400,
                "cluster east are not YAML");
        refused("PATCH", "/api/v2/addon-proxies/mon", lo.admin_token, "{\"namespace\":\"other\"}", 400,
                "set when the proxy is created");
        refused("POST", "/api/v2/addon-proxies/mon/actions/rollback", lo.admin_token, NULL, 409, "no earlier spec");
        refused("POST", "/api/v2/addon-proxies/mon/actions/explode", lo.admin_token, NULL, 404, "pause, resume");
        refused("POST", P, lo.admin_token, s, 409, "named mon exists");
        free(s);
        o = tu_admin_get(&lo, "/api/v2/addon-proxies/mon");
        cr_assert_eq(json_object_get_int64(tu_json_get(o, "generation")), 1, "the refused PATCH changed nothing");
        json_object_put(o);
        /* Labels are Kubernetes labels: the bad one is named, and a change
         * that would make a selected cluster's values not YAML is refused. */
        char path[256];
        snprintf(path, sizeof path, "/api/v2/clusters/%s", id);
        refused("PATCH", path, lo.admin_token, "{\"labels\":{\"env\":\"prod\",\"bad key\":\"x\"}}", 400,
                "label \"bad key\": the key");
        refused("PATCH", path, lo.admin_token, "{\"labels\":{\"env\":\"-prod\"}}", 400, "label env: value \"-prod\"");
        o = NULL;
        cr_assert_eq(tu_http_json("PATCH", tu_url(lo.base, "/api/v2/addon-proxies/mon"), lo.admin_token,
                                  "{\"values_template\":\"a: {{cluster.labels.tier}}\\n\"}", &o), 200);
        json_object_put(o);
        refused("PATCH", path, lo.admin_token, "{\"labels\":{\"env\":\"prod\",\"tier\":\"[x\"}}", 400,
                "label tier: value \"[x\"");
        free(id);
}

/* ---- end to end: three single-node clusters ---------------------------------------- */

#define COORD_ADDR "192.0.2.1"
#define BASE "http://" COORD_ADDR ":8090"
#define N 3

static const struct tu_node agents[N] = {
        { "a-0", "7c0ffee0-0000-4000-8000-000000000030", "192.0.2.30", "02:00:00:00:02:30" },
        { "b-0", "7c0ffee0-0000-4000-8000-000000000031", "192.0.2.31", "02:00:00:00:02:31" },
        { "c-0", "7c0ffee0-0000-4000-8000-000000000032", "192.0.2.32", "02:00:00:00:02:32" },
};
static const char *const names[N] = { "a", "b", "c" };

static struct tu_fabric fab;
static struct tu_musterd md;
static char *dir, *ie, *cid[N];
static int agent_pid[N] = { -1, -1, -1 };
static int sntpd_pid = -1, dnsd_pid = -1;
static char token_file[4400], pub_file[4400], target[N][4200], mdir[N][4300];

#define url(...) tu_url(BASE, __VA_ARGS__)
#define CTL(out, ...) tu_ctl_admin(out, &md, (const char *const[]) { __VA_ARGS__, NULL })

static void setup(void) {
        tu_ctl_clean_env();
        dir = tu_e2e_up(&fab, "d", COORD_ADDR, agents, N);
        char rel[4200];
        snprintf(rel, sizeof rel, "%s/state/images/rel-4.15.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        cr_assert_eq(tu_write_file(dir, "hosts",
                                   "127.0.0.1 localhost\n"
                                   "192.0.2.30 api.a.example.test api-int.a.example.test\n"
                                   "192.0.2.31 api.b.example.test api-int.b.example.test\n"
                                   "192.0.2.32 api.c.example.test api-int.c.example.test\n"), 0);
        cr_assert_gt(dnsd_pid = tu_dnsd_start(COORD_ADDR, dir,
                                              "*.apps.a.example.test 192.0.2.30\n*.apps.b.example.test 192.0.2.31\n"
                                              "*.apps.c.example.test 192.0.2.32\n"), 0, "the DNS server started");
}

static void teardown(void) {
        tu_e2e_down(&fab, &md, agent_pid, N, &sntpd_pid, &dnsd_pid, &dir);
        free(ie);
        for (int i = 0; i < N; i++)
                free(cid[i]);
}

TestSuite(addons_e2e, .init = setup, .fini = teardown, .timeout = 900);

static void start_agent(int i, const char *mode, const char *const *extra) {
        const struct tu_agent_run r = { mode, MUSTER_FIXTURES_DIR "/build-machine/root", BASE, ie, token_file, pub_file,
                                        extra };
        agent_pid[i] = tu_e2e_agent(&fab, agents, i, dir, &r);
}

/* Node agent i on its manifest directory, with its host's own token. */
static void start_node_agent(int i) {
        char conf[4400], name[64], tf[4400];
        snprintf(conf, sizeof conf, "%.4200s/etc/muster/agent.conf", target[i]);
        char *tok = tu_agent_conf_token(conf);
        cr_assert_not_null(tok, "no token in %s", conf);
        snprintf(name, sizeof name, "host-%d.token", i);
        cr_assert_eq(tu_write_file(dir, name, tok), 0);
        free(tok);
        snprintf(tf, sizeof tf, "%s/%s", dir, name);
        const struct tu_agent_run r = { "node", NULL, BASE, ie, tf, pub_file,
                                        (const char *const[]) { "--manifest-dir", mdir[i], NULL } };
        agent_pid[i] = tu_e2e_agent(&fab, agents, i, dir, &r);
}

/* The releases of proxy `p` (GET /addon-releases?proxy=), parsed. */
static json_object *releases(const char *p) {
        return tu_admin_get(&md, "/api/v2/addon-releases?proxy=%s", p);
}

static json_object *proxy(const char *p) {
        return tu_admin_get(&md, "/api/v2/addon-proxies/%s", p);
}

/* Poll until proxy p's release on cluster `cl` has `status` and revision
 * `rev` (status NULL: until it has none at all). */
static json_object *wait_release(const char *p, const char *cl, const char *status, int64_t rev) {
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        for (;;) {
                json_object *l = releases(p), *r = tu_find_by(l, "cluster_name", cl);
                bool ok = status ? r && !strcmp(tu_jstr(r, "status"), status) &&
                                           json_object_get_int64(tu_json_get(r, "revision")) == rev
                                 : !r;
                if (ok) {
                        json_object *c = r ? json_object_get(r) : NULL;
                        json_object_put(l);
                        return c;
                }
                if (tu_mono_ms() > deadline)
                        cr_assert_fail("the release of %s on %s never became %s revision %lld: %s", p, cl,
                                       status ? status : "gone", (long long) rev, json_object_to_json_string(l));
                json_object_put(l);
                usleep(250 * 1000);
        }
}

/* The HelmChart file of proxy p in cluster i's manifest directory (NULL
 * when there is none). */
static char *chart_file(int i, const char *p) {
        char path[4500];
        snprintf(path, sizeof path, "%s/9500_addon_%s.yaml", mdir[i], p);
        return tu_read_file(path, NULL);
}

/* Poll until cluster i's file of proxy p holds `text` (NULL: is gone). */
static void wait_chart(int i, const char *p, const char *text) {
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        for (;;) {
                char *f = chart_file(i, p);
                bool ok = text ? f && strstr(f, text) : !f;
                if (ok) {
                        free(f);
                        return;
                }
                if (tu_mono_ms() > deadline)
                        cr_assert_fail("%s/9500_addon_%s.yaml never %s%s: %s", mdir[i], p, text ? "held " : "went",
                                       text ? text : "", f ? f : "(none)");
                free(f);
                usleep(250 * 1000);
        }
}

static void create_proxy(const char *body) {
        json_object *o = NULL;
        long st = tu_http_json("POST", url("/api/v2/addon-proxies"), md.admin_token, body, &o);
        cr_assert_eq(st, 201, "%s: %s", body, o ? json_object_to_json_string(o) : "");
        json_object_put(o);
}

static void patch(const char *path, const char *body) {
        json_object *o = NULL;
        long st = tu_http_json("PATCH", url("%s", path), md.admin_token, body, &o);
        cr_assert_eq(st, 200, "%s %s: %s", path, body, o ? json_object_to_json_string(o) : "");
        json_object_put(o);
}

/* Three single-node clusters a (env=prod), b (env=prod), c (env=dev), each
 * with its host, installed into folder targets; proxy `mon` (env=prod) made
 * before they install; node agents running. */
static void install_three(void) {
        cr_assert_eq(tu_musterd_start_at(&md, COORD_ADDR ":8090", dir,
                                         "[agent]\ninstruction_interval = 1\n[addons]\ninterval = 1\n"
                                         "[requirements]\ninstall_disk_fsync_ms = 10000\n" TU_CONFIG_LOW_MINIMUMS),
                     0, "musterd did not answer; see %s", md.log);
        ie = tu_e2e_infra_env(&md, "rack-7", dir, &sntpd_pid, NULL);
        snprintf(token_file, sizeof token_file, "%s/agent.token", dir);
        snprintf(pub_file, sizeof pub_file, "%s/coordinator.pub", dir);
        cr_assert_eq(CTL(NULL, "signing-key", "-o", pub_file), 0);
        char rel[4200];
        snprintf(rel, sizeof rel, "%s/state/images/rel-4.15.0", dir);
        cr_assert_eq(CTL(NULL, "release", "import", rel), 0);
        for (int i = 0; i < N; i++) {
                snprintf(target[i], sizeof target[i], "%s/target-%d", dir, i);
                snprintf(mdir[i], sizeof mdir[i], "%.4200s/etc/muster/manifests", target[i]);
                tu_must("mkdir -p %s", target[i]);
                start_agent(i, "run", (const char *const[]) { "--install-target", target[i], NULL });
        }
        for (int i = 0; i < N; i++) {
                char body[512];
                snprintf(body, sizeof body,
                         "{\"name\":\"%s\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                         "\"192.0.2.0/24\",\"high_availability_mode\":\"None\",\"pull_secret\":\"{\\\"auths\\\":{}}\","
                         "\"release_version\":\"4.15.0\",\"labels\":{\"env\":\"%s\"}}",
                         names[i], i < 2 ? "prod" : "dev");
                cr_assert_eq(tu_create_cluster(md.base, md.admin_token, body, &cid[i]), 201);
        }
        /* Made before the clusters install: they get it with their install. */
        cr_assert_eq(CTL(NULL, "addon", "create", "mon", "--chart-repo", "https://charts.example.test", "--chart", "demo",
                         "--version", "1.0.0", "--namespace", "mon", "-l", "env=prod", "--values-template",
                         "cluster: {{cluster.name}}\nenv: {{cluster.labels.env}}\n"),
                     0);
        json_object *l = releases("mon");
        tu_assert_join(l, "status", "Pending,Pending");
        json_object_put(l);
        for (int i = 0; i < N; i++) {
                json_object_put(tu_wait_host(&md, ie, agents[i].host_id, tu_status_is, "known-unbound", WAIT_MS,
                                             "known-unbound"));
                cr_assert_eq(CTL(NULL, "host", "bind", agents[i].host_id, "--cluster", names[i]), 0);
        }
        for (int i = 0; i < N; i++) {
                json_object_put(tu_wait_cluster(&md, cid[i], tu_status_is, "ready", WAIT_MS, "ready"));
                cr_assert_eq(CTL(NULL, "cluster", "install", names[i]), 0);
        }
        for (int i = 0; i < N; i++)
                json_object_put(tu_wait_host(&md, ie, agents[i].host_id, tu_written, NULL, WAIT_MS, "written"));
        for (int i = 0; i < N; i++) {
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "run agent %s exits cleanly", agents[i].name);
                start_node_agent(i);
        }
        for (int i = 0; i < N; i++)
                json_object_put(tu_wait_cluster(&md, cid[i], tu_status_is, "installed", WAIT_MS, "installed"));
        json_object_put(wait_release("mon", "a", "Applied", 1));
        json_object_put(wait_release("mon", "b", "Applied", 1));
        wait_chart(0, "mon", "cluster: a\n    env: prod\n");
        wait_chart(1, "mon", "cluster: b\n");
        char *none = chart_file(2, "mon");
        cr_assert_null(none, "c is not selected: %s", none);
        /* The HelmChart as the k3s/RKE2 helm controller reads it. */
        char *f = chart_file(0, "mon");
        cr_assert(strstr(f, "apiVersion: \"helm.cattle.io/v1\"\nkind: \"HelmChart\"\n"), "%s", f);
        cr_assert(strstr(f, "chart: \"demo\"\n") && strstr(f, "repo: \"https://charts.example.test\"\n") &&
                  strstr(f, "targetNamespace: \"mon\"\n") && strstr(f, "valuesContent: |"), "%s", f);
        free(f);
        json_object *p = proxy("mon");
        cr_assert_str_eq(tu_jstr(condition(p, "ReleasesReady"), "status"), "True", "%s", json_object_to_json_string(p));
        cr_assert_eq(json_object_get_int64(tu_json_get(p, "status.applied")), 2);
        json_object_put(p);
}

/* b leaves env=prod, c joins: b's release is removed, c gets one. */
static void relabel(void) {
        cr_assert_eq(CTL(NULL, "cluster", "label", "b", "env=dev"), 0);
        cr_assert_eq(CTL(NULL, "cluster", "label", "c", "env=prod"), 0);
        json_object_put(wait_release("mon", "b", NULL, 0));
        wait_chart(1, "mon", NULL);
        json_object_put(wait_release("mon", "c", "Applied", 1));
        wait_chart(2, "mon", "cluster: c\n");
        json_object_put(wait_release("mon", "a", "Applied", 1));
}

/* A new template: revision 2 everywhere. */
static void new_template(void) {
        cr_assert_eq(CTL(NULL, "addon", "set", "mon", "--values-template", "cluster: {{cluster.name}}\nversion: two\n"),
                     0);
        json_object *a = wait_release("mon", "a", "Applied", 2), *c = wait_release("mon", "c", "Applied", 2);
        cr_assert_eq(json_object_get_int64(tu_json_get(a, "applied_revision")), 2);
        cr_assert_str_eq(tu_jstr(c, "values"), "cluster: c\nversion: two\n");
        json_object_put(a);
        json_object_put(c);
        wait_chart(0, "mon", "version: two");
        wait_chart(2, "mon", "version: two");
}

/* InstallOnce installs, then ignores a change of its template. */
static void install_once(void) {
        char *s = spec("once", "{\"match_labels\":{\"env\":\"prod\"}}", "x: 1\n",
                       "\"reconcile_strategy\":\"InstallOnce\"");
        create_proxy(s);
        free(s);
        json_object_put(wait_release("once", "a", "Applied", 1));
        json_object_put(wait_release("once", "c", "Applied", 1));
        wait_chart(0, "once", "x: 1");
        json_object *before = tu_admin_get(&md, "/api/v2/clusters/%s", cid[0]);
        patch("/api/v2/addon-proxies/once", "{\"values_template\":\"x: 2\\n\"}");
        json_object *l = releases("once");
        tu_assert_join(l, "revision", "1,1");
        tu_assert_join(l, "values", "x: 1\n,x: 1\n");
        json_object_put(l);
        json_object *after = tu_admin_get(&md, "/api/v2/clusters/%s", cid[0]);
        cr_assert_eq(json_object_get_int64(tu_json_get(after, "payload_revision")),
                     json_object_get_int64(tu_json_get(before, "payload_revision")), "no new payload revision");
        json_object_put(before);
        json_object_put(after);
        json_object *p = proxy("once");
        cr_assert_eq(json_object_get_int64(tu_json_get(p, "generation")), 2);
        json_object_put(p);
}

/* A HelmChart for release tools/tools that musterd did not write, in b's
 * manifest directory: the proxy `tools` (every cluster) installs on a and
 * c, leaves b's file alone and reports the conflict. */
static const char oob[] = "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: tools\n"
                          "  namespace: kube-system\nspec:\n  chart: tools\n  targetNamespace: tools\n";

static void out_of_band(void) {
        cr_assert_eq(tu_write_file(mdir[1], "50_my-tools.yaml", oob), 0);
        char *s = spec("tools", "{}", "by: musterd\n", "");
        create_proxy(s);
        free(s);
        json_object_put(wait_release("tools", "a", "Applied", 1));
        json_object_put(wait_release("tools", "c", "Applied", 1));
        json_object *b = wait_release("tools", "b", "Failed", 1);
        cr_assert(json_object_get_boolean(tu_json_get(b, "conflict")), "%s", json_object_to_json_string(b));
        cr_assert(strstr(tu_jstr(b, "message"), "out-of-band Helm release tools/tools") &&
                  strstr(tu_jstr(b, "message"), "50_my-tools.yaml"), "%s", tu_jstr(b, "message"));
        json_object_put(b);
        char *none = chart_file(1, "tools"), path[4500];
        cr_assert_null(none, "musterd's own HelmChart for tools is not on b: %s", none);
        snprintf(path, sizeof path, "%s/50_my-tools.yaml", mdir[1]);
        char *kept = tu_read_file(path, NULL);
        cr_assert_str_eq(kept, oob, "the out-of-band file is untouched");
        free(kept);
        json_object *p = proxy("tools");
        json_object *ready = condition(p, "ReleasesReady");
        cr_assert_str_eq(tu_jstr(ready, "status"), "False");
        cr_assert_str_eq(tu_jstr(ready, "reason"), "OutOfBandRelease", "%s", json_object_to_json_string(p));
        cr_assert(strstr(tu_jstr(ready, "message"), cid[1]), "names the cluster: %s", tu_jstr(ready, "message"));
        cr_assert_eq(json_object_get_int64(tu_json_get(p, "status.conflicts")), 1);
        json_object_put(p);
        /* Deleting the proxy removes what musterd installed, and only that. */
        json_object *o = NULL;
        long st = tu_http_json("DELETE", url("/api/v2/addon-proxies/tools"), md.admin_token, NULL, &o);
        cr_assert(st == 202 || st == 204, "%ld", st);
        json_object_put(o);
        wait_chart(0, "tools", NULL);
        wait_chart(2, "tools", NULL);
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        while (tu_http_json("GET", url("/api/v2/addon-proxies/tools"), md.admin_token, NULL, NULL) != 404)
                cr_assert_lt(tu_mono_ms(), deadline, "the proxy never went");
        kept = tu_read_file(path, NULL);
        cr_assert_str_eq(kept, oob, "still untouched");
        free(kept);
}

/* How many of proxy p's releases are Rolling at generation gen. */
static int rolling(const char *p, int64_t gen, json_object **all) {
        json_object *l = releases(p);
        int n = 0;
        for (size_t i = 0; i < json_object_array_length(l); i++) {
                json_object *r = json_object_array_get_idx(l, i);
                if (!strcmp(tu_jstr(r, "status"), "Rolling") && json_object_get_int64(tu_json_get(r, "generation")) == gen)
                        n++;
        }
        if (all)
                *all = l;
        else
                json_object_put(l);
        return n;
}

/* Wait until every release of p is Applied at revision rev, checking at
 * each look that at most one cluster rolls. */
static void one_at_a_time(const char *p, int64_t gen, int64_t rev) {
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        for (;;) {
                json_object *l;
                int n = rolling(p, gen, &l);
                cr_assert_leq(n, 1, "max_concurrent 1: %s", json_object_to_json_string(l));
                char *st = tu_join(l, "status"), *revs = tu_join(l, "revision");
                char want[64];
                snprintf(want, sizeof want, "%lld,%lld,%lld", (long long) rev, (long long) rev, (long long) rev);
                bool done = !strcmp(st, "Applied,Applied,Applied") && !strcmp(revs, want);
                free(st);
                free(revs);
                if (done) {
                        json_object_put(l);
                        return;
                }
                if (tu_mono_ms() > deadline)
                        cr_assert_fail("the rollout never finished: %s", json_object_to_json_string(l));
                json_object_put(l);
                usleep(100 * 1000);
        }
}

/* A staged rollout over the three clusters: one at a time; a stopped agent
 * fails its cluster and pauses the rollout; rollback. */
static void staged_rollout(void) {
        char *s = spec("roll", "{}", "v: one\nhosts: {{cluster.host_count}}\n",
                       "\"rollout\":{\"max_concurrent\":1,\"max_failures\":1,\"soak_seconds\":1,\"timeout_seconds\":6}");
        create_proxy(s);
        free(s);
        one_at_a_time("roll", 1, 1);
        wait_chart(0, "roll", "v: one\n    hosts: 1\n");
        patch("/api/v2/addon-proxies/roll", "{\"values_template\":\"v: two\\n\"}");
        one_at_a_time("roll", 2, 2);
        for (int i = 0; i < N; i++)
                wait_chart(i, "roll", "v: two");

        /* a's node agent stops: a (first by name) fails, the rollout pauses,
         * b and c are not touched. */
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0);
        patch("/api/v2/addon-proxies/roll", "{\"values_template\":\"v: three\\n\"}");
        json_object *a = wait_release("roll", "a", "Failed", 3);
        cr_assert(strstr(tu_jstr(a, "message"), "has not applied payload revision"), "%s", tu_jstr(a, "message"));
        json_object_put(a);
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        json_object *p;
        for (;;) {
                p = proxy("roll");
                if (json_object_get_boolean(tu_json_get(p, "paused")))
                        break;
                cr_assert_lt(tu_mono_ms(), deadline, "never paused: %s", json_object_to_json_string(p));
                json_object_put(p);
                usleep(250 * 1000);
        }
        cr_assert_str_eq(tu_jstr(condition(p, "RolloutPaused"), "status"), "True", "%s", json_object_to_json_string(p));
        cr_assert_str_eq(tu_jstr(condition(p, "SpecsUpToDate"), "reason"), "RolloutPaused");
        json_object_put(p);
        sleep(3); /* a few passes: nothing more starts while paused */
        json_object *l = releases("roll");
        json_object *b = tu_find_by(l, "cluster_name", "b"), *c = tu_find_by(l, "cluster_name", "c");
        cr_assert_eq(json_object_get_int64(tu_json_get(b, "revision")), 2, "%s", json_object_to_json_string(l));
        cr_assert_eq(json_object_get_int64(tu_json_get(c, "revision")), 2, "%s", json_object_to_json_string(l));
        json_object_put(l);
        wait_chart(1, "roll", "v: two");

        /* Rollback: a goes back to what it had (revision 4, v: two), once
         * its agent runs again; b and c keep revision 2. */
        char *out = NULL;
        cr_assert_eq(CTL(&out, "addon", "releases", "--proxy", "roll"), 0);
        cr_assert(strstr(out, "Failed") && strstr(out, "has not applied payload"), "%s", out);
        free(out);
        cr_assert_eq(CTL(NULL, "addon", "rollout", "rollback", "roll"), 0);
        json_object *o = proxy("roll");
        cr_assert_not(json_object_get_boolean(tu_json_get(o, "paused")));
        cr_assert_str_eq(tu_jstr(o, "values_template"), "v: two\n");
        json_object_put(o);
        start_node_agent(0);
        json_object *ar = wait_release("roll", "a", "Applied", 4);
        cr_assert_str_eq(tu_jstr(ar, "values"), "v: two\n");
        json_object_put(ar);
        wait_chart(0, "roll", "v: two");
        l = releases("roll");
        tu_assert_join(l, "revision", "4,2,2");
        json_object_put(l);
}

Test(addons_e2e, three_clusters_labels_templates_out_of_band_and_a_staged_rollout) {
        install_three();
        relabel();
        new_template();
        install_once();
        out_of_band();
        staged_rollout();
        /* The story is in the events. */
        json_object *ev = tu_admin_get(&md, "/api/v2/events?cluster_id=%s", cid[0]);
        const char *all = json_object_to_json_string(ev);
        cr_assert(strstr(all, "add-on mon: release revision 2 for cluster a"), "%s", all);
        json_object_put(ev);
        for (int i = 0; i < N; i++)
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "node agent %s", agents[i].name);
}
