/* The coordinator's data model: times, ids, and each resource's JSON both
 * ways, including the errors that name the offending field. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "model.h"
#include "strv.h"
#include "testutil.h"

static json_object *parse(const char *text) {
        json_object *o = json_tokener_parse(text);
        cr_assert_not_null(o, "bad test JSON: %s", text);
        return o;
}

/* ---- time and ids ------------------------------------------------------ */

Test(model_time, format_parse_roundtrip) {
        char buf[MODEL_TIME_LEN];
        int64_t t;

        cr_assert_eq(model_time_parse("2026-11-21T21:50:11Z", &t), 0);
        cr_assert_eq(model_time_format(t, buf), 0);
        cr_assert_str_eq(buf, "2026-11-21T21:50:11Z");
        cr_assert_eq(model_time_parse("1970-01-01T00:00:00Z", &t), 0);
        cr_assert_eq(t, 0);
        cr_assert_eq(model_time_parse("2000-02-29T12:00:00.123456z", &t), 0);
        cr_assert_eq(t, 951825600);
        cr_assert_eq(model_time_normalize("2026-11-21T23:50:11+02:00", buf), 0);
        cr_assert_str_eq(buf, "2026-11-21T21:50:11Z");
        cr_assert_eq(model_time_normalize("2026-11-21T20:50:11.5-01:00", buf), 0);
        cr_assert_str_eq(buf, "2026-11-21T21:50:11Z");
        cr_assert_eq(model_time_normalize("1969-12-31T23:59:59Z", buf), 0);
        cr_assert_str_eq(buf, "1969-12-31T23:59:59Z");
}

Test(model_time, rejects_malformed) {
        const char *bad[] = { "", "2026-11-21", "2026-11-21T21:50:11", "2026-11-21 21:50:11Z",
                              "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-21T24:00:00Z",
                              "2026-11-21T21:50:11Zjunk", "2026-11-21T21:50:11.Z", "2026-1-21T21:50:11Z",
                              "2026-11-21T21:50:11+0200", "yesterday" };
        int64_t t;
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                cr_assert_eq(model_time_parse(bad[i], &t), -EINVAL, "accepted \"%s\"", bad[i]);
        cr_assert_eq(model_time_parse(NULL, &t), -EINVAL);
}

Test(model_time, now_is_canonical_and_sorts) {
        char a[MODEL_TIME_LEN], b[MODEL_TIME_LEN];
        int64_t t;
        cr_assert_eq(model_now_rfc3339(a), 0);
        cr_assert_eq(strlen(a), 20);
        cr_assert_eq(a[19], 'Z');
        cr_assert_eq(model_time_parse(a, &t), 0);
        cr_assert_eq(model_time_format(t - 3600, b), 0);
        cr_assert_lt(strcmp(b, a), 0, "an hour ago must sort first");
        cr_assert_eq(model_time_format(INT64_C(400000000000), b), -EOVERFLOW);
}

Test(model_id, random_v4) {
        char a[UUID_STR_LEN], b[UUID_STR_LEN];
        cr_assert_eq(model_new_id(a), 0);
        cr_assert_eq(model_new_id(b), 0);
        cr_assert(uuid_is_valid(a));
        cr_assert_eq(a[14], '4');
        cr_assert(strchr("89ab", a[19]));
        cr_assert_str_neq(a, b);
        for (const char *p = a; *p; p++)
                cr_assert(!(*p >= 'A' && *p <= 'F'), "upper case in %s", a);
}

Test(model_enums, names_both_ways) {
        for (int i = 0; i < _EVENT_SEVERITY_MAX; i++)
                cr_assert_eq(event_severity_from_string(event_severity_to_string(i)), i);
        for (int i = 0; i < _EVENT_CATEGORY_MAX; i++)
                cr_assert_eq(event_category_from_string(event_category_to_string(i)), i);
        cr_assert_str_eq(ha_mode_to_string(HA_MODE_NONE), "None");
        cr_assert_eq(ha_mode_from_string("Full"), HA_MODE_FULL);
        cr_assert_eq(ha_mode_from_string("full"), _HA_MODE_INVALID);
        cr_assert_eq(event_severity_from_string(NULL), _EVENT_SEVERITY_INVALID);
}

/* ---- validations ------------------------------------------------------- */

Test(model_validations, set_find_json) {
        struct validation *v = NULL;
        size_t n = 0;
        cr_assert_eq(validation_list_set(&v, &n, VAL_CONNECTED, VSTATUS_SUCCESS, "Host is connected"), 0);
        cr_assert_eq(validation_list_set(&v, &n, VAL_HAS_INVENTORY, VSTATUS_PENDING, NULL), 0);
        cr_assert_eq(validation_list_set(&v, &n, VAL_CONNECTED, VSTATUS_FAILURE, "gone"), 0);
        cr_assert_eq(n, 2);
        const struct validation *c = validation_list_find(v, n, VAL_CONNECTED);
        cr_assert_not_null(c);
        cr_assert_eq(c->status, VSTATUS_FAILURE);
        cr_assert_str_eq(c->message, "gone");
        cr_assert_null(validation_list_find(v, n, VAL_NTP_SYNCED));

        json_object *a = validation_list_to_json(v, n);
        cr_assert_str_eq(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
                         "[{\"id\":\"connected\",\"status\":\"failure\",\"message\":\"gone\"},"
                         "{\"id\":\"has-inventory\",\"status\":\"pending\"}]");
        struct validation *w = NULL;
        size_t m = 0;
        char err[128];
        cr_assert_eq(validation_list_from_json(a, &w, &m, err, sizeof err), 0, "%s", err);
        cr_assert_eq(m, 2);
        cr_assert_eq(w[1].id, VAL_HAS_INVENTORY);
        cr_assert_null(w[1].message);
        json_object_put(a);
        validation_list_free(&w, &m);
        validation_list_free(&v, &n);
        cr_assert_null(v);
        cr_assert_eq(n, 0);
}

Test(model_validations, bad_entries) {
        struct { const char *json; const char *needle; } cases[] = {
                { "[{\"id\":\"no-such-check\",\"status\":\"success\"}]", "\"id\"" },
                { "[{\"id\":\"connected\",\"status\":\"great\"}]", "\"status\"" },
                { "[{\"id\":\"connected\"}]", "validations[0]" },
                { "[{\"id\":\"connected\",\"status\":\"success\"},{\"id\":\"connected\",\"status\":\"failure\"}]",
                  "twice" },
                { "[\"connected\"]", "objects" },
                { "[{\"id\":\"connected\",\"status\":\"success\",\"message\":7}]", "\"message\"" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                json_object *a = parse(cases[i].json);
                struct validation *v = NULL;
                size_t n = 0;
                char err[128] = "";
                cr_assert_eq(validation_list_from_json(a, &v, &n, err, sizeof err), -EINVAL, "case %zu", i);
                cr_assert(strstr(err, cases[i].needle), "case %zu: \"%s\" lacks %s", i, err, cases[i].needle);
                validation_list_free(&v, &n);
                json_object_put(a);
        }
}

/* ---- infra-env --------------------------------------------------------- */

static void fill_infra_env(struct infra_env *ie) {
        infra_env_init(ie);
        ie->id = strdup("6f1c2b9e-0d2a-4c43-9a57-3a7e2d8f9b10");
        ie->name = strdup("lab-rack-3");
        ie->owner = strdup("admin@example.com");
        ie->cluster_id = strdup("0b6f3f0e-4a3c-4b9e-8d2f-5c1a2b3c4d5e");
        ie->cpu_architecture = strdup("x86_64");
        ie->pull_secret = strdup("{\"auths\":{}}");
        ie->ssh_authorized_key = strdup("ssh-ed25519 AAAA test");
        ie->proxy.http_proxy = strdup("http://proxy:3128");
        ie->proxy.no_proxy = strdup(".lab,10.0.0.0/8");
        strv_push(&ie->ntp_sources, "ntp1.lab");
        strv_push(&ie->ntp_sources, "10.0.0.1");
        ie->token_generation = 3;
        ie->created_at = strdup("2026-11-21T21:50:11Z");
        ie->updated_at = strdup("2026-11-21T21:51:00Z");
}

Test(model_infra_env, roundtrip_with_secrets) {
        struct infra_env a, b;
        char err[128];
        fill_infra_env(&a);
        json_object *o = infra_env_to_json(&a, MODEL_JSON_SECRETS);
        cr_assert_eq(infra_env_from_json(o, &b, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(b.id, a.id);
        cr_assert_str_eq(b.name, a.name);
        cr_assert_str_eq(b.owner, a.owner);
        cr_assert_str_eq(b.cluster_id, a.cluster_id);
        cr_assert_str_eq(b.cpu_architecture, a.cpu_architecture);
        cr_assert_str_eq(b.pull_secret, a.pull_secret);
        cr_assert_str_eq(b.ssh_authorized_key, a.ssh_authorized_key);
        cr_assert_str_eq(b.proxy.http_proxy, a.proxy.http_proxy);
        cr_assert_null(b.proxy.https_proxy);
        cr_assert_str_eq(b.proxy.no_proxy, a.proxy.no_proxy);
        cr_assert_eq(b.ntp_sources.n, 2);
        cr_assert_str_eq(b.ntp_sources.v[1], "10.0.0.1");
        cr_assert_eq(b.token_generation, 3);
        cr_assert_str_eq(b.created_at, a.created_at);
        cr_assert_str_eq(b.updated_at, a.updated_at);
        cr_assert_eq(b.present & (IE_F_NAME | IE_F_PROXY | IE_F_NTP_SOURCES | IE_F_PULL_SECRET),
                     IE_F_NAME | IE_F_PROXY | IE_F_NTP_SOURCES | IE_F_PULL_SECRET);
        /* The same JSON again. */
        json_object *o2 = infra_env_to_json(&b, MODEL_JSON_SECRETS);
        cr_assert(json_object_equal(o, o2));
        json_object_put(o2);
        json_object_put(o);
        infra_env_free(&a);
        infra_env_free(&b);
}

Test(model_infra_env, secrets_hidden_by_default) {
        struct infra_env a;
        fill_infra_env(&a);
        json_object *o = infra_env_to_json(&a, 0), *v;
        cr_assert_not(json_object_object_get_ex(o, "pull_secret", NULL));
        cr_assert(json_object_object_get_ex(o, "pull_secret_set", &v));
        cr_assert(json_object_get_boolean(v));
        cr_assert(json_object_object_get_ex(o, "kind", &v));
        cr_assert_str_eq(json_object_get_string(v), "InfraEnv");
        json_object_put(o);
        infra_env_free(&a);

        infra_env_init(&a);
        o = infra_env_to_json(&a, 0);
        cr_assert(json_object_object_get_ex(o, "pull_secret_set", &v));
        cr_assert_not(json_object_get_boolean(v));
        cr_assert_not(json_object_object_get_ex(o, "token_generation", NULL), "unset is left out");
        cr_assert_not(json_object_object_get_ex(o, "proxy", NULL));
        cr_assert_not(json_object_object_get_ex(o, "ntp_sources", NULL));
        json_object_put(o);
}

Test(model_infra_env, patch_body_and_null_clears) {
        struct infra_env ie;
        char err[128];
        json_object *o = parse("{\"name\":\"new\",\"ssh_authorized_key\":null,"
                               "\"cluster_id\":\"0B6F3F0E-4A3C-4B9E-8D2F-5C1A2B3C4D5E\",\"whatever\":1}");
        cr_assert_eq(infra_env_from_json(o, &ie, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ie.present, IE_F_NAME | IE_F_SSH_AUTHORIZED_KEY | IE_F_CLUSTER_ID);
        cr_assert_null(ie.ssh_authorized_key);
        cr_assert_str_eq(ie.cluster_id, "0b6f3f0e-4a3c-4b9e-8d2f-5c1a2b3c4d5e", "ids are lower case");
        cr_assert_eq(ie.token_generation, MODEL_UNSET);
        json_object_put(o);
        infra_env_free(&ie);
}

Test(model_infra_env, proxies_that_parse) {
        static const char *const ok[] = {
                "{\"proxy\":{\"http_proxy\":\"http://proxy.lab:3128\",\"https_proxy\":\"http://10.0.0.1:8080/\","
                "\"no_proxy\":\".lab,10.0.0.0/8,[fd00::1],localhost\"}}",
                "{\"proxy\":{\"https_proxy\":\"https://user:secret@[fd00::7]:3128\",\"no_proxy\":\"*\"}}",
                NULL,
        };
        for (const char *const *j = ok; *j; j++) {
                json_object *o = json_tokener_parse(*j);
                struct infra_env ie;
                char err[256] = "";
                cr_assert_eq(infra_env_from_json(o, &ie, err, sizeof err), 0, "%s: %s", *j, err);
                infra_env_free(&ie);
                json_object_put(o);
        }
}

Test(model_infra_env, bad_types_name_the_field) {
        struct { const char *json; const char *needle; } cases[] = {
                { "[]", "JSON object" },
                { "{\"name\":5}", "\"name\" must be string" },
                { "{\"id\":\"not-a-uuid\"}", "\"id\" must be a UUID" },
                { "{\"cluster_id\":12}", "\"cluster_id\"" },
                { "{\"proxy\":\"http://x\"}", "\"proxy\" must be object" },
                { "{\"proxy\":{\"https_proxy\":false}}", "\"https_proxy\"" },
                /* Proxies the agents would fetch through. */
                { "{\"proxy\":{\"http_proxy\":\"ftp://proxy:21\"}}", "\"proxy.http_proxy\" is not a proxy URL" },
                { "{\"proxy\":{\"https_proxy\":\"http://proxy:3128/path\"}}", "\"proxy.https_proxy\"" },
                { "{\"proxy\":{\"http_proxy\":\"http://pro xy:3128\"}}", "\"proxy.http_proxy\"" },
                { "{\"proxy\":{\"http_proxy\":\"http://proxy:99999\"}}", "\"proxy.http_proxy\"" },
                { "{\"proxy\":{\"no_proxy\":\"a,,b\"}}", "\"proxy.no_proxy\"" },
                { "{\"proxy\":{\"no_proxy\":\"a b\"}}", "\"proxy.no_proxy\"" },
                { "{\"ntp_sources\":\"pool.ntp.org\"}", "\"ntp_sources\" must be array" },
                { "{\"ntp_sources\":[1]}", "\"ntp_sources\" must hold strings" },
                { "{\"token_generation\":-1}", "\"token_generation\"" },
                { "{\"token_generation\":\"2\"}", "\"token_generation\"" },
                { "{\"created_at\":\"last tuesday\"}", "\"created_at\" must be an RFC 3339 time" },
                { "{\"pull_secret\":[]}", "\"pull_secret\"" },
                /* What would be written into an installed host's files. */
                { "{\"ntp_sources\":[\"pool.ntp.org\\nNTP=x\"]}", "\"ntp_sources\": \"pool.ntp.org" },
                { "{\"ntp_sources\":[\"a b\"]}", "not a host name or address" },
                { "{\"ntp_sources\":[\"ntp:99999\"]}", "not a host name or address" },
                { "{\"ssh_authorized_key\":\"ssh-rsa AAAA a@b\\r\\n\"}", "\"ssh_authorized_key\" must be lines" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                json_object *o = parse(cases[i].json);
                struct infra_env ie;
                char err[160] = "";
                cr_assert_eq(infra_env_from_json(o, &ie, err, sizeof err), -EINVAL, "case %zu", i);
                cr_assert(strstr(err, cases[i].needle), "case %zu: \"%s\" lacks %s", i, err, cases[i].needle);
                infra_env_free(&ie);
                json_object_put(o);
        }
}

/* NTP sources as the agents and timesyncd take them, keys one a line. */
Test(model_infra_env, ntp_sources_and_keys_accepted) {
        json_object *o = parse("{\"ntp_sources\":[\"Pool.NTP.org\",\"192.0.2.1:1123\",\"[2001:db8::1]:123\","
                               "\"2001:db8::2\"],\"ssh_authorized_key\":\"ssh-rsa AAAA a@b\\nssh-ed25519 BBBB c@d\\n\"}");
        struct infra_env ie;
        char err[160] = "";
        cr_assert_eq(infra_env_from_json(o, &ie, err, sizeof err), 0, "%s", err);
        cr_assert_eq(ie.ntp_sources.n, 4);
        infra_env_free(&ie);
        json_object_put(o);
}

Test(model_infra_env, limits) {
        char big[MODEL_MAX_STRING + 32];
        char json[sizeof big + 32];
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        snprintf(json, sizeof json, "{\"name\":\"%s\"}", big);
        json_object *o = parse(json);
        struct infra_env ie;
        char err[128] = "";
        cr_assert_eq(infra_env_from_json(o, &ie, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "\"name\" is longer"), "%s", err);
        infra_env_free(&ie);
        json_object_put(o);

        json_object *a = json_object_new_array();
        for (int i = 0; i <= MODEL_MAX_NTP_SOURCES; i++)
                json_object_array_add(a, json_object_new_string("ntp"));
        o = json_object_new_object();
        json_object_object_add(o, "ntp_sources", a);
        cr_assert_eq(infra_env_from_json(o, &ie, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "at most"), "%s", err);
        infra_env_free(&ie);
        json_object_put(o);
}

/* ---- host -------------------------------------------------------------- */

#define SMALL_INVENTORY                                                              \
        "{\"inventory_version\":1,\"hostname\":\"node-7\","                          \
        "\"cpu\":{\"architecture\":\"x86_64\",\"count\":8},"                         \
        "\"memory\":{\"usable_bytes\":16000000000,\"physical_bytes\":17179869184},"  \
        "\"disks\":[{\"name\":\"sda\",\"size_bytes\":480000000000,"                  \
        "\"installation_eligibility\":{\"eligible\":true}},"                         \
        "{\"name\":\"sdb\",\"size_bytes\":4000000000000,"                            \
        "\"installation_eligibility\":{\"eligible\":false,\"not_eligible_reasons\":[\"Disk is removable\"]}},"  \
        "{\"name\":\"nvme0n1\",\"size_bytes\":960000000000,"                         \
        "\"installation_eligibility\":{\"eligible\":true}}]}"

static void fill_host(struct host *h) {
        host_init(h);
        h->infra_env_id = strdup("6f1c2b9e-0d2a-4c43-9a57-3a7e2d8f9b10");
        h->id = strdup("4c4c4544-0042-3510-8052-b4c04f563532");
        h->owner = strdup("admin@example.com");
        h->cluster_id = strdup("0b6f3f0e-4a3c-4b9e-8d2f-5c1a2b3c4d5e");
        h->role = ROLE_MASTER;
        h->requested_hostname = strdup("master-0");
        h->installation_disk_id = strdup("/dev/disk/by-id/nvme-x");
        h->inventory_json = strdup(SMALL_INVENTORY);
        h->status = HOST_KNOWN;
        h->status_info = strdup("Host is ready to be installed");
        validation_list_set(&h->validations, &h->n_validations, VAL_CONNECTED, VSTATUS_SUCCESS, "ok");
        validation_list_set(&h->validations, &h->n_validations, VAL_NTP_SYNCED, VSTATUS_FAILURE, "offset 3 s");
        h->progress.stage = strdup("Writing image to disk");
        h->progress.percent = 42;
        h->progress.info = strdup("1.2 GB of 3 GB");
        h->checked_in_at = strdup("2026-11-21T21:55:00Z");
        h->registered_at = strdup("2026-11-21T21:50:11Z");
        h->discovery_agent_version = strdup("0.1.0");
        h->created_at = strdup("2026-11-21T21:50:11Z");
        h->updated_at = strdup("2026-11-21T21:55:00Z");
}

Test(model_host, roundtrip) {
        struct host a, b;
        char err[128];
        fill_host(&a);
        json_object *o = host_to_json(&a, 0), *v;
        cr_assert(json_object_object_get_ex(o, "inventory", &v));
        cr_assert(json_object_is_type(v, json_type_object), "inventory goes out as an object");
        cr_assert_eq(host_from_json(o, &b, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(b.infra_env_id, a.infra_env_id);
        cr_assert_str_eq(b.id, a.id);
        cr_assert_str_eq(b.owner, a.owner);
        cr_assert_str_eq(b.cluster_id, a.cluster_id);
        cr_assert_eq(b.role, ROLE_MASTER);
        cr_assert_str_eq(b.requested_hostname, "master-0");
        cr_assert_str_eq(b.installation_disk_id, a.installation_disk_id);
        cr_assert_eq(b.status, HOST_KNOWN);
        cr_assert_str_eq(b.status_info, a.status_info);
        cr_assert_eq(b.n_validations, 2);
        cr_assert_eq(b.validations[1].id, VAL_NTP_SYNCED);
        cr_assert_eq(b.validations[1].status, VSTATUS_FAILURE);
        cr_assert_str_eq(b.progress.stage, a.progress.stage);
        cr_assert_eq(b.progress.percent, 42);
        cr_assert_str_eq(b.progress.info, a.progress.info);
        cr_assert_str_eq(b.checked_in_at, a.checked_in_at);
        cr_assert_str_eq(b.registered_at, a.registered_at);
        cr_assert_str_eq(b.discovery_agent_version, "0.1.0");
        cr_assert_str_eq(b.created_at, a.created_at);
        cr_assert_str_eq(b.updated_at, a.updated_at);
        /* The inventory text is kept; its meaning is unchanged. */
        json_object *i1 = parse(a.inventory_json), *i2 = parse(b.inventory_json);
        cr_assert(json_object_equal(i1, i2));
        json_object_put(i1);
        json_object_put(i2);
        json_object *o2 = host_to_json(&b, 0);
        cr_assert(json_object_equal(o, o2));
        json_object_put(o2);

        o2 = host_to_json(&b, MODEL_JSON_NO_INVENTORY);
        cr_assert_not(json_object_object_get_ex(o2, "inventory", NULL));
        cr_assert_not(json_object_object_get_ex(o2, "reregister_pending", NULL), "internal");
        json_object_put(o2);
        json_object_put(o);
        host_free(&a);
        host_free(&b);
}

Test(model_host, empty_host_json) {
        struct host h;
        host_init(&h);
        json_object *o = host_to_json(&h, 0), *v;
        cr_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                         "{\"kind\":\"Host\",\"validations\":[],\"applied_revision\":0}");
        cr_assert_not(json_object_object_get_ex(o, "progress", &v));
        json_object_put(o);
        host_free(&h);
}

Test(model_host, inventory_as_text_and_parsed) {
        struct host h;
        char err[128];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "inventory", json_object_new_string(SMALL_INVENTORY));
        cr_assert_eq(host_from_json(o, &h, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(h.inventory_json, SMALL_INVENTORY, "a string is kept verbatim");
        cr_assert_eq(h.present, HOST_F_INVENTORY);
        cr_assert_null(h.inventory);
        cr_assert_eq(host_parse_inventory(&h, err, sizeof err), 0, "%s", err);
        cr_assert_eq(h.inventory->cpu.count, 8);
        cr_assert_str_eq(host_hostname(&h), "node-7");

        struct inventory_facts f;
        inventory_facts_init(&f);
        cr_assert_eq(inventory_facts_from(h.inventory, &f), 0);
        cr_assert_str_eq(f.hostname, "node-7");
        cr_assert_eq(f.cpu_count, 8);
        cr_assert_eq(f.memory_bytes, 17179869184, "physical memory first");
        cr_assert_eq(f.max_disk_bytes, 960000000000, "largest eligible, not the removable one");
        inventory_facts_free(&f);

        h.requested_hostname = strdup("master-1");
        cr_assert_str_eq(host_hostname(&h), "master-1");
        json_object_put(o);
        host_free(&h);

        host_init(&h);
        cr_assert_eq(host_parse_inventory(&h, err, sizeof err), -ENODATA);
        cr_assert_null(host_hostname(&h));
        host_free(&h);
}

Test(model_host, bad_types_name_the_field) {
        struct { const char *json; const char *needle; } cases[] = {
                { "{\"role\":\"boss\"}", "\"role\" must be one of auto|master|worker" },
                { "{\"role\":1}", "\"role\" must be string" },
                { "{\"status\":\"happy\"}", "\"status\" must be one of discovering-unbound|" },
                { "{\"progress\":{\"percent\":101}}", "\"percent\"" },
                { "{\"progress\":{\"percent\":\"50\"}}", "\"percent\"" },
                { "{\"progress\":[]}", "\"progress\" must be object" },
                { "{\"inventory\":\"not json\"}", "\"inventory\" must hold a JSON object" },
                { "{\"inventory\":[1,2]}", "\"inventory\" must be an object" },
                { "{\"validations\":{}}", "\"validations\" must be array" },
                { "{\"validations\":[{\"id\":\"connected\",\"status\":\"maybe\"}]}", "\"status\"" },
                { "{\"infra_env_id\":\"6f1c2b9e0d2a4c439a573a7e2d8f9b10\"}", "\"infra_env_id\" must be a UUID" },
                { "{\"checked_in_at\":\"2026-11-21\"}", "\"checked_in_at\"" },
                { "{\"requested_hostname\":{}}", "\"requested_hostname\"" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                json_object *o = parse(cases[i].json);
                struct host h;
                char err[256] = "";
                cr_assert_eq(host_from_json(o, &h, err, sizeof err), -EINVAL, "case %zu", i);
                cr_assert(strstr(err, cases[i].needle), "case %zu: \"%s\" lacks %s", i, err, cases[i].needle);
                host_free(&h);
                json_object_put(o);
        }
}

Test(model_host, nul_byte_rejected) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "requested_hostname", json_object_new_string_len("ab\0cd", 5));
        struct host h;
        char err[128] = "";
        cr_assert_eq(host_from_json(o, &h, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "NUL"), "%s", err);
        host_free(&h);
        json_object_put(o);
}

/* ---- cluster ----------------------------------------------------------- */

Test(model_cluster, roundtrip_and_labels) {
        struct cluster a, b;
        char err[128];
        cluster_init(&a);
        a.id = strdup("0b6f3f0e-4a3c-4b9e-8d2f-5c1a2b3c4d5e");
        a.name = strdup("edge-1");
        a.owner = strdup("creator@example.com");
        a.release_version = strdup("4.16.3");
        a.base_dns_domain = strdup("lab.example.com");
        a.machine_network_cidr = strdup("192.0.2.0/24");
        a.api_vip = strdup("192.0.2.10");
        a.ingress_vip = strdup("192.0.2.11");
        a.high_availability_mode = HA_MODE_NONE;
        a.pull_secret = strdup("{\"auths\":{}}");
        cr_assert_eq(cluster_label_set(&a, "env", "prod"), 0);
        cr_assert_eq(cluster_label_set(&a, "example.com/site", "berlin"), 0);
        cr_assert_eq(cluster_label_set(&a, "env", "staging"), 0, "replace");
        cr_assert_eq(a.n_labels, 2);
        a.status = strdup("ready");
        a.status_info = strdup("Cluster ready to be installed");
        validation_list_set(&a.validations, &a.n_validations, VAL_API_VIPS_DEFINED, VSTATUS_SUCCESS, "ok");
        a.created_at = strdup("2026-11-21T21:50:11Z");
        a.updated_at = strdup("2026-11-21T21:50:11Z");

        json_object *o = cluster_to_json(&a, MODEL_JSON_SECRETS);
        cr_assert_eq(cluster_from_json(o, &b, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(b.name, "edge-1");
        cr_assert_str_eq(b.release_version, "4.16.3");
        cr_assert_str_eq(b.machine_network_cidr, "192.0.2.0/24");
        cr_assert_eq(b.high_availability_mode, HA_MODE_NONE);
        cr_assert_str_eq(b.pull_secret, a.pull_secret);
        cr_assert_str_eq(cluster_label_get(&b, "env"), "staging");
        cr_assert_str_eq(cluster_label_get(&b, "example.com/site"), "berlin");
        cr_assert_null(cluster_label_get(&b, "nope"));
        cr_assert_str_eq(b.status, "ready");
        cr_assert_eq(b.n_validations, 1);
        json_object *o2 = cluster_to_json(&b, MODEL_JSON_SECRETS);
        cr_assert(json_object_equal(o, o2));
        json_object_put(o2);
        o2 = cluster_to_json(&b, 0);
        cr_assert_not(json_object_object_get_ex(o2, "pull_secret", NULL));
        json_object_put(o2);
        json_object_put(o);
        cluster_free(&a);
        cluster_free(&b);
}

/* Capabilities spec and status, conditions, payload revision and feature
 * set: in the JSON as the API shows them, and back. */
Test(model_cluster, capabilities_conditions_and_revision) {
        struct cluster a, b;
        char err[128];
        cluster_init(&a);
        a.name = strdup("caps");
        json_object *o = cluster_to_json(&a, 0);
        cr_assert_str_eq(json_object_to_json_string_ext(tu_json_get(o, "capabilities"), JSON_C_TO_STRING_PLAIN),
                         "{\"spec\":{\"baseline_capability_set\":null,\"additional_enabled_capabilities\":[]}}",
                         "no status before the release is known");
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "0");
        cr_assert_str_eq(tu_jstr(o, "feature_set"), "Default");
        cr_assert_eq(json_object_array_length(tu_json_get(o, "conditions")), 0);
        json_object_put(o);

        a.cap_spec.baseline_capability_set = strdup("None");
        strv_push(&a.cap_spec.additional_enabled_capabilities, "baremetal");
        a.has_cap_status = true;
        strv_push(&a.cap_status.enabled_capabilities, "Console");
        strv_push(&a.cap_status.enabled_capabilities, "baremetal");
        strv_push(&a.cap_status.known_capabilities, "Console");
        strv_push(&a.cap_status.known_capabilities, "baremetal");
        strv_push(&a.cap_status.implicit_capabilities, "Console");
        a.conditions = calloc(1, sizeof *a.conditions);
        a.n_conditions = 1;
        a.conditions[0] = (struct model_condition) {
                strdup("ImplicitlyEnabledCapabilities"), strdup("True"), strdup("CapabilitiesImplicitlyEnabled"),
                strdup("The following capabilities could not be disabled: Console"), strdup("2026-11-21T21:50:11Z")
        };
        a.payload_revision = 3;
        a.feature_set = strdup("TechPreviewNoUpgrade");
        o = cluster_to_json(&a, 0);
        cr_assert_str_eq(tu_jstr(o, "capabilities.spec.baseline_capability_set"), "None");
        cr_assert_str_eq(tu_jstr(o, "capabilities.spec.additional_enabled_capabilities.0"), "baremetal");
        cr_assert_str_eq(json_object_to_json_string_ext(tu_json_get(o, "capabilities.status"), JSON_C_TO_STRING_PLAIN),
                         "{\"enabled_capabilities\":[\"Console\",\"baremetal\"],"
                         "\"known_capabilities\":[\"Console\",\"baremetal\"]}",
                         "implicit is the store's, not the API's");
        cr_assert_str_eq(tu_jstr(o, "conditions.0.reason"), "CapabilitiesImplicitlyEnabled");
        cr_assert_str_eq(tu_jstr(o, "conditions.0.last_transition_time"), "2026-11-21T21:50:11Z");
        cr_assert_str_eq(tu_jstr(o, "payload_revision"), "3");
        cr_assert_str_eq(tu_jstr(o, "feature_set"), "TechPreviewNoUpgrade");
        cr_assert_eq(cluster_from_json(o, &b, err, sizeof err), 0, "%s", err);
        cr_assert_eq(b.present & (CL_F_CAPABILITIES | CL_F_CAP_STATUS | CL_F_CONDITIONS | CL_F_PAYLOAD_REVISION |
                                  CL_F_FEATURE_SET),
                     CL_F_CAPABILITIES | CL_F_CAP_STATUS | CL_F_CONDITIONS | CL_F_PAYLOAD_REVISION | CL_F_FEATURE_SET);
        cr_assert_str_eq(b.cap_spec.baseline_capability_set, "None");
        cr_assert(b.has_cap_status);
        cr_assert_eq(b.cap_status.enabled_capabilities.n, 2);
        cr_assert_eq(b.n_conditions, 1);
        cr_assert_str_eq(b.conditions[0].message, "The following capabilities could not be disabled: Console");
        cr_assert_eq(b.payload_revision, 3);
        json_object *o2 = cluster_to_json(&b, 0);
        cr_assert(json_object_equal(o, o2), "round trip");
        json_object_put(o2);
        json_object_put(o);
        cluster_free(&b);

        /* The store's status form keeps implicit. */
        o = cluster_cap_status_to_json(&a.cap_status);
        struct cluster_cap_status st = { 0 };
        cr_assert_eq(cluster_cap_status_from_json(o, &st, err, sizeof err), 0, "%s", err);
        cr_assert_eq(st.implicit_capabilities.n, 1);
        cr_assert_str_eq(st.implicit_capabilities.v[0], "Console");
        cluster_cap_status_free(&st);
        json_object_put(o);
        cluster_free(&a);

        /* A PATCH body: the spec only; a baseline of null is vCurrent. */
        o = json_tokener_parse("{\"capabilities\":{\"spec\":{\"baseline_capability_set\":null,"
                               "\"additional_enabled_capabilities\":[\"Insights\"]}}}");
        cr_assert_eq(cluster_from_json(o, &b, err, sizeof err), 0, "%s", err);
        cr_assert_eq(b.present, CL_F_CAPABILITIES);
        cr_assert_null(b.cap_spec.baseline_capability_set);
        cr_assert_str_eq(b.cap_spec.additional_enabled_capabilities.v[0], "Insights");
        cr_assert_not(b.has_cap_status);
        json_object_put(o);
        cluster_free(&b);
        static const char *const bad[] = {
                "{\"capabilities\":{\"spec\":{\"additional_enabled_capabilities\":\"Console\"}}}",
                "{\"capabilities\":{\"spec\":{\"additional_enabled_capabilities\":[1]}}}",
                "{\"capabilities\":{\"spec\":{\"baseline_capability_set\":7}}}",
                "{\"capabilities\":{\"spec\":[]}}",
                "{\"conditions\":[{\"status\":\"True\"}]}",
                "{\"payload_revision\":-1}",
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                o = json_tokener_parse(bad[i]);
                cr_assert_eq(cluster_from_json(o, &b, err, sizeof err), -EINVAL, "%s", bad[i]);
                json_object_put(o);
                cluster_free(&b);
        }
}

Test(model_host, applied_revision_round_trip) {
        struct host a, b;
        char err[128];
        host_init(&a);
        a.applied_revision = 4;
        json_object *o = host_to_json(&a, 0);
        cr_assert_str_eq(tu_jstr(o, "applied_revision"), "4");
        cr_assert_eq(host_from_json(o, &b, err, sizeof err), 0, "%s", err);
        cr_assert_eq(b.applied_revision, 4);
        cr_assert(b.present & HOST_F_APPLIED_REVISION);
        json_object_put(o);
        host_free(&a);
        host_free(&b);
}

Test(model_cluster, bad_labels_and_mode) {
        struct { const char *json; const char *needle; } cases[] = {
                { "{\"labels\":[]}", "\"labels\" must be object" },
                { "{\"labels\":{\"env\":1}}", "label \"env\" must be a string" },
                { "{\"labels\":{\"\":\"x\"}}", "label \"\"" },
                { "{\"labels\":{\"k\":\"0123456789012345678901234567890123456789012345678901234567890123\"}}",
                  "values at most 63" },
                { "{\"high_availability_mode\":\"Half\"}", "\"high_availability_mode\" must be one of Full|None" },
                { "{\"api_vip\":[]}", "\"api_vip\"" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                json_object *o = parse(cases[i].json);
                struct cluster c;
                char err[128] = "";
                cr_assert_eq(cluster_from_json(o, &c, err, sizeof err), -EINVAL, "case %zu", i);
                cr_assert(strstr(err, cases[i].needle), "case %zu: \"%s\" lacks %s", i, err, cases[i].needle);
                cluster_free(&c);
                json_object_put(o);
        }
        struct cluster c;
        cluster_init(&c);
        char key[16];
        for (int i = 0; i < MODEL_MAX_LABELS; i++) {
                snprintf(key, sizeof key, "k%d", i);
                cr_assert_eq(cluster_label_set(&c, key, "v"), 0);
        }
        cr_assert_eq(cluster_label_set(&c, "one-more", "v"), -E2BIG);
        cr_assert_eq(cluster_label_set(&c, "k0", "replaced"), 0, "replacing still works at the cap");
        cluster_free(&c);
}

/* ---- event and lists --------------------------------------------------- */

Test(model_event, roundtrip_and_errors) {
        struct event a, b;
        char err[128];
        event_init(&a);
        a.id = 17;
        a.time = strdup("2026-11-21T21:50:11Z");
        a.severity = EVENT_WARNING;
        a.category = EVENT_CAT_AGENT;
        a.infra_env_id = strdup("6f1c2b9e-0d2a-4c43-9a57-3a7e2d8f9b10");
        a.host_id = strdup("4c4c4544-0042-3510-8052-b4c04f563532");
        a.message = strdup("Host master-0: disconnected");
        json_object *o = event_to_json(&a, 0);
        cr_assert_eq(event_from_json(o, &b, err, sizeof err), 0, "%s", err);
        cr_assert_eq(b.id, 17);
        cr_assert_eq(b.severity, EVENT_WARNING);
        cr_assert_eq(b.category, EVENT_CAT_AGENT);
        cr_assert_null(b.cluster_id);
        cr_assert_str_eq(b.message, a.message);
        json_object_put(o);
        event_free(&b);

        o = parse("{\"severity\":\"fatal\"}");
        cr_assert_eq(event_from_json(o, &b, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "\"severity\" must be one of info|warning|error|critical"), "%s", err);
        json_object_put(o);
        event_free(&b);
        o = parse("{\"host_id\":\"h1\"}");
        cr_assert_eq(event_from_json(o, &b, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "\"host_id\""), "%s", err);
        json_object_put(o);
        event_free(&b);

        struct event_list l = { 0 };
        l.v = calloc(2, sizeof *l.v);
        l.n = 2;
        l.v[0] = a;
        event_init(&l.v[1]);
        l.v[1].id = 18;
        l.v[1].message = strdup("second");
        json_object *arr = event_list_to_json(&l, 0);
        cr_assert_eq(json_object_array_length(arr), 2);
        json_object_put(arr);
        event_list_free(&l);
        cr_assert_null(l.v);
}

Test(strv, join_with_a_limit) {
        _cleanup_strv_ struct strv v = { 0 };
        _cleanup_free_ char *none = strv_join(&v, ", ", 3);
        cr_expect_str_eq(none, "");
        for (const char *s = "abcde"; *s; s++) {
                char one[2] = { *s, 0 };
                cr_assert_eq(strv_push(&v, one), 0);
        }
        _cleanup_free_ char *all = strv_join(&v, ", ", 10), *some = strv_join(&v, "/", 2);
        cr_expect_str_eq(all, "a, b, c, d, e");
        cr_expect_str_eq(some, "a/b and 3 more");
}

/* A pull secret must be a JSON object; the refusal never quotes it. An SSH
 * key, like a pull secret, leaves musterd only as *_set. */
Test(model_secrets, pull_secrets_are_json_objects_and_not_shown) {
        static const char *const bad[] = { "{not json s3cr3t", "[\"s3cr3t\"]", "\"s3cr3t\"", "s3cr3t" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char err[512] = "";
                json_object *o = json_object_new_object();
                json_object_object_add(o, "pull_secret", json_object_new_string(bad[i]));
                struct infra_env ie;
                struct cluster c;
                infra_env_init(&ie);
                cluster_init(&c);
                cr_expect_eq(infra_env_from_json(o, &ie, err, sizeof err), -EINVAL, "%s", bad[i]);
                cr_expect(strstr(err, "pull_secret") && !strstr(err, "s3cr3t"), "%s", err);
                cr_expect_eq(cluster_from_json(o, &c, err, sizeof err), -EINVAL, "%s", bad[i]);
                cr_expect(!strstr(err, "s3cr3t"), "%s", err);
                infra_env_free(&ie);
                cluster_free(&c);
                json_object_put(o);
        }
        struct infra_env ie;
        infra_env_init(&ie);
        ie.pull_secret = strdup("{\"auths\":{}}");
        ie.ssh_authorized_key = strdup("ssh-ed25519 AAAA k");
        json_object *o = infra_env_to_json(&ie, 0);
        cr_expect(json_object_get_boolean(json_object_object_get(o, "pull_secret_set")));
        cr_expect(json_object_get_boolean(json_object_object_get(o, "ssh_authorized_key_set")));
        cr_expect_null(json_object_object_get(o, "pull_secret"));
        cr_expect_null(json_object_object_get(o, "ssh_authorized_key"));
        json_object_put(o);
        infra_env_free(&ie);
}
