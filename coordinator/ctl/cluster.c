/* `musterctl cluster ...`: clusters of the caller (a cluster creator sees
 * only its own; the server decides). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "labelsel.h"
#include "model.h"
#include "protocol.h"

/* "k=v, k2=v2" of a labels object, or NULL when there are none. */
static char *labels_text(json_object *l) {
        if (!l || !json_object_is_type(l, json_type_object) || json_object_object_length(l) == 0)
                return NULL;
        size_t len = 1;
        json_object_object_foreach(l, k, v) len += strlen(k) + strlen(json_object_get_string(v) ?: "") + 3;
        char *s = calloc(len, 1);
        if (!s)
                return NULL;
        json_object_object_foreach(l, k2, v2) {
                if (*s)
                        strcat(s, ", ");
                strcat(s, k2);
                strcat(s, "=");
                strcat(s, json_object_get_string(v2) ?: "");
        }
        return s;
}

static int print_cluster(struct ctl *c, json_object *o, bool details) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(o);
        struct ctl_kv kv = { 0 };
        char w1[64], w2[64];
        json_object *ps = ctl_jget(o, "pull_secret_set");
        _cleanup_free_ char *labels = labels_text(ctl_jget(o, "labels"));
        ctl_kv_add(&kv, "ID", ctl_jstr(o, "id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Name", ctl_jstr(o, "name"), 0);
        ctl_kv_add(&kv, "Owner", ctl_jstr(o, "owner"), 0);
        ctl_kv_add(&kv, "Status", ctl_jstr(o, "status"), 0);
        ctl_kv_add(&kv, "Status info", ctl_jstr(o, "status_info"), 0);
        ctl_kv_add(&kv, "Release", ctl_jstr(o, "release_version"), 0);
        ctl_kv_add(&kv, "Base domain", ctl_jstr(o, "base_dns_domain"), 0);
        ctl_kv_add(&kv, "Machine network", ctl_jstr(o, "machine_network_cidr"), 0);
        ctl_kv_add(&kv, "API VIP", ctl_jstr(o, "api_vip"), 0);
        ctl_kv_add(&kv, "Ingress VIP", ctl_jstr(o, "ingress_vip"), 0);
        ctl_kv_add(&kv, "Availability", ctl_jstr(o, "high_availability_mode"), 0);
        ctl_kv_add(&kv, "Architecture", ctl_jstr(o, "cpu_architecture"), 0);
        ctl_kv_add(&kv, "Pull secret", ps ? (json_object_get_boolean(ps) ? "set" : "not set") : NULL, 0);
        ctl_kv_add(&kv, "Labels", labels, 0);
        ctl_kv_add(&kv, "Feature set", ctl_jstr(o, "feature_set"), 0);
        ctl_capabilities_kv(&kv, o, false);
        ctl_kv_add(&kv, "Payload revision", ctl_jstr(o, "payload_revision"), 0);
        ctl_kv_add(&kv, "Created", ctl_when(ctl_jstr(o, "created_at"), w1, sizeof w1), 0);
        ctl_kv_add(&kv, "Updated", ctl_when(ctl_jstr(o, "updated_at"), w2, sizeof w2), 0);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        if (r == 0 && details)
                r = ctl_print_validations(c, ctl_jget(o, "validations"));
        return r;
}

/* Options that create and set share: the capability spec and feature set. */
enum { O_RELEASE = CTL_OPT_FIRST_LOCAL, O_DOMAIN, O_CIDR, O_API, O_INGRESS, O_SNO, O_PULL, O_LABEL, O_NAME, O_BASELINE,
       O_ENABLE, O_FEATURE_SET, O_ARCH };
#define CLUSTER_OPTIONS                                                        \
        { "release", required_argument, NULL, O_RELEASE },                     \
        { "base-domain", required_argument, NULL, O_DOMAIN },                  \
        { "machine-cidr", required_argument, NULL, O_CIDR },                   \
        { "api-vip", required_argument, NULL, O_API },                         \
        { "ingress-vip", required_argument, NULL, O_INGRESS },                 \
        { "pull-secret-file", required_argument, NULL, O_PULL },               \
        { "baseline", required_argument, NULL, O_BASELINE },                   \
        { "enable", required_argument, NULL, O_ENABLE },                       \
        { "feature-set", required_argument, NULL, O_FEATURE_SET }

struct cluster_args {
        json_object *body;      /* the request */
        json_object *labels;
        json_object *enable;    /* --enable names, or NULL when not given */
        const char *baseline;   /* --baseline, or NULL */
        const char *pull;
        bool sno;
};

static void cluster_args_free(struct cluster_args *a) {
        json_object_put(a->body);
        json_object_put(a->labels);
        json_object_put(a->enable);
}

/* One option of create or set into a; 0, or the exit status (printed). */
static int cluster_option(const struct ctl_cmd *cmd, int o, struct cluster_args *a) {
        static const char *const keys[] = {
                [O_RELEASE - O_RELEASE] = "release_version", [O_DOMAIN - O_RELEASE] = "base_dns_domain",
                [O_CIDR - O_RELEASE] = "machine_network_cidr", [O_API - O_RELEASE] = "api_vip",
                [O_INGRESS - O_RELEASE] = "ingress_vip", [O_NAME - O_RELEASE] = "name",
                [O_FEATURE_SET - O_RELEASE] = "feature_set", [O_ARCH - O_RELEASE] = "cpu_architecture",
        };
        switch (o) {
        case CTL_OPT_HELP: return -1;
        case CTL_OPT_BAD: return CTL_EXIT_USAGE;
        case O_NAME:
        case O_FEATURE_SET:
                if (!*optarg)
                        return ctl_usage_error(cmd, "--%s must not be empty", o == O_NAME ? "name" : "feature-set");
                /* fall through */
        case O_ARCH:
        case O_RELEASE:
        case O_DOMAIN:
        case O_CIDR:
        case O_API:
        case O_INGRESS:
                json_object_object_add(a->body, keys[o - O_RELEASE], json_object_new_string(optarg));
                return 0;
        case O_SNO: a->sno = true; return 0;
        case O_PULL: a->pull = optarg; return 0;
        case O_BASELINE:
                if (!*optarg)
                        return ctl_usage_error(cmd, "--baseline takes a capability set (None, v4.11, ..., vCurrent)");
                a->baseline = optarg;
                return 0;
        case O_ENABLE:
                if (!a->enable && !(a->enable = json_object_new_array()))
                        return ctl_fail("out of memory");
                return ctl_opt_names(cmd, "--enable", "capabilities", a->enable, optarg, true);
        case O_LABEL: {
                const char *eq = strchr(optarg, '=');
                if (!eq || eq == optarg)
                        return ctl_usage_error(cmd, "--label takes KEY=VALUE, not \"%s\"", optarg);
                _cleanup_free_ char *key = strndup(optarg, (size_t) (eq - optarg));
                if (!key)
                        return ctl_fail("out of memory");
                json_object_object_add(a->labels, key, json_object_new_string(eq + 1));
                return 0;
        }
        default: return CTL_EXIT_USAGE;
        }
}

/* The options of create or set (opts) into a, whose body and labels it
 * allocates, and the one argument (`arg` names it): 0, -1 after --help, or
 * the exit status (printed). */
static int cluster_options(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv,
                           const struct option *opts, const char *arg, struct cluster_args *a) {
        int o;
        a->body = json_object_new_object();
        a->labels = json_object_new_object();
        if (!a->body || !a->labels)
                return ctl_fail("out of memory");
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                int k = cluster_option(cmd, o, a);
                if (k)
                        return k;
        }
        return ctl_want_args(cmd, argc, argv, 1, arg) ? CTL_EXIT_USAGE : 0;
}

/* body.capabilities.spec from the options; `current` (the cluster's spec,
 * or NULL) fills in what was not given. */
static int add_cap_spec(struct cluster_args *a, json_object *current) {
        if (!a->baseline && !a->enable)
                return 0;
        json_object *spec = json_object_new_object(), *caps = json_object_new_object();
        if (!spec || !caps) {
                json_object_put(spec);
                json_object_put(caps);
                return ctl_fail("out of memory");
        }
        json_object *base = a->baseline ? json_object_new_string(a->baseline)
                                        : json_object_get(ctl_jget(current, "baseline_capability_set"));
        json_object *add = a->enable ? json_object_get(a->enable)
                                     : json_object_get(ctl_jget(current, "additional_enabled_capabilities"));
        json_object_object_add(spec, "baseline_capability_set", base);
        json_object_object_add(spec, "additional_enabled_capabilities", add ?: json_object_new_array());
        json_object_object_add(caps, "spec", spec);
        json_object_object_add(a->body, "capabilities", caps);
        return 0;
}

static int finish_body(struct cluster_args *a) {
        if (a->sno)
                json_object_object_add(a->body, "high_availability_mode", json_object_new_string("None"));
        if (json_object_object_length(a->labels) > 0)
                json_object_object_add(a->body, "labels", json_object_get(a->labels));
        if (a->pull && ctl_add_file(a->body, "pull_secret", a->pull, MODEL_MAX_SECRET, "pull secret", CTL_FILE_VALUE))
                return CTL_EXIT_FAIL;
        return 0;
}

int ctl_cluster_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                CLUSTER_OPTIONS,
                { "single-node", no_argument, NULL, O_SNO },
                { "cpu-architecture", required_argument, NULL, O_ARCH },
                { "label", required_argument, NULL, O_LABEL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        _cleanup_(cluster_args_free) struct cluster_args a = { 0 };
        int o = cluster_options(c, cmd, argc, argv, opts, "NAME", &a);
        if (o)
                return o < 0 ? CTL_EXIT_OK : o;
        if (!*argv[optind])
                return ctl_usage_error(cmd, "NAME must not be empty");
        json_object_object_add(a.body, "name", json_object_new_string(argv[optind]));
        if (add_cap_spec(&a, NULL) || finish_body(&a))
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "POST", MUSTER_PATH_CLUSTERS, a.body, print_cluster, false);
}

int ctl_cluster_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                CLUSTER_OPTIONS,
                { "name", required_argument, NULL, O_NAME },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        _cleanup_(cluster_args_free) struct cluster_args a = { 0 };
        int o = cluster_options(c, cmd, argc, argv, opts, "CLUSTER", &a);
        if (o)
                return o < 0 ? CTL_EXIT_OK : o;
        if (json_object_object_length(a.body) == 0 && !a.baseline && !a.enable && !a.pull)
                return ctl_usage_error(cmd, "nothing to set: give --release, --baseline, --enable, --name, ...");
        _cleanup_free_ char *path = ctl_cluster_path(c, argv[optind], "", NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        /* The API takes the spec whole: what was not given stays as it is. */
        struct ctl_reply cur = { 0 };
        if ((!a.baseline || !a.enable) && (a.baseline || a.enable) &&
            ctl_call_object(c, "GET", path, NULL, &cur) < 0) {
                ctl_reply_free(&cur);
                return CTL_EXIT_FAIL;
        }
        int k = add_cap_spec(&a, ctl_jget(cur.json, "capabilities.spec"));
        ctl_reply_free(&cur);
        if (k || finish_body(&a))
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "PATCH", path, a.body, print_cluster, false);
}

static int cluster_row(struct ctl_table *t, json_object *e) {
        char created[32], age[16];
        _cleanup_free_ char *labels = labels_text(ctl_jget(e, "labels"));
        const char *row[] = {
                ctl_jstr(e, "id"), ctl_jstr(e, "name"), ctl_jstr(e, "status"), ctl_jstr(e, "release_version"),
                ctl_jstr(e, "base_dns_domain"), ctl_jstr(e, "high_availability_mode"), ctl_jstr(e, "owner"),
                ctl_jstr(e, "api_vip"), ctl_jstr(e, "ingress_vip"), ctl_jstr(e, "machine_network_cidr"), labels,
                ctl_time(ctl_jstr(e, "created_at"), created, sizeof created),
                ctl_age(ctl_jstr(e, "created_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

int ctl_cluster_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "ID", CTL_COL_ID, 0, 0 },
                { "NAME", CTL_COL_FLEX, 0, 12 },
                { "STATUS", CTL_COL_FLEX, 0, 12 },
                { "RELEASE", 0, 3, 0 },
                { "BASE-DOMAIN", CTL_COL_FLEX, 2, 12 },
                { "HA", 0, 4, 0 },
                { "OWNER", CTL_COL_FLEX, 5, 8 },
                { "API-VIP", CTL_COL_WIDE, 0, 0 },
                { "INGRESS-VIP", CTL_COL_WIDE, 0, 0 },
                { "MACHINE-CIDR", CTL_COL_WIDE, 0, 0 },
                { "LABELS", CTL_COL_WIDE, 0, 0 },
                { "CREATED", CTL_COL_WIDE, 0, 0 },
                { "AGE", 0, 1, 0 },
        };
        static const struct option opts[] = {
                { "selector", required_argument, NULL, 'l' },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *selector = NULL;
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, opts, &selector, 0, "", &rc))
                return rc;
        /* Checked here as musterd checks it, so a typo is a usage error. */
        struct labelsel *sel = NULL;
        char why[512];
        int k = selector ? labelsel_parse_text(selector, &sel, why, sizeof why) : 0;
        labelsel_free(sel);
        if (k == -ENOMEM)
                return ctl_fail("out of memory");
        if (k < 0)
                return ctl_usage_error(cmd, "-l %s: %s", selector, why);
        struct ctl_query q = { 0 };
        ctl_query_add(&q, "selector", selector);
        _cleanup_free_ char *path = NULL;
        if (q.overflow)
                return ctl_usage_error(cmd, "the selector is too long");
        if (asprintf(&path, MUSTER_PATH_CLUSTERS "%s", q.buf) < 0) {
                path = NULL;
                return ctl_fail("out of memory");
        }
        _cleanup_json_ json_object *rows = NULL;
        if (ctl_get_list(c, path, true, &rows, NULL) < 0)
                return CTL_EXIT_FAIL;
        return ctl_print_rows(c, rows, cols, sizeof cols / sizeof *cols, cluster_row);
}

static const struct ctl_kind cluster_kind = {
        .name = "cluster", .arg = "CLUSTER", .path = MUSTER_PATH_CLUSTERS, .lookup = ctl_lookup_cluster, .print = print_cluster,
};

int ctl_cluster_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return ctl_show_one(c, cmd, argc, argv, &cluster_kind);
}

int ctl_cluster_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return ctl_delete_one(c, cmd, argc, argv, &cluster_kind);
}

/* ---- label ----------------------------------------------------------------------- */

/* KEY=VALUE sets, KEY- removes: applied to `labels` in the order given.
 * 0, or the usage error's exit status. */
static int apply_label(const struct ctl_cmd *cmd, json_object *labels, const char *arg) {
        const char *eq = strchr(arg, '=');
        size_t n = strlen(arg);
        if (eq && eq != arg) {
                _cleanup_free_ char *key = strndup(arg, (size_t) (eq - arg));
                if (!key)
                        return ctl_fail("out of memory");
                json_object_object_add(labels, key, json_object_new_string(eq + 1));
                return 0;
        }
        if (!eq && n > 1 && arg[n - 1] == '-') {
                _cleanup_free_ char *key = strndup(arg, n - 1);
                if (!key)
                        return ctl_fail("out of memory");
                json_object_object_del(labels, key);
                return 0;
        }
        return ctl_usage_error(cmd, "a label change is KEY=VALUE (set) or KEY- (remove), not \"%s\"", arg);
}

/* The labels a cluster has after a change: "KEY=VALUE" lines. */
static int print_labels(struct ctl *c, json_object *o, bool details) {
        if (c->output == CTL_OUT_JSON)
                return ctl_print_json(o);
        _cleanup_free_ char *name = ctl_text_sanitize(ctl_jstr(o, "name") ?: ctl_jstr(o, "id") ?: "?");
        json_object *l = ctl_jget(o, "labels");
        if (!l || !json_object_is_type(l, json_type_object) || json_object_object_length(l) == 0) {
                printf("cluster %s has no labels\n", name ?: "?");
                return CTL_EXIT_OK;
        }
        json_object_object_foreach(l, k, v) {
                _cleanup_free_ char *key = ctl_text_sanitize(k), *val = ctl_text_sanitize(json_object_get_string(v));
                printf("%s=%s\n", key ?: "?", val ?: "?");
        }
        return CTL_EXIT_OK;
}

int ctl_cluster_label(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = { CTL_GLOBAL_OPTIONS, {} };
        /* Global options only: ctl_next_opt applies those itself, so what
         * comes back is --help or a usage error. */
        int o = ctl_next_opt(c, cmd, argc, argv, opts);
        if (o != CTL_OPT_END)
                return o == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
        if (optind >= argc)
                return ctl_usage_error(cmd, "CLUSTER is missing");
        if (optind + 1 >= argc)
                return ctl_usage_error(cmd, "give at least one KEY=VALUE or KEY-");
        /* Every change is checked before anything is asked of the server. */
        _cleanup_json_ json_object *labels = json_object_new_object();
        if (!labels)
                return ctl_fail("out of memory");
        for (int i = optind + 1; i < argc; i++) {
                int k = apply_label(cmd, labels, argv[i]);
                if (k)
                        return k;
        }
        _cleanup_free_ char *path = ctl_cluster_path(c, argv[optind], "", NULL);
        if (!path)
                return CTL_EXIT_FAIL;
        struct ctl_reply cur;
        if (ctl_call_object(c, "GET", path, NULL, &cur) < 0) {
                ctl_reply_free(&cur);
                return CTL_EXIT_FAIL;
        }
        /* The API takes the labels whole: the cluster's, then the changes. */
        json_object *have = ctl_jget(cur.json, "labels");
        json_object_put(labels);
        labels = json_object_new_object();
        if (labels && have && json_object_is_type(have, json_type_object)) {
                json_object_object_foreach(have, k, v) json_object_object_add(labels, k, json_object_get(v));
        }
        ctl_reply_free(&cur);
        if (!labels)
                return ctl_fail("out of memory");
        for (int i = optind + 1; i < argc; i++)
                apply_label(cmd, labels, argv[i]);
        _cleanup_json_ json_object *body = json_object_new_object();
        if (!body)
                return ctl_fail("out of memory");
        json_object_object_add(body, "labels", json_object_get(labels));
        return ctl_call_print(c, "PATCH", path, body, print_labels, false);
}
