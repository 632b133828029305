/* The discovery ISO download against the real musterd on loopback: a
 * synthetic template (random bytes, a blank 256 KiB area at an ISO-like or
 * an odd offset, its sidecar) named in musterd's [iso] config, downloaded
 * over real HTTP. The copy must equal the template outside the area and
 * carry the infra-env's config inside it (a token musterd accepts, its
 * public key); Range, If-Range, If-None-Match, HEAD, ETags across a token
 * rotation, the refusals, and musterctl infraenv download. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootcfg.h"
#include "testutil.h"

#define MIB (1024 * 1024)
#define AREA BOOTCFG_AREA_SIZE
#define CONFIGURED_URL "http://musterd.example.test:8090"

static struct tu_musterd md;
static char *dir;
static uint8_t *tpl;        /* the template's bytes */
static size_t tpl_size, tpl_off;
static char tpl_path[4096];

#define url(...) tu_url(md.base, __VA_ARGS__)

/* With tpl_pxe, the sidecar says where a kernel and an initramfs are (odd
 * sizes: the initramfs needs padding before the config's archive). */
static bool tpl_pxe;
#define KERNEL_OFF (64 * 1024)
#define KERNEL_SIZE 1000003
#define INITRD_OFF (2 * MIB)
#define INITRD_SIZE 3000001
#define CMDLINE "console=ttyS0,115200 quiet"

/* Write DIR/name (size random bytes, zero at [off, off + AREA)) and its
 * sidecar; keep the bytes in tpl. */
static void make_template(const char *name, size_t size, size_t off, uint64_t seed) {
        free(tpl);
        tpl = malloc(size);
        cr_assert_not_null(tpl);
        for (size_t i = 0; i < size; i += 4) {
                uint32_t v = tu_xorshift(&seed);
                memcpy(tpl + i, &v, size - i < 4 ? size - i : 4);
        }
        memset(tpl + off, 0, AREA);
        tpl_size = size;
        tpl_off = off;
        cr_assert_eq(tu_write_bin(dir, name, tpl, size), 0);
        char side[1024], sname[256];
        char pxe[400] = "";
        if (tpl_pxe)
                snprintf(pxe, sizeof pxe,
                         ", \"pxe\": {\"kernel_offset\": %d, \"kernel_size\": %d, \"initrd_offset\": %d, "
                         "\"initrd_size\": %d, \"cmdline\": \"%s\"}",
                         KERNEL_OFF, KERNEL_SIZE, INITRD_OFF, INITRD_SIZE, CMDLINE);
        snprintf(side, sizeof side,
                 "{\"format\": \"muster-iso-template/1\", \"config_offset\": %zu, \"config_size\": %d, "
                 "\"size\": %zu, \"agent_version\": \"test\"%s}\n", off, AREA, size, pxe);
        snprintf(sname, sizeof sname, "%s.json", name);
        cr_assert_eq(tu_write_file(dir, sname, side), 0);
        snprintf(tpl_path, sizeof tpl_path, "%s/%s", dir, name);
}

/* Appended to the [iso] section by start() ("%s": the test's directory). */
static const char *extra_iso;

/* musterd with a template of `size` bytes whose area is at `off`; [iso]
 * coordinator_url set unless host_url. */
static void start(size_t size, size_t off, bool host_url) {
        char config[16384], extra[4200] = "";
        tu_ctl_clean_env();
        dir = tu_mkdtemp();
        cr_assert_not_null(dir);
        make_template("discovery.iso", size, off, 0x5eed0000 + off);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        if (extra_iso)
                snprintf(extra, sizeof extra, extra_iso, dir);
#pragma GCC diagnostic pop
        snprintf(config, sizeof config, "[iso]\ntemplate = %s\n%s%s%s%s", tpl_path,
                 host_url ? "" : "coordinator_url = ", host_url ? "" : CONFIGURED_URL, host_url ? "" : "\n", extra);
        cr_assert_eq(tu_musterd_start_in(&md, dir, config), 0, "musterd started");
}

static void down(void) {
        tu_musterd_free(&md);
        memset(&md, 0, sizeof md);
        if (dir)
                tu_rm_rf(dir);
        free(dir);
        dir = NULL;
        free(tpl);
        tpl = NULL;
        extra_iso = NULL;
        tpl_pxe = false;
}

TestSuite(iso_download, .fini = down);

/* ---- HTTP with the headers this route is about -------------------------- */

struct reply {
        long status;
        uint8_t *body;
        size_t len;
        int64_t clen;          /* Content-Length, -1 if none */
        char etag[128], crange[128], ctype[128], disp[256], accept[64], cache[64];
};

struct sink {
        uint8_t *d;
        size_t n, cap;
};

static size_t on_body(char *p, size_t sz, size_t nm, void *u) {
        struct sink *s = u;
        size_t k = sz * nm;
        if (s->n + k + 1 > s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 65536;
                while (cap < s->n + k + 1)
                        cap *= 2;
                uint8_t *d = realloc(s->d, cap);
                if (!d)
                        return 0;
                s->d = d;
                s->cap = cap;
        }
        memcpy(s->d + s->n, p, k);
        s->n += k;
        s->d[s->n] = 0;
        return k;
}

static void keep(const char *line, size_t n, const char *name, char *out, size_t outn) {
        size_t ln = strlen(name);
        if (n <= ln + 1 || strncasecmp(line, name, ln) != 0 || line[ln] != ':')
                return;
        const char *v = line + ln + 1;
        size_t vn = n - ln - 1;
        while (vn && (*v == ' ' || *v == '\t'))
                v++, vn--;
        while (vn && (v[vn - 1] == '\r' || v[vn - 1] == '\n' || v[vn - 1] == ' '))
                vn--;
        snprintf(out, outn, "%.*s", (int) vn, v);
}

static size_t on_header(char *p, size_t sz, size_t nm, void *u) {
        struct reply *r = u;
        size_t k = sz * nm;
        if (k > 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new answer: forget an interim one's */
                r->etag[0] = r->crange[0] = r->ctype[0] = r->disp[0] = r->accept[0] = r->cache[0] = '\0';
                r->clen = -1;
        }
        char clen[32] = "";
        keep(p, k, "Content-Length", clen, sizeof clen);
        if (clen[0])
                r->clen = strtoll(clen, NULL, 10);
        keep(p, k, "ETag", r->etag, sizeof r->etag);
        keep(p, k, "Content-Range", r->crange, sizeof r->crange);
        keep(p, k, "Content-Type", r->ctype, sizeof r->ctype);
        keep(p, k, "Content-Disposition", r->disp, sizeof r->disp);
        keep(p, k, "Accept-Ranges", r->accept, sizeof r->accept);
        keep(p, k, "Cache-Control", r->cache, sizeof r->cache);
        return k;
}

/* method url with token and extra header lines (NULL-terminated, may be
 * NULL): the status; everything in *r (free with reply_free). */
static long req(const char *method, const char *u, const char *token, const char *const *headers, struct reply *r) {
        CURL *c = curl_easy_init();
        struct curl_slist *h = NULL;
        struct sink s = { 0 };
        char auth[8300];
        memset(r, 0, sizeof *r);
        r->clen = -1;
        cr_assert_not_null(c);
        if (token) {
                snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
                h = curl_slist_append(h, auth);
        }
        for (size_t i = 0; headers && headers[i]; i++)
                h = curl_slist_append(h, headers[i]);
        curl_easy_setopt(c, CURLOPT_URL, u);
        if (md.https) {
                char ca[4200];
                snprintf(ca, sizeof ca, "%.4000s/tls/ca.pem", md.state_dir);
                curl_easy_setopt(c, CURLOPT_CAINFO, ca);
        }
        if (strcmp(method, "HEAD") == 0)
                curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        else
                curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        CURLcode cr = curl_easy_perform(c);
        cr_assert_eq(cr, CURLE_OK, "%s %s: %s", method, u, curl_easy_strerror(cr));
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        r->body = s.d;
        r->len = s.n;
        return r->status;
}

static void reply_free(struct reply *r) {
        free(r->body);
        r->body = NULL;
}

/* GET the image of infra-env ie with optional header lines. */
static long get_image(const char *ie, const char *token, const char *const *headers, struct reply *r) {
        return req("GET", url("/api/v2/infra-envs/%s/downloads/image", ie), token, headers, r);
}

/* The reason of a {"code","reason"} answer (static buffer). */
static const char *reason(const struct reply *r) {
        static char buf[1024];
        json_object *o = r->body ? json_tokener_parse((const char *) r->body) : NULL;
        snprintf(buf, sizeof buf, "%s", o && tu_jstr(o, "reason") ? tu_jstr(o, "reason") : "");
        json_object_put(o);
        return buf;
}

/* ---- what a download holds ----------------------------------------------- */

static char *signing_key(void) {
        char *pem = NULL;
        cr_assert_eq(tu_http("GET", url("/api/v2/signing-key"), md.admin_token, NULL, 0, &pem), 200);
        return pem;
}

/* A host registered with `token` into ie: the HTTP status. */
static long register_host(const char *ie, const char *token, const char *host_id) {
        char body[128];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", host_id);
        return tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", ie), token, body, NULL);
}

/* The full image: the template's bytes outside the area, and in it a config
 * for ie with `want_url`; the token in it returned (malloc'd). */
static const char *want_ca; /* the CA PEM check_image expects; NULL: none */

static char *check_image(const struct reply *r, const char *ie, const char *want_url) {
        cr_assert_eq(r->status, 200);
        cr_assert_eq(r->len, tpl_size, "the whole image: %zu bytes, want %zu", r->len, tpl_size);
        cr_assert(memcmp(r->body, tpl, tpl_off) == 0, "identical before the area");
        cr_assert(memcmp(r->body + tpl_off + AREA, tpl + tpl_off + AREA, tpl_size - tpl_off - AREA) == 0,
                  "identical after the area");
        struct bootcfg bc = { 0 };
        char err[256] = "";
        cr_assert_eq(bootcfg_decode(r->body + tpl_off, AREA, &bc, err, sizeof err), 0, "area decodes: %s", err);
        cr_assert_str_eq(bc.infra_env_id, ie);
        cr_assert_str_eq(bc.coordinator_url, want_url);
        cr_assert_not_null(bc.token);
        char *pem = signing_key();
        cr_assert_not_null(bc.coordinator_key_pem);
        cr_assert_str_eq(bc.coordinator_key_pem, pem, "the key PEM is GET /signing-key's");
        free(pem);
        if (want_ca)
                cr_assert(bc.ca_pem && strcmp(bc.ca_pem, want_ca) == 0, "the CA is [iso] ca_file's");
        else
                cr_assert_null(bc.ca_pem, "no [iso] ca_file, no CA");
        char *tok = strdup(bc.token);
        bootcfg_free(&bc);
        return tok;
}

static void full_download(size_t size, size_t off) {
        start(size, off, false);
        char *ie = NULL, *created_tok = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack 7/α", &ie, &created_tok), 201);
        struct reply r;
        get_image(ie, md.admin_token, NULL, &r);
        char *tok = check_image(&r, ie, CONFIGURED_URL);
        cr_assert_str_eq(tok, created_tok, "the token of the current generation, as issued at creation");
        cr_assert_eq(register_host(ie, tok, "6d757374-6572-4071-8335-00000000a001"), 201,
                     "musterd accepts the ISO's token as the infra-env's agent token");
        cr_assert_str_eq(r.ctype, "application/x-iso9660-image");
        cr_assert_str_eq(r.disp, "attachment; filename=\"rack_7___.iso\"");
        cr_assert_str_eq(r.accept, "bytes");
        cr_assert_eq(r.clen, (int64_t) tpl_size);
        cr_assert_eq(strlen(r.etag), 66, "a strong ETag: %s", r.etag);
        cr_assert_str_eq(r.cache, "private");
        reply_free(&r);
        free(tok);
        free(created_tok);
        free(ie);
}

Test(iso_download, full_image_area_at_an_iso_offset) {
        full_download(8 * MIB, 3 * MIB + 32 * 2048); /* 2048-aligned, as in an ISO */
}

Test(iso_download, full_image_area_at_an_odd_offset) {
        full_download(5 * MIB + 999, MIB + 12345);
}

Test(iso_download, head_tells_the_size_and_sends_nothing) {
        start(4 * MIB, MIB, false);
        char *ie = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "h", &ie, NULL), 201);
        struct reply g, h;
        get_image(ie, md.admin_token, NULL, &g);
        cr_assert_eq(req("HEAD", url("/api/v2/infra-envs/%s/downloads/image", ie), md.admin_token, NULL, &h), 200);
        cr_assert_eq(h.len, 0);
        cr_assert_eq(h.clen, (int64_t) tpl_size);
        cr_assert_str_eq(h.etag, g.etag);
        cr_assert_str_eq(h.accept, "bytes");
        cr_assert_str_eq(h.ctype, "application/x-iso9660-image");
        reply_free(&g);
        reply_free(&h);
        free(ie);
}

/* ---- Range ------------------------------------------------------------------ */

/* GET with `range`: 206 and the slice [a, b] of full, with its Content-Range. */
static void range_is_slice(const char *ie, const struct reply *full, const char *range, size_t a, size_t b) {
        char hdr[128], want[128];
        snprintf(hdr, sizeof hdr, "Range: %s", range);
        struct reply r;
        get_image(ie, md.admin_token, (const char *const[]) { hdr, NULL }, &r);
        cr_assert_eq(r.status, 206, "%s: %ld %s", range, r.status, reason(&r));
        snprintf(want, sizeof want, "bytes %zu-%zu/%zu", a, b, full->len);
        cr_assert_str_eq(r.crange, want, "%s", range);
        cr_assert_eq(r.len, b - a + 1, "%s: %zu bytes", range, r.len);
        cr_assert_eq(r.clen, (int64_t) (b - a + 1));
        cr_assert(memcmp(r.body, full->body + a, r.len) == 0, "%s is the slice of the full download", range);
        cr_assert_str_eq(r.etag, full->etag);
        reply_free(&r);
}

/* GET with `range`: 200 and all of full. */
static void range_is_whole(const char *ie, const struct reply *full, const char *range) {
        char hdr[128];
        snprintf(hdr, sizeof hdr, "Range: %s", range);
        struct reply r;
        get_image(ie, md.admin_token, (const char *const[]) { hdr, NULL }, &r);
        cr_assert_eq(r.status, 200, "%s: %ld", range, r.status);
        cr_assert_eq(r.len, full->len);
        cr_assert(memcmp(r.body, full->body, r.len) == 0);
        cr_assert_str_eq(r.crange, "");
        reply_free(&r);
}

Test(iso_download, ranges_are_slices_of_the_whole) {
        start(6 * MIB + 17, 2 * MIB + 4097, false);
        char *ie = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "ranges", &ie, NULL), 201);
        struct reply full;
        get_image(ie, md.admin_token, NULL, &full);
        cr_assert_eq(full.len, tpl_size);
        const size_t a0 = tpl_off, a1 = tpl_off + AREA, end = tpl_size - 1;
        char range[128];
        const size_t spans[][2] = {
                { 0, 0 }, { 0, 2047 }, { a0 - 100, a0 + 99 }, { a1 - 100, a1 + 99 }, { a0, a1 - 1 },
                { a0 - 1, a1 }, { a0 + 11, a0 + 5000 }, { a0 + 11, a0 + 11 }, { a1, a1 }, { a0 - 1, a0 - 1 },
                { end, end }, { 12345, end }, { 0, end },
        };
        for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
                snprintf(range, sizeof range, "bytes=%zu-%zu", spans[i][0], spans[i][1]);
                range_is_slice(ie, &full, range, spans[i][0], spans[i][1]);
        }
        snprintf(range, sizeof range, "bytes=%zu-", a0 + 7);           /* open-ended */
        range_is_slice(ie, &full, range, a0 + 7, end);
        snprintf(range, sizeof range, "bytes=%zu-%zu", a0, end + 5000); /* a last byte past the end */
        range_is_slice(ie, &full, range, a0, end);
        range_is_slice(ie, &full, "bytes=-1000", end - 999, end);       /* suffix */
        snprintf(range, sizeof range, "bytes=-%zu", tpl_size - a0 + 3); /* suffix over the area */
        range_is_slice(ie, &full, range, a0 - 3, end);
        range_is_slice(ie, &full, "bytes=-999999999999", 0, end);

        /* Several ranges, nonsense, another unit: the whole image. */
        range_is_whole(ie, &full, "bytes=0-10,20-30");
        range_is_whole(ie, &full, "bytes=10-5");
        range_is_whole(ie, &full, "bytes=abc");
        range_is_whole(ie, &full, "lines=1-2");

        /* Unsatisfiable: 416 and where the image ends. */
        const char *const bad[] = { "bytes=%zu-", "bytes=%zu-%zu", "bytes=-0" };
        for (size_t i = 0; i < 3; i++) {
                char hdr[160], want[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
                snprintf(range, sizeof range, bad[i], tpl_size, tpl_size + 10);
#pragma GCC diagnostic pop
                snprintf(hdr, sizeof hdr, "Range: %s", range);
                struct reply r;
                get_image(ie, md.admin_token, (const char *const[]) { hdr, NULL }, &r);
                cr_assert_eq(r.status, 416, "%s: %ld", range, r.status);
                snprintf(want, sizeof want, "bytes */%zu", tpl_size);
                cr_assert_str_eq(r.crange, want);
                cr_assert(strstr(reason(&r), "range"), "%s", reason(&r));
                reply_free(&r);
        }
        reply_free(&full);
        free(ie);
}

/* ---- ETag, If-Range, If-None-Match, rotation ---------------------------------- */

Test(iso_download, etag_if_range_if_none_match_and_rotation) {
        start(4 * MIB, 2 * MIB - 6000, false);
        char *ie = NULL, *old_tok = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rot", &ie, &old_tok), 201);
        struct reply a, b;
        get_image(ie, md.admin_token, NULL, &a);
        get_image(ie, md.admin_token, NULL, &b);
        cr_assert_str_eq(a.etag, b.etag, "the ETag is stable");
        cr_assert(memcmp(a.body, b.body, a.len) == 0, "so are the bytes");
        reply_free(&b);

        char inm[200], ifr[200];
        snprintf(inm, sizeof inm, "If-None-Match: %s", a.etag);
        cr_assert_eq(get_image(ie, md.admin_token, (const char *const[]) { inm, NULL }, &b), 304);
        cr_assert_eq(b.len, 0);
        cr_assert_str_eq(b.etag, a.etag);
        reply_free(&b);
        cr_assert_eq(get_image(ie, md.admin_token, (const char *const[]) { "If-None-Match: \"other\"", NULL }, &b),
                     200);
        reply_free(&b);
        /* If-Range with the current ETag: the range. */
        snprintf(ifr, sizeof ifr, "If-Range: %s", a.etag);
        cr_assert_eq(get_image(ie, md.admin_token, (const char *const[]) { ifr, "Range: bytes=100-199", NULL }, &b),
                     206);
        cr_assert_eq(b.len, 100);
        cr_assert(memcmp(b.body, a.body + 100, 100) == 0);
        reply_free(&b);

        /* A new token generation: a new ISO. */
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/actions/rotate-token", ie), md.admin_token, NULL,
                                  &o),
                     200);
        char *new_tok = strdup(tu_jstr(o, "agent_token"));
        json_object_put(o);
        get_image(ie, md.admin_token, NULL, &b);
        cr_assert_str_neq(b.etag, a.etag, "rotate-token changes the ETag");
        char *tok_a = check_image(&a, ie, CONFIGURED_URL), *tok_b = check_image(&b, ie, CONFIGURED_URL);
        cr_assert_str_eq(tok_a, old_tok);
        cr_assert_str_eq(tok_b, new_tok, "the ISO carries the rotated token");
        cr_assert_str_neq(tok_a, tok_b);
        cr_assert_eq(register_host(ie, tok_a, "6d757374-6572-4071-8335-00000000b001"), 401, "the old token is refused");
        cr_assert_eq(register_host(ie, tok_b, "6d757374-6572-4071-8335-00000000b002"), 201);
        reply_free(&b);

        /* If-Range with the old ETag: the whole new image, not a mix. */
        cr_assert_eq(get_image(ie, md.admin_token, (const char *const[]) { ifr, "Range: bytes=100-199", NULL }, &b),
                     200);
        cr_assert_eq(b.len, tpl_size);
        cr_assert_str_eq(b.crange, "");
        reply_free(&b);
        /* If-None-Match with the old ETag: the new image. */
        cr_assert_eq(get_image(ie, md.admin_token, (const char *const[]) { inm, NULL }, &b), 200);
        reply_free(&b);
        /* Another infra-env's ISO is another ETag. */
        char *ie2 = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "other", &ie2, NULL), 201);
        cr_assert_eq(req("HEAD", url("/api/v2/infra-envs/%s/downloads/image", ie2), md.admin_token, NULL, &b), 200);
        cr_assert_str_neq(b.etag, a.etag);
        reply_free(&b);
        reply_free(&a);
        free(tok_a);
        free(tok_b);
        free(new_tok);
        free(old_tok);
        free(ie);
        free(ie2);
}

/* ---- refusals ------------------------------------------------------------------ */

Test(iso_download, refusals) {
        start(2 * MIB, MIB, false);
        char *ie = NULL, *agent = NULL;
        struct reply r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "mine", &ie, &agent), 201);
        cr_assert_eq(get_image("6d757374-6572-4071-8335-0000000000ff", md.admin_token, NULL, &r), 404);
        cr_assert(strstr(reason(&r), "infra-env"), "%s", reason(&r));
        reply_free(&r);
        cr_assert_eq(get_image("not-a-uuid", md.admin_token, NULL, &r), 400);
        reply_free(&r);
        cr_assert_eq(get_image(ie, NULL, NULL, &r), 401);
        reply_free(&r);
        cr_assert_eq(get_image(ie, agent, NULL, &r), 403, "agents do not download ISOs");
        reply_free(&r);
        /* A cluster creator: its own infra-envs, not another owner's. */
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/tokens"), md.admin_token,
                                  "{\"role\":\"cluster-creator\",\"owner\":\"alice\"}", &o),
                     201);
        char *alice = strdup(tu_jstr(o, "token"));
        json_object_put(o);
        cr_assert_eq(get_image(ie, alice, NULL, &r), 403, "another owner's infra-env: %ld", r.status);
        cr_assert(strstr(reason(&r), "another owner"), "%s", reason(&r));
        reply_free(&r);
        char *ie_alice = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, alice, "alices", &ie_alice, NULL), 201);
        cr_assert_eq(get_image(ie_alice, alice, NULL, &r), 200);
        cr_assert_eq(r.len, tpl_size);
        reply_free(&r);
        /* Other methods on the route. */
        cr_assert_eq(req("POST", url("/api/v2/infra-envs/%s/downloads/image", ie), md.admin_token, NULL, &r), 405);
        reply_free(&r);

        /* The template gone: 503 with the reason; an unknown id stays 404. */
        char moved[4200];
        snprintf(moved, sizeof moved, "%s.moved", tpl_path);
        cr_assert_eq(rename(tpl_path, moved), 0);
        cr_assert_eq(get_image(ie, md.admin_token, NULL, &r), 503);
        cr_assert(strstr(reason(&r), tpl_path) && strstr(reason(&r), "No such file"), "%s", reason(&r));
        reply_free(&r);
        cr_assert_eq(get_image("6d757374-6572-4071-8335-0000000000ff", md.admin_token, NULL, &r), 404);
        reply_free(&r);
        /* A template that is not the one its sidecar describes. */
        cr_assert_eq(tu_write_bin(dir, "discovery.iso", tpl, tpl_size - 2048), 0);
        cr_assert_eq(get_image(ie, md.admin_token, NULL, &r), 503);
        cr_assert(strstr(reason(&r), "sidecar says"), "%s", reason(&r));
        reply_free(&r);
        /* Back in place: served again. */
        cr_assert_eq(rename(moved, tpl_path), 0);
        cr_assert_eq(get_image(ie, md.admin_token, NULL, &r), 200);
        reply_free(&r);
        free(alice);
        free(ie_alice);
        free(agent);
        free(ie);
}

/* ---- the coordinator URL from the Host header ------------------------------------- */

/* Over HTTPS (musterd's default) the ISO's agents get an https:// URL and
 * musterd's own CA, which they then trust alone. */
Test(iso_download, over_https_the_iso_carries_the_ca_and_an_https_url) {
        md.https = true;
        start(2 * MIB, 4096, true);
        cr_assert(!strncmp(md.base, "https://", 8), "%s", md.base);
        char *ie = NULL, path[4200];
        struct reply r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "tls", &ie, NULL), 201);
        snprintf(path, sizeof path, "%s/tls/ca.pem", md.state_dir);
        char *ca = tu_read_file(path, NULL);
        cr_assert_not_null(ca);
        want_ca = ca;
        get_image(ie, md.admin_token, (const char *const[]) { "Host: musterd.lab:8443", NULL }, &r);
        char *tok = check_image(&r, ie, "https://musterd.lab:8443");
        want_ca = NULL;
        reply_free(&r);
        free(tok);
        free(ca);
        free(ie);
}

Test(iso_download, default_coordinator_url_is_the_host_header) {
        start(2 * MIB, 4096, true);
        char *ie = NULL;
        struct reply r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "hosthdr", &ie, NULL), 201);
        get_image(ie, md.admin_token, NULL, &r);
        char *tok = check_image(&r, ie, md.base); /* curl's Host: 127.0.0.1:PORT */
        reply_free(&r);
        free(tok);
        get_image(ie, md.admin_token, (const char *const[]) { "Host: musterd.lab:8443", NULL }, &r);
        tok = check_image(&r, ie, "http://musterd.lab:8443");
        reply_free(&r);
        free(tok);
        get_image(ie, md.admin_token, (const char *const[]) { "Host: [::1]:8090", NULL }, &r);
        tok = check_image(&r, ie, "http://[::1]:8090");
        reply_free(&r);
        free(tok);
        const char *const bad[] = { "Host: evil.example/x", "Host: a@b", "Host: a b" };
        for (size_t i = 0; i < 3; i++) {
                cr_assert_eq(get_image(ie, md.admin_token, (const char *const[]) { bad[i], NULL }, &r), 400, "%s",
                             bad[i]);
                cr_assert(strstr(reason(&r), "coordinator_url"), "%s", reason(&r));
                reply_free(&r);
        }
        free(ie);
}

/* ---- [iso] ca_file ------------------------------------------------------------------ */

#define CA_PEM "-----BEGIN CERTIFICATE-----\nMIIBdummyCAforTheTest\n-----END CERTIFICATE-----\n"

Test(iso_download, ca_file_goes_into_the_area) {
        extra_iso = "ca_file = %s/ca.pem\n";
        start(2 * MIB, MIB + 1, false);
        want_ca = CA_PEM;
        char *ie = NULL;
        struct reply r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "ca", &ie, NULL), 201);
        /* Read at each download: missing now, so 503. */
        cr_assert_eq(get_image(ie, md.admin_token, NULL, &r), 503);
        cr_assert(strstr(reason(&r), "ca_file") && strstr(reason(&r), "ca.pem"), "%s", reason(&r));
        reply_free(&r);
        cr_assert_eq(tu_write_file(dir, "ca.pem", CA_PEM), 0);
        get_image(ie, md.admin_token, NULL, &r);
        free(check_image(&r, ie, CONFIGURED_URL));
        reply_free(&r);
        want_ca = NULL;
        free(ie);
}

/* ---- musterctl infraenv download ------------------------------------------------- */

#define CTL(out, err, ...) tu_ctl(out, err, md.base, md.admin_token_path, (const char *const[]) { __VA_ARGS__, NULL })

static uint8_t *slurp(const char *path, size_t *len) {
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *b = malloc((size_t) n + 1);
        cr_assert_eq(fread(b, 1, (size_t) n, f), (size_t) n);
        fclose(f);
        *len = (size_t) n;
        return b;
}

Test(iso_download, musterctl_download) {
        start(7 * MIB + 5, 5 * MIB + 3, false);
        char *ie = NULL, *out = NULL, *err = NULL, file[4200], want[4300];
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack-9", &ie, NULL), 201);
        struct reply r;
        get_image(ie, md.admin_token, NULL, &r);
        cr_assert_eq(r.status, 200);

        snprintf(file, sizeof file, "%s/rack-9.iso", dir);
        /* By name, stderr not a terminal: one summary line. */
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "rack-9", "-o", file), 0, "%s", err);
        snprintf(want, sizeof want, "wrote %s: %zu bytes", file, tpl_size);
        cr_assert(strncmp(err, want, strlen(want)) == 0, "summary: %s", err);
        cr_assert_eq(strchr(err, '\n') - err + 1, (long) strlen(err), "one line: %s", err);
        cr_assert(!strchr(err, '\r') && !strchr(err, '\033'), "no progress bar off a terminal");
        cr_assert_str_eq(out, "");
        free(out);
        free(err);
        size_t n;
        uint8_t *b = slurp(file, &n);
        cr_assert_eq(n, r.len);
        cr_assert(memcmp(b, r.body, n) == 0, "musterctl's file is the curl download");
        free(b);
        char part[4300];
        snprintf(part, sizeof part, "%s.part", file);
        cr_assert_neq(access(part, F_OK), 0, "no FILE.part left");
        struct stat fst;
        cr_assert(stat(file, &fst) == 0 && (fst.st_mode & 07777) == 0600, "the ISO holds the agent token: mode %o",
                  fst.st_mode & 07777);

        /* By id prefix, over an existing file. */
        char prefix[9];
        snprintf(prefix, sizeof prefix, "%s", ie);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", prefix, "--out", file), 0, "%s", err);
        free(out);
        free(err);
        b = slurp(file, &n);
        cr_assert(n == r.len && memcmp(b, r.body, n) == 0);
        free(b);

        /* -o -: the ISO on stdout. */
        char cmd[8192], piped[4200];
        snprintf(piped, sizeof piped, "%s/stdout.iso", dir);
        snprintf(cmd, sizeof cmd, "exec %s --server %s --token-file %s infraenv download %s -o - > %s", tu_ctl_path(),
                 md.base, md.admin_token_path, ie, piped);
        int st;
        free(tu_run((const char *const[]) { "/bin/sh", "-c", cmd, NULL }, &st, &err));
        cr_assert_eq(st, 0, "%s", err);
        snprintf(want, sizeof want, "wrote standard output: %zu bytes", tpl_size);
        cr_assert(strncmp(err, want, strlen(want)) == 0, "summary: %s", err);
        free(err);
        b = slurp(piped, &n);
        cr_assert(n == r.len && memcmp(b, r.body, n) == 0, "-o - writes the same bytes");
        free(b);

        /* -o a FIFO (as /dev/null or a terminal would be): written into,
         * never replaced by FILE.part renamed over it, its mode kept. */
        char fifo[1024], through[1024];
        snprintf(fifo, sizeof fifo, "%s/fifo", dir);
        snprintf(through, sizeof through, "%s/through.iso", dir);
        cr_assert_eq(mkfifo(fifo, 0644), 0);
        snprintf(cmd, sizeof cmd, "cat %s > %s & %s --server %s --token-file %s infraenv download %s -o %s; r=$?; wait; exit $r",
                 fifo, through, tu_ctl_path(), md.base, md.admin_token_path, ie, fifo);
        free(tu_run((const char *const[]) { "/bin/sh", "-c", cmd, NULL }, &st, &err));
        cr_assert_eq(st, 0, "%s", err);
        snprintf(want, sizeof want, "wrote %s: %zu bytes", fifo, tpl_size);
        cr_assert(strncmp(err, want, strlen(want)) == 0, "summary: %s", err);
        free(err);
        cr_assert(stat(fifo, &fst) == 0 && S_ISFIFO(fst.st_mode) && (fst.st_mode & 07777) == 0644,
                  "the FIFO is still a FIFO, its mode kept");
        b = slurp(through, &n);
        cr_assert(n == r.len && memcmp(b, r.body, n) == 0, "the FIFO carried the same bytes");
        free(b);

        /* A refusal: the server's reason, exit 1, no file. */
        char moved[4200], file2[4200];
        snprintf(moved, sizeof moved, "%s.moved", tpl_path);
        snprintf(file2, sizeof file2, "%s/second.iso", dir);
        cr_assert_eq(rename(tpl_path, moved), 0);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", ie, "-o", file2), 1);
        cr_assert(strstr(err, "discovery ISO cannot be served") && strstr(err, "HTTP 503"), "%s", err);
        free(out);
        free(err);
        cr_assert_neq(access(file2, F_OK), 0);
        snprintf(part, sizeof part, "%s.part", file2);
        cr_assert_neq(access(part, F_OK), 0, "FILE.part removed after a refusal");
        cr_assert_eq(rename(moved, tpl_path), 0);

        /* Usage errors never reach the server. */
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", ie), 2);
        cr_assert(strstr(err, "-o FILE"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "-o", file), 2);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "no-such-env", "-o", file2), 3);
        cr_assert(strstr(err, "no infra-env matches"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "--help"), 0);
        cr_assert(strstr(out, "Usage: musterctl infraenv download INFRA_ENV -o FILE"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "--help"), 0);
        cr_assert(strstr(out, "infraenv download"), "%s", out);
        tu_assert_fits(out, NULL);
        free(out);
        free(err);
        reply_free(&r);
        free(ie);
}

/* An infra-env's architecture is the ISO template's (issue 13, item 10): the
 * sidecar names it (x86_64 when it does not), infra-envs of another one are
 * refused, an infra-env left behind by a replaced template gets no ISO, and
 * its hosts are checked against it (cpu-architecture-matches), as they are
 * against their cluster's. */
Test(iso_download, infra_env_architecture_follows_the_template) {
        start(2 * MIB, MIB, false);
        json_object *o = NULL;
        struct reply r;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token,
                                  "{\"name\":\"arm\",\"cpu_architecture\":\"aarch64\"}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "no discovery ISO for aarch64") &&
                  strstr(tu_jstr(o, "reason"), "boots x86_64 hosts"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token,
                                  "{\"name\":\"odd\",\"cpu_architecture\":\"sparc\"}", &o), 400);
        cr_assert(strstr(tu_jstr(o, "reason"), "x86_64, aarch64, ppc64le or s390x"), "%s", tu_jstr(o, "reason"));
        json_object_put(o);
        char *pc = tu_create(md.base, md.admin_token, "/api/v2/infra-envs",
                             "{\"name\":\"pc\",\"cpu_architecture\":\"amd64\"}", "id");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s", pc), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "cpu_architecture"), "x86_64", "amd64 is stored by its canonical name");
        json_object_put(o);

        /* The template is rebuilt for aarch64. */
        char side[512];
        snprintf(side, sizeof side,
                 "{\"format\": \"muster-iso-template/1\", \"config_offset\": %zu, \"config_size\": %d, "
                 "\"size\": %zu, \"agent_version\": \"test\", \"cpu_architecture\": \"aarch64\"}\n",
                 tpl_off, AREA, tpl_size);
        cr_assert_eq(tu_write_file(dir, "discovery.iso.json", side), 0);
        char *arm = NULL, *tok = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "arm", &arm, &tok), 400, "x86_64 has no ISO now");
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs"), md.admin_token,
                                  "{\"name\":\"arm\",\"cpu_architecture\":\"arm64\"}", &o), 201);
        arm = strdup(tu_jstr(o, "id"));
        tok = strdup(tu_jstr(o, "agent_token"));
        json_object_put(o);
        cr_assert_eq(get_image(arm, md.admin_token, NULL, &r), 200);
        reply_free(&r);
        cr_assert_eq(get_image(pc, md.admin_token, NULL, &r), 503);
        cr_assert(strstr(reason(&r), "the infra-env is for x86_64 hosts") && strstr(reason(&r), "boots aarch64"), "%s",
                  reason(&r));
        reply_free(&r);

        /* An x86_64 host in the aarch64 infra-env is not known. */
        const char *host = "6d757374-6572-4071-8335-0000000000a1";
        char body[256], path[4096];
        snprintf(body, sizeof body, "{\"host_id\":\"%s\"}", host);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts", arm), tok, body, NULL), 201);
        snprintf(path, sizeof path, "%s/qemu-q35/expected.json", MUSTER_FIXTURES_DIR);
        json_object *inv = json_object_from_file(path);
        cr_assert_not_null(inv);
        json_object_object_add(inv, "host_id", json_object_new_string(host));
        cr_assert_eq(tu_step_result(md.base, arm, tok, host, "s-1", "inventory", 0, inv, NULL), 200);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s/hosts/%s", arm, host), md.admin_token, NULL, &o),
                     200);
        cr_assert_str_eq(tu_validation(o, "cpu-architecture-matches"), "failure");
        cr_assert_str_eq(tu_jstr(o, "status"), "insufficient-unbound");
        cr_assert(strstr(tu_jstr(o, "status_info"), "The host is x86_64; infra-env arm is for aarch64 hosts"), "%s",
                  tu_jstr(o, "status_info"));
        json_object_put(o);

        /* Clusters: the architecture is given at creation, shown, and fixed. */
        char *out = NULL, *err = NULL;
        const char *argv[] = { "cluster", "create", "arm-c", "--cpu-architecture", "aarch64", NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, md.admin_token_path, argv), 0, "%s", err ? err : "");
        free(out);
        free(err);
        const char *show[] = { "cluster", "show", "arm-c", NULL };
        cr_assert_eq(tu_ctl(&out, &err, md.base, md.admin_token_path, show), 0);
        cr_assert(strstr(out, "Architecture") && strstr(out, "aarch64"), "%s", out);
        free(out);
        free(err);
        char *c = tu_create(md.base, md.admin_token, "/api/v2/clusters", "{\"name\":\"pc-c\"}", "id");
        cr_assert_eq(tu_http_json("GET", url("/api/v2/clusters/%s", c), md.admin_token, NULL, &o), 200);
        cr_assert_str_eq(tu_jstr(o, "cpu_architecture"), "x86_64");
        json_object_put(o);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/clusters/%s", c), md.admin_token,
                                  "{\"cpu_architecture\":\"aarch64\"}", NULL), 400);
        cr_assert_eq(tu_http_json("POST", url("/api/v2/clusters"), md.admin_token,
                                  "{\"name\":\"bad\",\"cpu_architecture\":\"vax\"}", NULL), 400);
        free(c);
        free(arm);
        free(tok);
        free(pc);
}

/* The infra-env's proxy and SSH key go into the area (the agent fetches
 * through the one, the live system's SSH server takes the other). */
Test(iso_download, proxy_and_ssh_key_go_into_the_area) {
        start(2 * MIB, MIB, false);
        char *ie = NULL;
        struct reply r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "proxied", &ie, NULL), 201);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token,
                                  "{\"proxy\":{\"https_proxy\":\"http://proxy.lab:3128\",\"no_proxy\":\".lab\"},"
                                  "\"ssh_authorized_key\":\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK admin@lab\"}",
                                  NULL),
                     200);
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token,
                                  "{\"proxy\":{\"http_proxy\":\"gopher://proxy.lab\"}}", NULL),
                     400, "a proxy URL that is none is refused at the door");
        cr_assert_eq(get_image(ie, md.admin_token, NULL, &r), 200);
        struct bootcfg bc = { 0 };
        char err[256] = "";
        cr_assert_eq(bootcfg_decode(r.body + tpl_off, AREA, &bc, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(bc.https_proxy, "http://proxy.lab:3128");
        cr_assert_null(bc.http_proxy);
        cr_assert_str_eq(bc.no_proxy, ".lab");
        cr_assert_str_eq(bc.ssh_authorized_key, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK admin@lab");
        bootcfg_free(&bc);
        reply_free(&r);
        free(ie);
}

/* Static network configs: checked at the door (400 naming the host, file
 * and line; 413 saying how far over the ISO's area), kept canonical, shown,
 * carried in the area, and set with musterctl from a folder per MAC. */
Test(iso_download, static_network_checked_kept_and_carried) {
        start(2 * MIB, MIB, false);
        char *ie = NULL, *out = NULL, *err = NULL;
        struct reply r;
        json_object *o = NULL;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack-s", &ie, NULL), 201);
        static const char good[] =
                "{\"static_network\":[{\"mac_addresses\":[\"52:54:00:6D:75:01\"],\"files\":{\"10-eth0.network\":"
                "\"[Match]\\nMACAddress=52:54:00:6d:75:01\\n[Network]\\nAddress=10.0.2.50/24\\nGateway=10.0.2.2\\n\"}}]}";
        cr_assert_eq(tu_http_json("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token, good, &o), 200);
        json_object *first = json_object_array_get_idx(tu_json_get(o, "static_network"), 0);
        cr_assert_not_null(first, "%s", json_object_to_json_string(o));
        cr_assert_str_eq(json_object_get_string(json_object_array_get_idx(tu_json_get(first, "mac_addresses"), 0)),
                         "52:54:00:6d:75:01", "kept in lower case");
        json_object_put(o);
        /* A section that is none: 400 naming host, file and line. */
        static const char bad[] =
                "{\"static_network\":[{\"mac_addresses\":[\"52:54:00:6d:75:01\"],\"files\":{\"10-eth0.network\":"
                "\"[Match]\\nName=eth0\\n[Netwrk]\\nDHCP=yes\\n\"}}]}";
        cr_assert_eq(req("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token,
                         (const char *const[]) { "Content-Type: application/json", NULL }, &r),
                     400, "a PATCH without a body is refused too");
        reply_free(&r);
        char *body = NULL;
        long code = tu_http("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token, bad, strlen(bad), &body);
        cr_assert_eq(code, 400, "%s", body);
        cr_assert(strstr(body, "static_network[0] (52:54:00:6d:75:01): 10-eth0.network line 3: [Netwrk] is not a "
                               "section"),
                  "%s", body);
        free(body);
        /* Too much for the ISO: 413, by how much. */
        size_t hosts = 20, each = 15500;
        char *big = malloc(hosts * (each + 200) + 64);
        cr_assert_not_null(big);
        size_t at = (size_t) sprintf(big, "{\"static_network\":[");
        for (size_t i = 0; i < hosts; i++) {
                at += (size_t) sprintf(big + at, "%s{\"mac_addresses\":[\"02:00:00:00:01:%02zx\"],\"files\":{\"a.network\":"
                                                 "\"[Match]\\nName=eth0\\n", i ? "," : "", i);
                for (size_t k = 0; k < each / 3; k++)
                        at += (size_t) sprintf(big + at, "#\\n");
                at += (size_t) sprintf(big + at, "\"}}");
        }
        at += (size_t) sprintf(big + at, "]}");
        code = tu_http("PATCH", url("/api/v2/infra-envs/%s", ie), md.admin_token, big, at, &body);
        cr_assert_eq(code, 413, "%s", body);
        cr_assert(strstr(body, "over the 262144 its discovery ISO holds"), "%s", body);
        free(body);
        free(big);
        /* The stored set is the good one, carried by the ISO. */
        cr_assert_eq(get_image(ie, md.admin_token, NULL, &r), 200);
        struct bootcfg bc = { 0 };
        char why[256] = "";
        cr_assert_eq(bootcfg_decode(r.body + tpl_off, AREA, &bc, why, sizeof why), 0, "%s", why);
        cr_assert(bc.static_network && strstr(bc.static_network, "\"52:54:00:6d:75:01\"") &&
                          strstr(bc.static_network, "Address=10.0.2.50/24"),
                  "%s", bc.static_network ? bc.static_network : "(none)");
        bootcfg_free(&bc);
        reply_free(&r);

        /* musterctl: a folder per host, named by MAC. */
        tu_must("mkdir -p %s/sn/52:54:00:6d:75:09 %s/sn-bad/not-a-mac", dir, dir);
        cr_assert_eq(tu_write_file(dir, "sn/52:54:00:6d:75:09/10-eth0.network",
                                   "[Match]\nMACAddress=52:54:00:6d:75:09\n[Network]\nDHCP=no\n"
                                   "Address=192.0.2.9/24\n"), 0);
        char sn[4200], snbad[4200];
        snprintf(sn, sizeof sn, "%s/sn", dir);
        snprintf(snbad, sizeof snbad, "%s/sn-bad", dir);
        cr_assert_eq(CTL(&out, &err, "infraenv", "set", "rack-s", "--static-network", sn), 0, "%s", err);
        cr_assert(strstr(out, "Static network") && strstr(out, "1 host"), "%s", out);
        free(out);
        free(err);
        cr_assert_eq(tu_http_json("GET", url("/api/v2/infra-envs/%s", ie), md.admin_token, NULL, &o), 200);
        cr_assert(strstr(json_object_to_json_string(o), "52:54:00:6d:75:09"), "%s", json_object_to_json_string(o));
        /* The admin's file byte for byte, its last newline too (issue 32, item 12). */
        json_object *sent = NULL;
        json_object_object_get_ex(tu_json_get(o, "static_network.0.files"), "10-eth0.network", &sent);
        cr_assert_str_eq(json_object_get_string(sent),
                         "[Match]\nMACAddress=52:54:00:6d:75:09\n[Network]\nDHCP=no\nAddress=192.0.2.9/24\n");
        json_object_put(o);
        cr_assert_neq(CTL(&out, &err, "infraenv", "set", "rack-s", "--static-network", snbad), 0);
        cr_assert(strstr(err, "is not a folder named by a host's MAC"), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "infraenv", "set", "rack-s", "--no-static-network"), 0, "%s", err);
        cr_assert(strstr(out, "none (DHCP)"), "%s", out);
        free(out);
        free(err);
        free(ie);
}

/* ---- PXE ------------------------------------------------------------------ */

static long get_pxe(const char *ie, const char *file, const char *token, struct reply *r) {
        return req("GET", url("/api/v2/infra-envs/%s/downloads/pxe/%s", ie, file), token, NULL, r);
}

/* GET a PXE file with the token in the URL (as iPXE does), no header. */
static long get_pxe_query(const char *ie, const char *file, const char *token, struct reply *r) {
        return req("GET", url("/api/v2/infra-envs/%s/downloads/pxe/%s?token=%s", ie, file, token), NULL, NULL, r);
}

/* An initrd answer: the template's initramfs, zeros to a multiple of 4,
 * then a cpio archive that GNU cpio lists and unpacks into DIR/sub: the
 * folder "muster" and muster/config.img (0600), ie's config for the
 * configured URL. Its token (malloc'd). */
static char *check_initrd(const struct reply *r, const char *ie, const char *sub) {
        cr_assert_eq(r->status, 200);
        size_t pad = (4 - INITRD_SIZE % 4) % 4;
        cr_assert_gt(r->len, INITRD_SIZE + pad + 110);
        cr_assert(memcmp(r->body, tpl + INITRD_OFF, INITRD_SIZE) == 0, "the template's initramfs first");
        for (size_t i = 0; i < pad; i++)
                cr_assert_eq(r->body[INITRD_SIZE + i], 0, "padding");
        cr_assert(memcmp(r->body + INITRD_SIZE + pad, "070701", 6) == 0, "a newc archive on a 4-byte boundary");
        cr_assert_eq(r->len % 4, 0);
        char name[64], cmd[8192];
        snprintf(name, sizeof name, "%s.cpio", sub);
        cr_assert_eq(tu_write_bin(dir, name, r->body + INITRD_SIZE + pad, r->len - INITRD_SIZE - pad), 0);
        snprintf(cmd, sizeof cmd, "cd %s && cpio -t --quiet < %s.cpio && mkdir %s && cd %s && "
                                  "cpio -i --quiet --no-absolute-filenames < ../%s.cpio && stat -c %%a muster/config.img",
                 dir, sub, sub, sub, sub);
        int st;
        char *err = NULL, *out = tu_run((const char *const[]) { "/bin/sh", "-c", cmd, NULL }, &st, &err);
        cr_assert_eq(st, 0, "%s", err);
        cr_assert_str_eq(out, "muster\nmuster/config.img\n600\n");
        free(out);
        free(err);
        char path[4300];
        size_t n;
        snprintf(path, sizeof path, "%s/%s/muster/config.img", dir, sub);
        uint8_t *cfg = slurp(path, &n);
        cr_assert_lt(n, 8192, "the config alone, not the area's 256 KiB");
        struct bootcfg bc = { 0 };
        char why[256] = "";
        cr_assert_eq(bootcfg_decode(cfg, n, &bc, why, sizeof why), 0, "%s", why);
        cr_assert_str_eq(bc.infra_env_id, ie);
        cr_assert_str_eq(bc.coordinator_url, CONFIGURED_URL);
        char *pem = signing_key();
        cr_assert_str_eq(bc.coordinator_key_pem, pem);
        free(pem);
        char *tok = strdup(bc.token);
        bootcfg_free(&bc);
        free(cfg);
        return tok;
}

Test(iso_download, pxe_kernel_initrd_and_script) {
        tpl_pxe = true;
        start(8 * MIB, 6 * MIB, false);
        char *ie = NULL, *agent = NULL;
        struct reply r, again;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack 9/pxe", &ie, &agent), 201);

        /* vmlinuz: the template's bytes, with ranges and ETags as the ISO. */
        cr_assert_eq(get_pxe(ie, "vmlinuz", md.admin_token, &r), 200, "%s", reason(&r));
        cr_assert_eq(r.len, KERNEL_SIZE);
        cr_assert(memcmp(r.body, tpl + KERNEL_OFF, KERNEL_SIZE) == 0);
        cr_assert_eq(r.clen, KERNEL_SIZE);
        cr_assert_str_eq(r.ctype, "application/octet-stream");
        cr_assert_str_eq(r.accept, "bytes");
        cr_assert(r.etag[0] == '"', "%s", r.etag);
        char etag[128], hdr[200];
        snprintf(etag, sizeof etag, "%s", r.etag);
        reply_free(&r);
        cr_assert_eq(req("GET", url("/api/v2/infra-envs/%s/downloads/pxe/vmlinuz", ie), md.admin_token,
                         (const char *const[]) { "Range: bytes=1000000-", NULL }, &r),
                     206);
        cr_assert_eq(r.len, 3);
        cr_assert(memcmp(r.body, tpl + KERNEL_OFF + 1000000, 3) == 0);
        cr_assert_str_eq(r.crange, "bytes 1000000-1000002/1000003");
        reply_free(&r);
        snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
        cr_assert_eq(req("GET", url("/api/v2/infra-envs/%s/downloads/pxe/vmlinuz", ie), md.admin_token,
                         (const char *const[]) { hdr, NULL }, &r),
                     304);
        reply_free(&r);
        cr_assert_eq(req("HEAD", url("/api/v2/infra-envs/%s/downloads/pxe/vmlinuz", ie), md.admin_token, NULL, &r),
                     200);
        cr_assert_eq(r.clen, KERNEL_SIZE);
        cr_assert_eq(r.len, 0);
        reply_free(&r);

        /* initrd: the initramfs and the config's archive, whose token works. */
        cr_assert_eq(get_pxe(ie, "initrd", md.admin_token, &r), 200, "%s", reason(&r));
        char *tok = check_initrd(&r, ie, "x1");
        cr_assert_eq(register_host(ie, tok, "6d757374-6572-4071-8335-000000000a01"), 201);
        free(tok);
        /* A range of it: the same bytes as the whole (the tail included). */
        cr_assert_eq(req("GET", url("/api/v2/infra-envs/%s/downloads/pxe/initrd", ie), md.admin_token,
                         (const char *const[]) { "Range: bytes=2999990-3000100", hdr, NULL }, &again),
                     206);
        cr_assert_eq(again.len, 111);
        cr_assert(memcmp(again.body, r.body + 2999990, 111) == 0);
        reply_free(&again);
        reply_free(&r);

        /* boot.ipxe, as the admin downloads it: names relative to itself. */
        cr_assert_eq(get_pxe(ie, "boot.ipxe", md.admin_token, &r), 200);
        cr_assert_str_eq(r.ctype, "text/plain; charset=utf-8");
        char *text = strndup((const char *) r.body, r.len);
        cr_assert_str_eq(text, "#!ipxe\n"
                               "# muster discovery: infra-env rack_9_pxe\n"
                               "echo muster discovery: infra-env rack_9_pxe\n"
                               "kernel --name vmlinuz vmlinuz initrd=initrd " CMDLINE "\n"
                               "initrd --name initrd initrd\n"
                               "boot\n");
        free(text);
        reply_free(&r);

        /* iPXE straight from musterd: the agent token in the URL, passed on
         * to the files the script loads. */
        cr_assert_eq(get_pxe_query(ie, "boot.ipxe", agent, &r), 200, "%s", reason(&r));
        text = strndup((const char *) r.body, r.len);
        char want[8192];
        snprintf(want, sizeof want, "kernel --name vmlinuz vmlinuz?token=%s initrd=initrd " CMDLINE "\n"
                                    "initrd --name initrd initrd?token=%s\n", agent, agent);
        cr_assert(strstr(text, want), "%s", text);
        free(text);
        reply_free(&r);
        cr_assert_eq(get_pxe_query(ie, "vmlinuz", agent, &r), 200);
        cr_assert_eq(r.len, KERNEL_SIZE);
        reply_free(&r);
        cr_assert_eq(get_pxe_query(ie, "initrd", agent, &r), 200);
        tok = check_initrd(&r, ie, "x2");
        free(tok);
        reply_free(&r);
        free(agent);
        free(ie);
}

Test(iso_download, pxe_refusals) {
        tpl_pxe = true;
        start(8 * MIB, 6 * MIB, false);
        char *ie = NULL, *agent = NULL, *ie2 = NULL, *agent2 = NULL;
        struct reply r;
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "one", &ie, &agent), 201);
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "two", &ie2, &agent2), 201);
        cr_assert_eq(get_pxe(ie, "initrd", NULL, &r), 401);
        reply_free(&r);
        cr_assert_eq(get_pxe_query(ie, "initrd", "not-a-token", &r), 401);
        reply_free(&r);
        cr_assert_eq(get_pxe_query(ie, "initrd", agent2, &r), 403, "another infra-env's token: %ld", r.status);
        reply_free(&r);
        cr_assert_eq(get_pxe(ie, "grub.cfg", md.admin_token, &r), 404);
        cr_assert(strstr(reason(&r), "vmlinuz, initrd, boot.ipxe"), "%s", reason(&r));
        reply_free(&r);
        cr_assert_eq(get_pxe(ie, "..%2f..%2fetc%2fpasswd", md.admin_token, &r), 404);
        reply_free(&r);
        /* The URL token is for the PXE files alone. */
        cr_assert_eq(req("GET", url("/api/v2/infra-envs/%s/downloads/image?token=%s", ie, agent), NULL, NULL, &r), 401);
        reply_free(&r);
        cr_assert_eq(req("GET", url("/api/v2/infra-envs/%s/hosts?token=%s", ie, md.admin_token), NULL, NULL, &r), 401);
        reply_free(&r);
        /* A host's own token (an installed host's) does not boot discovery. */
        cr_assert_eq(register_host(ie, agent, "6d757374-6572-4071-8335-000000000a02"), 201);
        json_object *o = NULL;
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/hosts/6d757374-6572-4071-8335-000000000a02/"
                                              "actions/rotate-token", ie),
                                  md.admin_token, NULL, &o),
                     200);
        const char *host_tok = tu_jstr(o, "host_token");
        cr_assert_not_null(host_tok, "%s", json_object_to_json_string(o));
        cr_assert_eq(get_pxe_query(ie, "initrd", host_tok, &r), 403);
        reply_free(&r);
        json_object_put(o);
        /* A rotated infra-env token is refused. */
        cr_assert_eq(tu_http_json("POST", url("/api/v2/infra-envs/%s/actions/rotate-token", ie), md.admin_token, NULL,
                                  NULL), 200);
        cr_assert_eq(get_pxe_query(ie, "boot.ipxe", agent, &r), 401);
        reply_free(&r);
        /* A template built before PXE: 503, saying so; the ISO still served. */
        tpl_pxe = false;
        make_template("discovery.iso", 8 * MIB, 6 * MIB, 7);
        cr_assert_eq(get_pxe(ie, "vmlinuz", md.admin_token, &r), 503);
        cr_assert(strstr(reason(&r), "built before PXE"), "%s", reason(&r));
        reply_free(&r);
        cr_assert_eq(get_image(ie, md.admin_token, NULL, &r), 200);
        reply_free(&r);
        free(agent);
        free(agent2);
        free(ie);
        free(ie2);
}

Test(iso_download, musterctl_download_pxe) {
        tpl_pxe = true;
        start(8 * MIB, 6 * MIB, false);
        char *ie = NULL, *out = NULL, *err = NULL, pxe[4200];
        cr_assert_eq(tu_create_infra_env(md.base, md.admin_token, "rack-10", &ie, NULL), 201);
        snprintf(pxe, sizeof pxe, "%s/tftp", dir);
        /* The folder is made; its parent must be there. */
        char deep[4300];
        snprintf(deep, sizeof deep, "%s/no/such", dir);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "rack-10", "--pxe", deep), 1);
        cr_assert(strstr(err, "cannot make the folder") && strstr(err, deep), "%s", err);
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "rack-10", "--pxe", pxe, "-o", "x.iso"), 2,
                     "one of -o and --pxe");
        free(out);
        free(err);
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "rack-10", "--pxe", pxe), 0, "%s", err);
        cr_assert(strstr(err, "/vmlinuz: 1000003 bytes") && strstr(err, "/initrd: ") && strstr(err, "/boot.ipxe: "),
                  "%s", err);
        free(out);
        free(err);
        struct reply r;
        size_t n;
        char path[4300];
        struct stat st;
        cr_assert(stat(pxe, &st) == 0 && S_ISDIR(st.st_mode), "--pxe made the folder");
        static const char *const files[] = { "vmlinuz", "initrd", "boot.ipxe" };
        for (size_t i = 0; i < 3; i++) {
                snprintf(path, sizeof path, "%s/%s", pxe, files[i]);
                cr_assert_eq(stat(path, &st), 0, "%s", path);
                cr_assert_eq(st.st_mode & 07777, 0600, "%s holds the agent token: mode %o", path, st.st_mode & 07777);
        }
        /* Again into the folder it made: the files are replaced. */
        cr_assert_eq(CTL(&out, &err, "infraenv", "download", "rack-10", "--pxe", pxe), 0, "%s", err);
        free(out);
        free(err);
        snprintf(path, sizeof path, "%s/vmlinuz", pxe);
        uint8_t *b = slurp(path, &n);
        cr_assert(n == KERNEL_SIZE && memcmp(b, tpl + KERNEL_OFF, n) == 0);
        free(b);
        cr_assert_eq(get_pxe(ie, "boot.ipxe", md.admin_token, &r), 200);
        snprintf(path, sizeof path, "%s/boot.ipxe", pxe);
        b = slurp(path, &n);
        cr_assert(n == r.len && memcmp(b, r.body, n) == 0, "the script names files beside it");
        free(b);
        reply_free(&r);
        snprintf(path, sizeof path, "%s/initrd", pxe);
        r = (struct reply) { .status = 200 };
        r.body = slurp(path, &r.len);
        char *tok = check_initrd(&r, ie, "x3");
        cr_assert_eq(register_host(ie, tok, "6d757374-6572-4071-8335-000000000a03"), 201);
        free(tok);
        reply_free(&r);
        free(ie);
}
