/* SPDX-License-Identifier: Apache-2.0 */
/* check_prover_encode.c - one row per clause of docs/semantics.md
 *
 * Each row is a baseline/candidate pair chosen so that an encoding that got
 * the clause wrong gives a different verdict or category set: the positive
 * row shows new authority, the negative row (same clause) shows none. The
 * validation_result substring pins the reported path where it matters.
 */
#include "config.h"

#include "tests/check_prover_util.h"

#define HDR "version: 1\nnetwork_policies:\n"
#define CURL "    binaries:\n      - path: /usr/bin/curl\n"
#define EP_API "    endpoints:\n      - host: api.example.com\n        port: 443\n"
#define REST_ENF "        protocol: rest\n        enforcement: enforce\n"
#define CREDS "credentials:\n  - name: tok\n    type: t\n    target_hosts: [api.example.com]\n"

static const struct {
    const char *clause;
    const char *baseline; /* NULL = empty */
    const char *candidate;
    const char *creds;
    enum prover_mode mode;
    const char *verdict;
    const char *categories;
    const char *must; /* substring of validation_result, or NULL */
} rows[] = {
    /* grant: L4 grants every request */
    {"grant-l4", NULL, HDR "  r:\n" EP_API CURL, CREDS, PROVER_DELTA, "findings",
     "credential_reach_expansion", "credential_reach_expansion: api.example.com:443"},
    {"grant-l4-no-cred", NULL, HDR "  r:\n" EP_API CURL, NULL, PROVER_DELTA, "empty", "", NULL},
    /* deny-wins: adding a deny rule only removes authority */
    {"deny-wins-add", HDR "  r:\n" EP_API REST_ENF "        access: full\n" CURL,
     HDR "  r:\n" EP_API REST_ENF "        access: full\n"
         "        deny_rules:\n          - {method: DELETE, path: \"/**\"}\n" CURL,
     CREDS, PROVER_DELTA, "empty", "", NULL},
    {"deny-wins-remove",
     HDR "  r:\n" EP_API REST_ENF "        access: full\n"
         "        deny_rules:\n          - {method: DELETE, path: \"/**\"}\n" CURL,
     HDR "  r:\n" EP_API REST_ENF "        access: full\n" CURL, CREDS, PROVER_DELTA, "findings",
     "capability_expansion", "capability_expansion: DELETE on api.example.com:443"},
    /* a deny rule of another rule on the same route wins too */
    {"deny-wins-across-rules",
     HDR "  a:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"/x\"}\n" CURL,
     HDR "  a:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"/x\"}\n" CURL
         "  b:\n" EP_API REST_ENF "        access: full\n"
         "        deny_rules:\n          - {method: \"*\", path: \"/**\"}\n" CURL,
     CREDS, PROVER_DELTA, "empty", "", NULL},
    /* audit: an audit-mode endpoint forwards every request */
    {"audit",
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"/x\"}\n" CURL,
     HDR "  r:\n" EP_API "        protocol: rest\n        enforcement: audit\n"
         "        rules:\n          - allow: {method: GET, path: \"/x\"}\n" CURL,
     CREDS, PROVER_DELTA, "findings", "capability_expansion", "capability_expansion: PUT on"},
    /* json-rpc: enforced, its calls are granted by its rules (docs/semantics.md#rpc) */
    {"json-rpc", NULL,
     HDR "  r:\n" EP_API "        protocol: json-rpc\n        enforcement: enforce\n"
         "        rules: [{allow: {method: '*'}}]\n" CURL,
     CREDS, PROVER_DELTA, "findings", "credential_reach_expansion",
     "credential_reach_expansion: api.example.com:443"},
    /* graphql: a new mutation where queries were allowed (docs/semantics.md#graphql) */
    {"graphql-mutation",
     HDR "  r:\n" EP_API "        protocol: graphql\n        enforcement: enforce\n"
         "        access: read-only\n" CURL,
     HDR "  r:\n" EP_API "        protocol: graphql\n        enforcement: enforce\n"
         "        access: read-write\n" CURL,
     CREDS, PROVER_DELTA, "findings", "capability_expansion",
     "capability_expansion: graphql:mutation on api.example.com:443"},
    /* encoded-slash: opting in lets %2F paths through */
    {"encoded-slash", HDR "  r:\n" EP_API REST_ENF "        access: read-only\n" CURL,
     HDR "  r:\n" EP_API REST_ENF
         "        access: read-only\n        allow_encoded_slash: true\n" CURL,
     CREDS, PROVER_DELTA, "findings", "capability_expansion", "capability_expansion: GET on"},
    /* methods: GET implies HEAD, OPTIONS is never implied */
    {"methods-get-head",
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"**\"}\n" CURL,
     HDR "  r:\n" EP_API REST_ENF "        rules:\n          - allow: {method: GET, path: \"**\"}\n"
         "          - allow: {method: HEAD, path: \"**\"}\n" CURL,
     CREDS, PROVER_DELTA, "empty", "", NULL},
    {"methods-options",
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"**\"}\n" CURL,
     HDR "  r:\n" EP_API REST_ENF "        rules:\n          - allow: {method: GET, path: \"**\"}\n"
         "          - allow: {method: OPTIONS, path: \"/x\"}\n" CURL,
     CREDS, PROVER_DELTA, "findings", "capability_expansion",
     "capability_expansion: OPTIONS on api.example.com:443"},
    /* path-glob: a trailing slash-star-star requires the slash */
    {"path-glob",
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"/x/**\"}\n" CURL,
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"/x/**\"}\n"
         "          - allow: {method: GET, path: \"/x\"}\n" CURL,
     CREDS, PROVER_DELTA, "findings", "capability_expansion", "capability_expansion: GET on"},
    {"path-glob-subsumed",
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"/x/**\"}\n" CURL,
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"/x/**\"}\n"
         "          - allow: {method: GET, path: \"/x/y/*\"}\n" CURL,
     CREDS, PROVER_DELTA, "empty", "", NULL},
    /* query-allow: dropping the query constraint widens the rule */
    {"query-allow",
     HDR
     "  r:\n" EP_API REST_ENF
     "        rules:\n          - allow: {method: GET, path: \"**\", query: {page: \"1*\"}}\n" CURL,
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"**\"}\n" CURL,
     CREDS, PROVER_DELTA, "findings", "capability_expansion", "capability_expansion: GET on"},
    {"query-allow-narrower",
     HDR "  r:\n" EP_API REST_ENF
         "        rules:\n          - allow: {method: GET, path: \"**\"}\n" CURL,
     HDR
     "  r:\n" EP_API REST_ENF
     "        rules:\n          - allow: {method: GET, path: \"**\", query: {page: \"1*\"}}\n" CURL,
     CREDS, PROVER_DELTA, "empty", "", NULL},
    /* hostless + allowed_ips: new private reach */
    {"hostless-private", NULL,
     HDR "  r:\n    endpoints:\n      - port: 5432\n        allowed_ips: [\"10.0.0.0/8\"]\n" CURL,
     NULL, PROVER_DELTA, "findings", "private_reach_expansion",
     "private_reach_expansion: *:5432 via /usr/bin/curl"},
    /* control-plane ports are never admitted */
    {"control-plane", NULL,
     HDR "  r:\n    endpoints:\n      - host: api.example.com\n        port: 6443\n" CURL, CREDS,
     PROVER_DELTA, "empty", "", NULL},
    /* dest-5: an IP literal host of its own endpoint is trusted, privately */
    {"ip-literal-own", NULL,
     HDR "  r:\n    endpoints:\n      - host: 10.0.0.5\n        port: 443\n" CURL, NULL,
     PROVER_DELTA, "findings", "private_reach_expansion", "private_reach_expansion: 10.0.0.5:443"},
    /* without allowed_ips a DNS name is never trusted with a private address */
    {"dns-not-private", NULL,
     HDR "  r:\n    endpoints:\n      - host: db.example.com\n        port: 5432\n" CURL, NULL,
     PROVER_DELTA, "empty", "", NULL},
    /* routes: tls skip makes an (audit-mode) L7 endpoint L4 (opaque: every method) */
    {"tls-skip", HDR "  r:\n" EP_API REST_ENF "        access: read-only\n" CURL,
     HDR "  r:\n" EP_API "        protocol: rest\n        enforcement: audit\n"
         "        tls: skip\n        access: read-only\n" CURL,
     CREDS, PROVER_DELTA, "findings", "capability_expansion", "capability_expansion: DELETE on"},
    /* binary-glob: a glob covers git, which bypasses L7 */
    {"binary-glob", NULL, HDR "  r:\n" EP_API "    binaries:\n      - path: \"/usr/bin/*\"\n",
     CREDS, PROVER_DELTA, "findings", "l7_bypass_credentialed,credential_reach_expansion",
     "l7_bypass_credentialed: api.example.com:443 via /usr/bin/*"},
    /* identity: a rule key rename carries no authority */
    {"rename", HDR "  a:\n" EP_API CURL, HDR "  b:\n    name: other\n" EP_API CURL, CREDS,
     PROVER_DELTA, "empty", "", NULL},
    /* credentials: wildcard targets credential concrete hosts */
    {"cred-wildcard", NULL, HDR "  r:\n" EP_API CURL,
     "credentials:\n  - name: w\n    type: t\n    target_hosts: [\"*.example.com\"]\n",
     PROVER_DELTA, "findings", "credential_reach_expansion", NULL},
    /* link-local: metadata names, also under a wildcard, and IP literals */
    {"link-local-name", NULL,
     HDR "  r:\n    endpoints:\n      - host: \"*.google.internal\"\n        port: 80\n" CURL, NULL,
     PROVER_DELTA, "findings", "link_local_reach", "link_local_reach: *.google.internal:80"},
    {"link-local-ip", NULL,
     HDR "  r:\n    endpoints:\n      - host: 169.254.169.254\n        port: 80\n" CURL, NULL,
     PROVER_DELTA, "findings", "link_local_reach", NULL},
    /* reach already held: a new method is capability, not reach */
    {"capability-not-reach", HDR "  r:\n" EP_API REST_ENF "        access: read-only\n" CURL,
     HDR "  r:\n" EP_API REST_ENF "        access: read-write\n" CURL, CREDS, PROVER_DELTA,
     "findings", "capability_expansion", "capability_expansion: PATCH on"},
    /* check: containment */
    {"check-within", HDR "  r:\n" EP_API REST_ENF "        access: full\n" CURL,
     HDR "  r:\n" EP_API REST_ENF "        access: read-only\n" CURL, NULL, PROVER_CHECK, "within",
     "", NULL},
    {"check-exceeds", HDR "  r:\n" EP_API REST_ENF "        access: read-only\n" CURL,
     HDR "  r:\n" EP_API REST_ENF "        access: read-write\n" CURL, NULL, PROVER_CHECK,
     "exceeds", "boundary_exceeded", "boundary_exceeded: api.example.com:443"},
    /* audit mode (single policy): capability per credentialed method */
    {"audit-mode", NULL, HDR "  r:\n" EP_API REST_ENF "        access: read-only\n" CURL, CREDS,
     PROVER_AUDIT, "findings", "credential_reach_expansion,capability_expansion",
     "capability_expansion: OPTIONS on api.example.com:443"},
};

static struct prover_session *session;
static struct model_registry *registry;

static void setup(void)
{
    session = prover_session_new();
    ck_assert_ptr_nonnull(session);
    registry = tp_registry();
}

static void teardown(void)
{
    prover_session_free(session);
    model_registry_free(registry);
    prover_finalize();
}

START_TEST(test_clause)
{
    struct model_policy *b = rows[_i].baseline ? tp_policy("b.yaml", rows[_i].baseline) : NULL;
    struct model_policy *c = tp_policy("c.yaml", rows[_i].candidate);
    struct model_credset *cs = tp_creds(rows[_i].creds);
    struct prover_input in;
    struct prover_result *r;
    char *cats;
    char *vr;

    memset(&in, 0, sizeof(in));
    in.baseline = b;
    in.candidate = c;
    in.creds = cs;
    in.reg = registry;
    in.mode = rows[_i].mode;
    in.timeout_ms = 5000;
    r = prover_run(session, &in);
    ck_assert_ptr_nonnull(r);
    cats = tp_categories(r);
    vr = prover_validation_result(r);
    ck_assert_msg(strcmp(prover_verdict_name(r->verdict), rows[_i].verdict) == 0,
                  "%s: verdict %s (%s), want %s\n%s", rows[_i].clause,
                  prover_verdict_name(r->verdict), prover_unknown_text(r->unknown),
                  rows[_i].verdict, vr);
    ck_assert_msg(strcmp(cats, rows[_i].categories) == 0, "%s: categories '%s', want '%s'\n%s",
                  rows[_i].clause, cats, rows[_i].categories, vr);
    if (rows[_i].must != NULL) {
        ck_assert_msg(strstr(vr, rows[_i].must) != NULL, "%s: '%s' not in\n%s", rows[_i].clause,
                      rows[_i].must, vr);
    }
    free(cats);
    free(vr);
    prover_result_free(r);
    model_policy_free(b);
    model_policy_free(c);
    model_credset_free(cs);
}
END_TEST

/* The same inputs give the same inputs_sha256; another credential set does not. */
START_TEST(test_inputs_hash)
{
    struct model_policy *c = tp_policy("c.yaml", HDR "  r:\n" EP_API CURL);
    struct model_credset *c1 = tp_creds(CREDS);
    struct model_credset *c2 = tp_creds(NULL);
    struct prover_input in;
    struct prover_result *r1, *r2, *r3;

    memset(&in, 0, sizeof(in));
    in.candidate = c;
    in.creds = c1;
    in.reg = registry;
    r1 = prover_run(session, &in);
    r2 = prover_run(session, &in);
    in.creds = c2;
    r3 = prover_run(session, &in);
    ck_assert_str_eq(r1->inputs_sha256, r2->inputs_sha256);
    ck_assert_str_ne(r1->inputs_sha256, r3->inputs_sha256);
    ck_assert_uint_eq(strlen(r1->inputs_sha256), 64);
    prover_result_free(r1);
    prover_result_free(r2);
    prover_result_free(r3);
    model_credset_free(c1);
    model_credset_free(c2);
    model_policy_free(c);
}
END_TEST

/* An exhausted time budget is UNKNOWN with reason "timeout", never EMPTY. */
START_TEST(test_timeout_unknown)
{
    char *text = malloc(1u << 20);
    size_t len = 0;
    struct model_policy *c;
    struct model_credset *cs = tp_creds("credentials:\n  - name: w\n    type: t\n"
                                        "    target_hosts: [\"**.example.com\"]\n");
    struct prover_input in;
    struct prover_result *r;

    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text + len, (1u << 20) - len, HDR);
    for (int i = 0; i < 300; i++) {
        len += (size_t)snprintf(text + len, (1u << 20) - len,
                                "  r%d:\n    endpoints:\n      - host: h%d.example.com\n"
                                "        port: 443\n" CURL,
                                i, i);
    }
    c = tp_policy("big.yaml", text);
    memset(&in, 0, sizeof(in));
    in.candidate = c;
    in.creds = cs;
    in.reg = registry;
    in.timeout_ms = 1;
    r = prover_run(session, &in);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->verdict, PROVER_VERDICT_UNKNOWN);
    ck_assert_int_eq(r->unknown, PROVER_UNKNOWN_TIMEOUT);
    ck_assert_str_eq(prover_unknown_code(r->unknown), "timeout");
    prover_result_free(r);
    /* the same proof with time to spare finds the 300 reach paths */
    in.timeout_ms = 60000;
    r = prover_run(session, &in);
    ck_assert_int_eq(r->verdict, PROVER_VERDICT_FINDINGS);
    ck_assert_uint_eq(r->npaths, 300);
    prover_result_free(r);
    model_credset_free(cs);
    model_policy_free(c);
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prover_encode");
    TCase *tc = tcase_create("clauses");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_clause, 0, (int)PV_ARRAY_LEN(rows));
    tcase_add_test(tc, test_inputs_hash);
    tcase_add_test(tc, test_timeout_unknown);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
