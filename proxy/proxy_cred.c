/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_cred.c - the credentials store and the placeholder rewriter
 *
 * The sandbox holds placeholders (`openshell:resolve:env:KEY`, or a whole
 * token ending in `OPENSHELL-RESOLVE-ENV-KEY`); the proxy holds the values
 * (the store, --credentials FILE) and puts them into requests that the policy
 * allowed, on inspected routes, to a host the credential targets
 * (docs/proxy.md#credentials). Everything else that carries a placeholder
 * is refused before a byte goes upstream.
 *
 * The store is the credentials file the prover reads (model_cred.c) with
 * `env` and `value`/`value_file` added; model_cred.c walks it and hands each
 * secret to this file's sink, so the model never keeps one. Files must be
 * regular, owned by the proxy's user and not readable by group or others.
 *
 * The rewriter is pure: bytes in, bytes (or a refusal with a reason that
 * names keys and hosts, never values) out. Invariants: a value is written
 * only where a placeholder of its key stood, only for a host its credential
 * targets; no output of a successful rewrite still holds a marker in any
 * case or percent-encoding; values are wiped when the store is freed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/pv_text.h"
#include "common/pv_dynbuf.h"
#include "proxy/proxy_int.h"

#define STORE_MAX (1024u * 1024u)
#define VALUE_MAX (16u * 1024u)

static const char canon_marker[] = "openshell:resolve:env:";
static const char alias_marker[] = "OPENSHELL-RESOLVE-ENV-";
#define CANON_LEN (sizeof(canon_marker) - 1)
#define ALIAS_LEN (sizeof(alias_marker) - 1)
_Static_assert(sizeof(canon_marker) == sizeof(alias_marker), "one scan window serves both");

struct secret {
    char *key;
    char *value; /* wiped on free */
    size_t len;
    size_t cred; /* index in the model credential set */
};

struct proxy_creds {
    struct model_credset *set; /* metadata: names and target hosts */
    struct secret *v;
    size_t n;
    char dir[PATH_MAX]; /* the store's directory: relative value_file paths */
    char why[PATH_MAX + 128];
};

/* ===========================================================================
 * The store
 * ========================================================================= */

/* Open 'path' and read at most 'max' bytes, refusing anything but a regular
 * file of ours that group and others cannot read. New buffer (caller wipes
 * and frees), NULL with the reason in 'why'. */
static char *read_private(const char *path, size_t max, size_t *len, char *why, size_t wl)
{
    struct stat st;
    char *buf;
    size_t got = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
     * below as not a regular file); it changes nothing for a regular file */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

    if (fd < 0) {
        snprintf(why, wl, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, wl, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        snprintf(why, wl,
                 "%s: must be owned by uid %u and mode 0600 or stricter (it is uid %u, mode %04o)",
                 path, (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        close(fd);
        return NULL;
    }
    if ((uint64_t)st.st_size > max) {
        snprintf(why, wl, "%s: larger than %zu bytes", path, max);
        close(fd);
        return NULL;
    }
    buf = pv_malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        snprintf(why, wl, "%s: out of memory", path);
        close(fd);
        return NULL;
    }
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *len = got;
    return buf;
}

/* A value goes into header fields and bodies: no CR, LF or NUL. */
static bool value_ok(const char *v, size_t n)
{
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\r' || v[i] == '\n' || v[i] == '\0') {
            return false;
        }
    }
    return true;
}

static const char *sink(void *arg, size_t i, const char *env, const char *value, size_t value_len,
                        const char *value_file)
{
    struct proxy_creds *s = arg;
    struct secret *e = &s->v[s->n];
    char *file = NULL;
    size_t fl = 0;

    if (value == NULL && value_file == NULL) {
        return "env without value or value_file (the proxy has nothing to put in)";
    }
    if (value_file != NULL) {
        char path[PATH_MAX];
        int w = value_file[0] == '/' ? snprintf(path, sizeof(path), "%s", value_file)
                                     : snprintf(path, sizeof(path), "%s/%s", s->dir, value_file);
        if (w < 0 || (size_t)w >= sizeof(path)) {
            return "value_file path too long";
        }
        file = read_private(path, VALUE_MAX, &fl, s->why, sizeof(s->why));
        if (file == NULL) {
            return s->why;
        }
        /* one trailing newline is the file's, not the secret's */
        if (fl > 0 && file[fl - 1] == '\n') {
            fl--;
            if (fl > 0 && file[fl - 1] == '\r') {
                fl--;
            }
        }
        value = file;
        value_len = fl;
    }
    if (!value_ok(value, value_len) || value_len > VALUE_MAX) {
        if (file != NULL) {
            OPENSSL_cleanse(file, fl);
            free(file);
        }
        return "the value must be 1..16384 bytes without CR, LF or NUL";
    }
    e->key = pv_strdup(env);
    e->value = pv_malloc(value_len + 1);
    if (e->key == NULL || e->value == NULL) {
        free(e->key);
        free(e->value);
        e->key = e->value = NULL;
        if (file != NULL) {
            OPENSSL_cleanse(file, fl);
            free(file);
        }
        return "out of memory";
    }
    memcpy(e->value, value, value_len);
    e->value[value_len] = '\0';
    e->len = value_len;
    e->cred = i;
    s->n++;
    if (file != NULL) {
        OPENSSL_cleanse(file, fl);
        free(file);
    }
    return NULL;
}

struct proxy_creds *proxy_creds_new_from(const char *name, const char *buf, size_t len,
                                         const char *dir, char *err, size_t errlen)
{
    struct model_diags *d = model_diags_new();
    struct proxy_creds *s = pv_calloc(1, sizeof(*s));

    if (d == NULL || s == NULL) {
        snprintf(err, errlen, "out of memory");
        model_diags_free(d);
        free(s);
        return NULL;
    }
    snprintf(s->dir, sizeof(s->dir), "%s", dir != NULL ? dir : ".");
    /* at most one secret per list item: a generous bound is the byte count */
    s->v = pv_calloc(len / 8 + 1, sizeof(s->v[0]));
    if (s->v == NULL) {
        snprintf(err, errlen, "out of memory");
        model_diags_free(d);
        free(s);
        return NULL;
    }
    s->set = model_credset_load_secrets(name, buf, len, d, sink, s);
    if (s->set == NULL) {
        size_t off = 0;
        err[0] = '\0';
        for (size_t i = 0; i < model_diags_count(d) && i < 3; i++) {
            int w =
                snprintf(err + off, errlen - off, "%s%s", i ? "; " : "", model_diags_line(d, i));
            if (w < 0 || (size_t)w >= errlen - off) {
                break;
            }
            off += (size_t)w;
        }
        if (err[0] == '\0') {
            snprintf(err, errlen, "%s: cannot load credentials", name);
        }
        model_diags_free(d);
        proxy_creds_free(s);
        return NULL;
    }
    model_diags_free(d);
    return s;
}

struct proxy_creds *proxy_creds_load(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    char *buf = read_private(path, STORE_MAX, &len, err, errlen);
    struct proxy_creds *s;

    if (buf == NULL) {
        return NULL;
    }
    if (slash == NULL) {
        snprintf(dir, sizeof(dir), ".");
    } else {
        snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    }
    s = proxy_creds_new_from(path, buf, len, dir, err, errlen);
    OPENSSL_cleanse(buf, len);
    free(buf);
    return s;
}

void proxy_creds_free(struct proxy_creds *s)
{
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; s->v != NULL && i < s->n; i++) {
        if (s->v[i].value != NULL) {
            OPENSSL_cleanse(s->v[i].value, s->v[i].len);
        }
        free(s->v[i].value);
        free(s->v[i].key);
    }
    free(s->v);
    model_credset_free(s->set);
    OPENSSL_cleanse(s, sizeof(*s));
    free(s);
}

size_t proxy_creds_count(const struct proxy_creds *s)
{
    return s == NULL ? 0 : s->n;
}

static const struct secret *find(const struct proxy_creds *s, const char *k, size_t kl)
{
    for (size_t i = 0; s != NULL && i < s->n; i++) {
        if (strlen(s->v[i].key) == kl && memcmp(s->v[i].key, k, kl) == 0) {
            return &s->v[i];
        }
    }
    return NULL;
}

/* ===========================================================================
 * Recognition
 * ========================================================================= */

static bool key_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* Characters of an alias token: the key's and '-'. */
static bool token_char(char ch)
{
    return key_char(ch) || ch == '-';
}

/* Does 'p' (of 'n' bytes) contain either marker in any case, literally or
 * after percent-decoding (repeatedly: %253A is %3A is ':')? */
bool proxy_cred_has_marker(const char *p, size_t n)
{
    char buf[CANON_LEN];

    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        size_t k = 0;
        if (p[i] != 'o' && p[i] != 'O' && p[i] != '%') {
            continue;
        }
        while (k < CANON_LEN && j < n) {
            char ch = p[j++];
            /* %HH, also nested (%25 followed by HH again) */
            while (ch == '%' && j + 2 <= n) {
                int h = pv_hexval((unsigned char)p[j]);
                int l = pv_hexval((unsigned char)p[j + 1]);
                if (h < 0 || l < 0) {
                    break;
                }
                ch = (char)(h * 16 + l);
                j += 2;
            }
            buf[k++] = ch;
        }
        if (k == CANON_LEN && (strncasecmp(buf, canon_marker, CANON_LEN) == 0 ||
                               strncasecmp(buf, alias_marker, ALIAS_LEN) == 0)) {
            return true;
        }
    }
    return false;
}

/* ===========================================================================
 * Rewriting
 * ========================================================================= */

static enum proxy_cred_status refuse(struct proxy_cred_result *r, enum proxy_cred_status st,
                                     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum proxy_cred_status refuse(struct proxy_cred_result *r, enum proxy_cred_status st,
                                     const char *fmt, ...)
{
    va_list ap;

    r->st = st;
    va_start(ap, fmt);
    (void)vsnprintf(r->why, sizeof(r->why), fmt, ap);
    va_end(ap);
    return st;
}

/* Resolve key 'k' for 'host': the secret, or NULL after refusing. */
static const struct secret *resolve(const struct proxy_creds *s, const char *host, const char *k,
                                    size_t kl, struct proxy_cred_result *r)
{
    const struct secret *e;

    if (kl == 0 || kl > MODEL_CRED_KEY_MAX || !model_cred_key_valid(k, kl)) {
        (void)refuse(r, PROXY_CRED_UNAVAILABLE, "malformed placeholder key '%.*s'",
                     (int)(kl > 64 ? 64 : kl), k);
        return NULL;
    }
    e = find(s, k, kl);
    if (e == NULL) {
        (void)refuse(r, PROXY_CRED_UNAVAILABLE,
                     "placeholder key '%.*s' is not in the credentials store", (int)kl, k);
        return NULL;
    }
    /*= docs/semantics.md#credentials
     *# A request host *h* is **credentialed** when it matches some target of
     *# some credential. */
    if (host == NULL || !model_cred_covers_host(s->set, e->cred, host, strlen(host))) {
        (void)refuse(r, PROXY_CRED_MISMATCH,
                     "credential for placeholder key '%.*s' does not target host %s", (int)kl, k,
                     host != NULL ? host : "-");
        return NULL;
    }
    return e;
}

/* Text between placeholders: kept, and checked for markers afterwards. */
static void keep(struct pv_dynbuf *out, struct pv_dynbuf *rest, const char *p, size_t n)
{
    pv_dynbuf_put(out, p, n);
    pv_dynbuf_put(rest, p, n);
}

enum proxy_cred_status proxy_cred_rewrite(const struct proxy_creds *s, const char *host,
                                          const char *in, size_t len, bool redact,
                                          struct pv_dynbuf *out, struct proxy_cred_result *r)
{
    struct pv_dynbuf rest; /* the input without its placeholders */
    size_t i = 0;
    size_t from = 0;
    enum proxy_cred_status st = PROXY_CRED_NONE;

    memset(r, 0, sizeof(*r));
    pv_dynbuf_init(&rest, len + 1);
    while (i < len) {
        size_t start = i;
        size_t end = i;
        size_t ks = 0;
        const struct secret *e;

        if (in[i] == 'o' && len - i >= CANON_LEN && memcmp(in + i, canon_marker, CANON_LEN) == 0) {
            /* canonical: the marker and the longest run of key characters */
            ks = i + CANON_LEN;
            end = ks;
            while (end < len && key_char(in[end])) {
                end++;
            }
        } else if (token_char(in[i]) && (i == 0 || !token_char(in[i - 1]))) {
            /* alias: a whole token [A-Za-z0-9_-]+ whose last marker is
             * followed by the key */
            const char *m = NULL;
            end = i;
            while (end < len && token_char(in[end])) {
                end++;
            }
            for (size_t j = i; j + ALIAS_LEN <= end; j++) {
                if (memcmp(in + j, alias_marker, ALIAS_LEN) == 0) {
                    m = in + j;
                }
            }
            if (m == NULL) {
                i++; /* a canonical placeholder may still start inside it */
                continue;
            }
            ks = (size_t)(m - in) + ALIAS_LEN;
        } else {
            i++;
            continue;
        }
        /* redacting (what the policy and the logs see) needs no value */
        e = redact ? NULL : resolve(s, host, in + ks, end - ks, r);
        if (e == NULL && !redact) {
            pv_dynbuf_free(&rest);
            return r->st;
        }
        keep(out, &rest, in + from, start - from);
        pv_dynbuf_putc(&rest, ' ');
        if (e == NULL) {
            pv_dynbuf_puts(out, PROXY_CRED_REDACTED);
        } else {
            pv_dynbuf_put(out, e->value, e->len);
        }
        r->n++;
        st = PROXY_CRED_REWRITTEN;
        i = end;
        from = end;
    }
    keep(out, &rest, in + from, len - from);
    if (out->failed || rest.failed) {
        pv_dynbuf_free(&rest);
        r->st = PROXY_CRED_TOOBIG;
        snprintf(r->why, sizeof(r->why), "rewritten text over its size limit");
        return r->st;
    }
    /* fail closed: a marker in another case, percent-encoded or broken up is
     * not resolved and must not leave */
    if (proxy_cred_has_marker(rest.buf, rest.len)) {
        pv_dynbuf_free(&rest);
        r->st = PROXY_CRED_UNAVAILABLE;
        snprintf(r->why, sizeof(r->why),
                 "a credential marker remains that is not a placeholder this proxy resolves "
                 "(case, percent-encoding or shape)");
        return r->st;
    }
    pv_dynbuf_free(&rest);
    r->st = st;
    return st;
}

/* ---------------------------------------------------------------------------
 * Header fields
 * ------------------------------------------------------------------------- */

/* `Basic base64(user:secret)`: the decoded credentials are rewritten as text
 * and encoded again. Returns NONE when the value is not Basic. */
static enum proxy_cred_status basic(const struct proxy_creds *s, const char *host, const char *v,
                                    size_t n, bool redact, struct pv_dynbuf *out,
                                    struct proxy_cred_result *r)
{
    size_t b = 6;
    unsigned char *dec;
    int dl;
    size_t pad = 0;
    struct pv_dynbuf txt;
    enum proxy_cred_status st;

    if (n < 6 || strncasecmp(v, "basic ", 6) != 0) {
        return PROXY_CRED_NONE;
    }
    while (b < n && v[b] == ' ') {
        b++;
    }
    if (n - b == 0 || (n - b) % 4 != 0 || n - b > 8192) {
        return PROXY_CRED_NONE;
    }
    dec = pv_malloc((n - b) / 4 * 3 + 1);
    if (dec == NULL) {
        return refuse(r, PROXY_CRED_TOOBIG, "%s", "out of memory");
    }
    dl = EVP_DecodeBlock(dec, (const unsigned char *)v + b, (int)(n - b));
    if (dl < 0) {
        free(dec);
        return PROXY_CRED_NONE;
    }
    pad = (size_t)(v[n - 1] == '=') + (size_t)(v[n - 2] == '=');
    dl -= (int)pad;
    pv_dynbuf_init(&txt, (size_t)dl + PROXY_CRED_GROWTH);
    st = proxy_cred_rewrite(s, host, (const char *)dec, (size_t)dl, redact, &txt, r);
    OPENSSL_cleanse(dec, (size_t)dl);
    free(dec);
    if (st == PROXY_CRED_REWRITTEN) {
        size_t el = (txt.len + 2) / 3 * 4;
        unsigned char *enc = pv_malloc(el + 1);
        if (enc == NULL) {
            OPENSSL_cleanse(txt.buf, txt.len);
            pv_dynbuf_free(&txt);
            return refuse(r, PROXY_CRED_TOOBIG, "%s", "out of memory");
        }
        (void)EVP_EncodeBlock(enc, (const unsigned char *)txt.buf, (int)txt.len);
        pv_dynbuf_put(out, v, b);
        pv_dynbuf_put(out, enc, el);
        OPENSSL_cleanse(enc, el);
        free(enc);
    }
    if (txt.buf != NULL) {
        OPENSSL_cleanse(txt.buf, txt.len);
    }
    pv_dynbuf_free(&txt);
    return st;
}

bool proxy_cred_header_has_marker(const char *name, size_t nl, const char *v, size_t n)
{
    size_t b = 6;
    unsigned char *dec;
    int dl;
    bool found;

    if (proxy_cred_has_marker(name, nl) || proxy_cred_has_marker(v, n)) {
        return true;
    }
    if (n < 6 || strncasecmp(v, "basic ", 6) != 0) {
        return false;
    }
    while (b < n && v[b] == ' ') {
        b++;
    }
    if (n - b == 0 || (n - b) % 4 != 0 || n - b > 8192) {
        /* not base64 the rewriter can decode: a marker cannot be hidden
         * in it from the upstream's decoder either, unless it decodes
         * leniently; refuse to guess */
        return false;
    }
    dec = pv_malloc((n - b) / 4 * 3 + 1);
    if (dec == NULL) {
        return true; /* fail closed: the gate refuses */
    }
    dl = EVP_DecodeBlock(dec, (const unsigned char *)v + b, (int)(n - b));
    found = dl > 0 && proxy_cred_has_marker((const char *)dec, (size_t)dl);
    OPENSSL_cleanse(dec, (n - b) / 4 * 3 + 1);
    free(dec);
    return found;
}

enum proxy_cred_status proxy_cred_header(const struct proxy_creds *s, const char *host,
                                         const char *name, size_t nl, const char *v, size_t n,
                                         bool redact, struct pv_dynbuf *out,
                                         struct proxy_cred_result *r)
{
    enum proxy_cred_status st;

    memset(r, 0, sizeof(*r));
    if (proxy_cred_has_marker(name, nl)) {
        return refuse(r, PROXY_CRED_UNAVAILABLE, "credential marker in the field name %.*s",
                      (int)(nl > 64 ? 64 : nl), name);
    }
    st = basic(s, host, v, n, redact, out, r);
    if (st != PROXY_CRED_NONE) {
        return st;
    }
    pv_dynbuf_reset(out);
    return proxy_cred_rewrite(s, host, v, n, redact, out, r);
}

/* ---------------------------------------------------------------------------
 * Request targets: path segments and query values
 * ------------------------------------------------------------------------- */

static bool unreserved(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

static void put_encoded(struct pv_dynbuf *out, const char *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";

    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (unreserved(ch)) {
            pv_dynbuf_putc(out, (char)ch);
        } else {
            pv_dynbuf_putc(out, '%');
            pv_dynbuf_putc(out, hex[ch >> 4]);
            pv_dynbuf_putc(out, hex[ch & 15]);
        }
    }
}

/* Percent-decode 'p' into 'out' ('+' as space when 'plus'); false on a bad
 * escape. */
static bool decode(const char *p, size_t n, bool plus, struct pv_dynbuf *out)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '%') {
            int h = i + 1 < n ? pv_hexval((unsigned char)p[i + 1]) : -1;
            int l = i + 2 < n ? pv_hexval((unsigned char)p[i + 2]) : -1;
            if (h < 0 || l < 0) {
                return false;
            }
            pv_dynbuf_putc(out, (char)(h * 16 + l));
            i += 2;
        } else {
            pv_dynbuf_putc(out, plus && p[i] == '+' ? ' ' : p[i]);
        }
    }
    return !out->failed;
}

/* One path segment or query value: unchanged when it holds no marker, else
 * decoded, rewritten and encoded again (into both outputs). */
static enum proxy_cred_status component(const struct proxy_creds *s, const char *host,
                                        const char *p, size_t n, bool plus, struct pv_dynbuf *up,
                                        struct pv_dynbuf *red, struct proxy_cred_result *r)
{
    struct pv_dynbuf dec;
    struct pv_dynbuf a;
    struct pv_dynbuf b;
    enum proxy_cred_status st;
    struct proxy_cred_result r2;

    if (!proxy_cred_has_marker(p, n)) {
        pv_dynbuf_put(up, p, n);
        pv_dynbuf_put(red, p, n);
        return PROXY_CRED_NONE;
    }
    pv_dynbuf_init(&dec, n + 1);
    pv_dynbuf_init(&a, PROXY_CRED_BODY_MAX);
    pv_dynbuf_init(&b, n + 4096);
    if (!decode(p, n, plus, &dec)) {
        pv_dynbuf_free(&dec);
        pv_dynbuf_puts(red, PROXY_CRED_REDACTED);
        return refuse(r, PROXY_CRED_UNAVAILABLE, "%s",
                      "credential marker in a target component that does not decode");
    }
    /* the redacted form first: the logs show it also when resolving fails */
    if (proxy_cred_rewrite(s, host, dec.buf, dec.len, true, &b, &r2) == PROXY_CRED_REWRITTEN) {
        put_encoded(red, b.buf, b.len);
    } else {
        pv_dynbuf_puts(red, PROXY_CRED_REDACTED);
    }
    st = proxy_cred_rewrite(s, host, dec.buf, dec.len, false, &a, r);
    if (st == PROXY_CRED_REWRITTEN) {
        put_encoded(up, a.buf, a.len);
    } else if (st == PROXY_CRED_NONE) {
        /* has_marker saw one the rewriter did not: never let it pass */
        st = refuse(r, PROXY_CRED_UNAVAILABLE, "%s", "unresolvable credential marker");
    }
    if (a.buf != NULL) {
        OPENSSL_cleanse(a.buf, a.len);
    }
    pv_dynbuf_free(&a);
    pv_dynbuf_free(&b);
    pv_dynbuf_free(&dec);
    return st;
}

/* Keep the first refusal of a target, but go on so that the redacted form
 * is complete (the log line shows it). */
static bool note(enum proxy_cred_status st, const struct proxy_cred_result *cur,
                 struct proxy_cred_result *first, bool *any)
{
    if (st == PROXY_CRED_REWRITTEN) {
        *any = true;
        first->n += cur->n;
    } else if (st != PROXY_CRED_NONE && first->st == PROXY_CRED_NONE) {
        size_t n = first->n;
        *first = *cur;
        first->n += n;
    }
    return true;
}

enum proxy_cred_status proxy_cred_target(const struct proxy_creds *s, const char *host,
                                         const char *t, size_t tl, struct pv_dynbuf *up,
                                         struct pv_dynbuf *red, struct proxy_cred_result *r)
{
    const char *q = memchr(t, '?', tl);
    size_t pl = q != NULL ? (size_t)(q - t) : tl;
    size_t i = 0;
    bool any = false;
    struct proxy_cred_result cur;

    memset(r, 0, sizeof(*r));
    /* the path: segment by segment */
    while (i <= pl) {
        size_t e = i;
        while (e < pl && t[e] != '/') {
            e++;
        }
        (void)note(component(s, host, t + i, e - i, false, up, red, &cur), &cur, r, &any);
        if (e < pl) {
            pv_dynbuf_putc(up, '/');
            pv_dynbuf_putc(red, '/');
        }
        i = e + 1;
    }
    if (q != NULL) {
        const char *qs = q + 1;
        size_t ql = tl - pl - 1;
        pv_dynbuf_putc(up, '?');
        pv_dynbuf_putc(red, '?');
        i = 0;
        while (i <= ql) {
            size_t e = i;
            const char *eq;
            size_t kl;
            /* ';' separates pairs too for Rack 2, Django < 3.2 and Go <
             * 1.17: a marker after one is in a key for them, so it is
             * read as a key here (docs/semantics.md#query-semicolon) */
            while (e < ql && qs[e] != '&' && qs[e] != ';') {
                e++;
            }
            eq = memchr(qs + i, '=', e - i);
            kl = eq != NULL ? (size_t)(eq - qs) - i : e - i;
            if (proxy_cred_has_marker(qs + i, kl)) {
                /* only values are rewritten */
                (void)note(
                    refuse(&cur, PROXY_CRED_UNAVAILABLE, "%s", "credential marker in a query key"),
                    &cur, r, &any);
                pv_dynbuf_puts(red, PROXY_CRED_REDACTED);
            } else {
                pv_dynbuf_put(red, qs + i, kl);
            }
            pv_dynbuf_put(up, qs + i, kl);
            if (eq != NULL) {
                pv_dynbuf_putc(up, '=');
                pv_dynbuf_putc(red, '=');
                (void)note(component(s, host, eq + 1, e - i - kl - 1, true, up, red, &cur), &cur, r,
                           &any);
            }
            if (e < ql) {
                pv_dynbuf_putc(up, qs[e]);
                pv_dynbuf_putc(red, qs[e]);
            }
            i = e + 1;
        }
    }
    if (r->st != PROXY_CRED_NONE) {
        return r->st;
    }
    if (up->failed || red->failed) {
        return refuse(r, PROXY_CRED_TOOBIG, "%s", "request-target too long after rewriting");
    }
    r->st = any ? PROXY_CRED_REWRITTEN : PROXY_CRED_NONE;
    return r->st;
}

/* ---------------------------------------------------------------------------
 * Bodies
 * ------------------------------------------------------------------------- */

static bool utf8_valid(const unsigned char *p, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned char c = p[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            k = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            k = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i <= k) {
            return false;
        }
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xc0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (p[i + j] & 0x3f);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
            return false;
        }
        i += k + 1;
    }
    return true;
}

bool proxy_cred_body_type(const char *ct, size_t n)
{
    struct pv_ctype t;

    /* one parse for every reader (common/pv_text.c): a parameter named
     * twice is refused there, so "charset=utf-8" inside another
     * parameter's quotes or before a second charset cannot pass */
    if (!pv_ctype_parse(ct, n, &t)) {
        return false;
    }
    if (!(strcmp(t.media, "application/json") == 0 ||
          strcmp(t.media, "application/x-www-form-urlencoded") == 0 ||
          (strncmp(t.media, "text/", 5) == 0 && t.media[5] != '\0'))) {
        return false;
    }
    /* a charset, when given, must be UTF-8 (or its subset US-ASCII) */
    return pv_ctype_utf8(t.charset);
}

enum proxy_cred_status proxy_cred_body(const struct proxy_creds *s, const char *host, const char *b,
                                       size_t n, struct pv_dynbuf *out, struct proxy_cred_result *r)
{
    memset(r, 0, sizeof(*r));
    if (n > PROXY_CRED_BODY_MAX) {
        return refuse(r, PROXY_CRED_TOOBIG, "request body over %u bytes for credential rewrite",
                      PROXY_CRED_BODY_MAX);
    }
    if (!utf8_valid((const unsigned char *)b, n)) {
        if (proxy_cred_has_marker(b, n)) {
            return refuse(r, PROXY_CRED_UNAVAILABLE, "%s",
                          "credential marker in a body that is not UTF-8");
        }
        pv_dynbuf_put(out, b, n);
        return PROXY_CRED_NONE;
    }
    return proxy_cred_rewrite(s, host, b, n, false, out, r);
}
