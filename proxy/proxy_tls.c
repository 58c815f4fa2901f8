/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_tls.c - the local CA, per-host leaf certificates, upstream TLS
 *
 * On first start the proxy creates an EC P-256 CA in its data directory
 * (ca.key mode 0600, ca.crt) and reuses it afterwards; agents trust ca.crt.
 * Intercepted tunnels get a leaf certificate for the CONNECT host (SAN DNS or
 * IP), signed by the CA, all leaves sharing one process-lifetime key; leaves
 * are cached per host (bounded, oldest evicted). Upstream connections verify
 * the server against the system trust store, or only --upstream-ca FILE, and
 * check the name (or address) the client asked for. ALPN offers only
 * http/1.1 on both sides. This is the only file that touches key material;
 * OpenSSL wipes keys when they are freed.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proxy/proxy_int.h"

#define LEAF_CACHE_MAX 1024
#define LEAF_DAYS 30
#define CA_YEARS 10

struct leaf {
    char *host;
    X509 *cert;
    time_t not_after;
};

struct proxy_tls {
    X509 *ca;
    EVP_PKEY *ca_key;
    EVP_PKEY *leaf_key;
    SSL_CTX *server;
    SSL_CTX *client;
    struct leaf leaves[LEAF_CACHE_MAX]; /* ring: next slot to fill is 'next' */
    size_t nleaves;
    size_t next;
};

static void ossl_err(char *err, size_t errlen, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[256];

    ERR_error_string_n(e, buf, sizeof(buf));
    snprintf(err, errlen, "%s: %s", what, e != 0 ? buf : "failed");
    ERR_clear_error();
}

/* ---------------------------------------------------------------------------
 * Certificates
 * ------------------------------------------------------------------------- */

static bool add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    bool ok;

    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL) {
        return false;
    }
    ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

static bool random_serial(X509 *cert)
{
    unsigned char raw[16];
    BIGNUM *bn;
    bool ok;

    if (RAND_bytes(raw, sizeof(raw)) != 1) {
        return false;
    }
    raw[0] &= 0x7F; /* positive */
    bn = BN_bin2bn(raw, sizeof(raw), NULL);
    ok = bn != NULL && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;
    BN_free(bn);
    return ok;
}

static X509 *make_ca(EVP_PKEY *key)
{
    X509 *c = X509_new();
    X509_NAME *name;

    if (c == NULL || X509_set_version(c, 2) != 1 || !random_serial(c) ||
        X509_gmtime_adj(X509_getm_notBefore(c), -3600) == NULL ||
        X509_gmtime_adj(X509_getm_notAfter(c), (long)CA_YEARS * 365 * 86400) == NULL ||
        X509_set_pubkey(c, key) != 1) {
        X509_free(c);
        return NULL;
    }
    name = X509_get_subject_name(c);
    if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"proviso", -1,
                                   -1, 0) != 1 ||
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   (const unsigned char *)"proviso-proxy local CA", -1, -1,
                                   0) != 1 ||
        X509_set_issuer_name(c, name) != 1 ||
        !add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
        !add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") ||
        !add_ext(c, c, NID_subject_key_identifier, "hash") ||
        X509_sign(c, key, EVP_sha256()) == 0) {
        X509_free(c);
        return NULL;
    }
    return c;
}

static bool write_pem(const char *path, mode_t mode, X509 *cert, EVP_PKEY *key)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    FILE *f;
    bool ok;

    if (fd < 0) {
        return false;
    }
    f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        return false;
    }
    ok = cert != NULL ? PEM_write_X509(f, cert) == 1
                      : PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1;
    ok = fclose(f) == 0 && ok;
    return ok;
}

static bool load_or_create_ca(struct proxy_tls *t, const char *dir, char *err, size_t errlen)
{
    char kpath[4096];
    char cpath[4096];
    FILE *f;

    snprintf(kpath, sizeof(kpath), "%s/ca.key", dir);
    snprintf(cpath, sizeof(cpath), "%s/ca.crt", dir);
    if (access(kpath, F_OK) == 0) {
        f = fopen(kpath, "re");
        if (f != NULL) {
            t->ca_key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
            fclose(f);
        }
        f = fopen(cpath, "re");
        if (f != NULL) {
            t->ca = PEM_read_X509(f, NULL, NULL, NULL);
            fclose(f);
        }
        if (t->ca_key == NULL || t->ca == NULL || X509_check_private_key(t->ca, t->ca_key) != 1) {
            ossl_err(err, errlen, "cannot load the CA from the data directory");
            return false;
        }
        return true;
    }
    t->ca_key = EVP_EC_gen("P-256");
    if (t->ca_key == NULL) {
        ossl_err(err, errlen, "cannot generate the CA key");
        return false;
    }
    t->ca = make_ca(t->ca_key);
    if (t->ca == NULL) {
        ossl_err(err, errlen, "cannot create the CA certificate");
        return false;
    }
    if (!write_pem(kpath, 0600, NULL, t->ca_key) || !write_pem(cpath, 0644, t->ca, NULL)) {
        snprintf(err, errlen, "cannot write %s/ca.{key,crt}: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

static bool add_san(X509 *c, const char *host)
{
    GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
    GENERAL_NAME *g = GENERAL_NAME_new();
    unsigned char ip[16];
    bool ok = false;

    if (gens == NULL || g == NULL) {
        goto out;
    }
    if (inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1) {
        ASN1_OCTET_STRING *os = ASN1_OCTET_STRING_new();
        int n = strchr(host, ':') != NULL ? 16 : 4;
        if (os == NULL || ASN1_OCTET_STRING_set(os, ip, n) != 1) {
            ASN1_OCTET_STRING_free(os);
            goto out;
        }
        GENERAL_NAME_set0_value(g, GEN_IPADD, os);
    } else {
        ASN1_IA5STRING *ia5 = ASN1_IA5STRING_new();
        if (ia5 == NULL || ASN1_STRING_set(ia5, host, (int)strlen(host)) != 1) {
            ASN1_IA5STRING_free(ia5);
            goto out;
        }
        GENERAL_NAME_set0_value(g, GEN_DNS, ia5);
    }
    if (sk_GENERAL_NAME_push(gens, g) <= 0) {
        goto out;
    }
    g = NULL;
    ok = X509_add1_ext_i2d(c, NID_subject_alt_name, gens, 0, 0) == 1;
out:
    GENERAL_NAME_free(g);
    sk_GENERAL_NAME_pop_free(gens, GENERAL_NAME_free);
    return ok;
}

static X509 *make_leaf(struct proxy_tls *t, const char *host)
{
    X509 *c = X509_new();
    X509_NAME *name;
    size_t hl = strlen(host);

    if (c == NULL || X509_set_version(c, 2) != 1 || !random_serial(c) ||
        X509_gmtime_adj(X509_getm_notBefore(c), -3600) == NULL ||
        X509_gmtime_adj(X509_getm_notAfter(c), (long)LEAF_DAYS * 86400) == NULL ||
        X509_set_pubkey(c, t->leaf_key) != 1 ||
        X509_set_issuer_name(c, X509_get_subject_name(t->ca)) != 1) {
        X509_free(c);
        return NULL;
    }
    name = X509_get_subject_name(c);
    if (hl <= 64 && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                               (const unsigned char *)host, (int)hl, -1, 0) != 1) {
        X509_free(c);
        return NULL;
    }
    if (!add_san(c, host) || !add_ext(c, t->ca, NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(c, t->ca, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
        !add_ext(c, t->ca, NID_ext_key_usage, "serverAuth") ||
        !add_ext(c, t->ca, NID_subject_key_identifier, "hash") ||
        !add_ext(c, t->ca, NID_authority_key_identifier, "keyid:always") ||
        X509_sign(c, t->ca_key, EVP_sha256()) == 0) {
        X509_free(c);
        return NULL;
    }
    return c;
}

static X509 *leaf_for(struct proxy_tls *t, const char *host)
{
    time_t now = time(NULL);
    struct leaf *slot;
    char *dup;
    X509 *c;

    for (size_t i = 0; i < t->nleaves; i++) {
        if (strcmp(t->leaves[i].host, host) == 0 && t->leaves[i].not_after > now + 86400) {
            return t->leaves[i].cert;
        }
    }
    dup = pv_strdup(host);
    if (dup == NULL) {
        return NULL;
    }
    c = make_leaf(t, host);
    if (c == NULL) {
        ERR_clear_error();
        free(dup);
        return NULL;
    }
    slot = &t->leaves[t->next];
    if (slot->host != NULL) {
        free(slot->host);
        X509_free(slot->cert);
    } else {
        t->nleaves++;
    }
    slot->host = dup;
    slot->cert = c;
    slot->not_after = now + (time_t)LEAF_DAYS * 86400;
    t->next = (t->next + 1) % LEAF_CACHE_MAX;
    return c;
}

/* ---------------------------------------------------------------------------
 * Contexts
 * ------------------------------------------------------------------------- */

static const unsigned char alpn_h1[] = "\x08http/1.1";

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    for (unsigned i = 0; i < inlen;) {
        unsigned n = in[i];
        if (i + 1 + n > inlen) {
            break;
        }
        if (n == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
            *out = in + i + 1;
            *outlen = 8;
            return SSL_TLSEXT_ERR_OK;
        }
        i += 1 + n;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

struct proxy_tls *proxy_tls_new(const char *data_dir, const char *upstream_ca, char *err,
                                size_t errlen)
{
    struct proxy_tls *t = pv_calloc(1, sizeof(*t));

    if (t == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (mkdir(data_dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", data_dir, strerror(errno));
        proxy_tls_free(t);
        return NULL;
    }
    if (!load_or_create_ca(t, data_dir, err, errlen)) {
        proxy_tls_free(t);
        return NULL;
    }
    t->leaf_key = EVP_EC_gen("P-256");
    t->server = SSL_CTX_new(TLS_server_method());
    t->client = SSL_CTX_new(TLS_client_method());
    if (t->leaf_key == NULL || t->server == NULL || t->client == NULL) {
        ossl_err(err, errlen, "cannot set up TLS");
        proxy_tls_free(t);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(t->server, TLS1_2_VERSION);
    SSL_CTX_set_min_proto_version(t->client, TLS1_2_VERSION);
    SSL_CTX_set_mode(t->server, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_mode(t->client, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_alpn_select_cb(t->server, alpn_select, NULL);
    SSL_CTX_add1_chain_cert(t->server, t->ca);
    SSL_CTX_set_verify(t->client, SSL_VERIFY_PEER, NULL);
    if (SSL_CTX_set_alpn_protos(t->client, alpn_h1, sizeof(alpn_h1) - 1) != 0) {
        ossl_err(err, errlen, "cannot set ALPN");
        proxy_tls_free(t);
        return NULL;
    }
    if (upstream_ca != NULL) {
        if (SSL_CTX_load_verify_locations(t->client, upstream_ca, NULL) != 1) {
            ossl_err(err, errlen, "cannot load --upstream-ca");
            proxy_tls_free(t);
            return NULL;
        }
    } else if (SSL_CTX_set_default_verify_paths(t->client) != 1) {
        ossl_err(err, errlen, "cannot load the system trust store");
        proxy_tls_free(t);
        return NULL;
    }
    return t;
}

void proxy_tls_free(struct proxy_tls *t)
{
    if (t == NULL) {
        return;
    }
    for (size_t i = 0; i < LEAF_CACHE_MAX; i++) {
        free(t->leaves[i].host);
        X509_free(t->leaves[i].cert);
    }
    SSL_CTX_free(t->server);
    SSL_CTX_free(t->client);
    X509_free(t->ca);
    EVP_PKEY_free(t->ca_key);
    EVP_PKEY_free(t->leaf_key);
    free(t);
}

SSL *proxy_tls_server(struct proxy_tls *t, const char *host)
{
    X509 *leaf = leaf_for(t, host);
    SSL *ssl;

    if (leaf == NULL) {
        return NULL;
    }
    ssl = SSL_new(t->server);
    if (ssl == NULL || SSL_use_certificate(ssl, leaf) != 1 ||
        SSL_use_PrivateKey(ssl, t->leaf_key) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    return ssl;
}

SSL *proxy_tls_client(struct proxy_tls *t, const char *host, bool is_ip)
{
    SSL *ssl = SSL_new(t->client);

    if (ssl == NULL) {
        return NULL;
    }
    if (is_ip) {
        if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) != 1) {
            SSL_free(ssl);
            return NULL;
        }
    } else if (SSL_set_tlsext_host_name(ssl, PV_UNCONST(host)) != 1 ||
               SSL_set1_host(ssl, host) != 1) {
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}
