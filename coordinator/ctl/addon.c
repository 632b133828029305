/* musterctl addon: add-on proxies, which select clusters by their labels and
 * install a Helm chart on each (DESIGN §10), and the per-cluster releases
 * they keep. create and set send only what was given; the server renders
 * the values, reconciles and rolls out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"

#define CTL_MAX_VALUES_TEMPLATE (1024 * 1024) /* what --values-file reads at most */
#define CTL_MAX_ROLLOUT_NUMBER 2147483647L /* musterd says which smaller limits apply */

enum {
        O_CHART_REPO = CTL_OPT_FIRST_LOCAL,
        O_CHART,
        O_VERSION,
        O_NAMESPACE,
        O_RELEASE_NAME,
        O_VALUES_FILE,
        O_VALUES_TEMPLATE,
        O_SELECTOR,
        O_LABEL,
        O_STRATEGY,
        O_MAX_CONCURRENT,
        O_MAX_FAILURES,
        O_SOAK,
        O_TIMEOUT,
        O_PROXY,
        O_CLUSTER,
};

/* The options create and set share. */
#define ADDON_OPTIONS                                                          \
        { "chart-repo", required_argument, NULL, O_CHART_REPO },               \
        { "chart", required_argument, NULL, O_CHART },                         \
        { "version", required_argument, NULL, O_VERSION },                     \
        { "values-file", required_argument, NULL, O_VALUES_FILE },             \
        { "values-template", required_argument, NULL, O_VALUES_TEMPLATE },     \
        { "selector", required_argument, NULL, O_SELECTOR },                   \
        { "label", required_argument, NULL, O_LABEL },                         \
        { "strategy", required_argument, NULL, O_STRATEGY },                   \
        { "max-concurrent", required_argument, NULL, O_MAX_CONCURRENT },       \
        { "max-failures", required_argument, NULL, O_MAX_FAILURES },           \
        { "soak", required_argument, NULL, O_SOAK },                           \
        { "timeout", required_argument, NULL, O_TIMEOUT }

/* ---- -l: a short option of the command's own --------------------------------- */

/* ctl_next_opt knows the short options -h and -o only; `-l k=v` and
 * `-lk=v` are handed to it as --label. The copy of argv and what it made. */
struct argvec {
        int argc;
        char **argv;
        char **made; /* asprintf'd elements, NULL-ended */
};

static void argvec_free(struct argvec *a) {
        for (size_t i = 0; a->made && a->made[i]; i++)
                free(a->made[i]);
        free(a->made);
        free(a->argv);
}

/* Whether the long option `arg` ("--name", no '=') takes its value from the
 * next element, as getopt_long matches it (a unique prefix will do). */
static bool takes_next(const char *arg, const struct option *opts) {
        const char *name = arg + 2;
        size_t n = strlen(name);
        for (const struct option *o = opts; o->name; o++)
                if (strncmp(o->name, name, n) == 0 && o->has_arg == required_argument)
                        return true;
        return false;
}

static int argvec_make(struct argvec *a, int argc, char **argv, const struct option *opts) {
        static char label[] = "--label";
        size_t nmade = 0;
        a->argc = argc;
        a->argv = calloc((size_t) argc + 1, sizeof *a->argv);
        a->made = calloc((size_t) argc + 1, sizeof *a->made);
        if (!a->argv || !a->made)
                return -ENOMEM;
        bool value = false, done = false;
        for (int i = 0; i < argc; i++) {
                char *s = argv[i];
                a->argv[i] = s;
                if (i == 0 || done || value) {
                        value = false;
                        continue;
                }
                if (strcmp(s, "--") == 0)
                        done = true;
                else if (strcmp(s, "-l") == 0)
                        a->argv[i] = label;
                else if (strncmp(s, "-l", 2) == 0) {
                        if (asprintf(&a->made[nmade], "--label=%s", s + 2) < 0) {
                                a->made[nmade] = NULL;
                                return -ENOMEM;
                        }
                        a->argv[i] = a->made[nmade++];
                } else if (strcmp(s, "-o") == 0)
                        value = true;
                else if (strncmp(s, "--", 2) == 0 && !strchr(s, '='))
                        value = takes_next(s, opts);
        }
        return 0;
}

/* ---- create and set: the request --------------------------------------------- */

struct addon_args {
        json_object *body;     /* the request's top level */
        json_object *chart;    /* chart members given */
        json_object *rollout;  /* rollout members given */
        json_object *labels;   /* -l, or NULL */
        json_object *selector; /* --selector (NULL for JSON null) */
        bool have_selector;
        const char *values_file;
};

static void addon_args_free(struct addon_args *a) {
        json_object_put(a->body);
        json_object_put(a->chart);
        json_object_put(a->rollout);
        json_object_put(a->labels);
        json_object_put(a->selector);
}

/* --selector's text: a JSON object or null, nothing after it. 0, or the
 * exit status (printed). */
static int parse_selector(const struct ctl_cmd *cmd, const char *text, struct addon_args *a) {
        _cleanup_json_tokener_ json_tokener *tok = json_tokener_new();
        if (!tok)
                return ctl_fail("out of memory");
        /* With its NUL: a bare literal (null) is complete only at the end. */
        json_object *o = json_tokener_parse_ex(tok, text, (int) strlen(text) + 1);
        bool ok = json_tokener_get_error(tok) == json_tokener_success;
        size_t end = ok ? json_tokener_get_parse_end(tok) : 0;
        if (ok && text[end + strspn(text + end, " \t\r\n")] != '\0')
                ok = false;
        if (!ok || (o && !json_object_is_type(o, json_type_object))) {
                json_object_put(o);
                return ctl_usage_error(cmd,
                                       "--selector takes a JSON object ({\"match_labels\":{...},"
                                       "\"match_expressions\":[...]}) or null, not '%s'",
                                       text);
        }
        json_object_put(a->selector);
        a->selector = o;
        a->have_selector = true;
        return 0;
}

/* -l KEY=VALUE into a->labels. */
static int add_label(const struct ctl_cmd *cmd, const char *arg, struct addon_args *a) {
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg)
                return ctl_usage_error(cmd, "-l takes KEY=VALUE, not \"%s\"", arg);
        if (!a->labels && !(a->labels = json_object_new_object()))
                return ctl_fail("out of memory");
        _cleanup_free_ char *key = strndup(arg, (size_t) (eq - arg));
        if (!key)
                return ctl_fail("out of memory");
        json_object_object_add(a->labels, key, json_object_new_string(eq + 1));
        return 0;
}

/* A number option into obj[key]. */
static int add_number(const struct ctl_cmd *cmd, const char *opt, const char *arg, long min, long max,
                      json_object *obj, const char *key) {
        long v;
        if (ctl_parse_long(arg, min, max, &v) < 0)
                return ctl_usage_error(cmd, "%s takes a whole number, at least %ld, not \"%s\"", opt, min, arg);
        json_object_object_add(obj, key, json_object_new_int64(v));
        return 0;
}

/* A text option into obj[key]; empty is a usage error. */
static int add_text(const struct ctl_cmd *cmd, const char *opt, const char *arg, json_object *obj, const char *key) {
        if (!*arg)
                return ctl_usage_error(cmd, "%s must not be empty", opt);
        json_object_object_add(obj, key, json_object_new_string(arg));
        return 0;
}

/* One option of create or set into a: 0, -1 after --help, or the exit
 * status (printed). */
static int addon_option(const struct ctl_cmd *cmd, int o, struct addon_args *a) {
        switch (o) {
        case CTL_OPT_HELP: return -1;
        case O_CHART_REPO: return add_text(cmd, "--chart-repo", optarg, a->chart, "repository");
        case O_CHART: return add_text(cmd, "--chart", optarg, a->chart, "name");
        case O_VERSION: return add_text(cmd, "--version", optarg, a->chart, "version");
        case O_NAMESPACE: return add_text(cmd, "--namespace", optarg, a->body, "namespace");
        case O_RELEASE_NAME: return add_text(cmd, "--release-name", optarg, a->body, "release_name");
        case O_VALUES_FILE:
                a->values_file = optarg;
                json_object_object_del(a->body, "values_template");
                return 0;
        case O_VALUES_TEMPLATE:
                a->values_file = NULL;
                json_object_object_add(a->body, "values_template", json_object_new_string(optarg));
                return 0;
        case O_SELECTOR: return parse_selector(cmd, optarg, a);
        case O_LABEL: return add_label(cmd, optarg, a);
        case O_STRATEGY:
                if (strcmp(optarg, "Continuous") != 0 && strcmp(optarg, "InstallOnce") != 0)
                        return ctl_usage_error(cmd, "--strategy takes Continuous or InstallOnce, not \"%s\"", optarg);
                json_object_object_add(a->body, "reconcile_strategy", json_object_new_string(optarg));
                return 0;
        case O_MAX_CONCURRENT:
                return add_number(cmd, "--max-concurrent", optarg, 0, CTL_MAX_ROLLOUT_NUMBER, a->rollout,
                                  "max_concurrent");
        case O_MAX_FAILURES:
                return add_number(cmd, "--max-failures", optarg, 0, CTL_MAX_ROLLOUT_NUMBER, a->rollout,
                                  "max_failures");
        case O_SOAK:
                return add_number(cmd, "--soak", optarg, 0, CTL_MAX_ROLLOUT_NUMBER, a->rollout, "soak_seconds");
        case O_TIMEOUT:
                return add_number(cmd, "--timeout", optarg, 1, CTL_MAX_ROLLOUT_NUMBER, a->rollout,
                                  "timeout_seconds");
        default: return CTL_EXIT_USAGE; /* CTL_OPT_BAD, printed */
        }
}

/* The options of create or set (opts) into a, then exactly one positional
 * argument (`what`). 0, -1 after --help, or the exit status (printed). */
static int addon_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv, const struct option *opts,
                         const char *what, struct addon_args *a) {
        a->body = json_object_new_object();
        a->chart = json_object_new_object();
        a->rollout = json_object_new_object();
        if (!a->body || !a->chart || !a->rollout)
                return ctl_fail("out of memory");
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                int k = addon_option(cmd, o, a);
                if (k)
                        return k;
        }
        if (a->labels && a->have_selector)
                return ctl_usage_error(cmd, "give --selector or -l, not both");
        return ctl_want_args(cmd, argc, argv, 1, what);
}

/* The members given, as the request: chart and rollout only when some of
 * theirs were given, the selector from -l or --selector, the template from
 * --values-file. 0, or CTL_EXIT_FAIL (printed). */
static int finish_body(struct addon_args *a) {
        if (json_object_object_length(a->chart) > 0)
                json_object_object_add(a->body, "chart", json_object_get(a->chart));
        if (json_object_object_length(a->rollout) > 0)
                json_object_object_add(a->body, "rollout", json_object_get(a->rollout));
        if (a->labels) {
                json_object *sel = json_object_new_object();
                if (!sel)
                        return ctl_fail("out of memory");
                json_object_object_add(sel, "match_labels", json_object_get(a->labels));
                json_object_object_add(a->body, "cluster_selector", sel);
        } else if (a->have_selector)
                json_object_object_add(a->body, "cluster_selector", json_object_get(a->selector));
        if (a->values_file)
                return ctl_add_file(a->body, "values_template", a->values_file, CTL_MAX_VALUES_TEMPLATE,
                                    "values file", CTL_FILE_AS_IS);
        return 0;
}

/* ---- printing ------------------------------------------------------------------ */

static bool jbool(json_object *o, const char *key) {
        json_object *v = ctl_jget(o, key);
        return v && json_object_get_boolean(v);
}

/* The condition of that type among status.conditions, or NULL. */
static json_object *condition(json_object *proxy, const char *type) {
        json_object *conds = ctl_jget(proxy, "status.conditions");
        for (size_t i = 0; i < ctl_jlen(conds); i++) {
                json_object *e = json_object_array_get_idx(conds, i);
                const char *t = ctl_jstr(e, "type");
                if (t && strcmp(t, type) == 0)
                        return e;
        }
        return NULL;
}

/* A selector as kubectl writes one: "env=prod, tier in (a, b), gpu, !old";
 * "every cluster" for {} and "no cluster" for null or none. malloc'd. */
static char *selector_text(json_object *sel) {
        if (!sel)
                return strdup("no cluster (null)");
        char *s = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&s, &len);
        if (!m)
                return NULL;
        const char *sep = "";
        json_object *labels = ctl_jget(sel, "match_labels");
        if (labels && json_object_is_type(labels, json_type_object)) {
                json_object_object_foreach(labels, k, v) {
                        fprintf(m, "%s%s=%s", sep, k, json_object_get_string(v) ?: "");
                        sep = ", ";
                }
        }
        json_object *exprs = ctl_jget(sel, "match_expressions");
        for (size_t i = 0; i < ctl_jlen(exprs); i++) {
                json_object *e = json_object_array_get_idx(exprs, i);
                const char *key = ctl_jstr(e, "key") ?: "?", *op = ctl_jstr(e, "operator") ?: "?";
                fputs(sep, m);
                sep = ", ";
                if (strcmp(op, "Exists") == 0)
                        fprintf(m, "%s", key);
                else if (strcmp(op, "DoesNotExist") == 0)
                        fprintf(m, "!%s", key);
                else {
                        _cleanup_free_ char *vals = ctl_join(ctl_jget(e, "values"), "");
                        fprintf(m, "%s %s (%s)", key, strcmp(op, "In") == 0 ? "in" : strcmp(op, "NotIn") == 0 ? "notin" : op,
                                vals ?: "?");
                }
        }
        if (!*sep)
                fputs("every cluster", m);
        if (fclose(m) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

/* "NAME@VERSION" of a chart, into buf. */
static const char *chart_text(json_object *o, char *buf, size_t n) {
        snprintf(buf, n, "%.120s@%.60s", ctl_jstr(o, "chart.name") ?: "?", ctl_jstr(o, "chart.version") ?: "?");
        return buf;
}

/* "NAMESPACE/NAME" of a release, into buf. */
static const char *release_text(json_object *o, char *buf, size_t n) {
        snprintf(buf, n, "%.63s/%.63s", ctl_jstr(o, "namespace") ?: "?", ctl_jstr(o, "release_name") ?: "?");
        return buf;
}

/* The conditions as a table (TYPE, STATUS, REASON, MESSAGE). */
static int print_conditions(struct ctl *c, json_object *proxy) {
        static const struct ctl_col cols[] = {
                { "CONDITION", 0, 0, 0 },
                { "STATUS", 0, 0, 0 },
                { "REASON", 0, 1, 0 },
                { "MESSAGE", CTL_COL_FLEX, 0, 20 },
                { "SINCE", CTL_COL_WIDE, 0, 0 },
        };
        json_object *conds = ctl_jget(proxy, "status.conditions");
        if (ctl_jlen(conds) == 0) {
                puts("\nConditions: none yet");
                return CTL_EXIT_OK;
        }
        struct ctl_table t;
        int r = 0;
        ctl_table_init(&t, cols, sizeof cols / sizeof *cols);
        for (size_t i = 0; i < ctl_jlen(conds) && r == 0; i++) {
                json_object *e = json_object_array_get_idx(conds, i);
                char since[32];
                const char *row[] = { ctl_jstr(e, "type"), ctl_jstr(e, "status"), ctl_jstr(e, "reason"),
                                      ctl_jstr(e, "message"),
                                      ctl_time(ctl_jstr(e, "last_transition_time"), since, sizeof since) };
                r = ctl_table_add(&t, row);
        }
        if (r < 0)
                r = ctl_fail("out of memory");
        else {
                puts("");
                r = ctl_print_table(c, &t);
        }
        ctl_table_free(&t);
        return r;
}

/* The values template as it is, line by line, each made printable. */
static void print_template(const char *tmpl) {
        if (!tmpl || !*tmpl) {
                puts("\nValues template: none");
                return;
        }
        puts("\nValues template:");
        for (const char *p = tmpl; *p;) {
                size_t n = strcspn(p, "\n");
                _cleanup_free_ char *line = strndup(p, n);
                _cleanup_free_ char *clean = line ? ctl_text_sanitize(line) : NULL;
                printf("  %s\n", clean ?: "?");
                p += n + (p[n] == '\n');
        }
}

/* A proxy as a key/value block; `details` for show: the conditions as a
 * table and the values template too. */
static int print_proxy(struct ctl *c, json_object *o, bool details) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(o);
        struct ctl_kv kv = { 0 };
        char chart[200], rel[140], w1[64], w2[64], conc[32], fails[32], soak[32], tmo[32], counts[256];
        _cleanup_free_ char *sel = selector_text(ctl_jget(o, "cluster_selector"));
        int64_t mc = ctl_jint(o, "rollout.max_concurrent", -1), mf = ctl_jint(o, "rollout.max_failures", -1);
        if (mc == 0)
                snprintf(conc, sizeof conc, "no limit");
        else
                snprintf(conc, sizeof conc, "%lld", (long long) mc);
        if (mf == 0)
                snprintf(fails, sizeof fails, "never pause");
        else
                snprintf(fails, sizeof fails, "%lld", (long long) mf);
        snprintf(soak, sizeof soak, "%llds", (long long) ctl_jint(o, "rollout.soak_seconds", 0));
        snprintf(tmo, sizeof tmo, "%llds", (long long) ctl_jint(o, "rollout.timeout_seconds", 0));
        snprintf(counts, sizeof counts,
                 "%lld selected, %lld up to date: %lld applied, %lld pending, %lld rolling, %lld failed, "
                 "%lld removing, %lld conflicts",
                 (long long) ctl_jint(o, "status.selected", 0), (long long) ctl_jint(o, "status.up_to_date", 0),
                 (long long) ctl_jint(o, "status.applied", 0), (long long) ctl_jint(o, "status.pending", 0),
                 (long long) ctl_jint(o, "status.rolling", 0), (long long) ctl_jint(o, "status.failed", 0),
                 (long long) ctl_jint(o, "status.removing", 0), (long long) ctl_jint(o, "status.conflicts", 0));
        ctl_kv_add(&kv, "Name", ctl_jstr(o, "name"), 0);
        ctl_kv_add(&kv, "ID", ctl_jstr(o, "id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Owner", ctl_jstr(o, "owner"), 0);
        ctl_kv_add(&kv, "Chart", chart_text(o, chart, sizeof chart), 0);
        ctl_kv_add(&kv, "Repository", ctl_jstr(o, "chart.repository"), CTL_KV_ID);
        ctl_kv_add(&kv, "Release", release_text(o, rel, sizeof rel), 0);
        ctl_kv_add(&kv, "Selector", sel ?: "?", 0);
        ctl_kv_add(&kv, "Strategy", ctl_jstr(o, "reconcile_strategy"), 0);
        ctl_kv_add(&kv, "Max concurrent", mc < 0 ? NULL : conc, 0);
        ctl_kv_add(&kv, "Max failures", mf < 0 ? NULL : fails, 0);
        ctl_kv_add(&kv, "Soak", soak, 0);
        ctl_kv_add(&kv, "Timeout", tmo, 0);
        ctl_kv_add(&kv, "Paused", jbool(o, "paused") ? "yes" : "no", 0);
        ctl_kv_add(&kv, "Deleting", jbool(o, "deleting") ? "yes, its releases are being removed" : NULL, 0);
        ctl_kv_add(&kv, "Generation", ctl_jstr(o, "generation"), 0);
        ctl_kv_add(&kv, "Rollback", !ctl_jget(o, "can_roll_back") ? NULL
                                    : jbool(o, "can_roll_back") ? "to the previous generation"
                                                                : "nothing to roll back to",
                   0);
        ctl_kv_add(&kv, "Clusters", counts, 0);
        ctl_kv_add(&kv, "Created", ctl_when(ctl_jstr(o, "created_at"), w1, sizeof w1), 0);
        ctl_kv_add(&kv, "Updated", ctl_when(ctl_jstr(o, "updated_at"), w2, sizeof w2), 0);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        if (r == 0 && details) {
                r = print_conditions(c, o);
                print_template(ctl_jstr(o, "values_template"));
        }
        return r;
}

/* ---- paths ------------------------------------------------------------------------ */

/* The path of PROXY (an id or a name, escaped), or of its rollout action
 * when `action` is not NULL. NULL with the reason printed. */
static char *proxy_path(const char *proxy, const char *action) {
        _cleanup_free_ char *esc = ctl_url_escape(proxy);
        char *path;
        if (!*proxy) {
                ctl_fail("an empty add-on proxy name");
                return NULL;
        }
        int k = !esc ? -1
                : action ? asprintf(&path, MUSTER_PATH_ADDON_PROXY_ACTION("%s", "%s"), esc, action)
                         : asprintf(&path, MUSTER_PATH_ADDON_PROXY("%s"), esc);
        if (k < 0) {
                ctl_fail("out of memory");
                return NULL;
        }
        return path;
}

/* ---- create and set ----------------------------------------------------------------- */

int ctl_addon_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                ADDON_OPTIONS,
                { "namespace", required_argument, NULL, O_NAMESPACE },
                { "release-name", required_argument, NULL, O_RELEASE_NAME },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        _cleanup_(argvec_free) struct argvec av = { 0 };
        _cleanup_(addon_args_free) struct addon_args a = { 0 };
        if (argvec_make(&av, argc, argv, opts) < 0)
                return ctl_fail("out of memory");
        int k = addon_options(c, cmd, av.argc, av.argv, opts, "NAME", &a);
        if (k)
                return k < 0 ? CTL_EXIT_OK : k;
        const char *name = av.argv[optind];
        if (!*name)
                return ctl_usage_error(cmd, "NAME must not be empty");
        static const struct {
                const char *key, *opt;
        } need[] = { { "repository", "--chart-repo" }, { "name", "--chart" }, { "version", "--version" } };
        for (size_t i = 0; i < sizeof need / sizeof *need; i++)
                if (!ctl_jget(a.chart, need[i].key))
                        return ctl_usage_error(cmd, "%s is required", need[i].opt);
        if (!ctl_jget(a.body, "namespace"))
                return ctl_usage_error(cmd, "--namespace is required");
        if (!a.labels && !a.have_selector)
                return ctl_usage_error(cmd, "say which clusters the proxy selects: -l KEY=VALUE or --selector JSON "
                                            "(--selector '{}' selects every cluster)");
        json_object_object_add(a.body, "name", json_object_new_string(name));
        if (finish_body(&a))
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "POST", MUSTER_PATH_ADDON_PROXIES, a.body, print_proxy, false);
}

int ctl_addon_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                ADDON_OPTIONS,
                CTL_GLOBAL_OPTIONS,
                {},
        };
        _cleanup_(argvec_free) struct argvec av = { 0 };
        _cleanup_(addon_args_free) struct addon_args a = { 0 };
        if (argvec_make(&av, argc, argv, opts) < 0)
                return ctl_fail("out of memory");
        int k = addon_options(c, cmd, av.argc, av.argv, opts, "PROXY", &a);
        if (k)
                return k < 0 ? CTL_EXIT_OK : k;
        if (json_object_object_length(a.body) == 0 && json_object_object_length(a.chart) == 0 &&
            json_object_object_length(a.rollout) == 0 && !a.labels && !a.have_selector && !a.values_file)
                return ctl_usage_error(cmd, "nothing to set: give --version, --values-file, -l, --strategy, ...");
        if (finish_body(&a))
                return CTL_EXIT_FAIL;
        _cleanup_free_ char *path = proxy_path(av.argv[optind], NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "PATCH", path, a.body, print_proxy, false);
}

/* ---- list, show, delete -------------------------------------------------------------- */

static int proxy_row(struct ctl_table *t, json_object *e) {
        char chart[200], rel[140], age[16];
        json_object *ready = condition(e, "ReleasesReady");
        _cleanup_free_ char *sel = selector_text(ctl_jget(e, "cluster_selector"));
        const char *row[] = {
                ctl_jstr(e, "name"),
                chart_text(e, chart, sizeof chart),
                ctl_jstr(e, "status.selected"),
                ctl_jstr(e, "status.applied"),
                ctl_jstr(e, "status.failed"),
                ctl_jstr(e, "reconcile_strategy"),
                ctl_jstr(ready, "status"),
                jbool(e, "paused") ? "yes" : "no",
                ctl_jstr(e, "id"),
                release_text(e, rel, sizeof rel),
                sel,
                jbool(e, "deleting") ? "yes" : "no",
                ctl_jstr(e, "owner"),
                ctl_age(ctl_jstr(e, "created_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

int ctl_addon_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "NAME", CTL_COL_FLEX, 0, 12 },
                { "CHART", CTL_COL_FLEX, 0, 16 },
                { "SELECTED", CTL_COL_RIGHT, 0, 0 },
                { "APPLIED", CTL_COL_RIGHT, 0, 0 },
                { "FAILED", CTL_COL_RIGHT, 0, 0 },
                { "STRATEGY", 0, 1, 0 },
                { "READY", 0, 0, 0 },
                { "PAUSED", 0, 0, 0 },
                { "ID", CTL_COL_WIDE | CTL_COL_ID, 0, 0 },
                { "RELEASE", CTL_COL_WIDE, 0, 0 },
                { "SELECTOR", CTL_COL_WIDE, 0, 0 },
                { "DELETING", CTL_COL_WIDE, 0, 0 },
                { "OWNER", CTL_COL_WIDE, 0, 0 },
                { "AGE", CTL_COL_WIDE, 0, 0 },
        };
        return ctl_list_all(c, cmd, argc, argv, MUSTER_PATH_ADDON_PROXIES, cols, sizeof cols / sizeof *cols,
                            proxy_row);
}

int ctl_addon_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "PROXY", &rc))
                return rc;
        _cleanup_free_ char *path = proxy_path(argv[optind], NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "GET", path, NULL, print_proxy, true);
}

int ctl_addon_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "PROXY", &rc))
                return rc;
        _cleanup_free_ char *path = proxy_path(argv[optind], NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply r;
        rc = ctl_call(c, "DELETE", path, NULL, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        if (rc == CTL_EXIT_OK) {
                _cleanup_free_ char *name = ctl_text_sanitize(argv[optind]);
                if (c->output == CTL_OUT_JSON) {
                        if (r.json)
                                rc = ctl_print_json(r.json);
                } else if (r.status == 202)
                        printf("addon proxy %s is being deleted: its releases are being removed from the "
                               "clusters\n",
                               name ?: "?");
                else
                        printf("addon proxy %s deleted\n", name ?: "?");
        }
        ctl_reply_free(&r);
        return rc;
}

/* ---- releases --------------------------------------------------------------------------- */

static int release_row(struct ctl_table *t, json_object *e) {
        char rel[140], age[16];
        const char *row[] = {
                ctl_jstr(e, "proxy"),
                ctl_jstr(e, "cluster_name") ?: ctl_jstr(e, "cluster_id"),
                release_text(e, rel, sizeof rel),
                ctl_jstr(e, "chart.version"),
                ctl_jstr(e, "revision"),
                ctl_jstr(e, "applied_revision"),
                ctl_jstr(e, "status"),
                ctl_jstr(e, "message"),
                ctl_jstr(e, "cluster_id"),
                ctl_jstr(e, "chart.name"),
                jbool(e, "conflict") ? "yes" : "no",
                ctl_jstr(e, "payload_revision"),
                ctl_age(ctl_jstr(e, "updated_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

/* Why each Failed release failed, in full after the table (its MESSAGE
 * column is wrapped, or dropped to fit). */
static void print_failures(struct ctl *c, json_object *rows) {
        bool first = true;
        for (size_t i = 0; i < ctl_jlen(rows); i++) {
                json_object *e = json_object_array_get_idx(rows, i);
                const char *status = ctl_jstr(e, "status"), *msg = ctl_jstr(e, "message");
                if (!status || strcmp(status, "Failed") != 0 || !msg || !*msg)
                        continue;
                _cleanup_free_ char *line = NULL;
                if (asprintf(&line, "%s on %s: %s", ctl_jstr(e, "proxy") ?: "?",
                             ctl_jstr(e, "cluster_name") ?: ctl_jstr(e, "cluster_id") ?: "?", msg) < 0) {
                        line = NULL;
                        continue;
                }
                _cleanup_free_ char *clean = ctl_text_sanitize(line);
                _cleanup_free_ char *text = clean ? ctl_text_wrap(clean, ctl_fmt_room(&c->fmt, 4), 4) : NULL;
                printf("%s%s\n", first ? "\n" : "", text ?: clean ?: "?");
                first = false;
        }
}

/* The releases query from --proxy (sent as given: an id or a name) and
 * --cluster (looked up: an id, a unique id prefix or a name). NULL with
 * the reason printed. */
static char *releases_path(struct ctl *c, const char *proxy, const char *cluster) {
        struct ctl_query q = { 0 };
        _cleanup_free_ char *cid = NULL;
        char *path;
        if (proxy && !*proxy) {
                ctl_fail("an empty add-on proxy name");
                return NULL;
        }
        if (cluster && !(cid = ctl_lookup_cluster(c, cluster)))
                return NULL;
        ctl_query_add(&q, "proxy", proxy);
        ctl_query_add(&q, "cluster", cid);
        if (q.overflow) {
                ctl_fail("--proxy is too long");
                return NULL;
        }
        if (asprintf(&path, MUSTER_PATH_ADDON_RELEASES "%s", q.buf) < 0) {
                ctl_fail("out of memory");
                return NULL;
        }
        return path;
}

int ctl_addon_releases(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "proxy", required_argument, NULL, O_PROXY },
                { "cluster", required_argument, NULL, O_CLUSTER },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        static const struct ctl_col cols[] = {
                { "PROXY", CTL_COL_FLEX, 0, 10 },
                { "CLUSTER", CTL_COL_FLEX, 0, 10 },
                { "RELEASE", CTL_COL_FLEX, 3, 14 },
                { "VERSION", 0, 0, 0 },
                { "REVISION", CTL_COL_RIGHT, 1, 0 },
                { "APPLIED", CTL_COL_RIGHT, 0, 0 },
                { "STATUS", 0, 0, 0 },
                { "MESSAGE", CTL_COL_FLEX, 2, 12 },
                { "CLUSTER-ID", CTL_COL_WIDE, 0, 0 },
                { "CHART", CTL_COL_WIDE, 0, 0 },
                { "CONFLICT", CTL_COL_WIDE, 0, 0 },
                { "PAYLOAD", CTL_COL_WIDE, 0, 0 },
                { "UPDATED", CTL_COL_WIDE, 0, 0 },
        };
        const char *proxy = NULL, *cluster = NULL;
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                if (o == CTL_OPT_HELP || o == CTL_OPT_BAD)
                        return o == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
                *(o == O_PROXY ? &proxy : &cluster) = optarg;
        }
        int rc = ctl_want_args(cmd, argc, argv, 0, "");
        if (rc)
                return rc;
        _cleanup_free_ char *path = releases_path(c, proxy, cluster);
        if (!path)
                return CTL_EXIT_FAIL;
        _cleanup_json_ json_object *rows = NULL;
        if (ctl_get_list(c, path, true, &rows, NULL) < 0)
                return CTL_EXIT_FAIL;
        rc = ctl_print_rows(c, rows, cols, sizeof cols / sizeof *cols, release_row);
        if (rc == 0 && c->output == CTL_OUT_TABLE)
                print_failures(c, rows);
        return rc;
}

/* ---- rollout ------------------------------------------------------------------------------ */

/* Where a proxy's rollout stands after an action: paused or not, its
 * generation, how many clusters are where, and its conditions. */
static int print_rollout(struct ctl *c, json_object *o, bool details) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(o);
        struct ctl_kv kv = { 0 };
        char chart[200], counts[256];
        snprintf(counts, sizeof counts, "%lld selected: %lld applied, %lld pending, %lld rolling, %lld failed",
                 (long long) ctl_jint(o, "status.selected", 0), (long long) ctl_jint(o, "status.applied", 0),
                 (long long) ctl_jint(o, "status.pending", 0), (long long) ctl_jint(o, "status.rolling", 0),
                 (long long) ctl_jint(o, "status.failed", 0));
        ctl_kv_add(&kv, "Name", ctl_jstr(o, "name"), 0);
        ctl_kv_add(&kv, "Chart", chart_text(o, chart, sizeof chart), 0);
        ctl_kv_add(&kv, "Rollout", jbool(o, "paused") ? "paused" : "running", 0);
        ctl_kv_add(&kv, "Generation", ctl_jstr(o, "generation"), 0);
        ctl_kv_add(&kv, "Clusters", counts, 0);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        return r ? r : print_conditions(c, o);
}

int ctl_addon_rollout(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const char *const actions[] = { "pause", "resume", "rollback" };
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 2, "pause|resume|rollback and PROXY", &rc))
                return rc;
        const char *action = argv[optind];
        size_t i = 0;
        while (i < sizeof actions / sizeof *actions && strcmp(actions[i], action) != 0)
                i++;
        if (i == sizeof actions / sizeof *actions)
                return ctl_usage_error(cmd, "the rollout action is pause, resume or rollback, not \"%s\"", action);
        _cleanup_free_ char *path = proxy_path(argv[optind + 1], actions[i]);
        if (!path)
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "POST", path, NULL, print_rollout, false);
}
