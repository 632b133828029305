/* Host and cluster validations on the captured machines' inventories
 * (tests/fixtures), and the CIDR and hostname helpers under them. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/config.h"
#include "domain/validations.h"

#define GIB (INT64_C(1) << 30)
#define N(a) (sizeof(a) / sizeof *(a))

/* ---- fixtures ---------------------------------------------------------- */

/* qemu-q35: 4 CPUs, 2 GiB, nvme0n1 200 GiB and vda 1 TiB eligible, sda
 * (mounted + swap), sdb (USB, small) and sr0 (ODD) not; addresses
 * 192.0.2.10/24 (enp1s0), 203.0.113.10/24 (bond0), 198.51.100.10/24
 * (enp2s0.100) and 2001:db8::10/64 and friends.
 * build-machine: 2 CPUs, 24 GiB, one disk vda (mounted at /), 192.0.2.2/24. */
static struct inventory q35, build;
static struct muster_config cfg;

static void load(const char *name, struct inventory *inv) {
        char path[4096], err[256];
        FILE *f;
        long n;
        char *text;

        snprintf(path, sizeof path, "%s/%s/expected.json", MUSTER_FIXTURES_DIR, name);
        f = fopen(path, "re");
        cr_assert_not_null(f, "%s", path);
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        text = calloc(1, (size_t) n + 1);
        cr_assert_eq(fread(text, 1, (size_t) n, f), (size_t) n);
        fclose(f);
        cr_assert_eq(inventory_from_string(text, inv, err, sizeof err), 0, "%s: %s", path, err);
        free(text);
}

static void setup(void) {
        config_defaults(&cfg);
        load("qemu-q35", &q35);
        load("build-machine", &build);
}

static void teardown(void) {
        inventory_free(&q35);
        inventory_free(&build);
}

TestSuite(cidr);
TestSuite(hostname);
TestSuite(host, .init = setup, .fini = teardown);
TestSuite(cluster, .init = setup, .fini = teardown);

/* An unbound host with the given inventory that checked in just now. */
static struct host_facts unbound(const struct inventory *inv) {
        return (struct host_facts) {
                .status = HOST_DISCOVERING_UNBOUND,
                .has_inventory = inv != NULL,
                .inventory = inv,
                .seconds_since_checkin = 5,
        };
}

static struct host_facts bound_full(const struct inventory *inv, enum host_role role) {
        struct host_facts f = unbound(inv);
        f.status = HOST_DISCOVERING;
        f.bound = true;
        f.role = role;
        f.cluster.name = "lab";
        f.cluster.base_dns_domain = "example.com";
        f.cluster.machine_network_cidr = "192.0.2.0/24";
        f.cluster.api_vip = "192.0.2.5";
        return f;
}

struct run {
        struct validation_result v[VAL_HOST_COUNT];
        int n;
};

static struct run run_host(const struct host_facts *f) {
        struct run r;
        r.n = validations_host(f, &cfg, r.v);
        cr_assert_geq(r.n, 0);
        return r;
}

static void expect(const struct validation_result *v, size_t n, enum validation_id id,
                   enum validation_status st, const char *msg) {
        const struct validation_result *r = validations_find(v, n, id);
        cr_assert_not_null(r, "%s missing", validation_id_to_string(id));
        cr_assert_eq(r->status, st, "%s: status %s, want %s (%s)", validation_id_to_string(id),
                     validation_status_to_string(r->status), validation_status_to_string(st), r->message);
        if (msg)
                cr_assert_str_eq(r->message, msg, "%s: \"%s\", want \"%s\"", validation_id_to_string(id), r->message,
                                 msg);
}

static void expect_host(const struct host_facts *f, enum validation_id id, enum validation_status st,
                        const char *msg) {
        struct run r = run_host(f);
        expect(r.v, (size_t) r.n, id, st, msg);
}

static const struct validation_result *get(const struct run *r, enum validation_id id) {
        return validations_find(r->v, (size_t) r->n, id);
}

/* ---- CIDR -------------------------------------------------------------- */

Test(cidr, ip_parse) {
        static const struct { const char *s; int family; } cases[] = {
                { "192.0.2.1", AF_INET }, { "0.0.0.0", AF_INET }, { "255.255.255.255", AF_INET },
                { "2001:db8::1", AF_INET6 }, { "::", AF_INET6 }, { "::ffff:192.0.2.1", AF_INET6 },
                { "", -1 }, { "192.0.2", -1 }, { "192.0.2.256", -1 }, { "192.0.2.1/24", -1 },
                { " 192.0.2.1", -1 }, { "2001:db8::1::2", -1 }, { "fe80::1%eth0", -1 }, { "host", -1 },
        };
        for (size_t i = 0; i < N(cases); i++) {
                struct ip_addr a;
                int r = ip_parse(cases[i].s, &a);
                if (cases[i].family < 0)
                        cr_assert_eq(r, -EINVAL, "'%s'", cases[i].s);
                else {
                        cr_assert_eq(r, 0, "'%s'", cases[i].s);
                        cr_assert_eq(a.family, cases[i].family, "'%s'", cases[i].s);
                }
        }
        cr_assert_eq(ip_parse(NULL, NULL), -EINVAL);
}

Test(cidr, parse) {
        static const struct { const char *s; int ok; unsigned prefix; } cases[] = {
                { "192.0.2.0/24", 1, 24 }, { "0.0.0.0/0", 1, 0 }, { "192.0.2.7/32", 1, 32 },
                { "2001:db8::/32", 1, 32 }, { "::/0", 1, 0 }, { "2001:db8::1/128", 1, 128 },
                { "10.0.0.0/8", 1, 8 },
                { "192.0.2.0", 0, 0 }, { "192.0.2.0/", 0, 0 }, { "192.0.2.0/33", 0, 0 },
                { "192.0.2.0/024", 0, 0 }, { "192.0.2.0/-1", 0, 0 }, { "192.0.2.0/24/1", 0, 0 },
                { "192.0.2.0/ 24", 0, 0 }, { "192.0.2.0/24 ", 0, 0 }, { "/24", 0, 0 },
                { "2001:db8::/129", 0, 0 }, { "2001:db8::/1000", 0, 0 }, { "foo/8", 0, 0 },
                { "192.0.2.0/2x", 0, 0 }, { "", 0, 0 },
        };
        for (size_t i = 0; i < N(cases); i++) {
                struct cidr c;
                int r = cidr_parse(cases[i].s, &c);
                cr_assert_eq(r, cases[i].ok ? 0 : -EINVAL, "'%s': %d", cases[i].s, r);
                if (cases[i].ok)
                        cr_assert_eq(c.prefix, cases[i].prefix, "'%s'", cases[i].s);
        }
}

Test(cidr, contains) {
        static const struct { const char *net, *ip; bool in; } cases[] = {
                { "192.0.2.0/24", "192.0.2.0", true },
                { "192.0.2.0/24", "192.0.2.255", true },
                { "192.0.2.0/24", "192.0.3.0", false },
                { "192.0.2.0/23", "192.0.3.254", true },
                { "192.0.2.0/23", "192.0.4.1", false },
                { "192.0.2.128/25", "192.0.2.127", false },
                { "192.0.2.128/25", "192.0.2.128", true },
                { "0.0.0.0/0", "203.0.113.9", true },
                { "0.0.0.0/0", "2001:db8::1", false },
                { "192.0.2.7/32", "192.0.2.7", true },
                { "192.0.2.7/32", "192.0.2.6", false },
                { "192.0.2.0/31", "192.0.2.1", true },
                { "10.0.0.0/8", "10.255.255.255", true },
                { "10.0.0.0/8", "11.0.0.0", false },
                { "2001:db8::/32", "2001:db8:ffff::1", true },
                { "2001:db8::/32", "2001:db9::1", false },
                { "2001:db8::/32", "192.0.2.1", false },
                { "::/0", "fd00::1", true },
                { "::/0", "0.0.0.0", false },
                { "2001:db8::1/128", "2001:db8::1", true },
                { "2001:db8::1/128", "2001:db8::2", false },
                { "2001:db8::/121", "2001:db8::7f", true },
                { "2001:db8::/121", "2001:db8::80", false },
                { "2001:db8::/127", "2001:db8::1", true },
                { "::ffff:0:0/96", "192.0.2.1", false }, /* families never mix */
        };
        for (size_t i = 0; i < N(cases); i++) {
                struct cidr c;
                struct ip_addr a;
                cr_assert_eq(cidr_parse(cases[i].net, &c), 0, "%s", cases[i].net);
                cr_assert_eq(ip_parse(cases[i].ip, &a), 0, "%s", cases[i].ip);
                cr_assert_eq(cidr_contains(&c, &a), cases[i].in, "%s in %s", cases[i].ip, cases[i].net);
        }
}

Test(cidr, host_bits_and_network_string) {
        static const struct { const char *s; bool host_bits; const char *net; } cases[] = {
                { "192.0.2.0/24", false, "192.0.2.0/24" },
                { "192.0.2.10/24", true, "192.0.2.0/24" },
                { "192.0.3.10/23", true, "192.0.2.0/23" },
                { "192.0.2.10/32", false, "192.0.2.10/32" },
                { "192.0.2.10/0", true, "0.0.0.0/0" },
                { "2001:db8::10/64", true, "2001:db8::/64" },
                { "2001:db8::/64", false, "2001:db8::/64" },
                { "2001:db8::ff/121", true, "2001:db8::80/121" },
                { "2001:db8::1/128", false, "2001:db8::1/128" },
        };
        for (size_t i = 0; i < N(cases); i++) {
                struct cidr c;
                char buf[64];
                cr_assert_eq(cidr_parse(cases[i].s, &c), 0);
                cr_assert_eq(cidr_has_host_bits(&c), cases[i].host_bits, "%s", cases[i].s);
                cr_assert_str_eq(cidr_network_string(&c, buf, sizeof buf), cases[i].net);
        }
        struct cidr c;
        char small[8];
        cidr_parse("192.0.2.0/24", &c);
        cr_assert_null(cidr_network_string(&c, small, sizeof small));
}

Test(cidr, ip_equal) {
        struct ip_addr a, b, c;
        ip_parse("192.0.2.1", &a);
        ip_parse("192.0.2.1", &b);
        ip_parse("::ffff:192.0.2.1", &c);
        cr_assert(ip_equal(&a, &b));
        cr_assert_not(ip_equal(&a, &c));
        ip_parse("2001:db8:0:0::1", &a);
        ip_parse("2001:db8::1", &b);
        cr_assert(ip_equal(&a, &b));
}

/* ---- hostnames --------------------------------------------------------- */

Test(hostname, rules) {
        char label63[64], label64[65], long254[255];
        memset(label63, 'a', 63), label63[63] = '\0';
        memset(label64, 'a', 64), label64[64] = '\0';
        for (size_t i = 0; i < 254; i++)
                long254[i] = i % 2 ? '.' : 'a';
        long254[253] = 'b';
        long254[254] = '\0';
        const struct { const char *name; const char *why; } cases[] = {
                { "worker-0", NULL },
                { "muster-q35-01", NULL },
                { "node1.lab.example.com", NULL },
                { "0", NULL },
                { "3com", NULL },
                { label63, NULL },
                { label64, "a label of the hostname is 64 characters long, at most 63 are allowed" },
                { long254, "hostname is 254 characters long, at most 253 are allowed" },
                { "", "hostname is empty" },
                { NULL, "hostname is empty" },
                { "localhost", "'localhost' is a loopback name" },
                { "LOCALHOST", "'LOCALHOST' is a loopback name" },
                { "localhost.localdomain", "'localhost.localdomain' is a loopback name" },
                { "localhost6", "'localhost6' is a loopback name" },
                { "localhost-1", NULL },
                { "Worker-0", "hostname contains upper-case letters; node names must be lower case" },
                { "worker_0", "hostname contains '_'; only a-z, 0-9, '-' and '.' are allowed" },
                { "wörker", "hostname contains byte 0xc3; only a-z, 0-9, '-' and '.' are allowed" },
                { "worker 0", "hostname contains byte 0x20; only a-z, 0-9, '-' and '.' are allowed" },
                { "-worker", "label '-worker' of the hostname starts or ends with '-'" },
                { "worker-.lab", "label 'worker-' of the hostname starts or ends with '-'" },
                { "worker..lab", "hostname has an empty label (leading, trailing or double dot)" },
                { ".worker", "hostname has an empty label (leading, trailing or double dot)" },
                { "worker.", "hostname has an empty label (leading, trailing or double dot)" },
        };
        for (size_t i = 0; i < N(cases); i++) {
                char why[160] = "";
                bool ok = hostname_is_valid(cases[i].name, why, sizeof why);
                cr_assert_eq(ok, cases[i].why == NULL, "case %zu '%s': %s", i, cases[i].name ?: "(null)", why);
                if (cases[i].why)
                        cr_assert_str_eq(why, cases[i].why, "case %zu", i);
        }
        cr_assert_not(hostname_is_valid("a_b", NULL, 0));
}

/* ---- host validations: always ------------------------------------------ */

Test(host, unbound_gets_the_always_seven_in_order) {
        struct host_facts f = unbound(&q35);
        struct run r = run_host(&f);
        static const enum validation_id want[] = {
                VAL_CONNECTED, VAL_HAS_INVENTORY, VAL_HAS_MIN_CPU_CORES,
                VAL_HAS_MIN_MEMORY, VAL_HAS_MIN_VALID_DISKS, VAL_HOSTNAME_VALID,
                VAL_CPU_ARCHITECTURE_MATCHES,
        };
        cr_assert_eq(r.n, 7);
        for (size_t i = 0; i < N(want); i++)
                cr_assert_eq(r.v[i].id, want[i]);
}

Test(host, bound_gets_all_in_order) {
        struct host_facts f = bound_full(&q35, ROLE_WORKER);
        struct run r = run_host(&f);
        cr_assert_eq(r.n, (int) VAL_HOST_COUNT);
        for (int i = 0; i < r.n; i++) {
                cr_assert_eq(r.v[i].id, (enum validation_id) i);
                cr_assert_gt(strlen(r.v[i].message), 0);
        }
}

Test(host, bad_arguments) {
        struct host_facts f = unbound(&q35);
        struct validation_result v[VAL_HOST_COUNT];
        cr_assert_eq(validations_host(NULL, &cfg, v), -EINVAL);
        cr_assert_eq(validations_host(&f, NULL, v), -EINVAL);
        cr_assert_eq(validations_host(&f, &cfg, NULL), -EINVAL);
}

Test(host, connected) {
        struct host_facts f = unbound(&q35);
        expect_host(&f, VAL_CONNECTED, VSTATUS_SUCCESS, "Host is connected");
        f.seconds_since_checkin = 180;
        expect_host(&f, VAL_CONNECTED, VSTATUS_SUCCESS, "Host is connected");
        f.seconds_since_checkin = 181;
        expect_host(&f, VAL_CONNECTED, VSTATUS_FAILURE, "Host has not checked in for 3m1s (disconnect timeout 3m)");
        f.seconds_since_checkin = 7300;
        expect_host(&f, VAL_CONNECTED, VSTATUS_FAILURE, "Host has not checked in for 2h1m (disconnect timeout 3m)");
        f.seconds_since_checkin = 45;
        f.disconnect_timeout_s = 30;
        expect_host(&f, VAL_CONNECTED, VSTATUS_FAILURE, "Host has not checked in for 45s (disconnect timeout 30s)");
        f.seconds_since_checkin = -1;
        expect_host(&f, VAL_CONNECTED, VSTATUS_FAILURE, "Host has never checked in");
}

Test(host, has_inventory) {
        struct host_facts f = unbound(NULL);
        struct run r = run_host(&f);
        expect(r.v, 6, VAL_HAS_INVENTORY, VSTATUS_PENDING, "Waiting for the host's hardware inventory");
        /* Everything that needs the inventory waits for it too. */
        expect(r.v, 6, VAL_HAS_MIN_CPU_CORES, VSTATUS_PENDING, "Waiting for the host's hardware inventory");
        expect(r.v, 6, VAL_HAS_MIN_MEMORY, VSTATUS_PENDING, NULL);
        expect(r.v, 6, VAL_HAS_MIN_VALID_DISKS, VSTATUS_PENDING, NULL);
        expect(r.v, 6, VAL_HOSTNAME_VALID, VSTATUS_PENDING, NULL);
        cr_assert_not(get(&r, VAL_HAS_INVENTORY)->awaits_user);

        f.has_inventory = true; /* received but did not parse */
        r = run_host(&f);
        expect(r.v, 6, VAL_HAS_INVENTORY, VSTATUS_ERROR, "The host's inventory could not be parsed");
        expect(r.v, 6, VAL_HAS_MIN_MEMORY, VSTATUS_PENDING,
               "Waiting for a usable inventory (the last one could not be parsed)");

        f = unbound(&q35);
        expect_host(&f, VAL_HAS_INVENTORY, VSTATUS_SUCCESS, "Inventory received");
}

Test(host, min_cpu_cores) {
        struct host_facts f = unbound(&q35);
        expect_host(&f, VAL_HAS_MIN_CPU_CORES, VSTATUS_SUCCESS, "Sufficient CPU cores: 4, 2 required for any host");
        f = unbound(&build);
        expect_host(&f, VAL_HAS_MIN_CPU_CORES, VSTATUS_SUCCESS, "Sufficient CPU cores: 2, 2 required for any host");
        cfg.req[REQ_ANY].cpu_cores = 3;
        expect_host(&f, VAL_HAS_MIN_CPU_CORES, VSTATUS_FAILURE, "Insufficient CPU cores: 2, 3 required for any host");

        struct inventory inv;
        inventory_init(&inv);
        f = unbound(&inv);
        expect_host(&f, VAL_HAS_MIN_CPU_CORES, VSTATUS_ERROR, "The inventory does not report the number of CPU cores");
        expect_host(&f, VAL_HAS_MIN_MEMORY, VSTATUS_ERROR, "The inventory does not report the amount of memory");
        inventory_free(&inv);
}

Test(host, min_memory) {
        struct host_facts f = unbound(&q35);
        expect_host(&f, VAL_HAS_MIN_MEMORY, VSTATUS_FAILURE, "Insufficient memory: 2 GiB, 8 GiB required for any host");
        f = unbound(&build);
        expect_host(&f, VAL_HAS_MIN_MEMORY, VSTATUS_SUCCESS, "Sufficient memory: 24 GiB, 8 GiB required for any host");
        cfg.req[REQ_ANY].memory_bytes = 512 << 20;
        f = unbound(&q35);
        expect_host(&f, VAL_HAS_MIN_MEMORY, VSTATUS_SUCCESS, "Sufficient memory: 2 GiB, 512 MiB required for any host");

        /* Without a physical size the usable one counts. */
        struct inventory inv;
        inventory_init(&inv);
        inv.memory.usable_bytes = 3 * GIB / 2;
        f = unbound(&inv);
        expect_host(&f, VAL_HAS_MIN_MEMORY, VSTATUS_SUCCESS, "Sufficient memory: 1.5 GiB, 512 MiB required for any host");
        inventory_free(&inv);
}

Test(host, min_valid_disks) {
        struct host_facts f = unbound(&q35);
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_SUCCESS,
                    "Disk nvme0n1 (200 GiB) is eligible for installation, 93.1 GiB required for any host");
        cfg.req[REQ_ANY].disk_bytes = 300LL * 1000 * 1000 * 1000;
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_SUCCESS,
                    "Disk vda (1 TiB) is eligible for installation, 279.4 GiB required for any host");
        cfg.req[REQ_ANY].disk_bytes = 2000LL * 1000 * 1000 * 1000;
        struct run r = run_host(&f);
        const struct validation_result *v = get(&r, VAL_HAS_MIN_VALID_DISKS);
        cr_assert_eq(v->status, VSTATUS_FAILURE);
        cr_assert(strncmp(v->message,
                          "No eligible disk of at least 1.8 TiB for any host: nvme0n1 is 200 GiB; "
                          "sda Disk has mounted filesystems, Disk is in use as swap; sdb Disk is too small",
                          150) == 0, "%s", v->message);
        cr_assert_eq(strlen(v->message), VAL_MSG_MAX - 1, "long lists are cut");
        cr_assert_str_eq(v->message + VAL_MSG_MAX - 4, "...");

        config_defaults(&cfg);
        f = unbound(&build);
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_FAILURE,
                    "No eligible disk of at least 93.1 GiB for any host: vda Disk has mounted filesystems");

        struct inventory inv;
        inventory_init(&inv);
        inv.cpu.count = 8;
        f = unbound(&inv);
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_FAILURE, "The host has no disks");
        inventory_free(&inv);
}

Test(host, chosen_installation_disk) {
        struct host_facts f = unbound(&q35);
        f.installation_disk_id = "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_MUSTERNVME0001";
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_SUCCESS,
                    "Installation disk nvme0n1 (200 GiB) is eligible, 93.1 GiB required for any host");
        f.installation_disk_id = "/dev/sda";
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_FAILURE,
                    "Installation disk sda is not eligible: Disk has mounted filesystems, Disk is in use as swap");
        f.installation_disk_id = "sdz";
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_FAILURE, "Installation disk sdz is not among the host's disks");
        f.installation_disk_id = "nvme0n1";
        cfg.req[REQ_ANY].disk_bytes = 300LL * 1000 * 1000 * 1000;
        expect_host(&f, VAL_HAS_MIN_VALID_DISKS, VSTATUS_FAILURE,
                    "Installation disk nvme0n1 is too small: 200 GiB, 279.4 GiB required for any host");
}

Test(host, pick_install_disk) {
        cr_assert_eq(validations_pick_install_disk(&q35, NULL, 0), 0);
        cr_assert_str_eq(q35.disks[validations_pick_install_disk(&q35, NULL, 500LL * 1000 * 1000 * 1000)].name, "vda");
        cr_assert_eq(validations_pick_install_disk(&q35, NULL, INT64_MAX), -ENOENT);
        cr_assert_str_eq(q35.disks[validations_pick_install_disk(&q35, "/dev/vda", 0)].name, "vda");
        cr_assert_eq(validations_pick_install_disk(&q35, "/dev/sr0", 0), -ENOENT, "ineligible");
        cr_assert_eq(validations_pick_install_disk(&q35, "nope", 0), -ENOENT);
        cr_assert_eq(validations_pick_install_disk(&build, NULL, 0), -ENOENT);
        cr_assert_eq(validations_pick_install_disk(NULL, NULL, 0), -EINVAL);
}

Test(host, hostname_valid) {
        struct host_facts f = unbound(&q35);
        expect_host(&f, VAL_HOSTNAME_VALID, VSTATUS_SUCCESS, "Hostname muster-q35-01 is valid");
        f.requested_hostname = "localhost";
        expect_host(&f, VAL_HOSTNAME_VALID, VSTATUS_FAILURE, "Hostname 'localhost' is not valid: 'localhost' is a loopback name");
        f.requested_hostname = "Bad_Name";
        expect_host(&f, VAL_HOSTNAME_VALID, VSTATUS_FAILURE,
                    "Hostname 'Bad_Name' is not valid: hostname contains upper-case letters; node names must be lower case");
        f.requested_hostname = "";
        expect_host(&f, VAL_HOSTNAME_VALID, VSTATUS_SUCCESS, "Hostname muster-q35-01 is valid");
        f = unbound(&build);
        expect_host(&f, VAL_HOSTNAME_VALID, VSTATUS_SUCCESS, "Hostname vm is valid");

        struct inventory inv;
        inventory_init(&inv);
        f = unbound(&inv);
        expect_host(&f, VAL_HOSTNAME_VALID, VSTATUS_FAILURE,
                    "The host reports no hostname; set one through DHCP/DNS or a requested hostname");
        f.requested_hostname = "worker-7";
        expect_host(&f, VAL_HOSTNAME_VALID, VSTATUS_SUCCESS, "Hostname worker-7 is valid");
        inventory_free(&inv);
}

/* ---- host validations: bound only -------------------------------------- */

Test(host, role_minimums) {
        struct host_facts f = bound_full(&q35, ROLE_MASTER);
        struct run r = run_host(&f);
        expect(r.v, (size_t) r.n, VAL_HAS_CPU_CORES_FOR_ROLE, VSTATUS_SUCCESS, "Sufficient CPU cores: 4, 4 required for master");
        expect(r.v, (size_t) r.n, VAL_HAS_MEMORY_FOR_ROLE, VSTATUS_FAILURE,
               "Insufficient memory: 2 GiB, 16 GiB required for master");
        /* The "always" ones keep the unbound minimum. */
        expect(r.v, (size_t) r.n, VAL_HAS_MIN_CPU_CORES, VSTATUS_SUCCESS, "Sufficient CPU cores: 4, 2 required for any host");

        f = bound_full(&build, ROLE_WORKER);
        r = run_host(&f);
        expect(r.v, (size_t) r.n, VAL_HAS_CPU_CORES_FOR_ROLE, VSTATUS_SUCCESS, "Sufficient CPU cores: 2, 2 required for worker");
        expect(r.v, (size_t) r.n, VAL_HAS_MEMORY_FOR_ROLE, VSTATUS_SUCCESS,
               "Sufficient memory: 24 GiB, 8 GiB required for worker");
        f.role = ROLE_MASTER;
        expect_host(&f, VAL_HAS_CPU_CORES_FOR_ROLE, VSTATUS_FAILURE, "Insufficient CPU cores: 2, 4 required for master");
        f.role = ROLE_AUTO;
        expect_host(&f, VAL_HAS_CPU_CORES_FOR_ROLE, VSTATUS_SUCCESS,
                    "Sufficient CPU cores: 2, 2 required for worker (auto role)");
        f.cluster.single_node = true;
        r = run_host(&f);
        expect(r.v, (size_t) r.n, VAL_HAS_CPU_CORES_FOR_ROLE, VSTATUS_FAILURE,
               "Insufficient CPU cores: 2, 8 required for single-node");
        expect(r.v, (size_t) r.n, VAL_HAS_MEMORY_FOR_ROLE, VSTATUS_SUCCESS,
               "Sufficient memory: 24 GiB, 16 GiB required for single-node");
        expect(r.v, (size_t) r.n, VAL_HAS_MIN_VALID_DISKS, VSTATUS_FAILURE,
               "No eligible disk of at least 93.1 GiB for single-node: vda Disk has mounted filesystems");

        f = bound_full(NULL, ROLE_MASTER);
        expect_host(&f, VAL_HAS_CPU_CORES_FOR_ROLE, VSTATUS_PENDING, "Waiting for the host's hardware inventory");
}

Test(host, hostname_unique) {
        const struct host_peer peers[] = {
                { "b1d5d6a4-1b7e-4a8e-9a55-0f6b9a3b6f01", "worker-1" },
                { "b1d5d6a4-1b7e-4a8e-9a55-0f6b9a3b6f02", "MUSTER-Q35-01" },
                { "b1d5d6a4-1b7e-4a8e-9a55-0f6b9a3b6f03", NULL },
                { "b1d5d6a4-1b7e-4a8e-9a55-0f6b9a3b6f04", "muster-q35-01" },
        };
        struct host_facts f = bound_full(&q35, ROLE_WORKER);
        expect_host(&f, VAL_HOSTNAME_UNIQUE, VSTATUS_SUCCESS, "Hostname muster-q35-01 is unique in the cluster");
        f.cluster.peers = peers;
        f.cluster.n_peers = 2;
        expect_host(&f, VAL_HOSTNAME_UNIQUE, VSTATUS_FAILURE,
                    "Hostname muster-q35-01 is also used by 1 other host of the cluster; set a requested hostname");
        f.cluster.n_peers = 4;
        expect_host(&f, VAL_HOSTNAME_UNIQUE, VSTATUS_FAILURE,
                    "Hostname muster-q35-01 is also used by 2 other hosts of the cluster; set a requested hostname");
        f.requested_hostname = "worker-2";
        expect_host(&f, VAL_HOSTNAME_UNIQUE, VSTATUS_SUCCESS, "Hostname worker-2 is unique in the cluster");
        f.requested_hostname = "worker-1";
        expect_host(&f, VAL_HOSTNAME_UNIQUE, VSTATUS_FAILURE, NULL);

        f = bound_full(NULL, ROLE_WORKER);
        expect_host(&f, VAL_HOSTNAME_UNIQUE, VSTATUS_PENDING, "Waiting for the host's hardware inventory");
        struct inventory inv;
        inventory_init(&inv);
        f = bound_full(&inv, ROLE_WORKER);
        expect_host(&f, VAL_HOSTNAME_UNIQUE, VSTATUS_PENDING, "Waiting for the host to report a hostname");
        inventory_free(&inv);
}

Test(host, belongs_to_machine_cidr) {
        struct host_facts f = bound_full(&q35, ROLE_WORKER);
        struct run r;

        expect_host(&f, VAL_BELONGS_TO_MACHINE_CIDR, VSTATUS_SUCCESS,
                    "Address 192.0.2.10/24 of enp1s0 is in the machine network 192.0.2.0/24");
        f.cluster.machine_network_cidr = "2001:db8:100::/64";
        expect_host(&f, VAL_BELONGS_TO_MACHINE_CIDR, VSTATUS_SUCCESS,
                    "Address 2001:db8:100::10/64 of enp2s0.100 is in the machine network 2001:db8:100::/64");
        f.cluster.machine_network_cidr = "203.0.113.0/25";
        expect_host(&f, VAL_BELONGS_TO_MACHINE_CIDR, VSTATUS_SUCCESS,
                    "Address 203.0.113.10/24 of bond0 is in the machine network 203.0.113.0/25");
        f.cluster.machine_network_cidr = "10.0.0.0/8";
        r = run_host(&f);
        const struct validation_result *v = get(&r, VAL_BELONGS_TO_MACHINE_CIDR);
        cr_assert_eq(v->status, VSTATUS_FAILURE);
        cr_assert(strncmp(v->message, "No address of the host is in the machine network 10.0.0.0/8 (host has 203.0.113.10/24, "
                                      "2001:db8:200::10/64, 192.0.2.10/24", 110) == 0, "%s", v->message);
        f.cluster.machine_network_cidr = "192.0.2.0/33";
        expect_host(&f, VAL_BELONGS_TO_MACHINE_CIDR, VSTATUS_ERROR,
                    "The cluster's machine network CIDR '192.0.2.0/33' is not valid");
        f.cluster.machine_network_cidr = NULL;
        r = run_host(&f);
        expect(r.v, (size_t) r.n, VAL_BELONGS_TO_MACHINE_CIDR, VSTATUS_PENDING, "The cluster's machine network CIDR is not set");
        cr_assert(get(&r, VAL_BELONGS_TO_MACHINE_CIDR)->awaits_user);
        f = bound_full(&build, ROLE_WORKER);
        f.cluster.machine_network_cidr = "198.51.100.0/24";
        expect_host(&f, VAL_BELONGS_TO_MACHINE_CIDR, VSTATUS_FAILURE,
                    "No address of the host is in the machine network 198.51.100.0/24 (host has 192.0.2.2/24, fd00::2/64)");
        f = bound_full(NULL, ROLE_WORKER);
        expect_host(&f, VAL_BELONGS_TO_MACHINE_CIDR, VSTATUS_PENDING, "Waiting for the host's hardware inventory");
}

Test(host, belongs_to_majority_group) {
        const struct host_peer peers[] = {
                { "peer-1", "worker-1" }, { "peer-2", "worker-2" }, { "peer-3", NULL }, { "peer-4", "worker-4" },
        };
        struct peer_connectivity conn[] = {
                { "peer-1", true, 0.4, 0, PEER_MTU_UNKNOWN, 0, 0 }, { "peer-2", false, 0, 100, PEER_MTU_UNKNOWN, 0, 0 },
                { "peer-3", false, 0, 100, PEER_MTU_UNKNOWN, 0, 0 }, { "peer-9", true, 0.3, 0, PEER_MTU_UNKNOWN, 0, 0 },
        };
        struct host_facts f = bound_full(&q35, ROLE_WORKER);

        f.cluster.single_node = true;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_DISABLED, "Not applicable to single-node clusters");
        f.cluster.single_node = false;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_DISABLED, "No other host is bound to the cluster yet");
        f.cluster.peers = peers;
        f.cluster.n_peers = 1;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_PENDING, "Waiting for the connectivity check");
        f.connectivity.present = true;
        f.connectivity.peers = conn;
        f.connectivity.n_peers = N(conn);
        /* Two hosts: the one other host must be reachable. */
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_SUCCESS, "Reaches 1 of 1 other hosts");
        conn[0].reachable = false;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_FAILURE,
                    "Reaches only 0 of 1 other hosts, more than half are needed; cannot reach worker-1");
        conn[0].reachable = true;
        f.cluster.n_peers = 2;
        /* 1 of 2 is not more than half. */
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_FAILURE,
                    "Reaches only 1 of 2 other hosts, more than half are needed; cannot reach worker-2");
        conn[1].reachable = true;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_SUCCESS, "Reaches 2 of 2 other hosts");
        /* peer-4 has no result yet: 2 of 4 reached, the unknown one decides. */
        f.cluster.n_peers = 4;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_PENDING, "Reaches 2 of 4 other hosts; 1 not checked yet");
        conn[1].reachable = false;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_FAILURE,
                    "Reaches only 1 of 4 other hosts, more than half are needed; cannot reach worker-2, peer-3");
        conn[1].reachable = conn[2].reachable = true;
        expect_host(&f, VAL_BELONGS_TO_MAJORITY_GROUP, VSTATUS_SUCCESS, "Reaches 3 of 4 other hosts");
}

Test(host, ntp_synced) {
        struct host_facts f = bound_full(&q35, ROLE_WORKER);
        expect_host(&f, VAL_NTP_SYNCED, VSTATUS_PENDING, "Waiting for the clock check");
        f.ntp.present = true;
        f.ntp.synced = true;
        f.ntp.offset_ms = 12.3;
        expect_host(&f, VAL_NTP_SYNCED, VSTATUS_SUCCESS, "Clock is synchronized (offset 12 ms, at most 500 ms)");
        f.ntp.offset_ms = -800;
        expect_host(&f, VAL_NTP_SYNCED, VSTATUS_FAILURE, "Clock is off by -800 ms, at most 500 ms allowed; check the NTP sources");
        f.ntp.offset_ms = 500;
        expect_host(&f, VAL_NTP_SYNCED, VSTATUS_SUCCESS, NULL);
        /* No source answered: a failure, whatever the coordinator's clock
         * says (that is information only). */
        static const char *const tried[] = { "ntp1.example.test", "192.0.2.123:123" };
        f.ntp.synced = false;
        f.ntp.has_offset = true;
        f.ntp.offset_ms = 100;
        f.ntp.tried = tried;
        f.ntp.n_tried = 2;
        expect_host(&f, VAL_NTP_SYNCED, VSTATUS_FAILURE,
                    "No NTP source reachable (tried: ntp1.example.test, 192.0.2.123:123); for information, the clock "
                    "differs from the coordinator's by 100 ms");
        f.ntp.has_offset = false;
        expect_host(&f, VAL_NTP_SYNCED, VSTATUS_FAILURE,
                    "No NTP source reachable (tried: ntp1.example.test, 192.0.2.123:123)");
        f.ntp.n_tried = 0;
        f.ntp.has_offset = true;
        f.ntp.offset_ms = 0;
        expect_host(&f, VAL_NTP_SYNCED, VSTATUS_FAILURE,
                    "No NTP source reachable (tried: none; set ntp_sources on the infra-env); for information, the "
                    "clock differs from the coordinator's by 0 ms");
}

Test(host, installation_disk_speed) {
        struct host_facts f = bound_full(&q35, ROLE_MASTER);
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_DISABLED,
                    "Measured when the installation starts (the check writes to the disk)");
        f.status = HOST_PREPARING_FOR_INSTALLATION;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_PENDING, "Waiting for the installation disk speed check");
        f.disk_speed.present = true;
        f.disk_speed.failed = true;
        f.disk_speed.disk = "/dev/nvme0n1";
        f.disk_speed.error = "open: Permission denied";
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_ERROR,
                    "The disk speed check on /dev/nvme0n1 failed: open: Permission denied");
        f.disk_speed.failed = false;
        f.disk_speed.fsync_ms = 23.4;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_FAILURE,
                    "Disk /dev/nvme0n1 is too slow: fdatasync p99 23.4 ms, at most 10 ms allowed");
        f.disk_speed.fsync_ms = 2.5;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_SUCCESS,
                    "Disk /dev/nvme0n1 is fast enough: fdatasync p99 2.5 ms, at most 10 ms allowed");
        /* The limit is the config's: exactly at it passes, just over fails. */
        f.disk_speed.fsync_ms = 10.0;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_SUCCESS,
                    "Disk /dev/nvme0n1 is fast enough: fdatasync p99 10.0 ms, at most 10 ms allowed");
        f.disk_speed.fsync_ms = 10.04;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_FAILURE,
                    "Disk /dev/nvme0n1 is too slow: fdatasync p99 10.0 ms, at most 10 ms allowed");
        f.disk_speed.fsync_ms = NAN;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_FAILURE,
                    "Disk /dev/nvme0n1 is too slow: fdatasync p99 nan ms, at most 10 ms allowed");
        /* Kept after the preparation: a host that failed it stays insufficient,
         * one that passed stays known. */
        f.status = HOST_INSUFFICIENT;
        f.disk_speed.fsync_ms = 23.4;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_FAILURE,
                    "Disk /dev/nvme0n1 is too slow: fdatasync p99 23.4 ms, at most 10 ms allowed");
        f.disk_speed.disk = NULL;
        f.disk_speed.fsync_ms = 1;
        expect_host(&f, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_SUCCESS,
                    "Disk the installation disk is fast enough: fdatasync p99 1.0 ms, at most 10 ms allowed");
}

/* The disk speed limit comes from [requirements] install_disk_fsync_ms. */
Test(host, installation_disk_speed_limit_from_config) {
        struct host_facts f = bound_full(&q35, ROLE_MASTER);
        struct muster_config c30 = cfg;
        c30.install_disk_fsync_ms = 30;
        struct validation_result res[VAL_HOST_COUNT];
        f.status = HOST_PREPARING_FOR_INSTALLATION;
        f.disk_speed.present = true;
        f.disk_speed.disk = "/dev/sda";
        f.disk_speed.fsync_ms = 23.4;
        int n = validations_host(&f, &c30, res);
        cr_assert_gt(n, 0);
        expect(res, (size_t) n, VAL_SUFFICIENT_INSTALLATION_DISK_SPEED, VSTATUS_SUCCESS,
               "Disk /dev/sda is fast enough: fdatasync p99 23.4 ms, at most 30 ms allowed");
}

/* One disk for the install step and the disk speed check. */
Test(host, installation_disk_path) {
        const char *p = validations_install_disk_path(&q35, NULL, false, ROLE_MASTER, &cfg);
        int i = validations_install_disk(&q35, NULL, true, false, ROLE_MASTER, &cfg);
        cr_assert_geq(i, 0);
        const struct inv_disk *d = &q35.disks[i];
        cr_assert_not_null(p);
        cr_assert_str_eq(p, d->id && d->id[0] == '/' ? d->id : d->path);
        cr_assert_null(validations_install_disk_path(&q35, "no-such-disk", false, ROLE_MASTER, &cfg));
        cr_assert_null(validations_install_disk_path(NULL, NULL, false, ROLE_MASTER, &cfg));
}

Test(host, api_domain_name_resolved) {
        const char *vip_only[] = { "192.0.2.5" };
        const char *other[] = { "10.0.0.1", "2001:db8::99" };
        const char *own[] = { "junk", "2001:db8::10" };
        struct host_facts f = bound_full(&q35, ROLE_MASTER);
        struct run r;

        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING, "Waiting for the resolution of api.lab.example.com");
        f.dns[DNS_NAME_API].present = true;
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
                    "api.lab.example.com does not resolve; it must point to the API VIP 192.0.2.5");
        f.dns[DNS_NAME_API].addresses = vip_only;
        f.dns[DNS_NAME_API].n_addresses = 1;
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
                    "api.lab.example.com resolves to 192.0.2.5, the API VIP");
        f.dns[DNS_NAME_API].addresses = other;
        f.dns[DNS_NAME_API].n_addresses = 2;
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
                    "api.lab.example.com resolves to 10.0.0.1, 2001:db8::99 instead of the API VIP 192.0.2.5");
        f.cluster.api_vip = "192.0.2";
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_ERROR,
                    "The cluster's API VIP '192.0.2' is not a valid address");
        f.cluster.api_vip = NULL;
        r = run_host(&f);
        expect(r.v, (size_t) r.n, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING, "The cluster's API VIP is not set");
        cr_assert(get(&r, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY)->awaits_user);
        /* A single-node cluster without a VIP serves the API on the host. */
        f.cluster.single_node = true;
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
                    "api.lab.example.com resolves to 10.0.0.1, 2001:db8::99 instead of an address of this host");
        f.dns[DNS_NAME_API].addresses = own;
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
                    "api.lab.example.com resolves to 2001:db8::10, an address of this host");
        f.dns[DNS_NAME_API].n_addresses = 0;
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
                    "api.lab.example.com does not resolve; it must point to an address of this host");
        f.cluster.base_dns_domain = "";
        r = run_host(&f);
        expect(r.v, (size_t) r.n, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING, "The cluster's base DNS domain is not set");
        cr_assert(get(&r, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY)->awaits_user);
        f.cluster.base_dns_domain = "example.com";
        f.cluster.name = NULL;
        expect_host(&f, VAL_API_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING, "The cluster's name is not set");
}

/* api-int.<name>.<domain> to the API VIP and *.apps.<name>.<domain> to the
 * ingress VIP (issue 13, item 9); [dns] makes either optional. */
Test(host, api_int_and_apps_resolved) {
        const char *api_vip[] = { "192.0.2.5" };
        const char *ingress[] = { "198.51.100.7", "192.0.2.6" };
        const char *wrong[] = { "192.0.2.99" };
        const char *own[] = { "2001:db8::10" };
        struct host_facts f = bound_full(&q35, ROLE_MASTER);
        struct muster_config loose = cfg;
        struct validation_result v[VAL_HOST_COUNT];
        int n;

        f.cluster.ingress_vip = "192.0.2.6";
        expect_host(&f, VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING,
                    "Waiting for the resolution of api-int.lab.example.com");
        expect_host(&f, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING,
                    "Waiting for the resolution of *.apps.lab.example.com");
        f.dns[DNS_NAME_API_INT] = (struct dns_fact) { true, NULL, 0, "Name or service not known" };
        f.dns[DNS_NAME_APPS] = (struct dns_fact) { true, NULL, 0, NULL };
        expect_host(&f, VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
                    "api-int.lab.example.com does not resolve; it must point to the API VIP 192.0.2.5 "
                    "(Name or service not known)");
        expect_host(&f, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
                    "*.apps.lab.example.com does not resolve; it must point to the ingress VIP 192.0.2.6");
        /* Optional: not resolving passes... */
        loose.dns_require_api_int = false;
        loose.dns_require_apps = false;
        n = validations_host(&f, &loose, v);
        expect(v, (size_t) n, VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
               "api-int.lab.example.com does not resolve; not required ([dns] require_api_int = false) "
               "(Name or service not known)");
        expect(v, (size_t) n, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
               "*.apps.lab.example.com does not resolve; not required ([dns] require_apps = false)");
        /* ... a wrong answer does not. */
        f.dns[DNS_NAME_API_INT] = (struct dns_fact) { true, wrong, 1, NULL };
        f.dns[DNS_NAME_APPS] = (struct dns_fact) { true, api_vip, 1, NULL };
        n = validations_host(&f, &loose, v);
        expect(v, (size_t) n, VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
               "api-int.lab.example.com resolves to 192.0.2.99 instead of the API VIP 192.0.2.5");
        expect(v, (size_t) n, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
               "*.apps.lab.example.com resolves to 192.0.2.5 instead of the ingress VIP 192.0.2.6");
        /* The right answers: api-int to the API VIP, apps to the ingress VIP. */
        f.dns[DNS_NAME_API_INT] = (struct dns_fact) { true, api_vip, 1, NULL };
        f.dns[DNS_NAME_APPS] = (struct dns_fact) { true, ingress, 2, NULL };
        expect_host(&f, VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
                    "api-int.lab.example.com resolves to 192.0.2.5, the API VIP");
        expect_host(&f, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
                    "*.apps.lab.example.com resolves to 192.0.2.6, the ingress VIP");
        /* The ingress VIP is the user's to give; a bad one is an error. */
        f.cluster.ingress_vip = NULL;
        struct run r = run_host(&f);
        expect(r.v, (size_t) r.n, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING,
               "The cluster's ingress VIP is not set");
        cr_assert(get(&r, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY)->awaits_user);
        f.cluster.ingress_vip = "192.0.2.600";
        expect_host(&f, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_ERROR,
                    "The cluster's ingress VIP '192.0.2.600' is not a valid address");
        /* Single node without VIPs: both must point at the host itself. */
        f.cluster.single_node = true;
        f.cluster.api_vip = f.cluster.ingress_vip = NULL;
        expect_host(&f, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_FAILURE,
                    "*.apps.lab.example.com resolves to 198.51.100.7, 192.0.2.6 instead of an address of this host");
        f.dns[DNS_NAME_APPS] = (struct dns_fact) { true, own, 1, NULL };
        f.dns[DNS_NAME_API_INT] = (struct dns_fact) { true, own, 1, NULL };
        expect_host(&f, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
                    "*.apps.lab.example.com resolves to 2001:db8::10, an address of this host");
        expect_host(&f, VAL_API_INT_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_SUCCESS,
                    "api-int.lab.example.com resolves to 2001:db8::10, an address of this host");
        f.cluster.name = "";
        expect_host(&f, VAL_APPS_DOMAIN_NAME_RESOLVED_CORRECTLY, VSTATUS_PENDING, "The cluster's name is not set");
}

/* mtu-valid (issue 13, item 9): the connectivity check's full-MTU probe to
 * each reached host, and [network] mtu_check and min_mtu. */
Test(host, mtu_valid) {
        const struct host_peer peers[] = { { "peer-1", "worker-1" }, { "peer-2", "worker-2" }, { "peer-3", NULL } };
        struct peer_connectivity conn[] = {
                { "peer-1", true, 0.4, 0, PEER_MTU_PASSED, 1500, 0 },
                { "peer-2", true, 0.5, 0, PEER_MTU_PASSED, 9000, 0 },
                { "peer-3", false, NAN, 100, PEER_MTU_UNKNOWN, 0, 0 },
        };
        struct host_facts f = bound_full(&q35, ROLE_WORKER);
        struct muster_config c2 = cfg;
        struct validation_result v[VAL_HOST_COUNT];
        int n;

        expect_host(&f, VAL_MTU_VALID, VSTATUS_DISABLED, "No other host to measure against");
        f.cluster.peers = peers;
        f.cluster.n_peers = N(peers);
        expect_host(&f, VAL_MTU_VALID, VSTATUS_PENDING, "Waiting for the connectivity check");
        f.connectivity.present = true;
        f.connectivity.peers = conn;
        f.connectivity.n_peers = N(conn);
        expect_host(&f, VAL_MTU_VALID, VSTATUS_SUCCESS, "Full-size packets (MTU 1500) reach 2 other host(s)");
        conn[1].mtu_result = PEER_MTU_FAILED;
        conn[1].path_mtu = 1280;
        expect_host(&f, VAL_MTU_VALID, VSTATUS_FAILURE,
                    "Full-size packets do not reach: worker-2 (MTU 9000 tried, path MTU 1280)");
        conn[0].mtu_result = PEER_MTU_FAILED;
        conn[1].path_mtu = 0;
        expect_host(&f, VAL_MTU_VALID, VSTATUS_FAILURE,
                    "Full-size packets do not reach: worker-1 (MTU 1500 tried, no reply), worker-2 (MTU 9000 tried, no reply)");
        /* min_mtu: jumbo frames demanded, worker-1's interface has 1500. */
        conn[0].mtu_result = conn[1].mtu_result = PEER_MTU_PASSED;
        c2.network_min_mtu = 9000;
        n = validations_host(&f, &c2, v);
        expect(v, (size_t) n, VAL_MTU_VALID, VSTATUS_FAILURE,
               "Full-size packets do not reach: worker-1 (MTU 1500, below [network] min_mtu 9000)");
        c2.network_min_mtu = 1500;
        n = validations_host(&f, &c2, v);
        expect(v, (size_t) n, VAL_MTU_VALID, VSTATUS_SUCCESS,
               "Full-size packets (MTU 1500) reach 2 other host(s); at least 1500 required");
        /* Reached, but only by TCP (no ICMP, no probe). */
        conn[0].mtu_result = conn[1].mtu_result = PEER_MTU_UNKNOWN;
        expect_host(&f, VAL_MTU_VALID, VSTATUS_DISABLED, "Could not be measured: no other host was probed with ICMP echo");
        n = validations_host(&f, &c2, v);
        expect(v, (size_t) n, VAL_MTU_VALID, VSTATUS_FAILURE,
               "The MTU could not be measured to any other host (the probe needs ICMP echo); "
               "[network] min_mtu = 1500 requires it");
        conn[0].reachable = conn[1].reachable = false;
        expect_host(&f, VAL_MTU_VALID, VSTATUS_PENDING, "No other host reached yet");
        c2.network_mtu_check = false;
        n = validations_host(&f, &c2, v);
        expect(v, (size_t) n, VAL_MTU_VALID, VSTATUS_DISABLED, "Not checked: [network] mtu_check = false");
        f.cluster.single_node = true;
        expect_host(&f, VAL_MTU_VALID, VSTATUS_DISABLED, "No other host to measure against");
}

Test(host, json_output) {
        struct host_facts f = unbound(&q35);
        struct run r = run_host(&f);
        json_object *a = validations_to_json(r.v, (size_t) r.n), *o, *v;

        cr_assert_not_null(a);
        cr_assert_eq(json_object_array_length(a), 7);
        o = json_object_array_get_idx(a, 3);
        cr_assert(json_object_object_get_ex(o, "id", &v));
        cr_assert_str_eq(json_object_get_string(v), "has-min-memory");
        cr_assert(json_object_object_get_ex(o, "status", &v));
        cr_assert_str_eq(json_object_get_string(v), "failure");
        cr_assert(json_object_object_get_ex(o, "message", &v));
        cr_assert_str_eq(json_object_get_string(v), "Insufficient memory: 2 GiB, 8 GiB required for any host");
        cr_assert_not(json_object_object_get_ex(o, "awaits_user", NULL));
        json_object_put(a);
        cr_assert_null(validations_find(r.v, (size_t) r.n, VAL_NTP_SYNCED));
}

Test(host, effective_hostname) {
        struct host_facts f = unbound(&q35);
        cr_assert_str_eq(host_facts_hostname(&f), "muster-q35-01");
        f.requested_hostname = "w1";
        cr_assert_str_eq(host_facts_hostname(&f), "w1");
        f = unbound(NULL);
        cr_assert_null(host_facts_hostname(&f));
}

/* ---- cluster validations ----------------------------------------------- */

static struct cluster_facts full_cluster(void) {
        return (struct cluster_facts) {
                .name = "lab",
                .base_dns_domain = "example.com",
                .machine_network_cidr = "192.0.2.0/24",
                .api_vip = "192.0.2.5",
                .ingress_vip = "192.0.2.6",
                .pull_secret = "{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}",
                .release_version = "4.15.0",
                .release_imported = true,
                .n_enabled_capabilities = 3,
                .n_known_capabilities = 7,
        };
}

struct crun {
        struct validation_result v[VAL_CLUSTER_COUNT];
        int n;
};

static void expect_cluster(const struct cluster_facts *f, enum validation_id id, enum validation_status st,
                           const char *msg) {
        struct crun r;
        r.n = validations_cluster(f, &cfg, r.v);
        cr_assert_eq(r.n, (int) VAL_CLUSTER_COUNT);
        expect(r.v, (size_t) r.n, id, st, msg);
}

Test(cluster, all_ten_in_order) {
        struct cluster_facts f = full_cluster();
        struct crun r;
        r.n = validations_cluster(&f, &cfg, r.v);
        cr_assert_eq(r.n, 10);
        for (int i = 0; i < r.n; i++)
                cr_assert_eq(r.v[i].id, (enum validation_id) (_VAL_HOST_MAX + i));
        cr_assert_eq(validations_cluster(NULL, &cfg, r.v), -EINVAL);
}

Test(cluster, machine_cidr_defined) {
        struct cluster_facts f = full_cluster();
        expect_cluster(&f, VAL_MACHINE_CIDR_DEFINED, VSTATUS_SUCCESS, "The machine network CIDR is 192.0.2.0/24");
        f.machine_network_cidr = "2001:db8::/64";
        expect_cluster(&f, VAL_MACHINE_CIDR_DEFINED, VSTATUS_SUCCESS, "The machine network CIDR is 2001:db8::/64");
        f.machine_network_cidr = "192.0.2.5/24";
        expect_cluster(&f, VAL_MACHINE_CIDR_DEFINED, VSTATUS_FAILURE,
                       "The machine network CIDR 192.0.2.5/24 has host bits set; did you mean 192.0.2.0/24?");
        f.machine_network_cidr = "192.0.2.0";
        expect_cluster(&f, VAL_MACHINE_CIDR_DEFINED, VSTATUS_FAILURE,
                       "The machine network CIDR '192.0.2.0' is not valid (expected e.g. 192.0.2.0/24)");
        f.machine_network_cidr = NULL;
        expect_cluster(&f, VAL_MACHINE_CIDR_DEFINED, VSTATUS_FAILURE, "The machine network CIDR is not set");
        f.machine_network_cidr = "";
        expect_cluster(&f, VAL_MACHINE_CIDR_DEFINED, VSTATUS_FAILURE, "The machine network CIDR is not set");
}

Test(cluster, api_vips_defined) {
        struct cluster_facts f = full_cluster();
        expect_cluster(&f, VAL_API_VIPS_DEFINED, VSTATUS_SUCCESS, "The API VIP is 192.0.2.5");
        f.api_vip = NULL;
        expect_cluster(&f, VAL_API_VIPS_DEFINED, VSTATUS_FAILURE, "The API VIP is not set");
        f.single_node = true;
        expect_cluster(&f, VAL_API_VIPS_DEFINED, VSTATUS_DISABLED,
                       "Not needed: a single-node cluster serves its API on the host's address");
}

Test(cluster, vips_valid) {
        const struct cluster_host hosts[] = {
                { "h1", "muster-q35-01", ROLE_MASTER, HOST_KNOWN, &q35 },
                { "h2", NULL, ROLE_MASTER, HOST_KNOWN, NULL },
        };
        struct cluster_facts f = full_cluster();
        struct crun r;

        f.hosts = hosts;
        f.n_hosts = N(hosts);
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_SUCCESS,
                       "The API VIP 192.0.2.5 is in the machine network 192.0.2.0/24 and no host uses it");
        expect_cluster(&f, VAL_INGRESS_VIPS_VALID, VSTATUS_SUCCESS,
                       "The ingress VIP 192.0.2.6 is in the machine network 192.0.2.0/24 and no host uses it");
        f.api_vip = "192.0.2.10";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_FAILURE,
                       "The API VIP 192.0.2.10 is already an address of host muster-q35-01");
        f.api_vip = "192.0.2.0";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_FAILURE, "The API VIP 192.0.2.0 is the network address of 192.0.2.0/24");
        f.api_vip = "192.0.2.255";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_FAILURE, "The API VIP 192.0.2.255 is the broadcast address of 192.0.2.0/24");
        f.api_vip = "192.0.3.5";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_FAILURE, "The API VIP 192.0.3.5 is outside the machine network 192.0.2.0/24");
        f.api_vip = "2001:db8::5";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_FAILURE, "The API VIP 2001:db8::5 is outside the machine network 192.0.2.0/24");
        f.api_vip = "192.0.2.300";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_FAILURE, "The API VIP '192.0.2.300' is not a valid IP address");
        f.api_vip = "192.0.2.6";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_FAILURE, "The API VIP and the ingress VIP must differ, both are 192.0.2.6");
        expect_cluster(&f, VAL_INGRESS_VIPS_VALID, VSTATUS_FAILURE,
                       "The ingress VIP and the API VIP must differ, both are 192.0.2.6");
        f.api_vip = "192.0.2.5";
        f.machine_network_cidr = "2001:db8::/64";
        f.ingress_vip = "2001:db8::10";
        expect_cluster(&f, VAL_INGRESS_VIPS_VALID, VSTATUS_FAILURE,
                       "The ingress VIP 2001:db8::10 is already an address of host muster-q35-01");
        f.ingress_vip = "2001:db8::";
        expect_cluster(&f, VAL_INGRESS_VIPS_VALID, VSTATUS_FAILURE,
                       "The ingress VIP 2001:db8:: is the network address of 2001:db8::/64");
        f.ingress_vip = "2001:db8::ffff:ffff:ffff:ffff";
        expect_cluster(&f, VAL_INGRESS_VIPS_VALID, VSTATUS_SUCCESS, NULL);
        f.machine_network_cidr = "192.0.2.4/30";
        f.api_vip = "192.0.2.5";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_SUCCESS, NULL);
        f.machine_network_cidr = "192.0.2.5/32";
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_SUCCESS, "The API VIP 192.0.2.5 is in the machine network 192.0.2.5/32 and no host uses it");

        f.machine_network_cidr = NULL;
        r.n = validations_cluster(&f, &cfg, r.v);
        expect(r.v, (size_t) r.n, VAL_API_VIPS_VALID, VSTATUS_PENDING,
               "A valid machine network CIDR is needed to check the API VIP");
        cr_assert(r.v[VAL_API_VIPS_VALID - _VAL_HOST_MAX].awaits_user);
        f = full_cluster();
        f.api_vip = "";
        f.ingress_vip = NULL;
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_PENDING, "The API VIP is not set");
        expect_cluster(&f, VAL_INGRESS_VIPS_VALID, VSTATUS_PENDING, "The ingress VIP is not set");
        f.single_node = true;
        expect_cluster(&f, VAL_API_VIPS_VALID, VSTATUS_DISABLED, "Not needed: a single-node cluster uses the host's address");
        expect_cluster(&f, VAL_INGRESS_VIPS_VALID, VSTATUS_DISABLED, "Not needed: a single-node cluster uses the host's address");
}

Test(cluster, dns_domain_defined) {
        struct cluster_facts f = full_cluster();
        char longdomain[260];

        expect_cluster(&f, VAL_DNS_DOMAIN_DEFINED, VSTATUS_SUCCESS, "The base DNS domain is example.com");
        f.base_dns_domain = NULL;
        expect_cluster(&f, VAL_DNS_DOMAIN_DEFINED, VSTATUS_FAILURE, "The base DNS domain is not set");
        f.base_dns_domain = "Example.com";
        expect_cluster(&f, VAL_DNS_DOMAIN_DEFINED, VSTATUS_FAILURE,
                       "The base DNS domain 'Example.com' is not valid: base DNS domain contains upper-case letters; node names must be lower case");
        f.base_dns_domain = "example..com";
        expect_cluster(&f, VAL_DNS_DOMAIN_DEFINED, VSTATUS_FAILURE,
                       "The base DNS domain 'example..com' is not valid: base DNS domain has an empty label (leading, trailing or double dot)");
        for (size_t i = 0; i < 249; i++)
                longdomain[i] = i % 50 == 49 ? '.' : 'a';
        longdomain[249] = '\0';
        f.base_dns_domain = longdomain;
        struct crun r;
        r.n = validations_cluster(&f, &cfg, r.v);
        cr_assert_eq(r.n, (int) VAL_CLUSTER_COUNT);
        const struct validation_result *v = validations_find(r.v, (size_t) r.n, VAL_DNS_DOMAIN_DEFINED);
        cr_assert_not_null(v);
        cr_assert_eq(v->status, VSTATUS_FAILURE);
        cr_assert(strstr(v->message, "would be 260 characters, at most 253 are allowed"), "%s", v->message);
}

Test(cluster, pull_secret_set) {
        static const struct { const char *ps; enum validation_status st; } cases[] = {
                { "{\"auths\":{}}", VSTATUS_SUCCESS },
                { "{\"auths\":{\"quay.io\":{\"auth\":\"eA==\"}}, \"x\": 1}", VSTATUS_SUCCESS },
                { NULL, VSTATUS_FAILURE },
                { "", VSTATUS_FAILURE },
                { "x", VSTATUS_FAILURE },
                { "{\"auths\":[]}", VSTATUS_FAILURE },
                { "{\"auth\":{}}", VSTATUS_FAILURE },
                { "[{\"auths\":{}}]", VSTATUS_FAILURE },
                { "{\"auths\":{}} trailing", VSTATUS_FAILURE },
                { "{\"auths\":{}", VSTATUS_FAILURE },
        };
        for (size_t i = 0; i < N(cases); i++) {
                struct cluster_facts f = full_cluster();
                f.pull_secret = cases[i].ps;
                expect_cluster(&f, VAL_PULL_SECRET_SET, cases[i].st,
                               cases[i].st == VSTATUS_SUCCESS ? "The pull secret is set"
                               : cases[i].ps && *cases[i].ps
                                       ? "The pull secret is not valid: expected a JSON object with an \"auths\" object"
                                       : "The pull secret is not set");
        }
}

Test(cluster, sufficient_masters_count) {
        struct cluster_host hosts[] = {
                { "h1", "m1", ROLE_MASTER, HOST_KNOWN, &build },
                { "h2", "m2", ROLE_MASTER, HOST_KNOWN, &build },
                { "h3", "a1", ROLE_AUTO, HOST_KNOWN, &q35 },
                { "h4", "a2", ROLE_AUTO, HOST_KNOWN, &build },
                { "h5", "w1", ROLE_WORKER, HOST_KNOWN, &q35 },
        };
        struct cluster_facts f = full_cluster();

        f.hosts = hosts;
        f.n_hosts = 2;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_FAILURE,
                       "3 masters are needed: 2 hosts have role master and 0 of 0 auto-role hosts meet master requirements");
        f.n_hosts = N(hosts);
        /* Neither auto host meets 4 cores + 16 GiB. */
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_FAILURE,
                       "3 masters are needed: 2 hosts have role master and 0 of 2 auto-role hosts meet master requirements");
        cfg.req[REQ_MASTER].memory_bytes = 2 * GIB;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_SUCCESS,
                       "3 masters: 2 with role master, 1 from auto-role hosts that meet master requirements");
        hosts[2].role = hosts[3].role = hosts[4].role = ROLE_MASTER;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_FAILURE,
                       "Exactly 3 masters are needed, 5 hosts have role master");
        f.n_hosts = 3;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_SUCCESS,
                       "3 masters: 3 with role master, 0 from auto-role hosts that meet master requirements");
        hosts[0].role = ROLE_WORKER;
        hosts[1].role = ROLE_AUTO;
        hosts[1].inventory = NULL;
        f.n_hosts = 2;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_FAILURE,
                       "3 masters are needed: 0 hosts have role master and 0 of 1 auto-role hosts meet master requirements");

        f.single_node = true;
        f.n_hosts = 0;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_FAILURE, "A single-node cluster needs exactly 1 host, 0 are bound");
        f.n_hosts = 2;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_FAILURE, "A single-node cluster needs exactly 1 host, 2 are bound");
        f.n_hosts = 1;
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_FAILURE,
                       "The host of a single-node cluster must have role master or auto, not worker");
        f.hosts = &hosts[1];
        expect_cluster(&f, VAL_SUFFICIENT_MASTERS_COUNT, VSTATUS_SUCCESS, "The single-node cluster has its 1 host");
}

Test(cluster, all_hosts_ready) {
        const struct cluster_host hosts[] = {
                { "h1", "m1", ROLE_MASTER, HOST_KNOWN, NULL },
                { "h2", NULL, ROLE_MASTER, HOST_INSUFFICIENT, NULL },
                { "h3", "m3", ROLE_MASTER, HOST_PENDING_FOR_INPUT, NULL },
                { "h4", "w1", ROLE_WORKER, HOST_INSTALLED, NULL },
        };
        struct cluster_facts f = full_cluster();

        expect_cluster(&f, VAL_ALL_HOSTS_ARE_READY_TO_INSTALL, VSTATUS_FAILURE, "No host is bound to the cluster");
        f.hosts = hosts;
        f.n_hosts = 1;
        expect_cluster(&f, VAL_ALL_HOSTS_ARE_READY_TO_INSTALL, VSTATUS_SUCCESS, "All 1 hosts are ready to install");
        f.n_hosts = 2;
        expect_cluster(&f, VAL_ALL_HOSTS_ARE_READY_TO_INSTALL, VSTATUS_FAILURE, "1 of 2 hosts is not ready: h2 (insufficient)");
        f.n_hosts = 4;
        expect_cluster(&f, VAL_ALL_HOSTS_ARE_READY_TO_INSTALL, VSTATUS_FAILURE,
                       "2 of 4 hosts are not ready: h2 (insufficient), m3 (pending-for-input)");
}

Test(cluster, capabilities_valid) {
        struct cluster_facts f = full_cluster();
        expect_cluster(&f, VAL_CAPABILITIES_VALID, VSTATUS_SUCCESS, "The capabilities fit release 4.15.0: 3 of 7 enabled");
        f.capabilities_error = "unknown capability \"Foo\"; known: Console, Insights";
        expect_cluster(&f, VAL_CAPABILITIES_VALID, VSTATUS_FAILURE,
                       "The capabilities do not fit release 4.15.0: unknown capability \"Foo\"; known: Console, Insights");
        f.release_imported = false;
        expect_cluster(&f, VAL_CAPABILITIES_VALID, VSTATUS_FAILURE, "The release 4.15.0 is not imported");
        f.release_version = NULL;
        expect_cluster(&f, VAL_CAPABILITIES_VALID, VSTATUS_FAILURE,
                       "No release is chosen: Set release_version to an imported release");
        f.release_version = "";
        expect_cluster(&f, VAL_CAPABILITIES_VALID, VSTATUS_FAILURE,
                       "No release is chosen: Set release_version to an imported release");
}

Test(cluster, operators_resolvable) {
        struct cluster_facts f = full_cluster();
        expect_cluster(&f, VAL_OPERATORS_RESOLVABLE, VSTATUS_SUCCESS, "No operators are subscribed to");
        f.operators_subscribed = true;
        f.n_operator_bundles = 4;
        expect_cluster(&f, VAL_OPERATORS_RESOLVABLE, VSTATUS_SUCCESS, "The operator subscriptions resolve: 4 bundles");
        f.operators_error = "only one bundle of package etcd can be installed";
        expect_cluster(&f, VAL_OPERATORS_RESOLVABLE, VSTATUS_FAILURE,
                       "The operators do not resolve (operator list shows it all): only one bundle of package etcd "
                       "can be installed");
        char info[1024];
        struct validation_result res[VAL_CLUSTER_COUNT];
        int n = validations_cluster(&f, &cfg, res);
        cr_assert_gt(n, 0);
        cr_expect_neq(validations_cluster_status(res, (size_t) n, info, sizeof info), CLUSTER_READY,
                      "a cluster whose operators do not resolve is not ready");
}

Test(cluster, ready_cluster_passes) {
        const struct cluster_host hosts[] = {
                { "h1", "m1", ROLE_MASTER, HOST_KNOWN, NULL },
                { "h2", "m2", ROLE_MASTER, HOST_KNOWN, NULL },
                { "h3", "m3", ROLE_MASTER, HOST_KNOWN, NULL },
        };
        struct cluster_facts f = full_cluster();
        struct crun r;

        f.hosts = hosts;
        f.n_hosts = N(hosts);
        r.n = validations_cluster(&f, &cfg, r.v);
        cr_assert_eq(r.n, (int) VAL_CLUSTER_COUNT, "every cluster validation ran: %d", r.n);
        for (int i = 0; i < r.n; i++)
                cr_assert(r.v[i].status == VSTATUS_SUCCESS || r.v[i].status == VSTATUS_DISABLED, "%s: %s",
                          validation_id_to_string(r.v[i].id), r.v[i].message);
}

/* cpu-architecture-matches: the host's architecture against its infra-env's
 * and, bound, its cluster's (issue 13, item 10). */
Test(host, cpu_architecture_matches) {
        struct host_facts f = unbound(&q35);
        f.infra_env_name = "rack-7";
        f.infra_env_cpu_architecture = "x86_64";
        expect_host(&f, VAL_CPU_ARCHITECTURE_MATCHES, VSTATUS_SUCCESS, "CPU architecture x86_64, as the infra-env's");
        f.infra_env_cpu_architecture = "aarch64";
        expect_host(&f, VAL_CPU_ARCHITECTURE_MATCHES, VSTATUS_FAILURE,
                    "The host is x86_64; infra-env rack-7 is for aarch64 hosts");
        f = bound_full(&q35, ROLE_WORKER);
        f.infra_env_name = "rack-7";
        f.infra_env_cpu_architecture = "amd64";
        expect_host(&f, VAL_CPU_ARCHITECTURE_MATCHES, VSTATUS_SUCCESS,
                    "CPU architecture x86_64, as the infra-env's and the cluster's");
        f.cluster.cpu_architecture = "aarch64";
        expect_host(&f, VAL_CPU_ARCHITECTURE_MATCHES, VSTATUS_FAILURE, "The host is x86_64; cluster lab is aarch64");
        /* An inventory without an architecture, or with one we do not know. */
        struct inventory odd = q35;
        odd.cpu.architecture = NULL;
        f = unbound(&odd);
        expect_host(&f, VAL_CPU_ARCHITECTURE_MATCHES, VSTATUS_FAILURE, "The host reports no CPU architecture");
        odd.cpu.architecture = (char *) "mips";
        expect_host(&f, VAL_CPU_ARCHITECTURE_MATCHES, VSTATUS_FAILURE, "The host reports an unknown CPU architecture (mips)");
        f = unbound(NULL);
        expect_host(&f, VAL_CPU_ARCHITECTURE_MATCHES, VSTATUS_PENDING, NULL);
}

/* sufficient-network-latency and sufficient-packet-loss (issue 13, item 9):
 * the connectivity check's numbers to each reached host against [network]. */
Test(host, network_latency_and_packet_loss) {
        const struct host_peer peers[] = { { "peer-1", "worker-1" }, { "peer-2", "worker-2" }, { "peer-3", NULL } };
        struct peer_connectivity conn[] = {
                { "peer-1", true, 0.4, 0, PEER_MTU_UNKNOWN, 0, 0 }, { "peer-2", true, 2.5, 0, PEER_MTU_UNKNOWN, 0, 0 },
                { "peer-3", false, NAN, 100, PEER_MTU_UNKNOWN, 0, 0 },
        };
        struct host_facts f = bound_full(&q35, ROLE_WORKER);
        expect_host(&f, VAL_SUFFICIENT_NETWORK_LATENCY, VSTATUS_DISABLED, "No other host to measure against");
        f.cluster.peers = peers;
        f.cluster.n_peers = N(peers);
        expect_host(&f, VAL_SUFFICIENT_PACKET_LOSS, VSTATUS_PENDING, "Waiting for the connectivity check");
        f.connectivity.present = true;
        f.connectivity.peers = conn;
        f.connectivity.n_peers = N(conn);
        expect_host(&f, VAL_SUFFICIENT_NETWORK_LATENCY, VSTATUS_SUCCESS,
                    "Round trip to 2 other host(s) at most 2.5 ms (limit 100 ms)");
        expect_host(&f, VAL_SUFFICIENT_PACKET_LOSS, VSTATUS_SUCCESS,
                    "Packet loss to 2 other host(s) at most 0.0% (limit 0%)");
        conn[1].latency_ms = 140;
        conn[0].loss_pct = 20;
        expect_host(&f, VAL_SUFFICIENT_NETWORK_LATENCY, VSTATUS_FAILURE, "Round trip over 100 ms to: worker-2 (140.0 ms)");
        expect_host(&f, VAL_SUFFICIENT_PACKET_LOSS, VSTATUS_FAILURE, "Packet loss over 0% to: worker-1 (20.0%)");
        /* The limits are the config's. */
        struct muster_config loose = cfg;
        loose.network_max_latency_ms = 200;
        loose.network_max_packet_loss_pct = 25;
        struct validation_result v[VAL_HOST_COUNT];
        int n = validations_host(&f, &loose, v);
        cr_assert_eq(validations_find(v, (size_t) n, VAL_SUFFICIENT_NETWORK_LATENCY)->status, VSTATUS_SUCCESS);
        cr_assert_eq(validations_find(v, (size_t) n, VAL_SUFFICIENT_PACKET_LOSS)->status, VSTATUS_SUCCESS);
        /* Only unreachable hosts: nothing measured; majority judges them. */
        conn[0].reachable = conn[1].reachable = false;
        expect_host(&f, VAL_SUFFICIENT_NETWORK_LATENCY, VSTATUS_PENDING, "No other host measured yet");
        f.cluster.single_node = true;
        expect_host(&f, VAL_SUFFICIENT_PACKET_LOSS, VSTATUS_DISABLED, "No other host to measure against");
}

/* The status a cluster's results give it before installation (moved from
 * the refresh service into the domain, issue 14): a missing setting wins
 * over a failing host rule, each message is said once, all passing (or
 * disabled) is ready. */
Test(cluster, status_from_results) {
        char info[1024];
        struct validation_result pass[] = {
                { .id = VAL_MACHINE_CIDR_DEFINED, .status = VSTATUS_SUCCESS, .message = "ok" },
                { .id = VAL_SUFFICIENT_MASTERS_COUNT, .status = VSTATUS_DISABLED, .message = "off" },
        };
        cr_assert_eq(validations_cluster_status(pass, 2, info, sizeof info), CLUSTER_READY);
        cr_assert_str_eq(info, "Cluster is ready to install");

        struct validation_result mixed[] = {
                { .id = VAL_SUFFICIENT_MASTERS_COUNT, .status = VSTATUS_FAILURE, .message = "need 3 masters" },
                { .id = VAL_API_VIPS_DEFINED, .status = VSTATUS_PENDING, .message = "API VIP missing" },
                { .id = VAL_API_VIPS_VALID, .status = VSTATUS_PENDING, .message = "API VIP missing" },
                { .id = VAL_DNS_DOMAIN_DEFINED, .status = VSTATUS_SUCCESS, .message = "ok" },
        };
        cr_assert_eq(validations_cluster_status(mixed, 4, info, sizeof info), CLUSTER_PENDING_FOR_INPUT,
                     "a missing setting: pending for input");
        cr_assert_str_eq(info, "need 3 masters; API VIP missing", "each message once");

        cr_assert_eq(validations_cluster_status(mixed, 1, info, sizeof info), CLUSTER_INSUFFICIENT);
        cr_assert_str_eq(info, "need 3 masters");

        char small[8];
        cr_assert_eq(validations_cluster_status(mixed, 4, small, sizeof small), CLUSTER_PENDING_FOR_INPUT);
        cr_assert_str_eq(small, "need 3 ", "cut to the buffer, NUL-terminated");
}
