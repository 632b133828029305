/* The Debian packages `make deb` builds from this tree (scripts/make-deb,
 * debian/): named for the programs' version, clean under lintian, holding
 * every file with its mode (musterd.conf a conffile, man pages gzipped),
 * installed by dpkg into a scratch root with its own admin directory (the
 * maintainer scripts run against that root, DPKG_ROOT, never this system),
 * its units verified there by systemd-analyze, and purged without a trace.
 * MUSTER_DEB_DIR names the folder with the packages (BUILD/deb). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static char *dir;
static char version[64];
static char deb_main[4096], deb_iso[4096];

static void up(void) {
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        const char *musterd = getenv("MUSTERD"), *debs = getenv("MUSTER_DEB_DIR");
        cr_assert(musterd && *musterd && debs && *debs, "MUSTERD and MUSTER_DEB_DIR are set by ctest");
        char *out = NULL;
        cr_assert_eq(tu_sh(&out, NULL, "'%s' --version", musterd), 0);
        cr_assert_eq(sscanf(out, "musterd %63s", version), 1, "musterd --version: %s", out);
        free(out);
        snprintf(deb_main, sizeof deb_main, "%s/muster_%s_amd64.deb", debs, version);
        snprintf(deb_iso, sizeof deb_iso, "%s/muster-discovery-iso_%s_all.deb", debs, version);
        cr_assert_eq(access(deb_main, R_OK), 0, "no %s: `make deb` builds it", deb_main);
        cr_assert_eq(access(deb_iso, R_OK), 0, "no %s: `make deb` builds it", deb_iso);
}

static void down(void) {
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(deb, .init = up, .fini = down, .timeout = 300);

/* stdout of a shell command that must exit 0. */
static char *sh_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sh_ok(const char *fmt, ...) {
        char cmd[8192];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof cmd, fmt, ap);
        va_end(ap);
        char *out = NULL, *err = NULL;
        int st = tu_sh(&out, &err, "%s", cmd);
        cr_assert_eq(st, 0, "%s: exit %d: %s\n%s", cmd, st, out ? out : "", err ? err : "");
        free(err);
        return out;
}

static char *field(const char *deb, const char *name) {
        char *v = sh_ok("dpkg-deb -f '%s' %s", deb, name);
        v[strcspn(v, "\n")] = '\0';
        return v;
}

Test(deb, named_and_versioned_as_the_programs) {
        static const struct { const char *deb_is_main, *name, *want; } fields[] = {
                { "y", "Package", "muster" },
                { "y", "Architecture", "amd64" },
                { "y", "Recommends", "muster-discovery-iso" },
                { "n", "Package", "muster-discovery-iso" },
                { "n", "Architecture", "all" },
        };
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
                const char *deb = *fields[i].deb_is_main == 'y' ? deb_main : deb_iso;
                char *v = field(deb, fields[i].name);
                cr_assert_str_eq(v, fields[i].want, "%s: %s", deb, fields[i].name);
                free(v);
        }
        for (int i = 0; i < 2; i++) {
                char *v = field(i ? deb_iso : deb_main, "Version");
                cr_assert_str_eq(v, version, "the package's version is musterd --version's");
                free(v);
        }
        /* ${shlibs:Depends}: the libraries the binaries link, by package. */
        char *dep = field(deb_main, "Depends");
        cr_assert(strstr(dep, "libc6 (>= ") && strstr(dep, "libmicrohttpd12"), "%s", dep);
        /* Every package holding a library that a program links directly. */
        char x[4200];
        snprintf(x, sizeof x, "%s/x", dir);
        free(sh_ok("dpkg-deb -x '%s' '%s'", deb_main, x));
        char *pkgs = sh_ok("cd '%s' && for b in usr/sbin/musterd usr/bin/musterctl usr/bin/muster-agent; do "
                           "objdump -p $b | awk '$1 == \"NEEDED\" { print $2 }' | while read -r lib; do "
                           "ldd $b | awk -v l=\"$lib\" '$1 == l { print $3 }'; done; done | sort -u > ../libs && "
                           "while read -r f; do r=$(realpath \"$f\"); "
                           "dpkg -S \"*/$(basename \"${r%%/*}\")/${r##*/}\" || exit 1; "
                           "done < ../libs > ../owners && sed 's/[:,].*//' ../owners | sort -u",
                           x);
        size_t n = 0;
        for (char *p = strtok(pkgs, "\n"); p; p = strtok(NULL, "\n"), n++) {
                char needle[256];
                snprintf(needle, sizeof needle, "%s", p);
                bool found = false;
                for (const char *d = dep; (d = strstr(d, needle)); d++)
                        if ((d == dep || d[-1] == ' ') && (d[strlen(needle)] == ' ' || d[strlen(needle)] == ',' ||
                                                            d[strlen(needle)] == '\0')) {
                                found = true;
                                break;
                        }
                cr_assert(found, "%s (a linked library's package) is not in Depends: %s", p, dep);
        }
        cr_assert_geq(n, 10, "the programs link at least ten libraries' packages, found %zu", n);
        free(pkgs);
        free(dep);
}

Test(deb, lintian_finds_no_error) {
        for (int i = 0; i < 2; i++) {
                const char *deb = i ? deb_iso : deb_main;
                char *out = NULL, *err = NULL;
                int st = tu_sh(&out, &err, "lintian --fail-on error --no-tag-display-limit '%s'", deb);
                cr_log_info("lintian %s:\n%s", deb, out ? out : "");
                cr_assert_not_null(out, "lintian did not run: scripts/install-deps.sh deb installs it");
                for (char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
                        cr_assert(strncmp(l, "E: ", 3) != 0, "lintian error: %.*s", (int) strcspn(l, "\n"), l);
                cr_assert_eq(st, 0, "lintian exit %d:\n%s\n%s", st, out, err ? err : "");
                free(out);
                free(err);
        }
}

/* Every file of both packages, with its mode, and nothing else. */
static const struct { const char *path; mode_t mode; } files[] = {
        { "etc/muster/musterd.conf", 0644 },
        { "lib/systemd/system/muster-agent-node.service", 0644 },
        { "lib/systemd/system/muster-agent.service", 0644 },
        { "lib/systemd/system/musterd.service", 0644 },
        { "lib/systemd/system/run-muster-boot.mount", 0644 },
        { "usr/bin/muster-agent", 0755 },
        { "usr/bin/musterctl", 0755 },
        { "usr/sbin/musterd", 0755 },
        { "usr/share/bash-completion/completions/musterctl", 0644 },
        { "usr/share/doc/muster-discovery-iso/changelog.gz", 0644 },
        { "usr/share/doc/muster-discovery-iso/copyright", 0644 },
        { "usr/share/doc/muster/README.md", 0644 },
        { "usr/share/doc/muster/changelog.gz", 0644 },
        { "usr/share/doc/muster/copyright", 0644 },
        { "usr/share/doc/muster/systemd/README.md", 0644 },
        { "usr/share/doc/muster/systemd/musterd.conf.gz", 0644 },
        { "usr/share/fish/vendor_completions.d/musterctl.fish", 0644 },
        { "usr/share/man/man1/musterctl.1.gz", 0644 },
        { "usr/share/man/man5/musterd.conf.5.gz", 0644 },
        { "usr/share/man/man8/muster-agent.8.gz", 0644 },
        { "usr/share/man/man8/musterd.8.gz", 0644 },
        { "usr/share/muster/clients/python/muster_client.py", 0644 },
        { "usr/share/muster/muster-discovery.iso", 0644 },
        { "usr/share/muster/muster-discovery.iso.json", 0644 },
        { "usr/share/muster/openapi.yaml", 0644 },
        { "usr/share/zsh/vendor-completions/_musterctl", 0644 },
};
#define N_FILES (sizeof files / sizeof *files)

/* The files under root: each expected one with its mode, and no other. */
static void check_tree(const char *root) {
        for (size_t i = 0; i < N_FILES; i++) {
                char path[8400];
                struct stat sb;
                snprintf(path, sizeof path, "%s/%s", root, files[i].path);
                cr_assert_eq(lstat(path, &sb), 0, "%s is not in the packages", files[i].path);
                cr_assert(S_ISREG(sb.st_mode), "%s is not a file", files[i].path);
                cr_assert_eq(sb.st_mode & 07777, files[i].mode, "%s has mode %o, not %o", files[i].path,
                             sb.st_mode & 07777, files[i].mode);
        }
        char *list = sh_ok("cd '%s' && find . -path ./var -prune -o ! -type d -print | sed 's|^\\./||' | sort", root);
        size_t n = 0;
        for (char *l = strtok(list, "\n"); l; l = strtok(NULL, "\n"), n++) {
                cr_assert(n < N_FILES, "unexpected file %s", l);
                cr_assert_str_eq(l, files[n].path, "unexpected or missing file");
        }
        cr_assert_eq(n, N_FILES, "%zu files, expected %zu", n, N_FILES);
        free(list);
}

Test(deb, files_modes_and_control) {
        char x[4200], ctl[4200];
        snprintf(x, sizeof x, "%s/x", dir);
        snprintf(ctl, sizeof ctl, "%s/control", dir);
        free(sh_ok("dpkg-deb -x '%s' '%s'", deb_main, x));
        free(sh_ok("dpkg-deb -x '%s' '%s'", deb_iso, x));
        check_tree(x);

        /* Owned by root, whoever built them. */
        for (int i = 0; i < 2; i++) {
                char *c = sh_ok("dpkg-deb -c '%s' | awk '$2 != \"root/root\"'", i ? deb_iso : deb_main);
                cr_assert_str_empty(c, "not root's: %s", c);
                free(c);
        }
        /* The man pages are gzipped and are the programs' own words. */
        free(sh_ok("gzip -t '%s'/usr/share/man/man*/*.gz", x));
        static const struct { const char *page, *says; } pages[] = {
                { "musterctl", "musterctl host list" }, { "musterd", "--check-config FILE" },
                { "muster-agent", "Options of run:" },  { "musterd.conf", "host_disconnect_timeout = 180" },
        };
        for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
                char *text = NULL;
                int st = tu_sh(&text, NULL, "MANPATH='%s/usr/share/man' MANWIDTH=100 man -P cat %s", x, pages[i].page);
                cr_assert_eq(st, 0, "man %s", pages[i].page);
                cr_assert(strstr(text, pages[i].says), "man %s says \"%s\"", pages[i].page, pages[i].says);
                free(text);
        }
        char path[8400];
        snprintf(path, sizeof path, "%s/usr/share/bash-completion/completions/musterctl", x);
        char *s = tu_read_file(path, NULL);
        cr_assert(s && strstr(s, "complete -F _musterctl musterctl"));
        free(s);
        /* The ISO and its sidecar are what `make iso` built, where musterd looks ([iso] template). */
        const char *musterd = getenv("MUSTERD");
        free(sh_ok("cmp '%s'/usr/share/muster/muster-discovery.iso \"$(dirname \"$(dirname '%s')\")\"/iso/muster-discovery.iso",
                   x, musterd));
        free(sh_ok("cmp '%s'/usr/share/muster/muster-discovery.iso.json \"$(dirname \"$(dirname '%s')\")\"/iso/muster-discovery.iso.json",
                   x, musterd));
        snprintf(path, sizeof path, "%s/etc/muster/musterd.conf", x);
        s = tu_read_file(path, NULL);
        char *dflt = tu_read_file(MUSTER_SOURCE_DIR "/systemd/musterd.conf", NULL);
        cr_assert(s && dflt && strcmp(s, dflt) == 0, "/etc/muster/musterd.conf is systemd/musterd.conf");
        free(s);
        free(dflt);

        /* The conffile, and the maintainer scripts debhelper wrote. */
        free(sh_ok("dpkg-deb -e '%s' '%s'", deb_main, ctl));
        snprintf(path, sizeof path, "%s/conffiles", ctl);
        s = tu_read_file(path, NULL);
        cr_assert(s && strcmp(s, "/etc/muster/musterd.conf\n") == 0, "conffiles: %s", s ? s : "(none)");
        free(s);
        snprintf(path, sizeof path, "%s/postinst", ctl);
        s = tu_read_file(path, NULL);
        cr_assert(s && strstr(s, "deb-systemd-helper update-state 'musterd.service'") &&
                          strstr(s, "deb-systemd-invoke try-restart"),
                  "postinst: %s", s ? s : "(none)");
        free(s);
        snprintf(path, sizeof path, "%s/postrm", ctl);
        s = tu_read_file(path, NULL);
        cr_assert(s && strstr(s, "deb-systemd-helper purge"), "postrm: %s", s ? s : "(none)");
        free(s);
}

/* dpkg with --root: instdir and admindir in the scratch root, the
 * maintainer scripts run here (chrootless: the root has no shell) with
 * DPKG_ROOT set, which deb-systemd-helper honours. The libraries are this
 * machine's, not the root's: --force-depends (the Depends are checked
 * against what the binaries link in named_and_versioned_as_the_programs). */
#define DPKG "dpkg --root='%s' --log='%s/var/log/dpkg.log' --force-script-chrootless --force-not-root"

static int count_dir(const char *path) {
        char *out = NULL;
        int st = tu_sh(&out, NULL, "ls -A '%s' 2>/dev/null | wc -l", path);
        int n = st == 0 && out ? atoi(out) : -1;
        free(out);
        return n;
}

Test(deb, dpkg_installs_verifies_and_purges_in_a_scratch_root) {
        char root[4200], path[8400];
        snprintf(root, sizeof root, "%s/root", dir);
        free(sh_ok("mkdir -p '%s'/var/lib/dpkg/info '%s'/var/lib/dpkg/updates '%s'/var/log && touch '%s'/var/lib/dpkg/status",
                   root, root, root, root));
        /* What this machine's deb-systemd-helper remembers: the same after. */
        int host_state = count_dir("/var/lib/systemd/deb-systemd-helper-enabled");

        free(sh_ok(DPKG " --force-depends -i '%s' '%s'", root, root, deb_main, deb_iso));
        char *s = sh_ok("dpkg-query --admindir='%s/var/lib/dpkg' -W -f='${Package} ${Version} ${db:Status-Abbrev}\\n' | sort",
                        root);
        char want[256];
        snprintf(want, sizeof want, "muster %s ii \nmuster-discovery-iso %s ii \n", version, version);
        cr_assert_str_eq(s, want, "both installed and configured");
        free(s);
        s = sh_ok("dpkg-query --admindir='%s/var/lib/dpkg' -W -f='${Conffiles}' muster", root);
        cr_assert(strstr(s, " /etc/muster/musterd.conf "), "dpkg holds musterd.conf as a conffile: %s", s);
        free(s);
        check_tree(root);
        /* The postinst ran against the root: the units are known there and none is enabled. */
        snprintf(path, sizeof path, "%s/var/lib/systemd/deb-systemd-helper-enabled/musterd.service.dsh-also", root);
        cr_assert_eq(access(path, F_OK), 0, "postinst recorded musterd.service in the root");
        snprintf(path, sizeof path, "%s/etc/systemd", root);
        cr_assert_neq(access(path, F_OK), 0, "no unit is enabled at install");
        cr_assert_eq(count_dir("/var/lib/systemd/deb-systemd-helper-enabled"), host_state,
                     "this machine's systemd state is untouched");
        /* The installed programs run. */
        s = sh_ok("'%s'/usr/sbin/musterd --version && '%s'/usr/bin/musterctl --version", root, root);
        cr_assert(strstr(s, version), "%s", s);
        free(s);

        /* systemd-analyze verify inside the root: every ExecStart and
         * ExecReload must resolve there. The root gets what the Depends of a
         * real system bring: systemd's own units (sysinit.target, ...) and
         * /bin/kill (ExecReload), copied from this machine. */
        free(sh_ok("mkdir -p '%s'/usr/lib/systemd '%s'/bin && cp -r /lib/systemd/system '%s'/usr/lib/systemd/ && "
                   "cp /bin/kill '%s'/bin/kill",
                   root, root, root, root));
        char *out = NULL, *err = NULL;
        int st = tu_sh(&out, &err,
                       "cd / && systemd-analyze verify --man=no --root='%s' musterd.service muster-agent.service "
                       "muster-agent-node.service run-muster-boot.mount",
                       root);
        cr_assert(st == 0 && (!err || !*err), "systemd-analyze verify --root: exit %d:\n%s", st, err ? err : "");
        free(out);
        free(err);
        /* ... and it would say so if the package lacked a program. */
        free(sh_ok("mv '%s'/usr/sbin/musterd '%s'/musterd.away", root, root));
        st = tu_sh(&out, &err, "cd / && systemd-analyze verify --man=no --root='%s' musterd.service", root);
        cr_assert(st != 0 && err && strstr(err, "/usr/sbin/musterd is not executable"), "exit %d: %s", st,
                  err ? err : "");
        free(out);
        free(err);
        free(sh_ok("mv '%s'/musterd.away '%s'/usr/sbin/musterd", root, root));

        /* Purged: the files, the conffile and the root's unit state go. */
        free(sh_ok(DPKG " --purge muster muster-discovery-iso", root, root));
        for (size_t i = 0; i < N_FILES; i++) {
                snprintf(path, sizeof path, "%s/%s", root, files[i].path);
                cr_assert_neq(access(path, F_OK), 0, "%s is left after purge", files[i].path);
        }
        snprintf(path, sizeof path, "%s/etc/muster", root);
        cr_assert_neq(access(path, F_OK), 0, "/etc/muster is left after purge");
        snprintf(path, sizeof path, "%s/var/lib/systemd/deb-systemd-helper-enabled", root);
        cr_assert_eq(count_dir(path), 0, "the root's unit state is purged");
        s = sh_ok("dpkg-query --admindir='%s/var/lib/dpkg' -W -f='${Package} ${db:Status-Abbrev}\\n' 2>/dev/null || true",
                  root);
        cr_assert_str_empty(s, "still known to dpkg: %s", s);
        free(s);
}
