/* libFuzzer target for common/semver.c: the whole input and each of its
 * lines are tried as a version and as a range. A version formats back to
 * text that parses equal; precedence is antisymmetric and transitive over
 * the input's versions; a range's canonical form is a fixed point that
 * matches the same versions, and its intervals agree with its comparators. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "semver.h"

#define MAX_LINES 16
#define MAX_PROBES 48

static int sgn(int c) { return (c > 0) - (c < 0); }

static void check_version(const char *text, struct semver *probes, size_t *n_probes) {
        struct semver v, w;
        char buf[SEMVER_MAX_LEN + 1];

        if (semver_parse(text, &v) < 0)
                return;
        int n = semver_format(&v, buf, sizeof buf);
        if (n < 0 || (size_t) n != strlen(text) || strcmp(buf, text) != 0)
                abort();
        if (semver_parse(buf, &w) != 0 || strcmp(v.text, w.text) != 0 || semver_cmp(&v, &w) != 0)
                abort();
        if (v.pre_len == 0 && v.n_pre != 0)
                abort();
        if (*n_probes < MAX_PROBES)
                probes[(*n_probes)++] = v;
}

static bool in_some_interval(const struct semver_range *r, const struct semver *v) {
        for (size_t i = 0; i < r->n_sets; i++)
                if (semver_interval_contains(&r->sets[i].iv, v))
                        return true;
        return false;
}

static void check_intervals(const struct semver_range *r) {
        for (size_t i = 0; i < r->n_sets; i++) {
                const struct semver_interval *iv = &r->sets[i].iv;
                if (iv->empty) {
                        if (iv->n_excluded)
                                abort();
                        continue;
                }
                if (iv->has_lo && iv->has_hi && semver_cmp(&iv->lo, &iv->hi) > 0)
                        abort();
                for (size_t j = 0; j < iv->n_excluded; j++) {
                        const struct semver *x = &iv->excluded[j];
                        if (j && semver_cmp(&iv->excluded[j - 1], x) >= 0)
                                abort(); /* sorted, distinct */
                        if ((iv->has_lo && semver_cmp(x, &iv->lo) <= 0) || (iv->has_hi && semver_cmp(x, &iv->hi) >= 0))
                                abort(); /* strictly inside */
                }
                /* An inclusive bound of a non-empty interval is a version the
                 * range allows. */
                if (iv->has_lo && iv->lo_incl &&
                    (!semver_interval_contains(iv, &iv->lo) || !semver_range_match(r, &iv->lo)))
                        abort();
                if (iv->has_hi && iv->hi_incl &&
                    (!semver_interval_contains(iv, &iv->hi) || !semver_range_match(r, &iv->hi)))
                        abort();
        }
}

static void check_range(const char *text, const struct semver *input_probes, size_t n_input) {
        struct semver_range r, r2;
        char err[128], *c1 = NULL, *c2 = NULL;
        struct semver probes[MAX_PROBES];
        size_t n = 0;

        int ret = semver_range_parse(text, &r, err, sizeof err);
        if (ret < 0) {
                if ((ret != -EINVAL && ret != -E2BIG) || r.sets || r.n_sets || !err[0])
                        abort();
                return;
        }
        if (r.n_sets == 0 || r.n_sets > SEMVER_RANGE_MAX_SETS || err[0])
                abort();
        if (semver_range_format(&r, &c1) < 0)
                abort();
        check_intervals(&r);

        /* Probe with the input's versions and the range's own edges. */
        for (size_t i = 0; i < n_input && n < MAX_PROBES; i++)
                probes[n++] = input_probes[i];
        for (size_t i = 0; i < r.n_sets && n < MAX_PROBES; i++) {
                const struct semver_set *set = &r.sets[i];
                if (set->iv.has_lo && n < MAX_PROBES)
                        probes[n++] = set->iv.lo;
                if (set->iv.has_hi && n < MAX_PROBES)
                        probes[n++] = set->iv.hi;
                for (size_t j = 0; j < set->n_cmp && n < MAX_PROBES; j++)
                        probes[n++] = set->cmp[j].v;
        }
        for (size_t i = 0; i < n; i++)
                if (semver_range_match(&r, &probes[i]) != in_some_interval(&r, &probes[i]))
                        abort();

        /* Desugaring can double the comparators and lengthen the text, so
         * only a canonical form within the limits must parse again. */
        ret = semver_range_parse(c1, &r2, err, sizeof err);
        if (ret == -E2BIG)
                goto out;
        if (ret != 0 || semver_range_format(&r2, &c2) < 0 || strcmp(c1, c2) != 0)
                abort();
        for (size_t i = 0; i < n; i++)
                if (semver_range_match(&r, &probes[i]) != semver_range_match(&r2, &probes[i]))
                        abort();
        semver_range_free(&r2);
out:
        free(c1);
        free(c2);
        semver_range_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        struct semver probes[MAX_PROBES];
        size_t n = 0;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';

        check_version(s, probes, &n);
        char *lines = strdup(s), *line[MAX_LINES];
        size_t n_lines = 0;
        if (!lines)
                abort();
        for (char *p = lines, *save = NULL, *tok; n_lines < MAX_LINES && (tok = strtok_r(p, "\n", &save)); p = NULL)
                line[n_lines++] = tok;
        for (size_t i = 0; i < n_lines; i++)
                check_version(line[i], probes, &n);

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                        int ab = semver_cmp(&probes[i], &probes[j]), ba = semver_cmp(&probes[j], &probes[i]);
                        if (sgn(ab) != -sgn(ba) || (i == j && ab != 0))
                                abort();
                        for (size_t k = 0; k < n; k++)
                                if (ab <= 0 && semver_cmp(&probes[j], &probes[k]) <= 0 &&
                                    semver_cmp(&probes[i], &probes[k]) > 0)
                                        abort(); /* not transitive */
                }

        check_range(s, probes, n);
        for (size_t i = 0; i < n_lines && i < 8; i++)
                check_range(line[i], probes, n);
        free(lines);
        free(s);
        return 0;
}
