/* The HTTP layer on real loopback HTTP: route matching, the validation
 * order (405/404, auth, 413, 415, 400 for bad JSON), metrics. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "http.h"

Test(route, match_and_params) {
        struct http_request r = { 0 };
        cr_assert(http_route_match("/api/v2/infra-envs/{id}/hosts/{id}", "/api/v2/infra-envs/abc/hosts/def", &r));
        cr_assert_eq(r.n_params, 2);
        cr_assert_str_eq(r.params[0], "abc");
        cr_assert_str_eq(r.params[1], "def");
        cr_assert(http_route_match("/healthz", "/healthz/", NULL), "one trailing slash is fine");
        cr_assert_not(http_route_match("/api/v2/infra-envs/{id}", "/api/v2/infra-envs/", NULL), "empty parameter");
        cr_assert_not(http_route_match("/api/v2/infra-envs/{id}", "/api/v2/infra-envs/a/b", NULL));
        cr_assert_not(http_route_match("/api/v2/infra-envs", "/api/v2/infra-envs2", NULL));
        char longp[400] = "/x/";
        memset(longp + 3, 'a', 300);
        cr_assert_not(http_route_match("/x/{id}", longp, NULL), "parameters are capped");
}

Test(listen, parse) {
        struct sockaddr_storage ss;
        unsigned len;
        cr_assert_eq(http_parse_listen("127.0.0.1:8090", &ss, &len), 0);
        cr_assert_eq(ss.ss_family, AF_INET);
        cr_assert_eq(http_parse_listen("[::1]:0", &ss, &len), 0);
        cr_assert_eq(ss.ss_family, AF_INET6);
        cr_assert_eq(http_parse_listen(":8090", &ss, &len), 0);
        cr_assert_eq(http_parse_listen("localhost:1", &ss, &len), 0);
        cr_assert_eq(http_parse_listen("127.0.0.1", &ss, &len), -EINVAL);
        cr_assert_eq(http_parse_listen("127.0.0.1:99999", &ss, &len), -EINVAL);
        cr_assert_eq(http_parse_listen("nohost.example:80", &ss, &len), -EINVAL);
        cr_assert_eq(http_parse_listen("[::1:80", &ss, &len), -EINVAL);
}

static void h_echo(void *app, struct http_request *req, struct http_response *resp) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "param", json_object_new_string(req->n_params ? req->params[0] : ""));
        if (req->body)
                json_object_object_add(o, "body", json_object_get(req->body));
        http_json(resp, 200, o);
}

static bool auth(void *app, const struct http_route *route, struct http_request *req, struct http_response *resp) {
        if (!req->bearer) {
                http_error(resp, 401, "no token");
                return false;
        }
        if (strcmp(req->bearer, "good") != 0) {
                http_error(resp, 403, "not for you");
                return false;
        }
        return true;
}

static const struct http_route routes[] = {
        { "GET", "/open/{x}", h_echo, ROUTE_PUBLIC, "open" },
        { "GET", "/closed", h_echo, 0, "closed" },
        { "POST", "/things/{x}", h_echo, ROUTE_BODY, "things" },
};

static struct http_server *srv;
static char base[64];

static void start(void) {
        struct http_server_config cfg = { .listen = "127.0.0.1:0", .threads = 2, .max_body_bytes = 65536,
                                          .routes = routes, .n_routes = 3, .auth = auth };
        cr_assert_eq(http_server_start(&cfg, &srv), 0);
        snprintf(base, sizeof base, "http://127.0.0.1:%u", http_server_port(srv));
}

static void stop(void) {
        http_server_stop(srv);
}

struct buf {
        char *d;
        size_t n;
};

static size_t sink(char *p, size_t sz, size_t nm, void *u) {
        struct buf *b = u;
        b->d = realloc(b->d, b->n + sz * nm + 1);
        memcpy(b->d + b->n, p, sz * nm);
        b->n += sz * nm;
        b->d[b->n] = '\0';
        return sz * nm;
}

/* One request; returns the status, the body in *out (caller frees). */
static long req(const char *method, const char *path, const char *token, const char *ctype, const char *body,
                size_t body_len, char **out) {
        CURL *c = curl_easy_init();
        char url[512], hdr[256];
        struct curl_slist *h = NULL;
        struct buf b = { 0 };
        snprintf(url, sizeof url, "%s%s", base, path);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        if (token) {
                snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", token);
                h = curl_slist_append(h, hdr);
        }
        if (ctype) {
                snprintf(hdr, sizeof hdr, "Content-Type: %s", ctype);
                h = curl_slist_append(h, hdr);
        }
        h = curl_slist_append(h, "Expect:");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        if (body) {
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) body_len);
        }
        cr_assert_eq(curl_easy_perform(c), CURLE_OK);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        if (out)
                *out = b.d;
        else
                free(b.d);
        return code;
}

static void assert_reason(const char *body, int code, const char *needle) {
        json_object *o = json_tokener_parse(body), *v;
        cr_assert_not_null(o, "error bodies are JSON: %s", body);
        cr_assert(json_object_object_get_ex(o, "code", &v));
        cr_assert_eq(json_object_get_int(v), code);
        cr_assert(json_object_object_get_ex(o, "reason", &v));
        cr_assert(strstr(json_object_get_string(v), needle), "reason \"%s\" mentions \"%s\"", json_object_get_string(v), needle);
        json_object_put(o);
}

TestSuite(server, .init = start, .fini = stop);

Test(server, validation_order) {
        char *b;
        cr_assert_eq(req("GET", "/open/abc", NULL, NULL, NULL, 0, &b), 200);
        cr_assert(strstr(b, "\"abc\""));
        free(b);
        cr_assert_eq(req("GET", "/nowhere", NULL, NULL, NULL, 0, &b), 404);
        assert_reason(b, 404, "no such route");
        free(b);
        cr_assert_eq(req("DELETE", "/open/abc", NULL, NULL, NULL, 0, &b), 405);
        assert_reason(b, 405, "not allowed");
        free(b);
        cr_assert_eq(req("GET", "/closed", NULL, NULL, NULL, 0, &b), 401);
        free(b);
        cr_assert_eq(req("GET", "/closed", "bad", NULL, NULL, 0, &b), 403);
        free(b);
        cr_assert_eq(req("GET", "/closed", "good", NULL, NULL, 0, NULL), 200);
        /* Auth comes before body checks: a bad token with a bad body is 401. */
        cr_assert_eq(req("POST", "/things/1", NULL, "application/json", "{", 1, NULL), 401);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", "{\"a\":1}", 7, &b), 200);
        cr_assert(strstr(b, "\"a\":1"));
        free(b);
        cr_assert_eq(req("POST", "/things/1", "good", "text/plain", "{\"a\":1}", 7, &b), 415);
        free(b);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", "{\"a\":", 5, &b), 400);
        assert_reason(b, 400, "not valid JSON");
        free(b);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", "[1,2]", 5, &b), 400);
        assert_reason(b, 400, "JSON object");
        free(b);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", "{} {}", 5, &b), 400);
        free(b);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", "{\"a\":\"\0\"}", 9, &b), 400);
        free(b);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", "", 0, &b), 400);
        free(b);
}

Test(server, oversize_bodies_get_413_and_the_server_keeps_serving) {
        size_t n = 10 * 1024 * 1024;
        char *big = malloc(n + 1);
        memset(big, ' ', n);
        big[0] = '{';
        big[n - 1] = '}';
        big[n] = '\0';
        char *b;
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", big, n, &b), 413);
        assert_reason(b, 413, "larger than 65536");
        free(b);
        free(big);
        for (int i = 0; i < 20; i++)
                cr_assert_eq(req("GET", "/open/x", NULL, NULL, NULL, 0, NULL), 200);
}

Test(server, metrics_count_by_route_and_status) {
        req("GET", "/open/x", NULL, NULL, NULL, 0, NULL);
        req("GET", "/closed", NULL, NULL, NULL, 0, NULL);
        req("GET", "/zzz", NULL, NULL, NULL, 0, NULL);
        char *m = http_server_metrics(srv);
        cr_assert(strstr(m, "muster_http_requests_total{route=\"open\",status=\"200\"} 1"), "%s", m);
        cr_assert(strstr(m, "muster_http_requests_total{route=\"closed\",status=\"401\"} 1"));
        cr_assert(strstr(m, "muster_http_requests_total{route=\"unmatched\",status=\"404\"} 1"));
        cr_assert(strstr(m, "muster_http_request_duration_seconds_count{route=\"open\"} 1"));
        cr_assert(strstr(m, "le=\"+Inf\"} 1"));
        free(m);
}
