/* The installer without sockets: the manifest directory writer (add,
 * update, remove, foreign files, bookkeeping, a failure half-way), the
 * install step's args and targets, libblkid finding the root partition of
 * images built here with sfdisk and mkfs.ext4, manifests written into a
 * FILE target through a loop mount and read back through another, and
 * whole install/apply steps fed from memory with payloads signed by a
 * generated key — accepted, and refused (changed byte, other key, other
 * revision, bad image) with the target untouched. Runs as root; only loop
 * devices over files in a temporary directory are touched. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto.h"
#include "install.h"
#include "manifest.h"
#include "manifestdir.h"
#include "payload.h"
#include "testutil.h"

#define CLUSTER "6d757374-6572-4071-8335-00000000c1c1"
#define MiB (1024ull * 1024ull)
#define IMG_SIZE (32 * MiB)
#define ROOT_START_SECTOR 10240                      /* 5 MiB */
#define ROOT_OFFSET ((uint64_t) ROOT_START_SECTOR * 512)

static char *tmp;

static void mk(void) {
        tmp = tu_mkdtemp();
        cr_assert_not_null(tmp);
}

static void rm(void) {
        tu_rm_rf(tmp);
        free(tmp);
}

static char *path_in(const char *dir, const char *rel) {
        char *p;
        cr_assert(asprintf(&p, "%s/%s", dir, rel) > 0);
        return p;
}

static char *slurp(const char *path, size_t *len) {
        FILE *f = fopen(path, "rb");
        if (!f)
                return NULL;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = malloc((size_t) n + 1);
        cr_assert_not_null(buf);
        cr_assert_eq(fread(buf, 1, (size_t) n, f), (size_t) n);
        buf[n] = '\0';
        fclose(f);
        if (len)
                *len = (size_t) n;
        return buf;
}

static bool exists(const char *dir, const char *rel) {
        char *p = path_in(dir, rel);
        struct stat st;
        bool r = lstat(p, &st) == 0;
        free(p);
        return r;
}

static size_t count_entries(const char *dir) {
        DIR *d = opendir(dir);
        size_t n = 0;
        if (!d)
                return 0;
        for (struct dirent *de; (de = readdir(d));)
                n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
        closedir(d);
        return n;
}

static bool strv_eq(const struct strv *s, const char *const *want, size_t n) {
        if (s->n != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(s->v[i], want[i]) != 0)
                        return false;
        return true;
}

static struct payload_file pf(const char *path, const char *content) {
        return (struct payload_file) { .path = path, .content = content, .len = strlen(content) };
}

/* ---- the manifest directory ------------------------------------------------ */

Test(manifestdir, adds_updates_removes_and_leaves_foreign_files, .init = mk, .fini = rm) {
        char *dir = path_in(tmp, "etc/muster/manifests");
        struct manifestdir_changes ch;
        char err[512];

        struct payload_file r1[] = { pf("a.yaml", "kind: A\n"), pf("b.yaml", "kind: B\n"), pf("c.yaml", "kind: C\n") };
        cr_assert_eq(manifestdir_apply(dir, 1, r1, 3, &ch, err, sizeof err), 0, "%s", err);
        cr_assert(strv_eq(&ch.added, (const char *[]) { "a.yaml", "b.yaml", "c.yaml" }, 3));
        cr_assert_eq(ch.updated.n, 0);
        cr_assert_eq(ch.removed.n, 0);
        cr_assert_eq(ch.previous_revision, 0);
        manifestdir_changes_free(&ch);

        /* Someone else's file, and a file the admin put where a manifest goes. */
        cr_assert_eq(tu_write_file(dir, "local.yaml", "mine\n"), 0);
        cr_assert_eq(tu_write_file(dir, "e.yaml", "admin's e\n"), 0);

        struct payload_file r2[] = { pf("a.yaml", "kind: A\n"), pf("b.yaml", "kind: B2\n"), pf("d.yaml", "kind: D\n"),
                                     pf("e.yaml", "kind: E\n") };
        cr_assert_eq(manifestdir_apply(dir, 2, r2, 4, &ch, err, sizeof err), 0, "%s", err);
        cr_assert(strv_eq(&ch.added, (const char *[]) { "d.yaml", "e.yaml" }, 2));
        cr_assert(strv_eq(&ch.updated, (const char *[]) { "b.yaml" }, 1));
        cr_assert(strv_eq(&ch.removed, (const char *[]) { "c.yaml" }, 1));
        cr_assert_eq(ch.previous_revision, 1);
        manifestdir_changes_free(&ch);

        char *b = path_in(dir, "b.yaml"), *local = path_in(dir, "local.yaml"), *e = path_in(dir, "e.yaml");
        char *t = slurp(b, NULL);
        cr_assert_str_eq(t, "kind: B2\n");
        free(t);
        t = slurp(local, NULL);
        cr_assert_str_eq(t, "mine\n", "a file muster did not write is left alone");
        free(t);
        t = slurp(e, NULL);
        cr_assert_str_eq(t, "kind: E\n");
        free(t);
        cr_assert_not(exists(dir, "c.yaml"));
        struct stat st;
        cr_assert_eq(stat(b, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0644);

        /* The bookkeeping: revision and the files with their SHA-256. */
        char *book = path_in(dir, MANIFESTDIR_BOOKKEEPING);
        json_object *bk = json_object_from_file(book);
        cr_assert_not_null(bk);
        cr_assert_eq(json_object_get_int64(tu_json_get(bk, "revision")), 2);
        json_object *files = tu_json_get(bk, "files");
        cr_assert_eq(json_object_object_length(files), 4);
        uint8_t d[CRYPTO_SHA256_LEN];
        char hex[65];
        crypto_sha256("kind: B2\n", 9, d);
        crypto_hex(d, sizeof d, hex);
        cr_assert_str_eq(json_object_get_string(json_object_object_get(files, "b.yaml")), hex);
        cr_assert_null(json_object_object_get(files, "local.yaml"));
        json_object_put(bk);

        int64_t rev = -1;
        cr_assert_eq(manifestdir_applied_revision(dir, &rev), 0);
        cr_assert_eq(rev, 2);

        /* The same payload again changes nothing; an edited file is put back. */
        cr_assert_eq(tu_write_file(dir, "a.yaml", "edited\n"), 0);
        cr_assert_eq(manifestdir_apply(dir, 3, r2, 4, &ch, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ch.added.n, 0);
        cr_assert(strv_eq(&ch.updated, (const char *[]) { "a.yaml" }, 1));
        cr_assert_eq(ch.removed.n, 0);
        manifestdir_changes_free(&ch);

        /* An empty payload removes muster's files only. */
        cr_assert_eq(manifestdir_apply(dir, 4, NULL, 0, &ch, err, sizeof err), 0, "%s", err);
        cr_assert(strv_eq(&ch.removed, (const char *[]) { "a.yaml", "b.yaml", "d.yaml", "e.yaml" }, 4));
        manifestdir_changes_free(&ch);
        cr_assert_eq(count_entries(dir), 2, "local.yaml and the bookkeeping stay");
        cr_assert(exists(dir, "local.yaml"));

        free(b);
        free(local);
        free(e);
        free(book);
        free(dir);
}

Test(manifestdir, no_directory_means_revision_zero, .init = mk, .fini = rm) {
        char *dir = path_in(tmp, "nope");
        int64_t rev = 7;
        cr_assert_eq(manifestdir_applied_revision(dir, &rev), 0);
        cr_assert_eq(rev, 0);
        free(dir);
}

Test(manifestdir, refuses_names_and_bad_bookkeeping_without_writing, .init = mk, .fini = rm) {
        struct manifestdir_changes ch;
        char err[512];
        static const char *bad[] = { "../x.yaml", ".hidden.yaml", "a/b.yaml", "", ".", "..", "a\nb.yaml" };

        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct payload_file f[] = { pf("ok.yaml", "x\n"), pf(bad[i], "y\n") };
                cr_assert_eq(manifestdir_apply(tmp, 1, f, 2, &ch, err, sizeof err), -EINVAL, "%s", bad[i]);
                cr_assert(strstr(err, "not a plain file name"), "%s", err);
                cr_assert_eq(count_entries(tmp), 0, "nothing written for %s", bad[i]);
        }
        struct payload_file twice[] = { pf("a.yaml", "x\n"), pf("a.yaml", "y\n") };
        cr_assert_eq(manifestdir_apply(tmp, 1, twice, 2, &ch, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "twice"), "%s", err);
        cr_assert_eq(count_entries(tmp), 0);

        cr_assert_eq(tu_write_file(tmp, MANIFESTDIR_BOOKKEEPING, "{\"revision\":\"x\"}"), 0);
        struct payload_file ok[] = { pf("a.yaml", "x\n") };
        cr_assert_eq(manifestdir_apply(tmp, 1, ok, 1, &ch, err, sizeof err), -EBADMSG);
        cr_assert(strstr(err, MANIFESTDIR_BOOKKEEPING), "%s", err);
        cr_assert_not(exists(tmp, "a.yaml"));
        int64_t rev;
        cr_assert_eq(manifestdir_applied_revision(tmp, &rev), -EBADMSG);

        /* A bookkeeping naming paths outside the directory: never removed. */
        cr_assert_eq(tu_write_file(tmp, "outside.yaml", "keep\n"), 0);
        char *sub = path_in(tmp, "d");
        cr_assert_eq(tu_write_file(tmp, "d/" MANIFESTDIR_BOOKKEEPING,
                                   "{\"revision\":1,\"files\":{\"../outside.yaml\":\"00\",\".x\":\"00\"}}"), 0);
        cr_assert_eq(manifestdir_apply(sub, 2, ok, 1, &ch, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ch.removed.n, 0);
        manifestdir_changes_free(&ch);
        cr_assert(exists(tmp, "outside.yaml"));
        free(sub);
}

Test(manifestdir, stale_temporary_files_go_and_a_failure_half_way_keeps_the_record, .init = mk, .fini = rm) {
        struct manifestdir_changes ch;
        char err[512];

        /* What a crash in the middle of a write leaves. */
        cr_assert_eq(tu_write_file(tmp, MANIFESTDIR_TMP_PREFIX "a.yaml.123.0", "half"), 0);
        struct payload_file r1[] = { pf("a.yaml", "A\n") };
        cr_assert_eq(manifestdir_apply(tmp, 1, r1, 1, &ch, err, sizeof err), 0, "%s", err);
        manifestdir_changes_free(&ch);
        cr_assert_not(exists(tmp, MANIFESTDIR_TMP_PREFIX "a.yaml.123.0"));
        cr_assert_eq(count_entries(tmp), 2);

        /* Revision 2 adds b and c, but c cannot be written (a directory is
         * in the way): the step fails after b is written... */
        char *cdir = path_in(tmp, "c.yaml");
        cr_assert_eq(mkdir(cdir, 0755), 0);
        cr_assert_eq(tu_write_file(cdir, "x", "x"), 0);
        struct payload_file r2[] = { pf("a.yaml", "A\n"), pf("b.yaml", "B\n"), pf("c.yaml", "C\n") };
        cr_assert_lt(manifestdir_apply(tmp, 2, r2, 3, &ch, err, sizeof err), 0);
        cr_assert(strstr(err, "c.yaml"), "%s", err);
        cr_assert(exists(tmp, "b.yaml"));
        /* ... and the record still knows b is muster's, at the old revision. */
        int64_t rev;
        cr_assert_eq(manifestdir_applied_revision(tmp, &rev), 0);
        cr_assert_eq(rev, 1);
        char *book = path_in(tmp, MANIFESTDIR_BOOKKEEPING);
        json_object *bk = json_object_from_file(book);
        cr_assert(json_object_object_get_ex(tu_json_get(bk, "files"), "b.yaml", NULL));
        json_object_put(bk);
        cr_assert_eq(count_entries(tmp), 4, "a, b, c.yaml/ and the bookkeeping; no temporary file");

        /* So revision 3 without b removes it. */
        struct payload_file r3[] = { pf("a.yaml", "A\n") };
        cr_assert_eq(manifestdir_apply(tmp, 3, r3, 1, &ch, err, sizeof err), 0, "%s", err);
        cr_assert(strv_eq(&ch.removed, (const char *[]) { "b.yaml" }, 1), "c.yaml is a directory now: not muster's");
        manifestdir_changes_free(&ch);
        cr_assert_not(exists(tmp, "b.yaml"));
        cr_assert(exists(tmp, "c.yaml/x"), "a directory is never removed");
        free(cdir);
        free(book);
}

/* ---- args and targets ------------------------------------------------------- */

Test(install, parses_args) {
        struct install_args a;
        char err[256];
        json_object *o = json_tokener_parse("{\"mode\":\"install\",\"cluster_id\":\"" CLUSTER "\",\"revision\":3,"
                                            "\"payload_url\":\"/api/v2/clusters/" CLUSTER "/payload/3\",\"role\":\"master\","
                                            "\"installation_disk\":\"/dev/disk/by-id/x\"}");
        cr_assert_eq(install_args_parse(o, &a, err, sizeof err), 0, "%s", err);
        cr_assert_eq(a.mode, INSTALL_STEP_INSTALL);
        cr_assert_str_eq(a.cluster_id, CLUSTER);
        cr_assert_eq(a.revision, 3);
        cr_assert_str_eq(a.role, "master");
        cr_assert_str_eq(a.installation_disk, "/dev/disk/by-id/x");
        install_args_free(&a);
        json_object_put(o);

        o = json_tokener_parse("{\"mode\":\"apply\",\"cluster_id\":\"c\",\"revision\":1,\"payload_url\":\"/p\","
                               "\"installation_disk\":null}");
        cr_assert_eq(install_args_parse(o, &a, err, sizeof err), 0, "%s", err);
        cr_assert_eq(a.mode, INSTALL_STEP_APPLY);
        cr_assert_null(a.role);
        cr_assert_null(a.installation_disk);
        install_args_free(&a);
        json_object_put(o);

        static const struct {
                const char *json, *needle;
        } bad[] = {
                { "[]", "object" },
                { "{\"cluster_id\":\"c\",\"revision\":1,\"payload_url\":\"/p\"}", "args.mode" },
                { "{\"mode\":\"wipe\",\"cluster_id\":\"c\",\"revision\":1,\"payload_url\":\"/p\"}", "args.mode" },
                { "{\"mode\":\"install\",\"revision\":1,\"payload_url\":\"/p\"}", "args.cluster_id" },
                { "{\"mode\":\"install\",\"cluster_id\":\"c\",\"revision\":0,\"payload_url\":\"/p\"}", "args.revision" },
                { "{\"mode\":\"install\",\"cluster_id\":\"c\",\"revision\":\"1\",\"payload_url\":\"/p\"}", "args.revision" },
                { "{\"mode\":\"install\",\"cluster_id\":\"c\",\"revision\":1}", "args.payload_url" },
                { "{\"mode\":\"install\",\"cluster_id\":\"c\",\"revision\":1,\"payload_url\":\"http://evil/p\"}",
                  "args.payload_url" },
                { "{\"mode\":\"install\",\"cluster_id\":\"c\",\"revision\":1,\"payload_url\":\"//evil/p\"}",
                  "args.payload_url" },
                { "{\"mode\":\"install\",\"cluster_id\":\"c\",\"revision\":1,\"payload_url\":\"/p\","
                  "\"installation_disk\":\"sda\"}", "args.installation_disk" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                o = json_tokener_parse(bad[i].json);
                cr_assert_eq(install_args_parse(o, &a, err, sizeof err), -EINVAL, "%s", bad[i].json);
                cr_assert(strstr(err, bad[i].needle), "%s: %s", bad[i].json, err);
                install_args_free(&a);
                json_object_put(o);
        }
}

Test(install, classifies_targets, .init = mk, .fini = rm) {
        enum install_target_kind k;
        char *file = path_in(tmp, "disk.img"), *missing = path_in(tmp, "new.img"), *nodir = path_in(tmp, "no/x.img");
        cr_assert_eq(tu_write_file(tmp, "disk.img", "x"), 0);
        cr_assert_eq(install_target_classify(tmp, &k), 0);
        cr_assert_eq(k, INSTALL_TARGET_DIR);
        cr_assert_eq(install_target_classify(file, &k), 0);
        cr_assert_eq(k, INSTALL_TARGET_FILE);
        cr_assert_eq(install_target_classify(missing, &k), 0);
        cr_assert_eq(k, INSTALL_TARGET_FILE);
        cr_assert_not(exists(tmp, "new.img"), "classifying creates nothing");
        cr_assert_eq(install_target_classify(nodir, &k), -ENOENT);
        cr_assert_eq(install_target_classify("/dev/null", &k), -EINVAL);
        free(file);
        free(missing);
        free(nodir);
}

/* ---- images ---------------------------------------------------------------- */

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...) {
        char *cmd;
        va_list ap;
        va_start(ap, fmt);
        cr_assert(vasprintf(&cmd, fmt, ap) > 0);
        va_end(ap);
        int st = system(cmd);
        cr_assert_eq(st, 0, "%s -> %d", cmd, st);
        free(cmd);
}

/* A 32 MiB GPT image: partition 1 "efi" (no file system), partition 2
 * named part_name holding ext4 labelled fs_label. */
static char *make_image(const char *dir, const char *name, const char *part_name, const char *fs_label) {
        char *img = path_in(dir, name);
        sh("truncate -s %llu '%s'", (unsigned long long) IMG_SIZE, img);
        sh("printf 'label: gpt\\nstart=2048, size=8192, type=linux, name=\"efi\"\\n"
           "start=%d, size=%llu, type=linux, name=\"%s\"\\n' | sfdisk -q '%s'",
           ROOT_START_SECTOR, (unsigned long long) (IMG_SIZE / 512 - ROOT_START_SECTOR - 2048), part_name, img);
        sh("mkfs.ext4 -q -F -L '%s' -E offset=%llu '%s' %lluk >/dev/null", fs_label, (unsigned long long) ROOT_OFFSET,
           img, (unsigned long long) ((IMG_SIZE - ROOT_OFFSET - MiB) / 1024));
        return img;
}

static void sha_of_file(const char *path, char hex[65], uint64_t *size) {
        size_t len;
        char *data = slurp(path, &len);
        uint8_t d[CRYPTO_SHA256_LEN];
        cr_assert_not_null(data);
        crypto_sha256(data, len, d);
        crypto_hex(d, sizeof d, hex);
        *size = len;
        free(data);
}

Test(install, finds_the_root_partition_by_label_or_name, .init = mk, .fini = rm) {
        struct install_root root;
        char *img = make_image(tmp, "a.img", "rootpart", "root");

        cr_assert_eq(install_find_root(img, "root", &root), 0);
        cr_assert_eq(root.offset, ROOT_OFFSET);
        cr_assert_eq(root.size, (IMG_SIZE / 512 - ROOT_START_SECTOR - 2048) * 512);
        cr_assert_eq(root.number, 2);
        cr_assert_str_eq(root.fs_type, "ext4");
        cr_assert_str_eq(root.label, "root");
        cr_assert_str_eq(root.part_name, "rootpart");

        /* By GPT name when no file system carries the label. */
        cr_assert_eq(install_find_root(img, "rootpart", &root), 0);
        cr_assert_eq(root.offset, ROOT_OFFSET);
        cr_assert_str_eq(root.fs_type, "ext4");
        /* A partition with that name but no file system. */
        cr_assert_eq(install_find_root(img, "efi", &root), -EMEDIUMTYPE);
        cr_assert_eq(root.number, 1);
        cr_assert_eq(install_find_root(img, "nothing", &root), -ENOENT);
        char *none = path_in(tmp, "none");
        cr_assert_eq(install_find_root(none, "root", &root), -ENOENT);

        /* An image that is one file system. */
        char *whole = path_in(tmp, "whole.img");
        sh("truncate -s 16M '%s' && mkfs.ext4 -q -F -L root '%s' >/dev/null", whole, whole);
        cr_assert_eq(install_find_root(whole, "root", &root), 0);
        cr_assert_eq(root.offset, 0);
        cr_assert_eq(root.size, 16 * MiB);
        cr_assert_eq(root.number, 0);
        free(img);
        free(none);
        free(whole);
}

struct files_ctx {
        const struct payload_file *f;
        size_t n;
        char seen_dir[4096];
};

static int write_files(const char *dir, void *userdata) {
        struct files_ctx *c = userdata;
        struct manifestdir_changes ch;
        snprintf(c->seen_dir, sizeof c->seen_dir, "%s", dir);
        int r = manifestdir_apply(dir, 5, c->f, c->n, &ch, NULL, 0);
        manifestdir_changes_free(&ch);
        return r;
}

/* Mount the image's root read-only with mount(8) (not our loop code) and
 * return the text of etc/muster/manifests/<name>, or NULL. */
static char *read_back(const char *img, const char *name) {
        char *mnt = path_in(tmp, "readback");
        mkdir(mnt, 0700);
        sh("mount -o loop,ro,offset=%llu '%s' '%s'", (unsigned long long) ROOT_OFFSET, img, mnt);
        char *p;
        cr_assert(asprintf(&p, "%s/" INSTALL_MANIFEST_SUBDIR "/%s", mnt, name) > 0);
        char *t = slurp(p, NULL);
        sh("umount '%s'", mnt);
        free(p);
        free(mnt);
        return t;
}

static bool loop_attached_to(const char *img) {
        char *out = NULL;
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "losetup -j %s", img);
        int st = tu_runf(&out, NULL, "%s", cmd);
        bool r = st == 0 && out && out[0];
        free(out);
        return r;
}

Test(install, writes_manifests_into_a_file_target_through_a_loop_mount, .init = mk, .fini = rm) {
        char *img = make_image(tmp, "disk.img", "rootpart", "root");
        struct install_root root;
        char err[512] = "";
        struct payload_file f[] = { pf("0000_10_a.yaml", "kind: A\n"), pf("0000_20_b.yaml", "kind: B\n") };
        struct files_ctx c = { .f = f, .n = 2 };

        cr_assert_eq(install_find_root(img, "root", &root), 0);
        cr_assert_eq(install_with_root_dir(img, &root, write_files, &c, err, sizeof err), 0, "%s", err);
        cr_assert(strstr(c.seen_dir, "/" INSTALL_MANIFEST_SUBDIR), "%s", c.seen_dir);
        struct stat st;
        cr_assert_lt(stat(c.seen_dir, &st), 0, "the mount point is gone");
        cr_assert_not(loop_attached_to(img), "the loop device is detached");

        char *t = read_back(img, "0000_20_b.yaml");
        cr_assert_str_eq(t, "kind: B\n");
        free(t);
        t = read_back(img, MANIFESTDIR_BOOKKEEPING);
        cr_assert_not_null(t);
        cr_assert(strstr(t, "\"revision\":5"), "%s", t);
        free(t);
        /* The efi partition before it was not touched: still no file system. */
        cr_assert_eq(install_find_root(img, "efi", &root), -EMEDIUMTYPE);
        free(img);
}

Test(install, image_stream_checks_size_and_digest, .init = mk, .fini = rm) {
        struct install_image w;
        char err[512], hex[65];
        uint8_t d[CRYPTO_SHA256_LEN];
        const char *data = "0123456789abcdef";
        char *dst = path_in(tmp, "img");

        crypto_sha256(data, 16, d);
        crypto_hex(d, sizeof d, hex);

        /* Good: the file appears only at commit. */
        cr_assert_eq(install_image_begin(&w, INSTALL_TARGET_FILE, dst, 16, err, sizeof err), 0, "%s", err);
        cr_assert_eq(install_image_write(&w, data, 10), 0);
        cr_assert_not(exists(tmp, "img"));
        cr_assert_eq(install_image_write(&w, data + 10, 7), -EFBIG, "more than the payload says");
        cr_assert_eq(install_image_write(&w, data + 10, 6), 0);
        cr_assert_eq(install_image_commit(&w, hex, err, sizeof err), 0, "%s", err);
        size_t len;
        char *got = slurp(dst, &len);
        cr_assert_eq(len, 16);
        cr_assert_eq(memcmp(got, data, 16), 0);
        free(got);
        cr_assert_eq(count_entries(tmp), 1);

        /* Short. */
        cr_assert_eq(install_image_begin(&w, INSTALL_TARGET_DIR, dst, 16, err, sizeof err), 0, "%s", err);
        cr_assert_eq(install_image_write(&w, data, 15), 0);
        cr_assert_eq(install_image_commit(&w, hex, err, sizeof err), -EBADMSG);
        cr_assert(strstr(err, "15 bytes"), "%s", err);
        /* Wrong digest. */
        cr_assert_eq(install_image_begin(&w, INSTALL_TARGET_FILE, dst, 16, err, sizeof err), 0, "%s", err);
        cr_assert_eq(install_image_write(&w, "X123456789abcdef", 16), 0);
        cr_assert_eq(install_image_commit(&w, hex, err, sizeof err), -EBADMSG);
        cr_assert(strstr(err, "SHA-256"), "%s", err);
        got = slurp(dst, &len);
        cr_assert_eq(memcmp(got, data, 16), 0, "the earlier image stays as it was");
        free(got);
        /* Aborted. */
        cr_assert_eq(install_image_begin(&w, INSTALL_TARGET_FILE, dst, 16, err, sizeof err), 0, "%s", err);
        cr_assert_eq(install_image_write(&w, data, 4), 0);
        install_image_abort(&w);
        cr_assert_eq(count_entries(tmp), 1, "no temporary file is left");
        free(dst);
}

/* ---- whole steps, fed from memory ------------------------------------------ */

#define PAYLOAD_URL "/api/v2/clusters/" CLUSTER "/payload/%d"
#define IMAGE_URL "/api/v2/releases/4.16.0/os-image"
#define HOST "6d757374-6572-4071-8335-0000000000a1"
#define PULL_SECRET "{\"auths\":{\"registry.example.com\":{\"auth\":\"dTpw\"}}}"
#define SSH_KEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx0ZXN0a2V5 admin@example.com"

/* What the coordinator puts in a payload for HOST and one other host. */
static const struct strv NTP = { .v = (char *[]) { "ntp1.example.com", "[2001:db8::7b]:123", "192.0.2.123:1123", NULL }, .n = 3 };
static const struct payload_host HOSTS[] = {
        { .host_id = HOST, .role = "master", .hostname = "node-1", .ntp_sources = &NTP, .ssh_authorized_key = SSH_KEY },
        { .host_id = "6d757374-6572-4071-8335-0000000000a2", .role = "worker", .hostname = "node-2" },
};
static const struct payload_settings SETTINGS = {
        .cluster_name = "prod", .base_dns_domain = "example.com", .api_vip = "192.0.2.10",
        .ingress_vip = "192.0.2.11", .pull_secret = PULL_SECRET, .hosts = HOSTS, .n_hosts = 2,
};

struct feed {
        char *envelope;
        size_t envelope_len;
        char payload_url[256];
        const char *image_path;   /* the file served at IMAGE_URL */
        int fetches;
        int stages[16];
        int percents[16];
        size_t n_stages;
};

static int feed_payload(void *userdata, const char *path, size_t max, char **data, size_t *len, char *err,
                        size_t errlen) {
        struct feed *f = userdata;
        f->fetches++;
        if (strcmp(path, f->payload_url) != 0) {
                snprintf(err, errlen, "HTTP 404 (no payload at %s)", path);
                return -ENOENT;
        }
        if (f->envelope_len > max)
                return -EFBIG;
        *data = malloc(f->envelope_len + 1);
        memcpy(*data, f->envelope, f->envelope_len);
        (*data)[f->envelope_len] = '\0';
        *len = f->envelope_len;
        return 0;
}

static int feed_image(void *userdata, const char *url, uint64_t size, int (*sink)(void *, const void *, size_t),
                      void *sink_userdata, char *err, size_t errlen) {
        struct feed *f = userdata;
        (void) size;
        if (strcmp(url, IMAGE_URL) != 0) {
                snprintf(err, errlen, "HTTP 404 (no image at %s)", url);
                return -ENOENT;
        }
        int fd = open(f->image_path, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        static char buf[1 << 16];
        ssize_t k;
        int r = 0;
        while (r == 0 && (k = read(fd, buf, sizeof buf)) > 0)
                r = sink(sink_userdata, buf, (size_t) k);
        close(fd);
        return r;
}

static void feed_progress(void *userdata, enum install_stage stage, int percent, const char *info) {
        struct feed *f = userdata;
        (void) info;
        if (f->n_stages < 16) {
                f->stages[f->n_stages] = stage;
                f->percents[f->n_stages++] = percent;
        }
}

/* A signed envelope of revision rev carrying the given files (YAML) and,
 * unless NULL, a "deletions" member (owned, added as is). */
static char *envelope_with_deletions(const struct crypto_key *key, int rev, const char *image_sha, int64_t image_size,
                                     const char *const *names, const char *const *texts, size_t n,
                                     json_object *deletions, size_t *len) {
        struct manifest_list ml = { 0 };
        char err[256];
        for (size_t i = 0; i < n; i++)
                cr_assert_eq(manifest_parse_file(names[i], texts[i], strlen(texts[i]), &ml, err, sizeof err), 0, "%s", err);
        const struct manifest **inc = calloc(ml.n + 1, sizeof *inc);
        for (size_t i = 0; i < ml.n; i++)
                inc[i] = &ml.v[i];
        struct release_os_image img = { .sha256 = (char *) image_sha, .size = image_size, .root_label = "root" };
        struct strv caps = { 0 };
        json_object *p = payload_build(CLUSTER, rev, "4.16.0", IMAGE_URL, &img, &caps, inc, ml.n, &SETTINGS);
        cr_assert_not_null(p);
        if (deletions)
                json_object_object_add(p, "deletions", deletions);
        struct payload_signed s;
        cr_assert_eq(payload_sign(p, key, &s), 0);
        char *env = payload_envelope(CLUSTER, rev, s.digest, s.signature, s.canonical, s.len);
        cr_assert_not_null(env);
        *len = strlen(env);
        payload_signed_free(&s);
        json_object_put(p);
        free(inc);
        manifest_list_free(&ml);
        return env;
}

static char *envelope(const struct crypto_key *key, int rev, const char *image_sha, int64_t image_size,
                      const char *const *names, const char *const *texts, size_t n, size_t *len) {
        return envelope_with_deletions(key, rev, image_sha, image_size, names, texts, n, NULL, len);
}

static const char *const M_NAMES[] = { "0000_10_config.yaml", "0000_50_console.yaml" };
static const char *const M_TEXTS[] = {
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: muster\ndata:\n  a: \"1\"\n",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: console\n  namespace: muster\n",
};

struct world {
        struct crypto_key *key, *other;
        char *image;              /* the release's image */
        char sha[65];
        uint64_t size;
        struct feed feed;
        struct install_io io;
        struct install_options opts;
};

static void world_init(struct world *w, int rev) {
        memset(w, 0, sizeof *w);
        cr_assert_eq(crypto_key_generate(&w->key), 0);
        cr_assert_eq(crypto_key_generate(&w->other), 0);
        char *src = path_in(tmp, "release");
        mkdir(src, 0755);
        w->image = make_image(src, "os.img", "rootpart", "root");
        free(src);
        sha_of_file(w->image, w->sha, &w->size);
        w->feed.envelope = envelope(w->key, rev, w->sha, (int64_t) w->size, M_NAMES, M_TEXTS, 2, &w->feed.envelope_len);
        snprintf(w->feed.payload_url, sizeof w->feed.payload_url, PAYLOAD_URL, rev);
        w->feed.image_path = w->image;
        w->io = (struct install_io) { feed_payload, feed_image, feed_progress, &w->feed };
        w->opts = (struct install_options) { .coordinator_key = w->key, .host_id = HOST };
}

static void world_free(struct world *w) {
        crypto_key_free(w->key);
        crypto_key_free(w->other);
        free(w->image);
        free(w->feed.envelope);
}

static struct install_args args_for(const char *mode, int rev) {
        struct install_args a = { .mode = strcmp(mode, "install") == 0 ? INSTALL_STEP_INSTALL : INSTALL_STEP_APPLY,
                                  .cluster_id = strdup(CLUSTER), .revision = rev };
        cr_assert(asprintf(&a.payload_url, PAYLOAD_URL, rev) > 0);
        return a;
}

Test(install_step, into_a_directory, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *target = path_in(tmp, "target");
        mkdir(target, 0755);
        w.opts.target = target;
        struct install_args a = args_for("install", 1);
        struct install_outcome out;

        int r = install_execute(&w.opts, &a, &w.io, &out);
        cr_assert_eq(r, 0, "%s", out.error);
        cr_assert_not(out.reboot, "an install target never reboots");
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 1);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "manifests")), 2);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "root_partition.offset")), (int64_t) ROOT_OFFSET);
        cr_assert_str_eq(tu_jstr(out.output, "root_partition.fs_type"), "ext4");
        cr_assert_str_eq(tu_jstr(out.output, "root_partition.label"), "root");
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "root_partition.size")),
                     (int64_t) ((IMG_SIZE / 512 - ROOT_START_SECTOR - 2048) * 512));

        char hex[65];
        uint64_t size;
        char *img = path_in(target, INSTALL_DIR_IMAGE);
        sha_of_file(img, hex, &size);
        cr_assert_str_eq(hex, w.sha);
        char *cfg = path_in(target, INSTALL_MANIFEST_SUBDIR "/0000_10_config.yaml");
        char *t = slurp(cfg, NULL);
        cr_assert_str_eq(t, M_TEXTS[0], "the manifest's exact bytes");
        free(t);
        cr_assert(exists(target, INSTALL_MANIFEST_SUBDIR "/0000_50_console.yaml"));
        cr_assert(exists(target, INSTALL_MANIFEST_SUBDIR "/" MANIFESTDIR_BOOKKEEPING));

        /* Progress: starting 0, writing-image from 0, writing-payload at the
         * image's share of all the bytes, rebooting at 100; "done" is the
         * coordinator's (issue 13, item 6). */
        cr_assert_geq(w.feed.n_stages, 4);
        cr_assert_eq(w.feed.stages[0], INSTALL_STAGE_STARTING);
        cr_assert_eq(w.feed.percents[0], 0);
        cr_assert_eq(w.feed.stages[1], INSTALL_STAGE_WRITING_IMAGE);
        cr_assert_eq(w.feed.percents[1], 0);
        size_t n = w.feed.n_stages;
        uint64_t manifest_bytes = strlen(M_TEXTS[0]) + strlen(M_TEXTS[1]);
        cr_assert_eq(w.feed.stages[n - 2], INSTALL_STAGE_WRITING_PAYLOAD);
        cr_assert_eq(w.feed.percents[n - 2], (int) (w.size * 100.0 / (double) (w.size + manifest_bytes)),
                     "%d%% for %llu image bytes of %llu", w.feed.percents[n - 2], (unsigned long long) w.size,
                     (unsigned long long) (w.size + manifest_bytes));
        cr_assert_lt(w.feed.percents[n - 2], 100);
        cr_assert_eq(w.feed.stages[n - 1], INSTALL_STAGE_REBOOTING);
        cr_assert_eq(w.feed.percents[n - 1], 100);
        for (size_t i = 0; i < n; i++)
                cr_assert_neq(w.feed.stages[i], INSTALL_STAGE_DONE, "the agent never says done");
        for (size_t i = 1; i < n; i++)
                cr_assert_geq(w.feed.percents[i], w.feed.percents[i - 1], "percent never goes back");
        install_outcome_free(&out);

        /* Day 2 in the same directory (run mode with a DIR target): revision 2
         * drops the console and changes the config. */
        static const char *const names2[] = { "0000_10_config.yaml", "0000_60_new.yaml" };
        static const char *const texts2[] = {
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: muster\ndata:\n  a: \"2\"\n",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\n",
        };
        free(w.feed.envelope);
        w.feed.envelope = envelope(w.key, 2, w.sha, (int64_t) w.size, names2, texts2, 2, &w.feed.envelope_len);
        snprintf(w.feed.payload_url, sizeof w.feed.payload_url, PAYLOAD_URL, 2);
        struct install_args a2 = args_for("apply", 2);
        w.feed.n_stages = 0;
        cr_assert_eq(install_execute(&w.opts, &a2, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 2);
        cr_assert_str_eq(tu_jstr(out.output, "added.0"), "0000_60_new.yaml");
        cr_assert_str_eq(tu_jstr(out.output, "updated.0"), "0000_10_config.yaml");
        cr_assert_str_eq(tu_jstr(out.output, "removed.0"), "0000_50_console.yaml");
        cr_assert_eq(w.feed.n_stages, 0, "apply reports no install progress");
        install_outcome_free(&out);
        cr_assert_not(exists(target, INSTALL_MANIFEST_SUBDIR "/0000_50_console.yaml"));

        /* Revision 1 again: a no-op that says what is applied. */
        int fetches = w.feed.fetches;
        struct install_args a1 = args_for("apply", 1);
        snprintf(w.feed.payload_url, sizeof w.feed.payload_url, PAYLOAD_URL, 1);
        free(w.feed.envelope);
        w.feed.envelope = envelope(w.key, 1, w.sha, (int64_t) w.size, M_NAMES, M_TEXTS, 2, &w.feed.envelope_len);
        cr_assert_eq(install_execute(&w.opts, &a1, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 2);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "added")), 0);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "removed")), 0);
        cr_assert_geq(w.feed.fetches, fetches);
        install_outcome_free(&out);
        cr_assert(exists(target, INSTALL_MANIFEST_SUBDIR "/0000_60_new.yaml"));

        install_args_free(&a);
        install_args_free(&a1);
        install_args_free(&a2);
        free(img);
        free(cfg);
        free(target);
        world_free(&w);
}

Test(install_step, into_a_file, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *target = path_in(tmp, "disk.img");
        w.opts.target = target;
        struct install_args a = args_for("install", 1);
        struct install_outcome out;

        cr_assert_eq(install_execute(&w.opts, &a, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "root_partition.partition_number")), 2);
        cr_assert_str_eq(tu_jstr(out.output, "root_partition.partition_name"), "rootpart");
        install_outcome_free(&out);
        cr_assert_not(loop_attached_to(target));

        char *t = read_back(target, "0000_50_console.yaml");
        cr_assert_str_eq(t, M_TEXTS[1]);
        free(t);
        t = read_back(target, "../../hostname");
        cr_assert_str_eq(t, "node-1\n", "the host's settings are in the image's root file system");
        free(t);

        /* Apply revision 2 into the file's root partition. */
        static const char *const names2[] = { "0000_10_config.yaml" };
        free(w.feed.envelope);
        w.feed.envelope = envelope(w.key, 2, w.sha, (int64_t) w.size, names2, M_TEXTS, 1, &w.feed.envelope_len);
        snprintf(w.feed.payload_url, sizeof w.feed.payload_url, PAYLOAD_URL, 2);
        struct install_args a2 = args_for("apply", 2);
        cr_assert_eq(install_execute(&w.opts, &a2, &w.io, &out), 0, "%s", out.error);
        cr_assert_str_eq(tu_jstr(out.output, "removed.0"), "0000_50_console.yaml");
        install_outcome_free(&out);
        t = read_back(target, "0000_50_console.yaml");
        cr_assert_null(t);
        t = read_back(target, MANIFESTDIR_BOOKKEEPING);
        cr_assert(strstr(t, "\"revision\":2"), "%s", t);
        free(t);
        cr_assert_not(loop_attached_to(target));

        install_args_free(&a);
        install_args_free(&a2);
        free(target);
        world_free(&w);
}

/* Every refusal leaves the targets as they were. */
Test(install_step, refuses_bad_payloads_and_writes_nothing, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *dir = path_in(tmp, "target"), *file = path_in(tmp, "disk.img");
        mkdir(dir, 0755);
        struct install_args a = args_for("install", 1);
        struct install_outcome out;
        char *good = w.feed.envelope;
        size_t good_len = w.feed.envelope_len;

        /* One changed byte inside the signed payload text. */
        char *changed = strdup(good);
        char *p = strstr(changed, "ConfigMap");
        cr_assert_not_null(p);
        p[0] = 'D';
        /* The envelope of another key. */
        size_t other_len;
        char *other = envelope(w.other, 1, w.sha, (int64_t) w.size, M_NAMES, M_TEXTS, 2, &other_len);
        /* A good envelope of revision 2, served where 1 is expected. */
        size_t rev2_len;
        char *rev2 = envelope(w.key, 2, w.sha, (int64_t) w.size, M_NAMES, M_TEXTS, 2, &rev2_len);
        /* An image digest that is not the image's. */
        size_t badimg_len;
        char *badimg = envelope(w.key, 1, "0000000000000000000000000000000000000000000000000000000000000000",
                                (int64_t) w.size, M_NAMES, M_TEXTS, 2, &badimg_len);
        size_t shortimg_len;
        char *shortimg = envelope(w.key, 1, w.sha, (int64_t) w.size - 1, M_NAMES, M_TEXTS, 2, &shortimg_len);

        static const char *const targets[] = { "dir", "file" };
        for (size_t t = 0; t < 2; t++) {
                w.opts.target = t == 0 ? dir : file;
                struct {
                        char *env;
                        size_t len;
                        const char *needle;
                } cases[] = {
                        { changed, strlen(changed), INSTALL_REFUSED_PREFIX "payload digest does not match" },
                        { other, other_len, INSTALL_REFUSED_PREFIX },
                        { rev2, rev2_len, INSTALL_REFUSED_PREFIX },
                        { "{\"not\":\"an envelope\"}", 21, INSTALL_REFUSED_PREFIX },
                        { badimg, badimg_len, "SHA-256" },
                        { shortimg, shortimg_len, "larger than" },
                };
                for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                        w.feed.envelope = cases[i].env;
                        w.feed.envelope_len = cases[i].len;
                        w.feed.n_stages = 0;
                        int r = install_execute(&w.opts, &a, &w.io, &out);
                        cr_assert_lt(r, 0, "%s case %zu accepted", targets[t], i);
                        cr_assert(strstr(out.error, cases[i].needle), "%s case %zu: \"%s\" lacks \"%s\"", targets[t], i,
                                  out.error, cases[i].needle);
                        cr_assert_null(out.output);
                        cr_assert_eq(count_entries(dir), 0, "%s case %zu wrote into the directory", targets[t], i);
                        cr_assert_not(exists(tmp, "disk.img"), "%s case %zu created the file target", targets[t], i);
                        cr_assert_eq(count_entries(tmp), 2, "only release/ and target/ in %s", tmp);
                        if (i < 4)
                                for (size_t k = 0; k < w.feed.n_stages; k++)
                                        cr_assert_eq(w.feed.stages[k], INSTALL_STAGE_STARTING,
                                                     "a refused payload gets no further than starting");
                        install_outcome_free(&out);
                }
        }
        /* The other key's envelope says which check failed. */
        w.feed.envelope = other;
        w.feed.envelope_len = other_len;
        install_execute(&w.opts, &a, &w.io, &out);
        cr_assert(strstr(out.error, "signature"), "%s", out.error);
        w.feed.envelope = rev2;
        w.feed.envelope_len = rev2_len;
        install_execute(&w.opts, &a, &w.io, &out);
        cr_assert(strstr(out.error, "revision"), "%s", out.error);

        /* No key: refused before anything is fetched. */
        w.feed.envelope = good;
        w.feed.envelope_len = good_len;
        int fetches = w.feed.fetches;
        struct install_options nokey = { .target = dir };
        cr_assert_eq(install_execute(&nokey, &a, &w.io, &out), -ENOKEY);
        cr_assert_str_eq(out.error, INSTALL_ERR_NO_KEY);
        cr_assert_eq(w.feed.fetches, fetches);

        /* No target and no disk. */
        struct install_options notarget = { .coordinator_key = w.key };
        cr_assert_lt(install_execute(&notarget, &a, &w.io, &out), 0);
        cr_assert(strstr(out.error, "no installation disk"), "%s", out.error);
        /* A disk that is not a block device: refused, never written. */
        struct install_args ad = args_for("install", 1);
        ad.installation_disk = strdup(file);
        cr_assert_eq(tu_write_file(tmp, "disk.img", "not a disk"), 0);
        cr_assert_lt(install_execute(&notarget, &ad, &w.io, &out), 0);
        cr_assert(strstr(out.error, "is not a block device"), "%s", out.error);
        char *t = slurp(file, NULL);
        cr_assert_str_eq(t, "not a disk");
        free(t);

        /* Finally the good one works in the same directory. */
        w.opts.target = dir;
        cr_assert_eq(install_execute(&w.opts, &a, &w.io, &out), 0, "%s", out.error);
        install_outcome_free(&out);

        free(changed);
        free(other);
        free(rev2);
        free(badimg);
        free(shortimg);
        free(dir);
        free(file);
        install_args_free(&a);
        install_args_free(&ad);
        world_free(&w);
}

/* The host's part of the payload reaches the files a systemd host reads:
 * its own part (not the other host's), the cluster's settings, keys added
 * to what the image had, secrets private. */
Test(install_step, host_settings_reach_the_target, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *target = path_in(tmp, "target");
        mkdir(target, 0755);
        cr_assert_eq(tu_write_file(tmp, "target/keep", ""), 0);
        sh("mkdir -p '%s/root/.ssh' && chmod 0755 '%s/root/.ssh' && printf 'ssh-rsa AAAAold old@image' > "
           "'%s/root/.ssh/authorized_keys'", target, target, target);
        w.opts.target = target;
        struct install_args a = args_for("install", 1);
        struct install_outcome out;

        cr_assert_eq(install_execute(&w.opts, &a, &w.io, &out), 0, "%s", out.error);
        cr_assert_str_eq(tu_jstr(out.output, "host_files.0"), "/etc/hostname");
        json_object *files = tu_json_get(out.output, "host_files");
        cr_assert_eq(json_object_array_length(files), 7, "%s", json_object_to_json_string(files));

        struct {
                const char *rel, *want;
                mode_t mode;
        } expect[] = {
                { "etc/hostname", "node-1\n", 0644 },
                { "etc/muster/role", "master\n", 0644 },
                { "etc/systemd/timesyncd.conf.d/50-muster.conf",
                  "# Written by muster-agent: the NTP sources of the host's infra-env.\n"
                  "# left out: 192.0.2.123:1123 (timesyncd takes no port)\n"
                  "[Time]\nNTP=ntp1.example.com 2001:db8::7b\n", 0644 },
                { "root/.ssh/authorized_keys", "ssh-rsa AAAAold old@image\n" SSH_KEY "\n", 0600 },
                { "etc/muster/pull-secret.json", PULL_SECRET, 0600 },
                { "etc/crio/crio.conf.d/50-muster-pull-secret.conf",
                  "# Written by muster-agent: CRI-O pulls with the cluster's pull secret.\n"
                  "[crio.image]\nglobal_auth_file = \"/etc/muster/pull-secret.json\"\n", 0644 },
        };
        for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
                char *p = path_in(target, expect[i].rel);
                char *got = slurp(p, NULL);
                cr_assert_not_null(got, "%s was not written", expect[i].rel);
                cr_assert_str_eq(got, expect[i].want, "%s", expect[i].rel);
                struct stat st;
                cr_assert_eq(lstat(p, &st), 0);
                cr_assert(S_ISREG(st.st_mode));
                cr_assert_eq(st.st_mode & 07777, expect[i].mode, "%s has mode %o", expect[i].rel, st.st_mode & 07777);
                free(got);
                free(p);
        }
        char *ssh = path_in(target, "root/.ssh");
        struct stat st;
        cr_assert_eq(stat(ssh, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0700, "/root/.ssh is private");
        free(ssh);

        char *envp = path_in(target, "etc/muster/host.env");
        char *env = slurp(envp, NULL);
        static const char *const lines[] = {
                "\nMUSTER_HOST_ID=" HOST "\n", "\nMUSTER_ROLE=master\n", "\nMUSTER_HOSTNAME=node-1\n",
                "\nMUSTER_CLUSTER_ID=" CLUSTER "\n", "\nMUSTER_CLUSTER_NAME=prod\n", "\nMUSTER_BASE_DOMAIN=example.com\n",
                "\nMUSTER_API_VIP=192.0.2.10\n", "\nMUSTER_INGRESS_VIP=192.0.2.11\n",
                "\nMUSTER_PULL_SECRET_FILE=/etc/muster/pull-secret.json\n",
        };
        for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
                cr_assert(strstr(env, lines[i]), "host.env lacks %s:\n%s", lines[i], env);
        cr_assert_null(strstr(env, "node-2"), "another host's settings");
        free(env);
        free(envp);
        install_outcome_free(&out);

        /* Installed again, nothing doubles: the key is there once. */
        cr_assert_eq(install_execute(&w.opts, &a, &w.io, &out), 0, "%s", out.error);
        install_outcome_free(&out);
        char *kp = path_in(target, "root/.ssh/authorized_keys");
        char *keys = slurp(kp, NULL);
        cr_assert_str_eq(keys, "ssh-rsa AAAAold old@image\n" SSH_KEY "\n");
        free(keys);
        free(kp);

        install_args_free(&a);
        free(target);
        world_free(&w);
}

/* A host the payload says nothing about installs nothing; an image whose
 * /root/.ssh leads elsewhere is not followed. */
Test(install_step, host_settings_refusals, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *target = path_in(tmp, "target");
        mkdir(target, 0755);
        w.opts.target = target;
        struct install_args a = args_for("install", 1);
        struct install_outcome out;

        w.opts.host_id = "6d757374-6572-4071-8335-0000000000ff";
        cr_assert_lt(install_execute(&w.opts, &a, &w.io, &out), 0);
        cr_assert(strstr(out.error, INSTALL_REFUSED_PREFIX "payload carries no settings for host "
                                    "6d757374-6572-4071-8335-0000000000ff"), "%s", out.error);
        cr_assert_eq(count_entries(target), 0, "nothing written for a host the payload does not know");
        install_outcome_free(&out);

        w.opts.host_id = HOST;
        char *outside = path_in(tmp, "outside");
        mkdir(outside, 0755);
        sh("mkdir -p '%s/root' && ln -s '%s' '%s/root/.ssh'", target, outside, target);
        cr_assert_lt(install_execute(&w.opts, &a, &w.io, &out), 0);
        cr_assert(strstr(out.error, "/root/.ssh"), "%s", out.error);
        cr_assert_eq(count_entries(outside), 0, "the symlink was followed");
        install_outcome_free(&out);

        install_args_free(&a);
        free(outside);
        free(target);
        world_free(&w);
}

Test(install_step, node_mode_applies_only, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 3);
        char *mdir = path_in(tmp, "root/etc/muster/manifests");
        struct install_options node = { .coordinator_key = w.key, .node = true, .manifest_dir = mdir };
        struct install_outcome out;

        struct install_args inst = args_for("install", 3);
        cr_assert_lt(install_execute(&node, &inst, &w.io, &out), 0);
        cr_assert(strstr(out.error, "does not install"), "%s", out.error);
        cr_assert_eq(w.feed.fetches, 0);

        struct install_args a = args_for("apply", 3);
        cr_assert_eq(install_execute(&node, &a, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 3);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "added")), 2);
        install_outcome_free(&out);
        cr_assert(exists(mdir, "0000_50_console.yaml"));
        cr_assert_eq(count_entries(tmp), 2, "no image in node mode: release/ and root/ only");

        /* Applied already: no fetch at all. */
        int fetches = w.feed.fetches;
        cr_assert_eq(install_execute(&node, &a, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 3);
        cr_assert_eq(w.feed.fetches, fetches);
        install_outcome_free(&out);

        /* A bad payload for a newer revision leaves the directory alone. */
        struct install_args a4 = args_for("apply", 4);
        snprintf(w.feed.payload_url, sizeof w.feed.payload_url, PAYLOAD_URL, 4);
        free(w.feed.envelope);
        w.feed.envelope = envelope(w.other, 4, w.sha, (int64_t) w.size, M_NAMES, M_TEXTS, 1, &w.feed.envelope_len);
        cr_assert_lt(install_execute(&node, &a4, &w.io, &out), 0);
        cr_assert(strstr(out.error, INSTALL_REFUSED_PREFIX), "%s", out.error);
        cr_assert(exists(mdir, "0000_50_console.yaml"));
        int64_t rev;
        cr_assert_eq(manifestdir_applied_revision(mdir, &rev), 0);
        cr_assert_eq(rev, 3);

        /* Run mode without a target has nowhere to apply to. */
        struct install_options run = { .coordinator_key = w.key };
        cr_assert_lt(install_execute(&run, &a4, &w.io, &out), 0);
        cr_assert(strstr(out.error, "muster-agent node"), "%s", out.error);

        install_args_free(&inst);
        install_args_free(&a);
        install_args_free(&a4);
        free(mdir);
        world_free(&w);
}

/* Issue 12, item 13: the image download's deadline, scaled to the image. */
Test(install, image_deadline_scales_with_the_size) {
        struct install_options o = { 0 };
        cr_assert_eq(install_image_deadline_ms(NULL, 0), INSTALL_IMAGE_DEADLINE_S * INT64_C(1000));
        cr_assert_eq(install_image_deadline_ms(&o, 6 << 20), (INSTALL_IMAGE_DEADLINE_S + 6) * INT64_C(1000));
        cr_assert_eq(install_image_deadline_ms(&o, UINT64_C(4) << 30), (INSTALL_IMAGE_DEADLINE_S + 4096) * INT64_C(1000));
        o.image_deadline_s = 60;
        cr_assert_eq(install_image_deadline_ms(&o, 10 << 20), 70 * INT64_C(1000));
}

/* Issue 16: a node apply leaves alone a Helm release that an out-of-band
 * file in the manifest directory holds (muster's HelmChart for it is not
 * written, and muster's own earlier copy goes), says so in "skipped", and
 * lists every out-of-band object in "found", also when it has nothing to do. */
Test(install_step, node_apply_leaves_out_of_band_helm_releases_alone, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *mdir = path_in(tmp, "root/etc/muster/manifests");
        struct install_options node = { .coordinator_key = w.key, .node = true, .manifest_dir = mdir };
        struct install_outcome out;
        static const char *const names[] = { "0000_10_config.yaml", "0000_70_helm.yaml" };
        static const char *const texts[] = {
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: muster\n",
                "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: traefik\n  namespace: kube-system\n"
                "spec:\n  chart: traefik\n"
                "---\n"
                "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: cert-manager\n  namespace: kube-system\n"
                "spec:\n  targetNamespace: cert-manager\n",
        };

        /* Revision 1 into an empty directory: nothing found, nothing skipped. */
        free(w.feed.envelope);
        w.feed.envelope = envelope(w.key, 1, w.sha, (int64_t) w.size, names, texts, 2, &w.feed.envelope_len);
        struct install_args a1 = args_for("apply", 1);
        cr_assert_eq(install_execute(&node, &a1, &w.io, &out), 0, "%s", out.error);
        tu_assert_join(tu_json_get(out.output, "added"), NULL,
                       "0000_10_config.yaml,0000_70_helm.0.yaml,0000_70_helm.1.yaml");
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "found")), 0);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "skipped")), 0);
        cr_assert_null(tu_json_get(out.output, "found_truncated"));
        install_outcome_free(&out);

        /* Someone else's files: the same traefik release (metadata.namespace,
         * no targetNamespace), a cert-manager release in another namespace
         * than muster's, and a ConfigMap. */
        static const char *const local_traefik =
                "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: traefik\n  namespace: kube-system\n"
                "spec:\n  chart: https://example.com/traefik.tgz\n";
        cr_assert_eq(tu_write_file(mdir, "local-traefik.yaml", local_traefik), 0);
        cr_assert_eq(tu_write_file(mdir, "local-cert.yaml",
                                   "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata:\n  name: cert-manager\n"
                                   "  namespace: kube-system\n"),
                     0);
        cr_assert_eq(tu_write_file(mdir, "local-cm.json",
                                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}"),
                     0);

        free(w.feed.envelope);
        w.feed.envelope = envelope(w.key, 2, w.sha, (int64_t) w.size, names, texts, 2, &w.feed.envelope_len);
        snprintf(w.feed.payload_url, sizeof w.feed.payload_url, PAYLOAD_URL, 2);
        struct install_args a2 = args_for("apply", 2);
        cr_assert_eq(install_execute(&node, &a2, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 2);
        tu_assert_join(tu_json_get(out.output, "removed"), NULL, "0000_70_helm.0.yaml");
        tu_assert_join(tu_json_get(out.output, "found"), "file", "local-cert.yaml,local-cm.json,local-traefik.yaml");
        tu_assert_join(tu_json_get(out.output, "found"), "release_namespace", "kube-system,?,kube-system");
        json_object *skipped = tu_json_get(out.output, "skipped");
        cr_assert_eq(json_object_array_length(skipped), 1);
        cr_assert_str_eq(tu_jstr(skipped, "0.path"), "0000_70_helm.0.yaml");
        cr_assert_str_eq(tu_jstr(skipped, "0.name"), "traefik");
        cr_assert_str_eq(tu_jstr(skipped, "0.namespace"), "kube-system");
        cr_assert_str_eq(tu_jstr(skipped, "0.conflict_file"), "local-traefik.yaml");
        cr_assert_str_eq(tu_jstr(skipped, "0.reason"),
                         "an out-of-band HelmChart for release kube-system/traefik is in local-traefik.yaml; left alone");
        cr_assert_null(tu_json_get(out.output, "found_truncated"));
        install_outcome_free(&out);
        cr_assert_not(exists(mdir, "0000_70_helm.0.yaml"), "muster's copy of the release is gone");
        cr_assert(exists(mdir, "0000_70_helm.1.yaml"));
        char *p = path_in(mdir, "local-traefik.yaml");
        char *t = slurp(p, NULL);
        cr_assert_str_eq(t, local_traefik, "the out-of-band file is untouched");
        free(t);
        free(p);

        /* Applied already: still says what it found. */
        cr_assert_eq(install_execute(&node, &a2, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 2);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "found")), 3);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "skipped")), 0);
        install_outcome_free(&out);

        install_args_free(&a1);
        install_args_free(&a2);
        free(mdir);
        world_free(&w);
}

/* A payload file whose name a file muster did not write already has: that
 * file is never written over; the skip is said. */
Test(install_step, node_apply_never_writes_over_a_file_it_did_not_write, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *mdir = path_in(tmp, "root/etc/muster/manifests");
        struct install_options node = { .coordinator_key = w.key, .node = true, .manifest_dir = mdir };
        struct install_outcome out;
        static const char *const names[] = { "0000_10_config.yaml", "9500_addon_tools.yaml" };
        static const char *const texts[] = {
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: muster\n",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tools\n  namespace: muster\n",
        };
        static const char mine[] = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: mine\n";
        cr_assert_eq(tu_write_file(mdir, "9500_addon_tools.yaml", mine), 0);
        free(w.feed.envelope);
        w.feed.envelope = envelope(w.key, 1, w.sha, (int64_t) w.size, names, texts, 2, &w.feed.envelope_len);
        struct install_args a1 = args_for("apply", 1);
        cr_assert_eq(install_execute(&node, &a1, &w.io, &out), 0, "%s", out.error);
        tu_assert_join(tu_json_get(out.output, "added"), NULL, "0000_10_config.yaml");
        json_object *skipped = tu_json_get(out.output, "skipped");
        cr_assert_eq(json_object_array_length(skipped), 1);
        cr_assert_str_eq(tu_jstr(skipped, "0.path"), "9500_addon_tools.yaml");
        cr_assert(strstr(tu_jstr(skipped, "0.reason"), "muster did not write"), "%s", tu_jstr(skipped, "0.reason"));
        install_outcome_free(&out);
        char *p = path_in(mdir, "9500_addon_tools.yaml");
        char *t = slurp(p, NULL);
        cr_assert_str_eq(t, mine, "untouched");
        free(t);
        free(p);
        install_args_free(&a1);
        free(mdir);
        world_free(&w);
}


/* Issue 17: a payload's deletions remove the named objects from the
 * out-of-band files of a node's manifest directory (the rest of a file kept
 * byte for byte), "deleted" says which and "found" what is left; a repeat
 * apply deletes nothing more; malformed deletions refuse the payload before
 * anything is written. */
Test(install_step, node_apply_deletes_the_out_of_band_objects_the_payload_names, .init = mk, .fini = rm) {
        struct world w;
        world_init(&w, 1);
        char *mdir = path_in(tmp, "root/etc/muster/manifests");
        struct install_options node = { .coordinator_key = w.key, .node = true, .manifest_dir = mdir };
        struct install_outcome out;

        struct install_args a1 = args_for("apply", 1);
        cr_assert_eq(install_execute(&node, &a1, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "found")), 0);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "deleted")), 0);
        install_outcome_free(&out);

        /* Operands made on the cluster: a Database and a ConfigMap in one file. */
        static const char db[] = "# made with kubectl\napiVersion: db.example.com/v1\nkind: Database\nmetadata:\n"
                                 "  name: orders\n  namespace: app\nspec:\n  size: 3\n";
        static const char cm[] = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: orders-settings\n"
                                 "  namespace: app\ndata:\n  a: \"1\"\n";
        char both[512];
        snprintf(both, sizeof both, "%s%s", db, cm);
        cr_assert_eq(tu_write_file(mdir, "operands.yaml", both), 0);

        const struct payload_deletion del[] = {
                { .group = "db.example.com", .kind = "Database", .namespace = "app", .name = "orders" },
                { .group = "db.example.com", .kind = "Database", .namespace = "app", .name = "gone-already" },
        };
        free(w.feed.envelope);
        w.feed.envelope = envelope_with_deletions(w.key, 2, w.sha, (int64_t) w.size, M_NAMES, M_TEXTS, 2,
                                                  payload_deletions_to_json(del, 2), &w.feed.envelope_len);
        snprintf(w.feed.payload_url, sizeof w.feed.payload_url, PAYLOAD_URL, 2);
        struct install_args a2 = args_for("apply", 2);
        cr_assert_eq(install_execute(&node, &a2, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 2);
        json_object *deleted = tu_json_get(out.output, "deleted");
        cr_assert_str_eq(json_object_to_json_string_ext(deleted, JSON_C_TO_STRING_PLAIN),
                         "[{\"file\":\"operands.yaml\",\"group\":\"db.example.com\",\"kind\":\"Database\","
                         "\"namespace\":\"app\",\"name\":\"orders\"}]");
        tu_assert_join(tu_json_get(out.output, "found"), "file", "operands.yaml");
        tu_assert_join(tu_json_get(out.output, "found"), "kind", "ConfigMap");
        tu_assert_join(tu_json_get(out.output, "found"), "name", "orders-settings");
        install_outcome_free(&out);
        char *p = path_in(mdir, "operands.yaml");
        size_t len;
        char *t = tu_read_file(p, &len);
        cr_assert_not_null(t);
        cr_assert_eq(len, strlen(cm));
        cr_assert_str_eq(t, cm, "the ConfigMap stays, byte for byte");
        free(t);
        cr_assert(exists(mdir, "0000_10_config.yaml") && exists(mdir, "0000_50_console.yaml"), "muster's files stay");

        /* Applied already: nothing more is deleted. */
        cr_assert_eq(install_execute(&node, &a2, &w.io, &out), 0, "%s", out.error);
        cr_assert_eq(json_object_get_int64(tu_json_get(out.output, "applied_revision")), 2);
        cr_assert_eq(json_object_array_length(tu_json_get(out.output, "deleted")), 0);
        tu_assert_join(tu_json_get(out.output, "found"), "kind", "ConfigMap");
        install_outcome_free(&out);
        t = tu_read_file(p, NULL);
        cr_assert_str_eq(t, cm);
        free(t);

        /* Malformed deletions: refused, nothing written. */
        cr_assert_eq(tu_write_file(mdir, "more.yaml", db), 0);
        free(w.feed.envelope);
        w.feed.envelope = envelope_with_deletions(w.key, 3, w.sha, (int64_t) w.size, M_NAMES, M_TEXTS, 1,
                                                  json_tokener_parse("[{\"group\":\"db.example.com\",\"kind\":"
                                                                     "\"Database\",\"namespace\":\"app\"}]"),
                                                  &w.feed.envelope_len);
        snprintf(w.feed.payload_url, sizeof w.feed.payload_url, PAYLOAD_URL, 3);
        struct install_args a3 = args_for("apply", 3);
        cr_assert_lt(install_execute(&node, &a3, &w.io, &out), 0);
        cr_assert_str_eq(out.error, INSTALL_REFUSED_PREFIX "deletion 0 has no \"name\"");
        install_outcome_free(&out);
        int64_t rev;
        cr_assert_eq(manifestdir_applied_revision(mdir, &rev), 0);
        cr_assert_eq(rev, 2);
        cr_assert(exists(mdir, "0000_50_console.yaml"), "revision 3 drops it; not applied");
        char *more = path_in(mdir, "more.yaml");
        t = tu_read_file(more, NULL);
        cr_assert_str_eq(t, db, "untouched");
        free(t);

        free(more);
        free(p);
        install_args_free(&a1);
        install_args_free(&a2);
        install_args_free(&a3);
        free(mdir);
        world_free(&w);
}
