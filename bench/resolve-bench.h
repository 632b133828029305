/* What the operator-resolution benchmark's three files share: the catalog
 * generator (resolve-gen.c) and the heap counter (resolve-mem.c) that
 * bench-resolve (resolve.c) drives. Bench-only; nothing else links them. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gen_params {
        size_t packages;
        size_t versions; /* per package */
        uint64_t seed;
};

/* One file of the generated catalog: a stream of JSON objects, one a line,
 * whole packages only (a package, its channels, its bundles). */
struct gen_file {
        char *text;
        size_t len;
};

struct gen_catalog {
        struct gen_file *files; /* each at most CATALOG_MAX_INPUT bytes */
        size_t n_files;
        size_t bytes; /* of all files */
        size_t n_packages, n_channels, n_bundles;
        size_t n_deps, n_bounded_deps, n_gvk_requires, n_choice_requires, n_back_edges;
        size_t n_groups, n_group_members; /* shared-GVK provider groups */
        char **names; /* package names by index */
        int *group; /* package index -> provider group, -1 for none */
};

/* Generate the catalog that p and its seed determine. 0, -ENOMEM or -E2BIG
 * (a package's text past CATALOG_MAX_INPUT). */
int gen_catalog(const struct gen_params *p, struct gen_catalog *out);
void gen_catalog_free(struct gen_catalog *c);

/* n distinct package indexes for subscriptions, drawn from seed alone (not
 * from the catalog's stream, so --subscriptions leaves the catalog as it
 * is), never two members of one provider group: those conflict by design.
 * Fewer than n when the catalog cannot give n such packages. */
size_t gen_subscriptions(const struct gen_catalog *c, uint64_t seed, size_t n, size_t *out);

/* Heap counting for one call: malloc, calloc, realloc and free are wrapped
 * while this program runs (glibc; not under a sanitizer, which wraps them
 * itself). Between mem_track_start() and mem_track_stop(), peak is the
 * highest sum of live block sizes reached above the starting point. */
struct mem_track {
        bool available;
        int64_t peak_bytes;
        int64_t net_bytes; /* still allocated at stop (of blocks counted) */
        uint64_t allocations; /* malloc, calloc, realloc and aligned calls */
        uint64_t bytes_allocated; /* summed: new blocks, and what reallocs grew by */
};

void mem_track_start(void);
void mem_track_stop(struct mem_track *out);
