/* The event sink (svc.h svc_event): every event a service or a controller
 * raises is recorded in the store, where GET /events and musterctl events
 * read it (svc_event_list, events.h), and then handed up to the sink that
 * the daemon wired. Lower layers never call a higher one to say something
 * happened; they call this. */
#include "svc/svc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "svc/events.h"
#include "log.h"
#include "store/store.h"

static void event_vmake(struct event *e, enum event_severity sev, enum event_category cat, const char *infra_env_id,
                        const char *cluster_id, const char *host_id, const char *fmt, va_list ap)
        __attribute__((format(printf, 7, 0)));

static void event_vmake(struct event *e, enum event_severity sev, enum event_category cat, const char *infra_env_id,
                        const char *cluster_id, const char *host_id, const char *fmt, va_list ap) {
        char msg[1024];
        vsnprintf(msg, sizeof msg, fmt, ap);
        event_init(e);
        e->severity = sev;
        e->category = cat;
        e->infra_env_id = infra_env_id ? strdup(infra_env_id) : NULL;
        e->cluster_id = cluster_id ? strdup(cluster_id) : NULL;
        e->host_id = host_id ? strdup(host_id) : NULL;
        e->message = strdup(msg);
}

void svc_event_make(struct event *e, enum event_severity sev, enum event_category cat, const char *infra_env_id,
                    const char *cluster_id, const char *host_id, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        event_vmake(e, sev, cat, infra_env_id, cluster_id, host_id, fmt, ap);
        va_end(ap);
}

void svc_event_emit(struct svc *s, const struct event *e) {
        if (s->sink.emit)
                s->sink.emit(s->sink.ctx, e);
}

void svc_event(struct svc *s, enum event_severity sev, enum event_category cat, const char *infra_env_id,
               const char *cluster_id, const char *host_id, const char *fmt, ...) {
        struct event e;
        va_list ap;
        va_start(ap, fmt);
        event_vmake(&e, sev, cat, infra_env_id, cluster_id, host_id, fmt, ap);
        va_end(ap);
        /* The audit trail is answered for: its record is durable before
         * the request's answer. Other events ride on the next commit. */
        int r = cat == EVENT_CAT_AUDIT ? store_event_append(s->store, &e) : store_event_append_unwaited(s->store, &e);
        if (r < 0)
                log_warning_errno(r, "events", "Failed to record event \"%s\": %m", e.message ? e.message : "?");
        else
                svc_event_emit(s, &e);
        event_free(&e);
}

int svc_event_list(struct svc *sv, const struct event_filter *f, const char *owner, struct event_list *out,
                   char *err, size_t errlen) {
        *out = (struct event_list) { 0 };
        if (owner) {
                struct cluster c;
                cluster_init(&c);
                bool mine = f->cluster_id && store_cluster_get(sv->store, f->cluster_id, &c) == 0 && c.owner &&
                            strcmp(c.owner, owner) == 0;
                cluster_free(&c);
                if (!mine)
                        return errmsg(err, errlen, -ENOENT, "cluster not found");
        }
        return store_event_list(sv->store, f, out);
}

void svc_audit(struct svc *s, const char *role, const char *owner, const char *action, const char *method,
               const char *path, int status) {
        svc_event(s, status >= 400 ? EVENT_WARNING : EVENT_INFO, EVENT_CAT_AUDIT, NULL, NULL, NULL,
                  "%s %.128s: %s %s %.300s, answered %d", role, owner, action, method, path, status);
}
