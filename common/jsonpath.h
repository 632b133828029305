/* kubectl's -o jsonpath= templates, the subset scripts use, over a JSON
 * document (musterctl -o jsonpath=...):
 *   text             copied as it is
 *   {.a.b}           a member; {.a[0]}, {.a[-1]} an element; {.a[*]} every
 *                    element (or member value); {.a['x-y']} a member by
 *                    name; {.} or {@} the current node, {$...} from the root
 *   {"\n"}           a string ("\n", "\t", "\"", "\\" escapes)
 *   {range .a[*]}...{end}   the part between, once for each result, with it
 *                    as the current node (nested up to JSONPATH_MAX_DEPTH)
 * Several results are written separated by a space; a string as its text,
 * anything else as compact JSON; no result, nothing (kubectl's
 * --allow-missing-template-keys). Filters, slices and recursive descent are
 * refused by name. Pure: no I/O. */
#pragma once
#include <json-c/json.h>
#include <stddef.h>

#include "growbuf.h"

#define JSONPATH_MAX_TEMPLATE 4096 /* bytes of a template */
#define JSONPATH_MAX_DEPTH 8       /* nested ranges */
#define JSONPATH_MAX_OUTPUT (64u << 20)
#define JSONPATH_MAX_WORK 10000000u /* nodes visited and range passes in one rendering */

/* Check tpl without a document: 0, or -EINVAL with err saying what is
 * wrong and where (-E2BIG past JSONPATH_MAX_TEMPLATE). */
int jsonpath_check(const char *tpl, char *err, size_t errlen);

/* Render tpl over root, appending to out (at most JSONPATH_MAX_OUTPUT
 * bytes in all). 0; -EINVAL with err for a bad template; -E2BIG past the
 * output or JSONPATH_MAX_WORK (a range of ranges over a large document);
 * -ENOMEM. */
int jsonpath_render(const char *tpl, json_object *root, struct growbuf *out, char *err, size_t errlen);

/* The first `stop` in p outside brackets, braces and quoted strings (a
 * backslash escapes in quotes), or p's terminating NUL: where a path ends
 * in a list of them ("A:.a[0,1],B:.b" or ".x=v"). */
const char *jsonpath_scan_to(const char *p, char stop);
/* One path alone, as kubectl's custom-columns and `wait --for` take it:
 * ".a.b", ".a[0]", "a.b" (the leading '.' may be left out), or the same in
 * braces ("{.a.b}"); no text, literals or ranges around it. Its results
 * from root (the document's own nodes, not owned) into a malloc'd *nodes
 * (free it; NULL when there are none) and their number into *n. root NULL
 * checks the path only. 0; -EINVAL with err for a bad path; -E2BIG past
 * JSONPATH_MAX_TEMPLATE or JSONPATH_MAX_WORK; -ENOMEM. */
int jsonpath_query(const char *path, json_object *root, json_object ***nodes, size_t *n, char *err, size_t errlen);
