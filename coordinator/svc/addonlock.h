/* One add-on pass, or one change of a proxy, at a time in this process
 * (svc/addons.h). Apart from the reconciler so that svc.c, which makes it,
 * and addons.c, which reports through svc.c, do not call each other. */
#pragma once

struct svc_addons;
int svc_addon_new(struct svc_addons **out);
void svc_addon_free(struct svc_addons *a);
void svc_addon_lock(struct svc_addons *a);
void svc_addon_unlock(struct svc_addons *a);
/* What the passes rendered (addon_memo), read and written under the lock. */
struct addon_memo *svc_addon_memo(struct svc_addons *a);
