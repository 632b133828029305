/* Capabilities and the release filter (DESIGN §6-7): which capabilities a
 * cluster has from its spec and its history, and which manifests of a
 * release it gets, with OpenShift's annotation keys and filter order. */
#include "capability.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json-cleanup.h"

/* How much of an annotation value or a client's name a message quotes. */
#define CAP_MSG_QUOTE_MAX 200

void cap_spec_init(struct cap_spec *s) {
        *s = (struct cap_spec) { 0 };
}

void cap_spec_free(struct cap_spec *s) {
        free(s->baseline);
        strv_free(&s->additional);
        *s = (struct cap_spec) { 0 };
}

void cap_status_init(struct cap_status *s) {
        *s = (struct cap_status) { 0 };
}

void cap_status_free(struct cap_status *s) {
        strv_free(&s->enabled);
        strv_free(&s->known);
        strv_free(&s->implicit);
}

static bool strv_has(const struct strv *s, const char *str) {
        return s && strv_contains(s, str);
}

/* Sort s and drop repeats. */
static void strv_sort_uniq(struct strv *s) {
        strv_sort(s);
        size_t o = 0;
        for (size_t i = 0; i < s->n; i++) {
                if (o > 0 && strcmp(s->v[o - 1], s->v[i]) == 0) {
                        free(s->v[i]);
                        continue;
                }
                s->v[o++] = s->v[i];
        }
        s->n = o;
        if (s->v)
                s->v[o] = NULL;
}

static int strv_add_all(struct strv *dst, const struct strv *src) {
        for (size_t i = 0; src && i < src->n; i++) {
                int r = strv_push(dst, src->v[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* At most max bytes of s, cut on a UTF-8 character boundary, "..." added
 * when cut: what a message quotes of a value it does not control. */
static char *shorten(const char *s, size_t max) {
        size_t n = strlen(s);
        if (n <= max)
                return strdup(s);
        n = max;
        while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
                n--;
        char *t = malloc(n + 4);
        if (!t)
                return NULL;
        memcpy(t, s, n);
        memcpy(t + n, "...", 4);
        return t;
}

/* ---- messages into a fixed buffer, cut between list items ---------------- */

struct msgbuf {
        char *p;
        size_t cap;   /* bytes of p, NUL included; 0: discard */
        size_t len;
};

/* Append all of s or nothing; false if it does not fit. */
static bool mb_add(struct msgbuf *m, const char *s) {
        size_t n = strlen(s);
        if (m->cap == 0 || m->len + n + 1 > m->cap)
                return false;
        memcpy(m->p + m->len, s, n + 1);
        m->len += n;
        return true;
}

/* "a, b, c", ending in ", ..." where the rest does not fit. */
static void mb_list(struct msgbuf *m, char *const *v, size_t n) {
        static const char more[] = ", ...";
        if (n == 0) {
                mb_add(m, "(none)");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const char *sep = i > 0 ? ", " : "";
                size_t need = strlen(sep) + strlen(v[i]) + (i + 1 < n ? sizeof more - 1 : 0);
                if (m->len + need + 1 > m->cap) {
                        mb_add(m, i > 0 ? more : "...");
                        return;
                }
                mb_add(m, sep);
                mb_add(m, v[i]);
        }
}

/* The start of a message; when even that does not fit, as much of it as
 * does (snprintf's cut), and the list is left out. */
static bool mb_start(struct msgbuf *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool mb_start(struct msgbuf *m, const char *fmt, ...) {
        if (m->cap == 0)
                return false;
        va_list ap;
        va_start(ap, fmt);
        int l = vsnprintf(m->p, m->cap, fmt, ap);
        va_end(ap);
        if (l < 0) {
                m->p[0] = '\0';
                return false;
        }
        if ((size_t) l + 1 > m->cap) {
                m->len = m->cap - 1;
                return false;
        }
        m->len = (size_t) l;
        return true;
}

/* ---- capabilities ---------------------------------------------------------- */

/* The capabilities of set `name`: the release's definition, else the
 * built-in meaning of None (nothing) and vCurrent (everything known). */
static int set_caps(const struct release_info *r, const char *name, struct strv *out) {
        const struct cap_set *s = release_cap_set(r, name);
        if (s)
                return strv_add_all(out, &s->caps);
        if (strcmp(name, CAP_SET_CURRENT) == 0)
                return strv_add_all(out, &r->known_capabilities);
        if (strcmp(name, CAP_SET_NONE) == 0)
                return 0;
        return -EINVAL;
}

static bool set_known(const struct release_info *r, const char *name) {
        return release_cap_set(r, name) || strcmp(name, CAP_SET_CURRENT) == 0 ||
               strcmp(name, CAP_SET_NONE) == 0;
}

static void unknown_message(char *err, size_t errlen, const char *what, const char *name,
                            const char *list_label, char *const *v, size_t n) {
        if (!err || errlen == 0)
                return;
        _cleanup_free_ char *q = shorten(name, 64);
        struct msgbuf m = { err, errlen, 0 };
        if (mb_start(&m, "unknown %s \"%s\"; %s: ", what, q ? q : "", list_label))
                mb_list(&m, v, n);
}

int cap_validate_spec(const struct release_info *r, const struct cap_spec *spec, char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
        if (!r || !spec)
                return -EINVAL;

        if (spec->baseline && !set_known(r, spec->baseline)) {
                _cleanup_strv_ struct strv names = { 0 };
                for (size_t i = 0; i < r->n_sets; i++)
                        if (strv_push(&names, r->sets[i].name) < 0)
                                return -ENOMEM;
                if (strv_push(&names, CAP_SET_NONE) < 0 || strv_push(&names, CAP_SET_CURRENT) < 0)
                        return -ENOMEM;
                strv_sort_uniq(&names);
                unknown_message(err, errlen, "capability set", spec->baseline, "known sets", names.v,
                                names.n);
                return -EINVAL;
        }
        for (size_t i = 0; i < spec->additional.n; i++)
                if (!strv_contains(&r->known_capabilities, spec->additional.v[i])) {
                        _cleanup_strv_ struct strv known = { 0 };
                        if (strv_add_all(&known, &r->known_capabilities) < 0)
                                return -ENOMEM;
                        strv_sort_uniq(&known);
                        unknown_message(err, errlen, "capability", spec->additional.v[i], "known",
                                        known.v, known.n);
                        return -EINVAL;
                }
        return 0;
}

int cap_compute(const struct release_info *r, const struct cap_spec *spec,
                const struct strv *previously_enabled, const struct strv *also_enable,
                struct cap_status *out) {
        if (!out)
                return -EINVAL;
        int k = cap_validate_spec(r, spec, NULL, 0);
        if (k < 0)
                return k;

        _cleanup_strv_ struct strv asked = { 0 }, all = { 0 }, enabled = { 0 }, known = { 0 },
                                   implicit = { 0 };
        k = set_caps(r, spec->baseline ? spec->baseline : CAP_SET_CURRENT, &asked);
        if (k < 0)
                return k;
        if (strv_add_all(&asked, &spec->additional) < 0 || strv_add_all(&all, &asked) < 0 ||
            strv_add_all(&all, also_enable) < 0 || strv_add_all(&known, &r->known_capabilities) < 0)
                return -ENOMEM;
        strv_sort_uniq(&known);
        for (size_t i = 0; i < all.n; i++)
                if (strv_contains(&known, all.v[i]) && strv_push(&enabled, all.v[i]) < 0)
                        return -ENOMEM;
        /* Once enabled, enabled for good: even when this release no longer
         * declares it (an upgrade), as the cluster-version operator holds. */
        if (strv_add_all(&enabled, previously_enabled) < 0)
                return -ENOMEM;
        strv_sort_uniq(&enabled);
        for (size_t i = 0; i < enabled.n; i++)
                if (!strv_contains(&asked, enabled.v[i]) && strv_push(&implicit, enabled.v[i]) < 0)
                        return -ENOMEM;

        out->enabled = enabled;
        out->known = known;
        out->implicit = implicit;
        enabled = known = implicit = (struct strv) { 0 };
        return 0;
}

json_object *cap_condition_json(const struct cap_status *st) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o)
                return NULL;
        bool implicit = st && st->implicit.n > 0;
        _cleanup_free_ char *msg = NULL;
        if (implicit) {
                size_t len = strlen("The following capabilities could not be disabled: ") + 1;
                for (size_t i = 0; i < st->implicit.n; i++)
                        len += strlen(st->implicit.v[i]) + 2;
                msg = malloc(len);
                if (!msg)
                        return NULL;
                strcpy(msg, "The following capabilities could not be disabled: ");
                for (size_t i = 0; i < st->implicit.n; i++) {
                        if (i > 0)
                                strcat(msg, ", ");
                        strcat(msg, st->implicit.v[i]);
                }
        }
        if (json_object_object_add(o, "type", json_object_new_string(CAP_CONDITION_TYPE)) < 0 ||
            json_object_object_add(o, "status", json_object_new_string(implicit ? "True" : "False")) < 0 ||
            json_object_object_add(o, "reason",
                                   json_object_new_string(implicit ? "CapabilitiesImplicitlyEnabled"
                                                                   : "AsExpected")) < 0 ||
            json_object_object_add(o, "message",
                                   json_object_new_string(implicit ? msg
                                                                   : "Capabilities match configured spec")) < 0)
                return NULL;
        /* json_object_object_add takes a NULL value without complaint:
         * check that every member really got made. */
        json_object_object_foreach(o, key, val) {
                (void) key;
                if (!val)
                        return NULL;
        }
        return TAKE_PTR(o);
}

/* ---- the release filter ---------------------------------------------------- */

const char *filter_reason_to_string(enum filter_reason r) {
        switch (r) {
        case FILTER_INCLUDED:
                return "included";
        case FILTER_EXCLUDED_ID:
                return "excluded-id";
        case FILTER_FEATURE_SET:
                return "feature-set";
        case FILTER_PROFILE:
                return "profile";
        case FILTER_CAPABILITY_UNKNOWN:
                return "capability-unknown";
        case FILTER_CAPABILITY_DISABLED:
                return "capability-disabled";
        case _FILTER_REASON_MAX:
                break;
        }
        return NULL;
}

void filter_result_free(struct filter_result *r) {
        free(r->message);
        strv_free(&r->missing);
        *r = (struct filter_result) { 0 };
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

/* Split s on sep, each part with surrounding blanks trimmed (empty parts
 * kept: "A++B" gives "A", "", "B"). */
static int split_trim(const char *s, char sep, struct strv *out) {
        for (;;) {
                const char *e = strchr(s, sep);
                size_t n = e ? (size_t) (e - s) : strlen(s);
                const char *b = s;
                while (n > 0 && is_blank(*b)) {
                        b++;
                        n--;
                }
                while (n > 0 && is_blank(b[n - 1]))
                        n--;
                int r = strv_consume(out, strndup(b, n));
                if (r < 0)
                        return r;
                if (!e)
                        return 0;
                s = e + 1;
        }
}

static bool has_prefix(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* out->message = "excluded by KEY=\"VALUE\"" followed by fmt. */
static int exclude(struct filter_result *out, enum filter_reason reason, const char *key, const char *value,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int exclude(struct filter_result *out, enum filter_reason reason, const char *key, const char *value,
                   const char *fmt, ...) {
        _cleanup_free_ char *v = shorten(value, CAP_MSG_QUOTE_MAX);
        _cleanup_free_ char *tail = NULL;
        if (!v)
                return -ENOMEM;
        if (fmt) {
                va_list ap;
                va_start(ap, fmt);
                int l = vasprintf(&tail, fmt, ap);
                va_end(ap);
                if (l < 0) {
                        tail = NULL;
                        return -ENOMEM;
                }
        }
        char *msg;
        if (asprintf(&msg, "excluded by %s=\"%s\"%s", key, v, tail ? tail : "") < 0)
                return -ENOMEM;
        out->reason = reason;
        out->message = msg;
        return 0;
}

/* "a, b" of v, each quoted when `quote`. */
static char *join(const struct strv *v, bool quote) {
        size_t len = 1;
        for (size_t i = 0; i < v->n; i++)
                len += strlen(v->v[i]) + 4;
        char *s = malloc(len);
        if (!s)
                return NULL;
        s[0] = '\0';
        for (size_t i = 0; i < v->n; i++) {
                if (i > 0)
                        strcat(s, ", ");
                if (quote)
                        strcat(s, "\"");
                strcat(s, v->v[i]);
                if (quote)
                        strcat(s, "\"");
        }
        return s;
}

static int check_exclude(const struct manifest *m, const struct filter_context *ctx, struct filter_result *out) {
        if (!ctx->exclude_ids || ctx->exclude_ids->n == 0)
                return 0;
        for (size_t i = 0; i < m->n_annotations; i++) {
                const struct manifest_annotation *a = &m->annotations[i];
                if (!has_prefix(a->key, CAP_ANN_EXCLUDE_PREFIX) || strcmp(a->value, "true") != 0)
                        continue;
                if (strv_contains(ctx->exclude_ids, a->key + strlen(CAP_ANN_EXCLUDE_PREFIX)))
                        return exclude(out, FILTER_EXCLUDED_ID, a->key, a->value, NULL);
        }
        return 0;
}

static int check_feature_set(const struct manifest *m, const struct filter_context *ctx,
                             struct filter_result *out) {
        const char *v = manifest_annotation(m, CAP_ANN_FEATURE_SET);
        if (!v)
                return 0;
        const char *fs = ctx->feature_set && ctx->feature_set[0] ? ctx->feature_set : CAP_DEFAULT_FEATURE_SET;
        _cleanup_strv_ struct strv sets = { 0 };
        int r = split_trim(v, ',', &sets);
        if (r < 0)
                return r;
        if (strv_contains(&sets, fs))
                return 0;
        _cleanup_free_ char *q = shorten(fs, CAP_MSG_QUOTE_MAX);
        if (!q)
                return -ENOMEM;
        return exclude(out, FILTER_FEATURE_SET, CAP_ANN_FEATURE_SET, v, ": feature set \"%s\" is not listed", q);
}

static int check_profile(const struct manifest *m, const struct filter_context *ctx, struct filter_result *out) {
        const struct manifest_annotation *first = NULL;
        for (size_t i = 0; i < m->n_annotations && !first; i++)
                if (has_prefix(m->annotations[i].key, CAP_ANN_INCLUDE_PREFIX))
                        first = &m->annotations[i];
        if (!first)
                return 0; /* no include.* at all: every profile (DESIGN §6) */

        const char *profile = ctx->profile && ctx->profile[0] ? ctx->profile : RELEASE_DEFAULT_PROFILE;
        _cleanup_free_ char *key = NULL;
        if (asprintf(&key, CAP_ANN_INCLUDE_PREFIX "%s", profile) < 0)
                return -ENOMEM;
        const char *v = manifest_annotation(m, key);
        if (v && strcmp(v, "true") == 0)
                return 0;
        if (v)
                return exclude(out, FILTER_PROFILE, key, v, NULL);
        return exclude(out, FILTER_PROFILE, first->key, first->value, ": %s is unset", key);
}

static int check_capability(const struct manifest *m, const struct filter_context *ctx,
                            struct filter_result *out) {
        const char *v = manifest_annotation(m, CAP_ANN_CAPABILITY);
        if (!v)
                return 0;
        _cleanup_strv_ struct strv names = { 0 }, unknown = { 0 }, disabled = { 0 };
        int r = split_trim(v, '+', &names);
        if (r < 0)
                return r;
        for (size_t i = 0; i < names.n; i++) {
                const char *c = names.v[i];
                /* An enabled capability is never unknown: one the release
                 * dropped stays enabled, and so do its manifests. */
                if (c[0] == '\0' || (!strv_has(ctx->known, c) && !strv_has(ctx->enabled, c))) {
                        if (!strv_contains(&unknown, c)) {
                                _cleanup_free_ char *q = shorten(c, CAP_MSG_QUOTE_MAX);
                                if (!q || strv_consume(&unknown, TAKE_PTR(q)) < 0)
                                        return -ENOMEM;
                        }
                } else if (!strv_has(ctx->enabled, c) && strv_push(&disabled, c) < 0)
                        return -ENOMEM;
        }
        if (unknown.n > 0) {
                _cleanup_free_ char *list = join(&unknown, true);
                if (!list)
                        return -ENOMEM;
                return exclude(out, FILTER_CAPABILITY_UNKNOWN, CAP_ANN_CAPABILITY, v,
                               ": unknown capabilit%s %s", unknown.n > 1 ? "ies" : "y", list);
        }
        if (disabled.n > 0) {
                strv_sort_uniq(&disabled);
                _cleanup_free_ char *list = join(&disabled, false);
                if (!list)
                        return -ENOMEM;
                r = exclude(out, FILTER_CAPABILITY_DISABLED, CAP_ANN_CAPABILITY, v,
                            ": capabilit%s %s %s not enabled", disabled.n > 1 ? "ies" : "y", list,
                            disabled.n > 1 ? "are" : "is");
                if (r < 0)
                        return r;
                out->missing = disabled;
                disabled = (struct strv) { 0 };
        }
        return 0;
}

int filter_manifest(const struct manifest *m, const struct filter_context *ctx, struct filter_result *out) {
        if (!out)
                return -EINVAL;
        *out = (struct filter_result) { .reason = FILTER_INCLUDED };
        if (!m || !ctx)
                return -EINVAL;
        int (*const rules[])(const struct manifest *, const struct filter_context *, struct filter_result *) = {
                check_exclude, check_feature_set, check_profile, check_capability,
        };
        for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
                int r = rules[i](m, ctx, out);
                if (r < 0) {
                        filter_result_free(out);
                        return r;
                }
                if (out->reason != FILTER_INCLUDED)
                        return 0;
        }
        return 0;
}

int filter_release(const struct manifest_list *ms, const struct filter_context *ctx,
                   struct filter_result **out) {
        if (!ms || !ctx || !out)
                return -EINVAL;
        *out = NULL;
        if (ms->n == 0)
                return 0;
        struct filter_result *res = calloc(ms->n, sizeof *res);
        if (!res)
                return -ENOMEM;
        for (size_t i = 0; i < ms->n; i++) {
                int r = filter_manifest(&ms->v[i], ctx, &res[i]);
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                filter_result_free(&res[j]);
                        free(res);
                        return r;
                }
        }
        *out = res;
        return 0;
}

int cap_undeclared(const struct manifest *m, const struct strv *known, struct strv *out) {
        const char *v = manifest_annotation(m, CAP_ANN_CAPABILITY);
        if (!v)
                return 0;
        _cleanup_strv_ struct strv names = { 0 };
        int r = split_trim(v, '+', &names);
        if (r < 0)
                return r;
        for (size_t i = 0; i < names.n; i++)
                if (names.v[i][0] && !strv_has(known, names.v[i]) && !strv_contains(out, names.v[i]) &&
                    strv_push(out, names.v[i]) < 0)
                        return -ENOMEM;
        return 0;
}

static void results_free(struct filter_result *res, size_t n) {
        for (size_t i = 0; res && i < n; i++)
                filter_result_free(&res[i]);
        free(res);
}

int cap_upgrade_implicit(const struct manifest_list *old_ms, const struct filter_context *old_ctx,
                         const struct manifest_list *new_ms, const struct filter_context *new_ctx,
                         struct strv *out) {
        if (!old_ms || !old_ctx || !new_ms || !new_ctx || !out)
                return -EINVAL;
        struct filter_result *old_res = NULL;
        int r = filter_release(old_ms, old_ctx, &old_res);
        if (r < 0)
                return r;

        _cleanup_strv_ struct strv add = { 0 };
        for (size_t i = 0; i < new_ms->n && r >= 0; i++) {
                struct filter_result fr;
                r = filter_manifest(&new_ms->v[i], new_ctx, &fr);
                if (r < 0)
                        break;
                if (fr.reason == FILTER_CAPABILITY_DISABLED) {
                        bool was_included = false;
                        for (size_t j = 0; j < old_ms->n && !was_included; j++)
                                was_included = old_res[j].reason == FILTER_INCLUDED &&
                                               manifest_same_object(&old_ms->v[j], &new_ms->v[i]);
                        if (was_included)
                                r = strv_add_all(&add, &fr.missing);
                }
                filter_result_free(&fr);
        }
        results_free(old_res, old_ms->n);
        if (r < 0)
                return r;

        for (size_t i = 0; i < add.n; i++)
                if (!strv_contains(out, add.v[i]) && strv_push(out, add.v[i]) < 0)
                        return -ENOMEM;
        strv_sort(out);
        return 0;
}
