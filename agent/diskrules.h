/* Pure disk rules: what kind of drive a block device is, and whether the
 * agent may offer it as an installation disk (with every reason it may not). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "inventory.h"

/* Default smallest installation disk the agent offers; the coordinator adds
 * its per-role minimum on top (DESIGN §5). */
#define DISK_MIN_INSTALL_BYTES_DEFAULT (20LL * 1000 * 1000 * 1000)

struct drive_facts {
        const char *name;       /* kernel name: sda, nvme0n1, sr0, dm-0, md127 */
        const char *dm_uuid;    /* dm/uuid for dm devices: "mpath-...", "LVM-..." */
        const char *transport;  /* nvme, sata, sas, scsi, usb, virtio, mmc, ... */
        const char *model;
        const char *vendor;
        int scsi_type;          /* device/type: 5 = CD/DVD; -1 unknown */
        int rotational;         /* queue/rotational: -1 unknown */
        bool udev_cdrom;        /* ID_CDROM=1 */
};

/* One of HDD SSD NVMe virtual ODD multipath LVM RAID Unknown. */
const char *drive_type_decide(const struct drive_facts *f);

/* Fill d->eligible and d->not_eligible_reasons from the disk's fields:
 * drive_type, size_bytes, removable, read_only, is_installation_media,
 * mountpoint/fstype of the disk and its partitions, holders. `swap_in_use`
 * says a partition or the disk is active swap. */
int disk_eligibility(struct inv_disk *d, int64_t min_bytes, bool swap_in_use);

/* True if a transport/name belongs to the classes the inventory lists:
 * loop, ram, zram and dm devices other than multipath/LVM are not disks. */
bool disk_is_listed(const char *name, const char *dm_uuid);
