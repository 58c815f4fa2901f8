/* SPDX-License-Identifier: Apache-2.0 */
/* audit_key.c - the advisor's Ed25519 audit key: create, load, sign, verify
 *
 * The private key lives in one PEM file in the advisor's data directory,
 * created with O_EXCL and mode 0600 (a second advisor starting at the same
 * moment loads the winner's key instead of replacing it), and is refused
 * when group or others can read or write it. Only this file touches the
 * private key; OpenSSL wipes it when the EVP_PKEY is freed. Public keys
 * travel as the base64 of the raw 32 bytes or as PEM.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "audit/audit.h"
#include "audit/audit_int.h"

#define KEY_FILE_MAX 16384

struct audit_key {
    EVP_PKEY *pkey;
    bool priv;
};

void audit_key_free(struct audit_key *k)
{
    if (k == NULL) {
        return;
    }
    EVP_PKEY_free(k->pkey);
    free(k);
}

static struct audit_key *wrap(EVP_PKEY *pkey, bool priv)
{
    struct audit_key *k = pv_calloc(1, sizeof(*k));

    if (k == NULL) {
        EVP_PKEY_free(pkey);
        return NULL;
    }
    k->pkey = pkey;
    k->priv = priv;
    return k;
}

/* Write a new key to 'path' (O_EXCL). EEXIST is left in errno for the
 * caller, which then loads the existing file. */
static bool create_key(const char *path, char *err, size_t errlen)
{
    EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    BIO *mem = BIO_new(BIO_s_mem());
    char *pem = NULL;
    long n = 0;
    int fd;
    bool ok = false;

    if (pkey == NULL || mem == NULL ||
        PEM_write_bio_PrivateKey(mem, pkey, NULL, NULL, 0, NULL, NULL) != 1) {
        snprintf(err, errlen, "cannot generate an Ed25519 key");
        goto out;
    }
    n = BIO_get_mem_data(mem, &pem);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int e = errno; /* EEXIST tells the caller to load the file */
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        BIO_free(mem);
        EVP_PKEY_free(pkey);
        errno = e;
        return false;
    }
    ok = n > 0 && write(fd, pem, (size_t)n) == (ssize_t)n && fsync(fd) == 0;
    if (close(fd) != 0) {
        ok = false;
    }
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write the key", path);
        (void)unlink(path);
        errno = EIO;
    }
out:
    BIO_free(mem);
    EVP_PKEY_free(pkey);
    return ok;
}

struct audit_key *audit_key_open(const char *path, char *err, size_t errlen)
{
    struct stat st;
    EVP_PKEY *pkey;
    BIO *bio;
    char buf[KEY_FILE_MAX];
    ssize_t n;
    int fd;

    if (!create_key(path, err, errlen) && errno != EEXIST) {
        return NULL;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    if ((st.st_mode & 077) != 0) {
        snprintf(err, errlen,
                 "%s: mode %03o; the audit key must not be accessible to group or "
                 "others (chmod 600)",
                 path, (unsigned)(st.st_mode & 0777));
        close(fd);
        return NULL;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0 || (size_t)n >= sizeof(buf)) {
        snprintf(err, errlen, "%s: cannot read the key", path);
        OPENSSL_cleanse(buf, sizeof(buf));
        return NULL;
    }
    bio = BIO_new_mem_buf(buf, (int)n);
    pkey = bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    OPENSSL_cleanse(buf, sizeof(buf));
    if (pkey == NULL || EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519) {
        snprintf(err, errlen, "%s: not an Ed25519 private key (PEM)", path);
        EVP_PKEY_free(pkey);
        return NULL;
    }
    return wrap(pkey, true);
}

struct audit_key *audit_key_public(const char *text, size_t len, char *err, size_t errlen)
{
    EVP_PKEY *pkey = NULL;
    size_t a = 0;
    size_t b = len;

    while (a < b && (text[a] == ' ' || text[a] == '\n' || text[a] == '\r' || text[a] == '\t')) {
        a++;
    }
    while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\n' || text[b - 1] == '\r' ||
                     text[b - 1] == '\t')) {
        b--;
    }
    if (b - a > KEY_FILE_MAX || b == a) {
        snprintf(err, errlen, "not a public key");
        return NULL;
    }
    if (strncmp(text + a, "-----BEGIN", 10) == 0) {
        BIO *bio = BIO_new_mem_buf(text + a, (int)(b - a));
        pkey = bio != NULL ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
    } else {
        char *s = pv_strndup(text + a, b - a);
        size_t n = 0;
        unsigned char *raw = s != NULL ? audit_unb64(s, &n) : NULL;
        if (raw != NULL && n == 32) {
            pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, n);
        }
        free(raw);
        free(s);
    }
    if (pkey == NULL || EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519) {
        snprintf(err, errlen, "not an Ed25519 public key (PEM, or base64 of the 32 raw bytes)");
        EVP_PKEY_free(pkey);
        return NULL;
    }
    return wrap(pkey, false);
}

pv_result audit_key_pub_b64(const struct audit_key *k, char out[AUDIT_PUB_B64_LEN])
{
    unsigned char raw[32];
    size_t n = sizeof(raw);
    char *b;

    PV_GUARD_OSSL(EVP_PKEY_get_raw_public_key(k->pkey, raw, &n), PV_ERR_INTERNAL);
    PV_ENSURE(n == 32, PV_ERR_INTERNAL);
    b = audit_b64(raw, n);
    PV_ENSURE(b != NULL && strlen(b) == AUDIT_PUB_B64_LEN - 1, PV_ERR_NOMEM);
    memcpy(out, b, AUDIT_PUB_B64_LEN);
    free(b);
    return PV_RESULT_OK;
}

char *audit_key_pub_pem(const struct audit_key *k)
{
    BIO *mem = BIO_new(BIO_s_mem());
    char *p = NULL;
    char *out = NULL;
    long n;

    if (mem != NULL && PEM_write_bio_PUBKEY(mem, k->pkey) == 1) {
        n = BIO_get_mem_data(mem, &p);
        out = n > 0 ? pv_strndup(p, (size_t)n) : NULL;
    }
    BIO_free(mem);
    return out;
}

/* ===========================================================================
 * Signatures (audit_int.h)
 * ========================================================================= */

pv_result audit_sign(const struct audit_key *k, const void *msg, size_t len,
                     unsigned char sig[AUDIT_SIG_LEN])
{
    EVP_MD_CTX *ctx;
    size_t n = AUDIT_SIG_LEN;
    int ok;

    PV_ENSURE(k != NULL && k->priv, PV_ERR_INTERNAL);
    ctx = EVP_MD_CTX_new();
    PV_ENSURE(ctx != NULL, PV_ERR_NOMEM);
    ok = EVP_DigestSignInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
         EVP_DigestSign(ctx, sig, &n, msg, len) == 1 && n == AUDIT_SIG_LEN;
    EVP_MD_CTX_free(ctx);
    PV_ENSURE(ok, PV_ERR_INTERNAL);
    return PV_RESULT_OK;
}

bool audit_sig_ok(const struct audit_key *k, const void *msg, size_t len, const unsigned char *sig,
                  size_t siglen)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok;

    if (ctx == NULL) {
        return false;
    }
    ok = siglen == AUDIT_SIG_LEN && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
         EVP_DigestVerify(ctx, sig, siglen, msg, len) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}
