/* Operand cleanup's state machine (coordinator/domain/opcleanup.h, issue
 * 17), pure: uninstall with and without cleanup, operands gone only when
 * every host reported them gone, Done when none is left, the stall said
 * once with the hosts that lag, abort at each point, the status's cap of
 * names per kind, and the state through JSON. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-cleanup.h"
#include "domain/opcleanup.h"
#include "testutil.h"

static const struct cleanup_operand ops[] = {
        { "etcd.database.coreos.com", "EtcdCluster", "db", "main", true },
        { "etcd.database.coreos.com", "EtcdCluster", "db", "legacy", false },
        { "db.example.com", "Database", "db", "orders", true },
};
#define N_OPS (sizeof ops / sizeof *ops)
static const char *const hosts[] = { "h1", "h2" };

Test(opcleanup, without_cleanup_or_operands_the_operator_goes_at_once) {
        struct cleanup_state st = { 0 };
        cr_assert_eq(cleanup_start(&st, false, ops, N_OPS, 100), 0);
        cr_expect_eq(st.phase, CLEANUP_DONE);
        cr_expect_eq(st.n, 0, "operands stay: nothing pending");
        cr_expect_null(cleanup_message(&st));
        cr_expect_eq(cleanup_start(&st, true, ops, N_OPS, 100), -EALREADY, "asked once");
        cleanup_state_free(&st);
        cr_assert_eq(cleanup_start(&st, true, NULL, 0, 100), 0);
        cr_expect_eq(st.phase, CLEANUP_DONE);
        cleanup_state_free(&st);
}

Test(opcleanup, gone_when_every_host_reported_then_done) {
        struct cleanup_state st = { 0 };
        struct cleanup_step step;
        cr_assert_eq(cleanup_start(&st, true, ops, N_OPS, 100), 0);
        cr_assert_eq(st.phase, CLEANUP_WAITING);
        cr_expect_eq(st.total, 3);
        char *m = cleanup_message(&st);
        cr_expect_str_eq(m, "waiting for operator to finish cleanup for 3 CRs");
        free(m);
        /* h1 applied the revision without the managed ones, still holds legacy. */
        cr_assert_eq(cleanup_report(&st, "h1", &ops[1], 1), 2);
        cr_assert_eq(cleanup_report(&st, "h1", &ops[1], 1), 0, "a repeat changes nothing");
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 110, 600, &step), 0);
        cr_expect_not(step.done_now);
        cr_expect_eq(st.n, 3, "h2 has reported nothing");
        cr_expect_eq(step.lagging.n, 2);
        cleanup_step_free(&step);
        cr_assert_eq(cleanup_report(&st, "h2", &ops[1], 1), 2);
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 120, 600, &step), 0);
        cr_expect_eq(st.n, 1, "legacy is left");
        cr_expect_str_eq(st.items[0].name, "legacy");
        m = cleanup_message(&st);
        cr_expect_str_eq(m, "waiting for operator to finish cleanup for 1 CRs");
        free(m);
        cleanup_step_free(&step);
        cr_assert_eq(cleanup_report(&st, "h1", NULL, 0), 1);
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 130, 600, &step), 0);
        cr_expect_not(step.done_now);
        cr_expect_eq(step.lagging.n, 1);
        cr_expect_str_eq(step.lagging.v[0], "h2");
        cleanup_step_free(&step);
        cr_assert_eq(cleanup_report(&st, "h2", NULL, 0), 1);
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 140, 600, &step), 0);
        cr_expect(step.done_now);
        cr_expect_eq(st.phase, CLEANUP_DONE);
        cr_expect_not(st.aborted);
        cleanup_step_free(&step);
        cr_expect_eq(cleanup_report(&st, "h1", NULL, 0), 0, "nothing after Done");
        cleanup_state_free(&st);
}

Test(opcleanup, a_stall_is_said_once_with_the_lagging_hosts) {
        struct cleanup_state st = { 0 };
        struct cleanup_step step;
        cr_assert_eq(cleanup_start(&st, true, ops, N_OPS, 100), 0);
        cr_assert_eq(cleanup_report(&st, "h1", NULL, 0), 3);
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 699, 600, &step), 0);
        cr_expect_not(step.stalled_now, "not before the timeout");
        cleanup_step_free(&step);
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 700, 600, &step), 0);
        cr_expect(step.stalled_now);
        cr_expect(st.stalled);
        cr_assert_eq(step.lagging.n, 1);
        cr_expect_str_eq(step.lagging.v[0], "h2");
        cleanup_step_free(&step);
        /* The status names the host that lags. */
        _cleanup_json_ json_object *status = cleanup_status_json(&st);
        cr_assert_not_null(status);
        cr_expect_str_eq(json_object_to_json_string(json_object_object_get(status, "lagging_hosts")), "[ \"h2\" ]");
        cr_expect_eq(json_object_get_int64(json_object_object_get(status, "lagging_count")), 1);
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 800, 600, &step), 0);
        cr_expect_not(step.stalled_now, "once");
        cleanup_step_free(&step);
        /* The host comes back: done. */
        cr_assert_eq(cleanup_report(&st, "h2", NULL, 0), 3);
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 810, 600, &step), 0);
        cr_expect(step.done_now);
        cleanup_step_free(&step);
        cleanup_state_free(&st);
        /* No host at all: nothing can report, it stays pending. */
        cr_assert_eq(cleanup_start(&st, true, ops, 1, 0), 0);
        cr_assert_eq(cleanup_advance(&st, NULL, 0, 10, 600, &step), 0);
        cr_expect_eq(st.n, 1);
        cleanup_step_free(&step);
        cleanup_state_free(&st);
}

Test(opcleanup, abort_at_each_point) {
        struct cleanup_state st = { 0 };
        struct cleanup_step step;
        cr_expect_eq(cleanup_abort(&st), 0, "nothing to abort before an uninstall");
        for (int at = 0; at < 3; at++) {
                cr_assert_eq(cleanup_start(&st, true, ops, N_OPS, 100), 0);
                if (at >= 1)
                        cr_assert_eq(cleanup_report(&st, "h1", NULL, 0), 3);
                if (at >= 2) {
                        cr_assert_eq(cleanup_advance(&st, hosts, 2, 900, 600, &step), 0);
                        cr_expect(step.stalled_now);
                        cleanup_step_free(&step);
                }
                cr_assert_eq(cleanup_abort(&st), 1, "at %d", at);
                cr_expect_eq(st.phase, CLEANUP_DONE);
                cr_expect(st.aborted);
                cr_expect_eq(st.n, 0);
                cr_expect_eq(cleanup_abort(&st), 0, "once");
                cleanup_state_free(&st);
        }
        cr_assert_eq(cleanup_start(&st, false, ops, N_OPS, 100), 0);
        cr_expect_eq(cleanup_abort(&st), 0, "an uninstall without cleanup has nothing to abort");
        cleanup_state_free(&st);
}

Test(opcleanup, managed_and_found_of_the_same_object_is_one) {
        struct cleanup_state st = { 0 };
        struct cleanup_operand twice[] = { ops[0], ops[0] };
        twice[1].managed = false;
        cr_assert_eq(cleanup_start(&st, true, twice, 2, 0), 0);
        cr_expect_eq(st.n, 1);
        cleanup_state_free(&st);
}

Test(opcleanup, the_status_caps_names_per_kind_and_counts_all) {
        struct cleanup_operand many[25];
        char names[25][16];
        for (int i = 0; i < 25; i++) {
                snprintf(names[i], sizeof names[i], "db-%02d", i);
                many[i] = (struct cleanup_operand) { "db.example.com", i < 24 ? "Database" : "Backup",
                                                     i % 2 ? "db" : NULL, names[i], true };
        }
        struct cleanup_state st = { 0 };
        cr_assert_eq(cleanup_start(&st, true, many, 25, 0), 0);
        _cleanup_json_ json_object *s = cleanup_status_json(&st);
        cr_assert_not_null(s);
        cr_expect_str_eq(tu_jstr(s, "phase"), "Cleanup");
        cr_expect_eq(json_object_get_int64(tu_json_get(s, "pending_count")), 25);
        json_object *k = tu_json_get(s, "pending_deletion");
        cr_assert_eq(json_object_array_length(k), 2);
        cr_expect_str_eq(tu_jstr(k, "0.kind"), "Database");
        cr_expect_eq(json_object_get_int64(tu_json_get(k, "0.count")), 24);
        cr_expect_eq(json_object_array_length(tu_json_get(k, "0.names")), CLEANUP_NAMES_PER_KIND);
        cr_expect_str_eq(tu_jstr(k, "0.names.0"), "db-00", "cluster-scoped: the name alone");
        cr_expect_str_eq(tu_jstr(k, "0.names.1"), "db/db-01");
        cr_expect_eq(json_object_get_int64(tu_json_get(k, "1.count")), 1);
        cleanup_state_free(&st);
        struct cleanup_operand *huge = calloc(CLEANUP_MAX_ITEMS + 1, sizeof *huge);
        for (size_t i = 0; i <= CLEANUP_MAX_ITEMS; i++)
                huge[i] = ops[0];
        cr_expect_eq(cleanup_start(&st, true, huge, CLEANUP_MAX_ITEMS + 1, 0), -E2BIG);
        free(huge);
        cleanup_state_free(&st);
}

Test(opcleanup, the_state_round_trips_through_json) {
        struct cleanup_state st = { 0 }, back;
        cr_assert_eq(cleanup_start(&st, true, ops, N_OPS, 100), 0);
        cr_assert_eq(cleanup_report(&st, "h1", &ops[1], 1), 2);
        st.revision = 7;
        struct cleanup_step step;
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 110, 600, &step), 0);
        cleanup_step_free(&step);
        _cleanup_json_ json_object *j = cleanup_to_json(&st);
        cr_assert_eq(cleanup_from_json(j, &back), 0);
        cr_expect_eq(back.phase, CLEANUP_WAITING);
        cr_expect_eq(back.n, 3);
        cr_expect_eq(back.total, 3);
        cr_expect_eq(back.started_s, 100);
        cr_expect_eq(back.revision, 7);
        cr_assert_eq(back.lagging.n, 2);
        cr_expect_str_eq(back.lagging.v[1], "h2");
        cr_expect_str_eq(back.items[0].namespace, "db");
        cr_expect(back.items[0].managed);
        cr_expect_not(back.items[1].managed);
        cr_expect(strv_contains(&back.items[0].gone_on, "h1"));
        cr_expect_not(strv_contains(&back.items[1].gone_on, "h1"));
        _cleanup_json_ json_object *j2 = cleanup_to_json(&back);
        cr_expect(json_object_equal(j, j2));
        cleanup_state_free(&back);
        static const char *const bad[] = { "[]", "{}", "{\"phase\":\"Sleeping\",\"items\":[]}",
                                           "{\"phase\":\"Cleanup\",\"items\":[{\"kind\":\"K\"}]}",
                                           "{\"phase\":\"Cleanup\",\"items\":{}}" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                json_object *o = json_tokener_parse(bad[i]);
                cr_expect_eq(cleanup_from_json(o, &back), -EINVAL, "%s", bad[i]);
                cleanup_state_free(&back);
                json_object_put(o);
        }
        cleanup_state_free(&st);
}

Test(opcleanup, an_upgrade_keeps_the_setting_and_reports_kinds_no_longer_owned) {
        /* An upgrade is not an uninstall: a state that was never started
         * stays None (nothing to delete), whatever the setting. */
        struct cleanup_state st = { 0 };
        struct cleanup_step step;
        cr_assert_eq(cleanup_advance(&st, hosts, 2, 10, 0, &step), 0);
        cr_expect_eq(st.phase, CLEANUP_NONE);
        cr_expect_not(step.done_now);
        cr_expect_not(step.stalled_now);
        cleanup_step_free(&step);
        cr_expect_eq(cleanup_report(&st, "h1", NULL, 0), 0);
        cr_expect_null(cleanup_message(&st));

        static const struct cleanup_kind before[] = {
                { "etcd.database.coreos.com", "EtcdCluster" },
                { "etcd.database.coreos.com", "EtcdBackup" },
                { "", "ConfigMap" },
        };
        static const struct cleanup_kind after[] = {
                { "etcd.database.coreos.com", "EtcdCluster" },
                { "etcd.database.coreos.com", "EtcdRestore" },
        };
        _cleanup_strv_ struct strv dropped = { 0 };
        cr_assert_eq(cleanup_kinds_dropped(before, 3, after, 2, &dropped), 0);
        cr_assert_eq(dropped.n, 2);
        cr_expect_str_eq(dropped.v[0], "EtcdBackup.etcd.database.coreos.com");
        cr_expect_str_eq(dropped.v[1], "ConfigMap", "the core group has no suffix");
        _cleanup_strv_ struct strv none = { 0 };
        cr_assert_eq(cleanup_kinds_dropped(after, 2, after, 2, &none), 0);
        cr_expect_eq(none.n, 0, "the same kinds: nothing to report");
        /* Reported once per kind. */
        static const struct cleanup_kind twice[] = { { "g", "K" }, { "g", "K" } };
        _cleanup_strv_ struct strv once = { 0 };
        cr_assert_eq(cleanup_kinds_dropped(twice, 2, NULL, 0, &once), 0);
        cr_expect_eq(once.n, 1);
}
