/* Semantic versions (SemVer 2.0.0) and the version ranges operator catalogs
 * carry (the npm/Masterminds syntax), desugared to plain comparators and to
 * one interval per '||' alternative for the dependency solver. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEMVER_MAX_LEN 256              /* characters of a version's text */
#define SEMVER_MAX_PRERELEASE 32        /* identifiers in a pre-release */
#define SEMVER_RANGE_MAX_LEN 1024       /* characters of a range's text */
#define SEMVER_RANGE_MAX_SETS 32        /* '||' alternatives in a range */
#define SEMVER_RANGE_MAX_COMPARATORS 32 /* comparators of one alternative, as written */

/* A version owns no heap memory: its text is kept in place, the pre-release
 * and build parts are slices of it without their '-' and '+' (length 0 when
 * absent). Only semver_parse() and the range functions fill one. */
struct semver {
        uint64_t major, minor, patch;
        uint16_t pre_off, pre_len;
        uint16_t build_off, build_len;
        uint8_t n_pre; /* pre-release identifiers */
        char text[SEMVER_MAX_LEN + 1];
};

/* Parse strict SemVer 2.0.0 text (no leading "v", no surrounding space, at
 * most SEMVER_MAX_LEN characters and SEMVER_MAX_PRERELEASE pre-release
 * identifiers); 0, or -EINVAL with *out untouched. */
int semver_parse(const char *s, struct semver *out);
/* SemVer precedence: <0, 0 or >0 as a is lower than, equal to or higher
 * than b. Build metadata does not count, so 0 does not mean identical text. */
int semver_cmp(const struct semver *a, const struct semver *b);
/* The version's text, build metadata included, into buf (NUL-terminated);
 * its length, or -ENOSPC if it did not fit (SEMVER_MAX_LEN + 1 always fits). */
int semver_format(const struct semver *v, char *buf, size_t size);

enum semver_op { SEMVER_OP_EQ, SEMVER_OP_NE, SEMVER_OP_LT, SEMVER_OP_LE, SEMVER_OP_GT, SEMVER_OP_GE };

/* "=", "!=", "<", "<=", ">", ">=". */
const char *semver_op_to_string(enum semver_op op);

struct semver_comparator {
        enum semver_op op;
        struct semver v; /* never with build metadata */
};

/* The versions one alternative allows: those within the bounds (a missing
 * bound is open), less the excluded ones. Computed by intersecting the
 * alternative's comparators; a '!=' on an inclusive bound makes the bound
 * exclusive instead, so `excluded` holds only versions strictly inside,
 * sorted and distinct. `empty` is set when no version can satisfy the
 * alternative; the other fields then mean nothing and n_excluded is 0. */
struct semver_interval {
        bool empty;
        bool has_lo, lo_incl;
        struct semver lo;
        bool has_hi, hi_incl;
        struct semver hi;
        struct semver *excluded;
        size_t n_excluded;
};

/* One '||' alternative: its comparators, all of which must hold (none: any
 * version), and the interval they amount to. */
struct semver_set {
        struct semver_comparator *cmp;
        size_t n_cmp;
        struct semver_interval iv;
};

struct semver_range {
        struct semver_set *sets; /* at least one after a successful parse */
        size_t n_sets;
};

/* Parse a range: comparators (=, ==, !=, <, <=, >, >=, none meaning =) over
 * full or partial versions and X-ranges (*, x, X, 1, 1.x, 1.2, empty: any),
 * ~ and ^ ranges, "A - B" hyphen ranges; whitespace-separated comparators are
 * ANDed, "||" ORs alternatives. Each is desugared with npm's rules to
 * comparators over full versions. 0; -EINVAL for bad syntax, -E2BIG past the
 * SEMVER_RANGE_MAX_* limits, -ENOMEM; on failure err (if errlen > 0) says
 * what is wrong and where, and *out is left empty (safe to free). */
int semver_range_parse(const char *s, struct semver_range *out, char *err, size_t errlen);
/* True when v satisfies some alternative, by plain SemVer precedence (no
 * npm-style exclusion of pre-releases). */
bool semver_range_match(const struct semver_range *r, const struct semver *v);
/* The desugared canonical form into a new string *out (caller frees), e.g.
 * ">=1.2.3 <2.0.0-0 || =3.0.0", "*" for an alternative allowing any version.
 * It parses back to the same form, unless desugaring took it past the limits
 * (a ~ or ^ gives two comparators): then -E2BIG. Its length, or -ENOMEM. */
int semver_range_format(const struct semver_range *r, char **out);
/* Free what the range holds and leave it empty. */
void semver_range_free(struct semver_range *r);

/* True when v lies in the interval. */
bool semver_interval_contains(const struct semver_interval *iv, const struct semver *v);
