/* SemVer 2.0.0 parsing and precedence, and npm-style version ranges reduced
 * to comparators over full versions and to one interval per alternative.
 * Desugaring follows node-semver; matching is plain precedence (blang/semver). */
#include "semver.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_ident_char(char c) {
        return is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-';
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static bool all_digits(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!is_digit(s[i]))
                        return false;
        return n > 0;
}

/* One numeric part at s[*i]: no leading zero, fits uint64. */
static int parse_number(const char *s, size_t len, size_t *i, uint64_t *out, const char **why) {
        size_t start = *i;
        uint64_t v = 0;

        while (*i < len && is_digit(s[*i])) {
                unsigned d = (unsigned) (s[*i] - '0');
                if (v > (UINT64_MAX - d) / 10) {
                        *why = "a numeric part does not fit 64 bits";
                        return -EINVAL;
                }
                v = v * 10 + d;
                (*i)++;
        }
        if (*i == start) {
                *why = start < len && (s[start] == 'v' || s[start] == 'V') && start == 0
                               ? "a leading 'v' is not part of a version"
                               : "a version needs numeric MAJOR.MINOR.PATCH";
                return -EINVAL;
        }
        if (*i - start > 1 && s[start] == '0') {
                *why = "a numeric part has a leading zero";
                return -EINVAL;
        }
        *out = v;
        return 0;
}

/* Dot-separated identifiers at s[*i], up to the first character that cannot
 * be in one; pre-release ones also refuse leading zeros and are counted. */
static int parse_idents(const char *s, size_t len, size_t *i, bool pre, uint8_t *n, const char **why) {
        unsigned count = 0;

        for (;;) {
                size_t start = *i;
                while (*i < len && is_ident_char(s[*i]))
                        (*i)++;
                if (*i == start) {
                        *why = *i < len && s[*i] != '.' && s[*i] != '+' ? "a character outside [0-9A-Za-z-]"
                               : pre                                      ? "an empty pre-release identifier"
                                                                          : "an empty build identifier";
                        return -EINVAL;
                }
                if (pre && *i - start > 1 && s[start] == '0' && all_digits(s + start, *i - start)) {
                        *why = "a numeric pre-release identifier has a leading zero";
                        return -EINVAL;
                }
                if (pre && ++count > SEMVER_MAX_PRERELEASE) {
                        *why = "more than 32 pre-release identifiers";
                        return -EINVAL;
                }
                if (*i >= len || s[*i] != '.')
                        break;
                (*i)++;
        }
        if (n)
                *n = (uint8_t) count;
        return 0;
}

/* s[0..len) as a strict version; *why names the fault. */
static int version_parse(const char *s, size_t len, struct semver *out, const char **why) {
        struct semver v = { 0 };
        uint64_t *parts[3] = { &v.major, &v.minor, &v.patch };
        size_t i = 0;
        int r;

        if (len == 0) {
                *why = "an empty version";
                return -EINVAL;
        }
        if (len > SEMVER_MAX_LEN) {
                *why = "a version longer than 256 characters";
                return -EINVAL;
        }
        for (int k = 0; k < 3; k++) {
                if (k > 0) {
                        if (i >= len || s[i] != '.') {
                                *why = "a version needs MAJOR.MINOR.PATCH";
                                return -EINVAL;
                        }
                        i++;
                }
                r = parse_number(s, len, &i, parts[k], why);
                if (r < 0)
                        return r;
        }
        if (i < len && s[i] == '-') {
                v.pre_off = (uint16_t) ++i;
                r = parse_idents(s, len, &i, true, &v.n_pre, why);
                if (r < 0)
                        return r;
                v.pre_len = (uint16_t) (i - v.pre_off);
        }
        if (i < len && s[i] == '+') {
                v.build_off = (uint16_t) ++i;
                r = parse_idents(s, len, &i, false, NULL, why);
                if (r < 0)
                        return r;
                v.build_len = (uint16_t) (i - v.build_off);
        }
        if (i < len) {
                *why = s[i] == '.' || s[i] == '-' || s[i] == '+' || is_ident_char(s[i])
                               ? "unexpected text after the version"
                               : "a character outside [0-9A-Za-z.+-]";
                return -EINVAL;
        }
        memcpy(v.text, s, len);
        v.text[len] = '\0';
        *out = v;
        return 0;
}

int semver_parse(const char *s, struct semver *out) {
        const char *why;
        if (!s)
                return -EINVAL;
        /* strnlen: a huge string is refused without reading all of it. */
        return version_parse(s, strnlen(s, SEMVER_MAX_LEN + 1), out, &why);
}

static int sign(int c) { return (c > 0) - (c < 0); }

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

static int cmp_ident(const char *a, size_t an, const char *b, size_t bn) {
        bool anum = all_digits(a, an), bnum = all_digits(b, bn);

        if (anum && bnum) {
                /* No leading zeros, so the longer number is the larger. */
                if (an != bn)
                        return an < bn ? -1 : 1;
                return sign(memcmp(a, b, an));
        }
        if (anum != bnum)
                return anum ? -1 : 1;
        int c = memcmp(a, b, an < bn ? an : bn);
        if (c)
                return sign(c);
        return cmp_u64(an, bn);
}

int semver_cmp(const struct semver *a, const struct semver *b) {
        int c = cmp_u64(a->major, b->major);
        if (!c)
                c = cmp_u64(a->minor, b->minor);
        if (!c)
                c = cmp_u64(a->patch, b->patch);
        if (c)
                return c;
        if (!a->pre_len || !b->pre_len)
                return cmp_u64(!a->pre_len, !b->pre_len); /* a release is above its pre-releases */

        const char *p = a->text + a->pre_off, *pe = p + a->pre_len;
        const char *q = b->text + b->pre_off, *qe = q + b->pre_len;
        for (;;) {
                const char *pd = memchr(p, '.', (size_t) (pe - p)), *qd = memchr(q, '.', (size_t) (qe - q));
                const char *pend = pd ? pd : pe, *qend = qd ? qd : qe;
                c = cmp_ident(p, (size_t) (pend - p), q, (size_t) (qend - q));
                if (c)
                        return c;
                if (!pd || !qd)
                        return cmp_u64(pd != NULL, qd != NULL); /* the shorter list is lower */
                p = pd + 1;
                q = qd + 1;
        }
}

int semver_format(const struct semver *v, char *buf, size_t size) {
        size_t n = strlen(v->text);
        if (n >= size) {
                if (size)
                        buf[0] = '\0';
                return -ENOSPC;
        }
        memcpy(buf, v->text, n + 1);
        return (int) n;
}

const char *semver_op_to_string(enum semver_op op) {
        switch (op) {
        case SEMVER_OP_EQ:
                return "=";
        case SEMVER_OP_NE:
                return "!=";
        case SEMVER_OP_LT:
                return "<";
        case SEMVER_OP_LE:
                return "<=";
        case SEMVER_OP_GT:
                return ">";
        case SEMVER_OP_GE:
                return ">=";
        }
        return "?";
}

/* A version from its numbers and pre-release text (build dropped). */
static int version_make(struct semver *v, uint64_t M, uint64_t m, uint64_t p, const char *pre, size_t pre_len) {
        char buf[SEMVER_MAX_LEN + 2];
        const char *why;
        int n = pre_len ? snprintf(buf, sizeof buf, "%" PRIu64 ".%" PRIu64 ".%" PRIu64 "-%.*s", M, m, p,
                                   (int) pre_len, pre)
                        : snprintf(buf, sizeof buf, "%" PRIu64 ".%" PRIu64 ".%" PRIu64, M, m, p);
        if (n < 0 || (size_t) n > SEMVER_MAX_LEN)
                return -EINVAL;
        return version_parse(buf, (size_t) n, v, &why);
}

static bool comparator_holds(const struct semver_comparator *c, const struct semver *v) {
        int r = semver_cmp(v, &c->v);
        switch (c->op) {
        case SEMVER_OP_EQ:
                return r == 0;
        case SEMVER_OP_NE:
                return r != 0;
        case SEMVER_OP_LT:
                return r < 0;
        case SEMVER_OP_LE:
                return r <= 0;
        case SEMVER_OP_GT:
                return r > 0;
        case SEMVER_OP_GE:
                return r >= 0;
        }
        return false;
}

/* ---- Intervals ---- */

/* The next version up in precedence, where one exists within our limits:
 * X.Y.Z -> X.Y.(Z+1)-0, X.Y.Z-p -> X.Y.Z-p.0. */
static int version_succ(const struct semver *v, struct semver *out) {
        if (v->pre_len) {
                char pre[SEMVER_MAX_LEN + 3];
                if (v->n_pre >= SEMVER_MAX_PRERELEASE)
                        return -ERANGE;
                snprintf(pre, sizeof pre, "%.*s.0", (int) v->pre_len, v->text + v->pre_off);
                return version_make(out, v->major, v->minor, v->patch, pre, strlen(pre)) < 0 ? -ERANGE : 0;
        }
        if (v->patch < UINT64_MAX)
                return version_make(out, v->major, v->minor, v->patch + 1, "0", 1);
        if (v->minor < UINT64_MAX)
                return version_make(out, v->major, v->minor + 1, 0, "0", 1);
        if (v->major < UINT64_MAX)
                return version_make(out, v->major + 1, 0, 0, "0", 1);
        return -ENOENT; /* the highest version there is */
}

static bool excluded_has(const struct semver_interval *iv, const struct semver *v) {
        for (size_t i = 0; i < iv->n_excluded; i++)
                if (semver_cmp(&iv->excluded[i], v) == 0)
                        return true;
        return false;
}

/* Whether no version lies in the interval: step the lowest candidate up past
 * an exclusive bound and past excluded versions, then compare with the top. */
static bool interval_is_empty(const struct semver_interval *iv) {
        struct semver lo;
        bool incl = true;

        if (iv->has_lo) {
                lo = iv->lo;
                incl = iv->lo_incl;
        } else if (version_make(&lo, 0, 0, 0, "0", 1) < 0) /* the lowest version there is */
                return false;
        for (size_t step = 0; step <= iv->n_excluded + 1; step++) {
                if (!incl) {
                        struct semver next;
                        int r = version_succ(&lo, &next);
                        if (r == -ENOENT)
                                return true;
                        if (r < 0)
                                return false; /* past our limits: assume something fits */
                        lo = next;
                        incl = true;
                }
                if (!excluded_has(iv, &lo))
                        break;
                incl = false;
        }
        if (!incl)
                return false;
        if (!iv->has_hi)
                return false;
        int c = semver_cmp(&lo, &iv->hi);
        return c > 0 || (c == 0 && !iv->hi_incl);
}

static void tighten_lo(struct semver_interval *iv, const struct semver *v, bool incl) {
        int c = iv->has_lo ? semver_cmp(v, &iv->lo) : 1;
        if (c > 0) {
                iv->lo = *v;
                iv->lo_incl = incl;
                iv->has_lo = true;
        } else if (c == 0 && !incl)
                iv->lo_incl = false;
}

static void tighten_hi(struct semver_interval *iv, const struct semver *v, bool incl) {
        int c = iv->has_hi ? semver_cmp(v, &iv->hi) : -1;
        if (c < 0) {
                iv->hi = *v;
                iv->hi_incl = incl;
                iv->has_hi = true;
        } else if (c == 0 && !incl)
                iv->hi_incl = false;
}

static int cmp_semver_qsort(const void *a, const void *b) { return semver_cmp(a, b); }

static int interval_compute(const struct semver_comparator *cmp, size_t n, struct semver_interval *out) {
        struct semver_interval iv = { 0 };
        size_t n_ne = 0;

        for (size_t i = 0; i < n; i++) {
                const struct semver *v = &cmp[i].v;
                switch (cmp[i].op) {
                case SEMVER_OP_EQ:
                        tighten_lo(&iv, v, true);
                        tighten_hi(&iv, v, true);
                        break;
                case SEMVER_OP_GT:
                case SEMVER_OP_GE:
                        tighten_lo(&iv, v, cmp[i].op == SEMVER_OP_GE);
                        break;
                case SEMVER_OP_LT:
                case SEMVER_OP_LE:
                        tighten_hi(&iv, v, cmp[i].op == SEMVER_OP_LE);
                        break;
                case SEMVER_OP_NE:
                        n_ne++;
                        break;
                }
        }
        if (n_ne) {
                iv.excluded = calloc(n_ne, sizeof *iv.excluded);
                if (!iv.excluded)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                const struct semver *v = &cmp[i].v;
                if (cmp[i].op != SEMVER_OP_NE)
                        continue;
                int lo = iv.has_lo ? semver_cmp(v, &iv.lo) : 1, hi = iv.has_hi ? semver_cmp(v, &iv.hi) : -1;
                if (lo < 0 || hi > 0 || (lo == 0 && !iv.lo_incl) || (hi == 0 && !iv.hi_incl))
                        continue; /* outside already */
                if (lo == 0)
                        iv.lo_incl = false;
                if (hi == 0)
                        iv.hi_incl = false;
                if (lo != 0 && hi != 0 && !excluded_has(&iv, v))
                        iv.excluded[iv.n_excluded++] = *v;
        }
        if (iv.n_excluded > 1)
                qsort(iv.excluded, iv.n_excluded, sizeof *iv.excluded, cmp_semver_qsort);
        if (interval_is_empty(&iv)) {
                iv.empty = true;
                iv.n_excluded = 0;
        }
        if (!iv.n_excluded) {
                free(iv.excluded);
                iv.excluded = NULL;
        }
        *out = iv;
        return 0;
}

bool semver_interval_contains(const struct semver_interval *iv, const struct semver *v) {
        if (iv->empty)
                return false;
        if (iv->has_lo) {
                int c = semver_cmp(v, &iv->lo);
                if (c < 0 || (c == 0 && !iv->lo_incl))
                        return false;
        }
        if (iv->has_hi) {
                int c = semver_cmp(v, &iv->hi);
                if (c > 0 || (c == 0 && !iv->hi_incl))
                        return false;
        }
        return !excluded_has(iv, v);
}

/* ---- Ranges ---- */

/* A version as written in a range: wildcards and missing parts count as
 * absent; only n == 3 carries a full version (with its pre-release). */
struct partial {
        int n; /* numeric parts given, 0..3 */
        uint64_t num[3];
        struct semver full;
};

struct range_parser {
        const char *s; /* the whole range text, for columns in errors */
        char *err;
        size_t errlen;
        struct semver_comparator *out; /* the alternative being built */
        size_t n_out;
};

/* Write `"<text>" at column N: <message>` to the error buffer; returns r. */
static int fail(struct range_parser *p, int r, const char *at, size_t at_len, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static int fail(struct range_parser *p, int r, const char *at, size_t at_len, const char *fmt, ...) {
        if (!p->err || !p->errlen)
                return r;
        size_t col = (size_t) (at - p->s) + 1;
        int n = snprintf(p->err, p->errlen, "\"%.*s%s\" at column %zu: ", (int) (at_len > 64 ? 64 : at_len), at,
                         at_len > 64 ? "..." : "", col);
        if (n >= 0 && (size_t) n < p->errlen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(p->err + n, p->errlen - (size_t) n, fmt, ap);
                va_end(ap);
        }
        return r;
}

static bool is_wild(const char *s, size_t n) { return n == 1 && (s[0] == '*' || s[0] == 'x' || s[0] == 'X'); }

static int parse_partial(struct range_parser *p, const char *tok, size_t len, struct partial *out) {
        struct partial v = { 0 };
        size_t i = 0;
        bool wild = false;
        const char *why;

        if (len > SEMVER_MAX_LEN)
                return fail(p, -EINVAL, tok, len, "a version longer than 256 characters");
        for (int k = 0; k < 3; k++) {
                size_t start = i;
                while (i < len && tok[i] != '.' && tok[i] != '-' && tok[i] != '+')
                        i++;
                if (is_wild(tok + start, i - start))
                        wild = true;
                else if (wild && i > start)
                        return fail(p, -EINVAL, tok, len, "a number after a wildcard");
                else {
                        size_t j = start;
                        int rr = parse_number(tok, i, &j, &v.num[k], &why);
                        if (rr < 0 || j != i) {
                                if (start == 0 && (tok[0] == 'v' || tok[0] == 'V'))
                                        why = "a leading 'v' is not part of a version";
                                else if (start == i)
                                        why = "an empty part";
                                else if (rr == 0 || j == start)
                                        why = "not a number or wildcard (*, x, X)";
                                /* else parse_number's own reason: a leading zero, overflow */
                                return fail(p, -EINVAL, tok, len, "%s", why);
                        }
                        v.n = k + 1;
                }
                if (i == len)
                        break;
                if (tok[i] == '.' && k < 2) {
                        i++;
                        if (i == len)
                                return fail(p, -EINVAL, tok, len, "an empty part after '.'");
                        continue;
                }
                if (tok[i] == '.')
                        return fail(p, -EINVAL, tok, len, "more than MAJOR.MINOR.PATCH");
                /* '-' or '+': a pre-release or build, only on a full version */
                if (k < 2 || wild)
                        return fail(p, -EINVAL, tok, len,
                                    "a pre-release or build needs a full MAJOR.MINOR.PATCH version");
                break;
        }
        if (v.n == 3) {
                struct semver full;
                if (version_parse(tok, len, &full, &why) < 0)
                        return fail(p, -EINVAL, tok, len, "%s", why);
                /* Build metadata does not count for precedence: drop it so the
                 * canonical form says only what matters. */
                if (version_make(&v.full, full.major, full.minor, full.patch, full.text + full.pre_off,
                                 full.pre_len) < 0)
                        return fail(p, -EINVAL, tok, len, "not a version");
        }
        *out = v;
        return 0;
}

static int emit(struct range_parser *p, enum semver_op op, const struct semver *v) {
        /* Each comparator as written gives at most two, so the array the
         * caller sized for twice the limit never overflows. */
        p->out[p->n_out].op = op;
        p->out[p->n_out].v = *v;
        p->n_out++;
        return 0;
}

static int emit_make(struct range_parser *p, enum semver_op op, uint64_t M, uint64_t m, uint64_t pt, bool pre0) {
        struct semver v;
        if (version_make(&v, M, m, pt, pre0 ? "0" : NULL, pre0 ? 1 : 0) < 0)
                return -EINVAL;
        return emit(p, op, &v);
}

static int emit_nothing(struct range_parser *p) { return emit_make(p, SEMVER_OP_LT, 0, 0, 0, true); }

/* The lowest release of a partial version: 1 -> 1.0.0, 1.2 -> 1.2.0. */
static int emit_lo(struct range_parser *p, enum semver_op op, const struct partial *v, bool pre0) {
        if (v->n == 3)
                return emit(p, op, &v->full);
        return emit_make(p, op, v->num[0], v->n > 1 ? v->num[1] : 0, 0, pre0);
}

/* The start of what follows a partial version, used as an exclusive bound
 * with "-0" so the next one's pre-releases stay out: 1 -> 2.0.0-0, 1.2 ->
 * 1.3.0-0. `level` is the part to bump (0 major, 1 minor, 2 patch). */
static int emit_next(struct range_parser *p, enum semver_op op, const struct partial *v, int level, const char *tok,
                     size_t len) {
        uint64_t n[3] = { v->num[0], level >= 1 ? v->num[1] : 0, level >= 2 ? v->num[2] : 0 };
        if (n[level] == UINT64_MAX)
                return fail(p, -EINVAL, tok, len, "a numeric part too large to take the next version");
        n[level]++;
        return emit_make(p, op, n[0], n[1], n[2], true);
}

enum range_kind { K_NONE, K_EQ, K_NE, K_LT, K_LE, K_GT, K_GE, K_TILDE, K_CARET };

static int desugar(struct range_parser *p, enum range_kind kind, const struct partial *v, const char *tok,
                   size_t len) {
        int r = 0;

        if (v->n == 0) { /* *, x, X */
                if (kind == K_NE)
                        return fail(p, -EINVAL, tok, len, "'!=' needs a full MAJOR.MINOR.PATCH version");
                return kind == K_LT || kind == K_GT ? emit_nothing(p) : 0;
        }
        switch (kind) {
        case K_NONE:
        case K_EQ:
                if (v->n == 3)
                        return emit(p, SEMVER_OP_EQ, &v->full);
                r = emit_lo(p, SEMVER_OP_GE, v, false);
                return r < 0 ? r : emit_next(p, SEMVER_OP_LT, v, v->n - 1, tok, len);
        case K_NE:
                if (v->n < 3)
                        return fail(p, -EINVAL, tok, len, "'!=' needs a full MAJOR.MINOR.PATCH version");
                return emit(p, SEMVER_OP_NE, &v->full);
        case K_GT:
                if (v->n == 3)
                        return emit(p, SEMVER_OP_GT, &v->full);
                return emit_next(p, SEMVER_OP_GE, v, v->n - 1, tok, len);
        case K_GE:
                return emit_lo(p, SEMVER_OP_GE, v, false);
        case K_LT:
                if (v->n == 3)
                        return emit(p, SEMVER_OP_LT, &v->full);
                return emit_lo(p, SEMVER_OP_LT, v, true);
        case K_LE:
                if (v->n == 3)
                        return emit(p, SEMVER_OP_LE, &v->full);
                return emit_next(p, SEMVER_OP_LT, v, v->n - 1, tok, len);
        case K_TILDE:
                /* ~1 and ~1.2 are 1.x and 1.2.x; ~1.2.3 allows patches. */
                r = emit_lo(p, SEMVER_OP_GE, v, false);
                return r < 0 ? r : emit_next(p, SEMVER_OP_LT, v, v->n == 1 ? 0 : 1, tok, len);
        case K_CARET: {
                /* Bump the first non-zero part given (or the last one given). */
                int level = 0;
                if (v->num[0] == 0 && v->n >= 2)
                        level = v->num[1] == 0 && v->n == 3 ? 2 : 1;
                r = emit_lo(p, SEMVER_OP_GE, v, false);
                return r < 0 ? r : emit_next(p, SEMVER_OP_LT, v, level, tok, len);
        }
        }
        return -EINVAL;
}

static size_t skip_space(const char *s, size_t i, size_t end) {
        while (i < end && is_space(s[i]))
                i++;
        return i;
}

static size_t token_end(const char *s, size_t i, size_t end) {
        while (i < end && !is_space(s[i]))
                i++;
        return i;
}

/* The operator at s[*i] (none: K_NONE), *i moved past it. 0 or -EINVAL. */
static int parse_op(struct range_parser *p, size_t *i, size_t b, enum range_kind *kind) {
        const char *s = p->s;
        char c0 = s[*i], c1 = *i + 1 < b ? s[*i + 1] : '\0';
        *kind = K_NONE;
        if (c0 == '<' || c0 == '>') {
                *kind = c1 == '=' ? (c0 == '<' ? K_LE : K_GE) : (c0 == '<' ? K_LT : K_GT);
                *i += c1 == '=' ? 2 : 1;
        } else if (c0 == '=') {
                *kind = K_EQ;
                *i += c1 == '=' ? 2 : 1;
        } else if (c0 == '!') {
                if (c1 != '=')
                        return fail(p, -EINVAL, s + *i, 1, "'!' is only valid as '!='");
                *kind = K_NE;
                *i += 2;
        } else if (c0 == '~' || c0 == '^') {
                *kind = c0 == '~' ? K_TILDE : K_CARET;
                (*i)++;
        }
        return 0;
}

/* "A - B" after the plain version v (s[t..te)), the '-' at s[h]: its
 * comparators; *i moved past B. 0 or -errno. */
static int parse_hyphen(struct range_parser *p, const struct partial *v, size_t t, size_t h, size_t b, size_t *i) {
        const char *s = p->s;
        size_t t2 = skip_space(s, h + 1, b), te2 = token_end(s, t2, b);
        if (te2 == t2)
                return fail(p, -EINVAL, s + t, te2 - t, "a hyphen range needs a version on each side");
        if (strchr("<>=!~^", s[t2]))
                return fail(p, -EINVAL, s + t2, te2 - t2, "a hyphen range takes versions without operators");
        struct partial w;
        int r = parse_partial(p, s + t2, te2 - t2, &w);
        if (r >= 0 && v->n > 0)
                r = emit_lo(p, SEMVER_OP_GE, v, false);
        if (r >= 0 && w.n == 3)
                r = emit(p, SEMVER_OP_LE, &w.full);
        else if (r >= 0 && w.n > 0)
                r = emit_next(p, SEMVER_OP_LT, &w, w.n - 1, s + t2, te2 - t2);
        *i = te2;
        return r;
}

/* One comparator (or hyphen range) of the alternative s[a..b) at s[*i]:
 * desugared into p->out; *i moved past it. *written counts comparators as
 * written, *prev_op whether the last had an operator. 0 or -errno. */
static int parse_comparator(struct range_parser *p, size_t a, size_t b, size_t *i, size_t *written, bool *prev_op) {
        const char *s = p->s;
        size_t op_at = *i;
        enum range_kind kind;
        int r = parse_op(p, i, b, &kind);
        if (r < 0)
                return r;
        size_t op_len = *i - op_at;
        size_t t = skip_space(s, *i, b), te = token_end(s, t, b);
        if (te == t)
                return fail(p, -EINVAL, s + op_at, op_len, "an operator needs a version after it");
        if (te - t == 1 && s[t] == '-')
                return fail(p, -EINVAL, s + a, b - a,
                            *prev_op ? "a hyphen range takes versions without operators"
                                     : "a hyphen range needs a version on each side");
        if (++*written > SEMVER_RANGE_MAX_COMPARATORS)
                return fail(p, -E2BIG, s + a, b - a, "more than 32 comparators in one alternative");
        if (kind != K_NONE && strchr("<>=!~^", s[t]))
                return fail(p, -EINVAL, s + op_at, te - op_at, "more than one operator");
        struct partial v;
        if ((r = parse_partial(p, s + t, te - t, &v)) < 0)
                return r;
        *i = te;
        *prev_op = kind != K_NONE;
        /* "A - B": the '-' stands alone between two plain versions. */
        size_t h = skip_space(s, *i, b);
        if (kind == K_NONE && h > *i && h < b && s[h] == '-' && (h + 1 == b || is_space(s[h + 1])))
                return parse_hyphen(p, &v, t, h, b, i);
        return desugar(p, kind, &v, s + t, te - t);
}

/* One alternative, s[a..b): comparators into set (and its interval). */
static int parse_set(struct range_parser *p, size_t a, size_t b, struct semver_set *set) {
        struct semver_comparator *buf = calloc(2 * SEMVER_RANGE_MAX_COMPARATORS, sizeof *buf);
        size_t written = 0;
        bool prev_op = false;
        int r = 0;

        if (!buf)
                return -ENOMEM;
        p->out = buf;
        p->n_out = 0;
        for (size_t i = skip_space(p->s, a, b); i < b; i = skip_space(p->s, i, b))
                if ((r = parse_comparator(p, a, b, &i, &written, &prev_op)) < 0) {
                        free(buf);
                        return r;
                }
        if (p->n_out == 0) {
                free(buf);
                buf = NULL;
        } else {
                struct semver_comparator *shrunk = realloc(buf, p->n_out * sizeof *buf);
                if (shrunk)
                        buf = shrunk;
        }
        set->cmp = buf;
        set->n_cmp = p->n_out;
        r = interval_compute(set->cmp, set->n_cmp, &set->iv);
        if (r < 0) {
                free(buf);
                set->cmp = NULL;
                set->n_cmp = 0;
        }
        return r;
}

void semver_range_free(struct semver_range *r) {
        for (size_t i = 0; i < r->n_sets; i++) {
                free(r->sets[i].cmp);
                free(r->sets[i].iv.excluded);
        }
        free(r->sets);
        r->sets = NULL;
        r->n_sets = 0;
}

int semver_range_parse(const char *s, struct semver_range *out, char *err, size_t errlen) {
        struct range_parser p = { .s = s, .err = err, .errlen = errlen };
        struct semver_range r = { 0 };
        size_t len, a = 0;
        int ret;

        *out = (struct semver_range){ 0 };
        if (err && errlen)
                err[0] = '\0';
        if (!s)
                return -EINVAL;
        len = strnlen(s, SEMVER_RANGE_MAX_LEN + 1);
        if (len > SEMVER_RANGE_MAX_LEN)
                return fail(&p, -E2BIG, s, 16, "a range longer than %d characters", SEMVER_RANGE_MAX_LEN);
        r.sets = calloc(SEMVER_RANGE_MAX_SETS, sizeof *r.sets);
        if (!r.sets)
                return -ENOMEM;
        for (;;) {
                size_t b = a;
                while (b < len && s[b] != '|')
                        b++;
                if (b < len && (b + 1 >= len || s[b + 1] != '|')) {
                        ret = fail(&p, -EINVAL, s + b, 1, "a single '|'; alternatives are separated by '||'");
                        goto fail;
                }
                if (r.n_sets == SEMVER_RANGE_MAX_SETS) {
                        ret = fail(&p, -E2BIG, s + a, b - a, "more than 32 alternatives");
                        goto fail;
                }
                ret = parse_set(&p, a, b, &r.sets[r.n_sets]);
                if (ret < 0)
                        goto fail;
                r.n_sets++;
                if (b >= len)
                        break;
                a = b + 2;
        }
        /* Keep only what the alternatives use: catalogs hold many ranges. */
        struct semver_set *shrunk = realloc(r.sets, r.n_sets * sizeof *r.sets);
        if (shrunk)
                r.sets = shrunk;
        *out = r;
        return 0;
fail:
        semver_range_free(&r);
        return ret;
}

bool semver_range_match(const struct semver_range *r, const struct semver *v) {
        for (size_t i = 0; i < r->n_sets; i++) {
                const struct semver_set *set = &r->sets[i];
                size_t j = 0;
                while (j < set->n_cmp && comparator_holds(&set->cmp[j], v))
                        j++;
                if (j == set->n_cmp)
                        return true;
        }
        return false;
}

int semver_range_format(const struct semver_range *r, char **out) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        *out = NULL;
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < r->n_sets; i++) {
                const struct semver_set *set = &r->sets[i];
                if (i)
                        fputs(" || ", f);
                if (!set->n_cmp)
                        fputc('*', f);
                for (size_t j = 0; j < set->n_cmp; j++)
                        fprintf(f, "%s%s%s", j ? " " : "", semver_op_to_string(set->cmp[j].op), set->cmp[j].v.text);
        }
        if (fclose(f) != 0 || !buf) {
                free(buf);
                return -ENOMEM;
        }
        *out = buf;
        return (int) size;
}
