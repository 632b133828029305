/* Release manifests (manifest.h): libyaml's event parser reads each document's
 * identity and annotations without building a tree, and each document's exact
 * bytes are cut at the marks of document starts. libyaml's marks count
 * characters, so they are turned into byte offsets by walking the UTF-8 input. */
#include "manifest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "jsonread.h"
#include "jsonwrite.h"
#include "yamlscan.h"

/* Limits of our own (manifest.h has the public ones). Group (a DNS subdomain)
 * "/" version (a DNS label); an annotation key is prefix "/" name; the total
 * of one object's annotations is Kubernetes' own 256 KiB. */
#define MAX_API_VERSION (253 + 1 + 63)
#define MAX_KIND 253
#define MAX_ANNOTATION_KEY (253 + 1 + 63)
#define MAX_ANNOTATIONS_BYTES (256 * 1024)
#define MAX_DEPTH 1000 /* nesting inside a document, skipped or read */

#define TAG_STR "tag:yaml.org,2002:str"
#define TAG_NULL "tag:yaml.org,2002:null"

struct mparse {
        const char *file;
        const char *data;
        size_t len;
        bool is_json;
        yaml_parser_t parser;
        yaml_event_t ev;
        bool have_ev;
        struct yscan_aliases aliases; /* what the aliases of the file stand for */
        char *err;
        size_t errlen;
};

__attribute__((format(printf, 4, 0)))
static int failv(struct mparse *p, int r, size_t line, const char *fmt, va_list ap) {
        if (p->err && p->errlen) {
                int n = line ? snprintf(p->err, p->errlen, "%s:%zu: ", p->file, line)
                             : snprintf(p->err, p->errlen, "%s: ", p->file);
                if (n >= 0 && (size_t) n < p->errlen)
                        vsnprintf(p->err + n, p->errlen - n, fmt, ap);
        }
        return r;
}

__attribute__((format(printf, 4, 5)))
static int fail(struct mparse *p, int r, size_t line, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        failv(p, r, line, fmt, ap);
        va_end(ap);
        return r;
}

/* libyaml puts the end of the stream on a line of its own; name the last
 * line of the file instead. */
static size_t clamp_line(const struct mparse *p, size_t line) {
        return yscan_clamp_line(p->data, p->len, line);
}

static int yaml_fail(struct mparse *p) {
        const yaml_parser_t *y = &p->parser;
        if (y->error == YAML_MEMORY_ERROR)
                return fail(p, -ENOMEM, 0, "out of memory");
        const char *problem = y->problem ? y->problem : "invalid YAML";
        if (y->error == YAML_READER_ERROR) {
                size_t line = yscan_line_of_offset(p->data, p->len, y->problem_offset);
                if (y->problem_value != -1)
                        return fail(p, -EINVAL, line, "%s (#%X at byte %zu)", problem,
                                    (unsigned) y->problem_value, y->problem_offset);
                return fail(p, -EINVAL, line, "%s (at byte %zu)", problem, y->problem_offset);
        }
        size_t line = clamp_line(p, y->problem_mark.line + 1);
        if (y->context)
                return fail(p, -EINVAL, line, "%s (%s at line %zu)", problem, y->context,
                            clamp_line(p, y->context_mark.line + 1));
        return fail(p, -EINVAL, line, "%s", problem);
}

static size_t ev_line(const struct mparse *p) {
        return p->ev.start_mark.line + 1;
}

/* The next event into p->ev (the previous one is released), its aliases
 * counted: they are not expanded here, but whoever reads the manifest
 * after us does. */
static int next(struct mparse *p) {
        if (p->have_ev) {
                yaml_event_delete(&p->ev);
                p->have_ev = false;
        }
        if (!yaml_parser_parse(&p->parser, &p->ev))
                return yaml_fail(p);
        p->have_ev = true;
        int r = yscan_aliases_event(&p->aliases, &p->ev);
        if (r < 0)
                return fail(p, r, r == -ENOMEM ? 0 : ev_line(p), "%s", p->aliases.why);
        return 0;
}

/* ---- plain scalar resolution (YAML 1.1 as Kubernetes' go-yaml reads it) -- */

static bool in_list(const char *s, size_t n, const char *const *list) {
        for (; *list; list++)
                if (strlen(*list) == n && memcmp(*list, s, n) == 0)
                        return true;
        return false;
}

static bool digits(const char *s, size_t n, size_t *i, const char *set) {
        size_t start = *i;
        while (*i < n && s[*i] && strchr(set, s[*i]))
                (*i)++;
        return *i > start;
}

/* Booleans, integers (0b, 0o, 0x, octal, decimal, '_' separators) and floats
 * (.inf, .nan, decimal with fraction or exponent). */
static bool plain_is_other(const char *s, size_t n) {
        static const char *const words[] = {
                "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                "true", "True", "TRUE", "false", "False", "FALSE",
                "on", "On", "ON", "off", "Off", "OFF",
                ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                ".nan", ".NaN", ".NAN", "<<", NULL,
        };
        if (in_list(s, n, words))
                return true;
        size_t i = 0;
        if (i < n && (s[i] == '+' || s[i] == '-'))
                i++;
        if (n - i > 2 && s[i] == '0' && strchr("bxo", s[i + 1])) {
                const char *set = s[i + 1] == 'b' ? "01_" : s[i + 1] == 'o' ? "01234567_" : "0123456789abcdefABCDEF_";
                i += 2;
                return digits(s, n, &i, set) && i == n;
        }
        bool mant = digits(s, n, &i, "0123456789_");
        if (i < n && s[i] == '.') {
                i++;
                mant = digits(s, n, &i, "0123456789_") || mant;
        }
        if (!mant)
                return false;
        if (i < n && (s[i] == 'e' || s[i] == 'E')) {
                i++;
                if (i < n && (s[i] == '+' || s[i] == '-'))
                        i++;
                if (!digits(s, n, &i, "0123456789"))
                        return false;
        }
        return i == n;
}

static bool tag_is(const yaml_event_t *e, const char *tag) {
        return e->data.scalar.tag && strcmp((const char *) e->data.scalar.tag, tag) == 0;
}

static bool scalar_is_null(const yaml_event_t *e) {
        if (e->type != YAML_SCALAR_EVENT)
                return false;
        if (e->data.scalar.tag)
                return tag_is(e, TAG_NULL);
        return e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               yscan_plain_is_null((const char *) e->data.scalar.value, e->data.scalar.length);
}

static bool scalar_is_string(const yaml_event_t *e) {
        if (e->type != YAML_SCALAR_EVENT)
                return false;
        if (e->data.scalar.tag)
                return tag_is(e, TAG_STR) || tag_is(e, "!");
        if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return true;
        const char *s = (const char *) e->data.scalar.value;
        size_t n = e->data.scalar.length;
        return !yscan_plain_is_null(s, n) && !plain_is_other(s, n);
}

static bool scalar_eq(const yaml_event_t *e, const char *s) {
        return e->type == YAML_SCALAR_EVENT && e->data.scalar.length == strlen(s) &&
               memcmp(e->data.scalar.value, s, e->data.scalar.length) == 0;
}

static bool is_merge_key(const yaml_event_t *e) {
        return scalar_eq(e, "<<") && e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !e->data.scalar.tag;
}

/* ---- reading one document ---------------------------------------------- */

/* Skip the node whose first event is p->ev. Inside metadata an alias is
 * refused: what it stands for is not read. */
static int skip_node(struct mparse *p, bool in_metadata) {
        size_t depth = 0;
        for (;;) {
                switch (p->ev.type) {
                case YAML_ALIAS_EVENT:
                        if (in_metadata)
                                return fail(p, -EINVAL, ev_line(p), "aliases are not allowed in metadata");
                        break;
                case YAML_SEQUENCE_START_EVENT:
                case YAML_MAPPING_START_EVENT:
                        if (++depth > MAX_DEPTH)
                                return fail(p, -E2BIG, ev_line(p), "nested deeper than %d levels", MAX_DEPTH);
                        break;
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        depth--;
                        break;
                default:
                        break;
                }
                if (depth == 0)
                        return 0;
                int r = next(p);
                if (r < 0)
                        return r;
        }
}

static bool has_control(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return true;
        return false;
}

/* p->ev must be a non-empty string scalar of at most max bytes without
 * control characters; *out gets a copy. */
static int take_string(struct mparse *p, const char *what, size_t max, char **out) {
        const yaml_event_t *e = &p->ev;
        if (e->type == YAML_ALIAS_EVENT)
                return fail(p, -EINVAL, ev_line(p), "aliases are not allowed for %s", what);
        if (!scalar_is_string(e))
                return fail(p, -EINVAL, ev_line(p), "%s must be a string", what);
        const char *s = (const char *) e->data.scalar.value;
        size_t n = e->data.scalar.length;
        if (n == 0)
                return fail(p, -EINVAL, ev_line(p), "%s must not be empty", what);
        if (n > max)
                return fail(p, -E2BIG, ev_line(p), "%s is longer than %zu bytes", what, max);
        if (has_control(s, n))
                return fail(p, -EINVAL, ev_line(p), "%s must not contain control characters", what);
        free(*out);
        *out = strndup(s, n);
        return *out ? 0 : fail(p, -ENOMEM, 0, "out of memory");
}

static int add_annotation(struct manifest *m, char *key, char *value) {
        if (!key || !value) {
                free(key);
                free(value);
                return -ENOMEM;
        }
        struct manifest_annotation *v = realloc(m->annotations, (m->n_annotations + 1) * sizeof *v);
        if (!v) {
                free(key);
                free(value);
                return -ENOMEM;
        }
        m->annotations = v;
        v[m->n_annotations++] = (struct manifest_annotation) { .key = key, .value = value };
        return 0;
}

/* The next key of the mapping being read into p->ev: 1, or 0 at the end of
 * the mapping. */
static int next_key(struct mparse *p) {
        int r = next(p);
        if (r < 0)
                return r;
        return p->ev.type == YAML_MAPPING_END_EVENT ? 0 : 1;
}

static int parse_annotations(struct mparse *p, struct manifest *m) {
        size_t total = 0;
        int r;
        while ((r = next_key(p)) > 0) {
                const yaml_event_t *e = &p->ev;
                if (e->type == YAML_ALIAS_EVENT)
                        return fail(p, -EINVAL, ev_line(p), "aliases are not allowed in metadata");
                if (e->type != YAML_SCALAR_EVENT || scalar_is_null(e) || is_merge_key(e))
                        return fail(p, -EINVAL, ev_line(p), "annotation keys must be strings");
                const char *k = (const char *) e->data.scalar.value;
                size_t kn = e->data.scalar.length;
                size_t line = ev_line(p);
                if (kn == 0)
                        return fail(p, -EINVAL, line, "empty annotation key");
                if (kn > MAX_ANNOTATION_KEY)
                        return fail(p, -E2BIG, line, "annotation key is longer than %d bytes", MAX_ANNOTATION_KEY);
                if (memchr(k, 0, kn))
                        return fail(p, -EINVAL, line, "annotation key contains a NUL byte");
                for (size_t i = 0; i < m->n_annotations; i++)
                        if (strlen(m->annotations[i].key) == kn && memcmp(m->annotations[i].key, k, kn) == 0)
                                return fail(p, -EINVAL, line, "duplicate annotation \"%.*s\"", (int) kn, k);
                if (m->n_annotations >= MANIFEST_MAX_ANNOTATIONS)
                        return fail(p, -E2BIG, line, "more than %d annotations", MANIFEST_MAX_ANNOTATIONS);
                _cleanup_free_ char *key = strndup(k, kn);
                if (!key)
                        return fail(p, -ENOMEM, 0, "out of memory");

                if ((r = next(p)) < 0)
                        return r;
                e = &p->ev;
                char *value;
                if (e->type == YAML_SCALAR_EVENT) {
                        const char *v = (const char *) e->data.scalar.value;
                        size_t vn = scalar_is_null(e) ? 0 : e->data.scalar.length;
                        if (memchr(v, 0, vn))
                                return fail(p, -EINVAL, ev_line(p), "annotation \"%s\" contains a NUL byte", key);
                        total += vn;
                        value = strndup(v, vn);
                } else {
                        if ((r = skip_node(p, true)) < 0)
                                return r;
                        value = strdup("");
                }
                total += kn;
                if (total > MAX_ANNOTATIONS_BYTES) {
                        free(value);
                        return fail(p, -E2BIG, line, "annotations are larger than %d bytes", MAX_ANNOTATIONS_BYTES);
                }
                if (add_annotation(m, TAKE_PTR(key), value) < 0)
                        return fail(p, -ENOMEM, 0, "out of memory");
        }
        return r;
}

/* The keys of a mapping that are read; any other key is skipped. */
struct keyset {
        const char *const *names; /* NULL-terminated */
        bool *seen;               /* one a name */
        const char *where;        /* "at the top level", "in metadata" */
        const char *prefix;       /* before a key's name in messages */
        bool in_metadata;         /* for skip_node() */
};

/* p->ev is a key: *k gets its index in ks->names (-1 for another key, which
 * is skipped) and p->ev moves on to its value. */
static int read_key(struct mparse *p, const struct keyset *ks, int *k) {
        size_t line = ev_line(p);
        int r;
        *k = -1;
        if (is_merge_key(&p->ev))
                return fail(p, -EINVAL, line, "merge keys (<<) are not allowed %s", ks->where);
        for (int i = 0; ks->names[i]; i++)
                if (scalar_eq(&p->ev, ks->names[i])) {
                        *k = i;
                        break;
                }
        if (*k < 0 && (r = skip_node(p, ks->in_metadata)) < 0)
                return r;
        if (*k >= 0) {
                if (ks->seen[*k])
                        return fail(p, -EINVAL, line, "duplicate key %s%s", ks->prefix, ks->names[*k]);
                ks->seen[*k] = true;
        }
        return next(p);
}

/* p->ev is the value of a key that holds a mapping (`what`, aliases refused
 * `alias_where`): 1 for a mapping, 0 for null. */
static int mapping_value(struct mparse *p, const char *what, const char *alias_where) {
        const yaml_event_t *e = &p->ev;
        if (scalar_is_null(e))
                return 0;
        if (e->type == YAML_ALIAS_EVENT)
                return fail(p, -EINVAL, ev_line(p), "aliases are not allowed %s", alias_where);
        if (e->type != YAML_MAPPING_START_EVENT)
                return fail(p, -EINVAL, ev_line(p), "%s must be a mapping", what);
        return 1;
}

static int parse_metadata(struct mparse *p, struct manifest *m) {
        static const char *const names[] = { "name", "namespace", "annotations", NULL };
        enum { K_OTHER = -1, K_NAME, K_NS, K_ANN };
        bool seen[3] = { 0 };
        const struct keyset ks = {
                .names = names, .seen = seen, .where = "in metadata", .prefix = "metadata.", .in_metadata = true,
        };
        int r, k;
        while ((r = next_key(p)) > 0) {
                if ((r = read_key(p, &ks, &k)) < 0)
                        return r;
                const yaml_event_t *e = &p->ev;
                switch (k) {
                case K_NAME:
                        r = take_string(p, "metadata.name", MANIFEST_MAX_NAME, &m->name);
                        break;
                case K_NS:
                        if (scalar_is_null(e) || (scalar_is_string(e) && e->data.scalar.length == 0))
                                break; /* "" is no namespace, as in Kubernetes */
                        r = take_string(p, "metadata.namespace", MANIFEST_MAX_NAME, &m->namespace);
                        break;
                case K_ANN:
                        if ((r = mapping_value(p, "metadata.annotations", "in metadata")) > 0)
                                r = parse_annotations(p, m);
                        break;
                case K_OTHER:
                        r = skip_node(p, true);
                        break;
                }
                if (r < 0)
                        return r;
        }
        return r;
}

/* The document's root mapping; p->ev is its MAPPING_START. */
/* m->group and m->version from m->api_version: "group/version", or
 * "version" (the core group). 0, -EINVAL (neither) or -ENOMEM. */
static int split_api_version(struct manifest *m) {
        const char *slash = strchr(m->api_version, '/');
        if (slash && (slash == m->api_version || !slash[1] || strchr(slash + 1, '/')))
                return -EINVAL;
        m->group = slash ? strndup(m->api_version, slash - m->api_version) : strdup("");
        m->version = strdup(slash ? slash + 1 : m->api_version);
        if (!m->group || !m->version)
                return -ENOMEM;
        return 0;
}

static int parse_root(struct mparse *p, struct manifest *m) {
        static const char *const names[] = { "apiVersion", "kind", "metadata", NULL };
        enum { K_OTHER = -1, K_API, K_KIND, K_META };
        bool seen[3] = { 0 };
        const struct keyset ks = {
                .names = names, .seen = seen, .where = "at the top level", .prefix = "", .in_metadata = false,
        };
        size_t doc_line = ev_line(p);
        int r, k;
        while ((r = next_key(p)) > 0) {
                if ((r = read_key(p, &ks, &k)) < 0)
                        return r;
                switch (k) {
                case K_API:
                        r = take_string(p, "apiVersion", MAX_API_VERSION, &m->api_version);
                        break;
                case K_KIND:
                        r = take_string(p, "kind", MAX_KIND, &m->kind);
                        break;
                case K_META:
                        if ((r = mapping_value(p, "metadata", "for metadata")) > 0)
                                r = parse_metadata(p, m);
                        break;
                case K_OTHER:
                        r = skip_node(p, false);
                        break;
                }
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        if (!m->api_version)
                return fail(p, -EINVAL, doc_line, "missing apiVersion");
        if (!m->kind)
                return fail(p, -EINVAL, doc_line, "missing kind");
        if (!m->name)
                return fail(p, -EINVAL, doc_line, "missing metadata.name");

        r = split_api_version(m);
        if (r == -EINVAL)
                return fail(p, -EINVAL, doc_line, "apiVersion \"%s\" is not group/version", m->api_version);
        if (r < 0)
                return fail(p, -ENOMEM, 0, "out of memory");
        return 0;
}

/* ---- file names and lists ---------------------------------------------- */

static const char *const exts[] = { ".yaml", ".yml", ".json", NULL };

/* The extension of a valid manifest file name, or NULL. */
static const char *file_ext(const char *name) {
        size_t n = strlen(name);
        for (const char *const *e = exts; *e; e++) {
                size_t en = strlen(*e);
                if (n > en && strcmp(name + n - en, *e) == 0)
                        return name + n - en;
        }
        return NULL;
}

/* A plain file name: no '/', no leading '.', no control characters. */
static int check_plain_name(const char *name, char *why, size_t whylen) {
        if (!name || !*name)
                return snprintf(why, whylen, "empty file name"), -EINVAL;
        if (strlen(name) > MANIFEST_MAX_FILE_NAME)
                return snprintf(why, whylen, "file name is longer than %d bytes", MANIFEST_MAX_FILE_NAME), -E2BIG;
        if (strchr(name, '/'))
                return snprintf(why, whylen, "file name \"%s\" contains '/'", name), -EINVAL;
        if (name[0] == '.')
                return snprintf(why, whylen, "file name \"%s\" starts with '.'", name), -EINVAL;
        if (has_control(name, strlen(name)))
                return snprintf(why, whylen, "file name contains control characters"), -EINVAL;
        return 0;
}

static int check_file_name(const char *name, char *why, size_t whylen) {
        int r = check_plain_name(name, why, whylen);
        if (r < 0)
                return r;
        if (!file_ext(name))
                return snprintf(why, whylen, "file name \"%s\" does not end in .yaml, .yml or .json", name), -EINVAL;
        return 0;
}

/* "a.yaml" document 2 -> "a.2.yaml". */
static char *doc_path(const char *file, unsigned idx) {
        const char *ext = file_ext(file);
        char *s;
        if (!ext || asprintf(&s, "%.*s.%u%s", (int) (ext - file), file, idx, ext) < 0)
                return NULL;
        return s;
}

static int list_reserve(struct manifest_list *l, size_t extra) {
        if (extra > SIZE_MAX / sizeof *l->v - l->n)
                return -ENOMEM;
        if (l->n + extra <= l->cap)
                return 0;
        size_t cap = l->cap ? l->cap : 16;
        while (cap < l->n + extra)
                cap *= 2;
        struct manifest *v = realloc(l->v, cap * sizeof *v);
        if (!v)
                return -ENOMEM;
        l->v = v;
        l->cap = cap;
        return 0;
}

/* ---- the file ----------------------------------------------------------- */

struct doc {
        struct manifest m;
        size_t start_char; /* libyaml's index of its DOCUMENT_START */
};

struct docs {
        struct doc *v;
        size_t n;
};

static void docs_free(struct docs *d) {
        for (size_t i = 0; i < d->n; i++)
                manifest_free(&d->v[i].m);
        free(d->v);
        *d = (struct docs) { 0 };
}

static void parser_done(struct mparse *p) {
        if (p->have_ev)
                yaml_event_delete(&p->ev);
        p->have_ev = false;
        yaml_parser_delete(&p->parser);
        yscan_aliases_done(&p->aliases);
}

static size_t utf8_width(unsigned char c) {
        if (c < 0x80)
                return 1;
        if ((c & 0xe0) == 0xc0)
                return 2;
        if ((c & 0xf0) == 0xe0)
                return 3;
        if ((c & 0xf8) == 0xf0)
                return 4;
        return 1;
}

static int parse_stream(struct mparse *p, struct docs *docs) {
        int r;
        if ((r = next(p)) < 0)
                return r;
        if (p->ev.type != YAML_STREAM_START_EVENT)
                return fail(p, -EINVAL, 1, "not a YAML stream");
        size_t cap = 0;
        for (;;) {
                if ((r = next(p)) < 0)
                        return r;
                if (p->ev.type == YAML_STREAM_END_EVENT)
                        return 0;
                if (p->ev.type != YAML_DOCUMENT_START_EVENT)
                        return fail(p, -EINVAL, ev_line(p), "expected a document");
                size_t start = p->ev.start_mark.index;

                if ((r = next(p)) < 0)
                        return r;
                if (scalar_is_null(&p->ev)) {
                        /* An empty document: its bytes stay with the one before. */
                } else if (p->ev.type != YAML_MAPPING_START_EVENT) {
                        return fail(p, -EINVAL, ev_line(p), "document is not a mapping");
                } else {
                        if (docs->n >= MANIFEST_MAX_DOCS_PER_FILE)
                                return fail(p, -E2BIG, ev_line(p), "more than %d documents", MANIFEST_MAX_DOCS_PER_FILE);
                        if (p->is_json && docs->n >= 1)
                                return fail(p, -EINVAL, ev_line(p), "a JSON file holds one document");
                        if (docs->n == cap) {
                                size_t ncap = cap ? cap * 2 : 4;
                                struct doc *v = realloc(docs->v, ncap * sizeof *v);
                                if (!v)
                                        return fail(p, -ENOMEM, 0, "out of memory");
                                docs->v = v;
                                cap = ncap;
                        }
                        struct doc *d = &docs->v[docs->n++];
                        *d = (struct doc) { .start_char = start };
                        if ((r = parse_root(p, &d->m)) < 0)
                                return r;
                }
                if ((r = next(p)) < 0)
                        return r;
                if (p->ev.type != YAML_DOCUMENT_END_EVENT)
                        return fail(p, -EINVAL, ev_line(p), "expected the end of the document");
        }
}

/* YAML accepts more than JSON does (comments, plain scalars, block style); a
 * .json file must be JSON for whoever reads it next. */
static int check_json(struct mparse *p) {
        const char *d = p->data;
        size_t n = p->len;
        if (n >= 3 && memcmp(d, "\xef\xbb\xbf", 3) == 0)
                d += 3, n -= 3;
        struct json_tokener *tok = json_tokener_new_ex(MAX_DEPTH);
        if (!tok)
                return fail(p, -ENOMEM, 0, "out of memory");
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        json_object *o = json_tokener_parse_ex(tok, d, (int) n);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        size_t end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        json_object_put(o);
        if (jerr == json_tokener_continue)
                return fail(p, -EINVAL, yscan_line_of_offset(d, n, n), "not valid JSON: unexpected end of input");
        if (jerr != json_tokener_success)
                return fail(p, -EINVAL, yscan_line_of_offset(d, n, end), "not valid JSON: %s",
                            json_tokener_error_desc(jerr));
        for (size_t i = end; i < n; i++)
                if (!strchr(" \t\r\n", d[i]))
                        return fail(p, -EINVAL, yscan_line_of_offset(d, n, i), "not valid JSON: data after the value");
        return 0;
}

int manifest_parse_file(const char *file_name, const char *data, size_t len,
                        struct manifest_list *out, char *err, size_t errlen) {
        struct mparse p = {
                .file = file_name ? file_name : "(null)", .data = data, .len = len,
                .err = err, .errlen = errlen,
        };
        char why[MANIFEST_MAX_FILE_NAME + 64];
        int r = check_file_name(file_name, why, sizeof why);
        if (r < 0) {
                p.file = "manifest";
                return fail(&p, r, 0, "%s", why);
        }
        if (len > MANIFEST_MAX_FILE)
                return fail(&p, -E2BIG, 0, "file is larger than %d bytes", MANIFEST_MAX_FILE);
        if (!data && len)
                return fail(&p, -EINVAL, 0, "no data");
        p.is_json = strcmp(file_ext(file_name), ".json") == 0;

        /* UTF-8 only: the marks count characters of UTF-8 text, which is what
         * the byte walk below counts. libyaml takes a UTF-8 BOM off before it
         * counts. */
        if (len >= 2 && (memcmp(data, "\xff\xfe", 2) == 0 || memcmp(data, "\xfe\xff", 2) == 0))
                return fail(&p, -EINVAL, 1, "UTF-16 is not supported, use UTF-8");
        size_t bom = len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
        if (!yaml_parser_initialize(&p.parser))
                return fail(&p, -ENOMEM, 0, "out of memory");
        yscan_aliases_init(&p.aliases, len);
        yaml_parser_set_input_string(&p.parser, (const unsigned char *) (data ? data : ""), len);
        struct docs docs = { 0 };
        r = parse_stream(&p, &docs);
        parser_done(&p);
        if (r >= 0 && p.is_json && docs.n)
                r = check_json(&p);
        if (r < 0)
                goto error;

        /* Cut: document i runs from its start (0 for the first) to the next
         * one's. libyaml counts characters; walk the UTF-8 bytes. */
        size_t *starts = NULL;
        if (docs.n && !(starts = calloc(docs.n + 1, sizeof *starts))) {
                r = fail(&p, -ENOMEM, 0, "out of memory");
                goto error;
        }
        size_t ci = 0, bi = bom;
        for (size_t i = 1; i < docs.n; i++) {
                while (ci < docs.v[i].start_char && bi < len) {
                        bi += utf8_width((unsigned char) data[bi]);
                        ci++;
                }
                if (bi > len)
                        bi = len;
                /* A document after the first starts with "---" or a directive. */
                if (bi <= starts[i - 1] || bi >= len || (data[bi] != '-' && data[bi] != '%')) {
                        free(starts);
                        r = fail(&p, -EINVAL, 0, "cannot locate the start of document %zu", i);
                        goto error;
                }
                starts[i] = bi;
        }
        if (docs.n)
                starts[docs.n] = len;

        for (size_t i = 0; i < docs.n && r >= 0; i++) {
                struct manifest *m = &docs.v[i].m;
                m->doc_index = (unsigned) i;
                m->file = strdup(file_name);
                m->path = docs.n == 1 ? strdup(file_name) : doc_path(file_name, (unsigned) i);
                m->content_len = starts[i + 1] - starts[i];
                m->content = malloc(m->content_len + 1);
                if (!m->file || !m->path || !m->content) {
                        r = fail(&p, -ENOMEM, 0, "out of memory");
                        break;
                }
                if (m->content_len)
                        memcpy(m->content, data + starts[i], m->content_len);
                m->content[m->content_len] = 0;
                if (strlen(m->path) > MANIFEST_MAX_FILE_NAME)
                        r = fail(&p, -E2BIG, 0, "file name is too long for %zu documents", docs.n);
        }
        free(starts);
        if (r < 0)
                goto error;
        if (list_reserve(out, docs.n) < 0) {
                r = fail(&p, -ENOMEM, 0, "out of memory");
                goto error;
        }
        for (size_t i = 0; i < docs.n; i++)
                out->v[out->n++] = docs.v[i].m;
        free(docs.v);
        return 0;
error:
        docs_free(&docs);
        return r;
}

const char *manifest_annotation(const struct manifest *m, const char *key) {
        if (!m || !key)
                return NULL;
        for (size_t i = 0; i < m->n_annotations; i++)
                if (strcmp(m->annotations[i].key, key) == 0)
                        return m->annotations[i].value;
        return NULL;
}

static bool str_eq(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

bool manifest_same_object(const struct manifest *a, const struct manifest *b) {
        return str_eq(a->group, b->group) && str_eq(a->kind, b->kind) &&
               str_eq(a->namespace, b->namespace) && str_eq(a->name, b->name);
}

/* ---- JSON ---------------------------------------------------------------- */

static json_object *annotations_json(const struct manifest *m) {
        _cleanup_json_ json_object *ann = json_object_new_object();
        if (!ann)
                return NULL;
        for (size_t i = 0; i < m->n_annotations; i++)
                if (jadd(ann, m->annotations[i].key, jstr_or_empty(m->annotations[i].value)) < 0)
                        return NULL;
        return TAKE_PTR(ann);
}

json_object *manifest_to_json(const struct manifest *m, bool with_content) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "file", jstr_or_empty(m->file)) < 0 ||
            jadd(o, "doc_index", json_object_new_int64(m->doc_index)) < 0 ||
            jadd(o, "path", jstr_or_empty(m->path)) < 0 ||
            jadd(o, "api_version", jstr_or_empty(m->api_version)) < 0 ||
            jadd(o, "group", jstr_or_empty(m->group)) < 0 ||
            jadd(o, "version", jstr_or_empty(m->version)) < 0 ||
            jadd(o, "kind", jstr_or_empty(m->kind)) < 0 ||
            (m->namespace && jadd(o, "namespace", jstr_or_empty(m->namespace)) < 0) ||
            jadd(o, "name", jstr_or_empty(m->name)) < 0 ||
            jadd(o, "annotations", annotations_json(m)) < 0)
                return NULL;
        if (with_content &&
            jadd(o, "content", json_object_new_string_len(m->content ? m->content : "", (int) m->content_len)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* A required string member: non-empty, at most max bytes, no control
 * characters (NUL included). */
static void jident(json_object *o, const char *k, char **out, size_t max, bool required, struct jctx *c) {
        jget_str(o, k, out, max, c);
        if (c->r < 0)
                return;
        if (!*out) {
                if (required)
                        jfail(c, "field \"%s\" is required", k);
        } else if (!**out) {
                jfail(c, "field \"%s\" must not be empty", k);
        } else if (has_control(*out, strlen(*out))) {
                jfail(c, "field \"%s\" must not contain control characters", k);
        }
}

/* Where the manifest comes from: "file", "doc_index", and "path", which is
 * the file's name or the name of that document of it. */
static void origin_from_json(json_object *o, struct manifest *m, struct jctx *c) {
        char why[MANIFEST_MAX_FILE_NAME + 64];
        jident(o, "file", &m->file, MANIFEST_MAX_FILE_NAME, true, c);
        if (c->r == 0 && check_file_name(m->file, why, sizeof why) < 0)
                jfail(c, "field \"file\": %s", why);
        int64_t idx = 0;
        jget_i64(o, "doc_index", &idx, MANIFEST_MAX_DOCS_PER_FILE - 1, c);
        m->doc_index = (unsigned) idx;
        jident(o, "path", &m->path, MANIFEST_MAX_FILE_NAME, true, c);
        if (c->r == 0) {
                _cleanup_free_ char *derived = doc_path(m->file, m->doc_index);
                if (!derived)
                        joom(c);
                else if (strcmp(m->path, m->file) != 0 && strcmp(m->path, derived) != 0)
                        jfail(c, "field \"path\" must be \"%s\" or \"%s\"", m->file, derived);
        }
}

/* "annotations": an object of strings, within the limits. */
static void annotations_from_json(json_object *o, struct manifest *m, struct jctx *c) {
        json_object *ann = jget(o, "annotations", json_type_object, c);
        if (ann && json_object_object_length(ann) > MANIFEST_MAX_ANNOTATIONS)
                jfail(c, "field \"annotations\" has more than %d entries", MANIFEST_MAX_ANNOTATIONS);
        if (!ann || c->r != 0)
                return;
        size_t total = 0;
        json_object_object_foreach(ann, k, v) {
                if (c->r < 0)
                        break;
                if (!json_object_is_type(v, json_type_string)) {
                        jfail(c, "annotation \"%s\" must be a string", k);
                        break;
                }
                size_t kn = strlen(k), vn = (size_t) json_object_get_string_len(v);
                total += kn + vn;
                if (!kn || kn > MAX_ANNOTATION_KEY)
                        jfail(c, "annotation keys must be 1 to %d bytes", MAX_ANNOTATION_KEY);
                else if (total > MAX_ANNOTATIONS_BYTES)
                        jfail(c, "annotations are larger than %d bytes", MAX_ANNOTATIONS_BYTES);
                else if (strlen(json_object_get_string(v)) != vn)
                        jfail(c, "annotation \"%s\" contains a NUL byte", k);
                else if (add_annotation(m, strdup(k), strdup(json_object_get_string(v))) < 0)
                        joom(c);
        }
}

/* "content": required, at most MANIFEST_MAX_FILE bytes, no NUL. */
static void content_from_json(json_object *o, struct manifest *m, struct jctx *c) {
        json_object *content = jget(o, "content", json_type_string, c);
        if (c->r < 0)
                return;
        if (!content) {
                jfail(c, "field \"content\" is required");
                return;
        }
        size_t n = (size_t) json_object_get_string_len(content);
        const char *s = json_object_get_string(content);
        if (n > MANIFEST_MAX_FILE)
                jfail(c, "field \"content\" is larger than %d bytes", MANIFEST_MAX_FILE);
        else if (memchr(s, 0, n))
                jfail(c, "field \"content\" contains a NUL byte");
        else if (!(m->content = malloc(n + 1)))
                joom(c);
        else {
                memcpy(m->content, s, n);
                m->content[n] = 0;
                m->content_len = n;
        }
}

int manifest_from_json(json_object *o, struct manifest *m, char *err, size_t errlen) {
        struct jctx c = { .err = err, .errlen = errlen };
        *m = (struct manifest) { 0 };
        if (!json_object_is_type(o, json_type_object)) {
                jfail(&c, "a manifest must be an object");
                return c.r;
        }
        origin_from_json(o, m, &c);
        jident(o, "api_version", &m->api_version, MAX_API_VERSION, true, &c);
        jident(o, "kind", &m->kind, MAX_KIND, true, &c);
        jident(o, "name", &m->name, MANIFEST_MAX_NAME, true, &c);
        jident(o, "namespace", &m->namespace, MANIFEST_MAX_NAME, false, &c);
        if (c.r < 0)
                return c.r;

        int r = split_api_version(m);
        if (r == -EINVAL)
                jfail(&c, "field \"api_version\" is not group/version");
        else if (r < 0)
                joom(&c);
        if (r < 0)
                return c.r;
        _cleanup_free_ char *group = NULL, *version = NULL;
        jget_str(o, "group", &group, MAX_API_VERSION, &c);
        jget_str(o, "version", &version, MAX_API_VERSION, &c);
        if (c.r == 0 && group && strcmp(group, m->group) != 0)
                jfail(&c, "field \"group\" does not match api_version");
        if (c.r == 0 && version && strcmp(version, m->version) != 0)
                jfail(&c, "field \"version\" does not match api_version");

        annotations_from_json(o, m, &c);
        if (c.r < 0)
                return c.r;
        content_from_json(o, m, &c);
        return c.r;
}

static char *dup_or_null(const char *s, bool *oom) {
        if (!s)
                return NULL;
        char *d = strdup(s);
        if (!d)
                *oom = true;
        return d;
}

int manifest_list_append_copy(struct manifest_list *l, const struct manifest *src) {
        if (list_reserve(l, 1) < 0)
                return -ENOMEM;
        bool oom = false;
        struct manifest m = {
                .file = dup_or_null(src->file, &oom),
                .doc_index = src->doc_index,
                .path = dup_or_null(src->path, &oom),
                .api_version = dup_or_null(src->api_version, &oom),
                .group = dup_or_null(src->group, &oom),
                .version = dup_or_null(src->version, &oom),
                .kind = dup_or_null(src->kind, &oom),
                .namespace = dup_or_null(src->namespace, &oom),
                .name = dup_or_null(src->name, &oom),
        };
        if (!oom && src->n_annotations) {
                m.annotations = calloc(src->n_annotations, sizeof *m.annotations);
                if (!m.annotations)
                        oom = true;
                for (size_t i = 0; i < src->n_annotations && !oom; i++) {
                        m.annotations[i].key = dup_or_null(src->annotations[i].key, &oom);
                        m.annotations[i].value = dup_or_null(src->annotations[i].value, &oom);
                        m.n_annotations = i + 1;
                }
        }
        if (!oom && src->content) {
                if ((m.content = malloc(src->content_len + 1))) {
                        memcpy(m.content, src->content, src->content_len);
                        m.content[src->content_len] = 0;
                        m.content_len = src->content_len;
                } else {
                        oom = true;
                }
        }
        if (oom) {
                manifest_free(&m);
                return -ENOMEM;
        }
        l->v[l->n++] = m;
        return 0;
}

void manifest_free(struct manifest *m) {
        if (!m)
                return;
        free(m->file);
        free(m->path);
        free(m->api_version);
        free(m->group);
        free(m->version);
        free(m->kind);
        free(m->namespace);
        free(m->name);
        for (size_t i = 0; i < m->n_annotations; i++) {
                free(m->annotations[i].key);
                free(m->annotations[i].value);
        }
        free(m->annotations);
        free(m->content);
        *m = (struct manifest) { 0 };
}

void manifest_list_free(struct manifest_list *l) {
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                manifest_free(&l->v[i]);
        free(l->v);
        *l = (struct manifest_list) { 0 };
}
