/* Hosts as people see them: show, list (all, or an infra-env's), change
 * (role, hostname, installation disk), delete. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "svc/hosts.h"
#include "uuid.h"

void api_host_get(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        if (api_load_host(sv, req, resp, HOST_OP_SHOW, &ie, &h) == 0)
                http_json(resp, 200, api_host_json(sv, &h, 0));
        host_free(&h);
        infra_env_free(&ie);
}

/* GET /hosts, and GET /infra-envs/{id}/hosts with infra_env_id given. */
static void list_hosts(struct svc *sv, struct http_request *req, struct http_response *resp,
                       const char *infra_env_id) {
        struct host_filter f = { .no_inventory = true };
        struct list_page pg = { 0 };
        int64_t offset = 0;
        const char *status = http_query(req, "status");
        if (status) {
                const char *bad;
                size_t bad_len;
                if (host_status_set_parse(status, &f.status_mask, &bad, &bad_len) < 0) {
                        http_error(resp, 400, "unknown host status \"%.*s\" in status=%s", (int) bad_len, bad, status);
                        return;
                }
        }
        f.cluster_id = http_query(req, "cluster_id");
        f.infra_env_id = infra_env_id ? infra_env_id : http_query(req, "infra_env_id");
        f.host_id = http_query(req, "id");
        if ((f.cluster_id && !uuid_is_valid(f.cluster_id)) || (f.infra_env_id && !uuid_is_valid(f.infra_env_id)) ||
            (f.host_id && !uuid_is_valid(f.host_id))) {
                http_error(resp, 400, "id, cluster_id and infra_env_id must be UUIDs");
                return;
        }
        const char *unbound = http_query(req, "unbound");
        f.unbound_only = unbound && strcmp(unbound, "true") == 0;
        f.hostname_contains = http_query(req, "hostname");
        if (api_query_i64(req, resp, "min_cpu_cores", INT64_MAX, &f.min_cpu_cores) < 0 ||
            api_query_i64(req, resp, "min_memory_bytes", INT64_MAX, &f.min_memory_bytes) < 0 ||
            api_query_i64(req, resp, "min_disk_bytes", INT64_MAX, &f.min_disk_bytes) < 0 ||
            api_query_page(sv, req, resp, &pg) < 0 || api_query_i64(req, resp, "offset", UINT_MAX, &offset) < 0)
                return;
        pg.offset = (unsigned) offset;
        if (P(req)->role == ROLE_CLUSTER_CREATOR)
                f.cluster_owner = P(req)->owner;
        struct host_list l = { 0 };
        int r = svc_host_list(sv, &f, &pg, &l);
        if (r < 0)
                api_store_error(resp, r, "hosts");
        else {
                http_json(resp, 200, host_list_to_json(&l, MODEL_JSON_NO_INVENTORY));
                resp->next_after = l.next_after;
        }
        host_list_free(&l);
}

void api_hosts_list(void *app, struct http_request *req, struct http_response *resp) {
        if (api_need_admin(req, resp))
                list_hosts(api_svc(app), req, resp, NULL);
}

void api_infra_env_hosts_list(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        infra_env_init(&ie);
        if (api_need_admin(req, resp) && api_load_infra_env(sv, req, resp, req->params[0], &ie) == 0)
                list_hosts(sv, req, resp, ie.id);
        infra_env_free(&ie);
}

/* PATCH a host: role, requested_hostname, installation_disk_id. */
void api_host_patch(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h, in;
        char err[256];
        host_init(&in);
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, HOST_OP_SET, &ie, &h) < 0)
                goto out;
        if (host_from_json(req->body, &in, err, sizeof err) < 0) {
                http_error(resp, 400, "%s", err);
                goto out;
        }
        err[0] = '\0';
        int r = svc_host_update(sv, &h, &in, P(req)->owner, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "host");
                goto out;
        }
        api_reply_host(sv, resp, ie.id, in.id, 0);
out:
        host_free(&in);
        host_free(&h);
        infra_env_free(&ie);
}

void api_host_delete(void *app, struct http_request *req, struct http_response *resp) {
        struct svc *sv = api_svc(app);
        struct infra_env ie;
        struct host h;
        if (!api_need_admin(req, resp))
                return;
        if (api_load_host(sv, req, resp, HOST_OP_DELETE, &ie, &h) < 0)
                goto out;
        char err[256] = "";
        int r = svc_host_delete(sv, &h, P(req)->owner, err, sizeof err);
        if (r < 0) {
                api_svc_error(resp, r, err, "host");
                goto out;
        }
        api_no_content(resp);
out:
        host_free(&h);
        infra_env_free(&ie);
}

