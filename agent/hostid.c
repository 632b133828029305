/* Host identity rules (hostid.h). Pure: strings in, decisions out. */
#include "hostid.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "uuid.h"

static const char *const junk_values[] = {
        "to be filled by o.e.m.", "to be filled by oem", "default string", "not specified",
        "not applicable", "system serial number", "system product name", "system manufacturer",
        "chassis serial number", "base board serial number", "none", "n/a", "na", "oem",
        "o.e.m.", "unknown", "invalid", "0123456789", "123456789", "1234567890", "serial",
        "empty", "not available", "type1productconfigid", "system version", "sku",
};

bool smbios_value_is_junk(const char *s) {
        if (!s)
                return true;
        while (isspace((unsigned char) *s))
                s++;
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                n--;
        if (n == 0)
                return true;
        for (size_t i = 0; i < sizeof junk_values / sizeof *junk_values; i++)
                if (strlen(junk_values[i]) == n && strncasecmp(s, junk_values[i], n) == 0)
                        return true;
        /* A run of one character ("00000000", "XXXXXXXX", "........"). */
        bool same = true;
        for (size_t i = 1; i < n; i++)
                if (s[i] != s[0]) {
                        same = false;
                        break;
                }
        return same && n > 1;
}

bool smbios_uuid_is_junk(const char *uuid) {
        char u[UUID_STR_LEN];
        if (uuid_normalize(uuid, u) < 0)
                return true;
        if (strcmp(u, "03000200-0400-0500-0006-000700080009") == 0)
                return true;
        /* All one hex digit (zeros, Fs, ...). */
        char first = 0;
        for (int i = 0; i < 36; i++) {
                if (u[i] == '-')
                        continue;
                if (!first)
                        first = u[i];
                else if (u[i] != first)
                        return false;
        }
        return true;
}

static int mac_parse(const char *mac, unsigned b[6]) {
        int n = 0;
        if (!mac || sscanf(mac, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                           &n) != 6 || n != 17 || mac[n])
                return -EINVAL;
        return 0;
}

bool mac_is_junk(const char *mac) {
        unsigned b[6];
        if (mac_parse(mac, b) < 0)
                return true;
        if (b[0] & 1) /* multicast, broadcast */
                return true;
        return (b[0] | b[1] | b[2] | b[3] | b[4] | b[5]) == 0;
}

int hostid_choose(const char *smbios_uuid, const char *board_serial, const char *const *macs,
                  size_t n_macs, char **id, const char **source) {
        char out[UUID_STR_LEN], name[512];

        if (smbios_uuid && !smbios_uuid_is_junk(smbios_uuid)) {
                uuid_normalize(smbios_uuid, out);
                *source = "smbios-uuid";
                return (*id = strdup(out)) ? 0 : -ENOMEM;
        }
        if (!smbios_value_is_junk(board_serial)) {
                snprintf(name, sizeof name, "board-serial:%s", board_serial);
                if (uuid_v5(HOSTID_NAMESPACE, name, out) < 0)
                        return -EIO;
                *source = "board-serial";
                return (*id = strdup(out)) ? 0 : -ENOMEM;
        }
        const char *lowest = NULL;
        unsigned lb[6] = { 0 };
        for (size_t i = 0; i < n_macs; i++) {
                unsigned b[6];
                if (mac_is_junk(macs[i]) || mac_parse(macs[i], b) < 0)
                        continue;
                if (!lowest || memcmp(b, lb, sizeof b) < 0) {
                        lowest = macs[i];
                        memcpy(lb, b, sizeof b);
                }
        }
        if (!lowest)
                return -ENOENT;
        snprintf(name, sizeof name, "mac:%02x:%02x:%02x:%02x:%02x:%02x", lb[0], lb[1], lb[2], lb[3],
                 lb[4], lb[5]);
        if (uuid_v5(HOSTID_NAMESPACE, name, out) < 0)
                return -EIO;
        *source = "mac";
        return (*id = strdup(out)) ? 0 : -ENOMEM;
}

/* DMI strings of hypervisors; matched as case-insensitive prefixes. */
static const char *const virt_vendors[] = {
        "QEMU", "VMware", "innotek GmbH", "Xen", "Parallels", "Bochs", "BHYVE", "KVM",
        "Red Hat", "Nutanix", "OpenStack Foundation", "Google Compute Engine", "Firecracker",
};

static bool has_prefix_ci(const char *s, const char *p) {
        return s && strncasecmp(s, p, strlen(p)) == 0;
}

int virt_decide(const struct virt_signals *s, const char **method) {
        if (s->smbios_vm_bit == 1) {
                *method = "smbios-bios-characteristics";
                return TRI_TRUE;
        }
        if (s->cpuid_hypervisor == 1) {
                *method = "cpuid-hypervisor-flag";
                return TRI_TRUE;
        }
        if (s->hypervisor_type && *s->hypervisor_type) {
                *method = "sys-hypervisor-type";
                return TRI_TRUE;
        }
        for (size_t i = 0; i < sizeof virt_vendors / sizeof *virt_vendors; i++)
                if (has_prefix_ci(s->sys_vendor, virt_vendors[i]) ||
                    has_prefix_ci(s->product_name, virt_vendors[i])) {
                        *method = "dmi-vendor";
                        return TRI_TRUE;
                }
        /* Microsoft's Hyper-V: vendor "Microsoft Corporation", product "Virtual Machine". */
        if (has_prefix_ci(s->sys_vendor, "Microsoft") && has_prefix_ci(s->product_name, "Virtual Machine")) {
                *method = "dmi-vendor";
                return TRI_TRUE;
        }
        /* No signal of a hypervisor: physical when we could look at the CPU
         * or the firmware, unknown otherwise. */
        if (s->cpuid_hypervisor == 0 || s->smbios_vm_bit == 0) {
                *method = "no-hypervisor-signal";
                return TRI_FALSE;
        }
        *method = NULL;
        return TRI_UNSET;
}
