/* capability: every rule of DESIGN §7 (spec validation, the enabled set,
 * implicit capabilities and their condition, the upgrade rule) and the
 * release filter of DESIGN §6, each rule alone and in its order. Manifests
 * and releases are built here field by field, not parsed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capability.h"

/* ---- fixtures ---------------------------------------------------------------- */

static char *xstrdup(const char *s) {
        char *d = s ? strdup(s) : NULL;
        if (s)
                cr_assert_not_null(d);
        return d;
}

/* A manifest of `kind` group/ns/name from file `file`, with annotations given
 * as key, value, ..., NULL. */
static struct manifest vmk(const char *file, const char *group, const char *kind, const char *ns,
                           const char *name, va_list ap) {
        struct manifest m = { 0 };
        m.file = xstrdup(file);
        m.path = xstrdup(file);
        m.group = xstrdup(group);
        m.version = xstrdup("v1");
        m.api_version = xstrdup(group[0] ? "apps/v1" : "v1");
        m.kind = xstrdup(kind);
        m.namespace = xstrdup(ns);
        m.name = xstrdup(name);
        m.content = xstrdup("kind: x\n");
        m.content_len = strlen(m.content);
        const char *k;
        while ((k = va_arg(ap, const char *))) {
                const char *v = va_arg(ap, const char *);
                m.annotations = realloc(m.annotations, (m.n_annotations + 1) * sizeof *m.annotations);
                cr_assert_not_null(m.annotations);
                m.annotations[m.n_annotations++] = (struct manifest_annotation) { xstrdup(k), xstrdup(v) };
        }
        return m;
}

/* A ConfigMap openshift-test/<name> in <name>.yaml. */
static struct manifest mk(const char *name, ...) {
        char file[256];
        snprintf(file, sizeof file, "%s.yaml", name);
        va_list ap;
        va_start(ap, name);
        struct manifest m = vmk(file, "", "ConfigMap", "openshift-test", name, ap);
        va_end(ap);
        return m;
}

static void list_add(struct manifest_list *l, const char *file, const char *group, const char *kind,
                     const char *ns, const char *name, ...) {
        if (l->n == l->cap) {
                l->cap = l->cap ? 2 * l->cap : 8;
                l->v = realloc(l->v, l->cap * sizeof *l->v);
                cr_assert_not_null(l->v);
        }
        va_list ap;
        va_start(ap, name);
        l->v[l->n++] = vmk(file, group, kind, ns, name, ap);
        va_end(ap);
}

static void strv_set(struct strv *s, ...) {
        strv_free(s);
        va_list ap;
        va_start(ap, s);
        const char *x;
        while ((x = va_arg(ap, const char *)))
                cr_assert_eq(strv_push(s, x), 0);
        va_end(ap);
}

/* "a,b,c" of s, for comparisons. */
static char *joined(const struct strv *s) {
        size_t len = 1;
        for (size_t i = 0; i < s->n; i++)
                len += strlen(s->v[i]) + 1;
        char *out = calloc(1, len);
        cr_assert_not_null(out);
        for (size_t i = 0; i < s->n; i++) {
                if (i)
                        strcat(out, ",");
                strcat(out, s->v[i]);
        }
        return out;
}

#define assert_strv(s, expected)                                                                   \
        do {                                                                                       \
                char *j_ = joined(s);                                                              \
                cr_assert_str_eq(j_, expected);                                                    \
                free(j_);                                                                          \
        } while (0)

/* Known: Build, Console, Insights, Storage, baremetal, marketplace (byte
 * order). Sets: None, v4.11 = {Insights, Storage, baremetal, marketplace},
 * vCurrent = all, in that file order. */
static struct release_info rel;

static void add_set(struct release_info *r, const char *name, ...) {
        r->sets = realloc(r->sets, (r->n_sets + 1) * sizeof *r->sets);
        cr_assert_not_null(r->sets);
        struct cap_set *s = &r->sets[r->n_sets++];
        *s = (struct cap_set) { .name = xstrdup(name) };
        va_list ap;
        va_start(ap, name);
        const char *x;
        while ((x = va_arg(ap, const char *)))
                cr_assert_eq(strv_push(&s->caps, x), 0);
        va_end(ap);
}

static void make_release(struct release_info *r, bool with_builtin_sets) {
        release_info_init(r);
        r->version = xstrdup("4.16.0");
        r->default_profile = xstrdup(RELEASE_DEFAULT_PROFILE);
        strv_set(&r->known_capabilities, "Build", "Console", "Insights", "Storage", "baremetal", "marketplace",
                 NULL);
        if (with_builtin_sets)
                add_set(r, "None", NULL);
        add_set(r, "v4.11", "Insights", "Storage", "baremetal", "marketplace", NULL);
        if (with_builtin_sets)
                add_set(r, "vCurrent", "Build", "Console", "Insights", "Storage", "baremetal", "marketplace",
                        NULL);
}

/* The filter context most tests use: default profile and feature set,
 * exclude id internal-openshift-hosted, everything but Insights and
 * marketplace enabled. */
static struct strv known, enabled, exclude_ids;
static struct filter_context ctx;

static void setup(void) {
        make_release(&rel, true);
        strv_set(&known, "Build", "Console", "Insights", "Storage", "baremetal", "marketplace", NULL);
        strv_set(&enabled, "Build", "Console", "Storage", "baremetal", NULL);
        strv_set(&exclude_ids, "internal-openshift-hosted", NULL);
        ctx = (struct filter_context) {
                .exclude_ids = &exclude_ids,
                .enabled = &enabled,
                .known = &known,
        };
}

static void teardown(void) {
        release_info_free(&rel);
        strv_free(&known);
        strv_free(&enabled);
        strv_free(&exclude_ids);
}

TestSuite(capability, .init = setup, .fini = teardown);

/* Filter m under c; returns the result (caller frees). */
static struct filter_result run(struct manifest *m, const struct filter_context *c) {
        struct filter_result fr;
        cr_assert_eq(filter_manifest(m, c, &fr), 0);
        if (fr.reason == FILTER_INCLUDED) {
                cr_assert_null(fr.message);
                cr_assert_eq(fr.missing.n, 0);
        } else
                cr_assert_not_null(fr.message);
        if (fr.reason != FILTER_CAPABILITY_DISABLED)
                cr_assert_eq(fr.missing.n, 0);
        return fr;
}

/* m (consumed) under c gives reason and, when msg is not NULL, exactly msg. */
static void expect(struct manifest m, const struct filter_context *c, enum filter_reason reason, const char *msg) {
        struct filter_result fr = run(&m, c);
        cr_assert_eq(fr.reason, reason, "%s: got %s (%s), want %s", m.name, filter_reason_to_string(fr.reason),
                     fr.message ? fr.message : "-", filter_reason_to_string(reason));
        if (msg)
                cr_assert_str_eq(fr.message, msg);
        filter_result_free(&fr);
        manifest_free(&m);
}

#define EXC CAP_ANN_EXCLUDE_PREFIX "internal-openshift-hosted"
#define INC(p) CAP_ANN_INCLUDE_PREFIX p
#define HA RELEASE_DEFAULT_PROFILE
#define SNO "single-node-developer"

/* ---- filter: each rule alone -------------------------------------------------- */

Test(capability, reason_strings) {
        cr_assert_str_eq(filter_reason_to_string(FILTER_INCLUDED), "included");
        cr_assert_str_eq(filter_reason_to_string(FILTER_EXCLUDED_ID), "excluded-id");
        cr_assert_str_eq(filter_reason_to_string(FILTER_FEATURE_SET), "feature-set");
        cr_assert_str_eq(filter_reason_to_string(FILTER_PROFILE), "profile");
        cr_assert_str_eq(filter_reason_to_string(FILTER_CAPABILITY_UNKNOWN), "capability-unknown");
        cr_assert_str_eq(filter_reason_to_string(FILTER_CAPABILITY_DISABLED), "capability-disabled");
        cr_assert_null(filter_reason_to_string(_FILTER_REASON_MAX));
}

Test(capability, plain_manifest_included) {
        expect(mk("plain", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("other-annotations", "openshift.io/description", "x", "include.release.openshift.io", "true",
                  NULL),
               &ctx, FILTER_INCLUDED, NULL);
}

Test(capability, exclude_id) {
        expect(mk("a", EXC, "true", NULL), &ctx, FILTER_EXCLUDED_ID,
               "excluded by exclude.release.openshift.io/internal-openshift-hosted=\"true\"");
        /* Only the exact value "true" excludes, as in OpenShift. */
        expect(mk("b", EXC, "false", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("c", EXC, "True", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("d", EXC, "", NULL), &ctx, FILTER_INCLUDED, NULL);
        /* An id the context does not exclude. */
        expect(mk("e", CAP_ANN_EXCLUDE_PREFIX "other-id", "true", NULL), &ctx, FILTER_INCLUDED, NULL);
        /* The bare prefix is not an id. */
        expect(mk("f", CAP_ANN_EXCLUDE_PREFIX, "true", NULL), &ctx, FILTER_INCLUDED, NULL);

        /* No exclude ids at all. */
        struct filter_context c = ctx;
        c.exclude_ids = NULL;
        expect(mk("g", EXC, "true", NULL), &c, FILTER_INCLUDED, NULL);

        /* Several ids: the matching annotation is the one named. */
        struct strv ids = { 0 };
        strv_set(&ids, "a-id", "b-id", NULL);
        c.exclude_ids = &ids;
        expect(mk("h", CAP_ANN_EXCLUDE_PREFIX "c-id", "true", CAP_ANN_EXCLUDE_PREFIX "b-id", "true", NULL), &c,
               FILTER_EXCLUDED_ID, "excluded by exclude.release.openshift.io/b-id=\"true\"");
        expect(mk("i", CAP_ANN_EXCLUDE_PREFIX "a-id", "false", CAP_ANN_EXCLUDE_PREFIX "b-id", "x", NULL), &c,
               FILTER_INCLUDED, NULL);
        strv_free(&ids);
}

Test(capability, feature_set) {
        /* Absent: every feature set. */
        expect(mk("absent", NULL), &ctx, FILTER_INCLUDED, NULL);
        struct filter_context tp = ctx;
        tp.feature_set = "TechPreviewNoUpgrade";
        expect(mk("absent-tp", NULL), &tp, FILTER_INCLUDED, NULL);

        expect(mk("tp", CAP_ANN_FEATURE_SET, "TechPreviewNoUpgrade", NULL), &ctx, FILTER_FEATURE_SET,
               "excluded by release.openshift.io/feature-set=\"TechPreviewNoUpgrade\": "
               "feature set \"Default\" is not listed");
        expect(mk("tp2", CAP_ANN_FEATURE_SET, "TechPreviewNoUpgrade", NULL), &tp, FILTER_INCLUDED, NULL);

        expect(mk("def", CAP_ANN_FEATURE_SET, "Default", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("def-tp", CAP_ANN_FEATURE_SET, "Default", NULL), &tp, FILTER_FEATURE_SET,
               "excluded by release.openshift.io/feature-set=\"Default\": "
               "feature set \"TechPreviewNoUpgrade\" is not listed");

        /* Lists, blanks around names trimmed. */
        expect(mk("l1", CAP_ANN_FEATURE_SET, "Default,TechPreviewNoUpgrade", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("l2", CAP_ANN_FEATURE_SET, "Default,TechPreviewNoUpgrade", NULL), &tp, FILTER_INCLUDED, NULL);
        expect(mk("l3", CAP_ANN_FEATURE_SET, " Default , TechPreviewNoUpgrade ", NULL), &ctx, FILTER_INCLUDED,
               NULL);
        expect(mk("l4", CAP_ANN_FEATURE_SET, "\tDefault\t,TechPreviewNoUpgrade", NULL), &tp, FILTER_INCLUDED,
               NULL);
        expect(mk("l5", CAP_ANN_FEATURE_SET, "CustomNoUpgrade,TechPreviewNoUpgrade", NULL), &ctx,
               FILTER_FEATURE_SET, NULL);

        /* "Default" is just a name: case matters, an empty value names none. */
        expect(mk("lower", CAP_ANN_FEATURE_SET, "default", NULL), &ctx, FILTER_FEATURE_SET, NULL);
        expect(mk("empty", CAP_ANN_FEATURE_SET, "", NULL), &ctx, FILTER_FEATURE_SET,
               "excluded by release.openshift.io/feature-set=\"\": feature set \"Default\" is not listed");

        /* The context's "" and NULL mean Default. */
        struct filter_context e = ctx;
        e.feature_set = "";
        expect(mk("ctx-empty", CAP_ANN_FEATURE_SET, "Default", NULL), &e, FILTER_INCLUDED, NULL);
        expect(mk("ctx-empty2", CAP_ANN_FEATURE_SET, "TechPreviewNoUpgrade", NULL), &e, FILTER_FEATURE_SET, NULL);
}

Test(capability, profiles) {
        struct filter_context sno = ctx, ha = ctx;
        sno.profile = SNO;
        ha.profile = HA;

        /* No include.* annotation: every profile (muster's difference). */
        expect(mk("p0", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("p1", NULL), &sno, FILTER_INCLUDED, NULL);
        struct filter_context ibm = ctx;
        ibm.profile = "ibm-cloud-managed";
        expect(mk("p2", NULL), &ibm, FILTER_INCLUDED, NULL);

        /* Included for the context's profile. */
        expect(mk("p3", INC(HA), "true", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("p4", INC(HA), "true", NULL), &ha, FILTER_INCLUDED, NULL);
        expect(mk("p5", INC(SNO), "true", INC(HA), "true", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("p6", INC(SNO), "true", INC(HA), "true", NULL), &sno, FILTER_INCLUDED, NULL);

        /* For another profile only. */
        expect(mk("p7", INC(SNO), "true", NULL), &ctx, FILTER_PROFILE,
               "excluded by include.release.openshift.io/single-node-developer=\"true\": "
               "include.release.openshift.io/self-managed-high-availability is unset");
        expect(mk("p8", INC(HA), "true", NULL), &sno, FILTER_PROFILE,
               "excluded by include.release.openshift.io/self-managed-high-availability=\"true\": "
               "include.release.openshift.io/single-node-developer is unset");
        /* Another profile's annotation, even "false", makes the manifest profiled. */
        expect(mk("p9", INC(SNO), "false", NULL), &ctx, FILTER_PROFILE, NULL);

        /* A value other than "true" for the context's profile. */
        expect(mk("p10", INC(HA), "false", NULL), &ctx, FILTER_PROFILE,
               "excluded by include.release.openshift.io/self-managed-high-availability=\"false\"");
        expect(mk("p11", INC(HA), "True", NULL), &ctx, FILTER_PROFILE, NULL);
        expect(mk("p12", INC(HA), "", INC(SNO), "true", NULL), &ctx, FILTER_PROFILE,
               "excluded by include.release.openshift.io/self-managed-high-availability=\"\"");

        /* "" profile in the context is the default one. */
        struct filter_context empty = ctx;
        empty.profile = "";
        expect(mk("p13", INC(HA), "true", NULL), &empty, FILTER_INCLUDED, NULL);
        expect(mk("p14", INC(SNO), "true", NULL), &empty, FILTER_PROFILE, NULL);
}

Test(capability, capability_single) {
        expect(mk("c1", CAP_ANN_CAPABILITY, "Console", NULL), &ctx, FILTER_INCLUDED, NULL);

        struct manifest m = mk("c2", CAP_ANN_CAPABILITY, "Insights", NULL);
        struct filter_result fr = run(&m, &ctx);
        cr_assert_eq(fr.reason, FILTER_CAPABILITY_DISABLED);
        cr_assert_str_eq(fr.message,
                         "excluded by capability.openshift.io/name=\"Insights\": capability Insights is not enabled");
        assert_strv(&fr.missing, "Insights");
        filter_result_free(&fr);
        manifest_free(&m);

        expect(mk("c3", CAP_ANN_CAPABILITY, "Foo", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"Foo\": unknown capability \"Foo\"");
        /* Names are case-sensitive. */
        expect(mk("c4", CAP_ANN_CAPABILITY, "console", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"console\": unknown capability \"console\"");
        /* Empty value, blank value: one empty name, unknown. */
        expect(mk("c5", CAP_ANN_CAPABILITY, "", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"\": unknown capability \"\"");
        expect(mk("c6", CAP_ANN_CAPABILITY, "  ", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"  \": unknown capability \"\"");
        /* Blanks around a single name. */
        expect(mk("c7", CAP_ANN_CAPABILITY, " Console\t", NULL), &ctx, FILTER_INCLUDED, NULL);
}

Test(capability, capability_plus) {
        /* Both enabled. */
        expect(mk("a", CAP_ANN_CAPABILITY, "Console+Build", NULL), &ctx, FILTER_INCLUDED, NULL);
        expect(mk("b", CAP_ANN_CAPABILITY, " Console + Build ", NULL), &ctx, FILTER_INCLUDED, NULL);

        /* One disabled: only it is missing. */
        struct manifest m = mk("c", CAP_ANN_CAPABILITY, "Console+Insights", NULL);
        struct filter_result fr = run(&m, &ctx);
        cr_assert_eq(fr.reason, FILTER_CAPABILITY_DISABLED);
        assert_strv(&fr.missing, "Insights");
        cr_assert_str_eq(fr.message, "excluded by capability.openshift.io/name=\"Console+Insights\": "
                                     "capability Insights is not enabled");
        filter_result_free(&fr);
        manifest_free(&m);

        /* Two disabled: both, sorted and once each. */
        m = mk("d", CAP_ANN_CAPABILITY, "marketplace + Insights+Console+Insights", NULL);
        fr = run(&m, &ctx);
        cr_assert_eq(fr.reason, FILTER_CAPABILITY_DISABLED);
        assert_strv(&fr.missing, "Insights,marketplace");
        cr_assert_str_eq(fr.message, "excluded by capability.openshift.io/name=\"marketplace + Insights+Console+"
                                     "Insights\": capabilities Insights, marketplace are not enabled");
        filter_result_free(&fr);
        manifest_free(&m);

        /* One unknown: unknown, even though the other is disabled. */
        expect(mk("e", CAP_ANN_CAPABILITY, "Insights+Foo", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"Insights+Foo\": unknown capability \"Foo\"");
        expect(mk("f", CAP_ANN_CAPABILITY, "Foo+Insights", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN, NULL);
        expect(mk("g", CAP_ANN_CAPABILITY, "Console+Foo", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN, NULL);
        expect(mk("h", CAP_ANN_CAPABILITY, "Foo+Bar+Foo", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"Foo+Bar+Foo\": unknown capabilities \"Foo\", \"Bar\"");

        /* Empty components are unknown names. */
        expect(mk("i", CAP_ANN_CAPABILITY, "Console++Build", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"Console++Build\": unknown capability \"\"");
        expect(mk("j", CAP_ANN_CAPABILITY, "Console+", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN, NULL);
        expect(mk("k", CAP_ANN_CAPABILITY, "+Console", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN, NULL);
        expect(mk("l", CAP_ANN_CAPABILITY, "Console+ +Build", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN, NULL);
        expect(mk("m", CAP_ANN_CAPABILITY, "+", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN,
               "excluded by capability.openshift.io/name=\"+\": unknown capability \"\"");
        expect(mk("n", CAP_ANN_CAPABILITY, "Insights++", NULL), &ctx, FILTER_CAPABILITY_UNKNOWN, NULL);
}

Test(capability, unknown_never_applied) {
        /* Every known capability enabled: a name the release does not know
         * still excludes. */
        struct strv all = { 0 };
        strv_set(&all, "Build", "Console", "Insights", "Storage", "baremetal", "marketplace", NULL);
        struct filter_context c = ctx;
        c.enabled = &all;
        expect(mk("a", CAP_ANN_CAPABILITY, "Foo", NULL), &c, FILTER_CAPABILITY_UNKNOWN, NULL);
        expect(mk("b", CAP_ANN_CAPABILITY, "Console+Foo", NULL), &c, FILTER_CAPABILITY_UNKNOWN, NULL);
        expect(mk("c", CAP_ANN_CAPABILITY, "Insights+marketplace", NULL), &c, FILTER_INCLUDED, NULL);
        /* No known list and nothing enabled: every name is unknown. */
        c.known = NULL;
        c.enabled = NULL;
        expect(mk("d", CAP_ANN_CAPABILITY, "Console", NULL), &c, FILTER_CAPABILITY_UNKNOWN, NULL);
        /* No enabled list: every known name is disabled. */
        c.known = &known;
        c.enabled = NULL;
        expect(mk("e", CAP_ANN_CAPABILITY, "Console", NULL), &c, FILTER_CAPABILITY_DISABLED, NULL);
        strv_free(&all);
}

Test(capability, long_values_are_cut_in_messages) {
        char value[1001];
        memset(value, 'X', 1000);
        value[1000] = '\0';
        struct manifest m = mk("long", CAP_ANN_CAPABILITY, value, NULL);
        struct filter_result fr = run(&m, &ctx);
        cr_assert_eq(fr.reason, FILTER_CAPABILITY_UNKNOWN);
        cr_assert_lt(strlen(fr.message), 600);
        cr_assert_not_null(strstr(fr.message, "X...\""));
        filter_result_free(&fr);
        manifest_free(&m);
}

/* ---- filter: order --------------------------------------------------------------- */

enum { R_EXCLUDE, R_FEATURE, R_PROFILE, R_CAP, N_RULES };

/* A manifest failing exactly the rules in `mask` (capability failing as
 * unknown or as disabled), in a chosen annotation order. */
static struct manifest failing(unsigned mask, bool cap_unknown, bool reversed) {
        const char *kv[2 * N_RULES + 1];
        size_t n = 0;
        const char *pairs[N_RULES][2] = {
                [R_EXCLUDE] = { EXC, "true" },
                [R_FEATURE] = { CAP_ANN_FEATURE_SET, "TechPreviewNoUpgrade" },
                [R_PROFILE] = { INC(SNO), "true" },
                [R_CAP] = { CAP_ANN_CAPABILITY, cap_unknown ? "Foo" : "Insights" },
        };
        for (int i = 0; i < N_RULES; i++) {
                int r = reversed ? N_RULES - 1 - i : i;
                if (mask & (1u << r)) {
                        kv[n++] = pairs[r][0];
                        kv[n++] = pairs[r][1];
                }
        }
        kv[n] = NULL;
        char name[64];
        snprintf(name, sizeof name, "m%u%s%s", mask, cap_unknown ? "u" : "d", reversed ? "r" : "");
        return mk(name, n > 0 ? kv[0] : NULL, n > 1 ? kv[1] : NULL, n > 2 ? kv[2] : NULL, n > 3 ? kv[3] : NULL,
                  n > 4 ? kv[4] : NULL, n > 5 ? kv[5] : NULL, n > 6 ? kv[6] : NULL, n > 7 ? kv[7] : NULL, NULL);
}

Test(capability, first_failing_rule_decides) {
        const enum filter_reason by_rule[N_RULES] = {
                FILTER_EXCLUDED_ID, FILTER_FEATURE_SET, FILTER_PROFILE, FILTER_CAPABILITY_DISABLED,
        };
        unsigned checked_pairs = 0;
        /* Every combination of failing rules (every pair among them), both
         * capability failures, both annotation orders. */
        for (unsigned mask = 1; mask < (1u << N_RULES); mask++)
                for (int unk = 0; unk < 2; unk++)
                        for (int rev = 0; rev < 2; rev++) {
                                int first = __builtin_ctz(mask);
                                enum filter_reason want = by_rule[first];
                                if (first == R_CAP && unk)
                                        want = FILTER_CAPABILITY_UNKNOWN;
                                expect(failing(mask, unk, rev), &ctx, want, NULL);
                                if (__builtin_popcount(mask) == 2)
                                        checked_pairs++;
                        }
        cr_assert_eq(checked_pairs, 6 * 4);
}

Test(capability, order_messages) {
        /* Each earlier rule's own message wins. */
        expect(failing(1u << R_EXCLUDE | 1u << R_CAP, false, true), &ctx, FILTER_EXCLUDED_ID,
               "excluded by exclude.release.openshift.io/internal-openshift-hosted=\"true\"");
        expect(failing(1u << R_FEATURE | 1u << R_PROFILE, false, true), &ctx, FILTER_FEATURE_SET,
               "excluded by release.openshift.io/feature-set=\"TechPreviewNoUpgrade\": "
               "feature set \"Default\" is not listed");
        expect(failing(1u << R_PROFILE | 1u << R_CAP, true, true), &ctx, FILTER_PROFILE,
               "excluded by include.release.openshift.io/single-node-developer=\"true\": "
               "include.release.openshift.io/self-managed-high-availability is unset");
        /* Unknown wins over disabled inside the capability rule. */
        expect(mk("ud", CAP_ANN_CAPABILITY, "Insights+Foo", INC(HA), "true", NULL), &ctx,
               FILTER_CAPABILITY_UNKNOWN, NULL);
}

Test(capability, filter_release_all) {
        struct manifest_list l = { 0 };
        list_add(&l, "a.yaml", "", "ConfigMap", "ns", "a", NULL);
        list_add(&l, "b.yaml", "", "ConfigMap", "ns", "b", CAP_ANN_CAPABILITY, "Insights", NULL);
        list_add(&l, "c.yaml", "", "ConfigMap", "ns", "c", CAP_ANN_FEATURE_SET, "TechPreviewNoUpgrade", NULL);
        list_add(&l, "d.yaml", "", "ConfigMap", "ns", "d", CAP_ANN_CAPABILITY, "Console", INC(HA), "true", NULL);
        struct filter_result *res = NULL;
        cr_assert_eq(filter_release(&l, &ctx, &res), 0);
        cr_assert_eq(res[0].reason, FILTER_INCLUDED);
        cr_assert_eq(res[1].reason, FILTER_CAPABILITY_DISABLED);
        assert_strv(&res[1].missing, "Insights");
        cr_assert_eq(res[2].reason, FILTER_FEATURE_SET);
        cr_assert_eq(res[3].reason, FILTER_INCLUDED);
        for (size_t i = 0; i < l.n; i++)
                filter_result_free(&res[i]);
        free(res);
        manifest_list_free(&l);

        struct manifest_list empty = { 0 };
        res = (struct filter_result *) 1;
        cr_assert_eq(filter_release(&empty, &ctx, &res), 0);
        cr_assert_null(res);
}

/* ---- spec validation (the API's 400s) -------------------------------------------- */

static int validate(const struct release_info *r, const char *baseline, const char *add1, const char *add2,
                    char *err, size_t errlen) {
        struct cap_spec s;
        cap_spec_init(&s);
        if (baseline)
                s.baseline = xstrdup(baseline);
        if (add1)
                cr_assert_eq(strv_push(&s.additional, add1), 0);
        if (add2)
                cr_assert_eq(strv_push(&s.additional, add2), 0);
        int r2 = cap_validate_spec(r, &s, err, errlen);
        cap_spec_free(&s);
        return r2;
}

Test(capability, spec_valid) {
        char err[512];
        const char *sets[] = { NULL, "None", "v4.11", "vCurrent" };
        for (size_t i = 0; i < 4; i++) {
                cr_assert_eq(validate(&rel, sets[i], NULL, NULL, err, sizeof err), 0);
                cr_assert_eq(validate(&rel, sets[i], "Console", "marketplace", err, sizeof err), 0);
        }
        /* None and vCurrent are known even when the release does not spell
         * them out. */
        struct release_info bare;
        make_release(&bare, false);
        cr_assert_eq(validate(&bare, "None", "Build", NULL, err, sizeof err), 0);
        cr_assert_eq(validate(&bare, "vCurrent", NULL, NULL, err, sizeof err), 0);
        cr_assert_eq(validate(&bare, "v4.11", NULL, NULL, err, sizeof err), 0);
        release_info_free(&bare);
}

Test(capability, spec_unknown_set) {
        char err[512];
        cr_assert_eq(validate(&rel, "v9", NULL, NULL, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "unknown capability set \"v9\"; known sets: None, v4.11, vCurrent");
        cr_assert_eq(validate(&rel, "vcurrent", NULL, NULL, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "unknown capability set \"vcurrent\"; known sets: None, v4.11, vCurrent");
        cr_assert_eq(validate(&rel, "", NULL, NULL, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "unknown capability set \"\"; known sets: None, v4.11, vCurrent");
        /* The unknown set is reported before any capability. */
        cr_assert_eq(validate(&rel, "v9", "Foo", NULL, err, sizeof err), -EINVAL);
        cr_assert_not_null(strstr(err, "\"v9\""));

        struct release_info bare;
        make_release(&bare, false);
        cr_assert_eq(validate(&bare, "v4.12", NULL, NULL, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "unknown capability set \"v4.12\"; known sets: None, v4.11, vCurrent");
        release_info_free(&bare);
}

Test(capability, spec_unknown_capability) {
        char err[512];
        cr_assert_eq(validate(&rel, NULL, "Foo", NULL, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "unknown capability \"Foo\"; known: Build, Console, Insights, Storage, baremetal, "
                              "marketplace");
        cr_assert_eq(validate(&rel, "None", "Console", "console", err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "unknown capability \"console\"; known: Build, Console, Insights, Storage, "
                              "baremetal, marketplace");
        cr_assert_eq(validate(&rel, "v4.11", "", NULL, err, sizeof err), -EINVAL);
        cr_assert(strncmp(err, "unknown capability \"\"; known: ", 30) == 0);
        /* No error buffer: still refused. */
        cr_assert_eq(validate(&rel, NULL, "Foo", NULL, NULL, 0), -EINVAL);
}

static char *cap_name(int i) {
        char *s;
        cr_assert_geq(asprintf(&s, "Capability%03d", i), 0);
        return s;
}

Test(capability, spec_message_truncated_cleanly) {
        struct release_info big;
        release_info_init(&big);
        big.version = xstrdup("9.9");
        for (int i = 0; i < 200; i++)
                cr_assert_eq(strv_consume(&big.known_capabilities, cap_name(i)), 0);
        for (int i = 0; i < 100; i++) {
                char name[32];
                snprintf(name, sizeof name, "v4.%d", i);
                add_set(&big, name, NULL);
        }

        size_t sizes[] = { 512, 200, 64, 33, 32, 31, 20, 2, 1 };
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
                char buf[600];
                memset(buf, '#', sizeof buf);
                cr_assert_eq(validate(&big, NULL, "Foo", NULL, buf, sizes[s]), -EINVAL);
                size_t len = strlen(buf);
                cr_assert_lt(len, sizes[s]);
                cr_assert_eq(buf[sizes[s]], '#', "wrote past errlen %zu", sizes[s]);
                const char *prefix = "unknown capability \"Foo\"; known: ";
                if (sizes[s] > strlen(prefix) + 3) {
                        cr_assert(strncmp(buf, prefix, strlen(prefix)) == 0, "%s", buf);
                        /* Whole names only, then ", ..." */
                        const char *p = buf + strlen(prefix);
                        int i = 0;
                        for (;;) {
                                if (strcmp(p, "...") == 0)
                                        break;
                                char want[32];
                                snprintf(want, sizeof want, "Capability%03d", i++);
                                cr_assert(strncmp(p, want, strlen(want)) == 0, "%zu: %s", sizes[s], buf);
                                p += strlen(want);
                                cr_assert(strncmp(p, ", ", 2) == 0, "%zu: %s", sizes[s], buf);
                                p += 2;
                        }
                        if (sizes[s] == 512)
                                cr_assert_gt(i, 20);
                }
        }

        char buf[512];
        cr_assert_eq(validate(&big, "v5", NULL, NULL, buf, sizeof buf), -EINVAL);
        const char *set_prefix = "unknown capability set \"v5\"; known sets: None, v4.0, v4.1, v4.10, v4.11, ";
        cr_assert(strncmp(buf, set_prefix, strlen(set_prefix)) == 0, "%s", buf);
        cr_assert(strlen(buf) > 400 && strcmp(buf + strlen(buf) - 5, ", ...") == 0, "%s", buf);

        release_info_free(&big);
}

Test(capability, spec_long_unknown_name) {
        char name[1001];
        memset(name, 'Z', 1000);
        name[1000] = '\0';
        char err[512];
        cr_assert_eq(validate(&rel, NULL, name, NULL, err, sizeof err), -EINVAL);
        cr_assert(strncmp(err, "unknown capability \"ZZZ", 23) == 0);
        cr_assert_not_null(strstr(err, "Z...\"; known: Build, Console, Insights, Storage, baremetal, marketplace"));
}

/* ---- cap_compute -------------------------------------------------------------------- */

static void compute(const char *baseline, const char *additional, const char *previously, const char *also,
                    const char *want_enabled, const char *want_implicit) {
        struct cap_spec s;
        cap_spec_init(&s);
        struct strv prev = { 0 }, al = { 0 };
        if (baseline)
                s.baseline = xstrdup(baseline);
        /* comma lists */
        const struct {
                const char *src;
                struct strv *dst;
        } lists[] = { { additional, &s.additional }, { previously, &prev }, { also, &al } };
        for (size_t i = 0; i < 3; i++) {
                if (!lists[i].src || !lists[i].src[0])
                        continue;
                char *dup = xstrdup(lists[i].src), *save = NULL;
                for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
                        cr_assert_eq(strv_push(lists[i].dst, t), 0);
                free(dup);
        }
        struct cap_status st;
        cap_status_init(&st);
        cr_assert_eq(cap_compute(&rel, &s, previously ? &prev : NULL, also ? &al : NULL, &st), 0);
        assert_strv(&st.enabled, want_enabled);
        assert_strv(&st.implicit, want_implicit);
        assert_strv(&st.known, "Build,Console,Insights,Storage,baremetal,marketplace");
        cap_status_free(&st);
        cap_spec_free(&s);
        strv_free(&prev);
        strv_free(&al);
}

Test(capability, compute_sets_and_additional) {
        compute(NULL, NULL, NULL, NULL, "Build,Console,Insights,Storage,baremetal,marketplace", "");
        compute("vCurrent", NULL, NULL, NULL, "Build,Console,Insights,Storage,baremetal,marketplace", "");
        compute("None", NULL, NULL, NULL, "", "");
        compute("None", "Console", NULL, NULL, "Console", "");
        compute("None", "marketplace,Console,Console", NULL, NULL, "Console,marketplace", "");
        compute("v4.11", NULL, NULL, NULL, "Insights,Storage,baremetal,marketplace", "");
        compute("v4.11", "Build,Insights", NULL, NULL, "Build,Insights,Storage,baremetal,marketplace", "");
        /* previously enabled alone: nothing new when they are still asked for. */
        compute("v4.11", NULL, "Insights,Storage", NULL, "Insights,Storage,baremetal,marketplace", "");
}

Test(capability, compute_previously_enabled_kept_and_implicit) {
        /* The admin drops Build and Console: they stay, reported implicit. */
        compute("None", "Storage", "Build,Console,Storage", NULL, "Build,Console,Storage", "Build,Console");
        compute("v4.11", NULL, "Build,Insights", NULL, "Build,Insights,Storage,baremetal,marketplace", "Build");
        /* also_enable (the upgrade rule) adds and is implicit too. */
        compute("None", NULL, NULL, "Insights", "Insights", "Insights");
        compute("None", "Insights", NULL, "Insights", "Insights", "");
        compute("None", NULL, "Console", "Insights,Console", "Console,Insights", "Console,Insights");
        /* Names from before that this release does not know (capabilities it
         * dropped) are kept, and implicit: enabled once, enabled for good.
         * also_enable only ever names known ones. */
        compute("None", "Console", "Console,Gone,OldCap", "AlsoGone", "Console,Gone,OldCap", "Gone,OldCap");
        compute(NULL, NULL, "Gone", NULL, "Build,Console,Gone,Insights,Storage,baremetal,marketplace", "Gone");
}

Test(capability, compute_builtin_sets_without_definitions) {
        struct release_info bare;
        make_release(&bare, false);
        struct cap_spec s;
        cap_spec_init(&s);
        struct cap_status st;
        cap_status_init(&st);
        cr_assert_eq(cap_compute(&bare, &s, NULL, NULL, &st), 0);
        assert_strv(&st.enabled, "Build,Console,Insights,Storage,baremetal,marketplace");
        cap_status_free(&st);
        s.baseline = xstrdup("None");
        cr_assert_eq(cap_compute(&bare, &s, NULL, NULL, &st), 0);
        assert_strv(&st.enabled, "");
        cap_status_free(&st);
        cap_spec_free(&s);
        release_info_free(&bare);
}

Test(capability, compute_refuses_invalid_spec) {
        struct cap_spec s;
        cap_spec_init(&s);
        struct cap_status st;
        cap_status_init(&st);
        s.baseline = xstrdup("v9");
        cr_assert_eq(cap_compute(&rel, &s, NULL, NULL, &st), -EINVAL);
        cr_assert_eq(st.enabled.n, 0);
        free(s.baseline);
        s.baseline = NULL;
        cr_assert_eq(strv_push(&s.additional, "Foo"), 0);
        cr_assert_eq(cap_compute(&rel, &s, NULL, NULL, &st), -EINVAL);
        cr_assert_eq(st.enabled.n, 0);
        cap_spec_free(&s);
        cap_status_free(&st);
}

/* ---- the condition -------------------------------------------------------------------- */

static const char *member_str(json_object *o, const char *k) {
        json_object *v;
        cr_assert(json_object_object_get_ex(o, k, &v), "no %s", k);
        cr_assert(json_object_is_type(v, json_type_string));
        return json_object_get_string(v);
}

Test(capability, condition_true_and_false) {
        struct cap_status st;
        cap_status_init(&st);
        json_object *c = cap_condition_json(&st);
        cr_assert_not_null(c);
        cr_assert_eq(json_object_object_length(c), 4);
        cr_assert_str_eq(member_str(c, "type"), "ImplicitlyEnabledCapabilities");
        cr_assert_str_eq(member_str(c, "status"), "False");
        cr_assert_str_eq(member_str(c, "reason"), "AsExpected");
        cr_assert_str_eq(member_str(c, "message"), "Capabilities match configured spec");
        json_object_put(c);

        strv_set(&st.enabled, "Build", "Console", NULL);
        strv_set(&st.implicit, "Build", NULL);
        c = cap_condition_json(&st);
        cr_assert_str_eq(member_str(c, "type"), "ImplicitlyEnabledCapabilities");
        cr_assert_str_eq(member_str(c, "status"), "True");
        cr_assert_str_eq(member_str(c, "reason"), "CapabilitiesImplicitlyEnabled");
        cr_assert_str_eq(member_str(c, "message"), "The following capabilities could not be disabled: Build");
        json_object_put(c);

        strv_set(&st.implicit, "Build", "Console", "marketplace", NULL);
        c = cap_condition_json(&st);
        cr_assert_str_eq(member_str(c, "message"),
                         "The following capabilities could not be disabled: Build, Console, marketplace");
        json_object_put(c);
        cap_status_free(&st);
}

Test(capability, condition_from_compute) {
        struct cap_spec s;
        cap_spec_init(&s);
        s.baseline = xstrdup("None");
        struct strv prev = { 0 };
        strv_set(&prev, "Console", "Insights", NULL);
        struct cap_status st;
        cap_status_init(&st);
        cr_assert_eq(cap_compute(&rel, &s, &prev, NULL, &st), 0);
        json_object *c = cap_condition_json(&st);
        cr_assert_str_eq(member_str(c, "status"), "True");
        cr_assert_str_eq(member_str(c, "message"), "The following capabilities could not be disabled: Console, "
                                                   "Insights");
        json_object_put(c);
        cap_status_free(&st);
        strv_free(&prev);
        cap_spec_free(&s);
}

/* ---- the upgrade rule ---------------------------------------------------------------- */

struct upgrade {
        struct manifest_list old_ms, new_ms;
        struct strv old_enabled, new_enabled;
        struct filter_context old_ctx, new_ctx;
        struct strv out;
};

static void upgrade_init(struct upgrade *u) {
        *u = (struct upgrade) { 0 };
        /* Old: Console and Build enabled; new: the same. */
        strv_set(&u->old_enabled, "Build", "Console", NULL);
        strv_set(&u->new_enabled, "Build", "Console", NULL);
        u->old_ctx = (struct filter_context) { .enabled = &u->old_enabled, .known = &known };
        u->new_ctx = (struct filter_context) { .enabled = &u->new_enabled, .known = &known };
}

static void upgrade_run(struct upgrade *u, const char *want) {
        cr_assert_eq(cap_upgrade_implicit(&u->old_ms, &u->old_ctx, &u->new_ms, &u->new_ctx, &u->out), 0);
        assert_strv(&u->out, want);
}

static void upgrade_free(struct upgrade *u) {
        manifest_list_free(&u->old_ms);
        manifest_list_free(&u->new_ms);
        strv_free(&u->old_enabled);
        strv_free(&u->new_enabled);
        strv_free(&u->out);
}

Test(capability, upgrade_included_then_excluded_by_capability) {
        struct upgrade u;
        upgrade_init(&u);
        /* Plain before, needs Insights now. */
        list_add(&u.old_ms, "0000_50_insights.yaml", "apps", "Deployment", "openshift-insights", "operator", NULL);
        list_add(&u.new_ms, "0000_50_insights.yaml", "apps", "Deployment", "openshift-insights", "operator",
                 CAP_ANN_CAPABILITY, "Insights", NULL);
        /* Console before, Console+marketplace now. */
        list_add(&u.old_ms, "0000_50_console.yaml", "", "ConfigMap", "openshift-console", "cfg", CAP_ANN_CAPABILITY,
                 "Console", NULL);
        list_add(&u.new_ms, "0000_50_console.yaml", "", "ConfigMap", "openshift-console", "cfg", CAP_ANN_CAPABILITY,
                 "Console+marketplace+Insights", NULL);
        upgrade_run(&u, "Insights,marketplace");
        upgrade_free(&u);
}

Test(capability, upgrade_other_reasons_give_nothing) {
        struct upgrade u;
        upgrade_init(&u);
        /* Excluded in the new release by feature set (before the capability
         * rule): nothing. */
        list_add(&u.old_ms, "a.yaml", "", "ConfigMap", "ns", "a", NULL);
        list_add(&u.new_ms, "a.yaml", "", "ConfigMap", "ns", "a", CAP_ANN_FEATURE_SET, "TechPreviewNoUpgrade",
                 CAP_ANN_CAPABILITY, "Insights", NULL);
        /* By profile. */
        list_add(&u.old_ms, "b.yaml", "", "ConfigMap", "ns", "b", NULL);
        list_add(&u.new_ms, "b.yaml", "", "ConfigMap", "ns", "b", INC(SNO), "true", CAP_ANN_CAPABILITY, "Insights",
                 NULL);
        /* By an unknown capability next to a disabled one. */
        list_add(&u.old_ms, "c.yaml", "", "ConfigMap", "ns", "c", NULL);
        list_add(&u.new_ms, "c.yaml", "", "ConfigMap", "ns", "c", CAP_ANN_CAPABILITY, "Insights+Foo", NULL);
        /* Not included before either (disabled then too). */
        list_add(&u.old_ms, "d.yaml", "", "ConfigMap", "ns", "d", CAP_ANN_CAPABILITY, "Storage", NULL);
        list_add(&u.new_ms, "d.yaml", "", "ConfigMap", "ns", "d", CAP_ANN_CAPABILITY, "Storage", NULL);
        /* New object that was not in the old release. */
        list_add(&u.new_ms, "e.yaml", "", "ConfigMap", "ns", "e", CAP_ANN_CAPABILITY, "Insights", NULL);
        /* Still included. */
        list_add(&u.old_ms, "f.yaml", "", "ConfigMap", "ns", "f", NULL);
        list_add(&u.new_ms, "f.yaml", "", "ConfigMap", "ns", "f", CAP_ANN_CAPABILITY, "Console", NULL);
        upgrade_run(&u, "");
        upgrade_free(&u);
}

Test(capability, upgrade_old_excluded_by_exclude_id) {
        struct upgrade u;
        upgrade_init(&u);
        struct strv ids = { 0 };
        strv_set(&ids, "internal-openshift-hosted", NULL);
        u.old_ctx.exclude_ids = &ids;
        list_add(&u.old_ms, "a.yaml", "", "ConfigMap", "ns", "a", EXC, "true", NULL);
        list_add(&u.new_ms, "a.yaml", "", "ConfigMap", "ns", "a", CAP_ANN_CAPABILITY, "Insights", NULL);
        upgrade_run(&u, "");
        strv_free(&ids);
        upgrade_free(&u);
}

Test(capability, upgrade_matches_object_not_file) {
        struct upgrade u;
        upgrade_init(&u);
        /* Same group/kind/namespace/name, file renamed and now a document of
         * a multi-document file. */
        list_add(&u.old_ms, "0000_50_old-name.yaml", "apps", "Deployment", "openshift-x", "op", NULL);
        list_add(&u.new_ms, "0000_70_renamed.yaml", "apps", "Deployment", "openshift-x", "op", CAP_ANN_CAPABILITY,
                 "marketplace", NULL);
        free(u.new_ms.v[0].path);
        u.new_ms.v[0].path = xstrdup("0000_70_renamed.1.yaml");
        u.new_ms.v[0].doc_index = 1;
        upgrade_run(&u, "marketplace");
        upgrade_free(&u);

        /* Any one of group, kind, namespace, name different: another object. */
        const char *variants[][4] = {
                { "apps2", "Deployment", "openshift-x", "op" },
                { "apps", "DaemonSet", "openshift-x", "op" },
                { "apps", "Deployment", "openshift-y", "op" },
                { "apps", "Deployment", NULL, "op" },
                { "apps", "Deployment", "openshift-x", "op2" },
        };
        for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
                upgrade_init(&u);
                list_add(&u.old_ms, "a.yaml", "apps", "Deployment", "openshift-x", "op", NULL);
                list_add(&u.new_ms, "a.yaml", variants[i][0], variants[i][1], variants[i][2], variants[i][3],
                         CAP_ANN_CAPABILITY, "Insights", NULL);
                upgrade_run(&u, "");
                upgrade_free(&u);
        }

        /* Cluster-scoped (no namespace) both times: the same object. */
        upgrade_init(&u);
        list_add(&u.old_ms, "crd.yaml", "apiextensions.k8s.io", "CustomResourceDefinition", NULL, "x.io", NULL);
        list_add(&u.new_ms, "crd2.yaml", "apiextensions.k8s.io", "CustomResourceDefinition", NULL, "x.io",
                 CAP_ANN_CAPABILITY, "Insights", NULL);
        upgrade_run(&u, "Insights");
        upgrade_free(&u);
}

Test(capability, upgrade_appends_sorted_unique) {
        struct upgrade u;
        upgrade_init(&u);
        strv_set(&u.out, "Storage", NULL);
        list_add(&u.old_ms, "a.yaml", "", "ConfigMap", "ns", "a", NULL);
        list_add(&u.old_ms, "b.yaml", "", "ConfigMap", "ns", "b", NULL);
        list_add(&u.new_ms, "a.yaml", "", "ConfigMap", "ns", "a", CAP_ANN_CAPABILITY, "marketplace+Insights", NULL);
        list_add(&u.new_ms, "b.yaml", "", "ConfigMap", "ns", "b", CAP_ANN_CAPABILITY, "Insights+Storage", NULL);
        upgrade_run(&u, "Insights,Storage,marketplace");
        upgrade_free(&u);
}

Test(capability, upgrade_then_compute) {
        /* The whole §7 upgrade path: the forced capability ends up enabled
         * and implicit. */
        struct upgrade u;
        upgrade_init(&u);
        list_add(&u.old_ms, "a.yaml", "", "ConfigMap", "ns", "a", NULL);
        list_add(&u.new_ms, "a.yaml", "", "ConfigMap", "ns", "a", CAP_ANN_CAPABILITY, "Insights", NULL);
        upgrade_run(&u, "Insights");

        struct cap_spec s;
        cap_spec_init(&s);
        s.baseline = xstrdup("None");
        cr_assert_eq(strv_push(&s.additional, "Build"), 0);
        cr_assert_eq(strv_push(&s.additional, "Console"), 0);
        struct cap_status st;
        cap_status_init(&st);
        cr_assert_eq(cap_compute(&rel, &s, &u.old_enabled, &u.out, &st), 0);
        assert_strv(&st.enabled, "Build,Console,Insights");
        assert_strv(&st.implicit, "Insights");

        /* Under the new enabled set the manifest is now included. */
        struct filter_context c = u.new_ctx;
        c.enabled = &st.enabled;
        struct filter_result fr;
        cr_assert_eq(filter_manifest(&u.new_ms.v[0], &c, &fr), 0);
        cr_assert_eq(fr.reason, FILTER_INCLUDED);
        filter_result_free(&fr);
        cap_status_free(&st);
        cap_spec_free(&s);
        upgrade_free(&u);
}

/* Issue 12, item 16: upgrading to a release that no longer declares an
 * implicitly enabled capability keeps it enabled, in the condition, and the
 * new release's manifests that carry it are included. */
Test(capability, upgrade_keeps_a_capability_the_new_release_dropped) {
        /* The old release knew Legacy; the cluster had it implicitly. The new
         * release (rel) does not declare it. */
        struct upgrade u;
        upgrade_init(&u);
        strv_set(&u.old_enabled, "Build", "Console", "Legacy", NULL);
        strv_set(&u.new_enabled, "Build", "Console", "Legacy", NULL);
        struct strv old_known = { 0 };
        strv_set(&old_known, "Build", "Console", "Insights", "Legacy", "Storage", "baremetal", "marketplace", NULL);
        u.old_ctx.known = &old_known;
        list_add(&u.old_ms, "l.yaml", "", "ConfigMap", "ns", "l", CAP_ANN_CAPABILITY, "Legacy", NULL);
        list_add(&u.new_ms, "l.yaml", "", "ConfigMap", "ns", "l", CAP_ANN_CAPABILITY, "Legacy", NULL);
        list_add(&u.new_ms, "m.yaml", "", "ConfigMap", "ns", "m", CAP_ANN_CAPABILITY, "Legacy+Console", NULL);
        list_add(&u.new_ms, "n.yaml", "", "ConfigMap", "ns", "n", CAP_ANN_CAPABILITY, "Legacy+Insights", NULL);
        list_add(&u.new_ms, "x.yaml", "", "ConfigMap", "ns", "x", CAP_ANN_CAPABILITY, "NeverKnown", NULL);
        upgrade_run(&u, ""); /* nothing to force: Legacy is still enabled */

        struct cap_spec s;
        cap_spec_init(&s);
        s.baseline = xstrdup("None");
        cr_assert_eq(strv_push(&s.additional, "Console"), 0);
        struct cap_status st;
        cap_status_init(&st);
        cr_assert_eq(cap_compute(&rel, &s, &u.old_enabled, &u.out, &st), 0);
        assert_strv(&st.enabled, "Build,Console,Legacy");
        assert_strv(&st.implicit, "Build,Legacy");
        assert_strv(&st.known, "Build,Console,Insights,Storage,baremetal,marketplace");
        json_object *cond = cap_condition_json(&st);
        cr_assert_str_eq(member_str(cond, "status"), "True");
        cr_assert_str_eq(member_str(cond, "message"),
                         "The following capabilities could not be disabled: Build, Legacy");
        json_object_put(cond);

        /* The new release's filter, under the new enabled set. */
        struct filter_context c = { .enabled = &st.enabled, .known = &rel.known_capabilities };
        const enum filter_reason want[] = { FILTER_INCLUDED, FILTER_INCLUDED, FILTER_CAPABILITY_DISABLED,
                                            FILTER_CAPABILITY_UNKNOWN };
        for (size_t i = 0; i < u.new_ms.n; i++) {
                struct filter_result fr = run(&u.new_ms.v[i], &c);
                cr_assert_eq(fr.reason, want[i], "%s: %s", u.new_ms.v[i].name, fr.message ? fr.message : "included");
                filter_result_free(&fr);
        }

        /* A later day-2 change (recomputed with what is enabled now) keeps it. */
        struct cap_status again;
        cap_status_init(&again);
        cr_assert_eq(cap_compute(&rel, &s, &st.enabled, NULL, &again), 0);
        assert_strv(&again.enabled, "Build,Console,Legacy");
        cap_status_free(&again);
        cap_status_free(&st);
        cap_spec_free(&s);
        strv_free(&old_known);
        upgrade_free(&u);
}
