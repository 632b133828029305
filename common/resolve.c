/* Operator dependency resolution on libsolv: the encoding is described in
 * resolve.h. This file builds the pool and the jobs from the catalogs and the
 * request, solves, and turns libsolv's answer (decisions, or problem rules
 * and solutions) into a plan in words. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/problems.h>
#include <solv/queue.h>
#include <solv/repo.h>
#include <solv/rules.h>
#include <solv/solver.h>
#include <solv/testcase.h>

#include "errmsg.h"
#include "growbuf.h"
#include "jsonwrite.h"
#include "resolve.h"
#include "semver.h"

#define NONE SIZE_MAX
#define MAX_PROBLEM_LINES 16
#define MAX_SOLUTIONS 10

/* One bundle of one catalog, a solvable in the pool. */
struct rb {
        size_t cat; /* index into ctx.cats (sorted: priority, then name) */
        const struct catalog_bundle *b;
        const struct catalog_package *pkg;
        const char **channels; /* names of the package's channels holding it */
        size_t n_channels;
        size_t group;
        unsigned rank; /* version order within the package, 1 = oldest */
        Id id;
        bool forbidden; /* a job forbids it */
        Id *extra; /* olm.package(P RANGE) provides it satisfies */
        size_t n_extra, cap_extra;
};

/* All bundles of one package name, across catalogs. */
struct rgroup {
        const char *name;
        size_t first, n; /* ctx.order[first .. first+n) */
        size_t sub; /* subscription index or NONE */
        size_t inst; /* index into req->installed or NONE */
        size_t inst_rb; /* the installed bundle's rb or NONE */
        bool upgrade;
        bool *reach; /* upgrade: bundles reachable from the installed one (n) */
        size_t chosen; /* rb in the solution or NONE */
        bool favour; /* its choice needs favour jobs (see add_favours) */
};

enum rdep_kind { RDEP_PACKAGE, RDEP_GVK };

struct rdep {
        enum rdep_kind kind;
        const struct catalog_required_package *rp;
        const struct catalog_gvk *gvk;
};

enum rjob_kind { RJOB_SUBSCRIBE, RJOB_FORBID, RJOB_KEEP, RJOB_FAVOR };

struct rjob {
        enum rjob_kind kind;
        size_t ref; /* subscription (SUBSCRIBE), rb (FORBID, FAVOR) or group (KEEP) */
        char *reason; /* FORBID: why the bundle is not allowed */
        int why; /* FORBID: the first reason's kind (enum forbid) */
};

struct ctx {
        const struct resolve_request *req;
        struct resolve_catalog *cats;
        size_t n_cats;
        struct rb *rbs;
        size_t n_rbs;
        size_t *order; /* rb indexes sorted by package, catalog, version desc */
        struct rgroup *groups;
        size_t n_groups;
        struct semver_range *sub_ranges; /* parsed subscription ranges */
        Pool *pool;
        Repo **repos;
        struct rdep *deps; /* indexed by Id */
        size_t n_deps;
        size_t *rb_of_id; /* indexed by solvable Id */
        size_t n_rb_of_id;
        Queue job;
        struct rjob *jobs;
        size_t n_jobs, cap_jobs;
        bool any_upgrade;
        char *err;
        size_t errlen;
};

/* ---------- small helpers ---------- */

static int grow(void **p, size_t *cap, size_t need, size_t size) {
        if (need <= *cap)
                return 0;
        size_t n = *cap ? *cap * 2 : 16;
        while (n < need)
                n *= 2;
        void *q = realloc(*p, n * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = n;
        return 0;
}

static const char *cat_name(const struct ctx *c, const struct rb *r) {
        return c->cats[r->cat].name;
}

static int find_group(const struct ctx *c, const char *name) {
        size_t lo = 0, hi = c->n_groups;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int r = strcmp(c->groups[mid].name, name);
                if (r == 0)
                        return (int) mid;
                if (r < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

static bool rb_in_channel(const struct rb *r, const char *channel) {
        for (size_t i = 0; i < r->n_channels; i++)
                if (strcmp(r->channels[i], channel) == 0)
                        return true;
        return false;
}

const char *resolve_action_to_string(enum resolve_action a) {
        switch (a) {
        case RESOLVE_INSTALL:
                return "install";
        case RESOLVE_UPGRADE:
                return "upgrade";
        case RESOLVE_KEEP:
                return "keep";
        case RESOLVE_REMOVE:
                return "remove";
        }
        return "?";
}

/* ---------- the bundles, sorted and grouped ---------- */

static int cmp_cats(const void *a, const void *b) {
        const struct resolve_catalog *x = a, *y = b;
        if (x->priority != y->priority)
                return x->priority < y->priority ? -1 : 1;
        return strcmp(x->name, y->name);
}

static const struct ctx *sort_ctx; /* qsort has no context argument in C11 */

static int cmp_order(const void *a, const void *b) {
        const struct rb *x = &sort_ctx->rbs[*(const size_t *) a], *y = &sort_ctx->rbs[*(const size_t *) b];
        int r = strcmp(x->b->package, y->b->package);
        if (r)
                return r;
        if (x->cat != y->cat)
                return x->cat < y->cat ? -1 : 1;
        r = semver_cmp(&y->b->version, &x->b->version);
        if (r)
                return r;
        return strcmp(x->b->name, y->b->name);
}

static const struct catalog_package *find_package(const struct catalog *cat, const char *name) {
        for (size_t i = 0; i < cat->n_packages; i++)
                if (strcmp(cat->packages[i].name, name) == 0)
                        return &cat->packages[i];
        return NULL;
}

static int check_request(struct ctx *c) {
        const struct resolve_request *q = c->req;
        if (q->n_catalogs > RESOLVE_MAX_CATALOGS || q->n_subscriptions > RESOLVE_MAX_SUBSCRIPTIONS ||
            q->n_installed > RESOLVE_MAX_INSTALLED || q->n_upgrade > RESOLVE_MAX_SUBSCRIPTIONS)
                return errmsg(c->err, c->errlen, -E2BIG, "too many catalogs, subscriptions or installed bundles");
        for (size_t i = 0; i < q->n_catalogs; i++)
                if (!q->catalogs[i].name || !q->catalogs[i].catalog)
                        return errmsg(c->err, c->errlen, -EINVAL, "catalog %zu has no name or no content", i);
        for (size_t i = 0; i < q->n_subscriptions; i++)
                if (!q->subscriptions[i].package)
                        return errmsg(c->err, c->errlen, -EINVAL, "subscription %zu names no package", i);
        for (size_t i = 0; i < q->n_installed; i++)
                if (!q->installed[i].catalog || !q->installed[i].package || !q->installed[i].bundle)
                        return errmsg(c->err, c->errlen, -EINVAL, "installed bundle %zu is incomplete", i);
        return 0;
}

static int collect_bundles(struct ctx *c) {
        size_t n = 0;
        c->cats = malloc((c->req->n_catalogs + 1) * sizeof(*c->cats));
        if (!c->cats)
                return -ENOMEM;
        if (c->req->n_catalogs)
                memcpy(c->cats, c->req->catalogs, c->req->n_catalogs * sizeof(*c->cats));
        c->n_cats = c->req->n_catalogs;
        qsort(c->cats, c->n_cats, sizeof(*c->cats), cmp_cats);
        for (size_t i = 0; i + 1 < c->n_cats; i++)
                if (strcmp(c->cats[i].name, c->cats[i + 1].name) == 0)
                        return errmsg(c->err, c->errlen, -EINVAL, "catalog %s is given twice", c->cats[i].name);
        for (size_t i = 0; i < c->n_cats; i++)
                n += c->cats[i].catalog->n_bundles;
        c->rbs = calloc(n + 1, sizeof(*c->rbs));
        c->order = calloc(n + 1, sizeof(*c->order));
        if (!c->rbs || !c->order)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_cats; i++) {
                const struct catalog *cat = c->cats[i].catalog;
                for (size_t j = 0; j < cat->n_bundles; j++) {
                        struct rb *r = &c->rbs[c->n_rbs];
                        r->cat = i;
                        r->b = &cat->bundles[j];
                        if (!r->b->has_version)
                                return errmsg(c->err, c->errlen, -EINVAL, "bundle %s of catalog %s has no version",
                                              r->b->name, c->cats[i].name);
                        c->order[c->n_rbs] = c->n_rbs;
                        c->n_rbs++;
                }
        }
        sort_ctx = c;
        qsort(c->order, c->n_rbs, sizeof(*c->order), cmp_order);
        return 0;
}

/* rb of (catalog, package, bundle name): linear within the package's group. */
static size_t find_rb(const struct ctx *c, size_t cat, const char *package, const char *bundle) {
        int g = find_group(c, package);
        if (g < 0)
                return NONE;
        const struct rgroup *gr = &c->groups[g];
        for (size_t i = 0; i < gr->n; i++) {
                const struct rb *r = &c->rbs[c->order[gr->first + i]];
                if (r->cat == cat && strcmp(r->b->name, bundle) == 0)
                        return c->order[gr->first + i];
        }
        return NONE;
}

static int make_groups(struct ctx *c) {
        size_t cap = 0;
        for (size_t i = 0; i < c->n_rbs; i++) {
                struct rb *r = &c->rbs[c->order[i]];
                if (c->n_groups == 0 || strcmp(c->groups[c->n_groups - 1].name, r->b->package) != 0) {
                        if (grow((void **) &c->groups, &cap, c->n_groups + 1, sizeof(*c->groups)) < 0)
                                return -ENOMEM;
                        c->groups[c->n_groups] = (struct rgroup) {
                                .name = r->b->package, .first = i, .sub = NONE, .inst = NONE,
                                .inst_rb = NONE, .chosen = NONE };
                        c->n_groups++;
                }
                c->groups[c->n_groups - 1].n++;
                r->group = c->n_groups - 1;
                /* The order keeps a package's bundles of one catalog together. */
                const struct rb *prev = i ? &c->rbs[c->order[i - 1]] : NULL;
                r->pkg = prev && prev->cat == r->cat && prev->group == r->group
                                 ? prev->pkg
                                 : find_package(c->cats[r->cat].catalog, r->b->package);
        }
        /* Ranks: distinct versions of the package in ascending order. */
        for (size_t g = 0; g < c->n_groups; g++) {
                struct rgroup *gr = &c->groups[g];
                for (size_t i = 0; i < gr->n; i++) {
                        struct rb *r = &c->rbs[c->order[gr->first + i]];
                        unsigned rank = 1;
                        for (size_t j = 0; j < gr->n; j++) {
                                const struct rb *o = &c->rbs[c->order[gr->first + j]];
                                if (semver_cmp(&o->b->version, &r->b->version) < 0)
                                        rank++;
                        }
                        r->rank = rank;
                }
        }
        return 0;
}

static int link_channels(struct ctx *c) {
        size_t total = 0;
        for (size_t i = 0; i < c->n_cats; i++) {
                const struct catalog *cat = c->cats[i].catalog;
                for (size_t j = 0; j < cat->n_channels; j++)
                        total += cat->channels[j].n_entries;
        }
        const char **names = calloc(total + 1, sizeof(*names));
        size_t *owner = calloc(total + 1, sizeof(*owner));
        if (!names || !owner) {
                free(names);
                free(owner);
                return -ENOMEM;
        }
        size_t k = 0;
        for (size_t i = 0; i < c->n_cats; i++) {
                const struct catalog *cat = c->cats[i].catalog;
                for (size_t j = 0; j < cat->n_channels; j++) {
                        const struct catalog_channel *ch = &cat->channels[j];
                        for (size_t e = 0; e < ch->n_entries; e++) {
                                size_t r = find_rb(c, i, ch->package, ch->entries[e].name);
                                if (r == NONE)
                                        continue;
                                names[k] = ch->name;
                                owner[k++] = r;
                                c->rbs[r].n_channels++;
                        }
                }
        }
        /* One array for all: each rb's slice, in channel order. */
        const char **all = calloc(k + 1, sizeof(*all));
        if (!all) {
                free(names);
                free(owner);
                return -ENOMEM;
        }
        size_t off = 0;
        for (size_t r = 0; r < c->n_rbs; r++) {
                c->rbs[r].channels = all + off;
                off += c->rbs[r].n_channels;
                c->rbs[r].n_channels = 0;
        }
        for (size_t i = 0; i < k; i++) {
                struct rb *r = &c->rbs[owner[i]];
                r->channels[r->n_channels++] = names[i];
        }
        if (c->n_rbs == 0)
                free(all);
        free(names);
        free(owner);
        return 0;
}

/* ---------- the request against the groups ---------- */

static bool package_has_channel(const struct ctx *c, const char *package, const char *channel) {
        for (size_t i = 0; i < c->n_cats; i++) {
                const struct catalog *cat = c->cats[i].catalog;
                for (size_t j = 0; j < cat->n_channels; j++)
                        if (strcmp(cat->channels[j].package, package) == 0 &&
                            strcmp(cat->channels[j].name, channel) == 0)
                                return true;
        }
        return false;
}

static size_t cat_index(const struct ctx *c, const char *name) {
        for (size_t i = 0; i < c->n_cats; i++)
                if (strcmp(c->cats[i].name, name) == 0)
                        return i;
        return NONE;
}

static int bind_subscriptions(struct ctx *c) {
        const struct resolve_request *q = c->req;
        c->sub_ranges = calloc(q->n_subscriptions + 1, sizeof(*c->sub_ranges));
        if (!c->sub_ranges)
                return -ENOMEM;
        for (size_t i = 0; i < q->n_subscriptions; i++) {
                const struct resolve_subscription *s = &q->subscriptions[i];
                int g = find_group(c, s->package);
                if (g < 0)
                        return errmsg(c->err, c->errlen, -ENOENT, "no catalog has package %s", s->package);
                if (c->groups[g].sub != NONE)
                        return errmsg(c->err, c->errlen, -EINVAL, "package %s is subscribed to twice", s->package);
                c->groups[g].sub = i;
                if (s->channel && !package_has_channel(c, s->package, s->channel))
                        return errmsg(c->err, c->errlen, -ENOENT, "package %s has no channel %s in any catalog",
                                      s->package, s->channel);
                if (s->catalog) {
                        size_t ci = cat_index(c, s->catalog);
                        if (ci == NONE)
                                return errmsg(c->err, c->errlen, -ENOENT, "no catalog %s", s->catalog);
                        if (!find_package(c->cats[ci].catalog, s->package))
                                return errmsg(c->err, c->errlen, -ENOENT, "catalog %s has no package %s",
                                              s->catalog, s->package);
                }
                if (s->version_range) {
                        char why[256];
                        int r = semver_range_parse(s->version_range, &c->sub_ranges[i], why, sizeof(why));
                        if (r < 0)
                                return errmsg(c->err, c->errlen, r, "version range of %s: %s", s->package, why);
                }
        }
        return 0;
}

static bool asked_upgrade(const struct ctx *c, const char *package) {
        if (c->req->upgrade_all)
                return true;
        for (size_t i = 0; i < c->req->n_upgrade; i++)
                if (strcmp(c->req->upgrade[i], package) == 0)
                        return true;
        return false;
}

/* Mark the bundles reachable from the installed one along the upgrade graph
 * of the channel: entries that replace it, skip it or whose skipRange holds
 * its version, and so on from each. */
static int mark_upgrade_path(struct ctx *c, struct rgroup *gr, const char *channel) {
        gr->reach = calloc(gr->n + 1, sizeof(*gr->reach));
        if (!gr->reach)
                return -ENOMEM;
        size_t inst_pos = NONE;
        for (size_t i = 0; i < gr->n; i++)
                if (c->order[gr->first + i] == gr->inst_rb)
                        inst_pos = i;
        gr->reach[inst_pos] = true;
        const struct rb *inst = &c->rbs[gr->inst_rb];
        const struct catalog *cat = c->cats[inst->cat].catalog;
        for (bool changed = true; changed;) {
                changed = false;
                for (size_t j = 0; j < cat->n_channels; j++) {
                        const struct catalog_channel *ch = &cat->channels[j];
                        if (strcmp(ch->package, gr->name) != 0 || strcmp(ch->name, channel) != 0)
                                continue;
                        for (size_t e = 0; e < ch->n_entries; e++) {
                                const struct catalog_entry *en = &ch->entries[e];
                                size_t to = NONE;
                                for (size_t i = 0; i < gr->n; i++) {
                                        const struct rb *r = &c->rbs[c->order[gr->first + i]];
                                        if (r->cat == inst->cat && strcmp(r->b->name, en->name) == 0)
                                                to = i;
                                }
                                if (to == NONE || gr->reach[to])
                                        continue;
                                for (size_t i = 0; i < gr->n && !gr->reach[to]; i++) {
                                        if (!gr->reach[i])
                                                continue;
                                        const struct rb *from = &c->rbs[c->order[gr->first + i]];
                                        bool edge = en->replaces && strcmp(en->replaces, from->b->name) == 0;
                                        for (size_t s = 0; !edge && s < en->n_skips; s++)
                                                edge = strcmp(en->skips[s], from->b->name) == 0;
                                        if (!edge && en->has_skip_range)
                                                edge = semver_range_match(&en->skip_range, &from->b->version);
                                        if (edge)
                                                gr->reach[to] = changed = true;
                                }
                        }
                }
        }
        return 0;
}

static int bind_installed(struct ctx *c) {
        const struct resolve_request *q = c->req;
        c->any_upgrade = q->upgrade_all || q->n_upgrade > 0;
        for (size_t i = 0; i < q->n_upgrade; i++) {
                if (!q->upgrade[i] || find_group(c, q->upgrade[i]) < 0)
                        return errmsg(c->err, c->errlen, -ENOENT, "no catalog has package %s",
                                      q->upgrade[i] ? q->upgrade[i] : "(null)");
        }
        for (size_t i = 0; i < q->n_installed; i++) {
                const struct resolve_installed *in = &q->installed[i];
                size_t ci = cat_index(c, in->catalog);
                size_t r = ci == NONE ? NONE : find_rb(c, ci, in->package, in->bundle);
                if (r == NONE)
                        return errmsg(c->err, c->errlen, -ENOENT, "installed bundle %s of %s is in no catalog %s",
                                      in->bundle, in->package, in->catalog);
                struct rgroup *gr = &c->groups[c->rbs[r].group];
                if (gr->inst != NONE)
                        return errmsg(c->err, c->errlen, -EINVAL, "package %s is installed twice", in->package);
                gr->inst = i;
                gr->inst_rb = r;
                gr->upgrade = asked_upgrade(c, gr->name) || (in->dependency && c->any_upgrade);
                if (gr->upgrade) {
                        const struct resolve_subscription *s =
                                gr->sub != NONE ? &q->subscriptions[gr->sub] : NULL;
                        const char *channel = s && s->channel ? s->channel
                                              : c->rbs[r].pkg ? c->rbs[r].pkg->default_channel : "";
                        int e = mark_upgrade_path(c, gr, channel);
                        if (e < 0)
                                return e;
                }
        }
        return 0;
}

/* ---------- the pool ---------- */

static int note_dep(struct ctx *c, Id id, struct rdep d) {
        if ((size_t) id >= c->n_deps) {
                size_t n = (size_t) id + 1024;
                struct rdep *p = realloc(c->deps, n * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                memset(p + c->n_deps, 0, (n - c->n_deps) * sizeof(*p));
                for (size_t i = c->n_deps; i < n; i++)
                        p[i].kind = (enum rdep_kind) - 1;
                c->deps = p;
                c->n_deps = n;
        }
        if ((int) c->deps[id].kind == -1)
                c->deps[id] = d;
        return 0;
}

static Id gvk_id(struct ctx *c, const struct catalog_gvk *g) {
        char buf[3 * CATALOG_MAX_GVK_PART + 16];
        snprintf(buf, sizeof(buf), "olm.gvk(%s/%s/%s)", g->group, g->version, g->kind);
        return pool_str2id(c->pool, buf, 1);
}

static Id package_dep_id(struct ctx *c, const struct catalog_required_package *rp) {
        size_t n = strlen(rp->package) + strlen(rp->range_text) + 16;
        char *buf = malloc(n);
        if (!buf)
                return 0;
        snprintf(buf, n, "olm.package(%s %s)", rp->package, rp->range_text);
        Id id = pool_str2id(c->pool, buf, 1);
        free(buf);
        return id;
}

static bool skips_dependencies(const struct ctx *c, const struct rb *r) {
        const struct rgroup *gr = &c->groups[r->group];
        return gr->sub != NONE && c->req->subscriptions[gr->sub].skip_dependencies;
}

/* Each package requirement becomes a provide of the bundles it allows. */
static int add_requirement_provides(struct ctx *c, const struct catalog_required_package *rp) {
        Id id = package_dep_id(c, rp);
        if (!id)
                return -ENOMEM;
        if ((size_t) id < c->n_deps && (int) c->deps[id].kind != -1)
                return 0; /* seen */
        int e = note_dep(c, id, (struct rdep) { .kind = RDEP_PACKAGE, .rp = rp });
        if (e < 0)
                return e;
        int g = find_group(c, rp->package);
        if (g < 0)
                return 0; /* nothing provides it: libsolv says so */
        const struct rgroup *gr = &c->groups[g];
        for (size_t i = 0; i < gr->n; i++) {
                struct rb *r = &c->rbs[c->order[gr->first + i]];
                if (!semver_range_match(&rp->range, &r->b->version))
                        continue;
                if (grow((void **) &r->extra, &r->cap_extra, r->n_extra + 1, sizeof(*r->extra)) < 0)
                        return -ENOMEM;
                r->extra[r->n_extra++] = id;
        }
        return 0;
}

static int add_solvable(struct ctx *c, struct rb *r) {
        Repo *repo = c->repos[r->cat];
        Pool *pool = c->pool;
        r->id = repo_add_solvable(repo);
        Solvable *s = pool_id2solvable(pool, r->id);
        char rank[16];
        snprintf(rank, sizeof(rank), "%u", r->rank);
        s->name = pool_str2id(pool, r->b->package, 1);
        s->evr = pool_str2id(pool, rank, 1);
        s->arch = ARCH_NOARCH;
        s->provides = repo_addid_dep(repo, s->provides, pool_rel2id(pool, s->name, s->evr, REL_EQ, 1), 0);
        for (size_t i = 0; i < r->n_extra; i++)
                s->provides = repo_addid_dep(repo, s->provides, r->extra[i], 0);
        for (size_t i = 0; i < r->b->n_provides_gvks; i++) {
                Id g = gvk_id(c, &r->b->provides_gvks[i]);
                if (note_dep(c, g, (struct rdep) { .kind = RDEP_GVK, .gvk = &r->b->provides_gvks[i] }) < 0)
                        return -ENOMEM;
                s->provides = repo_addid_dep(repo, s->provides, g, 0);
                s->conflicts = repo_addid_dep(repo, s->conflicts, g, 0);
        }
        if (skips_dependencies(c, r))
                return 0;
        for (size_t i = 0; i < r->b->n_requires_packages; i++) {
                Id d = package_dep_id(c, &r->b->requires_packages[i]);
                if (!d)
                        return -ENOMEM;
                s->requires = repo_addid_dep(repo, s->requires, d, 0);
        }
        for (size_t i = 0; i < r->b->n_requires_gvks; i++) {
                Id g = gvk_id(c, &r->b->requires_gvks[i]);
                if (note_dep(c, g, (struct rdep) { .kind = RDEP_GVK, .gvk = &r->b->requires_gvks[i] }) < 0)
                        return -ENOMEM;
                s->requires = repo_addid_dep(repo, s->requires, g, 0);
        }
        return 0;
}

static int build_pool(struct ctx *c) {
        c->pool = pool_create();
        c->repos = calloc(c->n_cats + 1, sizeof(*c->repos));
        if (!c->pool || !c->repos)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_cats; i++) {
                c->repos[i] = repo_create(c->pool, c->cats[i].name);
                /* The catalog order (priority, then name) as libsolv's priority. */
                c->repos[i]->priority = -(int) i;
        }
        for (size_t i = 0; i < c->n_rbs; i++) {
                struct rb *r = &c->rbs[i];
                if (skips_dependencies(c, r))
                        continue;
                for (size_t j = 0; j < r->b->n_requires_packages; j++) {
                        int e = add_requirement_provides(c, &r->b->requires_packages[j]);
                        if (e < 0)
                                return e;
                }
        }
        for (size_t i = 0; i < c->n_rbs; i++) {
                int e = add_solvable(c, &c->rbs[i]);
                if (e < 0)
                        return e;
        }
        for (size_t i = 0; i < c->n_cats; i++)
                repo_internalize(c->repos[i]);
        pool_createwhatprovides(c->pool);
        c->n_rb_of_id = (size_t) c->pool->nsolvables;
        c->rb_of_id = malloc((c->n_rb_of_id + 1) * sizeof(*c->rb_of_id));
        if (!c->rb_of_id)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_rb_of_id; i++)
                c->rb_of_id[i] = NONE;
        for (size_t i = 0; i < c->n_rbs; i++)
                c->rb_of_id[c->rbs[i].id] = i;
        return 0;
}

static size_t rb_of(const struct ctx *c, Id p) {
        return p > 0 && (size_t) p < c->n_rb_of_id ? c->rb_of_id[p] : NONE;
}

/* ---------- the jobs ---------- */

enum forbid { FORBID_CHANNEL, FORBID_CATALOG, FORBID_RANGE, FORBID_KEPT, FORBID_PATH };

static int push_job(struct ctx *c, Id how, Id what, struct rjob j) {
        if (grow((void **) &c->jobs, &c->cap_jobs, c->n_jobs + 1, sizeof(*c->jobs)) < 0)
                return -ENOMEM;
        queue_push2(&c->job, how, what);
        c->jobs[c->n_jobs++] = j;
        return 0;
}

static const struct rjob *job_at(const struct ctx *c, Id rp) {
        /* libsolv names a job by the position of its `what` element. */
        size_t i = ((size_t) rp - 1) / 2;
        return rp >= 1 && i < c->n_jobs ? &c->jobs[i] : NULL;
}

/* The channel a package's dependencies come from for this bundle. */
static const char *allowed_channel(const struct ctx *c, const struct rb *r) {
        const struct rgroup *gr = &c->groups[r->group];
        if (gr->sub != NONE && c->req->subscriptions[gr->sub].channel)
                return c->req->subscriptions[gr->sub].channel;
        return r->pkg ? r->pkg->default_channel : NULL;
}

static size_t pos_in_group(const struct ctx *c, const struct rgroup *gr, size_t rbi) {
        for (size_t i = 0; i < gr->n; i++)
                if (c->order[gr->first + i] == rbi)
                        return i;
        return NONE;
}

static int add_reason(struct growbuf *text, int *first, int kind, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int add_reason(struct growbuf *text, int *first, int kind, const char *fmt, ...) {
        if (*first < 0)
                *first = kind;
        if (text->len && growbuf_printf(text, RESOLVE_TEXT_MAX, "; ") < 0)
                return -ENOMEM;
        char buf[CATALOG_MAX_NAME * 2 + SEMVER_RANGE_MAX_LEN + 128];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return growbuf_printf(text, RESOLVE_TEXT_MAX, "%s", buf);
}

static int forbid_reasons(struct ctx *c, size_t rbi, struct growbuf *text, int *first) {
        const struct rb *r = &c->rbs[rbi];
        const struct rgroup *gr = &c->groups[r->group];
        const struct resolve_subscription *s = gr->sub != NONE ? &c->req->subscriptions[gr->sub] : NULL;
        int e = 0;
        const char *ch = allowed_channel(c, r);
        if (!ch || !rb_in_channel(r, ch))
                e = add_reason(text, first, FORBID_CHANNEL,
                               s ? "not in channel %s, the subscription's"
                                 : "not in channel %s, the default one dependencies come from",
                               ch ? ch : "(none)");
        if (e >= 0 && s && s->catalog && strcmp(s->catalog, cat_name(c, r)) != 0)
                e = add_reason(text, first, FORBID_CATALOG, "not from catalog %s, the subscription's",
                               s->catalog);
        if (e >= 0 && s && s->version_range && !semver_range_match(&c->sub_ranges[gr->sub], &r->b->version))
                e = add_reason(text, first, FORBID_RANGE, "outside the subscription's range %s",
                               s->version_range);
        if (e >= 0 && gr->inst_rb != NONE && gr->inst_rb != rbi) {
                const char *inst = c->rbs[gr->inst_rb].b->name;
                if (!gr->upgrade)
                        e = add_reason(text, first, FORBID_KEPT,
                                       "%s is installed and no upgrade was asked for", inst);
                else if (!gr->reach[pos_in_group(c, gr, rbi)])
                        e = add_reason(text, first, FORBID_PATH,
                                       "not on the upgrade path from the installed %s", inst);
        }
        return e < 0 ? -ENOMEM : 0;
}

static int add_forbids(struct ctx *c) {
        for (size_t i = 0; i < c->n_rbs; i++) {
                struct growbuf b = { 0 };
                int first = -1;
                if (forbid_reasons(c, i, &b, &first) < 0) {
                        free(b.data);
                        return -ENOMEM;
                }
                char *text = b.data;
                if (!text)
                        continue;
                struct rjob j = { .kind = RJOB_FORBID, .ref = i, .reason = text, .why = first };
                c->rbs[i].forbidden = true;
                if (push_job(c, SOLVER_ERASE | SOLVER_SOLVABLE, c->rbs[i].id, j) < 0) {
                        free(text);
                        return -ENOMEM;
                }
        }
        return 0;
}

static int group_job(struct ctx *c, const struct rgroup *gr, struct rjob j) {
        Queue q;
        queue_init(&q);
        for (size_t i = 0; i < gr->n; i++)
                queue_push(&q, c->rbs[c->order[gr->first + i]].id);
        Id what = pool_queuetowhatprovides(c->pool, &q);
        queue_free(&q);
        return push_job(c, SOLVER_INSTALL | SOLVER_SOLVABLE_ONE_OF, what, j);
}

/* Most preferred first: the installed bundle, then the catalog order, the
 * package name and the newest version. */
static int cmp_pref(const void *a, const void *b) {
        const struct ctx *c = sort_ctx;
        size_t ia = *(const size_t *) a, ib = *(const size_t *) b;
        const struct rb *x = &c->rbs[ia], *y = &c->rbs[ib];
        /* An installed bundle is kept, unless an upgrade was asked for. */
        bool xi = c->groups[x->group].inst_rb == ia && !c->groups[x->group].upgrade;
        bool yi = c->groups[y->group].inst_rb == ib && !c->groups[y->group].upgrade;
        if (xi != yi)
                return xi ? -1 : 1;
        if (x->cat != y->cat)
                return x->cat < y->cat ? -1 : 1;
        int r = strcmp(x->b->package, y->b->package);
        if (r)
                return r;
        if (x->rank != y->rank)
                return x->rank > y->rank ? -1 : 1;
        return ia < ib ? -1 : ia > ib;
}

/* Packages whose bundles provide an API another package provides too: a
 * requirement of that API is a choice between packages, which libsolv's own
 * policy does not decide by our order. */
static void mark_shared_apis(struct ctx *c) {
        Pool *pool = c->pool;
        for (size_t id = 1; id < c->n_deps; id++) {
                if (c->deps[id].kind != RDEP_GVK)
                        continue;
                size_t first = NONE;
                bool shared = false;
                Id p, pp;
                FOR_PROVIDES(p, pp, (Id) id) {
                        size_t x = rb_of(c, p);
                        if (x == NONE)
                                continue;
                        if (first == NONE)
                                first = c->rbs[x].group;
                        else if (c->rbs[x].group != first)
                                shared = true;
                }
                if (!shared)
                        continue;
                FOR_PROVIDES(p, pp, (Id) id) {
                        size_t x = rb_of(c, p);
                        if (x != NONE)
                                c->groups[c->rbs[x].group].favour = true;
                }
        }
}

/* libsolv already prefers what our order prefers between bundles of one
 * package: the catalog first (repo priorities follow the catalog order),
 * then the newest version (evr ranks). Favour jobs say the rest: an
 * installed bundle is kept, and a choice between packages providing one API
 * follows the catalog order, then package name order. A package's bundles
 * are favoured all or none, so that a favoured bundle never wins over its
 * own package's better ones. */
static int add_favours(struct ctx *c) {
        size_t *pref = malloc((c->n_rbs + 1) * sizeof(*pref)), n = 0;
        if (!pref)
                return -ENOMEM;
        mark_shared_apis(c);
        for (size_t i = 0; i < c->n_rbs; i++) {
                const struct rgroup *gr = &c->groups[c->rbs[i].group];
                if (gr->favour || gr->inst_rb != NONE)
                        pref[n++] = i;
        }
        sort_ctx = c;
        qsort(pref, n, sizeof(*pref), cmp_pref);
        /* A later favour job wins: push the least preferred first. */
        int e = 0;
        for (size_t i = n; i-- > 0 && e >= 0;)
                e = push_job(c, SOLVER_FAVOR | SOLVER_SOLVABLE, c->rbs[pref[i]].id,
                             (struct rjob) { .kind = RJOB_FAVOR, .ref = pref[i] });
        free(pref);
        return e;
}

static int build_jobs(struct ctx *c) {
        queue_init(&c->job);
        for (size_t i = 0; i < c->req->n_subscriptions; i++) {
                int g = find_group(c, c->req->subscriptions[i].package);
                if (group_job(c, &c->groups[g], (struct rjob) { .kind = RJOB_SUBSCRIBE, .ref = i }) < 0)
                        return -ENOMEM;
        }
        for (size_t g = 0; g < c->n_groups; g++) {
                const struct rgroup *gr = &c->groups[g];
                if (gr->sub != NONE || gr->inst == NONE || c->req->prune)
                        continue;
                if (!c->req->installed[gr->inst].dependency)
                        continue; /* unsubscribed: it goes */
                if (group_job(c, gr, (struct rjob) { .kind = RJOB_KEEP, .ref = g }) < 0)
                        return -ENOMEM;
        }
        int e = add_forbids(c);
        return e < 0 ? e : add_favours(c);
}

/* ---------- words ---------- */

/* A text being said: its words, and -ENOMEM (or -E2BIG past
 * RESOLVE_TEXT_MAX) once a part of it could not be added. */
struct text {
        struct growbuf b;
        int e;
};

#define say(t, ...)                                                                    \
        do {                                                                           \
                if ((t)->e >= 0)                                                       \
                        (t)->e = growbuf_printf(&(t)->b, RESOLVE_TEXT_MAX, __VA_ARGS__); \
        } while (0)

static void say_bundle(struct text *t, const struct ctx *c, size_t rbi) {
        const struct rb *r = &c->rbs[rbi];
        say(t, "%s (%s %s from catalog %s)", r->b->name, r->b->package, r->b->version.text, cat_name(c, r));
}

static void say_dep(struct text *t, const struct ctx *c, Id dep) {
        if (dep > 0 && (size_t) dep < c->n_deps && (int) c->deps[dep].kind != -1) {
                const struct rdep *d = &c->deps[dep];
                if (d->kind == RDEP_PACKAGE)
                        say(t, "package %s %s", d->rp->package, d->rp->range_text);
                else
                        say(t, "API %s/%s %s", d->gvk->group, d->gvk->version, d->gvk->kind);
                return;
        }
        say(t, "%s", pool_dep2str(c->pool, dep));
}

static void say_subscription(struct text *t, const struct ctx *c, size_t i) {
        const struct resolve_subscription *s = &c->req->subscriptions[i];
        say(t, "the subscription to %s", s->package);
        if (s->channel)
                say(t, " (channel %s)", s->channel);
        if (s->catalog)
                say(t, " from catalog %s", s->catalog);
        if (s->version_range)
                say(t, " at versions %s", s->version_range);
}

/* What versions of the package a requirement asks for exist, for "nothing provides". */
static void say_available(struct text *t, const struct ctx *c, Id dep) {
        if (dep <= 0 || (size_t) dep >= c->n_deps || c->deps[dep].kind != RDEP_PACKAGE)
                return;
        int g = find_group(c, c->deps[dep].rp->package);
        if (g < 0) {
                say(t, " (no catalog has package %s)", c->deps[dep].rp->package);
                return;
        }
        const struct rgroup *gr = &c->groups[g];
        say(t, " (the catalogs have");
        for (size_t i = 0; i < gr->n && i < 8; i++) {
                const struct rb *r = &c->rbs[c->order[gr->first + i]];
                say(t, "%s %s from %s", i ? "," : "", r->b->version.text, cat_name(c, r));
        }
        say(t, "%s)", gr->n > 8 ? ", ..." : "");
}

static void say_job_rule(struct text *t, const struct ctx *c, const struct rjob *j) {
        if (!j) {
                say(t, "a request");
                return;
        }
        switch (j->kind) {
        case RJOB_SUBSCRIBE:
                say(t, "you asked for ");
                say_subscription(t, c, j->ref);
                break;
        case RJOB_FORBID:
                say_bundle(t, c, j->ref);
                say(t, " is not allowed: %s", j->reason);
                break;
        case RJOB_KEEP:
                say(t, "%s stays installed as a dependency (without --prune)", c->groups[j->ref].name);
                break;
        case RJOB_FAVOR:
                say(t, "a preference");
                break;
        }
}

static void say_rule(struct text *t, const struct ctx *c, Solver *solv, Id rid) {
        Id src = 0, tgt = 0, dep = 0;
        SolverRuleinfo type = solver_ruleinfo(solv, rid, &src, &tgt, &dep);
        size_t a = rb_of(c, src), b = rb_of(c, tgt);
        switch (type) {
        case SOLVER_RULE_JOB:
                say_job_rule(t, c, job_at(c, solver_rule2jobidx(solv, rid)));
                return;
        case SOLVER_RULE_PKG_REQUIRES:
                if (a != NONE) {
                        say_bundle(t, c, a);
                        say(t, " requires ");
                        say_dep(t, c, dep);
                        return;
                }
                break;
        case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
                if (a != NONE) {
                        say_bundle(t, c, a);
                        say(t, " requires ");
                        say_dep(t, c, dep);
                        say(t, ", which no bundle of any catalog satisfies");
                        say_available(t, c, dep);
                        return;
                }
                break;
        case SOLVER_RULE_PKG_SAME_NAME:
                /* Said once per package, not once per pair of its versions. */
                if (a != NONE) {
                        say(t, "only one bundle of package %s can be installed", c->rbs[a].b->package);
                        return;
                }
                break;
        case SOLVER_RULE_PKG_CONFLICTS:
                if (a != NONE && b != NONE) {
                        const char *x = c->rbs[a].b->package, *y = c->rbs[b].b->package;
                        if (strcmp(x, y) > 0) {
                                const char *z = x;
                                x = y;
                                y = z;
                        }
                        say(t, "packages %s and %s both provide ", x, y);
                        say_dep(t, c, dep);
                        say(t, ", and a cluster has one provider of an API");
                        return;
                }
                break;
        default:
                break;
        }
        say(t, "%s", solver_problemruleinfo2str(solv, type, src, tgt, dep));
}

static void say_solution_element(struct text *t, const struct ctx *c, Solver *solv, Id p, Id rp) {
        if (p == SOLVER_SOLUTION_JOB) {
                const struct rjob *j = job_at(c, rp);
                if (j && j->kind == RJOB_SUBSCRIBE) {
                        say(t, "drop ");
                        say_subscription(t, c, j->ref);
                } else if (j && j->kind == RJOB_FORBID) {
                        const struct rb *r = &c->rbs[j->ref];
                        switch (j->why) {
                        case FORBID_KEPT:
                        case FORBID_PATH:
                                say(t, "upgrade %s to %s from catalog %s", r->b->package, r->b->version.text,
                                    cat_name(c, r));
                                break;
                        case FORBID_CHANNEL:
                                say(t, "allow %s %s from catalog %s (subscribe to %s on a channel holding %s)",
                                    r->b->package, r->b->version.text, cat_name(c, r), r->b->package, r->b->name);
                                break;
                        default:
                                say(t, "allow %s %s from catalog %s", r->b->package, r->b->version.text,
                                    cat_name(c, r));
                                break;
                        }
                } else if (j && j->kind == RJOB_KEEP) {
                        say(t, "remove %s (--prune)", c->groups[j->ref].name);
                } else {
                        say(t, "%s", solver_solutionelement2str(solv, p, rp));
                }
                return;
        }
        size_t a = rb_of(c, p), b = rb_of(c, rp);
        if (a != NONE && b != NONE) {
                say(t, "take ");
                say_bundle(t, c, b);
                say(t, " instead of ");
                say_bundle(t, c, a);
                return;
        }
        say(t, "%s", solver_solutionelement2str(solv, p, rp));
}

/* ---------- problems ---------- */

static bool has_line(char **lines, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(lines[i], s) == 0)
                        return true;
        return false;
}

/* Lines of a problem are told in this order: what was asked, what
 * requires what, what is not allowed, what conflicts; libsolv's order
 * within each. */
static int rule_rank(const struct ctx *c, Solver *solv, Id rid) {
        Id src, tgt, dep;
        SolverRuleinfo type = solver_ruleinfo(solv, rid, &src, &tgt, &dep);
        if (type == SOLVER_RULE_JOB) {
                const struct rjob *j = job_at(c, solver_rule2jobidx(solv, rid));
                return j && j->kind == RJOB_FORBID ? 2 : 0;
        }
        if (type == SOLVER_RULE_PKG_REQUIRES || type == SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP)
                return 1;
        return 3;
}

static void problem_text(struct ctx *c, Solver *solv, const Queue *rq, struct text *all) {
        char *lines[MAX_PROBLEM_LINES];
        size_t n = 0;
        for (int rank = 0; rank < 4; rank++)
                for (int i = 0; i < rq->count && n < MAX_PROBLEM_LINES && all->e >= 0; i++) {
                        if (rule_rank(c, solv, rq->elements[i]) != rank)
                                continue;
                        struct text l = { 0 };
                        say_rule(&l, c, solv, rq->elements[i]);
                        if (l.e < 0 || !l.b.data || has_line(lines, n, l.b.data)) {
                                all->e = l.e < 0 ? l.e : all->e;
                                free(l.b.data);
                                continue;
                        }
                        say(all, "%s%s", n ? "; " : "", l.b.data);
                        lines[n++] = l.b.data;
                }
        for (size_t i = 0; i < n; i++)
                free(lines[i]);
}

static int read_problem(struct ctx *c, Solver *solv, Id pr, struct resolve_problem *out) {
        Queue rq;
        queue_init(&rq);
        solver_findallproblemrules(solv, pr, &rq);
        struct text all = { 0 };
        problem_text(c, solv, &rq, &all);
        queue_free(&rq);
        out->text = all.b.data;
        if (all.e < 0)
                return all.e;
        unsigned ns = solver_solution_count(solv, pr);
        out->solutions = calloc(ns + 1, sizeof(*out->solutions));
        if (!out->solutions)
                return -ENOMEM;
        for (Id s = 1; s <= (Id) ns && out->n_solutions < MAX_SOLUTIONS; s++) {
                struct text t = { 0 };
                Id el = 0, p, rp;
                while ((el = solver_next_solutionelement(solv, pr, s, el, &p, &rp)) != 0) {
                        if (t.b.len)
                                say(&t, " and ");
                        say_solution_element(&t, c, solv, p, rp);
                }
                if (t.e < 0) {
                        free(t.b.data);
                        return -ENOMEM;
                }
                if (t.b.data)
                        out->solutions[out->n_solutions++] = t.b.data;
        }
        return 0;
}

static int read_problems(struct ctx *c, Solver *solv, int nprob, struct resolve_plan *out) {
        out->problems = calloc((size_t) nprob + 1, sizeof(*out->problems));
        if (!out->problems)
                return -ENOMEM;
        for (Id pr = 1; pr <= nprob; pr++) {
                int e = read_problem(c, solv, pr, &out->problems[out->n_problems++]);
                if (e < 0)
                        return e;
        }
        return 0;
}

/* ---------- the plan ---------- */

struct edge {
        size_t dep, by; /* rb `dep` satisfies a requirement of rb `by` */
        Id what;
};

struct planning {
        struct edge *edges;
        size_t n_edges, cap_edges;
        size_t *sub_of; /* per rb: the first subscription reaching it */
        bool *needed;
};

static int collect_edges(struct ctx *c, struct planning *pl) {
        for (size_t g = 0; g < c->n_groups; g++) {
                size_t x = c->groups[g].chosen;
                if (x == NONE)
                        continue;
                Pool *pool = c->pool;
                Solvable *s = pool_id2solvable(pool, c->rbs[x].id);
                if (!s->requires)
                        continue;
                for (Id *dp = s->repo->idarraydata + s->requires; *dp; dp++) {
                        Id p, pp;
                        FOR_PROVIDES(p, pp, *dp) {
                                size_t d = rb_of(c, p);
                                if (d == NONE || c->groups[c->rbs[d].group].chosen != d || d == x)
                                        continue;
                                if (grow((void **) &pl->edges, &pl->cap_edges, pl->n_edges + 1,
                                         sizeof(*pl->edges)) < 0)
                                        return -ENOMEM;
                                pl->edges[pl->n_edges++] = (struct edge) { .dep = d, .by = x, .what = *dp };
                        }
                }
        }
        return 0;
}

/* Which subscription brought each chosen bundle in, and what is needed. */
static int walk_closure(struct ctx *c, struct planning *pl) {
        pl->sub_of = malloc((c->n_rbs + 1) * sizeof(*pl->sub_of));
        pl->needed = calloc(c->n_rbs + 1, sizeof(*pl->needed));
        size_t *stack = malloc((c->n_rbs + 1) * sizeof(*stack));
        if (!pl->sub_of || !pl->needed || !stack) {
                free(stack);
                return -ENOMEM;
        }
        for (size_t i = 0; i < c->n_rbs; i++)
                pl->sub_of[i] = NONE;
        /* A package subscribed to serves its own subscription, even when an
         * earlier one needs it too. */
        for (size_t i = 0; i < c->req->n_subscriptions; i++) {
                size_t x = c->groups[find_group(c, c->req->subscriptions[i].package)].chosen;
                if (x != NONE && pl->sub_of[x] == NONE)
                        pl->sub_of[x] = i;
        }
        for (size_t i = 0; i < c->req->n_subscriptions; i++) {
                int g = find_group(c, c->req->subscriptions[i].package);
                size_t top = 0, x = c->groups[g].chosen;
                if (x == NONE || pl->needed[x])
                        continue;
                pl->needed[x] = true;
                stack[top++] = x;
                while (top) {
                        size_t y = stack[--top];
                        for (size_t e = 0; e < pl->n_edges; e++) {
                                size_t d = pl->edges[e].dep;
                                if (pl->edges[e].by != y || pl->needed[d])
                                        continue;
                                pl->needed[d] = true;
                                if (pl->sub_of[d] == NONE)
                                        pl->sub_of[d] = i;
                                stack[top++] = d;
                        }
                }
        }
        free(stack);
        return 0;
}

static void say_requirers(struct text *t, struct ctx *c, Solver *solv, struct planning *pl, size_t x) {
        Id info = 0, src = 0, tgt = 0, dep = 0;
        size_t first = NONE;
        int reason = solver_describe_decision(solv, c->rbs[x].id, &info);
        if ((reason == SOLVER_REASON_RESOLVE || reason == SOLVER_REASON_UNIT_RULE) && info > 0 &&
            solver_ruleinfo(solv, info, &src, &tgt, &dep) == SOLVER_RULE_PKG_REQUIRES &&
            (first = rb_of(c, src)) != NONE) {
                say(t, "required by ");
                say_bundle(t, c, first);
                say(t, ": ");
                say_dep(t, c, dep);
        }
        bool any = first != NONE;
        for (size_t e = 0; e < pl->n_edges; e++) {
                const struct edge *ed = &pl->edges[e];
                if (ed->dep != x || (ed->by == first && ed->what == dep))
                        continue;
                say(t, any ? "; and by " : "required by ");
                any = true;
                say_bundle(t, c, ed->by);
                say(t, ": ");
                say_dep(t, c, ed->what);
        }
}

static char *dup_or_null(const char *s, int *e) {
        if (!s)
                return NULL;
        char *d = strdup(s);
        if (!d)
                *e = -ENOMEM;
        return d;
}

static void say_subscribed_why(struct text *t, const struct ctx *c, const struct rgroup *gr, size_t x) {
        const struct resolve_subscription *s = &c->req->subscriptions[gr->sub];
        if (gr->inst_rb == x)
                say(t, "subscribed; installed and kept");
        else if (gr->inst_rb != NONE)
                say(t, "subscribed; the newest bundle on the upgrade path from %s", c->rbs[gr->inst_rb].b->name);
        else
                say(t, "subscribed");
        say(t, " (channel %s)", allowed_channel(c, &c->rbs[x]) ? allowed_channel(c, &c->rbs[x]) : "-");
        if (s->skip_dependencies)
                say(t, "; installed alone: its dependencies are not resolved (skip_dependencies)");
}

static int fill_step(struct ctx *c, Solver *solv, struct planning *pl, size_t x, struct resolve_step *st) {
        const struct rb *r = &c->rbs[x];
        const struct rgroup *gr = &c->groups[r->group];
        const struct rb *inst = gr->inst_rb != NONE ? &c->rbs[gr->inst_rb] : NULL;
        struct text why = { 0 };
        int e = 0;
        st->action = !inst ? RESOLVE_INSTALL : gr->inst_rb == x ? RESOLVE_KEEP : RESOLVE_UPGRADE;
        st->dependency = gr->sub == NONE;
        st->subscription = pl->sub_of[x];
        st->dependencies_skipped = skips_dependencies(c, r);
        st->removable = st->dependency && !pl->needed[x];
        if (gr->sub != NONE)
                say_subscribed_why(&why, c, gr, x);
        else if (st->removable)
                say(&why, "installed as a dependency; nothing requires it now (--prune removes it)");
        else
                say_requirers(&why, c, solv, pl, x);
        if (st->action == RESOLVE_UPGRADE) {
                st->from_bundle = dup_or_null(inst->b->name, &e);
                st->from_version = dup_or_null(inst->b->version.text, &e);
        }
        const char *ch = allowed_channel(c, r);
        if (!ch || !rb_in_channel(r, ch))
                ch = r->n_channels ? r->channels[0] : NULL;
        st->package = dup_or_null(r->b->package, &e);
        st->bundle = dup_or_null(r->b->name, &e);
        st->version = dup_or_null(r->b->version.text, &e);
        st->catalog = dup_or_null(cat_name(c, r), &e);
        st->channel = dup_or_null(ch, &e);
        st->why = why.b.data;
        st->from_catalog = c->cats[r->cat].catalog;
        st->catalog_bundle = r->b;
        return why.e < 0 ? why.e : e;
}

static int fill_removal(struct ctx *c, const struct rgroup *gr, struct resolve_step *st) {
        const struct rb *r = &c->rbs[gr->inst_rb];
        const struct resolve_installed *in = &c->req->installed[gr->inst];
        int e = 0;
        st->action = RESOLVE_REMOVE;
        st->dependency = in->dependency;
        st->subscription = NONE;
        st->package = dup_or_null(r->b->package, &e);
        st->bundle = dup_or_null(r->b->name, &e);
        st->version = dup_or_null(r->b->version.text, &e);
        st->catalog = dup_or_null(cat_name(c, r), &e);
        st->channel = dup_or_null(r->n_channels ? r->channels[0] : NULL, &e);
        st->why = dup_or_null(in->dependency ? "installed as a dependency; nothing requires it now (pruned)"
                                             : "no longer subscribed to",
                              &e);
        st->from_catalog = c->cats[r->cat].catalog;
        st->catalog_bundle = r->b;
        return e;
}

/* Chosen bundles in dependency order: in rounds, every bundle whose chosen
 * dependencies are all placed, in package name order; a cycle is broken at
 * its first package by name. */
static int order_chosen(struct ctx *c, struct planning *pl, size_t *out, size_t *n_out) {
        size_t n = 0, left = 0;
        bool *placed = calloc(c->n_rbs + 1, sizeof(*placed));
        if (!placed)
                return -ENOMEM;
        for (size_t g = 0; g < c->n_groups; g++)
                left += c->groups[g].chosen != NONE;
        while (left) {
                size_t before = n;
                for (size_t g = 0; g < c->n_groups; g++) {
                        size_t x = c->groups[g].chosen;
                        if (x == NONE || placed[x])
                                continue;
                        bool ready = true;
                        for (size_t e = 0; e < pl->n_edges && ready; e++)
                                if (pl->edges[e].by == x && !placed[pl->edges[e].dep])
                                        ready = false;
                        if (ready)
                                out[n++] = x;
                }
                for (size_t i = before; i < n; i++)
                        placed[out[i]] = true;
                if (n == before) /* a cycle */
                        for (size_t g = 0; g < c->n_groups && n == before; g++)
                                if (c->groups[g].chosen != NONE && !placed[c->groups[g].chosen])
                                        placed[out[n++] = c->groups[g].chosen] = true;
                left -= n - before;
        }
        free(placed);
        *n_out = n;
        return 0;
}

static void mark_chosen(struct ctx *c, Solver *solv);

static int read_plan(struct ctx *c, Solver *solv, struct resolve_plan *out) {
        mark_chosen(c, solv);
        struct planning pl = { 0 };
        size_t *ord = malloc((c->n_groups + 1) * sizeof(*ord)), n_ord = 0;
        out->steps = calloc(c->n_groups + 1, sizeof(*out->steps));
        int e = !ord || !out->steps ? -ENOMEM : collect_edges(c, &pl);
        if (e >= 0)
                e = walk_closure(c, &pl);
        if (e >= 0)
                e = order_chosen(c, &pl, ord, &n_ord);
        for (size_t i = 0; e >= 0 && i < n_ord; i++)
                e = fill_step(c, solv, &pl, ord[i], &out->steps[out->n_steps++]);
        for (size_t g = 0; e >= 0 && g < c->n_groups; g++)
                if (c->groups[g].inst != NONE && c->groups[g].chosen == NONE)
                        e = fill_removal(c, &c->groups[g], &out->steps[out->n_steps++]);
        free(ord);
        free(pl.edges);
        free(pl.sub_of);
        free(pl.needed);
        out->ok = e >= 0;
        return e;
}

/* Among catalogs of equal priority a dependency comes from its dependent's
 * own catalog when it can: where the solution took a requirement's bundle
 * from another catalog of the same priority while the dependent's catalog
 * has an allowed one, favour that one above everything and solve again. */
static void mark_chosen(struct ctx *c, Solver *solv) {
        Queue dq;
        queue_init(&dq);
        solver_get_decisionqueue(solv, &dq);
        for (size_t g = 0; g < c->n_groups; g++)
                c->groups[g].chosen = NONE;
        for (int i = 0; i < dq.count; i++) {
                size_t x = rb_of(c, dq.elements[i]);
                if (x != NONE)
                        c->groups[c->rbs[x].group].chosen = x;
        }
        queue_free(&dq);
}

static size_t same_catalog_candidate(struct ctx *c, size_t x, size_t d, Id what) {
        Pool *pool = c->pool;
        const struct rb *rx = &c->rbs[x], *rd = &c->rbs[d];
        if (rd->cat == rx->cat || c->cats[rd->cat].priority != c->cats[rx->cat].priority)
                return NONE;
        size_t best = NONE;
        Id p, pp;
        FOR_PROVIDES(p, pp, what) {
                size_t o = rb_of(c, p);
                if (o == NONE || c->rbs[o].cat != rx->cat || c->rbs[o].forbidden)
                        continue;
                if (best == NONE || c->rbs[o].rank > c->rbs[best].rank)
                        best = o;
        }
        return best;
}

static int prefer_dependents_catalog(struct ctx *c, Solver *solv, size_t *added) {
        *added = 0;
        mark_chosen(c, solv);
        Pool *pool = c->pool;
        for (size_t g = 0; g < c->n_groups; g++) {
                size_t x = c->groups[g].chosen;
                if (x == NONE)
                        continue;
                Solvable *s = pool_id2solvable(pool, c->rbs[x].id);
                for (Id *dp = s->requires ? s->repo->idarraydata + s->requires : NULL; dp && *dp; dp++) {
                        Id p, pp;
                        FOR_PROVIDES(p, pp, *dp) {
                                size_t d = rb_of(c, p);
                                if (d == NONE || c->groups[c->rbs[d].group].chosen != d)
                                        continue;
                                size_t better = same_catalog_candidate(c, x, d, *dp);
                                if (better == NONE || better == d)
                                        continue;
                                int e = push_job(c, SOLVER_FAVOR | SOLVER_SOLVABLE, c->rbs[better].id,
                                                 (struct rjob) { .kind = RJOB_FAVOR, .ref = better });
                                if (e < 0)
                                        return e;
                                (*added)++;
                        }
                }
        }
        return 0;
}

static Solver *solve(struct ctx *c, int *nprob) {
        Solver *solv = solver_create(c->pool);
        solver_set_flag(solv, SOLVER_FLAG_IGNORE_RECOMMENDED, 1);
        *nprob = solver_solve(solv, &c->job);
        return solv;
}

/* Solve, then as long as a dependency could come from its dependent's
 * catalog (a few rounds at most), again. */
static Solver *solve_preferring(struct ctx *c, int *nprob, int *e) {
        Solver *solv = solve(c, nprob);
        for (int round = 0; round < 4 && *nprob == 0; round++) {
                size_t added = 0;
                *e = prefer_dependents_catalog(c, solv, &added);
                if (*e < 0 || added == 0)
                        break;
                solver_free(solv);
                solv = solve(c, nprob);
        }
        return solv;
}

/* ---------- entry points ---------- */

static void ctx_free(struct ctx *c) {
        for (size_t i = 0; i < c->n_rbs; i++)
                free(c->rbs[i].extra);
        if (c->n_rbs)
                free(c->rbs[0].channels);
        for (size_t g = 0; g < c->n_groups; g++)
                free(c->groups[g].reach);
        if (c->sub_ranges)
                for (size_t i = 0; i < c->req->n_subscriptions; i++)
                        semver_range_free(&c->sub_ranges[i]);
        for (size_t i = 0; i < c->n_jobs; i++)
                free(c->jobs[i].reason);
        if (c->pool)
                queue_free(&c->job);
        free(c->sub_ranges);
        free(c->jobs);
        free(c->deps);
        free(c->rb_of_id);
        free(c->repos);
        free(c->groups);
        free(c->order);
        free(c->rbs);
        free(c->cats);
        if (c->pool)
                pool_free(c->pool);
}

static int prepare(struct ctx *c) {
        int e = check_request(c);
        if (e >= 0)
                e = collect_bundles(c);
        if (e >= 0)
                e = make_groups(c);
        if (e >= 0)
                e = link_channels(c);
        if (e >= 0)
                e = bind_subscriptions(c);
        if (e >= 0)
                e = bind_installed(c);
        if (e >= 0)
                e = build_pool(c);
        if (e >= 0)
                e = build_jobs(c);
        if (e == -ENOMEM && c->err && c->errlen && !c->err[0])
                errmsg(c->err, c->errlen, e, "out of memory");
        return e;
}

int resolve(const struct resolve_request *req, struct resolve_plan *out, char *err, size_t errlen) {
        memset(out, 0, sizeof(*out));
        if (err && errlen)
                err[0] = '\0';
        if (!req)
                return errmsg(err, errlen, -EINVAL, "no request");
        struct ctx c = { .req = req, .err = err, .errlen = errlen };
        int e = prepare(&c);
        if (e >= 0) {
                int nprob = 0;
                Solver *solv = solve_preferring(&c, &nprob, &e);
                if (e >= 0)
                        e = nprob > 0 ? read_problems(&c, solv, nprob, out) : read_plan(&c, solv, out);
                solver_free(solv);
                if (e == -ENOMEM)
                        errmsg(err, errlen, e, "out of memory");
        }
        ctx_free(&c);
        if (e < 0)
                resolve_plan_free(out);
        return e < 0 ? e : 0;
}

void resolve_plan_free(struct resolve_plan *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_steps; i++) {
                struct resolve_step *s = &p->steps[i];
                free(s->package);
                free(s->bundle);
                free(s->version);
                free(s->catalog);
                free(s->channel);
                free(s->from_bundle);
                free(s->from_version);
                free(s->why);
        }
        for (size_t i = 0; i < p->n_problems; i++) {
                free(p->problems[i].text);
                for (size_t j = 0; j < p->problems[i].n_solutions; j++)
                        free(p->problems[i].solutions[j]);
                free(p->problems[i].solutions);
        }
        free(p->steps);
        free(p->problems);
        memset(p, 0, sizeof(*p));
}

int resolve_write_testcase(const struct resolve_request *req, const char *dir, char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
        struct ctx c = { .req = req, .err = err, .errlen = errlen };
        int e = req && dir ? prepare(&c) : errmsg(err, errlen, -EINVAL, "no request or directory");
        if (e >= 0) {
                int nprob = 0;
                Solver *solv = solve_preferring(&c, &nprob, &e);
                if (e >= 0 && !testcase_write(solv, dir, TESTCASE_RESULT_TRANSACTION | TESTCASE_RESULT_PROBLEMS, NULL, NULL))
                        e = errmsg(err, errlen, -EIO, "libsolv could not write a testcase to %s", dir);
                solver_free(solv);
        }
        ctx_free(&c);
        return e < 0 ? e : 0;
}

static struct json_object *step_to_json(const struct resolve_step *s) {
        struct json_object *o = json_object_new_object();
        int e = o ? 0 : -ENOMEM;
        if (e >= 0)
                e = jadd_str_opt(o, "action", resolve_action_to_string(s->action));
        if (e >= 0)
                e = jadd_str_opt(o, "package", s->package);
        if (e >= 0)
                e = jadd_str_opt(o, "bundle", s->bundle);
        if (e >= 0)
                e = jadd_str_opt(o, "version", s->version);
        if (e >= 0)
                e = jadd_str_opt(o, "catalog", s->catalog);
        if (e >= 0)
                e = jadd_str_opt(o, "channel", s->channel);
        if (e >= 0)
                e = jadd_str_opt(o, "from_bundle", s->from_bundle);
        if (e >= 0)
                e = jadd_str_opt(o, "from_version", s->from_version);
        if (e >= 0)
                e = jadd(o, "dependency", json_object_new_boolean(s->dependency));
        if (e >= 0)
                e = jadd(o, "removable", json_object_new_boolean(s->removable));
        if (e >= 0)
                e = jadd(o, "dependencies_skipped", json_object_new_boolean(s->dependencies_skipped));
        if (e >= 0 && s->subscription != NONE)
                e = json_object_object_add(o, "subscription", json_object_new_int64((int64_t) s->subscription));
        if (e >= 0)
                e = jadd_str_opt(o, "why", s->why);
        if (e < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static struct json_object *problem_to_json(const struct resolve_problem *p) {
        struct json_object *o = json_object_new_object(), *sol = json_object_new_array();
        int e = o && sol ? jadd_str_opt(o, "text", p->text ? p->text : "") : -ENOMEM;
        for (size_t i = 0; e >= 0 && i < p->n_solutions; i++) {
                struct json_object *s = json_object_new_string(p->solutions[i]);
                e = s && json_object_array_add(sol, s) == 0 ? 0 : -ENOMEM;
                if (e < 0)
                        json_object_put(s);
        }
        if (e >= 0 && json_object_object_add(o, "solutions", sol) == 0)
                return o;
        json_object_put(sol);
        json_object_put(o);
        return NULL;
}

int resolve_plan_to_json(const struct resolve_plan *p, struct json_object **out) {
        struct json_object *o = json_object_new_object(), *steps = json_object_new_array(),
                           *probs = json_object_new_array();
        int e = o && steps && probs ? jadd(o, "ok", json_object_new_boolean(p->ok)) : -ENOMEM;
        for (size_t i = 0; e >= 0 && i < p->n_steps; i++) {
                struct json_object *s = step_to_json(&p->steps[i]);
                e = s && json_object_array_add(steps, s) == 0 ? 0 : -ENOMEM;
        }
        for (size_t i = 0; e >= 0 && i < p->n_problems; i++) {
                struct json_object *s = problem_to_json(&p->problems[i]);
                e = s && json_object_array_add(probs, s) == 0 ? 0 : -ENOMEM;
        }
        if (e >= 0 && json_object_object_add(o, "steps", steps) == 0) {
                steps = NULL;
                if (json_object_object_add(o, "problems", probs) == 0) {
                        *out = o;
                        return 0;
                }
        }
        json_object_put(steps);
        json_object_put(probs);
        json_object_put(o);
        return -ENOMEM;
}
