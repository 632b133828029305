/* Add-on proxies, their rendered releases and the staged rollout's rules
 * (addon.h). */
#include "domain/addon.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cleanup.h"
#include "errmsg.h"
#include "growbuf.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "yamlscan.h"

static const char *addon_strategy_to_string(enum addon_strategy s) {
        switch (s) {
        case ADDON_CONTINUOUS: return "Continuous";
        case ADDON_INSTALL_ONCE: return "InstallOnce";
        case _ADDON_STRATEGY_MAX:
        case _ADDON_STRATEGY_INVALID: break;
        }
        return NULL;
}

static enum addon_strategy addon_strategy_from_string(const char *s) {
        for (int i = 0; s && i < _ADDON_STRATEGY_MAX; i++)
                if (strcmp(s, addon_strategy_to_string(i)) == 0)
                        return i;
        return _ADDON_STRATEGY_INVALID;
}

const char *addon_status_to_string(enum addon_status s) {
        switch (s) {
        case ADDON_PENDING: return "Pending";
        case ADDON_ROLLING: return "Rolling";
        case ADDON_APPLIED: return "Applied";
        case ADDON_FAILED: return "Failed";
        case ADDON_REMOVING: return "Removing";
        case _ADDON_STATUS_MAX:
        case _ADDON_STATUS_INVALID: break;
        }
        return NULL;
}

enum addon_status addon_status_from_string(const char *s) {
        for (int i = 0; s && i < _ADDON_STATUS_MAX; i++)
                if (strcmp(s, addon_status_to_string(i)) == 0)
                        return i;
        return _ADDON_STATUS_INVALID;
}

static void chart_free(struct addon_chart *c) {
        free(c->repository);
        free(c->name);
        free(c->version);
        *c = (struct addon_chart) { 0 };
}

void addon_spec_free(struct addon_spec *s) {
        free(s->name);
        labelsel_free(s->selector);
        chart_free(&s->chart);
        free(s->release_name);
        free(s->namespace);
        free(s->values_template);
        mustache_free(s->tmpl);
        *s = (struct addon_spec) { 0 };
}

/* ---- the spec ------------------------------------------------------------------ */

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters,
 * what Kubernetes asks of a namespace and Helm of a release name. */
static bool dns_label_valid(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > ADDON_MAX_NAME || s[0] == '-' || s[n - 1] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

/* A printable one-line string: no control characters. */
static bool printable(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}

/* String member k of o (required unless def is given): at most max bytes,
 * no NUL; *out a copy. */
static int get_string(json_object *o, const char *k, const char *def, size_t max, char **out, char *err,
                      size_t errlen) {
        json_object *v;
        if (!json_object_object_get_ex(o, k, &v) || json_object_is_type(v, json_type_null)) {
                if (!def)
                        return errmsg(err, errlen, -EINVAL, "field \"%s\" is required", k);
                return (*out = strdup(def)) ? 0 : -ENOMEM;
        }
        if (!json_object_is_type(v, json_type_string))
                return errmsg(err, errlen, -EINVAL, "field \"%s\" must be a string", k);
        size_t n = (size_t) json_object_get_string_len(v);
        if (n > max)
                return errmsg(err, errlen, -EINVAL, "field \"%s\" is %zu bytes, at most %zu are allowed", k, n, max);
        if (strlen(json_object_get_string(v)) != n)
                return errmsg(err, errlen, -EINVAL, "field \"%s\" contains a NUL byte", k);
        return (*out = strdup(json_object_get_string(v))) ? 0 : -ENOMEM;
}

static int get_name(json_object *o, const char *k, const char *def, char **out, char *err, size_t errlen) {
        int r = get_string(o, k, def, ADDON_MAX_NAME + 64, out, err, errlen);
        if (r < 0)
                return r;
        if (!dns_label_valid(*out))
                return errmsg(err, errlen, -EINVAL,
                              "field \"%s\": \"%.80s\" is not a DNS-1123 label (at most %d characters of a-z, 0-9 "
                              "and '-', starting and ending with a letter or digit)",
                              k, *out, ADDON_MAX_NAME);
        return 0;
}

static int refuse_unknown(json_object *o, const char *where, const char *const *known, char *err, size_t errlen) {
        json_object_object_foreach(o, k, v) {
                (void) v;
                bool ok = false;
                for (size_t i = 0; known[i] && !ok; i++)
                        ok = strcmp(k, known[i]) == 0;
                if (!ok)
                        return errmsg(err, errlen, -EINVAL, "%s\"%.64s\" is not a field of an add-on proxy", where, k);
        }
        return 0;
}

static int parse_chart(json_object *o, struct addon_chart *c, char *err, size_t errlen) {
        static const char *const known[] = { "repository", "name", "version", NULL };
        json_object *ch;
        char sub[128];
        int r;
        if (!json_object_object_get_ex(o, "chart", &ch) || !json_object_is_type(ch, json_type_object))
                return errmsg(err, errlen, -EINVAL, "field \"chart\" must be an object {repository, name, version}");
        if ((r = refuse_unknown(ch, "chart.", known, err, errlen)) < 0)
                return r;
        const char *names[] = { "repository", "name", "version" };
        char **outs[] = { &c->repository, &c->name, &c->version };
        for (size_t i = 0; i < 3; i++) {
                if ((r = get_string(ch, names[i], NULL, ADDON_MAX_CHART_FIELD, outs[i], sub, sizeof sub)) < 0)
                        return errmsg(err, errlen, r, "chart.%s", sub);
                if (!**outs[i] || !printable(*outs[i]) || strchr(*outs[i], ' '))
                        return errmsg(err, errlen, -EINVAL,
                                      "field \"chart.%s\" must be a non-empty string without spaces or control "
                                      "characters",
                                      names[i]);
        }
        return 0;
}

static int parse_rollout(json_object *o, struct addon_rollout *ro, char *err, size_t errlen) {
        static const char *const known[] = { "max_concurrent", "max_failures", "soak_seconds", "timeout_seconds", NULL };
        const struct {
                const char *k;
                int64_t *out, def, min, max;
        } f[] = {
                { "max_concurrent", &ro->max_concurrent, 0, 0, ADDON_MAX_CONCURRENT },
                { "max_failures", &ro->max_failures, ADDON_DEFAULT_MAX_FAILURES, 0, ADDON_MAX_CONCURRENT },
                { "soak_seconds", &ro->soak_seconds, 0, 0, ADDON_MAX_SOAK_S },
                { "timeout_seconds", &ro->timeout_seconds, ADDON_DEFAULT_TIMEOUT_S, 1, ADDON_MAX_SOAK_S },
        };
        json_object *rv = NULL;
        int r;
        if (json_object_object_get_ex(o, "rollout", &rv) && !json_object_is_type(rv, json_type_null)) {
                if (!json_object_is_type(rv, json_type_object))
                        return errmsg(err, errlen, -EINVAL, "field \"rollout\" must be an object");
                if ((r = refuse_unknown(rv, "rollout.", known, err, errlen)) < 0)
                        return r;
        } else
                rv = NULL;
        for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
                json_object *v;
                *f[i].out = f[i].def;
                if (!rv || !json_object_object_get_ex(rv, f[i].k, &v) || json_object_is_type(v, json_type_null))
                        continue;
                if (!json_object_is_type(v, json_type_int))
                        return errmsg(err, errlen, -EINVAL, "field \"rollout.%s\" must be an integer", f[i].k);
                errno = 0;
                int64_t x = json_object_get_int64(v);
                if (errno || x < f[i].min || x > f[i].max)
                        return errmsg(err, errlen, -EINVAL, "field \"rollout.%s\" must be in %lld..%lld", f[i].k,
                                      (long long) f[i].min, (long long) f[i].max);
                *f[i].out = x;
        }
        return 0;
}

int addon_spec_parse(json_object *o, struct addon_spec *out, char *err, size_t errlen) {
        static const char *const known[] = { "name", "cluster_selector", "chart", "release_name", "namespace",
                                             "values_template", "reconcile_strategy", "rollout", NULL };
        struct addon_spec s = { 0 };
        _cleanup_free_ char *strategy = NULL;
        json_object *v;
        char sub[384];
        int r;

        *out = (struct addon_spec) { 0 };
        if (err && errlen)
                err[0] = '\0';
        if (!json_object_is_type(o, json_type_object))
                return errmsg(err, errlen, -EINVAL, "an add-on proxy must be a JSON object");
        if ((r = refuse_unknown(o, "", known, err, errlen)) < 0 || (r = get_name(o, "name", NULL, &s.name, err, errlen)) < 0)
                goto fail;
        if (!json_object_object_get_ex(o, "cluster_selector", &v)) {
                r = errmsg(err, errlen, -EINVAL,
                           "field \"cluster_selector\" is required ({} selects every cluster, null none)");
                goto fail;
        }
        if ((r = labelsel_parse(v, &s.selector, sub, sizeof sub)) < 0) {
                r = errmsg(err, errlen, r == -ENOMEM ? r : -EINVAL, "cluster_selector: %s", sub);
                goto fail;
        }
        if ((r = parse_chart(o, &s.chart, err, errlen)) < 0 ||
            (r = get_name(o, "release_name", s.name, &s.release_name, err, errlen)) < 0 ||
            (r = get_name(o, "namespace", NULL, &s.namespace, err, errlen)) < 0 ||
            (r = get_string(o, "values_template", "", ADDON_MAX_TEMPLATE, &s.values_template, err, errlen)) < 0)
                goto fail;
        if ((r = mustache_parse(s.values_template, strlen(s.values_template), &s.tmpl, sub, sizeof sub)) < 0) {
                r = errmsg(err, errlen, r == -ENOMEM ? -ENOMEM : -EINVAL, "values_template: %s", sub);
                goto fail;
        }
        if ((r = get_string(o, "reconcile_strategy", "Continuous", 64, &strategy, err, errlen)) < 0)
                goto fail;
        if ((s.strategy = addon_strategy_from_string(strategy)) == _ADDON_STRATEGY_INVALID) {
                r = errmsg(err, errlen, -EINVAL, "field \"reconcile_strategy\" must be Continuous or InstallOnce");
                goto fail;
        }
        if ((r = parse_rollout(o, &s.rollout, err, errlen)) < 0)
                goto fail;
        *out = s;
        return 0;
fail:
        if (r == -ENOMEM)
                (void) errmsg(err, errlen, r, "out of memory");
        addon_spec_free(&s);
        return r;
}

/* Member k of patch merged into the object member k of merged. */
static int merge_member(json_object *merged, json_object *patch, const char *k, char *err, size_t errlen) {
        json_object *p = json_object_object_get(patch, k), *m = json_object_object_get(merged, k);
        if (!json_object_is_type(p, json_type_object))
                return errmsg(err, errlen, -EINVAL, "field \"%s\" must be an object", k);
        json_object_object_foreach(p, pk, pv) {
                if (json_object_object_add(m, pk, json_object_get(pv)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int addon_spec_patch(const struct addon_spec *cur, json_object *patch, struct addon_spec *out, char *err,
                     size_t errlen) {
        static const char *const fixed[] = { "name", "release_name", "namespace" };
        _cleanup_json_ json_object *merged = addon_spec_to_json(cur);
        int r;

        *out = (struct addon_spec) { 0 };
        if (err && errlen)
                err[0] = '\0';
        if (!merged)
                return -ENOMEM;
        if (!json_object_is_type(patch, json_type_object))
                return errmsg(err, errlen, -EINVAL, "a patch must be a JSON object");
        if (json_object_object_length(patch) == 0)
                return errmsg(err, errlen, -EINVAL, "nothing to change");
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
                json_object *v;
                if (json_object_object_get_ex(patch, fixed[i], &v) &&
                    !json_object_equal(v, json_object_object_get(merged, fixed[i])))
                        return errmsg(err, errlen, -EINVAL,
                                      "field \"%s\" is set when the proxy is created; delete it and create it again",
                                      fixed[i]);
        }
        json_object_object_foreach(patch, k, v) {
                if (strcmp(k, "chart") == 0 || strcmp(k, "rollout") == 0)
                        r = merge_member(merged, patch, k, err, errlen);
                else
                        r = json_object_object_add(merged, k, json_object_get(v)) < 0 ? -ENOMEM : 0;
                if (r < 0)
                        return r;
        }
        return addon_spec_parse(merged, out, err, errlen);
}

static json_object *chart_to_json(const struct addon_chart *c) {
        json_object *o = json_object_new_object();
        if (o && (jadd(o, "repository", json_object_new_string(c->repository)) < 0 ||
                  jadd(o, "name", json_object_new_string(c->name)) < 0 ||
                  jadd(o, "version", json_object_new_string(c->version)) < 0)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

json_object *addon_spec_to_json(const struct addon_spec *s) {
        _cleanup_json_ json_object *o = json_object_new_object(), *ro = json_object_new_object();
        if (!o || !ro)
                return NULL;
        if (jadd(ro, "max_concurrent", json_object_new_int64(s->rollout.max_concurrent)) < 0 ||
            jadd(ro, "max_failures", json_object_new_int64(s->rollout.max_failures)) < 0 ||
            jadd(ro, "soak_seconds", json_object_new_int64(s->rollout.soak_seconds)) < 0 ||
            jadd(ro, "timeout_seconds", json_object_new_int64(s->rollout.timeout_seconds)) < 0)
                return NULL;
        json_object *sel = labelsel_to_json(s->selector);
        if ((!sel && !s->selector->nothing) || json_object_object_add(o, "cluster_selector", sel) < 0 ||
            jadd(o, "name", json_object_new_string(s->name)) < 0 || jadd(o, "chart", chart_to_json(&s->chart)) < 0 ||
            jadd(o, "release_name", json_object_new_string(s->release_name)) < 0 ||
            jadd(o, "namespace", json_object_new_string(s->namespace)) < 0 ||
            jadd(o, "values_template", json_object_new_string(s->values_template)) < 0 ||
            jadd(o, "reconcile_strategy", json_object_new_string(addon_strategy_to_string(s->strategy))) < 0 ||
            jadd(o, "rollout", TAKE_PTR(ro)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static bool str_eq(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool chart_equal(const struct addon_chart *a, const struct addon_chart *b) {
        return str_eq(a->repository, b->repository) && str_eq(a->name, b->name) && str_eq(a->version, b->version);
}

bool addon_spec_same_output(const struct addon_spec *a, const struct addon_spec *b) {
        return labelsel_equal(a->selector, b->selector) && chart_equal(&a->chart, &b->chart) &&
               str_eq(a->release_name, b->release_name) && str_eq(a->namespace, b->namespace) &&
               str_eq(a->values_template, b->values_template) && a->strategy == b->strategy;
}

/* ---- clusters ------------------------------------------------------------------ */

void addon_cluster_from_model(const struct cluster *c, int64_t host_count, struct addon_cluster *out) {
        *out = (struct addon_cluster) {
                .id = c->id,
                .name = c->name,
                .base_domain = c->base_dns_domain,
                .machine_network_cidr = c->machine_network_cidr,
                .api_vip = c->api_vip,
                .ingress_vip = c->ingress_vip,
                .release_version = c->release_version,
                .labels = c->labels,
                .n_labels = c->n_labels,
                .host_count = host_count,
        };
}

json_object *addon_cluster_context(const struct addon_cluster *c) {
        _cleanup_json_ json_object *ctx = json_object_new_object(), *cl = json_object_new_object();
        if (!ctx || !cl)
                return NULL;
        if (jadd_str_opt(cl, "id", c->id) < 0 || jadd_str_opt(cl, "name", c->name) < 0 ||
            jadd(cl, "labels", labels_to_json(c->labels, c->n_labels)) < 0 ||
            jadd_str_opt(cl, "base_domain", c->base_domain) < 0 ||
            jadd_str_opt(cl, "machine_network_cidr", c->machine_network_cidr) < 0 ||
            jadd_str_opt(cl, "api_vip", c->api_vip) < 0 || jadd_str_opt(cl, "ingress_vip", c->ingress_vip) < 0 ||
            jadd_str_opt(cl, "release_version", c->release_version) < 0 ||
            jadd(cl, "host_count", json_object_new_int64(c->host_count)) < 0 || jadd(ctx, "cluster", TAKE_PTR(cl)) < 0)
                return NULL;
        return TAKE_PTR(ctx);
}

bool addon_selects(const struct addon_spec *s, const struct addon_cluster *c) {
        const char *keys[MODEL_MAX_LABELS], *values[MODEL_MAX_LABELS];
        size_t n = c->n_labels < MODEL_MAX_LABELS ? c->n_labels : MODEL_MAX_LABELS;
        for (size_t i = 0; i < n; i++) {
                keys[i] = c->labels[i].key;
                values[i] = c->labels[i].value;
        }
        return labelsel_matches(s->selector, keys, values, n);
}

/* ---- releases ------------------------------------------------------------------ */

void addon_content_free(struct addon_content *c) {
        chart_free(&c->chart);
        free(c->release_name);
        free(c->namespace);
        free(c->values);
        *c = (struct addon_content) { 0 };
}

bool addon_content_equal(const struct addon_content *a, const struct addon_content *b) {
        return chart_equal(&a->chart, &b->chart) && str_eq(a->release_name, b->release_name) &&
               str_eq(a->namespace, b->namespace) && str_eq(a->values, b->values);
}

static char *dup_opt(const char *s, bool *oom) {
        char *d = s ? strdup(s) : NULL;
        if (s && !d)
                *oom = true;
        return d;
}

static int addon_content_copy(const struct addon_content *src, struct addon_content *dst) {
        bool oom = false;
        *dst = (struct addon_content) {
                .chart = { dup_opt(src->chart.repository, &oom), dup_opt(src->chart.name, &oom),
                           dup_opt(src->chart.version, &oom) },
                .release_name = dup_opt(src->release_name, &oom),
                .namespace = dup_opt(src->namespace, &oom),
                .values = dup_opt(src->values, &oom),
        };
        if (oom) {
                addon_content_free(dst);
                return -ENOMEM;
        }
        return 0;
}

json_object *addon_content_to_json(const struct addon_content *c) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "chart", chart_to_json(&c->chart)) < 0 ||
            jadd(o, "release_name", json_object_new_string(c->release_name)) < 0 ||
            jadd(o, "namespace", json_object_new_string(c->namespace)) < 0 ||
            jadd(o, "values", json_object_new_string(c->values ? c->values : "")) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static int copy_member(json_object *o, const char *k, char **out) {
        json_object *v;
        if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_string))
                return -EINVAL;
        return (*out = strdup(json_object_get_string(v))) ? 0 : -ENOMEM;
}

int addon_content_from_json(json_object *o, struct addon_content *out) {
        json_object *ch = NULL;
        int r;
        *out = (struct addon_content) { 0 };
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "chart", &ch))
                return -EINVAL;
        if ((r = copy_member(ch, "repository", &out->chart.repository)) < 0 ||
            (r = copy_member(ch, "name", &out->chart.name)) < 0 ||
            (r = copy_member(ch, "version", &out->chart.version)) < 0 ||
            (r = copy_member(o, "release_name", &out->release_name)) < 0 ||
            (r = copy_member(o, "namespace", &out->namespace)) < 0 || (r = copy_member(o, "values", &out->values)) < 0) {
                addon_content_free(out);
                return r;
        }
        return 0;
}

/* Whether the rendered values are YAML whose one document is empty or a
 * mapping: what a chart's values.yaml must be; and whose aliases do not
 * expand past yscan_alias_cap() when Helm reads them. */
static int values_check(const char *v, size_t len, const char *cluster, char *err, size_t errlen) {
        yaml_parser_t p;
        yaml_event_t ev;
        struct yscan_aliases aliases;
        int r = 0, docs = 0, depth = 0;
        bool done = false;

        if (!yaml_parser_initialize(&p))
                return -ENOMEM;
        yscan_aliases_init(&aliases, len);
        yaml_parser_set_input_string(&p, (const unsigned char *) v, len);
        while (!done) {
                if (!yaml_parser_parse(&p, &ev)) {
                        r = errmsg(err, errlen, -EINVAL,
                                   "the values rendered for cluster %s are not YAML: %s at line %zu, column %zu", cluster,
                                   p.problem ? p.problem : "a syntax error", p.problem_mark.line + 1,
                                   p.problem_mark.column + 1);
                        break;
                }
                if ((r = yscan_aliases_event(&aliases, &ev)) < 0) {
                        if (r != -ENOMEM)
                                r = errmsg(err, errlen, r, "the values rendered for cluster %s at line %zu: %s",
                                           cluster, ev.start_mark.line + 1, aliases.why);
                        yaml_event_delete(&ev);
                        break;
                }
                switch (ev.type) {
                case YAML_DOCUMENT_START_EVENT:
                        if (++docs > 1)
                                r = errmsg(err, errlen, -EINVAL,
                                           "the values rendered for cluster %s hold more than one YAML document",
                                           cluster);
                        break;
                case YAML_SCALAR_EVENT:
                case YAML_SEQUENCE_START_EVENT:
                case YAML_ALIAS_EVENT:
                        if (depth == 0 &&
                            !(ev.type == YAML_SCALAR_EVENT && ev.data.scalar.length == 0 &&
                              ev.data.scalar.plain_implicit))
                                r = errmsg(err, errlen, -EINVAL,
                                           "the values rendered for cluster %s are not a YAML mapping (line %zu)",
                                           cluster, ev.start_mark.line + 1);
                        if (ev.type == YAML_SEQUENCE_START_EVENT)
                                depth++;
                        break;
                case YAML_MAPPING_START_EVENT:
                        depth++;
                        break;
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        depth--;
                        break;
                case YAML_STREAM_END_EVENT:
                        done = true;
                        break;
                case YAML_NO_EVENT:
                case YAML_STREAM_START_EVENT:
                case YAML_DOCUMENT_END_EVENT:
                        break;
                }
                yaml_event_delete(&ev);
                if (r < 0)
                        break;
        }
        yscan_aliases_done(&aliases);
        yaml_parser_delete(&p);
        return r;
}

int addon_render(const struct addon_spec *s, const struct addon_cluster *c, json_object *ctx,
                 struct addon_content *out, char *err, size_t errlen) {
        char sub[384];
        size_t len = 0;
        char *values = NULL;
        int r;

        *out = (struct addon_content) { 0 };
        if (err && errlen)
                err[0] = '\0';
        if ((r = mustache_render(s->tmpl, ctx, &values, &len, sub, sizeof sub)) < 0)
                return r == -ENOMEM ? r : errmsg(err, errlen, r, "rendering the values for cluster %s: %s", c->name, sub);
        if (len > ADDON_MAX_VALUES) {
                free(values);
                return errmsg(err, errlen, -EINVAL, "the values rendered for cluster %s are %zu bytes, at most %d", c->name,
                              len, ADDON_MAX_VALUES);
        }
        if ((r = values_check(values, len, c->name, err, errlen)) < 0) {
                free(values);
                return r;
        }
        struct addon_content tmp = {
                .chart = s->chart,
                .release_name = s->release_name,
                .namespace = s->namespace,
                .values = values,
        };
        r = addon_content_copy(&tmp, out);
        free(values);
        return r;
}

/* ---- remembering what was rendered --------------------------------------------- */

static uint64_t fnv(uint64_t h, const char *s) {
        for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
                h = (h ^ *p) * UINT64_C(1099511628211);
        /* A separator that no string holds, and NULL apart from "". */
        return (h ^ (s ? 0xff : 0xfe)) * UINT64_C(1099511628211);
}

/* A 64-bit digest of every fact addon_cluster_context() shows (FNV-1a):
 * equal facts, equal digests. */
static uint64_t addon_cluster_digest(const struct addon_cluster *c) {
        uint64_t h = UINT64_C(14695981039346656037);
        const char *f[] = { c->id, c->name, c->base_domain, c->machine_network_cidr, c->api_vip, c->ingress_vip,
                            c->release_version };
        char n[32];
        for (size_t i = 0; i < sizeof f / sizeof *f; i++)
                h = fnv(h, f[i]);
        snprintf(n, sizeof n, "%lld/%zu", (long long) c->host_count, c->n_labels);
        h = fnv(h, n);
        for (size_t i = 0; i < c->n_labels; i++)
                h = fnv(fnv(h, c->labels[i].key), c->labels[i].value);
        return h;
}

struct memo_entry {
        char *key;          /* "proxy_id/generation/cluster_id"; NULL: a free slot */
        uint64_t hash;      /* of key */
        uint64_t facts;     /* addon_cluster_digest when it was rendered */
        char *content;
        bool used;          /* since the last sweep */
};

struct addon_memo {
        struct memo_entry *v;
        size_t cap;         /* a power of two */
        size_t n;
};

struct addon_memo *addon_memo_new(void) {
        return calloc(1, sizeof(struct addon_memo));
}

void addon_memo_free(struct addon_memo *m) {
        if (!m)
                return;
        for (size_t i = 0; i < m->cap; i++) {
                free(m->v[i].key);
                free(m->v[i].content);
        }
        free(m->v);
        free(m);
}

static struct memo_entry *memo_slot(struct memo_entry *v, size_t cap, const char *key, uint64_t hash) {
        for (size_t i = hash & (cap - 1);; i = (i + 1) & (cap - 1))
                if (!v[i].key || (v[i].hash == hash && strcmp(v[i].key, key) == 0))
                        return &v[i];
}

/* Room for one more entry (at most half full). */
static int memo_grow(struct addon_memo *m) {
        if (m->cap && (m->n + 1) * 2 <= m->cap)
                return 0;
        size_t cap = m->cap ? m->cap * 2 : 256;
        struct memo_entry *v = calloc(cap, sizeof *v);
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < m->cap; i++)
                if (m->v[i].key)
                        *memo_slot(v, cap, m->v[i].key, m->v[i].hash) = m->v[i];
        free(m->v);
        m->v = v;
        m->cap = cap;
        return 0;
}

void addon_memo_sweep(struct addon_memo *m) {
        if (!m || !m->cap)
                return;
        struct memo_entry *old = m->v;
        size_t cap = m->cap;
        m->v = calloc(cap, sizeof *m->v);
        if (!m->v) {
                m->v = old; /* keep all: a later sweep will do */
                return;
        }
        m->n = 0;
        for (size_t i = 0; i < cap; i++) {
                if (!old[i].key)
                        continue;
                if (!old[i].used) {
                        free(old[i].key);
                        free(old[i].content);
                        continue;
                }
                old[i].used = false;
                *memo_slot(m->v, cap, old[i].key, old[i].hash) = old[i];
                m->n++;
        }
        free(old);
}

int addon_want(struct addon_memo *m, const char *proxy_id, int64_t gen, const struct addon_spec *s,
               const struct addon_cluster *c, json_object **ctx, const char **content, char *err, size_t errlen) {
        char key[256];
        uint64_t facts = addon_cluster_digest(c);
        int r;

        *content = NULL;
        snprintf(key, sizeof key, "%s/%lld/%s", proxy_id, (long long) gen, c->id);
        uint64_t hash = fnv(UINT64_C(14695981039346656037), key);
        struct memo_entry *e = m->cap ? memo_slot(m->v, m->cap, key, hash) : NULL;
        if (e && e->key && e->facts == facts) {
                e->used = true;
                *content = e->content;
                return 0;
        }
        if (!*ctx && !(*ctx = addon_cluster_context(c)))
                return -ENOMEM;
        struct addon_content want;
        if ((r = addon_render(s, c, *ctx, &want, err, errlen)) < 0)
                return r;
        json_object *o = addon_content_to_json(&want);
        addon_content_free(&want);
        const char *t = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                          : NULL;
        char *text = t ? strdup(t) : NULL;
        json_object_put(o);
        if (!text)
                return -ENOMEM;
        if (!e || !e->key) {
                char *k = strdup(key);
                if (!k || memo_grow(m) < 0) {
                        free(k);
                        free(text);
                        return -ENOMEM;
                }
                e = memo_slot(m->v, m->cap, key, hash);
                *e = (struct memo_entry) { .key = k, .hash = hash };
                m->n++;
        }
        free(e->content);
        e->content = text;
        e->facts = facts;
        e->used = true;
        *content = text;
        return 0;
}

/* ---- the HelmChart ----------------------------------------------------------- */

static int yaml_write(void *data, unsigned char *buf, size_t size) {
        return growbuf_append(data, buf, size, ADDON_MAX_VALUES * 2 + 65536, 4096) == 0;
}

static bool emit(yaml_emitter_t *e, yaml_event_t *ev) {
        return yaml_emitter_emit(e, ev) != 0;
}

static bool scalar(yaml_emitter_t *e, const char *s, yaml_scalar_style_t style) {
        yaml_event_t ev;
        return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *) s, (int) strlen(s), 1, 1, style) &&
               emit(e, &ev);
}

static bool mapping(yaml_emitter_t *e, bool start) {
        yaml_event_t ev;
        if (start)
                return yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) && emit(e, &ev);
        return yaml_mapping_end_event_initialize(&ev) && emit(e, &ev);
}

/* Values double-quoted: a plain "n", "on" or "null" would read back as
 * YAML 1.1's boolean or null. */
static bool pair(yaml_emitter_t *e, const char *k, const char *v) {
        return scalar(e, k, YAML_PLAIN_SCALAR_STYLE) && scalar(e, v, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

char *addon_helmchart_yaml(const struct addon_content *c, const char *proxy, int64_t revision) {
        struct growbuf b = { 0 };
        yaml_emitter_t e;
        yaml_event_t ev;
        char rev[32];
        bool ok;

        snprintf(rev, sizeof rev, "%lld", (long long) revision);
        if (!yaml_emitter_initialize(&e))
                return NULL;
        yaml_emitter_set_output(&e, yaml_write, &b);
        yaml_emitter_set_unicode(&e, 1);
        yaml_emitter_set_width(&e, -1);
        ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && emit(&e, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && emit(&e, &ev) && mapping(&e, true) &&
             pair(&e, "apiVersion", HELMCHART_API_VERSION) && pair(&e, "kind", HELMCHART_KIND) &&
             scalar(&e, "metadata", YAML_PLAIN_SCALAR_STYLE) && mapping(&e, true) &&
             pair(&e, "name", c->release_name) && pair(&e, "namespace", c->namespace) &&
             scalar(&e, "labels", YAML_PLAIN_SCALAR_STYLE) && mapping(&e, true) &&
             pair(&e, "app.kubernetes.io/managed-by", "muster") && pair(&e, "muster.io/addon-proxy", proxy) &&
             scalar(&e, "muster.io/addon-revision", YAML_PLAIN_SCALAR_STYLE) &&
             scalar(&e, rev, YAML_DOUBLE_QUOTED_SCALAR_STYLE) && mapping(&e, false) && mapping(&e, false) &&
             scalar(&e, "spec", YAML_PLAIN_SCALAR_STYLE) && mapping(&e, true) && pair(&e, "chart", c->chart.name) &&
             pair(&e, "repo", c->chart.repository) && scalar(&e, "version", YAML_PLAIN_SCALAR_STYLE) &&
             scalar(&e, c->chart.version, YAML_DOUBLE_QUOTED_SCALAR_STYLE) &&
             pair(&e, "targetNamespace", c->namespace) &&
             scalar(&e, "valuesContent", YAML_PLAIN_SCALAR_STYLE) &&
             scalar(&e, c->values ? c->values : "", YAML_LITERAL_SCALAR_STYLE) && mapping(&e, false) &&
             mapping(&e, false) && yaml_document_end_event_initialize(&ev, 1) && emit(&e, &ev) &&
             yaml_stream_end_event_initialize(&ev) && emit(&e, &ev) && yaml_emitter_flush(&e);
        yaml_emitter_delete(&e);
        if (!ok || !b.data) {
                free(b.data);
                return NULL;
        }
        return b.data;
}

int addon_helmchart_file(const char *proxy, char *buf, size_t len) {
        int n = snprintf(buf, len, ADDON_FILE_PREFIX "%s.yaml", proxy);
        return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

/* ---- the staged rollout ------------------------------------------------------ */

size_t addon_rollout_slots(const struct addon_rollout *ro, size_t in_flight, size_t failures, bool *pause) {
        *pause = ro->max_failures > 0 && failures >= (size_t) ro->max_failures;
        if (*pause)
                return 0;
        if (ro->max_concurrent <= 0)
                return SIZE_MAX;
        return in_flight >= (size_t) ro->max_concurrent ? 0 : (size_t) ro->max_concurrent - in_flight;
}

void addon_track(const struct addon_track_in *in, struct addon_track_out *out, char *msg, size_t msglen) {
        msg[0] = '\0';
        *out = (struct addon_track_out) { .status = in->status };
        switch (in->status) {
        case ADDON_PENDING:
        case ADDON_FAILED:
                return; /* the service moves these itself */
        case ADDON_ROLLING:
        case ADDON_REMOVING:
                break;
        case ADDON_APPLIED:
                if (in->now_s - in->applied_s < in->ro->soak_seconds) {
                        if (in->disconnected_host) {
                                out->status = ADDON_FAILED;
                                snprintf(msg, msglen, "host %s disconnected %lld s into the %lld s soak",
                                         in->disconnected_host, (long long) (in->now_s - in->applied_s),
                                         (long long) in->ro->soak_seconds);
                                return;
                        }
                        out->in_flight = true;
                        snprintf(msg, msglen, "soaking: %lld of %lld s", (long long) (in->now_s - in->applied_s),
                                 (long long) in->ro->soak_seconds);
                }
                return;
        case _ADDON_STATUS_MAX:
        case _ADDON_STATUS_INVALID:
                return;
        }
        bool removing = in->status == ADDON_REMOVING;
        if (in->payload_revision > 0 && in->hosts > 0 && in->min_applied >= in->payload_revision) {
                out->status = removing ? ADDON_REMOVING : ADDON_APPLIED;
                out->in_flight = !removing && in->ro->soak_seconds > 0;
                out->removed = removing;
                if (removing)
                        snprintf(msg, msglen, "removed by payload revision %lld", (long long) in->payload_revision);
                else if (out->in_flight)
                        snprintf(msg, msglen, "soaking: 0 of %lld s", (long long) in->ro->soak_seconds);
                return;
        }
        if (in->payload_revision > 0 && in->failed_revision >= in->payload_revision) {
                out->status = removing ? ADDON_REMOVING : ADDON_FAILED;
                snprintf(msg, msglen, "host %s failed to apply payload revision %lld: %s",
                         in->failed_host ? in->failed_host : "?", (long long) in->failed_revision,
                         in->failed_why ? in->failed_why : "no reason given");
                return;
        }
        out->in_flight = !removing;
        if (in->now_s - in->started_s >= in->ro->timeout_seconds) {
                out->status = removing ? ADDON_REMOVING : ADDON_FAILED;
                out->in_flight = false;
                if (in->hosts <= 0)
                        snprintf(msg, msglen, "no host of the cluster reported within %lld s",
                                 (long long) in->ro->timeout_seconds);
                else
                        snprintf(msg, msglen, "host %s has not applied payload revision %lld within %lld s",
                                 in->lagging_host ? in->lagging_host : "?", (long long) in->payload_revision,
                                 (long long) in->ro->timeout_seconds);
                return;
        }
        if (in->payload_revision > 0)
                snprintf(msg, msglen, "waiting for the cluster's hosts to apply payload revision %lld",
                         (long long) in->payload_revision);
        else
                snprintf(msg, msglen, "waiting for a payload revision");
}
