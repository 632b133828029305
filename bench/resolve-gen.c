/* The catalog bench-resolve solves: a file-based catalog of realistic shape,
 * generated from a seed (splitmix64, integer draws only, so a seed gives the
 * same bytes on every machine). Its shape, and why it stays satisfiable:
 *  - each package has versions in semver order (minor and patch bumps, a
 *    major now and then, some -rc.N pre-releases before a release), three
 *    channels: "stable" (default, every version, a replaces chain with a few
 *    skips and skipRanges), "fast" (the newer half), "candidate" (the newest
 *    quarter);
 *  - each package provides 1-3 GVKs of its own; one in four also joins a
 *    provider group of 2-3 packages that all provide one shared GVK. Members
 *    of a group conflict with each other (one provider per GVK), so no
 *    package requires a group member by package name: members come in only
 *    through a requirement of the shared GVK (a choice) or a subscription;
 *  - package dependencies (0-5, weighted towards few) go to non-members of
 *    lower index, a few (1%) to a higher one, so there are some cycles; 30%
 *    carry an upper bound (the next major). A package's older versions have
 *    fewer dependencies and lower minimums, so the solver can step back when
 *    the newest versions' ranges collide;
 *  - a third of packages require one GVK: a group's shared GVK (60%) or the
 *    own GVK of a lower non-member package. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "catalog.h"
#include "resolve-bench.h"

#define GEN_MAX_DEPS 5

struct rng {
        uint64_t s;
};

static uint64_t rng_next(struct rng *r) {
        uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static size_t rng_below(struct rng *r, size_t n) {
        return n ? (size_t) ((rng_next(r) >> 11) % n) : 0;
}

static bool rng_chance(struct rng *r, unsigned per_mille) {
        return rng_below(r, 1000) < per_mille;
}

struct gver {
        unsigned major, minor, patch, rc; /* rc 0: a release; else -rc.N */
};

struct gdep {
        size_t target;
        size_t intro; /* first version index that has it */
        bool bounded, caret;
};

enum greq_kind { GREQ_NONE, GREQ_SHARED, GREQ_OWN };

struct gpkg {
        struct gver *vers;
        unsigned noun, n_own_gvks;
        struct gdep deps[GEN_MAX_DEPS];
        unsigned n_deps;
        enum greq_kind greq;
        size_t greq_target; /* group index or package index */
        unsigned greq_kind_idx;
        size_t greq_intro;
};

struct ggroup {
        size_t members[3];
        unsigned n, want;
        unsigned noun;
};

struct gen {
        const struct gen_params *p;
        struct rng r;
        struct gpkg *pkgs;
        struct ggroup *groups;
        size_t n_groups;
        struct gen_catalog *out;
};

static const char *const nouns[] = {
        "etcd",    "vault",   "redis",    "kafka",   "mongo",   "postgres", "minio",   "istio",
        "jaeger",  "grafana", "loki",     "tempo",   "keda",    "knative",  "tekton",  "argo",
        "cert",    "trust",   "sso",      "mesh",    "ingress", "backup",   "storage", "logging",
        "metrics", "alert",   "registry", "cache",   "queue",   "search",   "gateway", "policy",
        "quota",   "secret",  "dns",      "network", "compute", "gpu",      "batch",   "workflow",
};
#define N_NOUNS (sizeof nouns / sizeof *nouns)

static const char *const kind_suffixes[] = { "Cluster", "Backup", "Policy" };

static void kind_name(char *buf, size_t size, unsigned noun, const char *suffix) {
        snprintf(buf, size, "%c%s%s", nouns[noun][0] - 'a' + 'A', nouns[noun] + 1, suffix);
}

static void ver_text(const struct gver *v, char *buf, size_t size) {
        if (v->rc)
                snprintf(buf, size, "%u.%u.%u-rc.%u", v->major, v->minor, v->patch, v->rc);
        else
                snprintf(buf, size, "%u.%u.%u", v->major, v->minor, v->patch);
}

/* n versions in ascending precedence. */
static void gen_versions(struct rng *r, struct gver *v, size_t n) {
        struct gver cur = { .major = rng_below(r, 3) == 0 };
        cur.minor = cur.major ? 0 : 1 + (unsigned) rng_below(r, 3);
        for (size_t k = 0; k < n; k++) {
                v[k] = cur;
                if (cur.rc) { /* another candidate, or the release */
                        cur.rc = rng_chance(r, 300) ? cur.rc + 1 : 0;
                        continue;
                }
                size_t roll = rng_below(r, 100);
                if (roll < 10)
                        cur = (struct gver){ .major = cur.major + 1, .rc = rng_chance(r, 500) };
                else if (roll < 65)
                        cur = (struct gver){ .major = cur.major, .minor = cur.minor + 1, .rc = rng_chance(r, 50) };
                else
                        cur.patch++;
        }
}

/* Names, versions, own GVKs and provider groups of every package. */
static int gen_packages(struct gen *g) {
        size_t np = g->p->packages, nv = g->p->versions;
        struct gen_catalog *o = g->out;
        ssize_t open = -1;
        for (size_t i = 0; i < np; i++) {
                struct gpkg *k = &g->pkgs[i];
                unsigned n2 = (unsigned) rng_below(&g->r, N_NOUNS);
                k->noun = (unsigned) rng_below(&g->r, N_NOUNS);
                k->n_own_gvks = 1 + (unsigned) rng_below(&g->r, 3);
                if (asprintf(&o->names[i], "%s-%s-%04zu", nouns[k->noun], nouns[n2], i) < 0)
                        return -ENOMEM;
                if (!(k->vers = calloc(nv, sizeof *k->vers)))
                        return -ENOMEM;
                gen_versions(&g->r, k->vers, nv);
                o->group[i] = -1;
                if (!rng_chance(&g->r, 250))
                        continue;
                if (open < 0) { /* draws in statements: an initializer's order is unspecified */
                        open = (ssize_t) g->n_groups++;
                        g->groups[open].want = 2 + (unsigned) rng_below(&g->r, 2);
                        g->groups[open].noun = (unsigned) rng_below(&g->r, N_NOUNS);
                }
                struct ggroup *gr = &g->groups[open];
                gr->members[gr->n++] = i;
                o->group[i] = (int) open;
                if (gr->n == gr->want)
                        open = -1;
        }
        if (open >= 0) { /* a group left with one member gives no choice: drop it */
                struct ggroup *gr = &g->groups[open];
                for (unsigned m = 0; m < gr->n; m++)
                        o->group[gr->members[m]] = -1;
                g->n_groups--;
        }
        o->n_groups = g->n_groups;
        for (size_t gi = 0; gi < g->n_groups; gi++)
                o->n_group_members += g->groups[gi].n;
        return 0;
}

/* A non-member package of lower index than i (higher, for a back edge), not
 * yet among k's dependencies; SIZE_MAX when a few draws find none. */
static size_t pick_target(struct gen *g, size_t i, const struct gpkg *k, bool back) {
        size_t np = g->p->packages;
        for (int tries = 0; tries < 8; tries++) {
                size_t t = back ? (i + 1 < np ? i + 1 + rng_below(&g->r, np - i - 1) : SIZE_MAX)
                                : (i ? rng_below(&g->r, i) : SIZE_MAX);
                if (t == SIZE_MAX)
                        return SIZE_MAX;
                bool dup = false;
                for (unsigned d = 0; d < k->n_deps; d++)
                        dup |= k->deps[d].target == t;
                if (!dup && g->out->group[t] < 0)
                        return t;
        }
        return SIZE_MAX;
}

static void gen_gvk_requirement(struct gen *g, size_t i, struct gpkg *k) {
        if (!rng_chance(&g->r, 333))
                return;
        size_t nv = g->p->versions;
        if (rng_chance(&g->r, 600)) {
                size_t closed = 0; /* groups close in index order: those done before i */
                while (closed < g->n_groups && g->groups[closed].members[g->groups[closed].n - 1] < i)
                        closed++;
                if (!closed)
                        return;
                k->greq = GREQ_SHARED;
                k->greq_target = rng_below(&g->r, closed);
        } else {
                size_t t = pick_target(g, i, k, false);
                if (t == SIZE_MAX)
                        return;
                k->greq = GREQ_OWN;
                k->greq_target = t;
                k->greq_kind_idx = (unsigned) rng_below(&g->r, g->pkgs[t].n_own_gvks);
        }
        k->greq_intro = rng_below(&g->r, nv);
}

/* Each package's dependencies and GVK requirement. */
static void gen_requirements(struct gen *g) {
        static const unsigned fanout_weight[GEN_MAX_DEPS + 1] = { 25, 25, 20, 15, 10, 5 };
        size_t nv = g->p->versions;
        for (size_t i = 0; i < g->p->packages; i++) {
                struct gpkg *k = &g->pkgs[i];
                size_t roll = rng_below(&g->r, 100), want = 0;
                while (roll >= fanout_weight[want])
                        roll -= fanout_weight[want++];
                for (size_t d = 0; d < want; d++) {
                        bool back = rng_chance(&g->r, 10);
                        size_t t = pick_target(g, i, k, back);
                        if (t == SIZE_MAX)
                                continue;
                        g->out->n_back_edges += back;
                        bool bounded = rng_chance(&g->r, 300);
                        bool caret = bounded && rng_chance(&g->r, 400);
                        size_t intro = d ? rng_below(&g->r, nv / 2 + 1) : 0;
                        k->deps[k->n_deps++] = (struct gdep){ .target = t, .bounded = bounded, .caret = caret,
                                                              .intro = intro };
                }
                gen_gvk_requirement(g, i, k);
        }
}

/* The range of a dependency as bundle vi of its package writes it: newer
 * bundles ask for newer versions of the target. */
static void dep_range(struct gen *g, const struct gdep *d, size_t vi, char *buf, size_t size) {
        size_t nv = g->p->versions, lo = vi * (nv / 2) / nv + rng_below(&g->r, 3);
        if (lo >= nv)
                lo = nv - 1;
        const struct gver *v = &g->pkgs[d->target].vers[lo];
        char vt[64];
        ver_text(v, vt, sizeof vt);
        if (!d->bounded)
                snprintf(buf, size, ">=%s", vt);
        else if (d->caret && v->major > 0)
                snprintf(buf, size, "^%s", vt);
        else
                snprintf(buf, size, ">=%s <%u.0.0", vt, v->major + 1);
        g->out->n_bounded_deps += d->bounded;
}

static void write_gvk(FILE *f, const char *type, const char *group, const char *version, const char *kind) {
        fprintf(f, ",{\"type\":\"%s\",\"value\":{\"group\":\"%s\",\"kind\":\"%s\",\"version\":\"%s\"}}", type, group,
                kind, version);
}

static void write_own_gvk(FILE *f, const char *type, const char *pkg_name, unsigned noun, unsigned idx) {
        char group[96], kind[64];
        snprintf(group, sizeof group, "%s.bench.io", pkg_name);
        kind_name(kind, sizeof kind, noun, kind_suffixes[idx]);
        write_gvk(f, type, group, "v1", kind);
}

static void write_shared_gvk(FILE *f, const char *type, const struct ggroup *gr, size_t gi) {
        char group[96], kind[64];
        snprintf(group, sizeof group, "%s.shared-%zu.bench.io", nouns[gr->noun], gi);
        kind_name(kind, sizeof kind, gr->noun, "Stack");
        write_gvk(f, type, group, "v1", kind);
}

/* The bundle's requirements: the dependencies it has, the GVK it needs. */
static void write_requirements(struct gen *g, FILE *f, const struct gpkg *k, size_t vi) {
        struct gen_catalog *o = g->out;
        for (unsigned d = 0; d < k->n_deps; d++) {
                if (k->deps[d].intro > vi)
                        continue;
                char range[160];
                dep_range(g, &k->deps[d], vi, range, sizeof range);
                fprintf(f, ",{\"type\":\"olm.package.required\","
                           "\"value\":{\"packageName\":\"%s\",\"versionRange\":\"%s\"}}",
                        o->names[k->deps[d].target], range);
                o->n_deps++;
        }
        if (k->greq == GREQ_NONE || k->greq_intro > vi)
                return;
        if (k->greq == GREQ_SHARED) {
                write_shared_gvk(f, "olm.gvk.required", &g->groups[k->greq_target], k->greq_target);
                o->n_choice_requires++;
        } else {
                const struct gpkg *t = &g->pkgs[k->greq_target];
                write_own_gvk(f, "olm.gvk.required", o->names[k->greq_target], t->noun, k->greq_kind_idx);
        }
        o->n_gvk_requires++;
}

static void write_bundle(struct gen *g, FILE *f, size_t i, size_t vi) {
        const struct gpkg *k = &g->pkgs[i];
        const char *name = g->out->names[i];
        char vt[64];
        ver_text(&k->vers[vi], vt, sizeof vt);
        fprintf(f, "{\"schema\":\"olm.bundle\",\"package\":\"%s\",\"name\":\"%s.v%s\",", name, name, vt);
        fprintf(f, "\"image\":\"quay.io/bench/%s-bundle@sha256:", name);
        for (int w = 0; w < 4; w++) /* one draw a statement: argument order is unspecified */
                fprintf(f, "%016llx", (unsigned long long) rng_next(&g->r));
        fputs("\",", f);
        fprintf(f, "\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"%s\",\"version\":\"%s\"}}",
                name, vt);
        for (unsigned a = 0; a < k->n_own_gvks; a++)
                write_own_gvk(f, "olm.gvk", name, k->noun, a);
        int gi = g->out->group[i];
        if (gi >= 0)
                write_shared_gvk(f, "olm.gvk", &g->groups[gi], (size_t) gi);
        write_requirements(g, f, k, vi);
        fprintf(f, ",{\"type\":\"olm.csv.metadata\","
                   "\"value\":{\"displayName\":\"%s\",\"provider\":{\"name\":\"Bench\"},"
                   "\"description\":\"Installs and runs %s %s on the cluster, with its custom resources, upgrades "
                   "along the channel and the dependencies it names.\",\"keywords\":[\"%s\",\"operator\"]}}]}\n",
                name, nouns[k->noun], vt, nouns[k->noun]);
        g->out->n_bundles++;
}

/* Channel ch of package i: versions [from, nv), each replacing the one before. */
static void write_channel(struct gen *g, FILE *f, size_t i, const char *ch, size_t from) {
        const struct gpkg *k = &g->pkgs[i];
        const char *name = g->out->names[i];
        fprintf(f, "{\"schema\":\"olm.channel\",\"package\":\"%s\",\"name\":\"%s\",\"entries\":[", name, ch);
        for (size_t v = from; v < g->p->versions; v++) {
                char vt[64], prev[64], older[64], first[64];
                ver_text(&k->vers[v], vt, sizeof vt);
                fprintf(f, "%s{\"name\":\"%s.v%s\"", v > from ? "," : "", name, vt);
                if (v > from) {
                        ver_text(&k->vers[v - 1], prev, sizeof prev);
                        fprintf(f, ",\"replaces\":\"%s.v%s\"", name, prev);
                }
                if (v >= from + 2 && rng_chance(&g->r, 150)) {
                        ver_text(&k->vers[v - 2], older, sizeof older);
                        fprintf(f, ",\"skips\":[\"%s.v%s\"]", name, older);
                }
                if (v > from && rng_chance(&g->r, 100)) {
                        ver_text(&k->vers[from], first, sizeof first);
                        fprintf(f, ",\"skipRange\":\">=%s <%s\"", first, vt);
                }
                fputc('}', f);
        }
        fputs("]}\n", f);
        g->out->n_channels++;
}

static int write_package(struct gen *g, size_t i, char **text, size_t *len) {
        FILE *f = open_memstream(text, len);
        if (!f)
                return -ENOMEM;
        const char *name = g->out->names[i];
        size_t nv = g->p->versions;
        fprintf(f, "{\"schema\":\"olm.package\",\"name\":\"%s\",\"defaultChannel\":\"stable\","
                   "\"description\":\"%s, generated for bench-resolve\"}\n", name, nouns[g->pkgs[i].noun]);
        write_channel(g, f, i, "stable", 0);
        write_channel(g, f, i, "fast", nv / 2);
        write_channel(g, f, i, "candidate", nv - (nv + 3) / 4);
        for (size_t v = 0; v < nv; v++)
                write_bundle(g, f, i, v);
        return fclose(f) == 0 ? 0 : -ENOMEM;
}

static int add_file(struct gen_catalog *o) {
        struct gen_file *nf = realloc(o->files, (o->n_files + 1) * sizeof *nf);
        if (!nf)
                return -ENOMEM;
        o->files = nf;
        o->files[o->n_files++] = (struct gen_file){ 0 };
        return 0;
}

/* Every package's text, packed whole into files of at most CATALOG_MAX_INPUT. */
static int gen_files(struct gen *g) {
        struct gen_catalog *o = g->out;
        for (size_t i = 0; i < g->p->packages; i++) {
                char *text = NULL;
                size_t len = 0;
                int r = write_package(g, i, &text, &len);
                if (r == 0 && len > CATALOG_MAX_INPUT)
                        r = -E2BIG;
                struct gen_file *cur = o->n_files ? &o->files[o->n_files - 1] : NULL;
                if (r == 0 && (!cur || cur->len + len > CATALOG_MAX_INPUT) && (r = add_file(o)) == 0)
                        cur = &o->files[o->n_files - 1];
                char *grown = r == 0 ? realloc(cur->text, cur->len + len + 1) : NULL;
                if (r == 0 && !grown)
                        r = -ENOMEM;
                if (r == 0) {
                        memcpy(grown + cur->len, text, len);
                        cur->text = grown;
                        cur->len += len;
                        grown[cur->len] = 0;
                        o->bytes += len;
                }
                free(text);
                if (r < 0)
                        return r;
        }
        return 0;
}

int gen_catalog(const struct gen_params *p, struct gen_catalog *out) {
        *out = (struct gen_catalog){ 0 };
        struct gen g = { .p = p, .r = { p->seed }, .out = out };
        int r = -ENOMEM;
        g.pkgs = calloc(p->packages, sizeof *g.pkgs);
        g.groups = calloc(p->packages / 2 + 1, sizeof *g.groups);
        out->names = calloc(p->packages, sizeof *out->names);
        out->group = calloc(p->packages, sizeof *out->group);
        out->n_packages = p->packages; /* names[] has that many slots, NULL until set */
        if (g.pkgs && g.groups && out->names && out->group && (r = gen_packages(&g)) == 0) {
                gen_requirements(&g);
                r = gen_files(&g);
        }
        for (size_t i = 0; g.pkgs && i < p->packages; i++)
                free(g.pkgs[i].vers);
        free(g.pkgs);
        free(g.groups);
        if (r < 0)
                gen_catalog_free(out);
        return r;
}

void gen_catalog_free(struct gen_catalog *c) {
        for (size_t i = 0; i < c->n_files; i++)
                free(c->files[i].text);
        for (size_t i = 0; c->names && i < c->n_packages; i++)
                free(c->names[i]);
        free(c->files);
        free(c->names);
        free(c->group);
        *c = (struct gen_catalog){ 0 };
}

size_t gen_subscriptions(const struct gen_catalog *c, uint64_t seed, size_t n, size_t *out) {
        struct rng r = { seed ^ 0x5eed5eed5eed5eedull };
        size_t np = c->n_packages, got = 0;
        size_t *order = malloc(np * sizeof *order);
        bool *taken_group = calloc(c->n_groups + 1, sizeof *taken_group);
        if (!order || !taken_group) {
                free(order);
                free(taken_group);
                return 0;
        }
        for (size_t i = 0; i < np; i++)
                order[i] = i;
        for (size_t i = 0; i < np && got < n; i++) { /* Fisher-Yates, drawn as far as needed */
                size_t j = i + rng_below(&r, np - i), t = order[j];
                order[j] = order[i];
                order[i] = t;
                int gi = c->group[t];
                if (gi >= 0 && taken_group[gi])
                        continue;
                if (gi >= 0)
                        taken_group[gi] = true;
                out[got++] = t;
        }
        free(order);
        free(taken_group);
        return got;
}
