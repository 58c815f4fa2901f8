/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_ip.c - unit tests of model_ip.c (IP literals, CIDRs, classes)
 *
 * Tables for parsing (every inet_aton spelling, IPv6 text), canonical
 * formatting (RFC 5952), CIDRs, the destination classes of
 * docs/semantics.md#destinations, metadata names and control-plane ports.
 * The link-local classifier vectors of the reference's unit tests and
 * its proxy's IP vectors are embedded. A
 * randomised test checks the range tables against an independent classifier
 * that unwraps the embedded IPv4 forms by hand.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

/* ===========================================================================
 * Parsing and formatting
 * ========================================================================= */

struct parse_case {
    const char *in;
    const char *canon; /* NULL = not an IP literal */
};

static const struct parse_case parse_cases[] = {
    {"1.2.3.4", "1.2.3.4"},
    {"0.0.0.0", "0.0.0.0"},
    {"255.255.255.255", "255.255.255.255"},
    {"2852039166", "169.254.169.254"},
    {"0xa9.254.169.254", "169.254.169.254"},
    {"0XA9.0XFE.0xa9.0xfe", "169.254.169.254"},
    {"0251.0376.0251.0376", "169.254.169.254"},
    {"0xA9FEA9FE", "169.254.169.254"},
    {"169.16689662", "169.254.169.254"},
    {"169.254.43518", "169.254.169.254"},
    {"127.1", "127.0.0.1"},
    {"0", "0.0.0.0"},
    {"0x7f000001", "127.0.0.1"},
    {"017700000001", "127.0.0.1"},
    {"00000000127.0.0.1", "87.0.0.1"}, /* octal */
    {"0x00000000000a.0.0.1", "10.0.0.1"},
    {"4294967295", "255.255.255.255"},
    {"01.02.03.04", "1.2.3.4"},
    {"::1", "::1"},
    {"[::1]", "::1"},
    {"::", "::"},
    {"[::]", "::"},
    {"::ffff:1.2.3.4", "1.2.3.4"},
    {"::FFFF:7F00:1", "127.0.0.1"},
    {"[::ffff:169.254.169.254]", "169.254.169.254"},
    {"fe80::1", "fe80::1"},
    {"FE80::ABCD:EF01", "fe80::abcd:ef01"},
    {"2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
    {"2001:db8:0:0:0:0:2:1", "2001:db8::2:1"},
    {"2001:db8::0:1", "2001:db8::1"},
    {"1:0:0:2:0:0:0:3", "1:0:0:2::3"},
    {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},
    {"2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
    {"1::", "1::"},
    {"1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"},
    {"::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"},
    {"64:ff9b::7f00:1", "64:ff9b::7f00:1"},
    {"64:ff9b::127.0.0.1", "64:ff9b::7f00:1"},
    {"::1.2.3.4", "::102:304"},
    {"1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"},
    {"2002:a9fe:a9fe::", "2002:a9fe:a9fe::"},
    /* Not IP literals. */
    {"", NULL},
    {"1.2.3.4.5", NULL},
    {"256.1.1.1", NULL},
    {"1.2.3.256", NULL},
    {"1.2.256.0", NULL},
    {"08", NULL},
    {"09.1.1.1", NULL},
    {"0x", NULL},
    {"0x1g", NULL},
    {"0x.1.1.1", NULL},
    {"1..2", NULL},
    {"1.2.3.4.", NULL},
    {".1.2.3", NULL},
    {"4294967296", NULL},
    {"0x100000000", NULL},
    {"99999999999999999999999", NULL},
    {"1.16777216", NULL},
    {"1.2.65536", NULL},
    {"a.b.c.d", NULL},
    {"example.com", NULL},
    {"1.2.3.4 ", NULL},
    {" 1.2.3.4", NULL},
    {"-1", NULL},
    {"+1", NULL},
    {"1.-1", NULL},
    {"1e3", NULL},
    {"fe80::1%eth0", NULL},
    {":::", NULL},
    {":1::", NULL},
    {"1:", NULL},
    {":1", NULL},
    {"1:2:3:4:5:6:7:8:9", NULL},
    {"1:2:3:4:5:6:7", NULL},
    {"1:2:3:4:5:6:7:8::", NULL},
    {"::1:2:3:4:5:6:7:8", NULL},
    {"1::2::3", NULL},
    {"12345::", NULL},
    {"::1.2.3", NULL},
    {"::1.2.3.04", NULL},
    {"::0x1.2.3.4", NULL},
    {"::1.2.3.4:5", NULL},
    {"1:2:3:4:5:6:7:1.2.3.4", NULL},
    {"[1.2.3.4]", NULL},
    {"[::1", NULL},
    {"::1]", NULL},
    {"[]", NULL},
    {"[:]", NULL},
    {"g::1", NULL},
};

START_TEST(test_parse)
{
    const struct parse_case *c = &parse_cases[_i];
    struct model_ip ip;
    memset(&ip, 0xaa, sizeof(ip));
    bool ok = model_ip_parse(c->in, strlen(c->in), &ip);
    ck_assert_msg(ok == (c->canon != NULL), "'%s': parse %d", c->in, (int)ok);
    if (ok) {
        char buf[46];
        model_ip_format(&ip, buf, sizeof(buf));
        ck_assert_msg(strcmp(buf, c->canon) == 0, "'%s' -> '%s', want '%s'", c->in, buf, c->canon);
        /* The canonical text is a strict literal of the same address. */
        struct model_ip back;
        ck_assert(model_ip_parse_strict(buf, strlen(buf), &back));
        ck_assert_mem_eq(back.b, ip.b, 16);
    }
    ck_assert(!model_ip_parse(c->in, strlen(c->in), NULL) == (c->canon == NULL));
}
END_TEST

struct strict_case {
    const char *in;
    bool ok;
};

static const struct strict_case strict_cases[] = {
    {"1.2.3.4", true},
    {"0.0.0.0", true},
    {"255.255.255.255", true},
    {"10.0.0.1", true},
    {"::1", true},
    {"[::1]", true},
    {"fe80::1", true},
    {"::ffff:10.0.0.1", true},
    {"01.2.3.4", false},
    {"1.2.3.04", false},
    {"2852039166", false},
    {"1.2.3", false},
    {"127.1", false},
    {"0x1.2.3.4", false},
    {"256.0.0.0", false},
    {"1.2.3.4.5", false},
    {"1.2.3.", false},
    {"", false},
    {"1.2.3.1000", false},
    {"::1.2.3.04", false},
    {"1.2.3.4/32", false},
};

START_TEST(test_parse_strict)
{
    const struct strict_case *c = &strict_cases[_i];
    struct model_ip ip;
    ck_assert_msg(model_ip_parse_strict(c->in, strlen(c->in), &ip) == c->ok, "'%s'", c->in);
}
END_TEST

START_TEST(test_format_small_buffer)
{
    struct model_ip ip;
    char buf[8];
    ck_assert(model_ip_parse("2001:db8::1", 11, &ip));
    memset(buf, 'x', sizeof(buf));
    model_ip_format(&ip, buf, 5);
    ck_assert_str_eq(buf, "2001");
    model_ip_format(&ip, buf, 0); /* no write */
    ck_assert_str_eq(buf, "2001");
    ck_assert(
        model_ip_is_v4(&(struct model_ip){{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}}));
    ck_assert(!model_ip_is_v4(&ip));
}
END_TEST

/* ===========================================================================
 * Classes
 * ========================================================================= */

enum { PUB, PRIV, BLK, BLK_LL };

struct class_case {
    const char *addr;
    int cls;
};

static const struct class_case class_cases[] = {
    {"127.0.0.1", BLK},
    {"127.255.255.255", BLK},
    {"169.254.169.254", BLK_LL},
    {"169.254.0.1", BLK_LL},
    {"169.254.255.255", BLK_LL},
    {"169.253.255.255", PUB},
    {"169.255.0.0", PUB},
    {"0.0.0.0", BLK},
    {"0.1.2.3", BLK},
    {"224.0.0.1", BLK},
    {"239.255.255.255", BLK},
    {"240.0.0.1", BLK},
    {"255.255.255.255", BLK},
    {"223.255.255.255", PUB},
    {"10.0.0.1", PRIV},
    {"172.16.0.1", PRIV},
    {"172.31.255.255", PRIV},
    {"172.32.0.1", PUB},
    {"172.15.255.255", PUB},
    {"192.168.1.1", PRIV},
    {"100.64.0.1", PRIV},
    {"100.127.255.255", PRIV},
    {"100.128.0.1", PUB},
    {"100.63.255.255", PUB},
    {"192.0.0.1", PRIV},
    {"192.0.2.1", PRIV},
    {"198.18.0.1", PRIV},
    {"198.19.255.255", PRIV},
    {"198.20.0.0", PUB},
    {"198.51.100.1", PRIV},
    {"203.0.113.1", PRIV},
    {"8.8.8.8", PUB},
    {"93.184.216.34", PUB},
    {"::ffff:10.0.0.1", PRIV},
    {"::ffff:127.0.0.1", BLK},
    {"::ffff:169.254.169.254", BLK_LL},
    {"::ffff:8.8.8.8", PUB},
    {"::1", BLK},
    {"::", BLK},
    {"fe80::1", BLK_LL},
    {"fe80::abcd:ef01", BLK_LL},
    {"febf::1", BLK_LL},
    {"fec0::1", PRIV},
    {"feff::1", PRIV},
    {"ff02::1", BLK},
    {"fc00::1", PRIV},
    {"fd12:3456::1", PRIV},
    {"fbff::1", PUB},
    {"2001:db8::1", PUB},
    {"2606:4700::1", PUB},
    {"::127.0.0.1", BLK},
    {"::169.254.169.254", BLK_LL},
    {"::10.0.0.1", PRIV},
    {"::8.8.8.8", PUB},
    {"::2", BLK}, /* v4-compatible 0.0.0.2 */
    {"64:ff9b::127.0.0.1", BLK},
    {"64:ff9b::a9fe:a9fe", BLK_LL},
    {"64:ff9b::10.1.2.3", PRIV},
    {"64:ff9b::8.8.8.8", PUB},
    {"64:ff9b::", BLK},
    {"2002:7f00:1::", BLK},
    {"2002:a9fe:a9fe::1", BLK_LL},
    {"2002:a00:1::1", PRIV},
    {"2002:808:808::1", PUB},
    {"2002:e000:1::", BLK},
    {"2002::", BLK},
    {"64:ff9b:1::1", BLK}, /* RFC 8215 local-use NAT64: the embedding is unknown */
    {"64:ff9b:1::a9fe:a9fe", BLK},
    {"64:ff9b:2::1", PUB},
    {"::ffff:0:a9fe:a9fe", BLK_LL}, /* SIIT form of 169.254.169.254 */
    {"::ffff:0:a00:1", PRIV},       /* SIIT form of 10.0.0.1 */
    {"::ffff:0:808:808", PUB},
};

START_TEST(test_classes)
{
    const struct class_case *c = &class_cases[_i];
    struct model_ip ip;
    ck_assert_msg(model_ip_parse(c->addr, strlen(c->addr), &ip), "'%s'", c->addr);
    bool blk = c->cls == BLK || c->cls == BLK_LL;
    ck_assert_msg(model_ip_is_always_blocked(&ip) == blk, "'%s' blocked", c->addr);
    ck_assert_msg(model_ip_is_private(&ip) == (c->cls == PRIV), "'%s' private", c->addr);
    ck_assert_msg(model_ip_is_public(&ip) == (c->cls == PUB), "'%s' public", c->addr);
    ck_assert_msg(model_ip_is_link_local(&ip) == (c->cls == BLK_LL), "'%s' link-local", c->addr);
}
END_TEST

/* Loopback (the test switch's exception, docs/semantics.md#test-loopback):
 * 127/8 and ::1 in every form the always-blocked table knows, nothing else. */
static const struct {
    const char *addr;
    bool lo;
} lo_cases[] = {
    {"127.0.0.1", true},        {"127.255.255.254", true}, {"::1", true},
    {"::ffff:127.0.0.6", true}, {"64:ff9b::7f00:1", true}, {"2002:7f00:1::", true},
    {"126.255.255.255", false}, {"128.0.0.0", false},      {"::2", false},
    {"169.254.1.1", false},     {"0.0.0.0", false},        {"10.0.0.1", false},
};

START_TEST(test_loopback)
{
    struct model_ip ip;

    ck_assert(model_ip_parse(lo_cases[_i].addr, strlen(lo_cases[_i].addr), &ip));
    ck_assert_msg(model_ip_is_loopback(&ip) == lo_cases[_i].lo, "%s", lo_cases[_i].addr);
    ck_assert(!lo_cases[_i].lo || model_ip_is_always_blocked(&ip));
}
END_TEST

/* Independent classifier: unwrap the embedded IPv4 forms by hand. */
static int v4_class(const uint8_t *a)
{
    if (a[0] == 0 || a[0] == 127 || a[0] >= 224) {
        return BLK;
    }
    if (a[0] == 169 && a[1] == 254) {
        return BLK_LL;
    }
    if (a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168) ||
        (a[0] == 100 && (a[1] & 0xc0) == 64) || (a[0] == 192 && a[1] == 0 && a[2] == 0) ||
        (a[0] == 192 && a[1] == 0 && a[2] == 2) || (a[0] == 198 && (a[1] & 0xfe) == 18) ||
        (a[0] == 198 && a[1] == 51 && a[2] == 100) || (a[0] == 203 && a[1] == 0 && a[2] == 113)) {
        return PRIV;
    }
    return PUB;
}

static int ref_class(const struct model_ip *ip)
{
    static const uint8_t zero[12] = {0};
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t siit[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
    static const uint8_t local_nat64[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
    const uint8_t *b = ip->b;
    if (memcmp(b, mapped, 12) == 0 || memcmp(b, zero, 12) == 0 || memcmp(b, nat64, 12) == 0 ||
        memcmp(b, siit, 12) == 0) {
        return v4_class(b + 12);
    }
    if (memcmp(b, local_nat64, 6) == 0) {
        return BLK;
    }
    if (b[0] == 0x20 && b[1] == 0x02) {
        return v4_class(b + 2);
    }
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) {
        return BLK_LL;
    }
    if (b[0] == 0xff) {
        return BLK;
    }
    if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)) {
        return PRIV;
    }
    return PUB;
}

static unsigned long rng = 99;

static uint8_t rbyte(void)
{
    rng = rng * 6364136223846793005ul + 1442695040888963407ul;
    return (uint8_t)(rng >> 56);
}

START_TEST(test_classes_random)
{
    for (int iter = 0; iter < 50000; iter++) {
        struct model_ip ip;
        for (size_t i = 0; i < 16; i++) {
            ip.b[i] = rbyte();
        }
        switch (rbyte() % 8) {
        case 6: /* SIIT */
            memset(ip.b, 0, 12);
            ip.b[8] = ip.b[9] = 0xff;
            break;
        case 7: /* local-use NAT64 */
            memset(ip.b, 0, 6);
            ip.b[1] = 0x64;
            ip.b[2] = 0xff;
            ip.b[3] = 0x9b;
            ip.b[5] = 1;
            break;
        case 0: /* v4-compatible */
            memset(ip.b, 0, 12);
            break;
        case 1: /* v4-mapped */
            memset(ip.b, 0, 10);
            ip.b[10] = ip.b[11] = 0xff;
            break;
        case 2: /* NAT64 */
            memset(ip.b, 0, 12);
            ip.b[1] = 0x64;
            ip.b[2] = 0xff;
            ip.b[3] = 0x9b;
            break;
        case 3: /* 6to4 */
            ip.b[0] = 0x20;
            ip.b[1] = 0x02;
            break;
        case 4: /* fc00::/7 .. ff00::/8 */
            ip.b[0] = (uint8_t)(0xfc | (rbyte() & 3));
            break;
        default:
            break;
        }
        /* Bias the embedded IPv4 first byte towards interesting values. */
        static const uint8_t first[] = {0, 10, 100, 127, 169, 172, 192, 198, 203, 224, 240, 255};
        if (rbyte() & 1) {
            size_t at = (ip.b[0] == 0x20 && ip.b[1] == 0x02) ? 2 : 12;
            ip.b[at] = first[rbyte() % sizeof(first)];
            if (ip.b[at] == 169 && (rbyte() & 1)) {
                ip.b[at + 1] = 254;
            }
        }
        int want = ref_class(&ip);
        char buf[46];
        model_ip_format(&ip, buf, sizeof(buf));
        ck_assert_msg(model_ip_is_always_blocked(&ip) == (want == BLK || want == BLK_LL), "%s",
                      buf);
        ck_assert_msg(model_ip_is_private(&ip) == (want == PRIV), "%s", buf);
        ck_assert_msg(model_ip_is_public(&ip) == (want == PUB), "%s", buf);
        ck_assert_msg(model_ip_is_link_local(&ip) == (want == BLK_LL), "%s", buf);
        /* Formatting round-trips. */
        struct model_ip back;
        ck_assert_msg(model_ip_parse(buf, strlen(buf), &back), "%s", buf);
        ck_assert_mem_eq(back.b, ip.b, 16);
    }
}
END_TEST

START_TEST(test_class_ranges)
{
    const struct model_cidr *blk = NULL;
    const struct model_cidr *prv = NULL;
    size_t nb = model_ip_class_ranges(MODEL_IPC_BLOCKED, &blk);
    size_t np = model_ip_class_ranges(MODEL_IPC_PRIVATE, &prv);
    ck_assert_uint_gt(nb, 20);
    ck_assert_uint_gt(np, 30);
    for (size_t i = 0; i < nb; i++) {
        /* Networks are clean, inside the class, and disjoint from private. */
        ck_assert(model_ip_is_always_blocked(&blk[i].net));
        ck_assert(model_cidr_overlaps_always_blocked(&blk[i]));
        for (size_t j = 0; j < np; j++) {
            ck_assert(!model_cidr_overlaps(&blk[i], &prv[j]));
        }
        char buf[64];
        model_ip_format(&blk[i].net, buf, sizeof(buf));
        struct model_cidr c;
        char txt[80];
        bool v4 = model_ip_is_v4(&blk[i].net) && blk[i].prefix >= 96;
        snprintf(txt, sizeof(txt), "%s/%u", buf, v4 ? blk[i].prefix - 96u : blk[i].prefix);
        ck_assert_msg(model_cidr_parse(txt, strlen(txt), &c, NULL), "%s", txt);
        ck_assert_uint_eq(c.prefix, blk[i].prefix);
    }
    for (size_t j = 0; j < np; j++) {
        ck_assert(model_ip_is_private(&prv[j].net));
        ck_assert(model_cidr_overlaps_private(&prv[j]));
        ck_assert(!model_cidr_overlaps_always_blocked(&prv[j]));
    }
    ck_assert_uint_eq(model_ip_class_ranges((enum model_ip_class)7, &blk), 0);
    ck_assert_ptr_null(blk);
}
END_TEST

/* ===========================================================================
 * CIDRs
 * ========================================================================= */

struct cidr_case {
    const char *in;
    int prefix;      /* -1 = error */
    const char *why; /* substring when an error */
};

static const struct cidr_case cidr_cases[] = {
    {"10.0.0.0/8", 104, NULL},
    {"10.0.0.1", 128, NULL},
    {"10.0.5.0/24", 120, NULL},
    {"0.0.0.0/0", 96, NULL},
    {"::/0", 0, NULL},
    {"fe80::/10", 10, NULL},
    {"::1", 128, NULL},
    {"::ffff:10.0.0.0/104", 104, NULL},
    {"203.0.113.10/32", 128, NULL},
    {"10.0.0.1/8", -1, "host bits set"},
    {"fe80::1/10", -1, "host bits set"},
    {"10.0.0.128/24", -1, "host bits set"},
    {"1.2.3.4/33", -1, "prefix"},
    {"::/129", -1, "prefix"},
    {"1.2.3.4/", -1, "prefix"},
    {"1.2.3.4/a", -1, "prefix"},
    {"1.2.3.4/-1", -1, "prefix"},
    {"1.2.3.4/ 8", -1, "prefix"},
    {"1.2.3.4/0008", -1, "prefix"},
    {"/8", -1, "address"},
    {"010.0.0.0/8", -1, "address"},
    {"2852039166/32", -1, "address"},
    {"10.0.0/24", -1, "address"},
    {"example.com/8", -1, "address"},
    {"", -1, "empty"},
};

START_TEST(test_cidr_parse)
{
    const struct cidr_case *c = &cidr_cases[_i];
    struct model_cidr out;
    const char *why = NULL;
    bool ok = model_cidr_parse(c->in, strlen(c->in), &out, &why);
    ck_assert_msg(ok == (c->prefix >= 0), "'%s'", c->in);
    if (ok) {
        ck_assert_int_eq(out.prefix, c->prefix);
        ck_assert_ptr_null(why);
    } else {
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(strstr(why, c->why) != NULL, "'%s': %s", c->in, why);
    }
}
END_TEST

struct rel_case {
    const char *a;
    const char *b; /* CIDR or address */
    bool contains; /* a contains address b (only when b is an address) */
    bool overlaps;
};

static const struct rel_case rel_cases[] = {
    {"10.0.0.0/8", "10.1.2.3", true, true},
    {"10.0.0.0/8", "11.0.0.0", false, false},
    {"10.0.0.0/8", "10.1.0.0/16", false, true},
    {"10.1.0.0/16", "10.0.0.0/8", false, true},
    {"10.1.0.0/16", "10.2.0.0/16", false, false},
    {"0.0.0.0/0", "8.8.8.8", true, true},
    {"0.0.0.0/0", "::1", false, false},
    {"::/0", "::1", true, true},
    {"::/0", "1.2.3.4", true, true},
    {"fe80::/10", "febf:ffff::", true, true},
    {"fe80::/10", "fec0::", false, false},
    {"10.0.5.0/24", "10.0.5.20", true, true},
    {"10.0.5.0/24", "10.0.6.1", false, false},
};

START_TEST(test_cidr_relations)
{
    const struct rel_case *c = &rel_cases[_i];
    struct model_cidr a;
    struct model_cidr b;
    ck_assert(model_cidr_parse(c->a, strlen(c->a), &a, NULL));
    ck_assert(model_cidr_parse(c->b, strlen(c->b), &b, NULL));
    ck_assert_msg(model_cidr_overlaps(&a, &b) == c->overlaps, "%s ~ %s", c->a, c->b);
    ck_assert_msg(model_cidr_overlaps(&b, &a) == c->overlaps, "%s ~ %s", c->b, c->a);
    if (b.prefix == 128) {
        ck_assert_msg(model_cidr_contains(&a, &b.net) == c->contains, "%s > %s", c->a, c->b);
    }
}
END_TEST

struct ov_case {
    const char *cidr;
    bool blocked;
    bool private;
};

static const struct ov_case ov_cases[] = {
    {"127.0.0.0/8", true, false},
    {"127.0.0.1", true, false},
    {"10.0.0.0/8", false, true},
    {"0.0.0.0/0", true, true},
    {"169.254.169.254/32", true, false},
    {"8.8.8.0/24", false, false},
    {"::/0", true, true},
    {"2002::/16", true, true},
    {"2001:db8::/32", false, false},
    {"::ffff:168.0.0.0/103", true, false},
    {"168.0.0.0/7", true, false},
    {"172.0.0.0/8", false, true},
    {"fc00::/7", false, true},
    {"fd00::/8", false, true},
    {"fe00::/7", true, true},
    {"64:ff9b::/96", true, true},
    {"64:ff9b::808:808/128", false, false},
    {"1.0.0.0/8", false, false},
};

START_TEST(test_cidr_overlaps_classes)
{
    const struct ov_case *c = &ov_cases[_i];
    struct model_cidr x;
    ck_assert(model_cidr_parse(c->cidr, strlen(c->cidr), &x, NULL));
    ck_assert_msg(model_cidr_overlaps_always_blocked(&x) == c->blocked, "%s", c->cidr);
    ck_assert_msg(model_cidr_overlaps_private(&x) == c->private, "%s", c->cidr);
}
END_TEST

/* ===========================================================================
 * Link-local vectors (compat units 040-045) and metadata names
 * ========================================================================= */

struct ll_case {
    const char *unit;
    const char *host;
    bool ip_link_local; /* 040-043: is_link_local */
    bool metadata;      /* 044-045: is_known_metadata_hostname */
};

static const struct ll_case ll_cases[] = {
    {"040", "169.254.169.254", true, false},
    {"040", "169.254.0.1", true, false},
    {"040", "169.254.255.255", true, false},
    {"041", "fe80::1", true, false},
    {"041", "fe80::abcd:ef01", true, false},
    {"042", "8.8.8.8", false, false},
    {"042", "10.0.0.1", false, false},
    {"042", "192.168.1.1", false, false},
    {"042", "::1", false, false},
    {"042", "2001:db8::1", false, false},
    {"043", "api.github.com", false, false},
    {"043", "", false, false},
    {"044", "metadata.google.internal", false, true},
    {"044", "METADATA.GOOGLE.INTERNAL", false, true},
    {"044", "metadata.google.internal.", false, true},
    {"045", "api.github.com", false, false},
    {"045", "", false, false},
    /* proviso's list (docs/semantics.md#link-local) is longer. */
    {"sem", "metadata.goog", false, true},
    {"sem", "metadata", false, true},
    {"sem", "Metadata.", false, true},
    {"sem", "instance-data", false, true},
    {"sem", "instance-data.ec2.internal", false, true},
    {"sem", "metadata.azure.internal", false, true},
    {"sem", "metadata.packet.net", false, true},
    {"sem", "metadata.tencentyun.com", false, true},
    {"sem", "metadata.google.internal..", false, false},
    {"sem", "xmetadata", false, false},
    {"sem", "metadata.google", false, false},
    {"sem", "metadata.google.internal.evil.com", false, false},
    {"sem", ".", false, false},
    {"sem", "[fe80::1]", true, false},
    {"sem", "0xa9.254.169.254", true, false},
    {"sem", "2852039166", true, false},
    {"sem", "::ffff:169.254.169.254", true, false},
    {"sem", "64:ff9b::a9fe:a9fe", true, false},
};

START_TEST(test_link_local_vectors)
{
    const struct ll_case *c = &ll_cases[_i];
    struct model_ip ip;
    bool ll = model_ip_parse(c->host, strlen(c->host), &ip) && model_ip_is_link_local(&ip);
    ck_assert_msg(ll == c->ip_link_local, "%s '%s' link-local", c->unit, c->host);
    ck_assert_msg(model_host_is_metadata_name(c->host, strlen(c->host)) == c->metadata,
                  "%s '%s' metadata", c->unit, c->host);
}
END_TEST

START_TEST(test_metadata_list)
{
    const char *const *names = model_metadata_names();
    size_t n = 0;
    for (; names[n] != NULL; n++) {
        ck_assert(model_host_is_metadata_name(names[n], strlen(names[n])));
    }
    ck_assert_uint_eq(n, 8);
    ck_assert(!model_host_is_metadata_name(NULL, 3));
}
END_TEST

struct port_case {
    unsigned port;
    bool cp;
};

static const struct port_case port_cases[] = {
    {2379, true}, {2380, true},  {6443, true},   {10250, true}, {10255, true},  {2378, false},
    {443, false}, {6444, false}, {10251, false}, {0, false},    {65535, false}, {80, false},
};

START_TEST(test_ports)
{
    ck_assert_msg(model_port_is_control_plane((uint16_t)port_cases[_i].port) == port_cases[_i].cp,
                  "%u", port_cases[_i].port);
}
END_TEST

START_TEST(test_null_fail_closed)
{
    ck_assert(model_ip_is_always_blocked(NULL));
    ck_assert(!model_ip_is_public(NULL));
    ck_assert(!model_ip_is_private(NULL));
    ck_assert(!model_ip_is_link_local(NULL));
    ck_assert(!model_ip_is_loopback(NULL));
    ck_assert(model_cidr_overlaps_always_blocked(NULL));
    ck_assert(!model_ip_parse(NULL, 3, NULL));
    ck_assert(!model_cidr_parse(NULL, 3, NULL, NULL));
}
END_TEST

static Suite *ip_suite(void)
{
    Suite *s = suite_create("model_ip");
    TCase *tc = tcase_create("ip");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_parse, 0, (int)PV_ARRAY_LEN(parse_cases));
    tcase_add_loop_test(tc, test_parse_strict, 0, (int)PV_ARRAY_LEN(strict_cases));
    tcase_add_test(tc, test_format_small_buffer);
    tcase_add_loop_test(tc, test_loopback, 0, (int)PV_ARRAY_LEN(lo_cases));
    tcase_add_loop_test(tc, test_classes, 0, (int)PV_ARRAY_LEN(class_cases));
    tcase_add_test(tc, test_classes_random);
    tcase_add_test(tc, test_class_ranges);
    tcase_add_loop_test(tc, test_cidr_parse, 0, (int)PV_ARRAY_LEN(cidr_cases));
    tcase_add_loop_test(tc, test_cidr_relations, 0, (int)PV_ARRAY_LEN(rel_cases));
    tcase_add_loop_test(tc, test_cidr_overlaps_classes, 0, (int)PV_ARRAY_LEN(ov_cases));
    tcase_add_loop_test(tc, test_link_local_vectors, 0, (int)PV_ARRAY_LEN(ll_cases));
    tcase_add_test(tc, test_metadata_list);
    tcase_add_loop_test(tc, test_ports, 0, (int)PV_ARRAY_LEN(port_cases));
    tcase_add_test(tc, test_null_fail_closed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ip_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
