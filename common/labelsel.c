/* Kubernetes label selectors (labelsel.h): the validation rules of
 * k8s.io/apimachinery's IsQualifiedName and IsValidLabelValue, and the
 * semantics of metav1.LabelSelectorAsSelector, in plain C over json-c. */
#include "labelsel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "json-cleanup.h"

#define NAME_MAX_LEN 63
#define PREFIX_MAX_LEN 253
/* How much of a client's string goes into a message. */
#define SHOW_MAX 80
#define SHOWN(s) (int) (strlen(s) > SHOW_MAX ? SHOW_MAX - 3 : strlen(s)), (s), (strlen(s) > SHOW_MAX ? "..." : "")

const char *labelsel_op_to_string(enum labelsel_op op) {
        switch (op) {
        case LABELSEL_IN: return "In";
        case LABELSEL_NOT_IN: return "NotIn";
        case LABELSEL_EXISTS: return "Exists";
        case LABELSEL_DOES_NOT_EXIST: return "DoesNotExist";
        case _LABELSEL_OP_MAX: break;
        }
        return NULL;
}

static int op_from_string(const char *s) {
        for (int op = 0; op < _LABELSEL_OP_MAX; op++)
                if (strcmp(s, labelsel_op_to_string(op)) == 0)
                        return op;
        return -1;
}

/* ASCII only: the rules are byte rules, whatever the locale. */
static bool is_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
static bool is_lower_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A name (or non-empty value): ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63. */
static bool name_valid(const char *s, size_t len, const char *what, char *why, size_t whylen) {
        if (len > NAME_MAX_LEN)
                return errmsg(why, whylen, false, "%s must be no more than 63 characters (it has %zu)", what, len);
        bool ok = is_alnum(s[0]) && is_alnum(s[len - 1]);
        for (size_t i = 1; ok && i + 1 < len; i++)
                ok = is_alnum(s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.';
        if (!ok)
                return errmsg(why, whylen, false,
                                "%s must consist of alphanumeric characters, '-', '_' or '.', "
                                "and must start and end with an alphanumeric character",
                                what);
        return true;
}

/* A lower-case RFC 1123 subdomain: [a-z0-9]([-a-z0-9]*[a-z0-9])? labels joined by '.'. */
static bool prefix_valid(const char *s, size_t len, char *why, size_t whylen) {
        if (len > PREFIX_MAX_LEN)
                return errmsg(why, whylen, false, "prefix part must be no more than 253 characters (it has %zu)", len);
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
                if (i < len && s[i] != '.') {
                        if (!is_lower_alnum(s[i]) && s[i] != '-')
                                goto bad;
                        continue;
                }
                /* a label is s[start, i) */
                if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1]))
                        goto bad;
                start = i + 1;
        }
        return true;
bad:
        return errmsg(why, whylen, false,
                        "prefix part must be a lower-case RFC 1123 subdomain: lower-case alphanumeric "
                        "characters, '-' or '.', each part starting and ending with an alphanumeric character");
}

bool labelsel_key_valid(const char *k, char *why, size_t whylen) {
        if (!k)
                return errmsg(why, whylen, false, "key is missing");
        const char *slash = strchr(k, '/');
        const char *name = k;
        if (slash) {
                if (strchr(slash + 1, '/'))
                        return errmsg(why, whylen, false, "a key has at most one '/' (an optional prefix, '/', a name)");
                if (slash == k)
                        return errmsg(why, whylen, false, "prefix part must be non-empty");
                if (!prefix_valid(k, (size_t) (slash - k), why, whylen))
                        return false;
                name = slash + 1;
        }
        if (!*name)
                return errmsg(why, whylen, false, "name part must be non-empty");
        return name_valid(name, strlen(name), "name part", why, whylen);
}

bool labelsel_value_valid(const char *v, char *why, size_t whylen) {
        if (!v)
                return errmsg(why, whylen, false, "value is missing");
        if (!*v)
                return true;
        return name_valid(v, strlen(v), "a value", why, whylen);
}

static void expr_clear(struct labelsel_expr *e) {
        free(e->key);
        for (size_t i = 0; i < e->nvalues; i++)
                free(e->values[i]);
        free(e->values);
}

void labelsel_free(struct labelsel *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->nlabels; i++) {
                free(s->labels[i].key);
                free(s->labels[i].value);
        }
        free(s->labels);
        for (size_t i = 0; i < s->nexprs; i++)
                expr_clear(&s->exprs[i]);
        free(s->exprs);
        free(s);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct labelsel *, labelsel_free)

/* A JSON string as a C string; NULL if it is not one or holds a NUL. */
static const char *json_cstr(json_object *o) {
        if (!json_object_is_type(o, json_type_string))
                return NULL;
        const char *s = json_object_get_string(o);
        if (strlen(s) != (size_t) json_object_get_string_len(o))
                return NULL;
        return s;
}

static int cmp_label(const void *a, const void *b) {
        return strcmp(((const struct labelsel_label *) a)->key, ((const struct labelsel_label *) b)->key);
}
static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int parse_labels(struct labelsel *s, json_object *o, char *err, size_t errlen) {
        if (!o)
                return 0;
        if (!json_object_is_type(o, json_type_object))
                return errmsg(err, errlen, -EINVAL, "match_labels: must be an object of key: value strings");
        size_t n = (size_t) json_object_object_length(o);
        if (n > LABELSEL_MAX_LABELS)
                return errmsg(err, errlen, -E2BIG, "match_labels: %zu labels, at most %d are allowed", n,
                              LABELSEL_MAX_LABELS);
        s->labels = calloc(n ? n : 1, sizeof *s->labels);
        if (!s->labels)
                return -ENOMEM;
        char why[200];
        json_object_object_foreach(o, k, v) {
                if (!labelsel_key_valid(k, why, sizeof why))
                        return errmsg(err, errlen, -EINVAL, "match_labels: key \"%.*s%s\": %s", SHOWN(k), why);
                const char *value = json_cstr(v);
                if (!value)
                        return errmsg(err, errlen, -EINVAL, "match_labels.%s: the value must be a string", k);
                if (!labelsel_value_valid(value, why, sizeof why))
                        return errmsg(err, errlen, -EINVAL, "match_labels.%s: value \"%.*s%s\": %s", k,
                                      SHOWN(value), why);
                struct labelsel_label *l = &s->labels[s->nlabels];
                l->key = strdup(k);
                l->value = strdup(value);
                s->nlabels++;
                if (!l->key || !l->value)
                        return -ENOMEM;
        }
        qsort(s->labels, s->nlabels, sizeof *s->labels, cmp_label);
        return 0;
}

/* Sort and drop repeats: the values are a set. */
static void values_normalize(struct labelsel_expr *e) {
        if (e->nvalues < 2)
                return;
        qsort(e->values, e->nvalues, sizeof *e->values, cmp_str);
        size_t w = 1;
        for (size_t i = 1; i < e->nvalues; i++) {
                if (strcmp(e->values[i], e->values[w - 1]) == 0)
                        free(e->values[i]);
                else
                        e->values[w++] = e->values[i];
        }
        e->nvalues = w;
}

static int parse_values(struct labelsel_expr *e, json_object *o, size_t idx, char *err, size_t errlen) {
        if (!o)
                return 0;
        if (!json_object_is_type(o, json_type_array))
                return errmsg(err, errlen, -EINVAL, "match_expressions[%zu].values: must be an array of strings", idx);
        size_t n = json_object_array_length(o);
        if (n > LABELSEL_MAX_VALUES)
                return errmsg(err, errlen, -E2BIG, "match_expressions[%zu].values: %zu values, at most %d are allowed",
                              idx, n, LABELSEL_MAX_VALUES);
        e->values = calloc(n ? n : 1, sizeof *e->values);
        if (!e->values)
                return -ENOMEM;
        char why[200];
        for (size_t j = 0; j < n; j++) {
                const char *v = json_cstr(json_object_array_get_idx(o, j));
                if (!v)
                        return errmsg(err, errlen, -EINVAL, "match_expressions[%zu].values[%zu]: must be a string",
                                      idx, j);
                if (!labelsel_value_valid(v, why, sizeof why))
                        return errmsg(err, errlen, -EINVAL, "match_expressions[%zu].values[%zu]: \"%.*s%s\": %s", idx,
                                      j, SHOWN(v), why);
                e->values[j] = strdup(v);
                if (!e->values[j])
                        return -ENOMEM;
                e->nvalues++;
        }
        values_normalize(e);
        return 0;
}

/* The requirement's members, each at most once, nothing else. */
static int expr_members(json_object *o, size_t idx, json_object **key, json_object **op, json_object **values,
                        char *err, size_t errlen) {
        if (!json_object_is_type(o, json_type_object))
                return errmsg(err, errlen, -EINVAL,
                              "match_expressions[%zu]: must be an object with key, operator and values", idx);
        *key = *op = *values = NULL;
        json_object_object_foreach(o, k, v) {
                if (strcmp(k, "key") == 0)
                        *key = v;
                else if (strcmp(k, "operator") == 0)
                        *op = v;
                else if (strcmp(k, "values") == 0)
                        *values = v;
                else
                        return errmsg(err, errlen, -EINVAL,
                                      "match_expressions[%zu]: unknown member \"%.*s%s\" (an expression has key, "
                                      "operator and values)",
                                      idx, SHOWN(k));
        }
        return 0;
}

static int parse_expr(struct labelsel_expr *e, json_object *o, size_t idx, char *err, size_t errlen) {
        json_object *jkey = NULL, *jop = NULL, *jvalues = NULL;
        int r = expr_members(o, idx, &jkey, &jop, &jvalues, err, errlen);
        if (r < 0)
                return r;
        char why[200];
        const char *key = json_cstr(jkey);
        if (!key)
                return errmsg(err, errlen, -EINVAL, "match_expressions[%zu].key: must be a string", idx);
        if (!labelsel_key_valid(key, why, sizeof why))
                return errmsg(err, errlen, -EINVAL, "match_expressions[%zu].key: \"%.*s%s\": %s", idx, SHOWN(key), why);
        const char *ops = json_cstr(jop);
        if (!ops)
                return errmsg(err, errlen, -EINVAL,
                              "match_expressions[%zu].operator: must be one of In, NotIn, Exists, DoesNotExist", idx);
        int op = op_from_string(ops);
        if (op < 0)
                return errmsg(err, errlen, -EINVAL,
                              "match_expressions[%zu].operator: \"%.*s%s\" is not one of In, NotIn, Exists, "
                              "DoesNotExist",
                              idx, SHOWN(ops));
        e->op = (enum labelsel_op) op;
        e->key = strdup(key);
        if (!e->key)
                return -ENOMEM;
        r = parse_values(e, jvalues, idx, err, errlen);
        if (r < 0)
                return r;
        bool with_values = e->op == LABELSEL_IN || e->op == LABELSEL_NOT_IN;
        if (with_values && e->nvalues == 0)
                return errmsg(err, errlen, -EINVAL, "match_expressions[%zu].values: %s needs at least one value", idx,
                              ops);
        if (!with_values && e->nvalues > 0)
                return errmsg(err, errlen, -EINVAL, "match_expressions[%zu].values: %s takes no values", idx, ops);
        return 0;
}

static int parse_exprs(struct labelsel *s, json_object *o, char *err, size_t errlen) {
        if (!o)
                return 0;
        if (!json_object_is_type(o, json_type_array))
                return errmsg(err, errlen, -EINVAL, "match_expressions: must be an array of expressions");
        size_t n = json_object_array_length(o);
        if (n > LABELSEL_MAX_EXPRESSIONS)
                return errmsg(err, errlen, -E2BIG, "match_expressions: %zu expressions, at most %d are allowed", n,
                              LABELSEL_MAX_EXPRESSIONS);
        s->exprs = calloc(n ? n : 1, sizeof *s->exprs);
        if (!s->exprs)
                return -ENOMEM;
        s->nexprs = n; /* zeroed entries free cleanly if one fails */
        for (size_t i = 0; i < n; i++) {
                int r = parse_expr(&s->exprs[i], json_object_array_get_idx(o, i), i, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

int labelsel_parse(json_object *o, struct labelsel **out, char *err, size_t errlen) {
        _cleanup_(labelsel_freep) struct labelsel *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        if (!o) {
                s->nothing = true;
                *out = TAKE_PTR(s);
                return 0;
        }
        if (!json_object_is_type(o, json_type_object))
                return errmsg(err, errlen, -EINVAL, "selector: must be an object or null");
        json_object *labels = NULL, *exprs = NULL;
        json_object_object_foreach(o, k, v) {
                if (strcmp(k, "match_labels") == 0)
                        labels = v;
                else if (strcmp(k, "match_expressions") == 0)
                        exprs = v;
                else
                        return errmsg(err, errlen, -EINVAL,
                                      "selector: unknown member \"%.*s%s\" (a selector has match_labels and "
                                      "match_expressions)",
                                      SHOWN(k));
        }
        /* The cheap refusals first: a huge list is refused before any of it is read. */
        if (exprs && json_object_is_type(exprs, json_type_array) &&
            json_object_array_length(exprs) > LABELSEL_MAX_EXPRESSIONS)
                return parse_exprs(s, exprs, err, errlen);
        int r = parse_labels(s, labels, err, errlen);
        if (r < 0)
                return r;
        r = parse_exprs(s, exprs, err, errlen);
        if (r < 0)
                return r;
        *out = TAKE_PTR(s);
        return 0;
}

/* Labels are looked up through one function so arrays and JSON share the rules. */
typedef const char *(*label_get_fn)(const void *ctx, const char *key);

struct label_arrays {
        const char *const *keys;
        const char *const *values;
        size_t n;
};

static const char *arrays_get(const void *ctx, const char *key) {
        const struct label_arrays *a = ctx;
        for (size_t i = 0; i < a->n; i++)
                if (a->keys[i] && strcmp(a->keys[i], key) == 0)
                        return a->values[i] ? a->values[i] : "";
        return NULL;
}

static const char *json_get(const void *ctx, const char *key) {
        json_object *v;
        if (!ctx || !json_object_object_get_ex((json_object *) ctx, key, &v))
                return NULL;
        return json_cstr(v);
}

static bool expr_matches(const struct labelsel_expr *e, const char *v) {
        bool in = v && e->nvalues && bsearch(&v, e->values, e->nvalues, sizeof *e->values, cmp_str);
        switch (e->op) {
        case LABELSEL_IN: return in;
        case LABELSEL_NOT_IN: return !in; /* an absent key is not in any set */
        case LABELSEL_EXISTS: return v != NULL;
        case LABELSEL_DOES_NOT_EXIST: return v == NULL;
        case _LABELSEL_OP_MAX: break;
        }
        return false;
}

static bool matches_with(const struct labelsel *s, label_get_fn get, const void *ctx) {
        if (!s || s->nothing)
                return false;
        for (size_t i = 0; i < s->nlabels; i++) {
                const char *v = get(ctx, s->labels[i].key);
                if (!v || strcmp(v, s->labels[i].value) != 0)
                        return false;
        }
        for (size_t i = 0; i < s->nexprs; i++)
                if (!expr_matches(&s->exprs[i], get(ctx, s->exprs[i].key)))
                        return false;
        return true;
}

bool labelsel_matches(const struct labelsel *s, const char *const *keys, const char *const *values, size_t n) {
        struct label_arrays a = {keys, values, n};
        return matches_with(s, arrays_get, &a);
}

bool labelsel_matches_json(const struct labelsel *s, json_object *labels) {
        return matches_with(s, json_get, labels);
}

/* json_object_object_add that takes v's reference even when it fails. */
static bool add(json_object *o, const char *k, json_object *v) {
        if (!v)
                return false;
        if (json_object_object_add(o, k, v) < 0) {
                json_object_put(v);
                return false;
        }
        return true;
}

static json_object *expr_to_json(const struct labelsel_expr *e) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *values = json_object_new_array();
        if (!o || !add(o, "key", json_object_new_string(e->key)) ||
            !add(o, "operator", json_object_new_string(labelsel_op_to_string(e->op))) || !add(o, "values", values))
                return NULL;
        for (size_t i = 0; i < e->nvalues; i++) {
                json_object *v = json_object_new_string(e->values[i]);
                if (!v || json_object_array_add(values, v) < 0) {
                        json_object_put(v);
                        return NULL;
                }
        }
        return TAKE_PTR(o);
}

json_object *labelsel_to_json(const struct labelsel *s) {
        if (!s || s->nothing)
                return NULL;
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *labels = json_object_new_object();
        json_object *exprs = json_object_new_array();
        if (!o || !add(o, "match_labels", labels) || !add(o, "match_expressions", exprs)) {
                json_object_put(exprs);
                return NULL;
        }
        for (size_t i = 0; i < s->nlabels; i++)
                if (!add(labels, s->labels[i].key, json_object_new_string(s->labels[i].value)))
                        return NULL;
        for (size_t i = 0; i < s->nexprs; i++) {
                json_object *e = expr_to_json(&s->exprs[i]);
                if (!e || json_object_array_add(exprs, e) < 0) {
                        json_object_put(e);
                        return NULL;
                }
        }
        return TAKE_PTR(o);
}

static bool expr_equal(const struct labelsel_expr *a, const struct labelsel_expr *b) {
        if (a->op != b->op || strcmp(a->key, b->key) != 0 || a->nvalues != b->nvalues)
                return false;
        for (size_t i = 0; i < a->nvalues; i++)
                if (strcmp(a->values[i], b->values[i]) != 0)
                        return false;
        return true;
}

bool labelsel_equal(const struct labelsel *a, const struct labelsel *b) {
        if (!a || !b)
                return a == b;
        if (a->nothing != b->nothing || a->nlabels != b->nlabels || a->nexprs != b->nexprs)
                return false;
        for (size_t i = 0; i < a->nlabels; i++)
                if (strcmp(a->labels[i].key, b->labels[i].key) != 0 ||
                    strcmp(a->labels[i].value, b->labels[i].value) != 0)
                        return false;
        for (size_t i = 0; i < a->nexprs; i++)
                if (!expr_equal(&a->exprs[i], &b->exprs[i]))
                        return false;
        return true;
}

/* ---- kubectl's text form ------------------------------------------------------ */

struct text_parse {
        const char *text, *p;
        char *err;
        size_t errlen;
};

static int text_fail(struct text_parse *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int text_fail(struct text_parse *t, const char *fmt, ...) {
        if (t->err && t->errlen) {
                char why[256];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(why, sizeof why, fmt, ap);
                va_end(ap);
                snprintf(t->err, t->errlen, "%s (at byte %td of \"%.*s%s\")", why, t->p - t->text,
                         SHOWN(t->text));
        }
        return -EINVAL;
}

static void text_blanks(struct text_parse *t) {
        while (*t->p == ' ' || *t->p == '\t')
                t->p++;
}

/* A key or value word: what is not a blank or one of the operators' characters. */
static size_t text_word(const char *p) {
        return strcspn(p, " \t=!,()<>");
}

static int text_add_value(struct text_parse *t, json_object *values, const char *v, size_t n) {
        char why[160], *s = strndup(v, n);
        if (!s)
                return -ENOMEM;
        if (!labelsel_value_valid(s, why, sizeof why)) {
                t->p = v;
                int r = text_fail(t, "label value \"%.*s%s\": %s", SHOWN(s), why);
                free(s);
                return r;
        }
        json_object *js = json_object_new_string(s);
        free(s);
        if (!js || json_object_array_add(values, js) < 0) {
                json_object_put(js);
                return -ENOMEM;
        }
        return 0;
}

/* "(a, b, c)" at t->p into values. */
static int text_set(struct text_parse *t, json_object *values) {
        text_blanks(t);
        if (*t->p != '(')
                return text_fail(t, "'(' is wanted after in or notin");
        t->p++;
        text_blanks(t);
        if (*t->p == ')')
                return text_fail(t, "in and notin need at least one value");
        for (;;) {
                text_blanks(t);
                const char *v = t->p;
                size_t n = text_word(v);
                t->p += n;
                int r = text_add_value(t, values, v, n);
                if (r < 0)
                        return r;
                text_blanks(t);
                if (*t->p == ')') {
                        t->p++;
                        return 0;
                }
                if (*t->p != ',')
                        return text_fail(t, "',' or ')' is wanted in a set of values");
                t->p++;
        }
}

/* One requirement at t->p into exprs. */
static int text_requirement(struct text_parse *t, json_object *exprs) {
        _cleanup_json_ json_object *e = json_object_new_object(), *values = json_object_new_array();
        if (!e || !values)
                return -ENOMEM;
        text_blanks(t);
        bool neg = *t->p == '!';
        if (neg) {
                t->p++;
                text_blanks(t);
        }
        const char *k = t->p;
        size_t kn = text_word(k);
        if (kn == 0)
                return text_fail(t, "a label key is wanted");
        _cleanup_free_ char *key = strndup(k, kn);
        char why[160];
        if (!key)
                return -ENOMEM;
        if (!labelsel_key_valid(key, why, sizeof why))
                return text_fail(t, "label key \"%.*s%s\": %s", SHOWN(key), why);
        t->p += kn;
        text_blanks(t);
        const char *op;
        int r = 0;
        if (neg)
                op = "DoesNotExist";
        else if (!*t->p || *t->p == ',')
                op = "Exists";
        else if (*t->p == '=' || (t->p[0] == '!' && t->p[1] == '=')) {
                op = *t->p == '!' ? "NotIn" : "In";
                t->p += *t->p == '!' || t->p[1] == '=' ? 2 : 1;
                text_blanks(t);
                const char *v = t->p;
                size_t n = text_word(v);
                t->p += n;
                r = text_add_value(t, values, v, n);
        } else if (*t->p == '<' || *t->p == '>')
                return text_fail(t, "the operators < and > are not supported");
        else if (strncmp(t->p, "in", 2) == 0 && text_word(t->p) == 2) {
                op = "In";
                t->p += 2;
                r = text_set(t, values);
        } else if (strncmp(t->p, "notin", 5) == 0 && text_word(t->p) == 5) {
                op = "NotIn";
                t->p += 5;
                r = text_set(t, values);
        } else
                return text_fail(t, "=, ==, !=, in or notin is wanted after the key");
        if (r < 0)
                return r;
        if (json_object_object_add(e, "key", json_object_new_string(key)) < 0 ||
            json_object_object_add(e, "operator", json_object_new_string(op)) < 0)
                return -ENOMEM;
        if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0)
                json_object_object_add(e, "values", TAKE_PTR(values));
        if (json_object_array_length(exprs) >= LABELSEL_MAX_EXPRESSIONS)
                return -E2BIG;
        if (json_object_array_add(exprs, e) < 0)
                return -ENOMEM;
        e = NULL;
        return 0;
}

int labelsel_parse_text(const char *text, struct labelsel **out, char *err, size_t errlen) {
        struct text_parse t = { text, text, err, errlen };
        if (err && errlen)
                err[0] = '\0';
        if (strnlen(text, LABELSEL_MAX_TEXT + 1) > LABELSEL_MAX_TEXT)
                return errmsg(err, errlen, -E2BIG, "a selector is at most %d bytes", LABELSEL_MAX_TEXT);
        _cleanup_json_ json_object *sel = json_object_new_object(), *exprs = json_object_new_array();
        if (!sel || !exprs)
                return -ENOMEM;
        text_blanks(&t);
        while (*t.p) {
                int r = text_requirement(&t, exprs);
                if (r == -E2BIG)
                        return errmsg(err, errlen, r, "a selector has at most %d requirements",
                                      LABELSEL_MAX_EXPRESSIONS);
                if (r < 0)
                        return r;
                text_blanks(&t);
                if (*t.p == ',') {
                        t.p++;
                        text_blanks(&t);
                        if (!*t.p)
                                return text_fail(&t, "a requirement is wanted after ','");
                } else if (*t.p)
                        return text_fail(&t, "',' is wanted between requirements");
        }
        json_object_object_add(sel, "match_expressions", TAKE_PTR(exprs));
        return labelsel_parse(sel, out, err, errlen);
}
