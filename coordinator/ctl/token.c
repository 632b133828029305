/* `musterctl token create|list|revoke`: tokens for people (infra-admin or
 * cluster-creator, acting for an owner), which expire (--ttl) and can be
 * revoked by id. Only an infra-admin may issue, list or revoke them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "units.h"
#include "protocol.h"
#include "uuid.h"

int ctl_token_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_ROLE = CTL_OPT_FIRST_LOCAL, O_OWNER, O_TOKEN_OUT, O_TTL };
        static const struct option opts[] = {
                { "role", required_argument, NULL, O_ROLE },
                { "owner", required_argument, NULL, O_OWNER },
                { "token-out", required_argument, NULL, O_TOKEN_OUT },
                { "ttl", required_argument, NULL, O_TTL },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *role = NULL, *owner = NULL, *token_out = NULL;
        int64_t ttl = 0;
        int o;

        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END) {
                switch (o) {
                case CTL_OPT_HELP: return CTL_EXIT_OK;
                case CTL_OPT_BAD: return CTL_EXIT_USAGE;
                case O_ROLE:
                        if (strcmp(optarg, "infra-admin") != 0 && strcmp(optarg, "cluster-creator") != 0)
                                return ctl_usage_error(cmd, "--role takes infra-admin or cluster-creator, not \"%s\"",
                                                       optarg);
                        role = optarg;
                        break;
                case O_OWNER: owner = optarg; break;
                case O_TOKEN_OUT: token_out = optarg; break;
                case O_TTL:
                        if (units_parse_duration_s(optarg, &ttl) < 0 || ttl < 1)
                                return ctl_usage_error(cmd, "--ttl takes a duration such as 90d, 12h or 1y, not \"%s\"",
                                                       optarg);
                        break;
                default: return CTL_EXIT_USAGE;
                }
        }
        if (ctl_want_args(cmd, argc, argv, 0, ""))
                return CTL_EXIT_USAGE;
        if (!role || !owner)
                return ctl_usage_error(cmd, "--role and --owner are required");
        if (!*owner)
                return ctl_usage_error(cmd, "--owner must not be empty");
        json_object *body = json_object_new_object();
        if (!body)
                return ctl_fail("out of memory");
        json_object_object_add(body, "role", json_object_new_string(role));
        json_object_object_add(body, "owner", json_object_new_string(owner));
        if (ttl > 0)
                json_object_object_add(body, "ttl_seconds", json_object_new_int64(ttl));
        struct ctl_reply r;
        int rc = ctl_call_object(c, "POST", MUSTER_PATH_TOKENS, body, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        json_object_put(body);
        const char *token = rc == 0 ? ctl_jstr(r.json, "token") : NULL;
        if (rc == 0 && !token)
                rc = ctl_fail("the server sent no token");
        if (rc == 0 && token_out && ctl_write_secret(token_out, token) < 0)
                rc = CTL_EXIT_FAIL;
        if (rc == 0) {
                if (c->output == CTL_OUT_JSON) {
                        if (token_out)
                                json_object_object_del(r.json, "token");
                        rc = ctl_print_json(r.json);
                } else if (token_out)
                        printf("%s token %s for %s (expires %s) written to %s\n", ctl_jstr(r.json, "role") ?: role,
                               ctl_jstr(r.json, "id") ?: "?", ctl_jstr(r.json, "owner") ?: owner,
                               ctl_jstr(r.json, "expires_at") ?: "?", token_out);
                else
                        printf("%s token %s for %s (expires %s):\n%s\n", ctl_jstr(r.json, "role") ?: role,
                               ctl_jstr(r.json, "id") ?: "?", ctl_jstr(r.json, "owner") ?: owner,
                               ctl_jstr(r.json, "expires_at") ?: "?", token);
        }
        ctl_reply_free(&r);
        return rc;
}

static int token_row(struct ctl_table *t, json_object *e) {
        char created[32], expires[32];
        const char *revoked = ctl_jstr(e, "revoked_at");
        char rbuf[32];
        const char *row[] = {
                ctl_jstr(e, "id"), ctl_jstr(e, "role"), ctl_jstr(e, "owner"),
                ctl_time(ctl_jstr(e, "created_at"), created, sizeof created),
                ctl_time(ctl_jstr(e, "expires_at"), expires, sizeof expires),
                revoked ? ctl_time(revoked, rbuf, sizeof rbuf) : "-",
        };
        return ctl_table_add(t, row);
}

int ctl_token_list(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct ctl_col cols[] = {
                { "ID", CTL_COL_ID, 0, 0 },
                { "ROLE", 0, 0, 0 },
                { "OWNER", CTL_COL_FLEX, 0, 8 },
                { "CREATED", CTL_COL_WIDE, 0, 0 },
                { "EXPIRES", 0, 0, 19 },
                { "REVOKED", 0, 1, 0 },
        };
        return ctl_list_all(c, cmd, argc, argv, MUSTER_PATH_TOKENS, cols, sizeof cols / sizeof *cols, token_row);
}

/* The full id of the one token whose id starts with `arg` (as the table
 * shows it), or NULL (told). */
static char *lookup_id(struct ctl *c, const char *arg) {
        if (uuid_is_valid(arg))
                return strdup(arg);
        json_object *rows = NULL;
        if (ctl_get_list(c, MUSTER_PATH_TOKENS, true, &rows, NULL) < 0)
                return NULL;
        const char *found = NULL;
        size_t n = 0, len = strlen(arg);
        for (size_t i = 0; len > 0 && i < json_object_array_length(rows); i++) {
                const char *id = ctl_jstr(json_object_array_get_idx(rows, i), "id");
                if (id && strncasecmp(id, arg, len) == 0) {
                        found = id;
                        n++;
                }
        }
        char *out = n == 1 ? strdup(found) : NULL;
        json_object_put(rows);
        if (n == 0) {
                ctl_fail("no token has an id starting with \"%s\" (musterctl token list)", arg);
                c->fail_exit = CTL_EXIT_NOT_FOUND;
        }
        else if (n > 1)
                ctl_fail("%zu tokens have an id starting with \"%s\"; give more of it", n, arg);
        return out;
}

int ctl_token_revoke(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        int rc;
        if (!ctl_plain_args(c, cmd, argc, argv, NULL, NULL, 1, "ID", &rc))
                return rc;
        char *id = lookup_id(c, argv[optind]);
        if (!id)
                return CTL_EXIT_FAIL;
        char *path = NULL;
        if (asprintf(&path, MUSTER_PATH_TOKEN("%s") MUSTER_ACTION_REVOKE, id) < 0) {
                free(id);
                return ctl_fail("out of memory");
        }
        struct ctl_reply r;
        rc = ctl_call_object(c, "POST", path, NULL, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
        free(path);
        if (rc == CTL_EXIT_OK) {
                if (c->output == CTL_OUT_JSON)
                        rc = ctl_print_json(r.json);
                else
                        printf("token %s of %s (%s) revoked at %s\n", id, ctl_jstr(r.json, "owner") ?: "?",
                               ctl_jstr(r.json, "role") ?: "?", ctl_jstr(r.json, "revoked_at") ?: "?");
        }
        ctl_reply_free(&r);
        free(id);
        return rc;
}
