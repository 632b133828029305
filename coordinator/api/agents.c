/* What a host's agent calls: register, the heartbeat that answers the next
 * steps, and the steps' results. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "agents.h"
#include "api.h"
#include "hostactions.h"
#include "uuid.h"

void api_host_register(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        json_object *v;
        host_init(&h);
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
                goto out;
        if (P(req)->kind != PRINCIPAL_AGENT) {
                http_error(resp, 403, "hosts register with their infra-env's agent token");
                goto out;
        }
        if (!json_object_object_get_ex(req->body, "host_id", &v) || !json_object_is_type(v, json_type_string) ||
            !uuid_is_valid(json_object_get_string(v))) {
                http_error(resp, 400, "field \"host_id\" must be a UUID");
                goto out;
        }
        const char *host_id = json_object_get_string(v);
        if (P(req)->host_id[0] && strcasecmp(P(req)->host_id, host_id) != 0) {
                http_error(resp, 403, "this token belongs to another host");
                goto out;
        }
        const char *version = NULL;
        if (json_object_object_get_ex(req->body, "discovery_agent_version", &v)) {
                if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) > 128) {
                        http_error(resp, 400, "field \"discovery_agent_version\" must be a short string");
                        goto out;
                }
                version = json_object_get_string(v);
        }
        char err[512] = "";
        int64_t retry_after_s = 0;
        int r = svc_agent_register(sv, &ie, host_id, version, &h, &retry_after_s, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "host");
                if (r == -EUSERS)
                        http_header_add(resp, "Retry-After", "%lld", (long long) retry_after_s);
                goto out;
        }
        http_json(resp, r == 1 ? 201 : 200, host_to_json(&h, MODEL_JSON_NO_INVENTORY));
out:
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_instructions(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        struct steps_reply rep = { 0 };
        const char *what = "host";
        if (api_load_host_brief(sv, req, resp, HOST_OP_AGENT_POLL, &ie, &h) < 0)
                goto out;
        /* The installed system's node agent speaks with the host's own token. */
        int r = svc_agent_poll(sv, &ie, &h, P(req)->host_id[0] != '\0', &rep, &what);
        if (r == -EIO)
                http_error(resp, 500, "could not decide the host's steps");
        else if (r < 0)
                api_store_error(resp, r, what);
        else
                http_json(resp, 200, steps_reply_to_json(&rep));
        steps_reply_free(&rep);
out:
        host_free(&h);
        infra_env_free(&ie);
}

/* An inventory's JSON text: the output's own bytes, or the string it holds
 * (older agents); *text NULL and a 400 in resp when it is neither. *hold
 * (the caller's to put) keeps a decoded string alive. */
static int inventory_text(struct json_span out, struct http_response *resp, json_object **hold, const char **text,
                          size_t *len) {
        *text = NULL;
        if (out.p && out.p[0] == '{') {
                *text = out.p;
                *len = out.len;
                return 0;
        }
        if (out.p && out.p[0] == '"' && json_span_parse(out, 1, hold) == 0 &&
            json_object_is_type(*hold, json_type_string)) {
                *text = json_object_get_string(*hold);
                *len = (size_t) json_object_get_string_len(*hold);
                if (strlen(*text) == *len)
                        return 0;
                http_error(resp, 400, "the inventory text contains a NUL byte");
                return -1;
        }
        http_error(resp, 400, "an inventory result needs \"output\": the inventory document");
        return -1;
}

void api_host_step_result(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        json_object *v, *body = NULL, *output = NULL, *hold = NULL;
        /* The body walked, its "output" left as bytes: an inventory is read
         * from them without the tree of the whole document. */
        struct json_span out;
        if (api_load_host(sv, req, resp, HOST_OP_AGENT_RESULT, &ie, &h) < 0 ||
            api_body_split(req, resp, "output", &body, &out) < 0)
                goto out;
        if (!json_object_object_get_ex(body, "step_type", &v) || !json_object_is_type(v, json_type_string) ||
            step_type_from_string(json_object_get_string(v)) == _STEP_TYPE_INVALID) {
                http_error(resp, 400, "field \"step_type\" must name a step type");
                goto out;
        }
        enum step_type t = step_type_from_string(json_object_get_string(v));
        int64_t exit_code = 0;
        if (json_object_object_get_ex(body, "exit_code", &v)) {
                if (!json_object_is_type(v, json_type_int)) {
                        http_error(resp, 400, "field \"exit_code\" must be an integer");
                        goto out;
                }
                exit_code = json_object_get_int64(v);
        }
        if (out.p && !(t == STEP_INVENTORY && exit_code == 0) && json_span_parse(out, 63, &output) < 0) {
                http_error(resp, 400, "field \"output\" is not valid JSON");
                goto out;
        }
        json_object *e = NULL;
        json_object_object_get_ex(body, "error", &e);
        const char *error = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
        char err[512] = "";
        int r = 0;
        if (t == STEP_STOP_INSTALLATION) {
                /* The agent stopped (or had nothing running): no more stops. */
                json_object *st = NULL;
                r = svc_agent_stopped(sv, &h, json_object_object_get_ex(output, "stopped", &st) &&
                                                      json_object_get_boolean(st));
        } else if (t == STEP_INSTALL) {
                json_object *sid = NULL;
                json_object_object_get_ex(body, "step_id", &sid);
                api_install_result(sv, &h, json_object_is_type(sid, json_type_string) ? json_object_get_string(sid) : NULL,
                                   exit_code, output, error, resp);
                goto out;
        } else if (t == STEP_INSTALLATION_DISK_SPEED_CHECK) {
                api_disk_speed_result(sv, &h, exit_code, output, error, resp);
                goto out;
        } else if (t == STEP_LOGS_GATHER) {
                r = svc_agent_logs_result(sv, &h, exit_code, error);
        } else if (t == STEP_RECLAIM) {
                r = svc_agent_reclaim_result(sv, &h, exit_code, output, error);
        } else if (exit_code != 0) {
                svc_agent_step_failed(sv, &h, t, error);
        } else if (t == STEP_INVENTORY) {
                const char *text;
                size_t len;
                if (inventory_text(out, resp, &hold, &text, &len) < 0)
                        goto out;
                r = svc_agent_inventory(sv, &ie, &h, text, len, err, sizeof err);
        } else if (t == STEP_CONNECTIVITY_CHECK || t == STEP_NTP_SYNCHRONIZER || t == STEP_DOMAIN_RESOLUTION) {
                if (!output || !json_object_is_type(output, json_type_object)) {
                        http_error(resp, 400, "a %s result needs \"output\": an object", step_type_to_string(t));
                        goto out;
                }
                r = svc_agent_network_result(sv, &h, t, output);
        }
        if (r < 0) {
                api_svc_error(resp, r, err, t == STEP_INVENTORY ? "inventory" : t == STEP_STOP_INSTALLATION ? "host"
                                                                                                         : "step result");
                goto out;
        }
        http_json(resp, 200, json_object_new_object());
out:
        json_object_put(hold);
        json_object_put(output);
        json_object_put(body);
        host_free(&h);
        infra_env_free(&ie);
}

