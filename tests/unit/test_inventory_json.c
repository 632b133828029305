/* Inventory model <-> JSON: round trips, unset fields, bad documents. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.h"

static void fill(struct inventory *inv) {
        inventory_init(inv);
        inv->host_id = strdup("4c4c4544-0042-3510-8056-b4c04f4a5a32");
        inv->host_id_source = strdup("smbios-uuid");
        inv->hostname = strdup("node-1");
        inv->cpu.architecture = strdup("x86_64");
        inv->cpu.model_name = strdup("AMD EPYC");
        inv->cpu.count = 64;
        inv->cpu.sockets = 2;
        inv->cpu.cores_per_socket = 16;
        inv->cpu.threads_per_core = 2;
        inv->cpu.frequency_mhz = 3500.5;
        strv_push(&inv->cpu.flags, "lm");
        strv_push(&inv->cpu.flags, "avx2");
        inv->memory.usable_bytes = 270000000000LL;
        inv->memory.physical_bytes = 274877906944LL;
        inv->memory.physical_bytes_method = strdup("smbios");
        inv->system_vendor.manufacturer = strdup("Dell Inc.");
        inv->system_vendor.product_name = strdup("PowerEdge R640");
        inv->system_vendor.serial_number = strdup("CZJ1234");
        inv->system_vendor.uuid = strdup("4c4c4544-0042-3510-8056-b4c04f4a5a32");
        inv->system_vendor.virtual_machine = TRI_FALSE;
        inv->system_vendor.virtual_method = strdup("no-hypervisor-signal");
        inv->system_vendor.firmware_vendor = strdup("Dell Inc.");
        inv->system_vendor.firmware_version = strdup("2.19.1");
        inv->system_vendor.firmware_date = strdup("06/21/2023");
        inv->boot.current_boot_mode = strdup("uefi");
        inv->boot.secure_boot_state = strdup("enabled");
        inv->boot.pxe_interface = strdup("eno1");
        inv->boot.command_line = strdup("BOOT_IMAGE=/vmlinuz \"quoted\" \\ back");
        struct inv_disk *d = inv_array_append((void **) &inv->disks, &inv->n_disks, sizeof *d);
        inv_disk_init(d);
        d->name = strdup("nvme0n1");
        d->path = strdup("/dev/nvme0n1");
        d->by_id = strdup("/dev/disk/by-id/nvme-eui.0025388b91b2c1a5");
        d->id = strdup(d->by_id);
        d->by_path = strdup("/dev/disk/by-path/pci-0000:3b:00.0-nvme-1");
        d->wwn = strdup("eui.0025388b91b2c1a5");
        d->serial = strdup("S4EVNF0M123456");
        d->model = strdup("Samsung SSD 980 PRO 1TB");
        d->size_bytes = 1000204886016LL;
        d->logical_sector_size = 512;
        d->physical_sector_size = 512;
        d->drive_type = strdup("NVMe");
        d->removable = TRI_FALSE;
        d->read_only = TRI_FALSE;
        d->rotational = TRI_FALSE;
        d->transport = strdup("nvme");
        strv_push(&d->holders, "dm-0");
        struct inv_partition *p = inv_array_append((void **) &d->partitions, &d->n_partitions, sizeof *p);
        inv_partition_init(p);
        p->name = strdup("nvme0n1p1");
        p->size_bytes = 536870912;
        p->fstype = strdup("vfat");
        p->label = strdup("EFI");
        p->uuid = strdup("1234-ABCD");
        p->mountpoint = strdup("/boot/efi");
        d->is_installation_media = TRI_FALSE;
        d->eligible = false;
        strv_push(&d->not_eligible_reasons, "Disk has mounted filesystems");
        inv_trunc_note(&d->truncated, "partitions", 300, 256);
        struct inv_interface *it = inv_array_append((void **) &inv->interfaces, &inv->n_interfaces, sizeof *it);
        inv_interface_init(it);
        it->name = strdup("bond0");
        it->mac_address = strdup("52:54:00:00:00:01");
        it->mac_is_permanent = TRI_FALSE;
        strv_push(&it->ipv4_addresses, "192.0.2.10/24");
        strv_push(&it->ipv6_addresses, "2001:db8::10/64");
        it->mtu = 9000;
        it->has_carrier = TRI_TRUE;
        it->speed_mbps = 25000;
        it->type = strdup("bond");
        it->driver = strdup("bonding");
        strv_push(&it->bond_members, "eno1");
        strv_push(&it->bond_members, "eno2");
        it = inv_array_append((void **) &inv->interfaces, &inv->n_interfaces, sizeof *it);
        inv_interface_init(it);
        it->name = strdup("bond0.42");
        it->type = strdup("vlan");
        it->vlan_id = 42;
        it->vlan_parent = strdup("bond0");
        it->vendor = strdup("0x8086");
        it->product = strdup("0x159b");
        struct inv_route *r = inv_array_append((void **) &inv->routes, &inv->n_routes, sizeof *r);
        r->destination = strdup("0.0.0.0/0");
        r->gateway = strdup("192.0.2.1");
        r->interface = strdup("bond0");
        r->family = 4;
        r->metric = 100;
        struct inv_gpu *g = inv_array_append((void **) &inv->gpus, &inv->n_gpus, sizeof *g);
        g->pci_address = strdup("0000:03:00.0");
        g->vendor_id = strdup("0x102b");
        g->device_id = strdup("0x0536");
        g->class_id = strdup("0x030000");
        g->driver = strdup("mgag200");
        inv->tpm_version = strdup("2.0");
        inv_trunc_note(&inv->truncated, "disks", 10000, 1024);
}

static char *dump(const struct inventory *inv) {
        json_object *o = inventory_to_json(inv);
        char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        return s;
}

Test(inventory_json, full_round_trip) {
        struct inventory a, b;
        char err[256];
        fill(&a);
        char *first = dump(&a);
        cr_assert_eq(inventory_from_string(first, &b, err, sizeof err), 0, "%s", err);
        char *second = dump(&b);
        cr_assert_str_eq(first, second);
        cr_assert_str_eq(b.disks[0].partitions[0].label, "EFI");
        cr_assert_eq(b.interfaces[1].vlan_id, 42);
        cr_assert_eq(b.routes[0].metric, 100);
        cr_assert_float_eq(b.cpu.frequency_mhz, 3500.5, 1e-9);
        cr_assert_eq(b.truncated.n, 1);
        cr_assert_eq(b.truncated.e[0].total, 10000);
        cr_assert_eq(b.system_vendor.virtual_machine, TRI_FALSE);
        free(first);
        free(second);
        inventory_free(&a);
        inventory_free(&b);
}

Test(inventory_json, unset_fields_are_absent_not_invented) {
        struct inventory a, b;
        inventory_init(&a);
        json_object *o = inventory_to_json(&a);
        json_object *cpu, *v;
        cr_assert(json_object_object_get_ex(o, "cpu", &cpu));
        cr_assert_not(json_object_object_get_ex(cpu, "count", &v));
        cr_assert_not(json_object_object_get_ex(cpu, "frequency_mhz", &v));
        cr_assert_not(json_object_object_get_ex(o, "host_id", &v));
        cr_assert_not(json_object_object_get_ex(o, "truncated", &v));
        cr_assert(json_object_object_get_ex(o, "disks", &v));
        cr_assert_eq(json_object_array_length(v), 0);
        cr_assert_eq(inventory_from_json(o, &b, NULL, 0), 0);
        cr_assert_eq(b.cpu.count, INV_UNSET);
        cr_assert_eq(b.system_vendor.virtual_machine, TRI_UNSET);
        json_object_put(o);
        inventory_free(&b);
}

Test(inventory_json, nulls_read_as_unset) {
        struct inventory b;
        const char *t = "{\"inventory_version\":1,\"hostname\":null,\"cpu\":{\"count\":null},"
                        "\"disks\":[{\"name\":\"sda\",\"size_bytes\":null}]}";
        cr_assert_eq(inventory_from_string(t, &b, NULL, 0), 0);
        cr_assert_null(b.hostname);
        cr_assert_eq(b.cpu.count, INV_UNSET);
        cr_assert_eq(b.disks[0].size_bytes, INV_UNSET);
        inventory_free(&b);
}

Test(inventory_json, bad_documents_name_the_field) {
        struct {
                const char *doc, *reason;
        } cases[] = {
                { "[]", "must be a JSON object" },
                { "{}", "inventory_version must be 1" },
                { "{\"inventory_version\":2}", "inventory_version must be 1" },
                { "{\"inventory_version\":1,\"hostname\":5}", "\"hostname\" must be string" },
                { "{\"inventory_version\":1,\"cpu\":{\"count\":\"8\"}}", "\"count\" must be int" },
                { "{\"inventory_version\":1,\"cpu\":{\"count\":-8}}", "\"count\" must not be negative" },
                { "{\"inventory_version\":1,\"disks\":{}}", "\"disks\" must be array" },
                { "{\"inventory_version\":1,\"disks\":[1]}", "entries of \"disks\" must be objects" },
                { "{\"inventory_version\":1,\"routes\":[{\"family\":5}]}", "family must be 4 or 6" },
                { "{\"inventory_version\":1,\"cpu\":{\"flags\":[1]}}", "\"flags\" must hold strings" },
                { "not json", "not valid JSON" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                struct inventory b;
                char err[256];
                cr_assert_eq(inventory_from_string(cases[i].doc, &b, err, sizeof err), -EINVAL, "%s", cases[i].doc);
                cr_assert(strstr(err, cases[i].reason), "\"%s\": got \"%s\"", cases[i].doc, err);
                inventory_free(&b);
        }
}

Test(inventory_json, list_caps_are_enforced_on_input) {
        /* A coordinator must not accept more entries than an agent may send. */
        size_t n = INV_MAX_DISKS + 1;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "inventory_version", json_object_new_int(1));
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < n; i++)
                json_object_array_add(a, json_object_new_object());
        json_object_object_add(o, "disks", a);
        struct inventory b;
        char err[256];
        cr_assert_eq(inventory_from_json(o, &b, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "at most 1024"), "%s", err);
        inventory_free(&b);
        json_object_put(o);
}

Test(inventory_json, unknown_fields_ignored) {
        struct inventory b;
        cr_assert_eq(inventory_from_string("{\"inventory_version\":1,\"future\":{\"x\":1}}", &b, NULL, 0), 0);
        inventory_free(&b);
}

/* ---- what a JSON text costs to parse (issue 32, item 9) ---------------------- */
#include <malloc.h>
#include <stdio.h>

#include "jsonread.h"

static size_t heap_used(void) {
        struct mallinfo2 m = mallinfo2();
        return m.uordblks + m.hblkhd;
}

/* n copies of unit, comma-joined inside open/close (malloc'd; *len). */
static char *repeated(const char *open, const char *unit, const char *close, size_t n, size_t *len) {
        size_t ul = strlen(unit);
        char *s = malloc(strlen(open) + n * (ul + 1) + strlen(close) + 1);
        cr_assert_not_null(s);
        size_t k = (size_t) sprintf(s, "%s", open);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        s[k++] = ',';
                memcpy(s + k, unit, ul);
                k += ul;
        }
        k += (size_t) sprintf(s + k, "%s", close);
        *len = k;
        return s;
}

/* The estimate is at least what json-c takes, for every shape (the
 * heap's own count; under a sanitizer, which keeps its own, this only
 * checks that each parses). */
Test(json_cost, bounds_what_json_c_takes) {
        static const char *const units[] = { "0", "1234567", "\"\"", "\"abcdefgh\"", "{}", "[]", "true", "null",
                                             "{\"a\":0}", "{\"name\":\"sda\",\"size\":1,\"rota\":false}", "[[[]]]" };
        for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
                size_t len;
                char *s = repeated("[", units[u], "]", 20000, &len);
                size_t before = heap_used();
                json_object *o = json_tokener_parse(s);
                size_t took = heap_used() - before;
                cr_assert_not_null(o, "%s", units[u]);
                size_t est = json_parse_cost(s, len);
                cr_expect_geq(est, took, "[%s, ...]: estimated %zu, json-c took %zu", units[u], est, took);
                json_object_put(o);
                free(s);
        }
}

Test(json_cost, tiny_values_are_refused_documents_are_not) {
        size_t len;
        char *s = repeated("[", "{}", "]", 1u << 20, &len);
        size_t cost = json_parse_cost(s, len);
        cr_assert_gt(cost / len, 200, "empty objects: %zu for %zu", cost, len);
        cr_assert_not(json_parse_cost_ok(cost, len));
        free(s);
        s = repeated("[", "0", "]", 1u << 20, &len);
        cr_assert_not(json_parse_cost_ok(json_parse_cost(s, len), len), "a million zeros");
        free(s);
        /* Strings and escapes: braces inside them are text. */
        s = repeated("[", "\"{}{}{}\\\"{}[]\"", "]", 1u << 16, &len);
        cr_assert(json_parse_cost_ok(json_parse_cost(s, len), len));
        free(s);
        /* Small texts pass whatever their shape. */
        cr_assert(json_parse_cost_ok(json_parse_cost("[{},{},{}]", 10), 10));
        /* The captured machines' inventories pass. */
        static const char *const fixtures[] = { MUSTER_FIXTURES_DIR "/qemu-q35/expected.json",
                                                MUSTER_FIXTURES_DIR "/build-machine/expected.json" };
        for (size_t i = 0; i < 2; i++) {
                FILE *f = fopen(fixtures[i], "rb");
                cr_assert_not_null(f, "%s", fixtures[i]);
                static char buf[1 << 20];
                size_t n = fread(buf, 1, sizeof buf, f);
                fclose(f);
                size_t c = json_parse_cost(buf, n);
                cr_assert_lt(c / n, JSON_PARSE_COST_RATIO, "%s: %zu for %zu bytes", fixtures[i], c, n);
        }
        struct inventory inv;
        char err[256];
        s = repeated("{\"x\":[", "{}", "]}", 1u << 19, &len);
        cr_assert_eq(inventory_from_string(s, &inv, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "too many small values"), "%s", err);
        inventory_free(&inv);
        free(s);
}
