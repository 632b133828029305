/* Reclaim on disk: the discovery boot entry and GRUB's next_entry written
 * into a temporary boot folder (read back with grub-editenv), the
 * environment block's edge cases, and wipes of 64 MiB files made disks by
 * sfdisk, mkfs.ext4 and mkswap (GPT, DOS, a bare file system), checked with
 * blkid and sfdisk and byte for byte against a copy. Regular files in a
 * temporary folder only: no real disk, no loop device. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reclaim.h"
#include "testutil.h"

#define MiB (1024ull * 1024ull)
#define DISK_SIZE (64 * MiB)
#define P1_START 2048ull  /* sectors: 1 MiB */
#define P1_SIZE 40960ull  /* 20 MiB, ext4 */
#define P2_START 43008ull /* 21 MiB */
#define P2_SIZE 32768ull  /* 16 MiB, swap */
#define SIG RECLAIM_GRUBENV_SIGNATURE
#define SIGLEN (sizeof SIG - 1)

#define tmp tu_dir

/* A shell command line (sbin on PATH for sfdisk, mkfs, blkid): its exit
 * status, and its stdout in *out when out is not NULL. */
static int shx(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int shx(char **out, const char *fmt, ...) {
        char *cmd, *full;
        va_list ap;
        int st;
        va_start(ap, fmt);
        cr_assert(vasprintf(&cmd, fmt, ap) > 0);
        va_end(ap);
        cr_assert(asprintf(&full, "PATH=/usr/sbin:/sbin:$PATH; %s", cmd) > 0);
        const char *argv[] = { "/bin/sh", "-c", full, NULL };
        char *o = tu_run(argv, &st, NULL);
        cr_assert_not_null(o, "%s did not run", cmd);
        if (out)
                *out = o;
        else
                free(o);
        free(full);
        free(cmd);
        return st;
}

#define sh(...) cr_assert_eq(shx(NULL, __VA_ARGS__), 0, "a set-up command failed")

static bool have(const char *tool) {
        return shx(NULL, "command -v %s >/dev/null", tool) == 0;
}

/* ---- GRUB's environment block -------------------------------------------- */

/* A 1024-byte block: the signature, body, '#' up to the end. */
static void block_of(char out[RECLAIM_GRUBENV_SIZE], const char *body) {
        size_t n = strlen(body);
        cr_assert_leq(SIGLEN + n, RECLAIM_GRUBENV_SIZE);
        memset(out, '#', RECLAIM_GRUBENV_SIZE);
        memcpy(out, SIG, SIGLEN);
        memcpy(out + SIGLEN, body, n);
}

/* set must give the block of want. */
static void set_gives(const char *body, const char *name, const char *value, const char *want) {
        char in[RECLAIM_GRUBENV_SIZE], out[RECLAIM_GRUBENV_SIZE], expect[RECLAIM_GRUBENV_SIZE];
        block_of(expect, want);
        if (body)
                block_of(in, body);
        cr_assert_eq(reclaim_grubenv_set(body ? in : NULL, body ? sizeof in : 0, name, value, out), 0, "%s", name);
        cr_assert_arr_eq(out, expect, sizeof out, "set %s=%s on \"%s\": \"%.*s\"", name, value, body ? body : "(none)",
                         (int) sizeof out, out);
}

Test(grubenv, sets_replaces_and_keeps_order) {
        set_gives(NULL, "next_entry", "muster-discovery", "next_entry=muster-discovery\n");
        set_gives("", "a", "", "a=\n");
        set_gives("saved_entry=foo\n", "next_entry", "x", "saved_entry=foo\nnext_entry=x\n");
        /* Replaced in place, the others kept in their order. */
        set_gives("x=1\nnext_entry=old-and-long\ny=2\n", "next_entry", "new", "x=1\nnext_entry=new\ny=2\n");
        set_gives("x=1\nnext_entry=\ny=2\n", "next_entry", "longer", "x=1\nnext_entry=longer\ny=2\n");
        /* Only the first of two (GRUB's own set does the same). */
        set_gives("n=1\nn=2\n", "n", "3", "n=3\nn=2\n");
        /* A name that is a prefix of another is not that other. */
        set_gives("next_entry_x=1\n", "next_entry", "2", "next_entry_x=1\nnext_entry=2\n");
        /* GRUB's escapes: '\' and newline get a '\'; escaped values kept. */
        set_gives(NULL, "v", "a\\b\nc", "v=a\\\\b\\\nc\n");
        set_gives("v=a\\\\b\\\nc\nw=1\n", "w", "2", "v=a\\\\b\\\nc\nw=2\n");
}

Test(grubenv, comments_are_dropped) {
        set_gives("# a comment\nx=1\n#\n", "y", "2", "x=1\ny=2\n");
}

Test(grubenv, refuses_what_is_not_an_environment_block) {
        char in[RECLAIM_GRUBENV_SIZE], out[RECLAIM_GRUBENV_SIZE], before[RECLAIM_GRUBENV_SIZE];
        memset(out, 'Z', sizeof out);
        memcpy(before, out, sizeof out);

        block_of(in, "x=1\n");
        cr_assert_eq(reclaim_grubenv_set(in, sizeof in - 1, "n", "v", out), -EINVAL, "1023 bytes");
        cr_assert_eq(reclaim_grubenv_set(in, 0, "n", "v", out), -EINVAL, "0 bytes of a block");
        block_of(in, "x=1\n");
        in[0] = '%';
        cr_assert_eq(reclaim_grubenv_set(in, sizeof in, "n", "v", out), -EINVAL, "no signature");
        block_of(in, "x=1\n");
        in[SIGLEN + 1] = '\0';
        cr_assert_eq(reclaim_grubenv_set(in, sizeof in, "n", "v", out), -EINVAL, "a NUL");
        block_of(in, "junk\n");
        cr_assert_eq(reclaim_grubenv_set(in, sizeof in, "n", "v", out), -EINVAL, "a line without '='");
        block_of(in, "=1\n");
        cr_assert_eq(reclaim_grubenv_set(in, sizeof in, "n", "v", out), -EINVAL, "a line without a name");
        /* A value that runs into the end, unterminated. */
        memset(in, 'a', sizeof in);
        memcpy(in, SIG "x=", SIGLEN + 2);
        cr_assert_eq(reclaim_grubenv_set(in, sizeof in, "n", "v", out), -EINVAL, "no newline before the end");
        /* Its last byte an escaping '\', the newline escaped. */
        block_of(in, "");
        memcpy(in + SIGLEN, "x=", 2);
        in[sizeof in - 2] = '\\';
        in[sizeof in - 1] = '\n';
        cr_assert_eq(reclaim_grubenv_set(in, sizeof in, "n", "v", out), -EINVAL, "an escaped last newline");

        static const char *const bad_names[] = { "", "a=b", "#x", "a b", "a\nb", "\x7f", "\xc3\xa9" };
        for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++)
                cr_assert_eq(reclaim_grubenv_set(NULL, 0, bad_names[i], "v", out), -EINVAL, "name %zu", i);
        char longname[300];
        memset(longname, 'n', sizeof longname);
        longname[256] = '\0';
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, longname, "v", out), -EINVAL, "a 256-byte name");
        longname[255] = '\0';
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, longname, "v", out), 0, "a 255-byte name");
        memset(out, 'Z', sizeof out);
        cr_assert_arr_eq(out, before, sizeof out);
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, "n", "v", NULL), -EINVAL);
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, NULL, "v", out), -EINVAL);
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, "n", NULL, out), -EINVAL);
        cr_assert_arr_eq(out, before, sizeof out, "out untouched by every refusal");
}

Test(grubenv, fills_exactly_1024_bytes_and_no_more) {
        char out[RECLAIM_GRUBENV_SIZE], before[RECLAIM_GRUBENV_SIZE], big[RECLAIM_GRUBENV_SIZE];
        /* signature + "n=" + value + "\n" == 1024: the block exactly full. */
        size_t room = RECLAIM_GRUBENV_SIZE - SIGLEN - 3;
        memset(big, 'v', sizeof big);
        big[room] = '\0';
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, "n", big, out), 0);
        cr_assert_eq(out[RECLAIM_GRUBENV_SIZE - 1], '\n', "no padding left");
        cr_assert_eq(memcmp(out + SIGLEN, "n=vvv", 5), 0);
        /* The full block read back, one more variable refused. */
        char full[RECLAIM_GRUBENV_SIZE];
        memcpy(full, out, sizeof full);
        memset(out, 'Z', sizeof out);
        memcpy(before, out, sizeof out);
        cr_assert_eq(reclaim_grubenv_set(full, sizeof full, "m", "", out), -EINVAL);
        cr_assert_arr_eq(out, before, sizeof out);
        /* Same value again: it still fits; one byte longer does not. */
        cr_assert_eq(reclaim_grubenv_set(full, sizeof full, "n", big, out), 0);
        cr_assert_arr_eq(out, full, sizeof out);
        big[room] = 'v';
        big[room + 1] = '\0';
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, "n", big, out), -EINVAL, "one byte past the block");
        cr_assert_eq(reclaim_grubenv_set(full, sizeof full, "n", big, out), -EINVAL);
        /* An escape counts: a '\' in the last free byte's place is two. */
        big[room - 1] = '\\';
        big[room] = '\0';
        cr_assert_eq(reclaim_grubenv_set(NULL, 0, "n", big, out), -EINVAL, "the escape passes the block");
        /* A shorter value frees room again. */
        cr_assert_eq(reclaim_grubenv_set(full, sizeof full, "n", "short", out), 0);
        char want[RECLAIM_GRUBENV_SIZE];
        block_of(want, "n=short\n");
        cr_assert_arr_eq(out, want, sizeof out);
}

/* ---- the boot entry ---------------------------------------------------------- */

#define CMDLINE "console=ttyS0,115200 muster.coordinator=https://10.0.0.1:8443 muster.reclaim=wipe"
#define ENTRY_TEXT                                                                                   \
        "title Muster discovery\n"                                                                   \
        "linux /muster-discovery/vmlinuz\n"                                                          \
        "initrd /muster-discovery/initrd\n"                                                          \
        "options " CMDLINE "\n"

static char *boot_with_kernel(void) {
        char *boot = tu_path_in(tmp, "boot");
        cr_assert_eq(tu_write_file(boot, RECLAIM_DIR "/vmlinuz", "kernel"), 0);
        cr_assert_eq(tu_write_file(boot, RECLAIM_DIR "/initrd", "initramfs"), 0);
        return boot;
}

/* grub-editenv's view of a grubenv, or with GRUB's tools missing the
 * test's own: the NAME=VALUE lines before the padding (no escapes used in
 * these tests). */
static char *grubenv_list(const char *path) {
        char *out = NULL;
        if (have("grub-editenv")) {
                cr_assert_eq(shx(&out, "grub-editenv '%s' list", path), 0, "grub-editenv list %s", path);
                return out;
        }
        size_t len;
        char *b = tu_read_file(path, &len);
        cr_assert_not_null(b);
        cr_assert_eq(len, RECLAIM_GRUBENV_SIZE);
        cr_assert_eq(memcmp(b, SIG, SIGLEN), 0);
        size_t end = SIGLEN;
        while (end < len && b[end] != '#')
                end = (size_t) ((char *) memchr(b + end, '\n', len - end) - b) + 1;
        out = strndup(b + SIGLEN, end - SIGLEN);
        free(b);
        return out;
}

static void assert_file(const char *dir, const char *rel, const char *want, mode_t mode) {
        char *p = tu_path_in(dir, rel);
        struct stat st;
        size_t len;
        char *text = tu_read_file(p, &len);
        cr_assert_not_null(text, "%s", p);
        cr_assert_str_eq(text, want, "%s", p);
        cr_assert_eq(stat(p, &st), 0);
        cr_assert_eq(st.st_mode & 07777, mode, "%s: %o", p, st.st_mode & 07777);
        free(text);
        free(p);
}

Test(entry, written_with_a_new_grubenv, .init = tu_dir_up, .fini = tu_dir_down) {
        char *boot = boot_with_kernel(), err[512] = "x";
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), 0, "%s", err);
        cr_assert_str_empty(err);
        assert_file(boot, "loader/entries/muster-discovery.conf", ENTRY_TEXT, 0644);

        char want[RECLAIM_GRUBENV_SIZE];
        block_of(want, "next_entry=muster-discovery\n");
        char *env = tu_path_in(boot, "grub/grubenv");
        size_t len;
        char *b = tu_read_file(env, &len);
        cr_assert_not_null(b);
        cr_assert_eq(len, RECLAIM_GRUBENV_SIZE);
        cr_assert_arr_eq(b, want, sizeof want);
        free(b);
        char *list = grubenv_list(env);
        cr_assert_str_eq(list, "next_entry=muster-discovery\n");
        free(list);
        /* Folders 0755, no temporary file left. */
        struct stat st;
        char *d = tu_path_in(boot, "loader/entries");
        cr_assert_eq(stat(d, &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0755);
        char *names = tu_listing(d);
        cr_assert_str_eq(names, "muster-discovery.conf");
        free(names);
        names = tu_listing(boot);
        cr_assert_str_eq(names, "grub,loader,muster-discovery");
        free(names);
        char *g = tu_path_in(boot, "grub");
        names = tu_listing(g);
        cr_assert_str_eq(names, "grubenv");
        free(names);

        /* Again: the same files, next_entry still once. */
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), 0, "%s", err);
        assert_file(boot, "loader/entries/muster-discovery.conf", ENTRY_TEXT, 0644);
        b = tu_read_file(env, &len);
        cr_assert_arr_eq(b, want, sizeof want);
        free(b);

        /* An empty command line: no options line. */
        cr_assert_eq(reclaim_write_entry(boot, "", err, sizeof err), 0, "%s", err);
        assert_file(boot, "loader/entries/muster-discovery.conf",
                    "title Muster discovery\nlinux /muster-discovery/vmlinuz\ninitrd /muster-discovery/initrd\n", 0644);
        free(g);
        free(d);
        free(env);
        free(boot);
}

Test(entry, keeps_the_other_grub_variables, .init = tu_dir_up, .fini = tu_dir_down) {
        char *boot = boot_with_kernel(), err[512];
        char *env = tu_path_in(boot, "grub/grubenv");
        bool grub = have("grub-editenv");
        if (grub)
                sh("mkdir -p '%s/grub' && grub-editenv '%s' create && "
                   "grub-editenv '%s' set saved_entry=foo next_entry=old-one boot_success=1",
                   boot, env, env);
        else {
                /* No GRUB tools here: a block as grub-editenv writes it. */
                char b[RECLAIM_GRUBENV_SIZE];
                block_of(b, "saved_entry=foo\nnext_entry=old-one\nboot_success=1\n");
                cr_assert_eq(tu_write_bin(boot, "grub/grubenv", b, sizeof b), 0);
        }
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), 0, "%s", err);
        char *list = grubenv_list(env);
        cr_assert_str_eq(list, "saved_entry=foo\nnext_entry=muster-discovery\nboot_success=1\n");
        free(list);
        size_t len;
        char *b = tu_read_file(env, &len);
        cr_assert_eq(len, RECLAIM_GRUBENV_SIZE);
        free(b);
        if (grub) {
                /* And GRUB's tool edits what was written. */
                sh("grub-editenv '%s' unset next_entry", env);
                list = grubenv_list(env);
                cr_assert_str_eq(list, "saved_entry=foo\nboot_success=1\n");
                free(list);
        }
        free(env);
        free(boot);
}

Test(entry, grub2_folder_and_a_linked_grubenv, .init = tu_dir_up, .fini = tu_dir_down) {
        char *boot = boot_with_kernel(), err[512], b[RECLAIM_GRUBENV_SIZE], want[RECLAIM_GRUBENV_SIZE];
        /* Fedora's layout: grub2/, its grubenv a link into the ESP. */
        block_of(b, "saved_entry=fedora\n");
        cr_assert_eq(tu_write_bin(boot, "efi/EFI/fedora/grubenv", b, sizeof b), 0);
        cr_assert_eq(tu_symlink(boot, "grub2/grubenv", "../efi/EFI/fedora/grubenv"), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), 0, "%s", err);
        block_of(want, "saved_entry=fedora\nnext_entry=muster-discovery\n");
        char *target = tu_path_in(boot, "efi/EFI/fedora/grubenv"), *link = tu_path_in(boot, "grub2/grubenv");
        char *got = tu_read_file(target, NULL);
        cr_assert_arr_eq(got, want, sizeof want);
        free(got);
        struct stat st;
        cr_assert_eq(lstat(link, &st), 0);
        cr_assert(S_ISLNK(st.st_mode), "the link stays a link");
        char *names = tu_listing(boot);
        cr_assert_str_eq(names, "efi,grub2,loader,muster-discovery", "no grub/ made beside grub2/");
        free(names);
        /* grub2/ with only a grub.cfg: the new grubenv goes beside it. */
        cr_assert_eq(unlink(link), 0);
        cr_assert_eq(tu_write_file(boot, "grub2/grub.cfg", "# generated\n"), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), 0, "%s", err);
        block_of(want, "next_entry=muster-discovery\n");
        got = tu_read_file(link, NULL);
        cr_assert_arr_eq(got, want, sizeof want);
        free(got);
        free(target);
        free(link);
        free(boot);
}

Test(entry, refuses_without_the_kernel_and_writes_nothing, .init = tu_dir_up, .fini = tu_dir_down) {
        char *boot = tu_path_in(tmp, "boot"), err[512];
        cr_assert_eq(tu_write_file(boot, RECLAIM_DIR "/initrd", "initramfs"), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), -ENOENT);
        cr_assert(strstr(err, "/muster-discovery/vmlinuz is not there"), "%s", err);
        char *names = tu_listing(boot);
        cr_assert_str_eq(names, "muster-discovery");
        free(names);

        char *p = tu_path_in(boot, RECLAIM_DIR "/initrd");
        cr_assert_eq(tu_write_file(boot, RECLAIM_DIR "/vmlinuz", "kernel"), 0);
        cr_assert_eq(unlink(p), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), -ENOENT);
        cr_assert(strstr(err, "initrd is not there"), "%s", err);
        /* An empty one is no kernel either. */
        cr_assert_eq(tu_write_file(boot, RECLAIM_DIR "/initrd", ""), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), -EINVAL);
        names = tu_listing(boot);
        cr_assert_str_eq(names, "muster-discovery");
        free(names);

        char *none = tu_path_in(tmp, "no-boot");
        cr_assert_eq(reclaim_write_entry(none, CMDLINE, err, sizeof err), -ENOENT);
        cr_assert_eq(reclaim_write_entry("boot", CMDLINE, err, sizeof err), -EINVAL, "a relative boot folder");
        free(none);
        free(p);
        free(boot);
}

Test(entry, refuses_bad_command_lines_and_grubenvs, .init = tu_dir_up, .fini = tu_dir_down) {
        char *boot = boot_with_kernel(), err[512];
        static const char *const bad[] = { "a\nb", "a\tb", "a\rb", "caf\xc3\xa9", "\x7f" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(reclaim_write_entry(boot, bad[i], err, sizeof err), -EINVAL, "%zu", i);
                cr_assert(strstr(err, "printable ASCII"), "%s", err);
        }
        cr_assert_eq(reclaim_write_entry(boot, NULL, err, sizeof err), -EINVAL);
        char *cmd = malloc(RECLAIM_CMDLINE_MAX + 2);
        memset(cmd, 'c', RECLAIM_CMDLINE_MAX + 1);
        cmd[RECLAIM_CMDLINE_MAX + 1] = '\0';
        cr_assert_eq(reclaim_write_entry(boot, cmd, err, sizeof err), -EINVAL, "4097 bytes");
        char *names = tu_listing(boot);
        cr_assert_str_eq(names, "muster-discovery", "nothing written for a refused command line");
        free(names);
        cmd[RECLAIM_CMDLINE_MAX] = '\0';
        cr_assert_eq(reclaim_write_entry(boot, cmd, err, sizeof err), 0, "4096 bytes: %s", err);

        /* A grubenv that is not a 1024-byte block is left alone, and so is
         * the entry. */
        char *entry = tu_path_in(boot, "loader/entries/muster-discovery.conf");
        char *env = tu_path_in(boot, "grub/grubenv");
        cr_assert_eq(unlink(entry), 0);
        cr_assert_eq(tu_write_file(boot, "grub/grubenv", SIG "next_entry=x\n"), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "is not a 1024-byte GRUB environment block"), "%s", err);
        char *t = tu_read_file(env, NULL);
        cr_assert_str_eq(t, SIG "next_entry=x\n");
        free(t);
        cr_assert_eq(access(entry, F_OK), -1, "no entry written");
        char b[RECLAIM_GRUBENV_SIZE];
        block_of(b, "garbage without equals\n");
        cr_assert_eq(tu_write_bin(boot, "grub/grubenv", b, sizeof b), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "is not a GRUB environment block"), "%s", err);
        cr_assert_eq(access(entry, F_OK), -1, "no entry written");
        free(entry);
        free(env);
        free(cmd);
        free(boot);
}

/* ---- the wipe -------------------------------------------------------------------- */

static void need_tools(void) {
        static const char *const tools[] = { "sfdisk", "mkfs.ext4", "mkswap", "blkid" };
        for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
                if (!have(tools[i]))
                        cr_skip_test("%s is not installed", tools[i]);
}

/* A 64 MiB file with a `label` (gpt or dos) table: partition 1 ext4,
 * partition 2 swap (mkswap on a file of its own, its first page copied in:
 * mkswap has no offset option). */
static char *make_disk(const char *name, const char *label) {
        char *disk = tu_path_in(tmp, name), *swap = tu_path_in(tmp, "swap.img");
        sh("truncate -s %llu '%s'", (unsigned long long) DISK_SIZE, disk);
        sh("printf 'label: %s\\nstart=%llu, size=%llu, type=%s\\nstart=%llu, size=%llu, type=%s\\n' | sfdisk -q '%s'",
           label, P1_START, P1_SIZE, strcmp(label, "gpt") == 0 ? "linux" : "83", P2_START, P2_SIZE,
           strcmp(label, "gpt") == 0 ? "swap" : "82", disk);
        sh("mkfs.ext4 -q -F -L old-root -E offset=%llu,nodiscard '%s' %lluk >/dev/null", P1_START * 512, disk,
           P1_SIZE / 2);
        sh("truncate -s %llu '%s' && mkswap -q '%s' >/dev/null 2>&1", P2_SIZE * 512, swap, swap);
        sh("dd if='%s' of='%s' bs=4096 count=1 seek=%llu conv=notrunc status=none", swap, disk,
           P2_START * 512 / 4096);
        cr_assert_eq(unlink(swap), 0);
        free(swap);
        return disk;
}

static char *probe_at(const char *disk, unsigned long long offset) {
        char *out = NULL;
        int st = shx(&out, "blkid -p -o export -O %llu '%s'", offset, disk);
        if (st != 0) {
                free(out);
                return NULL;
        }
        return out;
}

/* The erased list as "type@offset+bytes,...". */
static char *erased_of(json_object *report) {
        json_object *arr = tu_json_get(report, "erased");
        cr_assert_not_null(arr);
        char *s = strdup("");
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                char *n;
                cr_assert(asprintf(&n, "%s%s%s@%s+%s", s, i ? "," : "", tu_jstr(e, "type"), tu_jstr(e, "offset"),
                                   tu_jstr(e, "bytes")) > 0);
                free(s);
                s = n;
        }
        return s;
}

/* Every byte of after equals before, except the erased ranges, which are
 * zero. */
static void assert_only_erased_changed(const char *before, const char *after, size_t len, json_object *report) {
        json_object *arr = tu_json_get(report, "erased");
        char *mask = calloc(len, 1);
        cr_assert_not_null(mask);
        for (size_t i = 0; i < json_object_array_length(arr); i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                int64_t off = json_object_get_int64(tu_json_get(e, "offset"));
                int64_t n = json_object_get_int64(tu_json_get(e, "bytes"));
                cr_assert(off >= 0 && n > 0 && (uint64_t) (off + n) <= len);
                for (int64_t k = off; k < off + n; k++) {
                        cr_assert_eq(after[k], 0, "erased byte %lld is zero", (long long) k);
                        mask[k] = 1;
                }
        }
        size_t changed = 0;
        for (size_t k = 0; k < len; k++)
                if (!mask[k] && before[k] != after[k] && changed++ < 5)
                        cr_log_error("byte %zu changed", k);
        cr_assert_eq(changed, 0, "%zu bytes changed outside the erased signatures", changed);
        free(mask);
}

static char *last_sector(const char *data, size_t len) {
        return strndup(data + len - 512, 8);
}

Test(wipe, gpt_disk_partitions_then_both_headers_then_pmbr, .init = tu_dir_up, .fini = tu_dir_down) {
        need_tools();
        char *disk = make_disk("gpt.img", "gpt"), err[512] = "x";
        json_object *report = NULL;
        size_t len;

        /* The set-up is what we think it is. */
        char *p = probe_at(disk, P1_START * 512);
        cr_assert(p && strstr(p, "TYPE=ext4"), "%s", p ? p : "(nothing)");
        free(p);
        p = probe_at(disk, P2_START * 512);
        cr_assert(p && strstr(p, "TYPE=swap"), "%s", p ? p : "(nothing)");
        free(p);
        char *before = tu_read_file(disk, &len);
        cr_assert_eq(len, DISK_SIZE);
        cr_assert_eq(memcmp(before + len - 512, "EFI PART", 8), 0, "a backup GPT header");

        cr_assert_eq(reclaim_wipe(disk, true, &report, err, sizeof err), 0, "%s", err);
        cr_assert_str_empty(err);
        cr_assert_str_eq(tu_jstr(report, "path"), disk);
        cr_assert_str_eq(tu_jstr(report, "discarded"), "false", "no discard on a regular file");
        cr_assert_null(tu_json_get(report, "discard_error"));
        char *got = erased_of(report), *want;
        cr_assert(asprintf(&want, "ext4@%llu+2,swap@%llu+10,gpt@512+8,gpt@%llu+8,PMBR@510+2",
                           P1_START * 512 + 0x438, P2_START * 512 + 4096 - 10, DISK_SIZE - 512) > 0);
        cr_assert_str_eq(got, want);

        char *after = tu_read_file(disk, &len);
        cr_assert_eq(len, DISK_SIZE);
        assert_only_erased_changed(before, after, len, report);
        char *tail = last_sector(after, len);
        cr_assert_str_neq(tail, "EFI PART", "the backup GPT header is gone");
        free(tail);
        cr_assert_null(p = probe_at(disk, P1_START * 512), "%s", p);
        cr_assert_null(p = probe_at(disk, P2_START * 512), "%s", p);
        cr_assert_null(p = probe_at(disk, 0), "blkid -p finds nothing: %s", p);
        cr_assert_neq(shx(NULL, "sfdisk -d '%s' >/dev/null 2>&1", disk), 0, "sfdisk finds no table");
        char *out = NULL;
        shx(&out, "sfdisk -l '%s' 2>&1", disk);
        cr_assert_null(strstr(out, "Disklabel type"), "%s", out);
        free(out);

        /* A second wipe erases nothing and changes nothing. */
        json_object *again = NULL;
        cr_assert_eq(reclaim_wipe(disk, false, &again, err, sizeof err), 0, "%s", err);
        char *none = erased_of(again);
        cr_assert_str_eq(none, "");
        char *after2 = tu_read_file(disk, &len);
        cr_assert_arr_eq(after2, after, len);

        json_object_put(report);
        json_object_put(again);
        free(none);
        free(after2);
        free(after);
        free(got);
        free(want);
        free(before);
        free(disk);
}

Test(wipe, dos_disk, .init = tu_dir_up, .fini = tu_dir_down) {
        need_tools();
        char *disk = make_disk("dos.img", "dos"), err[512];
        json_object *report = NULL;
        size_t len;
        char *before = tu_read_file(disk, &len);
        cr_assert_eq(shx(NULL, "sfdisk -d '%s' >/dev/null 2>&1", disk), 0, "a DOS table before");

        cr_assert_eq(reclaim_wipe(disk, false, &report, err, sizeof err), 0, "%s", err);
        char *got = erased_of(report), *want;
        cr_assert(asprintf(&want, "ext4@%llu+2,swap@%llu+10,dos@510+2", P1_START * 512 + 0x438,
                           P2_START * 512 + 4096 - 10) > 0);
        cr_assert_str_eq(got, want);
        char *after = tu_read_file(disk, &len);
        assert_only_erased_changed(before, after, len, report);
        char *p;
        cr_assert_null(p = probe_at(disk, 0), "%s", p);
        cr_assert_null(p = probe_at(disk, P1_START * 512), "%s", p);
        cr_assert_neq(shx(NULL, "sfdisk -d '%s' >/dev/null 2>&1", disk), 0, "sfdisk finds no table");

        json_object *again = NULL;
        cr_assert_eq(reclaim_wipe(disk, false, &again, err, sizeof err), 0, "%s", err);
        char *none = erased_of(again);
        cr_assert_str_eq(none, "");
        json_object_put(report);
        json_object_put(again);
        free(none);
        free(after);
        free(got);
        free(want);
        free(before);
        free(disk);
}

Test(wipe, a_whole_device_file_system, .init = tu_dir_up, .fini = tu_dir_down) {
        need_tools();
        char *disk = tu_path_in(tmp, "fs.img"), err[512];
        json_object *report = NULL;
        sh("truncate -s 16M '%s' && mkfs.ext4 -q -F -E nodiscard '%s' >/dev/null", disk, disk);
        cr_assert_eq(reclaim_wipe(disk, false, &report, err, sizeof err), 0, "%s", err);
        char *got = erased_of(report);
        cr_assert_str_eq(got, "ext4@1080+2");
        char *p;
        cr_assert_null(p = probe_at(disk, 0), "%s", p);
        json_object_put(report);
        free(got);
        free(disk);
}

Test(wipe, refuses_what_is_not_a_disk, .init = tu_dir_up, .fini = tu_dir_down) {
        char err[512];
        json_object *report = (json_object *) 1;
        char *none = tu_path_in(tmp, "none");
        cr_assert_eq(reclaim_wipe(none, false, &report, err, sizeof err), -ENOENT);
        cr_assert_null(report);
        cr_assert(strstr(err, "No such file or directory"), "%s", err);
        cr_assert_eq(reclaim_wipe(tmp, false, &report, err, sizeof err), -ENOTBLK, "a folder");
        cr_assert(strstr(err, "is not a block device"), "%s", err);
        cr_assert_eq(reclaim_wipe("", false, &report, err, sizeof err), -EINVAL);
        /* An empty file: nothing to find, nothing erased. */
        cr_assert_eq(tu_write_file(tmp, "empty", ""), 0);
        char *empty = tu_path_in(tmp, "empty");
        cr_assert_eq(reclaim_wipe(empty, false, &report, err, sizeof err), 0, "%s", err);
        char *got = erased_of(report);
        cr_assert_str_eq(got, "");
        json_object_put(report);
        free(got);
        free(empty);
        free(none);
}

/* A GRUB that reads no BLS entries (its grub.cfg has no blscfg: Debian's)
 * gets the same boot as a menuentry in custom.cfg, which grub.cfg sources:
 * the admin's own lines kept, our block replaced on a second reclaim, and
 * GRUB's own checker takes the result. A GRUB with blscfg gets none. */
Test(entry, a_grub_without_bls_gets_a_custom_cfg_menuentry, .init = tu_dir_up, .fini = tu_dir_down) {
        char *boot = boot_with_kernel(), err[512] = "";
        cr_assert_eq(tu_write_file(boot, "grub/grub.cfg", "### BEGIN /etc/grub.d/41_custom ###\n"
                                                         "if [ -f  ${config_directory}/custom.cfg ]; then\n"
                                                         "  source ${config_directory}/custom.cfg\nfi\n"),
                     0);
        cr_assert_eq(tu_write_file(boot, "grub/custom.cfg", "menuentry 'Mine' {\n\ttrue\n}"), 0);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE, err, sizeof err), 0, "%s", err);
        cr_assert_eq(reclaim_write_entry(boot, CMDLINE " quiet", err, sizeof err), 0, "%s", err);
        char *p = tu_path_in(boot, "grub/custom.cfg");
        char *text = tu_read_file(p, NULL);
        cr_assert_not_null(text);
        int r;
        char *block = reclaim_menuentry_text(CMDLINE " quiet", &r);
        cr_assert_not_null(block);
        char *want;
        cr_assert(asprintf(&want, "menuentry 'Mine' {\n\ttrue\n}\n%s", block) > 0);
        cr_assert_str_eq(text, want, "the admin's entry kept, ours once, the newest");
        cr_assert(strstr(block, "menuentry 'Muster discovery' --id muster-discovery {\n") &&
                          strstr(block, "\t\tlinux /muster-discovery/vmlinuz 'console=ttyS0,115200' "
                                        "'muster.coordinator=https://10.0.0.1:8443' 'muster.reclaim=wipe' 'quiet'\n") &&
                          strstr(block, "\t\tinitrd /boot/muster-discovery/initrd\n"),
                  "%s", block);
        if (have("grub-script-check"))
                cr_assert_eq(shx(NULL, "grub-script-check '%s'", p), 0, "GRUB parses it: %s", text);
        char *envp = tu_path_in(boot, "grub/grubenv");
        char *list = grubenv_list(envp);
        cr_assert_str_eq(list, "next_entry=muster-discovery\n");
        free(list);
        free(envp);
        /* A single quote cannot go there: refused, nothing changed. */
        cr_assert_eq(reclaim_write_entry(boot, "a='b'", err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "single quote"), "%s", err);
        char *again = tu_read_file(p, NULL);
        cr_assert_str_eq(again, text);
        free(again);
        free(text);
        free(want);
        free(block);
        free(p);

        /* blscfg: the BLS entry is what GRUB reads; no custom.cfg. */
        char *boot2 = tu_path_in(tmp, "boot2");
        cr_assert_eq(tu_write_file(boot2, RECLAIM_DIR "/vmlinuz", "kernel"), 0);
        cr_assert_eq(tu_write_file(boot2, RECLAIM_DIR "/initrd", "initramfs"), 0);
        cr_assert_eq(tu_write_file(boot2, "grub2/grub.cfg", "insmod blscfg\nblscfg\n"), 0);
        cr_assert_eq(reclaim_write_entry(boot2, CMDLINE, err, sizeof err), 0, "%s", err);
        char *g2 = tu_path_in(boot2, "grub2");
        char *names = tu_listing(g2);
        cr_assert_str_eq(names, "grub.cfg,grubenv");
        free(names);
        free(g2);
        free(boot2);
        free(boot);
}
