/* What a host's agent does (DESIGN §4): register, report its steps' results
 * and, on every poll, check in and get its next steps. The handlers have
 * loaded and authorized the infra-env and the host; these decide. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "model.h"
#include "domain/steps.h"
#include "svc/svc.h"

/* Host `host_id` registers in infra-env ie (version may be NULL). A new host
 * takes a token from the infra-env's registration bucket ([infraenv]
 * register_burst, register_interval) and counts against its cap ([infraenv]
 * max_hosts); a known one registers again whatever the count, and the state
 * machine says where it goes. h gets the host as stored. 1 new, 0 known, or
 * -errno with err:
 *   -EUSERS   too many new hosts at once (*retry_after_s: when to try again)
 *   -EDQUOT   the infra-env holds its cap of hosts
 *   store errors (err empty: the host's). */
int svc_agent_register(struct svc *sv, const struct infra_env *ie, const char *host_id, const char *version,
                       struct host *h, int64_t *retry_after_s, char *err, size_t errlen);

/* A poll of host h (as loaded) of infra-env ie: its check-in (buffered), a
 * disconnected host connected again, the first check-in of its installed
 * system's node agent (own_token: it used the host's own token), then the
 * steps its state gets into *rep (the caller frees it with
 * steps_reply_free). h->status follows. 0, or -errno with *what naming what
 * failed ("host", "cluster") for the store's words; -EIO when the steps
 * could not be decided. h may be brief (store_host_get_brief): it is read
 * in full where the poll needs more. */
int svc_agent_poll(struct svc *sv, const struct infra_env *ie, struct host *h, bool own_token,
                   struct steps_reply *rep, const char **what);

/* One step's result as the host's agent sent it (the handler has read the
 * request): its type, exit code, step id (install steps: "install-N",
 * "apply-N"; may be NULL), the agent's words for a failure (may be NULL),
 * its "output" parsed (NULL: none) and, for an inventory that succeeded,
 * the inventory's JSON text instead (text[0..len): the output's own bytes,
 * or the string it held). */
struct agent_step_result {
        enum step_type type;
        int64_t exit_code;
        const char *step_id;
        const char *error;
        json_object *output;
        const char *text;
        size_t len;
};

/* Host h's (of infra-env ie) step result res, handed by its type to what
 * takes it: stop-installation (no more stops for h, an event), install
 * (svc_install_step_result), installation-disk-speed-check
 * (svc_install_disk_speed_result), logs-gather (svc_agent_logs_result), reclaim
 * (svc_agent_reclaim_result); of the others, one that failed is an event,
 * an inventory is taken (svc_agent_inventory), a network step's result
 * (connectivity-check, ntp-synchronizer, domain-resolution) kept as the
 * host's step result and the host validated again (a host no longer bound
 * drops it); the rest are ignored. 0, or -errno with err (err empty: *what
 * names what failed for the store's words: "host", "inventory", "cluster",
 * "step result"). */
int svc_agent_step_result(struct svc *sv, const struct infra_env *ie, struct host *h,
                          const struct agent_step_result *res, char *err, size_t errlen, const char **what);

/* Host h's inventory as the agent sent it: the JSON text text[0..len)
 * (the step result's "output" as its bytes came, or the string it held),
 * at most [server] max_inventory_bytes, read without its whole tree
 * (inventory_from_text) and stored as it came. Stored
 * with the state its validations give the host (refresh_host_inventory);
 * h (of infra-env ie) takes the inventory.
 * 0, or -errno with err: -E2BIG too large, -EINVAL not an inventory (err:
 * "inventory: why"); store errors (err empty). */
int svc_agent_inventory(struct svc *sv, const struct infra_env *ie, struct host *h, const char *text, size_t len,
                        char *err, size_t errlen);

