/* Release manifests (DESIGN §6): YAML files (several documents per file) and
 * JSON files, parsed with libyaml into documents that keep their exact bytes,
 * plus the identity (group, version, kind, namespace, name) and annotations
 * that the release filter reads. Pure: bytes in, structs out. */
#pragma once
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define MANIFEST_MAX_FILE (16 * 1024 * 1024)  /* one file's bytes */
#define MANIFEST_MAX_DOCS_PER_FILE 1000
#define MANIFEST_MAX_ANNOTATIONS 256
#define MANIFEST_MAX_NAME 253                 /* metadata.name / namespace */
#define MANIFEST_MAX_FILE_NAME 255            /* a plain file name, no '/' */

struct manifest_annotation {
        char *key;
        char *value;   /* scalar values only; other values are kept as "" */
};

struct manifest {
        char *file;          /* source file name as given (a plain name, no '/') */
        unsigned doc_index;  /* 0-based among the file's non-empty documents */
        char *path;          /* its file name in a manifest directory: `file` when
                              * the file holds one document, else
                              * "<stem>.<doc_index><ext>" ("a.yaml" doc 2 -> "a.2.yaml") */
        char *api_version;   /* "apps/v1", "v1" */
        char *group;         /* "apps"; "" for the core group */
        char *version;       /* "v1" */
        char *kind;
        char *namespace;     /* NULL: none given (cluster-scoped) */
        char *name;
        struct manifest_annotation *annotations; /* in document order */
        size_t n_annotations;
        char *content;       /* the document's exact bytes, NUL-terminated */
        size_t content_len;
};

struct manifest_list {
        struct manifest *v;
        size_t n;
        size_t cap;
};

/* Parse one file and append its non-empty documents to `out`. `file_name`
 * must be a plain name ending in .yaml, .yml or .json. Exact bytes: a file
 * with one document keeps the whole file as its content; with several, each
 * document's content runs from its first byte (its "---" marker when it has
 * one, the preamble of comments/directives going to the first document) to
 * the start of the next document, so the contents of a file's documents
 * concatenated give back the file (empty documents' bytes go to the
 * preceding document). Every document must be a mapping with string
 * apiVersion and kind and a metadata.name; annotations (metadata.annotations)
 * must be a mapping. -EINVAL with a reason naming "file:line" in err (out
 * keeps the documents appended before, the caller frees), -E2BIG past the
 * limits above or when the file's aliases expand past yscan_alias_cap()
 * (yamlscan.h: they are not expanded here, but whoever applies the manifest
 * does), -ENOMEM. */
int manifest_parse_file(const char *file_name, const char *data, size_t len,
                        struct manifest_list *out, char *err, size_t errlen);

/* The value of annotation `key`, or NULL. */
const char *manifest_annotation(const struct manifest *m, const char *key);

/* Same object: group, kind, namespace (NULL == NULL) and name are equal. */
bool manifest_same_object(const struct manifest *a, const struct manifest *b);

/* {file, doc_index, path, api_version, group, version, kind, namespace?,
 * name, annotations{}, content?}; content only when with_content. NULL on
 * ENOMEM. */
json_object *manifest_to_json(const struct manifest *m, bool with_content);
/* The inverse (with content required); -EINVAL with a reason. m is left
 * freeable. */
int manifest_from_json(json_object *o, struct manifest *m, char *err, size_t errlen);

/* Deep copy of src appended to l. */
int manifest_list_append_copy(struct manifest_list *l, const struct manifest *src);
void manifest_free(struct manifest *m);
void manifest_list_free(struct manifest_list *l);
