/* Disk probe. Raw data: /sys/block (size, sectors, flags, holders,
 * partitions), udev properties and links (libudev on the live system, the
 * udev database files under a sysroot, sysfs attributes when neither knows),
 * libblkid for filesystems on the live system, mountinfo and swaps. Pure
 * rules (diskrules.h) then decide drive type and eligibility. */
#include <blkid/blkid.h>
#include <ctype.h>
#include <errno.h>
#include <libudev.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "blkid-cleanup.h"
#include "cleanup.h"
#include "diskrules.h"
#include "probe.h"
#include "procparse.h"

/* More /sys/block entries than this are not even looked at. */
#define MAX_BLOCK_ENTRIES (1 << 18)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct udev *, udev_unref)

struct disk_ctx {
        const struct sysroot *sr;
        struct udev *udev;          /* live system only */
        struct mount_table mounts;
        struct strv swaps;          /* kernel names of active swap devices */
        char *live_label;           /* CDLABEL= of root=live:..., if any */
        bool boot_live;             /* boot=live on the command line */
        int64_t min_bytes;
};

/* ---- udev: libudev live, database files under a sysroot -------------- */

static int udev_get(struct disk_ctx *c, unsigned ma, unsigned mi, struct udev_record *rec) {
        *rec = (struct udev_record) { 0 };
        if (c->udev) {
                struct udev_device *dev = udev_device_new_from_devnum(c->udev, 'b', makedev(ma, mi));
                struct udev_list_entry *e;
                if (!dev)
                        return -ENOENT;
                udev_list_entry_foreach(e, udev_device_get_properties_list_entry(dev)) {
                        char kv[4096];
                        const char *v = udev_list_entry_get_value(e);
                        snprintf(kv, sizeof kv, "%s=%s", udev_list_entry_get_name(e), v ? v : "");
                        strv_push(&rec->props, kv);
                }
                udev_list_entry_foreach(e, udev_device_get_devlinks_list_entry(dev)) {
                        const char *l = udev_list_entry_get_name(e);
                        strv_push(&rec->links, strncmp(l, "/dev/", 5) == 0 ? l + 5 : l);
                }
                udev_device_unref(dev);
                return 0;
        }
        char path[64];
        snprintf(path, sizeof path, "/run/udev/data/b%u:%u", ma, mi);
        _cleanup_free_ char *text = sr_read_all(c->sr, path, 256 << 10, NULL);
        if (!text)
                return -errno;
        return udev_record_parse(text, rec);
}

/* udev's \xNN escaping in *_ENC properties, trimmed. */
static char *udev_unescape(const char *s) {
        char buf[512];
        size_t n = 0;
        if (!s)
                return NULL;
        while (*s && n < sizeof buf - 1) {
                unsigned v;
                if (s[0] == '\\' && s[1] == 'x' && isxdigit((unsigned char) s[2]) &&
                    isxdigit((unsigned char) s[3]) && sscanf(s + 2, "%2x", &v) == 1) {
                        buf[n++] = v >= 0x20 && v < 0x7f ? (char) v : '?';
                        s += 4;
                } else
                        buf[n++] = *s++;
        }
        buf[n] = '\0';
        return str_dup_trimmed(buf);
}

/* by-id links: stable hardware names first, content-derived ones last. */
static int by_id_rank(const char *l) {
        const char *n = l + strlen("disk/by-id/");
        if (strncmp(n, "wwn-", 4) == 0)
                return 0;
        if (strncmp(n, "nvme-eui.", 9) == 0 || strncmp(n, "nvme-uuid.", 10) == 0)
                return 2;
        if (strncmp(n, "lvm-pv-uuid-", 12) == 0 || strncmp(n, "md-uuid-", 8) == 0 ||
            strncmp(n, "dm-uuid-", 8) == 0)
                return 4;
        if (strncmp(n, "dm-name-", 8) == 0 || strncmp(n, "md-name-", 8) == 0)
                return 3;
        return 1;
}

static char *pick_link(const struct strv *links, const char *prefix) {
        const char *best = NULL;
        int best_rank = INT_MAX;
        size_t plen = strlen(prefix);
        for (size_t i = 0; i < links->n; i++) {
                const char *l = links->v[i];
                if (strncmp(l, prefix, plen) != 0)
                        continue;
                int r = strcmp(prefix, "disk/by-id/") == 0 ? by_id_rank(l) : 0;
                if (r < best_rank || (r == best_rank && strcmp(l, best) < 0)) {
                        best = l;
                        best_rank = r;
                }
        }
        char *out = NULL;
        if (best && asprintf(&out, "/dev/%s", best) < 0)
                out = NULL;
        return out;
}

/* ---- sysfs helpers ------------------------------------------------------ */

/* /sys/block/<name>/<attr>, printable and trimmed, or NULL. */
static char *sysattr(const struct sysroot *sr, const char *name, const char *attr) {
        char buf[512];
        if (sr_read_strf(sr, buf, sizeof buf, "/sys/block/%s/%s", name, attr) <= 0)
                return NULL;
        for (char *p = buf; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                        *p = '?';
        return str_dup_trimmed(buf);
}

static const char *transport_from_path(const char *name, const char *devpath) {
        if (strncmp(name, "nvme", 4) == 0 || strstr(devpath, "/nvme/") || strstr(devpath, "/nvme-subsystem/"))
                return "nvme";
        if (strstr(devpath, "/usb"))
                return "usb";
        if (strstr(devpath, "/virtio"))
                return "virtio";
        if (strstr(devpath, "/mmc_host/"))
                return "mmc";
        if (strstr(devpath, "/end_device-") || strstr(devpath, "/sas_"))
                return "sas";
        if (strstr(devpath, "/rport-"))
                return "fc";
        if (strstr(devpath, "/session"))
                return "iscsi";
        if (strstr(devpath, "/ata"))
                return "sata";
        if (strstr(devpath, "/xen/") || strncmp(name, "xvd", 3) == 0)
                return "xen";
        if (strstr(devpath, "/host") && strstr(devpath, "/target"))
                return "scsi";
        return NULL;
}

/* SCSI address "H:C:T:L": the device directory just above block/<name>. */
static char *hctl_from_path(const char *devpath) {
        const char *b = strstr(devpath, "/block/");
        if (!b)
                return NULL;
        const char *s = b;
        while (s > devpath && s[-1] != '/')
                s--;
        unsigned h, c, t, l;
        int n = 0;
        char comp[64];
        size_t len = (size_t) (b - s);
        if (len == 0 || len >= sizeof comp)
                return NULL;
        memcpy(comp, s, len);
        comp[len] = '\0';
        if (sscanf(comp, "%u:%u:%u:%u%n", &h, &c, &t, &l, &n) != 4 || comp[n])
                return NULL;
        return strdup(comp);
}

static char *wwn_from_wwid(const char *wwid) {
        char *out = NULL;
        if (!wwid)
                return NULL;
        if (strncmp(wwid, "naa.", 4) == 0 && asprintf(&out, "0x%s", wwid + 4) >= 0)
                return out;
        if (strncmp(wwid, "eui.", 4) == 0)
                return strdup(wwid);
        return NULL;
}

/* ---- filesystems ------------------------------------------------------- */

struct fsinfo {
        char *type, *label, *uuid;
};

static void fsinfo_free(struct fsinfo *f) {
        free(f->type);
        free(f->label);
        free(f->uuid);
        *f = (struct fsinfo) { 0 };
}

/* Filesystem signature from udev (ID_FS_*) or, on the live system, from
 * libblkid reading the device itself. */
static void probe_fs(struct disk_ctx *c, const char *kname, const struct udev_record *rec, struct fsinfo *fs) {
        const char *t = udev_record_get(rec, "ID_FS_TYPE");
        if (t && *t) {
                fs->type = strdup(t);
                fs->label = udev_unescape(udev_record_get(rec, "ID_FS_LABEL_ENC"));
                if (!fs->label)
                        fs->label = str_dup_trimmed(udev_record_get(rec, "ID_FS_LABEL"));
                fs->uuid = str_dup_trimmed(udev_record_get(rec, "ID_FS_UUID"));
                return;
        }
        if (!c->sr->live || udev_record_get(rec, "ID_PART_TABLE_TYPE"))
                return;
        char dev[PATH_MAX];
        snprintf(dev, sizeof dev, "/dev/%s", kname);
        _cleanup_blkid_probe_ blkid_probe pr = blkid_new_probe_from_filename(dev);
        if (!pr)
                return;
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID);
        blkid_probe_enable_partitions(pr, 1);
        if (blkid_do_safeprobe(pr) != 0)
                return;
        const char *v;
        if (blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL) == 0)
                return; /* a partition table, not a filesystem */
        if (blkid_probe_lookup_value(pr, "TYPE", &v, NULL) == 0)
                fs->type = strdup(v);
        if (blkid_probe_lookup_value(pr, "LABEL", &v, NULL) == 0)
                fs->label = str_dup_trimmed(v);
        if (blkid_probe_lookup_value(pr, "UUID", &v, NULL) == 0)
                fs->uuid = strdup(v);
}

/* ---- one disk ---------------------------------------------------------- */

static const char *const live_mountpoints[] = {
        "/run/live/medium", "/lib/live/mount/medium", "/run/initramfs/live", "/run/archiso/bootmnt",
        "/cdrom", "/run/media/iso",
};

static bool is_live_mount(const char *mp) {
        for (size_t i = 0; mp && i < sizeof live_mountpoints / sizeof *live_mountpoints; i++)
                if (strcmp(mp, live_mountpoints[i]) == 0)
                        return true;
        return false;
}

/* A device mounted at mp (or not: NULL) whose filesystem has `label` is
 * the medium this system booted from. */
static bool is_live_medium(const struct disk_ctx *c, const char *mp, const char *label) {
        return is_live_mount(mp) || (c->live_label && label && strcmp(c->live_label, label) == 0);
}

/* The entries of the holders directory at path join the disk's, each once
 * (a partition's holders keep the whole disk busy too). */
static void add_holders(const struct sysroot *sr, const char *path, struct inv_disk *d) {
        _cleanup_closedir_ DIR *h = sr_opendir(sr, path);
        for (struct dirent *he; h && (he = readdir(h));)
                if (he->d_name[0] != '.' && d->holders.n < INV_MAX_HOLDERS && !strv_contains(&d->holders, he->d_name))
                        strv_push(&d->holders, he->d_name);
}

static int cmp_name(const void *a, const void *b) {
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

/* Partitions are the subdirectories of the disk with a "partition" file;
 * sorted first so that a capped list keeps the lowest numbers. */
static int read_partitions(struct disk_ctx *c, const char *name, struct inv_disk *d, bool *media, bool *swap) {
        char path[PATH_MAX], dev[32];
        struct strv names = { 0 };
        struct dirent *de;
        int r = 0;

        snprintf(path, sizeof path, "/sys/block/%s", name);
        _cleanup_closedir_ DIR *dir = sr_opendir(c->sr, path);
        if (!dir)
                return 0;
        while ((de = readdir(dir)) && names.n < MAX_BLOCK_ENTRIES)
                if (strncmp(de->d_name, name, strlen(name)) == 0 &&
                    sr_read_strf(c->sr, dev, sizeof dev, "/sys/block/%s/%s/partition", name, de->d_name) >= 0 &&
                    (r = strv_push(&names, de->d_name)) < 0)
                        goto out;
        if (names.n > 1)
                qsort(names.v, names.n, sizeof *names.v, cmp_name);
        for (size_t i = 0; i < names.n && i < INV_MAX_PARTITIONS; i++) {
                const char *pn = names.v[i];
                unsigned ma, mi;
                struct inv_partition *p = inv_array_append((void **) &d->partitions, &d->n_partitions, sizeof *p);
                if (!p) {
                        r = -ENOMEM;
                        goto out;
                }
                inv_partition_init(p);
                if (!(p->name = strdup(pn))) {
                        r = -ENOMEM;
                        goto out;
                }
                int64_t sectors;
                if (sr_read_i64f(c->sr, &sectors, "/sys/block/%s/%s/size", name, pn) == 0 && sectors >= 0 &&
                    sectors <= INT64_MAX / 512)
                        p->size_bytes = sectors * 512;
                if (sr_read_strf(c->sr, dev, sizeof dev, "/sys/block/%s/%s/dev", name, pn) > 0 &&
                    devnum_parse(dev, &ma, &mi) == 0) {
                        const struct mount_entry *me = mount_table_find(&c->mounts, ma, mi);
                        p->mountpoint = me ? strdup(me->mountpoint) : NULL;
                        struct udev_record rec;
                        udev_get(c, ma, mi, &rec);
                        struct fsinfo fs = { 0 };
                        probe_fs(c, pn, &rec, &fs);
                        if (!fs.type && me && me->fstype)
                                fs.type = strdup(me->fstype);
                        p->fstype = TAKE_PTR(fs.type);
                        p->label = TAKE_PTR(fs.label);
                        p->uuid = TAKE_PTR(fs.uuid);
                        fsinfo_free(&fs);
                        udev_record_free(&rec);
                }
                *media |= is_live_medium(c, p->mountpoint, p->label);
                *swap |= strv_contains(&c->swaps, pn);
                /* Holders of a partition keep the whole disk busy. */
                snprintf(path, sizeof path, "/sys/block/%s/%s/holders", name, pn);
                add_holders(c->sr, path, d);
        }
        if (names.n > d->n_partitions)
                inv_trunc_note(&d->truncated, "partitions", (int64_t) names.n, (int64_t) d->n_partitions);
out:
        strv_free(&names);
        return r;
}

/* Size, sector sizes and flags from the disk's own sysfs attributes. */
static void read_block_attrs(const struct sysroot *sr, const char *name, struct inv_disk *d) {
        int64_t v;

        if (sr_read_i64f(sr, &v, "/sys/block/%s/size", name) == 0 && v >= 0 && v <= INT64_MAX / 512)
                d->size_bytes = v * 512; /* the kernel counts 512-byte sectors here */
        if (sr_read_i64f(sr, &v, "/sys/block/%s/queue/logical_block_size", name) == 0 && v > 0)
                d->logical_sector_size = v;
        if (sr_read_i64f(sr, &v, "/sys/block/%s/queue/physical_block_size", name) == 0 && v > 0)
                d->physical_sector_size = v;
        if (sr_read_i64f(sr, &v, "/sys/block/%s/removable", name) == 0)
                d->removable = v ? TRI_TRUE : TRI_FALSE;
        if (sr_read_i64f(sr, &v, "/sys/block/%s/ro", name) == 0)
                d->read_only = v ? TRI_TRUE : TRI_FALSE;
        if (sr_read_i64f(sr, &v, "/sys/block/%s/queue/rotational", name) == 0)
                d->rotational = v ? TRI_TRUE : TRI_FALSE;
}

/* Identity: udev first (it reads VPD pages and NVMe identify), sysfs next;
 * then the links, and the id the disk goes by. */
static void read_identity(const struct sysroot *sr, const char *name, const struct udev_record *rec,
                          struct inv_disk *d) {
        d->model = udev_unescape(udev_record_get(rec, "ID_MODEL_ENC"));
        if (!d->model)
                d->model = sysattr(sr, name, "device/model");
        if (!d->model)
                d->model = str_dup_trimmed(udev_record_get(rec, "ID_MODEL"));
        d->vendor = udev_unescape(udev_record_get(rec, "ID_VENDOR_ENC"));
        if (!d->vendor)
                d->vendor = sysattr(sr, name, "device/vendor");
        if (d->vendor && strncmp(name, "vd", 2) == 0 && strncmp(d->vendor, "0x", 2) == 0) {
                free(d->vendor); /* virtio's device/vendor is a PCI-style id, not a name */
                d->vendor = NULL;
        }
        d->serial = str_dup_trimmed(udev_record_get(rec, "ID_SERIAL_SHORT"));
        if (!d->serial)
                d->serial = str_dup_trimmed(udev_record_get(rec, "ID_SCSI_SERIAL"));
        if (!d->serial)
                d->serial = sysattr(sr, name, "device/serial");
        if (!d->serial)
                d->serial = sysattr(sr, name, "serial");
        d->wwn = str_dup_trimmed(udev_record_get(rec, "ID_WWN_WITH_EXTENSION"));
        if (!d->wwn)
                d->wwn = str_dup_trimmed(udev_record_get(rec, "ID_WWN"));
        if (!d->wwn) {
                _cleanup_free_ char *wwid = sysattr(sr, name, "wwid");
                if (!wwid)
                        wwid = sysattr(sr, name, "device/wwid");
                d->wwn = wwn_from_wwid(wwid);
        }
        d->by_id = pick_link(&rec->links, "disk/by-id/");
        d->by_path = pick_link(&rec->links, "disk/by-path/");
        if (!d->by_path && udev_record_get(rec, "ID_PATH"))
                if (asprintf(&d->by_path, "/dev/disk/by-path/%s", udev_record_get(rec, "ID_PATH")) < 0)
                        d->by_path = NULL;
        d->id = strdup(d->by_id ? d->by_id : d->by_path ? d->by_path : d->path);
}

/* Whole-disk filesystem and mounts (of device ma:mi when have_dev). True
 * when that makes the disk the medium this system booted from. */
static bool read_disk_fs(struct disk_ctx *c, const char *name, const struct udev_record *rec, bool have_dev,
                         unsigned ma, unsigned mi, struct inv_disk *d) {
        struct fsinfo fs = { 0 };
        probe_fs(c, name, rec, &fs);
        if (have_dev) {
                const struct mount_entry *me = mount_table_find(&c->mounts, ma, mi);
                d->mountpoint = me ? strdup(me->mountpoint) : NULL;
                /* The kernel mounted it, so it knows the type even where
                 * no signature can be read (overlay-backed devices). */
                if (!fs.type && me && me->fstype)
                        fs.type = strdup(me->fstype);
        }
        d->fstype = TAKE_PTR(fs.type);
        bool media = is_live_medium(c, d->mountpoint, fs.label) ||
                     (c->boot_live && d->fstype && strcmp(d->fstype, "iso9660") == 0);
        fsinfo_free(&fs);
        return media;
}

static int probe_one(struct disk_ctx *c, const char *name, const char *dm_uuid, struct inv_disk *d) {
        const struct sysroot *sr = c->sr;
        char buf[PATH_MAX], devpath[PATH_MAX] = "";
        unsigned ma = 0, mi = 0;
        bool have_dev = false, media, swap;
        struct udev_record rec = { 0 };

        d->name = strdup(name);
        if (asprintf(&d->path, "/dev/%s", name) < 0)
                d->path = NULL;
        if (!d->name || !d->path)
                return -ENOMEM;
        if (sr_read_strf(sr, buf, sizeof buf, "/sys/block/%s/dev", name) > 0 && devnum_parse(buf, &ma, &mi) == 0)
                have_dev = true;
        read_block_attrs(sr, name, d);

        snprintf(buf, sizeof buf, "/sys/block/%s", name);
        if (sr_resolve(sr, buf, devpath, sizeof devpath) < 0)
                devpath[0] = '\0';
        const char *tran = transport_from_path(name, devpath);
        if (have_dev)
                udev_get(c, ma, mi, &rec);
        const char *bus = udev_record_get(&rec, "ID_BUS");
        if (!tran && bus && strcmp(bus, "ata") == 0)
                tran = "sata";
        d->transport = tran ? strdup(tran) : NULL;
        d->hctl = hctl_from_path(devpath);

        read_identity(sr, name, &rec, d);
        media = read_disk_fs(c, name, &rec, have_dev, ma, mi, d);
        swap = strv_contains(&c->swaps, name);

        snprintf(buf, sizeof buf, "/sys/block/%s/holders", name);
        add_holders(sr, buf, d);
        int r = read_partitions(c, name, d, &media, &swap);
        strv_sort(&d->holders);
        d->is_installation_media = media ? TRI_TRUE : TRI_FALSE;

        int64_t scsi_type = -1;
        sr_read_i64f(sr, &scsi_type, "/sys/block/%s/device/type", name);
        const char *cd = udev_record_get(&rec, "ID_CDROM");
        struct drive_facts f = {
                .name = name, .dm_uuid = dm_uuid, .transport = d->transport, .model = d->model,
                .vendor = d->vendor, .scsi_type = (int) scsi_type, .rotational = d->rotational,
                .udev_cdrom = cd && strcmp(cd, "1") == 0,
        };
        d->drive_type = strdup(drive_type_decide(&f));
        udev_record_free(&rec);
        if (r < 0 || !d->drive_type)
                return -ENOMEM;
        return disk_eligibility(d, c->min_bytes, swap);
}

/* ---- all disks ------------------------------------------------------- */

static void read_swaps(struct disk_ctx *c) {
        _cleanup_free_ char *text = sr_read_all(c->sr, "/proc/swaps", 1 << 20, NULL);
        char *save = NULL;
        if (!text)
                return;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                if (strncmp(l, "/dev/", 5) != 0)
                        continue;
                char *sp = strpbrk(l, " \t");
                if (sp)
                        *sp = '\0';
                if (c->swaps.n < 1024)
                        strv_push(&c->swaps, l + 5);
        }
}

int probe_disks(const struct sysroot *sr, int64_t min_install_bytes, struct inventory *inv) {
        struct disk_ctx c = { .sr = sr, .min_bytes = min_install_bytes };
        _cleanup_(udev_unrefp) struct udev *udev = NULL;
        _cleanup_closedir_ DIR *dir = sr_opendir(sr, "/sys/block");
        struct strv names = { 0 };
        struct dirent *de;
        int64_t total = 0;
        int r = 0;

        if (!dir)
                return 0;
        if (sr->live)
                c.udev = udev = udev_new();
        _cleanup_free_ char *mi = sr_read_all(sr, "/proc/self/mountinfo", 16 << 20, NULL);
        if (mi)
                mountinfo_parse(mi, &c.mounts);
        read_swaps(&c);
        _cleanup_free_ char *cmdline = sr_read_all(sr, "/proc/cmdline", 64 << 10, NULL);
        if (cmdline) {
                _cleanup_free_ char *root = cmdline_get(cmdline, "root");
                _cleanup_free_ char *boot = cmdline_get(cmdline, "boot");
                if (root && strncmp(root, "live:CDLABEL=", 13) == 0)
                        c.live_label = strdup(root + 13);
                c.boot_live = boot && strcmp(boot, "live") == 0;
        }

        while ((de = readdir(dir)) && names.n < MAX_BLOCK_ENTRIES)
                if (de->d_name[0] != '.' && strv_push(&names, de->d_name) < 0) {
                        r = -ENOMEM;
                        goto out;
                }
        if (names.n > 1)
                qsort(names.v, names.n, sizeof *names.v, cmp_name);
        for (size_t i = 0; i < names.n; i++) {
                _cleanup_free_ char *dm_uuid = NULL;
                if (strncmp(names.v[i], "dm-", 3) == 0)
                        dm_uuid = sysattr(sr, names.v[i], "dm/uuid");
                if (!disk_is_listed(names.v[i], dm_uuid))
                        continue;
                total++;
                if (inv->n_disks >= INV_MAX_DISKS)
                        continue;
                struct inv_disk *d = inv_array_append((void **) &inv->disks, &inv->n_disks, sizeof *d);
                if (!d) {
                        r = -ENOMEM;
                        goto out;
                }
                inv_disk_init(d);
                if ((r = probe_one(&c, names.v[i], dm_uuid, d)) < 0)
                        goto out;
        }
        if (total > (int64_t) inv->n_disks)
                inv_trunc_note(&inv->truncated, "disks", total, (int64_t) inv->n_disks);
out:
        strv_free(&names);
        strv_free(&c.swaps);
        mount_table_free(&c.mounts);
        free(c.live_label);
        return r;
}
