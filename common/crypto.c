/* mbedTLS behind a small API: key file handling, SHA-256 and ECDSA P-256
 * with raw r||s signatures. Keys are immutable once built so many threads can
 * verify with one; each operation works on its own copy of the curve group
 * because mbedTLS may cache tables in a group it multiplies with. */
#include "crypto.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/asn1.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fdio.h"

#define KEY_FILE_MAX (16 * 1024) /* a P-256 PEM key is ~250 bytes */
#define PEM_BUF 1024

struct crypto_key {
        mbedtls_pk_context pk;
        bool has_private;
        /* Only signing touches these (blinding bytes); the lock serialises
         * the DRBG, not the signature arithmetic. */
        pthread_mutex_t lock;
        mbedtls_entropy_context entropy;
        mbedtls_ctr_drbg_context drbg;
};

/* mbedTLS error codes add a high-level and a low-level part. */
static int mbed_errno(int r, int fallback) {
        int hi = -(-r & 0xff80), lo = -(-r & 0x007f);
        if (hi == MBEDTLS_ERR_PK_ALLOC_FAILED || hi == MBEDTLS_ERR_ECP_ALLOC_FAILED ||
            hi == MBEDTLS_ERR_PEM_ALLOC_FAILED || lo == MBEDTLS_ERR_MPI_ALLOC_FAILED ||
            lo == MBEDTLS_ERR_ASN1_ALLOC_FAILED)
                return -ENOMEM;
        return fallback;
}

static int key_new(struct crypto_key **out) {
        struct crypto_key *k = calloc(1, sizeof *k);
        if (!k)
                return -ENOMEM;
        int r = pthread_mutex_init(&k->lock, NULL);
        if (r != 0) {
                free(k);
                return -r;
        }
        mbedtls_pk_init(&k->pk);
        mbedtls_entropy_init(&k->entropy);
        mbedtls_ctr_drbg_init(&k->drbg);
        *out = k;
        return 0;
}

void crypto_key_free(struct crypto_key *k) {
        if (!k)
                return;
        mbedtls_pk_free(&k->pk);
        mbedtls_ctr_drbg_free(&k->drbg);
        mbedtls_entropy_free(&k->entropy);
        pthread_mutex_destroy(&k->lock);
        free(k);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct crypto_key *, crypto_key_free)

static int key_seed(struct crypto_key *k) {
        static const char pers[] = "muster-crypto-key";
        int r = mbedtls_ctr_drbg_seed(&k->drbg, mbedtls_entropy_func, &k->entropy,
                                      (const unsigned char *) pers, sizeof pers - 1);
        return r == 0 ? 0 : -EIO;
}

static int key_rng(void *p, unsigned char *buf, size_t len) {
        struct crypto_key *k = p;
        pthread_mutex_lock(&k->lock);
        int r = mbedtls_ctr_drbg_random(&k->drbg, buf, len);
        pthread_mutex_unlock(&k->lock);
        return r;
}

/* Accept only ECDSA-capable P-256 keys; check the private scalar matches the
 * public point so a damaged file cannot sign with a key nobody can verify. */
static int key_check(struct crypto_key *k, bool want_private) {
        if (mbedtls_pk_get_type(&k->pk) != MBEDTLS_PK_ECKEY)
                return -EINVAL;
        mbedtls_ecp_keypair *ec = mbedtls_pk_ec(k->pk);
        if (ec->grp.id != MBEDTLS_ECP_DP_SECP256R1)
                return -EINVAL;
        int r = mbedtls_ecp_check_pubkey(&ec->grp, &ec->Q);
        if (r != 0)
                return mbed_errno(r, -EINVAL);
        if (want_private) {
                r = mbedtls_ecp_check_pub_priv(ec, ec);
                if (r != 0)
                        return mbed_errno(r, -EINVAL);
        }
        k->has_private = want_private;
        return 0;
}

bool crypto_key_has_private(const struct crypto_key *k) {
        return k && k->has_private;
}

int crypto_key_generate(struct crypto_key **out) {
        _cleanup_(crypto_key_freep) struct crypto_key *k = NULL;
        int r = key_new(&k);
        if (r < 0)
                return r;
        r = key_seed(k);
        if (r < 0)
                return r;
        r = mbedtls_pk_setup(&k->pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
        if (r != 0)
                return mbed_errno(r, -EINVAL);
        r = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(k->pk),
                                mbedtls_ctr_drbg_random, &k->drbg);
        if (r != 0)
                return mbed_errno(r, -EIO);
        k->has_private = true;
        *out = TAKE_PTR(k);
        return 0;
}

/* A key file: a regular file shorter than KEY_FILE_MAX - 1 bytes, read whole
 * into *buf (NUL-terminated). -EINVAL for anything else. */
static int key_file_read(const char *path, char **buf, size_t *len) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        int r = fd_read_all(fd, (size_t) st.st_size, KEY_FILE_MAX - 2, buf, len);
        return r == -EFBIG ? -EINVAL : r; /* too big to be a key */
}

static int key_load_file(const char *path, struct crypto_key **out) {
        _cleanup_(crypto_key_freep) struct crypto_key *k = NULL;
        char *buf = NULL;
        size_t len = 0;
        int r = key_file_read(path, &buf, &len);
        if (r < 0)
                goto out;

        r = key_new(&k);
        if (r < 0)
                goto out;
        /* PEM parsing wants the terminating NUL counted. */
        r = mbedtls_pk_parse_key(&k->pk, (const unsigned char *) buf, len + 1, NULL, 0);
        if (r != 0) {
                r = mbed_errno(r, -EINVAL);
                goto out;
        }
        r = key_check(k, true);
        if (r < 0)
                goto out;
        r = key_seed(k);
        if (r < 0)
                goto out;
        *out = TAKE_PTR(k);
        r = 0;
out:
        if (buf)
                mbedtls_platform_zeroize(buf, len);
        free(buf);
        return r;
}

static int fsync_dir(const char *dir) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fsync(fd) < 0 ? -errno : 0;
}

/* Place tmp at path unless path exists (-EEXIST then). */
static int link_noreplace(const char *tmp, const char *path) {
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
                return 0;
        if (errno != EINVAL && errno != ENOSYS)
                return -errno;
        /* File systems without RENAME_NOREPLACE: link() never replaces. */
        if (link(tmp, path) < 0)
                return -errno;
        (void) unlink(tmp);
        return 0;
}

/* Write k's private key to path: temp file in the same directory (0600),
 * fsync, no-replace rename, fsync of the directory. */
static int key_write_file(struct crypto_key *k, const char *path) {
        _cleanup_free_ char *dcopy = strdup(path);
        _cleanup_free_ char *bcopy = strdup(path);
        _cleanup_free_ char *tmp = NULL;
        if (!dcopy || !bcopy)
                return -ENOMEM;
        const char *dir = dirname(dcopy), *base = basename(bcopy);
        if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }

        unsigned char pem[PEM_BUF];
        int r = mbedtls_pk_write_key_pem(&k->pk, pem, sizeof pem);
        if (r != 0) {
                r = mbed_errno(r, -EIO);
                goto out;
        }

        int fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        r = fchmod(fd, 0600) < 0 ? -errno : 0;
        if (r == 0)
                r = fd_write_full(fd, pem, strlen((char *) pem));
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0)
                r = link_noreplace(tmp, path);
        if (r < 0) {
                (void) unlink(tmp);
                goto out;
        }
        r = fsync_dir(dir);
out:
        mbedtls_platform_zeroize(pem, sizeof pem);
        return r;
}

int crypto_key_load_or_create(const char *path, struct crypto_key **out) {
        if (!path || !*path || !out)
                return -EINVAL;
        int r = key_load_file(path, out);
        if (r != -ENOENT)
                return r;

        _cleanup_(crypto_key_freep) struct crypto_key *k = NULL;
        r = crypto_key_generate(&k);
        if (r < 0)
                return r;
        r = key_write_file(k, path);
        if (r == -EEXIST) /* someone else created it first: theirs wins */
                return key_load_file(path, out);
        if (r < 0)
                return r;
        *out = TAKE_PTR(k);
        return 0;
}

int crypto_pubkey_load_pem(const char *pem, struct crypto_key **out) {
        if (!pem || !out)
                return -EINVAL;
        size_t len = strnlen(pem, KEY_FILE_MAX);
        if (len == KEY_FILE_MAX)
                return -EINVAL;

        _cleanup_(crypto_key_freep) struct crypto_key *k = NULL;
        int r = key_new(&k);
        if (r < 0)
                return r;
        r = mbedtls_pk_parse_public_key(&k->pk, (const unsigned char *) pem, len + 1);
        if (r != 0)
                return mbed_errno(r, -EINVAL);
        r = key_check(k, false);
        if (r < 0)
                return r;
        *out = TAKE_PTR(k);
        return 0;
}

int crypto_key_public_pem(const struct crypto_key *k, char **pem) {
        if (!k || !pem)
                return -EINVAL;
        unsigned char buf[PEM_BUF];
        /* mbedTLS 2.x takes a non-const context but only reads it. */
        int r = mbedtls_pk_write_pubkey_pem((mbedtls_pk_context *) &k->pk, buf, sizeof buf);
        if (r != 0)
                return mbed_errno(r, -EIO);
        char *s = strdup((char *) buf);
        if (!s)
                return -ENOMEM;
        *pem = s;
        return 0;
}

/* s > n/2 (n odd: the same as 2s > n). */
static bool s_is_high(const mbedtls_ecp_group *grp, const mbedtls_mpi *s) {
        mbedtls_mpi twice;
        mbedtls_mpi_init(&twice);
        bool high = mbedtls_mpi_copy(&twice, s) != 0 || mbedtls_mpi_shift_l(&twice, 1) != 0 ||
                    mbedtls_mpi_cmp_mpi(&twice, &grp->N) > 0;
        mbedtls_mpi_free(&twice);
        return high;
}

int crypto_sign_digest(const struct crypto_key *k, const uint8_t digest[CRYPTO_SHA256_LEN],
                       uint8_t sig[CRYPTO_SIG_LEN]) {
        if (!k || !digest || !sig)
                return -EINVAL;
        if (!k->has_private)
                return -ENOKEY;
        const mbedtls_ecp_keypair *ec = mbedtls_pk_ec(k->pk);
        mbedtls_ecp_group grp;
        mbedtls_mpi r_, s_;
        mbedtls_ecp_group_init(&grp);
        mbedtls_mpi_init(&r_);
        mbedtls_mpi_init(&s_);

        int r = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1);
        if (r == 0)
                /* RFC 6979 nonce: no dependence on the DRBG's quality or on
                 * its state being duplicated by fork(); the DRBG only blinds. */
                r = mbedtls_ecdsa_sign_det_ext(&grp, &r_, &s_, &ec->d, digest, CRYPTO_SHA256_LEN,
                                               MBEDTLS_MD_SHA256, key_rng, (void *) k);
        /* (r, s) and (r, n - s) both verify: hand out only the low one so a
         * signature has one spelling (crypto_verify_digest() insists). */
        if (r == 0 && s_is_high(&grp, &s_))
                r = mbedtls_mpi_sub_mpi(&s_, &grp.N, &s_);
        if (r == 0)
                r = mbedtls_mpi_write_binary(&r_, sig, CRYPTO_SIG_LEN / 2);
        if (r == 0)
                r = mbedtls_mpi_write_binary(&s_, sig + CRYPTO_SIG_LEN / 2, CRYPTO_SIG_LEN / 2);

        mbedtls_mpi_free(&s_);
        mbedtls_mpi_free(&r_);
        mbedtls_ecp_group_free(&grp);
        return r == 0 ? 0 : mbed_errno(r, -EIO);
}

int crypto_sig_low_s(uint8_t sig[CRYPTO_SIG_LEN]) {
        if (!sig)
                return -EINVAL;
        mbedtls_ecp_group grp;
        mbedtls_mpi s_;
        mbedtls_ecp_group_init(&grp);
        mbedtls_mpi_init(&s_);
        bool high = false;
        int r = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1);
        if (r == 0)
                r = mbedtls_mpi_read_binary(&s_, sig + CRYPTO_SIG_LEN / 2, CRYPTO_SIG_LEN / 2);
        if (r == 0 && (high = s_is_high(&grp, &s_)))
                r = mbedtls_mpi_sub_mpi(&s_, &grp.N, &s_);
        if (r == 0 && high)
                r = mbedtls_mpi_write_binary(&s_, sig + CRYPTO_SIG_LEN / 2, CRYPTO_SIG_LEN / 2);
        mbedtls_mpi_free(&s_);
        mbedtls_ecp_group_free(&grp);
        return r != 0 ? mbed_errno(r, -EIO) : high;
}

int crypto_verify_digest(const struct crypto_key *k, const uint8_t digest[CRYPTO_SHA256_LEN],
                         const uint8_t sig[CRYPTO_SIG_LEN]) {
        if (!k || !digest || !sig)
                return -EINVAL;
        const mbedtls_ecp_keypair *ec = mbedtls_pk_ec(k->pk);
        mbedtls_ecp_group grp;
        mbedtls_mpi r_, s_;
        mbedtls_ecp_group_init(&grp);
        mbedtls_mpi_init(&r_);
        mbedtls_mpi_init(&s_);

        int r = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1);
        if (r == 0)
                r = mbedtls_mpi_read_binary(&r_, sig, CRYPTO_SIG_LEN / 2);
        if (r == 0)
                r = mbedtls_mpi_read_binary(&s_, sig + CRYPTO_SIG_LEN / 2, CRYPTO_SIG_LEN / 2);
        if (r == 0 && s_is_high(&grp, &s_))
                r = MBEDTLS_ERR_ECP_VERIFY_FAILED; /* the malleable twin of a low-S signature */
        if (r == 0)
                /* Rejects r or s outside [1, n-1] as well as a wrong signature. */
                r = mbedtls_ecdsa_verify(&grp, digest, CRYPTO_SHA256_LEN, &ec->Q, &r_, &s_);

        mbedtls_mpi_free(&s_);
        mbedtls_mpi_free(&r_);
        mbedtls_ecp_group_free(&grp);
        return r == 0 ? 0 : mbed_errno(r, -EBADMSG);
}

int crypto_sha256(const void *data, size_t len, uint8_t out[CRYPTO_SHA256_LEN]) {
        if ((!data && len > 0) || !out)
                return -EINVAL;
        return mbedtls_sha256_ret(data, len, out, 0) == 0 ? 0 : -EIO;
}

int crypto_sha256_init(struct crypto_sha256_ctx *ctx) {
        mbedtls_sha256_init(&ctx->c);
        if (mbedtls_sha256_starts_ret(&ctx->c, 0) != 0) {
                mbedtls_sha256_free(&ctx->c);
                return -EIO;
        }
        return 0;
}

int crypto_sha256_update(struct crypto_sha256_ctx *ctx, const void *data, size_t len) {
        if (!data && len > 0)
                return -EINVAL;
        return mbedtls_sha256_update_ret(&ctx->c, data, len) == 0 ? 0 : -EIO;
}

int crypto_sha256_final(struct crypto_sha256_ctx *ctx, uint8_t out[CRYPTO_SHA256_LEN]) {
        int r = mbedtls_sha256_finish_ret(&ctx->c, out);
        mbedtls_sha256_free(&ctx->c);
        return r == 0 ? 0 : -EIO;
}

void crypto_sha256_free(struct crypto_sha256_ctx *ctx) {
        mbedtls_sha256_free(&ctx->c);
}

void crypto_hex(const uint8_t *in, size_t len, char *out) {
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < len; i++) {
                out[2 * i] = digits[in[i] >> 4];
                out[2 * i + 1] = digits[in[i] & 15];
        }
        out[2 * len] = '\0';
}
