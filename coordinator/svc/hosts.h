/* Hosts as people see and change them: read, list, the installation disk a
 * host would install to, change (role, hostname, disk), delete. The
 * handlers have authorized the caller. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "svc/svc.h"

/* The host (infra_env_id, host_id) as stored. -ENOENT, store errors. */
int svc_host_get(struct svc *sv, const char *infra_env_id, const char *host_id, struct host *out);
/* The same, brief (store_host_get_brief): for an agent's poll. */
int svc_host_get_brief(struct svc *sv, const char *infra_env_id, const char *host_id, struct host *out);

/* Hosts matching f, a page at a time. */
int svc_host_list(struct svc *sv, const struct host_filter *f, const struct list_page *pg,
                  struct host_list *out);

/* The cluster host h is bound to (c is always freeable). -ENOENT when it is
 * not bound or the cluster is gone. */
int svc_host_cluster(struct svc *sv, const struct host *h, struct cluster *c);

/* The disk h would install to now (validations_install_disk: the choice
 * has-min-valid-disks approves and the install step uses), parsing h's
 * inventory if needed: *id is the requested disk, else the chosen one's id
 * (or path); *path the chosen one's /dev path. Both NULL when no disk fits;
 * they point into h. */
void svc_host_install_disk(struct svc *sv, struct host *h, const char **id, const char **path);

/* Change h (as loaded) with the fields `in->present` names (role,
 * requested_hostname, installation_disk_id; in's ids are set here), then
 * validate it and its cluster again. `by` is the caller, for the event.
 * 0, or -errno with err: -EINVAL a field that cannot change or a bad value,
 * -EBUSY it is being installed or installed; store errors (err empty). */
int svc_host_update(struct svc *sv, const struct host *h, struct host *in, const char *by, char *err, size_t errlen);

/* Delete h (as loaded); its cluster is validated again. 0, or -EBUSY (err)
 * while it is being installed; store errors. */
int svc_host_delete(struct svc *sv, const struct host *h, const char *by, char *err, size_t errlen);
