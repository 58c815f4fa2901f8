/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_rpc.c - the prover against the evaluator on JSON-RPC and MCP policies
 *
 * Random baseline/candidate pairs of one credentialed `json-rpc` or `mcp`
 * endpoint: call rules with exact methods, `tools/` globs, tool selectors
 * (`tool`, `params.name` with `any`), the method profile on or off, deny
 * rules and audit mode. The oracle decides, with model_decide, every call
 * the reader can produce from one member of each method and tool atom the
 * patterns can form (docs/semantics.md#rpc-read: a tool only on a
 * tools/call request or notification, the reserved rpc.* names only for
 * their kinds) under each HTTP method, and requests without a call; it
 * collects the capability keys (docs/semantics.md#findings: "rpc:METHOD"
 * through an enforced unit, the HTTP method through an audit one) of the
 * requests the candidate allows and the baseline does not. The prover must
 * report exactly those keys, and its witnesses must re-check (prover_run
 * fails as unknown otherwise). PV_RPC_PAIRS sets the number of pairs (300).
 * One more deny rule never allows anything (test_deny_added). Targeted
 * cases follow: the profile's tools/call narrowing, a deny rule on a tool,
 * a new tool on a credentialed host, the witness's call.
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

/* Method patterns of mcp rules, of json-rpc rules, tool patterns. */
static const char *const M_MCP[] = {"tools/list",     "tools/call", "tools/*",   "initialize",
                                    "resources/read", "x/ext",      "rpc.stream"};
#define NM_MCP 7
static const char *const M_JSON[] = {"*", "eth_call", "eth_send", "tools/call"};
#define NM_JSON 4
static const char *const T_PAT[] = {"search", "create_*", "*", "get.?"};
#define NT_PAT 4
/* Members of every atom: method names (messages) and tools. */
static const char *const M_REP[] = {"tools/list",     "tools/call", "tools/zz", "initialize",
                                    "resources/read", "ping",       "x/ext",    "eth_call",
                                    "eth_send",       "other/m"};
#define NM_REP 10
static const char *const T_REP[] = {"search", "create_issue", "create_", "get.a", "zed"};
#define NT_REP 5
/* Names a witness may carry as its own atom: the profile's, and the
 * literal methods the generator writes. */
static const char *const NAMED[] = {"x/ext", "eth_call", "eth_send"};
static const char *const HTTP[] = {"GET",   "HEAD",   "OPTIONS",        "POST",    "PUT",
                                   "PATCH", "DELETE", "WEBSOCKET_TEXT", "PROPFIND"};
#define NHTTP 9

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

/* One call rule as a flow mapping (allow: wrapped). */
static void gen_rule(struct sb *b, bool mcp, bool deny)
{
    add(b, "%s{", deny ? "" : "{allow: ");
    if (!mcp) {
        add(b, "method: '%s'", M_JSON[rn(NM_JSON)]);
    } else {
        switch (rn(5)) {
        case 0:
            add(b, "tool: '%s'", T_PAT[rn(NT_PAT)]);
            break;
        case 1:
            add(b, "method: tools/call, tool: '%s'", T_PAT[rn(NT_PAT)]);
            break;
        case 2:
            add(b, "params: {name: {any: ['%s', '%s']}}", T_PAT[rn(NT_PAT)], T_PAT[rn(NT_PAT)]);
            break;
        default:
            add(b, "method: '%s'", M_MCP[rn(NM_MCP)]);
            break;
        }
    }
    add(b, deny ? "}" : "}}");
}

struct gen {
    bool mcp, audit, profile;
    char rules[1024];
    char deny[1024];
};

static void gen_rules(struct gen *g)
{
    struct sb b = {.n = 0};
    int n = 1 + rn(3);

    add(&b, "rules: [");
    for (int i = 0; i < n; i++) {
        add(&b, "%s", i ? ", " : "");
        gen_rule(&b, g->mcp, false);
    }
    add(&b, "]");
    memcpy(g->rules, b.s, b.n + 1);
}

static void gen_deny(struct gen *g)
{
    struct sb b = {.n = 0};
    int n = rn(4) == 0 ? 1 + rn(2) : 0;

    for (int i = 0; i < n; i++) {
        add(&b, "%s", i ? ", " : "deny_rules: [");
        gen_rule(&b, g->mcp, true);
    }
    if (n > 0) {
        add(&b, "]");
    }
    memcpy(g->deny, b.s, b.n + 1);
}

static char *emit(const struct gen *g)
{
    struct sb b = {.n = 0};
    char *out;

    add(&b,
        "version: 1\nnetwork_policies:\n  m:\n    binaries: [{path: /usr/bin/agent}]\n"
        "    endpoints:\n      - host: mcp.example.com\n        port: 443\n"
        "        protocol: %s\n        enforcement: %s\n        %s\n",
        g->mcp ? "mcp" : "json-rpc", g->audit ? "audit" : "enforce", g->rules);
    if (g->deny[0] != '\0') {
        add(&b, "        %s\n", g->deny);
    }
    if (g->mcp && g->profile) {
        add(&b, "        mcp: {allow_all_known_mcp_methods: true}\n");
    }
    if (getenv("PV_RPC_DEBUG") != NULL) {
        fputs(b.s, stderr);
    }
    out = strdup(b.s);
    ck_assert_ptr_nonnull(out);
    return out;
}

/* A policy, or NULL when the generator wrote one validation refuses. */
static struct model_policy *try_policy(const char *name, const char *text)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    ck_assert_ptr_nonnull(d);
    p = model_policy_load(name, text, strlen(text), MODEL_FMT_AUTO, d);
    if (p == NULL && getenv("PV_RPC_DEBUG") != NULL) {
        for (size_t i = 0; i < model_diags_count(d); i++) {
            fprintf(stderr, "%s\n", model_diags_line(d, i));
        }
    }
    model_diags_free(d);
    return p;
}

static bool decide(const struct model_policy *p, const char *method,
                   const struct model_rpc_call *call)
{
    const char *bins[1] = {"/usr/bin/agent"};
    struct model_request rq;
    struct model_decision d;

    memset(&rq, 0, sizeof(rq));
    rq.binaries = bins;
    rq.nbinaries = 1;
    rq.host = "mcp.example.com";
    rq.host_len = strlen(rq.host);
    rq.port = 443;
    rq.method = method;
    rq.target = "/mcp";
    rq.target_len = 4;
    rq.rpc = call;
    model_decide(p, &rq, &d);
    return d.allow;
}

/* The keys found, as a list of names (fixed capacity). */
struct keys {
    char k[64][64];
    size_t n;
};

static void key_add(struct keys *ks, const char *k)
{
    for (size_t i = 0; i < ks->n; i++) {
        if (strcmp(ks->k[i], k) == 0) {
            return;
        }
    }
    ck_assert_uint_lt(ks->n, 64);
    (void)snprintf(ks->k[ks->n++], sizeof(ks->k[0]), "%s", k);
}

static bool keys_eq(const struct keys *a, const struct keys *b)
{
    if (a->n != b->n) {
        return false;
    }
    for (size_t i = 0; i < a->n; i++) {
        bool in = false;
        for (size_t j = 0; j < b->n && !in; j++) {
            in = strcmp(a->k[i], b->k[j]) == 0;
        }
        if (!in) {
            return false;
        }
    }
    return true;
}

static void keys_print(const char *what, const struct keys *ks)
{
    fprintf(stderr, "%s:", what);
    for (size_t i = 0; i < ks->n; i++) {
        fprintf(stderr, " %s", ks->k[i]);
    }
    fprintf(stderr, "\n");
}

/* The key a call method reads as: a name with an atom of its own (the
 * profile's, tools/call, a literal the policies write), else "other". */
static void rpc_key(char *out, size_t len, const char *m, const char *yb, const char *yc)
{
    bool named = model_rpc_mcp_known(m);

    for (size_t i = 0; i < PV_ARRAY_LEN(NAMED) && !named; i++) {
        char q[64];

        (void)snprintf(q, sizeof(q), "'%s'", NAMED[i]);
        named = strcmp(m, NAMED[i]) == 0 && (strstr(yb, q) != NULL || strstr(yc, q) != NULL);
    }
    (void)snprintf(out, len, "rpc:%s", named ? m : "other");
}

static void oracle_one(const struct model_policy *B, const struct model_policy *C, bool audit,
                       const char *http, const struct model_rpc_call *k, const char *yb,
                       const char *yc, struct keys *ks, size_t *ndec)
{
    char key[96];

    *ndec += 2;
    if (!decide(C, http, k) || decide(B, http, k)) {
        return;
    }
    if (audit || k == NULL) {
        /* through an audit unit (or for a request without a call) the key
         * is the HTTP method */
        key_add(ks, http);
        return;
    }
    rpc_key(key, sizeof(key), k->method, yb, yc);
    key_add(ks, key);
}

static void oracle(const struct model_policy *B, const struct model_policy *C, bool mcp, bool audit,
                   const char *yb, const char *yc, struct keys *ks, size_t *ndec)
{
    static const char *const reserved[] = {MODEL_RPC_M_RESPONSE, MODEL_RPC_M_STREAM,
                                           MODEL_RPC_M_END};
    static const enum model_rpc_kind rkind[] = {MODEL_RPC_RESPONSE, MODEL_RPC_STREAM,
                                                MODEL_RPC_END};
    struct model_rpc_call k;

    for (int h = 0; h < NHTTP; h++) {
        oracle_one(B, C, audit, HTTP[h], NULL, yb, yc, ks, ndec);
        for (int r = 0; r < 3; r++) {
            memset(&k, 0, sizeof(k));
            k.kind = rkind[r];
            k.method = reserved[r];
            oracle_one(B, C, audit, HTTP[h], &k, yb, yc, ks, ndec);
        }
        for (int kind = 0; kind < 2; kind++) {
            /* the representatives, then every method of the profile */
            for (size_t m = 0; m < NM_REP || model_rpc_mcp_known_at(m - NM_REP) != NULL; m++) {
                const char *name = m < NM_REP ? M_REP[m] : model_rpc_mcp_known_at(m - NM_REP);
                bool tc = strcmp(name, "tools/call") == 0;

                if (strncmp(name, "rpc.", 4) == 0) {
                    continue; /* no message names one (the reserved calls above) */
                }
                /* on mcp a tools/call names its tool (docs/semantics.md#rpc-read) */
                for (int t = tc && mcp ? 0 : -1; t < (tc ? NT_REP : 0); t++) {
                    memset(&k, 0, sizeof(k));
                    k.kind = kind ? MODEL_RPC_NOTIFICATION : MODEL_RPC_REQUEST;
                    k.method = name;
                    k.tool = t >= 0 ? T_REP[t] : NULL;
                    oracle_one(B, C, audit, HTTP[h], &k, yb, yc, ks, ndec);
                }
            }
        }
    }
}

static void prover_keys(const struct prover_result *r, const char *yb, const char *yc,
                        struct keys *ks)
{
    for (size_t i = 0; i < r->npaths; i++) {
        const struct prover_path *p = &r->paths[i];
        char key[96];

        ck_assert_int_eq(p->cat, PROVER_CAT_CAPABILITY);
        ck_assert_ptr_nonnull(p->method);
        if (strncmp(p->method, "rpc:", 4) == 0) {
            /* the witness carries the call its key names */
            ck_assert_ptr_nonnull(p->w.rpc_method);
            ck_assert_str_eq(p->method + 4, p->w.rpc_method);
            rpc_key(key, sizeof(key), p->method + 4, yb, yc);
            key_add(ks, key);
        } else {
            key_add(ks, p->method);
        }
    }
}

static void gen_pair(struct gen *gb, struct gen *gc)
{
    memset(gb, 0, sizeof(*gb));
    gb->mcp = rn(4) != 0;
    gb->audit = rn(10) == 0;
    gb->profile = gb->mcp && rn(3) == 0;
    gen_rules(gb);
    gen_deny(gb);
    *gc = *gb;
    switch (rn(6)) {
    case 0:
        gen_rules(gc); /* fresh rules */
        gen_deny(gc);
        break;
    case 1:
        gc->profile = gc->mcp && !gc->profile;
        break;
    case 2:
        gc->audit = rn(3) == 0 ? !gc->audit : gc->audit;
        gen_deny(gc);
        break;
    default: {
        /* one more allow rule */
        struct sb b = {.n = 0};
        add(&b, "%.*s, ", (int)strlen(gc->rules) - 1, gc->rules);
        gen_rule(&b, gc->mcp, false);
        add(&b, "]");
        memcpy(gc->rules, b.s, b.n + 1);
    }
    }
}

START_TEST(test_differential)
{
    struct prover_session *s = prover_session_new();
    struct model_credset *creds =
        tp_creds("credentials:\n- {name: pat, type: github, scopes: [repo], target_hosts: "
                 "[mcp.example.com]}\n");
    const char *env = getenv("PV_RPC_PAIRS");
    uint64_t v = 300;
    int pairs;
    size_t found = 0, empty = 0, ndec = 0, skipped = 0;

    ck_assert_ptr_nonnull(s);
    if (env != NULL) {
        ck_assert(pv_ok(pv_parse_u64(env, strlen(env), 100000, &v)));
    }
    pairs = (int)v;
    for (int i = 0; i < pairs; i++) {
        struct gen gb, gc;
        char *yb, *yc;
        struct model_policy *B, *C;
        struct prover_input in;
        struct prover_result *r;
        struct keys want = {.n = 0};
        struct keys got = {.n = 0};

        gen_pair(&gb, &gc);
        yb = emit(&gb);
        yc = emit(&gc);
        B = try_policy("baseline.yaml", yb);
        C = try_policy("candidate.yaml", yc);
        if (B == NULL || C == NULL) {
            skipped++;
            model_policy_free(B);
            model_policy_free(C);
            free(yb);
            free(yc);
            continue;
        }
        oracle(B, C, gc.mcp, gc.audit, yb, yc, &want, &ndec);
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
        prover_keys(r, yb, yc, &got);
        if (!keys_eq(&got, &want)) {
            keys_print("prover", &got);
            keys_print("oracle", &want);
        }
        ck_assert_msg(keys_eq(&got, &want), "keys differ\nB:\n%sC:\n%s", yb, yc);
        found += want.n != 0;
        empty += want.n == 0;
        prover_result_free(r);
        model_policy_free(B);
        model_policy_free(C);
        free(yb);
        free(yc);
    }
    fprintf(stderr,
            "rpc differential: %d pairs, %zu with findings, %zu empty, %zu skipped (invalid), "
            "%zu oracle decisions\n",
            pairs, found, empty, skipped, ndec);
    ck_assert(skipped * 4 < (size_t)pairs + 4);
    ck_assert(pairs < 50 || (found > (size_t)pairs / 10 && empty > (size_t)pairs / 10));
    model_credset_free(creds);
    prover_session_free(s);
    prover_finalize();
}
END_TEST

/* One more deny rule only takes away (docs/semantics.md#rpc-deny): the
 * oracle finds nothing new and the prover answers `empty`. */
START_TEST(test_deny_added)
{
    struct prover_session *s = prover_session_new();
    struct model_credset *creds =
        tp_creds("credentials:\n- {name: pat, type: github, scopes: [repo], target_hosts: "
                 "[mcp.example.com]}\n");
    size_t ndec = 0;
    size_t ran = 0;

    ck_assert_ptr_nonnull(s);
    for (int i = 0; i < 150; i++) {
        struct gen gb, gc;
        struct sb b = {.n = 0};
        char *yb, *yc;
        struct model_policy *B, *C;
        struct prover_input in;
        struct prover_result *r;
        struct keys want = {.n = 0};

        gen_pair(&gb, &gc);
        gb.audit = false;
        gc = gb;
        add(&b, "%s", gb.deny[0] != '\0' ? "" : "deny_rules: [");
        if (gb.deny[0] != '\0') {
            add(&b, "%.*s, ", (int)strlen(gb.deny) - 1, gb.deny);
        }
        gen_rule(&b, gc.mcp, true);
        add(&b, "]");
        memcpy(gc.deny, b.s, b.n + 1);
        yb = emit(&gb);
        yc = emit(&gc);
        B = try_policy("baseline.yaml", yb);
        C = try_policy("candidate.yaml", yc);
        if (B != NULL && C != NULL) {
            oracle(B, C, gc.mcp, false, yb, yc, &want, &ndec);
            ck_assert_msg(want.n == 0, "a deny rule allowed something\nB:\n%sC:\n%s", yb, yc);
            memset(&in, 0, sizeof(in));
            in.baseline = B;
            in.candidate = C;
            in.creds = creds;
            in.mode = PROVER_DELTA;
            in.timeout_ms = 20000;
            r = prover_run(s, &in);
            ck_assert_ptr_nonnull(r);
            ck_assert_msg(r->verdict == PROVER_VERDICT_EMPTY, "not empty\nB:\n%sC:\n%s", yb, yc);
            prover_result_free(r);
            ran++;
        }
        model_policy_free(B);
        model_policy_free(C);
        free(yb);
        free(yc);
    }
    ck_assert_uint_gt(ran, 100);
    model_credset_free(creds);
    prover_session_free(s);
    prover_finalize(); /* Z3's pools, for memcheck in one process (CK_FORK=no) */
}
END_TEST

/* ---------------------------------------------------------------------------
 * Targeted cases
 * ------------------------------------------------------------------------- */

static struct prover_result *prove(const char *eb, const char *ec, struct model_policy **B,
                                   struct model_policy **C, struct model_credset *creds,
                                   struct prover_session *s)
{
    char yb[2048];
    char yc[2048];
    static const char head[] =
        "version: 1\nnetwork_policies:\n  m:\n    binaries: [{path: /usr/bin/agent}]\n"
        "    endpoints:\n      - host: mcp.example.com\n        port: 443\n"
        "        protocol: mcp\n        enforcement: enforce\n";
    struct prover_input in;

    (void)snprintf(yb, sizeof(yb), "%s%s", head, eb);
    (void)snprintf(yc, sizeof(yc), "%s%s", head, ec);
    *B = tp_policy("b.yaml", yb);
    *C = tp_policy("c.yaml", yc);
    memset(&in, 0, sizeof(in));
    in.baseline = *B;
    in.candidate = *C;
    in.creds = creds;
    in.mode = PROVER_DELTA;
    in.timeout_ms = 20000;
    return prover_run(s, &in);
}

struct tcase_row {
    const char *name;
    const char *base;
    const char *cand;
    const char *key;  /* the one capability key, NULL = verdict empty */
    const char *tool; /* the witness's tool, NULL = none (or no finding) */
};

static const struct tcase_row rows[] = {
    /* a new tool on a credentialed host is capability_expansion */
    {"new tool", "        rules: [{allow: {method: tools/call, tool: search}}]\n",
     "        rules: [{allow: {method: tools/call, tool: search}}, {allow: {method: tools/call, "
     "tool: create_issue}}]\n",
     "rpc:tools/call", "create_issue"},
    /* the profile grants tools/call with any tool, until a rule narrows it */
    {"profile narrowed",
     "        rules: [{allow: {method: tools/call, tool: search}}]\n"
     "        mcp: {allow_all_known_mcp_methods: true}\n",
     "        rules: [{allow: {method: initialize}}]\n"
     "        mcp: {allow_all_known_mcp_methods: true}\n",
     "rpc:tools/call", NULL},
    /* a deny rule on a tool that goes away */
    {"deny on tool lifted",
     "        rules: [{allow: {method: tools/call, tool: '*'}}]\n"
     "        deny_rules: [{tool: delete_repo}]\n",
     "        rules: [{allow: {method: tools/call, tool: '*'}}]\n", "rpc:tools/call",
     "delete_repo"},
    /* a deny rule added takes away only */
    {"deny on tool added (negative)", "        rules: [{allow: {method: tools/call, tool: '*'}}]\n",
     "        rules: [{allow: {method: tools/call, tool: '*'}}]\n        deny_rules: [{tool: "
     "delete_repo}]\n",
     NULL, NULL},
    /* the same rules, reordered: nothing new (negative) */
    {"reordered (negative)",
     "        rules: [{allow: {method: tools/call, tool: a}}, {allow: {method: ping}}]\n",
     "        rules: [{allow: {method: ping}}, {allow: {method: tools/call, tool: a}}]\n", NULL,
     NULL},
    /* a method outside the profile needs its own rule */
    {"extension method",
     "        rules: [{allow: {method: ping}}]\n"
     "        mcp: {allow_all_known_mcp_methods: true}\n",
     "        rules: [{allow: {method: ping}}, {allow: {method: x/ext}}]\n"
     "        mcp: {allow_all_known_mcp_methods: true}\n",
     "rpc:x/ext", NULL},
};

START_TEST(test_targeted)
{
    const struct tcase_row *t = &rows[_i];
    struct prover_session *s = prover_session_new();
    struct model_credset *creds =
        tp_creds("credentials:\n- {name: pat, type: github, scopes: [repo], target_hosts: "
                 "[mcp.example.com]}\n");
    struct model_policy *B;
    struct model_policy *C;
    struct prover_result *r = prove(t->base, t->cand, &B, &C, creds, s);

    ck_assert_ptr_nonnull(r);
    if (t->key == NULL) {
        ck_assert_msg(r->verdict == PROVER_VERDICT_EMPTY, "%s: not empty", t->name);
    } else {
        char *text;
        char want[128];

        ck_assert_msg(r->verdict == PROVER_VERDICT_FINDINGS, "%s: no finding", t->name);
        ck_assert_uint_eq(r->npaths, 1);
        ck_assert_int_eq(r->paths[0].cat, PROVER_CAT_CAPABILITY);
        ck_assert_str_eq(r->paths[0].method, t->key);
        ck_assert_str_eq(r->paths[0].w.rpc_method, t->key + 4);
        if (t->tool != NULL) {
            ck_assert_ptr_nonnull(r->paths[0].w.rpc_tool);
            ck_assert_str_eq(r->paths[0].w.rpc_tool, t->tool);
            /* the text a reviewer reads names the method and the tool */
            text = prover_result_text(r);
            (void)snprintf(want, sizeof(want), "call: POST %s %s %s (", r->paths[0].w.path,
                           t->key + 4, t->tool);
            ck_assert_msg(text != NULL && strstr(text, want) != NULL, "%s: text lacks '%s':\n%s",
                          t->name, want, text ? text : "");
            free(text);
        }
    }
    prover_result_free(r);
    model_policy_free(B);
    model_policy_free(C);
    model_credset_free(creds);
    prover_session_free(s);
    prover_finalize();
}
END_TEST

int main(void)
{
    Suite *su = suite_create("prover_rpc");
    TCase *tc = tcase_create("differential");
    TCase *tt = tcase_create("targeted");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 600);
    tcase_set_timeout(tt, 120);
    tcase_add_loop_test(tt, test_targeted, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_differential);
    tcase_add_test(tc, test_deny_added);
    suite_add_tcase(su, tt);
    suite_add_tcase(su, tc);
    sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
