/* The service layer without a socket (issue 14): a struct svc over a real
 * SQLite file and a real key, its services called directly. Events reach
 * the store and the sink; tokens are signed and recorded; a reload keeps
 * what cannot change and leaves old snapshots readable; the monitor's pass
 * disconnects a silent host; starting an install refuses what is not ready
 * in words; a revoked token no longer speaks for anyone; new hosts are
 * rate-limited and capped per infra-env, known ones never. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypto.h"
#include "domain/ratelimit.h"
#include "svc/install.h" /* not the agent's install.h */
#include "store/store.h"
#include "storeutil.h"
#include "labelsel.h"
#include "svc/agents.h"
#include "svc/clusters.h"
#include "svc/infra_envs.h"
#include "svc/svc.h"
#include "svc/tokens.h"
#include "testutil.h"

static char *dir;
static struct store *st;
static struct crypto_key *key;
static struct svc sv;
static struct muster_config cfg;

/* What the sink was handed. */
static int sunk[_EVENT_SEVERITY_MAX];
static char last_sunk[1024];

static void sink(void *ctx, const struct event *e) {
        cr_assert_eq(ctx, &sv, "the sink's context comes back");
        sunk[e->severity]++;
        snprintf(last_sunk, sizeof last_sunk, "%s", e->message);
}

static void setup(void) {
        config_defaults(&cfg);
        snprintf(cfg.listen, sizeof cfg.listen, "127.0.0.1:1");
        tu_svc_open(&sv, &st, &key, &cfg, &dir);
        sv.sink = (struct svc_event_sink) { sink, &sv };
        memset(sunk, 0, sizeof sunk);
        last_sunk[0] = '\0';
}

static void teardown(void) {
        tu_svc_close(&sv, st, key, dir);
}

TestSuite(svc, .init = setup, .fini = teardown);

static char *mk_infra_env(const char *owner) {
        return tu_store_infra_env(st, owner, "rack-1");
}

Test(svc, events_reach_the_store_and_the_sink) {
        char *ie = mk_infra_env("admin");
        svc_event(&sv, EVENT_WARNING, EVENT_CAT_USER, ie, NULL, NULL, "rack %d is %s", 1, "cold");
        svc_event(&sv, EVENT_INFO, EVENT_CAT_SYSTEM, NULL, NULL, NULL, "plain");
        struct event_filter f = { .infra_env_id = ie };
        struct event_list l = { 0 };
        cr_assert_eq(store_event_list(st, &f, &l), 0);
        cr_assert_eq(l.n, 1, "the infra-env's event, not the other");
        cr_assert_str_eq(l.v[0].message, "rack 1 is cold");
        cr_assert_eq(l.v[0].severity, EVENT_WARNING);
        event_list_free(&l);
        cr_assert_eq(sunk[EVENT_WARNING], 1);
        cr_assert_eq(sunk[EVENT_INFO], 1);
        cr_assert_str_eq(last_sunk, "plain");
        free(ie);
}

Test(svc, tokens_are_signed_and_recorded) {
        char *token = NULL;
        struct token_record rec;
        cr_assert_eq(svc_token_issue(&sv, ROLE_CLUSTER_CREATOR, "alice", 3600, &token, &rec), 0);
        struct principal p;
        cr_assert_eq(auth_check(key, token, (int64_t) time(NULL), &p), 0, "signed with the services' key");
        cr_assert_str_eq(p.owner, "alice");
        cr_assert_eq(p.role, ROLE_CLUSTER_CREATOR);
        cr_assert_str_eq(p.jti, rec.id);
        cr_assert_eq(store_token_check(st, rec.id), 0, "the store knows it");
        cr_assert_str_eq(rec.role, "cluster-creator");
        free(token);
        token_record_free(&rec);

        token = NULL;
        cr_assert_eq(svc_token_issue(&sv, ROLE_INFRA_ADMIN, "alice", 3600, &token, &rec), -EPERM,
                     "an owner name belongs to one role");
        cr_assert_null(token);
        cr_assert_eq(svc_token_issue(&sv, ROLE_INFRA_ADMIN, "bob", 0, &token, &rec), -EINVAL, "ttl 0");
        cr_assert_null(token);
}

Test(svc, a_reload_keeps_what_cannot_change) {
        const struct muster_config *before = svc_cfg(&sv);
        int64_t interval = before->monitor_interval_s;
        struct muster_config next = cfg;
        snprintf(next.listen, sizeof next.listen, "127.0.0.1:2");
        next.monitor_interval_s = interval + 7;
        next.max_page_size = cfg.max_page_size + 1;
        cr_assert_eq(svc_config_publish(&sv, &next), 2, "monitor_interval and max_page_size changed");
        cr_assert_str_eq(svc_cfg(&sv)->listen, "127.0.0.1:1", "listen takes a restart");
        cr_assert_eq(svc_cfg(&sv)->monitor_interval_s, interval + 7);
        cr_assert_eq(before->monitor_interval_s, interval, "a reader's old snapshot stays as it was");
        cr_assert_eq(svc_config_publish(&sv, &next), 0, "nothing changed the second time");
}

Test(svc, the_monitor_disconnects_a_silent_host) {
        char *ie = mk_infra_env("admin");
        const char *quiet = "00000000-0000-4000-8000-000000000001", *alive = "00000000-0000-4000-8000-000000000002";
        cr_assert_eq(tu_store_host_register(st, ie, quiet, "test", NULL), 1);
        cr_assert_eq(tu_store_host_register(st, ie, alive, "test", NULL), 1);
        cr_assert_eq(store_host_checkin(st, ie, quiet, "2020-01-01T00:00:00Z"), 0);
        cr_assert_eq(svc_monitor_pass(&sv), 1, "one host went silent");
        struct host h;
        cr_assert_eq(store_host_get(st, ie, quiet, &h), 0);
        cr_assert_eq(h.status, HOST_DISCONNECTED_UNBOUND);
        host_free(&h);
        cr_assert_eq(store_host_get(st, ie, alive, &h), 0);
        cr_assert_neq(h.status, HOST_DISCONNECTED_UNBOUND, "the other checked in just now");
        host_free(&h);
        cr_assert_eq(sunk[EVENT_WARNING], 1, "the event went up through the sink");
        cr_assert(strstr(last_sunk, "is disconnected"), "%s", last_sunk);
        cr_assert_eq(svc_monitor_pass(&sv), 0, "nothing more to do");
        free(ie);
}

Test(svc, an_install_that_cannot_start_says_why) {
        char err[512] = "";
        struct cluster c;
        cluster_init(&c);
        c.name = strdup("c1");
        c.owner = strdup("alice");
        cr_assert_eq(store_cluster_create(st, &c), 0);
        cr_assert_eq(svc_install_start_cluster(&sv, c.id, "alice", err, sizeof err), -EBUSY);
        cr_assert(strstr(err, "not ready to install"), "%s", err);
        struct cluster now;
        cr_assert_eq(store_cluster_get(st, c.id, &now), 0);
        cr_assert_neq(now.status, CLUSTER_PREPARING_FOR_INSTALLATION, "nothing moved");
        cluster_free(&now);
        cluster_free(&c);
        err[0] = '\0';
        cr_assert_eq(svc_install_start_cluster(&sv, "00000000-0000-4000-8000-00000000dead", "alice", err, sizeof err),
                     -ENOENT);
        cr_assert(strstr(err, "cannot be read"), "%s", err);
}

Test(svc, a_revoked_token_speaks_for_no_one) {
        char *token = NULL, err[256] = "";
        struct token_record rec, after;
        cr_assert_eq(svc_token_create(&sv, ROLE_INFRA_ADMIN, "carol", 3600, "admin", &token, &rec, err, sizeof err), 0);
        struct principal p;
        cr_assert_eq(svc_principal(&sv, token, &p, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(p.owner, "carol");
        cr_assert_eq(svc_token_revoke(&sv, rec.id, "admin", &after), 0);
        cr_assert_not_null(after.revoked_at);
        cr_assert_eq(svc_principal(&sv, token, &p, err, sizeof err), -EACCES, "the cache forgot it at once");
        cr_assert_str_eq(err, "the token was revoked");
        cr_assert_eq(svc_principal(&sv, "not-a-token", &p, err, sizeof err), -EACCES);
        cr_assert_str_eq(err, "the token is not valid");
        cr_assert_eq(sunk[EVENT_INFO] + sunk[EVENT_WARNING], 2, "an event for each: issued, revoked");
        free(token);
        token_record_free(&rec);
        token_record_free(&after);
}

/* An agent's token after a rotation is revoked; after its infra-env was
 * deleted, the reason says so (what the agent logs when it exits). */
Test(svc, an_agent_token_of_a_deleted_infra_env_says_so) {
        struct infra_env ie;
        infra_env_init(&ie);
        ie.name = strdup("rack-gone");
        char *t1 = NULL, *t2 = NULL, err[256] = "";
        cr_assert_eq(svc_infra_env_create(&sv, &ie, "admin", &t1, err, sizeof err), 0, "%s", err);
        struct principal p;
        cr_assert_eq(svc_principal(&sv, t1, &p, err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_infra_env_rotate_token(&sv, &ie, &t2, err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_principal(&sv, t1, &p, err, sizeof err), -EACCES);
        cr_assert_str_eq(err, "the token was revoked");
        cr_assert_eq(svc_principal(&sv, t2, &p, err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_infra_env_delete(&sv, &ie, "admin", err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_principal(&sv, t2, &p, err, sizeof err), -EACCES);
        cr_assert(strstr(err, "the infra-env this token was issued for was deleted"), "%s", err);
        free(t1);
        free(t2);
        infra_env_free(&ie);
}

Test(svc, new_hosts_are_limited_known_ones_never) {
        struct muster_config next = cfg;
        next.infra_env_register_burst = 2;
        next.infra_env_register_interval_ms = 3600 * 1000;
        next.infra_env_max_hosts = 2;
        cr_assert_geq(svc_config_publish(&sv, &next), 1);
        char *id = mk_infra_env("admin");
        struct infra_env ie;
        cr_assert_eq(store_infra_env_get(st, id, &ie), 0);
        const char *h[3] = { "00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a2",
                             "00000000-0000-4000-8000-0000000000a3" };
        struct host out;
        char err[512] = "";
        int64_t retry = 0;
        for (int i = 0; i < 2; i++) {
                cr_assert_eq(svc_agent_register(&sv, &ie, h[i], "test", &out, &retry, err, sizeof err), 1, "%s", err);
                cr_assert_str_eq(out.id, h[i]);
                host_free(&out);
        }
        cr_assert_eq(svc_agent_register(&sv, &ie, h[2], "test", &out, &retry, err, sizeof err), -EUSERS,
                     "the bucket of two is empty");
        host_free(&out);
        cr_assert(retry >= 3599 && retry <= 3600, "retry after %lld s", (long long) retry);
        cr_assert(strstr(err, "registers new hosts too fast"), "%s", err);
        cr_assert_eq(svc_agent_register(&sv, &ie, h[0], "test", &out, &retry, err, sizeof err), 0,
                     "a known host registers again whatever the rate");
        host_free(&out);

        /* The cap: a fresh bucket, still two hosts at most. */
        next.infra_env_register_burst = 10;
        cr_assert_geq(svc_config_publish(&sv, &next), 1);
        ratelimit_forget(sv.registrations, ie.id);
        err[0] = '\0';
        cr_assert_eq(svc_agent_register(&sv, &ie, h[2], "test", &out, &retry, err, sizeof err), -EDQUOT);
        host_free(&out);
        cr_assert(strstr(err, "already holds 2 hosts, its cap ([infraenv] max_hosts)"), "%s", err);
        infra_env_free(&ie);
        free(id);
}

/* An inventory goes to the store with the verdict of its validations and
 * their events in one write; a host whose status changed after it was read keeps that status
 * (the inventory alone is written, then the host validated as stored). */
Test(svc, an_inventory_is_stored_with_its_verdict_in_one_write) {
        char *id = mk_infra_env("admin");
        struct infra_env ie;
        cr_assert_eq(store_infra_env_get(st, id, &ie), 0);
        const char *hid = "00000000-0000-4000-8000-0000000000b1", *stale = "00000000-0000-4000-8000-0000000000b2";
        struct host h;
        char err[512] = "";
        int64_t retry = 0;
        cr_assert_eq(svc_agent_register(&sv, &ie, hid, "test", &h, &retry, err, sizeof err), 1, "%s", err);
        host_free(&h);
        cr_assert_eq(svc_agent_register(&sv, &ie, stale, "test", &h, &retry, err, sizeof err), 1, "%s", err);
        host_free(&h);
        size_t len;
        char *text = tu_read_file(MUSTER_FIXTURES_DIR "/qemu-q35/expected.json", &len);
        cr_assert_not_null(text);

        cr_assert_eq(store_host_get(st, id, hid, &h), 0);
        cr_assert_eq(h.status, HOST_DISCOVERING_UNBOUND);
        struct store_latency before, after;
        store_write_latency(st, &before);
        int events_before = sunk[EVENT_INFO] + sunk[EVENT_WARNING];
        cr_assert_eq(svc_agent_inventory(&sv, &ie, &h, text, len, err, sizeof err), 0, "%s", err);
        store_write_latency(st, &after);
        int events = sunk[EVENT_INFO] + sunk[EVENT_WARNING] - events_before;
        cr_assert_gt(events, 0, "at least the change of status");
        cr_assert_eq(after.count - before.count, 1, "%llu writes for one inventory and its %d events",
                     (unsigned long long) (after.count - before.count), events);
        struct event_filter ef = { .host_id = hid };
        struct event_list el = { 0 };
        cr_assert_eq(store_event_list(st, &ef, &el), 0);
        cr_assert_eq(el.n, (size_t) events + 1, "the registration's and the inventory's events are stored");
        event_list_free(&el);
        cr_assert_neq(h.status, HOST_DISCOVERING_UNBOUND, "the caller's host follows");
        enum host_status verdict = h.status;
        host_free(&h);
        cr_assert_eq(store_host_get(st, id, hid, &h), 0);
        cr_assert_eq(h.status, verdict);
        cr_assert_not_null(h.inventory_json);
        cr_assert_gt(h.n_validations, 0);
        host_free(&h);

        /* Read as discovering; being bound behind its back (a state that
         * validations leave as it is). */
        cr_assert_eq(store_host_get(st, id, stale, &h), 0);
        cr_assert_eq(store_host_set_status(st, id, stale, HOST_BINDING, "binding", NULL, 0, 0), 0);
        cr_assert_eq(svc_agent_inventory(&sv, &ie, &h, text, len, err, sizeof err), 0, "%s", err);
        host_free(&h);
        cr_assert_eq(store_host_get(st, id, stale, &h), 0);
        cr_assert_eq(h.status, HOST_BINDING, "the verdict of a stale read is not stored");
        cr_assert_not_null(h.inventory_json, "the inventory is");
        host_free(&h);
        free(text);
        infra_env_free(&ie);
        free(id);
}

/* The services' clock: moved an hour on, hosts that checked in "now" are
 * silent and a token of a minute has expired, without waiting. */
static int64_t fake_now;
static int64_t fake_clock(void *ctx) {
        (void) ctx;
        return fake_now;
}

Test(svc, the_clock_moves_timeouts_and_lifetimes) {
        fake_now = (int64_t) time(NULL);
        sv.clock = fake_clock;
        char *ie = mk_infra_env("admin");
        cr_assert_eq(tu_store_host_register(st, ie, "00000000-0000-4000-8000-0000000000c1", "test", NULL), 1);
        cr_assert_eq(tu_store_host_register(st, ie, "00000000-0000-4000-8000-0000000000c2", "test", NULL), 1);
        char *token = NULL, err[256] = "";
        struct token_record rec;
        cr_assert_eq(svc_token_issue(&sv, ROLE_INFRA_ADMIN, "dave", 60, &token, &rec), 0);
        struct principal p;
        cr_assert_eq(svc_principal(&sv, token, &p, err, sizeof err), 0, "%s", err);
        cr_assert_eq(svc_monitor_pass(&sv), 0, "both checked in just now");

        fake_now += 3600;
        cr_assert_eq(svc_monitor_pass(&sv), 2, "an hour later both are silent");
        cr_assert_eq(svc_principal(&sv, "x", &p, err, sizeof err), -EACCES);
        cr_assert_eq(svc_principal(&sv, token, &p, err, sizeof err), -EACCES, "a minute's token has expired");
        cr_assert_str_eq(err, "the token is not valid");
        free(token);
        token_record_free(&rec);
        free(ie);
}

/* Audit events (issue 18) are kept apart by retention: [events] max_age
 * and max_per_host prune the others, only audit_max_age prunes them; and
 * a list shows them only when asked for by category. */
Test(svc, audit_events_outlive_the_others) {
        fake_now = (int64_t) time(NULL);
        sv.clock = fake_clock;
        char *ie = mk_infra_env("admin");
        static const char *const host = "00000000-0000-4000-8000-0000000000d1";
        cr_assert_eq(tu_store_host_register(st, ie, host, "test", NULL), 1);
        svc_event(&sv, EVENT_INFO, EVENT_CAT_AGENT, ie, NULL, host, "host %s did something", host);
        svc_audit(&sv, "infra-admin", "dave", "host_bind", "POST", "/api/v2/infra-envs/x/hosts/y/actions/bind", 200);
        svc_audit(&sv, "cluster-creator", "erin", "cluster_install", "POST", "/api/v2/clusters/c/actions/install", 409);
        struct event_filter all = { .limit = 100 }, audit = { .category = "audit", .limit = 100 };
        struct event_list l;
        cr_assert_eq(store_event_list(st, &audit, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_expect_str_eq(l.v[0].message, "infra-admin dave: host_bind POST /api/v2/infra-envs/x/hosts/y/actions/bind, "
                                         "answered 200");
        cr_expect_eq(l.v[0].severity, EVENT_INFO);
        cr_expect_eq(l.v[1].severity, EVENT_WARNING, "a refusal is a warning");
        cr_expect_eq(l.v[1].category, EVENT_CAT_AUDIT);
        event_list_free(&l);
        cr_assert_eq(store_event_list(st, &all, &l), 0);
        for (size_t i = 0; i < l.n; i++)
                cr_expect_neq(l.v[i].category, EVENT_CAT_AUDIT, "kept apart unless asked for");
        event_list_free(&l);

        /* Past max_age (30 days by default), the others go; audit stays. */
        fake_now += 31 * 86400;
        cr_assert_geq(svc_prune_events(&sv), 1);
        cr_assert_eq(store_event_list(st, &all, &l), 0);
        cr_expect_eq(l.n, 0, "the host's event is gone");
        event_list_free(&l);
        cr_assert_eq(store_event_list(st, &audit, &l), 0);
        cr_expect_eq(l.n, 2, "the audit stays");
        event_list_free(&l);
        /* Past audit_max_age (366 days) it goes too. */
        fake_now += 366 * 86400;
        cr_assert_eq(svc_prune_events(&sv), 2);
        cr_assert_eq(store_event_list(st, &audit, &l), 0);
        cr_expect_eq(l.n, 0);
        event_list_free(&l);
        free(ie);
}

/* GET /clusters?selector= (issue 34): the service keeps the clusters whose
 * labels the selector selects, the owner's scope still applied. */
static char *labelled_cluster(const char *owner, const char *name, const char *env) {
        char *id = tu_store_cluster(st, owner, name);
        struct cluster c;
        cr_assert_eq(store_cluster_get(st, id, &c), 0);
        if (env)
                cr_assert_eq(cluster_label_set(&c, "env", env), 0);
        cr_assert_eq(cluster_label_set(&c, "tier", "web"), 0);
        cr_assert_eq(store_cluster_update(st, &c, CL_F_LABELS), 0);
        cluster_free(&c);
        return id;
}

static size_t selected(const char *owner, const char *text, const char *want_name) {
        struct labelsel *sel = NULL;
        char err[256];
        if (text)
                cr_assert_eq(labelsel_parse_text(text, &sel, err, sizeof err), 0, "%s", err);
        struct cluster_list l = { 0 };
        cr_assert_eq(svc_cluster_list(&sv, owner, NULL, sel, &l), 0);
        size_t n = l.n;
        if (want_name)
                cr_assert(n == 1 && strcmp(l.v[0].name, want_name) == 0, "%s: %zu clusters, first %s", text, n,
                          n ? l.v[0].name : "-");
        cluster_list_free(&l);
        labelsel_free(sel);
        return n;
}

Test(svc, cluster_lists_filter_by_selector) {
        char *a = labelled_cluster("admin", "prod-1", "prod"), *b = labelled_cluster("admin", "dev-1", "dev"),
             *c = labelled_cluster("carol", "prod-2", "prod"), *d = labelled_cluster("admin", "bare", NULL);
        cr_assert_eq(selected(NULL, NULL, NULL), 4, "no selector: every cluster");
        cr_assert_eq(selected(NULL, "", NULL), 4, "the empty selector selects everything");
        cr_assert_eq(selected(NULL, "env=prod", NULL), 2);
        cr_assert_eq(selected("admin", "env=prod", "prod-1"), 1, "the owner's scope holds");
        cr_assert_eq(selected("admin", "env!=prod", NULL), 2, "dev-1, and bare without env");
        cr_assert_eq(selected("admin", "!env", "bare"), 1);
        cr_assert_eq(selected(NULL, "env in (dev),tier=web", "dev-1"), 1);
        cr_assert_eq(selected(NULL, "env=prod,env=dev", NULL), 0);
        cr_assert_eq(selected("carol", "env notin (prod)", NULL), 0);
        free(a);
        free(b);
        free(c);
        free(d);
}
