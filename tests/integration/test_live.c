/* The real agent on the test machine agrees with util-linux and coreutils:
 * every whole disk of `lsblk -J -b -O --list` with the same size, cpu.count
 * equal to `nproc`, MemTotal equal to /proc/meminfo. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

Test(live, partitions_match_lsblk) {
        const char *argv[] = { "lsblk", "-J", "-b", "-O", "--list", NULL };
        int st;
        char *out = tu_run(argv, &st, NULL);
        json_object *ls = json_tokener_parse(out), *devs;
        free(out);
        cr_assert(json_object_object_get_ex(ls, "blockdevices", &devs));
        json_object *disks = tu_json_get(inv, "disks");
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
                             json_object_get_int64(tu_json_get(d, "size")));
                const char *fs = json_object_get_string(tu_json_get(d, "fstype"));
                if (fs)
                        cr_assert_str_eq(json_object_get_string(tu_json_get(p, "fstype")), fs);
        }
        json_object_put(ls);
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
