/* Kubernetes label selectors (metav1.LabelSelector) for an add-on proxy's
 * cluster_selector: key and value validation exactly as Kubernetes does it,
 * parsing from JSON under limits, matching, and a canonical JSON form for
 * storage. Pure: no I/O, no logging. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Limits on what a client controls; a larger selector is -E2BIG. */
#define LABELSEL_MAX_LABELS 1000      /* match_labels entries */
#define LABELSEL_MAX_EXPRESSIONS 1000 /* match_expressions entries */
#define LABELSEL_MAX_VALUES 1000      /* values of one expression */
#define LABELSEL_MAX_TEXT 16384       /* bytes of a selector in kubectl's text form */

enum labelsel_op {
        LABELSEL_IN,
        LABELSEL_NOT_IN,
        LABELSEL_EXISTS,
        LABELSEL_DOES_NOT_EXIST,
        _LABELSEL_OP_MAX,
};

struct labelsel_label {
        char *key;
        char *value;
};

struct labelsel_expr {
        char *key;
        enum labelsel_op op;
        char **values; /* sorted, without duplicates */
        size_t nvalues;
};

/* Read-only for callers; made by labelsel_parse. */
struct labelsel {
        bool nothing;                  /* the JSON null selector: selects no set */
        struct labelsel_label *labels; /* match_labels, sorted by key */
        size_t nlabels;
        struct labelsel_expr *exprs;   /* match_expressions, in the given order */
        size_t nexprs;
};

/* "In", "NotIn", "Exists", "DoesNotExist". */
const char *labelsel_op_to_string(enum labelsel_op op);

/* A label key: [prefix/]name, prefix a lower-case RFC 1123 DNS subdomain of
 * at most 253 characters, name 1-63 characters of [A-Za-z0-9-_.] that begin
 * and end alphanumeric. False with the reason in why (if given) otherwise. */
bool labelsel_key_valid(const char *k, char *why, size_t whylen);
/* A label value: empty, or 1-63 characters shaped like a key's name. */
bool labelsel_value_valid(const char *v, char *why, size_t whylen);

/* Parse {"match_labels": {k: v}, "match_expressions": [{"key", "operator",
 * "values"}]} into *out. o == NULL (JSON null) is the selector that selects
 * nothing; {} selects everything. 0, -EINVAL (err names the member and what
 * is wrong with it, e.g. "match_expressions[3].values[1]: ..."), -E2BIG
 * (over a limit) or -ENOMEM. *out is set only on success. */
int labelsel_parse(json_object *o, struct labelsel **out, char *err, size_t errlen);

/* Parse kubectl's text form (`-l`, `?selector=`): requirements separated
 * by ',', each KEY, !KEY, KEY=V, KEY==V, KEY!=V, KEY in (V,...) or KEY notin
 * (V,...), blanks around words allowed; "" selects everything. KEY!=V and
 * notin also select sets without KEY, as Kubernetes does. Each becomes one
 * match_expressions entry, so "a=1,a=2" selects nothing. 0, -EINVAL (err
 * says what is wanted at which byte), -E2BIG (over a limit), -ENOMEM. */
int labelsel_parse_text(const char *text, struct labelsel **out, char *err, size_t errlen);

/* Whether the label set (keys[i] = values[i], keys unique) satisfies every
 * requirement of s. s == NULL selects nothing, as the null selector. */
bool labelsel_matches(const struct labelsel *s, const char *const *keys, const char *const *values, size_t n);
/* The same over a JSON object of string labels; labels == NULL is no labels.
 * Members that are not strings are not labels. */
bool labelsel_matches_json(const struct labelsel *s, json_object *labels);

/* The canonical JSON form: both members always present, match_labels sorted
 * by key, every expression with its sorted "values"; labelsel_parse of it
 * gives an equal selector. The null selector is JSON null, i.e. NULL; NULL
 * for a selector that is not s->nothing means out of memory. */
json_object *labelsel_to_json(const struct labelsel *s);

/* Whether a and b select the same sets by the same requirements. */
bool labelsel_equal(const struct labelsel *a, const struct labelsel *b);

void labelsel_free(struct labelsel *s);
