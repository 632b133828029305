/* Hardware probes: each back-end reads one source through the sysroot into
 * the neutral inventory structs; pure helpers (hostid.h, diskrules.h,
 * procparse.h, smbios.h) decide what the raw data means. Probes never fail
 * the inventory as a whole: what cannot be read stays unset. */
#pragma once
#include "inventory.h"
#include "sysroot.h"

struct smbios_info;
/* The SMBIOS tables under /sys/firmware/dmi/tables, parsed (smbios.h).
 * -errno when unreadable; *info is always initialised. */
int probe_smbios(const struct sysroot *sr, struct smbios_info *info);
/* Max frequency: cpufreq, else SMBIOS type 4 Max Speed, else cpuinfo MHz. */
int probe_cpu(const struct sysroot *sr, const struct smbios_info *smbios, struct inv_cpu *cpu);
/* `smbios` is what probe_smbios() read (its type 17 sizes). */
int probe_memory(const struct sysroot *sr, const struct smbios_info *smbios, struct inv_memory *mem);
/* SMBIOS tables and /sys/class/dmi/id: vendor, product, serial, uuid,
 * firmware, virtual (`cpu` gives the hypervisor flag). Also returns the
 * board serial for the host-id choice. */
int probe_system(const struct sysroot *sr, const struct smbios_info *smbios,
                 const struct inv_cpu *cpu, struct inv_system_vendor *sv, char **board_serial);
int probe_boot(const struct sysroot *sr, struct inv_boot *boot);
/* Whole disks and their partitions; fills inv->disks and inv->truncated.
 * Disks under `min_install_bytes` are not offered for installation. */
int probe_disks(const struct sysroot *sr, int64_t min_install_bytes, struct inventory *inv);
/* Links, addresses and routes (libnl-route-3 on the live system, sysfs and
 * /proc/net under a sysroot); fills interfaces, routes and truncated. */
int probe_net(const struct sysroot *sr, struct inventory *inv);
/* PCI display controllers. */
int probe_gpus(const struct sysroot *sr, struct inventory *inv);
int probe_tpm(const struct sysroot *sr, char **version);
int probe_hostname(const struct sysroot *sr, char **hostname);

struct probe_options {
        const char *sysroot;         /* NULL or "/" for the running system */
        int64_t min_install_bytes;   /* 0: DISK_MIN_INSTALL_BYTES_DEFAULT */
};

/* The whole document. 0, or -errno if the sysroot cannot be opened. */
int inventory_probe(const struct probe_options *opts, struct inventory *inv);
