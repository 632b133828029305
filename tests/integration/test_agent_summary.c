/* `muster-agent inventory --summary` (what `make run` prints) on a captured
 * machine: each line checked field by field against the machine's facts
 * (tests/fixtures/qemu-q35/FACTS.md), not against a snapshot of the output.
 * Sizes are the facts' byte counts in the one unit system of every program
 * (binary, one digit after the point unless it is 0, as musterctl prints
 * them): 214748364800 B is 200 GiB. */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define Q35_ROOT MUSTER_FIXTURES_DIR "/qemu-q35/root"

static char *summary;

static void run_summary(void) {
        int st;
        char *err = NULL;
        const char *argv[] = { tu_agent_path(), "inventory", "--sysroot", Q35_ROOT, "--summary", NULL };
        summary = tu_run(argv, &st, &err);
        cr_assert_eq(st, 0, "muster-agent inventory --summary: %s", err ? err : "");
        cr_assert_not_null(summary);
        free(err);
}

static void drop_summary(void) {
        free(summary);
        summary = NULL;
}

TestSuite(agent_summary, .init = run_summary, .fini = drop_summary);

/* The line that starts with `start` (after leading spaces are kept as they
 * are); the test fails when there is none. A copy, caller frees. */
static char *line_of(const char *start) {
        size_t n = strlen(start);
        for (const char *p = summary; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                if (len >= n && strncmp(p, start, n) == 0)
                        return strndup(p, len);
                p = nl ? nl + 1 : NULL;
        }
        cr_assert_fail("no line starts with \"%s\" in:\n%s", start, summary);
        return NULL;
}

/* The line starting with `start` holds every one of the NULL-terminated words. */
static void line_has(const char *start, const char *const *words) {
        char *l = line_of(start);
        for (size_t i = 0; words[i]; i++)
                cr_expect(strstr(l, words[i]), "\"%s\" missing from the line \"%s\"", words[i], l);
        free(l);
}
#define LINE_HAS(start, ...) line_has(start, (const char *const[]) { __VA_ARGS__, NULL })

/* The reasons listed under disk `name` (the "- ..." lines after its line). */
static int reasons_of(const char *name, char *out, size_t outlen) {
        char start[64];
        snprintf(start, sizeof start, "  %s ", name);
        char *l = line_of(start);
        const char *p = strstr(summary, l) + strlen(l) + 1;
        free(l);
        int n = 0;
        out[0] = '\0';
        while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                const char *t = p;
                while (*t == ' ')
                        t++;
                if (strncmp(t, "- ", 2) != 0)
                        break;
                size_t used = strlen(out);
                snprintf(out + used, outlen - used, "%.*s\n", (int) (len - (size_t) (t - p)), t);
                n++;
                p = nl ? nl + 1 : p + len;
        }
        return n;
}

Test(agent_summary, host_system_cpu_memory) {
        /* SMBIOS type 1: product and UUID; the hostname the guest set. */
        LINE_HAS("Host ", "muster-q35-01", "(MS-2200 Rack Server)", "id 6d757374-6572-4071-8335-000000000001",
                 "[smbios-uuid]");
        /* Type 1 manufacturer; QEMU is a virtual machine; OVMF with SecureBoot = 0. */
        LINE_HAS("System ", "Muster Systems", "virtual", "boot uefi", "secure boot disabled");
        /* -smp 4,sockets=2,cores=2,threads=1 and the CPU model /proc/cpuinfo names. */
        LINE_HAS("CPU ", "Intel Xeon Processor (Skylake, IBRS, no TSX)", "4 logical",
                 "(2 socket(s) x 2 core(s) x 1 thread(s))", "x86_64");
        /* MemTotal 2006400 kB = 2054553600 B usable; one 2048 MiB DIMM (type 17). */
        LINE_HAS("Memory ", "1.9 GiB usable", "2 GiB physical", "(smbios)");
}

Test(agent_summary, disks_and_why_they_are_not_eligible) {
        char why[2048];
        /* Five whole disks: nvme0n1, sda, vda, sdb (USB) and sr0 (ATAPI). */
        char *l = line_of("Disks ");
        cr_assert_eq(atoi(l + strlen("Disks")), 5, "%s", l);
        free(l);
        LINE_HAS("  nvme0n1 ", "NVMe", "200 GiB", "QEMU NVMe Ctrl", " eligible");
        cr_assert_eq(reasons_of("nvme0n1", why, sizeof why), 0, "an empty NVMe disk is eligible: %s", why);
        /* udev's ID_MODEL, not the 16 characters of the INQUIRY. */
        LINE_HAS("  sda ", "HDD", "20 GiB", "MUSTER SATA HDD 20G", "not eligible:");
        cr_assert_eq(reasons_of("sda", why, sizeof why), 2, "%s", why);
        cr_expect(strstr(why, "mounted"), "sda2 is mounted at /mnt/data: %s", why);
        cr_expect(strstr(why, "swap"), "sda1 is active swap: %s", why);
        LINE_HAS("  sdb ", "8 GiB", "QEMU HARDDISK", "not eligible:");
        cr_assert_eq(reasons_of("sdb", why, sizeof why), 2, "%s", why);
        cr_expect(strstr(why, "removable"), "removable=on: %s", why);
        cr_expect(strstr(why, "too small"), "8 GiB is under the minimum: %s", why);
        /* 736 x 512 = 376832 B = 368 KiB. */
        LINE_HAS("  sr0 ", "ODD", "368 KiB", "MUSTER DVD-ROM", "not eligible:");
        cr_assert_eq(reasons_of("sr0", why, sizeof why), 4, "%s", why);
        cr_expect(strstr(why, "read-only"), "%s", why);
        cr_expect(strstr(why, "ODD"), "%s", why);
        /* 1 TiB = 1099511627776 B, no serial model. */
        LINE_HAS("  vda ", "virtual", "1 TiB", " eligible");
        l = line_of("  vda ");
        cr_assert_null(strstr(l, "not eligible"), "%s", l);
        free(l);
}

Test(agent_summary, nics_gpu_tpm) {
        /* Six interfaces (lo is left out), each with its MAC and first IPv4. */
        char *l = line_of("NICs ");
        cr_assert_eq(atoi(l + strlen("NICs")), 6, "%s", l);
        free(l);
        LINE_HAS("  bond0 ", "bond", "52:54:00:4d:53:03", "203.0.113.10/24", "(link up)");
        LINE_HAS("  enp1s0 ", "physical", "52:54:00:4d:53:01", "192.0.2.10/24");
        LINE_HAS("  enp2s0 ", "physical", "52:54:00:4d:53:02");
        LINE_HAS("  enp2s0.100 ", "vlan", "52:54:00:4d:53:02", "198.51.100.10/24");
        LINE_HAS("  enp6s0 ", "physical", "52:54:00:4d:53:03");
        LINE_HAS("  enp7s0 ", "physical", "52:54:00:4d:53:04");
        l = line_of("  enp2s0 ");
        cr_assert_null(strstr(l, "/24"), "enp2s0 has only a link-local IPv6 address: %s", l);
        free(l);
        /* -device VGA (bochs-drm) and swtpm's TPM 2.0. */
        LINE_HAS("Other ", "1 GPU(s)", "TPM 2.0");
        cr_assert_null(strstr(summary, "Note "), "nothing was cut: %s", summary);
}

Test(agent_summary, with_output_file_names_it) {
        char *d = tu_mkdtemp(), path[4096];
        snprintf(path, sizeof path, "%s/inv.json", d);
        int st;
        const char *argv[] = { tu_agent_path(), "inventory", "--sysroot", Q35_ROOT, "--summary", "-o", path, NULL };
        char *out = tu_run(argv, &st, NULL);
        cr_assert_eq(st, 0);
        char want[4200];
        snprintf(want, sizeof want, "Inventory %s\n", path);
        cr_assert(strstr(out, want), "the summary ends naming the file: %s", out);
        cr_assert(strstr(out, "Host      muster-q35-01"), "%s", out);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv, "the file holds the JSON document");
        cr_assert_str_eq(tu_jstr(inv, "host_id"), "6d757374-6572-4071-8335-000000000001");
        json_object_put(inv);
        free(out);
        tu_rm_rf(d);
        free(d);
}

/* -o into something that is not a regular file (here a FIFO, as /dev/stdout
 * or /dev/null would be) writes into it and leaves it what it was: never a
 * FILE.tmp renamed over it. */
Test(agent_summary, output_into_a_fifo_keeps_the_fifo) {
        char *d = tu_mkdtemp(), fifo[4096], got[4096];
        snprintf(fifo, sizeof fifo, "%s/fifo", d);
        snprintf(got, sizeof got, "%s/got.json", d);
        cr_assert_eq(mkfifo(fifo, 0600), 0);
        char *out = NULL, *err = NULL;
        int st = tu_sh(&out, &err, "cat '%s' > '%s' & '%s' inventory --sysroot '%s' -o '%s'; r=$?; wait; exit $r", fifo,
                       got, tu_agent_path(), Q35_ROOT, fifo);
        cr_assert_eq(st, 0, "%s", err);
        struct stat fst;
        cr_assert(stat(fifo, &fst) == 0 && S_ISFIFO(fst.st_mode), "the FIFO is still a FIFO");
        json_object *inv = json_object_from_file(got);
        cr_assert_not_null(inv, "what came through the FIFO is the JSON document");
        cr_assert_str_eq(tu_jstr(inv, "host_id"), "6d757374-6572-4071-8335-000000000001");
        json_object_put(inv);
        free(out);
        free(err);
        tu_rm_rf(d);
        free(d);
}
