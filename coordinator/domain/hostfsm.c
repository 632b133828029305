/* The host state machine (hostfsm.h): every allowed and every refused
 * transition is a row of transitions[]; hostfsm_apply() takes the first row
 * that matches the state, the event and its guard. */
#include "domain/hostfsm.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define M(s) (UINT32_C(1) << (s))
#define M_NEW (UINT32_C(1) << _HOST_STATUS_MAX)
_Static_assert(_HOST_STATUS_MAX < 31, "state masks are 32 bits");

#define U_ACTIVE (M(HOST_DISCOVERING_UNBOUND) | M(HOST_KNOWN_UNBOUND) | M(HOST_INSUFFICIENT_UNBOUND))
#define U_ALL (U_ACTIVE | M(HOST_DISCONNECTED_UNBOUND))
#define B_ACTIVE (M(HOST_DISCOVERING) | M(HOST_KNOWN) | M(HOST_INSUFFICIENT) | M(HOST_PENDING_FOR_INPUT))
#define B_PRE (M(HOST_BINDING) | B_ACTIVE | M(HOST_DISCONNECTED))
#define INST (M(HOST_PREPARING_FOR_INSTALLATION) | M(HOST_INSTALLING) | M(HOST_INSTALLING_IN_PROGRESS))
#define RESETTING M(HOST_RESETTING_PENDING_USER_ACTION)
#define ALL (U_ALL | B_PRE | INST | M(HOST_INSTALLED) | M(HOST_ERROR) | M(HOST_UNBINDING_PENDING_USER_ACTION) | RESETTING)

#define SAME (-2) /* `to` of a row that keeps the state */

typedef bool (*guard_fn)(const struct hostfsm_ctx *ctx, enum hostfsm_verdict v);

struct transition {
        uint32_t from;
        enum hostfsm_event ev;
        guard_fn guard;  /* NULL: always */
        int to;          /* enum host_status or SAME; ignored when error != 0 */
        int error;       /* 0, or the -errno of a refusal */
        const char *reason;
};

static bool installing(const struct hostfsm_ctx *c, enum hostfsm_verdict v) { return c->cluster_installing; }
static bool v_ready(const struct hostfsm_ctx *c, enum hostfsm_verdict v) { return v == VERDICT_READY; }
static bool v_failed(const struct hostfsm_ctx *c, enum hostfsm_verdict v) { return v == VERDICT_FAILED; }
static bool v_wait_agent(const struct hostfsm_ctx *c, enum hostfsm_verdict v) { return v == VERDICT_WAIT_AGENT; }
static bool v_wait_user(const struct hostfsm_ctx *c, enum hostfsm_verdict v) { return v == VERDICT_WAIT_USER; }
static bool v_waiting(const struct hostfsm_ctx *c, enum hostfsm_verdict v) {
        return v == VERDICT_WAIT_AGENT || v == VERDICT_WAIT_USER;
}
static bool v_disconnected(const struct hostfsm_ctx *c, enum hostfsm_verdict v) { return v == VERDICT_DISCONNECTED; }

#define GO(from_, ev_, guard_, to_, reason_) { from_, HOSTFSM_EV_##ev_, guard_, to_, 0, reason_ }
#define NO(from_, ev_, guard_, err_, reason_) { from_, HOSTFSM_EV_##ev_, guard_, SAME, err_, reason_ }

static const struct transition transitions[] = {
        /* registered */
        GO(M_NEW, REGISTERED, NULL, HOST_DISCOVERING_UNBOUND, "Host registered"),
        GO(U_ALL, REGISTERED, NULL, HOST_DISCOVERING_UNBOUND, "Host registered again"),
        GO(M(HOST_BINDING), REGISTERED, NULL, HOST_DISCOVERING, "Host re-registered with its cluster"),
        GO(B_ACTIVE | M(HOST_DISCONNECTED), REGISTERED, NULL, HOST_DISCOVERING, "Host registered again"),
        GO(M(HOST_PREPARING_FOR_INSTALLATION), REGISTERED, NULL, HOST_DISCOVERING,
           "Host registered again while preparing for installation; the preparation is abandoned"),
        /* Handed the install step but not started (no progress yet): an
         * agent restart; the step is handed out again. */
        GO(M(HOST_INSTALLING), REGISTERED, NULL, SAME,
           "Host registered again before its installation started; the install step is handed out again"),
        GO(M(HOST_INSTALLING_IN_PROGRESS), REGISTERED, NULL, HOST_ERROR,
           "Host booted into discovery again during its installation"),
        NO(M(HOST_INSTALLED), REGISTERED, NULL, -EPERM,
           "Host is installed; unbind it before booting it from the discovery ISO again"),
        GO(M(HOST_ERROR), REGISTERED, installing, SAME,
           "Host stays in error while its cluster is installing"),
        GO(M(HOST_ERROR), REGISTERED, NULL, HOST_DISCOVERING, "Host registered again after a failed installation"),
        GO(M(HOST_UNBINDING_PENDING_USER_ACTION), REGISTERED, NULL, HOST_DISCOVERING_UNBOUND,
           "Host booted from the discovery ISO after being unbound; it is back in the pool"),
        GO(RESETTING, REGISTERED, NULL, HOST_DISCOVERING,
           "Host booted from the discovery ISO after its cluster was reset; it is checked again"),

        /* inventory-received */
        GO(U_ACTIVE | M(HOST_BINDING) | B_ACTIVE, INVENTORY_RECEIVED, NULL, SAME, "Inventory received"),
        GO(M(HOST_DISCONNECTED_UNBOUND), INVENTORY_RECEIVED, NULL, HOST_DISCOVERING_UNBOUND,
           "Inventory received from a disconnected host"),
        GO(M(HOST_DISCONNECTED), INVENTORY_RECEIVED, NULL, HOST_DISCOVERING,
           "Inventory received from a disconnected host"),
        NO(INST | M(HOST_INSTALLED) | M(HOST_ERROR) | M(HOST_UNBINDING_PENDING_USER_ACTION) | RESETTING,
           INVENTORY_RECEIVED,
           NULL, -EPERM, "Inventories are not accepted once the installation has started"),

        /* validations-refreshed */
        GO(U_ALL, VALIDATIONS_REFRESHED, v_disconnected, HOST_DISCONNECTED_UNBOUND, "Host is not checking in"),
        GO(U_ALL, VALIDATIONS_REFRESHED, v_ready, HOST_KNOWN_UNBOUND, "Host passes its validations"),
        GO(U_ALL, VALIDATIONS_REFRESHED, v_failed, HOST_INSUFFICIENT_UNBOUND, "Host fails a validation"),
        GO(U_ALL, VALIDATIONS_REFRESHED, v_waiting, HOST_DISCOVERING_UNBOUND, "Host validations are pending"),
        GO(M(HOST_BINDING), VALIDATIONS_REFRESHED, v_disconnected, HOST_DISCONNECTED, "Host is not checking in"),
        GO(M(HOST_BINDING), VALIDATIONS_REFRESHED, NULL, SAME, "Waiting for the host to re-register"),
        GO(B_ACTIVE | M(HOST_DISCONNECTED), VALIDATIONS_REFRESHED, v_disconnected, HOST_DISCONNECTED,
           "Host is not checking in"),
        GO(B_ACTIVE | M(HOST_DISCONNECTED), VALIDATIONS_REFRESHED, v_ready, HOST_KNOWN, "Host passes its validations"),
        GO(B_ACTIVE | M(HOST_DISCONNECTED), VALIDATIONS_REFRESHED, v_failed, HOST_INSUFFICIENT, "Host fails a validation"),
        GO(B_ACTIVE | M(HOST_DISCONNECTED), VALIDATIONS_REFRESHED, v_wait_agent, HOST_DISCOVERING,
           "Host validations are waiting for the agent"),
        GO(B_ACTIVE | M(HOST_DISCONNECTED), VALIDATIONS_REFRESHED, v_wait_user, HOST_PENDING_FOR_INPUT,
           "Host validations are waiting for cluster settings"),
        GO(M(HOST_PREPARING_FOR_INSTALLATION), VALIDATIONS_REFRESHED, v_disconnected, HOST_DISCONNECTED,
           "Host stopped checking in while preparing for installation"),
        GO(M(HOST_PREPARING_FOR_INSTALLATION), VALIDATIONS_REFRESHED, v_failed, HOST_INSUFFICIENT,
           "Host failed a validation while preparing for installation"),
        GO(M(HOST_PREPARING_FOR_INSTALLATION), VALIDATIONS_REFRESHED, NULL, SAME, "Preparing for installation"),
        GO(M(HOST_INSTALLING) | M(HOST_INSTALLING_IN_PROGRESS) | M(HOST_INSTALLED) | M(HOST_ERROR) |
           M(HOST_UNBINDING_PENDING_USER_ACTION) | RESETTING, VALIDATIONS_REFRESHED, NULL, SAME,
           "Validations do not change the state of a host past installation start"),

        /* checkin-timeout */
        GO(U_ACTIVE, CHECKIN_TIMEOUT, NULL, HOST_DISCONNECTED_UNBOUND, "Host stopped checking in"),
        GO(M(HOST_DISCONNECTED_UNBOUND) | M(HOST_DISCONNECTED), CHECKIN_TIMEOUT, NULL, SAME, "Host is still disconnected"),
        GO(M(HOST_BINDING) | B_ACTIVE | M(HOST_PREPARING_FOR_INSTALLATION), CHECKIN_TIMEOUT, NULL, HOST_DISCONNECTED,
           "Host stopped checking in"),
        GO(M(HOST_INSTALLING) | M(HOST_INSTALLING_IN_PROGRESS), CHECKIN_TIMEOUT, NULL, HOST_ERROR,
           "Host stopped checking in during its installation"),
        GO(M(HOST_INSTALLED) | M(HOST_ERROR) | M(HOST_UNBINDING_PENDING_USER_ACTION) | RESETTING, CHECKIN_TIMEOUT,
           NULL, SAME,
           "Host is not expected to check in in this state"),

        /* reconnected */
        GO(M(HOST_DISCONNECTED_UNBOUND), RECONNECTED, NULL, HOST_DISCOVERING_UNBOUND, "Host checks in again"),
        GO(M(HOST_DISCONNECTED), RECONNECTED, NULL, HOST_DISCOVERING, "Host checks in again"),
        GO(ALL & ~(M(HOST_DISCONNECTED_UNBOUND) | M(HOST_DISCONNECTED)), RECONNECTED, NULL, SAME,
           "Host is connected"),

        /* bind */
        NO(M(HOST_KNOWN_UNBOUND), BIND, installing, -EBUSY, "The cluster is installing; hosts cannot be bound to it now"),
        GO(M(HOST_KNOWN_UNBOUND), BIND, NULL, HOST_BINDING, "Host bound to a cluster; waiting for its agent to re-register"),
        NO(M(HOST_DISCOVERING_UNBOUND), BIND, NULL, -EPERM,
           "Host is still being discovered; only known-unbound hosts can be bound"),
        NO(M(HOST_INSUFFICIENT_UNBOUND), BIND, NULL, -EPERM,
           "Host fails its validations; only known-unbound hosts can be bound"),
        NO(M(HOST_DISCONNECTED_UNBOUND), BIND, NULL, -EPERM,
           "Host is disconnected; only known-unbound hosts can be bound"),
        NO(B_PRE | INST | M(HOST_INSTALLED) | M(HOST_ERROR), BIND, NULL, -EPERM,
           "Host is already bound to a cluster; unbind it first"),
        NO(M(HOST_UNBINDING_PENDING_USER_ACTION), BIND, NULL, -EPERM,
           "Host must be booted from the discovery ISO again before it can be bound"),
        NO(RESETTING, BIND, NULL, -EPERM, "Host is already bound to a cluster; unbind it first"),

        /* unbind */
        NO(B_PRE | INST | M(HOST_INSTALLED) | M(HOST_ERROR), UNBIND, installing, -EBUSY,
           "The host's cluster is installing; its hosts cannot be unbound now"),
        NO(INST, UNBIND, NULL, -EBUSY, "Host is being installed; it cannot be unbound now"),
        GO(M(HOST_DISCONNECTED), UNBIND, NULL, HOST_DISCONNECTED_UNBOUND, "Host unbound; it is back in the pool"),
        GO(M(HOST_BINDING) | B_ACTIVE, UNBIND, NULL, HOST_DISCOVERING_UNBOUND, "Host unbound; it is back in the pool"),
        GO(M(HOST_INSTALLED) | M(HOST_ERROR) | RESETTING, UNBIND, NULL, HOST_UNBINDING_PENDING_USER_ACTION,
           "Host unbound; boot it from the discovery ISO to return it to the pool"),
        GO(M(HOST_UNBINDING_PENDING_USER_ACTION), UNBIND, NULL, SAME, "Host is already unbound"),
        NO(U_ALL, UNBIND, NULL, -EPERM, "Host is not bound to a cluster"),

        /* install-started */
        GO(M(HOST_KNOWN), INSTALL_STARTED, NULL, HOST_PREPARING_FOR_INSTALLATION, "Installation started: preparing the host"),
        NO(ALL & ~M(HOST_KNOWN), INSTALL_STARTED, NULL, -EPERM, "Only known hosts can start installing"),

        /* prepared */
        GO(M(HOST_PREPARING_FOR_INSTALLATION), PREPARED, NULL, HOST_INSTALLING, "Host prepared; installation handed to it"),
        NO(ALL & ~M(HOST_PREPARING_FOR_INSTALLATION), PREPARED, NULL, -EPERM, "Host is not preparing for installation"),

        /* preparation-failed: the cluster goes back to insufficient, and so
         * does its installation; nothing was written, so this host is as it
         * was (its validations then say so again). */
        GO(M(HOST_PREPARING_FOR_INSTALLATION), PREPARATION_FAILED, NULL, HOST_KNOWN,
           "Another host of the cluster failed its preparation; the installation did not start"),
        NO(ALL & ~M(HOST_PREPARING_FOR_INSTALLATION), PREPARATION_FAILED, NULL, -EPERM,
           "Host is not preparing for installation"),

        /* progress */
        GO(M(HOST_INSTALLING), PROGRESS, NULL, HOST_INSTALLING_IN_PROGRESS, "Installation in progress"),
        GO(M(HOST_INSTALLING_IN_PROGRESS), PROGRESS, NULL, SAME, "Installation in progress"),
        NO(ALL & ~(M(HOST_INSTALLING) | M(HOST_INSTALLING_IN_PROGRESS)), PROGRESS, NULL, -EPERM, "Host is not installing"),

        /* installed */
        GO(M(HOST_INSTALLING) | M(HOST_INSTALLING_IN_PROGRESS), INSTALLED, NULL, HOST_INSTALLED, "Host installed"),
        GO(M(HOST_INSTALLED), INSTALLED, NULL, SAME, "Host is already installed"),
        NO(ALL & ~(M(HOST_INSTALLING) | M(HOST_INSTALLING_IN_PROGRESS) | M(HOST_INSTALLED)), INSTALLED, NULL, -EPERM,
           "Host is not installing"),

        /* failed */
        GO(INST, FAILED, NULL, HOST_ERROR, "Installation failed"),
        GO(M(HOST_ERROR), FAILED, NULL, SAME, "Installation already failed"),
        NO(ALL & ~(INST | M(HOST_ERROR)), FAILED, NULL, -EPERM, "Host is not installing"),

        /* reset: hosts that started installing are checked and installed
         * again; an installed one first boots from the discovery ISO. */
        GO(INST | M(HOST_ERROR), RESET, NULL, HOST_DISCOVERING,
           "Installation reset; the host registers again and is checked anew"),
        GO(M(HOST_INSTALLED), RESET, NULL, HOST_RESETTING_PENDING_USER_ACTION,
           "Installation reset; boot the host from the discovery ISO to install it again"),
        GO(B_PRE | RESETTING, RESET, NULL, SAME, "Host had not started installing"),
        NO(U_ALL | M(HOST_UNBINDING_PENDING_USER_ACTION), RESET, NULL, -EPERM, "Host is not bound to a cluster"),
};

const char *hostfsm_event_to_string(enum hostfsm_event ev) {
        switch (ev) {
        case HOSTFSM_EV_REGISTERED: return "registered";
        case HOSTFSM_EV_INVENTORY_RECEIVED: return "inventory-received";
        case HOSTFSM_EV_VALIDATIONS_REFRESHED: return "validations-refreshed";
        case HOSTFSM_EV_CHECKIN_TIMEOUT: return "checkin-timeout";
        case HOSTFSM_EV_RECONNECTED: return "reconnected";
        case HOSTFSM_EV_BIND: return "bind";
        case HOSTFSM_EV_UNBIND: return "unbind";
        case HOSTFSM_EV_INSTALL_STARTED: return "install-started";
        case HOSTFSM_EV_PREPARED: return "prepared";
        case HOSTFSM_EV_PROGRESS: return "progress";
        case HOSTFSM_EV_INSTALLED: return "installed";
        case HOSTFSM_EV_FAILED: return "failed";
        case HOSTFSM_EV_RESET: return "reset";
        case HOSTFSM_EV_PREPARATION_FAILED: return "preparation-failed";
        case _HOSTFSM_EV_MAX:
        case _HOSTFSM_EV_INVALID:
                break;
        }
        return NULL;
}

enum hostfsm_event hostfsm_event_from_string(const char *s) {
        for (int i = 0; s && i < _HOSTFSM_EV_MAX; i++)
                if (strcmp(hostfsm_event_to_string((enum hostfsm_event) i), s) == 0)
                        return (enum hostfsm_event) i;
        return _HOSTFSM_EV_INVALID;
}

enum hostfsm_verdict hostfsm_verdict(const struct validation_result *v, size_t n) {
        bool failed = false, wait_agent = false, wait_user = false;

        for (size_t i = 0; i < n; i++) {
                switch (v[i].status) {
                case VSTATUS_FAILURE:
                case VSTATUS_ERROR:
                        if (v[i].id == VAL_CONNECTED)
                                return VERDICT_DISCONNECTED;
                        failed = true;
                        break;
                case VSTATUS_PENDING:
                        if (v[i].awaits_user)
                                wait_user = true;
                        else
                                wait_agent = true;
                        break;
                case VSTATUS_SUCCESS:
                case VSTATUS_DISABLED:
                case _VSTATUS_MAX:
                case _VSTATUS_INVALID:
                        break;
                }
        }
        return failed ? VERDICT_FAILED : wait_agent ? VERDICT_WAIT_AGENT : wait_user ? VERDICT_WAIT_USER : VERDICT_READY;
}

int hostfsm_apply(enum host_status from, enum hostfsm_event ev, const struct hostfsm_ctx *ctx,
                  enum host_status *to, const char **reason) {
        static const struct hostfsm_ctx empty = { 0 };
        enum hostfsm_verdict verdict = VERDICT_READY;
        uint32_t bit;

        if (!ctx)
                ctx = &empty;
        if (reason)
                *reason = NULL;
        if ((int) ev < 0 || ev >= _HOSTFSM_EV_MAX) {
                if (reason)
                        *reason = "Unknown event";
                return -EINVAL;
        }
        if (from == HOSTFSM_NEW_HOST)
                bit = M_NEW;
        else if ((int) from >= 0 && from < _HOST_STATUS_MAX)
                bit = M(from);
        else {
                if (reason)
                        *reason = "Unknown host state";
                return -EINVAL;
        }
        if (ev == HOSTFSM_EV_VALIDATIONS_REFRESHED) {
                if (!ctx->validations || ctx->n_validations == 0) {
                        if (reason)
                                *reason = "No validation results given";
                        return -EINVAL;
                }
                verdict = hostfsm_verdict(ctx->validations, ctx->n_validations);
        }

        for (size_t i = 0; i < sizeof transitions / sizeof *transitions; i++) {
                const struct transition *t = &transitions[i];
                if (t->ev != ev || !(t->from & bit) || (t->guard && !t->guard(ctx, verdict)))
                        continue;
                if (reason)
                        *reason = t->reason;
                if (t->error)
                        return t->error;
                if (to)
                        *to = t->to == SAME ? from : (enum host_status) t->to;
                return 0;
        }
        if (reason)
                *reason = from == HOSTFSM_NEW_HOST ? "Host is not registered" : "Not allowed in the host's state";
        return -EPERM;
}

const char *hostfsm_status_info(enum host_status s) {
        switch (s) {
        case HOST_DISCOVERING_UNBOUND: return "Waiting for the host's inventory and validations";
        case HOST_KNOWN_UNBOUND: return "Host is ready to be bound to a cluster";
        case HOST_INSUFFICIENT_UNBOUND: return "Host does not meet the minimum requirements";
        case HOST_DISCONNECTED_UNBOUND: return "Host has stopped checking in";
        case HOST_BINDING: return "Host is bound to a cluster; waiting for its agent to re-register";
        case HOST_DISCOVERING: return "Checking the host against its cluster";
        case HOST_KNOWN: return "Host is ready to be installed";
        case HOST_INSUFFICIENT: return "Host cannot be installed";
        case HOST_PENDING_FOR_INPUT: return "Waiting for cluster settings to validate the host";
        case HOST_DISCONNECTED: return "Host has stopped checking in";
        case HOST_PREPARING_FOR_INSTALLATION: return "Preparing the host for installation";
        case HOST_INSTALLING: return "Installation handed to the host";
        case HOST_INSTALLING_IN_PROGRESS: return "Installation in progress";
        case HOST_INSTALLED: return "Host is installed";
        case HOST_ERROR: return "Installation failed";
        case HOST_UNBINDING_PENDING_USER_ACTION:
                return "Host was unbound; boot it from the discovery ISO to return it to the pool";
        case HOST_RESETTING_PENDING_USER_ACTION:
                return "Its cluster was reset; boot the host from the discovery ISO to install it again";
        case _HOST_STATUS_MAX:
        case _HOST_STATUS_INVALID:
                break;
        }
        return NULL;
}

char *hostfsm_format_status_info(enum host_status s, const struct validation_result *v, size_t n,
                                 char *buf, size_t buflen) {
        const char *base = hostfsm_status_info(s);
        bool want_failed = s == HOST_INSUFFICIENT_UNBOUND || s == HOST_INSUFFICIENT;
        bool want_pending = s == HOST_DISCOVERING_UNBOUND || s == HOST_DISCOVERING || s == HOST_PENDING_FOR_INPUT;
        size_t len;
        int k = 0;

        if (!buf || buflen == 0)
                return buf;
        snprintf(buf, buflen, "%s", base ? base : "Unknown state");
        for (size_t i = 0; v && i < n; i++) {
                bool pick = want_failed ? (v[i].status == VSTATUS_FAILURE || v[i].status == VSTATUS_ERROR)
                          : want_pending ? v[i].status == VSTATUS_PENDING &&
                                                   (s != HOST_PENDING_FOR_INPUT || v[i].awaits_user)
                                         : false;
                if (!pick)
                        continue;
                len = strlen(buf);
                if (len + 1 >= buflen)
                        break;
                int r = snprintf(buf + len, buflen - len, "%s%s", k++ ? "; " : ": ", v[i].message);
                if (r >= 0 && (size_t) r >= buflen - len) {
                        if (buflen >= 4)
                                memcpy(buf + buflen - 4, "...", 4);
                        break;
                }
        }
        return buf;
}

bool host_status_is_bound(enum host_status s) {
        return (int) s >= 0 && s < _HOST_STATUS_MAX &&
               ((B_PRE | INST | M(HOST_INSTALLED) | M(HOST_ERROR) | RESETTING) & M(s));
}
