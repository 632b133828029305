/* Pure SMBIOS (DMI) table parser: the entry point and structure table as
 * the kernel exposes them in /sys/firmware/dmi/tables. No I/O. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct smbios_info {
        int major, minor;            /* SMBIOS version from the entry point, 0 unknown */
        char *bios_vendor, *bios_version, *bios_date;
        int bios_vm_bit;             /* BIOS characteristics ext. 2 bit 4: -1 unknown */
        char *sys_manufacturer, *sys_product, *sys_serial;
        char *sys_uuid;              /* lower-case text form; NULL if absent */
        char *board_manufacturer, *board_product, *board_serial;
        int64_t memory_bytes;        /* sum of type 17 sizes; -1 if no type 17 */
        int cpu_max_mhz;             /* largest type 4 "Max Speed"; 0 unknown */
        int memory_devices;          /* populated type 17 structures */
        int structures;              /* structures parsed */
};

/* Parse the entry point (may be NULL/empty: the version is then unknown and
 * the UUID byte order assumed modern) and the table. Returns 0 when at least
 * one structure was read, -EINVAL for garbage. Partial tables give what
 * they hold. */
int smbios_parse(const uint8_t *ep, size_t ep_len, const uint8_t *table, size_t len,
                 struct smbios_info *out);
void smbios_info_free(struct smbios_info *s);
