/* CPU and memory probes: /proc/cpuinfo and /proc/meminfo parsed by
 * procparse, topology and frequency from /sys/devices/system/cpu, physical
 * memory from SMBIOS type 17 or the memory block devices. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cleanup.h"
#include "probe.h"
#include "procparse.h"
#include "smbios.h"

#define MAX_TOPO_CPUS 8192

struct topo_key { int64_t pkg, core; };

static bool seen(const struct topo_key *k, size_t n, int64_t pkg, int64_t core) {
        for (size_t i = 0; i < n; i++)
                if (k[i].pkg == pkg && k[i].core == core)
                        return true;
        return false;
}

/* Distinct packages and cores of online CPUs from sysfs topology; -ENOENT
 * if sysfs has no topology. Also the max cpuinfo_max_freq in kHz. */
static int sysfs_topology(const struct sysroot *sr, int64_t *sockets, int64_t *cores, int64_t *max_khz) {
        _cleanup_closedir_ DIR *d = sr_opendir(sr, "/sys/devices/system/cpu");
        _cleanup_free_ struct topo_key *pk = calloc(MAX_TOPO_CPUS, sizeof *pk);
        _cleanup_free_ struct topo_key *ck = calloc(MAX_TOPO_CPUS, sizeof *ck);
        size_t np = 0, nc = 0;
        bool incomplete = false;
        struct dirent *de;

        *max_khz = -1;
        if (!d)
                return -errno;
        if (!pk || !ck)
                return -ENOMEM;
        while ((de = readdir(d))) {
                const char *n = de->d_name;
                if (strncmp(n, "cpu", 3) != 0 || !isdigit((unsigned char) n[3]))
                        continue;
                int64_t online = 1, pkg, core, khz;
                /* cpu0 usually has no "online" file: it cannot be offlined. */
                if (sr_read_i64f(sr, &online, "/sys/devices/system/cpu/%s/online", n) == 0 && online != 1)
                        continue;
                if (sr_read_i64f(sr, &khz, "/sys/devices/system/cpu/%s/cpufreq/cpuinfo_max_freq", n) == 0 &&
                    khz > *max_khz)
                        *max_khz = khz;
                if (sr_read_i64f(sr, &pkg, "/sys/devices/system/cpu/%s/topology/physical_package_id", n) < 0 ||
                    sr_read_i64f(sr, &core, "/sys/devices/system/cpu/%s/topology/core_id", n) < 0) {
                        incomplete = true;
                        continue;
                }
                if (!seen(pk, np, pkg, 0) && np < MAX_TOPO_CPUS)
                        pk[np++] = (struct topo_key) { pkg, 0 };
                if (!seen(ck, nc, pkg, core) && nc < MAX_TOPO_CPUS)
                        ck[nc++] = (struct topo_key) { pkg, core };
        }
        if (incomplete || np == 0)
                return -ENOENT;
        *sockets = (int64_t) np;
        *cores = (int64_t) nc;
        return 0;
}

int probe_cpu(const struct sysroot *sr, const struct smbios_info *smbios, struct inv_cpu *cpu) {
        _cleanup_free_ char *text = sr_read_all(sr, "/proc/cpuinfo", 16 << 20, NULL);
        struct cpuinfo ci = { .sockets = -1, .cores = -1, .max_mhz = -1 };
        char buf[256];
        int64_t sockets = -1, cores = -1, max_khz = -1;

        if (text && cpuinfo_parse(text, &ci) == 0) {
                cpu->model_name = TAKE_PTR(ci.model_name);
                cpu->flags = ci.flags;
                ci.flags = (struct strv) { 0 };
        }
        if (sr->live) {
                struct utsname u;
                if (uname(&u) == 0)
                        cpu->architecture = strdup(u.machine);
        } else if (sr_read_str(sr, "/proc/sys/kernel/arch", buf, sizeof buf) > 0)
                cpu->architecture = strdup(buf);
        if (!cpu->architecture && ci.arch_hint)
                cpu->architecture = TAKE_PTR(ci.arch_hint);

        if (sr_read_str(sr, "/sys/devices/system/cpu/online", buf, sizeof buf) < 0 ||
            cpulist_count(buf, 1 << 20, &cpu->count) < 0)
                cpu->count = ci.processors > 0 ? ci.processors : INV_UNSET;

        if (sysfs_topology(sr, &sockets, &cores, &max_khz) < 0) {
                sockets = ci.sockets;
                cores = ci.cores;
        }
        if (sockets > 0 && cores >= sockets && cores % sockets == 0) {
                cpu->sockets = sockets;
                cpu->cores_per_socket = cores / sockets;
                if (cpu->count > 0 && cpu->count % cores == 0)
                        cpu->threads_per_core = cpu->count / cores;
        }
        if (max_khz > 0)
                cpu->frequency_mhz = (double) max_khz / 1000.0;
        else if (smbios->cpu_max_mhz > 0)
                cpu->frequency_mhz = smbios->cpu_max_mhz;
        else if (ci.max_mhz > 0)
                cpu->frequency_mhz = ci.max_mhz;
        cpuinfo_free(&ci);
        return 0;
}

/* Sum of online memory blocks; -ENOENT when sysfs has none. */
static int memory_blocks(const struct sysroot *sr, int64_t *bytes) {
        char buf[64];
        int64_t block = 0, online = 0;
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        /* block_size_bytes is hex without a 0x prefix. */
        if (sr_read_str(sr, "/sys/devices/system/memory/block_size_bytes", buf, sizeof buf) <= 0)
                return -ENOENT;
        char *end;
        errno = 0;
        block = (int64_t) strtoull(buf, &end, 16);
        if (errno || *end || block <= 0)
                return -EINVAL;
        if (!(d = sr_opendir(sr, "/sys/devices/system/memory")))
                return -errno;
        while ((de = readdir(d))) {
                if (strncmp(de->d_name, "memory", 6) != 0 || !isdigit((unsigned char) de->d_name[6]))
                        continue;
                if (sr_read_strf(sr, buf, sizeof buf, "/sys/devices/system/memory/%s/state", de->d_name) > 0 &&
                    strcmp(buf, "online") == 0)
                        online++;
        }
        if (online == 0 || online > INT64_MAX / block)
                return -ENOENT;
        *bytes = online * block;
        return 0;
}

int probe_smbios(const struct sysroot *sr, struct smbios_info *info) {
        size_t ep_len = 0, len = 0;
        _cleanup_free_ char *ep = sr_read_all(sr, "/sys/firmware/dmi/tables/smbios_entry_point", 4096, &ep_len);
        _cleanup_free_ char *table = sr_read_all(sr, "/sys/firmware/dmi/tables/DMI", 4 << 20, &len);
        if (!table) {
                *info = (struct smbios_info) { .bios_vm_bit = -1, .memory_bytes = -1 };
                return -errno;
        }
        return smbios_parse((const uint8_t *) ep, ep ? ep_len : 0, (const uint8_t *) table, len, info);
}

int probe_memory(const struct sysroot *sr, const struct smbios_info *smbios, struct inv_memory *mem) {
        _cleanup_free_ char *text = sr_read_all(sr, "/proc/meminfo", 1 << 20, NULL);
        int64_t v;

        if (text && meminfo_get(text, "MemTotal", &v) == 0)
                mem->usable_bytes = v;
        if (smbios->memory_bytes > 0) {
                mem->physical_bytes = smbios->memory_bytes;
                mem->physical_bytes_method = strdup("smbios");
        } else if (memory_blocks(sr, &v) == 0) {
                mem->physical_bytes = v;
                mem->physical_bytes_method = strdup("memory-blocks");
        } else if (mem->usable_bytes != INV_UNSET) {
                mem->physical_bytes = mem->usable_bytes;
                mem->physical_bytes_method = strdup("meminfo");
        }
        return 0;
}
