/* musterctl operator: a cluster's operator subscriptions and the plans that
 * resolving their dependencies gives (DESIGN §8). subscribe, uninstall
 * (alias unsubscribe; with cleanup its operands go first, DESIGN §9), list,
 * show, set and upgrade go through musterd; `operator resolve --cluster` asks it
 * for a preview, `operator resolve --catalog DIR` runs the same resolver
 * offline on catalogs read from disk, for operator authors checking a
 * bundle's dependencies before they publish it. Every plan prints the same
 * way, from resolve_plan_to_json's object. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"
#include "resolve.h"

enum {
        OPT_CATALOG = CTL_OPT_FIRST_LOCAL,
        OPT_CLUSTER,
        OPT_SKIP_DEPS,
        OPT_CHANNEL,
        OPT_RANGE,
        OPT_PRUNE,
        OPT_UPGRADE,
        OPT_UPGRADE_ALL,
        OPT_ALL,
        OPT_CLEANUP,
};

/* ---- plans, as resolve_plan_to_json writes them -------------------------------- */

static bool jbool(json_object *o, const char *key) {
        json_object *v = ctl_jget(o, key);
        return v && json_object_get_boolean(v);
}

/* A plan's steps; a subscription's bundles have the same columns but the
 * first. */
static const struct ctl_col step_cols[] = {
        { "ACTION", 0, 0, 0 },
        { "PACKAGE", 0, 0, 0 },
        { "VERSION", 0, 0, 0 },
        { "CATALOG", 0, 2, 0 },
        { "CHANNEL", CTL_COL_WIDE, 0, 0 },
        { "BUNDLE", CTL_COL_WIDE, 0, 0 },
        { "WHY", CTL_COL_FLEX, 1, 20 },
};
#define N_STEP_COLS (sizeof step_cols / sizeof *step_cols)

/* The row of a step (with its action) or of a bundle (without); the
 * version of an upgrade is "FROM -> TO". */
static int bundle_cells(struct ctl_table *t, json_object *s, bool action) {
        char version[160];
        const char *from = ctl_jstr(s, "from_version"), *to = ctl_jstr(s, "version");
        if (from)
                snprintf(version, sizeof version, "%.70s -> %.70s", from, to ? to : "?");
        else
                snprintf(version, sizeof version, "%.150s", to ? to : "");
        const char *row[] = { ctl_jstr(s, "action"), ctl_jstr(s, "package"), version, ctl_jstr(s, "catalog"),
                              ctl_jstr(s, "channel"), ctl_jstr(s, "bundle"), ctl_jstr(s, "why") };
        return ctl_table_add(t, action ? row : row + 1);
}

static int step_row(struct ctl_table *t, json_object *s) {
        return bundle_cells(t, s, true);
}

static int bundle_row(struct ctl_table *t, json_object *b) {
        return bundle_cells(t, b, false);
}

/* Not for -o json (ctl_print_rows would print the steps alone). */
static int print_steps(struct ctl *c, json_object *steps) {
        if (ctl_jlen(steps) == 0) {
                puts("Nothing to install: no operators are subscribed to.");
                return CTL_EXIT_OK;
        }
        return ctl_print_rows(c, steps, step_cols, N_STEP_COLS, step_row);
}

/* prefix and s as one text wrapped to the terminal's width, lines after
 * the first indented by `indent`; after an empty line when `gap`. */
static void print_wrapped(FILE *f, const struct ctl *c, bool gap, const char *prefix, const char *s,
                          size_t indent) {
        size_t lead = strspn(prefix, " "); /* kept: wrapping drops leading blanks */
        _cleanup_free_ char *joined = NULL;
        if (asprintf(&joined, "%s%s", prefix + lead, s ? s : "") < 0)
                joined = NULL;
        _cleanup_free_ char *clean = joined ? ctl_text_sanitize(joined) : NULL;
        _cleanup_free_ char *text = clean ? ctl_text_wrap(clean, ctl_fmt_room(&c->fmt, indent), indent) : NULL;
        fprintf(f, "%s%*s%s\n", gap ? "\n" : "", (int) lead, "", text ? text : clean ? clean : "?");
}

/* Each problem and its ways out, wrapped to the terminal's width. */
static void print_problems(struct ctl *c, json_object *problems) {
        fprintf(stderr, "musterctl: the operators cannot be resolved\n");
        for (size_t i = 0; i < ctl_jlen(problems); i++) {
                json_object *p = json_object_array_get_idx(problems, i);
                json_object *ways = ctl_jget(p, "solutions");
                char head[48];
                snprintf(head, sizeof head, "Problem %zu: ", i + 1);
                print_wrapped(stderr, c, true, head, ctl_jstr(p, "text"), 4);
                if (ctl_jlen(ways))
                        fprintf(stderr, "  Ways out:\n");
                for (size_t j = 0; j < ctl_jlen(ways); j++)
                        print_wrapped(stderr, c, false, "    - ",
                                      json_object_get_string(json_object_array_get_idx(ways, j)), 6);
        }
}

/* A plan as -o json prints it, or for people: its steps, or why it cannot
 * be and the ways out. The exit status: 1 when it does not resolve. */
static int print_plan(struct ctl *c, json_object *plan) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(plan) ? CTL_EXIT_FAIL : jbool(plan, "ok") ? CTL_EXIT_OK : CTL_EXIT_FAIL;
        if (!plan || !json_object_is_type(plan, json_type_object))
                return ctl_fail("the server sent no plan");
        if (!jbool(plan, "ok")) {
                print_problems(c, ctl_jget(plan, "problems"));
                return CTL_EXIT_FAIL;
        }
        return print_steps(c, ctl_jget(plan, "steps"));
}

/* reply = {plan, payload_revision?} as unsubscribe and upgrade answer. */
static int print_plan_reply(struct ctl *c, json_object *reply, const char *done) {
        json_object *plan = ctl_jget(reply, "plan");
        if (c->output == CTL_OUT_JSON) {
                int rc = ctl_print_json(reply);
                return rc ? rc : jbool(plan, "ok") ? CTL_EXIT_OK : CTL_EXIT_FAIL;
        }
        puts(done);
        int rc = print_plan(c, plan);
        const char *rev = ctl_jstr(reply, "payload_revision");
        if (rev)
                printf("Payload revision %s carries it to the hosts; their node agents apply it.\n", rev);
        else
                puts("No new payload revision: the cluster is not installed, or nothing changed.");
        return rc;
}

/* ---- resolve offline ---------------------------------------------------------- */

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

static int run_offline(struct ctl *c, struct offline *o) {
        struct resolve_request q = { .catalogs = o->cats, .n_catalogs = o->n, .subscriptions = o->subs,
                                     .n_subscriptions = o->n_subs };
        struct resolve_plan p;
        char err[1024];
        if (resolve(&q, &p, err, sizeof err) < 0)
                return ctl_fail("%s", err);
        _cleanup_json_ json_object *j = NULL;
        int rc = resolve_plan_to_json(&p, &j) < 0 ? ctl_fail("out of memory") : CTL_EXIT_OK;
        resolve_plan_free(&p);
        return rc ? rc : print_plan(c, j);
}

/* ---- resolve: the options ------------------------------------------------------- */

struct resolve_args {
        const char *cluster;
        const char *catalogs[RESOLVE_MAX_CATALOGS];
        size_t n_catalogs;
        json_object *upgrade; /* package names */
        bool upgrade_all, prune, skip;
};

/* One option of `operator resolve`: 0, or the exit status. */
static int resolve_option(const struct ctl_cmd *cmd, int k, struct resolve_args *a) {
        switch (k) {
        case OPT_CATALOG:
                if (a->n_catalogs == RESOLVE_MAX_CATALOGS)
                        return ctl_usage_error(cmd, "at most %d catalogs", RESOLVE_MAX_CATALOGS);
                a->catalogs[a->n_catalogs++] = optarg;
                return 0;
        case OPT_CLUSTER:
                if (a->cluster)
                        return ctl_usage_error(cmd, "--cluster is given twice");
                a->cluster = optarg;
                return 0;
        case OPT_SKIP_DEPS: a->skip = true; return 0;
        case OPT_PRUNE: a->prune = true; return 0;
        case OPT_UPGRADE_ALL: a->upgrade_all = true; return 0;
        case OPT_UPGRADE:
                if (!*optarg)
                        return ctl_usage_error(cmd, "--upgrade needs a package");
                if (ctl_jlen(a->upgrade) >= RESOLVE_MAX_SUBSCRIPTIONS)
                        return ctl_usage_error(cmd, "at most %d packages to upgrade", RESOLVE_MAX_SUBSCRIPTIONS);
                return json_object_array_add(a->upgrade, json_object_new_string(optarg)) < 0 ? ctl_fail("out of memory")
                                                                                             : 0;
        default: return CTL_EXIT_USAGE; /* printed */
        }
}

/* The options and what they allow together: 0, -1 after --help, or the
 * exit status of a usage error. */
static int resolve_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, struct resolve_args *a) {
        static const struct option opts[] = {
                { "catalog", required_argument, NULL, OPT_CATALOG },
                { "cluster", required_argument, NULL, OPT_CLUSTER },
                { "skip-dependencies", no_argument, NULL, OPT_SKIP_DEPS },
                { "upgrade", required_argument, NULL, OPT_UPGRADE },
                { "upgrade-all", no_argument, NULL, OPT_UPGRADE_ALL },
                { "prune", no_argument, NULL, OPT_PRUNE },
                CTL_GLOBAL_OPTIONS,
                { 0 },
        };
        int rc = 0;
        optind = 0;
        for (int k; rc == 0 && (k = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END;)
                rc = k == CTL_OPT_HELP ? -1 : resolve_option(cmd, k, a);
        if (rc)
                return rc;
        if (!a->cluster == !a->n_catalogs)
                return ctl_usage_error(cmd, "give either --cluster CLUSTER (a preview through musterd) or "
                                            "--catalog DIR (offline), not both");
        if (!a->cluster && (a->prune || a->upgrade_all || ctl_jlen(a->upgrade)))
                return ctl_usage_error(cmd, "--upgrade, --upgrade-all and --prune need --cluster");
        if (!a->cluster && optind >= argc)
                return ctl_usage_error(cmd, "name at least one package");
        return 0;
}

/* ---- paths ------------------------------------------------------------------------- */

enum op_path { PATH_SUBSCRIPTIONS, PATH_SUBSCRIPTION, PATH_RESOLVE, PATH_UPGRADE };

/* That path of the cluster named `cluster` (PATH_SUBSCRIPTION: of its
 * subscription to pkg), malloc'd; NULL with the reason printed. */
static char *cluster_path(struct ctl *c, const char *cluster, enum op_path which, const char *pkg) {
        _cleanup_free_ char *id = ctl_lookup_cluster(c, cluster);
        if (!id)
                return NULL;
        _cleanup_free_ char *esc = ctl_url_escape(pkg ? pkg : "");
        char *path = NULL;
        int k = -1;
        switch (which) {
        case PATH_SUBSCRIPTIONS: k = asprintf(&path, MUSTER_PATH_CLUSTER_SUBSCRIPTIONS("%s"), id); break;
        case PATH_SUBSCRIPTION:
                if (esc)
                        k = asprintf(&path, MUSTER_PATH_CLUSTER_SUBSCRIPTION("%s", "%s"), id, esc);
                break;
        case PATH_RESOLVE: k = asprintf(&path, MUSTER_PATH_CLUSTER_OPERATORS_RESOLVE("%s"), id); break;
        case PATH_UPGRADE: k = asprintf(&path, MUSTER_PATH_CLUSTER_OPERATORS_UPGRADE("%s"), id); break;
        }
        if (k < 0) {
                ctl_fail("out of memory");
                return NULL;
        }
        return path;
}

/* ---- resolve through musterd ------------------------------------------------------ */

/* {subscriptions: [{package, channel?, skip_dependencies?}], upgrade?,
 * upgrade_all?, prune?} for the preview. */
static json_object *preview_body(const struct offline *o, struct resolve_args *a) {
        _cleanup_json_ json_object *body = json_object_new_object();
        json_object *subs = json_object_new_array();
        if (!body || !subs) {
                json_object_put(subs);
                return NULL;
        }
        json_object_object_add(body, "subscriptions", subs);
        for (size_t i = 0; i < o->n_subs; i++) {
                json_object *s = json_object_new_object();
                if (!s || json_object_array_add(subs, s) < 0) {
                        json_object_put(s);
                        return NULL;
                }
                json_object_object_add(s, "package", json_object_new_string(o->subs[i].package));
                if (o->subs[i].channel)
                        json_object_object_add(s, "channel", json_object_new_string(o->subs[i].channel));
                if (o->subs[i].skip_dependencies)
                        json_object_object_add(s, "skip_dependencies", json_object_new_boolean(true));
        }
        if (ctl_jlen(a->upgrade))
                json_object_object_add(body, "upgrade", json_object_get(a->upgrade));
        if (a->upgrade_all)
                json_object_object_add(body, "upgrade_all", json_object_new_boolean(true));
        if (a->prune)
                json_object_object_add(body, "prune", json_object_new_boolean(true));
        return TAKE_PTR(body);
}

static int run_preview(struct ctl *c, const struct offline *o, struct resolve_args *a) {
        _cleanup_free_ char *path = cluster_path(c, a->cluster, PATH_RESOLVE, NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        _cleanup_json_ json_object *body = preview_body(o, a);
        if (!body)
                return ctl_fail("out of memory");
        struct ctl_reply r;
        int rc = ctl_call_object(c, "POST", path, body, &r) < 0 ? CTL_EXIT_FAIL : print_plan(c, r.json);
        ctl_reply_free(&r);
        return rc;
}

int ctl_operator_resolve(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        struct resolve_args a = { .upgrade = json_object_new_array() };
        struct offline *o = calloc(1, sizeof(*o));
        int rc = !o || !a.upgrade ? ctl_fail("out of memory") : resolve_options(c, cmd, argc, argv, &a);
        for (size_t i = 0; rc == 0 && i < a.n_catalogs; i++)
                rc = load_catalog(o, a.catalogs[i]);
        for (int i = optind; rc == 0 && i < argc; i++)
                rc = add_subscription(o, cmd, argv[i], a.skip);
        if (rc == 0)
                rc = a.cluster ? run_preview(c, o, &a) : run_offline(c, o);
        if (o)
                offline_free(o);
        free(o);
        json_object_put(a.upgrade);
        return rc < 0 ? CTL_EXIT_OK : rc;
}

/* ---- subscribe ------------------------------------------------------------------------ */

/* The bundles a subscription brought in: what, from where and why (not
 * for -o json). */
static int print_bundles(struct ctl *c, json_object *bundles) {
        return ctl_print_rows(c, bundles, step_cols + 1, N_STEP_COLS - 1, bundle_row);
}

/* What the cleanup setting of the subscription to pkg does, after `lead`,
 * wrapped. */
static void print_cleanup_meaning(struct ctl *c, const char *lead, const char *pkg, bool on) {
        _cleanup_free_ char *text = NULL;
        int k = on ? asprintf(&text, "operator uninstall deletes %s's operands (the objects of the kinds it owns, "
                                     "applied through musterd or found on the hosts) first and removes the operator "
                                     "once every host has reported them gone.", pkg ?: "?")
                   : asprintf(&text, "operator uninstall keeps %s's operands.", pkg ?: "?");
        if (k < 0)
                text = NULL;
        print_wrapped(stdout, c, false, lead, text ?: "?", 2);
}

static int print_subscribed(struct ctl *c, const char *cluster, json_object *s) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(s);
        _cleanup_free_ char *name = ctl_text_sanitize(cluster);
        _cleanup_free_ char *pkg = ctl_text_sanitize(ctl_jstr(s, "package") ?: "?");
        const char *phase = ctl_jstr(s, "phase") ?: "?", *rev = ctl_jstr(s, "payload_revision");
        printf("cluster %s subscribed to %s: %s", name ?: "?", pkg ?: "?", phase);
        if (rev)
                printf("; payload revision %s carries it to the hosts", rev);
        putchar('\n');
        if (jbool(s, "cleanup.enabled"))
                print_cleanup_meaning(c, "Cleanup is enabled: ", pkg, true);
        int rc = ctl_jlen(ctl_jget(s, "bundles")) ? print_bundles(c, ctl_jget(s, "bundles")) : CTL_EXIT_OK;
        if (strcmp(phase, "Failed") == 0) {
                _cleanup_free_ char *head = NULL;
                if (asprintf(&head, "%s does not resolve; the cluster cannot install until it does:", pkg ?: "?") < 0)
                        head = NULL;
                print_wrapped(stderr, c, false, "musterctl: ", head, 2);
                print_wrapped(stderr, c, false, "  ", ctl_jstr(s, "message"), 2);
        } else if (ctl_jstr(s, "message"))
                print_wrapped(stdout, c, false, "", ctl_jstr(s, "message"), 0);
        return rc;
}

/* {"enabled": bool} from the value of --cleanup (`def` when it has none,
 * as `--cleanup` alone) into body's "cleanup": 0, or the exit status of a
 * usage error. */
static int cleanup_option(const struct ctl_cmd *cmd, const char *arg, bool def, json_object *body) {
        bool on = def;
        if (arg && strcmp(arg, "true") == 0)
                on = true;
        else if (arg && strcmp(arg, "false") == 0)
                on = false;
        else if (arg)
                return ctl_usage_error(cmd, "--cleanup takes true or false, not \"%s\"", arg);
        json_object *cl = json_object_new_object();
        if (!cl)
                return ctl_fail("out of memory");
        json_object_object_add(cl, "enabled", json_object_new_boolean(on));
        json_object_object_add(body, "cleanup", cl);
        return 0;
}

/* One option of `operator subscribe` into body: its member, or NULL when
 * k is not a subscription option. */
static const char *subscribe_key(int k) {
        switch (k) {
        case OPT_CHANNEL: return "channel";
        case OPT_CATALOG: return "catalog";
        case OPT_RANGE: return "version_range";
        default: return NULL;
        }
}

/* The subscription's options into body; 0, -1 after --help, or the exit
 * status of a usage error. */
static int subscribe_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, json_object *body) {
        static const struct option opts[] = {
                { "channel", required_argument, NULL, OPT_CHANNEL },
                { "catalog", required_argument, NULL, OPT_CATALOG },
                { "version-range", required_argument, NULL, OPT_RANGE },
                { "skip-dependencies", no_argument, NULL, OPT_SKIP_DEPS },
                { "cleanup", optional_argument, NULL, OPT_CLEANUP },
                CTL_GLOBAL_OPTIONS,
                { 0 },
        };
        optind = 0;
        for (int k, rc; (k = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END;) {
                const char *key = subscribe_key(k);
                if (k == CTL_OPT_HELP)
                        return -1;
                if (k == OPT_CLEANUP) {
                        if ((rc = cleanup_option(cmd, optarg, true, body)))
                                return rc;
                } else if (k == OPT_SKIP_DEPS)
                        json_object_object_add(body, "skip_dependencies", json_object_new_boolean(true));
                else if (!key)
                        return CTL_EXIT_USAGE; /* printed */
                else if (!*optarg)
                        return ctl_usage_error(cmd, "--%s needs a value", argv[optind - 1] + 2);
                else
                        json_object_object_add(body, key, json_object_new_string(optarg));
        }
        return ctl_want_args(cmd, argc, argv, 2, "CLUSTER and PKG");
}

int ctl_operator_subscribe(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        _cleanup_json_ json_object *body = json_object_new_object();
        if (!body)
                return ctl_fail("out of memory");
        int rc = subscribe_options(c, cmd, argc, argv, body);
        if (rc)
                return rc < 0 ? CTL_EXIT_OK : rc;
        const char *cluster = argv[optind], *pkg = argv[optind + 1];
        if (!*pkg)
                return ctl_usage_error(cmd, "PKG is empty");
        json_object_object_add(body, "package", json_object_new_string(pkg));
        _cleanup_free_ char *path = cluster_path(c, cluster, PATH_SUBSCRIPTIONS, NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        rc = ctl_call_object(c, "POST", path, body, &r) < 0 ? CTL_EXIT_FAIL : print_subscribed(c, cluster, r.json);
        ctl_reply_free(&r);
        return rc;
}

/* ---- pending deletions (uninstall with cleanup) ------------------------------------------- */

static int pending_row(struct ctl_table *t, json_object *k) {
        _cleanup_free_ char *names = ctl_join(ctl_jget(k, "names"), "");
        const char *row[] = { ctl_jstr(k, "kind"), ctl_jstr(k, "group"), ctl_jstr(k, "count"), names };
        return names ? ctl_table_add(t, row) : -ENOMEM;
}

/* status.cleanup's operands still to be deleted, a row per kind (not for
 * -o json). */
static int print_pending(struct ctl *c, json_object *cleanup) {
        static const struct ctl_col cols[] = {
                { "KIND", 0, 0, 0 },
                { "GROUP", 0, 1, 0 },
                { "COUNT", CTL_COL_RIGHT, 0, 0 },
                { "NAMES", CTL_COL_FLEX, 0, 12 },
        };
        json_object *kinds = ctl_jget(cleanup, "pending_deletion");
        return ctl_jlen(kinds) ? ctl_print_rows(c, kinds, cols, sizeof cols / sizeof *cols, pending_row) : CTL_EXIT_OK;
}

/* ---- uninstall (unsubscribe) ---------------------------------------------------------------- */

/* 200: the operator is gone; its plan, and the operands deleted with it. */
static int print_uninstalled(struct ctl *c, const char *cluster, const char *pkg, bool prune, json_object *reply) {
        _cleanup_free_ char *name = ctl_text_sanitize(cluster), *p = ctl_text_sanitize(pkg), *done = NULL;
        if (asprintf(&done, "cluster %s unsubscribed from %s%s", name ?: "?", p ?: "?",
                     prune ? "; dependencies nothing needs are pruned" : "") < 0) {
                done = NULL;
                return ctl_fail("out of memory");
        }
        int rc = print_plan_reply(c, reply, done);
        const char *n = ctl_jstr(reply, "operands_deleted");
        if (n && c->output != CTL_OUT_JSON)
                printf("%s operand(s) of %s deleted\n", n, p ?: "?");
        return rc;
}

/* 202: the operator stays while its operands are deleted; s is the
 * subscription, in phase Cleanup. */
static int print_cleanup_started(struct ctl *c, const char *cluster, json_object *s) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(s);
        _cleanup_free_ char *name = ctl_text_sanitize(cluster), *pkg = ctl_text_sanitize(ctl_jstr(s, "package") ?: "?");
        _cleanup_free_ char *msg = ctl_text_sanitize(ctl_jstr(s, "message") ?: "its operands are deleted first");
        const char *rev = ctl_jstr(s, "payload_revision");
        printf("Uninstalling %s from cluster %s: %s\n", pkg ?: "?", name ?: "?", msg ?: "?");
        if (rev)
                printf("payload revision %s deletes them; the operator stays until every host has reported them "
                       "gone\n", rev);
        int rc = print_pending(c, ctl_jget(s, "status.cleanup"));
        printf("Follow it with: musterctl operator show %s %s\n", name ?: "?", pkg ?: "?");
        return rc;
}

/* {package, uninstalled: true, payload_revision?}: cleanup was turned off
 * during a cleanup, which aborted it and removed the operator. */
static int print_aborted(struct ctl *c, const char *cluster, json_object *reply) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(reply);
        _cleanup_free_ char *name = ctl_text_sanitize(cluster);
        _cleanup_free_ char *pkg = ctl_text_sanitize(ctl_jstr(reply, "package") ?: "?");
        const char *rev = ctl_jstr(reply, "payload_revision");
        _cleanup_free_ char *text = NULL;
        if (asprintf(&text, "cluster %s: the cleanup of %s is aborted and %s is uninstalled; the operands deleted "
                            "stay deleted", name ?: "?", pkg ?: "?", pkg ?: "?") < 0) {
                text = NULL;
                return ctl_fail("out of memory");
        }
        print_wrapped(stdout, c, false, "", text, 2);
        if (rev)
                printf("Payload revision %s carries it to the hosts; their node agents apply it.\n", rev);
        return CTL_EXIT_OK;
}

/* --prune and --cleanup[=BOOL] (into body) and CLUSTER PKG: 0, -1 after
 * --help, or the exit status of a usage error. */
static int uninstall_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, bool *prune,
                             json_object *body) {
        static const struct option opts[] = {
                { "prune", no_argument, NULL, OPT_PRUNE },
                { "cleanup", optional_argument, NULL, OPT_CLEANUP },
                CTL_GLOBAL_OPTIONS,
                { 0 },
        };
        int rc = 0;
        optind = 0;
        for (int k; rc == 0 && (k = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END;) {
                if (k == CTL_OPT_HELP || k == CTL_OPT_BAD)
                        rc = k == CTL_OPT_HELP ? -1 : CTL_EXIT_USAGE;
                else if (k == OPT_CLEANUP)
                        rc = cleanup_option(cmd, optarg, true, body);
                else
                        *prune = true;
        }
        if (rc == 0 && (rc = ctl_want_args(cmd, argc, argv, 2, "CLUSTER and PKG")) == 0 && !*argv[optind + 1])
                rc = ctl_usage_error(cmd, "PKG is empty");
        return rc;
}

/* PATCH the subscription's cleanup setting first: 0 to go on with the
 * DELETE, -1 when that already uninstalled it (printed), or the exit
 * status of a failure. */
static int uninstall_set_cleanup(struct ctl *c, const char *cluster, const char *path, json_object *body) {
        struct ctl_reply r;
        int rc = ctl_call_object(c, "PATCH", path, body, &r) < 0 ? CTL_EXIT_FAIL : 0;
        if (rc == 0 && jbool(r.json, "uninstalled"))
                rc = print_aborted(c, cluster, r.json) ?: -1;
        ctl_reply_free(&r);
        return rc;
}

int ctl_operator_unsubscribe(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        _cleanup_json_ json_object *body = json_object_new_object();
        bool prune = false;
        int rc = body ? uninstall_options(c, cmd, argc, argv, &prune, body) : ctl_fail("out of memory");
        if (rc)
                return rc < 0 ? CTL_EXIT_OK : rc;
        const char *cluster = argv[optind], *pkg = argv[optind + 1];
        _cleanup_free_ char *path = cluster_path(c, cluster, PATH_SUBSCRIPTION, pkg);
        _cleanup_free_ char *full = NULL;
        if (!path || asprintf(&full, "%s%s", path, prune ? "?prune=true" : "") < 0)
                return path ? ctl_fail("out of memory") : CTL_EXIT_FAIL;
        if (ctl_jget(body, "cleanup") && (rc = uninstall_set_cleanup(c, cluster, path, body)))
                return rc < 0 ? CTL_EXIT_OK : rc;
        struct ctl_reply r;
        if (ctl_call_object(c, "DELETE", full, NULL, &r) < 0)
                rc = CTL_EXIT_FAIL;
        else if (r.status == 202)
                rc = print_cleanup_started(c, cluster, r.json);
        else
                rc = print_uninstalled(c, cluster, pkg, prune, r.json);
        ctl_reply_free(&r);
        return rc;
}

/* ---- list ---------------------------------------------------------------------------------- */

/* The subscribed package's own bundle among those it brought in. */
static json_object *own_bundle(json_object *s) {
        json_object *bundles = ctl_jget(s, "bundles");
        const char *pkg = ctl_jstr(s, "package");
        for (size_t i = 0; pkg && i < ctl_jlen(bundles); i++) {
                json_object *b = json_object_array_get_idx(bundles, i);
                const char *bp = ctl_jstr(b, "package");
                if (bp && strcmp(bp, pkg) == 0)
                        return b;
        }
        return NULL;
}

/* A subscription's cleanup setting for a table: "yes", "no", or NULL ("-")
 * when the server does not say. */
static const char *cleanup_cell(json_object *s) {
        json_object *v = ctl_jget(s, "cleanup.enabled");
        return !v ? NULL : json_object_get_boolean(v) ? "yes" : "no";
}

static int subscription_row(struct ctl_table *t, json_object *s) {
        json_object *own = own_bundle(s);
        _cleanup_free_ char *bundles = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&bundles, &len);
        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < ctl_jlen(ctl_jget(s, "bundles")); i++)
                fprintf(m, "%s%s", i ? ", " : "",
                        ctl_jstr(json_object_array_get_idx(ctl_jget(s, "bundles"), i), "bundle") ?: "?");
        if (fclose(m) != 0)
                return -ENOMEM;
        char age[16];
        const char *row[] = {
                ctl_jstr(s, "package"),
                ctl_jstr(s, "channel") ?: ctl_jstr(own, "channel"),
                ctl_jstr(s, "phase"),
                cleanup_cell(s),
                ctl_jstr(own, "version"),
                ctl_jstr(s, "catalog") ?: ctl_jstr(own, "catalog"),
                bundles,
                ctl_jstr(s, "version_range"),
                jbool(s, "skip_dependencies") ? "yes" : "no",
                ctl_jstr(s, "owner"),
                ctl_age(ctl_jstr(s, "created_at"), age, sizeof age),
                ctl_jstr(s, "message"),
        };
        return ctl_table_add(t, row);
}

/* The cluster's condition when its operators do not resolve, why each
 * Failed subscription failed where that says more than the condition
 * (usually the same words: then they are said once), and what each
 * uninstall in phase Cleanup waits for. */
static void print_list_notes(struct ctl *c, json_object *items, json_object *cond) {
        const char *status = ctl_jstr(cond, "status"), *said = NULL;
        if (status && strcmp(status, "False") == 0) {
                char head[160];
                said = ctl_jstr(cond, "message");
                snprintf(head, sizeof head, "%.40s=False (%.60s): ", ctl_jstr(cond, "type") ?: "OperatorsResolvable",
                         ctl_jstr(cond, "reason") ?: "?");
                print_wrapped(stdout, c, true, head, said, 4);
        }
        for (size_t i = 0; i < ctl_jlen(items) && c->output != CTL_OUT_WIDE; i++) {
                json_object *s = json_object_array_get_idx(items, i);
                const char *phase = ctl_jstr(s, "phase") ?: "", *msg = ctl_jstr(s, "message");
                bool failed = strcmp(phase, "Failed") == 0, cleanup = strcmp(phase, "Cleanup") == 0;
                if (!msg || !(failed || cleanup) || (failed && said && strcmp(msg, said) == 0))
                        continue;
                char head[80];
                snprintf(head, sizeof head, "%.60s: ", ctl_jstr(s, "package") ?: "?");
                print_wrapped(stdout, c, true, head, msg, 4);
        }
}

/* GET the cluster's subscriptions into *r: 0, or -1 with the failure
 * printed (and *r freed). */
static int get_subscriptions(struct ctl *c, const char *cluster, struct ctl_reply *r) {
        _cleanup_free_ char *path = cluster_path(c, cluster, PATH_SUBSCRIPTIONS, NULL);
        *r = (struct ctl_reply) { 0 };
        if (!path)
                return -1;
        if (ctl_call_object(c, "GET", path, NULL, r) < 0) {
                ctl_reply_free(r);
                return -1;
        }
        return 0;
}

int ctl_operator_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "PACKAGE", CTL_COL_FLEX, 0, 10 },
                { "CHANNEL", 0, 3, 0 },
                { "PHASE", 0, 0, 0 },
                { "CLEANUP", 0, 0, 0 },
                { "VERSION", 0, 0, 0 },
                { "CATALOG", 0, 2, 0 },
                { "BUNDLES", CTL_COL_FLEX, 1, 12 },
                { "RANGE", CTL_COL_WIDE, 0, 0 },
                { "SKIP-DEPS", CTL_COL_WIDE, 0, 0 },
                { "OWNER", CTL_COL_WIDE, 0, 0 },
                { "AGE", CTL_COL_WIDE, 0, 0 },
                { "MESSAGE", CTL_COL_WIDE, 0, 0 },
        };
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "CLUSTER", &rc))
                return rc;
        struct ctl_reply r;
        if (get_subscriptions(c, argv[optind], &r) < 0)
                return CTL_EXIT_FAIL;
        json_object *items = ctl_jget(r.json, "items");
        if (c->output == CTL_OUT_JSON)
                rc = ctl_print_json(r.json);
        else if (ctl_jlen(items) == 0) {
                _cleanup_free_ char *name = ctl_text_sanitize(argv[optind]);
                printf("cluster %s is subscribed to no operators\n", name ?: "?");
        } else {
                rc = ctl_print_rows(c, items, cols, sizeof cols / sizeof *cols, subscription_row);
                print_list_notes(c, items, ctl_jget(r.json, "condition"));
        }
        ctl_reply_free(&r);
        return rc;
}

/* ---- show ----------------------------------------------------------------------------------- */

/* status.cleanup beyond its table: the hosts that have not reported the
 * operands gone, whether it stalled, whether it was aborted. */
static void print_cleanup_hosts(struct ctl *c, json_object *cl) {
        json_object *hosts = ctl_jget(cl, "lagging_hosts");
        _cleanup_free_ char *list = ctl_join(hosts, ""), *more = NULL;
        int64_t n = ctl_jint(cl, "lagging_count", (int64_t) ctl_jlen(hosts));
        if (n > (int64_t) ctl_jlen(hosts) && asprintf(&more, "%s and %lld more", list ?: "?",
                                                       (long long) (n - (int64_t) ctl_jlen(hosts))) < 0)
                more = NULL;
        if (jbool(cl, "stalled"))
                print_wrapped(stdout, c, false, "stalled: yes — hosts not reported: ", more ?: list, 4);
        else if (ctl_jlen(hosts))
                print_wrapped(stdout, c, false, "hosts not reported yet: ", more ?: list, 4);
        if (jbool(cl, "aborted"))
                puts("aborted");
}

static int print_subscription(struct ctl *c, json_object *s) {
        const char *reason = ctl_jstr(s, "reason") ?: ctl_jstr(s, "status.reason");
        json_object *cl = ctl_jget(s, "status.cleanup");
        _cleanup_free_ char *pkg = ctl_text_sanitize(ctl_jstr(s, "package") ?: "?");
        const char *channel = ctl_jstr(s, "channel") ?: ctl_jstr(own_bundle(s), "channel");
        _cleanup_free_ char *ch = ctl_text_sanitize(channel ?: "-");
        _cleanup_free_ char *phase = ctl_text_sanitize(ctl_jstr(s, "phase") ?: "?");
        _cleanup_free_ char *why = ctl_text_sanitize(reason ?: "");
        printf("package: %s\nchannel: %s\nphase: %s%s%s%s\n", pkg ?: "?", ch ?: "?", phase ?: "?", reason ? " (" : "",
               reason ? why ?: "?" : "", reason ? ")" : "");
        printf("cleanup: %s\n", jbool(s, "cleanup.enabled") ? "enabled" : "disabled");
        if (ctl_jstr(s, "message"))
                print_wrapped(stdout, c, false, "message: ", ctl_jstr(s, "message"), 4);
        int rc = ctl_jlen(ctl_jget(s, "bundles")) ? print_bundles(c, ctl_jget(s, "bundles")) : CTL_EXIT_OK;
        if (!cl)
                return rc;
        printf("pending deletion: %s of %s\n", ctl_jstr(cl, "pending_count") ?: "?", ctl_jstr(cl, "total") ?: "?");
        int k = print_pending(c, cl);
        print_cleanup_hosts(c, cl);
        return rc ?: k;
}

int ctl_operator_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 2, "CLUSTER and PKG", &rc))
                return rc;
        const char *cluster = argv[optind], *pkg = argv[optind + 1];
        struct ctl_reply r;
        if (get_subscriptions(c, cluster, &r) < 0)
                return CTL_EXIT_FAIL;
        json_object *items = ctl_jget(r.json, "items"), *s = NULL;
        for (size_t i = 0; !s && i < ctl_jlen(items); i++) {
                const char *p = ctl_jstr(json_object_array_get_idx(items, i), "package");
                if (p && strcmp(p, pkg) == 0)
                        s = json_object_array_get_idx(items, i);
        }
        _cleanup_free_ char *name = ctl_text_sanitize(cluster), *p = ctl_text_sanitize(pkg);
        if (!s) {
                rc = ctl_fail("cluster %s has no subscription to %s", name ?: "?", p ?: "?");
                c->fail_exit = CTL_EXIT_NOT_FOUND;
        }
        else
                rc = c->output == CTL_OUT_JSON ? ctl_print_json(s) : print_subscription(c, s);
        ctl_reply_free(&r);
        return rc;
}

/* ---- set ------------------------------------------------------------------------------------ */

/* What `operator set` prints after: the subscription's cleanup setting and
 * what it means now, or that turning it off aborted a cleanup and the
 * operator is gone. */
static int print_set(struct ctl *c, const char *cluster, json_object *s) {
        if (jbool(s, "uninstalled"))
                return print_aborted(c, cluster, s);
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(s);
        _cleanup_free_ char *name = ctl_text_sanitize(cluster);
        _cleanup_free_ char *pkg = ctl_text_sanitize(ctl_jstr(s, "package") ?: "?");
        json_object *v = ctl_jget(s, "cleanup.enabled");
        const char *phase = ctl_jstr(s, "phase") ?: "?";
        if (!v)
                return ctl_fail("the server's answer has no cleanup setting for %s", pkg ?: "?");
        bool on = json_object_get_boolean(v);
        printf("cluster %s, %s (%s): cleanup %s\n", name ?: "?", pkg ?: "?", phase, on ? "enabled" : "disabled");
        print_cleanup_meaning(c, "", pkg, on);
        return CTL_EXIT_OK;
}

int ctl_operator_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "cleanup", required_argument, NULL, OPT_CLEANUP },
                CTL_GLOBAL_OPTIONS,
                { 0 },
        };
        _cleanup_json_ json_object *body = json_object_new_object();
        if (!body)
                return ctl_fail("out of memory");
        optind = 0;
        int rc = 0;
        for (int k; rc == 0 && (k = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END;)
                rc = k == CTL_OPT_HELP ? -1 : k == OPT_CLEANUP ? cleanup_option(cmd, optarg, true, body)
                                                               : CTL_EXIT_USAGE; /* printed */
        if (rc)
                return rc < 0 ? CTL_EXIT_OK : rc;
        if ((rc = ctl_want_args(cmd, argc, argv, 2, "CLUSTER and PKG")))
                return rc;
        if (!ctl_jget(body, "cleanup"))
                return ctl_usage_error(cmd, "nothing to set: give --cleanup=true or --cleanup=false");
        const char *cluster = argv[optind], *pkg = argv[optind + 1];
        if (!*pkg)
                return ctl_usage_error(cmd, "PKG is empty");
        _cleanup_free_ char *path = cluster_path(c, cluster, PATH_SUBSCRIPTION, pkg);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        rc = ctl_call_object(c, "PATCH", path, body, &r) < 0 ? CTL_EXIT_FAIL : print_set(c, cluster, r.json);
        ctl_reply_free(&r);
        return rc;
}

/* ---- upgrade -------------------------------------------------------------------------------- */

/* CLUSTER, then PKG... or --all (not both): false when so, else true
 * with the usage error printed and *rc its exit status. */
static bool upgrade_usage(const struct ctl_cmd *cmd, int argc, bool all, int *rc) {
        if (optind >= argc)
                *rc = ctl_usage_error(cmd, "CLUSTER is missing");
        else if (all == (optind + 1 < argc))
                *rc = ctl_usage_error(cmd, "name the packages to upgrade, or give --all (not both)");
        else if (argc - optind - 1 > RESOLVE_MAX_SUBSCRIPTIONS)
                *rc = ctl_usage_error(cmd, "at most %d packages", RESOLVE_MAX_SUBSCRIPTIONS);
        return *rc != 0;
}

/* {packages?, all?, prune?} from the options and PKG arguments; NULL with
 * *rc the exit status. */
static json_object *upgrade_body(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, int *rc) {
        static const struct option opts[] = {
                { "all", no_argument, NULL, OPT_ALL },
                { "prune", no_argument, NULL, OPT_PRUNE },
                CTL_GLOBAL_OPTIONS,
                { 0 },
        };
        bool all = false, prune = false;
        optind = 0;
        *rc = 0;
        for (int k; *rc == 0 && (k = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END;) {
                if (k == CTL_OPT_HELP || k == CTL_OPT_BAD)
                        *rc = k == CTL_OPT_HELP ? -1 : CTL_EXIT_USAGE;
                else
                        *(k == OPT_ALL ? &all : &prune) = true;
        }
        if (*rc < 0) {
                *rc = CTL_EXIT_OK; /* after --help */
                return NULL;
        }
        if (*rc || upgrade_usage(cmd, argc, all, rc))
                return NULL;
        _cleanup_json_ json_object *body = json_object_new_object(), *pkgs = json_object_new_array();
        if (!body || !pkgs) {
                *rc = ctl_fail("out of memory");
                return NULL;
        }
        for (int i = optind + 1; i < argc; i++)
                json_object_array_add(pkgs, json_object_new_string(argv[i]));
        if (all)
                json_object_object_add(body, "all", json_object_new_boolean(true));
        else
                json_object_object_add(body, "packages", TAKE_PTR(pkgs));
        if (prune)
                json_object_object_add(body, "prune", json_object_new_boolean(true));
        return TAKE_PTR(body);
}

/* A refused upgrade (409: it does not resolve): the problems of the plan
 * when the answer has one, else the server's explanation, wrapped. */
static int print_refused(struct ctl *c, const struct ctl_reply *r) {
        json_object *plan = ctl_jget(r->json, "plan");
        if (c->output == CTL_OUT_JSON && r->json)
                ctl_print_json(r->json);
        else if (ctl_jlen(ctl_jget(plan, "problems")))
                print_problems(c, ctl_jget(plan, "problems"));
        else
                print_wrapped(stderr, c, false, "musterctl: the operators cannot be upgraded (HTTP 409): ",
                              ctl_jstr(r->json, "reason") ?: r->body, 4);
        return CTL_EXIT_FAIL;
}

/* The plan, then the kinds the new bundles no longer own: their operands
 * stay. */
static int print_upgraded(struct ctl *c, json_object *reply, const char *done) {
        int rc = print_plan_reply(c, reply, done);
        json_object *kinds = ctl_jget(reply, "kinds_no_longer_owned");
        for (size_t i = 0; c->output != CTL_OUT_JSON && i < ctl_jlen(kinds); i++) {
                const char *kind = json_object_get_string(json_object_array_get_idx(kinds, i));
                _cleanup_free_ char *k = ctl_text_sanitize(kind ?: "?");
                printf("No operator owns %s any more: its operands are kept (an upgrade never deletes them)\n",
                       k ?: "?");
        }
        return rc;
}

int ctl_operator_upgrade(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        _cleanup_json_ json_object *body = upgrade_body(c, cmd, argc, argv, &rc);
        if (!body)
                return rc;
        const char *cluster = argv[optind];
        _cleanup_free_ char *path = cluster_path(c, cluster, PATH_UPGRADE, NULL);
        _cleanup_free_ char *name = ctl_text_sanitize(cluster), *done = NULL;
        if (!path)
                return CTL_EXIT_FAIL;
        if (asprintf(&done, "cluster %s: operators upgraded", name ?: "?") < 0) {
                done = NULL;
                return ctl_fail("out of memory");
        }
        struct ctl_reply r;
        int k = ctl_request(c, "POST", path, body, &r);
        if (k == 0 && r.status == 409)
                rc = print_refused(c, &r);
        else if (ctl_report(c, "POST", path, k, &r) < 0)
                rc = CTL_EXIT_FAIL;
        else if (!r.json || !json_object_is_type(r.json, json_type_object))
                rc = ctl_fail("POST %s: the reply is not a JSON object (HTTP %ld)", path, r.status);
        else
                rc = print_upgraded(c, r.json, done);
        ctl_reply_free(&r);
        return rc;
}
