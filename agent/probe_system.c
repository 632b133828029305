/* System identity and boot: SMBIOS tables (root only) with
 * /sys/class/dmi/id as the fallback, virtualisation signals, EFI state and
 * the kernel command line. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "hostid.h"
#include "probe.h"
#include "procparse.h"
#include "smbios.h"


/* Take an SMBIOS string, else the dmi/id attribute; junk values are dropped. */
static char *pick(const char *from_table, const struct sysroot *sr, const char *dmi_attr) {
        char buf[256];
        if (from_table && !smbios_value_is_junk(from_table))
                return strdup(from_table);
        if (sr_read_strf(sr, buf, sizeof buf, "/sys/class/dmi/id/%s", dmi_attr) > 0 &&
            !smbios_value_is_junk(buf))
                return strdup(buf);
        return NULL;
}

int probe_system(const struct sysroot *sr, const struct smbios_info *info,
                 const struct inv_cpu *cpu, struct inv_system_vendor *sv, char **board_serial) {
        char buf[256];

        sv->manufacturer = pick(info->sys_manufacturer, sr, "sys_vendor");
        sv->product_name = pick(info->sys_product, sr, "product_name");
        sv->serial_number = pick(info->sys_serial, sr, "product_serial");
        sv->firmware_vendor = pick(info->bios_vendor, sr, "bios_vendor");
        sv->firmware_version = pick(info->bios_version, sr, "bios_version");
        sv->firmware_date = pick(info->bios_date, sr, "bios_date");
        *board_serial = pick(info->board_serial, sr, "board_serial");

        char *uuid = info->sys_uuid ? strdup(info->sys_uuid) : NULL;
        if (!uuid && sr_read_str(sr, "/sys/class/dmi/id/product_uuid", buf, sizeof buf) > 0)
                uuid = strdup(buf);
        if (uuid && !smbios_uuid_is_junk(uuid)) {
                for (char *c = uuid; *c; c++)
                        *c = (char) tolower((unsigned char) *c);
                sv->uuid = uuid;
        } else
                free(uuid);

        /* Virtual machine signals. */
        struct virt_signals vs = { .smbios_vm_bit = info->bios_vm_bit, .cpuid_hypervisor = -1,
                                   .sys_vendor = sv->manufacturer, .product_name = sv->product_name };
        /* The CPUID hypervisor bit is an x86 notion. */
        const char *arch = cpu->architecture ? cpu->architecture : "";
        if (cpu->flags.n && (strcmp(arch, "x86_64") == 0 || (arch[0] == 'i' && strstr(arch, "86"))))
                vs.cpuid_hypervisor = strv_contains(&cpu->flags, "hypervisor");
        char hyp[64];
        if (sr_read_str(sr, "/sys/hypervisor/type", hyp, sizeof hyp) > 0)
                vs.hypervisor_type = hyp;
        const char *method = NULL;
        sv->virtual_machine = (int8_t) virt_decide(&vs, &method);
        if (method)
                sv->virtual_method = strdup(method);
        return 0;
}

#define EFI_GLOBAL_GUID "8be4df61-93ca-11d2-aa0d-00e098032b8c"

int probe_boot(const struct sysroot *sr, struct inv_boot *boot) {
        _cleanup_free_ char *cmdline = sr_read_all(sr, "/proc/cmdline", 64 << 10, NULL);
        if (cmdline) {
                str_rstrip(cmdline);
                boot->command_line = strdup(cmdline);
                _cleanup_free_ char *bootif = cmdline_get(cmdline, "BOOTIF");
                boot->pxe_interface = bootif_to_mac(bootif);
        }
        if (!sr_exists(sr, "/sys/firmware/efi")) {
                /* Without /sys/firmware at all we cannot tell. */
                if (sr_exists(sr, "/sys/firmware")) {
                        boot->current_boot_mode = strdup("bios");
                        boot->secure_boot_state = strdup("unsupported");
                }
                return 0;
        }
        boot->current_boot_mode = strdup("uefi");
        /* efivars: 4 bytes of attributes, then the 1-byte value. */
        uint8_t v[8];
        int fd = sr_open(sr, "/sys/firmware/efi/efivars/SecureBoot-" EFI_GLOBAL_GUID, O_RDONLY);
        if (fd >= 0) {
                ssize_t n = read(fd, v, sizeof v);
                close(fd);
                if (n == 5)
                        boot->secure_boot_state = strdup(v[4] == 1 ? "enabled" : "disabled");
        } else if (fd == -ENOENT && sr_exists(sr, "/sys/firmware/efi/efivars"))
                boot->secure_boot_state = strdup("unsupported");
        return 0;
}
