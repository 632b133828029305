/* libFuzzer target for the network step results an agent posts, as musterd
 * reads them (issue 13, item 9): step_facts_parse over the stored object
 * {"connectivity-check": .., "ntp-synchronizer": .., "domain-resolution": ..}
 * for cluster c1.example.test, then the host validations over those facts
 * (a bound master with two peers, VIPs set) with the defaults and with
 * [dns] and [network] relaxed or tightened. Invariants: the parse succeeds
 * or runs out of memory; an agent's error text is kept printable and short;
 * a DNS fact holds at most 128 addresses; an MTU verdict comes with a
 * plausible MTU; every validation message is a terminated string. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "domain/config.h"
#include "domain/stepfacts.h"
#include "domain/validations.h"
#include "fuzz_selector.h"

static void check_results(const struct validation_result *v, int n) {
        if (n < 0 || (size_t) n > VAL_HOST_COUNT)
                abort();
        for (int i = 0; i < n; i++)
                if (memchr(v[i].message, '\0', sizeof v[i].message) == NULL)
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_text(data, size, 65536);
        if (!s)
                return 0;

        struct step_facts sf;
        int r = step_facts_parse(s, "c1.example.test", &sf);
        if (r < 0 && r != -ENOMEM)
                abort();
        if (r == 0) {
                for (size_t i = 0; i < sf.n_peers; i++) {
                        const struct peer_connectivity *p = &sf.peers[i];
                        if (!p->peer_host_id)
                                abort();
                        if (p->mtu_result != PEER_MTU_UNKNOWN && (p->mtu < 68 || p->mtu > 65535))
                                abort();
                        if (p->mtu_result == PEER_MTU_UNKNOWN && (p->mtu != 0 || p->path_mtu != 0))
                                abort();
                }
                for (int k = 0; k < _DNS_NAME_MAX; k++) {
                        if (sf.dns[k].addresses.n > 128)
                                abort();
                        const char *e = sf.dns[k].error;
                        if (e && strlen(e) > STEP_FACTS_ERROR_MAX)
                                abort();
                        for (; e && *e; e++)
                                if (*e < ' ' || *e > '~')
                                        abort();
                }
                static const struct host_peer peers[] = {
                        { "a", "worker-a" }, { "b", NULL },
                };
                struct host_facts f = {
                        .status = HOST_DISCOVERING,
                        .seconds_since_checkin = 1,
                        .bound = true,
                        .role = ROLE_MASTER,
                        .cluster = { .name = "c1", .base_dns_domain = "example.test",
                                     .machine_network_cidr = "192.0.2.0/24", .api_vip = "192.0.2.100",
                                     .ingress_vip = "192.0.2.101", .peers = peers, .n_peers = 2 },
                };
                struct muster_config cfg;
                struct validation_result v[VAL_HOST_COUNT];
                step_facts_apply(&sf, &f);
                config_defaults(&cfg);
                check_results(v, validations_host(&f, &cfg, v));
                cfg.dns_require_api_int = cfg.dns_require_apps = false;
                cfg.network_min_mtu = 9000;
                check_results(v, validations_host(&f, &cfg, v));
                f.cluster.single_node = true;
                f.cluster.api_vip = f.cluster.ingress_vip = NULL;
                check_results(v, validations_host(&f, &cfg, v));
                step_facts_free(&sf);
        }
        free(s);
        return 0;
}
