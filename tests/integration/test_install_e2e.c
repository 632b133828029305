/* Installing a cluster end to end (issue 4), the way a user does it:
 * `musterctl release import`, `cluster create --release --baseline --enable`,
 * `host bind`, `cluster install`, `cluster watch`, then day 2 with
 * `muster-agent node`, `cluster capabilities` and `cluster upgrade`.
 * musterd and three real agents, each in a network namespace the test
 * builds (one bridge, veths, 192.0.2.0/24), each reading a variant of the
 * captured build machine. The agents install into --install-target files
 * and folders under the test's temp dir, never a disk. The second test
 * shows an agent refusing a payload with one byte changed in the store,
 * and one signed by another key: it reports why and writes nothing. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootcfg.h"
#include "crypto.h"
#include "testutil.h"

#define COORD_ADDR "192.0.2.1"
#define PORT "8090"
#define BASE "http://" COORD_ADDR ":" PORT
#define N_AGENTS 3
#define WAIT_MS 90000

static const struct tu_node agents[N_AGENTS] = {
        { "master-0", "7c0ffee0-0000-4000-8000-000000000010", "192.0.2.10", "02:00:00:00:02:10" },
        { "master-1", "7c0ffee0-0000-4000-8000-000000000011", "192.0.2.11", "02:00:00:00:02:11" },
        { "master-2", "7c0ffee0-0000-4000-8000-000000000012", "192.0.2.12", "02:00:00:00:02:12" },
};

static struct tu_fabric fab;
static struct tu_musterd md;
static char *dir;
static int agent_pid[N_AGENTS] = { -1, -1, -1 };
static char token_file[4400], pub_file[4400];

/* ---- helpers ------------------------------------------------------------ */

#define url(...) tu_url(BASE, __VA_ARGS__)

/* musterctl --server BASE --token-file ADMIN args... (tu_ctl_admin). */
#define CTL(out, ...) tu_ctl_admin(out, &md, (const char *const[]) { __VA_ARGS__, NULL })

static json_object *wait_host(const char *ie, int i, tu_host_pred pred, const void *arg, const char *what) {
        return tu_wait_host(&md, ie, agents[i].host_id, pred, arg, WAIT_MS, what);
}

static json_object *wait_cluster(const char *cid, const char *status) {
        return tu_wait_cluster(&md, cid, tu_status_is, status, WAIT_MS, status);
}

/* Every manifest in mdir is byte for byte its source document in the
 * release dir rel: a one-document file is the source file; "x.K.yaml" are
 * the documents of "x.yaml", which together give the file back. */
static void check_manifest_bytes(const char *mdir, const char *rel, const char *const *files) {
        for (; *files; files++) {
                char a[8400], b[8400];
                snprintf(a, sizeof a, "%s/%s", mdir, *files);
                size_t la, lb;
                char *got = tu_read_file(a, &la);
                cr_assert_not_null(got, "%s was written", a);
                const char *dot = strchr(*files, '.');
                if (dot && dot[1] >= '0' && dot[1] <= '9') {
                        /* the documents of a multi-document source */
                        char stem[512];
                        snprintf(stem, sizeof stem, "%.*s", (int) (dot - *files), *files);
                        snprintf(b, sizeof b, "%s/%s%s", rel, stem, strchr(dot + 1, '.'));
                        char *src = tu_read_file(b, &lb);
                        cr_assert_not_null(src, "%s", b);
                        cr_assert(memmem(src, lb, got, la) != NULL, "%s is a document of %s", a, b);
                        free(src);
                } else {
                        snprintf(b, sizeof b, "%s/%s", rel, *files);
                        char *src = tu_read_file(b, &lb);
                        cr_assert_not_null(src, "%s", b);
                        cr_assert(la == lb && memcmp(got, src, la) == 0, "%s equals %s", a, b);
                        free(src);
                }
                free(got);
        }
}

/* ---- the fabric ----------------------------------------------------------- */

static int sntpd_pid = -1, dnsd_pid = -1;

/* The discovery ISO template (tu_pxe_template). */
#define TPL_SIZE TU_TPL_SIZE
#define TPL_KERNEL_OFF TU_TPL_KERNEL_OFF
#define TPL_KERNEL_SIZE TU_TPL_KERNEL_SIZE
#define TPL_INITRD_OFF TU_TPL_INITRD_OFF
#define TPL_INITRD_SIZE TU_TPL_INITRD_SIZE
#define TPL_CMDLINE TU_TPL_CMDLINE
static uint8_t *tpl;

static void setup(void) {
        dir = tu_e2e_up(&fab, "i", COORD_ADDR, agents, N_AGENTS);
        tpl = tu_pxe_template(dir);
        /* The two fixture releases, each with its OS image. */
        char rel[4200];
        snprintf(rel, sizeof rel, "%s/state/images/rel-4.15.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        snprintf(rel, sizeof rel, "%s/state/images/rel-4.16.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.16.0", rel);
        cr_assert_eq(tu_write_file(dir, "hosts",
                                   "127.0.0.1 localhost\n"
                                   "192.0.2.100 api.c1.example.test api-int.c1.example.test\n"
                                   "192.0.2.10 api.sno-a.example.test api-int.sno-a.example.test\n"
                                   "192.0.2.11 api.sno-b.example.test api-int.sno-b.example.test\n"), 0);
        /* The wildcard ingress names need a DNS server (no hosts file has them). */
        cr_assert_gt(dnsd_pid = tu_dnsd_start(COORD_ADDR, dir,
                                              "*.apps.c1.example.test 192.0.2.101\n"
                                              "*.apps.sno-a.example.test 192.0.2.10\n"
                                              "*.apps.sno-b.example.test 192.0.2.11\n"),
                     0, "the DNS server started");
}

/* A failed FILE-target test may leave a mount behind: tu_e2e_down takes
 * it away. */
static void teardown(void) {
        free(tpl);
        tpl = NULL;
        tu_e2e_down(&fab, &md, agent_pid, N_AGENTS, &sntpd_pid, &dnsd_pid, &dir);
}

TestSuite(install_e2e, .init = setup, .fini = teardown);

/* musterd in the coordinator's namespace (again on the same state after a
 * stop). */
static void start_musterd(void) {
        char config[8192];
        snprintf(config, sizeof config, "[iso]\ntemplate = %s/discovery.iso\n"
                                        "[agent]\ninstruction_interval = 1\n"
                                         /* A shared, busy VM's disk: the check runs, its
                                          * limit is not what is tested here. */
                                         "[requirements]\ninstall_disk_fsync_ms = 10000\n"
                                         "[requirements.master]\ncpu_cores = 2\n"
                                         "[requirements.sno]\ncpu_cores = 2\n", dir);
        cr_assert_eq(tu_musterd_start_at(&md, COORD_ADDR ":" PORT, dir, config), 0, "musterd did not answer; see %s",
                     md.log);
}

/* muster-agent run|node for agent i in its namespace, with the test's
 * /etc/hosts and resolv.conf bind-mounted privately; run reads the build
 * machine as if booted from the ISO, with its own name (tu_e2e_agent).
 * extra: more arguments, NULL-ended. */
static void start_agent(int i, const char *mode, const char *ie, const char *key_file, const char *const *extra) {
        const struct tu_agent_run r = { mode, MUSTER_FIXTURES_DIR "/build-machine/root", BASE, ie, token_file, key_file,
                                        extra };
        agent_pid[i] = tu_e2e_agent(&fab, agents, i, dir, &r);
}

/* An infra-env whose hosts check their clocks against an SNTP server
 * beside musterd (this process is in musterd's namespace). */
#define SSH_KEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMusterE2eKey admin@rack-7"

static char *new_infra_env(void) {
        char *ie = tu_e2e_infra_env(&md, "rack-7", dir, &sntpd_pid, "\"ssh_authorized_key\":\"" SSH_KEY "\"");
        snprintf(token_file, sizeof token_file, "%s/agent.token", dir);
        return ie;
}

/* musterd, an infra-env (its id) and the coordinator's key in pub_file, as
 * the install tests start. */
static char *start_with_key(void) {
        start_musterd();
        char *ie = new_infra_env();
        snprintf(pub_file, sizeof pub_file, "%s/coordinator.pub", dir);
        cr_assert_eq(CTL(NULL, "signing-key", "-o", pub_file), 0);
        return ie;
}

static char *cluster_id(const char *name) {
        char *out = NULL;
        cr_assert_eq(CTL(&out, "-o", "json", "cluster", "show", name), 0);
        json_object *o = json_tokener_parse(out);
        cr_assert_not_null(o, "%s", out);
        char *id = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        free(out);
        return id;
}

/* The 8 files baseline None + [baremetal, Console] gets from 4.15.0
 * (tests/fixtures/releases/README.md), and what days 2 and 3 change. */
static const char *const rev1_files[] = {
        "0000_03_config-operator_01_proxy.crd.yaml",
        "0000_20_namespace.json",
        "0000_30_cluster-baremetal-operator_05_deployment.0.yaml",
        "0000_30_cluster-baremetal-operator_05_deployment.1.yaml",
        "0000_50_console-operator_07-downloads-deployment.yaml",
        "0000_50_insights-operator_10-prometheus-rule.yaml",
        "0000_80_hosted-only-configmap.yaml",
        "99_site-config.yml",
        NULL,
};
#define REV1_LISTING                                                                                               \
        "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"                                        \
        "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,0000_30_cluster-baremetal-operator_05_deployment.1.yaml," \
        "0000_50_console-operator_07-downloads-deployment.yaml,0000_50_insights-operator_10-prometheus-rule.yaml,"  \
        "0000_80_hosted-only-configmap.yaml,99_site-config.yml"
/* + Insights: the Console+Insights plugin joins. */
#define REV2_LISTING                                                                                               \
        "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"                                        \
        "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,0000_30_cluster-baremetal-operator_05_deployment.1.yaml," \
        "0000_50_console-operator_07-downloads-deployment.yaml,0000_50_insights-operator_10-prometheus-rule.yaml,"  \
        "0000_80_hosted-only-configmap.yaml,0000_90_console_01-console-insights-plugin.yaml,99_site-config.yml"
/* 4.16.0: downloads moved to _08, site config gone; ImageRegistry stays off. */
#define REV3_LISTING                                                                                               \
        "0000_03_config-operator_01_proxy.crd.yaml,0000_20_namespace.json,"                                        \
        "0000_30_cluster-baremetal-operator_05_deployment.0.yaml,0000_30_cluster-baremetal-operator_05_deployment.1.yaml," \
        "0000_50_console-operator_08-downloads-deployment.yaml,0000_50_insights-operator_10-prometheus-rule.yaml,"  \
        "0000_80_hosted-only-configmap.yaml,0000_90_console_01-console-insights-plugin.yaml"

static void mount_root(const char *img, const char *mnt) {
        tu_must("mkdir -p %s", mnt);
        /* The fixture image's root partition starts at 1 MiB. */
        tu_must("mount -o loop,ro,offset=1048576 %s %s", img, mnt);
}

/* The installed disk image boots, as the test has it: its root file
 * system mounted (read-write) on mnt, and the node agent's host token from
 * its agent.conf in DIR/token_name, which token_file then names. */
static void boot_disk_image(const char *img, const char *mnt, const char *token_name) {
        char conf[4400];
        tu_must("mount -o loop,offset=1048576 %s %s", img, mnt);
        snprintf(conf, sizeof conf, "%s/etc/muster/agent.conf", mnt);
        char *tok = tu_agent_conf_token(conf);
        cr_assert_not_null(tok, "no token in %s", conf);
        cr_assert_eq(tu_write_file(dir, token_name, tok), 0);
        free(tok);
        snprintf(token_file, sizeof token_file, "%s/%s", dir, token_name);
}

/* ---- install, day 2, upgrade ---------------------------------------------- */

Test(install_e2e, three_hosts_install_then_day2_and_upgrade) {
        char *out = NULL;
        char *ie = start_with_key();

        /* Targets: two folders and one disk image file. */
        char t0[4200], t1[4200], t2[4200];
        snprintf(t0, sizeof t0, "%s/target-0", dir);
        snprintf(t1, sizeof t1, "%s/target-1", dir);
        snprintf(t2, sizeof t2, "%s/target-2.img", dir);
        tu_must("mkdir -p %s %s", t0, t1);
        const char *targets[N_AGENTS] = { t0, t1, t2 };
        for (int i = 0; i < N_AGENTS; i++)
                start_agent(i, "run", ie, pub_file, (const char *const[]) { "--install-target", targets[i], NULL });

        /* The release, as a user imports and previews it. */
        char rel15[4200], rel16[4200];
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        snprintf(rel16, sizeof rel16, "%s/state/images/rel-4.16.0", dir);
        cr_assert_eq(CTL(&out, "release", "import", rel15), 0);
        cr_assert(strstr(out, "4.15.0"), "%s", out);
        free(out);
        cr_assert_eq(CTL(NULL, "release", "import", rel16), 0);

        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_status_is, "known-unbound", "known-unbound"));
        cr_assert_eq(CTL(NULL, "cluster", "create", "c1", "--release", "4.15.0", "--base-domain", "example.test",
                         "--machine-cidr", "192.0.2.0/24", "--api-vip", "192.0.2.100", "--ingress-vip", "192.0.2.101",
                         "--baseline", "None", "--enable", "baremetal,Console"), 0);
        char *cid = cluster_id("c1");
        cr_assert_eq(tu_write_file(dir, "pull-secret", "{\"auths\":{}}"), 0);
        char ps[4200];
        snprintf(ps, sizeof ps, "%s/pull-secret", dir);
        cr_assert_eq(CTL(NULL, "cluster", "set", "c1", "--pull-secret-file", ps), 0);
        /* A hostname set by the admin is the one the installed system gets. */
        cr_assert_eq(CTL(NULL, "host", "set", agents[0].host_id, "--hostname", "node-zero"), 0);
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert_eq(CTL(NULL, "host", "bind", agents[i].host_id, "--cluster", "c1"), 0);
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_status_is, "known", "known in c1"));
        json_object_put(wait_cluster(cid, "ready"));

        /* Install: every byte written, each host then waits for its
         * installed system to check in (issue 13, item 6). */
        cr_assert_eq(CTL(&out, "cluster", "install", "c1"), 0, "%s", out);
        free(out);
        for (int i = 0; i < N_AGENTS; i++) {
                json_object *h = wait_host(ie, i, tu_written, NULL, "written, waiting for its installed system");
                cr_assert_str_eq(tu_jstr(h, "status"), "installing-in-progress");
                cr_assert_eq(json_object_get_int64(tu_json_get(h, "progress.percent")), 100);
                cr_assert_eq(json_object_get_int64(tu_json_get(h, "applied_revision")), 1);
                json_object_put(h);
        }
        json_object *c = tu_admin_get(&md, "/api/v2/clusters/%s", cid);
        cr_assert_str_eq(tu_jstr(c, "status"), "installing", "not before the installed systems check in");
        cr_assert_eq(json_object_get_int64(tu_json_get(c, "payload_revision")), 1);
        json_object_put(c);

        /* Roles were assigned: three masters. */
        json_object *hl = tu_admin_get(&md, "/api/v2/hosts?cluster_id=%s", cid);
        for (size_t i = 0; i < json_object_array_length(hl); i++)
                cr_assert_str_eq(tu_jstr(json_object_array_get_idx(hl, i), "role"), "master");
        json_object_put(hl);

        /* What landed: the image, and exactly the filtered manifests. */
        char img15[4400];
        snprintf(img15, sizeof img15, "%s/os.img", rel15);
        for (int i = 0; i < 2; i++) {
                char p[4300];
                snprintf(p, sizeof p, "%s/os-image.img", targets[i]);
                tu_must("cmp %s %s", p, img15);
                snprintf(p, sizeof p, "%s/etc/muster/manifests", targets[i]);
                char *l = tu_listing(p);
                cr_assert_str_eq(l, REV1_LISTING, "target %d", i);
                free(l);
                check_manifest_bytes(p, rel15, rev1_files);
                /* Beside them, what the installed host's node agent needs: its
                 * own host token (issue 13, item 3), not the ISO's. */
                char *conf = NULL, *tok = NULL, want[4600];
                cr_assert_eq(tu_runf(&conf, NULL, "cat %s/etc/muster/agent.conf", targets[i]), 0);
                cr_assert_eq(tu_runf(&tok, NULL, "cat %s", token_file), 0);
                tok[strcspn(tok, "\r\n")] = '\0';
                snprintf(want, sizeof want, "\ncoordinator = " BASE "\ninfra_env = %s\ntoken = ", ie);
                char *at = strstr(conf, want);
                cr_assert(at, "agent.conf:\n%s", conf);
                at += strlen(want);
                at[strcspn(at, "\n")] = '\0';
                cr_assert_str_neq(at, tok, "the host's own token, not the infra-env's");
                char name[64];
                snprintf(name, sizeof name, "host-%d.token", i);
                cr_assert_eq(tu_write_file(dir, name, at), 0);
                free(conf);
                free(tok);
                tu_must("cmp %s %s/etc/muster/coordinator.pub", pub_file, targets[i]);
                struct stat cst;
                snprintf(p, sizeof p, "%s/etc/muster/agent.conf", targets[i]);
                cr_assert_eq(stat(p, &cst), 0);
                cr_assert_eq(cst.st_mode & 07777, 0600, "agent.conf holds the token: mode %o", cst.st_mode & 07777);
                /* The host's settings (issue 13, item 4), as the coordinator
                 * has them for this host. */
                json_object *h = tu_admin_get(&md, "/api/v2/infra-envs/%s/hosts/%s", ie, agents[i].host_id);
                char want_name[300];
                snprintf(want_name, sizeof want_name, "%s\n", tu_jstr(h, "requested_hostname")
                                                                   ? tu_jstr(h, "requested_hostname")
                                                                   : tu_jstr(h, "inventory.hostname"));
                json_object_put(h);
                snprintf(p, sizeof p, "%s/etc/hostname", targets[i]);
                char *got = tu_read_file(p, NULL);
                cr_assert_str_eq(got, want_name, "target %d", i);
                if (i == 0)
                        cr_assert_str_eq(got, "node-zero\n", "the hostname the admin set");
                free(got);
                snprintf(p, sizeof p, "%s/etc/muster/role", targets[i]);
                got = tu_read_file(p, NULL);
                cr_assert_str_eq(got, "master\n");
                free(got);
                snprintf(p, sizeof p, "%s/etc/muster/host.env", targets[i]);
                got = tu_read_file(p, NULL);
                cr_assert(strstr(got, "\nMUSTER_API_VIP=192.0.2.100\n") && strstr(got, "\nMUSTER_INGRESS_VIP=192.0.2.101\n") &&
                                  strstr(got, "\nMUSTER_BASE_DOMAIN=example.test\n") &&
                                  strstr(got, "\nMUSTER_CLUSTER_NAME=c1\n"),
                          "%s", got);
                free(got);
                snprintf(p, sizeof p, "%s/etc/muster/pull-secret.json", targets[i]);
                got = tu_read_file(p, NULL);
                cr_assert_str_eq(got, "{\"auths\":{}}");
                free(got);
                cr_assert_eq(stat(p, &cst), 0);
                cr_assert_eq(cst.st_mode & 07777, 0600, "the pull secret is private: mode %o", cst.st_mode & 07777);
                snprintf(p, sizeof p, "%s/root/.ssh/authorized_keys", targets[i]);
                got = tu_read_file(p, NULL);
                cr_assert_str_eq(got, SSH_KEY "\n", "the infra-env's SSH key");
                free(got);
                snprintf(p, sizeof p, "%s/etc/systemd/timesyncd.conf.d/50-muster.conf", targets[i]);
                got = tu_read_file(p, NULL);
                cr_assert(got && strstr(got, "[Time]\nNTP="), "%s", got ? got : "(none)");
                free(got);
        }
        char mnt[4200], mdir[4300];
        snprintf(mnt, sizeof mnt, "%s/mnt", dir);
        mount_root(t2, mnt);
        snprintf(mdir, sizeof mdir, "%s/etc/muster/manifests", mnt);
        char *l = tu_listing(mdir);
        cr_assert_str_eq(l, REV1_LISTING, "disk image target");
        free(l);
        check_manifest_bytes(mdir, rel15, rev1_files);
        snprintf(mdir, sizeof mdir, "%s/etc/muster/role", mnt);
        l = tu_read_file(mdir, NULL);
        cr_assert_str_eq(l, "master\n", "the settings are in the disk image's root file system");
        free(l);
        tu_must("umount %s", mnt);
        /* Outside the root partition the disk image is the OS image. */
        tu_must("cmp -n 1048576 %s %s", t2, img15);

        /* Day 2: the installed hosts run the node agent on their manifest
         * dirs, with the host tokens from their agent.conf; the infra-env's
         * token is rotated first, and that does not cut them off. */
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "run agent %s exits cleanly", agents[i].name);
        cr_assert_eq(CTL(&out, "infraenv", "rotate-token", ie), 0);
        free(out);
        char md0[4300], md1[4300];
        snprintf(md0, sizeof md0, "%s/etc/muster/manifests", t0);
        snprintf(md1, sizeof md1, "%s/etc/muster/manifests", t1);
        cr_assert_eq(tu_write_file(md0, "local-extra.yaml", "kind: ConfigMap\n"), 0);
        snprintf(token_file, sizeof token_file, "%s/host-0.token", dir);
        start_agent(0, "node", ie, pub_file, (const char *const[]) { "--manifest-dir", md0, NULL });
        snprintf(token_file, sizeof token_file, "%s/host-1.token", dir);
        start_agent(1, "node", ie, pub_file, (const char *const[]) { "--manifest-dir", md1, NULL });
        /* The disk image's installed system boots too: its node agent on
         * its root file system, with the token from its own agent.conf. */
        char md2[4300];
        boot_disk_image(t2, mnt, "host-2.token");
        snprintf(md2, sizeof md2, "%s/etc/muster/manifests", mnt);
        start_agent(2, "node", ie, pub_file, (const char *const[]) { "--manifest-dir", md2, NULL });

        /* Their first check-ins: installed, and the cluster with them. */
        cr_assert_eq(CTL(&out, "cluster", "watch", "c1", "--interval", "1", "--timeout", "120"), 0, "%s", out);
        cr_assert(strstr(out, "installed"), "%s", out);
        free(out);
        json_object_put(wait_cluster(cid, "installed"));
        for (int i = 0; i < N_AGENTS; i++) {
                json_object *h = wait_host(ie, i, tu_status_is, "installed", "installed");
                cr_assert_str_eq(tu_jstr(h, "progress.stage"), "done");
                cr_assert_eq(json_object_get_int64(tu_json_get(h, "progress.percent")), 100);
                cr_assert_eq(json_object_get_int64(tu_json_get(h, "applied_revision")), 1);
                json_object_put(h);
        }

        cr_assert_eq(CTL(&out, "cluster", "capabilities", "c1", "--enable", "Insights"), 0);
        free(out);
        int64_t rev = 2;
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied revision 2"));
        l = tu_listing(md1);
        cr_assert_str_eq(l, REV2_LISTING);
        free(l);
        /* A file the payload never wrote is left alone. */
        l = tu_listing(md0);
        cr_assert(strstr(l, "local-extra.yaml"), "%s", l);
        free(l);

        /* Asking to drop Insights keeps it: the condition says so. */
        cr_assert_eq(CTL(&out, "cluster", "capabilities", "c1", "--disable", "Insights"), 0);
        cr_assert(strstr(out, "Insights"), "%s", out);
        free(out);
        c = tu_admin_get(&md, "/api/v2/clusters/%s", cid);
        cr_assert(strstr(json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities")),
                         "\"Insights\""), "%s", json_object_to_json_string(c));
        cr_assert_str_eq(tu_jstr(c, "conditions.0.type"), "ImplicitlyEnabledCapabilities");
        cr_assert_str_eq(tu_jstr(c, "conditions.0.status"), "True");
        cr_assert_str_eq(tu_jstr(c, "conditions.0.reason"), "CapabilitiesImplicitlyEnabled");
        cr_assert(strstr(tu_jstr(c, "conditions.0.message"), "Insights"), "%s", tu_jstr(c, "conditions.0.message"));
        rev = json_object_get_int64(tu_json_get(c, "payload_revision"));
        json_object_put(c);

        /* Upgrade: the manifests follow the new release. */
        cr_assert_eq(CTL(&out, "cluster", "upgrade", "c1", "--release", "4.16.0"), 0);
        free(out);
        c = tu_admin_get(&md, "/api/v2/clusters/%s", cid);
        cr_assert_str_eq(tu_jstr(c, "release_version"), "4.16.0");
        cr_assert(!strstr(json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities")),
                          "ImageRegistry"), "a new manifest's capability is never implicit");
        rev = json_object_get_int64(tu_json_get(c, "payload_revision"));
        cr_assert_gt(rev, 2);
        json_object_put(c);
        for (int i = 0; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, tu_applied, &rev, "applied the upgrade"));
        l = tu_listing(md1);
        cr_assert_str_eq(l, REV3_LISTING);
        free(l);
        static const char *const changed[] = { "0000_50_insights-operator_10-prometheus-rule.yaml",
                                               "0000_50_console-operator_08-downloads-deployment.yaml", NULL };
        check_manifest_bytes(md1, rel16, changed);
        cr_assert_eq(CTL(&out, "cluster", "payload", "c1"), 0);
        cr_assert(strstr(out, "4.16.0"), "%s", out);
        free(out);

        /* The disk image's node agent followed too. */
        l = tu_listing(md2);
        cr_assert_str_eq(l, REV3_LISTING, "disk image target");
        free(l);
        for (int i = 0; i < N_AGENTS; i++)
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "node agent %s exits cleanly", agents[i].name);
        tu_must("umount %s", mnt);
        cr_assert_eq(tu_stop(&md.pid, SIGTERM), 0, "musterd");
        free(cid);
        free(ie);
}

/* ---- refusals --------------------------------------------------------------- */

/* Change one byte of a stored payload revision (musterd stopped). */
static void tamper_payload(const char *cid) {
        tu_tamper_stored_payload(&md, cid, 1, "site: rack-7", "site: rack-8");
}

static bool failed_with(json_object *h, const void *what) {
        return strcmp(tu_jstr(h, "status"), "error") == 0 && strstr(tu_jstr(h, "status_info"), what);
}

static bool events_of(const char *cid, const char *needle);

/* No logs are asked of the host any more (tu_host_pred). */
static bool logs_uploaded(json_object *h, const void *unused) {
        (void) unused;
        return !tu_json_get(h, "pending_actions");
}

Test(install_e2e, tampered_or_foreign_payload_refused_nothing_written) {
        start_musterd();
        char *ie = new_infra_env();
        snprintf(pub_file, sizeof pub_file, "%s/state/signing-key.pub", dir);
        /* Another key's public half, as a wrong ISO config would carry. */
        struct crypto_key *other;
        char *pem;
        cr_assert_eq(crypto_key_generate(&other), 0);
        cr_assert_eq(crypto_key_public_pem(other, &pem), 0);
        cr_assert_eq(tu_write_file(dir, "other.pub", pem), 0);
        free(pem);
        crypto_key_free(other);
        char other_pub[4200], ta[4200], tb[4200], rel15[4200];
        snprintf(other_pub, sizeof other_pub, "%s/other.pub", dir);
        snprintf(ta, sizeof ta, "%s/target-a", dir);
        snprintf(tb, sizeof tb, "%s/target-b", dir);
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        tu_must("mkdir -p %s %s", ta, tb);
        cr_assert_eq(CTL(NULL, "release", "import", rel15), 0);

        /* Host 0 trusts another key; host 1 the right one. */
        start_agent(0, "run", ie, other_pub, (const char *const[]) { "--install-target", ta, NULL });
        start_agent(1, "run", ie, pub_file, (const char *const[]) { "--install-target", tb, NULL });
        const char *names[2] = { "sno-a", "sno-b" };
        char *cid[2];
        for (int i = 0; i < 2; i++) {
                json_object_put(wait_host(ie, i, tu_status_is, "known-unbound", "known-unbound"));
                cr_assert_eq(CTL(NULL, "cluster", "create", names[i], "--release", "4.15.0", "--single-node",
                                 "--base-domain", "example.test", "--machine-cidr", "192.0.2.0/24"), 0);
                cid[i] = cluster_id(names[i]);
                cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", cid[i]), md.admin_token,
                                          "{\"pull_secret\":\"{\\\"auths\\\":{}}\"}", NULL), 200);
                cr_assert_eq(CTL(NULL, "host", "bind", agents[i].host_id, "--cluster", names[i]), 0);
        }
        for (int i = 0; i < 2; i++) {
                json_object_put(wait_host(ie, i, tu_status_is, "known", "known"));
                json_object_put(wait_cluster(cid[i], "ready"));
        }
        /* Host 1's agent is frozen while its payload is built and changed
         * (musterd stopped for the change), then thawed. */
        cr_assert_eq(kill(agent_pid[1], SIGSTOP), 0);
        for (int i = 0; i < 2; i++)
                cr_assert_eq(CTL(NULL, "cluster", "install", names[i]), 0);
        cr_assert_eq(tu_stop(&md.pid, SIGTERM), 0);
        tamper_payload(cid[1]);
        start_musterd();
        cr_assert_eq(kill(agent_pid[1], SIGCONT), 0);

        json_object *h = wait_host(ie, 0, failed_with, "signature", "refused the foreign signature");
        cr_assert(strstr(tu_jstr(h, "status_info"), "refused"), "%s", tu_jstr(h, "status_info"));
        json_object_put(h);
        h = wait_host(ie, 1, failed_with, "digest", "refused the changed byte");
        json_object_put(h);
        for (int i = 0; i < 2; i++) {
                json_object *c = wait_cluster(cid[i], "error");
                cr_assert(strstr(tu_jstr(c, "status_info"), agents[i].name), "the cluster names the host: %s",
                          tu_jstr(c, "status_info"));
                json_object_put(c);
        }
        /* Nothing was written to either target. */
        char *l = tu_listing(ta);
        cr_assert_str_eq(l, "", "target a untouched");
        free(l);
        l = tu_listing(tb);
        cr_assert_str_eq(l, "", "target b untouched");
        free(l);
        /* The events say why. */
        json_object *ev = tu_admin_get(&md, "/api/v2/events?cluster_id=%s", cid[1]);
        cr_assert(strstr(json_object_to_json_string(ev), "digest"), "%s", json_object_to_json_string(ev));
        json_object_put(ev);
        /* The failed hosts' agents were asked for their logs, unasked by the
         * admin: host 0's tell of the refusal. */
        cr_assert(events_of(cid[0], "for its logs after the failed install"));
        json_object_put(wait_host(ie, 0, logs_uploaded, NULL, "its logs uploaded"));
        char logs[4300], *text = NULL;
        snprintf(logs, sizeof logs, "%s/failed-0.tar.gz", dir);
        cr_assert_eq(CTL(NULL, "host", "logs", agents[0].host_id, "-o", logs), 0);
        cr_assert_eq(tu_runf(&text, NULL, "tar -xzOf %s agent.log", logs), 0);
        cr_assert(text && strstr(text, "payload refused") && strstr(text, "signature"), "%s", text ? text : "");
        free(text);
        for (int i = 0; i < 2; i++) {
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "agent %s", agents[i].name);
                free(cid[i]);
        }
        cr_assert_eq(tu_stop(&md.pid, SIGTERM), 0, "musterd");
        free(ie);
}

/* ---- an image server that fails at first ------------------------------------ */

/* An OS image server on the coordinator's address (the test's own, real
 * HTTP): its first `fail_first` GETs answer 503, the rest the image. */
struct flaky_server {
        struct MHD_Daemon *d;
        const char *image;       /* path */
        int fail_first;
        atomic_int requests;
};

/* An image server answering with `answer` on the coordinator's address, and
 * release 4.15.0 (a copy of rel-4.15.0) imported naming its image by URL on
 * that server. */
static struct MHD_Daemon *image_server_with_release(MHD_AccessHandlerCallback answer, void *cls) {
        struct MHD_Daemon *d = MHD_start_daemon(
                MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, answer, cls,
                MHD_OPTION_SOCK_ADDR, &(struct sockaddr_in) { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0xC0000201) },
                MHD_OPTION_END);
        cr_assert_not_null(d, "image server on " COORD_ADDR);
        unsigned port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;

        char rel15[4200], rel_url[4200], yaml_path[4300], *yaml, *text = NULL;
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        snprintf(rel_url, sizeof rel_url, "%s/state/images/rel-url", dir);
        tu_must("cp -r %s %s", rel15, rel_url);
        snprintf(yaml_path, sizeof yaml_path, "%s/release.yaml", rel_url);
        size_t ylen;
        cr_assert_not_null(yaml = tu_read_file(yaml_path, &ylen));
        char *at = strstr(yaml, "\n  path: os.img\n");
        cr_assert_not_null(at, "%s", yaml);
        *at = '\0';
        cr_assert(asprintf(&text, "%s\n  url: http://" COORD_ADDR ":%u/os.img\n%s", yaml, port,
                           at + strlen("\n  path: os.img\n")) > 0);
        cr_assert_eq(tu_write_file(rel_url, "release.yaml", text), 0);
        free(text);
        free(yaml);
        cr_assert_eq(CTL(NULL, "release", "import", rel_url), 0);
        return d;
}

static enum MHD_Result flaky_answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                    const char *version, const char *upload, size_t *upload_len, void **state) {
        struct flaky_server *f = cls;
        struct MHD_Response *resp;
        enum MHD_Result ret;
        (void) url, (void) version, (void) upload, (void) upload_len, (void) state;
        if (strcmp(method, "GET") != 0)
                return MHD_NO;
        if (atomic_fetch_add(&f->requests, 1) < f->fail_first) {
                static const char busy[] = "busy\n";
                resp = MHD_create_response_from_buffer(sizeof busy - 1, (void *) busy, MHD_RESPMEM_PERSISTENT);
                ret = MHD_queue_response(c, 503, resp);
        } else {
                int fd = open(f->image, O_RDONLY | O_CLOEXEC);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0)
                        return MHD_NO;
                resp = MHD_create_response_from_fd((uint64_t) st.st_size, fd);
                ret = MHD_queue_response(c, 200, resp);
        }
        MHD_destroy_response(resp);
        return ret;
}

/* Agent 0 with its target-a and `extra` arguments, bound to a new
 * single-node cluster sno-a of 4.15.0 that is then installed: its id. */
static char *install_sno_a(const char *ie, const char *const *extra) {
        char ta[4200];
        const char *args[8] = { "--install-target", ta };
        int n = 2;
        for (; extra && *extra && n < 7; extra++)
                args[n++] = *extra;
        args[n] = NULL;
        snprintf(ta, sizeof ta, "%s/target-a", dir);
        tu_must("mkdir -p %s", ta);
        start_agent(0, "run", ie, pub_file, args);
        json_object_put(wait_host(ie, 0, tu_status_is, "known-unbound", "known-unbound"));
        cr_assert_eq(CTL(NULL, "cluster", "create", "sno-a", "--release", "4.15.0", "--single-node", "--base-domain",
                         "example.test", "--machine-cidr", "192.0.2.0/24"), 0);
        char *cid = cluster_id("sno-a");
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", cid), md.admin_token,
                                  "{\"pull_secret\":\"{\\\"auths\\\":{}}\"}", NULL), 200);
        cr_assert_eq(CTL(NULL, "host", "bind", agents[0].host_id, "--cluster", "sno-a"), 0);
        json_object_put(wait_host(ie, 0, tu_status_is, "known", "known"));
        json_object_put(wait_cluster(cid, "ready"));
        cr_assert_eq(CTL(NULL, "cluster", "install", "sno-a"), 0);
        return cid;
}

/* A coordinator restart or a busy image server while a host installs: the
 * agent fetches again (bounded, with backoff) and the install succeeds. */
Test(install_e2e, image_server_busy_at_first_install_retries) {
        char *ie = start_with_key();

        char rel15[4200], img[4300], ta[4200];
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        snprintf(img, sizeof img, "%s/os.img", rel15);
        struct flaky_server f = { .image = img, .fail_first = 2 };
        f.d = image_server_with_release(flaky_answer, &f);

        char *cid = install_sno_a(ie, NULL);
        json_object_put(wait_host(ie, 0, tu_written, NULL, "written after the image server came back"));
        snprintf(ta, sizeof ta, "%s/target-a", dir);
        cr_assert_geq(atomic_load(&f.requests), 3, "two 503s, then the image: %d requests", atomic_load(&f.requests));
        char got[4300];
        snprintf(got, sizeof got, "%s/os-image.img", ta);
        tu_must("cmp %s %s", got, img);
        MHD_stop_daemon(f.d);
        free(cid);
        free(ie);
}

/* ---- an image server that breaks the transfer midway (issue 12, item 13) --- */

/* Its first GET sends half of the image and then closes the connection
 * (or, with `stall`, sends nothing more until the test ends); later GETs
 * honour "Range: bytes=N-" with 206 (and record N), else send it all. */
struct broken_server {
        struct MHD_Daemon *d;
        const char *image;       /* path */
        uint64_t size, break_at;
        bool stall;
        atomic_bool release;     /* a stalled answer ends */
        atomic_int requests;
        atomic_int ranged;       /* GETs with a Range header */
        _Atomic uint64_t range_from;
};

struct half_body {
        struct broken_server *f;
        int fd;
};

static ssize_t half_read(void *cls, uint64_t pos, char *buf, size_t max) {
        struct half_body *h = cls;
        if (pos >= h->f->break_at) {
                while (h->f->stall && !atomic_load(&h->f->release))
                        usleep(50 * 1000);
                return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        if (max > h->f->break_at - pos)
                max = (size_t) (h->f->break_at - pos);
        ssize_t n = pread(h->fd, buf, max, (off_t) pos);
        return n > 0 ? n : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void half_free(void *cls) {
        struct half_body *h = cls;
        close(h->fd);
        free(h);
}

static enum MHD_Result broken_answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                     const char *version, const char *upload, size_t *upload_len, void **state) {
        struct broken_server *f = cls;
        struct MHD_Response *resp;
        enum MHD_Result ret;
        (void) url, (void) version, (void) upload, (void) upload_len, (void) state;
        if (strcmp(method, "GET") != 0)
                return MHD_NO;
        int fd = open(f->image, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return MHD_NO;
        const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
        unsigned long long from = 0;
        if (atomic_fetch_add(&f->requests, 1) == 0) {
                struct half_body *h = malloc(sizeof *h);
                if (!h) {
                        close(fd);
                        return MHD_NO;
                }
                *h = (struct half_body) { .f = f, .fd = fd };
                resp = MHD_create_response_from_callback(f->size, 64 * 1024, half_read, h, half_free);
                ret = MHD_queue_response(c, 200, resp);
        } else if (range && sscanf(range, "bytes=%llu-", &from) == 1 && from < f->size) {
                char cr[96];
                atomic_fetch_add(&f->ranged, 1);
                atomic_store(&f->range_from, (uint64_t) from);
                snprintf(cr, sizeof cr, "bytes %llu-%llu/%llu", from, (unsigned long long) f->size - 1,
                         (unsigned long long) f->size);
                resp = MHD_create_response_from_fd_at_offset64(f->size - from, fd, from);
                MHD_add_response_header(resp, "Content-Range", cr);
                ret = MHD_queue_response(c, 206, resp);
        } else {
                resp = MHD_create_response_from_fd(f->size, fd);
                ret = MHD_queue_response(c, 200, resp);
        }
        MHD_destroy_response(resp);
        return ret;
}

/* f serving rel-4.15.0's image on the coordinator's address, and release
 * 4.15.0 imported naming it by URL. */
static void broken_server_up(struct broken_server *f, bool stall) {
        static char img[4300];
        char rel15[4200];
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        snprintf(img, sizeof img, "%s/os.img", rel15);
        struct stat st;
        cr_assert_eq(stat(img, &st), 0);
        *f = (struct broken_server) { .image = img, .size = (uint64_t) st.st_size,
                                      .break_at = (uint64_t) st.st_size / 2, .stall = stall };
        f->d = image_server_with_release(broken_answer, f);
}

static void broken_server_down(struct broken_server *f) {
        atomic_store(&f->release, true);
        MHD_stop_daemon(f->d);
}


/* The transfer of the OS image breaks halfway: the agent goes on from where
 * it stopped (Range), the SHA-256 carried on, and the install succeeds. */
Test(install_e2e, image_transfer_broken_midway_resumes) {
        char *ie = start_with_key();
        struct broken_server f;
        broken_server_up(&f, false);

        char *cid = install_sno_a(ie, NULL);
        json_object_put(wait_host(ie, 0, tu_written, NULL, "written after the broken transfer"));
        cr_assert_geq(atomic_load(&f.requests), 2, "%d requests", atomic_load(&f.requests));
        cr_assert_geq(atomic_load(&f.ranged), 1, "the second GET asked for the rest");
        cr_assert_gt(atomic_load(&f.range_from), 0, "it resumed after what it had");
        cr_assert_leq(atomic_load(&f.range_from), f.break_at);
        char got[4300];
        snprintf(got, sizeof got, "%s/target-a/os-image.img", dir);
        tu_must("cmp %s %s", got, f.image);
        broken_server_down(&f);
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "agent");
        free(cid);
        free(ie);
}

/* A transfer that stalls halfway ends at the download's deadline
 * (--image-timeout 6 plus a second per MiB): the host fails the install,
 * saying so, instead of waiting forever. */
/* Still installing, writing the image, at least `pct` percent (tu_host_pred). */
static bool writing_at_least(json_object *h, const void *pct) {
        const char *stage = tu_jstr(h, "progress.stage"), *p = tu_jstr(h, "progress.percent");
        cr_assert_str_neq(tu_jstr(h, "status"), "error", "the install ended before its progress was told: %s",
                          tu_jstr(h, "status_info"));
        return stage && p && strcmp(stage, "writing-image") == 0 && atoi(p) >= *(const int *) pct;
}

Test(install_e2e, image_transfer_stalled_ends_at_the_deadline) {
        char *ie = start_with_key();
        struct broken_server f;
        broken_server_up(&f, true);

        char *cid = install_sno_a(ie, (const char *const[]) { "--image-timeout", "6", NULL });
        /* Half the image in a burst, then nothing: the progress still moves
         * (told on the transfer's tick, issue 32, item 13)... */
        static const int forty = 40;
        json_object_put(wait_host(ie, 0, writing_at_least, &forty, "progress told through the stall"));
        /* ...and the failure names the percent reached. */
        json_object *fh = wait_host(ie, 0, failed_with, "not done within", "failed at the image deadline");
        const char *at = strstr(tu_jstr(fh, "status_info"), "(at stage writing-image, ");
        cr_assert(at && atoi(at + strlen("(at stage writing-image, ")) >= 40, "%s", tu_jstr(fh, "status_info"));
        json_object_put(fh);
        cr_assert_eq(atomic_load(&f.requests), 1, "no retry past the deadline");
        broken_server_down(&f);
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "agent");
        free(cid);
        free(ie);
}

/* Cancel while the image streams (issue 13, item 1): the transfer stalls
 * halfway, the admin cancels, the agent gets stop-installation, its install
 * ends at once (no deadline needed) saying it was stopped, and the host
 * keeps what its progress said. */
Test(install_e2e, cancel_stops_a_running_install) {
        char *ie = start_with_key();
        struct broken_server f;
        broken_server_up(&f, true);

        char *cid = install_sno_a(ie, NULL);
        json_object_put(wait_host(ie, 0, tu_status_is, "installing-in-progress", "the image streams"));
        char *out = NULL;
        cr_assert_eq(CTL(&out, "cluster", "cancel", "sno-a"), 0);
        cr_assert(strstr(out, "installation cancelled") && strstr(out, "musterctl cluster reset"), "%s", out);
        free(out);
        json_object_put(wait_host(ie, 0, tu_status_is, "error", "cancelled"));
        /* The agent's answer to stop-installation, and its install's end. */
        char log[4300];
        snprintf(log, sizeof log, "%s/%s-run.log", dir, agents[0].name);
        int64_t end = tu_mono_ms() + 60000;
        bool stopped = false;
        while (!stopped && tu_mono_ms() < end) {
                size_t n;
                char *text = tu_read_file(log, &n);
                /* ... saying the stage at which it stopped. */
                stopped = text && strstr(text, "stopped by the coordinator (stop-installation)") &&
                          strstr(text, "(at stage writing-image, ") &&
                          strstr(text, "Posted the result of step install-1");
                free(text);
                if (!stopped)
                        usleep(200 * 1000);
        }
        cr_assert(stopped, "the agent stopped the install and said so (see %s)", log);
        json_object *ev = NULL;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?cluster_id=%s", cid), md.admin_token, NULL, &ev), 200);
        cr_assert(strstr(json_object_to_json_string(ev), "the agent stopped its installation"), "%s",
                  json_object_to_json_string(ev));
        json_object_put(ev);
        cr_assert_eq(atomic_load(&f.requests), 1, "no retry after the stop");
        broken_server_down(&f);
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "agent");
        free(cid);
        free(ie);
}

/* ---- the disk speed check (issue 13, item 8) --------------------------------- */

/* Entries of a directory whose name starts with `prefix` ("" counts all but
 * . and ..). */
static int count_entries(const char *path, const char *prefix) {
        struct dirent **ents;
        int n = scandir(path, &ents, NULL, alphasort), k = 0;
        for (int i = 0; i < n; i++) {
                if (strcmp(ents[i]->d_name, ".") != 0 && strcmp(ents[i]->d_name, "..") != 0 &&
                    strncmp(ents[i]->d_name, prefix, strlen(prefix)) == 0)
                        k++;
                free(ents[i]);
        }
        if (n >= 0)
                free(ents);
        return n < 0 ? -1 : k;
}

/* Whether the cluster's events say `needle`; waits a little, as an event is
 * written just after the state it tells of. The events are logged when not. */
static bool events_of(const char *cid, const char *needle) {
        int64_t deadline = tu_mono_ms() + 5000;
        for (;;) {
                json_object *ev = tu_admin_get(&md, "/api/v2/events?cluster_id=%s&limit=1000", cid);
                const char *all = json_object_to_json_string_ext(ev, JSON_C_TO_STRING_NOSLASHESCAPE);
                bool yes = strstr(all, needle) != NULL;
                if (!yes && tu_mono_ms() > deadline)
                        cr_log_error("no \"%s\" in %s", needle, all);
                json_object_put(ev);
                if (yes || tu_mono_ms() > deadline)
                        return yes;
                usleep(200 * 1000);
        }
}

static bool validation_is(json_object *h, const void *status) {
        const char *v = tu_validation(h, "sufficient-installation-disk-speed");
        return v && strcmp(v, status) == 0;
}

/* A real agent measures fdatasync on its install target's folder while its
 * host prepares; the host's validation shows the p99 against the limit, and
 * only then is the install handed out. The temporary file is gone. */
Test(install_e2e, disk_speed_checked_before_the_install) {
        char *ie = start_with_key();
        char rel15[4200], ta[4200], img[4300];
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        cr_assert_eq(CTL(NULL, "release", "import", rel15), 0);
        char *cid = install_sno_a(ie, NULL);
        json_object *h = wait_host(ie, 0, tu_written, NULL, "written after its disk speed check");
        cr_assert_str_eq(tu_validation(h, "sufficient-installation-disk-speed"), "success");
        const char *vs = json_object_to_json_string_ext(tu_json_get(h, "validations"), JSON_C_TO_STRING_NOSLASHESCAPE);
        cr_assert(strstr(vs, "is fast enough: fdatasync p99 ") && strstr(vs, "at most 10000 ms allowed"), "%s", vs);
        json_object_put(h);
        snprintf(ta, sizeof ta, "%s/target-a", dir);
        cr_assert(events_of(cid, "known -> preparing-for-installation"));
        char measured[4400];
        snprintf(measured, sizeof measured, "50 writes, file on %s)", ta);
        cr_assert(events_of(cid, measured), "the agent measured on its target folder");
        cr_assert(events_of(cid, "preparing-for-installation -> installing"));
        cr_assert(events_of(cid, "-> installing: Installation in progress: 1 host(s) installing payload revision 1"));
        /* The order: measured, then prepared, then written. */
        json_object *ev = tu_admin_get(&md, "/api/v2/events?cluster_id=%s&limit=1000", cid);
        const char *all = json_object_to_json_string_ext(ev, JSON_C_TO_STRING_NOSLASHESCAPE);
        const char *m = strstr(all, "fdatasync p99"), *p = strstr(all, "preparing-for-installation -> installing"),
                   *w = strstr(all, "payload revision 1 written");
        cr_assert(m && p && w && m < p && p < w, "measured, prepared, written in that order: %s", all);
        json_object_put(ev);
        cr_assert_eq(count_entries(ta, ".muster-disk-speed"), 0, "the check left nothing behind");
        snprintf(img, sizeof img, "%s/os-image.img", ta);
        char src[4400];
        snprintf(src, sizeof src, "%s/os.img", rel15);
        tu_must("cmp %s %s", img, src);
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "agent");
        free(cid);
        free(ie);
}

/* The check fails (the agent cannot write on its target: a read-only bind
 * mount, so even root cannot): the host comes back to insufficient saying
 * why, the cluster from preparing-for-installation to insufficient, and
 * nothing is written. Fixed (writable again, the agent restarted as after a
 * reboot), the same cluster installs without a reset. */
Test(install_e2e, disk_speed_check_failing_stops_the_install_nothing_written) {
        char *ie = start_with_key();
        char rel15[4200], ta[4200], why[4400];
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        cr_assert_eq(CTL(NULL, "release", "import", rel15), 0);
        snprintf(ta, sizeof ta, "%s/target-a", dir);
        tu_must("mkdir -p %s", ta);
        tu_must("mount --bind %s %s", ta, ta);
        tu_must("mount -o remount,bind,ro %s", ta);
        char *cid = install_sno_a(ie, NULL);

        json_object *h = wait_host(ie, 0, validation_is, "error", "the disk speed check failed");
        cr_assert_str_eq(tu_jstr(h, "status"), "insufficient", "%s", tu_jstr(h, "status_info"));
        snprintf(why, sizeof why, "failed: cannot create a file in %s: Read-only file system", ta);
        cr_assert(strstr(tu_jstr(h, "status_info"), why), "%s", tu_jstr(h, "status_info"));
        cr_assert_null(tu_json_get(h, "progress.stage"), "no install began: %s", json_object_to_json_string(h));
        json_object_put(h);
        json_object *c = wait_cluster(cid, "insufficient");
        json_object_put(c);
        cr_assert(events_of(cid, "preparing-for-installation -> insufficient: The installation did not start: host "
                                 "master-0 is insufficient"));
        cr_assert(events_of(cid, "the installation disk speed check on"));
        cr_assert_eq(count_entries(ta, ""), 0, "nothing written to the target");
        /* It stays so: the failed check holds the host while nothing changes. */
        sleep(2);
        h = tu_admin_get(&md, "/api/v2/infra-envs/%s/hosts/%s", ie, agents[0].host_id);
        cr_assert_str_eq(tu_jstr(h, "status"), "insufficient");
        json_object_put(h);
        cr_assert_eq(CTL(NULL, "cluster", "install", "sno-a"), 1, "not ready");

        /* Fixed and rebooted: measured again at the next install, which goes through. */
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "agent");
        tu_must("umount %s", ta);
        start_agent(0, "run", ie, pub_file, (const char *const[]) { "--install-target", ta, NULL });
        json_object_put(wait_host(ie, 0, tu_status_is, "known", "known again"));
        json_object_put(wait_cluster(cid, "ready"));
        cr_assert_eq(CTL(NULL, "cluster", "install", "sno-a"), 0);
        h = wait_host(ie, 0, tu_written, NULL, "written on the retry");
        cr_assert_str_eq(tu_validation(h, "sufficient-installation-disk-speed"), "success");
        json_object_put(h);
        cr_assert_eq(count_entries(ta, "os-image.img"), 1);
        cr_assert_eq(count_entries(ta, ".muster-disk-speed"), 0);
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "agent");
        free(cid);
        free(ie);
}

/* ---- logs and reclaim (issue 21) ---------------------------------------------- */

/* `musterctl host logs HOST --gather -o DIR/NAME.tar.gz`, unpacked into
 * DIR/NAME: the members a bundle has, and agent.log's text (caller frees). */
static char *gathered_logs(const char *name) {
        char file[4300], into[4300], p[4400];
        snprintf(file, sizeof file, "%s/%s.tar.gz", dir, name);
        snprintf(into, sizeof into, "%s/%s", dir, name);
        char *out = NULL;
        cr_assert_eq(CTL(&out, "host", "logs", agents[0].host_id, "--gather", "--timeout", "60", "-o", file), 0);
        free(out);
        tu_must("mkdir -p %s", into);
        tu_must("tar -xzf %s -C %s", file, into);
        char *l = tu_listing(into);
        cr_assert_str_eq(l, "agent.log,info.json,journal.log,kernel.log", "the bundle's members");
        free(l);
        snprintf(p, sizeof p, "%s/info.json", into);
        char *info = tu_read_file(p, NULL);
        json_object *o = json_tokener_parse(info);
        cr_assert_str_eq(tu_jstr(o, "host_id"), agents[0].host_id, "%s", info);
        json_object_put(o);
        free(info);
        snprintf(p, sizeof p, "%s/agent.log", into);
        char *text = tu_read_file(p, NULL);
        cr_assert_not_null(text);
        return text;
}

/* An installed host (its disk image a FILE target) is reclaimed with
 * --wipe: its node agent (which first uploads its logs on request) fetches
 * the discovery kernel and initramfs with its own host token, writes them
 * and a boot entry to its --boot-dir, makes the entry GRUB's next boot and
 * says so; the host leaves its cluster. The discovery system then boots
 * with the entry's command line: its agent wipes the disk (the install
 * target standing in for it: no partition table, no file system left)
 * and registers, and the host is back in the pool. Its logs then tell of
 * the wipe. */
Test(install_e2e, reclaim_wipe_boots_into_discovery_and_logs_are_gathered) {
        char *ie = start_with_key();
        char rel15[4200], disk[4200], mnt[4200], boot[4200], p[4400], mdir[4400];
        snprintf(rel15, sizeof rel15, "%s/state/images/rel-4.15.0", dir);
        cr_assert_eq(CTL(NULL, "release", "import", rel15), 0);
        snprintf(disk, sizeof disk, "%s/disk-a.img", dir);
        char *cid = install_sno_a(ie, (const char *const[]) { "--install-target", disk, NULL });
        json_object_put(wait_host(ie, 0, tu_written, NULL, "written to its disk image"));
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "run agent");

        /* The installed system boots: its node agent, with the host token
         * from the agent.conf on its root file system. */
        snprintf(mnt, sizeof mnt, "%s/mnt-a", dir);
        tu_must("mkdir -p %s", mnt);
        boot_disk_image(disk, mnt, "host-a.token");
        snprintf(mdir, sizeof mdir, "%s/etc/muster/manifests", mnt);
        snprintf(boot, sizeof boot, "%s/boot-a", dir);
        tu_must("mkdir -p %s", boot);
        start_agent(0, "node", ie, pub_file, (const char *const[]) { "--manifest-dir", mdir, "--boot-dir", boot, NULL });
        json_object_put(wait_host(ie, 0, tu_status_is, "installed", "installed"));

        /* Its logs, from the node agent. */
        char *alog = gathered_logs("logs-node");
        cr_assert(strstr(alog, " node: host ") && strstr(alog, agents[0].host_id), "%s", alog);
        free(alog);

        /* A host token fetches no boot files while nothing is reclaimed. */
        char *htok = tu_read_file(token_file, NULL);
        long code = tu_http_raw("GET", url("/api/v2/infra-envs/%s/downloads/pxe/vmlinuz", ie), htok, NULL, NULL, 0,
                                &(struct tu_http_reply) { 0 });
        cr_assert_eq(code, 403);

        char *out = NULL;
        cr_assert_eq(CTL(&out, "host", "reclaim", agents[0].host_id, "--wipe"), 0);
        cr_assert(strstr(out, "will boot into discovery") && strstr(out, "wiped first"), "%s", out);
        free(out);
        json_object *h = wait_host(ie, 0, tu_status_is, "unbinding-pending-user-action", "reclaimed");
        cr_assert_null(tu_json_get(h, "cluster_id"), "it left its cluster: %s", json_object_to_json_string(h));
        cr_assert_null(tu_json_get(h, "pending_actions"), "%s", json_object_to_json_string(h));
        json_object_put(h);
        cr_assert(events_of(cid, "is rebooting into discovery"));
        /* The request is over: the host token fetches nothing now either. */
        struct tu_http_reply r = { 0 };
        cr_assert_eq(tu_http_raw("GET", url("/api/v2/infra-envs/%s/downloads/pxe/initrd", ie), htok, NULL, NULL, 0, &r),
                     403);
        free(r.body);
        free(htok);

        /* The boot partition: the template's kernel, its initramfs with the
         * infra-env's config after it, the entry and GRUB's next boot. */
        size_t n;
        snprintf(p, sizeof p, "%s/muster-discovery/vmlinuz", boot);
        char *k = tu_read_file(p, &n);
        cr_assert(k && n == TPL_KERNEL_SIZE && memcmp(k, tpl + TPL_KERNEL_OFF, n) == 0, "the kernel, byte for byte");
        free(k);
        snprintf(p, sizeof p, "%s/muster-discovery/initrd", boot);
        char *i = tu_read_file(p, &n);
        cr_assert(i && n > TPL_INITRD_SIZE + 110 && memcmp(i, tpl + TPL_INITRD_OFF, TPL_INITRD_SIZE) == 0,
                  "the initramfs, then the config's archive");
        cr_assert(memmem(i + TPL_INITRD_SIZE, n - TPL_INITRD_SIZE, "muster/config.img", 17), "the config's archive");
        free(i);
        snprintf(p, sizeof p, "%s/loader/entries/muster-discovery.conf", boot);
        char *entry = tu_read_file(p, NULL);
        cr_assert_not_null(entry);
        const char *opts = strstr(entry, "\noptions ");
        cr_assert(opts && strstr(entry, "\nlinux /muster-discovery/vmlinuz\n") &&
                          strstr(entry, "\ninitrd /muster-discovery/initrd\n") &&
                          strstr(opts, "options " TPL_CMDLINE " muster.reclaim_wipe=/dev/"),
                  "%s", entry);
        snprintf(p, sizeof p, "%s/grub/grubenv", boot);
        char *env = tu_read_file(p, &n);
        cr_assert(env && n == 1024 && strstr(env, "\nnext_entry=muster-discovery\n"), "%s", env ? env : "(none)");
        free(env);

        /* The node agent did not reboot this machine (--boot-dir); the
         * test stands in for the reboot. */
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "node agent");
        tu_must("umount %s", mnt);
        char *pt = NULL;
        cr_assert_eq(tu_runf(&pt, NULL, "blkid -p -o value -s PTTYPE %s", disk), 0, "a partition table before");
        free(pt);
        const char *end = strchr(opts + 1, '\n');
        char cmdline[4096];
        snprintf(cmdline, sizeof cmdline, "%.*s\n", (int) (end ? end - opts - 9 : (long) strlen(opts + 9)), opts + 9);
        cr_assert_eq(tu_write_file(dir, "reclaim.cmdline", cmdline), 0);
        free(entry);
        snprintf(p, sizeof p, "%s/reclaim.cmdline", dir);
        snprintf(token_file, sizeof token_file, "%s/agent.token", dir);
        start_agent(0, "run", ie, pub_file, (const char *const[]) { "--install-target", disk, "--cmdline", p, NULL });
        h = wait_host(ie, 0, tu_status_is, "known-unbound", "back in the pool");
        cr_assert_null(tu_json_get(h, "cluster_id"));
        json_object_put(h);
        /* Nothing of the old install is found on the disk. */
        int st = tu_runf(NULL, NULL, "blkid -p %s", disk);
        cr_assert_eq(st, 2, "blkid finds nothing on the wiped disk (exit %d)", st);
        st = tu_runf(NULL, NULL, "blkid -p -O 1048576 %s", disk);
        cr_assert_eq(st, 2, "nor where the root file system was (exit %d)", st);

        /* Its logs, from the discovery agent: they tell of the wipe. */
        alog = gathered_logs("logs-discovery");
        cr_assert(strstr(alog, "Reclaim: wiping ") && strstr(alog, " wiped ("), "%s", alog);
        free(alog);
        cr_assert_eq(tu_stop(&agent_pid[0], SIGTERM), 0, "discovery agent");
        free(cid);
        free(ie);
}
