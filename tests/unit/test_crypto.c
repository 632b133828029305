/* crypto: SHA-256, hex, P-256 keys (file creation, loading, PEM), raw r||s
 * digest signatures, and use of one key from many threads. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mbedtls/bignum.h>

#include "base64url.h"
#include "crypto.h"
#include "testutil.h"

/* RFC 6979 A.2.5: the P-256 key x = C9AFA9D8…0F6721, as SEC1 and PKCS#8 PEM,
 * and its public key. */
static const char rfc6979_sec1[] =
        "-----BEGIN EC PRIVATE KEY-----\n"
        "MHcCAQEEIMmvqdhFunUWa1whV2ex1pNOUMPbNuibEnuKYisSD2choAoGCCqGSM49\n"
        "AwEHoUQDQgAEYP7UuiVanTHJYet0xjVtaMBJuJI7Yfps5mliLmDyn7Z5A/4QCLi8\n"
        "maQa6elWKLxk8vGyDC1+n1F3o8KU1EYimQ==\n"
        "-----END EC PRIVATE KEY-----\n";
static const char rfc6979_pkcs8[] =
        "-----BEGIN PRIVATE KEY-----\n"
        "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgya+p2EW6dRZrXCFX\n"
        "Z7HWk05Qw9s26JsSe4piKxIPZyGhRANCAARg/tS6JVqdMclh63TGNW1owEm4kjth\n"
        "+mzmaWIuYPKftnkD/hAIuLyZpBrp6VYovGTy8bIMLX6fUXejwpTURiKZ\n"
        "-----END PRIVATE KEY-----\n";
static const char rfc6979_pub[] =
        "-----BEGIN PUBLIC KEY-----\n"
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYP7UuiVanTHJYet0xjVtaMBJuJI7\n"
        "Yfps5mliLmDyn7Z5A/4QCLi8maQa6elWKLxk8vGyDC1+n1F3o8KU1EYimQ==\n"
        "-----END PUBLIC KEY-----\n";
/* Expected r || s for message "sample" with SHA-256 (RFC 6979 A.2.5). */
/* RFC 6979 A.2.5's r and s: that s is high (> n/2); we sign with n - s
 * (low S, one spelling per signature) and refuse the RFC's own. */
static const char rfc6979_sample_sig_rfc[] =
        "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
        "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8";
static const char rfc6979_sample_sig[] =
        "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
        "0834e36ad29a83bf2bc9385e491d6099c8fdf9d1ed67aa7ea5f51f93782857a9";

/* P-256's group order n and floor(n / 2), big endian. */
static const char p256_n_hex[] = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
static const uint8_t p256_half_n[32] = {
        0x7f, 0xff, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0xde, 0x73, 0x7d, 0x56, 0xd3, 0x8b, 0xcf, 0x42, 0x79, 0xdc, 0xe5, 0x61, 0x7e, 0x31, 0x92, 0xa8,
};

/* The other spelling of a signature: s := n - s. */
static void flip_s(uint8_t sig[64]) {
        mbedtls_mpi n, v;
        mbedtls_mpi_init(&n);
        mbedtls_mpi_init(&v);
        cr_assert_eq(mbedtls_mpi_read_string(&n, 16, p256_n_hex), 0);
        cr_assert_eq(mbedtls_mpi_read_binary(&v, sig + 32, 32), 0);
        cr_assert_eq(mbedtls_mpi_sub_mpi(&v, &n, &v), 0);
        cr_assert_eq(mbedtls_mpi_write_binary(&v, sig + 32, 32), 0);
        mbedtls_mpi_free(&v);
        mbedtls_mpi_free(&n);
}

static void from_hex(const char *hex, uint8_t *out, size_t n) {
        for (size_t i = 0; i < n; i++)
                cr_assert_eq(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
}

/* A P-384 key: well-formed, wrong curve. */
static const char p384_sec1[] =
        "-----BEGIN EC PRIVATE KEY-----\n"
        "MIGkAgEBBDBsQOxLhll7Ryf6AiCEvLMsNVxcZAfyKsOJ810uYLlplCYRO9VcoVWY\n"
        "moi2iR1+vxygBwYFK4EEACKhZANiAAQz6Zcn5R1JiK8bM2TKOxm8N3GI0QIfxu/h\n"
        "Ml0zlw86sojKXNMltyGVTfDCLOyT1Gw1o9F3vlWxfAeSfqVZc4rDpbfmRWrRjc4d\n"
        "nYtaII1OISkiHapuBsp8G1cgUy9G6Os=\n"
        "-----END EC PRIVATE KEY-----\n";
static const char p384_pub[] =
        "-----BEGIN PUBLIC KEY-----\n"
        "MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEM+mXJ+UdSYivGzNkyjsZvDdxiNECH8bv\n"
        "4TJdM5cPOrKIylzTJbchlU3wwizsk9RsNaPRd75VsXwHkn6lWXOKw6W35kVq0Y3O\n"
        "HZ2LWiCNTiEpIh2qbgbKfBtXIFMvRujr\n"
        "-----END PUBLIC KEY-----\n";

static char *slurp(const char *path) {
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = calloc(1, 65536);
        size_t n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static int count_entries(const char *dir) {
        DIR *d = opendir(dir);
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}

static char *path_in(const char *dir, const char *name) {
        char *p;
        cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
        return p;
}

static void hex_of(const uint8_t *b, size_t n, char *out) {
        crypto_hex(b, n, out);
}

Test(sha256, known_answers) {
        uint8_t d[32];
        char hex[65];
        cr_assert_eq(crypto_sha256("", 0, d), 0);
        hex_of(d, 32, hex);
        cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        cr_assert_eq(crypto_sha256("abc", 3, d), 0);
        hex_of(d, 32, hex);
        cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        cr_assert_eq(crypto_sha256(NULL, 0, d), 0);
        cr_assert_eq(crypto_sha256(NULL, 1, d), -EINVAL);
}

Test(sha256, streaming_matches_one_shot) {
        static uint8_t data[100000];
        for (size_t i = 0; i < sizeof data; i++)
                data[i] = (uint8_t) (i * 7 + (i >> 8));
        uint8_t one[32], two[32];
        cr_assert_eq(crypto_sha256(data, sizeof data, one), 0);

        struct crypto_sha256_ctx c;
        cr_assert_eq(crypto_sha256_init(&c), 0);
        size_t off = 0, step = 1;
        while (off < sizeof data) {
                size_t n = step < sizeof data - off ? step : sizeof data - off;
                cr_assert_eq(crypto_sha256_update(&c, data + off, n), 0);
                off += n;
                step = step * 3 + 1;
        }
        cr_assert_eq(crypto_sha256_final(&c, two), 0);
        crypto_sha256_free(&c); /* harmless after final */
        cr_assert_arr_eq(one, two, 32);

        /* "abc" streamed a byte at a time; an abandoned stream frees cleanly. */
        cr_assert_eq(crypto_sha256_init(&c), 0);
        for (int i = 0; i < 3; i++)
                cr_assert_eq(crypto_sha256_update(&c, &"abc"[i], 1), 0);
        cr_assert_eq(crypto_sha256_final(&c, two), 0);
        char hex[65];
        crypto_hex(two, 32, hex);
        cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        cr_assert_eq(crypto_sha256_init(&c), 0);
        cr_assert_eq(crypto_sha256_update(&c, "x", 1), 0);
        crypto_sha256_free(&c);
}

Test(hex, lower_case_and_terminated) {
        const uint8_t in[] = { 0x00, 0x0f, 0xa5, 0xff };
        char out[9];
        memset(out, 'Z', sizeof out);
        crypto_hex(in, sizeof in, out);
        cr_assert_str_eq(out, "000fa5ff");
        crypto_hex(in, 0, out);
        cr_assert_str_eq(out, "");
}

Test(base64url, round_trip_all_lengths) {
        uint8_t data[70], back[70];
        for (size_t i = 0; i < sizeof data; i++)
                data[i] = (uint8_t) (0xfb - i * 13);
        for (size_t n = 0; n <= sizeof data; n++) {
                char *s = NULL;
                cr_assert_eq(base64url_encode(data, n, &s), 0);
                cr_assert_eq(strlen(s), base64url_encoded_len(n));
                cr_assert_null(strpbrk(s, "+/="));
                size_t m = 0;
                cr_assert_eq(base64url_decode_buf(s, strlen(s), back, sizeof back, &m), 0);
                cr_assert_eq(m, n);
                cr_assert_arr_eq(back, data, n);
                free(s);
        }
}

Test(base64url, strict) {
        uint8_t b[16];
        size_t n;
        cr_assert_eq(base64url_decode_buf("Zm9v", 4, b, sizeof b, &n), 0);
        cr_assert_eq(n, 3);
        cr_assert_eq(base64url_decode_buf("Zm8", 3, b, sizeof b, &n), 0);
        cr_assert_eq(n, 2);
        cr_assert_eq(base64url_decode_buf("Zm8=", 4, b, sizeof b, &n), -EINVAL, "padding");
        cr_assert_eq(base64url_decode_buf("Zm9", 3, b, sizeof b, &n), -EINVAL, "unused bits set");
        cr_assert_eq(base64url_decode_buf("Zg", 2, b, sizeof b, &n), 0);
        cr_assert_eq(base64url_decode_buf("Zh", 2, b, sizeof b, &n), -EINVAL, "unused bits set");
        cr_assert_eq(base64url_decode_buf("Z", 1, b, sizeof b, &n), -EINVAL, "impossible length");
        cr_assert_eq(base64url_decode_buf("a+b/", 4, b, sizeof b, &n), -EINVAL, "standard alphabet");
        cr_assert_eq(base64url_decode_buf("ab c", 4, b, sizeof b, &n), -EINVAL);
        cr_assert_eq(base64url_decode_buf("-_-_", 4, b, sizeof b, &n), 0);
        cr_assert_eq(base64url_decode_buf("AAAAAAAA", 8, b, 5, &n), -ENOBUFS);
}

Test(key, sign_verify_round_trip_and_bit_flips) {
        struct crypto_key *k = NULL;
        cr_assert_eq(crypto_key_generate(&k), 0);
        cr_assert(crypto_key_has_private(k));
        uint8_t d[32], sig[64];
        cr_assert_eq(crypto_sha256("payload", 7, d), 0);
        cr_assert_eq(crypto_sign_digest(k, d, sig), 0);
        cr_assert_eq(crypto_verify_digest(k, d, sig), 0);

        /* RFC 6979: the same digest gives the same signature. */
        uint8_t again[64];
        cr_assert_eq(crypto_sign_digest(k, d, again), 0);
        cr_assert_arr_eq(sig, again, 64);

        for (int bit = 0; bit < 64 * 8; bit++) {
                sig[bit / 8] ^= (uint8_t) (1u << (bit % 8));
                cr_assert_eq(crypto_verify_digest(k, d, sig), -EBADMSG, "signature bit %d", bit);
                sig[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        }
        for (int bit = 0; bit < 32 * 8; bit++) {
                d[bit / 8] ^= (uint8_t) (1u << (bit % 8));
                cr_assert_eq(crypto_verify_digest(k, d, sig), -EBADMSG, "digest bit %d", bit);
                d[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        }
        cr_assert_eq(crypto_verify_digest(k, d, sig), 0);

        /* r = 0 or s = 0 never verifies. */
        uint8_t zero[64];
        memcpy(zero, sig, 64);
        memset(zero, 0, 32);
        cr_assert_eq(crypto_verify_digest(k, d, zero), -EBADMSG);
        memcpy(zero, sig, 64);
        memset(zero + 32, 0, 32);
        cr_assert_eq(crypto_verify_digest(k, d, zero), -EBADMSG);
        memset(zero, 0xff, 64);
        cr_assert_eq(crypto_verify_digest(k, d, zero), -EBADMSG, "r, s >= n");

        /* Another key's signature is refused. */
        struct crypto_key *other = NULL;
        cr_assert_eq(crypto_key_generate(&other), 0);
        cr_assert_eq(crypto_verify_digest(other, d, sig), -EBADMSG);
        crypto_key_free(other);
        crypto_key_free(k);
}

Test(key, rfc6979_vector) {
        char *dir = tu_mkdtemp();
        cr_assert_eq(tu_write_file(dir, "k.pem", rfc6979_sec1), 0);
        cr_assert_eq(tu_write_file(dir, "k8.pem", rfc6979_pkcs8), 0);
        char *p1 = path_in(dir, "k.pem"), *p2 = path_in(dir, "k8.pem");

        struct crypto_key *k = NULL, *k8 = NULL;
        cr_assert_eq(crypto_key_load_or_create(p1, &k), 0);
        cr_assert_eq(crypto_key_load_or_create(p2, &k8), 0);
        uint8_t d[32], sig[64];
        char hex[129];
        cr_assert_eq(crypto_sha256("sample", 6, d), 0);
        cr_assert_eq(crypto_sign_digest(k, d, sig), 0);
        crypto_hex(sig, 64, hex);
        cr_assert_str_eq(hex, rfc6979_sample_sig);
        cr_assert_eq(crypto_sign_digest(k8, d, sig), 0);
        crypto_hex(sig, 64, hex);
        cr_assert_str_eq(hex, rfc6979_sample_sig);
        cr_assert_eq(crypto_verify_digest(k, d, sig), 0);
        /* The RFC's own signature is valid ECDSA but high-S: refused. */
        from_hex(rfc6979_sample_sig_rfc, sig, 64);
        cr_assert_eq(crypto_verify_digest(k, d, sig), -EBADMSG, "high S");
        flip_s(sig);
        cr_assert_eq(crypto_verify_digest(k, d, sig), 0, "its low-S twin");

        char *pem = NULL;
        cr_assert_eq(crypto_key_public_pem(k, &pem), 0);
        cr_assert_str_eq(pem, rfc6979_pub);
        free(pem);

        crypto_key_free(k);
        crypto_key_free(k8);
        free(p1);
        free(p2);
        tu_rm_rf(dir);
        free(dir);
}

Test(key, public_only) {
        struct crypto_key *k = NULL, *pub = NULL;
        cr_assert_eq(crypto_key_generate(&k), 0);
        char *pem = NULL;
        cr_assert_eq(crypto_key_public_pem(k, &pem), 0);
        cr_assert(strstr(pem, "-----BEGIN PUBLIC KEY-----") == pem);
        cr_assert_null(strstr(pem, "PRIVATE"));
        cr_assert_eq(crypto_pubkey_load_pem(pem, &pub), 0);
        cr_assert_not(crypto_key_has_private(pub));

        uint8_t d[32], sig[64];
        cr_assert_eq(crypto_sha256("x", 1, d), 0);
        cr_assert_eq(crypto_sign_digest(k, d, sig), 0);
        cr_assert_eq(crypto_verify_digest(pub, d, sig), 0);
        cr_assert_eq(crypto_sign_digest(pub, d, sig), -ENOKEY);

        /* The public key of a public key is itself. */
        char *pem2 = NULL;
        cr_assert_eq(crypto_key_public_pem(pub, &pem2), 0);
        cr_assert_str_eq(pem, pem2);

        struct crypto_key *bad = NULL;
        cr_assert_eq(crypto_pubkey_load_pem("", &bad), -EINVAL);
        cr_assert_eq(crypto_pubkey_load_pem("garbage", &bad), -EINVAL);
        cr_assert_eq(crypto_pubkey_load_pem(rfc6979_sec1, &bad), -EINVAL, "a private key is not a public key");
        cr_assert_eq(crypto_pubkey_load_pem(p384_pub, &bad), -EINVAL, "wrong curve");
        char *cut = strdup(pem);
        cut[strlen(cut) / 2] = '\0';
        cr_assert_eq(crypto_pubkey_load_pem(cut, &bad), -EINVAL);
        cr_assert_null(bad);

        free(cut);
        free(pem);
        free(pem2);
        crypto_key_free(pub);
        crypto_key_free(k);
}

Test(keyfile, created_0600_and_reloaded) {
        char *dir = tu_mkdtemp();
        char *path = path_in(dir, "signing.key");
        struct crypto_key *a = NULL, *b = NULL;

        cr_assert_eq(crypto_key_load_or_create(path, &a), 0);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cr_assert(S_ISREG(st.st_mode));
        cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
        cr_assert_eq(count_entries(dir), 1, "no temporary file left behind");
        char *text = slurp(path);
        cr_assert(strstr(text, "-----BEGIN EC PRIVATE KEY-----") == text);

        cr_assert_eq(crypto_key_load_or_create(path, &b), 0);
        char *pa = NULL, *pb = NULL;
        cr_assert_eq(crypto_key_public_pem(a, &pa), 0);
        cr_assert_eq(crypto_key_public_pem(b, &pb), 0);
        cr_assert_str_eq(pa, pb);
        char *text2 = slurp(path);
        cr_assert_str_eq(text, text2, "loading does not rewrite the file");

        uint8_t d[32], sig[64];
        cr_assert_eq(crypto_sha256("reload", 6, d), 0);
        cr_assert_eq(crypto_sign_digest(b, d, sig), 0);
        cr_assert_eq(crypto_verify_digest(a, d, sig), 0);

        free(text);
        free(text2);
        free(pa);
        free(pb);
        crypto_key_free(a);
        crypto_key_free(b);
        free(path);
        tu_rm_rf(dir);
        free(dir);
}

static void expect_refused_untouched(const char *dir, const char *name, const char *content) {
        cr_assert_eq(tu_write_file(dir, name, content), 0);
        char *path = path_in(dir, name);
        struct crypto_key *k = NULL;
        cr_assert_eq(crypto_key_load_or_create(path, &k), -EINVAL, "%s", name);
        cr_assert_null(k);
        char *now = slurp(path);
        cr_assert_str_eq(now, content, "%s left as it was", name);
        free(now);
        free(path);
}

Test(keyfile, garbled_refused_and_left_alone) {
        char *dir = tu_mkdtemp();
        expect_refused_untouched(dir, "garbage.key", "this is not a key\n");
        expect_refused_untouched(dir, "empty.key", "");
        expect_refused_untouched(dir, "p384.key", p384_sec1);
        expect_refused_untouched(dir, "public.key", rfc6979_pub);

        char truncated[sizeof rfc6979_sec1];
        memcpy(truncated, rfc6979_sec1, sizeof truncated);
        truncated[sizeof truncated / 2] = '\0';
        expect_refused_untouched(dir, "truncated.key", truncated);

        /* One base64 character changed inside the key body. */
        char flipped[sizeof rfc6979_sec1];
        memcpy(flipped, rfc6979_sec1, sizeof flipped);
        char *body = flipped + strlen("-----BEGIN EC PRIVATE KEY-----\n") + 20;
        *body = *body == 'A' ? 'B' : 'A';
        expect_refused_untouched(dir, "flipped.key", flipped);

        cr_assert_eq(count_entries(dir), 6, "nothing was created next to them");

        /* Not a regular file; parent missing. */
        struct crypto_key *k = NULL;
        cr_assert_eq(crypto_key_load_or_create(dir, &k), -EINVAL);
        char *missing = path_in(dir, "no/such/dir.key");
        cr_assert_eq(crypto_key_load_or_create(missing, &k), -ENOENT);
        cr_assert_null(k);
        free(missing);
        tu_rm_rf(dir);
        free(dir);
}

/* Many threads sign and verify with one key at once (run under ASan). */
struct worker {
        struct crypto_key *key;
        const uint8_t *sig; /* a signature of digest 0 made beforehand */
        int id;
        int failures;
};

static void *worker_run(void *arg) {
        struct worker *w = arg;
        for (int i = 0; i < 40; i++) {
                uint8_t d[32], d0[32], sig[64];
                char msg[32];
                snprintf(msg, sizeof msg, "w%d-%d", w->id, i);
                crypto_sha256(msg, strlen(msg), d);
                crypto_sha256("0", 1, d0);
                if (crypto_verify_digest(w->key, d0, w->sig) != 0)
                        w->failures++;
                if (w->id % 2 == 0) {
                        if (crypto_sign_digest(w->key, d, sig) != 0 || crypto_verify_digest(w->key, d, sig) != 0)
                                w->failures++;
                }
        }
        return NULL;
}

Test(key, concurrent_use, .timeout = 120) {
        struct crypto_key *k = NULL;
        cr_assert_eq(crypto_key_generate(&k), 0);
        uint8_t d0[32], sig0[64];
        crypto_sha256("0", 1, d0);
        cr_assert_eq(crypto_sign_digest(k, d0, sig0), 0);

        enum { N = 8 };
        pthread_t t[N];
        struct worker w[N];
        for (int i = 0; i < N; i++) {
                w[i] = (struct worker){ .key = k, .sig = sig0, .id = i };
                cr_assert_eq(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
        }
        for (int i = 0; i < N; i++) {
                pthread_join(t[i], NULL);
                cr_assert_eq(w[i].failures, 0, "worker %d", i);
        }
        crypto_key_free(k);
}

/* Several processes' worth of first starts at once: exactly one key wins
 * and everybody ends up with it. */
struct creator {
        const char *path;
        char *pem;
        int r;
};

static void *create_run(void *arg) {
        struct creator *c = arg;
        struct crypto_key *k = NULL;
        c->r = crypto_key_load_or_create(c->path, &k);
        if (c->r == 0)
                c->r = crypto_key_public_pem(k, &c->pem);
        crypto_key_free(k);
        return NULL;
}

Test(keyfile, concurrent_first_start, .timeout = 60) {
        for (int round = 0; round < 5; round++) {
                char *dir = tu_mkdtemp();
                char *path = path_in(dir, "k.pem");
                enum { N = 6 };
                pthread_t t[N];
                struct creator c[N];
                for (int i = 0; i < N; i++) {
                        c[i] = (struct creator){ .path = path };
                        cr_assert_eq(pthread_create(&t[i], NULL, create_run, &c[i]), 0);
                }
                for (int i = 0; i < N; i++)
                        pthread_join(t[i], NULL);

                struct crypto_key *k = NULL;
                char *pem = NULL;
                cr_assert_eq(crypto_key_load_or_create(path, &k), 0);
                cr_assert_eq(crypto_key_public_pem(k, &pem), 0);
                for (int i = 0; i < N; i++) {
                        cr_assert_eq(c[i].r, 0, "creator %d: %s", i, strerror(-c[i].r));
                        cr_assert_str_eq(c[i].pem, pem, "creator %d holds the key on disk", i);
                        free(c[i].pem);
                }
                cr_assert_eq(count_entries(dir), 1);
                free(pem);
                crypto_key_free(k);
                free(path);
                tu_rm_rf(dir);
                free(dir);
        }
}

/* Issue 12, item 12: every signature made is low-S (s <= n/2), and the
 * high-S twin of each, which plain ECDSA accepts, is refused. */
Test(key, signatures_are_low_s_and_high_s_is_refused) {
        struct crypto_key *k = NULL;
        cr_assert_eq(crypto_key_generate(&k), 0);
        int high_twins = 0;
        for (int i = 0; i < 200; i++) {
                uint8_t d[32], sig[64];
                char msg[32];
                snprintf(msg, sizeof msg, "message %d", i);
                cr_assert_eq(crypto_sha256(msg, strlen(msg), d), 0);
                cr_assert_eq(crypto_sign_digest(k, d, sig), 0);
                cr_assert_leq(memcmp(sig + 32, p256_half_n, 32), 0, "signature %d has a high S", i);
                cr_assert_eq(crypto_verify_digest(k, d, sig), 0);
                flip_s(sig);
                cr_assert_gt(memcmp(sig + 32, p256_half_n, 32), 0);
                cr_assert_eq(crypto_verify_digest(k, d, sig), -EBADMSG, "the high-S twin of signature %d", i);
                high_twins++;
        }
        cr_assert_eq(high_twins, 200);
        crypto_key_free(k);
}
