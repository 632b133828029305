/* Inventory model lifetime and its JSON in both directions. Field names are
 * the wire format the coordinator parses; unset values are left out. */
#include "inventory.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "jsonread.h"

/* ---- lifetime ---------------------------------------------------------- */

void inventory_init(struct inventory *inv) {
        *inv = (struct inventory) {
                .version = INVENTORY_VERSION,
                .cpu = { .count = INV_UNSET, .sockets = INV_UNSET, .cores_per_socket = INV_UNSET,
                         .threads_per_core = INV_UNSET, .frequency_mhz = -1 },
                .memory = { .usable_bytes = INV_UNSET, .physical_bytes = INV_UNSET },
                .system_vendor = { .virtual_machine = TRI_UNSET },
        };
}

void inv_partition_init(struct inv_partition *p) {
        *p = (struct inv_partition) { .size_bytes = INV_UNSET };
}

void inv_disk_init(struct inv_disk *d) {
        *d = (struct inv_disk) {
                .size_bytes = INV_UNSET, .logical_sector_size = INV_UNSET,
                .physical_sector_size = INV_UNSET, .removable = TRI_UNSET,
                .read_only = TRI_UNSET, .rotational = TRI_UNSET,
                .is_installation_media = TRI_UNSET,
        };
}

void inv_interface_init(struct inv_interface *i) {
        *i = (struct inv_interface) {
                .mac_is_permanent = TRI_UNSET, .mtu = INV_UNSET, .has_carrier = TRI_UNSET,
                .speed_mbps = INV_UNSET, .vlan_id = INV_UNSET,
        };
}

static void partition_free(struct inv_partition *p) {
        free(p->name);
        free(p->fstype);
        free(p->label);
        free(p->uuid);
        free(p->mountpoint);
}

void inv_disk_free(struct inv_disk *d) {
        char **s[] = { &d->name, &d->path, &d->id, &d->by_id, &d->by_path, &d->wwn, &d->serial,
                       &d->model, &d->vendor, &d->drive_type, &d->hctl, &d->transport,
                       &d->fstype, &d->mountpoint };
        for (size_t i = 0; i < sizeof s / sizeof *s; i++)
                free(*s[i]);
        strv_free(&d->holders);
        for (size_t i = 0; i < d->n_partitions; i++)
                partition_free(&d->partitions[i]);
        free(d->partitions);
        strv_free(&d->not_eligible_reasons);
        inv_disk_init(d);
}

void inv_interface_free(struct inv_interface *i) {
        free(i->name);
        free(i->mac_address);
        strv_free(&i->ipv4_addresses);
        strv_free(&i->ipv6_addresses);
        free(i->type);
        free(i->vendor);
        free(i->product);
        free(i->driver);
        strv_free(&i->bond_members);
        free(i->vlan_parent);
        inv_interface_init(i);
}

static void inv_route_free(struct inv_route *r) {
        free(r->destination);
        free(r->gateway);
        free(r->interface);
        *r = (struct inv_route) { .metric = INV_UNSET };
}

static void inv_gpu_free(struct inv_gpu *g) {
        free(g->pci_address);
        free(g->vendor_id);
        free(g->device_id);
        free(g->class_id);
        free(g->driver);
        *g = (struct inv_gpu) { 0 };
}

void inventory_free(struct inventory *inv) {
        free(inv->host_id);
        free(inv->host_id_source);
        free(inv->hostname);
        free(inv->cpu.architecture);
        free(inv->cpu.model_name);
        strv_free(&inv->cpu.flags);
        free(inv->memory.physical_bytes_method);
        struct inv_system_vendor *sv = &inv->system_vendor;
        free(sv->manufacturer);
        free(sv->product_name);
        free(sv->serial_number);
        free(sv->uuid);
        free(sv->virtual_method);
        free(sv->firmware_vendor);
        free(sv->firmware_version);
        free(sv->firmware_date);
        free(inv->boot.current_boot_mode);
        free(inv->boot.secure_boot_state);
        free(inv->boot.pxe_interface);
        free(inv->boot.command_line);
        for (size_t i = 0; i < inv->n_disks; i++)
                inv_disk_free(&inv->disks[i]);
        free(inv->disks);
        for (size_t i = 0; i < inv->n_interfaces; i++)
                inv_interface_free(&inv->interfaces[i]);
        free(inv->interfaces);
        for (size_t i = 0; i < inv->n_routes; i++)
                inv_route_free(&inv->routes[i]);
        free(inv->routes);
        for (size_t i = 0; i < inv->n_gpus; i++)
                inv_gpu_free(&inv->gpus[i]);
        free(inv->gpus);
        free(inv->tpm_version);
        inventory_init(inv);
}

void inv_trunc_note(struct inv_trunc_set *t, const char *key, int64_t total, int64_t listed) {
        for (unsigned i = 0; i < t->n; i++)
                if (strcmp(t->e[i].key, key) == 0) {
                        t->e[i].total = total;
                        t->e[i].listed = listed;
                        return;
                }
        if (t->n >= INV_MAX_TRUNCATED)
                return;
        snprintf(t->e[t->n].key, sizeof t->e[t->n].key, "%s", key);
        t->e[t->n].total = total;
        t->e[t->n].listed = listed;
        t->n++;
}

void *inv_array_append(void **array, size_t *n, size_t elsize) {
        /* Capacity is the smallest power of two >= n: grow when n is one. */
        if ((*n & (*n - 1)) == 0) {
                size_t cap = *n ? *n * 2 : 1;
                if (cap > SIZE_MAX / elsize)
                        return NULL;
                void *a = realloc(*array, cap * elsize);
                if (!a)
                        return NULL;
                *array = a;
        }
        char *slot = (char *) *array + *n * elsize;
        memset(slot, 0, elsize);
        (*n)++;
        return slot;
}

/* ---- model -> JSON ----------------------------------------------------- */

static void put_str(json_object *o, const char *k, const char *v) {
        if (v)
                json_object_object_add(o, k, json_object_new_string(v));
}

static void put_i64(json_object *o, const char *k, int64_t v) {
        if (v != INV_UNSET)
                json_object_object_add(o, k, json_object_new_int64(v));
}

static void put_tri(json_object *o, const char *k, int8_t v) {
        if (v != TRI_UNSET)
                json_object_object_add(o, k, json_object_new_boolean(v == TRI_TRUE));
}

static void put_strv(json_object *o, const char *k, const struct strv *s, bool always) {
        if (!s->n && !always)
                return;
        json_object *a = json_object_new_array_ext((int) s->n);
        for (size_t i = 0; i < s->n; i++)
                json_object_array_add(a, json_object_new_string(s->v[i]));
        json_object_object_add(o, k, a);
}

static void put_trunc(json_object *o, const struct inv_trunc_set *t) {
        if (!t->n)
                return;
        json_object *tr = json_object_new_object();
        for (unsigned i = 0; i < t->n; i++) {
                json_object *e = json_object_new_object();
                json_object_object_add(e, "total", json_object_new_int64(t->e[i].total));
                json_object_object_add(e, "listed", json_object_new_int64(t->e[i].listed));
                json_object_object_add(tr, t->e[i].key, e);
        }
        json_object_object_add(o, "truncated", tr);
}

/* The list v of n entries of `size` bytes, each written by to_json, as
 * array k of o. */
static void put_list(json_object *o, const char *k, const void *v, size_t n, size_t size,
                     json_object *(*to_json)(const void *entry)) {
        json_object *a = json_object_new_array_ext((int) n);
        for (size_t i = 0; i < n; i++)
                json_object_array_add(a, to_json((const char *) v + i * size));
        json_object_object_add(o, k, a);
}

static json_object *cpu_to_json(const struct inv_cpu *cpu) {
        json_object *c = json_object_new_object();
        put_str(c, "architecture", cpu->architecture);
        put_str(c, "model_name", cpu->model_name);
        put_i64(c, "count", cpu->count);
        put_i64(c, "sockets", cpu->sockets);
        put_i64(c, "cores_per_socket", cpu->cores_per_socket);
        put_i64(c, "threads_per_core", cpu->threads_per_core);
        if (cpu->frequency_mhz >= 0) {
                /* Three decimals, as /proc/cpuinfo gives them; no binary noise. */
                char num[32];
                snprintf(num, sizeof num, "%.3f", cpu->frequency_mhz);
                char *e = num + strlen(num) - 1;
                while (*e == '0')
                        *e-- = '\0';
                if (*e == '.')
                        *e = '\0';
                json_object_object_add(c, "frequency_mhz",
                                       json_object_new_double_s(strtod(num, NULL), num));
        }
        put_strv(c, "flags", &cpu->flags, true);
        return c;
}

static json_object *memory_to_json(const struct inv_memory *mem) {
        json_object *m = json_object_new_object();
        put_i64(m, "usable_bytes", mem->usable_bytes);
        put_i64(m, "physical_bytes", mem->physical_bytes);
        put_str(m, "physical_bytes_method", mem->physical_bytes_method);
        return m;
}

static json_object *system_vendor_to_json(const struct inv_system_vendor *sv) {
        json_object *s = json_object_new_object();
        put_str(s, "manufacturer", sv->manufacturer);
        put_str(s, "product_name", sv->product_name);
        put_str(s, "serial_number", sv->serial_number);
        put_str(s, "uuid", sv->uuid);
        put_tri(s, "virtual", sv->virtual_machine);
        put_str(s, "virtual_method", sv->virtual_method);
        json_object *fw = json_object_new_object();
        put_str(fw, "vendor", sv->firmware_vendor);
        put_str(fw, "version", sv->firmware_version);
        put_str(fw, "date", sv->firmware_date);
        json_object_object_add(s, "firmware", fw);
        return s;
}

static json_object *boot_to_json(const struct inv_boot *boot) {
        json_object *b = json_object_new_object();
        put_str(b, "current_boot_mode", boot->current_boot_mode);
        put_str(b, "secure_boot_state", boot->secure_boot_state);
        put_str(b, "pxe_interface", boot->pxe_interface);
        put_str(b, "command_line", boot->command_line);
        return b;
}

static json_object *partition_to_json(const void *entry) {
        const struct inv_partition *p = entry;
        json_object *po = json_object_new_object();
        put_str(po, "name", p->name);
        put_i64(po, "size_bytes", p->size_bytes);
        put_str(po, "fstype", p->fstype);
        put_str(po, "label", p->label);
        put_str(po, "uuid", p->uuid);
        put_str(po, "mountpoint", p->mountpoint);
        return po;
}

static json_object *disk_to_json(const void *entry) {
        const struct inv_disk *d = entry;
        json_object *o = json_object_new_object();
        put_str(o, "name", d->name);
        put_str(o, "path", d->path);
        put_str(o, "id", d->id);
        put_str(o, "by_id", d->by_id);
        put_str(o, "by_path", d->by_path);
        put_str(o, "wwn", d->wwn);
        put_str(o, "serial", d->serial);
        put_str(o, "model", d->model);
        put_str(o, "vendor", d->vendor);
        put_i64(o, "size_bytes", d->size_bytes);
        put_i64(o, "logical_sector_size", d->logical_sector_size);
        put_i64(o, "physical_sector_size", d->physical_sector_size);
        put_str(o, "drive_type", d->drive_type);
        put_tri(o, "removable", d->removable);
        put_tri(o, "read_only", d->read_only);
        put_tri(o, "rotational", d->rotational);
        put_str(o, "hctl", d->hctl);
        put_str(o, "transport", d->transport);
        put_str(o, "fstype", d->fstype);
        put_str(o, "mountpoint", d->mountpoint);
        put_strv(o, "holders", &d->holders, true);
        put_list(o, "partitions", d->partitions, d->n_partitions, sizeof *d->partitions, partition_to_json);
        put_tri(o, "is_installation_media", d->is_installation_media);
        json_object *el = json_object_new_object();
        json_object_object_add(el, "eligible", json_object_new_boolean(d->eligible));
        put_strv(el, "not_eligible_reasons", &d->not_eligible_reasons, true);
        json_object_object_add(o, "installation_eligibility", el);
        put_trunc(o, &d->truncated);
        return o;
}

static json_object *iface_to_json(const void *entry) {
        const struct inv_interface *i = entry;
        json_object *o = json_object_new_object();
        put_str(o, "name", i->name);
        put_str(o, "mac_address", i->mac_address);
        put_tri(o, "mac_is_permanent", i->mac_is_permanent);
        put_strv(o, "ipv4_addresses", &i->ipv4_addresses, true);
        put_strv(o, "ipv6_addresses", &i->ipv6_addresses, true);
        put_i64(o, "mtu", i->mtu);
        put_tri(o, "has_carrier", i->has_carrier);
        put_i64(o, "speed_mbps", i->speed_mbps);
        put_str(o, "type", i->type);
        put_str(o, "vendor", i->vendor);
        put_str(o, "product", i->product);
        put_str(o, "driver", i->driver);
        put_strv(o, "bond_members", &i->bond_members, false);
        put_i64(o, "vlan_id", i->vlan_id);
        put_str(o, "vlan_parent", i->vlan_parent);
        return o;
}

static json_object *route_to_json(const void *entry) {
        const struct inv_route *r = entry;
        json_object *ro = json_object_new_object();
        put_str(ro, "destination", r->destination);
        put_str(ro, "gateway", r->gateway);
        put_str(ro, "interface", r->interface);
        json_object_object_add(ro, "family", json_object_new_int(r->family));
        put_i64(ro, "metric", r->metric);
        return ro;
}

static json_object *gpu_to_json(const void *entry) {
        const struct inv_gpu *g = entry;
        json_object *go = json_object_new_object();
        put_str(go, "pci_address", g->pci_address);
        put_str(go, "vendor_id", g->vendor_id);
        put_str(go, "device_id", g->device_id);
        put_str(go, "class_id", g->class_id);
        put_str(go, "driver", g->driver);
        return go;
}

json_object *inventory_to_json(const struct inventory *inv) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "inventory_version", json_object_new_int(inv->version));
        put_str(o, "host_id", inv->host_id);
        put_str(o, "host_id_source", inv->host_id_source);
        put_str(o, "hostname", inv->hostname);
        json_object_object_add(o, "cpu", cpu_to_json(&inv->cpu));
        json_object_object_add(o, "memory", memory_to_json(&inv->memory));
        json_object_object_add(o, "system_vendor", system_vendor_to_json(&inv->system_vendor));
        json_object_object_add(o, "boot", boot_to_json(&inv->boot));
        put_list(o, "disks", inv->disks, inv->n_disks, sizeof *inv->disks, disk_to_json);
        put_list(o, "interfaces", inv->interfaces, inv->n_interfaces, sizeof *inv->interfaces, iface_to_json);
        put_list(o, "routes", inv->routes, inv->n_routes, sizeof *inv->routes, route_to_json);
        put_list(o, "gpus", inv->gpus, inv->n_gpus, sizeof *inv->gpus, gpu_to_json);
        put_str(o, "tpm_version", inv->tpm_version);
        put_trunc(o, &inv->truncated);
        return o;
}

/* ---- JSON -> model ----------------------------------------------------- */

/* The inventory's strings have no limit of their own beyond the document's;
 * 64 KiB covers the longest (a kernel command line). */
#define INV_MAX_TEXT (64 * 1024)

static void get_str(json_object *o, const char *k, char **out, struct jctx *c) {
        jget_str(o, k, out, INV_MAX_TEXT, c);
}

static void get_i64(json_object *o, const char *k, int64_t *out, struct jctx *c) {
        jget_i64(o, k, out, INT64_MAX, c);
}

static void get_strv(json_object *o, const char *k, struct strv *out, size_t max, struct jctx *c) {
        jget_strv(o, k, out, max, INV_MAX_TEXT, c);
}

static void get_tri(json_object *o, const char *k, int8_t *out, struct jctx *c) {
        json_object *v = jget(o, k, json_type_boolean, c);
        if (v)
                *out = json_object_get_boolean(v) ? TRI_TRUE : TRI_FALSE;
}

static void get_trunc(json_object *o, struct inv_trunc_set *t, struct jctx *c) {
        json_object *tr = jget(o, "truncated", json_type_object, c);
        if (!tr)
                return;
        json_object_object_foreach(tr, key, val) {
                int64_t total = INV_UNSET, listed = INV_UNSET;
                if (!json_object_is_type(val, json_type_object)) {
                        jfail(c, "field \"truncated.%s\" must be an object", key);
                        return;
                }
                get_i64(val, "total", &total, c);
                get_i64(val, "listed", &listed, c);
                inv_trunc_note(t, key, total, listed);
        }
}

/* The array k of o (at most max entries), each an object that from_json
 * reads into a new zeroed entry of `size` bytes appended to *v. Stops at
 * the first failure. */
static void get_list(json_object *o, const char *k, size_t max, void **v, size_t *n, size_t size,
                     void (*from_json)(json_object *e, void *entry, struct jctx *c), struct jctx *c) {
        json_object *a = jget_array(o, k, max, c);
        for (size_t i = 0; a && i < json_object_array_length(a) && c->r == 0; i++) {
                json_object *e = jget_elem(a, i, k, c);
                void *entry = e ? inv_array_append(v, n, size) : NULL;
                if (!entry)
                        break;
                from_json(e, entry, c);
        }
}

static void cpu_from_json(json_object *o, struct inv_cpu *cpu, struct jctx *c) {
        json_object *v;
        get_str(o, "architecture", &cpu->architecture, c);
        get_str(o, "model_name", &cpu->model_name, c);
        get_i64(o, "count", &cpu->count, c);
        get_i64(o, "sockets", &cpu->sockets, c);
        get_i64(o, "cores_per_socket", &cpu->cores_per_socket, c);
        get_i64(o, "threads_per_core", &cpu->threads_per_core, c);
        if ((v = jget(o, "frequency_mhz", json_type_double, c)))
                cpu->frequency_mhz = json_object_get_double(v);
        get_strv(o, "flags", &cpu->flags, INV_MAX_CPU_FLAGS, c);
}

static void memory_from_json(json_object *o, struct inv_memory *mem, struct jctx *c) {
        get_i64(o, "usable_bytes", &mem->usable_bytes, c);
        get_i64(o, "physical_bytes", &mem->physical_bytes, c);
        get_str(o, "physical_bytes_method", &mem->physical_bytes_method, c);
}

static void system_vendor_from_json(json_object *o, struct inv_system_vendor *sv, struct jctx *c) {
        get_str(o, "manufacturer", &sv->manufacturer, c);
        get_str(o, "product_name", &sv->product_name, c);
        get_str(o, "serial_number", &sv->serial_number, c);
        get_str(o, "uuid", &sv->uuid, c);
        get_tri(o, "virtual", &sv->virtual_machine, c);
        get_str(o, "virtual_method", &sv->virtual_method, c);
        json_object *fw = jget(o, "firmware", json_type_object, c);
        get_str(fw, "vendor", &sv->firmware_vendor, c);
        get_str(fw, "version", &sv->firmware_version, c);
        get_str(fw, "date", &sv->firmware_date, c);
}

static void boot_from_json(json_object *o, struct inv_boot *boot, struct jctx *c) {
        get_str(o, "current_boot_mode", &boot->current_boot_mode, c);
        get_str(o, "secure_boot_state", &boot->secure_boot_state, c);
        get_str(o, "pxe_interface", &boot->pxe_interface, c);
        get_str(o, "command_line", &boot->command_line, c);
}

static void partition_from_json(json_object *o, void *entry, struct jctx *c) {
        struct inv_partition *p = entry;
        inv_partition_init(p);
        get_str(o, "name", &p->name, c);
        get_i64(o, "size_bytes", &p->size_bytes, c);
        get_str(o, "fstype", &p->fstype, c);
        get_str(o, "label", &p->label, c);
        get_str(o, "uuid", &p->uuid, c);
        get_str(o, "mountpoint", &p->mountpoint, c);
}

static void disk_from_json(json_object *o, void *entry, struct jctx *c) {
        struct inv_disk *d = entry;
        inv_disk_init(d);
        get_str(o, "name", &d->name, c);
        get_str(o, "path", &d->path, c);
        get_str(o, "id", &d->id, c);
        get_str(o, "by_id", &d->by_id, c);
        get_str(o, "by_path", &d->by_path, c);
        get_str(o, "wwn", &d->wwn, c);
        get_str(o, "serial", &d->serial, c);
        get_str(o, "model", &d->model, c);
        get_str(o, "vendor", &d->vendor, c);
        get_i64(o, "size_bytes", &d->size_bytes, c);
        get_i64(o, "logical_sector_size", &d->logical_sector_size, c);
        get_i64(o, "physical_sector_size", &d->physical_sector_size, c);
        get_str(o, "drive_type", &d->drive_type, c);
        get_tri(o, "removable", &d->removable, c);
        get_tri(o, "read_only", &d->read_only, c);
        get_tri(o, "rotational", &d->rotational, c);
        get_str(o, "hctl", &d->hctl, c);
        get_str(o, "transport", &d->transport, c);
        get_str(o, "fstype", &d->fstype, c);
        get_str(o, "mountpoint", &d->mountpoint, c);
        get_strv(o, "holders", &d->holders, INV_MAX_HOLDERS, c);
        get_list(o, "partitions", INV_MAX_PARTITIONS, (void **) &d->partitions, &d->n_partitions,
                 sizeof *d->partitions, partition_from_json, c);
        get_tri(o, "is_installation_media", &d->is_installation_media, c);
        json_object *el = jget(o, "installation_eligibility", json_type_object, c);
        json_object *v = el ? jget(el, "eligible", json_type_boolean, c) : NULL;
        d->eligible = v && json_object_get_boolean(v);
        if (el)
                get_strv(el, "not_eligible_reasons", &d->not_eligible_reasons, 32, c);
        get_trunc(o, &d->truncated, c);
}

static void iface_from_json(json_object *o, void *entry, struct jctx *c) {
        struct inv_interface *i = entry;
        inv_interface_init(i);
        get_str(o, "name", &i->name, c);
        get_str(o, "mac_address", &i->mac_address, c);
        get_tri(o, "mac_is_permanent", &i->mac_is_permanent, c);
        get_strv(o, "ipv4_addresses", &i->ipv4_addresses, INV_MAX_ADDRESSES, c);
        get_strv(o, "ipv6_addresses", &i->ipv6_addresses, INV_MAX_ADDRESSES, c);
        get_i64(o, "mtu", &i->mtu, c);
        get_tri(o, "has_carrier", &i->has_carrier, c);
        get_i64(o, "speed_mbps", &i->speed_mbps, c);
        get_str(o, "type", &i->type, c);
        get_str(o, "vendor", &i->vendor, c);
        get_str(o, "product", &i->product, c);
        get_str(o, "driver", &i->driver, c);
        get_strv(o, "bond_members", &i->bond_members, INV_MAX_INTERFACES, c);
        get_i64(o, "vlan_id", &i->vlan_id, c);
        get_str(o, "vlan_parent", &i->vlan_parent, c);
}

static void route_from_json(json_object *o, void *entry, struct jctx *c) {
        struct inv_route *r = entry;
        json_object *v;
        r->metric = INV_UNSET;
        get_str(o, "destination", &r->destination, c);
        get_str(o, "gateway", &r->gateway, c);
        get_str(o, "interface", &r->interface, c);
        if ((v = jget(o, "family", json_type_int, c)))
                r->family = json_object_get_int(v);
        if (r->family != 4 && r->family != 6)
                jfail(c, "route family must be 4 or 6");
        get_i64(o, "metric", &r->metric, c);
}

static void gpu_from_json(json_object *o, void *entry, struct jctx *c) {
        struct inv_gpu *g = entry;
        get_str(o, "pci_address", &g->pci_address, c);
        get_str(o, "vendor_id", &g->vendor_id, c);
        get_str(o, "device_id", &g->device_id, c);
        get_str(o, "class_id", &g->class_id, c);
        get_str(o, "driver", &g->driver, c);
}

/* The inventory's lists, in the order they are read (and refused). */
struct inv_list {
        const char *key;
        size_t max;
        size_t off_v, off_n, size;
        void (*from_json)(json_object *e, void *entry, struct jctx *c);
};

#define INV_LIST(k, max, field, count, fn) \
        { k, max, offsetof(struct inventory, field), offsetof(struct inventory, count), \
          sizeof(*((struct inventory *) 0)->field), fn }
static const struct inv_list inv_lists[] = {
        INV_LIST("disks", INV_MAX_DISKS, disks, n_disks, disk_from_json),
        INV_LIST("interfaces", INV_MAX_INTERFACES, interfaces, n_interfaces, iface_from_json),
        INV_LIST("routes", INV_MAX_ROUTES, routes, n_routes, route_from_json),
        INV_LIST("gpus", INV_MAX_GPUS, gpus, n_gpus, gpu_from_json),
};
#define N_INV_LISTS (sizeof inv_lists / sizeof inv_lists[0])

static void **list_v(struct inventory *inv, const struct inv_list *l) {
        return (void **) ((char *) inv + l->off_v);
}

static size_t *list_n(struct inventory *inv, const struct inv_list *l) {
        return (size_t *) ((char *) inv + l->off_n);
}

/* Everything but the lists (read between the boot section and tpm_version). */
static bool head_from_json(json_object *obj, struct inventory *inv, struct jctx *c) {
        inventory_init(inv);
        if (c->err && c->errlen)
                c->err[0] = '\0';
        if (!json_object_is_type(obj, json_type_object)) {
                jfail(c, "inventory must be a JSON object");
                return false;
        }
        json_object *v = jget(obj, "inventory_version", json_type_int, c);
        if (!v || json_object_get_int(v) != INVENTORY_VERSION) {
                jfail(c, "inventory_version must be %d", INVENTORY_VERSION);
                return false;
        }
        get_str(obj, "host_id", &inv->host_id, c);
        get_str(obj, "host_id_source", &inv->host_id_source, c);
        get_str(obj, "hostname", &inv->hostname, c);
        cpu_from_json(jget(obj, "cpu", json_type_object, c), &inv->cpu, c);
        memory_from_json(jget(obj, "memory", json_type_object, c), &inv->memory, c);
        system_vendor_from_json(jget(obj, "system_vendor", json_type_object, c), &inv->system_vendor, c);
        boot_from_json(jget(obj, "boot", json_type_object, c), &inv->boot, c);
        return true;
}

static void tail_from_json(json_object *obj, struct inventory *inv, struct jctx *c) {
        get_str(obj, "tpm_version", &inv->tpm_version, c);
        get_trunc(obj, &inv->truncated, c);
}

int inventory_from_json(json_object *obj, struct inventory *inv, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        if (!head_from_json(obj, inv, &c))
                return c.r;
        for (size_t i = 0; i < N_INV_LISTS; i++) {
                const struct inv_list *l = &inv_lists[i];
                get_list(obj, l->key, l->max, list_v(inv, l), list_n(inv, l), l->size, l->from_json, &c);
        }
        tail_from_json(obj, inv, &c);
        return c.r;
}

/* ---- JSON text -> model, one list entry at a time ----------------------- */

/* Nesting json-c allows a document parsed whole (json_tokener_parse). */
#define INV_TEXT_DEPTH 32

struct text_walk {
        json_object *rest;                    /* the members but the lists */
        struct json_span lists[N_INV_LISTS];  /* the last of each list's spans */
        bool has[N_INV_LISTS];
        struct jctx *c;
        struct inventory *inv;
        const struct inv_list *l;
        size_t count;
};

/* json_span_parse, a failure kept in c as "not valid JSON (what "key")". */
static int span_parse(struct json_span v, int depth, json_object **o, struct jctx *c, const char *what,
                      const char *key) {
        int r = json_span_parse(v, depth, o);
        if (r == -ENOMEM)
                joom(c);
        else if (r < 0)
                jfail(c, "not valid JSON (%s \"%s\")", what, key);
        return r;
}

static int text_member(void *ud, const char *key, struct json_span v) {
        struct text_walk *w = ud;
        for (size_t i = 0; i < N_INV_LISTS; i++)
                if (strcmp(key, inv_lists[i].key) == 0) {
                        w->lists[i] = v; /* the last of a repeated name holds, as in json-c */
                        w->has[i] = true;
                        return 0;
                }
        json_object *o = NULL;
        int r = span_parse(v, INV_TEXT_DEPTH - 1, &o, w->c, "field", key);
        if (r < 0)
                return r;
        /* json-c keeps a null member, which jget reads as absent. */
        if (json_object_object_add(w->rest, key, o) < 0) {
                json_object_put(o);
                joom(w->c);
                return -ENOMEM;
        }
        return 0;
}

static int text_count(void *ud, size_t i, struct json_span v) {
        (void) i;
        (void) v;
        ((struct text_walk *) ud)->count++;
        return 0;
}

static int text_entry(void *ud, size_t i, struct json_span v) {
        (void) i;
        struct text_walk *w = ud;
        json_object *e = NULL;
        int r = span_parse(v, INV_TEXT_DEPTH - 2, &e, w->c, "an entry of", w->l->key);
        if (r < 0)
                return r;
        if (!json_object_is_type(e, json_type_object)) {
                json_object_put(e);
                jfail(w->c, "entries of \"%s\" must be objects", w->l->key);
                return -EINVAL;
        }
        void *entry = inv_array_append(list_v(w->inv, w->l), list_n(w->inv, w->l), w->l->size);
        if (entry)
                w->l->from_json(e, entry, w->c);
        json_object_put(e);
        if (!entry) {
                joom(w->c);
                return -ENOMEM;
        }
        return w->c->r;
}

/* One list from its span: the same checks, in the same order, as get_list. */
static void list_from_text(struct text_walk *w, size_t i) {
        const struct inv_list *l = &inv_lists[i];
        struct jctx *c = w->c;
        if (!w->has[i] || json_span_is_null(w->lists[i]) || c->r < 0)
                return;
        struct json_span v = w->lists[i];
        if (v.p[0] != '[') {
                /* Not an array: json-c says what it is, as jget does. */
                json_object *o = NULL;
                if (json_span_parse(v, INV_TEXT_DEPTH - 1, &o) < 0)
                        jfail(c, "not valid JSON (field \"%s\")", l->key);
                else
                        jfail(c, "field \"%s\" must be %s", l->key, json_type_to_name(json_type_array));
                json_object_put(o);
                return;
        }
        char why[128];
        w->count = 0;
        if (json_elements(v.p, v.len, text_count, w, why, sizeof why) < 0) {
                jfail(c, "field \"%s\": %s", l->key, why);
                return;
        }
        if (w->count > l->max) {
                jfail(c, "field \"%s\" has %zu entries, at most %zu allowed", l->key, w->count, l->max);
                return;
        }
        w->l = l;
        json_elements(v.p, v.len, text_entry, w, NULL, 0);
}

int inventory_from_text(const char *text, size_t len, struct inventory *inv, char *err, size_t errlen) {
        inventory_init(inv);
        if (err && errlen)
                err[0] = '\0';
        /* A text of many small values is refused before anything is built
         * (what the members other than the lists hold is parsed whole). */
        if (!json_parse_cost_ok(json_parse_cost(text, len), len)) {
                if (err && errlen)
                        snprintf(err, errlen, "an inventory of %zu bytes of too many small values (over %d times its "
                                              "size to parse)", len, JSON_PARSE_COST_RATIO);
                return -E2BIG;
        }
        struct jctx c = { .err = err, .errlen = errlen };
        struct text_walk w = { .rest = json_object_new_object(), .c = &c, .inv = inv };
        if (!w.rest) {
                joom(&c);
                return c.r;
        }
        char why[128];
        int r = json_members(text, len, text_member, &w, why, sizeof why);
        if (r < 0 && c.r == 0) {
                /* Not an object at all says what the tree's reader says. */
                size_t i = 0;
                while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
                        i++;
                size_t e = len;
                while (e > i && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n' || text[e - 1] == '\r'))
                        e--;
                json_object *o = NULL;
                if (i < len && text[i] != '{' && r == -EINVAL)
                        jfail(&c, json_span_parse((struct json_span) { text + i, e - i }, INV_TEXT_DEPTH, &o) == 0
                                          ? "inventory must be a JSON object"
                                          : "not valid JSON");
                else if (r == -ENOMEM)
                        joom(&c);
                else
                        jfail(&c, "%s", why);
                json_object_put(o);
        }
        if (c.r == 0 && head_from_json(w.rest, inv, &c)) {
                for (size_t i = 0; i < N_INV_LISTS; i++)
                        list_from_text(&w, i);
                tail_from_json(w.rest, inv, &c);
        }
        json_object_put(w.rest);
        return c.r;
}

int inventory_from_string(const char *text, struct inventory *inv, char *err, size_t errlen) {
        return inventory_from_text(text, strlen(text), inv, err, errlen);
}
