/* SMBIOS parser: tables built per DSP0134 in the test, cut-short and hostile ones. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "smbios.h"

struct tbl {
        uint8_t b[4096];
        size_t n;
};

/* Append one structure: formatted area `fmt` (its bytes 0-1 are filled in
 * here) followed by the strings. */
static void add(struct tbl *t, uint8_t type, uint8_t *fmt, uint8_t len, const char *const *strs, int nstr) {
        fmt[0] = type;
        fmt[1] = len;
        memcpy(t->b + t->n, fmt, len);
        t->n += len;
        if (nstr == 0) {
                t->b[t->n++] = 0;
        }
        for (int i = 0; i < nstr; i++) {
                size_t l = strlen(strs[i]) + 1;
                memcpy(t->b + t->n, strs[i], l);
                t->n += l;
        }
        t->b[t->n++] = 0;
}

static void build(struct tbl *t, uint16_t mem_a, uint32_t ext_b) {
        memset(t, 0, sizeof *t);
        uint8_t bios[0x18] = { 0 };
        bios[0x04] = 1, bios[0x05] = 2, bios[0x08] = 3;
        bios[0x13] = 0x10; /* characteristics ext. byte 2, bit 4: virtual machine */
        const char *bs[] = { "SeaBIOS", "1.16.2-debian", "04/01/2014" };
        add(t, 0, bios, sizeof bios, bs, 3);

        uint8_t sys[0x1b] = { 0 };
        sys[0x04] = 1, sys[0x05] = 2, sys[0x07] = 3;
        const uint8_t uuid[16] = { 0x44, 0x45, 0x4c, 0x4c, 0x42, 0x00, 0x10, 0x35,
                                   0x80, 0x56, 0xb4, 0xc0, 0x4f, 0x4a, 0x5a, 0x32 };
        memcpy(sys + 0x08, uuid, 16);
        const char *ss[] = { "Dell Inc.", "PowerEdge R640", "CZJ1234" };
        add(t, 1, sys, sizeof sys, ss, 3);

        uint8_t cpu[0x2a] = { 0 };
        cpu[0x14] = 0x80, cpu[0x15] = 0x0c; /* Max Speed 3200 MHz */
        add(t, 4, cpu, sizeof cpu, NULL, 0);
        uint8_t cpu2[0x2a] = { 0 };
        cpu2[0x14] = 0xff, cpu2[0x15] = 0xff; /* unknown */
        add(t, 4, cpu2, sizeof cpu2, NULL, 0);

        uint8_t board[0x08] = { 0 };
        board[0x04] = 1, board[0x07] = 2;
        const char *brd[] = { "Dell Inc.", "BSN-42" };
        add(t, 2, board, sizeof board, brd, 2);

        uint8_t m1[0x22] = { 0 };
        m1[0x0c] = (uint8_t) (mem_a & 0xff), m1[0x0d] = (uint8_t) (mem_a >> 8);
        add(t, 17, m1, sizeof m1, NULL, 0);
        uint8_t m2[0x22] = { 0 };
        m2[0x0c] = 0xff, m2[0x0d] = 0x7f; /* 0x7fff: look at Extended Size */
        m2[0x1c] = (uint8_t) ext_b, m2[0x1d] = (uint8_t) (ext_b >> 8), m2[0x1e] = (uint8_t) (ext_b >> 16);
        add(t, 17, m2, sizeof m2, NULL, 0);
        uint8_t empty[0x22] = { 0 }; /* an empty slot: size 0 */
        add(t, 17, empty, sizeof empty, NULL, 0);
        uint8_t end[4] = { 0 };
        add(t, 127, end, 4, NULL, 0);
}

static const uint8_t ep3[0x18] = { '_', 'S', 'M', '3', '_', 0, 0x18, 3, 2, 0 };

Test(smbios, full_table) {
        struct tbl t;
        struct smbios_info s;
        build(&t, 16384, 65536); /* 16 GiB + 64 GiB */
        cr_assert_eq(smbios_parse(ep3, sizeof ep3, t.b, t.n, &s), 0);
        cr_assert_eq(s.major, 3);
        cr_assert_eq(s.minor, 2);
        cr_assert_str_eq(s.bios_vendor, "SeaBIOS");
        cr_assert_str_eq(s.bios_version, "1.16.2-debian");
        cr_assert_str_eq(s.bios_date, "04/01/2014");
        cr_assert_eq(s.bios_vm_bit, 1);
        cr_assert_str_eq(s.sys_manufacturer, "Dell Inc.");
        cr_assert_str_eq(s.sys_product, "PowerEdge R640");
        cr_assert_str_eq(s.sys_serial, "CZJ1234");
        /* First three fields are little-endian since 2.6. */
        cr_assert_str_eq(s.sys_uuid, "4c4c4544-0042-3510-8056-b4c04f4a5a32");
        cr_assert_str_eq(s.board_serial, "BSN-42");
        cr_assert_eq(s.cpu_max_mhz, 3200);
        cr_assert_eq(s.memory_devices, 2);
        cr_assert_eq(s.memory_bytes, (16384LL + 65536LL) << 20);
        smbios_info_free(&s);
}

Test(smbios, old_version_uuid_not_swapped_and_kb_units) {
        const uint8_t ep2[0x1f] = { '_', 'S', 'M', '_', 0, 0x1f, 2, 4 };
        struct tbl t;
        struct smbios_info s;
        build(&t, 0x8000 | 512, 0); /* 512 KiB in KB units */
        cr_assert_eq(smbios_parse(ep2, sizeof ep2, t.b, t.n, &s), 0);
        cr_assert_str_eq(s.sys_uuid, "44454c4c-4200-1035-8056-b4c04f4a5a32");
        cr_assert_eq(s.memory_bytes, 512LL << 10);
        smbios_info_free(&s);
}

Test(smbios, cut_short_at_every_length) {
        struct tbl t;
        build(&t, 8192, 8192);
        for (size_t len = 0; len <= t.n; len++) {
                uint8_t *copy = malloc(len ? len : 1);
                memcpy(copy, t.b, len);
                struct smbios_info s;
                int r = smbios_parse(ep3, sizeof ep3, copy, len, &s);
                cr_assert(r == 0 || r == -EINVAL);
                if (len < 8)
                        cr_assert_eq(r, -EINVAL);
                smbios_info_free(&s);
                free(copy);
        }
}

Test(smbios, hostile_lengths_and_strings) {
        /* A structure claiming length 255 in a 10-byte table, a length < 4,
         * string indexes past the set, and no entry point. */
        uint8_t a[10] = { 1, 255, 0, 0, 1, 2, 3, 4, 0, 0 };
        struct smbios_info s;
        cr_assert_eq(smbios_parse(NULL, 0, a, sizeof a, &s), -EINVAL);
        smbios_info_free(&s);
        uint8_t b[8] = { 1, 2, 0, 0, 0, 0, 0, 0 };
        cr_assert_eq(smbios_parse(NULL, 0, b, sizeof b, &s), -EINVAL);
        smbios_info_free(&s);
        uint8_t c[0x1b + 6] = { 1, 0x1b, 0, 0, 9, 9, 9, 9 };
        memcpy(c + 0x1b, "A\0B\0\0", 5);
        cr_assert_eq(smbios_parse(NULL, 0, c, sizeof c, &s), 0);
        cr_assert_null(s.sys_manufacturer, "string 9 of a set of 2 does not exist");
        smbios_info_free(&s);
        cr_assert_eq(smbios_parse(NULL, 0, NULL, 0, &s), -EINVAL);
        smbios_info_free(&s);
}
