/* musterd's periodic passes (DECISIONS.md D1): one table of named controllers,
 * each with its interval (read from the configuration in force at every
 * tick, so a reload takes effect), its log name, and counters that
 * /metrics shows (muster_controller_*{controller="NAME"}). The monitor
 * thread runs the ones that are due; controllers_run runs one by name,
 * one step at a time.
 *
 *   checkins   every second: the buffered check-ins written (svc_flush_checkins)
 *   monitor    [monitor] monitor_interval: hosts that went silent become
 *              disconnected, or error while installing or waiting for
 *              their first boot (svc_monitor_pass)
 *   events     [monitor] monitor_interval: [events] retention
 *              (svc_prune_events)
 *   addons     [addons] interval: add-on releases follow their proxies
 *              and the agents' reports, in stages (svc_addon_reconcile)
 *   cleanup    [operators] cleanup_interval: operator uninstalls move on
 *
 * Replicas on one PostgreSQL store: every replica writes its own check-ins;
 * the other passes run on the leader alone (svc_leader: an advisory lock),
 * asked at each tick, so that another replica takes them over within a
 * tick of the leader's death. /metrics says muster_leader 1 or 0. */
#pragma once
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "growbuf.h"

struct musterd;

enum controller_id { CTRL_CHECKINS, CTRL_MONITOR, CTRL_EVENTS, CTRL_ADDONS, CTRL_CLEANUP, _CTRL_MAX };

struct controller_state {
        struct timespec last;         /* CLOCK_MONOTONIC of the last run; 0: never */
        int last_err;                 /* said once while it lasts */
        _Atomic uint64_t runs, failures, changed, last_duration_us;
};

struct controllers {
        struct controller_state st[_CTRL_MAX];
        /* Whether this replica led the passes at the last tick that asked
         * (svc_leader): -1 not asked yet, 0, 1. */
        _Atomic int leader;
};

/* Run every controller whose interval has passed since its last run. */
void controllers_tick(struct musterd *d);

/* The controllers' counters as Prometheus text, appended to out.
 * 0, -E2BIG past max, -ENOMEM. */
int controllers_metrics(struct musterd *d, struct growbuf *out, size_t max);
