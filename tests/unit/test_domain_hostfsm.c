/* The host state machine: every (state, event) pair, allowed or refused,
 * against an expectation table written out state by state; and the steps
 * table that goes with the states. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/hostfsm.h"
#include "domain/steps.h"

#define N(a) (sizeof(a) / sizeof *(a))

/* Short names, in enum host_status order, then a new host. */
#define DU HOST_DISCOVERING_UNBOUND
#define KU HOST_KNOWN_UNBOUND
#define IU HOST_INSUFFICIENT_UNBOUND
#define XU HOST_DISCONNECTED_UNBOUND
#define BI HOST_BINDING
#define DI HOST_DISCOVERING
#define KN HOST_KNOWN
#define IN HOST_INSUFFICIENT
#define PI HOST_PENDING_FOR_INPUT
#define XD HOST_DISCONNECTED
#define PR HOST_PREPARING_FOR_INSTALLATION
#define IS HOST_INSTALLING
#define IP HOST_INSTALLING_IN_PROGRESS
#define ID HOST_INSTALLED
#define ER HOST_ERROR
#define UP HOST_UNBINDING_PENDING_USER_ACTION
#define RP HOST_RESETTING_PENDING_USER_ACTION
#define N_FROM (_HOST_STATUS_MAX + 1) /* + new host */

/* Expected outcomes: a state, KEEP (same state) or a refusal. */
#define KEEP 100
#define PERM (-EPERM)
#define BUSY (-EBUSY)

enum vkind { V_NONE = -1, V_READY, V_FAILED, V_WAIT_AGENT, V_WAIT_USER, V_DISCONNECTED };

struct row {
        enum hostfsm_event ev;
        bool installing;
        enum vkind verdict;
        int want[N_FROM];
};

static const struct row matrix[] = {
        /*                                        DU    KU    IU    XU    BI    DI    KN    IN    PI    XD    PR    IS    IP    ID    ER    UP    RP    new */
        { HOSTFSM_EV_REGISTERED, false, V_NONE, { DU,   DU,   DU,   DU,   DI,   DI,   DI,   DI,   DI,   DI,   DI,   KEEP, ER,   PERM, DI,   DU,   DI,   DU } },
        { HOSTFSM_EV_REGISTERED, true, V_NONE,  { DU,   DU,   DU,   DU,   DI,   DI,   DI,   DI,   DI,   DI,   DI,   KEEP, ER,   PERM, KEEP, DU,   DI,   DU } },
        { HOSTFSM_EV_INVENTORY_RECEIVED, false, V_NONE,
                                                { KEEP, KEEP, KEEP, DU,   KEEP, KEEP, KEEP, KEEP, KEEP, DI,   PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_VALIDATIONS_REFRESHED, false, V_READY,
                                                { KU,   KU,   KU,   KU,   KEEP, KN,   KN,   KN,   KN,   KN,   KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, PERM } },
        { HOSTFSM_EV_VALIDATIONS_REFRESHED, false, V_FAILED,
                                                { IU,   IU,   IU,   IU,   KEEP, IN,   IN,   IN,   IN,   IN,   IN,   KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, PERM } },
        { HOSTFSM_EV_VALIDATIONS_REFRESHED, false, V_WAIT_AGENT,
                                                { DU,   DU,   DU,   DU,   KEEP, DI,   DI,   DI,   DI,   DI,   KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, PERM } },
        { HOSTFSM_EV_VALIDATIONS_REFRESHED, false, V_WAIT_USER,
                                                { DU,   DU,   DU,   DU,   KEEP, PI,   PI,   PI,   PI,   PI,   KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, PERM } },
        { HOSTFSM_EV_VALIDATIONS_REFRESHED, false, V_DISCONNECTED,
                                                { XU,   XU,   XU,   XU,   XD,   XD,   XD,   XD,   XD,   XD,   XD,   KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, PERM } },
        { HOSTFSM_EV_CHECKIN_TIMEOUT, false, V_NONE,
                                                { XU,   XU,   XU,   KEEP, XD,   XD,   XD,   XD,   XD,   KEEP, XD,   ER,   ER,   KEEP, KEEP, KEEP, KEEP, PERM } },
        { HOSTFSM_EV_RECONNECTED, false, V_NONE,
                                                { KEEP, KEEP, KEEP, DU,   KEEP, KEEP, KEEP, KEEP, KEEP, DI,   KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, PERM } },
        { HOSTFSM_EV_BIND, false, V_NONE,       { PERM, BI,   PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_BIND, true, V_NONE,        { PERM, BUSY, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_UNBIND, false, V_NONE,     { PERM, PERM, PERM, PERM, DU,   DU,   DU,   DU,   DU,   XU,   BUSY, BUSY, BUSY, UP,   UP,   KEEP, UP,   PERM } },
        { HOSTFSM_EV_UNBIND, true, V_NONE,      { PERM, PERM, PERM, PERM, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, BUSY, KEEP, UP,   PERM } },
        { HOSTFSM_EV_INSTALL_STARTED, false, V_NONE,
                                                { PERM, PERM, PERM, PERM, PERM, PERM, PR,   PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_PREPARED, false, V_NONE,   { PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, IS,   PERM, PERM, PERM, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_PROGRESS, false, V_NONE,   { PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, IP,   KEEP, PERM, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_INSTALLED, false, V_NONE,  { PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, ID,   ID,   KEEP, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_FAILED, false, V_NONE,     { PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, ER,   ER,   ER,   PERM, KEEP, PERM, PERM, PERM } },
        { HOSTFSM_EV_PREPARATION_FAILED, false, V_NONE,
                                                { PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, PERM, KN,   PERM, PERM, PERM, PERM, PERM, PERM, PERM } },
        { HOSTFSM_EV_RESET, false, V_NONE,      { PERM, PERM, PERM, PERM, KEEP, KEEP, KEEP, KEEP, KEEP, KEEP, DI,   DI,   DI,   RP,   DI,   PERM, KEEP, PERM } },
};

/* Validation results that produce each verdict. */
static size_t results_for(enum vkind k, struct validation_result *v) {
        memset(v, 0, 3 * sizeof *v);
        v[0].id = VAL_CONNECTED;
        v[1].id = VAL_HAS_MIN_MEMORY;
        v[2].id = VAL_BELONGS_TO_MACHINE_CIDR;
        v[2].status = VSTATUS_DISABLED;
        switch (k) {
        case V_READY:
                break;
        case V_FAILED:
                v[1].status = VSTATUS_FAILURE;
                v[2].status = VSTATUS_PENDING;
                v[2].awaits_user = true;
                break;
        case V_WAIT_AGENT:
                v[1].status = VSTATUS_PENDING;
                v[2].status = VSTATUS_PENDING;
                v[2].awaits_user = true;
                break;
        case V_WAIT_USER:
                v[2].status = VSTATUS_PENDING;
                v[2].awaits_user = true;
                break;
        case V_DISCONNECTED:
                v[0].status = VSTATUS_FAILURE;
                v[1].status = VSTATUS_FAILURE;
                break;
        case V_NONE:
                return 0;
        }
        return 3;
}

static const char *name(int s) {
        if (s == N_FROM - 1)
                return "(new)";
        return host_status_to_string((enum host_status) s);
}

/* The matrix covers every event, and every event x ctx combination the FSM
 * looks at. */
Test(hostfsm, matrix_covers_every_event) {
        bool seen[_HOSTFSM_EV_MAX] = { 0 };
        for (size_t r = 0; r < N(matrix); r++)
                seen[matrix[r].ev] = true;
        for (int e = 0; e < _HOSTFSM_EV_MAX; e++)
                cr_assert(seen[e], "event %s has no row", hostfsm_event_to_string((enum hostfsm_event) e));
}

Test(hostfsm, every_transition) {
        for (size_t r = 0; r < N(matrix); r++) {
                const struct row *row = &matrix[r];
                struct validation_result v[3];
                struct hostfsm_ctx ctx = { .cluster_installing = row->installing };
                ctx.n_validations = results_for(row->verdict, v);
                ctx.validations = ctx.n_validations ? v : NULL;
                for (int s = 0; s < N_FROM; s++) {
                        enum host_status from = s == N_FROM - 1 ? HOSTFSM_NEW_HOST : (enum host_status) s;
                        enum host_status to = (enum host_status) 99;
                        const char *reason = NULL;
                        int want = row->want[s];
                        int rc = hostfsm_apply(from, row->ev, &ctx, &to, &reason);

                        cr_assert_not_null(reason, "%s on %s: no reason", hostfsm_event_to_string(row->ev), name(s));
                        cr_assert_gt(strlen(reason), 0);
                        if (want < 0) {
                                cr_assert_eq(rc, want, "%s%s on %s: rc %d (to %s), want %d (%s)",
                                             hostfsm_event_to_string(row->ev), row->installing ? " (installing)" : "",
                                             name(s), rc, rc == 0 ? name(to) : "-", want, reason);
                                cr_assert_eq((int) to, 99, "refusal leaves *to alone");
                        } else {
                                int exp = want == KEEP ? (int) from : want;
                                cr_assert_eq(rc, 0, "%s%s (verdict %d) on %s: rc %d (%s)",
                                             hostfsm_event_to_string(row->ev), row->installing ? " (installing)" : "",
                                             row->verdict, name(s), rc, reason);
                                cr_assert_eq((int) to, exp, "%s%s (verdict %d) on %s: to %s, want %s",
                                             hostfsm_event_to_string(row->ev), row->installing ? " (installing)" : "",
                                             row->verdict, name(s), name(to), name(exp));
                        }
                }
        }
}

/* Events other than bind/unbind/registered do not look at the cluster. */
Test(hostfsm, installing_flag_only_matters_where_documented) {
        for (size_t r = 0; r < N(matrix); r++) {
                const struct row *row = &matrix[r];
                struct validation_result v[3];
                if (row->ev == HOSTFSM_EV_BIND || row->ev == HOSTFSM_EV_UNBIND || row->ev == HOSTFSM_EV_REGISTERED)
                        continue;
                struct hostfsm_ctx a = { .cluster_installing = false }, b = { .cluster_installing = true };
                a.n_validations = b.n_validations = results_for(row->verdict, v);
                a.validations = b.validations = a.n_validations ? v : NULL;
                for (int s = 0; s < _HOST_STATUS_MAX; s++) {
                        enum host_status ta = 0, tb = 0;
                        int ra = hostfsm_apply((enum host_status) s, row->ev, &a, &ta, NULL);
                        int rb = hostfsm_apply((enum host_status) s, row->ev, &b, &tb, NULL);
                        cr_assert_eq(ra, rb);
                        cr_assert_eq(ta, tb);
                }
        }
}

Test(hostfsm, refusal_reasons) {
        const char *reason;
        struct hostfsm_ctx busy = { .cluster_installing = true };

        cr_assert_eq(hostfsm_apply(IU, HOSTFSM_EV_BIND, NULL, NULL, &reason), -EPERM);
        cr_assert_str_eq(reason, "Host fails its validations; only known-unbound hosts can be bound");
        cr_assert_eq(hostfsm_apply(DU, HOSTFSM_EV_BIND, NULL, NULL, &reason), -EPERM);
        cr_assert_str_eq(reason, "Host is still being discovered; only known-unbound hosts can be bound");
        cr_assert_eq(hostfsm_apply(KN, HOSTFSM_EV_BIND, NULL, NULL, &reason), -EPERM);
        cr_assert_str_eq(reason, "Host is already bound to a cluster; unbind it first");
        cr_assert_eq(hostfsm_apply(KU, HOSTFSM_EV_BIND, &busy, NULL, &reason), -EBUSY);
        cr_assert_str_eq(reason, "The cluster is installing; hosts cannot be bound to it now");
        cr_assert_eq(hostfsm_apply(KN, HOSTFSM_EV_UNBIND, &busy, NULL, &reason), -EBUSY);
        cr_assert_str_eq(reason, "The host's cluster is installing; its hosts cannot be unbound now");
        cr_assert_eq(hostfsm_apply(ID, HOSTFSM_EV_REGISTERED, NULL, NULL, &reason), -EPERM);
        cr_assert_str_eq(reason, "Host is installed; unbind it before booting it from the discovery ISO again");
        cr_assert_eq(hostfsm_apply(KU, HOSTFSM_EV_UNBIND, NULL, NULL, &reason), -EPERM);
        cr_assert_str_eq(reason, "Host is not bound to a cluster");
        cr_assert_eq(hostfsm_apply(HOSTFSM_NEW_HOST, HOSTFSM_EV_BIND, NULL, NULL, &reason), -EPERM);
        cr_assert_str_eq(reason, "Host is not registered");
}

Test(hostfsm, allowed_reasons) {
        const char *reason;
        enum host_status to;

        cr_assert_eq(hostfsm_apply(KU, HOSTFSM_EV_BIND, NULL, &to, &reason), 0);
        cr_assert_str_eq(reason, "Host bound to a cluster; waiting for its agent to re-register");
        cr_assert_eq(hostfsm_apply(ID, HOSTFSM_EV_UNBIND, NULL, &to, &reason), 0);
        cr_assert_eq(to, UP);
        cr_assert_str_eq(reason, "Host unbound; boot it from the discovery ISO to return it to the pool");
        cr_assert_eq(hostfsm_apply(KN, HOSTFSM_EV_UNBIND, NULL, &to, &reason), 0);
        cr_assert_eq(to, DU, "not installed: straight back to the pool");
}

Test(hostfsm, bad_input) {
        enum host_status to;
        const char *reason;
        struct validation_result v[1] = { { .id = VAL_CONNECTED } };
        struct hostfsm_ctx ctx = { 0 };

        cr_assert_eq(hostfsm_apply(KN, HOSTFSM_EV_VALIDATIONS_REFRESHED, NULL, &to, &reason), -EINVAL);
        cr_assert_str_eq(reason, "No validation results given");
        cr_assert_eq(hostfsm_apply(KN, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), -EINVAL);
        ctx.validations = v;
        ctx.n_validations = 1;
        cr_assert_eq(hostfsm_apply(DI, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), 0);
        cr_assert_eq(to, KN);
        cr_assert_eq(hostfsm_apply((enum host_status) 42, HOSTFSM_EV_BIND, NULL, &to, &reason), -EINVAL);
        cr_assert_str_eq(reason, "Unknown host state");
        cr_assert_eq(hostfsm_apply((enum host_status) -7, HOSTFSM_EV_BIND, NULL, &to, &reason), -EINVAL);
        cr_assert_eq(hostfsm_apply(KN, _HOSTFSM_EV_MAX, NULL, &to, &reason), -EINVAL);
        cr_assert_str_eq(reason, "Unknown event");
        cr_assert_eq(hostfsm_apply(KN, _HOSTFSM_EV_INVALID, NULL, &to, &reason), -EINVAL);
}

Test(hostfsm, verdict) {
        struct validation_result v[4] = {
                { .id = VAL_CONNECTED, .status = VSTATUS_SUCCESS },
                { .id = VAL_HAS_INVENTORY, .status = VSTATUS_SUCCESS },
                { .id = VAL_NTP_SYNCED, .status = VSTATUS_DISABLED },
                { .id = VAL_BELONGS_TO_MACHINE_CIDR, .status = VSTATUS_SUCCESS },
        };
        cr_assert_eq(hostfsm_verdict(v, 4), VERDICT_READY);
        cr_assert_eq(hostfsm_verdict(v, 0), VERDICT_READY);
        v[3].status = VSTATUS_PENDING;
        v[3].awaits_user = true;
        cr_assert_eq(hostfsm_verdict(v, 4), VERDICT_WAIT_USER);
        v[1].status = VSTATUS_PENDING;
        cr_assert_eq(hostfsm_verdict(v, 4), VERDICT_WAIT_AGENT, "agent data first: discovering");
        v[2].status = VSTATUS_ERROR;
        cr_assert_eq(hostfsm_verdict(v, 4), VERDICT_FAILED, "error counts as failure");
        v[0].status = VSTATUS_FAILURE;
        cr_assert_eq(hostfsm_verdict(v, 4), VERDICT_DISCONNECTED);
}

/* The real validations of a captured machine drive the FSM. */
Test(hostfsm, with_real_validations) {
        struct muster_config cfg;
        struct inventory inv;
        struct validation_result v[VAL_HOST_COUNT];
        struct host_facts f = { .status = DU, .seconds_since_checkin = 1 };
        char path[4096], err[256], *text;
        FILE *fp;
        long n;
        enum host_status to;

        config_defaults(&cfg);
        snprintf(path, sizeof path, "%s/build-machine/expected.json", MUSTER_FIXTURES_DIR);
        fp = fopen(path, "re");
        cr_assert_not_null(fp);
        fseek(fp, 0, SEEK_END);
        n = ftell(fp);
        rewind(fp);
        text = calloc(1, (size_t) n + 1);
        cr_assert_eq(fread(text, 1, (size_t) n, fp), (size_t) n);
        fclose(fp);
        cr_assert_eq(inventory_from_string(text, &inv, err, sizeof err), 0, "%s", err);
        free(text);

        /* No inventory yet: stays discovering. */
        int k = validations_host(&f, &cfg, v);
        struct hostfsm_ctx ctx = { .validations = v, .n_validations = (size_t) k };
        cr_assert_eq(hostfsm_apply(DU, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), 0);
        cr_assert_eq(to, DU);

        /* build-machine's only disk is mounted: insufficient. */
        f.has_inventory = true;
        f.inventory = &inv;
        k = validations_host(&f, &cfg, v);
        ctx.n_validations = (size_t) k;
        cr_assert_eq(hostfsm_apply(DU, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), 0);
        cr_assert_eq(to, IU);
        char info[512];
        cr_assert_str_eq(hostfsm_format_status_info(to, v, (size_t) k, info, sizeof info),
                         "Host does not meet the minimum requirements: No eligible disk of at least 93.1 GiB "
                         "for any host: vda Disk has mounted filesystems");

        /* With a smaller disk requirement it would be known... */
        cfg.req[REQ_ANY].disk_bytes = 1;
        inv.disks[0].eligible = true;
        k = validations_host(&f, &cfg, v);
        ctx.n_validations = (size_t) k;
        cr_assert_eq(hostfsm_apply(IU, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), 0);
        cr_assert_eq(to, KU);

        /* ... and bound to a cluster without a machine network, pending for input. */
        cfg.req[REQ_WORKER].disk_bytes = 1;
        f.status = DI;
        f.bound = true;
        f.role = ROLE_WORKER;
        f.cluster.name = "lab";
        f.cluster.base_dns_domain = "example.com";
        f.cluster.api_vip = "192.0.2.5";
        f.ntp.present = true;
        f.ntp.synced = true;
        f.cluster.ingress_vip = "192.0.2.6";
        const char *vip[] = { "192.0.2.5" }, *ingress[] = { "192.0.2.6" };
        f.dns[DNS_NAME_API] = (struct dns_fact) { true, vip, 1, NULL };
        f.dns[DNS_NAME_API_INT] = (struct dns_fact) { true, vip, 1, NULL };
        f.dns[DNS_NAME_APPS] = (struct dns_fact) { true, ingress, 1, NULL };
        k = validations_host(&f, &cfg, v);
        ctx.n_validations = (size_t) k;
        cr_assert_eq(hostfsm_apply(DI, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), 0);
        cr_assert_eq(to, PI);
        cr_assert_str_eq(hostfsm_format_status_info(to, v, (size_t) k, info, sizeof info),
                         "Waiting for cluster settings to validate the host: The cluster's machine network CIDR is not set");
        f.cluster.machine_network_cidr = "192.0.2.0/24";
        k = validations_host(&f, &cfg, v);
        ctx.n_validations = (size_t) k;
        cr_assert_eq(hostfsm_apply(PI, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), 0);
        cr_assert_eq(to, KN);
        f.seconds_since_checkin = 1000;
        k = validations_host(&f, &cfg, v);
        ctx.n_validations = (size_t) k;
        cr_assert_eq(hostfsm_apply(KN, HOSTFSM_EV_VALIDATIONS_REFRESHED, &ctx, &to, NULL), 0);
        cr_assert_eq(to, XD);
        inventory_free(&inv);
}

Test(hostfsm, names_and_status_info) {
        for (int e = 0; e < _HOSTFSM_EV_MAX; e++) {
                const char *s = hostfsm_event_to_string((enum hostfsm_event) e);
                cr_assert_not_null(s);
                cr_assert_eq(hostfsm_event_from_string(s), (enum hostfsm_event) e);
        }
        cr_assert_eq(hostfsm_event_from_string("nope"), _HOSTFSM_EV_INVALID);
        cr_assert_eq(hostfsm_event_from_string(NULL), _HOSTFSM_EV_INVALID);
        cr_assert_null(hostfsm_event_to_string(_HOSTFSM_EV_MAX));
        for (int s = 0; s < _HOST_STATUS_MAX; s++) {
                const char *info = hostfsm_status_info((enum host_status) s);
                cr_assert_not_null(info, "%s", name(s));
                cr_assert_gt(strlen(info), 10);
        }
        cr_assert_null(hostfsm_status_info(_HOST_STATUS_INVALID));
}

Test(hostfsm, format_status_info_cuts_and_picks) {
        struct validation_result v[3] = {
                { .id = VAL_HAS_MIN_MEMORY, .status = VSTATUS_FAILURE, .message = "Insufficient memory: 2 GiB, 8 GiB required for any host" },
                { .id = VAL_HAS_INVENTORY, .status = VSTATUS_ERROR, .message = "The host's inventory could not be parsed" },
                { .id = VAL_NTP_SYNCED, .status = VSTATUS_PENDING, .message = "Waiting for the clock check" },
        };
        char buf[512], small[40];

        cr_assert_str_eq(hostfsm_format_status_info(IN, v, 3, buf, sizeof buf),
                         "Host cannot be installed: Insufficient memory: 2 GiB, 8 GiB required for any host; "
                         "The host's inventory could not be parsed");
        cr_assert_str_eq(hostfsm_format_status_info(DI, v, 3, buf, sizeof buf),
                         "Checking the host against its cluster: Waiting for the clock check");
        cr_assert_str_eq(hostfsm_format_status_info(PI, v, 3, buf, sizeof buf),
                         "Waiting for cluster settings to validate the host", "only user-input pendings");
        cr_assert_str_eq(hostfsm_format_status_info(KN, v, 3, buf, sizeof buf), "Host is ready to be installed");
        hostfsm_format_status_info(IN, v, 3, small, sizeof small);
        cr_assert_eq(strlen(small), sizeof small - 1);
        cr_assert_str_eq(small + sizeof small - 4, "...");
}

/* The state machine's errors are errnos, never statuses: a move the state
 * does not allow is -EPERM, one the cluster's installation holds back
 * -EBUSY, an unknown state or event -EINVAL. Which status a client gets
 * for each is http/'s one table's (test_http: errors.one_table; the
 * services answer -EPERM as the conflict -EBUSY, test_binding's 409s). */
Test(hostfsm, bound_states_and_errors) {
        static const bool bound[_HOST_STATUS_MAX] = {
                [BI] = true, [DI] = true, [KN] = true, [IN] = true, [PI] = true, [XD] = true,
                [PR] = true, [IS] = true, [IP] = true, [ID] = true, [ER] = true, [RP] = true,
        };
        for (int s = 0; s < _HOST_STATUS_MAX; s++)
                cr_assert_eq(host_status_is_bound((enum host_status) s), bound[s], "%s", name(s));
        cr_assert_not(host_status_is_bound(_HOST_STATUS_INVALID));
        struct hostfsm_ctx busy = { .cluster_installing = true };
        cr_assert_eq(hostfsm_apply(KN, HOSTFSM_EV_BIND, NULL, NULL, NULL), -EPERM);
        cr_assert_eq(hostfsm_apply(KU, HOSTFSM_EV_BIND, &busy, NULL, NULL), -EBUSY);
        cr_assert_eq(hostfsm_apply(KN, _HOSTFSM_EV_MAX, NULL, NULL, NULL), -EINVAL);
}

/* ---- steps ------------------------------------------------------------- */

static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;
        cr_assert(json_object_object_get_ex(o, key, &v), "no %s in %s", key, json_object_to_json_string(o));
        return v;
}

/* The step types of a reply, "inventory,ntp-synchronizer". */
static void types(const struct steps_reply *r, char *buf, size_t n) {
        buf[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(r->instructions); i++) {
                json_object *s = json_object_array_get_idx(r->instructions, i);
                snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? "," : "",
                         json_object_get_string(member(s, "step_type")));
        }
}

Test(steps, allowed_per_state) {
        const unsigned inv = 1u << STEP_INVENTORY;
        const unsigned bound = inv | 1u << STEP_CONNECTIVITY_CHECK | 1u << STEP_NTP_SYNCHRONIZER | 1u << STEP_DOMAIN_RESOLUTION;
        const unsigned want[_HOST_STATUS_MAX] = {
                [DU] = inv, [KU] = inv, [IU] = inv, [XU] = inv,
                [DI] = bound, [KN] = bound, [IN] = bound, [PI] = bound, [XD] = bound,
                [PR] = 1u << STEP_INSTALLATION_DISK_SPEED_CHECK,
                [IS] = 1u << STEP_INSTALL, [IP] = 1u << STEP_INSTALL, [ID] = 1u << STEP_INSTALL,
        };
        for (int s = 0; s < _HOST_STATUS_MAX; s++)
                cr_assert_eq(steps_allowed((enum host_status) s), want[s], "%s", name(s));
        cr_assert_eq(steps_allowed(_HOST_STATUS_INVALID), 0);
}

Test(steps, unbound_inventory_cadence) {
        struct steps_input in = { .status = KU, .inventory_received = false, .poll_count = 3, .seed = 7 };
        struct steps_reply r;
        char t[256];

        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "inventory", "none received yet");
        cr_assert_eq(r.next_instruction_seconds, STEPS_DEFAULT_INTERVAL_S);
        cr_assert_str_eq(r.post_step_action, "continue");
        json_object *args = member(json_object_array_get_idx(r.instructions, 0), "args");
        cr_assert_str_eq(json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN), "{}");
        steps_reply_free(&r);

        in.inventory_received = true;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0, "not every poll");
        steps_reply_free(&r);

        in.poll_count = 20;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "inventory", "every 10th poll by default");
        steps_reply_free(&r);

        in.inventory_every = 3;
        in.poll_count = 6;
        in.interval_s = 15;
        in.cluster_name = "lab"; /* ignored: not bound */
        in.base_dns_domain = "example.com";
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "inventory");
        cr_assert_eq(r.next_instruction_seconds, 15);
        steps_reply_free(&r);
}

Test(steps, bound_host_checks) {
        const char *a1[] = { "192.0.2.11", "2001:db8::11" };
        const char *a2[] = { "192.0.2.12" };
        const struct step_peer peers[] = {
                { "8d3b5c3e-0000-4000-8000-000000000011", a1, 2 },
                { "8d3b5c3e-0000-4000-8000-000000000012", a2, 1 },
                { "8d3b5c3e-0000-4000-8000-000000000013", NULL, 0 }, /* no inventory yet */
        };
        const char *ntp[] = { "0.pool.ntp.org", "192.0.2.1" };
        struct steps_input in = {
                .status = KN, .inventory_received = true, .poll_count = 1,
                .cluster_name = "lab", .base_dns_domain = "example.com",
                .peers = peers, .n_peers = N(peers), .ntp_sources = ntp, .n_ntp_sources = 2, .seed = 42,
        };
        struct steps_reply r;
        char t[256];

        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "connectivity-check,ntp-synchronizer,domain-resolution");
        cr_assert_str_eq(json_object_to_json_string_ext(member(json_object_array_get_idx(r.instructions, 0), "args"),
                                                        JSON_C_TO_STRING_PLAIN),
                         "{\"peers\":[{\"host_id\":\"8d3b5c3e-0000-4000-8000-000000000011\",\"addresses\":"
                         "[\"192.0.2.11\",\"2001:db8::11\"]},{\"host_id\":\"8d3b5c3e-0000-4000-8000-000000000012\","
                         "\"addresses\":[\"192.0.2.12\"]}],\"mtu_probe\":true}");
        cr_assert_str_eq(json_object_to_json_string_ext(member(json_object_array_get_idx(r.instructions, 1), "args"),
                                                        JSON_C_TO_STRING_PLAIN),
                         "{\"ntp_sources\":[\"0.pool.ntp.org\",\"192.0.2.1\"]}");
        cr_assert_str_eq(json_object_to_json_string_ext(member(json_object_array_get_idx(r.instructions, 2), "args"),
                                                        JSON_C_TO_STRING_PLAIN),
                         "{\"names\":[\"api.lab.example.com\",\"api-int.lab.example.com\",\"*.apps.lab.example.com\"]}");

        /* Step ids: "<type>-<8 hex>", distinct within the reply. */
        const char *ids[3];
        for (size_t i = 0; i < 3; i++) {
                json_object *s = json_object_array_get_idx(r.instructions, i);
                const char *type = json_object_get_string(member(s, "step_type"));
                ids[i] = json_object_get_string(member(s, "step_id"));
                cr_assert_eq(strncmp(ids[i], type, strlen(type)), 0, "%s", ids[i]);
                const char *hex = ids[i] + strlen(type);
                cr_assert_eq(hex[0], '-');
                cr_assert_eq(strlen(hex + 1), 8, "%s", ids[i]);
                cr_assert_eq(strspn(hex + 1, "0123456789abcdef"), 8, "%s", ids[i]);
        }
        cr_assert_str_neq(ids[0] + strlen("connectivity-check-"), ids[1] + strlen("ntp-synchronizer-"));
        steps_reply_free(&r);

        /* [network] mtu_check = false: the agent is told not to probe. */
        in.skip_mtu_probe = true;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        json_object *probe = member(member(json_object_array_get_idx(r.instructions, 0), "args"), "mtu_probe");
        cr_assert(json_object_is_type(probe, json_type_boolean) && !json_object_get_boolean(probe));
        steps_reply_free(&r);
        in.skip_mtu_probe = false;

        /* No peers with addresses, no names, no NTP sources: the date alone. */
        in.n_peers = 0;
        in.cluster_name = NULL;
        in.n_ntp_sources = 0;
        in.inventory_received = false;
        in.status = PI;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "inventory", "nothing to compare the clock with");
        steps_reply_free(&r);
        in.coordinator_date = "Sun, 06 Nov 1994 08:49:37 GMT";
        in.ntp_max_offset_ms = 500;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "inventory,ntp-synchronizer");
        cr_assert_str_eq(json_object_to_json_string_ext(member(json_object_array_get_idx(r.instructions, 1), "args"),
                                                        JSON_C_TO_STRING_PLAIN),
                         "{\"ntp_sources\":[],\"coordinator_date\":\"Sun, 06 Nov 1994 08:49:37 GMT\",\"max_offset_ms\":500}");
        steps_reply_free(&r);
        in.peers = &peers[2];
        in.n_peers = 1;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "inventory,ntp-synchronizer", "a peer without addresses is no check");
        steps_reply_free(&r);
}

/* A cancelled install: stop-installation, whatever the state's plan. */
Test(steps, stop_installation_when_asked) {
        struct steps_input in = { .status = ER, .inventory_received = true, .stop_installation = true };
        struct steps_reply r;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 1);
        json_object *s = json_object_array_get_idx(r.instructions, 0), *v;
        cr_assert(json_object_object_get_ex(s, "step_type", &v));
        cr_assert_str_eq(json_object_get_string(v), "stop-installation");
        cr_assert(json_object_object_get_ex(s, "step_id", &v));
        cr_assert_str_eq(json_object_get_string(v), "stop-installation");
        steps_reply_free(&r);
        in.stop_installation = false;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0);
        steps_reply_free(&r);
}

Test(steps, exit_and_nothing) {
        struct steps_input in = { .status = BI, .inventory_received = false };
        struct steps_reply r;

        for (int s = 0; s < _HOST_STATUS_MAX; s++) {
                in.status = (enum host_status) s;
                in.must_reregister = false;
                cr_assert_eq(steps_for_host(&in, &r), 0);
                bool exits = s == BI || s == UP || s == RP;
                cr_assert_str_eq(r.post_step_action, exits ? "exit" : "continue", "%s", name(s));
                if (exits || s > PR)
                        cr_assert_eq(json_object_array_length(r.instructions), 0, "%s", name(s));
                steps_reply_free(&r);

                in.must_reregister = true;
                cr_assert_eq(steps_for_host(&in, &r), 0);
                cr_assert_str_eq(r.post_step_action, "exit", "%s", name(s));
                cr_assert_eq(json_object_array_length(r.instructions), 0);
                cr_assert_eq(r.next_instruction_seconds, 0);
                steps_reply_free(&r);
        }
        in.status = _HOST_STATUS_INVALID;
        cr_assert_eq(steps_for_host(&in, &r), -EINVAL);
        in.status = _HOST_STATUS_MAX;
        cr_assert_eq(steps_for_host(&in, &r), -EINVAL);
        cr_assert_eq(steps_for_host(NULL, &r), -EINVAL);
}

/* Preparing: the disk speed check on the chosen disk (the install step's),
 * until its result is in; nothing else, and never the install step. */
Test(steps, preparing_measures_the_installation_disk) {
        struct steps_input in = { .status = PR, .inventory_received = true, .cluster_id = "c", .payload_revision = 1,
                                  .installation_disk = "/dev/disk/by-id/wwn-0x5000", .seed = 9,
                                  .cluster_name = "lab", .base_dns_domain = "example.com",
                                  .coordinator_date = "Mon, 01 Jan 2024 00:00:00 GMT" };
        struct steps_reply r;
        char t[256];
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "installation-disk-speed-check");
        json_object *s = json_object_array_get_idx(r.instructions, 0);
        cr_assert_str_eq(json_object_get_string(member(member(s, "args"), "path")), "/dev/disk/by-id/wwn-0x5000");
        cr_assert_eq(json_object_get_int(member(member(s, "args"), "writes")), STEPS_DISK_SPEED_WRITES);
        cr_assert(strncmp(json_object_get_string(member(s, "step_id")), "installation-disk-speed-check-", 30) == 0);
        cr_assert_str_eq(r.post_step_action, "continue");
        steps_reply_free(&r);
        /* No disk chosen: no path, the agent says it has nothing to measure
         * (or measures its --install-target). */
        in.installation_disk = NULL;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        s = json_object_array_get_idx(r.instructions, 0);
        cr_assert_not(json_object_object_get_ex(member(s, "args"), "path", NULL));
        steps_reply_free(&r);
        /* Measured: nothing more while the others finish. */
        in.disk_speed_measured = true;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0);
        steps_reply_free(&r);
        /* Never outside preparing. */
        for (int st = 0; st < _HOST_STATUS_MAX; st++) {
                if (st == PR)
                        continue;
                in.status = (enum host_status) st;
                in.disk_speed_measured = false;
                cr_assert_eq(steps_for_host(&in, &r), 0);
                types(&r, t, sizeof t);
                cr_assert_null(strstr(t, "disk-speed"), "%s: %s", name(st), t);
                steps_reply_free(&r);
        }
        json_object *a = steps_disk_speed_args("/dev/sda", 0);
        cr_assert_str_eq(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                         "{\"writes\":50,\"path\":\"/dev/sda\"}");
        json_object_put(a);
}

/* The install step: the same id on every poll for a revision, mode install
 * while installing, mode apply for an installed host behind the cluster. */
Test(steps, install_and_apply) {
        const char *cid = "5e7c0a52-6d0b-4d8e-9a3e-1f2b3c4d5e6f";
        struct steps_input in = { .status = IS, .cluster_id = cid, .payload_revision = 1, .role = ROLE_MASTER,
                                  .installation_disk = "/dev/disk/by-id/wwn-0x5000", .seed = 5,
                                  .inventory_received = true };
        struct steps_reply r;
        char t[256];

        for (int i = 0; i < 2; i++) {
                in.status = i ? IP : IS;
                in.seed = (uint64_t) i * 77;
                cr_assert_eq(steps_for_host(&in, &r), 0);
                types(&r, t, sizeof t);
                cr_assert_str_eq(t, "install", "%s", name(in.status));
                json_object *st = json_object_array_get_idx(r.instructions, 0);
                cr_assert_str_eq(json_object_get_string(member(st, "step_id")), "install-1");
                cr_assert_str_eq(json_object_to_json_string_ext(member(st, "args"), JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE),
                                 "{\"mode\":\"install\",\"cluster_id\":\"5e7c0a52-6d0b-4d8e-9a3e-1f2b3c4d5e6f\","
                                 "\"revision\":1,\"payload_url\":\"/api/v2/clusters/5e7c0a52-6d0b-4d8e-9a3e-1f2b3c4d5e6f"
                                 "/payload/1\",\"role\":\"master\",\"installation_disk\":\"/dev/disk/by-id/wwn-0x5000\"}");
                cr_assert_str_eq(r.post_step_action, "continue");
                steps_reply_free(&r);
        }
        /* No payload yet, or preparing (measured): nothing. */
        in.payload_revision = 0;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0);
        steps_reply_free(&r);
        in.payload_revision = 1;
        in.status = PR;
        in.disk_speed_measured = true;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0);
        steps_reply_free(&r);
        in.disk_speed_measured = false;
        /* An auto role goes as worker; no disk, no member. */
        in.status = IS;
        in.role = ROLE_AUTO;
        in.installation_disk = NULL;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        json_object *args = member(json_object_array_get_idx(r.instructions, 0), "args");
        cr_assert_str_eq(json_object_get_string(member(args, "role")), "worker");
        cr_assert_not(json_object_object_get_ex(args, "installation_disk", NULL));
        steps_reply_free(&r);
        /* Written, waiting for the installed system: no install step again. */
        in.status = IP;
        in.install_written = true;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0, "the install is not handed out again");
        steps_reply_free(&r);
        in.install_written = false;

        /* Installed: apply only while behind. */
        in.status = ID;
        in.applied_revision = 1;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0, "up to date");
        steps_reply_free(&r);
        in.payload_revision = 3;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "install");
        json_object *st = json_object_array_get_idx(r.instructions, 0);
        cr_assert_str_eq(json_object_get_string(member(st, "step_id")), "apply-3");
        cr_assert_str_eq(json_object_to_json_string_ext(member(st, "args"), JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE),
                         "{\"mode\":\"apply\",\"cluster_id\":\"5e7c0a52-6d0b-4d8e-9a3e-1f2b3c4d5e6f\",\"revision\":3,"
                         "\"payload_url\":\"/api/v2/clusters/5e7c0a52-6d0b-4d8e-9a3e-1f2b3c4d5e6f/payload/3\"}");
        steps_reply_free(&r);
        /* Error hosts get nothing. */
        in.status = ER;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0);
        steps_reply_free(&r);
}

/* The admin's asks: logs-gather from any agent that polls (not one told to
 * register again), reclaim from an installed host's node agent only, and
 * then no apply. */
Test(steps, gather_logs_and_reclaim) {
        const char *cid = "5e7c0a52-6d0b-4d8e-9a3e-1f2b3c4d5e6f";
        struct steps_input in = { .status = KU, .inventory_received = true, .poll_count = 3, .gather_logs = true,
                                  .logs_max_bytes = 65536 };
        struct steps_reply r;
        char t[256];
        const enum host_status any[] = { KU, DI, PR, IP, ID, ER };
        for (size_t i = 0; i < sizeof any / sizeof *any; i++) {
                in.status = any[i];
                cr_assert_eq(steps_for_host(&in, &r), 0);
                types(&r, t, sizeof t);
                cr_assert(strstr(t, "logs-gather"), "%s: %s", name(in.status), t);
                steps_reply_free(&r);
        }
        in.status = KU;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        json_object *st = json_object_array_get_idx(r.instructions, 0);
        cr_assert_str_eq(json_object_get_string(member(st, "step_id")), "logs-gather");
        cr_assert_str_eq(json_object_to_json_string_ext(member(st, "args"), JSON_C_TO_STRING_PLAIN), "{\"max_bytes\":65536}");
        steps_reply_free(&r);
        in.must_reregister = true;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        cr_assert_eq(json_object_array_length(r.instructions), 0, "exit comes first");
        steps_reply_free(&r);
        in.must_reregister = false;
        in.gather_logs = false;

        /* Reclaim: installed only, with the paths and command line, and no
         * apply of a newer revision meanwhile. */
        in.cluster_id = cid;
        in.payload_revision = 3;
        in.applied_revision = 1;
        in.reclaim = true;
        in.reclaim_wipe = true;
        in.reclaim_kernel_url = "/api/v2/infra-envs/x/downloads/pxe/vmlinuz";
        in.reclaim_initrd_url = "/api/v2/infra-envs/x/downloads/pxe/initrd";
        in.reclaim_cmdline = "console=ttyS0 quiet";
        in.installation_disk = "/dev/disk/by-id/wwn-0x5000";
        in.status = ID;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "reclaim");
        st = json_object_array_get_idx(r.instructions, 0);
        cr_assert_str_eq(json_object_get_string(member(st, "step_id")), "reclaim");
        cr_assert_str_eq(json_object_to_json_string_ext(member(st, "args"), JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE),
                         "{\"kernel_url\":\"/api/v2/infra-envs/x/downloads/pxe/vmlinuz\","
                         "\"initrd_url\":\"/api/v2/infra-envs/x/downloads/pxe/initrd\",\"cmdline\":\"console=ttyS0 quiet\","
                         "\"wipe\":true,\"installation_disk\":\"/dev/disk/by-id/wwn-0x5000\"}");
        steps_reply_free(&r);
        in.status = IP;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "install", "not installed: no reclaim");
        steps_reply_free(&r);
        in.status = ID;
        in.reclaim_cmdline = NULL;
        cr_assert_eq(steps_for_host(&in, &r), 0);
        types(&r, t, sizeof t);
        cr_assert_str_eq(t, "install", "nothing to boot into: no reclaim");
        steps_reply_free(&r);
}

Test(steps, reply_json) {
        struct steps_input in = { .status = DU, .interval_s = 30, .seed = 1 };
        struct steps_reply r;
        json_object *o;

        cr_assert_eq(steps_for_host(&in, &r), 0);
        o = steps_reply_to_json(&r);
        steps_reply_free(&r);
        cr_assert_not_null(o);
        cr_assert_eq(json_object_get_int(member(o, "next_instruction_seconds")), 30);
        cr_assert_str_eq(json_object_get_string(member(o, "post_step_action")), "continue");
        cr_assert_eq(json_object_array_length(member(o, "instructions")), 1);
        json_object_put(o);
}

Test(steps, ids) {
        char a[STEPS_ID_MAX], b[STEPS_ID_MAX], c[STEPS_ID_MAX];
        steps_make_id(STEP_INSTALLATION_DISK_SPEED_CHECK, UINT64_MAX, 7, a);
        cr_assert_eq(strlen(a), strlen("installation-disk-speed-check-") + 8);
        steps_make_id(STEP_INVENTORY, 1, 0, a);
        steps_make_id(STEP_INVENTORY, 1, 1, b);
        steps_make_id(STEP_INVENTORY, 2, 0, c);
        cr_assert_str_neq(a, b);
        cr_assert_str_neq(a, c);
        steps_make_id(STEP_INVENTORY, 1, 0, b);
        cr_assert_str_eq(a, b, "deterministic for a seed");
}

Test(steps, host_addresses) {
        struct inventory inv;
        struct strv out = { 0 };
        char path[4096], err[256], *text;
        FILE *fp;
        long n;

        snprintf(path, sizeof path, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        fp = fopen(path, "re");
        cr_assert_not_null(fp);
        fseek(fp, 0, SEEK_END);
        n = ftell(fp);
        rewind(fp);
        text = calloc(1, (size_t) n + 1);
        cr_assert_eq(fread(text, 1, (size_t) n, fp), (size_t) n);
        fclose(fp);
        cr_assert_eq(inventory_from_string(text, &inv, err, sizeof err), 0, "%s", err);
        free(text);

        cr_assert_eq(steps_host_addresses(&inv, NULL, &out), 0);
        cr_assert_eq(out.n, 6);
        cr_assert_str_eq(out.v[0], "203.0.113.10");
        cr_assert_str_eq(out.v[1], "192.0.2.10");
        cr_assert_str_eq(out.v[2], "198.51.100.10");
        cr_assert_str_eq(out.v[3], "2001:db8:200::10");
        strv_free(&out);
        memset(&out, 0, sizeof out);
        cr_assert_eq(steps_host_addresses(&inv, "192.0.2.0/24", &out), 0);
        cr_assert_eq(out.n, 1);
        cr_assert_str_eq(out.v[0], "192.0.2.10");
        strv_free(&out);
        memset(&out, 0, sizeof out);
        cr_assert_eq(steps_host_addresses(&inv, "2001:db8::/32", &out), 0);
        cr_assert_eq(out.n, 3);
        strv_free(&out);
        cr_assert_eq(steps_host_addresses(NULL, NULL, &out), -EINVAL);
        inventory_free(&inv);
}

Test(steps, caps_match_the_agent) {
        static const char *addrs[20];
        static struct step_peer peers[1100];
        static char names[1100][40];
        const char *sources[20];
        char longsrc[300];
        json_object *a, *list;

        for (size_t i = 0; i < N(addrs); i++)
                addrs[i] = "192.0.2.1";
        for (size_t i = 0; i < N(peers); i++) {
                snprintf(names[i], sizeof names[i], "peer-%zu", i);
                peers[i] = (struct step_peer) { names[i], addrs, N(addrs) };
        }
        a = steps_connectivity_args(peers, N(peers), true);
        list = member(a, "peers");
        cr_assert(json_object_get_boolean(member(a, "mtu_probe")));
        cr_assert_eq(json_object_array_length(list), STEPS_MAX_PEERS);
        cr_assert_eq(json_object_array_length(member(json_object_array_get_idx(list, 0), "addresses")),
                     STEPS_MAX_PEER_ADDRESSES);
        json_object_put(a);
        a = steps_connectivity_args(peers, 1, false);
        cr_assert(json_object_is_type(member(a, "mtu_probe"), json_type_boolean));
        cr_assert_not(json_object_get_boolean(member(a, "mtu_probe")), "[network] mtu_check = false");
        json_object_put(a);

        memset(longsrc, 'n', sizeof longsrc - 1);
        longsrc[sizeof longsrc - 1] = '\0';
        sources[0] = longsrc;
        for (size_t i = 1; i < N(sources); i++)
                sources[i] = "pool.ntp.org";
        a = steps_ntp_args(sources, N(sources), NULL, 0);
        cr_assert_eq(json_object_array_length(member(a, "ntp_sources")), STEPS_MAX_NTP_SOURCES);
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(member(a, "ntp_sources"), 0)), "pool.ntp.org");
        cr_assert_not(json_object_object_get_ex(a, "coordinator_date", NULL));
        cr_assert_not(json_object_object_get_ex(a, "max_offset_ms", NULL));
        json_object_put(a);
}
