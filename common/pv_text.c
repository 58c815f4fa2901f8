/* SPDX-License-Identifier: Apache-2.0 */
/* pv_text.c - small text helpers shared by every folder */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/pv.h"
#include "common/pv_text.h"

/* One UTF-8 sequence at 's[i]' (i < len): its length, 0 when malformed. */
static size_t utf8_next(const unsigned char *s, size_t len, size_t i, uint32_t *out)
{
    unsigned char b = s[i];
    size_t n;
    uint32_t cp;
    uint32_t min;

    if (b < 0x80) {
        *out = b;
        return 1;
    }
    if (b >= 0xC2 && b <= 0xDF) {
        n = 1;
        cp = b & 0x1Fu;
        min = 0x80;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 2;
        cp = b & 0x0Fu;
        min = 0x800;
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 3;
        cp = b & 0x07u;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len - i <= n) {
        return 0;
    }
    for (size_t k = 1; k <= n; k++) {
        if ((s[i + k] & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    *out = cp;
    return n + 1;
}

bool pv_utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;

    while (i < len) {
        uint32_t cp;
        size_t n = utf8_next(s, len, i, &cp);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

/* General Category Cf (Other, format), Unicode 15.1, from
 * https://www.unicode.org/Public/15.1.0/ucd/extracted/DerivedGeneralCategory.txt
 * (170 code points). Sorted, inclusive; a later Unicode version may add
 * rows. These are the characters that change how neighbouring text is shown
 * without showing themselves: bidi embeddings, overrides and isolates
 * (U+202A-202E, U+2066-2069), marks (U+200E/200F, U+061C), zero-width
 * characters (U+200B-200D, U+2060, U+FEFF), the soft hyphen and tags. */
static const struct {
    uint32_t lo, hi;
} format_ranges[] = {
    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},
    {0x070F, 0x070F},   {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},
    {0x200B, 0x200F},   {0x202A, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
    {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F},
};

int pv_hexval(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* RFC 9110 §5.6.2 tchar */
static bool tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static size_t token_len(const char *v, size_t len, size_t i)
{
    size_t j = i;

    while (j < len && tchar((unsigned char)v[j])) {
        j++;
    }
    return j - i;
}

static size_t skip_ows(const char *v, size_t len, size_t i)
{
    while (i < len && (v[i] == ' ' || v[i] == '\t')) {
        i++;
    }
    return i;
}

/* Copy 'n' bytes lower-cased into 'dst' ('cap' bytes); false when they do not fit. */
static bool lower_copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap) {
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        char c = src[k];
        dst[k] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    dst[n] = '\0';
    return true;
}

/* A parameter value at v[i]: a token or a quoted-string (quoted pairs
 * resolved into 'buf'); its end in '*end'. False when it is neither. */
static bool param_value(const char *v, size_t len, size_t i, char *buf, size_t cap, size_t *w,
                        size_t *end)
{
    *w = 0;
    if (i < len && v[i] == '"') {
        for (i++; i < len && v[i] != '"'; i++) {
            unsigned char c = (unsigned char)v[i];
            if (c == '\\') {
                if (++i >= len) {
                    return false;
                }
                c = (unsigned char)v[i];
            }
            if ((c < 0x20 && c != '\t') || c == 0x7F) {
                return false;
            }
            if (*w + 1 < cap) {
                buf[(*w)++] = (char)c;
            }
        }
        if (i >= len) {
            return false; /* unterminated */
        }
        *end = i + 1;
    } else {
        size_t n = token_len(v, len, i);
        if (n == 0) {
            return false;
        }
        for (size_t k = 0; k < n && *w + 1 < cap; k++) {
            buf[(*w)++] = v[i + k];
        }
        *end = i + n;
    }
    buf[*w] = '\0';
    return true;
}

bool pv_ctype_parse(const char *v, size_t len, struct pv_ctype *out)
{
    size_t i = skip_ows(v, len, 0);
    size_t t = token_len(v, len, i);
    size_t s;
    char seen[16][32];
    size_t nseen = 0;

    out->media[0] = '\0';
    out->charset[0] = '\0';
    if (t == 0 || i + t >= len || v[i + t] != '/') {
        return false;
    }
    s = token_len(v, len, i + t + 1);
    if (s == 0 || !lower_copy(out->media, sizeof(out->media), v + i, t + 1 + s)) {
        return false;
    }
    i = skip_ows(v, len, i + t + 1 + s);
    while (i < len) {
        size_t n;
        size_t end;
        size_t w;
        char name[32];
        char val[sizeof(out->charset) + 1];
        if (v[i] != ';') {
            return false;
        }
        i = skip_ows(v, len, i + 1);
        if (i >= len || v[i] == ';') {
            continue; /* an empty parameter */
        }
        n = token_len(v, len, i);
        if (n == 0 || i + n >= len || v[i + n] != '=' ||
            !lower_copy(name, sizeof(name), v + i, n) || nseen == sizeof(seen) / sizeof(seen[0])) {
            return false;
        }
        for (size_t k = 0; k < nseen; k++) {
            if (strcmp(seen[k], name) == 0) {
                return false; /* named twice */
            }
        }
        memcpy(seen[nseen++], name, sizeof(name));
        if (!param_value(v, len, i + n + 1, val, sizeof(val), &w, &end)) {
            return false;
        }
        if (strcmp(name, "charset") == 0 &&
            !lower_copy(out->charset, sizeof(out->charset), val, w)) {
            return false;
        }
        i = skip_ows(v, len, end);
    }
    return true;
}

bool pv_ctype_utf8(const char *cs)
{
    return cs[0] == '\0' || strcmp(cs, "utf-8") == 0 || strcmp(cs, "utf8") == 0 ||
           strcmp(cs, "us-ascii") == 0;
}

bool pv_ctype_body_utf8(const char *v, struct pv_ctype *out, char *why, size_t whylen)
{
    if (v == NULL) {
        out->media[0] = '\0';
        out->charset[0] = '\0';
        return true;
    }
    if (!pv_ctype_parse(v, strlen(v), out)) {
        (void)snprintf(why, whylen, "Content-Type does not parse, or names a parameter twice");
        return false;
    }
    if (!pv_ctype_utf8(out->charset)) {
        (void)snprintf(why, whylen,
                       "charset %.40s: the body is read as UTF-8, and a server would decode it "
                       "as %.40s",
                       out->charset, out->charset);
        return false;
    }
    return true;
}

bool pv_unicode_is_format(uint32_t cp)
{
    size_t lo = 0;
    size_t hi = PV_ARRAY_LEN(format_ranges);

    /* below the first range (every ASCII character): no search */
    if (cp < format_ranges[0].lo) {
        return false;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < format_ranges[mid].lo) {
            hi = mid;
        } else if (cp > format_ranges[mid].hi) {
            lo = mid + 1;
        } else {
            return true;
        }
    }
    return false;
}

enum pv_text_verdict pv_text_check(const unsigned char *s, size_t len, uint32_t *cp, size_t *off)
{
    size_t i = 0;

    while (i < len) {
        uint32_t c = 0;
        size_t n = utf8_next(s, len, i, &c);
        if (n == 0) {
            *cp = 0;
            *off = i;
            return PV_TEXT_BAD_UTF8;
        }
        if (pv_unicode_is_format(c)) {
            *cp = c;
            *off = i;
            return PV_TEXT_FORMAT_CHAR;
        }
        i += n;
    }
    *cp = 0;
    *off = len;
    return PV_TEXT_OK;
}
