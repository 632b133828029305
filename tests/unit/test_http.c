/* The HTTP layer on real loopback HTTP: route matching, the validation
 * order (405/404, auth, 413, 415, 400 for bad JSON), the per-route body
 * limit, text and streamed file answers, metrics, token-optional routes;
 * and the pure checks at the door (strict UTF-8, NUL characters), the
 * connection limit from the file limit, and the one errno -> status table. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/socket.h>

#include "http/http.h"
#include "testutil.h"

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
        if (strcmp(req->bearer, "good") != 0 && strcmp(req->bearer, "plain") != 0) {
                http_error(resp, 403, "not for you");
                return false;
        }
        /* "plain" may call every route, but with the normal body limit. */
        req->large_body_ok = strcmp(req->bearer, "good") == 0;
        return true;
}

/* The body's length instead of the body (large bodies). */
static void h_size(void *app, struct http_request *req, struct http_response *resp) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "len", json_object_new_int64((int64_t) req->body_len));
        http_json(resp, 200, o);
}

static char file_path[256];
#define FILE_BYTES (3 * 1024 * 1024 + 17)

static void h_file(void *app, struct http_request *req, struct http_response *resp) {
        int fd = open(file_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                http_error(resp, 404, "no file");
                return;
        }
        http_file(resp, fd, FILE_BYTES, NULL);
}

static void h_text(void *app, struct http_request *req, struct http_response *resp) {
        char *t = malloc(5);
        memcpy(t, "a\0b\0c", 5);
        http_text(resp, 200, t, 5, "application/x-test");
}

static const struct http_route routes[] = {
        { "GET", "/open/{x}", h_echo, ROUTE_PUBLIC, "open" },
        { "GET", "/closed", h_echo, 0, "closed" },
        { "POST", "/things/{x}", h_echo, ROUTE_BODY, "things" },
        { "POST", "/big/{x}", h_size, ROUTE_BODY | ROUTE_LARGE_BODY, "big" },
        { "GET", "/file", h_file, ROUTE_PUBLIC, "file" },
        { "GET", "/text", h_text, ROUTE_PUBLIC, "text" },
        { "PUT", "/things/{x}", h_echo, ROUTE_BODY, "things_put" },
};

static struct http_server *srv;
static char base[64];

static void start(void) {
        struct http_server_config cfg = { .listen = "127.0.0.1:0", .threads = 2, .max_body_bytes = 65536,
                                          .max_large_body_bytes = 1 << 20, .routes = routes,
                                          .n_routes = sizeof routes / sizeof *routes, .auth = auth };
        cr_assert_eq(http_server_start(&cfg, &srv), 0);
        snprintf(base, sizeof base, "http://127.0.0.1:%u", http_server_port(srv));
}

static void stop(void) {
        http_server_stop(srv);
}

/* One request; returns the status, the body in *out (caller frees). */
static long req(const char *method, const char *path, const char *token, const char *ctype, const char *body,
                size_t body_len, char **out) {
        struct tu_http_reply r;
        long code = tu_http_raw(method, tu_url(base, "%s", path), token, ctype, body, body_len, &r);
        cr_assert_eq(r.curl, CURLE_OK);
        if (out)
                *out = r.body;
        else
                free(r.body);
        return code;
}

/* GET path: status, body bytes and length, content type. */
static long get_raw(const char *path, char **out, size_t *len, char *ctype, size_t ctlen) {
        struct tu_http_reply r;
        long code = tu_http_raw("GET", tu_url(base, "%s", path), NULL, NULL, NULL, 0, &r);
        cr_assert_eq(r.curl, CURLE_OK);
        snprintf(ctype, ctlen, "%s", r.ctype);
        cr_assert_eq((size_t) r.content_length, r.len, "Content-Length is the body's");
        *out = r.body;
        *len = r.len;
        return code;
}

/* A JSON object of n bytes (spaces inside the braces), malloc'd. */
static char *big_body(size_t n) {
        char *big = malloc(n + 1);
        cr_assert_not_null(big);
        memset(big, ' ', n);
        big[0] = '{';
        big[n - 1] = '}';
        big[n] = '\0';
        return big;
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
        char *big = big_body(n);
        char *b;
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", big, n, &b), 413);
        assert_reason(b, 413, "larger than 65536");
        free(b);
        free(big);
        for (int i = 0; i < 20; i++)
                cr_assert_eq(req("GET", "/open/x", NULL, NULL, NULL, 0, NULL), 200);
}

/* A body whose parse would take more than JSON_PARSE_COST_RATIO times its
 * size is 413 before json-c sees it (issue 32, item 9). */
Test(server, bodies_of_tiny_values_are_413_before_the_parse) {
        size_t n = 600000, k = 0;
        char *body = malloc(n + 8);
        cr_assert_not_null(body);
        k += (size_t) sprintf(body, "{\"a\":[");
        while (k + 4 < n)
                k += (size_t) sprintf(body + k, "{},");
        k += (size_t) sprintf(body + k, "{}]}");
        char *b;
        cr_assert_eq(req("POST", "/big/1", "good", "application/json", body, k, &b), 413);
        assert_reason(b, 413, "too many small values");
        free(b);
        free(body);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", "{\"a\":[{},{},{}]}", 16, &b), 200);
        free(b);
}

Test(server, large_body_routes_have_their_own_limit) {
        size_t n = 200 * 1024;
        char *big = big_body(n);
        char *b;
        cr_assert_eq(req("POST", "/big/1", "good", "application/json", big, n, &b), 200, "%s", b);
        cr_assert(strstr(b, "\"len\":204800"), "%s", b);
        free(b);
        cr_assert_eq(req("POST", "/things/1", "good", "application/json", big, n, &b), 413, "others keep theirs");
        assert_reason(b, 413, "larger than 65536");
        free(b);
        cr_assert_eq(req("POST", "/big/1", "plain", "application/json", big, n, &b), 413,
                     "a caller the auth hook does not allow it keeps the normal limit");
        assert_reason(b, 413, "larger than 65536");
        free(b);
        cr_assert_eq(req("PUT", "/things/1", "good", "application/json", "{\"p\":1}", 7, &b), 200);
        cr_assert(strstr(b, "\"p\":1"));
        free(b);
        free(big);
        n = 2 * 1024 * 1024;
        big = big_body(n);
        cr_assert_eq(req("POST", "/big/1", "good", "application/json", big, n, &b), 413);
        assert_reason(b, 413, "larger than 1048576");
        free(b);
        free(big);
}

Test(server, text_and_file_answers) {
        char *tmp = tu_mkdtemp();
        snprintf(file_path, sizeof file_path, "%s/file", tmp);
        int fd = open(file_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        unsigned char *data = malloc(FILE_BYTES);
        for (size_t i = 0; i < FILE_BYTES; i++)
                data[i] = (unsigned char) (i * 31 + (i >> 11));
        cr_assert_eq(write(fd, data, FILE_BYTES), FILE_BYTES);
        close(fd);
        char *b, ct[128];
        size_t len;
        cr_assert_eq(get_raw("/file", &b, &len, ct, sizeof ct), 200);
        cr_assert_eq(len, FILE_BYTES);
        cr_assert_eq(memcmp(b, data, FILE_BYTES), 0, "streamed as is");
        cr_assert_str_eq(ct, "application/octet-stream");
        free(b);
        unlink(file_path);
        cr_assert_eq(get_raw("/file", &b, &len, ct, sizeof ct), 404);
        tu_rm_rf(tmp);
        free(tmp);
        free(b);
        free(data);
        cr_assert_eq(get_raw("/text", &b, &len, ct, sizeof ct), 200);
        cr_assert_eq(len, 5, "a text answer keeps its NUL bytes");
        cr_assert_eq(memcmp(b, "a\0b\0c", 5), 0);
        cr_assert_str_eq(ct, "application/x-test");
        free(b);
        /* The server keeps serving. */
        cr_assert_eq(req("GET", "/open/x", NULL, NULL, NULL, 0, NULL), 200);
}

Test(server, metrics_count_by_route_and_status) {
        req("GET", "/open/x", NULL, NULL, NULL, 0, NULL);
        req("GET", "/closed", NULL, NULL, NULL, 0, NULL);
        req("GET", "/zzz", NULL, NULL, NULL, 0, NULL);
        struct growbuf out = { 0 };
        cr_assert_eq(http_server_metrics(srv, &out, 1 << 20), 0);
        const char *m = out.data;
        cr_assert(strstr(m, "muster_http_requests_total{route=\"open\",status=\"200\"} 1"), "%s", m);
        cr_assert(strstr(m, "muster_http_requests_total{route=\"closed\",status=\"401\"} 1"));
        cr_assert(strstr(m, "muster_http_requests_total{route=\"unmatched\",status=\"404\"} 1"));
        cr_assert(strstr(m, "muster_http_request_duration_seconds_count{route=\"open\"} 1"));
        cr_assert(strstr(m, "le=\"+Inf\"} 1"));
        free(out.data);
        struct growbuf small = { 0 };
        cr_assert_eq(http_server_metrics(srv, &small, 64), -E2BIG, "the text stops at its bound");
        cr_assert(small.len <= 64);
        free(small.data);
}

/* ---- the one errno -> status table ---------------------------------------- */

Test(errors, one_table) {
        static const struct {
                int err, status;
        } rows[] = {
                { -EINVAL, 400 }, { -EPERM, 403 },    { -ENOENT, 404 }, { -EEXIST, 409 }, { -EBUSY, 409 },
                { -ESTALE, 409 }, { -ENOPKG, 409 },   { -EDOM, 409 },   { -EDQUOT, 409 }, { -EALREADY, 409 },
                { -E2BIG, 413 },  { -EUSERS, 429 },   { -EAGAIN, 503 }, { -ENODATA, 503 }, { -ENOSPC, 507 },
                { -ENOMEM, 500 }, { -EIO, 500 },      { -ERANGE, 500 }, { 0, 500 },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
                cr_assert_eq(http_status_of_errno(rows[i].err), rows[i].status, "%d", rows[i].err);
}

/* What the host state machine's errors (test_domain_hostfsm: bound_states_and_errors)
 * become. Its -EBUSY (the cluster is installing) is a conflict, its -EINVAL
 * a bad request, anything else an internal error, as the state machine's
 * own map (hostfsm_error_http, gone) had them. Its -EPERM (not in this
 * state) was 409 there, 403 in this table: the table holds (a client never
 * saw the state machine's map; the services answer -EPERM as -EBUSY). */
Test(errors, host_state_machine) {
        cr_assert_eq(http_status_of_errno(-EBUSY), 409);
        cr_assert_eq(http_status_of_errno(-EINVAL), 400);
        cr_assert_eq(http_status_of_errno(-ENOMEM), 500);
        cr_assert_eq(http_status_of_errno(-EPERM), 403);
}

/* What the host rule's refusals (test_domain_auth: host_rule_table, 'F' and 'H')
 * become: 403 and 404, as auth_host_may answered them when it spoke HTTP. */
Test(errors, host_rule) {
        cr_assert_eq(http_status_of_errno(-EPERM), 403);
        cr_assert_eq(http_status_of_errno(-ENOENT), 404);
}

/* ---- the checks at the door (pure) -------------------------------------- */

#define VALID(lit) http_utf8_valid(lit, sizeof lit - 1)

Test(utf8, strict_rfc3629) {
        cr_assert(VALID(""));
        cr_assert(VALID("plain ASCII"));
        cr_assert(VALID("\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf"), "2- and 3-byte edges");
        cr_assert(VALID("\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf"), "U+10000 and U+10FFFF");
        cr_assert(VALID("\xef\xbf\xbe"), "U+FFFE is a noncharacter, not an error");
        cr_assert(VALID("a\0b"), "NUL is UTF-8 (the NUL check is another)");
        cr_assert_not(VALID("\x80"), "a lone continuation byte");
        cr_assert_not(VALID("\xc0\xaf"), "overlong '/' in 2 bytes");
        cr_assert_not(VALID("\xc1\xbf"), "overlong in 2 bytes");
        cr_assert_not(VALID("\xe0\x80\xaf"), "overlong in 3 bytes");
        cr_assert_not(VALID("\xe0\x9f\xbf"), "overlong in 3 bytes, top");
        cr_assert_not(VALID("\xf0\x80\x80\xaf"), "overlong in 4 bytes");
        cr_assert_not(VALID("\xf0\x8f\xbf\xbf"), "overlong in 4 bytes, top");
        cr_assert_not(VALID("\xed\xa0\x80"), "U+D800, a surrogate");
        cr_assert_not(VALID("\xed\xbf\xbf"), "U+DFFF, a surrogate");
        cr_assert_not(VALID("\xf4\x90\x80\x80"), "above U+10FFFF");
        cr_assert_not(VALID("\xf5\x80\x80\x80"), "F5");
        cr_assert_not(VALID("\xff"), "FF");
        cr_assert_not(VALID("\xe2\x82"), "cut short");
        cr_assert_not(VALID("\xe2\x82\x41"), "a continuation that is not");
}

Test(utf8, repair_replaces_each_bad_byte) {
        static const char in[] = "a\xff" "b\xc0\xaf" "c\xe2\x82\xac";
        size_t len;
        char *out = http_utf8_repair(in, sizeof in - 1, &len);
        cr_assert_not_null(out);
        cr_assert_str_eq(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xe2\x82\xac");
        cr_assert_eq(len, strlen(out));
        cr_assert(http_utf8_valid(out, len));
        free(out);
}

static int text_check(const char *lit, size_t len) {
        char why[96] = "";
        int r = http_json_text_check(lit, len, why, sizeof why);
        cr_assert(r == 0 || *why, "a refusal says why");
        return r;
}
#define CHECK(lit) text_check(lit, sizeof lit - 1)

Test(json_door, nul_anywhere_in_strings_and_names) {
        cr_assert_eq(CHECK("{\"owner\":\"bob\"}"), 0);
        cr_assert_eq(CHECK("{\"owner\":\"bob\\u0000-contractor\"}"), -EINVAL);
        cr_assert_eq(CHECK("{\"own\\u0000er\":\"bob\"}"), -EINVAL, "a member name");
        cr_assert_eq(CHECK("{\"a\":[1,{\"b\":[\"\\u0000\"]}]}"), -EINVAL, "deep inside");
        cr_assert_eq(CHECK("{\"a\":\"x\0y\"}"), -EINVAL, "a raw NUL byte");
        cr_assert_eq(CHECK("{\"a\":\"\\\\u0000\"}"), 0, "an escaped backslash, then text");
        cr_assert_eq(CHECK("{\"a\":\"\\\0\"}"), -EINVAL, "a NUL byte right after a backslash");
        cr_assert_eq(CHECK("{\"a\":\"\\\\\\u0000\"}"), -EINVAL, "an escaped backslash, then a NUL");
        cr_assert_eq(CHECK("{\"a\":\"\\\"\\u0000\"}"), -EINVAL, "an escaped quote does not end the string");
        cr_assert_eq(CHECK("{\"a\":\"\\u0001\\u00000\"}"), -EINVAL);
        cr_assert_eq(CHECK("{\"a\":\"\\u00001\"}"), -EINVAL, "\\u0000 followed by a digit");
        cr_assert_eq(CHECK("{\"a\":\"\\u1000\\u0100\\u0010\"}"), 0);
}

Test(json_door, invalid_utf8_anywhere) {
        cr_assert_eq(CHECK("{\"a\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}"), 0);
        cr_assert_eq(CHECK("{\"a\":\"\xc0\xaf\"}"), -EINVAL, "overlong");
        cr_assert_eq(CHECK("{\"a\":\"\xed\xa0\x80\"}"), -EINVAL, "surrogate");
        cr_assert_eq(CHECK("{\"\xff\":1}"), -EINVAL, "in a member name");
        cr_assert_eq(CHECK("{\"a\":\"\\\xc3\xa9\"}"), 0, "after a backslash (bad JSON, still UTF-8)");
}

/* json-c 0.16 cuts member names at a NUL: the parsed tree alone cannot tell
 * "name\u0000x" from "name". That is why the door reads the text. */
Test(json_door, why_the_tree_is_not_enough) {
        json_object *o = json_tokener_parse("{\"name\\u0000x\":1}");
        cr_assert_not_null(o);
        json_object *v;
        cr_assert(json_object_object_get_ex(o, "name", &v), "json-c kept the name up to the NUL");
        json_object_put(o);
}

Test(limits, connections_from_the_file_limit) {
        cr_assert_eq(http_connection_limit(1024), (1024 - 64) / 2);
        cr_assert_eq(http_connection_limit(192), 64);
        cr_assert_eq(http_connection_limit(10), 16, "a floor");
        cr_assert_eq(http_connection_limit(524288), HTTP_MAX_CONNECTIONS);
        cr_assert_eq(http_connection_limit(UINT64_MAX), HTTP_MAX_CONNECTIONS);
}

/* /metrics-style routes: no token is the handler's call, a bad one is 401. */
static void h_optional(void *app, struct http_request *req, struct http_response *resp) {
        http_json(resp, 200, json_object_new_boolean(req->auth != NULL));
}

static bool auth_sets(void *app, const struct http_route *route, struct http_request *req, struct http_response *resp) {
        if (!req->bearer || strcmp(req->bearer, "good") != 0) {
                http_error(resp, 401, "no");
                return false;
        }
        req->auth = strdup("principal");
        return true;
}

Test(server_optional, token_optional_routes) {
        static const struct http_route r[] = { { "GET", "/m", h_optional, ROUTE_TOKEN_OPTIONAL, "m" } };
        struct http_server_config cfg = { .listen = "127.0.0.1:0", .threads = 1, .max_body_bytes = 1024, .routes = r,
                                          .n_routes = 1, .auth = auth_sets, .auth_free = free };
        struct http_server *s;
        cr_assert_eq(http_server_start(&cfg, &s), 0);
        char b[64];
        snprintf(b, sizeof b, "http://127.0.0.1:%u/m", http_server_port(s));
        char *out = NULL;
        cr_assert_eq(tu_http("GET", b, NULL, NULL, 0, &out), 200);
        cr_assert_str_eq(out, "false");
        free(out);
        cr_assert_eq(tu_http("GET", b, "good", NULL, 0, &out), 200);
        cr_assert_str_eq(out, "true");
        free(out);
        cr_assert_eq(tu_http("GET", b, "bad", NULL, 0, NULL), 401);
        http_server_stop(s);
}
