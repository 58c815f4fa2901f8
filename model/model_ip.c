/* SPDX-License-Identifier: Apache-2.0 */
/* model_ip.c - IP literals, CIDRs and the destination address classes
 *
 * Every address lives in one 128-bit space; IPv4 a.b.c.d is ::ffff:a.b.c.d
 * and an IPv4 /n is /96+n. model_ip_parse() accepts every spelling a
 * resolver would read as an address (inet_aton forms: 1-4 parts, decimal,
 * 0-octal, 0x-hex; IPv6 text with an optional dotted-quad tail and optional
 * brackets), so that no IP host can pass for a DNS name
 * (docs/semantics.md#host-ip). The strict parser is for policy values.
 *
 * The classes of docs/semantics.md#destinations are defined by the static
 * range tables below and nothing else: an address is always-blocked iff it
 * lies in a blocked range, private iff it lies in a private range, public
 * otherwise. Each IPv4 range appears in its four IPv6 forms: v4-mapped
 * (::ffff:0:0/96), v4-compatible (::/96), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16, the IPv4 address in bits 16..47). The two tables are disjoint.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/pv_text.h"
#include "model/model.h"

/* ===========================================================================
 * Range tables
 * ========================================================================= */

/* clang-format off */
#define V4MAPPED(a, b, c, d, n) {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}}, 96 + (n)}
#define V4COMPAT(a, b, c, d, n) {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, a, b, c, d}}, 96 + (n)}
#define V4NAT64(a, b, c, d, n) {{{0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, a, b, c, d}}, 96 + (n)}
#define V46TO4(a, b, c, d, n) {{{0x20, 0x02, a, b, c, d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, 16 + (n)}
/* SIIT's IPv4-translated form, ::ffff:0:a.b.c.d (RFC 2765) */
#define V4SIIT(a, b, c, d, n) {{{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, a, b, c, d}}, 96 + (n)}
#define V4FORMS(a, b, c, d, n)                                                              \
    V4MAPPED(a, b, c, d, n), V4COMPAT(a, b, c, d, n), V4NAT64(a, b, c, d, n),               \
        V46TO4(a, b, c, d, n), V4SIIT(a, b, c, d, n)
#define V6(b0, b1, n) {{{b0, b1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, n}

/*= docs/semantics.md#always-blocked
 *# loopback (127/8, ::1), link-local (169.254/16, fe80::/10), unspecified
 *# (0.0.0.0/8, ::), multicast (224/4, ff00::/8), broadcast, 240/4 — also in
 *# v4-mapped, v4-compatible, NAT64 (64:ff9b::/96) and 6to4 (2002::/16) forms */
static const struct model_cidr blocked_ranges[] = {
    V4FORMS(0, 0, 0, 0, 8),
    V4FORMS(127, 0, 0, 0, 8),
    V4FORMS(169, 254, 0, 0, 16),
    V4FORMS(224, 0, 0, 0, 4),
    V4FORMS(240, 0, 0, 0, 4), /* includes 255.255.255.255 */
    {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, 128}, /* :: */
    {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}, 128}, /* ::1 */
    V6(0xfe, 0x80, 10),
    V6(0xff, 0x00, 8),
    /* RFC 8215 local-use NAT64: where the IPv4 address sits depends on the
     * operator's prefix length, so none of it can be checked: fail closed */
    {{{0, 0x64, 0xff, 0x9b, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, 48},
};

static const struct model_cidr loopback_ranges[] = {
    V4FORMS(127, 0, 0, 0, 8),
    {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}, 128}, /* ::1 */
};

static const struct model_cidr link_local_ranges[] = {
    V4FORMS(169, 254, 0, 0, 16),
    V6(0xfe, 0x80, 10),
};

/*= docs/semantics.md#private
 *# 10/8, 172.16/12, 192.168/16, 100.64/10, 192.0.0/24, 192.0.2/24, 198.18/15,
 *# 198.51.100/24, 203.0.113/24, fc00::/7, fec0::/10 (and their mapped forms) */
static const struct model_cidr private_ranges[] = {
    V4FORMS(10, 0, 0, 0, 8),
    V4FORMS(172, 16, 0, 0, 12),
    V4FORMS(192, 168, 0, 0, 16),
    V4FORMS(100, 64, 0, 0, 10),
    V4FORMS(192, 0, 0, 0, 24),
    V4FORMS(192, 0, 2, 0, 24),
    V4FORMS(198, 18, 0, 0, 15),
    V4FORMS(198, 51, 100, 0, 24),
    V4FORMS(203, 0, 113, 0, 24),
    V6(0xfc, 0x00, 7),
    V6(0xfe, 0xc0, 10),
};
/* clang-format on */

/*= docs/semantics.md#link-local
 *# known metadata host name */
static const char *const metadata_names[] = {
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
    "metadata.packet.net",
    "metadata.tencentyun.com",
    NULL,
};

/* ===========================================================================
 * Parsing
 * ========================================================================= */

static void set_v4(struct model_ip *out, uint32_t v)
{
    memset(out->b, 0, 10);
    out->b[10] = 0xff;
    out->b[11] = 0xff;
    out->b[12] = (uint8_t)(v >> 24);
    out->b[13] = (uint8_t)(v >> 16);
    out->b[14] = (uint8_t)(v >> 8);
    out->b[15] = (uint8_t)v;
}

/* inet_aton: 1-4 parts; each part decimal, 0-prefixed octal or 0x-hex; the
 * last part fills the remaining bytes. No trailing bytes. */
static bool parse_v4_aton(const uint8_t *s, size_t len, uint32_t *out)
{
    static const uint32_t maxlast[4] = {0xffffffffu, 0xffffffu, 0xffffu, 0xffu};
    uint32_t parts[4];
    size_t np = 0;
    size_t i = 0;
    for (;;) {
        if (np == 4 || i >= len || s[i] < '0' || s[i] > '9') {
            return false;
        }
        unsigned base = 10;
        if (s[i] == '0') {
            if (i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
                base = 16;
                i += 2;
                if (i >= len || pv_hexval(s[i]) < 0) {
                    return false;
                }
            } else {
                base = 8;
            }
        }
        uint64_t v = 0;
        for (; i < len && s[i] != '.'; i++) {
            int d = pv_hexval(s[i]);
            if (d < 0 || (unsigned)d >= base) {
                return false;
            }
            v = v * base + (unsigned)d;
            if (v > 0xffffffffu) {
                return false;
            }
        }
        parts[np++] = (uint32_t)v;
        if (i == len) {
            break;
        }
        i++; /* '.' */
    }
    uint32_t v = 0;
    for (size_t j = 0; j + 1 < np; j++) {
        if (parts[j] > 0xff) {
            return false;
        }
        v |= parts[j] << (24 - 8 * j);
    }
    if (parts[np - 1] > maxlast[np - 1]) {
        return false;
    }
    *out = v | parts[np - 1];
    return true;
}

/* Canonical dotted quad: four decimal parts 0..255, no leading zeros. */
static bool parse_v4_strict(const uint8_t *s, size_t len, uint8_t out[4])
{
    size_t i = 0;
    for (size_t part = 0; part < 4; part++) {
        if (part > 0) {
            if (i >= len || s[i] != '.') {
                return false;
            }
            i++;
        }
        size_t start = i;
        unsigned v = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 3) {
            v = v * 10 + (unsigned)(s[i] - '0');
            i++;
        }
        if (i == start || v > 255 || (s[start] == '0' && i - start > 1)) {
            return false;
        }
        out[part] = (uint8_t)v;
    }
    return i == len;
}

/* RFC 4291 text (as inet_pton): hex groups, one "::", dotted-quad tail. */
static bool parse_v6(const uint8_t *s, size_t len, struct model_ip *out)
{
    uint8_t tmp[16];
    size_t tp = 0;
    long colonp = -1;
    size_t i = 0;
    size_t curtok = 0;
    bool saw_xdigit = false;
    unsigned val = 0;
    unsigned ndig = 0;

    memset(tmp, 0, sizeof(tmp));
    if (len == 0) {
        return false;
    }
    if (s[0] == ':') {
        if (len < 2 || s[1] != ':') {
            return false;
        }
        i = 1;
    }
    curtok = i;
    while (i < len) {
        uint8_t ch = s[i++];
        int d = pv_hexval(ch);
        if (d >= 0) {
            if (ndig == 4) {
                return false;
            }
            val = (val << 4) | (unsigned)d;
            ndig++;
            saw_xdigit = true;
            continue;
        }
        if (ch == ':') {
            curtok = i;
            if (!saw_xdigit) {
                if (colonp >= 0) {
                    return false;
                }
                colonp = (long)tp;
                continue;
            }
            if (i == len || tp + 2 > 16) {
                return false;
            }
            tmp[tp++] = (uint8_t)(val >> 8);
            tmp[tp++] = (uint8_t)val;
            saw_xdigit = false;
            val = 0;
            ndig = 0;
            continue;
        }
        if (ch == '.' && tp + 4 <= 16) {
            if (!parse_v4_strict(s + curtok, len - curtok, tmp + tp)) {
                return false;
            }
            tp += 4;
            saw_xdigit = false;
            i = len;
            break;
        }
        return false;
    }
    if (saw_xdigit) {
        if (tp + 2 > 16) {
            return false;
        }
        tmp[tp++] = (uint8_t)(val >> 8);
        tmp[tp++] = (uint8_t)val;
    }
    if (colonp >= 0) {
        if (tp == 16) {
            return false; /* "::" must stand for at least one group */
        }
        size_t n = tp - (size_t)colonp;
        memmove(tmp + 16 - n, tmp + colonp, n);
        memset(tmp + colonp, 0, 16 - n - (size_t)colonp);
        tp = 16;
    }
    if (tp != 16) {
        return false;
    }
    memcpy(out->b, tmp, 16);
    return true;
}

static bool parse_any(const char *str, size_t len, struct model_ip *out, bool strict)
{
    const uint8_t *s = (const uint8_t *)str;
    struct model_ip tmp;
    if (s == NULL || len == 0 || len > 256) {
        return false;
    }
    if (s[0] == '[') {
        if (len < 3 || s[len - 1] != ']' || memchr(s, ':', len) == NULL) {
            return false;
        }
        if (!parse_v6(s + 1, len - 2, &tmp)) {
            return false;
        }
    } else if (memchr(s, ':', len) != NULL) {
        if (!parse_v6(s, len, &tmp)) {
            return false;
        }
    } else if (strict) {
        uint8_t q[4];
        if (!parse_v4_strict(s, len, q)) {
            return false;
        }
        set_v4(&tmp, (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]);
    } else {
        uint32_t v = 0;
        if (!parse_v4_aton(s, len, &v)) {
            return false;
        }
        set_v4(&tmp, v);
    }
    if (out != NULL) {
        *out = tmp;
    }
    return true;
}

bool model_ip_parse(const char *s, size_t len, struct model_ip *out)
{
    return parse_any(s, len, out, false);
}

bool model_ip_parse_strict(const char *s, size_t len, struct model_ip *out)
{
    return parse_any(s, len, out, true);
}

bool model_ip_is_v4(const struct model_ip *ip)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(ip->b, prefix, 12) == 0;
}

void model_ip_format(const struct model_ip *ip, char *buf, size_t buflen)
{
    char tmp[48];
    if (buf == NULL || buflen == 0) {
        return;
    }
    if (model_ip_is_v4(ip)) {
        snprintf(tmp, sizeof(tmp), "%u.%u.%u.%u", ip->b[12], ip->b[13], ip->b[14], ip->b[15]);
    } else {
        unsigned g[8];
        int best = -1;
        int bestlen = 1;
        for (int i = 0; i < 8; i++) {
            g[i] = (unsigned)ip->b[2 * i] << 8 | ip->b[2 * i + 1];
        }
        for (int i = 0; i < 8;) {
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestlen) {
                best = i;
                bestlen = j - i;
            }
            i = j > i ? j : i + 1;
        }
        size_t o = 0;
        for (int i = 0; i < 8; i++) {
            if (i == best) {
                tmp[o++] = ':';
                tmp[o++] = ':';
                i += bestlen - 1;
                continue;
            }
            if (o > 0 && tmp[o - 1] != ':') {
                tmp[o++] = ':';
            }
            int w = snprintf(tmp + o, sizeof(tmp) - o, "%x", g[i]);
            o += w > 0 ? (size_t)w : 0;
        }
        tmp[o] = '\0';
    }
    size_t n = strlen(tmp);
    if (n >= buflen) {
        n = buflen - 1;
    }
    memcpy(buf, tmp, n);
    buf[n] = '\0';
}

/* ===========================================================================
 * CIDRs
 * ========================================================================= */

static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
    unsigned full = bits / 8;
    unsigned rest = bits % 8;
    if (memcmp(a, b, full) != 0) {
        return false;
    }
    if (rest == 0) {
        return true;
    }
    uint8_t mask = (uint8_t)(0xffu << (8 - rest));
    return ((a[full] ^ b[full]) & mask) == 0;
}

bool model_cidr_parse(const char *s, size_t len, struct model_cidr *out, const char **why)
{
    const char *why_dummy = NULL;
    if (why == NULL) {
        why = &why_dummy;
    }
    *why = NULL;
    if (s == NULL || len == 0) {
        *why = "empty CIDR";
        return false;
    }
    const char *slash = memchr(s, '/', len);
    size_t alen = slash != NULL ? (size_t)(slash - s) : len;
    bool v6 = memchr(s, ':', alen) != NULL;
    struct model_ip ip;
    if (!model_ip_parse_strict(s, alen, &ip)) {
        *why = "invalid IP address";
        return false;
    }
    uint64_t n = v6 ? 128 : 32;
    if (slash != NULL) {
        size_t plen = len - alen - 1;
        if (plen == 0 || plen > 3 || !pv_ok(pv_parse_u64(slash + 1, plen, v6 ? 128 : 32, &n))) {
            *why = "invalid prefix length";
            return false;
        }
    }
    unsigned prefix = (unsigned)n + (v6 ? 0u : 96u);
    struct model_ip net;
    memset(&net, 0, sizeof(net));
    memcpy(net.b, ip.b, prefix / 8);
    if (prefix % 8 != 0) {
        net.b[prefix / 8] = (uint8_t)(ip.b[prefix / 8] & (0xffu << (8 - prefix % 8)));
    }
    if (memcmp(net.b, ip.b, 16) != 0) {
        *why = "host bits set";
        return false;
    }
    if (out != NULL) {
        out->net = net;
        out->prefix = (uint8_t)prefix;
    }
    return true;
}

bool model_cidr_contains(const struct model_cidr *c, const struct model_ip *ip)
{
    return prefix_equal(c->net.b, ip->b, c->prefix > 128 ? 128 : c->prefix);
}

bool model_cidr_overlaps(const struct model_cidr *a, const struct model_cidr *b)
{
    unsigned p = a->prefix < b->prefix ? a->prefix : b->prefix;
    return prefix_equal(a->net.b, b->net.b, p > 128 ? 128 : p);
}

/* ===========================================================================
 * Classification
 * ========================================================================= */

static bool in_ranges(const struct model_cidr *t, size_t n, const struct model_ip *ip)
{
    for (size_t i = 0; i < n; i++) {
        if (model_cidr_contains(&t[i], ip)) {
            return true;
        }
    }
    return false;
}

static bool overlaps_ranges(const struct model_cidr *t, size_t n, const struct model_cidr *c)
{
    for (size_t i = 0; i < n; i++) {
        if (model_cidr_overlaps(&t[i], c)) {
            return true;
        }
    }
    return false;
}

bool model_ip_is_link_local(const struct model_ip *ip)
{
    return ip != NULL && in_ranges(link_local_ranges, PV_ARRAY_LEN(link_local_ranges), ip);
}

bool model_ip_is_loopback(const struct model_ip *ip)
{
    return ip != NULL && in_ranges(loopback_ranges, PV_ARRAY_LEN(loopback_ranges), ip);
}

bool model_ip_is_always_blocked(const struct model_ip *ip)
{
    /* NULL fails closed. */
    return ip == NULL || in_ranges(blocked_ranges, PV_ARRAY_LEN(blocked_ranges), ip);
}

bool model_ip_is_private(const struct model_ip *ip)
{
    return ip != NULL && in_ranges(private_ranges, PV_ARRAY_LEN(private_ranges), ip);
}

bool model_ip_is_public(const struct model_ip *ip)
{
    return ip != NULL && !model_ip_is_always_blocked(ip) && !model_ip_is_private(ip);
}

bool model_cidr_overlaps_always_blocked(const struct model_cidr *c)
{
    return c == NULL || overlaps_ranges(blocked_ranges, PV_ARRAY_LEN(blocked_ranges), c);
}

bool model_cidr_overlaps_private(const struct model_cidr *c)
{
    return c != NULL && overlaps_ranges(private_ranges, PV_ARRAY_LEN(private_ranges), c);
}

size_t model_ip_class_ranges(enum model_ip_class cls, const struct model_cidr **out)
{
    switch (cls) {
    case MODEL_IPC_BLOCKED:
        *out = blocked_ranges;
        return PV_ARRAY_LEN(blocked_ranges);
    case MODEL_IPC_PRIVATE:
        *out = private_ranges;
        return PV_ARRAY_LEN(private_ranges);
    case MODEL_IPC_LINK_LOCAL:
        *out = link_local_ranges;
        return PV_ARRAY_LEN(link_local_ranges);
    }
    *out = NULL;
    return 0;
}

/*= docs/semantics.md#control-plane
 *# p is not a control-plane port (2379, 2380, 6443, 10250, 10255) */
bool model_port_is_control_plane(uint16_t port)
{
    switch (port) {
    case 2379:
    case 2380:
    case 6443:
    case 10250:
    case 10255:
        return true;
    default:
        return false;
    }
}

bool model_host_is_metadata_name(const char *host, size_t len)
{
    if (host == NULL || len == 0) {
        return false;
    }
    if (host[len - 1] == '.') {
        len--;
    }
    for (size_t i = 0; metadata_names[i] != NULL; i++) {
        const char *m = metadata_names[i];
        size_t j = 0;
        for (; j < len && m[j] != '\0'; j++) {
            char c = host[j];
            if (c >= 'A' && c <= 'Z') {
                c = (char)(c - 'A' + 'a');
            }
            if (c != m[j]) {
                break;
            }
        }
        if (j == len && m[j] == '\0') {
            return true;
        }
    }
    return false;
}

const char *const *model_metadata_names(void)
{
    return metadata_names;
}
