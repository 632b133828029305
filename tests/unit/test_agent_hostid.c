/* Host identity rules: junk values, host-id choice, virtual machine signals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostid.h"
#include "uuid.h"

Test(junk, smbios_strings) {
        const char *junk[] = { NULL, "", "   ", "To be filled by O.E.M.", "to be filled by o.e.m. ",
                               "Default string", "Not Specified", "System Serial Number", "0000000000",
                               "XXXXXXXX", "N/A", "None", "0123456789", "OEM" };
        for (size_t i = 0; i < sizeof junk / sizeof *junk; i++)
                cr_assert(smbios_value_is_junk(junk[i]), "\"%s\" is junk", junk[i] ? junk[i] : "(null)");
        const char *good[] = { "Dell Inc.", "PowerEdge R640", "CZJ12345AB", "QEMU", "7" };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++)
                cr_assert_not(smbios_value_is_junk(good[i]), "\"%s\" is real", good[i]);
}

Test(junk, uuids) {
        cr_assert(smbios_uuid_is_junk("00000000-0000-0000-0000-000000000000"));
        cr_assert(smbios_uuid_is_junk("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"));
        cr_assert(smbios_uuid_is_junk("03000200-0400-0500-0006-000700080009"));
        cr_assert(smbios_uuid_is_junk("not-a-uuid"));
        cr_assert(smbios_uuid_is_junk(NULL));
        cr_assert_not(smbios_uuid_is_junk("4C4C4544-0042-3510-8056-B4C04F4A5A32"));
}

Test(junk, macs) {
        cr_assert(mac_is_junk("00:00:00:00:00:00"));
        cr_assert(mac_is_junk("ff:ff:ff:ff:ff:ff"));
        cr_assert(mac_is_junk("01:00:5e:00:00:01"), "multicast");
        cr_assert(mac_is_junk("52:54:00:12:34"));
        cr_assert(mac_is_junk("52:54:00:12:34:56:78"));
        cr_assert_not(mac_is_junk("52:54:00:12:34:56"));
}

Test(hostid, smbios_uuid_first_lower_cased) {
        char *id = NULL;
        const char *src = NULL;
        const char *macs[] = { "52:54:00:00:00:02" };
        cr_assert_eq(hostid_choose("4C4C4544-0042-3510-8056-B4C04F4A5A32", "SER1", macs, 1, &id, &src), 0);
        cr_assert_str_eq(id, "4c4c4544-0042-3510-8056-b4c04f4a5a32");
        cr_assert_str_eq(src, "smbios-uuid");
        free(id);
}

Test(hostid, junk_uuid_falls_to_board_serial_then_mac) {
        char *a = NULL, *b = NULL, *c = NULL;
        const char *src = NULL;
        const char *macs[] = { "52:54:00:00:00:09", "00:00:00:00:00:00", "52:54:00:00:00:02" };
        cr_assert_eq(hostid_choose("03000200-0400-0500-0006-000700080009", "BSN-77", macs, 3, &a, &src), 0);
        cr_assert_str_eq(src, "board-serial");
        cr_assert(uuid_is_valid(a));
        cr_assert_eq(a[14], '5', "a version 5 UUID");
        /* Stable: the same serial gives the same id. */
        cr_assert_eq(hostid_choose(NULL, "BSN-77", NULL, 0, &b, &src), 0);
        cr_assert_str_eq(a, b);
        cr_assert_eq(hostid_choose("00000000-0000-0000-0000-000000000000", "Default string", macs, 3, &c, &src), 0);
        cr_assert_str_eq(src, "mac");
        /* The lowest MAC decides, whatever the order. */
        char *d = NULL;
        const char *rev[] = { "52:54:00:00:00:02", "52:54:00:00:00:09" };
        cr_assert_eq(hostid_choose(NULL, NULL, rev, 2, &d, &src), 0);
        cr_assert_str_eq(c, d);
        cr_assert_str_neq(a, c);
        free(a);
        free(b);
        free(c);
        free(d);
}

Test(hostid, nothing_usable) {
        char *id = NULL;
        const char *src = NULL;
        const char *macs[] = { "00:00:00:00:00:00" };
        cr_assert_eq(hostid_choose("", "To be filled by O.E.M.", macs, 1, &id, &src), -ENOENT);
        cr_assert_null(id);
}

Test(uuid, v5_known_vector) {
        /* RFC 4122 appendix / Python: uuid5(NAMESPACE_DNS, "www.example.com") */
        char out[UUID_STR_LEN];
        cr_assert_eq(uuid_v5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com", out), 0);
        cr_assert_str_eq(out, "2ed6657d-e927-568b-95e1-2665a8aea6a2");
        cr_assert_eq(uuid_v5("bogus", "x", out), -EINVAL);
}

Test(virt, signals_in_order) {
        const char *m = NULL;
        struct virt_signals s = { .smbios_vm_bit = 1, .cpuid_hypervisor = 0 };
        cr_assert_eq(virt_decide(&s, &m), TRI_TRUE);
        cr_assert_str_eq(m, "smbios-bios-characteristics");
        s = (struct virt_signals) { .smbios_vm_bit = -1, .cpuid_hypervisor = 1 };
        cr_assert_eq(virt_decide(&s, &m), TRI_TRUE);
        cr_assert_str_eq(m, "cpuid-hypervisor-flag");
        s = (struct virt_signals) { .smbios_vm_bit = -1, .cpuid_hypervisor = -1, .sys_vendor = "QEMU" };
        cr_assert_eq(virt_decide(&s, &m), TRI_TRUE);
        cr_assert_str_eq(m, "dmi-vendor");
        s = (struct virt_signals) { .smbios_vm_bit = -1, .cpuid_hypervisor = -1,
                                    .sys_vendor = "Microsoft Corporation", .product_name = "Virtual Machine" };
        cr_assert_eq(virt_decide(&s, &m), TRI_TRUE);
        s = (struct virt_signals) { .smbios_vm_bit = 0, .cpuid_hypervisor = 0, .sys_vendor = "Dell Inc." };
        cr_assert_eq(virt_decide(&s, &m), TRI_FALSE);
        cr_assert_str_eq(m, "no-hypervisor-signal");
        s = (struct virt_signals) { .smbios_vm_bit = -1, .cpuid_hypervisor = -1 };
        cr_assert_eq(virt_decide(&s, &m), TRI_UNSET, "nothing to go on: unknown, not false");
}
