/* Pure rules for a machine's identity: junk SMBIOS values, the host-id
 * choice of DESIGN §4, and whether the machine is virtual. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "inventory.h"

/* Namespace of muster's derived host IDs (UUID v5). */
#define HOSTID_NAMESPACE "6b0f3c52-7d2e-4c51-9a8e-2f4b1d9e0c77"

/* Vendor placeholder strings ("To be filled by O.E.M.", "Default string",
 * "Not Specified", all one character, ...). NULL and "" are junk too. */
bool smbios_value_is_junk(const char *s);
/* All-zero, all-F, the well-known 03000200-0400-0500-0006-000700080009,
 * malformed. */
bool smbios_uuid_is_junk(const char *uuid);
/* True for 00:00:00:00:00:00, broadcast and multicast addresses, malformed. */
bool mac_is_junk(const char *mac);

/* DESIGN §4: the SMBIOS product UUID, else a v5 UUID of the board serial,
 * else of the lowest MAC among `macs` (permanent MACs of physical NICs, or
 * when none has one, their current MACs). Writes the id and its source
 * ("smbios-uuid" | "board-serial" | "mac"); -ENOENT when nothing fits. */
int hostid_choose(const char *smbios_uuid, const char *board_serial, const char *const *macs,
                  size_t n_macs, char **id, const char **source);

/* Signals for deciding whether the machine is a virtual machine. */
struct virt_signals {
        int smbios_vm_bit;           /* -1 unknown */
        int cpuid_hypervisor;        /* "hypervisor" in cpuinfo flags; -1 unknown */
        const char *hypervisor_type; /* /sys/hypervisor/type */
        const char *sys_vendor;
        const char *product_name;
};
/* Returns TRI_TRUE/TRI_FALSE/TRI_UNSET and names the deciding signal. */
int virt_decide(const struct virt_signals *s, const char **method);
