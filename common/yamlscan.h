/* What the libyaml readers of manifests (manifest.c) and release.yaml
 * (release.c) share: line numbers as libyaml counts them, and YAML 1.1's
 * plain null. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* The 1-based line of byte `off` of data, counting line breaks as libyaml
 * does: LF, CR, CRLF, NEL, LS and PS. */
size_t yscan_line_of_offset(const char *data, size_t len, size_t off);
/* libyaml puts the end of the stream on a line of its own: `line`, but at
 * most the last line of data. */
size_t yscan_clamp_line(const char *data, size_t len, size_t line);
/* A plain scalar that is null: empty, ~, null, Null or NULL. */
bool yscan_plain_is_null(const char *s, size_t n);
