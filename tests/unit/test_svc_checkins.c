/* The two things that keep an instruction poll cheap: the check-in buffer
 * (written to a real SQLite store in batches) and the verified-token cache. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/auth.h"
#include "svc/checkins.h"
#include "jwt.h"
#include "store/store.h"
#include "storeutil.h"
#include "testutil.h"

static char *dir;
static struct store *st;

static void setup(void) {
        char path[4096];
        dir = tu_mkdtemp();
        snprintf(path, sizeof path, "%s/muster.db", dir);
        cr_assert_eq(store_open(path, &st), 0);
}

static void teardown(void) {
        store_close(st);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(checkins, .init = setup, .fini = teardown);

static char *checked_in(const char *ie, const char *id) {
        struct host h;
        cr_assert_eq(store_host_get(st, ie, id, &h), 0);
        char *t = h.checked_in_at ? strdup(h.checked_in_at) : NULL;
        host_free(&h);
        return t;
}

/* An infra-env "lab" in the store. */
static void mk_lab(struct infra_env *ie) {
        infra_env_init(ie);
        ie->name = strdup("lab");
        ie->owner = strdup("admin");
        ie->cpu_architecture = strdup("x86_64");
        cr_assert_eq(store_infra_env_create(st, ie), 0);
}

Test(checkins, batched_writes_keep_the_latest_time) {
        struct infra_env ie;
        mk_lab(&ie);
        char ids[3000][40];
        for (int i = 0; i < 3000; i++) {
                snprintf(ids[i], sizeof ids[i], "7c0ffee0-0000-4000-8000-%012d", i);
                cr_assert_eq(tu_store_host_register(st, ie.id, ids[i], "t", NULL), 1);
        }
        cr_assert_eq(store_host_checkin(st, ie.id, ids[0], "2030-01-01T00:00:00Z"), 0);

        struct checkin_buffer *b;
        cr_assert_eq(checkins_new(&b), 0);
        cr_assert_eq(checkins_flush(b, st, true), 0, "nothing to write");
        /* 3000 hosts (the table grows past its first size), host 1 twice. */
        for (int i = 0; i < 3000; i++)
                cr_assert_eq(checkins_note(b, ie.id, ids[i], "2031-05-05T10:00:00Z", NULL), 0);
        cr_assert_eq(checkins_note(b, ie.id, ids[1], "2031-05-05T10:00:07Z", NULL), 0);
        cr_assert_eq(checkins_note(b, ie.id, ids[1], "2031-05-05T10:00:03Z", NULL), 0, "an older time is kept out");
        cr_assert_eq(checkins_note(b, "not-a-uuid", ids[1], "2031-05-05T10:00:03Z", NULL), -EINVAL);
        /* Not in the store until flushed. */
        char *t = checked_in(ie.id, ids[2]);
        cr_assert(t == NULL || strcmp(t, "2031-05-05T10:00:00Z") != 0);
        free(t);
        cr_assert_eq(checkins_flush(b, st, true), 3000);
        t = checked_in(ie.id, ids[1]);
        cr_assert_str_eq(t, "2031-05-05T10:00:07Z");
        free(t);
        t = checked_in(ie.id, ids[2999]);
        cr_assert_str_eq(t, "2031-05-05T10:00:00Z");
        free(t);
        /* A stored time newer than the buffered one stays. */
        cr_assert_eq(checkins_note(b, ie.id, ids[0], "2029-01-01T00:00:00Z", NULL), 0);
        cr_assert_eq(checkins_flush(b, st, true), 1);
        t = checked_in(ie.id, ids[0]);
        cr_assert_str_eq(t, "2031-05-05T10:00:00Z", "the batch wrote 2031 earlier; 2029 is older");
        free(t);
        /* Each host's polls are counted across flushes. */
        uint64_t polls = 0;
        cr_assert_eq(checkins_note(b, ie.id, ids[5], "2031-05-05T10:00:09Z", &polls), 0);
        cr_assert_eq(polls, 2, "host 5 polled once before");
        cr_assert_eq(checkins_note(b, ie.id, ids[1], "2031-05-05T10:00:09Z", &polls), 0);
        cr_assert_eq(polls, 4, "host 1 polled three times before");
        cr_assert_eq(checkins_flush(b, st, true), 2);
        cr_assert_eq(checkins_note(b, ie.id, ids[5], "2031-05-05T10:00:10Z", &polls), 0);
        cr_assert_eq(polls, 3);
        cr_assert_eq(checkins_flush(b, st, true), 1);
        /* A host deleted meanwhile is skipped, not an error. */
        cr_assert_eq(checkins_note(b, ie.id, "7c0ffee0-0000-4000-8000-999999999999", "2031-05-05T10:00:00Z", NULL), 0);
        cr_assert_eq(checkins_flush(b, st, true), 1);
        checkins_free(b);
        infra_env_free(&ie);
}

/* A host polling at every flush has its time written once in
 * CHECKINS_WRITE_EVERY flushes, its newest time then; a host that polled
 * once is written at the next flush; `all` writes every time at once. */
Test(checkins, chatty_hosts_are_written_once_in_a_while) {
        struct infra_env ie;
        mk_lab(&ie);
        const char *chatty = "7c0ffee0-0000-4000-8000-000000000001", *quiet = "7c0ffee0-0000-4000-8000-000000000002";
        cr_assert_eq(tu_store_host_register(st, ie.id, chatty, "t", NULL), 1);
        cr_assert_eq(tu_store_host_register(st, ie.id, quiet, "t", NULL), 1);
        struct checkin_buffer *b;
        cr_assert_eq(checkins_new(&b), 0);

        char at[32];
        int written = 0;
        for (int i = 0; i < 3 * CHECKINS_WRITE_EVERY; i++) {
                snprintf(at, sizeof at, "2031-05-05T10:%02d:%02dZ", i / 60, i % 60);
                cr_assert_eq(checkins_note(b, ie.id, chatty, at, NULL), 0);
                if (i == 4)
                        cr_assert_eq(checkins_note(b, ie.id, quiet, at, NULL), 0);
                int n = checkins_flush(b, st, false);
                cr_assert_geq(n, 0);
                written += n;
                if (i == 4) {
                        char *t = checked_in(ie.id, quiet);
                        cr_assert_str_eq(t, "2031-05-05T10:00:04Z", "a host's first time goes out at once");
                        free(t);
                }
        }
        /* chatty: at flushes 0, 10, 20; quiet: once. */
        cr_assert_eq(written, 3 + 1, "%d writes", written);
        char *t = checked_in(ie.id, chatty);
        cr_assert_str_eq(t, "2031-05-05T10:00:20Z", "the time of its last write");
        free(t);
        /* What waits goes out with `all` (the monitor's pass, shutdown). */
        cr_assert_eq(checkins_flush(b, st, true), 1);
        t = checked_in(ie.id, chatty);
        cr_assert_str_eq(t, "2031-05-05T10:00:29Z", "its newest time");
        free(t);
        cr_assert_eq(checkins_flush(b, st, true), 0, "nothing left");
        checkins_free(b);
        infra_env_free(&ie);
}

Test(checkins, token_cache_answers_like_the_check) {
        struct crypto_key *k, *other;
        char path[4200];
        snprintf(path, sizeof path, "%s/k.pem", dir);
        cr_assert_eq(crypto_key_load_or_create(path, &k), 0);
        snprintf(path, sizeof path, "%s/o.pem", dir);
        cr_assert_eq(crypto_key_load_or_create(path, &other), 0);
        struct auth_cache *c;
        cr_assert_eq(auth_cache_new(&c), 0);
        char *agent, *admin, *forged;
        cr_assert_eq(auth_issue_agent(k, "0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a", 3, &agent), 0);
        cr_assert_eq(auth_issue_admin(k, ROLE_CLUSTER_CREATOR, "alice", "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f", 900, 1900, &admin), 0);
        cr_assert_eq(auth_issue_admin(other, ROLE_INFRA_ADMIN, "mallory", "6f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f", 900, 1900, &forged), 0);
        for (int round = 0; round < 3; round++) { /* miss, then hits */
                struct principal a, b;
                cr_assert_eq(auth_check_cached(c, k, agent, 1000, &a), 0);
                cr_assert_eq(auth_check(k, agent, 1000, &b), 0);
                cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
                cr_assert_eq(a.generation, 3);
                cr_assert_eq(auth_check_cached(c, k, admin, 1000, &a), 0);
                cr_assert_str_eq(a.owner, "alice");
                cr_assert_eq(auth_check_cached(c, k, forged, 1000, &a), -EACCES, "another key's token, every time");
                cr_assert_eq(auth_check_cached(c, k, "garbage", 1000, &a), -EACCES);
        }
        /* An entry lives AUTH_CACHE_TTL_S at most: then the token is checked
         * again (here with the wrong key, to see that it really is). */
        struct principal p;
        cr_assert_eq(auth_check_cached(c, other, agent, 1000 + AUTH_CACHE_TTL_S - 1, &p), 0, "still cached");
        cr_assert_eq(auth_check_cached(c, other, agent, 1000 + AUTH_CACHE_TTL_S, &p), -EACCES, "expired entry");
        /* A token with an "exp" is never cached past it. */
        json_object *claims = json_tokener_parse("{\"sub\":\"admin\",\"role\":\"infra-admin\",\"owner\":\"x\",\"exp\":1010,"
                                              "\"jti\":\"7f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f\"}");
        char *short_lived;
        cr_assert_eq(jwt_sign(k, claims, &short_lived), 0);
        json_object_put(claims);
        cr_assert_eq(auth_check_cached(c, k, short_lived, 1000, &p), 0);
        cr_assert_eq(auth_check_cached(c, k, short_lived, 1009, &p), 0);
        cr_assert_eq(auth_check_cached(c, k, short_lived, 1010, &p), -EACCES);
        free(short_lived);
        free(agent);
        free(admin);
        free(forged);
        auth_cache_free(c);
        crypto_key_free(k);
        crypto_key_free(other);
}
