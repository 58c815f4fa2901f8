/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_deny.c - adding a deny rule never grants anything
 *
 * A deny rule only takes away (docs/semantics.md#deny-wins): a policy C
 * that is a policy B plus one deny rule allows no request B denies, and
 * `proviso prove` finds nothing new in C. Random policies of one
 * credentialed endpoint (rest, websocket or graphql; an access preset or
 * explicit method and GraphQL rules; deny rules; a persisted registry) get
 * one more deny rule (a method deny rule, or a GraphQL one where the
 * protocol takes it). The oracle decides, with model_decide on B and C,
 * every request of a universe of methods (GET, POST, DELETE,
 * WEBSOCKET_TEXT), targets and operations (none; each type, name and set of
 * at most two root fields among the representatives; each persisted id);
 * the prover must answer `empty` for (B, C). PV_DENY_PAIRS sets the number
 * of pairs (200).
 *
 * The pair that found the bug is a table row of its own: a websocket
 * endpoint with `access: read-only` and a GraphQL deny rule, whose preset
 * used to expand into GraphQL allow rules once the deny rule was there
 * (issue 35 G).
 */
#include "config.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_prover_util.h"
#include "common/pv.h"
#include "model/model.h"
#include "prover/prover.h"

static const char *const F_GLOB[] = {"viewer", "v*", "*", "s*"};
static const char *const F_REP[] = {"viewer", "vx", "search", "zed"};
#define NFREP 4
static const char *const N_GLOB[] = {"A*", "B", "*"};
static const char *const N_REP[] = {NULL, "A", "B", "zz"};
#define NNREP 4
static const char *const T_RULE[] = {"query", "mutation", "subscription", "*"};
static const char *const PRESET[] = {"read-only", "read-write", "full"};
static const char *const IDS[] = {"h1", "h2", "zz"};
static const char *const METHODS[] = {"GET", "POST", "DELETE", "WEBSOCKET_TEXT"};
#define NMETH 4
static const char *const R_METHOD[] = {"GET", "POST", "DELETE", "WEBSOCKET_TEXT", "*"};
static const char *const R_PATH[] = {"/graphql", "/**", "/o*"};
static const char *const TARGETS[] = {"/graphql", "/graphql?x=ab", "/other"};
#define NTARGET 3
static const char *const PROTO[] = {"rest", "websocket", "graphql"};
enum { P_REST, P_WS, P_GQL };

static uint64_t rng = 0x2545f4914f6cdd1du;

static int rn(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (uint64_t)n);
}

struct sb {
    char s[4096];
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

/* One GraphQL rule's body (no wrapper). */
static void gql_rule(struct sb *b)
{
    add(b, "operation_type: '%s'", T_RULE[rn(4)]);
    if (rn(3) == 0) {
        add(b, ", operation_name: '%s'", N_GLOB[rn(3)]);
    }
    if (rn(2) == 0) {
        add(b, ", fields: ['%s']", F_GLOB[rn(4)]);
    }
}

/* One method rule's body (no wrapper). */
static void method_rule(struct sb *b, int proto)
{
    const char *m = R_METHOD[rn(5)];

    if (proto == P_REST && strcmp(m, "WEBSOCKET_TEXT") == 0) {
        m = "GET";
    }
    add(b, "method: '%s', path: '%s'", m, R_PATH[rn(3)]);
    if (rn(4) == 0) {
        add(b, ", query: {x: 'a*'}");
    }
}

/* One deny rule as a flow mapping, of a kind the protocol takes. */
static void deny_rule(struct sb *b, int proto)
{
    bool gql = proto == P_GQL || (proto == P_WS && rn(3) != 0);

    add(b, "{");
    if (gql) {
        gql_rule(b);
    } else {
        method_rule(b, proto);
    }
    add(b, "}");
}

struct gen {
    int proto;
    char allow[1024];
    char deny[1024]; /* flow entries, without the brackets; "" for none */
    char reg[512];
};

static void gen_allow(struct gen *g)
{
    struct sb b = {.n = 0};
    int n = 1 + rn(2);

    if (rn(3) == 0) {
        add(&b, "access: %s", PRESET[rn(3)]);
    } else {
        add(&b, "rules: [");
        for (int i = 0; i < n; i++) {
            add(&b, "%s{allow: {", i ? ", " : "");
            if (g->proto == P_GQL || (g->proto == P_WS && rn(3) == 0)) {
                gql_rule(&b);
            } else {
                method_rule(&b, g->proto);
            }
            add(&b, "}}");
        }
        add(&b, "]");
    }
    memcpy(g->allow, b.s, b.n + 1);
}

static void gen(struct gen *g)
{
    struct sb b = {.n = 0};

    memset(g, 0, sizeof(*g));
    g->proto = rn(3);
    gen_allow(g);
    if (rn(2) == 0) {
        deny_rule(&b, g->proto);
        memcpy(g->deny, b.s, b.n + 1);
    }
    if (g->proto != P_REST && rn(2) == 0) {
        b.n = 0;
        add(&b, "persisted_queries: allow_registered\n        graphql_persisted_queries: {h1: "
                "{operation_type: query, fields: [viewer]}, h2: {operation_type: mutation}}");
        memcpy(g->reg, b.s, b.n + 1);
    }
}

/* C: B with one more deny rule. */
static void add_deny(const struct gen *b, struct gen *c)
{
    struct sb s = {.n = 0};

    *c = *b;
    if (b->deny[0] != '\0') {
        add(&s, "%s, ", b->deny);
    }
    deny_rule(&s, b->proto);
    memcpy(c->deny, s.s, s.n + 1);
}

static char *emit(const struct gen *g)
{
    struct sb b = {.n = 0};
    char *out;

    add(&b,
        "version: 1\nnetwork_policies:\n  g:\n    binaries: [{path: /usr/bin/gh}]\n"
        "    endpoints:\n      - host: api.example.com\n        port: 443\n"
        "        protocol: %s\n        enforcement: enforce\n        %s\n",
        PROTO[g->proto], g->allow);
    if (g->deny[0] != '\0') {
        add(&b, "        deny_rules: [%s]\n", g->deny);
    }
    if (g->reg[0] != '\0') {
        add(&b, "        %s\n", g->reg);
    }
    out = strdup(b.s);
    ck_assert_ptr_nonnull(out);
    return out;
}

static bool decide(const struct model_policy *p, const char *method, const char *target,
                   const struct model_gql_op *op)
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
    rq.target = target;
    rq.target_len = strlen(target);
    rq.gql = op;
    model_decide(p, &rq, &d);
    return d.allow;
}

/* The operations of the universe: none, documents, persisted ids; false
 * when 'k' is past the last one. */
static bool nth_op(unsigned k, struct model_gql_op *op, char **fields, bool *none)
{
    /* field sets of one or two representatives */
    static const unsigned sets[] = {1, 2, 4, 8, 3, 5, 6, 9, 10, 12};
    const unsigned ndoc = 3 * NNREP * (unsigned)PV_ARRAY_LEN(sets);

    memset(op, 0, sizeof(*op));
    *none = k == 0;
    if (k == 0) {
        return true;
    }
    k--;
    if (k < ndoc) {
        unsigned set = sets[k % PV_ARRAY_LEN(sets)];
        op->type = (enum model_gql_optype)(k / (unsigned)PV_ARRAY_LEN(sets) / NNREP);
        op->name = (char *)(uintptr_t)N_REP[(k / PV_ARRAY_LEN(sets)) % NNREP];
        op->fields = fields;
        for (int f = 0; f < NFREP; f++) {
            if ((set >> f) & 1u) {
                fields[op->nfields++] = (char *)(uintptr_t)F_REP[f];
            }
        }
        return true;
    }
    k -= ndoc;
    if (k < PV_ARRAY_LEN(IDS)) {
        op->persisted_id = (char *)(uintptr_t)IDS[k];
        return true;
    }
    return false;
}

/* The first request C allows and B denies, as text into 'why'; false when
 * there is none. */
static bool widened(const struct model_policy *B, const struct model_policy *C, char *why, size_t n,
                    size_t *ndec)
{
    char *fields[NFREP];
    struct model_gql_op op;
    bool none;

    for (unsigned k = 0; nth_op(k, &op, fields, &none); k++) {
        for (int m = 0; m < NMETH; m++) {
            for (int t = 0; t < NTARGET; t++) {
                const struct model_gql_op *o = none ? NULL : &op;
                *ndec += 2;
                if (decide(C, METHODS[m], TARGETS[t], o) && !decide(B, METHODS[m], TARGETS[t], o)) {
                    (void)snprintf(why, n, "%s %s, operation %u", METHODS[m], TARGETS[t], k);
                    return true;
                }
            }
        }
    }
    return false;
}

/* Both the evaluator and the prover: C allows nothing B denies. */
static void check_pair(struct prover_session *s, const struct model_credset *creds, const char *yb,
                       const char *yc, size_t *ndec)
{
    struct model_policy *B = tp_policy("baseline.yaml", yb);
    struct model_policy *C = tp_policy("candidate.yaml", yc);
    struct prover_input in;
    struct prover_result *r;
    char why[128];

    ck_assert_msg(!widened(B, C, why, sizeof(why), ndec),
                  "adding a deny rule allowed %s\nB:\n%sC:\n%s", why, yb, yc);
    memset(&in, 0, sizeof(in));
    in.baseline = B;
    in.candidate = C;
    in.creds = creds;
    in.mode = PROVER_DELTA;
    in.timeout_ms = 20000;
    r = prover_run(s, &in);
    ck_assert_ptr_nonnull(r);
    ck_assert_msg(
        r->verdict == PROVER_VERDICT_EMPTY, "prover: %s (%zu paths, first %s)\nB:\n%sC:\n%s",
        r->verdict == PROVER_VERDICT_UNKNOWN ? prover_unknown_text(r->unknown) : "findings",
        r->npaths, r->npaths > 0 && r->paths[0].method ? r->paths[0].method : "-", yb, yc);
    prover_result_free(r);
    model_policy_free(B);
    model_policy_free(C);
}

static struct model_credset *creds_new(void)
{
    return tp_creds("credentials:\n- {name: pat, type: github, scopes: [repo], target_hosts: "
                    "[api.example.com]}\n");
}

/* The pairs that found the bug, and their neighbours. */
static const struct {
    const char *allow;
    const char *deny;
} fixed[] = {
    {"access: read-only", "{operation_type: mutation, fields: [deleteRepo]}"},
    {"access: read-write", "{operation_type: mutation, fields: [deleteRepo]}"},
    {"access: full", "{operation_type: '*', operation_name: 'B'}"},
    {"rules: [{allow: {method: GET, path: /graphql}}]", "{operation_type: query}"},
    {"rules: [{allow: {method: WEBSOCKET_TEXT, path: '/**'}}]", "{operation_type: mutation}"},
};

START_TEST(test_fixed)
{
    struct prover_session *s = prover_session_new();
    struct model_credset *creds = creds_new();
    struct gen b = {.proto = P_WS};
    struct gen c;
    size_t ndec = 0;

    ck_assert_ptr_nonnull(s);
    (void)snprintf(b.allow, sizeof(b.allow), "%s", fixed[_i].allow);
    c = b;
    (void)snprintf(c.deny, sizeof(c.deny), "%s", fixed[_i].deny);
    {
        char *yb = emit(&b);
        char *yc = emit(&c);
        check_pair(s, creds, yb, yc, &ndec);
        free(yb);
        free(yc);
    }
    model_credset_free(creds);
    prover_session_free(s);
    prover_finalize();
}
END_TEST

START_TEST(test_random)
{
    struct prover_session *s = prover_session_new();
    struct model_credset *creds = creds_new();
    const char *env = getenv("PV_DENY_PAIRS");
    uint64_t v = 200;
    size_t ndec = 0;
    unsigned by_proto[3] = {0, 0, 0};

    ck_assert_ptr_nonnull(s);
    if (env != NULL) {
        ck_assert(pv_ok(pv_parse_u64(env, strlen(env), 100000, &v)));
    }
    for (uint64_t i = 0; i < v; i++) {
        struct gen b;
        struct gen c;
        gen(&b);
        add_deny(&b, &c);
        char *yb = emit(&b);
        char *yc = emit(&c);
        check_pair(s, creds, yb, yc, &ndec);
        by_proto[b.proto]++;
        free(yb);
        free(yc);
    }
    fprintf(stderr,
            "deny monotonicity: %llu pairs (rest %u, websocket %u, graphql %u), %zu decisions\n",
            (unsigned long long)v, by_proto[P_REST], by_proto[P_WS], by_proto[P_GQL], ndec);
    model_credset_free(creds);
    prover_session_free(s);
    prover_finalize();
}
END_TEST

int main(void)
{
    Suite *su = suite_create("prover_deny");
    TCase *tc = tcase_create("monotone");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_fixed, 0, (int)PV_ARRAY_LEN(fixed));
    tcase_add_test(tc, test_random);
    suite_add_tcase(su, tc);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
