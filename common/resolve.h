/* Operator dependency resolution (DESIGN.md §8) on libsolv. Pure: no I/O but
 * resolve_write_testcase(), which the benchmark uses to hand the very same
 * problem to libsolv's own testcase reader.
 *
 * The encoding, one libsolv repo per catalog:
 *  - one solvable per bundle, named after its package (libsolv's same-name
 *    rule: at most one bundle per package), providing `olm.package(P)` and
 *    `olm.gvk(G/V/K)` for each GVK it provides, and conflicting with each of
 *    those GVKs (libsolv ignores a conflict with oneself: at most one
 *    provider per GVK among what gets installed);
 *  - a package requirement `P RANGE` is a provide `olm.package(P RANGE)`
 *    given to every bundle of P whose version satisfies the range (any
 *    channel); a GVK requirement requires the GVK's provide;
 *  - every restriction is a job forbidding a bundle, so that libsolv can
 *    propose lifting it as a way out: outside the channel dependencies come
 *    from (the package's default channel, or the channel a subscription pins),
 *    outside a subscription's catalog or version range, another version than
 *    the installed one of a package no upgrade was asked for;
 *  - a subscription is a job installing one bundle of its package;
 *  - preferences are libsolv favour jobs, one per bundle, so that a choice
 *    is decided in this order: an installed bundle, the catalog with the
 *    lower priority number (equal: the dependent's own catalog, then catalog
 *    name order), the newest version.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"

struct json_object;

#define RESOLVE_MAX_CATALOGS 100
#define RESOLVE_MAX_SUBSCRIPTIONS 1000
#define RESOLVE_MAX_INSTALLED 10000
/* Bytes of one text in a plan or an answer (a problem, a way out, a step's
 * why, a forbidden bundle's reasons): far past what the limits above allow. */
#define RESOLVE_TEXT_MAX (4u << 20)

struct resolve_catalog {
        const char *name;
        int priority; /* lower number = higher priority */
        const struct catalog *catalog; /* catalog_check() passed */
};

struct resolve_subscription {
        const char *package;
        const char *channel; /* NULL: the package's default channel */
        const char *catalog; /* NULL: any catalog */
        const char *version_range; /* NULL: any version */
        bool skip_dependencies; /* install this one alone */
};

/* What the cluster has now. */
struct resolve_installed {
        const char *catalog;
        const char *package;
        const char *bundle;
        bool dependency; /* brought in as a dependency, not subscribed to */
};

struct resolve_request {
        const struct resolve_catalog *catalogs;
        size_t n_catalogs;
        const struct resolve_subscription *subscriptions;
        size_t n_subscriptions;
        const struct resolve_installed *installed;
        size_t n_installed;
        /* Packages to upgrade along their channel's replaces/skips/skipRange
         * graph to the newest reachable bundle; upgrade_all: every one. */
        const char *const *upgrade;
        size_t n_upgrade;
        bool upgrade_all;
        /* Remove installed dependencies nothing requires any more (never a
         * bundle subscribed to directly); without it they are kept and
         * reported as removable. */
        bool prune;
};

enum resolve_action { RESOLVE_INSTALL, RESOLVE_UPGRADE, RESOLVE_KEEP, RESOLVE_REMOVE };

/* "install", "upgrade", "keep", "remove". */
const char *resolve_action_to_string(enum resolve_action a);

struct resolve_step {
        enum resolve_action action;
        char *package;
        char *bundle;
        char *version;
        char *catalog;
        char *channel; /* a channel of the package holding the bundle */
        char *from_bundle; /* an upgrade's installed bundle; NULL otherwise */
        char *from_version;
        bool dependency; /* there because something requires it */
        bool removable; /* installed as a dependency, required by nothing now */
        bool dependencies_skipped; /* skip_dependencies: installed alone */
        size_t subscription; /* index of the subscription it serves; SIZE_MAX: none */
        char *why; /* in words */
        /* Within the catalog's model, for the caller's manifests. */
        const struct catalog *from_catalog;
        const struct catalog_bundle *catalog_bundle;
};

struct resolve_problem {
        char *text; /* the conflict in words: packages, versions, catalogs */
        char **solutions; /* each a way out, in words */
        size_t n_solutions;
};

struct resolve_plan {
        bool ok; /* false: problems say why */
        /* In dependency order: a dependency before what needs it (a cycle
         * in name order); removals last. */
        struct resolve_step *steps;
        size_t n_steps;
        struct resolve_problem *problems;
        size_t n_problems;
};

/* Resolve req into *out (zeroed first). 0 with out->ok telling whether the
 * request is satisfiable; -ENOENT when a subscription names a package,
 * channel or catalog no catalog has, -EINVAL for a bad version range or
 * request, -E2BIG past the RESOLVE_MAX_* limits, -ENOMEM; err then says what.
 * Deterministic: the same request gives the same plan. */
int resolve(const struct resolve_request *req, struct resolve_plan *out, char *err, size_t errlen);

void resolve_plan_free(struct resolve_plan *p);

/* {"ok", "steps": [{action, package, bundle, version, catalog, channel,
 * from_bundle?, from_version?, dependency, removable, dependencies_skipped,
 * subscription?, why}], "problems": [{text, solutions: [...]}]}. */
int resolve_plan_to_json(const struct resolve_plan *p, struct json_object **out);

/* Write the libsolv problem req amounts to (repos, favour and forbidding
 * jobs, subscriptions) as a libsolv testcase in directory dir (created), for
 * libsolv's testcase_read()/testsolv. 0 or -errno with err. */
int resolve_write_testcase(const struct resolve_request *req, const char *dir, char *err, size_t errlen);
