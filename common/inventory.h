/* The inventory model: what muster-agent knows about a machine, and its JSON
 * in both directions (json-c). The agent fills it; the coordinator parses it.
 * Unknown values are unset (NULL strings, INV_UNSET numbers, TRI_UNSET
 * booleans) and are left out of the JSON, never invented. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "strv.h"

#define INVENTORY_VERSION 1
#define INV_UNSET ((int64_t) -1)

/* Caps on every list a machine (or a hostile sysroot) controls. A list cut
 * short is recorded in a `truncated` entry with its real total. */
#define INV_MAX_DISKS 1024
#define INV_MAX_PARTITIONS 256
#define INV_MAX_HOLDERS 64
#define INV_MAX_INTERFACES 1024
#define INV_MAX_ADDRESSES 256
#define INV_MAX_ROUTES 4096
#define INV_MAX_GPUS 64
#define INV_MAX_CPU_FLAGS 512
#define INV_MAX_TRUNCATED 8

enum tristate { TRI_UNSET = -1, TRI_FALSE = 0, TRI_TRUE = 1 };

struct inv_truncated {
        char key[32];   /* name of the list that was cut, e.g. "disks" */
        int64_t total;  /* how many the source had */
        int64_t listed; /* how many are in the document */
};

struct inv_trunc_set {
        struct inv_truncated e[INV_MAX_TRUNCATED];
        unsigned n;
};

struct inv_cpu {
        char *architecture;
        char *model_name;
        int64_t count;            /* logical CPUs online */
        int64_t sockets;
        int64_t cores_per_socket;
        int64_t threads_per_core;
        double frequency_mhz;     /* max; < 0 unset */
        struct strv flags;
};

struct inv_memory {
        int64_t usable_bytes;        /* MemTotal */
        int64_t physical_bytes;
        char *physical_bytes_method; /* "smbios" | "memory-blocks" | "meminfo" */
};

struct inv_system_vendor {
        char *manufacturer;
        char *product_name;
        char *serial_number;
        char *uuid;
        int8_t virtual_machine;      /* tristate */
        char *virtual_method;        /* how `virtual` was decided */
        char *firmware_vendor;
        char *firmware_version;
        char *firmware_date;
};

struct inv_boot {
        char *current_boot_mode;  /* "uefi" | "bios" */
        char *secure_boot_state;  /* "enabled" | "disabled" | "unsupported" */
        char *pxe_interface;      /* from BOOTIF= */
        char *command_line;
};

struct inv_partition {
        char *name;
        int64_t size_bytes;
        char *fstype;
        char *label;
        char *uuid;
        char *mountpoint;
};

struct inv_disk {
        char *name;
        char *path;
        char *id;        /* by-id link if any, else by-path, else path */
        char *by_id;
        char *by_path;
        char *wwn;
        char *serial;
        char *model;
        char *vendor;
        int64_t size_bytes;
        int64_t logical_sector_size;
        int64_t physical_sector_size;
        char *drive_type; /* HDD SSD NVMe virtual ODD multipath LVM RAID Unknown */
        int8_t removable;
        int8_t read_only;
        int8_t rotational; /* input to drive_type; not in the JSON on its own */
        char *hctl;
        char *transport;
        char *fstype;      /* a filesystem or signature on the whole disk */
        char *mountpoint;  /* where the whole disk is mounted, if it is */
        struct strv holders;
        struct inv_partition *partitions;
        size_t n_partitions;
        int8_t is_installation_media;
        bool eligible;
        struct strv not_eligible_reasons;
        struct inv_trunc_set truncated;
};

struct inv_interface {
        char *name;
        char *mac_address;
        int8_t mac_is_permanent; /* tristate: permanent (burned-in) address used */
        struct strv ipv4_addresses; /* CIDR */
        struct strv ipv6_addresses; /* CIDR, link-local dropped */
        int64_t mtu;
        int8_t has_carrier;
        int64_t speed_mbps;
        char *type;    /* physical | bond | vlan | bridge | virtual */
        char *vendor;  /* PCI vendor id, "0x8086" */
        char *product; /* PCI device id */
        char *driver;
        struct strv bond_members;
        int64_t vlan_id;
        char *vlan_parent;
};

struct inv_route {
        char *destination; /* CIDR */
        char *gateway;
        char *interface;
        int family;        /* 4 or 6 */
        int64_t metric;
};

struct inv_gpu {
        char *pci_address;
        char *vendor_id;
        char *device_id;
        char *class_id;   /* "0x030000" */
        char *driver;
};

struct inventory {
        int version;
        char *host_id;
        char *host_id_source; /* "smbios-uuid" | "board-serial" | "mac" */
        char *hostname;
        struct inv_cpu cpu;
        struct inv_memory memory;
        struct inv_system_vendor system_vendor;
        struct inv_boot boot;
        struct inv_disk *disks;
        size_t n_disks;
        struct inv_interface *interfaces;
        size_t n_interfaces;
        struct inv_route *routes;
        size_t n_routes;
        struct inv_gpu *gpus;
        size_t n_gpus;
        char *tpm_version; /* "1.2" | "2.0" */
        struct inv_trunc_set truncated;
};

/* Set every field to unset. */
void inventory_init(struct inventory *inv);
void inventory_free(struct inventory *inv);
void inv_disk_init(struct inv_disk *d);
void inv_disk_free(struct inv_disk *d);
void inv_partition_init(struct inv_partition *p);
void inv_interface_init(struct inv_interface *i);
void inv_interface_free(struct inv_interface *i);

/* Record that list `key` had `total` entries of which `listed` were kept. */
void inv_trunc_note(struct inv_trunc_set *t, const char *key, int64_t total, int64_t listed);

/* Grow an array of `elsize` elements by one zeroed slot; returns it or NULL. */
void *inv_array_append(void **array, size_t *n, size_t elsize);

/* Model -> JSON. Returns a new object (caller puts) or NULL on ENOMEM. */
json_object *inventory_to_json(const struct inventory *inv);
/* JSON -> model. 0 on success, -EINVAL on a wrong type or version, with a
 * short reason in `err` (if non-NULL) naming the offending field. The model
 * is always left freeable. Unknown fields are ignored. */
int inventory_from_json(json_object *obj, struct inventory *inv, char *err, size_t errlen);

/* The same from the JSON text text[0..len), without its whole tree: the
 * text is walked and each entry of the lists (disks, interfaces, routes,
 * GPUs) is parsed and read alone, so that what is held at once is about one
 * entry's tree besides the model (an inventory of a thousand disks would
 * otherwise take seven times its size in json-c's tree). Refuses (-E2BIG)
 * a text of too many small values (json_parse_cost), else gives what
 * inventory_from_json gives the parsed text, reasons included, but for text
 * json-c alone accepts (comments, trailing commas). */
int inventory_from_text(const char *text, size_t len, struct inventory *inv, char *err, size_t errlen);
/* inventory_from_text of a NUL-terminated text. */
int inventory_from_string(const char *text, struct inventory *inv, char *err, size_t errlen);
