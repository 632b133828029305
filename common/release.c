/* release.yaml (release.h): libyaml events build a small bounded tree, JSON
 * objects are turned into the same tree, and one validator reads it, so the
 * YAML file and the stored JSON pass the same checks. */
#include "release.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cleanup.h"
#include "json-cleanup.h"
#include "yamlscan.h"

/* Limits of release.yaml itself (release.h has the public ones). Going past
 * any limit is -EINVAL with a reason, like any other bad field; only a file
 * larger than RELEASE_MAX_YAML is -E2BIG. */
#define RELEASE_MAX_YAML (4 * 1024 * 1024)
#define MAX_DEPTH 32
#define MAX_NODES 100000
#define MAX_NAME 64        /* capability, set, profile and root label names */
#define MAX_LOCATION 4096  /* os_image.url and os_image.path */

#define TAG_STR "tag:yaml.org,2002:str"
#define TAG_NULL "tag:yaml.org,2002:null"

/* ---- the tree ------------------------------------------------------------ */

enum ynode_type { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
        enum ynode_type type;
        size_t line;         /* 1-based; 0 when read from JSON */
        char *text;          /* scalar, NUL-terminated */
        size_t len;
        bool is_null;        /* a null scalar (plain ~, null, empty; !!null) */
        bool quoted;         /* quoted, block or !!str: a string, never a number */
        struct ynode **kids; /* sequence items; mapping key, value, key, value... */
        size_t n, cap;
};

static void ynode_free(struct ynode *n) {
        if (!n)
                return;
        for (size_t i = 0; i < n->n; i++)
                ynode_free(n->kids[i]);
        free(n->kids);
        free(n->text);
        free(n);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct ynode *, ynode_free)

static int ynode_append(struct ynode *parent, struct ynode *kid) {
        if (parent->n == parent->cap) {
                size_t cap = parent->cap ? parent->cap * 2 : 8;
                struct ynode **v = realloc(parent->kids, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                parent->kids = v;
                parent->cap = cap;
        }
        parent->kids[parent->n++] = kid;
        return 0;
}

static struct ynode *scalar_node(const char *s, size_t len, size_t line, bool is_null, bool quoted) {
        struct ynode *n = calloc(1, sizeof *n);
        if (!n)
                return NULL;
        *n = (struct ynode) { .type = YN_SCALAR, .line = line, .len = len, .is_null = is_null, .quoted = quoted };
        if (!(n->text = malloc(len + 1))) {
                free(n);
                return NULL;
        }
        if (len)
                memcpy(n->text, s, len);
        n->text[len] = 0;
        return n;
}

/* ---- errors -------------------------------------------------------------- */

struct vctx {
        char *err;
        size_t errlen;
};

__attribute__((format(printf, 4, 5)))
static int fail(struct vctx *c, int r, size_t line, const char *fmt, ...) {
        if (c->err && c->errlen) {
                int n = line ? snprintf(c->err, c->errlen, "release.yaml:%zu: ", line) : 0;
                if (n >= 0 && (size_t) n < c->errlen) {
                        va_list ap;
                        va_start(ap, fmt);
                        vsnprintf(c->err + n, c->errlen - n, fmt, ap);
                        va_end(ap);
                }
        }
        return r;
}

/* ---- YAML -> tree ---------------------------------------------------------- */

static int yaml_fail(struct vctx *c, const yaml_parser_t *y, const char *data, size_t len) {
        if (y->error == YAML_MEMORY_ERROR)
                return fail(c, -ENOMEM, 0, "out of memory");
        const char *problem = y->problem ? y->problem : "invalid YAML";
        if (y->error == YAML_READER_ERROR)
                return fail(c, -EINVAL, yscan_line_of_offset(data, len, y->problem_offset), "%s (at byte %zu)",
                            problem, y->problem_offset);
        size_t line = yscan_clamp_line(data, len, y->problem_mark.line + 1);
        if (y->context)
                return fail(c, -EINVAL, line, "%s (%s at line %zu)", problem, y->context,
                            yscan_clamp_line(data, len, y->context_mark.line + 1));
        return fail(c, -EINVAL, line, "%s", problem);
}

struct ybuild {
        yaml_parser_t parser;
        yaml_event_t ev;
        bool have_ev;
        struct ynode *root;
        struct ynode *stack[MAX_DEPTH]; /* the sequences and mappings still open */
        size_t depth, nodes;
};

static void ybuild_done(struct ybuild *b) {
        if (b->have_ev)
                yaml_event_delete(&b->ev);
        yaml_parser_delete(&b->parser);
        ynode_free(b->root);
}

static int ynext(struct ybuild *b, struct vctx *c, const char *data, size_t len) {
        if (b->have_ev)
                yaml_event_delete(&b->ev);
        b->have_ev = false;
        if (!yaml_parser_parse(&b->parser, &b->ev))
                return yaml_fail(c, &b->parser, data, len);
        b->have_ev = true;
        return 0;
}

/* The node of a scalar event, or of the start of a sequence or mapping
 * opened at `depth`. 0, or -errno with the reason in c. */
static int event_node(const yaml_event_t *e, size_t depth, struct ynode **out, struct vctx *c) {
        size_t line = e->start_mark.line + 1;
        struct ynode *n = NULL;

        if (e->type == YAML_SCALAR_EVENT) {
                const char *tag = (const char *) e->data.scalar.tag;
                const char *s = (const char *) e->data.scalar.value;
                size_t sn = e->data.scalar.length;
                bool plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                bool is_null = tag ? strcmp(tag, TAG_NULL) == 0 : plain && yscan_plain_is_null(s, sn);
                bool quoted = tag ? strcmp(tag, TAG_STR) == 0 || strcmp(tag, "!") == 0 : !plain;
                if (memchr(s, 0, sn))
                        return fail(c, -EINVAL, line, "a value contains a NUL byte");
                n = scalar_node(s, is_null ? 0 : sn, line, is_null, quoted);
        } else {
                if (depth >= MAX_DEPTH)
                        return fail(c, -EINVAL, line, "nested deeper than %d levels", MAX_DEPTH);
                if ((n = calloc(1, sizeof *n)))
                        *n = (struct ynode) {
                                .type = e->type == YAML_SEQUENCE_START_EVENT ? YN_SEQ : YN_MAP,
                                .line = line,
                        };
        }
        if (!n)
                return fail(c, -ENOMEM, 0, "out of memory");
        *out = n;
        return 0;
}

/* Hang n (owned) under the innermost open sequence or mapping, or make it
 * the root; a sequence or mapping stays open until its end event. */
static int ybuild_add(struct ybuild *b, struct ynode *n, size_t line, struct vctx *c) {
        if (++b->nodes > MAX_NODES) {
                ynode_free(n);
                return fail(c, -EINVAL, line, "more than %d values", MAX_NODES);
        }
        if (b->depth == 0) {
                b->root = n;
        } else if (ynode_append(b->stack[b->depth - 1], n) < 0) {
                ynode_free(n);
                return fail(c, -ENOMEM, 0, "out of memory");
        }
        if (n->type != YN_SCALAR)
                b->stack[b->depth++] = n;
        return 0;
}

/* The one document of data as a tree; *out NULL for an empty document. */
static int yaml_tree(const char *data, size_t len, struct ynode **out, struct vctx *c) {
        struct ybuild b = { 0 };
        int r;

        if (!yaml_parser_initialize(&b.parser))
                return fail(c, -ENOMEM, 0, "out of memory");
        yaml_parser_set_input_string(&b.parser, (const unsigned char *) data, len);

        bool in_doc = false, done = false;
        while (!done) {
                if ((r = ynext(&b, c, data, len)) < 0)
                        goto out;
                yaml_event_t *e = &b.ev;
                size_t line = e->start_mark.line + 1;
                struct ynode *n = NULL;
                switch (e->type) {
                case YAML_STREAM_START_EVENT:
                case YAML_NO_EVENT:
                        continue;
                case YAML_STREAM_END_EVENT:
                        done = true;
                        continue;
                case YAML_DOCUMENT_START_EVENT:
                        if (b.root || in_doc) {
                                r = fail(c, -EINVAL, line, "release.yaml must hold one document");
                                goto out;
                        }
                        in_doc = true;
                        continue;
                case YAML_DOCUMENT_END_EVENT:
                        continue;
                case YAML_ALIAS_EVENT:
                        r = fail(c, -EINVAL, line, "aliases are not supported");
                        goto out;
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        b.depth--;
                        continue;
                case YAML_SCALAR_EVENT:
                case YAML_SEQUENCE_START_EVENT:
                case YAML_MAPPING_START_EVENT:
                        break;
                }
                if ((r = event_node(e, b.depth, &n, c)) < 0 || (r = ybuild_add(&b, n, line, c)) < 0)
                        goto out;
        }
        if (b.root && b.root->type == YN_SCALAR && b.root->is_null) {
                ynode_free(b.root);
                b.root = NULL;
        }
        *out = TAKE_PTR(b.root);
        r = 0;
out:
        ybuild_done(&b);
        return r;
}

/* ---- JSON -> tree ---------------------------------------------------------- */

static int json_tree(json_object *o, unsigned depth, struct ynode **out, size_t *nodes, struct vctx *c);

/* The tree of o appended to parent. */
static int json_kid(struct ynode *parent, json_object *o, unsigned depth, size_t *nodes, struct vctx *c) {
        struct ynode *kid = NULL;
        int r = json_tree(o, depth, &kid, nodes, c);
        if (r < 0)
                return r;
        if (ynode_append(parent, kid) < 0) {
                ynode_free(kid);
                return fail(c, -ENOMEM, 0, "out of memory");
        }
        return 0;
}

static int json_tree(json_object *o, unsigned depth, struct ynode **out, size_t *nodes, struct vctx *c) {
        if (depth >= MAX_DEPTH)
                return fail(c, -EINVAL, 0, "nested deeper than %d levels", MAX_DEPTH);
        if (++*nodes > MAX_NODES)
                return fail(c, -EINVAL, 0, "more than %d values", MAX_NODES);
        _cleanup_(ynode_freep) struct ynode *n = NULL;
        switch (json_object_get_type(o)) {
        case json_type_null:
                n = scalar_node("", 0, 0, true, false);
                break;
        case json_type_string:
                if (strlen(json_object_get_string(o)) != (size_t) json_object_get_string_len(o))
                        return fail(c, -EINVAL, 0, "a value contains a NUL byte");
                n = scalar_node(json_object_get_string(o), json_object_get_string_len(o), 0, false, true);
                break;
        case json_type_boolean:
        case json_type_int:
        case json_type_double: {
                const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
                if (!s)
                        return fail(c, -ENOMEM, 0, "out of memory");
                n = scalar_node(s, strlen(s), 0, false, false);
                break;
        }
        case json_type_array:
                if ((n = calloc(1, sizeof *n))) {
                        n->type = YN_SEQ;
                        for (size_t i = 0; i < json_object_array_length(o); i++) {
                                int r = json_kid(n, json_object_array_get_idx(o, i), depth + 1, nodes, c);
                                if (r < 0)
                                        return r;
                        }
                }
                break;
        case json_type_object:
                if ((n = calloc(1, sizeof *n))) {
                        n->type = YN_MAP;
                        json_object_object_foreach(o, k, v) {
                                struct ynode *kn = scalar_node(k, strlen(k), 0, false, true);
                                if (!kn || ynode_append(n, kn) < 0) {
                                        ynode_free(kn);
                                        return fail(c, -ENOMEM, 0, "out of memory");
                                }
                                int r = json_kid(n, v, depth + 1, nodes, c);
                                if (r < 0)
                                        return r;
                        }
                }
                break;
        }
        if (!n)
                return fail(c, -ENOMEM, 0, "out of memory");
        *out = TAKE_PTR(n);
        return 0;
}

/* ---- validation ---------------------------------------------------------------- */

static bool name_ok(const char *s, size_t max) {
        size_t n = strlen(s);
        if (n == 0 || n > max)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9') || strchr("._-", s[i])))
                        return false;
        return true;
}

static bool version_ok(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > RELEASE_MAX_VERSION)
                return false;
        for (size_t i = 0; i < n; i++) {
                bool alnum = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                             (s[i] >= '0' && s[i] <= '9');
                if (!alnum && (i == 0 || !strchr("._+-", s[i])))
                        return false;
        }
        return true;
}

static bool has_control_or_space(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s <= 0x20 || *s == 0x7f)
                        return true;
        return false;
}

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* The text of a non-null scalar; NULL (and a failure) otherwise. */
static const char *text(const struct ynode *n, const char *what, struct vctx *c, int *r) {
        if (n->type != YN_SCALAR || n->is_null) {
                *r = fail(c, -EINVAL, n->line, "%s must %s", what, n->type == YN_SCALAR ? "not be empty" : "be a scalar");
                return NULL;
        }
        return n->text;
}

static int set_str(char **out, const char *s, struct vctx *c) {
        free(*out);
        *out = strdup(s);
        return *out ? 0 : fail(c, -ENOMEM, 0, "out of memory");
}

/* A sequence of capability names (null: none) into *out, unique; each must
 * be in known when known is given. */
static int read_names(const struct ynode *n, const char *what, const struct strv *known, struct strv *out,
                      struct vctx *c) {
        int r = 0;
        if (n->type == YN_SCALAR && n->is_null)
                return 0;
        if (n->type != YN_SEQ)
                return fail(c, -EINVAL, n->line, "%s must be a list", what);
        if (n->n > RELEASE_MAX_CAPABILITIES)
                return fail(c, -EINVAL, n->line, "%s has more than %d entries", what, RELEASE_MAX_CAPABILITIES);
        for (size_t i = 0; i < n->n; i++) {
                const struct ynode *it = n->kids[i];
                const char *s = text(it, what, c, &r);
                if (!s)
                        return r;
                if (!name_ok(s, MAX_NAME))
                        return fail(c, -EINVAL, it->line, "%s: \"%s\" is not a valid capability name", what, s);
                if (known && !strv_contains(known, s))
                        return fail(c, -EINVAL, it->line, "%s names unknown capability \"%s\"", what, s);
                if (strv_contains(out, s))
                        return fail(c, -EINVAL, it->line, "%s lists \"%s\" twice", what, s);
                if (strv_push(out, s) < 0)
                        return fail(c, -ENOMEM, 0, "out of memory");
        }
        strv_sort(out);
        return 0;
}

static int read_size(const struct ynode *n, int64_t *out, struct vctx *c) {
        if (n->type != YN_SCALAR || n->is_null || n->quoted || !n->len || n->len > 19 ||
            strspn(n->text, "0123456789") != n->len || (n->text[0] == '0' && n->len > 1))
                return fail(c, -EINVAL, n->line, "os_image.size must be a decimal integer");
        unsigned long long v = strtoull(n->text, NULL, 10);
        if (v == 0 || v > INT64_MAX)
                return fail(c, -EINVAL, n->line, "os_image.size must be between 1 and %lld", (long long) INT64_MAX);
        *out = (int64_t) v;
        return 0;
}

static int read_os_image(const struct ynode *n, struct release_os_image *img, struct vctx *c) {
        int r = 0;
        bool have_size = false;
        if (n->type != YN_MAP)
                return fail(c, -EINVAL, n->line, "os_image must be a mapping");
        for (size_t i = 0; i + 1 < n->n; i += 2) {
                const struct ynode *kn = n->kids[i], *v = n->kids[i + 1];
                const char *k = text(kn, "os_image keys", c, &r), *s;
                if (!k)
                        return r;
                for (size_t j = 0; j < i; j += 2)
                        if (strcmp(n->kids[j]->text, k) == 0)
                                return fail(c, -EINVAL, kn->line, "duplicate key os_image.%s", k);
                if (strcmp(k, "size") == 0) {
                        if ((r = read_size(v, &img->size, c)) < 0)
                                return r;
                        have_size = true;
                        continue;
                }
                char **out = strcmp(k, "url") == 0 ? &img->url : strcmp(k, "path") == 0 ? &img->path
                           : strcmp(k, "sha256") == 0 ? &img->sha256 : strcmp(k, "root_label") == 0 ? &img->root_label
                           : NULL;
                if (!out)
                        return fail(c, -EINVAL, kn->line, "unknown key os_image.%s", k);
                if (v->type == YN_SCALAR && v->is_null)
                        continue; /* null: not given */
                char what[32];
                snprintf(what, sizeof what, "os_image.%s", k);
                if (!(s = text(v, what, c, &r)))
                        return r;
                if (out == &img->url) {
                        if (strlen(s) > MAX_LOCATION)
                                return fail(c, -EINVAL, v->line, "os_image.url is longer than %d bytes", MAX_LOCATION);
                        size_t pre = strncmp(s, "http://", 7) == 0 ? 7 : strncmp(s, "https://", 8) == 0 ? 8 : 0;
                        if (!pre || !s[pre] || s[pre] == '/' || has_control_or_space(s))
                                return fail(c, -EINVAL, v->line, "os_image.url must be an http:// or https:// URL");
                } else if (out == &img->path) {
                        if (strlen(s) > MAX_LOCATION)
                                return fail(c, -EINVAL, v->line, "os_image.path is longer than %d bytes", MAX_LOCATION);
                        if (!*s || has_control(s))
                                return fail(c, -EINVAL, v->line, "os_image.path must be a file path");
                } else if (out == &img->sha256) {
                        if (strlen(s) != 64 || strspn(s, "0123456789abcdefABCDEF") != 64)
                                return fail(c, -EINVAL, v->line, "os_image.sha256 must be 64 hex digits");
                } else if (!name_ok(s, MAX_NAME)) {
                        return fail(c, -EINVAL, v->line, "os_image.root_label must be 1 to %d of [A-Za-z0-9._-]", MAX_NAME);
                }
                if ((r = set_str(out, s, c)) < 0)
                        return r;
                if (out == &img->sha256)
                        for (char *p = img->sha256; *p; p++)
                                if (*p >= 'A' && *p <= 'F')
                                        *p = (char) (*p - 'A' + 'a');
        }
        if (img->url && img->path)
                return fail(c, -EINVAL, n->line, "os_image must have either url or path, not both");
        if (!img->url && !img->path)
                return fail(c, -EINVAL, n->line, "os_image must have url or path");
        if (!img->sha256)
                return fail(c, -EINVAL, n->line, "os_image.sha256 is required");
        if (!have_size)
                return fail(c, -EINVAL, n->line, "os_image.size is required");
        if (!img->root_label && (r = set_str(&img->root_label, RELEASE_DEFAULT_ROOT_LABEL, c)) < 0)
                return r;
        return 0;
}

static int add_set(struct release_info *ri, size_t at, const char *name, struct cap_set **out, struct vctx *c) {
        if (ri->n_sets >= RELEASE_MAX_SETS)
                return fail(c, -EINVAL, 0, "more than %d capability sets", RELEASE_MAX_SETS);
        struct cap_set *v = realloc(ri->sets, (ri->n_sets + 1) * sizeof *v);
        if (!v)
                return fail(c, -ENOMEM, 0, "out of memory");
        ri->sets = v;
        char *dup = strdup(name);
        if (!dup)
                return fail(c, -ENOMEM, 0, "out of memory");
        memmove(&v[at + 1], &v[at], (ri->n_sets - at) * sizeof *v);
        v[at] = (struct cap_set) { .name = dup };
        ri->n_sets++;
        *out = &v[at];
        return 0;
}

static int read_sets(const struct ynode *n, struct release_info *ri, struct vctx *c) {
        int r = 0;
        if (n && !(n->type == YN_SCALAR && n->is_null)) {
                if (n->type != YN_MAP)
                        return fail(c, -EINVAL, n->line, "capability_sets must be a mapping");
                for (size_t i = 0; i + 1 < n->n; i += 2) {
                        const struct ynode *kn = n->kids[i];
                        const char *name = text(kn, "capability set names", c, &r);
                        if (!name)
                                return r;
                        if (!name_ok(name, MAX_NAME))
                                return fail(c, -EINVAL, kn->line, "\"%s\" is not a valid capability set name", name);
                        if (release_cap_set(ri, name))
                                return fail(c, -EINVAL, kn->line, "duplicate capability set \"%s\"", name);
                        if (ri->n_sets >= RELEASE_MAX_SETS)
                                return fail(c, -EINVAL, kn->line, "more than %d capability sets", RELEASE_MAX_SETS);
                        struct cap_set *set;
                        if ((r = add_set(ri, ri->n_sets, name, &set, c)) < 0)
                                return r;
                        char what[MAX_NAME + 32];
                        snprintf(what, sizeof what, "capability set \"%s\"", name);
                        if ((r = read_names(n->kids[i + 1], what, &ri->known_capabilities, &set->caps, c)) < 0)
                                return r;
                }
        }
        struct cap_set *set;
        if (!release_cap_set(ri, CAP_SET_NONE) && (r = add_set(ri, 0, CAP_SET_NONE, &set, c)) < 0)
                return r;
        if (!release_cap_set(ri, CAP_SET_CURRENT)) {
                if ((r = add_set(ri, ri->n_sets, CAP_SET_CURRENT, &set, c)) < 0)
                        return r;
                for (size_t i = 0; i < ri->known_capabilities.n; i++)
                        if (strv_push(&set->caps, ri->known_capabilities.v[i]) < 0)
                                return fail(c, -ENOMEM, 0, "out of memory");
        }
        return 0;
}

static int validate(const struct ynode *root, struct release_info *ri, struct vctx *c) {
        static const char *const keys[] = { "version", "os_image", "known_capabilities", "capability_sets",
                                            "default_profile", NULL };
        const struct ynode *found[5] = { 0 };
        int r = 0;
        if (!root)
                return fail(c, -EINVAL, 0, "release.yaml is empty");
        if (root->type != YN_MAP)
                return fail(c, -EINVAL, root->line, "release.yaml must be a mapping");
        for (size_t i = 0; i + 1 < root->n; i += 2) {
                const struct ynode *kn = root->kids[i];
                const char *k = text(kn, "keys", c, &r);
                if (!k)
                        return r;
                size_t j = 0;
                while (keys[j] && strcmp(keys[j], k) != 0)
                        j++;
                if (!keys[j])
                        return fail(c, -EINVAL, kn->line, "unknown key \"%s\"", k);
                if (found[j])
                        return fail(c, -EINVAL, kn->line, "duplicate key \"%s\"", k);
                found[j] = root->kids[i + 1];
        }
        const char *s;
        if (!found[0] || (found[0]->type == YN_SCALAR && found[0]->is_null))
                return fail(c, -EINVAL, root->line, "version is required");
        if (!(s = text(found[0], "version", c, &r)))
                return r;
        if (!version_ok(s))
                return fail(c, -EINVAL, found[0]->line,
                            "version \"%s\" must be 1 to %d of [A-Za-z0-9._+-] starting with a letter or digit", s,
                            RELEASE_MAX_VERSION);
        if ((r = set_str(&ri->version, s, c)) < 0)
                return r;
        if (!found[1])
                return fail(c, -EINVAL, root->line, "os_image is required");
        if ((r = read_os_image(found[1], &ri->os_image, c)) < 0)
                return r;
        if (found[2] && (r = read_names(found[2], "known_capabilities", NULL, &ri->known_capabilities, c)) < 0)
                return r;
        if ((r = read_sets(found[3], ri, c)) < 0)
                return r;
        if (found[4] && !(found[4]->type == YN_SCALAR && found[4]->is_null)) {
                if (!(s = text(found[4], "default_profile", c, &r)))
                        return r;
                if (!name_ok(s, MAX_NAME))
                        return fail(c, -EINVAL, found[4]->line, "default_profile must be 1 to %d of [A-Za-z0-9._-]",
                                    MAX_NAME);
                r = set_str(&ri->default_profile, s, c);
        } else {
                r = set_str(&ri->default_profile, RELEASE_DEFAULT_PROFILE, c);
        }
        return r;
}

/* ---- API ------------------------------------------------------------------------ */

void release_info_init(struct release_info *r) {
        *r = (struct release_info) { 0 };
}

void release_info_free(struct release_info *r) {
        if (!r)
                return;
        free(r->version);
        free(r->os_image.url);
        free(r->os_image.path);
        free(r->os_image.sha256);
        free(r->os_image.root_label);
        strv_free(&r->known_capabilities);
        for (size_t i = 0; i < r->n_sets; i++) {
                free(r->sets[i].name);
                strv_free(&r->sets[i].caps);
        }
        free(r->sets);
        free(r->default_profile);
        release_info_init(r);
}

static int finish(int r, struct release_info *out) {
        if (r < 0)
                release_info_free(out);
        return r;
}

int release_info_parse_yaml(const char *data, size_t len, struct release_info *out, char *err, size_t errlen) {
        struct vctx c = { .err = err, .errlen = errlen };
        release_info_init(out);
        if (len > RELEASE_MAX_YAML)
                return fail(&c, -E2BIG, 0, "release.yaml is larger than %d bytes", RELEASE_MAX_YAML);
        if (!data && len)
                return fail(&c, -EINVAL, 0, "no data");
        if (len >= 2 && (memcmp(data, "\xff\xfe", 2) == 0 || memcmp(data, "\xfe\xff", 2) == 0))
                return fail(&c, -EINVAL, 1, "UTF-16 is not supported, use UTF-8");
        _cleanup_(ynode_freep) struct ynode *root = NULL;
        int r = yaml_tree(data ? data : "", len, &root, &c);
        if (r < 0)
                return r;
        return finish(validate(root, out, &c), out);
}

json_object *release_info_to_json(const struct release_info *r) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *img = json_object_new_object(), *known = json_object_new_array(),
                    *sets = json_object_new_object();
        bool ok = o && img && known && sets;
#define ADD(obj, k, v)                                                                       \
        do {                                                                                 \
                json_object *v_ = (v);                                                       \
                if (!v_ || json_object_object_add((obj), (k), v_) < 0) {                     \
                        json_object_put(v_);                                                 \
                        ok = false;                                                          \
                }                                                                            \
        } while (0)
        if (ok && r->os_image.url)
                ADD(img, "url", json_object_new_string(r->os_image.url));
        if (ok && r->os_image.path)
                ADD(img, "path", json_object_new_string(r->os_image.path));
        if (ok)
                ADD(img, "sha256", json_object_new_string(r->os_image.sha256 ? r->os_image.sha256 : ""));
        if (ok)
                ADD(img, "size", json_object_new_int64(r->os_image.size));
        if (ok)
                ADD(img, "root_label", json_object_new_string(r->os_image.root_label ? r->os_image.root_label
                                                                                     : RELEASE_DEFAULT_ROOT_LABEL));
        for (size_t i = 0; ok && i < r->known_capabilities.n; i++) {
                json_object *s = json_object_new_string(r->known_capabilities.v[i]);
                if (!s || json_object_array_add(known, s) < 0) {
                        json_object_put(s);
                        ok = false;
                }
        }
        for (size_t i = 0; ok && i < r->n_sets; i++) {
                json_object *a = json_object_new_array();
                for (size_t j = 0; a && j < r->sets[i].caps.n; j++) {
                        json_object *s = json_object_new_string(r->sets[i].caps.v[j]);
                        if (!s || json_object_array_add(a, s) < 0) {
                                json_object_put(s);
                                json_object_put(a);
                                a = NULL;
                        }
                }
                ADD(sets, r->sets[i].name, a);
        }
        if (!ok) {
                json_object_put(img);
                json_object_put(known);
                json_object_put(sets);
                return NULL;
        }
        ADD(o, "version", json_object_new_string(r->version ? r->version : ""));
        ADD(o, "os_image", img);
        ADD(o, "known_capabilities", known);
        ADD(o, "capability_sets", sets);
        ADD(o, "default_profile", json_object_new_string(r->default_profile ? r->default_profile
                                                                             : RELEASE_DEFAULT_PROFILE));
#undef ADD
        return ok ? TAKE_PTR(o) : NULL;
}

int release_info_from_json(json_object *o, struct release_info *out, char *err, size_t errlen) {
        struct vctx c = { .err = err, .errlen = errlen };
        release_info_init(out);
        if (!json_object_is_type(o, json_type_object))
                return fail(&c, -EINVAL, 0, "a release must be an object");
        _cleanup_(ynode_freep) struct ynode *root = NULL;
        size_t nodes = 0;
        int r = json_tree(o, 0, &root, &nodes, &c);
        if (r < 0)
                return r;
        return finish(validate(root, out, &c), out);
}

const struct cap_set *release_cap_set(const struct release_info *r, const char *name) {
        if (!r || !name)
                return NULL;
        for (size_t i = 0; i < r->n_sets; i++)
                if (strcmp(r->sets[i].name, name) == 0)
                        return &r->sets[i];
        return NULL;
}
