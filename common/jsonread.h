/* Reading JSON documents into the model structs: typed getters that leave
 * absent or null members unset, enforce size limits, and keep the first
 * reason a document is refused (naming the field). Shared by the inventory,
 * the resource model and the API's handlers (a request's members, in
 * their words). */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strv.h"

struct jctx {
        char *err;     /* where the first reason goes; may be NULL */
        size_t errlen;
        int r;         /* 0, or -EINVAL / -ENOMEM once something failed */
};

void jfail(struct jctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void joom(struct jctx *c);

/* Member k of o if present and not null; a wrong type fails (an integer
 * is accepted where a double is asked for). */
json_object *jget(json_object *o, const char *k, json_type t, struct jctx *c);
/* Replace *out by a copy of v. */
void jset_str(char **out, const char *v, struct jctx *c);
/* A string of at most max bytes without NUL bytes. */
void jget_str(json_object *o, const char *k, char **out, size_t max, struct jctx *c);
/* An integer in 0..max. */
void jget_i64(json_object *o, const char *k, int64_t *out, int64_t max, struct jctx *c);
/* An array of at most max strings of at most maxlen bytes each. */
void jget_strv(json_object *o, const char *k, struct strv *out, size_t max, size_t maxlen, struct jctx *c);
/* An array member of at most max entries, or NULL. */
json_object *jget_array(json_object *o, const char *k, size_t max, struct jctx *c);
/* Entry i of array a (member k) if it is an object, else NULL and a failure. */
json_object *jget_elem(json_object *a, size_t i, const char *k, struct jctx *c);

/* ---- A request's members, as the API's handlers read them --------------
 * The same context; the words are for people (a refusal is answered as
 * it is). A handler that names a member its own way calls jrefuse right
 * after the getter; handlers stop at the first refusal. */

/* Whether member k is there at all (null included). */
bool jhas(json_object *o, const char *k);
/* Member k as a string in place (valid while o is; NULL when absent, null
 * or refused): at most max bytes, no NUL byte. Refused: "field \"k\" must
 * be a string", "... is longer than max bytes", "... has a NUL byte". */
const char *jget_cstr(json_object *o, const char *k, size_t max, struct jctx *c);
/* true or false into *out: whether it was there (*out left alone when
 * absent, null or refused: "field \"k\" must be true or false"). */
bool jget_bool(json_object *o, const char *k, bool *out, struct jctx *c);
/* An integer in min..max into *out: whether it was there (*out left alone
 * otherwise). Refused: "field \"k\" must be an integer", "... must be an
 * integer from min to max", "... is out of range" (json-c's errno: it
 * clamped the value). */
bool jget_int(json_object *o, const char *k, int64_t min, int64_t max, int64_t *out, struct jctx *c);
/* The refusal in the caller's words: -EINVAL with this reason, in place of
 * the one a getter gave for the member just read (out of memory stays). */
void jrefuse(struct jctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What json-c takes to hold the parsed tree of the JSON text s[0..len),
 * estimated from its tokens without parsing it (json-c 0.16 on 64-bit, as
 * measured: an object about 800 bytes, a member 64 more, an array 160, a
 * string 96, a number or literal 80, plus the text): an upper bound for well-formed text,
 * whatever its shape. Pure. */
size_t json_parse_cost(const char *s, size_t len);
/* A JSON text from outside (a request body, an inventory sent as a string)
 * is refused before it is parsed when json_parse_cost passes this many
 * times its size and the floor: a body of empty objects
 * would otherwise take some 260 times its size. Real documents
 * (inventories, manifests) come to 7 to 11 times. */
#define JSON_PARSE_COST_RATIO 16
#define JSON_PARSE_COST_FLOOR (16u << 20) /* a tree this small passes whatever its shape */
static inline bool json_parse_cost_ok(size_t cost, size_t len) {
        return cost <= JSON_PARSE_COST_FLOOR || cost / JSON_PARSE_COST_RATIO <= len;
}

/* ---- Walking a JSON text without its tree ------------------------------
 * For documents whose whole tree would cost many times their size (an
 * inventory of a thousand disks): the text is walked member by member and
 * only one value at a time is parsed with json-c. */

/* One value's bytes inside a larger JSON text. */
struct json_span {
        const char *p;
        size_t len;
};

#define JSON_SPAN_KEY_MAX 256 /* the longest member name json_members decodes */
#define JSON_SPAN_DEPTH 64    /* containers nested deeper are refused */

/* Calls fn for each member of the JSON object text s[0..len) (whitespace
 * around it allowed), in order, with its decoded name and its value's span.
 * Checks the object's own punctuation and finds where each value ends
 * (strings, brackets matched by kind, at most JSON_SPAN_DEPTH deep); the
 * values themselves are the caller's to parse (json_span_parse). Returns 0,
 * fn's negative return (fn keeps its own reason), or -EINVAL with a reason
 * in err. Allocates nothing for names without escapes. */
typedef int (*json_member_fn)(void *ud, const char *key, struct json_span v);
int json_members(const char *s, size_t len, json_member_fn fn, void *ud, char *err, size_t errlen);
/* The same for the elements of the JSON array text s[0..len). */
typedef int (*json_element_fn)(void *ud, size_t i, struct json_span v);
int json_elements(const char *s, size_t len, json_element_fn fn, void *ud, char *err, size_t errlen);
/* Parses exactly the span v (nothing may follow the value), nested at most
 * depth deep, into *out (NULL for JSON null): 0, or -EINVAL / -ENOMEM. */
int json_span_parse(struct json_span v, int depth, json_object **out);
/* Whether the span is the literal null (json-c's reading of an absent member). */
bool json_span_is_null(struct json_span v);
