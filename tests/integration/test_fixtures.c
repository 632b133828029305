/* Captured machines: `muster-agent inventory --sysroot fixture/root` must
 * equal fixture/expected.json field by field. expected.json is written by
 * tests/fixtures/derive.py from the capture's raw files and the hand-written
 * facts in FACTS.md, never from the agent's output; a test checks that it is
 * still what derive.py writes. Fixtures are made with
 * tests/fixtures/capture.sh; see tests/fixtures/README.md. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

/* Compare two JSON values; every difference is written to `out` as one
 * line naming its path. Returns the number of differences. */
static int json_diff(const char *path, json_object *want, json_object *got, char *out, size_t outlen) {
        char sub[1024];
        int n = 0;
        json_type tw = json_object_get_type(want), tg = json_object_get_type(got);

        if (tw == json_type_double || tg == json_type_double) {
                if ((tw == json_type_double || tw == json_type_int) && (tg == json_type_double || tg == json_type_int) &&
                    fabs(json_object_get_double(want) - json_object_get_double(got)) < 1e-6)
                        return 0;
        }
        if (tw != tg) {
                size_t l = strlen(out);
                snprintf(out + l, outlen - l, "%s: expected %s, got %s\n", path,
                         json_object_to_json_string(want), json_object_to_json_string(got));
                return 1;
        }
        switch (tw) {
        case json_type_object: {
                json_object_object_foreach(want, k, v) {
                        json_object *g = NULL;
                        snprintf(sub, sizeof sub, "%s.%s", path, k);
                        if (!json_object_object_get_ex(got, k, &g)) {
                                size_t l = strlen(out);
                                snprintf(out + l, outlen - l, "%s: missing\n", sub);
                                n++;
                                continue;
                        }
                        n += json_diff(sub, v, g, out, outlen);
                }
                json_object_object_foreach(got, k2, v2) {
                        (void) v2;
                        if (!json_object_object_get_ex(want, k2, NULL)) {
                                size_t l = strlen(out);
                                snprintf(out + l, outlen - l, "%s.%s: unexpected %s\n", path, k2,
                                         json_object_to_json_string(v2));
                                n++;
                        }
                }
                return n;
        }
        case json_type_array: {
                size_t lw = json_object_array_length(want), lg = json_object_array_length(got);
                if (lw != lg) {
                        size_t l = strlen(out);
                        snprintf(out + l, outlen - l, "%s: expected %zu entries, got %zu\n", path, lw, lg);
                        n++;
                }
                for (size_t i = 0; i < lw && i < lg; i++) {
                        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
                        n += json_diff(sub, json_object_array_get_idx(want, i), json_object_array_get_idx(got, i),
                                       out, outlen);
                }
                return n;
        }
        default:
                if (strcmp(json_object_to_json_string(want), json_object_to_json_string(got)) != 0) {
                        size_t l = strlen(out);
                        snprintf(out + l, outlen - l, "%s: expected %s, got %s\n", path,
                                 json_object_to_json_string(want), json_object_to_json_string(got));
                        return 1;
                }
                return 0;
        }
}

static int check_fixture(const char *name) {
        char root[4096], expected[4096];
        snprintf(root, sizeof root, "%s/%s/root", MUSTER_FIXTURES_DIR, name);
        snprintf(expected, sizeof expected, "%s/%s/expected.json", MUSTER_FIXTURES_DIR, name);
        json_object *want = json_object_from_file(expected);
        cr_assert_not_null(want, "%s is readable JSON", expected);
        int st;
        json_object *got = tu_agent_inventory(root, &st);
        cr_assert_eq(st, 0);
        cr_assert_not_null(got);
        static char report[1 << 16];
        report[0] = '\0';
        int n = json_diff(name, want, got, report, sizeof report);
        cr_expect_eq(n, 0, "fixture %s differs from its golden inventory in %d field(s):\n%s", name, n, report);
        json_object_put(want);
        json_object_put(got);
        return n;
}

Test(fixtures, every_fixture_matches_its_golden_inventory) {
        DIR *d = opendir(MUSTER_FIXTURES_DIR);
        struct dirent *de;
        int checked = 0;
        cr_assert_not_null(d);
        while ((de = readdir(d))) {
                char p[4096];
                struct stat st;
                snprintf(p, sizeof p, "%s/%s/expected.json", MUSTER_FIXTURES_DIR, de->d_name);
                if (de->d_name[0] == '.' || stat(p, &st) < 0)
                        continue;
                check_fixture(de->d_name);
                checked++;
        }
        closedir(d);
        cr_assert_geq(checked, 2, "at least two captured machines (found %d)", checked);
}

/* Nobody edited an expected.json by hand (or from the agent's output): it
 * is what derive.py makes of the facts. */
Test(fixtures, expected_files_are_derived_from_the_facts) {
        const char *probe[] = { "python3", "--version", NULL };
        int st = -1;
        char *out = tu_run(probe, &st, NULL);
        free(out);
        if (st != 0)
                cr_skip_test("python3 is not installed: tests/fixtures/derive.py cannot be checked");
        char *err = NULL;
        st = tu_runf(NULL, &err, "python3 %s/derive.py --check %s/build-machine %s/qemu-q35", MUSTER_FIXTURES_DIR,
                     MUSTER_FIXTURES_DIR, MUSTER_FIXTURES_DIR);
        cr_assert_eq(st, 0, "derive.py --check: %s", err ? err : "");
        free(err);
}

Test(fixtures, build_machine_fixture_has_a_disk_and_a_nic) {
        /* Guards against a golden file emptied by mistake. */
        char p[4096];
        snprintf(p, sizeof p, "%s/build-machine/expected.json", MUSTER_FIXTURES_DIR);
        json_object *want = json_object_from_file(p);
        cr_assert_not_null(want);
        cr_assert_gt(json_object_array_length(tu_json_get(want, "disks")), 0);
        cr_assert_gt(json_object_array_length(tu_json_get(want, "interfaces")), 0);
        cr_assert_not_null(tu_json_get(want, "host_id"));
        json_object_put(want);
}
