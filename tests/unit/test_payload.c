/* payload: the payload object's exact canonical bytes, signing, the
 * envelope, and the agent's check refusing every altered or foreign
 * envelope (any byte of the signed part, digest, signature, key, cluster,
 * revision) while accepting a re-formatted one; manifest file paths and the
 * OS image reference. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/bignum.h>

#include "base64url.h"
#include "canonjson.h"
#include "payload.h"

static struct crypto_key *key, *other, *pub;

static void setup(void) {
        cr_assert_eq(crypto_key_generate(&key), 0);
        cr_assert_eq(crypto_key_generate(&other), 0);
        char *pem = NULL;
        cr_assert_eq(crypto_key_public_pem(key, &pem), 0);
        cr_assert_eq(crypto_pubkey_load_pem(pem, &pub), 0);
        free(pem);
}

static void teardown(void) {
        crypto_key_free(key);
        crypto_key_free(other);
        crypto_key_free(pub);
}

TestSuite(payload, .init = setup, .fini = teardown);

#define SHA "abababababababababababababababababababababababababababababababab"
#define CANON                                                                                                  \
        "{\"cluster_id\":\"c-1\",\"enabled_capabilities\":[\"Console\",\"Insights\"],\"manifests\":["        \
        "{\"content\":\"apiVersion: v1\\nkind: ConfigMap\\n\",\"file\":\"0000_50_a.yaml\",\"group\":\"\","   \
        "\"kind\":\"ConfigMap\",\"name\":\"a\",\"namespace\":\"openshift-a\",\"path\":\"0000_50_a.yaml\","   \
        "\"version\":\"v1\"},"                                                                                 \
        "{\"content\":\"---\\nb: \\\"q\\\"\\n\",\"file\":\"crd.yaml\",\"group\":\"apiextensions.k8s.io\","   \
        "\"kind\":\"CustomResourceDefinition\",\"name\":\"x.io\",\"path\":\"crd.1.yaml\",\"version\":\"v1\"}" \
        "],\"os_image\":{\"root_label\":\"root\",\"sha256\":\"" SHA "\",\"size\":1048576,"                   \
        "\"url\":\"http://x/os.img\"},\"release_version\":\"4.16.0\",\"revision\":1}"

static char s_a_file[] = "0000_50_a.yaml", s_empty[] = "", s_v1[] = "v1", s_cm[] = "ConfigMap",
            s_ns[] = "openshift-a", s_a[] = "a", s_a_content[] = "apiVersion: v1\nkind: ConfigMap\n",
            s_crd_file[] = "crd.yaml", s_crd_path[] = "crd.1.yaml", s_group[] = "apiextensions.k8s.io",
            s_crd[] = "CustomResourceDefinition", s_xio[] = "x.io", s_crd_content[] = "---\nb: \"q\"\n",
            s_sha[] = SHA, s_path[] = "/srv/os.img";

static const struct manifest m_a = {
        .file = s_a_file, .path = s_a_file, .group = s_empty, .version = s_v1, .kind = s_cm,
        .namespace = s_ns, .name = s_a, .content = s_a_content, .content_len = sizeof s_a_content - 1,
};
static const struct manifest m_crd = {
        .file = s_crd_file, .doc_index = 1, .path = s_crd_path, .group = s_group, .version = s_v1,
        .kind = s_crd, .name = s_xio, .content = s_crd_content, .content_len = sizeof s_crd_content - 1,
};

static json_object *build(const char *cluster, int64_t rev) {
        struct release_os_image img = { .path = s_path, .sha256 = s_sha, .size = 1048576 };
        struct strv caps = { 0 };
        cr_assert_eq(strv_push(&caps, "Console"), 0);
        cr_assert_eq(strv_push(&caps, "Insights"), 0);
        const struct manifest *inc[] = { &m_crd, &m_a };
        json_object *p = payload_build(cluster, rev, "4.16.0", "http://x/os.img", &img, &caps, inc, 2, NULL);
        cr_assert_not_null(p);
        strv_free(&caps);
        return p;
}

/* The envelope of a payload signed with k. */
static char *make_envelope(const char *cluster, int64_t rev, const struct crypto_key *k) {
        json_object *p = build(cluster, rev);
        struct payload_signed s;
        cr_assert_eq(payload_sign(p, k, &s), 0);
        char *env = payload_envelope(cluster, rev, s.digest, s.signature, s.canonical, s.len);
        cr_assert_not_null(env);
        payload_signed_free(&s);
        json_object_put(p);
        return env;
}

static char err[512];

static int verify(const char *env, size_t len, const char *cluster, int64_t rev) {
        json_object *p = (json_object *) 0x1;
        memset(err, 0, sizeof err);
        int r = payload_verify(env, len, pub, cluster, rev, &p, err, sizeof err);
        if (r == 0) {
                cr_assert_not_null(p);
                cr_assert_str_eq(err, "");
        } else {
                cr_assert_null(p);
                cr_assert_neq(err[0], '\0', "failure %d without a reason", r);
        }
        json_object_put(p);
        return r;
}

static int verify_s(const char *env) {
        return verify(env, strlen(env), NULL, 0);
}

static char *replace(const char *s, const char *from, const char *to) {
        const char *at = strstr(s, from);
        cr_assert_not_null(at, "%s not in %s", from, s);
        char *out = NULL;
        cr_assert_geq(asprintf(&out, "%.*s%s%s", (int) (at - s), s, to, at + strlen(from)), 0);
        return out;
}

/* ---- build, sign, envelope ------------------------------------------------- */

Test(payload, build_exact_canonical_bytes) {
        json_object *p = build("c-1", 1);
        char *c = NULL;
        size_t len;
        cr_assert_eq(canonjson_serialize(p, &c, &len), 0);
        cr_assert_str_eq(c, CANON);
        cr_assert_eq(len, strlen(CANON));
        free(c);
        json_object_put(p);

        /* Manifests given out of order come out in release order: file
         * name, then document index. */
        struct release_os_image img0 = { .path = s_path, .sha256 = s_sha, .size = 1048576 };
        struct strv caps = { 0 };
        cr_assert_eq(strv_push(&caps, "Console"), 0);
        cr_assert_eq(strv_push(&caps, "Insights"), 0);
        struct manifest crd0 = m_crd;
        crd0.doc_index = 0;
        crd0.path = s_crd_file;
        const struct manifest *shuffled[] = { &m_crd, &m_a, &crd0 };
        p = payload_build("c-1", 1, "4.16.0", "http://x/os.img", &img0, &caps, shuffled, 3, NULL);
        cr_assert_not_null(p);
        json_object *ms = json_object_object_get(p, "manifests");
        cr_assert_eq(json_object_array_length(ms), 3);
        const char *want_paths[] = { "0000_50_a.yaml", "crd.yaml", "crd.1.yaml" };
        for (size_t i = 0; i < 3; i++)
                cr_assert_str_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(ms, i),
                                                                               "path")),
                                 want_paths[i]);
        json_object_put(p);
        strv_free(&caps);

        /* A given root_label, no manifests, no capabilities. */
        struct release_os_image img = { .url = s_path, .sha256 = s_sha, .size = 5, .root_label = s_a };
        p = payload_build("c", 7, "v", "u", &img, NULL, NULL, 0, NULL);
        cr_assert_not_null(p);
        cr_assert_eq(canonjson_serialize(p, &c, &len), 0);
        cr_assert_str_eq(c, "{\"cluster_id\":\"c\",\"enabled_capabilities\":[],\"manifests\":[],\"os_image\":"
                            "{\"root_label\":\"a\",\"sha256\":\"" SHA "\",\"size\":5,\"url\":\"u\"},"
                            "\"release_version\":\"v\",\"revision\":7}");
        free(c);
        json_object_put(p);
}

Test(payload, build_limits) {
        struct release_os_image img = { .sha256 = s_sha, .size = 5 };
        errno = 0;
        cr_assert_null(payload_build("c", 1, "v", "u", &img, NULL, NULL, PAYLOAD_MAX_MANIFESTS + 1, NULL));
        cr_assert_eq(errno, E2BIG);
        cr_assert_null(payload_build(NULL, 1, "v", "u", &img, NULL, NULL, 0, NULL));
        cr_assert_null(payload_build("c", 1, "v", "u", NULL, NULL, NULL, 0, NULL));
}

Test(payload, sign_fields) {
        json_object *p = build("c-1", 1);
        struct payload_signed s, s2;
        cr_assert_eq(payload_sign(p, key, &s), 0);
        cr_assert_str_eq(s.canonical, CANON);
        cr_assert_eq(s.len, strlen(CANON));

        uint8_t d[CRYPTO_SHA256_LEN];
        char hex[2 * CRYPTO_SHA256_LEN + 1];
        cr_assert_eq(crypto_sha256(CANON, strlen(CANON), d), 0);
        crypto_hex(d, sizeof d, hex);
        cr_assert_eq(strlen(s.digest), PAYLOAD_DIGEST_LEN);
        cr_assert(strncmp(s.digest, "sha256:", 7) == 0);
        cr_assert_str_eq(s.digest + 7, hex);

        uint8_t sig[CRYPTO_SIG_LEN];
        size_t n;
        cr_assert_eq(strlen(s.signature), 86);
        cr_assert_eq(base64url_decode_buf(s.signature, strlen(s.signature), sig, sizeof sig, &n), 0);
        cr_assert_eq(n, 64);
        cr_assert_eq(crypto_verify_digest(pub, d, sig), 0);
        cr_assert_eq(crypto_verify_digest(other, d, sig), -EBADMSG);

        /* Deterministic signatures: same payload, same bytes. */
        cr_assert_eq(payload_sign(p, key, &s2), 0);
        cr_assert_str_eq(s2.signature, s.signature);
        payload_signed_free(&s2);
        payload_signed_free(&s);
        json_object_put(p);
}

Test(payload, sign_refusals) {
        json_object *p = build("c-1", 1);
        struct payload_signed s;
        cr_assert_eq(payload_sign(p, pub, &s), -ENOKEY);
        cr_assert_null(s.canonical);
        cr_assert_null(s.signature);
        json_object_object_add(p, "ratio", json_object_new_double(0.5));
        cr_assert_eq(payload_sign(p, key, &s), -EINVAL);
        cr_assert_null(s.signature);
        json_object_put(p);
        json_object *arr = json_object_new_array();
        cr_assert_eq(payload_sign(arr, key, &s), -EINVAL);
        json_object_put(arr);
}

Test(payload, envelope_exact) {
        json_object *p = build("c-1", 1);
        struct payload_signed s;
        cr_assert_eq(payload_sign(p, key, &s), 0);
        char *env = payload_envelope("c-1", 1, s.digest, s.signature, s.canonical, s.len);
        char *want = NULL;
        cr_assert_geq(asprintf(&want, "{\"cluster_id\":\"c-1\",\"digest\":\"%s\",\"payload\":%s,\"revision\":1,"
                                      "\"signature\":\"%s\"}",
                               s.digest, CANON, s.signature),
                      0);
        cr_assert_str_eq(env, want);

        /* The envelope is canonical JSON itself. */
        json_object *e = json_tokener_parse(env);
        cr_assert_not_null(e);
        char *c = NULL;
        size_t len;
        cr_assert_eq(canonjson_serialize(e, &c, &len), 0);
        cr_assert_str_eq(c, env);
        free(c);
        json_object_put(e);

        /* A cluster id that needs escaping is a JSON string. */
        char *odd = payload_envelope("a\"b\\c", 22, s.digest, s.signature, "{}", 2);
        cr_assert(strncmp(odd, "{\"cluster_id\":\"a\\\"b\\\\c\",", 24) == 0, "%s", odd);
        cr_assert_not_null(strstr(odd, ",\"payload\":{},\"revision\":22,"));
        free(odd);

        free(want);
        free(env);
        payload_signed_free(&s);
        json_object_put(p);
}

/* ---- verify ---------------------------------------------------------------- */

Test(payload, verify_ok) {
        char *env = make_envelope("c-1", 1, key);
        json_object *p = NULL;
        cr_assert_eq(payload_verify(env, strlen(env), pub, "c-1", 1, &p, err, sizeof err), 0);
        char *c = NULL;
        size_t len;
        cr_assert_eq(canonjson_serialize(p, &c, &len), 0);
        cr_assert_str_eq(c, CANON);
        free(c);
        json_object_put(p);

        cr_assert_eq(verify(env, strlen(env), NULL, 0), 0);
        cr_assert_eq(verify(env, strlen(env), "c-1", 0), 0);
        cr_assert_eq(verify(env, strlen(env), NULL, 1), 0);
        /* The private key verifies too. */
        cr_assert_eq(payload_verify(env, strlen(env), key, NULL, 0, &p, NULL, 0), 0);
        json_object_put(p);
        /* Trailing whitespace is fine. */
        char *ws = NULL;
        cr_assert_geq(asprintf(&ws, "%s \n\t\r\n", env), 0);
        cr_assert_eq(verify_s(ws), 0);
        free(ws);
        free(env);
}

Test(payload, verify_expectations) {
        char *env = make_envelope("c-1", 1, key);
        cr_assert_eq(verify(env, strlen(env), "c-2", 1), -EBADMSG);
        cr_assert_str_eq(err, "payload is for cluster c-1, expected c-2");
        cr_assert_eq(verify(env, strlen(env), "c-1", 2), -EBADMSG);
        cr_assert_str_eq(err, "payload is for revision 1, expected 2");
        cr_assert_eq(verify(env, strlen(env), "c-", 0), -EBADMSG);
        cr_assert_eq(verify(env, strlen(env), "c-1x", 0), -EBADMSG);
        free(env);

        env = make_envelope("c-1", 3, key);
        cr_assert_eq(verify(env, strlen(env), "c-1", 2), -EBADMSG);
        cr_assert_str_eq(err, "payload is for revision 3, expected 2");
        cr_assert_eq(verify(env, strlen(env), "c-1", 3), 0);
        free(env);
}

Test(payload, every_changed_byte_of_the_payload_fails) {
        char *env = make_envelope("c-1", 1, key);
        size_t len = strlen(env);
        const char *at = strstr(env, "\"payload\":");
        cr_assert_not_null(at);
        size_t off = (size_t) (at - env) + 10, plen = strlen(CANON);
        cr_assert(memcmp(env + off, CANON, plen) == 0);

        const unsigned char subst[] = { ' ', '"', '\\', '0', '1', '}', ']', ',', ':', 'A', 'z', '\n', 0x7f };
        char *copy = malloc(len + 1);
        cr_assert_not_null(copy);
        unsigned tried = 0;
        for (size_t i = off; i < off + plen; i++) {
                unsigned char b = (unsigned char) env[i];
                unsigned char cand[3 + sizeof subst];
                size_t nc = 0;
                cand[nc++] = b ^ 0x01;
                cand[nc++] = b ^ 0x20;
                cand[nc++] = b ^ 0x80;
                memcpy(cand + nc, subst, sizeof subst);
                nc += sizeof subst;
                for (size_t j = 0; j < nc; j++) {
                        if (cand[j] == b || cand[j] == 0)
                                continue;
                        memcpy(copy, env, len + 1);
                        copy[i] = (char) cand[j];
                        int r = verify(copy, len, NULL, 0);
                        cr_assert(r == -EBADMSG || r == -EINVAL, "byte %zu -> 0x%02x: %d (%s)", i - off, cand[j],
                                  r, err);
                        tried++;
                }
        }
        cr_assert_gt(tried, 10 * plen);

        /* Removing or doubling a byte fails as well. */
        for (size_t i = off; i < off + plen; i++) {
                memcpy(copy, env, i);
                memcpy(copy + i, env + i + 1, len - i);
                cr_assert_neq(verify(copy, len - 1, NULL, 0), 0, "byte %zu removed", i - off);
        }
        free(copy);
        free(env);
}

Test(payload, digest_changed) {
        char *env = make_envelope("c-1", 1, key);
        char *d = strstr(env, "\"digest\":\"sha256:") + 17;
        char save = d[5];
        d[5] = d[5] == '0' ? '1' : '0';
        cr_assert_eq(verify_s(env), -EBADMSG);
        cr_assert_str_eq(err, "payload digest does not match");
        d[5] = save;
        cr_assert_eq(verify_s(env), 0);

        /* Not the digest form at all. */
        const char *bad[] = { "sha256:", "sha512:", "SHA256:" };
        for (size_t i = 0; i < 3; i++) {
                char *e2 = replace(env, "\"digest\":\"sha256:", "\"digest\":\"sha256:");
                memcpy(strstr(e2, "\"digest\":\"") + 10, bad[i], 7);
                int r = verify_s(e2);
                if (i == 0)
                        cr_assert_eq(r, 0);
                else {
                        cr_assert_eq(r, -EBADMSG);
                        cr_assert_str_eq(err, "payload digest is not \"sha256:\" and 64 lower-case hex digits");
                }
                free(e2);
        }
        char *upper = strdup(env);
        char *h = strstr(upper, "\"digest\":\"sha256:") + 17;
        for (int i = 0; i < 64; i++)
                if (h[i] >= 'a' && h[i] <= 'f')
                        h[i] = (char) (h[i] - 'a' + 'A');
        cr_assert_eq(verify_s(upper), -EBADMSG);
        cr_assert_str_eq(err, "payload digest is not \"sha256:\" and 64 lower-case hex digits");
        free(upper);

        char *longer = replace(env, "\",\"payload\"", "0\",\"payload\"");
        cr_assert_eq(verify_s(longer), -EBADMSG);
        cr_assert_str_eq(err, "payload digest is not \"sha256:\" and 64 lower-case hex digits");
        free(longer);
        free(env);
}

/* env with its "signature" value replaced by sig. */
static char *with_signature(const char *env, const char *sig) {
        const char *at = strstr(env, "\"signature\":\"");
        cr_assert_not_null(at);
        char *out = NULL;
        cr_assert_geq(asprintf(&out, "%.*s\"signature\":\"%s\"}", (int) (at - env), env, sig), 0);
        return out;
}

Test(payload, signature_by_another_key) {
        char *env = make_envelope("c-1", 1, other);
        cr_assert_eq(verify_s(env), -EBADMSG);
        cr_assert_str_eq(err, "payload signature is not the coordinator's");

        /* Our digest and payload, another key's signature of the same digest. */
        char *mine = make_envelope("c-1", 1, key);
        const char *sig = strstr(env, "\"signature\":\"") + 13;
        char *theirs = strndup(sig, 86);
        char *mixed = with_signature(mine, theirs);
        cr_assert_eq(verify_s(mixed), -EBADMSG);
        cr_assert_str_eq(err, "payload signature is not the coordinator's");
        free(mixed);
        free(theirs);

        /* Another revision's valid signature does not carry over. */
        char *rev2 = make_envelope("c-1", 2, key);
        sig = strstr(rev2, "\"signature\":\"") + 13;
        theirs = strndup(sig, 86);
        mixed = with_signature(mine, theirs);
        cr_assert_eq(verify_s(mixed), -EBADMSG);
        cr_assert_str_eq(err, "payload signature is not the coordinator's");
        free(mixed);
        free(theirs);
        free(rev2);
        free(mine);
        free(env);
}

Test(payload, signature_malformed) {
        char *env = make_envelope("c-1", 1, key);
        const char *at = strstr(env, "\"signature\":\"") + 13;
        char good[87];
        memcpy(good, at, 86);
        good[86] = '\0';
        cr_assert_eq(verify_s(env), 0);

        char *cases[8];
        size_t n = 0;
        cases[n++] = strndup(good, 85);                         /* truncated by one */
        cases[n++] = strndup(good, 84);                         /* 63 bytes */
        cases[n++] = strdup("");
        cr_assert_geq(asprintf(&cases[n++], "%s==", good), 0); /* padding */
        cr_assert_geq(asprintf(&cases[n++], "%sAAAA", good), 0); /* 67 bytes */
        cases[n] = strdup(good);
        cases[n][10] = '+';                                     /* base64, not base64url */
        n++;
        cases[n] = strdup(good);
        cases[n][20] = '.';
        n++;
        cases[n] = strdup(good);
        cases[n][85] = cases[n][85] == 'A' ? 'B' : 'A';         /* non-zero unused bits or another sig */
        n++;
        for (size_t i = 0; i < n; i++) {
                char *e = with_signature(env, cases[i]);
                cr_assert_eq(verify_s(e), -EBADMSG, "case %zu", i);
                if (i < n - 1)
                        cr_assert_str_eq(err, "payload signature is not base64url of 64 bytes", "case %zu", i);
                free(e);
                free(cases[i]);
        }

        /* Not a string. */
        char *e = replace(env, "\"signature\":\"", "\"signature\":1,\"x\":\"");
        cr_assert_eq(verify_s(e), -EINVAL);
        free(e);
        free(env);
}

Test(payload, reformatted_envelope_verifies) {
        char *env = make_envelope("c-1", 1, key);
        json_object *e = json_tokener_parse(env);
        cr_assert_not_null(e);
        /* json-c's pretty form: whitespace everywhere and "\/" escapes. */
        const char *pretty = json_object_to_json_string_ext(e, JSON_C_TO_STRING_PRETTY);
        cr_assert_not_null(strstr(pretty, "\n"));
        cr_assert_not_null(strstr(pretty, "http:\\/\\/x"));
        cr_assert_eq(verify(pretty, strlen(pretty), "c-1", 1), 0);

        /* Members reordered, characters spelled as escapes. */
        char *alt = replace(env, "\"kind\":\"ConfigMap\"", "\"kind\" : \"Config\\u004dap\"");
        char *alt2 = replace(alt, "\"group\":\"\",", "");
        char *alt3 = replace(alt2, "\"content\":\"apiVersion", "\"group\":\"\",   \"content\":\"apiVersion");
        cr_assert_eq(verify_s(alt3), 0);
        free(alt);
        free(alt2);
        free(alt3);

        /* ...but a changed manifest byte in the pretty form does not. */
        char *changed = replace(pretty, "kind: ConfigMap", "kind: ConfigMaq");
        cr_assert_eq(verify_s(changed), -EBADMSG);
        cr_assert_str_eq(err, "payload digest does not match");
        free(changed);
        changed = replace(pretty, "\"openshift-a\"", "\"openshift-b\"");
        cr_assert_eq(verify_s(changed), -EBADMSG);
        free(changed);
        json_object_put(e);
        free(env);
}

Test(payload, envelope_and_payload_disagree) {
        char *env = make_envelope("c-1", 1, key);
        /* The envelope's own cluster_id and revision are not signed: they
         * must agree with the signed payload. */
        char *e = replace(env, "{\"cluster_id\":\"c-1\"", "{\"cluster_id\":\"c-2\"");
        cr_assert_eq(verify(e, strlen(e), NULL, 0), -EBADMSG);
        cr_assert_str_eq(err, "payload is for cluster c-1, the envelope says c-2");
        cr_assert_eq(verify(e, strlen(e), "c-2", 0), -EBADMSG);
        free(e);
        e = replace(env, ",\"revision\":1,\"signature\"", ",\"revision\":2,\"signature\"");
        cr_assert_eq(verify(e, strlen(e), NULL, 2), -EBADMSG);
        cr_assert_str_eq(err, "payload is for revision 1, the envelope says 2");
        free(e);
        free(env);
}

Test(payload, not_an_envelope) {
        char *env = make_envelope("c-1", 1, key);
        const char *texts[] = {
                "", "null", "[]", "\"x\"", "{}", "{", "{\"cluster_id\":\"c-1\"}",
                "{\"cluster_id\":\"c-1\",\"digest\":\"sha256:00\",\"payload\":{},\"revision\":1}",
        };
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
                cr_assert_eq(verify_s(texts[i]), -EINVAL, "%s", texts[i]);
        }
        cr_assert_eq(verify_s("{}"), -EINVAL);
        cr_assert_str_eq(err, "payload envelope has no string \"cluster_id\"");
        cr_assert_eq(verify_s("[]"), -EINVAL);
        cr_assert_str_eq(err, "payload envelope is not a JSON object");
        cr_assert_eq(verify_s("{"), -EINVAL);
        cr_assert(strncmp(err, "payload envelope is not JSON: ", 30) == 0, "%s", err);

        struct {
                const char *from, *to, *msg;
        } edits[] = {
                { "{\"cluster_id\":", "{\"extra\":1,\"cluster_id\":",
                  "payload envelope has an unknown member \"extra\"" },
                { ",\"revision\":1,", ",\"revision\":\"1\",", "payload envelope has no int \"revision\"" },
                { ",\"revision\":1,", ",\"revision\":0,", "payload envelope revision must be positive" },
                { ",\"revision\":1,", ",\"revision\":-1,", "payload envelope revision must be positive" },
                { ",\"revision\":1,", ",\"revision\":1.0,", "payload envelope has no int \"revision\"" },
                { ",\"revision\":1,", ",\"revision\":99999999999999999999,",
                  "payload envelope revision is out of range" },
                { ",\"revision\":1,", ",\"revision\":9223372036854775808,",
                  "payload envelope revision is out of range" },
                { ",\"revision\":1,", ",\"revision\":-99999999999999999999,", NULL },
                { "\"payload\":{", "\"payload\":[{", NULL },
                { "{\"cluster_id\":\"c-1\"", "{\"cluster_id\":\"\"",
                  "payload envelope cluster_id must be 1 to 128 bytes" },
                { "{\"cluster_id\":\"c-1\"", "{\"cluster_id\":\"c 1\"",
                  "payload envelope cluster_id must be printable ASCII" },
                { "{\"cluster_id\":\"c-1\"", "{\"cluster_id\":null", "payload envelope has no string \"cluster_id\"" },
                { "\"digest\":\"", "\"digest\":7,\"x\":\"", NULL },
                { "\"payload\":{", "\"payload\":\"\",\"x\":{", NULL },
        };
        for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
                char *e = replace(env, edits[i].from, edits[i].to);
                cr_assert_eq(verify_s(e), -EINVAL, "edit %zu: %s", i, err);
                if (edits[i].msg)
                        cr_assert_str_eq(err, edits[i].msg);
                free(e);
        }

        /* Data after the object; a NUL byte. */
        char *e = NULL;
        cr_assert_geq(asprintf(&e, "%s x", env), 0);
        cr_assert_eq(verify_s(e), -EINVAL);
        /* json-c's strict mode refuses it itself ("not JSON: unexpected character"). */
        cr_assert(strncmp(err, "payload envelope ", 17) == 0, "%s", err);
        free(e);
        cr_assert_geq(asprintf(&e, "%s{}", env), 0);
        cr_assert_eq(verify_s(e), -EINVAL);
        free(e);
        size_t len = strlen(env);
        e = malloc(len + 2);
        memcpy(e, env, len);
        e[len] = '\0';
        e[len + 1] = ' ';
        cr_assert_eq(verify(e, len + 2, NULL, 0), -EINVAL);
        cr_assert_str_eq(err, "payload envelope contains a NUL byte");
        free(e);

        /* Too deep: refused by the parser before anything else. */
        char deep[200] = "";
        for (int i = 0; i < 20; i++)
                strcat(deep, "[");
        for (int i = 0; i < 20; i++)
                strcat(deep, "]");
        char *d2 = NULL;
        cr_assert_geq(asprintf(&d2, "{\"deep\":%s}", deep), 0);
        cr_assert_eq(verify_s(d2), -EINVAL);
        cr_assert(strncmp(err, "payload envelope is not JSON: ", 30) == 0, "%s", err);
        free(d2);

        /* Over the size limit: refused before it is read. */
        json_object *p = NULL;
        cr_assert_eq(payload_verify(env, (size_t) PAYLOAD_MAX_ENVELOPE + 1, pub, NULL, 0, &p, err, sizeof err), -E2BIG);
        cr_assert_null(p);
        cr_assert_str_eq(err, "payload envelope is larger than 268435456 bytes");
        free(env);
}

/* An envelope over a hand-made payload, signed with key. */
static char *envelope_of(const char *payload_json, const char *cluster, int64_t rev) {
        json_object *p = json_tokener_parse(payload_json);
        cr_assert_not_null(p);
        struct payload_signed s;
        cr_assert_eq(payload_sign(p, key, &s), 0);
        char *env = payload_envelope(cluster, rev, s.digest, s.signature, s.canonical, s.len);
        payload_signed_free(&s);
        json_object_put(p);
        return env;
}

Test(payload, signed_payload_shape) {
        char *env = envelope_of("{\"revision\":1}", "c-1", 1);
        cr_assert_eq(verify_s(env), -EBADMSG);
        cr_assert_str_eq(err, "payload has no string \"cluster_id\"");
        free(env);
        env = envelope_of("{\"cluster_id\":\"c-1\",\"revision\":\"1\"}", "c-1", 1);
        cr_assert_eq(verify_s(env), -EBADMSG);
        cr_assert_str_eq(err, "payload has no integer \"revision\"");
        free(env);
        env = envelope_of("{\"cluster_id\":\"c-1\",\"revision\":1}", "c-1", 1);
        cr_assert_eq(verify_s(env), 0);
        free(env);

        /* A number that is not an integer cannot be what was signed. */
        env = make_envelope("c-1", 1, key);
        char *e = replace(env, "\"size\":1048576", "\"size\":1048576.0");
        cr_assert_eq(verify_s(e), -EBADMSG);
        cr_assert(strncmp(err, "payload is not canonical JSON material", 38) == 0, "%s", err);
        free(e);
        free(env);
}

/* ---- files and image -------------------------------------------------------- */

Test(payload, files_from_verified_payload) {
        char *env = make_envelope("c-1", 1, key);
        json_object *p = NULL;
        cr_assert_eq(payload_verify(env, strlen(env), pub, "c-1", 1, &p, err, sizeof err), 0);
        struct payload_file *f = NULL;
        size_t n = 0;
        cr_assert_eq(payload_files(p, &f, &n, err, sizeof err), 0);
        cr_assert_eq(n, 2);
        cr_assert_str_eq(f[0].path, "0000_50_a.yaml");
        cr_assert_eq(f[0].len, strlen(s_a_content));
        cr_assert(memcmp(f[0].content, s_a_content, f[0].len) == 0);
        cr_assert_str_eq(f[1].path, "crd.1.yaml");
        cr_assert_eq(f[1].len, strlen(s_crd_content));
        cr_assert(memcmp(f[1].content, s_crd_content, f[1].len) == 0);
        free(f);

        struct payload_image img;
        cr_assert_eq(payload_image(p, &img, err, sizeof err), 0);
        cr_assert_str_eq(img.url, "http://x/os.img");
        cr_assert_str_eq(img.sha256, SHA);
        cr_assert_eq(img.size, 1048576);
        cr_assert_str_eq(img.root_label, "root");
        json_object_put(p);
        free(env);
}

static int files_of(const char *manifests_json, size_t *n) {
        char *text = NULL;
        cr_assert_geq(asprintf(&text, "{\"manifests\":%s}", manifests_json), 0);
        json_object *p = json_tokener_parse(text);
        cr_assert_not_null(p, "%s", text);
        free(text);
        struct payload_file *f = (struct payload_file *) 0x1;
        memset(err, 0, sizeof err);
        int r = payload_files(p, &f, n, err, sizeof err);
        if (r < 0) {
                cr_assert_null(f);
                cr_assert_eq(*n, 0);
                cr_assert_neq(err[0], '\0');
        }
        free(f);
        json_object_put(p);
        return r;
}

Test(payload, file_paths) {
        size_t n;
        struct {
                const char *json, *msg;
        } bad[] = {
                { "[{\"path\":\"../x\",\"content\":\"\"}]", "manifest 0: path \"../x\" is not a plain file name" },
                { "[{\"path\":\"a/b\",\"content\":\"\"}]", "manifest 0: path \"a/b\" is not a plain file name" },
                { "[{\"path\":\"/etc/passwd\",\"content\":\"\"}]", NULL },
                { "[{\"path\":\".hidden\",\"content\":\"\"}]", "manifest 0: path \".hidden\" starts with '.'" },
                { "[{\"path\":\".\",\"content\":\"\"}]", NULL },
                { "[{\"path\":\"..\",\"content\":\"\"}]", NULL },
                { "[{\"path\":\"\",\"content\":\"\"}]", "manifest 0: empty path" },
                { "[{\"path\":\"a\\tb\",\"content\":\"\"}]", "manifest 0: path contains a control character" },
                { "[{\"path\":\"a\\u0000b\",\"content\":\"\"}]", "manifest 0: path contains a control character" },
                { "[{\"path\":\"a\\nb\",\"content\":\"\"}]", NULL },
                { "[{\"path\":\"a\\u007f\",\"content\":\"\"}]", NULL },
                { "[{\"path\":\"a.yaml\",\"content\":\"x\"},{\"path\":\"b.yaml\",\"content\":\"\"},"
                  "{\"path\":\"a.yaml\",\"content\":\"y\"}]",
                  "manifest 2: path \"a.yaml\" repeats manifest 0's" },
                { "[{\"path\":\"a.yaml\"}]", "manifest 0 (\"a.yaml\") has no string \"content\"" },
                { "[{\"path\":\"a.yaml\",\"content\":1}]", NULL },
                { "[{\"path\":1,\"content\":\"\"}]", "manifest 0 has no string \"path\"" },
                { "[{\"content\":\"\"}]", NULL },
                { "[{\"path\":\"ok.yaml\",\"content\":\"\"},\"x\"]", "manifest 1 is not an object" },
                { "{}", "payload has no array \"manifests\"" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(files_of(bad[i].json, &n), -EINVAL, "case %zu", i);
                if (bad[i].msg)
                        cr_assert_str_eq(err, bad[i].msg, "case %zu", i);
        }

        /* Length: 255 bytes fine, 256 not. */
        char name[300], *json = NULL;
        memset(name, 'n', 255);
        name[255] = '\0';
        cr_assert_geq(asprintf(&json, "[{\"path\":\"%s\",\"content\":\"\"}]", name), 0);
        cr_assert_eq(files_of(json, &n), 0);
        cr_assert_eq(n, 1);
        free(json);
        name[255] = 'n';
        name[256] = '\0';
        cr_assert_geq(asprintf(&json, "[{\"path\":\"%s\",\"content\":\"\"}]", name), 0);
        cr_assert_eq(files_of(json, &n), -EINVAL);
        cr_assert_str_eq(err, "manifest 0: path is longer than 255 bytes");
        free(json);

        /* Fine: dots inside, UTF-8, empty list, content with NUL. */
        cr_assert_eq(files_of("[{\"path\":\"a..b.yaml\",\"content\":\"x\\u0000y\"},{\"path\":\"caf\\u00e9.json\","
                              "\"content\":\"{}\"}]",
                              &n),
                     0);
        cr_assert_eq(n, 2);
        cr_assert_eq(files_of("[]", &n), 0);
        cr_assert_eq(n, 0);

        /* Too many. */
        json_object *p = json_object_new_object(), *a = json_object_new_array();
        json_object_object_add(p, "manifests", a);
        for (int i = 0; i <= PAYLOAD_MAX_MANIFESTS; i++)
                json_object_array_add(a, json_object_new_object());
        struct payload_file *f = NULL;
        cr_assert_eq(payload_files(p, &f, &n, err, sizeof err), -EINVAL);
        cr_assert_str_eq(err, "payload has more than 20000 manifests");
        json_object_put(p);
}

Test(payload, file_content_len_with_nul) {
        json_object *p = json_tokener_parse("{\"manifests\":[{\"path\":\"a.yaml\",\"content\":\"x\\u0000y\"}]}");
        struct payload_file *f = NULL;
        size_t n;
        cr_assert_eq(payload_files(p, &f, &n, err, sizeof err), 0);
        cr_assert_eq(f[0].len, 3);
        cr_assert(memcmp(f[0].content, "x\0y", 3) == 0);
        free(f);
        json_object_put(p);
}

static int image_of(const char *os_image_json) {
        char *text = NULL;
        cr_assert_geq(asprintf(&text, "{\"os_image\":%s}", os_image_json), 0);
        json_object *p = json_tokener_parse(text);
        cr_assert_not_null(p, "%s", text);
        free(text);
        struct payload_image img;
        int r = payload_image(p, &img, err, sizeof err);
        if (r < 0)
                cr_assert_null(img.url);
        json_object_put(p);
        return r;
}

Test(payload, image_fields) {
        cr_assert_eq(image_of("{\"url\":\"u\",\"sha256\":\"" SHA "\",\"size\":1,\"root_label\":\"root\"}"), 0);
        struct {
                const char *json, *msg;
        } bad[] = {
                { "7", "payload has no object \"os_image\"" },
                { "{\"sha256\":\"" SHA "\",\"size\":1,\"root_label\":\"r\"}", "payload os_image has no \"url\"" },
                { "{\"url\":\"\",\"sha256\":\"" SHA "\",\"size\":1,\"root_label\":\"r\"}",
                  "payload os_image has no \"url\"" },
                { "{\"url\":\"u\",\"sha256\":\"AB" SHA "\",\"size\":1,\"root_label\":\"r\"}",
                  "payload os_image sha256 is not 64 lower-case hex digits" },
                { "{\"url\":\"u\",\"sha256\":\"ABababababababababababababababababababababababababababababababab\","
                  "\"size\":1,\"root_label\":\"r\"}",
                  "payload os_image sha256 is not 64 lower-case hex digits" },
                { "{\"url\":\"u\",\"size\":1,\"root_label\":\"r\"}", NULL },
                { "{\"url\":\"u\",\"sha256\":\"" SHA "\",\"size\":0,\"root_label\":\"r\"}",
                  "payload os_image size is not a positive integer" },
                { "{\"url\":\"u\",\"sha256\":\"" SHA "\",\"size\":-1,\"root_label\":\"r\"}", NULL },
                { "{\"url\":\"u\",\"sha256\":\"" SHA "\",\"size\":\"1\",\"root_label\":\"r\"}", NULL },
                { "{\"url\":\"u\",\"sha256\":\"" SHA "\",\"root_label\":\"r\"}", NULL },
                { "{\"url\":\"u\",\"sha256\":\"" SHA "\",\"size\":1}", "payload os_image has no \"root_label\"" },
                { "{\"url\":\"u\",\"sha256\":\"" SHA "\",\"size\":1,\"root_label\":\"\"}", NULL },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(image_of(bad[i].json), -EINVAL, "case %zu", i);
                if (bad[i].msg)
                        cr_assert_str_eq(err, bad[i].msg, "case %zu", i);
        }
        json_object *p = json_object_new_object();
        struct payload_image img;
        cr_assert_eq(payload_image(p, &img, err, sizeof err), -EINVAL);
        json_object_put(p);
}

/* Issue 12, item 12: the payload signature is low-S, and an envelope whose
 * signature is the high-S twin (s := n - s, as valid for plain ECDSA) is
 * refused. */
Test(payload, high_s_signature_is_refused) {
        json_object *p = build("c-1", 1);
        struct payload_signed s;
        cr_assert_eq(payload_sign(p, key, &s), 0);
        uint8_t sig[64];
        size_t n;
        cr_assert_eq(base64url_decode_buf(s.signature, strlen(s.signature), sig, sizeof sig, &n), 0);
        mbedtls_mpi order, v, half;
        mbedtls_mpi_init(&order);
        mbedtls_mpi_init(&v);
        mbedtls_mpi_init(&half);
        cr_assert_eq(mbedtls_mpi_read_string(&order, 16,
                                             "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"), 0);
        cr_assert_eq(mbedtls_mpi_copy(&half, &order), 0);
        cr_assert_eq(mbedtls_mpi_shift_r(&half, 1), 0);
        cr_assert_eq(mbedtls_mpi_read_binary(&v, sig + 32, 32), 0);
        cr_assert_leq(mbedtls_mpi_cmp_mpi(&v, &half), 0, "signed with a low S");
        cr_assert_eq(mbedtls_mpi_sub_mpi(&v, &order, &v), 0);
        cr_assert_eq(mbedtls_mpi_write_binary(&v, sig + 32, 32), 0);
        mbedtls_mpi_free(&half);
        mbedtls_mpi_free(&v);
        mbedtls_mpi_free(&order);
        char *high = NULL;
        cr_assert_eq(base64url_encode(sig, sizeof sig, &high), 0);

        char *good = payload_envelope("c-1", 1, s.digest, s.signature, s.canonical, s.len);
        cr_assert_eq(verify_s(good), 0);
        /* The same envelope with the high-S twin spliced in is refused. */
        char *at = strstr(good, s.signature), *bad = strdup(good);
        cr_assert_not_null(at);
        cr_assert_eq(strlen(high), strlen(s.signature));
        memcpy(bad + (at - good), high, strlen(high));
        cr_assert_eq(verify_s(bad), -EBADMSG);
        cr_assert(strstr(err, "signature"), "%s", err);
        /* A revision stored with a high S (signed before signing was low-S)
         * is handed out as its low twin, which verifies. */
        char *healed = payload_envelope("c-1", 1, s.digest, high, s.canonical, s.len);
        cr_assert_str_eq(healed, good);
        cr_assert_eq(verify_s(healed), 0);
        uint8_t twice[64];
        memcpy(twice, sig, sizeof twice);
        cr_assert_eq(crypto_sig_low_s(twice), 1, "high S turned low");
        cr_assert_eq(crypto_sig_low_s(twice), 0, "low S stays");
        free(healed);
        free(good);
        free(bad);
        free(high);
        payload_signed_free(&s);
        json_object_put(p);
}

/* The settings members: their exact canonical shape, one host's view
 * joined from them, and every value an agent would write refused when it
 * is not what it must be. */
static json_object *with_settings(const struct payload_settings *s) {
        struct release_os_image img = { .url = s_path, .sha256 = s_sha, .size = 5 };
        json_object *p = payload_build("c-1", 1, "v", "u", &img, NULL, NULL, 0, s);
        cr_assert_not_null(p);
        return p;
}

Test(payload, host_settings) {
        struct strv ntp = { 0 };
        cr_assert_eq(strv_push(&ntp, "ntp.example.com"), 0);
        cr_assert_eq(strv_push(&ntp, "2001:db8::123"), 0);
        struct payload_host hosts[] = {
                { .host_id = "h-1", .role = "master", .hostname = "node-1", .ntp_sources = &ntp,
                  .ssh_authorized_key = "ssh-ed25519 AAAA a@b\nssh-rsa BBBB c@d\n" },
                { .host_id = "h-2", .role = "worker" },
        };
        struct payload_settings s = { .cluster_name = "prod", .base_dns_domain = "example.com", .api_vip = "10.0.0.5",
                                      .ingress_vip = "fd00::6", .pull_secret = "{\"auths\":{}}", .hosts = hosts,
                                      .n_hosts = 2 };
        json_object *p = with_settings(&s);
        char *c = NULL;
        size_t len;
        cr_assert_eq(canonjson_serialize(p, &c, &len), 0);
        cr_assert(strstr(c, "\"hosts\":{\"h-1\":{\"hostname\":\"node-1\",\"ntp_sources\":[\"ntp.example.com\","
                            "\"2001:db8::123\"],\"role\":\"master\",\"ssh_authorized_key\":\"ssh-ed25519 AAAA a@b\\n"
                            "ssh-rsa BBBB c@d\\n\"},\"h-2\":{\"ntp_sources\":[],\"role\":\"worker\"}}"), "%s", c);
        cr_assert(strstr(c, "\"settings\":{\"api_vip\":\"10.0.0.5\",\"base_dns_domain\":\"example.com\","
                            "\"cluster_name\":\"prod\",\"ingress_vip\":\"fd00::6\",\"pull_secret\":"
                            "\"{\\\"auths\\\":{}}\"}"), "%s", c);
        free(c);

        struct payload_host_view v;
        char msg[256];
        cr_assert_eq(payload_host_settings(p, "h-1", &v, msg, sizeof msg), 0, "%s", msg);
        cr_assert_str_eq(v.role, "master");
        cr_assert_str_eq(v.hostname, "node-1");
        cr_assert_str_eq(v.cluster_id, "c-1");
        cr_assert_str_eq(v.cluster_name, "prod");
        cr_assert_str_eq(v.api_vip, "10.0.0.5");
        cr_assert_str_eq(v.ingress_vip, "fd00::6");
        cr_assert_eq(v.n_ntp_sources, 2);
        cr_assert_str_eq(v.ntp_sources[1], "2001:db8::123");
        cr_assert_eq(payload_host_settings(p, "h-2", &v, msg, sizeof msg), 0, "%s", msg);
        cr_assert_null(v.hostname);
        cr_assert_null(v.ssh_authorized_key);
        cr_assert_eq(v.n_ntp_sources, 0);
        cr_assert_eq(payload_host_settings(p, "h-3", &v, msg, sizeof msg), -ENOENT);
        cr_assert_str_eq(msg, "payload carries no settings for host h-3");
        cr_assert_eq(payload_host_settings(p, NULL, &v, msg, sizeof msg), -ENOENT);
        json_object_put(p);
        p = with_settings(NULL);
        cr_assert_eq(payload_host_settings(p, "h-1", &v, msg, sizeof msg), -ENODATA);
        json_object_put(p);

        /* Values an agent must not write, one at a time. */
        struct strv badntp = { 0 };
        cr_assert_eq(strv_push(&badntp, "ntp.example.com\nNTP=evil"), 0);
        struct {
                const char *what;
                struct payload_host h;
                struct payload_settings s;
                const char *needle;
        } bad[] = {
                { "role", { .host_id = "h", .role = "boss" }, s, "role of host h" },
                { "hostname", { .host_id = "h", .role = "worker", .hostname = "node-1\nMUSTER_ROLE=master" }, s,
                  "hostname" },
                { "upper-case hostname", { .host_id = "h", .role = "worker", .hostname = "Node" }, s, "lower case" },
                { "ntp", { .host_id = "h", .role = "worker", .ntp_sources = &badntp }, s, "NTP source 0" },
                { "ssh", { .host_id = "h", .role = "worker", .ssh_authorized_key = "ssh-rsa A\r\n" }, s,
                  "ssh_authorized_key" },
        };
        size_t n_bad = sizeof bad / sizeof *bad;
        for (size_t i = 0; i < n_bad; i++) {
                bad[i].s.hosts = &bad[i].h;
                bad[i].s.n_hosts = 1;
        }
        for (size_t i = 0; i < n_bad; i++) {
                p = with_settings(&bad[i].s);
                msg[0] = '\0';
                cr_assert_eq(payload_host_settings(p, "h", &v, msg, sizeof msg), -EINVAL, "%s accepted", bad[i].what);
                cr_assert(strstr(msg, bad[i].needle), "%s: \"%s\" lacks \"%s\"", bad[i].what, msg, bad[i].needle);
                json_object_put(p);
        }
        struct payload_host ok = { .host_id = "h", .role = "worker" };
        struct payload_settings cs[] = {
                { .cluster_name = "prod", .api_vip = "10.0.0.300", .hosts = &ok, .n_hosts = 1 },
                { .cluster_name = "prod", .ingress_vip = "example.com", .hosts = &ok, .n_hosts = 1 },
                { .cluster_name = "prod", .base_dns_domain = "exa mple.com", .hosts = &ok, .n_hosts = 1 },
                { .cluster_name = "prod", .pull_secret = "[1]", .hosts = &ok, .n_hosts = 1 },
                { .cluster_name = "prod", .pull_secret = "{\"a\":", .hosts = &ok, .n_hosts = 1 },
                { .cluster_name = "pr\"od", .hosts = &ok, .n_hosts = 1 },
        };
        for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
                p = with_settings(&cs[i]);
                cr_assert_eq(payload_host_settings(p, "h", &v, msg, sizeof msg), -EINVAL, "cluster case %zu accepted", i);
                json_object_put(p);
        }
        strv_free(&ntp);
        strv_free(&badntp);
}

/* ---- deletions (issue 17) ---------------------------------------------------- */

/* payload_deletions of {"deletions": <json>} ({} when json is NULL). */
static int deletions_of(const char *json, struct payload_deletion **d, size_t *n, json_object **keep) {
        char *text = NULL;
        cr_assert_geq(asprintf(&text, json ? "{\"deletions\":%s}" : "{}", json), 0);
        json_object *p = json_tokener_parse(text);
        cr_assert_not_null(p, "%s", text);
        free(text);
        err[0] = '\0';
        *d = (struct payload_deletion *) 1; /* must be overwritten */
        *n = 99;
        int r = payload_deletions(p, d, n, err, sizeof err);
        if (r < 0) {
                cr_assert_null(*d);
                cr_assert_eq(*n, 0);
                cr_assert_neq(err[0], '\0');
        }
        *keep = p;
        return r;
}

Test(payload, deletions_absent_or_empty) {
        struct payload_deletion *d;
        size_t n;
        json_object *p;
        cr_assert_eq(deletions_of(NULL, &d, &n, &p), 0);
        cr_assert_null(d);
        cr_assert_eq(n, 0);
        json_object_put(p);
        cr_assert_eq(deletions_of("[]", &d, &n, &p), 0);
        cr_assert_null(d);
        cr_assert_eq(n, 0);
        json_object_put(p);
        cr_assert_eq(payload_deletions(NULL, &d, &n, err, sizeof err), 0);
        cr_assert_eq(n, 0);
}

Test(payload, deletions_are_read_in_order) {
        struct payload_deletion *d;
        size_t n;
        json_object *p;
        cr_assert_eq(deletions_of("[{\"group\":\"db.example.com\",\"version\":\"v1\",\"kind\":\"Database\","
                                  "\"namespace\":\"app\",\"name\":\"orders\"},"
                                  "{\"group\":\"\",\"kind\":\"Namespace\",\"name\":\"caf\\u00e9\",\"extra\":1}]",
                                  &d, &n, &p),
                     0, "%s", err);
        cr_assert_eq(n, 2);
        cr_assert_str_eq(d[0].group, "db.example.com");
        cr_assert_str_eq(d[0].kind, "Database");
        cr_assert_str_eq(d[0].namespace, "app");
        cr_assert_str_eq(d[0].name, "orders");
        cr_assert_str_eq(d[1].group, "", "the core group");
        cr_assert_str_eq(d[1].kind, "Namespace");
        cr_assert_null(d[1].namespace, "cluster-scoped");
        cr_assert_str_eq(d[1].name, "caf\xc3\xa9");
        free(d);
        json_object_put(p);
}

Test(payload, deletions_refusals) {
        struct payload_deletion *d;
        size_t n;
        json_object *p;
        char long_name[MANIFEST_MAX_NAME + 2], *json = NULL;
        struct {
                const char *json, *msg;
        } bad[] = {
                { "{}", "payload \"deletions\" is not an array" },
                { "null", "payload \"deletions\" is not an array" },
                { "[\"x\"]", "deletion 0 is not an object" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":\"n\"},[]]", "deletion 1 is not an object" },
                { "[{\"kind\":\"K\",\"name\":\"n\"}]", "deletion 0 has no \"group\"" },
                { "[{\"group\":null,\"kind\":\"K\",\"name\":\"n\"}]", "deletion 0: \"group\" is not a string" },
                { "[{\"group\":1,\"kind\":\"K\",\"name\":\"n\"}]", "deletion 0: \"group\" is not a string" },
                { "[{\"group\":\"\",\"name\":\"n\"}]", "deletion 0 has no \"kind\"" },
                { "[{\"group\":\"\",\"kind\":\"\",\"name\":\"n\"}]", "deletion 0: \"kind\" is empty" },
                { "[{\"group\":\"\",\"kind\":\"K\"}]", "deletion 0 has no \"name\"" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":\"\"}]", "deletion 0: \"name\" is empty" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":true}]", "deletion 0: \"name\" is not a string" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":\"n\",\"namespace\":\"\"}]",
                  "deletion 0: \"namespace\" is empty" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":\"n\",\"namespace\":null}]",
                  "deletion 0: \"namespace\" is not a string" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":\"n\",\"version\":2}]",
                  "deletion 0: \"version\" is not a string" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":\"a\\nb\"}]",
                  "deletion 0: \"name\" contains a control character" },
                { "[{\"group\":\"\",\"kind\":\"K\\u007f\",\"name\":\"n\"}]",
                  "deletion 0: \"kind\" contains a control character" },
                { "[{\"group\":\"a\\tb\",\"kind\":\"K\",\"name\":\"n\"}]",
                  "deletion 0: \"group\" contains a control character" },
                { "[{\"group\":\"\",\"kind\":\"K\",\"name\":\"n\",\"namespace\":\"x\\u0000y\"}]",
                  "deletion 0: \"namespace\" contains a control character" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                cr_assert_eq(deletions_of(bad[i].json, &d, &n, &p), -EINVAL, "case %zu", i);
                cr_assert_str_eq(err, bad[i].msg, "case %zu", i);
                json_object_put(p);
        }

        /* 253 bytes fine, 254 not, in every member. */
        static const char *const members[] = { "group", "kind", "namespace", "name" };
        for (size_t m = 0; m < 4; m++) {
                for (size_t len = MANIFEST_MAX_NAME; len <= MANIFEST_MAX_NAME + 1; len++) {
                        memset(long_name, 'x', len);
                        long_name[len] = '\0';
                        const char *v[4] = { "g", "K", "ns", "n" };
                        v[m] = long_name;
                        cr_assert_geq(asprintf(&json,
                                               "[{\"group\":\"%s\",\"kind\":\"%s\",\"namespace\":\"%s\",\"name\":\"%s\"}]",
                                               v[0], v[1], v[2], v[3]),
                                      0);
                        int r = deletions_of(json, &d, &n, &p);
                        if (len == MANIFEST_MAX_NAME) {
                                cr_assert_eq(r, 0, "%s: %s", members[m], err);
                                cr_assert_eq(n, 1);
                                free(d);
                        } else {
                                cr_assert_eq(r, -EINVAL, "%s", members[m]);
                                char want[128];
                                snprintf(want, sizeof want, "deletion 0: \"%s\" is longer than 253 bytes", members[m]);
                                cr_assert_str_eq(err, want);
                        }
                        json_object_put(p);
                        free(json);
                }
        }

        /* At most PAYLOAD_MAX_DELETIONS entries. */
        p = json_object_new_object();
        json_object *a = json_object_new_array();
        json_object_object_add(p, "deletions", a);
        for (int i = 0; i < PAYLOAD_MAX_DELETIONS; i++)
                json_object_array_add(a, json_tokener_parse("{\"group\":\"\",\"kind\":\"K\",\"name\":\"n\"}"));
        cr_assert_eq(payload_deletions(p, &d, &n, err, sizeof err), 0, "%s", err);
        cr_assert_eq(n, PAYLOAD_MAX_DELETIONS);
        free(d);
        json_object_array_add(a, json_tokener_parse("{\"group\":\"\",\"kind\":\"K\",\"name\":\"n\"}"));
        cr_assert_eq(payload_deletions(p, &d, &n, err, sizeof err), -EINVAL);
        cr_assert_null(d);
        cr_assert_str_eq(err, "payload has more than 10000 deletions");
        json_object_put(p);

        cr_assert_eq(payload_deletions(NULL, NULL, &n, err, sizeof err), -EINVAL);
}

Test(payload, deletions_to_json_round_trip) {
        const struct payload_deletion v[] = {
                { .group = "db.example.com", .kind = "Database", .namespace = "app", .name = "orders" },
                { .group = "", .kind = "Namespace", .name = "scratch" },
                { .group = NULL, .kind = "ConfigMap", .namespace = "app", .name = "cfg" },
        };
        json_object *a = payload_deletions_to_json(v, 3);
        cr_assert_not_null(a);
        char *text = NULL;
        size_t len;
        cr_assert_eq(canonjson_serialize(a, &text, &len), 0);
        cr_assert_str_eq(text, "[{\"group\":\"db.example.com\",\"kind\":\"Database\",\"name\":\"orders\","
                               "\"namespace\":\"app\"},"
                               "{\"group\":\"\",\"kind\":\"Namespace\",\"name\":\"scratch\"},"
                               "{\"group\":\"\",\"kind\":\"ConfigMap\",\"name\":\"cfg\",\"namespace\":\"app\"}]");
        free(text);

        /* What the coordinator builds, the agent reads back. */
        json_object *p = json_object_new_object();
        json_object_object_add(p, "deletions", a);
        struct payload_deletion *d;
        size_t n;
        cr_assert_eq(payload_deletions(p, &d, &n, err, sizeof err), 0, "%s", err);
        cr_assert_eq(n, 3);
        for (size_t i = 0; i < 3; i++) {
                cr_assert_str_eq(d[i].group, v[i].group ? v[i].group : "");
                cr_assert_str_eq(d[i].kind, v[i].kind);
                cr_assert_str_eq(d[i].name, v[i].name);
                if (v[i].namespace)
                        cr_assert_str_eq(d[i].namespace, v[i].namespace);
                else
                        cr_assert_null(d[i].namespace);
        }
        free(d);
        json_object_put(p);

        a = payload_deletions_to_json(NULL, 0);
        cr_assert_not_null(a);
        cr_assert_eq(json_object_array_length(a), 0);
        json_object_put(a);
        errno = 0;
        cr_assert_null(payload_deletions_to_json(NULL, 1));
        cr_assert_eq(errno, EINVAL);
}
