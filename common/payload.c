/* The install payload (DESIGN §6): built and signed by the coordinator,
 * checked by the agent before it writes anything. What is signed is the
 * canonical JSON of the payload, so the agent re-canonicalises what it
 * parsed and never trusts the bytes as sent. */
#include "payload.h"
#include "errmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64url.h"
#include "canonjson.h"
#include "cleanup.h"
#include "json-cleanup.h"
#include "jsonwrite.h"
#include "protocol.h"

/* Envelope > payload > manifests[] > manifest {}: nothing legitimate nests
 * deeper than 4; the margin is for later payload parts. */
#define PAYLOAD_MAX_DEPTH 16
#define PAYLOAD_MAX_CLUSTER_ID 128

static json_object *manifest_entry(const struct manifest *m) {
        _cleanup_json_ json_object *o = json_object_new_object();
        if (!o || jadd(o, "path", jstr_or_empty(m->path)) < 0 || jadd(o, "file", jstr_or_empty(m->file)) < 0 ||
            jadd(o, "group", jstr_or_empty(m->group)) < 0 || jadd(o, "version", jstr_or_empty(m->version)) < 0 ||
            jadd(o, "kind", jstr_or_empty(m->kind)) < 0 ||
            (m->namespace && jadd(o, "namespace", json_object_new_string(m->namespace)) < 0) ||
            jadd(o, "name", jstr_or_empty(m->name)) < 0 ||
            jadd(o, "content", json_object_new_string_len(m->content ? m->content : "",
                                                         m->content ? (int) m->content_len : 0)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

/* A string member unless s is NULL. */
static int jadd_opt(json_object *o, const char *k, const char *s) {
        return s ? jadd(o, k, json_object_new_string(s)) : 0;
}

static json_object *host_part(const struct payload_host *h) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *ntp = json_object_new_array();
        if (!o || jadd(o, "ntp_sources", ntp) < 0 || jadd(o, "role", jstr_or_empty(h->role)) < 0 ||
            jadd_opt(o, "hostname", h->hostname) < 0 || jadd_opt(o, "ssh_authorized_key", h->ssh_authorized_key) < 0)
                return NULL;
        for (size_t i = 0; h->ntp_sources && i < h->ntp_sources->n; i++) {
                json_object *s = json_object_new_string(h->ntp_sources->v[i]);
                if (!s || json_object_array_add(ntp, s) < 0) {
                        json_object_put(s);
                        return NULL;
                }
        }
        return TAKE_PTR(o);
}

static int add_settings(json_object *p, const struct payload_settings *s) {
        json_object *set = json_object_new_object(), *hosts;
        if (jadd(p, "settings", set) < 0 || jadd(set, "cluster_name", jstr_or_empty(s->cluster_name)) < 0 ||
            jadd_opt(set, "base_dns_domain", s->base_dns_domain) < 0 || jadd_opt(set, "api_vip", s->api_vip) < 0 ||
            jadd_opt(set, "ingress_vip", s->ingress_vip) < 0 || jadd_opt(set, "pull_secret", s->pull_secret) < 0)
                return -ENOMEM;
        if (jadd(p, "hosts", hosts = json_object_new_object()) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_hosts; i++) {
                if (!s->hosts[i].host_id)
                        return -EINVAL;
                if (jadd(hosts, s->hosts[i].host_id, host_part(&s->hosts[i])) < 0)
                        return -ENOMEM;
        }
        return 0;
}

struct ordered {
        const struct manifest *m;
        size_t index;
};

/* File name (bytes), then document index; ties keep the caller's order. */
static int release_order(const void *a, const void *b) {
        const struct ordered *x = a, *y = b;
        int c = strcmp(x->m->file ? x->m->file : "", y->m->file ? y->m->file : "");
        if (c)
                return c;
        if (x->m->doc_index != y->m->doc_index)
                return x->m->doc_index < y->m->doc_index ? -1 : 1;
        return (x->index > y->index) - (x->index < y->index);
}

json_object *payload_build(const char *cluster_id, int64_t revision, const char *release_version,
                           const char *os_image_url, const struct release_os_image *img,
                           const struct strv *enabled_capabilities,
                           const struct manifest *const *included, size_t n_included,
                           const struct payload_settings *settings) {
        if (n_included > PAYLOAD_MAX_MANIFESTS) {
                errno = E2BIG;
                return NULL;
        }
        if (!cluster_id || !img || (n_included > 0 && !included)) {
                errno = EINVAL;
                return NULL;
        }
        for (size_t i = 0; i < n_included; i++)
                if (included[i]->content_len > INT32_MAX) {
                        errno = E2BIG;
                        return NULL;
                }
        errno = ENOMEM;

        _cleanup_json_ json_object *p = json_object_new_object();
        if (!p || jadd(p, "cluster_id", json_object_new_string(cluster_id)) < 0 ||
            jadd(p, "revision", json_object_new_int64(revision)) < 0 ||
            jadd(p, "release_version", jstr_or_empty(release_version)) < 0)
                return NULL;

        json_object *caps = json_object_new_array();
        if (jadd(p, "enabled_capabilities", caps) < 0)
                return NULL;
        for (size_t i = 0; enabled_capabilities && i < enabled_capabilities->n; i++) {
                json_object *s = json_object_new_string(enabled_capabilities->v[i]);
                if (!s || json_object_array_add(caps, s) < 0) {
                        json_object_put(s);
                        return NULL;
                }
        }

        json_object *os = json_object_new_object();
        if (jadd(p, "os_image", os) < 0 || jadd(os, "url", jstr_or_empty(os_image_url)) < 0 ||
            jadd(os, "sha256", jstr_or_empty(img->sha256)) < 0 ||
            jadd(os, "size", json_object_new_int64(img->size)) < 0 ||
            jadd(os, "root_label", json_object_new_string(img->root_label && img->root_label[0]
                                                                 ? img->root_label
                                                                 : RELEASE_DEFAULT_ROOT_LABEL)) < 0)
                return NULL;

        /* Release order whatever order the caller kept. */
        _cleanup_free_ struct ordered *order = n_included ? calloc(n_included, sizeof *order) : NULL;
        if (n_included && !order)
                return NULL;
        for (size_t i = 0; i < n_included; i++)
                order[i] = (struct ordered) { included[i], i };
        if (n_included > 1)
                qsort(order, n_included, sizeof *order, release_order);

        json_object *ms = json_object_new_array_ext((int) n_included);
        if (jadd(p, "manifests", ms) < 0)
                return NULL;
        for (size_t i = 0; i < n_included; i++) {
                json_object *e = manifest_entry(order[i].m);
                if (!e || json_object_array_add(ms, e) < 0) {
                        json_object_put(e);
                        return NULL;
                }
        }
        if (settings && add_settings(p, settings) < 0)
                return NULL;
        errno = 0;
        return TAKE_PTR(p);
}

void payload_signed_free(struct payload_signed *s) {
        free(s->canonical);
        free(s->signature);
        *s = (struct payload_signed) { 0 };
}

static void digest_string(const uint8_t d[CRYPTO_SHA256_LEN], char out[PAYLOAD_DIGEST_LEN + 1]) {
        memcpy(out, "sha256:", 7);
        crypto_hex(d, CRYPTO_SHA256_LEN, out + 7);
}

int payload_sign(json_object *payload, const struct crypto_key *key, struct payload_signed *out) {
        if (!out)
                return -EINVAL;
        *out = (struct payload_signed) { 0 };
        if (!key || !json_object_is_type(payload, json_type_object))
                return -EINVAL;
        if (!crypto_key_has_private(key))
                return -ENOKEY;

        _cleanup_free_ char *canon = NULL;
        size_t len;
        int r = canonjson_serialize(payload, &canon, &len);
        if (r < 0)
                return r;
        uint8_t d[CRYPTO_SHA256_LEN], sig[CRYPTO_SIG_LEN];
        r = crypto_sha256(canon, len, d);
        if (r < 0)
                return r;
        r = crypto_sign_digest(key, d, sig);
        if (r < 0)
                return r;
        r = base64url_encode(sig, sizeof sig, &out->signature);
        if (r < 0)
                return r;
        digest_string(d, out->digest);
        out->canonical = TAKE_PTR(canon);
        out->len = len;
        return 0;
}

/* s as a canonical JSON string, or NULL. */
static char *json_quote(const char *s, size_t *len) {
        _cleanup_json_ json_object *o = json_object_new_string(s);
        char *out = NULL;
        if (!o || canonjson_serialize(o, &out, len) < 0)
                return NULL;
        return out;
}

char *payload_envelope(const char *cluster_id, int64_t revision, const char *digest,
                       const char *signature, const char *canonical, size_t canonical_len) {
        if (!cluster_id || !digest || !signature || !canonical)
                return NULL;
        uint8_t raw[CRYPTO_SIG_LEN];
        size_t rn;
        _cleanup_free_ char *low = NULL;
        if (base64url_decode_buf(signature, strlen(signature), raw, sizeof raw, &rn) == 0 && rn == sizeof raw &&
            crypto_sig_low_s(raw) == 1 && base64url_encode(raw, sizeof raw, &low) == 0)
                signature = low;
        size_t cl, dl, sl;
        _cleanup_free_ char *c = json_quote(cluster_id, &cl);
        _cleanup_free_ char *d = json_quote(digest, &dl);
        _cleanup_free_ char *s = json_quote(signature, &sl);
        if (!c || !d || !s)
                return NULL;
        char rev[24];
        int rl = snprintf(rev, sizeof rev, "%" PRId64, revision);

        /* Members in canonical order, so the envelope is canonical JSON too. */
        const struct {
                const char *p;
                size_t n;
        } parts[] = {
                { "{\"cluster_id\":", 14 }, { c, cl },
                { ",\"digest\":", 10 },     { d, dl },
                { ",\"payload\":", 11 },    { canonical, canonical_len },
                { ",\"revision\":", 12 },   { rev, (size_t) rl },
                { ",\"signature\":", 13 },  { s, sl },
                { "}", 1 },
        };
        size_t total = 1;
        for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
                if (parts[i].n > SIZE_MAX - total)
                        return NULL;
                total += parts[i].n;
        }
        char *env = malloc(total);
        if (!env)
                return NULL;
        size_t o = 0;
        for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
                memcpy(env + o, parts[i].p, parts[i].n);
                o += parts[i].n;
        }
        env[o] = '\0';
        return env;
}

static bool is_lower_hex(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* Equal, in time that does not depend on where they differ. */
static bool same_bytes(const char *a, const char *b, size_t n) {
        volatile unsigned char acc = 0;
        for (size_t i = 0; i < n; i++)
                acc |= (unsigned char) (a[i] ^ b[i]);
        return acc == 0;
}

/* Member k of o when it has type t, else NULL. */
static json_object *member(json_object *o, const char *k, json_type t) {
        json_object *v;
        if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, t))
                return NULL;
        return v;
}

static bool plain_string(json_object *s) {
        return strlen(json_object_get_string(s)) == (size_t) json_object_get_string_len(s);
}

int payload_verify(const char *envelope, size_t len, const struct crypto_key *pub,
                   const char *expect_cluster, int64_t expect_revision, json_object **payload,
                   char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
        if (!payload) {
                errmsg(err, errlen, 0, "no place for the payload");
                return -EINVAL;
        }
        *payload = NULL;
        if (!envelope || !pub) {
                errmsg(err, errlen, 0, "no envelope or no key");
                return -EINVAL;
        }
        if (len > PAYLOAD_MAX_ENVELOPE) {
                errmsg(err, errlen, 0, "payload envelope is larger than %d bytes", PAYLOAD_MAX_ENVELOPE);
                return -E2BIG;
        }
        if (memchr(envelope, '\0', len)) {
                errmsg(err, errlen, 0, "payload envelope contains a NUL byte");
                return -EINVAL;
        }

        _cleanup_json_tokener_ json_tokener *tok = json_tokener_new_ex(PAYLOAD_MAX_DEPTH);
        if (!tok) {
                errmsg(err, errlen, 0, "out of memory");
                return -ENOMEM;
        }
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        _cleanup_json_ json_object *env = json_tokener_parse_ex(tok, envelope, (int) len);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        if (!env || jerr != json_tokener_success) {
                errmsg(err, errlen, 0, "payload envelope is not JSON: %s",
                     jerr == json_tokener_continue ? "unexpected end of data" : json_tokener_error_desc(jerr));
                return -EINVAL;
        }
        for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
                if (!strchr(" \t\r\n", envelope[i])) {
                        errmsg(err, errlen, 0, "payload envelope has data after its end");
                        return -EINVAL;
                }
        if (!json_object_is_type(env, json_type_object)) {
                errmsg(err, errlen, 0, "payload envelope is not a JSON object");
                return -EINVAL;
        }
        json_object_object_foreach(env, k, v) {
                (void) v;
                if (strcmp(k, "cluster_id") != 0 && strcmp(k, "digest") != 0 && strcmp(k, "payload") != 0 &&
                    strcmp(k, "revision") != 0 && strcmp(k, "signature") != 0) {
                        errmsg(err, errlen, 0, "payload envelope has an unknown member \"%.64s\"", k);
                        return -EINVAL;
                }
        }
        static const struct {
                const char *k;
                json_type t;
        } want[] = {
                { "cluster_id", json_type_string }, { "digest", json_type_string },
                { "payload", json_type_object },    { "revision", json_type_int },
                { "signature", json_type_string },
        };
        for (size_t i = 0; i < sizeof want / sizeof *want; i++)
                if (!member(env, want[i].k, want[i].t)) {
                        errmsg(err, errlen, 0, "payload envelope has no %s \"%s\"", json_type_to_name(want[i].t),
                             want[i].k);
                        return -EINVAL;
                }
        json_object *jcid = member(env, "cluster_id", json_type_string);
        json_object *jdigest = member(env, "digest", json_type_string);
        json_object *p = member(env, "payload", json_type_object);
        json_object *jsig = member(env, "signature", json_type_string);
        const char *cid = json_object_get_string(jcid);
        size_t cid_len = (size_t) json_object_get_string_len(jcid);
        json_object *jrev = member(env, "revision", json_type_int);
        int64_t rev = json_object_get_int64(jrev);

        if (cid_len == 0 || cid_len > PAYLOAD_MAX_CLUSTER_ID) {
                errmsg(err, errlen, 0, "payload envelope cluster_id must be 1 to %d bytes", PAYLOAD_MAX_CLUSTER_ID);
                return -EINVAL;
        }
        for (size_t i = 0; i < cid_len; i++)
                if ((unsigned char) cid[i] <= 0x20 || (unsigned char) cid[i] >= 0x7f) {
                        errmsg(err, errlen, 0, "payload envelope cluster_id must be printable ASCII");
                        return -EINVAL;
                }
        /* json-c keeps integers past INT64_MAX as uint64 and reads them back
         * clamped. */
        if (rev == INT64_MAX && json_object_get_uint64(jrev) != (uint64_t) INT64_MAX) {
                errmsg(err, errlen, 0, "payload envelope revision is out of range");
                return -EINVAL;
        }
        if (rev <= 0) {
                errmsg(err, errlen, 0, "payload envelope revision must be positive");
                return -EINVAL;
        }

        const char *digest = json_object_get_string(jdigest);
        if ((size_t) json_object_get_string_len(jdigest) != PAYLOAD_DIGEST_LEN || strncmp(digest, "sha256:", 7) != 0 ||
            !is_lower_hex(digest + 7, 2 * CRYPTO_SHA256_LEN)) {
                errmsg(err, errlen, 0, "payload digest is not \"sha256:\" and 64 lower-case hex digits");
                return -EBADMSG;
        }
        uint8_t sig[CRYPTO_SIG_LEN];
        size_t siglen;
        if (base64url_decode_buf(json_object_get_string(jsig), (size_t) json_object_get_string_len(jsig), sig,
                                 sizeof sig, &siglen) < 0 ||
            siglen != sizeof sig) {
                errmsg(err, errlen, 0, "payload signature is not base64url of %d bytes", CRYPTO_SIG_LEN);
                return -EBADMSG;
        }

        _cleanup_free_ char *canon = NULL;
        size_t canon_len;
        int r = canonjson_serialize(p, &canon, &canon_len);
        if (r == -ENOMEM) {
                errmsg(err, errlen, 0, "out of memory");
                return r;
        }
        if (r < 0) {
                errmsg(err, errlen, 0, "payload is not canonical JSON material (a number that is not an integer, "
                                  "a string that is not UTF-8, or too big)");
                return -EBADMSG;
        }
        uint8_t d[CRYPTO_SHA256_LEN];
        char hex[PAYLOAD_DIGEST_LEN + 1];
        r = crypto_sha256(canon, canon_len, d);
        if (r < 0) {
                errmsg(err, errlen, 0, "cannot compute the payload digest");
                return r;
        }
        digest_string(d, hex);
        if (!same_bytes(hex, digest, PAYLOAD_DIGEST_LEN)) {
                errmsg(err, errlen, 0, "payload digest does not match");
                return -EBADMSG;
        }
        if (crypto_verify_digest(pub, d, sig) < 0) {
                errmsg(err, errlen, 0, "payload signature is not the coordinator's");
                return -EBADMSG;
        }

        /* Signed by the coordinator from here on: now its claims count. */
        json_object *pcid = member(p, "cluster_id", json_type_string);
        json_object *prev = member(p, "revision", json_type_int);
        if (!pcid || !plain_string(pcid)) {
                errmsg(err, errlen, 0, "payload has no string \"cluster_id\"");
                return -EBADMSG;
        }
        if (!prev) {
                errmsg(err, errlen, 0, "payload has no integer \"revision\"");
                return -EBADMSG;
        }
        const char *pc = json_object_get_string(pcid);
        int64_t pr = json_object_get_int64(prev);
        if (strcmp(pc, cid) != 0 || (size_t) json_object_get_string_len(pcid) != cid_len) {
                errmsg(err, errlen, 0, "payload is for cluster %.128s, the envelope says %.128s", pc, cid);
                return -EBADMSG;
        }
        if (pr != rev) {
                errmsg(err, errlen, 0, "payload is for revision %" PRId64 ", the envelope says %" PRId64, pr, rev);
                return -EBADMSG;
        }
        if (expect_cluster && strcmp(pc, expect_cluster) != 0) {
                errmsg(err, errlen, 0, "payload is for cluster %.128s, expected %.128s", pc, expect_cluster);
                return -EBADMSG;
        }
        if (expect_revision != 0 && pr != expect_revision) {
                errmsg(err, errlen, 0, "payload is for revision %" PRId64 ", expected %" PRId64, pr, expect_revision);
                return -EBADMSG;
        }

        *payload = json_object_get(p);
        return 0;
}

struct path_ref {
        const char *path;
        size_t index;
};

static int path_cmp(const void *a, const void *b) {
        const struct path_ref *x = a, *y = b;
        int c = strcmp(x->path, y->path);
        return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Manifest i of the payload, e, as a file: its path must be a plain file
 * name. 0 or -EINVAL with err. */
static int manifest_file(json_object *e, size_t i, struct payload_file *f, char *err, size_t errlen) {
        if (!json_object_is_type(e, json_type_object)) {
                errmsg(err, errlen, 0, "manifest %zu is not an object", i);
                return -EINVAL;
        }
        json_object *jp = member(e, "path", json_type_string);
        json_object *jc = member(e, "content", json_type_string);
        if (!jp) {
                errmsg(err, errlen, 0, "manifest %zu has no string \"path\"", i);
                return -EINVAL;
        }
        const char *path = json_object_get_string(jp);
        size_t plen = (size_t) json_object_get_string_len(jp);
        if (plen == 0) {
                errmsg(err, errlen, 0, "manifest %zu: empty path", i);
                return -EINVAL;
        }
        if (plen > MANIFEST_MAX_FILE_NAME) {
                errmsg(err, errlen, 0, "manifest %zu: path is longer than %d bytes", i, MANIFEST_MAX_FILE_NAME);
                return -EINVAL;
        }
        for (size_t j = 0; j < plen; j++)
                if ((unsigned char) path[j] < 0x20 || path[j] == 0x7f) {
                        errmsg(err, errlen, 0, "manifest %zu: path contains a control character", i);
                        return -EINVAL;
                }
        if (strchr(path, '/')) {
                errmsg(err, errlen, 0, "manifest %zu: path \"%s\" is not a plain file name", i, path);
                return -EINVAL;
        }
        if (path[0] == '.') {
                errmsg(err, errlen, 0, "manifest %zu: path \"%s\" starts with '.'", i, path);
                return -EINVAL;
        }
        if (!jc) {
                errmsg(err, errlen, 0, "manifest %zu (\"%s\") has no string \"content\"", i, path);
                return -EINVAL;
        }
        *f = (struct payload_file) { path, json_object_get_string(jc), (size_t) json_object_get_string_len(jc) };
        return 0;
}

int payload_files(json_object *payload, struct payload_file **out, size_t *n, char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
        if (!out || !n) {
                errmsg(err, errlen, 0, "no place for the files");
                return -EINVAL;
        }
        *out = NULL;
        *n = 0;
        json_object *ms = payload ? member(payload, "manifests", json_type_array) : NULL;
        if (!ms) {
                errmsg(err, errlen, 0, "payload has no array \"manifests\"");
                return -EINVAL;
        }
        size_t count = json_object_array_length(ms);
        if (count > PAYLOAD_MAX_MANIFESTS) {
                errmsg(err, errlen, 0, "payload has more than %d manifests", PAYLOAD_MAX_MANIFESTS);
                return -EINVAL;
        }
        if (count == 0)
                return 0;

        _cleanup_free_ struct payload_file *files = calloc(count, sizeof *files);
        _cleanup_free_ struct path_ref *refs = calloc(count, sizeof *refs);
        if (!files || !refs) {
                errmsg(err, errlen, 0, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < count; i++) {
                int r = manifest_file(json_object_array_get_idx(ms, i), i, &files[i], err, errlen);
                if (r < 0)
                        return r;
                refs[i] = (struct path_ref) { files[i].path, i };
        }
        qsort(refs, count, sizeof *refs, path_cmp);
        for (size_t i = 1; i < count; i++)
                if (strcmp(refs[i - 1].path, refs[i].path) == 0) {
                        errmsg(err, errlen, 0, "manifest %zu: path \"%s\" repeats manifest %zu's", refs[i].index,
                             refs[i].path, refs[i - 1].index);
                        return -EINVAL;
                }
        *out = TAKE_PTR(files);
        *n = count;
        return 0;
}

int payload_image(json_object *payload, struct payload_image *out, char *err, size_t errlen) {
        if (err && errlen)
                err[0] = '\0';
        if (!out) {
                errmsg(err, errlen, 0, "no place for the image");
                return -EINVAL;
        }
        *out = (struct payload_image) { 0 };
        json_object *os = payload ? member(payload, "os_image", json_type_object) : NULL;
        if (!os) {
                errmsg(err, errlen, 0, "payload has no object \"os_image\"");
                return -EINVAL;
        }
        json_object *url = member(os, "url", json_type_string);
        json_object *sha = member(os, "sha256", json_type_string);
        json_object *size = member(os, "size", json_type_int);
        json_object *label = member(os, "root_label", json_type_string);
        if (!url || json_object_get_string_len(url) == 0 || !plain_string(url)) {
                errmsg(err, errlen, 0, "payload os_image has no \"url\"");
                return -EINVAL;
        }
        if (!sha || json_object_get_string_len(sha) != 2 * CRYPTO_SHA256_LEN ||
            !is_lower_hex(json_object_get_string(sha), 2 * CRYPTO_SHA256_LEN)) {
                errmsg(err, errlen, 0, "payload os_image sha256 is not 64 lower-case hex digits");
                return -EINVAL;
        }
        if (!size || json_object_get_int64(size) <= 0) {
                errmsg(err, errlen, 0, "payload os_image size is not a positive integer");
                return -EINVAL;
        }
        if (!label || json_object_get_string_len(label) == 0 || !plain_string(label)) {
                errmsg(err, errlen, 0, "payload os_image has no \"root_label\"");
                return -EINVAL;
        }
        *out = (struct payload_image) {
                .url = json_object_get_string(url),
                .sha256 = json_object_get_string(sha),
                .size = json_object_get_int64(size),
                .root_label = json_object_get_string(label),
        };
        return 0;
}

/* ---- one host's settings ---------------------------------------------------- */

/* A string member of at most max bytes, no NUL inside; absent is NULL. */
static int opt_string(json_object *o, const char *k, size_t max, const char **out, char *err, size_t errlen) {
        json_object *v;
        *out = NULL;
        if (!json_object_object_get_ex(o, k, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_string) || !plain_string(v)) {
                errmsg(err, errlen, 0, "payload settings: %s is not a string", k);
                return -EINVAL;
        }
        if ((size_t) json_object_get_string_len(v) > max) {
                errmsg(err, errlen, 0, "payload settings: %s is longer than %zu bytes", k, max);
                return -EINVAL;
        }
        *out = json_object_get_string(v);
        return 0;
}

static bool is_ip(const char *s) {
        unsigned char b[16];
        return s && (inet_pton(AF_INET, s, b) == 1 || inet_pton(AF_INET6, s, b) == 1);
}

/* Lines of printable ASCII: no CR, no other control character. */
static bool printable_lines(const char *s) {
        for (; *s; s++)
                if (*s != '\n' && ((unsigned char) *s < 0x20 || (unsigned char) *s >= 0x7f))
                        return false;
        return true;
}

int payload_host_settings(json_object *payload, const char *host_id, struct payload_host_view *out, char *err,
                          size_t errlen) {
        json_object *set, *hosts, *h, *ntp;
        char why[160];
        int r;

        memset(out, 0, sizeof *out);
        if (err && errlen)
                err[0] = '\0';
        set = payload ? member(payload, "settings", json_type_object) : NULL;
        hosts = payload ? member(payload, "hosts", json_type_object) : NULL;
        if (!set || !hosts) {
                errmsg(err, errlen, 0, "payload carries no host settings");
                return -ENODATA;
        }
        if (!host_id || !json_object_object_get_ex(hosts, host_id, &h) || !json_object_is_type(h, json_type_object)) {
                errmsg(err, errlen, 0, "payload carries no settings for host %.64s", host_id ? host_id : "(none)");
                return -ENOENT;
        }
        out->host_id = host_id;
        json_object *cid = member(payload, "cluster_id", json_type_string);
        out->cluster_id = cid ? json_object_get_string(cid) : NULL;
        if ((r = opt_string(set, "cluster_name", 253, &out->cluster_name, err, errlen)) < 0 ||
            (r = opt_string(set, "base_dns_domain", 253, &out->base_dns_domain, err, errlen)) < 0 ||
            (r = opt_string(set, "api_vip", 64, &out->api_vip, err, errlen)) < 0 ||
            (r = opt_string(set, "ingress_vip", 64, &out->ingress_vip, err, errlen)) < 0 ||
            (r = opt_string(set, "pull_secret", PAYLOAD_MAX_PULL_SECRET, &out->pull_secret, err, errlen)) < 0 ||
            (r = opt_string(h, "role", 16, &out->role, err, errlen)) < 0 ||
            (r = opt_string(h, "hostname", 253, &out->hostname, err, errlen)) < 0 ||
            (r = opt_string(h, "ssh_authorized_key", PAYLOAD_MAX_SSH_KEYS, &out->ssh_authorized_key, err, errlen)) < 0)
                return r;
        if (!out->role || (strcmp(out->role, "master") != 0 && strcmp(out->role, "worker") != 0)) {
                errmsg(err, errlen, 0, "payload settings: role of host %.64s must be master or worker", host_id);
                return -EINVAL;
        }
        if (!out->cluster_name || !dns_name_valid(out->cluster_name, "cluster name", why, sizeof why) ||
            (out->hostname && !dns_name_valid(out->hostname, "hostname", why, sizeof why)) ||
            (out->base_dns_domain && !dns_name_valid(out->base_dns_domain, "base DNS domain", why, sizeof why))) {
                errmsg(err, errlen, 0, "payload settings: %s", out->cluster_name ? why : "cluster_name is missing");
                return -EINVAL;
        }
        if ((out->api_vip && !is_ip(out->api_vip)) || (out->ingress_vip && !is_ip(out->ingress_vip))) {
                errmsg(err, errlen, 0, "payload settings: %s is not an IP address",
                     out->api_vip && !is_ip(out->api_vip) ? "api_vip" : "ingress_vip");
                return -EINVAL;
        }
        if (out->ssh_authorized_key && !printable_lines(out->ssh_authorized_key)) {
                errmsg(err, errlen, 0, "payload settings: ssh_authorized_key must be lines of printable characters");
                return -EINVAL;
        }
        if (out->pull_secret) {
                _cleanup_json_ json_object *ps = json_tokener_parse(out->pull_secret);
                if (!ps || !json_object_is_type(ps, json_type_object)) {
                        errmsg(err, errlen, 0, "payload settings: pull_secret is not a JSON object");
                        return -EINVAL;
                }
        }
        ntp = member(h, "ntp_sources", json_type_array);
        size_t n = ntp ? json_object_array_length(ntp) : 0;
        if (n > PAYLOAD_MAX_NTP_SOURCES) {
                errmsg(err, errlen, 0, "payload settings: more than %d NTP sources", PAYLOAD_MAX_NTP_SOURCES);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *s = json_object_array_get_idx(ntp, i);
                const char *v = json_object_is_type(s, json_type_string) && plain_string(s) ? json_object_get_string(s)
                                                                                           : NULL;
                if (!v || !ntp_source_is_valid(v)) {
                        errmsg(err, errlen, 0, "payload settings: NTP source %zu is not a host name or address, "
                                          "with or without a port", i);
                        return -EINVAL;
                }
                out->ntp_sources[out->n_ntp_sources++] = v;
        }
        return 0;
}

/* ---- deletions -------------------------------------------------------------- */

/* Member k of deletion entry e (entry i) as a printable string of at most
 * MANIFEST_MAX_NAME bytes; may_be_empty for group. Absent: NULL when
 * optional, else an error; present, it must be a string. */
static int deletion_member(json_object *e, size_t i, const char *k, bool optional, bool may_be_empty,
                           const char **out, char *err, size_t errlen) {
        json_object *v;
        *out = NULL;
        if (!json_object_object_get_ex(e, k, &v)) {
                if (optional)
                        return 0;
                errmsg(err, errlen, 0, "deletion %zu has no \"%s\"", i, k);
                return -EINVAL;
        }
        if (!json_object_is_type(v, json_type_string)) {
                errmsg(err, errlen, 0, "deletion %zu: \"%s\" is not a string", i, k);
                return -EINVAL;
        }
        const char *s = json_object_get_string(v);
        size_t len = (size_t) json_object_get_string_len(v);
        if (!plain_string(v)) {
                errmsg(err, errlen, 0, "deletion %zu: \"%s\" contains a control character", i, k);
                return -EINVAL;
        }
        if (len == 0 && !may_be_empty) {
                errmsg(err, errlen, 0, "deletion %zu: \"%s\" is empty", i, k);
                return -EINVAL;
        }
        if (len > MANIFEST_MAX_NAME) {
                errmsg(err, errlen, 0, "deletion %zu: \"%s\" is longer than %d bytes", i, k, MANIFEST_MAX_NAME);
                return -EINVAL;
        }
        for (size_t j = 0; j < len; j++)
                if ((unsigned char) s[j] < 0x20 || s[j] == 0x7f) {
                        errmsg(err, errlen, 0, "deletion %zu: \"%s\" contains a control character", i, k);
                        return -EINVAL;
                }
        *out = s;
        return 0;
}

int payload_deletions(json_object *payload, struct payload_deletion **out, size_t *n, char *err, size_t errlen) {
        json_object *dl;

        if (err && errlen)
                err[0] = '\0';
        if (!out || !n) {
                errmsg(err, errlen, 0, "no place for the deletions");
                return -EINVAL;
        }
        *out = NULL;
        *n = 0;
        if (!payload || !json_object_object_get_ex(payload, "deletions", &dl))
                return 0;
        if (!json_object_is_type(dl, json_type_array)) {
                errmsg(err, errlen, 0, "payload \"deletions\" is not an array");
                return -EINVAL;
        }
        size_t count = json_object_array_length(dl);
        if (count > PAYLOAD_MAX_DELETIONS) {
                errmsg(err, errlen, 0, "payload has more than %d deletions", PAYLOAD_MAX_DELETIONS);
                return -EINVAL;
        }
        if (count == 0)
                return 0;
        _cleanup_free_ struct payload_deletion *v = calloc(count, sizeof *v);
        if (!v) {
                errmsg(err, errlen, 0, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < count; i++) {
                json_object *e = json_object_array_get_idx(dl, i);
                const char *version;
                int r;
                if (!json_object_is_type(e, json_type_object)) {
                        errmsg(err, errlen, 0, "deletion %zu is not an object", i);
                        return -EINVAL;
                }
                if ((r = deletion_member(e, i, "group", false, true, &v[i].group, err, errlen)) < 0 ||
                    (r = deletion_member(e, i, "version", true, false, &version, err, errlen)) < 0 ||
                    (r = deletion_member(e, i, "kind", false, false, &v[i].kind, err, errlen)) < 0 ||
                    (r = deletion_member(e, i, "namespace", true, false, &v[i].namespace, err, errlen)) < 0 ||
                    (r = deletion_member(e, i, "name", false, false, &v[i].name, err, errlen)) < 0)
                        return r;
        }
        *out = TAKE_PTR(v);
        *n = count;
        return 0;
}

json_object *payload_deletions_to_json(const struct payload_deletion *v, size_t n) {
        if ((n > 0 && !v) || n > PAYLOAD_MAX_DELETIONS) {
                errno = EINVAL;
                return NULL;
        }
        errno = ENOMEM;
        _cleanup_json_ json_object *a = n ? json_object_new_array_ext((int) n) : json_object_new_array();
        if (!a)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_new_object();
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        return NULL;
                }
                if (jadd(o, "group", jstr_or_empty(v[i].group)) < 0 || jadd(o, "kind", jstr_or_empty(v[i].kind)) < 0 ||
                    jadd_opt(o, "namespace", v[i].namespace) < 0 || jadd(o, "name", jstr_or_empty(v[i].name)) < 0)
                        return NULL;
        }
        errno = 0;
        return TAKE_PTR(a);
}
