/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_ws.c - unit tests of proxy_ws.c (WebSocket frames, handshake,
 * GraphQL-over-WebSocket classification)
 *
 * Frame rows are sequences of frames fed to one parser; each row names the
 * events it must produce (F fragment, T end of text, C control, E error
 * with its close code, M more). Every rule of the parser has a breaking
 * row, and every row is fed again at every split of its first frame: a
 * prefix yields MORE (or the same error) and never changes the state.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"
#include "proxy/proxy_ws.h"

/* ---------------------------------------------------------------------------
 * Frame builder
 * ------------------------------------------------------------------------- */

enum lenform { LEN_MIN, LEN_16, LEN_64 };

struct fr {
    int fin;
    int rsv;
    int op;
    int mask;
    const char *payload;
    size_t plen;
    enum lenform form; /* a non-minimal length encoding when not LEN_MIN */
};

static size_t build(unsigned char *out, const struct fr *f)
{
    static const unsigned char key[4] = {0x37, 0xfa, 0x21, 0x3d};
    size_t n = 2;
    uint64_t len = f->plen;
    enum lenform form = f->form;

    if (form == LEN_MIN) {
        form = len < 126 ? LEN_MIN : len < 65536 ? LEN_16 : LEN_64;
    }
    out[0] = (unsigned char)((f->fin ? 0x80 : 0) | (f->rsv << 4) | f->op);
    if (form == LEN_MIN) {
        out[1] = (unsigned char)len;
    } else if (form == LEN_16) {
        out[1] = 126;
        out[2] = (unsigned char)(len >> 8);
        out[3] = (unsigned char)len;
        n = 4;
    } else {
        out[1] = 127;
        for (int i = 0; i < 8; i++) {
            out[2 + i] = (unsigned char)(len >> (56 - 8 * i));
        }
        n = 10;
    }
    if (f->mask) {
        out[1] |= 0x80;
        memcpy(out + n, key, 4);
        n += 4;
    }
    for (size_t i = 0; i < f->plen; i++) {
        out[n + i] = (unsigned char)f->payload[i] ^ (f->mask ? key[i & 3] : 0);
    }
    return n + f->plen;
}

#define C1(op, s)                              \
    {                                          \
        1, 0, op, 1, s, sizeof(s) - 1, LEN_MIN \
    }
#define S1(op, s)                              \
    {                                          \
        1, 0, op, 0, s, sizeof(s) - 1, LEN_MIN \
    }
#define CF(fin, op, s)                           \
    {                                            \
        fin, 0, op, 1, s, sizeof(s) - 1, LEN_MIN \
    }

struct frame_case {
    const char *name;
    enum proxy_ws_side side;
    size_t max_message; /* 0: the default */
    struct fr f[4];
    size_t nf;
    const char *expect; /* one letter per frame: F T C E */
    unsigned code;      /* E: the close code; C (close): the peer's code */
    const char *text;   /* T: the reassembled message */
};

static const char big130[] = "0123456789012345678901234567890123456789012345678901234567890123"
                             "456789012345678901234567890123456789012345678901234567890123456789";

static const struct frame_case frame_cases[] = {
    {"client text", PROXY_WS_FROM_CLIENT, 0, {C1(1, "hello")}, 1, "T", 0, "hello"},
    {"server text", PROXY_WS_FROM_SERVER, 0, {S1(1, "hello")}, 1, "T", 0, NULL},
    {"empty text", PROXY_WS_FROM_CLIENT, 0, {C1(1, "")}, 1, "T", 0, ""},
    {"binary", PROXY_WS_FROM_CLIENT, 0, {C1(2, "\xff\xfe")}, 1, "F", 0, NULL},
    {"unmasked client frame", PROXY_WS_FROM_CLIENT, 0, {S1(1, "x")}, 1, "E", 1002, NULL},
    {"masked server frame", PROXY_WS_FROM_SERVER, 0, {C1(1, "x")}, 1, "E", 1002, NULL},
    {"reserved opcode 3", PROXY_WS_FROM_CLIENT, 0, {C1(3, "x")}, 1, "E", 1002, NULL},
    {"reserved opcode 0xB", PROXY_WS_FROM_CLIENT, 0, {C1(0xB, "x")}, 1, "E", 1002, NULL},
    {"RSV1 without extension",
     PROXY_WS_FROM_CLIENT,
     0,
     {{1, 4, 1, 1, "x", 1, LEN_MIN}},
     1,
     "E",
     1002,
     NULL},
    {"RSV3", PROXY_WS_FROM_SERVER, 0, {{1, 1, 2, 0, "x", 1, LEN_MIN}}, 1, "E", 1002, NULL},
    {"continuation without start", PROXY_WS_FROM_CLIENT, 0, {C1(0, "x")}, 1, "E", 1002, NULL},
    {"fragmented text",
     PROXY_WS_FROM_CLIENT,
     0,
     {CF(0, 1, "hel"), CF(0, 0, "lo "), CF(1, 0, "you")},
     3,
     "FFT",
     0,
     "hello you"},
    {"new text inside a fragmented one",
     PROXY_WS_FROM_CLIENT,
     0,
     {CF(0, 1, "a"), C1(1, "b")},
     2,
     "FE",
     1002,
     NULL},
    {"binary inside a fragmented text",
     PROXY_WS_FROM_CLIENT,
     0,
     {CF(0, 1, "a"), C1(2, "b")},
     2,
     "FE",
     1002,
     NULL},
    {"ping between fragments",
     PROXY_WS_FROM_CLIENT,
     0,
     {CF(0, 1, "ab"), C1(9, "p"), CF(1, 0, "c")},
     3,
     "FCT",
     0,
     "abc"},
    {"fragmented binary",
     PROXY_WS_FROM_SERVER,
     0,
     {{0, 0, 2, 0, "\x80", 1, LEN_MIN}, S1(0, "\xff")},
     2,
     "FF",
     0,
     NULL},
    {"fragmented ping", PROXY_WS_FROM_CLIENT, 0, {CF(0, 9, "p")}, 1, "E", 1002, NULL},
    {"control frame of 126 bytes",
     PROXY_WS_FROM_CLIENT,
     0,
     {{1, 0, 9, 1, big130, 126, LEN_16}},
     1,
     "E",
     1002,
     NULL},
    {"control frame of 125 bytes",
     PROXY_WS_FROM_CLIENT,
     0,
     {{1, 0, 10, 1, big130, 125, LEN_MIN}},
     1,
     "C",
     0,
     NULL},
    {"close without payload", PROXY_WS_FROM_CLIENT, 0, {C1(8, "")}, 1, "C", 0, NULL},
    {"close 1000 with reason",
     PROXY_WS_FROM_CLIENT,
     0,
     {C1(8, "\x03\xe8"
            "bye")},
     1,
     "C",
     1000,
     NULL},
    {"close 4999", PROXY_WS_FROM_SERVER, 0, {S1(8, "\x13\x87")}, 1, "C", 4999, NULL},
    {"close one byte", PROXY_WS_FROM_CLIENT, 0, {C1(8, "\x03")}, 1, "E", 1002, NULL},
    {"close 1005", PROXY_WS_FROM_CLIENT, 0, {C1(8, "\x03\xed")}, 1, "E", 1002, NULL},
    {"close 999", PROXY_WS_FROM_CLIENT, 0, {C1(8, "\x03\xe7")}, 1, "E", 1002, NULL},
    {"close 5000", PROXY_WS_FROM_CLIENT, 0, {C1(8, "\x13\x88")}, 1, "E", 1002, NULL},
    {"close reason not UTF-8",
     PROXY_WS_FROM_CLIENT,
     0,
     {C1(8, "\x03\xe8\xff")},
     1,
     "E",
     1007,
     NULL},
    {"frame after close", PROXY_WS_FROM_CLIENT, 0, {C1(8, ""), C1(1, "x")}, 2, "CE", 1002, NULL},
    {"UTF-8 split across fragments",
     PROXY_WS_FROM_CLIENT,
     0,
     {CF(0, 1, "\xc3"), CF(1, 0, "\xa9")},
     2,
     "FT",
     0,
     "\xc3\xa9"},
    {"invalid UTF-8 split across fragments",
     PROXY_WS_FROM_CLIENT,
     0,
     {CF(0, 1, "ok\xc3"), CF(1, 0, "\x28")},
     2,
     "FE",
     1007,
     NULL},
    {"text ends inside a sequence",
     PROXY_WS_FROM_CLIENT,
     0,
     {C1(1, "\xe2\x82")},
     1,
     "E",
     1007,
     NULL},
    {"text ends inside a sequence, fragments",
     PROXY_WS_FROM_CLIENT,
     0,
     {CF(0, 1, "a"), CF(1, 0, "\xf0\x9f")},
     2,
     "FE",
     1007,
     NULL},
    {"overlong slash", PROXY_WS_FROM_CLIENT, 0, {C1(1, "\xc0\xaf")}, 1, "E", 1007, NULL},
    {"overlong three bytes", PROXY_WS_FROM_SERVER, 0, {S1(1, "\xe0\x80\xaf")}, 1, "E", 1007, NULL},
    {"surrogate", PROXY_WS_FROM_CLIENT, 0, {C1(1, "\xed\xa0\x80")}, 1, "E", 1007, NULL},
    {"above U+10FFFF", PROXY_WS_FROM_CLIENT, 0, {C1(1, "\xf4\x90\x80\x80")}, 1, "E", 1007, NULL},
    {"four-byte emoji",
     PROXY_WS_FROM_CLIENT,
     0,
     {C1(1, "\xf0\x9f\x98\x80")},
     1,
     "T",
     0,
     "\xf0\x9f\x98\x80"},
    {"invalid UTF-8 from the server", PROXY_WS_FROM_SERVER, 0, {S1(1, "\xff")}, 1, "E", 1007, NULL},
    {"binary is not UTF-8 checked", PROXY_WS_FROM_CLIENT, 0, {C1(2, "\xff\xc0")}, 1, "F", 0, NULL},
    {"non-minimal 16-bit length",
     PROXY_WS_FROM_CLIENT,
     0,
     {{1, 0, 1, 1, "abc", 3, LEN_16}},
     1,
     "E",
     1002,
     NULL},
    {"non-minimal 64-bit length",
     PROXY_WS_FROM_CLIENT,
     0,
     {{1, 0, 2, 1, big130, 130, LEN_64}},
     1,
     "E",
     1002,
     NULL},
    {"message over the limit", PROXY_WS_FROM_CLIENT, 8, {C1(1, "123456789")}, 1, "E", 1009, NULL},
    {"message at the limit", PROXY_WS_FROM_CLIENT, 8, {C1(1, "12345678")}, 1, "T", 0, "12345678"},
    {"fragments over the limit",
     PROXY_WS_FROM_CLIENT,
     8,
     {CF(0, 1, "12345"), CF(1, 0, "6789")},
     2,
     "FE",
     1009,
     NULL},
    {"binary fragments over the limit",
     PROXY_WS_FROM_SERVER,
     8,
     {{0, 0, 2, 0, "12345", 5, LEN_MIN}, S1(0, "6789")},
     2,
     "FE",
     1009,
     NULL},
    {"control frames do not count",
     PROXY_WS_FROM_CLIENT,
     4,
     {CF(0, 1, "1234"), C1(9, "12345"), CF(1, 0, "")},
     3,
     "FCT",
     0,
     "1234"},
};

/* Feed the frames of row 'i' to a fresh parser and compare the events. */
START_TEST(test_frames)
{
    const struct frame_case *fc = &frame_cases[_i];
    struct proxy_ws_parser p;
    unsigned char buf[512];
    struct proxy_ws_event ev;

    proxy_ws_parser_init(&p, fc->side, true);
    if (fc->max_message != 0) {
        p.max_message = fc->max_message;
    }
    ck_assert_uint_eq(strlen(fc->expect), fc->nf);
    for (size_t k = 0; k < fc->nf; k++) {
        size_t n = build(buf, &fc->f[k]);
        enum proxy_ws_kind want = fc->expect[k] == 'F'   ? PROXY_WS_FRAGMENT
                                  : fc->expect[k] == 'T' ? PROXY_WS_TEXT
                                  : fc->expect[k] == 'C' ? PROXY_WS_CONTROL
                                                         : PROXY_WS_ERROR;
        /* every strict prefix: MORE without consuming, or the same error */
        for (size_t cut = 0; cut < n; cut++) {
            struct proxy_ws_parser copy = p;
            enum proxy_ws_kind k2 = proxy_ws_parse(&copy, buf, cut, &ev);
            if (k2 == PROXY_WS_ERROR) {
                ck_assert_msg(want == PROXY_WS_ERROR, "%s: prefix %zu errs: %s", fc->name, cut,
                              ev.why);
                ck_assert_uint_eq(ev.code, fc->code);
            } else {
                ck_assert_msg(k2 == PROXY_WS_MORE, "%s: prefix %zu of %zu", fc->name, cut, n);
                ck_assert_msg(memcmp(&copy, &p, sizeof(p)) == 0, "%s: prefix changed state",
                              fc->name);
            }
        }
        ck_assert_msg(proxy_ws_parse(&p, buf, n, &ev) == want, "%s: frame %zu: got %d (%s)",
                      fc->name, k, (int)ev.kind, ev.why != NULL ? ev.why : "");
        if (want == PROXY_WS_ERROR) {
            ck_assert_uint_eq(ev.code, fc->code);
            ck_assert_ptr_nonnull(ev.why);
            break;
        }
        ck_assert_uint_eq(ev.frame_len, n);
        if (want == PROXY_WS_TEXT && fc->side == PROXY_WS_FROM_CLIENT) {
            ck_assert_ptr_nonnull(ev.payload); /* also for an empty message */
        }
        if (want == PROXY_WS_TEXT && fc->text != NULL) {
            ck_assert_uint_eq(ev.payload_len, strlen(fc->text));
            ck_assert(memcmp(ev.payload, fc->text, ev.payload_len) == 0);
        }
        if (want == PROXY_WS_CONTROL && fc->f[k].op == 8 && strchr(fc->expect, 'E') == NULL) {
            ck_assert_uint_eq(ev.code, fc->code);
        }
    }
    proxy_ws_parser_clear(&p);
}
END_TEST

/* Lengths only a hostile peer sends: the top bit of a 64-bit length, 2^63-1
 * and 2^32 (never waited for: the limit speaks first). */
START_TEST(test_huge_lengths)
{
    static const struct {
        uint64_t len;
        unsigned code;
    } rows[] = {
        {UINT64_C(1) << 63, 1002},         {UINT64_MAX, 1002},
        {(UINT64_C(1) << 63) - 1, 1009},   {UINT64_C(1) << 32, 1009},
        {PROXY_WS_MAX_MESSAGE + 1u, 1009},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        unsigned char b[14] = {0x82, 0xFF};
        struct proxy_ws_parser p;
        struct proxy_ws_event ev;
        for (int k = 0; k < 8; k++) {
            b[2 + k] = (unsigned char)(rows[i].len >> (56 - 8 * k));
        }
        proxy_ws_parser_init(&p, PROXY_WS_FROM_CLIENT, true);
        ck_assert_int_eq(proxy_ws_parse(&p, b, sizeof(b), &ev), PROXY_WS_ERROR);
        ck_assert_uint_eq(ev.code, rows[i].code);
        proxy_ws_parser_clear(&p);
    }
    /* exactly the limit: the parser waits and says how much it needs */
    {
        unsigned char b[14] = {0x82, 0xFF};
        struct proxy_ws_parser p;
        struct proxy_ws_event ev;
        uint64_t len = PROXY_WS_MAX_MESSAGE;
        for (int k = 0; k < 8; k++) {
            b[2 + k] = (unsigned char)(len >> (56 - 8 * k));
        }
        proxy_ws_parser_init(&p, PROXY_WS_FROM_CLIENT, true);
        ck_assert_int_eq(proxy_ws_parse(&p, b, sizeof(b), &ev), PROXY_WS_MORE);
        ck_assert_uint_eq(ev.need, 14 + PROXY_WS_MAX_MESSAGE);
        proxy_ws_parser_clear(&p);
    }
}
END_TEST

/* A text message reassembled from many frames in one buffer, frame by frame. */
START_TEST(test_stream)
{
    unsigned char buf[4096];
    size_t n = 0;
    size_t off = 0;
    struct proxy_ws_parser p;
    struct proxy_ws_event ev;
    struct fr a = CF(0, 1, "ab");
    struct fr b = C1(9, "ping");
    struct fr c = CF(1, 0, "cd");
    struct fr d = C1(2, "\x01");
    unsigned kinds = 0;

    n += build(buf + n, &a);
    n += build(buf + n, &b);
    n += build(buf + n, &c);
    n += build(buf + n, &d);
    proxy_ws_parser_init(&p, PROXY_WS_FROM_CLIENT, true);
    while (off < n) {
        enum proxy_ws_kind k = proxy_ws_parse(&p, buf + off, n - off, &ev);
        ck_assert(k != PROXY_WS_ERROR && k != PROXY_WS_MORE);
        if (k == PROXY_WS_TEXT) {
            ck_assert_uint_eq(ev.payload_len, 4);
            ck_assert(memcmp(ev.payload, "abcd", 4) == 0);
        }
        if (k == PROXY_WS_CONTROL) {
            ck_assert_uint_eq(ev.payload_len, 4);
            ck_assert(memcmp(ev.payload, "ping", 4) == 0);
        }
        kinds = kinds * 10 + (unsigned)k;
        off += ev.frame_len;
    }
    ck_assert_uint_eq(off, n);
    ck_assert_uint_eq(kinds, 1000u * PROXY_WS_FRAGMENT + 100u * PROXY_WS_CONTROL +
                                 10u * PROXY_WS_TEXT + PROXY_WS_FRAGMENT);
    proxy_ws_parser_clear(&p);
}
END_TEST

/* What the proxy writes, the parser reads back (both sides). */
START_TEST(test_writers)
{
    static const unsigned char key[4] = {1, 2, 3, 4};
    static const size_t sizes[] = {0, 1, 125, 126, 65535, 65536, 70000};
    unsigned char *buf = malloc(70000 + PROXY_WS_MAX_HEAD);
    unsigned char cf[PROXY_WS_MAX_HEAD + PROXY_WS_MAX_CONTROL];
    char reason[200];
    struct proxy_ws_parser p;
    struct proxy_ws_event ev;
    size_t n;

    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t hl = proxy_ws_frame_head(buf, PROXY_WS_OP_TEXT, sizes[i], key);
        memset(buf + hl, 'a', sizes[i]);
        proxy_ws_mask(buf + hl, sizes[i], key, 0);
        proxy_ws_parser_init(&p, PROXY_WS_FROM_CLIENT, true);
        ck_assert_int_eq(proxy_ws_parse(&p, buf, hl + sizes[i], &ev), PROXY_WS_TEXT);
        ck_assert_uint_eq(ev.payload_len, sizes[i]);
        ck_assert(sizes[i] == 0 || (ev.payload[0] == 'a' && ev.payload[sizes[i] - 1] == 'a'));
        proxy_ws_parser_clear(&p);
    }
    /* a close reason cut to 123 bytes, never inside a UTF-8 sequence */
    memset(reason, 'x', sizeof(reason));
    memcpy(reason + 122, "\xc3\xa9", 2); /* byte 123 continues a sequence */
    reason[150] = '\0';
    n = proxy_ws_close_frame(cf, 1008, reason, NULL);
    proxy_ws_parser_init(&p, PROXY_WS_FROM_SERVER, false);
    ck_assert_int_eq(proxy_ws_parse(&p, cf, n, &ev), PROXY_WS_CONTROL);
    ck_assert_uint_eq(ev.code, 1008);
    ck_assert_uint_eq(ev.payload_len, 2 + 122);
    proxy_ws_parser_clear(&p);
    n = proxy_ws_close_frame(cf, 1002, "short", key);
    proxy_ws_parser_init(&p, PROXY_WS_FROM_CLIENT, true);
    ck_assert_int_eq(proxy_ws_parse(&p, cf, n, &ev), PROXY_WS_CONTROL);
    ck_assert_uint_eq(ev.code, 1002);
    ck_assert(memcmp(ev.payload + 2, "short", 5) == 0);
    proxy_ws_parser_clear(&p);
    free(buf);
}
END_TEST

/* Mask keys: a zeroed pool is filled before the first key (a wrong pool
 * hands out zero keys), keys are not reused, the pool refills. */
START_TEST(test_mask_keys)
{
    struct proxy_ws_keys k;
    unsigned char seen[200][4];
    size_t zero = 0;

    memset(&k, 0, sizeof(k));
    for (size_t i = 0; i < 200; i++) {
        ck_assert(proxy_ws_mask_key(&k, seen[i]));
        zero += memcmp(seen[i], "\0\0\0\0", 4) == 0;
    }
    ck_assert_uint_le(zero, 1); /* one zero key in 200 has odds 2^-32 per key */
    for (size_t i = 1; i < 200; i++) {
        ck_assert(memcmp(seen[i], seen[i - 1], 4) != 0);
    }
    ck_assert_uint_le(k.used, sizeof(k.pool));
}
END_TEST

/* ---------------------------------------------------------------------------
 * Handshake
 * ------------------------------------------------------------------------- */

#define KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define UPG_TAIL "Host: h\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"

struct upg_case {
    const char *head;
    bool is_ws;
    bool valid;
};

static const struct upg_case upg_cases[] = {
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: " KEY "\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     true, true},
    {"GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: WebSocket\r\nConnection: upgrade\r\n"
     "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n"
     "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
     true, true},
    {"POST /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: " KEY "\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.0\r\n" UPG_TAIL "Sec-WebSocket-Key: " KEY "\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Version: 13\r\n\r\n", true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Key: " KEY
     "\r\nSec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZR==\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25j*Q==\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: " KEY "\r\n"
     "Sec-WebSocket-Version: 8\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: " KEY "\r\n\r\n", true, false},
    {"GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
     "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket, h2c\r\nConnection: upgrade\r\n"
     "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\n" UPG_TAIL "Sec-WebSocket-Key: " KEY "\r\n"
     "Sec-WebSocket-Version: 13\r\nContent-Length: 3\r\n\r\n",
     true, false},
    {"GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: upgrade\r\n\r\n", false, false},
    {"GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocketx\r\nConnection: upgrade\r\n\r\n", false,
     false},
};

START_TEST(test_upgrade)
{
    const struct upg_case *uc = &upg_cases[_i];
    struct proxy_request r;
    const char *why = NULL;
    char key[25];

    ck_assert_int_eq(proxy_http_parse(uc->head, strlen(uc->head), &r, &why), PROXY_HEAD_OK);
    ck_assert_msg(proxy_ws_is_upgrade(&r, uc->head) == uc->is_ws, "row %d", _i);
    why = proxy_ws_check_upgrade(&r, uc->head, key);
    ck_assert_msg((why == NULL) == uc->valid, "row %d: %s", _i, why != NULL ? why : "valid");
    if (uc->valid) {
        ck_assert_str_eq(key, KEY);
    } else {
        ck_assert_str_eq(key, "");
    }
}
END_TEST

START_TEST(test_accept)
{
    char out[29];

    /* RFC 6455 §1.3's example */
    ck_assert(proxy_ws_accept_for(KEY, out));
    ck_assert_str_eq(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    ck_assert(!proxy_ws_accept_for("short", out));
}
END_TEST

#define ACC "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static const struct {
    const char *head;
    bool ok;
    bool ext;
} resp_cases[] = {
    {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: " ACC "\r\n\r\n",
     true, false},
    {"HTTP/1.1 101 x\r\nupgrade:WebSocket\r\nconnection: keep-alive, upgrade\r\n"
     "sec-websocket-accept:  " ACC "  \r\nSec-WebSocket-Protocol: chat\r\n\r\n",
     true, false},
    {"HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: " ACC "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
     false, true},
    {"HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo\r\n\r\n",
     false, false},
    {"HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", false, false},
    {"HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: " ACC "\r\nSec-WebSocket-Accept: " ACC "\r\n\r\n",
     false, false},
    {"HTTP/1.1 101 x\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " ACC "\r\n\r\n", false,
     false},
    {"HTTP/1.1 101 x\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: " ACC "\r\n\r\n", false, false},
    {"HTTP/1.1 101 x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " ACC
     "\r\n\r\n",
     false, false},
};

START_TEST(test_101)
{
    bool ext = true;
    const char *h = resp_cases[_i].head;
    const char *why = proxy_ws_check_101(h, strlen(h), ACC, &ext);

    ck_assert_msg((why == NULL) == resp_cases[_i].ok, "row %d: %s", _i, why ? why : "ok");
    ck_assert(ext == resp_cases[_i].ext);
}
END_TEST

/* ---------------------------------------------------------------------------
 * GraphQL over WebSocket
 * ------------------------------------------------------------------------- */

static const struct {
    const char *msg;
    enum proxy_ws_gql_kind kind;
    const char *query;
    const char *name;
    const char *hash;
} gql_cases[] = {
    {"{\"type\":\"connection_init\",\"payload\":{\"token\":\"secret\"}}", PROXY_WS_GQL_CONTROL,
     NULL, NULL, NULL},
    {"{\"type\":\"ping\"}", PROXY_WS_GQL_CONTROL, NULL, NULL, NULL},
    {"{\"type\":\"pong\"}", PROXY_WS_GQL_CONTROL, NULL, NULL, NULL},
    {"{\"type\":\"complete\",\"id\":\"1\"}", PROXY_WS_GQL_CONTROL, NULL, NULL, NULL},
    {"{\"type\":\"stop\",\"id\":\"1\"}", PROXY_WS_GQL_CONTROL, NULL, NULL, NULL},
    {"{\"type\":\"connection_terminate\"}", PROXY_WS_GQL_CONTROL, NULL, NULL, NULL},
    {"{\"type\":\"connection_ack\"}", PROXY_WS_GQL_CONTROL, NULL, NULL, NULL},
    {"{\"id\":\"1\",\"type\":\"subscribe\",\"payload\":{\"query\":\"subscription { a }\"}}",
     PROXY_WS_GQL_OPERATION, "subscription { a }", NULL, NULL},
    {"{\"id\":\"2\",\"type\":\"start\",\"payload\":{\"query\":\"query Q { v }\","
     "\"operationName\":\"Q\",\"variables\":{}}}",
     PROXY_WS_GQL_OPERATION, "query Q { v }", "Q", NULL},
    {"{\"id\":\"3\",\"type\":\"subscribe\",\"payload\":{\"query\":\"{ v }\","
     "\"operationName\":null}}",
     PROXY_WS_GQL_OPERATION, "{ v }", NULL, NULL},
    {"{\"id\":\"4\",\"type\":\"subscribe\",\"payload\":{\"extensions\":{\"persistedQuery\":"
     "{\"version\":1,\"sha256Hash\":\"abc\"}}}}",
     PROXY_WS_GQL_OPERATION, NULL, NULL, "abc"},
    {"{\"id\":\"5\",\"type\":\"subscribe\",\"payload\":{\"query\":\"{ v }\",\"extensions\":"
     "{\"persistedQuery\":{\"sha256Hash\":"
     "\"E464F5E30160D7477BC5A87ECE1153599437DE5689CA9DE842BB7396C9213A66\"}}}}",
     PROXY_WS_GQL_OPERATION, "{ v }", NULL,
     "E464F5E30160D7477BC5A87ECE1153599437DE5689CA9DE842BB7396C9213A66"},
    {"{\"id\":\"5\",\"type\":\"subscribe\",\"payload\":{\"query\":\"{ w }\",\"extensions\":"
     "{\"persistedQuery\":{\"sha256Hash\":"
     "\"e464f5e30160d7477bc5a87ece1153599437de5689ca9de842bb7396c9213a66\"}}}}",
     PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"id\":\"5\",\"type\":\"subscribe\",\"payload\":{\"query\":\"{ v }\",\"extensions\":"
     "{\"persistedQuery\":{\"sha256Hash\":"
     "\"e464f5e30160d7477bc5a87ece1153599437de5689ca9de842bb7396c9213a6\\u0010\"}}}}",
     PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"type\":\"subscribe\",\"payload\":{\"query\":\"{ v }\"}}", PROXY_WS_GQL_INVALID, NULL, NULL,
     NULL},
    {"{\"id\":1,\"type\":\"subscribe\",\"payload\":{\"query\":\"{ v }\"}}", PROXY_WS_GQL_INVALID,
     NULL, NULL, NULL},
    {"{\"id\":\"1\",\"type\":\"subscribe\",\"payload\":\"{ v }\"}", PROXY_WS_GQL_INVALID, NULL,
     NULL, NULL},
    {"{\"id\":\"1\",\"type\":\"subscribe\",\"payload\":{}}", PROXY_WS_GQL_INVALID, NULL, NULL,
     NULL},
    {"{\"id\":\"1\",\"type\":\"subscribe\",\"payload\":{\"query\":7}}", PROXY_WS_GQL_INVALID, NULL,
     NULL, NULL},
    {"{\"id\":\"1\",\"type\":\"subscribe\",\"payload\":{\"query\":\"{v}\",\"operationName\":3}}",
     PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"id\":\"1\",\"type\":\"subscribe\",\"payload\":{\"extensions\":{\"persistedQuery\":{}}}}",
     PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"type\":\"next\",\"id\":\"1\",\"payload\":{}}", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"type\":\"pingx\"}", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"type\":\"ping\\u0000x\"}", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"type\":\"subscribe\\u0000\",\"id\":\"1\",\"payload\":{\"query\":\"{v}\"}}",
     PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"type\":\"ping\",\"type\":\"subscribe\"}", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"[\"ping\"]", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"{\"type\":null}", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"not json", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
    {"", PROXY_WS_GQL_INVALID, NULL, NULL, NULL},
};

static void assert_opt_str(const char *got, const char *want)
{
    if (want == NULL) {
        ck_assert_ptr_null(got);
    } else {
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want);
    }
}

START_TEST(test_gql)
{
    struct proxy_ws_gql g;
    const char *m = gql_cases[_i].msg;

    ck_assert(proxy_ws_gql_classify(m, strlen(m), &g));
    ck_assert_msg(g.kind == gql_cases[_i].kind, "row %d: %s", _i, g.why ? g.why : "-");
    if (g.kind == PROXY_WS_GQL_INVALID) {
        ck_assert_ptr_nonnull(g.why);
    } else {
        ck_assert_ptr_nonnull(g.type);
    }
    assert_opt_str(g.query, gql_cases[_i].query);
    assert_opt_str(g.operation_name, gql_cases[_i].name);
    assert_opt_str(g.persisted_id, gql_cases[_i].hash);
    proxy_ws_gql_clear(&g);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *ws_suite(void)
{
    Suite *s = suite_create("proxy_ws");
    TCase *tc = tcase_create("ws");

    tcase_add_loop_test(tc, test_frames, 0, N(frame_cases));
    tcase_add_test(tc, test_huge_lengths);
    tcase_add_test(tc, test_stream);
    tcase_add_test(tc, test_writers);
    tcase_add_test(tc, test_mask_keys);
    tcase_add_loop_test(tc, test_upgrade, 0, N(upg_cases));
    tcase_add_test(tc, test_accept);
    tcase_add_loop_test(tc, test_101, 0, N(resp_cases));
    tcase_add_loop_test(tc, test_gql, 0, N(gql_cases));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ws_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
