/* Late binding end to end with real agents (issue 3): musterd and three
 * muster-agent processes, each in a network namespace the test builds
 * (a bridge in the coordinator's namespace, one veth per agent, addresses
 * from 192.0.2.0/24), each agent reading a different captured machine
 * through --sysroot:
 *   small   - the QEMU server fixture (2 GiB: insufficient-unbound);
 *   worker1 - the build machine as if booted from the ISO (its disk free);
 *   worker2 - the same with another hostname and address.
 * The namespace addresses are the fixtures' own, so the connectivity checks
 * that the agents run really cross the bridge (full-size packets too: the
 * MTU probe). Each agent gets a private /etc/hosts and /etc/resolv.conf
 * (bind-mounted inside its own mount namespace), the latter naming the
 * suite's DNS server beside musterd, which holds the clusters' api.,
 * api-int. and *.apps. names (first a wrong ingress answer, then the right
 * one). Nothing leaves the namespaces. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"

#define COORD_ADDR "192.0.2.1"
#define PORT "8090"
#define BASE "http://" COORD_ADDR ":" PORT
#define N_AGENTS 3

static const struct agent_def {
        const char *name;
        const char *host_id;
        const char *fixture;  /* under MUSTER_FIXTURES_DIR */
        const char *address;  /* the fixture's own address (variants: new) */
        const char *hostname; /* variants only */
        const char *mac;
} agents[N_AGENTS] = {
        { "small", "6d757374-6572-4071-8335-000000000001", "qemu-q35", "192.0.2.10", NULL, "52:54:00:12:34:01" },
        { "worker1", "9e11c25c-e9b0-471b-b799-f7d3ccdd4c01", "build-machine", "192.0.2.3", "worker-1", "02:00:00:00:01:03" },
        { "worker2", "9e11c25c-e9b0-471b-b799-f7d3ccdd4c02", "build-machine", "192.0.2.4", "worker-2", "02:00:00:00:01:04" },
};

static struct tu_fabric fab;
static struct tu_musterd md;
static char *dir;
static int agent_pid[N_AGENTS] = { -1, -1, -1 };

/* ---- helpers ------------------------------------------------------------ */

/* musterd in the coordinator's namespace and a printf-formatted path. */
#define url(...) tu_url(BASE, __VA_ARGS__)

/* Wait (bounded) until host i satisfies pred; returns the host. */
static json_object *wait_host(const char *ie, int i, tu_host_pred pred, const void *arg, const char *what) {
        return tu_wait_host(&md, ie, agents[i].host_id, pred, arg, 45000, what);
}

static bool validation_passes(json_object *h, const void *id) {
        const char *s = tu_validation(h, id);
        return s && strcmp(s, "success") == 0;
}

static bool validation_fails(json_object *h, const void *id) {
        const char *s = tu_validation(h, id);
        return s && strcmp(s, "failure") == 0;
}

/* ---- the namespaces ----------------------------------------------------- */

static int sntpd_pid = -1, dnsd_pid = -1;

static void setup(void) {
        dir = tu_mkdtemp();
        tu_fabric_up(&fab, "m", COORD_ADDR);
        for (int i = 0; i < N_AGENTS; i++)
                tu_fabric_add(&fab, agents[i].address, agents[i].mac);
        /* This process (a Criterion worker) talks to musterd from inside. */
        cr_assert_eq(tu_enter_netns(fab.coord), 0);
}

static void teardown(void) {
        tu_e2e_down(&fab, &md, agent_pid, N_AGENTS, &sntpd_pid, &dnsd_pid, &dir);
}

TestSuite(agents_netns, .init = setup, .fini = teardown);

static void start_musterd(void) {
        /* Defaults, except: fast polls, and single-node hosts of 2 CPUs. */
        cr_assert_eq(tu_musterd_start_at(&md, COORD_ADDR ":" PORT, dir,
                                         "[agent]\ninstruction_interval = 1\n"
                                         "[requirements.sno]\ncpu_cores = 2\n"),
                     0, "musterd did not answer; see %s", md.log);
}

static void start_agent(int i, const char *ie, const char *token_file) {
        char root[4096], log[4096], hosts[4096], resolv[4096];
        const char *bin = getenv("MUSTER_AGENT");
        if (agents[i].hostname) {
                /* The build machine as it would look booted from the discovery ISO. */
                char fixture[4096];
                snprintf(fixture, sizeof fixture, "%s/%s/root", MUSTER_FIXTURES_DIR, agents[i].fixture);
                snprintf(root, sizeof root, "%s/%s", dir, agents[i].name);
                tu_fixture_variant(fixture, root, agents[i].address, agents[i].hostname, agents[i].mac);
        } else
                snprintf(root, sizeof root, "%s/%s/root", MUSTER_FIXTURES_DIR, agents[i].fixture);
        snprintf(log, sizeof log, "%s/%s.log", dir, agents[i].name);
        snprintf(hosts, sizeof hosts, "%s/hosts", dir);
        snprintf(resolv, sizeof resolv, "%s/resolv.conf", dir);
        /* ip netns exec gives the agent its own mount namespace (slave), so
         * the bind mount of the test's hosts file stays private to it. */
        const char *argv[] = { bin && *bin ? bin : "muster-agent", "run", "--coordinator", BASE, "--infra-env", ie,
                               "--token-file", token_file, "--sysroot", root, "--host-id", agents[i].host_id, NULL };
        agent_pid[i] = tu_fabric_spawn(&fab, i, hosts, resolv, argv, log);
        cr_assert_gt(agent_pid[i], 0, "spawn %s", agents[i].name);
}

static void bind_to(const char *ie, int i, const char *cluster) {
        char body[128];
        json_object *o;
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", cluster);
        long code = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, agents[i].host_id),
                                 md.admin_token, body, &o);
        cr_assert_eq(code, 200, "bind %s: %ld %s", agents[i].name, code, o ? json_object_to_json_string(o) : "");
        json_object_put(o);
}

static bool bound_to(json_object *h, const void *cluster) {
        const char *c = tu_jstr(h, "cluster_id"), *s = tu_jstr(h, "status");
        return c && strcmp(c, cluster) == 0 && strcmp(s, "binding") != 0;
}

/* ---- the story ---------------------------------------------------------- */

Test(agents_netns, pool_bind_unbind_rebind_and_install_guard) {
        json_object *o;
        cr_assert_eq(tu_write_file(dir, "hosts", "127.0.0.1 localhost\n"), 0);
        /* c1's ingress name points at the wrong address for now. */
        static const char zone[] = "api.c1.example.test 192.0.2.100\n"
                                   "api-int.c1.example.test 192.0.2.100\n"
                                   "*.apps.c1.example.test %s\n"
                                   "api.sno.example.test 192.0.2.4\n"
                                   "api-int.sno.example.test 192.0.2.4\n"
                                   "*.apps.sno.example.test 192.0.2.4\n";
        char zone_text[512];
        snprintf(zone_text, sizeof zone_text, zone, "192.0.2.99");
        cr_assert_gt(dnsd_pid = tu_dnsd_start(COORD_ADDR, dir, zone_text), 0, "the DNS server started");
        start_musterd();
        /* Its hosts check their clocks against the suite's SNTP server beside
         * musterd (this process is in musterd's namespace). */
        char *ie = tu_e2e_infra_env(&md, "rack-7", dir, &sntpd_pid, NULL);
        char token_file[4200];
        snprintf(token_file, sizeof token_file, "%s/agent.token", dir);
        for (int i = 0; i < N_AGENTS; i++)
                start_agent(i, ie, token_file);

        /* The pool: one host lacks memory, two are ready to be bound. */
        json_object *h = wait_host(ie, 0, tu_status_is, "insufficient-unbound", "insufficient-unbound");
        cr_assert(strstr(tu_jstr(h, "status_info"), "memory"), "%s", tu_jstr(h, "status_info"));
        cr_assert_str_eq(tu_jstr(h, "inventory.system_vendor.product_name"), "MS-2200 Rack Server");
        json_object_put(h);
        for (int i = 1; i < N_AGENTS; i++) {
                h = wait_host(ie, i, tu_status_is, "known-unbound", "known-unbound");
                cr_assert_str_eq(tu_jstr(h, "inventory.hostname"), agents[i].hostname);
                json_object_put(h);
        }
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?unbound=true&status=known-unbound"), md.admin_token, NULL, &o),
                     200);
        cr_assert_eq(json_object_array_length(o), 2);
        json_object_put(o);
        char body[256];
        snprintf(body, sizeof body, "{\"cluster_id\":\"00000000-0000-4000-8000-000000000000\"}");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, agents[0].host_id),
                                  md.admin_token, body, NULL), 404, "no such cluster");

        /* Two workers into c1: their agents re-register and run the
         * network checks against each other across the bridge. */
        char *c1;
        cr_assert_eq(tu_create_cluster(md.base, md.admin_token,
                                       "{\"name\":\"c1\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                                       "\"192.0.2.0/24\",\"api_vip\":\"192.0.2.100\",\"ingress_vip\":\"192.0.2.101\"}",
                                       &c1), 201);
        bind_to(ie, 1, c1);
        bind_to(ie, 2, c1);
        for (int i = 1; i < N_AGENTS; i++) {
                json_object_put(wait_host(ie, i, bound_to, c1, "re-registered in c1"));
                h = wait_host(ie, i, validation_passes, "belongs-to-majority-group", "connected to its peer");
                json_object *v = tu_json_get(h, "validations");
                cr_assert(strstr(json_object_to_json_string(v), "Reaches 1 of 1 other hosts"), "%s",
                          json_object_to_json_string(v));
                json_object_put(h);
                json_object_put(wait_host(ie, i, validation_passes, "ntp-synced", "clock checked"));
                json_object_put(wait_host(ie, i, validation_passes, "api-domain-name-resolved-correctly", "API name resolved"));
                json_object_put(wait_host(ie, i, validation_passes, "api-int-domain-name-resolved-correctly",
                                          "internal API name resolved"));
                h = wait_host(ie, i, validation_passes, "mtu-valid", "full-size packets cross the bridge");
                cr_assert(strstr(json_object_to_json_string(tu_json_get(h, "validations")),
                                 "Full-size packets (MTU 1500) reach 1 other host(s)"), "%s",
                          json_object_to_json_string(tu_json_get(h, "validations")));
                json_object_put(h);
                h = wait_host(ie, i, validation_fails, "apps-domain-name-resolved-correctly", "wrong ingress answer");
                cr_assert(strstr(json_object_to_json_string(tu_json_get(h, "validations")),
                                 "*.apps.c1.example.test resolves to 192.0.2.99 instead of the ingress VIP 192.0.2.101"),
                          "%s", json_object_to_json_string(tu_json_get(h, "validations")));
                json_object_put(h);
                h = wait_host(ie, i, tu_status_is, "insufficient", "insufficient (wrong ingress answer)");
                cr_assert(strstr(tu_jstr(h, "status_info"), "*.apps.c1.example.test"), "%s", tu_jstr(h, "status_info"));
                json_object_put(h);
        }
        /* The DNS fixed: the next resolutions pass. */
        snprintf(zone_text, sizeof zone_text, zone, "192.0.2.101");
        cr_assert_eq(tu_write_file(dir, "dns.zone", zone_text), 0);
        for (int i = 1; i < N_AGENTS; i++)
                json_object_put(wait_host(ie, i, validation_passes, "apps-domain-name-resolved-correctly",
                                          "ingress name resolved"));
        /* Cut worker2 off: worker1's next connectivity check fails it. */
        tu_must("ip -n %s link set p2 down", fab.coord);
        h = wait_host(ie, 1, tu_status_is, "insufficient", "insufficient (peer unreachable)");
        cr_assert_str_eq(tu_validation(h, "belongs-to-majority-group"), "failure");
        cr_assert(strstr(tu_jstr(h, "status_info"), "worker-2"), "%s", tu_jstr(h, "status_info"));
        json_object_put(h);
        tu_must("ip -n %s link set p2 up", fab.coord);
        json_object_put(wait_host(ie, 1, validation_passes, "belongs-to-majority-group", "connected again"));

        /* Unbind worker2: back in the pool; then rebind it to a single-node
         * cluster that becomes ready and installs. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, agents[2].host_id),
                                  md.admin_token, NULL, &o), 200);
        /* Back in the pool at once (known-unbound if its agent was quick to
         * register again between the unbind and this answer). */
        cr_assert(strcmp(tu_jstr(o, "status"), "discovering-unbound") == 0 || strcmp(tu_jstr(o, "status"), "known-unbound") == 0,
                  "unbound at once: %s", tu_jstr(o, "status"));
        cr_assert_null(tu_json_get(o, "cluster_id"));
        json_object_put(o);
        json_object_put(wait_host(ie, 2, tu_status_is, "known-unbound", "known-unbound again"));
        /* Install needs a release: the fixture's, imported as musterctl does. */
        char rel[4096];
        snprintf(rel, sizeof rel, "%s/state/images/4.15.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        cr_assert_eq(tu_release_import(BASE, md.admin_token, rel, NULL), 201);
        char *sno;
        cr_assert_eq(tu_create_cluster(md.base, md.admin_token,
                                       "{\"name\":\"sno\",\"base_dns_domain\":\"example.test\",\"machine_network_cidr\":"
                                       "\"192.0.2.0/24\",\"high_availability_mode\":\"None\","
                                       "\"pull_secret\":\"{\\\"auths\\\":{}}\",\"release_version\":\"4.15.0\"}", &sno), 201);
        bind_to(ie, 2, sno);
        json_object_put(wait_host(ie, 2, bound_to, sno, "re-registered in sno"));
        h = wait_host(ie, 2, tu_status_is, "known", "known in sno");
        json_object_put(h);
        /* worker2's agent stops first: it would run the install step (and,
         * without a coordinator key, fail it); installing is the business
         * of test_install_api and the install e2e suite. Here only the guard
         * on an installing cluster matters. */
        cr_assert_eq(tu_stop(&agent_pid[2], SIGTERM), 0, "agent worker2");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters/%s/actions/install", sno), md.admin_token, NULL, &o),
                     202, "%s", o ? json_object_to_json_string(o) : "");
        json_object_put(o);
        /* While it installs, worker2 cannot move, nor can another join. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, agents[2].host_id),
                                  md.admin_token, NULL, &o), 409);
        cr_assert(strstr(tu_jstr(o, "reason"), "install"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        snprintf(body, sizeof body, "{\"cluster_id\":\"%s\"}", c1);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/bind", ie, agents[2].host_id),
                                  md.admin_token, body, NULL), 409);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/actions/unbind", ie, agents[1].host_id),
                                  md.admin_token, NULL, NULL), 200, "c1 is not installing: its hosts move");

        /* The events tell the story, scoped to the infra-env and the cluster. */
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events?cluster_id=%s", sno), md.admin_token, NULL, &o), 200);
        const char *all = json_object_to_json_string(o);
        cr_assert(strstr(all, "bound to cluster sno"), "%s", all);
        cr_assert(strstr(all, "installation of cluster"), "%s", all);
        json_object_put(o);
        /* Every other agent is still running (none crashed, none was refused). */
        for (int i = 0; i < N_AGENTS - 1; i++)
                cr_assert_eq(waitpid(agent_pid[i], NULL, WNOHANG), 0, "agent %s exited; see %s/%s.log", agents[i].name,
                             dir, agents[i].name);
        /* A clean stop exits 0 (under ASan, a leak would make it 23). */
        for (int i = 0; i < N_AGENTS - 1; i++)
                cr_assert_eq(tu_stop(&agent_pid[i], SIGTERM), 0, "agent %s", agents[i].name);
        cr_assert_eq(tu_stop(&md.pid, SIGTERM), 0, "musterd");
        free(c1);
        free(sno);
        free(ie);
}
