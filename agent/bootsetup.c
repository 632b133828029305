/* muster-agent boot-setup (bootsetup.h). */
#include "bootsetup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentconf.h"
#include "bootcfg.h"
#include "cleanup.h"
#include "fdio.h"
#include "log.h"
#include "staticnet.h"

/* ROOT/rel, into buf. */
static const char *under(const char *root, const char *rel, char *buf, size_t n) {
        snprintf(buf, n, "%s%s", strcmp(root, "/") == 0 ? "" : root, rel);
        return buf;
}

/* A folder, made with mode if missing; an existing one keeps its mode but
 * must be a folder. */
static int ensure_dir(const char *path, mode_t mode) {
        struct stat st;
        if (mkdir(path, mode) == 0)
                return 0;
        if (errno != EEXIST)
                return -errno;
        if (lstat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* ROOT/root/.ssh/authorized_keys holds keys (a line each, ending in a
 * newline), mode 0600 in a 0700 folder (fd_write_file_atomic). */
static int write_authorized_keys(const char *root, const char *keys) {
        char home[4200], ssh[4200], file[4300];
        int r;
        under(root, "/root", home, sizeof home);
        under(root, "/root/.ssh", ssh, sizeof ssh);
        snprintf(file, sizeof file, "%s/authorized_keys", ssh);
        if ((r = ensure_dir(home, 0700)) < 0 || (r = ensure_dir(ssh, 0700)) < 0)
                return r;
        size_t n = strlen(keys);
        _cleanup_free_ char *text = NULL;
        if (asprintf(&text, "%s%s", keys, n && keys[n - 1] != '\n' ? "\n" : "") < 0)
                return -ENOMEM;
        return fd_write_file_atomic(file, text, strlen(text), 0600);
}

/* ROOT/run/systemd/network/STATICNET_PREFIX+name holds text, 0644
 * (fd_write_file_atomic). */
static int write_unit(const char *root, const char *name, const char *text) {
        static const char *const dirs[] = { "/run", "/run/systemd", "/run/systemd/network" };
        char dir[4200], file[4400];
        int r;
        for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
                if ((r = ensure_dir(under(root, dirs[i], dir, sizeof dir), 0755)) < 0)
                        return r;
        snprintf(file, sizeof file, "%s/" STATICNET_PREFIX "%s", dir, name);
        return fd_write_file_atomic(file, text, strlen(text), 0644);
}

/* The static configs of the entries whose MACs are NICs of this machine
 * (ROOT/sys/class/net/NAME/address) into /run/systemd/network; other NICs
 * keep the image's DHCP. 0 or -errno (logged). */
static int write_static_network(const char *root, const char *json, const char *path) {
        struct staticnet sn;
        char err[512] = "", net[4200];
        int r = staticnet_parse(json, &sn, err, sizeof err);
        if (r < 0) {
                log_error("boot-setup", "The static network configs in %s are refused: %s", path,
                          err[0] ? err : strerror(-r));
                return r;
        }
        under(root, "/sys/class/net", net, sizeof net);
        _cleanup_closedir_ DIR *d = opendir(net);
        const struct staticnet_host *done[STATICNET_MAX_MACS * 4];
        size_t n_done = 0, written = 0;
        struct dirent *e;
        while (r == 0 && d && (e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char p[4500], mac[18];
                snprintf(p, sizeof p, "%s/%s/address", net, e->d_name);
                _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
                char buf[64] = "";
                if (fd < 0 || fd_read_full(fd, buf, sizeof buf - 1) < 17)
                        continue;
                buf[17] = '\0';
                if (!staticnet_mac_canonical(buf, mac))
                        continue;
                const struct staticnet_host *h = staticnet_find(&sn, mac);
                bool seen = false;
                for (size_t i = 0; h && i < n_done; i++)
                        seen |= done[i] == h;
                if (!h || seen || n_done == sizeof done / sizeof *done)
                        continue;
                done[n_done++] = h;
                for (size_t i = 0; r == 0 && i < h->n_files; i++) {
                        if ((r = write_unit(root, h->files[i].name, h->files[i].text)) < 0)
                                log_error_errno(r, "boot-setup", "Failed to write %s: %m", h->files[i].name);
                        else
                                written++;
                }
                if (r == 0)
                        log_info("boot-setup", "Static network for %s (%s): %zu files in /run/systemd/network",
                                 e->d_name, mac, h->n_files);
        }
        if (r == 0 && n_done == 0)
                log_info("boot-setup", "No NIC of this machine has a static network config (%zu hosts have one): DHCP",
                         sn.n);
        (void) written;
        staticnet_free(&sn);
        return r;
}

int bootsetup_run(const struct bootsetup_options *o) {
        const struct agentconf_paths paths = { .boot_config = o->boot_config, .initrd_config = o->initrd_config };
        const char *root = o->root && *o->root ? o->root : "/";
        _cleanup_free_ uint8_t *data = NULL;
        const char *path = NULL;
        size_t n = 0;
        char err[512] = "";
        struct bootcfg b;

        int r = agentconf_read_boot(&paths, &data, &n, &path);
        if (r == -ENOENT) {
                log_info("boot-setup", "No boot config (%s): nothing to set up", path);
                return 0;
        }
        if (r < 0) {
                log_error_errno(r, "boot-setup", "Failed to read the boot config %s: %m", path);
                return 1;
        }
        r = bootcfg_decode(data, n, &b, err, sizeof err);
        explicit_bzero(data, n);
        if (r == -ENODATA) {
                log_info("boot-setup", "The boot config %s is blank (an unconfigured ISO): nothing to set up", path);
                return 0;
        }
        if (r < 0) {
                log_error("boot-setup", "The boot config %s cannot be used: %s", path, err[0] ? err : strerror(-r));
                return 1;
        }
        int rc = 0;
        if (b.ssh_authorized_key) {
                r = write_authorized_keys(root, b.ssh_authorized_key);
                if (r < 0) {
                        log_error_errno(r, "boot-setup", "Failed to write root's authorized_keys under %s: %m", root);
                        rc = 1;
                } else
                        log_info("boot-setup", "root's SSH key from the boot config %s: the SSH server will start",
                                 path);
        } else
                log_info("boot-setup", "No SSH key in the boot config %s: no SSH server", path);
        if (b.static_network && write_static_network(root, b.static_network, path) < 0)
                rc = 1;
        explicit_bzero(b.token, strlen(b.token));
        bootcfg_free(&b);
        return rc;
}
