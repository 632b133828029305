/* What the API's handlers share: a service's or the store's -errno as an
 * HTTP answer (the words; the status is http/'s one table's), the role checks, loading a path's resources
 * with the scope checks done, query parameters, and a host's answer. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "catalog.h"
#include "cleanup.h"
#include "svc/clusters.h"
#include "svc/hosts.h"
#include "svc/infra_envs.h"
#include "log.h"
#include "uuid.h"
#include "domain/validations.h"


void api_svc_error(struct http_response *resp, int r, const char *err, const char *what) {
        if (!err || !*err) {
                api_store_error(resp, r, what);
                return;
        }
        int status = http_status_of_errno(r);
        if (status == 500)
                log_error_errno(r, "api", "%s: %m", err);
        http_error(resp, status, "%s", err);
}

void api_answer(struct http_response *resp, int r, const char *err, const char *what, int status, json_object *out) {
        if (r < 0) {
                json_object_put(out);
                api_svc_error(resp, r, err, what);
        } else
                http_json(resp, status, out);
}

/* Only words here: the status is the table's (http_status_of_errno). */
void api_store_error(struct http_response *resp, int r, const char *what) {
        int status = http_status_of_errno(r);
        switch (r) {
        case -ENOENT: http_error(resp, status, "%s not found", what); break;
        case -EEXIST: http_error(resp, status, "%s already exists", what); break;
        case -EBUSY: http_error(resp, status, "%s is still in use", what); break;
        case -ESTALE: http_error(resp, status, "%s changed state meanwhile; try again", what); break;
        case -EINVAL: http_error(resp, status, "invalid %s", what); break;
        case -E2BIG: http_error(resp, status, "%s is too large", what); break;
        case -EAGAIN: http_error(resp, status, "store is busy; try again"); break;
        case -ENOSPC:
                http_error(resp, status, "the store's file system is full: %s is not written (reads still work)", what);
                break;
        default:
                if (status == 500) {
                        log_error_errno(r, "api", "store failed on %s: %m", what);
                        http_error(resp, status, "internal error on %s", what);
                } else
                        http_error(resp, status, "%s: %s", what, strerror(-r));
        }
}

bool api_read_ok(struct http_response *resp, const struct jctx *c) {
        if (c->r >= 0)
                return true;
        api_svc_error(resp, c->r, c->err, "request");
        return false;
}

bool api_need_admin(struct http_request *req, struct http_response *resp) {
        if (auth_is_admin(P(req)))
                return true;
        http_error(resp, 403, "this call is for administrators, not agents");
        return false;
}

bool api_need_infra_admin(struct http_request *req, struct http_response *resp) {
        if (auth_is_admin(P(req)) && P(req)->role == ROLE_INFRA_ADMIN)
                return true;
        http_error(resp, 403, "this call needs the infra-admin role");
        return false;
}

/* The infra-env without the owner check (callers add the right one). */
static int get_infra_env(struct svc *sv, struct http_request *req, struct http_response *resp, const char *id,
                         struct infra_env *ie) {
        infra_env_init(ie);
        if (!uuid_is_valid(id)) {
                http_error(resp, 400, "infra-env id \"%s\" is not a UUID", id);
                return -EINVAL;
        }
        /* An agent of another infra-env is refused before anything is read. */
        if (P(req)->kind == PRINCIPAL_AGENT && strcasecmp(P(req)->infra_env_id, id) != 0) {
                http_error(resp, 403, "this token belongs to another infra-env");
                return -EPERM;
        }
        /* The agent token's check read it a moment ago: take that. */
        struct api_auth *a = req->auth;
        if (P(req)->kind == PRINCIPAL_AGENT && a->have_ie && strcasecmp(a->ie.id, id) == 0) {
                *ie = a->ie;
                infra_env_init(&a->ie);
                a->have_ie = false;
                return 0;
        }
        int r = svc_infra_env_get(sv, id, ie);
        if (r < 0)
                api_store_error(resp, r, "infra-env");
        return r;
}

int api_load_infra_env(struct svc *sv, struct http_request *req, struct http_response *resp, const char *id,
                       struct infra_env *ie) {
        int r = get_infra_env(sv, req, resp, id, ie);
        if (r < 0)
                return r;
        if (!auth_may_use_infra_env(P(req), ie->id, ie->owner)) {
                http_error(resp, 403, "infra-env %s belongs to another owner", ie->id);
                return -EPERM;
        }
        return 0;
}

int api_load_cluster(struct svc *sv, struct http_request *req, struct http_response *resp, const char *id,
                     struct cluster *c) {
        cluster_init(c);
        if (P(req)->kind != PRINCIPAL_ADMIN) {
                http_error(resp, 403, "agents have no access to clusters");
                return -EPERM;
        }
        if (!uuid_is_valid(id)) {
                http_error(resp, 400, "cluster id \"%s\" is not a UUID", id);
                return -EINVAL;
        }
        int r = svc_cluster_get(sv, id, c);
        if (r < 0) {
                api_store_error(resp, r, "cluster");
                return r;
        }
        if (!auth_may_see_cluster(P(req), c->owner)) {
                /* Not even its existence is told to another owner. */
                http_error(resp, 404, "cluster not found");
                return -EPERM;
        }
        return 0;
}

/* One host as answered to people: its JSON plus the installation disk the
 * host would install to now (validations_install_disk, the choice that
 * has-min-valid-disks approves and the install step uses):
 * "installation_disk_id" is the requested disk, else the chosen one's id;
 * "installation_disk_path" the chosen one's /dev path; both null when no disk
 * fits. */
json_object *api_host_json(struct svc *sv, struct host *h, unsigned flags) {
        json_object *o = host_to_json(h, flags);
        if (!o)
                return NULL;
        const char *id, *path;
        svc_host_install_disk(sv, h, &id, &path);
        json_object_object_add(o, "installation_disk_id", id ? json_object_new_string(id) : NULL);
        json_object_object_add(o, "installation_disk_path", path ? json_object_new_string(path) : NULL);
        return o;
}

void api_reply_host(struct svc *sv, struct http_response *resp, const char *infra_env_id, const char *host_id,
                    unsigned flags) {
        struct host h;
        int r = svc_host_get(sv, infra_env_id, host_id, &h);
        if (r < 0)
                api_store_error(resp, r, "host");
        else
                http_json(resp, 200, api_host_json(sv, &h, flags));
        host_free(&h);
}

void api_no_content(struct http_response *resp) {
        resp->status = 204;
        resp->text = strdup("");
}

static int load_host(struct svc *sv, struct http_request *req, struct http_response *resp, enum host_op op,
                     struct infra_env *ie, struct host *h, bool brief) {
        host_init(h);
        infra_env_init(ie);
        const struct principal *p = P(req);
        /* The token's kind first: nothing is read for a call it cannot make. */
        bool kind_ok = p->kind == PRINCIPAL_ADMIN ? !host_op_is_agents(op)
                                                  : host_op_is_agents(op) || (op == HOST_OP_SHOW && p->host_id[0]);
        if (!kind_ok) {
                const char *why;
                struct host_scope none = { .host_id = req->params[1] };
                int refused = auth_host_may(p, &none, op, &why);
                api_svc_error(resp, refused, why, "host");
                return -EPERM;
        }
        /* Who owns the infra-env is auth_host_may's to weigh. */
        int r = get_infra_env(sv, req, resp, req->params[0], ie);
        if (r < 0)
                return r;
        if (!uuid_is_valid(req->params[1])) {
                http_error(resp, 400, "host id \"%s\" is not a UUID", req->params[1]);
                return -EINVAL;
        }
        /* A host's own token speaks for that host only. */
        if (p->kind == PRINCIPAL_AGENT && p->host_id[0] && strcasecmp(p->host_id, req->params[1]) != 0) {
                http_error(resp, 403, "this token belongs to another host");
                return -EPERM;
        }
        r = brief ? svc_host_get_brief(sv, ie->id, req->params[1], h) : svc_host_get(sv, ie->id, req->params[1], h);
        if (r < 0) {
                api_store_error(resp, r, "host");
                return r;
        }
        struct host_scope s = {
                .host_id = h->id,
                .ie_owner = ie->owner,
                .place = auth_host_place(h->cluster_id != NULL, h->status),
                .node_agent = h->status == HOST_INSTALLED,
        };
        /* The cluster's owner matters to a cluster creator alone. */
        struct cluster c;
        cluster_init(&c);
        if (p->kind == PRINCIPAL_ADMIN && p->role == ROLE_CLUSTER_CREATOR && h->cluster_id &&
            svc_host_cluster(sv, h, &c) == 0)
                s.cluster_owner = c.owner;
        const char *why;
        r = auth_host_may(p, &s, op, &why);
        cluster_free(&c);
        if (r == 0)
                return 0;
        char msg[512];
        snprintf(msg, sizeof msg, "host %s: %s", h->id, why);
        api_svc_error(resp, r, r == -ENOENT ? "host not found" : msg, "host");
        return -EPERM;
}

int api_load_host(struct svc *sv, struct http_request *req, struct http_response *resp, enum host_op op,
                  struct infra_env *ie, struct host *h) {
        return load_host(sv, req, resp, op, ie, h, false);
}

int api_load_host_brief(struct svc *sv, struct http_request *req, struct http_response *resp, enum host_op op,
                        struct infra_env *ie, struct host *h) {
        return load_host(sv, req, resp, op, ie, h, true);
}

/* The other hosts of a bound host's cluster with the addresses to check them
 * on (inside the machine network when it is set). */
int api_query_i64(struct http_request *req, struct http_response *resp, const char *key, int64_t max, int64_t *out) {
        const char *s = http_query(req, key);
        if (!s)
                return 0;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || *end || end == s || v < 0 || v > max) {
                http_error(resp, 400, "query parameter %s must be an integer from 0 to %lld", key, (long long) max);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

int api_query_page(struct svc *sv, struct http_request *req, struct http_response *resp, struct list_page *pg) {
        int64_t limit = 0, after = 0;
        int r;
        if ((r = api_query_i64(req, resp, "limit", svc_cfg(sv)->max_page_size, &limit)) < 0 ||
            (r = api_query_i64(req, resp, "after", INT64_MAX, &after)) < 0)
                return r;
        *pg = (struct list_page) { .limit = (unsigned) limit, .after = after };
        return 0;
}

int api_read_files(json_object *body, size_t max, const char *what, struct catalog_file **out, size_t *n,
                   struct http_response *resp) {
        char why[256] = "";
        struct jctx c = { why, sizeof why, 0 };
        *out = NULL;
        *n = 0;
        json_object *a = jget(body, "files", json_type_array, &c);
        if (!a)
                jrefuse(&c, "field \"files\" must be an array of {path, content}");
        size_t len = a ? json_object_array_length(a) : 0;
        if (len > max)
                jfail(&c, "%s has at most %zu files, this one %zu", what, max, len);
        _cleanup_free_ struct catalog_file *v = c.r < 0 ? NULL : calloc(len ? len : 1, sizeof *v);
        if (c.r == 0 && !v)
                joom(&c);
        for (size_t i = 0; i < len && c.r == 0; i++) {
                json_object *e = json_object_array_get_idx(a, i), *path = NULL, *content = NULL;
                struct jctx lax = { 0 }; /* the words are this loop's */
                if (json_object_is_type(e, json_type_object)) {
                        path = jget(e, "path", json_type_string, &lax);
                        content = jget(e, "content", json_type_string, &lax);
                }
                if (!path || !content) {
                        jfail(&c, "files[%zu] must be an object with string members path and content", i);
                        break;
                }
                v[i].path = json_object_get_string(path);
                v[i].content = json_object_get_string(content);
                v[i].len = (size_t) json_object_get_string_len(content);
                if (strlen(v[i].path) != (size_t) json_object_get_string_len(path) || strlen(v[i].content) != v[i].len)
                        jfail(&c, "files[%zu]: a NUL byte in its path or content", i);
        }
        if (!api_read_ok(resp, &c))
                return c.r;
        *out = TAKE_PTR(v);
        *n = len;
        return 0;
}

struct body_split {
        const char *raw;
        json_object *rest;
        struct json_span *span;
};

static int split_member(void *ud, const char *key, struct json_span v) {
        struct body_split *b = ud;
        if (strcmp(key, b->raw) == 0) {
                *b->span = v; /* the last of a repeated name holds, as in json-c */
                return 0;
        }
        json_object *o = NULL;
        int r = json_span_parse(v, 63, &o); /* the whole body's nesting limit, less its own level */
        if (r < 0)
                return r;
        if (json_object_object_add(b->rest, key, o) < 0) {
                json_object_put(o);
                return -ENOMEM;
        }
        return 0;
}

int api_body_split(const struct http_request *req, struct http_response *resp, const char *raw, json_object **rest,
                   struct json_span *span) {
        struct body_split b = { raw, json_object_new_object(), span };
        *span = (struct json_span) { 0 };
        *rest = NULL;
        char why[128] = "";
        int r = b.rest ? json_members(req->body_raw, req->body_len, split_member, &b, why, sizeof why) : -ENOMEM;
        if (r < 0) {
                json_object_put(b.rest);
                char msg[160];
                snprintf(msg, sizeof msg, "request body is %s", *why ? why : "not valid JSON");
                /* A walk's refusal is the body's: -EINVAL, whatever its cause. */
                api_svc_error(resp, r == -ENOMEM ? r : -EINVAL, r == -ENOMEM ? "out of memory" : msg, "request body");
                return -1;
        }
        *rest = b.rest;
        return 0;
}
