/* Operand cleanup when an operator is uninstalled (DESIGN §9),
 * pure: the state of one subscription's cleanup and its transitions.
 *
 *   uninstall, cleanup off or no operands  -> Done (the operator goes now)
 *   uninstall, cleanup on, operands        -> Cleanup (CleanupWaiting)
 *   a host reports an operand gone         -> it stays pending until every
 *                                             host of the cluster has
 *   nothing pending                        -> Done
 *   cleanup.enabled=false while Cleanup    -> Done, aborted (what is deleted
 *                                             stays deleted)
 *   the timeout passes, something pending  -> stalled, said once, with the
 *                                             hosts that have not reported
 * An upgrade never starts a cleanup; the setting carries over (the
 * subscription keeps it: nothing here changes).
 *
 * Persisted as JSON (cleanup_to_json / cleanup_from_json) with the
 * subscription. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strv.h"

#define CLEANUP_MAX_ITEMS 10000         /* operands of one uninstall */
#define CLEANUP_NAMES_PER_KIND 10       /* names shown per kind in the status */
#define CLEANUP_DEFAULT_TIMEOUT_S 600

enum cleanup_phase {
        CLEANUP_NONE,     /* no uninstall asked */
        CLEANUP_WAITING,  /* operands are being deleted; the operator stays */
        CLEANUP_DONE,     /* the operator may go */
        _CLEANUP_PHASE_MAX,
        _CLEANUP_PHASE_INVALID = -1,
};

/* One operand to delete: its identity, and the hosts that reported it gone. */
struct cleanup_item {
        char *group, *kind, *namespace, *name; /* namespace NULL: cluster-scoped */
        bool managed;           /* applied through musterd (else found on the hosts) */
        struct strv gone_on;    /* host ids */
};

struct cleanup_state {
        enum cleanup_phase phase;
        bool aborted;
        bool stalled;           /* the stall was said */
        int64_t started_s;
        int64_t revision;       /* the payload revision that first went without them (0: none);
                                 * a host's report counts from this revision on */
        int64_t total;          /* operands when it started */
        struct strv lagging;    /* hosts that had not reported everything at the last advance */
        struct cleanup_item *items; /* still pending */
        size_t n;
};
void cleanup_state_free(struct cleanup_state *st);

/* An operand's identity, as a caller lists them. */
struct cleanup_operand {
        const char *group, *kind, *namespace, *name;
        bool managed;
};

/* Uninstall: Cleanup with every operand pending when enabled and there is
 * any, else Done. -EALREADY when it was asked already (not NONE); -E2BIG
 * past CLEANUP_MAX_ITEMS; -ENOMEM. */
int cleanup_start(struct cleanup_state *st, bool enabled, const struct cleanup_operand *ops, size_t n, int64_t now_s);

/* Host `host` applied a revision and still holds `present` (the operands
 * of the pending kinds it found, and the managed ones it has not removed):
 * every pending operand not among them is gone on that host. How many
 * items changed; -ENOMEM. Nothing outside Cleanup. */
int cleanup_report(struct cleanup_state *st, const char *host, const struct cleanup_operand *present, size_t n);

/* What a pass decides, over the cluster's hosts now. */
struct cleanup_step {
        bool done_now;          /* nothing is pending any more: Done */
        bool stalled_now;       /* the timeout passed with something pending: say it (once) */
        struct strv lagging;    /* hosts that have not reported some pending operand */
};
void cleanup_step_free(struct cleanup_step *s);
/* Drop the operands every host of `hosts` reported gone; Done when none is
 * left; a stall once now - started_s >= timeout_s. The lagging hosts are
 * kept in st too (the status names them). -ENOMEM. */
int cleanup_advance(struct cleanup_state *st, const char *const *hosts, size_t n_hosts, int64_t now_s,
                    int64_t timeout_s, struct cleanup_step *out);

/* cleanup.enabled set to false: a Cleanup ends (Done, aborted); 1 when it
 * did, 0 when there was none to abort. */
int cleanup_abort(struct cleanup_state *st);

/* The condition's message: "waiting for operator to finish cleanup for N
 * CRs" while waiting; NULL otherwise. malloc'd. */
char *cleanup_message(const struct cleanup_state *st);

/* status.cleanup: {phase, aborted, stalled, started_at_s, total,
 * pending_deletion: [{group, kind, names[<=10], count}], pending_count,
 * lagging_hosts[<=CLEANUP_NAMES_PER_KIND], lagging_count}.
 * Kinds in first-seen order. NULL on ENOMEM. */
json_object *cleanup_status_json(const struct cleanup_state *st);

/* The whole state (every pending item and the hosts it is gone on), and
 * back. cleanup_from_json: -EINVAL for what is not one. */
json_object *cleanup_to_json(const struct cleanup_state *st);
int cleanup_from_json(json_object *o, struct cleanup_state *out);

/* An upgrade never starts a cleanup: the subscription keeps its setting
 * and the new bundle takes over the operands of the kinds it still owns.
 * Those of a kind it no longer owns are reported, never deleted: the
 * kinds of `before` (group, kind pairs) missing from `after`, in before's
 * order, into *dropped. -ENOMEM. */
struct cleanup_kind { const char *group, *kind; };
int cleanup_kinds_dropped(const struct cleanup_kind *before, size_t n_before, const struct cleanup_kind *after,
                          size_t n_after, struct strv *dropped);
