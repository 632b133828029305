/* An installation driven through two musterd replicas on one PostgreSQL
 * database (issue 20; run through scripts/with-pg-test-server with
 * MUSTER_TEST_STORE=postgres). Replica a and replica b listen on the
 * coordinator's address of a fabric the test builds (network namespaces, one
 * bridge, 192.0.2.0/24); b's state folder is a copy of a's (the signing key
 * and admin token the admin copies) and both read OS images from one shared
 * folder. Three real agents boot against a and install into folders; the
 * admin's musterctl works through b alone: release import, cluster, binds,
 * install. Each step is seen the same from both replicas, the payload the
 * agents verify is signed with the key b hands out, and the installed
 * systems' node agents, pointed at b, finish what a started. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define COORD_ADDR "192.0.2.1"
#define A_BASE "http://" COORD_ADDR ":8090"
#define B_BASE "http://" COORD_ADDR ":8091"
#define N_AGENTS 3
#define WAIT_MS 90000

static const struct tu_node agents[N_AGENTS] = {
        { "master-0", "7c0ffee0-0000-4000-8000-000000000020", "192.0.2.20", "02:00:00:00:02:20" },
        { "master-1", "7c0ffee0-0000-4000-8000-000000000021", "192.0.2.21", "02:00:00:00:02:21" },
        { "master-2", "7c0ffee0-0000-4000-8000-000000000022", "192.0.2.22", "02:00:00:00:02:22" },
};

static struct tu_fabric fab;
static struct tu_musterd a, b;
static char *dir;
static int agent_pid[N_AGENTS] = { -1, -1, -1 };
static int sntpd_pid = -1, dnsd_pid = -1;

static void setup(void) {
        tu_require_pg_store();
        dir = tu_e2e_up(&fab, "r", COORD_ADDR, agents, N_AGENTS);
        char rel[4200];
        snprintf(rel, sizeof rel, "%s/images/rel-4.15.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        dnsd_pid = tu_e2e_c1_names(dir, COORD_ADDR);
}

static void teardown(void) {
        /* b shares a's database: a's free drops it. */
        b.pg_db[0] = '\0';
        tu_musterd_free(&b);
        tu_e2e_down(&fab, &a, agent_pid, N_AGENTS, &sntpd_pid, &dnsd_pid, &dir);
}

TestSuite(replicas_install, .init = setup, .fini = teardown, .timeout = 600);

#define CTL_B(out, ...) tu_ctl_admin(out, &b, (const char *const[]) { __VA_ARGS__, NULL })

/* a on a new database, then b on the same one with a copy of a's state. */
static void replicas_up(void) {
        char config[4600];
        snprintf(config, sizeof config,
                 "[agent]\ninstruction_interval = 1\n"
                 "[requirements]\ninstall_disk_fsync_ms = 10000\n"
                 "[requirements.master]\ncpu_cores = 2\n"
                 "[releases]\nimage_dir = %s/images\n",
                 dir);
        cr_assert_eq(tu_musterd_start_at(&a, COORD_ADDR ":8090", dir, config), 0, "replica a: see %s", a.log);
        tu_must("cp -a %s/state %s/state-b", dir, dir);
        cr_assert_geq(asprintf(&b.state_dir, "%s/state-b", dir), 0);
        cr_assert_geq(asprintf(&b.log, "%s/musterd-b.log", dir), 0);
        memcpy(b.pg_db, a.pg_db, sizeof b.pg_db);
        cr_assert_eq(tu_musterd_start_at(&b, COORD_ADDR ":8091", dir, config), 0, "replica b: see %s", b.log);
        cr_assert_str_eq(a.admin_token, b.admin_token);
}

/* Host i as both replicas show it once pred holds on each; the two answers
 * agree on status, cluster, role and revision. b's answer is returned. */
static json_object *wait_both(const char *ie, int i, tu_host_pred pred, const void *arg, const char *what) {
        json_object *ha = tu_wait_host(&a, ie, agents[i].host_id, pred, arg, WAIT_MS, what);
        json_object *hb = tu_wait_host(&b, ie, agents[i].host_id, pred, arg, WAIT_MS, what);
        static const char *const same[] = { "status", "cluster_id", "role", "applied_revision", "progress.stage" };
        for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
                json_object *va = tu_json_get(ha, same[k]), *vb = tu_json_get(hb, same[k]);
                const char *sa = va ? json_object_to_json_string(va) : "null";
                const char *sb = vb ? json_object_to_json_string(vb) : "null";
                cr_assert_str_eq(sa, sb, "host %d's %s: %s through a, %s through b", i, same[k], sa, sb);
        }
        json_object_put(ha);
        return hb;
}

static void cluster_both(const char *cid, const char *status) {
        json_object_put(tu_wait_cluster(&a, cid, tu_status_is, status, WAIT_MS, status));
        json_object_put(tu_wait_cluster(&b, cid, tu_status_is, status, WAIT_MS, status));
}

Test(replicas_install, agents_on_a_the_admin_on_b) {
        replicas_up();
        char *ie = tu_e2e_infra_env(&a, "rack-9", dir, &sntpd_pid, NULL);
        char token_file[4400], pub_file[4400], pub_a[4400];
        snprintf(token_file, sizeof token_file, "%s/agent.token", dir);
        /* The key the admin fetches from b is the one a signs with. */
        snprintf(pub_file, sizeof pub_file, "%s/coordinator.pub", dir);
        snprintf(pub_a, sizeof pub_a, "%s/coordinator-a.pub", dir);
        cr_assert_eq(CTL_B(NULL, "signing-key", "-o", pub_file), 0);
        cr_assert_eq(tu_ctl_admin(NULL, &a, (const char *const[]) { "signing-key", "-o", pub_a, NULL }), 0);
        tu_must("cmp %s %s", pub_file, pub_a);

        char targets[N_AGENTS][4200];
        for (int i = 0; i < N_AGENTS; i++) {
                snprintf(targets[i], sizeof targets[i], "%s/target-%d", dir, i);
                tu_must("mkdir -p %s", targets[i]);
                const struct tu_agent_run r = { "run", MUSTER_FIXTURES_DIR "/build-machine/root", A_BASE, ie,
                                                token_file, pub_file,
                                                (const char *const[]) { "--install-target", targets[i], NULL } };
                agent_pid[i] = tu_e2e_agent(&fab, agents, i, dir, &r);
        }

        /* Everything the admin does goes through b. */
        char rel[4200], ps[4200];
        snprintf(rel, sizeof rel, "%s/images/rel-4.15.0", dir);
        cr_assert_eq(CTL_B(NULL, "release", "import", rel), 0);
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_both(ie, i, tu_status_is, "known-unbound", "known-unbound"));
        cr_assert_eq(CTL_B(NULL, "cluster", "create", "c1", "--release", "4.15.0", "--base-domain", "example.test",
                           "--machine-cidr", "192.0.2.0/24", "--api-vip", "192.0.2.100", "--ingress-vip",
                           "192.0.2.101", "--baseline", "None", "--enable", "baremetal,Console"),
                     0);
        cr_assert_eq(tu_write_file(dir, "pull-secret", "{\"auths\":{}}"), 0);
        snprintf(ps, sizeof ps, "%s/pull-secret", dir);
        cr_assert_eq(CTL_B(NULL, "cluster", "set", "c1", "--pull-secret-file", ps), 0);
        json_object *c = tu_ctl_json(&b, (const char *const[]) { "cluster", "show", "c1", NULL });
        char *cid = strdup(tu_jstr(c, "id"));
        json_object_put(c);
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert_eq(CTL_B(NULL, "host", "bind", agents[i].host_id, "--cluster", "c1"), 0);
        for (int i = 0; i < N_AGENTS; i++) {
                json_object *h = wait_both(ie, i, tu_status_is, "known", "known in c1");
                cr_assert_str_eq(tu_jstr(h, "cluster_id"), cid);
                json_object_put(h);
        }
        cluster_both(cid, "ready");

        /* Installed through b; the agents, on a, write the payload b's key
         * signed, then wait for their installed systems. */
        char *out = NULL;
        cr_assert_eq(CTL_B(&out, "cluster", "install", "c1"), 0, "%s", out);
        free(out);
        for (int i = 0; i < N_AGENTS; i++) {
                json_object *h = wait_both(ie, i, tu_written, NULL, "written, waiting for its installed system");
                cr_assert_eq(json_object_get_int64(tu_json_get(h, "applied_revision")), 1);
                cr_assert_str_eq(tu_jstr(h, "role"), "master");
                json_object_put(h);
        }
        cluster_both(cid, "installing");
        char img[4300];
        snprintf(img, sizeof img, "%s/os.img", rel);
        for (int i = 0; i < N_AGENTS; i++) {
                tu_must("cmp %s/os-image.img %s", targets[i], img);
                char p[4300];
                cr_assert_lt((size_t) snprintf(p, sizeof p, "%s/etc/muster/role", targets[i]), sizeof p);
                char *role = tu_read_file(p, NULL);
                cr_assert_str_eq(role, "master\n");
                free(role);
        }

        /* The installed systems' node agents check in through b, each with
         * the host token its agent.conf holds: installed, on both. */
        for (int i = 0; i < N_AGENTS; i++) {
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "run agent %d exits cleanly", i);
                char conf[4300], md[4300], name[64], tok[4300];
                cr_assert_lt((size_t) snprintf(conf, sizeof conf, "%s/etc/muster/agent.conf", targets[i]), sizeof conf);
                char *t = tu_agent_conf_token(conf);
                cr_assert_not_null(t, "no token in %s", conf);
                snprintf(name, sizeof name, "host-%d.token", i);
                cr_assert_eq(tu_write_file(dir, name, t), 0);
                free(t);
                snprintf(tok, sizeof tok, "%s/%s", dir, name);
                cr_assert_lt((size_t) snprintf(md, sizeof md, "%s/etc/muster/manifests", targets[i]), sizeof md);
                const struct tu_agent_run r = { "node", NULL, B_BASE, ie, tok, pub_file,
                                                (const char *const[]) { "--manifest-dir", md, NULL } };
                agent_pid[i] = tu_e2e_agent(&fab, agents, i, dir, &r);
        }
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_both(ie, i, tu_status_is, "installed", "installed"));
        cluster_both(cid, "installed");
        cr_assert_eq(tu_ctl_admin(&out, &a, (const char *const[]) { "cluster", "watch", "c1", "--timeout", "10", NULL }),
                     0, "%s", out);
        cr_assert(strstr(out, "installed"), "musterctl through a:\n%s", out);
        free(out);
        free(cid);
        free(ie);
}
