/* installation-disk-speed-check on the agent: its args as hostile input, the
 * percentiles, mountinfo lines, and runs on a temporary folder, a file
 * target, and loop devices backed by temporary files (never a real disk):
 * a bare one measured in place with its bytes unchanged, a mounted one
 * through a file on its mount. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diskspeed.h"
#include "testutil.h"

static int parse(const char *text, struct diskspeed_args *a, char *err, size_t n) {
        json_object *o = json_tokener_parse(text);
        cr_assert_not_null(o, "%s", text);
        int r = diskspeed_args_parse(o, a, err, n);
        json_object_put(o);
        return r;
}

Test(diskspeed, args) {
        struct diskspeed_args a;
        char err[256];
        cr_assert_eq(parse("{}", &a, err, sizeof err), 0, "%s", err);
        cr_assert_null(a.path);
        cr_assert_eq(a.writes, DISKSPEED_DEFAULT_WRITES);
        diskspeed_args_free(&a);
        cr_assert_eq(parse("{\"path\":\"/dev/disk/by-id/nvme-X\",\"writes\":1000,\"other\":true}", &a, err, sizeof err), 0);
        cr_assert_str_eq(a.path, "/dev/disk/by-id/nvme-X");
        cr_assert_eq(a.writes, 1000);
        diskspeed_args_free(&a);
        cr_assert_eq(parse("{\"path\":null,\"writes\":1}", &a, err, sizeof err), 0);
        cr_assert_null(a.path);
        cr_assert_eq(a.writes, 1);
        diskspeed_args_free(&a);

        static const struct {
                const char *args, *why;
        } bad[] = {
                { "[]", "args must be an object" },
                { "{\"writes\":0}", "args.writes must be an integer from 1 to 1000" },
                { "{\"writes\":1001}", "args.writes must be an integer from 1 to 1000" },
                { "{\"writes\":-5}", "args.writes must be an integer from 1 to 1000" },
                { "{\"writes\":9223372036854775807}", "args.writes must be an integer from 1 to 1000" },
                { "{\"writes\":\"50\"}", "args.writes must be an integer from 1 to 1000" },
                { "{\"writes\":2.5}", "args.writes must be an integer from 1 to 1000" },
                { "{\"path\":\"sda\"}", "args.path must be an absolute path" },
                { "{\"path\":\"/\"}", "args.path must be an absolute path" },
                { "{\"path\":\"\"}", "args.path must be an absolute path" },
                { "{\"path\":5}", "args.path must be an absolute path" },
                { "{\"path\":\"/dev/sd a\"}", "args.path must be an absolute path" },
                { "{\"path\":\"/dev/sda\\n\"}", "args.path must be an absolute path" },
                { "{\"path\":\"/dev/s\\u0000da\"}", "args.path must be an absolute path" },
                { "{\"path\":\"/dev/sda\",\"writes\":0}", "args.writes" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(parse(bad[i].args, &a, err, sizeof err), -EINVAL, "%s", bad[i].args);
                cr_assert(strstr(err, bad[i].why), "%s: %s", bad[i].args, err);
                cr_assert_null(a.path, "nothing kept from refused args");
                diskspeed_args_free(&a);
        }
        char *long_path = malloc(DISKSPEED_PATH_MAX + 16);
        memset(long_path, 'a', DISKSPEED_PATH_MAX + 1);
        long_path[0] = '/';
        long_path[DISKSPEED_PATH_MAX + 1] = '\0';
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(long_path));
        cr_assert_eq(diskspeed_args_parse(o, &a, err, sizeof err), -EINVAL, "a path one byte too long");
        long_path[DISKSPEED_PATH_MAX] = '\0';
        json_object_object_add(o, "path", json_object_new_string(long_path));
        cr_assert_eq(diskspeed_args_parse(o, &a, err, sizeof err), 0, "the longest path");
        diskspeed_args_free(&a);
        json_object_put(o);
        free(long_path);
        cr_assert_eq(diskspeed_args_parse(NULL, &a, err, sizeof err), -EINVAL);
}

Test(diskspeed, percentiles) {
        double one[] = { 7 };
        cr_assert_eq(diskspeed_percentile(one, 1, 99), 7);
        cr_assert_eq(diskspeed_percentile(one, 1, 50), 7);
        double four[] = { 1, 2, 3, 4 };
        cr_assert_eq(diskspeed_percentile(four, 4, 50), 2, "nearest rank: 50%% of 4 is the 2nd");
        cr_assert_eq(diskspeed_percentile(four, 4, 75), 3);
        cr_assert_eq(diskspeed_percentile(four, 4, 76), 4);
        cr_assert_eq(diskspeed_percentile(four, 4, 100), 4);
        cr_assert_eq(diskspeed_percentile(four, 4, 1), 1);
        cr_assert(isnan(diskspeed_percentile(four, 0, 50)));
        cr_assert(isnan(diskspeed_percentile(four, 4, 0)));
        cr_assert(isnan(diskspeed_percentile(four, 4, 101)));
        cr_assert(isnan(diskspeed_percentile(four, 4, NAN)));
        cr_assert(isnan(diskspeed_percentile(NULL, 4, 50)));

        /* 100 samples 1..100: p99 is the 99th, not the outlier at the top;
         * 200 samples: the 198th. */
        double s[200];
        for (int i = 0; i < 100; i++)
                s[i] = 100 - i; /* unsorted on purpose */
        struct diskspeed_stats st;
        cr_assert_eq(diskspeed_stats(s, 100, &st), 0);
        cr_assert_eq(st.p99_ms, 99);
        cr_assert_eq(st.median_ms, 50);
        cr_assert_eq(st.max_ms, 100);
        for (int i = 0; i < 200; i++)
                s[i] = (i * 37) % 200 + 1;
        cr_assert_eq(diskspeed_stats(s, 200, &st), 0);
        cr_assert_eq(st.p99_ms, 198);
        cr_assert_eq(st.median_ms, 100);
        cr_assert_eq(st.max_ms, 200);
        /* 50 samples (the default): p99 is the maximum. */
        for (int i = 0; i < 50; i++)
                s[i] = i == 17 ? 40.0 : 1.0;
        cr_assert_eq(diskspeed_stats(s, 50, &st), 0);
        cr_assert_eq(st.p99_ms, 40);
        cr_assert_eq(st.median_ms, 1);
        cr_assert_eq(diskspeed_stats(s, 0, &st), -EINVAL);
}

Test(diskspeed, mountinfo_lines) {
        unsigned ma = 0, mi = 0;
        char mnt[64];
        cr_assert_eq(diskspeed_mountinfo_line("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n",
                                              &ma, &mi, mnt, sizeof mnt), 0);
        cr_assert_eq(ma, 98);
        cr_assert_eq(mi, 0);
        cr_assert_str_eq(mnt, "/mnt2");
        cr_assert_eq(diskspeed_mountinfo_line("29 1 259:2 / /var/lib/my\\040data rw - xfs /dev/nvme0n1p2 rw", &ma, &mi,
                                              mnt, sizeof mnt), 0);
        cr_assert_eq(ma, 259);
        cr_assert_eq(mi, 2);
        cr_assert_str_eq(mnt, "/var/lib/my data");
        static const char *const bad[] = {
                "", "36", "36 35", "36 35 98 / /m rw", "36 35 98: / /m rw", "36 35 :0 / /m rw", "36 35 98:0",
                "36 35 98:0 /", "36 35 98:0 / relative rw", "36 35 98:0 / /bad\\9 rw", "36 35 98:0 / /bad\\04 rw",
                "36 35 99999999999:0 / /m rw",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                cr_assert_eq(diskspeed_mountinfo_line(bad[i], &ma, &mi, mnt, sizeof mnt), -EINVAL, "'%s'", bad[i]);
        char tiny[4];
        cr_assert_eq(diskspeed_mountinfo_line("1 2 8:1 / /abc rw", &ma, &mi, tiny, sizeof tiny), -EINVAL);
        cr_assert_eq(diskspeed_mountinfo_line("1 2 8:1 / /ab rw", &ma, &mi, tiny, sizeof tiny), 0);
        cr_assert_str_eq(tiny, "/ab");
}

/* The names in dir (without . and ..), sorted, each followed by ','. */
static char *names(const char *dir) {
        struct dirent **ents;
        int n = scandir(dir, &ents, NULL, alphasort);
        cr_assert_geq(n, 0, "%s", dir);
        char *buf = calloc(1, 4096);
        for (int i = 0; i < n; i++) {
                if (strcmp(ents[i]->d_name, ".") != 0 && strcmp(ents[i]->d_name, "..") != 0)
                        snprintf(buf + strlen(buf), 4096 - strlen(buf), "%s,", ents[i]->d_name);
                free(ents[i]);
        }
        free(ents);
        return buf;
}

static json_object *run_ok(const struct diskspeed_args *a, const char *target) {
        json_object *o = NULL;
        char err[512] = "";
        int r = diskspeed_run(a, target, &o, err, sizeof err);
        cr_assert_eq(r, 0, "%s", err);
        cr_assert_not_null(o);
        return o;
}

Test(diskspeed, folder_and_file_targets_leave_nothing) {
        char *dir = tu_mkdtemp();
        struct diskspeed_args a = { .path = "/dev/ignored-with-a-target", .writes = 20 };
        json_object *o = run_ok(&a, dir);
        cr_assert_str_eq(tu_jstr(o, "path"), dir);
        cr_assert_str_eq(tu_jstr(o, "method"), "file");
        cr_assert_eq(json_object_get_int(tu_json_get(o, "writes")), 20);
        double p99 = json_object_get_double(tu_json_get(o, "p99_ms"));
        double med = json_object_get_double(tu_json_get(o, "median_ms"));
        double max = json_object_get_double(tu_json_get(o, "max_ms"));
        cr_assert(med >= 0 && med <= p99 && p99 <= max, "median %f p99 %f max %f", med, p99, max);
        json_object_put(o);
        char *l = names(dir);
        cr_assert_str_eq(l, "", "the temporary file is gone");
        free(l);

        /* A file target (an image that does not exist yet): beside it. */
        char target[4200];
        snprintf(target, sizeof target, "%s/disk.img", dir);
        o = run_ok(&a, target);
        cr_assert_str_eq(tu_jstr(o, "path"), dir);
        json_object_put(o);
        l = names(dir);
        cr_assert_str_eq(l, "", "no image created, no temporary file left");
        free(l);

        /* Failures carry their reason. */
        char err[512];
        o = NULL;
        snprintf(target, sizeof target, "%s/missing/disk.img", dir);
        cr_assert_lt(diskspeed_run(&a, target, &o, err, sizeof err), 0);
        cr_assert(strstr(err, "is not usable"), "%s", err);
        cr_assert_null(o);
        struct diskspeed_args none = { .writes = 5 };
        cr_assert_eq(diskspeed_run(&none, NULL, &o, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "no installation disk"), "%s", err);
        struct diskspeed_args chr = { .path = "/dev/null", .writes = 5 };
        cr_assert_eq(diskspeed_run(&chr, NULL, &o, err, sizeof err), -ENOTBLK);
        cr_assert_str_eq(err, "/dev/null is not a block device");
        snprintf(target, sizeof target, "%s/no-such-disk", dir);
        struct diskspeed_args gone = { .path = target, .writes = 5 };
        cr_assert_eq(diskspeed_run(&gone, NULL, &o, err, sizeof err), -ENOENT);
        cr_assert(strstr(err, "No such file"), "%s", err);
        tu_rm_rf(dir);
        free(dir);
}

/* A loop device over an 8 MiB file of a pattern (root only). */
static char *loop_up(const char *dir, char *img, size_t n) {
        snprintf(img, n, "%s/disk.img", dir);
        FILE *f = fopen(img, "we");
        cr_assert_not_null(f);
        uint32_t x = 2463534242u;
        for (int i = 0; i < 8 * 1024 * 1024 / 4; i++) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                fwrite(&x, sizeof x, 1, f);
        }
        cr_assert_eq(fclose(f), 0);
        char *dev = NULL;
        cr_assert_eq(tu_runf(&dev, NULL, "losetup -f --show %s", img), 0, "losetup");
        dev[strcspn(dev, "\n")] = '\0';
        return dev;
}

Test(diskspeed, bare_device_rewritten_unchanged) {
        if (geteuid() != 0)
                cr_skip_test("needs root for a loop device");
        char *dir = tu_mkdtemp(), img[4200], copy[4300];
        char *dev = loop_up(dir, img, sizeof img);
        snprintf(copy, sizeof copy, "%s/before.img", dir);
        tu_must("cp %s %s", img, copy);
        struct diskspeed_args a = { .path = dev, .writes = 10 };
        json_object *o = run_ok(&a, NULL);
        cr_assert_str_eq(tu_jstr(o, "method"), "device");
        cr_assert_str_eq(tu_jstr(o, "path"), dev);
        cr_assert_eq(json_object_get_int(tu_json_get(o, "writes")), 10);
        json_object_put(o);
        /* Held by someone else (a second exclusive opener): refused. */
        int fd = open(dev, O_RDONLY | O_EXCL);
        cr_assert_geq(fd, 0);
        char err[512];
        cr_assert_eq(diskspeed_run(&a, NULL, &o, err, sizeof err), -EBUSY);
        cr_assert(strstr(err, "in use"), "%s", err);
        close(fd);
        tu_must("losetup -d %s", dev);
        tu_must("cmp %s %s", img, copy);
        free(dev);
        tu_rm_rf(dir);
        free(dir);
}

Test(diskspeed, mounted_device_measured_on_its_mount) {
        if (geteuid() != 0)
                cr_skip_test("needs root for a loop device and a mount");
        char *dir = tu_mkdtemp(), img[4200], mnt[4200];
        char *dev = loop_up(dir, img, sizeof img);
        snprintf(mnt, sizeof mnt, "%s/mnt", dir);
        tu_must("mkfs.ext4 -q -F %s", dev);
        tu_must("mkdir -p %s", mnt);
        tu_must("mount %s %s", dev, mnt);
        struct diskspeed_args a = { .path = dev, .writes = 10 };
        json_object *o = NULL;
        char err[512] = "";
        int r = diskspeed_run(&a, NULL, &o, err, sizeof err);
        char *l = names(mnt);
        tu_runf(NULL, NULL, "umount %s", mnt);
        tu_runf(NULL, NULL, "losetup -d %s", dev);
        cr_assert_eq(r, 0, "%s", err);
        cr_assert_str_eq(tu_jstr(o, "method"), "file");
        cr_assert_str_eq(tu_jstr(o, "mount"), mnt);
        cr_assert_str_eq(l, "lost+found,", "nothing left on the mount");
        free(l);
        json_object_put(o);
        free(dev);
        tu_rm_rf(dir);
        free(dir);
}
