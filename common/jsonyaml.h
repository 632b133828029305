/* A JSON document written as YAML (musterctl -o yaml) with libyaml's
 * emitter: mappings and sequences in block style, strings that a plain
 * scalar would turn into another type (true, yes, null, ~, 123, 0x1, .inf,
 * "") double-quoted, strings of several lines as literal blocks, the rest
 * as the emitter sees fit. Read back, it is the same document. Pure: no
 * I/O. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "growbuf.h"

#define JSONYAML_MAX_OUTPUT (256u << 20)

/* Whether s, written as a plain scalar, could read back as something other
 * than a string under YAML 1.1 or 1.2 (null, a boolean, a number, a
 * timestamp, a merge key). A word that only starts like a number ("7f3c",
 * "1st") is not. */
bool jsonyaml_plain_is_ambiguous(const char *s, size_t n);

/* o as a YAML document ("---" left out), appended to out. 0; -E2BIG past
 * JSONYAML_MAX_OUTPUT; -ENOMEM or -EIO when libyaml fails. */
int jsonyaml_emit(json_object *o, struct growbuf *out);
