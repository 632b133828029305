/* musterd's configuration file: defaults, every key, value syntax, and the
 * errors (with file:line) a strict parser owes its admin. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/config.h"
#include "testutil.h"

#define KIB (INT64_C(1) << 10)
#define MIB (INT64_C(1) << 20)
#define GIB (INT64_C(1) << 30)
#define GB INT64_C(1000000000)

static int parse(const char *text, struct muster_config *cfg, char *err, size_t errlen) {
        config_defaults(cfg);
        return config_parse(text, "test.conf", cfg, err, errlen);
}

Test(config, defaults) {
        struct muster_config c;

        config_defaults(&c);
        cr_assert_str_eq(c.listen, "0.0.0.0:8090");
        cr_assert_str_eq(c.state_dir, "/var/lib/muster");
        cr_assert_str_eq(c.store, "");
        cr_assert_eq(c.max_body_bytes, 4 * MIB);
        cr_assert_eq(c.max_inventory_bytes, 2 * MIB);
        cr_assert_eq(c.max_page_size, 1000);
        cr_assert_eq(c.max_release_bytes, 64 * MIB);
        cr_assert_eq(c.max_body_memory, 192 * MIB);
        cr_assert_eq(c.host_disconnect_timeout_s, 180);
        cr_assert_eq(c.first_boot_timeout_s, 3600);
        cr_assert_eq(c.monitor_interval_s, 10);
        cr_assert_eq(c.instruction_interval_s, 60);
        cr_assert_eq(c.inventory_every, 10);
        cr_assert_eq(c.network_max_latency_ms, 100);
        cr_assert_eq(c.network_max_packet_loss_pct, 0);
        cr_assert(c.network_mtu_check, "full-size packets are checked by default");
        cr_assert_eq(c.network_min_mtu, 0, "no MTU is demanded by default");
        cr_assert(c.dns_require_api_int);
        cr_assert(c.dns_require_apps);
        cr_assert_eq(c.req[REQ_MASTER].cpu_cores, 4);
        cr_assert_eq(c.req[REQ_MASTER].memory_bytes, 16 * GIB);
        cr_assert_eq(c.req[REQ_MASTER].disk_bytes, 100 * GB);
        cr_assert_eq(c.req[REQ_WORKER].cpu_cores, 2);
        cr_assert_eq(c.req[REQ_WORKER].memory_bytes, 8 * GIB);
        cr_assert_eq(c.req[REQ_WORKER].disk_bytes, 100 * GB);
        cr_assert_eq(c.req[REQ_SNO].cpu_cores, 8);
        cr_assert_eq(c.req[REQ_SNO].memory_bytes, 16 * GIB);
        cr_assert_eq(c.req[REQ_SNO].disk_bytes, 100 * GB);
        cr_assert_eq(c.req[REQ_ANY].cpu_cores, 2);
        cr_assert_eq(c.req[REQ_ANY].memory_bytes, 8 * GIB);
        cr_assert_eq(c.req[REQ_ANY].disk_bytes, 100 * GB);
        cr_assert_eq(c.install_disk_fsync_ms, 10);
        cr_assert_eq(c.ntp_max_offset_ms, 500);
}

Test(config, empty_text_and_comments_keep_defaults) {
        struct muster_config c, d;
        char err[256];

        config_defaults(&d);
        cr_assert_eq(parse("", &c, err, sizeof err), 0);
        cr_assert_eq(memcmp(&c, &d, sizeof c), 0);
        cr_assert_eq(parse("# only a comment\n\n   \t\n# another\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(memcmp(&c, &d, sizeof c), 0);
}

Test(config, every_key) {
        static const char text[] =
                "# musterd test configuration\n"
                "[server]\n"
                "listen = [::1]:9443\n"
                "state_dir = /srv/muster\n"
                "store = postgres://muster@db.example.com/muster\n"
                "max_body_bytes = 8MiB\n"
                "max_inventory_bytes = 3 MiB   # inline comment\n"
                "max_page_size = 250\n"
                "max_release_bytes = 256MiB\n"
                "max_body_memory = 1GiB\n"
                "\n"
                "[monitor]\n"
                "host_disconnect_timeout = 5m\n"
                "first_boot_timeout = 20m\n"
                "monitor_interval = 15s\n"
                "[agent]\n"
                "instruction_interval = 30\n"
                "inventory_every = 20\n"
                "[requirements.master]\n"
                "cpu_cores = 6\n"
                "memory = 24GiB\n"
                "disk = 120GB\n"
                "[requirements.worker]\n"
                "cpu_cores = 3\n"
                "memory = 12GiB\n"
                "disk = 110GB\n"
                "[requirements.sno]\n"
                "cpu_cores = 12\n"
                "memory = 32GiB\n"
                "disk = 200GB\n"
                "[ requirements.any ]\n"
                "cpu_cores = 1\n"
                "memory = 4GiB\n"
                "disk = 50000MB\n"
                "[requirements]\n"
                "install_disk_fsync_ms = 20\n"
                "[ntp]\n"
                "max_offset_ms = 2s\n"
                "[network]\n"
                "max_latency_ms = 1s\n"
                "max_packet_loss_pct = 10\n"
                "min_mtu = 9000\n"
                "[dns]\n"
                "require_api_int = no\n"
                "require_apps = false\n";
        struct muster_config c;
        char err[256];

        cr_assert_eq(parse(text, &c, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.listen, "[::1]:9443");
        cr_assert_str_eq(c.state_dir, "/srv/muster");
        cr_assert_str_eq(c.store, "postgres://muster@db.example.com/muster");
        cr_assert_eq(c.max_body_bytes, 8 * MIB);
        cr_assert_eq(c.max_inventory_bytes, 3 * MIB);
        cr_assert_eq(c.max_page_size, 250);
        cr_assert_eq(c.max_release_bytes, 256 * MIB);
        cr_assert_eq(c.max_body_memory, GIB);
        cr_assert_eq(c.host_disconnect_timeout_s, 300);
        cr_assert_eq(c.first_boot_timeout_s, 1200);
        cr_assert_eq(c.monitor_interval_s, 15);
        cr_assert_eq(c.instruction_interval_s, 30);
        cr_assert_eq(c.inventory_every, 20);
        cr_assert_eq(c.network_max_latency_ms, 1000);
        cr_assert_eq(c.network_max_packet_loss_pct, 10);
        cr_assert(c.network_mtu_check);
        cr_assert_eq(c.network_min_mtu, 9000);
        cr_assert_not(c.dns_require_api_int);
        cr_assert_not(c.dns_require_apps);
        cr_assert_eq(c.req[REQ_MASTER].cpu_cores, 6);
        cr_assert_eq(c.req[REQ_MASTER].memory_bytes, 24 * GIB);
        cr_assert_eq(c.req[REQ_MASTER].disk_bytes, 120 * GB);
        cr_assert_eq(c.req[REQ_WORKER].cpu_cores, 3);
        cr_assert_eq(c.req[REQ_WORKER].memory_bytes, 12 * GIB);
        cr_assert_eq(c.req[REQ_WORKER].disk_bytes, 110 * GB);
        cr_assert_eq(c.req[REQ_SNO].cpu_cores, 12);
        cr_assert_eq(c.req[REQ_SNO].memory_bytes, 32 * GIB);
        cr_assert_eq(c.req[REQ_SNO].disk_bytes, 200 * GB);
        cr_assert_eq(c.req[REQ_ANY].cpu_cores, 1);
        cr_assert_eq(c.req[REQ_ANY].memory_bytes, 4 * GIB);
        cr_assert_eq(c.req[REQ_ANY].disk_bytes, 50 * GB);
        cr_assert_eq(c.install_disk_fsync_ms, 20);
        cr_assert_eq(c.ntp_max_offset_ms, 2000);
}

Test(config, any_follows_worker_unless_set) {
        struct muster_config c;
        char err[256];

        cr_assert_eq(parse("[requirements.worker]\ncpu_cores = 3\nmemory = 12GiB\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.req[REQ_ANY].cpu_cores, 3);
        cr_assert_eq(c.req[REQ_ANY].memory_bytes, 12 * GIB);
        cr_assert_eq(c.req[REQ_ANY].disk_bytes, 100 * GB);

        cr_assert_eq(parse("[requirements.any]\nmemory = 2GiB\n[requirements.worker]\nmemory = 12GiB\n", &c, err,
                           sizeof err), 0, "%s", err);
        cr_assert_eq(c.req[REQ_ANY].memory_bytes, 2 * GIB, "explicit value kept");
        cr_assert_eq(c.req[REQ_ANY].cpu_cores, 2, "unset key follows worker");
}

Test(config, quoting_comments_and_crlf) {
        struct muster_config c;
        char err[256];

        cr_assert_eq(parse("[server]\r\nstate_dir = \"/srv/muster #1\"  # a comment\r\nstore = \"\"\r\n", &c, err,
                           sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.state_dir, "/srv/muster #1");
        cr_assert_str_eq(c.store, "");
        cr_assert_eq(parse("[server]\nstore = sqlite:/var/lib/muster/a#b.db\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.store, "sqlite:/var/lib/muster/a#b.db", "'#' inside a word is not a comment");
        cr_assert_eq(parse("[server]\nstore = /var/lib/muster/x.db\nlisten=localhost:80\n", &c, err, sizeof err), 0,
                     "%s", err);
        cr_assert_str_eq(c.listen, "localhost:80");
        cr_assert_eq(parse("  [server]  \n\tmax_page_size\t=\t7\t\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.max_page_size, 7);
}

Test(config, sizes) {
        static const struct { const char *in; int r; int64_t want; } cases[] = {
                { "0", 0, 0 },
                { "123", 0, 123 },
                { "512B", 0, 512 },
                { "1KB", 0, 1000 },
                { "1kb", 0, 1000 },
                { "1KiB", 0, 1024 },
                { "100MB", 0, 100000000 },
                { "512MiB", 0, 512 * MIB },
                { "100GB", 0, 100 * GB },
                { "16GiB", 0, 16 * GIB },
                { "8 GiB", 0, 8 * GIB },
                { "2TB", 0, 2000 * GB },
                { "1TiB", 0, 1024 * GIB },
                { "", -EINVAL, 0 },
                { "GiB", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },
                { "+1", -EINVAL, 0 },
                { "1.5GiB", -EINVAL, 0 },
                { "12XB", -EINVAL, 0 },
                { "8  GiB", -EINVAL, 0 },
                { "8GiBs", -EINVAL, 0 },
                { "99999999999999999999", -ERANGE, 0 },
                { "9223372036854775807GiB", -ERANGE, 0 },
                { "9223372036854775807", 0, INT64_MAX },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                int64_t v = -42;
                int r = config_parse_size(cases[i].in, &v);
                cr_assert_eq(r, cases[i].r, "'%s': %d", cases[i].in, r);
                if (r == 0)
                        cr_assert_eq(v, cases[i].want, "'%s': %lld", cases[i].in, (long long) v);
        }
}

Test(config, durations) {
        static const struct { const char *in; int64_t unit; int r; int64_t want; } cases[] = {
                { "180", 1000, 0, 180000 },
                { "3m", 1000, 0, 180000 },
                { "2s", 1000, 0, 2000 },
                { "1h", 1000, 0, 3600000 },
                { "500ms", 1000, 0, 500 },
                { "500", 1, 0, 500 },
                { "10 ms", 1, 0, 10 },
                { "0s", 1, 0, 0 },
                { "", 1000, -EINVAL, 0 },
                { "s", 1000, -EINVAL, 0 },
                { "-1s", 1000, -EINVAL, 0 },
                { "3 minutes", 1000, -EINVAL, 0 },
                { "3M", 1000, -EINVAL, 0 },
                { "1.5s", 1000, -EINVAL, 0 },
                { "99999999999999999h", 1000, -ERANGE, 0 },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                int64_t v = -42;
                int r = config_parse_duration_ms(cases[i].in, cases[i].unit, &v);
                cr_assert_eq(r, cases[i].r, "'%s': %d", cases[i].in, r);
                if (r == 0)
                        cr_assert_eq(v, cases[i].want, "'%s': %lld", cases[i].in, (long long) v);
        }
}

Test(config, bad_lines_name_file_and_line) {
        static const struct { const char *text; const char *err; } cases[] = {
                { "[nope]\n", "test.conf:1: unknown section [nope]" },
                { "[server\n", "test.conf:1: section header lacks a closing ']'" },
                { "# c\nlisten = :80\n", "test.conf:2: key 'listen' outside of a [section]" },
                { "[server]\nfoo = 1\n", "test.conf:2: unknown key 'foo' in [server]" },
                { "[monitor]\nmax_page_size = 1\n", "test.conf:2: unknown key 'max_page_size' in [monitor]" },
                { "[requirements]\ncpu_cores = 4\n", "test.conf:2: unknown key 'cpu_cores' in [requirements]" },
                { "[server]\n\njust words\n", "test.conf:3: expected 'key = value' or '[section]'" },
                { "[server]\n= 5\n", "test.conf:2: missing key before '='" },
                { "[server]\nmax_page_size =\n", "test.conf:2: missing value for 'max_page_size'" },
                { "[server]\nmax_page_size = # nothing\n", "test.conf:2: missing value for 'max_page_size'" },
                { "[server]\nmax_page_size = 5\n[ntp]\n[server]\nmax_page_size = 6\n",
                  "test.conf:5: duplicate key 'max_page_size' in [server]" },
                { "[server]\n\n\nmax_page_size = 12x\n",
                  "test.conf:4: invalid max_page_size '12x': expected a whole number" },
                { "[server]\nmax_page_size = 0\n", "test.conf:2: max_page_size '0' is out of range (1 to 100000)" },
                { "[server]\nmax_page_size = 100001\n",
                  "test.conf:2: max_page_size '100001' is out of range (1 to 100000)" },
                { "[server]\nmax_page_size = 99999999999999999999\n",
                  "test.conf:2: max_page_size '99999999999999999999' is out of range (1 to 100000)" },
                { "[server]\nmax_body_bytes = 2GiB\n",
                  "test.conf:2: max_body_bytes '2GiB' is out of range (1KiB to 1GiB)" },
                { "[server]\nmax_release_bytes = 2GiB\n",
                  "test.conf:2: max_release_bytes '2GiB' is out of range (1KiB to 1GiB)" },
                { "[requirements.master]\nmemory = 16 gigs\n",
                  "test.conf:2: invalid memory '16 gigs': expected a size such as 512MiB, 16GiB or 100GB" },
                { "[requirements.sno]\ncpu_cores = -4\n", "test.conf:2: invalid cpu_cores '-4': expected a whole number" },
                { "[requirements.worker]\ndisk = 0\n", "test.conf:2: disk '0' is out of range (1MiB to 32768TiB)" },
                { "[monitor]\nhost_disconnect_timeout = 3 minutes\n",
                  "test.conf:2: invalid host_disconnect_timeout '3 minutes': expected a duration in whole seconds" },
                { "[monitor]\nhost_disconnect_timeout = 1500ms\n",
                  "test.conf:2: host_disconnect_timeout '1500ms' is not a whole number of seconds" },
                { "[monitor]\nmonitor_interval = 0s\n", "test.conf:2: monitor_interval '0s' is out of range (1s to 3600s)" },
                { "[ntp]\nmax_offset_ms = fast\n", "test.conf:2: invalid max_offset_ms 'fast': expected a duration such as 10" },
                { "[requirements]\ninstall_disk_fsync_ms = 2m\n",
                  "test.conf:2: install_disk_fsync_ms '2m' is out of range (1ms to 60000ms)" },
                { "[server]\nlisten = 8090\n", "test.conf:2: invalid listen '8090': expected HOST:PORT" },
                { "[server]\nlisten = ::1:8090\n", "test.conf:2: invalid listen '::1:8090'" },
                { "[server]\nlisten = [::1:8090\n", "test.conf:2: invalid listen '[::1:8090'" },
                { "[server]\nlisten = host:0\n", "test.conf:2: invalid listen 'host:0'" },
                { "[server]\nlisten = host:65536\n", "test.conf:2: invalid listen 'host:65536'" },
                { "[server]\nstate_dir = var/lib/muster\n",
                  "test.conf:2: invalid state_dir 'var/lib/muster': expected an absolute path" },
                { "[server]\nstore = mysql://db/muster\n", "test.conf:2: invalid store 'mysql://db/muster'" },
                { "[server]\nstate_dir = \"/srv\n", "test.conf:2: unbalanced quotes in value of 'state_dir'" },
                { "[server]\nstate_dir = \"/a\"b\"\n", "test.conf:2: unbalanced quotes in value of 'state_dir'" },
                { "[monitor]\nmonitor_interval = 3m\nhost_disconnect_timeout = 3m\n",
                  "test.conf: [monitor] monitor_interval (180s) must be shorter than host_disconnect_timeout (180s)" },
                { "[server]\nmax_inventory_bytes = 8MiB\n",
                  "test.conf: [server] max_inventory_bytes (8388608) exceeds max_body_bytes (4194304)" },
                { "[server]\nmax_body_memory = 64MiB\n",
                  "test.conf: [server] max_body_memory (67108864) must be larger than the largest body a request may "
                  "send (67108864: max_body_bytes, max_release_bytes, [logs] max_upload_bytes)" },
                { "[network]\nmin_mtu = 70000\n", "test.conf:2: min_mtu '70000' is out of range (0 to 65535)" },
                { "[network]\nmin_mtu = -1\n", "test.conf:2: invalid min_mtu '-1': expected a whole number" },
                { "[network]\nmin_mtu = 1500 bytes\n", "test.conf:2: invalid min_mtu '1500 bytes'" },
                { "[network]\nmin_mtu = 500\n",
                  "test.conf: [network] min_mtu (500) must be 0 (no minimum) or at least 576" },
                { "[network]\nmtu_check = false\nmin_mtu = 9000\n",
                  "test.conf: [network] min_mtu (9000) needs mtu_check = true" },
                { "[network]\nmtu_check = sometimes\n",
                  "test.conf:2: invalid mtu_check 'sometimes': expected true or false" },
                { "[dns]\nrequire_apps = 2\n", "test.conf:2: invalid require_apps '2': expected true or false" },
                { "[dns]\nrequire_api = true\n", "test.conf:2: unknown key 'require_api' in [dns]" },
                { "[dns]\nrequire_api_int = yes\nrequire_api_int = no\n",
                  "test.conf:3: duplicate key 'require_api_int' in [dns]" },
                { "[requirements.any]\nmemory = 12GiB\n",
                  "test.conf: [requirements.any] memory exceeds the worker requirement" },
                { "[requirements.any]\ncpu_cores = 5\n[requirements.worker]\ncpu_cores = 6\n",
                  "test.conf: [requirements.any] cpu_cores exceeds the master requirement" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                struct muster_config c;
                char err[256];
                int r = parse(cases[i].text, &c, err, sizeof err);
                cr_assert_eq(r, -EINVAL, "case %zu: r=%d", i, r);
                cr_assert(strncmp(err, cases[i].err, strlen(cases[i].err)) == 0, "case %zu:\n got  '%s'\n want '%s'", i,
                          err, cases[i].err);
        }
}

Test(config, long_line_and_long_value) {
        char *text = malloc(9000), err[256];
        struct muster_config c;

        strcpy(text, "[server]\nstate_dir = /");
        memset(text + strlen(text), 'a', 5000);
        text[22 + 5000] = '\0';
        strcat(text, "\n");
        cr_assert_eq(parse(text, &c, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "test.conf:2: line is longer than 4095 characters");

        strcpy(text, "[server]\nlisten = ");
        memset(text + strlen(text), 'h', 300);
        strcpy(text + 18 + 300, ":80\n");
        cr_assert_eq(parse(text, &c, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "test.conf:2: listen is too long (at most 255 characters)");
        free(text);
}

Test(config, small_error_buffer_is_safe) {
        struct muster_config c;
        char err[8];

        cr_assert_eq(parse("[nope]\n", &c, err, sizeof err), -EINVAL);
        cr_assert_eq(strlen(err), 7);
        cr_assert_eq(parse("[nope]\n", &c, NULL, 0), -EINVAL);
}

Test(config, load_file) {
        char *dir = tu_mkdtemp(), path[4096], err[256];
        struct muster_config c;

        cr_assert_not_null(dir);
        cr_assert_eq(tu_write_file(dir, "musterd.conf", "[monitor]\nhost_disconnect_timeout = 2m\n[ntp]\nmax_offset_ms = 250\n"), 0);
        snprintf(path, sizeof path, "%s/musterd.conf", dir);
        cr_assert_eq(config_load(path, &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.host_disconnect_timeout_s, 120);
        cr_assert_eq(c.ntp_max_offset_ms, 250);
        cr_assert_eq(c.max_page_size, 1000, "defaults under the file");

        cr_assert_eq(tu_write_file(dir, "bad.conf", "[server]\nmax_page_size = 10\nbogus = 1\n"), 0);
        snprintf(path, sizeof path, "%s/bad.conf", dir);
        cr_assert_eq(config_load(path, &c, err, sizeof err), -EINVAL);
        char want[4200];
        snprintf(want, sizeof want, "%s:3: unknown key 'bogus' in [server]", path);
        cr_assert_str_eq(err, want);

        cr_assert_eq(tu_write_bin(dir, "nul.conf", "[server]\n\nx\0y\n", 13), 0);
        snprintf(path, sizeof path, "%s/nul.conf", dir);
        cr_assert_eq(config_load(path, &c, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, ":3: NUL byte in line"), "%s", err);

        snprintf(path, sizeof path, "%s/missing.conf", dir);
        cr_assert_eq(config_load(path, &c, err, sizeof err), -ENOENT);
        cr_assert(strstr(err, "cannot open: No such file or directory"), "%s", err);
        cr_assert_eq(c.max_page_size, 1000, "defaults even on failure");

        cr_assert_eq(config_load(dir, &c, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "not a regular file"), "%s", err);
        tu_rm_rf(dir);
        free(dir);
}

Test(config, profile_for) {
        cr_assert_eq(config_profile_for(false, false, ROLE_MASTER), REQ_ANY);
        cr_assert_eq(config_profile_for(false, true, ROLE_AUTO), REQ_ANY);
        cr_assert_eq(config_profile_for(true, true, ROLE_AUTO), REQ_SNO);
        cr_assert_eq(config_profile_for(true, true, ROLE_MASTER), REQ_SNO);
        cr_assert_eq(config_profile_for(true, false, ROLE_MASTER), REQ_MASTER);
        cr_assert_eq(config_profile_for(true, false, ROLE_WORKER), REQ_WORKER);
        cr_assert_eq(config_profile_for(true, false, ROLE_AUTO), REQ_WORKER);
        for (int p = 0; p < _REQ_MAX; p++)
                cr_assert_not_null(req_profile_to_string((enum req_profile) p));
}

Test(config, infraenv_and_events_limits) {
        struct muster_config c;
        char err[256];

        config_defaults(&c);
        cr_assert_eq(c.infra_env_max_hosts, 10000);
        cr_assert_eq(c.infra_env_register_burst, 200);
        cr_assert_eq(c.infra_env_register_interval_ms, 100);
        cr_assert_eq(c.events_max_age_s, 30 * 86400);
        cr_assert_eq(c.events_max_per_host, 1000);
        cr_assert_eq(config_parse("[infraenv]\nmax_hosts = 5\nregister_burst = 3\nregister_interval = 2s\n"
                                  "[events]\nmax_age = 2h\nmax_per_host = 50\n", "t", &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.infra_env_max_hosts, 5);
        cr_assert_eq(c.infra_env_register_burst, 3);
        cr_assert_eq(c.infra_env_register_interval_ms, 2000);
        cr_assert_eq(c.events_max_age_s, 7200);
        cr_assert_eq(c.events_max_per_host, 50);
        config_defaults(&c);
        cr_assert_eq(config_parse("[events]\nmax_age = 30s\n", "t", &c, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "max_age"), "%s", err);
        cr_assert_eq(config_parse("[infraenv]\nmax_hosts = 0\n", "t", &c, err, sizeof err), -EINVAL);
        cr_assert_eq(config_parse("[infraenv]\nregister_burst = -1\n", "t", &c, err, sizeof err), -EINVAL);
}

Test(config, hostile_client_limits_and_metrics) {
        struct muster_config c;
        char err[256];

        config_defaults(&c);
        cr_assert_eq(c.max_connections_per_address, 64);
        cr_assert_eq(c.header_timeout_s, 30);
        cr_assert_not(c.metrics_public, "/metrics takes a token by default");
        cr_assert_eq(parse("[server]\nmax_connections_per_address = 0\nheader_timeout = 2m\n[metrics]\npublic = yes\n",
                           &c, err, sizeof err), 0, "%s", err);
        cr_assert_eq(c.max_connections_per_address, 0, "0: no cap (behind a proxy)");
        cr_assert_eq(c.header_timeout_s, 120);
        cr_assert(c.metrics_public);
        cr_assert_eq(parse("[metrics]\npublic = False\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_not(c.metrics_public);
        cr_assert_eq(parse("[metrics]\npublic = maybe\n", &c, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "test.conf:2: invalid public 'maybe': expected true or false");
        cr_assert_eq(parse("[server]\nheader_timeout = 0\n", &c, err, sizeof err), -EINVAL, "a deadline is always kept");
        cr_assert_eq(parse("[server]\nheader_timeout = 1500ms\n", &c, err, sizeof err), -EINVAL, "whole seconds");
}

Test(config, releases_image_dir) {
        struct muster_config c;
        char err[256];

        config_defaults(&c);
        cr_assert_str_eq(c.releases_image_dir, "", "default: <state_dir>/images");
        cr_assert_eq(parse("[releases]\nimage_dir = /srv/muster/images\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.releases_image_dir, "/srv/muster/images");
        cr_assert_eq(parse("[releases]\nimage_dir = images\n", &c, err, sizeof err), -EINVAL, "relative");
        cr_assert(strstr(err, "image_dir"), "%s", err);
}

/* ---- the documented keys ------------------------------------------------- */

/* "section.key" for each `key =` line (commented out or not) of a text,
 * under the last [section] header, where every line of it starts with
 * `indent`; a header line's own comment counts for its section too
 * ("[requirements.any]  # cpu_cores = 2, ..."). One string, '\n' between. */
static char *documented_keys(const char *text, const char *indent) {
        size_t cap = strlen(text) * 2 + 64, len = 0, il = strlen(indent);
        char *out = calloc(cap, 1), section[64] = "";
        cr_assert_not_null(out);
        for (const char *l = text; *l;) {
                size_t n = strcspn(l, "\n");
                char line[512];
                snprintf(line, sizeof line, "%.*s", (int) (n < sizeof line ? n : sizeof line - 1), l);
                l += n + (l[n] != '\0');
                if (strncmp(line, indent, il) != 0)
                        continue;
                char *p = line + il;
                if (*p == '[' && strchr(p, ']')) {
                        snprintf(section, sizeof section, "%.*s", (int) (strchr(p, ']') - p - 1), p + 1);
                        p = strchr(p, ']') + 1;
                }
                if (!section[0])
                        continue;
                /* Every "word =" on the line: the key itself, or keys a
                 * header's comment names. */
                for (char *q = p; (q = strstr(q, " =")); q += 2) {
                        char *k = q;
                        while (k > p && (k[-1] == '_' || (k[-1] >= 'a' && k[-1] <= 'z')))
                                k--;
                        if (k < q)
                                len += (size_t) snprintf(out + len, cap - len, "%s.%.*s\n", section, (int) (q - k), k);
                }
        }
        return out;
}

struct doc_check {
        const char *what, *keys;
        int missing;
};

static void key_documented(const char *section, const char *key, void *u) {
        struct doc_check *d = u;
        char want[128];
        snprintf(want, sizeof want, "%s.%s\n", section, key);
        /* Whole entries only: "\n" before as well (or the start). */
        const char *p = d->keys;
        bool found = false;
        for (const char *h = p; (h = strstr(h, want)); h++)
                if (h == p || h[-1] == '\n') {
                        found = true;
                        break;
                }
        if (!found) {
                cr_log_error("%s does not name [%s] %s", d->what, section, key);
                d->missing++;
        }
}

/* The default musterd.conf (installed as /etc/muster/musterd.conf) shows
 * every key under its section, and the coordinator's README lists every key
 * too (test_systemd's default_config_documents_the_defaults checks the
 * values the file shows). */
Test(config, every_key_is_documented) {
        char *conf = tu_read_file(MUSTER_SOURCE_DIR "/systemd/musterd.conf", NULL);
        char *readme = tu_read_file(MUSTER_SOURCE_DIR "/coordinator/README.md", NULL);
        cr_assert(conf && readme);
        /* The conf's own [section] lines are not commented: read both. */
        char *conf_all = calloc(strlen(conf) * 2 + 1, 1);
        cr_assert_not_null(conf_all);
        for (const char *l = conf; *l;) {
                size_t n = strcspn(l, "\n");
                if (l[0] == '[')
                        strncat(conf_all, "# ", 3);
                strncat(conf_all, l, n);
                strcat(conf_all, "\n");
                l += n + (l[n] != '\0');
        }
        char *conf_keys = documented_keys(conf_all, "# ");
        struct doc_check dc = { "systemd/musterd.conf", conf_keys, 0 };
        config_keys(key_documented, &dc);
        cr_assert_eq(dc.missing, 0, "systemd/musterd.conf misses %d key(s) (see the log)", dc.missing);

        /* The README's block of defaults: its lines are indented 4. */
        const char *block = strstr(readme, "\n    [server]\n");
        cr_assert_not_null(block, "coordinator/README.md's configuration block");
        char *readme_keys = documented_keys(block, "    ");
        struct doc_check dr = { "coordinator/README.md", readme_keys, 0 };
        config_keys(key_documented, &dr);
        cr_assert_eq(dr.missing, 0, "coordinator/README.md misses %d key(s) (see the log)", dr.missing);

        free(conf_all);
        free(conf_keys);
        free(readme_keys);
        free(conf);
        free(readme);
}

Test(config, log_format_and_level) {
        struct muster_config c;
        char err[512];

        config_defaults(&c);
        cr_assert_str_eq(c.log_format, "text");
        cr_assert_str_eq(c.log_level, "info");
        cr_assert_eq(parse("[log]\nformat = json\nlevel = debug\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.log_format, "json");
        cr_assert_str_eq(c.log_level, "debug");
        cr_assert_eq(parse("[log]\nlevel = warning\n", &c, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(c.log_level, "warning");
        cr_assert_str_eq(c.log_format, "text");
        cr_assert_eq(parse("[server]\nthreads = 4\n[log]\nformat = xml\n", &c, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "test.conf:4:") && strstr(err, "format") && strstr(err, "text or json"), "%s", err);
        cr_assert_eq(parse("[log]\nlevel = loud\n", &c, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "test.conf:2:") && strstr(err, "error, warning, info or debug"), "%s", err);
        cr_assert_eq(parse("[log]\ncolour = on\n", &c, err, sizeof err), -EINVAL);
}
