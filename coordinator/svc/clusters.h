/* Clusters and late binding (DESIGN §3, §5, §7): a cluster created, read,
 * changed, upgraded and deleted, and pool hosts bound to it and unbound.
 * The handlers have parsed the request and authorized the caller; `by` is
 * the caller's name, for the events. Where err stays empty, a store error is
 * about *what ("cluster", "release", "payload", "host"). */
#pragma once
#include <stddef.h>

#include "labelsel.h"
#include "model.h"
#include "svc/svc.h"

/* The cluster `id` as stored (c always freeable). -ENOENT, store errors. */
int svc_cluster_get(struct svc *sv, const char *id, struct cluster *c);

/* A page of the clusters of `owner` (NULL: everyone's) that `sel` selects
 * by their labels (NULL: all of them). The selector is applied to the
 * store's page, so a page may hold fewer clusters than its limit, or none,
 * while next_after says that more follow. Store errors. */
int svc_cluster_list(struct svc *sv, const char *owner, const struct list_page *pg, const struct labelsel *sel,
                     struct cluster_list *out);

/* Create cluster c (as parsed; owned by `by`): its members checked, its
 * architecture made canonical, its capabilities status computed when its
 * release is imported; then it is validated once. c gets its id; out (always
 * freeable) the cluster as stored then. 0, or -errno with err: -EINVAL a
 * missing name, a bad member, a spec without release or with an unknown
 * capability; store errors (err empty). */
int svc_cluster_create(struct svc *sv, struct cluster *c, const char *by, struct cluster *out, char *err,
                       size_t errlen, const char **what);

/* Change cluster c (as loaded; changed in memory) with the members that
 * in->present names (in's id is set here): the release, capabilities spec
 * and feature set recompute its capabilities status, and an installed
 * cluster whose payload changes gets revision N+1. Then its bound hosts and
 * itself are validated again; out (always freeable) gets it as stored then.
 * 0, or -errno with err: -EINVAL a bad or unchangeable member, nothing to
 * change, an unknown release or capability; -EBUSY it is installing;
 * -ESTALE another payload revision won; -EIO the payload could not be
 * built; store errors (err empty). */
int svc_cluster_update(struct svc *sv, struct cluster *c, struct cluster *in, const char *by, struct cluster *out,
                       char *err, size_t errlen, const char **what);

/* Move cluster c (as loaded; changed in memory) to release `to`, with the
 * upgrade rule (capabilities a manifest needs stay enabled) and, once
 * installed, payload revision N+1; then as svc_cluster_update. 0, or -errno
 * with err: -EBUSY it is installing, -EEXIST it is on `to` already, -EINVAL
 * `to` is not imported, -ESTALE, -EIO as svc_cluster_update; store errors
 * (err empty). */
int svc_cluster_upgrade(struct svc *sv, struct cluster *c, const char *to, const char *by, struct cluster *out,
                        char *err, size_t errlen, const char **what);

/* Delete cluster c (as loaded). 0, or -EBUSY with err while it is
 * installing or has hosts bound; store errors (err empty: the cluster's). */
int svc_cluster_delete(struct svc *sv, const struct cluster *c, const char *by, char *err, size_t errlen);

/* Bind pool host h (as loaded) to cluster c (as loaded), or unbind it from
 * its cluster: the host state machine decides on the host's status; when
 * the host changed meanwhile (its agent checked in between the read and the
 * write), the request is decided again on what is stored then, a few times,
 * unless its cluster changed (the caller authorized the one it had). Events;
 * the cluster is validated again. out (always freeable) gets the host as
 * stored then. 0, or -errno with err: -EBUSY not in this state, or the
 * cluster is installing; -EEXIST already bound to c; err empty: -ESTALE it
 * kept changing or its cluster changed, -ENOENT it or the cluster went. */
int svc_host_bind(struct svc *sv, const struct host *h, const struct cluster *c, const char *by, struct host *out,
                  char *err, size_t errlen, const char **what);
int svc_host_unbind(struct svc *sv, const struct host *h, const char *by, struct host *out, char *err, size_t errlen,
                    const char **what);
