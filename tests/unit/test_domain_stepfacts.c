/* Step results -> validation facts: the agent's outputs (agent/steps_net.h
 * shapes) parsed defensively. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "domain/stepfacts.h"

static const char *const full =
        "{\"connectivity-check\":{\"peers\":["
        "  {\"host_id\":\"a\",\"reachable\":true,\"loss_pct\":0,\"rtt_avg_ms\":0.25,"
        "   \"mtu_ok\":false,\"mtu\":1500,\"path_mtu\":1280},"
        "  {\"host_id\":\"b\",\"reachable\":false,\"loss_pct\":100,\"mtu_ok\":null},"
        "  {\"host_id\":7,\"reachable\":true},"
        "  {\"reachable\":true}]},"
        " \"ntp-synchronizer\":{\"synced\":true,\"offset_ms\":-12.5,\"method\":\"coordinator-date\"},"
        " \"domain-resolution\":{\"resolutions\":["
        "  {\"name\":\"api-int.c.example.com\",\"ipv4_addresses\":[\"10.0.0.9\"]},"
        "  {\"name\":\"*.apps.c.example.com\",\"queried_name\":\"muster-0a0b0c0d0e0f.apps.c.example.com\","
        "   \"ipv4_addresses\":[],\"error\":\"Name or service not known\\n\\u0007\"},"
        "  {\"name\":\"API.c.example.com\",\"ipv4_addresses\":[\"10.0.0.5\",3],\"ipv6_addresses\":[\"fd00::5\"]},"
        "  {\"name\":\"api.c.example.com\",\"ipv4_addresses\":[\"10.6.6.6\"]}]}}";

Test(stepfacts, all_three_results) {
        struct step_facts sf;
        struct host_facts f = { 0 };
        cr_assert_eq(step_facts_parse(full, "c.example.com", &sf), 0);
        step_facts_apply(&sf, &f);
        cr_assert(f.connectivity.present);
        cr_assert_eq(f.connectivity.n_peers, 2, "entries without a string host_id are skipped");
        cr_assert_str_eq(f.connectivity.peers[0].peer_host_id, "a");
        cr_assert(f.connectivity.peers[0].reachable);
        cr_assert_float_eq(f.connectivity.peers[0].latency_ms, 0.25, 1e-9);
        cr_assert_str_eq(f.connectivity.peers[1].peer_host_id, "b");
        cr_assert_not(f.connectivity.peers[1].reachable);
        cr_assert(isnan(f.connectivity.peers[1].latency_ms));
        cr_assert(f.ntp.present);
        cr_assert_not(f.ntp.synced, "synced by the coordinator's Date is not an NTP source answering");
        cr_assert_float_eq(f.ntp.offset_ms, -12.5, 1e-9);
        cr_assert_eq(f.connectivity.peers[0].mtu_result, PEER_MTU_FAILED);
        cr_assert_eq(f.connectivity.peers[0].mtu, 1500);
        cr_assert_eq(f.connectivity.peers[0].path_mtu, 1280);
        cr_assert_eq(f.connectivity.peers[1].mtu_result, PEER_MTU_UNKNOWN, "not probed");
        const struct dns_fact *api = &f.dns[DNS_NAME_API];
        cr_assert(api->present);
        cr_assert_eq(api->n_addresses, 2, "the non-string address is skipped; the later duplicate entry too");
        cr_assert_str_eq(api->addresses[0], "10.0.0.5");
        cr_assert_str_eq(api->addresses[1], "fd00::5");
        cr_assert_null(api->error);
        cr_assert(f.dns[DNS_NAME_API_INT].present);
        cr_assert_eq(f.dns[DNS_NAME_API_INT].n_addresses, 1);
        cr_assert_str_eq(f.dns[DNS_NAME_API_INT].addresses[0], "10.0.0.9");
        cr_assert(f.dns[DNS_NAME_APPS].present, "the wildcard entry is found by its name, not the name queried");
        cr_assert_eq(f.dns[DNS_NAME_APPS].n_addresses, 0);
        cr_assert_str_eq(f.dns[DNS_NAME_APPS].error, "Name or service not known??", "control characters are replaced");
        step_facts_free(&sf);
}

Test(stepfacts, sntp_counts_as_synced) {
        struct step_facts sf;
        cr_assert_eq(step_facts_parse("{\"ntp-synchronizer\":{\"offset_ms\":3,\"method\":\"sntp\"}}", NULL, &sf), 0);
        cr_assert(sf.have_ntp);
        cr_assert(sf.ntp_synced);
        step_facts_free(&sf);
}

Test(stepfacts, coordinator_date_is_not_synced_and_sources_are_kept) {
        struct step_facts sf;
        cr_assert_eq(step_facts_parse("{\"ntp-synchronizer\":{\"offset_ms\":3,\"method\":\"coordinator-date\","
                                      "\"synced\":true,\"sources\":[{\"source\":\"ntp.example.test\"},"
                                      "{\"source\":7},{\"source\":\"192.0.2.1:123\"}]}}", NULL, &sf), 0);
        cr_assert(sf.have_ntp);
        cr_assert_not(sf.ntp_synced, "the agent's \"synced\" is not trusted for the coordinator's Date");
        cr_assert(sf.ntp_has_offset);
        cr_assert_eq(sf.ntp_tried.n, 2);
        cr_assert_str_eq(sf.ntp_tried.v[1], "192.0.2.1:123");
        step_facts_free(&sf);
        /* Every source failed and there was no Date: measured, nothing synced. */
        cr_assert_eq(step_facts_parse("{\"ntp-synchronizer\":{\"method\":null,\"sources\":[{\"source\":\"a\"}]}}",
                                      NULL, &sf), 0);
        cr_assert(sf.have_ntp);
        cr_assert_not(sf.ntp_synced);
        cr_assert_not(sf.ntp_has_offset);
        step_facts_free(&sf);
}

Test(stepfacts, nothing_or_garbage_reads_as_not_received) {
        static const char *const cases[] = {
                NULL, "", "[]", "{", "{\"connectivity-check\":[]}", "{\"connectivity-check\":{\"peers\":{}}}",
                "{\"ntp-synchronizer\":{\"offset_ms\":3,\"method\":null}}",
                "{\"ntp-synchronizer\":{\"offset_ms\":\"3\",\"method\":\"sntp\"}}",
                "{\"domain-resolution\":{\"resolutions\":[{\"name\":\"other.example.com\"}]}}",
                "{\"domain-resolution\":{\"resolutions\":[{\"name\":\"api.other.c.example.com\"},"
                "{\"name\":\"apps.c.example.com\"},{\"name\":[\"api.c.example.com\"]}]}}",
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                struct step_facts sf;
                cr_assert_eq(step_facts_parse(cases[i], "c.example.com", &sf), 0);
                cr_assert_not(sf.have_connectivity, "case %zu", i);
                cr_assert_not(sf.have_ntp, "case %zu", i);
                for (int k = 0; k < _DNS_NAME_MAX; k++)
                        cr_assert_not(sf.dns[k].present, "case %zu", i);
                step_facts_free(&sf);
        }
}

Test(stepfacts, no_api_name_means_no_dns_fact) {
        struct step_facts sf;
        cr_assert_eq(step_facts_parse(full, NULL, &sf), 0);
        for (int k = 0; k < _DNS_NAME_MAX; k++)
                cr_assert_not(sf.dns[k].present);
        cr_assert(sf.have_connectivity);
        step_facts_free(&sf);
}

/* The MTU probe's verdict counts only with a plausible MTU tried. */
Test(stepfacts, mtu_fields_are_checked) {
        static const struct { const char *peer; enum peer_mtu want; int64_t mtu, path; } cases[] = {
                { "\"mtu_ok\":true,\"mtu\":9000", PEER_MTU_PASSED, 9000, 0 },
                { "\"mtu_ok\":false,\"mtu\":1500", PEER_MTU_FAILED, 1500, 0 },
                { "\"mtu_ok\":false,\"mtu\":1500,\"path_mtu\":\"1280\"", PEER_MTU_FAILED, 1500, 0 },
                { "\"mtu_ok\":false,\"mtu\":1500,\"path_mtu\":99999", PEER_MTU_FAILED, 1500, 0 },
                { "\"mtu_ok\":true", PEER_MTU_UNKNOWN, 0, 0 },
                { "\"mtu_ok\":true,\"mtu\":0", PEER_MTU_UNKNOWN, 0, 0 },
                { "\"mtu_ok\":true,\"mtu\":70000", PEER_MTU_UNKNOWN, 0, 0 },
                { "\"mtu_ok\":true,\"mtu\":1500.5", PEER_MTU_UNKNOWN, 0, 0 },
                { "\"mtu_ok\":\"yes\",\"mtu\":1500,\"path_mtu\":1280", PEER_MTU_UNKNOWN, 0, 0 },
                { "\"mtu\":1500", PEER_MTU_UNKNOWN, 0, 0 },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                char text[256];
                struct step_facts sf;
                snprintf(text, sizeof text, "{\"connectivity-check\":{\"peers\":[{\"host_id\":\"a\",\"reachable\":true,%s}]}}",
                         cases[i].peer);
                cr_assert_eq(step_facts_parse(text, NULL, &sf), 0);
                cr_assert_eq(sf.n_peers, 1, "%s", text);
                cr_assert_eq(sf.peers[0].mtu_result, cases[i].want, "%s", text);
                cr_assert_eq(sf.peers[0].mtu, cases[i].mtu, "%s", text);
                cr_assert_eq(sf.peers[0].path_mtu, cases[i].path, "%s", text);
                step_facts_free(&sf);
        }
}

/* installation-disk-speed-check as the coordinator stores it: the p99, or
 * the failure; garbage is not a result; and only for the disk measured. */
Test(stepfacts, disk_speed) {
        struct step_facts sf;
        struct host_facts f = { 0 };
        cr_assert_eq(step_facts_parse("{\"installation-disk-speed-check\":{\"disk\":\"/dev/sda\",\"p99_ms\":3.5,"
                                      "\"median_ms\":1,\"method\":\"device\"}}", NULL, &sf), 0);
        step_facts_apply(&sf, &f);
        cr_assert(f.disk_speed.present);
        cr_assert_not(f.disk_speed.failed);
        cr_assert_float_eq(f.disk_speed.fsync_ms, 3.5, 1e-9);
        cr_assert_str_eq(f.disk_speed.disk, "/dev/sda");
        cr_assert(step_facts_has("{\"installation-disk-speed-check\":{\"disk\":null}}",
                                 STEP_INSTALLATION_DISK_SPEED_CHECK));
        cr_assert_not(step_facts_has("{\"ntp-synchronizer\":{}}", STEP_INSTALLATION_DISK_SPEED_CHECK));
        cr_assert_not(step_facts_has("garbage", STEP_INSTALLATION_DISK_SPEED_CHECK));
        cr_assert_not(step_facts_has(NULL, STEP_INSTALLATION_DISK_SPEED_CHECK));

        /* The same disk keeps it; another disk (or none chosen now) drops it. */
        step_facts_keep_disk(&sf, "/dev/sda");
        cr_assert(sf.have_disk_speed);
        step_facts_keep_disk(&sf, "/dev/sdb");
        cr_assert_not(sf.have_disk_speed);
        cr_assert_null(sf.disk_speed_disk);
        step_facts_free(&sf);
        cr_assert_eq(step_facts_parse("{\"installation-disk-speed-check\":{\"disk\":\"/dev/sda\",\"p99_ms\":3}}", NULL,
                                      &sf), 0);
        step_facts_keep_disk(&sf, NULL);
        cr_assert_not(sf.have_disk_speed);
        step_facts_free(&sf);
        cr_assert_eq(step_facts_parse("{\"installation-disk-speed-check\":{\"disk\":null,\"p99_ms\":3}}", NULL, &sf), 0);
        step_facts_keep_disk(&sf, NULL);
        cr_assert(sf.have_disk_speed, "measured with no disk chosen, still none chosen");
        step_facts_free(&sf);

        cr_assert_eq(step_facts_parse("{\"installation-disk-speed-check\":{\"disk\":\"/dev/sda\",\"failed\":true,"
                                      "\"error\":\"cannot open /dev/sda for writing: Permission denied\"}}", NULL, &sf),
                     0);
        f = (struct host_facts) { 0 };
        step_facts_apply(&sf, &f);
        cr_assert(f.disk_speed.present);
        cr_assert(f.disk_speed.failed);
        cr_assert_str_eq(f.disk_speed.error, "cannot open /dev/sda for writing: Permission denied");
        step_facts_free(&sf);

        static const char *const bad[] = {
                "{\"installation-disk-speed-check\":{}}",
                "{\"installation-disk-speed-check\":{\"p99_ms\":\"3\"}}",
                "{\"installation-disk-speed-check\":{\"p99_ms\":-1}}",
                "{\"installation-disk-speed-check\":{\"p99_ms\":3,\"disk\":7}}",
                "{\"installation-disk-speed-check\":{\"failed\":false}}",
                "{\"installation-disk-speed-check\":[]}",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(step_facts_parse(bad[i], NULL, &sf), 0);
                cr_assert_not(sf.have_disk_speed, "%s", bad[i]);
                step_facts_free(&sf);
        }
}
