/* Drive type and installation-disk eligibility rules. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "diskrules.h"

Test(drive_type, table) {
        struct { struct drive_facts f; const char *want; } cases[] = {
                { { .name = "sda", .transport = "sata", .rotational = 1, .scsi_type = 0 }, "HDD" },
                { { .name = "sdb", .transport = "sas", .rotational = 0, .scsi_type = 0 }, "SSD" },
                { { .name = "nvme0n1", .transport = "nvme", .rotational = 0, .scsi_type = -1 }, "NVMe" },
                { { .name = "vda", .transport = "virtio", .rotational = 1, .scsi_type = -1 }, "virtual" },
                { { .name = "xvda", .rotational = -1, .scsi_type = -1 }, "virtual" },
                { { .name = "sdc", .transport = "sata", .model = "QEMU HARDDISK", .rotational = 1, .scsi_type = 0 }, "virtual" },
                { { .name = "sr0", .transport = "sata", .rotational = 1, .scsi_type = 5 }, "ODD" },
                { { .name = "sdd", .transport = "usb", .rotational = 1, .scsi_type = 5 }, "ODD" },
                { { .name = "sde", .rotational = -1, .scsi_type = -1, .udev_cdrom = true }, "ODD" },
                { { .name = "dm-0", .dm_uuid = "mpath-3600508b400105e210000900000490000", .rotational = 0, .scsi_type = -1 }, "multipath" },
                { { .name = "dm-1", .dm_uuid = "LVM-abcdef", .rotational = 0, .scsi_type = -1 }, "LVM" },
                { { .name = "dm-2", .dm_uuid = "CRYPT-LUKS2-xyz", .rotational = 0, .scsi_type = -1 }, "Unknown" },
                { { .name = "md127", .rotational = 0, .scsi_type = -1 }, "RAID" },
                { { .name = "sdf", .transport = "scsi", .rotational = -1, .scsi_type = 0 }, "Unknown" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
                cr_assert_str_eq(drive_type_decide(&cases[i].f), cases[i].want, "case %zu (%s)", i, cases[i].f.name);
}

Test(listed, exclusions) {
        cr_assert_not(disk_is_listed("loop0", NULL));
        cr_assert_not(disk_is_listed("ram0", NULL));
        cr_assert_not(disk_is_listed("zram0", NULL));
        cr_assert_not(disk_is_listed("dm-3", "CRYPT-LUKS2-xyz"));
        cr_assert_not(disk_is_listed("dm-3", NULL));
        cr_assert(disk_is_listed("dm-0", "mpath-3600"));
        cr_assert(disk_is_listed("dm-1", "LVM-abc"));
        cr_assert(disk_is_listed("sda", NULL));
        cr_assert(disk_is_listed("md0", NULL));
        cr_assert_not(disk_is_listed("", NULL));
}

static struct inv_disk good_disk(void) {
        struct inv_disk d;
        inv_disk_init(&d);
        d.drive_type = strdup("SSD");
        d.size_bytes = 480LL * 1000 * 1000 * 1000;
        d.removable = TRI_FALSE;
        d.read_only = TRI_FALSE;
        d.is_installation_media = TRI_FALSE;
        return d;
}

static bool has_reason(const struct inv_disk *d, const char *needle) {
        for (size_t i = 0; i < d->not_eligible_reasons.n; i++)
                if (strstr(d->not_eligible_reasons.v[i], needle))
                        return true;
        return false;
}

Test(eligibility, clean_disk_is_eligible) {
        struct inv_disk d = good_disk();
        cr_assert_eq(disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false), 0);
        cr_assert(d.eligible);
        cr_assert_eq(d.not_eligible_reasons.n, 0);
        inv_disk_free(&d);
}

Test(eligibility, every_reason_at_once) {
        struct inv_disk d = good_disk();
        free(d.drive_type);
        d.drive_type = strdup("ODD");
        d.size_bytes = 4700000000LL;
        d.removable = TRI_TRUE;
        d.read_only = TRI_TRUE;
        d.is_installation_media = TRI_TRUE;
        d.fstype = strdup("LVM2_member");
        struct inv_partition *p = inv_array_append((void **) &d.partitions, &d.n_partitions, sizeof *p);
        inv_partition_init(p);
        p->name = strdup("sr0p1");
        p->mountpoint = strdup("/run/live/medium");
        cr_assert_eq(disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, true), 0);
        cr_assert_not(d.eligible);
        const char *want[] = { "Drive type is ODD", "too small (disk only has 4.4 GiB, but 18.6 GiB",
                               "removable", "read-only", "installation media", "mounted", "swap", "LVM" };
        for (size_t i = 0; i < sizeof want / sizeof *want; i++)
                cr_assert(has_reason(&d, want[i]), "missing reason \"%s\"", want[i]);
        cr_assert_eq(d.not_eligible_reasons.n, 8);
        inv_disk_free(&d);
}

Test(eligibility, threshold_is_inclusive_and_size_unknown) {
        struct inv_disk d = good_disk();
        d.size_bytes = DISK_MIN_INSTALL_BYTES_DEFAULT;
        disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false);
        cr_assert(d.eligible);
        d.size_bytes = DISK_MIN_INSTALL_BYTES_DEFAULT - 1;
        disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false);
        cr_assert_not(d.eligible);
        cr_assert_eq(d.not_eligible_reasons.n, 1, "re-running replaces the reasons");
        d.size_bytes = INV_UNSET;
        disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false);
        cr_assert(has_reason(&d, "size is unknown"));
        inv_disk_free(&d);
}

Test(eligibility, raid_member_and_holders) {
        struct inv_disk d = good_disk();
        strv_push(&d.holders, "md127");
        disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false);
        cr_assert(has_reason(&d, "software RAID"));
        strv_free(&d.holders);
        strv_push(&d.holders, "dm-4");
        disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false);
        cr_assert(has_reason(&d, "held by dm-4"));
        inv_disk_free(&d);
}

Test(eligibility, supported_types) {
        const char *ok[] = { "HDD", "SSD", "NVMe", "virtual", "multipath" };
        const char *no[] = { "ODD", "LVM", "RAID", "Unknown" };
        for (size_t i = 0; i < 5; i++) {
                struct inv_disk d = good_disk();
                free(d.drive_type);
                d.drive_type = strdup(ok[i]);
                disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false);
                cr_assert(d.eligible, "%s is supported", ok[i]);
                inv_disk_free(&d);
        }
        for (size_t i = 0; i < 4; i++) {
                struct inv_disk d = good_disk();
                free(d.drive_type);
                d.drive_type = strdup(no[i]);
                disk_eligibility(&d, DISK_MIN_INSTALL_BYTES_DEFAULT, false);
                cr_assert_not(d.eligible, "%s is not supported", no[i]);
                inv_disk_free(&d);
        }
}
