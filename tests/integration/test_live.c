/* The real agent on the test machine agrees with util-linux and coreutils:
 * every whole disk of `lsblk -J -b -O --list` with the same size, cpu.count
 * equal to `nproc`, MemTotal equal to /proc/meminfo. Partitions are checked
 * on this machine's disks and, so that a machine without any still checks
 * some, on a loop device over a sparse GPT image in a temporary directory
 * (root only; no real disk is written). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static json_object *inv;

static void setup(void) {
        int st = -1;
        inv = tu_agent_inventory(NULL, &st);
        cr_assert_not_null(inv, "muster-agent inventory printed JSON");
        cr_assert_eq(st, 0);
}

static void teardown(void) {
        json_object_put(inv);
}

TestSuite(live, .init = setup, .fini = teardown);

static json_object *find_by_name(json_object *arr, const char *name) {
        for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i), *n;
                if (json_object_object_get_ex(e, "name", &n) && strcmp(json_object_get_string(n), name) == 0)
                        return e;
        }
        return NULL;
}

static bool lsblk_is_whole_disk(const char *name, const char *type) {
        if (!strncmp(name, "loop", 4) || !strncmp(name, "ram", 3) || !strncmp(name, "zram", 4))
                return false;
        return !strcmp(type, "disk") || !strcmp(type, "rom") || !strcmp(type, "mpath") ||
               !strcmp(type, "lvm") || !strncmp(type, "raid", 4);
}

Test(live, disks_match_lsblk) {
        const char *argv[] = { "lsblk", "-J", "-b", "-O", "--list", NULL };
        int st;
        char *out = tu_run(argv, &st, NULL);
        cr_assert_eq(st, 0, "lsblk ran");
        json_object *ls = json_tokener_parse(out), *devs;
        free(out);
        cr_assert(json_object_object_get_ex(ls, "blockdevices", &devs));
        json_object *disks = tu_json_get(inv, "disks");
        size_t expected = 0;
        for (size_t i = 0; i < json_object_array_length(devs); i++) {
                json_object *d = json_object_array_get_idx(devs, i);
                const char *name = json_object_get_string(tu_json_get(d, "name"));
                const char *type = json_object_get_string(tu_json_get(d, "type"));
                if (!name || !type || !lsblk_is_whole_disk(name, type))
                        continue;
                /* lsblk may print dm names (mapper); the kernel name is kname. */
                const char *kname = json_object_get_string(tu_json_get(d, "kname"));
                json_object *mine = find_by_name(disks, kname ? kname : name);
                cr_assert_not_null(mine, "disk %s from lsblk is in the inventory", name);
                cr_assert_eq(json_object_get_int64(tu_json_get(mine, "size_bytes")),
                             json_object_get_int64(tu_json_get(d, "size")), "size of %s", name);
                json_object *ro = tu_json_get(d, "ro"), *rm = tu_json_get(d, "rm");
                if (ro)
                        cr_assert_eq(json_object_get_boolean(tu_json_get(mine, "read_only")),
                                     json_object_get_boolean(ro), "read-only of %s", name);
                if (rm)
                        cr_assert_eq(json_object_get_boolean(tu_json_get(mine, "removable")),
                                     json_object_get_boolean(rm), "removable of %s", name);
                json_object *ls_phy = tu_json_get(d, "phy-sec");
                if (ls_phy)
                        cr_assert_eq(json_object_get_int64(tu_json_get(mine, "physical_sector_size")),
                                     json_object_get_int64(ls_phy), "physical sector of %s", name);
                expected++;
        }
        cr_assert_eq(json_object_array_length(disks), expected, "no disk more than lsblk lists");
        json_object_put(ls);
}

/* lsblk's partitions (kname, size, fstype) of the disks the inventory lists
 * compared with the inventory's: how many were compared. */
static size_t compare_partitions(json_object *devs, json_object *disks) {
        size_t checked = 0;
        for (size_t i = 0; i < json_object_array_length(devs); i++) {
                json_object *d = json_object_array_get_idx(devs, i);
                const char *type = json_object_get_string(tu_json_get(d, "type"));
                const char *pk = json_object_get_string(tu_json_get(d, "pkname"));
                if (!type || strcmp(type, "part") != 0 || !pk)
                        continue;
                json_object *disk = find_by_name(disks, pk);
                if (!disk)
                        continue; /* a partition of an excluded device (loop) */
                const char *name = json_object_get_string(tu_json_get(d, "kname"));
                json_object *p = find_by_name(tu_json_get(disk, "partitions"), name);
                cr_assert_not_null(p, "partition %s listed", name);
                cr_assert_eq(json_object_get_int64(tu_json_get(p, "size_bytes")),
                             json_object_get_int64(tu_json_get(d, "size")), "size of %s", name);
                const char *fs = json_object_get_string(tu_json_get(d, "fstype"));
                if (fs)
                        cr_assert_str_eq(json_object_get_string(tu_json_get(p, "fstype")), fs);
                checked++;
        }
        return checked;
}

static json_object *lsblk(const char *dev) {
        const char *argv[] = { "lsblk", "-J", "-b", "-O", "--list", dev, NULL };
        int st;
        char *out = tu_run(argv, &st, NULL);
        cr_assert_eq(st, 0, "lsblk ran");
        json_object *ls = json_tokener_parse(out), *devs;
        free(out);
        cr_assert(json_object_object_get_ex(ls, "blockdevices", &devs));
        return ls;
}

static char loop_dev[64], *loop_dir;

static void loop_fini(void) {
        if (loop_dev[0])
                tu_runf(NULL, NULL, "losetup -d %s", loop_dev);
        loop_dev[0] = '\0';
        if (loop_dir) {
                tu_rm_rf(loop_dir);
                free(loop_dir);
                loop_dir = NULL;
        }
}

/* A 64 MiB sparse file with a GPT of three partitions on a loop device
 * (partx adds them: a kernel without partition table parsers still takes
 * BLKPG). The inventory leaves loop devices out, so the kernel's sysfs
 * directory of that device is copied into a sysroot as disk "vdz", its
 * partitions renamed vdz1.. (their contents untouched), and the agent's
 * view of that compared with lsblk's of the loop device. How many
 * partitions were compared. */
static size_t loop_disk_partitions(void) {
        loop_dir = tu_mkdtemp();
        cr_assert_not_null(loop_dir);
        char img[4200], *out = NULL;
        snprintf(img, sizeof img, "%s/disk.img", loop_dir);
        tu_must("truncate -s 64M %s", img);
        cr_assert_eq(tu_write_file(loop_dir, "table", "label: gpt\n,8M,S\n,16M,L\n,,L\n"), 0);
        char table[4200];
        snprintf(table, sizeof table, "%s/table", loop_dir);
        const char *sfdisk[] = { "sh", "-c", "sfdisk -q \"$0\" < \"$1\"", img, table, NULL };
        int st = -1;
        char *err = NULL;
        free(tu_run(sfdisk, &st, &err));
        cr_assert_eq(st, 0, "sfdisk: %s", err ? err : "");
        free(err);
        cr_assert_eq(tu_runf(&out, NULL, "losetup --find --show --partscan %s", img), 0, "losetup");
        snprintf(loop_dev, sizeof loop_dev, "%.*s", (int) strcspn(out, "\n"), out);
        free(out);
        tu_must("partx -a %s", loop_dev);
        const char *kname = strrchr(loop_dev, '/') + 1;

        json_object *ls = lsblk(loop_dev), *devs = tu_json_get(ls, "blockdevices");
        size_t parts = 0;
        for (size_t i = 0; i < json_object_array_length(devs); i++)
                parts += strcmp(tu_jstr(json_object_array_get_idx(devs, i), "type"), "part") == 0;
        cr_assert_eq(parts, 3, "the kernel has the three partitions of %s", loop_dev);

        /* The copy: sysfs files that cannot be read are left out (cp says so). */
        tu_must("mkdir -p %s/root/sys/devices/virtual/block %s/root/sys/block", loop_dir, loop_dir);
        tu_runf(NULL, NULL, "cp -r /sys/devices/virtual/block/%s %s/root/sys/devices/virtual/block/vdz", kname,
                loop_dir);
        for (int i = 1; i <= 3; i++)
                tu_must("mv %s/root/sys/devices/virtual/block/vdz/%sp%d %s/root/sys/devices/virtual/block/vdz/vdz%d",
                        loop_dir, kname, i, loop_dir, i);
        char root[4200];
        snprintf(root, sizeof root, "%s/root", loop_dir);
        cr_assert_eq(tu_symlink(root, "sys/block/vdz", "../devices/virtual/block/vdz"), 0);

        json_object *vinv = tu_agent_inventory(root, &st);
        cr_assert_eq(st, 0);
        cr_assert_not_null(vinv);
        json_object *disk = find_by_name(tu_json_get(vinv, "disks"), "vdz");
        cr_assert_not_null(disk, "the copied loop device is disk vdz");
        cr_assert_eq(json_object_get_int64(tu_json_get(disk, "size_bytes")), 64 << 20);
        json_object *mine = tu_json_get(disk, "partitions");
        cr_assert_eq(json_object_array_length(mine), 3, "%s", json_object_to_json_string(mine));
        size_t checked = 0;
        for (size_t i = 0; i < json_object_array_length(devs); i++) {
                json_object *d = json_object_array_get_idx(devs, i);
                if (strcmp(tu_jstr(d, "type"), "part") != 0)
                        continue;
                const char *kn = tu_jstr(d, "kname");
                cr_assert(strncmp(kn, kname, strlen(kname)) == 0 && kn[strlen(kname)] == 'p', "%s", kn);
                char name[32];
                snprintf(name, sizeof name, "vdz%s", kn + strlen(kname) + 1);
                json_object *p = find_by_name(mine, name);
                cr_assert_not_null(p, "partition %s (%s) listed", name, kn);
                cr_assert_eq(json_object_get_int64(tu_json_get(p, "size_bytes")),
                             json_object_get_int64(tu_json_get(d, "size")), "size of %s", kn);
                checked++;
        }
        json_object_put(vinv);
        json_object_put(ls);
        return checked;
}

Test(live, partitions_match_lsblk, .fini = loop_fini) {
        json_object *ls = lsblk(NULL);
        size_t checked = compare_partitions(tu_json_get(ls, "blockdevices"), tu_json_get(inv, "disks"));
        json_object_put(ls);
        if (geteuid() != 0) {
                if (checked == 0)
                        cr_skip_test("no partition on this machine's disks, and no root to make a loop device");
                return;
        }
        checked += loop_disk_partitions();
        cr_assert_geq(checked, 3);
}

Test(live, cpu_count_is_nproc) {
        const char *argv[] = { "nproc", "--all", NULL };
        int st;
        char *out = tu_run(argv, &st, NULL);
        cr_assert_eq(st, 0);
        /* --all: installed CPUs, not this process's affinity mask; on a
         * machine with every CPU online both are the online count. */
        const char *argv2[] = { "nproc", NULL };
        char *out2 = tu_run(argv2, &st, NULL);
        long count = json_object_get_int64(tu_json_get(inv, "cpu.count"));
        cr_assert(count == atol(out2) || count == atol(out), "cpu.count %ld vs nproc %s / nproc --all %s",
                  count, out2, out);
        cr_assert_eq(count, atol(out2), "cpu.count equals nproc");
        free(out);
        free(out2);
        cr_assert_gt(json_object_array_length(tu_json_get(inv, "cpu.flags")), 0);
}

Test(live, memory_and_identity) {
        FILE *f = fopen("/proc/meminfo", "re");
        long long kb = 0;
        cr_assert_eq(fscanf(f, "MemTotal: %lld kB", &kb), 1);
        fclose(f);
        cr_assert_eq(json_object_get_int64(tu_json_get(inv, "memory.usable_bytes")), kb * 1024);
        cr_assert_geq(json_object_get_int64(tu_json_get(inv, "memory.physical_bytes")), kb * 1024);
        const char *id = json_object_get_string(tu_json_get(inv, "host_id"));
        cr_assert_not_null(id, "a host id");
        cr_assert_eq(strlen(id), 36);
        /* Stable: a second run gives the same id. */
        int st;
        json_object *again = tu_agent_inventory(NULL, &st);
        cr_assert_str_eq(json_object_get_string(tu_json_get(again, "host_id")), id);
        json_object_put(again);
        char host[256];
        gethostname(host, sizeof host);
        cr_assert_str_eq(json_object_get_string(tu_json_get(inv, "hostname")), host);
}

Test(live, help_and_bad_usage) {
        int st;
        const char *h[] = { tu_agent_path(), "inventory", "--help", NULL };
        char *out = tu_run(h, &st, NULL);
        cr_assert_eq(st, 0);
        cr_assert(strstr(out, "--sysroot"));
        free(out);
        const char *bad[] = { tu_agent_path(), "inventory", "--min-disk-bytes", "lots", NULL };
        char *err = NULL;
        out = tu_run(bad, &st, &err);
        cr_assert_eq(st, 2);
        cr_assert(strstr(err, "--min-disk-bytes"), "%s", err);
        free(out);
        free(err);
        const char *unk[] = { tu_agent_path(), "frobnicate", NULL };
        out = tu_run(unk, &st, &err);
        cr_assert_eq(st, 2);
        cr_assert(strstr(err, "Unknown command"));
        free(out);
        free(err);
        const char *nosr[] = { tu_agent_path(), "inventory", "--sysroot", "/nonexistent/muster", NULL };
        out = tu_run(nosr, &st, &err);
        cr_assert_eq(st, 1, "a sysroot that does not exist is an error");
        cr_assert(strstr(err, "/nonexistent/muster"), "%s", err);
        free(out);
        free(err);
}

/* Each command's --help is that command's: its options (and, for run and
 * node, where their settings come from and their exit status), within 80
 * columns; the bare --help has them all. */
Test(live, each_command_has_its_own_help) {
        static const struct {
                const char *cmd, *has, *lacks;
        } cases[] = {
                { "inventory", "Options of inventory:", "Options of run:" },
                { "run", "Options of run:", "Options of node:" },
                { "node", "Options of node:", "Options of inventory:" },
                { "boot-setup", "Options of boot-setup", "Options of run:" },
        };
        int st;
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                const char *argv[] = { tu_agent_path(), cases[i].cmd, "--help", NULL };
                char *out = tu_run(argv, &st, NULL);
                cr_assert_eq(st, 0, "%s --help", cases[i].cmd);
                char want[64];
                snprintf(want, sizeof want, "Usage: muster-agent %s [OPTIONS]\n", cases[i].cmd);
                cr_assert(strncmp(out, want, strlen(want)) == 0, "%s", out);
                cr_assert(strstr(out, cases[i].has) && !strstr(out, cases[i].lacks), "%s --help: %s", cases[i].cmd, out);
                bool settings = strcmp(cases[i].cmd, "run") == 0 || strcmp(cases[i].cmd, "node") == 0;
                cr_assert_eq(strstr(out, "Exit status of run and node") != NULL, settings, "%s", out);
                for (char *l = out; *l;) {
                        size_t n = strcspn(l, "\n");
                        cr_assert_leq(n, 80, "%s --help, a line of %zu columns: %.*s", cases[i].cmd, n, (int) n, l);
                        l += n + (l[n] != '\0');
                }
                free(out);
                /* `muster-agent help CMD` is the same. */
                const char *help[] = { tu_agent_path(), "help", cases[i].cmd, NULL };
                char *again = tu_run(help, &st, NULL);
                cr_assert_eq(st, 0);
                cr_assert(strncmp(again, want, strlen(want)) == 0, "%s", again);
                free(again);
        }
        const char *all[] = { tu_agent_path(), "--help", NULL };
        char *out = tu_run(all, &st, NULL);
        cr_assert_eq(st, 0);
        cr_assert(strstr(out, "Options of inventory:") && strstr(out, "Options of run:") &&
                          strstr(out, "Options of node:") && strstr(out, "Options of boot-setup"),
                  "%s", out);
        free(out);
        /* A bad option points at the command's help. */
        const char *bad[] = { tu_agent_path(), "run", "--bogus", NULL };
        char *err = NULL;
        out = tu_run(bad, &st, &err);
        cr_assert_eq(st, 2);
        cr_assert(strstr(err, "Try 'muster-agent run --help'."), "%s", err);
        cr_assert_str_eq(out, "", "no help on stdout");
        free(out);
        free(err);
}
