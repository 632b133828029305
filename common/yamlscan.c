/* Line numbers, plain nulls and the count of what aliases expand to, for
 * the libyaml readers (yamlscan.h). */
#include "yamlscan.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t yscan_line_of_offset(const char *data, size_t len, size_t off) {
        size_t line = 1;
        const unsigned char *d = (const unsigned char *) data;
        for (size_t i = 0; i < off && i < len; i++) {
                if (d[i] == '\n' || (d[i] == '\r' && (i + 1 >= len || d[i + 1] != '\n')))
                        line++;
                else if (d[i] == 0xc2 && i + 1 < len && d[i + 1] == 0x85)
                        line++, i++;
                else if (d[i] == 0xe2 && i + 2 < len && d[i + 1] == 0x80 && (d[i + 2] == 0xa8 || d[i + 2] == 0xa9))
                        line++, i += 2;
        }
        return line;
}

size_t yscan_clamp_line(const char *data, size_t len, size_t line) {
        size_t last = yscan_line_of_offset(data, len, len);
        if (len && last > 1) {
                unsigned char c = (unsigned char) data[len - 1];
                if (c == '\n' || c == '\r' || c == 0x85 || c == 0xa8 || c == 0xa9)
                        last--;
        }
        return line > last ? last : line;
}

bool yscan_plain_is_null(const char *s, size_t n) {
        static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
        for (const char *const *p = nulls; *p; p++)
                if (strlen(*p) == n && memcmp(*p, s, n) == 0)
                        return true;
        return false;
}

/* ---- what aliases expand to ------------------------------------------------ */

/* An anchor of the document being read: the cost of its node, or open while
 * its collection is. gen tells a definition from a later one of the name. */
struct yscan_anchor {
        char *name; /* NULL: a free slot */
        uint64_t hash;
        size_t size;
        unsigned gen;
        bool open;
};

/* An anchored collection not yet ended. */
struct yscan_open {
        const char *name; /* its anchor's, owned by the table */
        uint64_t hash;
        unsigned gen;
        size_t start; /* total before it */
        size_t depth; /* a->depth inside it */
};

static size_t add_sat(size_t a, size_t b) {
        return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

size_t yscan_alias_cap(size_t len) {
        size_t cap = len > SIZE_MAX / YSCAN_ALIAS_FACTOR ? SIZE_MAX : len * YSCAN_ALIAS_FACTOR;
        return cap < YSCAN_ALIAS_MIN_CAP ? YSCAN_ALIAS_MIN_CAP : cap;
}

void yscan_aliases_init(struct yscan_aliases *a, size_t len) {
        *a = (struct yscan_aliases) { .len = len, .cap = yscan_alias_cap(len) };
}

static void anchors_clear(struct yscan_aliases *a) {
        for (size_t i = 0; i < a->cap_anchors; i++)
                free(a->anchors[i].name);
        free(a->anchors);
        a->anchors = NULL;
        a->n_anchors = a->cap_anchors = 0;
}

void yscan_aliases_done(struct yscan_aliases *a) {
        anchors_clear(a);
        free(a->open);
        a->open = NULL;
        a->n_open = a->cap_open = 0;
}

/* Past the cap; or without end, when an alias is inside the node it names. */
static int refuse(struct yscan_aliases *a, bool cycle) {
        snprintf(a->why, sizeof a->why, "aliases expand past %zu bytes (the document is %zu bytes)%s", a->cap, a->len,
                 cycle ? ": an alias is inside the node it names" : "");
        return -E2BIG;
}

static int out_of_memory(struct yscan_aliases *a) {
        snprintf(a->why, sizeof a->why, "out of memory");
        return -ENOMEM;
}

static uint64_t name_hash(const char *s) {
        uint64_t h = UINT64_C(14695981039346656037);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                h = (h ^ *p) * UINT64_C(1099511628211);
        return h;
}

static struct yscan_anchor *slot_of(struct yscan_anchor *v, size_t cap, const char *name, uint64_t hash) {
        for (size_t i = hash & (cap - 1);; i = (i + 1) & (cap - 1))
                if (!v[i].name || (v[i].hash == hash && strcmp(v[i].name, name) == 0))
                        return &v[i];
}

static struct yscan_anchor *lookup(const struct yscan_aliases *a, const char *name, uint64_t hash) {
        if (!a->cap_anchors)
                return NULL;
        struct yscan_anchor *x = slot_of(a->anchors, a->cap_anchors, name, hash);
        return x->name ? x : NULL;
}

/* The anchor `name` (re)defined: its entry, or NULL without memory. */
static struct yscan_anchor *define(struct yscan_aliases *a, const char *name) {
        uint64_t hash = name_hash(name);
        struct yscan_anchor *x = lookup(a, name, hash);
        if (x) {
                x->gen++;
                return x;
        }
        if ((a->n_anchors + 1) * 2 > a->cap_anchors) {
                size_t cap = a->cap_anchors ? a->cap_anchors * 2 : 16;
                struct yscan_anchor *v = calloc(cap, sizeof *v);
                if (!v)
                        return NULL;
                for (size_t i = 0; i < a->cap_anchors; i++)
                        if (a->anchors[i].name)
                                *slot_of(v, cap, a->anchors[i].name, a->anchors[i].hash) = a->anchors[i];
                free(a->anchors);
                a->anchors = v;
                a->cap_anchors = cap;
        }
        x = slot_of(a->anchors, a->cap_anchors, name, hash);
        if (!(x->name = strdup(name)))
                return NULL;
        x->hash = hash;
        a->n_anchors++;
        return x;
}

static int open_collection(struct yscan_aliases *a, const char *anchor) {
        size_t start = a->total;
        a->depth++;
        a->total = add_sat(a->total, YSCAN_NODE_BYTES);
        if (!anchor)
                return 0;
        struct yscan_anchor *x = define(a, anchor);
        if (!x)
                return out_of_memory(a);
        x->open = true;
        if (a->n_open == a->cap_open) {
                size_t cap = a->cap_open ? a->cap_open * 2 : 8;
                struct yscan_open *v = realloc(a->open, cap * sizeof *v);
                if (!v)
                        return out_of_memory(a);
                a->open = v;
                a->cap_open = cap;
        }
        a->open[a->n_open++] = (struct yscan_open) {
                .name = x->name, .hash = x->hash, .gen = x->gen, .start = start, .depth = a->depth,
        };
        return 0;
}

static void close_collection(struct yscan_aliases *a) {
        if (a->n_open && a->open[a->n_open - 1].depth == a->depth) {
                const struct yscan_open *o = &a->open[--a->n_open];
                struct yscan_anchor *x = lookup(a, o->name, o->hash);
                if (x && x->gen == o->gen) { /* not defined again inside */
                        x->size = a->total - o->start;
                        x->open = false;
                }
        }
        if (a->depth)
                a->depth--;
}

static int use_alias(struct yscan_aliases *a, size_t size) {
        a->copied = add_sat(a->copied, size);
        a->total = add_sat(a->total, size);
        return a->copied > a->cap ? refuse(a, false) : 0;
}

int yscan_aliases_event(struct yscan_aliases *a, const yaml_event_t *e) {
        switch (e->type) {
        case YAML_DOCUMENT_START_EVENT:
                /* Anchors name nodes of their own document only. */
                if (a->n_anchors)
                        anchors_clear(a);
                a->n_open = 0;
                a->depth = 0;
                return 0;
        case YAML_SCALAR_EVENT: {
                size_t own = add_sat(YSCAN_NODE_BYTES, e->data.scalar.length);
                a->total = add_sat(a->total, own);
                if (!e->data.scalar.anchor)
                        return 0;
                struct yscan_anchor *x = define(a, (const char *) e->data.scalar.anchor);
                if (!x)
                        return out_of_memory(a);
                x->size = own;
                x->open = false;
                return 0;
        }
        case YAML_SEQUENCE_START_EVENT:
                return open_collection(a, (const char *) e->data.sequence_start.anchor);
        case YAML_MAPPING_START_EVENT:
                return open_collection(a, (const char *) e->data.mapping_start.anchor);
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                close_collection(a);
                return 0;
        case YAML_ALIAS_EVENT: {
                const char *name = (const char *) e->data.alias.anchor;
                const struct yscan_anchor *x = name ? lookup(a, name, name_hash(name)) : NULL;
                if (!x) /* not defined: whoever builds the tree refuses it */
                        return use_alias(a, YSCAN_NODE_BYTES);
                if (x->open)
                        return refuse(a, true);
                return use_alias(a, x->size);
        }
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_STREAM_END_EVENT:
        case YAML_DOCUMENT_END_EVENT:
                return 0;
        }
        return 0;
}

/* The n-th node a node holds (a mapping's keys and values in turn), 0 after
 * the last. */
static int child_of(const yaml_node_t *nd, size_t n) {
        switch (nd->type) {
        case YAML_SEQUENCE_NODE:
                return n < (size_t) (nd->data.sequence.items.top - nd->data.sequence.items.start)
                               ? nd->data.sequence.items.start[n]
                               : 0;
        case YAML_MAPPING_NODE:
                if (n / 2 >= (size_t) (nd->data.mapping.pairs.top - nd->data.mapping.pairs.start))
                        return 0;
                return n % 2 ? nd->data.mapping.pairs.start[n / 2].value : nd->data.mapping.pairs.start[n / 2].key;
        case YAML_NO_NODE:
        case YAML_SCALAR_NODE:
                break;
        }
        return 0;
}

struct walk {
        int node;
        size_t next; /* its child to look at next */
};

enum { NODE_NEW, NODE_OPEN, NODE_DONE };

/* Every node's cost with its aliases expanded, each node measured once
 * (depth first, on a stack of our own: nesting is not bounded here); the
 * aliases' part is what the whole costs past its distinct nodes. */
int yscan_aliases_document(struct yscan_aliases *a, yaml_document_t *doc) {
        size_t n = (size_t) (doc->nodes.top - doc->nodes.start);
        if (n == 0)
                return 0;
        size_t *size = calloc(n, sizeof *size);
        unsigned char *state = calloc(n, 1);
        struct walk *stack = malloc(n * sizeof *stack);
        size_t sp = 0, distinct = 0;
        int r = 0;
        if (!size || !state || !stack) {
                r = out_of_memory(a);
                goto done;
        }
        stack[sp++] = (struct walk) { .node = 1 };
        state[0] = NODE_OPEN;
        while (sp) {
                struct walk *w = &stack[sp - 1];
                size_t i = (size_t) w->node - 1;
                const yaml_node_t *nd = &doc->nodes.start[i];
                if (w->next == 0) {
                        size[i] = YSCAN_NODE_BYTES;
                        if (nd->type == YAML_SCALAR_NODE)
                                size[i] = add_sat(size[i], nd->data.scalar.length);
                        distinct = add_sat(distinct, size[i]);
                }
                int c = child_of(nd, w->next++);
                if (c != 0) {
                        size_t k = (size_t) c - 1;
                        if (c < 0 || k >= n)
                                continue; /* not a node of the document */
                        if (state[k] == NODE_DONE) {
                                size[i] = add_sat(size[i], size[k]);
                        } else if (state[k] == NODE_OPEN) {
                                r = refuse(a, true);
                                goto done;
                        } else {
                                state[k] = NODE_OPEN;
                                stack[sp++] = (struct walk) { .node = c };
                        }
                        continue;
                }
                state[i] = NODE_DONE;
                if (--sp)
                        size[stack[sp - 1].node - 1] = add_sat(size[stack[sp - 1].node - 1], size[i]);
        }
        r = use_alias(a, size[0] - (distinct < size[0] ? distinct : size[0]));
done:
        free(size);
        free(state);
        free(stack);
        return r;
}
