/* The periodic passes as named controllers (controllers.h). */
#include "daemon/controllers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc/addons.h"
#include "growbuf.h"
#include "log.h"
#include "daemon/musterd.h"
#include "svc/uninstall.h"

static int64_t every_second(struct svc *sv) {
        (void) sv;
        return 1;
}

static int64_t monitor_interval(struct svc *sv) {
        int64_t s = svc_cfg(sv)->monitor_interval_s;
        return s > 0 ? s : 1;
}

static int64_t addons_interval(struct svc *sv) {
        int64_t s = svc_cfg(sv)->addons_interval_s;
        return s > 0 ? s : 1;
}

static int64_t cleanup_interval(struct svc *sv) {
        int64_t s = svc_cfg(sv)->cleanup_interval_s;
        return s > 0 ? s : 1;
}

static const struct controller_def {
        const char *name;
        int64_t (*interval_s)(struct svc *sv);
        int (*step)(struct svc *sv); /* a service (svc.h) */
        const char *changed_fmt; /* logged with the count when it changed something; NULL: not */
        bool leader_only;        /* one replica runs it (svc_leader) */
} defs[_CTRL_MAX] = {
        [CTRL_CHECKINS] = { "checkins", every_second, svc_flush_checkins, NULL, false },
        [CTRL_MONITOR] = { "monitor", monitor_interval, svc_monitor_pass,
                           "%d host(s) marked disconnected, or failed for going silent while installing", true },
        [CTRL_EVENTS] = { "events", monitor_interval, svc_prune_events, "%d event(s) pruned", true },
        [CTRL_ADDONS] = { "addons", addons_interval, svc_addon_reconcile, "%d add-on release(s) changed", true },
        [CTRL_CLEANUP] = { "cleanup", cleanup_interval, svc_uninstall_pass, "%d operator uninstall(s) moved on",
                           true },
};

static int64_t elapsed_us(const struct timespec *a, const struct timespec *b) {
        return (int64_t) (b->tv_sec - a->tv_sec) * 1000000 + (b->tv_nsec - a->tv_nsec) / 1000;
}

static int run_one(struct musterd *d, enum controller_id id) {
        struct controller_state *st = &d->controllers.st[id];
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int r = defs[id].step(&d->svc);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        st->last = t0;
        atomic_fetch_add(&st->runs, 1);
        atomic_store(&st->last_duration_us, (uint64_t) elapsed_us(&t0, &t1));
        if (r < 0) {
                atomic_fetch_add(&st->failures, 1);
                /* Said once while it lasts (a full disk fails every second). */
                if (r != st->last_err)
                        log_warning_errno(r, defs[id].name, "The %s pass failed: %m", defs[id].name);
                st->last_err = r;
                return r;
        }
        st->last_err = 0;
        atomic_fetch_add(&st->changed, (uint64_t) r);
        if (r > 0 && defs[id].changed_fmt) {
                char msg[256];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
                snprintf(msg, sizeof msg, defs[id].changed_fmt, r);
#pragma GCC diagnostic pop
                log_info(defs[id].name, "%s", msg);
        }
        return r;
}

/* Whether this replica leads now (asked once a tick); a change is logged. */
static bool leads(struct musterd *d) {
        int r = svc_leader(&d->svc);
        int now = r > 0;
        int was = atomic_exchange(&d->controllers.leader, now);
        if (was != now) {
                if (now)
                        log_info("leader", "This musterd leads the passes one replica runs (monitor, events, addons, "
                                           "cleanup)");
                else if (r < 0)
                        log_warning_errno(r, "leader", "Not leading: the store could not say who leads: %m");
                else
                        log_info("leader", "Another musterd on this store leads the monitor, events, addons and "
                                           "cleanup passes");
        }
        return now;
}

void controllers_tick(struct musterd *d) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int leader = -1; /* asked when a leader's pass is due */
        for (int i = 0; i < _CTRL_MAX; i++) {
                const struct controller_state *st = &d->controllers.st[i];
                bool never = st->last.tv_sec == 0 && st->last.tv_nsec == 0;
                if (!never && elapsed_us(&st->last, &now) < defs[i].interval_s(&d->svc) * 1000000 - 500000)
                        continue;
                if (defs[i].leader_only) {
                        if (leader < 0)
                                leader = leads(d);
                        if (!leader)
                                continue;
                }
                (void) run_one(d, (enum controller_id) i);
        }
}

int controllers_metrics(struct musterd *d, struct growbuf *out, size_t max) {
        static const struct {
                const char *metric, *help, *type;
        } m[] = {
                { "muster_controller_runs_total", "Passes a periodic controller ran.", "counter" },
                { "muster_controller_failures_total", "Passes a periodic controller failed.", "counter" },
                { "muster_controller_changed_total", "Things a periodic controller changed (hosts, events, check-ins).",
                  "counter" },
                { "muster_controller_last_duration_seconds", "How long a periodic controller's last pass took.",
                  "gauge" },
        };
        int leader = atomic_load(&d->controllers.leader);
        int r = growbuf_printf(out, max,
                               "# HELP muster_leader Whether this musterd leads the passes one replica runs "
                               "(monitor, events, addons, cleanup); -1 before it first asked.\n"
                               "# TYPE muster_leader gauge\nmuster_leader %d\n",
                               leader);
        for (size_t k = 0; r == 0 && k < sizeof m / sizeof *m; k++) {
                r = growbuf_printf(out, max, "# HELP %s %s\n# TYPE %s %s\n", m[k].metric, m[k].help, m[k].metric,
                                   m[k].type);
                for (int i = 0; r == 0 && i < _CTRL_MAX; i++) {
                        const struct controller_state *st = &d->controllers.st[i];
                        if (k == 3)
                                r = growbuf_printf(out, max, "%s{controller=\"%s\"} %.6f\n", m[k].metric, defs[i].name,
                                                   (double) atomic_load(&st->last_duration_us) / 1e6);
                        else
                                r = growbuf_printf(out, max, "%s{controller=\"%s\"} %llu\n", m[k].metric, defs[i].name,
                                                   (unsigned long long) atomic_load(k == 0   ? &st->runs
                                                                                    : k == 1 ? &st->failures
                                                                                             : &st->changed));
                }
        }
        return r;
}
