/* `musterctl cluster ...`: clusters of the caller (a cluster creator sees
 * only its own; the server decides). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "model.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put)

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
        ctl_kv_add(&kv, "Status info", ctl_jstr(o, "status_info"), CTL_KV_WRAP);
        ctl_kv_add(&kv, "Release", ctl_jstr(o, "release_version"), 0);
        ctl_kv_add(&kv, "Base domain", ctl_jstr(o, "base_dns_domain"), 0);
        ctl_kv_add(&kv, "Machine network", ctl_jstr(o, "machine_network_cidr"), 0);
        ctl_kv_add(&kv, "API VIP", ctl_jstr(o, "api_vip"), 0);
        ctl_kv_add(&kv, "Ingress VIP", ctl_jstr(o, "ingress_vip"), 0);
        ctl_kv_add(&kv, "Availability", ctl_jstr(o, "high_availability_mode"), 0);
        ctl_kv_add(&kv, "Pull secret", ps ? (json_object_get_boolean(ps) ? "set" : "not set") : NULL, 0);
        ctl_kv_add(&kv, "Labels", labels, CTL_KV_WRAP);
        ctl_kv_add(&kv, "Payload revision", ctl_jstr(o, "payload_revision"), 0);
        ctl_kv_add(&kv, "Created", ctl_when(ctl_jstr(o, "created_at"), w1, sizeof w1), 0);
        ctl_kv_add(&kv, "Updated", ctl_when(ctl_jstr(o, "updated_at"), w2, sizeof w2), 0);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        if (r == 0 && details)
                r = ctl_print_validations(c, ctl_jget(o, "validations"));
        return r;
}

int ctl_cluster_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_RELEASE = CTL_OPT_FIRST_LOCAL, O_DOMAIN, O_CIDR, O_API, O_INGRESS, O_SNO, O_PULL, O_LABEL };
        static const struct option opts[] = {
                { "release", required_argument, NULL, O_RELEASE },
                { "base-domain", required_argument, NULL, O_DOMAIN },
                { "machine-cidr", required_argument, NULL, O_CIDR },
                { "api-vip", required_argument, NULL, O_API },
                { "ingress-vip", required_argument, NULL, O_INGRESS },
                { "single-node", no_argument, NULL, O_SNO },
                { "pull-secret-file", required_argument, NULL, O_PULL },
                { "label", required_argument, NULL, O_LABEL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        static const char *const keys[] = {
                [O_RELEASE - O_RELEASE] = "release_version", [O_DOMAIN - O_RELEASE] = "base_dns_domain",
                [O_CIDR - O_RELEASE] = "machine_network_cidr", [O_API - O_RELEASE] = "api_vip",
                [O_INGRESS - O_RELEASE] = "ingress_vip",
        };
        _cleanup_(json_object_putp) json_object *body = json_object_new_object();
        _cleanup_(json_object_putp) json_object *labels = json_object_new_object();
        const char *pull = NULL;
        bool sno = false;
        int o;

        if (!body || !labels)
                return ctl_fail("out of memory");
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_RELEASE:
                case O_DOMAIN:
                case O_CIDR:
                case O_API:
                case O_INGRESS:
                        json_object_object_add(body, keys[o - O_RELEASE], json_object_new_string(optarg));
                        break;
                case O_SNO: sno = true; break;
                case O_PULL: pull = optarg; break;
                case O_LABEL: {
                        const char *eq = strchr(optarg, '=');
                        if (!eq || eq == optarg)
                                return ctl_usage_error(cmd, "--label takes KEY=VALUE, not \"%s\"", optarg);
                        _cleanup_free_ char *k = strndup(optarg, (size_t) (eq - optarg));
                        if (!k)
                                return ctl_fail("out of memory");
                        json_object_object_add(labels, k, json_object_new_string(eq + 1));
                        break;
                }
                default: return CTL_EXIT_USAGE;
                }
        }
        if (ctl_want_args(cmd, argc, argv, 1, "NAME"))
                return CTL_EXIT_USAGE;
        if (!*argv[optind])
                return ctl_usage_error(cmd, "NAME must not be empty");
        json_object_object_add(body, "name", json_object_new_string(argv[optind]));
        if (sno)
                json_object_object_add(body, "high_availability_mode", json_object_new_string("None"));
        if (json_object_object_length(labels) > 0)
                json_object_object_add(body, "labels", json_object_get(labels));
        if (pull && ctl_add_file(body, "pull_secret", pull, MODEL_MAX_SECRET, "pull secret"))
                return CTL_EXIT_FAIL;
        return ctl_call_print(c, "POST", "/clusters", body, print_cluster, false);
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
        return ctl_list_all(c, cmd, argc, argv, "/clusters", cols, sizeof cols / sizeof *cols, cluster_row);
}

static const struct ctl_kind cluster_kind = {
        .name = "cluster", .arg = "CLUSTER", .path = "/clusters", .resolve = ctl_resolve_cluster, .print = print_cluster,
};

int ctl_cluster_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return ctl_show_one(c, cmd, argc, argv, &cluster_kind);
}

int ctl_cluster_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return ctl_delete_one(c, cmd, argc, argv, &cluster_kind);
}
