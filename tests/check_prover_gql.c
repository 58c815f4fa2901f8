/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_gql.c - the prover against the evaluator on GraphQL policies
 *
 * Random baseline/candidate pairs of one credentialed GraphQL endpoint
 * (protocol graphql, or websocket with GraphQL rules): allow rules with
 * operation types, name globs and field globs, deny rules, presets and a
 * persisted registry. The oracle decides every request of a universe that
 * holds one member of each atom the patterns can form (every set of root
 * fields among five representatives, each name, each type, each id) with
 * model_decide, and collects the capability keys (docs/semantics.md#findings:
 * "graphql:TYPE", "graphql:persisted") of requests the candidate allows and
 * the baseline does not. The prover must report exactly those keys, and its
 * witnesses must re-check. PV_GQL_PAIRS sets the number of pairs (300).
 */
#include "config.h"

#include <check.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_prover_util.h"
#include "common/pv.h"
#include "model/model.h"
#include "prover/prover.h"

/* Patterns, and representatives of every atom they form over Names. */
static const char *const F_GLOB[] = {"viewer", "search", "v*", "*", "s*", "[a-m]*"};
static const char *const F_REP[] = {"viewer", "vx", "search", "sx", "zed", "abc"};
#define NFREP 6
static const char *const N_GLOB[] = {"A*", "B", "*"};
static const char *const N_REP[] = {NULL, "A", "Ax", "B", "zz"};
#define NNREP 5
static const char *const T_RULE[] = {"query", "mutation", "subscription", "*"};
static const char *const T_OP[] = {"query", "mutation", "subscription"};
static const char *const PRESET[] = {"read-only", "read-write", "full"};
static const char *const IDS[] = {"h1", "h2", "zz"};
static const char *const E_FIELD[] = {"viewer", "search", "zed"};

static uint64_t rng = 0x9e3779b97f4a7c15u;

static int rn(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

struct sb {
    char s[8192];
    size_t n;
};

static void add(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct sb *b, const char *fmt, ...)
{
    va_list ap;
    int k;

    va_start(ap, fmt);
    k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
    va_end(ap);
    ck_assert(k >= 0 && (size_t)k < sizeof(b->s) - b->n);
    b->n += (size_t)k;
}

/* One GraphQL rule as a flow mapping (deny rules without the wrapper). */
static void gen_rule(struct sb *b, bool deny)
{
    add(b, "%s{operation_type: '%s'", deny ? "" : "{allow: ", T_RULE[rn(4)]);
    if (rn(3) == 0) {
        add(b, ", operation_name: '%s'", N_GLOB[rn(3)]);
    }
    if (rn(3) != 0) {
        int n = 1 + rn(2);
        add(b, ", fields: [");
        for (int i = 0; i < n; i++) {
            add(b, "%s'%s'", i ? ", " : "", F_GLOB[rn(6)]);
        }
        add(b, "]");
    }
    add(b, deny ? "}" : "}}");
}

struct gen {
    bool ws;
    char rules[2048];
    char deny[1024];
    char reg[1024];
    bool registered;
};

static void gen_endpoint(struct gen *g)
{
    struct sb b = {.n = 0};
    int n;

    if (rn(5) == 0 && !g->ws) {
        add(&b, "access: %s", PRESET[rn(3)]);
    } else {
        n = 1 + rn(3);
        add(&b, "rules: [");
        if (g->ws) {
            add(&b, "{allow: {method: GET, path: /graphql}}, ");
        }
        for (int i = 0; i < n; i++) {
            add(&b, "%s", i ? ", " : "");
            gen_rule(&b, false);
        }
        add(&b, "]");
    }
    memcpy(g->rules, b.s, b.n + 1);
    b.n = 0;
    n = rn(3);
    if (n > 0) {
        add(&b, ", deny_rules: [");
        for (int i = 0; i < n; i++) {
            add(&b, "%s", i ? ", " : "");
            gen_rule(&b, true);
        }
        add(&b, "]");
    }
    memcpy(g->deny, b.s, b.n + 1);
    b.n = 0;
    g->registered = rn(2) == 0;
    n = rn(3);
    if (n > 0) {
        add(&b, ", graphql_persisted_queries: {");
        for (int i = 0; i < n; i++) {
            add(&b, "%s%s: {operation_type: %s", i ? ", " : "", IDS[i], T_OP[rn(3)]);
            if (rn(2) == 0) {
                add(&b, ", operation_name: %s", rn(2) ? "A" : "B");
            }
            if (rn(3) != 0) {
                add(&b, ", fields: [%s]", E_FIELD[rn(3)]);
            }
            add(&b, "}");
        }
        add(&b, "}");
    }
    memcpy(g->reg, b.s, b.n + 1);
}

static char *emit(const struct gen *g)
{
    struct sb b = {.n = 0};
    char *out;

    /* one key per line: libyaml refuses long flow mappings */
    add(&b,
        "version: 1\nnetwork_policies:\n  g:\n    binaries: [{path: /usr/bin/gh}]\n"
        "    endpoints:\n      - host: api.example.com\n        port: 443\n"
        "        path: /graphql\n        protocol: %s\n        enforcement: enforce\n"
        "        %s\n",
        g->ws ? "websocket" : "graphql", g->rules);
    if (g->deny[0] != '\0') {
        add(&b, "        %s\n", g->deny + 2);
    }
    if (g->registered) {
        add(&b, "        persisted_queries: allow_registered\n");
    }
    if (g->reg[0] != '\0') {
        add(&b, "        %s\n", g->reg + 2);
    }
    if (getenv("PV_GQL_DEBUG") != NULL) {
        fputs(b.s, stderr);
    }
    out = strdup(b.s);
    ck_assert_ptr_nonnull(out);
    return out;
}

static bool decide(const struct model_policy *p, const char *method, const struct model_gql_op *op)
{
    const char *bins[1] = {"/usr/bin/gh"};
    struct model_request rq;
    struct model_decision d;

    memset(&rq, 0, sizeof(rq));
    rq.binaries = bins;
    rq.nbinaries = 1;
    rq.host = "api.example.com";
    rq.host_len = strlen(rq.host);
    rq.port = 443;
    rq.method = method;
    rq.target = "/graphql";
    rq.target_len = 8;
    rq.gql = op;
    model_decide(p, &rq, &d);
    return d.allow;
}

#define K_PERSISTED 3
/* Bit k of the result: some request of key k is allowed by C, not by B. */
static unsigned oracle(const struct model_policy *B, const struct model_policy *C, bool ws,
                       size_t *ndec)
{
    static const char *const http[] = {"GET", "POST"};
    static const char *const wsm[] = {"WEBSOCKET_TEXT", "GET"};
    const char *const *methods = ws ? wsm : http;
    unsigned keys = 0;
    char *fields[NFREP];
    struct model_gql_op op;

    for (int m = 0; m < 2; m++) {
        for (int t = 0; t < 3; t++) {
            for (int n = 0; n < NNREP; n++) {
                for (unsigned set = 1; set < (1u << NFREP); set++) {
                    memset(&op, 0, sizeof(op));
                    op.type = (enum model_gql_optype)t;
                    op.name = (char *)(uintptr_t)N_REP[n];
                    op.fields = fields;
                    for (int f = 0; f < NFREP; f++) {
                        if ((set >> f) & 1u) {
                            fields[op.nfields++] = (char *)(uintptr_t)F_REP[f];
                        }
                    }
                    *ndec += 2;
                    if (decide(C, methods[m], &op) && !decide(B, methods[m], &op)) {
                        keys |= 1u << t;
                    }
                }
            }
        }
        for (int i = 0; i < 3; i++) {
            memset(&op, 0, sizeof(op));
            op.persisted_id = (char *)(uintptr_t)IDS[i];
            *ndec += 2;
            if (decide(C, methods[m], &op) && !decide(B, methods[m], &op)) {
                keys |= 1u << K_PERSISTED;
            }
        }
    }
    return keys;
}

static unsigned prover_keys(const struct prover_result *r)
{
    static const char *const names[] = {"graphql:query", "graphql:mutation", "graphql:subscription",
                                        "graphql:persisted"};
    unsigned keys = 0;

    for (size_t i = 0; i < r->npaths; i++) {
        const struct prover_path *p = &r->paths[i];
        bool known = false;

        ck_assert_int_eq(p->cat, PROVER_CAT_CAPABILITY);
        for (unsigned k = 0; k < 4; k++) {
            if (p->method != NULL && strcmp(p->method, names[k]) == 0) {
                keys |= 1u << k;
                known = true;
            }
        }
        ck_assert_msg(known, "capability key %s", p->method ? p->method : "(none)");
        /* the witness carries the operation the key names */
        ck_assert(p->w.gql_type != NULL || p->w.gql_persisted != NULL);
    }
    return keys;
}

START_TEST(test_differential)
{
    struct prover_session *s = prover_session_new();
    struct model_credset *creds =
        tp_creds("credentials:\n- {name: pat, type: github, scopes: [repo], target_hosts: "
                 "[api.example.com]}\n");
    const char *env = getenv("PV_GQL_PAIRS");
    uint64_t v = 300;
    int pairs;
    size_t found = 0;
    size_t empty = 0;
    size_t ndec = 0;
    size_t multi = 0;

    ck_assert_ptr_nonnull(s);
    if (env != NULL) {
        ck_assert(pv_ok(pv_parse_u64(env, strlen(env), 100000, &v)));
    }
    pairs = (int)v;
    for (int i = 0; i < pairs; i++) {
        struct gen gb;
        struct gen gc;
        char *yb;
        char *yc;
        struct model_policy *B;
        struct model_policy *C;
        struct prover_input in;
        struct prover_result *r;
        unsigned want;
        unsigned got;

        memset(&gb, 0, sizeof(gb));
        gb.ws = rn(4) == 0;
        gen_endpoint(&gb);
        if (rn(4) == 0) {
            /* Two rules of one type with one field glob each; the candidate
             * adds their union: only an operation selecting a field of each
             * shows it (docs/internals/prover.md#graphql). */
            const char *t = T_RULE[rn(4)];
            const char *f1 = F_GLOB[rn(6)];
            const char *f2 = F_GLOB[rn(6)];
            struct sb b = {.n = 0};

            add(&b,
                "rules: [%s{allow: {operation_type: '%s', fields: ['%s']}}, {allow: "
                "{operation_type: '%s', fields: ['%s']}}]",
                gb.ws ? "{allow: {method: GET, path: /graphql}}, " : "", t, f1, t, f2);
            memcpy(gb.rules, b.s, b.n + 1);
            gc = gb;
            b.n = 0;
            add(&b, "%.*s, {allow: {operation_type: '%s', fields: ['%s', '%s']}}]",
                (int)strlen(gb.rules) - 1, gb.rules, t, f1, f2);
            memcpy(gc.rules, b.s, b.n + 1);
            goto emit;
        }
        gc = gb;
        switch (rn(4)) {
        case 0:
            gen_endpoint(&gc); /* a fresh candidate */
            break;
        case 1:
            gc.registered = !gc.registered;
            break;
        default: {
            /* one more allow rule, or one deny rule less/more */
            struct sb b = {.n = 0};
            if (rn(2) == 0 && gc.rules[0] == 'r') {
                add(&b, "%.*s, ", (int)strlen(gc.rules) - 1, gc.rules);
                gen_rule(&b, false);
                add(&b, "]");
                memcpy(gc.rules, b.s, b.n + 1);
            } else if (gc.deny[0] != '\0') {
                gc.deny[0] = '\0';
            } else {
                add(&b, ", deny_rules: [");
                gen_rule(&b, true);
                add(&b, "]");
                memcpy(gc.deny, b.s, b.n + 1);
            }
        }
        }
    emit:
        yb = emit(&gb);
        yc = emit(&gc);
        B = tp_policy("baseline.yaml", yb);
        C = tp_policy("candidate.yaml", yc);
        want = oracle(B, C, gb.ws, &ndec);
        memset(&in, 0, sizeof(in));
        in.baseline = B;
        in.candidate = C;
        in.creds = creds;
        in.mode = PROVER_DELTA;
        in.timeout_ms = 20000;
        r = prover_run(s, &in);
        ck_assert_ptr_nonnull(r);
        ck_assert_msg(r->verdict != PROVER_VERDICT_UNKNOWN, "unknown (%s)\nB:\n%sC:\n%s",
                      prover_unknown_text(r->unknown), yb, yc);
        got = prover_keys(r);
        ck_assert_msg(got == want, "prover keys %#x, oracle %#x\nB:\n%sC:\n%s", got, want, yb, yc);
        for (size_t k = 0; k < r->npaths; k++) {
            multi += r->paths[k].w.ngql_fields > 1;
        }
        found += want != 0;
        empty += want == 0;
        prover_result_free(r);
        model_policy_free(B);
        model_policy_free(C);
        free(yb);
        free(yc);
    }
    fprintf(stderr,
            "gql differential: %d pairs, %zu with findings, %zu empty, %zu "
            "multi-field witnesses, %zu oracle decisions\n",
            pairs, found, empty, multi, ndec);
    /* the generator exercises both outcomes */
    ck_assert(pairs < 50 || (found > (size_t)pairs / 10 && empty > (size_t)pairs / 10));
    model_credset_free(creds);
    prover_session_free(s);
    prover_finalize();
}
END_TEST

/* The two-field witness of corpus s047, in the result and in its JSON:
 * {"graphql": {"operation_type": "query", "operation_name": ..., "fields":
 * ["search", "viewer"]}}; a REST witness has no "graphql" key. */
START_TEST(test_witness_json)
{
    static const char ep[] = "    binaries: [{path: /usr/bin/gh}]\n    endpoints:\n"
                             "      - host: api.example.com\n        port: 443\n"
                             "        path: /graphql\n        protocol: graphql\n"
                             "        enforcement: enforce\n        rules:\n"
                             "          - allow: {operation_type: query, fields: [viewer, x]}\n"
                             "          - allow: {operation_type: query, fields: [search]}\n";
    char yb[1024];
    char yc[1024];
    struct prover_session *s = prover_session_new();
    struct model_credset *creds =
        tp_creds("credentials:\n- {name: pat, type: github, scopes: [repo], target_hosts: "
                 "[api.example.com]}\n");
    struct model_policy *B;
    struct model_policy *C;
    struct prover_input in;
    struct prover_result *r;
    json_t *j;
    json_t *w;
    json_t *g;

    (void)snprintf(yb, sizeof(yb), "version: 1\nnetwork_policies:\n  g:\n%s", ep);
    (void)snprintf(yc, sizeof(yc),
                   "version: 1\nnetwork_policies:\n  g:\n%s"
                   "          - allow: {operation_type: query, fields: [viewer, search]}\n",
                   ep);
    B = tp_policy("b.yaml", yb);
    C = tp_policy("c.yaml", yc);
    memset(&in, 0, sizeof(in));
    in.baseline = B;
    in.candidate = C;
    in.creds = creds;
    in.mode = PROVER_DELTA;
    in.timeout_ms = 20000;
    r = prover_run(s, &in);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->verdict, PROVER_VERDICT_FINDINGS);
    ck_assert_uint_eq(r->npaths, 1);
    ck_assert_str_eq(r->paths[0].method, "graphql:query");
    ck_assert_str_eq(r->paths[0].w.gql_type, "query");
    ck_assert_uint_eq(r->paths[0].w.ngql_fields, 2);
    ck_assert_str_eq(r->paths[0].w.gql_fields[0], "search");
    ck_assert_str_eq(r->paths[0].w.gql_fields[1], "viewer");
    /* no rule names the operation: the witness is anonymous, not a made-up
     * name */
    ck_assert_ptr_null(r->paths[0].w.gql_name);
    j = prover_result_to_json(r);
    ck_assert_ptr_nonnull(j);
    w = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(j, "findings"), 0), "paths"),
                       0),
        "witness");
    g = json_object_get(w, "graphql");
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(json_string_value(json_object_get(g, "operation_type")), "query");
    ck_assert_uint_eq(json_array_size(json_object_get(g, "fields")), 2);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(g, "fields"), 1)), "viewer");
    ck_assert_ptr_null(json_object_get(g, "persisted_id"));
    ck_assert(json_is_null(json_object_get(g, "operation_name")));
    json_decref(j);
    prover_result_free(r);
    model_policy_free(B);
    model_policy_free(C);
    model_credset_free(creds);
    prover_session_free(s);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("prover_gql");
    TCase *tc = tcase_create("differential");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_witness_json);
    tcase_add_test(tc, test_differential);
    suite_add_tcase(su, tc);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
