/* The agent under hostile or broken sysroots: truncated and garbled files,
 * missing /sys/firmware, escaping links, 10,000 disks. It reports what it
 * can, caps lists with a truncation marker, never crashes, exits 0. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char *root;

static void mk(void) {
        root = tu_mkdtemp();
        cr_assert_not_null(root);
}

static void rm(void) {
        tu_rm_rf(root);
        free(root);
}

TestSuite(badinput, .init = mk, .fini = rm, .timeout = 300);

static json_object *run_ok(void) {
        int st = -1;
        json_object *o = tu_agent_inventory(root, &st);
        cr_assert_eq(st, 0, "agent exit status %d", st);
        cr_assert_not_null(o, "agent printed JSON");
        cr_assert_eq(json_object_get_int(tu_json_get(o, "inventory_version")), 1);
        return o;
}

/* A plausible SATA disk as sysfs shows it. */
static void add_disk(const char *name, unsigned minor, const char *sectors) {
        char rel[512], target[512], dev[32];
        snprintf(target, sizeof target, "../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:%u/block/%s",
                 minor, name);
        snprintf(rel, sizeof rel, "sys/block/%s", name);
        cr_assert_eq(tu_symlink(root, rel, target), 0);
        char base[600];
        snprintf(base, sizeof base, "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:%u", minor);
        char p[800];
        snprintf(p, sizeof p, "%s/block/%s/size", base, name);
        tu_write_file(root, p, sectors);
        snprintf(p, sizeof p, "%s/block/%s/dev", base, name);
        snprintf(dev, sizeof dev, "8:%u\n", minor);
        tu_write_file(root, p, dev);
        snprintf(p, sizeof p, "%s/block/%s/queue/rotational", base, name);
        tu_write_file(root, p, "1\n");
        snprintf(p, sizeof p, "%s/model", base);
        tu_write_file(root, p, "WDC WD4003FZEX-0\n");
}

Test(badinput, empty_root) {
        json_object *o = run_ok();
        cr_assert_eq(json_object_array_length(tu_json_get(o, "disks")), 0);
        cr_assert_eq(json_object_array_length(tu_json_get(o, "interfaces")), 0);
        cr_assert_null(tu_json_get(o, "boot.current_boot_mode"), "no /sys/firmware: boot mode unknown, not guessed");
        cr_assert_null(tu_json_get(o, "memory.usable_bytes"));
        cr_assert_null(tu_json_get(o, "host_id"), "nothing to derive an id from");
        json_object_put(o);
}

Test(badinput, garbled_and_truncated_files) {
        /* Binary junk where text is expected, numbers that are not, a cut cpuinfo. */
        static const unsigned char junk[] = { 0xff, 0xfe, 0x00, 0x01, 'M', 'e', 'm', 0x80, '\n', 0x00, 0x7f };
        static const char cut[] = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6\0\xff";
        tu_write_bin(root, "proc/cpuinfo", cut, sizeof cut - 1);
        tu_write_file(root, "proc/meminfo", "MemTotal:       zz kB\nMemFree: 12");
        tu_write_bin(root, "proc/cmdline", junk, sizeof junk);
        tu_write_bin(root, "proc/self/mountinfo", junk, sizeof junk);
        tu_write_bin(root, "proc/net/route", junk, sizeof junk);
        tu_write_bin(root, "proc/net/if_inet6", junk, sizeof junk);
        tu_write_bin(root, "proc/net/fib_trie", junk, sizeof junk);
        tu_write_bin(root, "proc/net/ipv6_route", junk, sizeof junk);
        tu_write_file(root, "sys/devices/system/cpu/online", "0-");
        tu_write_file(root, "sys/devices/system/memory/block_size_bytes", "nothex");
        tu_write_bin(root, "sys/firmware/dmi/tables/DMI", junk, sizeof junk);
        tu_write_bin(root, "sys/firmware/dmi/tables/smbios_entry_point", "_SM3_", 5);
        tu_write_file(root, "sys/class/dmi/id/product_uuid", "03000200-0400-0500-0006-000700080009\n");
        tu_write_file(root, "sys/class/dmi/id/sys_vendor", "To be filled by O.E.M.\n");
        add_disk("sda", 0, "not-a-number\n");
        tu_write_file(root, "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/dev", "8:x");
        tu_write_bin(root, "run/udev/data/b8:0", junk, sizeof junk);
        add_disk("sdb", 16, "3907029168\n");
        tu_write_bin(root, "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:16/model", junk, sizeof junk);
        tu_write_file(root, "sys/class/net/eth0/address", "zz:zz\n");
        tu_write_file(root, "sys/class/net/eth0/mtu", "-1\n");
        json_object *o = run_ok();
        json_object *disks = tu_json_get(o, "disks");
        cr_assert_eq(json_object_array_length(disks), 2);
        cr_assert_null(tu_json_get(o, "disks.0.size_bytes"), "a garbled size stays unknown");
        cr_assert_eq(json_object_get_int64(tu_json_get(o, "disks.1.size_bytes")), 3907029168LL * 512);
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "disks.1.drive_type")), "HDD");
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "disks.1.transport")), "sata");
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "disks.1.hctl")), "0:0:0:16");
        cr_assert_null(tu_json_get(o, "system_vendor.uuid"), "the well-known junk UUID is dropped");
        cr_assert_null(tu_json_get(o, "system_vendor.manufacturer"), "placeholder vendor dropped");
        cr_assert_null(tu_json_get(o, "memory.usable_bytes"));
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "cpu.model_name")), "Intel(R) Xeon(R) Gold 6");
        json_object_put(o);
}

Test(badinput, links_cannot_escape_the_root) {
        /* Absolute and relative links out of the tree resolve inside it. */
        cr_assert_eq(tu_symlink(root, "proc/cpuinfo", "/proc/cpuinfo"), 0);
        cr_assert_eq(tu_symlink(root, "proc/meminfo", "../../../../../../proc/meminfo"), 0);
        cr_assert_eq(tu_symlink(root, "sys/block/sdz", "/sys/block/sdz"), 0); /* loops to itself */
        cr_assert_eq(tu_symlink(root, "sys/block/sdy", "sdy"), 0);
        json_object *o = run_ok();
        cr_assert_null(tu_json_get(o, "cpu.model_name"), "the host's /proc/cpuinfo was not read");
        cr_assert_null(tu_json_get(o, "memory.usable_bytes"), "the host's /proc/meminfo was not read");
        json_object_put(o);
}

Test(badinput, ten_thousand_disks_are_capped) {
        char name[32], rel[64], dev[32];
        /* Flat layout (virtual devices) to keep the tree quick to build. */
        for (int i = 0; i < 10000; i++) {
                snprintf(name, sizeof name, "vd%d", i);
                snprintf(rel, sizeof rel, "sys/block/%s/size", name);
                tu_write_file(root, rel, "209715200\n");
                snprintf(rel, sizeof rel, "sys/block/%s/dev", name);
                snprintf(dev, sizeof dev, "252:%d\n", i);
                tu_write_file(root, rel, dev);
        }
        json_object *o = run_ok();
        cr_assert_eq(json_object_array_length(tu_json_get(o, "disks")), 1024);
        cr_assert_eq(json_object_get_int64(tu_json_get(o, "truncated.disks.total")), 10000);
        cr_assert_eq(json_object_get_int64(tu_json_get(o, "truncated.disks.listed")), 1024);
        /* Natural order: vd0, vd1, ..., vd9, vd10. */
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "disks.10.name")), "vd10");
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "disks.0.drive_type")), "virtual");
        json_object_put(o);
}

Test(badinput, partitions_capped_per_disk) {
        add_disk("sda", 0, "3907029168\n");
        const char *base = "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda";
        char rel[512], v[32];
        for (int i = 1; i <= 300; i++) {
                snprintf(rel, sizeof rel, "%s/sda%d/partition", base, i);
                snprintf(v, sizeof v, "%d\n", i);
                tu_write_file(root, rel, v);
                snprintf(rel, sizeof rel, "%s/sda%d/size", base, i);
                tu_write_file(root, rel, "2048\n");
        }
        json_object *o = run_ok();
        cr_assert_eq(json_object_array_length(tu_json_get(o, "disks.0.partitions")), 256);
        cr_assert_eq(json_object_get_int64(tu_json_get(o, "disks.0.truncated.partitions.total")), 300);
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "disks.0.partitions.0.name")), "sda1");
        cr_assert_str_eq(json_object_get_string(tu_json_get(o, "disks.0.partitions.9.name")), "sda10");
        json_object_put(o);
}

Test(badinput, huge_files_are_bounded) {
        /* A 40 MiB cpuinfo (over the 16 MiB read cap) and a hostname of 1 MiB. */
        FILE *f;
        char path[4096];
        snprintf(path, sizeof path, "%s/proc", root);
        tu_write_file(root, "proc/.keep", "");
        snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
        f = fopen(path, "we");
        for (int i = 0; i < 400000; i++)
                fprintf(f, "processor\t: %d\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov\n\n", i);
        fclose(f);
        char *big = malloc(1 << 20);
        memset(big, 'h', (1 << 20) - 1);
        big[(1 << 20) - 1] = '\0';
        tu_write_file(root, "proc/sys/kernel/hostname", big);
        free(big);
        json_object *o = run_ok();
        cr_assert_leq(json_object_array_length(tu_json_get(o, "cpu.flags")), 512);
        cr_assert_leq(strlen(json_object_get_string(tu_json_get(o, "hostname"))), 255);
        json_object_put(o);
}
