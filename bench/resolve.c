/* Operator-resolution benchmark (issue 15): resolve() on a generated catalog
 * of realistic shape (resolve-gen.c) for N subscriptions, timed cold (pool
 * built from the parsed catalog, then solved), against raw libsolv solving
 * the very same problem the way its testsolv does: testcase_read() of the
 * testcase resolve_write_testcase() prepared, solver_solve(), the
 * transaction read. Also the catalog's parse time and both sides' memory.
 * Usage: bench-resolve [--packages N] [--versions N] [--subscriptions N]
 * [--seed N] [--rounds N] [--warmup N] [--dump DIR] (--help). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <solv/pool.h>
#include <solv/repo.h>
#include <solv/solver.h>
#include <solv/testcase.h>
#include <solv/transaction.h>

#include "catalog.h"
#include "resolve-bench.h"
#include "resolve.h"
#include "benchstat.h"

#define MAX_ROUNDS 1000
#define TARGET_RATIO 1.5

struct opts {
        size_t packages, versions, subscriptions, rounds, warmup;
        uint64_t seed;
        const char *dump;
};

struct raw_result {
        int problems;
        size_t installed;
        double read_ms, solve_ms, rest_ms;
};

struct bench {
        struct opts o;
        struct gen_catalog gen;
        struct catalog cat;
        double gen_ms, parse_ms, check_ms, testcase_ms;
        struct mem_track parse_heap; /* catalog_parse + catalog_check */
        long parsed_rss_kb; /* with the generated text and the parsed catalog */
        size_t *subs;
        size_t n_subs;
        struct resolve_subscription *rsubs;
        struct resolve_catalog rcat;
        struct resolve_request req;
        char tmpdir[4096], testcase[4096];
        size_t testcase_bytes;
        size_t plan_steps, plan_deps;
        struct raw_result raw_ref;
};

/* dir/name into buf; -ENAMETOOLONG when it does not fit. */
static int path_join(char *buf, size_t size, const char *dir, const char *name) {
        int n = snprintf(buf, size, "%s/%s", dir, name);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

static double mib(double bytes) {
        return bytes / 1048576.0;
}

static long status_kb(const char *key) {
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        long v = -1;
        size_t kl = strlen(key);
        while (f && fgets(line, sizeof line, f))
                if (!strncmp(line, key, kl))
                        v = strtol(line + kl, NULL, 10);
        if (f)
                fclose(f);
        return v;
}

/* ---- options ----------------------------------------------------------- */

static void usage(FILE *f) {
        fprintf(f, "usage: bench-resolve [OPTIONS]\n"
                   "Times resolve() on a generated catalog against raw libsolv on the same problem.\n"
                   "  --packages N       packages in the catalog (default 1000, at most %d)\n"
                   "  --versions N       versions (bundles) per package (default 20; packages x versions <= %d)\n"
                   "  --subscriptions N  packages subscribed to, default channel (default 50)\n"
                   "  --seed N           generator seed (default 1); the same seed gives the same catalog\n"
                   "  --rounds N         counted rounds (default 15, at most %d)\n"
                   "  --warmup N         uncounted rounds before them (default 2)\n"
                   "  --dump DIR         write the catalog JSON and the libsolv testcase into DIR\n"
                   "  --help             this text\n",
                CATALOG_MAX_PACKAGES, CATALOG_MAX_BUNDLES, MAX_ROUNDS);
}

static int parse_num(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || *s == '-' || v < min || v > max) {
                fprintf(stderr, "bench-resolve: --%s: want a number from %llu to %llu, not \"%s\"\n", opt,
                        (unsigned long long) min, (unsigned long long) max, s);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

/* 0, 1 for --help, -EINVAL for bad options (said on stderr). */
static int parse_opts(int argc, char **argv, struct opts *o) {
        static const struct option longopts[] = {
                { "packages", required_argument, NULL, 'p' }, { "versions", required_argument, NULL, 'v' },
                { "subscriptions", required_argument, NULL, 's' }, { "seed", required_argument, NULL, 'S' },
                { "rounds", required_argument, NULL, 'r' },   { "warmup", required_argument, NULL, 'w' },
                { "dump", required_argument, NULL, 'd' },     { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        *o = (struct opts){ .packages = 1000, .versions = 20, .subscriptions = 50, .rounds = 15, .warmup = 2,
                            .seed = 1 };
        int c, li;
        uint64_t v = 0;
        while ((c = getopt_long(argc, argv, "", longopts, &li)) != -1) {
                const char *name = c == '?' ? NULL : longopts[li].name;
                int r = 0;
                switch (c) {
                case 'p': r = parse_num(name, optarg, 1, CATALOG_MAX_PACKAGES, &v), o->packages = v; break;
                case 'v': r = parse_num(name, optarg, 1, CATALOG_MAX_BUNDLES, &v), o->versions = v; break;
                case 's': r = parse_num(name, optarg, 1, RESOLVE_MAX_SUBSCRIPTIONS, &v), o->subscriptions = v; break;
                case 'S': r = parse_num(name, optarg, 0, UINT64_MAX, &v), o->seed = v; break;
                case 'r': r = parse_num(name, optarg, 1, MAX_ROUNDS, &v), o->rounds = v; break;
                case 'w': r = parse_num(name, optarg, 0, MAX_ROUNDS, &v), o->warmup = v; break;
                case 'd': o->dump = optarg; break;
                case 'h': usage(stdout); return 1;
                default: usage(stderr); return -EINVAL;
                }
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                fprintf(stderr, "bench-resolve: unexpected argument \"%s\"\n", argv[optind]);
                return -EINVAL;
        }
        if (o->packages * o->versions > CATALOG_MAX_BUNDLES || o->subscriptions > o->packages) {
                fprintf(stderr, "bench-resolve: want packages x versions <= %d and subscriptions <= packages\n",
                        CATALOG_MAX_BUNDLES);
                return -EINVAL;
        }
        return 0;
}

/* ---- catalog ----------------------------------------------------------- */

static void file_name(const struct bench *b, size_t i, char *buf, size_t size) {
        if (b->gen.n_files == 1)
                snprintf(buf, size, "catalog.json");
        else
                snprintf(buf, size, "catalog-%03zu.json", i);
}

static int dump_catalog(const struct bench *b) {
        if (mkdir(b->o.dump, 0755) < 0 && errno != EEXIST)
                return fprintf(stderr, "bench-resolve: mkdir %s: %m\n", b->o.dump), -1;
        for (size_t i = 0; i < b->gen.n_files; i++) {
                char name[64], path[4096];
                file_name(b, i, name, sizeof name);
                if (path_join(path, sizeof path, b->o.dump, name) < 0)
                        return fprintf(stderr, "bench-resolve: --dump: the path is too long\n"), -1;
                FILE *f = fopen(path, "w");
                if (!f)
                        return fprintf(stderr, "bench-resolve: %s: %m\n", path), -1;
                size_t w = fwrite(b->gen.files[i].text, 1, b->gen.files[i].len, f);
                if (fclose(f) != 0 || w != b->gen.files[i].len)
                        return fprintf(stderr, "bench-resolve: writing %s failed\n", path), -1;
        }
        return 0;
}

/* Generate (timed), dump if asked, parse and check (each timed). */
static int make_catalog(struct bench *b) {
        struct gen_params gp = { .packages = b->o.packages, .versions = b->o.versions, .seed = b->o.seed };
        double t0 = bench_now_ms();
        int r = gen_catalog(&gp, &b->gen);
        b->gen_ms = bench_now_ms() - t0;
        if (r < 0)
                return fprintf(stderr, "bench-resolve: generating the catalog: %s\n", strerror(-r)), -1;
        if (b->o.dump && dump_catalog(b) < 0)
                return -1;
        char err[1024];
        mem_track_start(); /* costs the parse a few ms in millions of allocations */
        t0 = bench_now_ms();
        for (size_t i = 0; i < b->gen.n_files; i++) {
                char name[64];
                file_name(b, i, name, sizeof name);
                if (catalog_parse(b->gen.files[i].text, b->gen.files[i].len, name, &b->cat, err, sizeof err) < 0) {
                        mem_track_stop(&b->parse_heap);
                        return fprintf(stderr, "bench-resolve: catalog_parse: %s\n", err), -1;
                }
        }
        b->parse_ms = bench_now_ms() - t0;
        t0 = bench_now_ms();
        r = catalog_check(&b->cat, err, sizeof err);
        b->check_ms = bench_now_ms() - t0;
        mem_track_stop(&b->parse_heap);
        if (r < 0)
                return fprintf(stderr, "bench-resolve: catalog_check: %s\n", err), -1;
        b->parsed_rss_kb = status_kb("VmRSS:");
        return 0;
}

static int make_request(struct bench *b) {
        b->subs = calloc(b->o.subscriptions, sizeof *b->subs);
        b->rsubs = calloc(b->o.subscriptions, sizeof *b->rsubs);
        if (!b->subs || !b->rsubs)
                return fprintf(stderr, "bench-resolve: out of memory\n"), -1;
        b->n_subs = gen_subscriptions(&b->gen, b->o.seed, b->o.subscriptions, b->subs);
        if (b->n_subs < b->o.subscriptions)
                return fprintf(stderr, "bench-resolve: the catalog has only %zu packages a subscription can take "
                                       "together (one per provider group); asked for %zu\n",
                               b->n_subs, b->o.subscriptions),
                       -1;
        for (size_t i = 0; i < b->n_subs; i++)
                b->rsubs[i] = (struct resolve_subscription){ .package = b->gen.names[b->subs[i]] };
        b->rcat = (struct resolve_catalog){ .name = "bench", .priority = 0, .catalog = &b->cat };
        b->req = (struct resolve_request){ .catalogs = &b->rcat, .n_catalogs = 1, .subscriptions = b->rsubs,
                                           .n_subscriptions = b->n_subs };
        return 0;
}

/* ---- the testcase ------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static size_t sum_entry_bytes_total; /* nftw() has no user pointer */
static int sum_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        if (flag == FTW_F)
                sum_entry_bytes_total += (size_t) st->st_size;
        return 0;
}

/* The *.t file resolve_write_testcase() wrote into dir. */
static int find_testcase(const char *dir, char *out, size_t size) {
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        struct dirent *e;
        int r = -ENOENT;
        while ((e = readdir(d))) {
                size_t n = strlen(e->d_name);
                if (n > 2 && !strcmp(e->d_name + n - 2, ".t")) {
                        r = path_join(out, size, dir, e->d_name);
                        break;
                }
        }
        closedir(d);
        return r;
}

static int write_testcase(struct bench *b) {
        char dir[4096], err[1024];
        const char *tmp = getenv("TMPDIR");
        if (!b->o.dump && (path_join(b->tmpdir, sizeof b->tmpdir, tmp && *tmp ? tmp : "/tmp",
                                     "bench-resolve.XXXXXX") < 0 ||
                           !mkdtemp(b->tmpdir))) {
                fprintf(stderr, "bench-resolve: mkdtemp %s: %m\n", b->tmpdir);
                b->tmpdir[0] = '\0'; /* nothing of ours to remove */
                return -1;
        }
        if (path_join(dir, sizeof dir, b->o.dump ? b->o.dump : b->tmpdir, "testcase") < 0)
                return fprintf(stderr, "bench-resolve: the testcase path is too long\n"), -1;
        double t0 = bench_now_ms();
        int r = resolve_write_testcase(&b->req, dir, err, sizeof err);
        b->testcase_ms = bench_now_ms() - t0;
        if (r < 0)
                return fprintf(stderr, "bench-resolve: resolve_write_testcase: %s (%s)\n", err, strerror(-r)), -1;
        if ((r = find_testcase(dir, b->testcase, sizeof b->testcase)) < 0)
                return fprintf(stderr, "bench-resolve: no *.t testcase in %s: %s\n", dir, strerror(-r)), -1;
        sum_entry_bytes_total = 0;
        nftw(dir, sum_entry, 16, FTW_PHYS);
        b->testcase_bytes = sum_entry_bytes_total;
        return 0;
}

static void remove_tmpdir(struct bench *b) {
        if (b->tmpdir[0])
                nftw(b->tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- one round of each ------------------------------------------------- */

/* One resolve(), timed; the plan stays in *plan. 0 or -1 (said). */
static int ours_once(const struct bench *b, struct resolve_plan *plan, double *ms) {
        char err[1024] = "";
        double t0 = bench_now_ms();
        int r = resolve(&b->req, plan, err, sizeof err);
        *ms = bench_now_ms() - t0;
        if (r < 0)
                return fprintf(stderr, "bench-resolve: resolve: %s (%s)\n", err, strerror(-r)), -1;
        return 0;
}

/* What testsolv does with the testcase: read it into a new pool, solve, read
 * the transaction, free. names (if not NULL) gets the installed packages'
 * names, to be freed. 0 or -1 (said). */
static int raw_once(const char *testcase, struct raw_result *res, char ***names) {
        double t0 = bench_now_ms();
        Pool *pool = pool_create();
        FILE *f = fopen(testcase, "r");
        if (!f) {
                pool_free(pool);
                return fprintf(stderr, "bench-resolve: %s: %m\n", testcase), -1;
        }
        Queue job;
        queue_init(&job);
        char *result = NULL;
        int resultflags = 0;
        Solver *solv = testcase_read(pool, f, testcase, &job, &result, &resultflags);
        fclose(f);
        double t1 = bench_now_ms();
        if (!solv) {
                queue_free(&job);
                pool_free(pool);
                return fprintf(stderr, "bench-resolve: libsolv's testcase_read refused %s\n", testcase), -1;
        }
        res->problems = solver_solve(solv, &job);
        double t2 = bench_now_ms();
        Transaction *trans = solver_create_transaction(solv);
        res->installed = 0;
        if (names)
                *names = calloc((size_t) trans->steps.count + 1, sizeof **names);
        for (int i = 0; i < trans->steps.count; i++) {
                Id p = trans->steps.elements[i];
                Solvable *s = pool->solvables + p;
                if (pool->installed && s->repo == pool->installed)
                        continue; /* an erase */
                if (names && *names)
                        (*names)[res->installed] = strdup(pool_id2str(pool, s->name));
                res->installed++;
        }
        transaction_free(trans);
        solver_free(solv);
        queue_free(&job);
        solv_free(result);
        pool_free(pool);
        res->read_ms = t1 - t0;
        res->solve_ms = t2 - t1;
        res->rest_ms = bench_now_ms() - t2;
        return 0;
}

/* ---- checks ------------------------------------------------------------ */

static void print_problems(const struct resolve_plan *p) {
        fprintf(stderr, "bench-resolve: UNSATISFIABLE: resolve() found no plan for these subscriptions "
                        "(%zu problems); the generated problem is not benchmarkable with this seed\n",
                p->n_problems);
        for (size_t i = 0; i < p->n_problems && i < 5; i++) {
                const char *text = p->problems[i].text;
                fprintf(stderr, "  problem %zu: %.400s%s\n", i + 1, text, strlen(text) > 400 ? " [...]" : "");
                for (size_t s = 0; s < p->problems[i].n_solutions && s < 3; s++)
                        fprintf(stderr, "    way out: %s\n", p->problems[i].solutions[s]);
        }
        if (p->n_problems > 5)
                fprintf(stderr, "  ... and %zu more\n", p->n_problems - 5);
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Both sides' installed packages, by name; the differences said. */
static size_t compare_names(char **ours, size_t n_ours, char **raw, size_t n_raw) {
        qsort(ours, n_ours, sizeof *ours, cmp_str);
        qsort(raw, n_raw, sizeof *raw, cmp_str);
        size_t i = 0, j = 0, diff = 0;
        while (i < n_ours || j < n_raw) {
                int c = i == n_ours ? 1 : j == n_raw ? -1 : strcmp(ours[i], raw[j]);
                if (c && diff++ < 10)
                        printf("  only in %s: %s\n", c < 0 ? "ours" : "raw", c < 0 ? ours[i] : raw[j]);
                i += c <= 0;
                j += c >= 0;
        }
        return diff;
}

/* Once, untimed: our plan is ok, and raw libsolv installs what it says. */
static int check_plans(struct bench *b) {
        struct resolve_plan plan;
        double ms;
        if (ours_once(b, &plan, &ms) < 0)
                return -1;
        if (!plan.ok) {
                print_problems(&plan);
                resolve_plan_free(&plan);
                return -1;
        }
        char **ours = calloc(plan.n_steps + 1, sizeof *ours), **raw = NULL;
        size_t n_ours = 0;
        for (size_t i = 0; ours && i < plan.n_steps; i++) {
                if (plan.steps[i].action == RESOLVE_REMOVE)
                        continue;
                ours[n_ours++] = plan.steps[i].package;
                b->plan_deps += plan.steps[i].dependency;
        }
        b->plan_steps = plan.n_steps;
        int r = raw_once(b->testcase, &b->raw_ref, &raw);
        if (r == 0 && b->raw_ref.problems) {
                fprintf(stderr, "bench-resolve: raw libsolv found %d problems where resolve() found a plan\n",
                        b->raw_ref.problems);
                r = -1;
        }
        if (r == 0 && ours && raw) {
                printf("plan: ok, %zu steps (%zu subscribed, %zu dependencies); ours installs %zu packages, raw "
                       "libsolv %zu\n",
                       plan.n_steps, plan.n_steps - b->plan_deps, b->plan_deps, n_ours, b->raw_ref.installed);
                size_t diff = compare_names(ours, n_ours, raw, b->raw_ref.installed);
                if (diff || n_ours != b->raw_ref.installed) {
                        fprintf(stderr, "bench-resolve: the plans differ (%zu packages)\n", diff);
                        r = -1;
                }
        }
        for (size_t i = 0; raw && i < b->raw_ref.installed; i++)
                free(raw[i]);
        free(raw);
        free(ours);
        resolve_plan_free(&plan);
        return r;
}

/* ---- rounds ------------------------------------------------------------ */

struct timings {
        double *ours, *raw, *read, *solve, *rest;
};
#define TIMINGS_SERIES 5

/* One round of each, alternating which goes first; unchecked rounds not recorded. */
static int round_pair(const struct bench *b, size_t r, struct timings *t, bool record) {
        for (int side = 0; side < 2; side++) {
                if ((side ^ (int) (r & 1)) == 0) {
                        struct resolve_plan plan;
                        double ms;
                        if (ours_once(b, &plan, &ms) < 0)
                                return -1;
                        bool same = plan.ok && plan.n_steps == b->plan_steps;
                        resolve_plan_free(&plan);
                        if (!same)
                                return fprintf(stderr, "bench-resolve: round %zu: another plan\n", r), -1;
                        if (record)
                                t->ours[r] = ms;
                } else {
                        struct raw_result res;
                        if (raw_once(b->testcase, &res, NULL) < 0)
                                return -1;
                        if (res.problems || res.installed != b->raw_ref.installed)
                                return fprintf(stderr, "bench-resolve: round %zu: raw gave another result\n", r), -1;
                        if (record) {
                                t->raw[r] = res.read_ms + res.solve_ms + res.rest_ms;
                                t->read[r] = res.read_ms;
                                t->solve[r] = res.solve_ms;
                                t->rest[r] = res.rest_ms;
                        }
                }
        }
        return 0;
}

/* ---- memory ------------------------------------------------------------ */

struct mem_result {
        struct mem_track heap;
        long rss_before_kb, hwm_kb; /* -1: not readable */
};


/* Give freed heap back and reset the peak RSS mark (clear_refs 5), so the
 * call measured next starts from what the process holds now. */
static void mem_begin(struct mem_result *m) {
        malloc_trim(0);
        int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
        bool reset = fd >= 0 && write(fd, "5", 1) == 1;
        if (fd >= 0)
                close(fd);
        m->rss_before_kb = reset ? status_kb("VmRSS:") : -1;
        mem_track_start();
}

static void mem_end(struct mem_result *m) {
        mem_track_stop(&m->heap);
        m->hwm_kb = m->rss_before_kb >= 0 ? status_kb("VmHWM:") : -1;
}

static int measure_memory(const struct bench *b, struct mem_result *ours, struct mem_result *raw) {
        struct resolve_plan plan;
        double ms;
        mem_begin(ours);
        int r = ours_once(b, &plan, &ms);
        mem_end(ours);
        if (r < 0)
                return -1;
        resolve_plan_free(&plan);
        struct raw_result res;
        mem_begin(raw);
        r = raw_once(b->testcase, &res, NULL);
        mem_end(raw);
        return r;
}

/* ---- report ------------------------------------------------------------ */

static void print_catalog(const struct bench *b) {
        const struct gen_catalog *g = &b->gen;
        printf("bench-resolve: seed %llu, %zu packages x %zu versions, %zu subscriptions, %zu rounds after %zu "
               "warm-up\n",
               (unsigned long long) b->o.seed, b->o.packages, b->o.versions, b->n_subs, b->o.rounds, b->o.warmup);
        printf("catalog: %zu packages, %zu channels, %zu bundles, %.1f MiB of JSON in %zu file(s)\n", b->cat.n_packages,
               b->cat.n_channels, b->cat.n_bundles, mib(g->bytes), g->n_files);
        printf("  %zu package requirements (%zu with an upper bound, %zu edges to a higher index), %zu GVK "
               "requirements (%zu with a choice of provider); %zu provider groups of %zu packages\n",
               g->n_deps, g->n_bounded_deps, g->n_back_edges, g->n_gvk_requires, g->n_choice_requires, g->n_groups,
               g->n_group_members);
        printf("generate %.1f ms; catalog_parse %.1f ms (%.0f MiB/s); catalog_check %.1f ms\n", b->gen_ms, b->parse_ms,
               mib(g->bytes) / (b->parse_ms / 1e3), b->check_ms);
        if (b->parse_heap.available)
                printf("parsed catalog: %.1f MiB of heap kept (peak %.1f MiB while parsing), %llu allocations; ",
                       mib((double) b->parse_heap.net_bytes), mib((double) b->parse_heap.peak_bytes),
                       (unsigned long long) b->parse_heap.allocations);
        printf("process RSS then %.1f MiB\n", b->parsed_rss_kb / 1024.0);
        printf("testcase: resolve_write_testcase %.1f ms, %.1f MiB\n", b->testcase_ms, mib(b->testcase_bytes));
        fflush(stdout);
}

static void print_row(const char *what, double *v, size_t n) {
        double lo = v[0], hi = v[0];
        for (size_t i = 1; i < n; i++) {
                lo = v[i] < lo ? v[i] : lo;
                hi = v[i] > hi ? v[i] : hi;
        }
        printf("%-26s %9.2f %9.2f %9.2f\n", what, bench_median(v, n), lo, hi);
}

static void print_mem_row(const char *what, const struct mem_result *m) {
        char heap[64] = "n/a", rss[64] = "n/a";
        if (m->heap.available)
                snprintf(heap, sizeof heap, "%9.1f %10llu %9.1f", mib((double) m->heap.peak_bytes),
                         (unsigned long long) m->heap.allocations, mib((double) m->heap.bytes_allocated));
        if (m->hwm_kb >= 0)
                snprintf(rss, sizeof rss, "%9.1f", (m->hwm_kb - m->rss_before_kb) / 1024.0);
        printf("%-26s %30s %10s\n", what, heap, rss);
}

static void print_results(const struct bench *b, struct timings *t, const struct mem_result *mo,
                          const struct mem_result *mr) {
        size_t n = b->o.rounds;
        printf("%-26s %9s %9s %9s   (ms, %zu rounds)\n", "", "median", "min", "max", n);
        print_row("ours: resolve()", t->ours, n);
        print_row("raw libsolv: total", t->raw, n);
        print_row("  testcase_read", t->read, n);
        print_row("  solver_solve", t->solve, n);
        print_row("  transaction + free", t->rest, n);
        double ratio = bench_median(t->ours, n) / bench_median(t->raw, n);
        printf("ratio ours/raw (median): %.2f   target <= %.1f %s\n", ratio, TARGET_RATIO,
               ratio <= TARGET_RATIO ? "[met]" : "[NOT MET]");
        printf("%-26s %9s %10s %9s %10s   (one more call each)\n", "memory", "heap MiB", "allocs", "alloc MiB",
               "RSS +MiB");
        print_mem_row("ours: resolve()", mo);
        print_mem_row("raw libsolv", mr);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("process peak RSS (getrusage): %.1f MiB (generator text, parsed catalog and both sides)\n",
               ru.ru_maxrss / 1024.0);
}

static int run(struct bench *b) {
        if (make_catalog(b) < 0 || make_request(b) < 0 || write_testcase(b) < 0)
                return -1;
        print_catalog(b);
        if (check_plans(b) < 0)
                return -1;
        size_t n = b->o.rounds;
        double *all = calloc(TIMINGS_SERIES * n, sizeof *all);
        if (!all)
                return fprintf(stderr, "bench-resolve: out of memory\n"), -1;
        struct timings t = { all, all + n, all + 2 * n, all + 3 * n, all + 4 * n };
        int r = 0;
        for (size_t w = 0; r == 0 && w < b->o.warmup; w++)
                r = round_pair(b, w, &t, false);
        for (size_t i = 0; r == 0 && i < n; i++)
                r = round_pair(b, i, &t, true);
        struct mem_result mo, mr;
        if (r == 0 && (r = measure_memory(b, &mo, &mr)) == 0)
                print_results(b, &t, &mo, &mr);
        free(all);
        return r;
}

int main(int argc, char **argv) {
        struct bench b = { 0 };
        int r = parse_opts(argc, argv, &b.o);
        if (r != 0)
                return r > 0 ? 0 : 2;
        r = run(&b);
        remove_tmpdir(&b);
        if (b.o.dump && r == 0)
                printf("dumped: %s (catalog), %s (libsolv testcase)\n", b.o.dump, b.testcase);
        catalog_free(&b.cat);
        gen_catalog_free(&b.gen);
        free(b.subs);
        free(b.rsubs);
        return r < 0 ? 1 : 0;
}
