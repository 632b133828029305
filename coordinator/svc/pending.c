/* A host's pending actions and its uploaded logs (pending.h). */
#include "svc/pending.h"

#include <errno.h>
#include <string.h>

#include "svc/clusters.h"
#include "svc/downloads.h"
#include "errmsg.h"
#include "svc/hosts.h"
#include "domain/validations.h"
#include "store/store.h"

int svc_host_request_logs(struct svc *sv, const struct host *h, const char *by, char requested_at[MODEL_TIME_LEN],
                          char *err, size_t errlen) {
        if (h->status == HOST_BINDING || h->status == HOST_UNBINDING_PENDING_USER_ACTION ||
            h->status == HOST_RESETTING_PENDING_USER_ACTION)
                return errmsg(err, errlen, -EBUSY,
                              "host %s is %s: its agent is told to register again, not to gather logs; ask once it "
                              "has", h->id, host_status_to_string(h->status));
        int r = model_time_format(svc_now(sv), requested_at);
        if (r < 0 || (r = store_host_actions(sv->store, h->infra_env_id, h->id, HOST_ACTION_GATHER_LOGS, 0, 0, 0)) < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, h->cluster_id, h->id,
                  "%s asked host %s for its logs", by, h->id);
        return 0;
}

int svc_host_logs_upload(struct svc *sv, const struct host *h, const void *data, size_t len, char *err,
                         size_t errlen) {
        char now[MODEL_TIME_LEN];
        if (len < 18 || memcmp(data, HOSTLOGS_MAGIC, 2) != 0)
                return errmsg(err, errlen, -EINVAL, "the logs must be a gzip stream (application/gzip)");
        int r = model_time_format(svc_now(sv), now);
        if (r >= 0)
                r = store_host_logs_put(sv->store, h->infra_env_id, h->id, now, data, len,
                                        (unsigned) svc_cfg(sv)->logs_keep_per_host);
        if (r == -EBUSY)
                return errmsg(err, errlen, r, "no logs were asked of host %s (musterctl host logs HOST --gather)",
                              h->id);
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                  "host %s uploaded its logs (%zu bytes)", h->id, len);
        return 0;
}

int svc_host_logs_get(struct svc *sv, const struct host *h, struct host_logs_record *out) {
        return store_host_logs_get(sv->store, h->infra_env_id, h->id, out);
}

int svc_agent_logs_result(struct svc *sv, const struct host *h, int64_t exit_code, const char *error) {
        if (exit_code == 0)
                return 0;
        int r = store_host_actions(sv->store, h->infra_env_id, h->id, 0, HOST_ACTION_GATHER_LOGS, 0, 0);
        svc_event(sv, EVENT_WARNING, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                  "host %s could not gather its logs: %s", h->id, error ? error : "no reason given");
        return r;
}

const char *svc_reclaim_disk(struct svc *sv, const struct host *h, const struct cluster *c, struct host *full) {
        char why[256];
        if (!c->id || store_host_get(sv->store, h->infra_env_id, h->id, full) < 0 ||
            (!full->inventory && host_parse_inventory(full, why, sizeof why) < 0))
                return NULL;
        return validations_install_disk_path(full->inventory, full->installation_disk_id,
                                             c->high_availability_mode == HA_MODE_NONE, full->role, svc_cfg(sv));
}

/* Whether the installation disk of bound host h can be told. */
static bool reclaim_disk_known(struct svc *sv, const struct host *h) {
        struct cluster c;
        struct host full;
        host_init(&full);
        bool known = svc_host_cluster(sv, h, &c) == 0 && svc_reclaim_disk(sv, h, &c, &full) != NULL;
        host_free(&full);
        cluster_free(&c);
        return known;
}

int svc_host_reclaim(struct svc *sv, const struct infra_env *ie, const struct host *h, bool wipe, const char *by,
                     char *err, size_t errlen) {
        char cmdline[ISO_CMDLINE_MAX], why[512];
        if (h->status != HOST_INSTALLED)
                return errmsg(err, errlen, -EBUSY,
                              "host %s is %s: only an installed host, whose node agent runs, is reclaimed; boot "
                              "it from the discovery ISO instead", h->id, host_status_to_string(h->status));
        /* Something to boot into, before the host is asked. */
        int k = svc_pxe_cmdline(sv, ie, cmdline, why, sizeof why);
        if (k < 0)
                return errmsg(err, errlen, k, "host %s cannot be reclaimed: %s", h->id, why);
        /* A wipe needs the disk the install chose (its node agent does not know it). */
        if (wipe && !reclaim_disk_known(sv, h))
                return errmsg(err, errlen, -EBUSY,
                              "host %s: the disk it was installed to is not known from its inventory; reclaim it "
                              "without --wipe", h->id);
        unsigned set = HOST_ACTION_RECLAIM | (wipe ? HOST_ACTION_RECLAIM_WIPE : 0);
        int r = store_host_actions(sv->store, h->infra_env_id, h->id, set, wipe ? 0 : HOST_ACTION_RECLAIM_WIPE, 0, 0);
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, h->cluster_id, h->id,
                  "%s asked to reclaim host %s%s: its node agent boots it into discovery", by, h->id,
                  wipe ? ", its installation disk wiped" : "");
        return 0;
}

int svc_host_reclaim_cancel(struct svc *sv, const struct host *h, const char *by, char *err, size_t errlen) {
        if (!(h->pending_actions & HOST_ACTION_RECLAIM))
                return errmsg(err, errlen, -EBUSY, "host %s has no reclaim to withdraw", h->id);
        int r = store_host_actions(sv->store, h->infra_env_id, h->id, 0,
                                   HOST_ACTION_RECLAIM | HOST_ACTION_RECLAIM_WIPE,
                                   HOST_ACTION_RECLAIM | HOST_ACTION_RECLAIM_STARTED, HOST_ACTION_RECLAIM);
        if (r == -EBUSY)
                return errmsg(err, errlen, r,
                              "host %s: its node agent has started the reclaim, which can no longer be withdrawn "
                              "(or nothing was asked meanwhile)", h->id);
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, h->cluster_id, h->id,
                  "%s withdrew the reclaim of host %s: it stays installed", by, h->id);
        return 0;
}

int svc_agent_reclaim_result(struct svc *sv, const struct host *h, int64_t exit_code, json_object *output,
                             const char *error) {
        if (!(h->pending_actions & HOST_ACTION_RECLAIM))
                return 0; /* answered already */
        int r = store_host_actions(sv->store, h->infra_env_id, h->id, 0,
                                   HOST_ACTION_RECLAIM | HOST_ACTION_RECLAIM_WIPE | HOST_ACTION_RECLAIM_STARTED, 0, 0);
        if (r < 0)
                return r;
        if (exit_code != 0) {
                svc_event(sv, EVENT_WARNING, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                          "reclaiming host %s failed: %s", h->id, error ? error : "no reason given");
                return 0;
        }
        json_object *bd = NULL;
        json_object_object_get_ex(output, "boot_dir", &bd);
        svc_event(sv, EVENT_INFO, EVENT_CAT_AGENT, h->infra_env_id, h->cluster_id, h->id,
                  "host %s is rebooting into discovery (the boot entry is in %.200s)%s", h->id,
                  json_object_is_type(bd, json_type_string) ? json_object_get_string(bd) : "its boot partition",
                  (h->pending_actions & HOST_ACTION_RECLAIM_WIPE) ? "; it wipes its installation disk first" : "");
        struct host out;
        char err[512] = "";
        const char *what = "host";
        r = svc_host_unbind(sv, h, "reclaim", &out, err, sizeof err, &what);
        host_free(&out);
        return r == -EBUSY ? 0 : r;
}

bool svc_host_may_fetch_boot_files(const struct host *h) {
        return h->status == HOST_INSTALLED && (h->pending_actions & HOST_ACTION_RECLAIM);
}
