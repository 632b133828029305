/* The on-disk half of `musterctl host reclaim`: on an installed host, a
 * boot entry for the discovery kernel that GRUB boots once (the next boot);
 * in the discovery system, with --wipe, the installation disk's signatures
 * erased wipefs-style so nothing finds the old install. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define RECLAIM_ENTRY_ID "muster-discovery"
#define RECLAIM_DIR "muster-discovery"       /* boot_dir/muster-discovery/{vmlinuz,initrd} */
#define RECLAIM_KERNEL "vmlinuz"
#define RECLAIM_INITRD "initrd"
#define RECLAIM_ENTRY_TITLE "Muster discovery"
#define RECLAIM_CMDLINE_MAX 4096
#define RECLAIM_GRUBENV_SIZE 1024
#define RECLAIM_GRUBENV_SIGNATURE "# GRUB Environment Block\n"
#define RECLAIM_MAX_WIPES 256                /* signatures erased per probe before giving up */

/* Writes boot_dir/loader/entries/muster-discovery.conf, a Boot Loader
 * Specification entry ("title", "linux /muster-discovery/vmlinuz", "initrd
 * /muster-discovery/initrd", "options CMDLINE" unless cmdline is empty),
 * through fd_write_file_atomic (folders made 0755); then sets
 * next_entry=muster-discovery in GRUB's environment block
 * boot_dir/grub/grubenv (created when missing, its other variables kept, 1024
 * bytes, written atomically), which GRUB's grub.cfg turns into the default
 * for one boot and clears. boot_dir/grub2 instead of grub when that is where
 * a grubenv (else a grub.cfg) is; a grubenv that is a symbolic link is
 * written where it points. The paths in the entry are relative to boot_dir:
 * it must be the root of the file system the boot loader reads entries from
 * (a separate /boot). The kernel and initramfs must already be in
 * boot_dir/muster-discovery/ (-ENOENT; nothing is written). cmdline:
 * printable ASCII, <= 4096 bytes (-EINVAL). 0, or -errno with the reason in
 * err. */
int reclaim_write_entry(const char *boot_dir, const char *cmdline, char *err, size_t errlen);
/* A GRUB whose grub.cfg (in the folder above) does not call blscfg (Debian,
 * Ubuntu: their GRUB reads no BLS entries) gets the same boot as a
 * menuentry with --id muster-discovery in that folder's custom.cfg, which
 * their grub.cfg sources at every boot: between RECLAIM_MENU_BEGIN and
 * RECLAIM_MENU_END lines, replacing an earlier block, the rest of the file
 * kept (at most RECLAIM_GRUB_CFG_MAX bytes, else -EFBIG); a cmdline with a
 * single quote is refused there (-EINVAL). */
#define RECLAIM_MENU_BEGIN "### BEGIN muster reclaim (musterctl host reclaim writes this) ###"
#define RECLAIM_MENU_END "### END muster reclaim ###"
#define RECLAIM_GRUB_CFG_MAX (1024 * 1024)
/* That block's text for cmdline (malloc'd; each word single-quoted; /boot
 * its own file system or a folder of the root one), or NULL: -EINVAL, -ENOMEM
 * in *r. */
char *reclaim_menuentry_text(const char *cmdline, int *r);

/* Set name=value in a GRUB environment block and format the result into
 * out, exactly 1024 bytes: the signature line, the variables in their order
 * (name's first occurrence replaced in place, else appended; '\' and newline
 * in values escaped as GRUB does), '#' padding. block NULL (len 0) is an
 * empty environment; otherwise it must be a 1024-byte block that starts with
 * the signature, holds NAME=VALUE lines and '#' comment lines (the comments
 * are not kept) and no NUL. name: 1..255 printable ASCII characters, no '='
 * and no leading '#'; value: no NUL. -EINVAL for a block that is not an
 * environment block, a bad name, or a result that would pass 1024 bytes;
 * out is then untouched. */
int reclaim_grubenv_set(const char *block, size_t len, const char *name, const char *value,
                        char out[RECLAIM_GRUBENV_SIZE]);

/* Wipe what would let anything find the old install on `path` (a block
 * device or, in tests, a regular file standing in for one). For a block
 * device with `discard`, first BLKDISCARD over the whole device; its failure
 * is not an error, only reported. Then every signature libblkid finds is
 * erased (its magic bytes zeroed, as wipefs -a does): the file-system, RAID
 * and LVM signatures inside each partition of the partition table (its range
 * probed, so a RAID superblock at a partition's end counts too),
 * then the table itself (GPT: the primary header, the backup in the last
 * sector, the protective MBR; or the DOS table), then any whole-device
 * signature; a block device's partition table is re-read afterwards. Block
 * devices are opened O_EXCL (-EBUSY while mounted or held). *report =
 * {"path", "discarded": bool, "discard_error"?: reason, "erased": [{"offset",
 * "type", "bytes"}]} (offsets from the start of path). 0, or -errno with the
 * reason in err (*report NULL). A second wipe erases nothing. */
int reclaim_wipe(const char *path, bool discard, json_object **report, char *err, size_t errlen);
