/* `muster-agent run` configured the way a discovery ISO boots it: a config
 * area written with bootcfg_encode (the infra-env's agent token and
 * musterd's signing key from the real musterd on loopback) and no settings
 * on the command line but the test's own paths; agent.conf and the kernel
 * command line laid over the area; a corrupt area, a bad agent.conf line and
 * no sources at all refused with the file or the missing settings named. The
 * client's in-memory CA (CURLOPT_CAINFO_BLOB) against `openssl s_server`. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootcfg.h"
#include "client.h"
#include "testutil.h"

#define FIXTURE MUSTER_FIXTURES_DIR "/qemu-q35/root"
#define FIXTURE_HOST_ID "6d757374-6572-4071-8335-000000000001"
#define WAIT_MS 30000

static struct tu_musterd md;
static char *dir;
static int pids[2]; /* processes this test started and has not reaped */
static int n_logs;

static void up(void) {
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        memset(pids, 0, sizeof pids);
        n_logs = 0;
}

static void down(void) {
        for (size_t i = 0; i < sizeof pids / sizeof *pids; i++)
                if (pids[i] > 0)
                        tu_stop(&pids[i], SIGTERM); /* exits 0: checked by tu_stop */
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(agent_bootcfg, .init = up, .fini = down);

#define url(...) tu_url(md.base, __VA_ARGS__)

static void md_up(void) {
        cr_assert_eq(tu_musterd_start_in(&md, dir, "[agent]\ninstruction_interval = 1\n"), 0, "musterd started");
}

/* dir/name (in one of four rotating buffers). */
static const char *in_dir(const char *name) {
        static char buf[4][4200];
        static int k;
        char *p = buf[k++ % 4];
        snprintf(p, sizeof buf[0], "%s/%s", dir, name);
        return p;
}

static char *read_text(const char *path) {
        char *text = NULL;
        size_t n = 0;
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        if (getdelim(&text, &n, '\0', f) < 0) {
                free(text);
                text = strdup("");
        }
        fclose(f);
        return text;
}

static void print_log(const char *path) {
        char *text = read_text(path);
        fprintf(stderr, "---- %s ----\n%s---- end ----\n", path, text ? text : "(none)");
        free(text);
}

/* Write the config area file `name` holding c. */
static void write_area_of(const char *name, const struct bootcfg *c) {
        uint8_t *area = malloc(BOOTCFG_AREA_SIZE);
        cr_assert_not_null(area);
        cr_assert_eq(bootcfg_encode(c, area, BOOTCFG_AREA_SIZE), 0);
        cr_assert_eq(tu_write_bin(dir, name, area, BOOTCFG_AREA_SIZE), 0);
        free(area);
}

/* Write the config area file `name` holding these settings. */
static void write_area(const char *name, const char *coordinator, const char *ie, const char *token, const char *key_pem) {
        struct bootcfg c = { .coordinator_url = (char *) coordinator, .infra_env_id = (char *) ie,
                             .token = (char *) token, .coordinator_key_pem = (char *) key_pem };
        write_area_of(name, &c);
}

/* musterd's public key PEM (malloc'd), as GET /api/v2/signing-key gives it. */
static char *signing_key(void) {
        char *pem = NULL;
        cr_assert_eq(tu_http("GET", url("/api/v2/signing-key"), md.admin_token, NULL, 0, &pem), 200);
        cr_assert(pem && strstr(pem, "BEGIN PUBLIC KEY"), "%s", pem ? pem : "(none)");
        return pem;
}

struct agent {
        int *pid;
        char log[4200];
};

/* Start `muster-agent run -v --sysroot FIXTURE` with the sources given
 * (NULL: a path that does not exist) and a fresh state dir. */
static void agent_start(struct agent *a, const char *boot, const char *conf, const char *cmdline) {
        char state[64];
        snprintf(state, sizeof state, "state-%d", n_logs);
        snprintf(a->log, sizeof a->log, "%s/agent-%d.log", dir, n_logs++);
        const char *argv[] = { tu_agent_path(), "run", "--boot-config", boot ? boot : "/nonexistent/config.img",
                               "--agent-conf", conf ? conf : "/nonexistent/agent.conf",
                               "--cmdline", cmdline ? cmdline : "/nonexistent/cmdline",
                               "--state-dir", in_dir(state), "--sysroot", FIXTURE, "-v", NULL };
        a->pid = NULL;
        for (size_t i = 0; i < sizeof pids / sizeof *pids; i++)
                if (pids[i] <= 0) {
                        a->pid = &pids[i];
                        break;
                }
        cr_assert_not_null(a->pid, "too many agents at once");
        *a->pid = tu_spawn(argv, a->log);
        cr_assert_gt(*a->pid, 0, "agent started");
}

/* SIGTERM and its exit status (the log printed unless 0). */
static int agent_stop(struct agent *a) {
        int st = tu_stop(a->pid, SIGTERM);
        if (st != 0)
                print_log(a->log);
        return st;
}

/* Wait (bounded) until the fixture host is registered in `ie`. */
static void await_registered(const char *ie, const struct agent *a) {
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        for (;;) {
                json_object *h = NULL;
                long code = tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", ie, FIXTURE_HOST_ID),
                                         md.admin_token, NULL, &h);
                bool ok = code == 200 && tu_jstr(h, "status");
                json_object_put(h);
                if (ok)
                        return;
                if (tu_mono_ms() > deadline)
                        break;
                int st = tu_wait_pid(*a->pid, 200);
                if (st >= 0) {
                        *a->pid = -1; /* reaped */
                        print_log(a->log);
                        cr_assert_fail("the agent exited with %d", st);
                }
        }
        print_log(a->log);
        cr_assert_fail("host %s never registered in infra-env %s", FIXTURE_HOST_ID, ie);
}

static size_t host_count(const char *ie) {
        json_object *l = NULL;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/hosts?infra_env_id=%s", ie), md.admin_token, NULL, &l), 200);
        size_t n = json_object_array_length(l);
        json_object_put(l);
        return n;
}

/* The agent's log line naming its settings (malloc'd). */
static char *settings_line(const struct agent *a) {
        char *text = read_text(a->log);
        cr_assert_not_null(text);
        char *s = strstr(text, "Settings: ");
        cr_assert_not_null(s, "no settings line in:\n%s", text);
        char *line = strndup(s, strcspn(s, "\n"));
        free(text);
        return line;
}

static bool log_has(const struct agent *a, const char *needle) {
        char *text = read_text(a->log);
        bool found = text && strstr(text, needle);
        free(text);
        return found;
}

Test(agent_bootcfg, plain_run_from_the_config_area) {
        char *ie, *tok;
        md_up();
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "iso", &ie, &tok), 201);
        char *pem = signing_key();
        write_area("config.img", md.base, ie, tok, pem);
        cr_assert_eq(tu_write_file(dir, "cmdline", ""), 0);
        const char *area = in_dir("config.img");

        struct agent a;
        agent_start(&a, area, NULL, in_dir("cmdline"));
        await_registered(ie, &a);
        cr_assert_eq(host_count(ie), 1);

        char *line = settings_line(&a);
        char want[4400];
        snprintf(want, sizeof want, "coordinator %s (boot config %s)", md.base, area);
        cr_assert(strstr(line, want), "%s", line);
        snprintf(want, sizeof want, "infra-env %s (boot config %s)", ie, area);
        cr_assert(strstr(line, want), "%s", line);
        snprintf(want, sizeof want, "token inline (boot config %s)", area);
        cr_assert(strstr(line, want), "%s", line);
        snprintf(want, sizeof want, "coordinator key PEM (boot config %s)", area);
        cr_assert(strstr(line, want), "%s", line);
        cr_assert(strstr(line, "state dir "), "%s", line);
        free(line);
        cr_assert_not(log_has(&a, "install steps will be refused"), "the area's key enables installs");
        cr_assert_not(log_has(&a, tok), "the token is never logged");
        cr_assert_eq(agent_stop(&a), 0, "SIGTERM: clean exit");

        /* The state dir it was given holds the host id. */
        char *id = read_text(in_dir("state-0/host-id"));
        cr_assert_not_null(id);
        cr_assert_str_eq(id, FIXTURE_HOST_ID "\n");
        free(id);
        free(pem);
        free(ie);
        free(tok);
}

/* The infra-env's proxy, from the config area: every call to the https://
 * coordinator goes through the CONNECT proxy, and the settings line names
 * it; with the coordinator's address in no_proxy, none does. */
Test(agent_bootcfg, the_areas_proxy_carries_every_call) {
        md.https = true;
        md_up();
        struct tu_proxy px;
        cr_assert_eq(tu_proxy_start(&px), 0);
        char proxy[64], ca_path[4200];
        snprintf(proxy, sizeof proxy, "http://127.0.0.1:%u", px.port);
        snprintf(ca_path, sizeof ca_path, "%s/tls/ca.pem", md.state_dir);
        char *ca = read_text(ca_path);
        cr_assert_not_null(ca);
        char *ie, *tok, *ie2, *tok2;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "behind-proxy", &ie, &tok), 201);
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "no-proxy", &ie2, &tok2), 201);
        struct bootcfg c = { .coordinator_url = md.base, .infra_env_id = ie, .token = tok, .ca_pem = ca,
                             .https_proxy = proxy, .http_proxy = "http://192.0.2.1:9" };
        write_area_of("proxied.img", &c);

        struct agent a;
        agent_start(&a, in_dir("proxied.img"), NULL, NULL);
        await_registered(ie, &a);
        cr_assert_geq(atomic_load(&px.connects), 1, "the calls went through the proxy");
        cr_assert_eq(atomic_load(&px.refused), 0);
        char *line = settings_line(&a);
        char want[4400];
        snprintf(want, sizeof want, "proxy http http://192.0.2.1:9 (boot config %s) https %s (boot config %s)",
                 in_dir("proxied.img"), proxy, in_dir("proxied.img"));
        cr_assert(strstr(line, want), "%s", line);
        free(line);
        cr_assert_eq(agent_stop(&a), 0);

        /* The same proxy, with the coordinator in no_proxy: straight there. */
        int before = atomic_load(&px.connects);
        c = (struct bootcfg) { .coordinator_url = md.base, .infra_env_id = ie2, .token = tok2, .ca_pem = ca,
                               .https_proxy = proxy, .no_proxy = "localhost,127.0.0.1" };
        write_area_of("direct.img", &c);
        agent_start(&a, in_dir("direct.img"), NULL, NULL);
        await_registered(ie2, &a);
        cr_assert_eq(atomic_load(&px.connects), before, "no_proxy: no tunnel");
        line = settings_line(&a);
        cr_assert(strstr(line, ", none for localhost,127.0.0.1 (boot config"), "%s", line);
        free(line);
        cr_assert_eq(agent_stop(&a), 0);
        tu_proxy_stop(&px);
        free(ca);
        free(ie);
        free(tok);
        free(ie2);
        free(tok2);
}

/* muster-agent boot-setup ARGS... under --root dir/ROOT: its exit status,
 * what it printed in *err (caller frees). */
static int boot_setup(char **err, const char *boot, const char *initrd, const char *root) {
        int st = -1;
        char *out = tu_run((const char *const[]) { tu_agent_path(), "boot-setup", "--boot-config", boot,
                                                   "--initrd-config", initrd, "--root", root, NULL },
                           &st, err);
        free(out);
        return st;
}

/* The live image's boot-setup: the area's SSH key becomes root's
 * authorized_keys (0600 in a 0700 folder), which is what starts the SSH
 * server; no key, no file; a PXE boot's initramfs config is read first. */
Test(agent_bootcfg, boot_setup_writes_roots_authorized_keys) {
        static const char key[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMusterKey admin@lab\n"
                                  "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ second@lab";
        struct bootcfg c = { .coordinator_url = "http://127.0.0.1:1", .infra_env_id = FIXTURE_HOST_ID,
                             .token = "t", .ssh_authorized_key = (char *) key };
        write_area_of("with-key.img", &c);
        c.ssh_authorized_key = NULL;
        write_area_of("no-key.img", &c);
        char *err = NULL;
        tu_must("mkdir -p %s/r1 %s/r2 %s/r3", dir, dir, dir);

        cr_assert_eq(boot_setup(&err, in_dir("with-key.img"), "/nonexistent/i.img", in_dir("r1")), 0, "%s", err);
        cr_assert(strstr(err, "SSH server will start"), "%s", err);
        free(err);
        char path[4300];
        snprintf(path, sizeof path, "%s/r1/root/.ssh/authorized_keys", dir);
        char *got = read_text(path);
        cr_assert_not_null(got);
        cr_assert_str_eq(got, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMusterKey admin@lab\n"
                              "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ second@lab\n");
        free(got);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0600);
        snprintf(path, sizeof path, "%s/r1/root/.ssh", dir);
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0700);

        /* No key: nothing written, no SSH server. */
        cr_assert_eq(boot_setup(&err, in_dir("no-key.img"), "/nonexistent/i.img", in_dir("r2")), 0, "%s", err);
        cr_assert(strstr(err, "no SSH server"), "%s", err);
        free(err);
        snprintf(path, sizeof path, "%s/r2/root", dir);
        cr_assert_neq(stat(path, &st), 0, "nothing under root/ without a key");

        /* The initramfs's config wins over the medium's (a PXE boot). */
        cr_assert_eq(boot_setup(&err, in_dir("no-key.img"), in_dir("with-key.img"), in_dir("r3")), 0, "%s", err);
        free(err);
        snprintf(path, sizeof path, "%s/r3/root/.ssh/authorized_keys", dir);
        cr_assert_eq(stat(path, &st), 0);

        /* No config at all: nothing to do. A corrupt one: 1, named. */
        cr_assert_eq(boot_setup(&err, "/nonexistent/b.img", "/nonexistent/i.img", in_dir("r2")), 0, "%s", err);
        free(err);
        cr_assert_eq(tu_write_file(dir, "bad.img", "MUSTERCFG1\n{not json"), 0);
        cr_assert_eq(boot_setup(&err, in_dir("bad.img"), "/nonexistent/i.img", in_dir("r2")), 1);
        cr_assert(strstr(err, in_dir("bad.img")), "%s", err);
        free(err);
}

/* Static network configs: the entry whose MAC is one of this machine's NICs
 * (ROOT/sys/class/net/NAME/address) is written to ROOT/run/systemd/network
 * as 05-muster-NAME, byte for byte, 0644; another host's entry is not; a
 * set that does not check (a file name leaving the folder) writes nothing. */
Test(agent_bootcfg, boot_setup_writes_this_machines_static_network) {
        static const char eth0[] = "[Match]\nMACAddress=52:54:00:6d:75:01\n[Network]\nAddress=10.0.2.50/24\n"
                                   "Gateway=10.0.2.2\nDNS=10.0.2.3\n";
        static const char bond[] = "[NetDev]\nName=bond0\nKind=bond\n";
        char *set = NULL;
        cr_assert_geq(asprintf(&set,
                               "[{\"mac_addresses\":[\"02:00:00:00:00:99\"],\"files\":{\"other.network\":"
                               "\"[Match]\\nName=x\\n\"}},"
                               "{\"mac_addresses\":[\"52:54:00:6D:75:01\"],\"files\":{\"10-eth0.network\":"
                               "\"[Match]\\nMACAddress=52:54:00:6d:75:01\\n[Network]\\nAddress=10.0.2.50/24\\n"
                               "Gateway=10.0.2.2\\nDNS=10.0.2.3\\n\",\"20-bond.netdev\":\"[NetDev]\\nName=bond0\\n"
                               "Kind=bond\\n\"}}]"),
                      0);
        struct bootcfg c = { .coordinator_url = "http://127.0.0.1:1", .infra_env_id = FIXTURE_HOST_ID, .token = "t",
                             .static_network = set };
        write_area_of("static.img", &c);
        tu_must("mkdir -p %s/m/sys/class/net/eth0 %s/m/sys/class/net/lo %s/m/sys/class/net/eth1", dir, dir, dir);
        cr_assert_eq(tu_write_file(dir, "m/sys/class/net/eth0/address", "52:54:00:6d:75:01\n"), 0);
        cr_assert_eq(tu_write_file(dir, "m/sys/class/net/lo/address", "00:00:00:00:00:00\n"), 0);
        cr_assert_eq(tu_write_file(dir, "m/sys/class/net/eth1/address", "52:54:00:6d:75:02\n"), 0);
        char *err = NULL;
        cr_assert_eq(boot_setup(&err, in_dir("static.img"), "/nonexistent/i.img", in_dir("m")), 0, "%s", err);
        cr_assert(strstr(err, "Static network for eth0 (52:54:00:6d:75:01): 2 files"), "%s", err);
        free(err);
        char path[4300];
        snprintf(path, sizeof path, "%s/m/run/systemd/network/05-muster-10-eth0.network", dir);
        char *got = read_text(path);
        cr_assert_not_null(got, "%s", path);
        cr_assert_str_eq(got, eth0);
        free(got);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0644);
        snprintf(path, sizeof path, "%s/m/run/systemd/network/05-muster-20-bond.netdev", dir);
        got = read_text(path);
        cr_assert_str_eq(got, bond);
        free(got);
        snprintf(path, sizeof path, "%s/m/run/systemd/network/05-muster-other.network", dir);
        cr_assert_neq(stat(path, &st), 0, "another host's config is not written");

        /* No NIC matches: DHCP, nothing written. */
        tu_must("mkdir -p %s/n/sys/class/net/eth0", dir);
        cr_assert_eq(tu_write_file(dir, "n/sys/class/net/eth0/address", "52:54:00:00:00:01\n"), 0);
        cr_assert_eq(boot_setup(&err, in_dir("static.img"), "/nonexistent/i.img", in_dir("n")), 0, "%s", err);
        cr_assert(strstr(err, "No NIC of this machine has a static network config (2 hosts have one): DHCP"), "%s",
                  err);
        free(err);
        snprintf(path, sizeof path, "%s/n/run", dir);
        cr_assert_neq(stat(path, &st), 0);

        /* A crafted area: a file name that leaves the folder. Nothing written. */
        free(set);
        cr_assert_geq(asprintf(&set, "[{\"mac_addresses\":[\"52:54:00:6d:75:01\"],\"files\":{\"../../etc/x.network\":"
                                     "\"[Match]\\nName=x\\n\"}}]"),
                      0);
        c.static_network = set;
        write_area_of("evil.img", &c);
        tu_must("mkdir -p %s/e/sys/class/net/eth0", dir);
        cr_assert_eq(tu_write_file(dir, "e/sys/class/net/eth0/address", "52:54:00:6d:75:01\n"), 0);
        cr_assert_eq(boot_setup(&err, in_dir("evil.img"), "/nonexistent/i.img", in_dir("e")), 1);
        cr_assert(strstr(err, "are refused") && strstr(err, "\"../../etc/x.network\""), "%s", err);
        free(err);
        snprintf(path, sizeof path, "%s/e/run", dir);
        cr_assert_neq(stat(path, &st), 0, "nothing written");
        snprintf(path, sizeof path, "%s/e/etc", dir);
        cr_assert_neq(stat(path, &st), 0, "nothing written outside");
        free(set);
}

Test(agent_bootcfg, agent_conf_over_the_area_and_the_cmdline_over_agent_conf) {
        char *ie, *tok, *ie2, *tok2;
        md_up();
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "right", &ie, &tok), 201);
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "wrong", &ie2, &tok2), 201);

        /* The area: a port nobody listens on, and the other infra-env. */
        write_area("config.img", "http://127.0.0.1:1", ie2, tok2, NULL);
        /* agent.conf: the right coordinator, but still the other infra-env. */
        char text[8192];
        snprintf(text, sizeof text, "# written by the test\ncoordinator = %s\ninfra_env = %s\ntoken = %s\n", md.base,
                 ie2, tok2);
        cr_assert_eq(tu_write_file(dir, "agent.conf", text), 0);
        /* The kernel command line: the right infra-env and its token. */
        snprintf(text, sizeof text, "BOOT_IMAGE=/live/vmlinuz quiet muster.infra_env=%s \"muster.token=%s\" -- "
                 "muster.coordinator=http://127.0.0.1:2\n", ie, tok);
        cr_assert_eq(tu_write_file(dir, "cmdline", text), 0);

        struct agent a;
        agent_start(&a, in_dir("config.img"), in_dir("agent.conf"), in_dir("cmdline"));
        await_registered(ie, &a);
        cr_assert_eq(host_count(ie), 1);
        cr_assert_eq(host_count(ie2), 0, "nothing registered with the overridden infra-env");

        char *line = settings_line(&a);
        char want[4400];
        snprintf(want, sizeof want, "coordinator %s (%s:2)", md.base, in_dir("agent.conf"));
        cr_assert(strstr(line, want), "%s", line);
        snprintf(want, sizeof want, "infra-env %s (kernel command line %s)", ie, in_dir("cmdline"));
        cr_assert(strstr(line, want), "%s", line);
        snprintf(want, sizeof want, "token inline (kernel command line %s)", in_dir("cmdline"));
        cr_assert(strstr(line, want), "%s", line);
        cr_assert(strstr(line, "no coordinator key"), "%s", line);
        free(line);
        cr_assert(log_has(&a, "install steps will be refused"), "no key anywhere: installs are refused");
        cr_assert_eq(agent_stop(&a), 0);
        free(ie);
        free(tok);
        free(ie2);
        free(tok2);
}

/* Run the agent to its end with these sources: the exit status, stderr. */
static int run_refused(char **err, const char *boot, const char *conf, const char *cmdline) {
        return tu_runf(NULL, err, "%s run --boot-config %s --agent-conf %s --cmdline %s --state-dir %s --sysroot %s",
                       tu_agent_path(), boot, conf, cmdline, in_dir("state"), FIXTURE);
}

Test(agent_bootcfg, corrupt_sources_and_none_at_all) {
        char *err = NULL;
        cr_assert_eq(tu_write_file(dir, "cmdline", ""), 0);
        char cmdline[4200];
        snprintf(cmdline, sizeof cmdline, "%s", in_dir("cmdline"));

        /* An area that is not one: named. */
        uint8_t junk[4096];
        memset(junk, 0xa5, sizeof junk);
        cr_assert_eq(tu_write_bin(dir, "junk.img", junk, sizeof junk), 0);
        int st = run_refused(&err, in_dir("junk.img"), "/nonexistent/agent.conf", cmdline);
        cr_assert(st == 1 || st == 2, "exit %d: %s", st, err);
        cr_assert(strstr(err, in_dir("junk.img")), "%s", err);
        free(err);

        /* The magic, then broken JSON. */
        uint8_t *area = calloc(1, BOOTCFG_AREA_SIZE);
        cr_assert_not_null(area);
        memcpy(area, BOOTCFG_MAGIC "{\"coordinator_url\": 5}", BOOTCFG_MAGIC_LEN + 22);
        cr_assert_eq(tu_write_bin(dir, "bad.img", area, BOOTCFG_AREA_SIZE), 0);
        st = run_refused(&err, in_dir("bad.img"), "/nonexistent/agent.conf", cmdline);
        cr_assert_eq(st, 2, "%s", err);
        cr_assert(strstr(err, in_dir("bad.img")), "%s", err);
        free(err);

        /* A bad agent.conf line: file and line. */
        cr_assert_eq(tu_write_file(dir, "agent.conf", "coordinator = http://127.0.0.1:1\n\ntokn = x\n"), 0);
        st = run_refused(&err, "/nonexistent/config.img", in_dir("agent.conf"), cmdline);
        cr_assert_eq(st, 2, "%s", err);
        char want[4400];
        snprintf(want, sizeof want, "%s:3: unknown key \"tokn\"", in_dir("agent.conf"));
        cr_assert(strstr(err, want), "%s", err);
        free(err);

        /* A bad word on the kernel command line. */
        cr_assert_eq(tu_write_file(dir, "badcmdline", "quiet muster.infra_env=nope\n"), 0);
        st = run_refused(&err, "/nonexistent/config.img", "/nonexistent/agent.conf", in_dir("badcmdline"));
        cr_assert_eq(st, 2, "%s", err);
        cr_assert(strstr(err, "muster.infra_env") && strstr(err, in_dir("badcmdline")), "%s", err);
        free(err);

        /* An all-zero area (the template unwritten) and nothing else: each
         * missing setting named with the places it can come from. */
        memset(area, 0, BOOTCFG_AREA_SIZE);
        cr_assert_eq(tu_write_bin(dir, "zero.img", area, BOOTCFG_AREA_SIZE), 0);
        free(area);
        st = run_refused(&err, in_dir("zero.img"), "/nonexistent/agent.conf", cmdline);
        cr_assert_eq(st, 2, "%s", err);
        cr_assert(strstr(err, "needs a coordinator URL") && strstr(err, "--coordinator") &&
                  strstr(err, "muster.coordinator=") && strstr(err, "/nonexistent/agent.conf") &&
                  strstr(err, in_dir("zero.img")), "%s", err);
        cr_assert(strstr(err, "needs an infra-env id") && strstr(err, "muster.infra_env="), "%s", err);
        cr_assert(strstr(err, "needs an agent token") && strstr(err, "token_file"), "%s", err);
        free(err);

        /* Only a token missing: only it is named. */
        cr_assert_eq(tu_write_file(dir, "partial.conf", "coordinator = http://127.0.0.1:1\n"
                                                        "infra_env = 0b0e6f4e-4c1f-4b47-9d3c-00000000000a\n"), 0);
        st = run_refused(&err, "/nonexistent/config.img", in_dir("partial.conf"), cmdline);
        cr_assert_eq(st, 2, "%s", err);
        cr_assert(strstr(err, "needs an agent token"), "%s", err);
        cr_assert_null(strstr(err, "needs a coordinator URL"), "%s", err);
        free(err);

        /* The help tells the sources and their order. */
        char *out = NULL;
        cr_assert_eq(tu_runf(&out, NULL, "%s --help", tu_agent_path()), 0);
        cr_assert(strstr(out, "--boot-config") && strstr(out, "--agent-conf") && strstr(out, "--cmdline") &&
                  strstr(out, "muster.coordinator=") && strstr(out, "overriding"), "%s", out);
        free(out);
}

/* ---- the in-memory CA ------------------------------------------------------- */


static bool port_open(unsigned port) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        bool ok = fd >= 0 && connect(fd, (struct sockaddr *) &a, sizeof a) == 0;
        if (fd >= 0)
                close(fd);
        return ok;
}

/* A self-signed certificate for 127.0.0.1 in dir/NAME.crt and .key. */
static void make_cert(const char *name) {
        tu_must("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 "
                "-addext subjectAltName=IP:127.0.0.1 -keyout %s/%s.key -out %s/%s.crt",
                dir, name, dir, name);
}

Test(agent_bootcfg, ca_pem_verifies_the_coordinator_from_memory) {
        make_cert("server");
        make_cert("other");
        unsigned port = tu_free_port();
        char portarg[16], base[64];
        snprintf(portarg, sizeof portarg, "%u", port);
        snprintf(base, sizeof base, "https://127.0.0.1:%u", port);
        const char *argv[] = { "openssl", "s_server", "-quiet", "-www", "-accept", portarg, "-cert",
                               in_dir("server.crt"), "-key", in_dir("server.key"), NULL };
        pids[0] = tu_spawn(argv, in_dir("s_server.log"));
        cr_assert_gt(pids[0], 0);
        tu_expect_exit(pids[0], 128 + SIGTERM); /* s_server does not catch it */
        int64_t deadline = tu_mono_ms() + WAIT_MS;
        while (!port_open(port)) {
                if (tu_wait_pid(pids[0], 100) >= 0) {
                        pids[0] = -1;
                        print_log(in_dir("s_server.log"));
                        cr_assert_fail("openssl s_server exited");
                }
                cr_assert_lt(tu_mono_ms(), deadline, "openssl s_server never listened");
        }
        char *ca = read_text(in_dir("server.crt"));
        char *other = read_text(in_dir("other.crt"));
        cr_assert(ca && other);

        curl_global_init(CURL_GLOBAL_DEFAULT);
        struct client cl, copy;
        long status = 0;
        /* The server's certificate as the CA, from memory: verified. */
        cr_assert_eq(client_init(&cl, base, "tok.en", NULL), 0);
        cr_assert_eq(client_set_ca_pem(&cl, ca), 0);
        int r = client_request(&cl, "GET", "/", NULL, &status, NULL, NULL);
        cr_assert_eq(r, 0, "%d: %s", r, cl.errbuf);
        cr_assert_eq(status, 200);
        /* A clone (install downloads) keeps it. */
        cr_assert_eq(client_clone(&copy, &cl), 0);
        r = client_request(&copy, "GET", "/", NULL, &status, NULL, NULL);
        cr_assert_eq(r, 0, "%d: %s", r, copy.errbuf);
        client_done(&copy);
        client_done(&cl);

        /* Another CA, or none (the system's): refused. */
        cr_assert_eq(client_init(&cl, base, "tok.en", NULL), 0);
        cr_assert_eq(client_set_ca_pem(&cl, other), 0);
        cr_assert_eq(client_request(&cl, "GET", "/", NULL, &status, NULL, NULL), -EIO);
        client_done(&cl);
        cr_assert_eq(client_init(&cl, base, "tok.en", NULL), 0);
        cr_assert_eq(client_request(&cl, "GET", "/", NULL, &status, NULL, NULL), -EIO);
        /* The PEM wins over a CA file set too. */
        cr_assert_eq(client_set_ca_pem(&cl, ca), 0);
        free(cl.ca);
        cl.ca = strdup(in_dir("other.crt"));
        cr_assert_eq(client_request(&cl, "GET", "/", NULL, &status, NULL, NULL), 0, "%s", cl.errbuf);
        cr_assert_eq(client_set_ca_pem(&cl, ""), -EINVAL);
        client_done(&cl);
        curl_global_cleanup();
        free(ca);
        free(other);
        tu_stop(&pids[0], SIGTERM);
}
