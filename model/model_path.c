/* SPDX-License-Identifier: Apache-2.0 */
/* model_path.c - request path canonicalisation and host normalisation
 *
 * model_path_canonicalize() implements docs/semantics.md#canonical-path in
 * two passes over the caller's bytes with no allocation: the first splits
 * the path on raw '/', checks every %-escape, strips ";params" (a raw ';'
 * only: a decoded %3B is data) and resolves "." and ".." segments (also
 * written %2E) on a fixed stack of segment offsets; the second writes the
 * kept segments re-encoded (letters, digits and -._~!$&'()*+,=:@ literal,
 * everything else %HH upper-case). Because a decoded '/' or ';' is written
 * back encoded, the output is a fixed point: canonicalising it again gives
 * it back. The output language is exactly MODEL_DOMAIN_CANONICAL_PATH.
 *
 * model_host_normalize() implements docs/semantics.md#hosts: one trailing
 * dot stripped, lower-cased, IP literals in any spelling rewritten to their
 * canonical text, anything else must be a DNS name.
 */
#include "config.h"

#include <string.h>

#include "common/pv_text.h"
#include "model/model.h"

/* Segments of a path of at most MODEL_PATH_MAX bytes: each kept one takes
 * at least two bytes ("/x"). */
#define MAX_SEGS (MODEL_PATH_MAX / 2 + 1)

static const char hexdig[] = "0123456789ABCDEF";

/*= docs/semantics.md#canonical-path
 *# every byte is written literally if it is a letter, digit or one of
 *# -._~!$&'()*+,=:@, else as %HH with upper-case hex */
static bool lit_byte(uint8_t c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return true;
    }
    switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case '=':
    case ':':
    case '@':
        return true;
    default:
        return false;
    }
}

/* Check the %-escapes of p[a..b) and count decoded bytes; '*dots' is set when
 * the decoded text is "." (1) or ".." (2), else 0. */
static bool scan_escapes(const uint8_t *p, size_t a, size_t b, size_t *ndec, int *dots)
{
    size_t n = 0;
    size_t ndot = 0;
    for (size_t i = a; i < b; n++) {
        uint8_t v = p[i];
        if (v == '%') {
            if (b - i < 3) {
                return false;
            }
            int hi = pv_hexval(p[i + 1]);
            int lo = pv_hexval(p[i + 2]);
            if (hi < 0 || lo < 0) {
                return false;
            }
            v = (uint8_t)(hi * 16 + lo);
            /*= docs/semantics.md#canonical-path
             *# bad hex, %00–%1F, %7F are rejected */
            if (v < 0x20 || v == 0x7f) {
                return false;
            }
            i += 3;
        } else {
            i++;
        }
        if (v == '.') {
            ndot++;
        }
    }
    *ndec = n;
    *dots = (ndot == n && (n == 1 || n == 2)) ? (int)n : 0;
    return true;
}

/* long: two passes over one target (split and resolve segments, then re-encode them) share the
 * segment table on the stack */
enum model_target_status model_path_canonicalize(const char *target, size_t len, char *out,
                                                 size_t outlen, size_t *outl, const char **query,
                                                 size_t *qlen, bool *has_encoded_slash)
{
    const uint8_t *p = (const uint8_t *)target;
    size_t dummy_outl = 0;
    size_t dummy_qlen = 0;
    const char *dummy_query = NULL;
    bool dummy_slash = false;
    outl = outl != NULL ? outl : &dummy_outl;
    qlen = qlen != NULL ? qlen : &dummy_qlen;
    query = query != NULL ? query : &dummy_query;
    has_encoded_slash = has_encoded_slash != NULL ? has_encoded_slash : &dummy_slash;
    *outl = 0;
    *qlen = 0;
    *query = NULL;
    *has_encoded_slash = false;
    if (out != NULL && outlen > 0) {
        out[0] = '\0';
    }
    if (out == NULL || outlen == 0 || (p == NULL && len > 0)) {
        return MODEL_TARGET_BAD;
    }

    /*= docs/semantics.md#canonical-path
     *# bytes below 0x21, 0x7F, bytes ≥ 0x80 and # are rejected; the query
     *# starts at the first ? and is kept verbatim */
    size_t plen = len;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = p[i];
        if (c < 0x21 || c >= 0x7f || c == '#') {
            return MODEL_TARGET_BAD;
        }
        if (c == '?' && plen == len) {
            plen = i;
        }
    }
    if (plen < len) {
        *query = target + plen + 1;
        *qlen = len - plen - 1;
    }

    /*= docs/semantics.md#canonical-path
     *# an empty path is /; otherwise it must start with /; at most 4096 bytes */
    if (plen > MODEL_PATH_MAX) {
        return MODEL_TARGET_TOO_LONG;
    }
    if (plen > 0 && p[0] != '/') {
        return MODEL_TARGET_BAD;
    }

    /* Pass 1: segments, escapes, params, dot segments. */
    uint16_t seg_a[MAX_SEGS];
    uint16_t seg_b[MAX_SEGS];
    size_t nseg = 0;
    bool trailing = true; /* an empty path is "/" */
    for (size_t i = 1; i <= plen && plen > 0;) {
        size_t end = i;
        while (end < plen && p[end] != '/') {
            end++;
        }
        const uint8_t *semi = memchr(p + i, ';', end - i);
        size_t eff = semi != NULL ? (size_t)(semi - p) : end;
        size_t ndec = 0;
        int dots = 0;
        int pdots = 0;
        size_t pdec = 0;
        if (!scan_escapes(p, i, eff, &ndec, &dots) || !scan_escapes(p, eff, end, &pdec, &pdots)) {
            return MODEL_TARGET_BAD;
        }
        /*= docs/semantics.md#canonical-path
         *# . and .. segments are resolved (.. above the root is rejected);
         *# empty segments collapse except a final one */
        if (ndec == 0 || dots == 1) {
            trailing = true;
        } else if (dots == 2) {
            if (nseg == 0) {
                return MODEL_TARGET_TRAVERSAL;
            }
            nseg--;
            trailing = true;
        } else {
            seg_a[nseg] = (uint16_t)i;
            seg_b[nseg] = (uint16_t)eff;
            nseg++;
            trailing = false;
        }
        i = end + 1;
    }

    /* Pass 2: write the kept segments re-encoded. */
    size_t cap = outlen - 1 < MODEL_PATH_MAX ? outlen - 1 : MODEL_PATH_MAX;
    size_t o = 0;
    bool slash = false;
    for (size_t s = 0; s < nseg; s++) {
        if (o + 1 > cap) {
            return MODEL_TARGET_TOO_LONG;
        }
        out[o++] = '/';
        for (size_t i = seg_a[s]; i < seg_b[s];) {
            uint8_t v = p[i];
            if (v == '%') {
                v = (uint8_t)(pv_hexval(p[i + 1]) * 16 + pv_hexval(p[i + 2]));
                i += 3;
            } else {
                i++;
            }
            if (lit_byte(v)) {
                if (o + 1 > cap) {
                    return MODEL_TARGET_TOO_LONG;
                }
                out[o++] = (char)v;
            } else {
                if (o + 3 > cap) {
                    return MODEL_TARGET_TOO_LONG;
                }
                out[o++] = '%';
                out[o++] = hexdig[v >> 4];
                out[o++] = hexdig[v & 15];
                slash = slash || v == '/';
            }
        }
    }
    if (trailing || nseg == 0) {
        if (o + 1 > cap) {
            return MODEL_TARGET_TOO_LONG;
        }
        out[o++] = '/';
    }
    out[o] = '\0';
    *outl = o;
    *has_encoded_slash = slash;
    return MODEL_TARGET_OK;
}

/*= docs/semantics.md#host-dns
 *# labels of [a-z0-9_-], separated by single dots, no empty label, at most
 *# 253 bytes, and its last label starts with a letter */
static bool dns_name_valid(const char *s, size_t len)
{
    if (len == 0 || len > 253) {
        return false;
    }
    size_t label = 0; /* start of the current label */
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (i == label) {
                return false;
            }
            label = i + 1;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
            return false;
        }
    }
    return label < len && s[label] >= 'a' && s[label] <= 'z';
}

bool model_host_lower(const char *host, char *out, size_t outlen)
{
    size_t i = 0;

    if (out == NULL || outlen == 0) {
        return false;
    }
    for (; host != NULL && host[i] != '\0' && i + 1 < outlen; i++) {
        char c = host[i];
        out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    out[i] = '\0';
    return host != NULL && host[i] == '\0';
}

bool model_host_normalize(const char *host, size_t len, char *out, size_t outlen, size_t *outl,
                          bool *is_ip, struct model_ip *ip)
{
    char buf[256];
    if (outl != NULL) {
        *outl = 0;
    }
    if (is_ip != NULL) {
        *is_ip = false;
    }
    if (out != NULL && outlen > 0) {
        out[0] = '\0';
    }
    if (host == NULL || out == NULL || len == 0 || len > 254) {
        return false;
    }
    /*= docs/semantics.md#host-normalise
     *# one trailing dot is stripped and ASCII letters are lower-cased */
    for (size_t i = 0; i < len; i++) {
        char c = host[i];
        buf[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    if (buf[len - 1] == '.') {
        len--;
    }
    if (len == 0) {
        return false;
    }
    struct model_ip addr;
    /*= docs/semantics.md#host-ip
     *# A host that parses as an IP literal in any spelling [...] is an IP
     *# host and is rewritten to canonical text */
    if (model_ip_parse(buf, len, &addr)) {
        char txt[64];
        model_ip_format(&addr, txt, sizeof(txt));
        size_t n = strlen(txt);
        if (n + 1 > outlen) {
            return false;
        }
        memcpy(out, txt, n + 1);
        if (outl != NULL) {
            *outl = n;
        }
        if (is_ip != NULL) {
            *is_ip = true;
        }
        if (ip != NULL) {
            *ip = addr;
        }
        return true;
    }
    if (!dns_name_valid(buf, len) || len + 1 > outlen) {
        return false;
    }
    memcpy(out, buf, len);
    out[len] = '\0';
    if (outl != NULL) {
        *outl = len;
    }
    return true;
}
