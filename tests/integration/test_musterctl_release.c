/* musterctl's issue-4 commands against the real musterd on loopback:
 * release import (exact files, the OS image path made absolute, limits),
 * list, show with its preview under several specs (rows as the fixture
 * README says), cluster create/set with capabilities, cluster
 * capabilities with the implicit condition, upgrade, install with the
 * failing validations, payload revisions, watch (progress, success,
 * failure, timeout) and the signing key. The agent side of an install is
 * played over HTTP as muster-agent sends it. Every table line fits 80
 * columns. */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static struct tu_musterd md;
static char *dir;
static char rel15[4096], rel16[4096];

/* The fixture release VERSION built into DIR/state/images/rel-VERSION (dst), the default
 * releases folder. */
static void make_release(const char *version, char *dst, size_t n) {
        char src[4096];
        snprintf(src, sizeof src, "%s/releases/%s", MUSTER_FIXTURES_DIR, version);
        snprintf(dst, n, "%s/state/images/rel-%s", dir, version);
        tu_release_build(src, dst);
}

static void up(void) {
        tu_ctl_clean_env();
        /* musterctl as on an 80-column terminal: the layout these tests
         * check fits (piped, whole cells, is test_musterctl's). */
        setenv("COLUMNS", "80", 1);
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        /* Low minimums: the captured QEMU server is a good single-node cluster. */
        cr_assert_eq(tu_musterd_start_in(&md, dir, TU_CONFIG_LOW_MINIMUMS), 0, "musterd started");
        make_release("4.15.0", rel15, sizeof rel15);
        make_release("4.16.0", rel16, sizeof rel16);
}

static void down(void) {
        tu_musterd_free(&md);
        tu_rm_rf(dir);
        free(dir);
}

TestSuite(ctl_release, .init = up, .fini = down);

#define url(...) tu_url(md.base, __VA_ARGS__)

/* musterctl --server BASE --token-file ADMIN ARGS... (tu_ctl). */
#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })

static json_object *parse(const char *s) {
        json_object *o = json_tokener_parse(s);
        cr_assert_not_null(o, "-o json prints JSON:\n%s", s);
        return o;
}

/* musterctl -o json ARGS... parsed; exit 0 asserted. */
#define FITS(...) tu_ctl_assert_fits(md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })

/* Every line of s fits 80 columns but those of a key/value block's ids and
 * digests (whole, to be copied): "Digest:", "Signature:" and the like. */
static void fits_but_digests(const char *s) {
        static const char *const whole[] = { "Digest:", "Signature:", "Image SHA-256:", "OS image:", "Cluster:" };
        for (const char *p = s; *p;) {
                size_t n = strcspn(p, "\n"), w = 0;
                bool skip = false;
                for (size_t k = 0; k < sizeof whole / sizeof *whole; k++)
                        skip |= strncmp(p, whole[k], strlen(whole[k])) == 0;
                for (size_t i = 0; i < n; i++)
                        w += ((unsigned char) p[i] & 0xC0) != 0x80;
                cr_assert(skip || w <= 80, "a line of %zu columns:\n%.*s\nin:\n%s", w, (int) n, p, s);
                p += n + (p[n] == '\n');
        }
}

#define CTL_JSON(...)                                                                                    \
        ({                                                                                               \
                char *o_ = NULL, *e_ = NULL;                                                             \
                int r_ = CTL(&o_, &e_, "-o", "json", __VA_ARGS__);                                       \
                cr_assert_eq(r_, 0, "musterctl %s: exit %d: %s", #__VA_ARGS__, r_, e_ ? e_ : "");        \
                json_object *j_ = parse(o_);                                                             \
                free(o_);                                                                                \
                free(e_);                                                                                \
                j_;                                                                                      \
        })

static void import_both(void) {
        char *out, *err;
        cr_assert_eq(CTL(&out, &err, "release", "import", rel15), 0, "%s", err);
        cr_assert(strstr(out, "release 4.15.0 imported: 13 manifests from 12 files"), "%s", out);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "release", "import", rel16), 0, "%s", err);
        cr_assert(strstr(out, "release 4.16.0 imported"), "%s", out);
        free(out);
        free(err);
}

/* The "path"s of a preview list, sorted, joined by spaces. */
static char *paths(json_object *list, const char *reason) {
        size_t n = json_object_array_length(list), len = 1;
        char **v = calloc(n + 1, sizeof *v);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(list, i);
                if (reason && strcmp(tu_jstr(e, "reason") ?: "", reason) != 0)
                        continue;
                v[k++] = (char *) tu_jstr(e, "path");
                len += strlen(v[k - 1]) + 1;
        }
        for (size_t i = 0; i < k; i++)
                for (size_t j = i + 1; j < k; j++)
                        if (strcmp(v[j], v[i]) < 0) {
                                char *t = v[i];
                                v[i] = v[j];
                                v[j] = t;
                        }
        char *s = calloc(1, len);
        for (size_t i = 0; i < k; i++) {
                if (i)
                        strcat(s, " ");
                strcat(s, v[i]);
        }
        free(v);
        return s;
}

/* A whole file as a string (malloc'd). */
static char *slurp(const char *path) {
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f, "%s", path);
        char *buf = NULL;
        size_t cap = 0, n = 0;
        for (;;) {
                if (n + 4096 + 1 > cap)
                        buf = realloc(buf, cap = cap * 2 + 8192);
                size_t k = fread(buf + n, 1, cap - n - 1, f);
                n += k;
                if (k == 0)
                        break;
        }
        fclose(f);
        buf[n] = '\0';
        return buf;
}

/* Number of table rows under the header line that follows `title`. */
static int rows_after(const char *s, const char *title) {
        const char *p = strstr(s, title);
        cr_assert_not_null(p, "\"%s\" in:\n%s", title, s);
        p = strchr(p, '\n');
        cr_assert_not_null(p);
        p = strchr(p + 1, '\n'); /* the header */
        cr_assert_not_null(p);
        int n = 0;
        for (p++; *p && *p != '\n'; p = strchr(p, '\n') + 1, n++)
                if (!strchr(p, '\n'))
                        return n + 1;
        return n;
}

/* ---- help ---------------------------------------------------------------------- */

Test(ctl_release, help_for_every_new_command) {
        static const char *const cmds[][2] = {
                { "release", "import" }, { "release", "list" },    { "release", "show" },
                { "release", "delete" }, { "cluster", "create" },  { "cluster", "set" },
                { "cluster", "capabilities" }, { "cluster", "install" }, { "cluster", "upgrade" },
                { "cluster", "payload" }, { "cluster", "watch" },  { "cluster", "reset" }, { "cluster", "cancel" },
                { "signing-key", NULL },
        };
        char *out;
        cr_assert_eq(CTL(&out, NULL, "--help"), 0);
        tu_assert_fits(out, NULL);
        for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
                char want[128];
                snprintf(want, sizeof want, "  %s%s%s ", cmds[i][0], cmds[i][1] ? " " : "", cmds[i][1] ?: "");
                cr_assert(strstr(out, want), "musterctl --help lists %s:\n%s", want, out);
        }
        free(out);
        for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
                char want[128];
                if (cmds[i][1])
                        cr_assert_eq(CTL(&out, NULL, cmds[i][0], cmds[i][1], "--help"), 0);
                else
                        cr_assert_eq(CTL(&out, NULL, cmds[i][0], "--help"), 0);
                snprintf(want, sizeof want, "Usage: musterctl %s%s%s", cmds[i][0], cmds[i][1] ? " " : "",
                         cmds[i][1] ?: "");
                cr_assert(strstr(out, want), "%s", out);
                tu_assert_fits(out, NULL);
                free(out);
        }
        cr_assert_eq(CTL(&out, NULL, "release", "--help"), 0);
        cr_assert(strstr(out, "import") && strstr(out, "show"), "%s", out);
        free(out);
}

/* ---- releases ------------------------------------------------------------------ */

Test(ctl_release, import_list_show_and_previews) {
        char *out, *err;
        import_both();
        cr_assert_eq(CTL(&out, &err, "release", "import", rel15), 1, "a version is imported once");
        cr_assert(strstr(err, "musterctl: ") && strstr(err, "(HTTP 409)"), "%s", err);
        free(out);
        free(err);

        /* list: table, wide, json; the image path went absolute. */
        cr_assert_eq(CTL(&out, NULL, "release", "list"), 0);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "VERSION") && strstr(out, "4.15.0") && strstr(out, "4.16.0"), "%s", out);
        free(out);
        cr_assert_eq(CTL(&out, NULL, "-o", "wide", "release", "list"), 0);
        cr_assert(strstr(out, "self-managed-high-availability"), "%s", out);
        free(out);
        json_object *l = CTL_JSON("release", "list");
        cr_assert_eq(json_object_array_length(l), 2);
        char img[4200], real[PATH_MAX];
        snprintf(img, sizeof img, "%s/os.img", rel15);
        cr_assert_not_null(realpath(img, real));
        for (size_t i = 0; i < 2; i++) {
                json_object *r = json_object_array_get_idx(l, i);
                if (strcmp(tu_jstr(r, "version"), "4.15.0") != 0)
                        continue;
                cr_assert_str_eq(tu_jstr(r, "os_image.path"), real);
                cr_assert_eq(json_object_get_int(tu_json_get(r, "manifest_count")), 13);
        }
        json_object_put(l);

        /* show, default spec (vCurrent): 10 files in, 3 out, each for its reason. */
        json_object *s = CTL_JSON("release", "show", "4.15.0");
        cr_assert_str_eq(tu_jstr(s, "version"), "4.15.0");
        cr_assert(json_object_object_get_ex(tu_json_get(s, "capability_sets"), "v4.11", NULL), "%s",
                  json_object_to_json_string(s));
        char *in = paths(tu_json_get(s, "preview.included"), NULL);
        cr_assert_str_eq(in, "0000_03_config-operator_01_proxy.crd.yaml 0000_20_namespace.json "
                             "0000_30_cluster-baremetal-operator_05_deployment.0.yaml "
                             "0000_30_cluster-baremetal-operator_05_deployment.1.yaml "
                             "0000_50_cluster-samples-operator_06-operator.yaml "
                             "0000_50_console-operator_07-downloads-deployment.yaml "
                             "0000_50_insights-operator_10-prometheus-rule.yaml 0000_80_hosted-only-configmap.yaml "
                             "0000_90_console_01-console-insights-plugin.yaml 99_site-config.yml");
        free(in);
        json_object *ex = tu_json_get(s, "preview.excluded");
        cr_assert_eq(json_object_array_length(ex), 3);
        char *fs = paths(ex, "feature-set"), *pr = paths(ex, "profile"), *un = paths(ex, "capability-unknown");
        cr_assert_str_eq(fs, "0000_10_config-operator_01_featuregate-techpreview.crd.yaml");
        cr_assert_str_eq(pr, "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml");
        cr_assert_str_eq(un, "0000_70_future-operator.yaml");
        free(fs);
        free(pr);
        free(un);
        json_object_put(s);

        /* Baseline None + baremetal, Console: the README's 8 files. */
        s = CTL_JSON("release", "show", "4.15.0", "--baseline", "None", "--enable", "baremetal", "--enable", "Console");
        in = paths(tu_json_get(s, "preview.included"), NULL);
        cr_assert_str_eq(in, "0000_03_config-operator_01_proxy.crd.yaml 0000_20_namespace.json "
                             "0000_30_cluster-baremetal-operator_05_deployment.0.yaml "
                             "0000_30_cluster-baremetal-operator_05_deployment.1.yaml "
                             "0000_50_console-operator_07-downloads-deployment.yaml "
                             "0000_50_insights-operator_10-prometheus-rule.yaml 0000_80_hosted-only-configmap.yaml "
                             "99_site-config.yml");
        free(in);
        char *dis = paths(tu_json_get(s, "preview.excluded"), "capability-disabled");
        cr_assert_str_eq(dis, "0000_50_cluster-samples-operator_06-operator.yaml "
                              "0000_90_console_01-console-insights-plugin.yaml");
        free(dis);
        json_object_put(s);

        /* The same as a table: counts, reasons, 80 columns. */
        unsetenv("COLUMNS"); /* piped: a line per manifest, counted below */
        cr_assert_eq(CTL(&out, &err, "release", "show", "4.15.0", "--baseline", "None", "--enable",
                         "baremetal,Console"), 0, "%s", err);
        free(err);
        FITS("release", "show", "4.15.0", "--baseline", "None", "--enable", "baremetal,Console");
        setenv("COLUMNS", "80", 1);
        cr_assert(strstr(out, "Included manifests (8):") && strstr(out, "Excluded manifests (5):"), "%s", out);
        cr_assert_eq(rows_after(out, "Included manifests (8):"), 8, "%s", out);
        cr_assert_eq(rows_after(out, "Excluded manifests (5):"), 5, "%s", out);
        cr_assert(strstr(out, "capability-disabled") && strstr(out, "capability-unknown") &&
                  strstr(out, "feature-set") && strstr(out, "profile"), "%s", out);
        cr_assert(strstr(out, "Set v4.11:") && strstr(out, "OS image:") && strstr(out, real), "%s", out);
        free(out);
        cr_assert_eq(CTL(&out, NULL, "-o", "wide", "release", "show", "4.15.0"), 0);
        cr_assert(strstr(out, "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml"), "%s", out);
        cr_assert(strstr(out, "include.release.openshift.io") || strstr(out, "profile"), "%s", out);
        free(out);

        /* An excluded id, another feature set, another profile. */
        s = CTL_JSON("release", "show", "4.15.0", "--exclude", "internal-openshift-hosted");
        char *eid = paths(tu_json_get(s, "preview.excluded"), "excluded-id");
        cr_assert_str_eq(eid, "0000_80_hosted-only-configmap.yaml");
        free(eid);
        json_object_put(s);
        s = CTL_JSON("release", "show", "4.15.0", "--feature-set", "TechPreviewNoUpgrade");
        in = paths(tu_json_get(s, "preview.included"), NULL);
        cr_assert(strstr(in, "featuregate-techpreview"), "%s", in);
        free(in);
        json_object_put(s);
        s = CTL_JSON("release", "show", "4.15.0", "--profile", "ibm-cloud-managed");
        in = paths(tu_json_get(s, "preview.included"), NULL);
        cr_assert_str_eq(in, "0000_20_namespace.json "
                             "0000_50_cluster-storage-operator_10_deployment-ibm-cloud-managed.yaml "
                             "99_site-config.yml");
        free(in);
        json_object_put(s);

        /* 4.16.0: ImageRegistry is known; the Insights rule needs Insights. */
        s = CTL_JSON("release", "show", "4.16.0", "--baseline", "None", "--enable", "baremetal,Console");
        dis = paths(tu_json_get(s, "preview.excluded"), "capability-disabled");
        cr_assert(strstr(dis, "0000_50_insights-operator_10-prometheus-rule.yaml") &&
                  strstr(dis, "0000_50_cluster-image-registry-operator_07-operator.yaml"), "%s", dis);
        free(dis);
        json_object_put(s);

        /* The server's reasons, exit 1. */
        cr_assert_eq(CTL(&out, &err, "release", "show", "4.15.0", "--baseline", "v9"), 1);
        cr_assert(strstr(err, "v9") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "release", "show", "4.15.0", "--enable", "Bogus"), 1);
        cr_assert(strstr(err, "Bogus") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "release", "show", "9.9.9"), 3);
        cr_assert(strstr(err, "(HTTP 404)"), "%s", err);
        free(out);
        free(err);

        /* delete: gone from the list. */
        cr_assert_eq(CTL(&out, NULL, "release", "delete", "4.16.0"), 0);
        cr_assert(strstr(out, "release 4.16.0 deleted"), "%s", out);
        free(out);
        l = CTL_JSON("release", "list");
        cr_assert_eq(json_object_array_length(l), 1);
        json_object_put(l);
}

/* A release directory as users keep them: other files, subdirectories,
 * hidden files; what is sent is release.yaml and the manifests only. */
Test(ctl_release, import_sends_the_release_files_only) {
        char *out, *err, rel[4200], path[4300];
        snprintf(rel, sizeof rel, "%s/state/images/mine", dir);
        cr_assert_eq(tu_runf(NULL, NULL, "cp -r %s %s", rel15, rel), 0);
        cr_assert_eq(tu_runf(NULL, NULL, "sed -i s/4.15.0/4.15.1-custom/ %s/release.yaml", rel), 0);
        static const char cm[] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: default\n";
        char doc[256];
        snprintf(doc, sizeof doc, cm, "not-sent");
        cr_assert_eq(tu_write_file(rel, "sub/inside.yaml", doc), 0);
        cr_assert_eq(tu_write_file(rel, ".hidden.yaml", doc), 0);
        cr_assert_eq(tu_write_file(rel, "notes.txt", "not a manifest\n"), 0);
        cr_assert_eq(tu_write_file(rel, "README.md", "# not a manifest\n"), 0);
        cr_assert_eq(tu_runf(NULL, NULL, "mkdir %s/dir.yaml", rel), 0);
        snprintf(doc, sizeof doc, cm, "sent-too");
        cr_assert_eq(tu_write_file(rel, "extra.yaml", doc), 0);
        /* A relative path in quotes, somewhere else. */
        cr_assert_eq(tu_runf(NULL, NULL, "mkdir %s/images", rel), 0);
        cr_assert_eq(tu_runf(NULL, NULL, "mv %s/os.img %s/images/os.img", rel, rel), 0);
        snprintf(path, sizeof path, "%s/release.yaml", rel);
        char *yaml = slurp(path), *at = strstr(yaml, "path: os.img\n");
        cr_assert_not_null(at, "%s", yaml);
        *at = '\0';
        char *edited = NULL;
        cr_assert(asprintf(&edited, "%spath: \"images/os.img\"  # moved\n%s", yaml, at + strlen("path: os.img\n")) > 0);
        cr_assert_eq(tu_write_file(rel, "release.yaml", edited), 0);
        free(yaml);
        free(edited);

        cr_assert_eq(CTL(&out, &err, "release", "import", rel), 0, "%s", err);
        cr_assert(strstr(out, "release 4.15.1-custom imported: 14 manifests from 13 files"), "%s", out);
        free(out);
        free(err);
        json_object *r = CTL_JSON("release", "show", "4.15.1-custom");
        char real[PATH_MAX];
        snprintf(path, sizeof path, "%s/images/os.img", rel);
        cr_assert_not_null(realpath(path, real));
        cr_assert_str_eq(tu_jstr(r, "os_image.path"), real);
        json_object *ms = tu_json_get(r, "manifests");
        cr_assert_not_null(ms, "GET /releases/V lists the manifests");
        const char *all = json_object_to_json_string(ms);
        cr_assert(strstr(all, "sent-too") && !strstr(all, "not-sent"), "%s", all);
        cr_assert(strstr(all, "0000_20_namespace.json") && strstr(all, "99_site-config.yml"), "%s", all);
        json_object_put(r);

        /* Refusals, each with its reason and exit 1. */
        cr_assert_eq(CTL(&out, &err, "release", "import", rel), 1);
        cr_assert(strstr(err, "(HTTP 409)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "release", "import", path), 1, "not a directory");
        cr_assert(strstr(err, path), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(tu_runf(NULL, NULL, "rm %s/images/os.img", rel), 0);
        cr_assert_eq(CTL(&out, &err, "release", "import", rel), 1, "no image");
        cr_assert(strstr(err, "os_image.path") && strstr(err, "images/os.img"), "%s", err);
        free(out);
        free(err);
        /* Larger than an import may be: refused before anything is read or sent. */
        char big[4200];
        snprintf(big, sizeof big, "%s/big", dir);
        cr_assert_eq(tu_runf(NULL, NULL, "cp -r %s %s", rel15, big), 0);
        cr_assert_eq(tu_runf(NULL, NULL, "truncate -s 65M %s/huge.yaml", big), 0);
        cr_assert_eq(CTL(&out, &err, "release", "import", big), 1);
        cr_assert(strstr(err, "64 MiB"), "%s", err);
        free(out);
        free(err);
        /* Bad YAML: the server names file and line. */
        cr_assert_eq(tu_runf(NULL, NULL, "rm %s/huge.yaml", big), 0);
        cr_assert_eq(tu_write_file(big, "0000_99_broken.yaml", "apiVersion: v1\nkind: [\n"), 0);
        cr_assert_eq(CTL(&out, &err, "release", "import", big), 1);
        cr_assert(strstr(err, "0000_99_broken.yaml") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);
        json_object *l = CTL_JSON("release", "list");
        cr_assert_eq(json_object_array_length(l), 1, "only the good one: %s", json_object_to_json_string(l));
        json_object_put(l);
}

/* Issue 12, item 17: a manifest naming a capability release.yaml does not
 * declare is a warning naming the file and the name (stderr; "warnings" in
 * the API's answer); --strict refuses the release (exit 1, nothing stored). */
Test(ctl_release, import_warns_of_undeclared_capabilities_and_strict_refuses) {
        char *out, *err;
        cr_assert_eq(CTL(&out, &err, "release", "import", "--strict", rel16), 1, "%s", out);
        cr_assert(strstr(err, "strict import") && strstr(err, "0000_70_future-operator.yaml") &&
                          strstr(err, "FutureCapability") && strstr(err, "(HTTP 400)"),
                  "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "release", "show", "4.16.0"), 3, "not imported: %s", out);
        free(out);
        free(err);

        cr_assert_eq(CTL(&out, &err, "release", "import", rel15), 0, "%s", err);
        cr_assert(strstr(out, "release 4.15.0 imported"), "%s", out);
        cr_assert(strstr(err, "musterctl: warning: 0000_70_future-operator.yaml:") &&
                          strstr(err, "\"FutureCapability\"") && strstr(err, "does not declare"),
                  "%s", err);
        cr_assert_null(strstr(err, "Console"), "declared names are no warning: %s", err);
        free(out);
        free(err);
        json_object *o = CTL_JSON("release", "import", rel16);
        json_object *w = tu_json_get(o, "warnings");
        cr_assert_eq(json_object_array_length(w), 1, "%s", json_object_to_json_string(o));
        cr_assert_str_eq(tu_jstr(w, "0.file"), "0000_70_future-operator.yaml");
        cr_assert_str_eq(tu_jstr(w, "0.capability"), "FutureCapability");
        json_object_put(o);
}

/* Issue 12, item 1: musterctl sends nothing reached through a link that
 * leaves the release folder: a manifest, release.yaml, the OS image. */
Test(ctl_release, import_refuses_links_out_of_the_release_folder) {
        char *out, *err, rel[4200], path[4300];
        snprintf(rel, sizeof rel, "%s/state/images/linked", dir);
        tu_must("cp -r %s %s", rel15, rel);
        tu_must("sed -i s/4.15.0/4.15.2/ %s/release.yaml", rel);
        cr_assert_eq(tu_write_file(dir, "secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"), 0);
        snprintf(path, sizeof path, "%s/secret.yaml", dir);
        cr_assert_eq(tu_symlink(rel, "zz-secret.yaml", path), 0);
        cr_assert_eq(CTL(&out, &err, "release", "import", rel), 1, "%s", out);
        cr_assert(strstr(err, "zz-secret.yaml") && strstr(err, "leads out of the release folder"), "%s", err);
        free(out);
        free(err);
        /* A link that stays inside is fine as a manifest... */
        tu_must("rm %s/zz-secret.yaml", rel);
        cr_assert_eq(tu_symlink(rel, "zz-again.yaml", "0000_20_namespace.json"), 0);
        /* ...but not an OS image outside. */
        tu_must("mv %s/os.img %s/os-outside.img", rel, dir);
        snprintf(path, sizeof path, "%s/os-outside.img", dir);
        cr_assert_eq(tu_symlink(rel, "os.img", path), 0);
        cr_assert_eq(CTL(&out, &err, "release", "import", rel), 1, "%s", out);
        cr_assert(strstr(err, "os_image.path") && strstr(err, "leads out of the release folder"), "%s", err);
        free(out);
        free(err);
        tu_must("rm %s/os.img", rel);
        tu_must("mv %s %s/os.img", path, rel);
        cr_assert_eq(CTL(&out, &err, "release", "import", rel), 0, "%s", err);
        free(out);
        free(err);
}

/* ---- capabilities -------------------------------------------------------------- */

#define ADDITIONAL "capabilities.spec.additional_enabled_capabilities"

Test(ctl_release, cluster_capabilities_and_the_implicit_condition) {
        char *out, *err;
        import_both();
        json_object *c = CTL_JSON("cluster", "create", "c1", "--release", "4.15.0", "--baseline", "None", "--enable",
                                  "baremetal,Console");
        cr_assert_str_eq(tu_jstr(c, "capabilities.spec.baseline_capability_set"), "None");
        json_object *add = tu_json_get(c, ADDITIONAL);
        cr_assert_eq(json_object_array_length(add), 2, "%s", json_object_to_json_string(c));
        cr_assert(strstr(json_object_to_json_string(add), "\"baremetal\"") &&
                  strstr(json_object_to_json_string(add), "\"Console\""));
        cr_assert_str_eq(json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities")),
                         "[ \"Console\", \"baremetal\" ]");
        json_object_put(c);

        /* No flags: spec, enabled, known and the condition, in 80 columns. */
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1"), 0, "%s", err);
        free(err);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "Baseline set:") && strstr(out, "None"), "%s", out);
        cr_assert(strstr(out, "Enabled caps:") && strstr(out, "Console, baremetal"), "%s", out);
        cr_assert(strstr(out, "Known caps:") && strstr(out, "openshift-samples"), "%s", out);
        cr_assert(strstr(out, "ImplicitlyEnabledCapabilities=False"), "%s", out);
        free(out);

        /* Enable Insights; then ask to drop it: it stays, and that is said. */
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1", "--enable", "Insights"), 0, "%s", err);
        free(err);
        cr_assert(strstr(out, "Console, Insights, baremetal"), "%s", out);
        cr_assert_null(strstr(out, "implicitly:"), "%s", out);
        free(out);
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1", "--disable", "Insights,Console"), 0, "%s", err);
        free(err);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "Capabilities stay enabled implicitly:") && strstr(out, "Insights"), "%s", out);
        cr_assert(strstr(out, "ImplicitlyEnabledCapabilities=True"), "%s", out);
        free(out);
        c = CTL_JSON("cluster", "show", "c1");
        cr_assert_str_eq(json_object_to_json_string(tu_json_get(c, ADDITIONAL)), "[ \"baremetal\" ]");
        cr_assert(strstr(json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities")),
                         "\"Insights\""));
        cr_assert_str_eq(tu_jstr(c, "conditions.0.status"), "True");
        json_object_put(c);

        /* Unknown names: the server's reason, exit 1, nothing changed. */
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1", "--enable", "Bogus"), 1);
        cr_assert(strstr(err, "musterctl: ") && strstr(err, "Bogus") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1", "--baseline", "v9"), 1);
        cr_assert(strstr(err, "v9") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "create", "c9", "--release", "4.15.0", "--enable", "Bogus"), 1);
        cr_assert(strstr(err, "Bogus") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "create", "c9", "--release", "7.0.0", "--baseline", "None"), 1);
        cr_assert(strstr(err, "7.0.0") && strstr(err, "(HTTP 400)"), "%s", err);
        free(out);
        free(err);

        /* cluster set: --baseline alone keeps the additional list; --enable "" empties it. */
        c = CTL_JSON("cluster", "set", "c1", "--baseline", "v4.11");
        cr_assert_str_eq(tu_jstr(c, "capabilities.spec.baseline_capability_set"), "v4.11");
        cr_assert_str_eq(json_object_to_json_string(tu_json_get(c, ADDITIONAL)), "[ \"baremetal\" ]");
        json_object_put(c);
        c = CTL_JSON("cluster", "set", "c1", "--enable", "", "--baseline", "vCurrent");
        cr_assert_eq(json_object_array_length(tu_json_get(c, ADDITIONAL)), 0);
        json_object_put(c);
        cr_assert_eq(CTL(&out, &err, "cluster", "show", "c1"), 0, "%s", err);
        free(err);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "Baseline set:") && strstr(out, "vCurrent") && strstr(out, "Condition:"), "%s", out);
        free(out);

        /* --feature-set, and a release set later. */
        c = CTL_JSON("cluster", "create", "c2", "--feature-set", "Default");
        cr_assert_str_eq(tu_jstr(c, "feature_set"), "Default");
        json_object_put(c);
        c = CTL_JSON("cluster", "set", "c2", "--release", "4.16.0", "--baseline", "v4.16", "--enable", "Insights");
        cr_assert_str_eq(tu_jstr(c, "release_version"), "4.16.0");
        cr_assert(strstr(json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities")),
                         "\"ImageRegistry\""));
        json_object_put(c);
}

/* --disable of a capability that is not on the additional list is refused
 * like any refused request: exit 1, the reason, nothing sent (issue 12,
 * item 19). */
Test(ctl_release, capabilities_disable_of_one_not_additional_fails) {
        char *out, *err;
        import_both();
        cr_assert_eq(CTL(&out, &err, "cluster", "create", "c1", "--release", "4.15.0", "--baseline", "v4.11",
                         "--enable", "Console"), 0, "%s", err);
        free(out);
        free(err);
        /* In the baseline set, and not enabled at all: both refused. */
        const char *names[] = { "baremetal", "Insights", "Bogus" };
        for (size_t i = 0; i < 3; i++) {
                cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1", "--disable", names[i]), 1, "%s: %s",
                             names[i], out);
                cr_assert(strstr(err, "musterctl: ") && strstr(err, names[i]) &&
                                  strstr(err, "not one of the additional capabilities") && strstr(err, "Console"),
                          "%s", err);
                free(out);
                free(err);
        }
        /* With an --enable beside it: nothing of it happens either. */
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1", "--enable", "Insights", "--disable", "Storage"),
                     1);
        cr_assert(strstr(err, "Storage"), "%s", err);
        free(out);
        free(err);
        json_object *c = CTL_JSON("cluster", "show", "c1");
        cr_assert_str_eq(json_object_to_json_string(tu_json_get(c, ADDITIONAL)), "[ \"Console\" ]");
        cr_assert_null(strstr(json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities")),
                              "\"Insights\""));
        json_object_put(c);
        /* An additional one still goes. */
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "c1", "--disable", "Console"), 0, "%s", err);
        free(out);
        free(err);
}

Test(ctl_release, upgrade_enables_what_the_new_release_needs) {
        char *out, *err;
        import_both();
        cr_assert_eq(CTL(&out, &err, "cluster", "create", "c1", "--release", "4.15.0", "--baseline", "None", "--enable",
                         "baremetal,Console"), 0, "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "upgrade", "c1", "--release", "5.0.0"), 1);
        cr_assert(strstr(err, "5.0.0") && strstr(err, "(HTTP"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "upgrade", "c1", "--release", "4.16.0"), 0, "%s", err);
        free(err);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "cluster c1 is on release 4.16.0"), "%s", out);
        cr_assert(strstr(out, "Capabilities stay enabled implicitly:") && strstr(out, "Insights"), "%s", out);
        free(out);
        json_object *c = CTL_JSON("cluster", "show", "c1");
        const char *en = json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities"));
        cr_assert(strstr(en, "\"Insights\"") && !strstr(en, "ImageRegistry"), "%s", en);
        json_object_put(c);
        /* Without an install there is no payload to list. */
        cr_assert_eq(CTL(&out, &err, "cluster", "payload", "c1"), 0, "%s", err);
        free(err);
        cr_assert(strstr(out, "REVISION"), "%s", out);
        cr_assert_null(strchr(strchr(out, '\n') + 1, '\n'), "no rows: %s", out);
        free(out);
        cr_assert_eq(CTL(&out, &err, "cluster", "payload", "c1", "--manifests"), 3);
        cr_assert(strstr(err, "no payload"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "payload", "c1", "--revision", "1"), 3);
        cr_assert(strstr(err, "(HTTP 404)"), "%s", err);
        free(out);
        free(err);
}

/* ---- install, payload, watch ------------------------------------------------------ */

static void post_result(const char *ie, const char *tok, const char *host, const char *id, const char *type, int code,
                        json_object *output, const char *error) {
        json_object *res = json_object_new_object();
        json_object_object_add(res, "step_id", json_object_new_string(id));
        json_object_object_add(res, "step_type", json_object_new_string(type));
        json_object_object_add(res, "exit_code", json_object_new_int(code));
        json_object_object_add(res, "output", output);
        if (error)
                json_object_object_add(res, "error", json_object_new_string(error));
        long st = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host), tok,
                               json_object_to_json_string(res), NULL);
        cr_assert_eq(st, 200, "%s result: %ld", type, st);
        json_object_put(res);
}

/* Register (again, after a poll when `poll`: how an agent takes a bind). */
static void reregister(const char *ie, const char *tok, const char *host, bool poll) {
        char body[128];
        json_object *o;
        if (poll) {
                cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host), tok,
                                          NULL, &o), 200);
                json_object_put(o);
        }
        snprintf(body, sizeof body, "{\"host_id\":\"%s\",\"discovery_agent_version\":\"test\"}", host);
        long code = tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), tok, body, NULL);
        cr_assert(code == 200 || code == 201, "register: %ld", code);
}

/* A single-node cluster NAME on 4.15.0 whose one host (the captured QEMU
 * server) is ready, made with musterctl; *ie and *tok its infra-env. */
static void ready_sno(const char *name, const char *host, char **ie, char **tok) {
        char *out, *err, ps[4200], hn[64], api[512], *cerr = NULL;
        json_object *o;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, name, ie, tok), 201);
        reregister(*ie, *tok, host, false);
        char path[4096];
        snprintf(path, sizeof path, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv);
        json_object_object_add(inv, "host_id", json_object_new_string(host));
        post_result(*ie, *tok, host, "inventory-1", "inventory", 0, inv, NULL);

        cr_assert_eq(tu_write_file(dir, "pull-secret.json", "{\"auths\":{}}\n"), 0);
        snprintf(ps, sizeof ps, "%s/pull-secret.json", dir);
        cr_assert_eq(CTL(&out, &err, "cluster", "create", name, "--release", "4.15.0", "--base-domain", "example.test",
                         "--machine-cidr", "192.0.2.0/24", "--single-node", "--baseline", "None", "--enable",
                         "baremetal,Console"), 0, "%s", err);
        free(out);
        free(err);
        /* Not ready yet: the failing validations, one a line, exit 1. */
        cr_assert_eq(CTL(&out, &cerr, "cluster", "install", name), 1);
        cr_assert(strstr(cerr, "(HTTP 409)") && strstr(cerr, "\n  pull-secret-set: ") &&
                  strstr(cerr, "\n  sufficient-masters-count: "), "%s", cerr);
        free(out);
        free(cerr);
        cr_assert_eq(CTL(&out, &err, "cluster", "set", name, "--pull-secret-file", ps), 0, "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "host", "bind", host, "--cluster", name), 0, "%s", err);
        free(out);
        free(err);
        reregister(*ie, *tok, host, true);
        snprintf(hn, sizeof hn, "%s-0", name);
        cr_assert_eq(CTL(&out, &err, "host", "set", host, "--role", "master", "--hostname", hn), 0, "%s", err);
        free(out);
        free(err);
        post_result(*ie, *tok, host, "ntp-1", "ntp-synchronizer", 0,
                    json_tokener_parse("{\"synced\":true,\"offset_ms\":-2,\"method\":\"sntp\"}"), NULL);
        snprintf(api, sizeof api, "{\"resolutions\":[{\"name\":\"api.%s.example.test\","
                                  "\"ipv4_addresses\":[\"192.0.2.10\"]},{\"name\":\"api-int.%s.example.test\","
                                  "\"ipv4_addresses\":[\"192.0.2.10\"]},{\"name\":\"*.apps.%s.example.test\","
                                  "\"ipv4_addresses\":[\"192.0.2.10\"]}]}", name, name, name);
        post_result(*ie, *tok, host, "dns-1", "domain-resolution", 0, json_tokener_parse(api), NULL);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", *ie, host), md.admin_token, NULL, &o),
                     200);
        cr_assert_str_eq(tu_jstr(o, "status"), "known", "%s", tu_jstr(o, "status_info"));
        json_object_put(o);
}

/* The installed system's first check-in, with the host's own token as
 * musterctl host rotate-token hands it out. */
static void node_checkin(const char *ie, const char *host) {
        char *out = NULL, *err = NULL, path[4200];
        snprintf(path, sizeof path, "%s/host.token", dir);
        cr_assert_eq(CTL(&out, &err, "host", "rotate-token", host, "--token-out", path), 0, "%s", err);
        free(out);
        free(err);
        char *ht = tu_read_file(path, NULL);
        cr_assert_not_null(ht);
        ht[strcspn(ht, "\r\n")] = '\0';
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host), ht, NULL, NULL),
                     200);
        free(ht);
}

/* The host's install step id, from its instructions (polled, bounded);
 * a disk speed check on the way (preparing) is answered as a fast disk. */
static char *install_step(const char *ie, const char *tok, const char *host) {
        int64_t deadline = tu_mono_ms() + 20000;
        for (;;) {
                json_object *o;
                const char *u = url("/api/v2/infra-envs/%s/hosts/%s/instructions", ie, host);
                cr_assert_eq(tu_http_json("GET", u, tok, NULL, &o), 200);
                json_object *a = tu_json_get(o, "instructions");
                char *id = NULL;
                for (size_t i = 0; a && i < json_object_array_length(a); i++) {
                        json_object *st = json_object_array_get_idx(a, i);
                        if (strcmp(tu_jstr(st, "step_type"), "install") == 0)
                                id = strdup(tu_jstr(st, "step_id"));
                        else if (strcmp(tu_jstr(st, "step_type"), "installation-disk-speed-check") == 0)
                                post_result(ie, tok, host, tu_jstr(st, "step_id"), "installation-disk-speed-check", 0,
                                            json_tokener_parse("{\"path\":\"/dev/vda\",\"method\":\"device\","
                                                               "\"writes\":50,\"p99_ms\":1.2,\"median_ms\":0.4,"
                                                               "\"max_ms\":1.2}"), NULL);
                }
                if (id || tu_mono_ms() > deadline) {
                        cr_assert_not_null(id, "an install step: %s", json_object_to_json_string(o));
                        json_object_put(o);
                        return id;
                }
                json_object_put(o);
                usleep(200 * 1000);
        }
}

static void progress(const char *ie, const char *tok, const char *host, const char *stage, int percent) {
        char body[128];
        snprintf(body, sizeof body, "{\"stage\":\"%s\",\"percent\":%d}", stage, percent);
        long code = tu_http_json("PUT", url("/api/v2/infra-envs/%s/hosts/%s/progress", ie, host), tok, body, NULL);
        cr_assert_eq(code, 200, "progress: %ld", code);
}

static const char *H1 = "6d757374-6572-4071-8335-0000000000c1";

Test(ctl_release, install_payload_and_watch) {
        char *ie, *tok, *out, *err;
        cr_assert_eq(CTL(&out, &err, "release", "import", rel15), 0, "%s", err);
        free(out);
        free(err);
        ready_sno("sno", H1, &ie, &tok);

        /* watch before the install: nothing moves, --timeout ends it with 1. */
        cr_assert_eq(CTL(&out, &err, "cluster", "watch", "sno", "--interval", "200ms", "--timeout", "1"), 1);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "Status:") && strstr(out, "ready") && strstr(out, "sno-0"), "%s", out);
        cr_assert(strstr(err, "still ready after"), "%s", err);
        free(out);
        free(err);

        cr_assert_eq(CTL(&out, &err, "cluster", "install", "sno"), 0, "%s", err);
        free(err);
        cr_assert(strstr(out, "cluster sno is installing") && strstr(out, "cluster watch"), "%s", out);
        free(out);

        /* Payload revision 1: listed, shown, its manifests are the README's 8. */
        cr_assert_eq(CTL(&out, &err, "cluster", "payload", "sno"), 0, "%s", err);
        free(err);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "REVISION") && strstr(out, "4.15.0") && strstr(out, "sha256:"), "%s", out);
        free(out);
        json_object *l = CTL_JSON("cluster", "payload", "sno");
        cr_assert_eq(json_object_array_length(l), 1);
        cr_assert_eq(json_object_get_int(tu_json_get(l, "0.revision")), 1);
        cr_assert_eq(json_object_get_int(tu_json_get(l, "0.manifest_count")), 8);
        json_object_put(l);
        cr_assert_eq(CTL(&out, &err, "cluster", "payload", "sno", "--revision", "1"), 0, "%s", err);
        free(err);
        fits_but_digests(out);
        cr_assert(strstr(out, "Digest:") && strstr(out, "sha256:") && strstr(out, "Signature:") &&
                  strstr(out, "Manifests:") && strstr(out, "8") && strstr(out, "OS image:"), "%s", out);
        free(out);
        json_object *p = CTL_JSON("cluster", "payload", "sno", "--revision", "1");
        cr_assert_eq(json_object_get_int(tu_json_get(p, "revision")), 1);
        cr_assert_str_eq(tu_jstr(p, "release_version"), "4.15.0");
        char *in = paths(tu_json_get(p, "manifests"), NULL);
        cr_assert_str_eq(in, "0000_03_config-operator_01_proxy.crd.yaml 0000_20_namespace.json "
                             "0000_30_cluster-baremetal-operator_05_deployment.0.yaml "
                             "0000_30_cluster-baremetal-operator_05_deployment.1.yaml "
                             "0000_50_console-operator_07-downloads-deployment.yaml "
                             "0000_50_insights-operator_10-prometheus-rule.yaml 0000_80_hosted-only-configmap.yaml "
                             "99_site-config.yml");
        free(in);
        json_object_put(p);
        cr_assert_eq(CTL(&out, &err, "cluster", "payload", "sno", "--manifests"), 0, "%s", err);
        free(err);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "PATH") && strstr(out, "Deployment") && strstr(out, "ConfigMap"), "%s", out);
        free(out);

        /* The agent's side: progress at 45%, watched as it comes; then done. */
        char *step = install_step(ie, tok, H1);
        int fd;
        char *buf = NULL;
        size_t len = 0;
        const char *args[] = { "cluster", "watch", "sno", "--interval", "200ms", "--timeout", "60", NULL };
        pid_t pid = tu_ctl_spawn(md.base, md.admin_token_path, args, &fd);
        progress(ie, tok, H1, "writing-image", 45);
        bool seen = tu_read_until(fd, &buf, &len, "[#########-----------]  45%", 20000);
        if (!seen)
                kill(pid, SIGKILL);
        cr_assert(seen, "the progress bar: %s", buf ? buf : "");
        progress(ie, tok, H1, "writing-payload", 90);
        post_result(ie, tok, H1, step, "install", 0, json_tokener_parse("{\"applied_revision\":1}"), NULL);
        seen = tu_read_until(fd, &buf, &len, "rebooting", 20000);
        if (!seen)
                kill(pid, SIGKILL);
        cr_assert(seen, "written, waiting for the installed system: %s", buf ? buf : "");
        node_checkin(ie, H1);
        seen = tu_read_until(fd, &buf, &len, "cluster sno is installed", 20000);
        int st = seen ? tu_wait_pid(pid, 10000) : tu_kill_wait(pid, SIGKILL);
        close(fd);
        cr_assert(seen, "%s", buf ? buf : "");
        cr_assert_eq(st, 0, "watch exits 0 once installed: %s", buf);
        tu_assert_fits(buf, NULL);
        cr_assert(strstr(buf, "writing-image") && strstr(buf, "installing-in-progress"), "%s", buf);
        free(buf);
        free(step);
        /* Once installed, watch says so at once. */
        cr_assert_eq(CTL(&out, &err, "cluster", "watch", "sno"), 0, "%s", err);
        cr_assert(strstr(out, "[####################] 100%"), "%s", out);
        free(out);
        free(err);
        free(ie);
        free(tok);
}

/* 4.16.0 as "4.17.0" with Insights no longer declared (its manifests that
 * carry it still there): DIR/state/images/rel-4.17.0. */
static void make_release_without_insights(char *dst, size_t n) {
        snprintf(dst, n, "%s/state/images/rel-4.17.0", dir);
        tu_must("cp -r %s %s", rel16, dst);
        tu_must("sed -i -e s/4.16.0/4.17.0/ -e /^..-.Insights$/d -e s/.Insights,// %s/release.yaml", dst);
        char *y = slurp(tu_url(dst, "/release.yaml"));
        cr_assert_null(strstr(y, "Insights"), "%s", y);
        free(y);
}

/* Issue 12, item 16: a capability enabled implicitly stays enabled through
 * an upgrade to a release that no longer declares it, in the condition, and
 * the new release's manifests that carry it are in the upgrade's payload. */
Test(ctl_release, upgrade_keeps_an_implicit_capability_the_release_dropped) {
        char *ie, *tok, *out, *err, rel17[4200];
        cr_assert_eq(CTL(&out, &err, "release", "import", rel15), 0, "%s", err);
        free(out);
        free(err);
        make_release_without_insights(rel17, sizeof rel17);
        cr_assert_eq(CTL(&out, &err, "release", "import", rel17), 0, "%s", err);
        free(out);
        free(err);
        ready_sno("sno", H1, &ie, &tok);
        cr_assert_eq(CTL(&out, &err, "cluster", "install", "sno"), 0, "%s", err);
        free(out);
        free(err);
        char *step = install_step(ie, tok, H1);
        post_result(ie, tok, H1, step, "install", 0, json_tokener_parse("{\"applied_revision\":1}"), NULL);
        free(step);
        node_checkin(ie, H1);

        /* Insights on, then off: it stays, implicitly. */
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "sno", "--enable", "Insights"), 0, "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "capabilities", "sno", "--disable", "Insights"), 0, "%s", err);
        cr_assert(strstr(out, "Capabilities stay enabled implicitly:") && strstr(out, "Insights"), "%s", out);
        free(out);
        free(err);

        cr_assert_eq(CTL(&out, &err, "cluster", "upgrade", "sno", "--release", "4.17.0"), 0, "%s", err);
        cr_assert(strstr(out, "cluster sno is on release 4.17.0"), "%s", out);
        cr_assert(strstr(out, "Capabilities stay enabled implicitly:") && strstr(out, "Insights"), "%s", out);
        free(out);
        free(err);
        json_object *c = CTL_JSON("cluster", "show", "sno");
        const char *en = json_object_to_json_string(tu_json_get(c, "capabilities.status.enabled_capabilities"));
        cr_assert(strstr(en, "\"Insights\""), "still enabled: %s", en);
        json_object *cond = NULL, *conds = tu_json_get(c, "conditions");
        for (size_t i = 0; conds && i < json_object_array_length(conds); i++)
                if (strcmp(tu_jstr(json_object_array_get_idx(conds, i), "type"), "ImplicitlyEnabledCapabilities") == 0)
                        cond = json_object_array_get_idx(conds, i);
        cr_assert_not_null(cond);
        cr_assert_str_eq(tu_jstr(cond, "status"), "True");
        cr_assert(strstr(tu_jstr(cond, "message"), "Insights"), "%s", tu_jstr(cond, "message"));
        json_object_put(c);

        /* The upgrade's payload (the newest revision) carries the manifests
         * of 4.17.0 annotated Insights. */
        json_object *l = CTL_JSON("cluster", "payload", "sno");
        size_t n = json_object_array_length(l);
        cr_assert_geq(n, 2);
        int last = 0;
        for (size_t i = 0; i < n; i++) {
                int r = json_object_get_int(tu_json_get(json_object_array_get_idx(l, i), "revision"));
                last = r > last ? r : last;
        }
        json_object_put(l);
        char rev[16];
        snprintf(rev, sizeof rev, "%d", last);
        json_object *p = CTL_JSON("cluster", "payload", "sno", "--revision", rev);
        cr_assert_str_eq(tu_jstr(p, "release_version"), "4.17.0");
        char *in = paths(tu_json_get(p, "manifests"), NULL);
        cr_assert(strstr(in, "0000_50_insights-operator_10-prometheus-rule.yaml") &&
                          strstr(in, "0000_90_console_01-console-insights-plugin.yaml"),
                  "%s", in);
        free(in);
        json_object_put(p);
        free(ie);
        free(tok);
}

Test(ctl_release, watch_tells_a_failed_install) {
        char *ie, *tok, *out, *err;
        cr_assert_eq(CTL(&out, &err, "release", "import", rel15), 0, "%s", err);
        free(out);
        free(err);
        ready_sno("bad", H1, &ie, &tok);
        cr_assert_eq(CTL(&out, &err, "cluster", "install", "bad"), 0, "%s", err);
        free(out);
        free(err);
        char *step = install_step(ie, tok, H1);
        progress(ie, tok, H1, "writing-image", 10);
        post_result(ie, tok, H1, step, "install", 1, json_object_new_object(), "the disk went away");
        cr_assert_eq(CTL(&out, &err, "cluster", "watch", "bad", "--timeout", "30"), 1);
        tu_assert_fits(out, NULL);
        cr_assert(strstr(out, "error"), "%s", out);
        cr_assert(strstr(err, "cluster bad failed") && strstr(err, "host bad-0") && strstr(err, "the disk went away"),
                  "%s", err);
        free(out);
        free(err);
        /* What an admin types next: reset; the host registers again. */
        cr_assert_eq(CTL(&out, &err, "cluster", "reset", "bad"), 0, "%s", err);
        cr_assert(strstr(out, "cluster bad was reset") && strstr(out, "musterctl cluster install"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "host", "show", H1), 0, "%s", err);
        cr_assert(strstr(out, "discovering"), "%s", out);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "cluster", "reset", "bad"), 1, "nothing to reset now");
        cr_assert(strstr(err, "only a failed or installing cluster can be reset"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "host", "install", H1), 1, "day 2 is for installed clusters");
        cr_assert(strstr(err, "only into an installed cluster"), "%s", err);
        free(out);
        free(err);
        free(step);
        free(ie);
        free(tok);
}

/* ---- the signing key ---------------------------------------------------------------- */

Test(ctl_release, signing_key_printed_or_written) {
        char *out, *err, path[4200], pub[4200];
        cr_assert_eq(CTL(&out, &err, "signing-key"), 0, "%s", err);
        free(err);
        cr_assert_eq(strncmp(out, "-----BEGIN PUBLIC KEY-----\n", 27), 0, "%s", out);
        cr_assert(strstr(out, "-----END PUBLIC KEY-----\n"), "%s", out);
        snprintf(path, sizeof path, "%s/key.pem", dir);
        char *out2;
        cr_assert_eq(CTL(&out2, &err, "signing-key", "-o", path), 0, "%s", err);
        free(err);
        cr_assert(strstr(out2, path), "%s", out2);
        free(out2);
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f);
        char file[4096] = "";
        size_t n = fread(file, 1, sizeof file - 1, f);
        file[n] = '\0';
        fclose(f);
        cr_assert_str_eq(file, out);
        /* The same key musterd wrote beside its state. */
        snprintf(pub, sizeof pub, "%s/signing-key.pub", md.state_dir);
        char *disk = slurp(pub);
        size_t dl = strlen(disk), ol = strlen(out);
        while (dl > 0 && disk[dl - 1] == '\n')
                disk[--dl] = '\0';
        cr_assert(ol == dl + 1 && strncmp(disk, out, dl) == 0, "musterd's %s:\n%s\nmusterctl's:\n%s", pub, disk, out);
        free(disk);
        free(out);
        cr_assert_eq(CTL(&out, NULL, "-o", "json", "signing-key"), 0);
        json_object *j = parse(out);
        cr_assert(strstr(tu_jstr(j, "public_key"), "BEGIN PUBLIC KEY"));
        json_object_put(j);
        free(out);
}
