/* Inventory model lifetime and its JSON in both directions. Field names are
 * the wire format the coordinator parses; unset values are left out. */
#include "inventory.h"

#include <errno.h>
#include <stdarg.h>
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

void inv_route_free(struct inv_route *r) {
        free(r->destination);
        free(r->gateway);
        free(r->interface);
        *r = (struct inv_route) { .metric = INV_UNSET };
}

void inv_gpu_free(struct inv_gpu *g) {
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

static json_object *disk_to_json(const struct inv_disk *d) {
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
        json_object *parts = json_object_new_array_ext((int) d->n_partitions);
        for (size_t i = 0; i < d->n_partitions; i++) {
                const struct inv_partition *p = &d->partitions[i];
                json_object *po = json_object_new_object();
                put_str(po, "name", p->name);
                put_i64(po, "size_bytes", p->size_bytes);
                put_str(po, "fstype", p->fstype);
                put_str(po, "label", p->label);
                put_str(po, "uuid", p->uuid);
                put_str(po, "mountpoint", p->mountpoint);
                json_object_array_add(parts, po);
        }
        json_object_object_add(o, "partitions", parts);
        put_tri(o, "is_installation_media", d->is_installation_media);
        json_object *el = json_object_new_object();
        json_object_object_add(el, "eligible", json_object_new_boolean(d->eligible));
        put_strv(el, "not_eligible_reasons", &d->not_eligible_reasons, true);
        json_object_object_add(o, "installation_eligibility", el);
        put_trunc(o, &d->truncated);
        return o;
}

static json_object *iface_to_json(const struct inv_interface *i) {
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

json_object *inventory_to_json(const struct inventory *inv) {
        json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        json_object_object_add(o, "inventory_version", json_object_new_int(inv->version));
        put_str(o, "host_id", inv->host_id);
        put_str(o, "host_id_source", inv->host_id_source);
        put_str(o, "hostname", inv->hostname);

        json_object *c = json_object_new_object();
        put_str(c, "architecture", inv->cpu.architecture);
        put_str(c, "model_name", inv->cpu.model_name);
        put_i64(c, "count", inv->cpu.count);
        put_i64(c, "sockets", inv->cpu.sockets);
        put_i64(c, "cores_per_socket", inv->cpu.cores_per_socket);
        put_i64(c, "threads_per_core", inv->cpu.threads_per_core);
        if (inv->cpu.frequency_mhz >= 0) {
                /* Three decimals, as /proc/cpuinfo gives them; no binary noise. */
                char num[32];
                snprintf(num, sizeof num, "%.3f", inv->cpu.frequency_mhz);
                char *e = num + strlen(num) - 1;
                while (*e == '0')
                        *e-- = '\0';
                if (*e == '.')
                        *e = '\0';
                json_object_object_add(c, "frequency_mhz",
                                       json_object_new_double_s(strtod(num, NULL), num));
        }
        put_strv(c, "flags", &inv->cpu.flags, true);
        json_object_object_add(o, "cpu", c);

        json_object *m = json_object_new_object();
        put_i64(m, "usable_bytes", inv->memory.usable_bytes);
        put_i64(m, "physical_bytes", inv->memory.physical_bytes);
        put_str(m, "physical_bytes_method", inv->memory.physical_bytes_method);
        json_object_object_add(o, "memory", m);

        const struct inv_system_vendor *sv = &inv->system_vendor;
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
        json_object_object_add(o, "system_vendor", s);

        json_object *b = json_object_new_object();
        put_str(b, "current_boot_mode", inv->boot.current_boot_mode);
        put_str(b, "secure_boot_state", inv->boot.secure_boot_state);
        put_str(b, "pxe_interface", inv->boot.pxe_interface);
        put_str(b, "command_line", inv->boot.command_line);
        json_object_object_add(o, "boot", b);

        json_object *a = json_object_new_array_ext((int) inv->n_disks);
        for (size_t i = 0; i < inv->n_disks; i++)
                json_object_array_add(a, disk_to_json(&inv->disks[i]));
        json_object_object_add(o, "disks", a);

        a = json_object_new_array_ext((int) inv->n_interfaces);
        for (size_t i = 0; i < inv->n_interfaces; i++)
                json_object_array_add(a, iface_to_json(&inv->interfaces[i]));
        json_object_object_add(o, "interfaces", a);

        a = json_object_new_array_ext((int) inv->n_routes);
        for (size_t i = 0; i < inv->n_routes; i++) {
                const struct inv_route *r = &inv->routes[i];
                json_object *ro = json_object_new_object();
                put_str(ro, "destination", r->destination);
                put_str(ro, "gateway", r->gateway);
                put_str(ro, "interface", r->interface);
                json_object_object_add(ro, "family", json_object_new_int(r->family));
                put_i64(ro, "metric", r->metric);
                json_object_array_add(a, ro);
        }
        json_object_object_add(o, "routes", a);

        a = json_object_new_array_ext((int) inv->n_gpus);
        for (size_t i = 0; i < inv->n_gpus; i++) {
                const struct inv_gpu *g = &inv->gpus[i];
                json_object *go = json_object_new_object();
                put_str(go, "pci_address", g->pci_address);
                put_str(go, "vendor_id", g->vendor_id);
                put_str(go, "device_id", g->device_id);
                put_str(go, "class_id", g->class_id);
                put_str(go, "driver", g->driver);
                json_object_array_add(a, go);
        }
        json_object_object_add(o, "gpus", a);
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

static void disk_from_json(json_object *o, struct inv_disk *d, struct jctx *c) {
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
        json_object *parts = jget_array(o, "partitions", INV_MAX_PARTITIONS, c);
        for (size_t i = 0; parts && i < json_object_array_length(parts) && c->r == 0; i++) {
                json_object *po = jget_elem(parts, i, "partitions", c);
                struct inv_partition *p = po ? inv_array_append((void **) &d->partitions,
                                                                &d->n_partitions, sizeof *p) : NULL;
                if (!p)
                        break;
                inv_partition_init(p);
                get_str(po, "name", &p->name, c);
                get_i64(po, "size_bytes", &p->size_bytes, c);
                get_str(po, "fstype", &p->fstype, c);
                get_str(po, "label", &p->label, c);
                get_str(po, "uuid", &p->uuid, c);
                get_str(po, "mountpoint", &p->mountpoint, c);
        }
        get_tri(o, "is_installation_media", &d->is_installation_media, c);
        json_object *el = jget(o, "installation_eligibility", json_type_object, c);
        json_object *v = el ? jget(el, "eligible", json_type_boolean, c) : NULL;
        d->eligible = v && json_object_get_boolean(v);
        if (el)
                get_strv(el, "not_eligible_reasons", &d->not_eligible_reasons, 32, c);
        get_trunc(o, &d->truncated, c);
}

static void iface_from_json(json_object *o, struct inv_interface *i, struct jctx *c) {
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

int inventory_from_json(json_object *obj, struct inventory *inv, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        json_object *v, *a;

        inventory_init(inv);
        if (err && errlen)
                err[0] = '\0';
        if (!json_object_is_type(obj, json_type_object)) {
                jfail(&c, "inventory must be a JSON object");
                return c.r;
        }
        v = jget(obj, "inventory_version", json_type_int, &c);
        if (!v || json_object_get_int(v) != INVENTORY_VERSION) {
                jfail(&c, "inventory_version must be %d", INVENTORY_VERSION);
                return c.r;
        }
        get_str(obj, "host_id", &inv->host_id, &c);
        get_str(obj, "host_id_source", &inv->host_id_source, &c);
        get_str(obj, "hostname", &inv->hostname, &c);

        json_object *cpu = jget(obj, "cpu", json_type_object, &c);
        get_str(cpu, "architecture", &inv->cpu.architecture, &c);
        get_str(cpu, "model_name", &inv->cpu.model_name, &c);
        get_i64(cpu, "count", &inv->cpu.count, &c);
        get_i64(cpu, "sockets", &inv->cpu.sockets, &c);
        get_i64(cpu, "cores_per_socket", &inv->cpu.cores_per_socket, &c);
        get_i64(cpu, "threads_per_core", &inv->cpu.threads_per_core, &c);
        if ((v = jget(cpu, "frequency_mhz", json_type_double, &c)))
                inv->cpu.frequency_mhz = json_object_get_double(v);
        get_strv(cpu, "flags", &inv->cpu.flags, INV_MAX_CPU_FLAGS, &c);

        json_object *m = jget(obj, "memory", json_type_object, &c);
        get_i64(m, "usable_bytes", &inv->memory.usable_bytes, &c);
        get_i64(m, "physical_bytes", &inv->memory.physical_bytes, &c);
        get_str(m, "physical_bytes_method", &inv->memory.physical_bytes_method, &c);

        struct inv_system_vendor *sv = &inv->system_vendor;
        json_object *s = jget(obj, "system_vendor", json_type_object, &c);
        get_str(s, "manufacturer", &sv->manufacturer, &c);
        get_str(s, "product_name", &sv->product_name, &c);
        get_str(s, "serial_number", &sv->serial_number, &c);
        get_str(s, "uuid", &sv->uuid, &c);
        get_tri(s, "virtual", &sv->virtual_machine, &c);
        get_str(s, "virtual_method", &sv->virtual_method, &c);
        json_object *fw = jget(s, "firmware", json_type_object, &c);
        get_str(fw, "vendor", &sv->firmware_vendor, &c);
        get_str(fw, "version", &sv->firmware_version, &c);
        get_str(fw, "date", &sv->firmware_date, &c);

        json_object *b = jget(obj, "boot", json_type_object, &c);
        get_str(b, "current_boot_mode", &inv->boot.current_boot_mode, &c);
        get_str(b, "secure_boot_state", &inv->boot.secure_boot_state, &c);
        get_str(b, "pxe_interface", &inv->boot.pxe_interface, &c);
        get_str(b, "command_line", &inv->boot.command_line, &c);

        a = jget_array(obj, "disks", INV_MAX_DISKS, &c);
        for (size_t i = 0; a && i < json_object_array_length(a) && c.r == 0; i++) {
                json_object *e = jget_elem(a, i, "disks", &c);
                struct inv_disk *d = e ? inv_array_append((void **) &inv->disks, &inv->n_disks,
                                                          sizeof *d) : NULL;
                if (!d)
                        break;
                inv_disk_init(d);
                disk_from_json(e, d, &c);
        }
        a = jget_array(obj, "interfaces", INV_MAX_INTERFACES, &c);
        for (size_t i = 0; a && i < json_object_array_length(a) && c.r == 0; i++) {
                json_object *e = jget_elem(a, i, "interfaces", &c);
                struct inv_interface *it = e ? inv_array_append((void **) &inv->interfaces,
                                                                &inv->n_interfaces, sizeof *it) : NULL;
                if (!it)
                        break;
                inv_interface_init(it);
                iface_from_json(e, it, &c);
        }
        a = jget_array(obj, "routes", INV_MAX_ROUTES, &c);
        for (size_t i = 0; a && i < json_object_array_length(a) && c.r == 0; i++) {
                json_object *e = jget_elem(a, i, "routes", &c);
                struct inv_route *r = e ? inv_array_append((void **) &inv->routes, &inv->n_routes,
                                                           sizeof *r) : NULL;
                if (!r)
                        break;
                r->metric = INV_UNSET;
                get_str(e, "destination", &r->destination, &c);
                get_str(e, "gateway", &r->gateway, &c);
                get_str(e, "interface", &r->interface, &c);
                if ((v = jget(e, "family", json_type_int, &c)))
                        r->family = json_object_get_int(v);
                if (r->family != 4 && r->family != 6)
                        jfail(&c, "route family must be 4 or 6");
                get_i64(e, "metric", &r->metric, &c);
        }
        a = jget_array(obj, "gpus", INV_MAX_GPUS, &c);
        for (size_t i = 0; a && i < json_object_array_length(a) && c.r == 0; i++) {
                json_object *e = jget_elem(a, i, "gpus", &c);
                struct inv_gpu *g = e ? inv_array_append((void **) &inv->gpus, &inv->n_gpus,
                                                         sizeof *g) : NULL;
                if (!g)
                        break;
                get_str(e, "pci_address", &g->pci_address, &c);
                get_str(e, "vendor_id", &g->vendor_id, &c);
                get_str(e, "device_id", &g->device_id, &c);
                get_str(e, "class_id", &g->class_id, &c);
                get_str(e, "driver", &g->driver, &c);
        }
        get_str(obj, "tpm_version", &inv->tpm_version, &c);
        get_trunc(obj, &inv->truncated, &c);
        return c.r;
}

int inventory_from_string(const char *text, struct inventory *inv, char *err, size_t errlen) {
        _cleanup_json_ json_object *o = json_tokener_parse(text);
        if (!o) {
                inventory_init(inv);
                if (err && errlen)
                        snprintf(err, errlen, "not valid JSON");
                return -EINVAL;
        }
        return inventory_from_json(o, inv, err, errlen);
}
