/* Drive type and installation-disk eligibility (diskrules.h). Pure. */
#include "diskrules.h"
#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool prefix(const char *s, const char *p) {
        return s && strncmp(s, p, strlen(p)) == 0;
}

bool disk_is_listed(const char *name, const char *dm_uuid) {
        if (!name || !*name)
                return false;
        if (prefix(name, "loop") || prefix(name, "ram") || prefix(name, "zram"))
                return false;
        if (prefix(name, "dm-"))
                return prefix(dm_uuid, "mpath-") || prefix(dm_uuid, "LVM-");
        return true;
}

/* Models of emulated disks; case-insensitive substrings. */
static const char *const virtual_models[] = {
        "QEMU HARDDISK", "VBOX HARDDISK", "Virtual disk", "Virtual Disk", "VMware Virtual",
        "Msft Virtual", "QEMU_HARDDISK",
};

const char *drive_type_decide(const struct drive_facts *f) {
        if (prefix(f->name, "dm-")) {
                if (prefix(f->dm_uuid, "mpath-"))
                        return "multipath";
                if (prefix(f->dm_uuid, "LVM-"))
                        return "LVM";
                return "Unknown";
        }
        if (prefix(f->name, "md"))
                return "RAID";
        if (prefix(f->name, "sr") || f->scsi_type == 5 || f->udev_cdrom)
                return "ODD";
        if ((f->transport && strcmp(f->transport, "nvme") == 0) || prefix(f->name, "nvme"))
                return "NVMe";
        if ((f->transport && (strcmp(f->transport, "virtio") == 0 || strcmp(f->transport, "xen") == 0)) ||
            prefix(f->name, "vd") || prefix(f->name, "xvd"))
                return "virtual";
        for (size_t i = 0; i < sizeof virtual_models / sizeof *virtual_models; i++)
                if (f->model && strcasestr(f->model, virtual_models[i]))
                        return "virtual";
        if (f->rotational == 1)
                return "HDD";
        if (f->rotational == 0)
                return "SSD";
        return "Unknown";
}

static const char *const supported_types[] = { "HDD", "SSD", "NVMe", "virtual", "multipath" };

static int reason(struct inv_disk *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reason(struct inv_disk *d, const char *fmt, ...) {
        char buf[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        return strv_push(&d->not_eligible_reasons, buf);
}

static bool is_fs(const char *fstype, const char *want) {
        return fstype && strcmp(fstype, want) == 0;
}

int disk_eligibility(struct inv_disk *d, int64_t min_bytes, bool swap_in_use) {
        int r = 0;
        bool supported = false, mounted = d->mountpoint != NULL;
        bool lvm = is_fs(d->fstype, "LVM2_member"), raid = is_fs(d->fstype, "linux_raid_member");

        strv_free(&d->not_eligible_reasons);
        for (size_t i = 0; i < sizeof supported_types / sizeof *supported_types; i++)
                supported |= d->drive_type && strcmp(d->drive_type, supported_types[i]) == 0;
        for (size_t i = 0; i < d->n_partitions; i++) {
                mounted |= d->partitions[i].mountpoint != NULL;
                lvm |= is_fs(d->partitions[i].fstype, "LVM2_member");
                raid |= is_fs(d->partitions[i].fstype, "linux_raid_member");
        }
        for (size_t i = 0; i < d->holders.n; i++)
                raid |= prefix(d->holders.v[i], "md");

        if (!supported)
                r |= reason(d, "Drive type is %s, it is not supported",
                            d->drive_type ? d->drive_type : "Unknown");
        if (d->size_bytes == INV_UNSET)
                r |= reason(d, "Disk size is unknown");
        else if (d->size_bytes < min_bytes) {
                char have[32], need[32];
                units_format_bytes(d->size_bytes, have, sizeof have);
                units_format_bytes(min_bytes, need, sizeof need);
                r |= reason(d, "Disk is too small (disk only has %s, but %s are required)", have, need);
        }
        if (d->removable == TRI_TRUE)
                r |= reason(d, "Disk is removable");
        if (d->read_only == TRI_TRUE)
                r |= reason(d, "Disk is read-only");
        if (d->is_installation_media == TRI_TRUE)
                r |= reason(d, "Disk is the installation media");
        if (mounted)
                r |= reason(d, "Disk has mounted filesystems");
        if (swap_in_use)
                r |= reason(d, "Disk is in use as swap");
        if (lvm)
                r |= reason(d, "Disk is an LVM physical volume");
        if (raid)
                r |= reason(d, "Disk is a member of a software RAID");
        if (d->holders.n && !lvm && !raid)
                r |= reason(d, "Disk is held by %s", d->holders.v[0]);
        d->eligible = d->not_eligible_reasons.n == 0;
        return r < 0 ? -ENOMEM : 0;
}
