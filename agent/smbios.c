/* SMBIOS structure walker (DMTF DSP0134): types 0 (BIOS), 1 (system),
 * 2 (baseboard) and 17 (memory device). Bounds are checked on every read:
 * the table may be cut short or hostile. */
#include "smbios.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysroot.h"

static uint16_t rd16(const uint8_t *p) { return (uint16_t) (p[0] | (p[1] << 8)); }
static uint32_t rd32(const uint8_t *p) {
        return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

/* String number `idx` (1-based) of the structure whose string set starts at
 * `s` and ends before `end`. Printable ASCII only; trimmed; NULL if empty. */
static char *smbios_string(const uint8_t *s, const uint8_t *end, uint8_t idx) {
        if (idx == 0)
                return NULL;
        for (uint8_t i = 1; s < end && *s; i++) {
                const uint8_t *e = memchr(s, 0, (size_t) (end - s));
                if (!e)
                        return NULL;
                if (i == idx) {
                        char buf[256];
                        size_t n = 0;
                        for (const uint8_t *c = s; c < e && n < sizeof buf - 1; c++)
                                buf[n++] = (*c >= 0x20 && *c < 0x7f) ? (char) *c : '?';
                        buf[n] = '\0';
                        return str_dup_trimmed(buf);
                }
                s = e + 1;
        }
        return NULL;
}

static void set_once(char **dst, char *v) {
        if (*dst || !v) {
                free(v);
                return;
        }
        *dst = v;
}

static char *uuid_text(const uint8_t *u, bool swap) {
        bool all1 = true;
        for (int i = 0; i < 16; i++)
                all1 &= u[i] == 0xff;
        if (all1)
                return NULL; /* "not present" per the spec; all-zero ("not set") is
                              * kept and judged junk by the host-id rules */
        uint8_t b[16];
        memcpy(b, u, 16);
        if (swap) { /* since SMBIOS 2.6 the first three fields are little-endian */
                uint8_t t;
                t = b[0], b[0] = b[3], b[3] = t;
                t = b[1], b[1] = b[2], b[2] = t;
                t = b[4], b[4] = b[5], b[5] = t;
                t = b[6], b[6] = b[7], b[7] = t;
        }
        char *s;
        if (asprintf(&s, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                     b[12], b[13], b[14], b[15]) < 0)
                return NULL;
        return s;
}

static void parse_entry_point(const uint8_t *ep, size_t len, struct smbios_info *o) {
        if (!ep)
                return;
        if (len >= 0x18 && memcmp(ep, "_SM3_", 5) == 0) {
                o->major = ep[7];
                o->minor = ep[8];
        } else if (len >= 0x1f && memcmp(ep, "_SM_", 4) == 0) {
                o->major = ep[6];
                o->minor = ep[7];
        } else if (len >= 0x0f && memcmp(ep, "_DMI_", 5) == 0) {
                o->major = ep[14] >> 4;
                o->minor = ep[14] & 0x0f;
        }
}

int smbios_parse(const uint8_t *ep, size_t ep_len, const uint8_t *table, size_t len,
                 struct smbios_info *o) {
        *o = (struct smbios_info) { .bios_vm_bit = -1, .memory_bytes = -1 };
        parse_entry_point(ep, ep_len, o);
        bool swap_uuid = o->major == 0 || o->major > 2 || (o->major == 2 && o->minor >= 6);

        const uint8_t *p = table, *end = table ? table + len : NULL;
        while (p && p + 4 <= end) {
                uint8_t type = p[0], slen = p[1];
                if (slen < 4 || p + slen > end)
                        break;
                /* The string set ends with two NULs. */
                const uint8_t *s = p + slen, *q = s;
                while (q + 1 < end && !(q[0] == 0 && q[1] == 0))
                        q++;
                if (q + 1 >= end)
                        break;
                const uint8_t *send = q + 1;
                o->structures++;

                switch (type) {
                case 0:
                        if (slen >= 0x09) {
                                set_once(&o->bios_vendor, smbios_string(s, send, p[0x04]));
                                set_once(&o->bios_version, smbios_string(s, send, p[0x05]));
                                set_once(&o->bios_date, smbios_string(s, send, p[0x08]));
                        }
                        if (slen >= 0x14 && o->bios_vm_bit < 0)
                                o->bios_vm_bit = (p[0x13] >> 4) & 1;
                        break;
                case 1:
                        if (slen >= 0x08) {
                                set_once(&o->sys_manufacturer, smbios_string(s, send, p[0x04]));
                                set_once(&o->sys_product, smbios_string(s, send, p[0x05]));
                                set_once(&o->sys_serial, smbios_string(s, send, p[0x07]));
                        }
                        if (slen >= 0x18 && !o->sys_uuid)
                                o->sys_uuid = uuid_text(p + 0x08, swap_uuid);
                        break;
                case 2:
                        if (slen >= 0x08) {
                                set_once(&o->board_manufacturer, smbios_string(s, send, p[0x04]));
                                set_once(&o->board_product, smbios_string(s, send, p[0x05]));
                                set_once(&o->board_serial, smbios_string(s, send, p[0x07]));
                        }
                        break;
                case 4:
                        if (slen >= 0x16) {
                                uint16_t mhz = rd16(p + 0x14);
                                /* 0 = unknown, 0xffff = not reported. */
                                if (mhz != 0 && mhz != 0xffff && mhz > o->cpu_max_mhz)
                                        o->cpu_max_mhz = mhz;
                        }
                        break;
                case 17:
                        if (slen >= 0x0e) {
                                uint16_t sz = rd16(p + 0x0c);
                                int64_t bytes = 0;
                                if (sz == 0 || sz == 0xffff)
                                        break; /* empty slot / unknown */
                                if (sz == 0x7fff) {
                                        if (slen < 0x20)
                                                break;
                                        bytes = (int64_t) (rd32(p + 0x1c) & 0x7fffffff) << 20;
                                } else if (sz & 0x8000)
                                        bytes = (int64_t) (sz & 0x7fff) << 10;
                                else
                                        bytes = (int64_t) sz << 20;
                                if (o->memory_bytes < 0)
                                        o->memory_bytes = 0;
                                o->memory_bytes += bytes;
                                o->memory_devices++;
                        }
                        break;
                default:
                        break;
                }
                if (type == 127)
                        break;
                p = send + 1;
        }
        return o->structures > 0 ? 0 : -EINVAL;
}

void smbios_info_free(struct smbios_info *s) {
        char **f[] = { &s->bios_vendor, &s->bios_version, &s->bios_date, &s->sys_manufacturer,
                       &s->sys_product, &s->sys_serial, &s->sys_uuid, &s->board_manufacturer,
                       &s->board_product, &s->board_serial };
        for (size_t i = 0; i < sizeof f / sizeof *f; i++)
                free(*f[i]);
        *s = (struct smbios_info) { .bios_vm_bit = -1, .memory_bytes = -1 };
}
