/* What else is in a manifest directory: the objects of the files muster did
 * not write (not in manifestdir's bookkeeping), read so that an apply can
 * report them and leave alone a Helm release someone else already owns
 * (DESIGN §10). Never writes; a file it cannot read or parse is an entry with
 * an error, never a failure of the scan. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "payload.h"

#define UNOWNED_MAX_FILE (1024 * 1024)  /* bytes of one file read */
#define UNOWNED_MAX_FILES 1000          /* files read, in name order */
#define UNOWNED_MAX_OBJECTS 1000        /* entries in a list */

#define UNOWNED_HELM_GROUP "helm.cattle.io"
#define UNOWNED_HELM_KIND "HelmChart"

/* One object of an out-of-band file, or one file that could not be read
 * (kind NULL and error set). */
struct unowned_object {
        char *file;               /* its file name in the directory */
        unsigned doc_index;       /* among the file's non-empty documents */
        char *group, *version, *kind;
        char *namespace;          /* NULL: none given */
        char *name;
        char *release_namespace;  /* HelmChart (helm.cattle.io) only: where its release installs */
        char *error;              /* why the file, or this object's release, was not read */
};

struct unowned_list {
        struct unowned_object *v;  /* sorted by file, then doc_index */
        size_t n;
        size_t cap;
        bool truncated;  /* more files or objects than the limits above: the rest were not read */
};

/* Fill *out (zeroed first) with the objects of DIR's regular files (not
 * symlinks) whose names do not start with '.', end in .yaml/.yml/.json and
 * are not in DIR's bookkeeping (MANIFESTDIR_BOOKKEEPING; none: no file is
 * muster's). No DIR: an empty list. 0; -EBADMSG when the bookkeeping is not
 * one, -errno of the file system, -ENOMEM (err says which). Free *out with
 * unowned_list_free() whatever the result. */
int unowned_scan(const char *dir, struct unowned_list *out, char *err, size_t errlen);

/* The namespace a HelmChart's release installs into: the first non-empty
 * YAML (or JSON) document of content's spec.targetNamespace when that is a
 * non-null, non-empty scalar (merge keys followed), else metadata_ns when
 * non-empty, else "default". *out is malloc'd. 0, -EINVAL when content is
 * not YAML, its document not a mapping, spec not a mapping, or
 * targetNamespace not a scalar of at most MANIFEST_MAX_NAME printable bytes;
 * -ENOMEM. */
int unowned_helm_release_namespace(const char *content, size_t len, const char *metadata_ns, char **out);

/* [{"file","group","version","kind","namespace"?,"name","release_namespace"?,"error"?}]
 * (group, version, kind and name null for a file that was not read). NULL
 * on ENOMEM. */
json_object *unowned_list_to_json(const struct unowned_list *l);

/* Whether l holds a HelmChart (helm.cattle.io) of release (name, release_ns);
 * *file (when file is not NULL) then points at its file name in l. */
bool unowned_helm_conflict(const struct unowned_list *l, const char *name, const char *release_ns,
                           const char **file);

/* Delete from DIR's out-of-band files the objects `del` names (same
 * group, kind, namespace (NULL == NULL) and name; DESIGN §9). Only the
 * files of `found` (a unowned_scan() of DIR) holding such an object are
 * looked at, each read and parsed again; one whose name is now in the
 * bookkeeping, a dot file, a symlink or anything not a regular file is
 * never touched. A file all of whose documents are named is unlinked; else
 * it is rewritten atomically (manifestdir_write_atomic_at, its mode kept) with
 * the other documents' exact bytes in order. DIR is fsynced after a change.
 * One {"file","group","kind","namespace"?,"name"} per object removed is
 * appended to `deleted` (an array; NULL: none). How many objects were
 * removed, or -errno with err naming the file (what was removed before it
 * stays removed and listed); -EBADMSG for bookkeeping that is not one or a
 * file whose documents do not give back its bytes. */
int unowned_delete(const char *dir, const struct unowned_list *found, const struct payload_deletion *del, size_t n,
                   json_object *deleted, char *err, size_t errlen);

void unowned_list_free(struct unowned_list *l);
