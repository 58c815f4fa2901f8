/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_http.c - unit tests of proxy_http.c (request heads, targets)
 *
 * Tables of request heads with the verdict the reference's validation gives
 * (docs/proxy.md "Request validation"): every rule has a row that breaks it.
 * Then absolute-form URIs, authorities (CONNECT targets and Host fields),
 * the head boundary scanner and tunnel sniffing.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

#define OK PROXY_HEAD_OK
#define BAD PROXY_HEAD_BAD
#define BIG PROXY_HEAD_TOOBIG
#define NONE PROXY_BODY_NONE
#define LEN PROXY_BODY_LENGTH
#define CHK PROXY_BODY_CHUNKED

struct head_case {
    const char *in;
    enum proxy_head_status st;
    const char *method; /* when OK */
    const char *target;
    int minor;
    enum proxy_framing framing;
    uint64_t cl;
    int nhdr;
    bool close;
};

#define H(x) x "\r\n\r\n"

static const struct head_case head_cases[] = {
    /* accepted */
    {H("GET http://a/ HTTP/1.1\r\nHost: a"), OK, "GET", "http://a/", 1, NONE, 0, 1, false},
    {H("GET / HTTP/1.0"), OK, "GET", "/", 0, NONE, 0, 0, false},
    {H("CONNECT a.b:443 HTTP/1.1\r\nHost: a.b:443"), OK, "CONNECT", "a.b:443", 1, NONE, 0, 1,
     false},
    {H("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 12"), OK, "POST", "/x", 1, LEN, 12, 2,
     false},
    {H("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5"), OK, "POST", "/x",
     1, LEN, 5, 3, false},
    {H("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked"), OK, "POST", "/x", 1, CHK, 0, 2,
     false},
    {H("GET / HTTP/1.1\r\nHost: a\r\nConnection: close"), OK, "GET", "/", 1, NONE, 0, 2, true},
    {H("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, X-Foo"), OK, "GET", "/", 1, NONE, 0, 2,
     false},
    {H("GET / HTTP/1.1\r\nHost: a\r\nX-Empty:"), OK, "GET", "/", 1, NONE, 0, 2, false},
    {H("GET / HTTP/1.1\r\nHost:   a  \t"), OK, "GET", "/", 1, NONE, 0, 1, false},
    {H("GET /caf\xc3\xa9 HTTP/1.1\r\nX: \xe2\x82\xac"), OK, "GET", "/caf\xc3\xa9", 1, NONE, 0, 1,
     false},
    {H("M-SEARCH * HTTP/1.1"), OK, "M-SEARCH", "*", 1, NONE, 0, 0, false},
    {H("get / HTTP/1.1"), OK, "get", "/", 1, NONE, 0, 0, false},
    /* request line */
    {H("GET  / HTTP/1.1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1 x"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET /"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/2.0"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / http/1.1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("G(T / HTTP/1.1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H(" GET / HTTP/1.1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET /\x7f HTTP/1.1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET /\x01 HTTP/1.1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET /\xff HTTP/1.1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {"\r\nGET / HTTP/1.1\r\n\r\n", BAD, NULL, NULL, 0, NONE, 0, 0, false},
    /* line endings */
    {H("GET / HTTP/1.1\nHost: a"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nHost: a\rb"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nHost: a\nX: b"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    /* fields */
    {H("GET / HTTP/1.1\r\nHost: a\r\n folded"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nHost: a\r\n\tfolded"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nNoColon"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nHost : a"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nX Y: a"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\n: a"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nX: a\x01"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nX: a\x7f"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nX: \xc3\x28"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nX: \xc0\xaf"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nX: \xed\xa0\x80"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nHost: a\r\nHost: b"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    /* Connection */
    {H("GET / HTTP/1.1\r\nConnection: host"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nConnection: Content-Length"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nConnection: close, transfer-encoding"), BAD, NULL, NULL, 0, NONE, 0, 0,
     false},
    {H("GET / HTTP/1.1\r\nConnection: a b"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("GET / HTTP/1.1\r\nConnection: a;b"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    /* framing */
    {H("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked"), BAD, NULL, NULL, 0,
     NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2"), BAD, NULL, NULL, 0, NONE, 0, 0,
     false},
    {H("POST / HTTP/1.1\r\nContent-Length: -1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nContent-Length: 1x"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nContent-Length: 1, 1"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nContent-Length:"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999"), BAD, NULL, NULL, 0, NONE, 0, 0,
     false},
    {H("POST / HTTP/1.1\r\nTransfer-Encoding: gzip"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked"), BAD, NULL, NULL, 0, NONE, 0, 0,
     false},
    {H("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked"), BAD, NULL,
     NULL, 0, NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nTransfer-Encoding:"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {H("POST / HTTP/1.1\r\nTransfer-Encoding: chunkedx"), BAD, NULL, NULL, 0, NONE, 0, 0, false},
    /* not a complete head */
    {"GET / HTTP/1.1\r\n", BAD, NULL, NULL, 0, NONE, 0, 0, false},
    {"", BAD, NULL, NULL, 0, NONE, 0, 0, false},
};

START_TEST(test_head_table)
{
    const struct head_case *tc = &head_cases[_i];
    struct proxy_request r;
    const char *why = NULL;
    size_t len = strlen(tc->in);
    enum proxy_head_status st = proxy_http_parse(tc->in, len, &r, &why);

    ck_assert_msg(st == tc->st, "row %d '%s': status %d (%s)", _i, tc->in, (int)st,
                  why != NULL ? why : "");
    if (st != OK) {
        ck_assert_ptr_nonnull(why);
        ck_assert_uint_gt(strlen(why), 0);
        return;
    }
    ck_assert(proxy_request_validate(&r, tc->in, len));
    ck_assert_uint_eq(r.method.len, strlen(tc->method));
    ck_assert(memcmp(tc->in + r.method.off, tc->method, r.method.len) == 0);
    ck_assert_uint_eq(r.target.len, strlen(tc->target));
    ck_assert(memcmp(tc->in + r.target.off, tc->target, r.target.len) == 0);
    ck_assert_int_eq(r.version_minor, tc->minor);
    ck_assert_int_eq(r.framing, tc->framing);
    ck_assert_uint_eq(r.content_length, tc->cl);
    ck_assert_int_eq((int)r.nhdr, tc->nhdr);
    ck_assert_int_eq(r.conn_close, tc->close);
}
END_TEST

/* Field values are trimmed; hop-by-hop and Connection-nominated fields are
 * marked so that they are never forwarded. */
START_TEST(test_head_fields)
{
    static const char in[] = H("GET / HTTP/1.1\r\nHost:  a.b  \r\nConnection: x-secret, close\r\n"
                               "X-Secret: 1\r\nProxy-Authorization: t\r\nKeep-Alive: 5\r\n"
                               "Upgrade: websocket\r\nAccept: */*\r\nTE: trailers");
    struct proxy_request r;
    const char *why;
    bool hop[9] = {false, true, true, true, true, true, false, true};

    ck_assert_int_eq(proxy_http_parse(in, strlen(in), &r, &why), OK);
    ck_assert(proxy_request_validate(&r, in, strlen(in)));
    /* the invariant check itself rejects broken results */
    r.hdr[1].name.off = PROXY_MAX_HEAD + 1;
    ck_assert(!proxy_request_validate(&r, in, strlen(in)));
    r.hdr[1].name.off = 0;
    ck_assert_int_eq(proxy_http_parse(in, strlen(in), &r, &why), OK);
    r.host = 5;
    ck_assert(!proxy_request_validate(&r, in, strlen(in)));
    ck_assert_int_eq(proxy_http_parse(in, strlen(in), &r, &why), OK);
    ck_assert_int_eq(r.host, 0);
    ck_assert_uint_eq(r.hdr[0].value.len, 3);
    ck_assert(memcmp(in + r.hdr[0].value.off, "a.b", 3) == 0);
    ck_assert(r.upgrade);
    ck_assert(r.conn_close);
    ck_assert_uint_eq(r.nhdr, 8);
    for (size_t i = 0; i < r.nhdr; i++) {
        ck_assert_msg(r.hdr[i].hop == hop[i], "field %zu hop %d", i, (int)r.hdr[i].hop);
    }
}
END_TEST

START_TEST(test_head_limits)
{
    char *buf = malloc(PROXY_MAX_HEAD + 64);
    struct proxy_request r;
    const char *why;
    size_t n = 0;
    size_t hl = 0;

    ck_assert_ptr_nonnull(buf);
    /* too many fields: 431 */
    n = (size_t)snprintf(buf, 64, "GET / HTTP/1.1\r\n");
    for (int i = 0; i <= PROXY_MAX_HEADERS; i++) {
        n += (size_t)snprintf(buf + n, 32, "X%d: y\r\n", i);
    }
    memcpy(buf + n, "\r\n", 2);
    n += 2;
    ck_assert_uint_lt(n, PROXY_MAX_HEAD);
    ck_assert_int_eq(proxy_http_parse(buf, n, &r, &why), BIG);
    /* exactly PROXY_MAX_HEADERS fields: fine */
    n = (size_t)snprintf(buf, 64, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < PROXY_MAX_HEADERS; i++) {
        n += (size_t)snprintf(buf + n, 32, "X%d: y\r\n", i);
    }
    memcpy(buf + n, "\r\n", 2);
    n += 2;
    ck_assert_int_eq(proxy_http_parse(buf, n, &r, &why), OK);
    ck_assert_uint_eq(r.nhdr, PROXY_MAX_HEADERS);
    /* a head of exactly PROXY_MAX_HEAD bytes is accepted, one more is not */
    memset(buf, 'a', PROXY_MAX_HEAD + 8);
    memcpy(buf, "GET / HTTP/1.1\r\nX: ", 19);
    memcpy(buf + PROXY_MAX_HEAD - 4, "\r\n\r\n", 4);
    ck_assert_int_eq(proxy_http_head_end(buf, PROXY_MAX_HEAD, &hl), OK);
    ck_assert_uint_eq(hl, PROXY_MAX_HEAD);
    ck_assert_int_eq(proxy_http_parse(buf, PROXY_MAX_HEAD, &r, &why), OK);
    memcpy(buf + PROXY_MAX_HEAD - 4, "aa\r\n\r\n", 6);
    ck_assert_int_eq(proxy_http_head_end(buf, PROXY_MAX_HEAD + 2, &hl), BIG);
    ck_assert_int_eq(proxy_http_parse(buf, PROXY_MAX_HEAD + 2, &r, &why), BIG);
    free(buf);
}
END_TEST

struct end_case {
    const char *in;
    enum proxy_head_status st;
    size_t len;
};

static const struct end_case end_cases[] = {
    {"GET / HTTP/1.1\r\n\r\n", OK, 18},
    {"GET / HTTP/1.1\r\n\r\nNEXT", OK, 18},
    {"GET / HTTP/1.1\r\nA: b\r\n\r\n", OK, 24},
    {"GET / HTTP/1.1\r\n", PROXY_HEAD_INCOMPLETE, 0},
    {"GET / HTTP/1.1\r\n\r", PROXY_HEAD_INCOMPLETE, 0},
    {"GET / HTTP/1.1\n\n", PROXY_HEAD_INCOMPLETE, 0},
    {"", PROXY_HEAD_INCOMPLETE, 0},
    {"\r\n\r\n", OK, 4},
};

START_TEST(test_head_end)
{
    const struct end_case *tc = &end_cases[_i];
    size_t hl = 0;

    ck_assert_int_eq(proxy_http_head_end(tc->in, strlen(tc->in), &hl), tc->st);
    if (tc->st == OK) {
        ck_assert_uint_eq(hl, tc->len);
    }
}
END_TEST

struct uri_case {
    const char *in;
    bool ok;
    const char *host;
    uint16_t port;
    bool port_given;
    const char *rest;
};

static const struct uri_case uri_cases[] = {
    {"http://a.b/x?y=1", true, "a.b", 80, false, "/x?y=1"},
    {"http://a.b", true, "a.b", 80, false, ""},
    {"http://a.b?q", true, "a.b", 80, false, "?q"},
    {"https://h", true, "h", 443, false, ""},
    {"HTTP://H:8080/p", true, "H", 8080, true, "/p"},
    {"http://[::1]:81/", true, "::1", 81, true, "/"},
    {"http://[::ffff:127.0.0.1]/", true, "::ffff:127.0.0.1", 80, false, "/"},
    {"http://2130706433/", true, "2130706433", 80, false, "/"},
    {"http://h:/", true, "h", 80, false, "/"},
    {"ftp://h/", true, "h", 80, false, "/"},
    {"http//h/", false, NULL, 0, false, NULL},
    {"/x", false, NULL, 0, false, NULL},
    {"http://", false, NULL, 0, false, NULL},
    {"http:///x", false, NULL, 0, false, NULL},
    {"http://u:p@h/", false, NULL, 0, false, NULL},
    {"http://h:0/", false, NULL, 0, false, NULL},
    {"http://h:65536/", false, NULL, 0, false, NULL},
    {"http://h:8a/", false, NULL, 0, false, NULL},
    {"http://h/#frag", false, NULL, 0, false, NULL},
    {"http://[::1/", false, NULL, 0, false, NULL},
    {"http://[]/", false, NULL, 0, false, NULL},
    {"http://::1/", false, NULL, 0, false, NULL},
    {"1http://h/", false, NULL, 0, false, NULL},
};

START_TEST(test_uri)
{
    const struct uri_case *tc = &uri_cases[_i];
    struct proxy_uri u;
    pv_result r = proxy_http_parse_uri(tc->in, strlen(tc->in), &u);

    ck_assert_msg(pv_ok(r) == tc->ok, "row %d '%s'", _i, tc->in);
    if (!tc->ok) {
        return;
    }
    ck_assert_uint_eq(u.host.len, strlen(tc->host));
    ck_assert(memcmp(tc->in + u.host.off, tc->host, u.host.len) == 0);
    ck_assert_uint_eq(u.port, tc->port);
    ck_assert_int_eq(u.port_given, tc->port_given);
    ck_assert_uint_eq(u.rest.len, strlen(tc->rest));
    ck_assert(memcmp(tc->in + u.rest.off, tc->rest, u.rest.len) == 0);
}
END_TEST

struct auth_case {
    const char *in;
    bool port_optional;
    bool ok;
    const char *host;
    bool bracketed;
    uint16_t port;
};

static const struct auth_case auth_cases[] = {
    {"a.b:443", false, true, "a.b", false, 443}, {"[::1]:8443", false, true, "::1", true, 8443},
    {"A.B.:1", false, true, "A.B.", false, 1},   {"a.b", false, false, NULL, false, 0},
    {"a.b:", false, false, NULL, false, 0},      {":443", false, false, NULL, false, 0},
    {"::1:443", false, false, NULL, false, 0},   {"[::1]", false, false, NULL, false, 0},
    {"[::1]x:1", false, false, NULL, false, 0},  {"[::1:443", false, false, NULL, false, 0},
    {"a.b:0", false, false, NULL, false, 0},     {"a.b:70000", false, false, NULL, false, 0},
    {"a.b:+1", false, false, NULL, false, 0},    {"", false, false, NULL, false, 0},
    {"a.b", true, true, "a.b", false, 0},        {"a.b:", true, true, "a.b", false, 0},
    {"[::1]", true, true, "::1", true, 0},       {"a.b:80", true, true, "a.b", false, 80},
    {"a.b:x", true, false, NULL, false, 0},
};

START_TEST(test_authority)
{
    const struct auth_case *tc = &auth_cases[_i];
    struct proxy_span h;
    bool br = true;
    uint16_t port = 9;
    pv_result r =
        proxy_http_parse_authority(tc->in, strlen(tc->in), tc->port_optional, &h, &br, &port);

    ck_assert_msg(pv_ok(r) == tc->ok, "row %d '%s'", _i, tc->in);
    if (!tc->ok) {
        return;
    }
    ck_assert_uint_eq(h.len, strlen(tc->host));
    ck_assert(memcmp(tc->in + h.off, tc->host, h.len) == 0);
    ck_assert_int_eq(br, tc->bracketed);
    ck_assert_uint_eq(port, tc->port);
}
END_TEST

struct sniff_case {
    const char *in;
    size_t len;
    enum proxy_sniff want;
};

static const struct sniff_case sniff_cases[] = {
    {"\x16\x03\x01\x02\x00", 5, PROXY_SNIFF_TLS},
    {"\x16\x03\x03", 3, PROXY_SNIFF_TLS},
    {"\x16\x03", 2, PROXY_SNIFF_MORE},
    {"\x16", 1, PROXY_SNIFF_MORE},
    {"\x16\x03\x05", 3, PROXY_SNIFF_OTHER},
    {"\x16\x02\x01", 3, PROXY_SNIFF_OTHER},
    {"GET / HTTP/1.1", 14, PROXY_SNIFF_HTTP},
    {"GE", 2, PROXY_SNIFF_MORE},
    {"OPTIONS ", 8, PROXY_SNIFF_HTTP},
    {"OPTION", 6, PROXY_SNIFF_MORE},
    {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24, PROXY_SNIFF_H2C},
    {"PRI * HT", 8, PROXY_SNIFF_H2C},
    {"PRI", 3, PROXY_SNIFF_MORE},
    {"P", 1, PROXY_SNIFF_MORE},
    {"POST ", 5, PROXY_SNIFF_HTTP},
    {"get / HTTP/1.1", 14, PROXY_SNIFF_HTTP},
    {"M-SEARCH * HTTP/1.1", 19, PROXY_SNIFF_HTTP},
    {"PRI / HTTP/1.1", 14, PROXY_SNIFF_HTTP},
    {"PRI ", 4, PROXY_SNIFF_MORE},
    {"ge", 2, PROXY_SNIFF_MORE},
    {" GET", 4, PROXY_SNIFF_OTHER},
    {"G\x01T ", 4, PROXY_SNIFF_OTHER},
    {"GET(", 4, PROXY_SNIFF_OTHER},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZ ", 27, PROXY_SNIFF_OTHER},
    {"SSH-2.0-x\r\n", 11, PROXY_SNIFF_OTHER},
    {"", 0, PROXY_SNIFF_MORE},
    {"\x00\x01", 2, PROXY_SNIFF_OTHER},
};

struct resp_case {
    const char *in;
    enum proxy_head_status st;
    unsigned status;
    enum proxy_framing framing;
    size_t head_len; /* OK rows */
};

#define R(x) x "\r\n\r\n"

static const struct resp_case resp_cases[] = {
    {R("HTTP/1.1 200 OK\r\nContent-Length: 2"), OK, 200, LEN, 38},
    {R("HTTP/1.1 200 OK\r\nContent-Length: 2") "ok", OK, 200, LEN, 38},
    {R("HTTP/1.0 204"), OK, 204, NONE, 16},
    {R("HTTP/1.1 100 Continue"), OK, 100, NONE, 25},
    {R("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked"), OK, 200, CHK, 47},
    {R("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2"), OK, 200, LEN, 57},
    {"HTTP/1.1 200 OK\r\nContent-Le", PROXY_HEAD_INCOMPLETE, 0, NONE, 0},
    /* rejected */
    {R("HTTP/1.1 200 OK\nContent-Length: 2"), BAD, 0, NONE, 0},
    {"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nX: a\rb"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nX: a\r\n b"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nX : a"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nX: a\x01"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked"), BAD, 0, NONE,
     0},
    {R("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 OK\r\nContent-Length: 2, 2"), BAD, 0, NONE, 0},
    {R("HTTP/2.0 200 OK"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 20 OK"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 600 X"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200OK"), BAD, 0, NONE, 0},
    {R("HTTP/1.1 200 O\x01K"), BAD, 0, NONE, 0},
};

START_TEST(test_response_head)
{
    const struct resp_case *tc = &resp_cases[_i];
    struct proxy_response r;
    size_t hl = 0;
    const char *why = NULL;
    enum proxy_head_status st = proxy_http_response_head(tc->in, strlen(tc->in), &hl, &r, &why);

    ck_assert_msg(st == tc->st, "row %d: status %d (%s)", _i, (int)st, why);
    if (st == OK) {
        ck_assert_uint_eq(r.status, tc->status);
        ck_assert_int_eq(r.framing, tc->framing);
        ck_assert_uint_eq(hl, tc->head_len);
    } else if (st == BAD) {
        ck_assert_str_ne(why, "");
    }
}
END_TEST

START_TEST(test_sniff)
{
    const struct sniff_case *tc = &sniff_cases[_i];

    ck_assert_msg(proxy_http_sniff((const unsigned char *)tc->in, tc->len) == tc->want, "row %d",
                  _i);
}
END_TEST

START_TEST(test_name_is)
{
    ck_assert(proxy_http_name_is("Content-Length", 14, "content-length"));
    ck_assert(proxy_http_name_is("HOST", 4, "host"));
    ck_assert(!proxy_http_name_is("Hos", 3, "host"));
    ck_assert(!proxy_http_name_is("Hosts", 5, "host"));
    ck_assert(!proxy_http_name_is("Hast", 4, "host"));
}
END_TEST

static Suite *http_suite(void)
{
    Suite *s = suite_create("proxy_http");
    TCase *tc = tcase_create("http");

    tcase_add_loop_test(tc, test_head_table, 0, (int)PV_ARRAY_LEN(head_cases));
    tcase_add_test(tc, test_head_fields);
    tcase_add_test(tc, test_head_limits);
    tcase_add_loop_test(tc, test_head_end, 0, (int)PV_ARRAY_LEN(end_cases));
    tcase_add_loop_test(tc, test_uri, 0, (int)PV_ARRAY_LEN(uri_cases));
    tcase_add_loop_test(tc, test_authority, 0, (int)PV_ARRAY_LEN(auth_cases));
    tcase_add_loop_test(tc, test_sniff, 0, (int)PV_ARRAY_LEN(sniff_cases));
    tcase_add_loop_test(tc, test_response_head, 0, (int)PV_ARRAY_LEN(resp_cases));
    tcase_add_test(tc, test_name_is);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(http_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
