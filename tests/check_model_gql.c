/* SPDX-License-Identifier: Apache-2.0 */
/* check_model_gql.c - the evaluator on GraphQL operations
 *
 * Each row decides one request under one of the policies below and checks
 * the answer and its reason against docs/semantics.md#graphql: allow and
 * deny rules, presets, anonymous operations, persisted queries, the path
 * scope, GraphQL over WebSocket and adversarial names.
 *
 * An operation is written "TYPE NAME FIELD,FIELD" (NAME "-" = anonymous,
 * FIELDS "-" = none) or "#ID" for a hash-only persisted query; NULL = the
 * request carries no operation.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_graphql.h"
#include "model/model_int.h"

/* 0: graphql endpoint with rules, deny rules, a registry; REST beside it */
static const char pol_rules[] =
    "version: 1\n"
    "network_policies:\n"
    "  gh:\n"
    "    endpoints:\n"
    "      - host: api.github.com\n"
    "        port: 443\n"
    "        path: /graphql\n"
    "        protocol: graphql\n"
    "        enforcement: enforce\n"
    "        persisted_queries: allow_registered\n"
    "        graphql_persisted_queries:\n"
    "          abc: {operation_type: query, fields: [viewer]}\n"
    "          def: {operation_type: mutation, operation_name: Other, fields: [createIssue]}\n"
    "          nof: {operation_type: query}\n"
    "          del: {operation_type: mutation, operation_name: IssueDel,"
    " fields: [deleteRepository]}\n"
    "          sub: {operation_type: subscription, operation_name: Tick}\n"
    "        rules:\n"
    "          - allow: {operation_type: query, fields: [viewer, repository]}\n"
    "          - allow: {operation_type: mutation, operation_name: 'Issue*',"
    " fields: [createIssue, deleteRepository]}\n"
    "          - allow: {operation_type: subscription, operation_name: '*'}\n"
    "          - allow: {operation_type: query, operation_name: Glob, fields: ['[v]*', '__*']}\n"
    "        deny_rules:\n"
    "          - {operation_type: mutation, fields: [deleteRepository]}\n"
    "          - {operation_type: query, operation_name: 'Admin*'}\n"
    "      - host: api.github.com\n"
    "        port: 443\n"
    "        path: /repos/**\n"
    "        protocol: rest\n"
    "        enforcement: enforce\n"
    "        access: read-only\n"
    "    binaries:\n"
    "      - path: /usr/bin/gh\n";

/* 1..3: presets; 1 also has the default persisted_queries (deny) */
#define POL_PRESET(ACCESS, EXTRA)                          \
    "version: 1\n"                                         \
    "network_policies:\n"                                  \
    "  gq:\n"                                              \
    "    endpoints:\n"                                     \
    "      - host: gql.example.com\n"                      \
    "        port: 443\n"                                  \
    "        protocol: graphql\n"                          \
    "        enforcement: enforce\n"                       \
    "        access: " ACCESS "\n" EXTRA "    binaries:\n" \
    "      - path: /usr/bin/gh\n"

static const char pol_ro[] = POL_PRESET("read-only", "        graphql_persisted_queries:\n"
                                                     "          abc: {operation_type: query}\n");
static const char pol_rw[] = POL_PRESET("read-write", "");
static const char pol_full[] =
    POL_PRESET("full", "        deny_rules:\n"
                       "          - {operation_type: mutation, operation_name: 'Admin*'}\n"
                       "          - {operation_type: '*', fields: ['__schema']}\n");

/* 4: websocket with GraphQL rules; 5: websocket preset with a GraphQL deny rule */
static const char pol_ws[] =
    "version: 1\n"
    "network_policies:\n"
    "  ws:\n"
    "    endpoints:\n"
    "      - host: rt.example.com\n"
    "        port: 443\n"
    "        protocol: websocket\n"
    "        enforcement: enforce\n"
    "        rules:\n"
    "          - allow: {method: GET, path: /graphql}\n"
    "          - allow: {operation_type: subscription, fields: [messageAdded]}\n"
    "          - allow: {operation_type: query, fields: [viewer]}\n"
    "        deny_rules:\n"
    "          - {method: WEBSOCKET_TEXT, path: /admin/**}\n"
    "    binaries:\n"
    "      - path: /usr/bin/node\n";
static const char pol_ws_preset[] = "version: 1\n"
                                    "network_policies:\n"
                                    "  ws:\n"
                                    "    endpoints:\n"
                                    "      - host: rt.example.com\n"
                                    "        port: 443\n"
                                    "        protocol: websocket\n"
                                    "        enforcement: enforce\n"
                                    "        access: read-write\n"
                                    "        deny_rules:\n"
                                    "          - {operation_type: mutation, fields: ['drop*']}\n"
                                    "    binaries:\n"
                                    "      - path: /usr/bin/node\n";

static const char *const policies[] = {pol_rules, pol_ro, pol_rw, pol_full, pol_ws, pol_ws_preset};

struct grow {
    const char *name;
    int pol;
    const char *method;
    const char *target;
    const char *op; /* see the file comment */
    int allow;
    enum model_reason reason;
    const char *detail; /* substring, or NULL */
};

#define GH "api.github.com"
#define A MODEL_REASON_ALLOWED
#define NP MODEL_REASON_L7_NOT_PERMITTED
#define DR MODEL_REASON_L7_DENY_RULE

static const struct grow rows[] = {
    /* allow rules: type, fields all covered by ONE rule */
    {"query viewer", 0, "POST", "/graphql", "query - viewer", 1, A, NULL},
    {"query two fields one rule", 0, "POST", "/graphql", "query Q repository,viewer", 1, A, NULL},
    {"query field outside", 0, "POST", "/graphql", "query Q viewer,search", 0, NP,
     "GraphQL query Q {viewer,search} not permitted"},
    {"fields of two rules never combine", 0, "POST", "/graphql", "query Glob repository,vx", 0, NP,
     NULL},
    {"mutation name glob", 0, "POST", "/graphql", "mutation IssueCreate createIssue", 1, A, NULL},
    {"mutation glob matches prefix alone", 0, "POST", "/graphql", "mutation Issue createIssue", 1,
     A, NULL},
    {"mutation wrong name", 0, "POST", "/graphql", "mutation CreateIssue createIssue", 0, NP, NULL},
    {"mutation name case-sensitive", 0, "POST", "/graphql", "mutation issueCreate createIssue", 0,
     NP, NULL},
    {"anonymous mutation vs named rule", 0, "POST", "/graphql", "mutation - createIssue", 0, NP,
     "(anonymous)"},
    {"anonymous subscription vs name '*'", 0, "POST", "/graphql", "subscription - tick", 0, NP,
     NULL},
    {"named subscription any field", 0, "POST", "/graphql", "subscription S tick,tock", 1, A, NULL},
    {"field glob class", 0, "POST", "/graphql", "query Glob vx,__typename", 1, A, NULL},
    {"__typename needs a rule", 0, "POST", "/graphql", "query - viewer,__typename", 0, NP, NULL},
    {"glob-looking field is a name", 0, "POST", "/graphql", "query Glob x", 0, NP, NULL},
    /* deny rules: ANY field; no fields = every operation of that type/name */
    {"deny any field", 0, "POST", "/graphql", "mutation IssueDel createIssue,deleteRepository", 0,
     DR, "blocked by deny rule"},
    {"deny by name", 0, "POST", "/graphql", "query AdminViewer viewer", 0, DR, NULL},
    {"deny name not anonymous", 0, "POST", "/graphql", "query - viewer", 1, A, NULL},
    /* not an operation, methods */
    {"no operation", 0, "POST", "/graphql", NULL, 0, MODEL_REASON_GQL_NO_OPERATION,
     "is not a GraphQL operation"},
    {"GET query", 0, "GET", "/graphql?query=x", "query - viewer", 1, A, NULL},
    {"GET mutation", 0, "GET", "/graphql", "mutation IssueA createIssue", 0,
     MODEL_REASON_GQL_BAD_METHOD, "sent with GET"},
    {"PUT", 0, "PUT", "/graphql", "query - viewer", 0, MODEL_REASON_GQL_BAD_METHOD, NULL},
    {"HEAD", 0, "HEAD", "/graphql", "query - viewer", 0, MODEL_REASON_GQL_BAD_METHOD, NULL},
    /* path scope: REST beside GraphQL on one host */
    {"rest GET", 0, "GET", "/repos/o/r", NULL, 1, A, NULL},
    {"rest ignores op", 0, "POST", "/repos/o/r", "query - viewer", 0, NP, NULL},
    {"outside scopes", 0, "POST", "/graphql2", "query - viewer", 0, MODEL_REASON_NO_L7_PATH, NULL},
    {"scope subpath", 0, "POST", "/graphql/x", "query - viewer", 0, MODEL_REASON_NO_L7_PATH, NULL},
    /* persisted */
    {"persisted known", 0, "POST", "/graphql", "#abc", 1, A, NULL},
    {"persisted GET query", 0, "GET", "/graphql?extensions=x", "#abc", 1, A, NULL},
    {"persisted mutation GET", 0, "GET", "/graphql", "#def", 0, MODEL_REASON_GQL_BAD_METHOD, NULL},
    {"persisted name mismatch", 0, "POST", "/graphql", "#def", 0, NP, NULL},
    {"persisted denied field", 0, "POST", "/graphql", "#del", 0, DR, NULL},
    {"persisted without fields vs field rule", 0, "POST", "/graphql", "#nof", 0, NP, NULL},
    {"persisted without fields vs no-fields rule", 0, "POST", "/graphql", "#sub", 1, A, NULL},
    {"persisted unknown", 0, "POST", "/graphql", "#zzz", 0, MODEL_REASON_GQL_PERSISTED_UNKNOWN,
     "'zzz' is not in graphql_persisted_queries"},
    {"persisted id case", 0, "POST", "/graphql", "#ABC", 0, MODEL_REASON_GQL_PERSISTED_UNKNOWN,
     NULL},
    {"persisted default deny", 1, "POST", "/", "#abc", 0, MODEL_REASON_GQL_PERSISTED_DENIED, NULL},
    /* adversarial operations */
    {"empty name", 0, "POST", "/graphql", "query \"\" viewer", 0, MODEL_REASON_GQL_BAD_OPERATION,
     NULL},
    {"field with a dot", 0, "POST", "/graphql", "query - viewer,a.b", 0,
     MODEL_REASON_GQL_BAD_OPERATION, NULL},
    {"field named like a glob", 0, "POST", "/graphql", "query Glob *", 0,
     MODEL_REASON_GQL_BAD_OPERATION, NULL},
    {"no fields", 0, "POST", "/graphql", "query - -", 0, MODEL_REASON_GQL_BAD_OPERATION, NULL},
    {"empty persisted id", 0, "POST", "/graphql", "#", 0, MODEL_REASON_GQL_BAD_OPERATION, NULL},
    {"digit-led name", 0, "POST", "/graphql", "query 1Q viewer", 0, MODEL_REASON_GQL_BAD_OPERATION,
     NULL},
    /* presets */
    {"ro query", 1, "POST", "/", "query - anything", 1, A, NULL},
    {"ro mutation", 1, "POST", "/", "mutation M x", 0, NP, NULL},
    {"ro subscription", 1, "POST", "/any/path", "subscription - x", 0, NP, NULL},
    {"rw mutation", 2, "POST", "/", "mutation - x", 1, A, NULL},
    {"rw subscription", 2, "POST", "/", "subscription S x", 0, NP, NULL},
    {"rw no operation", 2, "GET", "/", NULL, 0, MODEL_REASON_GQL_NO_OPERATION, NULL},
    {"full subscription", 3, "POST", "/", "subscription S x", 1, A, NULL},
    {"full deny name", 3, "POST", "/", "mutation AdminDrop x", 0, DR, NULL},
    {"full deny __schema any type", 3, "POST", "/", "query - a,__schema", 0, DR, NULL},
    {"full anonymous mutation", 3, "POST", "/", "mutation - x", 1, A, NULL},
    /* websocket */
    {"ws upgrade", 4, "GET", "/graphql", NULL, 1, A, NULL},
    {"ws upgrade elsewhere", 4, "GET", "/other", NULL, 0, NP, NULL},
    {"ws plain text", 4, "WEBSOCKET_TEXT", "/graphql", NULL, 0, NP, NULL},
    {"ws subscription", 4, "WEBSOCKET_TEXT", "/graphql", "subscription S messageAdded", 1, A, NULL},
    {"ws subscription other field", 4, "WEBSOCKET_TEXT", "/graphql", "subscription S x", 0, NP,
     "GraphQL subscription S {x}"},
    {"ws mutation", 4, "WEBSOCKET_TEXT", "/graphql", "mutation M viewer", 0, NP, NULL},
    {"ws method deny on op", 4, "WEBSOCKET_TEXT", "/admin/x", "query - viewer", 0, DR, NULL},
    {"ws op does not need GET rule", 4, "WEBSOCKET_TEXT", "/other", "query - viewer", 1, A, NULL},
    {"ws op needs WEBSOCKET_TEXT", 4, "GET", "/graphql", "query - viewer", 0,
     MODEL_REASON_GQL_BAD_METHOD, NULL},
    {"ws preset upgrade", 5, "GET", "/", NULL, 1, A, NULL},
    {"ws preset text", 5, "WEBSOCKET_TEXT", "/", NULL, 1, A, NULL},
    {"ws preset op query", 5, "WEBSOCKET_TEXT", "/", "query - x", 1, A, NULL},
    {"ws preset op mutation", 5, "WEBSOCKET_TEXT", "/", "mutation - x", 1, A, NULL},
    /* read-write grants every text message; a GraphQL deny rule only takes
     * away (docs/semantics.md#graphql-ws-rules) */
    {"ws preset op subscription", 5, "WEBSOCKET_TEXT", "/", "subscription - x", 1, A, NULL},
    {"ws preset deny", 5, "WEBSOCKET_TEXT", "/", "mutation - x,dropAll", 0, DR, NULL},
    {"ws persisted default deny", 5, "WEBSOCKET_TEXT", "/", "#abc", 0,
     MODEL_REASON_GQL_PERSISTED_DENIED, NULL},
};

static const char *host_of(int pol)
{
    switch (pol) {
    case 0:
        return GH;
    case 4:
    case 5:
        return "rt.example.com";
    default:
        return "gql.example.com";
    }
}

static const char *bin_of(int pol)
{
    return pol >= 4 ? "/usr/bin/node" : "/usr/bin/gh";
}

/* Parse an operation spec into 'op' (strings owned by 'store'). */
static void op_parse(const char *spec, struct model_gql_op *op, char *store, size_t cap,
                     char **fields, size_t maxf)
{
    char *tok[3] = {NULL, NULL, NULL};
    size_t n = 0;
    char *save = NULL;

    memset(op, 0, sizeof(*op));
    ck_assert_uint_lt(strlen(spec), cap);
    memcpy(store, spec, strlen(spec) + 1);
    if (store[0] == '#') {
        op->persisted_id = store + 1;
        return;
    }
    for (char *t = strtok_r(store, " ", &save); t != NULL && n < 3;
         t = strtok_r(NULL, " ", &save)) {
        tok[n++] = t;
    }
    ck_assert_uint_eq(n, 3);
    if (strcmp(tok[0], "query") == 0) {
        op->type = MODEL_GQL_QUERY;
    } else if (strcmp(tok[0], "mutation") == 0) {
        op->type = MODEL_GQL_MUTATION;
    } else {
        ck_assert_str_eq(tok[0], "subscription");
        op->type = MODEL_GQL_SUBSCRIPTION;
    }
    if (strcmp(tok[1], "\"\"") == 0) {
        op->name = tok[1] + 2; /* the empty string */
    } else if (strcmp(tok[1], "-") != 0) {
        op->name = tok[1];
    }
    op->fields = fields;
    if (strcmp(tok[2], "-") == 0) {
        return;
    }
    save = NULL;
    for (char *f = strtok_r(tok[2], ",", &save); f != NULL; f = strtok_r(NULL, ",", &save)) {
        ck_assert_uint_lt(op->nfields, maxf);
        fields[op->nfields++] = f;
    }
}

static struct model_policy *load(const char *yaml)
{
    struct model_diags *d = model_diags_new();
    struct model_policy *p;

    ck_assert_ptr_nonnull(d);
    p = model_policy_load("test.yaml", yaml, strlen(yaml), MODEL_FMT_YAML, d);
    for (size_t i = 0; p == NULL && i < model_diags_count(d); i++) {
        fprintf(stderr, "%s\n", model_diags_line(d, i));
    }
    model_diags_free(d);
    ck_assert_ptr_nonnull(p);
    return p;
}

START_TEST(test_gql_rows)
{
    const struct grow *r = &rows[_i];
    struct model_policy *p = load(policies[r->pol]);
    const char *bins[1] = {bin_of(r->pol)};
    struct model_request req;
    struct model_decision out;
    struct model_gql_op op;
    char store[256];
    char *fields[16];

    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = host_of(r->pol);
    req.host_len = strlen(req.host);
    req.port = 443;
    req.method = r->method;
    req.target = r->target;
    req.target_len = strlen(r->target);
    if (r->op != NULL) {
        op_parse(r->op, &op, store, sizeof(store), fields, 16);
        req.gql = &op;
    }
    memset(&out, 0x5a, sizeof(out));
    model_decide(p, &req, &out);
    ck_assert_msg(out.allow == (r->allow != 0), "%s: allow %d (%s: %s)", r->name, out.allow,
                  model_reason_name(out.reason), out.detail);
    ck_assert_msg(out.reason == r->reason, "%s: reason %s, want %s (%s)", r->name,
                  model_reason_name(out.reason), model_reason_name(r->reason), out.detail);
    if (r->detail != NULL) {
        ck_assert_msg(strstr(out.detail, r->detail) != NULL, "%s: detail '%s' lacks '%s'", r->name,
                      out.detail, r->detail);
    }
    model_policy_free(p);
}
END_TEST

/* The same request without an operation is decided as before the GraphQL
 * dimensions existed: a REST policy ignores req.gql entirely. */
START_TEST(test_rest_ignores_gql)
{
    struct model_policy *p =
        load("version: 1\n"
             "network_policies:\n"
             "  r:\n"
             "    endpoints:\n"
             "      - {host: api.example.com, port: 443, protocol: rest, enforcement: enforce,\n"
             "         rules: [{allow: {method: POST, path: /graphql}}]}\n"
             "    binaries: [{path: /usr/bin/gh}]\n");
    const char *bins[1] = {"/usr/bin/gh"};
    char *f[1] = {(char *)(uintptr_t) "deleteRepository"};
    struct model_gql_op op = {MODEL_GQL_MUTATION, NULL, f, 1, NULL};
    struct model_request req;
    struct model_decision a;
    struct model_decision b;

    memset(&req, 0, sizeof(req));
    req.binaries = bins;
    req.nbinaries = 1;
    req.host = "api.example.com";
    req.host_len = strlen(req.host);
    req.port = 443;
    req.method = "POST";
    req.target = "/graphql";
    req.target_len = 8;
    model_decide(p, &req, &a);
    req.gql = &op;
    model_decide(p, &req, &b);
    ck_assert(a.allow && b.allow);
    ck_assert_int_eq(a.reason, b.reason);
    model_policy_free(p);
}
END_TEST

START_TEST(test_names)
{
    static const struct {
        const char *s;
        bool ok;
    } v[] = {{"a", true},  {"_", true},    {"__typename", true}, {"A1_b", true},
             {"", false},  {"1a", false},  {"a-b", false},       {"a.b", false},
             {"*", false}, {"a b", false}, {"é", false}};

    for (size_t i = 0; i < PV_ARRAY_LEN(v); i++) {
        ck_assert_msg(model_gql_name_valid(v[i].s, strlen(v[i].s)) == v[i].ok, "'%s'", v[i].s);
    }
    ck_assert_str_eq(model_gql_optype_name(MODEL_GQL_QUERY), "query");
    ck_assert_str_eq(model_gql_optype_name(MODEL_GQL_MUTATION), "mutation");
    ck_assert_str_eq(model_gql_optype_name(MODEL_GQL_SUBSCRIPTION), "subscription");
    ck_assert_str_eq(model_reason_name(MODEL_REASON_GQL_NO_OPERATION), "graphql_no_operation");
    ck_assert_str_eq(model_reason_name(MODEL_REASON_GQL_PERSISTED_UNKNOWN),
                     "graphql_persisted_unknown");
}
END_TEST

static Suite *gql_suite(void)
{
    Suite *s = suite_create("model_gql");
    TCase *tc = tcase_create("gql");

    tcase_add_loop_test(tc, test_gql_rows, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_rest_ignores_gql);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gql_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
