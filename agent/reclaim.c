/* Reclaim on disk (reclaim.h): the discovery boot entry and GRUB's
 * one-shot next_entry on an installed host, and the wipefs-style wipe of
 * the installation disk by libblkid in the discovery system. */
#include "reclaim.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blkid-cleanup.h"
#include "cleanup.h"
#include "errmsg.h"
#include "fdio.h"
#include "json-cleanup.h"

#define ENTRY_RELPATH "loader/entries/" RECLAIM_ENTRY_ID ".conf"
#define GRUBENV_NAME_MAX 255

/* ---- GRUB's environment block ------------------------------------------------ */

/* Append n bytes to out[*k], unless that would pass the block. */
static int put(char *out, size_t *k, const char *s, size_t n) {
        if (n > RECLAIM_GRUBENV_SIZE - *k)
                return -EINVAL;
        memcpy(out + *k, s, n);
        *k += n;
        return 0;
}

/* name=value\n with GRUB's escapes (grub_envblk_set: '\' before '\' and
 * newline, nothing else). */
static int put_var(char *out, size_t *k, const char *name, const char *value) {
        int r;

        if ((r = put(out, k, name, strlen(name))) < 0 || (r = put(out, k, "=", 1)) < 0)
                return r;
        for (const char *v = value; *v; v++)
                if (((*v == '\\' || *v == '\n') && (r = put(out, k, "\\", 1)) < 0) || (r = put(out, k, v, 1)) < 0)
                        return r;
        return put(out, k, "\n", 1);
}

static bool grubenv_name_ok(const char *name) {
        size_t n = strlen(name);
        if (n == 0 || n > GRUBENV_NAME_MAX || name[0] == '#')
                return false;
        for (size_t i = 0; i < n; i++)
                if (name[i] < 0x21 || name[i] > 0x7e || name[i] == '=')
                        return false;
        return true;
}

int reclaim_grubenv_set(const char *block, size_t len, const char *name, const char *value,
                        char out[RECLAIM_GRUBENV_SIZE]) {
        static const char sig[] = RECLAIM_GRUBENV_SIGNATURE;
        char buf[RECLAIM_GRUBENV_SIZE];
        size_t k = 0, nl;
        bool replaced = false;
        int r;

        if (!name || !value || !out || !grubenv_name_ok(name))
                return -EINVAL;
        nl = strlen(name);
        if (block && len != RECLAIM_GRUBENV_SIZE)
                return -EINVAL;
        if (block && (memcmp(block, sig, sizeof sig - 1) != 0 || memchr(block, '\0', len)))
                return -EINVAL;
        if ((r = put(buf, &k, sig, sizeof sig - 1)) < 0)
                return r;
        /* The lines as grub_envblk_iterate reads them: '#' starts a comment
         * (the padding is one running to the end); any other line is
         * NAME=VALUE up to an unescaped newline, which must come before the
         * block's end. */
        for (size_t p = sizeof sig - 1; block && p < len;) {
                const char *line = block + p;
                size_t rest = len - p, i = 0;
                if (line[0] == '#') {
                        const char *eol = memchr(line, '\n', rest);
                        p = eol ? (size_t) (eol - block) + 1 : len;
                        continue;
                }
                while (i < rest && line[i] != '=' && line[i] != '\n')
                        i++;
                if (i == 0 || i == rest || line[i] != '=')
                        return -EINVAL; /* no name, or no '=' on the line */
                size_t eq = i;
                for (i++; i < rest && line[i] != '\n'; i++)
                        if (line[i] == '\\')
                                i++;
                if (i >= rest)
                        return -EINVAL; /* runs into the block's end */
                if (!replaced && eq == nl && memcmp(line, name, nl) == 0) {
                        r = put_var(buf, &k, name, value);
                        replaced = true;
                } else
                        r = put(buf, &k, line, i + 1); /* kept as it was, escapes and all */
                if (r < 0)
                        return r;
                p += i + 1;
        }
        if (!replaced && (r = put_var(buf, &k, name, value)) < 0)
                return r;
        memset(buf + k, '#', RECLAIM_GRUBENV_SIZE - k);
        memcpy(out, buf, RECLAIM_GRUBENV_SIZE);
        return 0;
}

/* ---- the boot entry ------------------------------------------------------------ */

/* The entry's text for cmdline, as reclaim_write_entry writes it
 * (malloc'd), or NULL: -EINVAL (bad cmdline) or -ENOMEM in *r. */
static char *reclaim_entry_text(const char *cmdline, int *r) {
        char *text = NULL;
        size_t n = cmdline ? strlen(cmdline) : 0;

        *r = -EINVAL;
        if (!cmdline || n > RECLAIM_CMDLINE_MAX)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (cmdline[i] < 0x20 || cmdline[i] > 0x7e)
                        return NULL;
        /* Paths from the root of the file system holding the entries: BLS. */
        if (asprintf(&text,
                     "title " RECLAIM_ENTRY_TITLE "\n"
                     "linux /" RECLAIM_DIR "/" RECLAIM_KERNEL "\n"
                     "initrd /" RECLAIM_DIR "/" RECLAIM_INITRD "\n"
                     "%s%s%s",
                     n ? "options " : "", cmdline, n ? "\n" : "") < 0) {
                *r = -ENOMEM;
                return NULL;
        }
        *r = 0;
        return text;
}

/* mkdir, content to find a folder already there: 0 or -errno. */
static int mkdir_one(const char *path) {
        struct stat st;
        if (mkdir(path, 0755) == 0)
                return 0;
        if (errno != EEXIST)
                return -errno;
        if (stat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* boot_dir/rel made, each folder of rel in turn. */
static int mkdirs_under(const char *boot_dir, const char *rel, char *err, size_t errlen) {
        _cleanup_free_ char *path = NULL;
        if (asprintf(&path, "%s/%s", boot_dir, rel) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        size_t base = strlen(boot_dir) + 1;
        for (char *s = path + base;; s++) {
                if (*s != '/' && *s != '\0')
                        continue;
                char c = *s;
                *s = '\0';
                int r = mkdir_one(path);
                if (r < 0)
                        return errmsg(err, errlen, r, "cannot make the folder %s: %m", path);
                if (!(*s = c))
                        return 0;
        }
}

static int check_boot_file(const char *boot_dir, const char *name, char *err, size_t errlen) {
        _cleanup_free_ char *path = NULL;
        struct stat st;

        if (asprintf(&path, "%s/" RECLAIM_DIR "/%s", boot_dir, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        if (stat(path, &st) < 0)
                return errmsg(err, errlen, -errno, "%s is not there: %m", path);
        if (!S_ISREG(st.st_mode) || st.st_size == 0)
                return errmsg(err, errlen, -EINVAL, "%s is not a file with something in it", path);
        return 0;
}

/* GRUB's folder under boot_dir: "grub" (Debian, Ubuntu, upstream) or
 * "grub2" (Fedora, RHEL, SUSE: the GRUBs that read BLS entries). The one
 * that holds a grubenv, else the one that holds grub.cfg, else "grub". */
static const char *grub_folder(const char *boot_dir) {
        static const char *const names[] = { "grub", "grub2" };
        static const char *const marks[] = { "grubenv", "grub.cfg" };
        char p[PATH_MAX];
        struct stat st;

        for (size_t m = 0; m < sizeof marks / sizeof *marks; m++)
                for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
                        int n = snprintf(p, sizeof p, "%s/%s/%s", boot_dir, names[i], marks[m]);
                        if (n > 0 && (size_t) n < sizeof p && lstat(p, &st) == 0)
                                return names[i];
                }
        return names[0];
}

/* Where the block is written: boot_dir/<grub folder>/grubenv, or what that
 * links to (Fedora once kept it on the ESP behind a symbolic link; a rename
 * over the link would leave GRUB reading the old block). */
static int grubenv_path(const char *boot_dir, const char *folder, char **out, char *err, size_t errlen) {
        _cleanup_free_ char *p = NULL;
        struct stat st;

        *out = NULL;
        if (asprintf(&p, "%s/%s/grubenv", boot_dir, folder) < 0) {
                p = NULL;
                return -ENOMEM;
        }
        if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
                char *target = realpath(p, NULL);
                if (!target)
                        return errmsg(err, errlen, -errno, "%s links to nothing usable: %m", p);
                *out = target;
                return 0;
        }
        *out = TAKE_PTR(p);
        return 0;
}

/* The current block, or an empty environment when there is none. 1 with
 * the block read, 0 for none, or -errno. */
static int read_grubenv(const char *path, char block[RECLAIM_GRUBENV_SIZE], char *err, size_t errlen) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        char extra;

        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0)
                return errmsg(err, errlen, -errno, "cannot open %s: %m", path);
        ssize_t n = fd_read_full(fd, block, RECLAIM_GRUBENV_SIZE);
        if (n < 0)
                return errmsg(err, errlen, (int) n, "cannot read %s: %m", path);
        ssize_t m = n == RECLAIM_GRUBENV_SIZE ? fd_read_full(fd, &extra, 1) : 0;
        if (m < 0)
                return errmsg(err, errlen, (int) m, "cannot read %s: %m", path);
        if (n != RECLAIM_GRUBENV_SIZE || m != 0)
                return errmsg(err, errlen, -EINVAL, "%s is not a %d-byte GRUB environment block; left as it is",
                              path, RECLAIM_GRUBENV_SIZE);
        return 1;
}

/* Whether GRUB in boot_dir/folder reads Boot Loader Specification entries:
 * its grub.cfg calls blscfg (Fedora, RHEL, SUSE). -1 when there is no
 * grub.cfg to tell (then the entry alone is written). */
static int grub_reads_bls(const char *boot_dir, const char *folder) {
        char p[PATH_MAX];
        int n = snprintf(p, sizeof p, "%s/%s/grub.cfg", boot_dir, folder);
        if (n < 0 || (size_t) n >= sizeof p)
                return -1;
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -1;
        _cleanup_free_ char *buf = malloc(RECLAIM_GRUB_CFG_MAX + 1);
        if (!buf)
                return -1;
        ssize_t k = fd_read_full(fd, buf, RECLAIM_GRUB_CFG_MAX);
        if (k < 0)
                return -1;
        buf[k] = '\0';
        return strstr(buf, "blscfg") != NULL;
}

char *reclaim_menuentry_text(const char *cmdline, int *r) {
        _cleanup_free_ char *words = NULL;
        size_t n = cmdline ? strlen(cmdline) : 0, at = 0;

        *r = -EINVAL;
        if (!cmdline || n > RECLAIM_CMDLINE_MAX || strchr(cmdline, '\''))
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (cmdline[i] < 0x20 || cmdline[i] > 0x7e)
                        return NULL;
        /* Each word single-quoted: GRUB's script takes it as it is. */
        if (!(words = malloc(3 * n + 1))) {
                *r = -ENOMEM;
                return NULL;
        }
        for (const char *c = cmdline; *c;) {
                size_t w = strcspn(c, " ");
                if (w) {
                        at += (size_t) sprintf(words + at, "%s'%.*s'", at ? " " : "", (int) w, c);
                        c += w;
                } else
                        c++;
        }
        words[at] = '\0';
        char *text = NULL;
        /* /boot may be its own file system or a folder of the root one. */
        if (asprintf(&text,
                     RECLAIM_MENU_BEGIN "\n"
                     "menuentry '" RECLAIM_ENTRY_TITLE "' --id " RECLAIM_ENTRY_ID " {\n"
                     "\tif search --no-floppy --file --set=root /" RECLAIM_DIR "/" RECLAIM_KERNEL "; then\n"
                     "\t\tlinux /" RECLAIM_DIR "/" RECLAIM_KERNEL " %s\n"
                     "\t\tinitrd /" RECLAIM_DIR "/" RECLAIM_INITRD "\n"
                     "\telse\n"
                     "\t\tsearch --no-floppy --file --set=root /boot/" RECLAIM_DIR "/" RECLAIM_KERNEL "\n"
                     "\t\tlinux /boot/" RECLAIM_DIR "/" RECLAIM_KERNEL " %s\n"
                     "\t\tinitrd /boot/" RECLAIM_DIR "/" RECLAIM_INITRD "\n"
                     "\tfi\n"
                     "}\n" RECLAIM_MENU_END "\n",
                     words, words) < 0) {
                *r = -ENOMEM;
                return NULL;
        }
        *r = 0;
        return text;
}

/* custom.cfg (which Debian's grub.cfg sources at every boot, from
 * 41_custom) with our block put in place of an earlier one, or appended;
 * the rest as it was. malloc'd text, or NULL with -errno in *r. */
static char *custom_cfg_with(const char *old, size_t len, const char *block, int *r) {
        const char *b = old ? memmem(old, len, RECLAIM_MENU_BEGIN, strlen(RECLAIM_MENU_BEGIN)) : NULL;
        const char *e = b ? memmem(b, len - (size_t) (b - old), RECLAIM_MENU_END, strlen(RECLAIM_MENU_END)) : NULL;
        size_t head = b && e ? (size_t) (b - old) : len, tail_at = head;
        if (b && e) {
                tail_at = (size_t) (e - old) + strlen(RECLAIM_MENU_END);
                if (tail_at < len && old[tail_at] == '\n')
                        tail_at++;
        }
        char *text = NULL;
        bool nl = head > 0 && old[head - 1] != '\n';
        if (asprintf(&text, "%.*s%s%s%.*s", (int) head, old ? old : "", nl ? "\n" : "", block,
                     (int) (len - tail_at), old ? old + tail_at : "") < 0) {
                *r = -ENOMEM;
                return NULL;
        }
        *r = 0;
        return text;
}

int reclaim_write_entry(const char *boot_dir, const char *cmdline, char *err, size_t errlen) {
        _cleanup_free_ char *text = NULL, *entry = NULL, *envpath = NULL;
        char block[RECLAIM_GRUBENV_SIZE], out[RECLAIM_GRUBENV_SIZE];
        struct stat st;
        int r;

        if (err && errlen)
                err[0] = '\0';
        if (!boot_dir || boot_dir[0] != '/')
                return errmsg(err, errlen, -EINVAL, "the boot folder must be an absolute path");
        if (!(text = reclaim_entry_text(cmdline, &r)))
                return r == -EINVAL ? errmsg(err, errlen, r,
                                             "the kernel command line must be at most %d printable ASCII "
                                             "characters on one line", RECLAIM_CMDLINE_MAX)
                                    : r;
        if (stat(boot_dir, &st) < 0)
                return errmsg(err, errlen, -errno, "boot folder %s: %m", boot_dir);
        if (!S_ISDIR(st.st_mode))
                return errmsg(err, errlen, -ENOTDIR, "boot folder %s is not a folder", boot_dir);
        if ((r = check_boot_file(boot_dir, RECLAIM_KERNEL, err, errlen)) < 0 ||
            (r = check_boot_file(boot_dir, RECLAIM_INITRD, err, errlen)) < 0)
                return r;
        if (asprintf(&entry, "%s/" ENTRY_RELPATH, boot_dir) < 0) {
                entry = NULL;
                return -ENOMEM;
        }
        const char *grub = grub_folder(boot_dir);
        if ((r = grubenv_path(boot_dir, grub, &envpath, err, errlen)) < 0)
                return r;
        /* Everything that can refuse is checked before the first write. */
        if ((r = read_grubenv(envpath, block, err, errlen)) < 0)
                return r;
        if (reclaim_grubenv_set(r ? block : NULL, r ? sizeof block : 0, "next_entry", RECLAIM_ENTRY_ID, out) < 0)
                return errmsg(err, errlen, -EINVAL,
                              "%s is not a GRUB environment block, or has no room for next_entry; left as it is",
                              envpath);
        /* A GRUB that does not read BLS entries (its grub.cfg has no
         * blscfg: Debian, Ubuntu) gets the same boot as a menuentry in its
         * custom.cfg, which next_entry names as well. */
        _cleanup_free_ char *custom = NULL, *custom_text = NULL;
        if (grub_reads_bls(boot_dir, grub) == 0) {
                _cleanup_free_ char *menu = reclaim_menuentry_text(cmdline, &r), *old = NULL;
                if (!menu)
                        return r == -EINVAL ? errmsg(err, errlen, r, "the kernel command line cannot go in GRUB's "
                                                                     "custom.cfg (a single quote)")
                                            : r;
                if (asprintf(&custom, "%s/%s/custom.cfg", boot_dir, grub) < 0) {
                        custom = NULL;
                        return -ENOMEM;
                }
                size_t olen = 0;
                _cleanup_close_ int fd = open(custom, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0 && errno != ENOENT)
                        return errmsg(err, errlen, -errno, "cannot read %s: %m", custom);
                if (fd >= 0) {
                        if (!(old = malloc(RECLAIM_GRUB_CFG_MAX + 1)))
                                return -ENOMEM;
                        ssize_t k = fd_read_full(fd, old, RECLAIM_GRUB_CFG_MAX + 1);
                        if (k < 0)
                                return errmsg(err, errlen, (int) k, "cannot read %s: %m", custom);
                        if (k > RECLAIM_GRUB_CFG_MAX)
                                return errmsg(err, errlen, -EFBIG, "%s is larger than %d bytes; left as it is",
                                              custom, RECLAIM_GRUB_CFG_MAX);
                        olen = (size_t) k;
                }
                if (!(custom_text = custom_cfg_with(old, olen, menu, &r)))
                        return r;
        }
        if ((r = mkdirs_under(boot_dir, "loader/entries", err, errlen)) < 0 ||
            (r = mkdirs_under(boot_dir, grub, err, errlen)) < 0)
                return r;
        if (custom_text && (r = fd_write_file_atomic(custom, custom_text, strlen(custom_text), 0644)) < 0)
                return errmsg(err, errlen, r, "cannot write %s: %m", custom);
        /* The entry first: next_entry naming an entry that is not there
         * would make GRUB fall back to its default, harmless but silent. */
        if ((r = fd_write_file_atomic(entry, text, strlen(text), 0644)) < 0)
                return errmsg(err, errlen, r, "cannot write %s: %m", entry);
        if ((r = fd_write_file_atomic(envpath, out, sizeof out, 0644)) < 0)
                return errmsg(err, errlen, r, "cannot write %s: %m", envpath);
        return 0;
}

/* ---- the wipe ------------------------------------------------------------------ */

struct wipe {
        int fd;
        const char *path;
        json_object *erased;
        bool table_erased;
        char *err;
        size_t errlen;
};

/* Probe [offset, offset + size) of the device (size 0: to its end) for
 * partition tables (parts) or superblocks, and erase each signature found
 * until the probe finds none. blkid_do_wipe zeroes the magic and steps the
 * probe back, so the next blkid_do_probe looks again from the same prober:
 * a GPT's primary header, then its backup, then the protective MBR. */
static int wipe_range(struct wipe *w, uint64_t offset, uint64_t size, bool parts) {
        _cleanup_blkid_probe_ blkid_probe pr = blkid_new_probe();
        const char *k_type = parts ? "PTTYPE" : "TYPE", *k_off = parts ? "PTMAGIC_OFFSET" : "SBMAGIC_OFFSET",
                   *k_magic = parts ? "PTMAGIC" : "SBMAGIC";

        if (!pr)
                return -ENOMEM;
        if (blkid_probe_set_device(pr, w->fd, (blkid_loff_t) offset, (blkid_loff_t) size) < 0)
                return errmsg(w->err, w->errlen, -EIO, "libblkid cannot probe %s at %llu", w->path,
                              (unsigned long long) offset);
        blkid_probe_enable_superblocks(pr, !parts);
        blkid_probe_enable_partitions(pr, parts);
        if (parts)
                /* FORCE_GPT: a GPT header is found even when the
                 * protective MBR is already gone. */
                blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
        else
                blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_TYPE | BLKID_SUBLKS_BADCSUM);

        for (unsigned wipes = 0;;) {
                const char *type = NULL, *off = NULL;
                size_t len = 0;
                int r = blkid_do_probe(pr);
                if (r == 1)
                        return 0;
                if (r < 0)
                        return errmsg(w->err, w->errlen, -EIO, "libblkid failed to probe %s at %llu", w->path,
                                      (unsigned long long) offset);
                if (blkid_probe_lookup_value(pr, k_off, &off, NULL) < 0 ||
                    blkid_probe_lookup_value(pr, k_magic, NULL, &len) < 0 || !off || len == 0)
                        continue; /* a prober that reports no magic: blkid_do_wipe would skip it too */
                if (++wipes > RECLAIM_MAX_WIPES)
                        return errmsg(w->err, w->errlen, -ELOOP,
                                      "%s still shows signatures after %d were erased; giving up", w->path,
                                      RECLAIM_MAX_WIPES);
                if (blkid_probe_lookup_value(pr, k_type, &type, NULL) < 0 || !type)
                        type = "unknown";
                char *end;
                errno = 0;
                unsigned long long magoff = strtoull(off, &end, 10);
                if (errno || end == off || *end)
                        return errmsg(w->err, w->errlen, -EIO, "libblkid gave %s a magic offset \"%s\"", w->path, off);
                _cleanup_json_ json_object *e = json_object_new_object();
                if (!e || json_object_object_add(e, "offset", json_object_new_int64((int64_t) (offset + magoff))) < 0 ||
                    json_object_object_add(e, "type", json_object_new_string(type)) < 0 ||
                    json_object_object_add(e, "bytes", json_object_new_int64((int64_t) len)) < 0)
                        return -ENOMEM;
                errno = 0;
                if (blkid_do_wipe(pr, 0) != 0)
                        return errmsg(w->err, w->errlen, errno > 0 ? -errno : -EIO,
                                      "erasing the %s signature at %llu of %s failed: %m", type,
                                      offset + magoff, w->path);
                if (json_object_array_add(w->erased, TAKE_PTR(e)) < 0)
                        return -ENOMEM;
                if (parts)
                        w->table_erased = true;
        }
}

/* The byte ranges of the partition table's partitions (none when there is
 * no table), in *out (malloc'd pairs offset, size). */
static int list_partitions(struct wipe *w, uint64_t total, uint64_t **out, size_t *n) {
        _cleanup_blkid_probe_ blkid_probe pr = blkid_new_probe();
        _cleanup_free_ uint64_t *v = NULL;
        size_t k = 0;

        *out = NULL;
        *n = 0;
        if (!pr)
                return -ENOMEM;
        if (blkid_probe_set_device(pr, w->fd, 0, 0) < 0)
                return errmsg(w->err, w->errlen, -EIO, "libblkid cannot probe %s", w->path);
        blkid_probe_enable_superblocks(pr, 0);
        blkid_probe_enable_partitions(pr, 1);
        blkid_partlist ls = blkid_probe_get_partitions(pr);
        int count = ls ? blkid_partlist_numof_partitions(ls) : 0;
        if (count <= 0)
                return 0;
        if (!(v = calloc((size_t) count * 2, sizeof *v)))
                return -ENOMEM;
        for (int i = 0; i < count; i++) {
                blkid_partition par = blkid_partlist_get_partition(ls, i);
                if (!par)
                        continue;
                /* libblkid counts partitions in 512-byte sectors. */
                blkid_loff_t start = blkid_partition_get_start(par), size = blkid_partition_get_size(par);
                if (start < 0 || size <= 0 || (uint64_t) start * 512 >= total)
                        continue;
                uint64_t off = (uint64_t) start * 512, len = (uint64_t) size * 512;
                v[2 * k] = off;
                v[2 * k + 1] = len > total - off ? total - off : len;
                k++;
        }
        *out = TAKE_PTR(v);
        *n = k;
        return 0;
}

int reclaim_wipe(const char *path, bool discard, json_object **report, char *err, size_t errlen) {
        _cleanup_json_ json_object *o = NULL, *erased = NULL;
        _cleanup_free_ uint64_t *parts = NULL;
        _cleanup_close_ int fd = -1;
        struct wipe w = { .path = path, .err = err, .errlen = errlen };
        bool discarded = false;
        char why[256] = "";
        struct stat st;
        uint64_t total;
        size_t nparts;
        int r;

        *report = NULL;
        if (err && errlen)
                err[0] = '\0';
        if (!path || !*path)
                return errmsg(err, errlen, -EINVAL, "no disk to wipe");
        if (stat(path, &st) < 0)
                return errmsg(err, errlen, -errno, "disk %s: %m", path);
        if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
                return errmsg(err, errlen, -ENOTBLK, "%s is not a block device", path);
        /* O_EXCL on a block device: the kernel refuses it while the disk or
         * one of its partitions is mounted or held by LVM, RAID or swap. */
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
        if (fd < 0 && errno == EBUSY)
                return errmsg(err, errlen, -EBUSY,
                              "%s is in use (mounted, or held by LVM, RAID or swap); not wiped", path);
        if (fd < 0)
                return errmsg(err, errlen, -errno, "cannot open %s for writing: %m", path);
        if (fstat(fd, &st) < 0)
                return errmsg(err, errlen, -errno, "disk %s: %m", path);
        if (S_ISBLK(st.st_mode)) {
                if (ioctl(fd, BLKGETSIZE64, &total) < 0)
                        return errmsg(err, errlen, -errno, "cannot read the size of %s: %m", path);
        } else
                total = (uint64_t) st.st_size;
        w.fd = fd;

        if (discard && S_ISBLK(st.st_mode)) {
                uint64_t range[2] = { 0, total };
                if (ioctl(fd, BLKDISCARD, range) == 0)
                        discarded = true;
                else
                        errmsg(why, sizeof why, -errno, "discard failed: %m");
        }

        if (!(w.erased = erased = json_object_new_array()))
                return -ENOMEM;
        /* Inside the partitions first, while the table still says where
         * they are; then the table; then the whole device. */
        if ((r = list_partitions(&w, total, &parts, &nparts)) < 0)
                return r;
        for (size_t i = 0; i < nparts; i++)
                if ((r = wipe_range(&w, parts[2 * i], parts[2 * i + 1], false)) < 0)
                        return r;
        if ((r = wipe_range(&w, 0, 0, true)) < 0 || (r = wipe_range(&w, 0, 0, false)) < 0)
                return r;
        if (fsync(fd) < 0)
                return errmsg(err, errlen, -errno, "fsync on %s failed: %m", path);
        if (S_ISBLK(st.st_mode) && w.table_erased)
                (void) ioctl(fd, BLKRRPART); /* the kernel's view of the partitions; best effort */

        if (!(o = json_object_new_object()) ||
            json_object_object_add(o, "path", json_object_new_string(path)) < 0 ||
            json_object_object_add(o, "discarded", json_object_new_boolean(discarded)) < 0 ||
            (why[0] && json_object_object_add(o, "discard_error", json_object_new_string(why)) < 0) ||
            json_object_object_add(o, "erased", TAKE_PTR(erased)) < 0)
                return -ENOMEM;
        *report = TAKE_PTR(o);
        return 0;
}
