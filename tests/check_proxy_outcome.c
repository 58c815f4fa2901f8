/* SPDX-License-Identifier: Apache-2.0 */
/* check_proxy_outcome.c - unit tests of proxy_outcome.c and proxy_chunk.c
 *
 * The outcome table: every enumerator has exactly one row, and each row maps
 * (phase, reason) to the status, error code, reply kind and log stage that
 * docs/proxy.md documents (one test row per outcome, plus invariants that a
 * wrong row breaks). The chunked decoder: accepted bodies and their
 * canonical re-chunked form, rejected bodies (every rule has a breaking
 * row), and the same verdict whatever the input split.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/proxy_int.h"

struct out_case {
    enum proxy_outcome o;
    unsigned status;
    const char *error;
    enum proxy_reply_kind kind;
    const char *stage;
    bool log;
};

#define J PROXY_REPLY_JSON
#define B PROXY_REPLY_BARE
#define L PROXY_REPLY_L7

static const struct out_case out_cases[] = {
    {PROXY_OUT_HEAD_TOOBIG, 431, NULL, B, "http-parser", true},
    {PROXY_OUT_HEAD_BAD, 400, NULL, B, "http-parser", true},
    {PROXY_OUT_HEAD_TIMEOUT, 408, NULL, B, "http-parser", true},
    {PROXY_OUT_BODY_BAD, 400, NULL, B, "http-parser", true},
    {PROXY_OUT_INTERNAL, 500, NULL, B, "internal", true},
    {PROXY_OUT_CONN_LIMIT, 503, NULL, B, "connection-limit", true},
    {PROXY_OUT_CONNECT_TARGET, 400, NULL, B, "connect", true},
    {PROXY_OUT_CONNECT_DENIED, 403, "policy_denied", J, "connect", true},
    {PROXY_OUT_FORWARD_URI, 400, NULL, B, "forward-parse-rejection", true},
    {PROXY_OUT_FORWARD_HTTPS, 400, NULL, PROXY_REPLY_TEXT, "forward-parse-rejection", true},
    {PROXY_OUT_FORWARD_SCHEME, 400, "unsupported_proxy_scheme", J, "forward-parse-rejection", true},
    {PROXY_OUT_POLICY_LOCAL_PORT, 400, "invalid_policy_local_scheme", J, "forward", true},
    {PROXY_OUT_POLICY_LOCAL, 404, "feature_disabled", J, "forward", true},
    {PROXY_OUT_FORWARD_DENIED, 403, "policy_denied", J, "forward", true},
    {PROXY_OUT_FORWARD_TARGET, 400, "invalid_request_target", J, "forward-l7-parse-rejection",
     true},
    {PROXY_OUT_FORWARD_L7_DENIED, 403, "policy_denied", L, "forward-l7-deny", true},
    {PROXY_OUT_FORWARD_UNSUPPORTED, 403, "unsupported_l7_protocol", L, "forward-l7-deny", true},
    {PROXY_OUT_SSRF, 403, "ssrf_denied", J, "ssrf", true},
    {PROXY_OUT_DNS, 502, "dns_resolution_failed", J, "dns", false},
    {PROXY_OUT_UPSTREAM_FAILED, 502, "upstream_unreachable", J, "upstream", false},
    {PROXY_OUT_TUNNEL_PROTOCOL, 403, "unsupported_l7_protocol", J, "connect-l7-parse-rejection",
     true},
    {PROXY_OUT_TUNNEL_HEAD_BAD, 400, NULL, B, "connect-l7-parse-rejection", true},
    {PROXY_OUT_TUNNEL_AUTHORITY, 403, "request_authority_mismatch", PROXY_REPLY_AUTHORITY, "l7",
     true},
    {PROXY_OUT_TUNNEL_TARGET, 400, "invalid_request_target", J, "connect-l7-parse-rejection", true},
    {PROXY_OUT_TUNNEL_SSRF, 403, "ssrf_denied", J, "ssrf", true},
    {PROXY_OUT_TUNNEL_L7_DENIED, 403, "policy_denied", L, "l7", true},
    {PROXY_OUT_TUNNEL_UNSUPPORTED, 403, "unsupported_l7_protocol", L, "l7", true},
    {PROXY_OUT_TUNNEL_UPSTREAM, 502, "upstream_unreachable", J, "upstream", true},
    {PROXY_OUT_RELOAD_CLOSED, 0, NULL, PROXY_REPLY_NONE, "policy_stale", true},
    {PROXY_OUT_CRED_MISMATCH, 403, "credential_endpoint_mismatch", PROXY_REPLY_MESSAGE,
     "credentials", true},
    {PROXY_OUT_CRED_UNAVAILABLE, 500, "credential_unavailable", PROXY_REPLY_MESSAGE, "credentials",
     true},
};

static bool same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

START_TEST(test_outcome_row)
{
    const struct out_case *tc = &out_cases[_i];
    const struct proxy_outcome_row *r = proxy_outcome_row(tc->o);

    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->outcome, tc->o);
    ck_assert_msg(r->status == tc->status, "%s: status %u", r->name, r->status);
    ck_assert_msg(same(r->error, tc->error), "%s: error %s", r->name, r->error);
    ck_assert_msg(r->kind == tc->kind, "%s: kind", r->name);
    ck_assert_msg(same(r->stage, tc->stage), "%s: stage %s", r->name, r->stage);
    ck_assert_msg(r->log == tc->log, "%s: log", r->name);
    /* the engines that decide here (never "opa": proviso runs no OPA), or
     * none where the field means nothing */
    ck_assert_msg(r->engine == NULL || strcmp(r->engine, "policy") == 0 ||
                      strcmp(r->engine, "ssrf") == 0 || strcmp(r->engine, "l7") == 0 ||
                      strcmp(r->engine, "http-parser") == 0 || strcmp(r->engine, "tls") == 0 ||
                      strcmp(r->engine, "credentials") == 0,
                  "%s: engine %s", r->name, r->engine);
    /* failures that are no policy decision name no policy engine */
    if (tc->o == PROXY_OUT_DNS || tc->o == PROXY_OUT_CONN_LIMIT || tc->o == PROXY_OUT_INTERNAL) {
        ck_assert_msg(r->engine == NULL, "%s: engine %s", r->name, r->engine);
    }
}
END_TEST

/* Every row is reachable from its enumerator, once; the test table covers the
 * whole table; bare and no-reply rows carry no error code, bodies do. */
START_TEST(test_outcome_invariants)
{
    size_t n = proxy_outcome_count();

    ck_assert_uint_eq(n, PV_ARRAY_LEN(out_cases));
    ck_assert_ptr_null(proxy_outcome_at(n));
    for (size_t i = 0; i < n; i++) {
        const struct proxy_outcome_row *r = proxy_outcome_at(i);
        ck_assert_ptr_eq(proxy_outcome_row(r->outcome), r);
        for (size_t k = i + 1; k < n; k++) {
            ck_assert_int_ne(r->outcome, proxy_outcome_at(k)->outcome);
        }
        ck_assert_msg((r->kind == PROXY_REPLY_BARE || r->kind == PROXY_REPLY_NONE ||
                       r->kind == PROXY_REPLY_TEXT) == (r->error == NULL),
                      "%s: error code and reply kind disagree", r->name);
        ck_assert_msg((r->kind == PROXY_REPLY_NONE) == (r->status == 0), "%s", r->name);
        ck_assert_msg(r->status == 0 || (r->status >= 400 && r->status < 600), "%s", r->name);
        /* every policy refusal with a JSON body names what is missing (the
         * L7 body always does); nothing else does */
        ck_assert_msg((r->kind == PROXY_REPLY_JSON && r->status == 403 &&
                       (strcmp(r->error, "policy_denied") == 0 ||
                        strcmp(r->error, "ssrf_denied") == 0)) == (r->missing != NULL),
                      "%s: rule_missing type and refusal disagree", r->name);
    }
    /* a value outside the enumeration has no row: the exit then closes */
    ck_assert_ptr_null(proxy_outcome_row((enum proxy_outcome)999));
}
END_TEST

/* ---------------------------------------------------------------------------
 * Chunked bodies
 * ------------------------------------------------------------------------- */

struct chunk_case {
    const char *in;
    enum proxy_chunk_status st;
    const char *out; /* canonical output (DONE), or the prefix emitted */
    size_t used;     /* bytes that belong to the body (DONE) */
};

#define DONE PROXY_CHUNK_DONE
#define MORE PROXY_CHUNK_MORE
#define BADC PROXY_CHUNK_BAD

static const struct chunk_case chunk_cases[] = {
    /* accepted, re-chunked */
    {"0\r\n\r\n", DONE, "0\r\n\r\n", 5},
    {"5\r\nhello\r\n0\r\n\r\n", DONE, "5\r\nhello\r\n0\r\n\r\n", 15},
    {"05\r\nhello\r\n0\r\n\r\nNEXT", DONE, "5\r\nhello\r\n0\r\n\r\n", 16},
    {"A\r\n0123456789\r\n0\r\n\r\n", DONE, "a\r\n0123456789\r\n0\r\n\r\n", 20},
    {"1;a=b\r\nx\r\n0\r\n\r\n", DONE, "1\r\nx\r\n0\r\n\r\n", 15},
    {"1 ; a=\"q;\\\"\"\r\nx\r\n0\r\n\r\n", DONE, "1\r\nx\r\n0\r\n\r\n", 22},
    {"1\t;x\r\nx\r\n0;z\r\n\r\n", DONE, "1\r\nx\r\n0\r\n\r\n", 16},
    {"1\r\nx\r\n0\r\nX-T: v\r\nY:\r\n\r\n", DONE, "1\r\nx\r\n0\r\n\r\n", 23},
    {"1\r\nx\r\n0\r\nX: caf\xc3\xa9\r\n\r\n", DONE, "1\r\nx\r\n0\r\n\r\n", 21},
    {"3\r\na", MORE, "3\r\na", 5},
    {"3;ext", MORE, "", 5},
    /* rejected: size lines */
    {"\r\n", BADC, "", 0},
    {"x\r\n", BADC, "", 0},
    {" 1\r\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"+1\r\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"0x1\r\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"1 \r\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"1\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"1\rx\r\n0\r\n\r\n", BADC, "", 0},
    {"1;\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"1;a\rb\r\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"1;a\x01\r\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"1;a\x7f\r\nx\r\n0\r\n\r\n", BADC, "", 0},
    {"1000000000000000\r\n", BADC, "", 0},
    {"0000000000000001\r\nx\r\n0\r\n\r\n", BADC, "", 0},
    /* rejected: data */
    {"1\r\nxy\r\n0\r\n\r\n", BADC, "1\r\nx", 0},
    {"1\r\nx\n0\r\n\r\n", BADC, "1\r\nx", 0},
    {"1\r\nx\r0\r\n\r\n", BADC, "1\r\nx", 0},
    /* rejected: trailers and the end */
    {"0\r\nX: a\nY: b\r\n\r\n", BADC, "", 0},
    {"0\r\nX: a\r\n b\r\n\r\n", BADC, "", 0},
    {"0\r\nX: a\r\n\tb\r\n\r\n", BADC, "", 0},
    {"0\r\nX a\r\n\r\n", BADC, "", 0},
    {"0\r\n: a\r\n\r\n", BADC, "", 0},
    {"0\r\nX: a\x01\r\n\r\n", BADC, "", 0},
    {"0\r\nX: a\rb\r\n\r\n", BADC, "", 0},
    {"0\n\r\n", BADC, "", 0},
    {"0\r\n\n", BADC, "", 0},
    {"0\r\n\rX", BADC, "", 0},
};

struct sink {
    char buf[256];
    size_t len;
};

static void sink_emit(void *arg, const char *p, size_t n)
{
    struct sink *s = arg;

    ck_assert_uint_le(s->len + n, sizeof(s->buf));
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

/* Feed 'in' in pieces of 'step' bytes; returns the final status. */
static enum proxy_chunk_status feed(const char *in, size_t len, size_t step, struct sink *s,
                                    size_t *total)
{
    struct proxy_chunk d;
    enum proxy_chunk_status st = PROXY_CHUNK_MORE;
    size_t off = 0;

    proxy_chunk_init(&d);
    memset(s, 0, sizeof(*s));
    *total = 0;
    while (off < len && st == PROXY_CHUNK_MORE) {
        size_t n = len - off < step ? len - off : step;
        size_t used = 0;
        st = proxy_chunk_feed(&d, in + off, n, &used, sink_emit, s);
        ck_assert_uint_le(used, n);
        if (st == PROXY_CHUNK_MORE) {
            ck_assert_uint_eq(used, n);
        }
        if (st == PROXY_CHUNK_BAD) {
            ck_assert_str_ne(d.why, "");
        }
        off += used;
        *total += used;
    }
    return st;
}

START_TEST(test_chunk)
{
    const struct chunk_case *tc = &chunk_cases[_i];
    size_t len = strlen(tc->in);

    for (size_t step = 1; step <= len; step++) {
        struct sink s;
        size_t total = 0;
        enum proxy_chunk_status st = feed(tc->in, len, step, &s, &total);
        ck_assert_msg(st == tc->st, "row %d step %zu: status %d", _i, step, (int)st);
        if (st == PROXY_CHUNK_DONE) {
            ck_assert_uint_eq(total, tc->used);
            ck_assert_uint_eq(s.len, strlen(tc->out));
            ck_assert_msg(memcmp(s.buf, tc->out, s.len) == 0, "row %d: output", _i);
        } else {
            /* only a prefix of the canonical form is ever emitted */
            ck_assert_msg(s.len <= strlen(tc->out) && memcmp(s.buf, tc->out, s.len) == 0,
                          "row %d step %zu: emitted %zu bytes", _i, step, s.len);
        }
    }
}
END_TEST

/* A decoder that failed stays failed. */
START_TEST(test_chunk_sticky)
{
    struct proxy_chunk d;
    struct sink s;
    size_t used = 0;

    memset(&s, 0, sizeof(s));
    proxy_chunk_init(&d);
    ck_assert_int_eq(proxy_chunk_feed(&d, "z", 1, &used, sink_emit, &s), PROXY_CHUNK_BAD);
    ck_assert_int_eq(proxy_chunk_feed(&d, "0\r\n\r\n", 5, &used, sink_emit, &s), PROXY_CHUNK_BAD);
    ck_assert_uint_eq(used, 0);
    ck_assert_uint_eq(s.len, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("proxy_outcome");
    TCase *tc = tcase_create("outcome");

    tcase_add_loop_test(tc, test_outcome_row, 0, (int)PV_ARRAY_LEN(out_cases));
    tcase_add_test(tc, test_outcome_invariants);
    suite_add_tcase(s, tc);
    tc = tcase_create("chunk");
    tcase_add_loop_test(tc, test_chunk, 0, (int)PV_ARRAY_LEN(chunk_cases));
    tcase_add_test(tc, test_chunk_sticky);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
