/* The discovery ISO as musterd streams it (coordinator/svc/iso.c): the overlay
 * reader against a reference image built in memory (every boundary of the
 * area, ranges straddling it, inside it, one byte at a time, random ranges),
 * the template and sidecar checks, the ETag, Range and If-* parsing, the Host
 * check and the file name. Templates live in memfds or a temp dir. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootcfg.h"
#include "http/http.h"
#include "svc/iso.h"
#include "testutil.h"

/* ---- the overlay reader ------------------------------------------------ */

struct img {
        int fd;
        uint8_t *tpl;  /* the template's bytes */
        uint8_t *ref;  /* what the output must be */
        uint8_t *area;
        size_t size, a0, alen;
};

static void fill(uint8_t *p, size_t n, uint64_t *seed) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) tu_xorshift(seed);
}

/* A template of `size` random bytes in a memfd with an area of alen random
 * non-zero bytes to overlay at a0. */
static void img_make(struct img *m, size_t size, size_t a0, size_t alen, uint64_t seed) {
        m->size = size;
        m->a0 = a0;
        m->alen = alen;
        m->tpl = malloc(size);
        m->ref = malloc(size);
        m->area = malloc(alen ? alen : 1);
        cr_assert(m->tpl && m->ref && m->area);
        fill(m->tpl, size, &seed);
        fill(m->area, alen, &seed);
        for (size_t i = 0; i < alen; i++)
                m->area[i] |= 1; /* never equal to a zeroed template by chance */
        memcpy(m->ref, m->tpl, size);
        memcpy(m->ref + a0, m->area, alen);
        m->fd = memfd_create("iso-template", MFD_CLOEXEC);
        cr_assert_geq(m->fd, 0);
        size_t off = 0;
        while (off < size) {
                ssize_t k = write(m->fd, m->tpl + off, size - off);
                cr_assert_gt(k, 0);
                off += (size_t) k;
        }
}

static void img_free(struct img *m) {
        close(m->fd);
        free(m->tpl);
        free(m->ref);
        free(m->area);
}

/* svc_iso_read of [pos, pos + len) equals the reference. */
static void check_range(const struct img *m, size_t pos, size_t len) {
        uint8_t *buf = malloc(len + 2);
        cr_assert_not_null(buf);
        buf[len] = 0xa5;
        buf[len + 1] = 0x5a;
        ssize_t k = svc_iso_read(m->fd, m->a0, m->area, m->alen, pos, buf, len);
        cr_assert_eq(k, (ssize_t) len, "iso_read(%zu, %zu) = %zd", pos, len, k);
        if (memcmp(buf, m->ref + pos, len) != 0) {
                size_t i = 0;
                while (buf[i] == m->ref[pos + i])
                        i++;
                cr_assert_fail("iso_read(%zu, %zu) differs at byte %zu (area %zu..%zu): %02x, want %02x", pos, len,
                               pos + i, m->a0, m->a0 + m->alen, buf[i], m->ref[pos + i]);
        }
        cr_assert(buf[len] == 0xa5 && buf[len + 1] == 0x5a, "iso_read(%zu, %zu) wrote past len", pos, len);
        free(buf);
}

/* Every range whose both ends are within 3 bytes of a boundary (0, the area's
 * start and end, the end of the file). */
static void check_boundaries(const struct img *m) {
        const size_t marks[] = { 0, m->a0, m->a0 + m->alen, m->size };
        size_t pts[4 * 7], n = 0;
        for (size_t i = 0; i < 4; i++)
                for (int dlt = -3; dlt <= 3; dlt++) {
                        long long p = (long long) marks[i] + dlt;
                        if (p >= 0 && p <= (long long) m->size)
                                pts[n++] = (size_t) p;
                }
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        if (pts[j] > pts[i])
                                check_range(m, pts[i], pts[j] - pts[i]);
}

Test(svc_iso_read, boundaries_of_an_iso_like_area) {
        struct img m;
        img_make(&m, 4 << 20, 1 << 20, BOOTCFG_AREA_SIZE, 1); /* 2048-aligned, as xorriso places it */
        check_boundaries(&m);
        img_free(&m);
}

Test(svc_iso_read, boundaries_of_an_odd_area) {
        struct img m;
        img_make(&m, (3 << 20) + 777, (1 << 20) + 12345, BOOTCFG_AREA_SIZE, 2);
        check_boundaries(&m);
        img_free(&m);
}

Test(svc_iso_read, area_at_the_start_and_at_the_end) {
        struct img m;
        img_make(&m, 1 << 20, 0, BOOTCFG_AREA_SIZE, 3);
        check_boundaries(&m);
        check_range(&m, 0, m.size);
        img_free(&m);
        img_make(&m, 1 << 20, (1 << 20) - BOOTCFG_AREA_SIZE, BOOTCFG_AREA_SIZE, 4);
        check_boundaries(&m);
        check_range(&m, 0, m.size);
        img_free(&m);
        /* The whole file is the area. */
        img_make(&m, 4096, 0, 4096, 5);
        check_boundaries(&m);
        img_free(&m);
}

Test(svc_iso_read, ranges_straddling_and_inside_the_area) {
        struct img m;
        img_make(&m, 2 << 20, 700001, BOOTCFG_AREA_SIZE, 6);
        size_t a0 = m.a0, a1 = m.a0 + m.alen;
        check_range(&m, 0, m.size);                /* everything */
        check_range(&m, a0 - 5000, 10000);         /* over the start */
        check_range(&m, a1 - 5000, 10000);         /* over the end */
        check_range(&m, a0 - 1, m.alen + 2);       /* the area and one byte each side */
        check_range(&m, a0, m.alen);               /* exactly the area */
        check_range(&m, a0 + 100, 1000);           /* inside */
        check_range(&m, a0 + 1, m.alen - 2);       /* inside, all but its ends */
        check_range(&m, 0, a0);                    /* before it */
        check_range(&m, a1, m.size - a1);          /* after it */
        check_range(&m, 0, a1);                    /* up to its end */
        check_range(&m, a0, m.size - a0);          /* from its start */
        img_free(&m);
}

Test(svc_iso_read, one_byte_at_a_time) {
        struct img m;
        img_make(&m, 64 * 1024 + 3, 20001, 4099, 7);
        for (size_t p = 0; p < m.size; p++)
                check_range(&m, p, 1);
        img_free(&m);
}

Test(svc_iso_read, stream_in_blocks_like_the_server) {
        /* How libmicrohttpd takes a body: consecutive blocks from pos 0,
         * the last one short; every block size, including odd ones. */
        struct img m;
        img_make(&m, (2 << 20) + 4321, (1 << 20) + 12345, BOOTCFG_AREA_SIZE, 8);
        const size_t blocks[] = { 1000, 2048, 4096, 65536, 65537, 262144, 300000 };
        uint8_t *out = malloc(m.size);
        cr_assert_not_null(out);
        for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
                memset(out, 0, m.size);
                for (size_t pos = 0; pos < m.size;) {
                        size_t n = m.size - pos < blocks[b] ? m.size - pos : blocks[b];
                        cr_assert_eq(svc_iso_read(m.fd, m.a0, m.area, m.alen, pos, out + pos, n), (ssize_t) n);
                        pos += n;
                }
                cr_assert(memcmp(out, m.ref, m.size) == 0, "blocks of %zu", blocks[b]);
        }
        free(out);
        img_free(&m);
}

Test(svc_iso_read, random_ranges) {
        struct img m;
        uint64_t seed = 99;
        img_make(&m, (3 << 20) + 1, (1 << 20) + 4097, BOOTCFG_AREA_SIZE, 9);
        for (int i = 0; i < 3000; i++) {
                size_t a = tu_xorshift(&seed) % m.size, b = tu_xorshift(&seed) % m.size;
                /* Half of them short and near the area. */
                if (i % 2) {
                        a = m.a0 + (size_t) (tu_xorshift(&seed) % (m.alen + 8192)) - 4096;
                        b = a + tu_xorshift(&seed) % 8192;
                        if (b > m.size)
                                b = m.size;
                }
                if (a > b) {
                        size_t x = a;
                        a = b;
                        b = x;
                }
                if (b > a)
                        check_range(&m, a, b - a);
        }
        img_free(&m);
}

Test(svc_iso_read, zero_length_and_errors) {
        struct img m;
        uint8_t buf[16];
        img_make(&m, 8192, 1000, 100, 10);
        cr_assert_eq(svc_iso_read(m.fd, m.a0, m.area, m.alen, 500, buf, 0), 0);
        cr_assert_eq(svc_iso_read(m.fd, m.a0, m.area, m.alen, 1050, buf, 0), 0);
        /* Past the end of the file: it shrank under a download. */
        cr_assert_eq(svc_iso_read(m.fd, m.a0, m.area, m.alen, 8190, buf, 4), -EIO);
        cr_assert_eq(svc_iso_read(m.fd, m.a0, m.area, m.alen, 9000, buf, 4), -EIO);
        cr_assert_eq(svc_iso_read(m.fd, m.a0, m.area, m.alen, UINT64_MAX - 2, buf, 4), -EOVERFLOW);
        cr_assert_eq(svc_iso_read(m.fd, m.a0, m.area, m.alen, (uint64_t) INT64_MAX, buf, 4), -EOVERFLOW);
        /* Bytes inside the area are never read from the file. */
        cr_assert_eq(svc_iso_read(-1, m.a0, m.area, m.alen, 1010, buf, 16), 16);
        cr_assert(memcmp(buf, m.area + 10, 16) == 0);
        cr_assert_eq(svc_iso_read(-1, m.a0, m.area, m.alen, 990, buf, 16), -EBADF);
        img_free(&m);
}

/* ---- the template and its sidecar ---------------------------------------- */

static char *dir;

static void mkdir_up(void) {
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
}

static void mkdir_down(void) {
        tu_rm_rf(dir);
        free(dir);
}

/* dir/t.iso of size bytes (random, zero at [off, off + AREA) unless
 * dirty), and dir/t.iso.json with `sidecar` (printf'd with off, size). */
static char *write_template(size_t size, size_t off, bool dirty, const char *sidecar) {
        uint64_t seed = 42;
        uint8_t *b = malloc(size);
        cr_assert_not_null(b);
        fill(b, size, &seed);
        if (off < size)
                memset(b + off, 0, size - off < BOOTCFG_AREA_SIZE ? size - off : BOOTCFG_AREA_SIZE);
        if (dirty)
                b[off + BOOTCFG_AREA_SIZE - 1] = 1;
        cr_assert_eq(tu_write_bin(dir, "t.iso", b, size), 0);
        free(b);
        if (sidecar) {
                char text[1024];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
                snprintf(text, sizeof text, sidecar, (unsigned long long) off, (unsigned long long) size);
#pragma GCC diagnostic pop
                cr_assert_eq(tu_write_file(dir, "t.iso.json", text), 0);
        }
        char *path;
        cr_assert_geq(asprintf(&path, "%s/t.iso", dir), 0);
        return path;
}

#define GOOD_SIDECAR                                                                                           \
        "{\"format\": \"muster-iso-template/1\", \"config_offset\": %llu, \"config_size\": 262144, \"size\": %llu," \
        " \"agent_version\": \"0.1.0\"}\n"

/* iso_template_open fails with r and a reason containing `why`. */
static void open_fails(const char *path, int r, const char *why) {
        struct iso_template t;
        char err[512] = "";
        cr_assert_eq(iso_template_open(path, &t, err, sizeof err), r, "%s: %s", path, err);
        cr_assert(strstr(err, why), "reason \"%s\" says %s", err, why);
        cr_assert_eq(t.fd, -1);
        iso_template_close(&t);
}

Test(iso_template, a_good_template_opens, .init = mkdir_up, .fini = mkdir_down) {
        char *path = write_template(3 << 20, (1 << 20) + 12345, false, GOOD_SIDECAR);
        struct iso_template t;
        char err[512] = "";
        cr_assert_eq(iso_template_open(path, &t, err, sizeof err), 0, "%s", err);
        cr_assert_geq(t.fd, 0);
        cr_assert_eq(t.size, 3 << 20);
        cr_assert_eq(t.area_offset, (1 << 20) + 12345);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(t.ino, (uint64_t) st.st_ino);
        cr_assert_eq(t.mtime_ns, (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
        iso_template_close(&t);
        cr_assert_eq(t.fd, -1);
        iso_template_close(&t); /* twice is harmless */
        free(path);
}

/* A sidecar with where the kernel and initramfs are: the area at 2 MiB of
 * a 3 MiB file; pxe is the "pxe" member's text (%%llu pairs taken). */
static char *pxe_template(const char *pxe) {
        char sidecar[1024];
        snprintf(sidecar, sizeof sidecar,
                 "{\"format\": \"muster-iso-template/1\", \"config_offset\": %%llu, \"config_size\": 262144, "
                 "\"size\": %%llu, \"pxe\": %s}", pxe);
        return write_template(3 << 20, 2 << 20, false, sidecar);
}

Test(iso_template, pxe_extents_and_cmdline, .init = mkdir_up, .fini = mkdir_down) {
        char *path = pxe_template("{\"kernel_offset\": 4096, \"kernel_size\": 1000, \"initrd_offset\": 1048576, "
                                  "\"initrd_size\": 1048576, \"cmdline\": \"console=ttyS0 quiet\"}");
        struct iso_template t;
        char err[512] = "";
        cr_assert_eq(iso_template_open(path, &t, err, sizeof err), 0, "%s", err);
        cr_assert(t.pxe);
        cr_assert_eq(t.kernel_offset, 4096);
        cr_assert_eq(t.kernel_size, 1000);
        cr_assert_eq(t.initrd_offset, 1048576);
        cr_assert_eq(t.initrd_size, 1048576);
        cr_assert_str_eq(t.cmdline, "console=ttyS0 quiet");
        iso_template_close(&t);
        free(path);
        /* No "pxe": a template that opens, without PXE files. */
        path = write_template(3 << 20, 2 << 20, false, GOOD_SIDECAR);
        cr_assert_eq(iso_template_open(path, &t, err, sizeof err), 0, "%s", err);
        cr_assert_not(t.pxe);
        iso_template_close(&t);
        free(path);
        static const char *const bad[] = {
                /* the initramfs runs into the config area */
                "{\"kernel_offset\": 0, \"kernel_size\": 10, \"initrd_offset\": 1048576, \"initrd_size\": "
                "1048577, \"cmdline\": \"\"}",
                /* the kernel past the end of the file */
                "{\"kernel_offset\": 3145000, \"kernel_size\": 1000, \"initrd_offset\": 0, \"initrd_size\": 1, "
                "\"cmdline\": \"\"}",
                /* empty */
                "{\"kernel_offset\": 0, \"kernel_size\": 0, \"initrd_offset\": 0, \"initrd_size\": 1, "
                "\"cmdline\": \"\"}",
                /* a command line that would end the script's line */
                "{\"kernel_offset\": 0, \"kernel_size\": 1, \"initrd_offset\": 0, \"initrd_size\": 1, "
                "\"cmdline\": \"quiet\\nboot evil\"}",
                "{\"kernel_offset\": 0, \"kernel_size\": 1, \"initrd_offset\": 0, \"initrd_size\": 1, "
                "\"cmdline\": \"a\\\"b\"}",
                /* not integers, missing members, not an object */
                "{\"kernel_offset\": \"0\", \"kernel_size\": 1, \"initrd_offset\": 0, \"initrd_size\": 1, "
                "\"cmdline\": \"\"}",
                "{\"kernel_offset\": 0, \"kernel_size\": 1, \"initrd_offset\": 0, \"cmdline\": \"\"}",
                "[]",
                NULL,
        };
        for (const char *const *b = bad; *b; b++) {
                path = pxe_template(*b);
                open_fails(path, -EINVAL, "\"pxe\"");
                free(path);
        }
}

/* The pieces of a PXE file: a run of the template then a tail, read at
 * every boundary; the initramfs tail pads to 4 and is one archive. */
Test(iso_template, pxe_read_and_tail, .init = mkdir_up, .fini = mkdir_down) {
        uint64_t seed = 9;
        uint8_t src[5000], tail[37], want[5000 + 37], got[5037];
        fill(src, sizeof src, &seed);
        fill(tail, sizeof tail, &seed);
        cr_assert_eq(tu_write_bin(dir, "src", src, sizeof src), 0);
        char p[4200];
        snprintf(p, sizeof p, "%s/src", dir);
        int fd = open(p, O_RDONLY);
        cr_assert_geq(fd, 0);
        /* The file is src[1000..4000) then the tail. */
        memcpy(want, src + 1000, 3000);
        memcpy(want + 3000, tail, sizeof tail);
        for (uint64_t pos = 0; pos < 3037; pos += 7)
                for (size_t len = 0; pos + len <= 3037; len += 211) {
                        cr_assert_eq(svc_pxe_read(fd, 1000, 3000, tail, sizeof tail, pos, got, len), (ssize_t) len);
                        cr_assert(memcmp(got, want + pos, len) == 0, "pos %llu len %zu", (unsigned long long) pos, len);
                }
        cr_assert_eq(svc_pxe_read(fd, 1000, 3000, tail, sizeof tail, 3000, got, 38), -EOVERFLOW, "past the end");
        cr_assert_eq(svc_pxe_read(fd, 4000, 3000, tail, sizeof tail, 0, got, 3000), -EIO, "the template ended early");
        close(fd);
        for (uint64_t isz = 100; isz < 104; isz++) {
                struct growbuf g;
                cr_assert_eq(pxe_initrd_tail(isz, (const uint8_t *) "cfg", 3, &g), 0);
                size_t pad = (4 - isz % 4) % 4;
                for (size_t i = 0; i < pad; i++)
                        cr_assert_eq(g.data[i], 0);
                cr_assert_eq(memcmp(g.data + pad, "070701", 6), 0, "the archive at a multiple of 4 (size %llu)",
                             (unsigned long long) isz);
                cr_assert_eq((isz + g.len) % 4, 0);
                free(g.data);
        }
        cr_assert_eq(svc_pxe_kind_from_name("initrd"), PXE_INITRD);
        cr_assert_eq(svc_pxe_kind_from_name("boot.ipxe"), PXE_SCRIPT);
        cr_assert_eq(svc_pxe_kind_from_name("vmlinuz"), PXE_VMLINUZ);
        cr_assert_eq(svc_pxe_kind_from_name("initrd.img"), -1);
        cr_assert_eq(svc_pxe_kind_from_name(NULL), -1);
}

Test(iso_template, the_area_may_end_the_file, .init = mkdir_up, .fini = mkdir_down) {
        char *path = write_template(1 << 20, (1 << 20) - BOOTCFG_AREA_SIZE, false, GOOD_SIDECAR);
        struct iso_template t;
        char err[512] = "";
        cr_assert_eq(iso_template_open(path, &t, err, sizeof err), 0, "%s", err);
        iso_template_close(&t);
        free(path);
}

Test(iso_template, bad_templates_and_sidecars, .init = mkdir_up, .fini = mkdir_down) {
        char *path, *missing;
        cr_assert_geq(asprintf(&missing, "%s/none.iso", dir), 0);
        open_fails(missing, -ENOENT, "cannot be opened");
        open_fails("", -ENOENT, "no ISO template is configured");
        open_fails(dir, -EINVAL, "not a regular file");

        path = write_template(1 << 20, 4096, false, NULL);
        open_fails(path, -ENOENT, "sidecar");
        free(path);
        path = write_template(1 << 20, 4096, false, "not json %llu %llu");
        open_fails(path, -EINVAL, "not a JSON object");
        free(path);
        path = write_template(1 << 20, 4096, false,
                              "{\"format\": \"muster-iso-template/2\", \"config_offset\": %llu, "
                              "\"config_size\": 262144, \"size\": %llu}");
        open_fails(path, -EINVAL, "format");
        free(path);
        path = write_template(1 << 20, 4096, false,
                              "{\"format\": \"muster-iso-template/1\", \"config_offset\": \"%llu\", "
                              "\"config_size\": 262144, \"size\": %llu}");
        open_fails(path, -EINVAL, "integers");
        free(path);
        path = write_template(1 << 20, 4096, false,
                              "{\"format\": \"muster-iso-template/1\", \"config_offset\": -%llu, "
                              "\"config_size\": 262144, \"size\": %llu}");
        open_fails(path, -EINVAL, "integers");
        free(path);
        path = write_template(1 << 20, 4096, false,
                              "{\"format\": \"muster-iso-template/1\", \"config_offset\": %llu, "
                              "\"config_size\": 131072, \"size\": %llu}");
        open_fails(path, -EINVAL, "config_size 131072");
        free(path);
        /* The size the sidecar gives is not the file's. */
        path = write_template(1 << 20, 4096, false,
                              "{\"format\": \"muster-iso-template/1\", \"config_offset\": %llu, "
                              "\"config_size\": 262144, \"size\": 1%llu}");
        open_fails(path, -EINVAL, "its sidecar says");
        free(path);
        /* An area that does not fit: partly and wholly outside. */
        path = write_template(1 << 20, (1 << 20) - 4096, false, GOOD_SIDECAR);
        open_fails(path, -EINVAL, "is not inside");
        free(path);
        path = write_template(1 << 20, 5 << 20, false, GOOD_SIDECAR);
        open_fails(path, -EINVAL, "is not inside");
        free(path);
        /* A template already holding bytes in its area is not blank. */
        path = write_template(1 << 20, 8192, true, GOOD_SIDECAR);
        open_fails(path, -EINVAL, "not blank");
        free(path);
        free(missing);
}

Test(iso_template, an_offset_past_int64_is_refused, .init = mkdir_up, .fini = mkdir_down) {
        char *path = write_template(1 << 20, 0, false, NULL);
        char text[256];
        snprintf(text, sizeof text,
                 "{\"format\": \"muster-iso-template/1\", \"config_offset\": 18446744073709551615, "
                 "\"config_size\": 262144, \"size\": %d}", 1 << 20);
        cr_assert_eq(tu_write_file(dir, "t.iso.json", text), 0);
        struct iso_template t;
        char err[512] = "";
        cr_assert_eq(iso_template_open(path, &t, err, sizeof err), -EINVAL, "%s", err);
        free(path);
}

/* ---- area, ETag ----------------------------------------------------------- */

static const char ID[] = "0d5a1b2c-3d4e-4f60-8a7b-9c0d1e2f3a4b";

Test(iso_area, builds_what_bootcfg_decodes) {
        uint8_t *area = malloc(BOOTCFG_AREA_SIZE);
        cr_assert_not_null(area);
        memset(area, 0xff, BOOTCFG_AREA_SIZE);
        struct bootcfg in = { .coordinator_url = "http://192.0.2.1:8090", .infra_env_id = (char *) ID,
                              .token = "tok.en.sig", .coordinator_key_pem = "-----BEGIN PUBLIC KEY-----\nx\n",
                              .ca_pem = NULL },
                       out = { 0 };
        cr_assert_eq(iso_build_area(&in, area), 0);
        cr_assert_eq(area[BOOTCFG_AREA_SIZE - 1], 0, "zeros to the end");
        char err[256];
        cr_assert_eq(bootcfg_decode(area, BOOTCFG_AREA_SIZE, &out, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(out.coordinator_url, in.coordinator_url);
        cr_assert_str_eq(out.infra_env_id, ID);
        cr_assert_str_eq(out.token, in.token);
        cr_assert_str_eq(out.coordinator_key_pem, in.coordinator_key_pem);
        cr_assert_null(out.ca_pem);
        bootcfg_free(&out);
        in.token = NULL;
        cr_assert_eq(iso_build_area(&in, area), -EINVAL);
        free(area);
}

Test(iso_area, etag_follows_template_and_area) {
        struct iso_template t = { .fd = -1, .size = 1 << 20, .area_offset = 32768, .dev = 2049, .ino = 77,
                                  .mtime_ns = 1700000000123456789LL };
        uint8_t *area = calloc(1, BOOTCFG_AREA_SIZE);
        cr_assert_not_null(area);
        char a[ISO_ETAG_MAX], b[ISO_ETAG_MAX];
        iso_etag(&t, area, BOOTCFG_AREA_SIZE, a);
        cr_assert_eq(strlen(a), 66);
        cr_assert(a[0] == '"' && a[65] == '"', "%s", a);
        cr_assert_eq(strspn(a + 1, "0123456789abcdef"), 64);
        iso_etag(&t, area, BOOTCFG_AREA_SIZE, b);
        cr_assert_str_eq(a, b, "stable");
        area[BOOTCFG_AREA_SIZE - 1] = 1; /* another token */
        iso_etag(&t, area, BOOTCFG_AREA_SIZE, b);
        cr_assert_str_neq(a, b);
        area[BOOTCFG_AREA_SIZE - 1] = 0;
        struct iso_template u = t;
        u.mtime_ns++;
        iso_etag(&u, area, BOOTCFG_AREA_SIZE, b);
        cr_assert_str_neq(a, b, "mtime");
        u = t;
        u.ino++;
        iso_etag(&u, area, BOOTCFG_AREA_SIZE, b);
        cr_assert_str_neq(a, b, "inode");
        u = t;
        u.dev++;
        iso_etag(&u, area, BOOTCFG_AREA_SIZE, b);
        cr_assert_str_neq(a, b, "device");
        u = t;
        u.size++;
        iso_etag(&u, area, BOOTCFG_AREA_SIZE, b);
        cr_assert_str_neq(a, b, "size");
        u = t;
        u.area_offset += 2048;
        iso_etag(&u, area, BOOTCFG_AREA_SIZE, b);
        cr_assert_str_neq(a, b, "offset");
        free(area);
}

/* ---- Range --------------------------------------------------------------- */

/* http_range_parse(h, size) gives r and, for r == 1, [start, start + len). */
static void range(const char *h, uint64_t size, int r, uint64_t start, uint64_t len) {
        uint64_t s = 12345, l = 67890;
        cr_assert_eq(http_range_parse(h, size, &s, &l), r, "Range: %s (size %llu)", h ? h : "(none)",
                     (unsigned long long) size);
        if (r == 1)
                cr_assert(s == start && l == len, "Range: %s gives %llu+%llu, want %llu+%llu", h,
                          (unsigned long long) s, (unsigned long long) l, (unsigned long long) start,
                          (unsigned long long) len);
        else
                cr_assert(s == 12345 && l == 67890, "Range: %s leaves start and len alone", h ? h : "(none)");
}

Test(iso_range, single_ranges) {
        range("bytes=0-0", 1000, 1, 0, 1);
        range("bytes=0-999", 1000, 1, 0, 1000);
        range("bytes=0-1999", 1000, 1, 0, 1000);       /* the end is clamped */
        range("bytes=10-19", 1000, 1, 10, 10);
        range("bytes=999-999", 1000, 1, 999, 1);
        range("bytes=999-", 1000, 1, 999, 1);
        range("bytes=500-", 1000, 1, 500, 500);
        range("bytes=0-", 1000, 1, 0, 1000);
        range("bytes=-1", 1000, 1, 999, 1);
        range("bytes=-500", 1000, 1, 500, 500);
        range("bytes=-1000", 1000, 1, 0, 1000);
        range("bytes=-5000", 1000, 1, 0, 1000);        /* a suffix longer than the body: all of it */
        range("bytes=5-99999999999999999999999", 1000, 1, 5, 995); /* huge last: clamped */
        range("bytes=-99999999999999999999999", 1000, 1, 0, 1000);
        range("Bytes = 10-19 ", 1000, 1, 10, 10);      /* unit case-insensitive, blanks around */
        range("bytes= 10-19", 1000, 1, 10, 10);
}

Test(iso_range, unsatisfiable) {
        range("bytes=1000-", 1000, -ERANGE, 0, 0);
        range("bytes=1000-1000", 1000, -ERANGE, 0, 0);
        range("bytes=5000-6000", 1000, -ERANGE, 0, 0);
        range("bytes=-0", 1000, -ERANGE, 0, 0);
        range("bytes=99999999999999999999999-", 1000, -ERANGE, 0, 0);
        range("bytes=0-", 0, -ERANGE, 0, 0);
        range("bytes=-5", 0, -ERANGE, 0, 0);
}

Test(iso_range, the_whole_body) {
        const char *const whole[] = {
                NULL, "", "bytes", "bytes=", "bytes=-", "bytes=a-b", "bytes=1-a", "bytes=1--2", "bytes=20-10",
                "bytes=0-1,5-6", "bytes=0-1, 5-6", "bytes=-1,0-0", "bytes=0-1,", "items=0-1", "bytes 0-1",
                "bytes=0-1 x", "bytes=+1-2", "bytes=0x10-20", "bytes=1 -2", "bytes=1- 2", "bytesx=0-1",
                "bytes=0-1\r\n",
        };
        for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
                range(whole[i], 1000, 0, 0, 0);
}

/* ---- If-None-Match, If-Range ----------------------------------------------- */

Test(iso_etag, if_none_match) {
        const char *e = "\"abc\"";
        cr_assert(http_etag_none_match("\"abc\"", e));
        cr_assert(http_etag_none_match(" \"abc\" ", e));
        cr_assert(http_etag_none_match("W/\"abc\"", e), "weak comparison");
        cr_assert(http_etag_none_match("\"x\", \"abc\"", e));
        cr_assert(http_etag_none_match("\"x\",W/\"abc\"", e));
        cr_assert(http_etag_none_match("*", e));
        cr_assert(http_etag_none_match(" * ", e));
        cr_assert_not(http_etag_none_match(NULL, e));
        cr_assert_not(http_etag_none_match("", e));
        cr_assert_not(http_etag_none_match("\"abcd\"", e));
        cr_assert_not(http_etag_none_match("\"ab\"", e));
        cr_assert_not(http_etag_none_match("abc", e));
        cr_assert_not(http_etag_none_match("\"x\", abc", e));
        cr_assert_not(http_etag_none_match("\"abc", e));
        cr_assert_not(http_etag_none_match("*, \"x\"", e));
}

Test(iso_etag, if_range) {
        const char *e = "\"abc\"";
        cr_assert(http_etag_if_range("\"abc\"", e));
        cr_assert(http_etag_if_range(" \"abc\" ", e));
        cr_assert_not(http_etag_if_range("W/\"abc\"", e), "strong comparison");
        cr_assert_not(http_etag_if_range("\"abd\"", e));
        cr_assert_not(http_etag_if_range("\"abc\", \"abc\"", e));
        cr_assert_not(http_etag_if_range("Tue, 15 Nov 1994 08:12:31 GMT", e), "a date never matches");
        cr_assert_not(http_etag_if_range("", e));
        cr_assert_not(http_etag_if_range(NULL, e));
}

/* ---- Host, file name ------------------------------------------------------- */

Test(iso_names, host_header) {
        const char *const good[] = { "localhost", "127.0.0.1:8090", "[::1]:8090", "musterd.example.com",
                                     "MUSTERD-1.lab:80", "[fe80::1]" };
        const char *const bad[] = { "", "a b", "a/b", "a@b", "a?b", "a#b", "h\r\nX: y", "a%20b", "user:pw@h",
                                    "h\\x", "h;x", NULL };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++)
                cr_assert(http_host_ok(good[i]), "%s", good[i]);
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                cr_assert_not(http_host_ok(bad[i]), "%s", bad[i] ? bad[i] : "(null)");
        char longhost[300];
        memset(longhost, 'a', sizeof longhost - 1);
        longhost[sizeof longhost - 1] = '\0';
        cr_assert_not(http_host_ok(longhost));
        longhost[255] = '\0';
        cr_assert(http_host_ok(longhost));
}

Test(iso_names, file_name) {
        char out[64];
        const char *const cases[][2] = {
                { "rack-7", "rack-7.iso" },
                { "lab_2.eu", "lab_2.eu.iso" },
                { "a b/c\"d", "a_b_c_d.iso" },
                { "../../etc/passwd", "_._.._etc_passwd.iso" },
                { ".hidden", "_hidden.iso" },
                { "", "discovery.iso" },
                { "\"\"", "discovery.iso" },
                { "\xd0\xaf\xd1\x89\xd0\xb8\xd0\xba", "discovery.iso" },
                { "r\xc3\xa9seau", "r__seau.iso" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                svc_iso_file_name(cases[i][0], out, sizeof out);
                cr_assert_str_eq(out, cases[i][1], "%s", cases[i][0]);
        }
        svc_iso_file_name(NULL, out, sizeof out);
        cr_assert_str_eq(out, "discovery.iso");
        char longname[200];
        memset(longname, 'x', sizeof longname - 1);
        longname[sizeof longname - 1] = '\0';
        svc_iso_file_name(longname, out, sizeof out);
        cr_assert_eq(strlen(out), sizeof out - 1);
        cr_assert_str_eq(out + strlen(out) - 4, ".iso");
        svc_iso_file_name(longname, out, 16);
        cr_assert_str_eq(out, "xxxxxxxxxxx.iso");
}
