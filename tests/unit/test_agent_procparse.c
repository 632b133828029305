/* procparse: cpuinfo, meminfo, CPU lists, command line, mountinfo, udev db. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "procparse.h"

/* Two stanzas as x86 Linux prints them (trimmed to the fields we read). */
static const char *cpuinfo_x86 =
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.122\n"
        "physical id\t: 0\nsiblings\t: 4\ncore id\t\t: 0\ncpu cores\t: 2\n"
        "flags\t\t: fpu vme de pse tsc msr lm hypervisor\n\n"
        "processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2999.5\n"
        "physical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu vme de pse tsc msr lm hypervisor\n\n"
        "processor\t: 2\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n"
        "physical id\t: 1\ncore id\t\t: 3\nflags\t\t: fpu\n\n";

Test(cpuinfo, x86_topology_and_flags) {
        struct cpuinfo ci;
        cr_assert_eq(cpuinfo_parse(cpuinfo_x86, &ci), 0);
        cr_assert_eq(ci.processors, 3);
        cr_assert_str_eq(ci.model_name, "AMD EPYC");
        cr_assert_eq(ci.sockets, 2);
        cr_assert_eq(ci.cores, 2); /* (0,0) and (1,3) */
        cr_assert_float_eq(ci.max_mhz, 2999.5, 1e-9);
        cr_assert_eq(ci.flags.n, 8, "flags of the first processor only");
        cr_assert_str_eq(ci.flags.v[7], "hypervisor");
        cr_assert_str_eq(ci.arch_hint, "x86_64");
        cpuinfo_free(&ci);
}

Test(cpuinfo, arm64_features) {
        const char *t = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes\n"
                        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n\n"
                        "processor\t: 1\nFeatures\t: fp asimd evtstrm aes\nCPU architecture: 8\n";
        struct cpuinfo ci;
        cr_assert_eq(cpuinfo_parse(t, &ci), 0);
        cr_assert_eq(ci.processors, 2);
        cr_assert_null(ci.model_name);
        cr_assert_eq(ci.sockets, -1, "no physical id: topology unknown");
        cr_assert_str_eq(ci.arch_hint, "aarch64");
        cr_assert_eq(ci.flags.n, 4);
        cpuinfo_free(&ci);
}

Test(cpuinfo, garbage_never_crashes) {
        const char *bad[] = { "", "\n\n\n", "processor", ":::::\n: :\n", "processor\t: x\nphysical id: -\ncore id:\n",
                              "cpu MHz : nan\ncpu MHz : 1e308\ncpu MHz : -5\n", "flags\n\xff\xfe\x01" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct cpuinfo ci;
                cr_assert_eq(cpuinfo_parse(bad[i], &ci), 0);
                cr_assert(ci.max_mhz < 0 || ci.max_mhz < 1e6);
                cpuinfo_free(&ci);
        }
}

Test(meminfo, values_and_errors) {
        const char *t = "MemTotal:       24684084 kB\nMemFree:        24140436 kB\nHugePages_Total:       0\n";
        int64_t v;
        cr_assert_eq(meminfo_get(t, "MemTotal", &v), 0);
        cr_assert_eq(v, 24684084LL * 1024);
        cr_assert_eq(meminfo_get(t, "HugePages_Total", &v), 0);
        cr_assert_eq(v, 0);
        cr_assert_eq(meminfo_get(t, "Mem", &v), -ENOENT, "prefix of a key is not the key");
        cr_assert_eq(meminfo_get("MemTotal: abc kB\n", "MemTotal", &v), -EINVAL);
        cr_assert_eq(meminfo_get("MemTotal: -5 kB\n", "MemTotal", &v), -EINVAL);
        cr_assert_eq(meminfo_get("MemTotal: 99999999999999999999 kB\n", "MemTotal", &v), -EINVAL);
        cr_assert_eq(meminfo_get("MemTotal: 9007199254740993 kB\n", "MemTotal", &v), -ERANGE);
        cr_assert_eq(meminfo_get("MemTotal: 12 MB\n", "MemTotal", &v), -EINVAL);
        cr_assert_eq(meminfo_get("", "MemTotal", &v), -ENOENT);
}

Test(cpulist, ranges) {
        int64_t n;
        cr_assert_eq(cpulist_count("0-3,8,10-11\n", 1 << 20, &n), 0);
        cr_assert_eq(n, 7);
        cr_assert_eq(cpulist_count("0", 1 << 20, &n), 0);
        cr_assert_eq(n, 1);
        cr_assert_eq(cpulist_count("", 16, &n), -EINVAL);
        cr_assert_eq(cpulist_count("3-1", 16, &n), -EINVAL);
        cr_assert_eq(cpulist_count("0-", 16, &n), -EINVAL);
        cr_assert_eq(cpulist_count("a", 16, &n), -EINVAL);
        cr_assert_eq(cpulist_count("0-99999999", 16, &n), -EINVAL, "over the cap");
        /* strtol saturates: the range's length must not overflow (fuzz_proc). */
        cr_assert_eq(cpulist_count("0-11111111111111111111111111155", 8192, &n), -EINVAL);
        cr_assert_eq(cpulist_count("0-9223372036854775807", INT64_MAX, &n), -EINVAL);
        cr_assert_eq(cpulist_count("0-15", 16, &n), 0);
        cr_assert_eq(n, 16, "exactly the cap");
        cr_assert_eq(cpulist_count("0,,1", 16, &n), -EINVAL);
}

Test(cmdline, keys_quotes_and_bootif) {
        const char *c = "BOOT_IMAGE=/vmlinuz root=live:CDLABEL=muster quiet foo=\"a b\" BOOTIF=01-52-54-00-AB-cd-01 x=1 x=2";
        char *v = cmdline_get(c, "root");
        cr_assert_str_eq(v, "live:CDLABEL=muster");
        free(v);
        v = cmdline_get(c, "foo");
        cr_assert_str_eq(v, "a b");
        free(v);
        v = cmdline_get(c, "x");
        cr_assert_str_eq(v, "2", "the last occurrence wins");
        free(v);
        cr_assert_null(cmdline_get(c, "quiet"), "a flag has no value");
        cr_assert_null(cmdline_get(c, "roo"));
        cr_assert_null(cmdline_get("a -- b=1", "b"), "after -- the words belong to init");
        v = cmdline_get(c, "BOOTIF");
        char *mac = bootif_to_mac(v);
        cr_assert_str_eq(mac, "52:54:00:ab:cd:01");
        free(mac);
        free(v);
        mac = bootif_to_mac("52:54:00:ab:cd:02");
        cr_assert_str_eq(mac, "52:54:00:ab:cd:02");
        free(mac);
        cr_assert_null(bootif_to_mac("01-52-54-00-ab"));
        cr_assert_null(bootif_to_mac("01-52-54-00-ab-cd-01-ff"));
        cr_assert_null(bootif_to_mac("zz:54:00:ab:cd:02"));
        /* Signs are not hex digits (found by fuzz_proc: sscanf's %2x took
         * "-6" as 0xfffffffa and the "MAC" came out 41 characters long). */
        cr_assert_null(bootif_to_mac("-6-46-46-46-46-41"));
        cr_assert_null(bootif_to_mac("01-+2-54-00-ab-cd-01"));
        cr_assert_null(bootif_to_mac("52:54:00:ab:cd-02"), "one separator throughout");
        cr_assert_null(bootif_to_mac(" 1-52-54-00-ab-cd-01"));
        mac = bootif_to_mac("01-52-54-00-AB-CD-EF");
        cr_assert_str_eq(mac, "52:54:00:ab:cd:ef");
        free(mac);
        mac = bootif_to_mac("52-54-00-ab-cd-03");
        cr_assert_str_eq(mac, "52:54:00:ab:cd:03");
        free(mac);
        cr_assert_null(bootif_to_mac("52:54-00:ab:cd:02"));
        cr_assert_null(bootif_to_mac(NULL));
}

Test(mountinfo, parse_and_find) {
        const char *t =
                "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
                "23 22 0:5 / /dev rw,relatime - devtmpfs devtmpfs rw\n"
                "40 22 8:1 / /run/live/medium ro shared:9 - iso9660 /dev/sda1 ro\n"
                "41 22 254:0 /srv /mnt/with\\040space rw - ext4 /dev/vda rw\n"
                "garbage line\n"
                "42 22 x:y / /bad rw - ext4 /dev/x rw\n";
        struct mount_table mt;
        cr_assert_eq(mountinfo_parse(t, &mt), 0);
        cr_assert_eq(mt.n, 4);
        cr_assert_str_eq(mount_table_find(&mt, 254, 0)->mountpoint, "/", "the shortest mount point wins");
        cr_assert_str_eq(mount_table_find(&mt, 8, 1)->mountpoint, "/run/live/medium");
        cr_assert_str_eq(mt.e[2].fstype, "iso9660");
        cr_assert_str_eq(mt.e[3].mountpoint, "/mnt/with space");
        cr_assert_null(mount_table_find(&mt, 8, 2));
        mount_table_free(&mt);
}

Test(udevdb, record) {
        const char *t = "S:disk/by-id/ata-QEMU_HARDDISK_QM00001\nS:disk/by-path/pci-0000:00:1f.2-ata-1\n"
                        "W:3\nI:123\nE:ID_ATA=1\nE:ID_SERIAL=QEMU_HARDDISK_QM00001\nE:ID_MODEL_ENC=QEMU\\x20HARDDISK\n"
                        "E:BROKEN\nG:systemd\nQ:x\nV:1\n";
        struct udev_record r;
        cr_assert_eq(udev_record_parse(t, &r), 0);
        cr_assert_eq(r.links.n, 2);
        cr_assert_str_eq(udev_record_get(&r, "ID_SERIAL"), "QEMU_HARDDISK_QM00001");
        cr_assert_str_eq(udev_record_get(&r, "ID_MODEL_ENC"), "QEMU\\x20HARDDISK");
        cr_assert_null(udev_record_get(&r, "ID_SER"));
        cr_assert_null(udev_record_get(&r, "BROKEN"));
        udev_record_free(&r);
}

Test(devnum, parse) {
        unsigned a, b;
        cr_assert_eq(devnum_parse("259:0", &a, &b), 0);
        cr_assert(a == 259 && b == 0);
        cr_assert_eq(devnum_parse("259:", &a, &b), -EINVAL);
        cr_assert_eq(devnum_parse("259:0x", &a, &b), -EINVAL);
        cr_assert_eq(devnum_parse(NULL, &a, &b), -EINVAL);
}
