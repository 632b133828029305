/* musterctl operator: resolving operators' dependencies. `operator resolve
 * --catalog DIR PKG...` runs the resolver offline, on catalogs read from
 * disk with no server, for operator authors checking a bundle's
 * dependencies before they publish it. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "resolve.h"

enum { OPT_CATALOG = CTL_OPT_FIRST_LOCAL, OPT_SKIP_DEPS };

struct offline {
        struct resolve_catalog cats[RESOLVE_MAX_CATALOGS];
        struct catalog models[RESOLVE_MAX_CATALOGS];
        char *names[RESOLVE_MAX_CATALOGS];
        size_t n;
        struct resolve_subscription subs[RESOLVE_MAX_SUBSCRIPTIONS];
        size_t n_subs;
};

static void offline_free(struct offline *o) {
        for (size_t i = 0; i < o->n; i++) {
                catalog_free(&o->models[i]);
                free(o->names[i]);
        }
        for (size_t i = 0; i < o->n_subs; i++)
                free((char *) o->subs[i].package);
}

/* --catalog [NAME=]DIR: the catalog's name is NAME, or the last component of
 * DIR; its priority is its place on the command line (the first wins). */
static int load_catalog(struct offline *o, const char *arg) {
        if (o->n == RESOLVE_MAX_CATALOGS)
                return ctl_fail("at most %d catalogs", RESOLVE_MAX_CATALOGS);
        const char *eq = strchr(arg, '=');
        const char *path = eq ? eq + 1 : arg;
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return ctl_fail("out of memory");
        char *name = eq ? strndup(arg, (size_t) (eq - arg)) : strdup(basename(copy));
        if (!name)
                return ctl_fail("out of memory");
        struct catalog_file *files = NULL;
        size_t n = 0;
        char err[1024];
        int r = catalog_read_dir(path, &files, &n, err, sizeof err);
        if (r >= 0)
                r = catalog_load_files(files, n, &o->models[o->n], err, sizeof err);
        catalog_files_free(files, n);
        if (r < 0) {
                catalog_free(&o->models[o->n]);
                free(name);
                return ctl_fail("catalog %s: %s", path, err);
        }
        o->names[o->n] = name;
        o->cats[o->n] = (struct resolve_catalog) { name, (int) o->n, &o->models[o->n] };
        o->n++;
        return 0;
}

/* PKG or PKG:CHANNEL. */
static int add_subscription(struct offline *o, const struct ctl_cmd *cmd, const char *arg, bool skip) {
        if (o->n_subs == RESOLVE_MAX_SUBSCRIPTIONS)
                return ctl_usage_error(cmd, "at most %d packages", RESOLVE_MAX_SUBSCRIPTIONS);
        if (!*arg || *arg == ':')
                return ctl_usage_error(cmd, "\"%s\" names no package", arg);
        char *pkg = strdup(arg);
        if (!pkg)
                return ctl_fail("out of memory");
        char *colon = strchr(pkg, ':');
        if (colon)
                *colon = '\0';
        if (colon && !colon[1]) {
                free(pkg);
                return ctl_usage_error(cmd, "\"%s\" names no channel after ':'", arg);
        }
        o->subs[o->n_subs++] = (struct resolve_subscription) {
                .package = pkg, .channel = colon ? colon + 1 : NULL, .skip_dependencies = skip };
        return 0;
}

static int print_steps(struct ctl *c, const struct resolve_plan *p) {
        static const struct ctl_col cols[] = {
                { "ACTION", 0, 0, 0 },
                { "PACKAGE", 0, 0, 0 },
                { "VERSION", 0, 0, 0 },
                { "CATALOG", 0, 2, 0 },
                { "CHANNEL", CTL_COL_WIDE, 0, 0 },
                { "BUNDLE", CTL_COL_WIDE, 0, 0 },
                { "WHY", CTL_COL_FLEX, 1, 20 },
        };
        struct ctl_table t;
        ctl_table_init(&t, cols, sizeof cols / sizeof *cols);
        int r = 0;
        for (size_t i = 0; i < p->n_steps && r >= 0; i++) {
                const struct resolve_step *s = &p->steps[i];
                const char *row[] = { resolve_action_to_string(s->action), s->package, s->version, s->catalog,
                                      s->channel, s->bundle, s->why };
                r = ctl_table_add(&t, row);
        }
        if (r >= 0)
                r = ctl_print_table(c, &t);
        ctl_table_free(&t);
        return r < 0 ? ctl_fail("out of memory") : 0;
}

/* Each problem and its ways out, wrapped to the terminal's width. */
static void print_problems(struct ctl *c, const struct resolve_plan *p) {
        unsigned w = c->fmt.width ? c->fmt.width : CTL_TABLE_WIDTH;
        fprintf(stderr, "musterctl: the operators cannot be resolved\n");
        for (size_t i = 0; i < p->n_problems; i++) {
                _cleanup_free_ char *text = ctl_text_wrap(p->problems[i].text, w - 4, 4);
                fprintf(stderr, "\nProblem %zu: %s\n", i + 1, text ? text : p->problems[i].text);
                if (p->problems[i].n_solutions)
                        fprintf(stderr, "  Ways out:\n");
                for (size_t j = 0; j < p->problems[i].n_solutions; j++) {
                        _cleanup_free_ char *s = ctl_text_wrap(p->problems[i].solutions[j], w - 6, 6);
                        fprintf(stderr, "    - %s\n", s ? s : p->problems[i].solutions[j]);
                }
        }
}

static int run_offline(struct ctl *c, struct offline *o) {
        struct resolve_request q = { .catalogs = o->cats, .n_catalogs = o->n, .subscriptions = o->subs,
                                     .n_subscriptions = o->n_subs };
        struct resolve_plan p;
        char err[1024];
        if (resolve(&q, &p, err, sizeof err) < 0)
                return ctl_fail("%s", err);
        int rc = p.ok ? CTL_EXIT_OK : CTL_EXIT_FAIL;
        if (c->output == CTL_OUT_JSON) {
                _cleanup_(json_object_putp) json_object *j = NULL;
                if (resolve_plan_to_json(&p, &j) < 0 || ctl_print_json(j) < 0)
                        rc = ctl_fail("out of memory");
        } else if (p.ok) {
                if (print_steps(c, &p) != 0)
                        rc = CTL_EXIT_FAIL;
        } else {
                print_problems(c, &p);
        }
        resolve_plan_free(&p);
        return rc;
}

int ctl_operator_resolve(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "catalog", required_argument, NULL, OPT_CATALOG },
                { "skip-dependencies", no_argument, NULL, OPT_SKIP_DEPS },
                CTL_GLOBAL_OPTIONS,
                { 0 },
        };
        struct offline *o = calloc(1, sizeof(*o));
        if (!o)
                return ctl_fail("out of memory");
        bool skip = false;
        int rc = 0;
        optind = 0;
        for (int k; rc == 0 && (k = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END;) {
                if (k == CTL_OPT_HELP || k == CTL_OPT_BAD)
                        rc = k == CTL_OPT_HELP ? -1 : CTL_EXIT_USAGE;
                else if (k == OPT_CATALOG)
                        rc = load_catalog(o, optarg);
                else if (k == OPT_SKIP_DEPS)
                        skip = true;
        }
        if (rc == 0 && o->n == 0)
                rc = ctl_usage_error(cmd, "give at least one --catalog DIR (resolving against a cluster's "
                                          "subscriptions is not there yet)");
        if (rc == 0 && optind >= argc)
                rc = ctl_usage_error(cmd, "name at least one package");
        for (int i = optind; rc == 0 && i < argc; i++)
                rc = add_subscription(o, cmd, argv[i], skip);
        if (rc == 0)
                rc = run_offline(c, o);
        offline_free(o);
        free(o);
        return rc < 0 ? CTL_EXIT_OK : rc;
}
