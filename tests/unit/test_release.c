/* release.yaml: every field and its checks, the capability sets added when
 * missing, refusals with "release.yaml:line: reason", JSON both ways with the
 * same checks, and damaged input (truncated, bytes flipped) without crashing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "release.h"
#include "testutil.h"

#define ERRLEN 512
#define SHA "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define SHA_UPPER "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
#define IMAGE "os_image:\n  url: https://mirror.example.com/rhcos-4.16.img\n  sha256: " SHA "\n  size: 1073741824\n"

static const char full[] =
        "# release 4.16\n"
        "version: \"4.16.0\"\n"
        "os_image:\n"
        "  url: https://mirror.example.com/rhcos-4.16.img\n"
        "  sha256: " SHA_UPPER "\n"
        "  size: 1073741824\n"
        "  root_label: sysroot\n"
        "known_capabilities: [marketplace, Console, baremetal, Insights, openshift-samples, MachineAPI]\n"
        "capability_sets:\n"
        "  None: []\n"
        "  v4.11: [baremetal, marketplace, openshift-samples]\n"
        "  v4.14:\n"
        "    - baremetal\n"
        "    - marketplace\n"
        "    - openshift-samples\n"
        "    - Console\n"
        "    - Insights\n"
        "  vCurrent: [baremetal, marketplace, openshift-samples, Console, Insights, MachineAPI]\n"
        "default_profile: single-node-developer\n";

static int parse(const char *y, struct release_info *r, char *err) {
        err[0] = 0;
        return release_info_parse_yaml(y, strlen(y), r, err, ERRLEN);
}

static void refuse(const char *y, int want_r, const char *want) {
        struct release_info r;
        char err[ERRLEN];
        int got = parse(y, &r, err);
        cr_assert_eq(got, want_r, "%s: got %d (%s)", want, got, err);
        cr_assert(strstr(err, want), "error \"%s\" does not contain \"%s\"", err, want);
        cr_assert_null(r.version, "a refused file leaves nothing behind");
        cr_assert_eq(r.n_sets, 0);
        release_info_free(&r);
}

static void assert_strv(const struct strv *s, const char *const *want, size_t n) {
        cr_assert_eq(s->n, n, "%zu entries, want %zu", s->n, n);
        for (size_t i = 0; i < n; i++)
                cr_assert_str_eq(s->v[i], want[i]);
        if (n)
                cr_assert_null(s->v[n]);
}

Test(release, full_file) {
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse(full, &r, err), 0, "%s", err);
        cr_assert_str_eq(r.version, "4.16.0");
        cr_assert_str_eq(r.os_image.url, "https://mirror.example.com/rhcos-4.16.img");
        cr_assert_null(r.os_image.path);
        cr_assert_str_eq(r.os_image.sha256, SHA, "stored lower case");
        cr_assert_eq(r.os_image.size, 1073741824);
        cr_assert_str_eq(r.os_image.root_label, "sysroot");
        static const char *const known[] = { "Console", "Insights", "MachineAPI", "baremetal", "marketplace",
                                             "openshift-samples" };
        assert_strv(&r.known_capabilities, known, 6);
        cr_assert_eq(r.n_sets, 4);
        static const char *const names[] = { "None", "v4.11", "v4.14", "vCurrent" };
        for (size_t i = 0; i < 4; i++)
                cr_assert_str_eq(r.sets[i].name, names[i], "file order");
        assert_strv(&r.sets[0].caps, NULL, 0);
        static const char *const v411[] = { "baremetal", "marketplace", "openshift-samples" };
        assert_strv(&r.sets[1].caps, v411, 3);
        static const char *const v414[] = { "Console", "Insights", "baremetal", "marketplace", "openshift-samples" };
        assert_strv(&r.sets[2].caps, v414, 5);
        assert_strv(&r.sets[3].caps, known, 6);
        cr_assert_str_eq(r.default_profile, "single-node-developer");
        cr_assert_eq(release_cap_set(&r, "v4.14"), &r.sets[2]);
        cr_assert_eq(release_cap_set(&r, "None"), &r.sets[0]);
        cr_assert_null(release_cap_set(&r, "v4.15"));
        cr_assert_null(release_cap_set(&r, "none"), "names are case-sensitive");
        cr_assert_null(release_cap_set(&r, NULL));
        cr_assert_null(release_cap_set(NULL, "None"));
        release_info_free(&r);
        cr_assert_null(r.version);
        cr_assert_null(r.sets);
        release_info_free(&r); /* twice is fine */
}

Test(release, defaults_and_builtin_sets) {
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse("version: 4.16.1\n" IMAGE "known_capabilities: [B, A]\ncapability_sets:\n  v4.11: [A]\n", &r, err), 0,
                     "%s", err);
        cr_assert_str_eq(r.os_image.root_label, RELEASE_DEFAULT_ROOT_LABEL);
        cr_assert_str_eq(r.default_profile, RELEASE_DEFAULT_PROFILE);
        cr_assert_eq(r.n_sets, 3);
        cr_assert_str_eq(r.sets[0].name, CAP_SET_NONE, "None is added first");
        cr_assert_eq(r.sets[0].caps.n, 0);
        cr_assert_str_eq(r.sets[1].name, "v4.11");
        cr_assert_str_eq(r.sets[2].name, CAP_SET_CURRENT, "vCurrent is added last");
        static const char *const ab[] = { "A", "B" };
        assert_strv(&r.sets[2].caps, ab, 2);
        release_info_free(&r);

        /* No capabilities at all. */
        cr_assert_eq(parse("version: \"1\"\n" IMAGE, &r, err), 0, "%s", err);
        cr_assert_eq(r.known_capabilities.n, 0);
        cr_assert_eq(r.n_sets, 2);
        cr_assert_eq(release_cap_set(&r, CAP_SET_NONE)->caps.n, 0);
        cr_assert_eq(release_cap_set(&r, CAP_SET_CURRENT)->caps.n, 0);
        release_info_free(&r);

        /* Null values mean "not given". */
        cr_assert_eq(parse("version: \"1\"\n" IMAGE "  root_label:\nknown_capabilities:\ncapability_sets: ~\ndefault_profile: null\n", &r, err),
                     0, "%s", err);
        cr_assert_str_eq(r.os_image.root_label, "root");
        cr_assert_str_eq(r.default_profile, RELEASE_DEFAULT_PROFILE);
        cr_assert_eq(r.n_sets, 2);
        release_info_free(&r);
}

Test(release, the_file_keeps_its_own_builtin_sets) {
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse("version: \"2\"\n" IMAGE "known_capabilities: [A, B, C]\n"
                           "capability_sets:\n  vCurrent: [B]\n  mid: [A, C]\n  None: [A]\n", &r, err),
                     0, "%s", err);
        cr_assert_eq(r.n_sets, 3, "nothing added");
        cr_assert_str_eq(r.sets[0].name, "vCurrent");
        static const char *const b[] = { "B" }, *const a[] = { "A" };
        assert_strv(&r.sets[0].caps, b, 1);
        cr_assert_str_eq(r.sets[2].name, "None");
        assert_strv(&r.sets[2].caps, a, 1);
        release_info_free(&r);
        cr_assert_eq(parse("version: \"2\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n  vCurrent: ~\n", &r, err), 0,
                     "%s", err);
        cr_assert_eq(release_cap_set(&r, "vCurrent")->caps.n, 0, "an empty vCurrent of the file's own");
        cr_assert_str_eq(r.sets[0].name, "None");
        release_info_free(&r);
}

Test(release, os_image_path) {
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse("version: \"1\"\nos_image:\n  path: images/rhcos.img\n  sha256: " SHA "\n  size: 1\n", &r, err), 0,
                     "%s", err);
        cr_assert_str_eq(r.os_image.path, "images/rhcos.img", "relative kept as given");
        cr_assert_null(r.os_image.url);
        cr_assert_eq(r.os_image.size, 1);
        release_info_free(&r);
        cr_assert_eq(parse("version: \"1\"\nos_image: {path: /var/lib/muster/images/a b.img, sha256: " SHA ", size: 9223372036854775807}\n",
                           &r, err),
                     0, "%s", err);
        cr_assert_str_eq(r.os_image.path, "/var/lib/muster/images/a b.img");
        cr_assert_eq(r.os_image.size, INT64_MAX);
        release_info_free(&r);
        cr_assert_eq(parse("version: \"1\"\nos_image: {url: \"http://10.0.0.1:8080/a.img?x=1\", sha256: " SHA ", size: 5, path: null}\n",
                           &r, err),
                     0, "%s", err);
        cr_assert_str_eq(r.os_image.url, "http://10.0.0.1:8080/a.img?x=1");
        release_info_free(&r);
}

Test(release, os_image_refusals) {
        refuse("version: \"1\"\n", -EINVAL, "release.yaml:1: os_image is required");
        refuse("version: \"1\"\nos_image: x\n", -EINVAL, "release.yaml:2: os_image must be a mapping");
        refuse("version: \"1\"\nos_image:\n  sha256: " SHA "\n  size: 1\n", -EINVAL, "release.yaml:3: os_image must have url or path");
        refuse("version: \"1\"\nos_image:\n  url: https://a/b\n  path: /b\n  sha256: " SHA "\n  size: 1\n", -EINVAL,
               "release.yaml:3: os_image must have either url or path, not both");
        refuse("version: \"1\"\nos_image:\n  url: ftp://a/b\n  sha256: " SHA "\n  size: 1\n", -EINVAL,
               "release.yaml:3: os_image.url must be an http:// or https:// URL");
        refuse("version: \"1\"\nos_image: {url: \"http://\", sha256: " SHA ", size: 1}\n", -EINVAL, "os_image.url must be");
        refuse("version: \"1\"\nos_image: {url: \"https:///x\", sha256: " SHA ", size: 1}\n", -EINVAL, "os_image.url must be");
        refuse("version: \"1\"\nos_image: {url: \"https://a/b c\", sha256: " SHA ", size: 1}\n", -EINVAL, "os_image.url must be");
        refuse("version: \"1\"\nos_image: {url: \"HTTPS://a/b\", sha256: " SHA ", size: 1}\n", -EINVAL, "os_image.url must be");
        refuse("version: \"1\"\nos_image: {url: [x], sha256: " SHA ", size: 1}\n", -EINVAL, "os_image.url must be a scalar");
        refuse("version: \"1\"\nos_image: {path: \"\", sha256: " SHA ", size: 1}\n", -EINVAL, "os_image.path must be a file path");
        refuse("version: \"1\"\nos_image: {path: \"a\\nb\", sha256: " SHA ", size: 1}\n", -EINVAL, "os_image.path must be a file path");
        refuse("version: \"1\"\nos_image: {path: /a, size: 1}\n", -EINVAL, "release.yaml:2: os_image.sha256 is required");
        refuse("version: \"1\"\nos_image: {path: /a, sha256: " SHA "}\n", -EINVAL, "os_image.size is required");
        refuse("version: \"1\"\nos_image: {path: /a, sha256: abc, size: 1}\n", -EINVAL, "release.yaml:2: os_image.sha256 must be 64 hex digits");
        refuse("version: \"1\"\nos_image: {path: /a, sha256: " SHA "0, size: 1}\n", -EINVAL, "os_image.sha256 must be 64 hex digits");
        refuse("version: \"1\"\nos_image: {path: /a, sha256: g" SHA "," " size: 1}\n", -EINVAL, "os_image.sha256 must be 64 hex digits");
        char y[512];
        snprintf(y, sizeof y, "version: \"1\"\nos_image: {path: /a, sha256: %.63sz, size: 1}\n", SHA);
        refuse(y, -EINVAL, "os_image.sha256 must be 64 hex digits");
        static const char *const sizes[] = { "0", "-1", "\"12\"", "'12'", "1.5", "0x10", "007", "1e3", "~", "[1]",
                                             "9223372036854775808", "99999999999999999999", "true", "12 MiB", "+5" };
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
                snprintf(y, sizeof y, "version: \"1\"\nos_image:\n  path: /a\n  sha256: " SHA "\n  size: %s\n", sizes[i]);
                struct release_info r;
                char err[ERRLEN];
                cr_assert_eq(parse(y, &r, err), -EINVAL, "size %s accepted", sizes[i]);
                cr_assert(strstr(err, "release.yaml:5: os_image.size must be"), "%s: %s", sizes[i], err);
                release_info_free(&r);
        }
        refuse("version: \"1\"\nos_image: {path: /a, sha256: " SHA ", size: 1, root_label: \"bad label\"}\n", -EINVAL,
               "os_image.root_label must be 1 to 64 of [A-Za-z0-9._-]");
        refuse("version: \"1\"\nos_image: {path: /a, sha256: " SHA ", size: 1, root_label: \"\"}\n", -EINVAL, "os_image.root_label");
        snprintf(y, sizeof y, "version: \"1\"\nos_image: {path: /a, sha256: " SHA ", size: 1, root_label: %065d}\n", 0);
        refuse(y, -EINVAL, "os_image.root_label");
        refuse("version: \"1\"\nos_image:\n  path: /a\n  sha256: " SHA "\n  size: 1\n  sha: x\n", -EINVAL,
               "release.yaml:6: unknown key os_image.sha");
        refuse("version: \"1\"\nos_image:\n  path: /a\n  path: /b\n  sha256: " SHA "\n  size: 1\n", -EINVAL,
               "release.yaml:4: duplicate key os_image.path");
        refuse("version: \"1\"\nos_image:\n  path: /a\n  sha256: " SHA "\n  size: 1\n  size: 2\n", -EINVAL,
               "duplicate key os_image.size");
        char *long_url = malloc(5000);
        strcpy(long_url, "version: \"1\"\nos_image: {sha256: " SHA ", size: 1, url: \"https://a/");
        size_t off = strlen(long_url);
        memset(long_url + off, 'x', 4100);
        strcpy(long_url + off + 4100, "\"}\n");
        refuse(long_url, -EINVAL, "os_image.url is longer than 4096 bytes");
        free(long_url);
}

Test(release, version_checks) {
        static const char *const good[] = { "4.16.0", "\"4.16.0-rc.1\"", "4.16.0+build.5", "v1", "1", "4.10", "A_b",
                                            "\"1e3\"", "1e3", "0x10", "yes" };
        static const char *const want[] = { "4.16.0", "4.16.0-rc.1", "4.16.0+build.5", "v1", "1", "4.10", "A_b",
                                            "1e3", "1e3", "0x10", "yes" };
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
                char y[512];
                snprintf(y, sizeof y, "version: %s\n" IMAGE, good[i]);
                struct release_info r;
                char err[ERRLEN];
                cr_assert_eq(parse(y, &r, err), 0, "%s: %s", good[i], err);
                cr_assert_str_eq(r.version, want[i], "the text as written");
                release_info_free(&r);
        }
        static const char *const bad[] = { "\".4\"", "\"-1\"", "\"+1\"", "\"4.16 rc\"", "\"4/16\"", "\"\xc3\xa9\"",
                                           "\"\"", "[1]", "{a: b}", "\"a\\tb\"" };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                char y[512];
                snprintf(y, sizeof y, "version: %s\n" IMAGE, bad[i]);
                struct release_info r;
                char err[ERRLEN];
                cr_assert_eq(parse(y, &r, err), -EINVAL, "%s accepted", bad[i]);
                cr_assert(strstr(err, "release.yaml:1: version"), "%s: %s", bad[i], err);
                release_info_free(&r);
        }
        refuse(IMAGE, -EINVAL, "release.yaml:1: version is required");
        refuse("version:\n" IMAGE, -EINVAL, "release.yaml:1: version is required");
        char y[512], v[80];
        memset(v, '1', 65);
        v[65] = 0;
        snprintf(y, sizeof y, "version: \"%s\"\n" IMAGE, v);
        refuse(y, -EINVAL, "must be 1 to 64 of [A-Za-z0-9._+-] starting with a letter or digit");
        v[64] = 0;
        snprintf(y, sizeof y, "version: \"%s\"\n" IMAGE, v);
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse(y, &r, err), 0, "%s", err);
        release_info_free(&r);
}

Test(release, top_level_refusals) {
        refuse("version: \"1\"\n" IMAGE "verison: 2\n", -EINVAL, "release.yaml:6: unknown key \"verison\"");
        refuse("version: \"1\"\n" IMAGE "knownCapabilities: []\n", -EINVAL, "unknown key \"knownCapabilities\"");
        refuse("version: \"1\"\nversion: \"2\"\n" IMAGE, -EINVAL, "release.yaml:2: duplicate key \"version\"");
        refuse("? [a]\n: b\n", -EINVAL, "release.yaml:1: keys must be a scalar");
        refuse("", -EINVAL, "release.yaml is empty");
        refuse("# nothing\n", -EINVAL, "release.yaml is empty");
        refuse("---\n...\n", -EINVAL, "release.yaml is empty");
        refuse("- a\n", -EINVAL, "release.yaml:1: release.yaml must be a mapping");
        refuse("hello\n", -EINVAL, "must be a mapping");
        refuse("version: \"1\"\n" IMAGE "---\nversion: \"2\"\n", -EINVAL, "release.yaml:6: release.yaml must hold one document");
        refuse("version: &v \"1\"\n" IMAGE "default_profile: *v\n", -EINVAL, "release.yaml:6: aliases are not supported");
        refuse("version: \"1\"\n" IMAGE "default_profile: \"bad profile\"\n", -EINVAL,
               "release.yaml:6: default_profile must be 1 to 64 of [A-Za-z0-9._-]");
        refuse("version: \"1\"\n" IMAGE "default_profile: [a]\n", -EINVAL, "default_profile must be a scalar");
        refuse("version: \"1\n", -EINVAL, "release.yaml:1: found unexpected end of stream");
        refuse("version: \"1\"\nos_image: {path: /a\n", -EINVAL, "release.yaml:2:");
        refuse("version: a: b\n", -EINVAL, "release.yaml:1: mapping values are not allowed in this context");
        refuse("version: \"a\\0b\"\n" IMAGE, -EINVAL, "release.yaml:1: a value contains a NUL byte");
        refuse("version: \"1\"\n\xff\n", -EINVAL, "release.yaml:2: invalid leading UTF-8 octet");
        refuse("\xff\xfe" "v\0", -EINVAL, "UTF-16 is not supported");
        char deep[256] = "version: \"1\"\n" IMAGE "default_profile: ";
        size_t off = strlen(deep);
        memset(deep + off, '[', 40);
        deep[off + 40] = 0;
        refuse(deep, -EINVAL, "nested deeper than 32 levels");
        /* A BOM is fine. */
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse("\xef\xbb\xbfversion: \"1\"\n" IMAGE, &r, err), 0, "%s", err);
        release_info_free(&r);
}

Test(release, size_limit) {
        size_t n = 4 * 1024 * 1024 + 1;
        char *y = malloc(n);
        memset(y, '#', n);
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(release_info_parse_yaml(y, n, &r, err, sizeof err), -E2BIG);
        cr_assert(strstr(err, "release.yaml is larger than"), "%s", err);
        release_info_free(&r);
        free(y);
        cr_assert_eq(release_info_parse_yaml(NULL, 0, &r, err, sizeof err), -EINVAL);
        cr_assert(strstr(err, "empty"), "%s", err);
}

Test(release, capability_refusals) {
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A, B, A]\n", -EINVAL,
               "release.yaml:6: known_capabilities lists \"A\" twice");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [\"bad name\"]\n", -EINVAL,
               "known_capabilities: \"bad name\" is not a valid capability name");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [\"a+b\"]\n", -EINVAL, "is not a valid capability name");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [\"\"]\n", -EINVAL, "is not a valid capability name");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [~]\n", -EINVAL, "known_capabilities must not be empty");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [[A]]\n", -EINVAL, "known_capabilities must be a scalar");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: A\n", -EINVAL, "release.yaml:6: known_capabilities must be a list");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: {A: B}\n", -EINVAL, "known_capabilities must be a list");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets: [A]\n", -EINVAL,
               "release.yaml:7: capability_sets must be a mapping");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n  v4.11: [A, B]\n", -EINVAL,
               "release.yaml:8: capability set \"v4.11\" names unknown capability \"B\"");
        refuse("version: \"1\"\n" IMAGE "capability_sets:\n  v4.11: [A]\n", -EINVAL, "names unknown capability \"A\"");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n  v4.11: [A, A]\n", -EINVAL,
               "capability set \"v4.11\" lists \"A\" twice");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n  v4.11: [A]\n  v4.11: []\n", -EINVAL,
               "release.yaml:9: duplicate capability set \"v4.11\"");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n  \"v 4\": [A]\n", -EINVAL,
               "\"v 4\" is not a valid capability set name");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n  v4.11: A\n", -EINVAL,
               "capability set \"v4.11\" must be a list");
        refuse("version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n  [x]: [A]\n", -EINVAL,
               "capability set names must be a scalar");
        /* Key order does not matter: sets may come before the known list. */
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse("capability_sets: {v1: [B]}\nknown_capabilities: [A, B]\nversion: \"1\"\n" IMAGE, &r, err), 0, "%s", err);
        cr_assert_str_eq(release_cap_set(&r, "v1")->caps.v[0], "B");
        release_info_free(&r);
}

static char *names_yaml(const char *prefix, size_t n) {
        size_t cap = 256 + n * 16;
        char *y = malloc(cap);
        size_t off = (size_t) snprintf(y, cap, "%s[", prefix);
        for (size_t i = 0; i < n; i++)
                off += (size_t) snprintf(y + off, cap - off, "%sc%03zu", i ? ", " : "", i);
        snprintf(y + off, cap - off, "]\n");
        return y;
}

Test(release, capability_limits) {
        char *caps = names_yaml("known_capabilities: ", RELEASE_MAX_CAPABILITIES);
        size_t cap = strlen(caps) + 1024;
        char *y = malloc(cap);
        snprintf(y, cap, "version: \"1\"\n" IMAGE "%s", caps);
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(parse(y, &r, err), 0, "%s", err);
        cr_assert_eq(r.known_capabilities.n, RELEASE_MAX_CAPABILITIES);
        cr_assert_eq(release_cap_set(&r, "vCurrent")->caps.n, RELEASE_MAX_CAPABILITIES);
        release_info_free(&r);
        free(caps);
        free(y);
        caps = names_yaml("known_capabilities: ", RELEASE_MAX_CAPABILITIES + 1);
        cap = strlen(caps) + 1024;
        y = malloc(cap);
        snprintf(y, cap, "version: \"1\"\n" IMAGE "%s", caps);
        refuse(y, -EINVAL, "release.yaml:6: known_capabilities has more than 256 entries");
        free(caps);
        free(y);
        char name[80];
        memset(name, 'c', 65);
        name[65] = 0;
        char small[512];
        snprintf(small, sizeof small, "version: \"1\"\n" IMAGE "known_capabilities: [%s]\n", name);
        refuse(small, -EINVAL, "is not a valid capability name");
        name[64] = 0;
        snprintf(small, sizeof small, "version: \"1\"\n" IMAGE "known_capabilities: [%s]\n", name);
        cr_assert_eq(parse(small, &r, err), 0, "%s", err);
        release_info_free(&r);
}

static char *sets_yaml(size_t n, bool with_builtin) {
        size_t cap = 512 + n * 32;
        char *y = malloc(cap);
        size_t off = (size_t) snprintf(y, cap, "version: \"1\"\n" IMAGE "known_capabilities: [A]\ncapability_sets:\n");
        for (size_t i = 0; i < n; i++)
                off += (size_t) snprintf(y + off, cap - off, "  set%zu: [A]\n", i);
        if (with_builtin)
                snprintf(y + off, cap - off, "  None: []\n  vCurrent: [A]\n");
        return y;
}

Test(release, set_limits) {
        struct release_info r;
        char err[ERRLEN];
        char *y = sets_yaml(RELEASE_MAX_SETS - 2, false);
        cr_assert_eq(parse(y, &r, err), 0, "%s", err);
        cr_assert_eq(r.n_sets, RELEASE_MAX_SETS, "62 of the file's and the two added");
        release_info_free(&r);
        free(y);
        y = sets_yaml(RELEASE_MAX_SETS - 1, false);
        refuse(y, -EINVAL, "more than 64 capability sets");
        free(y);
        y = sets_yaml(RELEASE_MAX_SETS - 2, true);
        cr_assert_eq(parse(y, &r, err), 0, "%s", err);
        cr_assert_eq(r.n_sets, RELEASE_MAX_SETS);
        release_info_free(&r);
        free(y);
        y = sets_yaml(RELEASE_MAX_SETS + 1, false);
        refuse(y, -EINVAL, "release.yaml:72: more than 64 capability sets");
        free(y);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static const char *canon(json_object *o) {
        return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

Test(release, json_round_trip) {
        struct release_info r, back;
        char err[ERRLEN];
        cr_assert_eq(parse(full, &r, err), 0, "%s", err);
        json_object *o = release_info_to_json(&r);
        cr_assert_not_null(o);
        cr_assert_str_eq(canon(o),
                         "{\"version\":\"4.16.0\","
                         "\"os_image\":{\"url\":\"https:\\/\\/mirror.example.com\\/rhcos-4.16.img\",\"sha256\":\"" SHA "\","
                         "\"size\":1073741824,\"root_label\":\"sysroot\"},"
                         "\"known_capabilities\":[\"Console\",\"Insights\",\"MachineAPI\",\"baremetal\",\"marketplace\",\"openshift-samples\"],"
                         "\"capability_sets\":{\"None\":[],\"v4.11\":[\"baremetal\",\"marketplace\",\"openshift-samples\"],"
                         "\"v4.14\":[\"Console\",\"Insights\",\"baremetal\",\"marketplace\",\"openshift-samples\"],"
                         "\"vCurrent\":[\"Console\",\"Insights\",\"MachineAPI\",\"baremetal\",\"marketplace\",\"openshift-samples\"]},"
                         "\"default_profile\":\"single-node-developer\"}");
        json_object *again = json_tokener_parse(canon(o));
        cr_assert_eq(release_info_from_json(again, &back, err, sizeof err), 0, "%s", err);
        json_object *o2 = release_info_to_json(&back);
        cr_assert_str_eq(canon(o2), canon(o));
        cr_assert_eq(back.n_sets, 4);
        cr_assert_eq(back.os_image.size, 1073741824);
        json_object_put(o);
        json_object_put(o2);
        json_object_put(again);
        release_info_free(&r);
        release_info_free(&back);

        /* A path release: no url member. */
        cr_assert_eq(parse("version: \"1\"\nos_image: {path: rel/a.img, sha256: " SHA ", size: 7}\n", &r, err), 0, "%s", err);
        o = release_info_to_json(&r);
        json_object *img = json_object_object_get(o, "os_image"), *v;
        cr_assert_not(json_object_object_get_ex(img, "url", &v));
        cr_assert_str_eq(json_object_get_string(json_object_object_get(img, "path")), "rel/a.img");
        cr_assert_str_eq(json_object_get_string(json_object_object_get(img, "root_label")), "root");
        cr_assert_str_eq(json_object_get_string(json_object_object_get(o, "default_profile")), RELEASE_DEFAULT_PROFILE);
        cr_assert_eq(release_info_from_json(o, &back, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(back.os_image.path, "rel/a.img");
        json_object_put(o);
        release_info_free(&r);
        release_info_free(&back);
}

static void json_refuses(const char *json, int want_r, const char *want) {
        json_object *o = json_tokener_parse(json);
        cr_assert_not_null(o, "%s", json);
        struct release_info r;
        char err[ERRLEN] = "";
        cr_assert_eq(release_info_from_json(o, &r, err, sizeof err), want_r, "%s: %s", json, err);
        cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
        cr_assert_null(r.version);
        release_info_free(&r);
        json_object_put(o);
}

#define JIMG "\"os_image\":{\"url\":\"https://a/b\",\"sha256\":\"" SHA "\",\"size\":5}"

Test(release, from_json_has_the_same_checks) {
        json_refuses("[]", -EINVAL, "a release must be an object");
        json_refuses("{\"version\":\"1\"," JIMG ",\"extra\":1}", -EINVAL, "unknown key \"extra\"");
        json_refuses("{" JIMG "}", -EINVAL, "version is required");
        json_refuses("{\"version\":\".1\"," JIMG "}", -EINVAL, "version \".1\" must be");
        json_refuses("{\"version\":\"1\",\"os_image\":{\"url\":\"https://a/b\",\"sha256\":\"x\",\"size\":5}}", -EINVAL,
                     "os_image.sha256 must be 64 hex digits");
        json_refuses("{\"version\":\"1\",\"os_image\":{\"url\":\"https://a/b\",\"sha256\":\"" SHA "\",\"size\":\"5\"}}", -EINVAL,
                     "os_image.size must be a decimal integer");
        json_refuses("{\"version\":\"1\",\"os_image\":{\"url\":\"https://a/b\",\"sha256\":\"" SHA "\",\"size\":0}}", -EINVAL,
                     "os_image.size must be between 1 and");
        json_refuses("{\"version\":\"1\",\"os_image\":{\"url\":\"https://a/b\",\"sha256\":\"" SHA "\",\"size\":-3}}", -EINVAL,
                     "os_image.size must be a decimal integer");
        json_refuses("{\"version\":\"1\",\"os_image\":{\"url\":\"https://a/b\",\"sha256\":\"" SHA "\",\"size\":1.5}}", -EINVAL,
                     "os_image.size must be a decimal integer");
        json_refuses("{\"version\":\"1\"," JIMG ",\"known_capabilities\":[\"A\",\"A\"]}", -EINVAL, "lists \"A\" twice");
        json_refuses("{\"version\":\"1\"," JIMG ",\"known_capabilities\":[\"A\"],\"capability_sets\":{\"s\":[\"B\"]}}", -EINVAL,
                     "capability set \"s\" names unknown capability \"B\"");
        json_refuses("{\"version\":\"1\"," JIMG ",\"capability_sets\":[]}", -EINVAL, "capability_sets must be a mapping");
        json_refuses("{\"version\":\"1\"," JIMG ",\"known_capabilities\":[\"a\\u0000b\"]}", -EINVAL, "NUL");
        json_refuses("{\"version\":\"1\"," JIMG ",\"known_capabilities\":[{}]}", -EINVAL, "known_capabilities must be a scalar");
        json_refuses("{\"version\":\"1\"," JIMG ",\"default_profile\":[]}", -EINVAL, "default_profile must be a scalar");
        json_refuses("{\"version\":\"1\"," JIMG ",\"default_profile\":\"a b\"}", -EINVAL, "default_profile must be 1 to 64");
        /* Nesting is bounded (built by hand: json-c's own parser stops at 32). */
        json_object *deep = json_object_new_string("x");
        for (int i = 0; i < 40; i++) {
                json_object *a = json_object_new_array();
                json_object_array_add(a, deep);
                deep = a;
        }
        json_object *top = json_tokener_parse("{\"version\":\"1\"," JIMG "}");
        json_object_object_add(top, "known_capabilities", deep);
        struct release_info dr;
        char derr[ERRLEN];
        cr_assert_eq(release_info_from_json(top, &dr, derr, sizeof derr), -EINVAL);
        cr_assert(strstr(derr, "nested deeper than 32 levels"), "%s", derr);
        release_info_free(&dr);
        json_object_put(top);
        /* null members are "not given", as in YAML. */
        json_object *o = json_tokener_parse("{\"version\":\"1\"," JIMG ",\"known_capabilities\":null,\"capability_sets\":null,"
                                            "\"default_profile\":null}");
        struct release_info r;
        char err[ERRLEN];
        cr_assert_eq(release_info_from_json(o, &r, err, sizeof err), 0, "%s", err);
        cr_assert_eq(r.n_sets, 2);
        cr_assert_str_eq(r.os_image.root_label, "root");
        release_info_free(&r);
        json_object_put(o);
        /* Upper-case sha256 from JSON is stored lower case too. */
        o = json_tokener_parse("{\"version\":\"1\",\"os_image\":{\"path\":\"/x\",\"sha256\":\"" SHA_UPPER "\",\"size\":5}}");
        cr_assert_eq(release_info_from_json(o, &r, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(r.os_image.sha256, SHA);
        release_info_free(&r);
        json_object_put(o);
}

/* ---- damaged input --------------------------------------------------------------------- */

static uint64_t rng_state;
static uint32_t rnd(void) {
        return tu_xorshift(&rng_state);
}

static int ok_count, refused_count;

static void check_damaged(const char *data, size_t len) {
        struct release_info r;
        char err[ERRLEN] = "";
        int ret = release_info_parse_yaml(data, len, &r, err, sizeof err);
        cr_assert(ret == 0 || ret == -EINVAL, "ret = %d", ret);
        if (ret < 0) {
                refused_count++;
                cr_assert_neq(err[0], 0, "a refusal has a reason");
                cr_assert_null(r.version);
        } else {
                ok_count++;
                cr_assert_not_null(r.version);
                cr_assert_not_null(r.os_image.sha256);
                cr_assert(r.os_image.url || r.os_image.path);
                cr_assert_not_null(release_cap_set(&r, "None"));
                cr_assert_not_null(release_cap_set(&r, "vCurrent"));
                json_object *o = release_info_to_json(&r);
                struct release_info back;
                cr_assert_eq(release_info_from_json(o, &back, err, sizeof err), 0, "%s", err);
                release_info_free(&back);
                json_object_put(o);
        }
        release_info_free(&r);
}

Test(release, truncated_prefixes) {
        size_t len = strlen(full);
        ok_count = refused_count = 0;
        for (size_t n = 0; n <= len; n++) {
                char *p = malloc(n ? n : 1); /* exact size: ASan sees any overread */
                memcpy(p, full, n);
                check_damaged(p, n);
                free(p);
        }
        cr_assert_gt(ok_count, 0);
        cr_assert_gt(refused_count, 100);
}

Test(release, random_byte_flips) {
        static const char interesting[] = "-.%#:'\"[]{}&*!|>\n\r\t \\\x00\x80\xc3\xe2\xf0\xff";
        size_t len = strlen(full);
        char *p = malloc(len);
        rng_state = 0x853c49e6748fea9bull;
        ok_count = refused_count = 0;
        for (int iter = 0; iter < 2000; iter++) {
                memcpy(p, full, len);
                int flips = 1 + (int) (rnd() % 4);
                for (int f = 0; f < flips; f++) {
                        size_t at = rnd() % len;
                        p[at] = rnd() % 2 ? (char) rnd() : interesting[rnd() % (sizeof interesting - 1)];
                }
                check_damaged(p, rnd() % 3 == 0 ? rnd() % (len + 1) : len);
        }
        free(p);
        cr_assert_gt(ok_count, 20, "%d parsed", ok_count);
        cr_assert_gt(refused_count, 200, "%d refused", refused_count);
}
