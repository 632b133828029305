/* Operator catalogs against the real musterd on loopback, through the real
 * musterctl and the HTTP API (issue 15): the fixture catalogs
 * (tests/fixtures/catalogs) added, listed in priority order and shown with
 * their packages; a cluster creator reads but may not add or delete; a
 * malformed file is refused naming file, line and blob; a taken name is a
 * conflict; delete; a 10 MB catalog and one of 100,000 bundles are
 * answered, a body past the route's limit is 413; catalogs and what they
 * hold survive a restart of musterd. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;
static char community[4096], redhat[4096];

static void up(void) {
        tu_ctl_clean_env();
        /* musterctl as on an 80-column terminal: the layout these tests
         * check fits (piped, whole cells, is test_musterctl's). */
        setenv("COLUMNS", "80", 1);
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        cr_assert_eq(tu_musterd_start_in(&md, dir, NULL), 0, "musterd started");
        snprintf(community, sizeof community, "%s/catalogs/community", MUSTER_FIXTURES_DIR);
        snprintf(redhat, sizeof redhat, "%s/catalogs/redhat", MUSTER_FIXTURES_DIR);
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(catalogs, .init = up, .fini = down, .timeout = 300);

#define url(...) tu_url(md.base, __VA_ARGS__)

/* musterctl --server BASE --token-file ADMIN ARGS... (tu_ctl). */
#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })

/* musterctl -o json ARGS... parsed; exit 0 asserted (tu_ctl_json). */
#define CTL_JSON(...) tu_ctl_json(&md, (const char *const[]) { __VA_ARGS__, NULL })

static void add_fixtures(void) {
        char *out, *err;
        cr_assert_eq(CTL(&out, &err, "catalog", "add", "community", community, "--priority", "10"), 0, "%s", err);
        cr_assert(strstr(out, "catalog community added (priority 10): 4 packages, 4 channels, 10 bundles, "
                              "20 manifests from 24 files; 1 ignored (blobs or properties of unknown types)\n"),
                  "%s", out);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "catalog", "add", "redhat", redhat, "--priority", "0"), 0, "%s", err);
        cr_assert(strstr(out, "catalog redhat added (priority 0): 1 packages, 1 channels, 1 bundles, 2 manifests "
                              "from 3 files\n"),
                  "%s", out);
        free(out);
        free(err);
}

/* ---- add, list, show ---------------------------------------------------------- */

Test(catalogs, add_the_fixtures_list_by_priority_and_show) {
        add_fixtures();
        char *out, *err;
        cr_assert_eq(CTL(&out, &err, "catalog", "list"), 0, "%s", err);
        tu_assert_fits(out, NULL);
        const char *r = strstr(out, "\nredhat "), *c = strstr(out, "\ncommunity ");
        cr_assert(r && c && r < c, "redhat (0) before community (10):\n%s", out);
        free(out);
        free(err);
        json_object *l = CTL_JSON("catalog", "list");
        tu_assert_join(l, "name", "redhat,community");
        tu_assert_join(l, "priority", "0,10");
        tu_assert_join(l, "bundle_count", "1,10");
        tu_assert_join(l, "manifest_count", "2,20");
        tu_assert_join(l, "ignored_count", "0,1");
        cr_assert(!strncmp(tu_jstr(l, "1.digest"), "sha256:", 7));
        cr_assert_null(tu_json_get(l, "0.packages"), "lists carry no packages");
        json_object_put(l);

        json_object *o = CTL_JSON("catalog", "show", "community");
        json_object *pk = tu_json_get(o, "packages");
        tu_assert_join(pk, "name", "dbop,etcd,myapp,prometheus");
        tu_assert_join(pk, "default_channel", "stable,alpha,stable,beta");
        tu_assert_join(tu_json_get(o, "packages.1.channels.0.entries"), "version", "0.9.0,0.9.2,0.9.4");
        tu_assert_join(tu_json_get(o, "packages.1.channels.0.entries"), "replaces",
                    "?,etcdoperator.v0.9.0,etcdoperator.v0.9.2");
        cr_assert_str_eq(tu_jstr(o, "packages.1.channels.0.entries.2.skip_range"), ">=0.9.0 <0.9.4");
        tu_assert_join(tu_json_get(o, "packages.3.channels.0.entries"), "bundle",
                    "prometheusoperator.0.26.0,prometheusoperator.0.27.0,prometheusoperator.0.32.0");
        cr_assert_str_eq(tu_jstr(o, "owner"), "admin");
        /* By id too, through the API. */
        json_object *byid;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs/%s", tu_jstr(o, "id")), md.admin_token, NULL, &byid),
                     200);
        cr_assert_str_eq(tu_jstr(byid, "name"), "community");
        json_object_put(byid);
        json_object_put(o);

        cr_assert_eq(CTL(&out, &err, "catalog", "show", "community"), 0, "%s", err);
        /* The digest whole on its line, to be copied: never cut or wrapped. */
        const char *dl = strstr(out, "\nDigest:    sha256:");
        cr_assert_not_null(dl, "%s", out);
        char *digest_line = strndup(dl + 1, strcspn(dl + 1, "\n"));
        cr_assert_eq(strlen(digest_line), strlen("Digest:    sha256:") + 64, "%s", out);
        tu_assert_fits(out, digest_line);
        free(digest_line);
        cr_assert(strstr(out, "Priority:") && strstr(out, "Bundles:") && strstr(out, "Ignored:"), "%s", out);
        cr_assert(strstr(out, "etcd") && strstr(out, "alpha") && strstr(out, "0.9.4"), "%s", out);
        cr_assert(strstr(out, "0.26.0 0.27.0 0.32.0"), "the versions of a channel:\n%s", out);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "catalog", "show", "nope"), 3);
        cr_assert(strstr(err, "catalog nope not found"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/events"), md.admin_token, NULL, &o), 200);
        cr_assert(strstr(json_object_to_json_string(o), "catalog community (priority 10) added by admin"));
        json_object_put(o);
}

/* ---- who may ------------------------------------------------------------------- */

Test(catalogs, a_cluster_creator_reads_but_may_not_add_or_delete) {
        add_fixtures();
        char *alice = tu_token(&md, "cluster-creator", "alice"), path[4200];
        snprintf(path, sizeof path, "%s/alice.token", dir);
        cr_assert_eq(tu_write_file(dir, "alice.token", alice), 0);
        char *out, *err;
        const char *add[] = { "catalog", "add", "mine", redhat, "--priority", "1", NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, path, add), 1);
        cr_assert(strstr(err, "infra-admin"), "%s", err);
        free(out);
        free(err);
        const char *list[] = { "-o", "json", "catalog", "list", NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, path, list), 0, "%s", err);
        cr_assert(strstr(out, "\"redhat\"") && strstr(out, "\"community\""), "%s", out);
        free(out);
        free(err);
        json_object *o;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs/redhat"), alice, NULL, &o), 200);
        char *id = strdup(tu_jstr(o, "id"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/catalogs/%s", id), alice, NULL, NULL), 403);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/catalogs"), alice,
                                  "{\"name\":\"x\",\"priority\":0,\"files\":[]}", NULL), 403);
        const char *del[] = { "catalog", "delete", "redhat", NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, path, del), 1);
        free(out);
        free(err);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs/%s", id), md.admin_token, NULL, NULL), 200, "kept");
        /* Agents read no catalogs. */
        char *agent;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "pool", NULL, &agent), 201);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs"), agent, NULL, NULL), 403);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs/redhat"), agent, NULL, NULL), 403);
        free(agent);
        free(id);
        free(alice);
}

/* ---- bad input ------------------------------------------------------------------ */

Test(catalogs, a_malformed_file_is_refused_naming_file_line_and_blob) {
        char bad[4200], *out, *err;
        snprintf(bad, sizeof bad, "%s/bad", dir);
        cr_assert_eq(tu_write_file(bad, "pkg/catalog.yaml",
                                   "schema: olm.package\nname: p\ndefaultChannel: s\n---\n"
                                   "schema: olm.bundle\npackage: p\nname: p.v1\nproperties:\n"
                                   "- {type: olm.package, value: {packageName: p, version: '1.0'}}\n"),
                     0);
        cr_assert_eq(CTL(&out, &err, "catalog", "add", "bad", bad, "--priority", "3"), 1);
        cr_assert(strstr(err, "400") || strstr(err, "pkg/catalog.yaml"), "%s", err);
        cr_assert(strstr(err, "pkg/catalog.yaml:5: olm.bundle \"p.v1\": property olm.package: version \"1.0\" is not "
                              "a semantic version"),
                  "%s", err);
        free(out);
        free(err);
        json_object *o;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/catalogs"), md.admin_token,
                                  "{\"name\":\"j\",\"priority\":0,\"files\":[{\"path\":\"a/c.json\",\"content\":"
                                  "\"{\\\"schema\\\":\\\"olm.package\\\",\\n\\\"name\\\":\\\"p\\\",\\n\\\"defaultChannel\\\": }\"}]}",
                                  &o),
                     400);
        cr_assert(strstr(tu_jstr(o, "reason"), "a/c.json:3: JSON: "), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        static const char *bodies[][2] = {
                { "{\"name\":\"j\",\"priority\":0,\"files\":[{\"path\":\"../x.yaml\",\"content\":\"\"}]}", "\"..\"" },
                { "{\"name\":\"j\",\"priority\":0,\"files\":[{\"path\":\"/x.yaml\",\"content\":\"\"}]}", "absolute" },
                { "{\"name\":\"j\",\"priority\":0,\"files\":[{\"path\":\"x\"}]}", "path and content" },
                { "{\"name\":\"j\",\"priority\":0}", "field \"files\"" },
                { "{\"name\":\"j\",\"priority\":\"high\",\"files\":[]}", "field \"priority\"" },
                { "{\"name\":\"j\",\"priority\":5000,\"files\":[]}", "from -1000 to 1000" },
                { "{\"name\":\"J_1\",\"priority\":0,\"files\":[]}", "DNS label" },
                { "{\"priority\":0,\"files\":[]}", "field \"name\"" },
                { "{\"name\":\"j\",\"priority\":0,\"files\":[]}", "no olm.package" },
        };
        for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
                cr_assert_eq(tu_http_json("POST", url("/api/v2/catalogs"), md.admin_token, bodies[i][0], &o), 400, "%s",
                             bodies[i][0]);
                cr_assert(strstr(tu_jstr(o, "reason"), bodies[i][1]), "%s: %s", bodies[i][0], tu_jstr(o, "reason"));
                json_object_put(o);
        }
        cr_assert_eq(CTL(&out, &err, "catalog", "add", "x", bad), 2, "--priority is required");
        cr_assert(strstr(err, "--priority is required"), "%s", err);
        free(out);
        free(err);
        json_object *l;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs"), md.admin_token, NULL, &l), 200);
        cr_assert_eq(json_object_array_length(l), 0, "nothing was added");
        json_object_put(l);
}

Test(catalogs, a_taken_name_is_a_conflict) {
        add_fixtures();
        char *out, *err;
        cr_assert_eq(CTL(&out, &err, "catalog", "add", "community", redhat, "--priority", "1"), 1);
        cr_assert(strstr(err, "409") || strstr(err, "catalog community exists"), "%s", err);
        cr_assert(strstr(err, "catalog community exists"), "%s", err);
        free(out);
        free(err);
        json_object *o = CTL_JSON("catalog", "show", "community");
        cr_assert_str_eq(tu_jstr(o, "priority"), "10", "the first one stays");
        json_object_put(o);
}

Test(catalogs, delete_then_list) {
        add_fixtures();
        char *out, *err;
        cr_assert_eq(CTL(&out, &err, "catalog", "delete", "community"), 0, "%s", err);
        cr_assert(strstr(out, "catalog community deleted"), "%s", out);
        free(out);
        free(err);
        json_object *l = CTL_JSON("catalog", "list");
        tu_assert_join(l, "name", "redhat");
        json_object_put(l);
        cr_assert_eq(CTL(&out, &err, "catalog", "delete", "community"), 3);
        cr_assert(strstr(err, "not found"), "%s", err);
        free(out);
        free(err);
        json_object *o;
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/catalogs/redhat"), md.admin_token, NULL, &o), 400,
                     "the API deletes by id");
        json_object_put(o);
        cr_assert_eq(tu_http_json("DELETE", url("/api/v2/catalogs/0b2c6f1e-3d6a-4c1f-9a51-7d1f2e3c4b5a"),
                                  md.admin_token, NULL, NULL), 404);
        /* Added again, with another priority. */
        cr_assert_eq(CTL(&out, &err, "catalog", "add", "community", community, "--priority", "-5"), 0, "%s", err);
        free(out);
        free(err);
        l = CTL_JSON("catalog", "list");
        tu_assert_join(l, "name", "community,redhat");
        json_object_put(l);
}

/* ---- size ---------------------------------------------------------------------------- */

/* POST name with one file `path` of `text`: the status; the answer in *o. */
static long post_one(const char *name, const char *path, const char *text, json_object **o) {
        json_object *body = json_object_new_object(), *files = json_object_new_array(), *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string(path));
        json_object_object_add(f, "content", json_object_new_string(text));
        json_object_array_add(files, f);
        json_object_object_add(body, "name", json_object_new_string(name));
        json_object_object_add(body, "priority", json_object_new_int(5));
        json_object_object_add(body, "files", files);
        const char *t = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
        char *answer = NULL;
        long code = tu_http("POST", url("/api/v2/catalogs"), md.admin_token, t, strlen(t), &answer);
        *o = answer ? json_tokener_parse(answer) : NULL;
        free(answer);
        json_object_put(body);
        return code;
}

Test(catalogs, a_ten_megabyte_catalog_is_accepted) {
        /* 2,500 bundles, each with a ConfigMap of 3 KiB as its bundle object:
         * more than 10 MB of text, with quotes to escape in the request. */
        size_t n = 2500, cap = 1024 + n * 6000;
        char *t = malloc(cap), *p = t, *cm = malloc(4096), *b64 = malloc(8192);
        p += sprintf(p, "{\"schema\":\"olm.package\",\"name\":\"big\",\"defaultChannel\":\"stable\"}\n"
                        "{\"schema\":\"olm.channel\",\"package\":\"big\",\"name\":\"stable\",\"entries\":[");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%s{\"name\":\"big.v1.%zu.0\"}", i ? "," : "", i);
        p += sprintf(p, "]}\n");
        for (size_t i = 0; i < n; i++) {
                int k = snprintf(cm, 4096, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                                           "\"c%zu\"},\"data\":{\"blob\":\"%03000zu\"}}", i, i);
                static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
                char *o = b64;
                for (int j = 0; j < k; j += 3) {
                        unsigned v = (unsigned char) cm[j] << 16 | (j + 1 < k ? (unsigned char) cm[j + 1] << 8 : 0) |
                                     (j + 2 < k ? (unsigned char) cm[j + 2] : 0);
                        *o++ = a[v >> 18 & 63];
                        *o++ = a[v >> 12 & 63];
                        *o++ = j + 1 < k ? a[v >> 6 & 63] : '=';
                        *o++ = j + 2 < k ? a[v & 63] : '=';
                }
                *o = 0;
                p += sprintf(p, "{\"schema\":\"olm.bundle\",\"package\":\"big\",\"name\":\"big.v1.%zu.0\","
                                "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"big\","
                                "\"version\":\"1.%zu.0\"}},{\"type\":\"olm.bundle.object\",\"value\":{\"data\":\"%s\"}}]}\n",
                             i, i, b64);
        }
        cr_assert_gt((size_t) (p - t), (size_t) 10 * 1000 * 1000, "%zu bytes", (size_t) (p - t));
        json_object *o;
        long code = post_one("ten-mb", "big.json", t, &o);
        cr_assert_eq(code, 201, "%ld %s", code, o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "bundle_count"), "2500");
        cr_assert_str_eq(tu_jstr(o, "manifest_count"), "2500");
        json_object_put(o);
        free(t);
        free(cm);
        free(b64);
}

Test(catalogs, a_catalog_of_a_hundred_thousand_bundles_is_answered) {
        size_t n = 100000, cap = 1024 + n * 240;
        char *t = malloc(cap), *p = t;
        p += sprintf(p, "{\"schema\":\"olm.package\",\"name\":\"huge\",\"defaultChannel\":\"stable\"}\n"
                        "{\"schema\":\"olm.channel\",\"package\":\"huge\",\"name\":\"stable\",\"entries\":[");
        for (size_t i = 0; i < n; i++)
                p += i ? sprintf(p, ",{\"name\":\"h.%zu\",\"replaces\":\"h.%zu\"}", i, i - 1)
                       : sprintf(p, "{\"name\":\"h.0\"}");
        p += sprintf(p, "]}\n");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "{\"schema\":\"olm.bundle\",\"package\":\"huge\",\"name\":\"h.%zu\",\"properties\":"
                                "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"huge\",\"version\":\"%zu.%zu.0\"}}]}\n",
                             i, i / 1000, i % 1000);
        cr_assert_lt((size_t) (p - t), cap);
        json_object *o;
        /* Bounded by tu_http's own timeout (30 s). */
        long code = post_one("huge", "huge.json", t, &o);
        cr_assert_eq(code, 201, "%ld %s", code, o ? json_object_to_json_string(o) : "");
        cr_assert_str_eq(tu_jstr(o, "bundle_count"), "100000");
        json_object_put(o);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs/huge"), md.admin_token, NULL, &o), 200);
        cr_assert_eq(json_object_array_length(tu_json_get(o, "packages.0.channels.0.entries")), n);
        cr_assert_str_eq(tu_jstr(o, "packages.0.channels.0.entries.99999.version"), "99.999.0");
        json_object_put(o);
        /* One more bundle than a catalog may hold is refused in words. */
        p += sprintf(p, "{\"schema\":\"olm.bundle\",\"package\":\"huge\",\"name\":\"h.extra\",\"properties\":"
                        "[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"huge\",\"version\":\"999.0.0\"}}]}\n");
        code = post_one("huge2", "huge.json", t, &o);
        cr_assert_eq(code, 413, "%ld", code);
        cr_assert(strstr(tu_jstr(o, "reason"), "huge.json:"), "%s", tu_jstr(o, "reason"));
        cr_assert(strstr(tu_jstr(o, "reason"), "more than 100000 bundles"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        free(t);
}

/* A body of `n` bytes of catalog text in one file (a YAML comment fills it). */
static long post_sized(const char *name, size_t n, json_object **o) {
        static const char head[] = "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\n"
                                   "package: p\nname: s\nentries: [{name: p.v1}]\n---\nschema: olm.bundle\n"
                                   "package: p\nname: p.v1\nproperties:\n"
                                   "- {type: olm.package, value: {packageName: p, version: 1.0.0}}\n# ";
        char *t = malloc(n + 1);
        memcpy(t, head, sizeof head - 1);
        memset(t + sizeof head - 1, 'x', n - (sizeof head - 1));
        t[n] = '\0';
        long code = post_one(name, "c.yaml", t, o);
        free(t);
        return code;
}

Test(catalogs, the_route_takes_large_bodies_up_to_its_own_limit) {
        char conf[4200];
        snprintf(conf, sizeof conf, "%s/small.conf", dir);
        cr_assert_eq(tu_write_file(dir, "small.conf", "[server]\nmax_body_bytes = 64KiB\nmax_inventory_bytes = 32KiB\n"
                                                      "max_release_bytes = 1MiB\n"), 0);
        tu_musterd_stop(&md, SIGTERM);
        cr_assert_eq(tu_musterd_restart(&md, conf), 0);
        json_object *o;
        cr_assert_eq(post_sized("half", 512 * 1024, &o), 201, "past max_body_bytes, within max_release_bytes");
        json_object_put(o);
        cr_assert_eq(post_sized("two", 2 * 1024 * 1024, &o), 413);
        json_object_put(o);
        json_object *l;
        cr_assert_eq(tu_http_json("GET", url("/api/v2/catalogs"), md.admin_token, NULL, &l), 200);
        tu_assert_join(l, "name", "half");
        json_object_put(l);
}

/* ---- restart ----------------------------------------------------------------------------- */

Test(catalogs, catalogs_survive_a_restart) {
        add_fixtures();
        json_object *before = CTL_JSON("catalog", "show", "community");
        json_object *list_before = CTL_JSON("catalog", "list");
        tu_musterd_stop(&md, SIGTERM);
        cr_assert_eq(tu_musterd_restart(&md, NULL), 0, "musterd started again");
        json_object *after = CTL_JSON("catalog", "show", "community");
        json_object *list_after = CTL_JSON("catalog", "list");
        cr_assert_str_eq(json_object_to_json_string(list_after), json_object_to_json_string(list_before));
        cr_assert_str_eq(json_object_to_json_string(after), json_object_to_json_string(before),
                         "parsed again from the stored files, the same catalog");
        json_object_put(before);
        json_object_put(after);
        json_object_put(list_before);
        json_object_put(list_after);
        char *out, *err;
        cr_assert_eq(CTL(&out, &err, "catalog", "add", "redhat", redhat, "--priority", "0"), 1, "the name is kept");
        free(out);
        free(err);
}

Test(catalogs, help_on_every_catalog_command) {
        static const char *const verbs[] = { "add", "list", "show", "delete" };
        char *out, want[64];
        for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
                cr_assert_eq(CTL(&out, NULL, "catalog", verbs[i], "--help"), 0, "catalog %s --help", verbs[i]);
                snprintf(want, sizeof want, "Usage: musterctl catalog %s", verbs[i]);
                cr_assert(strstr(out, want), "%s", out);
                tu_assert_fits(out, NULL);
                free(out);
        }
        cr_assert_eq(CTL(&out, NULL, "catalog", "--help"), 0);
        cr_assert(strstr(out, "add") && strstr(out, "delete"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
}
