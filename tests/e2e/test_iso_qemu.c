/* The discovery ISO booted the way a user boots it (issue 5): musterd on
 * loopback streams an infra-env's ISO (`musterctl infraenv download`), and
 * qemu-system-x86_64 under plain emulation (TCG, no KVM) boots it with a
 * virtio disk image file and user networking in restricted mode: the guest
 * reaches nothing but the coordinator, through one guestfwd rule to
 * musterd's loopback port (no public DNS or NTP either), over musterd's
 * default HTTPS (the ISO carries its CA and an https:// URL that the
 * server certificate names). The live image's
 * muster-agent.service reads its config from the ISO's config area,
 * registers, and the host becomes known-unbound with the VM's disk and NIC in
 * its inventory. The BIOS test then binds it to a single-node cluster,
 * installs, and checks what landed on the disk image. The UEFI test boots
 * the same ISO through OVMF to a registered host.
 *
 * MUSTER_ISO_TEMPLATE names the template (`make iso` builds it). Every
 * process the test starts (musterd, qemu, qemu's socat forwarders) is
 * stopped by its PID. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bootcfg.h"
#include "testutil.h"

#define GUEST_COORD "10.0.2.100"
#define GUEST_PORT "8090"
#define GUEST_URL "https://" GUEST_COORD ":" GUEST_PORT
#define GUEST_MAC "52:54:00:6d:75:01"
#define DISK_BYTES "24G"       /* sparse: only what the install writes is stored */
#define BOOT_WAIT_MS 240000    /* TCG on a shared machine: generous, still bounded */
#define INSTALL_WAIT_MS 300000
#define OVMF_CODE "/usr/share/OVMF/OVMF_CODE_4M.fd"
#define OVMF_VARS "/usr/share/OVMF/OVMF_VARS_4M.fd"

/* The musterd config: the guest's view of the coordinator, small hardware
 * minimums (a 1 GiB, 1 CPU VM), quick polls, and neither the clock check
 * nor the DNS checks: restricted user networking forwards TCP only (no NTP
 * over UDP) and has no DNS server, by design. Both are reported "disabled"
 * on the host, never passed. */
#define CONFIG_FMT                                                                 \
        "[server]\ntls_names = " GUEST_COORD "\n"                                     \
        "[iso]\ntemplate = %s\ncoordinator_url = " GUEST_URL "\n"                  \
        "[agent]\ninstruction_interval = 2\ninventory_every = 10000\n"              \
        "[requirements.any]\ncpu_cores = 1\nmemory = 512MiB\ndisk = 10GB\n"        \
        "[requirements.sno]\ncpu_cores = 1\nmemory = 512MiB\ndisk = 10GB\n"        \
        "[requirements]\ninstall_disk_fsync_ms = 2000\n"                           \
        "[validations]\nignore = api-domain-name-resolved-correctly,api-int-domain-name-resolved-correctly," \
        "apps-domain-name-resolved-correctly,ntp-synced\n"

static struct tu_musterd md;
static char *dir;
static int qemu_pid = -1;
static char serial_log[4200], qemu_log[4200], qmp_socket[4200];

static const char *template_path(void) {
        const char *p = getenv("MUSTER_ISO_TEMPLATE");
        return p && *p ? p : NULL;
}

static void setup(void) {
        const char *t = template_path();
        cr_assert(t, "MUSTER_ISO_TEMPLATE is not set (the test runner sets it; `make iso` builds the ISO)");
        struct stat st;
        cr_assert_eq(stat(t, &st), 0, "no discovery ISO template at %s: run `make iso` first", t);
        dir = tu_mkdtemp();
        cr_assert(dir);
        char cfg[8192];
        snprintf(cfg, sizeof cfg, CONFIG_FMT, t);
        /* musterd's default: HTTPS with its own CA, whose certificate names
         * the address the guest reaches it at; the ISO carries the CA and
         * the guest's agent trusts it alone. */
        md.https = true;
        cr_assert_eq(tu_musterd_start_in(&md, dir, cfg), 0);
        snprintf(serial_log, sizeof serial_log, "%s/serial.log", dir);
        snprintf(qemu_log, sizeof qemu_log, "%s/qemu.log", dir);
        snprintf(qmp_socket, sizeof qmp_socket, "%s/qmp.sock", dir);
}

static void teardown(void) {
        if (qemu_pid > 0)
                tu_stop(&qemu_pid, SIGTERM);
        tu_musterd_stop(&md, SIGTERM);
        tu_musterd_free(&md);
        if (dir) {
                tu_runf(NULL, NULL, "sh -c 'grep -o \" %s[^ ]*\" /proc/self/mounts | xargs -r -n1 umount -l'", dir);
                tu_rm_rf(dir);
                free(dir);
                dir = NULL;
        }
}

TestSuite(iso_qemu, .init = setup, .fini = teardown);

/* ---- helpers ------------------------------------------------------------ */

static int ctlv(char **out, char **err, const char *const *args) {
        return tu_ctl(out, err, md.base, md.admin_token_path, args);
}
#define CTL(out, err, ...) ctlv(out, err, (const char *const[]) { __VA_ARGS__, NULL })

/* The last lines of the guest's serial console, to say why a wait failed. */
static void log_serial_tail(void) {
        char *out = NULL;
        tu_runf(&out, NULL, "tail -n 60 %s", serial_log);
        cr_log_error("guest serial console (last lines):\n%s", out ? out : "(none)");
        free(out);
        out = NULL;
        tu_runf(&out, NULL, "tail -n 20 %s", qemu_log);
        if (out && *out)
                cr_log_error("qemu:\n%s", out);
        free(out);
}

/* Create an infra-env and download its ISO with musterctl: the ISO's path. */
static char *download_iso(char **ie) {
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "lab", ie, NULL), 201);
        char *iso = NULL, *out = NULL, *err = NULL;
        cr_assert(asprintf(&iso, "%s/lab.iso", dir) > 0);
        int st = CTL(&out, &err, "infraenv", "download", "lab", "-o", iso);
        cr_assert_eq(st, 0, "musterctl infraenv download: %s%s", out, err);
        cr_assert(strstr(err, "wrote"), "%s", err);
        free(out);
        free(err);

        /* The area holds the guest's view of the coordinator and this infra-env. */
        char sidecar[4300];
        snprintf(sidecar, sizeof sidecar, "%s.json", template_path());
        json_object *sc = json_object_from_file(sidecar);
        cr_assert(sc, "cannot read %s", sidecar);
        int64_t off = json_object_get_int64(tu_json_get(sc, "config_offset"));
        json_object_put(sc);
        uint8_t *area = malloc(BOOTCFG_AREA_SIZE);
        cr_assert(area);
        int fd = open(iso, O_RDONLY | O_CLOEXEC);
        cr_assert(fd >= 0);
        cr_assert_eq(pread(fd, area, BOOTCFG_AREA_SIZE, off), BOOTCFG_AREA_SIZE);
        close(fd);
        struct bootcfg bc;
        char why[256] = "";
        cr_assert_eq(bootcfg_decode(area, BOOTCFG_AREA_SIZE, &bc, why, sizeof why), 0, "%s", why);
        cr_assert_str_eq(bc.coordinator_url, GUEST_URL);
        char ca_path[4200];
        snprintf(ca_path, sizeof ca_path, "%s/tls/ca.pem", md.state_dir);
        char *ca = tu_read_file(ca_path, NULL);
        cr_assert(ca && bc.ca_pem && !strcmp(bc.ca_pem, ca), "the ISO carries musterd's CA");
        free(ca);
        cr_assert_str_eq(bc.infra_env_id, *ie);
        cr_assert(bc.coordinator_key_pem && strstr(bc.coordinator_key_pem, "BEGIN PUBLIC KEY"));
        bootcfg_free(&bc);
        free(area);
        return iso;
}

/* Start QEMU: TCG, 1 GiB, one CPU, the ISO as CD-ROM, a sparse virtio disk,
 * restricted user networking whose only way out is the guestfwd to musterd.
 * uefi: boot through OVMF. cmdline: boot the ISO's own kernel and initramfs
 * directly, with GRUB's command line and these words after it (the ISO stays
 * the CD-ROM the agent reads its config from). The guest powers off instead
 * of rebooting. */
/* With tftp_dir set, no ISO: QEMU's own iPXE boots from the network, and
 * user networking's TFTP server hands out tftp_dir/boot.ipxe. */
static const char *tftp_dir;
/* The loopback port forwarded to the guest's SSH port (22), per boot. */
static unsigned ssh_port;


/* ssh -i key root@127.0.0.1 -p ssh_port `command` (batch mode, keys only,
 * the guest's host key not checked): the exit status; stdout and stderr in
 * *out and *err (caller frees). */
static int guest_ssh(const char *key, const char *command, char **out, char **err) {
        char port[16];
        snprintf(port, sizeof port, "%u", ssh_port);
        int st = -1;
        const char *argv[] = { "ssh", "-i", key, "-p", port, "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
                               "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                               "-o", "ConnectTimeout=60", "-o", "PasswordAuthentication=no", "-o", "LogLevel=ERROR",
                               "root@127.0.0.1", command, NULL };
        *out = tu_run(argv, &st, err);
        return st;
}

/* A new ed25519 key pair dir/NAME and dir/NAME.pub: the public key line
 * (malloc'd, no newline). */
static char *make_ssh_key(const char *name) {
        char key[4300], path[4300];
        snprintf(key, sizeof key, "%s/%s", dir, name);
        int st = -1;
        char *err = NULL;
        free(tu_run((const char *const[]) { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "muster-e2e", "-f", key,
                                            NULL },
                    &st, &err));
        cr_assert_eq(st, 0, "ssh-keygen: %s", err);
        free(err);
        snprintf(path, sizeof path, "%s/%s.pub", dir, name);
        char *pub = tu_read_file(path, NULL);
        cr_assert_not_null(pub);
        pub[strcspn(pub, "\n")] = '\0';
        return pub;
}

static void start_qemu(const char *iso, const char *disk, const char *uuid, bool uefi, const char *cmdline) {
        char fwd[4800], drive[4400], cdrom[4400], serial[4300], code[512], vars[4400];
        static char kernel[4300], initrd[4300], append[2048];
        ssh_port = tu_free_port();
        snprintf(fwd, sizeof fwd,
                 "user,id=n0,restrict=on,guestfwd=tcp:" GUEST_COORD ":" GUEST_PORT "-cmd:socat - TCP:127.0.0.1:%u,"
                 "hostfwd=tcp:127.0.0.1:%u-:22%s%s%s",
                 md.port, ssh_port, tftp_dir ? ",tftp=" : "", tftp_dir ? tftp_dir : "",
                 tftp_dir ? ",bootfile=boot.ipxe" : "");
        snprintf(drive, sizeof drive, "file=%s,if=virtio,format=raw,cache=unsafe,id=disk0", disk);
        snprintf(cdrom, sizeof cdrom, "file=%s,media=cdrom,readonly=on", iso);
        snprintf(serial, sizeof serial, "file:%s", serial_log);
        const char *argv[48];
        int n = 0;
        argv[n++] = "qemu-system-x86_64";
        argv[n++] = "-machine"; argv[n++] = uefi ? "q35" : "pc";
        argv[n++] = "-accel"; argv[n++] = "tcg";
        argv[n++] = "-m"; argv[n++] = "1024";
        argv[n++] = "-smp"; argv[n++] = "1";
        argv[n++] = "-uuid"; argv[n++] = uuid;
        if (iso) {
                argv[n++] = "-drive"; argv[n++] = cdrom;
        } else {
                argv[n++] = "-boot"; argv[n++] = "order=n";
        }
        argv[n++] = "-drive"; argv[n++] = drive;
        argv[n++] = "-netdev"; argv[n++] = fwd;
        argv[n++] = "-device"; argv[n++] = "virtio-net-pci,netdev=n0,mac=" GUEST_MAC;
        argv[n++] = "-serial"; argv[n++] = serial;
        argv[n++] = "-display"; argv[n++] = "none";
        argv[n++] = "-monitor"; argv[n++] = "none";
        static char qmp_arg[4300];
        snprintf(qmp_arg, sizeof qmp_arg, "unix:%s,server=on,wait=off", qmp_socket);
        argv[n++] = "-qmp"; argv[n++] = qmp_arg;
        argv[n++] = "-no-reboot";
        if (cmdline) {
                snprintf(kernel, sizeof kernel, "%s/vmlinuz", dir);
                snprintf(initrd, sizeof initrd, "%s/initrd.img", dir);
                tu_must("xorriso -osirrox on -indev %s -extract /boot/vmlinuz %s -extract /boot/initrd.img %s", iso,
                        kernel, initrd);
                snprintf(append, sizeof append, "console=tty0 console=ttyS0,115200 systemd.show_status=auto %s",
                         cmdline);
                argv[n++] = "-kernel"; argv[n++] = kernel;
                argv[n++] = "-initrd"; argv[n++] = initrd;
                argv[n++] = "-append"; argv[n++] = append;
        }
        if (uefi) {
                snprintf(code, sizeof code, "if=pflash,format=raw,unit=0,readonly=on,file=%s", OVMF_CODE);
                snprintf(vars, sizeof vars, "%s/ovmf-vars.fd", dir);
                tu_must("cp %s %s", OVMF_VARS, vars);
                static char varsdrive[4500];
                snprintf(varsdrive, sizeof varsdrive, "if=pflash,format=raw,unit=1,file=%s", vars);
                argv[n++] = "-drive"; argv[n++] = code;
                argv[n++] = "-drive"; argv[n++] = varsdrive;
        }
        argv[n] = NULL;
        qemu_pid = tu_spawn(argv, qemu_log);
        cr_assert(qemu_pid > 0, "cannot start qemu-system-x86_64");
}

/* A line from QEMU's control socket within 10 s, into buf. */
static bool qmp_line(int fd, char *buf, size_t n) {
        size_t len = 0;
        int64_t end = tu_mono_ms() + 10000;
        while (len + 1 < n && tu_mono_ms() < end) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 200) <= 0)
                        continue;
                if (read(fd, buf + len, 1) != 1)
                        return false;
                if (buf[len] == '\n') {
                        buf[len] = '\0';
                        return true;
                }
                len++;
        }
        return false;
}

/* One QMP command (JSON text) to the running guest's QEMU; its answer must
 * be a "return", events before it skipped. */
static void qmp(const char *command) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        cr_assert_lt(strlen(qmp_socket), sizeof a.sun_path);
        memcpy(a.sun_path, qmp_socket, strlen(qmp_socket) + 1);
        cr_assert(fd >= 0 && connect(fd, (struct sockaddr *) &a, sizeof a) == 0, "QMP socket %s: %s", qmp_socket,
                  strerror(errno));
        char line[4096];
        cr_assert(qmp_line(fd, line, sizeof line) && strstr(line, "\"QMP\""), "QMP greeting: %s", line);
        const char *cmds[] = { "{\"execute\":\"qmp_capabilities\"}", command };
        for (int i = 0; i < 2; i++) {
                cr_assert_eq(write(fd, cmds[i], strlen(cmds[i])), (ssize_t) strlen(cmds[i]));
                cr_assert_eq(write(fd, "\n", 1), 1);
                for (;;) {
                        cr_assert(qmp_line(fd, line, sizeof line), "no QMP answer to %s", cmds[i]);
                        if (strstr(line, "\"event\""))
                                continue;
                        cr_assert(strstr(line, "\"return\""), "QMP %s: %s", cmds[i], line);
                        break;
                }
        }
        close(fd);
}

/* GET the host; NULL while it is not there. */
static json_object *get_host(const char *ie, const char *host_id) {
        json_object *h = NULL;
        long code = tu_http_json("GET", tu_url(md.base, "/api/v2/infra-envs/%s/hosts/%s", ie, host_id), md.admin_token,
                                 NULL, &h);
        if (code != 200) {
                json_object_put(h);
                return NULL;
        }
        return h;
}

/* Poll until the host's status is `status` (NULL: any, i.e. registered);
 * fails with the guest's console when the time is up or QEMU is gone. */
static json_object *wait_host(const char *ie, const char *host_id, const char *status, int timeout_ms) {
        int64_t end = tu_mono_ms() + timeout_ms;
        const char *last = "not registered";
        char lastbuf[64];
        for (;;) {
                json_object *h = get_host(ie, host_id);
                if (h) {
                        const char *s = tu_jstr(h, "status");
                        if (!status || (s && strcmp(s, status) == 0))
                                return h;
                        snprintf(lastbuf, sizeof lastbuf, "%s", s ? s : "?");
                        last = lastbuf;
                        json_object_put(h);
                }
                if (tu_mono_ms() > end || (qemu_pid > 0 && kill(qemu_pid, 0) < 0)) {
                        log_serial_tail();
                        cr_assert_fail("host %s never became %s (last: %s)", host_id, status ? status : "registered",
                                       last);
                }
                usleep(500 * 1000);
        }
}

static json_object *find_by(json_object *arr, const char *key, const char *value) {
        for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
                const char *v = tu_jstr(json_object_array_get_idx(arr, i), key);
                if (v && strcmp(v, value) == 0)
                        return json_object_array_get_idx(arr, i);
        }
        return NULL;
}

/* Boot to a known-unbound host and check its inventory: the VM's virtio disk
 * (eligible) and its NIC with the MAC QEMU was given and a DHCP address.
 * Prints the boot-to-registered time. */
static void boot_to_known(const char *ie, const char *uuid, bool uefi, const char *iso, const char *disk) {
        int64_t t0 = tu_mono_ms();
        start_qemu(iso, disk, uuid, uefi, NULL);
        json_object *h = wait_host(ie, uuid, NULL, BOOT_WAIT_MS);
        int64_t t_reg = tu_mono_ms();
        json_object_put(h);
        h = wait_host(ie, uuid, "known-unbound", BOOT_WAIT_MS);
        int64_t t_known = tu_mono_ms();
        /* Reported, never asserted (DESIGN: speed is for benchmarks). */
        printf("iso_qemu: %s boot-to-registered %.1f s, boot-to-known-unbound %.1f s\n", uefi ? "UEFI" : "BIOS",
               (double) (t_reg - t0) / 1000.0, (double) (t_known - t0) / 1000.0);
        fflush(stdout);

        json_object *disks = tu_json_get(h, "inventory.disks");
        json_object *vda = find_by(disks, "name", "vda");
        cr_assert(vda, "no vda in the inventory: %s", json_object_to_json_string(disks));
        cr_assert_eq(json_object_get_int64(tu_json_get(vda, "size_bytes")), INT64_C(24) << 30);
        cr_assert(json_object_get_boolean(tu_json_get(vda, "installation_eligibility.eligible")),
                  "%s", json_object_to_json_string(vda));
        json_object *nics = tu_json_get(h, "inventory.interfaces");
        json_object *nic = find_by(nics, "mac_address", GUEST_MAC);
        cr_assert(nic, "no NIC with MAC %s: %s", GUEST_MAC, json_object_to_json_string(nics));
        json_object *v4 = tu_json_get(nic, "ipv4_addresses");
        cr_assert(v4 && json_object_array_length(v4) >= 1, "%s", json_object_to_json_string(nic));
        cr_assert(strncmp(json_object_get_string(json_object_array_get_idx(v4, 0)), "10.0.2.", 7) == 0,
                  "%s", json_object_to_json_string(v4));
        json_object_put(h);
}

static char *make_disk(void) {
        char *disk = NULL;
        cr_assert(asprintf(&disk, "%s/disk.img", dir) > 0);
        tu_must("truncate -s " DISK_BYTES " %s", disk);
        return disk;
}

/* Release 4.15.0 imported (its folder into rel), a single-node cluster
 * `name` with a pull secret, and the guest's host bound to it and known. */
static void bound_to_new_sno(const char *ie, const char *uuid, const char *name, char *rel, size_t rel_len) {
        char ps[4200];
        char *out = NULL, *err = NULL;
        snprintf(rel, rel_len, "%s/state/images/rel-4.15.0", dir);
        tu_release_build(MUSTER_FIXTURES_DIR "/releases/4.15.0", rel);
        cr_assert_eq(CTL(&out, &err, "release", "import", rel), 0, "%s%s", out, err);
        free(out);
        free(err);
        cr_assert_eq(tu_write_file(dir, "pull-secret", "{\"auths\":{}}"), 0);
        snprintf(ps, sizeof ps, "%s/pull-secret", dir);
        cr_assert_eq(CTL(&out, &err, "cluster", "create", name, "--single-node", "--release", "4.15.0",
                         "--base-domain", "example.test", "--machine-cidr", "10.0.2.0/24", "--pull-secret-file", ps),
                     0, "%s%s", out, err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "host", "bind", uuid, "--cluster", name), 0, "%s%s", out, err);
        free(out);
        free(err);
        json_object_put(wait_host(ie, uuid, "known", BOOT_WAIT_MS));
}

/* The installed system's first boot, played on this side of the VM (the
 * fixture OS image boots no kernel): its node agent, on the disk image's
 * root file system, with the host token from its agent.conf. Its first
 * check-in makes the host installed (stage done), and the cluster with it. */
static void first_boot(const char *ie, const char *uuid, const char *disk, const char *cluster) {
        char mnt[4300], mdir[4400], conf_path[4400], tok_path[4300], pub_path[4400], ca_path[4400], node_log[4300];
        char *out = NULL, *err = NULL;
        snprintf(mnt, sizeof mnt, "%s/mnt", dir);
        tu_must("mkdir -p %s", mnt);
        tu_must("mount -o loop,offset=1048576 %s %s", disk, mnt);
        snprintf(mdir, sizeof mdir, "%s/etc/muster/manifests", mnt);
        snprintf(conf_path, sizeof conf_path, "%s/etc/muster/agent.conf", mnt);
        char *tk = tu_agent_conf_token(conf_path);
        cr_assert_not_null(tk, "no token in %s", conf_path);
        /* The CA the discovery agent trusted musterd with, for the node
         * agent to trust alone (HTTPS end to end). */
        char *conf = tu_read_file(conf_path, NULL), *ca = NULL;
        cr_assert(conf && strstr(conf, "\nca_file = /etc/muster/ca.pem\n"), "agent.conf names the CA:\n%s", conf);
        free(conf);
        snprintf(ca_path, sizeof ca_path, "%s/etc/muster/ca.pem", mnt);
        char want_ca[4200];
        snprintf(want_ca, sizeof want_ca, "%s/tls/ca.pem", md.state_dir);
        ca = tu_read_file(ca_path, NULL);
        char *musterds = tu_read_file(want_ca, NULL);
        cr_assert(ca && musterds && !strcmp(ca, musterds), "the installed host holds musterd's CA");
        free(ca);
        free(musterds);
        cr_assert_eq(tu_write_file(dir, "host.token", tk), 0);
        free(tk);
        snprintf(tok_path, sizeof tok_path, "%s/host.token", dir);
        snprintf(pub_path, sizeof pub_path, "%s/etc/muster/coordinator.pub", mnt);
        snprintf(node_log, sizeof node_log, "%s/node.log", dir);
        const char *bin = getenv("MUSTER_AGENT");
        const char *argv[] = { bin && *bin ? bin : "muster-agent", "node", "--coordinator", md.base, "--infra-env", ie,
                               "--token-file", tok_path, "--host-id", uuid, "--coordinator-key", pub_path,
                               "--ca", ca_path, "--manifest-dir", mdir, NULL };
        int node = tu_spawn(argv, node_log);
        cr_assert_gt(node, 0);
        int st = CTL(&out, &err, "cluster", "watch", cluster, "--interval", "1", "--timeout", "120");
        cr_assert_eq(st, 0, "cluster watch: %s%s", out, err);
        cr_assert(strstr(out, "installed"), "%s", out);
        free(out);
        free(err);
        json_object *h = wait_host(ie, uuid, "installed", 30000);
        cr_assert_str_eq(tu_jstr(h, "progress.stage"), "done");
        json_object_put(h);
        cr_assert_eq(tu_stop(&node, SIGTERM), 0, "the node agent exits cleanly");
        tu_must("umount %s", mnt);
}

/* The guest installs, says everything is written and reboots: QEMU
 * (-no-reboot) exits; the host waits for its installed system (issue 13,
 * item 6). */
static void wait_written_and_rebooted(const char *ie, const char *uuid) {
        int qst = tu_wait_pid(qemu_pid, INSTALL_WAIT_MS);
        if (qst < 0)
                log_serial_tail();
        cr_assert(qst >= 0, "the guest did not reboot after installing");
        qemu_pid = -1;
        json_object *h = wait_host(ie, uuid, "installing-in-progress", 10000);
        cr_assert_str_eq(tu_jstr(h, "progress.stage"), "rebooting", "%s", tu_jstr(h, "status_info"));
        cr_assert_eq(json_object_get_int64(tu_json_get(h, "progress.percent")), 100);
        json_object_put(h);
}

/* ---- tests ---------------------------------------------------------------- */

Test(iso_qemu, bios_boot_registers_then_installs_single_node) {
        const char *uuid = "5eed0000-0000-4000-8000-0000000000b1";
        char *ie = NULL;
        char *iso = download_iso(&ie);
        char *disk = make_disk();
        boot_to_known(ie, uuid, false, iso, disk);

        /* A release, a single-node cluster, bind, install. */
        char rel[4200];
        bound_to_new_sno(ie, uuid, "sno", rel, sizeof rel);
        char *out = NULL, *err = NULL;
        cr_assert_eq(CTL(&out, &err, "cluster", "install", "sno"), 0, "%s%s", out, err);
        free(out);
        free(err);
        wait_written_and_rebooted(ie, uuid);
        json_object *h = wait_host(ie, uuid, "installing-in-progress", 10000);
        char cid[64];
        snprintf(cid, sizeof cid, "%s", tu_jstr(h, "cluster_id"));
        json_object_put(h);

        /* The disk image: the OS image outside its root partition, and in the
         * root partition exactly the payload's manifests, byte for byte. */
        char img[4400];
        snprintf(img, sizeof img, "%s/os.img", rel);
        tu_must("cmp -n 1048576 %s %s", disk, img);
        json_object *env = NULL;
        cr_assert_eq(tu_http_json("GET", tu_url(md.base, "/api/v2/clusters/%s/payload/1", cid), md.admin_token, NULL,
                                  &env),
                     200);
        json_object *manifests = tu_json_get(env, "payload.manifests");
        cr_assert(manifests && json_object_array_length(manifests) > 0);
        char mnt[4300], mdir[4400];
        snprintf(mnt, sizeof mnt, "%s/mnt", dir);
        tu_must("mkdir -p %s", mnt);
        tu_must("mount -o loop,ro,offset=1048576 %s %s", disk, mnt);
        snprintf(mdir, sizeof mdir, "%s/etc/muster/manifests", mnt);
        size_t files = 0;
        DIR *d = opendir(mdir);
        cr_assert(d, "no %s on the installed disk", "/etc/muster/manifests");
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                json_object *m = find_by(manifests, "path", e->d_name);
                cr_assert(m, "%s is on the disk but not in the payload", e->d_name);
                char p[4700];
                snprintf(p, sizeof p, "%s/%s", mdir, e->d_name);
                FILE *f = fopen(p, "rb");
                cr_assert(f);
                char buf[65536];
                size_t len = fread(buf, 1, sizeof buf, f);
                fclose(f);
                const char *want = tu_jstr(m, "content");
                cr_assert(want && len == strlen(want) && memcmp(buf, want, len) == 0, "%s differs", e->d_name);
                files++;
        }
        closedir(d);
        cr_assert_eq(files, json_object_array_length(manifests), "%zu files for %zu manifests", files,
                     json_object_array_length(manifests));
        /* The node agent's settings beside the manifests, and the key. */
        char *conf = NULL, want[256];
        cr_assert_eq(tu_runf(&conf, NULL, "cat %s/etc/muster/agent.conf", mnt), 0);
        snprintf(want, sizeof want, "\ncoordinator = " GUEST_URL "\ninfra_env = %s\ntoken = ", ie);
        cr_assert(strstr(conf, want), "agent.conf:\n%s", conf);
        free(conf);
        char keyfile[4300];
        snprintf(keyfile, sizeof keyfile, "%s/coordinator.pub", dir);
        cr_assert_eq(CTL(&out, &err, "signing-key", "-o", keyfile), 0, "%s%s", out, err);
        free(out);
        free(err);
        tu_must("cmp %s %s/etc/muster/coordinator.pub", keyfile, mnt);
        /* The host's settings from the payload (issue 13, item 4). */
        char role_path[4400];
        snprintf(role_path, sizeof role_path, "%s/etc/muster/role", mnt);
        char *role = tu_read_file(role_path, NULL);
        cr_assert(role && strcmp(role, "master\n") == 0, "%s", role ? role : "(no /etc/muster/role)");
        free(role);
        tu_must("umount %s", mnt);

        first_boot(ie, uuid, disk, "sno");
        json_object_put(env);
        free(disk);
        free(iso);
        free(ie);
}

/* Issue 13's acceptance: a guest whose install fails (its disk shrinks
 * after it was bound and validated: QMP block_resize to 4 MiB, below the
 * OS image's size) leaves host and cluster in error; the disk grows back,
 * `musterctl cluster reset` sends the host back through discovery, and the
 * install on the retry succeeds. */
Test(iso_qemu, failed_install_is_reset_and_retried) {
        const char *uuid = "5eed0000-0000-4000-8000-0000000000c1";
        char *ie = NULL;
        char *iso = download_iso(&ie);
        char *disk = make_disk();
        boot_to_known(ie, uuid, false, iso, disk);

        char rel[4200];
        bound_to_new_sno(ie, uuid, "retry", rel, sizeof rel);
        char *out = NULL, *err = NULL;

        /* The disk shrinks under the bound host; the install fails. */
        qmp("{\"execute\":\"block_resize\",\"arguments\":{\"device\":\"disk0\",\"size\":4194304}}");
        cr_assert_eq(CTL(&out, &err, "cluster", "install", "retry"), 0, "%s%s", out, err);
        free(out);
        free(err);
        json_object *h = wait_host(ie, uuid, "error", INSTALL_WAIT_MS);
        printf("iso_qemu: the install failed as it should: %s\n", tu_jstr(h, "status_info"));
        fflush(stdout);
        json_object_put(h);
        cr_assert_eq(CTL(&out, &err, "-o", "json", "cluster", "show", "retry"), 0, "%s", err);
        json_object *c = json_tokener_parse(out);
        cr_assert_str_eq(tu_jstr(c, "status"), "error", "%s", out);
        json_object_put(c);
        free(out);
        free(err);

        /* The disk is back; reset, the host goes through discovery again,
         * and the install on the retry goes through. */
        qmp("{\"execute\":\"block_resize\",\"arguments\":{\"device\":\"disk0\",\"size\":25769803776}}");
        cr_assert_eq(CTL(&out, &err, "cluster", "reset", "retry"), 0, "%s%s", out, err);
        free(out);
        free(err);
        json_object_put(wait_host(ie, uuid, "known", BOOT_WAIT_MS));
        cr_assert_eq(CTL(&out, &err, "cluster", "install", "retry"), 0, "%s%s", out, err);
        free(out);
        free(err);
        wait_written_and_rebooted(ie, uuid);
        first_boot(ie, uuid, disk, "retry");
        free(disk);
        free(iso);
        free(ie);
}

Test(iso_qemu, uefi_boot_registers) {
        const char *uuid = "5eed0000-0000-4000-8000-0000000000e1";
        struct stat st;
        cr_assert_eq(stat(OVMF_CODE, &st), 0, "OVMF is not installed (scripts/install-deps.sh iso installs ovmf)");
        char *ie = NULL;
        char *iso = download_iso(&ie);
        char *disk = make_disk();
        boot_to_known(ie, uuid, true, iso, disk);
        /* No SSH key on the infra-env: no SSH server on the live system. */
        char *pub = make_ssh_key("id_uefi"), key[4300], *out = NULL, *err = NULL;
        free(pub);
        snprintf(key, sizeof key, "%s/id_uefi", dir);
        cr_assert_neq(guest_ssh(key, "true", &out, &err), 0, "no server to log in to");
        cr_assert_null(strstr(err, "Permission denied"), "no SSH server answered at all: %s", err);
        free(out);
        free(err);
        out = err = NULL;

        /* The live system's logs (issue 21): musterctl asks, the agent
         * gathers journald's journal of this boot and the kernel's ring
         * buffer and uploads them; the archive holds what a real boot logs. */
        char logs[4300], into[4300], p[4400];
        snprintf(logs, sizeof logs, "%s/uefi-logs.tar.gz", dir);
        snprintf(into, sizeof into, "%s/uefi-logs", dir);
        cr_assert_eq(CTL(&out, &err, "host", "logs", uuid, "--gather", "--timeout", "300", "-o", logs), 0, "%s", err);
        free(out);
        free(err);
        tu_must("mkdir -p %s", into);
        tu_must("tar -xzf %s -C %s", logs, into);
        snprintf(p, sizeof p, "%s/journal.log", into);
        char *j = tu_read_file(p, NULL);
        cr_assert(j && strstr(j, "muster-agent") && strstr(j, "systemd"), "journald's journal: %.2000s", j ? j : "");
        free(j);
        snprintf(p, sizeof p, "%s/kernel.log", into);
        char *k = tu_read_file(p, NULL);
        cr_assert(k && strstr(k, "Linux version"), "the kernel's ring buffer: %.2000s", k ? k : "");
        free(k);
        snprintf(p, sizeof p, "%s/agent.log", into);
        char *a = tu_read_file(p, NULL);
        cr_assert(a && strstr(a, uuid), "the agent's own lines: %.2000s", a ? a : "");
        free(a);
        free(disk);
        free(iso);
        free(ie);
}

/* The host's interface `name` in its latest inventory, or NULL. */
static json_object *guest_iface(json_object *h, const char *name) {
        return find_by(tu_json_get(h, "inventory.interfaces"), "name", name);
}

/* Bonds, VLANs and dummy links, which the kernel CI runs on cannot make
 * (no bonding, 8021q or dummy support): the ISO's Debian kernel makes them
 * from the kernel command line (systemd-network-generator's bond=, vlan=,
 * ip=), and the agent's inventory shows each: type, members, VLAN id and
 * parent, address and connected route. This kernel is the one the agent
 * runs on, so these are checked here rather than in the netns suite. */
Test(iso_qemu, bond_vlan_and_dummy_links_in_the_guest) {
        const char *uuid = "5eed0000-0000-4000-8000-0000000000d1";
        char *ie = NULL;
        char *iso = download_iso(&ie);
        char *disk = make_disk();
        start_qemu(iso, disk, uuid, false,
                   "modules-load=bonding,8021q,dummy bonding.max_bonds=0 dummy.numdummies=3 "
                   "bond=bond1:dummy1,dummy2 vlan=vlan7:dummy0 ip=192.0.2.9:::255.255.255.248::vlan7:none");
        /* The agent re-sends its inventory every few polls: wait until one
         * was taken after networkd made the links. */
        int64_t end = tu_mono_ms() + BOOT_WAIT_MS;
        json_object *h = NULL;
        for (;;) {
                h = wait_host(ie, uuid, NULL, BOOT_WAIT_MS);
                json_object *v = guest_iface(h, "vlan7");
                if (guest_iface(h, "bond1") && v && tu_json_get(v, "ipv4_addresses"))
                        break;
                if (tu_mono_ms() > end) {
                        log_serial_tail();
                        cr_assert_fail("no bond1 and vlan7 with its address in the inventory: %s",
                                       json_object_to_json_string(tu_json_get(h, "inventory.interfaces")));
                }
                json_object_put(h);
                usleep(1000 * 1000);
        }
        json_object *b = guest_iface(h, "bond1");
        cr_assert_str_eq(tu_jstr(b, "type"), "bond");
        json_object *m = tu_json_get(b, "bond_members");
        cr_assert(m && json_object_array_length(m) == 2, "%s", json_object_to_json_string(b));
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(m, 0)), "dummy1");
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(m, 1)), "dummy2");
        json_object *v = guest_iface(h, "vlan7");
        cr_assert_str_eq(tu_jstr(v, "type"), "vlan");
        cr_assert_eq(json_object_get_int64(tu_json_get(v, "vlan_id")), 7);
        cr_assert_str_eq(tu_jstr(v, "vlan_parent"), "dummy0");
        json_object *a = tu_json_get(v, "ipv4_addresses");
        cr_assert(a && json_object_array_length(a) == 1, "%s", json_object_to_json_string(v));
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(a, 0)), "192.0.2.9/29");
        /* Its connected route, on the VLAN link. */
        json_object *routes = tu_json_get(h, "inventory.routes");
        bool connected = false;
        for (size_t i = 0; routes && i < json_object_array_length(routes); i++) {
                json_object *r = json_object_array_get_idx(routes, i);
                const char *dst = tu_jstr(r, "destination"), *dev = tu_jstr(r, "interface");
                connected |= dst && dev && strcmp(dst, "192.0.2.8/29") == 0 && strcmp(dev, "vlan7") == 0 &&
                             !tu_jstr(r, "gateway");
        }
        cr_assert(connected, "no 192.0.2.8/29 route on vlan7: %s", json_object_to_json_string(routes));
        json_object *d = guest_iface(h, "dummy0");
        cr_assert(d, "no dummy0: %s", json_object_to_json_string(tu_json_get(h, "inventory.interfaces")));
        cr_assert_str_eq(tu_jstr(d, "type"), "virtual");
        cr_assert_null(tu_json_get(guest_iface(h, "dummy0"), "bond_members"));
        /* The NIC still has its DHCP address: the links took nothing from it. */
        json_object *nic = find_by(tu_json_get(h, "inventory.interfaces"), "mac_address", GUEST_MAC);
        cr_assert(nic && tu_json_get(nic, "ipv4_addresses"), "%s", json_object_to_json_string(nic));
        json_object_put(h);
        free(disk);
        free(iso);
        free(ie);
}

/* A PXE boot as a data centre does it, through the iPXE ROM QEMU's virtio
 * NIC carries: `musterctl infraenv download --pxe DIR`, DIR served by user
 * networking's TFTP server with boot.ipxe as the DHCP boot file; the script
 * loads vmlinuz and initrd beside it. No CD-ROM: the kernel unpacks the
 * config musterd appended to the initramfs, the boot-medium mount is
 * skipped, and the agent registers with that config. */
Test(iso_qemu, pxe_boot_over_tftp_registers) {
        const char *uuid = "5eed0000-0000-4000-8000-0000000000f1";
        struct stat st;
        cr_assert_eq(stat("/usr/lib/ipxe/qemu/efi-virtio.rom", &st), 0,
                     "QEMU's iPXE ROMs are not installed (scripts/install-deps.sh iso installs ipxe-qemu)");
        char *ie = NULL, *out = NULL, *err = NULL, tftp[4200];
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "pxe-lab", &ie, NULL), 201);
        /* The infra-env's SSH key, for a shell on the live system. */
        char *pub = make_ssh_key("id_lab"), body[1024];
        free(make_ssh_key("id_other"));
        snprintf(body, sizeof body, "{\"ssh_authorized_key\":\"%s\"}", pub);
        cr_assert_eq(tu_http_json("PATCH", tu_url(md.base, "/api/v2/infra-envs/%s", ie), md.admin_token, body, NULL),
                     200);
        snprintf(tftp, sizeof tftp, "%s/tftp", dir);
        cr_assert_eq(mkdir(tftp, 0755), 0);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "pxe-lab", "--pxe", tftp), 0, "%s%s", out, err);
        free(out);
        free(err);
        tftp_dir = tftp;
        char *disk = make_disk();
        int64_t t0 = tu_mono_ms();
        start_qemu(NULL, disk, uuid, false, NULL);
        json_object *h = wait_host(ie, uuid, "known-unbound", BOOT_WAIT_MS);
        printf("iso_qemu: PXE (TFTP) boot-to-known-unbound %.1f s\n", (double) (tu_mono_ms() - t0) / 1000.0);
        fflush(stdout);
        tftp_dir = NULL;
        cr_assert(find_by(tu_json_get(h, "inventory.disks"), "name", "vda"), "%s", json_object_to_json_string(h));
        cr_assert(find_by(tu_json_get(h, "inventory.interfaces"), "mac_address", GUEST_MAC), "%s",
                  json_object_to_json_string(h));
        json_object_put(h);

        /* SSH through the forwarded port: the infra-env's key gets a root
         * shell on the live system (which booted without a CD-ROM); another
         * key does not. */
        char key[4300], other[4300];
        snprintf(key, sizeof key, "%s/id_lab", dir);
        snprintf(other, sizeof other, "%s/id_other", dir);
        int rc = guest_ssh(key, "echo user=$USER; test -e /muster/config.img && echo pxe-config", &out, &err);
        if (rc != 0)
                log_serial_tail();
        cr_assert_eq(rc, 0, "ssh with the infra-env's key: %s", err);
        cr_assert_str_eq(out, "user=root\npxe-config\n", "a root shell on the PXE-booted system: %s", out);
        free(out);
        free(err);
        rc = guest_ssh(other, "true", &out, &err);
        cr_assert_neq(rc, 0, "another key is refused");
        cr_assert(strstr(err, "Permission denied"), "%s", err);
        free(out);
        free(err);
        free(pub);
        free(disk);
        free(ie);
}

/* Static networking where there is no DHCP to rely on: the infra-env's
 * static config for the guest's MAC (10.0.2.50/24, gateway 10.0.2.2) goes
 * into the ISO's area, boot-setup writes it for systemd-networkd before the
 * network starts, and the host registers through that address: its
 * inventory shows 10.0.2.50, not a DHCP lease. */
Test(iso_qemu, static_network_from_the_iso_config) {
        const char *uuid = "5eed0000-0000-4000-8000-0000000000d1";
        char *ie = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "static-lab", &ie, NULL), 201);
        const char body[] =
                "{\"static_network\":[{\"mac_addresses\":[\"" GUEST_MAC "\"],\"files\":{\"10-lab.network\":"
                "\"[Match]\\nMACAddress=" GUEST_MAC "\\n\\n[Network]\\nAddress=10.0.2.50/24\\nGateway=10.0.2.2\\n"
                "DHCP=no\\n\"}}]}";
        cr_assert_eq(tu_http_json("PATCH", tu_url(md.base, "/api/v2/infra-envs/%s", ie), md.admin_token, body, NULL),
                     200);
        char *iso = NULL, *out = NULL, *err = NULL;
        cr_assert(asprintf(&iso, "%s/static.iso", dir) > 0);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "static-lab", "-o", iso), 0, "%s", err);
        free(out);
        free(err);
        char *disk = make_disk();
        int64_t t0 = tu_mono_ms();
        start_qemu(iso, disk, uuid, false, NULL);
        json_object *h = wait_host(ie, uuid, "known-unbound", BOOT_WAIT_MS);
        printf("iso_qemu: static network boot-to-known-unbound %.1f s\n", (double) (tu_mono_ms() - t0) / 1000.0);
        fflush(stdout);
        json_object *nic = find_by(tu_json_get(h, "inventory.interfaces"), "mac_address", GUEST_MAC);
        cr_assert(nic, "%s", json_object_to_json_string(h));
        json_object *v4 = tu_json_get(nic, "ipv4_addresses");
        cr_assert(v4 && json_object_array_length(v4) == 1, "%s", json_object_to_json_string(nic));
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(v4, 0)), "10.0.2.50/24",
                         "the static address, not a DHCP lease");
        json_object_put(h);
        free(disk);
        free(iso);
        free(ie);
}
