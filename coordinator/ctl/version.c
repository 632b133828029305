/* `musterctl version`: this musterctl's version, then the server's as GET
 * /api/v2/version answers it (musterd's version, API, store schema and
 * features). The client's line comes first, so that it is there even when
 * musterd cannot be reached (exit 1 then). */
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "ctl.h"
#include "json-cleanup.h"
#include "protocol.h"

static const char *member_str(json_object *o, const char *key) {
        json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : "?";
}

static int member_int(json_object *o, const char *key) {
        json_object *v;
        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int(v)
                                                                                              : -1;
}

/* "sqlite, postgres, https" from the features array (at most n bytes). */
static void features_text(json_object *server, char *buf, size_t n) {
        json_object *f;
        size_t len = 0;
        buf[0] = '\0';
        if (!json_object_object_get_ex(server, "features", &f) || !json_object_is_type(f, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(f) && len < n; i++) {
                json_object *e = json_object_array_get_idx(f, i);
                if (!json_object_is_type(e, json_type_string))
                        continue;
                int k = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", json_object_get_string(e));
                if (k < 0)
                        break;
                len += (size_t) k;
        }
}

int ctl_version(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv) {
        static const struct option opts[] = { CTL_GLOBAL_OPTIONS, {} };
        int o;
        while ((o = ctl_next_opt(c, cmd, argc, argv, opts)) != CTL_OPT_END)
                return o == CTL_OPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
        int rc = ctl_want_args(cmd, argc, argv, 0, "");
        if (rc)
                return rc;
        if (c->output != CTL_OUT_JSON) {
                printf("Client:  musterctl %s (API %s)\n", MUSTER_VERSION, MUSTER_API_VERSION);
                fflush(stdout);
        }
        struct ctl_reply r;
        if (ctl_call_object(c, "GET", MUSTER_PATH_VERSION, NULL, &r) < 0) {
                ctl_reply_free(&r);
                return CTL_EXIT_FAIL;
        }
        json_object *server = r.json;
        if (c->output == CTL_OUT_JSON) {
                _cleanup_json_ json_object *out = json_object_new_object();
                json_object *client = json_object_new_object();
                if (!out || !client) {
                        json_object_put(client);
                        ctl_reply_free(&r);
                        return ctl_fail("out of memory");
                }
                json_object_object_add(client, "version", json_object_new_string(MUSTER_VERSION));
                json_object_object_add(client, "api", json_object_new_string(MUSTER_API_VERSION));
                json_object_object_add(out, "client", client);
                json_object_object_add(out, "server", json_object_get(server));
                rc = ctl_print_json(out);
        } else {
                json_object *schema = NULL;
                json_object_object_get_ex(server, "schema", &schema);
                char features[256];
                features_text(server, features, sizeof features);
                printf("Server:  %s %s (API %s, store schema %d of %d; %s)\n", member_str(server, "server"),
                       member_str(server, "version"), member_str(server, "api"),
                       schema ? member_int(schema, "store") : -1, schema ? member_int(schema, "built") : -1,
                       features);
                if (strcmp(member_str(server, "api"), MUSTER_API_VERSION) != 0)
                        fprintf(stderr, "musterctl: the server speaks API %s, this musterctl %s\n",
                                member_str(server, "api"), MUSTER_API_VERSION);
                rc = CTL_EXIT_OK;
        }
        ctl_reply_free(&r);
        return rc;
}
