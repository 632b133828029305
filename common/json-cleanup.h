/* Scoped cleanup for json-c handles, shared by every component:
 *   _cleanup_json_ json_object *o = json_tokener_parse(text);
 *   _cleanup_json_tokener_ json_tokener *tok = json_tokener_new();
 * The functions are static inline, so any file may include this header. */
#pragma once
#include <json-c/json.h>

#include "cleanup.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put)
DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free)

#define _cleanup_json_ _cleanup_(json_object_putp)
#define _cleanup_json_tokener_ _cleanup_(json_tokener_freep)
