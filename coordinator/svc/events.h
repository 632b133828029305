/* The event list as people read it (svc.h svc_event records events). */
#pragma once
#include <stddef.h>

#include "model.h"
#include "records.h"
#include "svc/svc.h"

/* The events f selects. With `owner` (a cluster creator's name; NULL: no
 * such filter), f->cluster_id must name a cluster of that owner, else
 * -ENOENT with err "cluster not found" (nothing is told of another owner's
 * cluster). 0, or store errors (err empty: the events'). */
int svc_event_list(struct svc *sv, const struct event_filter *f, const char *owner, struct event_list *out,
                   char *err, size_t errlen);
