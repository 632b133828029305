/* The manifest directory of an installed system (DESIGN §6): the payload's
 * manifest files written into it atomically, with a bookkeeping file that
 * remembers which files muster wrote, so that a later revision removes what
 * it no longer carries and never touches anything else. Shared by the
 * installer (into a fresh root) and day 2 (`muster-agent node`). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "payload.h"
#include "strv.h"

#define MANIFESTDIR_BOOKKEEPING ".muster-applied.json"
/* Temporary files start with this; a crash may leave them, the next apply
 * removes them. Manifest paths never start with '.'. */
#define MANIFESTDIR_TMP_PREFIX ".muster-tmp."
#define MANIFESTDIR_MAX_BOOKKEEPING (32 * 1024 * 1024)
#define MANIFESTDIR_MAX_FILE (64 * 1024 * 1024)  /* a file compared before rewriting it */

/* What one apply did; each list sorted. */
struct manifestdir_changes {
        int64_t previous_revision;  /* the bookkeeping's before (0: none) */
        struct strv added;          /* not in the previous bookkeeping */
        struct strv updated;        /* in it, and the file on disk differed */
        struct strv removed;        /* in it, not in this payload */
};
void manifestdir_changes_free(struct manifestdir_changes *c);

/* The revision DIR's bookkeeping records: 0 and *rev (0 when there is no
 * bookkeeping or no DIR), -EBADMSG when the file is not bookkeeping. */
int manifestdir_applied_revision(const char *dir, int64_t *rev);

/* Whether `name` may be a file in a manifest directory: a plain file name
 * (no '/', not "." or "..", not starting with '.', no control characters)
 * of at most MANIFEST_MAX_FILE_NAME bytes. */
bool manifestdir_name_is_valid(const char *name);

/* Make DIR (and its parents, 0755) hold exactly the payload's files among
 * those muster wrote: each file whose content differs is written through a
 * temporary file in DIR (fsync, rename); files the previous bookkeeping
 * lists and `files` lacks are removed; other files are never touched. The
 * bookkeeping {"revision":N,"files":{"path":"sha256hex"}} is written last
 * (atomically) and DIR is fsynced. Before anything is written the
 * bookkeeping is widened to the new paths too, so that a crash half-way
 * never leaves a file muster wrote without a record of it.
 * Returns 0 with *out filled (free with manifestdir_changes_free), -EINVAL for a
 * bad file name (err names it), -EBADMSG for a bookkeeping file that is not
 * one, -errno of the file system (err says which file). */
int manifestdir_apply(const char *dir, int64_t revision, const struct payload_file *files, size_t n,
                  struct manifestdir_changes *out, char *err, size_t errlen);

/* Write data to dfd/name: temporary file (created 0600, then `mode`),
 * fsync, then rename over name, so a crash leaves the old file or the new
 * one. 0 or -errno. */
int manifestdir_write_atomic_at(int dfd, const char *name, const void *data, size_t len, mode_t mode);

/* The regular file dfd/name (not through a symlink), at most max bytes, in
 * a malloc'd NUL-terminated buffer. -EISDIR for anything not a regular
 * file, -EFBIG past max, -errno. */
int manifestdir_read_at(int dfd, const char *name, size_t max, char **out, size_t *len);

/* mkdir -p of rel under the directory fd root (new folders get `mode`),
 * never following a symlink: an image's /etc must not lead outside it.
 * The last folder's fd, or -errno. */
int manifestdir_mkdir_under(int root, const char *rel, mode_t mode);
