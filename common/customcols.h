/* kubectl's -o custom-columns=HEADER:EXPR,...: the spec parsed and checked
 * once (EXPR a jsonpath field path, jsonpath_query), then a plain aligned
 * table over a JSON document, a row for each element of an array or one
 * for an object; a missing value is <none>, as kubectl prints it. Pure: no
 * I/O. */
#pragma once
#include <json-c/json.h>
#include <stddef.h>

#include "growbuf.h"

#define CUSTOMCOLS_MAX_SPEC 4096   /* bytes of a spec */
#define CUSTOMCOLS_MAX_COLUMNS 64  /* columns of a spec */
#define CUSTOMCOLS_MAX_OUTPUT (64u << 20)
#define CUSTOMCOLS_NONE "<none>"

struct customcol {
        char *header; /* as given, not empty, no control characters */
        char *expr;   /* a path jsonpath_query accepts */
};

struct customcols {
        struct customcol *v;
        size_t n;
};

/* Parse "HEADER:EXPR[,HEADER:EXPR...]" into *out (left empty on failure).
 * Commas and colons inside [...] or quotes belong to the EXPR. 0; -EINVAL
 * with err naming the column and what is wrong; -E2BIG past
 * CUSTOMCOLS_MAX_SPEC or CUSTOMCOLS_MAX_COLUMNS; -ENOMEM. */
int customcols_parse(const char *spec, struct customcols *out, char *err, size_t errlen);
void customcols_free(struct customcols *c);

/* The table over doc (the header line, then a row per element of an array,
 * or one row for anything else), columns three spaces apart, appended to
 * out. A cell is the results of its EXPR over the row's item, strings as
 * their text, other values as compact JSON, several joined by ",";
 * CUSTOMCOLS_NONE for no result or JSON null; tabs and newlines become
 * spaces, other control characters '?'. 0; -E2BIG past CUSTOMCOLS_MAX_OUTPUT; -ENOMEM. */
int customcols_render(const struct customcols *c, json_object *doc, struct growbuf *out);
