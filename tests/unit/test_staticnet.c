/* Static network configs (common/staticnet.h): what is taken, and each
 * refusal naming the entry, the file and the line. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staticnet.h"

#define ETH0 "[Match]\nMACAddress=52:54:00:6D:75:01\n\n[Network]\nAddress=10.0.2.50/24\nGateway=10.0.2.2\n" \
             "DNS=10.0.2.3 2001:db8::53\n"

static int parse(const char *text, struct staticnet *sn, char *err, size_t n) {
        return staticnet_parse(text, sn, err, n);
}

Test(staticnet, a_set_that_is_taken) {
        struct staticnet sn;
        char err[512] = "";
        const char *text =
                "[{\"mac_addresses\":[\"52:54:00:6D:75:01\",\"52-54-00-6d-75-02\"],"
                "\"files\":{\"20-bond.netdev\":\"[NetDev]\\nName=bond0\\nKind=bond\\n[Bond]\\nMode=802.3ad\\n\","
                "\"10-eth0.network\":\"" "[Match]\\nMACAddress=52:54:00:6D:75:01\\n# static\\n[Network]\\n"
                "Address=10.0.2.50/24\\nGateway=10.0.2.2\\nDNS=10.0.2.3 2001:db8::53\\n\","
                "\"30-v6.network\":\"[Match]\\nName=eth1\\n[Address]\\nAddress=2001:db8::10/64\\n[Route]\\n"
                "Gateway=2001:db8::1\\nDestination=0.0.0.0/0\\n\","
                "\"40-e.link\":\"[Match]\\nPermanentMACAddress=52:54:00:6d:75:02\\n[Link]\\nName=lan0\\n\"}},"
                "{\"mac_addresses\":[\"02:00:00:00:00:0a\"],\"files\":{\"a.network\":\"[Match]\\nName=e*\\n"
                "[Network]\\nDHCP=yes\\n\"}}]";
        cr_assert_eq(parse(text, &sn, err, sizeof err), 0, "%s", err);
        cr_assert_eq(sn.n, 2);
        cr_assert_eq(sn.hosts[0].n_macs, 2);
        cr_assert_str_eq(sn.hosts[0].macs[0], "52:54:00:6d:75:01");
        cr_assert_str_eq(sn.hosts[0].macs[1], "52:54:00:6d:75:02", "lower case, ':'");
        cr_assert_eq(sn.hosts[0].n_files, 4);
        cr_assert_str_eq(sn.hosts[0].files[0].name, "10-eth0.network", "files by name");
        cr_assert_str_eq(sn.hosts[0].files[3].name, "40-e.link");
        cr_assert_eq(staticnet_find(&sn, "02:00:00:00:00:0a"), &sn.hosts[1]);
        cr_assert_null(staticnet_find(&sn, "02:00:00:00:00:0b"));
        /* Back to JSON and in again: the same. */
        json_object *o = staticnet_to_json(&sn);
        cr_assert_not_null(o);
        struct staticnet again;
        cr_assert_eq(staticnet_from_json(o, &again, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(json_object_to_json_string(o), json_object_to_json_string(staticnet_to_json(&again)));
        json_object_put(o);
        staticnet_free(&again);
        staticnet_free(&sn);
        cr_assert_eq(parse("[]", &sn, err, sizeof err), 0, "an empty set is none");
        staticnet_free(&sn);
}

Test(staticnet, refusals_name_the_host_file_and_line) {
        static const struct {
                const char *json;
                const char *want;
        } bad[] = {
                { "{}", "must be an array" },
                { "[1]", "static_network[0] is not an object" },
                { "[{\"files\":{}}]", "mac_addresses must be an array" },
                { "[{\"mac_addresses\":[\"52:54:00:6d:75\"],\"files\":{}}]", "mac_addresses[0] is not a MAC" },
                { "[{\"mac_addresses\":[\"zz:54:00:6d:75:01\"],\"files\":{}}]", "is not a MAC" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\",\"02:00:00:00:00:01\"],\"files\":{}}]", "listed twice" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{}}]",
                  "static_network[0] (02:00:00:00:00:01): files must be an object of 1 to" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x\":\"\"},\"extra\":1}]",
                  "unknown member \"extra\"" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"a/../x.network\":\"[Match]\\nName=a\\n\"}}]",
                  "only letters, digits" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\".x.network\":\"\"}}]", "hidden" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.conf\":\"\"}}]",
                  "is not NAME.network, NAME.netdev or NAME.link" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":7}}]", "is not text" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\nName=a\\n"
                  "[Netwrk]\\nDHCP=yes\\n\"}}]",
                  "static_network[0] (02:00:00:00:00:01): x.network line 3: [Netwrk] is not a section of a .network" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\nName=a\\n"
                  "[Network]\\nAddress=10.0.2.500/24\\n\"}}]",
                  "x.network line 4: Address=10.0.2.500/24 is not an address with a prefix" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\nName=a\\n"
                  "[Network]\\nAddress=10.0.2.5/33\\n\"}}]", "line 4: Address=10.0.2.5/33" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\nName=a\\n"
                  "[Network]\\nGateway=gw.lab\\n\"}}]", "line 4: Gateway=gw.lab is not an address" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\nName=a\\n"
                  "[Network]\\nDNS=10.0.2.3 dns.lab\\n\"}}]", "DNS=10.0.2.3 dns.lab is not a list of addresses" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\n"
                  "MACAddress=52:54:00\\n\"}}]", "line 2: MACAddress=52:54:00 is not a MAC" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Network]\\nDHCP=yes\\n\"}}]",
                  "x.network: no [Match] setting" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"DHCP=yes\\n\"}}]",
                  "line 1: a setting before any [Section]" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\njunk\\n\"}}]",
                  "line 2: neither [Section] nor Key=Value" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.network\":\"[Match]\\nName=a \\\\\\n\"}}]",
                  "continued lines" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.netdev\":\"[Bond]\\nMode=x\\n[Network]\\n\"}}]",
                  "[Network] is not a section of a .netdev" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.netdev\":\"\"}}]", "no [Section]" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.netdev\":\"[NetDev]\\nName=a\\u0001\\n\"}}]",
                  "a control character" },
                { "[{\"mac_addresses\":[\"02:00:00:00:00:01\"],\"files\":{\"x.netdev\":\"[NetDev]\\nName=a\\n\"}},"
                  "{\"mac_addresses\":[\"02:00:00:00:00:02\",\"02:00:00:00:00:01\"],\"files\":{\"x.netdev\":"
                  "\"[NetDev]\\nName=a\\n\"}}]",
                  "static_network[1]: 02:00:00:00:00:01 is also in static_network[0]" },
                { "not json", "is not JSON" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                struct staticnet sn;
                char err[512] = "";
                cr_assert_eq(parse(bad[i].json, &sn, err, sizeof err), -EINVAL, "%s", bad[i].json);
                cr_assert(strstr(err, bad[i].want), "%s\n  said: %s\n  want: %s", bad[i].json, err, bad[i].want);
                cr_assert_eq(sn.n, 0);
                cr_assert_null(sn.hosts);
        }
}

Test(staticnet, sizes_are_bounded) {
        size_t n = STATICNET_FILE_MAX + 64;
        char *big = malloc(n + 128);
        cr_assert_not_null(big);
        strcpy(big, "[Match]\nName=a\n");
        size_t at = strlen(big);
        while (at < n - 2)
                big[at++] = '#', big[at++] = '\n';
        big[at] = '\0';
        char err[256] = "";
        cr_assert_eq(staticnet_check_file("a.network", big, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "larger than"), "%s", err);
        free(big);
        char name[80];
        memset(name, 'a', 70);
        strcpy(name + 70, ".network");
        cr_assert_eq(staticnet_check_file(name, ETH0, err, sizeof err), -EINVAL);
        cr_assert_eq(staticnet_check_file("eth0.network", ETH0, err, sizeof err), 0, "%s", err);
}
