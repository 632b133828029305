/* Reading JSON documents into the model structs: typed getters that leave
 * absent or null members unset, enforce size limits, and keep the first
 * reason a document is refused (naming the field). Shared by the inventory
 * and the resource model. */
#pragma once
#include <json-c/json.h>
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
