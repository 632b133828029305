/* Operator catalogs in the file-based catalog format (DESIGN.md §3, §8): the
 * olm.package, olm.channel and olm.bundle blobs of JSON streams (as `opm
 * render` writes them) or YAML streams, read into a model the solver uses. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "semver.h"

#define CATALOG_MAX_INPUT (64u * 1024 * 1024) /* bytes of one file's text */
#define CATALOG_MAX_NAME 253                 /* package, channel, bundle names */
#define CATALOG_MAX_GVK_PART 253             /* group; version and kind too */
#define CATALOG_MAX_IMAGE 2048               /* an image reference */
#define CATALOG_MAX_DESCRIPTION (1024 * 1024)
#define CATALOG_MAX_BUNDLES 100000
#define CATALOG_MAX_PACKAGES 10000
#define CATALOG_MAX_CHANNELS 1000            /* per package */
#define CATALOG_MAX_ENTRIES 100000           /* per channel */
#define CATALOG_MAX_SKIPS 1000               /* per channel entry */
#define CATALOG_MAX_PROPERTIES 100           /* per bundle, dependencies included */
#define CATALOG_MAX_FILES 100000             /* catalog_parse calls into one catalog */

/* Where a blob came from: an index into catalog.files and a 1-based line. */
struct catalog_origin {
        size_t file;
        size_t line;
};

struct catalog_entry {
        char *name; /* a bundle of the channel's package */
        char *replaces; /* NULL when absent */
        char **skips;
        size_t n_skips;
        bool has_skip_range;
        char *skip_range_text; /* NULL when absent */
        struct semver_range skip_range;
};

struct catalog_channel {
        char *package;
        char *name;
        struct catalog_entry *entries;
        size_t n_entries;
        struct catalog_origin at;
};

struct catalog_package {
        char *name;
        char *default_channel;
        char *description; /* NULL when absent */
        /* Indexes into catalog.channels, filled by catalog_check(). */
        size_t *channels;
        size_t n_channels;
        struct catalog_origin at;
};

struct catalog_gvk {
        char *group, *version, *kind;
};

struct catalog_required_package {
        char *package;
        char *range_text;
        struct semver_range range;
};

struct catalog_bundle {
        char *package;
        char *name;
        char *image; /* NULL when absent */
        bool has_version;
        struct semver version;
        struct catalog_gvk *provides_gvks;
        size_t n_provides_gvks;
        struct catalog_required_package *requires_packages;
        size_t n_requires_packages;
        struct catalog_gvk *requires_gvks;
        size_t n_requires_gvks;
        size_t n_properties; /* counted against CATALOG_MAX_PROPERTIES */
        struct catalog_origin at;
};

/* Zero-initialise before the first catalog_parse(). Channels are kept flat
 * (they may come before their package); catalog_check() links them. */
struct catalog {
        struct catalog_package *packages;
        size_t n_packages;
        struct catalog_channel *channels;
        size_t n_channels;
        struct catalog_bundle *bundles;
        size_t n_bundles;
        char **files; /* file names given to catalog_parse() */
        size_t n_files;
        size_t n_ignored; /* blobs of unknown schemas, properties of unknown types */
};

/* Append the blobs of one file's text (len bytes, at most CATALOG_MAX_INPUT,
 * need not be NUL-terminated) to *into. Text whose first non-blank byte is
 * '{' is read as a stream of JSON objects, anything else as a YAML stream
 * (empty documents are skipped). Each blob's fields are checked here (names,
 * the bundle's olm.package property and version, ranges); cross references
 * wait for catalog_check(). 0; -EINVAL for bad input, -E2BIG past a
 * CATALOG_MAX_* limit, -ENOMEM; on failure err says "file:line: blob: what"
 * and nothing of this file is left in *into. */
int catalog_parse(const char *text, size_t len, const char *file_name, struct catalog *into, char *err,
                  size_t errlen);

/* Read the text of a bundle's older dependencies.yaml (YAML or JSON: a
 * mapping with a "dependencies" list of {type: olm.package, packageName (or
 * name), version: RANGE} and {type: olm.gvk, group, version, kind}) into
 * b's requires_packages and requires_gvks, appending. Unknown types are
 * skipped. 0, -EINVAL, -E2BIG, -ENOMEM with err "file:line: what"; on
 * failure b is as it was. */
int catalog_parse_dependencies(const char *text, size_t len, const char *file_name, struct catalog_bundle *b,
                               char *err, size_t errlen);

/* After all files: no duplicate packages, channels (per package) or bundles;
 * every channel's and bundle's package exists; each channel entry names a
 * bundle of that package; each defaultChannel names a channel of its
 * package; each bundle has a valid version. Links packages to their
 * channels (at most CATALOG_MAX_CHANNELS each). 0, -EINVAL, -E2BIG,
 * -ENOMEM with err naming the blob's file and line. */
int catalog_check(struct catalog *c, char *err, size_t errlen);

/* Free what c holds and leave it empty. */
void catalog_free(struct catalog *c);
