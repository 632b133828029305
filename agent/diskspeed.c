/* installation-disk-speed-check (diskspeed.h): args, the statistics, where
 * to write (a mount of the disk, a test's target folder, or the device's
 * own tail block) and the timed fdatasync loop. */
#include "diskspeed.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/fs.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "errmsg.h"
#include "install.h"
#include "json-cleanup.h"

#define TEMP_NAME ".muster-disk-speed-XXXXXX"

/* ---- args ------------------------------------------------------------------ */

int diskspeed_args_parse(json_object *args, struct diskspeed_args *out, char *err, size_t errlen) {
        json_object *v;

        *out = (struct diskspeed_args) { .writes = DISKSPEED_DEFAULT_WRITES };
        if (err && errlen)
                err[0] = '\0';
        if (!args || !json_object_is_type(args, json_type_object))
                return errmsg(err, errlen, -EINVAL, "args must be an object");
        if (json_object_object_get_ex(args, "path", &v) && v) {
                const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
                size_t n = s ? (size_t) json_object_get_string_len(v) : 0;
                bool ok = s && n > 1 && n <= DISKSPEED_PATH_MAX && strlen(s) == n && s[0] == '/';
                for (size_t i = 0; ok && i < n; i++)
                        ok = (unsigned char) s[i] > ' ' && s[i] != 0x7f;
                if (!ok)
                        return errmsg(err, errlen, -EINVAL,
                                      "args.path must be an absolute path of 2 to %d printable characters without "
                                      "spaces", DISKSPEED_PATH_MAX);
                if (!(out->path = strdup(s)))
                        return -ENOMEM;
        }
        if (json_object_object_get_ex(args, "writes", &v) && v) {
                int64_t w = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;
                if (w < 1 || w > DISKSPEED_MAX_WRITES) {
                        diskspeed_args_free(out);
                        return errmsg(err, errlen, -EINVAL, "args.writes must be an integer from 1 to %d",
                                      DISKSPEED_MAX_WRITES);
                }
                out->writes = (unsigned) w;
        }
        return 0;
}

void diskspeed_args_free(struct diskspeed_args *a) {
        free(a->path);
        a->path = NULL;
}

/* ---- statistics ------------------------------------------------------------ */

double diskspeed_percentile(const double *sorted, size_t n, double p) {
        if (!sorted || n == 0 || !(p > 0 && p <= 100))
                return NAN;
        /* rank = ceil(p/100 * n), with a little slack so that 50% of 4 is
         * exactly 2 (no libm: truncate, then round up). */
        double exact = p * (double) n / 100.0 - 1e-9;
        size_t rank = (size_t) exact;
        if ((double) rank < exact)
                rank++;
        if (rank < 1)
                rank = 1;
        if (rank > n)
                rank = n;
        return sorted[rank - 1];
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

int diskspeed_stats(double *samples, size_t n, struct diskspeed_stats *st) {
        if (!samples || n == 0 || !st)
                return -EINVAL;
        qsort(samples, n, sizeof *samples, cmp_double);
        st->p99_ms = diskspeed_percentile(samples, n, 99);
        st->median_ms = diskspeed_percentile(samples, n, 50);
        st->max_ms = samples[n - 1];
        return 0;
}

/* ---- mountinfo ------------------------------------------------------------- */

int diskspeed_mountinfo_line(const char *line, unsigned *major, unsigned *minor, char *mnt, size_t mntlen) {
        /* "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": id,
         * parent, major:minor, root, mount point, ... */
        const char *p = line;
        char *end;

        if (!line || !mnt || mntlen == 0)
                return -EINVAL;
        for (int field = 0; field < 2; field++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EINVAL;
                p++;
        }
        errno = 0;
        unsigned long ma = strtoul(p, &end, 10);
        if (end == p || *end != ':' || errno || ma > UINT_MAX)
                return -EINVAL;
        p = end + 1;
        unsigned long mi = strtoul(p, &end, 10);
        if (end == p || *end != ' ' || errno || mi > UINT_MAX)
                return -EINVAL;
        p = strchr(end + 1, ' '); /* past the root */
        if (!p)
                return -EINVAL;
        p++;
        size_t k = 0;
        for (; *p && *p != ' ' && *p != '\n'; p++) {
                char c = *p;
                if (c == '\\') {
                        if (p[1] < '0' || p[1] > '3' || p[2] < '0' || p[2] > '7' || p[3] < '0' || p[3] > '7')
                                return -EINVAL;
                        c = (char) ((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                }
                if (k + 1 >= mntlen)
                        return -EINVAL;
                mnt[k++] = c;
        }
        if (k == 0 || mnt[0] != '/')
                return -EINVAL;
        mnt[k] = '\0';
        *major = (unsigned) ma;
        *minor = (unsigned) mi;
        return 0;
}

/* The sysfs directory of a block device number, resolved (NULL if none). */
static char *sys_block_dir(unsigned ma, unsigned mi) {
        char link[64];
        snprintf(link, sizeof link, "/sys/dev/block/%u:%u", ma, mi);
        return realpath(link, NULL);
}

/* ---- the timed writes -------------------------------------------------------- */

static int64_t mono_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* `writes` times: write block at offset (append: offset advances by the
 * block each time), fdatasync, timing the fdatasync alone. The number of
 * writes done (>= 1) or -errno with the reason in err. */
static int timed_writes(int fd, const char *what, const void *block, off_t offset, bool append, unsigned writes,
                        double *samples, char *err, size_t errlen) {
        int64_t start = mono_ns();
        unsigned done = 0;

        for (; done < writes; done++) {
                off_t at = append ? offset + (off_t) done * DISKSPEED_BLOCK : offset;
                ssize_t w = pwrite(fd, block, DISKSPEED_BLOCK, at);
                if (w != DISKSPEED_BLOCK)
                        return errmsg(err, errlen, w < 0 ? -errno : -EIO, "writing to %s failed: %m", what);
                int64_t t0 = mono_ns();
                if (fdatasync(fd) < 0)
                        return errmsg(err, errlen, -errno, "fdatasync on %s failed: %m", what);
                int64_t t1 = mono_ns();
                samples[done] = (double) (t1 - t0) / 1e6;
                if (t1 - start > (int64_t) DISKSPEED_DEADLINE_MS * 1000000LL) {
                        done++;
                        break;
                }
        }
        return (int) done;
}

/* A temporary file in dir, removed afterwards. */
static int measure_file(const char *dir, unsigned writes, double *samples, char *err, size_t errlen) {
        _cleanup_free_ char *name = NULL;
        _cleanup_close_ int fd = -1;
        static const char pattern[DISKSPEED_BLOCK] = { 'm' };

        if (asprintf(&name, "%s/" TEMP_NAME, dir) < 0) {
                name = NULL;
                return -ENOMEM;
        }
        fd = mkostemp(name, O_CLOEXEC);
        if (fd < 0)
                return errmsg(err, errlen, -errno, "cannot create a file in %s: %m", dir);
        int r = timed_writes(fd, dir, pattern, 0, true, writes, samples, err, errlen);
        if (unlink(name) < 0 && r >= 0)
                r = errmsg(err, errlen, -errno, "cannot remove %s: %m", name);
        return r;
}

/* The device's own tail block, read and written back as it was. */
static int measure_device(const char *dev, unsigned writes, double *samples, char *err, size_t errlen) {
        _cleanup_close_ int fd = open(dev, O_RDWR | O_EXCL | O_CLOEXEC);
        _cleanup_free_ void *block = NULL;
        uint64_t size = 0;

        if (fd < 0 && errno == EBUSY)
                return errmsg(err, errlen, -EBUSY,
                              "%s is in use (held by LVM, RAID, swap or a mount); not measured", dev);
        if (fd < 0)
                return errmsg(err, errlen, -errno, "cannot open %s for writing: %m", dev);
        if (ioctl(fd, BLKGETSIZE64, &size) < 0)
                return errmsg(err, errlen, -errno, "cannot read the size of %s: %m", dev);
        if (size < 2 * DISKSPEED_DEVICE_TAIL)
                return errmsg(err, errlen, -ENOSPC, "%s is too small (%llu bytes) to be measured", dev,
                              (unsigned long long) size);
        off_t offset = (off_t) ((size - DISKSPEED_DEVICE_TAIL) & ~(uint64_t) (DISKSPEED_BLOCK - 1));
        _Static_assert(DISKSPEED_DEVICE_TAIL >= DISKSPEED_DEVICE_GPT_ROOM + DISKSPEED_BLOCK, "tail block clear of GPT");
        if (posix_memalign(&block, DISKSPEED_BLOCK, DISKSPEED_BLOCK) != 0) {
                block = NULL;
                return -ENOMEM;
        }
        ssize_t n = pread(fd, block, DISKSPEED_BLOCK, offset);
        if (n != DISKSPEED_BLOCK)
                return errmsg(err, errlen, n < 0 ? -errno : -EIO, "cannot read %s: %m", dev);
        return timed_writes(fd, dev, block, offset, false, writes, samples, err, errlen);
}

/* A block device: a file on a mount of it or of one of its partitions, else
 * the device itself. *method and *mnt say which. */
static int measure_disk(const char *path, unsigned writes, double *samples, const char **method, char *mnt,
                        size_t mntlen, char *err, size_t errlen) {
        _cleanup_free_ char *dev = realpath(path, NULL);
        _cleanup_free_ char *disk_sys = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        struct stat st;
        int r = -ENOENT;

        if (!dev || stat(dev, &st) < 0)
                return errmsg(err, errlen, -errno, "disk %s: %m", path);
        if (!S_ISBLK(st.st_mode))
                return errmsg(err, errlen, -ENOTBLK, "%s is not a block device", path);
        disk_sys = sys_block_dir(major(st.st_rdev), minor(st.st_rdev));
        f = fopen("/proc/self/mountinfo", "re");
        size_t dl = disk_sys ? strlen(disk_sys) : 0;
        while (f && disk_sys && getline(&line, &cap, f) > 0) {
                unsigned ma, mi;
                if (diskspeed_mountinfo_line(line, &ma, &mi, mnt, mntlen) < 0 || ma == 0)
                        continue;
                _cleanup_free_ char *sys = sys_block_dir(ma, mi);
                if (!sys || strncmp(sys, disk_sys, dl) != 0 || (sys[dl] != '\0' && sys[dl] != '/'))
                        continue;
                /* A read-only mount (an ESP mounted ro, say): try the next. */
                r = measure_file(mnt, writes, samples, err, errlen);
                if (r >= 0) {
                        *method = "file";
                        return r;
                }
        }
        if (r != -ENOENT)
                return r; /* mounted, but nowhere writable: its device is busy anyway */
        mnt[0] = '\0';
        *method = "device";
        return measure_device(dev, writes, samples, err, errlen);
}

int diskspeed_run(const struct diskspeed_args *a, const char *install_target, json_object **out, char *err,
                  size_t errlen) {
        _cleanup_free_ double *samples = calloc(a->writes ? a->writes : 1, sizeof *samples);
        _cleanup_free_ char *copy = NULL;
        _cleanup_json_ json_object *o = NULL;
        char mnt[DISKSPEED_PATH_MAX + 1] = "";
        const char *path, *method = "file";
        int r;

        *out = NULL;
        if (!samples)
                return -ENOMEM;
        if (a->writes < 1 || a->writes > DISKSPEED_MAX_WRITES)
                return errmsg(err, errlen, -EINVAL, "writes must be from 1 to %d", DISKSPEED_MAX_WRITES);
        if (install_target) {
                enum install_target_kind kind;
                if ((r = install_target_classify(install_target, &kind)) < 0)
                        return errmsg(err, errlen, r, "install target %s is not usable: %m", install_target);
                path = install_target;
                if (kind == INSTALL_TARGET_DISK)
                        r = measure_disk(path, a->writes, samples, &method, mnt, sizeof mnt, err, errlen);
                else {
                        if (kind == INSTALL_TARGET_FILE) {
                                if (!(copy = strdup(install_target)))
                                        return -ENOMEM;
                                path = dirname(copy);
                        }
                        r = measure_file(path, a->writes, samples, err, errlen);
                }
        } else if (a->path) {
                path = a->path;
                r = measure_disk(path, a->writes, samples, &method, mnt, sizeof mnt, err, errlen);
        } else
                return errmsg(err, errlen, -EINVAL, "no installation disk was chosen for this host (args.path)");
        if (r < 0)
                return r;

        struct diskspeed_stats s;
        size_t done = (size_t) r;
        if ((r = diskspeed_stats(samples, done, &s)) < 0)
                return r;
        o = json_object_new_object();
        if (!o || json_object_object_add(o, "path", json_object_new_string(path)) < 0 ||
            json_object_object_add(o, "method", json_object_new_string(method)) < 0 ||
            (mnt[0] && json_object_object_add(o, "mount", json_object_new_string(mnt)) < 0) ||
            json_object_object_add(o, "writes", json_object_new_int64((int64_t) done)) < 0 ||
            json_object_object_add(o, "p99_ms", json_object_new_double(s.p99_ms)) < 0 ||
            json_object_object_add(o, "median_ms", json_object_new_double(s.median_ms)) < 0 ||
            json_object_object_add(o, "max_ms", json_object_new_double(s.max_ms)) < 0)
                return -ENOMEM;
        *out = TAKE_PTR(o);
        return 0;
}
