/* What the libyaml readers of manifests (manifest.c), release.yaml
 * (release.c), catalogs (catalog.c) and add-on values (addon.c) share: line
 * numbers as libyaml counts them, YAML 1.1's plain null, and the count of
 * what aliases expand to. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

/* The 1-based line of byte `off` of data, counting line breaks as libyaml
 * does: LF, CR, CRLF, NEL, LS and PS. */
size_t yscan_line_of_offset(const char *data, size_t len, size_t off);
/* libyaml puts the end of the stream on a line of its own: `line`, but at
 * most the last line of data. */
size_t yscan_clamp_line(const char *data, size_t len, size_t line);
/* A plain scalar that is null: empty, ~, null, Null or NULL. */
bool yscan_plain_is_null(const char *s, size_t n);

/* ---- what aliases expand to ----------------------------------------------
 * An alias stands for a copy of the node its anchor names, wherever a tree
 * is built from the text (catalog.c's JSON; Kubernetes or Helm reading a
 * manifest or values after us), so a small text can ask for a huge tree.
 * A node costs its scalar bytes plus YSCAN_NODE_BYTES (a mapping's key is a
 * node too); an alias costs what its node does, the aliases inside that
 * node counted again, at every use. The bytes all aliases of an input cost
 * are counted without copying anything (each anchored node is measured
 * once), and past yscan_alias_cap(the input's length) the input is
 * refused: -E2BIG, "aliases expand past N bytes (the document is M bytes)".
 * An alias inside the node it names would expand without end: refused the
 * same way, the message saying so. */
#define YSCAN_NODE_BYTES 32
#define YSCAN_ALIAS_MIN_CAP (64 * 1024)
#define YSCAN_ALIAS_FACTOR 4

/* The bytes aliases may cost in an input of len bytes: 4 x len, at least
 * 64 KiB. */
size_t yscan_alias_cap(size_t len);

struct yscan_anchor;
struct yscan_open;

/* One input's count, over the events of libyaml's parser
 * (yscan_aliases_event) or the documents of its loader
 * (yscan_aliases_document), for all of its documents. */
struct yscan_aliases {
        size_t len;    /* the input's bytes */
        size_t cap;    /* yscan_alias_cap(len) */
        size_t copied; /* bytes the aliases seen so far cost */
        /* Events: every node's cost so far, copies included; the anchors of
         * this document; the anchored collections still open. */
        size_t total;
        size_t depth;
        struct yscan_anchor *anchors;
        size_t n_anchors, cap_anchors; /* a power of two, at most half full */
        struct yscan_open *open;
        size_t n_open, cap_open;
        char why[128]; /* what the last refusal was */
};

void yscan_aliases_init(struct yscan_aliases *a, size_t len);
void yscan_aliases_done(struct yscan_aliases *a);
/* Count event e, which the parser gave for the input (every event, in
 * order). 0; -E2BIG past the cap, -ENOMEM; a->why says which. */
int yscan_aliases_event(struct yscan_aliases *a, const yaml_event_t *e);
/* Count a document the loader made of the input (each once, in order),
 * before anything copies its shared nodes. 0, -E2BIG or -ENOMEM as
 * yscan_aliases_event. */
int yscan_aliases_document(struct yscan_aliases *a, yaml_document_t *doc);
