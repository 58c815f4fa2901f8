/* SPDX-License-Identifier: Apache-2.0 */
/* httpd_token.c - the bearer token: read, generate, compare, wipe
 *
 * The only file that touches the token bytes. The token comes from a file or
 * an inherited descriptor (never argv or the environment), or is generated
 * per run with RAND_bytes and written to a fresh mode-0600 file whose path is
 * logged. Comparison uses CRYPTO_memcmp over equal lengths, so the time taken
 * depends only on the presented token's length, not on where it differs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "httpd/httpd.h"

pv_result httpd_token_from_file(struct httpd_token *t, const char *path, char *err, size_t errlen)
{
    char *tok = NULL;
    unsigned mode = 0;

    memset(t, 0, sizeof(*t));
    PV_GUARD(pv_token_read(path, -1, &tok, &t->len, &mode, err, errlen));
    t->buf = (unsigned char *)tok;
    return PV_RESULT_OK;
}

pv_result httpd_token_from_fd(struct httpd_token *t, int fd, char *err, size_t errlen)
{
    char *tok = NULL;
    unsigned mode = 0;

    memset(t, 0, sizeof(*t));
    if (fd < 0) {
        snprintf(err, errlen, "--token-fd: %s", strerror(EBADF));
        PV_BAIL(PV_ERR_IO);
    }
    PV_GUARD(pv_token_read("--token-fd", fd, &tok, &t->len, &mode, err, errlen));
    t->buf = (unsigned char *)tok;
    return PV_RESULT_OK;
}

/* 32 random bytes as 64 hex digits plus '\n' in a new buffer (wiped by
 * the caller); NULL on failure. */
#define TOKEN_HEX_LEN 64u
static unsigned char *random_hex(void)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char rnd[TOKEN_HEX_LEN / 2];
    unsigned char *tok;

    if (RAND_bytes(rnd, (int)sizeof(rnd)) != 1) {
        return NULL;
    }
    tok = pv_malloc(TOKEN_HEX_LEN + 1);
    if (tok != NULL) {
        for (size_t i = 0; i < sizeof(rnd); i++) {
            tok[2 * i] = (unsigned char)hex[rnd[i] >> 4];
            tok[2 * i + 1] = (unsigned char)hex[rnd[i] & 15];
        }
        tok[TOKEN_HEX_LEN] = '\n';
    }
    OPENSSL_cleanse(rnd, sizeof(rnd));
    return tok;
}

static void wipe_free(unsigned char *tok)
{
    OPENSSL_cleanse(tok, TOKEN_HEX_LEN + 1);
    free(tok);
}

pv_result httpd_token_random(struct httpd_token *t)
{
    memset(t, 0, sizeof(*t));
    t->buf = random_hex();
    PV_ENSURE(t->buf != NULL, PV_ERR_INTERNAL);
    t->len = TOKEN_HEX_LEN;
    return PV_RESULT_OK;
}

pv_result httpd_token_generate(struct httpd_token *t, const char *dir, char *err, size_t errlen)
{
    char path[4096];
    unsigned char *tok;
    int fd;
    size_t off = 0;

    memset(t, 0, sizeof(*t));
    if (dir == NULL) {
        dir = getenv("XDG_RUNTIME_DIR");
        if (dir == NULL || dir[0] != '/') {
            dir = "/tmp";
        }
    }
    if ((size_t)snprintf(path, sizeof(path), "%s/proviso-token.XXXXXX", dir) >= sizeof(path)) {
        snprintf(err, errlen, "token directory path too long");
        PV_BAIL(PV_ERR_USAGE);
    }
    tok = random_hex();
    if (tok == NULL) {
        snprintf(err, errlen, "cannot generate a random token");
        PV_BAIL(PV_ERR_INTERNAL);
    }
    /* mkstemp creates the file 0600 and O_EXCL; fchmod guards odd umasks. */
    fd = mkstemp(path);
    if (fd < 0 || fchmod(fd, S_IRUSR | S_IWUSR) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        wipe_free(tok);
        PV_BAIL(PV_ERR_IO);
    }
    while (off < TOKEN_HEX_LEN + 1) {
        ssize_t n = write(fd, tok + off, TOKEN_HEX_LEN + 1 - off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        off += (size_t)n;
    }
    if (close(fd) != 0 || off < TOKEN_HEX_LEN + 1) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(path);
        wipe_free(tok);
        PV_BAIL(PV_ERR_IO);
    }
    t->generated_path = pv_strdup(path);
    if (t->generated_path == NULL) {
        unlink(path);
        wipe_free(tok);
        snprintf(err, errlen, "out of memory");
        PV_BAIL(PV_ERR_NOMEM);
    }
    t->buf = tok;
    t->len = TOKEN_HEX_LEN;
    return PV_RESULT_OK;
}

const char *httpd_bearer(const char *authorization, size_t *len)
{
    const char *p;
    size_t n;

    /* RFC 7235: the scheme is case-insensitive. */
    if (authorization == NULL || strncasecmp(authorization, "Bearer ", 7) != 0) {
        return NULL;
    }
    p = authorization + 7;
    while (*p == ' ') {
        p++;
    }
    n = strlen(p);
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
        n--;
    }
    *len = n;
    return p;
}

bool httpd_token_check(const struct httpd_token *t, const char *authorization)
{
    size_t len = 0;
    const char *p = httpd_bearer(authorization, &len);

    if (p == NULL || t == NULL || t->buf == NULL || len != t->len) {
        return false;
    }
    return CRYPTO_memcmp(p, t->buf, len) == 0;
}

void httpd_token_free(struct httpd_token *t)
{
    if (t == NULL) {
        return;
    }
    if (t->buf != NULL) {
        OPENSSL_cleanse(t->buf, t->len);
        free(t->buf);
    }
    if (t->generated_path != NULL) {
        unlink(t->generated_path);
        free(t->generated_path);
    }
    memset(t, 0, sizeof(*t));
}
