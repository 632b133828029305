/* One YAML document as JSON (libyaml's events into json-c), for texts
 * muster ships and serves as JSON too (openapi/muster.yaml): mappings with
 * scalar keys, sequences, and scalars typed as YAML 1.2's core schema has
 * them (plain null, true/false, integers and decimals; anything quoted or
 * tagged !!str is a string). Anchors and aliases are refused, not expanded. */
#pragma once
#include <json-c/json.h>
#include <stddef.h>

#define YAMLJSON_MAX_DEPTH 64

/* data[0..len) (one document) into *out (the caller's to put). 0; -EINVAL
 * with the reason and line in err for a text that is not such a document
 * (bad YAML, more than one document, an alias, a duplicate or non-scalar
 * key, deeper than YAMLJSON_MAX_DEPTH); -ENOMEM. *out is NULL on failure. */
int yamljson_parse(const char *data, size_t len, json_object **out, char *err, size_t errlen);
