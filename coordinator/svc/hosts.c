/* Hosts as people see and change them (hosts.h). */
#include "svc/hosts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "svc/refresh.h"
#include "domain/validations.h"
#include "store/store.h"

int svc_host_get(struct svc *sv, const char *infra_env_id, const char *host_id, struct host *out) {
        return store_host_get(sv->store, infra_env_id, host_id, out);
}

int svc_host_get_brief(struct svc *sv, const char *infra_env_id, const char *host_id, struct host *out) {
        return store_host_get_brief(sv->store, infra_env_id, host_id, out);
}

int svc_host_list(struct svc *sv, const struct host_filter *f, const struct list_page *pg,
                  struct host_list *out) {
        return store_host_list(sv->store, f, pg, out);
}

int svc_host_cluster(struct svc *sv, const struct host *h, struct cluster *c) {
        cluster_init(c);
        return h->cluster_id ? store_cluster_get(sv->store, h->cluster_id, c) : -ENOENT;
}

void svc_host_install_disk(struct svc *sv, struct host *h, const char **id, const char **path) {
        char err[256];
        if (h->inventory_json && !h->inventory)
                (void) host_parse_inventory(h, err, sizeof err);
        bool single_node = false;
        struct cluster c;
        if (svc_host_cluster(sv, h, &c) == 0)
                single_node = c.high_availability_mode == HA_MODE_NONE;
        cluster_free(&c);
        const struct inv_disk *disk = NULL;
        int i = h->inventory ? validations_install_disk(h->inventory, h->installation_disk_id, h->cluster_id != NULL,
                                                        single_node, h->role, svc_cfg(sv))
                             : -ENOENT;
        if (i >= 0)
                disk = &h->inventory->disks[i];
        *id = h->installation_disk_id && *h->installation_disk_id ? h->installation_disk_id
              : disk ? (disk->id ? disk->id : disk->path) : NULL;
        *path = disk ? disk->path : NULL;
}

/* What a PATCH may change, and whether its values are good. */
static int check_update(const struct host *in, char *err, size_t errlen) {
        char why[256];
        const uint32_t allowed = HOST_F_ROLE | HOST_F_REQUESTED_HOSTNAME | HOST_F_INSTALLATION_DISK_ID;
        if (in->present & ~allowed)
                return errmsg(err, errlen, -EINVAL, "only role, requested_hostname and installation_disk_id can be changed");
        if (!in->present)
                return errmsg(err, errlen, -EINVAL,
                              "nothing to change: give role, requested_hostname or installation_disk_id");
        if ((in->present & HOST_F_ROLE) && in->role == _ROLE_INVALID)
                return errmsg(err, errlen, -EINVAL, "field \"role\" must be auto, master or worker");
        if ((in->present & HOST_F_REQUESTED_HOSTNAME) && in->requested_hostname &&
            !hostname_is_valid(in->requested_hostname, why, sizeof why))
                return errmsg(err, errlen, -EINVAL, "requested_hostname \"%.64s\" is not valid: %s",
                              in->requested_hostname, why);
        return 0;
}

int svc_host_update(struct svc *sv, const struct host *h, struct host *in, const char *by, char *err, size_t errlen) {
        int r = check_update(in, err, errlen);
        if (r < 0)
                return r;
        if (host_status_is_installing(h->status) || h->status == HOST_INSTALLED)
                return errmsg(err, errlen, -EBUSY, "host %s is %s; its settings cannot change now", h->id,
                              host_status_to_string(h->status));
        free(in->infra_env_id);
        free(in->id);
        in->infra_env_id = strdup(h->infra_env_id);
        in->id = strdup(h->id);
        if (!in->infra_env_id || !in->id)
                return -ENOMEM;
        if ((r = store_host_update(sv->store, in, in->present)) < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, h->cluster_id, h->id,
                  "host %s updated by %s%s%s%s%s%s%s", h->id, by, in->present & HOST_F_ROLE ? ": role " : "",
                  in->present & HOST_F_ROLE ? host_role_to_string(in->role) : "",
                  in->present & HOST_F_REQUESTED_HOSTNAME ? "; hostname " : "",
                  in->present & HOST_F_REQUESTED_HOSTNAME ? (in->requested_hostname ? in->requested_hostname : "(none)")
                                                          : "",
                  in->present & HOST_F_INSTALLATION_DISK_ID ? "; installation disk " : "",
                  in->present & HOST_F_INSTALLATION_DISK_ID
                          ? (in->installation_disk_id ? in->installation_disk_id : "(any)") : "");
        struct host now;
        host_init(&now);
        if ((r = store_host_get(sv->store, in->infra_env_id, in->id, &now)) < 0) {
                host_free(&now);
                return r;
        }
        (void) refresh_host(sv, &now);
        if (now.cluster_id)
                (void) refresh_cluster(sv, now.cluster_id, NULL);
        host_free(&now);
        return 0;
}

int svc_host_delete(struct svc *sv, const struct host *h, const char *by, char *err, size_t errlen) {
        if (host_status_is_installing(h->status))
                return errmsg(err, errlen, -EBUSY, "host %s is being installed; it cannot be deleted now", h->id);
        int r = store_host_delete(sv->store, h->infra_env_id, h->id);
        if (r < 0)
                return r;
        svc_event(sv, EVENT_INFO, EVENT_CAT_USER, h->infra_env_id, h->cluster_id, h->id, "host %s deleted by %s", h->id,
                  by);
        if (h->cluster_id)
                (void) refresh_cluster(sv, h->cluster_id, NULL);
        return 0;
}
