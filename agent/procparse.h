/* Pure parsers for /proc and /sys text: cpuinfo, meminfo, CPU lists, the
 * kernel command line, mountinfo and the udev database format. No I/O. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "strv.h"

struct cpuinfo {
        char *model_name;
        char *vendor_id;
        int64_t processors;     /* "processor" stanzas */
        int64_t sockets;        /* distinct "physical id", -1 unknown */
        int64_t cores;          /* distinct (physical id, core id), -1 unknown */
        double max_mhz;         /* max "cpu MHz", -1 unknown */
        char *arch_hint;        /* "aarch64", "x86_64", ... when cpuinfo tells */
        struct strv flags;      /* of the first processor */
};

int cpuinfo_parse(const char *text, struct cpuinfo *ci);
void cpuinfo_free(struct cpuinfo *ci);

/* "MemTotal:  24684084 kB" -> bytes for `key`; -ENOENT / -EINVAL. */
int meminfo_get(const char *text, const char *key, int64_t *bytes);

/* Kernel CPU list ("0-3,8,10-11") -> count; -EINVAL on bad syntax. At most
 * `max` CPUs are accepted. When `set` is non-NULL it is filled (bits). */
int cpulist_count(const char *text, int64_t max, int64_t *count);

/* Value of `key=` on a kernel command line (last occurrence wins, as the
 * kernel does); NULL if absent. Quoted values are unquoted. */
char *cmdline_get(const char *cmdline, const char *key);
/* BOOTIF=01-aa-bb-cc-dd-ee-ff (or aa:bb:..) -> "aa:bb:cc:dd:ee:ff"; NULL if bad. */
char *bootif_to_mac(const char *bootif);

/* One mount: major, minor, mount point (unescaped). */
struct mount_entry {
        unsigned major, minor;
        char *mountpoint;
        char *fstype;
        char *source;
};
struct mount_table {
        struct mount_entry *e;
        size_t n;
};
/* /proc/self/mountinfo; bad lines are skipped; at most 65536 entries. */
int mountinfo_parse(const char *text, struct mount_table *t);
/* The mount of major:minor with the shortest mount point, or NULL. */
const struct mount_entry *mount_table_find(const struct mount_table *t, unsigned major, unsigned minor);
void mount_table_free(struct mount_table *t);

/* The udev database record of one device (/run/udev/data/b8:0):
 * "E:KEY=VALUE" properties and "S:disk/by-id/..." links. */
struct udev_record {
        struct strv props; /* "KEY=VALUE" */
        struct strv links; /* relative to /dev, e.g. "disk/by-id/ata-X" */
};
int udev_record_parse(const char *text, struct udev_record *rec);
const char *udev_record_get(const struct udev_record *rec, const char *key);
void udev_record_free(struct udev_record *rec);

/* Parse "maj:min". */
int devnum_parse(const char *s, unsigned *major, unsigned *minor);
