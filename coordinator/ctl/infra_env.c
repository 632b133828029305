/* `musterctl infraenv ...`: infra-envs, the discovery environments hosts
 * boot into, and their agent tokens (shown once, or written to a private
 * file). */
#include <errno.h>
#include <sys/stat.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "staticnet.h"
#include "json-cleanup.h"
#include "model.h"
#include "protocol.h"

/* "a, b, c" of a string array, or NULL when empty. */
static char *join(json_object *a) {
        if (!a || !json_object_is_type(a, json_type_array) || json_object_array_length(a) == 0)
                return NULL;
        size_t n = json_object_array_length(a), len = 0;
        for (size_t i = 0; i < n; i++)
                len += strlen(json_object_get_string(json_object_array_get_idx(a, i)) ?: "") + 2;
        char *s = calloc(len + 1, 1);
        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (i)
                        strcat(s, ", ");
                strcat(s, json_object_get_string(json_object_array_get_idx(a, i)) ?: "");
        }
        return s;
}

/* The infra-env, then its agent token (printed, or where it was written). */
static int print_infra_env(struct ctl *c, json_object *o, const char *token_out) {
        if (c->output == CTL_OUT_JSON) {
                if (token_out)
                        json_object_object_del(o, "agent_token");
                return ctl_print_json(o);
        }
        struct ctl_kv kv = { 0 };
        char w1[64], w2[64];
        _cleanup_free_ char *ntp = join(ctl_jget(o, "ntp_sources"));
        json_object *ps = ctl_jget(o, "pull_secret_set"), *sk = ctl_jget(o, "ssh_authorized_key_set");
        ctl_kv_add(&kv, "ID", ctl_jstr(o, "id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Name", ctl_jstr(o, "name"), 0);
        ctl_kv_add(&kv, "Owner", ctl_jstr(o, "owner"), 0);
        ctl_kv_add(&kv, "Architecture", ctl_jstr(o, "cpu_architecture"), 0);
        ctl_kv_add(&kv, "Cluster", ctl_jstr(o, "cluster_id"), CTL_KV_ID);
        ctl_kv_add(&kv, "Pull secret", ps ? (json_object_get_boolean(ps) ? "set" : "not set") : NULL, 0);
        ctl_kv_add(&kv, "SSH key", sk ? (json_object_get_boolean(sk) ? "set" : "not set") : NULL, 0);
        ctl_kv_add(&kv, "NTP sources", ntp, 0);
        ctl_kv_add(&kv, "HTTP proxy", ctl_jstr(o, "proxy.http_proxy"), 0);
        ctl_kv_add(&kv, "HTTPS proxy", ctl_jstr(o, "proxy.https_proxy"), 0);
        ctl_kv_add(&kv, "No proxy", ctl_jstr(o, "proxy.no_proxy"), 0);
        json_object *sn = ctl_jget(o, "static_network");
        char hosts[32];
        snprintf(hosts, sizeof hosts, "%zu host%s", sn ? json_object_array_length(sn) : 0,
                 sn && json_object_array_length(sn) == 1 ? "" : "s");
        ctl_kv_add(&kv, "Static network", sn && json_object_array_length(sn) ? hosts : "none (DHCP)", 0);
        ctl_kv_add(&kv, "Token generation", ctl_jstr(o, "token_generation"), 0);
        ctl_kv_add(&kv, "Created", ctl_when(ctl_jstr(o, "created_at"), w1, sizeof w1), 0);
        ctl_kv_add(&kv, "Updated", ctl_when(ctl_jstr(o, "updated_at"), w2, sizeof w2), 0);
        int r = ctl_print_kv(c, &kv);
        ctl_kv_free(&kv);
        const char *token = ctl_jstr(o, "agent_token");
        if (r == 0 && token) {
                if (token_out)
                        printf("\nAgent token written to %s\n", token_out);
                else
                        printf("\nAgent token (for the discovery ISO; it is not shown again):\n%s\n", token);
        }
        return r;
}

/* After a token was issued: write it where --token-out says. */
static int save_token(json_object *o, const char *token_out) {
        const char *token = ctl_jstr(o, "agent_token");
        if (!token_out)
                return 0;
        if (!token)
                return ctl_fail("the server sent no agent_token");
        if (ctl_write_secret(token_out, token) < 0) {
                fprintf(stderr, "musterctl: infra-env %s is done; run 'musterctl infraenv rotate-token %s "
                        "--token-out FILE' for a token\n", ctl_jstr(o, "id") ?: "?", ctl_jstr(o, "id") ?: "?");
                return CTL_EXIT_FAIL;
        }
        return 0;
}

/* POST path (a new infra-env, a new token), keep the token as save_token
 * does, then print the infra-env. */
static int issue_token(struct ctl *c, const char *path, json_object *body, const char *token_out) {
        struct ctl_reply r;
        if (ctl_call_object(c, "POST", path, body, &r) < 0) {
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        int rc = save_token(r.json, token_out);
        if (rc == 0)
                rc = print_infra_env(c, r.json, token_out);
        ctl_reply_free(&r);
        return rc;
}

int ctl_infra_env_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_PULL = CTL_OPT_FIRST_LOCAL, O_SSH, O_NTP, O_HTTP, O_HTTPS, O_NOPROXY, O_ARCH, O_TOKEN_OUT };
        static const struct option opts[] = {
                { "pull-secret-file", required_argument, NULL, O_PULL },
                { "ssh-key-file", required_argument, NULL, O_SSH },
                { "ntp-source", required_argument, NULL, O_NTP },
                { "http-proxy", required_argument, NULL, O_HTTP },
                { "https-proxy", required_argument, NULL, O_HTTPS },
                { "no-proxy", required_argument, NULL, O_NOPROXY },
                { "cpu-architecture", required_argument, NULL, O_ARCH },
                { "token-out", required_argument, NULL, O_TOKEN_OUT },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *pull = NULL, *ssh = NULL, *http = NULL, *https = NULL, *noproxy = NULL, *arch = NULL,
                   *token_out = NULL;
        _cleanup_json_ json_object *ntp = json_object_new_array();
        _cleanup_json_ json_object *body = json_object_new_object();
        int o;

        if (!ntp || !body)
                return ctl_fail("out of memory");
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_PULL: pull = optarg; break;
                case O_SSH: ssh = optarg; break;
                case O_NTP:
                        if (!*optarg)
                                return ctl_usage_error(cmd, "--ntp-source needs a server name");
                        json_object_array_add(ntp, json_object_new_string(optarg));
                        break;
                case O_HTTP: http = optarg; break;
                case O_HTTPS: https = optarg; break;
                case O_NOPROXY: noproxy = optarg; break;
                case O_ARCH: arch = optarg; break;
                case O_TOKEN_OUT: token_out = optarg; break;
                default: return CTL_EXIT_USAGE;
                }
        }
        if (ctl_want_args(cmd, argc, argv, 1, "NAME"))
                return CTL_EXIT_USAGE;
        const char *name = argv[optind];
        if (!*name)
                return ctl_usage_error(cmd, "NAME must not be empty");
        json_object_object_add(body, "name", json_object_new_string(name));
        if (arch)
                json_object_object_add(body, "cpu_architecture", json_object_new_string(arch));
        if (pull && ctl_add_file(body, "pull_secret", pull, MODEL_MAX_SECRET, "pull secret", CTL_FILE_VALUE))
                return CTL_EXIT_FAIL;
        if (ssh && ctl_add_file(body, "ssh_authorized_key", ssh, MODEL_MAX_SSH_KEY, "SSH key", CTL_FILE_VALUE))
                return CTL_EXIT_FAIL;
        if (json_object_array_length(ntp) > 0)
                json_object_object_add(body, "ntp_sources", json_object_get(ntp));
        if (http || https || noproxy) {
                json_object *p = json_object_new_object();
                if (http)
                        json_object_object_add(p, "http_proxy", json_object_new_string(http));
                if (https)
                        json_object_object_add(p, "https_proxy", json_object_new_string(https));
                if (noproxy)
                        json_object_object_add(p, "no_proxy", json_object_new_string(noproxy));
                json_object_object_add(body, "proxy", p);
        }
        return issue_token(c, MUSTER_PATH_INFRA_ENVS, body, token_out);
}

static int infra_env_row(struct ctl_table *t, json_object *e) {
        char created[32], age[16];
        _cleanup_free_ char *ntp = join(ctl_jget(e, "ntp_sources"));
        const char *row[] = {
                ctl_jstr(e, "id"), ctl_jstr(e, "name"), ctl_jstr(e, "cpu_architecture"), ctl_jstr(e, "owner"),
                ctl_jstr(e, "cluster_id"), ntp,
                ctl_jstr(e, "proxy.https_proxy") ?: ctl_jstr(e, "proxy.http_proxy"),
                ctl_jstr(e, "token_generation"), ctl_time(ctl_jstr(e, "created_at"), created, sizeof created),
                ctl_age(ctl_jstr(e, "created_at"), age, sizeof age),
        };
        return ctl_table_add(t, row);
}

int ctl_infra_env_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "ID", CTL_COL_ID, 0, 0 },
                { "NAME", CTL_COL_FLEX, 0, 12 },
                { "ARCH", 0, 2, 0 },
                { "OWNER", CTL_COL_FLEX, 3, 8 },
                { "CLUSTER", CTL_COL_ID | CTL_COL_WIDE, 0, 0 },
                { "NTP", CTL_COL_WIDE, 0, 0 },
                { "PROXY", CTL_COL_WIDE, 0, 0 },
                { "TOKEN-GEN", CTL_COL_WIDE | CTL_COL_RIGHT, 0, 0 },
                { "CREATED", CTL_COL_WIDE, 0, 0 },
                { "AGE", 0, 1, 0 },
        };
        return ctl_list_all(c, cmd, argc, argv, MUSTER_PATH_INFRA_ENVS, cols, sizeof cols / sizeof *cols, infra_env_row);
}

/* print_infra_env for show: an infra-env read back has no token. */
static int show_infra_env(struct ctl *c, json_object *o, bool details) {
        return print_infra_env(c, o, NULL);
}

static const struct ctl_kind infra_env_kind = {
        .name = "infra-env", .arg = "INFRA_ENV", .path = MUSTER_PATH_INFRA_ENVS, .lookup = ctl_lookup_infra_env,
        .print = show_infra_env,
};

/* DIR/MAC/FILE...: one entry per host folder, named by the host's MAC. A
 * new array, or NULL after saying why. */
static json_object *read_static_network(const char *dir) {
        _cleanup_closedir_ DIR *d = opendir(dir);
        if (!d) {
                ctl_fail("--static-network %s: %s", dir, strerror(errno));
                return NULL;
        }
        _cleanup_json_ json_object *arr = json_object_new_array();
        struct dirent *e;
        while (arr && (e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char mac[18], host[4200];
                snprintf(host, sizeof host, "%s/%s", dir, e->d_name);
                struct stat st;
                if (!staticnet_mac_canonical(e->d_name, mac) || stat(host, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        ctl_fail("--static-network: %s is not a folder named by a host's MAC address "
                                 "(52:54:00:12:34:56)", host);
                        return NULL;
                }
                _cleanup_closedir_ DIR *hd = opendir(host);
                if (!hd) {
                        ctl_fail("--static-network: %s: %s", host, strerror(errno));
                        return NULL;
                }
                json_object *files = json_object_new_object(), *entry = json_object_new_object(),
                            *macs = json_object_new_array();
                json_object_object_add(entry, "mac_addresses", macs);
                json_object_object_add(entry, "files", files);
                json_object_array_add(arr, entry);
                json_object_array_add(macs, json_object_new_string(mac));
                struct dirent *f;
                while ((f = readdir(hd))) {
                        if (f->d_name[0] == '.')
                                continue;
                        char path[4500];
                        snprintf(path, sizeof path, "%s/%s", host, f->d_name);
                        char *text = ctl_read_file(path, STATICNET_FILE_MAX, "network config");
                        if (!text)
                                return NULL;
                        json_object_object_add(files, f->d_name, json_object_new_string(text));
                        free(text);
                }
        }
        if (!arr)
                ctl_fail("out of memory");
        return json_object_get(arr);
}

int ctl_infra_env_set(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_STATIC = CTL_OPT_FIRST_LOCAL, O_NO_STATIC, O_SSH, O_NO_SSH };
        static const struct option opts[] = {
                { "static-network", required_argument, NULL, O_STATIC },
                { "no-static-network", no_argument, NULL, O_NO_STATIC },
                { "ssh-key-file", required_argument, NULL, O_SSH },
                { "no-ssh-key", no_argument, NULL, O_NO_SSH },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *static_dir = NULL, *ssh = NULL;
        bool no_static = false, no_ssh = false;
        _cleanup_json_ json_object *body = json_object_new_object();
        int o;
        if (!body)
                return ctl_fail("out of memory");
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_STATIC: static_dir = optarg; break;
                case O_NO_STATIC: no_static = true; break;
                case O_SSH: ssh = optarg; break;
                case O_NO_SSH: no_ssh = true; break;
                default: return CTL_EXIT_USAGE;
                }
        }
        if (ctl_want_args(cmd, argc, argv, 1, "INFRA_ENV"))
                return CTL_EXIT_USAGE;
        if ((static_dir && no_static) || (ssh && no_ssh))
                return ctl_usage_error(cmd, "an option and its --no- form together");
        if (!static_dir && !no_static && !ssh && !no_ssh)
                return ctl_usage_error(cmd, "nothing to set");
        if (static_dir) {
                json_object *sn = read_static_network(static_dir);
                if (!sn)
                        return CTL_EXIT_FAIL;
                json_object_object_add(body, "static_network", sn);
        }
        if (no_static)
                json_object_object_add(body, "static_network", json_object_new_array());
        if (ssh && ctl_add_file(body, "ssh_authorized_key", ssh, MODEL_MAX_SSH_KEY, "SSH key", CTL_FILE_VALUE))
                return CTL_EXIT_FAIL;
        if (no_ssh)
                json_object_object_add(body, "ssh_authorized_key", NULL);
        _cleanup_free_ char *id = ctl_lookup_infra_env(c, argv[optind]);
        _cleanup_free_ char *path = NULL;
        if (!id)
                return CTL_EXIT_FAIL;
        if (asprintf(&path, MUSTER_PATH_INFRA_ENV("%s"), id) < 0) {
                path = NULL;
                return ctl_fail("out of memory");
        }
        return ctl_call_print(c, "PATCH", path, body, show_infra_env, true);
}

int ctl_infra_env_show(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return ctl_show_one(c, cmd, argc, argv, &infra_env_kind);
}

int ctl_infra_env_delete(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        return ctl_delete_one(c, cmd, argc, argv, &infra_env_kind);
}

int ctl_infra_env_rotate_token(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = {
                { "token-out", required_argument, NULL, CTL_OPT_FIRST_LOCAL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *token_out = NULL;
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, opts, &token_out, 1, "INFRA_ENV", &rc))
                return rc;
        _cleanup_free_ char *id = ctl_lookup_infra_env(c, argv[optind]);
        _cleanup_free_ char *path = NULL;
        if (!id)
                return CTL_EXIT_FAIL;
        if (asprintf(&path, MUSTER_PATH_INFRA_ENV("%s") MUSTER_ACTION_ROTATE_TOKEN, id) < 0)
                return ctl_fail("out of memory");
        return issue_token(c, path, NULL, token_out);
}
