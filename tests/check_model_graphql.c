/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_graphql.c - unit tests of model_graphql.c and model_graphql_http.c
 *
 * Table-driven: documents and the operation the reader makes of them (type,
 * name, root fields through aliases, fragments and inline fragments), the
 * lexer's edge cases (BOM, commas, comments, numbers, escapes, surrogate
 * pairs, block strings), refusals with their line:col, the limits, and the
 * GraphQL-over-HTTP extraction (GET, POST JSON objects and batches,
 * application/graphql, persisted queries, bad requests). Random documents
 * are compared with an independent parser in tests/graphql_diff.sh.
 */
#include "config.h"

#include <check.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_graphql.h"

/* fields: comma-separated sorted root field names; NULL: refused and 'why'
 * must occur in the error message. */
struct doc_case {
    const char *doc;
    const char *opname;
    const char *type;
    const char *name;
    const char *fields;
    const char *why;
};

static const struct doc_case doc_cases[] = {
    /* operations */
    {"{ viewer { login } }", NULL, "query", NULL, "viewer", NULL},
    {"query { viewer { login } }", NULL, "query", NULL, "viewer", NULL},
    {"query Q { a b }", NULL, "query", "Q", "a,b", NULL},
    {"mutation M { addStar(input: {starrableId: \"x\"}) { clientMutationId } }", NULL, "mutation",
     "M", "addStar", NULL},
    {"subscription S { onEvent }", NULL, "subscription", "S", "onEvent", NULL},
    {"query A { a } mutation B { b }", "B", "mutation", "B", "b", NULL},
    {"query A { a } mutation B { b }", "A", "query", "A", "a", NULL},
    /* aliases: the field's name, never the alias */
    {"mutation { viewer: deleteRepository(id: 1) { id } }", NULL, "mutation", NULL,
     "deleteRepository", NULL},
    {"{ a: b, c: b, b }", NULL, "query", NULL, "b", NULL},
    {"{ __typename }", NULL, "query", NULL, "__typename", NULL},
    /* fragments at the root, transitively; inline fragments */
    {"mutation { ...F } fragment F on Mutation { deleteRepository(id: 1) { id } }", NULL,
     "mutation", NULL, "deleteRepository", NULL},
    {"query { ...A } fragment A on Query { ...B x } fragment B on Query { y { ...C } } "
     "fragment C on Y { z }",
     NULL, "query", NULL, "x,y", NULL},
    {"{ ... on Query { a ... { b } } ... @include(if: false) { c } }", NULL, "query", NULL, "a,b,c",
     NULL},
    {"{ ...F ...F } fragment F on Query { a }", NULL, "query", NULL, "a", NULL},
    /* directives never remove a field */
    {"mutation { deleteRepository(id: 1) @skip(if: true) }", NULL, "mutation", NULL,
     "deleteRepository", NULL},
    /* keywords are names */
    {"{ query mutation fragment on true null type }", NULL, "query", NULL,
     "fragment,mutation,null,on,query,true,type", NULL},
    {"query query { a }", "query", "query", "query", "a", NULL},
    {"fragment F on on { a } { ...F }", NULL, "query", NULL, "a", NULL},
    /* variables, defaults, all value kinds */
    {"query Q($a: Int = 1, $b: [String!]! = [\"x\"], $c: In = {k: [1.5, -2e3, null, true, "
     "ENUM]}) @dir(x: $a) { f(a: $a, b: $b, o: {n: {m: [[]]}}) }",
     NULL, "query", "Q", "f", NULL},
    {"query Q($a: Int @deprecated) { f }", NULL, "query", "Q", "f", NULL},
    /* lexer: BOM, commas, comments, line terminators */
    {"\xEF\xBB\xBF{ a }", NULL, "query", NULL, "a", NULL},
    {",,,{,a,,b,},,", NULL, "query", NULL, "a,b", NULL},
    {"# first\r\n{ a # mid { b }\r c }# end", NULL, "query", NULL, "a,c", NULL},
    {"{ a\xEF\xBB\xBF b }", NULL, "query", NULL, "a,b", NULL},
    /* strings: escapes, \uXXXX, surrogate pairs, \u{...}, block strings */
    {"{ a(s: \"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00 \\u{1F600}\") }", NULL,
     "query", NULL, "a", NULL},
    {"{ a(s: \"caf\xC3\xA9 \xF0\x9F\x98\x80\") }", NULL, "query", NULL, "a", NULL},
    {"{ a(s: \"\"\"multi\n line \\\"\"\" \" \"\" \\n\"\"\") b }", NULL, "query", NULL, "a,b", NULL},
    {"{ a(s: \"\"\"\"\"\") }", NULL, "query", NULL, "a", NULL},
    {"{ a(s: \"\"\"} mutation { x }\"\"\") }", NULL, "query", NULL, "a", NULL},
    {"{ a(s: \"# not a comment }\") }", NULL, "query", NULL, "a", NULL},
    /* numbers */
    {"{ a(i: 0, j: -0, k: 123, f: 1.0, g: -1.5e-3, h: 2E+10) }", NULL, "query", NULL, "a", NULL},

    /* refusals: syntax, with line:col */
    {"", NULL, NULL, NULL, NULL, "empty document"},
    {"   # only a comment\n", NULL, NULL, NULL, NULL, "empty document"},
    {"{}", NULL, NULL, NULL, NULL, "1:2: expected a name"},
    {"{ a", NULL, NULL, NULL, NULL, "expected a name, found end of document"},
    {"{ a }\n  }", NULL, NULL, NULL, NULL, "2:3: expected an operation"},
    {"{ a(x: ) }", NULL, NULL, NULL, NULL, "1:8: expected a value"},
    {"{ a() }", NULL, NULL, NULL, NULL, "expected a name"},
    {"query Q() { a }", NULL, NULL, NULL, NULL, "expected '$'"},
    {"query Q($a: Int!!) { a }", NULL, NULL, NULL, NULL, "expected '$'"},
    {"query Q($a: Int = $b) { a }", NULL, NULL, NULL, NULL, "variable not allowed"},
    {"{ a(x: 01) }", NULL, NULL, NULL, NULL, "unexpected digit after 0"},
    {"{ a(x: 1.) }", NULL, NULL, NULL, NULL, "expected a digit after '.'"},
    {"{ a(x: 1e) }", NULL, NULL, NULL, NULL, "exponent"},
    {"{ a(x: 123abc) }", NULL, NULL, NULL, NULL, "1:11: invalid number"},
    {"{ a(x: 1.5.3) }", NULL, NULL, NULL, NULL, "invalid number"},
    {"{ a(x: -) }", NULL, NULL, NULL, NULL, "invalid number"},
    {"{ a(s: \"open) }", NULL, NULL, NULL, NULL, "unterminated string"},
    {"{ a(s: \"line\nbreak\") }", NULL, NULL, NULL, NULL, "unterminated string"},
    {"{ a(s: \"\\x\") }", NULL, NULL, NULL, NULL, "invalid escape"},
    {"{ a(s: \"\\u12G4\") }", NULL, NULL, NULL, NULL, "invalid Unicode escape"},
    {"{ a(s: \"\\uD83D\") }", NULL, NULL, NULL, NULL, "lone high surrogate"},
    {"{ a(s: \"\\uD83Dx\") }", NULL, NULL, NULL, NULL, "lone high surrogate"},
    {"{ a(s: \"\\uDE00\") }", NULL, NULL, NULL, NULL, "lone low surrogate"},
    {"{ a(s: \"\\u{D800}\") }", NULL, NULL, NULL, NULL, "invalid Unicode escape"},
    {"{ a(s: \"\\u{110000}\") }", NULL, NULL, NULL, NULL, "invalid Unicode escape"},
    {"{ a(s: \"\"\"open) }", NULL, NULL, NULL, NULL, "unterminated block string"},
    {"{ a(s: \"\xC3\x28\") }", NULL, NULL, NULL, NULL, "invalid UTF-8"},
    {"{ a(s: \"\xED\xA0\x80\") }", NULL, NULL, NULL, NULL, "invalid UTF-8"}, /* CESU */
    {"{ a(s: \"\xC0\xAF\") }", NULL, NULL, NULL, NULL, "invalid UTF-8"},     /* overlong */
    {"{ a \x01 }", NULL, NULL, NULL, NULL, "unexpected character U+0001"},
    {"{ a ? }", NULL, NULL, NULL, NULL, "unexpected character '?'"},
    {"{ a .. b }", NULL, NULL, NULL, NULL, "did you mean '...'"},
    {"{ ... }", NULL, NULL, NULL, NULL, "expected '{' of an inline fragment"},
    {"{ ...on }", NULL, NULL, NULL, NULL, "expected a name"},
    {"fragment on on Q { a } { ...on }", NULL, NULL, NULL, NULL, "cannot be named 'on'"},
    {"fragment F { a } { ...F }", NULL, NULL, NULL, NULL, "expected 'on'"},
    {"{ a }\n{ b\n ...\n }", NULL, NULL, NULL, NULL, "4:2:"},
    {"\xF0\x9F\x98\x80 { a }", NULL, NULL, NULL, NULL, "1:1: unexpected character U+1F600"},
    {"{ a(s: \"\xF0\x9F\x98\x80\") ? }", NULL, NULL, NULL, NULL, "1:13:"},
    /* refusals: type-system definitions */
    {"type Query { a: Int } { a }", NULL, NULL, NULL, NULL, "type-system definition 'type'"},
    {"{ a } schema { query: Q }", NULL, NULL, NULL, NULL, "'schema'"},
    {"{ a } extend type Q { b: Int }", NULL, NULL, NULL, NULL, "'extend'"},
    {"\"description\" type Q { a: Int }", NULL, NULL, NULL, NULL, "type-system definitions"},
    {"directive @d on FIELD", NULL, NULL, NULL, NULL, "'directive'"},
    /* refusals: selection and names */
    {"query A { a } query B { b }", NULL, NULL, NULL, NULL, "2 operations and no operationName"},
    {"query A { a } query B { b }", "C", NULL, NULL, NULL, "no operation named 'C'"},
    {"{ a }", "A", NULL, NULL, NULL, "no operation named 'A'"},
    {"{ a }", "", NULL, NULL, NULL, "no operation named ''"},
    {"query A { a } { b }", "A", NULL, NULL, NULL, "anonymous operation"},
    {"query A { a } mutation A { b }", "A", NULL, NULL, NULL, "duplicate operation 'A'"},
    {"fragment F on Q { a } fragment F on Q { b } { ...F }", NULL, NULL, NULL, NULL,
     "duplicate fragment 'F'"},
    {"fragment F on Q { a }", NULL, NULL, NULL, NULL, "no operation"},
    /* refusals: fragments */
    {"{ ...Missing }", NULL, NULL, NULL, NULL, "1:6: undefined fragment 'Missing'"},
    {"{ a { ...Deep } }", NULL, NULL, NULL, NULL, "undefined fragment 'Deep'"},
    {"query A { a } query B { ...X }", "A", NULL, NULL, NULL, "undefined fragment 'X'"},
    {"{ ...F } fragment F on Q { ...F }", NULL, NULL, NULL, NULL, "cycle"},
    {"{ ...F } fragment F on Q { ...G } fragment G on Q { a { ...F } }", NULL, NULL, NULL, NULL,
     "cycle"},
    {"{ a } fragment F on Q { ...G } fragment G on Q { ...F }", NULL, NULL, NULL, NULL, "cycle"},
};

START_TEST(test_docs)
{
    const struct doc_case *c = &doc_cases[_i];
    struct model_gql_op op;
    char err[256];
    pv_result r = model_gql_read(c->doc, strlen(c->doc), c->opname, &op, err, sizeof(err));
    if (c->fields == NULL) {
        ck_assert_msg(!pv_ok(r), "case %d accepted: %s", _i, c->doc);
        ck_assert_msg(strstr(err, c->why) != NULL, "case %d: error '%s' lacks '%s'", _i, err,
                      c->why);
        ck_assert_ptr_null(op.fields);
        ck_assert_ptr_null(op.name);
        return;
    }
    ck_assert_msg(pv_ok(r), "case %d refused: %s (%s)", _i, err, c->doc);
    ck_assert_str_eq(model_gql_optype_name(op.type), c->type);
    if (c->name == NULL) {
        ck_assert_ptr_null(op.name);
    } else {
        ck_assert_str_eq(op.name, c->name);
    }
    char got[256] = "";
    size_t at = 0;
    for (size_t i = 0; i < op.nfields; i++) {
        at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%s", i > 0 ? "," : "", op.fields[i]);
    }
    ck_assert_str_eq(got, c->fields);
    ck_assert_ptr_null(op.persisted_id);
    model_gql_op_clear(&op);
    ck_assert_ptr_null(op.fields);
}
END_TEST

/* A document with an embedded NUL is refused, not cut short. */
START_TEST(test_nul)
{
    static const char doc[] = "{ a }\0mutation { b }";
    struct model_gql_op op;
    char err[128];
    ck_assert(!pv_ok(model_gql_read(doc, sizeof(doc) - 1, NULL, &op, err, sizeof(err))));
    ck_assert_ptr_nonnull(strstr(err, "U+0000"));
}
END_TEST

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    size_t len = strlen(head) + strlen(unit) * n + strlen(tail) + 1;
    char *s = malloc(len);
    ck_assert_ptr_nonnull(s);
    memcpy(s, head, strlen(head));
    char *p = s + strlen(head);
    for (size_t i = 0; i < n; i++) {
        memcpy(p, unit, strlen(unit));
        p += strlen(unit);
    }
    memcpy(p, tail, strlen(tail) + 1);
    return s;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

START_TEST(test_limits)
{
    struct model_gql_op op;
    char err[256];
    /* depth: MODEL_GQL_MAX_DEPTH nested selection sets pass, one more fails */
    size_t ok_depth = MODEL_GQL_MAX_DEPTH;
    char *open = repeat("", "{ a ", ok_depth, "");
    char *close = repeat("", "}", ok_depth, "");
    char *doc = join(open, close);
    ck_assert_msg(pv_ok(model_gql_read(doc, strlen(doc), NULL, &op, err, sizeof(err))), "%s", err);
    model_gql_op_clear(&op);
    free(doc);
    free(open);
    free(close);
    open = repeat("", "{ a ", ok_depth + 1, "");
    close = repeat("", "}", ok_depth + 1, "");
    doc = join(open, close);
    pv_result r = model_gql_read(doc, strlen(doc), NULL, &op, err, sizeof(err));
    ck_assert_int_eq(r.err, PV_ERR_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err, "nesting deeper"));
    free(doc);
    free(open);
    free(close);
    /* deep lists in a value: the same bound, no stack exhaustion */
    open = repeat("{ a(x: ", "[", 100000, "");
    r = model_gql_read(open, strlen(open), NULL, &op, err, sizeof(err));
    ck_assert_int_eq(r.err, PV_ERR_TOOBIG);
    free(open);
    /* tokens */
    doc = repeat("{ ", "a ", MODEL_GQL_MAX_TOKENS, "}");
    r = model_gql_read(doc, strlen(doc), NULL, &op, err, sizeof(err));
    ck_assert_int_eq(r.err, PV_ERR_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err, "tokens"));
    free(doc);
    /* size */
    doc = repeat("{ a(s: \"", "x", MODEL_GQL_MAX_DOCUMENT, "\") }");
    r = model_gql_read(doc, strlen(doc), NULL, &op, err, sizeof(err));
    ck_assert_int_eq(r.err, PV_ERR_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err, "longer than"));
    free(doc);
    /* many fragments in a chain: resolved without recursion */
    struct pv_buf {
        char *p;
        size_t n;
    } b = {malloc(1 << 20), 0};
    b.n += (size_t)snprintf(b.p, 32, "{ ...F0 }");
    for (int i = 0; i < 3000; i++) {
        b.n +=
            (size_t)snprintf(b.p + b.n, 64, " fragment F%d on Q { f%d ...F%d }", i, i % 7, i + 1);
    }
    b.n += (size_t)snprintf(b.p + b.n, 64, " fragment F3000 on Q { last }");
    ck_assert_msg(pv_ok(model_gql_read(b.p, b.n, NULL, &op, err, sizeof(err))), "%s", err);
    ck_assert_uint_eq(op.nfields, 8);
    model_gql_op_clear(&op);
    /* the same chain closed into a cycle */
    b.n = (size_t)snprintf(b.p, 32, "{ ...F0 }");
    for (int i = 0; i < 3000; i++) {
        b.n +=
            (size_t)snprintf(b.p + b.n, 64, " fragment F%d on Q { f ...F%d }", i, (i + 1) % 3000);
    }
    r = model_gql_read(b.p, b.n, NULL, &op, err, sizeof(err));
    ck_assert(!pv_ok(r));
    ck_assert_ptr_nonnull(strstr(err, "cycle"));
    /* 10,000 named operations: one selected by name, then a duplicate */
    b.n = 0;
    for (int i = 0; i < 10000; i++) {
        b.n += (size_t)snprintf(b.p + b.n, 64, "query q%d { f%d }\n", i, i % 3);
    }
    ck_assert_msg(pv_ok(model_gql_read(b.p, b.n, "q9999", &op, err, sizeof(err))), "%s", err);
    ck_assert_str_eq(op.fields[0], "f0");
    model_gql_op_clear(&op);
    b.n += (size_t)snprintf(b.p + b.n, 64, "mutation q5 { g }\n");
    r = model_gql_read(b.p, b.n, "q9999", &op, err, sizeof(err));
    ck_assert(!pv_ok(r));
    ck_assert_ptr_nonnull(strstr(err, "10001:10: duplicate operation 'q5'"));
    free(b.p);
}
END_TEST

START_TEST(test_describe)
{
    struct model_gql_op op;
    char err[128], buf[128];
    const char *doc = "mutation M { b a }";
    ck_assert(pv_ok(model_gql_read(doc, strlen(doc), NULL, &op, err, sizeof(err))));
    model_gql_op_describe(&op, buf, sizeof(buf));
    ck_assert_str_eq(buf, "mutation M(a,b)");
    model_gql_op_describe(&op, buf, 8);
    ck_assert_str_eq(buf, "mutatio");
    model_gql_op_clear(&op);
    ck_assert_str_eq(model_gql_optype_name(MODEL_GQL_SUBSCRIPTION), "subscription");
}
END_TEST

/* ==========================================================================
 * GraphQL over HTTP
 * ========================================================================== */

#define HASH_Q "b5d7e0c7a8f3a2c66a7e6d8a4b1f3b4f0c9d3a7b1c2d3e4f5a6b7c8d9e0f1a2b"

struct http_case {
    const char *method;
    const char *target;
    const char *ctype;
    const char *body;
    size_t max_body;
    const char *expect; /* ops described with ';' between; NULL: refused */
    int err;
    const char *why;
};

static const struct http_case http_cases[] = {
    {"POST", "/graphql", "application/json", "{\"query\":\"query { viewer { login } }\"}", 0,
     "query -(viewer)", 0, NULL},
    {"POST", "/graphql", "Application/JSON; charset=utf-8",
     "{\"query\":\"query A { a } mutation B { b "
     "}\",\"operationName\":\"B\",\"variables\":{\"x\":1},"
     "\"extensions\":{\"other\":true}}",
     0, "mutation B(b)", 0, NULL},
    {"POST", "/graphql", "application/json",
     "{\"query\":\"{ a }\",\"operationName\":null,\"variables\":null}", 0, "query -(a)", 0, NULL},
    {"POST", "/graphql", "application/json",
     "[{\"query\":\"{ a }\"},{\"query\":\"mutation { viewer: deleteRepository }\"}]", 0,
     "query -(a);mutation -(deleteRepository)", 0, NULL},
    {"POST", "/graphql", "application/json",
     "{\"extensions\":{\"persistedQuery\":{\"version\":1,\"sha256Hash\":\"" HASH_Q "\"}}}", 0,
     "persisted:" HASH_Q, 0, NULL},
    {"POST", "/graphql?operationName=B", "application/graphql", "query A { a } mutation B { b }", 0,
     "mutation B(b)", 0, NULL},
    {"GET", "/graphql?query=query%20%7B%20viewer%20%7B%20login%20%7D%20%7D", NULL, "", 0,
     "query -(viewer)", 0, NULL},
    {"GET",
     "/graphql?query=query+A+%7B+a+%7D+mutation+B+%7B+b+%7D&operationName=A&variables=%7B%7D", NULL,
     "", 0, "query A(a)", 0, NULL},
    {"GET",
     "/graphql?extensions=%7B%22persistedQuery%22%3A%7B%22version%22%3A1%2C%22sha256Hash%22%3A%"
     "22" HASH_Q "%22%7D%7D",
     NULL, "", 0, "persisted:" HASH_Q, 0, NULL},
    /* refusals */
    {"POST", "/graphql", "application/json", "{\"query\":\"{ a }\"}", 10, NULL, PV_ERR_TOOBIG,
     "graphql_max_body_bytes"},
    {"POST", "/graphql", "application/json", "{\"query\":\"{ a }\",\"query\":\"mutation { b }\"}",
     0, NULL, PV_ERR_PARSE, "invalid JSON"},
    {"POST", "/graphql", "application/json", "{\"query\":\"{ a }\",\"doc_id\":\"123\"}", 0, NULL,
     PV_ERR_PARSE, "unknown member 'doc_id'"},
    {"POST", "/graphql", "application/json", "{\"query\":42}", 0, NULL, PV_ERR_PARSE,
     "query must be a string"},
    {"POST", "/graphql", "application/json", "{\"query\":\"{ a }\",\"operationName\":1}", 0, NULL,
     PV_ERR_PARSE, "operationName must be a string"},
    {"POST", "/graphql", "application/json", "{\"query\":\"{ a }\",\"variables\":[1]}", 0, NULL,
     PV_ERR_PARSE, "variables must be"},
    {"POST", "/graphql", "application/json", "{}", 0, NULL, PV_ERR_PARSE, "no query"},
    {"POST", "/graphql", "application/json", "[]", 0, NULL, PV_ERR_PARSE, "empty batch"},
    {"POST", "/graphql", "application/json", "[{\"query\":\"{ a }\"}, 3]", 0, NULL, PV_ERR_PARSE,
     "batch element 1"},
    {"POST", "/graphql", "application/json",
     "[{\"query\":\"{ a }\"},{\"query\":\"mutation { ...Missing }\"}]", 0, NULL, PV_ERR_PARSE,
     "batch element 1: 1:15: undefined fragment"},
    {"POST", "/graphql", "application/json", "\"{ a }\"", 0, NULL, PV_ERR_PARSE, "invalid JSON"},
    {"POST", "/graphql", "application/json", "[\"{ a }\"]", 0, NULL, PV_ERR_PARSE, "JSON object"},
    {"POST", "/graphql", "application/json", "{\"query\":\"{ a }\"", 0, NULL, PV_ERR_PARSE,
     "invalid JSON"},
    {"POST", "/graphql", "application/json",
     "{\"query\":\"{ a }\",\"extensions\":{\"persistedQuery\":{\"sha256Hash\":\"" HASH_Q "\"}}}", 0,
     NULL, PV_ERR_PARSE, "does not hash"},
    {"POST", "/graphql", "application/json",
     "{\"extensions\":{\"persistedQuery\":{\"sha256Hash\":\"abc\"}}}", 0, NULL, PV_ERR_PARSE,
     "64 hex digits"},
    {"POST", "/graphql", "application/json",
     "{\"extensions\":{\"persistedQuery\":{\"version\":2,\"sha256Hash\":\"" HASH_Q "\"}}}", 0, NULL,
     PV_ERR_PARSE, "version must be 1"},
    {"POST", "/graphql", "application/json", "{\"extensions\":[]}", 0, NULL, PV_ERR_PARSE,
     "extensions must be"},
    {"POST", "/graphql", "application/x-www-form-urlencoded", "query=%7Ba%7D", 0, NULL,
     PV_ERR_PROTO, "is not a GraphQL request"},
    {"POST", "/graphql", NULL, "{\"query\":\"{ a }\"}", 0, NULL, PV_ERR_PROTO, "(none)"},
    {"PUT", "/graphql", "application/json", "{\"query\":\"{ a }\"}", 0, NULL, PV_ERR_PROTO,
     "method PUT"},
    {"GET", "/graphql", NULL, "", 0, NULL, PV_ERR_PARSE, "no query"},
    {"GET", "/graphql?query=%7Ba%7D&query=mutation%7Bb%7D", NULL, "", 0, NULL, PV_ERR_PARSE,
     "duplicate query parameter 'query'"},
    {"GET", "/graphql?query=%7Ba%7D&doc_id=1", NULL, "", 0, NULL, PV_ERR_PARSE, "'doc_id'"},
    {"GET", "/graphql?query=%7Ba%7D%00", NULL, "", 0, NULL, PV_ERR_PARSE, "malformed"},
    {"GET", "/graphql?query=%7Ba%7", NULL, "", 0, NULL, PV_ERR_PARSE, "malformed"},
    {"GET", "/graphql?query=%zz", NULL, "", 0, NULL, PV_ERR_PARSE, "malformed"},
    {"GET", "/graphql?extensions=nope", NULL, "", 0, NULL, PV_ERR_PARSE, "not JSON"},
    {"GET", "/graphql?query=%7Ba%7D", NULL, "x", 0, NULL, PV_ERR_PROTO, "no body"},
    {"POST", "/graphql?operationName=A&operationName=B", "application/graphql", "query A { a }", 0,
     NULL, PV_ERR_PARSE, "duplicate operationName"},
    {"POST", "/graphql?query=mutation%7Bb%7D", "application/json", "{\"query\":\"{ a }\"}", 0, NULL,
     PV_ERR_PARSE, "query parameter 'query' beside a POST body"},
    {"POST", "/graphql?qu%65ry=mutation%7Bb%7D", "application/json", "{\"query\":\"{ a }\"}", 0,
     NULL, PV_ERR_PARSE, "'query'"},
    {"POST", "/graphql?operationName=B", "application/json",
     "{\"query\":\"query A { a } mutation B { b }\",\"operationName\":\"A\"}", 0, NULL,
     PV_ERR_PARSE, "'operationName'"},
    {"POST", "/graphql?query=x", "application/graphql", "{ a }", 0, NULL, PV_ERR_PARSE, "'query'"},
    {"POST", "/graphql?cachebust=1&x", "application/json", "{\"query\":\"{ a }\"}", 0, "query -(a)",
     0, NULL},
    {"POST", "/graphql", "application/graphql", "query A { a } query B { b }", 0, NULL,
     PV_ERR_PARSE, "no operationName"},
    /* parameter cloaking: a server that splits on ';' (Rack 2, Django < 3.2,
     * Go < 1.17) reads query=, operationName=, ... where an '&' reader sees
     * a value of x */
    {"POST", "/graphql?x=1;query=mutation%20%7BdeleteRepo%7D", "application/json",
     "{\"query\":\"{ viewer }\"}", 0, NULL, PV_ERR_PARSE, "a raw ';' in the query string"},
    {"POST", "/graphql?x=1;operationName=B", "application/json",
     "{\"query\":\"query A { a } mutation B { b }\",\"operationName\":\"A\"}", 0, NULL,
     PV_ERR_PARSE, "raw ';'"},
    {"POST", "/graphql?x=1;variables=%7B%7D", "application/json", "{\"query\":\"{ a }\"}", 0, NULL,
     PV_ERR_PARSE, "raw ';'"},
    {"POST", "/graphql?x=1;extensions=%7B%7D", "application/json", "{\"query\":\"{ a }\"}", 0, NULL,
     PV_ERR_PARSE, "raw ';'"},
    {"POST", "/graphql?operationName=A;operationName=B", "application/graphql",
     "query A { a } mutation B { b }", 0, NULL, PV_ERR_PARSE, "raw ';'"},
    {"POST", "/graphql?cachebust=1;2", "application/json", "{\"query\":\"{ a }\"}", 0, NULL,
     PV_ERR_PARSE, "raw ';'"},
    {"GET", "/graphql?query=%7Ba%7D&x=1;query=mutation%7Bb%7D", NULL, "", 0, NULL, PV_ERR_PARSE,
     "raw ';'"},
    {"GET", "/graphql?query=query%20A%7Ba%7Dmutation%20B%7Bb%7D&operationName=A;operationName=B",
     NULL, "", 0, NULL, PV_ERR_PARSE, "raw ';'"},
    /* an encoded ';' is a byte of its value, read alike everywhere */
    {"GET", "/graphql?query=%7Ba%7D&x=1%3Bquery%3Dmutation", NULL, "", 0, "query -(a)", 0, NULL},
    /* path parameters are stripped from the canonical path, not a query */
    {"POST", "/graphql;query=x", "application/json", "{\"query\":\"{ a }\"}", 0, "query -(a)", 0,
     NULL},
};

START_TEST(test_http)
{
    const struct http_case *c = &http_cases[_i];
    struct model_gql_http in = {c->method, c->target,       strlen(c->target), c->ctype,
                                c->body,   strlen(c->body), c->max_body};
    struct model_gql_ops ops;
    char err[256];
    pv_result r = model_gql_http_read(&in, &ops, err, sizeof(err));
    if (c->expect == NULL) {
        ck_assert_msg(!pv_ok(r), "case %d accepted", _i);
        ck_assert_msg(r.err == c->err, "case %d: error %d, want %d (%s)", _i, r.err, c->err, err);
        ck_assert_msg(strstr(err, c->why) != NULL, "case %d: error '%s' lacks '%s'", _i, err,
                      c->why);
        ck_assert_ptr_null(ops.ops);
        ck_assert_uint_eq(ops.nops, 0);
        return;
    }
    ck_assert_msg(pv_ok(r), "case %d refused: %s", _i, err);
    char got[512] = "";
    size_t at = 0;
    for (size_t i = 0; i < ops.nops; i++) {
        char d[200];
        model_gql_op_describe(&ops.ops[i], d, sizeof(d));
        at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%s", i > 0 ? ";" : "", d);
    }
    ck_assert_str_eq(got, c->expect);
    model_gql_ops_clear(&ops);
}
END_TEST

/* A query sent with its own hash (automatic persisted queries) is read. */
START_TEST(test_http_hash_match)
{
    const char *q = "{ viewer { login } }";
    unsigned char md[32];
    unsigned int mdlen = 0;
    ck_assert_int_eq(EVP_Digest(q, strlen(q), md, &mdlen, EVP_sha256(), NULL), 1);
    char hex[65];
    for (unsigned i = 0; i < 32; i++) {
        snprintf(hex + 2 * i, 3, "%02X", md[i]); /* upper case is accepted too */
    }
    char body[512];
    snprintf(body, sizeof(body),
             "{\"query\":\"%s\",\"extensions\":{\"persistedQuery\":{\"version\":1,"
             "\"sha256Hash\":\"%s\"}}}",
             q, hex);
    struct model_gql_http in = {"POST", "/", 1, "application/json", body, strlen(body), 0};
    struct model_gql_ops ops;
    char err[256];
    ck_assert_msg(pv_ok(model_gql_http_read(&in, &ops, err, sizeof(err))), "%s", err);
    ck_assert_uint_eq(ops.nops, 1);
    ck_assert_ptr_null(ops.ops[0].persisted_id);
    ck_assert_str_eq(ops.ops[0].fields[0], "viewer");
    model_gql_ops_clear(&ops);
}
END_TEST

START_TEST(test_http_batch_limit)
{
    char *body = repeat("[", "{\"query\":\"{a}\"},", MODEL_GQL_MAX_BATCH, "{\"query\":\"{a}\"}]");
    struct model_gql_http in = {"POST", "/", 1, "application/json", body, strlen(body), 1 << 20};
    struct model_gql_ops ops;
    char err[256];
    pv_result r = model_gql_http_read(&in, &ops, err, sizeof(err));
    ck_assert_int_eq(r.err, PV_ERR_TOOBIG);
    free(body);
    body = repeat("[", "{\"query\":\"{a}\"},", MODEL_GQL_MAX_BATCH - 1, "{\"query\":\"{a}\"}]");
    in.body = body;
    in.body_len = strlen(body);
    ck_assert(pv_ok(model_gql_http_read(&in, &ops, err, sizeof(err))));
    ck_assert_uint_eq(ops.nops, MODEL_GQL_MAX_BATCH);
    ck_assert(ops.batch);
    model_gql_ops_clear(&ops);
    free(body);
}
END_TEST

static Suite *graphql_suite(void)
{
    Suite *s = suite_create("model_graphql");
    TCase *tc = tcase_create("reader");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_docs, 0, (int)PV_ARRAY_LEN(doc_cases));
    tcase_add_test(tc, test_nul);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_describe);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("http");
    tcase_add_loop_test(th, test_http, 0, (int)PV_ARRAY_LEN(http_cases));
    tcase_add_test(th, test_http_hash_match);
    tcase_add_test(th, test_http_batch_limit);
    suite_add_tcase(s, th);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(graphql_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
