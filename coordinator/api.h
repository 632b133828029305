/* What the API's handler files share (api.c, api_clusters.c): the caller's
 * principal, store errors as HTTP answers, and loading a path's resources
 * with the scope checks done. Internal to musterd. */
#pragma once
#include "auth.h"
#include "http.h"
#include "model.h"
#include "musterd.h"

#define P(req) ((const struct principal *) (req)->auth)

/* Answer a store error: 404, 409, 400, 413, 503 or 500 (logged). */
void api_store_error(struct http_response *resp, int r, const char *what);
/* A service's answer: -errno with the service's own words in err (none:
 * api_store_error's about `what`), its status from one table (-EINVAL 400,
 * -EPERM 403, -ENOENT 404, -EEXIST/-EBUSY/-ESTALE/-ENOPKG/-EDOM 409, -E2BIG
 * 413, -EAGAIN 503, -ENOSPC 507, anything else 500, logged). */
void api_svc_error(struct http_response *resp, int r, const char *err, const char *what);

/* 403 unless the caller is an administrator (any role). */
bool api_need_admin(struct http_request *req, struct http_response *resp);
/* 403 unless the caller is an infra admin. */
bool api_need_infra_admin(struct http_request *req, struct http_response *resp);

/* The infra-env `id` if the caller may use it; else answers and returns
 * -errno. ie is always freeable. */
int api_load_infra_env(struct musterd *d, struct http_request *req, struct http_response *resp, const char *id,
                       struct infra_env *ie);
/* The host of /infra-envs/{params[0]}/hosts/{params[1]}. A cluster creator
 * reaches unbound hosts and those of its own clusters. */
int api_load_host(struct musterd *d, struct http_request *req, struct http_response *resp, struct infra_env *ie,
                  struct host *h);
/* The cluster `id` if the caller may see it (agents: never). */
int api_load_cluster(struct musterd *d, struct http_request *req, struct http_response *resp, const char *id,
                     struct cluster *c);

/* The query parameter `key` as an integer in 0..max into *out (left alone
 * when absent). 0, or answers 400 and returns -EINVAL. */
int api_query_i64(struct http_request *req, struct http_response *resp, const char *key, int64_t max, int64_t *out);
/* ?limit= (at most the configured page size) and ?after= into *pg (offset 0).
 * 0, or answers 400 and returns -EINVAL. */
int api_query_page(struct musterd *d, struct http_request *req, struct http_response *resp, struct store_page *pg);

/* 200 with the host as stored now (after a change), model flags as
 * host_to_json's; or the store's error. */
void api_reply_host(struct musterd *d, struct http_response *resp, const char *infra_env_id, const char *host_id,
                    unsigned flags);

/* An answer of 204 with no body. */
void api_no_content(struct http_response *resp);

/* Cluster and binding handlers (api_clusters.c). */
void api_cluster_create(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_list(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_get(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_patch(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_delete(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_install(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_upgrade(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_reset(void *app, struct http_request *req, struct http_response *resp);
void api_cluster_cancel(void *app, struct http_request *req, struct http_response *resp);
void api_host_install(void *app, struct http_request *req, struct http_response *resp);
void api_host_rotate_token(void *app, struct http_request *req, struct http_response *resp);
void api_host_bind(void *app, struct http_request *req, struct http_response *resp);
void api_host_unbind(void *app, struct http_request *req, struct http_response *resp);

/* Releases and the signing key (api_releases.c). */
void api_release_import(void *app, struct http_request *req, struct http_response *resp);
void api_release_list(void *app, struct http_request *req, struct http_response *resp);
void api_release_get(void *app, struct http_request *req, struct http_response *resp);
void api_release_delete(void *app, struct http_request *req, struct http_response *resp);
void api_release_preview(void *app, struct http_request *req, struct http_response *resp);
void api_release_os_image(void *app, struct http_request *req, struct http_response *resp);
void api_signing_key(void *app, struct http_request *req, struct http_response *resp);

/* Installation (api_install.c): the install action, progress reports,
 * payload revisions, and the results of install steps. */
void api_host_progress(void *app, struct http_request *req, struct http_response *resp);
void api_payload_list(void *app, struct http_request *req, struct http_response *resp);
void api_payload_get(void *app, struct http_request *req, struct http_response *resp);
/* The result of an install step (mode install or apply) of host h:
 * answers resp. */
void api_install_result(struct musterd *d, struct host *h, const char *step_id, int64_t exit_code, json_object *output,
                        const char *error, struct http_response *resp);
/* The result of a host's installation-disk-speed-check: kept as its step
 * result (for the disk the coordinator chose) while it is preparing, its
 * validations and its cluster's preparation follow (install.h); late
 * results are ignored. Answers resp (400 for an output of the wrong shape). */
void api_disk_speed_result(struct musterd *d, struct host *h, int64_t exit_code, json_object *output,
                           const char *error, struct http_response *resp);
/* The step arguments a preparing, installing or installed host gets on a
 * poll: fills the install members of *in, installation_disk included (the
 * disk speed check's too; strings live in *c and *h). */
struct steps_input;
int api_install_steps_input(struct musterd *d, struct host *h, struct cluster *c, struct steps_input *in);
