/* Mustache templates (the mustache specification: interpolation, sections,
 * inverted sections, comments, set delimiters, partials; no lambdas) rendered
 * over a json-c context, for the values add-on. Pure: no I/O, no logging. */
#pragma once
#include <stddef.h>

#include <json-c/json.h>

#define MUSTACHE_MAX_TEMPLATE (1024 * 1024)       /* bytes of one template */
#define MUSTACHE_MAX_DEPTH 100                    /* nested sections in one template */
#define MUSTACHE_MAX_DELIM 16                     /* bytes of a set delimiter */
#define MUSTACHE_MAX_PARTIAL_DEPTH 64             /* partials within partials */
#define MUSTACHE_MAX_OUTPUT (16 * 1024 * 1024)    /* bytes of rendered output */
#define MUSTACHE_MAX_STEPS (16 * 1024 * 1024)     /* nodes a render visits */

struct mustache;

/* Parse len bytes of tmpl (NUL bytes are plain text). 0 and *out, or -EINVAL
 * (unclosed tag, unbalanced or unclosed section, bad delimiters, empty name),
 * -E2BIG (template past MUSTACHE_MAX_TEMPLATE, sections nested past
 * MUSTACHE_MAX_DEPTH) or -ENOMEM, with *out NULL and err saying why, naming
 * the line and column (1-based) of the offending tag. */
int mustache_parse(const char *tmpl, size_t len, struct mustache **out, char *err, size_t errlen);

/* Render t over context (any json-c value, NULL allowed). Missing names render
 * empty; only false, null and empty arrays are falsy. 0 with *out (NUL
 * terminated, free() it) and *len, or -E2BIG (output past MUSTACHE_MAX_OUTPUT, a render
 * visiting more than MUSTACHE_MAX_STEPS nodes,
 * partials nested past MUSTACHE_MAX_PARTIAL_DEPTH), -EINVAL (a partial that
 * does not parse) or -ENOMEM, with *out NULL and err saying why. Partial tags
 * render empty here. */
int mustache_render(const struct mustache *t, json_object *context, char **out, size_t *len, char *err,
                    size_t errlen);

/* As mustache_render(), with partials an object of name -> template string
 * (NULL for none); a partial that is not a string there renders empty. */
int mustache_render_partials(const struct mustache *t, json_object *context, json_object *partials, char **out,
                             size_t *len, char *err, size_t errlen);

void mustache_free(struct mustache *t);
