/* The installation-disk-speed-check step (DESIGN §4): fdatasync latency of
 * the disk the host will be installed on, measured in
 * preparing-for-installation. Non-destructive: on a mounted disk (or one
 * with a mounted partition) a temporary file on that mount; otherwise a
 * small aligned block near the end of the device is read and the same bytes
 * written back, under an exclusive open (the kernel refuses it while the
 * disk is mounted or held by LVM, RAID or swap). The pure pieces (args,
 * percentiles, mountinfo lines) are exposed for tests. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DISKSPEED_DEFAULT_WRITES 50
#define DISKSPEED_MAX_WRITES 1000
#define DISKSPEED_BLOCK 4096                   /* bytes per write */
#define DISKSPEED_DEVICE_TAIL (1024 * 1024)    /* the block lies in the device's last MiB ... */
#define DISKSPEED_DEVICE_GPT_ROOM (64 * 1024)  /* ... clear of the backup GPT at its very end */
#define DISKSPEED_DEADLINE_MS 60000            /* the writes stop after this long; those done count */
#define DISKSPEED_PATH_MAX 4096

struct diskspeed_args {
        char *path;      /* absolute device path, or NULL (the coordinator chose none) */
        unsigned writes; /* 1..DISKSPEED_MAX_WRITES */
};

/* args {"path"?: absolute path (1..4096 printable bytes, no spaces),
 * "writes"?: 1..1000 (default 50)}; other members are ignored. 0, or
 * -EINVAL with the reason in err, -ENOMEM. *out is always initialised; free
 * with diskspeed_args_free(). */
int diskspeed_args_parse(json_object *args, struct diskspeed_args *out, char *err, size_t errlen);
void diskspeed_args_free(struct diskspeed_args *a);

/* The p-th percentile (0 < p <= 100) of n >= 1 ascending samples by the
 * nearest-rank method: the smallest sample with at least p% of the samples
 * at or below it. NAN for n == 0 or p out of range. */
double diskspeed_percentile(const double *sorted, size_t n, double p);

struct diskspeed_stats {
        double p99_ms, median_ms, max_ms;
};
/* Sorts samples in place and fills st (median = 50th percentile by nearest
 * rank). -EINVAL for n == 0. */
int diskspeed_stats(double *samples, size_t n, struct diskspeed_stats *st);

/* One /proc/self/mountinfo line: the mounted device's major:minor and its
 * mount point (octal escapes such as \040 decoded) into mnt. 0, or -EINVAL
 * for a line that does not parse or a mount point longer than mntlen - 1. */
int diskspeed_mountinfo_line(const char *line, unsigned *major, unsigned *minor, char *mnt, size_t mntlen);

/* Run the step. install_target (the agent's --install-target, or NULL): a
 * directory is measured with a temporary file in it, a file beside it (its
 * folder), a block device as a device; then args.path is not used. Without
 * one, args.path must name a block device. 0 and *out =
 * {"path", "method": "file"|"device", "writes", "p99_ms", "median_ms",
 * "max_ms"}, or -errno with the reason in err (nothing left behind). */
int diskspeed_run(const struct diskspeed_args *a, const char *install_target, json_object **out, char *err,
                  size_t errlen);
