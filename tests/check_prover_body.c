/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_body.c - the request body decoder of proviso-prover
 *
 * Table-driven: every row is a body for one route kind and either the exact
 * fields (and raw spans) the decoder must hand to the loaders, or the error
 * class and message it must give. Spans are compared byte for byte, so a
 * scanner that stops early inside a string, a nested object or an escape
 * fails here. Every decoded body must pass prover_body_validate().
 */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/prover.h"

#define OK 0
#define PARSE PV_ERR_PARSE
#define USAGE PV_ERR_USAGE

struct row {
    enum prover_body_kind kind;
    const char *body;
    int err;            /* OK, PARSE or USAGE */
    const char *expect; /* error substring, or "field=span|field=span" on success */
    uint64_t timeout;   /* expected options.timeout_ms on success */
};

static const struct row rows[] = {
    /* --- accepted bodies, spans exact ------------------------------------- */
    {PROVER_BODY_PROVE, "{\"candidate\": {\"version\": 1}}", OK, "candidate={\"version\": 1}", 0},
    {PROVER_BODY_PROVE, "  {\"candidate\":{}}  \n", OK, "candidate={}", 0},
    {PROVER_BODY_PROVE,
     "{\"baseline\": {\"a\": \"}\\\"{\"}, \"candidate\": {\"b\": [1, {\"c\": \"]\"}]}}", OK,
     "baseline={\"a\": \"}\\\"{\"}|candidate={\"b\": [1, {\"c\": \"]\"}]}", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": \"version: 1\\nnetwork_policies: {}\\n\"}", OK,
     "candidate=version: 1\nnetwork_policies: {}\n", 0},
    {PROVER_BODY_PROVE, "{\"proposal\": {\"operations\": []}, \"baseline\": \"version: 1\"}", OK,
     "proposal={\"operations\": []}|baseline=version: 1", 0},
    {PROVER_BODY_PROVE, "{\"policy\": {\"version\": 1}, \"credentials\": [{\"name\": \"x\"}]}", OK,
     "policy={\"version\": 1}|credentials=[{\"name\": \"x\"}]", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"timeout_ms\": 250}}", OK,
     "candidate={}|options={\"timeout_ms\": 250}", 250},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {}}", OK, "candidate={}|options={}", 0},
    {PROVER_BODY_PROVE, "{\r\n\t\"candidate\"\t:\r\n{ }\r\n}", OK, "candidate={ }", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": \"caf\\u00e9\"}", OK, "candidate=caf\xc3\xa9", 0},
    {PROVER_BODY_CHECK, "{\"candidate\": {}, \"boundary\": \"version: 1\"}", OK,
     "candidate={}|boundary=version: 1", 0},
    {PROVER_BODY_DISCOVER,
     "{\"openapi\": {\"openapi\": \"3.0.0\"}, \"policy\": {}, \"binary\": \"/usr/bin/curl\"}", OK,
     "openapi={\"openapi\": \"3.0.0\"}|policy={}|binary=/usr/bin/curl", 0},
    /* --- malformed JSON: PARSE with body:LINE:COL ------------------------- */
    {PROVER_BODY_PROVE, "", PARSE, "body:1:", 0},
    {PROVER_BODY_PROVE, "{", PARSE, "body:1:", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}}x", PARSE, "body:1:", 0},
    {PROVER_BODY_PROVE, "{\n\"candidate\": {\n\"a\": tru}}", PARSE, "body:3:", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"candidate\": {}}", PARSE, "duplicate", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": \"a\\u0000b\"}", PARSE, "body:1:", 0},
    {PROVER_BODY_PROVE, "\"just a string\"", PARSE, "body:1:", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": \"\xff\"}", PARSE, "body:1:", 0},
    /* --- wrong shapes: USAGE ------------------------------------------------ */
    {PROVER_BODY_PROVE, "[]", USAGE, "body: must be a JSON object", 0},
    {PROVER_BODY_PROVE, "[{\"candidate\": {}}]", USAGE, "body: must be a JSON object", 0},
    {PROVER_BODY_PROVE, "{}", USAGE, "exactly one of candidate, proposal, policy", 0},
    {PROVER_BODY_PROVE, "{\"baseline\": {}}", USAGE, "exactly one of", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"policy\": {}}", USAGE, "exactly one of", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": 1}", USAGE, "candidate: must be a policy object", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": null}", USAGE, "candidate: must be", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": [1]}", USAGE, "candidate: must be", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"credentials\": true}", USAGE, "credentials: must be",
     0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": []}", USAGE, "options: must be", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"boundary\": {}}", USAGE,
     "unknown field \"boundary\"", 0},
    {PROVER_BODY_PROVE, "{\"cand\\u0069date\": {}}", USAGE, "unknown field", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"\x01x\": 1}", PARSE, "body:1:", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"timeout_ms\": 0}}", USAGE,
     "options.timeout_ms: must be an integer between 1 and 5000", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"timeout_ms\": 5001}}", USAGE,
     "between 1 and 5000", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"timeout_ms\": -3}}", USAGE,
     "between 1 and 5000", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"timeout_ms\": 1.5}}", USAGE,
     "between 1 and 5000", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"timeout_ms\": \"9\"}}", USAGE,
     "between 1 and 5000", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"depth\": 1}}", USAGE,
     "options: unknown field \"depth\"", 0},
    {PROVER_BODY_CHECK, "{\"candidate\": {}}", USAGE, "boundary: required field missing", 0},
    {PROVER_BODY_CHECK, "{\"boundary\": {}}", USAGE, "candidate: required field missing", 0},
    {PROVER_BODY_CHECK, "{\"candidate\": {}, \"boundary\": {}, \"proposal\": {}}", USAGE,
     "unknown field \"proposal\"", 0},
    {PROVER_BODY_DISCOVER, "{\"openapi\": {}, \"policy\": {}}", USAGE,
     "binary: required field missing", 0},
    {PROVER_BODY_DISCOVER, "{\"openapi\": {}, \"policy\": {}, \"binary\": \"curl\"}", USAGE,
     "binary: must be an absolute path", 0},
    {PROVER_BODY_DISCOVER, "{\"openapi\": {}, \"policy\": {}, \"binary\": \"\"}", USAGE,
     "binary: must be an absolute path", 0},
    {PROVER_BODY_DISCOVER, "{\"openapi\": {}, \"policy\": {}, \"binary\": {}}", USAGE,
     "binary: must be an absolute path string", 0},
    {PROVER_BODY_DISCOVER, "{\"openapi\": 3, \"policy\": {}, \"binary\": \"/b\"}", USAGE,
     "openapi: must be", 0},
    {PROVER_BODY_DISCOVER,
     "{\"openapi\": {}, \"policy\": {}, \"binary\": \"/b\", \"options\": {\"timeout_ms\": 9}}", OK,
     "openapi={}|policy={}|binary=/b|options={\"timeout_ms\": 9}", 9},
    {PROVER_BODY_DISCOVER,
     "{\"openapi\": {}, \"policy\": {}, \"binary\": \"/b\", \"options\": "
     "{\"test_allow_loopback\": 1}}",
     USAGE, "options.test_allow_loopback: must be a boolean", 0},
    {PROVER_BODY_PROVE, "{\"candidate\": {}, \"options\": {\"test_allow_loopback\": true}}", USAGE,
     "options: unknown field \"test_allow_loopback\"", 0},
    {PROVER_BODY_DISCOVER,
     "{\"openapi\": {}, \"policy\": {}, \"binary\": \"/b\", \"ancestors\": \"/a\"}", USAGE,
     "ancestors: must be", 0},
};

static enum prover_field field_by_name(const char *name, size_t len)
{
    for (int f = 0; f < PROVER_F__COUNT; f++) {
        const char *n = prover_field_name((enum prover_field)f);
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            return (enum prover_field)f;
        }
    }
    ck_abort_msg("bad field in table: %.*s", (int)len, name);
    return PROVER_F__COUNT;
}

START_TEST(test_body_table)
{
    const struct row *r = &rows[_i];
    struct prover_body b;
    char err[512] = "";
    pv_result res =
        prover_body_decode(r->kind, r->body, strlen(r->body), 5000, &b, err, sizeof(err));

    if (r->err != OK) {
        ck_assert_msg(!pv_ok(res), "row %d accepted: %s", _i, r->body);
        ck_assert_int_eq(res.err, r->err);
        ck_assert_msg(strstr(err, r->expect) != NULL, "row %d: error '%s' lacks '%s'", _i, err,
                      r->expect);
        ck_assert_ptr_null(b.root);
        ck_assert(prover_body_validate(&b, r->body, strlen(r->body)));
        return;
    }
    ck_assert_msg(pv_ok(res), "row %d refused: %s (%s)", _i, err, r->body);
    ck_assert(prover_body_validate(&b, r->body, strlen(r->body)));
    ck_assert_uint_eq(b.timeout_ms, r->timeout);
    {
        bool want[PROVER_F__COUNT] = {false};
        const char *p = r->expect;
        while (*p != '\0') {
            const char *eq = strchr(p, '=');
            const char *end = strchr(p, '|');
            enum prover_field f;
            size_t vlen;
            ck_assert_ptr_nonnull(eq);
            if (end == NULL) {
                end = p + strlen(p);
            }
            f = field_by_name(p, (size_t)(eq - p));
            want[f] = true;
            vlen = (size_t)(end - eq - 1);
            ck_assert_msg(b.f[f].present, "row %d: %s missing", _i, prover_field_name(f));
            ck_assert_msg(b.f[f].len == vlen && memcmp(b.f[f].text, eq + 1, vlen) == 0,
                          "row %d: %s is '%.*s', want '%.*s'", _i, prover_field_name(f),
                          (int)b.f[f].len, b.f[f].text, (int)vlen, eq + 1);
            p = *end == '|' ? end + 1 : end;
        }
        for (int f = 0; f < PROVER_F__COUNT; f++) {
            ck_assert_msg(b.f[f].present == want[f], "row %d: field %s presence", _i,
                          prover_field_name((enum prover_field)f));
        }
    }
    prover_body_free(&b);
    ck_assert_ptr_null(b.root);
}
END_TEST

/* A span of an object value is a pointer into the caller's buffer (no copy);
 * a string value is decoded. */
START_TEST(test_body_spans_borrow)
{
    static const char body[] = "{\"candidate\": {\"x\": 1}, \"baseline\": \"a\\nb\"}";
    struct prover_body b;
    char err[256];

    ck_assert(
        pv_ok(prover_body_decode(PROVER_BODY_PROVE, body, strlen(body), 10, &b, err, sizeof(err))));
    ck_assert_ptr_eq(b.f[PROVER_F_CANDIDATE].text, body + 14);
    ck_assert(!b.f[PROVER_F_CANDIDATE].is_string);
    ck_assert(b.f[PROVER_F_BASELINE].is_string);
    ck_assert_str_eq(b.f[PROVER_F_BASELINE].text, "a\nb");
    /* The validator catches a span moved outside the buffer. */
    b.f[PROVER_F_CANDIDATE].text = body + strlen(body) - 2;
    ck_assert(!prover_body_validate(&b, body, strlen(body)));
    prover_body_free(&b);
}
END_TEST

/* Not NUL-terminated input: the decoder must respect 'len'. */
START_TEST(test_body_len_bound)
{
    static const char body[] = "{\"candidate\": {}}GARBAGE";
    struct prover_body b;
    char err[256];

    ck_assert(pv_ok(prover_body_decode(PROVER_BODY_PROVE, body, 17, 10, &b, err, sizeof(err))));
    prover_body_free(&b);
    ck_assert(!pv_ok(prover_body_decode(PROVER_BODY_PROVE, body, 18, 10, &b, err, sizeof(err))));
    ck_assert(!pv_ok(prover_body_decode(PROVER_BODY_PROVE, body, 16, 10, &b, err, sizeof(err))));
}
END_TEST

/* Deep nesting is refused with an error, never a crash. */
START_TEST(test_body_deep)
{
    size_t depth = 100000;
    char *body = malloc(2 * depth + 32);
    struct prover_body b;
    char err[256];
    size_t n = 0;

    ck_assert_ptr_nonnull(body);
    n += (size_t)snprintf(body, 32, "{\"candidate\": ");
    memset(body + n, '[', depth);
    memset(body + n + depth, ']', depth);
    n += 2 * depth;
    body[n++] = '}';
    ck_assert(!pv_ok(prover_body_decode(PROVER_BODY_PROVE, body, n, 10, &b, err, sizeof(err))));
    free(body);
}
END_TEST

static Suite *body_suite(void)
{
    Suite *s = suite_create("prover_body");
    TCase *tc = tcase_create("decode");

    tcase_add_loop_test(tc, test_body_table, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_body_spans_borrow);
    tcase_add_test(tc, test_body_len_bound);
    tcase_add_test(tc, test_body_deep);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(body_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
