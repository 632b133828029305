/* What a host's agent calls: register, the heartbeat that answers the next
 * steps, and the steps' results. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "svc/agents.h"
#include "api/api.h"
#include "svc/pending.h"
#include "uuid.h"

void api_host_register(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        char why[256] = "";
        struct jctx c = { why, sizeof why, 0 };
        host_init(&h);
        if (api_load_infra_env(sv, req, resp, req->params[0], &ie) < 0)
                goto out;
        if (P(req)->kind != PRINCIPAL_AGENT) {
                http_error(resp, 403, "hosts register with their infra-env's agent token");
                goto out;
        }
        const char *host_id = jget_cstr(req->body, "host_id", SIZE_MAX, &c);
        if (!host_id || !uuid_is_valid(host_id))
                jrefuse(&c, "field \"host_id\" must be a UUID");
        if (!api_read_ok(resp, &c))
                goto out;
        if (P(req)->host_id[0] && strcasecmp(P(req)->host_id, host_id) != 0) {
                http_error(resp, 403, "this token belongs to another host");
                goto out;
        }
        const char *version = jget_cstr(req->body, "discovery_agent_version", 128, &c);
        if (c.r < 0 || (!version && jhas(req->body, "discovery_agent_version")))
                jrefuse(&c, "field \"discovery_agent_version\" must be a short string");
        if (!api_read_ok(resp, &c))
                goto out;
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
        if (r < 0)
                api_svc_error(resp, r, r == -EIO ? "could not decide the host's steps" : NULL, what);
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
        json_object *body = NULL, *hold = NULL;
        struct agent_step_result res = { 0 };
        char why[256] = "";
        struct jctx c = { why, sizeof why, 0 }, lax = { 0 };
        /* The body walked, its "output" left as bytes: an inventory is read
         * from them without the tree of the whole document. */
        struct json_span out;
        if (api_load_host(sv, req, resp, HOST_OP_AGENT_RESULT, &ie, &h) < 0 ||
            api_body_split(req, resp, "output", &body, &out) < 0)
                goto out;
        const char *type = jget_cstr(body, "step_type", SIZE_MAX, &c);
        if (!type || (res.type = step_type_from_string(type)) == _STEP_TYPE_INVALID)
                jrefuse(&c, "field \"step_type\" must name a step type");
        if (!api_read_ok(resp, &c))
                goto out;
        if (!jget_int(body, "exit_code", INT64_MIN, INT64_MAX, &res.exit_code, &c) && jhas(body, "exit_code"))
                jrefuse(&c, "field \"exit_code\" must be an integer");
        if (!api_read_ok(resp, &c))
                goto out;
        enum step_type t = res.type;
        if (out.p && !(t == STEP_INVENTORY && res.exit_code == 0) && json_span_parse(out, 63, &res.output) < 0) {
                http_error(resp, 400, "field \"output\" is not valid JSON");
                goto out;
        }
        /* Words the agent adds, taken when they are strings. */
        res.error = jget_cstr(body, "error", SIZE_MAX, &lax);
        res.step_id = jget_cstr(body, "step_id", SIZE_MAX, &lax);
        if (res.exit_code == 0 && t == STEP_INVENTORY &&
            inventory_text(out, resp, &hold, &res.text, &res.len) < 0)
                goto out;
        if (res.exit_code == 0 &&
            (t == STEP_CONNECTIVITY_CHECK || t == STEP_NTP_SYNCHRONIZER || t == STEP_DOMAIN_RESOLUTION) &&
            !json_object_is_type(res.output, json_type_object)) {
                http_error(resp, 400, "a %s result needs \"output\": an object", step_type_to_string(t));
                goto out;
        }
        char err[512] = "";
        const char *what;
        int r = svc_agent_step_result(sv, &ie, &h, &res, err, sizeof err, &what);
        if (r < 0)
                api_svc_error(resp, r, err, what);
        else
                http_json(resp, 200, json_object_new_object());
out:
        json_object_put(hold);
        json_object_put(res.output);
        json_object_put(body);
        host_free(&h);
        infra_env_free(&ie);
}
