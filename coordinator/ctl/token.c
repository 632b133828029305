/* `musterctl token create`: admin tokens for people (infra-admin or
 * cluster-creator, acting for an owner). Only an infra-admin may issue them. */
#include <stdio.h>
#include <string.h>

#include "ctl.h"

int ctl_token_create(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        enum { O_ROLE = CTL_OPT_FIRST_LOCAL, O_OWNER, O_TOKEN_OUT };
        static const struct option opts[] = {
                { "role", required_argument, NULL, O_ROLE },
                { "owner", required_argument, NULL, O_OWNER },
                { "token-out", required_argument, NULL, O_TOKEN_OUT },
                CTL_GLOBAL_OPTIONS,
                {},
        };
        const char *role = NULL, *owner = NULL, *token_out = NULL;
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
        struct ctl_reply r;
        int rc = ctl_call_object(c, "POST", "/tokens", body, &r) < 0 ? CTL_EXIT_FAIL : CTL_EXIT_OK;
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
                        printf("%s token for %s written to %s\n", ctl_jstr(r.json, "role") ?: role,
                               ctl_jstr(r.json, "owner") ?: owner, token_out);
                else
                        printf("%s token for %s:\n%s\n", ctl_jstr(r.json, "role") ?: role,
                               ctl_jstr(r.json, "owner") ?: owner, token);
        }
        ctl_reply_free(&r);
        return rc;
}
