/* The host state machine (DESIGN §5) as one table of
 * {from states, event, guard, to state | refusal}. Pure: the caller loads
 * the host, applies an event, stores the new state and status_info.
 *
 * pending-for-input: a bound host whose validations have no failure and wait
 * only on settings a user must give (machine network CIDR, base DNS domain,
 * API VIP: validation_result.awaits_user), not on data its agent will send.
 * An auto role is not missing input: auto hosts are checked against worker
 * minimums and roles are assigned when the installation starts. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "protocol.h"
#include "domain/validations.h"

enum hostfsm_event {
        HOSTFSM_EV_REGISTERED,          /* agent (re-)registered */
        HOSTFSM_EV_INVENTORY_RECEIVED,
        HOSTFSM_EV_VALIDATIONS_REFRESHED, /* ctx->validations hold the new results */
        HOSTFSM_EV_CHECKIN_TIMEOUT,     /* no check-in for host_disconnect_timeout */
        HOSTFSM_EV_RECONNECTED,         /* a check-in from a disconnected host */
        HOSTFSM_EV_BIND,                /* user binds the host to a cluster */
        HOSTFSM_EV_UNBIND,              /* user unbinds it */
        HOSTFSM_EV_INSTALL_STARTED,     /* the cluster's installation starts */
        HOSTFSM_EV_PREPARED,            /* preparation passed; install step handed out */
        HOSTFSM_EV_PROGRESS,            /* agent reported install progress */
        HOSTFSM_EV_INSTALLED,
        HOSTFSM_EV_FAILED,              /* installation failed */
        HOSTFSM_EV_RESET,               /* user resets the host's cluster's installation */
        HOSTFSM_EV_PREPARATION_FAILED,  /* another host of the cluster failed its preparation */
        _HOSTFSM_EV_MAX,
        _HOSTFSM_EV_INVALID = -1,
};
const char *hostfsm_event_to_string(enum hostfsm_event ev);
enum hostfsm_event hostfsm_event_from_string(const char *s);

/* `from` of a host that has no record yet (first registration). */
#define HOSTFSM_NEW_HOST _HOST_STATUS_INVALID

struct hostfsm_ctx {
        /* HOSTFSM_EV_VALIDATIONS_REFRESHED: the host's fresh validation results. */
        const struct validation_result *validations;
        size_t n_validations;
        /* The cluster the host is bound to (or is being bound to) is installing:
         * bind and unbind are refused with -EBUSY. */
        bool cluster_installing;
};

/* What a set of validation results means for the host's state. */
enum hostfsm_verdict {
        VERDICT_READY,        /* nothing failed or pending: known */
        VERDICT_FAILED,       /* a failure or error: insufficient */
        VERDICT_WAIT_AGENT,   /* waiting on the agent: discovering */
        VERDICT_WAIT_USER,    /* waiting only on user settings: pending-for-input */
        VERDICT_DISCONNECTED, /* `connected` failed: disconnected */
};
/* Disabled results count as passed. VAL_CONNECTED failing wins over all. */
enum hostfsm_verdict hostfsm_verdict(const struct validation_result *v, size_t n);

/* Apply ev to a host in state `from`. ctx may be NULL (all false/empty).
 * 0: *to is the new state (possibly == from), *reason a static sentence.
 * -EPERM: not allowed in this state, *reason says why (the services answer
 *         it as a conflict, -EBUSY);
 * -EBUSY: the cluster is installing, *reason says so;
 * -EINVAL: unknown state or event, or validations-refreshed without results.
 * to and reason may be NULL. */
int hostfsm_apply(enum host_status from, enum hostfsm_event ev, const struct hostfsm_ctx *ctx,
                  enum host_status *to, const char **reason);

/* A host's status_info for state s: a fixed sentence per state. */
const char *hostfsm_status_info(enum host_status s);

/* status_info with the failing (insufficient) or pending (discovering,
 * pending-for-input) validations' messages appended, cut to fit buf:
 * "Host cannot be bound: Insufficient memory: ...; ...". Returns buf. */
char *hostfsm_format_status_info(enum host_status s, const struct validation_result *v, size_t n,
                                 char *buf, size_t buflen);

/* States in which the host is bound to a cluster. */
bool host_status_is_bound(enum host_status s);
