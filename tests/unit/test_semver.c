/* semver: SemVer 2.0.0 parsing and precedence (semver.org's own examples),
 * npm-style ranges desugared to canonical comparators, their matching under
 * plain precedence, refusals with their words, and the per-set intervals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semver.h"

#define N(a) (sizeof(a) / sizeof *(a))

static struct semver V(const char *s) {
        struct semver v;
        cr_assert_eq(semver_parse(s, &v), 0, "parse '%s'", s);
        return v;
}

static int cmp(const char *a, const char *b) {
        struct semver x = V(a), y = V(b);
        return semver_cmp(&x, &y);
}

static char *repeat(const char *unit, size_t n, const char *sep) {
        size_t ul = strlen(unit), sl = strlen(sep);
        char *s = malloc(n * (ul + sl) + 1), *p = s;
        cr_assert_not_null(s);
        for (size_t i = 0; i < n; i++) {
                if (i) {
                        memcpy(p, sep, sl);
                        p += sl;
                }
                memcpy(p, unit, ul);
                p += ul;
        }
        *p = '\0';
        return s;
}

Test(semver, precedence_of_semver_org_example) {
        const char *order[] = { "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
                                "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",       "1.0.0" };
        for (size_t i = 0; i < N(order); i++)
                for (size_t j = 0; j < N(order); j++) {
                        int want = (i > j) - (i < j);
                        cr_assert_eq(cmp(order[i], order[j]), want, "%s vs %s", order[i], order[j]);
                }
}

Test(semver, precedence_of_numbers_and_identifiers) {
        const char *lower_higher[][2] = {
                { "1.9.0", "1.10.0" },
                { "1.0.0", "2.0.0" },
                { "2.0.0", "2.1.0" },
                { "2.1.0", "2.1.1" },
                { "1.99.99", "2.0.0-0" },
                { "1.0.0-2", "1.0.0-10" },
                { "1.0.0-99999999999999999999", "1.0.0-100000000000000000000" }, /* past 64 bits */
                { "1.0.0-1", "1.0.0-a" },                                       /* numeric below alphanumeric */
                { "1.0.0-999", "1.0.0--" },
                { "1.0.0-Z", "1.0.0-a" },                                       /* ASCII */
                { "1.0.0-a", "1.0.0-a-" },
                { "1.0.0-a", "1.0.0-a.0" },
                { "1.0.0-1a", "1.0.0-a" },
                { "1.0.0-0", "1.0.0-0.0" },
                { "0.0.0-0", "0.0.0-00a" },
                { "1.0.0-rc.1", "1.0.0" },
                { "18446744073709551614.0.0", "18446744073709551615.0.0" },
        };
        for (size_t i = 0; i < N(lower_higher); i++) {
                cr_assert_lt(cmp(lower_higher[i][0], lower_higher[i][1]), 0, "%s < %s", lower_higher[i][0],
                             lower_higher[i][1]);
                cr_assert_gt(cmp(lower_higher[i][1], lower_higher[i][0]), 0, "%s > %s", lower_higher[i][1],
                             lower_higher[i][0]);
        }
        cr_assert_eq(cmp("1.0.0-alpha", "1.0.0-alpha"), 0);
}

Test(semver, build_metadata_is_ignored_but_kept) {
        cr_assert_eq(cmp("1.0.0+a", "1.0.0+b.2"), 0);
        cr_assert_eq(cmp("1.0.0", "1.0.0+20130313144700"), 0);
        cr_assert_eq(cmp("1.0.0-beta+exp.sha.5114f85", "1.0.0-beta"), 0);
        cr_assert_lt(cmp("1.0.0-beta+zzz", "1.0.0+aaa"), 0);

        struct semver v = V("1.0.0-beta.2+exp.sha.5114f85");
        cr_assert_eq(v.major, 1);
        cr_assert_eq(v.n_pre, 2);
        cr_assert_eq(v.pre_len, 6);
        cr_assert_eq(strncmp(v.text + v.pre_off, "beta.2", v.pre_len), 0);
        cr_assert_eq(strncmp(v.text + v.build_off, "exp.sha.5114f85", v.build_len), 0);
        char buf[SEMVER_MAX_LEN + 1];
        cr_assert_eq(semver_format(&v, buf, sizeof buf), (int) strlen("1.0.0-beta.2+exp.sha.5114f85"));
        cr_assert_str_eq(buf, "1.0.0-beta.2+exp.sha.5114f85");
        char small[8];
        cr_assert_eq(semver_format(&v, small, sizeof small), -ENOSPC);
        cr_assert_str_eq(small, "");
}

Test(semver, parse_accepts) {
        const char *ok[] = {
                "0.0.0",
                "1.2.3",
                "10.20.30",
                "18446744073709551615.18446744073709551615.18446744073709551615",
                "1.1.2-prerelease+meta",
                "1.0.0-alpha.beta.1",
                "1.0.0-0A.is.legal",
                "1.0.0-00a",
                "1.2.3----RC-SNAPSHOT.12.9.1--.12+788",
                "1.2.3----R-S.12.9.1--.12+meta",
                "1.0.0+0.build.1-rc.10000aaa-kk-0.1",
                "1.0.0+001",
                "9999999999999999999.0.0",
        };
        for (size_t i = 0; i < N(ok); i++) {
                struct semver v;
                cr_assert_eq(semver_parse(ok[i], &v), 0, "'%s'", ok[i]);
                cr_assert_str_eq(v.text, ok[i]);
        }
        struct semver v = V("18446744073709551615.1.0");
        cr_assert_eq(v.major, UINT64_MAX);
}

Test(semver, parse_refuses) {
        const char *bad[] = {
                "",
                "1",
                "1.2",
                "1.2.3.4",
                "v1.2.3",
                "V1.2.3",
                "=1.2.3",
                " 1.2.3",
                "1.2.3 ",
                "1.2.3\n",
                "01.2.3",
                "1.02.3",
                "1.2.03",
                "00.0.0",
                "1.2.3-01",
                "1.2.3-alpha.00",
                "1.2.3-",
                "1.2.3-.a",
                "1.2.3-a.",
                "1.2.3-a..b",
                "1.2.3+",
                "1.2.3+a..b",
                "1.2.3+a+b",
                "1.2.3-a_b",
                "1.2.3-\xc3\xa9",
                "1.2.3-a b",
                "1.2.x",
                "1.2.*",
                "-1.2.3",
                "1.-2.3",
                "1..3",
                "1.2.3x",
                "+1.2.3",
                "1.2.3-alpha+",
                "18446744073709551616.0.0",
                "0.18446744073709551616.0",
                "0.0.99999999999999999999",
        };
        for (size_t i = 0; i < N(bad); i++) {
                struct semver v = { .major = 42 };
                cr_assert_eq(semver_parse(bad[i], &v), -EINVAL, "'%s'", bad[i]);
                cr_assert_eq(v.major, 42, "'%s' left the output alone", bad[i]);
        }
        cr_assert_eq(semver_parse(NULL, &(struct semver){ 0 }), -EINVAL);
}

Test(semver, parse_limits) {
        /* Exactly SEMVER_MAX_LEN characters is fine, one more is not. */
        char s[SEMVER_MAX_LEN + 2];
        memset(s, 'a', sizeof s);
        memcpy(s, "1.2.3-", 6);
        s[SEMVER_MAX_LEN] = '\0';
        struct semver v;
        cr_assert_eq(semver_parse(s, &v), 0);
        cr_assert_eq(strlen(v.text), SEMVER_MAX_LEN);
        s[SEMVER_MAX_LEN] = 'a';
        s[SEMVER_MAX_LEN + 1] = '\0';
        cr_assert_eq(semver_parse(s, &v), -EINVAL);

        /* 32 pre-release identifiers, not 33. */
        char *ids = repeat("a", SEMVER_MAX_PRERELEASE, "."), *t = NULL;
        cr_assert_geq(asprintf(&t, "1.0.0-%s", ids), 0);
        cr_assert_eq(semver_parse(t, &v), 0);
        cr_assert_eq(v.n_pre, 32);
        free(t);
        cr_assert_geq(asprintf(&t, "1.0.0-%s.b", ids), 0);
        cr_assert_eq(semver_parse(t, &v), -EINVAL);
        free(t);
        free(ids);
        /* Build identifiers are not counted. */
        ids = repeat("b", 60, ".");
        cr_assert_geq(asprintf(&t, "1.0.0+%s", ids), 0);
        cr_assert_eq(semver_parse(t, &v), 0);
        free(t);
        free(ids);
}

/* ---- Ranges ---- */

static char *canon(const char *text) {
        struct semver_range r;
        char err[256], *out = NULL;
        cr_assert_eq(semver_range_parse(text, &r, err, sizeof err), 0, "'%s': %s", text, err);
        cr_assert_gt(semver_range_format(&r, &out), 0);
        semver_range_free(&r);
        return out;
}

/* Match through the comparators, and check the intervals say the same. */
static bool match(const struct semver_range *r, const char *ver) {
        struct semver v = V(ver);
        bool m = semver_range_match(r, &v), by_iv = false;
        for (size_t i = 0; i < r->n_sets; i++)
                by_iv = by_iv || semver_interval_contains(&r->sets[i].iv, &v);
        cr_assert_eq(m, by_iv, "comparators and intervals disagree on %s", ver);
        return m;
}

#define MAXV 8
struct range_case {
        const char *text, *canonical;
        const char *yes[MAXV], *no[MAXV];
};

static const struct range_case range_cases[] = {
        /* primitives */
        { "1.2.3", "=1.2.3", { "1.2.3", "1.2.3+b" }, { "1.2.4", "1.2.3-a", "1.2.2" } },
        { "=1.2.3", "=1.2.3", { "1.2.3" }, { "1.2.4" } },
        { "==1.2.3", "=1.2.3", { "1.2.3" }, { "1.2.4" } },
        { "!=1.2.3", "!=1.2.3", { "1.2.4", "1.2.3-a", "0.0.0" }, { "1.2.3", "1.2.3+b" } },
        { "<1.2.3", "<1.2.3", { "1.2.2", "1.2.3-alpha", "0.0.0-0" }, { "1.2.3", "1.2.4" } },
        { "<=1.2.3", "<=1.2.3", { "1.2.3", "1.2.3+z", "1.2.3-rc.1" }, { "1.2.4-0", "1.2.4" } },
        { ">1.2.3", ">1.2.3", { "1.2.4-0", "2.0.0" }, { "1.2.3", "1.2.3-z" } },
        { ">=1.2.3", ">=1.2.3", { "1.2.3", "1.2.4-0" }, { "1.2.3-z", "1.2.2" } },
        { ">= 1.0.0", ">=1.0.0", { "1.0.0" }, { "0.9.9" } },
        { "  <\t2.0.0 ", "<2.0.0", { "2.0.0-alpha", "1.0.0" }, { "2.0.0" } },
        { "1.2.3-beta.2", "=1.2.3-beta.2", { "1.2.3-beta.2" }, { "1.2.3-beta.11", "1.2.3" } },
        { "1.2.3+build.5", "=1.2.3", { "1.2.3", "1.2.3+other" }, { "1.2.4" } },
        { ">1.0.0-alpha+b", ">1.0.0-alpha", { "1.0.0-alpha.1", "1.0.0" }, { "1.0.0-alpha" } },
        /* X-ranges and partial versions */
        { "*", "*", { "0.0.0-0", "1.2.3-beta", "99.0.0" }, { 0 } },
        { "x", "*", { "1.0.0" }, { 0 } },
        { "X", "*", { "1.0.0" }, { 0 } },
        { "", "*", { "0.0.0", "5.0.0-rc.1" }, { 0 } },
        { "   ", "*", { "0.0.0" }, { 0 } },
        { "1", ">=1.0.0 <2.0.0-0", { "1.0.0", "1.99.99" }, { "1.0.0-rc.1", "2.0.0-0", "0.9.9" } },
        { "1.x", ">=1.0.0 <2.0.0-0", { "1.5.0" }, { "2.0.0" } },
        { "1.X.x", ">=1.0.0 <2.0.0-0", { "1.5.0" }, { "2.0.0" } },
        { "1.*.*", ">=1.0.0 <2.0.0-0", { "1.5.0" }, { "2.0.0" } },
        { "=1.x", ">=1.0.0 <2.0.0-0", { "1.5.0" }, { "2.0.0-alpha" } },
        { "1.2", ">=1.2.0 <1.3.0-0", { "1.2.0", "1.2.99" }, { "1.2.0-rc", "1.3.0-0", "1.1.0" } },
        { "1.2.x", ">=1.2.0 <1.3.0-0", { "1.2.5" }, { "1.3.0" } },
        { "==1.2.*", ">=1.2.0 <1.3.0-0", { "1.2.5" }, { "1.3.0" } },
        { "x.x.x", "*", { "3.0.0" }, { 0 } },
        { ">1", ">=2.0.0-0", { "2.0.0-0", "2.0.0-alpha", "3.0.0" }, { "1.99.99", "1.0.0" } },
        { ">1.2", ">=1.3.0-0", { "1.3.0-alpha", "1.3.0" }, { "1.2.99" } },
        { ">1.x", ">=2.0.0-0", { "2.0.0" }, { "1.9.0" } },
        { ">=1", ">=1.0.0", { "1.0.0", "2.0.0" }, { "1.0.0-rc" } },
        { ">=1.2", ">=1.2.0", { "1.2.0" }, { "1.2.0-rc", "1.1.9" } },
        { "<1", "<1.0.0-0", { "0.9.9" }, { "1.0.0-alpha", "1.0.0" } },
        { "<1.2", "<1.2.0-0", { "1.1.99" }, { "1.2.0-alpha", "1.2.0" } },
        { "<=1", "<2.0.0-0", { "1.99.0" }, { "2.0.0-alpha" } },
        { "<=1.2", "<1.3.0-0", { "1.2.99" }, { "1.3.0-0" } },
        { "<=1.2.x", "<1.3.0-0", { "1.2.99" }, { "1.3.0-0" } },
        { ">*", "<0.0.0-0", { 0 }, { "0.0.0-0", "0.0.0", "1.0.0" } },
        { "<x", "<0.0.0-0", { 0 }, { "0.0.0-0", "1.0.0" } },
        { ">=*", "*", { "0.0.0-0" }, { 0 } },
        { "<=*", "*", { "9.9.9" }, { 0 } },
        { "=*", "*", { "9.9.9" }, { 0 } },
        /* tilde */
        { "~1.2.3", ">=1.2.3 <1.3.0-0", { "1.2.3", "1.2.9" }, { "1.2.2", "1.3.0-0", "1.3.0" } },
        { "~1.2", ">=1.2.0 <1.3.0-0", { "1.2.0", "1.2.9" }, { "1.3.0" } },
        { "~1.2.x", ">=1.2.0 <1.3.0-0", { "1.2.0" }, { "1.3.0" } },
        { "~1", ">=1.0.0 <2.0.0-0", { "1.9.0" }, { "2.0.0" } },
        { "~1.x", ">=1.0.0 <2.0.0-0", { "1.9.0" }, { "2.0.0" } },
        { "~0", ">=0.0.0 <1.0.0-0", { "0.9.0" }, { "1.0.0" } },
        { "~*", "*", { "1.0.0" }, { 0 } },
        { "~ 1.2.3", ">=1.2.3 <1.3.0-0", { "1.2.4" }, { "1.3.0" } },
        { "~1.2.3-beta.2", ">=1.2.3-beta.2 <1.3.0-0", { "1.2.3-beta.4", "1.2.3" }, { "1.2.3-beta.1" } },
        /* caret */
        { "^1.2.3", ">=1.2.3 <2.0.0-0", { "1.2.3", "1.9.9" }, { "2.0.0-alpha", "2.0.0", "1.2.2" } },
        { "^0.2.3", ">=0.2.3 <0.3.0-0", { "0.2.9" }, { "0.3.0", "0.3.0-0" } },
        { "^0.0.3", ">=0.0.3 <0.0.4-0", { "0.0.3" }, { "0.0.4", "0.0.4-0", "0.0.2" } },
        { "^0.0.0", ">=0.0.0 <0.0.1-0", { "0.0.0" }, { "0.0.1" } },
        { "^1.2", ">=1.2.0 <2.0.0-0", { "1.9.0" }, { "2.0.0" } },
        { "^1.2.x", ">=1.2.0 <2.0.0-0", { "1.9.0" }, { "2.0.0" } },
        { "^1", ">=1.0.0 <2.0.0-0", { "1.9.0" }, { "2.0.0" } },
        { "^0.x", ">=0.0.0 <1.0.0-0", { "0.0.1", "0.9.0" }, { "1.0.0-0" } },
        { "^0", ">=0.0.0 <1.0.0-0", { "0.9.0" }, { "1.0.0" } },
        { "^0.0", ">=0.0.0 <0.1.0-0", { "0.0.9" }, { "0.1.0" } },
        { "^0.0.x", ">=0.0.0 <0.1.0-0", { "0.0.9" }, { "0.1.0" } },
        { "^0.1", ">=0.1.0 <0.2.0-0", { "0.1.9" }, { "0.2.0" } },
        { "^*", "*", { "7.0.0" }, { 0 } },
        { "^1.2.3-beta.2", ">=1.2.3-beta.2 <2.0.0-0", { "1.2.3-beta.4", "1.5.0" }, { "1.2.3-beta.1" } },
        { "^0.0.3-beta", ">=0.0.3-beta <0.0.4-0", { "0.0.3-pr.2", "0.0.3" }, { "0.0.4" } },
        /* hyphen ranges */
        { "1.2.3 - 2.3.4", ">=1.2.3 <=2.3.4", { "1.2.3", "2.3.4", "2.3.4-rc" }, { "1.2.2", "2.3.5-0", "2.3.5" } },
        { "1.2.3 - 2.3", ">=1.2.3 <2.4.0-0", { "2.3.9" }, { "2.4.0-0", "2.4.0" } },
        { "1.2.3 - 2", ">=1.2.3 <3.0.0-0", { "2.9.9" }, { "3.0.0-0" } },
        { "1.2 - 2.3.4", ">=1.2.0 <=2.3.4", { "1.2.0" }, { "1.1.9", "1.2.0-rc" } },
        { "1.x - 2.x", ">=1.0.0 <3.0.0-0", { "2.9.0" }, { "3.0.0" } },
        { "* - 2.0.0", "<=2.0.0", { "0.0.0" }, { "2.0.1" } },
        { "1.2.3 - *", ">=1.2.3", { "9.0.0" }, { "1.2.2" } },
        { "1.2.3-alpha - 2.0.0-beta", ">=1.2.3-alpha <=2.0.0-beta", { "2.0.0-beta", "1.5.0" }, { "2.0.0" } },
        { "1.2.3\t-\t2.3.4", ">=1.2.3 <=2.3.4", { "2.0.0" }, { "3.0.0" } },
        { "1.0.0 - 2.0.0 !=1.5.0", ">=1.0.0 <=2.0.0 !=1.5.0", { "1.4.0" }, { "1.5.0" } },
        /* AND, OR */
        { ">=1.0.0 <2.0.0", ">=1.0.0 <2.0.0", { "1.0.0", "2.0.0-rc.1" }, { "2.0.0", "0.9.0" } },
        { ">1.0.0 <1.0.0", ">1.0.0 <1.0.0", { 0 }, { "1.0.0", "0.0.1", "2.0.0" } },
        { ">=1.0.0 !=1.5.0 <2.0.0", ">=1.0.0 !=1.5.0 <2.0.0", { "1.4.0", "1.5.1" }, { "1.5.0", "1.5.0+b" } },
        { "^1.2.3 || 3.0.0", ">=1.2.3 <2.0.0-0 || =3.0.0", { "1.5.0", "3.0.0" }, { "2.0.0", "3.0.1" } },
        { "1.2.7 || >=1.2.9 <2.0.0", "=1.2.7 || >=1.2.9 <2.0.0", { "1.2.7", "1.2.9", "1.4.6" },
          { "1.2.8", "2.0.0" } },
        { "1.x||>=2.5.0||5.0.0 - 7.2.3", ">=1.0.0 <2.0.0-0 || >=2.5.0 || >=5.0.0 <=7.2.3",
          { "1.2.3", "2.5.0", "6.0.0" }, { "2.0.0", "0.1.0" } },
        { "|| 1.2.3", "* || =1.2.3", { "0.0.1", "9.9.9" }, { 0 } },
        { "1.2.3 ||", "=1.2.3 || *", { "0.0.1" }, { 0 } },
        { ">*  ||  <x", "<0.0.0-0 || <0.0.0-0", { 0 }, { "1.0.0" } },
        { "<1.0.0 || >=2.0.0 !=2.1.0", "<1.0.0 || >=2.0.0 !=2.1.0", { "0.9.0", "2.0.0", "2.2.0" },
          { "1.5.0", "2.1.0" } },
};

Test(semver_range, table) {
        for (size_t i = 0; i < N(range_cases); i++) {
                const struct range_case *c = &range_cases[i];
                struct semver_range r;
                char err[256], *out = NULL;
                cr_assert_eq(semver_range_parse(c->text, &r, err, sizeof err), 0, "'%s': %s", c->text, err);
                cr_assert_str_empty(err);
                cr_assert_geq(semver_range_format(&r, &out), 0);
                cr_assert_str_eq(out, c->canonical, "'%s'", c->text);
                for (size_t j = 0; j < MAXV && c->yes[j]; j++)
                        cr_assert(match(&r, c->yes[j]), "'%s' should match %s", c->text, c->yes[j]);
                for (size_t j = 0; j < MAXV && c->no[j]; j++)
                        cr_assert_not(match(&r, c->no[j]), "'%s' should not match %s", c->text, c->no[j]);

                /* The canonical form is a fixed point and means the same. */
                char *again = canon(out);
                cr_assert_str_eq(again, out, "'%s'", c->text);
                struct semver_range r2;
                cr_assert_eq(semver_range_parse(out, &r2, err, sizeof err), 0);
                for (size_t j = 0; j < MAXV && c->yes[j]; j++)
                        cr_assert(match(&r2, c->yes[j]));
                for (size_t j = 0; j < MAXV && c->no[j]; j++)
                        cr_assert_not(match(&r2, c->no[j]));
                semver_range_free(&r2);
                free(again);
                free(out);
                semver_range_free(&r);
                cr_assert_null(r.sets);
        }
}

Test(semver_range, prerelease_bounds_under_plain_precedence) {
        /* The -0 upper bounds keep the next major's pre-releases out; a
         * plain bound does not, as blang/semver does not. */
        struct semver_range r;
        cr_assert_eq(semver_range_parse("^1.2.3", &r, NULL, 0), 0);
        cr_assert_not(match(&r, "2.0.0-alpha"));
        cr_assert_not(match(&r, "2.0.0-0"));
        cr_assert(match(&r, "1.9.9-alpha"), "no npm-style pre-release exclusion");
        semver_range_free(&r);
        cr_assert_eq(semver_range_parse("<2.0.0", &r, NULL, 0), 0);
        cr_assert(match(&r, "2.0.0-alpha"));
        semver_range_free(&r);
        cr_assert_eq(semver_range_parse(">=1.0.0 <2.0.0", &r, NULL, 0), 0);
        cr_assert(match(&r, "1.5.0-beta"));
        semver_range_free(&r);
}

struct refusal {
        const char *text;
        int code;
        const char *words;
};

static const struct refusal refusals[] = {
        { "1.2.3 - ", -EINVAL, "a hyphen range needs a version on each side" },
        { "1.2.3 -", -EINVAL, "a hyphen range needs a version on each side" },
        { "- 1.2.3", -EINVAL, "a hyphen range needs a version on each side" },
        { "1.2.3 - || 2.0.0", -EINVAL, "a hyphen range needs a version on each side" },
        { ">=1.2.3 - 2.0.0", -EINVAL, "a hyphen range takes versions without operators" },
        { "1.2.3 - <2.0.0", -EINVAL, "a hyphen range takes versions without operators" },
        { ">=", -EINVAL, "an operator needs a version after it" },
        { "1.0.0 <", -EINVAL, "an operator needs a version after it" },
        { "^", -EINVAL, "an operator needs a version after it" },
        { "~ || 1.0.0", -EINVAL, "an operator needs a version after it" },
        { "1.2.3 | 2.0.0", -EINVAL, "a single '|'" },
        { "1.2.3 |", -EINVAL, "a single '|'" },
        { "1.2.3 ||| 2.0.0", -EINVAL, "a single '|'" },
        { "!1.2.3", -EINVAL, "'!' is only valid as '!='" },
        { "!=1.2", -EINVAL, "'!=' needs a full MAJOR.MINOR.PATCH version" },
        { "!=1.x", -EINVAL, "'!=' needs a full MAJOR.MINOR.PATCH version" },
        { "!=*", -EINVAL, "'!=' needs a full MAJOR.MINOR.PATCH version" },
        { ">>1.2.3", -EINVAL, "more than one operator" },
        { "~>1.2.3", -EINVAL, "more than one operator" },
        { ">==1.2.3", -EINVAL, "more than one operator" },
        { "v1.2.3", -EINVAL, "a leading 'v' is not part of a version" },
        { ">=v1.2", -EINVAL, "a leading 'v' is not part of a version" },
        { "1.02", -EINVAL, "a numeric part has a leading zero" },
        { "1.2.03", -EINVAL, "a numeric part has a leading zero" },
        { "1.2.3-01", -EINVAL, "a numeric pre-release identifier has a leading zero" },
        { "1.2.3-", -EINVAL, "an empty pre-release identifier" },
        { "1.2.3+", -EINVAL, "an empty build identifier" },
        { "1.2.3-a_b", -EINVAL, "a character outside [0-9A-Za-z.+-]" },
        { "1.2.3-\xc3\xa9", -EINVAL, "a character outside [0-9A-Za-z-]" },
        { "1.x.3", -EINVAL, "a number after a wildcard" },
        { "*.1", -EINVAL, "a number after a wildcard" },
        { "1.2-beta", -EINVAL, "a pre-release or build needs a full MAJOR.MINOR.PATCH version" },
        { "1.2.x-beta", -EINVAL, "a pre-release or build needs a full MAJOR.MINOR.PATCH version" },
        { "1+b", -EINVAL, "a pre-release or build needs a full MAJOR.MINOR.PATCH version" },
        { "1.2.3.4", -EINVAL, "more than MAJOR.MINOR.PATCH" },
        { "a.b.c", -EINVAL, "not a number or wildcard (*, x, X)" },
        { "1a", -EINVAL, "not a number or wildcard (*, x, X)" },
        { "1.2.3,", -EINVAL, "not a number or wildcard (*, x, X)" },
        { "1.2.3-a+b+c", -EINVAL, "unexpected text after the version" },
        { ">=1.0, <2.0", -EINVAL, "not a number or wildcard (*, x, X)" },
        { "1..2", -EINVAL, "an empty part" },
        { "1.", -EINVAL, "an empty part after '.'" },
        { "18446744073709551616", -EINVAL, "a numeric part does not fit 64 bits" },
        { ">18446744073709551615", -EINVAL, "a numeric part too large to take the next version" },
        { "^18446744073709551615.1.2", -EINVAL, "a numeric part too large to take the next version" },
        { "~1.18446744073709551615", -EINVAL, "a numeric part too large to take the next version" },
        { "1.2.3 - 2.18446744073709551615", -EINVAL, "a numeric part too large to take the next version" },
};

Test(semver_range, refusals) {
        for (size_t i = 0; i < N(refusals); i++) {
                struct semver_range r = { .n_sets = 7 };
                char err[256];
                int ret = semver_range_parse(refusals[i].text, &r, err, sizeof err);
                cr_assert_eq(ret, refusals[i].code, "'%s': %d (%s)", refusals[i].text, ret, err);
                cr_assert_not_null(strstr(err, refusals[i].words), "'%s': got \"%s\"", refusals[i].text, err);
                cr_assert_null(r.sets, "'%s'", refusals[i].text);
                cr_assert_eq(r.n_sets, 0);
                semver_range_free(&r);
                /* No error buffer is fine too. */
                cr_assert_eq(semver_range_parse(refusals[i].text, &r, NULL, 0), refusals[i].code);
                char tiny[4];
                cr_assert_eq(semver_range_parse(refusals[i].text, &r, tiny, sizeof tiny), refusals[i].code);
                cr_assert_eq(strlen(tiny), 3);
        }
}

Test(semver_range, error_says_where) {
        struct semver_range r;
        char err[256];
        cr_assert_eq(semver_range_parse("1.2.3 - ", &r, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "\"1.2.3 - \" at column 1: a hyphen range needs a version on each side");
        cr_assert_eq(semver_range_parse(">=1.0.0 <2.0.0 || ^1.02", &r, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "\"1.02\" at column 20: a numeric part has a leading zero");
        cr_assert_eq(semver_range_parse("1.0.0 || >= ", &r, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "\">=\" at column 10: an operator needs a version after it");
}

Test(semver_range, limits) {
        struct semver_range r;
        char err[256];

        /* Text length. */
        char *s = malloc(SEMVER_RANGE_MAX_LEN + 2);
        memset(s, ' ', SEMVER_RANGE_MAX_LEN + 1);
        memcpy(s, "1.0.0", 5);
        s[SEMVER_RANGE_MAX_LEN] = '\0';
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), 0, "%s", err);
        semver_range_free(&r);
        s[SEMVER_RANGE_MAX_LEN] = ' ';
        s[SEMVER_RANGE_MAX_LEN + 1] = '\0';
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), -E2BIG);
        cr_assert_not_null(strstr(err, "a range longer than 1024 characters"), "%s", err);
        free(s);

        /* Alternatives. */
        s = repeat("1.0.0", SEMVER_RANGE_MAX_SETS, " || ");
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), 0, "%s", err);
        cr_assert_eq(r.n_sets, 32);
        semver_range_free(&r);
        free(s);
        s = repeat("1.0.0", SEMVER_RANGE_MAX_SETS + 1, " || ");
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), -E2BIG);
        cr_assert_not_null(strstr(err, "more than 32 alternatives"), "%s", err);
        free(s);
        s = repeat("", SEMVER_RANGE_MAX_SETS + 1, "||");
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), -E2BIG);
        free(s);

        /* Comparators in one alternative, counted as written: a tilde or a
         * hyphen range is one, though it gives two. */
        s = repeat("~1.2.3", SEMVER_RANGE_MAX_COMPARATORS, " ");
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), 0, "%s", err);
        cr_assert_eq(r.sets[0].n_cmp, 64);
        semver_range_free(&r);
        free(s);
        s = repeat("1 - 2", SEMVER_RANGE_MAX_COMPARATORS, " ");
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), 0, "%s", err);
        cr_assert_eq(r.sets[0].n_cmp, 64);
        semver_range_free(&r);
        free(s);
        s = repeat("1", SEMVER_RANGE_MAX_COMPARATORS + 1, " ");
        cr_assert_eq(semver_range_parse(s, &r, err, sizeof err), -E2BIG);
        cr_assert_not_null(strstr(err, "more than 32 comparators in one alternative"), "%s", err);
        free(s);

        /* A version inside a range has the version's limit. */
        char v[SEMVER_MAX_LEN + 8];
        memset(v, 'a', sizeof v);
        memcpy(v, ">=1.0.0-", 8);
        v[sizeof v - 1] = '\0';
        cr_assert_eq(semver_range_parse(v, &r, err, sizeof err), -EINVAL);
        cr_assert_not_null(strstr(err, "a version longer than 256 characters"), "%s", err);
        cr_assert_eq(semver_range_parse(NULL, &r, err, sizeof err), -EINVAL);
}

/* ---- Intervals ---- */

static struct semver_range R(const char *text) {
        struct semver_range r;
        char err[256];
        cr_assert_eq(semver_range_parse(text, &r, err, sizeof err), 0, "'%s': %s", text, err);
        return r;
}

static void assert_bound(bool has, bool incl, const struct semver *v, const char *want) {
        /* want: NULL for no bound, "[1.2.3" / "(1.2.3" for inclusive / exclusive */
        if (!want) {
                cr_assert_not(has);
                return;
        }
        cr_assert(has, "expected bound %s", want);
        cr_assert_eq(incl, want[0] == '[', "inclusiveness of %s", want);
        cr_assert_str_eq(v->text, want + 1);
}

Test(semver_interval, bounds) {
        struct {
                const char *text, *lo, *hi, *excluded[4];
        } cases[] = {
                { "^1.2.3", "[1.2.3", "(2.0.0-0", { 0 } },
                { "1.2.3", "[1.2.3", "[1.2.3", { 0 } },
                { "*", NULL, NULL, { 0 } },
                { "<2.0.0", NULL, "(2.0.0", { 0 } },
                { ">=1.0.0 >1.5.0 >=1.2.0", "(1.5.0", NULL, { 0 } },
                { ">=1.5.0 >1.5.0", "(1.5.0", NULL, { 0 } },
                { "<=2.0.0 <2.0.0 <=3.0.0", NULL, "(2.0.0", { 0 } },
                { "1.2.3 - 2.3.4 >=2.0.0", "[2.0.0", "[2.3.4", { 0 } },
                { ">=1.0.0 !=1.5.0 !=1.2.0 <2.0.0 !=1.5.0 !=3.0.0 !=0.1.0", "[1.0.0", "(2.0.0",
                  { "1.2.0", "1.5.0" } },
                { ">=1.0.0 !=1.0.0 <=2.0.0 !=2.0.0", "(1.0.0", "(2.0.0", { 0 } },
                { "!=1.0.0", NULL, NULL, { "1.0.0" } },
                { "!=1.0.0-beta.11 !=1.0.0-beta.2 !=1.0.0", NULL, NULL, { "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0" } },
        };
        for (size_t i = 0; i < N(cases); i++) {
                struct semver_range r = R(cases[i].text);
                cr_assert_eq(r.n_sets, 1);
                const struct semver_interval *iv = &r.sets[0].iv;
                cr_assert_not(iv->empty, "'%s'", cases[i].text);
                assert_bound(iv->has_lo, iv->lo_incl, &iv->lo, cases[i].lo);
                assert_bound(iv->has_hi, iv->hi_incl, &iv->hi, cases[i].hi);
                size_t n = 0;
                while (n < 4 && cases[i].excluded[n])
                        n++;
                cr_assert_eq(iv->n_excluded, n, "'%s'", cases[i].text);
                for (size_t j = 0; j < n; j++)
                        cr_assert_str_eq(iv->excluded[j].text, cases[i].excluded[j]);
                semver_range_free(&r);
        }
}

Test(semver_interval, empty) {
        const char *empty[] = {
                ">2.0.0 <1.0.0",
                "=1.0.0 !=1.0.0",
                "1.0.0 2.0.0",
                ">1.0.0 <=1.0.0",
                ">=1.0.0 <1.0.0",
                ">1.0.0 <1.0.1-0",                   /* 1.0.1-0 is the next version after 1.0.0 */
                ">1.0.0-a <1.0.0-a.0",               /* and 1.0.0-a.0 after 1.0.0-a */
                ">1.0.0 <=1.0.1-0 !=1.0.1-0",
                ">=1.0.0 <=1.0.1-0 !=1.0.0 !=1.0.1-0",
                ">1.0.0 <1.0.1-0.0 !=1.0.1-0",       /* the only version between is excluded */
                "<0.0.0-0",                          /* nothing is lower */
                ">*",
                "<0.0.0-0.0 !=0.0.0-0",
                ">18446744073709551615.18446744073709551615.18446744073709551615", /* nothing is higher */
        };
        for (size_t i = 0; i < N(empty); i++) {
                struct semver_range r = R(empty[i]);
                cr_assert(r.sets[0].iv.empty, "'%s'", empty[i]);
                cr_assert_eq(r.sets[0].iv.n_excluded, 0);
                cr_assert_null(r.sets[0].iv.excluded);
                semver_range_free(&r);
        }
        const char *not_empty[] = {
                ">1.0.0 <=1.0.1-0",
                ">1.0.0-a <=1.0.0-a.0",
                ">1.0.0 <1.0.1-0.0",
                "<0.0.0-0.0",
                ">=18446744073709551615.18446744073709551615.18446744073709551615",
                ">1.0.0 <1.0.1-0.0 !=1.0.1-0.0",
        };
        for (size_t i = 0; i < N(not_empty); i++) {
                struct semver_range r = R(not_empty[i]);
                cr_assert_not(r.sets[0].iv.empty, "'%s'", not_empty[i]);
                semver_range_free(&r);
        }
}

Test(semver_interval, one_per_alternative) {
        struct semver_range r = R("1.2.3 || >=2.0.0 <3.0.0 || >5.0.0 <4.0.0 || *");
        cr_assert_eq(r.n_sets, 4);
        assert_bound(r.sets[0].iv.has_lo, r.sets[0].iv.lo_incl, &r.sets[0].iv.lo, "[1.2.3");
        assert_bound(r.sets[1].iv.has_lo, r.sets[1].iv.lo_incl, &r.sets[1].iv.lo, "[2.0.0");
        assert_bound(r.sets[1].iv.has_hi, r.sets[1].iv.hi_incl, &r.sets[1].iv.hi, "(3.0.0");
        cr_assert(r.sets[2].iv.empty);
        cr_assert_not(r.sets[3].iv.empty);
        cr_assert_not(r.sets[3].iv.has_lo);
        cr_assert_not(r.sets[3].iv.has_hi);
        semver_range_free(&r);
}

Test(semver, op_names) {
        cr_assert_str_eq(semver_op_to_string(SEMVER_OP_EQ), "=");
        cr_assert_str_eq(semver_op_to_string(SEMVER_OP_NE), "!=");
        cr_assert_str_eq(semver_op_to_string(SEMVER_OP_LT), "<");
        cr_assert_str_eq(semver_op_to_string(SEMVER_OP_LE), "<=");
        cr_assert_str_eq(semver_op_to_string(SEMVER_OP_GT), ">");
        cr_assert_str_eq(semver_op_to_string(SEMVER_OP_GE), ">=");
}
