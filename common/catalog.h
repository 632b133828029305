/* Operator catalogs in the file-based catalog format (DESIGN.md §3, §8): the
 * olm.package, olm.channel and olm.bundle blobs of JSON streams (as `opm
 * render` writes them) or YAML streams, read into a model the solver uses,
 * with each bundle's manifests (olm.bundle.object properties, or the files
 * of a catalog directory's bundles/<BUNDLE>/manifests/). Pure, but for
 * catalog_read_dir(), which reads a catalog directory from disk. */
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
#define CATALOG_MAX_FILES 100000             /* catalog_parse calls into one catalog; files of a directory */
#define CATALOG_MAX_MANIFESTS 1000           /* per bundle */
#define CATALOG_MAX_MANIFEST (8u * 1024 * 1024) /* bytes of one manifest */
#define CATALOG_MAX_MANIFEST_NAME 200        /* a manifest's file name */
#define CATALOG_MAX_PATH 1024                /* a file's path in a catalog directory */
#define CATALOG_MAX_PATH_PART 255            /* one component of it */
#define CATALOG_MAX_DEPTH 32                 /* components of such a path */
#define CATALOG_MAX_DIR_BYTES (256u * 1024 * 1024) /* what catalog_read_dir reads in all */

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

/* One manifest of a bundle, as it is installed: a plain file name, unique
 * in the bundle, and the bytes of one JSON or YAML Kubernetes object (or,
 * from a directory, of a file of them). */
struct catalog_manifest {
        char *name;
        char *content; /* len bytes, NUL-terminated */
        size_t len;
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
        /* olm.bundle.object properties in their order, named
         * "<index>-<kind>-<metadata.name>.<json|yaml>" (lower case, other
         * characters than [a-z0-9._-] as '-'), then the files of
         * bundles/<name>/manifests/ (catalog_load_files) in name order. */
        struct catalog_manifest *manifests;
        size_t n_manifests;
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
 * the bundle's olm.package property and version, ranges, olm.bundle.object
 * data: base64 of one manifest, checked as manifest_parse_file() checks
 * release manifests); cross references wait for catalog_check(). 0; -EINVAL for bad input, -E2BIG past a
 * CATALOG_MAX_* limit or when YAML aliases expand past yscan_alias_cap() (yamlscan.h: counted before
 * anything is copied), -ENOMEM; on failure err says "file:line: blob: what"
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

/* Append a copy of a manifest (len bytes of content, at most
 * CATALOG_MAX_MANIFEST) named `name` to b. The name must be a plain file
 * name ending in .json, .yaml or .yml, at most CATALOG_MAX_MANIFEST_NAME
 * bytes, not yet used in b. 0; -EEXIST, -EINVAL, -E2BIG (past
 * CATALOG_MAX_MANIFESTS), -ENOMEM; b is unchanged on failure. */
int catalog_bundle_add_manifest(struct catalog_bundle *b, const char *name, const char *content, size_t len);

/* ---- catalog directories (catalogdir.c) --------------------------------- */

/* One file of a catalog directory: its path relative to the directory
 * ('/'-separated) and its bytes. */
struct catalog_file {
        const char *path;
        const char *content; /* len bytes; need not be NUL-terminated */
        size_t len;
};

/* Whether path is a relative path a catalog directory may hold: 1 to
 * CATALOG_MAX_PATH bytes, no leading '/', no empty, "." or ".."
 * component, no control character, at most CATALOG_MAX_DEPTH components
 * of at most CATALOG_MAX_PATH_PART bytes. 0, or -EINVAL with why. */
int catalog_path_check(const char *path, char *why, size_t whylen);

/* Read the files of a catalog directory into *out (zeroed first; freed
 * again on failure). Every path is checked (catalog_path_check) and the
 * files are taken in path order, so the result never depends on the order
 * they are given in; a path given twice is refused. Then, by path:
 *  - bundles/<B>/manifests/<F> (F ending in .json, .yaml or .yml; checked
 *    as a release manifest is, holding at least one object) becomes
 *    manifest F of bundle B; a deeper path under manifests/ is refused;
 *  - bundles/<B>/metadata/dependencies.yaml (or .yml) is read into bundle B
 *    with catalog_parse_dependencies(); other files under metadata/ are
 *    ignored;
 *  - any other .json, .yaml or .yml file goes to catalog_parse();
 *  - other files are ignored.
 * A bundle directory whose manifests or dependencies name a bundle no
 * olm.bundle blob declares is refused, naming the path. Then
 * catalog_check(). 0, -EINVAL, -E2BIG (more than CATALOG_MAX_FILES files, a
 * limit of the parser), -ENOMEM with err "file:line: blob: what" (or
 * "file: what" for what has no line). */
int catalog_load_files(const struct catalog_file *files, size_t n, struct catalog *out, char *err, size_t errlen);

/* Read a catalog directory from disk, or one catalog file: every regular
 * file ending in .json, .yaml or .yml under `path` (hidden ones, starting
 * with '.', and those under hidden directories left out) into *files
 * (*n of them, sorted by path, paths relative to `path`; a single file is
 * named by its base name). Symbolic links are followed only to a regular
 * file inside the tree; one leading out of it, or to a directory, is
 * refused. At most CATALOG_MAX_FILES files of at most CATALOG_MAX_INPUT
 * bytes each and CATALOG_MAX_DIR_BYTES in all, CATALOG_MAX_DEPTH levels
 * deep; a file holding a NUL byte is refused. 0, or -errno with err naming
 * the path; *files is NULL then. Free with catalog_files_free(). */
int catalog_read_dir(const char *path, struct catalog_file **files, size_t *n, char *err, size_t errlen);
/* Free what catalog_read_dir() or catalog_files_from_canonical() made. */
void catalog_files_free(struct catalog_file *files, size_t n);

/* The canonical form of a set of files, as musterd stores a catalog: the
 * canonical JSON (canonjson.h) of [{"content", "path"}, ...] in path
 * order, whatever order they are given in. *out is NUL-terminated, *len
 * its length. 0; -EINVAL for content that is not UTF-8 or a NUL byte in a
 * path; -E2BIG; -ENOMEM. */
int catalog_files_to_canonical(const struct catalog_file *files, size_t n, char **out, size_t *len);
/* The inverse: files of a canonical text (each path and content copied,
 * NUL-terminated; free with catalog_files_free()). 0; -EINVAL for text of
 * another shape; -E2BIG past CATALOG_MAX_FILES; -ENOMEM. */
int catalog_files_from_canonical(const char *text, size_t len, struct catalog_file **files, size_t *n);
